//! The scenario form: model, system, domain size, devices, global batch, strategies, top-k and
//! training budget. Every field is validated as it is typed (the message sits under the field);
//! text fields write the URL after a pause in typing (the first write of an edit adds a history
//! entry, the next ones replace it), selects and checkboxes at once. Invalid text is kept in the
//! URL too, but starts no search.

use fmperf_core::Strategy;
use fmperf_core::catalog::{self, TrainingBudget};
use fmperf_core::explore::choices::{Choice, model_choices, system_choices};
use fmperf_core::explore::inputs::{BudgetUnit, parse_strategies};
use leptos::prelude::*;

use super::fmt;
use super::keys;
use super::state::Explorer;
use super::widgets::{DebouncedInput, FieldError};

/// Writes one scenario key to the URL; `push` adds a history entry.
pub fn write_key(ex: Explorer, key: &'static str, value: String, push: bool) {
    ex.url.update(push, |q| {
        let mut f = keys::fields_from_query(q);
        keys::set_field(&mut f, key, value);
        keys::write_scenario(q, &f);
    });
}

/// A text input for one scenario key, debounced into the URL.
#[component]
fn TextField(
    key: &'static str,
    label: &'static str,
    #[prop(optional, into)] help: Signal<String>,
    #[prop(optional, into)] placeholder: Signal<String>,
    #[prop(optional)] inputmode: Option<&'static str>,
    /// Shown right of the input (e.g. a unit select).
    #[prop(optional)]
    children: Option<ChildrenFn>,
) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    view! {
        <DebouncedInput
            id=format!("ex-{key}")
            label=label
            value=Signal::derive(move || ex.live.with(|f| keys::field_text(f, key)))
            on_text=Callback::new(move |v: String| ex.live.update(|f| keys::set_field(f, key, v)))
            on_commit=Callback::new(move |(v, push): (String, bool)| write_key(ex, key, v, push))
            error=Signal::derive(move || ex.live_error(keys::form_field(key)))
            help=help
            placeholder=placeholder
            inputmode=inputmode.unwrap_or("numeric")
            addon=children
        />
    }
}

/// A select of catalog choices (reference presets first, unusable entries disabled with why).
#[component]
fn ChoiceSelect(key: &'static str, label: &'static str, choices: Vec<Choice>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let id = format!("ex-{key}");
    let err_id = format!("ex-{key}-error");
    let error = Signal::derive(move || ex.live_error(keys::form_field(key)));
    let value = move || ex.live.with(|f| keys::field_text(f, key));
    let known = choices.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    let group = |reference: bool, name: &'static str, choices: &[Choice]| {
        let options = choices
            .iter()
            .filter(|c| c.reference == reference)
            .map(|c| {
                let id = c.id.clone();
                let selected_id = id.clone();
                let label = match &c.unusable {
                    Some(_) => format!("{} — not usable", c.label),
                    None if !c.caveats.is_empty() => format!("{} — approximate", c.label),
                    None => c.label.clone(),
                };
                let title = c.unusable.clone().unwrap_or_else(|| c.caveats.join(" "));
                view! {
                    <option
                        value=id
                        disabled=c.unusable.is_some()
                        title=title
                        selected=move || value() == selected_id
                    >
                        {label}
                    </option>
                }
            })
            .collect_view();
        view! { <optgroup label=name>{options}</optgroup> }
    };
    let unusable: Vec<(String, String)> =
        choices.iter().filter_map(|c| c.unusable.as_ref().map(|why| (c.label.clone(), why.clone()))).collect();
    let why_not = (!unusable.is_empty()).then(|| {
        view! {
            <details class="unusable">
                <summary>{format!("{} not usable by the reference model: why", unusable.len())}</summary>
                <ul>
                    {unusable.into_iter().map(|(label, why)| view! { <li><strong>{label}</strong>": "{why}</li> }).collect_view()}
                </ul>
            </details>
        }
    });
    let presets = group(true, "Reference presets", &choices);
    let rest = group(false, "Catalog", &choices);
    // A value that is not a catalog id (typed into the URL) stays visible as its own option.
    let unknown = move || {
        let v = value();
        (!known.contains(&v) && !v.is_empty())
            .then(|| view! { <option value=v.clone() selected=true>{v.clone()}</option> })
    };
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <select
                id=id
                aria-invalid=move || error.with(|e| e.is_some()).to_string()
                aria-describedby=err_id.clone()
                prop:value=value
                on:change=move |ev| write_key(ex, key, event_target_value(&ev), true)
            >
                {unknown}
                {presets}
                {rest}
            </select>
            <FieldError id=err_id message=error />
            {why_not}
        </div>
    }
}

