//! The time errors of a pool of rows at each set of efficiencies a fit tries, summed per group of
//! rows and kept for the other fits of the same pool.
//!
//! A leave-one-source-out check runs one fit per source, and every fit walks the same grids
//! ([`super::fit`]): the basin grid is identical for all of them and their descents meet near the
//! same minimum. So the fits run side by side, one size pair `(c, c_att)` at a time
//! ([`super::fit::MultiFit`]), and the work of a point is done once for all of them:
//!
//! * **Pricing** (an extended-mode evaluation, a few µs; for a dense model a re-pricing of its
//!   operations laid out once, [`crate::extended::timing`]) is done once per *priced configuration*:
//!   rows with the same workload, part, layout and switches ([`Prepared::pricing_key`]: a file
//!   restating a run in several figures, the same layout measured by several sources) share one
//!   iteration time, which each row converts to its own figure ([`Conversion`]).
//! * **Summing**: every row belongs to a group — the rows no held-out fit leaves out, the rows of
//!   exactly one source, and (rare) the shipped rows that restate the runs of several sources —
//!   and a point keeps, per group, the sum of `|error|` (in row order) and the count. A fit's
//!   objective is then a few additions of group sums (prefix sums over the sources), not a pass
//!   over the pool: 1,000 held-out fits over 10,000 rows cost what one does.
//!
//! * **Fast and exact values**: a fit walks grids and lines of points and keeps the first point
//!   of least mean error ([`FitCache::argmin`]). Each walk's points are priced together with each
//!   side of a block priced once per value of its own constants
//!   ([`crate::extended::timing::TimePlan::times_s`]): the exact terms summed in another order,
//!   so a mean may differ from the exact one in its last bits (~1e-15 relative, far below
//!   [`NEAR_TIE`]). Where two points' fast means are within [`NEAR_TIE`] of the least, their
//!   exact means ([`FitCache::mean_abs`], each row priced as [`crate::extended::evaluate()`]
//!   prices it) decide, in walk order: the point kept is the one the exact means alone would
//!   keep ([`first_minimum`]), at a fraction of the cost.
//!
//! The objective of a fit is `(sum over its groups) / (rows it keeps)`, the groups added in a
//! fixed order ([`Keep`]; the groups of several sources as their total less those of the source
//! held out); a fit over one group of rows ([`super::fit::fit_on`]) sums them in row order, as
//! before. Elsewhere a mean may differ from one sum in row order in its last bits (the shipped
//! files' fitted constants and reports are unchanged: `fmperf validate --data builtin*` gives
//! the same bytes as before the grouping). Points are kept for the current size pair only
//! ([`FitCache::clear`]): the fits of one pool never come back to a size pair.

use super::prepared::{Conversion, Prepared, PricingKey};
use crate::extended::efficiency::Efficiency;
use crate::extended::timing::{PointBatch, SideSlots, TimePlan};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Which rows of the pool a fit keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every row.
    All,
    /// Every row that does not count as source `s` (its own rows and the shipped rows of the same
    /// run or title).
    Without(usize),
}

/// The sums of `|error|` and the counts of every group at one point, ready for any [`Keep`].
#[derive(Debug)]
struct PointSums {
    /// `left[k]`: groups `0..=k` (the rows of no source, then sources `0..k`) added in order.
    left: Vec<(f64, u64)>,
    /// `right[k]`: groups `k..=S` added from the last; `right[S + 1]` = nothing.
    right: Vec<(f64, u64)>,
    /// Groups of rows that count as several sources, in the order of [`FitCache::extras`].
    extras: Vec<(f64, u64)>,
    /// Their sums added in order.
    extras_total: (f64, u64),
}

