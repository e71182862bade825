//! Context-parallel splits at long sequence, on runs fmperf was never fitted on
//! (`data/usp-long-sequence-splits.json`): the USP report's measured layouts (Fang & Zhao,
//! arXiv:2405.07719, Tables 5–7; Megatron-LM at 2196398 on one or two nodes of 8 A800) — Llama 3
//! 8B at 64K–208K tokens on 16 GPUs and Llama 2 7B at 30K–64K on 8, split as TP × Ulysses × ring
//! at a fixed device count and batch: 10 groups, 40 runs (provenance in the file and in
//! `data/README.md`). Issue 31 describes these splits: fmperf's order reversed at 64K and 80K.
//!
//! Where fmperf stands (session 30, nothing fitted to it). Before the rows' flavour was read
//! (every run priced as a K/V ring of `cp`): mean |error| 25.0 %, tau −0.38 (64K) and −0.43 (80K),
//! 6 groups mean tau 0.29, median regret 6.3 %, no pick the measured best. With the flavour and
//! the split degrees read (`validate::cp_words`: Megatron-Core's `cp_comm_type` and USP's
//! `ulysses_degree` / `ring_degree`): mean |error| 23.3 %, tau −0.02 (64K) and +0.16 (80K), mean
//! tau 0.39, median regret 0.9 %, the pick the measured best in 3 groups. Still wrong: every
//! SP-only run (tp 1, 4–5K tokens per GPU) is called "does not fit" (96.7 GB predicted against
//! 85.9 GB; activations 42.5 GB), so the pick at 64K/80K is a TP 2 split the report measured
//! slowest (regret 57 % and 34 %); and every run is predicted 10–37 % slow.
//!
//! Session 31 (issues 31 + 32): the memory verdict's `no` is judged on the need without the
//! caching allocator's cache (`vocab::Need`: allocated + context + NCCL buffers, 78.8 GB for the
//! SP-only 64K runs; PyTorch frees its cache and retries before it raises an out-of-memory error).
//! The SP-only runs are `tight` now: runs that ran called "no" 17 → 6 (the six left are Llama 2
//! 7B at 30K with batch 16, predicted 294–329 GB: a reading of the batch, not the verdict), mean
//! regret 15.4 % → 2.3 % (64K: 56.8 % → 0.9 %, 80K: 34.1 % → 1.0 %), median regret 0.9 % → 0.7 %.
//! The pick is the measured best in 2 groups instead of 3: at 120K the TP 2 split predicted
//! fastest was a "no" that ran, which left the measured best as the pick; offered now, it costs
//! 11.6 %. This file prompted the rule (it is not unseen for the verdict's `no` side;
//! `data/README.md`).
//!
//! Session 32 (issue 32): the report states no recomputation (read as Megatron-LM's default,
//! none), and a `no` must hold under every reading of what a source leaves open, so it is judged
//! at full recomputation too (`validate::prepared`, the need without the allocator's cache). Of the
//! six 30K runs at batch 16, the four with TP ≥ 2 need 59.9–75.5 GB fully recomputed and are
//! `tight`; the two SP-only runs (tp 1, cp 8: 16 × 30,720 / 8 = 61,440 tokens per device, one
//! micro-batch as §5.2's "We do not use gradient accumulation" says) need 94.4 GB allocated even
//! then and stay `no` — as the report states them they cannot have run (as 16 micro-batches of one
//! sequence they need 67.9 GB). Runs that ran called "no" 6 → 2; with SP-only out, the 30K pick is
//! the TP 2 × Ulysses 4 split, the measured second (regret 4.8 %), so the pick is the measured
//! best in 1 group instead of 2 and the mean regret is 2.3 % → 3.0 %.
//!
//! The bounds are the figures above with a margin: they fail if a change makes the reading, the
//! ranking or the error on these splits worse.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::layout_sweeps::sweep_rows_json;
use fmperf_core::validate::ranking::ranking;
use fmperf_core::validate::{parse_measured_runs, validate};

