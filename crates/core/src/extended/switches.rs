//! The switches of extended mode as data: one [`SwitchInfo`] per field of
//! [`ExtendedOptions`](super::options::ExtendedOptions) and of its groups `model`
//! ([`super::options::ModelFeatures`]) and `hardware` ([`super::options::HardwareChoices`]), keyed
//! by the bare field name (key, label, what it models, kind of value, where the default comes
//! from), the other names a key is accepted by, and the fixed constants behind the defaults
//! ([`CONSTANTS`]). Every view (CLI help, the studies and explorer panels, the validation page)
//! lists the switches from [`SWITCHES`], so none can be forgotten. Their values as text
//! (`get`/`set` by key) and the text form of a whole setting (`key=value,…`, the CLI's `--ext` and
//! the page's `ext`) are in [`super::switch_text`].
//!
//! Values: toggles `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`), choices by name
//! (`recompute=full`, `sharding=fsdp`), numbers as decimals (`matmul_efficiency=0.7`,
//! `weight_sparsity=0.9`), counts as integers, `shard_group=all` for "no hybrid sharding".

use super::block::FLASH_BACKWARD_FACTOR;
use super::efficiency::{FITTED_ATTENTION_EFFICIENCY, FITTED_MATMUL_EFFICIENCY};
use super::iteration::OPTIMIZER_BYTES_PER_PARAMETER;
use super::loss_memory::LOSS_BYTES_PER_LOGIT;
use super::memory::{CUDA_CONTEXT_GB, FRAGMENTATION, NCCL_BUFFERS_GB};

/// What values a switch takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SwitchKind {
    /// On or off.
    Toggle,
    /// One of the names.
    Choice(&'static [&'static str]),
    /// A real number in `[min, max]` (`open_max`: `max` itself excluded; `open_min`: `min` excluded).
    Number {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// Whether `min` itself is excluded.
        open_min: bool,
        /// Whether `max` itself is excluded.
        open_max: bool,
    },
    /// An integer from `min` to `max`.
    Count {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
    },
    /// `all`, or an integer ≥ 1.
    CountOrAll,
}

/// One switch of extended mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchInfo {
    /// Key in the text form and the field name in
    /// [`ExtendedOptions`](super::options::ExtendedOptions) (or in its `model` / `hardware` group,
    /// without the group: `precision` is `hardware.precision`).
    pub key: &'static str,
    /// Short name for forms.
    pub label: &'static str,
    /// What it models, in one line.
    pub what: &'static str,
    /// Its values.
    pub kind: SwitchKind,
    /// Where the default comes from.
    pub source: &'static str,
}

const PRECISIONS: &[&str] = &["fp32", "tf32", "fp16", "bf16", "fp8"];
const RECOMPUTE: &[&str] = &["none", "selective", "full", "op"];
const SHARDING: &[&str] = &["zero0", "zero1", "zero2", "zero3"];
const STACKS: &[&str] = &["megatron", "deepspeed", "fsdp", "jax", "nanotron"];
const GRAD_REDUCE: &[&str] = &["auto", "fp32", "param"];
const FP8_RECIPES: &[&str] = &["te", "te_fp8_weights", "torchao", "torchao_fp8_gather", "online_blockwise"];
const OPTIMIZER_STATES: &[&str] = &["fp32_master", "pure_bf16", "bf16_moments"];
const OPTIMIZERS: &[&str] = &["adam", "muon", "dist_muon"];
const FUSION: &[&str] = &["fused", "eager"];
const TRANSFORMER_IMPLS: &[&str] = &["transformer_engine", "local"];
const ATTENTION_KERNELS: &[&str] = &["native", "fa2", "unfused"];
const CP_COMMS: &[&str] = &["ring", "ulysses", "hybrid", "search"];
const STAGE_SPLITS: &[&str] = &["blocks", "embedding_as_block", "head_as_block", "ends_as_blocks"];

const FITTED: &str = "fitted once on the 108 measured training runs shipped with fmperf (Validation view: fit and leave-one-source-out error)";

