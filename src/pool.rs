//! A pool of Web Workers that run searches and sweeps on every core, executing the page's own
//! WebAssembly module (the worker script `fmperf-worker.js` imports the page's wasm-bindgen glue
//! and instantiates the module the page sends it, so nothing is fetched or compiled twice).
//!
//! A task is a list of jobs ([`fmperf_app::jobs`], JSON text); the pool runs them on up to
//! [`MAX_WORKERS`] workers (one per core), reports the progress summed over its jobs, and hands
//! back the answers in job order. Workers start on first use and are kept for the next task;
//! cancelling a task terminates the workers running its jobs.
//!
//! **Standby workers**: once a task has finished, the pool starts as many spare workers as it runs
//! (instantiated, idle). A cancel — the explorer's sensitivity strip cancels its re-searches when
//! the user edits the scenario, so the new search has every core — puts a spare in place of each
//! terminated worker at once, and the new task's jobs start without waiting for a worker to start
//! (a few hundred milliseconds on two cores); spares are started again when the next task
//! finishes, not while a task waits for them to be replaced.
//!
//! Where workers are unavailable — the single-file bundle and any `file://` page, a CSP that
//! forbids workers, a worker script that does not load, the debug switch below — [`size`] says
//! `None` or [`run`] reports failure, and the caller runs the same work in time slices on the main
//! thread ([`crate::runner`]); nothing tells the user, the results are the same.
//!
//! **Debug switch**: `localStorage["fmperf.workers"] = "off"` forces the time slices (to compare
//! the two, or to measure), a number `N` caps the pool at `N` workers; no value (or another) uses
//! one worker per core where workers work.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// Most workers started, whatever the core count.
pub const MAX_WORKERS: usize = 8;

/// The storage key of the debug switch.
pub const SWITCH_KEY: &str = "fmperf.workers";

/// What a task's owner is told when its jobs are done (`None`: the workers failed; run the work
/// another way).
type Done = Box<dyn FnOnce(Option<Vec<String>>)>;

struct Task {
    id: u64,
    jobs: Vec<String>,
    /// Next job not yet handed to a worker.
    next: usize,
    answers: Vec<Option<String>>,
    progress: Vec<(u64, u64)>,
    on_progress: Rc<dyn Fn((u64, u64))>,
    on_done: Option<Done>,
}

impl Task {
    /// `(done, total)` over the jobs; jobs not started count as the average of those started.
    fn summed(&self) -> (u64, u64) {
        let started: Vec<&(u64, u64)> = self.progress.iter().filter(|p| p.1 > 0).collect();
        let done: u64 = self.progress.iter().map(|p| p.0).sum();
        let known: u64 = started.iter().map(|p| p.1).sum();
        let waiting = (self.jobs.len() - started.len()) as u64;
        let guess = if started.is_empty() { 0 } else { known / started.len() as u64 * waiting };
        (done, known + guess)
    }
}

struct Slot {
    /// The worker's own number (its messages name it; a spare changes slot).
    key: u64,
    worker: web_sys::Worker,
    ready: bool,
    /// `(task id, job index)` it runs.
    busy: Option<(u64, usize)>,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

#[derive(Default)]
struct Pool {
    /// `Some(false)` once workers failed here: never tried again on this page.
    usable: Option<bool>,
    /// A worker has been ready once.
    warm: bool,
    slots: Vec<Option<Slot>>,
    /// Spare workers, started idle, that take a terminated worker's place ([`cancel`]).
    standby: Vec<Slot>,
    /// The next worker's key.
    next_key: u64,
    /// Terminated workers whose message handlers may still be on the stack: dropped at the next
    /// [`run`], never inside a handler.
    retired: Vec<Slot>,
    tasks: Vec<Task>,
    next_id: u64,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// Calls to make once the pool is no longer borrowed (they may start or cancel tasks).
type Later = Vec<Box<dyn FnOnce()>>;

fn run_later(later: Later) {
    for f in later {
        f();
    }
}

/// How many workers the pool runs (one per core, at most [`MAX_WORKERS`]), or `None` when workers
/// are unavailable here or would not help (one core).
pub fn size() -> Option<usize> {
    if POOL.with(|p| p.borrow().usable) == Some(false) || worker_url().is_none() {
        return None;
    }
    let cores = web_sys::window()?.navigator().hardware_concurrency() as usize;
    match switch().and_then(|s| s.parse::<usize>().ok()) {
        Some(n) if n >= 1 => Some(n.min(MAX_WORKERS)),
        _ => (cores >= 2).then_some(cores.min(MAX_WORKERS)),
    }
}

/// The debug switch's value, if set.
fn switch() -> Option<String> {
    let storage = web_sys::window()?.local_storage().ok().flatten()?;
    storage.get_item(SWITCH_KEY).ok().flatten().map(|s| s.trim().to_string())
}

/// The worker script's URL, or `None` where workers cannot run: the single-file bundle, `file://`
/// pages, the debug switch.
fn worker_url() -> Option<String> {
    let window = web_sys::window()?;
    let document = window.document()?;
    if document.query_selector("meta[name=fmperf-bundle]").ok().flatten().is_some() {
        return None;
    }
    if switch().as_deref() == Some("off") {
        return None;
    }
    // The element script sets where the worker script lives (next to itself); the page's is next
    // to the page.
    let given = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("fmperfWorkerUrl")).ok()?.as_string();
    let base = document.base_uri().ok().flatten()?;
    let url = web_sys::Url::new_with_base(given.as_deref().unwrap_or("./fmperf-worker.js"), &base).ok()?;
    (url.protocol() != "file:").then(|| url.href())
}

/// Starts a task of `jobs` (JSON text each) on the pool: `on_progress` gets `(done, total)` summed
/// over the jobs, `on_done` the answers in job order (or `None` if the workers failed). Returns the
/// task's id for [`cancel`], or `None` (and calls nothing) when workers are unavailable.
pub fn run(
    jobs: Vec<String>,
    on_progress: impl Fn((u64, u64)) + 'static,
    on_done: impl FnOnce(Option<Vec<String>>) + 'static,
) -> Option<u64> {
    let count = size()?;
    let url = worker_url()?;
    // The workers start before the task joins the pool, so that a worker that cannot start
    // fails only the tasks already there: this one has called nothing when `None` is returned.
    POOL.with(|p| p.borrow_mut().slots.resize_with(count, || None));
    for i in 0..count {
        if !start_slot(i, &url) {
            fail_all();
            return None;
        }
    }
    let id = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.retired.clear();
        p.next_id += 1;
        let id = p.next_id;
        let n = jobs.len();
        p.tasks.push(Task {
            id,
            jobs,
            next: 0,
            answers: vec![None; n],
            progress: vec![(0, 0); n],
            on_progress: Rc::new(on_progress),
            on_done: Some(Box::new(on_done)),
        });
        id
    });
    dispatch();
    Some(id)
}

