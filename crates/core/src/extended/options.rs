//! The switches of extended mode: every feature that the reference model leaves out, each named,
//! documented and opt-in, with [`ExtendedOptions::realistic`] as the default that turns them on.

pub use super::choices::{
    AttentionKernel, Fp8Recipe, Fusion, GradReduce, OptimizerStates, Recompute, RecomputeShare, Sharding,
    TransformerImpl,
};
use crate::Error;
use crate::catalog::Precision;

/// Every switch of extended mode, split by kind: which features of the model the physics include
/// ([`ModelFeatures`], `model`), how the hardware is modelled ([`HardwareChoices`], `hardware`),
/// and — the fields of this struct itself and the MoE switches in `moe` — how the run is executed
/// (recomputation, sharding, pipeline schedule, overlaps, formats of the states, kernels). Field
/// docs say what each one models; [`Self::realistic`] is the default, [`Self::describe`] lists
/// them for display. The switch keys ([`super::switches::SWITCHES`]) are the field names without
/// the group: `precision`, not `hardware.precision`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExtendedOptions {
    /// Which features of the model the physics include (see [`ModelFeatures`]).
    pub model: ModelFeatures,
    /// How the hardware is modelled (see [`HardwareChoices`]).
    pub hardware: HardwareChoices,
    /// Activation recomputation, in time and memory.
    pub recompute: Recompute,
    /// ZeRO stage / FSDP.
    pub sharding: Sharding,
    /// Shard group size [devices] (hybrid sharding: ZeRO-3 parameters, or ZeRO-1/2 optimizer
    /// states, sharded inside groups of this size, replicated across them, gradients all-reduced
    /// across the groups once per iteration; see [`super::data_parallel`]); `None` shards over the
    /// whole data × context parallel group.
    pub shard_group: Option<u64>,
    /// Virtual pipeline stages per device (interleaved 1F1B, Narayanan et al. 2021): the bubble
    /// shrinks by this factor, pipeline messages grow by it. 1 = plain 1F1B.
    pub interleave: u64,
    /// Uneven pipeline stages: when the depth is not a multiple of `pp`, the busiest stage holds
    /// `⌈D/pp⌉` blocks (the reference rounds down and loses blocks). When off, `pp` must divide `D`.
    pub uneven_stages: bool,
    /// How the blocks are dealt to the pipeline stages: the blocks alone (the ends on top of the
    /// end stages), or with the embedding and/or the head counted as one block each (see
    /// [`super::choices::StageSplitRule`]). Counting an end needs `uneven_stages`.
    pub stage_split: super::choices::StageSplitRule,
    /// Context parallelism as a ring (Liu et al. 2023; Megatron's `p2p` CP): each step passes one
    /// K/V chunk to the next rank while attending to the current one; only the part of a transfer
    /// longer than the step's compute is exposed. When off, K/V are all-gathered without overlap
    /// (the reference's pricing).
    pub cp_ring_overlap: bool,
    /// The flavour of context parallelism: K/V ring, Ulysses all-to-all over heads, or the hybrid
    /// of both (see [`super::context_parallel`]). Default ring.
    pub cp_comm: super::choices::CpComm,
    /// The Ulysses (all-to-all) degree of the hybrid flavour: Ulysses over this many consecutive
    /// CP ranks, a ring over `cp / cp_ulysses`; must divide `cp` and the heads. Unused by the
    /// other flavours.
    pub cp_ulysses: u64,
    /// Sequence parallelism inside tensor parallelism (norms, dropout and residuals on `1/tp` of the
    /// tokens; all-gather/reduce-scatter instead of all-reduce). Changes memory and element-wise
    /// traffic; collective volumes are equal.
    pub sequence_parallel: bool,
    /// Mixture-of-Experts switches (load, dispatcher, FP8 dispatch, all-to-all overlap, fixed
    /// EP/ETP); no effect on dense models. See [`super::moe::MoeOptions`].
    pub moe: super::moe::MoeOptions,
    /// Width of the data-parallel gradient reduction (see [`GradReduce`]).
    pub grad_reduce: GradReduce,
    /// Tensor-parallel communication overlapped with the neighbouring GEMM (Megatron
    /// `--tp-comm-overlap` with Transformer Engine's userbuffers, PyTorch async TP): each TP
    /// collective exposes only the part longer than the matmul it is split against. Off (the
    /// default of both): exposed in full.
    pub tp_comm_overlap: bool,
    /// Without sequence parallelism, the all-reduce of a column-parallel linear layer's input
    /// gradient overlapped with its weight-gradient GEMM (Megatron-LM's asynchronous all-reduce,
    /// `LinearWithGradAccumulationAndAsyncCommunication`): exposed only beyond that GEMM. Off:
    /// the all-reduce runs after the layer's whole backward and the next operation waits for it,
    /// exposed in full — BigScience's Megatron-DeepSpeed of the BLOOM trials
    /// (bigscience-workshop/Megatron-DeepSpeed @ 58d92042, 2022-03-01:
    /// `megatron/mpu/layers.py` line 330, `ColumnParallelLinear.forward` calls
    /// `copy_to_tensor_model_parallel_region`, whose backward, `megatron/mpu/mappings.py`
    /// line 89, is the synchronous `torch.distributed.all_reduce` of line 30; unchanged at its
    /// last commit 8387ae17, 2023-12-07). Default on.
    pub tp_grad_overlap: bool,
    /// Data-parallel gradient reduction overlapped with the backward pass and the parameter
    /// all-gather with the next forward, bucket by bucket (Megatron `--overlap-grad-reduce` and
    /// `--overlap-param-gather`, DeepSpeed `overlap_comm`, PyTorch DDP's and FSDP's bucketed
    /// hooks): each block's collective exposes only the part longer than a block's pass
    /// ([`super::data_parallel`]). Off (Megatron-LM's default, and its only way before 2023;
    /// DeepSpeed ZeRO-1/2's default): the whole gradient is reduced after the last backward,
    /// and the parameters gathered after the optimizer step, one collective each, exposed in
    /// full. ZeRO-3/FSDP's per-block gathers always prefetch. Default on.
    pub dp_overlap: bool,
    /// ZeRO-1/2 shares the updated parameters by one broadcast from each shard owner over the
    /// shard group, after the optimizer step and exposed, and all-reduces the gradients over the
    /// whole replica group (InternLM's hybrid ZeRO and Colossal-AI's low-level ZeRO, from which it
    /// derives; [`super::data_parallel`]). Off: reduce-scatter and all-gather (Megatron's
    /// distributed optimizer, DeepSpeed, FSDP). Default off.
    pub param_broadcast: bool,
    /// FP8 recipe (see [`Fp8Recipe`]).
    pub fp8_recipe: Fp8Recipe,
    /// Formats of weights, gradients and optimizer states (see [`OptimizerStates`]).
    pub optimizer_states: OptimizerStates,
    /// The optimizer's algorithm (see [`super::choices::Optimizer`]): Adam, or Muon (replicated or
    /// layer-wise distributed), which adds its Newton–Schulz work to the step
    /// ([`super::muon::muon_step_s`]) and keeps one momentum instead of two moments for the
    /// matrices. Default Adam.
    pub optimizer: super::choices::Optimizer,
    /// FSDP / ZeRO-3 frees each block's gathered parameters after its forward and gathers them
    /// again for the backward (FSDP2's `reshard_after_forward=True`, the default). Off: every
    /// gathered block stays until its backward (no second gather, all blocks' 16-bit weights
    /// resident).
    pub reshard_after_forward: bool,
    /// An FP32 gradient-accumulation buffer kept beside the 16-bit `.grad` of every parameter
    /// (DeepSpeed's `BF16_Optimizer` with FP32 gradient accumulation): 2 + 4 B of gradients per
    /// parameter instead of Megatron-LM's fused FP32 `main_grad` (4 B). With sharded gradients
    /// (ZeRO-2, FSDP under pipelining) the whole-size FP32 accumulator FSDP2 keeps between
    /// micro-batches until the one reduce-scatter (4 B per parameter instead of 4/d). Off:
    /// Megatron-LM, FSDP without pipelining.
    pub grad_accumulation_buffer: bool,
    /// The optimizer step fused into the backward pass (torchtune's `optimizer_in_bwd`, PyTorch's
    /// `register_post_accumulate_grad_hook`): each parameter is updated and its gradient freed as
    /// soon as the gradient is complete, so no model-wide gradient buffer is held (only with a
    /// single micro-batch per step and no sharded gradient reduction).
    pub optimizer_in_backward: bool,
    /// Every `.grad` freed after the optimizer step (PyTorch's `optimizer.zero_grad()`, which sets
    /// gradients to `None` by default since PyTorch 2.0: the loops of torchtitan, torchtune,
    /// litgpt): with one micro-batch per step no gradient exists at the loss, and the backward
    /// allocates each block's gradients as it frees that block's activations, so the peak is the
    /// larger of the loss (states without gradients + activations + logits) and the backward's end
    /// (states with gradients). Off: Megatron-LM's and DeepSpeed's contiguous gradient buffers,
    /// allocated once and zeroed in place.
    pub grads_freed: bool,
    /// Chunks the output head's logits and the cross-entropy are computed in (torchtune's chunked
    /// loss, fused linear-cross-entropy kernels): the FP32 logits held at once shrink by this
    /// factor. 1: the whole `tokens × vocabulary` at once.
    pub loss_chunks: u64,
    /// The output head runs inside the loss chunks, each chunk's forward and backward before the
    /// next (torchtitan's `ChunkedLossWrapper`, fused linear-cross-entropy kernels such as
    /// Liger's): the logits of one chunk exist at a time (`1 / loss_chunks` of them, their 16-bit
    /// and FP32 parts alike), beside an FP32 accumulator of the final hidden states' gradient
    /// (`tokens × h` × 4 B). Off: the head's 16-bit logits are made whole and only the
    /// cross-entropy is chunked (torchtune's `CEWithChunkedOutputLoss`).
    pub loss_head_chunked: bool,
    /// The cross-entropy compiled together with its FP32 upcast (`torch.compile` of the loss:
    /// torchtitan's `compile.components = ["model", "loss"]`, torchtune's `compile_loss`): the
    /// fused kernel reads the 16-bit logits and keeps one FP32 log-sum-exp per token for the
    /// backward, so neither the FP32 copy of the logits nor the FP32 log-softmax is held.
    pub compiled_loss: bool,
    /// The eager cross-entropy upcasts the logits to FP32 first (`logits.float()`: torchtune,
    /// torchtitan, NeMo AutoModel's `MaskedCrossEntropy(fp32_upcast=True)`, its default). Off: the
    /// 16-bit logits go to `F.cross_entropy` as they are (AutoModel's benchmark configs say
    /// `fp32_upcast: false`: NVIDIA-NeMo/Automodel `examples/benchmark/configs/
    /// qwen3_moe_30b_te_deepep.yaml` @092af93, `gptoss_20b_te_deepep.yaml` @037e04a; the branch
    /// in `nemo_automodel/components/loss/masked_ce.py` @0122d60): no FP32 copy and a 16-bit
    /// log-softmax. Default on.
    pub loss_fp32_upcast: bool,
    /// Under torchtitan's operator-level policy ([`Recompute::Op`]) the attention kernel's output
    /// and log-sum-exp are saved: its SDPA backend is in the policy's save list. Off: the
    /// attention is recomputed in the backward and nothing of it is kept — the cuDNN backend,
    /// which torchtitan puts first on B200-class parts from 3b85aa3 (2025-05-14,
    /// `torchtitan/models/attention.py`) and left out of `_save_list` until b39377f (2025-12-01,
    /// "add all SDPA backends to op_sac_save_list"). Default on.
    pub op_saves_attention: bool,
    /// 16-bit autocast over FP32 parameters (PyTorch AMP without a mixed-precision policy, as
    /// ATorch's `amp_native` wraps the model's forward in `torch.autocast`): the weights are FP32
    /// (4 B, no separate master copy: 4 + 4 + 8 B of states per parameter), FSDP gathers them in
    /// FP32, and the residual stream between blocks stays FP32 (the embedding and the residual
    /// additions are not autocast operations; FP32 + BF16 promotes to FP32), so every block input
    /// kept for the backward is 4 B per element. Off: 16-bit weights and activations.
    pub fp32_params_autocast: bool,
    /// The model's output holds every block's keys and values until the step's backward ends
    /// (Hugging Face transformers' `use_cache`, which the model config turns on and only the
    /// model's own `gradient_checkpointing` turns off in training — not a wrapper's
    /// checkpointing, as ATorch's `checkpoint` optimization applies it): `2 · tokens · kv width`
    /// 16-bit elements per block beside the checkpointed activations. Off: nothing returned.
    pub outputs_hold_kv: bool,
    /// Fused or eager element-wise kernels (see [`Fusion`]): eager moves more HBM bytes in the
    /// norms, RoPE and gated activation.
    pub fusion: Fusion,
    /// The attention kernel's generation (see [`AttentionKernel`]): FlashAttention-2-class kernels
    /// run attention at their own benchmark's rate ([`super::efficiency::H100_ATTENTION_BENCHMARK`]) on Hopper
    /// and later parts.
    pub attention_kernel: AttentionKernel,
    /// The training stack ([`super::stack`]): which shardings a search chooses from, and so what
    /// gradient memory a configuration holds (Megatron's distributed optimizer: an unsharded
    /// FP32 main-gradient buffer; FSDP: sharded). Default Megatron.
    pub stack: super::stack::Stack,
    /// Megatron-LM's `--log-num-zeros-in-grad`: every step each rank counts the zeros of the
    /// gradients its optimizer holds, three PyTorch calls per parameter tensor, then two
    /// all-reduces and `.item()` syncs (host time, [`super::step_host`]). Off: Megatron's default.
    pub log_num_zeros_in_grad: bool,
    /// Megatron-LM's `--log-params-norm`: every step the L2 norm over all parameters (a
    /// multi-tensor kernel, six all-reduces, a sync; host time, [`super::step_host`]). Off:
    /// Megatron's default.
    pub log_params_norm: bool,
    /// The Hugging Face Trainer's own step under native AMP and DDP (transformers before 4.32):
    /// transformers' `AdamW` walked tensor by tensor, the loss scaler's unscale and the clip over
    /// FP32 gradients, `zero_grad`, DDP's bucket copies, autocast's weight casts every micro-batch
    /// ([`super::stack_eager`]), in place of a fused step's traffic. Off: the stack's fused step.
    pub hf_trainer_step: bool,
    /// Megatron-LM's gradient-accumulation fusion (on unless `--no-gradient-accumulation-fusion`):
    /// each linear layer's weight-gradient GEMM accumulates into the FP32 `main_grad` itself. Off:
    /// the GEMM writes a 16-bit gradient that the backward hook of Megatron's DDP adds into
    /// `main_grad` — one more launched `add_` per weight matrix and micro-batch, and the 16-bit
    /// gradient written and read back (host time and HBM traffic, [`super::step_host`]).
    pub grad_accumulation_fusion: bool,
    /// Megatron-Core's fused rotary position embedding (on unless `--no-rope-fusion`): Transformer
    /// Engine's one RoPE kernel per tensor each way. Off: `apply_rotary_pos_emb`'s chain of
    /// element-wise kernels over the queries and keys, forward and backward (HBM bytes and host
    /// launches, [`super::unfused_rope`]).
    pub rope_fusion: bool,
    /// Megatron-Core's layer spec (`--transformer-impl`, [`TransformerImpl`]): which modules' Python
    /// a layer's forward runs ([`super::layer_python`]). Transformer Engine's: Megatron-LM's default.
    pub transformer_impl: TransformerImpl,
    /// Megatron-LM's fine-grained activation offloading (`--fine-grained-activation-offloading`
    /// with `--offload-modules`): which modules' saved tensors are copied to host memory after
    /// each layer's forward and back before its backward ([`super::activation_offload`]). None
    /// offloaded: Megatron's default.
    pub activation_offload: ActivationOffload,
}

