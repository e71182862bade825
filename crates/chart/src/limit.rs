//! A limit on a bar chart's value axis (a device's memory capacity) and how each bar stands
//! against it, in screen units: the limit line and its label, the extent of the value axis that
//! keeps the limit and every bar's band in view, each bar's band (a whisker), its outline, and the
//! label at its end (the total, and a glyph for a bar that may not fit or does not fit).
//!
//! Bars are stacked along the value axis (see [`crate::bars`]); `horizontal` means the bars grow
//! to the right (value axis x, bands top to bottom), else upwards. Positions are SVG user units.

use crate::layout::{Rect, text_width};
use crate::path::{coord, polygon_path};

/// How a bar stands against the limit (the memory verdict: fits, may not fit, does not fit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Under the limit even at the top of its band.
    Within,
    /// Its band straddles the limit: it may not fit.
    Near,
    /// Over the limit even at the bottom of its band.
    Over,
}

impl Standing {
    /// The word the page's data attributes use (`data-fits`): `yes`, `tight`, `no`.
    pub fn key(self) -> &'static str {
        match self {
            Standing::Within => "yes",
            Standing::Near => "tight",
            Standing::Over => "no",
        }
    }

    /// The glyph after the bar's total (none for a bar within the limit): `!` may not fit, `×`
    /// does not fit. Both are in every font, unlike the warning sign.
    pub fn glyph(self) -> Option<&'static str> {
        match self {
            Standing::Within => None,
            Standing::Near => Some("!"),
            Standing::Over => Some("×"),
        }
    }
}

/// Gap between a bar's end (or its band's end) and its end label.
pub const END_GAP: f64 = 5.0;

/// Room the limit line's label takes above the plot of a horizontal bar chart (the frame's
/// `top_extra`), for labels of `font_px`.
pub fn label_room(font_px: f64) -> f64 {
    font_px * 1.5
}

/// The value extent `(lo, hi)` of the stacks widened to include the limit and every band
/// `(lo, hi)` (non-finite values are ignored), so that the line and every whisker are drawn.
pub fn extent_with(extent: (f64, f64), limit: Option<f64>, ranges: &[(f64, f64)]) -> (f64, f64) {
    let values = limit.into_iter().chain(ranges.iter().flat_map(|&(a, b)| [a, b])).filter(|v| v.is_finite());
    values.fold(extent, |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// The limit line across the plot and where its label goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimitLine {
    /// The line's ends.
    pub from: (f64, f64),
    pub to: (f64, f64),
    /// The label's left end and baseline (drawn `text-anchor="start"`).
    pub label: (f64, f64),
}

impl LimitLine {
    /// SVG path data of the line.
    pub fn path(&self) -> String {
        format!("M{} {}L{} {}", coord(self.from.0), coord(self.from.1), coord(self.to.0), coord(self.to.1))
    }
}

/// The limit line at screen position `pos` of the value axis, across `plot`, with a label
/// `label_width` wide. Horizontal bars: a vertical line from 3 units above the plot to its bottom,
/// the label centred above it in the room [`label_room`] reserves, shifted to stay within
/// `[pad, width − pad]`. Vertical bars: a horizontal line across the plot, the label above its right
/// end.
pub fn limit_line(pos: f64, plot: Rect, label_width: f64, width: f64, pad: f64, horizontal: bool) -> LimitLine {
    if horizontal {
        let x = (pos - label_width / 2.0).min(width - pad - label_width).max(pad);
        LimitLine { from: (pos, plot.y - 3.0), to: (pos, plot.bottom()), label: (x, plot.y - 6.0) }
    } else {
        let x = (plot.right() - label_width).max(plot.x);
        LimitLine { from: (plot.x, pos), to: (plot.right(), pos), label: (x, pos - 4.0) }
    }
}

/// The rectangle of a bar between screen positions `p` and `q` of the value axis, in the band
/// starting at `band_start` and `band_width` wide (a segment, or the whole bar for its outline).
pub fn span_rect(p: f64, q: f64, band_start: f64, band_width: f64, horizontal: bool) -> Rect {
    if horizontal {
        Rect::new(p.min(q), band_start, (q - p).abs(), band_width)
    } else {
        Rect::new(band_start, p.min(q), band_width, (q - p).abs())
    }
}

/// A bar's band drawn as a whisker along the band's centre line, with caps half the band wide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Whisker {
    pub from: (f64, f64),
    pub to: (f64, f64),
    /// Half the length of each end cap (across the bar).
    pub cap: f64,
}

impl Whisker {
    /// SVG path data: the whisker and its two caps (across the whisker).
    pub fn path(&self) -> String {
        let across = self.from.1 == self.to.1;
        let (dx, dy) = if across { (0.0, self.cap) } else { (self.cap, 0.0) };
        let cap =
            |(x, y): (f64, f64)| format!("M{} {}L{} {}", coord(x - dx), coord(y - dy), coord(x + dx), coord(y + dy));
        let (a, b) = (self.from, self.to);
        format!("M{} {}L{} {}{}{}", coord(a.0), coord(a.1), coord(b.0), coord(b.1), cap(a), cap(b))
    }
}

