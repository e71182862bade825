//! The per-source summary of both modes, and the settings of the mode shown.

use fmperf_core::extended::ExtendedOptions;
use fmperf_core::extended::efficiency::Efficiency;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::holdout::Holdout;
use fmperf_core::validate::{Stats, short_source};
use leptos::prelude::*;

use super::{Reports, error_cell};

fn abs_pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

/// Three cells of one mode's statistics: evaluated, mean |error|, median error.
fn stats_cells(s: &Stats, mode: ModeKind) -> impl IntoView + use<> {
    let (median, class) = error_cell(s.median_error);
    view! {
        <td class="num" data-mode=mode.as_str() data-col="evaluated">{s.evaluated.to_string()}</td>
        <td class="num" data-mode=mode.as_str() data-col="mape">{abs_pct(s.mape)}</td>
        <td class=format!("num err {class}") data-mode=mode.as_str() data-col="median">{median}</td>
    }
}

/// Extended mode's cells: evaluated, held-out mean |error| and median error (the headline), and the
/// in-sample mean |error| beside them (`…` while the held-out fits run).
fn extended_cells(s: &Stats, held: Option<&Stats>, mode: ModeKind) -> impl IntoView + use<> {
    let mode = mode.as_str();
    let (median, class) = match held {
        Some(h) => error_cell(h.median_error),
        None => ("…".to_string(), "none"),
    };
    view! {
        <td class="num" data-mode=mode data-col="evaluated">{s.evaluated.to_string()}</td>
        <td class="num" data-mode=mode data-col="mape">{held.map_or("…".to_string(), |h| abs_pct(h.mape))}</td>
        <td class=format!("num err {class}") data-mode=mode data-col="median">{median}</td>
        <td class="num" data-mode=mode data-col="mape-in-sample">{abs_pct(s.mape)}</td>
    }
}

/// Per source and overall: rows, then reference mode's evaluated / mean |error| / median error and
/// extended mode's with its held-out (leave-one-source-out) errors as the headline.
#[component]
pub fn SummaryTable(reports: Reports, holdout: RwSignal<Option<Holdout>>) -> impl IntoView {
    let (r, e) = (reports.published(), reports.realistic());
    let (reference_head, extended_head) = (r.mode.label(), e.mode.label());
    let all = e.summary.overall.evaluated + e.summary.overall.skipped;
    let body = move || {
        let h = holdout.get();
        let per_source = e
            .summary
            .per_source
            .iter()
            .zip(&r.summary.per_source)
            .map(|(ext, rf)| {
                let rows = ext.stats.evaluated + ext.stats.skipped;
                let held = h.as_ref().map(|h| {
                    h.per_source
                        .iter()
                        .find(|p| p.source == ext.source)
                        .map(|p| p.leave_one_source_out.clone())
                        .unwrap_or_default()
                });
                view! {
                    <tr data-source=short_source(&ext.source).to_string()>
                        <td title=ext.source.clone()>{short_source(&ext.source).to_string()}</td>
                        <td class="num">{rows.to_string()}</td>
                        {stats_cells(&rf.stats, r.mode)}
                        {extended_cells(&ext.stats, held.as_ref(), e.mode)}
                    </tr>
                }
            })
            .collect_view();
        let overall = h.as_ref().map(|h| h.leave_one_source_out.clone());
        view! {
            {per_source}
            <tr class="overall" data-source="all">
                <td>"all sources"</td>
                <td class="num">{all.to_string()}</td>
                {stats_cells(&r.summary.overall, r.mode)}
                {extended_cells(&e.summary.overall, overall.as_ref(), e.mode)}
            </tr>
        }
    };
    let done = move || holdout.with(|h| if h.is_some() { "done" } else { "running" });
    view! {
        <div class="table-wrap" tabindex="0">
            <table class="validation-summary" id="validation-summary" data-loso=done>
                <thead>
                    <tr>
                        <th rowspan="2">"source"</th>
                        <th rowspan="2" class="num">"runs"</th>
                        <th colspan="3" class="group">{reference_head}</th>
                        <th colspan="4" class="group">{extended_head}</th>
                    </tr>
                    <tr>
                        <th class="num">"evaluated"</th>
                        <th class="num">"mean |error|"</th>
                        <th class="num">"median error"</th>
                        <th class="num">"evaluated"</th>
                        <th class="num">"mean |error|, held out"</th>
                        <th class="num">"median error, held out"</th>
                        <th class="num">"mean |error|, in-sample"</th>
                    </tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        </div>
        <p class="muted small">
            "Mean |error| = mean of |predicted/measured − 1|; median error is signed (positive: predicted above the measured figure, i.e. faster for a throughput, slower for a step time). Held out = leave-one-source-out: each source predicted with extended mode's constants fitted on the other sources (the headline); in-sample = fitted on every source. Reference mode fits nothing. The two modes evaluate different sets of runs: reference mode also needs a vector (non-matrix) rate, which the TPU entries lack, and prices FP8 runs at the BF16 rate."
        </p>
    }
}

