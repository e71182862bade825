//! Tick values for axes: "nice" linear ticks in 1-2-5 steps, decade ticks for log axes (with 2
//! and 5 in between when the span is small), and power-of-two ticks for device counts. Also the
//! matching "nice" domains, which end on a tick.
//!
//! Ticks are data values; [`crate::axis`] places and labels them. A tick is either labelled
//! (major: label + grid line) or not (minor: a short mark and a faint grid line only).

/// One tick on an axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tick {
    /// Data value.
    pub value: f64,
    /// Whether the tick carries a label (major) or only a mark (minor).
    pub labeled: bool,
}

impl Tick {
    fn major(value: f64) -> Tick {
        Tick { value, labeled: true }
    }

    fn minor(value: f64) -> Tick {
        Tick { value, labeled: false }
    }
}

/// `(min, max)` of two finite bounds, `None` if either is NaN or infinite.
fn ordered(a: f64, b: f64) -> Option<(f64, f64)> {
    (a.is_finite() && b.is_finite()).then(|| (a.min(b), a.max(b)))
}

/// A step of the form {1, 2, 5} × 10^k that splits `span` into about `target` intervals
/// (thresholds at √2, √10 and √50 of the raw step, as in d3). Returns 0 for an empty or invalid
/// span.
pub fn nice_step(span: f64, target: usize) -> f64 {
    let span = span.abs();
    if span == 0.0 || !span.is_finite() {
        return 0.0;
    }
    let raw = span / target.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let ratio = raw / power;
    let mantissa = if ratio >= 50f64.sqrt() {
        10.0
    } else if ratio >= 10f64.sqrt() {
        5.0
    } else if ratio >= 2f64.sqrt() {
        2.0
    } else {
        1.0
    };
    mantissa * power
}

/// `i × step` computed so that decimal steps come out exact (`3 × 0.1` is `0.3`, not
/// `0.30000000000000004`): a nice step below 1 is 1/n for an integer n, so divide by n.
fn multiple(i: f64, step: f64) -> f64 {
    if step < 1.0 { i / (1.0 / step).round() } else { i * step }
}

/// Multiples of the [`nice_step`] lying in `[lo, hi]` (ends included with a tolerance of 1e-9
/// step). Empty if the interval is empty or not finite; a degenerate interval gives its value.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let Some((lo, hi)) = ordered(lo, hi) else {
        return Vec::new();
    };
    if lo == hi {
        return vec![lo];
    }
    let step = nice_step(hi - lo, target);
    let eps = step * 1e-9;
    let first = ((lo - eps) / step).ceil();
    let last = ((hi + eps) / step).floor();
    (0..=(last - first) as i64)
        .map(|i| multiple(first + i as f64, step))
        .map(|v| if v == 0.0 { 0.0 } else { v })
        .collect()
}

/// Like [`linear_ticks`], but never more than `max_count` ticks: the target is lowered until the
/// nice step gives few enough (a nice step can give up to about twice the target).
pub fn linear_ticks_at_most(lo: f64, hi: f64, max_count: usize) -> Vec<f64> {
    let max_count = max_count.max(2);
    let mut target = max_count;
    loop {
        let ticks = linear_ticks(lo, hi, target);
        if ticks.len() <= max_count || target == 1 {
            return ticks;
        }
        target -= 1;
    }
}

/// `[lo, hi]` widened outwards to multiples of the nice step, so the axis starts and ends on a
/// tick. A degenerate interval is returned as is (pad it first, see [`crate::scale::pad`]).
pub fn nice_linear_domain(lo: f64, hi: f64, target: usize) -> (f64, f64) {
    let Some((mut lo, mut hi)) = ordered(lo, hi).filter(|(a, b)| a < b) else {
        return (lo, hi);
    };
    // Widening can change the step; two rounds settle it.
    for _ in 0..2 {
        let step = nice_step(hi - lo, target);
        lo = multiple((lo / step + 1e-9).floor(), step);
        hi = multiple((hi / step - 1e-9).ceil(), step);
    }
    (lo, hi)
}

