//! Stacked bar chart: one bar per item, its components stacked in legend order; tooltip with the
//! component's value, its share of the bar, and the bar's total. Horizontal by default (long
//! item names read well and it fits a phone); vertical on request.
//!
//! With a [`Limit`] (a device's memory capacity) the chart also draws the limit as a labelled line
//! (the value axis reaching it), each bar's band as a whisker, and marks the bars that may not fit
//! (dashed outline in the warning colour, `!` after the total) or do not (solid outline in the alert
//! colour, `×`), with legend entries saying what the marks mean; the geometry is
//! `fmperf_chart::limit`'s.

use fmperf_chart::bars::{BarStack, stack, stacks_extent};
use fmperf_chart::cartesian::{AxisSpec, BAR_STEP, Cartesian, CartesianSpec, height_for_bands, layout};
use fmperf_chart::format::format_percent;
use fmperf_chart::layout::{BOLD, Rect, Typography, text_width, wrap_text};
pub use fmperf_chart::limit::Standing;
use fmperf_chart::limit::{
    LimitLine, clear_of_line, end_label, end_room, extent_with, label_room, limit_line, outline_path, span_rect,
    whisker,
};
use fmperf_chart::path::coord;
use fmperf_chart::{AxisOptions, ValueFormat};
use leptos::prelude::*;
use leptos::svg::Svg;

use super::frame::{
    Base, ChartModel, Common, Mark, Swatch, Target, axes_view, chart, empty_view, flag_class, grid_view, legend_view,
    title_view,
};

/// One bar: its label and one value per component (same order as the chart's `components`;
/// missing trailing values count as 0); against a [`Limit`], its band, standing and the sentence
/// that says so.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Bar {
    pub label: String,
    pub values: Vec<f64>,
    /// The band of the bar's total `(low, high)`, in value units (drawn as a whisker).
    pub range: Option<(f64, f64)>,
    /// How the bar stands against the chart's limit.
    pub standing: Option<Standing>,
    /// The sentence for the tooltip and the description (e.g. `needs 68.6 ± 4.7 of 85.5 GB: …`).
    pub sentence: Option<String>,
}

impl Bar {
    /// A bar from a label and component values.
    pub fn new(label: impl Into<String>, values: Vec<f64>) -> Bar {
        Bar { label: label.into(), values, ..Bar::default() }
    }

    /// This bar against a limit: its band `range`, its `standing` and the `sentence` that says it.
    pub fn against_limit(self, range: Option<(f64, f64)>, standing: Option<Standing>, sentence: String) -> Bar {
        Bar { range, standing, sentence: Some(sentence), ..self }
    }
}

/// A limit on the value axis (a device's capacity) and the words of its marks.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Limit {
    /// Where the line goes, in value units.
    pub value: f64,
    /// The line's label, e.g. `capacity 85.5 GB`.
    pub label: String,
    /// Legend words of the whisker, of a bar that may not fit, of a bar that does not.
    pub range_words: String,
    pub near_words: String,
    pub over_words: String,
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

