//! Validation against the shipped measured MoE runs: rows read, FLOP conventions reproduced,
//! memory where measured, and the leave-one-source-out error of the one fitted MoE constant.

use fmperf_core::validate::moe_fit::{fit_rows, moe_fit_report};
use fmperf_core::validate::moe_flops::model_flops_per_token;
use fmperf_core::validate::moe_runs::{MOE_RUNS_JSON, interpret_moe_row, validate_moe_runs};
use serde_json::Value;

fn rows() -> Vec<Value> {
    let doc: Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    doc["rows"].as_array().unwrap().clone()
}

#[test]
fn flop_conventions_reproduce_the_files_consistency_column() {
    // Every row with a formula figure: our count under the row's convention within 1 %.
    let mut checked = 0;
    for row in rows() {
        let Some(want) = row["flop_check"]["formula_gflop_per_token"].as_f64() else { continue };
        let Ok(s) = interpret_moe_row(&row) else { continue };
        let Some(rules) = s.rules else { continue };
        let got = model_flops_per_token(&s.workload, &rules) * 1e-9;
        assert!((got / want - 1.0).abs() < 0.01, "{}: {got:.2} vs {want} GFLOP/token", row["id"]);
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
}

#[test]
fn rows_are_evaluated_and_memory_is_within_15_percent() {
    let results = validate_moe_runs(MOE_RUNS_JSON).unwrap();
    assert_eq!(results.len(), 53);
    let evaluated = results.iter().filter(|r| r.error.is_some()).count();
    // The issue's bar: at least 50 of the 53 rows evaluated.
    assert!(evaluated >= 50, "{evaluated}");
    for r in &results {
        if r.error.is_none() {
            assert!(!r.notes.is_empty(), "{}: skipped without a reason", r.id);
        }
        if let (Some(m), Some(p)) = (r.measured_memory_gb, r.predicted_memory_gb) {
            assert!((p / m - 1.0).abs() < 0.15, "{}: memory {p:.1} vs {m:.1} GB", r.id);
        }
    }
}

#[test]
fn leave_one_source_out_error_is_reported_beside_in_sample() {
    let rows = fit_rows(MOE_RUNS_JSON).unwrap();
    let fit = moe_fit_report(&rows);
    let (loso, ins) = (fit.loso.mape.unwrap(), fit.in_sample.mape.unwrap());
    assert!(fit.sources.len() >= 8);
    // Out of sample is never better than in sample on the whole set; the issue's bar is a
    // leave-one-source-out MAPE of at most 20 % (17.9 % / 17.3 % in sample with the two fitted
    // constants, the overlapped exchange's SM share and DeepEP's bandwidths; 18.3 % / 18.0 %
    // before; see `data/moe-physics.md` and the validation note for the per-source figures).
    assert!(loso >= ins - 1e-9, "{loso} vs {ins}");
    assert!(ins < 0.20 && loso <= 0.20, "in-sample {ins:.3}, LOSO {loso:.3}");
    // The shipped constants are the all-rows fit.
    assert!((fit.constants.overhead_s - fmperf_core::extended::moe::layer::FITTED_LAYER_OVERHEAD_S).abs() < 1e-9);
    assert!(
        (fit.constants.expert_gemm_issue_s - fmperf_core::extended::moe::layer::FITTED_EXPERT_GEMM_ISSUE_S).abs()
            < 1e-12
    );
}
