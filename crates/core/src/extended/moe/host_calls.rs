//! The host work of Megatron-Core's MoE layer besides the routed experts' GEMMs, counted per
//! PyTorch call from the code and priced at the per-call host time
//! ([`crate::extended::pricing::TORCH_CALL_HOST_S`], 12.9 µs on a DGX H100 host, times the
//! host's speed): what a Megatron-LM MoE block's host spends per micro-batch on the router, the
//! load-balancing loss, the token permutation and the dispatcher, with CUDA-graph scopes that
//! replay a captured part as one launch.
//!
//! **Counted** (NVIDIA/Megatron-LM at d98e8a6, `megatron/core/transformer/moe/`): every call that
//! launches a kernel, a collective or a device→host copy, or runs an autograd `Function`; views
//! (`view`, `reshape` of a contiguous tensor, `.T`, `unsqueeze`, `expand`, slices) are not counted,
//! nor the Python between the calls (a cast counted where it may be a no-op, as the
//! all-gather combine's two, is the one way a count can run over). Backward: the kernels autograd
//! runs for each counted forward call. Forward / backward per MoE layer and micro-batch:
//! * **router gating** (`moe_utils.py` `RouterGatingLinearFunction`, l. 1357–1441): one GEMM
//!   forward, two backward ([`GATING`]).
//! * **scores and top-k** (`topk_routing_with_score_function`, l. 766–957):
//!   softmax after top-k (`topk`, `softmax`, `type_as`) plus the dense probabilities and routing
//!   map (`zeros_like().scatter()`, `zeros_like().int().scatter().bool()`): 9 / 5 ([`SOFTMAX_TOPK`]);
//!   sigmoid with the expert bias and group-limited top-k (`sigmoid`, `float`, bias add, the
//!   group selection of `group_limited_topk` l. 673–729 — `topk`, `sum`, `topk`, `zeros_like`,
//!   `scatter_`, the expanded mask made contiguous, `bool`, `~`, `masked_fill`, `topk` —, `gather`,
//!   the normalisation `sum`, `+ε`, `/`, the scaling factor, `type_as`, the six map calls, and the
//!   bias counter's `sum` and `+=` of `_apply_expert_bias`, `router.py` l. 733–744): 27 / 9
//!   ([`SIGMOID_GROUP_TOPK`]); with `moe_router_fusion` TE's `fused_topk_with_score_function`:
//!   1 / 1 (plus the bias counter: 3 / 1 for sigmoid).
//! * **Sinkhorn routing** (`router.py` l. 280–311, `moe_utils.py` `sinkhorn` l. 185–207): the
//!   FP32 cast, `exp`, two `ones`, then per iteration 13 calls and one device sync (`error > tol`
//!   reads a GPU scalar); the iterations run until the tolerance is met, which no source states:
//!   one iteration is counted (a floor); then the activation, `topk`, the map (4) and `logits *
//!   map`: 26 / 2 ([`SINKHORN`]).
//! * **load-balancing loss** (`router.py` `_apply_aux_loss` / `_apply_seq_aux_loss` /
//!   `_apply_global_aux_loss`, l. 410–551; `moe_utils.py` `compute_routing_scores_for_aux_loss`
//!   l. 960–1016, `switch_load_balancing_loss_func` l. 63–150, `get_tokens_per_expert_and_token_count`
//!   l. 269–288, `MoEAuxLossAutoScaler` l. 291–341; `moe_logging.py` `record` l. 94–127): the
//!   aux-loss scores and map (softmax 6, sigmoid 9; fused 1), the tokens per expert summed (1) and
//!   all-reduced over the TP×CP ranks when there are several (1), the loss (`sum`, `*`, `sum`,
//!   `*`: 4, and `/ bsz` for the sequence-level loss; fused 1), its logging (`/coeff`, `+=`, the
//!   store: 3) and the autoscaler's `apply` (1): 15 / 5 for Megatron's softmax `aux_loss`
//!   ([`aux_loss_calls`]); the backward's autoscaler `ones_like` and `*`, the loss's two `*`, and
//!   the scores' backward.
//! * **dispatcher** — all-gather (`token_dispatcher.py` `MoEAllGatherTokenDispatcher`,
//!   l. 263–368): with TP×EP > 1 the routing map's, probabilities' and tokens' all-gathers (an
//!   allocation and a collective each: 6) and the output's reduce-scatter with its two casts (4);
//!   the local map and probabilities sliced and made contiguous (2), the tokens per expert summed,
//!   cast and copied to the host (`.cpu()`: 3, the forward's sync) and summed again for `.item()`
//!   (2), the local probabilities transposed and `masked_select`ed (3); backward the collectives'
//!   transposes (8 with TP×EP > 1), the masked select's and slice's backward (4) ([`dispatcher_calls`]).
//!   All-to-all (`MoEAlltoAllTokenDispatcher`, l. 501–960): the map summed and cast (2), with
//!   TP×EP > 1 the input splits, the counts' all-gather (2), their slice and three sums (7), the
//!   device→host copies on the side stream (`_maybe_dtoh_and_synchronize` l. 921–960: stream wait,
//!   the copies — 1, plus 3 split lists with TP×EP > 1, plus the per-expert counts with several
//!   local experts unless fused —, the event's record and its `synchronize`), the tokens' and
//!   probabilities' all-to-all and the combine's (6 with TP×EP > 1), with TP > 1 the split list and
//!   the two all-gathers, the reduce-scatter and its casts (10), with several local experts the
//!   chunk sort both ways (`sort_chunks_by_idxs` l. 628–670: `split` + `cat` for tokens and
//!   probabilities, then for the output: 6; fused 2). Hierarchical dispatchers (DeepEP, HybridEP:
//!   Megatron's flex dispatcher) are counted as the all-to-all one with fused permutation (their
//!   own code, `fused_a2a.py`, issues one fused dispatch and combine in place of the exchange's
//!   calls; not counted apart).
//! * **permutation** (`moe_utils.py` `permute` l. 344–495, `unpermute` l. 497–626): unfused, the
//!   map transposed and made contiguous, `argsort`, `%`, `index_select` (4; with the
//!   probabilities, as the all-to-all dispatcher permutes them, 6) and `zeros` + `scatter_add_`
//!   (2) back; with `moe_permute_fusion` one TE call each way ([`permute_calls`]).
//! * **experts besides their GEMMs** (`experts.py`): `TEGroupedMLP` (`--moe-grouped-gemm`,
//!   l. 840–1047): the counts to a list, the activation and the probabilities' product: 4 / 3;
//!   `SequentialMLP` (Megatron's default, l. 1467–1519): the list, two `split`s and a `cat`, and per
//!   local expert the activation and the probabilities' product: `4 + 2·E_l` / `2 + 2·E_l`
//!   ([`expert_calls`]). Their GEMMs are priced apart ([`super::layer::expert_issue_s`]).
//!
//! **CUDA graphs** (Transformer Engine's scoped capture, Megatron-LM `--cuda-graph-impl
//! transformer_engine --cuda-graph-scope …`; `megatron/core/transformer/moe/moe_layer.py`
//! l. 386–390 and `moe_utils.py` `MoECudaGraphPartialCaptureSignal` l. 1537–1700): a captured part
//! is replayed as one graph launch forward and one backward, so its calls' host time goes; the
//! dispatcher's device→host copy and sync are outside every scope of a dropless layer and stay.
//! `moe_router` captures the router (gating, scores, top-k, load-balancing loss);
//! `moe_preprocess` the dispatcher's metadata before the sync (the all-to-all's `preprocess`;
//! the all-gather's slices and count); `attn` the attention sub-layer ([`super::block`]).

