//! The host work of Megatron-Core's multi-head latent attention beyond a plain attention's, per
//! layer and micro-batch: its further modules (the layer's Python, [`crate::extended::layer_python`])
//! and the PyTorch calls between its projections that [`super::mla`]'s operations do not issue
//! (its RoPE, the query's and key's assembly), priced per call as the MoE layer's calls are
//! ([`super::host_calls::call_host_s`]: 12.9 µs times the host's speed, under Megatron-Core on a
//! host-launched GPU only).
//!
//! **Modules** (NVIDIA/Megatron-LM at d98e8a6, `megatron/core/models/gpt/gpt_layer_specs.py`
//! l. 244–330, `get_gpt_layer_with_transformer_engine_submodules` with `multi_latent_attention`
//! and the default unfused down-projections; `megatron/core/transformer/multi_latent_attention.py`
//! l. 298–470 and 638–1000): the attention sub-layer calls the layer, `input_layernorm`,
//! `self_attention` (`MLASelfAttention`), `linear_q_down_proj`, `q_layernorm`, `linear_q_up_proj`,
//! `linear_kv_down_proj`, `kv_layernorm`, `linear_kv_up_proj`, `rotary_pos_emb` (called by every
//! layer, l. 705/718, its `forward` cached by `lru_cache`: a module call, no kernel),
//! `core_attention` and its backend module, `linear_proj`, `pre_cross_attn_layernorm` and
//! `cross_attention`: 15 calls, 5 Transformer Engine linear modules ([`ATTENTION`]; the plain
//! attention's are 9 and 2, [`LayerModules::ATTENTION`]). Without a query rank `linear_q_proj`
//! replaces the query's down-projection, norm and up-projection: 13 calls, 4 TE linear modules
//! ([`ATTENTION_NO_Q_RANK`]). The local spec builds the same modules from Megatron-Core's own
//! linears (no TE linear module, [`attention_modules`]).
//!
//! **Calls between the projections** (`qkv_up_proj_and_rope_apply`, l. 855–981), forward /
//! backward per layer and micro-batch:
//! * **RoPE unfused** (`--no-rope-fusion`: `apply_rotary_pos_emb` with `mla_rotary_interleaved`,
//!   which Transformer Engine's fused RoPE does not take either way, `rope_utils.py` l. 340–414,
//!   so `_apply_rotary_pos_emb_bshd`, l. 92–156), on the queries' and the shared key's positional
//!   parts ([`ROPE_TENSORS`]): per tensor forward [`ROPE_FORWARD_LAUNCHES`] = 13 — the interleave's
//!   `torch.cat((x1, x2))` (1), `cos`, `* mscale`, `.to(dtype)` and the same for `sin` (6),
//!   `t * cos_`, `-x2` and `torch.cat` of `_rotate_half`, `* sin_`, the sum (5), and
//!   `torch.cat((t, t_pass))` (1); backward [`ROPE_BACKWARD_LAUNCHES`] = 14 — the products'
//!   gradients (2), the negation's (1), `torch.chunk`'s `split_backward` (1), the sum of the two
//!   gradients of the rotated part (1), the interleave's two strided slices (`slice_backward`: a
//!   zero fill and a copy each, 4) and their sum (1), the `t[..., :rot_dim]` slice (a fill and a
//!   copy, 2), the empty `t_pass`'s fill (1) and the sum into the input's gradient (1). Then
//!   `torch.cat` of the query and of the key (after the shared key's `expand`) and
//!   `value.contiguous()` (a strided slice of the key/value up-projection's output): 3 forward;
//!   backward the two `torch.split`s' `split_backward` and the `expand`'s sum over heads: 3
//!   ([`ASSEMBLY`]).
//! * **RoPE fused** (`apply_rope_fusion`, Megatron-LM's default for RoPE models, with the default
//!   `rope_type="yarn"`, `transformer_config.py` l. 3306/3345): `fused_apply_mla_rope_for_q` and
//!   `fused_apply_mla_rope_for_kv`, one kernel each way each, which also assemble the query, key
//!   and value ([`FUSED`]).
//! * With tensor parallelism and sequence parallelism the shared positional key is all-gathered
//!   (`gather_from_sequence_parallel_region`, l. 758–763): one collective forward, its
//!   reduce-scatter backward ([`SP_GATHER`]).
//!
//! Views (`view`, `split`, `unsqueeze`, `expand`, slices) launch nothing and are not counted (a
//! floor). Under a CUDA graph over the attention (`attn` scope) the calls are replayed inside the
//! graph: none. Counted in MoE blocks (whose host calls are counted); a dense block of an MLA
//! model keeps the plain attention's count (a floor).

use super::host_calls::call_host_s;
use crate::extended::choices::TransformerImpl;
use crate::extended::layer_python::LayerModules;
use crate::extended::pricing::Pricing;
use crate::moe_shape::Mla;

/// MLA's attention sub-layer with a query rank, Transformer Engine spec: 15 module calls, 5 TE
/// linear modules (module docs).
pub const ATTENTION: LayerModules = LayerModules { calls: 15.0, te_linears: 5.0 };

/// MLA's attention sub-layer without a query rank (`linear_q_proj`), Transformer Engine spec:
/// 13 module calls, 4 TE linear modules (module docs).
pub const ATTENTION_NO_Q_RANK: LayerModules = LayerModules { calls: 13.0, te_linears: 4.0 };

/// Tensors MLA's RoPE is applied to: the queries' and the shared key's positional parts [count].
pub const ROPE_TENSORS: f64 = 2.0;

/// Kernels the unfused RoPE launches per tensor in the forward (module docs) [count].
pub const ROPE_FORWARD_LAUNCHES: f64 = 13.0;

