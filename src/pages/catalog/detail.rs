//! The detail of one entry: what the reference model makes of it, every field with its value,
//! unit and meaning, its sources and notes, the mapping onto the reference model's inputs
//! (systems), and the actions (duplicate & edit, export, edit and delete for the user's entries).

use fmperf_core::catalog::{Architecture, CatalogModel, CatalogSystem};
use fmperf_core::format::custom_store::EntryKind;
use fmperf_core::format::form::{FormField, form_fields, has_preset, values_of_document};
use fmperf_core::format::{Document, model_to_reference_json, to_json};
use fmperf_core::reference::model_summary;
use fmperf_core::schema::fields::Kind;
use leptos::prelude::*;

use super::entry::CardEntry;
use super::mapping::MappingPanel;
use super::transfer::download_document_text;
use super::{Flash, rich};
use crate::storage::stored;
use crate::url_state::UrlState;

/// The unit shown for a field: its own, "dimensionless" for a number without one, `—` otherwise.
pub fn unit_label(f: &FormField) -> &'static str {
    match (f.spec.unit, f.spec.kind) {
        ("", Kind::Int { .. } | Kind::Num { .. }) => "dimensionless",
        ("", _) => "—",
        (u, _) => u,
    }
}

/// Every field of a document (sources and notes aside) with value, unit and meaning.
#[component]
pub fn FieldTable(doc: Document) -> impl IntoView {
    let values = values_of_document(&doc);
    let preset = has_preset(&values);
    let rows = form_fields(doc.kind())
        .into_iter()
        .filter(|f| !matches!(f.spec.kind, Kind::TextList))
        .filter(|f| preset || f.prefix.is_empty())
        .map(|f| {
            let path = f.path();
            let text = values.get(&path).cloned().unwrap_or_default();
            let numeric = matches!(f.spec.kind, Kind::Int { .. } | Kind::Num { .. });
            let value = if text.is_empty() {
                view! { <span class="muted">"unknown"</span> }.into_any()
            } else if numeric {
                view! { <span class="mono">{text}</span> }.into_any()
            } else {
                view! { <span>{text}</span> }.into_any()
            };
            let shown = path.clone();
            view! {
                <tr data-path=path data-numeric=numeric.to_string()>
                    <th scope="row"><code>{shown}</code></th>
                    <td class="value">{value}</td>
                    <td class="unit">{unit_label(&f)}</td>
                    <td class="meaning">{rich(f.spec.description)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap" tabindex="0">
            <table class="fields">
                <thead>
                    <tr>
                        <th scope="col">"field"</th>
                        <th scope="col">"value"</th>
                        <th scope="col">"unit"</th>
                        <th scope="col">"meaning"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// What reference mode makes of a model: exact, approximated (with every caveat), or unusable
/// (with why), plus its parameter count and FLOPs as the reference counts them.
#[component]
fn ModelVerdict(model: CatalogModel) -> impl IntoView {
    let caveats = model.reference_caveats();
    let list = (!caveats.is_empty()).then(|| {
        let items = caveats.iter().map(|c| view! { <li>{c.text.clone()}</li> }).collect_view();
        view! { <ul>{items}</ul> }
    });
    let (class, head) = match model.to_shape() {
        Err(e) => ("notice error", format!("The reference model cannot use it: {e}.")),
        Ok(_) if model.reference_compatible() && caveats.is_empty() => {
            ("notice", "The reference model represents it as it is.".to_string())
        }
        Ok(_) if model.reference_compatible() => {
            ("notice", "The reference model represents its blocks as they are:".to_string())
        }
        Ok(_) => ("notice warn", "The reference model runs it approximately:".to_string()),
    };
    let counts = model.to_shape().ok().and_then(|shape| model_summary(&shape).ok()).map(|s| {
        view! {
            <p class="derived">
                "As the reference model counts it: "
                <strong>{format!("{:.2} B", s.parameters / 1e9)}</strong>
                " parameters (billions) and "
                <strong>{format!("{:.3} PFLOP", s.flops_per_sample_tflop / 1e3)}</strong>
                " of training FLOPs per sample (transformer blocks only: no embeddings, no output head)."
            </p>
        }
    });
    view! {
        <div class=format!("verdict {class}")>
            <p>{head}</p>
            {list}
        </div>
        {counts}
    }
}

/// What the performance model captures for a system, in plain words.
#[component]
fn SystemVerdict(system: CatalogSystem) -> impl IntoView {
    let preset = system.preset.is_some().then(|| {
        view! {
            <p class="notice">
                "Exact parameters of the reference's system file: the mapping uses them as they are (only the domain \
                 size and the NICs per device can change). The hardware fields below are derived from them."
            </p>
        }
    });
    let fit = system.model_fit.clone().map(|text| {
        let native = system.architecture == Architecture::Gpu;
        let class = if native { "notice verdict" } else { "notice warn verdict" };
        let head = if native {
            "What the model captures for it: ".to_string()
        } else {
            format!("Not what the model was made for ({}): ", system.architecture.as_str().replace('_', "-"))
        };
        view! {
            <p class=class>
                <strong>{head}</strong>
                {text}
            </p>
        }
    });
    view! {
        {preset}
        {fit}
    }
}

fn list_of(title: &'static str, class: &'static str, items: Vec<String>) -> impl IntoView {
    let empty = items.is_empty();
    let lis = items.into_iter().map(|s| view! { <li>{s}</li> }).collect_view();
    let body = if empty {
        view! { <p class="muted">"none given"</p> }.into_any()
    } else {
        view! { <ol class=class>{lis}</ol> }.into_any()
    };
    view! {
        <h3>{title}</h3>
        {body}
    }
}

/// A delete button that asks first (in place, no dialog).
#[component]
pub fn DeleteButton(kind: EntryKind, index: usize, label: String) -> impl IntoView {
    let asking = RwSignal::new(false);
    let url = expect_context::<UrlState>();
    let flash = use_context::<Flash>();
    let label2 = label.clone();
    let confirm = move |_| {
        stored().remove(kind, index);
        if let Some(Flash(f)) = flash {
            f.set(Some(format!("Deleted {label2}.")));
        }
        url.update(false, |q| q.remove("entry"));
    };
    view! {
        <Show
            when=move || asking.get()
            fallback=move || view! { <button type="button" class="danger" on:click=move |_| asking.set(true)>"Delete"</button> }
        >
            <span class="confirm" role="group" aria-label="Confirm deletion">
                {format!("Delete {label} for good? ")}
                <button type="button" class="danger" data-confirm="delete" on:click=confirm.clone()>"Delete"</button>
                <button type="button" on:click=move |_| asking.set(false)>"Keep it"</button>
            </span>
        </Show>
    }
}

/// The detail of an entry.
#[component]
pub fn EntryDetail(entry: CardEntry) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let id = entry.id();
    let (verdict, sources, notes, mapping) = match &entry.doc {
        Document::Model(m) => (
            view! { <ModelVerdict model=m.clone() /> }.into_any(),
            m.sources.clone(),
            fmperf_core::vocab::Note::texts(&m.notes),
            None,
        ),
        Document::System(s) => (
            view! { <SystemVerdict system=s.clone() /> }.into_any(),
            s.sources.clone(),
            fmperf_core::vocab::Note::texts(&s.notes),
            Some(view! { <MappingPanel system=s.clone() /> }),
        ),
        Document::Scenario(_) => (().into_any(), Vec::new(), Vec::new(), None),
    };
    let duplicate = {
        let id = id.clone();
        move |_| url.update(true, |q| q.set("edit", &format!("copy:{id}")))
    };
    let json = to_json(&entry.doc);
    let file = format!("{id}.json");
    let reference = match &entry.doc {
        Document::Model(m) => m.to_shape().ok().map(|shape| {
            let file = format!("{id}.reference.json");
            let text = model_to_reference_json(&shape);
            view! {
                <button type="button" on:click=move |_| download_document_text(&file, &text)>
                    "Export as reference model JSON"
                </button>
            }
        }),
        _ => None,
    };
    let mine = entry.custom.map(|index| {
        let kind = if matches!(entry.doc, Document::System(_)) { EntryKind::System } else { EntryKind::Model };
        let edit = move |_| url.update(true, |q| q.set("edit", &format!("custom:{index}")));
        view! {
            <button type="button" on:click=edit>"Edit"</button>
            <DeleteButton kind=kind index=index label=format!("`{id}`") />
        }
    });
    view! {
        {verdict}
        <FieldTable doc=entry.doc.clone() />
        <div class="grid two-lists">
            <div>{list_of("Sources", "sources", sources)}</div>
            <div>{list_of("Notes", "notes", notes)}</div>
        </div>
        {mapping}
        <div class="row actions">
            <button type="button" class="primary" on:click=duplicate>"Duplicate & edit"</button>
            <button type="button" on:click=move |_| download_document_text(&file, &json)>"Export JSON"</button>
            {reference}
            {mine}
        </div>
    }
}
