//! Bar geometry: stacking the components of a bar (in data units), bands that share an axis
//! between bars (in screen units), and sub-bands for grouped bars.
//!
//! Stacking rule: positive components stack upwards from 0 in the given order, negative ones
//! downwards from 0 (a diverging stack), zero and non-finite components get no segment. A
//! segment's share is its |value| over the sum of |values| of the bar.

/// One stacked segment, in data units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Index of the component (into the legend).
    pub component: usize,
    /// The component's value.
    pub value: f64,
    /// Where the segment starts and ends along the value axis (start is nearer to 0).
    pub start: f64,
    pub end: f64,
    /// |value| / Σ|values| of the bar, in [0, 1].
    pub share: f64,
}

/// A stacked bar.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct BarStack {
    /// Drawable segments in component order.
    pub segments: Vec<Segment>,
    /// Sum of the positive components (top of the stack).
    pub positive: f64,
    /// Sum of the negative components (bottom of the stack, ≤ 0).
    pub negative: f64,
}

impl BarStack {
    /// Net total: positive + negative.
    pub fn total(&self) -> f64 {
        self.positive + self.negative
    }
}

/// Stacks one bar's components (see the module rules).
pub fn stack(values: &[f64]) -> BarStack {
    let magnitude: f64 = values.iter().filter(|v| v.is_finite()).map(|v| v.abs()).sum();
    let mut out = BarStack::default();
    for (component, &value) in values.iter().enumerate() {
        if !value.is_finite() || value == 0.0 {
            continue;
        }
        let base = if value > 0.0 { &mut out.positive } else { &mut out.negative };
        let start = *base;
        *base += value;
        let share = if magnitude > 0.0 { value.abs() / magnitude } else { 0.0 };
        out.segments.push(Segment { component, value, start, end: *base, share });
    }
    out
}

/// The value range covered by a set of stacks, always including 0: `(min negative, max positive)`.
pub fn stacks_extent(stacks: &[BarStack]) -> (f64, f64) {
    stacks.iter().fold((0.0, 0.0), |(lo, hi), s| (f64::min(lo, s.negative), f64::max(hi, s.positive)))
}

/// `n` equal bands along a screen interval, d3-style: `inner` is the gap between bands and
/// `outer` the gap at each end, both as fractions of the band step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bands {
    pub n: usize,
    pub start: f64,
    pub end: f64,
    pub inner: f64,
    pub outer: f64,
}

impl Bands {
    /// Bands over `[start, end]` with the given padding fractions (clamped to [0, 1)).
    pub fn new(n: usize, (start, end): (f64, f64), inner: f64, outer: f64) -> Bands {
        Bands { n, start, end, inner: inner.clamp(0.0, 0.95), outer: outer.clamp(0.0, 0.95) }
    }

    /// Distance between the starts of neighbouring bands (0 if there are none).
    pub fn step(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        (self.end - self.start) / (self.n as f64 - self.inner + 2.0 * self.outer)
    }

    /// Width of one band.
    pub fn width(&self) -> f64 {
        self.step() * (1.0 - self.inner)
    }

    /// Start position of band `i`.
    pub fn band_start(&self, i: usize) -> f64 {
        self.start + self.step() * (self.outer + i as f64)
    }

    /// Centre of band `i`.
    pub fn center(&self, i: usize) -> f64 {
        self.band_start(i) + self.width() / 2.0
    }

    /// The band whose step (band plus the gap after it) contains `pos`, if any.
    pub fn index_at(&self, pos: f64) -> Option<usize> {
        let step = self.step();
        if step == 0.0 {
            return None;
        }
        let k = ((pos - self.start) / step - self.outer + self.inner / 2.0).floor();
        (k >= 0.0 && (k as usize) < self.n).then_some(k as usize)
    }

    /// Sub-band `j` of `m` inside band `i` for grouped bars, with `gap` (a fraction of the
    /// sub-band) between members: `(start, width)`.
    pub fn grouped(&self, i: usize, j: usize, m: usize, gap: f64) -> (f64, f64) {
        let inner = Bands::new(m, (self.band_start(i), self.band_start(i) + self.width()), gap, 0.0);
        (inner.band_start(j), inner.width())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacked_sums_and_shares() {
        let s = stack(&[2.0, 3.0, 5.0]);
        assert_eq!(s.positive, 10.0);
        assert_eq!(s.total(), 10.0);
        let ends: Vec<(f64, f64)> = s.segments.iter().map(|g| (g.start, g.end)).collect();
        assert_eq!(ends, [(0.0, 2.0), (2.0, 5.0), (5.0, 10.0)]);
        let shares: Vec<f64> = s.segments.iter().map(|g| g.share).collect();
        assert_eq!(shares, [0.2, 0.3, 0.5]);
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn zeros_and_nans_are_skipped_but_keep_their_component_index() {
        let s = stack(&[1.0, 0.0, f64::NAN, 3.0]);
        let comps: Vec<usize> = s.segments.iter().map(|g| g.component).collect();
        assert_eq!(comps, [0, 3]);
        assert_eq!(s.segments[1].start, 1.0);
        assert_eq!(s.segments[1].share, 0.75);
        assert_eq!(stack(&[]).segments.len(), 0);
        assert_eq!(stack(&[0.0, 0.0]).total(), 0.0);
    }

    #[test]
    fn negatives_stack_downwards() {
        let s = stack(&[4.0, -1.0, 2.0, -3.0]);
        assert_eq!((s.positive, s.negative, s.total()), (6.0, -4.0, 2.0));
        let neg: Vec<(f64, f64)> = s.segments.iter().filter(|g| g.value < 0.0).map(|g| (g.start, g.end)).collect();
        assert_eq!(neg, [(0.0, -1.0), (-1.0, -4.0)]);
        assert_eq!(s.segments[0].share, 0.4);
        let stacks = [s, stack(&[1.0, 9.0])];
        assert_eq!(stacks_extent(&stacks), (-4.0, 10.0));
        assert_eq!(stacks_extent(&[]), (0.0, 0.0));
    }

    #[test]
    fn bands_tile_the_interval() {
        let b = Bands::new(4, (0.0, 400.0), 0.2, 0.1);
        // step = 400 / (4 - 0.2 + 0.2) = 100
        assert_eq!(b.step(), 100.0);
        assert_eq!(b.width(), 80.0);
        assert_eq!(b.band_start(0), 10.0);
        assert_eq!(b.band_start(3), 310.0);
        assert_eq!(b.band_start(3) + b.width() + b.outer * b.step(), 400.0, "ends with the outer gap");
        assert_eq!(b.center(1), 150.0);
        assert_eq!(b.index_at(15.0), Some(0));
        assert_eq!(b.index_at(389.0), Some(3));
        assert_eq!(b.index_at(150.0), Some(1));
        assert_eq!(b.index_at(-50.0), None);
        assert_eq!(b.index_at(450.0), None);
        assert_eq!(Bands::new(0, (0.0, 100.0), 0.1, 0.1).index_at(5.0), None);
    }

    #[test]
    fn grouped_members_share_a_band() {
        let b = Bands::new(2, (0.0, 200.0), 0.0, 0.0);
        let (s0, w0) = b.grouped(1, 0, 2, 0.0);
        let (s1, w1) = b.grouped(1, 1, 2, 0.0);
        assert_eq!((s0, w0, s1, w1), (100.0, 50.0, 150.0, 50.0));
        let (g0, gw) = b.grouped(0, 0, 3, 0.25);
        assert!(g0 >= 0.0 && gw > 0.0 && g0 + 3.0 * gw < 100.0);
    }
}
