//! About fmperf: the model, its sources and its limits.

use leptos::prelude::*;

/// The about view.
#[component]
pub fn AboutPage() -> impl IntoView {
    view! {
        <section class="card">
            <h1>"About fmperf"</h1>
            <p>
                "fmperf answers, in a fraction of a second, how long training a foundation model takes on a given system, "
                "with which parallel configuration, how much memory each accelerator needs and where the time goes."
            </p>
            <p>
                "Reference mode reproduces the analytical model of Subramanian et al., "
                <em>"Comprehensive Performance Modeling and System Design Insights for Foundation Models"</em>
                " (PMBS 2024; companion code transformer-perf-estimates) to 1e-9 relative on every output."
            </p>
        </section>
    }
}
