//! The Mixture-of-Experts MLP of one block on one device for one micro-batch, as operations: the
//! router, the routed experts (grouped GEMMs of the local experts), the shared experts, the token
//! permutation, and the dispatch/combine exchange ([`super::dispatch`]). It replaces the dense
//! MLP of an MoE block; attention, norms and the tensor-parallel collectives stay the block's.
//!
//! Per rank `T = mbs·s/(cp·tp)` tokens enter the layer (sequence-parallel shard: with tensor
//! parallelism Megatron's MoE layers route the `1/tp` shard each rank holds). Forward FLOPs:
//! router `2·T·h·E`; routed experts `γ·T·k·2·m·h·f_e` on the busiest rank (`γ` = the load's
//! compute factor: dropless imbalance, padded capacity, 1 when forced); shared experts
//! `T·tp·2·m·h·f_s·E_s/tp` (TP-split like a dense MLP); backward twice the forward. The routed
//! experts run at the linear layers' rate times the grouped-GEMM efficiency
//! `g(M) = M/(M + M½)` of `M = γ·T·k·e·t_e/E` tokens per local expert (their backward also
//! reads and writes the local experts' main gradient, [`super::grouped_gemm::main_grad_bytes`]),
//! and take at least the host's time to issue their GEMMs one expert at a time, `2·(E/e)·δ` forward
//! ([`expert_issue_s`], [`FITTED_EXPERT_GEMM_ISSUE_S`]: the dispatcher's wait on the GPU just
//! before them leaves the host no lead); backward, with no such wait, their `4·(E/e)·δ` of issues
//! join the block's host time ([`MoeMlpCost::bwd_issue_s`]). Under Megatron-Core on a GPU the
//! layer's other host calls (router, load-balancing loss, dispatcher, permutation) are counted
//! from the code and join the block's host time too ([`super::host_calls`],
//! [`MoeMlpCost::host_calls_s`]).

use super::dispatch::{Exchange, exchange};
use super::experts::ExpertLayout;
use super::host_calls;
use super::options::{A2aOverlap, FP8_DISPATCH_BYTES, MoeOptions};
pub use super::options::{FITTED_EXPERT_GEMM_ISSUE_S, FITTED_LAYER_OVERHEAD_S};
use super::sync;
use crate::extended::layout::Layout;
use crate::extended::ops::{FP8_CAST_BYTES, KeptBytes, OpKind, Operation, saved_input};
use crate::extended::pricing::{Pass, Pricing};
use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;
use crate::vocab::TimePart;

/// Tokens per local expert at which a GPU's grouped GEMM runs at half its large-`M` rate
/// [tokens]: [`super::grouped_gemm::GPU_HALF_TOKENS`] (128-row tiles, checked against DeepGEMM's
/// H800 table; a TPU's megablox tile is [`super::grouped_gemm::TPU_HALF_TOKENS`]).
pub use super::grouped_gemm::GPU_HALF_TOKENS as GROUPED_GEMM_HALF_TOKENS;

/// Share of a GPU's SMs the expert exchange's kernels hold while they run beside computation
/// [0–1]: DeepSeek-V3's 20 of the H800's 132 SMs (DeepSeek-V3 technical report, arXiv 2412.19437,
/// §3.2.2: "only 20 SMs are sufficient to fully utilize the bandwidths of IB and NVLink", for
/// dispatch and combine overlapped by DualPipe; DeepEP's normal kernels are sized the same way, a
/// fixed number of SMs per exchange). The computation that runs against an overlapped exchange
/// loses that share of its SMs for as long as both run. Recorded in `data/moe-physics.md`.
pub const COMM_SM_SHARE: f64 = 20.0 / 132.0;

/// The part of an exchange of `a2a_s` [s] on the critical path when `window_s` [s] of another
/// micro-batch's computation runs beside it: all of it without overlap; with overlap what the
/// window does not cover, plus the computation slowed by [`COMM_SM_SHARE`] while both run,
/// `(a2a − W)⁺ + share·min(a2a, W)`; the search's choice takes the smaller of the two.
pub fn exposed_exchange_s(overlap: A2aOverlap, a2a_s: f64, window_s: f64) -> f64 {
    let hidden = (a2a_s - window_s).max(0.0) + COMM_SM_SHARE * a2a_s.min(window_s.max(0.0));
    match overlap {
        A2aOverlap::Off => a2a_s,
        A2aOverlap::On => hidden,
        A2aOverlap::Search => hidden.min(a2a_s),
    }
}

/// The exposed part of one MoE layer's four exchanges [s] (forward, backward) when the forward
/// of one micro-batch runs beside the backward of another, each exchange paired with the one
/// computation the schedule runs beside it rather than with the layer's whole computation
/// (Megatron-Core's EP A2A overlap, `TransformerLayerSchedulePlan::run` in
/// `megatron/core/models/common/model_chunk_schedule_plan.py` at Megatron-LM d98e8a6, lines
/// 236–301: "comm_stream: combine_bwd | dispatch_fwd->dispatch_bwd | combine_fwd; comp_stream:
/// pre_dispatch_fwd | mlp_bwd->mlp_bwd_dw->mlp_fwd | pre_dispatch_bwd"; DeepSeek-V3's DualPipe
/// pairs the same four, report §3.2.1 Figure 4):
/// * the backward's combine beside the forward's attention (`attention_s.0`),
/// * the forward's dispatch beside the MLP's input-gradient backward (`moe_fwd_s`: its GEMMs
///   once; `mlp_fwd` needs the dispatched tokens, so nothing else of the MLP is ready),
/// * the backward's dispatch beside the MLP's weight-gradient backward and the forward MLP
///   (`2·moe_fwd_s`),
/// * the forward's combine beside the attention's backward (`attention_s.1`);
///
/// each priced by [`exposed_exchange_s`]. The forward's two exchanges are its part, the
/// backward's two the backward's; under [`A2aOverlap::Search`] each part takes the smaller of the
/// paired and the fully exposed time. `x` is one direction's exchange (dispatch, combine).
pub fn paired_exposed_s(overlap: A2aOverlap, x: &Exchange, attention_s: (f64, f64), moe_fwd_s: f64) -> (f64, f64) {
    let paired = |a2a: f64, window: f64| exposed_exchange_s(A2aOverlap::On, a2a, window);
    let fwd = paired(x.dispatch_s, moe_fwd_s) + paired(x.combine_s, attention_s.1);
    let bwd = paired(x.combine_s, attention_s.0) + paired(x.dispatch_s, 2.0 * moe_fwd_s);
    match overlap {
        A2aOverlap::Off => (x.total(), x.total()),
        A2aOverlap::On => (fwd, bwd),
        A2aOverlap::Search => (fwd.min(x.total()), bwd.min(x.total())),
    }
}

