//! One module per top-level view.

pub mod about;
pub mod catalog;
pub mod explorer;
pub mod models_table;
pub mod studies;
pub mod validation;

use wasm_bindgen::JsCast;

/// Brings the element `id` into view and moves the focus to it once the page has drawn it (after
/// a click whose result appears elsewhere on the page, so that nothing seems to happen until the
/// reader scrolls). The element should carry `tabindex="-1"`.
pub fn reveal(id: &'static str) {
    leptos::prelude::request_animation_frame(move || {
        let Some(el) = leptos::prelude::document().get_element_by_id(id) else { return };
        el.scroll_into_view_with_bool(true);
        if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
            let _ = el.focus();
        }
    });
}