/// Whether the workers have started once on this page and are ready (those a cancel terminated
/// restart at once; a task would not wait for the first start).
pub fn is_warm() -> bool {
    POOL.with(|p| {
        let p = p.borrow();
        p.warm || p.slots.iter().flatten().any(|s| s.ready)
    })
}

/// Starts the workers (if workers are available) without giving them work, so that the next task
/// does not wait for them.
pub fn warm() {
    let (Some(count), Some(url)) = (size(), worker_url()) else { return };
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.slots.len() < count {
            p.slots.resize_with(count, || None);
        }
    });
    for i in 0..count {
        if !start_slot(i, &url) {
            fail_all();
            return;
        }
    }
}

/// Cancels task `id`: its answers are dropped and the workers running its jobs terminated. Jobs of
/// other tasks that wait are then handed out at once (a ready spare takes each terminated worker's
/// place; without spares the terminated workers restart for them):
/// without that, a task queued behind the cancelled one would wait for a message that never comes.
pub fn cancel(id: u64) {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let Pool { slots, standby, retired, tasks, .. } = &mut *p;
        tasks.retain(|t| t.id != id);
        for slot in slots.iter_mut() {
            if slot.as_ref().is_some_and(|s| s.busy.is_some_and(|(t, _)| t == id)) {
                if let Some(s) = slot.take() {
                    s.worker.terminate();
                    retired.push(s);
                }
                // A spare (a ready one first) takes the place at once.
                if let Some(k) = standby.iter().position(|s| s.ready).or((!standby.is_empty()).then_some(0)) {
                    *slot = Some(standby.remove(k));
                }
            }
        }
    });
    dispatch();
}

/// Starts worker `i` unless it runs; `false` if it cannot be constructed (CSP, no module workers).
fn start_slot(i: usize, url: &str) -> bool {
    if POOL.with(|p| p.borrow().slots.get(i).is_some_and(Option::is_some)) {
        return true;
    }
    let Some(slot) = new_worker(url) else { return false };
    POOL.with(|p| p.borrow_mut().slots[i] = Some(slot));
    true
}

/// Starts spare workers until there are as many as running ones (see the module's doc); `false`
/// if one cannot be constructed.
fn refill_standby() -> bool {
    let Some(url) = worker_url() else { return true };
    loop {
        let short = POOL.with(|p| {
            let p = p.borrow();
            p.usable == Some(true) && p.standby.len() < p.slots.len()
        });
        if !short {
            return true;
        }
        let Some(slot) = new_worker(&url) else { return false };
        POOL.with(|p| p.borrow_mut().standby.push(slot));
    }
}

/// A new worker, sent the module (not ready until it answers); `None` if it cannot be constructed.
fn new_worker(url: &str) -> Option<Slot> {
    let key = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.next_key += 1;
        p.next_key
    });
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let Ok(worker) = web_sys::Worker::new_with_options(url, &options) else {
        return None;
    };
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| message(key, e.data()));
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
        e.prevent_default();
        fail_all();
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let init = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&init, &JsValue::from_str("module"), &wasm_bindgen::module());
    if worker.post_message(&init).is_err() {
        worker.terminate();
        return None;
    }
    Some(Slot { key, worker, ready: false, busy: None, _on_message: on_message, _on_error: on_error })
}

