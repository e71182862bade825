//! The named choices of extended mode's switches, each an enum with its CLI / URL names
//! (`named_enum!` gives `Display` and `FromStr` from `as_str`, `ALL` and the aliases): the bottom
//! of extended mode's vocabulary. [`super::options::ExtendedOptions`] holds them, and the stages
//! that act on a choice read it (the modules named in each enum's documentation re-export it:
//! [`super::context_parallel::CpComm`], [`super::pipeline::StageSplitRule`]).

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// Activation recomputation (checkpointing) of the transformer blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Recompute {
    /// Every activation the backward pass needs is kept.
    None,
    /// Only the attention core is recomputed (Korthikanti et al. 2022). With flash attention the core
    /// is recomputed inside the attention backward anyway, so this costs no extra time; it keeps the
    /// memory of the attention scores off the device.
    Selective,
    /// Only each block's input is kept; the whole block forward (with its tensor-parallel
    /// collectives) runs again before its backward: one more forward pass per micro-batch.
    Full,
    /// Operator-level selective checkpointing as torchtitan configures PyTorch's
    /// `create_selective_checkpoint_contexts` (`activation_checkpoint.mode = "selective"`,
    /// `selective_ac_option = "op"`, its default; `torchtitan/distributed/activation_checkpoint.py`):
    /// the outputs of the flash-attention kernel, of the tensor-parallel reduce-scatters and of
    /// every *odd-numbered* matmul of a block (the 1st, 3rd, 5th, 7th: Q, V, MLP gate, MLP down
    /// in a Llama block, "all compute ops, except every second mm") are saved with the block
    /// input; everything else (K, output and MLP-up projections, norms, activations, residual
    /// adds, the sequence-parallel all-gathers) runs again before the block's backward. Not one
    /// of the levels the search tries ([`Recompute::ALL`]); read from words and launch files.
    Op,
    /// A share of the forward recomputed: Megatron's `--recompute-method block` with
    /// `--recompute-num-layers k` of a stage's `n` blocks (share k/n), a layer-wise policy ("every
    /// other layer"), a JAX remat policy that saves some matmul outputs (MaxText `save_qkv_proj`,
    /// Praxis `SAVE_QKV_OUT_PROJ`: the share of the forward's matmul work it redoes). Priced as
    /// that share of the blocks recomputed in full and the rest keeping every activation: the
    /// recomputation time is the share of a full recomputation's (collectives included), the
    /// activations kept are `(1 − share)` of everything plus `share` of the block inputs, and the
    /// block being recomputed holds its whole activations while its backward runs. Exact for the
    /// layer-wise policies; for a matmul-share policy the per-module split is averaged over the
    /// block. Written as the share, a decimal strictly between 0 and 1 (`recompute=0.25`); not
    /// one of the levels the search tries.
    Partial(RecomputeShare),
}

/// The share of the forward a partial recomputation ([`Recompute::Partial`]) runs again, in
/// thousandths (1 to 999: none and all are the levels `none` and `full`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecomputeShare(u16);

impl RecomputeShare {
    /// The share nearest `fraction` (to 0.001), or `None` unless it lies strictly between 0 and 1
    /// once rounded (a share of 0 is no recomputation, of 1 full recomputation).
    pub fn of(fraction: f64) -> Option<RecomputeShare> {
        let milli = (fraction * 1000.0).round();
        (milli >= 1.0 && milli <= 999.0).then_some(RecomputeShare(milli as u16))
    }

    /// The share of the forward recomputed (0.001 to 0.999).
    pub fn fraction(self) -> f64 {
        f64::from(self.0) / 1000.0
    }
}

impl Recompute {
    /// The level a fraction `f` of the forward recomputed is: none at 0, full at 1, else
    /// [`Recompute::Partial`] (to 0.001; a share that rounds to 0 or 1 is that level).
    pub fn of_share(f: f64) -> Recompute {
        match RecomputeShare::of(f) {
            Some(s) => Recompute::Partial(s),
            None if f >= 0.5 => Recompute::Full,
            None => Recompute::None,
        }
    }