/// Errors of every pool row at the points fits have asked for, summed per group.
#[derive(Debug, Clone, Default)]
pub struct FitCache {
    /// Per row: its priced configuration (index into `priced`) and its conversion and measured
    /// figure; `None` for a row without a time error.
    timed: Vec<Option<(usize, Conversion, f64)>>,
    /// One row of each priced configuration.
    priced: Vec<usize>,
    /// Each priced configuration laid out once for pricing at every point
    /// ([`crate::extended::timing::TimePlan`]; `None`: priced in full).
    plans: RefCell<Vec<Option<TimePlan>>>,
    /// Per row: its group (0: no source; `1 + s`: source `s` alone; `1 + S + j`: `extras[j]`).
    group_of: Vec<usize>,
    /// Sources the rows may count as.
    sources: usize,
    /// The source sets of rows that count as several sources.
    extras: Vec<Vec<usize>>,
    /// Per source: the indices of the `extras` that count as it.
    touching: Vec<Vec<usize>>,
    /// Sums of the fast prices at the points walked ([`FitCache::argmin`]).
    points: RefCell<HashMap<[u64; 4], Arc<PointSums>>>,
    /// Sums of the exact prices at the points asked for ([`FitCache::mean_abs`]).
    exact: RefCell<HashMap<[u64; 4], Arc<PointSums>>>,
    /// The side values the plans keep ([`TimePlan::times_s`]), for the current size pair.
    slots: RefCell<SideSlots>,
    /// Walks priced exactly too (a check of the fast path: the same points kept).
    exact_only: bool,
}

/// How far above the least fast mean another point's fast mean must be for the exact means not
/// to be asked (relative to the least, plus an absolute floor): fast and exact means differ by
/// rounding only, ~1e-15 relative.
pub const NEAR_TIE: f64 = 1e-9;

/// The first index of least value among `values` as the exact values `exact` would give it,
/// `values` being within rounding of them: the least of `values`, and where others are within
/// [`NEAR_TIE`] of it, the first of least `exact` value among them. `None` when no value is finite.
pub fn first_minimum(values: &[f64], exact: &mut dyn FnMut(usize) -> f64) -> Option<usize> {
    let least = values.iter().copied().fold(f64::INFINITY, f64::min);
    if !least.is_finite() {
        return None;
    }
    let band = least + NEAR_TIE * least.abs() + 1e-12;
    let near: Vec<usize> = (0..values.len()).filter(|&i| values[i] <= band).collect();
    if let [only] = near.as_slice() {
        return Some(*only);
    }
    let mut best = (f64::INFINITY, near[0]);
    for i in near {
        let v = exact(i);
        if v < best.0 {
            best = (v, i);
        }
    }
    Some(best.1)
}

fn key(eta: Efficiency) -> [u64; 4] {
    [eta.matmul.to_bits(), eta.attention.to_bits(), eta.gemm_half_dim.to_bits(), eta.attention_half_seq.to_bits()]
}

