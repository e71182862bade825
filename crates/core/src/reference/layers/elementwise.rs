//! Element-wise layers: `Bias` (spec §3.4), `Act` (GELU, §3.5) and `DropOut` (§3.6). All run on
//! vector units, hold no collectives and use the standard timing rule.

use super::{CommList, Layer, LayerCounts, fl, int};
use crate::reference::machine::Units;
use crate::reference::timing::TimingRule;

/// Bias add over a `(b, ⌊l/m2⌋, ⌊N/m1⌋)` shard; the bias-gradient reduction is not modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bias {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length handed in [tokens].
    pub l: u64,
    /// Features `N`.
    pub n: u64,
    /// Split of the sequence [devices].
    pub m2: u64,
    /// Split of the features [devices].
    pub m1: u64,
}

/// GELU over `elements` values: 8 FLOPs forward, 13 backward per element (quirk Q11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Act {
    /// Elements on this device [count].
    pub elements: u64,
}

/// Dropout over `elements` values, keeping a 1-byte mask for the backward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropOut {
    /// Elements on this device [count].
    pub elements: u64,
}

/// Counts without collectives on vector units.
fn vector_layer(weights: f64, activations: f64, flops: (f64, f64), mem: (f64, f64)) -> LayerCounts {
    LayerCounts {
        weights_gb: weights,
        weight_grads_gb: weights,
        activations_gb: activations,
        flops_fwd_tflop: flops.0,
        flops_bwd_tflop: flops.1,
        mem_fwd_gb: mem.0,
        mem_bwd_gb: mem.1,
        tensor_cores: false,
        comm_fwd: CommList::none(),
        comm_bwd: CommList::none(),
        timing: TimingRule::Standard,
    }
}

impl Layer for Bias {
    fn counts(&self, units: &Units) -> LayerCounts {
        let (es, u) = (units.element_gb, units.flop);
        let bl = int(self.b) * int(self.l / self.m2);
        let n = int(self.n / self.m1);
        let weights = fl(n) * es;
        // Forward and backward FLOPs round differently: (b·l')·(N'·U) versus (b·l'·N')·U.
        let flops_fwd = fl(bl) * (fl(n) * u);
        let flops_bwd = fl(bl * n) * u;
        let mem = fl(bl * n + n) * es;
        vector_layer(weights, 0.0, (flops_fwd, flops_bwd), (mem, mem))
    }
}

impl Layer for Act {
    fn counts(&self, units: &Units) -> LayerCounts {
        let (es, u) = (units.element_gb, units.flop);
        let m = int(self.elements);
        let act = fl(m) * es;
        let flops = (fl(m) * u * 8.0, fl(m) * u * 13.0);
        vector_layer(0.0, act, flops, (act + fl(m) * es, fl(2 * m) * es + act))
    }
}

impl Layer for DropOut {
    fn counts(&self, units: &Units) -> LayerCounts {
        let (es, ms, u) = (units.element_gb, units.mask_element_gb, units.flop);
        let m = int(self.elements);
        let mask = fl(m) * ms;
        let flops = fl(m) * u;
        let mem_fwd = (fl(m) * es + mask) + fl(m) * es;
        let mem_bwd = fl(2 * m) * es + mask;
        vector_layer(0.0, mask, (flops, flops), (mem_fwd, mem_bwd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_counts() {
        let units = Units { element_gb: 2e-9, mask_element_gb: 1e-9, flop: 1e-12, tensor_core_factor: 4.0 };
        let a = Act { elements: 1000 }.counts(&units);
        assert_eq!(a.flops_fwd_tflop, 1000.0 * 1e-12 * 8.0);
        assert_eq!(a.activations_gb, 1000.0 * 2e-9);
        let d = DropOut { elements: 1000 }.counts(&units);
        assert_eq!(d.activations_gb, 1000.0 * 1e-9);
        let b = Bias { b: 2, l: 10, n: 8, m2: 2, m1: 4 }.counts(&units);
        assert_eq!(b.weights_gb, 2.0 * 2e-9);
        assert_eq!(b.activations_gb, 0.0);
        assert_eq!(b.mem_fwd_gb, (2.0 * 5.0 * 2.0 + 2.0) * 2e-9);
    }
}
