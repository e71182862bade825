//! One input of the editor's form ([`FieldInput`]): its label (the field's path and unit), the
//! control its kind asks for (a choice, a multi-line text, a number or a text), its help (the
//! field's meaning, what an empty value means) and its problems as the format's validators report
//! them, errors and warnings at the field; and the titles of the form's groups of fields.

use std::collections::BTreeMap;

use fmperf_core::Error;
use fmperf_core::format::custom_store::EntryKind;
use fmperf_core::format::form::{FormField, FormValues};
use fmperf_core::schema::fields::Kind;
use leptos::prelude::*;

use super::super::detail::unit_label;
use super::super::rich;

pub(super) fn group_title(kind: EntryKind, first: &FormField) -> &'static str {
    match (first.group(), first.spec.path) {
        ("", "id") if kind == EntryKind::Model => "Model",
        ("", "id") => "Identity",
        ("", "memory_gb") => "Memory",
        ("", "tdp_w") => "Power and headline figures",
        ("", "sources") => "Sources and notes",
        ("peak_tflops", _) => "Dense peak rates",
        ("measured_matmul_tflops", _) => "Measured matmul ceilings",
        ("scale_up", _) => "Scale-up domain",
        ("scale_out", _) => "Scale-out network",
        ("network", _) => "Network efficiencies and latencies",
        ("host", _) => "Host CPU",
        ("moe", _) => "Mixture of experts",
        ("mla", _) => "Multi-head latent attention (MLA)",
        ("sliding_window", _) => "Sliding-window attention",
        ("", "mtp_layers") => "Other model figures",
        ("training_budget", _) => "Training budget (give tokens or samples)",
        ("preset", _) => "Exact reference parameters (preset)",
        _ => "Fields",
    }
}

fn input_id(path: &str) -> String {
    format!("field-{}", path.replace('.', "-"))
}

fn empty_help(f: &FormField) -> &'static str {
    if f.spec.nullable {
        " Leave empty if unknown."
    } else if !f.spec.required && matches!(f.spec.kind, Kind::Int { .. } | Kind::Num { .. } | Kind::Choice(_)) {
        " Leave empty for the default."
    } else {
        ""
    }
}

/// One input with label (field and unit), help (meaning) and its problems.
#[component]
pub(super) fn FieldInput(
    field: FormField,
    values: RwSignal<FormValues>,
    errors: Memo<BTreeMap<String, Vec<Error>>>,
    warnings: Memo<BTreeMap<String, Vec<Error>>>,
) -> impl IntoView {
    let path = field.path();
    let id = input_id(&path);
    let (help_id, err_id) = (format!("{id}-help"), format!("{id}-error"));
    let value = {
        let p = path.clone();
        move || values.with(|v| v.get(&p).cloned().unwrap_or_default())
    };
    let set = {
        let p = path.clone();
        move |ev: leptos::ev::Event| {
            let t = event_target_value(&ev);
            values.update(|v| {
                v.insert(p.clone(), t);
            });
        }
    };
    let msgs = {
        let p = path.clone();
        Memo::new(move |_| errors.with(|e| e.get(&p).cloned().unwrap_or_default()))
    };
    let warns = {
        let p = path.clone();
        Memo::new(move |_| warnings.with(|w| w.get(&p).cloned().unwrap_or_default()))
    };
    let invalid = move || (!msgs.with(Vec::is_empty)).to_string();
    let described = format!("{help_id} {err_id}");
    let control = match field.spec.kind {
        Kind::Choice(names) => {
            let current = value();
            let mut opts: Vec<(String, String)> = Vec::new();
            if field.may_be_empty() {
                opts.push((String::new(), "(default)".to_string()));
            }
            opts.extend(names.iter().map(|n| (n.to_string(), n.to_string())));
            if !current.is_empty() && !names.contains(&current.as_str()) {
                opts.push((current.clone(), current.clone()));
            }
            let options = opts
                .into_iter()
                .map(|(v, label)| {
                    let selected = v == current;
                    view! { <option value=v selected=selected>{label}</option> }
                })
                .collect_view();
            view! {
                <select id=id.clone() on:change=set aria-invalid=invalid aria-describedby=described>
                    {options}
                </select>
            }
            .into_any()
        }
        _ if field.multiline() => view! {
            <textarea id=id.clone() rows=if matches!(field.spec.kind, Kind::TextList) { "5" } else { "3" } prop:value=value on:input=set aria-invalid=invalid aria-describedby=described></textarea>
        }
        .into_any(),
        _ => {
            let mode = match field.spec.kind {
                Kind::Int { .. } => "numeric",
                Kind::Num { .. } => "decimal",
                _ => "text",
            };
            view! {
                <input
                    id=id.clone()
                    type="text"
                    inputmode=mode
                    autocomplete="off"
                    spellcheck="false"
                    prop:value=value
                    on:input=set
                    aria-invalid=invalid
                    aria-describedby=described
                />
            }
            .into_any()
        }
    };
    let unit = unit_label(&field);
    let list_help = if matches!(field.spec.kind, Kind::TextList) { " One per line." } else { "" };
    view! {
        <div class="field" data-path=path.clone() class:wide=field.multiline() class:invalid=move || !msgs.with(Vec::is_empty)>
            <label for=id>
                <code>{path.clone()}</code>
                {(unit != "—").then(|| view! { <span class="unit">" [" {unit} "]"</span> })}
            </label>
            {control}
            <div class="field-help" id=help_id>{rich(field.spec.description)} "." {list_help} {empty_help(&field)}</div>
            <div class="field-error" id=err_id>
                {move || msgs.get().into_iter().map(|m| view! { <div>{rich(&m.to_string())}</div> }).collect_view()}
            </div>
            {move || warns.get().into_iter().map(|m| view! { <div class="field-warn">{m.to_string()}</div> }).collect_view()}
        </div>
    }
}