impl FitCache {
    /// The cache of `rows`, where `member_of[i]` lists the sources (indices below `sources`) row
    /// `i` counts as when one is held out.
    pub fn new(rows: &[Prepared], member_of: &[Vec<usize>], sources: usize) -> FitCache {
        let mut configs: HashMap<PricingKey<'_>, usize> = HashMap::new();
        let mut priced = Vec::new();
        let timed = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let setup = r.setup.as_ref().ok()?;
                let measured = setup.metric.as_ref()?.value;
                let (conversion, _) = Conversion::of(setup).ok()?;
                let config = *configs.entry(r.pricing_key()?).or_insert_with(|| {
                    priced.push(i);
                    priced.len() - 1
                });
                Some((config, conversion, measured))
            })
            .collect();
        let mut extras: Vec<Vec<usize>> = Vec::new();
        let group_of = member_of
            .iter()
            .map(|m| match m.as_slice() {
                [] => 0,
                [s] => 1 + s,
                several => {
                    let mut set = several.to_vec();
                    crate::sort::sort(&mut set);
                    let j = extras.iter().position(|e| *e == set).unwrap_or_else(|| {
                        extras.push(set);
                        extras.len() - 1
                    });
                    1 + sources + j
                }
            })
            .collect();
        let mut touching = vec![Vec::new(); sources];
        for (j, set) in extras.iter().enumerate() {
            for &s in set {
                touching[s].push(j);
            }
        }
        let plans = RefCell::new(priced.iter().map(|&i| rows[i].time_plan()).collect());
        FitCache {
            timed,
            priced,
            plans,
            group_of,
            sources,
            extras,
            touching,
            points: RefCell::default(),
            exact: RefCell::default(),
            slots: RefCell::default(),
            exact_only: false,
        }
    }

    /// The same cache walking with exact prices only (the reference the fast walks are checked
    /// against: the same points kept).
    pub fn exact_only(mut self) -> FitCache {
        self.exact_only = true;
        self
    }

    /// A cache of `rows` as one group: every fit keeps them all ([`Keep::All`]).
    pub fn whole(rows: &[Prepared]) -> FitCache {
        FitCache::new(rows, &vec![Vec::new(); rows.len()], 0)
    }

    /// Forgets the points asked so far (a fit moving to another size pair).
    pub fn clear(&self) {
        self.points.borrow_mut().clear();
        self.exact.borrow_mut().clear();
        self.slots.borrow_mut().clear();
    }

    /// The time error of every row at `eta` (`None` where a row has none), each priced
    /// configuration priced once.
    pub fn row_errors(&self, rows: &[Prepared], eta: Efficiency) -> Vec<Option<f64>> {
        let mut times = self.times(rows, &[eta]);
        self.errors_of(&times.pop().unwrap_or_default())
    }

    /// The iteration time of every priced configuration at each of `etas` (one list per point),
    /// configuration by configuration: one configuration's operations stay in the processor's
    /// cache while it is priced at every point.
    fn times(&self, rows: &[Prepared], etas: &[Efficiency]) -> Vec<Vec<Option<f64>>> {
        let mut times = vec![vec![None; self.priced.len()]; etas.len()];
        let mut plans = self.plans.borrow_mut();
        for (c, (&i, plan)) in self.priced.iter().zip(plans.iter_mut()).enumerate() {
            for (t, &eta) in times.iter_mut().zip(etas) {
                t[c] = rows[i].planned_time_s(plan.as_mut(), eta);
            }
        }
        times
    }

    /// The time error of every row from its configuration's time `times`.
    fn errors_of(&self, times: &[Option<f64>]) -> Vec<Option<f64>> {
        self.timed
            .iter()
            .map(|t| {
                let (config, conversion, measured) = t.as_ref()?;
                Some(conversion.at(times[*config]?) / measured - 1.0)
            })
            .collect()
    }

    /// The time of every priced configuration at each point of `batch` (one list per point),
    /// configuration by configuration, each side of a plan priced once per value
    /// ([`TimePlan::times_s`]; a configuration without a plan priced in full).
    fn fast_times(&self, rows: &[Prepared], batch: &PointBatch) -> Vec<Vec<Option<f64>>> {
        let etas = batch.points();
        let mut times = vec![vec![None; self.priced.len()]; etas.len()];
        let mut plans = self.plans.borrow_mut();
        for (c, (&i, plan)) in self.priced.iter().zip(plans.iter_mut()).enumerate() {
            match plan {
                Some(plan) => {
                    for (t, x) in times.iter_mut().zip(plan.times_s(batch)) {
                        t[c] = x;
                    }
                }
                None => {
                    for (t, &eta) in times.iter_mut().zip(etas) {
                        t[c] = rows[i].planned_time_s(None, eta);
                    }
                }
            }
        }
        times
    }

    /// Prices the points of `etas` not walked yet, all together, and keeps their sums.
    fn prefetch(&self, rows: &[Prepared], etas: &[Efficiency]) {
        let mut missing: Vec<Efficiency> = Vec::new();
        {
            let points = self.points.borrow();
            let mut seen = std::collections::HashSet::new();
            for &eta in etas {
                if !points.contains_key(&key(eta)) && seen.insert(key(eta)) {
                    missing.push(eta);
                }
            }
        }
        if missing.is_empty() {
            return;
        }
        let times = if self.exact_only {
            self.times(rows, &missing)
        } else {
            let batch = PointBatch::new(&missing, &mut self.slots.borrow_mut());
            self.fast_times(rows, &batch)
        };
        for (eta, times) in missing.iter().zip(times) {
            let sums = self.sums_of(self.errors_of(&times));
            self.points.borrow_mut().insert(key(*eta), sums);
        }
    }

    /// The first point of `etas` of least mean absolute error over the rows `keep` selects (the
    /// first point when none has a finite mean): fast means, exact ones on near-ties
    /// ([`first_minimum`]).
    pub fn argmin(&self, rows: &[Prepared], etas: &[Efficiency], keep: Keep) -> usize {
        let fast = self.walked_means(rows, etas, keep);
        first_minimum(&fast, &mut |i| self.mean_abs(rows, etas[i], keep)).unwrap_or(0)
    }

    /// The fast mean absolute errors of the rows `keep` selects at `etas` (priced together where
    /// not walked yet).
    pub fn walked_means(&self, rows: &[Prepared], etas: &[Efficiency], keep: Keep) -> Vec<f64> {
        self.prefetch(rows, etas);
        let points = self.points.borrow();
        etas.iter().map(|e| points.get(&key(*e)).map_or(f64::INFINITY, |p| self.mean_of(p, keep))).collect()
    }

    fn sums_at(&self, rows: &[Prepared], eta: Efficiency) -> Arc<PointSums> {
        let k = key(eta);
        if let Some(p) = self.exact.borrow().get(&k) {
            return p.clone();
        }
        let p = self.sums_of(self.row_errors(rows, eta));
        self.exact.borrow_mut().insert(k, p.clone());
        p
    }

    /// The group sums of the row errors `errors` (in row order).
    fn sums_of(&self, errors: Vec<Option<f64>>) -> Arc<PointSums> {
        let groups = 1 + self.sources + self.extras.len();
        let mut sums = vec![(0.0, 0u64); groups];
        for (e, g) in errors.into_iter().zip(&self.group_of) {
            if let Some(e) = e {
                sums[*g].0 += e.abs();
                sums[*g].1 += 1;
            }
        }
        let add = |a: (f64, u64), b: (f64, u64)| (a.0 + b.0, a.1 + b.1);
        let s = self.sources;
        let mut left = Vec::with_capacity(s + 1);
        left.push(sums[0]);
        for g in 1..=s {
            left.push(add(left[g - 1], sums[g]));
        }
        let mut right = vec![(0.0, 0u64); s + 2];
        for g in (1..=s).rev() {
            right[g] = add(sums[g], right[g + 1]);
        }
        let extras = sums[1 + s..].to_vec();
        let extras_total = extras.iter().fold((0.0, 0), |a, b| add(a, *b));
        Arc::new(PointSums { left, right, extras, extras_total })
    }

    /// Mean absolute error of the rows `keep` selects at `eta` (infinite when none has an error),
    /// each row priced exactly.
    pub fn mean_abs(&self, rows: &[Prepared], eta: Efficiency, keep: Keep) -> f64 {
        self.mean_of(&self.sums_at(rows, eta), keep)
    }

    /// The mean absolute error of the rows `keep` selects from a point's sums `p`.
    fn mean_of(&self, p: &PointSums, keep: Keep) -> f64 {
        let (mut sum, mut n) = match keep {
            Keep::All => p.left[self.sources],
            Keep::Without(s) => {
                let (a, b) = (p.left[s], p.right[s + 2]);
                (a.0 + b.0, a.1 + b.1)
            }
        };
        // The groups of rows counting as several sources: all of them, less those counting as
        // the source held out (exact in the count; nothing left is exactly nothing).
        let (mut x, mut m) = p.extras_total;
        if let Keep::Without(s) = keep {
            for &j in &self.touching[s] {
                x -= p.extras[j].0;
                m -= p.extras[j].1;
            }
        }
        if m > 0 {
            sum += x;
            n += m;
        }
        if n == 0 { f64::INFINITY } else { sum / n as f64 }
    }

    /// The errors at `eta` of the rows `pick` selects, in row order (rows without one left out).
    pub fn errors(&self, rows: &[Prepared], eta: Efficiency, pick: &dyn Fn(usize) -> bool) -> Vec<f64> {
        self.row_errors(rows, eta).into_iter().enumerate().filter(|(i, _)| pick(*i)).filter_map(|(_, e)| e).collect()
    }
}

