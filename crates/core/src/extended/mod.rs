//! Extended mode: the published model made realistic, feature by feature, beside reference mode
//! (which stays bit-exact and is not changed by anything here).
//!
//! Every feature is a named switch of [`ExtendedOptions`] (defaults: [`ExtendedOptions::realistic`]),
//! held by kind: the model's features in [`ModelFeatures`] (`causal`, `grouped_query_attention`,
//! `gated_mlp`, `embeddings_and_head`, `weight_sparsity`), how the hardware is modelled in
//! [`HardwareChoices`] (`precision`, the efficiencies and size constants, `measured_ceiling`,
//! `memory_bound_ops`, `zero3_per_nic`, `memory_overheads`), and the execution choices (the rest,
//! with the MoE switches in [`moe::MoeOptions`]) as fields of [`ExtendedOptions`] itself:
//!
//! | switch | what it models | module |
//! |---|---|---|
//! | `precision` | FP32 / TF32 / FP16 / BF16 / FP8 matmuls at that precision's peak and measured ceiling; 16-bit attention in FP8 runs | [`hardware`] |
//! | `matmul_efficiency`, `measured_ceiling` | achievable rate = `η` × the part's measured matmul ceiling (MAMF), not 0.8 × peak | [`efficiency`] |
//! | `memory_bound_ops` | roofline per matmul; norms, activations, residuals, FP8 casts, optimizer step priced by HBM traffic | [`pricing`], [`block`] |
//! | `recompute` | none / selective / full, in time (an extra forward) and memory (only block inputs kept) | [`block`], [`memory`] |
//! | `stack` | the training stack (Megatron default, DeepSpeed, PyTorch FSDP): the shardings the search offers and so the gradient memory (Megatron's distributed optimizer keeps an unsharded FP32 gradient buffer); nanotron's separate FP32 gradient accumulation in time, and its own pipeline split by block cost (the loss on a stage of its own behind a heavy head) | [`stack`], [`fp32_accumulation`], [`stack_nanotron`] |
//! | `sharding`, `shard_group` | ZeRO-0…3 and FSDP (hybrid sharding): memory and the real gather/scatter pattern with its overlap limits; Megatron-FSDP's per-unit host calls | [`data_parallel`], [`memory`], [`fsdp_host`] |
//! | `interleave`, `uneven_stages` | interleaved 1F1B (bubble ÷ v), `⌈D/pp⌉` blocks on the busiest stage | [`pipeline`] |
//! | `stage_split` | the blocks alone dealt to the stages, or the embedding and/or the head counted as one block (Megatron-LM `--account-for-*-in-pipeline-split`, Megatron-DeepSpeed `--pp-partition-method 'type:transformer|embedding'`) | [`pipeline`], [`memory`] |
//! | `causal` | causal attention: half the logits/attend FLOPs | [`block`] |
//! | `cp_ring_overlap` | context parallelism as a K/V ring overlapped with attention | [`block`] |
//! | `cp_comm`, `cp_ulysses` | context parallelism as a ring, Ulysses all-to-alls over heads, or their hybrid (USP) | [`context_parallel`] |
//! | `sequence_parallel` | norms/residuals on `1/tp` of the tokens | [`block`] |
//! | `grouped_query_attention`, `gated_mlp` | K/V of `kv_heads` width; SwiGLU's third matrix | [`workload`], [`block`] |
//! | `embeddings_and_head` | embedding, output head and loss over the vocabulary on the end stages | [`head`] |
//! | `memory_overheads` | allocator fragmentation (peak reserved), CUDA context and NCCL buffers (device level) | [`memory`] |
//! | `weight_sparsity` | unstructured sparse weights: fewer block-matmul FLOPs on wafer-scale parts only | [`sparsity`] |
//! | `grad_reduce` | gradient reduction width (auto: FP32 for BF16 training as Megatron-LM and torchtitan do) | [`data_parallel`] |
//! | (always) | collective latency as NCCL models it: per call and per step by tier, ring or tree (all-reduce at many nodes: logarithmic), the protocol of least time; pipeline messages one step | [`latency`], [`pricing`] |
//! | (always) | a pass lasts at least its operations' host issue time (130 µs each, eager PyTorch): small blocks are host-bound | [`block`] |
//! | `dp_overlap` | data-parallel gradient reduction bucketed behind the backward, parameter gather behind the forward, or both exposed after the step | [`data_parallel`] |
//! | `param_broadcast` | ZeRO-1/2 parameters shared by one broadcast per shard owner after the step (InternLM), gradients all-reduced | [`data_parallel`] |
//! | `tp_comm_overlap` | TP collectives hidden behind their GEMMs (Megatron `--tp-comm-overlap`, async TP) | [`sublayer`] |
//! | `tp_grad_overlap` | without sequence parallelism, the input gradient's all-reduce behind the weight-gradient GEMM (Megatron-LM) or exposed (BigScience's Megatron-DeepSpeed) | [`sublayer`] |
//! | `gemm_half_dim`, `attention_half_seq` | small/skinny GEMMs and short attention sequences run below `η` (fitted) | [`pricing`], [`efficiency`] |
//! | `fp8_recipe` | Transformer Engine (FP8 weight copies cached, FP8 inputs saved; or FP8 primary weights, `fp8_param_gather`) or torchao float8 (cast on the fly; with FSDP's float8 all-gather the gathered weights are FP8) | [`ops`], [`evaluate`], [`memory`] |
//! | `optimizer_states` | FP32 master + Adam moments, or pure BF16 without master | [`memory`] |
//! | `optimizer` | Adam, or Muon (Newton–Schulz per weight matrix, replicated or layer-wise distributed) in time and memory | [`muon`], [`memory`] |
//! | `reshard_after_forward` | FSDP frees gathered blocks after the forward | [`memory`] |
//! | `loss_chunks` | logits and cross-entropy in chunks | [`loss_memory`] |
//! | `loss_head_chunked` | the output head runs inside the loss chunks (one chunk's logits at a time, an FP32 hidden-state gradient accumulator) | [`loss_memory`] |
//! | `compiled_loss` | cross-entropy compiled with its FP32 upcast (no FP32 logits held) | [`loss_memory`] |
//! | `op_saves_attention` | the operator-level policy saves the attention output (off: recomputed, torchtitan's cuDNN backend on B200 until December 2025) | [`attention`], [`memory`] |
//! | `fp32_params_autocast` | 16-bit autocast over FP32 weights: FP32 states, gathers and kept block inputs | [`model_states`], [`memory`] |
//! | `outputs_hold_kv` | the model's output holds every block's keys and values through the backward (Hugging Face `use_cache`) | [`memory`] |
//! | `fusion` | fused element-wise kernels, or eager PyTorch with each primitive's own HBM traffic | [`ops`], [`sublayer`] |
//! | `log_num_zeros_in_grad`, `log_params_norm` | Megatron-LM's per-step gradient zero count and parameter norm: host time of their PyTorch calls and synced all-reduces, added to the step; the zero count's sync inside the optimizer step exposes the step's walk over its tensors | [`step_host`], [`optimizer_host`] |
//! | `hf_trainer_step` | the Hugging Face Trainer's own step under native AMP and DDP (transformers before 4.32): transformers' AdamW tensor by tensor, unscale and clip over FP32 gradients, `zero_grad`, DDP's bucket copies, autocast's weight casts per micro-batch | [`stack_eager`] |
//! | `grad_accumulation_fusion` | Megatron-LM's weight-gradient GEMMs accumulate into the FP32 main gradient; off (`--no-gradient-accumulation-fusion`), DDP's backward hook adds each weight's 16-bit gradient: a launch per weight matrix and the 16-bit gradient's write and read | [`step_host`], [`iteration`] |
//! | `rope_fusion` | Megatron-Core's fused RoPE kernel; off (`--no-rope-fusion`), `apply_rotary_pos_emb`'s element-wise kernels over the queries and keys: their bytes as one operation, their further launches as host time | [`unfused_rope`] |
//! | `transformer_impl` | Megatron-Core's layer spec: Transformer Engine's modules or its own (`local`): which modules' Python a layer's forward runs | [`layer_python`] |
//! | `attention_kernel` | the part's own-generation fused attention, a FlashAttention-2-class kernel (slower on Hopper and later), or unfused attention (the score matrix computed in full and kept) | [`pricing`], [`efficiency`], [`unfused_attention`] |
//!
//! Memory: [`evaluate::memory_estimate`] gives the peak per device over the pipeline stages as named
//! parts with the three measured figures (peak allocated, peak reserved, device level).
//!
//! Each block is a list of operations ([`ops`]: name, kind, FLOPs, bytes, collective, parameters,
//! bytes kept per recomputation policy, priced passes); [`block`] and the memory model sum them,
//! and [`block_operations::block_operations`] gives the list to views (the explorer's layer table).
//!
//! The switches as data (keys, kinds, sources of the defaults) are in [`switches`], their values
//! as text and the `key=value,…` text form of the CLI's `--ext` and the page's `ext` key in
//! [`switch_text`].
//!
//! Reference quirks (spec §9) corrected in extended mode: Q3 (slow pipeline links priced), Q4
//! (all-reduce = reduce-scatter + all-gather on every tier), Q5 (no 20 µs per layer, measured
//! ceilings instead of 0.8 × peak), Q6 (no `R_mat/R_vec` inflation inside flash attention), Q8
//! (memory by ZeRO stage with FP32 gradients and recomputation), Q9 (consistent shards), Q10 (no
//! dropped blocks: uneven stages), Q11 (`2k` FLOPs per dot product), Q15 (embeddings, head, loss,
//! causal mask), Q19 (flash attention's backward costs 2.5 forwards, output stored once). Kept:
//! Q7 (the bubble includes stage messages, which are on the critical path). Not modelled: 2D SUMMA
//! (Q1, Q2 belong to it); extended mode covers `1d` and `2d-seqp`.
//!
//! The constants fitted to measured runs ([`efficiency::Efficiency::FITTED`]) are `η` and `η_att`
//! (the fractions of the measured matmul ceiling sustained by the linear layers and by flash
//! attention) and the size constants `c` (GEMM dimension at half rate) and `c_att` (attention
//! sequence at half rate). Their fit and leave-one-source-out error are in `crate::validate::fit`.
//! Other modelling choices that the measured runs informed, each global and switchable: ZeRO-3/FSDP
//! collectives across domains at one NIC per device (`zero3_per_nic`, DeepSpeed's per-parameter
//! ZeRO-3 only since session 31; with all NICs the DeepSpeed ZeRO-3 rows on 768–2240 A100s come out
//! 2–4× too fast), the datasheet peak as the ceiling of
//! parts without any measurement (TPUs).

