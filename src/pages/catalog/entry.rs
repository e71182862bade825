//! One entry of a catalog list: a header line (name, id, badges, key numbers with units) that
//! opens the entry's detail. Built-in entries and the user's valid entries look alike; the user's
//! entries that do not parse get an [`AttentionCard`] with every problem.

use fmperf_core::ModelShape;
use fmperf_core::catalog::{CatalogModel, CatalogSystem, MappingOptions, to_system_params};
use fmperf_core::format::Document;
use fmperf_core::format::custom_store::{EntryKind, StoredEntry};
use leptos::prelude::*;

use super::detail::{DeleteButton, EntryDetail};
use super::problem_list;
use super::transfer::download_document_text;
use crate::url_state::UrlState;

/// An entry to show: a document and, for the user's own entries, its index in the store.
#[derive(Clone, Debug, PartialEq)]
pub struct CardEntry {
    /// The model or system.
    pub doc: Document,
    /// Index among the user's entries of this kind (`None`: built-in).
    pub custom: Option<usize>,
}

impl CardEntry {
    /// The entry's id.
    pub fn id(&self) -> String {
        match &self.doc {
            Document::Model(m) => m.id.clone(),
            Document::System(s) => s.id.clone(),
            Document::Scenario(_) => String::new(),
        }
    }

    /// The entry's display name.
    pub fn name(&self) -> String {
        match &self.doc {
            Document::Model(m) => m.name.clone(),
            Document::System(s) => s.name.clone(),
            Document::Scenario(_) => String::new(),
        }
    }

    /// Lower-case text the search looks in: name, id, family (models) or vendor, form factor and
    /// architecture (systems).
    pub fn haystack(&self) -> String {
        let text = match &self.doc {
            Document::Model(m) => format!("{} {} {}", m.name, m.id, m.family),
            Document::System(s) => format!(
                "{} {} {} {} {}",
                s.name,
                s.id,
                s.vendor.as_deref().unwrap_or(""),
                s.form_factor.as_deref().unwrap_or(""),
                s.architecture.as_str()
            ),
            Document::Scenario(_) => String::new(),
        };
        text.to_lowercase()
    }
}

/// Whether every word of the search text occurs in the entry.
pub fn matches(entry: &CardEntry, query: &str) -> bool {
    let hay = entry.haystack();
    query.to_lowercase().split_whitespace().all(|w| hay.contains(w))
}

