//! The results: what was searched, the search's progress (with a cancel button once it takes
//! longer than ~100 ms), the list tabs (all strategies merged, or one strategy) and the table of
//! the best configurations. Every row carries its exact throughput (`data-throughput`) and its
//! configuration (`data-config`) for scripts and tests.

use fmperf_core::Strategy;
use fmperf_core::explore::ConfigReport;
use fmperf_core::search::code::format_candidate;
use fmperf_core::vocab::Fits;
use leptos::prelude::*;

use super::export::ExportResults;
use super::fmt;
use super::keys::{self, Pin};
use super::state::{Explorer, FinishedSearch, Run};
use super::widgets::tablist_keydown;
use crate::mode_panel::ModeBadge;

/// The progress line of a running search, or the cancelled notice.
#[component]
pub fn RunStatus() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    // What is shown changes rarely; the numbers change every slice. Keep the elements (above all
    // the Cancel button) in place while a search runs and update only the text and the bar, so a
    // click is never lost on an element replaced between mouse-down and mouse-up.
    let kind = Memo::new(move |_| match ex.run.get() {
        Run::Running { slow: true, .. } => StatusKind::Progress,
        Run::Running { .. } => StatusKind::Quiet,
        Run::Idle if !ex.outcome_is_current() && ex.spec.with(|s| s.is_ok()) => StatusKind::Quiet,
        Run::Cancelled => StatusKind::Cancelled,
        Run::Idle => StatusKind::None,
    });
    let counts = move || match ex.run.get() {
        Run::Running { done, total, .. } => (done, total),
        _ => (0, 0),
    };
    let pct = move || {
        let (done, total) = counts();
        if total > 0 { done as f64 / total as f64 * 100.0 } else { 0.0 }
    };
    move || match kind.get() {
        StatusKind::Progress => Some(
            view! {
                <div class="run-status" role="status">
                    <span>
                        {move || {
                            let (done, total) = counts();
                            format!("Searching… {} of {} candidates", fmt::count(done), fmt::count(total))
                        }}
                    </span>
                    <div
                        class="progress"
                        role="progressbar"
                        aria-label="Search progress"
                        aria-valuemin="0"
                        aria-valuemax="100"
                        aria-valuenow=move || format!("{:.0}", pct())
                    >
                        <div style=move || format!("width: {:.1}%", pct())></div>
                    </div>
                    <button type="button" class="cancel" on:click=move |_| ex.cancel()>
                        "Cancel"
                    </button>
                </div>
            }
            .into_any(),
        ),
        StatusKind::Quiet => Some(view! { <div class="run-status quiet" role="status">"Searching…"</div> }.into_any()),
        StatusKind::Cancelled => Some(
            view! {
                <div class="notice warn run-status" role="status">
                    <span>
                        {if ex.outcome.with_untracked(|o| o.is_some()) {
                            "Search cancelled. The results below are from the previous search."
                        } else {
                            "Search cancelled before it found anything."
                        }}
                    </span>
                    <button type="button" on:click=move |_| ex.run_again()>
                        "Search again"
                    </button>
                </div>
            }
            .into_any(),
        ),
        StatusKind::None => None,
    }
}

/// Which status line is shown (see [`RunStatus`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatusKind {
    /// A search running for more than ~100 ms: progress and Cancel.
    Progress,
    /// A search just started (or about to).
    Quiet,
    /// The last search was cancelled.
    Cancelled,
    /// Nothing to say.
    None,
}

/// The list tabs: all strategies, then each searched strategy.
#[component]
fn ListTabs() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let current = move || ex.url.query.with(keys::list_from_query);
    let tab = move |s: Option<Strategy>, label: String| {
        let select = move |_| {
            ex.url.update(true, |q| match s {
                None => q.remove(keys::LIST),
                Some(s) => q.set(keys::LIST, s.as_str()),
            });
        };
        view! {
            <button
                type="button"
                role="tab"
                class="tab"
                aria-selected=move || (current() == s).to_string()
                tabindex=move || if current() == s { "0" } else { "-1" }
                data-list=s.map(|s| s.as_str()).unwrap_or("all")
                title="the best throughput of each strategy, in samples/s"
                on:click=select
            >
                {label}
            </button>
        }
    };
    move || {
        ex.outcome.with(|o| {
            o.as_ref().map(|o| {
                let mut tabs = vec![tab(None, fmperf_app::results::ALL_LIST_LABEL.to_string())];
                for oc in &o.result.outcomes {
                    let best = oc.top.first().map(|r| r.throughput_samples_per_s);
                    tabs.push(tab(Some(oc.strategy), fmperf_app::results::list_tab_label(oc.strategy, best)));
                }
                view! {
                    <div class="tabs" role="tablist" aria-label="Which configurations to list" on:keydown=tablist_keydown>
                        {tabs}
                    </div>
                }
            })
        })
    }
}

