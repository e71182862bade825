//! "Your run": paste or open a launch file (Megatron-LM script, NeMo / Megatron-Bridge YAML,
//! torchtitan TOML, Hugging Face `config.json`) and see exactly that configuration evaluated,
//! the same numbers as `fmperf estimate --from FILE` (both print
//! [`fmperf_launch::Estimate::to_json`]'s values), with every flag fmperf does not use and
//! why. A button searches the file's scenario in the Explorer (its catalog model, system, devices,
//! batch and switches).
//!
//! The text stays in the page (not in the URL: scripts are long); the system and device count
//! can be given here when the file does not name them.

use fmperf_core::mode::ModelMode;
use fmperf_launch::{self as launch, Estimate, Launch, Overrides};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::fmt;
use super::keys;
use super::state::Explorer;
use crate::mode_panel::{EXT_KEY, MODE_KEY};

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
.launch-import table.launch-unused td { overflow-wrap: anywhere; }
";

/// Largest file read [bytes] (launch files are a few kB).
const MAX_FILE_BYTES: f64 = 1_000_000.0;

/// Reads a chosen file's text into `text` (and its name into `name`), or an error into `problem`.
fn read_file(
    file: web_sys::File,
    name: RwSignal<Option<String>>,
    text: RwSignal<String>,
    problem: RwSignal<Option<String>>,
) {
    if file.size() > MAX_FILE_BYTES {
        problem.set(Some(format!(
            "{}: the file has {} bytes; at most {MAX_FILE_BYTES} are read",
            file.name(),
            file.size()
        )));
        return;
    }
    let Ok(reader) = web_sys::FileReader::new() else {
        problem.set(Some("this browser cannot read files".into()));
        return;
    };
    let r = reader.clone();
    let file_name = file.name();
    let onload =
        wasm_bindgen::closure::Closure::once_into_js(move || match r.result().ok().and_then(|v| v.as_string()) {
            Some(t) => {
                problem.set(None);
                name.set(Some(file_name));
                text.set(t);
            }
            None => problem.set(Some("the file is not text".into())),
        });
    reader.set_onload(Some(onload.unchecked_ref()));
    if reader.read_as_text(&file).is_err() {
        problem.set(Some("the browser could not read the file".into()));
    }
}

/// A number with its exact value in `data-value` (tests compare it with the CLI's JSON).
fn number(text: String, exact: f64) -> impl IntoView {
    view! { <span class="num" data-value=exact.to_string()>{text}</span> }
}

/// What the panel shows for one evaluated file.
#[component]
fn EstimateView(launch: Launch, estimate: Estimate) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let e = estimate;
    let s = e.scenario.clone();
    let (y, o, ev) = (e.layout, s.options, e.evaluation.clone());
    let t = ev.totals;
    let m = ev.memory;
    let fits = e.memory.fits;
    let config = format!("{} · {}", e.config_line(), o.hardware.precision);
    let model = e.model_line();
    let time_parts = [
        ("compute", t.t_comp),
        ("memory-bound", t.t_mem),
        ("TP/CP comm", t.t_tp_comm),
        ("DP comm", t.t_dp_comm),
        ("PP comm", t.t_pp_comm),
        ("bubble", t.t_bubble),
    ]
    .map(|(k, v)| view! { <tr><td>{k}</td><td class="num">{number(fmt::seconds(v), v)}</td></tr> })
    .collect_view();
    let memory_parts = [
        ("weights", m.weights_gb),
        ("gradients", m.gradients_gb),
        ("optimizer", m.optimizer_gb),
        ("activations", m.activations_gb),
        ("overhead", m.overhead_gb),
    ]
    .map(|(k, v)| view! { <tr><td>{k}</td><td class="num">{number(fmt::fixed(v, 2), v)}</td></tr> })
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
        .map(|n| view! { <li>{n.clone()}</li> })
        .collect_view();
    // The file's scenario in the Explorer: its catalog twin, system, devices, batch and switches.
    let model_id = launch::catalog_model(&s.workload);
    let search_model = model_id.map(str::to_string);
    let (system_id, devices, batch) = (e.system_id.clone(), s.devices, y.global_batch);
    let ext = ModelMode::Extended(o).ext_text();
    let search = move |_| {
        let Some(model) = search_model.clone() else { return };
        let (system, ext) = (system_id.clone(), ext.clone());
        ex.url.update(true, |q| {
            q.set(keys::MODEL, &model);
            q.set(keys::SYSTEM, &system);
            q.remove(keys::DOMAIN);
            q.set(keys::GPUS, &devices.to_string());
            q.set(keys::BATCH, &batch.to_string());
            q.set(keys::STRATEGIES, if y.cp > 1 { "2d-seqp" } else { "1d,2d-seqp" });
            q.set(MODE_KEY, "extended");
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
        <div class="launch-result" data-format=launch.format.as_str() data-fits=fits>
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
                    {format!(
                        " ± {} of {} GB: {}",
                        fmt::gb(e.memory.band_gb),
                        fmt::gb(e.memory.capacity_gb),
                        match fits {
                            "yes" => "fits",
                            "tight" => "may not fit (within the error band of the capacity)",
                            _ => "does not fit",
                        }
                    )}
                </dd>
            </dl>
            <div class="row">
                <table class="launch-time"><thead><tr><th>"Time part"</th><th>"[s]"</th></tr></thead><tbody>{time_parts}</tbody></table>
                <table class="launch-memory"><thead><tr><th>"Memory part"</th><th>"[GB]"</th></tr></thead><tbody>{memory_parts}</tbody></table>
            </div>
            <p>
                <button type="button" class="launch-search" disabled=model_id.is_none() on:click=search>
                    "Search this scenario in the Explorer"
                </button>
                " "
                <span class="muted">{search_note}</span>
            </p>
            <h3>{format!("Not used by fmperf ({unused_count})")}</h3>
            <div class="launch-unused-wrap">
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
    let system = RwSignal::new(String::new());
    let gpus = RwSignal::new(String::new());
    let problem = RwSignal::new(None::<String>);
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
        Some(launch::estimate_text(&t, name.get().as_deref(), &o).map_err(|e| e.to_string()))
    });
    let on_file = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            read_file(file, name, text, problem);
        }
        input.set_value("");
    };
    let shown = move || match result.get() {
        None => view! {
            <p class="muted">"Paste a launch script or configuration above, or open its file."</p>
        }
        .into_any(),
        Some(Err(msg)) => view! { <p class="launch-error" role="alert">{msg}</p> }.into_any(),
        Some(Ok((l, e))) => view! { <EstimateView launch=l estimate=e /> }.into_any(),
    };
    view! {
        <style>{CSS}</style>
        <div class="launch-import">
            <p class="muted">
                "Paste or open a Megatron-LM launch script (pretrain_gpt.py flags), a NeMo / Megatron-Bridge YAML or a \
                 torchtitan TOML: fmperf evaluates exactly that configuration in extended mode with the file's own \
                 switches, as " <code>"fmperf estimate --from FILE"</code> " does."
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
            <div class="launch-inputs">
                <label class="button file-button">
                    "Open a file…"
                    <input type="file" class="launch-file" accept=".sh,.bash,.txt,.yaml,.yml,.toml,.json" on:change=on_file />
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
