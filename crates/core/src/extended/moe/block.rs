//! One MoE block on one device for one micro-batch as operations: the block's attention sub-layer
//! (plain or latent, as for a dense block) and the MoE MLP of [`super::layer`] inside the MLP
//! sub-layer's norm, tensor-parallel collectives and residual ([`crate::extended::ops`]), plus the
//! FP8 input casts of the attention matmuls. [`MoeBlockCost`] is the sum of that list.

use super::experts::ExpertLayout;
use super::layer::{EXPERTS_OP, MoeMlpCost, ROUTER_OP, SHARED_OP, moe_mlp_operations};
use super::mla_host;
use super::sync::{self, Phase};
use crate::extended::attention::attention_operations;
use crate::extended::block::{BlockCost, issue_bound};
use crate::extended::fsdp_host;
use crate::extended::layer_python::{LayerModules, forward_python_s, layer_python_s};
use crate::extended::layout::Layout;
use crate::extended::ops::{OpKind, Operation, fp8_casts, norms_recomputed};
use crate::extended::options::Recompute;
use crate::extended::pricing::Pricing;
use crate::extended::sublayer::{Sublayer, sublayer};
use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;

/// An MoE block's cost: the sums of its operations.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MoeBlockCost {
    /// Everything but the routed experts' parameters (those are in `mlp.expert_parameters`,
    /// sharded over the expert data-parallel group).
    pub block: BlockCost,
    /// The MoE MLP with its time parts.
    pub mlp: MoeMlpCost,
    /// What one micro-batch's forward and backward of the block last longer when no other
    /// micro-batch's computation runs beside their exchanges [s]: the block with the exposure
    /// that the expert all-to-all overlap pairs away ([`super::layer::paired_exposed_s`]) put
    /// back, under the same host rule, less the block as priced ([`unpaired_s`]); 0 without the
    /// overlap. Megatron-Core runs some passes alone (`super::evaluate::unpaired_share`).
    pub unpaired_s: f64,
}

/// [`MoeBlockCost::unpaired_s`] of a block whose operations sum to `c` and cost `block` once
/// `bound` (the block's host rule) is applied: each pass's exchange exposed in full
/// (`mlp.exchange.total()` in place of the paired exposure its MLP priced), bounded by the same
/// rule, less `block` [s]. A host-bound block shows only what the exchange adds beyond its host
/// time.
fn unpaired_s(c: BlockCost, block: &BlockCost, mlp: &MoeMlpCost, bound: impl Fn(BlockCost) -> BlockCost) -> f64 {
    let full = mlp.exchange.total();
    let hidden = ((full - mlp.fwd.ep_comm_s).max(0.0), (full - mlp.bwd.ep_comm_s).max(0.0));
    if hidden.0 + hidden.1 <= 0.0 {
        return 0.0;
    }
    let mut alone = c;
    alone.fwd.ep_comm_s += hidden.0;
    alone.bwd.ep_comm_s += hidden.1;
    let alone = bound(alone);
    (alone.fwd.time() + alone.bwd.time() - block.fwd.time() - block.bwd.time()).max(0.0)
}

/// The operations of one MoE block of `w` (experts `m`) under `layout` and its expert layout
/// `el`, with the MoE MLP's cost.
pub fn moe_block_operations(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    el: &ExpertLayout,
    p: &Pricing,
) -> (Vec<Operation>, MoeMlpCost) {
    operations_after(w, m, layout, el, p, attention_operations(w, layout, p))
}

/// [`moe_block_operations`] after the block's attention operations `ops` (which read neither the
/// expert layout nor the data-parallel placement: what lets a search price them once per block
/// shape).
fn operations_after(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    el: &ExpertLayout,
    p: &Pricing,
    mut ops: Vec<Operation>,
) -> (Vec<Operation>, MoeMlpCost) {
    let compute = |f: fn(&Operation) -> f64| ops.iter().map(f).sum::<f64>();
    let overlap = (compute(|o| o.fwd.compute_s), compute(|o| o.bwd.compute_s));
    let (inner, mlp) = moe_mlp_operations(w, m, layout, el, p, &p.opts.moe, overlap);
    // The sub-layer's tensor-parallel collectives run against the routed experts' grouped GEMM.
    let experts = inner.iter().find(|o| o.name == EXPERTS_OP).map(|o| o.fwd).unwrap_or_default();
    ops.extend(sublayer(w, layout, p, Sublayer::Mlp, inner, &experts, &experts));
    // FP8 input casts of the attention matmuls (the experts' inputs are cast in the dispatch).
    let linear: f64 = ops.iter().filter(|o| o.kind == OpKind::Matmul).map(|o| o.parameters).sum();
    ops.extend(fp8_casts(&Workload { ffn_hidden: 0, ..*w }, layout, p, linear));
    if p.opts.moe.recompute_modules.layernorm {
        norms_recomputed(&mut ops);
    }
    (ops, mlp)
}

