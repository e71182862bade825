//! The results of several strategies' searches, and their merge into one best-first list.

use crate::Strategy;
use crate::search::{Ranked, SearchResult};

/// One strategy's search in the explorer: its counts and its fastest (top) configurations (the
/// sweep keeps only the best one and the least memory, [`crate::sweep::StrategyOutcome`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyTop {
    /// The strategy searched.
    pub strategy: Strategy,
    /// Candidates evaluated.
    pub candidates: u64,
    /// Candidates that fit in memory.
    pub feasible: u64,
    /// The fastest feasible configurations, best first (empty: nothing fits).
    pub top: Vec<Ranked>,
}

impl StrategyTop {
    /// The outcome of `strategy` from its search result.
    pub fn from_result(strategy: Strategy, r: SearchResult) -> StrategyTop {
        StrategyTop { strategy, candidates: r.candidates, feasible: r.feasible, top: r.top }
    }
}

/// The `k` fastest configurations over all outcomes, best first. Ties (equal throughput) keep the
/// order of `outcomes`, then each list's own order, so the merge is deterministic.
pub fn merge(outcomes: &[StrategyTop], k: usize) -> Vec<Ranked> {
    let mut all: Vec<Ranked> = outcomes.iter().flat_map(|o| o.top.iter().copied()).collect();
    // Stable sort: equal throughputs stay in input order.
    crate::sort::sort_by(&mut all, |a, b| b.throughput_samples_per_s.total_cmp(&a.throughput_samples_per_s));
    all.truncate(k);
    all
}
