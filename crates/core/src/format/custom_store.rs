//! A user's own models and systems as the web page keeps them in browser storage (under
//! [`STORAGE_KEY`]), in a versioned format whose entries are documents of fmperf's versioned format:
//!
//! ```json
//! {"format": "fmperf.custom", "schema_version": 1,
//!  "models": [{"schema_version": 1, "kind": "model", "id": "my-gpt", …}],
//!  "systems": [{"schema_version": 1, "kind": "system", "id": "my-h100", …}]}
//! ```
//!
//! Nothing a user saved is dropped: an entry that does not parse (edited by hand, written by
//! another version, an id that a built-in entry now uses) is kept verbatim, written back, and
//! reported with every problem ([`StoredEntry::problems`]) so the page can show it as "needs
//! attention". A store of a newer version is read as far as possible and marked read-only;
//! unknown top-level keys are kept; the pre-versioned form (a bare array of documents) is
//! migrated to version 1; text that is not a store at all is handed back
//! ([`CustomStore::unreadable`]) so the page can keep a copy under [`BACKUP_KEY`] before it writes.
//!
//! [`CustomStore::import`] reads a file a user brings: a versioned document, the reference's model
//! or system JSON, or a whole store exported by [`CustomStore::to_text`].

use serde_json::{Map, Value};

use super::form::with_prefix;
use super::{Document, DocumentFormat, parse_detailed, parse_value, to_json};
use crate::Error;
use crate::schema::check::valid_id;

/// The `localStorage` key.
pub const STORAGE_KEY: &str = "fmperf.custom.v1";
/// Where a page keeps a copy of unreadable content before writing a fresh store.
pub const BACKUP_KEY: &str = "fmperf.custom.v1.unreadable";
/// The `format` value of a store.
pub const FORMAT: &str = "fmperf.custom";
/// The store version this code writes.
pub const VERSION: u64 = 1;

/// Which list of the store an entry is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A model document.
    Model,
    /// A system document.
    System,
}

impl EntryKind {
    /// `"model"` or `"system"` (the document kind).
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Model => "model",
            EntryKind::System => "system",
        }
    }

    /// The store's list key: `"models"` or `"systems"`.
    pub fn list_key(self) -> &'static str {
        match self {
            EntryKind::Model => "models",
            EntryKind::System => "systems",
        }
    }

    /// The kind of a document, if it is a model or a system.
    pub fn of(doc: &Document) -> Option<EntryKind> {
        match doc {
            Document::Model(_) => Some(EntryKind::Model),
            Document::System(_) => Some(EntryKind::System),
            Document::Scenario(_) => None,
        }
    }
}

/// One stored entry: what was stored, and what it reads as.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEntry {
    /// The stored JSON, verbatim.
    pub raw: Value,
    /// The document, or every problem that keeps it from being used.
    pub parsed: Result<Document, Vec<Error>>,
}

impl StoredEntry {
    /// The entry's id as stored (`""` when it has none).
    pub fn id(&self) -> String {
        match &self.parsed {
            Ok(Document::Model(m)) => m.id.clone(),
            Ok(Document::System(s)) => s.id.clone(),
            _ => self.raw.get("id").and_then(Value::as_str).unwrap_or("").chars().take(64).collect(),
        }
    }

    /// The display name (the id when there is none).
    pub fn name(&self) -> String {
        match &self.parsed {
            Ok(Document::Model(m)) => m.name.clone(),
            Ok(Document::System(s)) => s.name.clone(),
            _ => self
                .raw
                .get("name")
                .and_then(Value::as_str)
                .map(|s| s.chars().take(200).collect())
                .unwrap_or_else(|| self.id()),
        }
    }

    /// The problems of an entry that needs attention (empty for a usable one).
    pub fn problems(&self) -> &[Error] {
        match &self.parsed {
            Ok(_) => &[],
            Err(e) => e,
        }
    }

    /// The stored JSON, pretty-printed (what a user fixes by hand).
    pub fn raw_text(&self) -> String {
        match &self.parsed {
            Ok(doc) => to_json(doc),
            Err(_) => serde_json::to_string_pretty(&self.raw).unwrap_or_default() + "\n",
        }
    }
}