    /// The share of each block's forward that runs again before its backward, averaged over the
    /// blocks, for the levels that recompute whole blocks or none (none 0, full 1, partial its
    /// share); `None` for selective and operator-level policies, which recompute by operation.
    pub fn block_share(self) -> Option<f64> {
        match self {
            Recompute::None => Some(0.0),
            Recompute::Full => Some(1.0),
            Recompute::Partial(s) => Some(s.fraction()),
            Recompute::Selective | Recompute::Op => None,
        }
    }
}

/// How model states are sharded over the data-parallel (and context-parallel) replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sharding {
    /// ZeRO-0 / plain data parallelism: everything replicated; gradients all-reduced once per
    /// iteration, overlapped with the backward pass of the last micro-batch.
    Ddp,
    /// ZeRO-1 / distributed optimizer: optimizer states sharded; gradients reduce-scattered in the
    /// backward pass of the last micro-batch, updated parameters all-gathered during the next
    /// forward pass (the pattern the reference prices, spec §5.1).
    Zero1,
    /// ZeRO-2: gradients sharded too; the same collectives as ZeRO-1 but the gradients'
    /// reduce-scatter runs behind every micro-batch's backward, not only the last one's (a rank
    /// keeps only its gradient shard, so it cannot accumulate the full gradient:
    /// [`super::data_parallel`]).
    Zero2,
    /// ZeRO-3 / FSDP full shard: parameters sharded too; every micro-batch all-gathers each block's
    /// parameters before its forward and again before its backward, and reduce-scatters its
    /// gradients after the backward; each collective overlaps with the neighbouring block's compute.
    Zero3,
}

impl Sharding {
    /// All stages, in order.
    pub const ALL: [Sharding; 4] = [Sharding::Ddp, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3];

    /// The sharding of ZeRO stage `stage` (0: none … 3: parameters too); `None` past 3.
    pub fn of_zero_stage(stage: u64) -> Option<Sharding> {
        usize::try_from(stage).ok().and_then(|i| Sharding::ALL.get(i)).copied()
    }

    /// The CLI / URL name: `zero0`, `zero1`, `zero2`, `zero3` (FSDP is `zero3`).
    pub fn as_str(self) -> &'static str {
        match self {
            Sharding::Ddp => "zero0",
            Sharding::Zero1 => "zero1",
            Sharding::Zero2 => "zero2",
            Sharding::Zero3 => "zero3",
        }
    }

    /// Whether optimizer states are sharded.
    pub fn shards_optimizer(self) -> bool {
        self != Sharding::Ddp
    }

    /// Whether gradients are sharded.
    pub fn shards_gradients(self) -> bool {
        matches!(self, Sharding::Zero2 | Sharding::Zero3)
    }

    /// Whether parameters are sharded (gathered per block when needed).
    pub fn shards_parameters(self) -> bool {
        self == Sharding::Zero3
    }
}

impl Recompute {
    /// The levels the search tries, in order (the operator-level policy [`Recompute::Op`] is
    /// evaluated when asked for, not searched).
    pub const ALL: [Recompute; 3] = [Recompute::None, Recompute::Selective, Recompute::Full];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Recompute::None => "none",
            Recompute::Selective => "selective",
            Recompute::Full => "full",
            Recompute::Op => "op",
            Recompute::Partial(_) => "partial",
        }
    }
}

macro_rules! named_enum {
    ($t:ty, $what:literal, $extra:expr) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $t {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self, Error> {
                let t = s.trim().to_ascii_lowercase();
                let extra: &[(&str, $t)] = $extra;
                if let Some((_, v)) = extra.iter().find(|(n, _)| *n == t) {
                    return Ok(*v);
                }
                <$t>::ALL.into_iter().find(|v| v.as_str() == t).ok_or_else(|| {
                    let names: Vec<&str> = <$t>::ALL.iter().map(|v| v.as_str()).collect();
                    Error::invalid($what, s, format!("must be one of {}", names.join(", ")))
                })
            }
        }
    };
}
pub(crate) use named_enum;

