//! When fmperf cannot tell layouts apart: the error band **between layouts of one job**, and how
//! many of the fastest predicted layouts fall inside it ("these 3 are within the band: try them")
//! instead of a ranking of noise.
//!
//! Two layouts of one job share the model, the part, the constants and most of fmperf's error; what
//! decides their order is the part of the error that differs between them. For every ranked
//! group of the shipped measured runs ([`super::ranking`]: the layout sweeps and the groups among
//! the training runs) each run's ratio `r = predicted / measured` throughput is divided by its
//! group's median ratio; the band `b` is the 80th percentile (nearest rank) of `|r / r_med − 1|`
//! over those runs ([`band_of`]; shipped as [`LAYOUT_BAND`], recomputed by
//! `tests/validate_ranking.rs`, which names the value to write when the model moves).
//!
//! A layout predicted to take `t` seconds may truly be faster than the layout predicted fastest
//! (`t_best`) when `t / t_best ≤ (1 + b) / (1 − b)`: each prediction may be off by up to `b` in
//! opposite directions. [`within_band`] counts those layouts (the fastest included).

use super::memory::percentile;
use super::ranking::Ranking;

/// The shipped band between layouts of one job (fraction: 0.05 = ±5 %), from [`band_of`] on the
/// shipped layout sweeps and the groups among the shipped training runs in extended mode.
pub const LAYOUT_BAND: f64 = 0.0586;

/// The percentile of the within-group deviations the band is drawn at.
pub const BAND_PERCENTILE: f64 = 0.8;

/// The band of `rankings` (see the module documentation); `None` without a ranked group.
pub fn band_of(rankings: &[&Ranking]) -> Option<f64> {
    let mut deviations = Vec::new();
    for g in rankings.iter().flat_map(|r| &r.groups) {
        let ratios: Vec<f64> = g.runs.iter().filter_map(|x| Some(x.predicted? / x.measured?)).collect();
        let mut sorted = ratios.clone();
        let Some(mid) = super::super::extended::efficiency::median(&mut sorted) else { continue };
        if ratios.len() < 2 || mid <= 0.0 {
            continue;
        }
        deviations.extend(ratios.iter().map(|r| (r / mid - 1.0).abs()));
    }
    percentile(&deviations, BAND_PERCENTILE)
}

/// The ratio of predicted times inside which a layout may truly be as fast as the fastest
/// predicted one: `(1 + band) / (1 − band)` (infinite for a band of 1 or more).
pub fn band_ratio(band: f64) -> f64 {
    if band >= 1.0 { f64::INFINITY } else { (1.0 + band.max(0.0)) / (1.0 - band.max(0.0)) }
}

/// How many of `times_s` (predicted times of layouts of one job [s]; non-finite or non-positive
/// values are not layouts) are within the band of the fastest: `t ≤ t_min · (1 + b) / (1 − b)`.
/// 0 for no layout, 1 when the fastest stands apart.
pub fn within_band(times_s: &[f64], band: f64) -> usize {
    let valid = || times_s.iter().copied().filter(|t| t.is_finite() && *t > 0.0);
    let Some(best) = valid().reduce(f64::min) else { return 0 };
    let limit = best * band_ratio(band);
    valid().filter(|t| *t <= limit).count()
}

/// What the explorer says about its fastest layouts: `None` when the fastest stands apart,
/// else "these N are within the band (±b %): try them".
pub fn band_message(times_s: &[f64], band: f64) -> Option<String> {
    let n = within_band(times_s, band);
    (n > 1).then(|| {
        format!(
            "these {n} layouts are within fmperf's error band between layouts (±{:.0} %): it cannot tell which is \
             fastest — try them",
            band * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_the_band_by_hand() {
        // b = 0.05: ratio 1.05 / 0.95 = 1.1053; of 10, 10.5, 11.0, 11.2, 20 s the first three are
        // within 11.053 s.
        let t = [11.2, 10.0, 20.0, 10.5, 11.0];
        assert!((band_ratio(0.05) - 1.05 / 0.95).abs() < 1e-15);
        assert_eq!(within_band(&t, 0.05), 3);
        assert_eq!(within_band(&t, 0.0), 1);
        assert_eq!(within_band(&[], 0.05), 0);
        assert_eq!(within_band(&[f64::NAN, -1.0, 3.0], 0.05), 1);
        assert_eq!(within_band(&t, 1.0), 5);
        assert!(band_message(&t, 0.05).unwrap().starts_with("these 3 layouts are within"));
        assert_eq!(band_message(&[10.0, 20.0], 0.05), None);
    }
}
