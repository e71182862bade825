//! Chart layout in SVG user units: rectangles, text width estimates, title wrapping, the frame of
//! a chart (title, legend, plot area, axis labels) and the placement of legends and tooltips.
//!
//! Text is measured by estimate (no DOM): per-character widths typical of sans-serif UI fonts.
//! Estimates err on the wide side so labels do not collide.

/// An axis-aligned rectangle; `x`, `y` is the top-left corner.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Rect {
    /// A rectangle; negative sizes are clamped to 0.
    pub fn new(x: f64, y: f64, width: f64, height: f64) -> Rect {
        Rect { x, y, width: width.max(0.0), height: height.max(0.0) }
    }

    /// x of the right edge.
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    /// y of the bottom edge.
    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// Whether the point lies inside (edges included).
    pub fn contains(&self, (px, py): (f64, f64)) -> bool {
        px >= self.x && px <= self.right() && py >= self.y && py <= self.bottom()
    }
}

/// Estimated rendered width of `text` at `font_px` in a sans-serif UI font. The per-character
/// widths (in em) are those of DejaVu Sans, the widest of the common UI fonts (Linux default), so
/// the estimate is safe for Segoe UI, San Francisco, Roboto and Helvetica, which are narrower.
pub fn text_width(text: &str, font_px: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | 'I' | 'J' | '\'' => 0.29,
            '.' | ',' | ':' | ';' | '|' | '/' | '·' | ' ' | '\u{a0}' => 0.33,
            'f' | 't' | '-' | '(' | ')' | '[' | ']' | 'r' | '!' => 0.40,
            'c' | 's' | 'z' | 'k' | '?' => 0.56,
            '0'..='9' => 0.64,
            'm' => 0.98,
            'w' => 0.82,
            'M' => 0.87,
            'W' | '%' | '…' | '@' => 1.0,
            '×' | '±' | '=' | '+' | '<' | '>' => 0.84,
            c if c.is_uppercase() => 0.72,
            _ => 0.63,
        })
        .sum();
    em * font_px
}

/// Width factor of bold (weight 600–700) text over regular text.
pub const BOLD: f64 = 1.1;

/// Splits `text` into lines no wider than `max_width` (by [`text_width`]), breaking at spaces; a
/// single word wider than the limit gets a line of its own. A no-break space (U+00A0, as between a
/// number and its unit: `6.9 %`, `85.5 GB`) joins its neighbours into one word and is kept.
pub fn wrap_text(text: &str, max_width: f64, font_px: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(|c: char| c.is_whitespace() && c != '\u{a0}').filter(|w| !w.is_empty()) {
        let candidate = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if !line.is_empty() && text_width(&candidate, font_px) > max_width {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` shortened with an ellipsis to fit `max_width` (unchanged if it fits).
pub fn truncate(text: &str, max_width: f64, font_px: f64) -> String {
    if text_width(text, font_px) <= max_width {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        let next = format!("{out}{c}…");
        if text_width(&next, font_px) > max_width {
            break;
        }
        out.push(c);
    }
    format!("{}…", out.trim_end())
}

/// `text` on at most `max_lines` lines no wider than `max_width`: [`wrap_text`]'s lines, the words
/// beyond the last line joined onto it, and every line [`truncate`]d to fit (so a long item name
/// reads in full on two lines where one would cut it).
pub fn wrap_lines(text: &str, max_width: f64, font_px: f64, max_lines: usize) -> Vec<String> {
    let mut lines = wrap_text(text, max_width, font_px);
    if lines.len() > max_lines.max(1) {
        let rest = lines.split_off(max_lines.max(1) - 1).join(" ");
        lines.push(rest);
    }
    lines.into_iter().map(|l| truncate(&l, max_width, font_px)).collect()
}

/// Line height of a label set on several lines, as a multiple of its font size.
pub const LINE_HEIGHT: f64 = 1.15;

/// Baselines of `lines` lines of text at `font_px` centred on `center` (one line: `center + 0.35
/// font_px`, the single-line tick label's baseline; each further line [`LINE_HEIGHT`] below, the
/// block centred).
pub fn stacked_baselines(center: f64, lines: usize, font_px: f64) -> Vec<f64> {
    let step = font_px * LINE_HEIGHT;
    let first = center + font_px * 0.35 - step * lines.saturating_sub(1) as f64 / 2.0;
    (0..lines).map(|i| first + step * i as f64).collect()
}

/// Font sizes and spacings shared by all charts (SVG user units = CSS px at 1:1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Typography {
    /// Title font size.
    pub title_px: f64,
    /// Axis labels, legend, tooltips.
    pub label_px: f64,
    /// Tick labels.
    pub tick_px: f64,
    /// Outer padding around the chart.
    pub pad: f64,
}

impl Default for Typography {
    fn default() -> Self {
        Typography { title_px: 15.0, label_px: 12.5, tick_px: 11.5, pad: 8.0 }
    }
}

/// What a cartesian chart needs room for.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSpec {
    /// Overall size.
    pub width: f64,
    pub height: f64,
    /// Number of title lines (0 for none), see [`wrap_text`].
    pub title_lines: usize,
    /// Height of the legend block under the title (0 for none), see [`legend_layout`].
    pub legend_height: f64,
    /// Whether there is an x-axis label (below the tick labels) and a y-axis label (rotated, at
    /// the left).
    pub x_label: bool,
    pub y_label: bool,
    /// Widest y tick label, and the width of the last x tick label (it may stick out right).
    pub y_tick_width: f64,
    pub x_tick_overhang: f64,
    /// Extra room at the right (a colour bar, the end labels of bars).
    pub right_extra: f64,
    /// Extra room between the legend and the plot (the label of a limit line).
    pub top_extra: f64,
    pub typography: Typography,
}

/// Where things go in a cartesian chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The plot area (inside the axes).
    pub plot: Rect,
    /// Baseline of the first title line; further lines follow at `title_px × 1.25`.
    pub title_y: f64,
    /// Top of the legend block.
    pub legend_y: f64,
    /// Baseline of the x-axis label (centred on the plot).
    pub x_label_y: f64,
    /// Centre x of the rotated y-axis label.
    pub y_label_x: f64,
    /// Baseline of the x tick labels.
    pub x_tick_y: f64,
}

