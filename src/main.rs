//! fmperf web app: entry point. Mounts the app on the page body, unless the page hosts custom
//! elements (the element script sets `globalThis.fmperfNoAutoMount`, or `<body data-fmperf-embed>`),
//! in which case each `<fmperf-explorer>` mounts its own app through [`embed::mount_fmperf`].
//!
//! The same module runs in the page's Web Workers (`pool.rs`, `public/fmperf-worker.js`), where it
//! mounts nothing and only runs search and sweep jobs.
//!
//! The app exists only for `wasm32`: on the host this binary is empty, so that host `cargo test`
//! never compiles Leptos (see the workspace `Cargo.toml`).

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod chart;
#[cfg(target_arch = "wasm32")]
mod download;
#[cfg(target_arch = "wasm32")]
mod embed;
#[cfg(target_arch = "wasm32")]
mod first_view;
#[cfg(target_arch = "wasm32")]
mod mode_panel;
#[cfg(target_arch = "wasm32")]
mod pages;
#[cfg(target_arch = "wasm32")]
mod pool;
#[cfg(target_arch = "wasm32")]
mod runner;
#[cfg(target_arch = "wasm32")]
mod storage;
#[cfg(target_arch = "wasm32")]
mod url_state;

#[cfg(target_arch = "wasm32")]
fn main() {
    use wasm_bindgen::JsCast;
    console_error_panic_hook::set_once();
    // In a Web Worker of the pool (`pool.rs`) the module only runs jobs: there is no page to mount.
    if js_sys::global().dyn_into::<web_sys::Window>().is_err() {
        return;
    }
    if !embed::hosted_by_custom_elements() {
        leptos::mount::mount_to_body(app::App);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("fmperf-web is the web app: build it for wasm32 with Trunk (see README.md).");
}
