//! Compare 2–4 configurations side by side, also across systems: pinned configurations live in
//! the URL (`cmp`), each with its own model, system, domain size and batch, and are evaluated
//! directly (no search). "Add the best on another system" runs a sliced search of the current
//! scenario on another system and pins its best configuration. Each column says the whole run's
//! cost (device-hours, energy, money at the user's price on the scenario's part, else the part's
//! example price), and the columns are ranked by time or by that cost ("Rank by", URL key
//! [`run_cost::RANK_KEY`]): across systems a faster column can cost more.

use fmperf_app::run_cost::{self, RankBy};
use fmperf_core::explore::choices::system_choices;
use fmperf_core::explore::{ConfigReport, ExploreSearch, ReportContext};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};
use fmperf_core::run_cost::RunCost;
use fmperf_core::search::code::format_candidate;
use fmperf_core::vocab::{MemoryPart, TimePart};
use leptos::prelude::*;

use super::breakdown::{memory_bar, memory_limit};
use super::fmt;
use super::keys::{self, Pin};
use super::results::placement_text;
use super::state::Explorer;
use crate::chart::{Bar, StackedBarChart, ValueFormat};
use crate::mode_panel::ModeBadge;
use crate::runner::{Sliced, TaskHandle, spawn_parallel};

/// A pinned configuration, evaluated.
#[derive(Debug, Clone, PartialEq)]
struct Compared {
    /// Its text in the `cmp` key (to remove it).
    text: String,
    /// Column letter (A–D).
    letter: char,
    /// The scenario it was evaluated in.
    spec: ExploreSpec,
    /// Its report.
    report: ConfigReport,
    /// The whole run's cost on its budget (or why there is none).
    cost: Result<RunCost, String>,
}

