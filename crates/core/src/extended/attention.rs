//! The attention sub-layer of a block as operations ([`attention_operations`]): the norm, the
//! tensor-parallel collectives, the Q/K/V and output projections, and the attention core — one
//! flash kernel (with a sliding window's blocks priced apart), or the unfused core
//! ([`super::unfused_attention`]), or multi-head latent attention's own list
//! ([`super::moe::mla`]) — with the context-parallel exchange around it. The shared building
//! blocks are in [`super::ops`] (operations, shapes), [`super::sublayer`] (the sub-layer wrapper) and
//! [`super::context_parallel`] (the CP exchange).
//!
//! The shard each device's kernel runs ([`flash_attention`]): `N/cp` queries × `N` keys × the
//! heads per TP rank, causal work halved, as FLOPs (the same under every context-parallel
//! flavour: a load-balanced causal ring gives each rank `1/cp` of the work, Megatron-LM splitting
//! the sequence into `2·cp` chunks, rank `i` holding chunks `i` and `2·cp − 1 − i`:
//! `get_batch_on_this_cp_rank`, `megatron/training/utils.py`); as the kernel's
//! call, the rate reads a query length of `N/r` (`r` the ring degree: one ring step's chunk;
//! `N` under Ulysses, whose all-to-all gathers the sequence and splits the heads `1/u`) against
//! `N` keys, the rate at the shorter of the two. At 16k keys and above the kernel's
//! fraction of the ceiling is held at cuDNN's 16k figure on H100 (0.675 non-causal, 0.670–0.674
//! causal, [`super::efficiency::attention_kernel_fraction`]), 4 % under what FlashAttention-2
//! reaches on an A100 at 16k with a causal mask (0.697 of the A100's ceiling; Dao 2023,
//! `data/attention-kernel-benchmarks.md`): the curve is not what long-sequence rows on Ampere
//! miss (the test below).

use super::context_parallel::context_parallel_over;
use super::layout::Layout;
use super::ops::{ElementwiseTraffic, KeptBytes, OpKind, Operation, Shape, Work, elementwise, matmul, saved_input};
use super::pricing::Pricing;
use super::sublayer::{Sublayer, sublayer};
use super::workload::Workload;

/// The attention sub-layer: norm, entry collective, Q/K/V projection, flash attention, the
/// context-parallel K/V exchange, output projection, exit collective, residual add; multi-head
/// latent attention's projections instead when the model has it ([`super::moe::mla`]).
pub fn attention_operations(w: &Workload, layout: &Layout, p: &Pricing) -> Vec<Operation> {
    if let Some(mla) = &w.mla {
        return super::moe::mla::mla_operations(w, mla, layout, p);
    }
    let o = p.opts;
    let s = Shape::of(w, layout, p);
    let (tokens, tp, h, es) = (s.tokens, s.tp, s.h, s.es);
    let q_w = w.q_width() as f64;
    let kv_w = w.kv_width(o.model.grouped_query_attention) as f64;
    // K/V heads are split over tp while there are enough of them, replicated otherwise.
    let kv_local = (kv_w / tp).max(w.head_dim as f64);
    let mut inner = Vec::with_capacity(6);

    // The norm output feeding Q/K/V is kept sharded under sequence parallelism (re-gathered in
    // the backward), whole otherwise.
    let input = h * s.tokenwise * es;
    // Operator-level policy: Q (1st matmul) and V (3rd) saved, K (2nd) recomputed.
    let qkv = matmul(p, "qkv_proj", tokens, h, (q_w + 2.0 * kv_w) / tp)
        .keeping(saved_input(p, input))
        .op_policy((q_w + kv_w) / tp * tokens * es, kv_w / (q_w + 2.0 * kv_w));
    let entry = qkv.fwd;
    inner.push(qkv);
    let rope = ElementwiseTraffic::of(o.fusion).rope;
    if rope > 0.0 {
        inner.push(elementwise(p, "rope", rope * (q_w / tp + kv_local) * tokens * es));
    }
    inner.extend(super::unfused_rope::operation(w, layout, p, kv_local));

    let qkv_kept = (q_w / tp + 2.0 * kv_local) * tokens * es;
    let (core, att_s, att_work) = if o.attention_kernel == super::AttentionKernel::Unfused {
        let core = super::unfused_attention::operations(w, layout, p, qkv_kept);
        let att_s = core.iter().fold((0.0, 0.0), |(f, b), op| (f + op.fwd.compute_s, b + op.bwd.compute_s));
        (core, att_s, Work::Opaque)
    } else {
        flash_attention(w, layout, p, (q_w, kv_local), qkv_kept)
    };
    inner.extend(core);
    inner.extend(context_parallel_over(w, layout, p, (q_w / tp, kv_local), att_s, att_work));

    let out_input = q_w / tp * tokens * es;
    // Operator-level policy: the 4th matmul, recomputed (its input is the saved attention output).
    let out = matmul(p, "out_proj", tokens, q_w / tp, h).keeping(saved_input(p, out_input)).op_policy(0.0, 1.0);
    let exit = out.fwd;
    inner.push(out);
    sublayer(w, layout, p, Sublayer::Attention, inner, &entry, &exit)
}

