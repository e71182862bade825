//! The reference's configuration searches (spec §7): enumerate every candidate of a strategy for a
//! device count, evaluate it, drop those that do not fit in HBM and keep the `k` fastest.
//!
//! A [`Search`] is resumable: [`Search::step`] evaluates a bounded number of candidates, so a web
//! page can run it in short time slices; the total is known up front ([`Search::progress`]).
//!
//! The same search runs in extended mode ([`Search::new_extended`]): the candidates are the
//! reference's (1d and 2d-seqp), each priced by [`crate::extended`] with the same result shape.

pub mod parts;
pub mod space;
pub mod topk;

pub use parts::{MemoryPart, TimePart};
pub use space::Space;
pub use topk::{Ranked, TopK};

use crate::extended::moe::ExpertLayout;
use crate::extended::{ExtendedEvaluation, ExtendedEvaluator, ExtendedOptions, Hardware, Workload};
use crate::reference::candidate::{MAX_DEVICES, MAX_GLOBAL_BATCH};
use crate::reference::{Candidate, Evaluation, Evaluator, Outcome, evaluate};
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
    /// Candidates evaluated (the size of the search space once done).
    pub candidates: u64,
    /// Candidates that fit in HBM.
    pub feasible: u64,
    /// The fastest feasible configurations, best first (empty: nothing fits).
    pub top: Vec<Ranked>,
}

/// What extended mode prices a search with: the richer model, the part at its precision, the
/// switches.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtendedSetup {
    /// The transformer (its reference shape replaces the spec's model).
    pub workload: Workload,
    /// The part (its fast-domain size must equal the spec's `nvlink_size`).
    pub hardware: Hardware,
    /// The switches.
    pub options: ExtendedOptions,
}

/// Which model prices the candidates (shared by searches and sweeps). One per search, so the size
/// difference of the variants does not matter; the reference's evaluator stays unboxed on its hot
/// path.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Engine {
    /// The reference's evaluator.
    Reference(Evaluator),
    /// Extended mode's evaluator.
    Extended(Box<ExtendedEvaluator>),
}

impl Engine {
    /// The headline numbers of a generated candidate; `None` when extended mode rejects it (none of
    /// the generated candidates so far): such a candidate is counted as evaluated, never ranked.
    pub(crate) fn outcome(&mut self, c: &Candidate) -> Option<Outcome> {
        match self {
            Engine::Reference(e) => Some(e.evaluate_unchecked(c)),
            Engine::Extended(e) => e.evaluate(c).ok(),
        }
    }

    /// [`Self::outcome`] with the expert-parallel degrees the extended evaluator chose (MoE models).
    pub(crate) fn outcome_with_experts(&mut self, c: &Candidate) -> Option<(Outcome, Option<ExpertLayout>)> {
        match self {
            Engine::Reference(e) => Some((e.evaluate_unchecked(c), None)),
            Engine::Extended(e) => e.evaluate_full(c).ok().map(|x| (x.outcome(), x.moe.map(|m| m.experts))),
        }
    }
}

/// A resumable search.
#[derive(Debug, Clone)]
pub struct Search {
    spec: SearchSpec,
    space: Space,
    evaluator: Engine,
    cursor: (usize, usize),
    evaluated: u64,
    feasible: u64,
    top: TopK,
}

impl Search {
    /// Validates the spec and generates the candidate list (cheap next to evaluating it).
    pub fn new(spec: SearchSpec) -> Result<Search, Error> {
        spec.validate()?;
        let evaluator = Evaluator::new(&spec.model, &spec.system, spec.strategy, spec.global_batch)?;
        Ok(Self::with_engine(spec, Engine::Reference(evaluator)))
    }

