//! The host's work of Megatron-FSDP (`--use-megatron-fsdp`, `--data-parallel-sharding-strategy
//! optim_grads_params`: the Megatron stack's ZeRO-3, [`super::Sharding::Zero3`]) that eager
//! PyTorch adds to every micro-batch and step beyond DDP's, counted call by call from the source
//! (NVIDIA/Megatron-LM at commit d98e8a6, the commit of the functional tests in
//! `tests/data/megatron-ft-runs.json` and `megatron-ft-moe-runs.json`;
//! `megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py` and
//! `param_and_grad_buffer.py` of that folder) and priced at published per-call figures, not
//! fitted.
//!
//! **Units.** Each `TransformerLayer` is an FSDP unit whose parameters are one bucket
//! (`mcore_fsdp_adapter.py` l. 171: `fsdp_unit_modules = [TransformerLayer,
//! MoETransformerLayer, MambaLayer]`). Its forward pre-hook gathers the bucket
//! (`_pre_forward_param_unshard`, `megatron_fsdp.py` l. 794–812), its forward post-hook frees it
//! (`_post_forward`, l. 977–1000), the pre-backward hook gathers it again
//! (`_pre_backward_param_unshard`, l. 918–933) and the post-backward hook frees it
//! (`_post_backward_release_module`, l. 684–704); a hook on every parameter
//! (`register_post_accumulate_grad_hook`, l. 1137–1143) runs `_process_post_backward_gradients([p])`
//! (l. 707–792), which copies the gradient into the bucket and, once the unit's last gradient is
//! in, reduce-scatters the bucket (`GradReducePipeline.reduce_gradients`,
//! `param_and_grad_buffer.py` l. 3880–3922). Prefetching (one unit ahead by default:
//! `suggested_AG_prefetch_size`, half of `suggested_communication_unit_size`, twice a unit's
//! elements, `megatron_fsdp.py` l. 420–444) moves when a bucket's all-gather is issued, not how
//! many calls it takes.
//!
//! **Count**, PyTorch calls from Python, per micro-batch:
//! * per parameter tensor of a unit, [`CALLS_PER_TENSOR`] = 17 that launch no kernel: each of the
//!   two gathers sets the parameter's data into the gathered bucket (`fetch_bucket(
//!   set_param_data=True)`, `param_and_grad_buffer.py` l. 1345–1352: the bucket slice of
//!   `get_item_from_bucket`, `p.shape`, `.view`, the `p.data` setter: 4 each, 8); the gradient hook's
//!   `_grad_acc` (`megatron_fsdp.py` l. 635–682, gradients sharded) fetches the main-gradient
//!   bucket (`get_main_grad`, l. 3094–3116 of `param_and_grad_buffer.py`: `_alloc_storage`'s
//!   `is_torchdynamo_compiling`, `_typed_storage()`, `_size()` — 3 —, the slice, `.shape`,
//!   `.view` — 3), reads `param.grad` twice and deletes it (3): 9. Its `copy_` launch is the
//!   backward hook's launch already priced with DDP's ([`super::step_host::backward_hooks_host_s`]);
//! * per unit, [`CALLS_PER_UNIT`] = 60 that launch no kernel and [`LAUNCHES_PER_UNIT`] = 4 that do:
//!   each gather allocates the bucket (`StorageResizeBasedBucketAllocator.allocate` →
//!   `_alloc_storage`, l. 120–137: `is_torchdynamo_compiling`, two `_typed_storage()._size()`,
//!   `_typed_storage()._resize_()`: 7), slices its local shard (1), waits on the all-gather's work
//!   (1) and frees the bucket afterwards (`_free_storage`, l. 140–159: `is_torchdynamo_compiling`,
//!   `_typed_storage()._size()`, `storage_offset()`, then the assertion's message, an f-string
//!   built before the call: `storage_offset()`, `_typed_storage()._size()`, `.shape`, and
//!   `_typed_storage()._resize_(0)`: 10) — 19 each, 38 —, and launches `all_gather_into_tensor`
//!   (1 each, 2); the reduce-scatter (`_bucket_group_gradient_reduce`, l. 4013–4260) resizes the
//!   gradient bucket (4 beyond the per-tensor checks), calls `wait_stream` (1), fetches the bucket
//!   again (3), slices the shard twice (2), records an event (1) and waits on it before freeing
//!   the bucket (1 + 10): 22 — launching `reduce_scatter_tensor` and the `+=` into the sharded
//!   FP32 gradient (2).
//!
//! **Optimizer.** Megatron-FSDP (version 1, the default: `arguments.py` l. 3158) builds the
//! distributed optimizer's groups from the model chunk's parameters
//! (`megatron/core/optimizer/__init__.py` l. 1097–1133, `_get_param_groups_and_buffers`), every
//! one a DTensor whose local shard may be empty, so the optimizer's walk over its tensors
//! ([`super::optimizer_host`], the zero count of [`super::step_host`]) covers all the stage's
//! tensors, not the tensors of a `1/d` slice as the distributed optimizer's does
//! ([`optimizer_shard`]).
//!
//! **Price**: [`BARE_CALL_HOST_S`] per call that launches nothing, [`TORCH_CALL_HOST_S`] per
//! launch, times the part's host speed ([`super::hardware::Hardware::host_op_time_factor`]); the
//! forward's gather and free join the forward's issue time, the rest the backward's
//! ([`unit_host_s`]). What is not counted, so the figure is a floor: the hooks' Python that calls
//! no PyTorch operator (dictionary look-ups keyed by parameter, the bucket-state checks, list
//! comprehensions, the per-parameter attribute writes of `all_gather_and_wait_parameters_ready`,
//! `recycle_unused_buckets`' loop over every bucket at each gather), the autograd `Function` and
//! multi-gradient hook per unit, the root hooks, the swaps of every parameter between its raw and
//! its DTensor form around each optimizer step (`_replace_param_with_distributed_if_needed`,
//! `_replace_param_with_raw_if_needed`, l. 1408–1443) and the non-unit modules' buckets
//! (embedding, final norm, output layer: gathered once a step).

