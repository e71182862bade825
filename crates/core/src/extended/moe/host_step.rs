//! The per-step host work of Megatron-LM's logged statistics (`--log-num-zeros-in-grad`,
//! `--log-params-norm`: [`crate::extended::step_host`]) for a Mixture-of-Experts model: the same
//! calls per parameter tensor and per step as a dense model's, over an MoE rank's own tensors.
//!
//! **Tensors of an MoE block** (NVIDIA/Megatron-LM at d98e8a6, counted as
//! [`crate::extended::step_host::TENSORS_PER_BLOCK`] counts a dense block: Megatron's defaults,
//! `add_bias_linear=True`, a weight and a bias per linear layer and per LayerNorm):
//! * the attention sub-layer and the two norms as in a dense block: QKV and projection (4), the
//!   input norm fused into the QKV linear and the pre-MLP norm (4) — [`MOE_BLOCK_BASE_TENSORS`]
//!   with the router's weight and bias (`megatron/core/transformer/moe/router.py` l. 64–70:
//!   `self.weight`, and `self.bias` with `add_bias_linear`);
//! * per local expert, FC1 and FC2 with a weight and a bias each ([`TENSORS_PER_LOCAL_EXPERT`]):
//!   `SequentialMLP` holds one `MLP` per local expert (`experts.py`), and `TEGroupedMLP`'s
//!   Transformer Engine `GroupedLinear` registers `weight{i}` and `bias{i}` per expert unless
//!   `moe_single_grouped_weight`/`moe_single_grouped_bias` (off by default;
//!   `megatron/core/extensions/transformer_engine.py` l. 2487–2493, `experts.py` l. 466–489);
//! * a shared expert's FC1 and FC2 ([`TENSORS_PER_LOCAL_EXPERT`] again).
//!
//! Multi-latent attention's further projections are counted as a plain attention's (a floor, as
//! [`crate::extended::layer_python`] counts them).
//!
//! **Which of them the busiest rank's optimizer holds.** The dense tensors are sharded over the
//! data-parallel group and the experts' over the expert data-parallel group where the optimizer
//! is sharded: each part's `1/shard` slice plus the tensor cut at its edge, at most all
//! ([`sliced`], the uniform-block form of [`crate::extended::step_host::optimizer_tensors`]).

use crate::extended::layout::Layout;
use crate::extended::pricing::Pricing;
use crate::extended::step_host::{END_TENSORS, TENSORS_PER_BLOCK, step_host_work};

/// Tensors of an MoE block besides its experts: QKV and projection (weight and bias each), the
/// two norms (weight and bias each) and the router's weight and bias [count].
pub const MOE_BLOCK_BASE_TENSORS: f64 = 10.0;

/// Tensors of one local (or shared) expert: FC1 and FC2, a weight and a bias each [count].
pub const TENSORS_PER_LOCAL_EXPERT: f64 = 4.0;

/// Parameter tensors of one MoE block on a rank with `local_experts` routed experts and
/// `shared_experts` shared ones: `(non-expert, expert)` [count]. The shared experts are
/// replicated over the data-parallel group with the attention, so they count as non-expert.
pub fn moe_block_tensors(local_experts: f64, shared_experts: u64) -> (f64, f64) {
    (
        MOE_BLOCK_BASE_TENSORS + TENSORS_PER_LOCAL_EXPERT * shared_experts as f64,
        TENSORS_PER_LOCAL_EXPERT * local_experts,
    )
}

/// The tensors of a `1/shard` slice of `tensors` spread evenly: `tensors/shard + 1` (the tensor
/// cut at the slice's edge), at most all; all of them unsharded [count].
pub fn sliced(tensors: f64, shard: u64) -> f64 {
    if shard <= 1 { tensors } else { (tensors / shard as f64 + 1.0).min(tensors) }
}

/// What one rank of an MoE model holds, for its statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTensors {
    /// Dense blocks on the rank.
    pub dense_blocks: f64,
    /// MoE blocks on the rank.
    pub moe_blocks: f64,
    /// End stages on the rank (embedding, head: 2 with one stage, 1 on an end stage, else 0).
    pub ends: f64,
    /// One MoE block's `(non-expert, expert)` tensors ([`moe_block_tensors`]).
    pub moe_block: (f64, f64),
}

/// The logged statistics' host time per step on the rank [s]: [`step_host_work`] over the
/// tensors its optimizer holds, the non-expert ones sliced over `shard` and the experts' over
/// `expert_shard` (1 each where the optimizer is not sharded).
pub fn moe_step_host_s(p: &Pricing, layout: &Layout, r: RankTensors, shard: u64, expert_shard: u64) -> f64 {
    let dense = r.dense_blocks * TENSORS_PER_BLOCK + r.moe_blocks * r.moe_block.0 + r.ends * END_TENSORS;
    let experts = r.moe_blocks * r.moe_block.1;
    step_host_work(p, layout, sliced(dense, shard) + sliced(experts, expert_shard)).total_s()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_by_hand() {
        // One local expert, no shared expert: 10 + 0 non-expert, 4 expert tensors.
        assert_eq!(moe_block_tensors(1.0, 0), (10.0, 4.0));
        // Four local experts and a shared one: 10 + 4 = 14, 4·4 = 16.
        assert_eq!(moe_block_tensors(4.0, 1), (14.0, 16.0));
        // 12 MoE blocks of one local expert on one stage: non-expert 12·10 + 2·3 = 126 sliced over
        // 8 ranks: 126/8 + 1 = 16.75; experts 12·4 = 48 unsharded (expert data parallelism 1).
        let dense = 12.0 * 10.0 + 2.0 * END_TENSORS;
        assert_eq!(dense, 126.0);
        assert_eq!(sliced(dense, 8), 16.75);
        assert_eq!(sliced(48.0, 1), 48.0);
        // A slice is never more than all.
        assert_eq!(sliced(1.5, 2), 1.5);
    }

    #[test]
    fn the_statistics_off_cost_nothing() {
        use crate::SystemParams;
        use crate::extended::hardware::Hardware;
        use crate::extended::options::ExtendedOptions;
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let off = ExtendedOptions::realistic();
        // TP 1, CP 1, PP 1, DP 8, micro-batch 4, 32 sequences, domains of 8.
        let layout = Layout::placed(1, 1, 1, 8, 4, 32, 8);
        let r = RankTensors { dense_blocks: 0.0, moe_blocks: 12.0, ends: 2.0, moe_block: moe_block_tensors(1.0, 0) };
        assert_eq!(moe_step_host_s(&Pricing { hw: &hw, opts: &off }, &layout, r, 8, 1), 0.0);
        // On: the dense formula over 16.75 + 48 = 64.75 tensors.
        let on = ExtendedOptions { log_num_zeros_in_grad: true, log_params_norm: true, ..off };
        let p = Pricing { hw: &hw, opts: &on };
        let want = step_host_work(&p, &layout, 64.75).total_s();
        assert!(want > 0.0);
        assert_eq!(moe_step_host_s(&p, &layout, r, 8, 1), want);
    }
}
