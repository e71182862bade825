//! The reference's configuration searches (spec §7): enumerate every candidate of a strategy for a
//! device count, evaluate it, drop those that do not fit in HBM and keep the `k` fastest.
//!
//! A [`Search`] is resumable: [`Search::step`] evaluates a bounded number of candidates, so a web
//! page can run it in short time slices; the total is known up front ([`Search::progress`]). It is
//! also shardable ([`Search::shard`]: every n-th candidate), so a caller with threads can run n
//! shards and merge them ([`merge_shards`]) into exactly the single run's result — the core itself
//! stays thread-free.
//!
//! The same search runs in extended mode ([`Search::in_mode`] with a setup): the candidates are the
//! reference's (1d and 2d-seqp) with extended mode's rules ([`widen`]), each priced by
//! [`crate::extended`] with the same result shape, choosing the execution ([`execution`]) where
//! the caller's `ExecutionChoices` leave it open. Where nothing is found, [`Search::diagnose`] says why and what
//! would work ([`diagnose`]).

pub mod code;
pub mod diagnose;
pub mod execution;
pub mod row;
mod shards;
pub mod space;
pub mod topk;
pub mod widen;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use diagnose::{Diagnosis, EmptyReason, Suggestion};
pub use execution::{Execution, ExecutionChoices};
pub use row::{Dims, ResultRow};
pub use space::{Rules, Space};
pub use topk::{Ranked, TopK};
pub use widen::Widening;

use crate::cost::{CostModel, ExtendedSetup, Pricer};
use crate::extended::context_parallel::CpComm;
use crate::extended::moe::ExpertLayout;
use crate::extended::options::{Recompute, Sharding};
use crate::extended::{ExtendedEvaluation, ExtendedEvaluator};
use crate::reference::{Evaluation, evaluate};
use crate::vocab::{Candidate, Outcome};
use crate::vocab::{MAX_DEVICES, MAX_GLOBAL_BATCH};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// What to search.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SearchSpec {
    /// The transformer.
    pub model: ModelShape,
    /// The system, with `nvlink_size` set to the fast-domain size to search with.
    pub system: SystemParams,
    /// The tensor-parallel strategy.
    pub strategy: Strategy,
    /// Devices [count].
    pub n_gpus: u64,
    /// Global batch per iteration `G` [samples].
    pub global_batch: u64,
    /// How many of the fastest configurations to keep.
    pub top_k: usize,
}

impl SearchSpec {
    /// The full evaluation of one candidate under this spec (drill-down of a ranked result).
    pub fn evaluate(&self, c: &Candidate) -> Result<Evaluation, Error> {
        evaluate(&self.model, &self.system, self.global_batch, c)
    }

    /// Checks the spec (model, system, device count, batch, `top_k`).
    pub fn validate(&self) -> Result<(), Error> {
        self.model.validate()?;
        self.system.validate()?;
        if self.n_gpus == 0 || self.n_gpus > MAX_DEVICES {
            return Err(Error::invalid("n_gpus", self.n_gpus, format!("must be from 1 to {MAX_DEVICES}")));
        }
        if self.global_batch == 0 || self.global_batch > MAX_GLOBAL_BATCH {
            return Err(Error::invalid(
                "global_batch",
                self.global_batch,
                format!("must be from 1 to {MAX_GLOBAL_BATCH}"),
            ));
        }
        if self.top_k == 0 {
            return Err(Error::invalid("top_k", self.top_k, "must be at least 1"));
        }
        Ok(())
    }
}

/// The outcome of a search.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchResult {
    /// Devices searched [count].
    pub n_gpus: u64,
    /// Devices every candidate uses (`n_gpus` unless [`Widening::FewerDevices`]).
    pub devices_used: u64,
    /// How the space departs from the reference's enumeration.
    pub widening: Widening,
    /// Candidates evaluated (the size of the search space once done).
    pub candidates: u64,
    /// Candidates that fit in HBM (with the leanest execution, when the search chooses it).
    pub feasible: u64,
    /// Configurations priced: candidates × execution choices, less those pruned by the bounds
    /// (= `candidates` when the execution is fixed; an MoE candidate whose leanest execution was
    /// judged by its memory alone counts it once, and once more if the bounds let its time be
    /// priced). Every candidate counts in `candidates`, pruned or not.
    pub evaluations: u64,
    /// The least memory per device of any candidate evaluated when none fits [GB] (`None`: one
    /// fits, or none was evaluated): what a search that finds nothing says is missing. Once one
    /// fits the search stops tracking it (an MoE candidate's expert layouts are then read only
    /// until one fits).
    pub min_mem_gb: Option<f64>,
    /// The fastest feasible configurations, best first (empty: nothing fits).
    pub top: Vec<Ranked>,
}

