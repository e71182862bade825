//! fmperf-first-view: the explorer's first result before the page has loaded.
//!
//! The page's own module (Leptos, every view) is about a megabyte of gzipped WebAssembly; a new
//! visitor would wait for it to download, compile and run before seeing a number. This crate is
//! the explorer's results card and nothing else, in a module a third of that size: the boot script
//! (`scripts/postbuild.py`) loads it first, calls [`first_view`] with the page's query and the
//! user's stored catalog entries, and shows the HTML it returns until the page takes over
//! (`src/first_view.rs` removes it once the page has its own results, or shows another view).
//!
//! Invariant: the first view shows the page's numbers, in the page's words, or nothing. It
//! resolves the URL as the page does ([`fmperf_app::explorer`]), searches with the core, and
//! writes every text with the functions the page uses ([`fmperf_app::results`],
//! [`fmperf_app::fmt`], [`fmperf_app::error_bands`]); a case it does not draw (another view, a
//! problem in the URL, an MoE model in reference mode, nothing found, a search too large for its
//! budget) it leaves to the page, which says what the case needs.
//!
//! * [`page`]: the scenario, the search and the HTML (host-tested);
//! * [`html`]: escaping.

pub mod html;
pub mod page;

#[cfg(target_arch = "wasm32")]
mod wasm {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        /// `performance.now()` [ms].
        #[wasm_bindgen(js_namespace = performance, js_name = now)]
        fn performance_now() -> f64;
    }

    /// The local-storage key of the user's own catalog entries (core's
    /// [`fmperf_core::format::custom_store::STORAGE_KEY`]), which the boot script reads for
    /// [`first_view`].
    #[wasm_bindgen]
    pub fn store_key() -> String {
        fmperf_core::format::custom_store::STORAGE_KEY.to_string()
    }

    /// The first view of the page whose query is `search` (`?model=…`, or empty), with the user's
    /// stored catalog entries `store` (the text stored under [`store_key`], if any),
    /// giving up after `budget_ms` of searching [ms]: the HTML to show, or an empty string when
    /// the page must draw it itself.
    #[wasm_bindgen]
    pub fn first_view(search: &str, store: Option<String>, budget_ms: f64) -> String {
        super::page::render(search, store.as_deref(), budget_ms, &mut performance_now)
            .map(|v| v.html)
            .unwrap_or_default()
    }
}
