//! "Your measured run": paste the log lines your framework printed (Megatron-LM, NeMo, torchtitan,
//! MaxText, Hugging Face Trainer, DeepSpeed, nanotron, nanoGPT, nanochat) or type a figure you measured, for the
//! selected configuration of the scenario; fmperf fits the constants of your stack, says what
//! changed, and shows that configuration and the scenario's best uncalibrated and calibrated side
//! by side. The entries and the calibration stay in browser storage
//! ([`fmperf_app::calibration::STORAGE_KEY`]); the calibration exports as the JSON
//! `fmperf calibrate` writes (`fmperf search --calibration FILE` reads it) and imports back.
//!
//! Everything decided from text is in [`fmperf_app::calibration`]; this file keeps the DOM.

use fmperf_app::calibration::{self as cal_app, Entries, FIGURES, Saved};
use fmperf_core::calibrate::Calibration;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::search::code::format_candidate;
use fmperf_core::vocab::{Note, NoteList};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::selection::Selected;
use super::state::{Explorer, Task};
use crate::runner::{TaskHandle, spawn_sliced};

/// The panel's styles.
const CSS: &str = "
.calibrate textarea { width: 100%; min-height: 4.5rem; font-family: monospace; font-size: 0.85rem; }
.calibrate .cal-inputs { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: end; margin: 0.5rem 0; }
.calibrate .cal-inputs label { display: flex; flex-direction: column; font-size: 0.85rem; gap: 0.2rem; }
.calibrate .cal-error { color: var(--bad, #b00020); }
.calibrate .cal-table-wrap { max-width: 100%; overflow-x: auto; }
.calibrate table { border-collapse: collapse; font-size: 0.9rem; margin: 0.4rem 0; }
.calibrate td, .calibrate th { padding: 0.2rem 0.8rem 0.2rem 0; text-align: left; vertical-align: top; }
.calibrate table.cal-compare { width: 100%; }
.calibrate table.cal-compare th { white-space: normal; }
.calibrate td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.calibrate table.cal-compare caption { text-align: left; overflow-wrap: anywhere; }
.calibrate .cal-actions { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin: 0.5rem 0; }
";

/// The saved entries and calibration, and a problem reading them.
fn load() -> (Entries, Option<Calibration>, Option<String>) {
    let stored = window().local_storage().ok().flatten().and_then(|s| s.get_item(cal_app::STORAGE_KEY).ok().flatten());
    match stored {
        Some(text) => Saved::read(&text),
        None => (Entries::default(), None, None),
    }
}

/// Saves the entries and the calibration; a problem in words when the browser keeps nothing.
fn save(entries: &Entries, cal: Option<&Calibration>) -> Option<String> {
    let text = Saved::text(entries, cal);
    match window().local_storage() {
        Ok(Some(s)) => s.set_item(cal_app::STORAGE_KEY, &text).err().map(|_| {
            "This browser did not keep your entries (storage full or blocked): export the calibration to keep it."
                .to_string()
        }),
        _ => Some("This browser offers no storage here: your entries last until the page closes.".to_string()),
    }
}

/// The fit: the figures of the log lines and the typed one, on the selected configuration.
fn fit(spec: &ExploreSpec, sel: &Selected, entries: &Entries) -> Result<(Calibration, Vec<Note>), String> {
    let mut notes = Vec::new();
    let from_log = if entries.log.trim().is_empty() {
        Vec::new()
    } else {
        let f = fmperf_launch::logs::read_log(&entries.log).map_err(|e| format!("Log lines: {e}"))?;
        notes.reading(format!("Read as a {} log.", f.framework));
        notes.extend(f.notes.iter().cloned());
        f.measured
    };
    let typed = entries.typed().map_err(|e| fmperf_app::words::field_message(&e))?;
    let measured = cal_app::figures(from_log, typed);
    let c = &sel.report.candidate;
    cal_app::fit(spec, c, sel.report.execution, &measured)
        .map(|cal| (cal, notes))
        .map_err(|e| fmperf_app::words::field_message(&e))
}

/// The "Your measured run" panel.
#[component]
pub fn CalibratePanel(selection: Memo<Result<Option<Selected>, String>>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let (entries0, cal0, problem0) = load();
    let entries = RwSignal::new(entries0);
    let cal = RwSignal::new(cal0);
    let problem = RwSignal::new(problem0);
    let notes = RwSignal::new(Vec::<Note>::new());
    // Nothing typed is lost: every change is saved.
    Effect::new(move |_| {
        let e = entries.get();
        let c = cal.get();
        if let Some(p) = save(&e, c.as_ref()) {
            problem.set(Some(p));
        }
    });
    let run_fit = move |_| {
        let Some(o) = ex.outcome.get_untracked() else {
            problem.set(Some("Wait for the scenario's results first.".into()));
            return;
        };
        let sel = match selection.get_untracked() {
            Ok(Some(s)) => s,
            _ => {
                problem.set(Some("Select a configuration in the results first.".into()));
                return;
            }
        };
        match entries.with_untracked(|e| fit(&o.spec, &sel, e)) {
            Ok((c, n)) => {
                problem.set(None);
                notes.set(n);
                cal.set(Some(c));
            }
            Err(msg) => problem.set(Some(msg)),
        }
    };
    // The scenario with the calibration, and the selected configuration side by side.
    let compared = Memo::new(move |_| {
        let c = cal.get()?;
        let o = ex.outcome.get()?;
        let sel = selection.get().ok().flatten()?;
        let band = fmperf_app::error_bands::band(&o.spec).and_then(|b| b.median_abs_error.filter(|_| b.runs > 0));
        Some(cal_app::compare(&o.spec, &c, &sel.report.candidate, band).map_err(|e| e.to_string()))
    });
    // The calibrated scenario's own best (a search in time slices).
    let best = RwSignal::new(None::<Result<(f64, String), String>>);
    let task = StoredValue::new_local(None::<TaskHandle>);
    Effect::new(move |_| {
        let (Some(c), Some(o)) = (cal.get(), ex.outcome.get()) else {
            best.set(None);
            return;
        };
        if let Some(h) = task.try_update_value(|t| t.take()).flatten() {
            h.cancel();
        }
        let spec = match o.spec.calibrated(&c) {
            Ok(s) => s,
            Err(e) => {
                best.set(Some(Err(e.to_string())));
                return;
            }
        };
        let Ok(search) = fmperf_core::explore::ExploreSearch::new(spec) else { return };
        best.set(None);
        let h = spawn_sliced(
            Task(search),
            |_| {},
            move |(result, _, _)| {
                let found = result.merged.first().map(|r| (r.time_per_iteration_s, format_candidate(&r.candidate)));
                best.try_set(Some(
                    found.ok_or_else(|| "No configuration fits with your stack's memory overhead.".into()),
                ));
            },
        );
        task.set_value(Some(h));
    });
    on_cleanup(move || {
        if let Some(h) = task.try_update_value(|t| t.take()).flatten() {
            h.cancel();
        }
    });
    let export = move |_| {
        if let Some(c) = cal.get_untracked()
            && let Err(e) =
                crate::download::download_text(cal_app::EXPORT_FILE, "application/json", &cal_app::export(&c))
        {
            problem.set(Some(e.to_string()));
        }
    };
    let on_import = move |ev: leptos::ev::Event| {
        let Some(input) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) else { return };
        let files: Vec<web_sys::File> =
            input.files().map(|l| (0..l.length()).filter_map(|i| l.get(i)).collect()).unwrap_or_default();
        if !files.is_empty() {
            super::launch_import::read_files(files, problem, move |all| {
                if let Some((_, text)) = all.first() {
                    match cal_app::import(text) {
                        Ok(c) => {
                            problem.set(None);
                            notes.set(Vec::new());
                            cal.set(Some(c));
                        }
                        Err(e) => problem.set(Some(fmperf_app::words::field_message(&e))),
                    }
                }
            });
        }
        input.set_value("");
    };
    let figure_options = move || {
        let current = entries.with(|e| e.choice().key);
        FIGURES
            .iter()
            .map(|f| view! { <option value=f.key selected=current == f.key>{f.label}</option> })
            .collect_view()
    };
    let measured_on = move || match selection.get() {
        Ok(Some(s)) => view! {
            <p class="muted">
                "Your run is read as the selected configuration " <code>{format_candidate(&s.report.candidate)}</code>
                " of this scenario (select another row in the results to change it)."
            </p>
        }
        .into_any(),
        _ => view! { <p class="muted">"Waiting for the scenario's results…"</p> }.into_any(),
    };
    let result = move || {
        let c = cal.get()?;
        let spec_seq = ex.outcome.with(|o| o.as_ref().map(|o| o.spec.model.l)).unwrap_or(0);
        let from = format!(
            "Calibration of {} from {} on {} devices ({}).",
            c.system,
            c.from["model"].as_str().unwrap_or("a measured run"),
            c.from["devices"],
            c.from["layout"].as_str().unwrap_or("")
        );
        let table = match compared.get() {
            Some(Ok(cmp)) => {
                let rows = cal_app::rows(&cmp, spec_seq)
                    .into_iter()
                    .map(|[l, a, b]| view! { <tr><th scope="row">{l}</th><td class="num">{a}</td><td class="num">{b}</td></tr> })
                    .collect_view();
                let t_u = cmp.uncalibrated.report.time_per_step_s.to_string();
                let t_c = cmp.calibrated.report.time_per_step_s.to_string();
                view! {
                    <div class="cal-table-wrap" tabindex="0" role="region" aria-label="Uncalibrated and calibrated numbers">
                        <table class="cal-compare" data-config=cmp.code.clone() data-time-uncalibrated=t_u data-time-calibrated=t_c>
                            <caption class="muted">{format!("Configuration {}", cmp.code)}</caption>
                            <thead><tr><th scope="col">"Figure"</th><th scope="col">"Uncalibrated (shipped fit)"</th><th scope="col">"Calibrated on your run"</th></tr></thead>
                            <tbody>{rows}</tbody>
                        </table>
                    </div>
                    <p class="muted cal-coverage">
                        {if cmp.coverage.covered {
                            format!("Error band narrowed: the calibration covers this prediction ({}).", cmp.coverage.why)
                        } else {
                            format!("Error band unchanged: {}.", cmp.coverage.why)
                        }}
                    </p>
                }
                .into_any()
            }
            Some(Err(e)) => view! { <p class="cal-error" role="alert">{e}</p> }.into_any(),
            None => ().into_any(),
        };
        let uncal_best = ex.outcome.with(|o| {
            o.as_ref()
                .and_then(|o| o.result.merged.first().map(|r| (r.time_per_iteration_s, format_candidate(&r.candidate))))
        });
        let best_line = move || match (best.get(), uncal_best.clone()) {
            (Some(Ok((t, code))), Some((tu, cu))) => {
                let code_attr = code.clone();
                view! {
                <p class="cal-best" data-time-calibrated=t.to_string() data-config=code_attr>
                    "Best of the scenario: uncalibrated " <code>{cu}</code> {format!(" {} s per step; calibrated ", fmperf_app::fmt::seconds(tu))}
                    <code>{code}</code> {format!(" {} s per step.", fmperf_app::fmt::seconds(t))}
                </p>
                }
                .into_any()
            }
            (Some(Err(e)), _) => view! { <p class="cal-error">{e}</p> }.into_any(),
            _ => view! { <p class="muted cal-best-running">"Searching the scenario with your stack's constants…"</p> }
                .into_any(),
        };
        Some(view! {
            <div class="cal-result" aria-live="polite">
                <h3>"Calibrated on your run"</h3>
                <p class="cal-changed">{cal_app::changes_line(&c)}</p>
                <p class="muted">{from}</p>
                {table}
                {best_line}
                <ul class="muted cal-notes">{move || notes.get().into_iter().map(|n| view! { <li>{n.text}</li> }).collect_view()}</ul>
            </div>
        })
    };
    view! {
        <style>{CSS}</style>
        <div class="calibrate">
            <p class="muted">
                "Paste the log lines your framework printed for a run of this scenario (Megatron-LM, NeMo, torchtitan, \
                 MaxText, Hugging Face Trainer, DeepSpeed, nanotron, nanoGPT, nanochat) or type one figure you measured. fmperf fits the \
                 constants of your stack on this system (compute rate, scale-out bandwidth, memory overhead; bounded, \
                 with priors from the shipped fit) and applies them to every other layout here, as "
                <code>"fmperf search --calibration FILE"</code> " does with the exported file."
            </p>
            {measured_on}
            <label for="cal-log">"Log lines"</label>
            <textarea
                id="cal-log"
                spellcheck="false"
                placeholder="e.g. step: 20  loss: 8.29  memory: 59.18GiB(74.73%)  tps: 5,902  tflops: 341.84  mfu: 34.56%"
                prop:value=move || entries.with(|e| e.log.clone())
                on:input=move |ev| entries.update(|e| e.log = event_target_value(&ev))
            ></textarea>
            <div class="cal-inputs">
                <label>
                    "Or a figure you measured"
                    <select id="cal-figure" on:change=move |ev| entries.update(|e| e.figure = event_target_value(&ev))>
                        {figure_options}
                    </select>
                </label>
                <label>
                    "Value"
                    <input
                        id="cal-value"
                        type="text"
                        inputmode="decimal"
                        prop:value=move || entries.with(|e| e.value.clone())
                        on:input=move |ev| entries.update(|e| e.value = event_target_value(&ev))
                    />
                </label>
                <button type="button" id="cal-fit" on:click=run_fit>"Calibrate"</button>
            </div>
            {move || problem.get().map(|p| view! { <p class="cal-error" role="alert">{p}</p> })}
            {result}
            <div class="cal-actions">
                <button type="button" id="cal-export" disabled=move || cal.with(|c| c.is_none()) on:click=export>
                    "Export calibration (JSON)"
                </button>
                <label class="button file-button">
                    "Import calibration…"
                    <input type="file" class="cal-import" accept=".json,application/json" on:change=on_import />
                </label>
                <button
                    type="button"
                    id="cal-clear"
                    disabled=move || cal.with(|c| c.is_none())
                    on:click=move |_| {
                        notes.set(Vec::new());
                        cal.set(None);
                    }
                >
                    "Clear calibration"
                </button>
            </div>
        </div>
    }
}
