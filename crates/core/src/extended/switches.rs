//! The switches of extended mode as data: one [`SwitchInfo`] per field of [`ExtendedOptions`] and
//! of its groups `model` ([`super::options::ModelFeatures`]) and `hardware`
//! ([`super::options::HardwareChoices`]), keyed by the bare field name (key, label, what it
//! models, kind of value, where the default comes from), their values as text (`get`/`set` by
//! key), and the text form of a whole setting, `key=value,key=value` with only the switches that
//! differ from [`ExtendedOptions::realistic`] — what the CLI's `--ext` flag and the page's `ext`
//! URL key hold. Every view (CLI help, the studies and explorer panels, the validation page) lists
//! the switches from [`SWITCHES`], so none can be forgotten.
//!
//! Values: toggles `on`/`off` (also `true`/`false`, `1`/`0`, `yes`/`no`), choices by name
//! (`recompute=full`, `sharding=fsdp`), numbers as decimals (`matmul_efficiency=0.7`,
//! `weight_sparsity=0.9`), counts as integers, `shard_group=all` for "no hybrid sharding".

use super::block::FLASH_BACKWARD_FACTOR;
use super::efficiency::{FITTED_ATTENTION_EFFICIENCY, FITTED_MATMUL_EFFICIENCY};
use super::iteration::OPTIMIZER_BYTES_PER_PARAMETER;
use super::memory::{CUDA_CONTEXT_GB, FRAGMENTATION, LOSS_BYTES_PER_LOGIT, NCCL_BUFFERS_GB};
use super::options::{
    AttentionKernel, ExtendedOptions, Fp8Recipe, Fusion, GradReduce, OptimizerStates, Recompute, Sharding,
};
use super::pipeline::StageSplitRule;
use crate::Error;
use crate::catalog::Precision;
use crate::hint;

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
    /// Key in the text form and the field name in [`ExtendedOptions`] (or in its `model` /
    /// `hardware` group, without the group: `precision` is `hardware.precision`).
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
const STACKS: &[&str] = &["megatron", "deepspeed", "fsdp", "jax"];
const GRAD_REDUCE: &[&str] = &["auto", "fp32", "param"];
const FP8_RECIPES: &[&str] = &["te", "te_fp8_weights", "torchao", "torchao_fp8_gather", "online_blockwise"];
const OPTIMIZER_STATES: &[&str] = &["fp32_master", "pure_bf16", "bf16_moments"];
const OPTIMIZERS: &[&str] = &["adam", "muon", "dist_muon"];
const FUSION: &[&str] = &["fused", "eager"];
const ATTENTION_KERNELS: &[&str] = &["native", "fa2", "unfused"];
const CP_COMMS: &[&str] = &["ring", "ulysses", "hybrid", "search"];
const STAGE_SPLITS: &[&str] = &["blocks", "embedding_as_block", "head_as_block", "ends_as_blocks"];

const FITTED: &str = "fitted once on the 108 measured training runs shipped with fmperf (Validation view: fit and leave-one-source-out error)";

const fn toggle(key: &'static str, label: &'static str, what: &'static str, source: &'static str) -> SwitchInfo {
    SwitchInfo { key, label, what, kind: SwitchKind::Toggle, source }
}

const EFFICIENCY: SwitchKind = SwitchKind::Number { min: 0.0, max: 1.0, open_min: true, open_max: false };

/// Every switch, in display order (the fields of [`ExtendedOptions`]).
pub const SWITCHES: [SwitchInfo; 42] = [
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
        "ZeRO-3/FSDP gathers across domains at one NIC per device (measured)",
        "the measured ZeRO-3 (DeepSpeed) and FSDP (Composer) runs across nodes",
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
               NIC of a node)",
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
        "compiled_loss",
        "Compiled loss",
        "cross-entropy compiled with its FP32 upcast: only the 16-bit logits and a log-sum-exp per token are held",
        "off: eager cross_entropy; torchtitan (compile.components, since April 2025) and torchtune compile it with \
         the model",
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

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

fn parse_toggle(key: &str, v: &str) -> Result<bool, Error> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(Error::invalid(key, v, "must be on or off")),
    }
}

