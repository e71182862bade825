//! The two constants of the Mixture-of-Experts model fitted on measured runs — the fixed time of
//! an MoE layer per micro-batch ([`crate::extended::moe::layer::FITTED_LAYER_OVERHEAD_S`]) and
//! the host time to issue one expert GEMM
//! ([`crate::extended::moe::layer::FITTED_EXPERT_GEMM_ISSUE_S`]) — and their
//! leave-one-source-out (LOSO) check: for each source, the constants are fitted on the other
//! sources' rows (least mean absolute error, coordinate search on two grids) and that source's
//! rows are predicted with them. Everything else (matmul and attention efficiencies, ceilings,
//! network) is the dense model's, not refitted here.

use serde_json::Value;

use super::compare::Stats;
use super::moe_runs::{MoeRunSetup, interpret_moe_row, predict_moe_row};
use super::reason::UnreadFile;

/// Grid of the layer overhead [s]: 0 to 10 ms in steps of 0.1 ms.
const GRID_STEP_S: f64 = 1e-4;
const GRID_STEPS: u32 = 100;
/// Grid of the expert-GEMM issue time [s]: 0 to 100 µs in steps of 2.5 µs.
const ISSUE_STEP_S: f64 = 2.5e-6;
const ISSUE_STEPS: u32 = 40;
/// Rounds of the coordinate search (each fits one constant with the other fixed).
const ROUNDS: usize = 4;

/// The fitted constants.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct MoeConstants {
    /// Fixed time of one MoE layer per micro-batch, forward plus backward [s].
    pub overhead_s: f64,
    /// Host time to issue one expert GEMM [s].
    pub expert_gemm_issue_s: f64,
}

/// One interpreted row with its source and id.
#[derive(Debug, Clone)]
pub struct FitRow {
    /// Row id.
    pub id: String,
    /// Source title.
    pub source: String,
    /// The row set up.
    pub setup: MoeRunSetup,
}

/// The rows of a file of the shape of `measured-moe-runs.json` that can be evaluated.
pub fn fit_rows(text: &str) -> Result<Vec<FitRow>, UnreadFile> {
    let doc: Value = crate::strict_json::parse(text).map_err(|e| UnreadFile::NotJson(e.to_string()))?;
    let rows = doc["rows"].as_array().ok_or(UnreadFile::NoRows)?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            let setup = interpret_moe_row(r).ok()?;
            Some(FitRow {
                id: r["id"].as_str().unwrap_or("?").to_string(),
                source: r["source"]["title"].as_str().or(r["source"].as_str()).unwrap_or("?").to_string(),
                setup,
            })
        })
        .collect())
}

/// Signed error `predicted/measured − 1` of a row with constants `c` (`None`: the row cannot be
/// evaluated).
pub fn row_error(row: &FitRow, c: MoeConstants) -> Option<f64> {
    let mut o = row.setup.options;
    o.moe.layer_overhead_s = c.overhead_s;
    o.moe.expert_gemm_issue_s = c.expert_gemm_issue_s;
    predict_moe_row(&row.setup, &o).ok().map(|(v, _, _)| v / row.setup.measured - 1.0)
}

/// Mean absolute error over `rows` with constants `c` (`None`: no row evaluated).
fn mape(rows: &[&FitRow], c: MoeConstants) -> Option<f64> {
    let errs: Vec<f64> = rows.iter().filter_map(|r| row_error(r, c)).map(f64::abs).collect();
    (!errs.is_empty()).then(|| errs.iter().sum::<f64>() / errs.len() as f64)
}

/// The best point of one grid with the other constant fixed (ties: the smallest value).
fn best_on_grid(rows: &[&FitRow], steps: u32, at: impl Fn(u32) -> MoeConstants) -> Option<(f64, MoeConstants)> {
    let mut best: Option<(f64, MoeConstants)> = None;
    for i in 0..=steps {
        let c = at(i);
        if let Some(m) = mape(rows, c)
            && best.is_none_or(|(b, _)| m < b - 1e-12)
        {
            best = Some((m, c));
        }
    }
    best
}

/// The constants minimising the mean absolute error over `rows`: a coordinate search from
/// (0, 0), each round fitting the layer overhead with the issue time fixed and then the issue
/// time with the overhead fixed, until neither moves (at most `ROUNDS` rounds).
pub fn fit_constants(rows: &[&FitRow]) -> MoeConstants {
    let mut c = MoeConstants::default();
    for _ in 0..ROUNDS {
        let before = c;
        if let Some((_, b)) =
            best_on_grid(rows, GRID_STEPS, |i| MoeConstants { overhead_s: i as f64 * GRID_STEP_S, ..c })
        {
            c = b;
        }
        if let Some((_, b)) =
            best_on_grid(rows, ISSUE_STEPS, |i| MoeConstants { expert_gemm_issue_s: i as f64 * ISSUE_STEP_S, ..c })
        {
            c = b;
        }
        if c == before {
            break;
        }
    }
    c
}

/// One source held out.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HeldOutSource {
    /// Source title.
    pub source: String,
    /// The constants fitted without it.
    pub constants: MoeConstants,
    /// Its rows' errors with those constants (out of sample).
    pub loso: Stats,
    /// Its rows' errors with the constants fitted on all rows (in sample).
    pub in_sample: Stats,
}