/// SVG path data of the outline around a bar's rectangle `r`, `gap` units outside it.
pub fn outline_path(r: Rect, gap: f64) -> String {
    let (x0, y0, x1, y1) = (r.x - gap, r.y - gap, r.right() + gap, r.bottom() + gap);
    polygon_path(&[(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
}

/// Where a bar's end label starts when `reach` (its bar's or whisker's end) is followed by a
/// label `extent` long along the value axis (its width on horizontal bars, its height on vertical
/// ones) and the limit line is at `line`: at the line (the label then keeps its gap after it) when
/// the label would cross it, else at `reach`. Horizontal bars grow to the right (larger
/// positions), vertical ones upwards (smaller positions).
pub fn clear_of_line(reach: f64, extent: f64, line: Option<f64>, horizontal: bool) -> f64 {
    match line {
        Some(l) if horizontal && reach < l && reach + END_GAP + extent + 2.0 > l => l,
        Some(l) if !horizontal && reach > l && reach - END_GAP - extent < l + 2.0 => l,
        _ => reach,
    }
}

/// The whisker from screen position `p` to `q` of the value axis, across the band of `band_start`
/// and `band_width`.
pub fn whisker(p: f64, q: f64, band_start: f64, band_width: f64, horizontal: bool) -> Whisker {
    let centre = band_start + band_width / 2.0;
    let cap = band_width / 4.0;
    if horizontal {
        Whisker { from: (p.min(q), centre), to: (p.max(q), centre), cap }
    } else {
        Whisker { from: (centre, p.max(q)), to: (centre, p.min(q)), cap }
    }
}

/// Where a bar's end label goes: after `end` (the screen position of the bar's end, or of its
/// whisker's when that reaches further), centred on its band. Horizontal: `END_GAP` right of the
/// end, baseline a third of the font below the band's centre, anchored at its start; `None` when the
/// label would pass `width − 4`. Vertical: `END_GAP` above the end, centred; `None` when the
/// label is wider than `band_step`.
pub fn end_label(
    end: f64,
    band_centre: f64,
    text: &str,
    font_px: f64,
    horizontal: bool,
    (width, band_step): (f64, f64),
) -> Option<(f64, f64, &'static str)> {
    let w = text_width(text, font_px);
    if horizontal {
        (end + END_GAP + w < width - 4.0).then_some((end + END_GAP, band_centre + font_px * 0.35, "start"))
    } else {
        (w <= band_step).then_some((band_centre, end - END_GAP, "middle"))
    }
}

/// Room to reserve at the right of a horizontal bar chart so that every end label of `texts` is
/// drawn even after a bar (or whisker) that reaches the plot's right edge.
pub fn end_room(texts: &[String], font_px: f64) -> f64 {
    texts.iter().map(|t| text_width(t, font_px) + END_GAP + 4.0).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standings_have_keys_and_glyphs() {
        assert_eq!([Standing::Within, Standing::Near, Standing::Over].map(Standing::key), ["yes", "tight", "no"]);
        assert_eq!(
            [Standing::Within, Standing::Near, Standing::Over].map(Standing::glyph),
            [None, Some("!"), Some("×")]
        );
    }

    #[test]
    fn extent_takes_in_the_limit_and_the_bands() {
        // Bars up to 69 GB on an 85.5 GB device: the axis runs to the capacity.
        assert_eq!(extent_with((0.0, 69.0), Some(85.5), &[]), (0.0, 85.5));
        // A band from 64.2 to 89.3 GB reaches past it.
        assert_eq!(extent_with((0.0, 69.0), Some(85.5), &[(64.2, 89.3)]), (0.0, 89.3));
        // A bar over the limit keeps its own end; no limit, no change; NaN ignored.
        assert_eq!(extent_with((0.0, 123.8), Some(85.5), &[(f64::NAN, 100.0)]), (0.0, 123.8));
        assert_eq!(extent_with((0.0, 10.0), None, &[]), (0.0, 10.0));
        assert_eq!(extent_with((0.0, 10.0), Some(f64::INFINITY), &[]), (0.0, 10.0));
    }

    #[test]
    fn limit_line_spans_the_plot_and_its_label_stays_inside() {
        let plot = Rect::new(150.0, 80.0, 200.0, 150.0); // x 150–350, y 80–230
        // A line in the middle: the 60-unit label centred on it, baseline 6 above the plot.
        let l = limit_line(250.0, plot, 60.0, 390.0, 8.0, true);
        assert_eq!((l.from, l.to, l.label), ((250.0, 77.0), (250.0, 230.0), (220.0, 74.0)));
        // At the plot's right edge the centred label ends at 350 + 30 = 380 ≤ 390 − 8: still centred.
        assert_eq!(limit_line(350.0, plot, 60.0, 390.0, 8.0, true).label.0, 320.0);
        // A wider label is pushed left to end at 390 − 8 = 382.
        assert_eq!(limit_line(350.0, plot, 100.0, 390.0, 8.0, true).label.0, 282.0);
        // And never starts left of the pad.
        assert_eq!(limit_line(20.0, plot, 100.0, 390.0, 8.0, true).label.0, 8.0);
        // Vertical bars: across the plot at y = 120, label above the right end.
        let v = limit_line(120.0, plot, 60.0, 390.0, 8.0, false);
        assert_eq!((v.from, v.to, v.label), ((150.0, 120.0), (350.0, 120.0), (290.0, 116.0)));
    }

    #[test]
    fn spans_and_whiskers_sit_in_their_band() {
        // Horizontal: value positions 200 and 150, band 40–60.
        assert_eq!(span_rect(200.0, 150.0, 40.0, 20.0, true), Rect::new(150.0, 40.0, 50.0, 20.0));
        assert_eq!(span_rect(200.0, 150.0, 40.0, 20.0, false), Rect::new(40.0, 150.0, 20.0, 50.0));
        let w = whisker(300.0, 240.0, 40.0, 20.0, true);
        assert_eq!((w.from, w.to, w.cap), ((240.0, 50.0), (300.0, 50.0), 5.0));
        // Vertical: y grows downwards, the whisker runs from the lower value (larger y) up.
        let v = whisker(100.0, 60.0, 40.0, 20.0, false);
        assert_eq!((v.from, v.to), ((50.0, 100.0), (50.0, 60.0)));
    }

    #[test]
    fn end_labels_follow_the_bar_or_are_left_out() {
        // "68.6 !" at 11.5 px: 3 digits × 0.64 + point and space 2 × 0.33 + "!" 0.40 = 2.98 em
        // = 34.27 units.
        let w = text_width("68.6 !", 11.5);
        assert!((w - 34.27).abs() < 1e-9, "{w}");
        // After a bar ending at 300 in a band centred at 50: x 305, baseline 50 + 4.025.
        assert_eq!(end_label(300.0, 50.0, "68.6 !", 11.5, true, (390.0, 30.0)), Some((305.0, 54.025, "start")));
        // 350 + 5 + 34.27 = 389.27 ≥ 390 − 4: left out.
        assert_eq!(end_label(350.0, 50.0, "68.6 !", 11.5, true, (390.0, 30.0)), None);
        // Vertical: above the end, if the band's step holds it.
        assert_eq!(end_label(120.0, 50.0, "68.6 !", 11.5, false, (390.0, 35.0)), Some((50.0, 115.0, "middle")));
        assert_eq!(end_label(120.0, 50.0, "68.6 !", 11.5, false, (390.0, 34.0)), None);
        // The room that keeps every end label: the widest plus gap and margin.
        let room = end_room(&["68.6 !".to_string(), "5".to_string()], 11.5);
        assert!((room - (34.27 + 9.0)).abs() < 1e-9, "{room}");
        assert_eq!(end_room(&[], 11.5), 0.0);
    }

    #[test]
    fn paths_draw_the_line_the_whisker_and_the_outline() {
        let plot = Rect::new(150.0, 80.0, 200.0, 150.0);
        assert_eq!(limit_line(250.0, plot, 60.0, 390.0, 8.0, true).path(), "M250 77L250 230");
        assert_eq!(whisker(300.0, 240.0, 40.0, 20.0, true).path(), "M240 50L300 50M240 45L240 55M300 45L300 55");
        assert_eq!(whisker(100.0, 60.0, 40.0, 20.0, false).path(), "M50 100L50 60M45 100L55 100M45 60L55 60");
        assert_eq!(
            outline_path(Rect::new(150.0, 40.0, 50.0, 20.0), 1.5),
            "M148.5,38.5L201.5,38.5L201.5,61.5L148.5,61.5Z"
        );
    }

    #[test]
    fn end_labels_step_over_the_limit_line() {
        // A 34.27-unit label after a bar ending at 300, line at 320: 300 + 5 + 34.27 + 2 > 320, so
        // it starts at the line (then `end_label` adds its gap).
        assert_eq!(clear_of_line(300.0, 34.27, Some(320.0), true), 320.0);
        // Ending at 270: 270 + 41.27 = 311.27 clears 320.
        assert_eq!(clear_of_line(270.0, 34.27, Some(320.0), true), 270.0);
        // Past the line already, or no line: unchanged.
        assert_eq!(clear_of_line(330.0, 34.27, Some(320.0), true), 330.0);
        assert_eq!(clear_of_line(300.0, 34.27, None, true), 300.0);
        // Vertical bars grow upwards: an 11.5-unit label above a bar ending at y 115 spans 98.5–110,
        // within 2 of a line at 100: it goes above the line. Ending at 130 (113.5–125) it clears it.
        assert_eq!(clear_of_line(115.0, 11.5, Some(100.0), false), 100.0);
        assert_eq!(clear_of_line(130.0, 11.5, Some(100.0), false), 130.0);
    }

    #[test]
    fn label_room_is_a_line_and_a_half() {
        assert_eq!(label_room(11.5), 17.25);
    }
}
