//! One configuration as the explorer shows it: headline numbers (throughput, time per step,
//! training days, memory against capacity, model-FLOP utilisation), the time and memory
//! breakdowns and the placement of each parallel dimension onto the fast domain.

use super::metrics::{MemoryFit, training_days};
use crate::catalog::TrainingBudget;
use crate::extended::moe::ExpertLayout;
use crate::reference::{Evaluation, model_summary_on};
use crate::resolve::explorer::ExploreSpec;
use crate::search::{Execution, Ranked, ResultRow};
use crate::vocab::model_flops_utilisation;
use crate::vocab::{Candidate, Totals};
use crate::{Error, Strategy};

use crate::vocab::{MemoryPart, TimePart};

/// One parallel dimension and how much of it sits inside one fast (scale-up) domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ParallelDimension {
    /// Short name (`TP`, `TP1`, `TP2`, `CP`, `DP`, `PP`; for the experts of an MoE model `EP`,
    /// `ETP`, `EDP`).
    pub name: &'static str,
    /// What the dimension splits.
    pub role: &'static str,
    /// Degree [devices].
    pub degree: u64,
    /// Members inside one fast domain [devices].
    pub in_domain: u64,
}

impl ParallelDimension {
    /// How many fast domains one group of this dimension spans (`degree / in_domain`).
    pub fn domains(&self) -> u64 {
        self.degree / self.in_domain.max(1)
    }

