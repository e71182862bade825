//! One iteration of one configuration in extended mode (the totals stage's assembly for dense
//! models, whose parts the MoE assembly in [`super::moe::evaluate`] shares): the evaluation's
//! result shape ([`ExtendedEvaluation`], [`Breakdown`]) and the iteration's time from the priced
//! block and end costs.
//!
//! Iteration time: `t = (nmb + (pp − 1)/v) · t_slot + t_dp + t_opt`, where the slot is the
//! busiest device's work for one micro-batch (its blocks' forward, backward and recomputation, the
//! embedding or the head, its exposed ZeRO-3 collectives) plus its stage messages, `t_dp` the
//! once-per-iteration data-parallel collectives not hidden by compute, `t_opt` the optimizer step
//! (memory-bound).
//!
//! How the reference's [`Totals`] fields are filled (they still add up to `t`):
//! `t_comp` = matrix work (matmuls and attention, with recomputation); `t_mem` = exposed
//! memory-bound time (element-wise work, memory-bound matmuls, the optimizer step); `t_tp_comm` =
//! exposed tensor- **and context-**parallel communication; `t_ep_comm` = the exposed expert-parallel
//! all-to-all of MoE blocks (dispatch and combine); `t_dp_comm` = exposed data-parallel
//! communication (ZeRO-3 per micro-batch plus per iteration); `t_pp_comm` = stage messages;
//! `t_bubble` = the pipeline bubble; `flops_per_gpu` = hardware FLOPs executed (causal, with
//! recomputation); `mem` = the device-level memory (nvidia-smi's figure) of the stage with the
//! most ([`super::memory`]), `wts_mem`/`wts_grad_mem`/`wts_optimizer_states_mem`/`acts_mem` its
//! parts (`acts_mem` holds the activations, logits and the overheads
//! [`Breakdown::overhead_gb`], so the four add up to `mem`); the named parts and the allocated
//! and reserved figures are in [`ExtendedEvaluation::memory_estimate`].

use super::block::{BlockCost, operations};
use super::data_parallel::{DpCollectives, DpCost, DpGroups, dp_collectives};
use super::device_memory::{DeviceMemory, DeviceMemoryPart};
use super::hardware::Hardware;
use super::head::{EndCost, embedding_cost, head_cost};
use super::layout::Layout;
use super::memory::{MemoryEstimate, peak_memory};
use super::moe::counts::ParameterCounts;
use super::moe::experts::ExpertLayout;
use super::moe::layer::{MoeTimePart, MoeTimes};
use super::muon::{RankBlocks, muon_step_s};
use super::options::ExtendedOptions;
use super::pipeline::{StageSplit, bubble_s, exposed_messages_s, message_s};
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::Error;
use crate::vocab::{MemoryPart, Outcome, Totals};

/// Bytes of HBM traffic per locally updated parameter in the optimizer step: read the FP32
/// gradient, master weight and two moments (16 B), write master and moments (12 B) and the 16-bit
/// weight (2 B).
pub const OPTIMIZER_BYTES_PER_PARAMETER: f64 = 30.0;