impl ExtendedSetup {
    /// The search spec over this setup: its workload's shape and its part's own system parameters
    /// ([`crate::extended::Hardware::params`], whose domain size the search generates candidates with).
    pub fn spec(&self, strategy: Strategy, n_gpus: u64, global_batch: u64, top_k: usize) -> SearchSpec {
        SearchSpec {
            model: self.workload.to_shape(),
            system: self.hardware.params.clone(),
            strategy,
            n_gpus,
            global_batch,
            top_k,
        }
    }
}

/// Which model prices the candidates (shared by searches and sweeps): either mode behind the one
/// interface ([`CostModel`]).
pub(crate) type Engine = Box<dyn CostModel>;

/// What tells a chooser's evaluators apart: the recomputation level and the context-parallel
/// flavour (both change the block costs).
type EvaluatorKey = (Recompute, Option<execution::CpFlavour>);

/// Extended mode's pricing with the execution chosen per candidate: one evaluator (with its
/// block-cost caches) per recomputation level and context-parallel flavour priced so far,
/// switched between shardings, shard groups and interleave degrees
/// ([`ExtendedEvaluator::reschedule`]: block costs do not read them).
#[derive(Debug, Clone)]
struct Chooser {
    setup: ExtendedSetup,
    choices: ExecutionChoices,
    strategy: Strategy,
    global_batch: u64,
    /// One evaluator per recomputation level and flavour priced so far (a handful: found by a
    /// scan, which costs less than hashing the level for every configuration priced).
    evaluators: Vec<(EvaluatorKey, ExtendedEvaluator)>,
    /// [`ExecutionChoices::combinations`] by its arguments `(pp, depth, replicas, replicas_fast)`:
    /// candidates share few of them, and building the list for each candidate (five small
    /// allocations) was a tenth of the page's first search in a profile. The same lists, so the
    /// same results.
    combinations: BTreeMap<(u64, u64, u64, u64), Arc<[Execution]>>,
    /// [`execution::cp_flavours`] by `(tp, cp, cp_fast)`, built once each (`cp_comm=search` only).
    flavours: BTreeMap<(u64, u64, u64), Flavours>,
}

/// The context-parallel flavours tried for one layout shape ([`execution::cp_flavours`]).
type Flavours = Arc<[Option<execution::CpFlavour>]>;

impl Chooser {
    fn evaluator(&mut self, e: Execution) -> Result<&mut ExtendedEvaluator, Error> {
        let key = (e.recompute, e.cp);
        let i = match self.evaluators.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let ev = self.setup.evaluator(&e.apply(&self.setup.options), self.strategy, self.global_batch)?;
                self.evaluators.push((key, ev));
                self.evaluators.len() - 1
            }
        };
        let ev = &mut self.evaluators[i].1;
        ev.reschedule(e.sharding, e.shard_group, e.interleave)?;
        Ok(ev)
    }

    /// [`ExecutionChoices::combinations`] of this search's choices, built once per argument set.
    fn combinations(&mut self, pp: u64, depth: u64, replicas: u64, replicas_fast: u64) -> Arc<[Execution]> {
        let (choices, stack) = (&self.choices, self.setup.options.stack);
        self.combinations
            .entry((pp, depth, replicas, replicas_fast))
            .or_insert_with(|| choices.combinations(stack, pp, depth, replicas, replicas_fast).into())
            .clone()
    }

    /// The context-parallel flavours to try for a layout of `tp × cp`, `cp_fast` of the CP ranks
    /// in one fast domain ([`execution::cp_flavours`]).
    fn flavours(&mut self, tp: u64, cp: u64, cp_fast: u64) -> Flavours {
        let (w, o) = (&self.setup.workload, &self.setup.options);
        let make = || execution::cp_flavours(w, o, tp, cp, cp_fast).into();
        self.flavours.entry((tp, cp, cp_fast)).or_insert_with(make).clone()
    }

    fn outcome(&mut self, e: Execution, c: &Candidate) -> Result<Outcome, Error> {
        self.evaluator(e)?.evaluate(c)
    }

    /// MoE models: the least iteration time of `c` under execution `e` over every expert layout
    /// [s] ([`ExtendedEvaluator::moe_time_floor`]); `None` for dense models.
    fn moe_floor(&mut self, e: Execution, c: &Candidate) -> Option<f64> {
        self.evaluator(e).ok()?.moe_time_floor(c)
    }

    /// The expert layout the evaluator of execution `e` chose for `c` (MoE models).
    fn experts(&mut self, e: Execution, c: &Candidate) -> Option<ExpertLayout> {
        self.evaluator(e).ok()?.experts_of(c)
    }
}