/// A GPU's grouped-GEMM efficiency at `m` tokens per local expert [0–1]
/// ([`super::grouped_gemm::efficiency`] at [`GROUPED_GEMM_HALF_TOKENS`]).
pub fn grouped_gemm_efficiency(m: f64) -> f64 {
    super::grouped_gemm::efficiency(m, GROUPED_GEMM_HALF_TOKENS)
}

/// Bytes of one router probability kept per token and expert (FP32) [B].
pub const ROUTER_PROB_BYTES: f64 = 4.0;

/// Bytes the token permutation keeps per routed token copy for its backward [B]: the index map
/// (an `int32` row id) and the copy's routing probability (FP32), 4 B each. A permutation is a
/// gather, whose backward scatters the gradient by index and needs no token: Transformer Engine's
/// fused permute (`moe_permute_fusion`, `_moe_permute_mask_map`) saves only its `row_id_map`, the
/// unfused `index_select` its indices; Megatron-Core's grouped experts (`TEGroupedMLP`) weight
/// the copies by their probabilities inside the activation (`weighted_bias_swiglu_impl`), so the
/// unpermute and the combine exchange keep nothing of width `h` either.
pub const PERMUTE_KEPT_BYTES_PER_COPY: f64 = 8.0;

/// Bytes the routed experts keep for their backward, for `rows` token copies of width `h` through
/// `gates` input matrices of width `f` (this rank's share of each expert) [B]: the first GEMM's
/// input (the dispatched copies: 1 B per element when Transformer Engine's FP8 layers save their
/// FP8 cast, else 16-bit; [`saved_input`]), its 16-bit output that the activation's backward
/// reads (`gates·f` per copy), and the activation's output as the second GEMM's input (FP8 under
/// Transformer Engine). The same rule as the dense MLP's operations
/// ([`crate::extended::sublayer::mlp_operations`]) with the experts' tokens. With the SwiGLU input
/// cached in FP8 ([`MoeOptions::fp8_swiglu_cache`]) the first GEMM's output is kept at
/// [`FP8_DISPATCH_BYTES`] per element and the activation's output not at all.
pub fn routed_expert_kept_bytes(p: &Pricing, rows: f64, h: f64, f: f64, gates: f64) -> f64 {
    saved_input(p, rows * p.hw.element_bytes * h).none + swiglu_kept_bytes(p, rows, f, gates)
}

/// Bytes an expert MLP of `rows` token copies keeps of its activation (the SwiGLU, or a plain
/// activation when `gates` is 1) over width `f` [B]: its input (`gates·f` per copy, 16-bit) and its
/// output as the second GEMM's input ([`saved_input`]); with [`MoeOptions::fp8_swiglu_cache`] the
/// input in FP8 at [`FP8_DISPATCH_BYTES`] per element and no output (recomputed).
pub fn swiglu_kept_bytes(p: &Pricing, rows: f64, f: f64, gates: f64) -> f64 {
    let es = p.hw.element_bytes;
    if p.opts.moe.fp8_swiglu_cache {
        gates * f * rows * FP8_DISPATCH_BYTES
    } else {
        gates * f * rows * es + saved_input(p, rows * f * es).none
    }
}

/// Where an MoE layer's time goes, per micro-batch, forward plus backward (recomputation not
/// included) [s]. What the explorer's MoE breakdown shows.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct MoeTimes {
    /// Router GEMM (and its backward).
    pub router_s: f64,
    /// Routed-expert grouped GEMMs at the grouped-GEMM efficiency.
    pub experts_s: f64,
    /// Shared-expert GEMMs.
    pub shared_s: f64,
    /// Memory-bound work: token permutation, expert activations, router softmax/top-k.
    pub elementwise_s: f64,
    /// Dispatch and combine, forward and backward, as priced.
    pub a2a_s: f64,
    /// The part of `a2a_s` on the critical path (all of it without overlap).
    pub a2a_exposed_s: f64,
    /// Fixed per-layer time (launches, routing synchronisation).
    pub overhead_s: f64,
}

/// One row of [`MoeTimes`] as the CLI's estimate and the page's Layers view show it: the
/// all-to-all split into its exposed and hidden shares (they add up to what was priced), each with
/// the step part it is counted in. Every caller lists the rows from [`MoeTimePart::ALL`], never by
/// hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MoeTimePart {
    /// The router GEMM ([`MoeTimes::router_s`]).
    Router,
    /// The routed experts' grouped GEMMs ([`MoeTimes::experts_s`]).
    Experts,
    /// The shared experts' GEMMs ([`MoeTimes::shared_s`]).
    Shared,
    /// Token permutation and expert activations ([`MoeTimes::elementwise_s`]).
    Elementwise,
    /// Dispatch and combine on the critical path ([`MoeTimes::a2a_exposed_s`]).
    A2aExposed,
    /// Dispatch and combine hidden behind compute (`a2a_s − a2a_exposed_s`, at least 0).
    A2aHidden,
    /// The fixed per-layer time ([`MoeTimes::overhead_s`]).
    Overhead,
}