/// The custom models and systems, and whatever else the stored text held.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomStore {
    /// Model entries in stored order.
    pub models: Vec<StoredEntry>,
    /// System entries in stored order.
    pub systems: Vec<StoredEntry>,
    /// Top-level keys other than `format`, `schema_version`, `models`, `systems`, kept verbatim.
    pub extra: Map<String, Value>,
    /// The store's version when it was newer than [`VERSION`]: the page must not write it.
    pub newer_version: Option<u64>,
    /// The version the store was migrated from (`Some(0)`: the pre-versioned bare array).
    pub migrated_from: Option<u64>,
    /// The stored text, when it was not a store at all (not JSON, or JSON of another shape).
    pub unreadable: Option<String>,
}

/// Problem of an entry whose id is already taken (by a built-in entry or an earlier custom one).
fn id_taken(kind: EntryKind, id: &str, by: &str) -> Error {
    Error::invalid("id", id, format!("is already used by {by}"))
        .with_hint(format!("choose another id for this {}", kind.as_str()))
}

/// Whether a built-in entry of `kind` answers to `id` (the catalog matches ids ignoring ASCII case).
pub fn builtin_has(kind: EntryKind, id: &str) -> bool {
    match kind {
        EntryKind::Model => crate::resolve::builtin_model(id).is_ok(),
        EntryKind::System => crate::resolve::builtin_system(id).is_ok(),
    }
}