/// Every switch of extended mode with its default and what it models.
fn extended_settings() -> impl IntoView {
    let switches = ExtendedOptions::realistic()
        .describe()
        .into_iter()
        .map(|(name, value, what)| {
            view! {
                <tr role="row" data-switch=name>
                    <td role="cell" class="mono">{name}</td>
                    <td role="cell" class="mono">{value}</td>
                    <td role="cell">{what}</td>
                </tr>
            }
        })
        .collect_view();
    let eff = Efficiency::FITTED;
    view! {
        <div class="settings" data-mode="extended">
            <p>
                "Extended mode prices every run with the switches below. Per run, the precision, recomputation, ZeRO stage / FSDP shard group, interleaving, pipeline split and sequence parallelism come from the run's own fields (with a stated rule where a source is silent, shown in the run's notes); everything else is the default shown."
            </p>
            <div class="table-wrap" tabindex="0">
                <table role="table" class="switches" id="validation-switches">
                    <thead role="rowgroup">
                        <tr role="row">
                            <th role="columnheader">"switch"</th>
                            <th role="columnheader">"default"</th>
                            <th role="columnheader">"what it models"</th>
                        </tr>
                    </thead>
                    <tbody role="rowgroup">{switches}</tbody>
                </table>
            </div>
            <p class="muted small">
                {format!(
                    "Fitted global constants: η = {:.3} (linear-layer matmuls) (fractions of each part's measured matmul ceiling, MAMF, from the hardware catalog; parts without a measurement use the datasheet peak) and η_att = {:.3} (flash attention: a fraction of the attention kernel's measured benchmark rate by sequence length).",
                    eff.matmul, eff.attention
                )}
            </p>
        </div>
    }
}

/// What the published model assumes.
fn reference_settings() -> impl IntoView {
    view! {
        <div class="settings" data-mode="reference">
            <p>
                "Reference mode is the published model of Subramanian et al. (PMBS 2024), reproduced bit for bit: every matmul at 0.8 × the datasheet peak with 20 µs per layer pass, flash attention priced as full (not causal) attention, no embeddings, output head or loss, no recomputation besides flash attention's, data parallelism as per-block gathers assumed hidden behind compute, no FP8 path (FP8 runs are priced at the BF16 rate), two-matrix MLPs and full-width K/V (no SwiGLU, no GQA), equal pipeline stages without interleaving. Context-parallel runs use its 2d-seqp strategy."
            </p>
        </div>
    }
}

/// What the mode shown computes: every switch of extended mode with its value, or what the
/// published model assumes.
#[component]
pub fn SettingsCard(mode: Memo<ModeKind>) -> impl IntoView {
    view! {
        <section class="card" id="validation-settings">
            <h2>"Settings of " {move || mode.get().label()}</h2>
            {move || {
                if mode.get().takes_switches() { extended_settings().into_any() } else { reference_settings().into_any() }
            }}
        </section>
    }
}