/// What extended mode adds to the reference's totals.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Breakdown {
    /// Exposed context-parallel communication, part of `t_tp_comm` [s].
    pub t_cp_comm_s: f64,
    /// Recomputation, part of `t_comp`/`t_mem`/`t_tp_comm` [s].
    pub t_recompute_s: f64,
    /// Optimizer step, part of `t_mem` [s].
    pub t_optimizer_s: f64,
    /// Per-step host work of the statistics the run logs (Megatron-LM's zero count and parameter
    /// norm, [`super::step_host`]), part of `t_mem` [s].
    pub t_step_host_s: f64,
    /// The layers' Python that launches no kernel on the busiest device over the iteration
    /// (forward and recomputation, [`super::layer_python`]): with the kernels' issue time, the
    /// floor of a host-bound pass, then part of `t_mem`; hidden behind GPU work otherwise [s].
    pub t_layer_python_s: f64,
    /// ZeRO-2/3 collectives exposed per micro-batch (all micro-batches), part of `t_dp_comm` [s].
    pub t_zero3_s: f64,
    /// Allocator fragmentation, CUDA context and NCCL buffers (device − allocated), part of `mem` [GB].
    pub overhead_gb: f64,
    /// Micro-batches per iteration.
    pub microbatches: u64,
    /// Blocks per device.
    pub stages: StageSplit,
    /// Parameters of the whole model [count].
    pub parameters: f64,
    /// Stage-to-stage message time [s].
    pub message_s: f64,
    /// Which device sets the slot: `first`, `last` or `middle` stage.
    pub critical: &'static str,
    /// Hardware FLOP rate of the busiest device [TFLOP/s].
    pub achieved_tflops: f64,
    /// One block's forward pass on one micro-batch: hardware FLOPs over its time, tensor- and
    /// context-parallel communication inside included [TFLOP/s].
    pub block_fwd_tflops: f64,
    /// The same for its backward pass with recomputation [TFLOP/s].
    pub block_bwd_tflops: f64,
}

impl Breakdown {
    /// The host parts with their values [s], in [`HostPart::ALL`] order: the one list the CLI, its
    /// JSON and the page show.
    pub fn host_parts(&self) -> [(HostPart, f64); HostPart::ALL.len()] {
        HostPart::ALL.map(|p| (p, p.of(self)))
    }
}

/// Host (CPU) time of extended mode's iteration that its [`Breakdown`] names. Not a
/// [`crate::vocab::TimePart`]: the time parts add up to the iteration, and each host part lies
/// inside one of them (exposed memory), so listing both as parts would count it twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostPart {
    /// [`Breakdown::t_step_host_s`]: the logged statistics' work once per step.
    StepHost,
    /// [`Breakdown::t_layer_python_s`]: the layers' Python that launches no kernel.
    LayerPython,
}

impl HostPart {
    /// All host parts, in the order they are shown.
    pub const ALL: [HostPart; 2] = [HostPart::StepHost, HostPart::LayerPython];

    /// Short machine key (`step_host`, `layer_python`), as in the estimate's JSON `time_s`.
    pub fn key(self) -> &'static str {
        match self {
            HostPart::StepHost => "step_host",
            HostPart::LayerPython => "layer_python",
        }
    }

    /// Label for table rows (without the unit).
    pub fn label(self) -> &'static str {
        match self {
            HostPart::StepHost => "logged statistics, host",
            HostPart::LayerPython => "layers' Python, host",
        }
    }

    /// What the part holds, where it is counted and its sources, in one line (tooltips, notes).
    pub fn description(self) -> &'static str {
        match self {
            HostPart::StepHost => {
                "Megatron-LM's --log-num-zeros-in-grad and --log-params-norm once per step: PyTorch calls and synced all-reduces (counted from NVIDIA/Megatron-LM d98e8a6); part of exposed memory"
            }
            HostPart::LayerPython => {
                "Megatron-Core layers' Python that launches no kernel on the busiest device over the step (module calls and Transformer Engine's per-linear Python: NVIDIA/Megatron-LM d98e8a6, pytorch/pytorch #50431, TransformerEngine #2053); part of exposed memory where a pass is host-bound, hidden behind GPU work otherwise"
            }
        }
    }

    /// Where the part is counted, in a few words (a table's note beside [`Self::description`] as
    /// its tooltip).
    pub fn counted_in(self) -> &'static str {
        match self {
            HostPart::StepHost => "part of exposed memory",
            HostPart::LayerPython => {
                "part of exposed memory where a pass is host-bound; hidden behind GPU work otherwise"
            }
        }
    }

    /// This part of `b` [s].
    pub fn of(self, b: &Breakdown) -> f64 {
        match self {
            HostPart::StepHost => b.t_step_host_s,
            HostPart::LayerPython => b.t_layer_python_s,
        }
    }
}

