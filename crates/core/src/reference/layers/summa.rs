//! `LinearSumma`: the SUMMA 2D matmul of spec §3.3 on an `m2 × m1` process grid.

use super::{CommList, Layer, LayerCounts, fl, gated, int};
use crate::reference::collective::CommSpec;
use crate::reference::machine::Units;
use crate::reference::timing::TimingRule;
use crate::vocab::CollectiveKind;

/// `Y = X · W` with `m2` splitting the tokens (rows of `X`) and the weight's `K` dimension, `m1`
/// splitting the feature dimensions; `nb` panels are broadcast one after the other (timing §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearSumma {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length [tokens].
    pub l: u64,
    /// Input features `K`.
    pub k: u64,
    /// Output features `N`.
    pub n: u64,
    /// Grid dimension over tokens and `K` [devices].
    pub m2: u64,
    /// Grid dimension over features [devices].
    pub m1: u64,
    /// Fast-domain share along `m2` [devices].
    pub tau2: u64,
    /// Fast-domain share along `m1` [devices].
    pub tau1: u64,
    /// SUMMA panel count `nb` [count].
    pub nb: u64,
}

impl Layer for LinearSumma {
    fn counts(&self, units: &Units) -> LayerCounts {
        let (es, u) = (units.element_gb, units.flop);
        let (b, l, k, n, nb) = (int(self.b), int(self.l), int(self.k), int(self.n), int(self.nb));
        let l_loc = l / int(self.m2);
        let n_loc = n / int(self.m1);
        let k1 = k / int(self.m1);
        let k2 = k / int(self.m2);
        let bl = b * l_loc;
        let (p1, p2) = (self.m1 > 1, self.m2 > 1);

        // Quirk Q11: SUMMA's forward counts K multiplies and K adds per output (summed over panels).
        let flops_fwd = fl(bl * n_loc) * (fl(k) * u + fl(k) * u);
        let activations = fl(bl * k1) * es;
        let weights = fl(k2 * n_loc) * es;
        // b·l'·N'·nb may exceed 2^53; it stays exact until the multiplication by ES (quirk Q17).
        let mem_fwd = fl(bl * k + k * n_loc + bl * n_loc * nb) * es;
        let x_panels = gated(p1, fl(bl * k) * es);
        let w_panels = gated(p2, fl(k * n_loc) * es);

        let xgrad = fl(bl * k) * (fl(n_loc) * u + fl(n_loc - 1) * u);
        let wgrad = fl(k * n_loc) * (fl(bl) * u + fl(bl - 1) * u);
        let mem_bwd = fl(n_loc * k + bl * n_loc * nb + bl * k) * es + fl(k * bl + bl * n_loc * nb + k * n_loc) * es;

        let (m1, m2, t1, t2) = (self.m1, self.m2, self.tau1, self.tau2);
        use CollectiveKind::{Broadcast, Reduce};
        LayerCounts {
            weights_gb: weights,
            weight_grads_gb: weights,
            activations_gb: activations,
            flops_fwd_tflop: flops_fwd,
            flops_bwd_tflop: xgrad + wgrad,
            mem_fwd_gb: mem_fwd,
            mem_bwd_gb: mem_bwd,
            tensor_cores: true,
            comm_fwd: CommList::of(&[
                CommSpec::new(Broadcast, x_panels, m1, t1),
                CommSpec::new(Broadcast, w_panels, m2, t2),
            ]),
            comm_bwd: CommList::of(&[
                CommSpec::new(Broadcast, w_panels, m2, t2), // dX = dY·Wᵀ: weight panels
                CommSpec::new(Reduce, x_panels, m1, t1),    // dX partial results
                CommSpec::new(Broadcast, x_panels, m1, t1), // dW = Xᵀ·dY: activation panels
                CommSpec::new(Reduce, w_panels, m2, t2),    // dW partial results
            ]),
            timing: TimingRule::Summa { nb: self.nb },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_of_one_has_no_volume_and_full_weights() {
        let units = Units { element_gb: 2e-9, mask_element_gb: 1e-9, flop: 1e-12, tensor_core_factor: 4.0 };
        let s = LinearSumma { b: 1, l: 128, k: 64, n: 256, m2: 1, m1: 1, tau2: 1, tau1: 1, nb: 2 };
        let c = s.counts(&units);
        assert_eq!(c.weights_gb, (64.0 * 256.0) * 2e-9);
        assert!(c.comm_fwd.as_slice().iter().chain(c.comm_bwd.as_slice()).all(|x| x.volume_gb == 0.0));
        assert_eq!(c.comm_bwd.as_slice().len(), 4);
    }
}