/// The modules whose tensors saved for the backward Megatron-LM copies to the host
/// (`--offload-modules`, `megatron/core/transformer/transformer_config.py` l. 1328 at d98e8a6),
/// one flag per module name fmperf prices ([`super::activation_offload`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ActivationOffload {
    /// `attn_norm`: the attention sub-layer's input norm.
    pub attn_norm: bool,
    /// `qkv_linear`: the Q/K/V projections (MLA: the down and up projections and their norms).
    pub qkv_linear: bool,
    /// `core_attn`: the attention core (Q, K, V; unfused: the scores' softmax output too).
    pub core_attn: bool,
    /// `attn_proj`: the attention output projection.
    pub attn_proj: bool,
    /// `mlp_norm`: the MLP sub-layer's input norm.
    pub mlp_norm: bool,
}

impl ActivationOffload {
    /// Whether any module is offloaded.
    pub fn any(&self) -> bool {
        self.attn_norm || self.qkv_linear || self.core_attn || self.attn_proj || self.mlp_norm
    }
}

impl ExtendedOptions {
    /// Every feature on, BF16, the fitted efficiency, selective recomputation, ZeRO-1 (distributed
    /// optimizer), plain 1F1B: the setting of a current Megatron-style run.
    pub fn realistic() -> ExtendedOptions {
        ExtendedOptions {
            model: ModelFeatures::realistic(),
            hardware: HardwareChoices::realistic(),
            recompute: Recompute::Selective,
            sharding: Sharding::Zero1,
            shard_group: None,
            interleave: 1,
            uneven_stages: true,
            stage_split: super::choices::StageSplitRule::Blocks,
            cp_ring_overlap: true,
            cp_comm: super::choices::CpComm::Ring,
            cp_ulysses: 1,
            sequence_parallel: true,
            moe: super::moe::MoeOptions::default(),
            grad_reduce: GradReduce::Auto,
            tp_comm_overlap: false,
            tp_grad_overlap: true,
            dp_overlap: true,
            param_broadcast: false,
            fp8_recipe: Fp8Recipe::TransformerEngine,
            optimizer_states: OptimizerStates::Fp32Master,
            optimizer: super::choices::Optimizer::Adam,
            reshard_after_forward: true,
            grad_accumulation_buffer: false,
            optimizer_in_backward: false,
            grads_freed: false,
            loss_chunks: 1,
            loss_head_chunked: false,
            compiled_loss: false,
            loss_fp32_upcast: true,
            op_saves_attention: true,
            fp32_params_autocast: false,
            outputs_hold_kv: false,
            fusion: Fusion::Fused,
            attention_kernel: AttentionKernel::Native,
            stack: super::stack::Stack::Megatron,
            log_num_zeros_in_grad: false,
            log_params_norm: false,
            hf_trainer_step: false,
            grad_accumulation_fusion: true,
            rope_fusion: true,
            transformer_impl: TransformerImpl::TransformerEngine,
            activation_offload: ActivationOffload {
                attn_norm: false,
                qkv_linear: false,
                core_attn: false,
                attn_proj: false,
                mlp_norm: false,
            },
        }
    }

