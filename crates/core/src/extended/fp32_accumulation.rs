//! The FP32 gradient accumulation of a stack that keeps its gradients in a separate FP32 buffer
//! and adds each micro-batch's 16-bit gradients into it after the backward, one kernel per
//! parameter tensor — Hugging Face's nanotron with `accumulate_grad_in_fp32` (the Ultra-Scale
//! Playbook's benchmark configuration, huggingface/bench_cluster @ f55b5e5,
//! `bench_cluster/template/base_config.py` l. 36: `'accumulate_grad_in_fp32': True`, l. 37
//! `'clip_grad': 1.0`) — and the per-step passes over that buffer. What it costs beyond the
//! optimizer's own step ([`super::iteration::OPTIMIZER_BYTES_PER_PARAMETER`]), counted from
//! huggingface/nanotron at commit 2411b022a75fb7f7561a1bb4166706da5e1b76de:
//!
//! * **Every micro-batch** (`src/nanotron/optim/gradient_accumulator.py`,
//!   `FP32GradientAccumulator.backward` l. 206–212 → `_accumulate_grad` l. 214–226:
//!   `fp32_grad.add_(half_param.grad)` for every parameter tensor of the rank after
//!   `loss.backward()`, on every pipeline stage: `PipelineEngine.backward`,
//!   `src/nanotron/parallel/pipeline_parallel/engine.py` l. 70–89; on the step's last micro-batch
//!   DDP's bucket hook `get_fp32_accum_hook`, l. 343–346, runs the same `add_` per parameter): read the 16-bit gradient (2 B), read and
//!   write the FP32 one (8 B) — [`ACCUMULATE_BYTES_PER_PARAMETER`] per parameter of the device's
//!   model part, unsharded under ZeRO-1 (the buffer holds every parameter, l. 159–170), and one
//!   kernel launched from Python per tensor. The kernels run on the compute stream after the
//!   backward's: exposed.
//! * **Every step** (`src/nanotron/trainer.py`, `training_step` l. 604–727):
//!   - `clip_grad_norm` (`src/nanotron/optim/clip_grads.py` l. 14–97, over the FP32 buffer of
//!     every parameter): a `torch.linalg.vector_norm` per tensor (l. 67, read 4 B) and a `mul_`
//!     per tensor (l. 93, read and write 8 B) — [`CLIP_BYTES_PER_PARAMETER`], two launches per tensor;
//!   - `FP32GradientAccumulator.step` (l. 255–267): `half_param.copy_(fp32_param)` per tensor the
//!     optimizer updates — read 4 B (the 16-bit write is the optimizer's 2 B) per parameter it
//!     holds, one launch per tensor ([`COPY_READ_BYTES_PER_PARAMETER`]);
//!   - `FP32GradientAccumulator.zero_grad` (l. 269–281): one `zero_()` of the whole contiguous
//!     buffer — write 4 B per parameter ([`ZERO_BYTES_PER_PARAMETER`]).
//!
//! Each loop costs the larger of its HBM traffic ([`super::pricing::Pricing::traffic`]) and its
//! launches' host time at [`super::step_host::TORCH_CALL_HOST_S`] per call (one Python call and
//! one kernel launch per tensor: the GPU waits for the CPU when the kernels are small). Not
//! fitted: byte and call counts from the source, the per-call time from NVIDIA's launch
//! benchmark (see [`super::step_host::TORCH_CALL_HOST_S`]).
//!
//! Parameter tensors of nanotron's Llama (`src/nanotron/models/llama.py`): per decoder layer
//! `qkv_proj` and `gate_up_proj` (fused, l. 388, 227), `o_proj`, `down_proj` (l. 418, 237) and
//! the two RMS norms (l. 729, 737), no biases — [`TENSORS_PER_BLOCK`]; the first stage adds the
//! token embedding (l. 788), the last the final norm and the output head (l. 873, 881; the head
//! is the embedding itself when tied on a single stage).

use super::pricing::Pricing;
use super::step_host::TORCH_CALL_HOST_S;

/// Bytes of HBM traffic per parameter of one micro-batch's accumulation: read the 16-bit
/// gradient (2 B), read and write the FP32 gradient (4 + 4 B).
pub const ACCUMULATE_BYTES_PER_PARAMETER: f64 = 10.0;

/// Bytes per parameter of the gradient clipping over the FP32 buffer: the norm reads it (4 B),
/// the scaling reads and writes it (8 B).
pub const CLIP_BYTES_PER_PARAMETER: f64 = 12.0;

/// Bytes per parameter of zeroing the FP32 buffer after the step (a write of 4 B).
pub const ZERO_BYTES_PER_PARAMETER: f64 = 4.0;

/// Bytes per optimizer-held parameter of copying the FP32 master weight into the 16-bit one
/// beyond the optimizer step's own count: the 4-byte read (the 2-byte write is in
/// [`super::iteration::OPTIMIZER_BYTES_PER_PARAMETER`]).
pub const COPY_READ_BYTES_PER_PARAMETER: f64 = 4.0;

/// Kernel launches per parameter tensor per step: the clipping's norm and scaling (2) and the
/// copy into the 16-bit weight (1).
pub const STEP_CALLS_PER_TENSOR: f64 = 3.0;

