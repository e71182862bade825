//! `fmperf validate` on measured Mixture-of-Experts runs (a file of the shape of
//! `measured-moe-runs.json`, or `--data builtin-moe`): per row the predicted and measured figure
//! in the row's own convention (model TFLOP/s per device, else tokens/s per device), the error,
//! memory where measured, the expert layout; then per source the leave-one-source-out error of
//! the fitted MoE constant beside the in-sample error.

use std::io::Write;

use fmperf_core::validate::moe_fit::{fit_rows, moe_fit_report_for_file};
use fmperf_core::validate::moe_runs::{MoeMetric, validate_moe_runs};

use super::{CmdError, CmdResult};
use crate::args::OutputFormat;
use crate::table::Table;

fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{:+.1}", v * 100.0))
}

fn num(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| if v >= 100.0 { format!("{v:.0}") } else { format!("{v:.1}") })
}

/// Prints the MoE validation of `text` in `format`.
pub fn run(text: &str, format: OutputFormat, out: &mut dyn Write) -> CmdResult {
    let rows = validate_moe_runs(text).map_err(|e| CmdError::Usage(format!("--data: {e}")))?;
    let fit = moe_fit_report_for_file(&fit_rows(text).map_err(|e| CmdError::Usage(format!("--data: {e}")))?);
    if format == OutputFormat::Json {
        let doc = serde_json::json!({ "rows": rows, "fit": fit });
        writeln!(out, "{doc}")?;
        return Ok(());
    }
    let mut t = Table::new(&[
        "id",
        "metric",
        "measured",
        "predicted",
        "error [%]",
        "LOSO error [%]",
        "peak allocated measured [GB]",
        "peak allocated predicted [GB]",
        "ep/etp/edp",
        "notes or why skipped",
    ]);
    for r in &rows {
        let loso = fit.rows.iter().find(|(id, _, _)| *id == r.id).map(|(_, l, _)| *l);
        let metric = match r.metric {
            Some(MoeMetric::TflopsPerDevice) => "TFLOP/s/device",
            Some(MoeMetric::TokensPerDevice) => "tokens/s/device",
            None => "-",
        };
        t.push(vec![
            r.id.clone(),
            metric.to_string(),
            num(r.measured),
            num(r.predicted),
            pct(r.error),
            pct(loso),
            num(r.measured_memory_gb),
            num(r.predicted_memory_gb),
            r.experts.map_or("-".into(), |(a, b, c)| format!("{a}/{b}/{c}")),
            r.notes.join("; "),
        ]);
    }
    write!(out, "{}", t.render())?;
    let mut s = Table::new(&[
        "source",
        "rows",
        "LOSO mean |error| [%]",
        "in-sample mean |error| [%]",
        "layer overhead fitted without it [ms]",
        "expert GEMM issue fitted without it [µs]",
    ]);
    for h in &fit.sources {
        s.push(vec![
            h.source.clone(),
            h.loso.evaluated.to_string(),
            num(h.loso.mape.map(|m| m * 100.0)),
            num(h.in_sample.mape.map(|m| m * 100.0)),
            format!("{:.1}", h.constants.overhead_s * 1e3),
            format!("{:.1}", h.constants.expert_gemm_issue_s * 1e6),
        ]);
    }
    s.push(vec![
        "all".into(),
        fit.loso.evaluated.to_string(),
        num(fit.loso.mape.map(|m| m * 100.0)),
        num(fit.in_sample.mape.map(|m| m * 100.0)),
        format!("{:.1} (all rows)", fit.constants.overhead_s * 1e3),
        format!("{:.1} (all rows)", fit.constants.expert_gemm_issue_s * 1e6),
    ]);
    let skipped = rows.iter().filter(|r| r.error.is_none()).count();
    writeln!(out, "\n{} of {} rows evaluated ({skipped} skipped)", rows.len() - skipped, rows.len())?;
    write!(out, "{}", s.render())?;
    Ok(())
}
