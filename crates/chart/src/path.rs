//! SVG path data (`d` attribute strings): polylines that break at missing points, filled areas
//! under a line, bands between two lines, and closed polygons. Coordinates are screen positions
//! (SVG user units), printed with at most two decimals.

use crate::scale::Scale;
use std::fmt::Write;

/// A coordinate rounded to 0.01 and printed without trailing zeros (`12.5`, `3`, `-0.25`).
pub fn coord(v: f64) -> String {
    let s = format!("{:.2}", (v * 100.0).round() / 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() { "0".to_string() } else { s.to_string() }
}

/// Projects data points `(x, y)` onto the screen; a point is `None` when y is missing or either
/// coordinate has no position on its scale (e.g. ≤ 0 on a log axis).
pub fn project(points: &[(f64, Option<f64>)], x: &Scale, y: &Scale) -> Vec<Option<(f64, f64)>> {
    points.iter().map(|&(px, py)| Some((x.map(px)?, y.map(py?)?))).collect()
}

/// Splits a sequence of optional points into runs of consecutive present points.
pub fn runs(points: impl IntoIterator<Item = Option<(f64, f64)>>) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for p in points {
        match p {
            Some(p) => current.push(p),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn move_to(d: &mut String, (x, y): (f64, f64)) {
    let _ = write!(d, "M{},{}", coord(x), coord(y));
}

fn line_to(d: &mut String, (x, y): (f64, f64)) {
    let _ = write!(d, "L{},{}", coord(x), coord(y));
}

/// A polyline through the present points, broken at every `None` (a gap for a missing or
/// undrawable point). A run of a single point becomes `M x,y h0`, which a round line cap draws
/// as a dot, so an isolated value stays visible. Empty input gives an empty string.
pub fn line_path(points: impl IntoIterator<Item = Option<(f64, f64)>>) -> String {
    let mut d = String::new();
    for run in runs(points) {
        move_to(&mut d, run[0]);
        if run.len() == 1 {
            d.push_str("h0");
        }
        for &p in &run[1..] {
            line_to(&mut d, p);
        }
    }
    d
}

/// Closed areas between the line through the present points and the horizontal line at
/// `baseline_y` (one area per run of present points; runs of one point are skipped).
pub fn area_path(points: impl IntoIterator<Item = Option<(f64, f64)>>, baseline_y: f64) -> String {
    let mut d = String::new();
    for run in runs(points).into_iter().filter(|r| r.len() >= 2) {
        move_to(&mut d, (run[0].0, baseline_y));
        for &p in &run {
            line_to(&mut d, p);
        }
        line_to(&mut d, (run[run.len() - 1].0, baseline_y));
        d.push('Z');
    }
    d
}

/// A closed polygon through `points` (`M … L … Z`); empty for fewer than three points.
pub fn polygon_path(points: &[(f64, f64)]) -> String {
    if points.len() < 3 {
        return String::new();
    }
    let mut d = String::new();
    move_to(&mut d, points[0]);
    for &p in &points[1..] {
        line_to(&mut d, p);
    }
    d.push('Z');
    d
}

/// The band between an upper and a lower line (e.g. a ±N % band or a min–max range): the upper
/// points left to right, then the lower points right to left, closed.
pub fn band_path(upper: &[(f64, f64)], lower: &[(f64, f64)]) -> String {
    let ring: Vec<(f64, f64)> = upper.iter().copied().chain(lower.iter().rev().copied()).collect();
    polygon_path(&ring)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_print_compactly() {
        assert_eq!(coord(12.0), "12");
        assert_eq!(coord(12.5), "12.5");
        assert_eq!(coord(1.23456), "1.23");
        assert_eq!(coord(-0.001), "0");
        assert_eq!(coord(-2.256), "-2.26");
        assert_eq!(coord(0.0), "0");
        assert_eq!(coord(100.0), "100", "zeros before the point stay");
    }

    #[test]
    fn line_with_gaps() {
        let pts = [Some((0.0, 10.0)), Some((10.0, 20.0)), None, Some((30.0, 5.5)), Some((40.0, 0.0))];
        assert_eq!(line_path(pts), "M0,10L10,20M30,5.5L40,0");
        assert_eq!(line_path([None, Some((1.0, 2.0)), None]), "M1,2h0", "isolated point");
        assert_eq!(line_path([None, None]), "");
        assert_eq!(line_path(Vec::new()), "");
    }

    #[test]
    fn projection_marks_missing_and_unplaceable_points() {
        let x = Scale::linear((0.0, 10.0), (0.0, 100.0));
        let y = Scale::log10((1.0, 100.0), (200.0, 0.0)).unwrap();
        let pts = [(0.0, Some(1.0)), (5.0, None), (6.0, Some(0.0)), (10.0, Some(100.0)), (f64::NAN, Some(10.0))];
        let projected = project(&pts, &x, &y);
        assert_eq!(projected, vec![Some((0.0, 200.0)), None, None, Some((100.0, 0.0)), None]);
        assert_eq!(line_path(projected), "M0,200h0M100,0h0");
    }

    #[test]
    fn areas_close_on_the_baseline_per_run() {
        let pts = [
            Some((0.0, 50.0)),
            Some((10.0, 40.0)),
            None,
            Some((20.0, 30.0)),
            None,
            Some((30.0, 30.0)),
            Some((40.0, 20.0)),
        ];
        assert_eq!(area_path(pts, 100.0), "M0,100L0,50L10,40L10,100ZM30,100L30,30L40,20L40,100Z");
    }

    #[test]
    fn polygons_and_bands() {
        assert_eq!(polygon_path(&[(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)]), "M0,0L10,0L10,10Z");
        assert_eq!(polygon_path(&[(0.0, 0.0), (1.0, 1.0)]), "");
        let upper = [(0.0, 10.0), (100.0, 0.0)];
        let lower = [(0.0, 20.0), (100.0, 10.0)];
        assert_eq!(band_path(&upper, &lower), "M0,10L100,0L100,10L0,20Z");
    }
}
