//! Per-step host work of Megatron-LM's optional gradient and parameter statistics: what
//! `--log-num-zeros-in-grad` and `--log-params-norm` make every rank's CPU do once per training
//! step, counted call by call from the source (NVIDIA/Megatron-LM at commit d98e8a6), and priced
//! at [`TORCH_CALL_HOST_S`] per PyTorch call plus NCCL's latency of each small all-reduce (every
//! one is followed by a `.item()`, a device sync, so none hides behind GPU work).
//!
//! Both are off by default in Megatron-LM (`megatron/training/config/training_config.py`:
//! `log_params_norm: bool = False` l. 250; `megatron/core/optimizer/optimizer_config.py`:
//! `log_num_zeros_in_grad: bool = False` l. 383); the switches
//! ([`super::ExtendedOptions::log_num_zeros_in_grad`], [`super::ExtendedOptions::log_params_norm`])
//! are on only where a run or a launch file states the flag (Megatron-LM's functional tests state
//! both in every `model_config.yaml`).
//!
//! * **Zeros in the gradients** (`megatron/core/optimizer/clip_grads.py`, `count_zeros_fp32`,
//!   l. 195–277, called from `MixedPrecisionOptimizer.step` / `ChainedOptimizer.step` in
//!   `optimizer.py` l. 840 / 1967): for every parameter the optimizer holds on the rank, three
//!   PyTorch calls — `torch.count_nonzero(grad)`, `grad.numel() - …`, `… + total_num_zeros` —
//!   then `torch.zeros` for the total, an all-reduce over the gradient-statistics group (the
//!   model-parallel group; the whole world with the distributed optimizer, `distrib_optimizer.py`)
//!   and `.item()`; back in `train_step` (`megatron/training/training.py` l. 3200–3205)
//!   `reduce_max_stat_across_model_parallel_group` (`megatron/training/utils/common_utils.py`
//!   l. 269–291): `torch.tensor`, an all-reduce over the model-parallel group and two `.item()`.
//!   [`ZEROS_CALLS_PER_TENSOR`] per tensor plus [`ZEROS_CALLS_PER_STEP`], two all-reduces.
//! * **Parameter norm** (`calc_params_l2_norm`, `common_utils.py` l. 80–213, called every step from
//!   `training.py` l. 4874): the parameters sorted into eight lists (a Python filter per
//!   parameter, no PyTorch call: not counted), the one non-empty list of a dense model reduced by
//!   `torch.tensor` + one `multi_tensor_l2norm` launch + `norm * norm`, seven `torch.zeros` for
//!   the empty lists, six additions, six all-reduces (two over the data × context-parallel group,
//!   two over the expert data-parallel group — the same ranks for a dense model —, one over the
//!   expert generalized-TP group of one rank, one over the model-parallel group) and `.item()`:
//!   [`NORM_CALLS_PER_STEP`] calls whatever the parameter count.
//!
//! Parameter tensors: Megatron's GPT block in its defaults (`add_bias_linear=True`,
//! `normalization="LayerNorm"`) holds [`TENSORS_PER_BLOCK`] (QKV, projection, FC1, FC2: a weight
//! and a bias each; two norms: a weight and a bias each); the first stage adds the word and
//! position embeddings, the last the final norm's two and the output weight (tied: its copy of the
//! word embeddings) — [`END_TENSORS`] each. The distributed optimizer holds on each rank a `1/d`
//! slice of every bucket's elements; the busiest rank's slice lies in the blocks, so it holds the
//! tensors of `(stage elements / d) / block elements` blocks plus the one cut at the slice's edge.
//! What is not counted, so the figures are a floor: the Python of the filters (four attribute
//! checks per parameter), the tensorboard writes and `torch.cuda.memory_stats()` of the logging
//! rank, and the per-step reductions Megatron runs whatever the flags.

use super::layout::Layout;
use super::optimizer_host::small_all_reduce_s;
use super::pipeline::StageSplit;
use super::pricing::Pricing;

