//! The model states a device keeps in extended mode: bytes of weights, gradients and optimizer
//! states per parameter, sharded as the data-parallel sharding says, and ZeRO-3's gathered
//! 16-bit weights ([`model_states`]); [`super::memory`] places them in each pipeline stage's
//! peak. Units: bytes (B) and parameters [count].
//!
//! Sources (bytes per parameter `P` on the device after tensor and pipeline splits; `d` the ZeRO
//! shard group): Megatron-LM's distributed-optimizer table and ZeRO (Rajbhandari et al. 2020):
//! mixed precision keeps 16-bit weights (2 B), FP32 main gradients (4 B; 2 B when the gradients
//! are reduced in 16 bits, Megatron Core's `grad_reduce_in_fp32=False`; FP16 training keeps FP16
//! gradients and an FP32 copy in the optimizer, 2 + 4/d) and an FP32 master copy with two Adam
//! moments (12 B); FP32 training, and 16-bit autocast over FP32 parameters, 4 + 4 + 8 (the
//! latter's ZeRO-3 gathers in FP32, [`gathered_bytes`]); pure BF16 (no master) 2 + 2 + 4; BF16
//! moments beside FP32 master weights 4 + 2 + 2 (DeepSeek-V3 §3.3.3). ZeRO-1 divides the optimizer by `d`,
//! ZeRO-2 also the gradients (except FSDP2 under pipelining, which accumulates whole FP32
//! gradients between micro-batches); ZeRO-3/FSDP keeps `16/d` (FSDP2's FP32 sharded parameters
//! are the master copy) plus the gathered 16-bit weights. Muon keeps one momentum buffer per
//! matrix where Adam keeps two moments ([`super::muon`]).

use super::hardware::Hardware;
use super::options::{ExtendedOptions, OptimizerStates, Sharding};
use crate::catalog::Precision;

/// Bytes per parameter of (weights, gradients, optimizer states) before sharding, and the
/// optimizer's extra FP32 gradient copy of FP16 training. BF16 mixed precision keeps its
/// gradients in the width they are reduced in ([`super::data_parallel::grad_reduce_bytes`]):
/// FP32 by default (Megatron-LM's `main_grad` with `--accumulate-allreduce-grads-in-fp32`,
/// which `--bf16` turns on), 16-bit when the reduction is in the parameter type (Megatron Core's
/// `grad_reduce_in_fp32=False`: the gradient buffer is allocated in the parameter dtype; the
/// optimizer's FP32 copy of its shard exists only during the step, after the activations are
/// freed).
pub(super) fn state_bytes(hw: &Hardware, opts: &ExtendedOptions) -> (f64, f64, f64) {
    let eb = hw.element_bytes;
    match opts.optimizer_states {
        OptimizerStates::PureBf16 => (eb, eb, 2.0 * eb),
        OptimizerStates::Fp32Master if eb >= 4.0 || opts.fp32_params_autocast => (4.0, 4.0, 8.0),
        OptimizerStates::Fp32Master if hw.attention_precision == Precision::Fp16 => (eb, eb, 16.0),
        OptimizerStates::Fp32Master => (eb, super::data_parallel::grad_reduce_bytes(hw, opts), 12.0),
        // FP32 master (4 B) and two BF16 moments (2 + 2 B).
        OptimizerStates::Bf16Moments => (eb, super::data_parallel::grad_reduce_bytes(hw, opts), 8.0),
    }
}

/// Bytes per parameter of ZeRO-3's gathered weights: the compute width (FSDP's mixed-precision
/// `param_dtype`), or FP32 under autocast over FP32 parameters
/// ([`ExtendedOptions::fp32_params_autocast`]: FSDP without a mixed-precision policy gathers the
/// parameters in their own dtype).
pub(super) fn gathered_bytes(hw: &Hardware, opts: &ExtendedOptions) -> f64 {
    if opts.fp32_params_autocast { 4.0_f64.max(hw.element_bytes) } else { hw.element_bytes }
}