/// The fit and its leave-one-source-out check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MoeFitReport {
    /// The constants fitted on every row.
    pub constants: MoeConstants,
    /// Every row's error out of sample (its source held out).
    pub loso: Stats,
    /// Every row's error in sample.
    pub in_sample: Stats,
    /// Per source.
    pub sources: Vec<HeldOutSource>,
    /// `(row id, LOSO error, in-sample error)`.
    pub rows: Vec<(String, f64, f64)>,
}

/// Whether two rows restate the same measured run: the same model, part, precision, mapping,
/// layout (expert degrees included) and switches.
pub fn same_moe_run(a: &MoeRunSetup, b: &MoeRunSetup) -> bool {
    a.workload == b.workload
        && a.hardware_id == b.hardware_id
        && a.precision == b.precision
        && a.mapping == b.mapping
        && a.devices_per_chip == b.devices_per_chip
        && a.layout == b.layout
        && a.options == b.options
}

/// The fit and its check for a file of someone's runs: the constants held out for each of its
/// sources is fitted on the shipped MoE runs ([`super::moe_runs::MOE_RUNS_JSON`]) and the file's
/// other sources, never on that source's rows or a shipped row that is the same run (such a row
/// counts as the file's source). Only the file's rows are reported. On the shipped file itself
/// this is [`moe_fit_report`].
pub fn moe_fit_report_for_file(rows: &[FitRow]) -> MoeFitReport {
    let shipped = fit_rows(super::moe_runs::MOE_RUNS_JSON).unwrap_or_default();
    let mut pool: Vec<FitRow> = rows.to_vec();
    for mut s in shipped {
        if rows.iter().any(|r| r.id == s.id && r.source == s.source) {
            continue;
        }
        if let Some(r) = rows.iter().find(|r| same_moe_run(&r.setup, &s.setup)) {
            s.source = r.source.clone();
        }
        pool.push(s);
    }
    report_on(&pool, rows.len())
}

/// Fits the constants on `rows` and checks them source by source.
pub fn moe_fit_report(rows: &[FitRow]) -> MoeFitReport {
    report_on(rows, rows.len())
}

/// Fits on every row of `rows` and checks each source of its first `reported` rows, reporting
/// those rows only.
fn report_on(rows: &[FitRow], reported: usize) -> MoeFitReport {
    let all: Vec<&FitRow> = rows.iter().collect();
    let tau_all = fit_constants(&all);
    let mut sources: Vec<&str> = Vec::new();
    for r in &rows[..reported] {
        if !sources.contains(&r.source.as_str()) {
            sources.push(&r.source);
        }
    }
    let mut per_source = Vec::new();
    let mut out_rows = Vec::new();
    let (mut loso_all, mut in_all) = (Vec::new(), Vec::new());
    for s in sources {
        let others: Vec<&FitRow> = rows.iter().filter(|r| r.source != s).collect();
        let tau = fit_constants(&others);
        let (mut lo, mut ins) = (Vec::new(), Vec::new());
        for r in rows[..reported].iter().filter(|r| r.source == s) {
            if let (Some(a), Some(b)) = (row_error(r, tau), row_error(r, tau_all)) {
                lo.push(a);
                ins.push(b);
                out_rows.push((r.id.clone(), a, b));
            }
        }
        loso_all.extend_from_slice(&lo);
        in_all.extend_from_slice(&ins);
        per_source.push(HeldOutSource {
            source: s.to_string(),
            constants: tau,
            loso: Stats::of(&lo, 0),
            in_sample: Stats::of(&ins, 0),
        });
    }
    MoeFitReport {
        constants: tau_all,
        loso: Stats::of(&loso_all, 0),
        in_sample: Stats::of(&in_all, 0),
        sources: per_source,
        rows: out_rows,
    }
}

/// The shipped MoE runs' held-out errors as rows of the error bars' kind
/// ([`super::holdout::HeldRow`], `moe: true`, sized by total parameters): each with the
/// constants fitted without its source. Cached with the dense rows
/// ([`super::holdout_cache::shipped_moe_rows`]).
pub fn moe_held_rows(rows: &[FitRow], report: &MoeFitReport) -> Vec<super::holdout::HeldRow> {
    report
        .rows
        .iter()
        .filter_map(|(id, loso, in_sample)| {
            let r = rows.iter().find(|r| &r.id == id)?;
            Some(super::holdout::HeldRow {
                id: id.clone(),
                source: r.source.clone(),
                hardware: r.setup.hardware_id.clone(),
                params_b: crate::extended::moe::parameter_counts(&r.setup.workload).total * 1e-9,
                moe: true,
                error: *loso,
                in_sample_error: *in_sample,
            })
        })
        .collect()
}

/// [`moe_held_rows`] of the shipped MoE runs, computed afresh (about 0.1 s natively).
pub fn shipped_moe_held_rows() -> Vec<super::holdout::HeldRow> {
    let rows = fit_rows(super::moe_runs::MOE_RUNS_JSON).unwrap_or_default();
    moe_held_rows(&rows, &moe_fit_report(&rows))
}
