//! "Try your own configuration": type the degrees (e.g. TP 8, PP 16, micro-batch 1) and get the
//! evaluation in the current scenario, whether or not it is in the top list: how it ranks against
//! the best, how far over memory it is when it does not fit, which rule it breaks when invalid
//! (the message sits at the field concerned). The form lives in the URL (`own.*` keys).

use fmperf_core::explore::ConfigReport;
use fmperf_core::explore::own::{OwnFields, OwnOutcome, evaluate_own, field};
use fmperf_core::search::code::format_candidate;
use fmperf_core::{Error, Strategy};
use leptos::prelude::*;

use super::breakdown::{Headline, PartsTables, PlacementTable};
use super::fmt;
use super::keys::{self, OWN_KEYS, Pin};
use super::state::Explorer;
use super::widgets::{DebouncedInput, FieldError, field_message};
use crate::mode_panel::ModeBadge;

/// What the form gives.
#[derive(Debug, Clone, PartialEq)]
enum Tried {
    /// No finished search yet (nothing to evaluate in).
    NoScenario,
    /// The form or the configuration has problems.
    Invalid(Vec<Error>),
    /// An evaluation, its report, its derived dp, and the best throughput of the merged list.
    Done(Box<OwnOutcome>, Box<ConfigReport>, Option<f64>),
}

fn url_key(f: &str) -> &'static str {
    OWN_KEYS.iter().find(|(_, name)| *name == f).map(|(k, _)| *k).unwrap_or("own.tp")
}

fn text_of(o: &OwnFields, f: &str) -> String {
    match f {
        field::STRATEGY => o.strategy.clone(),
        field::TP => o.tp.clone(),
        field::TP2 => o.tp2.clone(),
        field::PP => o.pp.clone(),
        field::MBS => o.mbs.clone(),
        field::NB => o.nb.clone(),
        field::NV => o.nv.clone(),
        _ => String::new(),
    }
}

fn set_text(o: &mut OwnFields, f: &str, v: String) {
    match f {
        field::STRATEGY => o.strategy = v,
        field::TP => o.tp = v,
        field::TP2 => o.tp2 = v,
        field::PP => o.pp = v,
        field::MBS => o.mbs = v,
        field::NB => o.nb = v,
        field::NV => o.nv = v,
        _ => {}
    }
}

/// A short description of a strategy for a narrow select.
fn short_name(s: Strategy) -> &'static str {
    match s {
        Strategy::OneD => "1d (Megatron TP)",
        Strategy::Summa2D => "2d (SUMMA)",
        Strategy::ContextParallel2D => "2d-seqp (TP × CP)",
    }
}