fn parse_number(info: &SwitchInfo, v: &str) -> Result<f64, Error> {
    let SwitchKind::Number { min, max, open_min, open_max } = info.kind else {
        return Err(Error::invalid(info.key, v, "is not a number switch"));
    };
    let x = v.trim().parse::<f64>().ok().filter(|x| x.is_finite());
    let ok =
        x.is_some_and(|x| (if open_min { x > min } else { x >= min }) && (if open_max { x < max } else { x <= max }));
    match x {
        Some(x) if ok => Ok(x),
        _ => Err(Error::invalid(
            info.key,
            v,
            format!(
                "must be a number {}{min}, {max}{}",
                if open_min { "in (" } else { "in [" },
                if open_max { ")" } else { "]" }
            ),
        )),
    }
}

/// An integer switch's value within its [`SwitchKind::Count`] range; errors name `field`.
fn parse_count(info: &SwitchInfo, field: &str, v: &str) -> Result<u64, Error> {
    let SwitchKind::Count { min, max } = info.kind else {
        return Err(Error::invalid(field, v, "is not a count switch"));
    };
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|x| (min..=max).contains(x))
        .ok_or_else(|| Error::invalid(field, v, format!("must be an integer from {min} to {max}")))
}

impl ExtendedOptions {
    /// Every switch as `(name, value, what it models)`, for tables and the page (the order and
    /// words of [`SWITCHES`]).
    pub fn describe(&self) -> Vec<(&'static str, String, &'static str)> {
        SWITCHES.iter().map(|s| (s.key, self.value_of(s.key).unwrap_or_default(), s.what)).collect()
    }

    /// The value of the switch `key` as text (`None`: no such switch).
    pub fn value_of(&self, key: &str) -> Option<String> {
        let info = switch(key)?;
        Some(match info.key {
            "precision" => self.hardware.precision.as_str().to_string(),
            "matmul_efficiency" => self.hardware.matmul_efficiency.to_string(),
            "attention_efficiency" => self.hardware.attention_efficiency.to_string(),
            "measured_ceiling" => on_off(self.hardware.measured_ceiling),
            "zero3_per_nic" => on_off(self.hardware.zero3_per_nic),
            "memory_bound_ops" => on_off(self.hardware.memory_bound_ops),
            "recompute" => self.recompute.to_string(),
            "stack" => self.stack.as_str().to_string(),
            "sharding" => self.sharding.as_str().to_string(),
            "shard_group" => self.shard_group.map_or("all".to_string(), |g| g.to_string()),
            "interleave" => self.interleave.to_string(),
            "uneven_stages" => on_off(self.uneven_stages),
            "stage_split" => self.stage_split.as_str().to_string(),
            "causal" => on_off(self.model.causal),
            "cp_ring_overlap" => on_off(self.cp_ring_overlap),
            "cp_comm" => self.cp_comm.as_str().to_string(),
            "cp_ulysses" => self.cp_ulysses.to_string(),
            "sequence_parallel" => on_off(self.sequence_parallel),
            "grouped_query_attention" => on_off(self.model.grouped_query_attention),
            "gated_mlp" => on_off(self.model.gated_mlp),
            "embeddings_and_head" => on_off(self.model.embeddings_and_head),
            "memory_overheads" => on_off(self.hardware.memory_overheads),
            "weight_sparsity" => self.model.weight_sparsity.to_string(),
            "grad_reduce" => self.grad_reduce.as_str().to_string(),
            "tp_comm_overlap" => on_off(self.tp_comm_overlap),
            "dp_overlap" => on_off(self.dp_overlap),
            "param_broadcast" => on_off(self.param_broadcast),
            "gemm_half_dim" => self.hardware.gemm_half_dim.to_string(),
            "attention_half_seq" => self.hardware.attention_half_seq.to_string(),
            "fp8_recipe" => self.fp8_recipe.as_str().to_string(),
            "optimizer_states" => self.optimizer_states.as_str().to_string(),
            "optimizer" => self.optimizer.as_str().to_string(),
            "reshard_after_forward" => on_off(self.reshard_after_forward),
            "grad_accumulation_buffer" => on_off(self.grad_accumulation_buffer),
            "optimizer_in_backward" => on_off(self.optimizer_in_backward),
            "grads_freed" => on_off(self.grads_freed),
            "loss_chunks" => self.loss_chunks.to_string(),
            "compiled_loss" => on_off(self.compiled_loss),
            "log_num_zeros_in_grad" => on_off(self.log_num_zeros_in_grad),
            "log_params_norm" => on_off(self.log_params_norm),
            "fusion" => self.fusion.as_str().to_string(),
            "attention_kernel" => self.attention_kernel.as_str().to_string(),
            _ => return None,
        })
    }

