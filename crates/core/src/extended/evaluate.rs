//! Evaluation of one configuration in extended mode, with the reference's result shape
//! ([`crate::vocab::Totals`], [`Outcome`]) so that views, searches and sweeps can switch modes.
//! [`evaluate`] prices one configuration, [`memory_estimate`] its memory alone, and
//! [`ExtendedEvaluator`] many search candidates with their block costs cached (an MoE candidate's
//! choice among its expert layouts in `evaluate/expert_choice.rs`): the last stage of extended
//! mode, above the iteration's assembly ([`super::iteration`], dense; [`super::moe::evaluate`], MoE).

use std::collections::HashMap;

use super::data_parallel::DpGroups;
use super::hardware::Hardware;
use super::head::{embedding_cost, head_cost};
pub use super::iteration::{Breakdown, ExtendedEvaluation, HostPart, OPTIMIZER_BYTES_PER_PARAMETER};
use super::iteration::{Parts, assemble, check, check_layout, parts};
use super::layout::Layout;
use super::memory::{MemoryEstimate, peak_memory};
use super::moe::devices::moe_parts;
use super::moe::evaluate::assemble_moe;
use super::moe::experts::ExpertLayout;
use super::moe_caches::{MoeCaches, ShapeMap};
use super::options::{ExtendedOptions, Sharding};
use super::pricing::Pricing;
use super::workload::Workload;
use crate::vocab::{Candidate, Outcome};
use crate::{Error, Strategy};

mod expert_choice;
use expert_choice::FloorsMemo;

/// Evaluates one configuration (validates workload, options and layout first).
pub fn evaluate(
    w: &Workload,
    hw: &Hardware,
    layout: &Layout,
    opts: &ExtendedOptions,
) -> Result<ExtendedEvaluation, Error> {
    check(w, hw, layout, opts)?;
    super::activation_offload::check_link(hw, opts)?;
    let p = Pricing { hw, opts };
    if let Some(m) = &w.moe {
        let el = ExpertLayout::fold(layout, m, layout.ep, layout.etp)?;
        return assemble_moe(w, m, layout, &p, moe_parts(w, m, layout, &el, &p).view());
    }
    assemble(w, layout, &p, &parts(w, layout, &p))
}

/// The memory estimate of a configuration: `w` on `hw` under `layout` and `opts` (validated like
/// the evaluator). This is the function views and validation call.
pub fn memory_estimate(
    w: &Workload,
    hw: &Hardware,
    layout: &Layout,
    opts: &ExtendedOptions,
) -> Result<MemoryEstimate, Error> {
    w.validate()?;
    opts.validate()?;
    layout.validate(w, hw.domain_size(), opts.uneven_stages)?;
    if w.moe.is_some() {
        // Dense and MoE blocks per stage, the routed experts over their own group.
        return Ok(evaluate(w, hw, layout, opts)?.memory_estimate);
    }
    let p = Pricing { hw, opts };
    let block = super::block::block_cost(w, layout, &p);
    let groups = DpGroups::on(layout, opts, hw)?;
    Ok(peak_memory(w, layout, &p, &block, &embedding_cost(w, layout, &p), &head_cost(w, layout, &p), &groups))
}

/// Evaluates many search candidates of one strategy (1d or 2d-seqp) for one workload, system and
/// batch, caching the block-level costs per block shape like the reference's evaluator.
///
/// A clone is the same evaluator with its caches empty (they are memos: the copy prices what it
/// is asked afresh, to the same figures); searches clone their evaluator to shard it before it has
/// priced anything. `Debug` shows the setup and how much each cache holds.
pub struct ExtendedEvaluator {
    workload: Workload,
    hardware: Hardware,
    options: ExtendedOptions,
    global_batch: u64,
    cache: HashMap<(u64, u64, u64, u64, u64, bool), Parts>,
    /// MoE block costs per block shape and expert layout ([`MoeCaches`]).
    moe_caches: MoeCaches,
    /// The last MoE layout's expert choices and time floors ([`Self::moe_floors`]), with the
    /// interleave degree they were computed under: a search asks for the floors of a candidate
    /// and then evaluates it.
    moe_floors_memo: Option<FloorsMemo>,
    /// The parts of the memo's layout, one per expert choice in the choices' order: indices into
    /// its block shape's [`ShapeParts::blocks`] in `moe_caches` ([`MoeCaches::current`]; the
    /// parts are read where they are cached, not copied per candidate).
    moe_current: Vec<u32>,
    /// [`expert_choices`] per `(tp, cp, dp)` of a layout, all it reads that varies in a search
    /// (test `memoised_choices_equal_fresh_ones`).
    moe_choices: ShapeMap<[u64; 3], Vec<(u64, u64)>>,
    /// [`Self::moe_memories`] per layout without its fast-domain placement and data-parallel
    /// groups without their fast shares (all the memory model reads: `None` where a memory is an
    /// error or not a number), for the layouts of one `(tp, cp)` group under these options.
    moe_probes: ShapeMap<[u64; 9], Vec<Option<f64>>>,
}

