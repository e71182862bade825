//! What can be read off a sweep point: headline figures, the time and memory breakdowns of the
//! best configuration, per-strategy days. Each metric has a key (CSV/JSON/URL), a label with its
//! unit, and a value.

use std::fmt;

use super::result::PointResult;
use crate::{Error, Strategy};

use crate::vocab::{MemoryPart, TimePart};

/// A number read off a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Training days of the best configuration [days].
    Days,
    /// Throughput [samples/s].
    Throughput,
    /// Throughput [tokens/s].
    TokensPerS,
    /// Iteration time [s].
    IterationS,
    /// Memory per device [GB].
    MemGb,
    /// Achieved rate per device over the iteration [TFLOP/s].
    AchievedTflops,
    /// Achieved rate of one block's forward pass [TFLOP/s].
    BlockFwdTflops,
    /// Achieved rate of one block's backward pass [TFLOP/s].
    BlockBwdTflops,
    /// A component of the iteration time [s].
    Time(TimePart),
    /// A component of the memory per device [GB].
    Memory(MemoryPart),
    /// Training days of one strategy's best configuration [days].
    StrategyDays(Strategy),
    /// Device-hours of the whole run on the model's budget [h] ([`crate::run_cost`]).
    GpuHours,
    /// Energy of the devices at their board power over the whole run [MWh] (`None` when the
    /// catalog lists no power for the part).
    EnergyMwh,
    /// Money of the whole run at the part's example price per device-hour [USD]
    /// ([`crate::run_cost::examples`]: an example, not a quote; `None` without one).
    CostUsd,
}

impl Metric {
    /// The cost metrics (against devices: how the cost of the whole run moves with scale).
    pub const COST: [Metric; 3] = [Metric::GpuHours, Metric::EnergyMwh, Metric::CostUsd];

    /// The headline metrics, for pickers.
    pub const HEADLINE: [Metric; 8] = [
        Metric::Days,
        Metric::Throughput,
        Metric::TokensPerS,
        Metric::IterationS,
        Metric::MemGb,
        Metric::AchievedTflops,
        Metric::BlockFwdTflops,
        Metric::BlockBwdTflops,
    ];

    /// The key used in CSV/JSON columns and URLs.
    pub fn key(self) -> String {
        match self {
            Metric::Days => "days".into(),
            Metric::Throughput => "throughput".into(),
            Metric::TokensPerS => "tokens_per_s".into(),
            Metric::IterationS => "iteration_s".into(),
            Metric::MemGb => "mem_gb".into(),
            Metric::AchievedTflops => "achieved_tflops".into(),
            Metric::BlockFwdTflops => "block_fwd_tflops".into(),
            Metric::BlockBwdTflops => "block_bwd_tflops".into(),
            Metric::Time(p) => format!("time_{}", p.key()),
            Metric::Memory(p) => format!("mem_{}", p.key()),
            Metric::StrategyDays(s) => format!("days_{}", s.as_str()),
            Metric::GpuHours => "gpu_hours".into(),
            Metric::EnergyMwh => "energy_mwh".into(),
            Metric::CostUsd => "cost_usd".into(),
        }
    }

    /// A label with its unit, for axes and headers.
    pub fn label(self) -> String {
        match self {
            Metric::Days => "training time [days]".into(),
            Metric::Throughput => "throughput [samples/s]".into(),
            Metric::TokensPerS => "throughput [tokens/s]".into(),
            Metric::IterationS => "iteration time [s]".into(),
            Metric::MemGb => "memory per device [GB]".into(),
            Metric::AchievedTflops => "achieved [TFLOP/s per device]".into(),
            Metric::BlockFwdTflops => "block forward [TFLOP/s]".into(),
            Metric::BlockBwdTflops => "block backward [TFLOP/s]".into(),
            Metric::Time(p) => format!("{} [s]", p.label()),
            Metric::Memory(p) => format!("{} [GB]", p.key()),
            Metric::StrategyDays(s) => format!("training time {} [days]", s.as_str()),
            Metric::GpuHours => "whole run [device-hours]".into(),
            Metric::EnergyMwh => "energy, devices at board power [MWh]".into(),
            Metric::CostUsd => "run cost at the example price, not a quote [USD]".into(),
        }
    }

    /// The value at `p` (`None` when the point has no feasible configuration).
    pub fn value(self, p: &PointResult) -> Option<f64> {
        if let Metric::StrategyDays(s) = self {
            return p.strategy_days(s);
        }
        if Metric::COST.contains(&self) {
            return cost_of(self, p);
        }
        let b = p.best.as_ref()?;
        let t = &b.ranked.totals;
        Some(match self {
            Metric::Days => b.days,
            Metric::Throughput => b.ranked.throughput_samples_per_s,
            Metric::TokensPerS => b.tokens_per_s,
            Metric::IterationS => b.ranked.time_per_iteration_s,
            Metric::MemGb => b.ranked.mem_gb,
            Metric::AchievedTflops => b.achieved_tflops,
            Metric::BlockFwdTflops => b.block_fwd_tflops,
            Metric::BlockBwdTflops => b.block_bwd_tflops,
            Metric::Time(part) => part.of(t),
            Metric::Memory(part) => part.of(t),
            Metric::StrategyDays(_) | Metric::GpuHours | Metric::EnergyMwh | Metric::CostUsd => return None,
        })
    }

    /// Parses a key (see [`Metric::key`]).
    pub fn parse(key: &str) -> Result<Metric, Error> {
        let all = Metric::all();
        all.iter().copied().find(|m| m.key() == key.trim()).ok_or_else(|| {
            let keys: Vec<String> = all.iter().map(|m| m.key()).collect();
            Error::invalid("metric", key, format!("must be one of {}", keys.join(", ")))
        })
    }

    /// Every metric.
    pub fn all() -> Vec<Metric> {
        let mut v = Metric::HEADLINE.to_vec();
        v.extend(TimePart::ALL.map(Metric::Time));
        v.extend(MemoryPart::ALL.map(Metric::Memory));
        v.extend(Strategy::ALL.map(Metric::StrategyDays));
        v.extend(Metric::COST);
        v
    }

    /// Whether smaller is better (times, memory), for colour scales.
    pub fn lower_is_better(self) -> bool {
        !matches!(
            self,
            Metric::Throughput
                | Metric::TokensPerS
                | Metric::AchievedTflops
                | Metric::BlockFwdTflops
                | Metric::BlockBwdTflops
        )
    }
}

/// A cost metric of `p`: the run's device-hours (days × 24 × devices), its energy at the part's
/// board power and its money at the part's example price ([`crate::run_cost::RunCost::for_part`]).
fn cost_of(m: Metric, p: &PointResult) -> Option<f64> {
    let (b, inputs) = (p.best.as_ref()?, p.inputs.as_ref()?);
    let part = crate::resolve::builtin_system(&inputs.system_id).ok()?;
    let budget = crate::catalog::TrainingBudget::Samples(inputs.budget_samples);
    let c = crate::run_cost::RunCost::for_part(
        budget,
        inputs.shape.l,
        b.ranked.throughput_samples_per_s,
        inputs.devices,
        part,
        None,
    )
    .ok()?;
    match m {
        Metric::GpuHours => Some(c.gpu_hours),
        Metric::EnergyMwh => c.energy_mwh,
        _ => c.total,
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}
