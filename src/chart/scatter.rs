//! Predicted-versus-measured scatter: log–log by default with one domain for both axes, a y = x
//! reference line, an optional ±N % band (with the share of points inside it in the legend), one
//! colour and marker per group, tooltip with the point's label, both values and the deviation.
//!
//! Convention: x is the reference (measured) value, y the estimate (predicted); the deviation
//! shown is (y − x) / x.

use fmperf_chart::cartesian::{AxisSpec, Cartesian, CartesianSpec, layout};
use fmperf_chart::format::format_percent;
use fmperf_chart::layout::Typography;
use fmperf_chart::marker::MarkerShape;
use fmperf_chart::nearest::nearest;
use fmperf_chart::path::coord;
use fmperf_chart::scale::extent;
use fmperf_chart::scatter::{agreement, identity_path, ratio_band_path, relative_error, shared_extent};
use fmperf_chart::{AxisKind, AxisOptions, ValueFormat};
use leptos::prelude::*;
use leptos::svg::Svg;

use super::frame::{
    Base, ChartModel, Common, Mark, Swatch, Target, axes_view, chart, empty_view, grid_view, label_or, legend_view,
    plot_clip, title_view, unique_id,
};

/// One point: reference value `x`, estimate `y`, and an optional label for the tooltip (e.g.
/// the model and system it stands for).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    pub label: Option<String>,
}

impl ScatterPoint {
    /// A point with a label.
    pub fn new(x: f64, y: f64, label: impl Into<String>) -> ScatterPoint {
        ScatterPoint { x, y, label: Some(label.into()) }
    }
}

/// A group of points drawn in one colour and marker (e.g. one source or one system).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ScatterGroup {
    pub name: String,
    pub points: Vec<ScatterPoint>,
}

#[derive(Clone, Debug, PartialEq)]
struct ScatterModel {
    base: Base,
    layout: Cartesian,
    x_label: String,
    y_label: String,
    /// Per point: group index, screen position.
    dots: Vec<(usize, (f64, f64))>,
    legend: Vec<(String, Swatch)>,
    reference: String,
    band: String,
    clip_id: String,
}

struct ScatterInputs<'a> {
    width: f64,
    height: f64,
    title: String,
    x_label: String,
    y_label: String,
    groups: &'a [ScatterGroup],
    x_axis: AxisKind,
    y_axis: AxisKind,
    format: ValueFormat,
    reference: bool,
    band_percent: Option<f64>,
    clip_id: String,
}

impl ScatterModel {
    fn build(inp: ScatterInputs<'_>) -> ScatterModel {
        let (xk, yk) = (inp.x_axis.scale_kind(), inp.y_axis.scale_kind());
        let pairs: Vec<(f64, f64)> = inp.groups.iter().flat_map(|g| g.points.iter().map(|p| (p.x, p.y))).collect();
        let drawable: Vec<(f64, f64)> =
            pairs.iter().copied().filter(|&(x, y)| xk.accepts(x) && yk.accepts(y)).collect();
        let (x_extent, y_extent) = if xk == yk {
            let shared = shared_extent(&drawable, xk);
            (shared, shared)
        } else {
            (extent(drawable.iter().map(|p| p.0), xk), extent(drawable.iter().map(|p| p.1), yk))
        };
        let band = inp.band_percent.filter(|p| *p > 0.0 && *p < 100.0);
        let stats = band.and_then(|p| agreement(&pairs, p).map(|a| (p, a)));
        let mut legend: Vec<(String, Swatch)> =
            inp.groups.iter().enumerate().map(|(i, g)| (g.name.clone(), Swatch::Marker(i))).collect();
        if inp.reference {
            legend.push(("y = x".to_string(), Swatch::Reference));
        }
        if let Some((p, a)) = stats {
            let share = format_percent(a.within, 2);
            legend.push((format!("±{p} % ({share} of points)"), Swatch::Band));
        }
        let layout = layout(&CartesianSpec {
            width: inp.width,
            height: inp.height,
            title: inp.title.clone(),
            legend: legend.iter().map(|(l, _)| l.clone()).collect(),
            x_label: inp.x_label.clone(),
            y_label: inp.y_label.clone(),
            x: AxisSpec::Values {
                options: AxisOptions { kind: inp.x_axis, format: inp.format, ..AxisOptions::default() },
                extent: x_extent,
            },
            y: AxisSpec::Values {
                options: AxisOptions { kind: inp.y_axis, format: inp.format, ..AxisOptions::default() },
                extent: y_extent,
            },
            right_extra: 0.0,
            top_extra: 0.0,
            typography: Typography::default(),
        });
        let (Some(xa), Some(ya)) = (layout.x.values(), layout.y.values()) else { unreachable!("value axes") };
        let mut dots = Vec::new();
        let mut targets = Vec::new();
        for (gi, group) in inp.groups.iter().enumerate() {
            for p in &group.points {
                let (Some(sx), Some(sy)) = (xa.pos(p.x), ya.pos(p.y)) else { continue };
                dots.push((gi, (sx, sy)));
                let mut lines = Vec::with_capacity(5);
                lines.push(p.label.clone().unwrap_or_else(|| group.name.clone()));
                if p.label.is_some() && !group.name.is_empty() {
                    lines.push(group.name.clone());
                }
                lines.push(format!("{}: {}", label_or(&inp.x_label, "x"), inp.format.format(p.x)));
                lines.push(format!("{}: {}", label_or(&inp.y_label, "y"), inp.format.format(p.y)));
                if let Some(e) = relative_error(p.y, p.x) {
                    let sign = if e > 0.0 { "+" } else { "" };
                    lines.push(format!("deviation: {sign}{}", format_percent(e, 2)));
                }
                targets.push(Target { anchor: (sx, sy), lines, mark: Mark::Ring(7.5) });
            }
        }
        let reference = if inp.reference { identity_path(&xa.scale, &ya.scale) } else { String::new() };
        let band_d = band.map(|p| ratio_band_path(&xa.scale, &ya.scale, p)).unwrap_or_default();
        let hidden = pairs.len() - dots.len();
        let mut summary = format!(
            "Scatter plot of {} against {}: {} points in {} groups ({}).",
            label_or(&inp.y_label, "y"),
            label_or(&inp.x_label, "x"),
            dots.len(),
            inp.groups.len(),
            inp.groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(", ")
        );
        if let Some((p, a)) = stats {
            summary.push_str(&format!(
                " {} of {} points within ±{p} %; mean absolute deviation {}.",
                format_percent(a.within, 2),
                a.count,
                format_percent(a.mean_abs, 2)
            ));
        }
        if hidden > 0 {
            summary.push_str(&format!(" {hidden} points not drawn (not positive on a log axis)."));
        }
        ScatterModel {
            base: Base { size: (inp.width, inp.height), targets, summary },
            layout,
            x_label: inp.x_label,
            y_label: inp.y_label,
            dots,
            legend,
            reference,
            band: band_d,
            clip_id: inp.clip_id,
        }
    }
}