/// Evaluates `pin` with the scenario `base` for everything the pin does not fix (the budget is
/// the model's own when the pin's model differs), in `mode` (every column in the page's mode).
fn evaluate_pin(
    pin: &Pin,
    base: &ExploreFields,
    mode: &Mode,
    entries: &fmperf_core::resolve::UserEntries,
) -> Result<(ExploreSpec, ConfigReport), String> {
    let mut f = base.clone();
    if f.model != pin.model {
        f.budget.clear();
        f.budget_unit.clear();
    }
    f.model = pin.model.clone();
    f.system = pin.system.clone();
    f.domain = pin.domain.to_string();
    f.gpus = pin.candidate.n_gpus().to_string();
    f.batch = pin.batch.to_string();
    let spec = super::state::resolve(&f, mode, &entries)
        .map_err(|e| e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?;
    let ctx = ReportContext::new(&spec).map_err(|e| e.to_string())?;
    let ev = spec.evaluate(&pin.candidate).map_err(|e| e.to_string())?;
    let report = ConfigReport::of_detail(&ctx, &pin.candidate, &ev);
    Ok((spec, report))
}

fn remove_pin(ex: Explorer, text: String) {
    ex.url.update(true, |q| keys::remove_pin(q, &text));
}

fn add_pin(ex: Explorer, text: String) {
    ex.url.update(true, |q| keys::add_pin(q, &text, true));
}

struct BestTask(ExploreSearch);

/// The best configuration of a finished search, with its scenario.
fn best_of(search: &ExploreSearch) -> (ExploreSpec, Option<fmperf_core::vocab::Candidate>) {
    (search.spec().clone(), search.result().merged.first().map(|r| r.candidate))
}

impl Sliced for BestTask {
    type Output = (ExploreSpec, Option<fmperf_core::vocab::Candidate>);
    fn step(&mut self, units: usize) -> bool {
        self.0.step(units)
    }
    fn progress(&self) -> (u64, u64) {
        self.0.progress()
    }
    fn finish(self) -> Self::Output {
        best_of(&self.0)
    }
}

/// "Add the best configuration on another system": a system select, a domain size and a button.
#[component]
fn AddSystem() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let choices: Vec<_> = system_choices().into_iter().filter(|c| c.unusable.is_none()).collect();
    let first =
        choices.iter().find(|c| c.id == "ref-B200").or(choices.first()).map(|c| c.id.clone()).unwrap_or_default();
    let system = RwSignal::new(first);
    let domain = RwSignal::new(String::new());
    let (status, set_status) = signal(None::<String>);
    let (running, set_running) = signal(false);
    let task: StoredValue<Option<TaskHandle>, LocalStorage> = StoredValue::new_local(None);
    on_cleanup(move || {
        task.try_update_value(|t| {
            if let Some(t) = t.take() {
                t.cancel();
            }
        });
    });
    let start = move |_| {
        let mut f = ex.url.query.with_untracked(keys::fields_from_query);
        f.system = system.get_untracked();
        f.domain = domain.get_untracked();
        let mode = ex.mode.get_untracked().unwrap_or_default();
        let spec = match super::state::resolve(&f, &mode, &ex.entries.get_untracked()) {
            Ok(s) => s,
            Err(e) => {
                set_status.set(Some(e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")));
                return;
            }
        };
        let jobs = super::state::search_jobs(&f, &mode, &ex.entries.get_untracked(), &spec)
            .map(|j| j.map(|whole: ExploreSearch| best_of(&whole)));
        let Ok(search) = ExploreSearch::new(spec) else { return };
        set_running.set(true);
        set_status.set(Some("Searching…".into()));
        let handle = spawn_parallel(
            move || BestTask(search),
            jobs,
            move |(done, total)| {
                set_status.try_set(Some(format!(
                    "Searching… {} of {} candidates",
                    fmt::count(done),
                    fmt::count(total)
                )));
            },
            move |(spec, best)| {
                set_running.try_set(false);
                match best {
                    Some(c) => {
                        set_status.try_set(None);
                        add_pin(
                            ex,
                            Pin {
                                model: spec.model_id.clone(),
                                system: spec.system_id.clone(),
                                domain: spec.system.domain_size,
                                batch: spec.global_batch,
                                candidate: c,
                            }
                            .to_text(),
                        );
                    }
                    None => {
                        set_status.try_set(Some(format!("No configuration fits on {}.", spec.system_name)));
                    }
                }
            },
        );
        task.set_value(Some(handle));
    };
    let cancel = move |_| {
        task.update_value(|t| {
            if let Some(t) = t.take() {
                t.cancel();
            }
        });
        set_running.set(false);
        set_status.set(Some("Cancelled.".into()));
    };
    let options = choices
        .iter()
        .map(|c| {
            let id = c.id.clone();
            let sel = id.clone();
            view! { <option value=id selected=move || system.get() == sel>{c.label.clone()}</option> }
        })
        .collect_view();
    view! {
        <div class="add-system row">
            <label for="ex-cmp-system">"Add the best configuration on"</label>
            <select id="ex-cmp-system" on:change=move |ev| system.set(event_target_value(&ev))>{options}</select>
            <label for="ex-cmp-domain">"domain"</label>
            <input
                id="ex-cmp-domain"
                type="text"
                inputmode="numeric"
                size="4"
                placeholder="same"
                prop:value=move || domain.get()
                on:input=move |ev| domain.set(event_target_value(&ev))
            />
            <button type="button" class="small" on:click=start disabled=move || running.get()>
                "Search and add"
            </button>
            {move || running.get().then(|| view! { <button type="button" class="small" on:click=cancel>"Cancel"</button> })}
            <span class="muted" role="status">{move || status.get()}</span>
        </div>
    }
}

/// "Rank by: time | cost" above the compared columns (URL key [`run_cost::RANK_KEY`]; time is
/// written as no key).
#[component]
fn RankChoice(rank: Memo<RankBy>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let options = RankBy::ALL
        .iter()
        .map(|r| {
            let r = *r;
            view! { <option value=r.key() selected=move || rank.get() == r>{r.label()}</option> }
        })
        .collect_view();
    let set = move |ev: leptos::ev::Event| {
        let by = RankBy::from_query(Some(&event_target_value(&ev)));
        ex.url.update(true, |q| match by {
            RankBy::Time => q.remove(run_cost::RANK_KEY),
            RankBy::Cost => q.set(run_cost::RANK_KEY, by.key()),
        });
    };
    view! {
        <div class="rank-by row">
            <label for="ex-cmp-rank">"Rank by"</label>
            <select id="ex-cmp-rank" aria-describedby="ex-cmp-rank-help" on:change=set>{options}</select>
            <span id="ex-cmp-rank-help" class="muted small">
                "Cost: the whole run's money on each column's budget, at your price on the scenario's part and the example price (not a quote) on others."
            </span>
        </div>
    }
}

/// The compare panel.
#[component]
pub fn ComparePanel() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let rank = Memo::new(move |_| RankBy::from_query(ex.url.get(run_cost::RANK_KEY).as_deref()));
    let compared = Memo::new(move |_| {
        let base = ex.url.query.with(keys::fields_from_query);
        // The price typed is for the scenario's part; other parts take their example price.
        let price = ex.url.get(run_cost::PRICE_KEY).and_then(|t| run_cost::parse_price(&t).ok().flatten());
        let part = ex.spec.with(|s| s.as_ref().ok().map(|s| s.system_entry.id.clone())).unwrap_or_default();
        let pins = ex.url.query.with(keys::pins_from_query);
        let mode = ex.mode.get().unwrap_or_default();
        let entries = ex.entries.get();
        pins.into_iter()
            .enumerate()
            .map(|(i, p)| {
                let letter = (b'A' + i as u8) as char;
                match p {
                    Ok(pin) => evaluate_pin(&pin, &base, &mode, &entries)
                        .map(|(spec, report)| {
                            let p = run_cost::column_price(&spec.system_entry.id, &part, price);
                            let cost = run_cost::of(&spec, &report, p).map_err(|e| e.to_string());
                            Compared { text: pin.to_text(), letter, spec, report, cost }
                        })
                        .map_err(|e| (pin.to_text(), e)),
                    Err((text, e)) => Err((text, e.to_string())),
                }
            })
            .collect::<Vec<_>>()
    });
    let problems = move || {
        compared.with(|items| {
            items
                .iter()
                .filter_map(|r| r.as_ref().err())
                .map(|(text, e)| {
                    let t = text.clone();
                    view! {
                        <div class="notice error" role="alert">
                            <code>{text.clone()}</code>": "{e.clone()}" "
                            <button type="button" class="small" on:click=move |_| remove_pin(ex, t.clone())>"Remove"</button>
                        </div>
                    }
                })
                .collect_view()
        })
    };
    let good = Memo::new(move |_| {
        compared.with(|items| items.iter().filter_map(|r| r.as_ref().ok().cloned()).collect::<Vec<_>>())
    });
    let table = move || {
        let pinned = good.get();
        let by = rank.get();
        let order = run_cost::rank_order(
            &pinned
                .iter()
                .map(|c| (c.report.training_days, c.cost.as_ref().ok().and_then(|k| k.total)))
                .collect::<Vec<_>>(),
            by,
        );
        let items: Vec<Compared> = order.iter().map(|&i| pinned[i].clone()).collect();
        if items.is_empty() {
            return view! {
                <div class="empty-state">
                    <p>"Nothing to compare yet."</p>
                    <p class="muted">
                        "Tick “Compare” on configurations in the results table, use “Compare it” under “Try your own”, or add the best configuration on another system below (up to 4)."
                    </p>
                </div>
            }
            .into_any();
        }
        let head = items
            .iter()
            .map(|c| {
                let t = c.text.clone();
                view! {
                    <th
                        scope="col"
                        data-pin=c.text.clone()
                        data-letter=c.letter.to_string()
                        data-days=c.report.training_days.to_string()
                        data-cost=c.cost.as_ref().ok().and_then(|k| k.total).map(|t| t.to_string()).unwrap_or_default()
                        data-devices=c.spec.n_gpus.to_string()
                    >
                        <span class="pin-letter">{c.letter.to_string()}</span>
                        " "
                        <button type="button" class="small link" on:click=move |_| remove_pin(ex, t.clone()) aria-label=format!("Remove {}", c.letter)>
                            "remove"
                        </button>
                    </th>
                }
            })
            .collect_view();
        type Row = (&'static str, fn(&Compared) -> String);
        let mut rows: Vec<Row> = vec![
            ("model", |c| c.spec.model_id.clone()),
            ("system", |c| c.spec.system_name.clone()),
            ("scale-up domain [devices]", |c| c.spec.system.domain_size.to_string()),
            ("devices", |c| fmt::count(c.spec.n_gpus)),
            ("global batch [samples]", |c| fmt::count(c.spec.global_batch)),
            ("configuration", |c| format_candidate(&c.report.candidate)),
            ("strategy", |c| c.report.candidate.strategy.to_string()),
            ("DP · TP · CP · PP · micro-batch", |c| fmperf_app::results::dims(&c.report.candidate).join(" · ")),
            ("in one fast domain", |c| placement_text(&c.report)),
            ("throughput [samples/s]", |c| fmt::throughput(c.report.throughput_samples_per_s)),
            ("time per step [s]", |c| fmt::seconds(c.report.time_per_step_s)),
            ("training time [days]", |c| fmt::days(c.report.training_days)),
            // Extended mode: the band and the verdict, as the Explorer's rows say them.
            ("memory per device [GB]", |c| {
                let m = c.report.memory;
                fmperf_app::results::memory_cell(m.used_gb, m.capacity_gb, c.report.memory_verdict())
            }),
            ("model-FLOP utilisation", |c| fmt::percent(c.report.mfu)),
            ("device-hours [h]", |c| c.cost.as_ref().map_or("–".into(), |k| fmt::count(k.gpu_hours.round() as u64))),
            ("energy, devices [MWh]", |c| {
                c.cost.as_ref().ok().and_then(|k| k.energy_mwh).map_or("–".into(), |e| fmt::fixed(e, 1))
            }),
            ("cost of the whole run", |c| c.cost.as_ref().map_or_else(|e| e.clone(), run_cost::cost_cell)),
        ];
        // Mixture-of-experts columns say their expert layout (a dense model's: none).
        if items.iter().any(|c| c.report.experts.is_some()) {
            let experts: Row = ("experts: EP · ETP · expert DP", |c| {
                c.report.experts.map_or("– (dense)".to_string(), |x| format!("{} · {} · {}", x.ep, x.etp, x.edp))
            });
            rows.insert(8, experts);
        }
        let rank_row = {
            let cells = (1..=items.len()).map(|n| view! { <td class="num rank">{n.to_string()}</td> }).collect_view();
            view! { <tr class="rank-row"><th scope="row">{format!("rank by {}", by.label())}</th>{cells}</tr> }
                .into_any()
        };
        let mut body: Vec<AnyView> = std::iter::once(rank_row)
            .chain(rows.into_iter().map(|(name, f)| {
                let cells = items.iter().map(|c| view! { <td class="num">{f(c)}</td> }).collect_view();
                view! { <tr><th scope="row">{name}</th>{cells}</tr> }.into_any()
            }))
            .collect();
        // Ratios against column A (the baseline), for the figures people compare.
        type Ratio = (&'static str, fn(&Compared) -> f64, bool);
        let ratios: [Ratio; 4] = [
            ("throughput ÷ A", |c| c.report.throughput_samples_per_s, true),
            ("time per step ÷ A", |c| c.report.time_per_step_s, false),
            ("memory per device ÷ A", |c| c.report.memory.used_gb, false),
            ("cost ÷ A", |c| c.cost.as_ref().ok().and_then(|k| k.total).unwrap_or(f64::NAN), false),
        ];
        for (name, f, higher_better) in ratios {
            // Column A is the first pinned, wherever the ranking puts it.
            let base = items.iter().find(|c| c.letter == 'A').or(items.first()).map(f).unwrap_or(f64::NAN);
            let cells = items
                .iter()
                .map(|c| {
                    let r = fmperf_app::compare::ratio(f(c), base);
                    let verdict = match fmperf_app::compare::better(r, higher_better) {
                        Some(true) => "better",
                        Some(false) => "worse",
                        None => "same",
                    };
                    view! { <td class="num ratio" data-verdict=verdict>{fmperf_app::compare::ratio_text(r)}</td> }
                })
                .collect_view();
            body.push(view! { <tr class="ratio-row"><th scope="row">{name}</th>{cells}</tr> }.into_any());
        }
        let shown = TimePart::shown(items.iter().map(|c| &c.report.totals));
        for p in shown.iter().copied() {
            let cells = items
                .iter()
                .map(|c| view! { <td class="num">{fmt::seconds(p.of(&c.report.totals))}</td> })
                .collect_view();
            body.push(
                view! { <tr class="part"><th scope="row">{format!("{} [s]", p.label())}</th>{cells}</tr> }.into_any(),
            );
        }
        // The parts' names in the columns' mode (extended mode's activations hold the framework
        // margin too); columns in both modes say so in both words.
        let memory_label = |p: MemoryPart| {
            let mut labels: Vec<&str> = Vec::new();
            for label in items.iter().map(|c| p.label_in(c.spec.mode.kind())) {
                if !labels.contains(&label) {
                    labels.push(label);
                }
            }
            labels.join(" / ")
        };
        for p in MemoryPart::ALL {
            let cells =
                items.iter().map(|c| view! { <td class="num">{fmt::gb(p.of(&c.report.totals))}</td> }).collect_view();
            body.push(
                view! { <tr class="part"><th scope="row">{format!("{} [GB]", memory_label(p))}</th>{cells}</tr> }
                    .into_any(),
            );
        }
        // Each bar says its letter, the model and system where the columns differ in them, and its
        // layout in words the chart can wrap (a code such as `1d.dp8.tp8…` would be cut).
        let differ = |f: fn(&Compared) -> &str| items.iter().any(|c| f(c) != f(&items[0]));
        let (models, systems) = (differ(|c| c.spec.model_name.as_str()), differ(|c| c.spec.system_name.as_str()));
        let label = |c: &Compared| {
            fmperf_app::compare::bar_label(
                c.letter,
                &[(models, c.spec.model_name.as_str()), (systems, c.spec.system_name.as_str())],
                &super::breakdown::layout_words(&c.report),
            )
        };
        let time_bars: Vec<Bar> =
            items.iter().map(|c| Bar::new(label(c), shown.iter().map(|p| p.of(&c.report.totals)).collect())).collect();
        let mem_bars: Vec<Bar> = items.iter().map(|c| memory_bar(label(c), &c.report)).collect();
        // One capacity line (and the verdicts' marks) where every column is judged against the same
        // capacity; columns on parts of different capacities say their verdicts in the table alone.
        let capacities: Vec<f64> = items.iter().map(|c| c.report.memory.capacity_gb).collect();
        let mem_limit =
            capacities.first().filter(|&&f| capacities.iter().all(|&x| x == f)).and_then(|&f| memory_limit(f));
        view! {
            <div class="table-wrap" tabindex="0">
                <table class="compare">
                    <thead><tr><th scope="col">"configuration"</th>{head}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            <div class="charts">
                <div class="chart-box">
                    <StackedBarChart
                        title="Compared: time per step by component"
                        value_label="time per step [s]"
                        components={shown.iter().map(|p| p.label().to_string()).collect::<Vec<_>>()}
                        bars=time_bars
                        format=ValueFormat::Duration
                    />
                </div>
                <div class="chart-box">
                    <StackedBarChart
                        title="Compared: memory per device by component"
                        value_label="memory per device [GB]"
                        components={MemoryPart::ALL.iter().map(|&p| memory_label(p)).collect::<Vec<_>>()}
                        bars=mem_bars
                        limit=mem_limit
                        format=fmperf_app::fmt::GB_FORMAT
                    />
                </div>
            </div>
        }
        .into_any()
    };
    let mode = move || ex.mode.get().unwrap_or_default();
    view! {
        <div class="panel-compare">
            <p class="muted small">
                "Every column is evaluated in the page's mode: " {move || view! { <ModeBadge mode=mode() id="compare-mode" /> }}
            </p>
            {problems}
            <RankChoice rank=rank />
            {table}
            <AddSystem />
        </div>
    }
}