/// A pool of rows and the cache of their errors: what a fit reads.
#[derive(Clone, Copy)]
pub struct Pool<'a> {
    /// The rows, in the order the fit sums them.
    pub rows: &'a [Prepared],
    /// Their groups and their sums at the points asked so far.
    pub cache: &'a FitCache,
}

impl Pool<'_> {
    /// Mean absolute error of the rows `keep` selects at `eta` ([`FitCache::mean_abs`]).
    pub fn mean_abs(&self, eta: Efficiency, keep: Keep) -> f64 {
        self.cache.mean_abs(self.rows, eta, keep)
    }

    /// The first point of `etas` of least mean error over the rows `keep` selects
    /// ([`FitCache::argmin`]).
    pub fn argmin(&self, etas: &[Efficiency], keep: Keep) -> usize {
        self.cache.argmin(self.rows, etas, keep)
    }

    /// The fast means at `etas` ([`FitCache::walked_means`]).
    pub fn walked_means(&self, etas: &[Efficiency], keep: Keep) -> Vec<f64> {
        self.cache.walked_means(self.rows, etas, keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode_kind::ModeKind;
    use crate::validate::fit::mean_abs;

    #[test]
    fn group_sums_equal_the_rows_own_predictions() {
        let file = crate::validate::shipped_runs();
        // Every row twice (a restatement priced once), in three sources, one row counted as two.
        let mut rows: Vec<Prepared> = file.rows.iter().take(30).map(Prepared::new).collect();
        rows.extend(rows.clone());
        let mut member_of: Vec<Vec<usize>> = (0..rows.len()).map(|i| vec![i % 3]).collect();
        member_of[5] = vec![0, 2];
        member_of[7] = Vec::new();
        let cache = FitCache::new(&rows, &member_of, 3);
        assert!(cache.priced.len() <= 30);
        let pool = Pool { rows: &rows, cache: &cache };
        for eta in [Efficiency::FITTED, Efficiency { matmul: 0.55, attention: 0.35, ..Efficiency::FITTED }] {
            let direct: Vec<Option<f64>> = rows.iter().map(|r| r.predict(ModeKind::Extended, eta).error).collect();
            assert_eq!(cache.row_errors(&rows, eta), direct);
            for keep in [Keep::All, Keep::Without(0), Keep::Without(1), Keep::Without(2)] {
                let kept: Vec<f64> = (0..rows.len())
                    .filter(|&i| match keep {
                        Keep::All => true,
                        Keep::Without(s) => !member_of[i].contains(&s),
                    })
                    .filter_map(|i| direct[i])
                    .collect();
                assert!(kept.len() > 10);
                // Twice: computed, then read from the cache; the same mean but for rounding.
                for _ in 0..2 {
                    let (a, b) = (pool.mean_abs(eta, keep), mean_abs(&kept));
                    assert!((a - b).abs() <= 1e-14 * b, "{keep:?}: {a} vs {b}");
                }
            }
        }
        let none = FitCache::new(&rows[..0], &[], 0);
        assert_eq!(none.mean_abs(&rows[..0], Efficiency::FITTED, Keep::All), f64::INFINITY);
    }
}
