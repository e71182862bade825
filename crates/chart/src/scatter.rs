//! Predicted-versus-measured scatter helpers: a shared domain for both axes, the y = x reference
//! line, ±N % bands around it, and the agreement statistics shown in the legend.

use crate::path::{band_path, coord};
use crate::scale::{Scale, ScaleKind, extent};

/// One domain for both axes covering all x and y values (positive ones for log), so that y = x is
/// the diagonal of a square plot. `None` without drawable values.
pub fn shared_extent(points: &[(f64, f64)], kind: ScaleKind) -> Option<(f64, f64)> {
    extent(points.iter().flat_map(|&(x, y)| [x, y]), kind)
}

/// Screen end points of the line y = x over the part of the domain both axes show, or `None`
/// if the domains do not overlap.
pub fn identity_line(x: &Scale, y: &Scale) -> Option<[(f64, f64); 2]> {
    let (x0, x1) = (x.domain().0.min(x.domain().1), x.domain().0.max(x.domain().1));
    let (y0, y1) = (y.domain().0.min(y.domain().1), y.domain().0.max(y.domain().1));
    let (lo, hi) = (x0.max(y0), x1.min(y1));
    if lo >= hi {
        return None;
    }
    Some([(x.map(lo)?, y.map(lo)?), (x.map(hi)?, y.map(hi)?)])
}

/// SVG path data for the identity line (empty if it is not visible).
pub fn identity_path(x: &Scale, y: &Scale) -> String {
    identity_line(x, y)
        .map(|[a, b]| format!("M{},{}L{},{}", coord(a.0), coord(a.1), coord(b.0), coord(b.1)))
        .unwrap_or_default()
}

/// The band between y = (1 − p)·x and y = (1 + p)·x over the x domain, as SVG path data, for
/// `p` = `percent` / 100 in (0, 1). Sampled at 33 points evenly in the scale's own space (so it is
/// exact on lin–lin and log–log axes and smooth on mixed ones). Parts outside the plot must be
/// clipped by the caller. Empty if `percent` is out of range.
pub fn ratio_band_path(x: &Scale, y: &Scale, percent: f64) -> String {
    let p = percent / 100.0;
    if !(p > 0.0 && p < 1.0) {
        return String::new();
    }
    let kind = x.kind();
    let (t0, t1) = (kind.forward(x.domain().0), kind.forward(x.domain().1));
    let xs: Vec<f64> = (0..=32).map(|i| kind.backward(t0 + (t1 - t0) * f64::from(i) / 32.0)).collect();
    let line =
        |factor: f64| -> Vec<(f64, f64)> { xs.iter().filter_map(|&v| Some((x.map(v)?, y.map(v * factor)?))).collect() };
    let (upper, lower) = (line(1.0 + p), line(1.0 - p));
    if upper.len() < 2 || lower.len() < 2 {
        return String::new();
    }
    band_path(&upper, &lower)
}

/// Relative error of a prediction, (predicted − measured) / measured; `None` if measured is 0 or
/// a value is not finite.
pub fn relative_error(predicted: f64, measured: f64) -> Option<f64> {
    let e = (predicted - measured) / measured;
    (measured != 0.0 && e.is_finite()).then_some(e)
}

/// Agreement of predictions with measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    /// Points with a defined relative error.
    pub count: usize,
    /// Share of those within ±`percent` % (in [0, 1]).
    pub within: f64,
    /// Mean of |relative error| (MAPE as a fraction).
    pub mean_abs: f64,
}

/// Agreement statistics of `(predicted, measured)` pairs for a ±`percent` % band; `None` if no
/// pair has a defined relative error.
pub fn agreement(points: &[(f64, f64)], percent: f64) -> Option<Agreement> {
    let errors: Vec<f64> = points.iter().filter_map(|&(p, m)| relative_error(p, m)).collect();
    if errors.is_empty() {
        return None;
    }
    let n = errors.len() as f64;
    let inside = errors.iter().filter(|e| e.abs() <= percent / 100.0 + 1e-12).count() as f64;
    Some(Agreement {
        count: errors.len(),
        within: inside / n,
        mean_abs: errors.iter().map(|e| e.abs()).sum::<f64>() / n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_extent_covers_both_coordinates() {
        let pts = [(2.0, 3.0), (10.0, 7.0), (0.0, 50.0)];
        assert_eq!(shared_extent(&pts, ScaleKind::Linear), Some((0.0, 50.0)));
        assert_eq!(shared_extent(&pts, ScaleKind::Log10), Some((2.0, 50.0)));
        assert_eq!(shared_extent(&[], ScaleKind::Linear), None);
    }

    #[test]
    fn identity_line_spans_the_common_domain() {
        let x = Scale::log10((1.0, 100.0), (0.0, 200.0)).unwrap();
        let y = Scale::log10((1.0, 100.0), (200.0, 0.0)).unwrap();
        assert_eq!(identity_line(&x, &y), Some([(0.0, 200.0), (200.0, 0.0)]));
        assert_eq!(identity_path(&x, &y), "M0,200L200,0");
        // y shows only 10..1000: the line starts at 10.
        let y2 = Scale::log10((10.0, 1000.0), (200.0, 0.0)).unwrap();
        let [a, b] = identity_line(&x, &y2).unwrap();
        assert!((a.0 - 100.0).abs() < 1e-9 && (a.1 - 200.0).abs() < 1e-9);
        assert!((b.0 - 200.0).abs() < 1e-9 && (b.1 - 100.0).abs() < 1e-9);
        let far = Scale::log10((1e4, 1e5), (200.0, 0.0)).unwrap();
        assert_eq!(identity_line(&x, &far), None);
        assert_eq!(identity_path(&x, &far), "");
    }

    #[test]
    fn ratio_band_is_parallel_on_log_log() {
        let x = Scale::log10((1.0, 100.0), (0.0, 200.0)).unwrap();
        let y = Scale::log10((1.0, 100.0), (200.0, 0.0)).unwrap();
        let d = ratio_band_path(&x, &y, 20.0);
        assert!(d.starts_with("M0,") && d.ends_with('Z'), "{d}");
        // 66 vertices: 33 on each edge.
        assert_eq!(d.matches('L').count(), 65);
        // On log–log, the upper edge is offset from the diagonal by log10(1.2)/2 × 200 units.
        let first_y: f64 = d[3..d.find('L').unwrap()].parse().unwrap();
        assert!((first_y - (200.0 - 1.2f64.log10() * 100.0)).abs() < 0.01, "{first_y}");
        assert_eq!(ratio_band_path(&x, &y, 0.0), "");
        assert_eq!(ratio_band_path(&x, &y, 150.0), "");
    }

    #[test]
    fn agreement_statistics() {
        assert_eq!(relative_error(110.0, 100.0), Some(0.1));
        assert_eq!(relative_error(1.0, 0.0), None);
        let pts = [(110.0, 100.0), (80.0, 100.0), (100.0, 100.0), (5.0, 0.0)];
        let a = agreement(&pts, 10.0).unwrap();
        assert_eq!(a.count, 3);
        assert!((a.within - 2.0 / 3.0).abs() < 1e-12, "110 and 100 are within ±10 %, 80 is not");
        assert!((a.mean_abs - 0.1).abs() < 1e-12);
        assert_eq!(agreement(&[(1.0, 0.0)], 10.0), None);
    }
}