pub use super::host_flags::{Balancing, GraphScope, MoeHostFlags};
use super::options::Dispatcher;
use crate::extended::pricing::{Pricing, TORCH_CALL_HOST_S};
use crate::extended::stack::Stack;
use crate::moe_shape::Router;

/// The host time of one counted call [s] where the layer's calls are counted: Megatron-Core
/// (the stack whose code is counted) on a GPU whose host launches the kernels,
/// [`TORCH_CALL_HOST_S`] times the host's speed; `None` elsewhere (other stacks' MoE layers and
/// compiled stacks keep the block's host time per operation).
pub fn call_host_s(p: &Pricing) -> Option<f64> {
    (p.opts.stack == Stack::Megatron && p.hw.host_launched).then(|| TORCH_CALL_HOST_S * p.hw.host_op_time_factor)
}

/// Router gating GEMM `[forward, backward]` (data and weight gradients backward).
pub const GATING: [f64; 2] = [1.0, 2.0];

/// Softmax after top-k, unfused, with the dense probabilities and map `[forward, backward]`.
pub const SOFTMAX_TOPK: [f64; 2] = [9.0, 5.0];

/// Sigmoid scores with the expert bias and group-limited top-k, unfused, with the map and the
/// bias counter `[forward, backward]`.
pub const SIGMOID_GROUP_TOPK: [f64; 2] = [27.0, 9.0];

