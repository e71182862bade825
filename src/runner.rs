//! Runs resumable core computations (searches, sweeps) without freezing the page.
//!
//! * [`spawn_parallel`]: on every core, as jobs on the pool of Web Workers ([`crate::pool`]), the
//!   answers merged by the caller with the core's merge; where workers are unavailable (the
//!   single-file bundle and `file://`, a CSP without workers, a worker that fails) the same work
//!   runs in time slices instead, with the same result.
//! * [`spawn_sliced`]: on the main thread in ~10 ms time slices; between slices the browser handles
//!   input and paints the progress. Works everywhere the page works (any host, iframes, custom
//!   elements, the single-file bundle from `file://`).

use std::cell::{Cell, RefCell};
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
    /// The pool's id of the task while it runs on workers.
    pooled: Rc<Cell<Option<u64>>>,
}

impl TaskHandle {
    /// Stops the task (before its next slice, or by terminating its workers); its `on_done` is
    /// never called.
    pub fn cancel(&self) {
        self.cancelled.set(true);
        if let Some(id) = self.pooled.take() {
            crate::pool::cancel(id);
        }
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
    task: T,
    progress: impl Fn((u64, u64)) + 'static,
    on_done: impl FnOnce(T::Output) + 'static,
) -> TaskHandle {
    let handle = TaskHandle::default();
    run_sliced(handle.clone(), task, progress, on_done);
    handle
}

/// Work that can run as jobs on the worker pool: the jobs ([`fmperf_app::jobs`] JSON) and how to
/// merge their answers (in job order) into the task's output (`None`: an answer did not read; the
/// work then runs in time slices).
pub struct Jobs<O> {
    /// One JSON job per worker task.
    pub jobs: Vec<String>,
    /// The answers, in job order, merged.
    pub merge: Box<dyn FnOnce(Vec<String>) -> Option<O>>,
}

impl<O: 'static> Jobs<O> {
    /// `jobs` and the merge of their answers (read from JSON; one that does not read, or a merge
    /// error, makes the merge `None`).
    pub fn new(
        jobs: &[fmperf_app::jobs::Job],
        merge: impl FnOnce(Vec<fmperf_app::jobs::Answer>) -> Result<O, String> + 'static,
    ) -> Jobs<O> {
        Jobs {
            jobs: jobs.iter().map(fmperf_app::jobs::Job::to_json).collect(),
            merge: Box::new(move |texts| {
                let answers =
                    texts.iter().map(|a| fmperf_app::jobs::Answer::from_json(a).ok()).collect::<Option<_>>()?;
                merge(answers).ok()
            }),
        }
    }

    /// The same jobs with `f` applied to the merged output.
    pub fn map<P: 'static>(self, f: impl FnOnce(O) -> P + 'static) -> Jobs<P> {
        let merge = self.merge;
        Jobs { jobs: self.jobs, merge: Box::new(move |answers| merge(answers).map(f)) }
    }
}

/// Starts a task on the worker pool when `jobs` is given and workers are available, else (or if
/// the workers fail) runs `fallback()` in time slices: same progress reports, same `on_done`,
/// same result.
pub fn spawn_parallel<T: Sliced>(
    fallback: impl FnOnce() -> T + 'static,
    jobs: Option<Jobs<T::Output>>,
    progress: impl Fn((u64, u64)) + 'static,
    on_done: impl FnOnce(T::Output) + 'static,
) -> TaskHandle {
    let handle = TaskHandle::default();
    let progress = Rc::new(progress);
    let on_done: Rc<RefCell<Option<Box<dyn FnOnce(T::Output)>>>> = Rc::new(RefCell::new(Some(Box::new(on_done))));
    let slices = {
        let (handle, progress, on_done) = (handle.clone(), progress.clone(), on_done.clone());
        move || {
            if handle.cancelled.get() {
                return;
            }
            handle.pooled.set(None);
            let done = move |out| {
                if let Some(f) = on_done.borrow_mut().take() {
                    f(out);
                }
            };
            run_sliced(handle, fallback(), move |p| progress(p), done);
        }
    };
    let Some(Jobs { jobs, merge }) = jobs else {
        slices();
        return handle;
    };
    // Either the pool's answer or the fallback runs the task, once.
    let slices: Rc<RefCell<Option<Box<dyn FnOnce()>>>> = Rc::new(RefCell::new(Some(Box::new(slices))));
    let fall_back = {
        let slices = slices.clone();
        move || {
            if let Some(f) = slices.borrow_mut().take() {
                f();
            }
        }
    };
    let fall_back_later = fall_back.clone();
    let h = handle.clone();
    let id = crate::pool::run(
        jobs,
        move |p| progress(p),
        move |answers| match answers.and_then(merge) {
            Some(out) if !h.cancelled.get() => {
                h.finished.set(true);
                h.pooled.set(None);
                if let Some(f) = on_done.borrow_mut().take() {
                    f(out);
                }
            }
            Some(_) => {}
            // The workers failed, or an answer did not read: the same work in time slices.
            None => fall_back_later(),
        },
    );
    match id {
        Some(id) => handle.pooled.set(Some(id)),
        None => fall_back(),
    }
    handle
}

/// Runs `task` in slices under `handle` (see [`spawn_sliced`]).
fn run_sliced<T: Sliced>(
    h: TaskHandle,
    task: T,
    progress: impl Fn((u64, u64)) + 'static,
    on_done: impl FnOnce(T::Output) + 'static,
) {
    drive(h, Box::new(WithDone { task, on_done }), Box::new(progress));
}

/// A [`Sliced`] task with what receives its output, behind one type: the loop of [`drive`] is
/// then compiled once, not once per kind of task (issue 33: the page's module size).
trait Driven {
    /// [`Sliced::step`].
    fn step(&mut self, units: usize) -> bool;
    /// [`Sliced::progress`].
    fn progress(&self) -> (u64, u64);
    /// [`Sliced::finish`], its output handed to the caller's `on_done`.
    fn finish(self: Box<Self>);
}

/// A task and its `on_done`.
struct WithDone<T, D> {
    task: T,
    on_done: D,
}

impl<T: Sliced, D: FnOnce(T::Output)> Driven for WithDone<T, D> {
    fn step(&mut self, units: usize) -> bool {
        self.task.step(units)
    }

    fn progress(&self) -> (u64, u64) {
        self.task.progress()
    }

    fn finish(self: Box<Self>) {
        let WithDone { task, on_done } = *self;
        on_done(task.finish());
    }
}

/// The time-slice loop of [`run_sliced`].
fn drive(h: TaskHandle, mut task: Box<dyn Driven>, progress: Box<dyn Fn((u64, u64))>) {
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
                task.finish();
                return;
            }
            // Yield to the browser (input, paint) before the next slice.
            yield_to_browser().await;
        }
    });
}
