//! fmperf web app: entry point. Mounts the app on the page body, unless the page hosts custom
//! elements (`<body data-fmperf-embed>`), in which case each element mounts its own app.

mod app;
mod pages;
mod url_state;

fn main() {
    console_error_panic_hook::set_once();
    let hosted = leptos::prelude::document().body().is_some_and(|b| b.has_attribute("data-fmperf-embed"));
    if !hosted {
        leptos::mount::mount_to_body(app::App);
    }
}