pub use fmperf_app::results::{domain_text, placement_text, tp_text};

/// A memory cell: used / capacity with a small bar.
#[component]
pub fn MemoryCell(
    used_gb: f64,
    capacity_gb: f64,
    /// The memory band's half-width [GB] and the verdict against the capacity (extended mode:
    /// [`ConfigReport::memory_verdict`]); `None` shows the figure alone (reference mode).
    #[prop(default = None)]
    verdict: Option<(f64, Fits)>,
    /// Whether the figure says its unit (where no column header says it).
    #[prop(optional)]
    unit: bool,
) -> impl IntoView {
    let (fraction, width) = fmperf_app::results::memory_fill(used_gb, capacity_gb);
    let title = fmperf_app::results::memory_sentence(used_gb, capacity_gb, verdict);
    let fits = verdict.map(|(_, f)| f);
    view! {
        <span class="mem-cell" title=title data-memory-gb=used_gb.to_string() data-band-gb=verdict.map(|(b, _)| b.to_string()) data-fits=fits.map(Fits::as_str)>
            <span class="mem-num">
                {fmt::gb(used_gb)}
                {verdict.map(|(band, _)| view! { <small class="mem-band">{format!(" ± {}", fmt::gb(band))}</small> })}
                {unit.then(|| view! { <small>" GB"</small> })}
            </span>
            {fits.and_then(Fits::short_words).map(|w| view! { <span class="mem-verdict">{w}</span> })}
            <span
                class="mem-bar"
                class:over=fits.map_or(fraction > 1.0, |f| f == Fits::No)
                class:tight=fits == Some(Fits::Tight)
                aria-hidden="true"
            >
                <span style=format!("width: {width:.1}%")></span>
            </span>
        </span>
    }
}

/// One row of the results table (a configuration; `alt` rows are other placements of the row
/// above, hidden until expanded).
#[allow(clippy::too_many_arguments)]
fn result_row(
    ex: Explorer,
    rank: usize,
    shown_rank: Option<usize>,
    r: ConfigReport,
    selected: Signal<Option<String>>,
    first: bool,
    pin_text: Option<String>,
    alt_of: Option<(usize, RwSignal<bool>)>,
    more: Option<(Vec<fmperf_core::vocab::Candidate>, RwSignal<bool>)>,
    bar: Signal<Option<(String, String)>>,
) -> impl IntoView {
    let pins = move || ex.url.query.with(keys::pin_items);
    let code = format_candidate(&r.candidate);
    let code_sel = code.clone();
    let code_click = code.clone();
    let is_selected = Signal::derive(move || {
        selected.with(|s| match s {
            Some(s) => *s == code_sel,
            None => first,
        })
    });
    let pin_for_check = pin_text.clone();
    let pinned = move || pin_for_check.as_ref().is_some_and(|p| pins().contains(p));
    let toggle_pin = move |_| {
        let Some(p) = pin_text.clone() else { return };
        ex.url.update(true, |q| {
            if keys::pin_items(q).contains(&p) { keys::remove_pin(q, &p) } else { keys::add_pin(q, &p, false) }
        });
    };
    let select = move |_| {
        let c = code_click.clone();
        ex.url.update(true, |q| q.set(keys::SEL, &c));
    };
    let c = r.candidate;
    let nb = fmperf_app::results::nb_text(&c);
    let dims = fmperf_app::results::report_dims(&r).map(|d| view! { <td class="num dim">{d}</td> });
    let expert_dims = fmperf_app::results::expert_dims(r.experts.as_ref())
        .map(|d| d.map(|v| view! { <td class="num dim expert-dim">{v}</td> }));
    let research = fmperf_app::results::is_research(c.strategy).then(|| {
        view! { <span class="badge research" title=format!("Research strategy: none of {} offers it", fmperf_app::results::MAINSTREAM)>"research"</span> }
    });
    let hidden = alt_of.map(|(_, open)| open);
    let expander = more.map(|(others, open)| {
        view! {
            <button
                type="button"
                class="small link placements-toggle"
                aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)
                title=fmperf_app::results::ALTERNATIVES_TITLE
            >
                {move || fmperf_app::results::alternatives_label(&c, &others.iter().collect::<Vec<_>>(), open.get())}
            </button>
        }
    });
    // The rank shown: the group's, so ranks count 1, 2, 3… (a folded alternative shows none).
    let label = shown_rank.map(|n| n.to_string()).unwrap_or_default();
    let row_name = match shown_rank {
        Some(n) => format!("configuration {n}"),
        None => format!("configuration {} (alternative)", format_candidate(&c)),
    };
    let row_name2 = row_name.clone();
    view! {
        <tr
            class:selected=is_selected
            class:placement-alt=alt_of.is_some()
            hidden=move || hidden.is_some_and(|o| !o.get())
            data-rank=rank
            data-config=code.clone()
            title=format!("In one fast domain: {}", placement_text(&r))
            data-throughput=r.throughput_samples_per_s.to_string()
            data-days=r.training_days.to_string()
        >
            <td class="num">{label}</td>
            <td class="strategy-cell"><span class="badge strategy">{c.strategy.as_str()}</span>{research}{expander}</td>
            {dims}
            {expert_dims}
            <td class="num throughput">{fmt::throughput(r.throughput_samples_per_s)}</td>
            <td class="num">
                {fmt::seconds(r.time_per_step_s)}
                {move || bar.get().map(|(short, why)| view! { <span class="err-bar" title=why>{short}</span> })}
            </td>
            <td class="num days">{fmt::days(r.training_days)}</td>
            <td class="num"><MemoryCell used_gb=r.memory.used_gb capacity_gb=r.memory.capacity_gb verdict=r.memory_verdict() /></td>
            <td class="num">{fmt::percent(r.mfu)}</td>
            <td class="num opt">{nb}</td>
            <td class="num placement opt" title=placement_text(&r)>{domain_text(&c)}</td>
            <td class="actions">
                <div class="row-actions">
                <button
                    type="button"
                    class="small"
                    aria-pressed=move || is_selected.get().to_string()
                    aria-label=format!("View {row_name}")
                    on:click=select
                    title="Show this configuration in the breakdown and layer views"
                >
                    "View"
                </button>
                </div>
            </td>
            <td class="pin-cell">
                <input
                    type="checkbox"
                    class="pin"
                    title="Add to the comparison (up to 4)"
                    aria-label=format!("Compare {row_name2}")
                    prop:checked=pinned
                    on:change=toggle_pin
                />
            </td>
        </tr>
    }
}

