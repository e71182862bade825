//! The host's Python of one transformer layer's forward pass under Megatron-Core that launches no
//! kernel: the `nn.Module` calls of the layer and its submodules, and Transformer Engine's
//! per-module Python around each linear layer's GEMM (its `prepare_forward` context, FP8-state and
//! workspace checks, the `torch.autograd.Function` it runs). Counted from the source
//! (NVIDIA/Megatron-LM at commit d98e8a6, the commit of the functional tests in
//! `tests/data/megatron-ft-runs.json`) and priced from published CPU measurements, not fitted.
//!
//! **Count** (Megatron-Core's default layer, `--transformer-impl transformer_engine`:
//! `megatron/core/models/gpt/gpt_layer_specs.py`, `get_gpt_layer_with_transformer_engine_submodules`
//! l. 179–260 — the input norm fused into the QKV projection, `IdentityOp` in its place, as before
//! the MLP): `TransformerLayer.forward` (`megatron/core/transformer/transformer_layer.py`
//! l. 611–1130) calls 13 modules ([`LayerModules::DENSE`]) through `nn.Module.__call__`:
//! the layer, `input_layernorm`, `self_attention` (`SelfAttention`), its `linear_qkv`,
//! `core_attention` (`TEDotProductAttention`) and the attention backend module it calls,
//! `linear_proj` (`megatron/core/transformer/attention.py` l. 1387–1628), `pre_cross_attn_layernorm`
//! and `cross_attention` (both `IdentityOp` in a GPT), `pre_mlp_layernorm`, `mlp` (`MLP`) and its
//! `linear_fc1` and `linear_fc2`. Of these, 4 are Transformer Engine linear
//! modules (`TELayerNormColumnParallelLinear` ×2, `TERowParallelLinear` ×2). What is not counted,
//! so the figure is a floor: the layer's context managers (offload managers, OpenTelemetry spans,
//! `bias_dropout_add_exec_handler`, the RNG tracker's fork in attention dropout), the NVTX
//! push/pop calls, the bias-dropout-add functions, TE's Python in the backward (its
//! `autograd.Function.backward`, not measured), selective recomputation's reruns,
//! `--qk-layernorm`'s norms and, in dense blocks, multi-latent attention's further projections
//! (counted as a plain attention's; an MoE block counts them, [`super::moe::mla_host`]), and the local spec's `ColumnParallelLinear`/`RowParallelLinear` Python beyond a
//! module call (their `autograd.Function`s: not measured).
//!
//! **The local spec** (`--transformer-impl local`, [`TransformerImpl::Local`]): Megatron-Core's own
//! modules, no Transformer Engine linear module; 14 module calls per dense layer
//! ([`LayerModules::dense`]).
//!
//! **MoE layers** (the same count, its MLP part the MoE layer's: [`LayerModules::moe_phases`]):
//! the MoE block prices each phase of its forward between the dispatcher's syncs with the Python
//! that runs in it ([`super::moe::block`]).
//!
//! **Price**: [`MODULE_CALL_HOST_S`] per module call and [`TE_LINEAR_PYTHON_HOST_S`] per TE
//! linear module beyond a plain PyTorch linear's, both a DGX H100-class host's, times the part's
//! [`super::hardware::Hardware::host_op_time_factor`] as the per-operation host time.
//! [`super::block::issue_bound`] raises a block's forward to at least its kernels' issue time plus
//! this ([`forward_python_s`]): blocks of milliseconds of GPU work per layer never reach it.
//! Only under the Megatron stack on a host-launched part (the count is Megatron-Core's layer; other
//! stacks' layers are not counted: 0).

use super::choices::TransformerImpl;
use super::hardware::Hardware;
use super::options::ExtendedOptions;
use super::stack::Stack;

