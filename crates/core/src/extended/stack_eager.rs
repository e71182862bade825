//! The Hugging Face Trainer's own step under PyTorch's native AMP and DDP (switch
//! [`super::ExtendedOptions::hf_trainer_step`]): what a Trainer of transformers before 4.32
//! runs around the model that a fused, flat-buffer stack (Megatron, DeepSpeed) does not — an
//! unfused Adam walked tensor by tensor from Python, the loss scaler's unscale and the gradient
//! clipping over FP32 gradients, `zero_grad`, DDP's copies in and out of its gradient buckets,
//! and, every micro-batch, autocast's casts of the FP32 weights and the accumulation of each
//! gradient into its `.grad`. Counted from the sources at the versions of the DeepSpeedExamples
//! autotuning runs (`tests/data/stacks-not-met-runs.json`: transformers 4.12, PyTorch 1.9/1.10)
//! and priced at the shipped per-call figures and the HBM rate: not fitted.
//!
//! **The loop** (huggingface/transformers v4.12.0 `src/transformers/trainer.py`, `Trainer.train`,
//! the step after the last micro-batch's backward, without DeepSpeed): `self.scaler.unscale_(…)`
//! (with `--fp16` the Trainer uses native AMP on PyTorch ≥ 1.6), `nn.utils.clip_grad_norm_(model
//! .parameters(), max_grad_norm)` (`max_grad_norm` 1.0 by default), `scale_before =
//! self.scaler.get_scale()`, `self.scaler.step(self.optimizer)`, `self.scaler.update()`,
//! `scale_after = self.scaler.get_scale()`, `lr_scheduler.step()`, `model.zero_grad()`. The
//! optimizer is transformers' own `AdamW` (`src/transformers/optimization.py`; `--optim
//! adamw_hf`, the default until huggingface/transformers#25109, merged 2023-07-26 for 4.32, made
//! it `adamw_torch`). Each `get_scale()` is a `.item()` and `scaler.step` reads `found_inf` with
//! `.item()` before it calls the optimizer (torch/cuda/amp/grad_scaler.py): the device has drained
//! its queue when each phase starts, so a phase costs the larger of its launches' host time and
//! its kernels' HBM traffic — the clip with the unscale, Adam, then `zero_grad` before the next
//! forward is issued.
//!
//! **Counts** per parameter tensor (FP32 parameters and gradients, autocast over them):
//! * `AdamW.step`: [`ADAMW_LAUNCHES_PER_TENSOR`] kernels — `exp_avg.mul_(β1).add_(grad)`,
//!   `exp_avg_sq.mul_(β2).addcmul_(grad, grad)`, `exp_avg_sq.sqrt().add_(eps)`,
//!   `p.data.addcdiv_(exp_avg, denom)` (the decoupled weight decay's `p.data.add_` runs only with
//!   `weight_decay > 0`; the Trainer's default is 0.0) — and [`ADAMW_BARE_CALLS_PER_TENSOR`] calls
//!   that launch none (`p.grad` twice, `.data`, `grad.is_sparse`, `p.data`); HBM
//!   [`ADAMW_BYTES_PER_PARAMETER`];
//! * `clip_grad_norm_` (PyTorch 1.9/1.10 `torch/nn/utils/clip_grad.py`, no foreach path yet): a
//!   `torch.norm(p.grad.detach())` and a `p.grad.detach().mul_(clip_coef_clamped.to(…))` per
//!   tensor — [`CLIP_LAUNCHES_PER_TENSOR`], [`CLIP_BARE_CALLS_PER_TENSOR`] (`p.grad`, two
//!   `.detach()`, two `.to()`), HBM 12 B per parameter (the norm reads 4 B, the scaling reads and
//!   writes 8 B: nanotron's clip over its FP32 buffer moves the same,
//!   [`super::fp32_accumulation::CLIP_BYTES_PER_PARAMETER`]);
//! * `GradScaler.unscale_`: the gradients grouped by device and dtype in Python
//!   ([`UNSCALE_BARE_CALLS_PER_TENSOR`]: `param.grad` three times, `.dtype` twice, `.is_sparse`,
//!   `.device`), then `torch._amp_foreach_non_finite_check_and_unscale_`, a multi-tensor kernel of
//!   one list ([`FOREACH_TENSORS_PER_LAUNCH`] tensors a launch) reading and writing each FP32
//!   gradient: [`UNSCALE_BYTES_PER_PARAMETER`];
//! * `nn.Module.zero_grad()` (PyTorch < 2.0: `set_to_none=False`): `p.grad.requires_grad_(False)`
//!   and `p.grad.zero_()` — one kernel, [`ZERO_GRAD_BARE_CALLS_PER_TENSOR`] calls, a 4-byte write
//!   ([`super::fp32_accumulation::ZERO_BYTES_PER_PARAMETER`]);
//! * per step [`LAUNCHES_PER_STEP`]: the clip's `torch.stack`, total `torch.norm`, `+ 1e-6`,
//!   division and `clamp` (5); the scaler's inverse scale (`double().reciprocal().float()`, 3),
//!   `found_inf`'s `torch.full`, its `.item()`, `_amp_update_scale_` and the two `get_scale()`
//!   `.item()` copies (5).
//!
//! **DDP** (PyTorch 1.10 `torch/csrc/distributed/c10d/reducer.cpp`, `gradient_as_bucket_view`
//! off, its default): each gradient is copied into its bucket scaled by `1/world size`
//! (`mark_variable_ready_dense`: `at::mul_out(bucket_view, grad, …)`, read and write 4 B) and the
//! all-reduced bucket copied back into the gradient (`finalize_bucket_dense`: `grad.copy_(…)`, 8 B):
//! [`DDP_BUCKET_BYTES_PER_PARAMETER`] on the micro-batch that synchronises (one per step here).
//!
//! **Every micro-batch**: autocast casts each FP32 weight and bias an `addmm`/`linear` reads to
//! FP16 once per forward (read 4, write 2 B) and the cast's backward turns the FP16 gradient back
//! to FP32 (read 2, write 4 B); the autograd engine then adds it into the zeroed `.grad`
//! (`AccumulateGrad`: `variable_grad += new_grad`, read 4 + 4, write 4 B):
//! [`MICROBATCH_BYTES_PER_PARAMETER`]. Counted over every parameter (the position embedding and
//! the norms, which autocast does not cast, are under 0.5 % of a GPT-2's). Their launches ride in
//! the passes, behind the device's queue: not priced as host time.
//!
//! What is not counted, so the figure is a floor: the Trainer's per-micro-batch
//! `torch.isnan(loss)` sync (`logging_nan_inf_filter`), the learning-rate scheduler, the
//! callbacks, and the slower host of a V100-era server (the part's host factor, where the catalog
//! states none, is 1).

