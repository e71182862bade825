//! The flavour of context parallelism (switch `cp_comm`, with `cp_ulysses` for the hybrid): how
//! the `cp` devices sharing one sequence exchange what attention needs.
//!
//! - Ring (default; Liu et al., arXiv:2310.01889; Megatron-Core's `--cp-comm-type p2p`): K/V
//!   chunks passed around the `cp` devices in `cp − 1` steps, overlapped with the blockwise
//!   attention (`cp_ring_overlap`).
//! - Ulysses (Jacobs et al., "DeepSpeed Ulysses", arXiv:2309.14509; Megatron-Core's `a2a`): before
//!   attention an all-to-all over the `u = cp` devices turns each one's `N/u` tokens × all (local)
//!   heads of Q, K and V into all `N` tokens × `1/u` of the heads; attention runs on its heads
//!   over the whole sequence; an all-to-all turns the output back. Forward: four all-to-alls
//!   (Q, K, V, output; the paper's `4Nh/P` per device and layer with multi-head attention);
//!   backward: the mirror four (output gradient in, Q/K/V gradients back). They sit between the
//!   projections and the attention kernel, so they are exposed in full.
//! - Hybrid (USP, Fang & Zhao, arXiv:2405.07719, yunchang's `ulysses_degree × ring_degree`;
//!   Megatron-Core's `a2a+p2p` with `--hierarchical-context-parallel-sizes`): Ulysses over `u`
//!   consecutive ranks (inside the scale-up domain when they fit: the paper's best practice),
//!   a ring of `r = cp / u` over the Ulysses groups; the ring passes K/V chunks of `N/r` tokens ×
//!   `1/u` of the K/V heads — the same bytes per step as a ring of `cp`, `r − 1` steps.
//!
//! Per device all three do the same attention FLOPs (`N/cp` queries × `N` keys × local heads, or
//! `N` × `N` × `1/u` of them); only the kernel's query length differs (`N/r`), which the attention
//! rate's sequence factor sees. The activations kept per device are the same size too: Ulysses
//! keeps Q, K, V and the output head-sharded (`N × H/u`) where the ring keeps them token-sharded
//! (`N/u × H`); the all-to-alls' send/receive buffers are transient. Ulysses' degree must divide
//! the (local) query heads and K/V heads: Ulysses does not split one head (yunchang's README).
//!
//! `cp_comm=search` leaves the flavour to the search: per layout it tries the ring, Ulysses
//! (where `cp` divides the heads per tensor-parallel rank) and each hybrid split `u × cp/u`
//! ([`crate::search::execution::cp_flavours`]), and each ranked row states the one it chose. One
//! layout evaluated on its own needs a flavour: [`check`] refuses `search` where `cp > 1`.
//!
//! The exchanges of one block as operations ([`super::ops`]): [`context_parallel`] and
//! [`context_parallel_over`] (the Ulysses all-to-alls, then the K/V ring or all-gather).

pub use super::choices::CpComm;
use super::layout::Layout;
use super::ops::{CollectiveUse, OpKind, Operation, Work, ring_passes};
use super::options::ExtendedOptions;
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::Error;
use crate::vocab::CollectiveKind;

/// The Ulysses (all-to-all) degree of a context-parallel group of `cp` devices under `opts`:
/// 1 for the ring, `cp` for Ulysses, `cp_ulysses` for the hybrid (1 for a flavour left to the
/// search, which [`check`] refuses where `cp > 1`, and 1 without context parallelism).
pub fn ulysses_degree(cp: u64, opts: &ExtendedOptions) -> u64 {
    if cp <= 1 {
        // No context parallelism: nothing to exchange, whatever the hybrid's degree says (a
        // degree above cp would otherwise make the ring degree cp / u zero).
        return 1;
    }
    match opts.cp_comm {
        CpComm::Ring | CpComm::Search => 1,
        CpComm::Ulysses => cp,
        CpComm::Hybrid => opts.cp_ulysses,
    }
}

