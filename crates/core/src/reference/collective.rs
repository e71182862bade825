//! Collectives and their time: the two-tier ring model of spec §2.4.
//!
//! A collective is `(V, g, kind, τ)`: volume `V` [GB] of the full (unsharded over the group) tensor,
//! group size `g` [devices], its kind and `τ` [devices], how many of the `g` members share one
//! fast (NVLink/NVSwitch) domain.

use super::machine::NetworkTiers;
use crate::vocab::CollectiveKind;

/// One collective a layer pass asks for, before it is priced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommSpec {
    /// The operation.
    pub kind: CollectiveKind,
    /// `V`: volume of the full tensor [GB] (0 when the group is trivial).
    pub volume_gb: f64,
    /// `g`: group size [devices].
    pub group_size: u64,
    /// `τ`: group members inside one fast domain [devices].
    pub fast_share: u64,
}

impl CommSpec {
    /// A collective of `kind` over `(group_size, fast_share)` moving `volume_gb`.
    pub fn new(kind: CollectiveKind, volume_gb: f64, group_size: u64, fast_share: u64) -> CommSpec {
        CommSpec { kind, volume_gb, group_size, fast_share }
    }
}

/// A priced collective, as reported in a layer row.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Collective {
    /// The operation.
    pub kind: CollectiveKind,
    /// `V`: volume of the full tensor [GB].
    pub volume_gb: f64,
    /// `g`: group size [devices].
    pub group_size: u64,
    /// `τ`: group members inside one fast domain [devices].
    pub fast_share: u64,
    /// Time of this collective as the layer's timing rule prices it [s]. For SUMMA layers (§2.5)
    /// this is the time of one panel step, `T_comm(V/nb, …)`.
    pub time_s: f64,
}

