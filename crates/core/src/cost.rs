//! One cost-model interface ([`CostModel`]) and its two implementations: reference mode (the
//! published model, [`reference::Evaluator`]) and extended mode ([`ExtendedEvaluator`]). Searches,
//! sweeps and the explorer price candidates through it, so a caller does not branch on the mode:
//! headline numbers for ranking, the expert layout chosen (MoE models), the full evaluation for
//! the drill-down ([`Detail`]), and the device capacity feasibility is judged against.
//!
//! Reference mode stays bit-exact: its implementation calls the published model's own functions
//! and adds nothing.
//!
//! [`Pricer`] is the one place a scenario's mode becomes its model: a caller holds the
//! reference's inputs and, in extended mode, its [`ExtendedSetup`], and asks [`Pricer::model`]
//! for the model of a strategy (the search's counterpart is `Search::in_mode`). Outside this
//! module and the two models, nothing builds an evaluator of either mode; validation prices a
//! measured row's fixed layout with the models' own functions, the mode choosing which
//! ([`GivenConfiguration`]).

use crate::extended::moe::ExpertLayout;
use crate::extended::{ExtendedEvaluation, ExtendedEvaluator, ExtendedOptions, Hardware, Workload};
use crate::mode::ModelMode;
use crate::mode_kind::Mode;
use crate::reference::{self, Evaluation};
use crate::vocab::{Candidate, Outcome, Totals};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// A model that prices training configurations (candidates) of one scenario and one strategy.
pub trait CostModel: std::fmt::Debug + Send {
    /// Which model this is.
    fn mode(&self) -> Mode;

    /// The headline numbers of a generated candidate (iteration time, throughput, memory per
    /// device); an error when the model rejects the candidate. Candidates come from the search's
    /// generators, which produce only configurations the scenario admits.
    fn price(&mut self, c: &Candidate) -> Result<Outcome, Error>;

    /// [`Self::price`] with the expert-parallel layout the model chose (MoE models in extended
    /// mode; `None` otherwise).
    fn price_with_experts(&mut self, c: &Candidate) -> Result<(Outcome, Option<ExpertLayout>), Error> {
        self.price(c).map(|o| (o, None))
    }

    /// The expert layout chosen for `c` (MoE models in extended mode).
    fn experts_of(&mut self, _c: &Candidate) -> Option<ExpertLayout> {
        None
    }

    /// The full evaluation of `c` (every layer or operation, the parallel overheads, memory parts,
    /// totals), checked as a user's configuration is.
    fn detail(&mut self, c: &Candidate) -> Result<Detail, Error>;

    /// Extended mode's full evaluation of `c` (`None` for the reference model, which has none).
    fn extended_detail(&mut self, _c: &Candidate) -> Option<Result<ExtendedEvaluation, Error>> {
        None
    }

    /// Memory capacity of one device [GB]: a candidate needing more is infeasible.
    fn capacity_gb(&self) -> f64;

    /// A boxed copy (searches and sweeps are cloned to be sharded).
    fn boxed_clone(&self) -> Box<dyn CostModel>;
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

impl ExtendedSetup {
    /// Extended mode's evaluator of this setup with `options` (the setup's own, or those of an
    /// execution applied to them), for `strategy` and `global_batch` samples.
    pub fn evaluator(
        &self,
        options: &ExtendedOptions,
        strategy: Strategy,
        global_batch: u64,
    ) -> Result<ExtendedEvaluator, Error> {
        ExtendedEvaluator::new(&self.workload, &self.hardware, options, strategy, global_batch)
    }

    /// Whether this setup's model chooses an expert-parallel layout for each candidate (a
    /// Mixture-of-Experts workload): then a search splits its shards by block shape and bounds a
    /// candidate by its layouts' memory and time floors (`ExtendedEvaluator::moe_memory_floor`,
    /// `moe_fits`, `moe_time_floor_without_recompute`) rather than by pricing it. The one place
    /// the search learns whether the workload has experts.
    pub fn chooses_expert_layouts(&self) -> bool {
        self.workload.moe.is_some()
    }
}

/// What one scenario is priced with, in its mode: the reference model's inputs (its shape and
/// system) and, in extended mode, extended mode's setup. Searches, sweeps, the explorer and the
/// CLI's search hold these and ask here for the model; only this type turns the mode into one.
#[derive(Debug, Clone, Copy)]
pub struct Pricer<'a> {
    /// The transformer as the reference model reads it.
    pub shape: &'a ModelShape,
    /// The system as the reference model reads it.
    pub system: &'a SystemParams,
    /// Extended mode's setup (`None`: reference mode).
    pub extended: Option<&'a ExtendedSetup>,
}

impl Pricer<'_> {
    /// The model that prices candidates of `strategy` with `global_batch` samples per iteration.
    pub fn model(&self, strategy: Strategy, global_batch: u64) -> Result<Box<dyn CostModel>, Error> {
        self.model_with(strategy, global_batch, None)
    }

    /// [`Self::model`], in extended mode with `options` in place of the setup's switches (an
    /// execution applied to them); reference mode has no switches and ignores them.
    pub fn model_with(
        &self,
        strategy: Strategy,
        global_batch: u64,
        options: Option<&ExtendedOptions>,
    ) -> Result<Box<dyn CostModel>, Error> {
        Ok(match self.extended {
            None => Box::new(reference::Evaluator::new(self.shape, self.system, strategy, global_batch)?),
            Some(e) => Box::new(e.evaluator(options.unwrap_or(&e.options), strategy, global_batch)?),
        })
    }

    /// The mode with its switches.
    pub fn mode(&self) -> ModelMode {
        self.extended.map_or(ModelMode::Reference, |e| ModelMode::Extended(e.options))
    }

    /// Memory of one device [GB] as the mode reads it: the feasibility limit.
    pub fn capacity_gb(&self) -> f64 {
        self.extended.map_or(self.system.hbm_capacity, |e| e.hardware.hbm_capacity_gb)
    }

    /// Peak matrix rate of one device at the mode's precision [TFLOP/s].
    pub fn peak_matrix_tflops(&self) -> f64 {
        self.extended.map_or(self.system.matrix_flops_fp16, |e| e.hardware.matmul_peak_tflops)
    }
}

