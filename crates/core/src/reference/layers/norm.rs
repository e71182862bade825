//! Layer normalisation: `LayerNorm` (spec §3.7, 1D and context parallel, sequence-parallel
//! collectives) and `LayerNorm2D` (§3.8, SUMMA, row-statistics allreduce).

use super::{CommList, Int, Layer, LayerCounts, fl, gated, int};
use crate::reference::collective::CommSpec;
use crate::reference::machine::Units;
use crate::reference::timing::TimingRule;
use crate::vocab::CollectiveKind;

/// LayerNorm over `(b, ⌊L/m⌋, e)`: the sequence is split over the tensor-parallel group (sequence
/// parallelism), the width is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerNorm {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length handed in `L` [tokens] (`l`, or `⌊l/m2⌋` under context parallelism).
    pub l: u64,
    /// Width `e`.
    pub e: u64,
    /// Sequence split [devices].
    pub m: u64,
    /// Fast-domain share of the split group [devices].
    pub tau: u64,
}

/// LayerNorm on the SUMMA grid: rows `⌊l/m2⌋`, width as coded `⌊l/m1⌋` (quirk Q1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerNorm2D {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length [tokens].
    pub l: u64,
    /// Width `e` (only the backward allreduce volume reads it, quirk Q1).
    pub e: u64,
    /// Grid dimension over tokens [devices].
    pub m2: u64,
    /// Grid dimension over features [devices].
    pub m1: u64,
    /// Fast-domain share along `m2` [devices].
    pub tau2: u64,
    /// Fast-domain share along `m1` [devices].
    pub tau1: u64,
}

/// Counts of a LayerNorm on `rows` rows (`b·L'`) of local `width`, without collectives.
fn norm_counts(rows: Int, width: Int, units: &Units) -> LayerCounts {
    let (es, u) = (units.element_gb, units.flop);
    let x = rows * width;
    // Mean, variance, normalise, scale and shift (≈ 9 FLOPs per element, quirk Q11).
    let mut flops_fwd = fl(2 * x) * u;
    flops_fwd += fl(2 * x) * u + fl(x) * u;
    flops_fwd += fl(x) * u + fl(x) * u;
    flops_fwd += fl(x) * u + fl(x) * u;
    let activations = fl(x) * es;
    let weights = fl(2 * width) * es;
    let mem_fwd = (fl(x) * es + fl(2 * rows) * es) + fl(x) * es + weights;
    let mut flops_bwd = fl(x) * u + fl(2 * x) * u;
    flops_bwd += fl(5 * x) * u + fl(4 * rows * (width - 1)) * u;
    let mem_bwd = fl(4 * x) * es + weights + activations;
    LayerCounts {
        weights_gb: weights,
        weight_grads_gb: weights,
        activations_gb: activations,
        flops_fwd_tflop: flops_fwd,
        flops_bwd_tflop: flops_bwd,
        mem_fwd_gb: mem_fwd,
        mem_bwd_gb: mem_bwd,
        tensor_cores: false,
        comm_fwd: CommList::none(),
        comm_bwd: CommList::none(),
        timing: TimingRule::Standard,
    }
}

impl Layer for LayerNorm {
    fn counts(&self, units: &Units) -> LayerCounts {
        let rows = int(self.b) * int(self.l / self.m);
        let mut c = norm_counts(rows, int(self.e), units);
        // Sequence parallelism: gather the full sequence before the next matmul, scatter its gradient.
        let v = gated(self.m > 1, fl(int(self.b) * int(self.l) * int(self.e)) * units.element_gb);
        c.comm_fwd = CommList::of(&[CommSpec::new(CollectiveKind::AllGather, v, self.m, self.tau)]);
        c.comm_bwd = CommList::of(&[CommSpec::new(CollectiveKind::ReduceScatter, v, self.m, self.tau)]);
        c
    }
}

impl Layer for LayerNorm2D {
    fn counts(&self, units: &Units) -> LayerCounts {
        let es = units.element_gb;
        let (b, l) = (int(self.b), int(self.l));
        let rows_loc = l / int(self.m2);
        // Quirk Q1: the local width is ⌊l/m1⌋ (sequence length where the embedding width is meant).
        let width_loc = l / int(self.m1);
        let mut c = norm_counts(b * rows_loc, width_loc, units);
        let parallel = self.m1 > 1;
        let fwd = gated(parallel, fl(2 * b * rows_loc) * es);
        let bwd = gated(parallel, fl(2 * int(self.e) / int(self.m1) + 2 * b * l / int(self.m2)) * es);
        c.comm_fwd = CommList::of(&[CommSpec::new(CollectiveKind::AllReduce, fwd, self.m1, self.tau1)]);
        c.comm_bwd = CommList::of(&[CommSpec::new(CollectiveKind::AllReduce, bwd, self.m1, self.tau1)]);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_nine_and_twelve_flops_per_element() {
        let units = Units { element_gb: 2e-9, mask_element_gb: 1e-9, flop: 1e-12, tensor_core_factor: 4.0 };
        let c = LayerNorm { b: 1, l: 2048, e: 1024, m: 4, tau: 4 }.counts(&units);
        let x = 512.0 * 1024.0;
        assert!((c.flops_fwd_tflop / (x * 1e-12) - 9.0).abs() < 1e-9);
        assert!((c.flops_bwd_tflop / (x * 1e-12) - 12.0).abs() < 1e-2);
        assert_eq!(c.comm_fwd.as_slice()[0].kind, CollectiveKind::AllGather);
        // quirk Q1 seen from outside: the 2D variant's width follows l, not e.
        let d = LayerNorm2D { b: 1, l: 2048, e: 1024, m2: 2, m1: 4, tau2: 1, tau1: 4 }.counts(&units);
        assert_eq!(d.weights_gb, (2.0 * 512.0) * 2e-9);
    }
}
