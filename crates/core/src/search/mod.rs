//! The reference's configuration searches (spec §7): enumerate every candidate of a strategy for a
//! device count, evaluate it, drop those that do not fit in HBM and keep the `k` fastest.
//!
//! A [`Search`] is resumable: [`Search::step`] evaluates a bounded number of candidates, so a web
//! page can run it in short time slices; the total is known up front ([`Search::progress`]). It is
//! also shardable ([`Search::shard`]: every n-th candidate), so a caller with threads can run n
//! shards and merge them ([`shard_state::merge_shards`]) into exactly the single run's result — the core itself
//! stays thread-free.
//!
//! The same search runs in extended mode ([`Search::in_mode`] with a setup): the candidates are the
//! reference's (1d and 2d-seqp) with extended mode's rules ([`widen`]), each priced by
//! [`crate::extended`] with the same result shape, choosing the execution ([`execution`]) where
//! the caller's `ExecutionChoices` leave it open. Where nothing is found, [`Search::diagnose`] says why and what
//! would work ([`diagnose`]).

mod chooser;
pub mod code;
pub mod diagnose;
pub mod execution;
pub mod row;
pub mod shard_state;
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

use chooser::{ChooseState, Chooser, choose};
use shard_state::reported_min_mem;

use crate::cost::{CostModel, ExtendedSetup, Pricer};
use crate::extended::ExtendedEvaluation;
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
    /// fits, or none was evaluated; the need without the allocator's cache that the search judges
    /// fitting by, [`crate::vocab::Outcome::need_gb`]): what a search that finds nothing says is
    /// missing. Once one
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
    /// priced by one shard only). Run every shard and [`shard_state::merge_shards`] them: the result equals
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
                    self.min_mem_gb = self.min_mem_gb.min(o.need_gb);
                    // Infeasible (need > capacity: even without the allocator's cache) candidates
                    // are discarded after evaluation.
                    if o.need_gb > capacity {
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

    /// The kept list with its generation indices (for [`shard_state::merge_shards`]).
    pub fn top(&self) -> &TopK {
        &self.top
    }
}

/// The entry of the top list for candidate `c` priced as `o` under `execution`.
pub(super) fn ranked(c: Candidate, o: &Outcome, execution: Option<Execution>) -> Ranked {
    Ranked {
        candidate: c,
        throughput_samples_per_s: o.throughput_samples_per_s,
        time_per_iteration_s: o.totals.t,
        mem_gb: o.mem_gb,
        need_gb: o.need_gb,
        totals: o.totals,
        execution,
        experts: None,
    }
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
