//! Heatmap: an x × y grid of values coloured with a perceptual colour map, a colour bar with the
//! value label, infeasible cells hatched and missing cells outlined (both in the legend), values
//! printed in the cells when they fit, an optional highlighted cell (e.g. the best one), tooltip.

use fmperf_chart::axis::{AxisKind, AxisOptions, FittedAxis};
use fmperf_chart::cartesian::{AxisSpec, Cartesian, CartesianSpec, layout};
use fmperf_chart::heatmap::{ColorScale, Grid, HeatCell, VIRIDIS, value_extent};
use fmperf_chart::layout::{Rect, Typography, text_width};
use fmperf_chart::path::coord;
use fmperf_chart::{Rgb, ValueFormat};
use leptos::prelude::*;
use leptos::svg::Svg;

use super::frame::{
    Base, ChartModel, Common, Mark, Swatch, Target, axes_view, chart, empty_view, label_or, legend_view, title_view,
    unique_id,
};

/// The data of a heatmap: column and row labels and `cells[row][col]`; row 0 is drawn at the
/// bottom (like a y axis), column 0 at the left. Short rows are padded with missing cells.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HeatmapData {
    pub x_labels: Vec<String>,
    pub y_labels: Vec<String>,
    pub cells: Vec<Vec<HeatCell>>,
}

impl HeatmapData {
    fn cell(&self, col: usize, row: usize) -> HeatCell {
        self.cells.get(row).and_then(|r| r.get(col)).copied().unwrap_or(HeatCell::Missing)
    }
}

/// Width of the colour bar itself.
const BAR_W: f64 = 12.0;
/// Gap between plot and colour bar.
const BAR_GAP: f64 = 14.0;

/// One drawn cell.
#[derive(Clone, Debug, PartialEq)]
struct DrawCell {
    rect: Rect,
    cell: HeatCell,
    fill: Option<Rgb>,
    /// Value text when it fits in the cell.
    text: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
struct HeatmapModel {
    base: Base,
    layout: Cartesian,
    x_label: String,
    y_label: String,
    value_label: String,
    cells: Vec<DrawCell>,
    grid: Grid,
    /// Colour bar: gradient stops (offset, colour), axis for its ticks.
    stops: Vec<(f64, Rgb)>,
    bar_axis: Option<FittedAxis>,
    highlight: Option<Rect>,
    legend: Vec<(String, Swatch)>,
    hatch_id: String,
    gradient_id: String,
}

struct HeatmapInputs<'a> {
    width: f64,
    height: f64,
    title: String,
    x_label: String,
    y_label: String,
    value_label: String,
    data: &'a HeatmapData,
    log: bool,
    reverse: bool,
    format: ValueFormat,
    highlight: Option<(usize, usize)>,
    highlight_label: String,
    show_values: bool,
    hatch_id: String,
    gradient_id: String,
}

