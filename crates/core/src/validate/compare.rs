//! Predicted against measured: each row evaluated in one mode at its exact configuration,
//! converted to the row's own metric, with its error `predicted / measured − 1`, and summaries per
//! source and overall.

use super::convention::{Metric, iteration_flops};
use super::row::{RunSetup, interpret};
use super::schema::{MeasuredFile, MeasuredRun};
use crate::extended::efficiency::{Efficiency, median};
use crate::extended::{self, ExtendedOptions, Hardware};
use crate::reference;

/// Which model predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The published model, bit-exact (spec).
    Reference,
    /// Extended mode with each row's own switches.
    Extended,
}

impl Mode {
    /// `reference` / `extended`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Reference => "reference",
            Mode::Extended => "extended",
        }
    }

    /// Parses `reference` / `extended`.
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reference" | "ref" => Some(Mode::Reference),
            "extended" | "ext" => Some(Mode::Extended),
            _ => None,
        }
    }
}

/// One row's outcome.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RowResult {
    /// Row id.
    pub id: String,
    /// Source title.
    pub source: String,
    /// Hardware id.
    pub hardware: Option<String>,
    /// The configuration evaluated, in one line (when the row could be read).
    pub config: Option<String>,
    /// The metric with its unit (when the row states one fmperf reads).
    pub metric: Option<&'static str>,
    /// Predicted value in the metric's unit.
    pub predicted: Option<f64>,
    /// Measured value in the metric's unit.
    pub measured: Option<f64>,
    /// `predicted / measured − 1` (0.05 = 5 % high).
    pub error: Option<f64>,
    /// Whether the row was not evaluated.
    pub skipped: bool,
    /// Why it was skipped.
    pub reason: Option<String>,
    /// Predicted iteration time [s].
    pub predicted_step_s: Option<f64>,
    /// Measured iteration time, read back through the metric's convention [s].
    pub measured_step_s: Option<f64>,
    /// Predicted training throughput [tokens/s per device] (the same error as the metric's).
    pub predicted_tokens_per_s: Option<f64>,
    /// Measured training throughput, read back through the metric's convention [tokens/s per device].
    pub measured_tokens_per_s: Option<f64>,
    /// Rules applied for fields the source leaves unstated.
    pub assumptions: Vec<String>,
    /// Where the predicted time goes (compute, memory, communication, bubble) [s].
    pub totals: Option<reference::Totals>,
}

/// Error statistics of a set of rows (fractions: 0.05 = 5 %).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Stats {
    /// Rows evaluated.
    pub evaluated: usize,
    /// Rows skipped.
    pub skipped: usize,
    /// Mean absolute error `mean |predicted/measured − 1|` (`null` when nothing was evaluated).
    pub mape: Option<f64>,
    /// Median absolute error.
    pub median_abs_error: Option<f64>,
    /// Mean signed error (positive: predicted too fast).
    pub mean_error: Option<f64>,
    /// Median signed error.
    pub median_error: Option<f64>,
}

impl Stats {
    /// Statistics of `errors` with `skipped` rows besides.
    pub fn of(errors: &[f64], skipped: usize) -> Stats {
        let n = errors.len();
        let mut abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
        let mut signed = errors.to_vec();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        Stats {
            evaluated: n,
            skipped,
            mape: mean(&abs),
            median_abs_error: median(&mut abs),
            mean_error: mean(errors),
            median_error: median(&mut signed),
        }
    }
}

/// Statistics of one source.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SourceStats {
    /// Source title.
    pub source: String,
    /// Its statistics.
    #[serde(flatten)]
    pub stats: Stats,
}

/// The summary of a validation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Overall statistics.
    #[serde(flatten)]
    pub overall: Stats,
    /// Per source, in file order.
    pub per_source: Vec<SourceStats>,
}

/// A validation of one file in one mode.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// The mode.
    pub mode: Mode,
    /// The efficiencies used by extended mode.
    pub efficiency: Efficiency,
    /// Every row, in file order.
    pub rows: Vec<RowResult>,
    /// Summaries.
    pub summary: Summary,
}

/// A row read and priced once, ready to be predicted at any `η`.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The run.
    pub run: MeasuredRun,
    /// The setup, or why there is none.
    pub setup: Result<RunSetup, String>,
    /// Extended mode's hardware for it.
    pub hardware: Result<Hardware, String>,
}

