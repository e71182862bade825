//! One transformer block on one device for one micro-batch as a list of operations: each record
//! says what the operation is (matmul, attention, element-wise, collective), its FLOPs, the HBM
//! bytes it moves, the collective it runs (kind, volume, group), the parameters it owns and the
//! bytes it keeps for the backward pass under each recomputation policy, and its priced forward and
//! backward passes. [`super::block::BlockCost`] (what the evaluator uses), the explorer's layer
//! table in extended mode and the memory breakdown are all sums over this list.
//!
//! The list is built sub-layer by sub-layer ([`super::attention::attention_operations`],
//! [`super::sublayer::mlp_operations`]), each inside the shared norm / tensor-parallel collectives
//! / residual wrapper ([`super::sublayer`]), so a new kind of layer is a new function returning
//! its records: multi-head latent attention ([`super::moe::mla::mla_operations`]) and the
//! mixture-of-experts MLP with its router, shared experts, dispatch/combine all-to-all and grouped
//! expert GEMM ([`super::moe::block::moe_block_operations`]). This file holds the record, how its
//! passes follow from the rates ([`Work`]), the element-wise traffic and the small builders
//! (matmuls, element-wise operations, FP8 casts); the context-parallel exchange is in
//! [`super::context_parallel`].
//!
//! Counting conventions (each a correction of the reference, spec §9):
//! * a matmul `(m×k)·(k×n)` costs `2·m·k·n` FLOPs (Q11); its backward is two matmuls of the same
//!   size (input and weight gradients);
//! * flash attention's forward is `4·b·s_q·s_k·a·d` FLOPs, halved by a causal mask (Q15); its
//!   backward is [`FLASH_BACKWARD_FACTOR`] forwards;
//! * element-wise work is priced by its HBM traffic, fused or eager ([`ElementwiseTraffic`]); its
//!   backward moves [`BACKWARD_TRAFFIC_FACTOR`] times the forward's.
//!
//! Bytes kept for the backward pass (flash attention: no score matrix, only Q, K, V and the output;
//! the softmax statistics, `4·a·s` bytes per sequence, are negligible and left out): each
//! operation keeps its own input (norms their input, matmuls their input, the MLP activation its
//! pre-activations); with sequence parallelism **every** token-wise tensor — the norm inputs and
//! the norm outputs that feed the column-parallel matmuls, re-gathered in the backward — is kept
//! sharded over `tp` (Korthikanti et al. 2022, §4.2.2: `34/t·sbh` for their GPT block; Megatron
//! saves the sharded input of a sequence-parallel linear and all-gathers it again for the weight
//! gradient). Full recomputation keeps only the block input (the first norm's input).

pub use super::efficiency::FLASH_BACKWARD_FACTOR;
use super::layout::Layout;
use super::options::{Fusion, Recompute};
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::vocab::CollectiveKind;

/// Backward element-wise traffic relative to the forward (each op reads its output gradient and
/// its saved input and writes its input gradient).
pub const BACKWARD_TRAFFIC_FACTOR: f64 = 2.0;

/// Extra bytes per element of an FP8 cast: read the 16-bit tensor, write one byte.
pub const FP8_CAST_BYTES: f64 = 1.0;

/// Element traffic of a fused norm per token, in multiples of its width: read `h`, write `h`.
pub(crate) const NORM_ELEMENTS_PER_H: f64 = 2.0;