const SPLITS: &str = include_str!("data/usp-long-sequence-splits.json");

#[test]
fn every_split_reads_with_its_stated_layout_and_flavour() {
    let rows = sweep_rows_json(SPLITS).expect("the sweep file reads");
    let file = parse_measured_runs(&rows).expect("its rows read");
    assert_eq!(file.rows.len(), 40);
    let report = validate(&file, ModeKind::Extended);
    assert!(report.rows.iter().all(|r| !r.skipped), "{:?}", report.rows.iter().find(|r| r.skipped));
    for r in &report.rows {
        // The run id states the layout: tp{T}_u{U}_r{R}_dp{D}; the row's config says tp, cp = U·R, dp.
        let run = r.id.split('/').nth(1).expect("group/run");
        let n: Vec<u64> =
            run.split('_').map(|p| p[p.find(|c: char| c.is_ascii_digit()).unwrap()..].parse().unwrap()).collect();
        let (tp, u, ring, dp) = (n[0], n[1], n[2], n[3]);
        let config = r.config.as_deref().unwrap_or("");
        assert!(config.contains(&format!("tp{tp} pp1 dp{dp} cp{}", u * ring)), "{}: {config}", r.id);
        // The flavour is read and said: hybrid for U, R > 1; Ulysses for R = 1; a ring for U = 1.
        let said = r.assumptions.iter().map(|a| a.text.as_str()).find(|a| a.contains("context parallelism of"));
        match (u, ring) {
            (1, 1) => assert!(said.is_none(), "{}", r.id),
            (1, _) => assert!(said.is_some_and(|s| s.contains("cp_comm=ring")), "{}: {said:?}", r.id),
            (_, 1) => assert!(said.is_some_and(|s| s.contains("cp_comm=ulysses")), "{}: {said:?}", r.id),
            _ => assert!(said.is_some_and(|s| s.contains(&format!("cp_ulysses={u}"))), "{}: {said:?}", r.id),
        }
    }
}

#[test]
fn the_usp_splits_are_ranked_and_guarded() {
    let rows = sweep_rows_json(SPLITS).expect("the sweep file reads");
    let file = parse_measured_runs(&rows).expect("its rows read");
    let report = validate(&file, ModeKind::Extended);
    let errors: Vec<f64> = report.rows.iter().filter_map(|r| r.error).collect();
    assert_eq!(errors.len(), 40);
    let mean_abs = errors.iter().map(|e| e.abs()).sum::<f64>() / 40.0;
    eprintln!("mean |error| {:.1} %", 100.0 * mean_abs);
    assert!(mean_abs < 0.245, "mean |error| {mean_abs}");

    let r = ranking(&file, &report);
    let s = &r.overall;
    eprintln!("{s:?}");
    assert_eq!(s.groups, 6);
    assert!(s.tau_mean.is_some_and(|t| t >= 0.35), "{s:?}");
    assert!(s.regret_median.is_some_and(|x| x <= 0.03), "{s:?}");
    assert!(s.top1_hits >= 1, "{s:?}");
    assert!(s.regret_mean.is_some_and(|x| x <= 0.05), "{s:?}");
    // Only the two SP-only Llama 2 7B 30K runs at batch 16 (94.4 GB allocated of 85.9 even fully
    // recomputed) are still a "no".
    assert!(s.ran_called_no <= 2, "{s:?}");
    let no: Vec<&str> = r.groups.iter().flat_map(|g| g.ran_called_no.iter().map(String::as_str)).collect();
    assert!(no.iter().all(|id| id.contains("_30k_8gpu_gbs16/tp1_")), "{no:?}");
    // The orders issue 31 reported reversed: no longer below zero by more than the noise.
    for g in r.groups.iter().filter(|g| g.group.contains("_64k_16gpu_gbs1") || g.group.contains("_80k_16gpu_gbs1")) {
        assert!(g.tau.is_some_and(|t| t > -0.1), "{}: tau {:?}", g.group, g.tau);
    }
}
