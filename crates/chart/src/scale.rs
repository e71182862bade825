//! Scales: map a data domain onto a screen range (SVG user units, y grows downwards), linearly
//! or logarithmically, and back.
//!
//! Zero and negative values on a log scale: they have no position. [`Scale::log10`] refuses a
//! domain that is not strictly positive (returns [`ScaleError`]), [`Scale::map`] returns `None`
//! for a value ≤ 0 (the chart then draws a gap, as for a missing point), and [`extent`] skips such
//! values when it computes a log domain. Non-finite values (NaN, ±∞) are treated the same way on
//! both kinds of scale.

use std::fmt;

/// How a scale maps data values to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScaleKind {
    /// Position proportional to the value.
    #[default]
    Linear,
    /// Position proportional to log10 of the value; only positive values have a position.
    Log10,
}

impl ScaleKind {
    /// Whether `v` can be placed on this kind of scale (finite, and positive for log).
    pub fn accepts(self, v: f64) -> bool {
        v.is_finite() && (self == ScaleKind::Linear || v > 0.0)
    }

    /// The value in the space where the mapping is linear (v itself, or log10 v).
    pub fn forward(self, v: f64) -> f64 {
        match self {
            ScaleKind::Linear => v,
            ScaleKind::Log10 => v.log10(),
        }
    }

    /// Inverse of [`ScaleKind::forward`].
    pub fn backward(self, t: f64) -> f64 {
        match self {
            ScaleKind::Linear => t,
            ScaleKind::Log10 => 10f64.powf(t),
        }
    }
}

/// Why a scale could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum ScaleError {
    /// A domain or range end is NaN or infinite.
    NotFinite { lo: f64, hi: f64 },
    /// A log domain must be strictly positive.
    NonPositiveLogDomain { lo: f64, hi: f64 },
}

impl fmt::Display for ScaleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScaleError::NotFinite { lo, hi } => write!(f, "scale bounds must be finite, got [{lo}, {hi}]"),
            ScaleError::NonPositiveLogDomain { lo, hi } => {
                write!(f, "a log scale needs a positive domain, got [{lo}, {hi}]; use a linear axis for data ≤ 0")
            }
        }
    }
}

impl std::error::Error for ScaleError {}

/// A mapping from a data domain `[d0, d1]` to a screen range `[r0, r1]`. The range may be
/// reversed (r0 > r1), as for a y axis. A degenerate domain (d0 == d1) maps every value to the
/// middle of the range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    kind: ScaleKind,
    domain: (f64, f64),
    range: (f64, f64),
    /// forward(domain.0), forward(domain.1), cached.
    t0: f64,
    t1: f64,
}

impl Scale {
    /// A scale of the given kind; checks the bounds (see [`ScaleError`]).
    pub fn new(kind: ScaleKind, domain: (f64, f64), range: (f64, f64)) -> Result<Scale, ScaleError> {
        let (lo, hi) = domain;
        if ![lo, hi, range.0, range.1].iter().all(|v| v.is_finite()) {
            return Err(ScaleError::NotFinite { lo, hi });
        }
        if kind == ScaleKind::Log10 && (lo <= 0.0 || hi <= 0.0) {
            return Err(ScaleError::NonPositiveLogDomain { lo, hi });
        }
        Ok(Scale { kind, domain, range, t0: kind.forward(lo), t1: kind.forward(hi) })
    }

    /// A linear scale. Non-finite bounds fall back to the domain `[0, 1]`.
    pub fn linear(domain: (f64, f64), range: (f64, f64)) -> Scale {
        Scale::new(ScaleKind::Linear, domain, range)
            .or_else(|_| Scale::new(ScaleKind::Linear, (0.0, 1.0), range))
            .unwrap_or(Scale { kind: ScaleKind::Linear, domain: (0.0, 1.0), range: (0.0, 1.0), t0: 0.0, t1: 1.0 })
    }

    /// A base-10 logarithmic scale; the domain must be positive and finite.
    pub fn log10(domain: (f64, f64), range: (f64, f64)) -> Result<Scale, ScaleError> {
        Scale::new(ScaleKind::Log10, domain, range)
    }

    /// The kind of mapping.
    pub fn kind(&self) -> ScaleKind {
        self.kind
    }

    /// The data domain `(d0, d1)` as given.
    pub fn domain(&self) -> (f64, f64) {
        self.domain
    }