/// Kernels the autograd engine launches per tensor for the unfused RoPE's backward (module
/// docs) [count].
pub const ROPE_BACKWARD_LAUNCHES: f64 = 14.0;

/// The query's and key's assembly with RoPE unfused `[forward, backward]`: two `torch.cat`s and
/// the value's copy; two `split_backward`s and the `expand`'s sum [count].
pub const ASSEMBLY: [f64; 2] = [3.0, 3.0];

/// The fused MLA RoPE kernels for the query and for the key/value `[forward, backward]` [count].
pub const FUSED: [f64; 2] = [2.0, 2.0];

/// The shared positional key's sequence-parallel all-gather and its backward [count].
pub const SP_GATHER: [f64; 2] = [1.0, 1.0];

/// MLA's attention sub-layer's modules under `spec` (module docs): [`ATTENTION`] or
/// [`ATTENTION_NO_Q_RANK`]; the local spec's calls with no TE linear module.
pub fn attention_modules(m: &Mla, spec: TransformerImpl) -> LayerModules {
    let te = if m.q_lora_rank.is_some() { ATTENTION } else { ATTENTION_NO_Q_RANK };
    match spec {
        TransformerImpl::TransformerEngine => te,
        TransformerImpl::Local => LayerModules { calls: te.calls, te_linears: 0.0 },
    }
}

/// The calls between MLA's projections per layer and micro-batch `[forward, backward]` [count]:
/// RoPE unfused (the `rope_fusion` switch off: `--no-rope-fusion`) or fused, plus the sequence-parallel gather where `sp_gather`
/// (module docs).
pub fn glue_calls(rope_unfused: bool, sp_gather: bool) -> [f64; 2] {
    let rope = if rope_unfused {
        [ROPE_TENSORS * ROPE_FORWARD_LAUNCHES + ASSEMBLY[0], ROPE_TENSORS * ROPE_BACKWARD_LAUNCHES + ASSEMBLY[1]]
    } else {
        FUSED
    };
    let gather = if sp_gather { SP_GATHER } else { [0.0; 2] };
    [rope[0] + gather[0], rope[1] + gather[1]]
}

/// Host time of [`glue_calls`] per layer and micro-batch `[forward, backward]` [s] under `p`
/// with tensor-parallel degree `tp`: the calls at [`call_host_s`] each; 0 where the MoE layer's
/// calls are not counted (another stack, a compiled part) or a CUDA graph replays the attention.
pub fn glue_host_s(p: &Pricing, tp: u64) -> [f64; 2] {
    let Some(per_call) = call_host_s(p) else { return [0.0; 2] };
    if p.opts.moe.host.graphs.attn {
        return [0.0; 2];
    }
    let sp_gather = tp > 1 && p.opts.sequence_parallel;
    glue_calls(!p.opts.rope_fusion, sp_gather).map(|n| n * per_call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::extended::pricing::TORCH_CALL_HOST_S;
    use crate::extended::stack::Stack;

    fn mla(q: Option<u64>) -> Mla {
        Mla { q_lora_rank: q, kv_lora_rank: 128, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128 }
    }

    #[test]
    fn modules_by_hand() {
        // The plain attention's 9 calls and 2 TE linears, plus the query's down-projection, norm
        // and up-projection, the key/value's three (a projection became two) and the rotary
        // module: 9 + 6 = 15 calls, 2 + 3 = 5 TE linears.
        let te = TransformerImpl::TransformerEngine;
        assert_eq!(
            attention_modules(&mla(Some(256)), te),
            LayerModules::ATTENTION.plus(LayerModules { calls: 6.0, te_linears: 3.0 })
        );
        // Without a query rank: one query projection for three modules: 13 calls, 4 TE linears.
        assert_eq!(attention_modules(&mla(None), te), LayerModules { calls: 13.0, te_linears: 4.0 });
        assert_eq!(attention_modules(&mla(Some(256)), TransformerImpl::Local).te_linears, 0.0);
    }

    #[test]
    fn glue_calls_by_hand() {
        // Unfused: 2 · 13 + 3 = 29 forward, 2 · 14 + 3 = 31 backward; with the SP gather 30 / 32.
        assert_eq!(glue_calls(true, false), [29.0, 31.0]);
        assert_eq!(glue_calls(true, true), [30.0, 32.0]);
        // Fused: one kernel each for the query and the key/value, each way.
        assert_eq!(glue_calls(false, false), [2.0, 2.0]);
    }

    #[test]
    fn glue_host_time_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), true);
        let mut opts = ExtendedOptions { stack: Stack::Megatron, ..ExtendedOptions::realistic() };
        opts.rope_fusion = false;
        let p = Pricing { hw: &hw, opts: &opts };
        // TP 1: 29 and 31 calls at 12.9 µs times the host's factor.
        let f = hw.host_op_time_factor * TORCH_CALL_HOST_S;
        let [fwd, bwd] = glue_host_s(&p, 1);
        assert!((fwd - 29.0 * f).abs() < 1e-15 && (bwd - 31.0 * f).abs() < 1e-15);
        // A CUDA graph over the attention replays them: none.
        let mut graphed = opts;
        graphed.moe.host.graphs.attn = true;
        assert_eq!(glue_host_s(&Pricing { hw: &hw, opts: &graphed }, 1), [0.0; 2]);
        // Another stack: its MoE layer's calls are not counted, nor these.
        let jax = ExtendedOptions { stack: Stack::Jax, ..opts };
        assert_eq!(glue_host_s(&Pricing { hw: &hw, opts: &jax }, 1), [0.0; 2]);
    }
}
