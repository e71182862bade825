//! The user's own models and systems, kept in browser storage (`localStorage` key
//! [`STORAGE_KEY`] = `fmperf.custom.v1`) in the versioned store format of
//! [`fmperf_core::format::custom_store`] (entries are documents of fmperf's versioned format).
//!
//! # API for other pages (the explorer)
//!
//! ```ignore
//! use crate::storage;
//! // Valid custom entries, to resolve next to the built-in ones. Reading them inside a reactive
//! // closure subscribes to changes: an entry saved on the catalog page shows at once.
//! let entries: UserEntries = storage::user_entries(); // .models, .systems
//! // An id from the URL: a custom entry, else the built-in catalog (ids never clash).
//! // A storage problem to show (unavailable, full, newer version, unreadable), if any.
//! let notice: Option<String> = storage::stored().notice();
//! ```
//!
//! [`stored`] returns the one [`StoredCatalog`] of the page (created on first use, shared by every
//! app instance on the page, refreshed when another tab writes the key). Entries that do not
//! parse are never dropped: they stay in the store, are written back verbatim and are listed by
//! [`StoredCatalog::with`] (`state.store.models[i].problems()`) for the catalog page to show as
//! "needs attention". When storage is unavailable (private mode, sandboxed frames, quota), the
//! store lives in memory for this page and [`StoredCatalog::notice`] says so.

use std::cell::OnceCell;

use fmperf_core::Error;
use fmperf_core::format::Document;
use fmperf_core::format::custom_store::{BACKUP_KEY, CustomStore, EntryKind, ImportOutcome, STORAGE_KEY};
use fmperf_core::resolve::UserEntries;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

/// The store and how it relates to the browser's storage.
#[derive(Debug, Clone, Default)]
pub struct StoreState {
    /// The custom entries (valid and needing attention).
    pub store: CustomStore,
    /// Why browser storage cannot be used, if it cannot: the store then lives in memory only.
    pub unavailable: Option<String>,
    /// The last write that failed (quota, …), in words.
    pub write_error: Option<String>,
    /// Where unreadable stored text was copied (storage key), when it was.
    pub backup_key: Option<String>,
}

impl StoreState {
    /// Whether changes reach browser storage.
    pub fn persistent(&self) -> bool {
        self.unavailable.is_none() && self.store.writable()
    }
}

/// The page's custom entries as a signal (cheap to clone).
#[derive(Clone)]
pub struct StoredCatalog {
    state: ArcRwSignal<StoreState>,
}

thread_local! {
    static STORED: OnceCell<StoredCatalog> = const { OnceCell::new() };
}

/// The one store of this page.
pub fn stored() -> StoredCatalog {
    STORED.with(|cell| cell.get_or_init(StoredCatalog::load).clone())
}

/// The user's valid models and systems as core's [`UserEntries`], for resolving a scenario's ids
/// (tracked: an entry saved in the Catalog view is usable at once).
pub fn user_entries() -> UserEntries {
    stored().with(|s| s.store.user_entries())
}

fn local_storage() -> Result<web_sys::Storage, String> {
    match window().local_storage() {
        Ok(Some(s)) => Ok(s),
        Ok(None) => Err("this browser offers no local storage here".to_string()),
        Err(e) => Err(js_text(&e)),
    }
}

/// A JavaScript exception in words (`QuotaExceededError: …`).
fn js_text(e: &wasm_bindgen::JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return format!("{}: {}", String::from(err.name()), String::from(err.message()));
    }
    e.as_string().unwrap_or_else(|| "the browser refused".to_string())
}

