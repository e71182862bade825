//! Validation: the model's predictions against measured training runs, in both modes, with the
//! leave-one-source-out error as the headline, and memory next to time.
//!
//! The measured runs are compiled in (fmperf-core's `validate::MEASURED_RUNS_JSON` and
//! `MEASURED_MEMORY_RUNS_JSON`, copies of `measured-training-runs.json` and
//! `measured-memory-runs.json` with every row's source); both modes are evaluated once when the
//! view opens, and extended mode's leave-one-source-out fits run in time slices right after. The
//! mode shown by the scatter is part of the URL (`?view=validation&mode=reference`).

mod bands;
mod fit;
mod memory;
mod ranking;
mod rows;
mod summary;

use std::sync::Arc;

use fmperf_core::mode_kind::{ModeKind, PerMode};
use fmperf_core::validate::holdout::{Holdout, holdout};
use fmperf_core::validate::holdout_cache::shipped_holdout;
use fmperf_core::validate::{Report, shipped_memory_runs, shipped_runs, short_source, validate};
use leptos::prelude::*;

use crate::chart::{AxisKind, ScatterChart, ScatterGroup, ScatterPoint};
use crate::url_state::UrlState;

/// The order the view lists the modes in where one is shown at a time (the toggles, the skipped
/// runs): the realistic one first, the view's default, then the rest of [`ModeKind::ALL`] (the
/// published model).
pub fn shown_first() -> Vec<ModeKind> {
    let mut modes = ModeKind::ALL.to_vec();
    modes.sort_by_key(|m| *m != ModeKind::REALISTIC);
    modes
}

/// Every mode's report of the shipped runs, and the realistic mode's report of the memory runs.
#[derive(Clone)]
pub struct Reports {
    /// Each mode's report of the shipped runs.
    by_mode: PerMode<Arc<Report>>,
    /// The realistic mode on the peak-memory runs.
    pub memory: Arc<Report>,
    /// The held-out errors of each mode that fits nothing (equal to its errors); `None` for a mode
    /// with fitted constants, whose held-out errors come in time slices.
    unfitted_holdout: PerMode<Option<Arc<Holdout>>>,
}

impl Reports {
    fn load() -> Reports {
        let file = shipped_runs();
        Reports {
            by_mode: PerMode::from_fn(|m| Arc::new(validate(&file, m))),
            memory: Arc::new(validate(&shipped_memory_runs(), ModeKind::REALISTIC)),
            unfitted_holdout: PerMode::from_fn(|m| {
                (!m.has_fitted_constants()).then(|| Arc::new(shipped_holdout(m).unwrap_or_else(|| holdout(&file, m))))
            }),
        }
    }

    /// The report of `mode`.
    pub fn of(&self, mode: ModeKind) -> Arc<Report> {
        self.by_mode.get(mode).clone()
    }

    /// The realistic mode's report (the view's default, the memory card's and the ranking's).
    pub fn realistic(&self) -> Arc<Report> {
        self.of(ModeKind::REALISTIC)
    }

    /// The published model's report (the side-by-side tables' first column).
    pub fn published(&self) -> Arc<Report> {
        let published = ModeKind::ALL.into_iter().find(|m| m.is_published_model());
        self.of(published.unwrap_or(ModeKind::REALISTIC))
    }
}

