//! The optimizer's algorithm as an input: Adam (every other module's default) or Muon as
//! Megatron-LM runs it (`--optimizer muon`), replicated or layer-wise distributed, with the
//! per-step work Muon adds.
//!
//! **What Muon does per step** (Megatron-LM at commit d98e8a6, `megatron/core/optimizer/
//! emerging_optimizers.py` `TensorParallelMuon`, lines 177–440, over NVIDIA-NeMo's
//! `emerging_optimizers` package, `orthogonalized_optimizers/orthogonalized_optimizer.py`
//! `OrthogonalizedOptimizer.step` and `muon_utils.py` `newton_schulz`/`newton_schulz_step` at
//! commit 0001f6e): every 2-D weight matrix that is not the embedding or the output layer
//! (`emerging_optimizers.py:140–147`, `_is_nonlinear_or_embedding`: norms, biases, embedding and
//! head stay with Adam, `muon_scalar_optimizer = 'adam'`, `optimizer_config.py:294`) is updated
//! one parameter at a time from a Python loop:
//! * weight decay `p.add_(p, …)`, momentum `exp_avg.lerp_(grad, …)` (no Nesterov: Megatron's
//!   `muon_nesterov = False`, `optimizer_config.py:266`) and the update `p.add_(grad, …)`: three
//!   element-wise operations per parameter ([`PER_PARAMETER_OPERATIONS`]);
//! * the fused Q/K/V matrix split per query group into its query, key and value parts, each
//!   orthogonalized apart (`muon_split_qkv = True`, `optimizer_config.py:263`;
//!   `emerging_optimizers.py:407–437`): a copy per part (the reshape of a strided split) and one
//!   concatenation;
//! * Newton–Schulz on each (part) matrix of `a × b` (`a ≤ b`; transposed so the Gram matrix is the
//!   smaller one): normalize (norm, clamp, divide), cast to BF16 (`muon_fp32_matmul_prec =
//!   "medium"`), `muon_num_ns_steps = 5` steps (`optimizer_config.py:279`) of
//!   `A = X·Xᵀ`, `B = b·A + c·A·A`, `X = a·X + B·X` (three GEMMs: `2a²b + 2a³ + 2a²b` FLOPs), cast
//!   back to FP32, and the scale factor applied (two multiplies): [`ns_operations`] kernels and
//!   [`ns_tflop`] of work;
//! * under tensor parallelism (`muon_tp_mode = "duplicated"`, `optimizer_config.py:282`) each TP
//!   rank all-gathers its shard, orthogonalizes the whole matrix and keeps its chunk: the whole
//!   matrix's FLOPs on every TP rank, and an all-gather and a concatenation more per call.
//!
//! **Which ranks do which matrices.** Replicated (`--optimizer muon`): every data-parallel rank
//! orthogonalizes every matrix it holds. Layer-wise distributed (`--optimizer muon
//! --use-distributed-optimizer`, or the older `dist_muon`: `megatron/training/arguments.py:
//! 1724–1736` turns the distributed optimizer into `use_layer_wise_distributed_optimizer`):
//! `LayerWiseDistributedOptimizer` (`layer_wise_optimizer.py:167–330`) deals whole parameters to
//! the ranks of the data × context group (experts' to the expert-data-parallel group) balanced by
//! their Newton–Schulz cost (`max·min²`), each rank updates its own and all-gathers the rest:
//! each rank does `1/(dp·cp)` of the dense matrices' work and `1/edp` of its experts' (the
//! balanced share; the all-gather is the distributed optimizer's parameter gather, priced as
//! before).
//!
//! **Time.** The loop runs on the host and issues each operation's kernel; nothing in it waits
//! for the GPU, so the step takes the larger of its host time (operations × the host time per
//! operation, [`super::block::host_time_per_operation_s`], unchanged) and its GPU time (the
//! Newton–Schulz GEMMs at the linear layers' rate, [`super::pricing::Pricing::linear`]).
//!
//! **Memory.** Muon keeps one FP32 momentum buffer per matrix parameter (`state["momentum_buffer"]
//! = torch.zeros_like(grad)`, the FP32 main gradient) where Adam keeps two moments: the matrices'
//! optimizer states are 4 + 4 B per parameter (FP32 master and momentum) instead of 4 + 8.

use super::layout::Layout;
use super::moe::ExpertLayout;
use super::pricing::Pricing;
use super::workload::Workload;
use crate::moe_shape::MoeShape;

