//! The headline accuracy: every row predicted with constants fitted **without its source**
//! (leave-one-source-out), next to the in-sample errors (constants fitted on every row).
//!
//! Extended mode fits its global efficiencies ([`super::fit::fit_on`]) on a **pool**: the file's
//! rows and the shipped runs the constants are fitted on ([`super::shipped_runs`]), so a file of
//! someone else's runs is judged by constants that never saw it, with the shipped data behind
//! them (not by constants refitted on a handful of its own rows). For each source of the file with
//! evaluable rows the fit is redone on the pool without that source — without its rows, the
//! shipped rows of the same source title, and any shipped row that is the same run
//! ([`same_run`]: a file may restate a published run in other words) — and that source's rows are
//! predicted with the result. On the shipped file itself the pool is that file (rows are not
//! counted twice). Reference mode fits nothing, so its held-out errors are its in-sample errors
//! (and [`Holdout::fitted`] is `false`).
//!
//! The fits run side by side, one size pair of the grid at a time, each point priced once for all
//! of them and summed per source ([`super::fit_cache`]), so that a file of many sources costs
//! about what one fit on its rows does. The work is resumable ([`HoldoutJob::step`] runs one fit
//! at one size pair), so a page can show progress; [`holdout`] runs it to the end.

use super::compare::{RowResult, Stats};
use super::fit::MultiFit;
use super::fit_cache::{FitCache, Keep, Pool};
use super::prepared::Prepared;
use super::schema::MeasuredFile;
use crate::extended::efficiency::Efficiency;
use crate::mode_kind::ModeKind;

/// One row's held-out and in-sample errors.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    pub mode: ModeKind,
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
    mode: ModeKind,
    /// The file's rows, then the shipped rows not in the file (extended mode).
    rows: Vec<Prepared>,
    /// How many of `rows` are the file's.
    file_rows: usize,
    sources: Vec<String>,
    /// The fits: on every row, then each source held out (one with no other row to fit on is
    /// not run: the shipped constants, which were not fitted on it, stand in).
    fits: MultiFit,
    /// Which source each fit after the first holds out.
    held_sources: Vec<usize>,
    /// The rows' groups and their errors at the points the fits try, shared by the fits.
    cache: FitCache,
}

impl HoldoutJob {
    /// Reads every row of `file` (cheap next to the fits).
    pub fn new(file: &MeasuredFile, mode: ModeKind) -> HoldoutJob {
        Self::with_pool(file, mode, &super::shipped_runs())
    }

    /// As [`HoldoutJob::new`] with `shipped` as the runs behind the file's (tests pass others).
    pub fn with_pool(file: &MeasuredFile, mode: ModeKind, shipped: &MeasuredFile) -> HoldoutJob {
        let mut rows: Vec<Prepared> = file.rows.iter().map(Prepared::new).collect();
        let file_rows = rows.len();
        let mut sources: Vec<String> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for r in &rows {
            if Self::timed(r) && !index.contains_key(&r.run.source) {
                index.insert(r.run.source.clone(), sources.len());
                sources.push(r.run.source.clone());
            }
        }
        if mode.has_fitted_constants() {
            let ids: std::collections::HashSet<(&str, &str)> =
                file.rows.iter().map(|f| (f.id.as_str(), f.source.as_str())).collect();
            let extra: Vec<Prepared> = shipped
                .rows
                .iter()
                .filter(|s| !ids.contains(&(s.id.as_str(), s.source.as_str())))
                .map(Prepared::new)
                .filter(Self::timed)
                .collect();
            rows.extend(extra);
        }
        // Pool row i counts as source s: one of its rows, or a shipped row of that source title or
        // of the same run as one of its rows. Worked out once (a row of a file restating a
        // shipped run is compared with every shipped row once, not once per source).
        let source_index = |title: &str| index.get(title).copied();
        let mut member_of: Vec<Vec<usize>> =
            rows.iter().map(|r| source_index(&r.run.source).into_iter().collect()).collect();
        let file_sources: Vec<Option<usize>> = rows[..file_rows].iter().map(|f| source_index(&f.run.source)).collect();
        for (i, r) in rows.iter().enumerate().skip(file_rows) {
            for (f, s) in rows[..file_rows].iter().zip(&file_sources) {
                if let Some(s) = *s
                    && !member_of[i].contains(&s)
                    && same_run(f, r)
                {
                    member_of[i].push(s);
                }
            }
        }
        let timed: Vec<bool> = rows.iter().map(Self::timed).collect();
        // Nothing else to fit on (no shipped runs behind a file of one source): no fit.
        let held_sources: Vec<usize> =
            (0..sources.len()).filter(|s| (0..rows.len()).any(|i| timed[i] && !member_of[i].contains(s))).collect();
        let fitted = mode.has_fitted_constants() && !sources.is_empty();
        let keeps = if fitted {
            std::iter::once(Keep::All).chain(held_sources.iter().map(|&s| Keep::Without(s))).collect()
        } else {
            Vec::new()
        };
        let cache = if fitted { FitCache::new(&rows, &member_of, sources.len()) } else { FitCache::default() };
        HoldoutJob { mode, rows, file_rows, sources, fits: MultiFit::new(keeps), held_sources, cache }
    }

