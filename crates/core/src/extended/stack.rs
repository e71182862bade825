//! The training stack a configuration runs on, named (switch `stack`): which ways of sharding the
//! model states it offers and so what the memory of each configuration holds. One input for every
//! path — the search (the explorer and `fmperf search`), the import of a launch file
//! (`fmperf estimate --from`, which sets the stack of the file's framework) and the sweeps — so
//! that one layout on one stack gets one memory figure and one time.
//!
//! | stack | sharding offered | gradient memory of each |
//! |---|---|---|
//! | `megatron` (default: Megatron-LM / Megatron-Core / NeMo) | `zero0` (DDP), `zero1` (distributed optimizer), `zero3` (Megatron-FSDP) | DDP and the distributed optimizer keep one contiguous, **unsharded** main-gradient buffer (FP32 for BF16 training: 4 B/parameter of the device's model part; `grad_reduce_in_fp32=False` makes it 2 B); Megatron-FSDP shards it |
//! | `deepspeed` | `zero0`–`zero3` | ZeRO-1 keeps whole gradients, ZeRO-2/3 shard them over the data-parallel group |
//! | `fsdp` (PyTorch FSDP/FSDP2: torchtitan, torchtune, Lightning) | `zero0` (`NO_SHARD`/DDP), `zero2` (`SHARD_GRAD_OP`), `zero3` (`FULL_SHARD`, HSDP) | sharded gradients under `zero2`/`zero3` |
//! | `jax` (JAX/XLA: MaxText, PaxML/Praxis, AXLearn) | `zero0` (a `data` mesh axis), `zero3` (an `fsdp` mesh axis) | sharded gradients under `zero3` |
//! | `nanotron` (Hugging Face's nanotron) | `zero0` (DDP), `zero1` (`ZeroDistributedOptimizer`) | an unsharded FP32 gradient buffer (`FP32GradientAccumulator`, `accumulate_grad_in_fp32`), as Megatron's |
//!
//! On `nanotron` the stack also splits the pipeline: by its blocks' costs, whatever `stage_split`
//! says ([`super::stack_nanotron`]).
//!
//! The stack also says how fast FSDP's per-block collectives cross nodes
//! ([`Stack::zero3_one_nic_per_device`]): DeepSpeed ZeRO-3 moves about one NIC's bandwidth per
//! device (the measured runs of [`super::HardwareChoices::zero3_per_nic`]: its 2021 ZeRO-3 gathered
//! one parameter at a time), while XLA combines the per-layer gathers and reductions into large
//! collectives and schedules them one layer ahead, and Megatron-FSDP and PyTorch FSDP gather and
//! reduce each unit's contiguous (flat) buffer in one collective, prefetched: all three drive every
//! NIC of a domain (the reference's multi-ring rate, spec §2.4 case 9).
//!
//! Megatron has no ZeRO-2: its distributed optimizer reduce-scatters the gradients but keeps the
//! whole buffer, so a search that let a Megatron run shard its gradients (ZeRO-2) would rank
//! first a layout whose memory the run cannot have. A sharding fixed by the user (`--sharding`,
//! `--ext sharding=…`, a file's own) is priced as asked whatever the stack: the stack says what
//! the search chooses from.

use std::fmt;
use std::str::FromStr;

use super::choices::{Sharding, named_enum};
use crate::Error;

/// nanotron's DDP bucket: `ddp_bucket_cap_mb` 25 (huggingface/nanotron @ a756526,
/// `src/nanotron/config/config.py` l. 220) as PyTorch's DDP reads it, `bucket_cap_mb · 1024 · 1024`
/// bytes [B] ([`Stack::gradient_buckets_per_block`]).
pub const NANOTRON_DDP_BUCKET_BYTES: f64 = 25.0 * 1024.0 * 1024.0;

/// Weight matrices of a nanotron Llama block, each a DDP bucket of its own when larger than the
/// bucket [count] ([`Stack::gradient_buckets_per_block`]).
pub const NANOTRON_BLOCK_MATRICES: f64 = 4.0;

/// The training stack (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Stack {
    /// Megatron-LM / Megatron-Core / NeMo: DDP, the distributed optimizer (unsharded main-gradient
    /// buffer) or Megatron-FSDP.
    #[default]
    Megatron,
    /// DeepSpeed: ZeRO stages 0 to 3.
    DeepSpeed,
    /// PyTorch FSDP / FSDP2 (torchtitan, torchtune, Lightning): no sharding, `SHARD_GRAD_OP`,
    /// `FULL_SHARD`.
    Fsdp,
    /// JAX/XLA (MaxText, PaxML/Praxis, AXLearn): a `data` axis (DDP) or an `fsdp` axis (ZeRO-3).
    Jax,
    /// Hugging Face's nanotron: DDP or ZeRO-1, whose parameter all-gather runs inside the
    /// optimizer step ([`Stack::zero1_gathers_in_optimizer_step`]).
    Nanotron,
}