/// Parameter tensors of one nanotron Llama decoder layer: fused QKV, output projection, fused
/// gate/up, down projection, two RMS norms [count].
pub const TENSORS_PER_BLOCK: f64 = 6.0;

/// The cost of the FP32 accumulation on one device [s].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Fp32Accumulation {
    /// Per micro-batch: the `add_` of every 16-bit gradient into the FP32 buffer [s].
    pub per_microbatch_s: f64,
    /// Per step: clipping over the buffer, the copy into the 16-bit weights, zeroing [s].
    pub per_step_s: f64,
}

/// What one device holds for the accumulation: its parameter tensors and parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Holding {
    /// Parameter tensors of the device's model part [count].
    pub tensors: f64,
    /// Parameters of the device's model part (tensor- and pipeline-split, not ZeRO-sharded) [count].
    pub parameters: f64,
    /// Parameters whose update the device's optimizer holds (`parameters / shard` under ZeRO-1)
    /// [count].
    pub optimizer_parameters: f64,
}

/// Parameter tensors of a device holding `blocks` decoder layers and the ends named: the token
/// embedding (`first`), the final norm and the head (`last`, the head only when it is a tensor of
/// its own: `untied_head`) [count].
pub fn device_tensors(blocks: u64, first: bool, last: bool, untied_head: bool) -> f64 {
    let mut n = blocks as f64 * TENSORS_PER_BLOCK;
    if first {
        n += 1.0;
    }
    if last {
        n += 1.0 + if untied_head { 1.0 } else { 0.0 };
    }
    n
}

/// The FP32 accumulation's time on a device holding `h` (module documentation), zero on a stack
/// that does not accumulate this way ([`super::Stack::accumulates_in_a_separate_fp32_buffer`]).
pub fn fp32_accumulation(p: &Pricing, h: Holding) -> Fp32Accumulation {
    if !p.opts.stack.accumulates_in_a_separate_fp32_buffer() {
        return Fp32Accumulation::default();
    }
    let call = if p.hw.host_launched { TORCH_CALL_HOST_S * p.hw.host_op_time_factor } else { 0.0 };
    let per_microbatch_s = p.traffic(ACCUMULATE_BYTES_PER_PARAMETER * h.parameters).max(h.tensors * call);
    let step_bytes = (CLIP_BYTES_PER_PARAMETER + ZERO_BYTES_PER_PARAMETER) * h.parameters
        + COPY_READ_BYTES_PER_PARAMETER * h.optimizer_parameters;
    let per_step_s = p.traffic(step_bytes).max(STEP_CALLS_PER_TENSOR * h.tensors * call);
    Fp32Accumulation { per_microbatch_s, per_step_s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::Stack;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;

    #[test]
    fn tensors_by_hand() {
        // 16 layers on one stage with a tied head: 16·6 + 1 (embedding) + 1 (final norm) = 98.
        assert_eq!(device_tensors(16, true, true, false), 98.0);
        // Untied: the head adds one.
        assert_eq!(device_tensors(16, true, true, true), 99.0);
        // A middle stage of 4 layers: 24; the last stage of 4 layers, its own head copy: 26.
        assert_eq!(device_tensors(4, false, false, true), 24.0);
        assert_eq!(device_tensors(4, false, true, true), 26.0);
    }

    #[test]
    fn accumulation_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let megatron = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &megatron };
        let h = Holding { tensors: 98.0, parameters: 1.34e9, optimizer_parameters: 1.34e9 / 8.0 };
        // Megatron fuses the accumulation into its weight-gradient GEMMs: nothing here.
        assert_eq!(fp32_accumulation(&p, h), Fp32Accumulation::default());

        let nano = ExtendedOptions { stack: Stack::Nanotron, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &nano };
        let a = fp32_accumulation(&p, h);
        // 1.34 B parameters: 10 B each per micro-batch = 13.4 GB over the HBM rate.
        let rate = hw.hbm_bandwidth_gbps;
        assert!(rate > 1000.0, "{rate}");
        assert!((a.per_microbatch_s - 13.4 / rate).abs() < 1e-12, "{a:?}");
        // Per step: 16 B per parameter (clip 12, zero 4) plus 4 B per held parameter (1/8 of them):
        // 21.44 + 0.67 = 22.11 GB.
        assert!((a.per_step_s - 22.11 / rate).abs() < 1e-12, "{a:?}");

        // A small model is launch-bound: 98 tensors of 10 parameters take 98 launches per
        // micro-batch and 3·98 per step at 12.9 µs each (times the host's speed).
        let tiny = Holding { tensors: 98.0, parameters: 980.0, optimizer_parameters: 980.0 };
        let a = fp32_accumulation(&p, tiny);
        let call = 12.9e-6 * hw.host_op_time_factor;
        assert!((a.per_microbatch_s - 98.0 * call).abs() < 1e-15, "{a:?}");
        assert!((a.per_step_s - 294.0 * call).abs() < 1e-15, "{a:?}");

        // Without memory-bound pricing only the launches remain.
        let mut off = nano;
        off.hardware.memory_bound_ops = false;
        let p = Pricing { hw: &hw, opts: &off };
        assert!((fp32_accumulation(&p, h).per_microbatch_s - 98.0 * call).abs() < 1e-15);
    }
}