/// Prices one MoE block of `w` (experts `m`) under `layout` and its expert layout `el`: the sums
/// of [`moe_block_operations`], the routed experts' parameters counted apart.
pub fn moe_block_cost(w: &Workload, m: &MoeShape, layout: &Layout, el: &ExpertLayout, p: &Pricing) -> MoeBlockCost {
    let attention = attention_operations(w, layout, p);
    let attention_kernels = BlockCost::sums(&attention, p.opts.recompute).1;
    let n = attention.len();
    let (ops, mlp) = operations_after(w, m, layout, el, p, attention);
    let (c, kernels) = BlockCost::sums(&ops, p.opts.recompute);
    let host = HostCount::of(p, w, layout, m, el, &mlp, attention_kernels);
    let attention_sums = BlockCost::sums(&ops[..n], p.opts.recompute);
    let phases = ForwardPhases::of(&attention_sums, &ops[n..], &[], p.opts.recompute, p.opts.moe.shared_overlap);
    let fsdp = fsdp_unit_host_s(p, m, el);
    let bound = |c| moe_issue_bounded(c, kernels, p.host_time_per_operation_s(), &mlp, host, phases, fsdp);
    let bounded = bound(c);
    let unpaired_s = unpaired_s(c, &bounded, &mlp, bound);
    let mut block = bounded.offloaded(crate::extended::activation_offload::offload_of(&ops, p));
    block.parameters -= mlp.expert_parameters;
    MoeBlockCost { block, mlp, unpaired_s }
}

/// Megatron-FSDP's host time for one MoE block as an FSDP unit of its local experts, `[forward,
/// backward]` [s] ([`fsdp_host::unit_host_s`] of [`fsdp_host::moe_unit_tensors`]; zero otherwise).
fn fsdp_unit_host_s(p: &Pricing, m: &MoeShape, el: &ExpertLayout) -> [f64; 2] {
    fsdp_host::unit_host_s(p, fsdp_host::moe_unit_tensors(m.local_experts(el.ep), m.shared_experts > 0))
}

/// An MoE block's sums `c` with each pass raised to its host time ([`BlockCost::issue_bounded`]
/// of its `kernels` at `host_s` [s] each), the backward's host time including the routed experts'
/// GEMM issues ([`MoeMlpCost::bwd_issue_s`]): with no dispatcher wait in the backward they run
/// ahead behind the block's other backward kernels rather than bounding the experts alone.
///
/// Where the MoE layer's host calls are counted ([`MoeMlpCost::host_calls_s`]: Megatron-Core on a
/// host-launched GPU), each pass's host time adds the layer's counted calls to the block's
/// operations at `host_s` (the MoE layer's operations among them: a module step each, as the
/// dense calibration of [`crate::extended::pricing::EAGER_HOST_S`] prices one, with the few
/// calls a dense module makes; the MoE modules' tens of small calls beyond those are the counted
/// ones), and a CUDA graph over the attention (`attn` scope, `host`: [`HostCount`]) issues the
/// attention sub-layer's operations as one launch.
///
/// Where the layer's calls are counted, the forward's host time also holds the layer's Python
/// ([`HostCount::python_s`], each phase's in its phase of the stretch below), and a whole-block
/// recomputation lasts at least its issues plus that Python again, as a dense block's
/// ([`BlockCost::issue_bounded_layer`]).
///
/// Megatron-FSDP's per-unit host calls (`fsdp`, `[forward, backward]` [s]:
/// [`fsdp_host::unit_host_s`], zero otherwise) join each pass's host time.
///
/// Where the layer's dispatcher waits on the GPU ([`MoeMlpCost::sync_calls_s`]), the forward
/// lasts at least the stretch from one sync to the next ([`sync::stretch_s`] of `phases`: the
/// MLP sub-layer after the router, the attention sub-layer, the MLP sub-layer up to the sync),
/// raised only where that stretch exceeds the host-ahead bound `max(host, GPU)` beyond rounding,
/// so that a block on either side of it keeps its figure bit for bit.
fn moe_issue_bounded(
    c: BlockCost,
    kernels: [f64; 3],
    host_s: f64,
    mlp: &MoeMlpCost,
    host: HostCount,
    phases: Option<ForwardPhases>,
    fsdp: [f64; 2],
) -> BlockCost {
    let mut block = c.issue_bounded(kernels, host_s);
    let Some(calls) = mlp.host_calls_s else {
        if fsdp[0] > 0.0 {
            block.fwd = issue_bound(c.fwd, 1.0, kernels[0] * host_s + fsdp[0]);
        }
        block.bwd = issue_bound(c.bwd, 1.0, kernels[1] * host_s + mlp.bwd_issue_s + fsdp[1]);
        return block;
    };
    let [fwd_ops, bwd_ops] = [0, 1].map(|i| kernels[i] - host.attention_saved[i]);
    let [attention_py, pre_py, post_py] = host.python_s;
    let fwd_host_s = fwd_ops * host_s + calls[0] + (attention_py + pre_py + post_py) + fsdp[0];
    block.fwd = issue_bound(c.fwd, 1.0, fwd_host_s);
    if let (Some([before, after]), Some(ph)) = (mlp.sync_calls_s, phases) {
        let stretch = sync::stretch_s(&[
            Phase { host_s: ph.post.kernels * host_s + after + post_py, gpu_s: ph.post.gpu_s },
            Phase {
                host_s: (ph.attention.kernels - host.attention_saved[0]) * host_s + attention_py,
                gpu_s: ph.attention.gpu_s,
            },
            Phase { host_s: ph.pre.kernels * host_s + before + pre_py, gpu_s: ph.pre.gpu_s },
        ]);
        if stretch > fwd_host_s.max(c.fwd.time()) * (1.0 + ROUNDING) {
            block.fwd = issue_bound(c.fwd, 1.0, stretch);
        }
    }
    block.bwd = issue_bound(c.bwd, 1.0, bwd_ops * host_s + calls[1] + host.attention_bwd_s + mlp.bwd_issue_s + fsdp[1]);
    if host.python_again_s > 0.0 && kernels[2] > 0.0 {
        block.recompute = issue_bound(c.recompute, 1.0, kernels[2] * host_s + host.python_again_s);
    }
    block
}