impl HeatmapModel {
    fn build(inp: HeatmapInputs<'_>) -> HeatmapModel {
        let t = Typography::default();
        let data = inp.data;
        let (cols, rows) = (data.x_labels.len(), data.y_labels.len());
        let extent = value_extent(&data.cells, inp.log);
        let scale = extent.map(|(lo, hi)| ColorScale { lo, hi, log: inp.log, reversed: inp.reverse, map: VIRIDIS });
        let bar_options = AxisOptions {
            kind: if inp.log { AxisKind::Log10 } else { AxisKind::Linear },
            format: inp.format,
            max_labels: 6,
            include_zero: false,
            nice: false,
        };
        // Room at the right for the colour bar, its tick labels and its rotated label.
        let provisional = extent.map(|e| FittedAxis::fit(Some(e), (200.0, 0.0), bar_options));
        let tick_w = provisional
            .as_ref()
            .map(|a| {
                a.labeled().filter_map(|t| t.label.as_deref()).map(|l| text_width(l, t.tick_px)).fold(0.0, f64::max)
            })
            .unwrap_or(0.0);
        let right_extra = if extent.is_some() {
            BAR_GAP + BAR_W + 6.0 + tick_w + if inp.value_label.is_empty() { 0.0 } else { t.label_px * 1.8 }
        } else {
            0.0
        };
        let any = |f: fn(&HeatCell) -> bool| data.cells.iter().flatten().any(f);
        let mut legend = Vec::new();
        if any(|c| matches!(c, HeatCell::Infeasible)) {
            legend.push(("infeasible".to_string(), Swatch::Pattern(inp.hatch_id.clone())));
        }
        if inp.highlight.is_some() {
            legend.push((inp.highlight_label.clone(), Swatch::Highlight));
        }
        let short_rows = data.cells.len() < rows || data.cells.iter().any(|r| r.len() < cols);
        if any(|c| matches!(c, HeatCell::Missing)) || short_rows {
            legend.push(("not computed".to_string(), Swatch::Dashed));
        }
        let layout = layout(&CartesianSpec {
            width: inp.width,
            height: inp.height,
            title: inp.title.clone(),
            legend: legend.iter().map(|(l, _)| l.clone()).collect(),
            x_label: inp.x_label.clone(),
            y_label: inp.y_label.clone(),
            x: AxisSpec::Categories { labels: data.x_labels.clone(), inner: 0.0, outer: 0.0 },
            y: AxisSpec::Categories { labels: data.y_labels.iter().rev().cloned().collect(), inner: 0.0, outer: 0.0 },
            right_extra,
            top_extra: 0.0,
            typography: t,
        });
        let plot = layout.plot();
        let grid = Grid { area: plot, cols, rows, gap: 1.5 };
        let mut cells = Vec::with_capacity(cols * rows);
        let mut targets = Vec::with_capacity(cols * rows);
        // Keyboard order: top row first, left to right.
        for row in (0..rows).rev() {
            for col in 0..cols {
                let rect = grid.cell(col, row);
                let cell = data.cell(col, row);
                let (fill, text, state) = match cell {
                    HeatCell::Value(v) => {
                        let fill = scale.and_then(|s| s.color(v));
                        let text = inp.format.format(v);
                        let fits = inp.show_values
                            && text_width(&text, t.tick_px) + 6.0 <= rect.width
                            && rect.height >= t.tick_px + 4.0;
                        let state = format!("{}: {text}", label_or(&inp.value_label, "value"));
                        (fill, fits.then_some(text), state)
                    }
                    HeatCell::Infeasible => (None, None, "infeasible".to_string()),
                    HeatCell::Missing => (None, None, "not computed".to_string()),
                };
                let lines = vec![
                    format!("{}: {}", label_or(&inp.x_label, "x"), data.x_labels[col]),
                    format!("{}: {}", label_or(&inp.y_label, "y"), data.y_labels[row]),
                    state,
                ];
                let anchor = (rect.x + rect.width / 2.0, rect.y + rect.height / 2.0);
                targets.push(Target { anchor, lines, mark: Mark::Outline(rect) });
                cells.push(DrawCell { rect, cell, fill, text });
            }
        }
        let bar_axis = extent.map(|e| FittedAxis::fit(Some(e), (plot.bottom(), plot.y), bar_options));
        let mut stops = VIRIDIS.gradient_stops();
        if inp.reverse {
            stops = stops.into_iter().rev().map(|(o, c)| (1.0 - o, c)).collect();
        }
        let highlight = inp.highlight.filter(|&(c, r)| c < cols && r < rows).map(|(c, r)| grid.cell(c, r));
        let summary = summarize(&inp, extent, &data.cells);
        HeatmapModel {
            base: Base { size: (inp.width, inp.height), targets, summary },
            layout,
            x_label: inp.x_label,
            y_label: inp.y_label,
            value_label: inp.value_label,
            cells,
            grid,
            stops,
            bar_axis,
            highlight,
            legend,
            hatch_id: inp.hatch_id,
            gradient_id: inp.gradient_id,
        }
    }
}