/// Values m × 10^k in `[lo, hi]` for the given mantissas (each in [1, 10)), ascending.
fn decade_values(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
    let eps = 1e-9;
    let (a, b) = (lo.log10(), hi.log10());
    let mut out = Vec::new();
    for k in (a.floor() as i32 - 1)..=(b.ceil() as i32) {
        for &m in mantissas {
            let v = decimal_power(m, k);
            if v.log10() >= a - eps && v.log10() <= b + eps {
                out.push(v);
            }
        }
    }
    out
}

/// m × 10^k, exact for negative k too (2 × 10^-3 is 0.002, not 0.0020000000000000005).
fn decimal_power(m: f64, k: i32) -> f64 {
    if k >= 0 { m * 10f64.powi(k) } else { m / 10f64.powi(-k) }
}

/// Ticks for a log10 axis over `[lo, hi]` (both > 0), with at most `max_labels` labels:
/// - many decades: every power of ten is marked, every n-th labelled;
/// - a few decades: powers of ten labelled, and 2 × and 5 × 10^k labelled too if they fit,
///   else marked as minor ticks (up to 6 decades);
/// - less than two powers of ten inside: 1-2-5 × 10^k labelled, or if fewer than two of those
///   fit, linear nice ticks.
///
/// Returns an empty list if `lo` or `hi` is not positive and finite.
pub fn log_ticks(lo: f64, hi: f64, max_labels: usize) -> Vec<Tick> {
    let Some((lo, hi)) = ordered(lo, hi).filter(|&(lo, _)| lo > 0.0) else {
        return Vec::new();
    };
    let max_labels = max_labels.max(2);
    let powers = decade_values(lo, hi, &[1.0]);
    let one_two_five = decade_values(lo, hi, &[1.0, 2.0, 5.0]);
    if powers.len() > max_labels {
        let stride = powers.len().div_ceil(max_labels);
        return powers
            .iter()
            .map(|&v| {
                let k = v.log10().round() as i64;
                if k.rem_euclid(stride as i64) == 0 { Tick::major(v) } else { Tick::minor(v) }
            })
            .collect();
    }
    if powers.len() >= 2 {
        if one_two_five.len() <= max_labels {
            return one_two_five.into_iter().map(Tick::major).collect();
        }
        let decades = (hi / lo).log10();
        if decades <= 6.0 {
            return one_two_five
                .into_iter()
                .map(|v| if powers.contains(&v) { Tick::major(v) } else { Tick::minor(v) })
                .collect();
        }
        return powers.into_iter().map(Tick::major).collect();
    }
    if (2..=max_labels).contains(&one_two_five.len()) {
        return one_two_five.into_iter().map(Tick::major).collect();
    }
    linear_ticks_at_most(lo, hi, max_labels).into_iter().filter(|&v| v > 0.0).map(Tick::major).collect()
}

/// `[lo, hi]` (both > 0) widened to "nice" log bounds: the nearest 1-2-5 × 10^k values outside
/// (these carry ticks, see [`log_ticks`]), or powers of ten beyond six decades. Rounding to
/// powers of ten always would waste up to 40 % of the axis on a two-decade range. Non-positive
/// input is returned as is.
pub fn nice_log_domain(lo: f64, hi: f64) -> (f64, f64) {
    let Some((lo, hi)) = ordered(lo, hi).filter(|&(lo, _)| lo > 0.0) else {
        return (lo, hi);
    };
    let mantissas: &[f64] = if (hi / lo).log10() > 6.0 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    let below = |v: f64| {
        let k = v.log10().floor() as i32;
        let candidates = [k - 1, k].into_iter().flat_map(|k| mantissas.iter().map(move |&m| decimal_power(m, k)));
        candidates.filter(|&c| c <= v * (1.0 + 1e-9)).fold(f64::NAN, f64::max)
    };
    let above = |v: f64| {
        let k = v.log10().floor() as i32;
        let candidates = [k, k + 1].into_iter().flat_map(|k| mantissas.iter().map(move |&m| decimal_power(m, k)));
        candidates.filter(|&c| c >= v * (1.0 - 1e-9)).fold(f64::NAN, f64::min)
    };
    (below(lo), above(hi))
}

