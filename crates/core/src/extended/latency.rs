//! The latency of a collective as NCCL itself models it: a fixed cost per call plus a cost per
//! step of its algorithm, by the tier the step crosses, for each of NCCL's three protocols — and
//! the choice NCCL makes between ring and tree (all-reduce) and between protocols (the one with the
//! least modelled time). What extended mode adds to the bandwidth term of the reference's two-tier
//! ring ([`crate::reference::collective::comm_time`] with its per-hop latencies set to zero) in
//! [`super::pricing::Pricing::collective`] and [`super::pricing::Pricing::p2p`].
//!
//! **Source** (every constant below): NCCL's tuner, `src/graph/tuning.cc` of NVIDIA/nccl at commit
//! 01afd20a77b5804e0ecf1042509dd9d20ebf9e93 (NCCL 2.7–2.8): `baseLat` (per call) and `hwLat` (per
//! step, by link type NVLink / PCI / NET) for the LL, LL128 and Simple protocols, in µs. These are
//! NCCL's own constants, the figures by which it picks an algorithm for every call, not a fit of
//! fmperf. The same file gives the step counts:
//! * ring: `nsteps = 2(n − 1)` for an all-reduce, `n − 1` for a reduce-scatter or all-gather, of
//!   which `2(nodes − 1)` (all-reduce) or `nodes − 1` cross the network, the rest the scale-up
//!   link: latency = `baseLat + (nsteps − nInter)·intraLat + nInter·interLat` — linear in `n`;
//! * tree (all-reduce only): `baseLat + 2·((n/nodes − 1)·intraLat + log2(nodes)·interLat)` —
//!   logarithmic in the nodes, which is why NCCL runs all-reduces of many nodes on trees.
//!
//! Protocol efficiency (the share of the link's bandwidth that carries data): LL sends 4 bytes of
//! data with each 4-byte flag in one 8-byte store (1/2); LL128 sends 120 bytes of data per 128-byte
//! line (15/16); Simple sends data alone (1). NCCL's design as documented in its source
//! (`src/device/prims_ll.h`, `prims_ll128.h`: `NCCL_LL128_DATAELEMS = 15` of 16 elements per
//! line) and by Hu et al. 2025, "Demystifying NCCL" (arXiv:2507.04786), §4.
//!
//! A step crossing the fast (scale-up) domain is priced at NCCL's NVLink figure; a part whose
//! domain is a torus of chips (TPU ICI, Trainium) is not run by NCCL and keeps the reference's
//! per-hop latencies ([`super::pricing::Pricing::collective`]).

use crate::vocab::CollectiveKind;

/// One NCCL protocol: its per-call and per-step latencies [µs] and its data efficiency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Protocol {
    /// Name as NCCL spells it.
    pub name: &'static str,
    /// `baseLat` of the ring algorithm [µs].
    pub ring_base_us: f64,
    /// `baseLat` of the tree algorithm [µs].
    pub tree_base_us: f64,
    /// `hwLat` of a ring step over NVLink (the scale-up domain) [µs].
    pub ring_intra_us: f64,
    /// `hwLat` of a ring step over the network [µs].
    pub ring_inter_us: f64,
    /// `hwLat` of a tree step over NVLink [µs].
    pub tree_intra_us: f64,
    /// `hwLat` of a tree step over the network [µs].
    pub tree_inter_us: f64,
    /// Share of the link bandwidth that carries data [fraction].
    pub efficiency: f64,
}

/// NCCL's three protocols (module documentation for the source of every figure).
pub const PROTOCOLS: [Protocol; 3] = [
    Protocol {
        name: "LL",
        ring_base_us: 3.6,
        tree_base_us: 4.4,
        ring_intra_us: 0.47,
        ring_inter_us: 2.7,
        tree_intra_us: 0.52,
        tree_inter_us: 5.0,
        efficiency: 0.5,
    },
    Protocol {
        name: "LL128",
        ring_base_us: 10.0,
        tree_base_us: 4.4,
        ring_intra_us: 1.9,
        ring_inter_us: 4.0,
        tree_intra_us: 1.2,
        tree_inter_us: 8.5,
        efficiency: 15.0 / 16.0,
    },
    Protocol {
        name: "Simple",
        ring_base_us: 8.4,
        tree_base_us: 0.0,
        ring_intra_us: 3.4,
        ring_inter_us: 9.6,
        tree_intra_us: 28.0,
        tree_inter_us: 50.0,
        efficiency: 1.0,
    },
];

