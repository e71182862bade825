//! "Your run": paste or open a launch file (a Megatron-LM / Megatron-DeepSpeed / Trainer launch
//! script or Slurm job, NeMo / Megatron-Bridge YAML, torchtitan TOML, MaxText config or command
//! line, DeepSpeed JSON, Hugging Face `config.json`; several files together, such as a script and
//! its `ds_config.json`, with the script's arguments) and see exactly that configuration evaluated,
//! the same numbers as `fmperf estimate --from FILE` (both print
//! [`fmperf_launch::Estimate::to_json`]'s values), with every flag fmperf does not use and
//! why. A button searches the file's scenario in the Explorer (its catalog model, system, devices,
//! batch and switches); another finds the best layout for the file's run (in time slices) and
//! writes it back as a launch file (the file rewritten in place when it is of that family), to
//! copy or download.
//!
//! The text stays in the page (not in the URL: scripts are long); the system and device count
//! can be given here when the file does not name them.

use fmperf_core::mode::Mode;
use fmperf_core::search::Search;
use fmperf_core::vocab::TimePart;
use fmperf_launch::best::{self, BestForFile};
use fmperf_launch::emit::Target;
use fmperf_launch::{self as launch, Estimate, Format, Launch, Overrides, Source};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::fmt;
use super::keys;
use super::state::Explorer;
use crate::mode_panel::{EXT_KEY, MODE_KEY};
use crate::runner::{Sliced, TaskHandle, spawn_sliced};

