//! The drill-down of the selected configuration. Reference mode: its transformer block layer by
//! layer (one block, one micro-batch, one device, forward + backward) as a table and two charts
//! (time by component per layer; work and HBM traffic per layer, forward and backward), plus the
//! data- and pipeline-parallel pseudo-layers that complete the step. Extended mode prices a block
//! as a whole: what it computes for the configuration (stages, block rates, the parts it adds to
//! the time and the memory), labelled with the mode.

use fmperf_chart::format::format_sig;
use fmperf_core::cost::Detail;
use fmperf_core::explore::layers::{LayerLine, LayerTable, layer_table};
use fmperf_core::extended::ExtendedEvaluation;
use fmperf_core::extended::moe::{MoeBreakdown, MoeTimePart};
use fmperf_core::reference::Evaluation;
use fmperf_core::vocab::TimePart;
use leptos::prelude::*;

use super::fmt;
use super::selection::Selected;
use crate::chart::{Bar, StackedBarChart, ValueFormat};
use crate::mode_panel::ModeBadge;

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
        <div class="table-wrap" tabindex="0">
            <table class="layers">
                <thead>
                    <tr>
                        <th scope="col">"module"</th>
                        <th scope="col">"layer"</th>
                        <th scope="col">"units"</th>
                        <th class="num" scope="col">"work" <br /> "[GFLOP]"</th>
                        <th class="num" scope="col">"HBM traffic" <br /> "[GB]"</th>
                        <th class="num" scope="col">"time" <br /> "[ms]"</th>
                        <th class="num" scope="col">"compute" <br /> "[ms]"</th>
                        <th class="num" scope="col">"exposed" <br /> "memory [ms]"</th>
                        <th class="num" scope="col">"comm." <br /> "[ms]"</th>
                        <th class="num" scope="col">"share" <br /> "of step"</th>
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
fn ParallelRows(selected: Selected, evaluation: Evaluation) -> impl IntoView {
    let e = &evaluation;
    let (dp, pp) = (e.dp, e.pp);
    view! {
        <div class="table-wrap" tabindex="0">
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
        Ok(Some(s)) => match s.evaluation.clone() {
            Detail::Extended(x) => view! { <ExtendedParts selected=s ev=x /> }.into_any(),
            Detail::Reference(ev) => reference_layers(s, ev),
        },
    }
    }
}