/// What Mixture-of-Experts adds to an evaluation (busiest device, one iteration).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct MoeBreakdown {
    /// The expert layout evaluated (degrees, expert data parallelism, fast-domain shares).
    pub experts: ExpertLayout,
    /// MoE blocks on the busiest device.
    pub moe_blocks: u64,
    /// Dense blocks on the busiest device.
    pub dense_blocks: u64,
    /// Tokens per local expert per micro-batch on the busiest EP rank.
    pub tokens_per_expert: f64,
    /// Fraction of token-expert assignments dropped (capacity factor) [0–1].
    pub dropped_fraction: f64,
    /// MoE time parts of the busiest device over the iteration (forward + backward, without
    /// recomputation) [s]: router, experts, shared experts, element-wise, dispatch/combine as
    /// priced, and its exposed part; hidden = `a2a_s − a2a_exposed_s`.
    pub times: MoeTimes,
    /// Routed-expert weights on the device with the most memory [GB].
    pub expert_weights_gb: f64,
    /// Their gradients [GB].
    pub expert_gradients_gb: f64,
    /// Their optimizer states [GB].
    pub expert_optimizer_gb: f64,
    /// Whole-model parameter counts (total, active, routed experts, MTP).
    pub parameters: ParameterCounts,
}

impl MoeBreakdown {
    /// The routed experts' memory columns with their values [GB] (weights, gradients, optimizer
    /// states; part of [`DeviceMemory`]'s), the one list the CLI and the page show.
    pub fn expert_parts(&self) -> [(DeviceMemoryPart, f64); 3] {
        [
            (DeviceMemoryPart::Part(MemoryPart::Weights), self.expert_weights_gb),
            (DeviceMemoryPart::Part(MemoryPart::Gradients), self.expert_gradients_gb),
            (DeviceMemoryPart::Part(MemoryPart::OptimizerStates), self.expert_optimizer_gb),
        ]
    }
}

/// Everything extended mode computes for one configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExtendedEvaluation {
    /// Iteration totals, in the reference's shape.
    pub totals: Totals,
    /// What extended mode adds.
    pub breakdown: Breakdown,
    /// Data-parallel exposure.
    pub dp: DpCost,
    /// Memory of the device with the most, in the reference's four columns plus overheads.
    pub memory: DeviceMemory,
    /// The same memory as named parts with the three measured figures.
    pub memory_estimate: MemoryEstimate,
    /// `G / t` [samples/s].
    pub throughput_samples_per_s: f64,
    /// `G · seq / t` [tokens/s].
    pub tokens_per_s: f64,
    /// Memory per device [GB] (= `totals.mem`).
    pub mem_gb: f64,
    /// `need ≤ hbm_capacity`, the need without the allocator's cache
    /// ([`MemoryEstimate::need_gb`]): the search's fit.
    pub feasible: bool,
    /// What Mixture-of-Experts blocks add (expert layout, MoE time and memory parts); `None` for
    /// dense models.
    pub moe: Option<MoeBreakdown>,
}