/// Sinkhorn routing with one iteration (a floor; module docs) `[forward, backward]`.
pub const SINKHORN: [f64; 2] = [26.0, 2.0];

/// What the layer's calls depend on besides the flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerShape {
    /// The router's score function.
    pub router: Router,
    /// The dispatcher.
    pub dispatcher: Dispatcher,
    /// Tensor-parallel degree `tp`.
    pub tp: u64,
    /// `tp·cp` (the aux loss's token reduction group).
    pub tp_cp: u64,
    /// Expert-parallel times expert-tensor-parallel degree (the dispatcher's group is TP×EP).
    pub tp_ep: u64,
    /// Local experts `E/ep`.
    pub local_experts: f64,
}

/// The calls of a load-balancing loss `[forward, backward]` (module docs).
pub fn aux_loss_calls(b: Balancing, router: Router, fused: bool, tp_cp: u64) -> [f64; 2] {
    let reduce = if tp_cp > 1 { 1.0 } else { 0.0 };
    let scores = match (fused, router) {
        (true, _) => 1.0,
        (false, Router::Softmax) => 6.0,
        (false, Router::Sigmoid) => 9.0,
    };
    let loss = if fused { 1.0 } else { 4.0 };
    let seq = if b == Balancing::SeqAuxLoss { 1.0 } else { 0.0 };
    match b {
        Balancing::Sinkhorn | Balancing::None => [0.0, 0.0],
        // Scores, the counts and their reduction, the loss, its logging (3) and the autoscaler.
        _ => [scores + 1.0 + reduce + loss + seq + 3.0 + 1.0, if fused { 3.0 } else { 5.0 }],
    }
}

/// The router's calls `[forward, backward]`: gating, scores and top-k (or Sinkhorn), the loss.
pub fn router_calls(f: &MoeHostFlags, s: &LayerShape) -> [f64; 2] {
    let route = match (f.balancing, f.router_fusion, s.router) {
        (Balancing::Sinkhorn, _, _) => SINKHORN,
        (_, true, Router::Softmax) => [1.0, 1.0],
        (_, true, Router::Sigmoid) => [3.0, 1.0],
        (_, false, Router::Softmax) => SOFTMAX_TOPK,
        (_, false, Router::Sigmoid) => SIGMOID_GROUP_TOPK,
    };
    let aux = aux_loss_calls(f.balancing, s.router, f.router_fusion, s.tp_cp);
    [GATING[0] + route[0] + aux[0], GATING[1] + route[1] + aux[1]]
}

/// The permutation's calls `[forward, backward]` (permute and unpermute), with the
/// probabilities permuted too (`with_probs`: the all-to-all dispatcher).
pub fn permute_calls(fused: bool, with_probs: bool) -> [f64; 2] {
    match (fused, with_probs) {
        (true, _) => [2.0, 2.0],
        (false, false) => [4.0 + 2.0, 2.0 + 1.0],
        (false, true) => [6.0 + 2.0, 4.0 + 1.0],
    }
}