    /// The screen range `(r0, r1)` as given.
    pub fn range(&self) -> (f64, f64) {
        self.range
    }

    /// Position of `v` (not clamped: values outside the domain land outside the range), or
    /// `None` if `v` has no position on this scale (non-finite, or ≤ 0 on a log scale).
    pub fn map(&self, v: f64) -> Option<f64> {
        if !self.kind.accepts(v) {
            return None;
        }
        let (r0, r1) = self.range;
        let span = self.t1 - self.t0;
        if span == 0.0 {
            return Some((r0 + r1) / 2.0);
        }
        Some(r0 + (self.kind.forward(v) - self.t0) / span * (r1 - r0))
    }

    /// Like [`Scale::map`], but positions outside the range are clamped onto its ends (for
    /// drawing values slightly outside a fixed domain at the edge of the plot).
    pub fn map_clamped(&self, v: f64) -> Option<f64> {
        let (lo, hi) = (self.range.0.min(self.range.1), self.range.0.max(self.range.1));
        self.map(v).map(|p| p.clamp(lo, hi))
    }

    /// The data value at screen position `p` (the inverse of [`Scale::map`]). A degenerate domain
    /// or range returns the domain start.
    pub fn invert(&self, p: f64) -> f64 {
        let (r0, r1) = self.range;
        if r1 == r0 || self.t1 == self.t0 {
            return self.domain.0;
        }
        self.kind.backward(self.t0 + (p - r0) / (r1 - r0) * (self.t1 - self.t0))
    }

    /// Whether `v` lies within the domain (inclusive, either orientation).
    pub fn contains(&self, v: f64) -> bool {
        let (a, b) = self.domain;
        v >= a.min(b) && v <= a.max(b)
    }
}

