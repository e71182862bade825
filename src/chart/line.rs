//! Multi-series line chart: linear, log10 or power-of-two axes, markers, gaps for missing points,
//! legend, tooltip with series, x and y.

use fmperf_chart::cartesian::{AxisSpec, Cartesian, CartesianSpec, layout};
use fmperf_chart::layout::Typography;
use fmperf_chart::marker::series_style;
use fmperf_chart::nearest::nearest_by_x;
use fmperf_chart::path::{coord, line_path, project};
use fmperf_chart::scale::extent;
use fmperf_chart::{AxisKind, AxisOptions, ValueFormat};
use leptos::prelude::*;
use leptos::svg::Svg;

use super::frame::{
    Base, ChartModel, Common, Mark, Swatch, Target, axes_view, chart, empty_view, grid_view, label_or, legend_view,
    title_view,
};

/// One line: a name for the legend and `(x, y)` points in x order; `y = None` is a missing
/// value (the line breaks there). Points that cannot be placed (y ≤ 0 on a log axis) break the
/// line too.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, Option<f64>)>,
}

impl Series {
    /// A series from a name and points.
    pub fn new(name: impl Into<String>, points: Vec<(f64, Option<f64>)>) -> Series {
        Series { name: name.into(), points }
    }
}

/// Markers are drawn when no series has more points than this (unless forced).
const AUTO_MARKER_LIMIT: usize = 40;

/// One drawn series.
#[derive(Clone, Debug, PartialEq)]
struct LineGeom {
    /// Series index (colour and marker).
    index: usize,
    name: String,
    /// Path data of the line.
    d: String,
    /// Marker positions.
    dots: Vec<(f64, f64)>,
}

/// Everything the line chart draws, computed from the props and the width.
#[derive(Clone, Debug, PartialEq)]
struct LineModel {
    base: Base,
    layout: Cartesian,
    x_label: String,
    y_label: String,
    lines: Vec<LineGeom>,
    markers: bool,
    /// Points given but not drawn.
    hidden: usize,
}

struct LineInputs<'a> {
    width: f64,
    height: f64,
    title: String,
    x_label: String,
    y_label: String,
    series: &'a [Series],
    x_axis: AxisKind,
    y_axis: AxisKind,
    x_format: ValueFormat,
    y_format: ValueFormat,
    y_zero: bool,
    markers: Option<bool>,
}

impl LineModel {
    fn build(inp: LineInputs<'_>) -> LineModel {
        let (xk, yk) = (inp.x_axis.scale_kind(), inp.y_axis.scale_kind());
        let drawable = |s: &Series| {
            s.points
                .iter()
                .filter_map(|&(x, y)| y.filter(|y| xk.accepts(x) && yk.accepts(*y)).map(|y| (x, y)))
                .collect::<Vec<_>>()
        };
        let all: Vec<(f64, f64)> = inp.series.iter().flat_map(drawable).collect();
        let x_extent = extent(all.iter().map(|p| p.0), xk);
        let y_extent = extent(all.iter().map(|p| p.1), yk);
        let legend: Vec<String> =
            if inp.series.len() > 1 { inp.series.iter().map(|s| s.name.clone()).collect() } else { Vec::new() };
        let layout = layout(&CartesianSpec {
            width: inp.width,
            height: inp.height,
            title: inp.title.clone(),
            legend,
            x_label: inp.x_label.clone(),
            y_label: inp.y_label.clone(),
            x: AxisSpec::Values {
                options: AxisOptions { kind: inp.x_axis, format: inp.x_format, ..AxisOptions::default() },
                extent: x_extent,
            },
            y: AxisSpec::Values {
                options: AxisOptions {
                    kind: inp.y_axis,
                    format: inp.y_format,
                    include_zero: inp.y_zero,
                    ..AxisOptions::default()
                },
                extent: y_extent,
            },
            right_extra: 0.0,
            top_extra: 0.0,
            typography: Typography::default(),
        });
        let (Some(xa), Some(ya)) = (layout.x.values(), layout.y.values()) else { unreachable!("value axes") };
        let longest = inp.series.iter().map(|s| s.points.len()).max().unwrap_or(0);
        let markers = inp.markers.unwrap_or(longest <= AUTO_MARKER_LIMIT);
        let mut lines = Vec::new();
        let mut targets = Vec::new();
        let mut hidden = 0;
        for (i, s) in inp.series.iter().enumerate() {
            let projected = project(&s.points, &xa.scale, &ya.scale);
            hidden += projected.iter().filter(|p| p.is_none()).count();
            let dots: Vec<(f64, f64)> = projected.iter().flatten().copied().collect();
            for (&(x, y), p) in s.points.iter().zip(&projected) {
                let (Some(anchor), Some(y)) = (p, y) else { continue };
                let mut lines = Vec::with_capacity(3);
                if !s.name.is_empty() {
                    lines.push(s.name.clone());
                }
                lines.push(format!("{}: {}", label_or(&inp.x_label, "x"), inp.x_format.format(x)));
                lines.push(format!("{}: {}", label_or(&inp.y_label, "y"), inp.y_format.format(y)));
                targets.push(Target { anchor: *anchor, lines, mark: Mark::Ring(6.0) });
            }
            lines.push(LineGeom { index: i, name: s.name.clone(), d: line_path(projected), dots });
        }
        let summary = summarize(&inp, x_extent, y_extent, hidden);
        LineModel {
            base: Base { size: (inp.width, inp.height), targets, summary },
            layout,
            x_label: inp.x_label,
            y_label: inp.y_label,
            lines,
            markers,
            hidden,
        }
    }
}

