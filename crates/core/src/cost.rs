//! One cost-model interface ([`CostModel`]) and its two implementations: reference mode (the
//! published model, [`reference::Evaluator`]) and extended mode ([`ExtendedEvaluator`]). Searches,
//! sweeps and the explorer price candidates through it, so a caller does not branch on the mode:
//! headline numbers for ranking, the expert layout chosen (MoE models), the full evaluation for
//! the drill-down ([`Detail`]), and the device capacity feasibility is judged against.
//!
//! Reference mode stays bit-exact: its implementation calls the published model's own functions
//! and adds nothing.

use crate::Error;
use crate::extended::moe::ExpertLayout;
use crate::extended::{ExtendedEvaluation, ExtendedEvaluator};
use crate::mode_kind::Mode;
use crate::reference::{self, Candidate, Evaluation, Outcome, Totals};

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

    /// Memory capacity of one device [GB]: a candidate needing more is infeasible.
    fn capacity_gb(&self) -> f64;

    /// A boxed copy (searches and sweeps are cloned to be sharded).
    fn boxed_clone(&self) -> Box<dyn CostModel>;
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

    /// The expert layout the evaluation chose (MoE models in extended mode).
    pub fn experts(&self) -> Option<crate::extended::moe::ExpertLayout> {
        match self {
            Detail::Reference(_) => None,
            Detail::Extended(e) => e.moe.map(|m| m.experts),
        }
    }
}
