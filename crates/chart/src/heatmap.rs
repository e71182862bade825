//! Heatmap geometry and colour: the cell grid, a perceptual sequential colour map, and the
//! mapping of values (linear or log) onto it. Cells can be infeasible (drawn hatched) or missing
//! (drawn empty).
//!
//! The colour map interpolates in sRGB between seven control points sampled at equal steps
//! from matplotlib's "viridis" (van der Walt & Smith, 2015; CC0): dark blue-purple to yellow,
//! lightness increasing monotonically, readable with the common colour-vision deficiencies and
//! in greyscale.

use crate::color::Rgb;
use crate::layout::Rect;

/// The content of one heatmap cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeatCell {
    /// A value to colour.
    Value(f64),
    /// The configuration does not fit (e.g. out of memory): hatched.
    Infeasible,
    /// Not computed / not applicable: left empty.
    Missing,
}

/// A sequential colour map: control colours at equal spacing over t ∈ [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorMap {
    pub stops: &'static [Rgb],
}

/// Viridis sampled at t = 0, 1/6, …, 1.
pub const VIRIDIS: ColorMap = ColorMap {
    stops: &[
        Rgb::from_u32(0x440154),
        Rgb::from_u32(0x443a83),
        Rgb::from_u32(0x31688e),
        Rgb::from_u32(0x21908c),
        Rgb::from_u32(0x35b779),
        Rgb::from_u32(0x8fd744),
        Rgb::from_u32(0xfde725),
    ],
};

impl ColorMap {
    /// The colour at `t` (clamped to [0, 1]; NaN gives the start).
    pub fn at(&self, t: f64) -> Rgb {
        let n = self.stops.len();
        if n == 1 {
            return self.stops[0];
        }
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let x = t * (n - 1) as f64;
        let i = (x.floor() as usize).min(n - 2);
        self.stops[i].lerp(self.stops[i + 1], x - i as f64)
    }

    /// `(offset in [0, 1], colour)` of the control points, for an SVG `<linearGradient>`.
    pub fn gradient_stops(&self) -> Vec<(f64, Rgb)> {
        let n = self.stops.len();
        self.stops.iter().enumerate().map(|(i, &c)| (i as f64 / (n.max(2) - 1) as f64, c)).collect()
    }
}

/// Maps values onto a colour map over `[lo, hi]`, linearly or in log10, optionally reversed (so
/// that "better" values get the same end of the map whether lower or higher is better).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorScale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub reversed: bool,
    pub map: ColorMap,
}

impl ColorScale {
    /// The position in [0, 1] of `v` (clamped), or `None` if it has none (non-finite, ≤ 0 on
    /// log). A degenerate range gives 0.5.
    pub fn t(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let f = |x: f64| if self.log { x.log10() } else { x };
        let (a, b) = (f(self.lo), f(self.hi));
        let t = if a == b || !a.is_finite() || !b.is_finite() { 0.5 } else { ((f(v) - a) / (b - a)).clamp(0.0, 1.0) };
        Some(if self.reversed { 1.0 - t } else { t })
    }

    /// The colour of `v`, if it has one.
    pub fn color(&self, v: f64) -> Option<Rgb> {
        self.t(v).map(|t| self.map.at(t))
    }
}

/// The extent of the values in `cells` (positive ones only when `log`), or `None`.
pub fn value_extent(cells: &[Vec<HeatCell>], log: bool) -> Option<(f64, f64)> {
    let values = cells.iter().flatten().filter_map(|c| match *c {
        HeatCell::Value(v) if v.is_finite() && (!log || v > 0.0) => Some(v),
        _ => None,
    });
    crate::scale::extent(values, crate::scale::ScaleKind::Linear)
}

/// A `cols × rows` grid of equal cells filling `area`, with `gap` units between cells. Row 0 is
/// at the bottom (like a y axis), column 0 at the left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub area: Rect,
    pub cols: usize,
    pub rows: usize,
    pub gap: f64,
}

impl Grid {
    /// Width and height of a cell's pitch (cell plus gap).
    fn pitch(&self) -> (f64, f64) {
        (self.area.width / self.cols.max(1) as f64, self.area.height / self.rows.max(1) as f64)
    }

    /// The rectangle of cell (`col`, `row`), inset by half the gap on each side.
    pub fn cell(&self, col: usize, row: usize) -> Rect {
        let (pw, ph) = self.pitch();
        let g = self.gap.min(pw / 2.0).min(ph / 2.0);
        let top_row = self.rows.saturating_sub(1).saturating_sub(row);
        Rect::new(self.area.x + col as f64 * pw + g / 2.0, self.area.y + top_row as f64 * ph + g / 2.0, pw - g, ph - g)
    }

    /// Centre of column `col` (x) and of row `row` (y), for axis labels.
    pub fn col_center(&self, col: usize) -> f64 {
        self.area.x + (col as f64 + 0.5) * self.pitch().0
    }

