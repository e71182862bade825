//! Predicted against measured: each row evaluated in one mode at its exact configuration,
//! converted to the row's own metric, with its error `predicted / measured − 1`; its memory figure
//! (or outcome) compared with the prediction of the same kind ([`super::memory`]); and summaries
//! per source and overall, for time and for memory.

use super::memory::{self, MemoryResult, MemorySummary};
use super::prepared::Prepared;
use super::schema::MeasuredFile;
use crate::extended::efficiency::{Efficiency, median};
use crate::vocab::Note;

use crate::mode_kind::ModeKind;

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
    /// The metric with its unit (when the row has a time figure).
    pub metric: Option<String>,
    /// The time figure in fmperf's structured form (`measured.metric` of the schema:
    /// `{"kind", "value", "flops", "peak_tflops"}`), as read from the row.
    pub metric_structured: Option<serde_json::Value>,
    /// Predicted value in the metric's unit.
    pub predicted: Option<f64>,
    /// Measured value in the metric's unit.
    pub measured: Option<f64>,
    /// `predicted / measured − 1` (0.05 = 5 % high), with the constants fitted on every row.
    pub error: Option<f64>,
    /// The same with constants fitted without the row's source (leave-one-source-out; filled by
    /// [`validate_headline`]; equal to `error` in reference mode, which fits nothing).
    pub error_loso: Option<f64>,
    /// The same after calibrating the stack on one other run of the row's source and system
    /// ([`super::one_shot`]; filled by [`validate_headline`] in extended mode).
    pub error_one_shot: Option<f64>,
    /// Whether the row has a time figure that was not evaluated (rows without a time figure are
    /// neither evaluated nor skipped for time).
    pub skipped: bool,
    /// Why it was skipped (or, for a row without a time figure, why it could not be read at all).
    pub reason: Option<String>,
    /// Whether the row states a time figure.
    pub has_time_figure: bool,
    /// Predicted iteration time [s].
    pub predicted_step_s: Option<f64>,
    /// Measured iteration time, read back through the metric's convention [s].
    pub measured_step_s: Option<f64>,
    /// Predicted training throughput [tokens/s per device] (the same error as the metric's).
    pub predicted_tokens_per_s: Option<f64>,
    /// Measured training throughput, read back through the metric's convention [tokens/s per device].
    pub measured_tokens_per_s: Option<f64>,
    /// Rules applied for fields the source leaves unstated.
    pub assumptions: Vec<Note>,
    /// Where the predicted time goes (compute, memory, communication, bubble) [s].
    pub totals: Option<crate::vocab::Totals>,
    /// The memory comparison, for rows with a memory figure or an outcome.
    pub memory: Option<MemoryResult>,
}

/// Error statistics of a set of rows (fractions: 0.05 = 5 %).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Rows evaluated.
    pub evaluated: usize,
    /// Rows skipped.
    pub skipped: usize,
    /// Mean absolute error `mean |predicted/measured − 1|` (`null` when nothing was evaluated).
    pub mape: Option<f64>,
    /// Median absolute error.
    pub median_abs_error: Option<f64>,
    /// Mean signed error (positive: predicted above the measured figure: faster for a throughput,
    /// slower for a step time).
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
    /// Overall statistics of the time figures.
    #[serde(flatten)]
    pub overall: Stats,
    /// Per source, in file order.
    pub per_source: Vec<SourceStats>,
    /// Rows without a time figure (memory-only rows).
    pub no_time_figure: usize,
    /// The memory figures and outcomes.
    pub memory: MemorySummary,
}