impl Prepared {
    /// Reads a run.
    pub fn new(run: &MeasuredRun) -> Prepared {
        let setup = interpret(run);
        let hardware = match &setup {
            Ok(s) => s.hardware(),
            Err(e) => Err(e.clone()),
        };
        Prepared { run: run.clone(), setup, hardware }
    }

    /// Predicts the row in `mode` (extended mode with efficiencies `eta`).
    pub fn predict(&self, mode: Mode, eta: Efficiency) -> RowResult {
        let run = &self.run;
        let mut r = RowResult {
            id: run.id.clone(),
            source: run.source.clone(),
            hardware: run.hardware_id.clone(),
            config: None,
            metric: None,
            predicted: None,
            measured: None,
            error: None,
            skipped: true,
            reason: None,
            predicted_step_s: None,
            measured_step_s: None,
            predicted_tokens_per_s: None,
            measured_tokens_per_s: None,
            assumptions: Vec::new(),
            totals: None,
        };
        let setup = match &self.setup {
            Ok(s) => s,
            Err(reason) => {
                r.reason = Some(reason.clone());
                return r;
            }
        };
        r.config = Some(setup.describe());
        r.metric = Some(setup.metric.name());
        r.measured = Some(setup.measured);
        r.assumptions = setup.assumptions.clone();
        let outcome = match mode {
            Mode::Extended => self.hardware.clone().and_then(|hw| {
                let opts = ExtendedOptions {
                    matmul_efficiency: eta.matmul,
                    attention_efficiency: eta.attention,
                    gemm_half_dim: eta.gemm_half_dim,
                    attention_half_seq: eta.attention_half_seq,
                    ..setup.options
                };
                extended::evaluate(&setup.workload, &hw, &setup.layout, &opts)
                    .map(|e| e.totals)
                    .map_err(|e| format!("extended mode cannot evaluate it: {e}"))
            }),
            Mode::Reference => setup.reference().and_then(|(shape, params, c)| {
                reference::evaluate(&shape, &params, setup.layout.global_batch, &c)
                    .map(|e| e.totals)
                    .map_err(|e| format!("reference mode cannot evaluate it: {e}"))
            }),
        };
        let totals = match outcome {
            Ok(t) => t,
            Err(reason) => {
                r.reason = Some(reason);
                return r;
            }
        };
        match predicted_metric(setup, totals.t) {
            Ok(pred) => {
                let err = pred / setup.measured - 1.0;
                r.predicted = Some(pred);
                r.error = Some(err);
                r.skipped = false;
                r.predicted_step_s = Some(totals.t);
                r.measured_step_s = Some(if setup.metric.higher_is_faster() {
                    totals.t * pred / setup.measured
                } else {
                    setup.measured
                });
                let l = &setup.layout;
                let tokens = l.global_batch as f64 * setup.workload.seq_len as f64 / l.devices() as f64;
                r.predicted_tokens_per_s = Some(tokens / totals.t);
                r.measured_tokens_per_s = r.measured_step_s.map(|t| tokens / t);
                r.totals = Some(totals);
            }
            Err(reason) => r.reason = Some(reason),
        }
        r
    }
}

/// The row's metric for an iteration of `t` seconds.
pub fn predicted_metric(setup: &RunSetup, t: f64) -> Result<f64, String> {
    let l = &setup.layout;
    let devices = l.devices() as f64;
    let batch = l.global_batch as f64;
    Ok(match setup.metric {
        Metric::StepTime => t,
        Metric::TokensPerDevice => batch * setup.workload.seq_len as f64 / (t * devices),
        Metric::TflopsPerDevice(conv) => iteration_flops(conv, &setup.convention_shape, batch)? / (t * devices) * 1e-12,
        Metric::Mfu(conv) => {
            if setup.mfu_peak_tflops <= 0.0 {
                return Err("MFU needs the dense peak of the precision, which the catalog does not list".to_string());
            }
            iteration_flops(conv, &setup.convention_shape, batch)? / (t * devices * setup.mfu_peak_tflops * 1e12)
        }
    })
}

