//! The time errors of a pool of rows at each set of efficiencies a fit tries, kept for the next
//! fit.
//!
//! A leave-one-source-out check runs one fit per source, and every fit walks the same grids
//! ([`super::fit`]): the basin grid is identical for all of them and their descents meet near the
//! same minimum. Pricing a row is the whole cost (an extended-mode evaluation, a few µs), so the
//! errors of **every** row of the pool at a point are computed once, the first time any fit asks
//! for that point, and each fit then only sums the rows it keeps. The sums are taken in row order,
//! exactly as an uncached fit takes them, so a fit with the cache returns the same constants, bit
//! for bit (`tests::cached_fit_equals_uncached`).
//!
//! The cache is bounded ([`CACHE_FLOATS`] errors, 8 bytes each); when a point would exceed it,
//! the points kept so far are dropped and the cache starts again (correct, only slower).

use super::compare::Prepared;
use crate::extended::efficiency::Efficiency;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// At most this many errors are kept (8 bytes each: 256 MiB).
pub const CACHE_FLOATS: usize = 32 << 20;

/// The encoding of "this row has no time error at this point" (a signalling NaN with a payload,
/// which no arithmetic produces, so it never collides with a computed error, NaN included).
const NONE_BITS: u64 = 0x7ff4_0000_dead_beef;

/// Errors of every pool row at the points fits have asked for.
#[derive(Debug, Clone, Default)]
pub struct FitCache {
    points: RefCell<HashMap<[u64; 4], Arc<[f64]>>>,
}

fn key(eta: Efficiency) -> [u64; 4] {
    [eta.matmul.to_bits(), eta.attention.to_bits(), eta.gemm_half_dim.to_bits(), eta.attention_half_seq.to_bits()]
}

/// A pool of rows and the cache of their errors: what a fit reads.
#[derive(Clone, Copy)]
pub struct Pool<'a> {
    /// The rows, in the order the fit sums them.
    pub rows: &'a [Prepared],
    /// Their errors at the points asked so far.
    pub cache: &'a FitCache,
}

impl Pool<'_> {
    /// The time error of every row at `eta` ([`NONE_BITS`] where a row has none).
    fn errors_at(&self, eta: Efficiency) -> Arc<[f64]> {
        let k = key(eta);
        if let Some(e) = self.cache.points.borrow().get(&k) {
            return e.clone();
        }
        let e: Arc<[f64]> = self.rows.iter().map(|r| r.time_error(eta).unwrap_or(f64::from_bits(NONE_BITS))).collect();
        let mut points = self.cache.points.borrow_mut();
        if (points.len() + 1) * self.rows.len() > CACHE_FLOATS {
            points.clear();
        }
        points.insert(k, e.clone());
        e
    }

    /// The errors of the rows `keep` marks at `eta`, in row order (rows without one left out).
    pub fn errors(&self, eta: Efficiency, keep: &[bool]) -> Vec<f64> {
        let e = self.errors_at(eta);
        e.iter().zip(keep).filter(|(x, k)| **k && x.to_bits() != NONE_BITS).map(|(x, _)| *x).collect()
    }

    /// Mean absolute error of the rows `keep` marks at `eta` (infinite when none has an error):
    /// [`super::fit::mean_abs`] of [`Pool::errors`], without collecting them.
    pub fn mean_abs(&self, eta: Efficiency, keep: &[bool]) -> f64 {
        let e = self.errors_at(eta);
        let kept = || e.iter().zip(keep).filter(|(x, k)| **k && x.to_bits() != NONE_BITS).map(|(x, _)| *x);
        let n = kept().count();
        if n == 0 { f64::INFINITY } else { kept().map(f64::abs).sum::<f64>() / n as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::compare::Mode;
    use crate::validate::fit::mean_abs;

    #[test]
    fn cached_errors_equal_the_rows_own_predictions() {
        let file = crate::validate::shipped_runs();
        let rows: Vec<Prepared> = file.rows.iter().take(40).map(Prepared::new).collect();
        let cache = FitCache::default();
        let pool = Pool { rows: &rows, cache: &cache };
        let keep: Vec<bool> = (0..rows.len()).map(|i| i % 3 != 0).collect();
        for eta in [Efficiency::FITTED, Efficiency { matmul: 0.55, attention: 0.35, ..Efficiency::FITTED }] {
            let direct: Vec<f64> = rows
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .filter_map(|(r, _)| r.predict(Mode::Extended, eta).error)
                .collect();
            assert!(direct.len() > 10);
            // Twice: computed, then read from the cache.
            for _ in 0..2 {
                assert_eq!(pool.errors(eta, &keep), direct);
                assert_eq!(pool.mean_abs(eta, &keep).to_bits(), mean_abs(&direct).to_bits());
            }
        }
        assert_eq!(pool.mean_abs(Efficiency::FITTED, &vec![false; rows.len()]), f64::INFINITY);
    }
}