/// A resumable, shardable search.
#[derive(Debug, Clone)]
pub struct Search {
    spec: SearchSpec,
    space: Space,
    widening: Widening,
    evaluator: Engine,
    chooser: Option<Box<Chooser>>,
    setup: Option<ExtendedSetup>,
    /// The execution of every candidate when the search does not choose it (extended mode).
    execution: Option<Execution>,
    /// `(index, count)`: this search evaluates shard `index` of `count` ([`shards`]: the
    /// candidates whose generation index is `index` modulo `count`, or those of the block shapes
    /// `by_shape` deals to `index`).
    shard: (u64, u64),
    /// The split by block shape of an extended-mode MoE search into `shard.1` shards (`None`:
    /// interleaved by generation index).
    by_shape: Option<Arc<shards::ShapeShards>>,
    cursor: (usize, usize),
    /// Generation index of the candidate at `cursor`.
    position: u64,
    evaluated: u64,
    evaluations: u64,
    feasible: u64,
    min_mem_gb: f64,
    rejected: u64,
    /// The first rejection in generation order: `(generation index, why)`.
    first_rejection: Option<(u64, Error)>,
    top: TopK,
}

impl Search {
    /// Validates the spec and generates the candidate list (cheap next to evaluating it). The
    /// space is the reference's wherever it has candidates ([`widen`] says what happens where it
    /// has none).
    pub fn new(spec: SearchSpec) -> Result<Search, Error> {
        spec.validate()?;
        let pricer = Pricer { shape: &spec.model, system: &spec.system, extended: None };
        let evaluator = pricer.model(spec.strategy, spec.global_batch)?;
        let (space, widening) = widen::search_space(
            spec.strategy,
            &spec.model,
            spec.system.domain_size,
            spec.n_gpus,
            spec.global_batch,
            None,
            true,
        );
        Ok(Self::with_engine(spec, space, widening, evaluator, None, None))
    }

    /// The search in the mode of `extended` (`None`: reference mode, [`Search::new`]; else
    /// extended mode choosing the execution where `choices` leaves it open,
    /// `ExecutionChoices::fixed(&setup.options)` for the switches' execution): the one place a
    /// caller's mode becomes its search. In extended mode the spec's model must be the workload's
    /// reference shape (what [`ExtendedSetup::spec`] and the resolver give) and its `nvlink_size`
    /// the part's fast-domain size.
    pub fn in_mode(
        spec: SearchSpec,
        extended: Option<ExtendedSetup>,
        choices: ExecutionChoices,
    ) -> Result<Search, Error> {
        match extended {
            None => Search::new(spec),
            Some(setup) => Search::extended(spec, setup, choices),
        }
    }

    /// The same search priced in extended mode (strategies 1d and 2d-seqp), choosing the execution
    /// (recomputation, ZeRO stage / FSDP and shard group, interleaving, context-parallel degree,
    /// micro-batch) where `choices` leaves it open; the switches' values stand for the fixed ones.
    /// Exhaustive with pruning ([`execution`]): the result equals pricing every combination.
    fn extended(spec: SearchSpec, ext: ExtendedSetup, choices: ExecutionChoices) -> Result<Search, Error> {
        spec.validate()?;
        choices.validate()?;
        let shape = ext.workload.to_shape();
        if spec.model != shape {
            return Err(Error::invalid(
                "model",
                format!("{:?}", spec.model),
                format!("must be the extended workload's reference shape {shape:?}"),
            ));
        }
        if ext.hardware.domain_size() != spec.system.domain_size {
            return Err(Error::invalid(
                "system.nvlink_size",
                spec.system.domain_size,
                format!("must equal the extended hardware's fast-domain size {}", ext.hardware.domain_size()),
            ));
        }
        let options = ext.options;
        // A fixed degree no layout can take would leave every candidate without an expert layout.
        ext.check_fixed_expert_degrees(spec.n_gpus)?;
        let fixed = choices.fixed_execution(&options);
        let evaluator = ext.evaluator(&fixed.apply(&options), spec.strategy, spec.global_batch)?;
        let (mut space, widening) = widen::search_space(
            spec.strategy,
            &spec.model,
            spec.system.domain_size,
            spec.n_gpus,
            spec.global_batch,
            Some(options.uneven_stages),
            true,
        );
        if choices.cp.is_some() || choices.mbs.is_some() {
            space.retain(|c| {
                let cp = if c.strategy == Strategy::ContextParallel2D { c.tp2 } else { 1 };
                choices.cp.is_none_or(|x| x == cp) && choices.mbs.is_none_or(|m| m == c.mbs)
            });
        }
        let chooser = choices.searches_with(&options).then(|| {
            Box::new(Chooser {
                setup: ext.clone(),
                choices,
                strategy: spec.strategy,
                global_batch: spec.global_batch,
                evaluators: Vec::new(),
                combinations: BTreeMap::new(),
                flavours: BTreeMap::new(),
            })
        });
        let mut search = Self::with_engine(spec, space, widening, Box::new(evaluator), chooser, Some(ext));
        search.execution = Some(fixed);
        Ok(search)
    }