impl MoeTimePart {
    /// Every row, in the order shown.
    pub const ALL: [MoeTimePart; 7] = [
        MoeTimePart::Router,
        MoeTimePart::Experts,
        MoeTimePart::Shared,
        MoeTimePart::Elementwise,
        MoeTimePart::A2aExposed,
        MoeTimePart::A2aHidden,
        MoeTimePart::Overhead,
    ];

    /// A short name, for a text table's row.
    pub fn key(self) -> &'static str {
        match self {
            MoeTimePart::Router => "router",
            MoeTimePart::Experts => "experts",
            MoeTimePart::Shared => "shared experts",
            MoeTimePart::Elementwise => "element-wise",
            MoeTimePart::A2aExposed => "all-to-all exposed",
            MoeTimePart::A2aHidden => "all-to-all hidden",
            MoeTimePart::Overhead => "layer overhead",
        }
    }

    /// The row's name in words, for the page.
    pub fn label(self) -> &'static str {
        match self {
            MoeTimePart::Router => "router",
            MoeTimePart::Experts => "routed experts (grouped GEMMs)",
            MoeTimePart::Shared => "shared experts",
            MoeTimePart::Elementwise => "token permutation and activations",
            MoeTimePart::A2aExposed => "all-to-all dispatch and combine, exposed",
            MoeTimePart::A2aHidden => "all-to-all hidden behind compute",
            MoeTimePart::Overhead => "MoE layer overhead (launches, routing sync)",
        }
    }

    /// The step part the row's time is counted in; `None` for the hidden all-to-all, which is
    /// in no part of the step.
    pub fn step_part(self) -> Option<TimePart> {
        match self {
            MoeTimePart::Router | MoeTimePart::Experts | MoeTimePart::Shared => Some(TimePart::Compute),
            MoeTimePart::Elementwise | MoeTimePart::Overhead => Some(TimePart::ExposedMemory),
            MoeTimePart::A2aExposed => Some(TimePart::EpComm),
            MoeTimePart::A2aHidden => None,
        }
    }

    /// The row's time in `t` [s].
    pub fn of(self, t: &MoeTimes) -> f64 {
        match self {
            MoeTimePart::Router => t.router_s,
            MoeTimePart::Experts => t.experts_s,
            MoeTimePart::Shared => t.shared_s,
            MoeTimePart::Elementwise => t.elementwise_s,
            MoeTimePart::A2aExposed => t.a2a_exposed_s,
            MoeTimePart::A2aHidden => (t.a2a_s - t.a2a_exposed_s).max(0.0),
            MoeTimePart::Overhead => t.overhead_s,
        }
    }
}

/// Name of the router's operation (the last of the MoE MLP before the dispatcher's sync,
/// [`super::sync`]).
pub const ROUTER_OP: &str = "moe_router";

/// Name of the shared experts' operation (their two GEMMs), right after the router's in the list.
/// Megatron-Core runs it before the router unless it overlaps it with the dispatch
/// ([`super::block`]'s phases, [`MoeOptions::shared_overlap`]).
pub const SHARED_OP: &str = "moe_shared_experts";

/// Name of the routed experts' grouped-GEMM operation (its parameters are sharded over the expert
/// data-parallel group, not the dense one).
pub const EXPERTS_OP: &str = "moe_experts";

/// The cost of one MoE MLP on one device for one micro-batch (the sums of its operations, with
/// what only MoE reports).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MoeMlpCost {
    /// Forward pass (exposed dispatch/combine in `ep_comm_s`).
    pub fwd: Pass,
    /// Backward pass.
    pub bwd: Pass,
    /// One forward exchange (dispatch + combine) as priced, before any overlap [s].
    pub exchange: Exchange,
    /// Time parts.
    pub times: MoeTimes,
    /// Router and shared-expert parameters on this device (TP-split shared experts) [count].
    pub dense_parameters: f64,
    /// Routed-expert parameters on this device `(E/e)·m·h·f_e/t_e` [count].
    pub expert_parameters: f64,
    /// Activations this layer keeps for the backward pass [B].
    pub activation_bytes: f64,
    /// Tokens per local expert `M` on the busiest rank.
    pub tokens_per_expert: f64,
    /// Host time to issue the routed experts' GEMMs in the backward pass, `4·(E/e)·δ` [s] (twice
    /// [`expert_issue_s`]: data and weight gradients). No dispatcher synchronisation stops the
    /// host in the backward (the token counts are the forward's), so these issues are not a floor
    /// of the experts alone: they add to the block's backward host time, which bounds the
    /// block's backward as a whole (`super::block`, [`crate::extended::block::issue_bound`]).
    pub bwd_issue_s: f64,
    /// Fraction of token-expert assignments dropped (capacity factor) [0–1].
    pub dropped_fraction: f64,
    /// Host time of the layer's PyTorch calls besides the experts' GEMMs `[forward, backward]`
    /// [s] when they are counted (Megatron-Core on a host-launched GPU,
    /// [`super::host_calls::layer_calls`] at [`super::host_calls::call_host_s`]), added to the
    /// block's host time; `None`: not counted (other stacks, compiled stacks).
    pub host_calls_s: Option<[f64; 2]>,
    /// The forward's part of [`Self::host_calls_s`] split at the dispatcher's device→host sync
    /// `[before, after]` [s] ([`super::host_calls::forward_calls_at_sync`]) when the layer's
    /// calls are counted and its forward runs as stretches between syncs
    /// ([`super::sync::forward_stretches`]); `None` otherwise (the block's forward host time then
    /// runs ahead as a whole).
    pub sync_calls_s: Option<[f64; 2]>,
}