impl CustomStore {
    /// Reads the stored text (`None`: nothing stored yet).
    pub fn parse(text: Option<&str>) -> CustomStore {
        let mut store = CustomStore::default();
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            return store;
        };
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => {
                store.unreadable = Some(text.to_string());
                return store;
            }
        };
        let (models, systems) = match value {
            // Pre-versioned form: one array of documents, models and systems mixed.
            Value::Array(items) => {
                store.migrated_from = Some(0);
                let (m, s): (Vec<Value>, Vec<Value>) =
                    items.into_iter().partition(|v| v.get("kind").and_then(Value::as_str) != Some("system"));
                (m, s)
            }
            Value::Object(mut obj) if obj.get("format").and_then(Value::as_str) == Some(FORMAT) => {
                match obj.get("schema_version").and_then(Value::as_u64) {
                    Some(v) if v > VERSION => store.newer_version = Some(v),
                    _ => {}
                }
                let mut list = |key: &str| match obj.remove(key) {
                    Some(Value::Array(items)) => items,
                    Some(other) => vec![other],
                    None => Vec::new(),
                };
                let (m, s) = (list("models"), list("systems"));
                obj.remove("format");
                obj.remove("schema_version");
                store.extra = obj;
                (m, s)
            }
            _ => {
                store.unreadable = Some(text.to_string());
                return store;
            }
        };
        for raw in models {
            store.models.push(store.read_entry(EntryKind::Model, raw));
        }
        for raw in systems {
            store.systems.push(store.read_entry(EntryKind::System, raw));
        }
        store
    }

    /// Reads one stored entry of list `kind`, checking its id against the built-in catalogs and
    /// the entries already read.
    fn read_entry(&self, kind: EntryKind, raw: Value) -> StoredEntry {
        let parsed = match parse_value(&raw) {
            Err(e) => Err(e),
            Ok(p) if EntryKind::of(&p.document) != Some(kind) => Err(vec![
                Error::invalid(
                    "kind",
                    p.document.kind(),
                    format!("must be \"{}\" in the {} list", kind.as_str(), kind.list_key()),
                )
                .with_hint("import it again so that it lands in the right list"),
            ]),
            Ok(p) => {
                let entry = StoredEntry { raw: Value::Null, parsed: Ok(p.document) };
                match self.conflict(kind, &entry.id(), None) {
                    Some(e) => Err(vec![e]),
                    None => entry.parsed,
                }
            }
        };
        StoredEntry { raw, parsed }
    }

    /// The list of `kind`.
    pub fn list(&self, kind: EntryKind) -> &[StoredEntry] {
        match kind {
            EntryKind::Model => &self.models,
            EntryKind::System => &self.systems,
        }
    }

    fn list_mut(&mut self, kind: EntryKind) -> &mut Vec<StoredEntry> {
        match kind {
            EntryKind::Model => &mut self.models,
            EntryKind::System => &mut self.systems,
        }
    }

    /// The usable entries (those that parse), as core's [`crate::resolve::UserEntries`] for
    /// resolving a scenario's ids; entries that need attention are left out.
    pub fn user_entries(&self) -> crate::resolve::UserEntries {
        let parsed = |kind: EntryKind| self.list(kind).iter().filter_map(|e| e.parsed.as_ref().ok());
        crate::resolve::UserEntries {
            models: parsed(EntryKind::Model)
                .filter_map(|d| match d {
                    Document::Model(m) => Some(m.clone()),
                    _ => None,
                })
                .collect(),
            systems: parsed(EntryKind::System)
                .filter_map(|d| match d {
                    Document::System(x) => Some(x.clone()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// Whether the page may write this store back (it is not of a newer version).
    pub fn writable(&self) -> bool {
        self.newer_version.is_none()
    }

    /// Why `id` cannot name a new or edited entry of `kind` (`except`: the index of the entry being
    /// edited, which may keep its own id), or `None` when it can.
    pub fn conflict(&self, kind: EntryKind, id: &str, except: Option<usize>) -> Option<Error> {
        if builtin_has(kind, id) {
            return Some(id_taken(kind, id, &format!("a built-in {}", kind.as_str())));
        }
        let clash = self
            .list(kind)
            .iter()
            .enumerate()
            .any(|(i, e)| Some(i) != except && e.parsed.is_ok() && e.id().eq_ignore_ascii_case(id));
        clash.then(|| id_taken(kind, id, &format!("another of your {}", kind.list_key())))
    }

    /// An id for a new entry of `kind` based on `base`: `base` itself when free, else `base-2`,
    /// `base-3`, … (cut to the 64 characters an id may have; invalid characters become `-`).
    pub fn free_id(&self, kind: EntryKind, base: &str) -> String {
        let mut clean: String = base
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
            .take(56)
            .collect();
        if !valid_id(&clean) {
            clean = format!("my-{}", kind.as_str());
        }
        if self.conflict(kind, &clean, None).is_none() {
            return clean;
        }
        (2..).map(|n| format!("{clean}-{n}")).find(|id| self.conflict(kind, id, None).is_none()).unwrap_or(clean)
    }

    /// Adds a model or system document; returns its kind and index. An id already in use is an
    /// error (use [`Self::free_id`] first to pick another).
    pub fn add(&mut self, doc: Document) -> Result<(EntryKind, usize), Error> {
        let kind = EntryKind::of(&doc).ok_or_else(not_a_catalog_entry)?;
        let entry = StoredEntry { raw: Value::Null, parsed: Ok(doc) };
        if let Some(e) = self.conflict(kind, &entry.id(), None) {
            return Err(e);
        }
        let list = self.list_mut(kind);
        list.push(normalised(entry));
        Ok((kind, list.len() - 1))
    }

    /// Replaces the entry at `index` of `kind` by `doc` (of the same kind; the id may change if it
    /// stays free).
    pub fn replace(&mut self, kind: EntryKind, index: usize, doc: Document) -> Result<(), Error> {
        if EntryKind::of(&doc) != Some(kind) {
            return Err(Error::invalid("kind", doc.kind(), format!("must be \"{}\" here", kind.as_str())));
        }
        if index >= self.list(kind).len() {
            return Err(Error::invalid("entry", index, "no longer exists").with_hint("it was deleted meanwhile"));
        }
        let entry = StoredEntry { raw: Value::Null, parsed: Ok(doc) };
        if let Some(e) = self.conflict(kind, &entry.id(), Some(index)) {
            return Err(e);
        }
        self.list_mut(kind)[index] = normalised(entry);
        Ok(())
    }

    /// Removes the entry at `index` of `kind` (no effect when out of range).
    pub fn remove(&mut self, kind: EntryKind, index: usize) {
        let list = self.list_mut(kind);
        if index < list.len() {
            list.remove(index);
        }
    }

    /// The store as text (what the page writes under [`STORAGE_KEY`], and the "export all" file).
    pub fn to_text(&self) -> String {
        let mut obj = Map::new();
        obj.insert("format".into(), Value::from(FORMAT));
        obj.insert("schema_version".into(), Value::from(self.newer_version.unwrap_or(VERSION)));
        let raws = |list: &[StoredEntry]| Value::Array(list.iter().map(|e| e.raw.clone()).collect());
        obj.insert("models".into(), raws(&self.models));
        obj.insert("systems".into(), raws(&self.systems));
        for (k, v) in &self.extra {
            obj.insert(k.clone(), v.clone());
        }
        serde_json::to_string(&Value::Object(obj)).unwrap_or_default()
    }

    /// Imports a file a user brings (its name gives reference-format documents an id). Every
    /// document that reads without error is added — under a free id when its own is taken, which
    /// the outcome reports — and every problem is reported with its field path.
    pub fn import(&mut self, file_name: &str, text: &str) -> ImportOutcome {
        let mut out = ImportOutcome { file: file_name.to_string(), ..ImportOutcome::default() };
        let stem = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
        let stem = stem.strip_suffix(".json").or_else(|| stem.strip_suffix(".JSON")).unwrap_or(stem);
        if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text)
            && obj.get("format").and_then(Value::as_str) == Some(FORMAT)
        {
            let other = CustomStore::parse(Some(text));
            for (kind, entries) in [(EntryKind::Model, other.models), (EntryKind::System, other.systems)] {
                for (i, e) in entries.into_iter().enumerate() {
                    // Parsed again: an id clash is no reason to refuse, it is renamed like any import.
                    match parse_value(&e.raw) {
                        Ok(p) if EntryKind::of(&p.document) == Some(kind) => {
                            self.add_imported(p.document, None, &mut out)
                        }
                        _ => {
                            let at = format!("{}[{i}].", kind.list_key());
                            out.errors.extend(e.problems().iter().map(|p| with_prefix(p.clone(), &at)))
                        }
                    }
                }
            }
            return out;
        }
        match parse_detailed(text) {
            Err(errors) => out.errors = errors,
            Ok(p) => {
                out.origin = Some(p.origin);
                out.warnings = p.warnings;
                if EntryKind::of(&p.document).is_none() {
                    out.errors.push(not_a_catalog_entry());
                    return out;
                }
                let from_reference = p.origin != DocumentFormat::Versioned;
                self.add_imported(p.document, from_reference.then_some(stem), &mut out);
            }
        }
        out
    }

    fn add_imported(&mut self, mut doc: Document, reference_stem: Option<&str>, out: &mut ImportOutcome) {
        let Some(kind) = EntryKind::of(&doc) else { return };
        let (id, name) = match &mut doc {
            Document::Model(m) => (&mut m.id, &mut m.name),
            Document::System(s) => (&mut s.id, &mut s.name),
            Document::Scenario(_) => return,
        };
        if let Some(stem) = reference_stem {
            *id = if stem.is_empty() { format!("my-{}", kind.as_str()) } else { stem.to_string() };
            *name = format!("{} (from {})", kind.as_str(), out.file);
        }
        let wanted = id.clone();
        if self.conflict(kind, &wanted, None).is_some() {
            *id = self.free_id(kind, &wanted);
            if reference_stem.is_none() {
                out.renamed.push((wanted, id.clone()));
            }
        }
        let id = id.clone();
        if self.add(doc).is_ok() {
            out.added.push((kind, id));
        }
    }
}

/// The entry as it is written: the canonical versioned JSON of its document.
fn normalised(entry: StoredEntry) -> StoredEntry {
    let raw = match &entry.parsed {
        Ok(doc) => serde_json::from_str(&to_json(doc)).unwrap_or(Value::Null),
        Err(_) => entry.raw,
    };
    StoredEntry { raw, parsed: entry.parsed }
}

fn not_a_catalog_entry() -> Error {
    Error::invalid("kind", "scenario", "must be \"model\" or \"system\" here")
        .with_hint("the catalog keeps models and systems; open scenarios in the explorer")
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportOutcome {
    /// The file's name.
    pub file: String,
    /// The format of a single-document file.
    pub origin: Option<DocumentFormat>,
    /// Entries added: kind and id.
    pub added: Vec<(EntryKind, String)>,
    /// Ids that were taken: (wanted, given).
    pub renamed: Vec<(String, String)>,
    /// Every problem (nothing of a document with a problem is added).
    pub errors: Vec<Error>,
    /// Things worth knowing about what was added.
    pub warnings: Vec<Error>,
}
