//! The studies view's shared state: the sweep the URL asks for, the running sweep with its
//! progress, and the last finished one.
//!
//! Sweeps run through [`crate::runner::spawn_parallel`]: as chunks of points on the page's Web
//! Workers, merged by the core into the single run's result, or in ~10 ms slices where workers are
//! unavailable; a new valid sweep cancels the running one and starts; an invalid one starts nothing
//! and says why at its field.

use std::sync::Arc;

use fmperf_core::Error;
use fmperf_core::resolve::sweep_spec::SweepSpec;
use fmperf_core::sweep::{Sweep, SweepResult, SweepText};
use leptos::prelude::*;

use super::keys::{self, Chart, SweepSource};
use crate::mode_panel;
use crate::runner::{Jobs, Sliced, TaskHandle, spawn_parallel};
use crate::url_state::UrlState;

/// A finished sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Its points.
    pub result: Arc<SweepResult>,
    /// Wall time [ms].
    pub elapsed_ms: f64,
}

/// Where the sweep stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SweepRun {
    /// Nothing running.
    Idle,
    /// Running: `(done, total)` work units (candidates) and points finished.
    Running {
        /// Candidates walked.
        done: u64,
        /// Candidates in all (estimated until the spaces are sized).
        total: u64,
    },
    /// Stopped by the user.
    Cancelled,
}

/// The sweep as a time-sliced task.
struct Task(Sweep);

impl Sliced for Task {
    type Output = SweepResult;
    fn step(&mut self, units: usize) -> bool {
        self.0.step(units)
    }
    fn progress(&self) -> (u64, u64) {
        self.0.progress()
    }
    fn finish(self) -> SweepResult {
        self.0.finish()
    }
}

/// The shared state, in context.
#[derive(Clone, Copy)]
pub struct Studies {
    /// The URL state.
    pub url: UrlState,
    /// What the URL asks for.
    pub source: Memo<SweepSource>,
    /// The mode and switch texts of the source (a preset panel's own; none for the user's sweep).
    pub mode_defaults: Memo<(Option<String>, Option<String>)>,
    /// The sweep text in force: the source's with the page-wide mode and switches applied.
    pub text: Memo<SweepText>,
    /// The spec, or the first problem of the inputs.
    pub spec: Memo<Result<SweepSpec, Error>>,
    /// The chart settings.
    pub chart: Memo<Option<Chart>>,
    /// The user's own models and systems.
    pub entries: Memo<fmperf_core::resolve::UserEntries>,
    /// Where the run stands.
    pub run: RwSignal<SweepRun>,
    /// The last finished sweep (kept while a new one runs, cleared when the spec is invalid).
    pub finished: RwSignal<Option<Finished>>,
    handle: StoredValue<Option<TaskHandle>, LocalStorage>,
}

impl Studies {
    /// The state for `url`; starts a sweep whenever the spec changes.
    pub fn new(url: UrlState) -> Studies {
        let source = Memo::new(move |_| url.query.with(keys::source));
        // A preset panel's own mode; for the user's sweep, extended mode unless the URL is an old
        // permalink naming a sweep (then reference, as it was written).
        let mode_defaults = Memo::new(move |_| {
            source.with(|s| match s {
                SweepSource::Preset(..) => (s.text().mode, s.text().ext),
                SweepSource::Custom(_) => {
                    (Some(url.query.with(|q| fmperf_app::mode::default_for(q)).as_str().to_string()), None)
                }
            })
        });
        let text = Memo::new(move |_| {
            let mut t = source.with(SweepSource::text);
            (t.mode, t.ext) = url.query.with(|q| mode_panel::texts(q, &mode_defaults.get()));
            t
        });
        // The user's own models and systems (Catalog view) are usable by name; counts may be typed
        // as `4k` or `1e3`.
        let entries = Memo::new(move |_| crate::storage::user_entries());
        let spec = Memo::new(move |_| text.with(|t| entries.with(|u| fmperf_app::jobs::sweep_spec(t, u))));
        let chart = Memo::new(move |_| {
            let view = source.with(|s| match s {
                SweepSource::Preset(_, p) => Some(p.view.clone()),
                SweepSource::Custom(_) => None,
            });
            spec.with(|s| s.as_ref().ok().map(|s| url.query.with(|q| keys::chart(q, s, view.as_ref()))))
        });
        let st = Studies {
            url,
            source,
            mode_defaults,
            text,
            spec,
            chart,
            entries,
            run: RwSignal::new(SweepRun::Idle),
            finished: RwSignal::new(None),
            handle: StoredValue::new_local(None),
        };
        Effect::new(move |_| {
            if let Ok(spec) = spec.get() {
                st.start(spec);
            } else {
                st.stop();
                st.finished.set(None);
            }
        });
        st
    }

    /// Starts (or restarts) the sweep of `spec`.
    pub fn start(&self, spec: SweepSpec) {
        self.stop();
        let sweep = match Sweep::new(spec.clone()) {
            Ok(s) => s,
            Err(_) => return,
        };
        let st = *self;
        let started = now_ms();
        st.run.set(SweepRun::Running { done: 0, total: sweep.progress().1 });
        let jobs = self.jobs(spec);
        let handle = spawn_parallel(
            move || Task(sweep),
            jobs,
            move |(done, total)| st.run.set(SweepRun::Running { done, total }),
            move |result| {
                st.finished.set(Some(Finished { result: Arc::new(result), elapsed_ms: now_ms() - started }));
                st.run.set(SweepRun::Idle);
            },
        );
        self.handle.set_value(Some(handle));
    }

    /// The sweep of `spec` (the current text's) as chunks for the worker pool, when it has workers.
    fn jobs(&self, spec: SweepSpec) -> Option<Jobs<SweepResult>> {
        let workers = crate::pool::size()?;
        let text = self.text.get_untracked();
        let jobs = self.entries.with_untracked(|u| fmperf_app::jobs::sweep_jobs(&text, u, spec.point_count(), workers));
        Some(Jobs::new(&jobs, move |answers| fmperf_app::jobs::merge_sweep(spec, answers)))
    }

    /// Stops the running sweep, if any.
    pub fn stop(&self) {
        if let Some(h) = self.handle.get_value() {
            if h.is_running() {
                h.cancel();
                self.run.set(SweepRun::Cancelled);
            }
        }
    }

    /// Restarts the current spec (after a cancel).
    pub fn rerun(&self) {
        if let Ok(spec) = self.spec.get_untracked() {
            self.start(spec);
        }
    }
}

/// Milliseconds since an arbitrary origin.
pub fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or_else(|| js_sys::Date::now())
}