/// An error as a signed percentage, with its class for colouring (`good` within 15 %, `warn`
/// within 30 %, `bad` beyond).
pub fn error_cell(e: Option<f64>) -> (String, &'static str) {
    match e {
        Some(x) if x.is_finite() => {
            let class = if x.abs() <= 0.15 {
                "good"
            } else if x.abs() <= 0.30 {
                "warn"
            } else {
                "bad"
            };
            (format!("{:+.1} %", x * 100.0), class)
        }
        _ => ("–".to_string(), "none"),
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

/// The validation view.
#[component]
pub fn ValidationPage() -> impl IntoView {
    let url = expect_context::<UrlState>();
    let mode = Memo::new(move |_| url.get("mode").as_deref().and_then(ModeKind::parse).unwrap_or(ModeKind::REALISTIC));
    let reports = Reports::load();
    let rows_total = reports.realistic().rows.len();
    let sources = reports.realistic().summary.per_source.len();
    let toggle = move |m: ModeKind| {
        view! {
            <button
                type="button"
                class="mode-button"
                data-mode=m.as_str()
                aria-pressed=move || (mode.get() == m).to_string()
                on:click=move |_| url.update(true, |q| q.set("mode", m.as_str()))
            >
                {m.title()}
            </button>
        }
    };
    let scatter_reports = reports.clone();
    let groups = Signal::derive(move || scatter_groups(&scatter_reports.of(mode.get())));
    let title = Signal::derive(move || format!("Predicted against measured throughput — {}", mode.get().label()));
    // Extended mode's held-out errors of the shipped runs: core's cache (recomputed by a test).
    let held = RwSignal::new(shipped_holdout(ModeKind::REALISTIC));
    let current = reports.clone();
    let headline = move || {
        let m = mode.get();
        let r = current.of(m);
        let s = &r.summary.overall;
        let start = format!("{}: {} runs evaluated, {} skipped; ", m.label(), s.evaluated, s.skipped);
        // A mode that fits nothing: its held-out errors are its errors.
        let fits = m.has_fitted_constants();
        let held_out = if fits { held.get() } else { current.unfitted_holdout.get(m).as_deref().cloned() };
        match (fits, held_out) {
            (false, Some(h)) => format!(
                "{start}mean |error| {}, median |error| {} (nothing is fitted in this mode, so held out = in-sample).",
                pct(h.leave_one_source_out.mape),
                pct(h.leave_one_source_out.median_abs_error)
            ),
            (_, Some(h)) => format!(
                "{start}leave-one-source-out (each source predicted with constants fitted without it): mean |error| {}, median |error| {}; in-sample beside it: mean |error| {}, median |error| {}.",
                pct(h.leave_one_source_out.mape),
                pct(h.leave_one_source_out.median_abs_error),
                pct(h.in_sample.mape),
                pct(h.in_sample.median_abs_error)
            ),
            (_, None) => {
                format!("{start}in-sample: mean |error| {}, median |error| {}.", pct(s.mape), pct(s.median_abs_error))
            }
        }
    };
    view! {
        <div class="validation">
            <section class="card validation-intro">
                <h1>"Validation against measured training runs"</h1>
                <p>
                    {format!(
                        "{rows_total} published training runs from {sources} sources (A100, H100, TPU v4/v5e, V100), each predicted at its exact parallel configuration, batch, precision and recomputation, and compared in the source's own measurement: tokens/s per device, model TFLOP/s, MFU, Megatron's hardware-FLOP TFLOP/s or seconds per iteration."
                    )}
                </p>
                <p class="muted">
                    "error = predicted / measured − 1, in the figure the source measured: positive means a higher figure than measured (faster for a throughput, TFLOP/s or MFU; slower for a step time). Nothing is fitted per run or per source; extended mode has four global constants fitted on these runs (the matmul and attention efficiencies and their size factors), so its headline error is leave-one-source-out: each source predicted with the constants fitted on the other sources (the in-sample error is shown beside it). Rows that cannot be evaluated are listed with the reason, which names the missing number."
                </p>
                <div class="row mode-toggle" role="group" aria-label="Mode">
                    <span class="muted">"Mode shown:"</span>
                    {shown_first().into_iter().map(toggle).collect_view()}
                    <span class="badge current-mode" data-mode=move || mode.get().as_str()>
                        {move || mode.get().label()}
                    </span>
                </div>
                <p class="headline" id="validation-headline">
                    {headline}
                </p>
            </section>
            <section class="card">
                <h2>"Summary per source, both modes"</h2>
                <summary::SummaryTable reports=reports.clone() holdout=held />
            </section>
            <memory::MemoryCard reports=reports.clone() holdout=held />
            <bands::BandsCard mode=mode memory=reports.memory.clone() />
            <ranking::RankingCard reports=reports.clone() />
            <section class="card">
                <h2>"Predicted against measured"</h2>
                <p class="muted">
                    "Every evaluated run as training throughput [tokens/s per device] (any metric converts to it with the same error); one colour per source, log axes, the line y = x and a ±15 % band."
                </p>
                <div class="chart-box" id="validation-scatter">
                    <ScatterChart
                        title=title
                        x_label="measured throughput [tokens/s per device]"
                        y_label="predicted throughput [tokens/s per device]"
                        groups=groups
                        x_axis=AxisKind::Log10
                        y_axis=AxisKind::Log10
                        band_percent=15.0
                        height=480.0
                    />
                </div>
            </section>
            <summary::SettingsCard mode=mode />
            <fit::FitCard />
            <rows::RowsCard reports=reports.clone() mode=mode />
            <rows::SkippedCard reports=reports />
        </div>
    }
}

/// The scatter's points: one group per source (short name), in file order.
fn scatter_groups(r: &Report) -> Vec<ScatterGroup> {
    let mut groups: Vec<ScatterGroup> = Vec::new();
    for row in &r.rows {
        let (Some(x), Some(y)) = (row.measured_tokens_per_s, row.predicted_tokens_per_s) else { continue };
        let name = short_source(&row.source).to_string();
        let label = format!("{} ({})", row.id, row.metric.as_deref().unwrap_or(""));
        match groups.iter_mut().find(|g| g.name == name) {
            Some(g) => g.points.push(ScatterPoint::new(x, y, label)),
            None => groups.push(ScatterGroup { name, points: vec![ScatterPoint::new(x, y, label)] }),
        }
    }
    groups
}