    fn with_engine(
        spec: SearchSpec,
        space: Space,
        widening: Widening,
        evaluator: Engine,
        chooser: Option<Box<Chooser>>,
        setup: Option<ExtendedSetup>,
    ) -> Search {
        let top = TopK::new(spec.top_k);
        Search {
            spec,
            space,
            widening,
            evaluator,
            chooser,
            setup,
            execution: None,
            shard: (0, 1),
            by_shape: None,
            cursor: (0, 0),
            position: 0,
            evaluated: 0,
            evaluations: 0,
            feasible: 0,
            min_mem_gb: f64::INFINITY,
            rejected: 0,
            first_rejection: None,
            top,
        }
    }

    /// This search restricted to shard `index` of `count` (`index < count`), before any step:
    /// the candidates whose generation index is `index` modulo `count`, or, for an extended-mode
    /// search of a Mixture-of-Experts model, whole block shapes ([`shards`]: each shape's blocks
    /// priced by one shard only). Run every shard and [`merge_shards`] them: the result equals
    /// the whole search's, in the same order.
    pub fn shard(mut self, index: u64, count: u64) -> Result<Search, Error> {
        self.shard = checked_shard(index, count)?;
        self.by_shape = self.split_by_shape(count).map(Arc::new);
        Ok(self)
    }

    /// The split of this search's candidates into `count` shards by block shape, where it
    /// applies (an extended-mode MoE search, `count > 1`).
    fn split_by_shape(&self, count: u64) -> Option<shards::ShapeShards> {
        let moe = self.setup.as_ref().is_some_and(ExtendedSetup::chooses_expert_layouts);
        (moe && count > 1).then(|| shards::ShapeShards::of(&self.space, count))
    }

    /// Candidates of shard `index` of `count` [count].
    fn shard_len_of(&self, index: u64, count: u64, by_shape: Option<&shards::ShapeShards>) -> u64 {
        match by_shape {
            Some(s) => s.len(index),
            None => self.space.len().saturating_sub(index).div_ceil(count),
        }
    }

    /// The full extended-mode evaluation of a candidate of an extended search with the switches'
    /// execution (`None` for a reference search; use [`SearchSpec::evaluate`] there).
    pub fn evaluate_extended(&mut self, c: &Candidate) -> Option<Result<ExtendedEvaluation, Error>> {
        self.evaluator.extended_detail(c)
    }

    /// The extended setup (part, workload, switches) of an extended search.
    pub fn extended_setup(&self) -> Option<&ExtendedSetup> {
        self.setup.as_ref()
    }

    fn capacity_gb(&self) -> f64 {
        self.evaluator.capacity_gb()
    }