/// Width of the data-parallel gradient reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GradReduce {
    /// FP32 when training in BF16 (Megatron-LM turns `accumulate_allreduce_grads_in_fp32` on with
    /// `--bf16`; torchtitan's FSDP2 policy reduces in float32), FP32 in FP32/TF32 training, FP16
    /// with FP16 (loss-scaled) training (Megatron's and DeepSpeed's FP16 default).
    Auto,
    /// Always FP32 (4 B per gradient).
    Fp32,
    /// In the 16-bit parameter type (2 B per gradient).
    Param,
}

impl GradReduce {
    /// All choices, in order.
    pub const ALL: [GradReduce; 3] = [GradReduce::Auto, GradReduce::Fp32, GradReduce::Param];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            GradReduce::Auto => "auto",
            GradReduce::Fp32 => "fp32",
            GradReduce::Param => "param",
        }
    }
}

/// How FP8 linear layers are run (only read when `precision = fp8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fp8Recipe {
    /// NVIDIA Transformer Engine (Megatron-LM, NeMo): an FP8 copy of each weight and of its
    /// transpose cast once per iteration and kept (2 B per linear-layer parameter), scaling
    /// factors and amax histories; the FP8 inputs of the linear layers are what is saved for the
    /// backward pass.
    TransformerEngine,
    /// Transformer Engine with FP8 primary weights (Megatron Core's `fp8_param_gather`, "FP8
    /// params"): the model's linear-layer weights *are* FP8 tensors (1 B per parameter, cast from
    /// the FP32 master copy by the optimizer step, gathered in FP8 by the distributed optimizer),
    /// with their cached FP8 transpose for the backward GEMMs (1 B) — 2 B per linear-layer
    /// parameter in all instead of the 16-bit weight plus two FP8 copies (4 B). Norms, embeddings
    /// and the output head stay 16-bit. Megatron-Bridge's FP8 mixed-precision recipes (delayed
    /// and current scaling) set `fp8_param_gather=True`
    /// (`megatron/bridge/training/mixed_precision.py`). Time is priced as
    /// [`Fp8Recipe::TransformerEngine`] (the optimizer's cast replaces the first micro-batch's),
    /// but for the data-parallel all-gathers, which move the linear weights in FP8
    /// ([`Fp8Recipe::gathers_fp8`]).
    TransformerEngineFp8Weights,
    /// torchao `float8` (torchtitan): weights and inputs cast on the fly in every forward and
    /// backward, no persistent FP8 weight copy; the 16-bit inputs are saved for the backward pass.
    Torchao,
    /// torchao `float8` with FSDP's float8 all-gather (torchtitan's
    /// `float8.enable_fsdp_float8_all_gather`, torchao's `enable_fsdp_float8_all_gather`): each
    /// rank casts its shard of a linear weight to FP8 before FSDP gathers it ("so we can
    /// communicate in float8", torchtitan `docs/float8.md`), so the gathered linear weights held
    /// between the forward and the backward are FP8 (1 B per parameter instead of 2). Sharded
    /// weights, norms, embeddings and the output head are as [`Fp8Recipe::Torchao`]. Time is priced
    /// as [`Fp8Recipe::Torchao`] but for the all-gathers, which move the linear weights in FP8
    /// ([`Fp8Recipe::gathers_fp8`]).
    TorchaoFp8AllGather,
    /// DeepSeek-V3's fine-grained recipe (technical report, arXiv 2412.19437, §3.3.2 "Online
    /// Quantization": "we calculate the maximum absolute value online for each 1x128 activation
    /// tile or 128x128 weight block ... and then quantize the activation or weight online into the
    /// FP8 format"): the 16-bit weights are quantized at each GEMM that reads them (the forward's
    /// Fprop and the backward's Dgrad: read 2 B, write 1 B per parameter each time, as torchao
    /// prices it) and no FP8 weight copy is kept between micro-batches; the linear layers' inputs
    /// are cached in FP8 for the backward ("the FP8 Wgrad GEMM allows activations to be stored in
    /// FP8", §3.3.1), as Transformer Engine saves them. The report names the higher-precision
    /// copies that exist (§3.3.1, §3.3.3): FP32 master weights, FP32 weight gradients and the
    /// optimizer states — no cached FP8 weight.
    OnlineBlockwise,
}

