//! The context-parallel flavour as a search choice (issue 31 §1, `cp_comm=search`): which flavours
//! a layout gets, the search's pick on two hand-computed cases (Ulysses inside one fast domain with
//! many K/V heads; the ring across nodes with few), its equality with the best of the searches with
//! each flavour fixed, and the rows it writes.

use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::context_parallel::CpComm;
use fmperf_core::extended::options::{Recompute, Sharding};
use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Workload, evaluate};
use fmperf_core::search::execution::{CpFlavour, cp_flavours};
use fmperf_core::search::{ExecutionChoices, ResultRow, Search};
use fmperf_core::{Strategy, SystemParams};

fn with_comm(comm: CpComm, u: u64) -> ExtendedOptions {
    ExtendedOptions { cp_comm: comm, cp_ulysses: u, ..ExtendedOptions::realistic() }
}

/// The reference's H200 network with `domain`-device scale-up domains: b_f = 315 GB/s,
/// b_s = 35 GB/s per NIC, λ_f = 2.5 µs, λ_s = 5 µs.
fn h200(domain: u64) -> Hardware {
    Hardware::from_params(&SystemParams::h200().with_domain_size(domain), true)
}

/// Everything but the flavour fixed: no recomputation, ZeRO-1, no interleaving, the given cp,
/// one sample per micro-batch.
fn only_the_flavour(cp: u64) -> ExecutionChoices {
    ExecutionChoices {
        recompute: Some(Recompute::None),
        sharding: Some(Sharding::Zero1),
        shard_group: Some(None),
        interleave: Some(1),
        cp: Some(cp),
        mbs: Some(1),
    }
}

/// The best row of a 2d-seqp search of one sample on `n` devices under `options`.
fn best(w: Workload, hw: &Hardware, options: ExtendedOptions, n: u64, choices: ExecutionChoices) -> ResultRow {
    let setup = ExtendedSetup { workload: w, hardware: hw.clone(), options };
    let spec = setup.spec(Strategy::ContextParallel2D, n, 1, 3);
    let r = Search::in_mode(spec, Some(setup), choices).unwrap().finish();
    ResultRow::of(r.top.first().expect("a configuration fits"), 1)
}

/// One all-to-all of `bytes` per device over `u` devices of which `share` share a domain, by hand
/// (the bandwidth term of the slower tier plus one latency per peer).
fn a2a(bytes: f64, u: f64, share: f64, domain_bw: f64, nic_bw: f64) -> f64 {
    let inside = bytes * 1e-9 * (share - 1.0) / u / domain_bw;
    let across = bytes * 1e-9 * (u - share) / u / nic_bw;
    inside.max(across) + 2.5e-6 * (share - 1.0) + 5e-6 * (u - share)
}

#[test]
fn a_layout_gets_every_flavour_that_applies() {
    let w = Workload::LLAMA3_8B; // 32 query heads, 8 K/V heads
    let search = with_comm(CpComm::Search, 1);
    let hybrid = |u| Some(CpFlavour { cp_comm: CpComm::Hybrid, cp_ulysses: u });
    let ulysses = |u| Some(CpFlavour { cp_comm: CpComm::Ulysses, cp_ulysses: u });
    // cp = 16 over two 8-GPU domains: Ulysses 16 cannot split 8 K/V heads (skipped, not an
    // error); the hybrids 2, 4, 8 can, their Ulysses groups inside a domain.
    assert_eq!(cp_flavours(&w, &search, 1, 16, 8), vec![Some(CpFlavour::RING), hybrid(2), hybrid(4), hybrid(8)]);
    // Over four 4-GPU domains: a split of 8 would cross domains (USP: Ulysses inside a node).
    assert_eq!(cp_flavours(&w, &search, 1, 16, 4), vec![Some(CpFlavour::RING), hybrid(2), hybrid(4)]);
    // cp = 8 with tp = 1: Ulysses 8 too; with tp = 2 each rank holds 4 K/V heads: 2 and 4 only.
    assert_eq!(cp_flavours(&w, &search, 1, 8, 8), vec![Some(CpFlavour::RING), ulysses(8), hybrid(2), hybrid(4)]);
    assert_eq!(cp_flavours(&w, &search, 2, 8, 8), vec![Some(CpFlavour::RING), hybrid(2), hybrid(4)]);
    // One device per node: the ring and Ulysses, no hybrid (its all-to-alls would cross nodes).
    assert_eq!(cp_flavours(&w, &search, 1, 8, 1), vec![Some(CpFlavour::RING), ulysses(8)]);
    // cp = 2: no hybrid split exists (1 < u < 2).
    assert_eq!(cp_flavours(&w, &search, 1, 2, 2), vec![Some(CpFlavour::RING), ulysses(2)]);
    // Without context parallelism, or with the flavour fixed (the default ring too): the switches'.
    assert_eq!(cp_flavours(&w, &search, 8, 1, 1), vec![None]);
    assert_eq!(cp_flavours(&w, &ExtendedOptions::realistic(), 1, 16, 8), vec![None]);
    assert_eq!(cp_flavours(&w, &with_comm(CpComm::Ulysses, 1), 1, 16, 8), vec![None]);
}

