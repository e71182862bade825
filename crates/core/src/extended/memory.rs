//! Peak memory per device in extended mode, as named parts, per pipeline stage, in the three
//! figures people measure: PyTorch's peak *allocated* (`torch.cuda.max_memory_allocated`: live
//! tensors), peak *reserved* (`max_memory_reserved`: plus the caching allocator's
//! fragmentation) and the *device* figure nvidia-smi shows (plus the CUDA context and the
//! collective library's buffers). [`memory_estimate`] is the public entry point.
//!
//! The peak of a stage is taken at the end of its warm-up forwards, when the loss of the last
//! micro-batch in flight is computed: model states + every activation in flight + (on the stage
//! with the output head) the logits and loss of one micro-batch + ZeRO-3's gathered blocks. The
//! optimizer step's transients (fused multi-tensor Adam works in place) stay below that peak.
//! Stages differ (the first holds the most micro-batches, the last the logits; when the pipeline
//! split counts the embedding as a block, the second holds a block more than the first), so the
//! first, the second and the last stage are estimated and the largest kept. The three figures
//! are named by the vocabulary's [`MemoryKind`].
//!
//! Parts and their sources (bytes per parameter `P` on the device after tensor and pipeline
//! splits; `d` the ZeRO shard group):
//! * **weights, gradients, optimizer states** — bytes per parameter by precision, optimizer and
//!   sharding in [`super::model_states`] (Megatron-LM's distributed-optimizer table and ZeRO,
//!   Rajbhandari et al. 2020), plus ZeRO-3's gathered 16-bit weights live at the loss: FSDP's
//!   root unit (embedding, final norm, output head), which is never resharded after the forward
//!   (`fully_shard`'s documentation; FSDP1's post-forward keeps the root's parameters too), and
//!   the last block with `reshard_after_forward`, every block without;
//! * **gradients freed between steps**
//!   ([`grads_freed`](super::options::ExtendedOptions::grads_freed), PyTorch-native loops
//!   whose `zero_grad` sets `.grad` to `None`): with one micro-batch per step no gradient exists
//!   at the loss, and the backward's gradients take the place of the activations it frees, so
//!   only what the gradients exceed the activations and logits by counts at the peak;
//! * **FP8 weight copies** — Transformer Engine keeps an FP8 weight and its transpose (2 B per
//!   linear-layer parameter); with FP8 primary weights (`fp8_param_gather`, Megatron-Bridge's FP8
//!   recipes) the linear weights themselves are FP8 (1 B instead of 2) and only the transpose is
//!   kept beside them (1 B); torchao casts on the fly and keeps none;
//! * **activations** — the operations' kept bytes ([`super::ops`]) per recomputation policy, times
//!   the micro-batches in flight under 1F1B (`pp − i` on stage `i`; ×`(1 + (pp−1)/(pp·v))` with
//!   `v`-way interleaving, Korthikanti et al. 2022 §4.2.3), plus one block's full activations
//!   while it is recomputed under full (or torchtitan's operator-level) recomputation;
//! * **block inputs in FP32** — under 16-bit autocast over FP32 parameters the residual stream
//!   stays FP32 (embedding and residual additions are not autocast operations), so each kept
//!   block input is 4 B per element ([`fp32_params_autocast`](super::options::ExtendedOptions::fp32_params_autocast));
//! * **keys and values in the output** — a Hugging Face model whose `use_cache` stays on returns
//!   every block's keys and values, held by the output through the backward beside the
//!   checkpointed activations ([`outputs_hold_kv`](super::options::ExtendedOptions::outputs_hold_kv));
//! * **logits and loss** — one micro-batch's, by how the stack computes its cross-entropy, in
//!   [`super::loss_memory`] (10 B per logit eager on upcast logits; chunked, compiled, without
//!   the upcast, FP32 logits from the model);
//! * **allocator fragmentation** (reserved − allocated) — [`FRAGMENTATION`] of the allocated
//!   peak, fitted on the shipped memory runs and checked leave-one-source-out
//!   (`crate::validate::memory::fit_fragmentation`);
//! * **CUDA context** and **NCCL buffers** (device − reserved) — [`CUDA_CONTEXT_GB`] and
//!   [`NCCL_BUFFERS_GB`] per communicator of more than one device.

use super::block::BlockCost;
use super::data_parallel::DpGroups;
use super::head::EndCost;
use super::layout::Layout;
use super::loss_memory::loss_bytes;
use super::model_states::{model_states, muon_momentum_saving};
use super::options::{Fp8Recipe, Recompute, Sharding};
use super::pricing::Pricing;
use super::stack_tensors::{fp32_input_extra, kv_output_bytes};
use super::workload::Workload;
use crate::vocab::MemoryKind;