const fn toggle(key: &'static str, label: &'static str, what: &'static str, source: &'static str) -> SwitchInfo {
    SwitchInfo { key, label, what, kind: SwitchKind::Toggle, source }
}

const EFFICIENCY: SwitchKind = SwitchKind::Number { min: 0.0, max: 1.0, open_min: true, open_max: false };

/// Every switch, in display order (the fields of [`ExtendedOptions`](super::options::ExtendedOptions)).
pub const SWITCHES: [SwitchInfo; 52] = [
    SwitchInfo {
        key: "precision",
        label: "Precision",
        what: "number format of the linear layers' matmuls",
        kind: SwitchKind::Choice(PRECISIONS),
        source: "BF16, the usual training format; a sweep's or scenario's own precision (field, system spec or axis) \
                 takes its place",
    },
    SwitchInfo {
        key: "matmul_efficiency",
        label: "Matmul efficiency η",
        what: "fraction of the achievable matmul rate sustained in training (fitted, global)",
        kind: EFFICIENCY,
        source: FITTED,
    },
    SwitchInfo {
        key: "attention_efficiency",
        label: "Attention efficiency η_att",
        what: "fraction of the attention kernel's measured rate (FlashAttention-3 paper, H100, by sequence \
               length) that flash attention sustains in training (fitted, global)",
        kind: EFFICIENCY,
        source: FITTED,
    },
    toggle(
        "measured_ceiling",
        "Measured matmul ceiling",
        "achievable matmul rate = measured ceiling (MAMF) instead of the datasheet peak",
        "the hardware catalog's maximum achievable matmul FLOP/s (S. Bekman, ML Engineering Open Book)",
    ),
    toggle(
        "zero3_per_nic",
        "ZeRO-3 at one NIC per device",
        "DeepSpeed ZeRO-3 gathers across domains at one NIC per device (measured)",
        "the measured DeepSpeed ZeRO-3 runs across nodes (per-parameter gathers); PyTorch FSDP, Megatron-FSDP and XLA use every NIC",
    ),
    toggle(
        "memory_bound_ops",
        "Memory-bound operations",
        "element-wise work and the optimizer priced by HBM traffic",
        "a roofline per operation at the catalog's HBM bandwidth",
    ),
    SwitchInfo {
        key: "recompute",
        label: "Recomputation",
        what: "activation recomputation (none / selective / full / op: torchtitan's operator-level policy)",
        kind: SwitchKind::Choice(RECOMPUTE),
        source: "selective: Megatron-LM's setting with flash attention (Korthikanti et al. 2022)",
    },
    SwitchInfo {
        key: "stack",
        label: "Training stack",
        what: "the stack whose sharding the search chooses from: megatron (DDP, distributed optimizer with an \
               unsharded FP32 gradient buffer, Megatron-FSDP), deepspeed (ZeRO 0-3), fsdp (PyTorch FSDP: no shard, \
               SHARD_GRAD_OP, FULL_SHARD), jax (MaxText/PaxML: data or fsdp axis; FSDP collectives at every \
               NIC of a node), nanotron (DDP or ZeRO-1, its parameter all-gather inside the optimizer step)",
        kind: SwitchKind::Choice(STACKS),
        source: "megatron: Megatron-Core's distributed optimizer keeps its main-gradient buffer whole (no ZeRO-2)",
    },
    SwitchInfo {
        key: "sharding",
        label: "ZeRO stage / FSDP",
        what: "ZeRO stage (zero3 = FSDP full shard)",
        kind: SwitchKind::Choice(SHARDING),
        source: "zero1: Megatron-LM's distributed optimizer",
    },
    SwitchInfo {
        key: "shard_group",
        label: "ZeRO shard group [devices]",
        what: "shard group size [devices] (hybrid sharding: ZeRO-3 parameters, or ZeRO-1/2 optimizer states, \
               sharded within groups of this size and replicated across them)",
        kind: SwitchKind::CountOrAll,
        source: "all: shard over the whole data-parallel group (FSDP's FULL_SHARD); a group: FSDP's HYBRID_SHARD, \
                 Megatron's --num-distributed-optimizer-instances, InternLM's zero1 group",
    },
    SwitchInfo {
        key: "interleave",
        label: "Interleaved stages per device",
        what: "virtual pipeline stages per device",
        kind: SwitchKind::Count { min: 1, max: 1024 },
        source: "1: plain 1F1B (Narayanan et al. 2021 for the interleaved schedule)",
    },
    toggle(
        "uneven_stages",
        "Uneven pipeline stages",
        "busiest pipeline stage holds ⌈D/pp⌉ blocks",
        "on: frameworks place the remaining blocks instead of dropping them",
    ),
    SwitchInfo {
        key: "stage_split",
        label: "Pipeline split",
        what: "how blocks are dealt to pipeline stages: the blocks alone, or with the embedding and/or the head \
               counted as one block (its stage holds one block fewer)",
        kind: SwitchKind::Choice(STAGE_SPLITS),
        source: "blocks: Megatron-LM's and torchtitan's default; Megatron-LM --account-for-embedding-in-pipeline-split \
                 and --account-for-loss-in-pipeline-split, Megatron-DeepSpeed --pp-partition-method \
                 'type:transformer|embedding' (BLOOM-176B) count the ends",
    },
    toggle(
        "causal",
        "Causal attention",
        "causal attention: half the logits/attend FLOPs",
        "on: decoder-only language models (flash attention skips masked blocks)",
    ),
    toggle(
        "cp_ring_overlap",
        "Context-parallel ring overlap",
        "context parallel K/V ring overlapped with attention",
        "on: ring attention (Liu et al. 2023), Megatron's p2p context parallelism",
    ),
    SwitchInfo {
        key: "cp_comm",
        label: "Context-parallel flavour",
        what: "how the context-parallel devices share attention: a K/V ring, Ulysses all-to-alls of Q/K/V and the \
               output over heads (exposed), the hybrid (Ulysses over cp_ulysses ranks, a ring over the rest), or search: \
               the search tries each per layout and says which it chose",
        kind: SwitchKind::Choice(CP_COMMS),
        source: "ring: Megatron-Core's default (--cp-comm-type p2p); ulysses: DeepSpeed-Ulysses (arXiv:2309.14509), \
                 Megatron a2a; hybrid: USP (arXiv:2405.07719), Megatron a2a+p2p",
    },
    SwitchInfo {
        key: "cp_ulysses",
        label: "Ulysses degree (hybrid CP)",
        what: "the all-to-all degree of the hybrid flavour: must divide cp and the heads per TP rank; the ring \
               degree is cp / cp_ulysses",
        kind: SwitchKind::Count { min: 1, max: 65536 },
        source: "1 (a pure ring); USP puts Ulysses inside a node (e.g. 8), yunchang's ulysses_degree, Megatron \
                 --hierarchical-context-parallel-sizes",
    },
    toggle(
        "sequence_parallel",
        "Sequence parallelism",
        "norms and residuals on 1/tp of the tokens",
        "on: Megatron-LM with tensor parallelism (Korthikanti et al. 2022)",
    ),
    toggle(
        "grouped_query_attention",
        "Grouped-query attention",
        "K/V projections of kv_heads width",
        "on: the model's own kv_heads (catalog); off prices K/V at the query width like the reference",
    ),
    toggle(
        "gated_mlp",
        "Gated MLP (SwiGLU)",
        "SwiGLU MLP with three matrices",
        "on: the model's own MLP (catalog); off prices two matrices like the reference",
    ),
    toggle(
        "embeddings_and_head",
        "Embeddings and output head",
        "embedding, output head and loss over the vocabulary",
        "on: the model's vocabulary (catalog); models without one have none",
    ),
    toggle(
        "memory_overheads",
        "Memory margin",
        "allocator fragmentation, CUDA context and NCCL buffers (reserved and device-level memory)",
        "fragmentation fitted on the measured memory runs; CUDA context and NCCL buffers from their documentation",
    ),
    SwitchInfo {
        key: "weight_sparsity",
        label: "Weight sparsity",
        what: "fraction of zero weights (unstructured): fewer block-matmul FLOPs on wafer-scale parts only \
               (cerebras_cs2, cerebras_cs3); GPUs accelerate only 2:4 structured sparsity",
        kind: SwitchKind::Number { min: 0.0, max: 1.0, open_min: false, open_max: true },
        source: "0: dense; Emani et al. 2023 trained GPT models at up to 90 % on Cerebras CS-2",
    },
    SwitchInfo {
        key: "grad_reduce",
        label: "Gradient reduction width",
        what: "data-parallel gradient reduction in FP32 or in the 16-bit parameter type (auto: FP32 for BF16 \
               training, FP16 for FP16)",
        kind: SwitchKind::Choice(GRAD_REDUCE),
        source: "auto: Megatron-LM sets accumulate_allreduce_grads_in_fp32 with --bf16; torchtitan's FSDP2 \
                 mixed-precision policy reduces in float32",
    },
    toggle(
        "tp_comm_overlap",
        "Tensor-parallel overlap",
        "TP collectives overlapped with the neighbouring GEMM",
        "off: Megatron's --tp-comm-overlap and PyTorch async TP are opt-in",
    ),
    toggle(
        "tp_grad_overlap",
        "TP input-gradient overlap",
        "without sequence parallelism, a column-parallel layer's input-gradient all-reduce overlapped with its \
         weight-gradient GEMM (off: exposed in full)",
        "on: Megatron-LM's asynchronous all-reduce; off: BigScience's Megatron-DeepSpeed (BLOOM, 2022) \
         all-reduces synchronously after the layer's backward",
    ),
    toggle(
        "dp_overlap",
        "Data-parallel overlap",
        "gradient reduction overlapped with the backward, parameter gather with the forward",
        "on: Megatron-Core --overlap-grad-reduce (NeMo's recipes), PyTorch DDP/FSDP hooks, XLA; off is \
         Megatron-LM's and DeepSpeed ZeRO-1/2's default",
    ),
    toggle(
        "param_broadcast",
        "ZeRO-1/2 parameter broadcasts",
        "updated parameters shared by one broadcast per shard owner after the step, gradients all-reduced",
        "on: InternLM's hybrid ZeRO (Colossal-AI's low-level ZeRO); off: reduce-scatter + all-gather \
         (Megatron's distributed optimizer, DeepSpeed, FSDP)",
    ),
    SwitchInfo {
        key: "gemm_half_dim",
        label: "GEMM half-rate dimension",
        what: "matmul rate × Π x/(x + c) over the GEMM's dimensions: small and skinny GEMMs run slower (0: off)",
        kind: SwitchKind::Number { min: 0.0, max: 65536.0, open_min: false, open_max: false },
        source: FITTED,
    },
    SwitchInfo {
        key: "attention_half_seq",
        label: "Attention half-rate sequence",
        what: "flash attention rate × s_q/(s_q + c)·s_k/(s_k + c): short sequences run slower (0: off)",
        kind: SwitchKind::Number { min: 0.0, max: 1048576.0, open_min: false, open_max: false },
        source: FITTED,
    },
    SwitchInfo {
        key: "fp8_recipe",
        label: "FP8 recipe",
        what: "Transformer Engine (FP8 weight copies kept, FP8 inputs saved), the same with FP8 primary weights \
               (fp8_param_gather: no 16-bit copy of the linear weights), torchao float8 (cast on the fly), torchao float8 \
               with FSDP's float8 all-gather (gathered linear weights held in FP8) or DeepSeek-V3's online blockwise \
               quantization (weights cast per GEMM, none kept; FP8 inputs saved)",
        kind: SwitchKind::Choice(FP8_RECIPES),
        source: "te: Megatron-LM and NeMo train FP8 with Transformer Engine; online_blockwise: DeepSeek-V3 technical report §3.3.2",
    },
    SwitchInfo {
        key: "optimizer_states",
        label: "Weights and optimizer states",
        what: "FP32 master weights, gradients and Adam moments (mixed precision), pure BF16 without master, or FP32 master and gradients with BF16 Adam moments",
        kind: SwitchKind::Choice(OPTIMIZER_STATES),
        source: "fp32_master: Megatron-LM, DeepSpeed and FSDP mixed precision (Megatron distributed-optimizer docs); bf16_moments: DeepSeek-V3 technical report §3.3.3",
    },
    SwitchInfo {
        key: "optimizer",
        label: "Optimizer",
        what: "Adam, or Muon (Newton–Schulz on every weight matrix each step, one momentum per matrix parameter) on \
               every rank or layer-wise distributed over the data-parallel ranks",
        kind: SwitchKind::Choice(OPTIMIZERS),
        source: "adam: Megatron-LM's default (--optimizer adam); muon: Megatron-LM emerging_optimizers.py at d98e8a6",
    },
    toggle(
        "reshard_after_forward",
        "FSDP reshard after forward",
        "ZeRO-3/FSDP frees gathered weights after the forward and gathers them again for the backward",
        "on: FSDP2's default (reshard_after_forward=True)",
    ),
    toggle(
        "grad_accumulation_buffer",
        "FP32 gradient-accumulation buffer",
        "FP32 accumulation buffer beside the 16-bit gradients (DeepSpeed BF16_Optimizer): 6 B instead of 4",
        "off: Megatron-LM accumulates into a fused FP32 main_grad",
    ),
    toggle(
        "optimizer_in_backward",
        "Optimizer step in backward",
        "each gradient applied and freed as soon as it is complete: no model-wide gradient memory",
        "off: torchtune's optimizer_in_bwd and PyTorch's post-accumulate-grad hooks are opt-in",
    ),
    toggle(
        "grads_freed",
        "Gradients freed between steps",
        "every gradient freed after the optimizer step (zero_grad sets them to None): with one micro-batch per \
         step none is held at the loss, the backward's gradients take the place of its freed activations",
        "off: Megatron-LM and DeepSpeed keep one contiguous gradient buffer; PyTorch-native loops (torchtitan, \
         torchtune, litgpt) free them (PyTorch >= 2.0 default)",
    ),
    SwitchInfo {
        key: "loss_chunks",
        label: "Loss chunks",
        what: "chunks of the output head's logits and cross-entropy (fewer FP32 logits held at once)",
        kind: SwitchKind::Count { min: 1, max: 65536 },
        source: "1: the whole vocabulary at once (PyTorch's cross_entropy); torchtune's chunked loss uses 8",
    },
    toggle(
        "loss_head_chunked",
        "Head inside the loss chunks",
        "the output head runs per loss chunk, forward and backward before the next chunk: one chunk's logits \
         are held at a time, beside an FP32 accumulator of the final hidden states' gradient",
        "off: the head's logits are made whole (torchtune's chunked loss); torchtitan's ChunkedLossWrapper and \
         fused linear-cross-entropy kernels (Liger) chunk the head too",
    ),
    toggle(
        "loss_fp32_upcast",
        "Loss upcasts the logits to FP32",
        "eager cross-entropy on an FP32 copy of the logits (FP32 log-softmax saved for the backward)",
        "off: cross_entropy on the 16-bit logits (NeMo AutoModel's fp32_upcast: false): a 16-bit log-softmax, \
         no FP32 copy",
    ),
    toggle(
        "compiled_loss",
        "Compiled loss",
        "cross-entropy compiled with its FP32 upcast: only the 16-bit logits and a log-sum-exp per token are held",
        "off: eager cross_entropy; torchtitan (compile.components, since April 2025) and torchtune compile it with \
         the model",
    ),
    toggle(
        "op_saves_attention",
        "Op-level checkpointing saves attention",
        "under the operator-level policy the attention kernel's output is saved; off: recomputed in the backward, \
         nothing of it kept",
        "on: torchtitan saves every SDPA backend (b39377f, 2025-12-01); before it the cuDNN backend, first on B200 \
         since 3b85aa3 (2025-05-14), was recomputed",
    ),
    toggle(
        "fp32_params_autocast",
        "Autocast over FP32 weights",
        "16-bit autocast without a mixed-precision policy: FP32 weights (4 + 4 + 8 B of states), FSDP gathers FP32, \
         the residual stream and the kept block inputs are FP32",
        "off: a 16-bit weight copy (Megatron-LM, FSDP's MixedPrecision); ATorch's amp_native wraps the forward in \
         torch.autocast over FP32 parameters",
    ),
    toggle(
        "outputs_hold_kv",
        "Outputs hold keys and values",
        "the model's output keeps every block's keys and values until the backward ends (Hugging Face use_cache) \
         beside the checkpointed activations",
        "off: Hugging Face turns use_cache off under its own gradient_checkpointing; a wrapper's checkpointing \
         (ATorch's) leaves it at the config's default (on for Llama 2, transformers 4.31)",
    ),
    toggle(
        "log_num_zeros_in_grad",
        "Zeros in gradients logged",
        "every step each rank counts the zeros of its gradients (three PyTorch calls per parameter tensor, two \
         synced all-reduces): host time added to the step",
        "off: Megatron-LM's default (--log-num-zeros-in-grad); its functional tests turn it on",
    ),
    toggle(
        "log_params_norm",
        "Parameter norm logged",
        "every step the L2 norm over all parameters (a multi-tensor kernel, six all-reduces, a sync): host time added \
         to the step",
        "off: Megatron-LM's default (--log-params-norm); its functional tests turn it on",
    ),
    toggle(
        "hf_trainer_step",
        "Hugging Face Trainer's step",
        "the Trainer's own step under native AMP and DDP: transformers' AdamW one tensor at a time (seven kernels \
         each), the loss scaler's unscale and the clip over FP32 gradients, zero_grad, DDP's bucket copies, and \
         autocast's weight casts every micro-batch, in place of a fused optimizer's traffic",
        "off: a fused stack's step; on for the Trainer of transformers before 4.32 (adamw_hf, its default until \
         huggingface/transformers#25109) without DeepSpeed or FSDP",
    ),
    toggle(
        "grad_accumulation_fusion",
        "Gradient-accumulation fusion",
        "each weight-gradient GEMM accumulates into the FP32 main gradient itself; off, it writes a 16-bit \
         gradient that Megatron DDP's backward hook adds (one more launch per weight matrix and micro-batch, 4 B \
         more HBM traffic per weight)",
        "on: Megatron-LM's default (--no-gradient-accumulation-fusion turns it off; its functional tests do)",
    ),
    toggle(
        "rope_fusion",
        "RoPE fusion",
        "Megatron-Core applies rotary embeddings to the queries and keys in Transformer Engine's fused kernel; \
         off, apply_rotary_pos_emb's chain of element-wise kernels (cos, sin, casts, products, rotate-half, \
         cats) forward and backward: their HBM bytes and each launch's host time",
        "on: Megatron-LM's default for RoPE models (--no-rope-fusion turns it off)",
    ),
    SwitchInfo {
        key: "transformer_impl",
        label: "Megatron-Core layer spec",
        what: "which modules a Megatron-Core layer is built from: Transformer Engine's (TE linear modules, whose \
               per-module Python is host time of each layer's forward) or Megatron-Core's own (local: plain \
               parallel linear layers, separate norms, unfused attention modules; MoE experts one by one)",
        kind: SwitchKind::Choice(TRANSFORMER_IMPLS),
        source: "transformer_engine: Megatron-LM's default (--transformer-impl, transformer_config.py at d98e8a6)",
    },
    SwitchInfo {
        key: "fusion",
        label: "Kernel fusion",
        what: "element-wise work in fused kernels, or eager PyTorch (one kernel per primitive: more HBM traffic in \
               norms, RoPE, SwiGLU; each norm's FP32 upcast and the silu output kept for the backward)",
        kind: SwitchKind::Choice(FUSION),
        source: "fused: Megatron-LM, NeMo (Transformer Engine), MaxText (XLA) and torch.compile fuse them",
    },
    SwitchInfo {
        key: "attention_kernel",
        label: "Attention kernel",
        what: "the part's own-generation fused attention (cuDNN / FlashAttention-3 on Hopper), a \
               FlashAttention-2-class kernel (PyTorch SDPA flash, flash-attn 2), slower on Hopper and later, or \
               none (unfused: the score matrix computed in full and kept, Megatron's local/unfused backend, \
               Hugging Face eager)",
        kind: SwitchKind::Choice(ATTENTION_KERNELS),
        source: "native: Megatron-LM and NeMo call cuDNN fused attention through Transformer Engine, MaxText \
                 XLA/Pallas; torchtitan and PyTorch FSDP runs (SDPA) are fa2; unfused where a run says so",
    },
];