    /// The same search priced in extended mode (strategies 1d and 2d-seqp). The spec's model is
    /// replaced by the workload's reference shape (which generates the candidates); the spec's
    /// `nvlink_size` must be the hardware's fast-domain size.
    pub fn new_extended(mut spec: SearchSpec, ext: ExtendedSetup) -> Result<Search, Error> {
        spec.model = ext.workload.to_shape();
        spec.validate()?;
        if ext.hardware.domain_size() != spec.system.nvlink_size {
            return Err(Error::invalid(
                "system.nvlink_size",
                spec.system.nvlink_size,
                format!("must equal the extended hardware's fast-domain size {}", ext.hardware.domain_size()),
            ));
        }
        let evaluator =
            ExtendedEvaluator::new(&ext.workload, &ext.hardware, &ext.options, spec.strategy, spec.global_batch)?;
        Ok(Self::with_engine(spec, Engine::Extended(Box::new(evaluator))))
    }

    fn with_engine(spec: SearchSpec, evaluator: Engine) -> Search {
        let space = Space::new(spec.strategy, &spec.model, spec.system.nvlink_size, spec.n_gpus, spec.global_batch);
        let top = TopK::new(spec.top_k);
        Search { spec, space, evaluator, cursor: (0, 0), evaluated: 0, feasible: 0, top }
    }

    /// The full extended-mode evaluation of a candidate of an extended search (`None` for a
    /// reference search; use [`SearchSpec::evaluate`] there).
    pub fn evaluate_extended(&mut self, c: &Candidate) -> Option<Result<ExtendedEvaluation, Error>> {
        match &mut self.evaluator {
            Engine::Reference(_) => None,
            Engine::Extended(e) => Some(e.evaluate_full(c)),
        }
    }

    /// Evaluates up to `max_candidates` more candidates; returns `true` when the search is done.
    pub fn step(&mut self, max_candidates: usize) -> bool {
        let capacity = match &self.evaluator {
            Engine::Reference(_) => self.spec.system.hbm_capacity,
            Engine::Extended(e) => e.capacity_gb(),
        };
        let mut next = None;
        let mut done_here = 0usize;
        for (pos, c) in self.space.walk(self.cursor) {
            if done_here == max_candidates {
                next = Some(pos);
                break;
            }
            done_here += 1;
            let Some((o, experts)) = self.evaluator.outcome_with_experts(&c) else { continue };
            // Infeasible (mem > capacity) candidates are discarded after evaluation.
            if o.mem_gb > capacity {
                continue;
            }
            self.feasible += 1;
            if self.top.accepts(o.throughput_samples_per_s) {
                self.top.offer(Ranked {
                    candidate: c,
                    throughput_samples_per_s: o.throughput_samples_per_s,
                    time_per_iteration_s: o.totals.t,
                    mem_gb: o.mem_gb,
                    totals: o.totals,
                    experts,
                });
            }
        }
        self.evaluated += done_here as u64;
        match next {
            Some(pos) => {
                self.cursor = pos;
                false
            }
            None => {
                self.evaluated = self.space.len();
                true
            }
        }
    }

    /// `(evaluated, total)` candidates.
    pub fn progress(&self) -> (u64, u64) {
        (self.evaluated, self.space.len())
    }

    /// Whether every candidate has been evaluated.
    pub fn is_done(&self) -> bool {
        self.evaluated >= self.space.len()
    }

    /// The result so far (final once [`Search::is_done`]).
    pub fn result(&self) -> SearchResult {
        SearchResult {
            n_gpus: self.spec.n_gpus,
            candidates: self.evaluated,
            feasible: self.feasible,
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
}

/// Runs one complete search per device count in `n_gpus` (e.g. a strong-scaling sweep), with
/// everything else taken from `spec`; results in the order of `n_gpus`.
pub fn search_device_counts(spec: &SearchSpec, n_gpus: &[u64]) -> Result<Vec<SearchResult>, Error> {
    n_gpus.iter().map(|&n| Ok(Search::new(SearchSpec { n_gpus: n, ..spec.clone() })?.finish())).collect()
}
