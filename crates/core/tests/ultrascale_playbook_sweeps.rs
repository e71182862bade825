//! Layout ranking at 8 to 512 GPUs, on runs fmperf was never fitted on
//! (`data/ultrascale-playbook-sweeps.json`): the benchmark grid of Hugging Face's Ultra-Scale
//! Playbook (Feb 2025) — nanotron training four Llama-style models (1.34, 3.57, 8.86 and 80 B
//! parameters, multi-head attention, 4,096 tokens, a 1M-token batch) on 1 to 64 nodes of 8 H100
//! (AWS p5, EFA between nodes) in every layout of DP × TP × PP × micro-batch × ZeRO-0/1 the
//! authors ran: 28 groups, 1,739 runs with a figure (provenance in the file and in
//! `data/README.md`). The issue that asked for ranking as a first-class measure (31) describes
//! this sweep: fmperf's pick 20–200 % slower than the measured best from 16 nodes up.
//!
//! Where fmperf stands (session 21, nothing fitted to it): within 12 % on 313 of 1,738 rows,
//! median error **+144 %** (throughput: predicted faster than measured). By layout: TP within a
//! node and no pipeline +15 % (294 rows); a pipeline +137 % (868 rows); TP across nodes +131 %
//! (186); both +1,082 % (390). By size: 1–4 nodes within ±15 % for most layouts; from 8 nodes the
//! measured runs slow down far more than fmperf's DP and TP communication says, worst at 64 nodes
//! (the best 1B run: 4,603 tokens/s per GPU measured against 16,576 predicted; ZeRO-0 runs there
//! up to 30× slower than predicted). Ranking: mean Kendall tau **0.50** over 26 rankable groups,
//! median top-1 regret **11 %**, the pick the measured best in 6 groups, within the band of the
//! best in 18; one run that ran is called "does not fit" (fmperf's memory model, 80B).
//! Session 24: the rows name nanotron, read as the `nanotron` stack, whose ZeRO-1 parameter
//! all-gather runs inside the optimizer step (`optim/zero.py`, `_all_gather_params`), one blocking
//! collective exposed in full after the FP32 gradient reduce-scatter of DDP's bucket hook
//! (`helpers.py`, `FP32GradBucketManager`): median error +144 % → +142 %, median regret 11.1 % →
//! 9.9 %, mean tau 0.505 → 0.504 (the 1,177 ZeRO-1 rows change, no other). Still not modelled:
//! EFA's achieved bandwidth and latency at 32–64 nodes (measured ZeRO-1 minus ZeRO-0 of the 1B at
//! 16 nodes, ≈ 50 ms, is about 5× what the node's eight NICs at 70 % give for its 2.7 GB gather),
//! and the exposed all-reduce of the tied embedding's gradient between the first and last
//! pipeline stages (`parallel/tied_parameters.py`, `sync_tied_weights_gradients`, after the
//! backward).
//! Session 25: nanotron's separate FP32 gradient accumulation priced
//! (`extended::fp32_accumulation`: every micro-batch's `add_` of the 16-bit gradients into the
//! FP32 buffer, 10 B per parameter; every step's clipping, copy into the 16-bit weights and
//! zeroing, 16 B per parameter + 4 B per optimizer-held one; each loop at least its launches):
//! median error +142.3 % → +138.1 %, within 12 % 318 → 337 rows, median regret 9.9 % → 8.9 %,
//! mean regret 0.73 → 0.64, mean tau 0.504 → 0.501. It closes two thirds of the per-step gap of
//! the 1B at one node (0.15 → 0.05 s, TP 1) but little of it at 16 nodes (0.11 → 0.10 s), where
//! few micro-batches are left to accumulate: the rest is per step and is not per-tensor host
//! work (≈ 100 tensors × 3 launches × 12.9 µs ≈ 4 ms).
//!
//! Session 29 (issue 31, two sourced parts, nothing fitted to this file): (1) the rows' fabric now
//! reaches the model — the words `EFA between nodes, 3,200 Gbps per node` name the kind in a
//! clause without its rate, which the sweep reader dropped, so every row was priced on the H100's
//! catalog InfiniBand — and EFA's NCCL network step is measured, 68.3 µs against InfiniBand's
//! 9.6 µs (`catalog::fabric::EFA_NCCL_STEP_S`: nccl-tests all-gathers on p5.48xlarge from
//! crazyguitar/aws-gpu-communication-benchmark, 2–32 nodes); (2) nanotron reduces each block's
//! gradients in PyTorch DDP buckets of 25 MiB (up to one per weight matrix), each a collective
//! over the data-parallel group paying that latency (`Stack::gradient_buckets_per_block`). What
//! the rows showed (measured minus predicted step of DP layouts, e.g. the 1B on 32 nodes: 0.14 s
//! at DP 256 × TP 1, 0.10 s at DP 128 × TP 2, 0.04 s at DP 64 × TP 4) is the cost of a data
//! parallel group of many ranks; a bucket's reduce-scatter over 256 ranks in 32 nodes now costs
//! ≈ 2.5 ms of latency, ≈ 0.12 s for the 1B's 49 buckets. Mean |error| 833 % → 777 %, median
//! +138 % → +131 %, within 12 % 337 → 356 rows; median regret 8.9 % → 3.2 % (32 nodes: 35 % →
//! 0 %, the pick the measured best in all three groups), top-1 hits 6 → 9, mean tau 0.501 →
//! 0.496; 16 nodes unchanged (its picks are ZeRO-1 layouts whose blocking parameter gather the
//! rows say costs ≈ 50 ms at DP 128, the Playbook's own all-gather bandwidth at 16 nodes, 55 GB/s,
//! against the 280 GB/s of eight EFA NICs at 70 %); 64 nodes worse (median regret 154 % → 267 %:
//! the picks move to smaller data-parallel groups, the measured best there keep DP 128, and the
//! 64-node runs are 3–30× slower than any layout's physics gives).
//!
//! Not all of the gap is physics: the grid holds runs that went wrong — the same layout measured
//! 13× apart between ZeRO-0 and ZeRO-1 (8.86 B on 4 nodes, dp4·tp2·pp4, 64 micro-batches of 1:
//! 461 against 6,272 tokens/s per GPU), single runs 20–50× below their neighbours (nanotron's benchmark mode times one step, the 4th,
//! and exits: `NANOTRON_BENCHMARK=1` in `trainer.py` at 2411b02, `log_throughput`) — so a
//! Kendall tau over every run is capped by the sweep's own noise; the regret of the pick is the
//! more robust figure. Measured elsewhere on the same instance type (NCCL all-reduce on p5 EFA,
//! crazyguitar/aws-gpu-communication-benchmark `data/nccl_all_reduce.csv`): 32 MB all-reduces
//! reach a bus bandwidth of 147 GB/s on 2 nodes and 66 GB/s on 32 nodes where fmperf's NCCL model
//! gives 226 and 185 GB/s; tried as a fabric table with DDP's 25 MB buckets, it moved this file's
//! median error by 4 points and the mean tau by 0.001 — not the lever.
//!
//! The bounds are the figures above with a margin: they fail if a change makes the ranking or the
//! error on this sweep worse, and they are to be tightened as the physics improves.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::layout_sweeps::sweep_rows_json;
use fmperf_core::validate::ranking::ranking;
use fmperf_core::validate::{parse_measured_runs, validate};

