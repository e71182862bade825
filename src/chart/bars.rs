//! Stacked bar chart: one bar per item, its components stacked in legend order; tooltip with the
//! component's value, its share of the bar, and the bar's total. Horizontal by default (long
//! item names read well and it fits a phone); vertical on request.

use fmperf_chart::bars::{BarStack, stack, stacks_extent};
use fmperf_chart::cartesian::{AxisSpec, Cartesian, CartesianSpec, layout};
use fmperf_chart::format::format_percent;
use fmperf_chart::layout::{Rect, Typography, text_width};
use fmperf_chart::path::coord;
use fmperf_chart::{AxisOptions, ValueFormat};
use leptos::prelude::*;
use leptos::svg::Svg;

use super::frame::{
    Base, ChartModel, Common, Mark, Swatch, Target, axes_view, chart, empty_view, grid_view, legend_view, title_view,
};

/// One bar: its label and one value per component (same order as the chart's `components`;
/// missing trailing values count as 0).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Bar {
    pub label: String,
    pub values: Vec<f64>,
}

impl Bar {
    /// A bar from a label and component values.
    pub fn new(label: impl Into<String>, values: Vec<f64>) -> Bar {
        Bar { label: label.into(), values }
    }
}

/// Direction of the bars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Orientation {
    /// Bars grow to the right, items listed top to bottom.
    #[default]
    Horizontal,
    /// Bars grow upwards, items left to right.
    Vertical,
}

/// A drawn segment: component index and rectangle.
type Piece = (usize, Rect);

#[derive(Clone, Debug, PartialEq)]
struct BarsModel {
    base: Base,
    layout: Cartesian,
    value_label: String,
    components: Vec<String>,
    pieces: Vec<Piece>,
    /// Total labels: text, x, y, anchor.
    totals: Vec<(String, f64, f64, &'static str)>,
}

struct BarsInputs<'a> {
    width: f64,
    height: Option<f64>,
    title: String,
    value_label: String,
    components: Vec<String>,
    bars: &'a [Bar],
    orientation: Orientation,
    format: ValueFormat,
}

/// Height that gives each horizontal bar about 30 px.
fn auto_height(bars: usize, legend_rows_guess: usize) -> f64 {
    (110.0 + 16.0 * legend_rows_guess as f64 + 30.0 * bars as f64).clamp(200.0, 900.0)
}

impl BarsModel {
    fn build(inp: BarsInputs<'_>) -> BarsModel {
        let t = Typography::default();
        let horizontal = inp.orientation == Orientation::Horizontal;
        let stacks: Vec<BarStack> = inp.bars.iter().map(|b| stack(&b.values)).collect();
        let (lo, hi) = stacks_extent(&stacks);
        let height = inp.height.unwrap_or_else(|| {
            if horizontal { auto_height(inp.bars.len(), 1 + inp.components.len() / 4) } else { 360.0 }
        });
        let values = AxisSpec::Values {
            options: AxisOptions { include_zero: true, format: inp.format, ..AxisOptions::default() },
            extent: (lo < hi).then_some((lo, hi)),
        };
        let categories = AxisSpec::Categories {
            labels: inp.bars.iter().map(|b| b.label.clone()).collect(),
            inner: 0.28,
            outer: 0.14,
        };
        let (x, y, x_label, y_label) = if horizontal {
            (values, categories, inp.value_label.clone(), String::new())
        } else {
            (categories, values, String::new(), inp.value_label.clone())
        };
        let layout = layout(&CartesianSpec {
            width: inp.width,
            height,
            title: inp.title.clone(),
            legend: inp.components.clone(),
            x_label,
            y_label,
            x,
            y,
            right_extra: 0.0,
            typography: t,
        });
        let (value_axis, bands) =
            if horizontal { (layout.x.values(), layout.y.bands()) } else { (layout.y.values(), layout.x.bands()) };
        let (Some(axis), Some(bands)) = (value_axis, bands) else { unreachable!("one value axis, one band axis") };
        let mut pieces = Vec::new();
        let mut targets = Vec::new();
        let mut totals = Vec::new();
        for (i, (bar, s)) in inp.bars.iter().zip(&stacks).enumerate() {
            let (b0, bw) = (bands.band_start(i), bands.width());
            let rect_of = |a: f64, b: f64| {
                let (p, q) = (axis.pos(a).unwrap_or(0.0), axis.pos(b).unwrap_or(0.0));
                if horizontal {
                    Rect::new(p.min(q), b0, (q - p).abs(), bw)
                } else {
                    Rect::new(b0, p.min(q), bw, (q - p).abs())
                }
            };
            for seg in &s.segments {
                let rect = rect_of(seg.start, seg.end);
                pieces.push((seg.component, rect));
                let name =
                    inp.components.get(seg.component).cloned().unwrap_or_else(|| format!("#{}", seg.component + 1));
                let lines = vec![
                    bar.label.clone(),
                    format!("{name}: {} ({})", inp.format.format(seg.value), format_percent(seg.share, 3)),
                    format!("total: {}", inp.format.format(s.total())),
                ];
                let anchor = (rect.x + rect.width / 2.0, rect.y + rect.height / 2.0);
                targets.push(Target { anchor, lines, mark: Mark::Outline(rect) });
            }
            // Total at the end of the bar, when it fits inside the chart.
            let text = inp.format.format(s.total());
            let end = axis.pos(s.positive).unwrap_or(0.0);
            if horizontal {
                if end + 6.0 + text_width(&text, t.tick_px) < inp.width - 4.0 && !s.segments.is_empty() {
                    totals.push((text, end + 5.0, b0 + bw / 2.0 + t.tick_px * 0.35, "start"));
                }
            } else if text_width(&text, t.tick_px) <= bands.step() && !s.segments.is_empty() {
                totals.push((text, b0 + bw / 2.0, end - 5.0, "middle"));
            }
        }
        let summary = format!(
            "Stacked bar chart of {} with {} bars ({}), each split into {}.",
            if inp.value_label.is_empty() { "values".to_string() } else { inp.value_label.clone() },
            inp.bars.len(),
            inp.bars
                .iter()
                .zip(&stacks)
                .map(|(b, s)| format!("{}: {}", b.label, inp.format.format(s.total())))
                .collect::<Vec<_>>()
                .join(", "),
            inp.components.join(", ")
        );
        BarsModel {
            base: Base { size: (inp.width, height), targets, summary },
            layout,
            value_label: inp.value_label,
            components: inp.components,
            pieces,
            totals,
        }
    }
}