/// The ring degree `cp / u` (the number of K/V ring steps plus one).
pub fn ring_degree(cp: u64, opts: &ExtendedOptions) -> u64 {
    cp / ulysses_degree(cp, opts).max(1)
}

/// Checks the flavour against a layout: the Ulysses degree divides `cp`, and the query heads and
/// the K/V heads each tensor-parallel rank holds (Ulysses splits whole heads); a flavour left to
/// the search (`search`) is no flavour to price a layout with `cp > 1`. Errors name
/// `ext.cp_ulysses` (hybrid) or `ext.cp_comm` (Ulysses, search) and the rule; unfused attention
/// (`ext.attention_kernel`) takes no context parallelism.
pub fn check(w: &Workload, layout: &Layout, opts: &ExtendedOptions) -> Result<(), Error> {
    let cp = layout.cp;
    // Ring attention merges per-chunk softmaxes inside a fused kernel; Megatron-Core's own
    // attention refuses it ("Context parallelism is only supported by TEDotProductAttention!",
    // `megatron/core/transformer/dot_product_attention.py` at NVIDIA/Megatron-LM d98e8a6, l. 57–59).
    if cp > 1 && opts.attention_kernel == super::AttentionKernel::Unfused {
        return Err(Error::invalid(
            "ext.attention_kernel",
            "unfused",
            "context parallelism (cp > 1) needs a fused attention kernel: native or fa2",
        ));
    }
    if opts.cp_comm == CpComm::Search && cp > 1 {
        return Err(Error::invalid(
            "ext.cp_comm",
            "search",
            "is a choice the search makes per layout; one layout is priced with ring, ulysses or hybrid",
        ));
    }
    let u = ulysses_degree(cp, opts);
    if u <= 1 || cp <= 1 {
        return Ok(());
    }
    let field = if opts.cp_comm == CpComm::Hybrid { "ext.cp_ulysses" } else { "ext.cp_comm" };
    ulysses_applies(w, layout.tp, cp, u, opts).map_err(|rule| {
        let e = Error::invalid(field, u, rule.to_string());
        if cp.is_multiple_of(u) {
            e.with_hint("Ulysses splits whole heads; use cp_comm=hybrid with a smaller cp_ulysses, or ring")
        } else {
            e
        }
    })
}

/// The rule a Ulysses degree breaks ([`ulysses_applies`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UlyssesRule {
    /// The degree does not divide the CP group of `cp` devices.
    DividesCp {
        /// The CP degree.
        cp: u64,
    },
    /// The degree does not divide the `what` heads per tensor-parallel rank (`heads / tp =
    /// local`, Megatron replicating K/V heads when `tp` exceeds them).
    DividesHeads {
        /// `attention heads` or `K/V heads`.
        what: &'static str,
        /// The model's heads of that kind.
        heads: u64,
        /// The tensor-parallel degree.
        tp: u64,
        /// Heads per tensor-parallel rank.
        local: u64,
    },
}

impl std::fmt::Display for UlyssesRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UlyssesRule::DividesCp { cp } => write!(f, "the Ulysses degree must divide cp = {cp}"),
            UlyssesRule::DividesHeads { what, heads, tp, local } => write!(
                f,
                "the Ulysses degree must divide the {what} per tensor-parallel rank ({heads} / tp {tp} = {local})"
            ),
        }
    }
}

/// Whether Ulysses of degree `u` can run over a CP group of `cp` devices with `tp`-way tensor
/// parallelism: `u` divides `cp` and the query and K/V heads per tensor-parallel rank. `Err`: the
/// rule broken.
pub fn ulysses_applies(w: &Workload, tp: u64, cp: u64, u: u64, opts: &ExtendedOptions) -> Result<(), UlyssesRule> {
    if u == 0 || !cp.is_multiple_of(u) {
        return Err(UlyssesRule::DividesCp { cp });
    }
    let tp = tp.max(1);
    let kv = if opts.model.grouped_query_attention { w.kv_heads } else { w.heads };
    for (what, heads) in [("attention heads", w.heads), ("K/V heads", kv)] {
        // Heads per tensor-parallel rank (Megatron replicates K/V heads when tp exceeds them).
        let local = (heads / tp).max(1);
        if !local.is_multiple_of(u) {
            return Err(UlyssesRule::DividesHeads { what, heads, tp, local });
        }
    }
    Ok(())
}

