//! The page's state in the URL query string: read at start, written with `history.replaceState`
//! (typing) or `pushState` (navigation), and re-read on back/forward (`popstate`).
//!
//! Only the web app knows URLs; the pure key/value handling is `fmperf_app::query` (host-tested).
//! Every write keeps the mode the page was read in ([`fmperf_app::mode::pin_on_write`]), so a
//! fresh page stays in extended mode and an old permalink in reference mode once edited.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

pub use fmperf_app::query::Query;

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
        let before = self.query.get_untracked();
        let mut q = before.clone();
        f(&mut q);
        fmperf_app::explorer::keep_scenario(&before, &mut q);
        fmperf_app::mode::pin_on_write(&before, &mut q);
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