    /// Evaluates up to `max_candidates` more candidates (of this shard); returns `true` when the
    /// search is done.
    pub fn step(&mut self, max_candidates: usize) -> bool {
        let capacity = self.capacity_gb();
        let (index, count) = self.shard;
        let by_shape = self.by_shape.clone();
        let mut next = None;
        let mut done_here = 0usize;
        // `gi`: the generation index of each candidate (the shard's key and the tie-break).
        for (gi, (pos, c)) in (self.position..).zip(self.space.walk(self.cursor)) {
            let mine = match by_shape.as_deref() {
                Some(s) => s.owner(&c) == Some(index),
                None => gi % count == index,
            };
            if !mine {
                continue;
            }
            if done_here == max_candidates {
                next = Some((pos, gi));
                break;
            }
            done_here += 1;
            match self.chooser.as_deref_mut() {
                None => {
                    self.evaluations += 1;
                    let o = match self.evaluator.price(&c) {
                        Ok(o) => o,
                        Err(e) => {
                            self.rejected += 1;
                            self.first_rejection.get_or_insert((gi, e));
                            continue;
                        }
                    };
                    self.min_mem_gb = self.min_mem_gb.min(o.mem_gb);
                    // Infeasible (mem > capacity) candidates are discarded after evaluation.
                    if o.mem_gb > capacity {
                        continue;
                    }
                    self.feasible += 1;
                    if self.top.accepts(o.throughput_samples_per_s) {
                        let mut r = ranked(c, &o, self.execution);
                        r.experts = self.evaluator.experts_of(&c);
                        self.top.offer_at(gi, r);
                    }
                }
                Some(chooser) => {
                    choose(
                        chooser,
                        &c,
                        gi,
                        capacity,
                        self.spec.global_batch,
                        &mut ChooseState {
                            top: &mut self.top,
                            evaluations: &mut self.evaluations,
                            feasible: &mut self.feasible,
                            min_mem_gb: &mut self.min_mem_gb,
                            rejected: &mut self.rejected,
                            first_rejection: &mut self.first_rejection,
                        },
                    );
                }
            }
        }
        self.evaluated += done_here as u64;
        match next {
            Some((pos, gi)) => {
                self.cursor = pos;
                self.position = gi;
                false
            }
            None => {
                self.evaluated = self.shard_len();
                self.cursor = (usize::MAX, 0);
                self.position = self.space.len();
                true
            }
        }
    }

    /// Candidates of this shard.
    fn shard_len(&self) -> u64 {
        let (index, count) = self.shard;
        self.shard_len_of(index, count, self.by_shape.as_deref())
    }

    /// `(evaluated, total)` candidates (of this shard).
    pub fn progress(&self) -> (u64, u64) {
        (self.evaluated, self.shard_len())
    }

    /// Whether every candidate (of this shard) has been evaluated.
    pub fn is_done(&self) -> bool {
        self.evaluated >= self.shard_len()
    }

    /// The result so far (final once [`Search::is_done`]).
    pub fn result(&self) -> SearchResult {
        SearchResult {
            n_gpus: self.spec.n_gpus,
            devices_used: self.space.devices(),
            widening: self.widening,
            candidates: self.evaluated,
            feasible: self.feasible,
            evaluations: self.evaluations,
            min_mem_gb: reported_min_mem(self.feasible, self.min_mem_gb),
            top: self.top.items().to_vec(),
        }
    }

    /// Runs the search to the end and returns its result.
    pub fn finish(mut self) -> SearchResult {
        while !self.step(usize::MAX) {}
        self.result()
    }

    /// The spec searched.
    pub fn spec(&self) -> &SearchSpec {
        &self.spec
    }

    /// The candidate list.
    pub fn space(&self) -> &Space {
        &self.space
    }

    /// How the space departs from the reference's enumeration.
    pub fn widening(&self) -> Widening {
        self.widening
    }

    /// Candidates extended mode rejected, and the first reason.
    pub fn rejections(&self) -> (u64, Option<&Error>) {
        (self.rejected, self.first_rejection.as_ref().map(|(_, e)| e))
    }

    /// The kept list with its generation indices (for [`merge_shards`]).
    pub fn top(&self) -> &TopK {
        &self.top
    }
}

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
fn reported_min_mem(feasible: u64, least_gb: f64) -> Option<f64> {
    (feasible == 0 && least_gb.is_finite()).then_some(least_gb)
}

fn ranked(c: Candidate, o: &Outcome, execution: Option<Execution>) -> Ranked {
    Ranked {
        candidate: c,
        throughput_samples_per_s: o.throughput_samples_per_s,
        time_per_iteration_s: o.totals.t,
        mem_gb: o.mem_gb,
        totals: o.totals,
        execution,
        experts: None,
    }
}

/// The counters one candidate's execution choices update.
struct ChooseState<'a> {
    top: &'a mut TopK,
    evaluations: &'a mut u64,
    feasible: &'a mut u64,
    min_mem_gb: &'a mut f64,
    rejected: &'a mut u64,
    first_rejection: &'a mut Option<(u64, Error)>,
}

