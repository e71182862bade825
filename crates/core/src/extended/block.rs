//! One transformer block on one device for one micro-batch: its matmuls (Q/K/V, output
//! projection, MLP with or without gate), flash attention (causal or full), element-wise traffic,
//! tensor-parallel collectives, the context-parallel K/V ring, its parameters and the activations it
//! keeps for the backward pass.
//!
//! Counting conventions (each a correction of the reference, spec §9):
//! * a matmul `(m×k)·(k×n)` costs `2·m·k·n` FLOPs (Q11: the reference counts `k + (k−1)` per
//!   output); its backward is two matmuls of the same size (input and weight gradients);
//! * flash attention's forward is `4·b·s_q·s_k·a·d` FLOPs (logits and attend), halved by a causal
//!   mask (Q15); its backward is 2.5× the forward (it recomputes the logits, then forms the
//!   gradients of P, V, Q and K: five matmuls against two), which already contains the
//!   recomputation the reference adds on top;
//! * softmax and dropout inside the fused kernel are not priced separately (Q6's `R_mat/R_vec`
//!   inflation is dropped: they overlap with the matmuls in flash attention);
//! * element-wise work (two norms, two residual adds with bias and dropout fused, the MLP
//!   activation, FP8 casts) is priced by its HBM traffic; its backward moves twice the forward's.

use super::layout::Layout;
use super::options::{ExtendedOptions, Recompute};
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::reference::collective::CollectiveKind;

/// Element traffic of one token's element-wise work outside the MLP activation, in multiples of
/// the width `h`: two norms (read `h`, write `h` each) and two residual adds with the bias and
/// dropout of the preceding projection fused (read two `h`, write one each).
const TOKENWISE_ELEMENTS_PER_H: f64 = 2.0 * 2.0 + 2.0 * 3.0;

/// Backward element-wise traffic relative to the forward (each op reads its output gradient and
/// its saved input and writes its input gradient).
const BACKWARD_TRAFFIC_FACTOR: f64 = 2.0;

/// Flash attention's backward FLOPs relative to its forward: five matmuls (logits recomputed,
/// gradients of P, V, Q, K) against two.
pub const FLASH_BACKWARD_FACTOR: f64 = 2.5;

/// Extra bytes per element of an FP8 cast: read the 16-bit tensor, write one byte.
const FP8_CAST_BYTES: f64 = 1.0;

/// The cost of one block on one device for one micro-batch.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BlockCost {
    /// Forward pass (matmuls, attention, element-wise, TP collectives, exposed CP ring).
    pub fwd: Pass,
    /// Backward pass, without recomputation.
    pub bwd: Pass,
    /// Extra work of activation recomputation (a forward when `Full`).
    pub recompute: Pass,
    /// Parameters of the block held by this device before any ZeRO sharding [count].
    pub parameters: f64,
    /// Activations kept for the backward pass without recomputation [B].
    pub activation_bytes: f64,
    /// The block's input, all that full recomputation keeps [B].
    pub input_bytes: f64,
}

impl BlockCost {
    /// Forward time [s].
    pub fn fwd_s(&self) -> f64 {
        self.fwd.time()
    }

    /// Backward time including recomputation [s].
    pub fn bwd_s(&self) -> f64 {
        self.bwd.time() + self.recompute.time()
    }

    /// Activations this block keeps per micro-batch under the recomputation mode [B].
    pub fn kept_bytes(&self, recompute: Recompute) -> f64 {
        match recompute {
            Recompute::Full => self.input_bytes,
            // With flash attention no score matrix is stored, so selective recomputation (which
            // drops exactly that) keeps the same tensors as none.
            Recompute::None | Recompute::Selective => self.activation_bytes,
        }
    }
}

