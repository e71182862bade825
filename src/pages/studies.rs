//! Studies: sweeps over one or two axes and the presets that regenerate the papers' figures.

use leptos::prelude::*;

/// The studies view.
#[component]
pub fn StudiesPage() -> impl IntoView {
    view! {
        <section class="card">
            <h1>"Studies"</h1>
            <p class="muted">"Sweeps and paper presets are being built; use the explorer meanwhile."</p>
        </section>
    }
}