    /// The dimensions of `c`, tensor dimensions first.
    pub fn of(c: &Candidate) -> Vec<ParallelDimension> {
        let p = |name, role, degree, in_domain| ParallelDimension { name, role, degree, in_domain };
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

    /// How the expert layers of an MoE model re-split the `TP·CP·DP` devices of a stage
    /// (Megatron's parallel folding): expert-tensor, expert and expert-data parallel, with their
    /// members inside one fast domain. They are not further dimensions: `ETP·EP·EDP = TP·CP·DP`.
    pub fn of_experts(x: &ExpertLayout) -> Vec<ParallelDimension> {
        let p = |name, role, degree, in_domain| ParallelDimension { name, role, degree, in_domain };
        vec![
            p("EP", "experts (each rank holds E/EP of them)", x.ep, x.ep_fast),
            p("ETP", "each expert's width", x.etp, x.etp_fast),
            p("EDP", "replicas of each expert shard (gradients reduced here)", x.edp, x.edp_fast),
        ]
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
    /// The scenario, in extended mode (to name the execution of a configuration evaluated on its
    /// own, as its search would choose it).
    pub extended_scenario: Option<Box<ExploreSpec>>,
}

impl ReportContext {
    /// The execution extended mode's search chooses for `c` (`None` in reference mode).
    pub fn execution_of(&self, c: &Candidate) -> Option<Execution> {
        self.extended_scenario.as_ref().and_then(|s| s.best_execution(c))
    }

    /// The context of a validated scenario, in its mode (model FLOPs as that mode counts them,
    /// the peak at its precision, its memory limit).
    pub fn new(spec: &ExploreSpec) -> Result<ReportContext, Error> {
        let flops_per_sample_tflop = match &spec.extended {
            None => model_summary_on(&spec.model, &spec.system)?.flops_per_sample_tflop,
            Some(e) => super::priced::model_flops_per_sample_tflop(
                &e.workload,
                e.options.model.grouped_query_attention,
                e.options.model.gated_mlp,
            ),
        };
        Ok(ReportContext {
            budget: spec.budget,
            seq_len: spec.model.l,
            flops_per_sample_tflop,
            peak_matrix_tflops: spec.peak_matrix_tflops(),
            capacity_gb: spec.capacity_gb(),
            global_batch: spec.global_batch,
            extended_scenario: spec.extended.as_ref().map(|_| Box::new(spec.clone())),
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
    /// The execution (extended mode: recomputation, ZeRO/FSDP, interleaving) it is priced with.
    pub execution: Option<Execution>,
    /// The expert layout (EP, ETP, expert data parallelism) of an MoE model, as the search or the
    /// evaluation chose it; `None` for dense models.
    pub experts: Option<ExpertLayout>,
}

impl ConfigReport {
    /// The report of a ranked search result.
    pub fn of_ranked(ctx: &ReportContext, r: &Ranked) -> ConfigReport {
        let execution = r.execution.or_else(|| ctx.execution_of(&r.candidate));
        let memory = (r.mem_gb, r.need_gb);
        let report = Self::build(ctx, &r.candidate, r.throughput_samples_per_s, memory, &r.totals, execution);
        ConfigReport { experts: r.experts, ..report }
    }

    /// The report of a full evaluation.
    pub fn of_evaluation(ctx: &ReportContext, e: &Evaluation) -> ConfigReport {
        Self::build(ctx, &e.candidate, e.throughput_samples_per_s, (e.mem_gb, e.mem_gb), &e.totals, None)
    }

    /// The report of candidate `c` from its evaluation in either mode (an MoE model's expert
    /// layout is the one the evaluation chose).
    pub fn of_detail(ctx: &ReportContext, c: &Candidate, d: &crate::cost::Detail) -> ConfigReport {
        let memory = (d.mem_gb(), d.need_gb());
        let report = Self::build(ctx, c, d.throughput_samples_per_s(), memory, d.totals(), ctx.execution_of(c));
        ConfigReport { experts: d.experts(), ..report }
    }

    /// `(mem_gb, need_gb)`: the device figure and the need without the allocator's cache [GB].
    fn build(
        ctx: &ReportContext,
        c: &Candidate,
        throughput: f64,
        (mem_gb, need_gb): (f64, f64),
        totals: &Totals,
        execution: Option<Execution>,
    ) -> ConfigReport {
        ConfigReport {
            candidate: *c,
            microbatches: c.microbatches(ctx.global_batch),
            throughput_samples_per_s: throughput,
            time_per_step_s: totals.t,
            training_days: training_days(ctx.budget, ctx.seq_len, throughput),
            mfu: model_flops_utilisation(ctx.flops_per_sample_tflop, throughput, c.n_gpus(), ctx.peak_matrix_tflops),
            memory: MemoryFit { used_gb: mem_gb, need_gb, capacity_gb: ctx.capacity_gb },
            totals: *totals,
            execution,
            experts: None,
        }
    }

    /// The result row of this configuration (the shape every export writes; `ep`, `etp`, `edp`
    /// from the expert layout of an MoE model, as `fmperf search` writes them).
    pub fn row(&self) -> ResultRow {
        let mut dims = self.candidate.dims(self.microbatches * self.candidate.dp * self.candidate.mbs);
        if let Some(x) = self.experts {
            (dims.ep, dims.etp, dims.edp) = (x.ep, x.etp, Some(x.edp));
        }
        ResultRow {
            candidate: self.candidate,
            dims,
            throughput_samples_per_s: self.throughput_samples_per_s,
            time_per_iteration_s: self.time_per_step_s,
            mem_gb: self.memory.used_gb,
            need_gb: self.memory.need_gb,
            time_s: self.time_parts(),
            memory_gb: self.memory_parts(),
            execution: self.execution,
            memory_band_gb: None,
            fits: None,
        }
        .with_capacity(
            self.memory.capacity_gb,
            crate::validate::memory::shipped_band(),
            crate::validate::memory::shipped_under_band(),
        )
    }

    /// The memory band's half-width [GB] and the verdict against the capacity, as the row and every
    /// export of it carry them ([`ResultRow::with_capacity`]): extended mode only (`None` in
    /// reference mode, whose memory is the published model's and has no band).
    pub fn memory_verdict(&self) -> Option<(f64, crate::vocab::Fits)> {
        let row = self.row();
        row.memory_band_gb.zip(row.fits)
    }

    /// The time components [s], in [`TimePart::ALL`] order.
    pub fn time_parts(&self) -> [(TimePart, f64); TimePart::COUNT] {
        TimePart::ALL.map(|p| (p, p.of(&self.totals)))
    }

    /// The four memory components [GB], in [`MemoryPart::ALL`] order.
    pub fn memory_parts(&self) -> [(MemoryPart, f64); 4] {
        MemoryPart::ALL.map(|p| (p, p.of(&self.totals)))
    }

    /// The placement of each parallel dimension.
    pub fn placement(&self) -> Vec<ParallelDimension> {
        ParallelDimension::of(&self.candidate)
    }

    /// How the expert layers re-split the devices (MoE models; empty for dense ones), see
    /// [`ParallelDimension::of_experts`].
    pub fn expert_placement(&self) -> Vec<ParallelDimension> {
        self.experts.as_ref().map(ParallelDimension::of_experts).unwrap_or_default()
    }
}