/// A short name of a source: its title up to the first comma or parenthesis
/// (`Narayanan et al. 2021`, `MosaicML llm-foundry MPT training benchmarks`).
pub fn short_source(title: &str) -> &str {
    let end = title.find([',', '(']).unwrap_or(title.len());
    let s = title[..end].trim();
    if s.is_empty() { title.trim() } else { s }
}

/// Summaries of a list of row results (sources in order of first appearance).
pub fn summarise(rows: &[RowResult]) -> Summary {
    let stats = |rs: &[&RowResult]| {
        let errors: Vec<f64> = rs.iter().filter_map(|r| r.error).collect();
        let skipped = rs.iter().filter(|r| r.skipped).count();
        Stats::of(&errors, skipped)
    };
    let mut sources: Vec<&str> = Vec::new();
    for r in rows {
        if !sources.contains(&r.source.as_str()) {
            sources.push(&r.source);
        }
    }
    let all: Vec<&RowResult> = rows.iter().collect();
    Summary {
        overall: stats(&all),
        per_source: sources
            .iter()
            .map(|s| SourceStats {
                source: s.to_string(),
                stats: stats(&rows.iter().filter(|r| r.source == *s).collect::<Vec<_>>()),
            })
            .collect(),
    }
}

/// The rows of `reports` as CSV, one line per row and mode, with a header (units in the names).
pub fn csv(reports: &[&Report]) -> String {
    use crate::sweep::export::csv_cell;
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let mut out = String::from(
        "mode,id,source,hardware,configuration,metric,measured,predicted,error,skipped,reason,\
         measured_tokens_per_s_per_device,predicted_tokens_per_s_per_device,measured_step_s,predicted_step_s\n",
    );
    for r in reports {
        for row in &r.rows {
            let cells = [
                r.mode.as_str().to_string(),
                row.id.clone(),
                row.source.clone(),
                row.hardware.clone().unwrap_or_default(),
                row.config.clone().unwrap_or_default(),
                row.metric.unwrap_or("").to_string(),
                num(row.measured),
                num(row.predicted),
                num(row.error),
                row.skipped.to_string(),
                row.reason.clone().unwrap_or_default(),
                num(row.measured_tokens_per_s),
                num(row.predicted_tokens_per_s),
                num(row.measured_step_s),
                num(row.predicted_step_s),
            ];
            let line: Vec<String> = cells.iter().map(|c| csv_cell(c)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out
}

/// Validates every row of `file` in `mode` (extended mode with the fitted efficiencies).
pub fn validate(file: &MeasuredFile, mode: Mode) -> Report {
    validate_with(file, mode, Efficiency::FITTED)
}

/// Validates every row of `file` in `mode`, extended mode with efficiencies `eta`.
pub fn validate_with(file: &MeasuredFile, mode: Mode, eta: Efficiency) -> Report {
    let rows: Vec<RowResult> = file.rows.iter().map(|r| Prepared::new(r).predict(mode, eta)).collect();
    let summary = summarise(&rows);
    Report { mode, efficiency: eta, rows, summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_by_hand() {
        let s = Stats::of(&[0.1, -0.3, 0.2], 2);
        assert_eq!((s.evaluated, s.skipped), (3, 2));
        assert!((s.mape.unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(s.median_abs_error, Some(0.2));
        assert_eq!(s.median_error, Some(0.1));
        assert!((s.mean_error.unwrap() - 0.0).abs() < 1e-12);
        assert_eq!(Stats::of(&[], 1).mape, None);
        assert_eq!(Mode::parse("Extended"), Some(Mode::Extended));
        assert_eq!(Mode::parse("x"), None);
        assert_eq!(short_source("Narayanan et al. 2021, Efficient Large-Scale"), "Narayanan et al. 2021");
        assert_eq!(short_source("MosaicML llm-foundry (mosaicml/llm-foundry)"), "MosaicML llm-foundry");
        assert_eq!(short_source("(odd)"), "(odd)");
        let file = crate::validate::shipped_runs();
        let r = validate(&file, Mode::Extended);
        let text = csv(&[&r]);
        assert_eq!(text.lines().count(), 1 + 108);
        assert!(text.lines().nth(1).unwrap().starts_with("extended,narayanan21_t1_1p7b,\"Narayanan et al. 2021,"));
    }
}