/// Host time to issue the routed experts' forward GEMMs one local expert at a time,
/// `2·(E/e)·δ` [s] (`δ` = [`MoeOptions::expert_gemm_issue_s`]; 0 with one grouped kernel).
///
/// In the forward pass the experts take at least this long on their own: every dispatcher
/// Megatron-Core has waits on the GPU for the tokens-per-expert counts just before the experts
/// (NVIDIA/Megatron-LM d98e8a6, `megatron/core/transformer/moe/token_dispatcher.py`: the
/// all-gather dispatcher's `self.local_map.sum(dim=0).long().cpu()` and `.item()` in
/// `dispatch_postprocess`, l. 320/326; the all-to-all dispatcher's
/// `_maybe_dtoh_and_synchronize` at its `cuda_sync_point`, l. 454–621 and 921–960; the flex
/// dispatcher's HybridEP and DeepEP managers' `.item()`, l. 1082 and 1450), so the host has no lead on the GPU when it starts
/// issuing them and nothing queued earlier hides their issue.
pub fn expert_issue_s(m: &MoeShape, el: &ExpertLayout, mo: &MoeOptions) -> f64 {
    if mo.one_grouped_kernel { 0.0 } else { 2.0 * m.local_experts(el.ep) * mo.expert_gemm_issue_s.max(0.0) }
}