/// Reads the store from browser storage, keeping a copy of unreadable text.
fn read_state() -> StoreState {
    let storage = match local_storage() {
        Ok(s) => s,
        Err(why) => return StoreState { unavailable: Some(why), ..StoreState::default() },
    };
    let text = match storage.get_item(STORAGE_KEY) {
        Ok(t) => t,
        Err(e) => return StoreState { unavailable: Some(js_text(&e)), ..StoreState::default() },
    };
    let store = CustomStore::parse(text.as_deref());
    let mut state = StoreState { store, ..StoreState::default() };
    if let Some(raw) = state.store.unreadable.clone() {
        // Never overwrite a different earlier copy: take the first free (or identical) key.
        let key = (1..100)
            .map(|n| if n == 1 { BACKUP_KEY.to_string() } else { format!("{BACKUP_KEY}.{n}") })
            .find(|k| storage.get_item(k).ok().flatten().is_none_or(|old| old == raw));
        match key.map(|k| storage.set_item(&k, &raw).map(|()| k)) {
            Some(Ok(k)) => state.backup_key = Some(k),
            Some(Err(e)) => {
                state.unavailable = Some(format!("could not keep a copy of unreadable data: {}", js_text(&e)))
            }
            None => state.unavailable = Some("too many copies of unreadable data are kept already".to_string()),
        }
    }
    state
}

impl StoredCatalog {
    fn load() -> StoredCatalog {
        let catalog = StoredCatalog { state: ArcRwSignal::new(read_state()) };
        // Another tab saved: read again (this tab's unsaved edits live in its editor, not here).
        let state = catalog.state.clone();
        let on_storage = Closure::<dyn Fn(web_sys::StorageEvent)>::new(move |ev: web_sys::StorageEvent| {
            if ev.key().as_deref() == Some(STORAGE_KEY) {
                state.set(read_state());
            }
        });
        let _ = window().add_event_listener_with_callback("storage", on_storage.as_ref().unchecked_ref());
        on_storage.forget();
        catalog
    }

    /// Reads the state (tracked).
    pub fn with<R>(&self, f: impl FnOnce(&StoreState) -> R) -> R {
        self.state.with(f)
    }

    /// Reads the state without subscribing.
    pub fn with_untracked<R>(&self, f: impl FnOnce(&StoreState) -> R) -> R {
        self.state.with_untracked(f)
    }

    /// What a user should know about where the entries live, if anything is wrong (tracked).
    pub fn notice(&self) -> Option<String> {
        self.with(|s| {
            let mut parts = Vec::new();
            if let Some(why) = &s.unavailable {
                parts.push(format!(
                    "Browser storage is not available ({why}). Your own models and systems are kept only while this \
                     page is open: export them to keep them."
                ));
            }
            if let Some(v) = s.store.newer_version {
                parts.push(format!(
                    "Your saved entries were written by a newer fmperf (store version {v}). They are shown as far as \
                     this version can read them, and changes are not saved, so that nothing of them is lost."
                ));
            }
            if let Some(key) = &s.backup_key {
                parts.push(format!(
                    "The stored custom entries could not be read. A copy of them is kept in browser storage under \
                     `{key}`; new entries start from an empty store."
                ));
            }
            if let Some(e) = &s.write_error {
                parts.push(format!("The last change could not be saved ({e}): export your entries to keep them."));
            }
            (!parts.is_empty()).then(|| parts.join(" "))
        })
    }

    /// Applies `f` to the store and writes it to browser storage (when possible).
    fn change<R>(&self, f: impl FnOnce(&mut CustomStore) -> R) -> R {
        let mut out = None;
        self.state.update(|s| {
            out = Some(f(&mut s.store));
            s.write_error = None;
            if s.persistent() {
                let result = local_storage()
                    .and_then(|st| st.set_item(STORAGE_KEY, &s.store.to_text()).map_err(|e| js_text(&e)));
                if let Err(e) = result {
                    s.write_error = Some(e);
                }
            }
        });
        out.expect("update runs its closure")
    }

    /// Adds a model or system; returns where it went.
    pub fn add(&self, doc: Document) -> Result<(EntryKind, usize), Error> {
        self.change(|s| s.add(doc))
    }

    /// Replaces an entry (same kind).
    pub fn replace(&self, kind: EntryKind, index: usize, doc: Document) -> Result<(), Error> {
        self.change(|s| s.replace(kind, index, doc))
    }

    /// Deletes an entry.
    pub fn remove(&self, kind: EntryKind, index: usize) {
        self.change(|s| s.remove(kind, index))
    }

    /// Imports one file's text.
    pub fn import(&self, file_name: &str, text: &str) -> ImportOutcome {
        self.change(|s| s.import(file_name, text))
    }

    /// Every custom entry as one file (re-importable).
    pub fn export_text(&self) -> String {
        self.with_untracked(|s| s.store.to_text())
    }
}