/// The attention core as one flash-attention kernel: queries of this device's sequence shard
/// against all keys, with a sliding window's blocks priced apart ([`window_attention`]); returns
/// the operations, the core's forward and backward matrix time [s] (what a context-parallel ring
/// overlaps) and the work a ring re-prices against. `q_w` is the query width, `kv_local` the
/// device's K/V width, `qkv_kept` the bytes of Q, K and V kept for the backward [B].
fn flash_attention(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    (q_w, kv_local): (f64, f64),
    qkv_kept: f64,
) -> (Vec<Operation>, (f64, f64), Work) {
    let o = p.opts;
    let s = Shape::of(w, layout, p);
    let (tokens, tp, es) = (s.tokens, s.tp, s.es);
    let (mbs, seq) = (layout.mbs as f64, w.seq_len as f64);
    let s_q = seq / layout.cp as f64;
    // The kernel's query length: Ulysses gathers the sequence over its degree (same FLOPs, fewer heads).
    let s_q_kernel = seq / super::context_parallel::ring_degree(layout.cp, o) as f64;
    let heads_local = (w.heads as f64 / tp).max(1.0);
    let mask = if o.model.causal { 0.5 } else { 1.0 };
    // A sliding window: the block's attention is the mean over its blocks, the full share at the
    // whole prefix and the windowed share against a window of keys ([`window_attention`]).
    let full_share = w.sliding_window.map_or(1.0, |sw| 1.0 - sw.windowed_share());
    let att_tflop = 4.0 * mbs * s_q * seq * heads_local * w.head_dim as f64 * mask * full_share * 1e-12;
    let att_bytes = (2.0 * tokens * q_w / tp + 2.0 * mbs * seq * kv_local) * es;
    let attention = Work::Attention { tflop: att_tflop, bytes: att_bytes * full_share, s_q: s_q_kernel, s_k: seq };
    let att = Operation::priced("attention", OpKind::Attention, p, attention, att_bytes * full_share);
    let (att_s, work) = ((att.fwd.compute_s, att.bwd.compute_s), att.work);
    // Operator-level policy: the kernel's outputs are saved (the attention output and the FP32
    // log-sum-exp per head and query token); Q, K, V are recomputed for its backward. A backend
    // the policy's save list leaves out ([`super::options::ExtendedOptions::op_saves_attention`])
    // is recomputed with them (its forward runs again before its backward): nothing of it kept.
    let (att_saved, att_rerun) =
        if o.op_saves_attention { ((q_w / tp * es + 4.0 * heads_local) * tokens, 0.0) } else { (0.0, 1.0) };
    let mut ops = vec![att.keeping(KeptBytes::recomputable(qkv_kept)).op_policy(att_saved, att_rerun)];
    if let Some(sw) = w.sliding_window.filter(|sw| sw.windowed_share() > 0.0) {
        let per_head = mbs * s_q * heads_local * w.head_dim as f64;
        ops.push(window_attention(p, sw, per_head, seq, att_bytes * sw.windowed_share()));
    }
    (ops, att_s, work)
}

/// The windowed blocks' share of a block's flash attention ([`crate::vocab::SlidingWindow`]):
/// each query attends to the window's last keys, `4·(b·s_q·a·d)·k̄` FLOPs forward for the mean
/// keys per query `k̄` ([`crate::vocab::SlidingWindow::mean_keys`]), times the windowed share
/// of the blocks, priced by [`Pricing::window_attention`]. `per_head` is `b·s_q·a·d` of this
/// device, `bytes` the windowed share of the attention's traffic. What it keeps is the full
/// attention's (the same tensors): counted on the `attention` operation.
fn window_attention(p: &Pricing, sw: crate::vocab::SlidingWindow, per_head: f64, seq: f64, bytes: f64) -> Operation {
    let tflop = 4.0 * per_head * sw.mean_keys(seq) * sw.windowed_share() * 1e-12;
    let work = Work::WindowAttention { tflop, bytes, s_q: seq, s_k: seq, window: sw.tokens as f64 };
    Operation::priced("attention_window", OpKind::Attention, p, work, bytes).op_policy(0.0, 0.0)
}

#[cfg(test)]
mod tests {
    use super::super::efficiency::{KernelCurve, attention_kernel_fraction};

    /// The kernel curve at long sequence against FlashAttention-2 on an A100 (Dao 2023,
    /// arXiv:2307.08691, Fig. 5–6 at 16k tokens, head dimension 128, causal: forward 197,
    /// backward 186 TFLOP/s; `data/attention-kernel-benchmarks.md`): forward + backward
    /// `3.5/(1/197 + 2.5/186)` = 3.5/0.018517 = 189.0 TFLOP/s, over the A100/A800 ceiling 271.2
    /// (the catalog's `measured_matmul_tflops`) = 0.6970. Extended mode's fraction at 64k keys,
    /// causal: cuDNN's 16k `3.5/(1/595 + 2.5/516)/794.5` = 0.6751, times 65536/65664 = 0.6738,
    /// i.e. 0.6738/0.6970 = 0.967 of FlashAttention-2's: within 4 %, so a long-sequence row on
    /// Ampere priced too slow by more than that is not priced so by the curve.
    #[test]
    fn long_sequence_curve_against_flashattention2_on_a100() {
        let fa2: f64 = 3.5 / (1.0 / 197.0 + 2.5 / 186.0) / 271.2;
        assert!((fa2 - 0.6970).abs() < 5e-4, "{fa2}");
        let ours = attention_kernel_fraction(KernelCurve::Native, 65536.0, true);
        assert!((ours - 0.6738).abs() < 5e-4, "{ours}");
        assert!((ours / fa2 - 0.967).abs() < 2e-3, "{}", ours / fa2);
        // Held above 16k: 208k keys (the USP report's longest) read the same fraction but for
        // the causal tile factor, 212992/213120 against 65536/65664.
        let at_208k = attention_kernel_fraction(KernelCurve::Native, 212992.0, true);
        assert!((at_208k / ours - (212992.0 / 213120.0) / (65536.0 / 65664.0)).abs() < 1e-12);
    }
}
