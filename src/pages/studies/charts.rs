//! The results of a sweep: chart controls, the main chart (lines against an axis, or a heat map
//! over two axes with infeasible cells hatched), the time or memory breakdown along the x axis,
//! the preset's published figures, and the table.

use std::sync::Arc;

use fmperf_core::sweep::{Metric, Status, SweepResult};

use fmperf_core::resolve::sweep_axis::AxisKey;
use leptos::prelude::*;

use super::keys::{self, Chart, ChartKind, StudyBreakdown, SweepSource};
use super::picker::Comparisons;
use super::state::Studies;
use super::table::PointsTable;
use crate::chart::{AxisKind, Bar, Heatmap, HeatmapData, LineChart, Orientation, Series, StackedBarChart};
use crate::mode_panel::ModeBadge;
pub use fmperf_app::arrange::axis_label;
use fmperf_app::arrange::{self, Arrangement};

/// The line chart's series (see [`arrange::line_series`]).
fn line_series(r: &SweepResult, a: &Arrangement, metric: Metric, eff: bool) -> (Vec<Series>, Vec<String>) {
    let (lines, empty) = arrange::line_series(r, a, metric, eff);
    (lines.into_iter().map(|(name, pts)| Series::new(name, pts)).collect(), empty)
}

/// The heat map's data (see [`arrange::heat_data`]).
fn heat_data(r: &SweepResult, a: &Arrangement, metric: Metric) -> (HeatmapData, Option<(usize, usize)>) {
    let (c, best) = arrange::heat_data(r, a, metric);
    (HeatmapData { x_labels: c.x_labels, y_labels: c.y_labels, cells: c.cells }, best)
}

/// The stacked breakdown along x of one series (see [`arrange::breakdown_bars`]).
fn breakdown_bars(r: &SweepResult, a: &Arrangement, kind: StudyBreakdown, series: &str) -> (Vec<String>, Vec<Bar>) {
    let (names, bars) = arrange::breakdown_bars(r, a, kind, series);
    (names, bars.into_iter().map(|(label, parts)| Bar::new(label, parts)).collect())
}

/// Writes one chart setting.
fn set(st: Studies, key: &'static str, value: String) {
    st.url.update(false, |q| keys::set_chart(q, key, &value));
}

/// The results section (nothing until a sweep has finished).
#[component]
pub fn Results() -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    move || {
        let (Some(f), Some(chart)) = (st.finished.get(), st.chart.get()) else {
            return ().into_any();
        };
        let r = f.result.clone();
        let panel = match st.source.get() {
            SweepSource::Preset(_, p) if st.spec.with(|s| s.as_ref().ok() == Some(&r.spec)) => Some(p),
            _ => None,
        };
        let feasible = r.points.iter().filter(|p| p.status == Status::Ok).count();
        let summary = format!(
            "{} points ({} with a configuration that fits), {} candidates evaluated in {:.2} s",
            super::count(r.points.len() as u64),
            super::count(feasible as u64),
            super::count(r.candidates),
            f.elapsed_ms / 1000.0
        );
        let arrangement = Arrangement::new(&r, &chart);
        view! {
            <section class="card studies-results">
                <div class="row">
                    <h2>"Results"</h2>
                    <ModeBadge mode=r.spec.mode id="results-mode" />
                    <span class="spacer"></span>
                    <span class="muted" id="sweep-summary">{summary}</span>
                </div>
                <Controls result=r.clone() chart=chart.clone() arrangement=arrangement.clone() />
                <MainChart result=r.clone() chart=chart.clone() arrangement=arrangement.clone() />
            </section>
            {panel.map(|p| view! { <Comparisons panel=p result=r.clone() /> })}
            <PointsTable result=r />
        }
        .into_any()
    }
}

/// A select writing one chart key.
fn select_view(
    st: Studies,
    id: &'static str,
    label: &'static str,
    key: &'static str,
    options: Vec<(String, String)>,
    current: String,
) -> AnyView {
    let opts = options
        .into_iter()
        .map(|(v, l)| {
            let sel = v == current;
            view! { <option value=v selected=sel>{l}</option> }
        })
        .collect_view();
    view! {
        <div class="field inline">
            <label for=id>{label}</label>
            <select id=id on:change=move |ev| set(st, key, event_target_value(&ev))>{opts}</select>
        </div>
    }
    .into_any()
}