/// The host time of one PyTorch call, defined beside the per-operation one in [`super::pricing`]
/// (the MoE layer's counted calls, an earlier stage, price at it too).
pub use super::pricing::TORCH_CALL_HOST_S;

/// Parameter tensors of one block of Megatron's GPT in its defaults: four linear layers with a
/// weight and a bias, two LayerNorms with a weight and a bias [count].
pub const TENSORS_PER_BLOCK: f64 = 12.0;

/// Parameter tensors of an end stage beyond its blocks [count]: word and position embeddings on
/// the first; the final norm's weight and bias and the output weight on the last (3, counted as
/// 3 for the first too: its embeddings plus the tensor cut at a shard's edge is at most as many).
pub const END_TENSORS: f64 = 3.0;

/// PyTorch calls of `count_zeros_fp32` per parameter tensor (`count_nonzero`, a subtraction, an
/// addition).
pub const ZEROS_CALLS_PER_TENSOR: f64 = 3.0;

/// PyTorch calls of the zero count per step beyond the per-tensor ones: `torch.zeros`, the
/// all-reduce, `.item()` (clip_grads.py l. 231, 271–275), then `torch.tensor`, the all-reduce and
/// two `.item()` of `reduce_max_stat_across_model_parallel_group` (common_utils.py l. 285–291).
pub const ZEROS_CALLS_PER_STEP: f64 = 7.0;

/// PyTorch calls of `calc_params_l2_norm` per step for a dense model (common_utils.py l. 161–213):
/// 3 for the one non-empty list (`torch.tensor`, `multi_tensor_l2norm`, `norm * norm`), 7
/// `torch.zeros`, 6 all-reduces, 6 additions, `.item()` — and the `+` of l. 190 counted with them.
pub const NORM_CALLS_PER_STEP: f64 = 24.0;

/// Parameter tensors of one block whose gradient Megatron's DDP adds into its FP32 main-gradient
/// buffer from the backward hook, one `add_` launched per tensor per micro-batch
/// (`megatron/core/distributed/distributed_data_parallel.py`, `_make_backward_post_hook`,
/// l. 553–585: `param.main_grad.add_(param.grad.data)` unless the parameter's
/// `grad_added_to_main_grad` is set): with `gradient_accumulation_fusion` (on unless
/// `--no-gradient-accumulation-fusion`) the four weight matrices accumulate inside their
/// weight-gradient GEMMs and set the flag (`megatron/core/tensor_parallel/layers.py` l. 762;
/// Transformer Engine's linear layers likewise), so of [`TENSORS_PER_BLOCK`] the four biases and
/// the two norms' weights and biases remain [count]. Runs that state
/// `--no-gradient-accumulation-fusion` add the weights too ([`UNFUSED_HOOK_ADDS_PER_BLOCK`]).
pub const HOOK_ADDS_PER_BLOCK: f64 = 8.0;

/// The backward hook's further `add_` launches per block without gradient-accumulation fusion
/// ([`super::ExtendedOptions::grad_accumulation_fusion`] off, Megatron-LM's
/// `--no-gradient-accumulation-fusion`): the four weight matrices (QKV, projection, FC1, FC2),
/// whose weight-gradient GEMM then returns a 16-bit `grad_weight` instead of accumulating into
/// `main_grad` and setting `grad_added_to_main_grad` (`megatron/core/tensor_parallel/layers.py`
/// l. 713–768 at d98e8a6: only the fused branch sets the flag), so the hook of
/// `distributed_data_parallel.py` l. 576–578 adds it: all [`TENSORS_PER_BLOCK`] pass through
/// the hook [count].
pub const UNFUSED_HOOK_ADDS_PER_BLOCK: f64 = 4.0;

/// HBM traffic the unfused weight-gradient accumulation adds per weight parameter and
/// micro-batch [B]: the GEMM writes a 16-bit gradient (2 B) that the hook's `add_` reads back
/// (2 B); the FP32 `main_grad`'s read and write (8 B) happen either way, in the fused GEMM's
/// accumulating epilogue (`wgrad_gemm_accum_fp32`, layers.py l. 721) or in the `add_`.
pub const UNFUSED_WGRAD_BYTES_PER_WEIGHT: f64 = 4.0;

