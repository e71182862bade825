//! Embedding: the `<fmperf-explorer>` custom element mounts a whole app into an element (inside
//! its shadow root) with its state taken from the element's attributes instead of the page URL,
//! so several can live on one page. The element itself is defined in JavaScript
//! (`fmperf-element.js`, written by `scripts/postbuild.py`), which calls [`mount_fmperf`].

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use crate::app::Shell;
use crate::url_state::{Query, UrlMode, UrlState};

/// Whether this page hosts custom elements rather than the full-page app: the element script sets
/// `globalThis.fmperfNoAutoMount = true` before it starts the module, or the page marks its body
/// with `data-fmperf-embed`.
pub fn hosted_by_custom_elements() -> bool {
    let flag = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("fmperfNoAutoMount"))
        .map(|v| v.is_truthy())
        .unwrap_or(false);
    flag || document().body().is_some_and(|b| b.has_attribute("data-fmperf-embed"))
}

/// A mounted app, as the custom element holds it: the element passes its attributes again when
/// they change after load ([`FmperfApp::set_query`]), and the app re-renders with them.
#[wasm_bindgen]
pub struct FmperfApp {
    query: Option<RwSignal<Query>>,
}

#[wasm_bindgen]
impl FmperfApp {
    /// Replaces the app's state with `query` (the element's attributes as a query string).
    pub fn set_query(&self, query: String) {
        if let Some(q) = self.query {
            let next = Query::parse(&query);
            if q.try_get_untracked().is_some_and(|cur| cur != next) {
                q.set(next);
            }
        }
    }
}

/// Mounts an fmperf app into `host` with the scenario given as a query string (the same keys as
/// the page URL, e.g. `view=explorer&model=gpt3_1T`). The app is detached from the page URL and
/// shows minimal chrome unless `chrome=1` is in the query. The returned handle updates it.
#[wasm_bindgen]
pub fn mount_fmperf(host: web_sys::HtmlElement, query: String) -> FmperfApp {
    let query = Query::parse(&query);
    let chrome = query.get("chrome").is_some_and(|v| v == "1");
    let slot: Rc<Cell<Option<RwSignal<Query>>>> = Rc::new(Cell::new(None));
    let inner = slot.clone();
    let handle = leptos::mount::mount_to(host, move || {
        let url = UrlState::new(UrlMode::Detached, query.clone());
        inner.set(Some(url.query));
        view! { <Shell url=url embed=!chrome element=true /> }
    });
    // The element owns the app for the page's lifetime.
    handle.forget();
    FmperfApp { query: slot.get() }
}
