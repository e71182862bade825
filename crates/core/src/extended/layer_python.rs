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
//! l. 611–1130) calls [`MODULE_CALLS_PER_LAYER_FORWARD`] modules through `nn.Module.__call__`:
//! the layer, `input_layernorm`, `self_attention` (`SelfAttention`), its `linear_qkv`,
//! `core_attention` (`TEDotProductAttention`) and the attention backend module it calls,
//! `linear_proj` (`megatron/core/transformer/attention.py` l. 1387–1628), `pre_cross_attn_layernorm`
//! and `cross_attention` (both `IdentityOp` in a GPT), `pre_mlp_layernorm`, `mlp` (`MLP`) and its
//! `linear_fc1` and `linear_fc2`. Of these, [`TE_LINEARS_PER_LAYER`] are Transformer Engine linear
//! modules (`TELayerNormColumnParallelLinear` ×2, `TERowParallelLinear` ×2). What is not counted,
//! so the figure is a floor: the layer's context managers (offload managers, OpenTelemetry spans,
//! `bias_dropout_add_exec_handler`, the RNG tracker's fork in attention dropout), the NVTX
//! push/pop calls, the bias-dropout-add functions, TE's Python in the backward (its
//! `autograd.Function.backward`, not measured), selective recomputation's reruns, and the
//! local (non-TE) spec's different modules (`--transformer-impl local`: priced as TE's, since
//! the switch is not read).
//!
//! **Price**: [`MODULE_CALL_HOST_S`] per module call and [`TE_LINEAR_PYTHON_HOST_S`] per TE
//! linear module beyond a plain PyTorch linear's, both a DGX H100-class host's, times the part's
//! [`super::hardware::Hardware::host_op_time_factor`] as the per-operation host time.
//! [`super::block::issue_bound`] raises a block's forward to at least its kernels' issue time plus
//! this ([`layer_forward_python_s`]): blocks of milliseconds of GPU work per layer never reach it.
//! Only under the Megatron stack on a host-launched part (the count is Megatron-Core's layer; other
//! stacks' layers are not counted: 0).

use super::hardware::Hardware;
use super::options::ExtendedOptions;
use super::stack::Stack;

/// `nn.Module.__call__`s of one Megatron-Core GPT layer's forward in its Transformer Engine spec
/// (module docs: the layer, 3 `IdentityOp` norms, `SelfAttention`, QKV, `TEDotProductAttention`
/// and its backend, projection, cross-attention `IdentityOp`, `MLP`, FC1, FC2) [count].
pub const MODULE_CALLS_PER_LAYER_FORWARD: f64 = 13.0;

/// Transformer Engine linear modules of one layer: QKV and FC1 (`TELayerNormColumnParallelLinear`),
/// projection and FC2 (`TERowParallelLinear`) [count].
pub const TE_LINEARS_PER_LAYER: f64 = 4.0;

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

/// Host Python of one layer's forward pass that launches no kernel, on this part's host under
/// `stack` [s]: `(13 · 2.17 µs + 4 · 50.1 µs) · host_op_time_factor` under the Megatron stack on a
/// host-launched part, else 0 (module docs).
pub fn layer_forward_python_s(hw: &Hardware, stack: Stack) -> f64 {
    if !hw.host_launched || stack != Stack::Megatron {
        return 0.0;
    }
    (MODULE_CALLS_PER_LAYER_FORWARD * MODULE_CALL_HOST_S + TE_LINEARS_PER_LAYER * TE_LINEAR_PYTHON_HOST_S)
        * hw.host_op_time_factor
}

/// The layer's Python per micro-batch `[forward, recomputation]` [s] under `opts`: the forward's
/// ([`layer_forward_python_s`]), and again that share of it in the backward where whole blocks are
/// recomputed (Megatron's `tensor_parallel.checkpoint` runs the layer's forward, module calls and
/// all, a second time: `CheckpointFunction.backward`, `megatron/core/tensor_parallel/random.py` l. 591–687;
/// [`super::choices::Recompute::block_share`]); selective and operator-level recomputation rerun no linear module
/// and are not counted (0).
pub fn layer_python_s(hw: &Hardware, opts: &ExtendedOptions) -> [f64; 2] {
    let fwd = layer_forward_python_s(hw, opts.stack);
    [fwd, fwd * opts.recompute.block_share().unwrap_or(0.0)]
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
        let t = layer_forward_python_s(&h100, Stack::Megatron);
        assert!((t - 228.466e-6).abs() < 1e-12, "{t}");
        assert!((layer_forward_python_s(&a100, Stack::Megatron) - 349.55298e-6).abs() < 1e-12);
        // Other stacks' layers are not counted.
        assert_eq!(layer_forward_python_s(&h100, Stack::Jax), 0.0);
        assert_eq!(layer_forward_python_s(&h100, Stack::DeepSpeed), 0.0);
    }

    #[test]
    fn whole_block_recomputation_runs_the_python_again() {
        use crate::extended::Recompute;
        let sys = crate::catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let h100 = Hardware::from_catalog(sys, crate::catalog::Precision::Bf16, true, &Default::default()).unwrap();
        let with = |recompute| layer_python_s(&h100, &ExtendedOptions { recompute, ..ExtendedOptions::realistic() });
        // 228.466 µs forward (above); full recomputation runs it again, a quarter of the blocks a
        // quarter of it (57.1165 µs) on average, selective none of it.
        let fwd = 228.466e-6;
        assert!((with(Recompute::Full)[1] - fwd).abs() < 1e-12);
        assert!((with(Recompute::of_share(0.25))[1] - fwd / 4.0).abs() < 1e-12);
        assert_eq!(with(Recompute::Selective)[1], 0.0);
        assert!((with(Recompute::None)[0] - fwd).abs() < 1e-12);
        assert_eq!(with(Recompute::None)[1], 0.0);
    }
}
