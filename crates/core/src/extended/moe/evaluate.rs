//! Evaluation of one configuration of a model with Mixture-of-Experts blocks, in extended mode's
//! result shape ([`ExtendedEvaluation`]) plus what MoE adds ([`MoeBreakdown`]).
//!
//! A device holds dense and MoE blocks (DeepSeek-V3's first three are dense and sit on the first
//! pipeline stage; Llama 4 Maverick alternates), the embedding on the first stage, the head and the
//! multi-token-prediction blocks (each a block, a `2h × h` projection and another pass through the
//! head) on the last. Its work per micro-batch is the sum over what it holds; the schedule (1F1B
//! slots, bubble, stage messages) is the dense model's ([`crate::extended::pipeline`]).
//!
//! Two data-parallel groups: everything but the routed experts is replicated over `dp·cp` (ZeRO
//! by [`crate::extended::data_parallel`]); the routed experts over the expert data-parallel group
//! `edp = tp·cp·dp/(ep·etp)` (their gradients reduced, their optimizer states sharded there).
//! Memory: the memory model of [`crate::extended::memory`] per stage, with the stage's mean block
//! (dense and MoE) and the routed experts as parts of their own (`expert_weights`,
//! `expert_gradients`, `expert_optimizer_states`): expert weights sharded by `ep·etp` and their
//! states over `edp`, the rest by `tp` (and `pp`) over `dp·cp`; activations as each block's
//! operations keep them (MoE: dispatched copies ×γ, expert pre-activations, router probabilities).

use super::devices::{Device, DualRank, MoePartsView, dual_pipe_bubble_slots, dual_ranks, moe_devices};
use super::experts::ExpertLayout;
use super::host_step::{RankTensors, moe_block_tensors, moe_step_host_s};
use super::layer::MoeTimes;
use super::options::A2aOverlap;
use crate::Error;
use crate::extended::block::BlockCost;
use crate::extended::data_parallel::{DpCost, DpGroups, data_parallel_cost};
use crate::extended::device_memory::DeviceMemory;
use crate::extended::fsdp_host::optimizer_shard;
pub use crate::extended::iteration::MoeBreakdown;
use crate::extended::iteration::{
    Breakdown, ExtendedEvaluation, OPTIMIZER_BYTES_PER_PARAMETER, Slots, fp8_weight_cast_s,
};
use crate::extended::layout::Layout;
use crate::extended::memory::{ExpertStates, MemoryEstimate, Stage, peak_need_gb, peak_of_stages};
use crate::extended::muon::{RankBlocks, muon_step_s};
use crate::extended::options::ExtendedOptions;
use crate::extended::pipeline::{bubble_s, exposed_messages_s, message_s, split};
use crate::extended::pricing::{Pass, Pricing};
use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;

/// One micro-batch's forward, backward and recomputation on device `d`.
fn pass_of(d: &Device, parts: MoePartsView) -> Pass {
    pass_with(d, parts, (parts.shared.dense.recompute, parts.moe.block.recompute))
}

/// [`pass_of`] with the blocks' recomputation `(dense, moe)` in place of the parts' own (zero:
/// the pass of the same parts priced without recomputation, the same arithmetic).
fn pass_with(d: &Device, parts: MoePartsView, (dense_again, moe_again): (Pass, Pass)) -> Pass {
    let (dense, moe) = (&parts.shared.dense, &parts.moe.block);
    let mut pass = (dense.fwd + dense.bwd + dense_again).times(d.dense as f64)
        + (moe.fwd + moe.bwd + moe_again).times(d.moe as f64);
    for e in &d.ends {
        pass += e.fwd + e.bwd;
    }
    pass
}

/// A lower bound on the iteration time of [`assemble_moe`] for the same arguments [s]: every
/// micro-batch slot holds at least the busiest device's pass (`nmb · max_d pass_d`; the slot adds
/// data-parallel time and stage messages, the iteration the bubble, the once-per-iteration
/// collectives and the optimizer step, all non-negative). What a search prunes expert layouts
/// with: `global batch / floor` bounds the throughput from above.
pub fn moe_time_floor_s(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    opts: &ExtendedOptions,
    parts: MoePartsView,
) -> f64 {
    let v = if layout.pp > 1 { opts.interleave } else { 1 };
    let busiest = moe_devices(w, m, layout, v, opts.stage_split, parts)
        .iter()
        .map(|d| pass_of(d, parts).time())
        .fold(0.0, f64::max);
    layout.microbatches() as f64 * busiest
}