    /// Sets the switch `key` from its text `value`. Errors name the switch (`ext.<key>`) and the
    /// values it takes; an unknown key suggests the nearest.
    pub fn set_switch(&mut self, key: &str, value: &str) -> Result<(), Error> {
        let Some(info) = switch(key) else {
            let keys = SWITCHES.iter().map(|s| s.key);
            return Err(Error::invalid("ext", key, "is not a switch of extended mode").with_hint(match hint::nearest(
                key.trim(),
                keys,
            ) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("switches: {}", SWITCHES.map(|s| s.key).join(", ")),
            }));
        };
        let field = format!("ext.{}", info.key);
        let named = |e: Error| match e {
            Error::InvalidField { value, rule, hint, .. } => {
                Error::InvalidField { field: field.clone(), value, rule, hint }
            }
            Error::UnknownName { name, known, .. } => {
                Error::invalid(field.clone(), name, format!("must be one of {}", known.join(", ")))
            }
            other => other,
        };
        let toggle = || parse_toggle(info.key, value).map_err(named);
        match info.key {
            "precision" => self.hardware.precision = value.parse::<Precision>().map_err(named)?,
            "matmul_efficiency" => self.hardware.matmul_efficiency = parse_number(info, value).map_err(named)?,
            "attention_efficiency" => self.hardware.attention_efficiency = parse_number(info, value).map_err(named)?,
            "measured_ceiling" => self.hardware.measured_ceiling = toggle()?,
            "zero3_per_nic" => self.hardware.zero3_per_nic = toggle()?,
            "memory_bound_ops" => self.hardware.memory_bound_ops = toggle()?,
            "recompute" => self.recompute = value.parse::<Recompute>().map_err(named)?,
            "stack" => self.stack = value.parse::<super::stack::Stack>().map_err(named)?,
            "sharding" => self.sharding = value.parse::<Sharding>().map_err(named)?,
            "shard_group" => {
                self.shard_group = if value.trim().eq_ignore_ascii_case("all") {
                    None
                } else {
                    Some(value.trim().parse::<u64>().ok().filter(|g| *g >= 1).ok_or_else(|| {
                        Error::invalid(field.clone(), value, "must be all or a positive integer [devices]")
                    })?)
                }
            }
            "interleave" => self.interleave = parse_count(info, &field, value)?,
            "uneven_stages" => self.uneven_stages = toggle()?,
            "stage_split" => self.stage_split = value.parse::<StageSplitRule>().map_err(named)?,
            "causal" => self.model.causal = toggle()?,
            "cp_ring_overlap" => self.cp_ring_overlap = toggle()?,
            "cp_comm" => self.cp_comm = value.parse::<super::context_parallel::CpComm>().map_err(named)?,
            "cp_ulysses" => self.cp_ulysses = parse_count(info, &field, value)?,
            "sequence_parallel" => self.sequence_parallel = toggle()?,
            "grouped_query_attention" => self.model.grouped_query_attention = toggle()?,
            "gated_mlp" => self.model.gated_mlp = toggle()?,
            "embeddings_and_head" => self.model.embeddings_and_head = toggle()?,
            "memory_overheads" => self.hardware.memory_overheads = toggle()?,
            "weight_sparsity" => self.model.weight_sparsity = parse_number(info, value).map_err(named)?,
            "grad_reduce" => self.grad_reduce = value.parse::<GradReduce>().map_err(named)?,
            "tp_comm_overlap" => self.tp_comm_overlap = toggle()?,
            "dp_overlap" => self.dp_overlap = toggle()?,
            "param_broadcast" => self.param_broadcast = toggle()?,
            "gemm_half_dim" => self.hardware.gemm_half_dim = parse_number(info, value).map_err(named)?,
            "attention_half_seq" => self.hardware.attention_half_seq = parse_number(info, value).map_err(named)?,
            "fp8_recipe" => self.fp8_recipe = value.parse::<Fp8Recipe>().map_err(named)?,
            "optimizer_states" => self.optimizer_states = value.parse::<OptimizerStates>().map_err(named)?,
            "optimizer" => self.optimizer = value.parse::<super::muon::Optimizer>().map_err(named)?,
            "reshard_after_forward" => self.reshard_after_forward = toggle()?,
            "grad_accumulation_buffer" => self.grad_accumulation_buffer = toggle()?,
            "optimizer_in_backward" => self.optimizer_in_backward = toggle()?,
            "grads_freed" => self.grads_freed = toggle()?,
            "loss_chunks" => self.loss_chunks = parse_count(info, &field, value)?,
            "compiled_loss" => self.compiled_loss = toggle()?,
            "log_num_zeros_in_grad" => self.log_num_zeros_in_grad = toggle()?,
            "log_params_norm" => self.log_params_norm = toggle()?,
            "fusion" => self.fusion = value.parse::<Fusion>().map_err(named)?,
            "attention_kernel" => self.attention_kernel = value.parse::<AttentionKernel>().map_err(named)?,
            _ => {}
        }
        Ok(())
    }

    /// The switches that differ from [`Self::realistic`], as `key=value,key=value` in
    /// [`SWITCHES`] order (empty for the defaults).
    pub fn to_text(&self) -> String {
        let base = ExtendedOptions::realistic();
        SWITCHES
            .iter()
            .filter_map(|s| {
                let v = self.value_of(s.key)?;
                (Some(&v) != base.value_of(s.key).as_ref()).then(|| format!("{}={v}", s.key))
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// [`Self::realistic`] with the switches of `text` (`key=value,…`; empty: the defaults).
    /// A switch given twice (also by an alias) with different values is an error naming both
    /// (`ext.recompute = none: given twice (full, then none); give it once`); the same value twice
    /// is accepted. See [`edit_text`] for changing one switch of such a text as typed.
    pub fn from_text(text: &str) -> Result<ExtendedOptions, Error> {
        let mut o = ExtendedOptions::realistic();
        // Each switch set so far: its key, the item as typed, its value as read.
        let mut seen: Vec<(&'static str, &str, String)> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| {
                Error::invalid("ext", item, "must be written key=value")
                    .with_hint("e.g. recompute=full,sharding=zero3,weight_sparsity=0.9")
            })?;
            o.set_switch(k, v)?;
            let Some(info) = switch(k) else { continue };
            let now = o.value_of(info.key).unwrap_or_default();
            match seen.iter().find(|(key, _, _)| *key == info.key) {
                Some((_, first, was)) if *was != now => return Err(Error::given_twice("ext", info.key, first, item)),
                Some(_) => {}
                None => seen.push((info.key, item, now)),
            }
        }
        o.validate()?;
        Ok(o)
    }
}