/// A validation of one file in one mode.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// The mode.
    pub mode: ModeKind,
    /// The efficiencies used by extended mode.
    pub efficiency: Efficiency,
    /// Every row, in file order.
    pub rows: Vec<RowResult>,
    /// Summaries.
    pub summary: Summary,
    /// The headline: leave-one-source-out errors (with the in-sample ones beside them), when
    /// computed ([`validate_headline`]).
    pub leave_one_source_out: Option<super::holdout::Holdout>,
    /// The one-shot calibration check ([`super::one_shot`]), when computed.
    pub one_shot: Option<super::one_shot::OneShot>,
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
    let sources = sources_of(rows);
    let all: Vec<&RowResult> = rows.iter().filter(|r| r.has_time_figure || r.skipped).collect();
    Summary {
        overall: stats(&all),
        per_source: sources
            .iter()
            .map(|s| SourceStats {
                source: s.to_string(),
                stats: stats(&all.iter().copied().filter(|r| r.source == *s).collect::<Vec<_>>()),
            })
            .filter(|s| s.stats.evaluated + s.stats.skipped > 0)
            .collect(),
        no_time_figure: rows.len() - all.len(),
        memory: MemorySummary::of(rows, &sources),
    }
}

/// The sources of `rows`, in order of first appearance.
pub fn sources_of(rows: &[RowResult]) -> Vec<String> {
    let mut sources: Vec<String> = Vec::new();
    for r in rows {
        if !sources.contains(&r.source) {
            sources.push(r.source.clone());
        }
    }
    sources
}

