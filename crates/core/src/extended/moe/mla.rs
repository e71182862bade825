//! Multi-head latent attention (DeepSeek-V2 §2.1, V3) on one device for one micro-batch: its
//! projections and attention core, in place of the Q/K/V and output projections and flash
//! attention of grouped-query attention.
//!
//! Tensor parallelism as Megatron-Core runs MLA: the down-projections (`h → q_lora_rank`,
//! `h → kv_lora_rank + rope`) are replicated on every TP rank (small, and their outputs are
//! needed whole); the up-projections are column-parallel over heads; the output projection is
//! row-parallel. The core attends `a/tp` heads with query/key width `d_nope + d_rope` and value
//! width `d_v`: `2·b·s_q·s_k·(a/tp)·(d_qk + d_v)` FLOPs forward (halved when causal), backward
//! [`FLASH_BACKWARD_FACTOR`] times that. Kept for the backward: the latents, Q, K, V and the core's
//! output per token.

use crate::extended::block::FLASH_BACKWARD_FACTOR;
use crate::extended::layout::Layout;
use crate::extended::pricing::{Pass, Pricing};
use crate::extended::workload::Workload;
use crate::moe_shape::Mla;

/// One MLA sub-layer's matmuls and core (without norms, residual and TP collectives).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MlaCost {
    /// Projections, forward.
    pub projections: Pass,
    /// Attention core, forward.
    pub core_fwd: Pass,
    /// Attention core, backward.
    pub core_bwd: Pass,
    /// Parameters on this device [count].
    pub parameters: f64,
    /// Bytes kept for the backward pass [B].
    pub kept_bytes: f64,
}

/// Prices MLA `m` of `w` under `layout`.
pub fn mla_cost(w: &Workload, m: &Mla, layout: &Layout, p: &Pricing) -> MlaCost {
    let tp = layout.tp as f64;
    let tokens = layout.local_tokens(w);
    let (h, a) = (w.hidden as f64, w.heads as f64);
    let (dqk, dv) = (m.qk_head_dim() as f64, m.v_head_dim as f64);
    let (nope, kv_rank, rope) = (m.qk_nope_head_dim as f64, m.kv_lora_rank as f64, m.qk_rope_head_dim as f64);
    let heads_local = (a / tp).max(1.0);
    let q = match m.q_lora_rank {
        Some(r) => p.weight_linear(tokens, h, r as f64) + p.weight_linear(tokens, r as f64, heads_local * dqk),
        None => p.weight_linear(tokens, h, heads_local * dqk),
    };
    let kv = p.weight_linear(tokens, h, kv_rank + rope) + p.weight_linear(tokens, kv_rank, heads_local * (nope + dv));
    let out = p.weight_linear(tokens, heads_local * dv, h);
    let (mbs, s) = (layout.mbs as f64, w.seq_len as f64);
    let s_q = s / layout.cp as f64;
    let mask = if p.opts.causal { 0.5 } else { 1.0 };
    let tflop = 2.0 * mbs * s_q * s * heads_local * (dqk + dv) * mask * 1e-12;
    let es = p.hw.element_bytes;
    let bytes = (tokens * heads_local * (2.0 * dqk + 2.0 * dv) + mbs * s * heads_local * (dqk + dv)) * es;
    let core_fwd = p.attention(tflop, bytes);
    let core_bwd = p.attention(tflop * FLASH_BACKWARD_FACTOR, bytes * FLASH_BACKWARD_FACTOR);
    let q_rank = m.q_lora_rank.unwrap_or(0) as f64;
    let down = h * (q_rank + kv_rank + rope);
    let up = match m.q_lora_rank {
        Some(r) => r as f64 * a * dqk,
        None => h * a * dqk,
    } + kv_rank * a * (nope + dv)
        + a * dv * h;
    let kept = tokens * (q_rank + kv_rank + rope + heads_local * (2.0 * dqk + 2.0 * dv)) * es;
    MlaCost {
        projections: q + kv + out,
        core_fwd,
        core_bwd,
        parameters: down + up / tp + q_rank + kv_rank,
        kept_bytes: kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::moe_shape::tests::dsv3;

    #[test]
    fn deepseek_v3_mla_flops_by_hand() {
        let (_, mla) = dsv3();
        let w = Workload {
            seq_len: 4096,
            hidden: 7168,
            heads: 128,
            kv_heads: 128,
            head_dim: 56,
            layers: 61,
            ffn_hidden: 18432,
            gated_mlp: true,
            vocab: None,
            moe: None,
            mla: Some(mla),
            mtp_layers: 0,
        };
        let hw = Hardware::from_params(&SystemParams::h200().with_nvlink_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let c = mla_cost(&w, &mla, &Layout::placed(1, 1, 1, 1, 1, 1, 8), &p);
        let s = 4096.0;
        // Projections: 2·s·(7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 + 128·128·7168).
        let proj = 2.0 * s * (7168.0 * 1536.0 + 1536.0 * 24576.0 + 7168.0 * 576.0 + 512.0 * 32768.0 + 16384.0 * 7168.0);
        assert!((c.projections.tflop - proj * 1e-12).abs() < 1e-9);
        // Core: 2·s·s·128·(192 + 128)/2 (causal).
        let core = 2.0 * s * s * 128.0 * 320.0 / 2.0;
        assert!((c.core_fwd.tflop - core * 1e-12).abs() < 1e-9);
        assert!((c.core_bwd.tflop - 2.5 * core * 1e-12).abs() < 1e-9);
        assert_eq!(c.parameters, mla.parameters(7168, 128));
        // TP 8: up and output projections split, down projections replicated.
        let c8 = mla_cost(&w, &mla, &Layout::placed(8, 1, 1, 1, 1, 1, 8), &p);
        let down = 7168.0 * (1536.0 + 512.0 + 64.0);
        let up = 1536.0 * 24576.0 + 512.0 * 32768.0 + 16384.0 * 7168.0;
        assert_eq!(c8.parameters, down + up / 8.0 + 2048.0);
    }
}