/// Other names accepted for a key.
const ALIASES: [(&str, &str); 6] = [
    ("eta", "matmul_efficiency"),
    ("eta_att", "attention_efficiency"),
    ("gqa", "grouped_query_attention"),
    ("swiglu", "gated_mlp"),
    ("sparsity", "weight_sparsity"),
    ("zero", "sharding"),
];

/// A fixed constant of extended mode that is not a switch, with its unit and origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constant {
    /// Name.
    pub name: &'static str,
    /// Value.
    pub value: f64,
    /// Unit (`""`: dimensionless).
    pub unit: &'static str,
    /// Where it comes from.
    pub source: &'static str,
}

/// The constants behind the defaults (for the page's "where the numbers come from").
pub const CONSTANTS: [Constant; 8] = [
    Constant { name: "η (fitted matmul efficiency)", value: FITTED_MATMUL_EFFICIENCY, unit: "", source: FITTED },
    Constant {
        name: "η_att (fitted attention efficiency)",
        value: FITTED_ATTENTION_EFFICIENCY,
        unit: "",
        source: FITTED,
    },
    Constant {
        name: "flash-attention backward / forward FLOPs",
        value: FLASH_BACKWARD_FACTOR,
        unit: "",
        source: "five matmuls (logits recomputed, gradients of P, V, Q, K) against two",
    },
    Constant {
        name: "optimizer-step HBM traffic per parameter",
        value: OPTIMIZER_BYTES_PER_PARAMETER,
        unit: "B",
        source: "mixed-precision Adam: read FP32 gradient, master and two moments, write them and the 16-bit weight",
    },
    Constant {
        name: "allocator fragmentation (reserved / allocated − 1)",
        value: FRAGMENTATION,
        unit: "",
        source: "fitted on the shipped measured memory runs (leave-one-source-out in the Validation view)",
    },
    Constant {
        name: "CUDA context per device",
        value: CUDA_CONTEXT_GB,
        unit: "GB",
        source: "kernel images and runtime state outside PyTorch's allocator (PyTorch CUDA semantics notes)",
    },
    Constant {
        name: "NCCL buffers per communicator",
        value: NCCL_BUFFERS_GB,
        unit: "GB",
        source: "NCCL_BUFFSIZE 4 MiB per channel and peer, send and receive (NCCL environment documentation)",
    },
    Constant {
        name: "memory per logit at the loss",
        value: LOSS_BYTES_PER_LOGIT,
        unit: "B",
        source: "16-bit logits, their FP32 copy and the FP32 log-softmax saved for the backward pass",
    },
];

/// The switch of `key` (or of an alias), if any.
pub fn switch(key: &str) -> Option<&'static SwitchInfo> {
    let k = key.trim().to_ascii_lowercase();
    let k = ALIASES.iter().find(|(a, _)| *a == k).map_or(k.as_str(), |(_, to)| to).to_string();
    SWITCHES.iter().find(|s| s.key == k)
}