#[test]
fn ulysses_wins_with_many_kv_heads_inside_one_domain() {
    // Llama-2-7B's attention (32 heads, multi-head: 32 K/V heads too, so every Ulysses degree up
    // to 32 applies), 32K tokens, cp = 8 on one 8-GPU NVLink domain. Why Ulysses wins: the ring
    // hides its K/V steps behind the chunks' attention (exposing nothing), but its kernel attends
    // 4096 queries at a time, where the attention rate's sequence factor s_q/(s_q + 1024) is 0.80;
    // Ulysses attends all 32768 queries on 4 heads (the same FLOPs) at 0.97, and its exposed
    // all-to-alls (four per block and pass, 7/8 of 33.5 MB each over NVLink, 111 µs each) cost
    // less than that gain.
    let w = Workload { seq_len: 32768, kv_heads: 32, ..Workload::LLAMA3_8B };
    let hw = h200(8);
    let row = best(w, &hw, with_comm(CpComm::Search, 1), 8, only_the_flavour(8));
    assert_eq!(row.dims.cp, 8);
    let chosen = row.execution.and_then(|e| e.cp).expect("the search states its flavour");
    assert_eq!(chosen, CpFlavour { cp_comm: CpComm::Ulysses, cp_ulysses: 8 });

    // By hand: Ulysses' exchange per block and pass is four all-to-alls of 4096·4096·2 B =
    // 33,554,432 B inside the domain; 32 blocks, forward and backward, one micro-batch.
    let per_pass = 4.0 * a2a(33554432.0, 8.0, 8.0, 315.0, 35.0);
    assert!((per_pass - 4.0 * (33554432.0e-9 * 7.0 / 8.0 / 315.0 + 7.0 * 2.5e-6)).abs() < 1e-15);
    let layout = Layout::placed(1, 8, 1, 1, 1, 1, 8);
    let fixed = |comm| {
        let o = ExtendedOptions { recompute: Recompute::None, ..with_comm(comm, 1) };
        evaluate(&w, &hw, &layout, &o).unwrap()
    };
    let (ulysses, ring) = (fixed(CpComm::Ulysses), fixed(CpComm::Ring));
    let want = 32.0 * 2.0 * per_pass;
    assert!((ulysses.breakdown.t_cp_comm_s - want).abs() < 1e-12 * want, "{} vs {want}", ulysses.breakdown.t_cp_comm_s);
    // The ring exposes nothing; Ulysses' attention saves more compute than its exchange costs.
    assert_eq!(ring.breakdown.t_cp_comm_s, 0.0);
    assert!(ring.totals.t_comp - ulysses.totals.t_comp > want, "{} vs {}", ring.totals.t_comp, ulysses.totals.t_comp);
    let factor = |s: f64| s / (s + 1024.0);
    assert!((factor(4096.0) - 0.8).abs() < 1e-12 && factor(32768.0) > 0.969);
    // The search's row is Ulysses' own evaluation.
    assert_eq!(row.time_per_iteration_s, ulysses.totals.t);
    assert!(ulysses.totals.t < ring.totals.t);
}