/// The value of switch `key` (or an alias) as written in the text form `text`, if it is there (as
/// typed, valid or not).
pub fn text_value(text: &str, key: &str) -> Option<String> {
    let want = switch(key)?.key;
    text.split(',')
        .filter_map(|item| item.split_once('='))
        .filter(|(k, _)| switch(k).is_some_and(|s| s.key == want))
        .map(|(_, v)| v.trim().to_string())
        .next_back()
}

/// The text form `text` (`key=value,…`) with switch `key` set to `value` as typed (kept even when
/// invalid, so a form can show it with its error), for forms that edit one switch at a time: keys
/// are written by their canonical names in [`SWITCHES`] order, a value equal to the default (as
/// [`ExtendedOptions::value_of`] writes it) is dropped, and items that are not switches are kept
/// at the end (so their error stays visible).
pub fn edit_text(text: &str, key: &str, value: &str) -> String {
    let defaults = ExtendedOptions::realistic();
    let mut known: Vec<(usize, String, String)> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    let mut put = |k: &str, v: &str| match switch(k) {
        Some(info) => {
            let at = SWITCHES.iter().position(|s| s.key == info.key).unwrap_or(0);
            known.retain(|(i, _, _)| *i != at);
            known.push((at, info.key.to_string(), v.trim().to_string()));
        }
        None => other.push(format!("{}={}", k.trim(), v.trim())),
    };
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').unwrap_or((item, ""));
        put(k, v);
    }
    put(key, value);
    known.sort_by_key(|(i, _, _)| *i);
    let mut out: Vec<String> = known
        .into_iter()
        .filter(|(_, k, v)| defaults.value_of(k).as_deref() != Some(v.as_str()))
        .map(|(_, k, v)| format!("{k}={v}"))
        .collect();
    out.extend(other);
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_reads_and_writes_its_field() {
        // Set to its default, a switch leaves the options as they are; set to another value, it
        // reads back that value and is the only switch that differs: `set_switch` and `value_of`
        // reach the same field, in whichever group (`model`, `hardware`, execution) it lives.
        let d = ExtendedOptions::realistic();
        for s in SWITCHES {
            let v = d.value_of(s.key).unwrap();
            let mut o = d;
            o.set_switch(s.key, &v).unwrap();
            assert_eq!(o, d, "{}", s.key);
            let other = match s.kind {
                SwitchKind::Toggle => (if v == "on" { "off" } else { "on" }).to_string(),
                SwitchKind::Choice(names) => names.iter().find(|n| **n != v).unwrap().to_string(),
                SwitchKind::Number { min, max, .. } => ((min + max) / 2.0).to_string(),
                SwitchKind::Count { min, .. } => (min + 1).to_string(),
                SwitchKind::CountOrAll => "8".to_string(),
            };
            o.set_switch(s.key, &other).unwrap();
            assert_eq!(o.value_of(s.key).as_deref(), Some(other.as_str()), "{}", s.key);
            assert_eq!(o.to_text(), format!("{}={other}", s.key));
            assert_eq!(ExtendedOptions::from_text(&o.to_text()).unwrap(), o, "{}", s.key);
        }
        assert_eq!(d.to_text(), "");
        assert_eq!(ExtendedOptions::from_text("").unwrap(), d);
    }

    #[test]
    fn text_form_round_trips_the_changed_switches() {
        let o = ExtendedOptions::from_text("sparsity=0.9, recompute=FULL,sharding=fsdp,gqa=off,shard_group=8").unwrap();
        assert_eq!(o.model.weight_sparsity, 0.9);
        assert_eq!(o.recompute, Recompute::Full);
        assert_eq!(o.sharding, Sharding::Zero3);
        assert!(!o.model.grouped_query_attention);
        assert_eq!(o.shard_group, Some(8));
        let text = o.to_text();
        assert_eq!(text, "recompute=full,sharding=zero3,shard_group=8,grouped_query_attention=off,weight_sparsity=0.9");
        assert_eq!(ExtendedOptions::from_text(&text).unwrap(), o);
    }

    #[test]
    fn one_switch_is_edited_as_typed() {
        assert_eq!(edit_text("", "recompute", "full"), "recompute=full");
        assert_eq!(edit_text("weight_sparsity=0.9", "gqa", "off"), "grouped_query_attention=off,weight_sparsity=0.9");
        // Back to the default: dropped; an invalid value is kept for its error.
        assert_eq!(edit_text("recompute=full,causal=off", "recompute", "selective"), "causal=off");
        assert_eq!(edit_text("", "interleave", "0"), "interleave=0");
        assert_eq!(edit_text("zz=1", "causal", "off"), "causal=off,zz=1");
        assert_eq!(text_value("gqa=off,recompute=full", "grouped_query_attention").as_deref(), Some("off"));
        assert_eq!(text_value("recompute=full", "causal"), None);
        let o = ExtendedOptions::from_text(&edit_text("", "matmul_efficiency", "0.6")).unwrap();
        assert_eq!(o.hardware.matmul_efficiency, 0.6);
    }

    #[test]
    fn bad_text_names_the_switch() {
        let e = ExtendedOptions::from_text("recompte=full").unwrap_err();
        assert!(e.to_string().contains("recompute"), "{e}");
        assert_eq!(ExtendedOptions::from_text("weight_sparsity=1").unwrap_err().field(), Some("ext.weight_sparsity"));
        assert_eq!(
            ExtendedOptions::from_text("matmul_efficiency=0").unwrap_err().field(),
            Some("ext.matmul_efficiency")
        );
        assert_eq!(ExtendedOptions::from_text("causal=maybe").unwrap_err().field(), Some("ext.causal"));
        assert_eq!(ExtendedOptions::from_text("interleave=0").unwrap_err().field(), Some("ext.interleave"));
        assert_eq!(ExtendedOptions::from_text("precision=fp4").unwrap_err().field(), Some("ext.precision"));
        assert!(ExtendedOptions::from_text("recompute").is_err());
    }

    #[test]
    fn a_switch_given_twice_differently_is_an_error_naming_both() {
        let e = ExtendedOptions::from_text("recompute=full,recompute=none").unwrap_err();
        assert_eq!(e.field(), Some("ext.recompute"));
        assert_eq!(e.to_string(), "ext.recompute = none: given twice (full, then none); give it once");
        // An alias is the same switch.
        let e = ExtendedOptions::from_text("zero=zero1,causal=off,sharding=zero3").unwrap_err();
        assert_eq!(e.to_string(), "ext.sharding = zero3: given twice (zero=zero1, then sharding=zero3); give it once");
        // The same value twice (as read: case, alias, fsdp = zero3) is accepted.
        let o = ExtendedOptions::from_text("recompute=full,recompute=FULL,sharding=fsdp,zero=zero3").unwrap();
        assert_eq!((o.recompute, o.sharding), (Recompute::Full, Sharding::Zero3));
        assert!(ExtendedOptions::from_text("weight_sparsity=0.5,sparsity=0.50").is_ok());
    }
}
