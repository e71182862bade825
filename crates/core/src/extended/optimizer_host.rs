//! The host's work in Megatron-LM's optimizer step that the device waits for: the gradient norm
//! and clipping, Transformer Engine's fused Adam and the copies around it, counted call by call
//! from the source (NVIDIA/Megatron-LM at commit d98e8a6, the commit of the functional tests in
//! `tests/data/megatron-ft-runs.json`; NVIDIA/TransformerEngine
//! `transformer_engine/pytorch/optimizers/fused_adam.py` at 04912bf) and priced at published
//! per-call figures, not fitted.
//!
//! **When it shows.** The step's kernels are few (the multi-tensor launches batch up to 36–110
//! tensors each), but its Python walks every parameter tensor the optimizer holds, several times.
//! A device with a queue of earlier work hides that walk; a device that has just been synced has
//! none. [`super::step_host`]'s zero count (`--log-num-zeros-in-grad`) syncs inside the step:
//! `count_zeros_fp32` ends in `total_num_zeros.item()` (`megatron/core/optimizer/clip_grads.py`
//! l. 275), called from `MixedPrecisionOptimizer.step` (`optimizer.py` l. 841–845) after the clip
//! and before `step_with_ready_grads` (Adam and the copy back, l. 847). So under that flag the
//! device waits, idle, for the host to walk the tensors again; the work is priced then
//! ([`optimizer_host_s`]) and is zero otherwise (hidden behind the device's queue in a step that is
//! not host-bound; a floor for one that is). The host-bound steps of the functional tests have no
//! queue, so the walk before the sync (the copy of the gradients, the clip) is priced with it.
//!
//! **Count** (`Float16OptimizerWithFloat16Params`, BF16 without a loss scaler: no
//! `_unscale_main_grads_and_check_for_nan`, `optimizer.py` l. 759):
//! * per tensor the optimizer holds, [`CALLS_PER_TENSOR`] PyTorch calls that launch no kernel:
//!   `_copy_model_grads_to_main_grads` (l. 1092–1110: `main_grad.float()`, the `main_param.grad`
//!   setter, `model_param.grad = None`: 3); `clip_grad_by_total_norm_fp32` (`clip_grads.py`
//!   l. 168–177: `param.grad.type()`, `.detach()`: 2); `FusedAdam.step` (`fused_adam.py`, its loop
//!   over `group["params"]`: `p.grad`, `p_grad.data` twice — the sparsity check and the list —,
//!   `p.data`: 4); `_copy_main_params_to_model_params` (`optimizer.py` l. 1112–1117, through
//!   `_get_model_and_main_params_data_float16`: `model_param.data`, `main_param.data`: 2); and
//!   `zero_grad` (`_zero_grad_group_helper`, l. 59–78, over the model and the main groups: the
//!   model's `grad` read, the main's read and set to `None`: 3) — 14;
//! * per step, [`LAUNCHES_PER_STEP`] calls that launch a kernel: `get_grad_norm_fp32`
//!   (`clip_grads.py` l. 108–140: two `torch.zeros`, `multi_tensor_l2norm`, `** 2`, the
//!   all-reduce, `.pow(1/2)`: 6), the clip (l. 179–193: `torch.zeros`, `+ 1e-6`, the division,
//!   `clamp_max_`, `multi_tensor_scale`: 5) and the gradient buffer's `zero_()` of
//!   `zero_grad_buffer` (1): 12; plus the multi-tensor launches of Adam (four lists: at most
//!   [`ADAM_TENSORS_PER_LAUNCH`] tensors each) and of the copy back (two lists:
//!   [`COPY_TENSORS_PER_LAUNCH`]); plus the all-reduce of the norm over the gradient-statistics
//!   group (NCCL's latency of an 8-byte all-reduce, as [`super::step_host`]'s).
//!
//! **Price**: [`BARE_CALL_HOST_S`] per call that launches nothing, [`TORCH_CALL_HOST_S`] per
//! launch, both a DGX H100-class host's, times the part's host speed
//! ([`super::hardware::Hardware::host_op_time_factor`]). What is not counted, so the figure is a
//! floor: the Python of the filters (`get_grads_for_grad_norm`, the grad-norm groups, the
//! `FusedAdam` state lookups and list appends), the timers, the learning-rate scheduler and the
//! training loop's own per-step work. The distributed optimizer's copies go through views of its
//! shards (more calls per tensor, `distrib_optimizer.py`); it is priced with the same count over
//! the tensors its slice spans ([`super::step_host::optimizer_tensors`]).

use super::layout::Layout;
use super::pricing::Pricing;
use super::pricing::TORCH_CALL_HOST_S;
use crate::vocab::CollectiveKind;

/// The host time of a PyTorch call that launches no kernel, defined beside the launching one in
/// [`super::pricing`] (Megatron-FSDP's per-unit calls, an earlier stage, price at it too).
pub use super::pricing::BARE_CALL_HOST_S;

/// PyTorch calls that launch no kernel per parameter tensor the optimizer holds, per step
/// (module docs: 3 + 2 + 4 + 2 + 3) [count].
pub const CALLS_PER_TENSOR: f64 = 14.0;

