//! "What would help most": once the explorer has the current scenario's results, the sensitivity
//! of that scenario ([`fmperf_core::sensitivity`]: six system features at ×0.5 and ×2, each
//! re-searched) runs on the worker pool (its points split over the workers, merged by the core)
//! or in time slices, and the strip shows its rows ([`fmperf_app::sensitivity::strip`]); each row
//! links to the feature's full sweep in Studies; with a price per device-hour typed (URL key
//! `price`) each factor also says the whole run's cost and its change. A new scenario cancels it before its own search
//! starts, so it never holds up an edit. Styles: `style/sensitivity.css`.

use std::sync::Arc;

use fmperf_app::run_cost;
use fmperf_app::sensitivity::{self as words, Strip};
use fmperf_app::style::SENSITIVITY_CSS;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::sensitivity::{Base, Sensitivity, SensitivityResult};
use leptos::prelude::*;

use super::keys;
use super::state::Explorer;
use crate::runner::{Jobs, Sliced, TaskHandle, spawn_parallel};

/// The sensitivity as a sliced task.
struct Task(Sensitivity);

impl Sliced for Task {
    type Output = SensitivityResult;
    fn step(&mut self, units: usize) -> bool {
        self.0.step(units)
    }
    fn progress(&self) -> (u64, u64) {
        self.0.progress()
    }
    fn finish(self) -> SensitivityResult {
        self.0.result()
    }
}

/// Where the strip stands.
#[derive(Clone, Debug, PartialEq)]
enum State {
    /// No current results to vary.
    Waiting,
    /// Running: `(done, total)` progress units.
    Running(u64, u64),
    /// Finished for this scenario.
    Done(Arc<(ExploreSpec, SensitivityResult)>),
    /// The scenario cannot be varied (why).
    Failed(String),
}

/// The strip, last in the main column (below the details and the cost).
#[component]
pub fn SensitivityStrip() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let state = RwSignal::new(State::Waiting);
    let task: StoredValue<Option<TaskHandle>, LocalStorage> = StoredValue::new_local(None);
    let cancel = move || {
        task.try_update_value(|t| {
            if let Some(t) = t.take() {
                t.cancel();
            }
        });
    };
    // The scenario to vary: the finished results', once they are the current scenario's.
    let current = Memo::new(move |_| {
        let spec = ex.spec.with(|s| s.as_ref().ok().cloned())?;
        ex.outcome.with(|o| o.as_ref().filter(|o| o.spec == spec).map(|o| o.spec.clone()))
    });
    Effect::new(move |_| {
        let Some(spec) = current.get() else {
            // A new scenario is being searched: stop, so its search has every core.
            cancel();
            if matches!(state.get_untracked(), State::Running(..)) {
                state.set(State::Waiting);
            }
            return;
        };
        if matches!(state.get_untracked(), State::Done(ref d) if d.0 == spec) {
            return;
        }
        cancel();
        let run = match Sensitivity::new(Base::of_explore(&spec)) {
            Ok(r) => r,
            Err(e) => {
                state.set(State::Failed(e.to_string()));
                return;
            }
        };
        let fields = ex.url.query.with_untracked(keys::fields_from_query);
        let jobs = match (crate::pool::size(), ex.mode.get_untracked()) {
            (Some(workers), Ok(mode)) => {
                let jobs = ex
                    .entries
                    .with_untracked(|u| fmperf_app::jobs::sensitivity_jobs(&fields, &mode, u, workers as u64));
                let spec = spec.clone();
                Some(
                    Jobs::new(&jobs, move |answers| fmperf_app::jobs::merge_sensitivity(&spec, answers))
                        .map(|s| s.result()),
                )
            }
            _ => None,
        };
        state.set(State::Running(0, 0));
        let handle = spawn_parallel(
            move || Task(run),
            jobs,
            move |(done, total)| {
                state.try_set(State::Running(done, total));
            },
            move |result| {
                state.try_set(State::Done(Arc::new((spec, result))));
            },
        );
        task.set_value(Some(handle));
    });
    on_cleanup(cancel);
    let body = move || match state.get() {
        State::Waiting => {
            view! { <p class="muted sens-status">"Waiting for the results of this scenario…"</p> }.into_any()
        }
        State::Failed(why) => view! { <p class="muted sens-status">{why}</p> }.into_any(),
        State::Running(done, total) => {
            let pct = if total == 0 { 0.0 } else { done as f64 / total as f64 * 100.0 };
            view! {
                <p class="muted sens-status" role="status">
                    {format!("Re-searching the scenario on 12 changed systems… {pct:.0} %")}
                </p>
                <progress class="sens-progress" max="100" value=format!("{pct:.0}") aria-label="What would help most: progress"></progress>
            }
            .into_any()
        }
        State::Done(d) => {
            // The user's price, as the cost card reads it (an invalid one: no costs).
            let price = ex.url.get(run_cost::PRICE_KEY).and_then(|t| run_cost::parse_price(&t).ok().flatten());
            rows(ex, &d.0, &words::strip(&d.1, price)).into_any()
        }
    };
    view! {
        <style>{SENSITIVITY_CSS}</style>
        <section class="card sensitivity" aria-labelledby="sens-title" data-state=move || match state.get() {
            State::Done(_) => "done",
            State::Running(..) => "running",
            State::Failed(_) => "failed",
            State::Waiting => "waiting",
        }>
            <h2 id="sens-title">{words::TITLE}</h2>
            <p class="muted sens-intro">{words::INTRO}</p>
            {body}
        </section>
    }
}

