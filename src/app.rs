//! The application shell: header with navigation, the current view, footer. The view is part of
//! the URL (`?view=…`), so every view has a permalink and back/forward work.

use leptos::prelude::*;

use crate::pages;
use crate::url_state::{Query, UrlMode, UrlState};

/// The app's top-level views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// One scenario → best configurations (default).
    Explorer,
    /// Sweeps and the presets that regenerate the papers' figures.
    Studies,
    /// Model and system catalogs.
    Catalog,
    /// Predicted against measured training runs.
    Validation,
    /// About the models and the data behind them.
    About,
}

impl View {
    const ALL: [View; 5] = [View::Explorer, View::Studies, View::Catalog, View::Validation, View::About];

    fn key(self) -> &'static str {
        match self {
            View::Explorer => "explorer",
            View::Studies => "studies",
            View::Catalog => "catalog",
            View::Validation => "validation",
            View::About => "about",
        }
    }

    fn title(self) -> &'static str {
        match self {
            View::Explorer => "Explorer",
            View::Studies => "Studies",
            View::Catalog => "Catalog",
            View::Validation => "Validation",
            View::About => "About",
        }
    }

    fn from_key(key: Option<&str>) -> View {
        View::ALL.into_iter().find(|v| Some(v.key()) == key).unwrap_or(View::Explorer)
    }
}

/// The whole app, with its state in the page URL.
#[component]
pub fn App() -> impl IntoView {
    let url = UrlState::new(UrlMode::PageUrl, Query::default());
    let embed = url.get("embed").is_some_and(|v| v != "0");
    view! { <Shell url=url embed=embed /> }
}

/// The app shell for a given URL state; `embed` hides header and footer.
#[component]
pub fn Shell(url: UrlState, embed: bool) -> impl IntoView {
    provide_context(url);
    let current = Memo::new(move |_| View::from_key(url.get("view").as_deref()));
    let nav = View::ALL
        .into_iter()
        .map(|v| {
            let go = move |ev: leptos::ev::MouseEvent| {
                ev.prevent_default();
                url.update(true, |q| q.set("view", v.key()));
            };
            view! {
                <a
                    href=format!("?view={}", v.key())
                    on:click=go
                    aria-current=move || (current.get() == v).then_some("page")
                >
                    {v.title()}
                </a>
            }
        })
        .collect_view();
    view! {
        <div class:embed=embed class="app">
            <header class="app-header">
                <a class="brand" href="?">
                    "fm" <span>"perf"</span>
                </a>
                <span class="tagline">"Training performance of foundation models, computed in your browser"</span>
                <nav class="nav" aria-label="Views">
                    {nav}
                </nav>
            </header>
            <main>
                {move || url.query.with(fmperf_app::mode::unknown_view).map(|m| view! {
                    <p class="notice warn" role="status" id="unknown-view">{m}</p>
                })}
                {move || match current.get() {
                    View::Explorer => pages::explorer::ExplorerPage().into_any(),
                    View::Studies => pages::studies::StudiesPage().into_any(),
                    View::Catalog => pages::catalog::CatalogPage().into_any(),
                    View::Validation => pages::validation::ValidationPage().into_any(),
                    View::About => pages::about::AboutPage().into_any(),
                }}
            </main>
            <footer class="app-footer">
                "fmperf implements the analytical model of Subramanian et al. (PMBS 2024) and the measurements of "
                "Emani et al. (2023). Everything runs locally: no server, no network after load."
            </footer>
        </div>
    }
}