    /// Whether a row has a time figure extended mode can price.
    fn timed(r: &Prepared) -> bool {
        r.setup.as_ref().is_ok_and(|s| s.metric.is_some()) && r.hardware.is_ok()
    }

    /// `(units done, units in all)`: a unit is one fit (on every row, or a source held out) at
    /// one size pair of the grid ([`MultiFit`]).
    pub fn progress(&self) -> (u64, u64) {
        // A file without a time figure has nothing to fit or hold out.
        if self.mode.has_fitted_constants() && !self.sources.is_empty() { self.fits.progress() } else { (1, 1) }
    }

    /// Whether every fit has run.
    pub fn is_done(&self) -> bool {
        let (done, all) = self.progress();
        done == all
    }

    /// Runs the next unit; returns `true` when all are done.
    pub fn step(&mut self) -> bool {
        if self.mode.has_fitted_constants() && !self.sources.is_empty() {
            self.fits.step(Pool { rows: &self.rows, cache: &self.cache });
        }
        self.is_done()
    }

    /// Runs what is left and returns the result.
    pub fn finish(mut self) -> Holdout {
        while !self.step() {}
        let fitted = self.mode.has_fitted_constants();
        let results = self.fits.results();
        let all_eta = results.first().copied().unwrap_or(Efficiency::FITTED);
        let held: Vec<(usize, Efficiency)> =
            self.held_sources.iter().copied().zip(results.iter().skip(1).copied()).collect();
        let predict = |r: &Prepared, eta: Efficiency| -> RowResult { r.predict(self.mode, eta) };
        let mut rows = Vec::new();
        let mut per_source = Vec::new();
        // The file's rows of each source, in file order (one pass, not one per source).
        let mut of_source: Vec<Vec<&Prepared>> = vec![Vec::new(); self.sources.len()];
        let index: std::collections::HashMap<&str, usize> =
            self.sources.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
        for r in &self.rows[..self.file_rows] {
            if let Some(&i) = index.get(r.run.source.as_str()) {
                of_source[i].push(r);
            }
        }
        for (si, s) in self.sources.iter().enumerate() {
            // A source without a fit of its own (nothing else to fit on): the shipped constants.
            let eta = match held.iter().find(|(h, _)| *h == si) {
                Some((_, e)) => *e,
                None if fitted => Efficiency::FITTED,
                None => all_eta,
            };
            let (mut held, mut inside) = (Vec::new(), Vec::new());
            for r in of_source[si].iter().copied() {
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
                            let gqa = x.options.model.grouped_query_attention;
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

/// Whether two rows restate the same measured run: the same part and mapping, model, layout
/// (TP, CP, PP, DP, micro and global batch) and execution (every switch: recomputation, sharding,
/// precision, …) — everything that the model prices.
pub fn same_run(a: &Prepared, b: &Prepared) -> bool {
    match (&a.setup, &b.setup) {
        (Ok(x), Ok(y)) => {
            let (l, m) = (&x.layout, &y.layout);
            x.system.id == y.system.id
                && x.mapping == y.mapping
                && x.workload == y.workload
                && (l.tp, l.cp, l.pp, l.dp, l.mbs, l.global_batch) == (m.tp, m.cp, m.pp, m.dp, m.mbs, m.global_batch)
                && x.options == y.options
        }
        _ => false,
    }
}

/// Leave-one-source-out errors of `file` in `mode` (see the module documentation).
pub fn holdout(file: &MeasuredFile, mode: ModeKind) -> Holdout {
    HoldoutJob::new(file, mode).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_mode_has_nothing_to_hold_out() {
        let h = holdout(&crate::validate::shipped_runs(), ModeKind::Reference);
        assert!(!h.fitted);
        assert_eq!(h.leave_one_source_out, h.in_sample);
        assert!(h.rows.iter().all(|r| r.error == r.in_sample_error));
        assert!(h.rows.len() > 50);
    }
}
