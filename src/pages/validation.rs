//! Validation: the model's predictions against measured training runs.

use leptos::prelude::*;

/// The validation view.
#[component]
pub fn ValidationPage() -> impl IntoView {
    view! {
        <section class="card">
            <h1>"Validation"</h1>
            <p class="muted">"The comparison with measured training runs is being built."</p>
        </section>
    }
}