use super::fp32_accumulation::{CLIP_BYTES_PER_PARAMETER, Holding, ZERO_BYTES_PER_PARAMETER};
use super::pricing::Pricing;
use super::pricing::{BARE_CALL_HOST_S, TORCH_CALL_HOST_S};

/// Kernels `AdamW.step` launches per parameter tensor (module docs: 2 + 2 + 2 + 1) [count].
pub const ADAMW_LAUNCHES_PER_TENSOR: f64 = 7.0;

/// Calls per parameter tensor of `AdamW.step` that launch no kernel (module docs) [count].
pub const ADAMW_BARE_CALLS_PER_TENSOR: f64 = 5.0;

/// HBM traffic of `AdamW.step` per parameter, all FP32 [B]: `exp_avg.mul_` 8, `.add_(grad)` 12,
/// `exp_avg_sq.mul_` 8, `.addcmul_(grad, grad)` 12 (the gradient read once), `sqrt()` into a new
/// tensor 8, `.add_(eps)` 8, `p.data.addcdiv_` 16 (read the parameter, moment and denominator,
/// write the parameter) = 72.
pub const ADAMW_BYTES_PER_PARAMETER: f64 = 72.0;

/// Kernels `clip_grad_norm_` launches per tensor: the norm and the scaling [count].
pub const CLIP_LAUNCHES_PER_TENSOR: f64 = 2.0;

/// Calls per tensor of `clip_grad_norm_` that launch none (module docs) [count].
pub const CLIP_BARE_CALLS_PER_TENSOR: f64 = 5.0;

/// Calls per tensor of `GradScaler.unscale_`'s grouping that launch none (module docs) [count].
pub const UNSCALE_BARE_CALLS_PER_TENSOR: f64 = 7.0;

/// Tensors per launch of a one-list multi-tensor kernel: `depth_to_max_tensors[0]` = 110 in
/// PyTorch's `aten/src/ATen/native/cuda/MultiTensorApply.cuh` (`{110, 64, 48, 36, 30}` by list
/// depth) [count].
pub const FOREACH_TENSORS_PER_LAUNCH: f64 = 110.0;

/// HBM traffic of the unscale per parameter: read and write the FP32 gradient [B].
pub const UNSCALE_BYTES_PER_PARAMETER: f64 = 8.0;

/// Calls per tensor of `zero_grad` that launch none: `p.grad` four times, `.grad_fn`,
/// `requires_grad_` [count].
pub const ZERO_GRAD_BARE_CALLS_PER_TENSOR: f64 = 6.0;

/// Kernel-launching calls per step beyond the per-tensor ones (module docs: 5 + 3 + 5) [count].
pub const LAUNCHES_PER_STEP: f64 = 13.0;

/// HBM traffic of DDP's bucket copies per parameter on the synchronising micro-batch: the scaled
/// copy in (8 B) and the copy back (8 B) [B].
pub const DDP_BUCKET_BYTES_PER_PARAMETER: f64 = 16.0;

/// HBM traffic per parameter and micro-batch of autocast's weight cast (6 B), its backward (6 B)
/// and the gradient's accumulation into `.grad` (12 B) [B].
pub const MICROBATCH_BYTES_PER_PARAMETER: f64 = 24.0;