/// Relative difference below which two sums of the same times in different orders are taken as
/// equal (a few ulps of `f64` over a block's tens of terms).
const ROUNDING: f64 = 1e-12;

/// A phase's forward GPU time [s] and issued operations [count] ([`BlockCost::sums`]).
#[derive(Debug, Clone, Copy, Default)]
struct PhaseSums {
    gpu_s: f64,
    kernels: f64,
}

impl PhaseSums {
    fn of((c, kernels): (BlockCost, [f64; 3])) -> PhaseSums {
        PhaseSums { gpu_s: c.fwd.time(), kernels: kernels[0] }
    }
}

/// An MoE block's forward operations in the phases of a stretch between dispatcher syncs
/// ([`sync`]): `pre`, the MLP sub-layer up to and with the router (its norm, the router) and the
/// shared experts' GEMMs where they run before the router; `post`, the rest of the MLP sub-layer
/// (permutation, exchange, routed experts, the sub-layer's collectives and residual; the shared
/// experts' GEMMs where they overlap the dispatch) and the attention's FP8 casts, which the list
/// keeps at its end; `attention`, the attention sub-layer. The exchange is counted after the sync
/// whole (the all-gather dispatcher's gathers run before it: microseconds at the sizes where the
/// stretch matters).
///
/// Where the shared experts run (NVIDIA/Megatron-LM at d98e8a6,
/// `megatron/core/transformer/moe/moe_layer.py`): `MoELayer.forward`'s `custom_forward` calls
/// `shared_experts_compute` before `route` (l. 661), which runs the whole shared MLP on the compute
/// stream unless `--moe-shared-expert-overlap` is set (l. 517–530), so its GEMMs are issued before
/// the router and the dispatcher's sync. With the overlap the token dispatcher issues them
/// (`token_dispatcher.py` `MoEAlltoAllTokenDispatcher`: `linear_fc1_forward_and_act` right after
/// the tokens' all-to-all, l. 716–717, `linear_fc2_forward` after the combine's, l. 871–872; the
/// flex dispatcher likewise, l. 1979 and 2049) on the shared experts' side stream
/// (`shared_experts.py` l. 259–338): after the sync (`before_ep_alltoall` or earlier,
/// l. 541–616), as `transformer_config.py`'s `moe_shared_expert_intermediate_size` (l. 701–711)
/// states: "when moe_shared_expert_overlap or overlap_moe_expert_parallel_comm is set, the shared
/// experts execute after the router". (With the EP all-to-all overlap the forward runs as no
/// stretch, [`sync::forward_stretches`].)
#[derive(Debug, Clone, Copy, Default)]
struct ForwardPhases {
    post: PhaseSums,
    attention: PhaseSums,
    pre: PhaseSums,
}

impl ForwardPhases {
    /// From the attention's sums, the MLP sub-layer's operations `mlp` and the casts after them;
    /// `None` without a router operation. The shared experts' operation (right after the router's)
    /// is in `pre` unless `shared_overlap` (see the type's docs). Each part is a fold over its
    /// operations in list order, so both of [`moe_block_cost`]'s paths give the same figures bit
    /// for bit.
    fn of(
        attention: &(BlockCost, [f64; 3]),
        mlp: &[Operation],
        casts: &[Operation],
        recompute: Recompute,
        shared_overlap: bool,
    ) -> Option<ForwardPhases> {
        let router = mlp.iter().position(|o| o.name == ROUTER_OP)?;
        let first = usize::from(!shared_overlap && mlp.get(router + 1).is_some_and(|o| o.name == SHARED_OP));
        let after = router + 1 + first;
        let pre = BlockCost::sums(&mlp[..after], recompute);
        let post = BlockCost::sums_after(BlockCost::sums(&mlp[after..], recompute), casts, recompute);
        Some(ForwardPhases { post: PhaseSums::of(post), attention: PhaseSums::of(*attention), pre: PhaseSums::of(pre) })
    }
}

