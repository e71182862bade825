//! Attention without a fused kernel ([`super::AttentionKernel::Unfused`]): the score matrix is
//! computed in full, written to HBM, normalised and kept for the backward pass, as
//! Megatron-Core's own `DotProductAttention` runs it (`--attention-backend local`;
//! `megatron/core/transformer/dot_product_attention.py` at NVIDIA/Megatron-LM d98e8a6, lines
//! 194–239: `torch.baddbmm` of Q and Kᵀ, `FusedScaleMaskSoftmax`, dropout, `torch.bmm` of the
//! probabilities and V), as Transformer Engine's `UnfusedDotProductAttention` does
//! (`--attention-backend unfused`), and Hugging Face's `attn_implementation: eager`.
//!
//! Per device and micro-batch, with `B = b·a_l` (micro-batch × local heads), `s_q` queries of the
//! device's sequence shard, `s_k` keys and head width `d`:
//! * scores `Q·Kᵀ`: `B` matmuls `(s_q × d)·(d × s_k)` — every score, the causal mask (and a
//!   sliding window) applied afterwards, so no FLOP is skipped as a flash kernel skips masked
//!   tiles; it writes `B·s_q·s_k` elements;
//! * the scaled, masked softmax: one fused kernel reading the scores and writing the
//!   probabilities `P` (`2·B·s_q·s_k` elements of traffic; backward twice that, the element-wise
//!   convention of [`super::ops`]);
//! * context `P·V`: `B` matmuls `(s_q × s_k)·(s_k × d)`.
//!
//! Both matmuls are priced at the 16-bit rate ([`super::pricing::Pricing::activation_matmul`]:
//! they stay in the activations' format under FP8 training) with the GEMM-size factor of their
//! shape (a `d`-deep matmul runs well below a weight GEMM's rate), and each backward is two
//! matmuls of the forward's size (`dV = Pᵀ·dO`, `dP = dO·Vᵀ`; `dQ = dS·K`, `dK = dSᵀ·Q`).
//!
//! Kept for the backward: Q, K and V (as with flash attention) and `P`, `2·a·s²·b` bytes per
//! layer in 16-bit — the term of Korthikanti et al. 2022 (arXiv:2205.05198, §4.1, eq. 1) that
//! flash attention removes. Their selective recomputation is exactly this core's: under
//! `selective` nothing of it is kept beyond Q, K, V and its forward runs again before the
//! backward (with a flash kernel the same policy costs nothing). Attention dropout (Megatron's
//! default 0.1 keeps a mask and a second copy of `P`) is not modelled: the modelled LLMs train
//! without it. Multi-head latent attention keeps its own fused core ([`super::moe::mla`]).

use super::layout::Layout;
use super::ops::{KeptBytes, OpKind, Operation, Shape, Work, elementwise};
use super::pricing::Pricing;
use super::workload::Workload;

/// The unfused attention core of one block: scores, softmax, context (see the module doc).
/// `qkv_kept` is the bytes of Q, K and V the core keeps for its backward [B].
pub(crate) fn operations(w: &Workload, layout: &Layout, p: &Pricing, qkv_kept: f64) -> Vec<Operation> {
    let s = Shape::of(w, layout, p);
    let tp = s.tp;
    let d = w.head_dim as f64;
    let heads_local = (w.heads as f64 / tp).max(1.0);
    core_operations(w, layout, p, heads_local, (d, d), qkv_kept)
}

/// The unfused core of `heads_local` heads of query/key width `d_qk` and value width `d_v` on this
/// device's sequence shard (multi-head latent attention's `d_nope + d_rope` and `d_v` under
/// `--attention-backend unfused`; equal widths for the other attentions, [`operations`]);
/// `qkv_kept` the bytes of Q, K and V it keeps for its backward [B].
pub(crate) fn core_operations(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    heads_local: f64,
    (d_qk, d_v): (f64, f64),
    qkv_kept: f64,
) -> Vec<Operation> {
    let es = Shape::of(w, layout, p).es;
    let (mbs, s_k) = (layout.mbs as f64, w.seq_len as f64);
    let s_q = s_k / layout.cp as f64;
    let batch = mbs * heads_local;
    let probabilities = batch * s_q * s_k * es;

    let scores = Work::ActivationMatmul { batch, m: s_q, k: d_qk, n: s_k };
    let scores_bytes = batch * (s_q * d_qk + d_qk * s_k + s_q * s_k) * es;
    let scores = Operation::priced("attention_scores", OpKind::Matmul, p, scores, scores_bytes)
        .keeping(KeptBytes::recomputable(qkv_kept))
        .selective_policy(qkv_kept, 1.0)
        .op_policy(0.0, 0.0);
    let softmax = elementwise(p, "attention_softmax", 2.0 * probabilities)
        .keeping(KeptBytes { none: probabilities, selective: 0.0, full: 0.0, op: probabilities })
        .selective_policy(0.0, 1.0)
        .op_policy(probabilities, 0.0);
    let context = Work::ActivationMatmul { batch, m: s_q, k: s_k, n: d_v };
    let context_bytes = batch * (s_q * s_k + s_k * d_v + s_q * d_v) * es;
    // Operator-level policy: its output (the output projection's input) saved, as flash's.
    let output = batch * s_q * d_v * es;
    let context = Operation::priced("attention_context", OpKind::Matmul, p, context, context_bytes)
        .selective_policy(0.0, 1.0)
        .op_policy(output, 0.0);
    vec![scores, softmax, context]
}