/// Prices one block (see the module documentation).
pub fn block_cost(w: &Workload, layout: &Layout, p: &Pricing) -> BlockCost {
    let o: &ExtendedOptions = p.opts;
    let tp = layout.tp as f64;
    let tokens = layout.local_tokens(w);
    let (h, f) = (w.hidden as f64, w.ffn_hidden as f64);
    let q_w = w.q_width() as f64;
    let kv_w = w.kv_width(o.grouped_query_attention) as f64;
    // K/V heads are split over tp while there are enough of them, replicated otherwise.
    let kv_local = (kv_w / tp).max(w.head_dim as f64);
    let gates = w.mlp_in_matrices(o.gated_mlp) as f64;
    let es = p.hw.element_bytes;

    // Matmuls of the linear layers (column-parallel in, row-parallel out).
    // With unstructured weight sparsity on a part that skips zeros, their FLOPs scale by the
    // density (see `super::sparsity`); the backward's two matmuls per weight scale alike.
    let linear_fwd = p.weight_linear(tokens, h, (q_w + 2.0 * kv_w) / tp)
        + p.weight_linear(tokens, q_w / tp, h)
        + p.weight_linear(tokens, h, gates * f / tp)
        + p.weight_linear(tokens, f / tp, h);

    // Flash attention: queries of this device's sequence shard against all keys.
    let (mbs, s) = (layout.mbs as f64, w.seq_len as f64);
    let s_q = s / layout.cp as f64;
    let heads_local = (w.heads as f64 / tp).max(1.0);
    let mask = if o.causal { 0.5 } else { 1.0 };
    let att_tflop = 4.0 * mbs * s_q * s * heads_local * w.head_dim as f64 * mask * 1e-12;
    let att_bytes = (2.0 * tokens * q_w / tp + 2.0 * mbs * s * kv_local) * es;
    let att_fwd = p.attention(att_tflop, att_bytes);
    let att_bwd = p.attention(att_tflop * FLASH_BACKWARD_FACTOR, att_bytes * FLASH_BACKWARD_FACTOR);

    // Element-wise traffic; with sequence parallelism the token-wise part runs on 1/tp of the tokens.
    let tokenwise = if o.sequence_parallel { tokens / tp } else { tokens };
    let mut ew_bytes = TOKENWISE_ELEMENTS_PER_H * h * tokenwise * es + (gates + 1.0) * f / tp * tokens * es;
    if p.hw.operand_bytes < es {
        // FP8: the inputs of the four matmuls are cast (weights are cast once and cached).
        ew_bytes += (2.0 * h + q_w / tp + f / tp) * tokens * (es + FP8_CAST_BYTES);
    }
    let ew_fwd = p.elementwise(ew_bytes);
    let ew_bwd = p.elementwise(ew_bytes * BACKWARD_TRAFFIC_FACTOR);

    // Tensor parallelism: per pass two all-gathers and two reduce-scatters of the block's
    // activations (sequence parallel), or two all-reduces of the same volume (without).
    let tp_pass = if layout.tp > 1 {
        let v = tokens * h * es * 1e-9;
        let (g, share) = (layout.tp, layout.placement.tp);
        2.0 * (p.collective(CollectiveKind::AllGather, v, g, share)
            + p.collective(CollectiveKind::ReduceScatter, v, g, share))
    } else {
        0.0
    };

    let (cp_fwd, cp_bwd) = context_parallel(w, layout, p, kv_local, att_fwd.compute_s, att_bwd.compute_s);

    let fwd = linear_fwd + att_fwd + ew_fwd + Pass { tp_comm_s: tp_pass, cp_comm_s: cp_fwd, ..Pass::default() };
    let bwd =
        linear_fwd.times(2.0) + att_bwd + ew_bwd + Pass { tp_comm_s: tp_pass, cp_comm_s: cp_bwd, ..Pass::default() };
    let recompute = if o.recompute == Recompute::Full { fwd } else { Pass::default() };

    // Activations kept (flash attention: no score matrix): norm inputs, Q/K/V, attention output,
    // MLP input, MLP pre-activation(s) and activation output, per token.
    let per_token_tokenwise = 3.0 * h; // first norm input, second norm input, MLP input
    let per_token_sharded = h + q_w / tp + 2.0 * kv_local + q_w / tp + (gates + 1.0) * f / tp;
    let sp = if o.sequence_parallel { tp } else { 1.0 };
    let activation_bytes = (per_token_tokenwise / sp + per_token_sharded) * tokens * es;
    let input_bytes = h / sp * tokens * es;

    BlockCost {
        fwd,
        bwd,
        recompute,
        parameters: w.block_parameters(o.grouped_query_attention, o.gated_mlp) / tp,
        activation_bytes,
        input_bytes,
    }
}