impl Fp8Recipe {
    /// All recipes, in order.
    pub const ALL: [Fp8Recipe; 5] = [
        Fp8Recipe::TransformerEngine,
        Fp8Recipe::TransformerEngineFp8Weights,
        Fp8Recipe::Torchao,
        Fp8Recipe::TorchaoFp8AllGather,
        Fp8Recipe::OnlineBlockwise,
    ];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Fp8Recipe::TransformerEngine => "te",
            Fp8Recipe::TransformerEngineFp8Weights => "te_fp8_weights",
            Fp8Recipe::Torchao => "torchao",
            Fp8Recipe::TorchaoFp8AllGather => "torchao_fp8_gather",
            Fp8Recipe::OnlineBlockwise => "online_blockwise",
        }
    }

    /// Whether torchao's float8 runs the FP8 linear layers (cast on every pass).
    pub fn is_torchao(self) -> bool {
        matches!(self, Fp8Recipe::Torchao | Fp8Recipe::TorchaoFp8AllGather)
    }

    /// Whether Transformer Engine runs the FP8 linear layers (FP8 inputs saved for the backward,
    /// FP8 weights cast once per iteration).
    pub fn is_transformer_engine(self) -> bool {
        matches!(self, Fp8Recipe::TransformerEngine | Fp8Recipe::TransformerEngineFp8Weights)
    }

    /// Whether the weights are cast to FP8 at every GEMM that reads them (no FP8 weight kept
    /// between micro-batches): torchao and DeepSeek-V3's online quantization.
    pub fn casts_weights_per_gemm(self) -> bool {
        self.is_torchao() || self == Fp8Recipe::OnlineBlockwise
    }

    /// Whether the linear layers save their FP8 inputs for the backward pass (Transformer Engine,
    /// DeepSeek-V3's recipe) rather than the 16-bit ones (torchao).
    pub fn saves_fp8_inputs(self) -> bool {
        self.is_transformer_engine() || self == Fp8Recipe::OnlineBlockwise
    }

    /// Whether the data-parallel all-gathers move the linear layers' weights in FP8 (1 B per
    /// parameter): FP8 primary weights (Megatron's distributed optimizer and Megatron-FSDP gather
    /// the FP8 parameter buffers: Megatron-FSDP groups a `Float8Tensor` parameter in a `float8`
    /// buffer, NVIDIA/Megatron-LM @ d98e8a64 `megatron/core/distributed/fsdp/src/megatron_fsdp/
    /// param_and_grad_buffer.py` line 1798, and gathers that buffer, lines 4715–4720) and FSDP's
    /// float8 all-gather (torchtitan `docs/float8.md`: "so we can communicate in float8").
    pub fn gathers_fp8(self) -> bool {
        matches!(self, Fp8Recipe::TransformerEngineFp8Weights | Fp8Recipe::TorchaoFp8AllGather)
    }
}