#[cfg(test)]
mod tests {
    use super::super::Hardware;
    use super::super::block::BlockCost;
    use super::super::block::operations;
    use super::super::options::{AttentionKernel, ExtendedOptions, Recompute};
    use super::*;
    use crate::SystemParams;

    /// A 512-wide, 8-head GPT block at 1,024 tokens (Megatron-LM's functional-test shape).
    fn small() -> Workload {
        Workload::MEGATRON_TEST_GPT
    }

    fn ops(kernel: AttentionKernel, recompute: Recompute) -> (Vec<Operation>, Hardware) {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let opts = ExtendedOptions { attention_kernel: kernel, recompute, ..ExtendedOptions::realistic() };
        let layout = Layout::placed(1, 1, 1, 1, 4, 4, 8);
        let list = operations(&small(), &layout, &Pricing { hw: &hw, opts: &opts });
        (list, hw)
    }

    /// FLOPs, traffic and kept bytes of the core by hand: b = 4, a = 8 heads, s = 1,024, d = 64,
    /// 2-byte activations.
    #[test]
    fn the_core_by_hand() {
        let (list, hw) = ops(AttentionKernel::Unfused, Recompute::None);
        let names: Vec<&str> = list.iter().map(|o| o.name).collect();
        assert!(!names.contains(&"attention"), "{names:?}");
        let at = |n: &str| list.iter().find(|o| o.name == n).unwrap();
        let (batch, s, d, es) = (4.0 * 8.0, 1024.0, 64.0, 2.0);
        // Every score computed (the causal mask halves nothing): 2·B·s·d·s per matmul.
        let gemm = 2.0 * batch * s * d * s * 1e-12;
        for n in ["attention_scores", "attention_context"] {
            let op = at(n);
            assert!((op.fwd.tflop - gemm).abs() < 1e-12 * gemm, "{n}: {} vs {gemm}", op.fwd.tflop);
            assert!((op.bwd.tflop - 2.0 * gemm).abs() < 1e-12 * gemm, "{n}");
            assert_eq!(op.kind, OpKind::Matmul);
        }
        // The scores' matmul is d = 64 deep: its rate is the 16-bit ceiling × η × the size factor.
        let p = hw.attention_ceiling_tflops * ExtendedOptions::realistic().hardware.matmul_efficiency;
        let c = ExtendedOptions::realistic().hardware.gemm_half_dim;
        let factor = s / (s + c) * d / (d + c) * s / (s + c);
        let sc = at("attention_scores");
        assert!((sc.fwd.compute_s - gemm / (p * factor)).abs() < 1e-12 * sc.fwd.compute_s);
        // The softmax reads the scores and writes P: 2·B·s² elements; backward twice that.
        let softmax = at("attention_softmax");
        let traffic = 2.0 * batch * s * s * es;
        assert_eq!(softmax.bytes, traffic);
        assert!((softmax.fwd.memory_s - traffic * 1e-9 / hw.hbm_bandwidth_gbps).abs() < 1e-15);
        // P kept: b·a·s² × 2 B (Korthikanti's 2as²b), gone under selective recomputation.
        let p_bytes = batch * s * s * es;
        assert_eq!(softmax.kept.none, p_bytes);
        assert_eq!(softmax.kept.selective, 0.0);
        assert_eq!(softmax.kept.full, 0.0);
    }

    /// Context parallelism needs a fused kernel: a layout with `cp > 1` is refused, naming the
    /// switch.
    #[test]
    fn no_context_parallelism() {
        let opts = ExtendedOptions { attention_kernel: AttentionKernel::Unfused, ..ExtendedOptions::realistic() };
        let cp2 = Layout::placed(1, 2, 1, 1, 4, 4, 8);
        let e = super::super::context_parallel::check(&small(), &cp2, &opts).unwrap_err();
        assert!(e.to_string().contains("attention_kernel"), "{e}");
        let cp1 = Layout::placed(1, 1, 1, 1, 4, 4, 8);
        assert!(super::super::context_parallel::check(&small(), &cp1, &opts).is_ok());
    }

    /// Against flash attention on the same block: more kernels, more kept bytes, and under
    /// selective recomputation the core runs again (free with a flash kernel).
    #[test]
    fn against_flash() {
        let host = 130e-6;
        let cost = |k, r| {
            let (list, _) = ops(k, r);
            BlockCost::of_operations(&list, r, host)
        };
        let (flash, unfused) =
            (cost(AttentionKernel::Native, Recompute::None), cost(AttentionKernel::Unfused, Recompute::None));
        // Two more forward kernels (3 for 1), four more backward ones (2 + 1 + 2 for 1): a
        // host-bound block takes 2 + 4 issue times longer.
        assert!(
            (unfused.fwd.time() - flash.fwd.time() - 2.0 * host).abs() < 1e-12,
            "{} {}",
            unfused.fwd.time(),
            flash.fwd.time()
        );
        assert!((unfused.bwd.time() - flash.bwd.time() - 4.0 * host).abs() < 1e-12);
        let p_bytes = 4.0 * 8.0 * 1024.0 * 1024.0 * 2.0;
        assert!((unfused.activation_bytes - flash.activation_bytes - p_bytes).abs() < 1e-3);
        let (fs, us) =
            (cost(AttentionKernel::Native, Recompute::Selective), cost(AttentionKernel::Unfused, Recompute::Selective));
        assert_eq!(fs.recompute.time(), 0.0);
        assert!(us.recompute.time() >= 3.0 * host);
        assert!(
            (us.selective_bytes - fs.selective_bytes).abs() < 1e-3,
            "{} {}",
            us.selective_bytes,
            fs.selective_bytes
        );
    }
}
