//! "What the error bars cite": for each part family, the band every kind of model gets in the
//! explorer (the same numbers, from `fmperf_app::band_runs`) and the measured runs behind it,
//! dense and mixture-of-experts alike, with each run's held-out error.

use fmperf_app::band_runs::{MODEL_CLASSES, cell, row_model, shipped_families};
use fmperf_core::validate::Mode;
use fmperf_core::validate::error_bands::SizeClass;
use fmperf_core::validate::short_source;
use leptos::prelude::*;

use super::{error_cell, mode_name};

/// The card: one table of bands (part families × model classes) and, per family, its runs.
#[component]
pub fn BandsCard(mode: Memo<Mode>) -> impl IntoView {
    let body = move || {
        let m = mode.get();
        let families = shipped_families(m);
        let total: usize = families.iter().map(|f| f.rows.len()).sum();
        let moe: usize = families.iter().map(|f| f.moe_runs()).sum();
        let heads = MODEL_CLASSES
            .iter()
            .map(|c| {
                let kind = if c.moe { "MoE" } else { "dense" };
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
                            <td class="num" data-basis=format!("{:?}", b.basis) title=b.message.clone()>
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
                                <td>{if model.moe { "MoE" } else { "dense" }}</td>
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
                    mode_name(m)
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
        </section>
    }
}
