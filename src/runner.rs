//! Runs resumable core computations (searches, sweeps) on the main thread in ~10 ms time slices, so
//! the page never freezes: between slices the browser handles input and paints the progress.
//!
//! Works everywhere the page works (any host, iframes, custom elements, the single-file bundle from
//! `file://`), which a web worker would not.

use std::cell::Cell;
use std::rc::Rc;

use leptos::prelude::*;

/// Work that can be advanced a bounded amount at a time.
pub trait Sliced: 'static {
    /// What the task produces.
    type Output: 'static;
    /// Does up to `units` more units of work; returns `true` when finished.
    fn step(&mut self, units: usize) -> bool;
    /// (done, total) units, for the progress bar.
    fn progress(&self) -> (u64, u64);
    /// The result, once `step` returned `true`.
    fn finish(self) -> Self::Output;
}

/// Target length of one slice [ms]; a click waits at most about this long.
pub const SLICE_MS: f64 = 10.0;

/// Handle of a running task: cancel it, or ask whether it is still running.
#[derive(Clone, Debug, Default)]
pub struct TaskHandle {
    cancelled: Rc<Cell<bool>>,
    finished: Rc<Cell<bool>>,
}

impl TaskHandle {
    /// Stops the task before its next slice; its `on_done` is never called.
    pub fn cancel(&self) {
        self.cancelled.set(true);
    }

    /// Whether the task is still running (neither finished nor cancelled).
    pub fn is_running(&self) -> bool {
        !self.cancelled.get() && !self.finished.get()
    }
}

fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or_else(|| js_sys::Date::now())
}

/// Lets the browser run its pending work (input events, rendering) and resumes as soon as it has.
///
/// A message posted through a `MessageChannel` runs as a new task right after what is pending,
/// whereas `setTimeout(0)` is clamped to at least 4 ms once nested, which would idle the page for
/// 4 ms after every 10 ms slice. Falls back to `setTimeout(0)` if the channel is unavailable.
async fn yield_to_browser() {
    let Ok(channel) = web_sys::MessageChannel::new() else {
        gloo_timers::future::TimeoutFuture::new(0).await;
        return;
    };
    let port = channel.port1();
    let sender = channel.port2();
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        port.set_onmessage(Some(&resolve));
    });
    if sender.post_message(&wasm_bindgen::JsValue::NULL).is_err() {
        gloo_timers::future::TimeoutFuture::new(0).await;
        return;
    }
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    port.set_onmessage(None);
    port.close();
    sender.close();
}

/// Starts `task`: runs slices of about [`SLICE_MS`], reports `(done, total)` through `progress`
/// after each slice, and calls `on_done` with the output when finished (not when cancelled).
///
/// The number of work units per check of the clock adapts so that checking costs little.
pub fn spawn_sliced<T: Sliced>(
    mut task: T,
    progress: impl Fn((u64, u64)) + 'static,
    on_done: impl FnOnce(T::Output) + 'static,
) -> TaskHandle {
    let handle = TaskHandle::default();
    let h = handle.clone();
    leptos::task::spawn_local(async move {
        let mut units = 16usize;
        loop {
            if h.cancelled.get() {
                return;
            }
            let start = now_ms();
            let mut done = false;
            while !done && now_ms() - start < SLICE_MS {
                let t0 = now_ms();
                done = task.step(units);
                let spent = now_ms() - t0;
                // Aim for about 1 ms between clock checks.
                if spent < 0.5 {
                    units = (units * 2).min(1 << 20);
                } else if spent > 2.0 && units > 1 {
                    units /= 2;
                }
            }
            progress(task.progress());
            if done {
                h.finished.set(true);
                on_done(task.finish());
                return;
            }
            // Yield to the browser (input, paint) before the next slice.
            yield_to_browser().await;
        }
    });
    handle
}