use super::pricing::{BARE_CALL_HOST_S, Pricing, TORCH_CALL_HOST_S};

/// PyTorch calls that launch no kernel per parameter tensor of an FSDP unit per micro-batch
/// (module docs: two gathers' 4 each, the gradient hook's 9) [count].
pub const CALLS_PER_TENSOR: f64 = 17.0;

/// Of [`CALLS_PER_TENSOR`], those of the forward's gather (module docs) [count].
pub const FORWARD_CALLS_PER_TENSOR: f64 = 4.0;

/// PyTorch calls that launch no kernel per FSDP unit per micro-batch (module docs: the two
/// gathers' 19 each, the reduce-scatter's 22) [count].
pub const CALLS_PER_UNIT: f64 = 60.0;

/// Of [`CALLS_PER_UNIT`], those of the forward's gather and free (module docs) [count].
pub const FORWARD_CALLS_PER_UNIT: f64 = 19.0;

/// Kernel- or collective-launching calls per FSDP unit per micro-batch: two
/// `all_gather_into_tensor`, one `reduce_scatter_tensor`, the `+=` into the FP32 gradient shard
/// (module docs) [count].
pub const LAUNCHES_PER_UNIT: f64 = 4.0;

/// Of [`LAUNCHES_PER_UNIT`], the forward's all-gather [count].
pub const FORWARD_LAUNCHES_PER_UNIT: f64 = 1.0;

/// Whether `p` prices Megatron-FSDP's host work: the Megatron stack's ZeRO-3 on a part whose
/// host launches the kernels.
pub fn megatron_fsdp(p: &Pricing) -> bool {
    p.hw.host_launched && p.opts.stack == super::Stack::Megatron && p.opts.sharding.shards_parameters()
}

/// Parameter tensors of an MoE block as an FSDP unit [count]: the attention side of a GPT
/// block (the QKV projection with its fused norm: norm weight and bias, weight, bias; the
/// output projection's weight and bias: 6), the pre-MLP norm's weight and bias (2), the router's
/// weight (1), the weights of each local expert's two linear layers (Transformer Engine's
/// `GroupedLinear` registers one weight per expert and GEMM, `weight0`…`weight{n−1}`; the gated
/// fc1 is one matrix) and of the shared expert's two, the experts' biases not counted (multi-latent
/// attention's further projections are counted as a plain attention's, as elsewhere).
pub fn moe_unit_tensors(local_experts: f64, shared_expert: bool) -> f64 {
    6.0 + 2.0 + 1.0 + 2.0 * local_experts + if shared_expert { 2.0 } else { 0.0 }
}

