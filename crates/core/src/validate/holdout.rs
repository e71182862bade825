//! The headline accuracy: every row predicted with constants fitted **without its source**
//! (leave-one-source-out), next to the in-sample errors (constants fitted on every row).
//!
//! Extended mode fits its global efficiencies ([`super::fit::fit_on`]); for each source with
//! evaluable rows the fit is redone on the other sources' rows and that source's rows are
//! predicted with the result. A file with a single source (one's own runs) is predicted with the
//! shipped constants, which were not fitted on it. Reference mode fits nothing, so its held-out errors are its
//! in-sample errors (and [`Holdout::fitted`] is `false`).
//!
//! The work is resumable ([`HoldoutJob::step`] runs one fit), so a page can show progress;
//! [`holdout`] runs it to the end. On the shipped file it takes about one second natively.

use super::compare::{Mode, Prepared, RowResult, Stats};
use super::fit::fit_on;
use super::schema::MeasuredFile;
use crate::extended::efficiency::Efficiency;

/// One row's held-out and in-sample errors.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HeldRow {
    /// Row id.
    pub id: String,
    /// Source title.
    pub source: String,
    /// Catalog id of the part.
    pub hardware: String,
    /// Parameters of the model [billions] (stated, else counted from the shape).
    pub params_b: f64,
    /// Whether the model is a mixture of experts.
    pub moe: bool,
    /// `predicted / measured − 1` with constants fitted without the row's source.
    pub error: f64,
    /// The same with constants fitted on every row.
    pub in_sample_error: f64,
}

/// One source's held-out statistics.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HeldSource {
    /// Source title.
    pub source: String,
    /// Constants fitted without it (extended mode).
    pub efficiency: Option<Efficiency>,
    /// Its rows predicted with them.
    pub leave_one_source_out: Stats,
    /// Its rows predicted with the constants fitted on every row.
    pub in_sample: Stats,
}

/// Leave-one-source-out errors of a file in one mode.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Holdout {
    /// The mode.
    pub mode: Mode,
    /// Whether the mode fits constants on the rows (extended) or not (reference).
    pub fitted: bool,
    /// The headline: every evaluated row predicted without its source.
    pub leave_one_source_out: Stats,
    /// Beside it: every evaluated row predicted with constants fitted on all rows.
    pub in_sample: Stats,
    /// The constants fitted on every row (extended mode).
    pub efficiency: Option<Efficiency>,
    /// Per source, in file order.
    pub per_source: Vec<HeldSource>,
    /// Per evaluated row (not serialized: [`super::compare::RowResult::error_loso`] carries it).
    #[serde(skip)]
    pub rows: Vec<HeldRow>,
}

/// Leave-one-source-out as resumable work.
#[derive(Debug, Clone)]
pub struct HoldoutJob {
    mode: Mode,
    rows: Vec<Prepared>,
    sources: Vec<String>,
    all: Option<Efficiency>,
    held: Vec<(String, Efficiency)>,
}

impl HoldoutJob {
    /// Reads every row of `file` (cheap next to the fits).
    pub fn new(file: &MeasuredFile, mode: Mode) -> HoldoutJob {
        let rows: Vec<Prepared> = file.rows.iter().map(Prepared::new).collect();
        let mut sources: Vec<String> = Vec::new();
        for r in &rows {
            if Self::timed(r) && !sources.contains(&r.run.source) {
                sources.push(r.run.source.clone());
            }
        }
        HoldoutJob { mode, rows, sources, all: None, held: Vec::new() }
    }

    /// Whether a row has a time figure extended mode can price.
    fn timed(r: &Prepared) -> bool {
        r.setup.as_ref().is_ok_and(|s| s.metric.is_some()) && r.hardware.is_ok()
    }

    /// `(fits done, fits in all)`.
    pub fn progress(&self) -> (u64, u64) {
        match self.mode {
            Mode::Reference => (1, 1),
            Mode::Extended => (u64::from(self.all.is_some()) + self.held.len() as u64, 1 + self.sources.len() as u64),
        }
    }

    /// Whether every fit has run.
    pub fn is_done(&self) -> bool {
        let (done, all) = self.progress();
        done == all
    }

    /// Runs the next fit; returns `true` when all are done.
    pub fn step(&mut self) -> bool {
        if self.mode == Mode::Extended {
            if self.all.is_none() {
                self.all = Some(fit_on(&self.rows, &|_| true));
            } else if let Some(s) = self.sources.get(self.held.len()).cloned() {
                // A file with one source (a user's own runs) has nothing else to fit on: its rows
                // are predicted with the shipped constants, which were not fitted on them.
                let others = self.rows.iter().any(|r| r.run.source != s && Self::timed(r));
                let eff = if others { fit_on(&self.rows, &|r| r.run.source != s) } else { Efficiency::FITTED };
                self.held.push((s, eff));
            }
        }
        self.is_done()
    }

    /// Runs what is left and returns the result.
    pub fn finish(mut self) -> Holdout {
        while !self.step() {}
        let fitted = self.mode == Mode::Extended;
        let all_eta = self.all.unwrap_or(Efficiency::FITTED);
        let predict = |r: &Prepared, eta: Efficiency| -> RowResult { r.predict(self.mode, eta) };
        let mut rows = Vec::new();
        let mut per_source = Vec::new();
        for s in &self.sources {
            let eta = self.held.iter().find(|(h, _)| h == s).map_or(all_eta, |(_, e)| *e);
            let (mut held, mut inside) = (Vec::new(), Vec::new());
            for r in self.rows.iter().filter(|r| &r.run.source == s) {
                let (Some(e_in), Some(e_out)) = (predict(r, all_eta).error, predict(r, eta).error) else { continue };
                held.push(e_out);
                inside.push(e_in);
                let setup = r.setup.as_ref().ok();
                rows.push(HeldRow {
                    id: r.run.id.clone(),
                    source: s.clone(),
                    hardware: setup.map_or(String::new(), |x| x.system.id.clone()),
                    params_b: r.run.model.params_b.unwrap_or_else(|| {
                        setup.map_or(0.0, |x| {
                            let w = &x.workload;
                            let gqa = x.options.grouped_query_attention;
                            (w.layers as f64 * w.block_parameters(gqa, w.gated_mlp) + w.vocab_parameters()) * 1e-9
                        })
                    }),
                    moe: false,
                    error: e_out,
                    in_sample_error: e_in,
                });
            }
            per_source.push(HeldSource {
                source: s.clone(),
                efficiency: fitted.then_some(eta),
                leave_one_source_out: Stats::of(&held, 0),
                in_sample: Stats::of(&inside, 0),
            });
        }
        let out: Vec<f64> = rows.iter().map(|r| r.error).collect();
        let inside: Vec<f64> = rows.iter().map(|r| r.in_sample_error).collect();
        Holdout {
            mode: self.mode,
            fitted,
            leave_one_source_out: Stats::of(&out, 0),
            in_sample: Stats::of(&inside, 0),
            efficiency: fitted.then_some(all_eta),
            per_source,
            rows,
        }
    }
}

/// Leave-one-source-out errors of `file` in `mode` (see the module documentation).
pub fn holdout(file: &MeasuredFile, mode: Mode) -> Holdout {
    HoldoutJob::new(file, mode).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_mode_has_nothing_to_hold_out() {
        let h = holdout(&crate::validate::shipped_runs(), Mode::Reference);
        assert!(!h.fitted);
        assert_eq!(h.leave_one_source_out, h.in_sample);
        assert!(h.rows.iter().all(|r| r.error == r.in_sample_error));
        assert!(h.rows.len() > 50);
    }
}