/// Caching-allocator fragmentation: reserved = allocated × (1 + this), fitted with
/// `crate::validate::memory::fit_fragmentation` (mean |error| on a 1 % grid) on the shipped
/// measured memory runs as `fmperf validate` reads them (every row with a figure that ran; only
/// the peak-reserved and nvidia-smi rows depend on it; test `extended_memory_runs`): 0.23.
/// Refitted without each source in turn it stays within 0.20–0.24, and the leave-one-source-out
/// memory mean |error| is 5.7 % (in-sample 5.2 %) over 101 rows. What a run shows with memory to
/// spare: the allocator gives it back before it fails, so the need a `no` verdict and a search's
/// fit are judged on leaves it out ([`MemoryEstimate::need_gb`]).
pub const FRAGMENTATION: f64 = 0.23;

/// CUDA context per process [GB]: kernel images and runtime state outside PyTorch's allocator
/// (PyTorch's CUDA semantics notes: several hundred MB, more with more kernels loaded).
pub const CUDA_CONTEXT_GB: f64 = 0.6;

/// NCCL buffers per communicator of more than one device [GB]: `NCCL_BUFFSIZE` = 4 MiB per
/// channel and peer, for send and receive, over up to 16–32 channels (NCCL's environment
/// documentation), plus cuBLAS workspaces shared by all.
pub const NCCL_BUFFERS_GB: f64 = 0.25;

/// One named, sized part of a [`MemoryEstimate`], with the first measured figure that contains it
/// and where its size comes from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EstimatePart {
    /// Name (`weights`, `gradients`, `optimizer_states`, `activations`, …).
    pub name: &'static str,
    /// Size [GB].
    pub gb: f64,
    /// The first figure that contains it (allocated parts are in all three).
    pub level: MemoryKind,
    /// Where its size comes from.
    pub source: &'static str,
}

/// The memory of the busiest device: its parts and the three figures [GB].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemoryEstimate {
    /// Which pipeline stage holds the most: `first`, `last` or `only` (no pipeline).
    pub stage: &'static str,
    /// Every part, allocated first.
    pub parts: Vec<EstimatePart>,
    /// Peak allocated [GB].
    pub allocated_gb: f64,
    /// Peak reserved [GB].
    pub reserved_gb: f64,
    /// Device level (nvidia-smi) [GB].
    pub device_gb: f64,
}

impl MemoryEstimate {
    /// The figure of `kind` [GB].
    pub fn of_kind(&self, kind: MemoryKind) -> f64 {
        match kind {
            MemoryKind::PeakAllocated => self.allocated_gb,
            MemoryKind::PeakReserved => self.reserved_gb,
            MemoryKind::NvidiaSmi => self.device_gb,
        }
    }

    /// What the device needs once the caching allocator has given its cache back [GB]: allocated
    /// + CUDA context + NCCL buffers, the side of [`crate::vocab::Need`] a `no` is judged on and
    /// the figure a search judges a layout's fit by (PyTorch's allocator frees its cached blocks
    /// and retries before it raises an out-of-memory error; the source is at `Need`).
    pub fn need_gb(&self) -> f64 {
        need_without_cache_gb(self.allocated_gb, self.reserved_gb, self.device_gb)
    }

    /// The size of part `name` [GB] (0 when absent).
    pub fn part(&self, name: &str) -> f64 {
        self.parts.iter().filter(|p| p.name == name).map(|p| p.gb).sum()
    }
}

/// One pipeline stage as memory needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stage<'a> {
    /// `first`, `last`, `middle` or `only`.
    pub name: &'static str,
    /// Blocks on the device.
    pub blocks: u64,
    /// One block (a mixture-of-experts model's stage: the mean of its dense and MoE blocks, the
    /// routed experts apart in `experts`).
    pub block: BlockCost,
    /// Embedding and heads on the device.
    pub ends: &'a [EndCost],
    /// Whether the stage computes the logits and the loss.
    pub head: bool,
    /// Micro-batches in flight.
    pub in_flight: f64,
    /// Routed experts on the device (none for dense models).
    pub experts: ExpertStates,
}

/// Routed-expert parameters of one stage's device, whose states are sharded over their own
/// (expert data-parallel) group.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct ExpertStates {
    /// Parameters on the device (after expert and expert-tensor parallelism) [count].
    pub parameters: f64,
    /// One MoE block's share of them [count].
    pub per_block: f64,
    /// The expert data-parallel shard group [devices].
    pub shard: u64,
    /// Communicators of more than one device beyond the dense ones (expert parallel, expert data
    /// parallel).
    pub communicators: u64,
}