/// Kernel-launching calls per step whatever the tensor count (module docs: norm 6, clip 5, the
/// gradient buffer's `zero_()` 1) [count].
pub const LAUNCHES_PER_STEP: f64 = 12.0;

/// Tensors per launch of a four-list multi-tensor kernel (Adam's gradients, parameters and two
/// moments): `depth_to_max_tensors[3]` = 36 in Apex's and Transformer Engine's
/// `multi_tensor_apply.cuh` (`{110, 64, 48, 36, 30}` by list depth) [count].
pub const ADAM_TENSORS_PER_LAUNCH: f64 = 36.0;

/// Tensors per launch of a two-list multi-tensor kernel (`multi_tensor_scale`, the copy of the
/// FP32 main parameters into the 16-bit ones): `depth_to_max_tensors[1]` = 64 [count].
pub const COPY_TENSORS_PER_LAUNCH: f64 = 64.0;

/// The host time of Megatron-LM's optimizer step that the device waits for, on the busiest rank
/// of `layout` whose optimizer holds `held_tensors` parameter tensors
/// ([`super::step_host::optimizer_tensors`]) [s]: `(14 · held · 0.91 µs + (12 + ⌈held/36⌉ +
/// ⌈held/64⌉) · 12.9 µs) · host factor` plus the norm's all-reduce over the gradient-statistics
/// group (all ranks with the distributed optimizer, else the model-parallel ranks), when the run
/// logs the zero count (the sync inside the step: module docs); zero otherwise, under another
/// stack or on a part whose runtime launches its own kernels.
pub fn optimizer_host_s(p: &Pricing, layout: &Layout, held_tensors: f64) -> f64 {
    let opts = p.opts;
    if !(p.hw.host_launched && opts.stack == super::Stack::Megatron && opts.log_num_zeros_in_grad) {
        return 0.0;
    }
    let held = held_tensors.max(0.0);
    let launches =
        LAUNCHES_PER_STEP + (held / ADAM_TENSORS_PER_LAUNCH).ceil() + (held / COPY_TENSORS_PER_LAUNCH).ceil();
    let host = (CALLS_PER_TENSOR * held * BARE_CALL_HOST_S + launches * TORCH_CALL_HOST_S) * p.hw.host_op_time_factor;
    let model_parallel = layout.tp * layout.pp;
    let stats = if opts.sharding.shards_optimizer() { model_parallel * layout.dp * layout.cp } else { model_parallel };
    host + small_all_reduce_s(p, stats)
}

/// NCCL's time for an all-reduce of one 8-byte statistic over `group` ranks of a layout's
/// placement (zero for one rank) [s]; [`super::step_host`]'s statistics reduce with it too.
pub fn small_all_reduce_s(p: &Pricing, group: u64) -> f64 {
    if group <= 1 {
        return 0.0;
    }
    let share = group.min(p.hw.domain_size().max(1));
    p.collective(CollectiveKind::AllReduce, 8e-9, group, share)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::extended::{Sharding, Stack};

    #[test]
    fn the_optimizers_walk_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let layout = Layout::placed(1, 1, 1, 8, 4, 32, 8);
        // Megatron's defaults log no zero count: nothing exposed.
        let off = ExtendedOptions { sharding: Sharding::Ddp, ..ExtendedOptions::realistic() };
        assert_eq!(optimizer_host_s(&Pricing { hw: &hw, opts: &off }, &layout, 150.0), 0.0);
        // With it, 150 tensors on TP 1 × PP 1 (a statistics group of one rank: no latency):
        // 14 · 150 · 0.91 µs = 1,911 µs; launches 12 + ⌈150/36⌉ + ⌈150/64⌉ = 12 + 5 + 3 = 20,
        // · 12.9 µs = 258 µs; 2,169 µs in all, times the host factor.
        let on = ExtendedOptions { log_num_zeros_in_grad: true, ..off };
        let p = Pricing { hw: &hw, opts: &on };
        let want = 2169e-6 * hw.host_op_time_factor;
        assert!(
            (optimizer_host_s(&p, &layout, 150.0) - want).abs() < 1e-12,
            "{}",
            optimizer_host_s(&p, &layout, 150.0)
        );
        // The distributed optimizer's statistics reduce over all 8 ranks: one 8-byte all-reduce
        // more; 31 tensors: 14 · 31 · 0.91 = 394.94 µs, launches 12 + 1 + 1 = 14 → 180.6 µs.
        let dist = ExtendedOptions { sharding: Sharding::Zero1, ..on };
        let p = Pricing { hw: &hw, opts: &dist };
        let reduce = p.collective(CollectiveKind::AllReduce, 8e-9, 8, 8);
        let want = 575.54e-6 * hw.host_op_time_factor + reduce;
        assert!((optimizer_host_s(&p, &layout, 31.0) - want).abs() < 1e-12);
        // Another stack: not Megatron's optimizer.
        let ds = ExtendedOptions { stack: Stack::DeepSpeed, ..on };
        assert_eq!(optimizer_host_s(&Pricing { hw: &hw, opts: &ds }, &layout, 150.0), 0.0);
    }
}