/// Where a group sits: `n` ranks over `nodes` scale-up domains (`n/nodes` in each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Ranks in the group.
    pub ranks: u64,
    /// Scale-up domains the group spans.
    pub nodes: u64,
}

impl Span {
    /// A group of `group` devices, `fast_share` of them in each domain (0 is read as 1).
    pub fn of(group: u64, fast_share: u64) -> Span {
        let share = fast_share.clamp(1, group.max(1));
        Span { ranks: group, nodes: (group / share).max(1) }
    }
}

/// Ring latency of `kind` over `span` with protocol `p` [s] (module documentation). Point-to-point
/// is one step; a broadcast (NCCL's ring: the data passes each rank once), all-to-all and the rest
/// are `n − 1` steps like a reduce-scatter, `nodes − 1` of them over the network.
pub fn ring_latency_s(kind: CollectiveKind, span: Span, p: &Protocol) -> f64 {
    let (n, nodes) = (span.ranks as f64, span.nodes as f64);
    if span.ranks <= 1 {
        return 0.0;
    }
    let (steps, inter) = match kind {
        CollectiveKind::AllReduce => (2.0 * (n - 1.0), 2.0 * (nodes - 1.0)),
        CollectiveKind::P2p => (1.0, if span.nodes > 1 { 1.0 } else { 0.0 }),
        _ => (n - 1.0, nodes - 1.0),
    };
    (p.ring_base_us + (steps - inter) * p.ring_intra_us + inter * p.ring_inter_us) * 1e-6
}

/// Tree all-reduce latency over `span` with protocol `p` [s] (module documentation).
pub fn tree_latency_s(span: Span, p: &Protocol) -> f64 {
    if span.ranks <= 1 {
        return 0.0;
    }
    let per_node = (span.ranks / span.nodes.max(1)) as f64;
    let levels = (span.nodes as f64).log2();
    (p.tree_base_us + 2.0 * ((per_node - 1.0) * p.tree_intra_us + levels * p.tree_inter_us)) * 1e-6
}

/// The least latency NCCL's algorithms reach for `kind` over `span` with protocol `p` [s]: the
/// ring's, or for an all-reduce the lesser of ring and tree.
pub fn latency_s(kind: CollectiveKind, span: Span, p: &Protocol) -> f64 {
    let ring = ring_latency_s(kind, span, p);
    if kind == CollectiveKind::AllReduce { ring.min(tree_latency_s(span, p)) } else { ring }
}

/// The time of a collective whose bandwidth term is `bandwidth_s` [s] (its data over the links at
/// full rate): the least over the protocols of latency + `bandwidth_s / efficiency`, as NCCL
/// picks the protocol with the least modelled time.
pub fn collective_s(kind: CollectiveKind, span: Span, bandwidth_s: f64) -> f64 {
    collective_on_fabric_s(kind, span, bandwidth_s, None)
}