/// The peak over the stages of a configuration whose block, embedding and head costs are known.
pub fn peak_memory(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    block: &BlockCost,
    embedding: &EndCost,
    head: &EndCost,
    groups: &DpGroups,
) -> MemoryEstimate {
    let stages = super::stack_nanotron::stage_split(w, layout.pp, p.opts);
    let nmb = layout.microbatches();
    let v = if layout.pp > 1 { p.opts.interleave } else { 1 };
    let first_ends = [*embedding, *head];
    let experts = ExpertStates::default();
    let block = *block;
    let list: Vec<Stage> = if layout.pp == 1 {
        vec![Stage {
            name: "only",
            blocks: stages.first,
            block,
            ends: &first_ends,
            head: true,
            in_flight: 1.0,
            experts,
        }]
    } else {
        let in_first = first_stage_in_flight(nmb, layout.pp, v);
        let mut list = Vec::with_capacity(3);
        if layout.pp > 2 {
            // The second stage, one micro-batch fewer in flight than the first: the peak only when
            // the first holds fewer blocks (an end counted as a block). Listed first so that a tie
            // names an end stage.
            let in_flight = second_stage_in_flight(in_first);
            list.push(Stage { name: "middle", blocks: stages.most, block, ends: &[], head: false, in_flight, experts });
        }
        list.extend([
            Stage {
                name: "first",
                blocks: stages.first,
                block,
                ends: &first_ends[..1],
                head: false,
                in_flight: in_first,
                experts,
            },
            Stage {
                name: "last",
                blocks: stages.last,
                block,
                ends: &first_ends[1..],
                head: true,
                in_flight: 1.0,
                experts,
            },
        ]);
        list
    };
    peak_of_stages(w, layout, p, groups, &list)
}

/// The peak over `stages` (the one with the largest device figure).
pub(crate) fn peak_of_stages(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    groups: &DpGroups,
    stages: &[Stage],
) -> MemoryEstimate {
    stages
        .iter()
        .map(|s| stage_memory(w, layout, p, groups, s))
        .max_by(|a, b| a.device_gb.total_cmp(&b.device_gb))
        .unwrap_or_else(|| MemoryEstimate {
            stage: "only",
            parts: Vec::new(),
            allocated_gb: 0.0,
            reserved_gb: 0.0,
            device_gb: 0.0,
        })
}

/// The need without the allocator's cache of [`peak_of_stages`]'s device [GB]
/// ([`MemoryEstimate::need_gb`], the same arithmetic, [`stage_figures`]) without naming the
/// parts: the largest over `stages`. What a search judges whether a layout fits by.
pub(crate) fn peak_need_gb<'a>(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    groups: &DpGroups,
    stages: impl IntoIterator<Item = Stage<'a>>,
) -> f64 {
    stages
        .into_iter()
        .map(|s| {
            let f = stage_figures(w, layout, p, groups, &s, false);
            need_without_cache_gb(f.allocated_gb, f.reserved_gb, f.device_gb)
        })
        .max_by(f64::total_cmp)
        .unwrap_or(0.0)
}

/// The need without the allocator's cache [GB] of the three figures: one formula,
/// [`crate::vocab::PredictedMemory::need`].
fn need_without_cache_gb(allocated_gb: f64, reserved_gb: f64, device_gb: f64) -> f64 {
    crate::vocab::PredictedMemory { allocated_gb, reserved_gb, device_gb }.need().without_cache_gb
}

/// A stage's allocated parts as they are summed: their sum [GB] in the order they are formed and,
/// when `named`, the parts themselves (the breakdown; the device figure alone needs only the sum).
struct Allocated {
    named: bool,
    parts: Vec<EstimatePart>,
    gb: f64,
}

impl Allocated {
    fn put(&mut self, name: &'static str, bytes: f64, source: &'static str) {
        let gb = bytes * 1e-9;
        // The sum of the parts in order, from −0 (the neutral element `Iterator::sum` starts from).
        self.gb += gb;
        if self.named {
            self.parts.push(EstimatePart { name, gb, level: MemoryKind::PeakAllocated, source });
        }
    }
}

/// A stage's memory figures [GB]: the allocated parts (named when asked: [`Allocated`]) and the
/// overheads over them, one formula for [`stage_memory`] and [`peak_need_gb`].
struct StageFigures {
    /// The allocated parts (empty unless named).
    parts: Vec<EstimatePart>,
    allocated_gb: f64,
    fragmentation_gb: f64,
    context_gb: f64,
    nccl_gb: f64,
    reserved_gb: f64,
    device_gb: f64,
}

