//! Every run with its configuration, both numbers and both modes' errors; the skipped runs with
//! their reasons; CSV and JSON downloads (the JSON is what `fmperf validate --format json` prints,
//! one report per mode).

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{RowResult, csv, short_source};
use fmperf_core::vocab::{Note, NoteKind, NoteList};
use leptos::prelude::*;

use super::{Reports, error_cell};
use crate::download::download_text;

fn value(x: Option<f64>) -> String {
    match x {
        None => "–".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// The predicted value and error cells of one mode.
fn mode_cells(r: &RowResult, mode: ModeKind, shown: Memo<ModeKind>) -> impl IntoView + use<> {
    let (err, class) = error_cell(r.error);
    let shown_class = move || if shown.get() == mode { "shown" } else { "" };
    view! {
        <td class=move || format!("num {}", shown_class()) data-mode=mode.as_str() data-col="predicted">
            {value(r.predicted)}
        </td>
        <td class=move || format!("num err {class} {}", shown_class()) data-mode=mode.as_str() data-col="error">
            {err}
        </td>
    }
}

/// The table of every run.
#[component]
pub fn RowsCard(reports: Reports, mode: Memo<ModeKind>) -> impl IntoView {
    let (published, realistic) = (reports.published(), reports.realistic());
    let (reference_mode, extended_mode) = (published.mode, realistic.mode);
    let body = realistic
        .rows
        .iter()
        .zip(&published.rows)
        .map(|(e, r)| {
            let mut notes: Vec<Note> = e.assumptions.clone();
            if let Some(why) = &e.reason {
                notes.note(NoteKind::Skipped, format!("extended: {why}"));
            }
            if let Some(why) = &r.reason {
                notes.note(NoteKind::Skipped, format!("reference: {why}"));
            }
            view! {
                <tr data-id=e.id.clone() data-skipped=e.skipped.to_string()>
                    <td class="mono" title=e.source.clone()>{e.id.clone()}</td>
                    <td class="num" data-col="measured">{value(e.measured)}</td>
                    {mode_cells(r, reference_mode, mode)}
                    {mode_cells(e, extended_mode, mode)}
                    <td class="metric">{e.metric.clone().unwrap_or_else(|| "–".to_string())}</td>
                    <td class="src">{short_source(&e.source).to_string()}</td>
                    <td class="mono">{e.hardware.clone().unwrap_or_default()}</td>
                    <td class="mono config">{e.config.clone().unwrap_or_else(|| "–".to_string())}</td>
                    <td class="notes">{notes.join("; ")}</td>
                </tr>
            }
        })
        .collect_view();
    let for_json = reports.clone();
    let download_json = move |_| {
        // One key per mode, named as the CLI's `--mode` names it ("reference", "extended").
        let by_mode: serde_json::Map<String, serde_json::Value> = ModeKind::ALL
            .into_iter()
            .map(|m| (m.as_str().to_string(), serde_json::to_value(&*for_json.of(m)).unwrap_or_default()))
            .collect();
        let text = serde_json::Value::Object(by_mode).to_string();
        let _ = download_text("fmperf-validation.json", "application/json", &text);
    };
    let for_csv = reports.clone();
    let download_csv = move |_| {
        let reports = ModeKind::ALL.map(|m| for_csv.of(m));
        let text = csv(&reports.iter().map(|r| &**r).collect::<Vec<_>>());
        let _ = download_text("fmperf-validation.csv", "text/csv", &text);
    };
    view! {
        <section class="card">
            <div class="row">
                <h2>"Every run"</h2>
                <span class="spacer"></span>
                <button type="button" id="validation-csv" on:click=download_csv>
                    "Download CSV"
                </button>
                <button type="button" id="validation-json" on:click=download_json>
                    "Download JSON"
                </button>
            </div>
            <p class="muted small">
                "Measured and predicted values are in the run's own metric (column metric). Configuration: layers L, width h, heads a/KV heads, MLP width f, sequence s · tensor, pipeline, data and context parallel degrees · global batch G and micro-batch [sequences] · precision · recomputation · ZeRO stage. Notes: the rule used where the source is silent, and why a mode could not evaluate the run."
            </p>
            <div class="table-wrap rows-wrap" tabindex="0">
                <table class="validation-rows" id="validation-rows">
                    <thead>
                        <tr>
                            <th rowspan="2">"run"</th>
                            <th rowspan="2" class="num">"measured"</th>
                            <th colspan="2" class="group">{reference_mode.label()}</th>
                            <th colspan="2" class="group">{extended_mode.label()}</th>
                            <th rowspan="2">"metric [unit]"</th>
                            <th rowspan="2">"source"</th>
                            <th rowspan="2">"hardware"</th>
                            <th rowspan="2">"configuration"</th>
                            <th rowspan="2">"notes"</th>
                        </tr>
                        <tr>
                            <th class="num">"predicted"</th>
                            <th class="num">"error"</th>
                            <th class="num">"predicted"</th>
                            <th class="num">"error"</th>
                        </tr>
                    </thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
        </section>
    }
}

/// The runs a mode could not evaluate, with the reason.
#[component]
pub fn SkippedCard(reports: Reports) -> impl IntoView {
    let list = |mode: ModeKind| {
        let r = reports.of(mode);
        let items = r
            .rows
            .iter()
            .filter(|x| x.skipped)
            .map(|x| {
                view! {
                    <li data-id=x.id.clone()>
                        <code>{x.id.clone()}</code>
                        ": "
                        {x.reason.clone().unwrap_or_default()}
                    </li>
                }
            })
            .collect_view();
        let n = r.summary.overall.skipped;
        view! {
            <div class="skipped" data-mode=mode.as_str()>
                <h3>{format!("{} ({n} runs)", mode.label())}</h3>
                <ul>{items}</ul>
            </div>
        }
    };
    view! {
        <section class="card" id="validation-skipped">
            <h2>"Runs not evaluated, and why"</h2>
            {super::shown_first().into_iter().map(list).collect_view()}
        </section>
    }
}