/// The `<desc>` text: chart kind, series with point counts, axis ranges.
fn summarize(inp: &LineInputs<'_>, x: Option<(f64, f64)>, y: Option<(f64, f64)>, hidden: usize) -> String {
    let series: Vec<String> = inp.series.iter().map(|s| format!("{} ({} points)", s.name, s.points.len())).collect();
    let range = |label: &str, fmt: ValueFormat, r: Option<(f64, f64)>| match r {
        Some((a, b)) => format!("{} from {} to {}", label_or(label, "value"), fmt.format(a), fmt.format(b)),
        None => format!("no {} values", label_or(label, "value")),
    };
    let mut text = format!(
        "Line chart with {} series: {}. {}; {}.",
        inp.series.len(),
        series.join(", "),
        range(&inp.x_label, inp.x_format, x),
        range(&inp.y_label, inp.y_format, y)
    );
    if hidden > 0 {
        text.push_str(&format!(" {hidden} points not drawn (missing, or not positive on a log axis)."));
    }
    text
}

impl ChartModel for LineModel {
    fn base(&self) -> &Base {
        &self.base
    }

    fn hit(&self, p: (f64, f64)) -> Option<usize> {
        let plot = self.layout.plot();
        if p.1 < plot.y - 12.0 || p.1 > plot.bottom() + 12.0 {
            return None;
        }
        let candidates = self.base.targets.iter().enumerate().map(|(i, t)| (0, i, t.anchor));
        nearest_by_x(candidates, p, 40.0).map(|hit| hit.index)
    }

    fn stride(&self) -> usize {
        self.lines.iter().map(|l| l.dots.len()).max().unwrap_or(1)
    }
}

fn draw(m: &LineModel) -> AnyView {
    let c = &m.layout;
    if m.base.targets.is_empty() {
        return view! {
            {title_view(c)}
            {grid_view(c)}
            {axes_view(c, m.x_label.clone(), m.y_label.clone())}
            {empty_view(c, "no data to show")}
        }
        .into_any();
    }
    let legend: Vec<(String, Swatch)> = m.lines.iter().map(|l| (l.name.clone(), Swatch::Line(l.index))).collect();
    let markers = m.markers;
    let series = m
        .lines
        .iter()
        .map(|LineGeom { index: i, d, dots, .. }| {
            let st = series_style(*i);
            let shape = st.marker;
            let marks = markers.then(|| {
                dots.iter().map(|&(x, y)| view! { <path class="fc-mark" d=shape.path(x, y, 3.5) /> }).collect_view()
            });
            view! {
                <g
                    class=format!("fc-series fc-s{}", st.color)
                    data-style=format!("{}|{:?}|{}", st.color, st.marker, st.dash.unwrap_or("solid"))
                >
                    <path class="fc-line" d=d.clone() stroke-dasharray=st.dash />
                    {marks}
                </g>
            }
        })
        .collect_view();
    view! {
        {title_view(c)}
        {legend_view(c, legend)}
        {grid_view(c)}
        <g class="fc-plot">{series}</g>
        {axes_view(c, m.x_label.clone(), m.y_label.clone())}
    }
    .into_any()
}

/// A line chart of one or more series.
#[component]
pub fn LineChart(
    /// Chart title (also the export file name).
    #[prop(into)]
    title: Signal<String>,
    /// x-axis label with its unit, e.g. `accelerators` or `global batch [sequences]`.
    #[prop(into)]
    x_label: Signal<String>,
    /// y-axis label with its unit, e.g. `step time [s]`.
    #[prop(into)]
    y_label: Signal<String>,
    /// The lines.
    #[prop(into)]
    series: Signal<Vec<Series>>,
    /// x axis kind (default linear; `Pow2` for device counts, `Log10` for wide ranges).
    #[prop(optional, into)]
    x_axis: MaybeProp<AxisKind>,
    /// y axis kind (default linear).
    #[prop(optional, into)]
    y_axis: MaybeProp<AxisKind>,
    /// How x values are written in tooltips and ticks (default `Auto`).
    #[prop(optional, into)]
    x_format: MaybeProp<ValueFormat>,
    /// How y values are written (default `Auto`).
    #[prop(optional, into)]
    y_format: MaybeProp<ValueFormat>,
    /// Start a linear y axis at zero (default false).
    #[prop(optional, into)]
    y_zero: MaybeProp<bool>,
    /// Draw point markers: default when every series has at most 40 points.
    #[prop(optional, into)]
    markers: MaybeProp<bool>,
    /// Height in px (default 360).
    #[prop(optional, into)]
    height: MaybeProp<f64>,
    /// Show SVG/PNG download buttons under the chart (default true).
    #[prop(optional, into)]
    export: MaybeProp<bool>,
    /// Reference to the `<svg>`, for callers that export it themselves.
    #[prop(optional)]
    svg_ref: NodeRef<Svg>,
) -> impl IntoView {
    let build = move |width: f64, height: Option<f64>| {
        series.with(|series| {
            LineModel::build(LineInputs {
                width,
                height: height.unwrap_or(360.0),
                title: title.get(),
                x_label: x_label.get(),
                y_label: y_label.get(),
                series,
                x_axis: x_axis.get().unwrap_or_default(),
                y_axis: y_axis.get().unwrap_or_default(),
                x_format: x_format.get().unwrap_or_default(),
                y_format: y_format.get().unwrap_or_default(),
                y_zero: y_zero.get().unwrap_or(false),
                markers: markers.get(),
            })
        })
    };
    chart(Common { title, height, export, svg_ref }, build, draw)
}
