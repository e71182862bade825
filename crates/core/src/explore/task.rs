//! A resumable search over several strategies: one [`Search`] per strategy, run one after the
//! other by [`ExploreSearch::step`], so a page can run all of it in short time slices, show one
//! progress bar and cancel it at any point (by dropping it).

use super::merge::{StrategyTop, merge};
use crate::resolve::explorer::ExploreSpec;
use crate::search::shard_state::ShardState;
use crate::search::{Diagnosis, EmptyReason, Ranked, Search, Widening};
use crate::vocab::Note;
use crate::{Error, Strategy};

/// Everything one scenario's searches found.
#[derive(Debug, Clone, PartialEq)]
pub struct ExploreResult {
    /// One outcome per strategy, in the scenario's order.
    pub outcomes: Vec<StrategyTop>,
    /// The best configurations over all strategies, best first (at most `top_k`).
    pub merged: Vec<Ranked>,
}

impl ExploreResult {
    /// Candidates evaluated over all strategies.
    pub fn candidates(&self) -> u64 {
        self.outcomes.iter().map(|o| o.candidates).sum()
    }

    /// Candidates that fit in memory over all strategies.
    pub fn feasible(&self) -> u64 {
        self.outcomes.iter().map(|o| o.feasible).sum()
    }

    /// The outcome of one strategy, if it was searched.
    pub fn outcome(&self, s: Strategy) -> Option<&StrategyTop> {
        self.outcomes.iter().find(|o| o.strategy == s)
    }
}

/// The searches of one scenario, resumable.
///
/// Each strategy's candidate list is generated inside [`ExploreSearch::step`] (one list per call
/// at most), not in [`ExploreSearch::new`], so starting a search costs nothing on the caller's side.
#[derive(Debug, Clone)]
pub struct ExploreSearch {
    spec: ExploreSpec,
    /// One per strategy; `None` until its candidate list is generated.
    searches: Vec<Option<Search>>,
    /// Index of the search being run.
    current: usize,
    /// `(index, count)`: every strategy's search runs this shard of its candidates.
    shard: (u64, u64),
}

/// What one shard of an [`ExploreSearch`] found: the strategies searched (a strategy whose search
/// cannot be built is left out, the same way in every shard) and each one's [`ShardState`].
/// Serialisable: shards run in the page's Web Workers and are merged by [`ExploreSearch::merged`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExploreShard {
    /// The strategies searched, in the scenario's order.
    pub strategies: Vec<Strategy>,
    /// Their shards' states, in the same order.
    pub states: Vec<ShardState>,
}

impl ExploreSearch {
    /// Checks every strategy's search spec (cheap: no candidate is generated yet).
    pub fn new(spec: ExploreSpec) -> Result<ExploreSearch, Error> {
        if spec.strategies.is_empty() {
            return Err(Error::invalid(
                crate::resolve::form::field::STRATEGIES,
                "(none)",
                "choose at least one strategy",
            ));
        }
        for &s in &spec.strategies {
            spec.search_spec(s).validate()?;
        }
        let searches = vec![None; spec.strategies.len()];
        Ok(ExploreSearch { spec, searches, current: 0, shard: (0, 1) })
    }

    /// This search restricted to shard `index` of `count` of every strategy's candidates
    /// ([`Search::shard`]), before any step. Run every shard and merge them with
    /// [`ExploreSearch::merged`]: the result equals the whole search's.
    pub fn shard(mut self, index: u64, count: u64) -> Result<ExploreSearch, Error> {
        self.shard = crate::search::checked_shard(index, count)?;
        Ok(self)
    }

    /// What this shard found (final once [`ExploreSearch::is_done`]).
    pub fn shard_state(&self) -> ExploreShard {
        ExploreShard {
            strategies: self.spec.strategies.clone(),
            states: self.searches.iter().flatten().map(Search::shard_state).collect(),
        }
    }

    /// The whole search of `spec`, finished with the states of its shards `0..n` (each run to the
    /// end, in shard order): the same state as one run over every candidate, so
    /// [`ExploreSearch::result`], [`ExploreSearch::diagnose`] and
    /// [`ExploreSearch::widening_notes`] answer as the single run does. Generates every strategy's
    /// candidate list (no evaluation).
    pub fn merged(spec: ExploreSpec, parts: &[ExploreShard]) -> Result<ExploreSearch, Error> {
        let mut whole = ExploreSearch::new(spec)?;
        while whole.searches.iter().any(Option::is_none) {
            whole.step(0);
        }
        let strategies = &whole.spec.strategies;
        if let Some(p) = parts.iter().find(|p| &p.strategies != strategies || p.states.len() != strategies.len()) {
            return Err(Error::invalid(
                "shard",
                format!("{:?}", p.strategies),
                format!("a shard searched other strategies than the whole search ({strategies:?})"),
            ));
        }
        for (i, slot) in whole.searches.iter_mut().enumerate() {
            let states: Vec<ShardState> = parts.iter().map(|p| p.states[i].clone()).collect();
            if let Some(search) = slot.take() {
                *slot = Some(search.merged(&states)?);
            }
        }
        whole.current = whole.searches.len();
        Ok(whole)
    }