#[test]
fn the_ring_wins_across_nodes_with_few_kv_heads() {
    // Llama-3-8B (8 K/V heads), 64K tokens, cp = 8 with one GPU per node (domain 1): every
    // exchange crosses a 35 GB/s NIC. Why the ring wins: its step moves one K/V chunk of
    // 2·8192·1024·2 B = 33.5 MB (0.96 ms) under a chunk's attention (8192 queries × 65536 keys ×
    // 32 heads: 0.55 TFLOP, over 0.5 ms even at the peak rate), while Ulysses moves Q and the
    // output at the full 4096 width (67.1 MB each) and K, V (16.8 MB each), 7/8 of it across the
    // NIC, exposed: 2·(1.68 ms + 35 µs) + 2·(0.42 ms + 35 µs) = 4.33 ms per block and pass.
    let w = Workload { seq_len: 65536, ..Workload::LLAMA3_8B };
    let hw = h200(1);
    // Ulysses 8 applies here (8 divides the 8 K/V heads): the ring wins on its merits. The
    // hybrids' all-to-alls would cross nodes, so the search does not try them; priced below,
    // they lose too.
    let o = with_comm(CpComm::Search, 1);
    assert_eq!(
        cp_flavours(&w, &o, 1, 8, 1),
        vec![Some(CpFlavour::RING), Some(CpFlavour { cp_comm: CpComm::Ulysses, cp_ulysses: 8 })]
    );
    let row = best(w, &hw, o, 8, only_the_flavour(8));
    assert_eq!(row.execution.and_then(|e| e.cp), Some(CpFlavour::RING));

    let per_pass = 2.0 * a2a(67108864.0, 8.0, 1.0, 315.0, 35.0) + 2.0 * a2a(16777216.0, 8.0, 1.0, 315.0, 35.0);
    assert!((per_pass - 4.3343e-3).abs() < 1e-6, "{per_pass}");
    let layout = Layout::placed(1, 8, 1, 1, 1, 1, 1);
    let fixed = |comm, u| {
        let o = ExtendedOptions { recompute: Recompute::None, ..with_comm(comm, u) };
        evaluate(&w, &hw, &layout, &o).unwrap()
    };
    let ulysses = fixed(CpComm::Ulysses, 1);
    let want = 32.0 * 2.0 * per_pass;
    assert!((ulysses.breakdown.t_cp_comm_s - want).abs() < 1e-12 * want, "{} vs {want}", ulysses.breakdown.t_cp_comm_s);
    let ring = fixed(CpComm::Ring, 1);
    assert!(ring.breakdown.t_cp_comm_s < 0.1 * ulysses.breakdown.t_cp_comm_s, "{}", ring.breakdown.t_cp_comm_s);
    for u in [2, 4] {
        assert!(fixed(CpComm::Hybrid, u).totals.t > ring.totals.t, "hybrid {u}");
    }
    assert_eq!(row.time_per_iteration_s, ring.totals.t);
}

