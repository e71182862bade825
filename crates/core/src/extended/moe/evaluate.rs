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

use super::block::{MoeBlockCost, moe_block_cost};
use super::counts::{ParameterCounts, parameter_counts};
use super::experts::ExpertLayout;
use super::layer::MoeTimes;
use crate::Error;
use crate::extended::block::{BlockCost, block_cost};
use crate::extended::data_parallel::{DpCost, DpGroups, data_parallel_cost};
use crate::extended::device_memory::DeviceMemory;
use crate::extended::head::{EndCost, embedding_cost, head_cost};
pub use crate::extended::iteration::MoeBreakdown;
use crate::extended::iteration::{
    Breakdown, ExtendedEvaluation, OPTIMIZER_BYTES_PER_PARAMETER, Slots, fp8_weight_cast_s,
};
use crate::extended::layout::Layout;
use crate::extended::memory::{
    ExpertStates, MemoryEstimate, Stage, first_stage_in_flight, peak_device_gb, peak_of_stages, second_stage_in_flight,
};
use crate::extended::muon::{RankBlocks, muon_step_s};
use crate::extended::options::ExtendedOptions;
use crate::extended::pipeline::{StageSplitRule, bubble_slots, exposed_messages_s, message_s, split, stage_blocks};
use crate::extended::pricing::{Pass, Pricing};
use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;

/// The costs that depend only on the block-level layout (the evaluator caches them): the parts
/// its block shape shares by every expert layout, and the MoE block of one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeParts {
    shared: SharedParts,
    moe: MoeBlockCost,
}

/// The parts of a block shape that read no expert degrees: the dense block, the ends, the
/// multi-token-prediction projection and the parameter counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedParts {
    dense: BlockCost,
    embedding: EndCost,
    head: EndCost,
    mtp_projection: Pass,
    /// Whole-model parameter counts (they depend on the workload alone).
    counts: ParameterCounts,
}

/// What the assembly reads of one configuration's parts: its block shape's [`SharedParts`] and
/// its expert layout's MoE block, each where it is held (a search caches the shared parts once
/// per block shape and each MoE block once: a view joins them instead of a copy of the whole
/// parts per block shape and expert layout).
#[derive(Debug, Clone, Copy)]
pub struct MoePartsView<'a> {
    pub shared: &'a SharedParts,
    pub moe: &'a MoeBlockCost,
}

/// Prices the parts of `w` (with experts `m`) under `layout` and its expert layout.
pub fn moe_parts(w: &Workload, m: &MoeShape, layout: &Layout, el: &ExpertLayout, p: &Pricing) -> MoeParts {
    MoeParts { shared: shared_parts(w, layout, p), moe: moe_block_cost(w, m, layout, el, p) }
}

/// The [`SharedParts`] of `w` under `layout` (those of [`moe_parts`] under any expert layout).
pub fn shared_parts(w: &Workload, layout: &Layout, p: &Pricing) -> SharedParts {
    let proj = if w.mtp_layers > 0 {
        let h = w.hidden as f64;
        p.weight_linear(layout.local_tokens(w), 2.0 * h, h / layout.tp as f64)
    } else {
        Pass::default()
    };
    SharedParts {
        dense: block_cost(w, layout, p),
        embedding: embedding_cost(w, layout, p),
        head: head_cost(w, layout, p),
        mtp_projection: proj,
        counts: parameter_counts(w),
    }
}

/// [`moe_parts`] for another expert layout `el` of a block-level layout whose parts `same` were
/// priced under other expert degrees: only the MoE block is priced again; the parts that do not
/// read the expert degrees (dense block, embedding, head, MTP projection, counts) are `same`'s.
/// Equal to `moe_parts(w, m, layout, el, p)` (test `shared_parts_equal_fresh_ones`): what lets a
/// search price each block shape's dense parts once for all its expert layouts.
pub fn moe_parts_sharing(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    el: &ExpertLayout,
    p: &Pricing,
    same: &MoeParts,
) -> MoeParts {
    same.with_block(moe_block_cost(w, m, layout, el, p))
}