/// Forward HBM traffic of the element-wise operations per element of the tensor each works on,
/// in activation elements (16-bit in BF16/FP16 training; an FP32 intermediate counts 2), fused
/// or eager ([`Fusion`]). The backward moves [`BACKWARD_TRAFFIC_FACTOR`] times as much in either.
///
/// Eager counts are the kernels PyTorch runs without `torch.compile`:
/// * RMSNorm (`torch.nn.RMSNorm` / `F.rms_norm`, ATen's composite `rms_norm`, and the
///   hand-written norms of torchtitan and Hugging Face Llama): upcast to FP32 (read 1, write 2),
///   `pow(2)` (read 2, write 2), `mean` (read 2), multiply by `rsqrt` (read 2, write 2),
///   downcast (read 2, write 1), multiply by the weight (read 1, write 1) = **18** per element,
///   against 2 fused (read, write). Liger-Kernel (Hsu et al. 2024, arXiv:2410.10989, Fig. 3)
///   measures its fused RMSNorm ~7× faster than this eager module, consistent with a 9× traffic
///   ratio less launch and reduction overheads.
/// * RoPE (torchtitan's `apply_rotary_emb`: `float()` + `view_as_complex`, complex multiply by
///   `freqs_cis`, `view_as_real` + `type_as`): upcast (read 1, write 2), multiply (read 2,
///   write 2), downcast (read 2, write 1) = **10** per element of Q and K. Fused: left out, as
///   before — applied inside the QKV epilogue / attention prologue by XLA, cuDNN and compiled
///   kernels (Megatron's separate fused RoPE kernel moves 2 per element, < 1 % of a step).
/// * SwiGLU (`silu(gate) * up`): `silu` (read 1, write 1) and `mul` (read 2, write 1) = **5**
///   per element of the FFN width, against 3 fused (read gate and up, write the product); a
///   plain activation (GELU) is one kernel either way (read 1, write 1).
///
/// Korthikanti et al. 2022 (arXiv:2205.05198, §4.1) count the same tensors for memory: each
/// element-wise primitive of an unfused block keeps (and moves) its own input. What that adds to
/// the kept activations is [`EAGER_NORM_EXTRA_BYTES`] and [`eager_activation_extra`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElementwiseTraffic {
    /// A norm, per element of `h` (read and write included).
    pub norm: f64,
    /// Rotary embeddings, per element of Q and K.
    pub rope: f64,
    /// A gated activation (SwiGLU), per element of the FFN width.
    pub gated_activation: f64,
    /// A plain activation (GELU), per element of the FFN width.
    pub plain_activation: f64,
}

impl ElementwiseTraffic {
    /// The traffic under `fusion`.
    pub fn of(fusion: Fusion) -> ElementwiseTraffic {
        match fusion {
            Fusion::Fused => ElementwiseTraffic {
                norm: NORM_ELEMENTS_PER_H,
                rope: 0.0,
                gated_activation: 3.0,
                plain_activation: 2.0,
            },
            Fusion::Eager => {
                ElementwiseTraffic { norm: 18.0, rope: 10.0, gated_activation: 5.0, plain_activation: 2.0 }
            }
        }
    }

    /// The activation's traffic per element of the FFN width.
    pub fn activation(&self, gated: bool) -> f64 {
        if gated { self.gated_activation } else { self.plain_activation }
    }
}

/// Bytes per element of `h` an eager RMSNorm keeps beyond a fused norm (which keeps its 16-bit
/// input and a per-token `rsqrt`): autograd saves the FP32 upcast (4 B, for `pow` and the `rsqrt`
/// multiply) and the normalised output before the weight multiply (2 B) instead of the 16-bit
/// input (2 B); in FP32 training the upcast is the input itself and the normalised output 4 B:
/// 4 B more either way [B]. Checked on torchtune's Llama 3.2 3B table (eager 64.4 GB against
/// compiled 54.8 GB: 6.8 h-vectors of 2 B per token and block; 2 norms × 2 + f/h = 6.67).
pub const EAGER_NORM_EXTRA_BYTES: f64 = 4.0;

/// Elements per element of the FFN width an eager activation keeps beyond a fused one: the gated
/// product `silu(gate) * up` saves the `silu` output for its backward (1; fused, it is
/// recomputed from the saved gate); a plain activation keeps its input either way (0).
pub fn eager_activation_extra(fusion: Fusion, gated: bool) -> f64 {
    if fusion == Fusion::Eager && gated { 1.0 } else { 0.0 }
}

