//! The page's state in the URL query string: read at start, written with `history.replaceState`
//! (typing) or `pushState` (navigation), and re-read on back/forward (`popstate`).
//!
//! Only the web app knows URLs; the pure key/value handling lives here and is kept free of DOM
//! calls so it can be reasoned about on its own.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

/// Ordered key/value pairs of a query string (no duplicate keys).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query(pub Vec<(String, String)>);

impl Query {
    /// Parses `?a=1&b=x%20y` (leading `?` optional). Malformed escapes are kept literally.
    pub fn parse(search: &str) -> Query {
        let s = search.strip_prefix('?').unwrap_or(search);
        let mut q = Query::default();
        for part in s.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            q.set(&decode(k), &decode(v));
        }
        q
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Sets (or replaces) `key`.
    pub fn set(&mut self, key: &str, value: &str) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => self.0.push((key.to_string(), value.to_string())),
        }
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// Serialises as `?a=1&b=x%20y` (empty string when there are no pairs).
    pub fn to_search(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect();
        format!("?{}", parts.join("&"))
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b',' | b':' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the app's state lives: the page URL (normal page, iframe embed) or nowhere outside the
/// app (custom elements, whose state comes from attributes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlMode {
    /// Read and write `location.search`.
    PageUrl,
    /// Keep state in memory only.
    Detached,
}

/// The query state of this app instance, as a signal, kept in sync with the URL in
/// [`UrlMode::PageUrl`].
#[derive(Clone, Copy)]
pub struct UrlState {
    /// The current query.
    pub query: RwSignal<Query>,
    mode: UrlMode,
}

impl UrlState {
    /// Creates the state from the current URL (or from `initial` when detached) and, for the page
    /// URL, follows back/forward navigation.
    pub fn new(mode: UrlMode, initial: Query) -> UrlState {
        let start = match mode {
            UrlMode::PageUrl => Query::parse(&window().location().search().unwrap_or_default()),
            UrlMode::Detached => initial,
        };
        let query = RwSignal::new(start);
        if mode == UrlMode::PageUrl {
            let on_pop = Closure::<dyn Fn()>::new(move || {
                let q = Query::parse(&window().location().search().unwrap_or_default());
                query.set(q);
            });
            let _ = window().add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
            on_pop.forget();
        }
        UrlState { query, mode }
    }

    /// Reads one key (tracked).
    pub fn get(&self, key: &str) -> Option<String> {
        self.query.with(|q| q.get(key).map(str::to_string))
    }

    /// Updates keys; `push` adds a history entry (navigation), otherwise the entry is replaced
    /// (typing, so that back does not step through every keystroke).
    pub fn update(&self, push: bool, f: impl FnOnce(&mut Query)) {
        let mut q = self.query.get_untracked();
        f(&mut q);
        if q == self.query.get_untracked() {
            return;
        }
        if self.mode == UrlMode::PageUrl {
            let loc = window().location();
            let path = loc.pathname().unwrap_or_default();
            let url = format!("{path}{}", q.to_search());
            if let Ok(history) = window().history() {
                let _ = if push {
                    history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
                } else {
                    history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
                };
            }
        }
        self.query.set(q);
    }
}