fn stage_memory(w: &Workload, layout: &Layout, p: &Pricing, groups: &DpGroups, stage: &Stage) -> MemoryEstimate {
    let f = stage_figures(w, layout, p, groups, stage, true);
    let mut parts = f.parts;
    parts.push(EstimatePart {
        name: "allocator_fragmentation",
        gb: f.fragmentation_gb,
        level: MemoryKind::PeakReserved,
        source: "caching allocator's reserved-but-unused blocks: fitted fraction of the allocated peak",
    });
    parts.push(EstimatePart {
        name: "cuda_context",
        gb: f.context_gb,
        level: MemoryKind::NvidiaSmi,
        source: "CUDA context and kernel images outside the allocator",
    });
    parts.push(EstimatePart {
        name: "nccl_buffers",
        gb: f.nccl_gb,
        level: MemoryKind::NvidiaSmi,
        source: "NCCL_BUFFSIZE 4 MiB per channel and peer per communicator (tp, cp, pp, dp groups)",
    });
    MemoryEstimate {
        stage: stage.name,
        parts,
        allocated_gb: f.allocated_gb,
        reserved_gb: f.reserved_gb,
        device_gb: f.device_gb,
    }
}

/// The figures of one stage's memory; its allocated parts named when `named`.
fn stage_figures(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    groups: &DpGroups,
    stage: &Stage,
    named: bool,
) -> StageFigures {
    let (opts, hw) = (p.opts, p.hw);
    let block = &stage.block;
    let ends_params: f64 = stage.ends.iter().map(|e| e.parameters).sum();
    let params = stage.blocks as f64 * block.parameters + ends_params;
    let d = groups.shard as f64;
    // Room for every part of the breakdown (a search assembles this for each configuration it
    // prices, and forms the device figure alone far more often: no room then).
    let parts = if named { Vec::with_capacity(16) } else { Vec::new() };
    let mut sum = Allocated { named, parts, gb: -0.0 };
    let mut put = |name, bytes: f64, source| sum.put(name, bytes, source);
    // At the loss (the peak) the last block is still gathered for its backward; without
    // resharding every block is. In the backward one block's weights and its unsharded gradient
    // (16-bit, then the reduction width) are live while the freed activations of the blocks
    // behind it make room, so the loss stays the peak.
    // FSDP's root unit (embedding, final norm, output head: what no block wraps) is never
    // resharded after the forward: FSDP1 and FSDP2 keep the root's parameters gathered for the
    // backward that starts with them.
    let gathered_blocks =
        if opts.reshard_after_forward { 1.0_f64.min(stage.blocks as f64) } else { stage.blocks as f64 };
    let [weights, gradients, optimizer, gathered] =
        model_states(hw, opts, params, d, gathered_blocks * block.parameters + ends_params, block.parameters);
    // Routed experts: the same states, sharded over the expert data-parallel group.
    let ex = stage.experts;
    let expert_states = (ex.parameters > 0.0).then(|| {
        let moe_blocks = (ex.parameters / ex.per_block.max(1.0)).round();
        let live = if opts.reshard_after_forward { 1.0_f64.min(moe_blocks) } else { moe_blocks };
        let mut s = model_states(hw, opts, ex.parameters, ex.shard.max(1) as f64, live * ex.per_block, ex.per_block);
        s[2] -= muon_momentum_saving(opts, hw, ex.parameters, ex.shard.max(1) as f64);
        s
    });
    // Muon keeps one momentum where Adam keeps two moments, for the blocks' matrices (the
    // routed experts' counted above).
    let matrices = (stage.blocks as f64 * block.linear_parameters - ex.parameters).max(0.0);
    let optimizer = optimizer - muon_momentum_saving(opts, hw, matrices, d);
    let ends_acts: f64 = stage.ends.iter().map(|e| e.activation_bytes).sum();
    // The block being recomputed holds its full activations while its backward runs (full and
    // operator-level recomputation; an upper bound for the latter, which re-creates only what it
    // did not save).
    let working = if matches!(opts.recompute, Recompute::Full | Recompute::Op | Recompute::Partial(_)) {
        block.activation_bytes
    } else {
        0.0
    };
    let activations = stage.in_flight
        * (stage.blocks as f64 * (block.kept_bytes(opts.recompute) + fp32_input_extra(hw, opts, block.input_bytes))
            + ends_acts)
        + working;
    let loss = loss_bytes(w, layout, opts).filter(|_| stage.head);
    // Gradients held at the peak: all of them, but for a loop that frees them between steps and
    // runs one micro-batch per step: none at the loss, and at the backward's end only what they
    // exceed the activations and logits it freed by ([`ExtendedOptions::grads_freed`]).
    let all_gradients = gradients + expert_states.map_or(0.0, |s| s[1]);
    let freed_between_steps = opts.grads_freed && layout.microbatches() == 1;
    let (gradient_share, gradient_source) = if freed_between_steps && all_gradients > 0.0 {
        (
            (all_gradients - activations - loss.unwrap_or(0.0)).max(0.0) / all_gradients,
            "gradients beyond the freed activations at the backward's end (freed between steps: none at the loss)",
        )
    } else {
        (1.0, "")
    };
    // FP8 primary weights: the 16-bit linear weights (gathered ones under ZeRO-3) are FP8 instead.
    // torchao's FSDP float8 all-gather: the gathered linear weights are FP8, the shards are not
    // (ZeRO-2 here is FSDP's: every block gathered from the forward to the backward; without FSDP
    // nothing is gathered).
    let fp8 = hw.operand_bytes < hw.element_bytes;
    let primary_fp8 = fp8 && opts.fp8_recipe == Fp8Recipe::TransformerEngineFp8Weights;
    let gathered_fp8 = fp8 && opts.fp8_recipe == Fp8Recipe::TorchaoFp8AllGather;
    let narrower = if primary_fp8 || gathered_fp8 { hw.element_bytes - hw.operand_bytes } else { 0.0 };
    let (weights, gathered) = match opts.sharding {
        Sharding::Zero3 => (weights, gathered - gathered_blocks * block.linear_parameters * narrower),
        Sharding::Ddp | Sharding::Zero1 if gathered_fp8 => (weights, gathered),
        _ => (weights - stage.blocks as f64 * block.linear_parameters * narrower, gathered),
    };
    let or_freed = |source: &'static str| if gradient_source.is_empty() { source } else { gradient_source };
    match opts.sharding {
        Sharding::Zero3 => {
            put("weights", weights, "sharded parameters (FSDP2: FP32 master shards; ZeRO-3)");
            put("gradients", gradients * gradient_share, or_freed("sharded gradients"));
            put("optimizer_states", optimizer, "sharded Adam moments");
            put(
                "gathered_layers",
                gathered,
                "16-bit weights gathered at the loss: the root unit (embedding, output head) and the last block with \
                 reshard after forward (FSDP keeps both for the backward); every block without (the blocks' linear \
                 weights in FP8 with torchao's float8 all-gather)",
            );
        }
        _ => {
            put("weights", weights, "16-bit (FP32 in FP32 training) weights on the device");
            put(
                "gradients",
                gradients * gradient_share,
                or_freed("main gradients (FP32 for BF16 mixed precision; Megatron-LM)"),
            );
            put(
                "optimizer_states",
                optimizer,
                "FP32 master weights and two Adam moments (Megatron-LM distributed-optimizer table; ZeRO)",
            );
        }
    }
    if let Some([weights, gradients, optimizer, gathered]) = expert_states {
        put("expert_weights", weights + gathered, "routed experts' weights (sharded by ep·etp; ZeRO-3 over edp)");
        put(
            "expert_gradients",
            gradients * gradient_share,
            or_freed("routed experts' gradients (sharded over edp by ZeRO-2/3)"),
        );
        put("expert_optimizer_states", optimizer, "routed experts' optimizer states (sharded over edp by ZeRO-1/2/3)");
    }
    if fp8 && opts.fp8_recipe.is_transformer_engine() {
        let linear =
            stage.blocks as f64 * block.linear_parameters / if opts.sharding == Sharding::Zero3 { d } else { 1.0 };
        if primary_fp8 {
            put("fp8_weight_copies", linear, "Transformer Engine FP8 primary weights: the cached FP8 transpose, 1 B");
        } else {
            put("fp8_weight_copies", linear * 2.0, "Transformer Engine: FP8 weight and transpose, 1 B each");
        }
    }
    put(
        "activations",
        activations,
        "kept bytes of each operation per recomputation policy × micro-batches in flight under 1F1B (Korthikanti et \
         al. 2022)",
    );
    if opts.outputs_hold_kv {
        put(
            "kv_outputs",
            stage.blocks as f64 * kv_output_bytes(w, layout, hw, opts),
            "every block's keys and values returned with the model's output (Hugging Face use_cache), held through \
             the backward",
        );
    }
    if let Some(bytes) = loss {
        put(
            "logits_and_loss",
            bytes,
            "16-bit logits, FP32 copy and FP32 log-softmax of one micro-batch (÷ chunks; compiled: 16-bit logits and \
             an FP32 log-sum-exp per token)",
        );
    }
    let Allocated { parts, gb: allocated, .. } = sum;
    let overheads = opts.hardware.memory_overheads;
    let fragmentation = if overheads { FRAGMENTATION * allocated } else { 0.0 };
    let communicators = [layout.tp, layout.cp, layout.pp, groups.replicas].iter().filter(|g| **g > 1).count() as f64
        + ex.communicators as f64;
    let (context, nccl) = if overheads { (CUDA_CONTEXT_GB, NCCL_BUFFERS_GB * communicators) } else { (0.0, 0.0) };
    let reserved = allocated + fragmentation;
    StageFigures {
        parts,
        allocated_gb: allocated,
        fragmentation_gb: fragmentation,
        context_gb: context,
        nccl_gb: nccl,
        reserved_gb: reserved,
        device_gb: reserved + context + nccl,
    }
}