/// Prices the execution choices of candidate `c` (generation index `gi`) with the bounds of
/// [`execution`], offering its best feasible execution to the top list. Under `cp_comm=search`
/// each context-parallel flavour of the layout ([`execution::cp_flavours`]) is priced in turn
/// ([`choose_flavour`]), a flavour that cannot beat the best found for `c` so far skipped by its
/// bound; the candidate counts once (feasible when a flavour fits, rejected when every flavour
/// is). Otherwise the one flavour of the switches, exactly as before the flavour was a choice.
fn choose(ch: &mut Chooser, c: &Candidate, gi: u64, capacity: f64, global_batch: u64, st: &mut ChooseState) {
    let cp = if c.strategy == Strategy::ContextParallel2D { c.tp2 } else { 1 };
    let searched;
    let flavours: &[Option<execution::CpFlavour>] = if cp > 1 && ch.setup.options.cp_comm == CpComm::Search {
        searched = ch.flavours(c.tp1, cp, c.nv_tp2);
        &searched
    } else {
        &NO_FLAVOUR
    };
    let mut best: Option<(Outcome, Execution)> = None;
    let (mut fits, mut too_big, mut rejection) = (false, false, None);
    for (i, &f) in flavours.iter().enumerate() {
        // Memory does not depend on the flavour (the same activations are kept, the all-to-alls'
        // buffers are transient: `extended::context_parallel`), so the first flavour's leanest
        // execution decides for all: past a first that does not fit, none does.
        if i > 0 && !fits && rejection.is_none() {
            break;
        }
        let beat = best.as_ref().map(|(o, _)| o.throughput_samples_per_s);
        match choose_flavour(ch, f, c, capacity, global_batch, st, (beat, fits)) {
            Priced::Rejected(e) => {
                rejection.get_or_insert(e);
            }
            Priced::TooBig => too_big = true,
            Priced::Fits(found) => {
                fits = true;
                // Ties between flavours: the least memory, then the first flavour.
                if let Some((o, e)) = found
                    && best.as_ref().is_none_or(|(b, _)| {
                        o.throughput_samples_per_s > b.throughput_samples_per_s
                            || (o.throughput_samples_per_s == b.throughput_samples_per_s && o.mem_gb < b.mem_gb)
                    })
                {
                    best = Some((o, e));
                }
            }
        }
    }
    if fits {
        *st.feasible += 1;
    } else if !too_big && let Some(e) = rejection {
        *st.rejected += 1;
        st.first_rejection.get_or_insert((gi, e));
    }
    if let Some((o, e)) = best
        && st.top.accepts(o.throughput_samples_per_s)
    {
        let mut r = ranked(*c, &o, Some(e));
        r.experts = ch.experts(e, c);
        st.top.offer_at(gi, r);
    }
}

/// The one "flavour" of a layout whose flavour is not searched: the switches'.
const NO_FLAVOUR: [Option<execution::CpFlavour>; 1] = [None];

/// What pricing one flavour of a candidate found.
enum Priced {
    /// The leanest execution was refused (why).
    Rejected(Error),
    /// Not even the leanest execution fits.
    TooBig,
    /// The leanest fits; the best execution that can enter the list, with its outcome (`None`:
    /// the bounds proved none can, or none beats `beat`).
    Fits(Option<(Outcome, Execution)>),
}