/// The panel's few styles (the explorer's stylesheet belongs to the page as a whole).
const CSS: &str = "
.launch-import textarea { width: 100%; min-height: 12rem; font-family: monospace; font-size: 0.85rem; }
.launch-import .launch-inputs { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: end; margin: 0.5rem 0; }
.launch-import .launch-inputs label { display: flex; flex-direction: column; font-size: 0.85rem; }
.launch-import .launch-error { color: var(--bad, #b00020); }
.launch-import dl.launch-headline { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
.launch-import dl.launch-headline dd { margin: 0; font-variant-numeric: tabular-nums; }
.launch-import table { border-collapse: collapse; font-size: 0.85rem; }
.launch-import td, .launch-import th { padding: 0.15rem 0.6rem 0.15rem 0; text-align: left; vertical-align: top; }
.launch-import td.num { text-align: right; font-variant-numeric: tabular-nums; }
.launch-import .launch-unused-wrap { max-width: 100%; overflow-x: auto; }
.launch-import .launch-companions { list-style: none; padding: 0; margin: 0.25rem 0; display: flex; flex-wrap: wrap; gap: 0.5rem; }
.launch-import .launch-companions li { border: 1px solid var(--border, #ccc); border-radius: 1rem; padding: 0.1rem 0.3rem 0.1rem 0.7rem; font-size: 0.85rem; }
.launch-import .launch-companions button { margin-left: 0.3rem; }
.launch-import textarea.launch-emitted { min-height: 10rem; }
.launch-import .launch-best-actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: end; margin: 0.5rem 0; }
.launch-import table.launch-unused td { overflow-wrap: anywhere; }
";

/// Largest file read [bytes] (launch files are a few kB).
const MAX_FILE_BYTES: f64 = 1_000_000.0;

/// Reads the chosen `files` (each at most [`MAX_FILE_BYTES`]) and calls `done` with their names and
/// texts, in the order chosen, once all are read; an unreadable one is reported in `problem`.
pub(super) fn read_files(
    files: Vec<web_sys::File>,
    problem: RwSignal<Option<String>>,
    done: impl FnOnce(Vec<(String, String)>) + 'static,
) {
    use std::cell::RefCell;
    use std::rc::Rc;
    if let Some(big) = files.iter().find(|f| f.size() > MAX_FILE_BYTES) {
        problem.set(Some(format!(
            "{}: the file has {} bytes; at most {MAX_FILE_BYTES} are read",
            big.name(),
            big.size()
        )));
        return;
    }
    let n = files.len();
    let texts: Rc<RefCell<Vec<Option<(String, String)>>>> = Rc::new(RefCell::new(vec![None; n]));
    let done: Rc<RefCell<Option<Box<dyn FnOnce(Vec<(String, String)>)>>>> = Rc::new(RefCell::new(Some(Box::new(done))));
    for (i, file) in files.into_iter().enumerate() {
        let Ok(reader) = web_sys::FileReader::new() else {
            problem.set(Some("this browser cannot read files".into()));
            return;
        };
        let r = reader.clone();
        let file_name = file.name();
        let (texts, done) = (texts.clone(), done.clone());
        let onload =
            wasm_bindgen::closure::Closure::once_into_js(move || match r.result().ok().and_then(|v| v.as_string()) {
                Some(t) => {
                    let all = {
                        let mut v = texts.borrow_mut();
                        if let Some(slot) = v.get_mut(i) {
                            *slot = Some((file_name, t));
                        }
                        v.iter().all(Option::is_some).then(|| v.iter().flatten().cloned().collect::<Vec<_>>())
                    };
                    if let Some(all) = all
                        && let Some(f) = done.borrow_mut().take()
                    {
                        problem.set(None);
                        f(all);
                    }
                }
                None => problem.set(Some(format!("{file_name}: the file is not text"))),
            });
        reader.set_onload(Some(onload.unchecked_ref()));
        if reader.read_as_text(&file).is_err() {
            problem.set(Some("the browser could not read the file".into()));
        }
    }
}

/// Of several files opened together, the one to show in the text area: the first that is a launch
/// (not a DeepSpeed JSON or a model's config.json), else the first. The others are read with it.
fn main_file(files: &[(String, String)]) -> usize {
    files
        .iter()
        .position(|(n, t)| !matches!(launch::detect(t, Some(n)), Ok(Format::DeepSpeed | Format::HfConfig) | Err(_)))
        .unwrap_or(0)
}

/// A number with its exact value in `data-value` (tests compare it with the CLI's JSON).
fn number(text: String, exact: f64) -> impl IntoView {
    view! { <span class="num" data-value=exact.to_string()>{text}</span> }
}

/// The search for the best layout of a file's run, in time slices.
struct BestTask {
    search: Search,
    estimate: Estimate,
}

impl Sliced for BestTask {
    type Output = Result<Option<BestForFile>, String>;
    fn step(&mut self, units: usize) -> bool {
        self.search.step(units)
    }
    fn progress(&self) -> (u64, u64) {
        self.search.progress()
    }
    fn finish(self) -> Self::Output {
        best::best(&self.estimate, &self.search.result()).map_err(|e| e.to_string())
    }
}

/// The launch formats the best layout can be written in, with the label of each.
const TARGETS: [(Target, &str); 4] = [
    (Target::Megatron, "Megatron-LM flags (shell script)"),
    (Target::Nemo, "NeMo / Megatron-Bridge YAML"),
    (Target::Torchtitan, "torchtitan TOML"),
    (Target::MaxText, "MaxText command line"),
];

/// "The best layout for this run": finds it (a search over the file's scenario, in slices), compares
/// it with the file's own layout and writes it back as a launch file to copy or download.
#[component]
fn BestLayout(launch: Launch, estimate: Estimate, sources: Vec<(Option<String>, String)>) -> impl IntoView {
    let (found, set_found) = signal(None::<Result<Option<BestForFile>, String>>);
    let (progress, set_progress) = signal(None::<(u64, u64)>);
    let task: StoredValue<Option<TaskHandle>, LocalStorage> = StoredValue::new_local(None);
    on_cleanup(move || {
        task.try_update_value(|t| {
            if let Some(t) = t.take() {
                t.cancel();
            }
        });
    });
    let default_target = Target::of_format(launch.format).unwrap_or(Target::Megatron);
    let target = RwSignal::new(default_target);
    let est = estimate.clone();
    let start = move |_| {
        let s = &est.scenario;
        let hw =
            match launch::hardware(&est.system_id, s.options.hardware.precision, s.options.hardware.measured_ceiling) {
                Ok((_, hw, _)) => hw,
                Err(e) => return set_found.set(Some(Err(e.to_string()))),
            };
        let search =
            best::search(&s.workload, &hw, &s.options, best::strategy_for(s), s.devices, s.layout.global_batch, 1);
        let search = match search {
            Ok(x) => x,
            Err(e) => return set_found.set(Some(Err(e.to_string()))),
        };
        set_found.set(None);
        set_progress.set(Some((0, 1)));
        let h = spawn_sliced(
            BestTask { search, estimate: est.clone() },
            move |p| set_progress.set(Some(p)),
            move |out| {
                set_progress.set(None);
                set_found.set(Some(out));
            },
        );
        task.set_value(Some(h));
    };
    let written = Memo::new(move |_| {
        let Some(Ok(Some(b))) = found.get() else { return None };
        let files: Vec<Source<'_>> = sources.iter().map(|(n, t)| Source { name: n.as_deref(), text: t }).collect();
        Some(b.emit(target.get(), &files, &launch).map_err(|e| e.to_string()))
    });
    // What Copy or Download did, said beside the buttons (a browser may refuse either).
    let action = RwSignal::new(None::<String>);
    let copy = move |_| {
        let Some(Ok(e)) = written.get_untracked() else { return };
        // The asynchronous Clipboard API where the page may use it (a secure context); elsewhere the
        // text stays selectable in the box below, and the status says so.
        let refused =
            "the browser does not let this page write to the clipboard here: select the text below and copy it";
        let nav = web_sys::window().map(|w| w.navigator());
        let promise = nav
            .and_then(|nav| js_sys::Reflect::get(&nav, &"clipboard".into()).ok().map(|cb| (nav, cb)))
            .and_then(|(_, cb)| {
                let f = js_sys::Reflect::get(&cb, &"writeText".into()).ok()?;
                let f = f.dyn_ref::<js_sys::Function>()?.clone();
                f.call1(&cb, &e.text.as_str().into()).ok()?.dyn_into::<js_sys::Promise>().ok()
            });
        let Some(promise) = promise else { return action.set(Some(refused.into())) };
        wasm_bindgen_futures::spawn_local(async move {
            let done = wasm_bindgen_futures::JsFuture::from(promise).await;
            action.set(Some(if done.is_ok() { "copied to the clipboard".into() } else { refused.into() }));
        });
    };
    let download = move |_| {
        if let Some(Ok(e)) = written.get_untracked() {
            action.set(Some(match crate::download::download_text(&e.file_name, "text/plain", &e.text) {
                Ok(()) => format!("{} downloaded", e.file_name),
                Err(err) => format!("the download failed: {}", err.0),
            }));
        }
    };
    let result = move || match found.get() {
        None => None,
        Some(Err(msg)) => Some(view! { <p class="launch-error" role="alert">{msg}</p> }.into_any()),
        Some(Ok(None)) => {
            Some(view! { <p class="launch-best-none">"No layout of this run fits in memory."</p> }.into_any())
        }
        Some(Ok(Some(b))) => {
            let y = b.layout;
            let line = format!(
                "tp {} · pp {}{} · cp {} · dp {} · mbs {}{}: {} s per step, {} your layout's throughput",
                y.tp,
                y.pp,
                if b.options.interleave > 1 { format!(" (vpp {})", b.options.interleave) } else { String::new() },
                y.cp,
                y.dp,
                y.mbs,
                y.expert_degrees_text(&b.scenario.workload),
                fmt::seconds(b.time_per_step_s),
                if b.speedup > 1.0 + 1e-9 { format!("{:.2}×", b.speedup) } else { "the same as".to_string() },
            );
            let options = TARGETS
                .iter()
                .map(|(t, label)| view! { <option value=t.as_str() selected=*t == target.get_untracked()>{*label}</option> })
                .collect_view();
            Some(
                view! {
                    <p class="launch-best-line" data-speedup=b.speedup.to_string()>{line}</p>
                    <div class="launch-best-actions">
                        <label>
                            "Write it as"
                            <select
                                class="launch-emit-format"
                                on:change=move |ev| {
                                    if let Ok(t) = Target::parse(&event_target_value(&ev)) {
                                        target.set(t);
                                    }
                                }
                            >
                                {options}
                            </select>
                        </label>
                        <button type="button" class="launch-copy" on:click=copy>"Copy"</button>
                        <button type="button" class="launch-download" on:click=download>"Download"</button>
                        <span class="muted launch-action" role="status">{move || action.get()}</span>
                    </div>
                    {move || match written.get() {
                        Some(Ok(e)) => {
                            let notes = e.notes.iter().map(|n| view! { <li>{n.text.clone()}</li> }).collect_view();
                            let how = if e.in_place {
                                format!("{}: your file with the layout's values changed, every other line kept", e.file_name)
                            } else {
                                format!("{}: a fresh file", e.file_name)
                            };
                            view! {
                                <p class="muted launch-emitted-name">{how}</p>
                                <label class="visually-hidden" for="launch-emitted">"The launch file"</label>
                                <textarea id="launch-emitted" class="launch-emitted" readonly spellcheck="false" prop:value=e.text.clone()></textarea>
                                <ul class="launch-emit-notes">{notes}</ul>
                            }
                            .into_any()
                        }
                        Some(Err(msg)) => view! { <p class="launch-error" role="alert">{msg}</p> }.into_any(),
                        None => ().into_any(),
                    }}
                }
                .into_any(),
            )
        }
    };
    view! {
        <h3>"The best layout for this run"</h3>
        <p>
            <button type="button" class="launch-find-best" on:click=start disabled=move || progress.get().is_some()>
                "Find the best layout"
            </button>
            " "
            <span class="muted">
                {move || match progress.get() {
                    Some((done, total)) => format!("searching: {done} of {total} layouts"),
                    None => "searches every layout of this model, system, device count and batch with the file's switches"
                        .to_string(),
                }}
            </span>
        </p>
        <div class="launch-best" aria-live="polite">{result}</div>
    }
}

/// What the panel shows for one evaluated file.
#[component]
fn EstimateView(launch: Launch, estimate: Estimate, sources: Vec<(Option<String>, String)>) -> impl IntoView {
    let best_launch = launch.clone();
    let best_estimate = estimate.clone();
    let ex = use_context::<Explorer>().expect("explorer state");
    let e = estimate;
    let s = e.scenario.clone();
    let (y, o, ev) = (e.layout, s.options, e.evaluation.clone());
    let t = ev.totals;
    let m = ev.memory;
    let fits = e.memory.fits;
    let config = format!("{} · {}", e.config_line(), o.hardware.precision);
    let model = e.model_line();
    let time_parts = TimePart::shown([&t])
        .into_iter()
        .map(|p| {
            let v = p.of(&t);
            view! { <tr data-part=p.key()><td>{p.label()}</td><td class="num">{number(fmt::seconds(v), v)}</td></tr> }
        })
        .collect_view();
    // Host time inside the time parts, from core's one list (what each holds as its tooltip).
    let host_parts = ev
        .breakdown
        .host_parts()
        .map(|(p, v)| {
            view! { <tr data-host-part=p.key() title=p.description()><td>{p.label()}</td><td class="num">{number(fmt::seconds(v), v)}</td></tr> }
        })
        .collect_view();
    let memory_parts = m
        .parts()
        .map(|(p, v)| view! { <tr><td>{p.key()}</td><td class="num">{number(fmt::fixed(v, 2), v)}</td></tr> })
        .collect_view();
    let unused_count = launch.unused.len();
    let unused = launch
        .unused
        .iter()
        .map(|u| {
            view! {
                <tr data-key=u.key.clone()>
                    <td><code>{u.key.clone()}</code></td>
                    <td><code>{u.value.clone()}</code></td>
                    <td>{u.why.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let notes = s
        .assumptions
        .iter()
        .chain(&launch.notes)
        .chain(&e.system_notes)
        .map(|n| view! { <li>{n.text.clone()}</li> })
        .collect_view();
    // The file's scenario in the Explorer: its catalog twin, system, devices, batch and switches.
    let model_id = launch::catalog_model(&s.workload);
    let search_model = model_id.map(str::to_string);
    let (system_id, devices, batch) = (e.system_id.clone(), s.devices, y.global_batch);
    let ext = Mode::from(o).ext_text();
    let search = move |_| {
        let Some(model) = search_model.clone() else { return };
        let (system, ext) = (system_id.clone(), ext.clone());
        ex.url.update(true, |q| {
            // The file's scenario, and the page's defaults for what it does not say (the
            // system's own domain, the model's budget): nothing of the scenario shown before.
            let mut f = keys::page_default();
            f.model = model;
            f.system = system;
            f.gpus = devices.to_string();
            f.batch = batch.to_string();
            f.strategies = if y.cp > 1 { "2d-seqp" } else { "1d,2d-seqp" }.to_string();
            f.top = keys::fields_from_query(q).top;
            q.set(MODE_KEY, "extended");
            keys::write_scenario(q, &f);
            // Nor the price the page had (the file names none), nor ranking by its cost.
            q.remove(fmperf_app::run_cost::PRICE_KEY);
            q.remove(fmperf_app::run_cost::RANK_KEY);
            match &ext {
                Some(t) => q.set(EXT_KEY, t),
                None => q.remove(EXT_KEY),
            }
        });
    };
    let search_note = match model_id {
        Some(id) => format!("Searches {id} on {} × {devices} with the file's batch and switches.", e.system_id),
        None => "The file's model is not in the catalog: add it on the Catalog page to search it.".to_string(),
    };
    view! {
        <div class="launch-result" data-format=launch.format.as_str() data-fits=fits.as_str()>
            <p><strong>{launch.format.title()}</strong> " · " {model}</p>
            <p>{format!("{} × {} devices", e.system_id, s.devices)}</p>
            <p class="launch-config">{config}</p>
            <dl class="launch-headline">
                <dt>"Time per step [s]"</dt>
                <dd data-metric="time_per_step_s">{number(fmt::seconds(t.t), t.t)}</dd>
                <dt>"Tokens/s"</dt>
                <dd data-metric="tokens_per_s">{number(fmt::count(ev.tokens_per_s.round() as u64), ev.tokens_per_s)}</dd>
                <dt>"MFU"</dt>
                <dd data-metric="mfu">{number(fmt::percent(e.mfu), e.mfu)}</dd>
                <dt>"Memory per device [GB] (device level)"</dt>
                <dd data-metric="memory_gb">
                    "needs "
                    {number(fmt::gb(e.memory.predicted_gb), e.memory.predicted_gb)}
                    {fmperf_app::results::memory_tail(e.memory.predicted_gb, e.memory.capacity_gb, (e.memory.band_gb, fits))}
                </dd>
            </dl>
            <div class="row">
                <table class="launch-time"><thead><tr><th>"Time part"</th><th>"[s]"</th></tr></thead><tbody>{time_parts}</tbody></table>
                <table class="launch-host"><thead><tr><th>"Host work (hidden behind the GPU unless host-bound)"</th><th>"[s]"</th></tr></thead><tbody>{host_parts}</tbody></table>
                <table class="launch-memory"><thead><tr><th>"Memory part"</th><th>"[GB]"</th></tr></thead><tbody>{memory_parts}</tbody></table>
            </div>
            <p>
                <button type="button" class="launch-search" disabled=model_id.is_none() on:click=search>
                    "Search this scenario in the Explorer"
                </button>
                " "
                <span class="muted">{search_note}</span>
            </p>
            <BestLayout launch=best_launch estimate=best_estimate sources=sources />
            <h3>{format!("Not used by fmperf ({unused_count})")}</h3>
            <div class="launch-unused-wrap" tabindex="0" role="region" aria-label="Flags and keys not used by fmperf">
                <table class="launch-unused">
                    <thead><tr><th>"Flag or key"</th><th>"Value"</th><th>"Why"</th></tr></thead>
                    <tbody>{unused}</tbody>
                </table>
            </div>
            <h3>"Read with a rule"</h3>
            <ul class="launch-notes">{notes}</ul>
        </div>
    }
}

/// The "Your run" panel.
#[component]
pub fn LaunchPanel() -> impl IntoView {
    let text = RwSignal::new(String::new());
    let name = RwSignal::new(None::<String>);
    // Files read with the one in the text area (a DeepSpeed JSON, the model's config.json).
    let companions = RwSignal::new(Vec::<(String, String)>::new());
    // The script's positional parameters ($1 $2 …), separated by spaces.
    let args = RwSignal::new(String::new());
    let system = RwSignal::new(String::new());
    let gpus = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
    // Every file read, the text area's first, as (name, text).
    let sources = Memo::new(move |_| {
        let mut v = vec![(name.get(), text.get())];
        v.extend(companions.get().into_iter().map(|(n, t)| (Some(n), t)));
        v
    });
    let result = Memo::new(move |_| {
        let t = text.get();
        if t.trim().is_empty() {
            return None;
        }
        let gpus_text = gpus.get();
        let gpus = match gpus_text.trim() {
            "" => None,
            g => match g.parse::<u64>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Some(Err(format!("devices = {g}: must be a positive integer"))),
            },
        };
        let sys = system.get();
        let o =
            Overrides { system: Some(sys.trim().to_string()).filter(|s| !s.is_empty()), gpus, ..Overrides::default() };
        let all = sources.get();
        let src: Vec<Source<'_>> = all.iter().map(|(n, t)| Source { name: n.as_deref(), text: t }).collect();
        let words: Vec<String> = args.get().split_whitespace().map(str::to_string).collect();
        Some(launch::estimate_files(&src, &words, &o).map(|(l, e)| (l, e, all.clone())).map_err(|e| e.to_string()))
    });
    let on_file = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let files: Vec<web_sys::File> =
            input.files().map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect()).unwrap_or_default();
        if !files.is_empty() {
            read_files(files, problem, move |mut all| {
                let main = all.remove(main_file(&all));
                name.set(Some(main.0));
                text.set(main.1);
                companions.set(all);
            });
        }
        input.set_value("");
    };
    let companion_list = move || {
        let list = companions.get();
        (!list.is_empty()).then(|| {
            let items = list
                .iter()
                .enumerate()
                .map(|(i, (n, _))| {
                    let label = format!("Do not read {n}");
                    view! {
                        <li data-file=n.clone()>
                            {n.clone()}
                            <button
                                type="button"
                                class="launch-companion-remove"
                                aria-label=label
                                on:click=move |_| companions.update(|v| {
                                    if i < v.len() {
                                        v.remove(i);
                                    }
                                })
                            >
                                "×"
                            </button>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <p class="muted">"Read together with the file above:"</p>
                <ul class="launch-companions">{items}</ul>
            }
        })
    };
    let shown = move || match result.get() {
        None => view! {
            <p class="muted">"Paste a launch script or configuration above, or open its file."</p>
        }
        .into_any(),
        Some(Err(msg)) => view! { <p class="launch-error" role="alert">{msg}</p> }.into_any(),
        Some(Ok((l, e, all))) => view! { <EstimateView launch=l estimate=e sources=all /> }.into_any(),
    };
    view! {
        <style>{CSS}</style>
        <div class="launch-import">
            <p class="muted">
                "Paste or open a launch script or Slurm job (Megatron-LM, Megatron-DeepSpeed, a Hugging Face Trainer or \
                 DeepSpeed launch), a NeMo / Megatron-Bridge YAML, a torchtitan TOML or a MaxText config; open several \
                 files at once to read them together (a script and its ds_config.json, a TOML and the model's \
                 config.json). fmperf evaluates exactly that configuration in extended mode with the file's own \
                 switches, as " <code>"fmperf estimate --from FILE --from FILE2 -- ARGS"</code> " does."
            </p>
            <label for="launch-text">"Launch file"</label>
            <textarea
                id="launch-text"
                class="launch-text"
                spellcheck="false"
                prop:value=move || text.get()
                on:input=move |ev| {
                    name.set(None);
                    text.set(event_target_value(&ev));
                }
            ></textarea>
            {companion_list}
            <div class="launch-inputs">
                <label class="button file-button">
                    "Open files…"
                    <input
                        type="file"
                        multiple
                        class="launch-file"
                        accept=".sh,.bash,.sbatch,.slurm,.txt,.yaml,.yml,.toml,.json"
                        on:change=on_file
                    />
                </label>
                <label>
                    "Script arguments ($1 $2 …)"
                    <input
                        type="text"
                        class="launch-args"
                        placeholder="e.g. dsw A3B 1 8"
                        prop:value=move || args.get()
                        on:input=move |ev| args.set(event_target_value(&ev))
                    />
                </label>
                <label>
                    "System (catalog id; default: the file's)"
                    <input
                        type="text"
                        class="launch-system"
                        placeholder="e.g. nvidia_h100_sxm5_80gb"
                        prop:value=move || system.get()
                        on:input=move |ev| system.set(event_target_value(&ev))
                    />
                </label>
                <label>
                    "Devices (default: the file's)"
                    <input
                        type="text"
                        inputmode="numeric"
                        class="launch-gpus"
                        prop:value=move || gpus.get()
                        on:input=move |ev| gpus.set(event_target_value(&ev))
                    />
                </label>
            </div>
            {move || problem.get().map(|p| view! { <p class="launch-error" role="alert">{p}</p> })}
            <div class="launch-output" aria-live="polite">{shown}</div>
        </div>
    }
}
