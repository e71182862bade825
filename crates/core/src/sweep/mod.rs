//! Sweeps: how performance moves when one or more inputs change.
//!
//! A [`SweepSpec`] is a base [`Scenario`](crate::resolve::Scenario) (model, system, domain size,
//! precision, devices, global batch, strategies, budget) and a list of [`Axis`]; its points are the
//! cartesian product of the axes (the last axis varies fastest). Axes ([`AxisKey`]): device count,
//! scale-up domain size, system parameters (matrix and vector FLOP rate, HBM capacity and bandwidth,
//! scale-up and scale-out bandwidth; absolute or as factors), sequence length, global batch,
//! gradient-accumulation steps (see [`BatchRule`] for how they map onto the reference model's
//! micro-batches), precision, weight sparsity (not expressible in the reference model: such points
//! say so; extended mode prices it where the part exploits it), system, model, strategy, and
//! configuration restrictions (`tp`, `tp1`, `tp2`, `pp`, `dp`, `mbs`) for design-space maps such
//! as TP × PP.
//!
//! A sweep runs in one [`Mode`](crate::mode::Mode) ([`SweepSpec::mode`]): reference mode
//! (bit-exact with the reference's search) or extended mode with its switches; every result says
//! which ([`PointResult::mode`]).
//!
//! Each point is the fastest configuration that fits in HBM over the strategies searched, with its
//! time and memory breakdown and the best of every strategy ([`PointResult`]); a point without one
//! says why ([`Status`]: out of memory with the leanest candidate's need, no valid configuration,
//! invalid input, unsupported).
//!
//! [`Sweep`] is resumable ([`Sweep::step`] with a budget of candidates, [`Sweep::progress`]) and
//! can run one [`Shard`] of a sweep; [`export`] writes CSV and JSON Lines identical in the page and
//! the CLI.

pub mod export;
pub mod metric;
pub mod result;
pub mod run;
pub mod text;

/// A sweep's definition and its points resolved are the resolver's ([`crate::resolve`]): the
/// axes, the spec, and each point's inputs.
pub use crate::resolve::{point, sweep_axis as axis, sweep_spec as spec};

pub use axis::{Axis, AxisKey, AxisValue, SystemParam, ValueKind};
pub use metric::Metric;
pub use point::{PointInputs, PointLabels, SPARSITY_UNSUPPORTED, SUMMA_UNSUPPORTED};
pub use result::{Best, PointResult, SECONDS_PER_DAY, Status, StrategyOutcome};
pub use run::{FoundPoint, Sweep, SweepResult};
pub use spec::{BatchRule, CHUNKS_PER_WORKER, Constraints, Shard, SweepSpec};
pub use text::SweepText;
