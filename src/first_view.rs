//! The hand-over from the first view (`crates/first-view`, drawn by the boot script before this
//! module loaded) to the page: the first view stays, and the page's own app stays hidden
//! (`style/main.css`: `#first-view ~ .app`), until the page has something to show in its place —
//! its own results, a problem, a search's progress, or another view. Then the first view goes.
//!
//! `#first-view` is the one element id the page reads that it does not render itself.

/// Removes the first view, if it is still there (the page then shows).
pub fn hand_over() {
    if let Some(el) = leptos::prelude::document().get_element_by_id("first-view") {
        el.remove();
    }
}