/// The dispatcher's calls `[forward, backward]` without the permutation, split as
/// `(metadata before the sync, the rest)` for the forward (the metadata is what `moe_preprocess`
/// captures): `([metadata_fwd, rest_fwd], bwd)`.
pub fn dispatcher_calls(f: &MoeHostFlags, s: &LayerShape) -> ([f64; 2], f64) {
    let g = if s.tp_ep > 1 { 1.0 } else { 0.0 };
    let many = if s.local_experts > 1.0 { 1.0 } else { 0.0 };
    match s.dispatcher {
        Dispatcher::AllGather => {
            // Metadata: slices (2), sum/cast/.cpu() (3); then the gathers (6g), `.sum().item()` (2),
            // the local probabilities (3), the combine (4g).
            ([5.0, 6.0 * g + 2.0 + 3.0 + 4.0 * g], 8.0 * g + 4.0)
        }
        Dispatcher::AllToAll | Dispatcher::Hierarchical { .. } => {
            let fused = fused_permutation(f, s);
            let tp = if s.tp > 1 { 1.0 } else { 0.0 };
            let metadata = 2.0 + 7.0 * g;
            let dtoh = dtoh_calls(f, s);
            let exchange = 6.0 * g;
            let tp_calls = 10.0 * tp;
            let sort = many * if fused { 2.0 } else { 6.0 };
            let bwd = exchange + 8.0 * tp + many * if fused { 2.0 } else { 6.0 };
            ([metadata, dtoh + exchange + tp_calls + sort], bwd)
        }
    }
}

/// The permutation (and the all-to-all's chunk sort) run as Transformer Engine's fused kernels:
/// `--moe-permute-fusion`, or a flex dispatcher (module docs).
fn fused_permutation(f: &MoeHostFlags, s: &LayerShape) -> bool {
    f.permute_fusion || matches!(s.dispatcher, Dispatcher::Hierarchical { .. })
}

/// The all-to-all dispatcher's device→host copies on its side stream (`_maybe_dtoh_and_synchronize`:
/// the stream wait, the counts' copy, 3 split lists with TP×EP > 1, the per-expert counts with
/// several local experts unless fused, the event's record and its `synchronize`) [count].
fn dtoh_calls(f: &MoeHostFlags, s: &LayerShape) -> f64 {
    let g = if s.tp_ep > 1 { 1.0 } else { 0.0 };
    let unfused_counts = if s.local_experts > 1.0 && !fused_permutation(f, s) { 1.0 } else { 0.0 };
    1.0 + 1.0 + 3.0 * g + unfused_counts + 2.0
}

/// The calls of the dispatcher's forward `rest` ([`dispatcher_calls`]) that come before its
/// device→host sync ([`super::sync`]): the all-gather dispatcher's three gathers (6 with
/// TP×EP > 1), which the counts' `.cpu()` waits for; the all-to-all and flex dispatchers'
/// side-stream copies and the wait ([`dtoh_calls`]).
fn to_sync_calls(f: &MoeHostFlags, s: &LayerShape) -> f64 {
    match s.dispatcher {
        Dispatcher::AllGather if s.tp_ep > 1 => 6.0,
        Dispatcher::AllGather => 0.0,
        Dispatcher::AllToAll | Dispatcher::Hierarchical { .. } => dtoh_calls(f, s),
    }
}

/// The routed experts' calls besides their GEMMs `[forward, backward]`.
pub fn expert_calls(sequential: bool, local_experts: f64) -> [f64; 2] {
    if sequential && local_experts > 1.0 { [4.0 + 2.0 * local_experts, 2.0 + 2.0 * local_experts] } else { [4.0, 3.0] }
}

