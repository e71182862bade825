//! Dense pre-training throughput on runs fmperf was never fitted on
//! (`data/megatron-bridge-dense-runs.json`): NVIDIA's Megatron-Bridge performance summaries of
//! Llama 3 8B, 70B and 3.1 405B at 8,192 tokens on DGX-GB300, DGX-GB200, DGX-B200 and DGX-H100
//! (8–1,024 GPUs; FP8 and MXFP8), in the layouts the tables state, over seven NeMo container
//! releases (25.09–26.06). No shipped dense run comes from Megatron-Bridge.
//!
//! What the rows show (session 18, 71 rows): mean |error| 10.7 %, 50 of 71 within 12 %. By
//! system: B200 +3.2 % mean, GB200 +5.1 %, GB300 −10.9 % (measured 20–25 % faster than GB200 in
//! the same layout, which the catalog's equal FP8 peaks do not give; Blackwell Ultra's doubled
//! exponential throughput in attention is not modelled), H100 −11.8 % (newer containers are
//! faster than the NeMo 24.07 runs the constants saw). Two rows are far off and left as found:
//! Llama 3.1 405B with Megatron-FSDP over 64 GB200s × TP 2 (−88 %: its per-block gathers across
//! two NVL72 domains are priced at one NIC per device; at every NIC of a domain still −52 %), and
//! Llama 3 70B on 64 GB300 with PP 4 and no interleaving at 8 micro-batches (−29 %; the
//! recipe of that release sets 5 virtual stages, the table says n/a).
//!
//! The bounds guard the aggregate: they fail if a change moves these runs off by more than a few
//! points.

use fmperf_core::validate::{Mode, parse_measured_runs, validate};

const RUNS: &str = include_str!("data/megatron-bridge-dense-runs.json");

#[test]
fn megatron_bridge_dense_rows_hold_without_a_fit() {
    let file = parse_measured_runs(RUNS).expect("the file reads");
    assert!(file.rows.len() >= 70, "{}", file.rows.len());
    let report = validate(&file, Mode::Extended);
    let errors: Vec<f64> = report
        .rows
        .iter()
        .map(|r| {
            assert!(!r.skipped, "{}: skipped ({:?})", r.id, r.reason);
            r.error.expect("evaluated")
        })
        .collect();
    let mean_abs = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64;
    let within = errors.iter().filter(|e| e.abs() <= 0.12).count();
    eprintln!("mean |error| {:.1} %, {within} of {} within 12 %", 100.0 * mean_abs, errors.len());
    assert!(mean_abs < 0.125, "mean |error| {mean_abs}");
    assert!(within * 100 >= 65 * errors.len(), "{within} of {} within 12 %", errors.len());
}