impl MoeParts {
    /// These parts with another expert layout's MoE block (the other parts do not read the expert
    /// degrees, [`moe_parts_sharing`]).
    pub fn with_block(&self, moe: MoeBlockCost) -> MoeParts {
        MoeParts { moe, ..*self }
    }

    /// These parts as the assembly reads them.
    pub fn view(&self) -> MoePartsView<'_> {
        MoePartsView { shared: &self.shared, moe: &self.moe }
    }

    /// The shared parts and the MoE block of a view, as owned parts.
    pub fn of(view: MoePartsView) -> MoeParts {
        MoeParts { shared: *view.shared, moe: *view.moe }
    }
}

/// What one device holds.
struct Device {
    name: &'static str,
    dense: u64,
    moe: u64,
    /// Embedding, heads and multi-token-prediction projections.
    ends: Vec<EndCost>,
    /// Micro-batches in flight at the memory peak.
    in_flight: f64,
    /// Whether it computes the logits and the loss.
    head: bool,
}

impl Device {
    fn blocks(&self) -> u64 {
        self.dense + self.moe
    }
}

/// The multi-token-prediction modules on the device with the last stage: (dense blocks, MoE
/// blocks, ends). Each module is a block of the last block's kind, a `2h × h` projection and
/// another pass through the output head, whose weights are the main model's (DeepSeek-V3
/// technical report §2.2: the MTP modules share the embedding and the output head with the main
/// model; §3.2.3: they sit on the same rank, sharing parameters and gradients), so the extra head
/// costs time and no parameters.
fn mtp_modules(w: &Workload, m: &MoeShape, layout: &Layout, parts: MoePartsView) -> (u64, u64, Vec<EndCost>) {
    let mtp = w.mtp_layers;
    let h = w.hidden as f64;
    let projection = EndCost {
        fwd: parts.shared.mtp_projection,
        bwd: parts.shared.mtp_projection.times(2.0),
        parameters: 2.0 * h * h / layout.tp as f64,
        activation_bytes: 0.0,
    };
    let shared_head = EndCost { parameters: 0.0, ..parts.shared.head };
    let mut ends = Vec::with_capacity(2 * mtp as usize);
    for _ in 0..mtp {
        ends.extend([shared_head, projection]);
    }
    if m.is_moe_block(w.layers - 1) { (0, mtp, ends) } else { (mtp, 0, ends) }
}

/// The devices of one pipeline (first, last, a middle one; or the only one) with what each holds:
/// dense and MoE blocks, the ends (embedding, head, MTP blocks and projections on the last), the
/// micro-batches in flight at the memory peak.
fn moe_devices(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    v: u64,
    rule: StageSplitRule,
    parts: MoePartsView,
) -> Vec<Device> {
    let stages = split(w.layers, layout.pp, rule);
    let in_first = first_stage_in_flight(layout.microbatches(), layout.pp, v);
    let SharedParts { embedding, head, .. } = *parts.shared;
    let count_moe = |start: u64, n: u64| (start..start + n).filter(|&i| m.is_moe_block(i)).count() as u64;
    // The last stage also holds the multi-token-prediction modules.
    let (mtp_dense, mtp_moe, mtp_ends) = mtp_modules(w, m, layout, parts);
    let mtp_device = |name, dense_n: u64, moe_n: u64, own: &[EndCost], in_flight| {
        let mut ends = Vec::with_capacity(own.len() + mtp_ends.len());
        ends.extend_from_slice(own);
        ends.extend_from_slice(&mtp_ends);
        Device { name, dense: dense_n + mtp_dense, moe: moe_n + mtp_moe, ends, in_flight, head: true }
    };
    if layout.pp == 1 {
        let n_moe = m.moe_blocks(w.layers);
        vec![mtp_device("only", w.layers - n_moe, n_moe, &[embedding, head], 1.0)]
    } else {
        let first_moe = count_moe(0, stages.first);
        let last_moe = count_moe(w.layers - stages.last, stages.last);
        let mid_moe = count_moe(stages.first, stages.most);
        let mut list = Vec::with_capacity(3);
        list.extend([
            Device {
                name: "first",
                dense: stages.first - first_moe,
                moe: first_moe,
                ends: vec![embedding],
                in_flight: in_first,
                head: false,
            },
            mtp_device("last", stages.last - last_moe, last_moe, &[head], 1.0),
        ]);
        if layout.pp > 2 {
            // The second stage: one micro-batch fewer in flight than the first.
            let in_flight = second_stage_in_flight(in_first);
            list.push(Device {
                name: "middle",
                dense: stages.most - mid_moe,
                moe: mid_moe,
                ends: vec![],
                in_flight,
                head: false,
            });
        }
        list
    }
}

