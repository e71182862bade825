//! What every sub-layer of a block shares, as operations ([`super::ops`]): the wrapper around a
//! sub-layer's own operations ([`sublayer`]: its norm, the tensor-parallel collectives at its
//! entry and exit as Megatron-LM runs them, its residual add), and the dense MLP sub-layer inside
//! it ([`mlp_operations`]). The attention sub-layer is in [`super::attention`], multi-head latent
//! attention in [`super::moe::mla`], the mixture-of-experts MLP in [`super::moe::layer`].

use super::layout::Layout;
use super::ops::{
    CollectiveUse, EAGER_NORM_EXTRA_BYTES, ElementwiseTraffic, KeptBytes, OpKind, Operation, Shape, Work,
    eager_activation_extra, elementwise, matmul, saved_input, tp_passes,
};
use super::options::Fusion;
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::vocab::CollectiveKind;

/// Element traffic of a residual add with the preceding projection's bias and dropout fused, per
/// token, in multiples of `h`: read two `h`, write one. The same in eager mode (one `add` kernel;
/// the modelled LLMs train without dropout, and a bias-free projection leaves nothing to fuse).
const RESIDUAL_ELEMENTS_PER_H: f64 = 3.0;

/// The tensor-parallel collective at a sub-layer's entry (before its column-parallel matmul
/// `gemm`) or exit (after its row-parallel matmul `gemm`), as Megatron-LM runs them:
/// * with sequence parallelism: entry all-gather of the sharded norm output (forward), and in the
///   backward the same all-gather again (the input is kept sharded) overlapped with the input
///   gradient's GEMM, then the reduce-scatter of the input gradient overlapped with the weight
///   gradient's GEMM (`LinearWithGradAccumulationAndAsyncCommunication`); exit reduce-scatter
///   (forward) and all-gather of the output gradient (backward), exposed;
/// * without: entry identity forward, all-reduce of the input gradient overlapped with the weight
///   gradient's GEMM backward (exposed in full with [`ExtendedOptions::tp_grad_overlap`] off);
///   exit all-reduce forward, identity backward;
/// * with [`ExtendedOptions::tp_comm_overlap`] every collective also overlaps its GEMM.
///
/// An overlapped collective exposes only the part longer than the GEMM it runs against. `gemm`
/// is that GEMM's operation where the block's list holds it ([`Work::TpCollective`]).
fn tp_collective(
    p: &Pricing,
    layout: &Layout,
    s: &Shape,
    name: &'static str,
    entry: bool,
    (gemm, gemm_op): (&Pass, Option<&Operation>),
) -> Option<Operation> {
    if layout.tp <= 1 {
        return None;
    }
    let v = s.tokens * s.h * s.es * 1e-9;
    let (g, share) = (layout.tp, layout.placement.tp);
    let ag = p.collective(CollectiveKind::AllGather, v, g, share);
    let rs = p.collective(CollectiveKind::ReduceScatter, v, g, share);
    let (fwd, bwd, kind) = tp_passes(p, ag, rs, entry, gemm);
    let mut op = Operation::new(name, OpKind::Collective, fwd, bwd, 0.0);
    if let Some(Work::Matmul { m, k, n }) = gemm_op.map(|o| o.work) {
        op.work = Work::TpCollective { ag, rs, entry, gemm: (m, k, n) };
    }
    op.collective = Some(CollectiveUse { kind, volume_gb: v, group: g, fast_share: share });
    // Operator-level policy: the reduce-scatter's output is saved (its sequence shard), every
    // other TP collective runs again with the recomputed forward.
    Some(if !entry && p.opts.sequence_parallel {
        op.op_policy(s.h * s.tokenwise * s.es, 0.0)
    } else {
        op.op_policy(0.0, 1.0)
    })
}

/// Which sub-layer a norm, its tensor-parallel collectives and its residual add belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sublayer {
    /// The attention sub-layer (its norm's input is the block input, kept under every policy).
    Attention,
    /// The MLP sub-layer (dense or mixture-of-experts).
    Mlp,
}

