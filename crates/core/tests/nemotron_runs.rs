//! NeMo/Megatron-Core on DGX H100, on runs fmperf was never fitted on and that chose no rule
//! (`data/nemotron-runs.json`): NVIDIA's DGX Cloud benchmarking recipes for Nemotron-4 340B
//! (TP 8 × PP 8 interleaved over 12 virtual stages, one sequence per micro-batch and 16 per step:
//! a deep pipeline whose bubble is set by few micro-batches) and Nemotron-4 15B (TP 4, no
//! pipeline), BF16 and FP8, 16 to 2,048 GPUs. With the shipped constants every row is within
//! ±6.5 % (mean |error| 3.3 %; 340B 2.1 %, 15B 4.0 %). The bounds guard against a change that
//! would move the pipeline schedule, FP8 or the data-parallel terms away from these runs.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{parse_measured_runs, validate};

const NEMOTRON: &str = include_str!("data/nemotron-runs.json");

#[test]
fn every_row_is_read_with_its_recipes_layout_and_predicted_within_ten_percent() {
    let file = parse_measured_runs(NEMOTRON).expect("the file reads");
    assert_eq!(file.rows.len(), 26);
    let report = validate(&file, ModeKind::Extended);
    let mut sum = 0.0;
    for r in &report.rows {
        assert!(!r.skipped, "{}: skipped ({:?})", r.id, r.reason);
        let config = r.config.as_deref().unwrap_or("");
        let layout = if r.id.contains("340b") { "tp8 pp8" } else { "tp4 pp1" };
        assert!(config.contains(layout), "{}: {config}", r.id);
        if r.id.contains("340b") {
            assert!(config.contains("vpp 12") && config.contains("rc selective"), "{}: {config}", r.id);
        }
        let e = r.error.expect("evaluated");
        eprintln!(
            "{:32} measured {:5.2} s predicted {:5.2} s {:+5.1} %",
            r.id,
            r.measured_step_s.unwrap(),
            r.predicted_step_s.unwrap(),
            100.0 * e
        );
        assert!(e.abs() < 0.10, "{}: {:+.3}", r.id, e);
        sum += e.abs();
    }
    let mean = sum / report.rows.len() as f64;
    eprintln!("mean |error| {:.1} %", 100.0 * mean);
    assert!(mean < 0.06, "mean |error| {mean}");
}
