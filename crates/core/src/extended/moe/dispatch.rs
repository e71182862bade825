//! Token dispatch and combine of one MoE layer on one device for one micro-batch: the all-to-all
//! (or all-gather, or hierarchical) exchange that sends each token's hidden state to the EP ranks
//! holding its `k` experts and brings the outputs back, priced on the two network tiers by where
//! the EP group sits.
//!
//! All-to-all (Megatron `alltoall`): a rank sends `V = T·k·h·b` bytes, `(e−1)/e` of them to other
//! ranks; the `(e_n−1)/e` share to peers inside the fast domain goes over the scale-up links, the
//! `(e−e_n)/e` share to other domains through the device's own NICs (`ν·b_s`: unlike a ring
//! collective, a personalised exchange gets no help from the domain's other NICs), both at once;
//! the busiest rank moves `γ` times the mean; each peer costs one latency:
//! `t = γ·max(V·(e_n−1)/e ÷ b_f, V·(e−e_n)/e ÷ (ν·b_s)) + λ_f·(e_n−1) + λ_s·(e−e_n)`.
//!
//! Hierarchical (DeepEP, HybridEP; node-limited routing with at most `M` domains per token): a
//! token crosses to each remote destination domain once, `r = min(D, M)·(n−1)/n` times on average
//! with `D = n·(1−(1−1/n)^k)` distinct domains among `n = e/e_n`, then fans out inside the domain:
//! cross bytes `T·h·b·r`, in-domain bytes `T·k·h·b·(e_n−1)/e_n`.
//!
//! All-gather (Megatron `allgather`): dispatch all-gathers every rank's `T·h` of the EP group,
//! combine reduce-scatters them (ring collectives of the two-tier model).
//!
//! Expert tensor parallelism adds an all-gather of the dispatched tokens over the `t_e` ranks
//! before the experts and a reduce-scatter of their outputs after.

use super::experts::ExpertLayout;
use super::options::{Dispatcher, FP8_DISPATCH_BYTES, MoeOptions};
use crate::extended::pricing::Pricing;
use crate::vocab::CollectiveKind;

/// One direction of token exchange (forward pass) of one MoE layer [s].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Exchange {
    /// Dispatch (tokens to experts), including the ETP all-gather [s].
    pub dispatch_s: f64,
    /// Combine (expert outputs back), including the ETP reduce-scatter [s].
    pub combine_s: f64,
}

impl Exchange {
    /// Dispatch plus combine [s].
    pub fn total(&self) -> f64 {
        self.dispatch_s + self.combine_s
    }
}

/// Expected distinct domains among `n` hit by `k` experts placed uniformly: `n·(1−(1−1/n)^k)`.
pub fn distinct_domains(n: u64, k: u64) -> f64 {
    let n_f = n.max(1) as f64;
    n_f * (1.0 - (1.0 - 1.0 / n_f).powf(k as f64))
}

/// Personalised exchange of `bytes` [B] per rank over `el`'s EP group, `γ` for the busiest rank.
fn all_to_all(p: &Pricing, el: &ExpertLayout, bytes: f64, gamma: f64) -> f64 {
    p.all_to_all(bytes, el.ep, el.ep_fast, gamma)
}

/// DeepEP's normal (training) kernels on H800 as DeepEP's README reports them, in the DeepSeek-V3
/// setting (4,096 tokens per batch, hidden 7,168, top-4 groups, top-8 experts, FP8 dispatch, BF16
/// combine): across nodes over RDMA (ConnectX-7, 400 Gb/s = 50 GB/s per GPU) 43/43 GB/s dispatch/
/// combine at EP 16, 58/57 at EP 32, 51/50 at EP 64 [GB/s]; recorded in `data/moe-physics.md`.
pub const DEEPEP_RDMA_GBPS: [f64; 6] = [43.0, 43.0, 58.0, 57.0, 51.0, 50.0];