    pub fn row_center(&self, row: usize) -> f64 {
        let top_row = self.rows.saturating_sub(1).saturating_sub(row);
        self.area.y + (top_row as f64 + 0.5) * self.pitch().1
    }

    /// The cell under a screen point, if any.
    pub fn cell_at(&self, (x, y): (f64, f64)) -> Option<(usize, usize)> {
        if self.cols == 0 || self.rows == 0 || !self.area.contains((x, y)) {
            return None;
        }
        let (pw, ph) = self.pitch();
        let col = (((x - self.area.x) / pw).floor() as usize).min(self.cols - 1);
        let top_row = (((y - self.area.y) / ph).floor() as usize).min(self.rows - 1);
        Some((col, self.rows - 1 - top_row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_map_endpoints_and_midpoint() {
        assert_eq!(VIRIDIS.at(0.0), Rgb::from_u32(0x440154));
        assert_eq!(VIRIDIS.at(1.0), Rgb::from_u32(0xfde725));
        assert_eq!(VIRIDIS.at(0.5), Rgb::from_u32(0x21908c));
        assert_eq!(VIRIDIS.at(-1.0), VIRIDIS.at(0.0));
        assert_eq!(VIRIDIS.at(2.0), VIRIDIS.at(1.0));
        assert_eq!(VIRIDIS.at(f64::NAN), VIRIDIS.at(0.0));
        let stops = VIRIDIS.gradient_stops();
        assert_eq!(stops.len(), 7);
        assert_eq!((stops[0].0, stops[6].0), (0.0, 1.0));
    }

    #[test]
    fn colour_map_lightness_increases_monotonically() {
        let mut previous = -1.0;
        for i in 0..=100 {
            let l = VIRIDIS.at(f64::from(i) / 100.0).lab()[0];
            assert!(l > previous, "L* must rise: step {i}: {l:.1} after {previous:.1}");
            previous = l;
        }
        let span = VIRIDIS.at(1.0).lab()[0] - VIRIDIS.at(0.0).lab()[0];
        assert!(span > 70.0, "wide lightness range: {span:.1}");
    }

    #[test]
    fn colour_scale_linear_log_reversed() {
        let lin = ColorScale { lo: 0.0, hi: 10.0, log: false, reversed: false, map: VIRIDIS };
        assert_eq!(lin.t(5.0), Some(0.5));
        assert_eq!(lin.t(20.0), Some(1.0), "clamped");
        assert_eq!(lin.t(f64::NAN), None);
        let log = ColorScale { lo: 1.0, hi: 1000.0, log: true, ..lin };
        assert!((log.t(10.0).unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(log.t(0.0), None);
        assert_eq!(log.t(-3.0), None);
        let rev = ColorScale { reversed: true, ..lin };
        assert_eq!(rev.t(0.0), Some(1.0));
        assert_eq!(rev.color(10.0), Some(VIRIDIS.at(0.0)));
        let flat = ColorScale { lo: 4.0, hi: 4.0, ..lin };
        assert_eq!(flat.t(4.0), Some(0.5));
    }

    #[test]
    fn extent_ignores_infeasible_missing_and_non_positive_on_log() {
        let cells = vec![
            vec![HeatCell::Value(3.0), HeatCell::Infeasible, HeatCell::Value(-1.0)],
            vec![HeatCell::Missing, HeatCell::Value(12.0), HeatCell::Value(f64::NAN)],
        ];
        assert_eq!(value_extent(&cells, false), Some((-1.0, 12.0)));
        assert_eq!(value_extent(&cells, true), Some((3.0, 12.0)));
        assert_eq!(value_extent(&[vec![HeatCell::Infeasible]], false), None);
    }

    #[test]
    fn grid_cells_rows_from_the_bottom_and_hit_testing() {
        let grid = Grid { area: Rect::new(100.0, 50.0, 300.0, 200.0), cols: 3, rows: 2, gap: 2.0 };
        assert_eq!(grid.cell(0, 0), Rect::new(101.0, 151.0, 98.0, 98.0), "row 0 is the bottom row");
        assert_eq!(grid.cell(2, 1), Rect::new(301.0, 51.0, 98.0, 98.0));
        assert_eq!(grid.col_center(1), 250.0);
        assert_eq!(grid.row_center(0), 200.0);
        assert_eq!(grid.cell_at((105.0, 240.0)), Some((0, 0)));
        assert_eq!(grid.cell_at((399.0, 51.0)), Some((2, 1)));
        assert_eq!(grid.cell_at((400.0, 250.0)), Some((2, 0)), "far edges belong to the last cell");
        assert_eq!(grid.cell_at((99.0, 100.0)), None);
        let empty = Grid { cols: 0, ..grid };
        assert_eq!(empty.cell_at((150.0, 100.0)), None);
    }
}