/// A total label at a bar's end: text, the bar's standing (its glyph follows the text), x, y, anchor.
type EndLabel = (String, Option<Standing>, f64, f64, &'static str);

/// A mark drawn for a limit, as one `<path>`: class, path data, and for a bar's outline its
/// standing's key (`data-fits`) and index (`data-bar`).
type MarkPath = (&'static str, String, Option<&'static str>, Option<usize>);

/// What a limit adds to the drawing.
#[derive(Clone, Debug, PartialEq, Default)]
struct LimitMarks {
    /// The line, its value and label.
    line: Option<(LimitLine, f64, String)>,
    /// The bars' whiskers and outlines, and the line, in drawing order.
    paths: Vec<MarkPath>,
}

#[derive(Clone, Debug, PartialEq)]
struct BarsModel {
    base: Base,
    layout: Cartesian,
    value_label: String,
    /// Legend entries: the components, then the limit's marks that occur.
    legend: Vec<(String, Swatch)>,
    pieces: Vec<Piece>,
    totals: Vec<EndLabel>,
    marks: LimitMarks,
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
    limit: Option<Limit>,
}

/// `total` and the glyph of `standing` after it, as drawn at a bar's end.
fn end_text(total: &str, standing: Option<Standing>) -> String {
    match standing.and_then(Standing::glyph) {
        Some(g) => format!("{total} {g}"),
        None => total.to_string(),
    }
}

/// The legend: components, then (with a limit) the whisker and the marks that some bar has.
fn legend_entries(components: &[String], bars: &[Bar], limit: Option<&Limit>) -> Vec<(String, Swatch)> {
    let mut out: Vec<(String, Swatch)> =
        components.iter().enumerate().map(|(i, n)| (n.clone(), Swatch::Box(i))).collect();
    let Some(l) = limit else { return out };
    if bars.iter().any(|b| b.range.is_some()) {
        out.push((l.range_words.clone(), Swatch::Range));
    }
    for (standing, words) in [(Standing::Near, &l.near_words), (Standing::Over, &l.over_words)] {
        if let (true, Some(g)) = (bars.iter().any(|b| b.standing == Some(standing)), standing.glyph()) {
            out.push((format!("{g} {words}"), Swatch::Flag(standing)));
        }
    }
    out
}

impl BarsModel {
    fn build(inp: BarsInputs<'_>) -> BarsModel {
        let t = Typography::default();
        let horizontal = inp.orientation == Orientation::Horizontal;
        let stacks: Vec<BarStack> = inp.bars.iter().map(|b| stack(&b.values)).collect();
        let limit = inp.limit.as_ref().filter(|l| l.value.is_finite());
        let ranges: Vec<(f64, f64)> =
            if limit.is_some() { inp.bars.iter().filter_map(|b| b.range).collect() } else { Vec::new() };
        let (lo, hi) = extent_with(stacks_extent(&stacks), limit.map(|l| l.value), &ranges);
        let legend = legend_entries(&inp.components, inp.bars, limit);
        let ends: Vec<String> = inp
            .bars
            .iter()
            .zip(&stacks)
            .map(|(b, s)| end_text(&inp.format.format(s.total()), limit.and(b.standing)))
            .collect();
        let values = AxisSpec::Values {
            // Against a limit the axis ends near the last whisker, not at the next round figure
            // (at a phone's width that would leave the bars a third of the plot).
            options: AxisOptions {
                include_zero: true,
                format: inp.format,
                nice: limit.is_none(),
                ..AxisOptions::default()
            },
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
        let mut spec = CartesianSpec {
            width: inp.width,
            height: inp.height.unwrap_or(360.0),
            title: inp.title.clone(),
            legend: legend.iter().map(|(l, _)| l.clone()).collect(),
            x_label,
            y_label,
            x,
            y,
            // With a limit every end label is drawn (the line's label needs room above the plot).
            right_extra: if limit.is_some() && horizontal { end_room(&ends, t.tick_px) } else { 0.0 },
            top_extra: if limit.is_some() && horizontal { label_room(t.tick_px) } else { 0.0 },
            typography: t,
        };
        // Horizontal bars: room for each bar's label on two lines (fewer, cut, past 900 px).
        if let (None, true) = (inp.height, horizontal) {
            spec.height = height_for_bands(&mut spec, BAR_STEP).clamp(200.0, 900.0);
        }
        let height = spec.height;
        let layout = layout(&spec);
        let (value_axis, bands) =
            if horizontal { (layout.x.values(), layout.y.bands()) } else { (layout.y.values(), layout.x.bands()) };
        let (Some(axis), Some(bands)) = (value_axis, bands) else { unreachable!("one value axis, one band axis") };
        let mut pieces = Vec::new();
        let mut targets = Vec::new();
        let mut totals = Vec::new();
        let pos = |v: f64| axis.pos(v).unwrap_or(0.0);
        let mut marks = LimitMarks::default();
        let line = limit.map(|l| {
            limit_line(
                pos(l.value),
                layout.plot(),
                text_width(&l.label, t.tick_px) * BOLD,
                inp.width,
                t.pad,
                horizontal,
            )
        });
        // The sentences in the tooltips wrap to the chart's width.
        let tip_width = (inp.width - 40.0).max(120.0);
        for (i, ((bar, s), end)) in inp.bars.iter().zip(&stacks).zip(&ends).enumerate() {
            let (b0, bw) = (bands.band_start(i), bands.width());
            let rect_of = |a: f64, b: f64| span_rect(pos(a), pos(b), b0, bw, horizontal);
            let mut reach = pos(s.positive);
            if let (Some(_), Some((r0, r1))) = (limit, bar.range) {
                let w = whisker(pos(r0), pos(r1), b0, bw, horizontal);
                reach = if horizontal { reach.max(w.to.0) } else { reach.min(w.to.1) };
                marks.paths.push(("fc-range", w.path(), None, None));
            }
            if let (Some(_), Some(st @ (Standing::Near | Standing::Over)), false) =
                (limit, bar.standing, s.segments.is_empty())
            {
                marks.paths.push((
                    flag_class(st),
                    outline_path(rect_of(s.negative, s.positive), 1.5),
                    Some(st.key()),
                    Some(i),
                ));
            }
            // The end label steps over the limit line rather than cross it.
            let extent = if horizontal { text_width(end, t.tick_px) } else { t.tick_px };
            let reach =
                clear_of_line(reach, extent, line.map(|l| if horizontal { l.from.0 } else { l.from.1 }), horizontal);
            let tip_tail: Vec<String> = match (limit, &bar.sentence) {
                (Some(_), Some(n)) => wrap_text(n, tip_width, t.label_px),
                _ => Vec::new(),
            };
            for seg in &s.segments {
                let rect = rect_of(seg.start, seg.end);
                pieces.push((seg.component, rect));
                let name =
                    inp.components.get(seg.component).cloned().unwrap_or_else(|| format!("#{}", seg.component + 1));
                let mut lines = vec![
                    bar.label.clone(),
                    format!("{name}: {} ({})", inp.format.format(seg.value), format_percent(seg.share, 3)),
                    format!("total: {}", inp.format.format(s.total())),
                ];
                lines.extend(tip_tail.iter().cloned());
                let anchor = (rect.x + rect.width / 2.0, rect.y + rect.height / 2.0);
                targets.push(Target { anchor, lines, mark: Mark::Outline(rect) });
            }
            // Total (and the standing's glyph) after the bar or its whisker, when it fits.
            let placed = end_label(reach, b0 + bw / 2.0, end, t.tick_px, horizontal, (inp.width, bands.step()));
            if let (Some((x, y, anchor)), false) = (placed, s.segments.is_empty()) {
                totals.push((inp.format.format(s.total()), limit.and(bar.standing), x, y, anchor));
            }
        }
        let summary = format!(
            "Stacked bar chart of {} with {} bars ({}), each split into {}.",
            if inp.value_label.is_empty() { "values".to_string() } else { inp.value_label.clone() },
            inp.bars.len(),
            inp.bars
                .iter()
                .zip(&stacks)
                .map(|(b, s)| match b.sentence.as_ref().filter(|_| limit.is_some()) {
                    Some(n) => format!("{}: {} ({n})", b.label, inp.format.format(s.total())),
                    None => format!("{}: {}", b.label, inp.format.format(s.total())),
                })
                .collect::<Vec<_>>()
                .join(", "),
            inp.components.join(", ")
        );
        if let (Some(l), Some(line)) = (limit, line) {
            marks.paths.push(("fc-limit", line.path(), None, None));
            marks.line = Some((line, l.value, l.label.clone()));
        }
        let summary = match limit {
            Some(l) => format!("{summary} A line marks the {}.", l.label),
            None => summary,
        };
        BarsModel {
            base: Base { size: (inp.width, height), targets, summary },
            layout,
            value_label: inp.value_label,
            legend,
            pieces,
            totals,
            marks,
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
    let legend = m.legend.clone();
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
        .map(|(text, standing, x, y, anchor)| {
            let glyph = standing.and_then(Standing::glyph).map(|g| format!(" {g}")).unwrap_or_default();
            let class = if *standing == Some(Standing::Over) { "fc-glyph-over" } else { "fc-glyph-near" };
            view! {
                <text class="fc-tick" x=coord(*x) y=coord(*y) text-anchor=*anchor data-fits=standing.map(Standing::key)>
                    {text.clone()}
                    <tspan class=class>{glyph}</tspan>
                </text>
            }
        })
        .collect_view();
    view! {
        {title_view(c)}
        {legend_view(c, legend)}
        {grid_view(c)}
        <g class="fc-bars">{pieces}</g>
        {limit_view(&m.marks)}
        {axes}
        <g class="fc-totals">{totals}</g>
    }
    .into_any()
}

/// The whiskers, the outlines of the marked bars, the limit line and its label.
fn limit_view(marks: &LimitMarks) -> impl IntoView + use<> {
    let paths = marks
        .paths
        .iter()
        .map(|(class, d, fits, bar)| {
            view! { <path class=*class d=d.clone() data-fits=*fits data-bar=bar.map(|i| i.to_string()) /> }
        })
        .collect_view();
    let label = marks.line.clone().map(|(l, value, label)| {
        view! {
            <text class="fc-limit-label" data-limit=value.to_string() x=coord(l.label.0) y=coord(l.label.1)>
                {label}
            </text>
        }
    });
    view! { <g class="fc-limits">{paths}{label}</g> }
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
    /// A limit on the value axis (a device's capacity): its line, the bars' bands and marks.
    #[prop(optional, into)]
    limit: MaybeProp<Limit>,
    /// Height in px (default: room for two-line labels, `BAR_STEP` per horizontal bar; 360 for vertical).
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
                limit: limit.get(),
            })
        })
    };
    chart(Common { title, height, export, svg_ref }, build, draw)
}