/// Chart kind, axes, series, metric, log scales and the value shown of every other axis.
#[component]
fn Controls(result: Arc<SweepResult>, chart: Chart, arrangement: Arrangement) -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let axes: Vec<AxisKey> = result.spec.axes.iter().map(|a| a.key).collect();
    let axis_options = |numeric_only: bool| -> Vec<(String, String)> {
        axes.iter()
            .filter(|k| !numeric_only || k.is_numeric())
            .map(|k| (k.name().to_string(), k.name().to_string()))
            .collect()
    };
    let kinds = vec![
        ("line".to_string(), "lines".to_string()),
        ("heatmap".to_string(), "heat map".to_string()),
        ("table".to_string(), "table only".to_string()),
    ];
    let metrics: Vec<(String, String)> = Metric::all().into_iter().map(|m| (m.key(), m.label())).collect();
    let mut out = vec![select_view(st, "chart-kind", "Chart", "kind", kinds, chart.kind.key().to_string())];
    if chart.kind != ChartKind::Table {
        out.push(select_view(st, "chart-metric", "Metric", "metric", metrics, chart.metric.key()));
    }
    if chart.kind != ChartKind::Table && !axes.is_empty() {
        let x = chart.x.map(|k| k.name().to_string()).unwrap_or_default();
        out.push(select_view(st, "chart-x", "x axis", "x", axis_options(chart.kind == ChartKind::Line), x));
    }
    if chart.kind == ChartKind::Heatmap {
        let y = chart.y.map(|k| k.name().to_string()).unwrap_or_default();
        out.push(select_view(st, "chart-y", "rows", "y", axis_options(false), y));
    }
    if chart.kind == ChartKind::Line {
        let boxes = axes
            .iter()
            .filter(|k| Some(**k) != chart.x)
            .map(|&k| {
                let on = chart.series.contains(&k);
                let series = chart.series.clone();
                let toggle = move |ev: leptos::ev::Event| {
                    let mut list = series.clone();
                    list.retain(|s| *s != k);
                    if event_target_checked(&ev) {
                        list.push(k);
                    }
                    let text: Vec<&str> = list.iter().map(|s| s.name()).collect();
                    set(st, "series", text.join(","));
                };
                view! {
                    <label>
                        <input type="checkbox" data-series=k.name() prop:checked=on on:change=toggle />
                        {k.name()}
                    </label>
                }
            })
            .collect_view();
        let log = |key: &'static str, label: &'static str, on: bool| {
            view! {
                <label>
                    <input
                        type="checkbox"
                        data-log=key
                        prop:checked=on
                        on:change=move |ev| set(st, key, if event_target_checked(&ev) { "1" } else { "0" }.into())
                    />
                    {label}
                </label>
            }
        };
        out.push(
            view! {
                <div class="field inline">
                    <span class="label">"lines per"</span>
                    <div class="checks">{boxes}</div>
                </div>
                <div class="field inline">
                    <span class="label">"scales"</span>
                    <div class="checks">
                        {log("logx", "log x", chart.log_x)} {log("logy", "log y", chart.log_y)}
                        {chart.efficiency_applies().then(|| log("eff", "scaling efficiency", chart.efficiency))}
                    </div>
                </div>
            }
            .into_any(),
        );
    }
    let fixed = arrangement
        .fixed
        .iter()
        .filter(|_| chart.kind != ChartKind::Table)
        .map(|(i, chosen)| {
            let key = axes[*i];
            let opts = result.spec.axes[*i]
                .values
                .iter()
                .map(|v| {
                    let s = v.to_string();
                    let sel = s == *chosen;
                    view! { <option value=s.clone() selected=sel>{s.clone()}</option> }
                })
                .collect_view();
            view! {
                <div class="field inline">
                    <label for=format!("chart-at-{}", key.name())>{format!("{} =", key.name())}</label>
                    <select
                        id=format!("chart-at-{}", key.name())
                        on:change=move |ev| st.url.update(false, |q| keys::set_at(q, key, &event_target_value(&ev)))
                    >
                        {opts}
                    </select>
                </div>
            }
        })
        .collect_view();
    view! { <div class="chart-controls row">{out} {fixed}</div> }
}