/// The devices of a group of `group` consecutive ranks in one fast domain, when `share` ranks of
/// the whole CP group are: the group's fast share.
pub(crate) fn fast_share_of(group: u64, share: u64) -> u64 {
    // Both are powers of two or divide each other in the layouts fmperf builds; gcd in general.
    let (mut a, mut b) = (group.max(1), share.max(1));
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The Ulysses all-to-alls of one block's attention (forward, backward) on one device [s],
/// exposed in full: four exchanges per pass over the `u` devices, of the per-device buffers
/// Q (`tokens × q_local`), K, V (`tokens × kv_local` each) and the output (`tokens × q_local`)
/// [elements × element bytes], `tokens = mbs · N / cp`. Zero without a Ulysses degree.
pub fn ulysses_passes(w: &Workload, layout: &Layout, p: &Pricing, q_local: f64, kv_local: f64) -> (Pass, Pass) {
    let u = ulysses_degree(layout.cp, p.opts);
    if u <= 1 || layout.cp <= 1 {
        return (Pass::default(), Pass::default());
    }
    let share = fast_share_of(u, layout.placement.cp);
    let tokens = layout.mbs as f64 * (w.seq_len / layout.cp) as f64;
    let es = p.hw.element_bytes;
    let q = p.all_to_all(tokens * q_local * es, u, share, 1.0);
    let kv = p.all_to_all(tokens * kv_local * es, u, share, 1.0);
    // Forward: Q, K, V in, the output back; backward: the output's gradient in, Q/K/V's back.
    let t = 2.0 * q + 2.0 * kv;
    (Pass { cp_comm_s: t, ..Pass::default() }, Pass { cp_comm_s: t, ..Pass::default() })
}

/// The layout the ring part of the flavour sees: `cp / u` devices, whose fast share is the
/// domains' share of Ulysses groups (the ring is fast only when the whole CP group is).
pub fn ring_layout(layout: &Layout, opts: &ExtendedOptions) -> Layout {
    let u = ulysses_degree(layout.cp, opts);
    if u <= 1 {
        return *layout;
    }
    let mut ring = *layout;
    ring.cp = layout.cp / u;
    ring.placement.cp = (layout.placement.cp / u).max(1);
    ring
}

/// The exposed context-parallel exchanges of one block (forward, backward); none without context
/// parallelism. Under `cp_comm` Ulysses or hybrid, first the all-to-alls over heads
/// (`cp_all_to_all`, [`ulysses_passes`]), then the ring over the rest of the group.
///
/// Ring (default): `cp − 1` steps, each passing this device's K/V chunk (forward) or K/V and their
/// gradients (backward) to the next rank while attending to the chunk at hand; a step exposes only
/// the transfer time beyond one chunk's attention compute. Off: the reference's pricing, an
/// all-gather of K and V (plus a reduce-scatter of their gradients backward) without overlap. A
/// ring crossing fast domains runs at the slow tier.
pub(crate) fn context_parallel(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    widths: (f64, f64),
    att_fwd_s: f64,
    att_bwd_s: f64,
) -> Vec<Operation> {
    context_parallel_over(w, layout, p, widths, (att_fwd_s, att_bwd_s), Work::Opaque)
}

/// [`context_parallel`] for the query and K/V widths per TP rank `(q_local, kv_local)`
/// [channels], overlapping the attention whose compute times are `att_s` (forward, backward) [s]
/// and whose pricing rule is `attention` (a ring overlapping a described [`Work::Attention`] is
/// described too).
pub(crate) fn context_parallel_over(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    (q_local, kv_local): (f64, f64),
    att_s: (f64, f64),
    attention: Work,
) -> Vec<Operation> {
    let u = ulysses_degree(layout.cp, p.opts);
    if u <= 1 {
        return ring_exchange(w, layout, p, kv_local, att_s, attention).into_iter().collect();
    }
    let (fwd, bwd) = ulysses_passes(w, layout, p, q_local, kv_local);
    let mut op = Operation::new("cp_all_to_all", OpKind::Collective, fwd, bwd, 0.0);
    op.work = Work::Fixed;
    // An all-to-all is pairwise messages (the vocabulary has no all-to-all kind): its volume is
    // the per-device Q, K, V and output buffers.
    let volume_gb = layout.mbs as f64
        * (w.seq_len / layout.cp) as f64
        * (2.0 * q_local + 2.0 * kv_local)
        * p.hw.element_bytes
        * 1e-9;
    let fast_share = fast_share_of(u, layout.placement.cp);
    op.collective = Some(CollectiveUse { kind: CollectiveKind::P2p, volume_gb, group: u, fast_share });
    // The ring over the Ulysses groups passes K/V chunks of 1/u of the local K/V heads.
    let mut ops = vec![op];
    ops.extend(ring_exchange(w, &ring_layout(layout, p.opts), p, kv_local / u as f64, att_s, attention));
    ops
}

/// The K/V ring (or, with `cp_ring_overlap` off, the all-gather) of [`context_parallel_over`] over
/// `layout.cp` devices, `None` for one.
fn ring_exchange(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    kv_local: f64,
    (att_fwd_s, att_bwd_s): (f64, f64),
    attention: Work,
) -> Option<Operation> {
    let cp = layout.cp;
    if cp <= 1 {
        return None;
    }
    let es = p.hw.element_bytes;
    let chunk_gb = 2.0 * layout.mbs as f64 * (w.seq_len / cp) as f64 * kv_local * es * 1e-9;
    let share = layout.placement.cp;
    let (fwd, bwd, kind, work) = if p.opts.cp_ring_overlap {
        let fast = share == cp;
        let steps = (cp - 1) as f64;
        let msg = (p.p2p(chunk_gb, fast), p.p2p(2.0 * chunk_gb, fast));
        let (fwd, bwd) = ring_passes(msg, steps, cp as f64, att_fwd_s, att_bwd_s);
        let work = match attention {
            Work::Attention { tflop, bytes, s_q, s_k } => Work::CpRing {
                fwd_msg: msg.0,
                bwd_msg: msg.1,
                steps,
                cp: cp as f64,
                attention: (tflop, bytes, s_q, s_k),
            },
            _ => Work::Opaque,
        };
        (fwd, bwd, CollectiveKind::P2p, work)
    } else {
        let full = chunk_gb * cp as f64;
        let gather = p.collective(CollectiveKind::AllGather, full, cp, share);
        let scatter = p.collective(CollectiveKind::ReduceScatter, full, cp, share);
        let pass = |s: f64| Pass { cp_comm_s: s, ..Pass::default() };
        // The all-gather reads no rate.
        (pass(gather), pass(gather + scatter), CollectiveKind::AllGather, Work::Fixed)
    };
    let mut op = Operation::new("cp_kv_exchange", OpKind::Collective, fwd, bwd, 0.0);
    op.work = work;
    op.collective = Some(CollectiveUse { kind, volume_gb: chunk_gb * cp as f64, group: cp, fast_share: share });
    Some(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;

    /// H200 reference network with 8-GPU domains: b_f = 315 GB/s, b_s = 35 GB/s per NIC,
    /// λ_f = 2.5 µs, λ_s = 5 µs.
    fn hw() -> Hardware {
        Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
    }

    fn opts(comm: CpComm, u: u64) -> ExtendedOptions {
        ExtendedOptions { cp_comm: comm, cp_ulysses: u, ..ExtendedOptions::realistic() }
    }

    #[test]
    fn names_and_degrees() {
        assert_eq!("a2a".parse::<CpComm>().unwrap(), CpComm::Ulysses);
        assert_eq!("A2A+P2P".parse::<CpComm>().unwrap(), CpComm::Hybrid);
        assert_eq!("p2p".parse::<CpComm>().unwrap(), CpComm::Ring);
        assert!("all_gather".parse::<CpComm>().unwrap_err().to_string().contains("ring, ulysses, hybrid"));
        assert_eq!(ulysses_degree(16, &opts(CpComm::Ring, 4)), 1);
        assert_eq!(ulysses_degree(16, &opts(CpComm::Ulysses, 4)), 16);
        assert_eq!((ulysses_degree(16, &opts(CpComm::Hybrid, 4)), ring_degree(16, &opts(CpComm::Hybrid, 4))), (4, 4));
        // Without context parallelism the hybrid's degree means nothing: no zero ring degree.
        assert_eq!((ulysses_degree(1, &opts(CpComm::Hybrid, 8)), ring_degree(1, &opts(CpComm::Hybrid, 8))), (1, 1));
    }

    #[test]
    fn all_to_all_sizes_and_times_by_hand() {
        let hw = hw();
        // One sample of N = 131072 tokens over cp = 8 in one domain, tp = 1, Llama-3-8B's
        // attention: 32 query heads, 8 K/V heads of 128 channels, BF16.
        let mut layout = Layout::placed(1, 8, 1, 1, 1, 1, 8);
        assert_eq!(layout.placement.cp, 8);
        let w = Workload { seq_len: 131072, ..Workload::LLAMA3_8B };
        let o = opts(CpComm::Ulysses, 1);
        check(&w, &layout, &o).unwrap();
        let p = Pricing { hw: &hw, opts: &o };
        let (fwd, bwd) = ulysses_passes(&w, &layout, &p, 4096.0, 1024.0);
        // Per device 16384 tokens: Q and the output 16384·4096·2 B = 134217728 B, K and V
        // 16384·1024·2 B = 33554432 B each; 7/8 of each over NVLink, 7 fast latencies per call.
        let a2a = |b: f64| b * 1e-9 * 7.0 / 8.0 / 315.0 + 7.0 * 2.5e-6;
        let want = 2.0 * a2a(134217728.0) + 2.0 * a2a(33554432.0);
        assert!((fwd.cp_comm_s - want).abs() < 1e-15, "{} vs {want}", fwd.cp_comm_s);
        assert_eq!(fwd.cp_comm_s, bwd.cp_comm_s);
        // The same group over two domains of 4: 4/8 of the bytes cross the NIC at 35 GB/s
        // (dominating 3/8 over NVLink), 3 fast and 4 slow latencies per call.
        layout.placement.cp = 4;
        let (across, _) = ulysses_passes(&w, &layout, &p, 4096.0, 1024.0);
        let a2a = |b: f64| b * 1e-9 * 4.0 / 8.0 / 35.0 + 3.0 * 2.5e-6 + 4.0 * 5e-6;
        let want = 2.0 * a2a(134217728.0) + 2.0 * a2a(33554432.0);
        assert!((across.cp_comm_s - want).abs() < 1e-15, "{} vs {want}", across.cp_comm_s);
        // The ring sees none of it.
        let ring = opts(CpComm::Ring, 1);
        let p = Pricing { hw: &hw, opts: &ring };
        assert_eq!(ulysses_passes(&w, &layout, &p, 4096.0, 1024.0).0, Pass::default());
    }

    #[test]
    fn hybrid_splits_the_group_by_hand() {
        let hw = hw();
        // cp = 16 over two 8-GPU domains, Ulysses 8 inside each domain, a ring of 2 across.
        let layout = Layout::placed(1, 16, 1, 1, 1, 1, 8);
        assert_eq!(layout.placement.cp, 8);
        let w = Workload { seq_len: 131072, ..Workload::LLAMA3_8B };
        let o = opts(CpComm::Hybrid, 8);
        check(&w, &layout, &o).unwrap();
        let ring = ring_layout(&layout, &o);
        assert_eq!((ring.cp, ring.placement.cp), (2, 1));
        let p = Pricing { hw: &hw, opts: &o };
        let (fwd, _) = ulysses_passes(&w, &layout, &p, 4096.0, 1024.0);
        // 8192 tokens per device: Q/output 8192·4096·2 B, K/V 8192·1024·2 B; the Ulysses group
        // is inside one domain: 7/8 over NVLink, 7 fast latencies.
        let a2a = |b: f64| b * 1e-9 * 7.0 / 8.0 / 315.0 + 7.0 * 2.5e-6;
        let want = 2.0 * a2a(67108864.0) + 2.0 * a2a(16777216.0);
        assert!((fwd.cp_comm_s - want).abs() < 1e-15, "{} vs {want}", fwd.cp_comm_s);
        // Ulysses 4 inside each domain: a ring of 4 with 2 groups per domain (not fast).
        let o4 = opts(CpComm::Hybrid, 4);
        let ring = ring_layout(&layout, &o4);
        assert_eq!((ring.cp, ring.placement.cp), (4, 2));
    }

    #[test]
    fn flavours_keep_flops_and_memory_and_differ_in_exchange() {
        // Llama-3-8B at 128K tokens, cp = 8 over two 4-GPU domains, one sample per device.
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(4), true);
        let w = Workload { seq_len: 131072, ..Workload::LLAMA3_8B };
        let layout = Layout::placed(1, 8, 1, 1, 1, 1, 4);
        assert_eq!(layout.placement.cp, 4);
        let run = |o: &ExtendedOptions| crate::extended::evaluate::evaluate(&w, &hw, &layout, o).unwrap();
        let ring = run(&ExtendedOptions::realistic());
        let ulysses = run(&opts(CpComm::Ulysses, 1));
        let hybrid = run(&opts(CpComm::Hybrid, 4));
        for e in [&ulysses, &hybrid] {
            // The same FLOPs per device and the same activations kept.
            assert!((e.totals.flops_per_gpu - ring.totals.flops_per_gpu).abs() <= 1e-9 * ring.totals.flops_per_gpu);
            assert_eq!(e.memory.activations_gb, ring.memory.activations_gb);
        }
        // Ulysses over 8 devices, half of each buffer across the NIC, exposed, costs more than
        // a ring hiding its transfers behind 8 chunks' attention; the hybrid keeps its
        // all-to-all inside the domain (Ulysses 4) and rings over the 2 domains.
        assert!(ulysses.breakdown.t_cp_comm_s > ring.breakdown.t_cp_comm_s);
        assert!(hybrid.breakdown.t_cp_comm_s < ulysses.breakdown.t_cp_comm_s);
        // Ulysses 16 does not divide Llama-3-8B's 8 K/V heads: the evaluator refuses it by name.
        let cp16 = Layout::placed(1, 16, 1, 1, 1, 1, 4);
        let e = crate::extended::evaluate::evaluate(&w, &hw, &cp16, &opts(CpComm::Ulysses, 1)).unwrap_err();
        assert_eq!(e.field(), Some("ext.cp_comm"));
    }

    #[test]
    fn degrees_must_divide_cp_and_heads() {
        let w = Workload::LLAMA3_8B;
        let layout = Layout::placed(1, 16, 1, 1, 1, 1, 8);
        // Ulysses 16 does not divide 8 K/V heads.
        let e = check(&w, &layout, &opts(CpComm::Ulysses, 1)).unwrap_err();
        assert_eq!(e.field(), Some("ext.cp_comm"));
        assert!(e.to_string().contains("K/V heads"), "{e}");
        // Hybrid 3 does not divide 16.
        let e = check(&w, &layout, &opts(CpComm::Hybrid, 3)).unwrap_err();
        assert_eq!(e.field(), Some("ext.cp_ulysses"));
        assert!(e.to_string().contains("divide cp = 16"), "{e}");
        // Hybrid 8 divides both; with tp = 2 the 4 K/V heads per rank do not split 8 ways.
        assert!(check(&w, &layout, &opts(CpComm::Hybrid, 8)).is_ok());
        let tp2 = Layout::placed(2, 16, 1, 1, 1, 1, 8);
        assert!(check(&w, &tp2, &opts(CpComm::Hybrid, 8)).is_err());
        assert!(check(&w, &tp2, &opts(CpComm::Hybrid, 4)).is_ok());
    }
}