/// A configuration given rather than searched (a measured run's layout, which validation prices as
/// it ran): its holder prices it with each model's own inputs, and the mode says which model
/// prices it ([`Mode::price_given`]), as [`Pricer::model`] does for a search.
pub trait GivenConfiguration {
    /// What a pricing yields.
    type Priced;

    /// The configuration priced by the published model.
    fn by_reference(&self) -> Self::Priced;

    /// The configuration priced by extended mode.
    fn by_extended(&self) -> Self::Priced;
}

impl Mode {
    /// `given` priced by this mode's model.
    pub fn price_given<G: GivenConfiguration>(self, given: &G) -> G::Priced {
        match self {
            Mode::Reference => given.by_reference(),
            Mode::Extended => given.by_extended(),
        }
    }
}

impl Clone for Box<dyn CostModel> {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
}

impl CostModel for reference::Evaluator {
    fn mode(&self) -> Mode {
        Mode::Reference
    }

    fn price(&mut self, c: &Candidate) -> Result<Outcome, Error> {
        Ok(self.evaluate_unchecked(c))
    }

    fn detail(&mut self, c: &Candidate) -> Result<Detail, Error> {
        let (model, system, global_batch) = self.inputs();
        reference::evaluate(model, system, global_batch, c).map(Detail::Reference)
    }

    fn capacity_gb(&self) -> f64 {
        self.inputs().1.hbm_capacity
    }

    fn boxed_clone(&self) -> Box<dyn CostModel> {
        Box::new(self.clone())
    }
}

impl CostModel for ExtendedEvaluator {
    fn mode(&self) -> Mode {
        Mode::Extended
    }

    fn price(&mut self, c: &Candidate) -> Result<Outcome, Error> {
        self.evaluate(c)
    }

    fn price_with_experts(&mut self, c: &Candidate) -> Result<(Outcome, Option<ExpertLayout>), Error> {
        self.evaluate_full(c).map(|x| (x.outcome(), x.moe.map(|m| m.experts)))
    }

    fn experts_of(&mut self, c: &Candidate) -> Option<ExpertLayout> {
        ExtendedEvaluator::experts_of(self, c)
    }

    fn detail(&mut self, c: &Candidate) -> Result<Detail, Error> {
        self.evaluate_full(c).map(Detail::Extended)
    }

    fn extended_detail(&mut self, c: &Candidate) -> Option<Result<ExtendedEvaluation, Error>> {
        Some(self.evaluate_full(c))
    }

    fn capacity_gb(&self) -> f64 {
        ExtendedEvaluator::capacity_gb(self)
    }

    fn boxed_clone(&self) -> Box<dyn CostModel> {
        Box::new(self.clone())
    }
}

/// The full evaluation of one configuration in the scenario's mode.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// The reference's: every layer row, the data- and pipeline-parallel pseudo-layers, totals.
    Reference(Evaluation),
    /// Extended mode's: totals, what extended mode adds, data-parallel exposure, memory parts.
    Extended(ExtendedEvaluation),
}

impl Detail {
    /// The iteration totals.
    pub fn totals(&self) -> &Totals {
        match self {
            Detail::Reference(e) => &e.totals,
            Detail::Extended(e) => &e.totals,
        }
    }

    /// Throughput [samples/s].
    pub fn throughput_samples_per_s(&self) -> f64 {
        match self {
            Detail::Reference(e) => e.throughput_samples_per_s,
            Detail::Extended(e) => e.throughput_samples_per_s,
        }
    }

    /// Memory per device [GB].
    pub fn mem_gb(&self) -> f64 {
        match self {
            Detail::Reference(e) => e.mem_gb,
            Detail::Extended(e) => e.mem_gb,
        }
    }

    /// The matrix rates of one block's forward and backward passes [TFLOP/s]: the reference's
    /// FLOPs over times summed over its layer rows, extended mode's from its breakdown.
    pub fn block_tflops(&self) -> (f64, f64) {
        match self {
            Detail::Reference(ev) => {
                let rows = || ev.mlp.iter().chain(&ev.attention);
                let sum = |f: fn(&reference::LayerRow) -> f64| rows().map(f).sum::<f64>();
                (sum(|r| r.flops_fwd_tflop) / sum(|r| r.t_fwd_s), sum(|r| r.flops_bwd_tflop) / sum(|r| r.t_bwd_s))
            }
            Detail::Extended(ev) => (ev.breakdown.block_fwd_tflops, ev.breakdown.block_bwd_tflops),
        }
    }

    /// The expert layout the evaluation chose (MoE models in extended mode).
    pub fn experts(&self) -> Option<ExpertLayout> {
        match self {
            Detail::Reference(_) => None,
            Detail::Extended(e) => e.moe.map(|m| m.experts),
        }
    }
}