    /// Checks ranges: efficiency in (0, 1], interleave ≥ 1, shard group ≥ 1, sparsity in [0, 1).
    pub fn validate(&self) -> Result<(), Error> {
        for (name, v) in [
            ("matmul_efficiency", self.hardware.matmul_efficiency),
            ("attention_efficiency", self.hardware.attention_efficiency),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(Error::invalid(name, v, "must be in (0, 1]")
                    .with_hint("the fraction of the achievable matmul rate sustained in training"));
            }
        }
        if self.interleave == 0 || self.interleave > 1024 {
            return Err(Error::invalid("interleave", self.interleave, "must be from 1 to 1024"));
        }
        if !(self.hardware.gemm_half_dim.is_finite() && (0.0..=65536.0).contains(&self.hardware.gemm_half_dim)) {
            return Err(Error::invalid(
                "gemm_half_dim",
                self.hardware.gemm_half_dim,
                "must be from 0 to 65536 [elements]",
            ));
        }
        if !(self.hardware.attention_half_seq.is_finite()
            && (0.0..=1048576.0).contains(&self.hardware.attention_half_seq))
        {
            return Err(Error::invalid(
                "attention_half_seq",
                self.hardware.attention_half_seq,
                "must be from 0 to 1048576 [tokens]",
            ));
        }
        if self.cp_ulysses == 0 || self.cp_ulysses > 65536 {
            return Err(Error::invalid("cp_ulysses", self.cp_ulysses, "must be from 1 to 65536"));
        }
        if self.loss_chunks == 0 || self.loss_chunks > 65536 {
            return Err(Error::invalid("loss_chunks", self.loss_chunks, "must be from 1 to 65536"));
        }
        if self.shard_group == Some(0) {
            return Err(Error::invalid("shard_group", 0, "must be a positive integer"));
        }
        if self.stage_split != super::choices::StageSplitRule::Blocks && !self.uneven_stages {
            return Err(Error::invalid(
                "stage_split",
                self.stage_split,
                "needs uneven_stages = on: an end counted as a block leaves its stage one block short",
            ));
        }
        let s = self.model.weight_sparsity;
        if !(s.is_finite() && (0.0..1.0).contains(&s)) {
            return Err(Error::invalid("weight_sparsity", s, "must be from 0 (dense) to below 1")
                .with_hint("the fraction of weights that are zero, e.g. 0.9"));
        }
        Ok(())
    }
}