pub use super::choices::Optimizer;

/// Newton–Schulz steps per orthogonalization (`muon_num_ns_steps`, `optimizer_config.py:279`).
pub const NS_STEPS: f64 = 5.0;

/// Element-wise operations per Muon parameter around its orthogonalization: weight decay, the
/// momentum's `lerp_` and the update (`OrthogonalizedOptimizer.step`).
pub const PER_PARAMETER_OPERATIONS: f64 = 3.0;

/// Operations one Newton–Schulz call issues: normalize (3: norm, clamp, divide), cast to BF16,
/// three GEMMs per step, cast back to FP32, the two scale multiplies; plus an all-gather and a
/// concatenation when the matrix is a tensor-parallel shard gathered first (`gathered`).
pub fn ns_operations(gathered: bool) -> f64 {
    3.0 + 1.0 + 3.0 * NS_STEPS + 1.0 + 2.0 + if gathered { 2.0 } else { 0.0 }
}

/// Work of one Newton–Schulz call on an `rows × cols` matrix [TFLOP]: per step
/// `4·a²·b + 2·a³` with `a = min`, `b = max` (`X·Xᵀ`, `A·A`, `B·X`).
pub fn ns_tflop(rows: f64, cols: f64) -> f64 {
    let (a, b) = (rows.min(cols), rows.max(cols));
    NS_STEPS * (4.0 * a * a * b + 2.0 * a * a * a) * 1e-12
}

/// One weight parameter Muon updates, whole (as Newton–Schulz sees it after any gather).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MuonMatrix {
    /// The parts orthogonalized apart, `(rows, cols)` each (one part, or Q, K and V).
    pub parts: [(f64, f64); 3],
    /// How many of `parts` are used (1 or 3).
    pub count: usize,
    /// A tensor-parallel shard gathered before and chunked after (duplicated mode).
    pub gathered: bool,
}

impl MuonMatrix {
    fn whole(rows: f64, cols: f64, gathered: bool) -> MuonMatrix {
        MuonMatrix { parts: [(rows, cols), (0.0, 0.0), (0.0, 0.0)], count: 1, gathered }
    }

    /// Host operations of this parameter's update.
    pub fn operations(&self) -> f64 {
        let split = if self.count > 1 { self.count as f64 + 1.0 } else { 0.0 };
        PER_PARAMETER_OPERATIONS + split + self.count as f64 * ns_operations(self.gathered)
    }

    /// The Newton–Schulz GEMMs' time at the linear layers' rate [s].
    pub fn gpu_s(&self, p: &Pricing) -> f64 {
        self.parts[..self.count]
            .iter()
            .map(|&(r, c)| {
                let (a, b) = (r.min(c), r.max(c));
                NS_STEPS * (p.linear(a, b, a).time() + p.linear(a, a, a).time() + p.linear(a, a, b).time())
            })
            .sum()
    }
}

/// The Muon-managed matrices of one block's attention (whole sizes): the fused Q/K/V split into
/// its three parts and the output projection; latent attention's down- and up-projections and
/// output (each whole: the split is for `linear_qkv` only).
fn attention_matrices(w: &Workload, p: &Pricing, tp: bool) -> Vec<MuonMatrix> {
    let h = w.hidden as f64;
    if let Some(mla) = &w.mla {
        let heads = w.heads as f64;
        let qk = (mla.qk_nope_head_dim + mla.qk_rope_head_dim) as f64;
        let (kv, v) = (mla.kv_lora_rank as f64, mla.v_head_dim as f64);
        let mut m = vec![
            MuonMatrix::whole(kv + mla.qk_rope_head_dim as f64, h, false),
            MuonMatrix::whole(heads * (mla.qk_nope_head_dim as f64 + v), kv, tp),
            MuonMatrix::whole(h, heads * v, tp),
        ];
        match mla.q_lora_rank {
            Some(q) => {
                m.push(MuonMatrix::whole(q as f64, h, false));
                m.push(MuonMatrix::whole(heads * qk, q as f64, tp));
            }
            None => m.push(MuonMatrix::whole(heads * qk, h, tp)),
        }
        return m;
    }
    let d = w.head_dim as f64;
    let kv = if p.opts.model.grouped_query_attention { w.kv_heads } else { w.heads } as f64;
    let q = w.heads as f64 * d;
    vec![MuonMatrix { parts: [(q, h), (kv * d, h), (kv * d, h)], count: 3, gathered: tp }, MuonMatrix::whole(h, q, tp)]
}