/// Whether the element-wise work of a block runs in fused kernels or as separate eager kernels.
///
/// Fused (Megatron-LM / NeMo with Transformer Engine and Apex kernels, MaxText under XLA, PyTorch
/// under `torch.compile`): each norm, rotary embedding, activation and residual add is one kernel
/// that reads its inputs and writes its output once. Eager (PyTorch without `torch.compile`, e.g.
/// torchtitan's and Hugging Face's eager modules): every primitive is its own kernel, each reading
/// and writing its tensors in HBM, with FP32 intermediates inside the norms and RoPE. The traffic
/// of each is in [`super::ops`] (`elementwise_traffic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fusion {
    /// One kernel per element-wise operation (the default: Megatron-LM, NeMo, MaxText, compiled
    /// PyTorch).
    Fused,
    /// One kernel per PyTorch primitive (eager mode).
    Eager,
}

impl Fusion {
    /// All choices, in order.
    pub const ALL: [Fusion; 2] = [Fusion::Fused, Fusion::Eager];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Fusion::Fused => "fused",
            Fusion::Eager => "eager",
        }
    }
}

/// The attention kernel a run's framework calls, by the generation of GPU it was written for.
///
/// * `native` (the default): a fused attention kernel written for the part's own matrix
///   instructions — cuDNN fused attention (Transformer Engine's `FusedAttention`, what Megatron-LM
///   and NeMo call on Hopper) or FlashAttention-3 on Hopper and later, FlashAttention-2 on Ampere,
///   XLA / Pallas (splash) attention on TPUs: cuDNN's H100 benchmark as a fraction of the part's
///   ceiling ([`super::efficiency::H100_ATTENTION_BENCHMARK`]), scaled by the fitted `η_att`.
/// * `fa2`: a FlashAttention-2-class kernel (PyTorch SDPA's flash backend, the `flash-attn` 2
///   package, Triton flash attention: torchtitan, PyTorch FSDP, llm-foundry / Composer). It is
///   written for Ampere's warp-level `mma.sync` and does not use Hopper's asynchronous
///   warp-group MMA and TMA, so on Hopper and later parts it follows its own benchmark
///   ([`super::efficiency::H100_ATTENTION_BENCHMARK`]: 0.62 of cuDNN's rate at 8–16k tokens;
///   [`super::Hardware::async_mma`]); on other parts it is their native kernel (no change).
/// * `unfused`: no attention kernel — the score matrix is computed in full and kept
///   ([`super::unfused_attention`]): Megatron-Core's own `DotProductAttention`
///   (`--attention-backend local`), Transformer Engine's `UnfusedDotProductAttention`
///   (`--attention-backend unfused`), Hugging Face's `attn_implementation: eager`, and the
///   Megatron-LM / Megatron-DeepSpeed of before FlashAttention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttentionKernel {
    /// The part's own-generation fused attention (cuDNN / FlashAttention-3 on Hopper).
    Native,
    /// FlashAttention-2 class (PyTorch SDPA flash backend, flash-attn 2, Triton).
    Fa2,
    /// No fused kernel: scores, softmax and context as separate kernels, the scores kept.
    Unfused,
}

impl AttentionKernel {
    /// All choices, in order.
    pub const ALL: [AttentionKernel; 3] = [AttentionKernel::Native, AttentionKernel::Fa2, AttentionKernel::Unfused];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttentionKernel::Native => "native",
            AttentionKernel::Fa2 => "fa2",
            AttentionKernel::Unfused => "unfused",
        }
    }
}

/// The number formats of the weights, gradients and optimizer states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptimizerStates {
    /// Mixed precision (Megatron-LM, FSDP with a mixed-precision policy, DeepSpeed): 16-bit
    /// compute weights, FP32 main gradients, FP32 master weights and two FP32 Adam moments
    /// (2 + 4 + 12 B per parameter; FP32 training: 4 + 4 + 8).
    Fp32Master,
    /// Pure BF16 (torchtune `dtype=bf16`, Lightning `bf16-true`, litgpt): BF16 weights, gradients
    /// and Adam moments, no master copy (2 + 2 + 4 B per parameter).
    PureBf16,
    /// FP32 master weights and gradients with the two Adam moments in BF16 (DeepSeek-V3 technical
    /// report, arXiv 2412.19437, §3.3.3 "Low-Precision Storage and Communication": AdamW's first
    /// and second moments tracked in BF16, master weights and accumulated gradients kept in FP32):
    /// 2 + 4 + (4 + 2 + 2) = 14 B per parameter, the optimizer's 12 B become 8.
    Bf16Moments,
}

