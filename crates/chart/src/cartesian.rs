//! The complete layout of a chart with two axes, from its size, title, legend entries and the
//! two axis specifications: wrapped title, flowed legend, the frame, and both axes fitted to
//! the final plot area with their ticks ready to draw (overlapping labels thinned out).
//!
//! An axis is either continuous (values: linear, log, powers of two) or categorical (one band
//! per label: bars, heatmap rows and columns). Categories on the x axis run left to right, on the
//! y axis top to bottom.

use crate::axis::{AxisOptions, FittedAxis};
use crate::bars::Bands;
use crate::layout::{
    BOLD, Frame, FrameSpec, LINE_HEIGHT, LegendLayout, Rect, Typography, frame, legend_layout, stacked_baselines,
    text_width, truncate, wrap_lines, wrap_text,
};

/// What one axis shows.
#[derive(Clone, Debug, PartialEq)]
pub enum AxisSpec {
    /// Continuous values over the data extent (`None`: no drawable data).
    Values { options: AxisOptions, extent: Option<(f64, f64)> },
    /// One band per label; `inner` and `outer` are the band paddings (see [`Bands`]).
    Categories { labels: Vec<String>, inner: f64, outer: f64 },
}

/// An axis fitted to the plot area.
#[derive(Clone, Debug, PartialEq)]
pub enum PlacedAxis {
    Values(FittedAxis),
    Categories(Bands),
}

impl PlacedAxis {
    /// The continuous axis, if this is one.
    pub fn values(&self) -> Option<&FittedAxis> {
        match self {
            PlacedAxis::Values(a) => Some(a),
            PlacedAxis::Categories(_) => None,
        }
    }

    /// The bands, if this is a categorical axis.
    pub fn bands(&self) -> Option<&Bands> {
        match self {
            PlacedAxis::Values(_) => None,
            PlacedAxis::Categories(b) => Some(b),
        }
    }
}

/// How a tick is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridLine {
    /// Solid grid line across the plot.
    Major,
    /// Dotted grid line.
    Minor,
    /// Tick mark only (categories).
    None,
}

/// A tick ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawTick {
    /// Screen position along the axis.
    pub pos: f64,
    /// Label (absent for minor ticks and for labels thinned out to avoid overlap); a category
    /// label on the y axis may take two lines, separated by `\n` (see [`DrawTick::lines`]).
    pub label: Option<String>,
    pub grid: GridLine,
}

impl DrawTick {
    /// The label's lines, each with its baseline, for a y-axis label centred on the tick at
    /// `font_px` (empty without a label).
    pub fn lines(&self, font_px: f64) -> Vec<(String, f64)> {
        let Some(label) = &self.label else { return Vec::new() };
        let lines: Vec<&str> = label.split('\n').collect();
        lines.iter().map(|l| l.to_string()).zip(stacked_baselines(self.pos, lines.len(), font_px)).collect()
    }
}

/// Everything a chart needs to know to lay itself out.
#[derive(Clone, Debug, PartialEq)]
pub struct CartesianSpec {
    pub width: f64,
    pub height: f64,
    pub title: String,
    /// Legend entries (empty: no legend).
    pub legend: Vec<String>,
    /// Axis titles (empty: none).
    pub x_label: String,
    pub y_label: String,
    pub x: AxisSpec,
    pub y: AxisSpec,
    /// Extra room at the right (a colour bar, the end labels of bars).
    pub right_extra: f64,
    /// Extra room between the legend and the plot (the label of a limit line).
    pub top_extra: f64,
    pub typography: Typography,
}

/// The layout of a cartesian chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Cartesian {
    pub title_lines: Vec<String>,
    /// Legend entries placed relative to (pad, `frame.legend_y`).
    pub legend: LegendLayout,
    pub frame: Frame,
    pub x: PlacedAxis,
    pub y: PlacedAxis,
    pub x_ticks: Vec<DrawTick>,
    pub y_ticks: Vec<DrawTick>,
}

impl Cartesian {
    /// The plot area.
    pub fn plot(&self) -> Rect {
        self.frame.plot
    }
}

/// Most labels that fit along `length` units when each needs about `per_label` units.
fn label_budget(length: f64, per_label: f64) -> usize {
    ((length / per_label).floor() as usize).clamp(2, 12)
}

/// Category labels at most `max_width` wide, on up to `max_lines` lines (joined by `\n`).
fn category_labels(labels: &[String], max_width: f64, font_px: f64, max_lines: usize) -> Vec<String> {
    labels.iter().map(|l| wrap_lines(l, max_width, font_px, max_lines).join("\n")).collect()
}

