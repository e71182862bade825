//! The drill-down of the selected configuration: its transformer block layer by layer (one block,
//! one micro-batch, one device, forward + backward) as a table and two charts (time by component
//! per layer; work and HBM traffic per layer, forward and backward), plus the data- and pipeline-parallel
//! pseudo-layers that complete the step.

use fmperf_chart::format::format_sig;
use fmperf_core::explore::layers::{LayerLine, LayerTable, layer_table};
use leptos::prelude::*;

use super::fmt;
use super::selection::Selected;
use crate::chart::{Bar, StackedBarChart, ValueFormat};

/// GFLOP per TFLOP.
const GFLOP_PER_TFLOP: f64 = 1e3;

/// A bar label for a layer: `mlp fc1`, `attn qkv`.
fn label(l: &LayerLine) -> String {
    format!("{} {}", if l.module == "MLP" { "mlp" } else { "attn" }, l.name)
}

/// The layer table.
#[component]
fn LayerRows(table: LayerTable) -> impl IntoView {
    let rows = table
        .lines
        .iter()
        .map(|l| {
            let comms = if l.collectives.is_empty() {
                view! { <span class="muted">"–"</span> }.into_any()
            } else {
                let n = l.collectives.len();
                view! {
                    <details class="comms">
                        <summary>{format!("{n} collective{}", if n == 1 { "" } else { "s" })}</summary>
                        <ul>{l.collectives.iter().map(|c| view! { <li>{c.clone()}</li> }).collect_view()}</ul>
                    </details>
                }
                .into_any()
            };
            view! {
                <tr data-layer=l.name>
                    <td>{l.module}</td>
                    <th scope="row"><code>{l.name}</code></th>
                    <td>{if l.tensor_cores { "matrix" } else { "vector" }}</td>
                    <td class="num">{format_sig(l.flops_tflop * GFLOP_PER_TFLOP, 3)}</td>
                    <td class="num">{format_sig(l.traffic_gb, 3)}</td>
                    <td class="num">{fmt::fixed(l.time_s * 1e3, 3)}</td>
                    <td class="num">{fmt::fixed(l.compute_s * 1e3, 3)}</td>
                    <td class="num">{fmt::fixed(l.memory_s * 1e3, 3)}</td>
                    <td class="num">{fmt::fixed(l.comm_s * 1e3, 3)}</td>
                    <td class="num">{fmt::percent(l.share_of_step)}</td>
                    <td class="comms-cell">{comms}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <p class="muted layers-note">
                    {format!(
                        "One block, one micro-batch, one device, forward + backward: {} ms. A step runs {} block{} per pipeline stage × {} micro-batch{}.",
                        fmt::fixed(table.block_time_s * 1e3, 3),
                        table.blocks_per_stage,
                        if table.blocks_per_stage == 1 { "" } else { "s" },
                        table.microbatches,
                        if table.microbatches == 1 { "" } else { "es" }
                    )}
                </p>
        <div class="table-wrap">
            <table class="layers">
                <thead>
                    <tr>
                        <th scope="col">"module"</th>
                        <th scope="col">"layer"</th>
                        <th scope="col">"units"</th>
                        <th class="num" scope="col">"work [GFLOP]"</th>
                        <th class="num" scope="col">"HBM traffic [GB]"</th>
                        <th class="num" scope="col">"time [ms]"</th>
                        <th class="num" scope="col">"compute [ms]"</th>
                        <th class="num" scope="col">"exposed memory [ms]"</th>
                        <th class="num" scope="col">"communication [ms]"</th>
                        <th class="num" scope="col">"share of step"</th>
                        <th scope="col">"collectives"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The data- and pipeline-parallel pseudo-layers.
#[component]
fn ParallelRows(selected: Selected) -> impl IntoView {
    let e = &selected.evaluation;
    let (dp, pp) = (e.dp, e.pp);
    view! {
        <div class="table-wrap">
        <table class="compact parallel-table">
            <caption>"Data and pipeline parallelism (per step)"</caption>
            <thead>
                <tr>
                    <th scope="col">"pseudo-layer"</th>
                    <th class="num" scope="col">"volume [GB]"</th>
                    <th class="num" scope="col">"group (in domain)"</th>
                    <th class="num" scope="col">"exposed time [s]"</th>
                </tr>
            </thead>
            <tbody>
                <tr title="per-block weight all-gather (forward) and gradient reduce-scatter (backward), overlapped with the other blocks">
                    <th scope="row">"data parallel"</th>
                    <td class="num">{format_sig(dp.volume_gb, 3)}</td>
                    <td class="num">{format!("{} ({})", dp.group, dp.fast_share)}</td>
                    <td class="num">{fmt::seconds(dp.t_s)}</td>
                </tr>
                <tr title="one activation message per micro-batch and direction between neighbouring stages">
                    <th scope="row">"pipeline"</th>
                    <td class="num">{format_sig(pp.volume_gb, 3)}</td>
                    <td class="num">{format!("{} ({})", selected.report.candidate.pp, pp.fast_share)}</td>
                    <td class="num">{fmt::seconds(pp.t_s)}</td>
                </tr>
                <tr>
                    <th scope="row">"pipeline bubble"</th>
                    <td class="num">"–"</td>
                    <td class="num">"–"</td>
                    <td class="num">{fmt::seconds(e.totals.t_bubble)}</td>
                </tr>
            </tbody>
        </table>
        </div>
    }
}

/// The layers panel.
#[component]
pub fn LayersPanel(selection: Memo<Result<Option<Selected>, String>>) -> impl IntoView {
    move || {
        match selection.get() {
        Err(e) => view! { <div class="notice error" role="alert">{e}</div> }.into_any(),
        Ok(None) => view! { <p class="muted placeholder">"The selected configuration appears here once the search has found one."</p> }.into_any(),
        Ok(Some(s)) => {
            let table = layer_table(&s.evaluation, s.depth);
            let bars: Vec<Bar> =
                table.lines.iter().map(|l| Bar::new(label(l), vec![l.compute_s, l.memory_s, l.comm_s])).collect();
            let work: Vec<Bar> = table
                .lines
                .iter()
                .zip(&s.evaluation.mlp.iter().chain(&s.evaluation.attention).collect::<Vec<_>>())
                .map(|(l, r)| {
                    Bar::new(label(l), vec![r.flops_fwd_tflop * GFLOP_PER_TFLOP, r.flops_bwd_tflop * GFLOP_PER_TFLOP])
                })
                .collect();
            let traffic: Vec<Bar> = table
                .lines
                .iter()
                .zip(&s.evaluation.mlp.iter().chain(&s.evaluation.attention).collect::<Vec<_>>())
                .map(|(l, r)| Bar::new(label(l), vec![r.mem_fwd_gb, r.mem_bwd_gb]))
                .collect();
            let code = fmperf_core::explore::format_candidate(&s.report.candidate);
            let code_attr = code.clone();
            view! {
                <div class="panel-layers" data-config=code_attr>
                    <h3>"Layers of " <code>{code}</code></h3>
                    <div class="charts">
                        <div class="chart-box">
                            <StackedBarChart
                                title="Time per layer (one block, one micro-batch)"
                                value_label="time [s]"
                                components={vec!["compute".to_string(), "exposed memory".to_string(), "communication".to_string()]}
                                bars=bars
                                format=ValueFormat::Duration
                            />
                        </div>
                        <div class="chart-box">
                            <StackedBarChart
                                title="Work per layer (one block, one micro-batch)"
                                value_label="work [GFLOP]"
                                components={vec!["forward".to_string(), "backward".to_string()]}
                                bars=work
                            />
                        </div>
                        <div class="chart-box">
                            <StackedBarChart
                                title="HBM traffic per layer (one block, one micro-batch)"
                                value_label="HBM traffic [GB]"
                                components={vec!["forward".to_string(), "backward".to_string()]}
                                bars=traffic
                            />
                        </div>
                    </div>
                    <LayerRows table=table />
                    <ParallelRows selected=s />
                </div>
            }
            .into_any()
        }
    }
    }
}