/// [`collective_s`] on a fabric that states its latency per network step `net_step_s` [s]
/// ([`crate::catalog::Fabric::step_latency_s`]): that figure replaces NCCL's network `hwLat` of
/// ring and tree steps for every protocol (the per-call `baseLat` and the NVLink steps stay
/// NCCL's). `None`: NCCL's table as it is.
pub fn collective_on_fabric_s(kind: CollectiveKind, span: Span, bandwidth_s: f64, net_step_s: Option<f64>) -> f64 {
    if span.ranks <= 1 {
        return 0.0;
    }
    let on_fabric = |p: &Protocol| match net_step_s {
        Some(s) => Protocol { ring_inter_us: s * 1e6, tree_inter_us: s * 1e6, ..*p },
        None => *p,
    };
    PROTOCOLS
        .iter()
        .map(|p| {
            let p = on_fabric(p);
            latency_s(kind, span, &p) + bandwidth_s / p.efficiency
        })
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
    }

    #[test]
    fn ring_and_tree_latencies_by_hand() {
        let simple = &PROTOCOLS[2];
        // 1024 ranks in 128 nodes of 8, Simple. Ring reduce-scatter: 8.4 + (1023 − 127)·3.4 +
        // 127·9.6 µs; ring all-reduce: 8.4 + (2046 − 254)·3.4 + 254·9.6 µs.
        let big = Span::of(1024, 8);
        assert_eq!(big, Span { ranks: 1024, nodes: 128 });
        let rs = ring_latency_s(CollectiveKind::ReduceScatter, big, simple);
        assert!(close(rs, (8.4 + 896.0 * 3.4 + 127.0 * 9.6) * 1e-6), "{rs}");
        let ar = ring_latency_s(CollectiveKind::AllReduce, big, simple);
        assert!(close(ar, (8.4 + 1792.0 * 3.4 + 254.0 * 9.6) * 1e-6), "{ar}");
        // Tree: 0 + 2·(7·28 + log2(128)·50) µs = 1092 µs, far below the ring's 8.5 ms.
        let tree = tree_latency_s(big, simple);
        assert!(close(tree, 1092e-6), "{tree}");
        assert_eq!(latency_s(CollectiveKind::AllReduce, big, simple), tree);
        // Doubling the nodes adds a step to the tree (2·50 µs) and 1024 to the ring.
        let bigger = tree_latency_s(Span::of(2048, 8), simple);
        assert!(close(bigger - tree, 100e-6));
        // Inside one node of 8 with LL: ring all-gather 3.6 + 7·0.47 µs.
        let ll = &PROTOCOLS[0];
        assert!(close(ring_latency_s(CollectiveKind::AllGather, Span::of(8, 8), ll), (3.6 + 7.0 * 0.47) * 1e-6));
        // A point-to-point message is one step, over the network between domains.
        assert!(close(ring_latency_s(CollectiveKind::P2p, Span::of(2, 1), simple), (8.4 + 9.6) * 1e-6));
        assert_eq!(ring_latency_s(CollectiveKind::AllGather, Span::of(1, 1), simple), 0.0);
    }

    #[test]
    fn a_fabric_latency_replaces_the_network_steps() {
        // 2 nodes of 8 (16 ranks) on a fabric of 20 µs per network step, a bandwidth term of 0:
        // ring all-reduce LL: 3.6 + (30 − 2)·0.47 + 2·20 = 56.76 µs; tree LL: 4.4 + 2·(7·0.52 +
        // 1·20) = 51.68 µs; LL128 and Simple are slower (tree Simple 0 + 2·(7·28 + 20) = 432 µs).
        let span = Span::of(16, 8);
        let t = collective_on_fabric_s(CollectiveKind::AllReduce, span, 0.0, Some(20e-6));
        assert!(close(t, 51.68e-6), "{t}");
        // NCCL's own table: tree LL 4.4 + 2·(7·0.52 + 5.0) = 21.68 µs.
        assert!(close(collective_s(CollectiveKind::AllReduce, span, 0.0), 21.68e-6));
        assert_eq!(
            collective_on_fabric_s(CollectiveKind::AllReduce, span, 1e-3, None),
            collective_s(CollectiveKind::AllReduce, span, 1e-3)
        );
    }

    #[test]
    fn the_data_file_holds_the_same_figures() {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../data/system-modelling.json")).expect("valid JSON");
        let list = doc["collective_latency"]["protocols"].as_array().expect("a list of protocols");
        assert_eq!(list.len(), PROTOCOLS.len());
        for (j, p) in list.iter().zip(PROTOCOLS.iter()) {
            assert_eq!(j["name"].as_str(), Some(p.name));
            let pairs = [
                ("ring_base_us", p.ring_base_us),
                ("tree_base_us", p.tree_base_us),
                ("ring_nvlink_us", p.ring_intra_us),
                ("ring_net_us", p.ring_inter_us),
                ("tree_nvlink_us", p.tree_intra_us),
                ("tree_net_us", p.tree_inter_us),
                ("efficiency", p.efficiency),
            ];
            for (key, v) in pairs {
                assert_eq!(j[key].as_f64(), Some(v), "{} {key}", p.name);
            }
        }
    }

    #[test]
    fn the_protocol_with_the_least_time_is_chosen() {
        let span = Span::of(8, 8);
        // A tiny message is latency-bound: LL's 3.6 + 14·0.47 µs for an all-reduce (the ring;
        // the tree's 4.4 + 2·7·0.52 is more).
        let tiny = collective_s(CollectiveKind::AllReduce, span, 1e-9);
        assert!(close(tiny, (3.6 + 14.0 * 0.47) * 1e-6 + 2e-9), "{tiny}");
        // A large one is bandwidth-bound: Simple at full efficiency, plus its ring latency.
        let big = collective_s(CollectiveKind::AllReduce, span, 0.1);
        assert!(close(big, 0.1 + (8.4 + 14.0 * 3.4) * 1e-6), "{big}");
        assert_eq!(collective_s(CollectiveKind::AllReduce, Span::of(1, 1), 0.1), 0.0);
    }
}
