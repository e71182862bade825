//! Scenarios saved in the browser (under [`STORAGE_KEY`] in `localStorage`), in a versioned
//! format:
//!
//! ```json
//! {"format": "fmperf.scenarios", "version": 1,
//!  "scenarios": [{"version": 1, "name": "H200 at 4096", "query": "?model=gpt3_1T&gpus=4096", "saved": "2025-01-31T10:00:00Z"}]}
//! ```
//!
//! Nothing a user saved is dropped: entries of another (newer) version and unknown top-level keys
//! are kept verbatim and written back; entries of the pre-versioned form (`{"name", "query"}`
//! without `version`, or a bare array of them) are migrated to version 1; text that is not JSON
//! at all is handed back ([`SavedStore::unreadable`]) so the page can keep a copy before it writes.

use serde_json::{Map, Value, json};

/// The `localStorage` key.
pub const STORAGE_KEY: &str = "fmperf.scenarios.v1";
/// Where a page keeps a copy of unreadable content before writing a fresh store.
pub const BACKUP_KEY: &str = "fmperf.scenarios.v1.unreadable";
/// The `format` value of the store document.
pub const FORMAT: &str = "fmperf.scenarios";
/// The entry (and document) version this code writes.
pub const VERSION: u64 = 1;
/// Longest scenario name kept [characters].
pub const MAX_NAME_CHARS: usize = 120;

/// One saved scenario: a name and the page's query string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedScenario {
    /// Name given by the user.
    pub name: String,
    /// The query string of the view (`?model=…&gpus=…`).
    pub query: String,
    /// When it was saved (ISO 8601 text from the page; may be empty).
    pub saved: String,
}

/// The saved scenarios and whatever else the stored document held.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SavedStore {
    /// Entries this version understands, in stored order.
    pub entries: Vec<SavedScenario>,
    /// Entries of other versions, kept verbatim.
    pub kept: Vec<Value>,
    /// Top-level keys other than `format`, `version`, `scenarios`, kept verbatim.
    pub extra: Map<String, Value>,
    /// The document's version when it was newer than [`VERSION`] (kept on write).
    pub doc_version: u64,
    /// The stored text, when it was not a store at all (not JSON, or JSON of another shape).
    pub unreadable: Option<String>,
}

fn entry(v: &Value) -> Option<SavedScenario> {
    let o = v.as_object()?;
    let version = o.get("version").map_or(Some(VERSION), Value::as_u64)?;
    if version != VERSION {
        return None;
    }
    let name = o.get("name")?.as_str()?;
    let query = o.get("query")?.as_str()?;
    let saved = o.get("saved").and_then(Value::as_str).unwrap_or("");
    Some(SavedScenario { name: clip(name), query: query.to_string(), saved: saved.to_string() })
}

fn clip(name: &str) -> String {
    let t = name.trim();
    let t: String = t.chars().take(MAX_NAME_CHARS).collect();
    if t.is_empty() { "unnamed scenario".into() } else { t }
}

impl SavedStore {
    /// Reads the stored text (`None`: nothing stored yet).
    pub fn parse(text: Option<&str>) -> SavedStore {
        let mut store = SavedStore { doc_version: VERSION, ..SavedStore::default() };
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else { return store };
        let items: Vec<Value> = match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => items,
            Ok(Value::Object(mut doc)) if doc.get("scenarios").is_some_and(Value::is_array) => {
                let items = match doc.remove("scenarios") {
                    Some(Value::Array(items)) => items,
                    _ => Vec::new(),
                };
                store.doc_version = doc.get("version").and_then(Value::as_u64).unwrap_or(VERSION).max(VERSION);
                doc.remove("format");
                doc.remove("version");
                store.extra = doc;
                items
            }
            _ => {
                store.unreadable = Some(text.to_string());
                return store;
            }
        };
        for item in items {
            match entry(&item) {
                Some(e) => store.entries.push(e),
                None => store.kept.push(item),
            }
        }
        store
    }

    /// The document to store.
    pub fn to_json(&self) -> String {
        let mut scenarios: Vec<Value> = self
            .entries
            .iter()
            .map(|e| json!({"version": VERSION, "name": e.name, "query": e.query, "saved": e.saved}))
            .collect();
        scenarios.extend(self.kept.iter().cloned());
        let mut doc = Map::new();
        doc.insert("format".into(), json!(FORMAT));
        doc.insert("version".into(), json!(self.doc_version.max(VERSION)));
        doc.insert("scenarios".into(), Value::Array(scenarios));
        for (k, v) in &self.extra {
            doc.insert(k.clone(), v.clone());
        }
        serde_json::to_string(&Value::Object(doc)).unwrap_or_default()
    }

    /// Saves a scenario under `name`, replacing one of the same name; newest first.
    pub fn save(&mut self, name: &str, query: &str, saved: &str) {
        let name = clip(name);
        self.entries.retain(|e| e.name != name);
        self.entries.insert(0, SavedScenario { name, query: query.to_string(), saved: saved.to_string() });
    }

    /// Removes the scenario named `name`; returns whether one was removed.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.name != name);
        self.entries.len() != before
    }
}