/// Ticks at powers of two in `[lo, hi]` (for device or node counts), at most `max_labels`
/// labelled: with too many, every n-th power is labelled (n chosen so labels are 2^(n·j)) and the
/// rest are minor. Fewer than two powers inside: linear nice ticks. Empty for invalid input.
pub fn pow2_ticks(lo: f64, hi: f64, max_labels: usize) -> Vec<Tick> {
    let Some((lo, hi)) = ordered(lo, hi).filter(|&(lo, _)| lo > 0.0) else {
        return Vec::new();
    };
    let max_labels = max_labels.max(2);
    let eps = 1e-9;
    let first = (lo.log2() - eps).ceil() as i32;
    let last = (hi.log2() + eps).floor() as i32;
    if last - first < 1 {
        return linear_ticks_at_most(lo, hi, max_labels).into_iter().filter(|&v| v > 0.0).map(Tick::major).collect();
    }
    let count = (last - first + 1) as usize;
    let stride = count.div_ceil(max_labels) as i32;
    (first..=last)
        .map(|k| {
            let v = 2f64.powi(k);
            if k.rem_euclid(stride) == 0 { Tick::major(v) } else { Tick::minor(v) }
        })
        .collect()
}

/// `[lo, hi]` (both > 0) widened to powers of two. Non-positive input is returned as is.
pub fn nice_pow2_domain(lo: f64, hi: f64) -> (f64, f64) {
    let Some((lo, hi)) = ordered(lo, hi).filter(|&(lo, _)| lo > 0.0) else {
        return (lo, hi);
    };
    (2f64.powi((lo.log2() + 1e-9).floor() as i32), 2f64.powi((hi.log2() - 1e-9).ceil() as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(ticks: &[Tick]) -> Vec<f64> {
        ticks.iter().map(|t| t.value).collect()
    }

    fn labeled(ticks: &[Tick]) -> Vec<f64> {
        ticks.iter().filter(|t| t.labeled).map(|t| t.value).collect()
    }

    #[test]
    fn nice_steps_follow_one_two_five() {
        let cases = [
            (10.0, 5, 2.0),
            (10.0, 10, 1.0),
            (100.0, 5, 20.0),
            (1.0, 5, 0.2),
            (0.37, 5, 0.1),
            (0.3, 5, 0.05),
            (7.0, 5, 1.0),
            (15.0, 5, 2.0),
            (16.0, 5, 5.0),
            (1234.0, 6, 200.0),
            (3e-6, 4, 1e-6),
            (0.0, 5, 0.0),
        ];
        for (span, target, step) in cases {
            let got = nice_step(span, target);
            assert!((got - step).abs() <= 1e-12 * step.max(1e-300), "span {span} / {target}: {got}, want {step}");
        }
    }

    #[test]
    fn linear_ticks_for_known_ranges() {
        assert_eq!(linear_ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(0.0, 1.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear_ticks(0.0, 0.3, 3), vec![0.0, 0.1, 0.2, 0.3], "exact decimals");
        assert_eq!(linear_ticks(-1.0, 1.0, 4), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(linear_ticks(3.2, 9.7, 5), vec![4.0, 5.0, 6.0, 7.0, 8.0, 9.0], "step 1: 6.5 / 5 is below 2^0.5");
        assert_eq!(linear_ticks(10.0, 0.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0], "either order");
        assert_eq!(linear_ticks(2017.0, 2024.0, 4), vec![2018.0, 2020.0, 2022.0, 2024.0]);
        assert_eq!(linear_ticks(0.0, 0.35, 7), vec![0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35]);
        assert_eq!(linear_ticks(5.0, 5.0, 5), vec![5.0]);
        assert!(linear_ticks(f64::NAN, 1.0, 5).is_empty());
        assert!(log_ticks(f64::NAN, 10.0, 5).is_empty());
        assert!(pow2_ticks(1.0, f64::INFINITY, 5).is_empty());
        // -0 is normalised so it never prints as "-0"
        assert!(linear_ticks(-1.0, 1.0, 2).iter().all(|v| *v != 0.0 || v.is_sign_positive()));
    }

    #[test]
    fn nice_linear_domains_end_on_ticks() {
        assert_eq!(nice_linear_domain(0.3, 9.6, 5), (0.0, 10.0));
        assert_eq!(nice_linear_domain(-0.12, 0.87, 5), (-0.2, 1.0));
        assert_eq!(nice_linear_domain(13.0, 87.0, 5), (0.0, 100.0));
        assert_eq!(nice_linear_domain(1.0, 1.0, 5), (1.0, 1.0));
        let (lo, hi) = nice_linear_domain(123.0, 4567.0, 6);
        let ticks = linear_ticks(lo, hi, 6);
        assert_eq!((ticks[0], *ticks.last().unwrap()), (lo, hi));
    }

    #[test]
    fn log_ticks_many_decades_thin_labels_and_keep_marks() {
        let t = log_ticks(1e-3, 1e9, 5);
        assert_eq!(values(&t).len(), 13, "every decade marked");
        assert_eq!(labeled(&t), vec![1e-3, 1.0, 1e3, 1e6, 1e9]);
        assert!(t.iter().all(|t| t.value.log10().fract().abs() < 1e-9 || (1.0 - t.value.log10().fract().abs()) < 1e-9));
    }

    #[test]
    fn log_ticks_few_decades_add_two_and_five() {
        // 1..1000 with room for 10 labels: 1 2 5 10 20 50 100 200 500 1000 all labelled.
        assert_eq!(
            labeled(&log_ticks(1.0, 1000.0, 10)),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        // With room for 4 labels only the decades are labelled; 2 and 5 stay as minor marks.
        let t = log_ticks(1.0, 1000.0, 4);
        assert_eq!(labeled(&t), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(values(&t).len(), 10);
        // Small values come out exact.
        assert_eq!(labeled(&log_ticks(1e-3, 1e-1, 8)), vec![0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]);
        // Wide but under the label budget: only powers, no 2/5 clutter beyond six decades.
        let t = log_ticks(1.0, 1e7, 8);
        assert_eq!(labeled(&t).len(), 8);
        assert_eq!(values(&t).len(), 8);
    }

    #[test]
    fn log_ticks_inside_one_decade() {
        assert_eq!(labeled(&log_ticks(1.5, 60.0, 6)), vec![2.0, 5.0, 10.0, 20.0, 50.0]);
        // 30..45 holds no 1-2-5 value at all: linear ticks.
        assert_eq!(labeled(&log_ticks(30.0, 45.0, 6)), vec![30.0, 35.0, 40.0, 45.0]);
        assert!(log_ticks(0.0, 10.0, 5).is_empty());
        assert!(log_ticks(-1.0, 10.0, 5).is_empty());
    }

    #[test]
    fn nice_log_domains() {
        assert_eq!(nice_log_domain(3.0, 4500.0), (2.0, 5000.0));
        assert_eq!(nice_log_domain(0.52, 113.0), (0.5, 200.0));
        assert_eq!(nice_log_domain(3e-4, 45.0), (2e-4, 50.0), "five decades: still 1-2-5");
        assert_eq!(nice_log_domain(3e-4, 4500.0), (1e-4, 1e4), "beyond six: powers of ten");
        assert_eq!(nice_log_domain(2.5, 30.0), (2.0, 50.0));
        assert_eq!(nice_log_domain(0.0032, 0.04), (0.002, 0.05));
        assert_eq!(nice_log_domain(10.0, 100.0), (10.0, 100.0), "already nice");
        assert_eq!(nice_log_domain(0.0, 5.0), (0.0, 5.0));
    }

    #[test]
    fn power_of_two_ticks_for_device_counts() {
        let t = pow2_ticks(1.0, 16384.0, 20);
        assert_eq!(labeled(&t), (0..=14).map(|k| 2f64.powi(k)).collect::<Vec<_>>());
        let t = pow2_ticks(8.0, 16384.0, 6);
        assert_eq!(values(&t).len(), 12);
        assert_eq!(labeled(&t), vec![16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0], "every second power: 4^k");
        assert!(labeled(&t).len() <= 6);
        assert_eq!(labeled(&pow2_ticks(3.0, 5.0, 6)), vec![3.0, 3.5, 4.0, 4.5, 5.0], "no two powers inside");
        assert!(pow2_ticks(0.0, 8.0, 4).is_empty());
        assert_eq!(nice_pow2_domain(3.0, 1000.0), (2.0, 1024.0));
        assert_eq!(nice_pow2_domain(8.0, 8.0), (8.0, 8.0));
    }
}