/// The same inside a node over NVLink: 153 GB/s dispatch, 158 GB/s combine at EP 8 [GB/s].
pub const DEEPEP_NVLINK_GBPS: [f64; 2] = [153.0, 158.0];

/// The H800's per-GPU links those figures were measured on: NIC 50 GB/s, NVLink 200 GB/s per
/// direction (the catalog's `nvidia_h800_sxm5_80gb`) [GB/s].
pub const H800_LINKS_GBPS: (f64, f64) = (50.0, 200.0);

/// The share of each link's line rate DeepEP's kernels achieve: (RDMA, NVLink) = (mean of
/// [`DEEPEP_RDMA_GBPS`] / 50, at most 1; mean of [`DEEPEP_NVLINK_GBPS`] / 200) = (1.0, 0.7775).
pub fn deepep_link_shares() -> (f64, f64) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    ((mean(&DEEPEP_RDMA_GBPS) / H800_LINKS_GBPS.0).min(1.0), (mean(&DEEPEP_NVLINK_GBPS) / H800_LINKS_GBPS.1).min(1.0))
}

/// How much faster than the two-tier model's collectives (which reach the reference's 0.7 of each
/// link, [`crate::catalog::Network::REFERENCE_DEFAULT`]) a hierarchical exchange's kernels move
/// bytes: (across domains, inside a domain) = DeepEP's shares ÷ 0.7 = (1.43, 1.11). The catalog's
/// systems all use the reference's efficiencies, so the modelled bandwidth ÷ 0.7 is the line rate.
pub fn hierarchical_bandwidth_gain() -> (f64, f64) {
    let (rdma, nvlink) = deepep_link_shares();
    let net = crate::catalog::Network::REFERENCE_DEFAULT;
    (rdma / net.scale_out_eff, nvlink / net.scale_up_eff)
}

/// Hierarchical exchange: per rank `tokens·h·b` bytes [B] of unique tokens, `k` copies each, at
/// the bandwidths DeepEP's kernels achieve ([`hierarchical_bandwidth_gain`]).
fn hierarchical(p: &Pricing, el: &ExpertLayout, token_bytes: f64, k: u64, max_domains: Option<u64>, gamma: f64) -> f64 {
    let (n, en) = (el.ep_domains(), el.ep_fast.max(1));
    if el.ep <= 1 || token_bytes <= 0.0 {
        return 0.0;
    }
    let net = &p.hw.net_for(en);
    let d = distinct_domains(n, k);
    let reach = max_domains.map_or(d, |m| d.min(m as f64));
    let remote = reach * (n - 1) as f64 / n as f64;
    let en_f = en as f64;
    let (gain_out, gain_in) = hierarchical_bandwidth_gain();
    let across = token_bytes * remote * 1e-9 / (net.nic_factor * net.slow_bandwidth * gain_out);
    let inside = token_bytes * k as f64 * (en_f - 1.0) / en_f * 1e-9 / (net.fast_bandwidth * gain_in);
    gamma * across.max(inside) + net.fast_latency * (en_f - 1.0) + net.slow_latency * (n - 1) as f64
}