/// The modules of a layer (or of a part of one) whose Python is counted: its `nn.Module.__call__`s
/// and, among them, its Transformer Engine linear modules [count each]. Counts add (`+`): a
/// layer's is the sum of its parts', so a block priced in phases ([`super::moe::block`]) prices
/// each phase's part with the same function ([`forward_python_s`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LayerModules {
    /// `nn.Module.__call__`s [count].
    pub calls: f64,
    /// Transformer Engine linear modules among them [count].
    pub te_linears: f64,
}

impl LayerModules {
    /// The layer's own call and its attention sub-layer's, Transformer Engine spec: the layer,
    /// `input_layernorm` (`IdentityOp`, fused into the QKV projection), `self_attention`, its
    /// `linear_qkv` (`TELayerNormColumnParallelLinear`), `core_attention` (`TEDotProductAttention`)
    /// and the attention backend module it calls, `linear_proj` (`TERowParallelLinear`),
    /// `pre_cross_attn_layernorm` and `cross_attention` (`IdentityOp`s in a GPT): 9 calls, 2 TE
    /// linear modules (module docs; `q_layernorm`/`k_layernorm` are `None` without
    /// `--qk-layernorm`, `attention.py` l. 1734–1751, and are not called).
    pub const ATTENTION: LayerModules = LayerModules { calls: 9.0, te_linears: 2.0 };

    /// [`Self::ATTENTION`] in the local spec (`get_gpt_layer_local_submodules`,
    /// `gpt_layer_specs.py` l. 359–464): the layer, `input_layernorm` (`FusedLayerNorm`, a module
    /// of its own), `self_attention`, `linear_qkv` (`ColumnParallelLinear`), `core_attention`
    /// (`DotProductAttention`) with its `scale_mask_softmax` (`FusedScaleMaskSoftmax`) and
    /// `attention_dropout` (`torch.nn.Dropout`, `dot_product_attention.py` l. 210–220),
    /// `linear_proj` (`RowParallelLinear`), `pre_cross_attn_layernorm` and `cross_attention`: 10
    /// calls, no TE linear module.
    pub const LOCAL_ATTENTION: LayerModules = LayerModules { calls: 10.0, te_linears: 0.0 };

    /// What of the attention sub-layer's calls a CUDA graph over it (`attn` scope) leaves to run:
    /// the layer, `input_layernorm`, `self_attention` (the graph's one call),
    /// `pre_cross_attn_layernorm` and `cross_attention`; the projections and the core attention
    /// run inside the graph [5 calls].
    pub const ATTENTION_OUTSIDE_GRAPH: LayerModules = LayerModules { calls: 5.0, te_linears: 0.0 };

    /// The MLP sub-layer's norm `pre_mlp_layernorm`: an `IdentityOp` in a dense TE layer (fused into
    /// FC1), `TENorm` in an MoE layer (`gpt_layer_specs.py` l. 318), `FusedLayerNorm` in the local
    /// spec [1 call].
    pub const MLP_NORM: LayerModules = LayerModules { calls: 1.0, te_linears: 0.0 };

    /// One MLP (`MLP`, the dense layer's; each of `SequentialMLP`'s local experts; a shared
    /// expert's `SharedExpertMLP`): the MLP, its `linear_fc1` and `linear_fc2`
    /// (`megatron/core/transformer/mlp.py`), Transformer Engine linear modules both [3 calls, 2 TE].
    pub const MLP: LayerModules = LayerModules { calls: 3.0, te_linears: 2.0 };

    /// [`Self::MLP`] in the local spec (`ColumnParallelLinear`, `RowParallelLinear`) [3 calls].
    pub const LOCAL_MLP: LayerModules = LayerModules { calls: 3.0, te_linears: 0.0 };

    /// One dense layer's forward in the Transformer Engine spec: [`Self::ATTENTION`] +
    /// [`Self::MLP_NORM`] + [`Self::MLP`], 13 calls and 4 TE linear modules.
    pub const DENSE: LayerModules = LayerModules::ATTENTION.plus(LayerModules::MLP_NORM).plus(LayerModules::MLP);

