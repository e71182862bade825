//! The explorer: one scenario → the best parallel configurations across strategies, with the time
//! and memory breakdowns, a layer-by-layer drill-down, side-by-side comparison and "try your own
//! configuration". The page most users live in.
//!
//! Parts (one module each): [`keys`] (URL query keys), [`state`] (shared state, the sliced
//! search), [`form`] (scenario form, validated as typed), [`results`] (progress, list tabs, table),
//! [`export`] (CSV/JSON), [`breakdown`] (charts, selected configuration, placement), [`selection`],
//! [`drill`] (layers), [`compare`], [`own`] (try your own), [`launch_import`] (your run from a launch
//! file), [`saved`] (saved scenarios), [`sensitivity`] (what would help most),
//! [`widgets`], [`fmt`] (number formatting).
//!
//! The mode (reference or extended, with every switch) comes from the app-wide mode panel
//! ([`crate::mode_panel`], URL keys `mode` and `ext`); results, the selected configuration, the
//! drill-down, "try your own" and the comparison carry a badge naming it.
//!
//! Styles: `style/explorer.css`, compiled in without comments ([`fmperf_app::style`]) and emitted
//! as a `<style>` element with the view, so they apply wherever the app is mounted (the page, an
//! iframe, a custom element's shadow root and the single-file offline bundle).

mod breakdown;
mod calibration;
mod compare;
mod drill;
mod export;
mod fmt;
mod form;
pub mod keys;
mod launch_import;
mod own;
mod results;
mod run_cost;
mod saved;
mod selection;
mod sensitivity;
mod state;
mod widgets;

use fmperf_app::style::EXPLORER_CSS;
use leptos::prelude::*;

use crate::mode_panel::ModePanel;
use crate::url_state::UrlState;
use state::Explorer;

/// The detail panels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tab {
    Breakdown,
    Layers,
    Compare,
    Own,
    Launch,
    Calibrate,
}

impl Tab {
    const ALL: [Tab; 6] = [Tab::Breakdown, Tab::Layers, Tab::Compare, Tab::Own, Tab::Launch, Tab::Calibrate];

    fn key(self) -> &'static str {
        match self {
            Tab::Breakdown => "breakdown",
            Tab::Layers => "layers",
            Tab::Compare => "compare",
            Tab::Own => "own",
            Tab::Launch => "run",
            Tab::Calibrate => "measured",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Tab::Breakdown => "Breakdown",
            Tab::Layers => "Layers",
            Tab::Compare => "Compare",
            Tab::Own => "Try your own",
            Tab::Launch => "Your run",
            Tab::Calibrate => "Your measured run",
        }
    }

    fn from_key(k: Option<&str>) -> Tab {
        Tab::ALL.into_iter().find(|t| Some(t.key()) == k).unwrap_or(Tab::Breakdown)
    }
}

/// The detail tabs and the current panel.
#[component]
fn Details() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let current = Memo::new(move |_| Tab::from_key(ex.url.get(keys::TAB).as_deref()));
    let selection = selection::selection(ex);
    // Pins that parse, and those that do not (an honest count on the tab).
    let pins = move || {
        ex.url.query.with(|q| {
            let p = keys::pins_from_query(q);
            let ok = p.iter().filter(|x| x.is_ok()).count();
            (ok, p.len() - ok)
        })
    };
    let go = move |t: Tab| {
        ex.url.update(true, |q| if t == Tab::Breakdown { q.remove(keys::TAB) } else { q.set(keys::TAB, t.key()) });
    };
    let tabs = Tab::ALL
        .into_iter()
        .map(|t| {
            let label = move || match t {
                Tab::Compare => {
                    let (ok, bad) = pins();
                    fmperf_app::compare::tab_title(ok, bad)
                }
                _ => t.title().to_string(),
            };
            view! {
                <button
                    type="button"
                    role="tab"
                    class="tab"
                    id=format!("ex-tab-{}", t.key())
                    data-tab=t.key()
                    aria-controls="ex-panel"
                    aria-selected=move || (current.get() == t).to_string()
                    tabindex=move || if current.get() == t { "0" } else { "-1" }
                    on:click=move |_| go(t)
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    let panel = move || match current.get() {
        Tab::Breakdown => view! { <breakdown::BreakdownPanel selection=selection /> }.into_any(),
        Tab::Layers => view! { <drill::LayersPanel selection=selection /> }.into_any(),
        Tab::Compare => view! { <compare::ComparePanel /> }.into_any(),
        Tab::Own => view! { <own::OwnPanel /> }.into_any(),
        Tab::Launch => view! { <launch_import::LaunchPanel /> }.into_any(),
        Tab::Calibrate => view! { <calibration::CalibratePanel selection=selection /> }.into_any(),
    };
    view! {
        <section class="card details" aria-label="Details">
            <div class="tabs detail-tabs" role="tablist" aria-label="Detail views" on:keydown=widgets::tablist_keydown>
                {tabs}
            </div>
            <div
                id="ex-panel"
                role="tabpanel"
                aria-labelledby=move || format!("ex-tab-{}", current.get().key())
                data-panel=move || current.get().key()
            >
                {panel}
            </div>
        </section>
    }
}

/// The explorer view.
#[component]
pub fn ExplorerPage() -> impl IntoView {
    let url = use_context::<UrlState>().expect("URL state in context");
    let ex = Explorer::new(url);
    provide_context(ex);
    // The first view shows the results until the page has its own or a problem to show
    // (`crate::first_view`; it draws no search long enough to show progress).
    Effect::new(move |_| {
        let own =
            ex.outcome.with(|o| o.is_some()) || ex.spec.with(|s| s.is_err()) || ex.run.get() == state::Run::Cancelled;
        if own {
            crate::first_view::hand_over();
        }
    });
    view! {
        <style>{EXPLORER_CSS}</style>
        <div class="explorer">
            <aside class="card scenario-card" id="scenario" tabindex="-1" aria-labelledby="explorer-title">
                <h1 id="explorer-title">{fmperf_app::explorer::TITLE}</h1>
                <p class="muted intro">{fmperf_app::explorer::INTRO}</p>
                <form::ScenarioForm />
                <saved::SavedScenarios />
            </aside>
            <div class="explorer-main">
                <ModePanel
                    defaults=Signal::derive(move || url.query.with(state::mode_defaults))
                    problem=Signal::derive(move || {
                        ex.spec.with(|s| {
                            s.as_ref()
                                .err()
                                .and_then(|v| v.iter().find(|e| e.path().is_some_and(|p| p.is_in("mode") || p.is_in("ext"))).cloned())
                        })
                    })
                    applies_to=fmperf_app::mode::EXPLORER_APPLIES_TO
                />
                <results::Results />
                <Details />
                <run_cost::CostSummary selection=selection::selection(ex) />
                // Last: it re-runs after every new scenario and changes height meanwhile; above the
                // details it would move their tabs under a user's pointer.
                <sensitivity::SensitivityStrip />
            </div>
        </div>
    }
}
