//! The outcome of one sweep point: the fastest feasible configuration with its breakdown, the best
//! of every strategy, or why there is none.

use crate::Strategy;
use crate::mode::Mode;
use crate::resolve::point::{PointInputs, PointLabels};
use crate::resolve::sweep_axis::AxisValue;
use crate::search::Ranked;

/// Seconds per day.
pub const SECONDS_PER_DAY: f64 = 86_400.0;

/// Whether a point has a feasible configuration, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Status {
    /// A configuration fits in memory.
    Ok,
    /// Configurations exist but none fits in HBM.
    OutOfMemory,
    /// No configuration exists for this shape, device count, batch and restrictions.
    NoConfiguration,
    /// An input of the point is invalid (parameter, model shape, missing catalog value).
    Invalid,
    /// The point asks for something its mode cannot express (weight sparsity in reference mode,
    /// 2D SUMMA in extended mode).
    Unsupported,
}

impl Status {
    /// The name used in CSV and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::OutOfMemory => "out_of_memory",
            Status::NoConfiguration => "no_configuration",
            Status::Invalid => "invalid",
            Status::Unsupported => "unsupported",
        }
    }
}

/// The search of one strategy at one point.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StrategyOutcome {
    /// The strategy.
    pub strategy: Strategy,
    /// Candidates that satisfy the point's restrictions [count].
    pub candidates: u64,
    /// Of those, the ones that fit in HBM [count].
    pub feasible: u64,
    /// The fastest feasible one.
    pub best: Option<Ranked>,
    /// The smallest memory per device of any candidate [GB] (why nothing fits).
    pub min_mem_gb: Option<f64>,
}

impl StrategyOutcome {
    /// An outcome before any candidate was seen.
    pub fn empty(strategy: Strategy) -> StrategyOutcome {
        StrategyOutcome { strategy, candidates: 0, feasible: 0, best: None, min_mem_gb: None }
    }
}

/// The fastest feasible configuration of a point and what follows from it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Best {
    /// Its strategy.
    pub strategy: Strategy,
    /// Configuration, throughput, time, memory and the iteration totals.
    pub ranked: Ranked,
    /// Days to train on the model's budget: `budget [samples] / throughput / 86400`.
    pub days: f64,
    /// Throughput in tokens (or patches) per second: samples/s × sequence length.
    pub tokens_per_s: f64,
    /// Achieved rate per device over the iteration [TFLOP/s]: work per device / iteration time.
    pub achieved_tflops: f64,
    /// Achieved rate of one block's forward pass on one micro-batch [TFLOP/s] (communication
    /// inside the pass included, pipeline and data parallelism not). NaN when the point's full
    /// evaluation failed (JSON: `null`).
    #[serde(deserialize_with = "nan_if_null")]
    pub block_fwd_tflops: f64,
    /// Same for the backward pass [TFLOP/s].
    #[serde(deserialize_with = "nan_if_null")]
    pub block_bwd_tflops: f64,
}

/// Reads a number that JSON writes as `null` when it is NaN.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(<Option<f64> as serde::Deserialize>::deserialize(d)?.unwrap_or(f64::NAN))
}

impl Best {
    /// Derives the figures of `ranked` for `inputs` (one full evaluation, in the point's mode, for
    /// the block rates).
    pub fn of(strategy: Strategy, ranked: Ranked, inputs: &PointInputs) -> Best {
        let (c, g) = (&ranked.candidate, inputs.global_batch);
        let rates = inputs
            .pricer()
            .model(strategy, g)
            .and_then(|mut m| m.detail(c))
            .map(|d| d.block_tflops())
            .unwrap_or((f64::NAN, f64::NAN));
        let t = ranked.time_per_iteration_s;
        Best {
            strategy,
            days: inputs.budget_samples / ranked.throughput_samples_per_s / SECONDS_PER_DAY,
            tokens_per_s: ranked.throughput_samples_per_s * inputs.shape.l as f64,
            achieved_tflops: ranked.totals.flops_per_gpu / t,
            block_fwd_tflops: rates.0,
            block_bwd_tflops: rates.1,
            ranked,
        }
    }
}