/// Extended mode's drill-down of one configuration.
#[component]
fn ExtendedParts(selected: Selected, ev: ExtendedEvaluation) -> impl IntoView {
    let b = ev.breakdown;
    let m = ev.memory;
    let code = fmperf_core::search::code::format_candidate(&selected.report.candidate);
    let code_attr = code.clone();
    let blocks = if b.stages.first == b.stages.last && b.stages.last == b.stages.most {
        b.stages.most.to_string()
    } else {
        format!("first {} · last {} · busiest {}", b.stages.first, b.stages.last, b.stages.most)
    };
    let mut rows: Vec<(&str, String, &str)> = vec![
        ("micro-batches per step", b.microbatches.to_string(), ""),
        ("blocks per device", blocks, "uneven stages: the busiest device sets the pace"),
        (
            "device that sets the slot",
            b.critical.to_string(),
            "first (embedding), last (head and loss) or a middle stage",
        ),
        (
            "parameters of the model",
            format!("{} billion", format_sig(b.parameters / 1e9, 4)),
            "blocks, embedding and head",
        ),
        (
            "block forward [TFLOP/s]",
            format_sig(b.block_fwd_tflops, 4),
            "one block, one micro-batch, communication inside included",
        ),
        ("block backward [TFLOP/s]", format_sig(b.block_bwd_tflops, 4), "with recomputation"),
        (
            "achieved per device [TFLOP/s]",
            format_sig(b.achieved_tflops, 4),
            "hardware FLOPs of the busiest device over the step",
        ),
        ("recomputation [s]", fmt::seconds(b.t_recompute_s), "part of compute, memory and TP time"),
        ("context-parallel exposed [s]", fmt::seconds(b.t_cp_comm_s), "part of TP comm"),
        (
            "ZeRO-2/3 per micro-batch [s]",
            fmt::seconds(b.t_zero3_s),
            "exposed, summed over the micro-batches; part of DP comm",
        ),
        (
            "data parallel per step [s]",
            fmt::seconds(ev.dp.per_iteration_s),
            "gradient reduction and parameter gathers not hidden",
        ),
        ("optimizer step [s]", fmt::seconds(b.t_optimizer_s), "part of exposed memory (HBM traffic)"),
        ("stage message [s]", fmt::seconds(b.message_s), "one activation message between neighbouring stages"),
    ];
    if let Some(f) = fmperf_app::results::cp_flavour_text(&selected.report) {
        rows.push((
            "context-parallel flavour",
            f,
            "chosen by the search (cp_comm=search): Ulysses degree × ring degree",
        ));
    }
    let rows = rows
        .into_iter()
        .map(|(k, v, note)| view! { <tr><th scope="row">{k}</th><td class="num">{v}</td><td class="muted">{note}</td></tr> })
        .collect_view();
    // The host parts from core's one list: where each is counted as its note, what it holds and
    // its sources as its tooltip.
    let host_rows = b
        .host_parts()
        .into_iter()
        .map(|(p, v)| {
            view! {
                <tr data-host-part=p.key() title=p.description()>
                    <th scope="row">{format!("{} [s]", p.label())}</th>
                    <td class="num">{fmt::seconds(v)}</td>
                    <td class="muted">{p.counted_in()}</td>
                </tr>
            }
        })
        .collect_view();
    let memory = m
        .parts()
        .into_iter()
        .map(|(p, v)| view! { <tr><th scope="row">{p.label()}</th><td class="num">{fmt::gb(v)}</td></tr> })
        .collect_view();
    let moe = ev.moe.map(|x| view! { <MoeParts moe=x memory_gb=m.total() /> });
    view! {
        <div class="panel-layers" data-config=code_attr data-mode="extended">
            <h3>"What extended mode computes for " <code>{code}</code> " " <ModeBadge mode=selected.mode id="layers-mode" /></h3>
            <p class="muted layers-note">
                "Extended mode prices a block as a whole (its matmuls, flash attention, element-wise traffic and tensor- and context-parallel collectives), not layer by layer: the reference's layer table is shown in reference mode. Below, what extended mode adds to the step and where the memory goes."
            </p>
            <div class="detail-grid">
                <div class="table-wrap" tabindex="0">
                    <table class="compact extended-parts">
                        <caption>"Step"</caption>
                        <tbody>{rows}{host_rows}</tbody>
                    </table>
                </div>
                <div class="table-wrap" tabindex="0">
                    <table class="compact">
                        <caption>"Memory of the fullest device [GB]"</caption>
                        <tbody>{memory}</tbody>
                        <tfoot><tr><th scope="row">"total"</th><td class="num">{fmt::gb(m.total())}</td></tr></tfoot>
                    </table>
                </div>
            </div>
            {moe}
        </div>
    }
}