fn summarize(inp: &HeatmapInputs<'_>, extent: Option<(f64, f64)>, cells: &[Vec<HeatCell>]) -> String {
    let count = |f: fn(&HeatCell) -> bool| cells.iter().flatten().filter(|c| f(c)).count();
    let range = match extent {
        Some((lo, hi)) => format!(
            "{} from {} to {}",
            label_or(&inp.value_label, "values"),
            inp.format.format(lo),
            inp.format.format(hi)
        ),
        None => "no values".to_string(),
    };
    format!(
        "Heatmap of {} over {} ({} columns) and {} ({} rows): {range}; {} infeasible and {} missing cells.",
        label_or(&inp.value_label, "values"),
        label_or(&inp.x_label, "x"),
        inp.data.x_labels.len(),
        label_or(&inp.y_label, "y"),
        inp.data.y_labels.len(),
        count(|c| matches!(c, HeatCell::Infeasible)),
        count(|c| matches!(c, HeatCell::Missing)),
    )
}

impl ChartModel for HeatmapModel {
    fn base(&self) -> &Base {
        &self.base
    }

    fn hit(&self, p: (f64, f64)) -> Option<usize> {
        let (col, row) = self.grid.cell_at(p)?;
        Some((self.grid.rows - 1 - row) * self.grid.cols + col)
    }

    fn stride(&self) -> usize {
        self.grid.cols.max(1)
    }
}

fn draw(m: &HeatmapModel) -> AnyView {
    let c = &m.layout;
    if m.cells.is_empty() {
        let axes = axes_view(c, m.x_label.clone(), m.y_label.clone());
        return view! { {title_view(c)} {axes} {empty_view(c, "no data to show")} }.into_any();
    }
    let t = Typography::default();
    let plot = c.plot();
    let hatch = format!("url(#{})", m.hatch_id);
    let cells = m
        .cells
        .iter()
        .map(|d| {
            let r = d.rect;
            let (x, y, w, h) = (coord(r.x), coord(r.y), coord(r.width), coord(r.height));
            let shape = match d.cell {
                HeatCell::Value(_) => match d.fill {
                    Some(fill) => view! { <rect x=x y=y width=w height=h fill=fill.to_hex() /> }.into_any(),
                    None => view! { <rect class="fc-missing" x=x y=y width=w height=h /> }.into_any(),
                },
                HeatCell::Infeasible => {
                    view! { <rect class="fc-infeasible" x=x y=y width=w height=h fill=hatch.clone() /> }.into_any()
                }
                HeatCell::Missing => view! { <rect class="fc-missing" x=x y=y width=w height=h /> }.into_any(),
            };
            let text = d.text.clone().map(|text| {
                let ink = d.fill.map(|f| f.readable_text().to_hex()).unwrap_or_default();
                view! {
                    <text
                        x=coord(r.x + r.width / 2.0)
                        y=coord(r.y + r.height / 2.0 + t.tick_px * 0.35)
                        text-anchor="middle"
                        fill=ink
                        style=format!("font-size:{}px;font-variant-numeric:tabular-nums", t.tick_px)
                    >
                        {text}
                    </text>
                }
            });
            view! { {shape} {text} }
        })
        .collect_view();
    let highlight = m.highlight.map(|r| {
        view! {
            <rect class="fc-hl" x=coord(r.x - 1.0) y=coord(r.y - 1.0) width=coord(r.width + 2.0) height=coord(r.height + 2.0) />
        }
    });
    let bar_x = plot.right() + BAR_GAP;
    let color_bar = m.bar_axis.as_ref().map(|axis| {
        let stops = m
            .stops
            .iter()
            .map(|(o, col)| view! { <stop offset=format!("{}%", coord(o * 100.0)) stop-color=col.to_hex() /> })
            .collect_view();
        let ticks = axis
            .labeled()
            .map(|tick| {
                let label = tick.label.clone().unwrap_or_default();
                view! {
                    <line class="fc-axis" x1=coord(bar_x + BAR_W) y1=coord(tick.pos) x2=coord(bar_x + BAR_W + 4.0) y2=coord(tick.pos) />
                    <text class="fc-tick" x=coord(bar_x + BAR_W + 6.0) y=coord(tick.pos + t.tick_px * 0.35)>{label}</text>
                }
            })
            .collect_view();
        let tick_w = axis
            .labeled()
            .filter_map(|tk| tk.label.as_deref())
            .map(|l| text_width(l, t.tick_px))
            .fold(0.0, f64::max);
        let label_x = bar_x + BAR_W + 6.0 + tick_w + t.label_px * 0.9;
        let label_y = plot.y + plot.height / 2.0;
        let value_label = m.value_label.clone();
        view! {
            <defs>
                <linearGradient id=m.gradient_id.clone() x1="0" y1="1" x2="0" y2="0">{stops}</linearGradient>
            </defs>
            <rect
                class="fc-colorbar"
                x=coord(bar_x)
                y=coord(plot.y)
                width=coord(BAR_W)
                height=coord(plot.height)
                fill=format!("url(#{})", m.gradient_id)
            />
            {ticks}
            <text
                class="fc-label"
                x=coord(label_x)
                y=coord(label_y)
                text-anchor="middle"
                dominant-baseline="central"
                transform=format!("rotate(-90 {} {})", coord(label_x), coord(label_y))
            >
                {value_label}
            </text>
        }
    });
    view! {
        <defs>
            <pattern id=m.hatch_id.clone() patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
                <line class="fc-hatch" x1="0" y1="0" x2="0" y2="6" />
            </pattern>
        </defs>
        {title_view(c)}
        {legend_view(c, m.legend.clone())}
        <g class="fc-cells">{cells}</g>
        {highlight}
        {axes_view(c, m.x_label.clone(), m.y_label.clone())}
        {color_bar}
    }
    .into_any()
}