impl Default for ExtendedOptions {
    fn default() -> Self {
        ExtendedOptions::realistic()
    }
}

/// Which features of the model the physics of extended mode include: each one the reference model
/// leaves out (or prices differently) and a real architecture has. Part of [`ExtendedOptions`]
/// (`model`); [`Self::realistic`] turns every feature on, with dense weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelFeatures {
    /// Causal attention: logits and attend FLOPs of a causal mask are half of full attention's
    /// (flash attention skips the masked blocks).
    pub causal: bool,
    /// Grouped-query attention: K and V projections of `kv_heads · head_dim` columns. When off, K/V
    /// are priced at the query width (the reference).
    pub grouped_query_attention: bool,
    /// Gated MLP (SwiGLU): three matrices (gate, up, down). When off, two (the reference).
    pub gated_mlp: bool,
    /// Embedding lookup on the first pipeline stage, output head and cross-entropy loss over the
    /// vocabulary on the last (tensor-parallel over the vocabulary).
    pub embeddings_and_head: bool,
    /// Unstructured weight sparsity [fraction of zero weights, 0 ≤ s < 1]: on hardware that skips
    /// zero weights ([`super::Hardware::unstructured_sparsity`], the wafer-scale engines) the
    /// FLOPs of the blocks' weight matmuls fall to `1 − s` of dense; elsewhere it has no effect
    /// (see [`super::sparsity`]). 0 = dense (the default).
    pub weight_sparsity: f64,
}