/// What an operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A matmul (GEMM) against weights, or of activations by activations (unfused attention's
    /// scores and context), priced at the matmul rate under a roofline.
    Matmul,
    /// Fused (flash) attention, priced at the attention rate under a roofline.
    Attention,
    /// Element-wise work priced by its HBM traffic.
    Elementwise,
    /// A collective between devices.
    Collective,
}

/// The collective an operation runs in its forward pass (its backward runs the transposed one).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CollectiveUse {
    /// Forward collective.
    pub kind: CollectiveKind,
    /// Full tensor moved [GB].
    pub volume_gb: f64,
    /// Devices in the group.
    pub group: u64,
    /// Members sharing one fast domain.
    pub fast_share: u64,
}

/// Bytes an operation keeps for the backward pass under each recomputation policy [B].
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct KeptBytes {
    /// Nothing recomputed.
    pub none: f64,
    /// Attention core recomputed (with flash attention: the same as `none`).
    pub selective: f64,
    /// Whole block recomputed: only the block input is kept.
    pub full: f64,
    /// torchtitan's operator-level policy ([`Recompute::Op`]): the saved outputs of this operation
    /// (and the block input at the first norm). An operation that does not say keeps what it
    /// keeps under selective recomputation.
    pub op: f64,
}

impl KeptBytes {
    /// The same bytes under every policy but full recomputation (which keeps none).
    pub(crate) fn recomputable(bytes: f64) -> KeptBytes {
        KeptBytes { none: bytes, selective: bytes, full: 0.0, op: bytes }
    }

    /// Bytes kept under `policy` [B].
    pub fn under(&self, policy: Recompute) -> f64 {
        match policy {
            Recompute::None => self.none,
            Recompute::Selective => self.selective,
            Recompute::Full => self.full,
            Recompute::Op => self.op,
            // That share of the blocks keeps what full recomputation keeps, the rest everything.
            Recompute::Partial(s) => self.none + s.fraction() * (self.full - self.none),
        }
    }
}

/// How an operation's passes follow from the compute rates of [`Pricing`] (`η`, `η_att`, `c`,
/// `c_att`): the operations are laid out once and priced through it, so a fit can price the same
/// list again at other constants ([`reprice`], [`super::timing`]) by the one formula the builders
/// use.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) enum Work {
    /// Not described (the operations of Mixture-of-Experts blocks and latent attention, a
    /// context-parallel ring overlapping attention): a list holding one is laid out again.
    #[default]
    Opaque,
    /// Reads no compute rate (element-wise traffic, collectives that overlap nothing).
    Fixed,
    /// A weight matmul `(m × k)·(k × n)`: [`Pricing::weight_linear`] forward, twice that backward.
    Matmul { m: f64, k: f64, n: f64 },
    /// `batch` matmuls `(m × k)·(k × n)` of activations (unfused attention's scores and context):
    /// [`Pricing::activation_matmul`] forward, twice that backward.
    ActivationMatmul { batch: f64, m: f64, k: f64, n: f64 },
    /// Flash attention of `tflop` [TFLOP] moving `bytes` [B] over `s_q` queries and `s_k` keys:
    /// [`Pricing::attention`] forward, [`FLASH_BACKWARD_FACTOR`] times both backward.
    Attention { tflop: f64, bytes: f64, s_q: f64, s_k: f64 },
    /// A tensor-parallel collective ([`tp_passes`]) of an all-gather of `ag` and a reduce-scatter
    /// of `rs` seconds at a sub-layer's `entry` (or exit), overlapping the weight matmul `gemm`
    /// (`m`, `k`, `n`).
    TpCollective { ag: f64, rs: f64, entry: bool, gemm: (f64, f64, f64) },
    /// The context-parallel ring ([`ring_passes`]): `steps` messages of `fwd_msg` (forward) and
    /// `bwd_msg` (backward) seconds over `cp` ranks, overlapping the flash attention `attention`
    /// (`tflop`, `bytes`, `s_q`, `s_k` of [`Work::Attention`]).
    CpRing { fwd_msg: f64, bwd_msg: f64, steps: f64, cp: f64, attention: (f64, f64, f64, f64) },
    /// Flash attention through a sliding window of `window` keys per query over calls of `s_q`
    /// queries and `s_k` keys ([`Pricing::window_attention`]).
    WindowAttention { tflop: f64, bytes: f64, s_q: f64, s_k: f64, window: f64 },
}

