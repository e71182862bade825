//! The editor of a user's model or system: a form with one input per field (unit and meaning as
//! label and help) whose every text is checked as it is typed by the format's own validators
//! ([`fmperf_core::format::form::check_form`]), the problem shown at its field, Save disabled while
//! anything is wrong; and a JSON view where a whole document can be pasted, with every problem
//! listed by field path.

mod field;
mod inherited_notes;
mod start;

use fmperf_core::Error;
use fmperf_core::format::custom_store::{CustomStore, EntryKind};
use fmperf_core::format::form::{
    FormField, check_form, document_text, form_fields, has_preset, values_of, values_of_document,
};
use fmperf_core::format::{Document, DocumentFormat, Parsed, parse_detailed, to_json};
use leptos::prelude::*;
use serde_json::Value;

use super::{Flash, problem_list, tab_of};
use crate::storage::stored;
use crate::url_state::UrlState;
use field::{FieldInput, group_title};
use inherited_notes::InheritedNotes;
use start::{EditorView, Start, Target, doc_id_mut, start_of};

/// The editor for the URL's `edit` value (or why there is nothing to edit).
#[component]
pub fn EditorView(kind: EntryKind, edit: String) -> impl IntoView {
    let url = expect_context::<UrlState>();
    match stored().with_untracked(|s| start_of(&s.store, kind, &edit)) {
        Ok(start) => view! { <Editor start=start /> }.into_any(),
        Err(why) => view! {
            <section class="card">
                <p class="notice error">"Nothing to edit: " {why} "."</p>
                <button type="button" on:click=move |_| url.update(true, |q| q.remove("edit"))>"Back to the catalog"</button>
            </section>
        }
        .into_any(),
    }
}

/// The document a pasted JSON text makes, ready to save (reference-format documents get a free id).
fn pasted_document(store: &CustomStore, parsed: &Parsed) -> Result<(EntryKind, Document), Error> {
    let kind = EntryKind::of(&parsed.document).ok_or_else(|| {
        Error::invalid("kind", "scenario", "must be \"model\" or \"system\" here")
            .with_hint("the catalog keeps models and systems; open scenarios in the explorer")
    })?;
    let mut doc = parsed.document.clone();
    if parsed.origin != DocumentFormat::Versioned
        && let Some((id, name, _)) = doc_id_mut(&mut doc)
    {
        *id = store.free_id(kind, &format!("my-{}", kind.as_str()));
        *name = format!("{} pasted as reference JSON", kind.as_str());
    }
    Ok((kind, doc))
}