impl Stack {
    /// Every stack.
    pub const ALL: [Stack; 5] = [Stack::Megatron, Stack::DeepSpeed, Stack::Fsdp, Stack::Jax, Stack::Nanotron];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Stack::Megatron => "megatron",
            Stack::DeepSpeed => "deepspeed",
            Stack::Fsdp => "fsdp",
            Stack::Jax => "jax",
            Stack::Nanotron => "nanotron",
        }
    }

    /// The stack's name for readers: `Megatron-LM`, `DeepSpeed`, `PyTorch FSDP`, `JAX/XLA`.
    pub fn label(self) -> &'static str {
        match self {
            Stack::Megatron => "Megatron-LM",
            Stack::DeepSpeed => "DeepSpeed",
            Stack::Fsdp => "PyTorch FSDP",
            Stack::Jax => "JAX/XLA",
            Stack::Nanotron => "nanotron",
        }
    }

    /// What the stack means for the memory of a configuration, in one sentence (the module
    /// documentation's table): where the page states which semantics its memory figures assume.
    pub fn memory_words(self) -> &'static str {
        match self {
            Stack::Megatron => {
                "DDP and the distributed optimizer keep an unsharded FP32 main-gradient buffer \
                 (4 B per parameter of the device's model part); Megatron-FSDP shards it; no ZeRO-2."
            }
            Stack::DeepSpeed => {
                "ZeRO-1 keeps whole gradients; ZeRO-2 and ZeRO-3 shard them over the data-parallel group."
            }
            Stack::Fsdp => "No sharding (DDP), SHARD_GRAD_OP (gradients sharded) or FULL_SHARD (everything sharded).",
            Stack::Jax => "A data mesh axis (nothing sharded) or an fsdp axis (everything sharded).",
            Stack::Nanotron => {
                "DDP or ZeRO-1 (optimizer states sharded); an unsharded FP32 gradient accumulation buffer under both."
            }
        }
    }

    /// True when the stack's model upcasts its logits to FP32 itself and the 16-bit logits are
    /// gone before the loss: nanotron's `LlamaModel` ends with a `cast_to_fp32` block
    /// (`x.float()`) and returns only the FP32 logits, whose cross-entropy subtracts the maximum
    /// into one FP32 copy and exponentiates it in place, saving it as the softmax
    /// (huggingface/nanotron 2411b02 `src/nanotron/models/llama.py` `forward_with_hidden_states`
    /// l. 899–936, `Loss`; `src/nanotron/parallel/tensor_parallel/functional.py`
    /// `_ShardedCrossEntropy`, l. 31–107): 4 + 4 B per logit at the loss, no 16-bit logits
    /// ([`super::memory`]).
    pub fn logits_upcast_in_model(self) -> bool {
        self == Stack::Nanotron
    }

    /// The shardings the stack offers, in ZeRO order (what the search chooses from).
    pub fn shardings(self) -> &'static [Sharding] {
        match self {
            Stack::Megatron => &[Sharding::Ddp, Sharding::Zero1, Sharding::Zero3],
            Stack::DeepSpeed => &Sharding::ALL,
            Stack::Fsdp => &[Sharding::Ddp, Sharding::Zero2, Sharding::Zero3],
            Stack::Jax => &[Sharding::Ddp, Sharding::Zero3],
            Stack::Nanotron => &[Sharding::Ddp, Sharding::Zero1],
        }
    }

    /// Whether the stack runs the model eagerly from Python, one module and kernel at a time
    /// (Megatron, DeepSpeed, PyTorch FSDP), rather than as a compiled program (JAX/XLA): the host
    /// time per operation of [`super::block::host_time_per_operation_s`].
    pub fn is_eager(self) -> bool {
        !matches!(self, Stack::Jax)
    }

    /// Whether ZeRO-3/FSDP's per-block collectives across fast domains move about one NIC's
    /// bandwidth per device (with [`super::HardwareChoices::zero3_per_nic`] on; otherwise, and
    /// inside one domain, every member's NIC carries its share of the domain's rings).
    ///
    /// False for `jax`: XLA merges the per-layer all-gathers and reduce-scatters into collectives
    /// of up to its combine thresholds (MaxText's and PaxML's GPU recipes set
    /// `--xla_gpu_all_gather_combine_threshold_bytes` to 0.5–2 GiB) and issues them one layer ahead
    /// (`--xla_gpu_enable_pipelined_all_gather`, `..._reduce_scatter`; NVIDIA/dgxc-benchmarking
    /// `maxtext/configure.sh`, `paxml/configure.sh`, v25.01). Measured: MaxText's Llama 2 70B with
    /// FSDP over 64 DGX H100s steps in 7.0 s (BF16) and 4.3 s (FP8) — at one NIC (50 GB/s) per
    /// device its gathers and reductions alone would take about 8 s, at the node's eight NICs about
    /// 1 s, hidden behind the blocks' compute (`tests/jax_gpu_runs.rs`).
    ///
    /// False for `megatron`, whose ZeRO-3 is Megatron-FSDP (NVIDIA/Megatron-LM @ d98e8a64,
    /// `megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py`): each FSDP
    /// unit (a transformer layer) holds its parameters in one contiguous buffer per dtype, and
    /// the unit is un-sharded by one `all_gather_into_tensor` of that buffer over the FSDP group
    /// (lines 4715–4720, inside a `_coalescing_manager` with the units prefetched up to 500 M
    /// elements ahead, lines 4488–4505, on their own stream, line 4568); its gradients leave by
    /// one `reduce_scatter_tensor` of the unit's buffer (line 4100). NCCL runs these as rings
    /// or trees with one channel per NIC, over NVLink inside a domain and through every NIC of the
    /// domain between domains, so each rank's NIC carries `1/τ` of what crosses (case 9). Measured:
    /// Llama 3.1 405B with Megatron-FSDP over 64 GB200s × TP 2 in two NVL72 racks steps in 5.6 s
    /// (Megatron-Bridge 25.09, `tests/megatron_bridge_dense_runs.rs`); at one NIC per device its
    /// gathers and reductions alone would take 42 s.
    ///
    /// False for `fsdp` (issue 31), for the reason it is false for `megatron`: PyTorch FSDP
    /// gathers each unit's parameters as one `FlatParameter` (FSDP1: `FlatParamHandle.unshard` →
    /// `_all_gather_flat_param`, one `dist.all_gather_into_tensor` of the padded flat parameter
    /// over the unit's process group; pytorch/pytorch @ 01caf79e,
    /// `torch/distributed/fsdp/_flat_param.py`; FSDP2 copies a group's shards into one buffer and
    /// gathers that, `_fsdp_collectives.py`, `foreach_all_gather`), prefetched on its own
    /// unshard stream, and reduce-scatters the unit's flat gradient in one collective. Measured:
    /// IBM's fms-fsdp Llama 2 34B and 70B, FULL_SHARD over 128 A100s (400 Gbps per node) and 96
    /// H100s (800 Gbps per node), 2 sequences of 4,096 tokens per device, step at 370–1,550
    /// tokens/s per device (11.7–22.1 s on A100, 5.3–10.2 s on H100); at one NIC per device the
    /// part of their gathers and reductions not hidden behind the blocks' compute alone would take
    /// 4.3–5.3× the measured step (`tests/stacks_not_met_runs.rs`, whose rows therefore no longer
    /// count as unseen for this rule).
    ///
    /// True only for `deepspeed` (and `nanotron`, which has no ZeRO-3): the one-NIC rate was set
    /// on DeepSpeed ZeRO-3 runs of 2021 (Narayanan et al. 2021, 384–2240 A100s), whose ZeRO-3
    /// gathered **one parameter at a time**, each behind a device-wide synchronisation, into a
    /// list of `world_size` views (microsoft/DeepSpeed v0.3.13 @ 12a53b43,
    /// `deepspeed/runtime/zero/partition_parameters.py`: `_all_gather` l. 473–479 launches one
    /// `_allgather_param` per parameter; `_allgather_param` l. 596–629 runs
    /// `torch.cuda.synchronize()` then `torch.distributed.all_gather(partitions, …)`), and
    /// reduce-scattered each gradient on its own (`_reduce_scatter_gradient`, l. 733–766):
    /// collectives that do not keep a domain's NICs busy.
    pub fn zero3_one_nic_per_device(self) -> bool {
        !matches!(self, Stack::Jax | Stack::Megatron | Stack::Fsdp)
    }

    /// Whether ZeRO-2 reduces the gradients behind every micro-batch's backward in a pipeline of
    /// `pp` stages ([`super::data_parallel`]), or the stack's schedule switches the gradient sync
    /// off for all but the last micro-batch, so that the gradients accumulate unsharded and are
    /// reduced once per step, as ZeRO-1's:
    /// * `deepspeed`, `jax`: every micro-batch (DeepSpeed's engine, `allreduce_gradients`: "ZeRO
    ///   stage >= 2 communicates during non gradient accumulation boundaries as well"; PaddlePaddle's
    ///   sharding stage 2, read as this stack, likewise);
    /// * `megatron`: once — Megatron-Core's schedules (`pipeline_parallel/schedules.py`) run every
    ///   micro-batch but the last under `config.no_sync_func`, and NeMo hands them Apex
    ///   `DistributedFusedAdam.no_sync` (its ZeRO-2) there (`megatron_gpt_model.py`, `fwd_bwd_step`);
    /// * `fsdp`: every micro-batch without a pipeline (FSDP's `SHARD_GRAD_OP` reduce-scatters in each
    ///   backward), once with `pp > 1`: PyTorch's pipeline schedules (`torch.distributed.pipelining`,
    ///   `_PipelineStageBase.backward_maybe_with_nosync`, which torchtitan runs) set an FSDP stage's
    ///   `set_requires_gradient_sync(False)` for every backward but the stage's last.
    pub fn zero2_reduces_every_microbatch(self, pp: u64) -> bool {
        match self {
            Stack::DeepSpeed | Stack::Jax => true,
            // nanotron has no ZeRO-2; its pipeline engine defers the gradient sync to the last
            // backward (`_get_bwd_context`, `grad_accumulator.no_sync()`), as Megatron's.
            Stack::Megatron | Stack::Nanotron => false,
            Stack::Fsdp => pp <= 1,
        }
    }

    /// Whether ZeRO-1's all-gather of the updated parameters runs inside the optimizer step, one
    /// blocking collective of the whole stage's parameters exposed in full after the step, rather
    /// than bucketed behind the next forward ([`super::data_parallel`]).
    ///
    /// True for `nanotron` (huggingface/nanotron @ a756526, the revision of the Ultra-Scale
    /// Playbook's benchmark script): `ZeroDistributedOptimizer.step` (`src/nanotron/optim/zero.py`,
    /// lines 95–120) runs the inner optimizer and then `_all_gather_params` (lines 217–245), one
    /// synchronous `all_gather_coalesced` (`src/nanotron/distributed.py`: the shards flattened into
    /// one buffer per rank and a single `dist.all_gather`, `async_op=False`) of every parameter the
    /// data-parallel group shares; the next forward starts after it. Its gradients leave as
    /// Megatron's do: an FP32 reduce-scatter from DDP's bucket hook during the last micro-batch's
    /// backward (`optim/gradient_accumulator.py`, `get_fp32_accum_hook`, `async_op=True`).
    /// False for the others: Megatron-Core's distributed optimizer overlaps the gather with the next
    /// forward (`overlap_param_gather`), which is what the overlap rule prices.
    pub fn zero1_gathers_in_optimizer_step(self) -> bool {
        matches!(self, Stack::Nanotron)
    }

    /// Whether the stack adds each micro-batch's 16-bit gradients into a separate FP32 buffer after
    /// the backward, one kernel per parameter tensor, and clips, copies and zeroes that buffer
    /// tensor by tensor every step ([`super::fp32_accumulation`]). True for `nanotron`
    /// (`FP32GradientAccumulator`, on in the Ultra-Scale Playbook's configuration); Megatron-Core
    /// accumulates into its FP32 main gradients inside the weight-gradient GEMMs
    /// (`gradient_accumulation_fusion`, its default) and the other stacks' sums are part of the
    /// backward already priced.
    pub fn accumulates_in_a_separate_fp32_buffer(self) -> bool {
        matches!(self, Stack::Nanotron)
    }

    /// The buckets in which the stack's data parallelism reduces one block's gradients of
    /// `block_gradient_bytes` [B, at the model's 16-bit width] behind the backward, each one NCCL
    /// collective with its own latency ([`super::data_parallel`]): 1 where fmperf prices one
    /// collective per block (every stack but nanotron).
    ///
    /// nanotron (huggingface/nanotron @ a756526, the revision of the Ultra-Scale Playbook's
    /// benchmarks) wraps the model in PyTorch's `DistributedDataParallel` with
    /// `bucket_cap_mb=config.model.ddp_bucket_cap_mb` (`src/nanotron/trainer.py` l. 858–863),
    /// 25 by default (`src/nanotron/config/config.py` l. 220); its FP32 accumulation hook
    /// (`optim/gradient_accumulator.py`, `get_fp32_accum_hook`, l. 317–391) launches one
    /// `all_reduce_coalesced` (ZeRO-0) or one flattened `reduce_scatter` (ZeRO-1) per DDP bucket.
    /// DDP fills a bucket with whole gradient tensors, in reverse order of registration, and
    /// closes it once it holds `bucket_cap_mb · 2^20` bytes of the parameters' 16-bit gradients
    /// (PyTorch's `DistributedDataParallel` through `dist._compute_bucket_assignment_by_size`; its
    /// first bucket of 1 MiB, `_DEFAULT_FIRST_BUCKET_BYTES`, is left out here), so a
    /// block gives `bytes / 25 MiB` buckets, but never more than its weight matrices, each a
    /// bucket of its own when larger than the cap: nanotron's Llama block has four
    /// (`qkv_proj`, `o_proj`, `gate_up_proj`, `down_proj`: `src/nanotron/models/llama.py`
    /// l. 223, 233, 384, 414). At least one.
    pub fn gradient_buckets_per_block(self, block_gradient_bytes: f64) -> f64 {
        match self {
            Stack::Nanotron => (block_gradient_bytes / NANOTRON_DDP_BUCKET_BYTES).clamp(1.0, NANOTRON_BLOCK_MATRICES),
            _ => 1.0,
        }
    }

    /// Whether the stack offers `sharding`.
    pub fn offers(self, sharding: Sharding) -> bool {
        self.shardings().contains(&sharding)
    }
}