/// All-reduces of `calc_params_l2_norm` over the data × context-parallel ranks (the sharded dense
/// and expert lists' reductions, l. 177–186), each one latency.
const NORM_REPLICA_REDUCES: f64 = 4.0;

/// The per-step host time of the statistics a run logs, with its parts [s].
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct StepHostWork {
    /// `--log-num-zeros-in-grad`: the zero count over the gradients [s].
    pub zeros_in_grad_s: f64,
    /// `--log-params-norm`: the norm over all parameters [s].
    pub params_norm_s: f64,
    /// The optimizer step's walk over its tensors that the zero count's sync exposes
    /// ([`super::optimizer_host`]) [s].
    pub optimizer_s: f64,
}

impl StepHostWork {
    /// Their sum [s].
    pub fn total_s(&self) -> f64 {
        self.zeros_in_grad_s + self.params_norm_s + self.optimizer_s
    }
}

/// Parameter tensors on the stage with the most [count]: [`TENSORS_PER_BLOCK`] per block plus
/// [`END_TENSORS`] on an end stage.
pub fn stage_tensors(stages: StageSplit, pp: u64) -> f64 {
    let blocks = |n: u64| n as f64 * TENSORS_PER_BLOCK;
    if pp == 1 {
        return blocks(stages.first) + 2.0 * END_TENSORS;
    }
    (blocks(stages.first) + END_TENSORS).max(blocks(stages.last) + END_TENSORS).max(blocks(stages.most))
}

/// Parameter tensors whose gradients the optimizer of the busiest rank holds [count]: all of the
/// stage's (`tensors`), or with the optimizer sharded over `shard` ranks the tensors of the
/// blocks a `1/shard` slice of the stage's `stage_parameters` spans (`block_parameters` each) plus
/// the one cut at its edge, at most all.
pub fn optimizer_tensors(tensors: f64, shard: u64, stage_parameters: f64, block_parameters: f64) -> f64 {
    if shard <= 1 || block_parameters <= 0.0 {
        return tensors;
    }
    (stage_parameters / shard as f64 / block_parameters * TENSORS_PER_BLOCK + 1.0).min(tensors)
}

/// Whether a per-parameter backward hook moves each gradient into `main_grad`: the Megatron stack,
/// whatever its sharding. Megatron's DDP adds it (`_make_backward_post_hook`, below); Megatron-FSDP
/// (its ZeRO-2/3, `--use-megatron-fsdp`) registers a `register_post_accumulate_grad_hook` on every
/// parameter of an FSDP unit, not one per unit, which runs `_process_post_backward_gradients([p])`
/// for that one parameter: with gradients sharded it copies the 16-bit gradient into the
/// unsharded `main_grad` bucket (`param.main_grad.copy_(...)`, one launch) unless the fused
/// weight-gradient GEMM already wrote it there (`grad_added_to_main_grad`), then queues the
/// parameter's reduce-scatter (NVIDIA/Megatron-LM @ d98e8a64,
/// `megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py` l. 1131–1143, 652–660,
/// 761–789). So the same tensors pass through a hook, one launch each, as under DDP.
fn megatron_ddp(p: &Pricing) -> bool {
    p.opts.stack == super::Stack::Megatron
}

/// Host time of Megatron DDP's backward hooks in one block's backward pass [s]:
/// [`HOOK_ADDS_PER_BLOCK`] launches (plus [`UNFUSED_HOOK_ADDS_PER_BLOCK`] without
/// gradient-accumulation fusion) at [`TORCH_CALL_HOST_S`] (times the host's speed), issued
/// by the autograd engine between the block's backward kernels, so they add to the pass's issue
/// time (and hide behind a pass that is not host-bound). Zero for a part that launches its own
/// kernels or another stack (Megatron-FSDP's per-parameter hooks count as DDP's: [`megatron_ddp`]).
pub fn backward_hooks_host_s(p: &Pricing) -> f64 {
    if !(p.hw.host_launched && megatron_ddp(p)) {
        return 0.0;
    }
    let adds = if p.opts.grad_accumulation_fusion {
        HOOK_ADDS_PER_BLOCK
    } else {
        HOOK_ADDS_PER_BLOCK + UNFUSED_HOOK_ADDS_PER_BLOCK
    };
    adds * TORCH_CALL_HOST_S * p.hw.host_op_time_factor
}

