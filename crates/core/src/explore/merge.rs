//! The results of several strategies' searches, and their merge into one best-first list.

use crate::Strategy;
use crate::search::{Ranked, SearchResult};

/// The outcome of one strategy's search.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyOutcome {
    /// The strategy searched.
    pub strategy: Strategy,
    /// Candidates evaluated.
    pub candidates: u64,
    /// Candidates that fit in memory.
    pub feasible: u64,
    /// The fastest feasible configurations, best first (empty: nothing fits).
    pub top: Vec<Ranked>,
}

impl StrategyOutcome {
    /// The outcome of `strategy` from its search result.
    pub fn from_result(strategy: Strategy, r: SearchResult) -> StrategyOutcome {
        StrategyOutcome { strategy, candidates: r.candidates, feasible: r.feasible, top: r.top }
    }
}

/// The `k` fastest configurations over all outcomes, best first. Ties (equal throughput) keep the
/// order of `outcomes`, then each list's own order, so the merge is deterministic.
pub fn merge(outcomes: &[StrategyOutcome], k: usize) -> Vec<Ranked> {
    let mut all: Vec<Ranked> = outcomes.iter().flat_map(|o| o.top.iter().copied()).collect();
    // Stable sort: equal throughputs stay in input order.
    crate::sort::sort_by(&mut all, |a, b| b.throughput_samples_per_s.total_cmp(&a.throughput_samples_per_s));
    all.truncate(k);
    all
}
