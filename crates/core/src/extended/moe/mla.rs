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

use crate::extended::context_parallel::context_parallel;
use crate::extended::layout::Layout;
use crate::extended::ops::{
    FLASH_BACKWARD_FACTOR, KeptBytes, NORM_ELEMENTS_PER_H, OpKind, Operation, Shape, elementwise, matmul, saved_input,
};
use crate::extended::pricing::Pricing;
use crate::extended::sublayer::{Sublayer, sublayer};
use crate::extended::workload::Workload;
use crate::moe_shape::Mla;

/// Megatron-Core's `mla_up_proj` recompute module under selective recomputation: the query and
/// key/value up-projections (RoPE applied with them) run again before the backward, and their
/// outputs — the Q, K, V the core attention saves — are freed after the forward
/// (`CheckpointWithoutOutput` in `MultiLatentAttention`): the up-projections keep their latent
/// inputs and rerun their forward, the core keeps none of Q, K, V.
fn up_projections_recomputed(ops: &mut [Operation]) {
    for op in ops.iter_mut() {
        match op.name {
            "mla_q_up" | "mla_q_proj" | "mla_kv_up" => *op = op.selective_policy(op.kept.selective, 1.0),
            "attention" => *op = op.selective_policy(0.0, 0.0),
            // The unfused core's Q, K, V: freed as well; whether the core reruns is its own.
            "attention_scores" => *op = op.selective_policy(0.0, op.selective_recompute),
            _ => {}
        }
    }
}