impl ExtendedEvaluation {
    /// An evaluation of `w` under `layout` from its iteration totals and memory estimate (dense and
    /// MoE models): rates from `totals.t`, feasibility of the need without the allocator's cache
    /// against `capacity_gb`. `memory` is
    /// `DeviceMemory::of(&memory_estimate)`, which the callers have already computed for the
    /// totals (computed once per configuration priced).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assembled(
        w: &Workload,
        layout: &Layout,
        capacity_gb: f64,
        totals: Totals,
        breakdown: Breakdown,
        dp: DpCost,
        memory: DeviceMemory,
        memory_estimate: MemoryEstimate,
        moe: Option<MoeBreakdown>,
    ) -> ExtendedEvaluation {
        debug_assert_eq!(memory, DeviceMemory::of(&memory_estimate));
        let g = layout.global_batch as f64;
        let mem = memory_estimate.device_gb;
        let need = memory_estimate.need_gb();
        ExtendedEvaluation {
            totals,
            breakdown,
            dp,
            memory,
            memory_estimate,
            throughput_samples_per_s: g / totals.t,
            tokens_per_s: g * w.seq_len as f64 / totals.t,
            mem_gb: mem,
            feasible: need <= capacity_gb,
            moe,
        }
    }

    /// The headline numbers in the reference's [`Outcome`] shape.
    pub fn outcome(&self) -> Outcome {
        Outcome {
            throughput_samples_per_s: self.throughput_samples_per_s,
            mem_gb: self.mem_gb,
            need_gb: self.memory_estimate.need_gb(),
            feasible: self.feasible,
            totals: self.totals,
        }
    }

    /// The MoE time parts of the busiest device over the iteration [s], in
    /// [`MoeTimePart::ALL`]'s order; none for a dense model, which has no MoE part to show.
    pub fn moe_times(&self) -> Vec<(MoeTimePart, f64)> {
        self.moe.iter().flat_map(|b| MoeTimePart::ALL.map(|p| (p, p.of(&b.times)))).collect()
    }

    /// The MoE figures shown beside [`ExtendedEvaluation::moe_times`], each a name and its value
    /// as the CLI's estimate writes it: the routed experts' memory parts [GB, 2 decimals]
    /// ([`MoeBreakdown::expert_parts`]), the MoE and dense blocks of the busiest device, tokens per
    /// local expert per micro-batch, the dropped share [%, 1 decimal]; none for a dense model.
    pub fn moe_figures(&self) -> Vec<(String, String)> {
        let Some(b) = &self.moe else { return Vec::new() };
        let mut figures: Vec<(String, String)> =
            b.expert_parts().iter().map(|(p, gb)| (format!("expert {} [GB]", p.key()), format!("{gb:.2}"))).collect();
        figures.extend([
            ("MoE / dense blocks".to_string(), format!("{} / {}", b.moe_blocks, b.dense_blocks)),
            ("tokens per expert".to_string(), format!("{:.0}", b.tokens_per_expert)),
            ("dropped [%]".to_string(), format!("{:.1}", 100.0 * b.dropped_fraction)),
        ]);
        figures
    }
}

/// The costs that depend only on the block-level layout (cached by the evaluator).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Parts {
    /// One block.
    pub block: BlockCost,
    /// The embedding (first stage).
    pub embedding: EndCost,
    /// The head and loss (last stage).
    pub head: EndCost,
    /// The issue time of one block's backward kernels, with Megatron-FSDP's host calls
    /// ([`super::fsdp_host::unit_host_s`]) [s] (its floor before the per-parameter hooks of
    /// [`super::step_host::backward_hooks_host_s`]).
    pub bwd_issue_s: f64,
    /// One block's backward work before any issue floor (the sums of its operations).
    pub bwd_work: Pass,
}

pub(crate) fn parts(w: &Workload, layout: &Layout, p: &Pricing) -> Parts {
    // `block_cost`, with the backward's kernel count kept.
    let host_s = p.host_time_per_operation_s();
    let ops = operations(w, layout, p);
    let (sums, kernels) = BlockCost::sums(&ops, p.opts.recompute);
    let (python_s, bwd_host_s) = block_host_s(p);
    Parts {
        block: sums
            .issue_bounded_layer(kernels, host_s, python_s)
            .offloaded(super::activation_offload::offload_of(&ops, p)),
        embedding: embedding_cost(w, layout, p),
        head: head_cost(w, layout, p),
        bwd_issue_s: kernels[1] * host_s + bwd_host_s,
        bwd_work: sums.bwd,
    }
}