/// The forward exchange of one MoE layer for `tokens` tokens of width `hidden` on this rank, `k`
/// experts each, the busiest rank at `gamma` × the mean (see the module documentation).
pub fn exchange(
    p: &Pricing,
    el: &ExpertLayout,
    opts: &MoeOptions,
    tokens: f64,
    hidden: u64,
    k: u64,
    gamma: f64,
) -> Exchange {
    let es = p.hw.element_bytes;
    let b_d = if opts.fp8_dispatch { FP8_DISPATCH_BYTES } else { es };
    let h = hidden as f64;
    let (dispatch_s, combine_s) = match opts.dispatcher {
        Dispatcher::AllToAll => {
            let v = tokens * k as f64 * h;
            (all_to_all(p, el, v * b_d, gamma), all_to_all(p, el, v * es, gamma))
        }
        Dispatcher::Hierarchical { max_domains } => (
            hierarchical(p, el, tokens * h * b_d, k, max_domains, gamma),
            hierarchical(p, el, tokens * h * es, k, max_domains, gamma),
        ),
        Dispatcher::AllGather => {
            let full = el.ep as f64 * tokens * h * 1e-9;
            (
                p.collective(CollectiveKind::AllGather, full * b_d, el.ep, el.ep_fast),
                p.collective(CollectiveKind::ReduceScatter, full * es, el.ep, el.ep_fast),
            )
        }
    };
    // ETP: the dispatched tokens of the ETP group gathered before the experts, outputs scattered.
    let etp_full = gamma * tokens * k as f64 * h * el.etp as f64 * 1e-9;
    let gather = p.collective(CollectiveKind::AllGather, etp_full * b_d, el.etp, el.etp_fast);
    let scatter = p.collective(CollectiveKind::ReduceScatter, etp_full * es, el.etp, el.etp_fast);
    Exchange { dispatch_s: dispatch_s + gather, combine_s: combine_s + scatter }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;

    fn el(ep: u64, ep_fast: u64) -> ExpertLayout {
        ExpertLayout { ep, etp: 1, edp: 1, ep_fast, etp_fast: 1, edp_fast: 1 }
    }

    /// H200 reference network: b_f = 315 GB/s, b_s = 35 GB/s per NIC, λ_f = 2.5 µs, λ_s = 5 µs.
    fn hw() -> Hardware {
        Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
    }

    #[test]
    fn all_to_all_by_hand() {
        let hw = hw();
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let moe = MoeOptions::default();
        // T = 4096 tokens, k = 8, h = 7168, BF16: V = 4096·8·7168·2 B = 0.469762048 GB.
        let v = 4096.0 * 8.0 * 7168.0 * 2.0 * 1e-9;
        // EP 8 in one domain: 7/8 of V over NVLink, 7 fast latencies.
        let x = exchange(&p, &el(8, 8), &moe, 4096.0, 7168, 8, 1.0);
        let want = v * 7.0 / 8.0 / 315.0 + 7.0 * 2.5e-6;
        assert!((x.dispatch_s - want).abs() < 1e-12, "{} vs {want}", x.dispatch_s);
        assert_eq!(x.dispatch_s, x.combine_s);
        // EP 64 over 8 domains: 56/64 across NICs at 35 GB/s dominate 7/64 inside; γ = 1.2.
        let x = exchange(&p, &el(64, 8), &moe, 4096.0, 7168, 8, 1.2);
        let want = 1.2 * v * 56.0 / 64.0 / 35.0 + 7.0 * 2.5e-6 + 56.0 * 5e-6;
        assert!((x.dispatch_s - want).abs() < 1e-12);
        // FP8 dispatch: 1.03125 B per element instead of 2; the combine stays BF16.
        let fp8 = exchange(&p, &el(64, 8), &MoeOptions { fp8_dispatch: true, ..moe }, 4096.0, 7168, 8, 1.2);
        let want = 1.2 * v / 2.0 * 1.03125 * 56.0 / 64.0 / 35.0 + 7.0 * 2.5e-6 + 56.0 * 5e-6;
        assert!((fp8.dispatch_s - want).abs() < 1e-12);
        assert_eq!(fp8.combine_s, x.combine_s);
        // EP 1: nothing moves.
        assert_eq!(exchange(&p, &el(1, 1), &moe, 4096.0, 7168, 8, 1.0).total(), 0.0);
    }

    #[test]
    fn node_limited_routing_by_hand() {
        let hw = hw();
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        // 8 domains, k = 8: D = 8·(1 − (7/8)^8) = 5.2510…; M = 4 caps it at 4 → r = 4·7/8 = 3.5.
        assert!((distinct_domains(8, 8) - 8.0 * (1.0 - 0.875f64.powi(8))).abs() < 1e-12);
        let moe = MoeOptions { dispatcher: Dispatcher::Hierarchical { max_domains: Some(4) }, ..Default::default() };
        let x = exchange(&p, &el(64, 8), &moe, 4096.0, 7168, 8, 1.0);
        let tok: f64 = 4096.0 * 7168.0 * 2.0 * 1e-9;
        // DeepEP's kernels: RDMA at the NIC's line rate (35 / 0.7 = 50 GB/s), NVLink at 0.7775 of
        // it (315 / 0.7 · 0.7775 = 349.875 GB/s).
        let across = tok * 3.5 / 50.0;
        let inside = tok * 8.0 * 7.0 / 8.0 / (450.0 * 0.7775);
        let want = across.max(inside) + 7.0 * 2.5e-6 + 7.0 * 5e-6;
        assert!((x.dispatch_s - want).abs() < 1e-12, "{} vs {want}", x.dispatch_s);
        // Fewer cross-domain bytes than a flat all-to-all (8 · 56/64 = 7 copies per token).
        let flat = exchange(&p, &el(64, 8), &MoeOptions::default(), 4096.0, 7168, 8, 1.0);
        assert!(x.dispatch_s < 0.55 * flat.dispatch_s);
        // Unlimited hierarchical: D·7/8 = 4.59 copies.
        let free = MoeOptions { dispatcher: Dispatcher::Hierarchical { max_domains: None }, ..Default::default() };
        let y = exchange(&p, &el(64, 8), &free, 4096.0, 7168, 8, 1.0);
        assert!(y.dispatch_s > x.dispatch_s && y.dispatch_s < flat.dispatch_s);
    }

    #[test]
    fn deepep_reaches_line_rate_across_nodes_and_most_of_nvlink() {
        // DeepEP's README (H800): RDMA 43–58 GB/s of a 50 GB/s NIC, mean 50.33 → capped at 1;
        // NVLink 153 and 158 GB/s of 200 → 0.7775.
        let (rdma, nvlink) = deepep_link_shares();
        assert_eq!(rdma, 1.0);
        assert!((nvlink - 0.7775).abs() < 1e-12);
        let (out, inside) = hierarchical_bandwidth_gain();
        assert!((out - 1.0 / 0.7).abs() < 1e-12 && (inside - 0.7775 / 0.7).abs() < 1e-12);
        // On the H800 as the catalog maps it (NIC 35 GB/s, NVLink 140 GB/s modelled), the
        // hierarchical exchange moves 50 GB/s across nodes and 155.5 GB/s inside: DeepEP's figures.
        assert!((35.0 * out - 50.0).abs() < 1e-9 && (140.0 * inside - 155.5).abs() < 1e-9);
    }

    #[test]
    fn all_gather_moves_more_and_etp_adds_collectives() {
        let hw = hw();
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let ag = MoeOptions { dispatcher: Dispatcher::AllGather, ..Default::default() };
        let x = exchange(&p, &el(8, 8), &ag, 4096.0, 7168, 2, 1.0);
        // Ring all-gather of 8 · T·h·2 B inside the domain: 7/8 of it at 315 GB/s + NCCL's Simple
        // ring latency of 7 NVLink steps, 8.4 + 7·3.4 µs (extended::latency).
        let want = 8.0 * 4096.0 * 7168.0 * 2.0 * 1e-9 * 7.0 / 8.0 / 315.0 + (8.4 + 7.0 * 3.4) * 1e-6;
        assert!((x.dispatch_s - want).abs() < 1e-12);
        let etp = ExpertLayout { etp: 2, etp_fast: 2, ..el(8, 4) };
        let a = exchange(&p, &etp, &MoeOptions::default(), 4096.0, 7168, 8, 1.0);
        let b = exchange(&p, &el(8, 4), &MoeOptions::default(), 4096.0, 7168, 8, 1.0);
        assert!(a.dispatch_s > b.dispatch_s && a.combine_s > b.combine_s);
    }
}