/// [`choose`] for one context-parallel flavour `f` (`None`: the switches'): the candidate's
/// leanest execution decides whether it fits; then every combination the bounds let through is
/// priced and the best returned. `beat`: the throughput the candidate already reaches with
/// another flavour [samples/s] (a flavour whose bound is below it is skipped); `fitted`: another
/// flavour's leanest execution already fits (memory does not depend on the flavour, so it is
/// not priced again). Updates the
/// evaluation count and the least memory; feasibility, rejections and the top list are the
/// caller's.
fn choose_flavour(
    ch: &mut Chooser,
    f: Option<execution::CpFlavour>,
    c: &Candidate,
    capacity: f64,
    global_batch: u64,
    st: &mut ChooseState,
    (beat, fitted): (Option<f64>, bool),
) -> Priced {
    let (cp, nv_cp) = if c.strategy == Strategy::ContextParallel2D { (c.tp2, c.nv_tp2) } else { (1, 1) };
    let combos = ch.combinations(c.pp, ch.setup.workload.layers, c.dp * cp, c.nv_dp * nv_cp);
    let combos: Arc<[Execution]> = match f {
        None => combos,
        Some(_) => combos.iter().map(|e| e.with_cp(f)).collect(),
    };
    let pick = |r: Recompute, s: Sharding| {
        combos
            .iter()
            .position(|e| {
                e.recompute == r && e.sharding == s && e.shard_group.is_none() && e.interleave == combos[0].interleave
            })
            .or_else(|| combos.iter().position(|e| e.recompute == r && e.sharding == s))
            .unwrap_or(0)
    };
    let leanest = pick(ch.choices.recompute.unwrap_or(Recompute::Full), ch.choices.sharding.unwrap_or(Sharding::Zero3));
    let mut outcomes: Vec<Option<Outcome>> = vec![None; combos.len()];
    let moe = ch.setup.chooses_expert_layouts();
    if !fitted {
        *st.evaluations += 1;
        if let Some(verdict) = fit_leanest(ch, &combos, leanest, c, capacity, st, &mut outcomes) {
            return verdict;
        }
    }
    // Time bound over every combination: the per-micro-batch work without recomputation (matrix
    // work and tensor/context-parallel communication, which sharding and interleaving leave
    // unchanged) in every micro-batch slot and in the smallest bubble, `(pp − 1)/v_max` slots.
    let fastest = pick(ch.choices.recompute.unwrap_or(Recompute::None), combos[0].sharding);
    let v_max = combos.iter().map(|e| e.interleave).max().unwrap_or(1).max(1) as f64;
    let nmb = c.microbatches(global_batch).max(1) as f64;
    // An MoE candidate's outcome is its best expert layout, or the leanest when none fits (then
    // its time bounds nothing): its bound is the least time floor over every layout without
    // recomputation instead, read from the cached block costs without pricing the fastest
    // combination (which the loop below prices if the bound lets the candidate through).
    let work = if moe && ch.choices.recompute.is_none() {
        // The leanest evaluator's cached block costs, without its recomputation: the floor of
        // the fastest level (none) without pricing that level's blocks.
        ch.evaluator(combos[leanest]).ok().and_then(|ev| ev.moe_time_floor_without_recompute(c))
    } else if moe {
        ch.moe_floor(combos[fastest], c)
    } else {
        if outcomes[fastest].is_none() {
            *st.evaluations += 1;
            outcomes[fastest] = ch.outcome(combos[fastest], c).ok();
        }
        outcomes[fastest].map(|f| f.totals.t_comp + f.totals.t_tp_comm)
    };
    if let Some(work) = work {
        let bound = work * (1.0 + c.pp.saturating_sub(1) as f64 / (v_max * nmb));
        let ceiling = global_batch as f64 / bound;
        if bound > 0.0 && (!st.top.accepts(ceiling) || beat.is_some_and(|b| ceiling < b)) {
            return Priced::Fits(None);
        }
    }
    // One row per candidate: its best execution (the fastest that fits; ties: the least memory,
    // then the first in the combinations' order). Recomputation only adds work, so for each
    // (sharding, shard group, interleave) the levels are priced in order none → selective → full:
    // a level is skipped when a lighter one fits and cannot be beaten (full recomputation adds a
    // forward pass, so it is slower than a lighter level that fits), or when the lighter one is
    // already too slow for the list.
    let mut best: Option<(Outcome, usize)> = None;
    let better = |o: &Outcome, j: usize, best: &Option<(Outcome, usize)>| {
        best.is_none_or(|(b, bj)| {
            o.throughput_samples_per_s > b.throughput_samples_per_s
                || (o.throughput_samples_per_s == b.throughput_samples_per_s
                    && (o.mem_gb < b.mem_gb || (o.mem_gb == b.mem_gb && j < bj)))
        })
    };
    let mut done = vec![false; combos.len()];
    for j0 in 0..combos.len() {
        if done[j0] {
            continue;
        }
        let e0 = combos[j0];
        // The recomputation levels of this (sharding, group, interleave), lightest first.
        let group = (j0..combos.len()).filter(|&j| {
            let e = combos[j];
            e.sharding == e0.sharding && e.shard_group == e0.shard_group && e.interleave == e0.interleave
        });
        let mut lighter_fits = false;
        for j in group {
            done[j] = true;
            if moe {
                // MoE: bound each level by its least time floor over the expert layouts (heavier
                // levels only add work); the outcomes' own times bound nothing when no layout fits.
                if let Some(floor) = ch.moe_floor(combos[j], c).filter(|f| *f > 0.0) {
                    let ceiling = global_batch as f64 / with_bubble(floor, c.pp, combos[j].interleave, nmb);
                    if !st.top.accepts(ceiling) {
                        break;
                    }
                    if best.as_ref().is_some_and(|(b, _)| ceiling < b.throughput_samples_per_s)
                        || beat.is_some_and(|b| ceiling < b)
                    {
                        continue;
                    }
                }
            } else if lighter_fits && combos[j].recompute == Recompute::Full {
                continue;
            }
            let o = match outcomes[j] {
                Some(o) => o,
                None => {
                    *st.evaluations += 1;
                    match ch.outcome(combos[j], c) {
                        Ok(o) => o,
                        Err(_) => continue,
                    }
                }
            };
            let slower = beat.is_some_and(|b| o.throughput_samples_per_s < b);
            if !moe && (!st.top.accepts(o.throughput_samples_per_s) || slower) {
                // Heavier levels are no faster (than the list, or than another flavour).
                break;
            }
            if o.mem_gb > capacity {
                continue;
            }
            lighter_fits = true;
            if better(&o, j, &best) {
                best = Some((o, j));
            }
        }
    }
    match best {
        Some((o, j)) if st.top.accepts(o.throughput_samples_per_s) => Priced::Fits(Some((o, combos[j]))),
        _ => Priced::Fits(None),
    }
}