impl OptimizerStates {
    /// All choices, in order.
    pub const ALL: [OptimizerStates; 3] =
        [OptimizerStates::Fp32Master, OptimizerStates::PureBf16, OptimizerStates::Bf16Moments];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            OptimizerStates::Fp32Master => "fp32_master",
            OptimizerStates::PureBf16 => "pure_bf16",
            OptimizerStates::Bf16Moments => "bf16_moments",
        }
    }
}

impl fmt::Display for Recompute {
    /// The level's name, or a partial level's share as a decimal (`0.25`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recompute::Partial(s) => write!(f, "{}", s.fraction()),
            level => f.write_str(level.as_str()),
        }
    }
}

impl FromStr for Recompute {
    type Err = Error;

    /// A level's name (`none`, `selective`, `full`, `op` or `selective_op`) or the share of the
    /// forward recomputed, a decimal strictly between 0 and 1 ([`Recompute::Partial`]).
    fn from_str(s: &str) -> Result<Self, Error> {
        let t = s.trim().to_ascii_lowercase();
        if matches!(t.as_str(), "op" | "selective_op") {
            return Ok(Recompute::Op);
        }
        if let Some(v) = Recompute::ALL.into_iter().find(|v| v.as_str() == t) {
            return Ok(v);
        }
        let rule = "must be one of none, selective, full, op, or the share of the forward recomputed \
                    (a decimal strictly between 0 and 1, to 0.001)";
        match t.parse::<f64>() {
            Ok(f) => RecomputeShare::of(f)
                .filter(|_| f > 0.0 && f < 1.0)
                .map(Recompute::Partial)
                .ok_or_else(|| Error::invalid("recompute", s, rule)),
            Err(_) => Err(Error::invalid("recompute", s, rule)),
        }
    }
}
named_enum!(GradReduce, "grad_reduce", &[("bf16", GradReduce::Param), ("fp16", GradReduce::Param)]);
named_enum!(
    Fp8Recipe,
    "fp8_recipe",
    &[
        ("transformer_engine", Fp8Recipe::TransformerEngine),
        ("fp8_param_gather", Fp8Recipe::TransformerEngineFp8Weights),
        ("fp8_params", Fp8Recipe::TransformerEngineFp8Weights),
        ("float8", Fp8Recipe::Torchao),
        ("fsdp_float8_all_gather", Fp8Recipe::TorchaoFp8AllGather),
        ("float8_all_gather", Fp8Recipe::TorchaoFp8AllGather),
        ("online", Fp8Recipe::OnlineBlockwise),
        ("deepseek", Fp8Recipe::OnlineBlockwise),
    ]
);
named_enum!(
    OptimizerStates,
    "optimizer_states",
    &[("mixed", OptimizerStates::Fp32Master), ("bf16", OptimizerStates::PureBf16)]
);
named_enum!(Fusion, "fusion", &[("compiled", Fusion::Fused), ("compile", Fusion::Fused), ("unfused", Fusion::Eager)]);
named_enum!(
    AttentionKernel,
    "attention_kernel",
    &[
        ("cudnn", AttentionKernel::Native),
        ("te", AttentionKernel::Native),
        ("fa3", AttentionKernel::Native),
        ("flash3", AttentionKernel::Native),
        ("sdpa", AttentionKernel::Fa2),
        ("flash2", AttentionKernel::Fa2),
        ("flash_attn2", AttentionKernel::Fa2),
        ("local", AttentionKernel::Unfused),
        ("eager", AttentionKernel::Unfused),
        ("math", AttentionKernel::Unfused),
    ]
);
named_enum!(Sharding, "sharding", &[("fsdp", Sharding::Zero3), ("ddp", Sharding::Ddp)]);