    /// The scenario searched.
    pub fn spec(&self) -> &ExploreSpec {
        &self.spec
    }

    /// Does up to `max_candidates` more evaluations (or generates one strategy's candidate list);
    /// returns `true` when every strategy is done.
    pub fn step(&mut self, max_candidates: usize) -> bool {
        if let Some(i) = self.searches.iter().position(Option::is_none) {
            // `new` validated every spec, so this cannot fail; an empty space stands in if it did.
            // The search runs in the scenario's mode (see `super::mode`).
            let (index, count) = self.shard;
            self.searches[i] = self.spec.search(self.spec.strategies[i]).and_then(|s| s.shard(index, count)).ok();
            if self.searches[i].is_none() {
                self.searches.remove(i);
                self.spec.strategies.remove(i);
            }
            return false;
        }
        let mut budget = max_candidates.max(1);
        while let Some(search) = self.searches.get_mut(self.current).and_then(Option::as_mut) {
            let (before, _) = search.progress();
            let done = search.step(budget);
            let (after, _) = search.progress();
            budget = budget.saturating_sub((after - before) as usize);
            if !done {
                return false;
            }
            self.current += 1;
            if budget == 0 {
                return self.current >= self.searches.len();
            }
        }
        true
    }

    /// `(evaluated, total)` candidates over all strategies generated so far.
    pub fn progress(&self) -> (u64, u64) {
        self.searches.iter().flatten().map(Search::progress).fold((0, 0), |(d, t), (a, b)| (d + a, t + b))
    }

    /// Whether every candidate list is generated and evaluated.
    pub fn is_done(&self) -> bool {
        self.searches.iter().all(|s| s.as_ref().is_some_and(Search::is_done))
    }

    /// The result so far (final once [`ExploreSearch::is_done`]).
    pub fn result(&self) -> ExploreResult {
        let outcomes: Vec<StrategyTop> = self
            .spec
            .strategies
            .iter()
            .zip(&self.searches)
            .map(|(&s, search)| match search {
                Some(search) => StrategyTop::from_result(s, search.result()),
                None => StrategyTop { strategy: s, candidates: 0, feasible: 0, top: Vec::new() },
            })
            .collect();
        let merged = merge(&outcomes, self.spec.top_k);
        ExploreResult { outcomes, merged }
    }

    /// Why the scenario has no result (every strategy empty), or why its results use fewer devices
    /// than asked, and the nearest device counts and batches that work (verified); `None` when
    /// every strategy searched used all devices and something fits. Call once the search is done
    /// (it may run a few small searches).
    pub fn diagnose(&self) -> Option<Diagnosis> {
        let parts: Vec<Diagnosis> = self.diagnosed()?.iter().filter_map(|s| s.diagnose()).collect();
        Diagnosis::combine(&parts, self.spec.n_gpus, self.spec.global_batch)
    }

    /// [`ExploreSearch::diagnose`]'s message alone, without the nearest scenarios that work (no
    /// further search): what the page's first view shows.
    pub fn diagnosis_message(&self) -> Option<String> {
        let reasons: Vec<EmptyReason> = self.diagnosed()?.iter().filter_map(|s| s.empty_reason()).collect();
        let picked: Vec<&EmptyReason> = reasons.iter().collect();
        EmptyReason::pick(&picked).map(|i| reasons[i].message())
    }

    /// The searches a diagnosis speaks of: all of them when none has results; when some has,
    /// all of them if they all use fewer devices (the diagnosis says why), else none (`None`).
    fn diagnosed(&self) -> Option<Vec<&Search>> {
        let searches: Vec<&Search> = self.searches.iter().flatten().collect();
        let all_empty = searches.iter().all(|s| s.result().top.is_empty());
        // Some strategy has results: say only why they use fewer devices, if they all do.
        let fewer = searches.iter().all(|s| matches!(s.widening(), Widening::FewerDevices { .. }));
        (all_empty || fewer).then_some(searches)
    }

    /// Notes on how the searches departed from the reference's enumeration (partial domains,
    /// fewer devices), one per kind, for the results' notes.
    pub fn widening_notes(&self) -> Vec<Note> {
        let mut notes: Vec<Note> = Vec::new();
        for s in self.searches.iter().flatten() {
            if let Some(n) = s.widening().note(self.spec.system.domain_size)
                && !notes.iter().any(|m| m.text == n.text)
            {
                notes.push(n);
            }
        }
        notes
    }

    /// Runs every search to the end.
    pub fn finish(mut self) -> ExploreResult {
        while !self.step(usize::MAX) {}
        self.result()
    }
}
