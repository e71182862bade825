//! Memory per device in extended mode: weights, gradients and optimizer states by ZeRO stage,
//! activations by recomputation mode and pipeline schedule, plus a documented margin for what a
//! framework adds. (The measured runs of the validation set state no memory, so this part is not
//! validated against measurements; it decides feasibility in the search.)
//!
//! Bytes per parameter (mixed-precision Adam as Megatron and FSDP run it): the weights in the stored
//! precision (2 B; 4 B for FP32/TF32 training), FP32 main gradients (4 B), and optimizer states of
//! an FP32 master copy and two Adam moments (12 B; 8 B for FP32 training, whose weights are the
//! master copy). ZeRO-1 shards the optimizer states, ZeRO-2 also the gradients, ZeRO-3 also the
//! weights (plus two blocks' gathered weights in flight, the one computing and the one prefetched).
//!
//! Activations (1F1B, Narayanan et al. 2021): the first stage holds `min(nmb, pp)` micro-batches,
//! `(1 + (pp − 1)/(pp·v))` times that with `v`-way interleaving; each holds what the recomputation
//! mode keeps of every local block, plus one block's full activations while it is recomputed.

use super::block::BlockCost;
use super::data_parallel::{DpGroups, GRADIENT_BYTES};
use super::head::EndCost;
use super::options::{ExtendedOptions, Recompute, Sharding};

/// Runtime context per device [GB]: the CUDA (or other runtime) context with its kernel images,
/// library workspaces (cuBLAS, cuDNN) and the collective library's buffers. An engineering
/// margin: PyTorch reports a CUDA context of several hundred MB, NCCL buffers of a few MB per
/// channel and peer; 1 GB covers both with room.
pub const OVERHEAD_FIXED_GB: f64 = 1.0;

/// Allocator fragmentation and transient buffers as a fraction of the modelled tensors (the
/// caching allocator's reserved-but-unused memory, typically a few to ten percent).
pub const OVERHEAD_FRACTION: f64 = 0.05;

/// Memory of one device [GB].
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct DeviceMemory {
    /// Weights (sharded under ZeRO-3, plus the gathered blocks in flight).
    pub weights_gb: f64,
    /// Gradients.
    pub gradients_gb: f64,
    /// Optimizer states.
    pub optimizer_gb: f64,
    /// Activations in flight.
    pub activations_gb: f64,
    /// Framework margin.
    pub overhead_gb: f64,
}

impl DeviceMemory {
    /// Everything [GB].
    pub fn total(&self) -> f64 {
        self.weights_gb + self.gradients_gb + self.optimizer_gb + self.activations_gb + self.overhead_gb
    }
}

/// One device's share of the work, as memory needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeviceLoad<'a> {
    /// Blocks on the device.
    pub blocks: u64,
    /// Embedding and/or head on the device (zero cost when absent).
    pub ends: &'a [EndCost],
    /// Micro-batches in flight on the device (fractional with interleaving).
    pub in_flight: f64,
}

/// Memory of a device holding `load` of the model (see the module documentation).
pub fn device_memory(
    block: &BlockCost,
    load: &DeviceLoad,
    groups: &DpGroups,
    opts: &ExtendedOptions,
    element_bytes: f64,
) -> DeviceMemory {
    let ends_params: f64 = load.ends.iter().map(|e| e.parameters).sum();
    let ends_acts: f64 = load.ends.iter().map(|e| e.activation_bytes).sum();
    let params = load.blocks as f64 * block.parameters + ends_params;
    let shard = groups.shard as f64;
    let optimizer_bytes = if element_bytes >= 4.0 { 8.0 } else { 12.0 };
    let s = opts.sharding;
    let mut weights = params * element_bytes;
    if s == Sharding::Zero3 {
        weights = weights / shard + 2.0 * block.parameters * element_bytes;
    }
    let gradients = params * GRADIENT_BYTES / if s.shards_gradients() { shard } else { 1.0 };
    let optimizer = params * optimizer_bytes / if s.shards_optimizer() { shard } else { 1.0 };
    let working = if opts.recompute == Recompute::Full { block.activation_bytes } else { 0.0 };
    let activations = load.in_flight * (load.blocks as f64 * block.kept_bytes(opts.recompute) + ends_acts) + working;
    let gb = 1e-9;
    let subtotal = (weights + gradients + optimizer + activations) * gb;
    let overhead = if opts.memory_overheads { OVERHEAD_FIXED_GB + OVERHEAD_FRACTION * subtotal } else { 0.0 };
    DeviceMemory {
        weights_gb: weights * gb,
        gradients_gb: gradients * gb,
        optimizer_gb: optimizer * gb,
        activations_gb: activations * gb,
        overhead_gb: overhead,
    }
}