/// How the context-parallel devices exchange attention's inputs (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpComm {
    /// K/V ring over all `cp` devices (Megatron `p2p`).
    Ring,
    /// All-to-all over heads across all `cp` devices (DeepSpeed-Ulysses, Megatron `a2a`).
    Ulysses,
    /// Ulysses over `cp_ulysses` devices, a ring over `cp / cp_ulysses` (USP, Megatron `a2a+p2p`).
    Hybrid,
    /// Chosen by the search per layout (ring, Ulysses or a hybrid split); not a flavour one
    /// layout can be priced with ([`super::context_parallel::check`] refuses it where `cp > 1`).
    Search,
}

impl CpComm {
    /// All choices, in order.
    pub const ALL: [CpComm; 4] = [CpComm::Ring, CpComm::Ulysses, CpComm::Hybrid, CpComm::Search];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            CpComm::Ring => "ring",
            CpComm::Ulysses => "ulysses",
            CpComm::Hybrid => "hybrid",
            CpComm::Search => "search",
        }
    }
}

named_enum!(
    CpComm,
    "cp_comm",
    &[
        ("p2p", CpComm::Ring),
        ("a2a", CpComm::Ulysses),
        ("all_to_all", CpComm::Ulysses),
        ("usp", CpComm::Hybrid),
        ("a2a+p2p", CpComm::Hybrid),
        ("auto", CpComm::Search)
    ]
);

/// How the blocks are dealt to the pipeline stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StageSplitRule {
    /// The blocks alone are split evenly, the first `D mod pp` stages taking one more; the
    /// embedding rides on the first stage and the head with its loss on the last, on top
    /// (Megatron-LM's and torchtitan's default).
    #[default]
    Blocks,
    /// The embedding counts as one block: the first stage holds one block fewer (Megatron-LM
    /// `--account-for-embedding-in-pipeline-split`).
    EmbeddingAsBlock,
    /// The head with its loss counts as one block: the last stage holds one block fewer
    /// (Megatron-LM `--account-for-loss-in-pipeline-split`).
    HeadAsBlock,
    /// Both count as one block each: `D + 2` units split evenly (Megatron-LM with both flags;
    /// Megatron-DeepSpeed `--pp-partition-method 'type:transformer|embedding'`, BLOOM-176B's
    /// split, where the 250k-row embedding weighs as much as a block).
    EndsAsBlocks,
}

impl StageSplitRule {
    /// All rules, in order.
    pub const ALL: [StageSplitRule; 4] = [
        StageSplitRule::Blocks,
        StageSplitRule::EmbeddingAsBlock,
        StageSplitRule::HeadAsBlock,
        StageSplitRule::EndsAsBlocks,
    ];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            StageSplitRule::Blocks => "blocks",
            StageSplitRule::EmbeddingAsBlock => "embedding_as_block",
            StageSplitRule::HeadAsBlock => "head_as_block",
            StageSplitRule::EndsAsBlocks => "ends_as_blocks",
        }
    }

    /// The rule counting the embedding (`embedding`) and the head (`head`) as blocks.
    pub fn counting(embedding: bool, head: bool) -> StageSplitRule {
        match (embedding, head) {
            (false, false) => StageSplitRule::Blocks,
            (true, false) => StageSplitRule::EmbeddingAsBlock,
            (false, true) => StageSplitRule::HeadAsBlock,
            (true, true) => StageSplitRule::EndsAsBlocks,
        }
    }

    /// What the rule counts as a block beyond the blocks, in words.
    pub fn ends_in_words(self) -> &'static str {
        match self {
            StageSplitRule::Blocks => "nothing",
            StageSplitRule::EmbeddingAsBlock => "the embedding",
            StageSplitRule::HeadAsBlock => "the head with its loss",
            StageSplitRule::EndsAsBlocks => "the embedding and the head each",
        }
    }

    /// The note a reader gives when a file asks for this rule.
    pub fn note(self) -> String {
        format!("pipeline split: {} counted as one block (stage_split={})", self.ends_in_words(), self.as_str())
    }

    /// Units the embedding and the head add to the split: (embedding, head), each 0 or 1.
    pub fn ends_counted(self) -> (u64, u64) {
        match self {
            StageSplitRule::Blocks => (0, 0),
            StageSplitRule::EmbeddingAsBlock => (1, 0),
            StageSplitRule::HeadAsBlock => (0, 1),
            StageSplitRule::EndsAsBlocks => (1, 1),
        }
    }
}