/// Whether candidate `c` fits with its leanest execution `combos[leanest]` (`None`: it does, its
/// outcome kept in `outcomes` when priced; else the verdict to return).
fn fit_leanest(
    ch: &mut Chooser,
    combos: &[Execution],
    leanest: usize,
    c: &Candidate,
    capacity: f64,
    st: &mut ChooseState,
    outcomes: &mut [Option<Outcome>],
) -> Option<Priced> {
    let moe = ch.setup.chooses_expert_layouts();
    // MoE: when no expert layout of the leanest execution needs less memory than the least seen,
    // the candidate cannot lower `min_mem_gb` and whether it fits is all the counters need — read
    // from the layouts' memory alone; its time is priced below only if the bounds let it through.
    // Once a candidate of this search fits, the least memory is no longer reported
    // ([`SearchResult::min_mem_gb`]): then whether it fits is all, read until a layout fits.
    let probe = match moe {
        true if *st.feasible > 0 => {
            ch.evaluator(combos[leanest]).ok().and_then(|ev| ev.moe_fits(c)).map(|f| (f64::INFINITY, f))
        }
        true => ch.evaluator(combos[leanest]).ok().and_then(|ev| ev.moe_memory_floor(c)),
        false => None,
    };
    if let Some((least, fits)) = probe
        && least >= *st.min_mem_gb
    {
        if !fits {
            return Some(Priced::TooBig);
        }
    } else {
        let lean = match ch.outcome(combos[leanest], c) {
            Ok(o) => o,
            Err(e) => return Some(Priced::Rejected(e)),
        };
        *st.min_mem_gb = st.min_mem_gb.min(lean.mem_gb);
        if lean.mem_gb > capacity {
            return Some(Priced::TooBig);
        }
        outcomes[leanest] = Some(lean);
    }
    None
}

/// A lower bound on the iteration time of a combination with `v` virtual stages whose
/// micro-batch slots alone take at least `floor` [s] (`nmb` slots of at least `floor / nmb`
/// each): the pipeline bubble adds `(pp − 1)/v` such slots. The factor `1 − 1e-9` keeps it a
/// lower bound under rounding (the iteration's sum is formed in another order; a handful of
/// roundings of 1.1e-16 each).
fn with_bubble(floor: f64, pp: u64, v: u64, nmb: f64) -> f64 {
    floor * (1.0 + crate::extended::pipeline::bubble_slots(pp, v) / nmb) * (1.0 - 1e-9)
}

/// Runs one complete search per device count in `n_gpus` (e.g. a strong-scaling sweep), with
/// everything else taken from `spec`; results in the order of `n_gpus`.
pub fn search_device_counts(spec: &SearchSpec, n_gpus: &[u64]) -> Result<Vec<SearchResult>, Error> {
    n_gpus.iter().map(|&n| Ok(Search::new(SearchSpec { n_gpus: n, ..spec.clone() })?.finish())).collect()
}

/// Shard `index` of `count` of a search's candidates (by generation index modulo `count`), or an
/// error at `shard` unless `index < count` and `count > 0`.
pub(crate) fn checked_shard(index: u64, count: u64) -> Result<(u64, u64), Error> {
    if count == 0 || index >= count {
        return Err(Error::invalid("shard", format!("{index}/{count}"), "index must be below a positive count"));
    }
    Ok((index, count))
}