/// The results table of the shown list: rows that differ only in placement collapse under the
/// best placement (expandable); with the mainstream filter on, research strategies are left out.
#[component]
fn ResultsTable(reports: Vec<ConfigReport>, selected: Signal<Option<String>>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let spec = ex.outcome.with_untracked(|o| o.as_ref().map(|o| o.spec.clone()));
    let system_text = ex.url.query.with_untracked(keys::fields_from_query).system;
    let rows: Vec<_> = reports.iter().map(|r| (r.candidate, r.experts)).collect();
    let groups = fmperf_app::results::collapse_rows(&rows);
    let folded = fmperf_app::results::folded_note(reports.len(), groups.len());
    let moe = reports.iter().any(|r| r.experts.is_some());
    // The mode's out-of-sample error on measured runs of this kind of part and model.
    let bar = Signal::derive(move || {
        ex.outcome
            .with(|o| o.as_ref().and_then(|o| fmperf_app::error_bands::band(&o.spec)))
            .map(|b| (fmperf_app::error_bands::short(&b), b.message))
    });
    let pin_of = |c: fmperf_core::vocab::Candidate| {
        spec.as_ref().map(|s| {
            Pin {
                model: s.model_id.clone(),
                system: fmperf_app::system_spec::with_id(&system_text, &s.system_id),
                domain: s.system.domain_size,
                batch: s.global_batch,
                candidate: c,
            }
            .to_text()
        })
    };
    let rows = groups
        .into_iter()
        .enumerate()
        .map(|(g, (lead, others))| {
            let open = RwSignal::new(false);
            let more = (!others.is_empty()).then(|| (others.iter().map(|&i| reports[i].candidate).collect(), open));
            let head = result_row(
                ex,
                lead + 1,
                Some(g + 1),
                reports[lead].clone(),
                selected,
                g == 0,
                pin_of(reports[lead].candidate),
                None,
                more,
                bar,
            );
            let alts = others
                .into_iter()
                .map(|i| {
                    result_row(
                        ex,
                        i + 1,
                        None,
                        reports[i].clone(),
                        selected,
                        false,
                        pin_of(reports[i].candidate),
                        Some((lead, open)),
                        None,
                        bar,
                    )
                })
                .collect_view();
            view! { {head}{alts} }
        })
        .collect_view();
    let dim_heads = fmperf_app::results::DIM_HEADERS
        .map(|(h, title)| view! { <th class="num dim" scope="col" title=title>{h}</th> });
    let expert_heads = moe.then(|| {
        fmperf_app::results::EXPERT_HEADERS
            .map(|(h, title)| view! { <th class="num dim expert-dim" scope="col" title=title>{h}</th> })
    });
    let metric_heads = fmperf_app::results::METRIC_HEADERS.map(|h| {
        view! {
            <th class="num" class:opt=h.optional scope="col" title=h.title>
                {h.name}
                {h.unit.map(|u| view! { <br /> {u} })}
            </th>
        }
    });
    view! {
        <div class="table-wrap results-wrap" tabindex="0">
            <table class="results" aria-label="Best configurations">
                <thead>
                    <tr>
                        <th class="num" scope="col">"#"</th>
                        <th scope="col">"strategy"</th>
                        {dim_heads}
                        {expert_heads}
                        {metric_heads}
                        <th scope="col"><span class="sr-only">"details"</span></th>
                        <th scope="col" title=fmperf_app::results::COMPARE_HEADER.1>{fmperf_app::results::COMPARE_HEADER.0}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {folded.map(|n| view! { <p class="muted small table-note" id="ex-folded">{n}</p> })}
    }
}