named_enum!(
    StageSplitRule,
    "stage_split",
    &[
        ("even", StageSplitRule::Blocks),
        ("embedding", StageSplitRule::EmbeddingAsBlock),
        ("loss", StageSplitRule::HeadAsBlock),
        ("head", StageSplitRule::HeadAsBlock),
        ("ends", StageSplitRule::EndsAsBlocks),
    ]
);

/// The optimizer's algorithm (priced in [`super::muon`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Optimizer {
    /// Adam(W): the fused multi-tensor step priced by its HBM traffic.
    #[default]
    Adam,
    /// Muon replicated: every data-parallel rank orthogonalizes every matrix it holds.
    Muon,
    /// Muon layer-wise distributed over the data-parallel ranks (Megatron's `--optimizer muon
    /// --use-distributed-optimizer`, formerly `dist_muon`).
    DistMuon,
}

impl Optimizer {
    /// All choices, in order.
    pub const ALL: [Optimizer; 3] = [Optimizer::Adam, Optimizer::Muon, Optimizer::DistMuon];

    /// The CLI / URL name.
    pub fn as_str(self) -> &'static str {
        match self {
            Optimizer::Adam => "adam",
            Optimizer::Muon => "muon",
            Optimizer::DistMuon => "dist_muon",
        }
    }

    /// Whether the matrices are orthogonalized by Muon.
    pub fn is_muon(self) -> bool {
        self != Optimizer::Adam
    }
}

named_enum!(Optimizer, "optimizer", &[("adamw", Optimizer::Adam), ("layer_wise_muon", Optimizer::DistMuon)]);

/// Which modules Megatron-Core builds a layer from (`--transformer-impl`,
/// `megatron/core/transformer/transformer_config.py` l. 1314–1318 at d98e8a6, default
/// `transformer_engine`; the specs in `megatron/core/models/gpt/gpt_layer_specs.py`): what the
/// layer's Python counts ([`super::layer_python::LayerModules`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TransformerImpl {
    /// Transformer Engine's modules (`get_gpt_layer_with_transformer_engine_submodules`): the
    /// norms fused into the linear layers, TE linear modules, `TEDotProductAttention`.
    #[default]
    TransformerEngine,
    /// Megatron-Core's own (`get_gpt_layer_local_submodules`): `FusedLayerNorm` norms,
    /// `ColumnParallelLinear`/`RowParallelLinear`, `DotProductAttention`; MoE experts always
    /// `SequentialMLP` (`megatron/core/models/backends.py` l. 133–142).
    Local,
}

impl TransformerImpl {
    /// All choices, in order.
    pub const ALL: [TransformerImpl; 2] = [TransformerImpl::TransformerEngine, TransformerImpl::Local];

    /// The CLI / URL name (Megatron-LM's).
    pub fn as_str(self) -> &'static str {
        match self {
            TransformerImpl::TransformerEngine => "transformer_engine",
            TransformerImpl::Local => "local",
        }
    }
}

named_enum!(TransformerImpl, "transformer_impl", &[("te", TransformerImpl::TransformerEngine)]);
