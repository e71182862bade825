//! Flash attention: `FusedLA` (spec §3.9, heads split 1D) and `FusedLASeqp` (§3.10, heads split
//! over `m1`, queries over `m2`, keys/values all-gathered over `m2`).
//!
//! Quirk Q6: the softmax and dropout work inside the fused kernel does not run on tensor cores;
//! the reference multiplies those FLOPs by `TCF = R_mat/R_vec` and then prices the whole layer at
//! the tensor-core rate. Quirk Q15: causal attention is priced as full attention.

use super::{CommList, Int, Layer, LayerCounts, fl, gated, int};
use crate::reference::collective::CommSpec;
use crate::reference::machine::Units;
use crate::reference::timing::TimingRule;
use crate::vocab::CollectiveKind;

/// Flash attention with the heads split over `m` (no collectives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FusedLA {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length [tokens].
    pub l: u64,
    /// Head width `q = ⌊e/h⌋`.
    pub q: u64,
    /// Attention heads `h`.
    pub h: u64,
    /// Head split [devices].
    pub m: u64,
    /// Fast-domain share of the head group [devices] (no collective uses it).
    pub tau: u64,
}

/// Flash attention with context parallelism: queries split over `m2`, heads over `m1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FusedLASeqp {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length [tokens].
    pub l: u64,
    /// Head width `q = ⌊e/h⌋`.
    pub q: u64,
    /// Attention heads `h`.
    pub h: u64,
    /// Query (sequence) split [devices].
    pub m2: u64,
    /// Head split [devices].
    pub m1: u64,
    /// Fast-domain share along `m2` [devices].
    pub tau2: u64,
    /// Fast-domain share along `m1` [devices].
    pub tau1: u64,
}

/// Counts of flash attention for `b` samples, `heads` local heads, `lq` local queries attending to
/// `l` keys of width `q` (for `FusedLA`, `lq = l`).
fn flash(b: Int, heads: Int, lq: Int, l: Int, q: Int, units: &Units) -> LayerCounts {
    let (es, u, tcf) = (units.element_gb, units.flop, units.tensor_core_factor);
    let s = b * heads * lq * l; // logits on this device
    let pq = b * heads * lq * q; // local queries / outputs
    let pk = b * heads * l * q; // gathered keys (and values)
    let r = b * heads * lq; // softmax rows
    let s1 = r * (l - 1);
    let dot_q = fl(q) * u + fl(q - 1) * u;
    let dot_l = fl(l) * u + fl(l - 1) * u;
    let dot_lq = fl(lq) * u + fl(lq - 1) * u;

    let logits = fl(s) * dot_q;
    let softmax_fwd = (fl(s) * (u + u) + fl(s1) * u) * tcf;
    let dropout = (fl(s) * u) * tcf;
    let mut flops_fwd = logits;
    flops_fwd += softmax_fwd;
    flops_fwd += dropout;
    flops_fwd += fl(pq) * dot_l;

    // Backward of logits, softmax, dropout and attend, then the recomputed forward.
    let softmax_bwd = (fl(2 * s) * u + fl(s1) * u + fl(s) * u) * tcf;
    let mut flops_bwd = fl(pq) * dot_l;
    flops_bwd += fl(pk) * dot_lq;
    flops_bwd += softmax_bwd;
    flops_bwd += dropout;
    flops_bwd += fl(s) * dot_q;
    flops_bwd += fl(pk) * dot_lq;
    flops_bwd += logits;
    flops_bwd += softmax_fwd;
    flops_bwd += dropout;

    // Q; gathered K, V; softmax statistics; output.
    let mem_fwd = fl(pq) * es + fl(2 * pk) * es + fl(r) * es + fl(pq) * es;
    // Q, K, V; RNG state; softmax statistics; output stored again for the backward (Q19).
    let activations = fl(3 * pq) * es + fl(r) * es + fl(r) * es + fl(pq) * es;
    let mem_bwd = fl(2 * pk) * es + fl(2 * pq) * es + activations;
    LayerCounts {
        weights_gb: 0.0,
        weight_grads_gb: 0.0,
        activations_gb: activations,
        flops_fwd_tflop: flops_fwd,
        flops_bwd_tflop: flops_bwd,
        mem_fwd_gb: mem_fwd,
        mem_bwd_gb: mem_bwd,
        tensor_cores: true,
        comm_fwd: CommList::none(),
        comm_bwd: CommList::none(),
        timing: TimingRule::Standard,
    }
}

impl Layer for FusedLA {
    fn counts(&self, units: &Units) -> LayerCounts {
        let l = int(self.l);
        flash(int(self.b), int(self.h / self.m), l, l, int(self.q), units)
    }
}

impl Layer for FusedLASeqp {
    fn counts(&self, units: &Units) -> LayerCounts {
        let (b, l, q) = (int(self.b), int(self.l), int(self.q));
        let heads = int(self.h / self.m1);
        let mut c = flash(b, heads, l / int(self.m2), l, q, units);
        let kv = gated(self.m2 > 1, fl(2 * b * heads * l * q) * units.element_gb);
        let (m2, t2) = (self.m2, self.tau2);
        c.comm_fwd = CommList::of(&[CommSpec::new(CollectiveKind::AllGather, kv, m2, t2)]);
        c.comm_bwd = CommList::of(&[
            CommSpec::new(CollectiveKind::AllGather, kv, m2, t2),
            CommSpec::new(CollectiveKind::ReduceScatter, kv, m2, t2),
        ]);
        c.timing = TimingRule::Sequential;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seqp_without_split_matches_fused() {
        let units = Units { element_gb: 2e-9, mask_element_gb: 1e-9, flop: 1e-12, tensor_core_factor: 989.4 / 133.8 };
        let a = FusedLA { b: 2, l: 2048, q: 128, h: 96, m: 8, tau: 8 }.counts(&units);
        let s = FusedLASeqp { b: 2, l: 2048, q: 128, h: 96, m2: 1, m1: 8, tau2: 1, tau1: 8 }.counts(&units);
        assert_eq!(a.flops_fwd_tflop, s.flops_fwd_tflop);
        assert_eq!(a.flops_bwd_tflop, s.flops_bwd_tflop);
        assert_eq!(a.mem_fwd_gb, s.mem_fwd_gb);
        assert_eq!(a.mem_bwd_gb, s.mem_bwd_gb);
        assert_eq!(a.activations_gb, s.activations_gb);
        assert!(a.comm_fwd.as_slice().is_empty());
        assert_eq!(s.comm_bwd.as_slice().len(), 2);
        assert_eq!(s.comm_fwd.as_slice()[0].volume_gb, 0.0);
    }
}