/// Workers failed: none is used again on this page; every task is told, so its owner runs it in
/// time slices.
fn fail_all() {
    let later: Later = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.usable = Some(false);
        let Pool { slots, standby, retired, tasks, .. } = &mut *p;
        for s in slots.drain(..).flatten().chain(standby.drain(..)) {
            s.worker.terminate();
            retired.push(s);
        }
        tasks
            .drain(..)
            .filter_map(|mut t| t.on_done.take())
            .map(|f| Box::new(move || f(None)) as Box<dyn FnOnce()>)
            .collect()
    });
    run_later(later);
}

/// A message from worker `key`: `{ready}`, `{failed}`, `{progress: [done, total]}` or `{answer}`.
fn message(key: u64, data: JsValue) {
    let get = |k: &str| js_sys::Reflect::get(&data, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
    if get("failed").is_truthy() {
        fail_all();
        return;
    }
    let mut later: Later = Vec::new();
    let mut finished = false;
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.usable = Some(true);
        if get("ready").is_truthy() {
            if let Some(spare) = p.standby.iter_mut().find(|s| s.key == key) {
                spare.ready = true;
                return;
            }
        }
        let Some(slot) = p.slots.iter_mut().flatten().find(|s| s.key == key) else { return };
        if get("ready").is_truthy() {
            slot.ready = true;
            p.warm = true;
            return;
        }
        let Some((tid, j)) = slot.busy else { return };
        let answer = get("answer");
        if let Some(text) = answer.as_string() {
            slot.busy = None;
            if let Some(t) = p.tasks.iter_mut().find(|t| t.id == tid) {
                t.answers[j] = Some(text);
                if t.answers.iter().all(Option::is_some) {
                    let answers: Vec<String> = t.answers.iter_mut().filter_map(Option::take).collect();
                    if let Some(f) = t.on_done.take() {
                        later.push(Box::new(move || f(Some(answers))));
                    }
                    p.tasks.retain(|t| t.id != tid);
                    finished = true;
                }
            }
            return;
        }
        let progress = js_sys::Array::from(&get("progress"));
        if progress.length() == 2 {
            let n = |k: u32| progress.get(k).as_f64().unwrap_or(0.0) as u64;
            if let Some(t) = p.tasks.iter_mut().find(|t| t.id == tid) {
                t.progress[j] = (n(0), n(1));
                let (summed, f) = (t.summed(), t.on_progress.clone());
                later.push(Box::new(move || f(summed)));
            }
        }
    });
    run_later(later);
    dispatch();
    if finished && !refill_standby() {
        fail_all();
    }
}

/// Hands the next waiting jobs (oldest task first) to idle, ready workers; restarts workers that
/// a cancel terminated.
fn dispatch() {
    let Some(url) = worker_url() else { return };
    let missing: Vec<usize> = POOL.with(|p| {
        let p = p.borrow();
        let waiting = p.tasks.iter().any(|t| t.next < t.jobs.len());
        if !waiting {
            return Vec::new();
        }
        p.slots.iter().enumerate().filter(|(_, s)| s.is_none()).map(|(i, _)| i).collect()
    });
    for i in missing {
        if !start_slot(i, &url) {
            fail_all();
            return;
        }
    }
    let failed = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let Pool { slots, tasks, .. } = &mut *p;
        for slot in slots.iter_mut().flatten().filter(|s| s.ready && s.busy.is_none()) {
            let Some(t) = tasks.iter_mut().find(|t| t.next < t.jobs.len()) else { break };
            let msg = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&msg, &JsValue::from_str("job"), &JsValue::from_str(&t.jobs[t.next]));
            if slot.worker.post_message(&msg).is_err() {
                return true;
            }
            slot.busy = Some((t.id, t.next));
            t.next += 1;
        }
        false
    });
    if failed {
        fail_all();
    }
}

/// Reads what every job reads first (the compiled-in catalogs: [`fmperf_app::jobs::warm`]), so
/// that a worker's first job does not pay for it: `fmperf-worker.js` calls it once the module is
/// instantiated, before it says it is ready (a spare worker does it while it waits).
#[wasm_bindgen]
pub fn fmperf_warm_worker() {
    fmperf_app::jobs::warm();
}

/// Runs one job in a worker (called by `fmperf-worker.js`): the job's JSON in, its answer's JSON
/// out; `progress(done, total)` is called after every step of the job.
#[wasm_bindgen]
pub fn fmperf_run_job(job: &str, progress: &js_sys::Function) -> String {
    fmperf_app::jobs::run_json(job, |(done, total)| {
        let _ = progress.call2(&JsValue::NULL, &JsValue::from_f64(done as f64), &JsValue::from_f64(total as f64));
    })
}