/// `T_comm(V, g, kind, τ)` [s], spec §2.4 (cases 1–9).
///
/// `τ ≤ N_vs` and `τ | g` are the caller's preconditions (checked by candidate validation); a
/// `τ = 0` is treated as 1 so that the function is total.
pub fn comm_time(net: &NetworkTiers, kind: CollectiveKind, volume_gb: f64, group_size: u64, fast_share: u64) -> f64 {
    let v = volume_gb;
    // Cases 1 and 3: nothing to move, or nobody to move it to.
    if v.is_nan() || v == 0.0 || group_size <= 1 {
        return 0.0;
    }
    let g = group_size;
    let tau = fast_share.max(1);
    let hops = (g - 1) as f64;
    let (bs, bf) = (net.slow_bandwidth, net.fast_bandwidth);
    let (ls, lf) = (net.slow_latency, net.fast_latency);
    // Case 4: how many fast domains the group spans.
    let nodes = g / tau;
    // Case 5: point-to-point between pipeline stages.
    if kind == CollectiveKind::P2p {
        return if tau == 1 { ls * hops + v / bs } else { lf * hops + v / bf };
    }
    // Case 6: ring factor.
    let c = match kind {
        CollectiveKind::Reduce | CollectiveKind::Broadcast => 1.0,
        _ => hops / g as f64,
    };
    if tau == 1 {
        // Case 7: the whole group on the slow network.
        ls * hops + c * v / bs
    } else if nodes == 1 {
        // Case 8: the whole group inside one domain.
        lf * hops + c * v / bf
    } else {
        // Case 9: the group spans several domains, τ members each; ν·τ rings leave a domain.
        let rings = net.nic_factor * tau as f64;
        let mut t = f64::max(c * v / (rings * bs), c * v / bf);
        // Quirk Q4: only here does an allreduce cost twice a reduce-scatter; cases 7 and 8 price
        // an allreduce like a reduce-scatter.
        if kind == CollectiveKind::AllReduce {
            t *= 2.0;
        }
        t + (ls * (nodes - 1) as f64 + lf * (g - nodes) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H200 with an NVLink domain of 8: bs = 35 GB/s, bf = 315 GB/s, λs = 5 µs, λf = 2.5 µs.
    fn h200() -> NetworkTiers {
        NetworkTiers {
            slow_bandwidth: 50.0 * 0.7,
            fast_bandwidth: 450.0 * 0.7,
            slow_latency: 5e-6,
            fast_latency: 2.5e-6,
            nic_factor: 1.0,
            domain_size: 8,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn cases_1_and_3_are_free() {
        let n = h200();
        assert_eq!(comm_time(&n, CollectiveKind::AllReduce, 0.0, 8, 8), 0.0);
        assert_eq!(comm_time(&n, CollectiveKind::AllReduce, f64::NAN, 8, 8), 0.0);
        assert_eq!(comm_time(&n, CollectiveKind::AllGather, 1.0, 1, 1), 0.0);
    }

    #[test]
    fn case_5_p2p_slow_and_fast() {
        let n = h200();
        assert!(close(comm_time(&n, CollectiveKind::P2p, 0.7, 2, 1), 5e-6 + 0.7 / 35.0));
        assert!(close(comm_time(&n, CollectiveKind::P2p, 0.7, 2, 2), 2.5e-6 + 0.7 / 315.0));
    }

    #[test]
    fn case_6_ring_factor_only_for_ring_collectives() {
        let n = h200();
        // Case 7 with and without the (g−1)/g factor.
        let rs = comm_time(&n, CollectiveKind::ReduceScatter, 1.0, 4, 1);
        let bc = comm_time(&n, CollectiveKind::Broadcast, 1.0, 4, 1);
        let rd = comm_time(&n, CollectiveKind::Reduce, 1.0, 4, 1);
        assert!(close(rs, 3.0 * 5e-6 + 0.75 / 35.0));
        assert!(close(bc, 3.0 * 5e-6 + 1.0 / 35.0));
        assert_eq!(bc, rd);
    }

    #[test]
    fn case_7_all_on_the_slow_network() {
        let n = h200();
        let ag = comm_time(&n, CollectiveKind::AllGather, 3.9325184, 64, 1);
        // §10: the DP all-gather of one block over 64 GPUs on IB.
        assert!((ag - 0.110918).abs() < 2e-6, "{ag}");
        // An allreduce is priced like a reduce-scatter here (Q4).
        assert_eq!(
            comm_time(&n, CollectiveKind::AllReduce, 1.0, 16, 1),
            comm_time(&n, CollectiveKind::ReduceScatter, 1.0, 16, 1)
        );
    }

    #[test]
    fn case_8_inside_one_domain() {
        let n = h200();
        let v = 2048.0 * 25600.0 * 2e-9;
        // §10: the fc1 backward reduce-scatter over tp = nv_tp = 4.
        let t = comm_time(&n, CollectiveKind::ReduceScatter, v, 4, 4);
        assert_eq!(t, 3.0 * 2.5e-6 + 0.75 * v / 315.0);
        assert!((t - 2.57161e-4).abs() < 1e-9);
        assert_eq!(comm_time(&n, CollectiveKind::AllReduce, v, 4, 4), t);
    }

    #[test]
    fn case_9_across_domains() {
        let n = h200();
        // 16 members, 4 per domain → 4 domains; 4 rings of 35 GB/s = 140 GB/s < 315 GB/s.
        let v = 1.0;
        let c = 15.0 / 16.0;
        let lat = 5e-6 * 3.0 + 2.5e-6 * 12.0;
        let rs = comm_time(&n, CollectiveKind::ReduceScatter, v, 16, 4);
        assert!(close(rs, c * v / 140.0 + lat));
        // Allreduce doubles the bandwidth term only (Q4).
        let ar = comm_time(&n, CollectiveKind::AllReduce, v, 16, 4);
        assert!(close(ar, 2.0 * c * v / 140.0 + lat));
        // With 8 NICs per device the fast tier limits: max(c·V/(8·4·35), c·V/315).
        let wide = NetworkTiers { nic_factor: 8.0, ..n };
        assert!(close(comm_time(&wide, CollectiveKind::ReduceScatter, v, 16, 4), c * v / 315.0 + lat));
        // Broadcast: no ring factor, no doubling.
        assert!(close(comm_time(&n, CollectiveKind::Broadcast, v, 16, 4), v / 140.0 + lat));
    }
}
