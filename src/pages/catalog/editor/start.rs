//! Where an edit starts: the URL's `edit` value (`json`, `copy:ID`, `custom:N`) read into the entry
//! it opens (the user's own or a built-in one), its form values and JSON text, the view it opens in,
//! what Save does and what happens to the notes it inherited.

use fmperf_core::catalog;
use fmperf_core::format::custom_store::{CustomStore, EntryKind};
use fmperf_core::format::form::{FormValues, values_of, values_of_document};
use fmperf_core::format::{Document, to_json};

/// What Save does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Target {
    /// Adds a new entry.
    New,
    /// Replaces the user's entry at this index.
    Replace(usize),
}

/// The two views of the editor (not the model's mode, `fmperf_core::mode_kind::ModeKind`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum EditorView {
    Form,
    Json,
}

/// What happens to the notes an edit inherited when the user changes a figure they speak of
/// ([`fmperf_core::format::notes`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum NotePolicy {
    /// A duplicate: such notes are dropped as the figure changes (each can be put back).
    Drop,
    /// The user's own entry: such notes are listed for the user to check, never removed.
    Warn,
    /// Nothing to compare with (a new document).
    Keep,
}

/// Where an edit starts.
#[derive(Clone, Debug)]
pub(super) struct Start {
    pub(super) kind: EntryKind,
    pub(super) target: Target,
    pub(super) values: FormValues,
    pub(super) json: String,
    pub(super) mode: EditorView,
    pub(super) title: String,
    pub(super) notes: NotePolicy,
}

pub(super) fn doc_id_mut(doc: &mut Document) -> Option<(&mut String, &mut String, &mut Vec<fmperf_core::vocab::Note>)> {
    match doc {
        Document::Model(m) => Some((&mut m.id, &mut m.name, &mut m.notes)),
        Document::System(s) => Some((&mut s.id, &mut s.name, &mut s.notes)),
        Document::Scenario(_) => None,
    }
}

/// The entry of `kind` with `id`: the user's own, else a built-in one.
fn find(store: &CustomStore, kind: EntryKind, id: &str) -> Option<Document> {
    let mine = store.list(kind).iter().find_map(|e| match &e.parsed {
        Ok(doc) if e.id() == id => Some(doc.clone()),
        _ => None,
    });
    mine.or_else(|| match kind {
        EntryKind::Model => catalog::find_model(id).ok().map(|m| Document::Model(m.clone())),
        EntryKind::System => catalog::find_system(id).ok().map(|s| Document::System(s.clone())),
    })
}

/// Reads the URL's `edit` value.
pub(super) fn start_of(store: &CustomStore, kind: EntryKind, edit: &str) -> Result<Start, String> {
    let k = kind.as_str();
    if edit == "json" {
        return Ok(Start {
            kind,
            target: Target::New,
            values: FormValues::new(),
            json: String::new(),
            mode: EditorView::Json,
            title: "New entry from a JSON document".to_string(),
            notes: NotePolicy::Keep,
        });
    }
    if let Some(id) = edit.strip_prefix("copy:") {
        let mut doc = find(store, kind, id).ok_or_else(|| format!("there is no {k} `{id}` to duplicate"))?;
        let new_id = store.free_id(kind, &format!("{id}-custom"));
        if let Some((doc_id, name, notes)) = doc_id_mut(&mut doc) {
            *doc_id = new_id;
            *name = format!("{name} (my copy)");
            notes.push(fmperf_core::vocab::Note::stated(format!(
                "Duplicated from the catalog entry `{id}` and edited."
            )));
        }
        return Ok(Start {
            kind,
            target: Target::New,
            values: values_of_document(&doc),
            json: to_json(&doc),
            mode: EditorView::Form,
            title: format!("Duplicate of `{id}`"),
            notes: NotePolicy::Drop,
        });
    }
    if let Some(i) = edit.strip_prefix("custom:").and_then(|i| i.parse::<usize>().ok()) {
        let entry =
            store.list(kind).get(i).ok_or_else(|| format!("you have no {k} number {i} (it may have been deleted)"))?;
        return Ok(match &entry.parsed {
            Ok(doc) => Start {
                kind,
                target: Target::Replace(i),
                values: values_of_document(doc),
                json: to_json(doc),
                mode: EditorView::Form,
                title: format!("Edit your {k} `{}`", entry.id()),
                notes: NotePolicy::Warn,
            },
            Err(_) => Start {
                kind,
                target: Target::Replace(i),
                values: values_of(k, &entry.raw),
                json: entry.raw_text(),
                mode: EditorView::Json,
                title: format!("Fix your {k} `{}`", entry.id()),
                notes: NotePolicy::Keep,
            },
        });
    }
    Err(format!("`{edit}` is not something the editor can open"))
}
