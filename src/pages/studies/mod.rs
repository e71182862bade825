//! Studies: how performance moves when one input changes. Sweeps over any axes (devices, domain
//! size, system parameters, sequence, batch, accumulation, precision, sparsity, TP × PP maps),
//! drawn as line charts, heat maps and breakdowns, and the presets that regenerate the figures of
//! both source papers with the published values next to fmperf's.
//!
//! Layout: preset picker; the sweep form (or the preset panel's description); progress with
//! cancel; the chart with its controls; the breakdown; the comparison with published figures; the
//! table with CSV/JSON export and the equivalent `fmperf sweep` command. Everything is in the URL
//! ([`keys`]).

mod charts;
mod form;
mod keys;
mod picker;
mod state;
mod table;

use leptos::prelude::*;

use state::{Studies, SweepRun};

use crate::mode_panel::ModePanel;
use crate::url_state::UrlState;

/// The studies view.
#[component]
pub fn StudiesPage() -> impl IntoView {
    let url = use_context::<UrlState>().expect("URL state in context");
    let st = Studies::new(url);
    provide_context(st);
    view! {
        <div class="studies">
            <section class="card">
                <h1>"Studies"</h1>
                <p class="muted">
                    "Sweep any input and see how training time moves: one point per combination of the axes, each the "
                    "fastest configuration that fits in memory (or the reason there is none). Presets regenerate the "
                    "figures of both source papers."
                </p>
                {move || url.query.with(keys::unknown_preset).map(|m| view! {
                    <p class="notice warn" role="status" id="unknown-preset">{m}</p>
                })}
                <picker::PresetPicker />
            </section>
            <ModePanel
                defaults=Signal::from(st.mode_defaults)
                problem=Signal::derive(move || st.spec.with(|s| s.as_ref().err().cloned()))
                applies_to="Every point of the sweep is searched in this mode."
            />
            <section class="card study-panel" id="study-panel" tabindex="-1" aria-label="The sweep">
                {move || match st.source.get() {
                    keys::SweepSource::Preset(preset, panel) => picker::PanelInfo(picker::PanelInfoProps { preset, panel }).into_any(),
                    keys::SweepSource::Custom(_) => form::SweepForm().into_any(),
                }}
            </section>
            <ProgressBar />
            <charts::Results />
        </div>
    }
}

/// Progress of the running sweep with a cancel button; after a cancel, a button to run again.
#[component]
fn ProgressBar() -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    move || {
        match st.run.get() {
        SweepRun::Running { done, total } => {
            let pct = if total > 0 { done as f64 / total as f64 * 100.0 } else { 0.0 };
            view! {
                <section class="card studies-progress" aria-live="polite">
                    <div class="row">
                        <span id="sweep-progress-text">
                            {format!("Sweeping… {:.0} % ({} of {} candidates)", pct, count(done), count(total))}
                        </span>
                        <span class="spacer"></span>
                        <button id="sweep-cancel" type="button" on:click=move |_| st.stop()>
                            "Cancel"
                        </button>
                    </div>
                    <div
                        class="progress"
                        role="progressbar"
                        aria-valuemin="0"
                        aria-valuemax="100"
                        aria-valuenow=format!("{pct:.0}")
                    >
                        <div style=format!("width: {pct:.1}%")></div>
                    </div>
                </section>
            }
            .into_any()
        }
        SweepRun::Cancelled => view! {
            <section class="card studies-progress">
                <div class="row">
                    <span class="muted">"Sweep cancelled. The results below, if any, are from the previous sweep."</span>
                    <span class="spacer"></span>
                    <button id="sweep-run" type="button" class="primary" on:click=move |_| st.rerun()>
                        "Run again"
                    </button>
                </div>
            </section>
        }
        .into_any(),
        SweepRun::Idle => ().into_any(),
    }
    }
}

/// An integer with comma grouping: `9,183,444`.
pub(crate) fn count(v: u64) -> String {
    fmperf_chart::format::format_grouped(v)
}