impl ModelFeatures {
    /// Causal attention, grouped-query attention, gated MLP, embeddings and head on; dense
    /// weights (sparsity 0).
    pub fn realistic() -> ModelFeatures {
        ModelFeatures {
            causal: true,
            grouped_query_attention: true,
            gated_mlp: true,
            embeddings_and_head: true,
            weight_sparsity: 0.0,
        }
    }
}

/// How extended mode models the hardware: the number format of the matmuls, the achievable rate
/// (fitted efficiencies, measured ceiling, size-dependent rates), roofline pricing of memory-bound
/// work, NIC use of ZeRO-3 collectives and the memory the device holds beyond live tensors. Part
/// of [`ExtendedOptions`] (`hardware`); [`Self::realistic`] is BF16 with the fitted constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HardwareChoices {
    /// Number format of the linear layers' matrix multiplications; selects the peak and measured
    /// rate of that precision from the catalog (FP8 where the part has it). Attention and
    /// element-wise work run in 16 bits when this is FP8 (the FP8 recipes of Transformer Engine and
    /// torchao cast only the linear layers), in 32 bits for FP32/TF32.
    pub precision: Precision,
    /// `η`: the fraction of the achievable matmul rate that matrix work sustains in a real
    /// training step (kernel shapes, launch gaps, clocks, framework). The achievable rate is the
    /// part's measured matmul ceiling (see [`Self::measured_ceiling`]). Default:
    /// [`super::efficiency::FITTED_MATMUL_EFFICIENCY`], the one constant fitted on the measured
    /// runs (see `crate::validate::fit`).
    pub matmul_efficiency: f64,
    /// `η_att`: the fraction of the attention kernel's benchmark rate (FlashAttention-3 paper's
    /// cuDNN or FlashAttention-2 curve by sequence length,
    /// [`super::efficiency::attention_kernel_fraction`]) that a training step sustains; 1 = the
    /// kernel benchmark. Default: [`super::efficiency::FITTED_ATTENTION_EFFICIENCY`], fitted with `η`.
    pub attention_efficiency: f64,
    /// Use the part's measured maximum achievable matmul rate (MAMF) from the hardware catalog as
    /// the ceiling; parts without a measurement use the catalog's median MAMF/peak ratio. When off,
    /// the ceiling is the datasheet peak.
    pub measured_ceiling: bool,
    /// GEMM size at which a matmul dimension halves the rate [elements]: each matmul runs at
    /// `η · ceiling · Π_{x∈m,k,n} x/(x + c)` (small and skinny GEMMs reach less of the ceiling,
    /// as Calculon's size-dependent efficiency tables show). 0: every GEMM at `η · ceiling`.
    /// Default: [`super::efficiency::FITTED_GEMM_HALF_DIM`], fitted with `η` and `η_att`.
    pub gemm_half_dim: f64,
    /// Sequence length at which a training step's flash attention halves its rate along one
    /// sequence dimension beyond the kernel benchmark's own dependence on the sequence [tokens]:
    /// attention runs at `η_att · kernel fraction(s) · ceiling · s_q/(s_q + c)·s_k/(s_k + c)`
    /// (the measured runs are slower at 2–4k tokens than the kernel benchmark, at a fixed 16k
    /// tokens per call, says). 0: the benchmark's dependence only. Default:
    /// [`super::efficiency::FITTED_ATTENTION_HALF_SEQ`], fitted with `η` and `η_att`.
    pub attention_half_seq: f64,
    /// Price element-wise work (norms, activations, residual adds, FP8 casts, the optimizer step)
    /// and memory-bound matmuls by their HBM traffic (a roofline per operation).
    pub memory_bound_ops: bool,
    /// ZeRO-3/FSDP per-block collectives whose group spans several fast domains move each
    /// device's share through its own NIC (spec §2.4 case 7), as the measured ZeRO-3 and FSDP runs
    /// across nodes do (DeepSpeed ZeRO-3 on 384–2240 A100s, Composer FSDP on 64–128 GPUs: about
    /// one NIC's bandwidth per device). Off: the reference's multi-ring rate (case 9: a domain's
    /// `τ` members drive `τ` NICs at once), which the bucketed gradient reductions of ZeRO-0/1/2
    /// always use. Evidence (issue 16 §3): NCCL could drive every NIC for these collectives too,
    /// but priced that way the DeepSpeed ZeRO-3 rows (Narayanan et al. 2021, 768–2240 A100s)
    /// come out +100 % to +340 % too fast and Composer's FSDP on 64 H100s +30 %, against ±25 % at
    /// one NIC per device: the small per-block gathers of ZeRO-3 do not reach the domain's
    /// aggregate NIC bandwidth. Kept on. Not applied on the `jax` stack, whose XLA collectives are
    /// combined and prefetched, nor on `megatron` and `fsdp`, which gather and reduce each unit's
    /// flat buffer in one collective ([`super::stack::Stack::zero3_one_nic_per_device`], issue 31):
    /// in effect a rule of DeepSpeed's ZeRO-3.
    pub zero3_per_nic: bool,
    /// Memory beyond live tensors: allocator fragmentation (peak reserved), the CUDA context and
    /// NCCL buffers (device level); see [`super::memory`]. Off: every figure is the allocated one.
    pub memory_overheads: bool,
}

