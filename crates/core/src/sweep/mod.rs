//! Sweeps: how performance moves when one or more inputs change.
//!
//! A sweep's definition is the resolver's, its one home: a
//! [`SweepSpec`](crate::resolve::sweep_spec::SweepSpec) is a base
//! [`Scenario`](crate::resolve::Scenario) (model, system, domain size, precision, devices, global
//! batch, strategies, budget) and a list of [`Axis`](crate::resolve::sweep_axis::Axis); its points
//! are the cartesian product of the axes (the last axis varies fastest), each resolved by
//! [`crate::resolve::point`]. Axes ([`AxisKey`](crate::resolve::sweep_axis::AxisKey)): device count,
//! scale-up domain size, system parameters (matrix and vector FLOP rate, HBM capacity and bandwidth,
//! scale-up and scale-out bandwidth; absolute or as factors), sequence length, global batch,
//! gradient-accumulation steps (see [`BatchRule`](crate::resolve::sweep_spec::BatchRule) for how they map onto the reference model's
//! micro-batches), precision, weight sparsity (not expressible in the reference model: such points
//! say so; extended mode prices it where the part exploits it), system, model, strategy, and
//! configuration restrictions (`tp`, `tp1`, `tp2`, `pp`, `dp`, `mbs`) for design-space maps such
//! as TP × PP.
//!
//! A sweep runs in one [`Mode`](crate::mode::Mode) ([`SweepSpec::mode`](crate::resolve::sweep_spec::SweepSpec::mode)): reference mode
//! (bit-exact with the reference's search) or extended mode with its switches; every result says
//! which ([`PointResult::mode`]).
//!
//! Each point is the fastest configuration that fits in HBM over the strategies searched, with its
//! time and memory breakdown and the best of every strategy ([`PointResult`]); a point without one
//! says why ([`Status`]: out of memory with the leanest candidate's need, no valid configuration,
//! invalid input, unsupported).
//!
//! [`Sweep`] is resumable ([`Sweep::step`] with a budget of candidates, [`Sweep::progress`]) and
//! can run one [`Shard`](crate::resolve::sweep_spec::Shard) of a sweep; [`export`] writes CSV and JSON Lines identical in the page and
//! the CLI.

pub mod export;
pub mod metric;
pub mod result;
pub mod run;
pub mod text;

pub use metric::Metric;
pub use result::{Best, PointResult, SECONDS_PER_DAY, Status, StrategyOutcome};
pub use run::{FoundPoint, Sweep, SweepResult};
pub use text::SweepText;