const SWEEPS: &str = include_str!("data/ultrascale-playbook-sweeps.json");

/// The median of a non-empty list (core's, which the validation report uses too).
fn median(mut v: Vec<f64>) -> f64 {
    fmperf_core::extended::efficiency::median(&mut v).expect("a non-empty list")
}

#[test]
fn the_playbook_grid_is_ranked_and_guarded() {
    let rows = sweep_rows_json(SWEEPS).expect("the sweep file reads");
    let file = parse_measured_runs(&rows).expect("its rows read");
    assert_eq!(file.rows.len(), 1739);
    let report = validate(&file, ModeKind::Extended);
    // One 3.57 B layout asks for 32 pipeline stages of a 28-layer model: refused, named.
    let skipped: Vec<_> = report.rows.iter().filter(|r| r.skipped).collect();
    assert_eq!(skipped.len(), 1, "{:?}", skipped.iter().map(|r| (&r.id, &r.reason)).collect::<Vec<_>>());
    assert!(skipped[0].id.starts_with("ultrascale_llama_3b_"), "{}", skipped[0].id);

    let errors: Vec<f64> = report.rows.iter().filter_map(|r| r.error).collect();
    let within = errors.iter().filter(|e| e.abs() <= 0.12).count();
    let med = median(errors.clone());
    eprintln!("{} rows, median error {:+.1} %, within 12 %: {within}", errors.len(), 100.0 * med);
    assert_eq!(errors.len(), 1738);
    // 395 within 12 % and a median of +115 % since nanotron's own pipeline split (session 30,
    // `extended::stack_nanotron`; 356 and +131 % before).
    assert!(within >= 390, "within 12 %: {within}");
    assert!(med < 1.17, "median error {med}");

    // Small jobs are priced well: 1 node, every model.
    for m in ["1b", "3b", "8b"] {
        let group = format!("ultrascale_llama_{m}_1node/");
        let e: Vec<f64> = report.rows.iter().filter(|r| r.id.starts_with(&group)).filter_map(|r| r.error).collect();
        let med = median(e);
        assert!(med.abs() < 0.12, "{group}: median error {med}");
    }

    let r = ranking(&file, &report);
    let s = &r.overall;
    eprintln!("{s:?}");
    assert_eq!(s.groups, 26);
    // 0.527 since nanotron's own pipeline split (0.496 before).
    assert!(s.tau_mean.is_some_and(|t| t >= 0.52), "{s:?}");
    assert!(s.regret_median.is_some_and(|x| x <= 0.04), "{s:?}");
    assert!(s.top1_hits >= 9, "{s:?}");
    // 32 nodes: the pick is the measured best (or within 2 % of it) for the 1B, 3B and 8B.
    for g in r.groups.iter().filter(|g| g.group.contains("_32node") && !g.group.contains("80b")) {
        assert!(g.regret.is_some_and(|x| x <= 0.02), "{}: {:?}", g.group, g.regret);
    }
    // None since session 26 (nanotron's loss holds FP32 logits only, `Stack::logits_upcast_in_model`).
    assert_eq!(s.ran_called_no, 0, "{s:?}");
}