pub mod activation_offload;
pub mod attention;
pub mod block;
pub mod block_operations;
pub mod choices;
pub mod context_parallel;
pub mod data_parallel;
pub mod device_memory;
pub mod efficiency;
pub mod evaluate;
pub mod fp32_accumulation;
pub mod fsdp_host;
pub mod hardware;
pub mod head;
pub mod iteration;
pub mod latency;
pub mod layer_python;
pub mod layout;
pub mod layout_rules;
pub mod loss_memory;
pub mod memory;
pub mod model_states;
pub mod moe;
mod moe_caches;
pub mod muon;
pub mod ops;
pub mod optimizer_host;
pub mod options;
pub mod pipeline;
pub mod pricing;
pub mod sparsity;
pub mod stack;
pub mod stack_eager;
pub mod stack_nanotron;
pub mod stack_tensors;
pub mod step_host;
pub mod sublayer;
pub mod switch_text;
pub mod switches;
pub mod timing;
pub mod unfused_attention;
pub mod unfused_rope;
pub mod workload;

pub use device_memory::{DeviceMemory, DeviceMemoryPart};
pub use evaluate::{Breakdown, ExtendedEvaluation, ExtendedEvaluator, HostPart, evaluate, memory_estimate};
pub use hardware::Hardware;
pub use layout::{Layout, Placement};
pub use memory::{EstimatePart, MemoryEstimate};
pub use options::{
    AttentionKernel, ExtendedOptions, Fp8Recipe, Fusion, GradReduce, HardwareChoices, ModelFeatures, OptimizerStates,
    Recompute, RecomputeShare, Sharding, TransformerImpl,
};
pub use pipeline::StageSplitRule;
pub use stack::Stack;
pub use workload::Workload;