/// One point of a sweep, evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// Position in the whole sweep (row-major over the axes), also in shards.
    pub index: usize,
    /// The value of every axis at this point.
    pub values: Vec<AxisValue>,
    /// Model, system and device count as given.
    pub labels: PointLabels,
    /// The resolved inputs (`None` when the point is invalid or unsupported).
    pub inputs: Option<PointInputs>,
    /// Feasible or why not.
    pub status: Status,
    /// Why the point has no configuration, in words (`None` when [`Status::Ok`]).
    pub reason: Option<String>,
    /// The fastest feasible configuration over the strategies searched.
    pub best: Option<Best>,
    /// The search of every strategy, in the order searched.
    pub per_strategy: Vec<StrategyOutcome>,
    /// The mode the point was (or would have been) priced in, with its own precision and sparsity.
    pub mode: Mode,
}

impl PointResult {
    /// Candidates evaluated over all strategies [count].
    pub fn candidates(&self) -> u64 {
        self.per_strategy.iter().map(|s| s.candidates).sum()
    }

    /// Candidates that fit over all strategies [count].
    pub fn feasible(&self) -> u64 {
        self.per_strategy.iter().map(|s| s.feasible).sum()
    }

    /// The outcome of one strategy, if it was searched.
    pub fn strategy(&self, s: Strategy) -> Option<&StrategyOutcome> {
        self.per_strategy.iter().find(|o| o.strategy == s)
    }

    /// Training days of the best configuration of strategy `s`.
    pub fn strategy_days(&self, s: Strategy) -> Option<f64> {
        let inputs = self.inputs.as_ref()?;
        let best = self.strategy(s)?.best.as_ref()?;
        Some(inputs.budget_samples / best.throughput_samples_per_s / SECONDS_PER_DAY)
    }

    /// The result of a point whose search ran: picks the best strategy (the first one searched
    /// wins an exact tie) and explains an empty result.
    pub fn from_search(
        index: usize,
        values: Vec<AxisValue>,
        labels: PointLabels,
        inputs: PointInputs,
        per_strategy: Vec<StrategyOutcome>,
    ) -> PointResult {
        let mut winner: Option<(Strategy, Ranked)> = None;
        for o in &per_strategy {
            if let Some(r) = &o.best {
                if winner.as_ref().is_none_or(|(_, w)| r.throughput_samples_per_s > w.throughput_samples_per_s) {
                    winner = Some((o.strategy, *r));
                }
            }
        }
        let (status, reason, best) = match winner {
            Some((s, r)) => (Status::Ok, None, Some(Best::of(s, r, &inputs))),
            None => {
                let (status, why) = explain(&inputs, &per_strategy);
                (status, Some(why), None)
            }
        };
        let mode = inputs.mode();
        PointResult { index, values, labels, inputs: Some(inputs), status, reason, best, per_strategy, mode }
    }
}

/// Why no configuration of a point fits: out of memory (with the leanest candidate's need) or no
/// configuration at all (with the shape facts that limit the splits).
fn explain(inputs: &PointInputs, per_strategy: &[StrategyOutcome]) -> (Status, String) {
    let leanest = per_strategy.iter().filter_map(|s| s.min_mem_gb).fold(f64::INFINITY, f64::min);
    let names: Vec<&str> = inputs.strategies.iter().map(|s| s.as_str()).collect();
    if leanest.is_finite() {
        return (
            Status::OutOfMemory,
            format!(
                "nothing fits in memory at {} devices: the leanest configuration ({}) needs {:.1} GB per device, \
                 the device has {:.1} GB",
                inputs.devices,
                names.join(", "),
                leanest,
                inputs.capacity_gb()
            ),
        );
    }
    let m = &inputs.shape;
    let restricted =
        if inputs.constraints.is_free() { String::new() } else { format!(" with {}", inputs.constraints.to_text()) };
    (
        Status::NoConfiguration,
        format!(
            "no valid configuration of {} devices{restricted} for strategies {}: tensor-parallel degrees must divide \
             the heads (h = {}) and width (e = {}), pipeline stages the depth (D = {}), data parallelism the global \
             batch (G = {}); device count and scale-up domain of {} must be compatible",
            inputs.devices,
            names.join(", "),
            m.h,
            m.e,
            m.depth,
            inputs.global_batch,
            inputs.params.domain_size
        ),
    )
}
