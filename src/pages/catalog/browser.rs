//! The list of a tab: a search box (URL `q`), the user's own entries (with import/export and the
//! ones needing attention), then the built-in catalog.

use fmperf_core::catalog;
use fmperf_core::format::Document;
use fmperf_core::format::custom_store::EntryKind;
use leptos::prelude::*;

use super::Flash;
use super::entry::{AttentionCard, CardEntry, EntryCard, matches};
use super::transfer::ImportPanel;
use crate::storage::stored;
use crate::url_state::UrlState;

fn builtin(kind: EntryKind) -> Vec<CardEntry> {
    match kind {
        EntryKind::Model => {
            catalog::models().iter().map(|m| CardEntry { doc: Document::Model(m.clone()), custom: None }).collect()
        }
        EntryKind::System => {
            catalog::systems().iter().map(|s| CardEntry { doc: Document::System(s.clone()), custom: None }).collect()
        }
    }
}

/// The list of one tab.
#[component]
pub fn CatalogBrowser(kind: Memo<EntryKind>) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let flash = expect_context::<Flash>().0;
    let query = Memo::new(move |_| url.get("q").unwrap_or_default());
    let on_search = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        url.update(false, |q| if v.trim().is_empty() { q.remove("q") } else { q.set("q", &v) });
    };
    let plural = move || kind.get().list_key();
    // The user's entries: usable ones filtered like the catalog; those needing attention always shown.
    let mine = move || {
        let k = kind.get();
        let q = query.get();
        stored().with(|s| {
            let list = s.store.list(k);
            let mut cards = Vec::new();
            let mut attention = Vec::new();
            for (i, e) in list.iter().enumerate() {
                match &e.parsed {
                    Ok(doc) => {
                        let c = CardEntry { doc: doc.clone(), custom: Some(i) };
                        if matches(&c, &q) {
                            cards.push(c);
                        }
                    }
                    Err(_) => attention.push((i, e.clone())),
                }
            }
            (list.len(), cards, attention)
        })
    };
    let mine_view = move || {
        let (total, cards, attention) = mine();
        let k = kind.get();
        let body = if total == 0 {
            view! {
                <p class="empty-state">
                    {format!("You have no {} of your own yet. ", k.list_key())}
                    "To add one, open any entry below and choose " <strong>"Duplicate & edit"</strong>
                    ", import a JSON file (or drop it here), or paste a document with " <strong>"Paste JSON…"</strong>
                    ". Your entries are kept in this browser only."
                </p>
            }
            .into_any()
        } else if cards.is_empty() && attention.is_empty() {
            view! { <p class="muted">"None of your entries matches the search."</p> }.into_any()
        } else {
            let att =
                attention.into_iter().map(|(i, e)| view! { <AttentionCard kind=k index=i entry=e /> }).collect_view();
            let ok = cards.into_iter().map(|c| view! { <EntryCard entry=c /> }).collect_view();
            view! {
                {att}
                {ok}
            }
            .into_any()
        };
        view! { <div class="entries mine-list">{body}</div> }
    };
    let all = Memo::new(move |_| builtin(kind.get()));
    let shown = move || {
        let q = query.get();
        all.with(|list| list.iter().filter(|c| matches(c, &q)).cloned().collect::<Vec<_>>())
    };
    let builtin_view = move || {
        let list = shown();
        let n = all.with(Vec::len);
        let count = if list.len() == n {
            format!("{n} {}", plural())
        } else {
            format!("{} of {n} {} match", list.len(), plural())
        };
        let body = if list.is_empty() {
            view! { <p class="muted empty-search">"No built-in entry matches. Search looks in names, ids, families and vendors."</p> }
                .into_any()
        } else {
            list.into_iter().map(|c| view! { <EntryCard entry=c /> }).collect_view().into_any()
        };
        view! {
            <p class="muted result-count" role="status">{count}</p>
            <div class="entries builtin-list">{body}</div>
        }
    };
    let placeholder = move || match kind.get() {
        EntryKind::Model => "Search models: name, id, family…",
        EntryKind::System => "Search systems: name, id, vendor, architecture…",
    };
    view! {
        <section class="catalog-search">
            <label for="catalog-search" class="visually-hidden">"Search"</label>
            <input
                id="catalog-search"
                type="search"
                placeholder=placeholder
                prop:value=move || query.get()
                on:input=on_search
                autocomplete="off"
            />
        </section>
        {move || {
            flash
                .get()
                .map(|m| {
                    view! {
                        <p class="notice flash" role="status">
                            {m}
                            " "
                            <button type="button" class="link" on:click=move |_| flash.set(None)>"Dismiss"</button>
                        </p>
                    }
                })
        }}
        <section class="card mine" aria-labelledby="mine-title">
            <h2 id="mine-title">{move || format!("Your {}", plural())}</h2>
            <ImportPanel kind=kind />
            {mine_view}
        </section>
        <section class="builtin" aria-labelledby="builtin-title">
            <h2 id="builtin-title">{move || format!("Built-in {}", plural())}</h2>
            {builtin_view}
        </section>
    }
}