/// What the block's host runs besides its operations' issues and the MoE layer's counted calls,
/// where those calls are counted ([`MoeMlpCost::host_calls_s`]; none otherwise): the layer's
/// Python ([`crate::extended::layer_python`]), and what a CUDA graph over the attention saves.
#[derive(Debug, Clone, Copy, Default)]
struct HostCount {
    /// What a CUDA graph over the attention saves of the block's issued operations `[forward,
    /// backward]` [count]: the attention sub-layer's operations less the one graph launch, when
    /// the `attn` scope is captured.
    attention_saved: [f64; 2],
    /// The layer's Python in the forward's phases `[attention, pre, post]` [s]
    /// ([`LayerModules::moe_phases`] at [`forward_python_s`]), the attention's with multi-latent
    /// attention's calls between its projections ([`mla_host::glue_host_s`]).
    python_s: [f64; 3],
    /// Multi-latent attention's calls between its projections in the backward [s]
    /// ([`mla_host::glue_host_s`]; 0 without it).
    attention_bwd_s: f64,
    /// The layer's Python again in the recomputation [s] ([`layer_python_s`]'s second part).
    python_again_s: f64,
}

impl HostCount {
    /// For a block of `w` with experts `m` under `layout` and expert layout `el` priced under `p`
    /// whose MoE layer is `mlp` and whose attention operations issue `attention_kernels`
    /// ([`BlockCost::sums`]).
    #[allow(clippy::too_many_arguments)]
    fn of(
        p: &Pricing,
        w: &Workload,
        layout: &Layout,
        m: &MoeShape,
        el: &ExpertLayout,
        mlp: &MoeMlpCost,
        attention_kernels: [f64; 3],
    ) -> HostCount {
        if mlp.host_calls_s.is_none() {
            return HostCount::default();
        }
        let graph = p.opts.moe.host.graphs.attn;
        let phases = moe_layer_modules(p, w, m, el);
        let mut python_s = phases.map(|ph| forward_python_s(p.hw, p.opts.stack, ph));
        let python_again_s = moe_layer_python_s(p, w, m, el)[1];
        let attention_saved = if graph { [0, 1].map(|i| (attention_kernels[i] - 1.0).max(0.0)) } else { [0.0; 2] };
        let glue = if w.mla.is_some() { mla_host::glue_host_s(p, layout.tp) } else { [0.0; 2] };
        python_s[0] += glue[0];
        HostCount { attention_saved, python_s, attention_bwd_s: glue[1], python_again_s }
    }
}

/// The modules of one MoE layer of `w` with experts `m` under expert layout `el` and `p`'s
/// switches whose Python is counted, in the forward's phases `[attention, pre, post]`
/// ([`LayerModules::moe_phases`]; multi-latent attention's sub-layer as [`mla_host`] counts it). With the shared experts overlapped with the dispatch
/// ([`ForwardPhases`]'s docs) the dispatcher calls their `linear_fc1` and `linear_fc2` after the
/// sync, and the `SharedExpertMLP` module itself is not called (its `pre_forward_comm`,
/// `linear_fc1_forward_and_act`, … are plain methods, `shared_experts.py` l. 234–373 at d98e8a6):
/// an MLP's modules less its own call, after the sync.
fn moe_layer_modules(p: &Pricing, w: &Workload, m: &MoeShape, el: &ExpertLayout) -> [LayerModules; 3] {
    let (host, spec) = (&p.opts.moe.host, p.opts.transformer_impl);
    let (shared, overlapped) = (m.shared_experts > 0, p.opts.moe.shared_overlap);
    let [attention, pre, post] = LayerModules::moe_phases(
        spec,
        host.sequential_experts,
        m.local_experts(el.ep),
        shared && !overlapped,
        host.graphs.attn,
    );
    let own_call = LayerModules { calls: 1.0, te_linears: 0.0 };
    let after =
        if shared && overlapped { LayerModules::mlp(spec).plus(own_call.times(-1.0)) } else { LayerModules::default() };
    let attention = match &w.mla {
        Some(mla) if !host.graphs.attn => mla_host::attention_modules(mla, spec),
        _ => attention,
    };
    [attention, pre, post.plus(after)]
}

/// The Python of one MoE layer of `w` per micro-batch `[forward, recomputation]` [s]
/// ([`layer_python_s`] of its modules, [`moe_layer_modules`]).
pub fn moe_layer_python_s(p: &Pricing, w: &Workload, m: &MoeShape, el: &ExpertLayout) -> [f64; 2] {
    layer_python_s(p.hw, p.opts, LayerModules::sum(&moe_layer_modules(p, w, m, el)))
}

/// An MoE block's attention operations as [`moe_block_cost_after`] reads them, formed once per
/// block shape (they read neither the expert layout nor the data-parallel placement): the sums
/// the block's list starts with, so that each expert layout's block adds only its MoE MLP
/// sub-layer and casts to them instead of copying and summing the attention again.
///
/// Every sum of [`operations_after`] over the block's list is a left fold over it in list order,
/// the attention first; a fold over the attention continued over the rest is the fold over the
/// whole list, step for step, so the block costs are those of the list, bit for bit (test
/// `attention_prefix_prices_as_the_whole_list`).
#[derive(Debug, Clone)]
pub struct AttentionPrefix {
    /// The compute of the attention in (forward, backward) [s] (what an overlapped exchange can
    /// hide behind).
    overlap: (f64, f64),
    /// The sum of the attention matmuls' parameters, before the MLP's [count].
    linear: f64,
    /// [`BlockCost::sums`] of the attention under the pricing's recomputation level, the
    /// `layernorm` recompute module applied ([`norms_recomputed`]).
    sums: (BlockCost, [f64; 3]),
    /// The attention's issued operations as [`BlockCost::sums`] counts them, the module not
    /// applied (what a CUDA graph over the attention replaces).
    kernels: [f64; 3],
}