    /// The attention part under `spec`.
    pub fn attention(spec: TransformerImpl) -> LayerModules {
        match spec {
            TransformerImpl::TransformerEngine => Self::ATTENTION,
            TransformerImpl::Local => Self::LOCAL_ATTENTION,
        }
    }

    /// One MLP under `spec`.
    pub fn mlp(spec: TransformerImpl) -> LayerModules {
        match spec {
            TransformerImpl::TransformerEngine => Self::MLP,
            TransformerImpl::Local => Self::LOCAL_MLP,
        }
    }

    /// One dense layer's forward under `spec`: attention, MLP norm, MLP ([`Self::DENSE`] in the
    /// TE spec; 10 + 1 + 3 = 14 calls and no TE linear module in the local one).
    pub fn dense(spec: TransformerImpl) -> LayerModules {
        Self::attention(spec).plus(Self::MLP_NORM).plus(Self::mlp(spec))
    }

    /// `self + o`, in a constant.
    pub const fn plus(self, o: LayerModules) -> LayerModules {
        LayerModules { calls: self.calls + o.calls, te_linears: self.te_linears + o.te_linears }
    }

    /// `n` times these modules.
    pub fn times(self, n: f64) -> LayerModules {
        LayerModules { calls: self.calls * n, te_linears: self.te_linears * n }
    }

    /// One MoE layer's forward under `spec` in the phases of a stretch between the dispatcher's
    /// syncs ([`super::moe::sync`]) `[attention, pre, post]` (NVIDIA/Megatron-LM d98e8a6,
    /// `megatron/core/transformer/moe/moe_layer.py` `MoELayer.forward` l. 614–719, `experts.py`,
    /// `shared_experts.py`):
    /// * `attention`: [`Self::attention`], or under a CUDA graph over it (`attn_graph`)
    ///   [`Self::ATTENTION_OUTSIDE_GRAPH`];
    /// * `pre`, before the sync: [`Self::MLP_NORM`], the `MoELayer` (the block's `mlp`), its
    ///   `router` (`apply_module(self.router)`, l. 451), and a shared expert's [`Self::mlp`]
    ///   (`shared_experts_compute` runs before `route`, l. 661) when there is one;
    /// * `post`, after it: the `experts` module (l. 563) and its linear modules: `TEGroupedMLP`'s
    ///   grouped `linear_fc1` and `linear_fc2` (2 calls, 2 TE grouped linear modules, l. 932 and
    ///   1028), or under `SequentialMLP` (`sequential`; always in the local spec,
    ///   `megatron/core/models/backends.py` l. 133–142) an [`Self::mlp`] per local expert
    ///   (`local_experts`, l. 1507–1513).
    ///
    /// The token dispatcher is no `nn.Module`: its calls are [`super::moe::host_calls`]'.
    pub fn moe_phases(
        spec: TransformerImpl,
        sequential: bool,
        local_experts: f64,
        shared_expert: bool,
        attn_graph: bool,
    ) -> [LayerModules; 3] {
        let attention = if attn_graph { Self::ATTENTION_OUTSIDE_GRAPH } else { Self::attention(spec) };
        let layer_and_router = LayerModules { calls: 2.0, te_linears: 0.0 };
        let shared = if shared_expert { Self::mlp(spec) } else { LayerModules::default() };
        let pre = Self::MLP_NORM.plus(layer_and_router).plus(shared);
        let experts_module = LayerModules { calls: 1.0, te_linears: 0.0 };
        let post = if sequential || spec == TransformerImpl::Local {
            experts_module.plus(Self::mlp(spec).times(local_experts))
        } else {
            experts_module.plus(LayerModules { calls: 2.0, te_linears: 2.0 })
        };
        [attention, pre, post]
    }

    /// The sum of `parts`.
    pub fn sum(parts: &[LayerModules]) -> LayerModules {
        parts.iter().fold(LayerModules::default(), |a, &m| a.plus(m))
    }
}