/// The host time Megatron-FSDP adds to one block, an FSDP unit of `tensors` parameter tensors
/// ([`super::step_host::TENSORS_PER_BLOCK`] for a dense block, [`moe_unit_tensors`]), per
/// micro-batch, `[forward, backward]` [s]: forward `(tensors · 4 + 19) · 0.91 µs + 1 · 12.9 µs`,
/// backward `(tensors · 13 + 41) · 0.91 µs + 3 · 12.9 µs`, times the host factor (module docs);
/// zero outside Megatron-FSDP ([`megatron_fsdp`]).
pub fn unit_host_s(p: &Pricing, tensors: f64) -> [f64; 2] {
    if !megatron_fsdp(p) {
        return [0.0, 0.0];
    }
    let factor = p.hw.host_op_time_factor;
    let price = |calls: f64, launches: f64| (calls * BARE_CALL_HOST_S + launches * TORCH_CALL_HOST_S) * factor;
    let fwd_calls = tensors * FORWARD_CALLS_PER_TENSOR + FORWARD_CALLS_PER_UNIT;
    let all_calls = tensors * CALLS_PER_TENSOR + CALLS_PER_UNIT;
    [
        price(fwd_calls, FORWARD_LAUNCHES_PER_UNIT),
        price(all_calls - fwd_calls, LAUNCHES_PER_UNIT - FORWARD_LAUNCHES_PER_UNIT),
    ]
}

/// The ranks the optimizer's tensors are sliced over for the host walk of
/// [`super::step_host::optimizer_tensors`]: 1 under Megatron-FSDP (its optimizer holds every
/// parameter as a DTensor: module docs), else `shard` [count].
pub fn optimizer_shard(p: &Pricing, shard: u64) -> u64 {
    if p.opts.stack == super::Stack::Megatron && p.opts.sharding.shards_parameters() { 1 } else { shard }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::extended::{Sharding, Stack};

    #[test]
    fn a_units_host_calls_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let fsdp = ExtendedOptions { sharding: Sharding::Zero3, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &fsdp };
        // Forward: 12 · 4 + 19 = 67 calls · 0.91 µs = 60.97 µs, one all-gather 12.9 µs: 73.87 µs.
        // Backward: 12 · 17 + 60 − 67 = 197 calls · 0.91 µs = 179.27 µs, 3 launches 38.7 µs:
        // 217.97 µs. Together 291.84 µs per unit and micro-batch, times the host factor.
        let [fwd, bwd] = unit_host_s(&p, 12.0);
        let f = hw.host_op_time_factor;
        assert!((fwd - 73.87e-6 * f).abs() < 1e-15, "{fwd}");
        assert!((bwd - 217.97e-6 * f).abs() < 1e-15, "{bwd}");
        assert_eq!(optimizer_shard(&p, 4), 1);
        // An MoE unit with 4 local experts and no shared expert: 6 + 2 + 1 + 2 · 4 = 17 tensors;
        // forward 17 · 4 + 19 = 87 calls · 0.91 µs = 79.17 µs + 12.9 µs = 92.07 µs.
        assert_eq!(moe_unit_tensors(4.0, false), 17.0);
        assert_eq!(moe_unit_tensors(16.0, true), 43.0);
        let [fwd, _] = unit_host_s(&p, moe_unit_tensors(4.0, false));
        assert!((fwd - 92.07e-6 * f).abs() < 1e-15, "{fwd}");
        // The distributed optimizer (ZeRO-1), DeepSpeed's ZeRO-3: no Megatron-FSDP hooks; their
        // optimizers hold their slice.
        for opts in
            [ExtendedOptions { sharding: Sharding::Zero1, ..fsdp }, ExtendedOptions { stack: Stack::DeepSpeed, ..fsdp }]
        {
            let p = Pricing { hw: &hw, opts: &opts };
            assert_eq!(unit_host_s(&p, 12.0), [0.0, 0.0]);
            assert_eq!(optimizer_shard(&p, 4), 4);
        }
    }
}