/// The Trainer's own work on one device [s].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrainerStep {
    /// Per micro-batch: autocast's weight casts and the gradients' accumulation [s].
    pub per_microbatch_s: f64,
    /// Per step: unscale and clip, Adam, `zero_grad`, DDP's bucket copies — in place of the fused
    /// step's traffic [s].
    pub per_step_s: f64,
}

/// The Trainer's work on a device holding `h` ([`Holding`]: its parameter tensors, parameters and
/// the parameters its optimizer updates), or `None` where the switch is off (the stack's fused
/// step is priced instead). Each phase is the larger of its host time (launches at
/// [`TORCH_CALL_HOST_S`], other calls at [`BARE_CALL_HOST_S`], times the host's speed) and its
/// HBM traffic (module docs).
pub fn trainer_step(p: &Pricing, h: Holding) -> Option<TrainerStep> {
    if !p.opts.hf_trainer_step {
        return None;
    }
    let factor = if p.hw.host_launched { p.hw.host_op_time_factor } else { 0.0 };
    let host = |launches: f64, bare: f64| (launches * TORCH_CALL_HOST_S + bare * BARE_CALL_HOST_S) * factor;
    let n = h.tensors;
    let clip = host(
        n * CLIP_LAUNCHES_PER_TENSOR + (n / FOREACH_TENSORS_PER_LAUNCH).ceil() + LAUNCHES_PER_STEP,
        n * (CLIP_BARE_CALLS_PER_TENSOR + UNSCALE_BARE_CALLS_PER_TENSOR),
    )
    .max(p.traffic((CLIP_BYTES_PER_PARAMETER + UNSCALE_BYTES_PER_PARAMETER) * h.parameters));
    let adam = host(n * ADAMW_LAUNCHES_PER_TENSOR, n * ADAMW_BARE_CALLS_PER_TENSOR)
        .max(p.traffic(ADAMW_BYTES_PER_PARAMETER * h.optimizer_parameters));
    let zero = host(n, n * ZERO_GRAD_BARE_CALLS_PER_TENSOR).max(p.traffic(ZERO_BYTES_PER_PARAMETER * h.parameters));
    let buckets = p.traffic(DDP_BUCKET_BYTES_PER_PARAMETER * h.parameters);
    Some(TrainerStep {
        per_microbatch_s: p.traffic(MICROBATCH_BYTES_PER_PARAMETER * h.parameters),
        per_step_s: clip + adam + zero + buckets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    #[test]
    fn the_trainers_step_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let off = ExtendedOptions::realistic();
        let h = Holding { tensors: 438.0, parameters: 774e6, optimizer_parameters: 774e6 };
        assert_eq!(trainer_step(&Pricing { hw: &hw, opts: &off }, h), None, "off by default");

        let on = ExtendedOptions { hf_trainer_step: true, ..off };
        let p = Pricing { hw: &hw, opts: &on };
        let rate = hw.hbm_bandwidth_gbps;
        let f = hw.host_op_time_factor;
        // GPT-2 large's 774 M parameters in 438 tensors (36 blocks of 12, six more): every phase is
        // HBM-bound on this part.
        let s = trainer_step(&p, h).unwrap();
        // Per micro-batch: 24 B · 774e6 = 18.576 GB.
        close(s.per_microbatch_s, 18.576 / rate);
        // Per step: clip + unscale 20 B, Adam 72 B, zero 4 B, buckets 16 B = 112 B · 774e6 =
        // 86.688 GB. The host's share: clip and unscale 438·2 + ⌈438/110⌉ + 13 = 893 launches and
        // 438·(5 + 7) = 5,256 calls = 11.52 + 4.78 = 16.3 ms (times the host factor) against
        // 15.48 GB; Adam 438·7 = 3,066 launches and 438·5 = 2,190 calls = 39.55 + 1.99 = 41.5 ms
        // against 55.728 GB; zero_grad 438 launches and 2,628 calls against 3.096 GB; the buckets'
        // 12.384 GB are device work only. On H200's HBM the clip and Adam are host-bound.
        let clip_host = (893.0 * 12.9e-6 + 438.0 * 12.0 * 0.91e-6) * f;
        let adam_host = (3066.0 * 12.9e-6 + 2190.0 * 0.91e-6) * f;
        let zero_host = (438.0 * 12.9e-6 + 438.0 * 6.0 * 0.91e-6) * f;
        let want =
            clip_host.max(15.48 / rate) + adam_host.max(55.728 / rate) + zero_host.max(3.096 / rate) + 12.384 / rate;
        close(s.per_step_s, want);
        assert!(clip_host > 15.48 / rate && adam_host > 55.728 / rate, "host-bound on H200");

        // On a V100's 900 GB/s the same step is HBM-bound in Adam: 55.728 GB / 900 GB/s = 61.9 ms
        // against 41.5 ms of host time.
        let v100 = Hardware { hbm_bandwidth_gbps: 900.0, ..hw.clone() };
        let s = trainer_step(&Pricing { hw: &v100, opts: &on }, h).unwrap();
        let want = clip_host.max(15.48 / 900.0) + 55.728 / 900.0 + zero_host.max(3.096 / 900.0) + 12.384 / 900.0;
        close(s.per_step_s, want);
    }
}