impl ChartModel for ScatterModel {
    fn base(&self) -> &Base {
        &self.base
    }

    fn hit(&self, p: (f64, f64)) -> Option<usize> {
        nearest(self.base.targets.iter().enumerate().map(|(i, t)| (0, i, t.anchor)), p, 24.0).map(|h| h.index)
    }
}

fn draw(m: &ScatterModel) -> AnyView {
    let c = &m.layout;
    let axes = axes_view(c, m.x_label.clone(), m.y_label.clone());
    if m.dots.is_empty() {
        return view! { {title_view(c)} {grid_view(c)} {axes} {empty_view(c, "no data to show")} }.into_any();
    }
    let clip = format!("url(#{})", m.clip_id);
    let band = (!m.band.is_empty()).then(|| view! { <path class="fc-band" d=m.band.clone() /> });
    let reference = (!m.reference.is_empty()).then(|| view! { <path class="fc-ref" d=m.reference.clone() /> });
    let dots = m
        .dots
        .iter()
        .map(|&(g, (x, y))| {
            view! { <path class=format!("fc-mark fc-s{}", g % 8) d=MarkerShape::for_series(g).path(x, y, 4.5) /> }
        })
        .collect_view();
    view! {
        {title_view(c)}
        {legend_view(c, m.legend.clone())}
        {grid_view(c)}
        {plot_clip(&m.clip_id, c.plot())}
        <g clip-path=clip>{band}{reference}</g>
        <g class="fc-dots">{dots}</g>
        {axes}
    }
    .into_any()
}

/// A scatter plot of estimates against reference values.
#[component]
pub fn ScatterChart(
    /// Chart title (also the export file name).
    #[prop(into)]
    title: Signal<String>,
    /// x-axis label with unit, e.g. `measured step time [s]`.
    #[prop(into)]
    x_label: Signal<String>,
    /// y-axis label with unit, e.g. `predicted step time [s]`.
    #[prop(into)]
    y_label: Signal<String>,
    /// Point groups (one colour and marker each).
    #[prop(into)]
    groups: Signal<Vec<ScatterGroup>>,
    /// x axis kind (default `Log10`). When both axes are of the same kind they share one domain.
    #[prop(optional, into)]
    x_axis: MaybeProp<AxisKind>,
    /// y axis kind (default `Log10`).
    #[prop(optional, into)]
    y_axis: MaybeProp<AxisKind>,
    /// How values are written (default `Auto`).
    #[prop(optional, into)]
    format: MaybeProp<ValueFormat>,
    /// Draw the y = x line (default true).
    #[prop(optional, into)]
    reference: MaybeProp<bool>,
    /// Draw a ±N % band around y = x and report the share of points inside (default none).
    #[prop(optional, into)]
    band_percent: MaybeProp<f64>,
    /// Height in px (default 440).
    #[prop(optional, into)]
    height: MaybeProp<f64>,
    /// Show SVG/PNG download buttons under the chart (default true).
    #[prop(optional, into)]
    export: MaybeProp<bool>,
    /// Reference to the `<svg>`, for callers that export it themselves.
    #[prop(optional)]
    svg_ref: NodeRef<Svg>,
) -> impl IntoView {
    let clip_id = unique_id("fc-clip");
    let build = move |width: f64, height: Option<f64>| {
        groups.with(|groups| {
            ScatterModel::build(ScatterInputs {
                width,
                height: height.unwrap_or(440.0),
                title: title.get(),
                x_label: x_label.get(),
                y_label: y_label.get(),
                groups,
                x_axis: x_axis.get().unwrap_or(AxisKind::Log10),
                y_axis: y_axis.get().unwrap_or(AxisKind::Log10),
                format: format.get().unwrap_or_default(),
                reference: reference.get().unwrap_or(true),
                band_percent: band_percent.get(),
                clip_id: clip_id.clone(),
            })
        })
    };
    chart(Common { title, height, export, svg_ref }, build, draw)
}
