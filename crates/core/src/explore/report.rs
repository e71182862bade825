//! One configuration as the explorer shows it: headline numbers (throughput, time per step,
//! training days, memory against capacity, model-FLOP utilisation), the time and memory
//! breakdowns and the placement of each parallel dimension onto the fast domain.

use super::inputs::ExploreSpec;
use super::metrics::{MemoryFit, model_flops_utilisation, training_days};
use crate::catalog::TrainingBudget;
use crate::reference::{Candidate, Evaluation, Totals, model_summary_on};
use crate::search::Ranked;
use crate::{Error, Strategy};

/// A component of the iteration time. The six add up to the iteration time
/// (`t = compute + exposed memory + TP + DP + PP communication + bubble`, spec §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimePart {
    /// Compute at the derated peak, with per-kernel overheads (`t_comp`).
    Compute,
    /// Memory-bound time not hidden behind compute (`t_mem`).
    ExposedMemory,
    /// Tensor-parallel (and context-parallel) collectives (`t_tp_comm`).
    TpComm,
    /// Data-parallel gradient reduction and weight gathering (`t_dp_comm`).
    DpComm,
    /// Pipeline point-to-point sends (`t_pp_comm`).
    PpComm,
    /// Pipeline bubble (`t_bubble`).
    Bubble,
}

impl TimePart {
    /// All parts, in stacking order.
    pub const ALL: [TimePart; 6] = [
        TimePart::Compute,
        TimePart::ExposedMemory,
        TimePart::TpComm,
        TimePart::DpComm,
        TimePart::PpComm,
        TimePart::Bubble,
    ];

    /// Short machine key (`comp`, `mem`, `tp_comm`, `dp_comm`, `pp_comm`, `bubble`), as the CLI's JSON.
    pub fn key(self) -> &'static str {
        match self {
            TimePart::Compute => "comp",
            TimePart::ExposedMemory => "mem",
            TimePart::TpComm => "tp_comm",
            TimePart::DpComm => "dp_comm",
            TimePart::PpComm => "pp_comm",
            TimePart::Bubble => "bubble",
        }
    }

    /// Label for legends and table headers.
    pub fn label(self) -> &'static str {
        match self {
            TimePart::Compute => "compute",
            TimePart::ExposedMemory => "exposed memory",
            TimePart::TpComm => "TP comm",
            TimePart::DpComm => "DP comm",
            TimePart::PpComm => "PP comm",
            TimePart::Bubble => "bubble",
        }
    }

    /// One sentence on what the part is.
    pub fn description(self) -> &'static str {
        match self {
            TimePart::Compute => "matrix and vector work at 80 % of peak, plus 20 µs per kernel",
            TimePart::ExposedMemory => "HBM traffic that takes longer than the layer's compute",
            TimePart::TpComm => "tensor- and context-parallel collectives inside each block (not overlapped)",
            TimePart::DpComm => "data-parallel weight all-gather and gradient reduce-scatter",
            TimePart::PpComm => "activations sent between pipeline stages",
            TimePart::Bubble => "pipeline fill and drain: (pp − 1) micro-batch steps",
        }
    }

    /// This part of `t` [s].
    pub fn of(self, t: &Totals) -> f64 {
        match self {
            TimePart::Compute => t.t_comp,
            TimePart::ExposedMemory => t.t_mem,
            TimePart::TpComm => t.t_tp_comm,
            TimePart::DpComm => t.t_dp_comm,
            TimePart::PpComm => t.t_pp_comm,
            TimePart::Bubble => t.t_bubble,
        }
    }
}

/// A component of the memory per device; the four add up to it (spec §6, quirk Q8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryPart {
    /// 16-bit weights of the local blocks.
    Weights,
    /// Weight gradients (not sharded).
    Gradients,
    /// FP32 master weights and Adam moments, sharded over data (and context) parallelism.
    OptimizerStates,
    /// Activations of the micro-batches in flight.
    Activations,
}

impl MemoryPart {
    /// All parts, in stacking order.
    pub const ALL: [MemoryPart; 4] =
        [MemoryPart::Weights, MemoryPart::Gradients, MemoryPart::OptimizerStates, MemoryPart::Activations];

    /// Short machine key (`weights`, `grads`, `optimizer`, `activations`), as the CLI's JSON.
    pub fn key(self) -> &'static str {
        match self {
            MemoryPart::Weights => "weights",
            MemoryPart::Gradients => "grads",
            MemoryPart::OptimizerStates => "optimizer",
            MemoryPart::Activations => "activations",
        }
    }

    /// Label for legends and table headers.
    pub fn label(self) -> &'static str {
        match self {
            MemoryPart::Weights => "weights",
            MemoryPart::Gradients => "gradients",
            MemoryPart::OptimizerStates => "optimizer states",
            MemoryPart::Activations => "activations",
        }
    }

    /// This part of `t` [GB].
    pub fn of(self, t: &Totals) -> f64 {
        match self {
            MemoryPart::Weights => t.wts_mem,
            MemoryPart::Gradients => t.wts_grad_mem,
            MemoryPart::OptimizerStates => t.wts_optimizer_states_mem,
            MemoryPart::Activations => t.acts_mem,
        }
    }
}