/// An MLP's two matrices of width `f` (`gates` input matrices fused into one `fc1`).
fn mlp_matrices(h: f64, f: f64, gates: f64, tp: bool) -> [MuonMatrix; 2] {
    [MuonMatrix::whole(gates * f, h, tp), MuonMatrix::whole(h, f, tp)]
}

/// The host and GPU time of updating `matrices`, `share` of them on this rank [s, s].
fn sums(matrices: &[MuonMatrix], p: &Pricing, share: f64) -> (f64, f64) {
    let host = p.host_time_per_operation_s();
    matrices.iter().fold((0.0, 0.0), |(h, g), m| (h + share * m.operations() * host, g + share * m.gpu_s(p)))
}

/// The blocks one rank updates: `dense` dense blocks and `moe` MoE blocks (with `experts` their
/// shape and expert layout); the embedding and head are Adam's.
#[derive(Debug, Clone, Copy)]
pub struct RankBlocks<'a> {
    /// Dense blocks on the rank.
    pub dense: f64,
    /// MoE blocks on the rank.
    pub moe: f64,
    /// The MoE blocks' experts and expert layout (`None` for a dense model).
    pub experts: Option<(&'a MoeShape, &'a ExpertLayout)>,
}

/// The time Muon's step adds on one rank over Adam's [s]: `max(host, GPU)` of its matrices'
/// updates (module docs), 0 under Adam. Dense parameters are those of the attention and dense
/// MLPs, the router and the shared experts (dealt over `dp·cp` ranks under the layer-wise
/// variant); the routed experts' are the rank's `E/ep` local experts (dealt over `edp`).
pub fn muon_step_s(w: &Workload, layout: &Layout, p: &Pricing, blocks: RankBlocks) -> f64 {
    let optimizer = p.opts.optimizer;
    if !optimizer.is_muon() {
        return 0.0;
    }
    let tp = layout.tp > 1;
    let h = w.hidden as f64;
    let distributed = optimizer == Optimizer::DistMuon;
    let dense_share = if distributed { 1.0 / (layout.dp * layout.cp).max(1) as f64 } else { 1.0 };
    let attention = attention_matrices(w, p, tp);
    let dense_gates = if w.gated_mlp && p.opts.model.gated_mlp { 2.0 } else { 1.0 };
    let mut dense_block = attention.clone();
    dense_block.extend(mlp_matrices(h, w.ffn_hidden as f64, dense_gates, tp));
    let (mut host, mut gpu) = sums(&dense_block, p, dense_share * blocks.dense);
    if let Some((m, el)) = blocks.experts {
        let gates = if m.gated { 2.0 } else { 1.0 };
        let mut shared = attention;
        shared.push(MuonMatrix::whole(m.experts as f64, h, false));
        if m.shared_experts > 0 {
            shared.extend(mlp_matrices(h, (m.shared_experts * m.shared_ffn) as f64, gates, tp));
        }
        let (sh, sg) = sums(&shared, p, dense_share * blocks.moe);
        let expert_share = if distributed { 1.0 / el.edp.max(1) as f64 } else { 1.0 };
        let local = mlp_matrices(h, m.expert_ffn as f64, gates, el.etp > 1);
        let (eh, eg) = sums(&local, p, expert_share * blocks.moe * m.local_experts(el.ep));
        host += sh + eh;
        gpu += sg + eg;
    }
    host.max(gpu)
}