/// The host time a dense block's passes hold beyond their kernels' issues per micro-batch [s]:
/// `[forward, recomputation]` for [`BlockCost::issue_bounded_layer`] (the layer's Python,
/// [`super::layer_python::dense_layer_python_s`], plus Megatron-FSDP's forward calls) and the
/// backward's (Megatron-FSDP's backward calls, [`super::fsdp_host::unit_host_s`]; zero
/// otherwise); with RoPE unfused each adds its further launches
/// ([`super::unfused_rope::layer_host_s`]). The evaluator and the fits' plan ([`super::timing`]) both read it.
pub(crate) fn block_host_s(p: &Pricing) -> ([f64; 2], f64) {
    let [fsdp_fwd, fsdp_bwd] = super::fsdp_host::unit_host_s(p, super::step_host::TENSORS_PER_BLOCK);
    let [python_fwd, python_recompute] = super::layer_python::dense_layer_python_s(p.hw, p.opts);
    let [rope_fwd, rope_again, rope_bwd] = super::unfused_rope::layer_host_s(p);
    ([python_fwd + fsdp_fwd + rope_fwd, python_recompute + rope_again], fsdp_bwd + rope_bwd)
}

/// `block` with its backward raised to at least the issue time of its kernels (`bwd_issue_s`)
/// plus the host time of the stack's per-parameter backward hooks
/// ([`super::step_host::backward_hooks_host_s`]): unchanged where the pass is not host-bound.
/// Without gradient-accumulation fusion the backward's work (`bwd_work`, before the floor) also
/// moves the 16-bit weight gradients' bytes ([`super::step_host::unfused_wgrad_bytes`]), exposed
/// memory time under the same floor.
fn with_backward_hooks(block: BlockCost, bwd_issue_s: f64, bwd_work: Pass, p: &Pricing) -> BlockCost {
    let hooks = super::step_host::backward_hooks_host_s(p);
    let bytes = super::step_host::unfused_wgrad_bytes(p, block.linear_parameters);
    if bytes > 0.0 {
        let work = Pass { memory_s: bwd_work.memory_s + p.traffic(bytes), ..bwd_work };
        return BlockCost { bwd: super::block::issue_bound(work, 1.0, bwd_issue_s + hooks), ..block };
    }
    if hooks <= 0.0 {
        return block;
    }
    BlockCost { bwd: super::block::issue_bound(block.bwd, 1.0, bwd_issue_s + hooks), ..block }
}

/// Transformer Engine's FP8 weight casts of one iteration [s]: each linear layer's weight is cast
/// once (at the first micro-batch) into an FP8 copy and an FP8 transpose, kept for the others —
/// read 2 B, write 2 × 1 B per parameter. Zero outside FP8 or with torchao (priced per
/// micro-batch among the block's operations).
pub(crate) fn fp8_weight_cast_s(p: &Pricing, linear_parameters: f64) -> f64 {
    let fp8 = p.hw.operand_bytes < p.hw.element_bytes;
    if !fp8 || !p.opts.fp8_recipe.is_transformer_engine() {
        return 0.0;
    }
    p.traffic(linear_parameters * (p.hw.element_bytes + 2.0 * super::ops::FP8_CAST_BYTES))
}

pub(crate) fn check(w: &Workload, hw: &Hardware, layout: &Layout, opts: &ExtendedOptions) -> Result<(), Error> {
    w.validate()?;
    opts.validate()?;
    check_layout(w, hw, layout, opts)
}

/// The checks of a layout for a workload and switches already validated (the evaluator's).
pub(crate) fn check_layout(w: &Workload, hw: &Hardware, layout: &Layout, opts: &ExtendedOptions) -> Result<(), Error> {
    layout.validate(w, hw.domain_size(), opts.uneven_stages)?;
    super::context_parallel::check(w, layout, opts)?;
    DpGroups::on(layout, opts, hw)?;
    Ok(())
}

/// One device's per-micro-batch work.
#[derive(Debug, Clone, Copy)]
struct Device {
    name: &'static str,
    blocks: u64,
    pass: Pass,
    sharded_s: f64,
    /// The head's stage's logits exchange per micro-batch [s] (nanotron's loss on the next stage).
    exchange_s: f64,
    flops: f64,
}

