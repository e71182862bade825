//! The selected configuration (URL key `sel`, else the best of the shown list), fully evaluated
//! in the scenario (and mode) of the last finished search, for the breakdown and the layer
//! drill-down.

use fmperf_core::cost::Detail;
use fmperf_core::explore::ConfigReport;
use fmperf_core::mode::Mode;
use fmperf_core::search::code::parse_candidate;
use leptos::prelude::*;

use super::keys;
use super::state::Explorer;

/// A selected configuration: its full evaluation and its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Selected {
    /// Its full evaluation in the mode: the reference's layer rows, DP/PP pseudo-layers and totals,
    /// or extended mode's totals and what it adds.
    pub evaluation: Detail,
    /// The mode that evaluated it.
    pub mode: Mode,
    /// Headline numbers and breakdowns.
    pub report: ConfigReport,
    /// Its rank in the shown list (1-based), if it is in it.
    pub rank: Option<usize>,
    /// Model depth [blocks] (for the layer table).
    pub depth: u64,
}

/// The selection, or why there is none (`Ok(None)`: nothing to select yet).
pub fn selection(ex: Explorer) -> Memo<Result<Option<Selected>, String>> {
    Memo::new(move |_| {
        let sel = ex.url.get(keys::SEL);
        let list = ex.url.query.with(keys::list_from_query);
        let Some(o) = ex.outcome.get() else { return Ok(None) };
        let shown = o.reports(list);
        let candidate = match sel.as_deref().map(parse_candidate) {
            Some(Ok(c)) => c,
            Some(Err(e)) => return Err(format!("The selected configuration cannot be read: {e}")),
            None => match shown.first() {
                Some(r) => r.candidate,
                None => return Ok(None),
            },
        };
        let spec = &o.spec;
        let evaluation = spec
            .evaluate(&candidate)
            .map_err(|e| format!("The selected configuration is not valid for this scenario: {e}"))?;
        let rank = shown.iter().position(|r| r.candidate == candidate).map(|i| i + 1);
        let report = ConfigReport::of_detail(&o.ctx, &candidate, &evaluation);
        Ok(Some(Selected { evaluation, mode: spec.mode, report, rank, depth: spec.model.depth }))
    })
}