/// Why a search found nothing and what works instead, from core's diagnosis (each suggestion
/// verified by a search): a title, the cause in a sentence, the suggestions.
fn empty_cause(o: &FinishedSearch, found: u64) -> (String, String, Vec<String>) {
    let n = fmt::count(o.spec.n_gpus);
    let title = if found > 0 {
        "No configuration fits in memory".to_string()
    } else {
        format!("No configuration exists for {n} devices")
    };
    match &o.diagnosis {
        Some(d) => {
            let mut message = d.message.clone();
            if let Some(first) = message.get(..1) {
                message = format!("{}{}.", first.to_uppercase(), &message[1..]);
            }
            let suggestions = d
                .suggestions
                .iter()
                .map(|s| {
                    format!(
                        "{} ({} devices, global batch {})",
                        s.change,
                        fmt::count(s.devices),
                        fmt::count(s.global_batch)
                    )
                })
                .collect();
            (title, message, suggestions)
        }
        None => (
            title,
            format!(
                "All {} candidates need more than the {} GB a device has.",
                fmt::count(found),
                fmt::gb(o.spec.capacity_gb())
            ),
            Vec::new(),
        ),
    }
}

/// The results card: summary, status, tabs, table, exports; designed empty and error states.
#[component]
pub fn Results() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let list = Memo::new(move |_| ex.url.query.with(keys::list_from_query));
    let selected = Signal::derive(move || ex.url.get(keys::SEL));
    let mainstream = Memo::new(move |_| ex.url.get(keys::ONLY).as_deref() == Some("mainstream"));
    let filter = move || {
        view! {
            <label class="check mainstream-filter">
                <input
                    type="checkbox"
                    id="ex-mainstream"
                    prop:checked=move || mainstream.get()
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        ex.url.update(true, |q| if on { q.set(keys::ONLY, "mainstream") } else { q.remove(keys::ONLY) });
                    }
                />
                {fmperf_app::results::mainstream_label()}
            </label>
        }
    };
    let summary = move || {
        ex.outcome
            .with(|o| o.as_ref().map(|o| fmperf_app::results::summary_line(&o.spec, &o.result, Some(o.elapsed_ms))))
    };
    let invalid = move || {
        ex.spec.with(|s| {
            s.as_ref().err().map(|errors| {
                let list = errors.iter().map(|e| view! { <li>{e.to_string()}</li> }).collect_view();
                view! {
                    <div class="notice error" role="alert">
                        <strong>"The scenario has a problem, so nothing was searched."</strong>
                        <ul>{list}</ul>
                        <span class="muted">
                            "Fix the highlighted field; the results update by themselves. Until then the results below are those of the previous scenario."
                        </span>
                    </div>
                }
            })
        })
    };
    // An MoE model in reference mode is priced as a dense model: say so where the numbers are.
    let moe_in_reference = move || {
        ex.outcome
            .with(|o| {
                o.as_ref()
                    .filter(|o| o.spec.extended.is_none())
                    .and_then(|o| o.spec.model_entry.moe.as_ref().map(|m| (o.spec.model_name.clone(), m.experts, m.top_k)))
            })
            .map(|(name, experts, top_k)| {
                let to_extended = move |_| ex.url.update(true, |q| q.set(crate::mode_panel::MODE_KEY, "extended"));
                view! {
                    <div class="notice warn moe-reference" role="status">
                        <strong>{format!("{name} is a Mixture-of-Experts model ({experts} experts, top-{top_k}).")}</strong>
                        " Reference mode has no experts: it prices every block as a dense MLP of width ffn_hidden, so these are not the MoE model's numbers. "
                        <button type="button" class="small" on:click=to_extended>"Use extended mode"</button>
                    </div>
                }
            })
    };
    let body = move || {
        let Some(o) = ex.outcome.get() else {
            if ex.run.get() == Run::Cancelled {
                return view! { <p class="muted placeholder">"No results: the search was cancelled."</p> }.into_any();
            }
            if ex.spec.with(|s| s.is_err()) {
                return view! {
                    <p class="muted placeholder">"Results appear here once the scenario is valid."</p>
                }
                .into_any();
            }
            return view! {
                <div class="empty-state" aria-busy="true">
                    <div class="skeleton"></div>
                    <div class="skeleton"></div>
                    <div class="skeleton"></div>
                    <p class="muted">"Searching the parallel configurations…"</p>
                </div>
            }
            .into_any();
        };
        let mut reports = o.reports(list.get());
        let all = reports.len();
        if mainstream.get() {
            reports.retain(|r| !fmperf_app::results::is_research(r.candidate.strategy));
        }
        if reports.is_empty() && all > 0 {
            return view! {
                <div class="empty-state">
                    <h3>"Every listed configuration uses a research strategy"</h3>
                    <p class="muted">{format!("Untick “only what {} can run” to see the {all} configuration(s).", fmperf_app::results::MAINSTREAM)}</p>
                </div>
            }
            .into_any();
        }
        if reports.is_empty() {
            let found = match list.get() {
                Some(st) => o.result.outcome(st).map_or(0, |oc| oc.candidates),
                None => o.result.candidates(),
            };
            let cause = if found > 0 { "memory" } else { "no-configuration" };
            let (title, message, suggestions) = empty_cause(&o, found);
            return view! {
                <div class="empty-state nothing-fits" data-cause=cause>
                    <h3>{title}</h3>
                    <p class="cause">{message}</p>
                    {(!suggestions.is_empty()).then(|| view! {
                        <p class="muted">"These work (each checked by a search):"</p>
                        <ul class="suggestions">{suggestions.into_iter().map(|s| view! { <li>{s}</li> }).collect_view()}</ul>
                    })}
                </div>
            }
            .into_any();
        }
        // Results found with fewer devices than asked, or on partial domains: say so above them.
        let departed = o
            .diagnosis
            .as_ref()
            .map(|d| d.message.clone())
            .into_iter()
            .chain(o.widening.iter().map(|n| n.text.clone()))
            .collect::<Vec<_>>();
        let departed = (!departed.is_empty()).then(|| {
            view! {
                <div class="notice warn small" id="ex-widening" role="status">
                    <ul>{departed.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                </div>
            }
        });
        let band = fmperf_app::results::band_note(&o.spec, &reports)
            .map(|n| view! { <p class="muted small" id="ex-band-note">{n}</p> });
        view! {
            {departed}
            {band}
            <ResultsTable reports=reports.clone() selected=selected />
            <ExportResults reports=reports list=list.get() />
        }
        .into_any()
    };
    view! {
        <section class="card results-card" aria-labelledby="results-title">
            <div class="card-head">
                <h2 id="results-title">
                    "Best configurations "
                    {move || ex.outcome.with(|o| o.as_ref().map(|o| view! { <ModeBadge mode=o.spec.mode id="results-mode" /> }))}
                </h2>
                <p class="muted summary">{summary}</p>
                // On a phone the results come first (style/explorer.css): the way to the form.
                <button type="button" class="to-scenario" on:click=|_| crate::pages::reveal("scenario")>
                    "Change the scenario"
                </button>
            </div>
            <div class="status-slot">
                <RunStatus />
            </div>
            {invalid}
            {moe_in_reference}
            {move || {
                ex.outcome.with(|o| o.as_ref().and_then(|o| fmperf_app::error_bands::band(&o.spec))).map(|b| view! {
                    <p class="muted small" id="ex-error-bar">{fmperf_app::error_bands::line(&b)}</p>
                })
            }}
            <div class="row list-row">
                <ListTabs />
                <span class="spacer"></span>
                {filter}
            </div>
            <div class:stale=move || !ex.outcome_is_current() class="results-body">{body}</div>
        </section>
    }
}
