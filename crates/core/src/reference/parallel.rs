//! The data-parallel and pipeline-parallel pseudo-layers of spec §5.

use super::collective::comm_time;
use super::machine::NetworkTiers;
use crate::vocab::CollectiveKind;

/// Data parallelism (§5.1): a per-block all-gather of weights in the forward and reduce-scatter of
/// gradients in the backward, overlapped with the compute of the other local blocks.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct DpStats {
    /// Group size `g` [devices]: `dp`, or `dp·tp2` under context parallelism.
    pub group: u64,
    /// Fast-domain share `τ` [devices]: `nv_dp`, or `nv_dp·nv_tp2` under context parallelism.
    pub fast_share: u64,
    /// `W1`: weights of one block on this device, the volume of both collectives [GB].
    pub volume_gb: f64,
    /// `c_f`: one block's parameter all-gather [s].
    pub allgather_s: f64,
    /// `c_b`: one block's gradient reduce-scatter [s].
    pub reducescatter_s: f64,
    /// Exposed forward time `c_f + max(c_f − Tf1, 0)·(L − 1)` [s per iteration].
    pub t_fwd_s: f64,
    /// Exposed backward time `c_b + max(c_b − Tb1, 0)·(L − 1)` [s per iteration].
    pub t_bwd_s: f64,
    /// `t_dp = t_fwd_s + t_bwd_s` [s per iteration].
    pub t_s: f64,
}

/// Prices data parallelism for one iteration: block weights `w1` [GB], one block's forward and
/// backward time for one micro-batch `tf1`, `tb1` [s], `blocks` = `L` local blocks.
pub fn data_parallel(
    net: &NetworkTiers,
    w1: f64,
    tf1: f64,
    tb1: f64,
    blocks: u64,
    group: u64,
    fast_share: u64,
) -> DpStats {
    let c_f = comm_time(net, CollectiveKind::AllGather, w1, group, fast_share);
    let c_b = comm_time(net, CollectiveKind::ReduceScatter, w1, group, fast_share);
    let rest = blocks.saturating_sub(1) as f64;
    let t_fwd = c_f + f64::max(c_f - tf1, 0.0) * rest;
    let t_bwd = c_b + f64::max(c_b - tb1, 0.0) * rest;
    DpStats {
        group,
        fast_share,
        volume_gb: w1,
        allgather_s: c_f,
        reducescatter_s: c_b,
        t_fwd_s: t_fwd,
        t_bwd_s: t_bwd,
        t_s: t_fwd + t_bwd,
    }
}

/// Pipeline parallelism (§5.2): one activation message per micro-batch and direction between
/// neighbouring stages, not overlapped.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct PpStats {
    /// `V_pp`: the message, the `ln1` activation buffer [GB].
    pub volume_gb: f64,
    /// Fast-domain share `nv_pp` [devices].
    pub fast_share: u64,
    /// `t_p2p`: average time of one message over the `pp − 1` links [s].
    pub t_p2p_s: f64,
    /// Forward messages of one iteration `t_p2p·nmb` [s].
    pub t_fwd_s: f64,
    /// Backward messages of one iteration `t_p2p·nmb` [s].
    pub t_bwd_s: f64,
    /// `t_pp = t_fwd_s + t_bwd_s` [s per iteration].
    pub t_s: f64,
}

/// Prices pipeline parallelism with `pp` stages, `fast_share = nv_pp`, `microbatches = nmb`.
pub fn pipeline_parallel(net: &NetworkTiers, v_pp: f64, pp: u64, fast_share: u64, microbatches: u64) -> PpStats {
    let t_p2p = if pp <= 1 {
        0.0
    } else if fast_share <= 1 {
        comm_time(net, CollectiveKind::P2p, v_pp, 2, 1)
    } else {
        let total = pp - 1;
        let slow = (pp as f64 / fast_share as f64 - 1.0) as u64;
        let fast = total.saturating_sub(slow);
        // Quirk Q3: the slow links are priced with a group of one, which costs nothing; a partly
        // fast pipeline pays only its fast share of λf + V/bf.
        let slow_link = comm_time(net, CollectiveKind::P2p, v_pp, 1, 1);
        fast as f64 / total as f64 * comm_time(net, CollectiveKind::P2p, v_pp, 2, fast_share)
            + slow as f64 / total as f64 * slow_link
    };
    let one_way = t_p2p * microbatches as f64;
    PpStats { volume_gb: v_pp, fast_share, t_p2p_s: t_p2p, t_fwd_s: one_way, t_bwd_s: one_way, t_s: one_way + one_way }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> NetworkTiers {
        NetworkTiers {
            slow_bandwidth: 35.0,
            fast_bandwidth: 315.0,
            slow_latency: 5e-6,
            fast_latency: 2.5e-6,
            nic_factor: 1.0,
            domain_size: 4,
        }
    }

    #[test]
    fn worked_example_dp_and_pp() {
        // §10: W1 = 3.93252 GB over 64 GPUs on IB, Tf1 = 0.0116906 s, L = 16.
        let dp = data_parallel(&h200(), 3.9325184, 0.0116906, 0.03, 16, 64, 1);
        assert!((dp.allgather_s - 0.110918).abs() < 1e-6);
        assert!((dp.t_fwd_s - 1.59931).abs() < 1e-5, "{}", dp.t_fwd_s);
        // V_pp = 2048/4·25600·2e-9 GB, 64 micro-batches.
        let pp = pipeline_parallel(&h200(), 0.0262144, 8, 1, 64);
        assert!((pp.t_p2p_s / 7.5397e-4 - 1.0).abs() < 1e-4);
        assert!((pp.t_s - 0.096510).abs() < 1e-6);
    }

    #[test]
    fn partly_fast_pipeline_is_cheaper_than_all_fast() {
        // quirk Q3 in action: pp = 8, nv_pp = 2 prices 4 of 7 links and the others are free.
        let partly = pipeline_parallel(&h200(), 0.5, 8, 2, 1);
        let all = pipeline_parallel(&h200(), 0.5, 8, 8, 1);
        assert!(partly.t_p2p_s < all.t_p2p_s);
        assert_eq!(pipeline_parallel(&h200(), 0.5, 1, 1, 4).t_s, 0.0);
    }
}
