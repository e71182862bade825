//! Small form widgets shared by the scenario form and the "try your own" form: a text input that
//! reports every keystroke at once (for validation at the field) and commits to the URL after a
//! pause in typing, and the message under a field.

use std::time::Duration;

use leptos::prelude::*;

/// Pause after the last keystroke before a text input commits [ms].
pub const DEBOUNCE_MS: u64 = 250;

pub use fmperf_app::words::field_message;

/// The message under a field, with the id its input refers to.
#[component]
pub fn FieldError(id: String, #[prop(into)] message: Signal<Option<String>>) -> impl IntoView {
    view! {
        <div id=id class="field-error" role="alert" aria-live="polite">
            {move || message.get()}
        </div>
    }
}

/// A labelled text input. `on_text` gets every keystroke; `on_commit(text, push)` gets the text
/// after [`DEBOUNCE_MS`] without typing, with `push = true` for the first commit of an edit (a new
/// history entry) and `false` for the next ones until the field loses focus.
#[component]
pub fn DebouncedInput(
    /// Element id (the label's `for`).
    id: String,
    /// Label text (with unit).
    label: &'static str,
    /// The current text.
    #[prop(into)]
    value: Signal<String>,
    /// Called on every keystroke.
    on_text: Callback<String>,
    /// Called after a pause in typing.
    on_commit: Callback<(String, bool)>,
    /// The field's problem, if any.
    #[prop(into)]
    error: Signal<Option<String>>,
    /// Help under the field.
    #[prop(optional, into)]
    help: Signal<String>,
    /// Placeholder.
    #[prop(optional, into)]
    placeholder: Signal<String>,
    /// `inputmode` (default `numeric`).
    #[prop(optional)]
    inputmode: Option<&'static str>,
    /// Shown right of the input (e.g. a unit select).
    #[prop(default = None)]
    addon: Option<ChildrenFn>,
) -> impl IntoView {
    let err_id = format!("{id}-error");
    let pending: StoredValue<Option<TimeoutHandle>> = StoredValue::new(None);
    let in_edit = StoredValue::new(false);
    let on_input = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        on_text.run(v.clone());
        if let Some(h) = pending.get_value() {
            h.clear();
        }
        let handle = set_timeout_with_handle(
            move || {
                let push = !in_edit.get_value();
                in_edit.set_value(true);
                on_commit.run((v, push));
            },
            Duration::from_millis(DEBOUNCE_MS),
        );
        pending.set_value(handle.ok());
    };
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <div class="input-row">
            <input
                id=id
                type="text"
                inputmode=inputmode.unwrap_or("numeric")
                autocomplete="off"
                spellcheck="false"
                prop:value=move || value.get()
                placeholder=move || placeholder.get()
                aria-invalid=move || error.with(|e| e.is_some()).to_string()
                aria-describedby=err_id.clone()
                on:input=on_input
                on:change=move |_| in_edit.set_value(false)
            />
            {addon.map(|a| a())}
            </div>
            <FieldError id=err_id message=error />
            {move || {
                let h = help.get();
                (!h.is_empty()).then(|| view! { <div class="field-help">{h}</div> })
            }}
        </div>
    }
}

/// Keyboard support of a `role="tablist"` (WAI-ARIA tabs pattern): Left/Right move to the
/// previous/next tab (wrapping), Home/End to the first/last; the tab is activated (clicked) and
/// focused. Attach to the tablist's `keydown`.
pub fn tablist_keydown(ev: leptos::ev::KeyboardEvent) {
    use wasm_bindgen::JsCast;
    let Some(list) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else { return };
    let mut tabs: Vec<web_sys::HtmlElement> = Vec::new();
    let mut next = list.first_element_child();
    while let Some(el) = next {
        next = el.next_element_sibling();
        if el.get_attribute("role").as_deref() == Some("tab") {
            if let Ok(h) = el.dyn_into::<web_sys::HtmlElement>() {
                tabs.push(h);
            }
        }
    }
    if tabs.is_empty() {
        return;
    }
    let n = tabs.len();
    let current = tabs.iter().position(|t| t.get_attribute("aria-selected").as_deref() == Some("true")).unwrap_or(0);
    let target = match ev.key().as_str() {
        "ArrowRight" => (current + 1) % n,
        "ArrowLeft" => (current + n - 1) % n,
        "Home" => 0,
        "End" => n - 1,
        _ => return,
    };
    ev.prevent_default();
    tabs[target].click();
    let _ = tabs[target].focus();
}