/// Flash attention's forward and backward passes ([`Work::Attention`]).
fn attention_passes(p: &Pricing, tflop: f64, bytes: f64, s_q: f64, s_k: f64) -> (Pass, Pass) {
    (
        p.attention(tflop, bytes, s_q, s_k),
        p.attention(tflop * FLASH_BACKWARD_FACTOR, bytes * FLASH_BACKWARD_FACTOR, s_q, s_k),
    )
}

impl Work {
    /// The forward and backward passes at the rates of `p` (`None`: not described, or they read
    /// no rate and stay as priced).
    fn passes(&self, p: &Pricing) -> Option<(Pass, Pass)> {
        match *self {
            Work::Opaque | Work::Fixed => None,
            Work::Matmul { m, k, n } => {
                let fwd = p.weight_linear(m, k, n);
                Some((fwd, fwd.times(2.0)))
            }
            Work::ActivationMatmul { batch, m, k, n } => {
                let fwd = p.activation_matmul(batch, m, k, n);
                Some((fwd, fwd.times(2.0)))
            }
            Work::Attention { tflop, bytes, s_q, s_k } => Some(attention_passes(p, tflop, bytes, s_q, s_k)),
            Work::WindowAttention { tflop, bytes, s_q, s_k, window } => {
                let b = FLASH_BACKWARD_FACTOR;
                Some((
                    p.window_attention(tflop, bytes, s_q, s_k, window),
                    p.window_attention(tflop * b, bytes * b, s_q, s_k, window),
                ))
            }
            Work::TpCollective { ag, rs, entry, gemm: (m, k, n) } => {
                let (fwd, bwd, _) = tp_passes(p, ag, rs, entry, &p.weight_linear(m, k, n));
                Some((fwd, bwd))
            }
            Work::CpRing { fwd_msg, bwd_msg, steps, cp, attention: (tflop, bytes, s_q, s_k) } => {
                let (att_fwd, att_bwd) = attention_passes(p, tflop, bytes, s_q, s_k);
                Some(ring_passes((fwd_msg, bwd_msg), steps, cp, att_fwd.compute_s, att_bwd.compute_s))
            }
        }
    }
}

/// Which fitted constants an operation's passes read ([`Work::reads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// None (or not described).
    Nothing,
    /// The matmul rate `η` and the GEMM-size constant `c`.
    Matmul,
    /// The attention rate `η_att` and its sequence constant `c_att`.
    Attention,
}

impl Work {
    /// The fitted constants its passes read.
    pub(crate) fn reads(&self) -> Reads {
        match self {
            Work::Matmul { .. } | Work::ActivationMatmul { .. } | Work::TpCollective { .. } => Reads::Matmul,
            Work::Attention { .. } | Work::CpRing { .. } | Work::WindowAttention { .. } => Reads::Attention,
            Work::Opaque | Work::Fixed => Reads::Nothing,
        }
    }
}

/// Prices `ops` again at the rates of `p` (each by its [`Work`]): those reading the matmul rate
/// and its size constant when `matmul`, those reading attention's when `attention`; the others
/// keep their passes.
pub(crate) fn reprice(ops: &mut [Operation], p: &Pricing, matmul: bool, attention: bool) {
    for op in ops {
        let reads = match op.work.reads() {
            Reads::Matmul => matmul,
            Reads::Attention => attention,
            Reads::Nothing => false,
        };
        if !reads {
            continue;
        }
        if let Some((fwd, bwd)) = op.work.passes(p) {
            op.fwd = fwd;
            op.bwd = bwd;
        }
    }
}

