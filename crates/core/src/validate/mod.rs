//! Validation against measured training runs: a file in the schema of
//! `data/measured-training-runs.json` (given as text; core reads no files) is parsed
//! ([`schema`]), each row is read at its exact configuration ([`row`]), predicted in reference or
//! extended mode and converted to the row's own measurement convention ([`convention`]), and the
//! errors `predicted / measured − 1` are summarised per source and overall ([`compare`]). [`fit`]
//! holds the fit of extended mode's one global constant and its leave-one-source-out check.
//!
//! The published file is compiled in ([`MEASURED_RUNS_JSON`], a copy of
//! `shared/data/measured-training-runs.json` with every row's source).

pub mod compare;
pub mod convention;
pub mod fit;
pub mod moe_fit;
pub mod moe_flops;
pub mod moe_runs;
pub mod row;
pub mod schema;

pub use compare::{Mode, Report, RowResult, Stats, Summary, csv, short_source, validate, validate_with};
pub use fit::{FitJob, FitReport, fit_efficiency, fit_report};
pub use schema::{MeasuredFile, MeasuredRun, parse_measured_runs};

/// The measured runs fmperf ships (108 rows from eight sources; each row names its source).
pub const MEASURED_RUNS_JSON: &str = include_str!("../../data/measured-training-runs.json");

/// The shipped measured runs, parsed.
pub fn shipped_runs() -> MeasuredFile {
    // The shipped file is checked by the tests; an error here would be a build defect.
    parse_measured_runs(MEASURED_RUNS_JSON).unwrap_or_default()
}