impl ChartModel for BarsModel {
    fn base(&self) -> &Base {
        &self.base
    }

    fn hit(&self, p: (f64, f64)) -> Option<usize> {
        self.pieces.iter().position(|(_, r)| {
            // thin segments get a little extra room to be hovered
            let grow = |size: f64| ((4.0 - size) / 2.0).max(0.0);
            let (gx, gy) = (grow(r.width), grow(r.height));
            Rect::new(r.x - gx, r.y - gy, r.width + 2.0 * gx, r.height + 2.0 * gy).contains(p)
        })
    }
}

fn draw(m: &BarsModel) -> AnyView {
    let c = &m.layout;
    let axes = axes_view(c, if c.x.values().is_some() { m.value_label.clone() } else { String::new() }, {
        if c.y.values().is_some() { m.value_label.clone() } else { String::new() }
    });
    if m.pieces.is_empty() {
        return view! { {title_view(c)} {grid_view(c)} {axes} {empty_view(c, "no data to show")} }.into_any();
    }
    let legend: Vec<(String, Swatch)> =
        m.components.iter().enumerate().map(|(i, n)| (n.clone(), Swatch::Box(i))).collect();
    let pieces = m
        .pieces
        .iter()
        .map(|(k, r)| {
            view! {
                <rect
                    class=format!("fc-bar fc-s{}", k % 8)
                    x=coord(r.x)
                    y=coord(r.y)
                    width=coord(r.width)
                    height=coord(r.height)
                />
            }
        })
        .collect_view();
    let totals = m
        .totals
        .iter()
        .map(|(text, x, y, anchor)| {
            view! { <text class="fc-tick" x=coord(*x) y=coord(*y) text-anchor=*anchor>{text.clone()}</text> }
        })
        .collect_view();
    view! {
        {title_view(c)}
        {legend_view(c, legend)}
        {grid_view(c)}
        <g class="fc-bars">{pieces}</g>
        {axes}
        <g class="fc-totals">{totals}</g>
    }
    .into_any()
}

/// A stacked bar chart.
#[component]
pub fn StackedBarChart(
    /// Chart title (also the export file name).
    #[prop(into)]
    title: Signal<String>,
    /// Label of the value axis with its unit, e.g. `time per step [s]` or `memory [GB]`.
    #[prop(into)]
    value_label: Signal<String>,
    /// Component names, in stacking order (the legend).
    #[prop(into)]
    components: Signal<Vec<String>>,
    /// The bars.
    #[prop(into)]
    bars: Signal<Vec<Bar>>,
    /// Horizontal (default) or vertical bars.
    #[prop(optional, into)]
    orientation: MaybeProp<Orientation>,
    /// How values are written (default `Auto`).
    #[prop(optional, into)]
    format: MaybeProp<ValueFormat>,
    /// Height in px (default: about 30 px per horizontal bar, 360 for vertical).
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
        bars.with(|bars| {
            BarsModel::build(BarsInputs {
                width,
                height,
                title: title.get(),
                value_label: value_label.get(),
                components: components.get(),
                bars,
                orientation: orientation.get().unwrap_or_default(),
                format: format.get().unwrap_or_default(),
            })
        })
    };
    chart(Common { title, height, export, svg_ref }, build, draw)
}