/// Micro-batches the first pipeline stage holds under 1F1B with `v`-way interleaving.
pub fn first_stage_in_flight(microbatches: u64, pp: u64, interleave: u64) -> f64 {
    let base = microbatches.min(pp).max(1) as f64;
    if interleave > 1 && pp > 1 { base * (1.0 + (pp - 1) as f64 / (pp * interleave) as f64) } else { base }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extended::layout::Layout;

    fn block() -> BlockCost {
        BlockCost { parameters: 1e9, activation_bytes: 4e9, input_bytes: 1e8, ..BlockCost::default() }
    }

    fn mem(sharding: Sharding, recompute: Recompute, dp: u64) -> DeviceMemory {
        let opts = ExtendedOptions { sharding, recompute, memory_overheads: false, ..ExtendedOptions::realistic() };
        let layout = Layout::placed(1, 1, 1, dp, 1, dp, 8);
        let groups = DpGroups::of(&layout, &opts).unwrap();
        let load = DeviceLoad { blocks: 10, ends: &[], in_flight: 1.0 };
        device_memory(&block(), &load, &groups, &opts, 2.0)
    }

    fn close(got: &[f64], want: &[f64]) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9 * w.abs().max(1.0), "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn zero_stages_shard_by_dp() {
        let z0 = mem(Sharding::Ddp, Recompute::None, 8);
        close(&[z0.weights_gb, z0.gradients_gb, z0.optimizer_gb], &[20.0, 40.0, 120.0]);
        let z1 = mem(Sharding::Zero1, Recompute::None, 8);
        close(&[z1.weights_gb, z1.gradients_gb, z1.optimizer_gb], &[20.0, 40.0, 15.0]);
        let z2 = mem(Sharding::Zero2, Recompute::None, 8);
        close(&[z2.gradients_gb, z2.optimizer_gb], &[5.0, 15.0]);
        // ZeRO-3 divides the weights by dp (plus two gathered blocks of 2 GB each).
        let z3 = mem(Sharding::Zero3, Recompute::None, 8);
        close(&[z3.weights_gb, z3.activations_gb], &[20.0 / 8.0 + 4.0, 40.0]);
    }

    #[test]
    fn full_recompute_keeps_inputs_and_one_working_block() {
        let full = mem(Sharding::Zero1, Recompute::Full, 8);
        assert!((full.activations_gb - (10.0 * 0.1 + 4.0)).abs() < 1e-12);
        assert_eq!(first_stage_in_flight(64, 8, 1), 8.0);
        assert_eq!(first_stage_in_flight(4, 8, 1), 4.0);
        assert_eq!(first_stage_in_flight(64, 8, 2), 8.0 * (1.0 + 7.0 / 16.0));
        let with_margin = ExtendedOptions::realistic();
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let groups = DpGroups::of(&layout, &with_margin).unwrap();
        let load = DeviceLoad { blocks: 10, ends: &[], in_flight: 1.0 };
        let m = device_memory(&block(), &load, &groups, &with_margin, 2.0);
        let sub = m.weights_gb + m.gradients_gb + m.optimizer_gb + m.activations_gb;
        assert!((m.overhead_gb - (OVERHEAD_FIXED_GB + OVERHEAD_FRACTION * sub)).abs() < 1e-12);
    }
}
