//! A measured figure faster than the part can go is skipped with the rule, never scored
//! (`validate/plausible.rs`); plausible figures of every kind are scored as before.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{MeasuredRun, parse_measured_runs, shipped_runs, validate};

/// The first shipped row (GPT 1.7B on 32 A100, 137 TFLOP/s per device measured) with its
/// measured figures replaced by `field = value`.
fn narayanan_with(field: &str, value: f64) -> MeasuredRun {
    let mut r = shipped_runs().rows[0].clone();
    assert_eq!(r.measured.tflops_per_device, Some(137.0));
    let m = &mut r.measured;
    m.tflops_per_device = None;
    match field {
        "tflops" => m.tflops_per_device = Some(value),
        "mfu" => m.mfu = Some(value),
        "step" => m.step_time_s = Some(value),
        "tok" => m.tokens_per_s_per_device = Some(value),
        _ => unreachable!(),
    }
    r
}

fn reason(run: MeasuredRun) -> Option<String> {
    let mut file = parse_measured_runs(r#"{"rows": []}"#).unwrap();
    file.rows.push(run);
    let report = validate(&file, ModeKind::Extended);
    let row = &report.rows[0];
    assert_eq!(row.skipped, row.reason.is_some(), "{row:?}");
    row.reason.clone()
}

#[test]
fn figures_beyond_the_peak_are_skipped_with_the_rule() {
    // The A100's dense BF16 peak is 312 TFLOP/s; an MFU above 1 is read as per cent (150 %).
    for (field, value) in [("tflops", 5000.0), ("tflops", 1e308), ("tflops", 313.0), ("mfu", 150.0)] {
        let why = reason(narayanan_with(field, value)).unwrap_or_else(|| panic!("{field} = {value} was scored"));
        assert!(why.starts_with("implausible measured figure"), "{why}");
        assert!(why.contains("312"), "{why}");
    }
    // The row's 1,048,576 tokens in 1 ms on 32 devices is ~1e5 model TFLOP/s per device.
    let why = reason(narayanan_with("step", 1e-3)).expect("a 1 ms step was scored");
    assert!(why.contains("1.5 × the part's dense peak"), "{why}");
    let why = reason(narayanan_with("tok", 1e9)).expect("1e9 tokens/s per device was scored");
    assert!(why.contains("tokens_per_s_per_device"), "{why}");
}

#[test]
fn plausible_figures_are_scored() {
    // 137 TFLOP/s is the published figure; 300 is fast but possible; MFU 0.44 as stated; a step
    // of 9 s is in the row's neighbourhood.
    for (field, value) in [("tflops", 137.0), ("tflops", 300.0), ("mfu", 0.44), ("step", 9.0), ("tok", 3000.0)] {
        assert_eq!(reason(narayanan_with(field, value)), None, "{field} = {value}");
    }
}