/// A number for a summary line: `?` when unknown.
pub fn show_num(v: Option<f64>) -> String {
    match v {
        None => "?".to_string(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
        Some(x) => format!("{x}"),
    }
}

fn show_int(v: Option<u64>) -> String {
    v.map_or_else(|| "?".to_string(), |n| n.to_string())
}

fn model_summary_line(m: &CatalogModel) -> String {
    let kv = match (m.kv_heads, m.heads) {
        (Some(kv), Some(h)) if kv != h => format!(" ({kv} key/value)"),
        _ => String::new(),
    };
    format!(
        "sequence {} tokens · hidden {} channels · {} heads{kv} · {} blocks · MLP {} channels ({}) · {}",
        show_int(m.seq_len),
        show_int(m.hidden),
        show_int(m.heads),
        show_int(m.layers),
        show_int(m.ffn_hidden),
        m.mlp.as_str(),
        m.params_b.map_or_else(
            || "parameter count not stated".to_string(),
            |p| format!("{} B parameters stated", show_num(Some(p)))
        ),
    )
}

fn system_summary_line(s: &CatalogSystem) -> String {
    format!(
        "16-bit matrix peak {} TFLOP/s · memory {} GB at {} GB/s · scale-up domain {} devices at {} GB/s per direction",
        show_num(s.headline_tflops()),
        show_num(s.memory_gb),
        show_num(s.memory_bw_gbps),
        s.scale_up.domain_size,
        show_num(s.scale_up.bw_per_device_unidir_gbps.or(s.scale_up.bw_per_device_bidir_gbps.map(|b| b / 2.0))),
    )
}

/// A badge: class (`good`, `warn`, `bad`, or empty) and text.
type Badge = (&'static str, String);

/// The badges of an entry: reference preset, yours, and what the reference model makes of it.
pub fn badges(entry: &CardEntry) -> Vec<Badge> {
    let mut out = Vec::new();
    if entry.custom.is_some() {
        out.push(("mine", "yours".to_string()));
    }
    match &entry.doc {
        Document::Model(m) => {
            if entry.custom.is_none() && ModelShape::REFERENCE.iter().any(|(n, _)| *n == m.id) {
                out.push(("good", "reference preset".to_string()));
            }
            if m.to_shape().is_err() {
                out.push(("bad", "reference mode cannot use it".to_string()));
            } else if !m.reference_compatible() {
                out.push(("warn", "approximated by reference mode".to_string()));
            }
        }
        Document::System(s) => {
            if s.preset.is_some() {
                let what = if entry.custom.is_none() { "reference preset" } else { "exact reference parameters" };
                out.push(("good", what.to_string()));
            }
            if !s.architecture.modelled_natively() {
                out.push(("warn", format!("{}: model approximates it", s.architecture.as_str().replace('_', "-"))));
            }
            if to_system_params(s, &MappingOptions::default()).is_err() {
                out.push(("bad", "needs numbers the catalog lacks".to_string()));
            }
        }
        Document::Scenario(_) => {}
    }
    out
}

/// One entry: a header button that opens and closes the detail (the open entry's id is the URL's
/// `entry`).
#[component]
pub fn EntryCard(entry: CardEntry) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let id = entry.id();
    let open = {
        let id = id.clone();
        Memo::new(move |_| url.get("entry").as_deref() == Some(id.as_str()))
    };
    let toggle = {
        let id = id.clone();
        move |_| {
            let now = open.get_untracked();
            url.update(false, |q| if now { q.remove("entry") } else { q.set("entry", &id) });
        }
    };
    let summary = match &entry.doc {
        Document::Model(m) => model_summary_line(m),
        Document::System(s) => system_summary_line(s),
        Document::Scenario(_) => String::new(),
    };
    let badge_views = badges(&entry)
        .into_iter()
        .map(|(class, text)| view! { <span class=format!("badge {class}")>{text}</span> })
        .collect_view();
    let body_id = format!("entry-body-{}", dom_id(&id));
    let kind = if matches!(entry.doc, Document::System(_)) { "system" } else { "model" };
    view! {
        <article class="entry card" class:open=open data-id=id.clone() data-kind=kind>
            <button
                type="button"
                class="entry-head"
                aria-expanded=move || open.get().to_string()
                aria-controls=body_id.clone()
                on:click=toggle
            >
                <span class="entry-title">
                    <span class="entry-name">{entry.name()}</span>
                    " "
                    <code class="entry-id">{id.clone()}</code>
                </span>
                <span class="entry-badges">{badge_views}</span>
                <span class="entry-summary">{summary}</span>
            </button>
            <Show when=move || open.get()>
                <div class="entry-body" id=body_id.clone()>
                    <EntryDetail entry=entry.clone() />
                </div>
            </Show>
        </article>
    }
}

/// An id made safe for a DOM id attribute.
pub fn dom_id(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// One of the user's entries that cannot be used: every problem, and how to fix or remove it.
#[component]
pub fn AttentionCard(kind: EntryKind, index: usize, entry: StoredEntry) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let id = entry.id();
    let shown = if id.is_empty() { "(no id)".to_string() } else { id.clone() };
    let problems = problem_list(entry.problems());
    let fix = move |_| url.update(true, |q| q.set("edit", &format!("custom:{index}")));
    let raw = entry.raw_text();
    let file = format!("{}.json", if id.is_empty() { format!("{}-{index}", kind.as_str()) } else { id.clone() });
    view! {
        <article class="entry card attention" data-id=id.clone() data-kind=kind.as_str()>
            <div class="entry-title">
                <span class="entry-name">{entry.name()}</span>
                " "
                <code class="entry-id">{shown}</code>
                " "
                <span class="badge bad">"needs attention"</span>
            </div>
            <p>"This saved " {kind.as_str()} " cannot be used as it is. It is kept, unchanged, until you fix or delete it:"</p>
            {problems}
            <div class="row actions">
                <button type="button" class="primary" on:click=fix>"Fix in the JSON editor"</button>
                <button type="button" on:click=move |_| download_document_text(&file, &raw)>"Export as it is"</button>
                <DeleteButton kind=kind index=index label=shown_label(&id) />
            </div>
        </article>
    }
}

fn shown_label(id: &str) -> String {
    if id.is_empty() { "this entry".to_string() } else { format!("`{id}`") }
}