/// One rank of a DualPipe pipeline as memory sees it: what it holds, with `device.in_flight` the
/// micro-batches in flight per block on average, and the block-micro-batches of activations each
/// kind of block keeps at the peak (`dense_kept`, `moe_kept`: the two stages' blocks, each times
/// its own direction's micro-batches in flight).
struct DualRank {
    device: Device,
    dense_kept: f64,
    moe_kept: f64,
}

/// Micro-batches in flight at the memory peak on DualPipe's rank with half-rank `h` (`min(r,
/// pp − 1 − r)`), one direction's each: `(pp − h, h + 1)` for the stage it runs first in its
/// direction (`h`) and the one it runs late (`pp − 1 − h`), each at most the direction's
/// `nmb/2` micro-batches. The sum is `pp + 1`, DeepSeek-V3 technical report (arXiv 2412.19437)
/// Table 2 ("activation PP + 1"); the split is the schedule's (github.com/deepseek-ai/DualPipe,
/// `dualpipe.py`: half-rank `h` first runs `2(pp/2 − h − 1)` forwards of its first direction, then
/// `h + 1` pairs of forwards of both, then steady forward-and-backward pairs that keep the count):
/// like 1F1B, a direction's first stage holds `pp` micro-batches and its last one.
pub fn dual_pipe_in_flight(pp: u64, h: u64, microbatches: u64) -> (f64, f64) {
    let per_direction = microbatches as f64 / 2.0;
    (((pp - h) as f64).min(per_direction), ((h + 1) as f64).min(per_direction))
}