/// The MoE layer's host calls per micro-batch `[forward, backward]` besides the experts' GEMMs,
/// with the CUDA-graph scopes applied (a captured part: one launch each way).
pub fn layer_calls(f: &MoeHostFlags, s: &LayerShape) -> [f64; 2] {
    let [before, after, bwd] = split_calls(f, s);
    [before + after, bwd]
}

/// The MoE layer's forward host calls split at the dispatcher's device→host sync
/// `[before, after]` ([`super::sync`]): before, the router and the dispatcher's metadata up to
/// the sync ([`to_sync_calls`]); after, the rest of the dispatcher, the permutation and the
/// experts' calls. They add up to [`layer_calls`]'s forward.
pub fn forward_calls_at_sync(f: &MoeHostFlags, s: &LayerShape) -> [f64; 2] {
    let [before, after, _] = split_calls(f, s);
    [before, after]
}

/// `[forward before the sync, forward after it, backward]` with the CUDA-graph scopes applied.
fn split_calls(f: &MoeHostFlags, s: &LayerShape) -> [f64; 3] {
    let router = router_calls(f, s);
    let ([metadata, rest], dispatch_bwd) = dispatcher_calls(f, s);
    let with_probs = !matches!(s.dispatcher, Dispatcher::AllGather);
    let fused = fused_permutation(f, s);
    let permute = permute_calls(fused, with_probs);
    let experts = expert_calls(f.sequential_experts, s.local_experts);
    let graph = |captured: bool, calls: [f64; 2]| if captured { [1.0, 1.0] } else { calls };
    let router = graph(f.graphs.moe_router, router);
    // `moe_preprocess` captures the metadata; its backward has none.
    let metadata = if f.graphs.moe_preprocess { 1.0 } else { metadata };
    let to_sync = to_sync_calls(f, s);
    [
        router[0] + metadata + to_sync,
        rest - to_sync + permute[0] + experts[0],
        router[1] + dispatch_bwd + permute[1] + experts[1],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dispatcher: Dispatcher, tp: u64, tp_ep: u64, local: f64) -> LayerShape {
        LayerShape { router: Router::Softmax, dispatcher, tp, tp_cp: tp, tp_ep, local_experts: local }
    }

    #[test]
    fn a_small_all_gather_layer_by_hand() {
        // Megatron's functional test `te_8experts2parallel`: 8 experts, softmax top-2 with
        // `aux_loss`, all-gather dispatcher over TP 2 × EP 2 (4 local experts), unfused
        // permutation, SequentialMLP.
        let f = MoeHostFlags { sequential_experts: true, ..MoeHostFlags::default() };
        let s = shape(Dispatcher::AllGather, 2, 4, 4.0);
        // Router: gating 1 + softmax top-k 9 + aux loss (scores 6, count 1, all-reduce over
        // TP 2: 1, loss 4, logging 3, autoscaler 1 = 16) = 26 forward; 2 + 5 + 5 = 12 backward.
        assert_eq!(router_calls(&f, &s), [26.0, 12.0]);
        // Dispatcher: metadata 5, then gathers 6 + item 2 + probabilities 3 + combine 4 = 15;
        // backward 8 + 4 = 12.
        assert_eq!(dispatcher_calls(&f, &s), ([5.0, 15.0], 12.0));
        // Permutation (tokens only): 4 + 2 forward, 2 + 1 backward.
        assert_eq!(permute_calls(false, false), [6.0, 3.0]);
        // SequentialMLP over 4 local experts: 4 + 8 forward, 2 + 8 backward.
        assert_eq!(expert_calls(true, 4.0), [12.0, 10.0]);
        // 26 + 5 + 15 + 6 + 12 = 64 forward; 12 + 12 + 3 + 10 = 37 backward.
        assert_eq!(layer_calls(&f, &s), [64.0, 37.0]);
        // Grouped experts: 4 / 3 in place of 12 / 10.
        assert_eq!(layer_calls(&MoeHostFlags::default(), &s), [56.0, 30.0]);
        // At the sync (`.cpu()` of the counts): before it the router 26, the metadata 5 and the
        // three gathers 6 = 37; after it 15 − 6 = 9 of the dispatcher, the permutation 6 and the
        // experts 12 = 27; 37 + 27 = 64.
        assert_eq!(forward_calls_at_sync(&f, &s), [37.0, 27.0]);
    }

    #[test]
    fn an_all_to_all_layer_and_its_graphs_by_hand() {
        // DeepSeek-style: sigmoid, group-limited top-k with expert bias, `seq_aux_loss`,
        // all-to-all over EP 4 (TP 1), 8 local experts, unfused permutation, grouped experts.
        let f = MoeHostFlags { balancing: Balancing::SeqAuxLoss, ..MoeHostFlags::default() };
        let s = LayerShape { router: Router::Sigmoid, ..shape(Dispatcher::AllToAll, 1, 4, 8.0) };
        // Router: 1 + 27 + (9 + 1 + 0 + 4 + 1 + 3 + 1 = 19) = 47; backward 2 + 9 + 5 = 16.
        assert_eq!(router_calls(&f, &s), [47.0, 16.0]);
        // Metadata 2 + 7 = 9; then dtoh 1 + 1 + 3 + 1 + 2 = 8, exchange 6, sort 6: 20;
        // backward 6 + 6 = 12.
        assert_eq!(dispatcher_calls(&f, &s), ([9.0, 20.0], 12.0));
        // Permutation with probabilities: 8 / 5; experts 4 / 3.
        assert_eq!(layer_calls(&f, &s), [47.0 + 9.0 + 20.0 + 8.0 + 4.0, 16.0 + 12.0 + 5.0 + 3.0]);
        // At the sync: router 47, metadata 9 and the side stream's copies and wait 8 = 64 before;
        // the exchange 6, the sort 6, the permutation 8 and the experts 4 = 24 after.
        assert_eq!(forward_calls_at_sync(&f, &s), [64.0, 24.0]);
        // Graphs on moe_router and moe_preprocess: router 1 / 1, metadata 1; the rest stays.
        let g = MoeHostFlags { graphs: GraphScope { moe_router: true, moe_preprocess: true, attn: false }, ..f };
        assert_eq!(layer_calls(&g, &s), [1.0 + 1.0 + 20.0 + 8.0 + 4.0, 1.0 + 12.0 + 5.0 + 3.0]);
        // Permute fusion: the unfused counts' copy goes, the sorts and permutation are one call each.
        let fused = MoeHostFlags { permute_fusion: true, ..f };
        assert_eq!(dispatcher_calls(&fused, &s), ([9.0, 7.0 + 6.0 + 2.0], 6.0 + 2.0));
        assert_eq!(permute_calls(true, true), [2.0, 2.0]);
        // Router fusion: sigmoid 3 / 1, the loss's scores and loss 1 each: 1 + 3 + (1 + 1 + 1 + 1 + 3 + 1).
        let rf = MoeHostFlags { router_fusion: true, ..f };
        assert_eq!(router_calls(&rf, &s), [12.0, 2.0 + 1.0 + 3.0]);
    }

    #[test]
    fn scopes_and_balancing_read_back() {
        let g = GraphScope::parse("attn+moe_router").unwrap();
        assert!(g.attn && g.moe_router && !g.moe_preprocess);
        assert_eq!(GraphScope::parse(&g.names()), Some(g));
        assert_eq!(GraphScope::parse("none"), Some(GraphScope::default()));
        assert_eq!(GraphScope::parse("mlp"), None);
        assert_eq!(Balancing::from_name("sinkhorn"), Some(Balancing::Sinkhorn));
        // Sinkhorn: no loss, one iteration counted.
        let f = MoeHostFlags { balancing: Balancing::Sinkhorn, ..MoeHostFlags::default() };
        assert_eq!(router_calls(&f, &shape(Dispatcher::AllGather, 1, 1, 1.0)), [27.0, 4.0]);
    }
}