/// The device's mean block: what the data-parallel overlap rule and the memory model see (the
/// routed experts apart).
fn mean_block(d: &Device, parts: MoePartsView) -> BlockCost {
    mixed_block(d, parts, d.dense as f64, d.moe as f64)
}

/// [`mean_block`] with the activation fields weighted `dense_kept : moe_kept` instead of by the
/// blocks held (times and parameters stay the blocks' mean): a DualPipe rank, whose two stages
/// keep different numbers of micro-batches ([`DualRank`]); its mean over `blocks · in_flight`
/// block-micro-batches.
fn mixed_block(d: &Device, parts: MoePartsView, dense_kept: f64, moe_kept: f64) -> BlockCost {
    let (dense, moe) = (&parts.shared.dense, parts.moe);
    let n = d.blocks().max(1) as f64;
    BlockCost {
        fwd: (dense.fwd.times(d.dense as f64) + moe.block.fwd.times(d.moe as f64)).times(1.0 / n),
        bwd: (dense.bwd.times(d.dense as f64) + moe.block.bwd.times(d.moe as f64)).times(1.0 / n),
        recompute: (dense.recompute.times(d.dense as f64) + moe.block.recompute.times(d.moe as f64)).times(1.0 / n),
        ..mixed_sizes(d, parts, dense_kept, moe_kept)
    }
}

/// The sizes of [`mixed_block`] (parameters and activation bytes; its passes zero): all that the
/// memory model reads of a block, without mixing the passes.
fn mixed_sizes(d: &Device, parts: MoePartsView, dense_kept: f64, moe_kept: f64) -> BlockCost {
    let (dense, moe) = (&parts.shared.dense, parts.moe);
    let n = d.blocks().max(1) as f64;
    let mix = |f: fn(&BlockCost) -> f64| (d.dense as f64 * f(dense) + d.moe as f64 * f(&moe.block)) / n;
    let kept_n = dense_kept + moe_kept;
    let kept = |f: fn(&BlockCost) -> f64| match kept_n > 0.0 {
        true => (dense_kept * f(dense) + moe_kept * f(&moe.block)) / kept_n,
        false => mix(f),
    };
    BlockCost {
        fwd: Pass::default(),
        bwd: Pass::default(),
        recompute: Pass::default(),
        parameters: mix(|b| b.parameters),
        activation_bytes: kept(|b| b.activation_bytes),
        selective_bytes: kept(|b| b.selective_bytes),
        input_bytes: kept(|b| b.input_bytes),
        op_bytes: kept(|b| b.op_bytes),
        linear_parameters: mix(|b| b.linear_parameters),
    }
}

/// Memory: the peak over the stages `devices` (the memory model of [`crate::extended::memory`]),
/// the routed experts' states sharded over the expert data-parallel group of `el`.
/// DualPipe: each rank holds two stages (memory; time keeps 1F1B's `devices` and slots, with
/// DualPipe's bubble, [`dual_pipe_bubble_slots`]).
#[allow(clippy::too_many_arguments)]
fn memory_of(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    p: &Pricing,
    groups: &DpGroups,
    el: &ExpertLayout,
    devices: &[Device],
    parts: MoePartsView,
) -> MemoryEstimate {
    let dual = dual_ranks(w, m, layout, p, parts);
    let stages: Vec<Stage> = memory_stages(el, devices, dual.as_deref(), parts).collect();
    peak_of_stages(w, layout, p, groups, &stages)
}

/// The memory stages of [`memory_of`]: DualPipe's `dual` ranks when given, else `devices`.
fn memory_stages<'a>(
    el: &'a ExpertLayout,
    devices: &'a [Device],
    dual: Option<&'a [DualRank]>,
    parts: MoePartsView<'a>,
) -> impl Iterator<Item = Stage<'a>> + 'a {
    let communicators = u64::from(el.ep > 1) + u64::from(el.edp > 1);
    let per_block = parts.moe.mlp.expert_parameters;
    let stage = move |d: &'a Device, block: BlockCost| Stage {
        name: d.name,
        blocks: d.blocks(),
        block,
        ends: &d.ends,
        head: d.head,
        in_flight: d.in_flight,
        experts: ExpertStates { parameters: d.moe as f64 * per_block, per_block, shard: el.edp, communicators },
    };
    // The memory model reads a block's sizes alone ([`mixed_sizes`]).
    let ranks = dual
        .into_iter()
        .flatten()
        .map(move |r| stage(&r.device, mixed_sizes(&r.device, parts, r.dense_kept, r.moe_kept)));
    let plain = dual.is_none().then_some(devices).into_iter().flatten().map(move |d| {
        let n = (d.dense as f64, d.moe as f64);
        stage(d, mixed_sizes(d, parts, n.0, n.1))
    });
    ranks.chain(plain)
}

