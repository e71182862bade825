//! Files in and out of the catalog: import JSON files (chosen or dropped) into the user's entries,
//! with every problem of every file reported, and downloads of documents.

use fmperf_core::format::MAX_DOCUMENT_BYTES;
use fmperf_core::format::custom_store::{EntryKind, ImportOutcome};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{File, FileList, FileReader};

use super::{problem_list, tab_of};
use crate::download::download_text;
use crate::storage::stored;
use crate::url_state::UrlState;

/// Offers a JSON text as a file (a refusal by the browser is logged, nothing else can be done).
pub fn download_document_text(file: &str, text: &str) {
    if let Err(e) = download_text(file, "application/json", text) {
        leptos::logging::warn!("{e}");
    }
}

/// Reads one file as text and hands `(name, Ok(text) | Err(why))` to `done`.
fn read_file(file: File, done: impl Fn(String, Result<String, String>) + 'static) {
    let name = file.name();
    let size = file.size();
    if size > MAX_DOCUMENT_BYTES as f64 {
        done(name, Err(format!("the file has {size} bytes; at most {MAX_DOCUMENT_BYTES} are read")));
        return;
    }
    let reader = match FileReader::new() {
        Ok(r) => r,
        Err(_) => return done(name, Err("this browser cannot read files".to_string())),
    };
    let done = std::rc::Rc::new(done);
    let (r, n, d) = (reader.clone(), name.clone(), done.clone());
    let onload = wasm_bindgen::closure::Closure::once_into_js(move || {
        let text = r.result().ok().and_then(|v| v.as_string());
        d(n, text.ok_or_else(|| "the file is not text".to_string()));
    });
    let (n, d) = (name.clone(), done.clone());
    let onerror = wasm_bindgen::closure::Closure::once_into_js(move || {
        d(n, Err("the browser could not read the file".to_string()))
    });
    reader.set_onload(Some(onload.unchecked_ref()));
    reader.set_onerror(Some(onerror.unchecked_ref()));
    if reader.read_as_text(&file).is_err() {
        done(name, Err("the browser could not read the file".to_string()));
    }
}

/// Imports every file of a list; outcomes are prepended to `results` as they arrive.
fn import_files(files: FileList, results: RwSignal<Vec<ImportOutcome>>) {
    for i in 0..files.length() {
        if let Some(file) = files.get(i) {
            read_file(file, move |name, text| {
                let outcome = match text {
                    Ok(t) => stored().import(&name, &t),
                    Err(why) => ImportOutcome {
                        file: name,
                        errors: vec![fmperf_core::Error::Parse { message: why }],
                        ..ImportOutcome::default()
                    },
                };
                results.update(|r| r.insert(0, outcome));
            });
        }
    }
}

/// The report of one imported file.
#[component]
fn OutcomeView(outcome: ImportOutcome) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let ok = outcome.errors.is_empty() && !outcome.added.is_empty();
    let added = outcome
        .added
        .iter()
        .map(|(kind, id)| {
            let (kind, id2) = (*kind, id.clone());
            let open = move |ev: leptos::ev::MouseEvent| {
                ev.prevent_default();
                url.update(true, |q| {
                    q.set("tab", tab_of(kind));
                    q.set("entry", &id2);
                    q.remove("q");
                });
            };
            view! {
                <li>
                    "added " {kind.as_str()} " "
                    <a href="#" on:click=open><code>{id.clone()}</code></a>
                </li>
            }
        })
        .collect_view();
    let renamed = outcome
        .renamed
        .iter()
        .map(|(want, got)| {
            view! { <li>"id " <code>{want.clone()}</code> " was taken: saved as " <code>{got.clone()}</code></li> }
        })
        .collect_view();
    let errors = problem_list(&outcome.errors);
    let warnings = problem_list(&outcome.warnings);
    let origin = outcome.origin.map(|o| format!(" ({})", o.describe()));
    let n = outcome.errors.len();
    let head = if ok {
        "imported".to_string()
    } else if n == 1 {
        "not imported: 1 problem".to_string()
    } else {
        format!("not imported: {n} problems")
    };
    view! {
        <li class=if ok { "outcome ok" } else { "outcome bad" } data-file=outcome.file.clone()>
            <strong>{outcome.file.clone()}</strong>
            {origin}
            ": "
            <span class="outcome-head">{head}</span>
            <ul>{added}{renamed}</ul>
            {(n > 0).then_some(errors)}
            {(!outcome.warnings.is_empty()).then(|| view! { <p class="muted">"Worth knowing:"</p> {warnings} })}
        </li>
    }
}

/// The user's entries' toolbar: import files (chosen or dropped), paste JSON, export everything.
#[component]
pub fn ImportPanel(kind: Memo<EntryKind>) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let results = RwSignal::new(Vec::<ImportOutcome>::new());
    let dragging = RwSignal::new(false);
    let on_change = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        if let Some(files) = input.files() {
            import_files(files, results);
        }
        // Choosing the same file again must import it again.
        input.set_value("");
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        let files = js_sys::Reflect::get(&ev, &JsValue::from_str("dataTransfer"))
            .and_then(|dt| js_sys::Reflect::get(&dt, &JsValue::from_str("files")))
            .ok()
            .and_then(|f| f.dyn_into::<FileList>().ok());
        if let Some(files) = files {
            import_files(files, results);
        }
    };
    let paste = move |_| url.update(true, |q| q.set("edit", "json"));
    let export_all = move |_| download_document_text("fmperf-custom-entries.json", &stored().export_text());
    let has_any = move || stored().with(|s| !s.store.models.is_empty() || !s.store.systems.is_empty());
    let list = move || results.get().into_iter().map(|o| view! { <OutcomeView outcome=o /> }).collect_view();
    view! {
        <div
            class="import-panel"
            class:dragging=move || dragging.get()
            on:dragover=move |ev: leptos::ev::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <div class="row">
                <label class="button file-button">
                    "Import JSON files…"
                    <input type="file" accept=".json,application/json" multiple on:change=on_change data-testid="import-input" />
                </label>
                <button type="button" on:click=paste>"Paste JSON…"</button>
                <button type="button" on:click=export_all disabled=move || !has_any()>"Export all your entries"</button>
                <span class="muted drop-hint">
                    {move || format!("or drop files here. Accepted: fmperf {} or system documents, the reference's model JSON ({{l, e, h, depth}}) or system JSON (config-*.json), an export of all your entries.", kind.get().as_str())}
                </span>
            </div>
            <Show when=move || !results.with(Vec::is_empty)>
                <div class="import-results" role="status">
                    <div class="row">
                        <h3>"Import results"</h3>
                        <button type="button" class="link" on:click=move |_| results.set(Vec::new())>"Clear"</button>
                    </div>
                    <ul class="outcomes">{list}</ul>
                </div>
            </Show>
        </div>
    }
}