/// The iteration's time and its parts (no memory): the last stage of the time model, from the
/// priced block and end costs and what the layout fixes (data-parallel groups, stage split, the
/// stage-to-stage message time [s], the data-parallel collectives of a device of `blocks` blocks
/// and `parameters` parameters, `collectives(blocks, parameters)`). [`assemble`] and a fit's re-pricing ([`super::timing`]) both
/// end here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    busiest: Device,
    /// Exposed stage messages per slot [s].
    messages: f64,
    /// Pipeline bubble [s].
    bubble: f64,
    dp: DpCost,
    /// Optimizer step with Transformer Engine's FP8 weight casts [s].
    t_opt: f64,
    /// Per-step host work of the logged statistics ([`super::step_host`]) [s].
    t_step_host: f64,
    /// Iteration time [s].
    pub t: f64,
}

pub(crate) fn timing(
    layout: &Layout,
    p: &Pricing,
    parts: &Parts,
    groups: &DpGroups,
    stages: StageSplit,
    (message, head_exchange, tied_sync): (f64, f64, f64),
    collectives: &mut dyn FnMut(u64, f64, f64) -> DpCollectives,
) -> Timing {
    let opts = p.opts;
    let Parts { block, embedding, head, bwd_issue_s, bwd_work } = *parts;
    let block = with_backward_hooks(block, bwd_issue_s, bwd_work, p);
    let nmb = layout.microbatches();
    let v = if layout.pp > 1 { opts.interleave } else { 1 };

    let block_pass = block.fwd + block.bwd + block.recompute;
    let optimizer_shard = if opts.sharding.shards_optimizer() { groups.shard as f64 } else { 1.0 };
    // The FP32 gradient accumulation of a stack that keeps a separate buffer (nanotron): its
    // per-micro-batch sums join the device's pass, its per-step passes the optimizer step.
    let accumulation = |blocks: u64, params: f64, first: bool, last: bool| {
        let untied_head = head.parameters > 0.0;
        let tensors = super::fp32_accumulation::device_tensors(blocks, first, last, untied_head);
        let holding = super::fp32_accumulation::Holding {
            tensors,
            parameters: params,
            optimizer_parameters: params / optimizer_shard,
        };
        super::fp32_accumulation::fp32_accumulation(p, holding)
    };
    // The Hugging Face Trainer's own step (autocast's casts per micro-batch; its unfused step in
    // place of the fused step's traffic), on `tensors` parameter tensors holding `params`.
    let trainer = |tensors: f64, params: f64| {
        let optimizer_parameters = params / optimizer_shard;
        super::stack_eager::trainer_step(
            p,
            super::fp32_accumulation::Holding { tensors, parameters: params, optimizer_parameters },
        )
    };
    let mut device = |name, blocks: u64, ends: &[EndCost]| -> Device {
        let mut pass = block_pass.times(blocks as f64);
        let mut params = blocks as f64 * block.parameters;
        for e in ends {
            pass += e.fwd + e.bwd;
            params += e.parameters;
        }
        let (first, last) = (name == "first", name == "last" || (name == "first" && layout.pp == 1));
        pass.memory_s += accumulation(blocks, params, first, last).per_microbatch_s;
        pass.memory_s += trainer(0.0, params).map_or(0.0, |s| s.per_microbatch_s);
        // Only ZeRO-2 and ZeRO-3 move data every micro-batch (the other shardings'
        // per-micro-batch part is 0).
        let sharded_s = if opts.sharding.shards_gradients() {
            collectives(blocks, params, blocks as f64 * block.linear_parameters)
                .exposed(block.fwd_s(), block.bwd_s())
                .per_microbatch_s
        } else {
            0.0
        };
        let exchange_s = if name == "last" { head_exchange } else { 0.0 };
        Device { name, blocks, pass, sharded_s, exchange_s, flops: pass.tflop }
    };
    let (devices, count) = if layout.pp == 1 {
        let only = device("first", stages.first, &[embedding, head]);
        ([only; 3], 1)
    } else {
        let first = device("first", stages.first, &[embedding]);
        ([first, device("last", stages.last, &[head]), device("middle", stages.most, &[])], 3)
    };
    let work_of = |d: &Device| d.pass.time() + d.sharded_s;
    let slot_of = |d: &Device| work_of(d) + d.exchange_s;
    let busiest = *devices[..count].iter().max_by(|a, b| slot_of(a).total_cmp(&slot_of(b))).unwrap_or(&devices[0]);

    let messages = exposed_messages_s(message, v, work_of(&busiest)) + busiest.exchange_s;
    let slot = work_of(&busiest) + messages;
    let nmb_f = nmb as f64;
    let bubble = bubble_s(layout.pp, v, slot_of(&busiest), message);

    let params_busiest = busiest.blocks as f64 * block.parameters
        + match busiest.name {
            "first" if layout.pp == 1 => embedding.parameters + head.parameters,
            "first" => embedding.parameters,
            "last" => head.parameters,
            _ => 0.0,
        };
    let linear_busiest = busiest.blocks as f64 * block.linear_parameters;
    let dp = collectives(busiest.blocks, params_busiest, linear_busiest).exposed(block.fwd_s(), block.bwd_s());
    let (first, last) = (busiest.name == "first", busiest.name == "last" || layout.pp == 1);
    let tensors = super::step_host::stage_tensors(stages, layout.pp);
    let fused_step = p.traffic(params_busiest / optimizer_shard * OPTIMIZER_BYTES_PER_PARAMETER);
    let t_opt = trainer(tensors, params_busiest).map_or(fused_step, |s| s.per_step_s)
        + fp8_weight_cast_s(p, busiest.blocks as f64 * block.linear_parameters)
        + accumulation(busiest.blocks, params_busiest, first, last).per_step_s
        // nanotron's tied-embedding gradient sync, between the backward and the step.
        + tied_sync;

    // The logged statistics run on every rank between the backward and the next step, each ending
    // in a device sync: added whole, on the stage holding the most parameter tensors.
    let held = super::step_host::optimizer_tensors(
        tensors,
        super::fsdp_host::optimizer_shard(p, if opts.sharding.shards_optimizer() { groups.shard } else { 1 }),
        params_busiest,
        block.parameters,
    );
    let t_step_host = super::step_host::step_host_work(p, layout, held).total_s();

    let t = nmb_f * slot + bubble + dp.per_iteration_s + t_opt + t_step_host;
    Timing { busiest, messages, bubble, dp, t_opt, t_step_host, t }
}