/// Exposed context-parallel time of one block (forward, backward) [s].
///
/// Ring (default): `cp − 1` steps, each passing this device's K/V chunk (forward) or K/V and their
/// gradients (backward) to the next rank while attending to the chunk at hand; a step exposes only
/// the transfer time beyond one chunk's attention compute. Off: the reference's pricing, an
/// all-gather of K and V (plus a reduce-scatter of their gradients backward) without overlap. A
/// ring crossing fast domains runs at the slow tier.
fn context_parallel(
    w: &Workload,
    layout: &Layout,
    p: &Pricing,
    kv_local: f64,
    att_fwd_s: f64,
    att_bwd_s: f64,
) -> (f64, f64) {
    let cp = layout.cp;
    if cp <= 1 {
        return (0.0, 0.0);
    }
    let es = p.hw.element_bytes;
    let chunk_gb = 2.0 * layout.mbs as f64 * (w.seq_len / cp) as f64 * kv_local * es * 1e-9;
    if p.opts.cp_ring_overlap {
        let fast = layout.placement.cp == cp;
        let steps = (cp - 1) as f64;
        let fwd = steps * (p.p2p(chunk_gb, fast) - att_fwd_s / cp as f64).max(0.0);
        let bwd = steps * (p.p2p(2.0 * chunk_gb, fast) - att_bwd_s / cp as f64).max(0.0);
        (fwd, bwd)
    } else {
        let full = chunk_gb * cp as f64;
        let share = layout.placement.cp;
        let gather = p.collective(CollectiveKind::AllGather, full, cp, share);
        (gather, gather + p.collective(CollectiveKind::ReduceScatter, full, cp, share))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;

    fn gpt(seq: u64) -> Workload {
        Workload {
            seq_len: seq,
            hidden: 4096,
            heads: 32,
            kv_heads: 32,
            head_dim: 128,
            layers: 32,
            ffn_hidden: 16384,
            gated_mlp: false,
            vocab: None,
            moe: None,
            mla: None,
            mtp_layers: 0,
        }
    }

    fn price(w: &Workload, layout: &Layout, opts: ExtendedOptions) -> BlockCost {
        let hw = Hardware::from_params(&SystemParams::h200().with_nvlink_size(8), false);
        block_cost(w, layout, &Pricing { hw: &hw, opts: &opts })
    }

    fn one_gpu(mbs: u64) -> Layout {
        Layout::placed(1, 1, 1, 1, mbs, mbs, 8)
    }

    #[test]
    fn forward_flops_by_hand() {
        // h = 4096, f = 4h, s = 2048, mbs 1, causal: linear 2·s·(4h² + 2·h·f) = 24·s·h²,
        // attention 4·s²·h/2.
        let w = gpt(2048);
        let c = price(&w, &one_gpu(1), ExtendedOptions::realistic());
        let (s, h) = (2048.0, 4096.0);
        let expect = (24.0 * s * h * h + 2.0 * s * s * h) * 1e-12;
        assert!((c.fwd.tflop - expect).abs() < 1e-9 * expect, "{} vs {expect}", c.fwd.tflop);
        // Backward: linear twice, attention 2.5 times.
        let expect_bwd = (48.0 * s * h * h + 2.5 * 2.0 * s * s * h) * 1e-12;
        assert!((c.bwd.tflop - expect_bwd).abs() < 1e-9 * expect_bwd);
    }

    #[test]
    fn weight_sparsity_scales_only_the_weight_matmuls_on_wafer_scale_parts() {
        // h = 4096, f = 4h, s = 2048, 90 % sparse: linear 0.1·24·s·h², attention 2·s²·h unchanged;
        // backward: linear 0.1·48·s·h², attention 2.5·2·s²·h.
        let w = gpt(2048);
        let opts = ExtendedOptions { weight_sparsity: 0.9, ..ExtendedOptions::realistic() };
        let mut hw = Hardware::from_params(&SystemParams::h200().with_nvlink_size(8), false);
        let dense = block_cost(&w, &one_gpu(1), &Pricing { hw: &hw, opts: &ExtendedOptions::realistic() });
        let gpu = block_cost(&w, &one_gpu(1), &Pricing { hw: &hw, opts: &opts });
        assert_eq!(gpu, dense, "a GPU prices unstructured sparse weights as dense");
        hw.unstructured_sparsity = true;
        let c = block_cost(&w, &one_gpu(1), &Pricing { hw: &hw, opts: &opts });
        let (s, h) = (2048.0, 4096.0);
        let fwd = (0.1 * 24.0 * s * h * h + 2.0 * s * s * h) * 1e-12;
        let bwd = (0.1 * 48.0 * s * h * h + 2.5 * 2.0 * s * s * h) * 1e-12;
        assert!((c.fwd.tflop - fwd).abs() < 1e-9 * fwd, "{} vs {fwd}", c.fwd.tflop);
        assert!((c.bwd.tflop - bwd).abs() < 1e-9 * bwd);
        // Memory stays dense.
        assert_eq!((c.parameters, c.activation_bytes), (dense.parameters, dense.activation_bytes));
    }

    #[test]
    fn causal_mask_halves_the_attention_flops() {
        let w = gpt(8192);
        let causal = price(&w, &one_gpu(1), ExtendedOptions::realistic());
        let full = price(&w, &one_gpu(1), ExtendedOptions { causal: false, ..ExtendedOptions::realistic() });
        let att_full = 4.0 * 8192.0 * 8192.0 * 4096.0 * 1e-12;
        assert!(((full.fwd.tflop - causal.fwd.tflop) - att_full / 2.0).abs() < 1e-9);
    }

    #[test]
    fn swiglu_adds_the_third_matrix_and_gqa_narrows_kv() {
        let llama = Workload { gated_mlp: true, kv_heads: 8, ffn_hidden: 14336, ..gpt(4096) };
        let on = price(&llama, &one_gpu(1), ExtendedOptions::realistic());
        let off = price(
            &llama,
            &one_gpu(1),
            ExtendedOptions { gated_mlp: false, grouped_query_attention: false, ..ExtendedOptions::realistic() },
        );
        let (s, h, f) = (4096.0, 4096.0, 14336.0);
        // Gate matrix: +2·s·h·f forward; GQA: K and V of 8·128 = 1024 columns instead of 4096.
        let delta = (2.0 * s * h * f - 2.0 * s * h * 2.0 * (4096.0 - 1024.0)) * 1e-12;
        assert!(((on.fwd.tflop - off.fwd.tflop) - delta).abs() < 1e-9, "{}", on.fwd.tflop - off.fwd.tflop);
        assert_eq!(on.parameters - off.parameters, h * f - 2.0 * h * (4096.0 - 1024.0));
    }

    #[test]
    fn full_recompute_adds_one_forward() {
        let w = gpt(2048);
        let none =
            price(&w, &one_gpu(2), ExtendedOptions { recompute: Recompute::None, ..ExtendedOptions::realistic() });
        let full =
            price(&w, &one_gpu(2), ExtendedOptions { recompute: Recompute::Full, ..ExtendedOptions::realistic() });
        assert_eq!(full.recompute, full.fwd);
        assert_eq!(none.recompute, Pass::default());
        assert!((full.bwd_s() - none.bwd_s() - none.fwd_s()).abs() < 1e-15);
        // Memory: only the block input is kept.
        assert!(full.kept_bytes(Recompute::Full) * 10.0 < none.kept_bytes(Recompute::None));
    }

    #[test]
    fn tensor_and_context_parallel_split_the_work() {
        let w = gpt(8192);
        let one = price(&w, &one_gpu(1), ExtendedOptions::realistic());
        let tp4 = price(&w, &Layout::placed(4, 1, 1, 1, 1, 1, 8), ExtendedOptions::realistic());
        assert!((tp4.fwd.tflop * 4.0 - one.fwd.tflop).abs() < 1e-9 * one.fwd.tflop);
        assert!(tp4.fwd.tp_comm_s > 0.0 && one.fwd.tp_comm_s == 0.0);
        let cp2 = price(&w, &Layout::placed(1, 2, 1, 1, 1, 1, 8), ExtendedOptions::realistic());
        assert!((cp2.fwd.tflop * 2.0 - one.fwd.tflop).abs() < 1e-9 * one.fwd.tflop);
        // Without the ring overlap the K/V all-gather is exposed in full.
        let gathered = price(
            &w,
            &Layout::placed(1, 2, 1, 1, 1, 1, 8),
            ExtendedOptions { cp_ring_overlap: false, ..ExtendedOptions::realistic() },
        );
        assert!(gathered.fwd.cp_comm_s > cp2.fwd.cp_comm_s);
    }
}