/// A heatmap of values over two categorical axes.
#[component]
pub fn Heatmap(
    /// Chart title (also the export file name).
    #[prop(into)]
    title: Signal<String>,
    /// Label of the columns (x) with unit if any, e.g. `tensor parallel degree`.
    #[prop(into)]
    x_label: Signal<String>,
    /// Label of the rows (y), e.g. `pipeline stages`.
    #[prop(into)]
    y_label: Signal<String>,
    /// Label of the colour bar with its unit, e.g. `step time [s]`.
    #[prop(into)]
    value_label: Signal<String>,
    /// Labels and cells.
    #[prop(into)]
    data: Signal<HeatmapData>,
    /// Colour by log10 of the value (default false; values ≤ 0 then stay uncoloured).
    #[prop(optional, into)]
    log: MaybeProp<bool>,
    /// Reverse the colour map, e.g. so that the best (lowest) time is the bright end (default false).
    #[prop(optional, into)]
    reverse: MaybeProp<bool>,
    /// How values are written (default `Auto`).
    #[prop(optional, into)]
    format: MaybeProp<ValueFormat>,
    /// Cell to outline, as (column, row), e.g. the best configuration.
    #[prop(optional, into)]
    highlight: MaybeProp<(usize, usize)>,
    /// The outline's legend entry (default `best`).
    #[prop(optional, into)]
    highlight_label: MaybeProp<String>,
    /// Print values inside cells that are large enough (default true).
    #[prop(optional, into)]
    show_values: MaybeProp<bool>,
    /// Height in px (default 400).
    #[prop(optional, into)]
    height: MaybeProp<f64>,
    /// Show SVG/PNG download buttons under the chart (default true).
    #[prop(optional, into)]
    export: MaybeProp<bool>,
    /// Reference to the `<svg>`, for callers that export it themselves.
    #[prop(optional)]
    svg_ref: NodeRef<Svg>,
) -> impl IntoView {
    let hatch_id = unique_id("fc-hatch");
    let gradient_id = unique_id("fc-ramp");
    let build = move |width: f64, height: Option<f64>| {
        data.with(|data| {
            HeatmapModel::build(HeatmapInputs {
                width,
                height: height.unwrap_or(400.0),
                title: title.get(),
                x_label: x_label.get(),
                y_label: y_label.get(),
                value_label: value_label.get(),
                data,
                log: log.get().unwrap_or(false),
                reverse: reverse.get().unwrap_or(false),
                format: format.get().unwrap_or_default(),
                highlight: highlight.get(),
                highlight_label: highlight_label.get().unwrap_or_else(|| "best".to_string()),
                show_values: show_values.get().unwrap_or(true),
                hatch_id: hatch_id.clone(),
                gradient_id: gradient_id.clone(),
            })
        })
    };
    chart(Common { title, height, export, svg_ref }, build, draw)
}
