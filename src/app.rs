//! The application shell: header with navigation, the current view, footer. The view is part of
//! the URL (`?view=…`), so every view has a permalink and back/forward work.

use leptos::prelude::*;

use fmperf_app::views::{AppView, FOOTER, TAGLINE, VIEW_KEY};

use crate::pages;
use crate::url_state::{Query, UrlMode, UrlState};

/// The skip link's click: the focus moves to the view (a fragment link would also write
/// `#main-content` into the URL, and does nothing inside a custom element's shadow root).
fn skip_to_main(ev: leptos::ev::MouseEvent) {
    ev.prevent_default();
    crate::pages::reveal("main-content");
}

/// The whole app, with its state in the page URL.
#[component]
pub fn App() -> impl IntoView {
    let url = UrlState::new(UrlMode::PageUrl, Query::default());
    let embed = url.query.with_untracked(fmperf_app::views::is_embedded);
    view! { <Shell url=url embed=embed /> }
}

/// The app shell for a given URL state; `embed` hides header and footer.
#[component]
pub fn Shell(
    url: UrlState,
    embed: bool,
    /// Mounted in a custom element on another page: the views sit in a labelled region, not a
    /// `<main>` (the host page has its own, and two elements would make two).
    #[prop(optional)]
    element: bool,
) -> impl IntoView {
    provide_context(url);
    let current = Memo::new(move |_| AppView::from_key(url.get(VIEW_KEY).as_deref()));
    // Another view than the explorer: the first view (the explorer's results) has nothing for it.
    Effect::new(move |_| {
        if current.get() != AppView::Explorer {
            crate::first_view::hand_over();
        }
    });
    let nav = AppView::ALL
        .into_iter()
        .map(|v| {
            let go = move |ev: leptos::ev::MouseEvent| {
                ev.prevent_default();
                url.update(true, |q| q.set(VIEW_KEY, v.key()));
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
    let views = move || {
        view! {
                {move || url.query.with(fmperf_app::mode::unknown_view).map(|m| view! {
                    <p class="notice warn" role="status" id="unknown-view">{m}</p>
                })}
                {move || match current.get() {
                    AppView::Explorer => pages::explorer::ExplorerPage().into_any(),
                    AppView::Studies => pages::studies::StudiesPage().into_any(),
                    AppView::Catalog => pages::catalog::CatalogPage().into_any(),
                    AppView::Validation => pages::validation::ValidationPage().into_any(),
                    AppView::About => pages::about::AboutPage().into_any(),
                }}
        }
    };
    let body = if element {
        view! { <div id="main-content" tabindex="-1" role="region" aria-label="fmperf">{views}</div> }.into_any()
    } else {
        view! { <main id="main-content" tabindex="-1">{views}</main> }.into_any()
    };
    view! {
        <div class:embed=embed class="app">
            <a class="skip-link" href="#main-content" on:click=skip_to_main>"Skip to content"</a>
            <header class="app-header">
                <a class="brand" href="?">
                    "fm" <span>"perf"</span>
                </a>
                <span class="tagline">{TAGLINE}</span>
                <nav class="nav" aria-label="Views">
                    {nav}
                </nav>
            </header>
            {body}
            <footer class="app-footer">
                {FOOTER[0]}
                {FOOTER[1]}
            </footer>
        </div>
    }
}
