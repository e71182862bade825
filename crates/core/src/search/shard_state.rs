//! The shards of one search brought back together: [`ShardState`], where one shard stands (its
//! counters, its first rejection, its kept list, each with generation indices; serialisable, so a
//! shard can run elsewhere), merged into the state of the whole search ([`ShardState::merge`],
//! [`super::Search::merged`]) or straight into its result ([`merge_shards`]) — the same as one run
//! over every candidate. Memory per device in GB.

use super::topk::{Ranked, TopK};
use super::{Search, SearchResult};
use crate::Error;

/// The merged result of the shards of one search (each run to the end): the same as one run
/// over every candidate — counts summed, the top list by throughput with ties in generation
/// order.
pub fn merge_shards(shards: &[Search]) -> Option<SearchResult> {
    let first = shards.first()?;
    let states: Vec<ShardState> = shards.iter().map(Search::shard_state).collect();
    let all = ShardState::merge(first.spec.top_k, &states);
    Some(SearchResult {
        n_gpus: first.spec.n_gpus,
        devices_used: first.space.devices(),
        widening: first.widening,
        candidates: all.evaluated,
        feasible: all.feasible,
        evaluations: all.evaluations,
        min_mem_gb: all.min_mem_gb,
        top: all.top.into_iter().map(|(_, r)| r).collect(),
    })
}

/// Where one shard of a search stands: its counters, its first rejection and its kept list, each
/// with generation indices. Everything a merge needs to stand for the whole search
/// ([`Search::merged`]); serialisable, so a shard can run elsewhere (the page's Web Workers, other
/// processes) and be merged where the search started.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardState {
    /// `(index, count)` of the shard.
    pub shard: (u64, u64),
    /// Candidates evaluated [count].
    pub evaluated: u64,
    /// Configurations priced [count].
    pub evaluations: u64,
    /// Candidates that fit [count].
    pub feasible: u64,
    /// The least memory per device of any candidate evaluated when none fits [GB] (`None`: one
    /// fits, or none was evaluated; [`SearchResult::min_mem_gb`]).
    pub min_mem_gb: Option<f64>,
    /// Candidates extended mode rejected [count].
    pub rejected: u64,
    /// The first rejection: `(generation index, why)`.
    pub first_rejection: Option<(u64, Error)>,
    /// The kept list, best first: `(generation index, configuration)`.
    pub top: Vec<(u64, Ranked)>,
}

impl ShardState {
    /// The state of the union of `parts` (shards of one search): counts summed, the least memory,
    /// the earliest rejection and the best `k` by throughput with ties in generation order, as one
    /// run over every candidate keeps them.
    pub fn merge(k: usize, parts: &[ShardState]) -> ShardState {
        let tops: Vec<TopK> = parts.iter().map(|p| TopK::from_indexed(k, &p.top)).collect();
        let min_mem = parts.iter().filter_map(|p| p.min_mem_gb).fold(f64::INFINITY, f64::min);
        let feasible = parts.iter().map(|p| p.feasible).sum();
        ShardState {
            shard: (0, 1),
            evaluated: parts.iter().map(|p| p.evaluated).sum(),
            evaluations: parts.iter().map(|p| p.evaluations).sum(),
            feasible,
            min_mem_gb: reported_min_mem(feasible, min_mem),
            rejected: parts.iter().map(|p| p.rejected).sum(),
            first_rejection: parts.iter().filter_map(|p| p.first_rejection.clone()).min_by_key(|(gi, _)| *gi),
            top: TopK::merge(k, &tops).indexed().collect(),
        }
    }
}

impl Search {
    /// This shard's state (final once [`Search::is_done`]).
    pub fn shard_state(&self) -> ShardState {
        ShardState {
            shard: self.shard,
            evaluated: self.evaluated,
            evaluations: self.evaluations,
            feasible: self.feasible,
            min_mem_gb: reported_min_mem(self.feasible, self.min_mem_gb),
            rejected: self.rejected,
            first_rejection: self.first_rejection.clone(),
            top: self.top.indexed().collect(),
        }
    }

    /// This whole search (not sharded, not stepped) finished with the states of its shards, each run
    /// to the end: the same state as running every candidate here, so [`Search::result`] and
    /// [`Search::diagnose`] answer as the single run does. `parts` must be the shards `0..n` of
    /// one count `n`, each once, every one finished.
    pub fn merged(mut self, parts: &[ShardState]) -> Result<Search, Error> {
        let n = parts.len() as u64;
        let split = self.split_by_shape(n);
        let complete = n > 0
            && self.shard == (0, 1)
            && self.evaluated == 0
            && parts.iter().enumerate().all(|(i, p)| p.shard == (i as u64, n))
            && parts.iter().all(|p| p.evaluated == self.shard_len_of(p.shard.0, n, split.as_ref()));
        if !complete {
            let got: Vec<String> = parts.iter().map(|p| format!("{}/{}", p.shard.0, p.shard.1)).collect();
            return Err(Error::invalid(
                "shard",
                got.join(", "),
                format!(
                    "merging needs every shard i/n of one count n, in order, each finished ({} candidates)",
                    self.space.len()
                ),
            ));
        }
        let all = ShardState::merge(self.spec.top_k, parts);
        self.evaluated = all.evaluated;
        self.evaluations = all.evaluations;
        self.feasible = all.feasible;
        self.min_mem_gb = all.min_mem_gb.unwrap_or(f64::INFINITY);
        self.rejected = all.rejected;
        self.first_rejection = all.first_rejection;
        self.top = TopK::from_indexed(self.spec.top_k, &all.top);
        self.cursor = (usize::MAX, 0);
        self.position = self.space.len();
        Ok(self)
    }
}

/// The least memory per device reported by a search (or shard) of which `feasible` candidates
/// fit, `least_gb` the least tracked [GB] ([`SearchResult::min_mem_gb`]: only when none fits).
pub(super) fn reported_min_mem(feasible: u64, least_gb: f64) -> Option<f64> {
    (feasible == 0 && least_gb.is_finite()).then_some(least_gb)
}