/// Widest line of a label of several lines.
fn label_width(label: &str, font_px: f64) -> f64 {
    label.split('\n').map(|l| text_width(l, font_px)).fold(0.0, f64::max)
}

/// Most lines a y category label may take in bands `step` apart: two when two lines fit with a
/// line's height between neighbours' labels, else one.
fn lines_per_category(step: f64, font_px: f64) -> usize {
    if step >= 2.0 * LINE_HEIGHT * font_px { 2 } else { 1 }
}

/// Lays out a cartesian chart (see the module documentation).
pub fn layout(spec: &CartesianSpec) -> Cartesian {
    let t = spec.typography;
    let inner_width = (spec.width - 2.0 * t.pad).max(40.0);
    let title_lines =
        if spec.title.trim().is_empty() { Vec::new() } else { wrap_text(&spec.title, inner_width / BOLD, t.title_px) };
    let legend_refs: Vec<&str> = spec.legend.iter().map(String::as_str).collect();
    let legend = legend_layout(&legend_refs, t.pad, 0.0, inner_width, t.label_px);

    // First pass: provisional axes to measure the tick labels.
    let max_category_width = (spec.width * 0.35).max(48.0);
    let y_tick_width = match &spec.y {
        AxisSpec::Values { options, extent } => {
            let options = AxisOptions { max_labels: label_budget(spec.height * 0.6, 32.0), ..*options };
            let axis = FittedAxis::fit(*extent, (spec.height * 0.6, 0.0), options);
            axis.labeled().filter_map(|t| t.label.as_deref()).map(|l| text_width(l, t.tick_px)).fold(0.0, f64::max)
        }
        AxisSpec::Categories { labels, .. } => category_labels(labels, max_category_width, t.tick_px, 2)
            .iter()
            .map(|l| label_width(l, t.tick_px))
            .fold(0.0, f64::max),
    };
    let x_tick_overhang = match &spec.x {
        AxisSpec::Values { options, extent } => {
            let axis = FittedAxis::fit(*extent, (0.0, spec.width * 0.7), *options);
            axis.labeled().last().and_then(|t| t.label.as_deref()).map(|l| text_width(l, t.tick_px)).unwrap_or(0.0)
        }
        AxisSpec::Categories { .. } => 0.0,
    };
    let frame = frame(&FrameSpec {
        width: spec.width,
        height: spec.height,
        title_lines: title_lines.len(),
        legend_height: legend.height,
        x_label: !spec.x_label.trim().is_empty(),
        y_label: !spec.y_label.trim().is_empty(),
        y_tick_width,
        x_tick_overhang,
        right_extra: spec.right_extra,
        top_extra: spec.top_extra,
        typography: t,
    });
    let plot = frame.plot;

    // Second pass: fit to the plot.
    let (x, x_ticks) = place(&spec.x, (plot.x, plot.right()), true, t);
    let (y, y_ticks) = place(&spec.y, (plot.bottom(), plot.y), false, t);
    let y_ticks = match &spec.y {
        AxisSpec::Categories { labels, .. } => {
            // Two lines where the bands leave room (within the width measured above), else one.
            let lines = y.bands().map_or(1, |b| lines_per_category(b.step(), t.tick_px));
            let width = if lines == 2 { max_category_width } else { y_tick_width.max(1.0) };
            let short = category_labels(labels, width, t.tick_px, lines);
            y_ticks.into_iter().zip(short).map(|(tick, l)| DrawTick { label: tick.label.map(|_| l), ..tick }).collect()
        }
        _ => y_ticks,
    };
    Cartesian { title_lines, legend, frame, x, y, x_ticks, y_ticks }
}

/// Band step of a horizontal bar chart's categories: room for a two-line label and a gap.
pub const BAR_STEP: f64 = 2.0 * LINE_HEIGHT * 11.5 + 4.0;

/// The height at which `spec`'s y categories (if it has them) are `step` apart (`spec` is
/// borrowed mutably to probe its layout and left as it was): the room its
/// title, legend and extra space take above the plot and its x axis below, plus the bands'
/// (`step` × (n − inner + 2 outer), as [`Bands`] divides the plot). Without y categories: the
/// spec's own height.
pub fn height_for_bands(spec: &mut CartesianSpec, step: f64) -> f64 {
    const PROBE: f64 = 2000.0;
    let height = std::mem::replace(&mut spec.height, PROBE);
    let AxisSpec::Categories { labels, inner, outer } = &spec.y else {
        spec.height = height;
        return height;
    };
    let bands = labels.len() as f64 - inner + 2.0 * outer;
    let chrome = PROBE - layout(spec).plot().height;
    spec.height = height;
    chrome + step * bands
}