/// A sub-layer around its `inner` operations: the norm, the entry collective (overlapping
/// `entry_gemm`, the column-parallel matmul after it), the inner operations, the exit collective
/// (overlapping `exit_gemm`, the row-parallel matmul before it), the residual add. Attention (plain
/// or latent), the dense MLP and the mixture-of-experts MLP share it.
pub(crate) fn sublayer(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    which: Sublayer,
    inner: Vec<Operation>,
    entry_gemm: &Pass,
    exit_gemm: &Pass,
) -> Vec<Operation> {
    let s = Shape::of(w, layout, p);
    let input = s.h * s.tokenwise * s.es;
    let (norm, gather, scatter, residual, kept) = match which {
        Sublayer::Attention => (
            "attn_norm",
            "attn_all_gather",
            "attn_reduce_scatter",
            "attn_residual",
            KeptBytes { none: input, selective: input, full: input, op: 0.0 },
        ),
        Sublayer::Mlp => {
            ("mlp_norm", "mlp_all_gather", "mlp_reduce_scatter", "mlp_residual", KeptBytes::recomputable(input))
        }
    };
    // Eager norms keep their FP32 upcast and normalised output too (not under the operator-level
    // policy, which recomputes them, nor full recomputation).
    let kept = if p.opts.fusion == Fusion::Eager {
        let extra = EAGER_NORM_EXTRA_BYTES * s.h * s.tokenwise;
        KeptBytes { none: kept.none + extra, selective: kept.selective + extra, ..kept }
    } else {
        kept
    };
    let mut ops = Vec::with_capacity(inner.len() + 4);
    let norm_elements = ElementwiseTraffic::of(p.opts.fusion).norm;
    // Under the operator-level policy the norm runs again; the attention norm's input is the
    // block input, which checkpointing keeps.
    let block_input = if which == Sublayer::Attention { input } else { 0.0 };
    let norm_op = elementwise(p, norm, norm_elements * input).owning(s.h / s.tp).keeping(kept);
    ops.push(norm_op.op_policy(block_input, 1.0));
    // The GEMMs the collectives overlap, as operations of `inner`: the first weight matmul of the
    // entry's pass, the last of the exit's.
    let is = |o: &&Operation, gemm: &Pass| o.kind == OpKind::Matmul && o.fwd == *gemm;
    let entry_op = inner.iter().find(|o| is(o, entry_gemm)).copied();
    let exit_op = inner.iter().rev().find(|o| is(o, exit_gemm)).copied();
    ops.extend(tp_collective(p, layout, &s, gather, true, (entry_gemm, entry_op.as_ref())));
    ops.extend(inner);
    ops.extend(tp_collective(p, layout, &s, scatter, false, (exit_gemm, exit_op.as_ref())));
    ops.push(elementwise(p, residual, RESIDUAL_ELEMENTS_PER_H * s.h * s.tokenwise * s.es));
    ops
}

/// The dense MLP sub-layer: norm, entry collective, input projection(s) (gate and up when gated),
/// activation, output projection, exit collective, residual add.
pub fn mlp_operations(w: &Workload, layout: &Layout, p: &Pricing) -> Vec<Operation> {
    let o = p.opts;
    let s = Shape::of(w, layout, p);
    let (tokens, tp, h, es) = (s.tokens, s.tp, s.h, s.es);
    let f = w.ffn_hidden as f64;
    let gates = w.mlp_in_matrices(o.model.gated_mlp) as f64;

    let input = h * s.tokenwise * es;
    // Operator-level policy (matmuls numbered in the block: Q, K, V, output = 1–4): the gate /
    // first MLP matmul (5th) is saved; gated, the up projection (6th) is recomputed and the down
    // projection (7th) saved; plain, the output projection (6th) is recomputed.
    let gated = gates > 1.0;
    let mlp_in = matmul(p, "mlp_in_proj", tokens, h, gates * f / tp)
        .keeping(saved_input(p, input))
        .op_policy(f / tp * tokens * es, if gated { 1.0 - 1.0 / gates } else { 0.0 });
    let pre = (gates + eager_activation_extra(o.fusion, gated)) * f / tp * tokens * es;
    let per_element = ElementwiseTraffic::of(o.fusion).activation(gated);
    let activation = elementwise(p, "mlp_activation", per_element * f / tp * tokens * es)
        .keeping(KeptBytes::recomputable(pre))
        .op_policy(0.0, 1.0);
    let act = f / tp * tokens * es;
    let out = matmul(p, "mlp_out_proj", tokens, f / tp, h).keeping(saved_input(p, act));
    let out = if gated { out.op_policy(h * tokens * es, 0.0) } else { out.op_policy(0.0, 1.0) };
    let (entry, exit) = (mlp_in.fwd, out.fwd);
    sublayer(w, layout, p, Sublayer::Mlp, vec![mlp_in, activation, out], &entry, &exit)
}