/// The memory per device of [`assemble_moe`] for the same arguments [GB] (its
/// `memory_estimate.need_gb()`, the need without the allocator's cache that feasibility is judged
/// on), without pricing the time;
/// the same errors. What lets an evaluator skip assembling an expert layout that does not fit
/// when one that fits is already known (an infeasible layout never beats it).
pub fn moe_memory_gb(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    p: &Pricing,
    parts: MoePartsView,
) -> Result<f64, Error> {
    // The expert layout's errors first, as the assembly's.
    ExpertLayout::fold(layout, m, layout.ep, layout.etp)?;
    MoeMemories::new(w, m, layout, p, parts)?.of((layout.ep, layout.etp), parts)
}

/// [`moe_memory_gb`] of the expert layouts of one block-level layout: the data-parallel groups and
/// the devices (which read no expert degree) formed once ([`Self::new`]), then each layout's
/// memory alone ([`Self::of`]). Equal, layout by layout, to [`moe_memory_gb`] (parts of one block
/// shape share their ends).
pub struct MoeMemories<'a> {
    w: &'a Workload,
    m: &'a MoeShape,
    layout: &'a Layout,
    p: &'a Pricing<'a>,
    groups: DpGroups,
    devices: Vec<Device>,
}

impl<'a> MoeMemories<'a> {
    /// The memories of `layout`'s expert layouts, `parts` those of one of them (the same errors
    /// as [`moe_memory_gb`]'s data-parallel groups).
    pub fn new(
        w: &'a Workload,
        m: &'a MoeShape,
        layout: &'a Layout,
        p: &'a Pricing<'a>,
        parts: MoePartsView,
    ) -> Result<Self, Error> {
        let groups = DpGroups::on(layout, p.opts, p.hw)?;
        let v = if layout.pp > 1 { p.opts.interleave } else { 1 };
        let devices = moe_devices(w, m, layout, v, p.opts.stage_split, parts);
        Ok(MoeMemories { w, m, layout, p, groups, devices })
    }

    /// The memory per device [GB] under expert degrees `(ep, etp)` with their `parts`
    /// ([`moe_memory_gb`] of the layout with those degrees).
    pub fn of(&self, (ep, etp): (u64, u64), parts: MoePartsView) -> Result<f64, Error> {
        let l = self.layout.with_experts(ep, etp);
        let el = ExpertLayout::fold(&l, self.m, ep, etp)?;
        // The stages and arithmetic of [`memory_of`] ([`peak_need_gb`]), the parts not named.
        let dual = dual_ranks(self.w, self.m, &l, self.p, parts);
        let stages = memory_stages(&el, &self.devices, dual.as_deref(), parts);
        Ok(peak_need_gb(self.w, &l, self.p, &self.groups, stages))
    }
}

/// [`MoeMemories`] of several expert layouts of one block-level layout, each `(ep, etp)` with its
/// parts, one by one as the iterator is read (either end first: a caller that needs only whether
/// one fits stops at the first that does).
pub fn moe_memories_gb<'a>(
    w: &'a Workload,
    m: &'a MoeShape,
    layout: &'a Layout,
    p: &'a Pricing<'a>,
    layouts: &'a [((u64, u64), MoePartsView<'a>)],
) -> Result<impl DoubleEndedIterator<Item = Result<f64, Error>> + 'a, Error> {
    let memories = layouts.first().map(|&(_, first)| MoeMemories::new(w, m, layout, p, first)).transpose()?;
    Ok(layouts.iter().map(move |&(choice, parts)| match &memories {
        Some(memories) => memories.of(choice, parts),
        None => Err(Error::invalid("layout", "moe", "has no expert layout priced")),
    }))
}