/// Prices one MoE MLP (see the module documentation) as operations (router, shared experts,
/// permutation, dispatch/combine, routed experts, fixed layer time; without the sub-layer's norm,
/// tensor-parallel collectives and residual) and their cost. `overlap_s` is the compute of the
/// rest of the block in (forward, backward) that an overlapped exchange can hide behind.
pub fn moe_mlp_operations(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    el: &ExpertLayout,
    p: &Pricing,
    mo: &MoeOptions,
    overlap_s: (f64, f64),
) -> (Vec<Operation>, MoeMlpCost) {
    let tp = layout.tp as f64;
    let full = layout.local_tokens(w);
    let t = full / tp;
    let h = w.hidden as f64;
    let (e, k) = (m.experts as f64, m.top_k as f64);
    let gates = if m.gated { 2.0 } else { 1.0 };
    let gamma = mo.load.compute_factor();
    let es = p.hw.element_bytes;

    let router = p.linear(t, h, e);
    // Routed experts: the ETP group's tokens (t_e × this rank's) through 1/t_e of each expert.
    let rows = gamma * t * k * el.etp as f64;
    let fe_local = m.expert_ffn as f64 / el.etp as f64;
    let raw = p.weight_linear(rows, h, gates * fe_local) + p.weight_linear(rows, fe_local, h);
    let tokens_per_expert = gamma * t * k * (el.ep * el.etp) as f64 / e;
    let eff = super::grouped_gemm::efficiency(tokens_per_expert, super::grouped_gemm::half_tokens(p.hw));
    // The host issues each local expert's GEMMs one by one. Forward, the dispatcher has just
    // waited on the GPU for the tokens-per-expert counts ([`expert_issue_s`]): the experts take
    // at least their issue time. Backward, the issues join the block's ([`MoeMlpCost::bwd_issue_s`]).
    let issue_s = expert_issue_s(m, el, mo);
    let gpu_s = raw.compute_s / eff;
    let experts = Pass { compute_s: gpu_s.max(issue_s), ..raw };
    // The weight gradients accumulate into each local expert's main gradient: its read and write
    // add to the backward ([`super::grouped_gemm::main_grad_bytes`]).
    let expert_params = m.routed_parameters(w.hidden) / (el.ep * el.etp) as f64;
    let main_grad_s = p.traffic(super::grouped_gemm::main_grad_bytes(p, expert_params));
    let experts_bwd = Pass { compute_s: gpu_s, ..raw }.times(2.0);
    let experts_bwd = Pass { memory_s: experts_bwd.memory_s + main_grad_s, ..experts_bwd };
    let fs = (m.shared_experts * m.shared_ffn) as f64;
    let shared = if fs > 0.0 {
        p.weight_linear(full, h, gates * fs / tp) + p.weight_linear(full, fs / tp, h)
    } else {
        Pass::default()
    };
    // Element-wise: permute and unpermute (read + write each copy), the experts' activation,
    // the router's scores (softmax/sigmoid and top-k over E per token).
    let copies = gamma * t * k;
    let ew_bytes = 2.0 * 2.0 * copies * h * es + (gates + 1.0) * fe_local * rows * es + 2.0 * t * e * ROUTER_PROB_BYTES;
    let ew = p.elementwise(ew_bytes);

    let x = exchange(p, el, mo, t, w.hidden, m.top_k, gamma);
    let compute_fwd = router.compute_s + experts.compute_s + shared.compute_s;
    let a2a_fwd = x.total();
    let a2a_bwd = x.total();
    let (exp_fwd, exp_bwd) = paired_exposed_s(mo.a2a_overlap, &x, overlap_s, compute_fwd);

    let fixed = mo.layer_overhead_s.max(0.0);
    let mut times = MoeTimes {
        router_s: 3.0 * router.time(),
        experts_s: experts.time() + experts_bwd.time(),
        shared_s: 3.0 * shared.time(),
        elementwise_s: 3.0 * ew.time(),
        a2a_s: a2a_fwd + a2a_bwd,
        a2a_exposed_s: exp_fwd + exp_bwd,
        overhead_s: fixed,
    };

    // Each operation keeps what its backward reads ([`routed_expert_kept_bytes`] for the routed
    // experts): router probabilities, the shared experts' pre-activations and activation output
    // (FP8 under Transformer Engine), the permutation's index map and permuted probabilities.
    let kept = |bytes: f64| KeptBytes::recomputable(bytes);
    let linear = |name, pass: Pass, bytes: f64| Operation::new(name, OpKind::Matmul, pass, pass.times(2.0), bytes);
    let router_params = m.router_parameters(w.hidden);
    let shared_params = m.shared_parameters(w.hidden) / tp;
    // Room for every operation below, so the list is not grown while it is built.
    let mut ops = Vec::with_capacity(10);
    ops.push(
        linear(ROUTER_OP, router, (t * h + h * e) * p.hw.operand_bytes + t * e * es)
            .owning(router_params)
            .keeping(kept(t * e * ROUTER_PROB_BYTES)),
    );
    if fs > 0.0 {
        let bytes = (full * h + h * fs / tp) * p.hw.operand_bytes * (gates + 1.0);
        ops.push(linear(SHARED_OP, shared, bytes).owning(shared_params).keeping(kept(swiglu_kept_bytes(
            p,
            full,
            fs / tp,
            gates,
        ))));
    }
    // The SwiGLU input cached in FP8: the forward writes the cast (read 16-bit, write 1 B per
    // element of the routed and shared experts' first GEMM outputs), the backward reruns the
    // activation from it (its forward traffic again, routed and shared).
    let (cast, rerun) = if mo.fp8_swiglu_cache {
        let width = fe_local * rows + fs / tp * full;
        (p.elementwise(gates * width * (es + FP8_CAST_BYTES)), p.elementwise((gates + 1.0) * width * es))
    } else {
        (Pass::default(), Pass::default())
    };
    ops.push(
        Operation::new("moe_permute", OpKind::Elementwise, ew + cast, ew.times(2.0) + rerun, ew_bytes)
            .keeping(kept(PERMUTE_KEPT_BYTES_PER_COPY * copies)),
    );
    // The all-to-all has no reference collective kind: its time is the exposed exchange, its
    // bytes what this rank sends per direction (dispatch + combine).
    ops.push(Operation::new(
        "moe_dispatch_combine",
        OpKind::Collective,
        Pass { ep_comm_s: exp_fwd, ..Pass::default() },
        Pass { ep_comm_s: exp_bwd, ..Pass::default() },
        2.0 * copies * h * p.hw.element_bytes,
    ));
    let expert_bytes = (rows * h + h * gates * fe_local + rows * fe_local) * p.hw.operand_bytes * 2.0;
    ops.push(
        Operation::new(EXPERTS_OP, OpKind::Matmul, experts, experts_bwd, expert_bytes)
            .owning(expert_params)
            .keeping(kept(routed_expert_kept_bytes(p, rows, h, fe_local, gates))),
    );
    // GPT-OSS's clamp and output bias after the experts' GEMMs ([`super::expert_extras`]).
    let extras = super::expert_extras::operations(p, m, mo, rows, fe_local, h);
    times.elementwise_s += extras.iter().map(|o| o.fwd.time() + o.bwd.time()).sum::<f64>();
    ops.extend(extras);
    ops.push(Operation::new(
        "moe_layer_overhead",
        OpKind::Elementwise,
        Pass { memory_s: fixed / 3.0, ..Pass::default() },
        Pass { memory_s: 2.0 * fixed / 3.0, ..Pass::default() },
        0.0,
    ));

    recompute_modules(&mut ops, mo, t * h * es, (gates + 1.0) * fe_local * rows * es / ew_bytes.max(1.0), || {
        saved_input(p, rows * fe_local * es).none
    });
    // The routed experts' saved tensors offloaded to the host leave the device (memory only).
    if let Some(op) = ops.iter_mut().find(|o| o.name == EXPERTS_OP && mo.offload != Default::default()) {
        let act_bytes = if mo.fp8_swiglu_cache { FP8_DISPATCH_BYTES } else { es };
        let saved = super::expert_offload::saved_tensors(p, rows, h, gates * fe_local, act_bytes);
        super::expert_offload::take_off(op, &mo.offload, saved, !mo.recompute_modules.moe);
    }

    let (mut fwd, mut bwd) = (Pass::default(), Pass::default());
    for o in &ops {
        fwd += o.fwd;
        bwd += o.bwd;
    }
    let call_s = host_calls::call_host_s(p);
    let shape = host_calls::LayerShape {
        router: m.router,
        dispatcher: mo.dispatcher,
        tp: layout.tp,
        tp_cp: layout.tp * layout.cp,
        tp_ep: el.ep * el.etp,
        local_experts: m.local_experts(el.ep),
    };
    let cost = MoeMlpCost {
        fwd,
        bwd,
        exchange: x,
        times,
        dense_parameters: router_params + shared_params,
        expert_parameters: expert_params,
        activation_bytes: ops.iter().map(|o| o.kept.none).sum(),
        tokens_per_expert,
        dropped_fraction: mo.load.dropped_fraction(),
        bwd_issue_s: 2.0 * issue_s,
        host_calls_s: call_s.map(|call_s| host_calls::layer_calls(&mo.host, &shape).map(|calls| calls * call_s)),
        sync_calls_s: call_s
            .filter(|_| sync::forward_stretches(mo))
            .map(|call_s| host_calls::forward_calls_at_sync(&mo.host, &shape).map(|calls| calls * call_s)),
    };
    (ops, cost)
}