/// Whether every operation of `ops` says how it is priced ([`reprice`] can price them all).
pub(crate) fn repriceable(ops: &[Operation]) -> bool {
    ops.iter().all(|o| o.work != Work::Opaque)
}

/// One operation of a block on one device for one micro-batch.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Operation {
    /// Name (`qkv_proj`, `attention`, `mlp_reduce_scatter`, …).
    pub name: &'static str,
    /// What it is.
    pub kind: OpKind,
    /// Forward pass (its FLOPs in `fwd.tflop`) [TFLOP, s].
    pub fwd: Pass,
    /// Backward pass without recomputation [TFLOP, s].
    pub bwd: Pass,
    /// HBM bytes moved by the forward pass [B].
    pub bytes: f64,
    /// The forward's collective, for collectives.
    pub collective: Option<CollectiveUse>,
    /// Parameters owned on this device (before ZeRO sharding) [count].
    pub parameters: f64,
    /// Bytes kept for the backward pass under each policy [B].
    pub kept: KeptBytes,
    /// Fraction of the forward that runs again under the operator-level policy
    /// ([`Recompute::Op`]): 1 for what is not saved (norms, activations, residual adds, K / output
    /// / MLP-up projections, all-gathers), 0 for saved outputs, the share of a fused matmul whose
    /// part is recomputed.
    pub op_recompute: f64,
    /// Fraction of the forward that runs again under selective recomputation: 0 but for the
    /// operations of Megatron-Core's recompute modules ([`super::moe::RecomputeModules`]).
    pub selective_recompute: f64,
    /// How its passes follow from the compute rates.
    #[serde(skip)]
    pub(crate) work: Work,
}

impl Operation {
    pub(crate) fn new(name: &'static str, kind: OpKind, fwd: Pass, bwd: Pass, bytes: f64) -> Operation {
        Operation {
            name,
            kind,
            fwd,
            bwd,
            bytes,
            collective: None,
            parameters: 0.0,
            kept: KeptBytes::default(),
            op_recompute: 0.0,
            selective_recompute: 0.0,
            work: Work::Opaque,
        }
    }

    /// An operation priced by `work` at the rates of `p` (an operation reading no rate:
    /// [`Work::Fixed`] with its passes).
    pub(crate) fn priced(name: &'static str, kind: OpKind, p: &Pricing, work: Work, bytes: f64) -> Operation {
        let (fwd, bwd) = work.passes(p).unwrap_or_default();
        Operation { work, ..Operation::new(name, kind, fwd, bwd, bytes) }
    }

    /// The same operation, reading no compute rate.
    pub(crate) fn fixed(self) -> Operation {
        Operation { work: Work::Fixed, ..self }
    }

    pub(crate) fn owning(mut self, parameters: f64) -> Operation {
        self.parameters = parameters;
        self
    }

    pub(crate) fn keeping(mut self, kept: KeptBytes) -> Operation {
        self.kept = kept;
        self
    }

    /// Under selective recomputation (a recompute module): keeps `bytes` and reruns `fraction` of
    /// its forward.
    pub(crate) fn selective_policy(mut self, bytes: f64, fraction: f64) -> Operation {
        self.kept.selective = bytes;
        self.selective_recompute = fraction;
        self
    }

    /// Under the operator-level policy: keeps `bytes` and reruns `fraction` of its forward.
    pub(crate) fn op_policy(mut self, bytes: f64, fraction: f64) -> Operation {
        self.kept.op = bytes;
        self.op_recompute = fraction;
        self
    }