/// [`moe_time_floor_s`] of several expert layouts of one block-level layout, `parts[i]` priced
/// under the `i`-th: the devices (their blocks and ends, which do not read the expert degrees) are
/// laid out once, from the first. Equal to [`moe_time_floor_s`] of each (parts of one block shape
/// share their ends, [`moe_parts_sharing`]); what a search's floors of every expert layout of a
/// candidate cost once instead of once per layout.
///
/// `recompute: false` leaves the recomputation out of every pass: the floors the same layouts
/// have without recomputation (a block's forward and backward do not read the recomputation
/// level, which adds only its own pass: [`crate::extended::block::BlockCost::of_operations`]),
/// equal to those of parts priced without it (their recomputation is zero) and a lower bound
/// under every level.
pub fn moe_time_floors_s(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    opts: &ExtendedOptions,
    parts: &[MoePartsView],
    recompute: bool,
) -> Vec<f64> {
    let Some(&first) = parts.first() else { return Vec::new() };
    let v = if layout.pp > 1 { opts.interleave } else { 1 };
    let devices = moe_devices(w, m, layout, v, opts.stage_split, first);
    let nmb = layout.microbatches() as f64;
    let floor = |p: MoePartsView| {
        // Without recomputation: the parts' passes with a zero recomputation, as parts priced
        // without it have (not copied: the parts are large and there is one per expert layout).
        let again = if recompute { (p.shared.dense.recompute, p.moe.block.recompute) } else { Default::default() };
        nmb * devices.iter().map(|d| pass_with(d, p, again).time()).fold(0.0, f64::max)
    };
    parts.iter().map(|&p| floor(p)).collect()
}

/// The share of a device's micro-batch passes that Megatron-Core's expert all-to-all overlap
/// runs alone, their exchanges with no other micro-batch's computation beside them [0–1]
/// (NVIDIA/Megatron-LM b0cc2706, the `core_r0.16.0` commit NeMo container 26.02 pins; its
/// `overlap_moe_expert_parallel_comm` pairs one micro-batch's forward with another's backward,
/// layer by layer, [`super::layer::paired_exposed_s`]):
/// * one stage: the first micro-batch's forward and the last one's backward run alone
///   (`combined_1f1b_schedule_for_no_pipelining`, `pipeline_parallel/combined_1f1b.py`
///   l. 17–110): 1 of `nmb`;
/// * interleaved stages: the warm-up forwards and the cool-down backwards, as many each, run
///   alone; on the first stage, which starts first and ends last, `2·(pp − 1) + (v − 1)·pp + 1`
///   of its `nmb·v` chunk passes (`get_pp_rank_microbatches`, `pipeline_parallel/schedules.py`
///   l. 738–790: `(pp − rank − 1)·2 + (v − 1)·group`, the group `microbatch_group_size_per_vp_stage`
///   = pp by default, `model_parallel_config.py` l. 447–448, "+ 1" with the overlap, "one extra
///   micro-batch forward step before the 1f1b stages");
/// * pipeline stages without interleaving: Megatron-Core refuses the overlap
///   (`transformer_config.py` l. 1857–1861: "virtual_pipeline_model_parallel_size must be
///   specified when pipeline_model_parallel_size > 1"), so a search ([`A2aOverlap::Search`])
///   cannot choose it: every pass alone (1). Stated on ([`A2aOverlap::On`]), it is priced as the
///   plain 1F1B warm-up with that extra forward, `(pp − 1) + 1` of `nmb`.
///
/// Off, or under DualPipe (its own schedule, [`super::devices::dual_pipe_bubble_slots`]): 0.
pub fn unpaired_share(overlap: A2aOverlap, pp: u64, interleave: u64, microbatches: u64, dual_pipe: bool) -> f64 {
    if overlap == A2aOverlap::Off || dual_pipe {
        return 0.0;
    }
    let v = interleave.max(1);
    let passes = microbatches.max(1) * v;
    let alone = match (pp, v, overlap) {
        (0 | 1, _, _) => 1,
        (_, 1, A2aOverlap::Search) => passes,
        (_, 1, _) => pp,
        _ => 2 * (pp - 1) + (v - 1) * pp + 1,
    };
    alone.min(passes) as f64 / passes as f64
}