/// The "try your own" panel.
#[component]
pub fn OwnPanel() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let from_url = Memo::new(move |_| {
        let best = ex.outcome.with(|o| o.as_ref().and_then(|o| o.result.merged.first().map(|r| r.candidate)));
        ex.url.query.with(|q| keys::own_or_best(q, best.as_ref()))
    });
    let live = RwSignal::new(from_url.get_untracked());
    Effect::new(move |_| {
        let f = from_url.get();
        if live.get_untracked() != f {
            live.set(f);
        }
    });
    let tried = Memo::new(move |_| {
        let Some(o) = ex.outcome.get() else { return Tried::NoScenario };
        let own = match live.with(|f| f.parse()) {
            Ok(c) => c,
            Err(errors) => return Tried::Invalid(errors),
        };
        match evaluate_own(&o.spec, &own) {
            Ok(out) => {
                let report = ConfigReport::of_detail(&o.ctx, &out.candidate, &out.evaluation);
                let best = o.result.merged.first().map(|r| r.throughput_samples_per_s);
                Tried::Done(Box::new(out), Box::new(report), best)
            }
            Err(e) => Tried::Invalid(vec![e]),
        }
    });
    let error_at = move |f: &'static str| {
        Signal::derive(move || match tried.get() {
            Tried::Invalid(errors) => errors.iter().find(|e| e.is_at(f)).map(field_message),
            _ => None,
        })
    };
    let commit = move |f: &'static str| {
        Callback::new(move |(v, push): (String, bool)| {
            ex.url.update(push, |q| if v.trim().is_empty() { q.remove(url_key(f)) } else { q.set(url_key(f), &v) })
        })
    };
    let input = move |f: &'static str, label: &'static str, help: &'static str| {
        view! {
            <DebouncedInput
                id=format!("ex-{}", f.replace('.', "-"))
                label=label
                value=Signal::derive(move || live.with(|o| text_of(o, f)))
                on_text=Callback::new(move |v: String| live.update(|o| set_text(o, f, v)))
                on_commit=commit(f)
                error=error_at(f)
                help=help.to_string()
                inputmode=if f == field::NV { "text" } else { "numeric" }
            />
        }
    };
    let strategy_select = move || {
        let current = live.with(|o| o.strategy.clone());
        let options = Strategy::ALL
            .into_iter()
            .map(|s| {
                let selected = current == s.as_str();
                view! { <option value=s.as_str() selected=selected title=s.description()>{short_name(s)}</option> }
            })
            .collect_view();
        view! {
            <div class="field">
                <label for="ex-own-s">"Strategy"</label>
                <select
                    id="ex-own-s"
                    aria-describedby="ex-own-s-error"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        live.update(|o| o.strategy = v.clone());
                        ex.url.update(true, |q| q.set("own.s", &v));
                    }
                >
                    {options}
                </select>
                <FieldError id="ex-own-s-error".to_string() message=error_at(field::STRATEGY) />
            </div>
        }
    };
    let dp_line = move || {
        let n = ex.outcome.with(|o| o.as_ref().map(|o| o.spec.n_gpus));
        let general: Vec<String> = match tried.get() {
            Tried::Invalid(errors) => {
                errors.iter().filter(|e| !OWN_KEYS.iter().any(|(_, f)| e.is_at(*f))).map(Error::to_string).collect()
            }
            _ => Vec::new(),
        };
        view! {
            <p class="muted own-dp">
                {n.map(|n| format!("Data parallelism follows from the {} devices: dp = devices / (tp · tp2 · pp).", fmt::count(n)))}
            </p>
            {(!general.is_empty()).then(|| view! {
                <div class="notice error" role="alert" id="ex-own-dp-error">
                    {general.into_iter().map(|g| view! { <p>{g}</p> }).collect_view()}
                </div>
            })}
        }
    };
    let result = move || match tried.get() {
        Tried::NoScenario => view! { <p class="muted">"Waiting for a valid scenario…"</p> }.into_any(),
        Tried::Invalid(_) => view! {
            <p class="muted own-invalid">"This configuration cannot be evaluated: see the message at the field."</p>
        }
        .into_any(),
        Tried::Done(out, report, best) => {
            let c = report.candidate;
            let code = format_candidate(&c);
            let fit = report.memory;
            let memory_note = (!fit.fits()).then(|| {
                view! {
                    <div class="notice error over-memory" role="status">
                        {format!(
                            "Does not fit: needs {} GB per device even once the allocator has given its cache back, {} GB over the {} GB capacity ({} of it).",
                            fmt::gb(fit.need_gb),
                            fmt::gb(fit.over_gb()),
                            fmt::gb(fit.capacity_gb),
                            fmt::percent(fit.need_gb / fit.capacity_gb)
                        )}
                    </div>
                }
            });
            let versus = best.map(|b| {
                let ratio = report.throughput_samples_per_s / b;
                if ratio >= 1.0 {
                    "As fast as the best configuration of the list.".to_string()
                } else {
                    format!(
                        "{} slower than the best of the list ({} samples/s).",
                        fmt::percent(1.0 - ratio),
                        fmt::throughput(b)
                    )
                }
            });
            // One option is no choice: "its only option", not "the fastest of 1 options".
            let of = match out.options_compared {
                1 => "its only option".to_string(),
                n => format!("the fastest of {n} options"),
            };
            let chosen = match (out.placement_chosen, out.nb_chosen) {
                (true, true) => format!("Placement and SUMMA panels chosen as {of}."),
                (true, false) => format!("Placement chosen as {of}."),
                (false, true) => format!("SUMMA panels chosen as {of}."),
                (false, false) => String::new(),
            };
            let spec_pin = ex.outcome.with_untracked(|o| {
                o.as_ref().map(|o| {
                    Pin {
                        model: o.spec.model_id.clone(),
                        system: o.spec.system_id.clone(),
                        domain: o.spec.system.domain_size,
                        batch: o.spec.global_batch,
                        candidate: c,
                    }
                    .to_text()
                })
            });
            let code_for_layers = code.clone();
            let show_layers = move |_| {
                let code = code_for_layers.clone();
                ex.url.update(true, |q| {
                    q.set(keys::SEL, &code);
                    q.set(keys::TAB, "layers");
                })
            };
            let pin = move |_| {
                let Some(p) = spec_pin.clone() else { return };
                ex.url.update(true, |q| {
                    keys::add_pin(q, &p, true);
                    q.set(keys::TAB, "compare");
                })
            };
            let domain = ex.outcome.with_untracked(|o| o.as_ref().map(|o| o.spec.system.domain_size).unwrap_or(0));
            let mode = ex.outcome.with_untracked(|o| o.as_ref().map(|o| o.spec.mode).unwrap_or_default());
            let code_attr = code.clone();
            view! {
                <div class="own-result" data-config=code_attr data-throughput=report.throughput_samples_per_s.to_string() data-fits=fit.fits().to_string()>
                    <h3>"Your configuration " <code>{code}</code> " " <ModeBadge mode=mode /></h3>
                    {memory_note}
                    <Headline report=(*report).clone() />
                    <p class="muted">{versus} " " {chosen}</p>
                    <div class="row">
                        <button type="button" class="small" on:click=show_layers>"Show its layers"</button>
                        <button type="button" class="small" on:click=pin>"Compare it"</button>
                    </div>
                    <div class="detail-grid">
                        <PartsTables report=(*report).clone() mode=mode.kind() />
                        <PlacementTable report=(*report).clone() domain=domain />
                    </div>
                </div>
            }
            .into_any()
        }
    };
    view! {
        <div class="panel-own">
            <form class="own-form" on:submit=|ev| ev.prevent_default() aria-label="Your configuration">
                {strategy_select}
                {input(field::TP, "TP (tp1)", "tensor parallel; SUMMA: features")}
                {input(field::TP2, "TP2 / CP", "2d: SUMMA tokens; 2d-seqp: context parallel; empty: 1")}
                {input(field::PP, "PP", "pipeline stages")}
                {input(field::MBS, "Micro-batch [samples]", "")}
                {input(field::NB, "SUMMA panels", "2d only; empty: fastest")}
                {input(field::NV, "Fast-domain shares", "tp×dp×pp (1d) or tp1×tp2×dp×pp; empty: fastest")}
            </form>
            {dp_line}
            {result}
        </div>
    }
}
