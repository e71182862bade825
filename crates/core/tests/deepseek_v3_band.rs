//! DeepSeek-V3's published pre-training run (technical report, arXiv 2412.19437: 2,048 H800, PP 16
//! with DualPipe, EP 64, FP8 with FP8 dispatch; 1,543 tokens/s per GPU from 14.8 T tokens in
//! 2.664 M H800 GPU hours) predicted from its own words, against the error bar the explorer shows
//! for such a prediction (issue 32: "DeepSeek-V3's published run reproduced within its band, with
//! the overlap it used").
//!
//! The band is the leave-one-source-out error of the shipped runs of the same part class (NVIDIA
//! Hopper) and model class (mixture of experts over 100 B parameters), as
//! [`error_band_for`] draws it; the run itself is not a shipped row, so it is out of sample.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::error_bands::{ModelClass, error_band_for};
use fmperf_core::validate::moe_runs::{interpret_moe_row, predict_moe_row};

#[test]
fn deepseek_v3_report_run_is_inside_the_band_the_explorer_shows() {
    let row: serde_json::Value = serde_json::from_str(include_str!("data/deepseek-v3-report-run.json")).unwrap();
    let setup = interpret_moe_row(&row).expect("the report's run is read");
    let (predicted, _, _) = predict_moe_row(&setup, &setup.options).expect("the run is priced");
    let error = predicted / setup.measured - 1.0;
    let system = fmperf_core::resolve::builtin_system(&setup.hardware_id).expect("the row's part is in the catalog");
    let band = error_band_for(ModeKind::Extended, system, ModelClass::of_workload(&setup.workload));
    let p80 = band.p80_abs_error.expect("shipped MoE runs stand behind the band");
    eprintln!(
        "DeepSeek-V3 report run: {predicted:.0} vs {:.0} tokens/s per GPU ({:+.1} %); band: {} ({} runs, p80 ±{:.1} %)",
        setup.measured,
        100.0 * error,
        band.message,
        band.runs,
        100.0 * p80
    );
    assert!(band.model.moe, "the band is drawn for a mixture of experts: {:?}", band.model);
    assert!(error.abs() <= p80, "{:+.1} % outside the band's ±{:.1} % (80 % of runs)", 100.0 * error, 100.0 * p80);
}
