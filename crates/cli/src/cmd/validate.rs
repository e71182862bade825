//! `fmperf validate`: predicted against measured for every row of a file of measured training runs
//! (the schema of `measured-training-runs.json`), in reference or extended mode; `--fit` refits the
//! global efficiencies of extended mode and reports the leave-one-source-out error.

use std::io::Write;

use fmperf_core::extended::efficiency::Efficiency;
use fmperf_core::validate::{self, Mode, Report, Stats, parse_measured_runs};

use super::{CmdError, CmdResult};
use crate::args::Format;
use crate::table::Table;

/// Help text of `fmperf validate`.
pub const HELP: &str = "\
fmperf validate — the model against measured training runs

USAGE: fmperf validate --data FILE.json|builtin [--mode reference|extended] [--format table|json] [--fit]

Reads a file in the schema of measured-training-runs.json (`builtin`: the 108 runs fmperf ships) or
of measured-moe-runs.json (`builtin-moe`: the 53 Mixture-of-Experts runs; any file whose rows name
`num_experts`; always extended mode, with the leave-one-source-out error of the fitted MoE constant),
evaluates every row it can at the row's exact configuration (parallel degrees, batch, precision,
recomputation, ZeRO/FSDP, interleaving), converts the predicted iteration time into the row's own
measurement (tokens/s per device, model TFLOP/s per device, MFU, Megatron's hardware-FLOP TFLOP/s
or seconds per iteration, as its `flop_convention` says) and prints per row the predicted and
measured values and error = predicted / measured - 1 (a fraction: 0.05 = 5 % too fast), or why the
row was skipped; then the summary overall and per source.

  --mode     reference (the published model) or extended (default)
  --format   table (default) or json: {\"rows\": [{\"id\", \"predicted\", \"measured\", \"metric\",
             \"error\", \"skipped\", \"reason\", ...}], \"summary\": {\"evaluated\", \"skipped\", \"mape\",
             \"median_abs_error\", ..., \"per_source\": [...]}}
  --fit      refit extended mode's efficiencies on the file and report the leave-one-source-out
             error (fit without a source, predict it)
";

/// Runs `fmperf validate`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let args = crate::args::Args::parse(raw, &["data", "mode", "format"], &["help", "fit"])?;
    if args.flag("help") {
        write!(out, "{HELP}")?;
        return Ok(());
    }
    if let Some(p) = args.positional().first() {
        return Err(CmdError::Usage(format!("unexpected argument `{p}`; see --help")));
    }
    let format = Format::from_args(&args, &[Format::Table, Format::Json])?;
    let mode = match args.value("mode")? {
        None => Mode::Extended,
        Some(m) => {
            Mode::parse(m).ok_or_else(|| CmdError::Usage(format!("--mode {m}: must be reference or extended")))?
        }
    };
    let data = args.required("data")?;
    let text = if data == "builtin" {
        validate::MEASURED_RUNS_JSON.to_string()
    } else if data == "builtin-moe" {
        fmperf_core::validate::moe_runs::MOE_RUNS_JSON.to_string()
    } else {
        std::fs::read_to_string(data)
            .map_err(|e| CmdError::Usage(format!("--data {data}: cannot read the file: {e}")))?
    };
    // Mixture-of-Experts runs (their rows name routed experts) have a validation of their own.
    if super::validate_moe::is_moe_file(&text) {
        return super::validate_moe::run(&text, format, out);
    }
    let file = parse_measured_runs(&text).map_err(|e| CmdError::Usage(format!("--data {data}: {e}")))?;
    if args.flag("fit") {
        let fit = validate::fit_report(&file);
        match format {
            Format::Json => writeln!(out, "{}", serde_json::to_string(&fit).unwrap_or_default())?,
            _ => write!(out, "{}", fit_table(&fit))?,
        }
        return Ok(());
    }
    let report = validate::validate(&file, mode);
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&report).unwrap_or_default())?,
        _ => write!(out, "{}", report_table(&report))?,
    }
    Ok(())
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{:+.1}", v * 100.0))
}

fn abs_pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{:.1}", v * 100.0))
}

fn number(x: Option<f64>) -> String {
    match x {
        None => "-".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn stats_row(name: &str, s: &Stats) -> Vec<String> {
    vec![
        name.to_string(),
        s.evaluated.to_string(),
        s.skipped.to_string(),
        abs_pct(s.mape),
        abs_pct(s.median_abs_error),
        pct(s.median_error),
    ]
}

const STATS_HEADER: [&str; 6] =
    ["source", "evaluated", "skipped", "mean |error| [%]", "median |error| [%]", "median error [%]"];

fn report_table(r: &Report) -> String {
    let mut t = Table::new(&["id", "metric", "measured", "predicted", "error [%]", "skipped: reason"]);
    for row in &r.rows {
        t.push(vec![
            row.id.clone(),
            row.metric.unwrap_or("-").to_string(),
            number(row.measured),
            number(row.predicted),
            pct(row.error),
            row.reason.clone().unwrap_or_default(),
        ]);
    }
    let mut s = Table::new(&STATS_HEADER);
    for p in &r.summary.per_source {
        s.push(stats_row(&p.source, &p.stats));
    }
    s.push(stats_row("all sources", &r.summary.overall));
    let eff = r.efficiency;
    let mode = match r.mode {
        Mode::Reference => "reference mode (the published model)".to_string(),
        Mode::Extended => format!(
            "extended mode (η = {:.3} of the matmul ceiling, η_att = {:.3} in attention)",
            eff.matmul, eff.attention
        ),
    };
    format!("{mode}; error = predicted / measured − 1 (positive: predicted too fast)\n\n{}\n{}", t.render(), s.render())
}

fn fit_table(f: &validate::FitReport) -> String {
    let e = |x: Efficiency| format!("{:.3} / {:.3}", x.matmul, x.attention);
    let mut t =
        Table::new(&["held-out source", "η / η_att fitted without it", "rows", "mean |error| [%]", "median error [%]"]);
    for h in &f.per_source {
        t.push(vec![
            h.source.clone(),
            e(h.efficiency),
            h.stats.evaluated.to_string(),
            abs_pct(h.stats.mape),
            pct(h.stats.median_error),
        ]);
    }
    format!(
        "fitted on all rows: η / η_att = {} (shipped: {})\nin-sample: mean |error| {} %, median |error| {} % over {} rows\n\
         leave-one-source-out: mean |error| {} %, median |error| {} %\n\n{}",
        e(f.efficiency),
        e(Efficiency::FITTED),
        abs_pct(f.in_sample.mape),
        abs_pct(f.in_sample.median_abs_error),
        f.in_sample.evaluated,
        abs_pct(f.leave_one_source_out.mape),
        abs_pct(f.leave_one_source_out.median_abs_error),
        t.render()
    )
}