pub(crate) fn assemble(w: &Workload, layout: &Layout, p: &Pricing, parts: &Parts) -> Result<ExtendedEvaluation, Error> {
    let opts = p.opts;
    let Parts { block, embedding, head, bwd_issue_s, bwd_work } = *parts;
    let block = with_backward_hooks(block, bwd_issue_s, bwd_work, p);
    let groups = DpGroups::on(layout, opts, p.hw)?;
    let stages = super::stack_nanotron::stage_split(w, layout.pp, opts);
    let message = message_s(w, layout, p);
    let head_exchange = super::stack_nanotron::head_exchange_s(w, layout, p);
    let tied_sync = super::stack_nanotron::tied_sync_s(w, layout, p);
    let mut collectives = |blocks, parameters, linear| dp_collectives(&groups, p, blocks, parameters, linear);
    let Timing { busiest, messages, bubble, dp, t_opt, t_step_host, t } =
        timing(layout, p, parts, &groups, stages, (message, head_exchange, tied_sync), &mut collectives);
    // Muon's Newton–Schulz work on the busiest device's matrices, part of the optimizer step.
    let muon = muon_step_s(w, layout, p, RankBlocks { dense: busiest.blocks as f64, moe: 0.0, experts: None });
    let (t_opt, t) = (t_opt + muon, t + muon);
    let nmb = layout.microbatches();
    let nmb_f = nmb as f64;

    // Memory: the peak over the stages, device level (what must fit in HBM).
    let estimate = peak_memory(w, layout, p, &block, &embedding, &head, &groups);
    let memory = DeviceMemory::of(&estimate);

    let pass = busiest.pass;
    let t_zero3 = nmb_f * busiest.sharded_s;
    let slots = Slots { t, microbatches: nmb_f, pass, t_opt, t_step_host, t_zero3, dp, messages, bubble };
    let totals = slots.totals(&memory);
    let parameters = w.layers as f64 * block.parameters * layout.tp as f64
        + (embedding.parameters + head.parameters) * layout.tp as f64;
    let breakdown = Breakdown {
        t_cp_comm_s: nmb_f * pass.cp_comm_s,
        t_recompute_s: nmb_f * busiest.blocks as f64 * block.recompute.time(),
        t_optimizer_s: t_opt,
        t_step_host_s: t_step_host,
        t_layer_python_s: nmb_f
            * busiest.blocks as f64
            * super::layer_python::dense_layer_python_s(p.hw, opts).iter().sum::<f64>(),
        t_zero3_s: t_zero3,
        overhead_gb: memory.overhead_gb,
        microbatches: nmb,
        stages,
        parameters,
        message_s: message,
        critical: busiest.name,
        achieved_tflops: nmb_f * busiest.flops / t,
        block_fwd_tflops: block.fwd.tflop / block.fwd.time(),
        block_bwd_tflops: (block.bwd + block.recompute).tflop / (block.bwd + block.recompute).time(),
    };
    Ok(ExtendedEvaluation::assembled(w, layout, p.hw.hbm_capacity_gb, totals, breakdown, dp, memory, estimate, None))
}