/// Bytes of one FP32 moment [B]: Muon keeps one momentum buffer per matrix parameter beside the
/// FP32 master weight where Adam keeps two moments (4 + 4 B instead of 4 + 8).
pub const MUON_MOMENTUM_BYTES: f64 = 4.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;
    use crate::extended::options::ExtendedOptions;
    use crate::moe_shape::Router;

    /// Megatron's MoE functional test model: 12 blocks of width 512, 8 heads of 64, 8 experts of
    /// width 1024 (GELU), top-2.
    fn ft() -> (Workload, MoeShape) {
        let m = MoeShape {
            experts: 8,
            expert_ffn: 1024,
            top_k: 2,
            shared_experts: 0,
            shared_ffn: 0,
            gated: false,
            first_dense: 0,
            moe_every: 1,
            router: Router::Softmax,
            extras: crate::moe_shape::ExpertExtras::default(),
        };
        let w = Workload { vocab: Some(50257), moe: Some(m), ..Workload::MEGATRON_TEST_GPT };
        (w, m)
    }

    #[test]
    fn newton_schulz_by_hand() {
        // 512 × 1024: per step 4·512²·1024 + 2·512³ = 1,073,741,824 + 268,435,456; five steps.
        assert!((ns_tflop(1024.0, 512.0) - 5.0 * 1_342_177_280.0e-12).abs() < 1e-18);
        // 3 + 1 + 15 + 1 + 2 = 22 kernels, 24 gathered; a plain parameter 25, Q/K/V 3 + 4 + 66.
        assert_eq!(ns_operations(false), 22.0);
        assert_eq!(ns_operations(true), 24.0);
        assert_eq!(MuonMatrix::whole(512.0, 512.0, false).operations(), 25.0);
        let qkv = MuonMatrix { parts: [(512.0, 512.0); 3], count: 3, gathered: false };
        assert_eq!(qkv.operations(), 73.0);
    }

    #[test]
    fn the_functional_tests_muon_step_by_hand() {
        // EP 8 over 8 GPUs (dp 8, tp 1), one expert per rank, 12 MoE blocks, an H200 host (factor 1: the DGX H100 figure)
        // (130 µs per operation). Per block: Q/K/V 73, output 25, router (8 × 512) 25, the local
        // expert's fc1 and fc2 25 each: 173 operations; 12 blocks: 2,076 → 269.88 ms. The GEMMs
        // are microseconds: the host time is the step.
        let (w, m) = ft();
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let layout = Layout::placed(1, 1, 1, 8, 4, 32, 8).with_experts(8, 1);
        let el = ExpertLayout::fold(&layout, &m, 8, 1).unwrap();
        let price = |optimizer| {
            let opts = ExtendedOptions { optimizer, ..ExtendedOptions::realistic() };
            let p = Pricing { hw: &hw, opts: &opts };
            let host = p.host_time_per_operation_s();
            (muon_step_s(&w, &layout, &p, RankBlocks { dense: 0.0, moe: 12.0, experts: Some((&m, &el)) }), host)
        };
        let (replicated, host) = price(Optimizer::Muon);
        assert!((host - 130e-6).abs() < 1e-18);
        assert!((replicated - 2076.0 * 130e-6).abs() < 1e-12, "{replicated}");
        // Layer-wise: the dense 123 operations per block over 8 ranks, the rank's own expert
        // (edp 1) whole: 12·(123/8 + 50) = 784.5 operations.
        let (layer_wise, _) = price(Optimizer::DistMuon);
        assert!((layer_wise - 784.5 * 130e-6).abs() < 1e-12, "{layer_wise}");
        assert_eq!(price(Optimizer::Adam).0, 0.0);
    }

    #[test]
    fn big_matrices_are_gpu_bound() {
        // A 8192-wide dense block on one H100: its Newton–Schulz GEMMs (e.g. 5·6·8192³ = 16.5
        // TFLOP for the output projection alone) take longer than issuing them.
        let w = Workload { hidden: 8192, heads: 64, kv_heads: 8, head_dim: 128, ffn_hidden: 28672, ..ft().0 };
        let w = Workload { moe: None, gated_mlp: true, ..w };
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let opts = ExtendedOptions { optimizer: Optimizer::Muon, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &opts };
        let layout = Layout::placed(1, 1, 1, 1, 1, 1, 8);
        let t = muon_step_s(&w, &layout, &p, RankBlocks { dense: 1.0, moe: 0.0, experts: None });
        let host = (73.0 + 3.0 * 25.0) * p.host_time_per_operation_s();
        assert!(t > 2.0 * host, "{t} vs host {host}");
        let proj = MuonMatrix::whole(8192.0, 8192.0, false);
        assert!((ns_tflop(8192.0, 8192.0) - 5.0 * 6.0 * 8192f64.powi(3) * 1e-12).abs() < 1e-9);
        assert!(proj.gpu_s(&p) > ns_tflop(8192.0, 8192.0) / p.matmul_rate() * 0.999);
    }

    #[test]
    fn the_names_read() {
        assert_eq!("muon".parse::<Optimizer>().unwrap(), Optimizer::Muon);
        assert_eq!("dist_muon".parse::<Optimizer>().unwrap(), Optimizer::DistMuon);
        assert_eq!("AdamW".parse::<Optimizer>().unwrap(), Optimizer::Adam);
        assert!("lion".parse::<Optimizer>().is_err());
    }
}