    /// The fraction of the forward that runs again before the backward under `policy` (full
    /// recomputation reruns the whole block, its collectives included; with flash attention
    /// selective recomputation costs nothing extra but for recompute modules,
    /// [`Self::selective_recompute`]; the operator-level policy reruns what it does not save,
    /// [`Self::op_recompute`]; a partial level reruns its share of every operation, the blocks it
    /// recomputes averaged over the stage).
    pub fn recomputed(&self, policy: Recompute) -> f64 {
        match policy {
            Recompute::Full => 1.0,
            Recompute::Op => self.op_recompute,
            Recompute::Selective => self.selective_recompute,
            Recompute::None => 0.0,
            Recompute::Partial(s) => s.fraction(),
        }
    }
}

/// The shared quantities of one block's operations.
pub(crate) struct Shape {
    /// Tokens of the micro-batch on this device (the context-parallel shard) [tokens].
    pub tokens: f64,
    /// Tokens of the token-wise work (÷ `tp` under sequence parallelism) [tokens].
    pub tokenwise: f64,
    /// Tensor-parallel degree.
    pub tp: f64,
    /// Hidden width [channels].
    pub h: f64,
    /// Bytes per element of activations [B].
    pub es: f64,
}

impl Shape {
    /// The quantities of `w` under `layout`.
    pub fn of(w: &Workload, layout: &Layout, p: &Pricing) -> Shape {
        let tp = layout.tp as f64;
        let tokens = layout.local_tokens(w);
        let sp = if p.opts.sequence_parallel { tp } else { 1.0 };
        Shape { tokens, tokenwise: tokens / sp, tp, h: w.hidden as f64, es: p.hw.element_bytes }
    }
}

/// An element-wise operation moving `elements` per token of `tokens` in the forward (run again
/// under the operator-level policy, which saves no element-wise output).
pub(crate) fn elementwise(p: &Pricing, name: &'static str, bytes: f64) -> Operation {
    Operation::new(
        name,
        OpKind::Elementwise,
        p.elementwise(bytes),
        p.elementwise(bytes * BACKWARD_TRAFFIC_FACTOR),
        bytes,
    )
    .fixed()
    .op_policy(0.0, 1.0)
}

/// Bytes a linear layer keeps of its input `bytes` (16-bit): Transformer Engine's FP8 layers and
/// DeepSeek-V3's recipe save the FP8 cast instead (1 B per element); torchao and other precisions
/// save the input as it is.
pub(crate) fn saved_input(p: &Pricing, bytes: f64) -> KeptBytes {
    let fp8_saved = p.hw.operand_bytes < p.hw.element_bytes && p.opts.fp8_recipe.saves_fp8_inputs();
    KeptBytes::recomputable(if fp8_saved { bytes * p.hw.operand_bytes / p.hw.element_bytes } else { bytes })
}

/// A weight matmul `(tokens × k)·(k × n)` with `k·n` parameters.
pub(crate) fn matmul(p: &Pricing, name: &'static str, m: f64, k: f64, n: f64) -> Operation {
    let bytes = (m * k + k * n) * p.hw.operand_bytes + m * n * p.hw.element_bytes;
    Operation::priced(name, OpKind::Matmul, p, Work::Matmul { m, k, n }, bytes).owning(k * n)
}

/// The forward and backward passes of a tensor-parallel collective of an all-gather of `ag` and
/// a reduce-scatter of `rs` seconds at a sub-layer's entry (or exit) overlapping `gemm`, and the
/// forward's collective ([`tp_collective`]).
pub(crate) fn tp_passes(p: &Pricing, ag: f64, rs: f64, entry: bool, gemm: &Pass) -> (Pass, Pass, CollectiveKind) {
    let hidden = |t: f64| (t - gemm.compute_s).max(0.0);
    let exposed = |t: f64| if p.opts.tp_comm_overlap { hidden(t) } else { t };
    let (fwd_s, bwd_s, kind) = match (entry, p.opts.sequence_parallel) {
        (true, true) => (exposed(ag), hidden(ag) + hidden(rs), CollectiveKind::AllGather),
        (true, false) if p.opts.tp_grad_overlap || p.opts.tp_comm_overlap => {
            (0.0, hidden(ag + rs), CollectiveKind::AllReduce)
        }
        (true, false) => (0.0, ag + rs, CollectiveKind::AllReduce),
        (false, true) => (exposed(rs), exposed(ag), CollectiveKind::ReduceScatter),
        (false, false) => (exposed(ag + rs), 0.0, CollectiveKind::AllReduce),
    };
    (Pass { tp_comm_s: fwd_s, ..Pass::default() }, Pass { tp_comm_s: bwd_s, ..Pass::default() }, kind)
}

