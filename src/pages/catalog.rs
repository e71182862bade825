//! The catalog browser.

use leptos::prelude::*;

/// The catalog view.
#[component]
pub fn CatalogPage() -> impl IntoView {
    view! {
        <section class="card">
            <h1>"Catalog"</h1>
            <super::models_table::ReferenceModelsTable />
        </section>
    }
}