#[component]
fn Editor(start: Start) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let flash = expect_context::<Flash>().0;
    let target = start.target;
    let kind = RwSignal::new(start.kind);
    let values = RwSignal::new(start.values.clone());
    let json = RwSignal::new(start.json.clone());
    let mode = RwSignal::new(start.mode);
    let show_preset = RwSignal::new(has_preset(&start.values));
    let switch_note = RwSignal::new(None::<String>);
    let save_error = RwSignal::new(None::<String>);
    let except = match target {
        Target::Replace(i) => Some(i),
        Target::New => None,
    };
    let inherited = InheritedNotes::new(&start, kind, values);

    let check = Memo::new(move |_| values.with(|v| check_form(kind.get().as_str(), v)));
    let form_conflict = Memo::new(move |_| {
        let id = values.with(|v| v.get("id").map(|s| s.trim().to_string()).unwrap_or_default());
        let k = kind.get();
        stored().with(|s| s.store.conflict(k, &id, except))
    });
    let errors = Memo::new(move |_| {
        let mut m = check.with(|c| c.field_errors.clone());
        if let Some(e) = form_conflict.get() {
            m.entry("id".to_string()).or_default().push(e);
        }
        m
    });
    let warnings = Memo::new(move |_| check.with(|c| c.warnings.clone()));
    // JSON view: the pasted document and what saving it would do.
    // A Hugging Face config.json (or a MaxText model file) pasted here is read as the model it
    // describes, by the launch readers the CLI's `--model FILE` uses.
    let parsed = Memo::new(move |_| {
        json.with(|t| {
            if !fmperf_launch::model_document::is_model_file(t, Some("config.json")) {
                return parse_detailed(t);
            }
            let id = stored().with(|s| s.store.free_id(EntryKind::Model, "my-hf-model"));
            fmperf_launch::model_document::model_document(t, Some("config.json"), &id)
                .map(|m| Parsed {
                    document: Document::Model(m),
                    origin: DocumentFormat::Versioned,
                    warnings: Vec::new(),
                })
                .map_err(|e| vec![e])
        })
    });
    let json_ready = Memo::new(move |_| {
        parsed.with(|p| match p {
            Err(errors) => Err(errors.clone()),
            Ok(p) => {
                let (k, doc) = stored().with(|s| pasted_document(&s.store, p)).map_err(|e| vec![e])?;
                if let Target::Replace(_) = target
                    && k != kind.get()
                {
                    return Err(vec![
                        Error::invalid("kind", k.as_str(), format!("must be \"{}\" here", kind.get().as_str()))
                            .with_hint("this entry is in the other list; import the document instead"),
                    ]);
                }
                let id = match &doc {
                    Document::Model(m) => m.id.clone(),
                    Document::System(s) => s.id.clone(),
                    Document::Scenario(_) => String::new(),
                };
                match stored().with(|s| s.store.conflict(k, &id, except)) {
                    Some(e) => Err(vec![e]),
                    None => Ok((k, doc, p.origin, p.warnings.clone())),
                }
            }
        })
    });
    let can_save = move || match mode.get() {
        EditorView::Form => check.with(|c| c.is_valid()) && form_conflict.with(Option::is_none),
        EditorView::Json => json_ready.with(Result::is_ok),
    };

    let save = move |_| {
        let doc = match mode.get_untracked() {
            EditorView::Form => check.with_untracked(|c| c.document.clone()).map(|d| (kind.get_untracked(), d)),
            EditorView::Json => json_ready.with_untracked(|r| r.as_ref().ok().map(|(k, d, _, _)| (*k, d.clone()))),
        };
        let Some((k, doc)) = doc else { return };
        let id = match &doc {
            Document::Model(m) => m.id.clone(),
            Document::System(s) => s.id.clone(),
            Document::Scenario(_) => String::new(),
        };
        let result = match target {
            Target::New => stored().add(doc).map(|_| ()),
            Target::Replace(i) => stored().replace(k, i, doc),
        };
        match result {
            Ok(()) => {
                let persisted = stored().with_untracked(|s| s.persistent() && s.write_error.is_none());
                let where_ =
                    if persisted { "in this browser" } else { "for this page only (browser storage is not available)" };
                flash.set(Some(format!("Saved {} `{id}` {where_}.", k.as_str())));
                url.update(true, |q| {
                    q.remove("edit");
                    q.set("tab", tab_of(k));
                    q.set("entry", &id);
                    q.remove("q");
                });
            }
            Err(e) => save_error.set(Some(e.to_string())),
        }
    };
    let cancel = move |_| url.update(true, |q| q.remove("edit"));

    let to_json_view = move |_| {
        let text = check
            .with_untracked(|c| c.document.as_ref().map(to_json))
            .unwrap_or_else(|| values.with_untracked(|v| document_text(kind.get_untracked().as_str(), v)));
        json.set(text);
        switch_note.set(None);
        mode.set(EditorView::Json);
    };
    let to_form_view = move |_| {
        let text = json.get_untracked();
        let value: Value = match serde_json::from_str(&text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return switch_note.set(Some("The form needs a JSON object {…}; fix the text first.".to_string())),
            Err(e) => return switch_note.set(Some(format!("The text is not JSON yet ({e}); fix it first."))),
        };
        let (k, vals) = match parsed.get_untracked() {
            Ok(p) => match stored().with_untracked(|s| pasted_document(&s.store, &p)) {
                Ok((k, doc)) => (k, values_of_document(&doc)),
                Err(_) => return switch_note.set(Some("A scenario cannot be edited here.".to_string())),
            },
            Err(_) => {
                let k = match value.get("kind").and_then(Value::as_str) {
                    Some("system") => EntryKind::System,
                    Some("model") => EntryKind::Model,
                    _ => kind.get_untracked(),
                };
                (k, values_of(k.as_str(), &value))
            }
        };
        if target != Target::New && k != kind.get_untracked() {
            return switch_note.set(Some(format!("This entry must stay a {}.", kind.get_untracked().as_str())));
        }
        let unknown = parsed.with_untracked(|p| {
            p.as_ref().err().map_or(0, |errs| errs.iter().filter(|e| matches!(e, Error::UnknownField { .. })).count())
        });
        switch_note.set((unknown > 0).then(|| format!("{unknown} field(s) the format does not know were left out.")));
        show_preset.set(has_preset(&vals));
        kind.set(k);
        values.set(vals);
        mode.set(EditorView::Form);
    };

    let form_view = move || {
        let k = kind.get();
        let fields = form_fields(k.as_str());
        let mut groups: Vec<(&'static str, Vec<FormField>)> = Vec::new();
        let mut previous: Option<&'static str> = None;
        for f in fields {
            let starts = previous != Some(f.group())
                || (f.group().is_empty() && matches!(f.spec.path, "memory_gb" | "tdp_w" | "sources"));
            previous = Some(f.group());
            match groups.last_mut() {
                Some((_, g)) if !starts => g.push(f),
                _ => groups.push((group_title(k, &f), vec![f])),
            }
        }
        groups
            .into_iter()
            .map(|(title, fields)| {
                let preset = fields.first().is_some_and(|f| f.group() == "preset");
                let inputs = fields
                    .into_iter()
                    .map(|f| view! { <FieldInput field=f values=values errors=errors warnings=warnings /> })
                    .collect_view();
                let remove = preset.then(|| {
                    let clear = move |_| {
                        values.update(|v| {
                            for (key, text) in v.iter_mut() {
                                if key.starts_with("preset.") {
                                    text.clear();
                                }
                            }
                        });
                        show_preset.set(false);
                    };
                    view! {
                        <p class="muted">
                            "When given, these are used exactly as they are; the fields above only describe the part. "
                            <button type="button" on:click=clear>"Remove the preset"</button>
                        </p>
                    }
                });
                view! {
                    <fieldset class="field-group" class:preset=preset style:display=move || if preset && !show_preset.get() { "none" } else { "" }>
                        <legend>{title}</legend>
                        {remove}
                        <div class="field-grid">{inputs}</div>
                    </fieldset>
                }
            })
            .collect_view()
    };

    let json_view = move || {
        let status = json_ready.with(|r| match r {
            Ok((k, _, origin, warns)) => {
                let w = (!warns.is_empty()).then(|| {
                    let items = problem_list(warns);
                    view! { <p class="muted">"Worth knowing:"</p> {items} }
                });
                let from = if json.with(|t| fmperf_launch::model_document::is_model_file(t, Some("config.json"))) {
                    "a Hugging Face config.json, read as the model it describes"
                } else {
                    origin.describe()
                };
                view! {
                    <p class="notice json-ok" role="status">
                        {format!("Reads as a {} ({from}).", k.as_str())}
                    </p>
                    {w}
                }
                .into_any()
            }
            Err(errors) if json.with(|t| t.trim().is_empty()) => {
                let _ = errors;
                view! { <p class="muted">"Paste a model or system document: fmperf's format, the reference's model or system JSON, or a Hugging Face config.json (read as the model it describes)."</p> }.into_any()
            }
            Err(errors) => {
                let n = errors.len();
                view! {
                    <div class="notice error json-problems" role="status">
                        <p>{if n == 1 { "1 problem:".to_string() } else { format!("{n} problems:") }}</p>
                        {problem_list(errors)}
                    </div>
                }
                .into_any()
            }
        });
        view! {
            <label for="json-editor">"Document (JSON)"</label>
            <textarea
                id="json-editor"
                class="json-editor"
                rows="22"
                spellcheck="false"
                placeholder="{\"schema_version\": 1, \"kind\": \"model\", \"id\": \"my-model\", …}"
                prop:value=move || json.get()
                on:input=move |ev| json.set(event_target_value(&ev))
                aria-describedby="json-status"
            ></textarea>
            <div id="json-status">{status}</div>
        }
    };

    let summary = move || {
        if mode.get() != EditorView::Form {
            return None;
        }
        let (n, others) = check.with(|c| (c.all_errors().len(), c.other_errors.clone()));
        let n = n + usize::from(form_conflict.with(Option::is_some));
        (n > 0).then(|| {
            let text = if n == 1 {
                "1 problem to fix before saving.".to_string()
            } else {
                format!("{n} problems to fix before saving.")
            };
            view! {
                <div class="notice error form-summary" role="status">
                    <p>{text} " Each is shown at its field."</p>
                    {(!others.is_empty()).then(|| problem_list(&others))}
                </div>
            }
        })
    };
    let not_persistent = move || {
        stored()
            .with(|s| !s.persistent())
            .then(|| view! { <p class="notice warn">"Browser storage is not available: saved entries last until this page is closed."</p> })
    };

    view! {
        <section class="card editor" aria-labelledby="editor-title">
            <div class="row editor-head">
                <h2 id="editor-title">{start.title.clone()}</h2>
                <span class="spacer"></span>
                <div class="tabs small" role="tablist" aria-label="Editor view">
                    <button type="button" role="tab" class="tab" aria-selected=move || (mode.get() == EditorView::Form).to_string() on:click=to_form_view>"Form"</button>
                    <button type="button" role="tab" class="tab" aria-selected=move || (mode.get() == EditorView::Json).to_string() on:click=to_json_view>"JSON"</button>
                </div>
            </div>
            <p class="muted">
                "Every value is checked as you type, by the same rules fmperf applies to files. Keep or add the sources of your numbers."
            </p>
            {move || switch_note.get().map(|n| view! { <p class="notice warn">{n}</p> })}
            {move || if mode.get() == EditorView::Form { form_view().into_any() } else { json_view().into_any() }}
            {move || inherited.view()}
            {summary}
            {not_persistent}
            {move || save_error.get().map(|e| view! { <p class="notice error">"Not saved: " {e}</p> })}
            <div class="row actions editor-actions">
                <button type="button" class="primary" data-action="save" on:click=save disabled=move || !can_save()>"Save"</button>
                <button type="button" on:click=cancel>"Cancel"</button>
            </div>
        </section>
    }
}