/// FP8 training: the inputs of the four matmuls are cast to FP8 (and, with torchao's dynamic
/// recipe or DeepSeek-V3's online quantization, the weights too in every forward and again,
/// transposed, in every backward: read 2 B, write 1 B per parameter each time; Transformer Engine
/// casts weights once per iteration, priced in the evaluator); nothing in other precisions.
pub(crate) fn fp8_casts(w: &Workload, layout: &Layout, p: &Pricing, linear_parameters: f64) -> Vec<Operation> {
    if p.hw.operand_bytes >= p.hw.element_bytes {
        return Vec::new();
    }
    let s = Shape::of(w, layout, p);
    let (q_w, f) = (w.q_width() as f64, w.ffn_hidden as f64);
    let bytes = (2.0 * s.h + q_w / s.tp + f / s.tp) * s.tokens * (s.es + FP8_CAST_BYTES);
    let mut ops = vec![elementwise(p, "fp8_casts", bytes)];
    if p.opts.fp8_recipe.casts_weights_per_gemm() {
        let weights = linear_parameters * (s.es + FP8_CAST_BYTES);
        let pass = p.elementwise(weights);
        ops.push(
            Operation::new("fp8_weight_casts", OpKind::Elementwise, pass, pass, weights).fixed().op_policy(0.0, 1.0),
        );
    }
    ops
}

/// The `layernorm` recompute module ([`super::moe::RecomputeModules::layernorm`]; DeepSeek-V3 §3.2.3)
/// applied to a block's operations under selective recomputation: every RMSNorm (the block's two,
/// and the latent attention's query and key/value norms) runs its forward again before its
/// backward and keeps its input as before, and the linear layers that read a norm's output — the
/// attention's query/key-value projection or MLA down-projections, and the MLA up-projections
/// after the latent norms — keep no input (the norm recreates it). The MoE MLP keeps nothing of
/// its norm's output (router, shared experts and dispatch are priced without it).
pub(crate) fn norms_recomputed(ops: &mut [Operation]) {
    for op in ops.iter_mut() {
        *op = match op.name {
            "attn_norm" | "mlp_norm" | "mla_q_norm" | "mla_kv_norm" => op.selective_policy(op.kept.selective, 1.0),
            "qkv_proj" | "mla_q_down" | "mla_q_proj" | "mla_q_up" | "mla_kv_up" => {
                op.selective_policy(0.0, op.recomputed(Recompute::Selective))
            }
            _ => *op,
        };
    }
}

/// The ring's exposed passes: `steps` messages of `msg` (forward, backward) seconds, each beyond
/// one chunk's attention compute (`att_fwd_s`, `att_bwd_s` over `cp` chunks) [s].
pub(crate) fn ring_passes(msg: (f64, f64), steps: f64, cp: f64, att_fwd_s: f64, att_bwd_s: f64) -> (Pass, Pass) {
    let fwd = steps * (msg.0 - att_fwd_s / cp).max(0.0);
    let bwd = steps * (msg.1 - att_bwd_s / cp).max(0.0);
    (Pass { cp_comm_s: fwd, ..Pass::default() }, Pass { cp_comm_s: bwd, ..Pass::default() })
}