/// One parallel dimension and how much of it sits inside one fast (scale-up) domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Placement {
    /// Short name (`TP`, `TP1`, `TP2`, `CP`, `DP`, `PP`).
    pub name: &'static str,
    /// What the dimension splits.
    pub role: &'static str,
    /// Degree [devices].
    pub degree: u64,
    /// Members inside one fast domain [devices].
    pub in_domain: u64,
}

impl Placement {
    /// How many fast domains one group of this dimension spans (`degree / in_domain`).
    pub fn domains(&self) -> u64 {
        self.degree / self.in_domain.max(1)
    }

    /// The dimensions of `c`, tensor dimensions first.
    pub fn of(c: &Candidate) -> Vec<Placement> {
        let p = |name, role, degree, in_domain| Placement { name, role, degree, in_domain };
        let mut out = match c.strategy {
            Strategy::OneD => vec![p("TP", "tensor (heads, MLP width)", c.tp1, c.nv_tp1)],
            Strategy::Summa2D => {
                vec![p("TP1", "SUMMA grid: features", c.tp1, c.nv_tp1), p("TP2", "SUMMA grid: tokens", c.tp2, c.nv_tp2)]
            }
            Strategy::ContextParallel2D => {
                vec![
                    p("TP", "tensor (heads, MLP width)", c.tp1, c.nv_tp1),
                    p("CP", "context (sequence)", c.tp2, c.nv_tp2),
                ]
            }
        };
        out.push(p("DP", "data (batch)", c.dp, c.nv_dp));
        out.push(p("PP", "pipeline (layers)", c.pp, c.nv_pp));
        out
    }
}

/// What every report of one scenario shares.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportContext {
    /// Training budget.
    pub budget: TrainingBudget,
    /// Sequence length of one sample [tokens].
    pub seq_len: u64,
    /// Model FLOPs per sample, forward + backward [TFLOP] (see [`model_flops_utilisation`]).
    pub flops_per_sample_tflop: f64,
    /// Peak matrix rate of one device [TFLOP/s].
    pub peak_matrix_tflops: f64,
    /// Memory capacity of one device [GB].
    pub capacity_gb: f64,
    /// Global batch [samples].
    pub global_batch: u64,
}

impl ReportContext {
    /// The context of a validated scenario.
    pub fn new(spec: &ExploreSpec) -> Result<ReportContext, Error> {
        let summary = model_summary_on(&spec.model, &spec.system)?;
        Ok(ReportContext {
            budget: spec.budget,
            seq_len: spec.model.l,
            flops_per_sample_tflop: summary.flops_per_sample_tflop,
            peak_matrix_tflops: spec.system.matrix_flops_fp16,
            capacity_gb: spec.system.hbm_capacity,
            global_batch: spec.global_batch,
        })
    }
}

/// One configuration with everything the explorer shows about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigReport {
    /// The configuration.
    pub candidate: Candidate,
    /// Micro-batches per iteration.
    pub microbatches: u64,
    /// `G / t` [samples/s].
    pub throughput_samples_per_s: f64,
    /// Iteration time `t` [s].
    pub time_per_step_s: f64,
    /// Days to train on the budget [days].
    pub training_days: f64,
    /// Model-FLOP utilisation [fraction].
    pub mfu: f64,
    /// Memory per device against capacity.
    pub memory: MemoryFit,
    /// Every stats value of the iteration.
    pub totals: Totals,
}

impl ConfigReport {
    /// The report of a ranked search result.
    pub fn of_ranked(ctx: &ReportContext, r: &Ranked) -> ConfigReport {
        Self::build(ctx, &r.candidate, r.throughput_samples_per_s, r.mem_gb, &r.totals)
    }

    /// The report of a full evaluation.
    pub fn of_evaluation(ctx: &ReportContext, e: &Evaluation) -> ConfigReport {
        Self::build(ctx, &e.candidate, e.throughput_samples_per_s, e.mem_gb, &e.totals)
    }

    fn build(ctx: &ReportContext, c: &Candidate, throughput: f64, mem_gb: f64, totals: &Totals) -> ConfigReport {
        ConfigReport {
            candidate: *c,
            microbatches: c.microbatches(ctx.global_batch),
            throughput_samples_per_s: throughput,
            time_per_step_s: totals.t,
            training_days: training_days(ctx.budget, ctx.seq_len, throughput),
            mfu: model_flops_utilisation(ctx.flops_per_sample_tflop, throughput, c.n_gpus(), ctx.peak_matrix_tflops),
            memory: MemoryFit { used_gb: mem_gb, capacity_gb: ctx.capacity_gb },
            totals: *totals,
        }
    }

    /// The six time components [s], in [`TimePart::ALL`] order.
    pub fn time_parts(&self) -> [(TimePart, f64); 6] {
        TimePart::ALL.map(|p| (p, p.of(&self.totals)))
    }

    /// The four memory components [GB], in [`MemoryPart::ALL`] order.
    pub fn memory_parts(&self) -> [(MemoryPart, f64); 4] {
        MemoryPart::ALL.map(|p| (p, p.of(&self.totals)))
    }

    /// The placement of each parallel dimension.
    pub fn placement(&self) -> Vec<Placement> {
        Placement::of(&self.candidate)
    }
}