impl Clone for ExtendedEvaluator {
    fn clone(&self) -> ExtendedEvaluator {
        ExtendedEvaluator::with_empty_caches(&self.workload, &self.hardware, &self.options, self.global_batch)
    }
}

impl std::fmt::Debug for ExtendedEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtendedEvaluator")
            .field("workload", &self.workload)
            .field("hardware", &self.hardware)
            .field("options", &self.options)
            .field("global_batch", &self.global_batch)
            .field("dense_block_shapes_cached", &self.cache.len())
            .field("moe_blocks_cached", &self.moe_caches.list.len())
            .field("moe_probes_cached", &self.moe_probes.len())
            .finish_non_exhaustive()
    }
}

impl ExtendedEvaluator {
    /// The evaluator of these inputs with nothing cached (inputs as validated by [`Self::new`]).
    fn with_empty_caches(
        workload: &Workload,
        hardware: &Hardware,
        options: &ExtendedOptions,
        global_batch: u64,
    ) -> ExtendedEvaluator {
        ExtendedEvaluator {
            workload: *workload,
            hardware: hardware.clone(),
            options: *options,
            global_batch,
            cache: HashMap::new(),
            moe_caches: MoeCaches::default(),
            moe_floors_memo: None,
            moe_current: Vec::new(),
            moe_choices: ShapeMap::default(),
            moe_probes: ShapeMap::default(),
        }
    }

    /// An evaluator (workload and options are validated here; 2d SUMMA is rejected).
    pub fn new(
        workload: &Workload,
        hardware: &Hardware,
        options: &ExtendedOptions,
        strategy: Strategy,
        global_batch: u64,
    ) -> Result<ExtendedEvaluator, Error> {
        workload.validate()?;
        options.validate()?;
        if strategy == Strategy::Summa2D {
            return Err(Error::invalid("strategy", "2d", "has no extended-mode model")
                .with_hint("use 1d or 2d-seqp in extended mode"));
        }
        Ok(ExtendedEvaluator::with_empty_caches(workload, hardware, options, global_batch))
    }

    /// The same evaluator with another ZeRO sharding, shard group and interleave degree, its
    /// caches kept (validated like [`Self::new`]). Exact: the cached block costs (dense `Parts`,
    /// MoE [`MoeParts`]: blocks, embedding, head, MTP projection) read the recomputation level
    /// among the execution switches but none of these three, which enter only the assembly
    /// (data-parallel cost and overlap, memory, pipeline schedule). What lets a search that
    /// chooses the execution price each block shape once per recomputation level.
    pub fn reschedule(&mut self, sharding: Sharding, shard_group: Option<u64>, interleave: u64) -> Result<(), Error> {
        let o = &self.options;
        if (o.sharding, o.shard_group, o.interleave) != (sharding, shard_group, interleave) {
            let options = ExtendedOptions { sharding, shard_group, interleave, ..self.options };
            options.validate()?;
            self.options = options;
            self.moe_probes.clear();
        }
        Ok(())
    }

    /// Full evaluation of a layout (with its expert degrees), caching the block-level costs (the
    /// workload and switches were validated when the evaluator was made).
    pub fn evaluate_layout(&mut self, layout: &Layout) -> Result<ExtendedEvaluation, Error> {
        let layout = *layout;
        check_layout(&self.workload, &self.hardware, &layout, &self.options)?;
        if let Some(m) = self.workload.moe {
            let parts = self.shape_parts(&layout, &m, (layout.ep, layout.etp))?;
            let (w, p) = (&self.workload, Pricing { hw: &self.hardware, opts: &self.options });
            return assemble_moe(w, &m, &layout, &p, parts.view());
        }
        let p = Pricing { hw: &self.hardware, opts: &self.options };
        // With whether the pipeline has one stage: a tied output head holds no weights of its own
        // then (`head_cost`), its own copy otherwise.
        let key = (layout.tp, layout.cp, layout.mbs, layout.placement.tp, layout.placement.cp, layout.pp == 1);
        let w = &self.workload;
        let parts = *self.cache.entry(key).or_insert_with(|| parts(w, &layout, &p));
        assemble(&self.workload, &layout, &p, &parts)
    }