/// Micro-batches the first pipeline stage holds under 1F1B with `v`-way interleaving.
pub fn first_stage_in_flight(microbatches: u64, pp: u64, interleave: u64) -> f64 {
    let base = microbatches.min(pp).max(1) as f64;
    if interleave > 1 && pp > 1 { base * (1.0 + (pp - 1) as f64 / (pp * interleave) as f64) } else { base }
}

/// Micro-batches in flight at the second stage's memory peak: one fewer than on the first (1F1B),
/// at least one.
pub fn second_stage_in_flight(first: f64) -> f64 {
    (first - 1.0).max(1.0)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::catalog::Precision;
    use crate::extended::evaluate::memory_estimate;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::{ExtendedOptions, HardwareChoices};

    /// An H200 with 8-device NVLink domains (also `super::device_memory`'s tests).
    pub(in crate::extended) fn hw() -> Hardware {
        Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
    }

    /// Llama 3 8B's blocks (no vocabulary) under `opts` and `layout`.
    pub(in crate::extended) fn estimate(opts: ExtendedOptions, layout: Layout) -> MemoryEstimate {
        let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
        memory_estimate(&w, &hw(), &layout, &opts).unwrap()
    }

    /// Llama 3 8B blocks only with FP8 linear layers (a system file with 1-byte elements), 8
    /// replicas, no memory overheads; and its linear parameters (Q and K/V h·(h + 2·h/4), output
    /// h·h, gate/up/down 3·h·f per block).
    fn fp8_llama3_8b(sharding: Sharding) -> (Workload, Hardware, Layout, ExtendedOptions, f64) {
        let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
        let mut params = SystemParams::h200().with_domain_size(8);
        params.element_size = 1e-9;
        let hw = Hardware::from_params(&params, true);
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let opts = ExtendedOptions {
            hardware: HardwareChoices {
                memory_overheads: false,
                precision: Precision::Fp8,
                ..HardwareChoices::realistic()
            },
            sharding,
            ..ExtendedOptions::realistic()
        };
        let (h, f) = (4096.0, 14336.0);
        (w, hw, layout, opts, 32.0 * (h * (h + 2.0 * h / 4.0) + h * h + 3.0 * h * f))
    }

    #[test]
    fn fp8_primary_weights_by_hand() {
        // ZeRO-1 over 8 replicas.
        let (w, hw, layout, base, linear) = fp8_llama3_8b(Sharding::Zero1);
        let te = memory_estimate(&w, &hw, &layout, &base).unwrap();
        let primary = memory_estimate(
            &w,
            &hw,
            &layout,
            &ExtendedOptions { fp8_recipe: Fp8Recipe::TransformerEngineFp8Weights, ..base },
        )
        .unwrap();
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
        // Transformer Engine: 16-bit weights plus an FP8 copy and its transpose (1 B each).
        close(te.part("fp8_weight_copies"), linear * 2.0 * 1e-9);
        // FP8 primary weights: the linear weights are 1 B instead of 2, only the transpose is kept.
        close(primary.part("fp8_weight_copies"), linear * 1e-9);
        close(te.part("weights") - primary.part("weights"), linear * 1e-9);
        close(te.allocated_gb - primary.allocated_gb, linear * 2.0 * 1e-9);
        // Gradients, optimizer states and activations are the same.
        close(te.part("optimizer_states"), primary.part("optimizer_states"));
        close(te.part("activations"), primary.part("activations"));
    }

    #[test]
    fn torchao_float8_all_gather_by_hand() {
        // FSDP over 8 ranks without resharding after the forward (every block gathered at the
        // loss).
        let (w, hw, layout, fsdp, linear) = fp8_llama3_8b(Sharding::Zero3);
        let base = ExtendedOptions { reshard_after_forward: false, fp8_recipe: Fp8Recipe::Torchao, ..fsdp };
        let plain = memory_estimate(&w, &hw, &layout, &base).unwrap();
        let gather8 =
            memory_estimate(&w, &hw, &layout, &ExtendedOptions { fp8_recipe: Fp8Recipe::TorchaoFp8AllGather, ..base })
                .unwrap();
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
        // The 32 gathered blocks' linear weights are 1 B instead of 2; nothing else changes.
        close(plain.part("gathered_layers") - gather8.part("gathered_layers"), linear * 1e-9);
        close(plain.allocated_gb - gather8.allocated_gb, linear * 1e-9);
        close(plain.part("weights"), gather8.part("weights"));
        close(plain.part("activations"), gather8.part("activations"));
        // Resharded after the forward, only the last block is gathered at the loss.
        let reshard = |r| ExtendedOptions { fp8_recipe: r, reshard_after_forward: true, ..base };
        let (a, b) = (
            memory_estimate(&w, &hw, &layout, &reshard(Fp8Recipe::Torchao)).unwrap(),
            memory_estimate(&w, &hw, &layout, &reshard(Fp8Recipe::TorchaoFp8AllGather)).unwrap(),
        );
        close(a.part("gathered_layers") - b.part("gathered_layers"), linear / 32.0 * 1e-9);
        // FSDP's ZeRO-2 (every block's weights held unsharded through the step): the same 1 B.
        let z2 = |r| ExtendedOptions { fp8_recipe: r, sharding: Sharding::Zero2, ..base };
        let (a, b) = (
            memory_estimate(&w, &hw, &layout, &z2(Fp8Recipe::Torchao)).unwrap(),
            memory_estimate(&w, &hw, &layout, &z2(Fp8Recipe::TorchaoFp8AllGather)).unwrap(),
        );
        close(a.part("weights") - b.part("weights"), linear * 1e-9);
        // Without FSDP nothing is gathered, and the recipe changes nothing.
        let ddp = |r| ExtendedOptions { fp8_recipe: r, sharding: Sharding::Zero1, ..base };
        close(
            memory_estimate(&w, &hw, &layout, &ddp(Fp8Recipe::Torchao)).unwrap().allocated_gb,
            memory_estimate(&w, &hw, &layout, &ddp(Fp8Recipe::TorchaoFp8AllGather)).unwrap().allocated_gb,
        );
    }

    #[test]
    fn a_loss_without_upcast_holds_4_bytes_per_logit() {
        // 8192 tokens × 128256 logits × (2 B 16-bit logits + 2 B 16-bit log-softmax) = 4.20 GB.
        let opts = ExtendedOptions { loss_fp32_upcast: false, ..ExtendedOptions::realistic() };
        let e = memory_estimate(&Workload::LLAMA3_8B, &hw(), &Layout::placed(1, 1, 1, 8, 1, 8, 8), &opts).unwrap();
        let by_hand = 8192.0 * 128256.0 * 4.0 * 1e-9;
        assert!((e.part("logits_and_loss") - by_hand).abs() < 1e-9, "{}", e.part("logits_and_loss"));
    }

    #[test]
    fn compiled_loss_keeps_16_bit_logits() {
        // 8192 tokens × 128256 logits: eager 10 B each; compiled 2 B each and 4 B per token.
        let w = Workload::LLAMA3_8B;
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let opts = ExtendedOptions { compiled_loss: true, ..ExtendedOptions::realistic() };
        let e = memory_estimate(&w, &hw(), &layout, &opts).unwrap();
        let by_hand = (8192.0 * 128256.0 * 2.0 + 8192.0 * 4.0) * 1e-9;
        assert!((e.part("logits_and_loss") - by_hand).abs() < 1e-9, "{}", e.part("logits_and_loss"));
        // Chunks do not matter once the loss is compiled.
        let chunked = memory_estimate(&w, &hw(), &layout, &ExtendedOptions { loss_chunks: 8, ..opts }).unwrap();
        assert_eq!(chunked.part("logits_and_loss"), e.part("logits_and_loss"));
    }

    #[test]
    fn a_head_inside_the_chunks_holds_one_chunk_of_logits() {
        // Llama 3 8B, 8192 tokens, TP 1: whole, 8192 × 128256 logits × 10 B; the head inside 8
        // chunks, 1024 × 128256 × 10 B plus 8192 × 4096 × 4 B of FP32 hidden-state gradient.
        let w = Workload::LLAMA3_8B;
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let opts = ExtendedOptions { loss_chunks: 8, loss_head_chunked: true, ..ExtendedOptions::realistic() };
        let e = memory_estimate(&w, &hw(), &layout, &opts).unwrap();
        let by_hand = (1024.0 * 128256.0 * 10.0 + 8192.0 * 4096.0 * 4.0) * 1e-9;
        assert!((e.part("logits_and_loss") - by_hand).abs() < 1e-9, "{} vs {by_hand}", e.part("logits_and_loss"));
        // Compiled: one chunk's 16-bit logits and log-sum-exps, the same accumulator.
        let compiled = ExtendedOptions { compiled_loss: true, ..opts };
        let c = memory_estimate(&w, &hw(), &layout, &compiled).unwrap();
        let by_hand = (1024.0 * 128256.0 * 2.0 + 1024.0 * 4.0 + 8192.0 * 4096.0 * 4.0) * 1e-9;
        assert!((c.part("logits_and_loss") - by_hand).abs() < 1e-9, "{}", c.part("logits_and_loss"));
        // One chunk: the whole logits and the accumulator besides (the switch alone saves nothing).
        let one = ExtendedOptions { loss_chunks: 1, ..opts };
        let whole = memory_estimate(&w, &hw(), &layout, &ExtendedOptions::realistic()).unwrap();
        let o = memory_estimate(&w, &hw(), &layout, &one).unwrap();
        assert!((o.part("logits_and_loss") - whole.part("logits_and_loss") - 8192.0 * 4096.0 * 4e-9).abs() < 1e-9);
    }

    #[test]
    fn figures_nest_and_the_loss_is_chunked() {
        let w = Workload::LLAMA3_8B;
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let opts = ExtendedOptions::realistic();
        let e = memory_estimate(&w, &hw(), &layout, &opts).unwrap();
        assert!(e.allocated_gb < e.reserved_gb && e.reserved_gb < e.device_gb);
        assert!((e.reserved_gb - e.allocated_gb * (1.0 + FRAGMENTATION)).abs() < 1e-9);
        // 8192 tokens × 128256 logits × 10 B; with 8 chunks 2 + 8/8 B.
        let logits = 8192.0 * 128256.0;
        assert!((e.part("logits_and_loss") - logits * 10.0 * 1e-9).abs() < 1e-6);
        let chunked = memory_estimate(&w, &hw(), &layout, &ExtendedOptions { loss_chunks: 8, ..opts }).unwrap();
        assert!((chunked.part("logits_and_loss") - logits * 3.0 * 1e-9).abs() < 1e-6);
        // dp only: one communicator.
        assert!((e.device_gb - e.reserved_gb - CUDA_CONTEXT_GB - NCCL_BUFFERS_GB).abs() < 1e-12);
        // The need without the allocator's cache: allocated + 0.6 GB context + 0.25 GB (one
        // communicator) = device − 0.23 · allocated.
        assert!((e.need_gb() - (e.allocated_gb + 0.6 + 0.25)).abs() < 1e-12);
        assert!((e.device_gb - e.need_gb() - FRAGMENTATION * e.allocated_gb).abs() < 1e-9);
    }

    #[test]
    fn pipeline_stages_and_full_recompute() {
        assert_eq!(first_stage_in_flight(64, 8, 1), 8.0);
        assert_eq!(first_stage_in_flight(4, 8, 1), 4.0);
        assert_eq!(first_stage_in_flight(64, 8, 2), 8.0 * (1.0 + 7.0 / 16.0));
        let base = ExtendedOptions {
            hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
            ..ExtendedOptions::realistic()
        };
        let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
        let hw = hw();
        let layout = Layout::placed(1, 1, 4, 2, 1, 64, 8);
        let p = Pricing { hw: &hw, opts: &base };
        let block = super::super::block::block_cost(&w, &layout, &p);
        let e = memory_estimate(&w, &hw, &layout, &base).unwrap();
        // First stage: 8 blocks × 4 micro-batches in flight.
        assert_eq!(e.stage, "first");
        assert!(
            (e.part("activations")
                - 8.0 * 4.0 * block.activation_bytes * 0.0
                - 8.0 * 4.0 * block.kept_bytes(base.recompute) * 1e-9)
                .abs()
                < 1e-9
        );
        let full = ExtendedOptions { recompute: Recompute::Full, ..base };
        let e = memory_estimate(&w, &hw, &layout, &full).unwrap();
        let block = super::super::block::block_cost(&w, &layout, &Pricing { hw: &hw, opts: &full });
        assert!((e.part("activations") - (32.0 * block.input_bytes + block.activation_bytes) * 1e-9).abs() < 1e-9);
    }
}