/// The ranks of a DualPipe pipeline as memory sees them ([`super::MoeOptions::dual_pipe`]): rank
/// `r` holds stage `r` and stage `pp − 1 − r` (the first rank the embedding, the head and the MTP
/// modules too: DeepSeek-V3 report §3.2.3), with [`dual_pipe_in_flight`] micro-batches of each
/// stage's activations in flight (the first rank: `pp` of stage 0 with the embedding, one of the
/// last stage with the head and the MTP modules). `None` when `pp` is odd or 1 (1F1B then).
fn dual_pipe_devices(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    rule: StageSplitRule,
    parts: MoePartsView,
) -> Option<Vec<DualRank>> {
    let pp = layout.pp;
    if pp < 2 || pp % 2 == 1 {
        return None;
    }
    let count_moe = |(start, n): (u64, u64)| (start..start + n).filter(|&i| m.is_moe_block(i)).count() as u64;
    let (mtp_dense, mtp_moe, mtp_ends) = mtp_modules(w, m, layout, parts);
    Some(
        (0..pp / 2)
            .map(|r| {
                let (early, late) = dual_pipe_in_flight(pp, r, layout.microbatches());
                let (a, b) = (stage_blocks(w.layers, pp, rule, r), stage_blocks(w.layers, pp, rule, pp - 1 - r));
                let (moe_a, mut moe_b) = (count_moe(a), count_moe(b));
                let (dense_a, mut dense_b) = (a.1 - moe_a, b.1 - moe_b);
                let mut ends = Vec::new();
                if r == 0 {
                    // The last stage (the late one here) carries the head and the MTP modules.
                    (dense_b, moe_b) = (dense_b + mtp_dense, moe_b + mtp_moe);
                    let late_share = |e: &EndCost| EndCost { activation_bytes: e.activation_bytes * late, ..*e };
                    ends.push(EndCost {
                        activation_bytes: parts.shared.embedding.activation_bytes * early,
                        ..parts.shared.embedding
                    });
                    ends.push(late_share(&parts.shared.head));
                    ends.extend(mtp_ends.iter().map(late_share));
                }
                let (dense, moe) = (dense_a + dense_b, moe_a + moe_b);
                let dense_kept = early * dense_a as f64 + late * dense_b as f64;
                let moe_kept = early * moe_a as f64 + late * moe_b as f64;
                // Per block on average; the ends' activations carry their own counts (÷ this).
                let in_flight = (dense_kept + moe_kept) / (dense + moe).max(1) as f64;
                for e in &mut ends {
                    e.activation_bytes /= in_flight.max(f64::MIN_POSITIVE);
                }
                let (name, head) = if r == 0 { ("first", true) } else { ("middle", false) };
                DualRank { device: Device { name, dense, moe, ends, in_flight, head }, dense_kept, moe_kept }
            })
            .collect(),
    )
}

/// DualPipe's pipeline bubble in micro-batch slots (DeepSeek-V3 technical report, arXiv
/// 2412.19437, Table 2: `(pp/2 − 1)·(F&B + B − 3W)` against 1F1B's `(pp − 1)·(F + B)`), for an even
/// `pp` of at least 2. A slot is `F + B`; the overlapped forward-and-backward pair `F&B` takes one
/// slot (its exchanges hidden: the MoE layer's overlap), the backward `B` two thirds of it and the
/// weight-gradient part `W` one third (a matmul's backward is twice its forward, half of it the
/// weight gradient): `(pp/2 − 1)·(1 + 2/3 − 1) = (pp/2 − 1)·2/3` slots (pp 16: 4.67 against 15).
pub fn dual_pipe_bubble_slots(pp: u64) -> f64 {
    (pp / 2).saturating_sub(1) as f64 * 2.0 / 3.0
}

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

