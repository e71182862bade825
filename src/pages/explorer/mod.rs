//! The explorer: one scenario → the best parallel configurations.

use leptos::prelude::*;

use super::models_table::ReferenceModelsTable;

/// The explorer view.
#[component]
pub fn ExplorerPage() -> impl IntoView {
    view! {
        <section class="card">
            <h1>"Reference models"</h1>
            <ReferenceModelsTable />
        </section>
    }
}