/// Host time the `nn.Module` abstraction adds to one call [s]: 2.17 µs, the difference between an
/// (almost) empty module's call, 3.08 µs, and the bare PyTorch operator it wraps, 0.91 µs
/// (H. He, "Making optimizations to nn.module to reduce python overhead", pytorch/pytorch pull
/// request #50431, comment of 2021-02-21: hook checks and `__getattr__` lookups); that comment
/// names no CPU, taken as a DGX H100-class host's. Not fitted.
pub const MODULE_CALL_HOST_S: f64 = 2.17e-6;

/// Host time of one Transformer Engine linear module's forward beyond a plain `torch.nn.Linear`'s
/// [s], on a DGX H100-class host: 50.1 µs. Measured on GB200 (Grace): `te.Linear` forward 99.66 µs
/// of CPU against `torch.nn.Linear`'s 37.08 µs, BF16, hidden 2,048, 8,192 tokens
/// (NVIDIA/TransformerEngine issue #2053, "High CPU overhead on Grace systems", 2025-08-11; GH200:
/// 90.53 against 33.17 µs), 62.58 µs more, divided by the hardware catalog's host factor of GB200,
/// 1.25 (`host.op_time_factor`: the same Megatron-LM functional test's median step time on GB200
/// over that on DGX H100, a measure of this same Python on both hosts). Not fitted.
pub const TE_LINEAR_PYTHON_HOST_S: f64 = (99.66e-6 - 37.08e-6) / 1.25;

/// Host Python of the forward of `modules` that launches no kernel, on this part's host under
/// `stack` [s]: `(calls · 2.17 µs + TE linears · 50.1 µs) · host_op_time_factor` under the
/// Megatron stack on a host-launched part, else 0 (module docs). A dense layer
/// ([`LayerModules::DENSE`]): `(13 · 2.17 µs + 4 · 50.1 µs) · factor`.
pub fn forward_python_s(hw: &Hardware, stack: Stack, modules: LayerModules) -> f64 {
    if !hw.host_launched || stack != Stack::Megatron {
        return 0.0;
    }
    (modules.calls * MODULE_CALL_HOST_S + modules.te_linears * TE_LINEAR_PYTHON_HOST_S) * hw.host_op_time_factor
}

/// The Python of a layer of `modules` per micro-batch `[forward, recomputation]` [s] under
/// `opts`: the forward's ([`forward_python_s`]), and again that share of it in the backward where
/// whole blocks are recomputed (Megatron's `tensor_parallel.checkpoint` runs the layer's forward,
/// module calls and all, a second time: `CheckpointFunction.backward`,
/// `megatron/core/tensor_parallel/random.py` l. 591–687;
/// [`super::choices::Recompute::block_share`]); selective and operator-level recomputation rerun
/// no linear module and are not counted (0).
pub fn layer_python_s(hw: &Hardware, opts: &ExtendedOptions, modules: LayerModules) -> [f64; 2] {
    let fwd = forward_python_s(hw, opts.stack, modules);
    [fwd, fwd * opts.recompute.block_share().unwrap_or(0.0)]
}