/// The DualPipe ranks memory sees when the switch is on ([`dual_pipe_devices`]).
fn dual_ranks(w: &Workload, m: &MoeShape, layout: &Layout, p: &Pricing, parts: MoePartsView) -> Option<Vec<DualRank>> {
    if p.opts.moe.dual_pipe { dual_pipe_devices(w, m, layout, p.opts.stage_split, parts) } else { None }
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
/// `memory_estimate.device_gb`, the figure feasibility is judged on), without pricing the time;
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
        // The stages and arithmetic of [`memory_of`] ([`peak_device_gb`]), the parts not named.
        let dual = dual_ranks(self.w, self.m, &l, self.p, parts);
        let stages = memory_stages(&el, &self.devices, dual.as_deref(), parts);
        Ok(peak_device_gb(self.w, &l, self.p, &self.groups, stages))
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

    let message = message_s(w, layout, p);
    let messages = exposed_messages_s(message, v, busiest_slot);
    let slot = busiest_slot + messages;
    let dual = opts.moe.dual_pipe && v == 1 && layout.pp >= 2 && layout.pp % 2 == 0;
    let bubble = if dual { dual_pipe_bubble_slots(layout.pp) } else { bubble_slots(layout.pp, v) } * slot;
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
    let t = nmb_f * slot + bubble + dp.per_iteration_s + t_opt;

    let estimate = memory_of(w, m, layout, p, &groups, &el, &devices, parts);
    let memory = DeviceMemory::of(&estimate);

    let t_zero3 = nmb_f * dp.per_microbatch_s;
    // The logged statistics' host work (super::step_host) is priced for dense models only.
    let slots = Slots { t, microbatches: nmb_f, pass, t_opt, t_step_host: 0.0, t_zero3, dp, messages, bubble };
    let totals = slots.totals(&memory);
    let counts = parts.shared.counts;
    let recompute_s = busiest.dense as f64 * dense.recompute.time() + busiest.moe as f64 * moe.block.recompute.time();
    let breakdown = Breakdown {
        t_cp_comm_s: nmb_f * pass.cp_comm_s,
        t_recompute_s: nmb_f * recompute_s,
        t_optimizer_s: t_opt,
        t_step_host_s: 0.0,
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
            a2a_exposed_s: scale * times.a2a_exposed_s,
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
    use crate::SystemParams;
    use crate::extended::Hardware;
    use crate::extended::moe::experts::expert_choices;

    #[test]
    fn dual_pipe_bubble_by_hand() {
        // Table 2 with F = 1, B = 2, W = 1 (slot F + B = 3, F&B = 3): (pp/2 − 1)(3 + 2 − 3) = 2 per
        // pair of ranks beyond the first, in slots of 3: pp 16 → 7·2/3; 1F1B's (pp − 1)(F + B) = 15.
        assert!((dual_pipe_bubble_slots(16) - 7.0 * 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(dual_pipe_bubble_slots(2), 0.0);
        assert!((dual_pipe_bubble_slots(8) - 2.0).abs() < 1e-12);
        assert!(dual_pipe_bubble_slots(16) < bubble_slots(16, 1));
    }

    #[test]
    fn dual_pipe_in_flight_by_hand() {
        // PP 16, 120 micro-batches (60 per direction): half-rank 0 holds 16 of its first stage and
        // 1 of its last, half-rank 7 (the middle) 9 and 8; always PP + 1 = 17 (Table 2).
        assert_eq!(dual_pipe_in_flight(16, 0, 120), (16.0, 1.0));
        assert_eq!(dual_pipe_in_flight(16, 7, 120), (9.0, 8.0));
        for h in 0..8 {
            let (a, b) = dual_pipe_in_flight(16, h, 120);
            assert_eq!(a + b, 17.0);
        }
        // Few micro-batches: 6 in all, 3 per direction.
        assert_eq!(dual_pipe_in_flight(16, 0, 6), (3.0, 1.0));
        assert_eq!(dual_pipe_in_flight(16, 7, 6), (3.0, 3.0));
    }

    #[test]
    fn shared_parts_equal_fresh_ones() {
        // DeepSeek-V3 (MLA, MTP, dense first blocks) under several block shapes and every expert
        // layout: the parts shared from the first layout equal the ones priced afresh.
        let w = Workload::from_catalog(crate::catalog::find_model("deepseek-v3").unwrap()).unwrap();
        let m = w.moe.unwrap();
        let hw = Hardware::from_params(&SystemParams::h200().with_nvlink_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        for (tp, pp, dp, mbs) in [(1, 4, 64, 1), (2, 8, 16, 2), (4, 2, 32, 1), (8, 16, 8, 4)] {
            let layout = Layout::placed(tp, 1, pp, dp, mbs, dp * mbs * 8, 8);
            let choices = expert_choices(&layout, &m, None, None);
            assert!(choices.len() > 1, "{choices:?}");
            let first = |(ep, etp): (u64, u64)| {
                let l = layout.with_experts(ep, etp);
                (l, ExpertLayout::fold(&l, &m, ep, etp).unwrap())
            };
            let (l0, e0) = first(choices[0]);
            let same = moe_parts(&w, &m, &l0, &e0, &p);
            for &c in &choices[1..] {
                let (l, el) = first(c);
                assert_eq!(moe_parts_sharing(&w, &m, &l, &el, &p, &same), moe_parts(&w, &m, &l, &el, &p), "{c:?}");
            }
        }
    }
}