#[test]
fn the_search_equals_the_best_of_each_flavour_fixed() {
    // Llama-3-8B at 32K tokens on 32 H200s in 8-GPU domains, every execution choice searched:
    // the rows of `cp_comm=search` are, layout by layout, the fastest of the searches with each
    // flavour fixed (a fixed flavour that cannot apply rejects the layout there).
    let w = Workload { seq_len: 32768, ..Workload::LLAMA3_8B };
    let hw = h200(8);
    let run = |o: ExtendedOptions| {
        let setup = ExtendedSetup { workload: w, hardware: hw.clone(), options: o };
        let spec = setup.spec(Strategy::ContextParallel2D, 32, 32, 400);
        Search::in_mode(spec, Some(setup), ExecutionChoices::SEARCH_ALL).unwrap().finish()
    };
    let searched = run(with_comm(CpComm::Search, 1));
    let mut fixed = vec![run(ExtendedOptions::realistic()), run(with_comm(CpComm::Ulysses, 1))];
    fixed.extend([2, 4, 8, 16].map(|u| run(with_comm(CpComm::Hybrid, u))));
    assert!(searched.evaluations > fixed[0].evaluations);
    assert_eq!(searched.candidates, fixed[0].candidates);
    assert_eq!(searched.feasible, fixed[0].feasible, "memory does not depend on the flavour");
    // A fixed flavour's row counts where the search tries that flavour for its layout.
    let tried = |x: &fmperf_core::search::Ranked, fixed: usize| {
        let c = &x.candidate;
        let flavours = cp_flavours(&w, &with_comm(CpComm::Search, 1), c.tp1, c.tp2, c.nv_tp2);
        let comm = [CpComm::Ring, CpComm::Ulysses, CpComm::Hybrid][fixed.min(2)];
        let u = [1, c.tp2, 2, 4, 8, 16][fixed];
        c.tp2 == 1
            || flavours.iter().flatten().any(|f| f.cp_comm == comm && (comm != CpComm::Hybrid || f.cp_ulysses == u))
    };
    let top = searched.top.first().unwrap().throughput_samples_per_s;
    let mut best_fixed = 0.0f64;
    for (i, f) in fixed.iter().enumerate() {
        for x in f.top.iter().filter(|x| tried(x, i)) {
            best_fixed = best_fixed.max(x.throughput_samples_per_s);
        }
    }
    assert_eq!(top, best_fixed);
    // Each searched row: its layout's best over the fixed searches that kept it.
    for r in searched.top.iter().take(20) {
        let mut best = 0.0f64;
        for (i, f) in fixed.iter().enumerate() {
            if let Some(x) = f.top.iter().find(|x| x.candidate == r.candidate && tried(x, i)) {
                best = best.max(x.throughput_samples_per_s);
            }
        }
        assert!(r.throughput_samples_per_s >= best, "{:?}", r.candidate);
        let f = r.execution.unwrap().cp;
        assert_eq!(f.is_some(), r.candidate.tp2 > 1, "{:?}", r.candidate);
    }
}

#[test]
fn an_explicit_ulysses_that_cannot_apply_is_an_error_naming_the_field() {
    let w = Workload::LLAMA3_8B;
    let layout = Layout::placed(1, 16, 1, 1, 1, 1, 8);
    let e = evaluate(&w, &h200(8), &layout, &with_comm(CpComm::Ulysses, 1)).unwrap_err();
    assert_eq!(e.field(), Some("ext.cp_comm"));
    // `search` is no flavour to price one layout with: the error says so, naming the field.
    let e = evaluate(&w, &h200(8), &layout, &with_comm(CpComm::Search, 1)).unwrap_err();
    assert_eq!(e.field(), Some("ext.cp_comm"));
    assert!(e.to_string().contains("choice the search makes"), "{e}");
}

#[test]
fn chosen_flavours_round_trip_through_the_shard_state() {
    // The page's workers hand results back as JSON: the chosen flavour survives it, and a row
    // without one writes no flavour keys (the outputs of a fixed flavour are unchanged).
    let e = fmperf_core::search::Execution::of(&ExtendedOptions::realistic());
    let plain = serde_json::to_value(e).unwrap();
    assert!(plain.get("cp_comm").is_none(), "{plain}");
    let hybrid = e.with_cp(Some(CpFlavour { cp_comm: CpComm::Hybrid, cp_ulysses: 4 }));
    let v = serde_json::to_value(hybrid).unwrap();
    assert_eq!((v["cp_comm"].as_str(), v["cp_ulysses"].as_u64()), (Some("hybrid"), Some(4)));
    assert_eq!(serde_json::from_value::<fmperf_core::search::Execution>(v).unwrap(), hybrid);
    assert_eq!(serde_json::from_value::<fmperf_core::search::Execution>(plain).unwrap(), e);
    assert!(hybrid.to_text().ends_with(",cp_comm=hybrid,cp_ulysses=4"));
}