/// Tick mark length.
pub const TICK_LEN: f64 = 5.0;

/// Lays out a cartesian chart from the top: title, legend, plot; x tick labels and x label at the
/// bottom; y label and y tick labels at the left. The plot keeps at least 40 × 40.
pub fn frame(spec: &FrameSpec) -> Frame {
    let t = spec.typography;
    let title_h = if spec.title_lines > 0 { spec.title_lines as f64 * t.title_px * 1.25 + 4.0 } else { 0.0 };
    let title_y = t.pad + t.title_px;
    let legend_y = t.pad + title_h;
    let gap = if spec.legend_height > 0.0 { 6.0 } else { 4.0 };
    let top = legend_y + spec.legend_height + gap + spec.top_extra;
    let x_label_h = if spec.x_label { t.label_px * 1.5 } else { 0.0 };
    let bottom_h = TICK_LEN + 3.0 + t.tick_px * 1.2 + x_label_h + t.pad;
    let y_label_w = if spec.y_label { t.label_px * 1.6 } else { 0.0 };
    let left = t.pad + y_label_w + spec.y_tick_width + TICK_LEN + 4.0;
    let right = t.pad + spec.right_extra + (spec.x_tick_overhang / 2.0).max(4.0);
    let plot_w = (spec.width - left - right).max(40.0);
    let plot_h = (spec.height - top - bottom_h).max(40.0);
    let plot = Rect::new(left, top, plot_w, plot_h);
    Frame {
        plot,
        title_y,
        legend_y,
        x_tick_y: plot.bottom() + TICK_LEN + 3.0 + t.tick_px,
        x_label_y: plot.bottom() + TICK_LEN + 3.0 + t.tick_px * 1.2 + t.label_px * 1.3,
        y_label_x: t.pad + t.label_px * 0.8,
    }
}

/// Placement of one legend entry: swatch at `x`, text after it, row centre at `y`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegendItem {
    pub x: f64,
    pub y: f64,
    pub width: f64,
}

/// A flowed legend.
#[derive(Clone, Debug, PartialEq)]
pub struct LegendLayout {
    pub items: Vec<LegendItem>,
    /// Total height (0 without items).
    pub height: f64,
    pub rows: usize,
}

/// Width of a legend swatch plus the gap before its text.
pub const SWATCH: f64 = 22.0;

/// Flows legend entries left to right from `x0`, wrapping at `max_width`; the block starts at
/// `y0`. Entries are `SWATCH` + text + 14 units of spacing wide.
pub fn legend_layout(labels: &[&str], x0: f64, y0: f64, max_width: f64, font_px: f64) -> LegendLayout {
    let row_h = font_px * 1.6;
    let mut items = Vec::with_capacity(labels.len());
    let (mut x, mut row) = (x0, 0usize);
    for label in labels {
        let w = SWATCH + text_width(label, font_px);
        if x > x0 && x + w > x0 + max_width {
            x = x0;
            row += 1;
        }
        items.push(LegendItem { x, y: y0 + row_h * (row as f64 + 0.5), width: w });
        x += w + 14.0;
    }
    let rows = if items.is_empty() { 0 } else { row + 1 };
    LegendLayout { items, height: rows as f64 * row_h, rows }
}