/// The iteration's time parts, from which [`Totals`] are formed (shared by dense and MoE models).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slots {
    /// Iteration time [s].
    pub t: f64,
    /// Micro-batches per iteration.
    pub microbatches: f64,
    /// The busiest device's work for one micro-batch.
    pub pass: Pass,
    /// Optimizer step [s].
    pub t_opt: f64,
    /// Per-step host work of the logged statistics [s].
    pub t_step_host: f64,
    /// ZeRO-3 collectives over the iteration [s].
    pub t_zero3: f64,
    /// Data-parallel exposure.
    pub dp: DpCost,
    /// Exposed stage messages per slot [s].
    pub messages: f64,
    /// Pipeline bubble [s].
    pub bubble: f64,
}

impl Slots {
    /// The totals in the reference's shape, with `memory` of the device with the most.
    pub fn totals(&self, memory: &DeviceMemory) -> Totals {
        let Slots { t, microbatches: n, pass, t_opt, t_step_host, t_zero3, dp, messages, bubble } = *self;
        let t_opt = t_opt + t_step_host;
        Totals {
            t,
            flops_per_gpu: n * pass.tflop,
            mem: memory.total(),
            t_comp: n * pass.compute_s,
            t_mem: n * pass.memory_s + t_opt,
            t_tp_comm: n * (pass.tp_comm_s + pass.cp_comm_s),
            t_dp_comm: t_zero3 + dp.per_iteration_s,
            t_pp_comm: n * messages,
            t_bubble: bubble,
            t_ep_comm: n * pass.ep_comm_s,
            comp_frac: n * pass.compute_s / t,
            tp_comm_frac: n * (pass.tp_comm_s + pass.cp_comm_s) / t,
            dp_comm_frac: (t_zero3 + dp.per_iteration_s) / t,
            pp_comm_frac: n * messages / t,
            bubble_frac: bubble / t,
            mem_frac: (n * pass.memory_s + t_opt) / t,
            wts_mem: memory.weights_gb,
            wts_grad_mem: memory.gradients_gb,
            wts_optimizer_states_mem: memory.optimizer_gb,
            acts_mem: memory.activations_gb + memory.overhead_gb,
        }
    }
}