/// What the Mixture-of-Experts blocks cost on the busiest device over one step: the expert layout,
/// each MoE time part with the step part it is counted in, the all-to-all exposed and hidden, and
/// the routed experts' memory against the rest.
#[component]
fn MoeParts(moe: MoeBreakdown, memory_gb: f64) -> impl IntoView {
    let x = moe.experts;
    let time_rows = MoeTimePart::ALL
        .into_iter()
        .map(|p| (p.label(), p.of(&moe.times), p.step_part().map_or("not in the step", TimePart::label)))
        .map(|(k, v, part)| {
            view! { <tr><th scope="row">{k}</th><td class="num">{fmt::seconds(v)}</td><td class="muted">{part}</td></tr> }
        })
        .collect_view();
    let experts = moe.expert_parts();
    let experts_gb: f64 = experts.iter().map(|(_, gb)| gb).sum();
    let memory_rows = experts
        .iter()
        .map(|(p, gb)| (format!("expert {}", p.label()), *gb))
        .chain([("everything else (dense parts, activations, margin)".to_string(), (memory_gb - experts_gb).max(0.0))])
        .map(|(k, v)| view! { <tr><th scope="row">{k}</th><td class="num">{fmt::gb(v)}</td></tr> })
        .collect_view();
    let p = moe.parameters;
    let figures: Vec<(&str, String)> = vec![
        ("expert layout", format!("EP {} · ETP {} · expert DP {}", x.ep, x.etp, x.edp)),
        ("EP ranks in one fast domain", x.ep_fast.to_string()),
        ("MoE / dense blocks on the busiest device", format!("{} / {}", moe.moe_blocks, moe.dense_blocks)),
        ("tokens per local expert per micro-batch", format_sig(moe.tokens_per_expert, 4)),
        ("tokens dropped", fmt::percent(moe.dropped_fraction)),
        (
            "parameters: total / active per token",
            format!("{} B / {} B", format_sig(p.total / 1e9, 4), format_sig(p.active / 1e9, 4)),
        ),
    ];
    let figures = figures
        .into_iter()
        .map(|(k, v)| view! { <tr><th scope="row">{k}</th><td class="num">{v}</td></tr> })
        .collect_view();
    view! {
        <h4 class="table-title moe-title">"Mixture of experts (busiest device, one step, forward and backward)"</h4>
        <div class="detail-grid moe-parts">
            <div class="table-wrap" tabindex="0">
                <table class="compact moe-time">
                    <caption>"MoE time (recomputation not included)"</caption>
                    <thead><tr><th scope="col">"part"</th><th class="num" scope="col">"[s]"</th><th scope="col">"counted in"</th></tr></thead>
                    <tbody>{time_rows}</tbody>
                </table>
            </div>
            <div class="table-wrap" tabindex="0">
                <table class="compact moe-figures">
                    <caption>"Experts"</caption>
                    <tbody>{figures}</tbody>
                </table>
                <table class="compact moe-memory">
                    <caption>"Routed experts in that memory [GB]"</caption>
                    <tbody>{memory_rows}</tbody>
                </table>
            </div>
        </div>
    }
}

/// The reference's layer-by-layer drill-down of one configuration.
fn reference_layers(s: Selected, evaluation: Evaluation) -> AnyView {
    let table = layer_table(&evaluation, s.depth);
    let bars: Vec<Bar> =
        table.lines.iter().map(|l| Bar::new(label(l), vec![l.compute_s, l.memory_s, l.comm_s])).collect();
    let work: Vec<Bar> = table
        .lines
        .iter()
        .zip(&evaluation.mlp.iter().chain(&evaluation.attention).collect::<Vec<_>>())
        .map(|(l, r)| {
            Bar::new(label(l), vec![r.flops_fwd_tflop * GFLOP_PER_TFLOP, r.flops_bwd_tflop * GFLOP_PER_TFLOP])
        })
        .collect();
    let traffic: Vec<Bar> = table
        .lines
        .iter()
        .zip(&evaluation.mlp.iter().chain(&evaluation.attention).collect::<Vec<_>>())
        .map(|(l, r)| Bar::new(label(l), vec![r.mem_fwd_gb, r.mem_bwd_gb]))
        .collect();
    let code = fmperf_core::search::code::format_candidate(&s.report.candidate);
    let code_attr = code.clone();
    view! {
                <div class="panel-layers" data-config=code_attr>
                    <h3>"Layers of " <code>{code}</code> " " <ModeBadge mode=s.mode id="layers-mode" /></h3>
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
                    <ParallelRows selected=s.clone() evaluation=evaluation.clone() />
                </div>
            }
            .into_any()
}