/// [`layer_python_s`] of a dense layer built from `opts`' layer spec
/// ([`LayerModules::dense`] of `opts.transformer_impl`), `[forward, recomputation]` [s] per
/// micro-batch: what a dense block's pricing, its issue floor and the host parts all read.
pub fn dense_layer_python_s(hw: &Hardware, opts: &ExtendedOptions) -> [f64; 2] {
    layer_python_s(hw, opts, LayerModules::dense(opts.transformer_impl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layers_forward_python_by_hand() {
        let hw = |id: &str| {
            let sys = crate::catalog::find_system(id).unwrap();
            Hardware::from_catalog(sys, crate::catalog::Precision::Bf16, true, &Default::default()).unwrap()
        };
        let (a100, h100) = (hw("nvidia_a100_sxm4_80gb"), hw("nvidia_h100_sxm5_80gb"));
        // 13 · 2.17 µs + 4 · (99.66 − 37.08) / 1.25 µs = 28.21 + 200.256 = 228.466 µs on a DGX H100
        // host; × 1.53 on a DGX A100's: 349.55298 µs.
        let t = forward_python_s(&h100, Stack::Megatron, LayerModules::DENSE);
        assert!((t - 228.466e-6).abs() < 1e-12, "{t}");
        assert!((forward_python_s(&a100, Stack::Megatron, LayerModules::DENSE) - 349.55298e-6).abs() < 1e-12);
        // Other stacks' layers are not counted.
        assert_eq!(forward_python_s(&h100, Stack::Jax, LayerModules::DENSE), 0.0);
        assert_eq!(forward_python_s(&h100, Stack::DeepSpeed, LayerModules::DENSE), 0.0);
    }

    #[test]
    fn whole_block_recomputation_runs_the_python_again() {
        use crate::extended::Recompute;
        let sys = crate::catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let h100 = Hardware::from_catalog(sys, crate::catalog::Precision::Bf16, true, &Default::default()).unwrap();
        let with = |recompute| {
            layer_python_s(&h100, &ExtendedOptions { recompute, ..ExtendedOptions::realistic() }, LayerModules::DENSE)
        };
        // 228.466 µs forward (above); full recomputation runs it again, a quarter of the blocks a
        // quarter of it (57.1165 µs) on average, selective none of it.
        let fwd = 228.466e-6;
        assert!((with(Recompute::Full)[1] - fwd).abs() < 1e-12);
        assert!((with(Recompute::of_share(0.25))[1] - fwd / 4.0).abs() < 1e-12);
        assert_eq!(with(Recompute::Selective)[1], 0.0);
        assert!((with(Recompute::None)[0] - fwd).abs() < 1e-12);
        assert_eq!(with(Recompute::None)[1], 0.0);
    }
    #[test]
    fn an_moe_layers_modules_by_hand() {
        let sys = crate::catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let h100 = Hardware::from_catalog(sys, crate::catalog::Precision::Bf16, true, &Default::default()).unwrap();
        let m = |calls: f64, te_linears: f64| LayerModules { calls, te_linears };
        const TE: TransformerImpl = TransformerImpl::TransformerEngine;
        // The dense layer: 9 + 1 + 3 = 13 calls, 2 + 0 + 2 = 4 TE linears.
        assert_eq!(LayerModules::DENSE, m(13.0, 4.0));
        // Grouped experts, no shared expert: attention 9 / 2; pre: norm, MoELayer, router 3 / 0;
        // post: experts module, grouped FC1 and FC2 3 / 2. 15 calls, 4 TE linears:
        // 15 · 2.17 + 4 · 50.064 = 32.55 + 200.256 = 232.806 µs on a DGX H100 host.
        let grouped = LayerModules::moe_phases(TE, false, 4.0, false, false);
        assert_eq!(grouped, [m(9.0, 2.0), m(3.0, 0.0), m(3.0, 2.0)]);
        let t = forward_python_s(&h100, Stack::Megatron, LayerModules::sum(&grouped));
        assert!((t - 232.806e-6).abs() < 1e-12, "{t}");
        // SequentialMLP with 4 local experts and a shared expert: pre 3 + 3 = 6 calls, 2 TE;
        // post 1 + 4 · 3 = 13 calls, 4 · 2 = 8 TE. 28 calls, 12 TE linears:
        // 28 · 2.17 + 12 · 50.064 = 60.76 + 600.768 = 661.528 µs.
        let sequential = LayerModules::moe_phases(TE, true, 4.0, true, false);
        assert_eq!(sequential, [m(9.0, 2.0), m(6.0, 2.0), m(13.0, 8.0)]);
        let t = forward_python_s(&h100, Stack::Megatron, LayerModules::sum(&sequential));
        assert!((t - 661.528e-6).abs() < 1e-12, "{t}");
        // A CUDA graph over the attention replays its projections, core attention and backend:
        // 9 − 4 = 5 calls, no TE linear module.
        assert_eq!(LayerModules::moe_phases(TE, false, 4.0, false, true)[0], m(5.0, 0.0));
    }
}