/// Fits one axis to the screen range and produces its ticks; `horizontal` is true for x.
fn place(spec: &AxisSpec, range: (f64, f64), horizontal: bool, t: Typography) -> (PlacedAxis, Vec<DrawTick>) {
    let length = (range.1 - range.0).abs();
    match spec {
        AxisSpec::Values { options, extent } => {
            let per_label = if horizontal { 64.0 } else { 32.0 };
            let options =
                AxisOptions { max_labels: options.max_labels.min(label_budget(length, per_label)), ..*options };
            let axis = FittedAxis::fit(*extent, range, options);
            let ticks = axis
                .ticks
                .iter()
                .map(|tick| DrawTick {
                    pos: tick.pos,
                    label: tick.label.clone(),
                    grid: if tick.label.is_some() { GridLine::Major } else { GridLine::Minor },
                })
                .collect();
            (PlacedAxis::Values(axis), thin(ticks, horizontal, t.tick_px))
        }
        AxisSpec::Categories { labels, inner, outer } => {
            // y categories run top to bottom: bands over (top, bottom)
            let (a, b) = if horizontal { range } else { (range.1, range.0) };
            let bands = Bands::new(labels.len(), (a, b), *inner, *outer);
            // room for the label plus the 8 units of spacing that thinning requires
            let max_w = if horizontal { (bands.step() - 10.0).max(24.0) } else { f64::INFINITY };
            let ticks = labels
                .iter()
                .enumerate()
                .map(|(i, l)| DrawTick {
                    pos: bands.center(i),
                    label: Some(if horizontal { truncate(l, max_w, t.tick_px) } else { l.clone() }),
                    grid: GridLine::None,
                })
                .collect();
            (PlacedAxis::Categories(bands), thin(ticks, horizontal, t.tick_px))
        }
    }
}

/// Drops labels that would overlap the previous kept label (greedy, in position order). On x,
/// labels are centred on their tick and need their width plus 8 units; on y, a line height.
pub fn thin(mut ticks: Vec<DrawTick>, horizontal: bool, font_px: f64) -> Vec<DrawTick> {
    let order = position_order(&ticks);
    let mut last_end = f64::NEG_INFINITY;
    for i in order {
        let Some(label) = &ticks[i].label else { continue };
        let half = if horizontal { text_width(label, font_px) / 2.0 + 4.0 } else { font_px * 0.65 };
        if ticks[i].pos - half < last_end {
            ticks[i].label = None;
        } else {
            last_end = ticks[i].pos + half;
        }
    }
    ticks
}