impl AttentionPrefix {
    /// The prefix of the attention operations `attention` (`attention_operations(w, layout, p)`)
    /// under pricing `p`.
    pub fn of(attention: &[Operation], p: &Pricing) -> AttentionPrefix {
        let compute = |f: fn(&Operation) -> f64| attention.iter().map(f).sum::<f64>();
        let overlap = (compute(|o| o.fwd.compute_s), compute(|o| o.bwd.compute_s));
        let linear = attention.iter().filter(|o| o.kind == OpKind::Matmul).map(|o| o.parameters).sum();
        let plain = BlockCost::sums(attention, p.opts.recompute);
        let sums = if p.opts.moe.recompute_modules.layernorm {
            let mut ops = attention.to_vec();
            norms_recomputed(&mut ops);
            BlockCost::sums(&ops, p.opts.recompute)
        } else {
            plain
        };
        AttentionPrefix { overlap, linear, sums, kernels: plain.1 }
    }
}

/// [`moe_block_cost`] with the block's attention given as its [`AttentionPrefix`] (formed once for
/// every expert layout and data-parallel placement of a block shape): only the MoE MLP sub-layer
/// and the casts are built and summed. Equal to `moe_block_cost` bit for bit (test
/// `attention_prefix_prices_as_the_whole_list`; through the evaluator's cache,
/// `cached_parts_equal_fresh_ones`).
pub fn moe_block_cost_after(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    el: &ExpertLayout,
    p: &Pricing,
    attention: &AttentionPrefix,
) -> MoeBlockCost {
    let (inner, mlp) = moe_mlp_operations(w, m, layout, el, p, &p.opts.moe, attention.overlap);
    let experts = inner.iter().find(|o| o.name == EXPERTS_OP).map(|o| o.fwd).unwrap_or_default();
    let mut mlp_ops = sublayer(w, layout, p, Sublayer::Mlp, inner, &experts, &experts);
    let linear = mlp_ops.iter().filter(|o| o.kind == OpKind::Matmul).fold(attention.linear, |a, o| a + o.parameters);
    let casts = fp8_casts(&Workload { ffn_hidden: 0, ..*w }, layout, p, linear);
    if p.opts.moe.recompute_modules.layernorm {
        // The casts hold no norm nor a linear layer after one.
        norms_recomputed(&mut mlp_ops);
    }
    // The list's fold: attention, MLP sub-layer, casts (not appended: the same fold, continued).
    let recompute = p.opts.recompute;
    let (c, kernels) =
        BlockCost::sums_after(BlockCost::sums_after(attention.sums, &mlp_ops, recompute), &casts, recompute);
    let host = HostCount::of(p, w, layout, m, el, &mlp, attention.kernels);
    let phases = ForwardPhases::of(&attention.sums, &mlp_ops, &casts, recompute, p.opts.moe.shared_overlap);
    let fsdp = fsdp_unit_host_s(p, m, el);
    let bound = |c| moe_issue_bounded(c, kernels, p.host_time_per_operation_s(), &mlp, host, phases, fsdp);
    let mut block = bound(c);
    let unpaired_s = unpaired_s(c, &block, &mlp, bound);
    block.parameters -= mlp.expert_parameters;
    MoeBlockCost { block, mlp, unpaired_s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{MappingOptions, Precision, find_model, find_system};
    use crate::extended::hardware::Hardware;
    use crate::extended::moe::experts::expert_choices;
    use crate::extended::options::{ExtendedOptions, Fp8Recipe, Recompute};
    use crate::extended::pricing::Pass;

    #[test]
    fn a_pass_run_alone_shows_the_exchange_its_pairing_hid() {
        // An exchange of 1 ms dispatch + 2 ms combine per direction (3 ms), priced paired at 1 ms
        // exposed forward and 0.5 ms backward: 2 + 2.5 = 4.5 ms hidden.
        use crate::extended::moe::dispatch::Exchange;
        let exchange = Exchange { dispatch_s: 1e-3, combine_s: 2e-3 };
        let mlp = MoeMlpCost {
            exchange,
            fwd: Pass { ep_comm_s: 1e-3, ..Pass::default() },
            bwd: Pass { ep_comm_s: 0.5e-3, ..Pass::default() },
            ..MoeMlpCost::default()
        };
        // The block: 10 ms forward and 20 ms backward of matmuls plus those exposures.
        let c = BlockCost {
            fwd: Pass { compute_s: 10e-3, ep_comm_s: 1e-3, ..Pass::default() },
            bwd: Pass { compute_s: 20e-3, ep_comm_s: 0.5e-3, ..Pass::default() },
            ..BlockCost::default()
        };
        // GPU-bound (no host rule): alone it lasts 11 + 2 = 13 ms and 20.5 + 2.5 = 23 ms, 4.5 ms
        // more than the paired 11 + 20.5.
        let free = |c: BlockCost| c;
        assert!((unpaired_s(c, &free(c), &mlp, free) - 4.5e-3).abs() < 1e-15);
        // Host-bound at 12 ms forward and 22 ms backward (the shortfall exposed): paired 12 + 22,
        // alone max(12, 13) + max(22, 23) = 36: 2 ms, what the exchange adds beyond the host.
        let host =
            |c: BlockCost| BlockCost { fwd: issue_bound(c.fwd, 1.0, 12e-3), bwd: issue_bound(c.bwd, 1.0, 22e-3), ..c };
        assert!((unpaired_s(c, &host(c), &mlp, host) - 2e-3).abs() < 1e-15);
        // Nothing hidden (the overlap off: exposure = the whole exchange): 0, the rule not applied.
        let off = MoeMlpCost {
            fwd: Pass { ep_comm_s: 3e-3, ..Pass::default() },
            bwd: Pass { ep_comm_s: 3e-3, ..Pass::default() },
            ..mlp
        };
        assert_eq!(unpaired_s(c, &c, &off, |_| unreachable!()), 0.0);
    }

    #[test]
    fn the_experts_backward_issues_join_the_blocks_host_time() {
        // A block whose backward holds 10 ms of GPU work in 6 kernels, at 1 ms of host time each:
        // 6 ms of host time, GPU-bound.
        let c = BlockCost { bwd: Pass { compute_s: 10e-3, ..Pass::default() }, ..BlockCost::default() };
        let kernels = [3.0, 6.0, 0.0];
        let with = |issue_s: f64| {
            let mlp = MoeMlpCost { bwd_issue_s: issue_s, ..MoeMlpCost::default() };
            moe_issue_bounded(c, kernels, 1e-3, &mlp, HostCount::default(), None, [0.0; 2])
        };
        // No expert issues: exactly the dense rule.
        assert_eq!(with(0.0), c.issue_bounded(kernels, 1e-3));
        // 2 ms of expert issues: 6 + 2 = 8 ms of host time, still under the GPU's 10 ms.
        assert_eq!(with(2e-3).bwd, c.bwd);
        // 5 ms: 6 + 5 = 11 ms of host time; the 1 ms short is exposed non-matrix time.
        let b = with(5e-3).bwd;
        assert!((b.time() - 11e-3).abs() < 1e-15, "{}", b.time());
        assert!((b.memory_s - 1e-3).abs() < 1e-15);
        // The forward is the dense rule's either way (3 ms of host, no GPU work: 3 ms).
        assert!((with(5e-3).fwd.time() - 3e-3).abs() < 1e-15);
    }

    #[test]
    fn the_forward_waits_at_the_dispatchers_sync() {
        // A block of 10 forward operations at 0.2 ms of host time each and 1.4 ms of the MoE
        // layer's calls (0.4 before the sync, 1.0 after it), in the phases of a stretch between
        // syncs: after the sync 5 operations (0.5 ms of GPU work), the attention 3 (3 ms), up to
        // the sync 2 (0.5 ms). Host 10·0.2 + 1.4 = 3.4 ms, GPU 4 ms: running ahead, 4 ms.
        let phase = |kernels: f64, gpu_s: f64| PhaseSums { gpu_s, kernels };
        let c = BlockCost { fwd: Pass { compute_s: 4e-3, ..Pass::default() }, ..BlockCost::default() };
        let kernels = [10.0, 0.0, 0.0];
        let mlp = MoeMlpCost { host_calls_s: Some([1.4e-3, 0.0]), ..MoeMlpCost::default() };
        let synced = MoeMlpCost { sync_calls_s: Some([0.4e-3, 1.0e-3]), ..mlp };
        let with = |mlp: &MoeMlpCost, attention_gpu_s: f64| {
            let ph = ForwardPhases {
                post: phase(5.0, 0.5e-3),
                attention: phase(3.0, attention_gpu_s),
                pre: phase(2.0, 0.5e-3),
            };
            moe_issue_bounded(c, kernels, 0.2e-3, mlp, HostCount::default(), Some(ph), [0.0; 2]).fwd
        };
        assert_eq!(with(&mlp, 3e-3).time(), 4e-3);
        // With the sync: host after it 5·0.2 + 1.0 = 2.0 ms (GPU 0.5): E = 2.0; the attention's
        // 3 ms of GPU work issued from 2.0 ms: E = max(2.0 + 3, 2.0 + max(0.6, 3)) = 5.0; up to
        // the sync (host 2·0.2 + 0.4 = 0.8 from 2.6 ms, GPU 0.5): E = max(5.5, 3.4) = 5.5 ms.
        let f = with(&synced, 3e-3);
        assert!((f.time() - 5.5e-3).abs() < 1e-15, "{}", f.time());
        assert!((f.memory_s - 1.5e-3).abs() < 1e-15);
        // Host-bound in every phase (attention 0.3 ms of GPU work): the stretch is the host's
        // 3.4 ms, the figure without the sync, bit for bit.
        let c = BlockCost { fwd: Pass { compute_s: 1.3e-3, ..Pass::default() }, ..c };
        let bound = |mlp: &MoeMlpCost| {
            let ph = ForwardPhases { post: phase(5.0, 0.5e-3), attention: phase(3.0, 0.3e-3), pre: phase(2.0, 0.5e-3) };
            moe_issue_bounded(c, kernels, 0.2e-3, mlp, HostCount::default(), Some(ph), [0.0; 2]).fwd
        };
        assert_eq!(bound(&synced), bound(&mlp));
        assert!((bound(&mlp).time() - 3.4e-3).abs() < 1e-15);
    }

    #[test]
    fn the_shared_experts_run_before_the_router_unless_overlapped() {
        // The MLP sub-layer's forward: norm 0.1 ms, router 0.1 ms, shared experts 2 ms,
        // permutation 0.2 ms, routed experts 1 ms (one kernel each).
        let op = |name: &'static str, kind: OpKind, ms: f64| {
            let pass = Pass { compute_s: ms * 1e-3, ..Pass::default() };
            Operation::new(name, kind, pass, pass, 0.0)
        };
        let mlp = [
            op("mlp_norm", OpKind::Elementwise, 0.1),
            op(ROUTER_OP, OpKind::Matmul, 0.1),
            op(SHARED_OP, OpKind::Matmul, 2.0),
            op("moe_permute", OpKind::Elementwise, 0.2),
            op(EXPERTS_OP, OpKind::Matmul, 1.0),
        ];
        let attention =
            (BlockCost { fwd: Pass { compute_s: 3e-3, ..Pass::default() }, ..BlockCost::default() }, [4.0, 0.0, 0.0]);
        let phases = |overlap: bool| ForwardPhases::of(&attention, &mlp, &[], Recompute::None, overlap).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        // Megatron's default: before the sync norm + router + shared = 2.2 ms in 3 kernels; after
        // it permutation + experts = 1.2 ms in 2.
        let plain = phases(false);
        assert!(close(plain.pre.gpu_s, 2.2e-3) && plain.pre.kernels == 3.0, "{plain:?}");
        assert!(close(plain.post.gpu_s, 1.2e-3) && plain.post.kernels == 2.0, "{plain:?}");
        // Overlapped with the dispatch: norm + router = 0.2 ms in 2 before it, 3.2 ms in 3 after.
        let over = phases(true);
        assert!(close(over.pre.gpu_s, 0.2e-3) && over.pre.kernels == 2.0, "{over:?}");
        assert!(close(over.post.gpu_s, 3.2e-3) && over.post.kernels == 3.0, "{over:?}");
        assert!(close(over.attention.gpu_s, 3e-3) && close(plain.attention.gpu_s, 3e-3));
        // With 3 ms of host time after the sync (the experts' issues) and 0.5 ms in each other
        // phase: shared experts before the router, the GPU idles while the host issues:
        // E = max(1.2, 3) = 3; max(3 + 3, 3 + 3) = 6; max(6 + 2.2, 3.5 + 2.2) = 8.2 ms. Overlapped,
        // they fill that wait: max(3.2, 3) = 3.2; max(6.2, 6) = 6.2; max(6.4, 3.5 + 0.5) = 6.4 ms.
        let stretch = |ph: ForwardPhases| {
            sync::stretch_s(&[
                Phase { host_s: 3e-3, gpu_s: ph.post.gpu_s },
                Phase { host_s: 0.5e-3, gpu_s: ph.attention.gpu_s },
                Phase { host_s: 0.5e-3, gpu_s: ph.pre.gpu_s },
            ])
        };
        assert!(close(stretch(plain), 8.2e-3), "{}", stretch(plain));
        assert!(close(stretch(over), 6.4e-3), "{}", stretch(over));
        // No shared experts: the same phases either way.
        let dense: Vec<Operation> = mlp.iter().filter(|o| o.name != SHARED_OP).cloned().collect();
        let [a, b] = [false, true].map(|o| ForwardPhases::of(&attention, &dense, &[], Recompute::None, o).unwrap());
        assert_eq!((a.pre.gpu_s, a.post.gpu_s, a.pre.kernels), (b.pre.gpu_s, b.post.gpu_s, b.pre.kernels));
    }

    #[test]
    fn the_layers_python_joins_its_phases_and_the_recomputation() {
        // The block of `the_forward_waits_at_the_dispatchers_sync` (10 forward operations at
        // 0.2 ms, the layer's calls 0.4 ms before the sync and 1.0 ms after it, phases post 5 ops /
        // 0.5 ms of GPU work, attention 3 / 3 ms, pre 2 / 0.5 ms: 5.5 ms) with the layer's Python
        // 0.3 ms in the attention, 0.1 ms before the sync and 0.2 ms after it.
        let phase = |kernels: f64, gpu_s: f64| PhaseSums { gpu_s, kernels };
        let ph = ForwardPhases { post: phase(5.0, 0.5e-3), attention: phase(3.0, 3e-3), pre: phase(2.0, 0.5e-3) };
        let c = BlockCost {
            fwd: Pass { compute_s: 4e-3, ..Pass::default() },
            recompute: Pass { compute_s: 0.5e-3, ..Pass::default() },
            ..BlockCost::default()
        };
        let kernels = [10.0, 0.0, 4.0];
        let mlp = MoeMlpCost {
            host_calls_s: Some([1.4e-3, 0.0]),
            sync_calls_s: Some([0.4e-3, 1.0e-3]),
            ..MoeMlpCost::default()
        };
        let host = HostCount { python_s: [0.3e-3, 0.1e-3, 0.2e-3], python_again_s: 0.6e-3, ..HostCount::default() };
        let b = moe_issue_bounded(c, kernels, 0.2e-3, &mlp, host, Some(ph), [0.0; 2]);
        // After the sync: host 5·0.2 + 1.0 + 0.2 = 2.2 ms (GPU 0.5): E = 2.2; the attention (host
        // 3·0.2 + 0.3 = 0.9 from 2.2 ms, GPU 3): E = max(2.2 + 3, 2.2 + 3) = 5.2; up to the sync
        // (host 2·0.2 + 0.4 + 0.1 = 0.9 from 3.1 ms, GPU 0.5): E = max(5.7, 4.0) = 5.7 ms.
        assert!((b.fwd.time() - 5.7e-3).abs() < 1e-15, "{}", b.fwd.time());
        // The whole-block recomputation: 4 issues · 0.2 ms + 0.6 ms of Python = 1.4 ms over its
        // 0.5 ms of GPU work; without the Python its issues' 0.8 ms.
        assert!((b.recompute.time() - 1.4e-3).abs() < 1e-15, "{}", b.recompute.time());
        let plain = moe_issue_bounded(c, kernels, 0.2e-3, &mlp, HostCount::default(), Some(ph), [0.0; 2]);
        assert!((plain.recompute.time() - 0.8e-3).abs() < 1e-15);
        assert!((plain.fwd.time() - 5.5e-3).abs() < 1e-15);
        // Without the sync the Python joins the forward's host time: 10·0.2 + 1.4 + 0.6 = 4.0 ms
        // against 4 ms of GPU work; 0.2 ms more of it would show.
        let ahead = MoeMlpCost { sync_calls_s: None, ..mlp };
        let more = HostCount { python_s: [0.5e-3, 0.1e-3, 0.2e-3], ..host };
        let f = moe_issue_bounded(c, kernels, 0.2e-3, &ahead, more, Some(ph), [0.0; 2]).fwd;
        assert!((f.time() - 4.2e-3).abs() < 1e-15, "{}", f.time());
    }

    #[test]
    fn attention_prefix_prices_as_the_whole_list() {
        // The cached path (the attention's sums once per block shape, each expert layout's MLP
        // sub-layer and casts folded after them) against the plain one (the whole list built and
        // summed), bit for bit: latent (DeepSeek-V3, MTP) and plain attention (Mixtral), BF16 and
        // FP8 (casts, with the torchao recipe's weight casts too), every recomputation level, the
        // `layernorm` and `moe_act` recompute modules, context parallelism and several shapes.
        let sys = find_system("nvidia_h800_sxm5_80gb").unwrap();
        let (mut compared, mut with_casts) = (0, 0);
        for model in ["deepseek-v3", "mixtral-8x7b"] {
            let w = Workload::from_catalog(find_model(model).unwrap()).unwrap();
            let m = w.moe.unwrap();
            for precision in [Precision::Bf16, Precision::Fp8] {
                let hw = Hardware::from_catalog(sys, precision, true, &MappingOptions::default()).unwrap();
                for (recompute, layernorm, recipe) in [
                    (Recompute::None, false, Fp8Recipe::TransformerEngine),
                    (Recompute::Selective, true, Fp8Recipe::Torchao),
                    (Recompute::Full, false, Fp8Recipe::Torchao),
                    (Recompute::Selective, false, Fp8Recipe::TransformerEngine),
                ] {
                    let mut opts = ExtendedOptions { recompute, fp8_recipe: recipe, ..ExtendedOptions::realistic() };
                    opts.moe.recompute_modules.layernorm = layernorm;
                    opts.moe.recompute_modules.moe_act = layernorm;
                    let p = Pricing { hw: &hw, opts: &opts };
                    for (tp, cp, pp, dp, mbs) in [(1, 1, 4, 64, 1), (2, 2, 2, 32, 2), (4, 1, 8, 16, 3), (8, 2, 1, 8, 1)]
                    {
                        let layout = Layout::placed(tp, cp, pp, dp, mbs, dp * mbs * 4, 8);
                        let prefix = AttentionPrefix::of(&attention_operations(&w, &layout, &p), &p);
                        for (ep, etp) in expert_choices(&layout, &m, None, None) {
                            let l = layout.with_experts(ep, etp);
                            let el = ExpertLayout::fold(&l, &m, ep, etp).unwrap();
                            let plain = moe_block_cost(&w, &m, &l, &el, &p);
                            assert_eq!(
                                moe_block_cost_after(&w, &m, &l, &el, &p, &prefix),
                                plain,
                                "{model} {l:?} {opts:?}"
                            );
                            let casts =
                                moe_block_operations(&w, &m, &l, &el, &p).0.iter().any(|o| o.name == "fp8_casts");
                            with_casts += usize::from(casts);
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert!(compared > 100 && with_casts > 0 && with_casts < compared, "{compared} {with_casts}");
    }
}
