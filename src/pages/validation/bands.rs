//! "What the error bars cite": for each part family, the band every kind of model gets in the
//! explorer (the same numbers, from `fmperf_app::band_runs`) and the measured runs behind it,
//! dense and mixture-of-experts alike, with each run's held-out error.

use std::sync::Arc;

use fmperf_app::band_runs::{MODEL_CLASSES, cell, memory_families, row_model, shipped_families};
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::error_bands::SizeClass;
use fmperf_core::validate::short_source;
use fmperf_core::validate::{Report, shipped_memory_runs};
use leptos::prelude::*;

use super::{error_cell, pct};

/// The card: one table of bands (part families × model classes) and, per family, its runs; then
/// the peak-memory runs (`memory`, extended mode's report of them) per part family, with the one
/// band every memory figure carries.
#[component]
pub fn BandsCard(mode: Memo<ModeKind>, memory: Arc<Report>) -> impl IntoView {
    let memory_view = memory_by_family(&memory);
    let body = move || {
        let m = mode.get();
        let families = shipped_families(m);
        let total: usize = families.iter().map(|f| f.rows.len()).sum();
        let moe: usize = families.iter().map(|f| f.moe_runs()).sum();
        let heads = MODEL_CLASSES
            .iter()
            .map(|c| {
                let kind = c.kind();
                // Short, so that the six columns fit a 1,280 px screen; the tooltip says it whole.
                let size = match c.size {
                    SizeClass::Small => "< 15 B",
                    SizeClass::Medium => "15–100 B",
                    SizeClass::Large => "> 100 B",
                };
                view! { <th class="num" scope="col" title=c.name()>{kind} <br /> {size}</th> }
            })
            .collect_view();
        let band_rows = families
            .iter()
            .map(|f| {
                let cells = f
                    .bands
                    .iter()
                    .map(|b| {
                        let (typical, wider) = cell(b);
                        view! {
                            <td class="num" data-basis=b.basis.key() title=b.message.clone()>
                                {typical}
                                {wider.map(|w| view! { <br /> <small class="muted">{w}</small> })}
                            </td>
                        }
                    })
                    .collect_view();
                view! {
                    <tr data-part=f.part.name()>
                        <th scope="row">{f.part.name()}</th>
                        <td class="num">{f.rows.len()}</td>
                        <td class="num">{f.moe_runs()}</td>
                        {cells}
                    </tr>
                }
            })
            .collect_view();
        let runs = families
            .into_iter()
            .map(|f| {
                let name = f.part.name();
                let n = f.rows.len();
                let rows = f
                    .rows
                    .into_iter()
                    .map(|r| {
                        let (err, class) = error_cell(Some(r.error));
                        let model = row_model(&r);
                        view! {
                            <tr data-run=r.id.clone() data-moe=r.moe.to_string()>
                                <td><code>{r.id.clone()}</code></td>
                                <td>{short_source(&r.source).to_string()}</td>
                                <td><code>{r.hardware.clone()}</code></td>
                                <td>{model.kind()}</td>
                                <td class="num">{format!("{:.1}", r.params_b)}</td>
                                <td class=format!("num err {class}")>{err}</td>
                            </tr>
                        }
                    })
                    .collect_view();
                view! {
                    <details class="band-runs" data-part=name.clone()>
                        <summary>{format!("{name}: {n} runs")}</summary>
                        <div class="table-wrap" tabindex="0">
                            <table class="compact" aria-label=format!("Measured runs on {name} parts")>
                                <thead>
                                    <tr>
                                        <th scope="col">"run"</th>
                                        <th scope="col">"source"</th>
                                        <th scope="col">"part"</th>
                                        <th scope="col">"model"</th>
                                        <th class="num" scope="col">"parameters [B]"</th>
                                        <th class="num" scope="col">"error (held out)"</th>
                                    </tr>
                                </thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                    </details>
                }
            })
            .collect_view();
        view! {
            <p class="muted" id="bands-summary">
                {format!(
                    "In {}, the explorer's error bar next to a predicted time is drawn from these {total} measured runs ({moe} of mixture-of-experts models), by part family and kind of model (parameters in billions), with the same numbers as here; where a kind has fewer than 3 runs on a part, the bar takes the wider class named in the cell (the whole family, other parts or every run).",
                    m.label()
                )}
            </p>
            <div class="table-wrap" tabindex="0">
                <table class="compact bands-table" aria-label="The error bar of each part family and kind of model">
                    <thead>
                        <tr>
                            <th scope="col">"part family"</th>
                            <th class="num" scope="col">"runs"</th>
                            <th class="num" scope="col">"of them MoE"</th>
                            {heads}
                        </tr>
                    </thead>
                    <tbody>{band_rows}</tbody>
                </table>
            </div>
            {runs}
        }
    };
    view! {
        <section class="card bands-card" id="validation-bands" aria-labelledby="bands-title">
            <h2 id="bands-title">"What the error bars cite"</h2>
            {body}
            {memory_view}
        </section>
    }
}

/// The memory runs by part family, and the memory band they give every "needs X ± Y GB".
fn memory_by_family(report: &Report) -> impl IntoView + use<> {
    let fams = memory_families(&shipped_memory_runs(), report);
    let s = &report.summary.memory;
    let line = format!(
        "A memory figure's band (\"X ± Y\" in the Explorer's rows, \"needs X ± Y of Z GB\" in its breakdown and the import, memory_band_gb in the CLI's search rows) is one band for every part: ±{:.0} % of the need, the 80th percentile of the held-out |error| over these {} scored peak-memory runs ({} runs in all, {} out of memory).",
        s.band * 100.0,
        s.stats.evaluated,
        s.rows,
        s.verdicts.oom_runs,
    );
    let rows = fams
        .into_iter()
        .map(|f| {
            let class = error_cell(f.median_abs_error).1;
            let err = pct(f.median_abs_error);
            view! {
                <tr data-part=f.name()>
                    <th scope="row">{f.name()}</th>
                    <td class="num" data-col="runs">{f.ids.len()}</td>
                    <td class="num" data-col="scored">{f.scored}</td>
                    <td class="num" data-col="oom">{f.oom}</td>
                    <td class=format!("num err {class}")>{err}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <h3 id="bands-memory-title">"Memory runs by part family"</h3>
        <p class="muted" id="bands-memory-summary" data-band=format!("{:.6}", s.band) data-scored=s.stats.evaluated>
            {line}
        </p>
        <div class="table-wrap" tabindex="0">
            <table class="compact" id="bands-memory" aria-labelledby="bands-memory-title">
                <thead>
                    <tr>
                        <th scope="col">"part family"</th>
                        <th class="num" scope="col">"memory runs"</th>
                        <th class="num" scope="col">"scored"</th>
                        <th class="num" scope="col">"out of memory"</th>
                        <th class="num" scope="col">"median |error| (held out)"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