/// HBM bytes one block's backward moves beyond its operations' for the unfused weight-gradient
/// accumulation, given the block's `linear_parameters` on the device [B]:
/// [`UNFUSED_WGRAD_BYTES_PER_WEIGHT`] each under Megatron's DDP with the fusion off; zero with
/// it on or another stack.
pub fn unfused_wgrad_bytes(p: &Pricing, linear_parameters: f64) -> f64 {
    if p.opts.grad_accumulation_fusion || !megatron_ddp(p) {
        return 0.0;
    }
    UNFUSED_WGRAD_BYTES_PER_WEIGHT * linear_parameters
}

/// The per-step host work of the statistics `p.opts` switches on, for the busiest rank of
/// `layout` whose optimizer holds `optimizer_tensors` gradient tensors ([`optimizer_tensors`])
/// [s]. Zero under a compiled stack or a part whose runtime launches its own kernels (the flags
/// are Megatron-LM's).
pub fn step_host_work(p: &Pricing, layout: &Layout, optimizer_tensors: f64) -> StepHostWork {
    let opts = p.opts;
    if !(p.hw.host_launched && opts.stack.is_eager()) || !(opts.log_num_zeros_in_grad || opts.log_params_norm) {
        return StepHostWork::default();
    }
    let call = TORCH_CALL_HOST_S * p.hw.host_op_time_factor;
    let model_parallel = small_all_reduce_s(p, layout.tp * layout.pp);
    let zeros_in_grad_s = if opts.log_num_zeros_in_grad {
        // The distributed optimizer's statistics reduce over every rank (distrib_optimizer.py's
        // `get_grad_stats_parallel_group`); the others' over the model-parallel group.
        let stats = if opts.sharding.shards_optimizer() {
            small_all_reduce_s(p, layout.tp * layout.pp * layout.dp * layout.cp)
        } else {
            model_parallel
        };
        (ZEROS_CALLS_PER_TENSOR * optimizer_tensors + ZEROS_CALLS_PER_STEP) * call + stats + model_parallel
    } else {
        0.0
    };
    let params_norm_s = if opts.log_params_norm {
        let replicas = small_all_reduce_s(p, layout.dp * layout.cp);
        NORM_CALLS_PER_STEP * call + NORM_REPLICA_REDUCES * replicas + model_parallel
    } else {
        0.0
    };
    let optimizer_s = super::optimizer_host::optimizer_host_s(p, layout, optimizer_tensors);
    StepHostWork { zeros_in_grad_s, params_norm_s, optimizer_s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::vocab::CollectiveKind;

    #[test]
    fn tensors_by_hand() {
        // 12 blocks on one stage: 12·12 + 2·3 = 150 tensors.
        let one = StageSplit { first: 12, last: 12, most: 12 };
        assert_eq!(stage_tensors(one, 1), 150.0);
        // 12 blocks over 4 stages (3 each): an end stage has 36 + 3 = 39.
        let four = StageSplit { first: 3, last: 3, most: 3 };
        assert_eq!(stage_tensors(four, 4), 39.0);
        // Sharded over 8: a slice of 64 M of a 64 M stage in blocks of 3.2 M spans 2.5 blocks:
        // 2.5·12 + 1 = 31 tensors; unsharded, all 150.
        assert!((optimizer_tensors(150.0, 8, 64e6, 3.2e6) - 31.0).abs() < 1e-12);
        assert_eq!(optimizer_tensors(150.0, 1, 64e6, 3.2e6), 150.0);
        // A slice larger than the stage's blocks holds at most all.
        assert_eq!(optimizer_tensors(39.0, 2, 64e6, 1e6), 39.0);
    }

    #[test]
    fn backward_hooks_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let megatron = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &megatron };
        // Eight `add_` launches of 12.9 µs per block backward.
        let want = 8.0 * 12.9e-6 * hw.host_op_time_factor;
        assert!((backward_hooks_host_s(&p) - want).abs() < 1e-18, "{}", backward_hooks_host_s(&p));
        // Megatron-FSDP: the same eight launches (its hook is per parameter, megatron_fsdp.py
        // l. 1137); the other stacks: none here.
        let fsdp = ExtendedOptions { sharding: crate::extended::Sharding::Zero3, ..megatron };
        assert!((backward_hooks_host_s(&Pricing { hw: &hw, opts: &fsdp }) - want).abs() < 1e-18);
        let ds = ExtendedOptions { stack: crate::extended::Stack::DeepSpeed, ..megatron };
        assert_eq!(backward_hooks_host_s(&Pricing { hw: &hw, opts: &ds }), 0.0);
        // Without gradient-accumulation fusion all twelve tensors pass through the hook, and each
        // weight's 16-bit gradient is written and read back: 4 B per weight parameter.
        let unfused = ExtendedOptions { grad_accumulation_fusion: false, ..megatron };
        let p = Pricing { hw: &hw, opts: &unfused };
        let want = 12.0 * 12.9e-6 * hw.host_op_time_factor;
        assert!((backward_hooks_host_s(&p) - want).abs() < 1e-18, "{}", backward_hooks_host_s(&p));
        assert_eq!(unfused_wgrad_bytes(&p, 3.0e6), 12.0e6);
        assert_eq!(unfused_wgrad_bytes(&Pricing { hw: &hw, opts: &megatron }, 3.0e6), 0.0);
        // Megatron-FSDP unfused: its hook copies the 16-bit gradient into `main_grad`
        // (megatron_fsdp.py l. 660), the same 2 B written + 2 B read back: 3e6 × 4 B = 12e6 B.
        let fsdp_unfused = ExtendedOptions { sharding: crate::extended::Sharding::Zero3, ..unfused };
        assert_eq!(unfused_wgrad_bytes(&Pricing { hw: &hw, opts: &fsdp_unfused }, 3.0e6), 12.0e6);
    }

    #[test]
    fn host_work_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let layout = Layout::placed(1, 1, 1, 8, 4, 32, 8);
        let off = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &off };
        // Megatron's defaults: neither statistic, no time.
        assert_eq!(step_host_work(&p, &layout, 150.0).total_s(), 0.0);
        // Zeros only, unsharded optimizer on TP 1 × PP 1 (a model-parallel group of one rank: no
        // collective latency): (3·150 + 7) calls of 12.9 µs.
        let zeros = ExtendedOptions {
            log_num_zeros_in_grad: true,
            sharding: crate::extended::Sharding::Ddp,
            ..ExtendedOptions::realistic()
        };
        let p = Pricing { hw: &hw, opts: &zeros };
        let w = step_host_work(&p, &layout, 150.0);
        assert!((w.zeros_in_grad_s - 457.0 * 12.9e-6 * hw.host_op_time_factor).abs() < 1e-15, "{w:?}");
        assert_eq!(w.params_norm_s, 0.0);
        // The norm: 24 calls and four all-reduces over the 8 data-parallel ranks.
        let norm = ExtendedOptions { log_params_norm: true, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &norm };
        let w = step_host_work(&p, &layout, 150.0);
        let reduce = p.collective(CollectiveKind::AllReduce, 8e-9, 8, 8);
        assert!(reduce > 5e-6, "{reduce}");
        let want = 24.0 * 12.9e-6 * hw.host_op_time_factor + 4.0 * reduce;
        assert!((w.params_norm_s - want).abs() < 1e-15, "{w:?}");
        assert_eq!(w.zeros_in_grad_s, 0.0);
    }
}