/// The finished strip: the baseline line and one list item per feature.
fn rows(ex: Explorer, spec: &ExploreSpec, strip: &Strip) -> impl IntoView {
    let fields = ex.url.query.with_untracked(keys::fields_from_query);
    let mode = ex.mode.get_untracked().ok();
    let items = strip
        .rows
        .iter()
        .map(|r| {
            let cells = r
                .cells
                .iter()
                .map(|c| {
                    let cost = if c.cost.is_empty() {
                        String::new()
                    } else {
                        format!(" Cost {} ({}).", c.cost, c.cost_change)
                    };
                    let label = format!("{} ({}): {} {}.{cost} {}", c.factor, c.value, c.days, c.change, c.detail);
                    let money = (!c.cost.is_empty()).then(|| {
                        view! {
                            <span class="sens-cost">
                                {c.cost.clone()}
                                " "
                                <span class=format!("sens-cost-change {}", c.direction)>{c.cost_change.clone()}</span>
                            </span>
                        }
                    });
                    view! {
                        <div class="sens-cell" data-direction=c.direction title=c.detail.clone() aria-label=label>
                            <span class="sens-factor">{c.factor.clone()}</span>
                            <span class="sens-track" aria-hidden="true">
                                <span class=format!("sens-bar {}", c.direction) style=format!("width: {:.1}%", c.bar_pct)></span>
                            </span>
                            <span class="sens-days">{c.days.clone()}</span>
                            <span class=format!("sens-change {}", c.direction)>{c.change.clone()}</span>
                            {money}
                        </div>
                    }
                })
                .collect_view();
            let link = mode.as_ref().map(|m| {
                let q = words::studies_query(spec, &fields, m, &r.axis);
                let href = q.to_search();
                let go = move |ev: leptos::ev::MouseEvent| {
                    ev.prevent_default();
                    let q = q.clone();
                    ex.url.update(true, move |x| *x = q);
                };
                view! {
                    <a class="sens-link" href=href on:click=go>
                        "Full sweep"
                        <span class="sr-only">{format!(" of the {} in Studies", r.label)}</span>
                    </a>
                }
            });
            view! {
                <li class="sens-row" data-feature=r.key>
                    <div class="sens-name">
                        <span class="sens-label">{r.label.clone()}</span>
                        <span class="muted sens-value">{format!("now {}", r.value)}</span>
                    </div>
                    {cells}
                    {link}
                </li>
            }
        })
        .collect_view();
    let note = strip.cost_note.clone().map(|n| view! { <p class="muted small sens-cost-note">{n}</p> });
    view! {
        <p class="sens-baseline">{strip.baseline.clone()}</p>
        {note}
        <ol class="sens-list" aria-label="System features, the largest saving first">{items}</ol>
    }
}
