//! The explorer's shared state: the scenario as typed (`live`, updated on every keystroke and
//! validated at once), the scenario in the URL (what is searched), the running search with its
//! progress, and the last finished search.
//!
//! Searches run through [`crate::runner::spawn_parallel`]: as shards on the page's Web Workers,
//! merged by the core into the single run's result, or in ~10 ms slices where workers are
//! unavailable; a new valid scenario cancels the running search and starts another; an invalid one
//! starts nothing.

use std::sync::Arc;

use fmperf_core::Error;
use fmperf_core::explore::{ConfigReport, ExploreResult, ExploreSearch, ReportContext};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::UserEntries;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};
use leptos::prelude::*;

use super::keys;
use crate::runner::{Jobs, Sliced, TaskHandle, spawn_parallel};
use crate::storage;
use crate::url_state::UrlState;

/// A finished search and what its reports need.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedSearch {
    /// The scenario searched.
    pub spec: ExploreSpec,
    /// Shared inputs of the reports (budget, FLOPs per sample, peak, capacity).
    pub ctx: ReportContext,
    /// Per-strategy and merged results.
    pub result: ExploreResult,
    /// Wall time from start to finish [ms].
    pub elapsed_ms: f64,
    /// Why nothing was found, or why the results use fewer devices than asked, with the nearest
    /// scenarios that work (core's diagnosis; `None`: every search used all devices and fits).
    pub diagnosis: Option<fmperf_core::search::Diagnosis>,
    /// How the searches departed from the reference's enumeration (partial domains, fewer
    /// devices), one sentence each.
    pub widening: Vec<fmperf_core::vocab::Note>,
}

impl FinishedSearch {
    /// Reports of the merged list (`None`) or one strategy's list.
    pub fn reports(&self, list: Option<fmperf_core::Strategy>) -> Vec<ConfigReport> {
        fmperf_app::results::reports(&self.ctx, &self.result, list)
    }
}

/// Where the search stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Run {
    /// Nothing running.
    Idle,
    /// Running: `(evaluated, total)` candidates; `slow` once it has run for more than
    /// [`SLOW_MS`] (then progress and a cancel button show).
    Running { done: u64, total: u64, slow: bool },
    /// Cancelled by the user.
    Cancelled,
}

/// After this long a running search shows its progress and a cancel button [ms].
pub const SLOW_MS: f64 = 100.0;

/// The progress line changes at most this often [ms]: each change costs the browser a style,
/// layout and paint of the page, which a 10 ms slice of search would otherwise pay every frame
/// (about a sixth of the first search's time in a profile).
const PROGRESS_MS: f64 = 100.0;

/// How long after the page's first search the worker pool starts [ms] (it then serves the next).
const WARM_AFTER_MS: u64 = 500;

/// The explorer's state, in context.
#[derive(Clone, Copy)]
pub struct Explorer {
    /// The URL state.
    pub url: UrlState,
    /// The scenario as typed right now.
    pub live: RwSignal<ExploreFields>,
    /// Validation of `live` (problems of each field, for the messages at the fields).
    pub live_check: Memo<Result<(), Vec<Error>>>,
    /// The mode in the URL (`mode`, `ext`; see [`crate::mode_panel`]), or its problem.
    pub mode: Memo<Result<Mode, Error>>,
    /// The user's own models and systems.
    pub entries: Memo<UserEntries>,
    /// The system picker's entries ([`fmperf_app::pickers::system_picks`] of `entries`): read by
    /// the system select and each system option, computed once (mapping every catalog system is
    /// a large part of the page's first render).
    pub system_picks: Memo<Vec<fmperf_app::pickers::Pick>>,
    /// The scenario in the URL, validated in that mode (what is searched).
    pub spec: Memo<Result<ExploreSpec, Vec<Error>>>,
    /// The search's progress.
    pub run: RwSignal<Run>,
    /// The last finished search.
    pub outcome: RwSignal<Option<Arc<FinishedSearch>>>,
    /// The running task (to cancel it).
    task: StoredValue<Option<TaskHandle>, LocalStorage>,
    /// A cancelled run's scenario can be started again.
    rerun: RwSignal<u64>,
}

pub use fmperf_app::explorer::mode_defaults;

/// The scenario as typed, resolved in `mode` against the catalogs and the user's `entries`:
/// numbers typed as `4k` or `1e12` read as such, an empty batch the model's own.
pub fn resolve(f: &ExploreFields, mode: &Mode, entries: &UserEntries) -> Result<ExploreSpec, Vec<Error>> {
    fmperf_app::jobs::explore_spec(f, mode, entries)
}

/// The search of `fields` (resolved as `spec`) as jobs for the worker pool, when it has workers:
/// their merge is the whole search, finished, as one run leaves it.
pub fn search_jobs(
    fields: &ExploreFields,
    mode: &Mode,
    entries: &UserEntries,
    spec: &ExploreSpec,
) -> Option<Jobs<ExploreSearch>> {
    let workers = crate::pool::size()?;
    // A search is short: one that would wait for workers to start (the page's first) runs in time
    // slices, and the workers start for the next once it has had the page's first moments. An
    // MoE model's search in extended mode is not (about a millisecond per candidate, seconds in
    // all): it waits the workers' start and runs on every core from the first.
    let long = mode.kind().prices_experts(spec.model_entry.moe.as_ref()) == Some(true);
    if !crate::pool::is_warm() && !long {
        set_timeout(crate::pool::warm, std::time::Duration::from_millis(WARM_AFTER_MS));
        return None;
    }
    let jobs = fmperf_app::jobs::explore_jobs(fields, mode, entries, workers as u64);
    let spec = spec.clone();
    Some(Jobs::new(&jobs, move |answers| fmperf_app::jobs::merge_explore(spec, answers)))
}

fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or_else(|| js_sys::Date::now())
}

/// The explorer's search as a sliced task.
pub struct Task(pub ExploreSearch);

impl Sliced for Task {
    type Output = (ExploreResult, Option<fmperf_core::search::Diagnosis>, Vec<fmperf_core::vocab::Note>);
    fn step(&mut self, units: usize) -> bool {
        self.0.step(units)
    }
    fn progress(&self) -> (u64, u64) {
        self.0.progress()
    }
    fn finish(self) -> Self::Output {
        let result = self.0.result();
        (result, self.0.diagnose(), self.0.widening_notes())
    }
}

impl Explorer {
    /// Creates the state and starts following the URL.
    pub fn new(url: UrlState) -> Explorer {
        let from_url = Memo::new(move |_| url.query.with(keys::fields_from_query));
        let live = RwSignal::new(from_url.get_untracked());
        // The URL wins when it changes (back/forward, a saved scenario, a debounced write).
        Effect::new(move |_| {
            let f = from_url.get();
            if live.get_untracked() != f {
                live.set(f);
            }
        });
        // Extended mode when the URL names none, reference mode for an old permalink
        // (`fmperf_app::mode`).
        let mode = Memo::new(move |_| url.query.with(fmperf_app::explorer::mode_from_query));
        // The user's own models and systems (Catalog view), resolved next to the built-in ones.
        let entries = Memo::new(move |_| storage::user_entries());
        let in_mode = move |f: &ExploreFields| match mode.get() {
            Ok(m) => entries.with(|u| resolve(f, &m, u)),
            Err(e) => Err(vec![e]),
        };
        let spec = Memo::new(move |_| from_url.with(in_mode));
        // The scenario as typed is the URL's until the user types: its check is then the URL's
        // (resolved once, not twice, at start-up).
        let live_check = Memo::new(move |_| {
            if live.with(|f| from_url.with(|u| f == u)) {
                spec.with(|s| s.as_ref().map(|_| ()).map_err(Clone::clone))
            } else {
                live.with(|f| in_mode(f).map(|_| ()))
            }
        });
        let system_picks = Memo::new(move |_| entries.with(fmperf_app::pickers::system_picks));
        let ex = Explorer {
            url,
            live,
            live_check,
            mode,
            entries,
            system_picks,
            spec,
            run: RwSignal::new(Run::Idle),
            outcome: RwSignal::new(None),
            task: StoredValue::new_local(None),
            rerun: RwSignal::new(0),
        };
        Effect::new(move |_| {
            ex.rerun.track();
            if let Ok(spec) = ex.spec.get() {
                ex.start(spec, from_url.get_untracked());
            }
        });
        on_cleanup(move || ex.cancel_task());
        ex
    }

    fn cancel_task(&self) {
        self.task.try_update_value(|t| {
            if let Some(t) = t.take() {
                t.cancel();
            }
        });
    }

    /// Starts searching `spec`, resolved from `fields` (cancelling what runs).
    fn start(&self, spec: ExploreSpec, fields: ExploreFields) {
        self.cancel_task();
        if self.outcome.with_untracked(|o| o.as_ref().is_some_and(|o| o.spec == spec)) {
            self.run.set(Run::Idle);
            return;
        }
        let ctx = match ReportContext::new(&spec) {
            Ok(c) => c,
            Err(_) => return,
        };
        let search = match ExploreSearch::new(spec.clone()) {
            Ok(s) => s,
            Err(_) => return,
        };
        let jobs = match self.mode.get_untracked() {
            Ok(mode) => search_jobs(&fields, &mode, &self.entries.get_untracked(), &spec),
            Err(_) => None,
        }
        .map(|j| j.map(|whole| Task(whole).finish()));
        let started = now_ms();
        let run = self.run;
        let outcome = self.outcome;
        run.set(Run::Running { done: 0, total: 0, slow: false });
        // When the progress line last changed [ms]; `NEG_INFINITY`: not shown yet.
        let shown = std::cell::Cell::new(f64::NEG_INFINITY);
        let handle = spawn_parallel(
            move || Task(search),
            jobs,
            move |(done, total)| {
                let now = now_ms();
                if now - started <= SLOW_MS {
                    return;
                }
                if now - shown.get() >= PROGRESS_MS {
                    shown.set(now);
                    run.try_set(Run::Running { done, total, slow: true });
                }
            },
            move |(result, diagnosis, widening)| {
                let elapsed_ms = now_ms() - started;
                outcome.try_set(Some(Arc::new(FinishedSearch { spec, ctx, result, elapsed_ms, diagnosis, widening })));
                run.try_set(Run::Idle);
            },
        );
        self.task.set_value(Some(handle));
    }

    /// Cancels the running search (its results are not shown).
    pub fn cancel(&self) {
        self.cancel_task();
        self.run.set(Run::Cancelled);
    }

    /// Runs the current scenario again (after a cancel).
    pub fn run_again(&self) {
        self.rerun.update(|n| *n += 1);
    }

    /// The error of `field` in the live scenario, if any.
    pub fn live_error(&self, field: &str) -> Option<String> {
        self.live_check.with(|r| match r {
            Err(errors) => errors.iter().find(|e| e.is_at(field)).map(super::widgets::field_message),
            Ok(()) => None,
        })
    }

    /// Whether the last finished search is for the scenario in the URL.
    pub fn outcome_is_current(&self) -> bool {
        let current = self.spec.with(|s| s.as_ref().ok().cloned());
        self.outcome.with(|o| match (o, current) {
            (Some(o), Some(spec)) => o.spec == spec,
            _ => false,
        })
    }
}