impl HardwareChoices {
    /// BF16, the fitted `η`, `η_att`, `c` and `c_att` on the measured ceiling, memory-bound work
    /// priced by its traffic, ZeRO-3 collectives at one NIC per device, memory overheads counted.
    pub fn realistic() -> HardwareChoices {
        HardwareChoices {
            precision: Precision::Bf16,
            matmul_efficiency: super::efficiency::FITTED_MATMUL_EFFICIENCY,
            attention_efficiency: super::efficiency::FITTED_ATTENTION_EFFICIENCY,
            measured_ceiling: true,
            gemm_half_dim: super::efficiency::FITTED_GEMM_HALF_DIM,
            attention_half_seq: super::efficiency::FITTED_ATTENTION_HALF_SEQ,
            memory_bound_ops: true,
            zero3_per_nic: true,
            memory_overheads: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in Recompute::ALL.into_iter().chain([Recompute::Op]) {
            assert_eq!(r.as_str().parse::<Recompute>().unwrap(), r);
        }
        // A partial level is written as its share and read back; 0 and 1 are the whole levels,
        // a share outside (0, 1) is refused, naming the field.
        let r: Recompute = "0.25".parse().unwrap();
        assert_eq!((r, r.to_string()), (Recompute::of_share(0.25), "0.25".to_string()));
        assert_eq!(r.to_string().parse::<Recompute>().unwrap(), r);
        assert_eq!(Recompute::of_share(11.5 / 13.0).block_share(), Some(0.885));
        assert_eq!((Recompute::of_share(0.0), Recompute::of_share(1.0)), (Recompute::None, Recompute::Full));
        assert_eq!((Recompute::of_share(0.0004), Recompute::of_share(0.9996)), (Recompute::None, Recompute::Full));
        for bad in ["0", "1", "1.5", "-0.2", "0.0001", "partial"] {
            let e = bad.parse::<Recompute>().unwrap_err();
            assert_eq!(e.field(), Some("recompute"), "{bad}");
        }
        for s in Sharding::ALL {
            assert_eq!(s.as_str().parse::<Sharding>().unwrap(), s);
        }
        assert_eq!("FSDP".parse::<Sharding>().unwrap(), Sharding::Zero3);
        assert!("zero4".parse::<Sharding>().is_err());
    }

    #[test]
    fn realistic_composes_the_groups_with_todays_defaults() {
        let o = ExtendedOptions::realistic();
        assert_eq!(o.model, ModelFeatures::realistic());
        assert_eq!(o.hardware, HardwareChoices::realistic());
        // The defaults of the two groups, by switch key, as the text form writes them.
        let fitted = |x: f64| x.to_string();
        let expected = [
            ("causal", "on".to_string()),
            ("grouped_query_attention", "on".into()),
            ("gated_mlp", "on".into()),
            ("embeddings_and_head", "on".into()),
            ("weight_sparsity", "0".into()),
            ("precision", "bf16".into()),
            ("matmul_efficiency", fitted(super::super::efficiency::FITTED_MATMUL_EFFICIENCY)),
            ("attention_efficiency", fitted(super::super::efficiency::FITTED_ATTENTION_EFFICIENCY)),
            ("measured_ceiling", "on".into()),
            ("gemm_half_dim", fitted(super::super::efficiency::FITTED_GEMM_HALF_DIM)),
            ("attention_half_seq", fitted(super::super::efficiency::FITTED_ATTENTION_HALF_SEQ)),
            ("memory_bound_ops", "on".into()),
            ("zero3_per_nic", "on".into()),
            ("memory_overheads", "on".into()),
            ("stage_split", "blocks".into()),
        ];
        for (key, value) in expected {
            assert_eq!(o.value_of(key), Some(value), "{key}");
        }
    }

    #[test]
    fn validation() {
        assert!(ExtendedOptions::realistic().validate().is_ok());
        let bad = ExtendedOptions {
            hardware: HardwareChoices { matmul_efficiency: 1.5, ..HardwareChoices::realistic() },
            ..ExtendedOptions::realistic()
        };
        assert_eq!(bad.validate().unwrap_err().field(), Some("matmul_efficiency"));
        let bad = ExtendedOptions { interleave: 0, ..ExtendedOptions::realistic() };
        assert_eq!(bad.validate().unwrap_err().field(), Some("interleave"));
        assert_eq!(ExtendedOptions::realistic().describe().len(), 52);
        let bad = ExtendedOptions { cp_ulysses: 0, ..ExtendedOptions::realistic() };
        assert_eq!(bad.validate().unwrap_err().field(), Some("cp_ulysses"));
        let strict = ExtendedOptions {
            uneven_stages: false,
            stage_split: super::super::choices::StageSplitRule::EndsAsBlocks,
            ..ExtendedOptions::realistic()
        };
        assert_eq!(strict.validate().unwrap_err().field(), Some("stage_split"));
        let bad = ExtendedOptions {
            model: ModelFeatures { weight_sparsity: 1.0, ..ModelFeatures::realistic() },
            ..ExtendedOptions::realistic()
        };
        assert_eq!(bad.validate().unwrap_err().field(), Some("weight_sparsity"));
    }
}