named_enum!(
    Stack,
    "stack",
    &[
        ("megatron-lm", Stack::Megatron),
        ("megatron_lm", Stack::Megatron),
        ("mcore", Stack::Megatron),
        ("nemo", Stack::Megatron),
        ("fsdp2", Stack::Fsdp),
        ("torchtitan", Stack::Fsdp),
        ("pytorch", Stack::Fsdp),
        ("maxtext", Stack::Jax),
        ("paxml", Stack::Jax),
        ("praxis", Stack::Jax),
        ("axlearn", Stack::Jax),
        ("xla", Stack::Jax),
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stack_offers_its_own_shardings() {
        assert!(!Stack::Megatron.offers(Sharding::Zero2), "Megatron keeps its gradient buffer whole");
        // PyTorch's pipeline schedules defer an FSDP stage's gradient sync to its last backward.
        assert!(Stack::Fsdp.zero2_reduces_every_microbatch(1) && !Stack::Fsdp.zero2_reduces_every_microbatch(2));
        assert!(Stack::DeepSpeed.zero2_reduces_every_microbatch(4));
        assert!(!Stack::Megatron.zero2_reduces_every_microbatch(1), "no_sync_func: Apex's ZeRO-2 syncs once");
        assert!(Stack::Megatron.offers(Sharding::Zero1) && Stack::Megatron.offers(Sharding::Zero3));
        assert!(!Stack::Fsdp.offers(Sharding::Zero1));
        assert_eq!(Stack::DeepSpeed.shardings().len(), 4);
        assert_eq!(Stack::default(), Stack::Megatron);
        for s in Stack::ALL {
            assert_eq!(s.as_str().parse::<Stack>().unwrap(), s);
        }
        assert_eq!("torchtitan".parse::<Stack>().unwrap(), Stack::Fsdp);
        assert_eq!("MaxText".parse::<Stack>().unwrap(), Stack::Jax);
        assert_eq!(Stack::Jax.shardings(), &[Sharding::Ddp, Sharding::Zero3]);
        assert!(!Stack::Jax.zero3_one_nic_per_device() && !Stack::Megatron.zero3_one_nic_per_device());
        assert!(Stack::DeepSpeed.zero3_one_nic_per_device() && !Stack::Fsdp.zero3_one_nic_per_device());
        assert_eq!("nanotron".parse::<Stack>().unwrap(), Stack::Nanotron);
        assert_eq!(Stack::Nanotron.shardings(), &[Sharding::Ddp, Sharding::Zero1]);
        assert!(
            Stack::Nanotron.zero1_gathers_in_optimizer_step() && !Stack::Megatron.zero1_gathers_in_optimizer_step()
        );
        assert_eq!("colossal".parse::<Stack>().unwrap_err().field(), Some("stack"));
    }
}