/// Evaluates a configuration of an MoE model whose layout was checked (see
/// [`crate::extended::evaluate`], which sends MoE models here).
pub fn assemble_moe(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    p: &Pricing,
    parts: MoePartsView,
) -> Result<ExtendedEvaluation, Error> {
    let opts: &ExtendedOptions = p.opts;
    let el = ExpertLayout::fold(layout, m, layout.ep, layout.etp)?;
    let groups = DpGroups::on(layout, opts, p.hw)?;
    let expert_groups =
        DpGroups { replicas: el.edp, replicas_fast: el.edp_fast, shard: el.edp, shard_fast: el.edp_fast, ..groups };
    let stages = split(w.layers, layout.pp, opts.stage_split);
    let nmb = layout.microbatches();
    let nmb_f = nmb as f64;
    let v = if layout.pp > 1 { opts.interleave } else { 1 };

    let devices = moe_devices(w, m, layout, v, opts.stage_split, parts);
    let (dense, moe) = (parts.shared.dense, *parts.moe);
    let dual = opts.moe.dual_pipe && v == 1 && layout.pp >= 2 && layout.pp % 2 == 0;
    // The MoE passes the all-to-all overlap runs alone, per micro-batch and MoE block [s].
    let unpaired = unpaired_share(opts.moe.a2a_overlap, layout.pp, v, nmb, dual) * moe.unpaired_s;
    let pass_of = |d: &Device| pass_of(d, parts);
    let ends_params = |d: &Device| d.ends.iter().map(|e| e.parameters).sum::<f64>();
    let dense_params_of =
        |d: &Device| d.dense as f64 * dense.parameters + d.moe as f64 * moe.block.parameters + ends_params(d);
    let expert_params_of = |d: &Device| d.moe as f64 * moe.mlp.expert_parameters;
    let mean_block = |d: &Device| mean_block(d, parts);
    let dp_of = |d: &Device| -> DpCost {
        let b = mean_block(d);
        let (f, bw) = (b.fwd_s(), b.bwd_s());
        let a = data_parallel_cost(&groups, p, d.blocks(), dense_params_of(d), f, bw);
        let e = data_parallel_cost(&expert_groups, p, d.moe, expert_params_of(d), f, bw);
        DpCost {
            per_microbatch_s: a.per_microbatch_s + e.per_microbatch_s,
            per_iteration_s: a.per_iteration_s + e.per_iteration_s,
        }
    };
    // Each device's pass, data-parallel cost and slot, computed once (the same values as
    // recomputing them per comparison; the last of equal slots is the busiest, as `max_by`).
    let priced: Vec<(Pass, DpCost, f64)> = devices
        .iter()
        .map(|d| {
            let (pass, dp) = (pass_of(d), dp_of(d));
            (pass, dp, pass.time() + dp.per_microbatch_s)
        })
        .collect();
    let at = (0..devices.len()).max_by(|&a, &b| priced[a].2.total_cmp(&priced[b].2)).unwrap_or(0);
    let busiest = &devices[at];
    let (pass, dp, busiest_slot) = priced[at];
    // The busiest device's MoE passes run alone, spread over its micro-batches' slots (the
    // bubble and the stage messages keep the paired slot: the warm-up and cool-down are its own).
    let alone = Pass { ep_comm_s: busiest.moe as f64 * unpaired, ..Pass::default() };
    let pass = pass + alone;

    let message = message_s(w, layout, p);
    let messages = exposed_messages_s(message, v, busiest_slot);
    let slot = busiest_slot + alone.ep_comm_s + messages;
    let bubble =
        if dual { dual_pipe_bubble_slots(layout.pp) * slot } else { bubble_s(layout.pp, v, busiest_slot, message) };
    let shard = |g: &DpGroups| if opts.sharding.shards_optimizer() { g.shard as f64 } else { 1.0 };
    let t_opt = p.traffic(
        (dense_params_of(busiest) / shard(&groups) + expert_params_of(busiest) / shard(&expert_groups))
            * OPTIMIZER_BYTES_PER_PARAMETER,
    ) + fp8_weight_cast_s(p, busiest.blocks() as f64 * mean_block(busiest).linear_parameters)
        + muon_step_s(
            w,
            layout,
            p,
            RankBlocks { dense: busiest.dense as f64, moe: busiest.moe as f64, experts: Some((m, &el)) },
        );
    // The logged statistics run on every rank between the backward and the next step, each ending
    // in a device sync: added whole, over the busiest rank's tensors (super::host_step).
    let ranks = RankTensors {
        dense_blocks: busiest.dense as f64,
        moe_blocks: busiest.moe as f64,
        // Embedding and head on one stage, one of them on an end stage (as a dense stage's count).
        ends: match busiest.name {
            "only" => 2.0,
            "first" | "last" => 1.0,
            _ => 0.0,
        },
        moe_block: moe_block_tensors(m.local_experts(el.ep), m.shared_experts),
    };
    let shards = |g: &DpGroups| optimizer_shard(p, if opts.sharding.shards_optimizer() { g.shard } else { 1 });
    let t_step_host = moe_step_host_s(p, layout, ranks, shards(&groups), shards(&expert_groups));
    let t = nmb_f * slot + bubble + dp.per_iteration_s + t_opt + t_step_host;

    let estimate = memory_of(w, m, layout, p, &groups, &el, &devices, parts);
    let memory = DeviceMemory::of(&estimate);

    let t_zero3 = nmb_f * dp.per_microbatch_s;
    let slots = Slots { t, microbatches: nmb_f, pass, t_opt, t_step_host, t_zero3, dp, messages, bubble };
    let totals = slots.totals(&memory);
    let counts = parts.shared.counts;
    let recompute_s = busiest.dense as f64 * dense.recompute.time() + busiest.moe as f64 * moe.block.recompute.time();
    let breakdown = Breakdown {
        t_cp_comm_s: nmb_f * pass.cp_comm_s,
        t_recompute_s: nmb_f * recompute_s,
        t_optimizer_s: t_opt,
        t_step_host_s: t_step_host,
        t_layer_python_s: nmb_f
            * (busiest.dense as f64
                * crate::extended::layer_python::dense_layer_python_s(p.hw, p.opts).iter().sum::<f64>()
                + busiest.moe as f64 * super::block::moe_layer_python_s(p, w, m, &el).iter().sum::<f64>()),
        t_zero3_s: t_zero3,
        overhead_gb: memory.overhead_gb,
        microbatches: nmb,
        stages,
        parameters: counts.total,
        message_s: message,
        critical: busiest.name,
        achieved_tflops: nmb_f * pass.tflop / t,
        block_fwd_tflops: moe.block.fwd.tflop / moe.block.fwd.time(),
        block_bwd_tflops: (moe.block.bwd + moe.block.recompute).tflop / (moe.block.bwd + moe.block.recompute).time(),
    };
    let scale = nmb_f * busiest.moe as f64;
    let times = moe.mlp.times;
    let moe_breakdown = MoeBreakdown {
        experts: el,
        moe_blocks: busiest.moe,
        dense_blocks: busiest.dense,
        tokens_per_expert: moe.mlp.tokens_per_expert,
        dropped_fraction: moe.mlp.dropped_fraction,
        times: MoeTimes {
            router_s: scale * times.router_s,
            experts_s: scale * times.experts_s,
            shared_s: scale * times.shared_s,
            elementwise_s: scale * times.elementwise_s,
            a2a_s: scale * times.a2a_s,
            a2a_exposed_s: scale * (times.a2a_exposed_s + unpaired),
            overhead_s: scale * times.overhead_s,
        },
        expert_weights_gb: estimate.part("expert_weights"),
        expert_gradients_gb: estimate.part("expert_gradients"),
        expert_optimizer_gb: estimate.part("expert_optimizer_states"),
        parameters: counts,
    };
    Ok(ExtendedEvaluation::assembled(
        w,
        layout,
        p.hw.hbm_capacity_gb,
        totals,
        breakdown,
        dp,
        memory,
        estimate,
        Some(moe_breakdown),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_run_alone_by_hand() {
        let share = |o, pp, v, nmb| unpaired_share(o, pp, v, nmb, false);
        let (on, search) = (A2aOverlap::On, A2aOverlap::Search);
        // Off, or DualPipe: none.
        assert_eq!(share(A2aOverlap::Off, 1, 1, 8), 0.0);
        assert_eq!(unpaired_share(on, 8, 1, 64, true), 0.0);
        // One stage, 8 micro-batches: the first forward and the last backward, 1 of 8.
        assert_eq!(share(on, 1, 1, 8), 0.125);
        assert_eq!(share(search, 1, 1, 1), 1.0);
        // PP 8, VPP 4, 256 micro-batches (Qwen3-235B on 256 B300s, Megatron-Bridge 26.02): the
        // first stage's warm-up 2·7 + 3·8 + 1 = 39 of 256·4 = 1,024 chunk passes.
        assert_eq!(share(on, 8, 4, 256), 39.0 / 1024.0);
        // PP 4, VPP 2, 2 micro-batches: 2·3 + 1·4 + 1 = 11 of 4 passes: all of them.
        assert_eq!(share(search, 4, 2, 2), 1.0);
        // PP 8 without interleaving: Megatron-Core refuses the overlap, so a search cannot
        // choose it (all alone); stated on, the plain warm-up 7 + 1 = 8 of 256.
        assert_eq!(share(search, 8, 1, 256), 1.0);
        assert_eq!(share(on, 8, 1, 256), 8.0 / 256.0);
    }
}
