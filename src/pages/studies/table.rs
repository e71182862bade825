//! The points of a sweep as a table, with CSV and JSON Lines downloads (the same text as
//! `fmperf sweep --format csv|json`) and the equivalent command line.

use std::sync::Arc;

use fmperf_core::resolve::UserEntries;
use fmperf_core::sweep::{Metric, PointResult, SweepResult, SweepText, export};
use fmperf_core::vocab::Note;
use leptos::prelude::*;

use super::keys::SweepSource;
use super::state::Studies;
use crate::download::download_text;
use crate::mode_panel::ModeBadge;

/// Rows drawn at most (the downloads hold every point).
const MAX_ROWS: usize = 400;

/// `v` with `decimals` decimals as the rest of the page writes figures; `–` when missing.
fn fixed(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "–".to_string(), |x| fmperf_app::fmt::fixed(x, decimals))
}

/// Days with 2 decimals below 100, 1 above.
fn days(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => fixed(v, 1),
        _ => fixed(v, 2),
    }
}

/// One row; a point without a configuration has its reason across the figure columns.
fn row(p: &PointResult) -> impl IntoView + use<> {
    let values = p.values.iter().map(|v| view! { <td class="num">{v.to_string()}</td> }).collect_view();
    let status = p.status.as_str();
    let figures = match p.best.as_ref() {
        Some(b) => {
            let c = &b.ranked.candidate;
            let config = format!("dp {} · tp {}×{} · pp {} · mbs {}", c.dp, c.tp1, c.tp2, c.pp, c.mbs);
            view! {
                <td>{b.strategy.as_str()}</td>
                <td class="num days">{days(Metric::Days.value(p))}</td>
                <td class="num">{fixed(Metric::Throughput.value(p), 2)}</td>
                <td class="num">{fixed(Metric::IterationS.value(p), 3)}</td>
                <td class="num">{fixed(Metric::MemGb.value(p), usize::from(fmperf_app::fmt::GB_DECIMALS))}</td>
                <td class="num">{fixed(Metric::AchievedTflops.value(p), 1)}</td>
                <td class="mono">{config}</td>
            }
            .into_any()
        }
        None => view! { <td class="why" colspan="7">{p.reason.clone().unwrap_or_default()}</td> }.into_any(),
    };
    view! {
        <tr data-index=p.index.to_string() data-status=status>
            {values}
            <td class=format!("status {status}")>{status.replace('_', " ")}</td>
            {figures}
        </tr>
    }
}

/// `(name, statement)` of every system of the sweep whose architecture the reference model does not
/// describe natively (wafer-scale, dataflow, IPU, torus), in order of appearance; systems are
/// looked up among the built-in catalog and the user's own `entries`, as the sweep resolved them.
fn model_fits(r: &SweepResult, entries: &UserEntries) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for p in &r.points {
        let Ok(sys) = fmperf_core::resolve::find_system(entries, &p.labels.system_id) else { continue };
        if sys.architecture.modelled_natively() || out.iter().any(|(n, _)| *n == sys.name) {
            continue;
        }
        let fit = sys.model_fit.clone().unwrap_or_else(|| "the two-tier GPU model is an approximation for it".into());
        out.push((sys.name.clone(), format!("{} ({})", fit, sys.architecture.as_str())));
    }
    out
}

/// The table of points with downloads and the command line.
#[component]
pub fn PointsTable(result: Arc<SweepResult>) -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let axes = result.spec.axes.clone();
    let head = axes
        .iter()
        .map(|a| {
            let unit = export::axis_values_unit(a).map(|u| format!(" [{u}]")).unwrap_or_default();
            view! { <th class="num">{format!("{}{unit}", a.key.name())}</th> }
        })
        .collect_view();
    let rows = result.points.iter().take(MAX_ROWS).map(row).collect_view();
    let more = (result.points.len() > MAX_ROWS).then(|| {
        format!("Showing the first {MAX_ROWS} of {} points; the downloads hold all of them.", result.points.len())
    });
    let (stem, cli) = match st.source.get_untracked() {
        SweepSource::Preset(p, panel) => {
            (format!("fmperf-{}-{}", p.id, panel.id), super::picker::preset_cli(p, panel, &result.spec.mode))
        }
        SweepSource::Custom(_) => ("fmperf-sweep".to_string(), SweepText::from_spec(&result.spec).to_cli()),
    };
    let (error, set_error) = signal(None::<String>);
    let r1 = result.clone();
    let stem1 = stem.clone();
    let csv = move |_| {
        let text = export::to_csv(&r1.spec.axes, &r1.points, true);
        set_error.set(download_text(&format!("{stem1}.csv"), "text/csv", &text).err().map(|e| e.to_string()));
    };
    let r2 = result.clone();
    let json = move |_| {
        let text = export::to_json_lines(&r2.spec.axes, &r2.points);
        let file = format!("{stem}.jsonl");
        set_error.set(download_text(&file, "application/x-ndjson", &text).err().map(|e| e.to_string()));
    };
    let notes = {
        let mut all: Vec<Note> = Vec::new();
        for p in &result.points {
            for n in p.inputs.iter().flat_map(|i| &i.notes) {
                if !all.contains(n) {
                    all.push(n.clone());
                }
            }
        }
        all
    };
    let fits = st.entries.with_untracked(|u| model_fits(&result, u));
    let fits_view = (!fits.is_empty()).then(|| {
        let items =
            fits.into_iter().map(|(name, fit)| view! { <li><strong>{name}</strong> ": " {fit}</li> }).collect_view();
        view! {
            <div class="notice warn" id="sweep-model-fit">
                <p>"Systems the reference model was not made for (from the catalog):"</p>
                <ul>{items}</ul>
            </div>
        }
    });
    let notes_view = (!notes.is_empty()).then(|| {
        let items = notes.into_iter().map(|n| view! { <li>{n.text}</li> }).collect_view();
        view! {
            <details class="studies-notes">
                <summary>"What the model approximates for these inputs"</summary>
                <ul>{items}</ul>
            </details>
        }
    });
    view! {
        <section class="card">
            <div class="row">
                <h2>"Points"</h2>
                <ModeBadge mode=result.spec.mode id="points-mode" />
                <span class="spacer"></span>
                <button id="sweep-csv" type="button" on:click=csv>"CSV"</button>
                <button id="sweep-json" type="button" on:click=json>"JSON"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="notice error" role="alert">{e}</p> })}
            <p class="small">
                "Same numbers from the command line: " <code id="sweep-cli" class="cli">{format!("{cli} --format json")}</code>
            </p>
            {fits_view}
            {notes_view}
            <div class="table-wrap points-wrap" tabindex="0">
                <table id="sweep-points">
                    <thead>
                        <tr>
                            {head}
                            <th>"status"</th>
                            <th>"strategy"</th>
                            <th class="num">"days"</th>
                            <th class="num">"throughput [samples/s]"</th>
                            <th class="num">"iteration [s]"</th>
                            <th class="num">"memory [GB]"</th>
                            <th class="num">"achieved [TFLOP/s]"</th>
                            <th>"configuration (or why there is none)"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {more.map(|m| view! { <p class="muted small">{m}</p> })}
        </section>
    }
}