/// Top-left corner for a tooltip box of `size` near `anchor`: right of and below the anchor by
/// `offset` if it fits in `bounds`, else flipped left and/or up, and finally clamped inside.
pub fn place_tooltip(anchor: (f64, f64), size: (f64, f64), bounds: Rect, offset: f64) -> (f64, f64) {
    let (ax, ay) = anchor;
    let (w, h) = size;
    let mut x = ax + offset;
    if x + w > bounds.right() {
        x = ax - offset - w;
    }
    let mut y = ay + offset;
    if y + h > bounds.bottom() {
        y = ay - offset - h;
    }
    let x = x.min(bounds.right() - w).max(bounds.x);
    let y = y.min(bounds.bottom() - h).max(bounds.y);
    (x, y)
}

/// Size of a tooltip box holding `lines` at `font_px`, with `pad` inside; the first line is the
/// heading, set in bold.
pub fn tooltip_size(lines: &[String], font_px: f64, pad: f64) -> (f64, f64) {
    let w = lines
        .iter()
        .enumerate()
        .map(|(i, l)| text_width(l, font_px) * if i == 0 { BOLD } else { 1.0 })
        .fold(0.0, f64::max);
    (w + 2.0 * pad, lines.len() as f64 * font_px * 1.35 + 2.0 * pad - font_px * 0.35)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rect_edges_and_contains() {
        let r = Rect::new(10.0, 20.0, 100.0, 50.0);
        assert_eq!((r.right(), r.bottom()), (110.0, 70.0));
        assert!(r.contains((10.0, 20.0)) && r.contains((110.0, 70.0)) && !r.contains((111.0, 30.0)));
        assert_eq!(Rect::new(0.0, 0.0, -5.0, 3.0).width, 0.0);
    }

    #[test]
    fn text_widths_are_plausible() {
        assert_eq!(text_width("", 12.0), 0.0);
        let digits = text_width("16384", 12.0);
        assert!((30.0..40.0).contains(&digits), "{digits}");
        assert!(text_width("WWW", 12.0) > text_width("iii", 12.0) * 2.5);
        assert!((text_width("abc", 24.0) - 2.0 * text_width("abc", 12.0)).abs() < 1e-9, "scales with size");
    }

    #[test]
    fn wrapping_and_truncation() {
        let lines = wrap_text("Step time versus number of accelerators for four strategies", 200.0, 12.0);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 12.0) <= 200.0));
        assert_eq!(lines.join(" "), "Step time versus number of accelerators for four strategies");
        assert_eq!(wrap_text("short", 200.0, 12.0), ["short"]);
        assert_eq!(wrap_text("", 200.0, 12.0), Vec::<String>::new());
        assert_eq!(wrap_text("Supercalifragilistic x", 30.0, 12.0), ["Supercalifragilistic", "x"]);
        assert_eq!(truncate("short", 100.0, 12.0), "short");
        // A no-break space never breaks: the title of the memory chart at a phone's width.
        let nb = "Memory per device by component (capacity 85.5\u{a0}GB), each figure ±\u{a0}6.9\u{a0}%";
        let lines = wrap_text(nb, 340.0 / BOLD, 15.0);
        assert!(lines.iter().any(|l| l.ends_with("±\u{a0}6.9\u{a0}%")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("85.5\u{a0}GB")), "{lines:?}");
        assert_eq!(lines.join(" "), nb);
        // Where a plain space is the only break left, it still breaks there.
        assert_eq!(wrap_text("6.9\u{a0}% 85.5\u{a0}GB", 40.0, 12.0), ["6.9\u{a0}%", "85.5\u{a0}GB"]);
        assert_eq!(wrap_text("a\tb\nc", 1.0, 12.0), ["a", "b", "c"], "other white space breaks");
        assert_eq!(text_width("\u{a0}", 12.0), text_width(" ", 12.0));
        let t = truncate("tensor parallel all-reduce", 80.0, 12.0);
        assert!(t.ends_with('…') && text_width(&t, 12.0) <= 80.0, "{t}");
    }

    #[test]
    fn long_labels_wrap_onto_two_lines() {
        let label = "#10 2d-seqp dp64 tp4×1 pp2 ep8";
        let lines = wrap_lines(label, 110.0, 11.5, 2);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines.join(" "), label, "every word is read");
        assert!(lines.iter().all(|l| text_width(l, 11.5) <= 110.0), "{lines:?}");
        // Words beyond the second line join it, which is cut with an ellipsis.
        let long = wrap_lines("one two three four five six seven eight nine ten", 60.0, 11.5, 2);
        assert_eq!(long.len(), 2);
        assert!(long[1].ends_with('…') && text_width(&long[1], 11.5) <= 60.0, "{long:?}");
        assert_eq!(wrap_lines("short", 110.0, 11.5, 2), ["short"]);
        assert_eq!(wrap_lines("a b c", 1.0, 11.5, 0).len(), 1, "at least one line");
        // One line sits where a tick label sits; two are centred on the tick, 1.15 em apart.
        assert_eq!(stacked_baselines(100.0, 1, 10.0), [103.5]);
        let two = stacked_baselines(100.0, 2, 10.0);
        assert!((two[0] - 97.75).abs() < 1e-9 && (two[1] - 109.25).abs() < 1e-9, "{two:?}");
        assert!(stacked_baselines(0.0, 0, 10.0).is_empty());
    }

    #[test]
    fn frame_leaves_room_for_everything() {
        let spec = FrameSpec {
            width: 640.0,
            height: 360.0,
            title_lines: 1,
            legend_height: 20.0,
            x_label: true,
            y_label: true,
            y_tick_width: 30.0,
            x_tick_overhang: 20.0,
            right_extra: 0.0,
            top_extra: 0.0,
            typography: Typography::default(),
        };
        let f = frame(&spec);
        assert!(f.plot.x > spec.y_tick_width + 12.0, "y labels fit left of the plot");
        assert!(f.plot.y > f.title_y && f.plot.y >= f.legend_y + 20.0);
        assert!(f.x_label_y > f.x_tick_y && f.x_label_y < 360.0);
        assert!(f.plot.right() < 640.0 && f.plot.bottom() < f.x_tick_y);
        // No title, no legend, no labels: the plot grows.
        let bare =
            frame(&FrameSpec { title_lines: 0, legend_height: 0.0, x_label: false, y_label: false, ..spec.clone() });
        assert!(bare.plot.width > f.plot.width && bare.plot.height > f.plot.height);
        // Room for a limit line's label: the plot starts that much lower, the bottom stays.
        let roomy = frame(&FrameSpec { top_extra: 17.25, ..spec.clone() });
        assert_eq!(roomy.plot.y, f.plot.y + 17.25);
        assert_eq!(roomy.plot.bottom(), f.plot.bottom());
        // Tiny sizes keep a usable plot.
        let tiny = frame(&FrameSpec { width: 50.0, height: 50.0, ..spec });
        assert!(tiny.plot.width >= 40.0 && tiny.plot.height >= 40.0);
    }

    #[test]
    fn legend_wraps_rows() {
        let labels = ["data parallel", "tensor parallel", "pipeline parallel", "3D"];
        let wide = legend_layout(&labels, 0.0, 0.0, 1000.0, 12.0);
        assert_eq!(wide.rows, 1);
        assert!(wide.items.windows(2).all(|w| w[1].x > w[0].x + w[0].width));
        let narrow = legend_layout(&labels, 10.0, 5.0, 200.0, 12.0);
        assert!(narrow.rows >= 2);
        assert!(narrow.items.iter().all(|i| i.x >= 10.0 && i.x + i.width <= 210.0 || i.x == 10.0));
        assert!((narrow.height - narrow.rows as f64 * 12.0 * 1.6).abs() < 1e-9);
        assert_eq!(legend_layout(&[], 0.0, 0.0, 100.0, 12.0).height, 0.0);
    }

    #[test]
    fn tooltips_flip_and_stay_inside() {
        let bounds = Rect::new(0.0, 0.0, 400.0, 300.0);
        assert_eq!(place_tooltip((100.0, 100.0), (80.0, 40.0), bounds, 10.0), (110.0, 110.0));
        assert_eq!(place_tooltip((390.0, 100.0), (80.0, 40.0), bounds, 10.0), (300.0, 110.0), "flipped left");
        assert_eq!(place_tooltip((100.0, 290.0), (80.0, 40.0), bounds, 10.0), (110.0, 240.0), "flipped up");
        assert_eq!(place_tooltip((50.0, 5.0), (500.0, 400.0), bounds, 10.0), (0.0, 0.0), "clamped when too big");
        let (w, h) = tooltip_size(&["abc".to_string(), "abcdef".to_string()], 12.0, 6.0);
        assert!((w - (text_width("abcdef", 12.0) + 12.0)).abs() < 1e-9 && h > 24.0);
        let (w, _) = tooltip_size(&["abcdef".to_string(), "abcdef".to_string()], 12.0, 6.0);
        assert!((w - (text_width("abcdef", 12.0) * BOLD + 12.0)).abs() < 1e-9, "the bold heading is wider");
    }
}