/// Megatron-Core's MoE recompute modules under selective recomputation
/// ([`super::options::RecomputeModules`]) applied to the MoE MLP's operations:
/// * `moe` (`MoELayer` under `tensor_parallel.checkpoint`): every operation reruns its forward,
///   the dispatch and combine exchanges and the fixed layer time included, and keeps nothing but
///   the layer's input (`input_bytes`, 16-bit, kept with the router);
/// * `moe_act`: the routed experts' activation (`activation_share` of the element-wise work)
///   reruns, and the experts keep their activation output (`act_bytes`, the second GEMM's saved
///   input) no longer.
fn recompute_modules(
    ops: &mut [Operation],
    mo: &MoeOptions,
    input_bytes: f64,
    activation_share: f64,
    act_bytes: impl Fn() -> f64,
) {
    let m = mo.recompute_modules;
    for op in ops.iter_mut() {
        *op = match op.name {
            _ if m.moe => {
                let kept = if op.name == ROUTER_OP { input_bytes } else { 0.0 };
                op.selective_policy(kept, 1.0)
            }
            // The FP8 SwiGLU cache keeps no activation output and reruns the activation already.
            EXPERTS_OP if m.moe_act && !mo.fp8_swiglu_cache => {
                op.selective_policy(op.kept.selective - act_bytes(), 0.0)
            }
            "moe_permute" if m.moe_act && !mo.fp8_swiglu_cache => {
                op.selective_policy(op.kept.selective, activation_share)
            }
            _ => *op,
        };
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::moe::options::Load;
    use crate::extended::options::ExtendedOptions;
    use crate::moe_shape::Router;

    #[test]
    fn the_moe_time_rows_split_the_all_to_all_and_add_up_to_what_was_priced() {
        let t = MoeTimes {
            router_s: 1.0,
            experts_s: 2.0,
            shared_s: 4.0,
            elementwise_s: 8.0,
            a2a_s: 16.0,
            a2a_exposed_s: 10.0,
            overhead_s: 32.0,
        };
        let rows: Vec<f64> = MoeTimePart::ALL.iter().map(|p| p.of(&t)).collect();
        assert_eq!(rows, [1.0, 2.0, 4.0, 8.0, 10.0, 6.0, 32.0]);
        // 1 + 2 + 4 + 8 + 16 + 32: every priced second once.
        assert_eq!(rows.iter().sum::<f64>(), 63.0);
        let in_step: f64 = MoeTimePart::ALL.iter().filter(|p| p.step_part().is_some()).map(|p| p.of(&t)).sum();
        assert_eq!(in_step, 57.0);
        assert_eq!(MoeTimePart::A2aExposed.step_part(), Some(TimePart::EpComm));
        assert_eq!(MoeTimePart::A2aHidden.of(&MoeTimes { a2a_s: 1.0, a2a_exposed_s: 2.0, ..t }), 0.0);
    }

    /// Mixtral 8x7B's experts with a 4,096-token sequence (also the hand tests of `grouped_gemm`).
    pub(crate) fn mixtral() -> (Workload, MoeShape) {
        let m = MoeShape {
            experts: 8,
            expert_ffn: 14336,
            top_k: 2,
            shared_experts: 0,
            shared_ffn: 0,
            gated: true,
            first_dense: 0,
            moe_every: 1,
            router: Router::Softmax,
            extras: crate::moe_shape::ExpertExtras::default(),
        };
        let w = Workload { seq_len: 4096, kv_heads: 8, ffn_hidden: 14336, moe: Some(m), ..Workload::LLAMA3_8B };
        (w, m)
    }

    /// Mixtral's MoE MLP on an H200 of 8-GPU domains: its operations and their cost (also
    /// `super::super::expert_offload`'s tests).
    pub(crate) fn mlp(layout: &Layout, ep: u64, mo: MoeOptions) -> (Vec<Operation>, MoeMlpCost) {
        let (w, m) = mixtral();
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        let el = ExpertLayout::fold(layout, &m, ep, 1).unwrap();
        moe_mlp_operations(&w, &m, layout, &el, &p, &mo, (0.0, 0.0))
    }

    fn price(layout: &Layout, ep: u64, mo: MoeOptions) -> MoeMlpCost {
        mlp(layout, ep, mo).1
    }

    #[test]
    fn flops_by_hand_with_top_k() {
        // One sequence of 4096 tokens, tp 1, ep 8 of dp 8, forced balance: router 2·T·h·E,
        // experts 2·T·k·3·h·f_e (top-k counted), backward twice.
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let c = price(&layout, 8, MoeOptions { load: Load::Forced, ..Default::default() });
        let (t, h, f) = (4096.0, 4096.0, 14336.0);
        let want = (2.0 * t * h * 8.0 + 2.0 * t * 2.0 * 3.0 * h * f) * 1e-12;
        assert!((c.fwd.tflop - want).abs() < 1e-9 * want, "{} vs {want}", c.fwd.tflop);
        assert!((c.bwd.tflop - 2.0 * want).abs() < 1e-9 * want);
        // M = T·k·e/E = 4096·2·8/8 = 8192 tokens per local expert.
        assert_eq!(c.tokens_per_expert, 8192.0);
        // Parameters: one expert per rank, 3·h·f_e; router h·E.
        assert_eq!(c.expert_parameters, 3.0 * h * f);
        assert_eq!(c.dense_parameters, h * 8.0);
    }

    #[test]
    fn kept_activations_by_hand() {
        // Mixtral on 8 ranks of ep 8, one sequence of 4096 tokens each, forced balance: T = 4096
        // tokens, k = 2 → 8192 copies of h = 4096 through experts of f = 14336 (gated).
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let (w, m) = mixtral();
        let (t, h, f, copies) = (4096.0, 4096.0, 14336.0, 8192.0);
        let mo = MoeOptions { load: Load::Forced, ..Default::default() };
        let kept = |hw: &Hardware| {
            let opts = ExtendedOptions::realistic();
            let p = Pricing { hw, opts: &opts };
            let el = ExpertLayout::fold(&layout, &m, 8, 1).unwrap();
            let (ops, c) = moe_mlp_operations(&w, &m, &layout, &el, &p, &mo, (0.0, 0.0));
            let of = |name: &str| ops.iter().find(|o| o.name == name).unwrap().kept.none;
            (of("moe_router"), of("moe_permute"), of("moe_dispatch_combine"), of(EXPERTS_OP), c.activation_bytes)
        };
        let bf16 = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let (router, permute, exchange, experts, total) = kept(&bf16);
        // Router: FP32 probabilities T·E·4 B; permute: index and probability, 8 B per copy; the
        // exchange nothing; experts: input 2 B·h, pre-activation 2 B·2f, activation 2 B·f per copy.
        assert_eq!(router, t * 8.0 * 4.0);
        assert_eq!(permute, copies * 8.0);
        assert_eq!(exchange, 0.0);
        assert_eq!(experts, copies * 2.0 * (h + 3.0 * f));
        assert_eq!(total, router + permute + experts);
        // Transformer Engine FP8: the two GEMM inputs are kept as their 1-byte casts.
        let fp8 = Hardware { operand_bytes: 1.0, ..bf16 };
        let (_, permute8, _, experts8, _) = kept(&fp8);
        assert_eq!(permute8, permute);
        assert_eq!(experts8, copies * (h + 2.0 * 2.0 * f + f));
    }

    #[test]
    fn recompute_modules_by_hand() {
        use crate::extended::moe::RecomputeModules;
        use crate::extended::options::Recompute;
        // Mixtral, ep 8, 4096 tokens, k = 2 (8192 copies), BF16, selective recomputation.
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let (t, h, f, copies) = (4096.0, 4096.0, 14336.0, 8192.0);
        let with = |modules| {
            let mo = MoeOptions { load: Load::Forced, recompute_modules: modules, ..Default::default() };
            mlp(&layout, 8, mo).0
        };
        let of = |ops: &[Operation], name: &str| *ops.iter().find(|o| o.name == name).unwrap();
        let none = RecomputeModules::default();
        let plain = with(none);
        // moe_act: the experts keep their input and pre-activation, not the activation output
        // (2 B·f per copy); the activation (its share of the element-wise work) runs again.
        let act = with(RecomputeModules { moe_act: true, ..none });
        assert_eq!(of(&act, EXPERTS_OP).kept.under(Recompute::Selective), copies * 2.0 * (h + 2.0 * f));
        assert_eq!(of(&act, EXPERTS_OP).kept.none, of(&plain, EXPERTS_OP).kept.none);
        let ew = 2.0 * 2.0 * copies * h * 2.0 + 3.0 * f * copies * 2.0 + 2.0 * t * 8.0 * 4.0;
        let share = of(&act, "moe_permute").recomputed(Recompute::Selective);
        assert!((share - 3.0 * f * copies * 2.0 / ew).abs() < 1e-12, "{share}");
        assert_eq!(of(&plain, "moe_permute").recomputed(Recompute::Selective), 0.0);
        // moe: everything runs again and only the layer's input (T·h, 16-bit) is kept.
        let all = with(RecomputeModules { moe: true, ..none });
        let kept: f64 = all.iter().map(|o| o.kept.under(Recompute::Selective)).sum();
        assert_eq!(kept, t * h * 2.0);
        assert!(all.iter().all(|o| o.recomputed(Recompute::Selective) == 1.0));
        // Without selective recomputation the modules change nothing of what is kept.
        assert!(all.iter().zip(&plain).all(|(a, b)| a.kept.none == b.kept.none));
    }

    #[test]
    fn imbalance_scales_expert_work_and_exchange() {
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let forced = price(&layout, 8, MoeOptions { load: Load::Forced, ..Default::default() });
        let skew = price(&layout, 8, MoeOptions { load: Load::Dropless { imbalance: 1.5 }, ..Default::default() });
        let (t, h, f) = (4096.0, 4096.0, 14336.0);
        let expert_fwd = 2.0 * t * 2.0 * 3.0 * h * f * 1e-12;
        assert!(((skew.fwd.tflop - forced.fwd.tflop) - 0.5 * expert_fwd).abs() < 1e-9 * expert_fwd);
        assert!((skew.exchange.dispatch_s - forced.exchange.dispatch_s) > 0.0);
        assert!(skew.activation_bytes > forced.activation_bytes);
        // Capacity 1.25 pads to 1.25× and drops (1.5−1.25)²/(4·0.5) of the assignments.
        let cap = price(
            &layout,
            8,
            MoeOptions { load: Load::Capacity { factor: 1.25, imbalance: 1.5 }, ..Default::default() },
        );
        assert!(((cap.fwd.tflop - forced.fwd.tflop) - 0.25 * expert_fwd).abs() < 1e-9 * expert_fwd);
        assert!((cap.dropped_fraction - 0.03125).abs() < 1e-12);
    }

    /// The routed experts' operation of one MoE MLP.
    fn experts_op(layout: &Layout, ep: u64, mo: MoeOptions) -> Operation {
        mlp(layout, ep, mo).0.into_iter().find(|o| o.name == EXPERTS_OP).unwrap()
    }

    #[test]
    fn expert_gemms_take_at_least_their_issue_time() {
        // Mixtral (8 experts) on 8 ranks, one sequence of 4096 tokens each, forced balance.
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let free = MoeOptions { load: Load::Forced, expert_gemm_issue_s: 0.0, ..Default::default() };
        let slow = MoeOptions { expert_gemm_issue_s: 1e-3, ..free };
        // ep 1: 8 local experts, two GEMMs each forward, 1 ms per issue: the host needs
        // 2·8·1 ms = 16 ms forward and 32 ms backward, more than the device's
        // 3·2·T·k·h·f_e = 3·2·4096·2·4096·14336 = 2.89 TFLOP (under 5 ms on an H200).
        let (gpu, host) = (experts_op(&layout, 1, free), experts_op(&layout, 1, slow));
        assert!(gpu.fwd.compute_s < 5e-3, "{}", gpu.fwd.compute_s);
        assert!((host.fwd.compute_s - 16e-3).abs() < 1e-12, "{}", host.fwd.compute_s);
        assert_eq!(host.fwd.tflop, gpu.fwd.tflop);
        // Backward the experts keep their GPU time (twice the forward's); the 32 ms of issues
        // are handed to the block's backward host time instead.
        assert_eq!(host.bwd, gpu.bwd);
        assert_eq!(host.bwd.compute_s, 2.0 * gpu.fwd.compute_s);
        assert!((mlp(&layout, 1, slow).1.bwd_issue_s - 32e-3).abs() < 1e-12);
        assert_eq!(mlp(&layout, 1, free).1.bwd_issue_s, 0.0);
        // ep 8: one local expert, 2 ms of issues forward, less than its 8192 tokens' GEMMs: no change.
        let (gpu, host) = (experts_op(&layout, 8, free), experts_op(&layout, 8, slow));
        assert!(gpu.fwd.compute_s > 2e-3);
        assert_eq!(host.fwd, gpu.fwd);
        // One grouped kernel for all local experts: no per-expert issue.
        let one = experts_op(&layout, 1, MoeOptions { one_grouped_kernel: true, ..slow });
        assert_eq!(one.fwd, experts_op(&layout, 1, free).fwd);
        assert_eq!(mlp(&layout, 1, MoeOptions { one_grouped_kernel: true, ..slow }).1.bwd_issue_s, 0.0);
    }

    #[test]
    fn grouped_gemm_efficiency_falls_at_few_tokens_and_overlap_hides_the_exchange() {
        assert_eq!(grouped_gemm_efficiency(128.0), 0.5);
        assert!((grouped_gemm_efficiency(1152.0) - 0.9).abs() < 1e-12);
        // ep 1 on 8 ranks (no exchange) vs ep 8: same FLOPs, ep 1 has 8× fewer tokens per expert? No:
        // ep 1 holds all 8 experts, M = T·k/E = 1024; ep 8: M = 8192 → ep 8 runs its GEMMs faster.
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let off = MoeOptions { load: Load::Forced, a2a_overlap: A2aOverlap::Off, ..Default::default() };
        let ep1 = price(&layout, 1, off);
        let ep8 = price(&layout, 8, off);
        assert_eq!(ep1.tokens_per_expert, 1024.0);
        assert!((ep1.fwd.tflop - ep8.fwd.tflop).abs() < 1e-12);
        assert!(ep1.times.experts_s > ep8.times.experts_s);
        assert_eq!(ep1.times.a2a_s, 0.0);
        assert!(ep8.times.a2a_s > 0.0 && ep8.times.a2a_exposed_s == ep8.times.a2a_s);
        let over = price(&layout, 8, MoeOptions { a2a_overlap: A2aOverlap::On, ..off });
        assert!(over.times.a2a_exposed_s < ep8.times.a2a_exposed_s);
        assert_eq!(over.times.a2a_s, ep8.times.a2a_s);
        // The search's choice is the cheaper of the two.
        let chosen = price(&layout, 8, MoeOptions { a2a_overlap: A2aOverlap::Search, ..off });
        assert_eq!(chosen.times.a2a_exposed_s, over.times.a2a_exposed_s.min(ep8.times.a2a_exposed_s));
    }

    #[test]
    fn overlap_hides_the_exchange_at_the_cost_of_the_sms_it_takes() {
        // By hand: 20 of 132 SMs. An exchange of 10 ms beside 30 ms of computation: nothing of it
        // is exposed, the computation loses 20/132 of 10 ms = 1.515 ms.
        let share = 20.0 / 132.0;
        assert_eq!(exposed_exchange_s(A2aOverlap::Off, 0.010, 0.030), 0.010);
        assert!((exposed_exchange_s(A2aOverlap::On, 0.010, 0.030) - share * 0.010).abs() < 1e-15);
        // 10 ms beside 4 ms: 6 ms exposed, plus 4 ms at the lost share.
        assert!((exposed_exchange_s(A2aOverlap::On, 0.010, 0.004) - (0.006 + share * 0.004)).abs() < 1e-15);
        // Nothing to overlap with: the search keeps it off (never worse than off).
        assert_eq!(exposed_exchange_s(A2aOverlap::Search, 0.010, 0.0), 0.010);
        assert!(exposed_exchange_s(A2aOverlap::Search, 0.010, 0.030) < 0.002);
    }

    #[test]
    fn each_exchange_hides_only_behind_the_computation_the_schedule_pairs_it_with() {
        // By hand: dispatch 3 ms, combine 2 ms per direction; attention 1 ms forward, 2 ms
        // backward; the MoE MLP's GEMMs 4 ms forward. Pairs (Megatron-Core's 1F1B plan):
        // combine_bwd 2 ‖ attention fwd 1 → 1 + s·1; dispatch_fwd 3 ‖ MLP dgrad 4 → s·3;
        // dispatch_bwd 3 ‖ MLP wgrad + forward 8 → s·3; combine_fwd 2 ‖ attention bwd 2 → s·2.
        // Forward 5s (= 0.758 ms), backward 1 + 4s (= 1.606 ms). The whole layer's window
        // (1 + 4 = 5 ms for 5 ms forward) would have hidden all but 5s of each.
        let s = COMM_SM_SHARE;
        let x = Exchange { dispatch_s: 0.003, combine_s: 0.002 };
        let (f, b) = paired_exposed_s(A2aOverlap::On, &x, (0.001, 0.002), 0.004);
        assert!((f - 5.0 * s * 1e-3).abs() < 1e-15, "{f}");
        assert!((b - (1e-3 + 4.0 * s * 1e-3)).abs() < 1e-15, "{b}");
        assert_eq!(paired_exposed_s(A2aOverlap::Off, &x, (0.001, 0.002), 0.004), (0.005, 0.005));
        // Nothing beside it: the search keeps the exchange exposed, never more.
        assert_eq!(paired_exposed_s(A2aOverlap::Search, &x, (0.0, 0.0), 0.0), (0.005, 0.005));
    }
}