/// The rows of `reports` as CSV, one line per row and mode, with a header (units in the names).
pub fn csv(reports: &[&Report]) -> String {
    use crate::sweep::export::csv_cell;
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let mut out = String::from(
        "mode,id,source,hardware,configuration,metric,measured,predicted,error,skipped,reason,\
         measured_tokens_per_s_per_device,predicted_tokens_per_s_per_device,measured_step_s,predicted_step_s,\
         memory_kind,measured_memory_gb,predicted_memory_gb,capacity_gb,fits,memory_error\n",
    );
    for r in reports {
        for row in &r.rows {
            let cells = [
                r.mode.as_str().to_string(),
                row.id.clone(),
                row.source.clone(),
                row.hardware.clone().unwrap_or_default(),
                row.config.clone().unwrap_or_default(),
                row.metric.clone().unwrap_or_default(),
                num(row.measured),
                num(row.predicted),
                num(row.error),
                row.skipped.to_string(),
                row.reason.clone().unwrap_or_default(),
                num(row.measured_tokens_per_s),
                num(row.predicted_tokens_per_s),
                num(row.measured_step_s),
                num(row.predicted_step_s),
                row.memory.as_ref().map_or(String::new(), |m| m.kind.to_string()),
                num(row.memory.as_ref().and_then(|m| m.measured_gb)),
                num(row.memory.as_ref().and_then(|m| m.predicted_gb)),
                num(row.memory.as_ref().and_then(|m| m.capacity_gb)),
                row.memory.as_ref().and_then(|m| m.fits).map_or(String::new(), |f| f.as_str().to_string()),
                num(row.memory.as_ref().and_then(|m| m.error)),
            ];
            let line: Vec<String> = cells.iter().map(|c| csv_cell(c)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
    }
    out
}

/// Validates every row of `file` in `mode` (extended mode with the fitted efficiencies).
pub fn validate(file: &MeasuredFile, mode: ModeKind) -> Report {
    validate_with(file, mode, Efficiency::FITTED)
}

/// Validates every row of `file` in `mode`, extended mode with efficiencies `eta`.
pub fn validate_with(file: &MeasuredFile, mode: ModeKind, eta: Efficiency) -> Report {
    let prepared: Vec<Prepared> = file.rows.iter().map(Prepared::new).collect();
    report_of(file, &prepared, mode, eta)
}

/// [`validate_with`] of the file's rows already read (`prepared`, in file order).
fn report_of(file: &MeasuredFile, prepared: &[Prepared], mode: ModeKind, eta: Efficiency) -> Report {
    let mut rows: Vec<RowResult> = prepared.iter().map(|p| p.predict(mode, eta)).collect();
    let pool = memory_pool(file, prepared, &rows, mode, eta);
    memory::hold_out_fragmentation(&mut rows, &pool);
    let summary = summarise(&rows);
    Report { mode, efficiency: eta, rows, summary, leave_one_source_out: None, one_shot: None }
}

/// The shipped memory runs behind a file's memory rows: the fragmentation constant of a held-out
/// source is fitted on them and on the file's other sources, as time's constants are
/// ([`super::holdout`]). Rows of the file itself are not added twice, and a shipped row that is the
/// same run as one of the file's ([`super::holdout::same_run`]) counts as that row's source, so it
/// is held out with it. Empty when the file has no scored memory row or in reference mode.
fn memory_pool(
    file: &MeasuredFile,
    prepared: &[Prepared],
    rows: &[RowResult],
    mode: ModeKind,
    eta: Efficiency,
) -> Vec<RowResult> {
    if !mode.has_fitted_constants() || !rows.iter().any(|r| r.memory.as_ref().is_some_and(|m| m.error.is_some())) {
        return Vec::new();
    }
    super::shipped_memory_runs()
        .rows
        .iter()
        .filter(|s| !file.rows.iter().any(|f| f.id == s.id && f.source == s.source))
        .map(|s| {
            let p = Prepared::new(s);
            let mut r = p.predict(mode, eta);
            if let Some(f) = prepared.iter().find(|f| super::holdout::same_run(f, &p)) {
                r.source = f.run.source.clone();
            }
            r
        })
        .collect()
}

/// Validates every row of `file` in `mode` and adds the headline: every row's error with
/// constants fitted without its source ([`super::holdout`]).
pub fn validate_headline(file: &MeasuredFile, mode: ModeKind) -> Report {
    validate_headline_from(file, mode, super::holdout::holdout(file, mode))
}

/// [`validate_headline`] with the leave-one-source-out work `h` already done (the CLI runs it in
/// steps, with progress): the report, its held-out errors and the one-shot calibration check.
pub fn validate_headline_from(file: &MeasuredFile, mode: ModeKind, h: super::holdout::Holdout) -> Report {
    // The rows read once for the report and the one-shot check (a large file spends much of its
    // time reading its rows' words).
    let prepared: Vec<Prepared> = file.rows.iter().map(Prepared::new).collect();
    let mut report = with_holdout(report_of(file, &prepared, mode, Efficiency::FITTED), h);
    super::one_shot::fill_rows(&mut report, &prepared, crate::calibrate::fit::MEASUREMENT_SIGMA);
    report
}

/// A report with leave-one-source-out errors filled in from `h`.
pub fn with_holdout(mut report: Report, h: super::holdout::Holdout) -> Report {
    // The first held-out row of each (id, source), looked up in one pass (a file of 10,000 rows
    // would otherwise compare 10^8 pairs).
    let mut held: std::collections::HashMap<(&str, &str), f64> = std::collections::HashMap::new();
    for x in &h.rows {
        held.entry((x.id.as_str(), x.source.as_str())).or_insert(x.error);
    }
    for r in report.rows.iter_mut() {
        r.error_loso = held.get(&(r.id.as_str(), r.source.as_str())).copied();
    }
    report.leave_one_source_out = Some(h);
    report
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
        assert_eq!(ModeKind::parse("Extended"), Some(ModeKind::Extended));
        assert_eq!(ModeKind::parse("x"), None);
        assert_eq!(short_source("Narayanan et al. 2021, Efficient Large-Scale"), "Narayanan et al. 2021");
        assert_eq!(short_source("MosaicML llm-foundry (mosaicml/llm-foundry)"), "MosaicML llm-foundry");
        assert_eq!(short_source("(odd)"), "(odd)");
        let file = crate::validate::shipped_runs();
        let r = validate(&file, ModeKind::Extended);
        let text = csv(&[&r]);
        assert_eq!(text.lines().count(), 1 + 108);
        assert!(text.lines().nth(1).unwrap().starts_with("extended,narayanan21_t1_1p7b,\"Narayanan et al. 2021,"));
    }
}