/// The optimizer-state bytes Muon saves on `matrices` matrix parameters sharded over `d` (when the
/// sharding shards optimizer states) [B]: one Adam moment each ([`super::muon`]: Muon keeps one
/// momentum buffer per matrix, Adam two moments); 0 under Adam.
pub(super) fn muon_momentum_saving(opts: &ExtendedOptions, hw: &Hardware, matrices: f64, d: f64) -> f64 {
    if !opts.optimizer.is_muon() {
        return 0.0;
    }
    let moment = match opts.optimizer_states {
        OptimizerStates::PureBf16 => hw.element_bytes,
        OptimizerStates::Bf16Moments => 2.0,
        OptimizerStates::Fp32Master => super::muon::MUON_MOMENTUM_BYTES,
    };
    let div = if opts.sharding.shards_optimizer() { d } else { 1.0 };
    matrices * moment / div
}

/// Bytes of (weights, gradients, optimizer states) of `params` parameters sharded over `d`, and
/// of the gathered 16-bit weights of ZeRO-3's live blocks (`gathered` parameters); `block` is one
/// block's parameters (what the optimizer in the backward holds gradients of).
pub(super) fn model_states(
    hw: &Hardware,
    opts: &ExtendedOptions,
    params: f64,
    d: f64,
    gathered: f64,
    block: f64,
) -> [f64; 4] {
    let (wb, gbytes, ob) = state_bytes(hw, opts);
    let buffer = opts.grad_accumulation_buffer && gbytes >= 4.0;
    match opts.sharding {
        Sharding::Zero3 => {
            // FSDP2 with a mixed-precision policy: the sharded FP32 parameters are the master copy.
            // BF16 moments: the sharded FP32 parameters are the master copy, the moments 2 + 2 B.
            let (w_sh, o_sh, g_sh) = match opts.optimizer_states {
                OptimizerStates::PureBf16 => (wb, ob, gbytes),
                OptimizerStates::Bf16Moments => (4.0, 4.0, 4.0),
                OptimizerStates::Fp32Master => (4.0, 8.0, 4.0),
            };
            [params * w_sh / d, params * g_sh / d, params * o_sh / d, gathered * gathered_bytes(hw, opts)]
        }
        s => {
            // A gradient-accumulation buffer: beside replicated 16-bit gradients, DeepSpeed's
            // FP32 buffer (16-bit + FP32, both whole); with sharded gradients, the whole FP32
            // accumulator that FSDP2 keeps between pipeline micro-batches until the one
            // reduce-scatter (the 16-bit gradient of a block is upcast into it and freed).
            let (gbytes, g_div) = match (buffer, s.shards_gradients()) {
                (true, true) => (gbytes, 1.0),
                (true, false) => (gbytes + hw.element_bytes, 1.0),
                (false, true) => (gbytes, d),
                (false, false) => (gbytes, 1.0),
            };
            // Optimizer in backward: one block's gradients at a time.
            let g_params = if opts.optimizer_in_backward { block.min(params) } else { params };
            let o_div = if s.shards_optimizer() { d } else { 1.0 };
            [params * wb, g_params * gbytes / g_div, params * ob / o_div, 0.0]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extended::layout::Layout;
    use crate::extended::memory::tests::estimate;
    use crate::extended::options::HardwareChoices;
    use crate::extended::workload::Workload;

    #[test]
    fn muon_keeps_one_momentum_for_the_matrices() {
        // Llama 3 8B blocks: the matrices are 4096·(4096 + 2·1024 + 4096) + 3·4096·14336 =
        // 218,103,808 per block, all of the block but its two norms (8,192). Muon keeps one FP32
        // momentum where Adam keeps two moments: 4 B per matrix parameter less, over the 8
        // optimizer shards of ZeRO-1, on every rank without them.
        let matrices = 32.0 * 218_103_808.0;
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let base = ExtendedOptions {
            hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
            ..ExtendedOptions::realistic()
        };
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9 * b, "{a} vs {b}");
        for (sharding, shards) in [(Sharding::Zero1, 8.0), (Sharding::Ddp, 1.0)] {
            let adam = estimate(ExtendedOptions { sharding, ..base }, layout);
            let muon = estimate(
                ExtendedOptions { sharding, optimizer: crate::extended::muon::Optimizer::Muon, ..base },
                layout,
            );
            close(adam.part("optimizer_states") - muon.part("optimizer_states"), matrices * 4.0 / shards * 1e-9);
            close(muon.part("weights") + muon.part("gradients"), adam.part("weights") + adam.part("gradients"));
        }
    }

    #[test]
    fn states_by_hand() {
        // Llama 3 8B blocks only (32 × 218.1 M parameters), 8 replicas, no overheads.
        let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
        let params = 32.0 * w.block_parameters(true, true);
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let base = ExtendedOptions {
            hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
            ..ExtendedOptions::realistic()
        };
        let z1 = estimate(ExtendedOptions { sharding: Sharding::Zero1, ..base }, layout);
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9 * b, "{a} vs {b}");
        // Megatron distributed optimizer, BF16: 6 + 12/d bytes per parameter.
        close(
            z1.part("weights") + z1.part("gradients") + z1.part("optimizer_states"),
            params * (6.0 + 12.0 / 8.0) * 1e-9,
        );
        // FSDP: 16/d plus the last block gathered at the loss (2 B per parameter); every block
        // without resharding.
        let z3 = estimate(ExtendedOptions { sharding: Sharding::Zero3, ..base }, layout);
        close(z3.part("weights") + z3.part("gradients") + z3.part("optimizer_states"), params * 16.0 / 8.0 * 1e-9);
        close(z3.part("gathered_layers"), w.block_parameters(true, true) * 2.0 * 1e-9);
        let kept =
            estimate(ExtendedOptions { sharding: Sharding::Zero3, reshard_after_forward: false, ..base }, layout);
        close(kept.part("gathered_layers"), params * 2.0 * 1e-9);
        // Pure BF16 without master weights: 2 + 2 + 4 bytes.
        let pure = estimate(
            ExtendedOptions { sharding: Sharding::Ddp, optimizer_states: OptimizerStates::PureBf16, ..base },
            layout,
        );
        close(pure.part("weights") + pure.part("gradients") + pure.part("optimizer_states"), params * 8.0 * 1e-9);
        // BF16 Adam moments beside FP32 master weights and gradients (DeepSeek-V3 §3.3.3): the
        // distributed optimizer keeps 2 B weights, 4 B gradients and (4 + 2 + 2)/d B of states.
        let moments = |sharding| {
            estimate(ExtendedOptions { sharding, optimizer_states: OptimizerStates::Bf16Moments, ..base }, layout)
        };
        let m1 = moments(Sharding::Zero1);
        close(m1.part("weights") + m1.part("gradients"), params * 6.0 * 1e-9);
        close(m1.part("optimizer_states"), params * 8.0 / 8.0 * 1e-9);
        close(z1.part("optimizer_states") - m1.part("optimizer_states"), params * 4.0 / 8.0 * 1e-9);
        // FSDP: the sharded FP32 parameters are the master, gradients 4 B, moments 2 + 2 B: 12/d.
        let m3 = moments(Sharding::Zero3);
        close(m3.part("weights") + m3.part("gradients") + m3.part("optimizer_states"), params * 12.0 / 8.0 * 1e-9);
        close(m3.part("optimizer_states"), params * 4.0 / 8.0 * 1e-9);
        // Without overheads the three figures coincide.
        assert_eq!((z1.allocated_gb, z1.reserved_gb), (z1.device_gb, z1.device_gb));
    }
}
