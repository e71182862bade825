//! The catalog view (`?view=catalog`): the built-in models and systems with their units and
//! sources, the user's own entries (kept in browser storage by [`crate::storage`]), an editor that
//! validates as one types, and import/export of JSON files.
//!
//! URL keys: `tab` (`models` | `systems`), `q` (search text), `entry` (the id of the open entry),
//! `edit` (`copy:<id>` duplicates an entry, `custom:<index>` edits one of the user's entries of the
//! tab, `json` starts from a pasted document).

mod browser;
mod detail;
mod editor;
mod entry;
mod mapping;
mod transfer;

use fmperf_core::Error;
use fmperf_core::catalog;
use fmperf_core::format::custom_store::EntryKind;
use leptos::prelude::*;

use crate::storage::stored;
use crate::url_state::UrlState;

/// The tab of a `tab` URL value (models unless `systems`).
fn kind_of(tab: Option<&str>) -> EntryKind {
    if tab == Some("systems") { EntryKind::System } else { EntryKind::Model }
}

/// The `tab` URL value of a kind.
fn tab_of(kind: EntryKind) -> &'static str {
    kind.list_key()
}

/// A text with `backticked` names shown as code.
fn rich(text: &str) -> impl IntoView + use<> {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            let part = part.to_string();
            if i % 2 == 1 { view! { <code>{part}</code> }.into_any() } else { part.into_any() }
        })
        .collect_view()
}

/// Problems as a list, each with the dotted path of its field first.
fn problem_list(errors: &[Error]) -> impl IntoView + use<> {
    let items = errors
        .iter()
        .map(|e| {
            let field = e.field().unwrap_or("document").to_string();
            let shown = field.clone();
            view! { <li data-field=field><code>{shown}</code> " " {rich(&e.to_string())}</li> }
        })
        .collect_view();
    view! { <ul class="problems">{items}</ul> }
}

/// A short confirmation shown above the list after a change ("Saved model `x`.").
#[derive(Clone, Copy)]
struct Flash(RwSignal<Option<String>>);

/// The catalog view.
#[component]
pub fn CatalogPage() -> impl IntoView {
    let url = expect_context::<UrlState>();
    let kind = Memo::new(move |_| kind_of(url.get("tab").as_deref()));
    let edit = Memo::new(move |_| url.get("edit"));
    provide_context(Flash(RwSignal::new(None)));
    let tab = move |k: EntryKind, label: &'static str| {
        let count = move || {
            let custom = stored().with(|s| s.store.list(k).len());
            let builtin = match k {
                EntryKind::Model => catalog::models().len(),
                EntryKind::System => catalog::systems().len(),
            };
            builtin + custom
        };
        let go = move |ev: leptos::ev::MouseEvent| {
            ev.prevent_default();
            url.update(true, |q| {
                q.set("tab", tab_of(k));
                q.remove("entry");
                q.remove("edit");
            });
        };
        view! {
            <a
                role="tab"
                class="tab"
                href=format!("?view=catalog&tab={}", tab_of(k))
                aria-selected=move || (kind.get() == k).to_string()
                on:click=go
            >
                {label}
                " "
                <span class="count">{count}</span>
            </a>
        }
    };
    view! {
        <div class="catalog">
            <section class="card catalog-head">
                <h1>"Catalog"</h1>
                <p class="muted">
                    "Every model and system fmperf knows, each number with its unit and its source. "
                    "Duplicate any entry to make your own, or import a JSON file (fmperf's format or the reference's); "
                    "your entries stay in this browser."
                </p>
                {move || {
                    stored()
                        .notice()
                        .map(|n| view! { <p class="notice warn storage-notice" role="status">{n}</p> })
                }}
                <div class="tabs" role="tablist" aria-label="Catalogs">
                    {tab(EntryKind::Model, "Models")}
                    {tab(EntryKind::System, "Systems")}
                </div>
            </section>
            {move || match edit.get() {
                Some(e) => view! { <editor::EditorView kind=kind.get_untracked() edit=e /> }.into_any(),
                None => view! { <browser::CatalogBrowser kind=kind /> }.into_any(),
            }}
        </div>
    }
}