/// The strategy checkboxes.
#[component]
fn StrategyChecks() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let error = Signal::derive(move || ex.live_error(keys::STRATEGIES));
    let chosen = move || ex.live.with(|f| parse_strategies(&f.strategies).unwrap_or_default());
    let boxes = Strategy::ALL
        .into_iter()
        .map(|s| {
            let toggle = move |ev: leptos::ev::Event| {
                let on = event_target_checked(&ev);
                let mut list: Vec<Strategy> = chosen();
                if on && !list.contains(&s) {
                    list.push(s);
                }
                list.retain(|x| on || *x != s);
                // Keep the canonical order.
                let list: Vec<Strategy> = Strategy::ALL.into_iter().filter(|x| list.contains(x)).collect();
                write_key(ex, keys::STRATEGIES, fmperf_core::explore::inputs::strategies_text(&list), true);
            };
            view! {
                <label title=s.description()>
                    <input type="checkbox" prop:checked=move || chosen().contains(&s) on:change=toggle />
                    {s.as_str()}
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="field strategies" aria-describedby="ex-strategies-error">
            <legend>"Strategies"</legend>
            <div class="checks">{boxes}</div>
            <FieldError id="ex-strategies-error".to_string() message=error />
            <div class="field-help">"Megatron TP · SUMMA 2D · TP × context parallel"</div>
        </fieldset>
    }
}

/// The model's own training budget (what an empty budget field means), if the model is known.
fn model_budget(model: &str) -> Option<TrainingBudget> {
    catalog::find_model(model).ok().map(|m| m.training_budget)
}

/// The training budget: an amount and its unit; empty means the model's budget.
#[component]
fn BudgetField() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let default = move || ex.live.with(|f| model_budget(&f.model));
    let placeholder = Signal::derive(move || match default() {
        Some(TrainingBudget::Tokens(t) | TrainingBudget::Samples(t)) => format!("{t:e} (model default)"),
        None => String::new(),
    });
    let unit = move || {
        ex.live.with(|f| {
            if !f.budget_unit.is_empty() {
                f.budget_unit.clone()
            } else {
                default().map(|b| BudgetUnit::of(b).as_str().to_string()).unwrap_or_else(|| "tokens".into())
            }
        })
    };
    let help = Signal::derive(move || {
        let l = ex.spec.with(|s| s.as_ref().ok().map(|s| s.model.l));
        match (default(), l) {
            (Some(b @ TrainingBudget::Tokens(_)), Some(l)) if ex.live.with(|f| f.budget.trim().is_empty()) => {
                format!(
                    "= {} sequences of {l} tokens (the published study's budget)",
                    fmt::count(b.samples(l).round() as u64)
                )
            }
            (Some(TrainingBudget::Samples(_)), _) if ex.live.with(|f| f.budget.trim().is_empty()) => {
                "the published study's budget (350,000 samples × 80 epochs)".to_string()
            }
            _ => "e.g. 1e12, or 350000*80 (samples × epochs); empty: the model's".into(),
        }
    });
    view! {
        <TextField key=keys::BUDGET label="Training budget" help=help placeholder=placeholder inputmode="text">
            <label for="ex-unit" class="sr-only">"Budget unit"</label>
            <select
                id="ex-unit"
                class="unit"
                prop:value=unit
                on:change=move |ev| write_key(ex, keys::UNIT, event_target_value(&ev), true)
            >
                <option value="tokens" selected=move || unit() == "tokens">"tokens"</option>
                <option value="samples" selected=move || unit() == "samples">"samples"</option>
            </select>
        </TextField>
    }
}

/// The scenario form.
#[component]
pub fn ScenarioForm() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let system_domain = Signal::derive(move || {
        ex.live
            .with(|f| catalog::find_system(&f.system).ok().map(|s| s.scale_up.domain_size.to_string()))
            .unwrap_or_default()
    });
    let domain_help = Signal::derive(move || match system_domain.get().as_str() {
        "" => "devices per NVLink domain".to_string(),
        d => format!("per NVLink domain; empty: {d}"),
    });
    let notes = move || {
        ex.spec.with(|s| match s {
            Ok(spec) if !spec.notes.is_empty() => Some(view! {
                <details class="notes">
                    <summary>{format!("{} modelling note(s) for this model and system", spec.notes.len())}</summary>
                    <ul>{spec.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
                </details>
            }),
            _ => None,
        })
    };
    view! {
        <form class="scenario" on:submit=|ev| ev.prevent_default() aria-label="Scenario">
            <ChoiceSelect key=keys::MODEL label="Model" choices=model_choices() />
            <ChoiceSelect key=keys::SYSTEM label="System" choices=system_choices() />
            <div class="pair">
                <TextField key=keys::GPUS label="Devices" />
                <TextField key=keys::DOMAIN label="Scale-up domain" help=domain_help placeholder=system_domain />
            </div>
            <div class="pair">
                <TextField key=keys::BATCH label="Global batch [samples]" />
                <TextField key=keys::TOP label="Top configurations" help="1 to 100" />
            </div>
            <StrategyChecks />
            <BudgetField />
            {notes}
        </form>
    }
}