/// The line chart or heat map, and the breakdown along x.
#[component]
fn MainChart(result: Arc<SweepResult>, chart: Chart, arrangement: Arrangement) -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let metric = chart.metric;
    // The mode is part of the title, so exported charts say which model drew them.
    let title = match st.source.get_untracked() {
        SweepSource::Preset(_, p) => format!("{} — {}", p.title, result.spec.mode.label()),
        SweepSource::Custom(t) => fmperf_app::arrange::sweep_title(&result, &t.model, &t.system),
    };
    let main = match chart.kind {
        ChartKind::Table => view! { <p class="muted">"Table only: the points are listed below."</p> }.into_any(),
        ChartKind::Line => {
            let Some(x) = chart.x else { return ().into_any() };
            let eff = chart.efficiency && chart.efficiency_applies();
            let (series, empty) = line_series(&result, &arrangement, metric, eff);
            let y_label = if eff { "scaling efficiency [fraction]".to_string() } else { metric.label() };
            let not_drawn = (!empty.is_empty()).then(|| {
                view! {
                    <p class="muted small" id="sweep-not-drawn">
                        "Not drawn (no point has a value; the table says why): " {empty.join(", ")}
                    </p>
                }
            });
            let x_axis = if chart.log_x {
                let pow2 = matches!(x, AxisKey::Gpus | AxisKey::Domain | AxisKey::Tp | AxisKey::Pp | AxisKey::Dp);
                if pow2 { AxisKind::Pow2 } else { AxisKind::Log10 }
            } else {
                AxisKind::Linear
            };
            let y_axis = if chart.log_y && !eff { AxisKind::Log10 } else { AxisKind::Linear };
            view! {
                <div id="sweep-chart" data-kind="line">
                    <LineChart
                        title=title.clone()
                        x_label=axis_label(&result, x)
                        y_label=y_label
                        series=series
                        x_axis=x_axis
                        y_axis=y_axis
                        height=420.0
                    />
                    {not_drawn}
                </div>
            }
            .into_any()
        }
        ChartKind::Heatmap => {
            let (Some(x), Some(y)) = (chart.x, chart.y) else { return ().into_any() };
            let (data, best) = heat_data(&result, &arrangement, metric);
            let reverse = metric.lower_is_better();
            view! {
                <div id="sweep-chart" data-kind="heatmap">
                    <Heatmap
                        title=title.clone()
                        x_label=axis_label(&result, x)
                        y_label=axis_label(&result, y)
                        value_label=metric.label()
                        data=data
                        log=true
                        reverse=reverse
                        highlight=best
                        highlight_label="best point (outlined)"
                        height=440.0
                    />
                    <p class="muted small">
                        "Hatched: configurations exist but none fits in memory. Empty: no valid configuration "
                        "(or the point cannot be evaluated; see the table). Outlined: the best cell."
                    </p>
                </div>
            }
            .into_any()
        }
    };
    let breakdown = (chart.kind != ChartKind::Table && arrangement.x.is_some()).then(|| {
        let all = arrangement.groups(&result);
        let groups: Vec<String> = all.iter().map(|(n, _)| n.clone()).collect();
        // Default: the group holding the best point.
        let best_group = || {
            let better = |a: f64, b: f64| if metric.lower_is_better() { a < b } else { a > b };
            let mut best: Option<(f64, &String)> = None;
            for (name, points) in &all {
                for v in points.iter().filter_map(|p| metric.value(p)) {
                    if best.is_none_or(|(b, _)| better(v, b)) {
                        best = Some((v, name));
                    }
                }
            }
            best.map(|(_, n)| n.clone()).or_else(|| groups.first().cloned()).unwrap_or_default()
        };
        let chosen = chart.breakdown_series.clone().filter(|c| groups.contains(c)).unwrap_or_else(best_group);
        let (components, bars) = breakdown_bars(&result, &arrangement, chart.breakdown, &chosen);
        let unit = match chart.breakdown {
            StudyBreakdown::Time => "iteration time [s]",
            StudyBreakdown::Memory => "memory per device [GB]",
        };
        let series_select = (groups.len() > 1).then(|| {
            let opts = groups
                .iter()
                .map(|g| {
                    let sel = *g == chosen;
                    view! { <option value=g.clone() selected=sel>{g.clone()}</option> }
                })
                .collect_view();
            view! {
                <div class="field inline">
                    <label for="breakdown-series">"for"</label>
                    <select id="breakdown-series" on:change=move |ev| set(st, "bs", event_target_value(&ev))>
                        {opts}
                    </select>
                </div>
            }
        });
        // Memory reads as every memory figure on the page does (1 decimal, as the table).
        let format = match chart.breakdown {
            StudyBreakdown::Time => crate::chart::ValueFormat::Auto,
            StudyBreakdown::Memory => fmperf_app::fmt::GB_FORMAT,
        };
        let bd = chart.breakdown;
        let x_name = arrangement.x.map(|i| arrangement.axes[i].name()).unwrap_or("");
        view! {
            <div class="row chart-controls">
                <h3>"Breakdown along " {x_name}</h3>
                <div class="field inline">
                    <label for="breakdown-kind">"show"</label>
                    <select id="breakdown-kind" on:change=move |ev| set(st, "bd", event_target_value(&ev))>
                        <option value="time" selected=bd == StudyBreakdown::Time>"iteration time"</option>
                        <option value="memory" selected=bd == StudyBreakdown::Memory>"memory per device"</option>
                    </select>
                </div>
                {series_select}
            </div>
            <div id="sweep-breakdown">
                <StackedBarChart
                    title=format!("{unit}: best configuration per point{}", if chosen.is_empty() { String::new() } else { format!(" ({chosen})") })
                    value_label=unit
                    components=components
                    bars=bars
                    orientation=Orientation::Vertical
                    height=320.0
                    format=format
                />
            </div>
        }
    });
    view! {
        {main}
        {breakdown}
    }
    .into_any()
}
