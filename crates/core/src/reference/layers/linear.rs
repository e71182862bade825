//! 1D tensor-parallel matmuls: `Linear` (spec §3.1) and `LinearSeqp` (§3.2), the same matmul on a
//! sequence shard (context parallelism).

use super::{CommList, Layer, LayerCounts, fl, gated, int};
use crate::reference::collective::CommSpec;
use crate::reference::machine::Units;
use crate::reference::timing::TimingRule;
use crate::vocab::CollectiveKind;

/// `Y(b, l, N) = X(b, l, K) · W(K, N)`, 1D-split over `m_out` (column-parallel: output features)
/// or `m_in` (row-parallel: input features). No bias inside (the reference never sets one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Linear {
    /// Micro-batch size [samples].
    pub b: u64,
    /// Sequence length [tokens].
    pub l: u64,
    /// Input features `K`.
    pub k: u64,
    /// Output features `N`.
    pub n: u64,
    /// Split of `K` (row-parallel degree) [devices].
    pub m_in: u64,
    /// Split of `N` (column-parallel degree) [devices].
    pub m_out: u64,
    /// Fast-domain share of the `m_in` group [devices].
    pub tau_in: u64,
    /// Fast-domain share of the `m_out` group [devices].
    pub tau_out: u64,
}

/// `Linear` on a sequence shard `l' = ⌊l/m_seq⌋`: identical counts with `l'` in place of `l`,
/// including the collective volumes; no collective over the sequence group (its weight-gradient
/// reduction is folded into data parallelism, §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinearSeqp {
    /// The matmul with the full sequence length.
    pub linear: Linear,
    /// Sequence split [devices].
    pub m_seq: u64,
    /// Fast-domain share of the sequence group [devices] (unused by the reference).
    pub tau_seq: u64,
}

impl Layer for Linear {
    fn counts(&self, units: &Units) -> LayerCounts {
        linear_1d(self, self.l, units)
    }
}

impl Layer for LinearSeqp {
    fn counts(&self, units: &Units) -> LayerCounts {
        linear_1d(&self.linear, self.linear.l / self.m_seq, units)
    }
}

/// The counts of §3.1 with sequence length `l` (full or sharded).
fn linear_1d(x: &Linear, l: u64, units: &Units) -> LayerCounts {
    let (es, u) = (units.element_gb, units.flop);
    let (b, l, k, n) = (int(x.b), int(l), int(x.k), int(x.n));
    let n_loc = n / int(x.m_out);
    let k_loc = k / int(x.m_in);
    let bl = b * l;

    let flops_fwd = fl(bl * n_loc) * (fl(k_loc) * u + fl(k_loc - 1) * u);
    let act_in = fl(bl * k_loc) * es;
    let act_out = fl(bl * n_loc) * es;
    let activations = fl(bl * k_loc) * es;
    let weights = fl(k_loc * n_loc) * es;
    let mem_fwd = act_in + act_out + weights;

    let xgrad = fl(bl * k_loc) * (fl(n_loc) * u + fl(n_loc - 1) * u);
    let wgrad = fl(k_loc * n_loc) * (fl(bl) * u + fl(bl - 1) * u);
    let weight_grads = fl(k_loc * n_loc) * es;
    let mem_bwd = weight_grads + fl(bl * k_loc) * es + 2.0 * (fl(bl * n_loc) * es) + weights + activations;

    let fwd = CommSpec::new(CollectiveKind::ReduceScatter, gated(x.m_in > 1, fl(bl * n) * es), x.m_in, x.tau_in);
    let bwd = CommSpec::new(CollectiveKind::ReduceScatter, gated(x.m_out > 1, fl(bl * k) * es), x.m_out, x.tau_out);
    LayerCounts {
        weights_gb: weights,
        weight_grads_gb: weight_grads,
        activations_gb: activations,
        flops_fwd_tflop: flops_fwd,
        flops_bwd_tflop: xgrad + wgrad,
        mem_fwd_gb: mem_fwd,
        mem_bwd_gb: mem_bwd,
        tensor_cores: true,
        comm_fwd: CommList::of(&[fwd]),
        comm_bwd: CommList::of(&[bwd]),
        timing: TimingRule::Standard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units() -> Units {
        Units { element_gb: 2e-9, mask_element_gb: 1e-9, flop: 1e-12, tensor_core_factor: 4.0 }
    }

    #[test]
    fn column_parallel_fc1_of_the_worked_example() {
        // §10: gpt3_1T fc1 with tp = 4: N' = 25600, F_f = 2.68430 TFLOP, M_f = 1.52044 GB.
        let fc1 = Linear { b: 1, l: 2048, k: 25600, n: 102400, m_in: 1, m_out: 4, tau_in: 1, tau_out: 4 };
        let c = fc1.counts(&units());
        assert!((c.flops_fwd_tflop - 2.68430).abs() < 1e-5);
        assert!((c.mem_fwd_gb - 1.52044).abs() < 1e-5);
        assert_eq!(c.comm_fwd.as_slice()[0].volume_gb, 0.0);
        let bwd = c.comm_bwd.as_slice()[0];
        assert_eq!((bwd.group_size, bwd.fast_share), (4, 4));
        assert!((bwd.volume_gb - 0.104858).abs() < 1e-6);
    }

    #[test]
    fn sequence_shard_scales_activation_terms() {
        let lin = Linear { b: 2, l: 1024, k: 512, n: 256, m_in: 2, m_out: 1, tau_in: 2, tau_out: 1 };
        let full = lin.counts(&units());
        let shard = LinearSeqp { linear: lin, m_seq: 4, tau_seq: 1 }.counts(&units());
        assert_eq!(shard.weights_gb, full.weights_gb);
        assert!((shard.activations_gb * 4.0 - full.activations_gb).abs() < 1e-18);
        assert!((shard.comm_fwd.as_slice()[0].volume_gb * 4.0 - full.comm_fwd.as_slice()[0].volume_gb).abs() < 1e-18);
    }
}