/// The smallest and largest of `values` that can be placed on a `kind` scale (finite, and
/// positive for log), or `None` if there is none.
pub fn extent(values: impl IntoIterator<Item = f64>, kind: ScaleKind) -> Option<(f64, f64)> {
    values.into_iter().filter(|&v| kind.accepts(v)).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// Widens `(lo, hi)` by `fraction` of its span on each side (in log space for a log scale), so
/// that markers at the extremes are not cut by the plot edge. A degenerate domain (lo == hi) is
/// widened around its value: by ±1 if it is 0, else by ±`max(fraction, 0.1)` × |value| (linear)
/// or a factor 10^±0.5 (log). A log domain is never widened to ≤ 0.
pub fn pad(domain: (f64, f64), kind: ScaleKind, fraction: f64) -> (f64, f64) {
    let (lo, hi) = (domain.0.min(domain.1), domain.0.max(domain.1));
    match kind {
        ScaleKind::Linear => {
            if lo == hi {
                let half = if lo == 0.0 { 1.0 } else { lo.abs() * fraction.max(0.1) };
                return (lo - half, hi + half);
            }
            let extra = (hi - lo) * fraction;
            (lo - extra, hi + extra)
        }
        ScaleKind::Log10 => {
            let (a, b) = (lo.log10(), hi.log10());
            let extra = if a == b { 0.5 } else { (b - a) * fraction };
            (10f64.powf(a - extra), 10f64.powf(b + extra))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn linear_maps_ends_middle_and_reversed_range() {
        let s = Scale::linear((0.0, 10.0), (0.0, 200.0));
        assert_eq!(s.map(0.0), Some(0.0));
        assert_eq!(s.map(10.0), Some(200.0));
        assert_eq!(s.map(2.5), Some(50.0));
        assert_eq!(s.map(-5.0), Some(-100.0), "not clamped by default");
        assert_eq!(s.map_clamped(-5.0), Some(0.0));
        // A y axis: data up, screen down.
        let y = Scale::linear((0.0, 100.0), (300.0, 20.0));
        assert_eq!(y.map(0.0), Some(300.0));
        assert_eq!(y.map(100.0), Some(20.0));
        assert_eq!(y.map(50.0), Some(160.0));
        assert_eq!(y.map_clamped(1e9), Some(20.0));
        assert_eq!(y.map(f64::NAN), None);
        assert_eq!(y.map(f64::INFINITY), None);
    }

    #[test]
    fn round_trips_on_both_kinds() {
        let lin = Scale::linear((-3.0, 7.0), (400.0, 10.0));
        let log = Scale::log10((1e-3, 1e5), (10.0, 630.0)).unwrap();
        for v in [-3.0, -1.25, 0.0, 0.1, 3.3, 7.0, 12.0] {
            assert!(close(lin.invert(lin.map(v).unwrap()), v), "lin {v}");
        }
        for v in [1e-3, 0.02, 1.0, 3.0, 777.0, 1e5, 1e7] {
            assert!(close(log.invert(log.map(v).unwrap()), v), "log {v}");
        }
        for p in [10.0, 100.0, 333.3, 630.0] {
            assert!(close(log.map(log.invert(p)).unwrap(), p), "pixel {p}");
        }
    }

    #[test]
    fn log_places_decades_evenly() {
        let s = Scale::log10((1.0, 1000.0), (0.0, 300.0)).unwrap();
        assert!(close(s.map(10.0).unwrap(), 100.0));
        assert!(close(s.map(100.0).unwrap(), 200.0));
        assert!(close(s.map(10f64.sqrt()).unwrap(), 50.0));
        assert_eq!(s.kind(), ScaleKind::Log10);
    }

    #[test]
    fn log_edge_cases_zero_negative_and_bad_domains() {
        let s = Scale::log10((1.0, 100.0), (0.0, 100.0)).unwrap();
        assert_eq!(s.map(0.0), None, "zero has no log position");
        assert_eq!(s.map(-1.0), None);
        assert_eq!(s.map_clamped(-1.0), None, "clamping does not invent a position");
        assert_eq!(Scale::log10((0.0, 10.0), (0.0, 1.0)), Err(ScaleError::NonPositiveLogDomain { lo: 0.0, hi: 10.0 }));
        assert!(Scale::log10((-5.0, -1.0), (0.0, 1.0)).is_err());
        assert!(matches!(Scale::log10((1.0, f64::NAN), (0.0, 1.0)), Err(ScaleError::NotFinite { .. })));
        let msg = Scale::log10((0.0, 1.0), (0.0, 1.0)).unwrap_err().to_string();
        assert!(msg.contains("positive") && msg.contains("linear"), "{msg}");
    }

    #[test]
    fn degenerate_domain_and_range() {
        let s = Scale::linear((5.0, 5.0), (0.0, 100.0));
        assert_eq!(s.map(5.0), Some(50.0));
        assert_eq!(s.map(7.0), Some(50.0));
        assert_eq!(s.invert(10.0), 5.0);
        let flat = Scale::linear((0.0, 10.0), (40.0, 40.0));
        assert_eq!(flat.map(3.0), Some(40.0));
        assert_eq!(flat.invert(40.0), 0.0);
        let fallback = Scale::linear((f64::NAN, 1.0), (0.0, 10.0));
        assert_eq!(fallback.domain(), (0.0, 1.0));
        assert!(s.contains(5.0) && !s.contains(5.1));
    }

    #[test]
    fn extent_skips_what_the_scale_cannot_place() {
        let data = [3.0, -2.0, 0.0, f64::NAN, 40.0, f64::INFINITY, 0.5];
        assert_eq!(extent(data, ScaleKind::Linear), Some((-2.0, 40.0)));
        assert_eq!(extent(data, ScaleKind::Log10), Some((0.5, 40.0)));
        assert_eq!(extent([0.0, -1.0], ScaleKind::Log10), None);
        assert_eq!(extent(Vec::<f64>::new(), ScaleKind::Linear), None);
    }

    #[test]
    fn padding_linear_log_and_degenerate() {
        assert_eq!(pad((0.0, 10.0), ScaleKind::Linear, 0.05), (-0.5, 10.5));
        assert_eq!(pad((10.0, 0.0), ScaleKind::Linear, 0.0), (0.0, 10.0), "orders the ends");
        assert_eq!(pad((0.0, 0.0), ScaleKind::Linear, 0.05), (-1.0, 1.0));
        assert_eq!(pad((50.0, 50.0), ScaleKind::Linear, 0.05), (45.0, 55.0));
        let (lo, hi) = pad((1.0, 1e4), ScaleKind::Log10, 0.25);
        assert!(close(lo, 0.1) && close(hi, 1e5), "{lo} {hi}");
        let (lo, hi) = pad((8.0, 8.0), ScaleKind::Log10, 0.05);
        assert!(lo > 0.0 && close(lo * hi, 64.0) && close(hi / lo, 10.0), "{lo} {hi}");
    }
}