    /// The expert layout chosen for a candidate (MoE models; `None` for dense ones or a rejected
    /// candidate).
    pub fn experts_of(&mut self, c: &Candidate) -> Option<ExpertLayout> {
        self.workload.moe?;
        self.evaluate_full(c).ok()?.moe.map(|m| m.experts)
    }

    /// HBM capacity of the device [GB] (the feasibility limit).
    pub fn capacity_gb(&self) -> f64 {
        self.hardware.hbm_capacity_gb
    }

    /// The headline numbers of a candidate in the reference's shape.
    pub fn evaluate(&mut self, c: &Candidate) -> Result<Outcome, Error> {
        Ok(self.evaluate_full(c)?.outcome())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::options::{Recompute, Sharding};

    fn gpt3() -> Workload {
        Workload { vocab: Some(51200), ..Workload::from_shape(&crate::ModelShape::GPT3) }
    }

    #[test]
    fn components_add_up_and_features_move_time() {
        let hw = Hardware::from_params(&SystemParams::a100().with_domain_size(8), true);
        let layout = Layout::placed(8, 1, 12, 16, 1, 1536, 8);
        let opts = ExtendedOptions::realistic();
        let e = evaluate(&gpt3(), &hw, &layout, &opts).unwrap();
        let t = &e.totals;
        let sum = t.t_comp + t.t_mem + t.t_tp_comm + t.t_ep_comm + t.t_dp_comm + t.t_pp_comm + t.t_bubble;
        assert!((sum - t.t).abs() < 1e-9 * t.t, "{sum} vs {}", t.t);
        assert_eq!(e.breakdown.microbatches, 96);
        // Interleaving shrinks the bubble; full recomputation costs about a third more.
        let inter = evaluate(&gpt3(), &hw, &layout, &ExtendedOptions { interleave: 2, ..opts }).unwrap();
        assert!((inter.totals.t_bubble - e.totals.t_bubble / 2.0).abs() < 0.1 * e.totals.t_bubble);
        let full = evaluate(&gpt3(), &hw, &layout, &ExtendedOptions { recompute: Recompute::Full, ..opts }).unwrap();
        let ratio = full.totals.t / e.totals.t;
        assert!(ratio > 1.2 && ratio < 1.4, "{ratio}");
        assert!(full.mem_gb < e.mem_gb);
    }

    #[test]
    fn zero3_costs_more_communication_than_zero1() {
        let hw = Hardware::from_params(&SystemParams::a100().with_domain_size(8), true);
        let layout = Layout::placed(1, 1, 1, 1536, 1, 1536, 8);
        let z1 =
            ExtendedOptions { sharding: Sharding::Zero1, recompute: Recompute::Full, ..ExtendedOptions::realistic() };
        let z3 = ExtendedOptions { sharding: Sharding::Zero3, ..z1 };
        let a = evaluate(&gpt3(), &hw, &layout, &z1).unwrap();
        let b = evaluate(&gpt3(), &hw, &layout, &z3).unwrap();
        assert!(b.totals.t_dp_comm > a.totals.t_dp_comm);
        assert!(b.mem_gb < a.mem_gb);
    }

    #[test]
    fn evaluator_matches_evaluate_and_rejects_summa() {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let w = gpt3();
        let opts = ExtendedOptions::realistic();
        let mut ev = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::OneD, 1024).unwrap();
        let c = Candidate::one_d(16, 8, 8, 2, 8, 1, 1);
        let a = ev.evaluate_full(&c).unwrap();
        let b = evaluate(&w, &hw, &Layout::from_candidate(&c, 1024).unwrap(), &opts).unwrap();
        assert_eq!(a, b);
        assert_eq!(ev.evaluate(&c).unwrap().totals, b.totals);
        assert!(ExtendedEvaluator::new(&w, &hw, &opts, Strategy::Summa2D, 1024).is_err());
    }

    #[test]
    fn a_tied_dense_head_is_priced_per_pipeline_depth() {
        // The dense models' cache, as the MoE one (`expert_choice`'s test
        // `a_tied_head_keeps_its_parts_per_pipeline_depth`): in either order, each candidate as
        // priced alone.
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let w = Workload { tied_embeddings: true, ..Workload::LLAMA3_8B };
        let opts = ExtendedOptions::realistic();
        for order in [[1, 2, 1], [2, 1, 2]] {
            let mut ev = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::OneD, 1024).unwrap();
            for pp in order {
                let layout = Layout::placed(2, 1, pp, 32, 1, 1024, 8);
                let mut fresh = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::OneD, 1024).unwrap();
                let alone = format!("{:?}", fresh.evaluate_layout(&layout).unwrap());
                assert_eq!(format!("{:?}", ev.evaluate_layout(&layout).unwrap()), alone, "pp {pp} after {order:?}");
            }
        }
    }
}