/// The MLA sub-layer of one block of `w` under `layout` as operations: the block's attention norm
/// and tensor-parallel collectives ([`sublayer`]) around the query path (down-projection, latent
/// norm, up-projection; or one projection without a query rank), the key/value path
/// (down-projection to the latent and the shared rope key, latent norm, up-projection), the
/// attention core, the context-parallel exchange and the output projection.
pub fn mla_operations(w: &Workload, m: &Mla, layout: &Layout, p: &Pricing) -> Vec<Operation> {
    let s = Shape::of(w, layout, p);
    let (tokens, tp, h, es) = (s.tokens, s.tp, s.h, s.es);
    let a = w.heads as f64;
    let (dqk, dv) = (m.qk_head_dim() as f64, m.v_head_dim as f64);
    let (nope, kv_rank, rope) = (m.qk_nope_head_dim as f64, m.kv_lora_rank as f64, m.qk_rope_head_dim as f64);
    let heads_local = (a / tp).max(1.0);
    let input = h * s.tokenwise * es;
    // A latent's norm: read and write the latent, own its scale.
    let latent_norm = |name, rank: f64| {
        elementwise(p, name, NORM_ELEMENTS_PER_H * rank * tokens * es)
            .owning(rank)
            .keeping(KeptBytes::recomputable(rank * tokens * es))
    };
    let mut inner = Vec::with_capacity(9);
    match m.q_lora_rank {
        Some(r) => {
            let r = r as f64;
            inner.push(matmul(p, "mla_q_down", tokens, h, r).keeping(saved_input(p, input)));
            inner.push(latent_norm("mla_q_norm", r));
            inner.push(matmul(p, "mla_q_up", tokens, r, heads_local * dqk).keeping(saved_input(p, r * tokens * es)));
        }
        None => inner.push(matmul(p, "mla_q_proj", tokens, h, heads_local * dqk).keeping(saved_input(p, input))),
    }
    // The key/value down-projection reads the same norm output as the query path (kept once).
    inner.push(matmul(p, "mla_kv_down", tokens, h, kv_rank + rope));
    inner.push(latent_norm("mla_kv_norm", kv_rank));
    inner.push(
        matmul(p, "mla_kv_up", tokens, kv_rank, heads_local * (nope + dv))
            .keeping(saved_input(p, kv_rank * tokens * es)),
    );

    // The core: `a/tp` heads, query/key width d_nope + d_rope, value width d_v.
    let (mbs, seq) = (layout.mbs as f64, w.seq_len as f64);
    let s_q = seq / layout.cp as f64;
    let mask = if p.opts.model.causal { 0.5 } else { 1.0 };
    let tflop = 2.0 * mbs * s_q * seq * heads_local * (dqk + dv) * mask * 1e-12;
    let bytes = (tokens * heads_local * (2.0 * dqk + 2.0 * dv) + mbs * seq * heads_local * (dqk + dv)) * es;
    let core_fwd = p.attention(tflop, bytes, s_q, seq);
    let core_bwd = p.attention(tflop * FLASH_BACKWARD_FACTOR, bytes * FLASH_BACKWARD_FACTOR, s_q, seq);
    let qkv_kept = heads_local * (2.0 * dqk + dv) * tokens * es;
    if p.opts.attention_kernel == crate::extended::AttentionKernel::Unfused {
        // `--attention-backend unfused`: scores, softmax and context in full (the unfused core);
        // under a Megatron module list (`--recompute-modules`, which names no `core_attn` in the
        // rows read) the core is not rerun and keeps its probabilities.
        let core = crate::extended::unfused_attention::core_operations(w, layout, p, heads_local, (dqk, dv), qkv_kept);
        let listed = p.opts.moe.recompute_modules != Default::default();
        inner.extend(core.into_iter().map(|op| if listed { op.selective_policy(op.kept.none, 0.0) } else { op }));
    } else {
        let core = Operation::new("attention", OpKind::Attention, core_fwd, core_bwd, bytes)
            .keeping(KeptBytes::recomputable(qkv_kept));
        inner.push(core);
    }
    if p.opts.moe.recompute_modules.mla_up_proj {
        up_projections_recomputed(&mut inner);
    }
    // Context parallelism passes K (width d_qk) and V (d_v) per local head: their mean per tensor.
    let kv_local = heads_local * (dqk + dv) / 2.0;
    // Ulysses moves Q (d_qk) and the output (d_v) per local head: the same mean width.
    inner.extend(context_parallel(w, layout, p, (kv_local, kv_local), core_fwd.compute_s, core_bwd.compute_s));
    let out =
        matmul(p, "out_proj", tokens, heads_local * dv, h).keeping(saved_input(p, heads_local * dv * tokens * es));
    let (entry, exit) = (inner[0].fwd, out.fwd);
    inner.push(out);
    let mut ops = sublayer(w, layout, p, Sublayer::Attention, inner, &entry, &exit);
    // The dense blocks of an MoE model (DeepSeek-V3's first three) recompute their attention's
    // norms too.
    if p.opts.moe.recompute_modules.layernorm {
        crate::extended::ops::norms_recomputed(&mut ops);
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::moe_shape::tests::dsv3;

    /// DeepSeek-V3's shape with dense blocks (only its MLA matters here), one 4096-token sequence.
    fn dsv3_attention(mla: Mla) -> Workload {
        Workload {
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
            tied_embeddings: false,
            sliding_window: None,
        }
    }

    fn price(w: &Workload, mla: &Mla, layout: &Layout) -> (f64, f64, f64, f64) {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let ops = mla_operations(w, mla, layout, &p);
        let sum = |f: &dyn Fn(&Operation) -> f64| ops.iter().map(f).sum::<f64>();
        let core =
            |f: &dyn Fn(&Operation) -> f64| ops.iter().filter(|o| o.kind == OpKind::Attention).map(f).sum::<f64>();
        (
            sum(&|o| if o.kind == OpKind::Matmul { o.fwd.tflop } else { 0.0 }),
            core(&|o| o.fwd.tflop),
            core(&|o| o.bwd.tflop),
            sum(&|o| o.parameters),
        )
    }

    #[test]
    fn mla_up_proj_recompute_by_hand() {
        use crate::extended::moe::RecomputeModules;
        use crate::extended::options::Recompute;
        // DeepSeek-V3's MLA, one sequence of 4096 tokens on one BF16 H200, selective recomputation.
        let (_, mla) = dsv3();
        let w = dsv3_attention(mla);
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let layout = Layout::placed(1, 1, 1, 1, 1, 1, 8);
        let ops_with = |mla_up_proj| {
            let mut opts = ExtendedOptions { recompute: Recompute::Selective, ..ExtendedOptions::realistic() };
            opts.moe.recompute_modules = RecomputeModules { mla_up_proj, ..Default::default() };
            mla_operations(&w, &mla, &layout, &Pricing { hw: &hw, opts: &opts })
        };
        let kept = |ops: &[Operation]| ops.iter().map(|o| o.kept.under(Recompute::Selective)).sum::<f64>();
        let rerun =
            |ops: &[Operation]| ops.iter().map(|o| o.fwd.tflop * o.recomputed(Recompute::Selective)).sum::<f64>();
        let (plain, up) = (ops_with(false), ops_with(true));
        // Q, K, V of 128 heads (widths 192, 192, 128) × 4096 tokens × 2 B are no longer kept…
        let s = 4096.0;
        assert!((kept(&plain) - kept(&up) - 128.0 * (192.0 + 192.0 + 128.0) * s * 2.0).abs() < 1.0);
        // …and the up-projections run again: 2·s·(1536·128·192 + 512·128·(128 + 128)).
        assert_eq!(rerun(&plain), 0.0);
        let want = 2.0 * s * (1536.0 * 24576.0 + 512.0 * 32768.0) * 1e-12;
        assert!((rerun(&up) - want).abs() < 1e-9, "{} vs {want}", rerun(&up));
    }

    #[test]
    fn deepseek_v3_mla_flops_by_hand() {
        let (_, mla) = dsv3();
        let w = dsv3_attention(mla);
        let (proj, core_fwd, core_bwd, params) = price(&w, &mla, &Layout::placed(1, 1, 1, 1, 1, 1, 8));
        let s = 4096.0;
        // Projections: 2·s·(7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 + 128·128·7168).
        let want = 2.0 * s * (7168.0 * 1536.0 + 1536.0 * 24576.0 + 7168.0 * 576.0 + 512.0 * 32768.0 + 16384.0 * 7168.0);
        assert!((proj - want * 1e-12).abs() < 1e-9);
        // Core: 2·s·s·128·(192 + 128)/2 (causal).
        let core = 2.0 * s * s * 128.0 * 320.0 / 2.0;
        assert!((core_fwd - core * 1e-12).abs() < 1e-9);
        assert!((core_bwd - 2.5 * core * 1e-12).abs() < 1e-9);
        // MLA's parameters plus the attention norm's h.
        assert_eq!(params, mla.parameters(7168, 128) + 7168.0);
        // TP 8: up and output projections split, down projections and latent norms replicated.
        let (_, _, _, p8) = price(&w, &mla, &Layout::placed(8, 1, 1, 1, 1, 1, 8));
        let down = 7168.0 * (1536.0 + 512.0 + 64.0);
        let up = 1536.0 * 24576.0 + 512.0 * 32768.0 + 16384.0 * 7168.0;
        assert_eq!(p8, down + up / 8.0 + 2048.0 + 7168.0 / 8.0);
    }
}