/// The ticks' indices by position, ties in index order: the order `sort_by` on positions gives,
/// by insertion (a chart has tens of ticks; `sort_by` would bring the page its own copy of the
/// standard library's sort, about 4 KB of WebAssembly).
fn position_order(ticks: &[DrawTick]) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(ticks.len());
    for (i, t) in ticks.iter().enumerate() {
        let at = order.partition_point(|&j| ticks[j].pos.total_cmp(&t.pos).is_le());
        order.insert(at, i);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis::AxisKind;
    use crate::layout::TICK_LEN;

    fn values(kind: AxisKind, extent: (f64, f64)) -> AxisSpec {
        AxisSpec::Values { options: AxisOptions { kind, ..AxisOptions::default() }, extent: Some(extent) }
    }

    fn spec(width: f64) -> CartesianSpec {
        CartesianSpec {
            width,
            height: 360.0,
            title: "Step time versus number of accelerators".to_string(),
            legend: vec!["data parallel".into(), "tensor parallel".into(), "pipeline".into()],
            x_label: "accelerators".to_string(),
            y_label: "step time [s]".to_string(),
            x: values(AxisKind::Pow2, (8.0, 4096.0)),
            y: values(AxisKind::Log10, (0.3, 120.0)),
            right_extra: 0.0,
            top_extra: 0.0,
            typography: Typography::default(),
        }
    }

    fn labels(ticks: &[DrawTick]) -> Vec<String> {
        ticks.iter().filter_map(|t| t.label.clone()).collect()
    }

    #[test]
    fn wide_chart_lays_out_title_legend_and_axes() {
        let c = layout(&spec(720.0));
        assert_eq!(c.title_lines.len(), 1);
        assert_eq!(c.legend.rows, 1);
        let plot = c.plot();
        assert!(plot.width > 500.0 && plot.height > 200.0, "{plot:?}");
        assert_eq!(labels(&c.x_ticks), ["16", "64", "256", "1024", "4096"], "6 labels at most: every other power");
        assert_eq!(c.x_ticks.len(), 10, "the other powers stay as minor ticks");
        assert_eq!(labels(&c.y_ticks), ["1", "10", "100"]);
        assert_eq!(c.y.values().unwrap().scale.domain(), (0.2, 200.0), "1-2-5 ends, marked by minor ticks");
        let x = c.x.values().unwrap();
        assert!((x.pos(8.0).unwrap() - plot.x).abs() < 1e-9 && (x.pos(4096.0).unwrap() - plot.right()).abs() < 1e-9);
        let y = c.y.values().unwrap();
        assert!(y.pos(1.0).unwrap() > y.pos(100.0).unwrap(), "y grows upwards");
    }

    #[test]
    fn phone_width_wraps_and_thins() {
        let mut s = spec(360.0);
        s.title = "Step time versus number of accelerators, GPT-3 175B on A100 80GB".to_string();
        s.legend.push("fully sharded (ZeRO-3)".to_string());
        let c = layout(&s);
        assert!(c.title_lines.len() >= 2, "{:?}", c.title_lines);
        assert!(c.legend.rows >= 2);
        let shown = labels(&c.x_ticks);
        assert!(shown.len() <= 6 && shown.len() >= 2, "{shown:?}");
        assert!(c.plot().width > 200.0);
        // Labels never overlap: centres further apart than half-widths + gap.
        let placed: Vec<(f64, f64)> =
            c.x_ticks.iter().filter_map(|t| t.label.as_ref().map(|l| (t.pos, text_width(l, 11.5)))).collect();
        assert!(placed.windows(2).all(|w| w[1].0 - w[0].0 >= (w[0].1 + w[1].1) / 2.0 + 8.0 - 1e-9));
    }

    #[test]
    fn categories_on_y_run_top_down_and_reserve_label_width() {
        let mut s = spec(600.0);
        s.y = AxisSpec::Categories {
            labels: vec!["GPT-3 175B".into(), "Llama 2 70B".into(), "a".into()],
            inner: 0.2,
            outer: 0.1,
        };
        s.x = AxisSpec::Values {
            options: AxisOptions { include_zero: true, ..AxisOptions::default() },
            extent: Some((0.0, 9.5)),
        };
        let c = layout(&s);
        let bands = c.y.bands().unwrap();
        assert_eq!(bands.n, 3);
        assert!(c.y_ticks[0].pos < c.y_ticks[2].pos, "first category on top");
        assert!(c.plot().x > text_width("Llama 2 70B", 11.5));
        assert_eq!(labels(&c.y_ticks), ["GPT-3 175B", "Llama 2 70B", "a"]);
        assert_eq!(c.x.values().unwrap().scale.domain().0, 0.0);
    }

    #[test]
    fn long_category_labels_are_truncated() {
        let mut s = spec(390.0);
        let long = "a very long model name that would eat the whole plot".to_string();
        s.y = AxisSpec::Categories { labels: vec![long.clone()], inner: 0.2, outer: 0.1 };
        let c = layout(&s);
        let shown = c.y_ticks[0].label.clone().unwrap();
        let lines: Vec<&str> = shown.split('\n').collect();
        assert_eq!(lines.len(), 2, "{shown}");
        assert!(lines[1].ends_with('…'), "{shown}");
        assert!(lines.iter().all(|l| text_width(l, 11.5) <= 390.0 * 0.35), "{shown}");
        assert!(c.plot().width > 150.0);
    }

    /// The list's bars at a phone's width (390 px, 30 px per bar): every label reads in full on
    /// two lines, centred on its bar, left of the plot and clear of its neighbours.
    #[test]
    fn bar_labels_wrap_at_a_phone_width() {
        let names: Vec<String> = (1..=10).map(|i| format!("#{i} 2d-seqp dp64 tp4×1 pp2 ep8")).collect();
        let mut s = spec(358.0);
        s.height = 110.0 + 16.0 * 2.0 + 30.0 * 10.0;
        s.legend = vec!["compute".into()];
        s.y = AxisSpec::Categories { labels: names.clone(), inner: 0.28, outer: 0.14 };
        s.x = AxisSpec::Values {
            options: AxisOptions { include_zero: true, ..AxisOptions::default() },
            extent: Some((0.0, 90.0)),
        };
        let c = layout(&s);
        let bands = c.y.bands().unwrap();
        assert!(bands.step() >= 2.0 * LINE_HEIGHT * 11.5, "room for two lines: {}", bands.step());
        let plot = c.plot();
        let mut last_bottom = f64::NEG_INFINITY;
        for (i, (tick, name)) in c.y_ticks.iter().zip(&names).enumerate() {
            let lines = tick.lines(11.5);
            assert_eq!(lines.len(), 2, "{lines:?}");
            let words: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
            assert_eq!(words.join(" "), *name, "no truncation");
            assert!(lines.iter().all(|(l, _)| plot.x - TICK_LEN - 3.0 - text_width(l, 11.5) >= 0.0), "{lines:?}");
            // Centred on the band: the block's middle (baselines less 0.35 em) is the band's centre.
            let mid = (lines[0].1 + lines[1].1) / 2.0 - 0.35 * 11.5;
            assert!((mid - bands.center(i)).abs() < 1e-9);
            // The first line's top (a cap height above its baseline) clears the previous label.
            assert!(lines[0].1 - 11.5 > last_bottom, "label {i} overlaps the one above");
            last_bottom = lines[1].1;
        }
        // The height for two-line labels, here under a three-line title, a three-row legend and
        // a limit's label: the bands come out exactly [`BAR_STEP`] apart.
        s.title = "Memory per device by component (capacity 85.5\u{a0}GB), each figure ±\u{a0}6.9\u{a0}%".into();
        s.legend =
            ["weights", "gradients", "optimizer states", "activations", "band −6.9 % to +28.9 %", "! may not fit"]
                .map(String::from)
                .to_vec();
        s.top_extra = 17.25;
        s.height = height_for_bands(&mut s, BAR_STEP);
        let fitted = layout(&s);
        assert!(fitted.title_lines.len() >= 2 && fitted.legend.rows >= 2, "{:?}", fitted.title_lines);
        assert!((fitted.y.bands().unwrap().step() - BAR_STEP).abs() < 1e-9);
        assert!(fitted.y_ticks.iter().all(|t| t.lines(11.5).len() == 2));
        assert_eq!(height_for_bands(&mut spec(300.0), BAR_STEP), 360.0, "no categories: the spec's height");
        // Where the bands are too tight for two lines, one line is cut to the measured width.
        s.height = 140.0;
        let tight = layout(&s);
        let one = tight.y_ticks.iter().filter_map(|t| t.label.clone()).next().unwrap();
        assert!(!one.contains('\n') && one.ends_with('…'), "{one}");
        assert!(text_width(&one, 11.5) <= tight.plot().x, "{one}");
    }

    #[test]
    fn thinning_keeps_first_and_drops_overlaps() {
        let ticks: Vec<DrawTick> = (0..5)
            .map(|i| DrawTick { pos: f64::from(i) * 20.0, label: Some("100000".into()), grid: GridLine::Major })
            .collect();
        let kept: Vec<f64> = thin(ticks, true, 11.5).iter().filter(|t| t.label.is_some()).map(|t| t.pos).collect();
        assert_eq!(kept[0], 0.0);
        assert!(kept.len() < 5 && kept.len() >= 2, "{kept:?}");
        let roomy: Vec<DrawTick> = (0..3)
            .map(|i| DrawTick { pos: f64::from(i) * 100.0, label: Some("1".into()), grid: GridLine::Major })
            .collect();
        assert!(thin(roomy, true, 11.5).iter().all(|t| t.label.is_some()));
    }

    #[test]
    fn ticks_are_ordered_as_the_standard_stable_sort_orders_them() {
        // Positions with repeats (ties keep index order), a negative zero and reversed runs.
        let cases: [&[f64]; 5] = [
            &[],
            &[3.0],
            &[40.0, 10.0, 10.0, -0.0, 0.0, 25.5, 10.0, -3.0],
            &[5.0, 4.0, 3.0, 2.0, 1.0, 0.0],
            &[1.0, 1.0, 1.0, 0.5, 2.0, 0.5],
        ];
        for positions in cases {
            let ticks: Vec<DrawTick> =
                positions.iter().map(|&pos| DrawTick { pos, label: None, grid: GridLine::None }).collect();
            let mut expected: Vec<usize> = (0..ticks.len()).collect();
            expected.sort_by(|&a, &b| ticks[a].pos.total_cmp(&ticks[b].pos));
            assert_eq!(position_order(&ticks), expected, "{positions:?}");
        }
    }
}
