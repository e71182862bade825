//! What GPT-OSS's expert MLP costs beyond a gated (SwiGLU) expert under Megatron-Core's grouped
//! experts (`TEGroupedMLP`), as operations of the MoE layer after the routed experts' GEMMs
//! ([`crate::moe_shape::ExpertExtras`]: the clamped activation and the experts' biases).
//!
//! Sources: NVIDIA/Megatron-LM at b0cc2706 (the Megatron-LM Megatron-Bridge v0.3.0 pins, NeMo
//! 26.02, whose performance table the shipped GPT-OSS rows come from):
//! * **The clamp** (`megatron/core/fusions/fused_bias_geglu.py`,
//!   `weighted_bias_quick_geglu_impl`, l. 424–433): with `clamp_value` set (GPT-OSS's
//!   `activation_func_clamp_value = 7.0`) the first GEMM's output is split in two and each half
//!   clamped by its own eager `clamp` call, then the halves are joined again by `torch.cat`,
//!   before the compiled weighted Quick-GEGLU (`@jit_fuser`, `torch.compile`) runs on the copy. Of
//!   the fc1 output's `W = rows · gates · f · es` bytes the forward moves `4·W` (each clamp reads
//!   and writes its half: `2·W`; the cat reads and writes the whole: `2·W`); the backward moves
//!   `5·W` (each `ClampBackward` reads its half of the gradient and of the saved input and writes
//!   its half: `3·W`; the chunk's backward joins the two halves' gradients: `2·W`). The clamp keeps
//!   its input (the fc1 output) beside the copy the activation keeps: `W` more for the backward,
//!   none under the `moe_act` recompute module, which reruns the clamp with the activation
//!   (`experts.py` l. 738–744: `bias_act_func` is what `CheckpointWithoutOutput` wraps).
//! * **The experts' output bias** (`megatron/core/transformer/moe/experts.py`,
//!   `TEGroupedMLP._apply_bias`, l. 609–626, called at l. 758): `linear_fc2` is built with
//!   `skip_bias_add=True` (l. 560–575), so the bias is added after the GEMM by a Python loop over
//!   the local experts, `torch.cat([t + b * p for …])`: per element of the fc2 output
//!   (`rows × h`, the routing probabilities in the 16-bit router type: `moe_router_dtype` unset)
//!   `b * p` writes `es`, `t + …` reads `2·es` and writes `es`, the cat reads and writes `es`
//!   each: `6·es` forward; backward `MulBackward` forms `grad · p` and `grad · b` (read `es`,
//!   write `es` each) and sums each to its operand's shape (read `es` each): `6·es`. The first
//!   GEMM's bias (`skip_bias_add=False`, l. 541–552) rides in the GEMM.
//!
//! Only Megatron-Core's grouped experts take these paths: under another stack (PyTorch FSDP's
//! NeMo AutoModel, JAX) or with the experts run as one grouped kernel
//! ([`MoeOptions::one_grouped_kernel`]: torchtitan, MaxText) nothing is added here.
//!
//! Not priced here, with why: the `torch.tensor(linear_offset, device=…)` the clamp path builds
//! on every call (l. 434) is a blocking host-to-device copy, a `cudaStreamSynchronize`
//! (PyTorch `c10/cuda/CUDAFunctions.h` `memcpy_and_sync`), once per MoE layer forward and once
//! more in the `moe_act` recomputation: a sync inside the experts, which the forward's stretches
//! ([`super::sync`]) do not yet hold; attention sinks run inside cuDNN's fused attention
//! (Transformer Engine 2.12 with cuDNN 9.18: `softmax_type = learnable` from cuDNN 9.13.1,
//! `transformer_engine/common/fused_attn/fused_attn.cpp` l. 442–447).

use super::options::MoeOptions;
use crate::extended::ops::{KeptBytes, OpKind, Operation};
use crate::extended::pricing::Pricing;
use crate::extended::stack::Stack;
use crate::moe_shape::MoeShape;

/// Name of the clamp's operation.
pub const CLAMP_OP: &str = "moe_glu_clamp";

/// Name of the experts' output-bias operation.
pub const BIAS_OP: &str = "moe_expert_bias";

/// HBM passes over the fc1 output the clamp makes in the forward [× its bytes] (module docs).
pub const CLAMP_FORWARD_PASSES: f64 = 4.0;

/// HBM passes over the fc1 output the clamp's backward makes [× its bytes] (module docs).
pub const CLAMP_BACKWARD_PASSES: f64 = 5.0;

/// Bytes the experts' output-bias loop moves per element of the fc2 output, in 16-bit elements,
/// each way (forward, backward) [× element bytes] (module docs).
pub const BIAS_PASSES: f64 = 6.0;

/// The operations the experts' extras of `m` add to an MoE layer whose routed experts take
/// `rows` token copies through `fe_local` channels of each of `gates` input matrices, into a
/// width `h` (the layer's own figures, [`super::layer::moe_mlp_operations`]), under pricing `p`
/// and the layer's switches `mo`: the clamp ([`CLAMP_OP`]) and the output bias ([`BIAS_OP`]), each
/// when the model has it and the experts are Megatron-Core's grouped ones (the Megatron stack, not
/// one grouped kernel).
pub fn operations(p: &Pricing, m: &MoeShape, mo: &MoeOptions, rows: f64, fe_local: f64, h: f64) -> Vec<Operation> {
    let mut ops = Vec::new();
    if p.opts.stack != Stack::Megatron || mo.one_grouped_kernel {
        return ops;
    }
    let es = p.hw.element_bytes;
    if m.extras.clamped_glu && m.gated {
        let w = rows * 2.0 * fe_local * es;
        let fwd = CLAMP_FORWARD_PASSES * w;
        let kept = KeptBytes::recomputable(w);
        let op = Operation::new(
            CLAMP_OP,
            OpKind::Elementwise,
            p.elementwise(fwd),
            p.elementwise(CLAMP_BACKWARD_PASSES * w),
            fwd,
        )
        .fixed()
        .keeping(kept);
        // `moe_act` reruns the clamp with the activation and keeps only the fc1 output, which
        // the experts keep already.
        let op = if mo.recompute_modules.moe_act { op.selective_policy(0.0, 1.0) } else { op };
        ops.push(op);
    }
    if m.extras.biases {
        let bytes = BIAS_PASSES * rows * h * es;
        ops.push(
            Operation::new(BIAS_OP, OpKind::Elementwise, p.elementwise(bytes), p.elementwise(bytes), bytes).fixed(),
        );
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extended::hardware::Hardware;
    use crate::extended::moe::layer::tests::mixtral;
    use crate::extended::options::ExtendedOptions;
    use crate::moe_shape::ExpertExtras;

    fn priced(m: &MoeShape, mo: &MoeOptions) -> Vec<Operation> {
        let hw = Hardware::from_params(&crate::SystemParams::h200().with_domain_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        // GPT-OSS-120B on one of 64 ranks at four 4,096-token sequences: 16,384 tokens × top-4 =
        // 65,536 copies through 2,880 channels of each of the gate and up matrices, into 2,880.
        operations(&p, m, mo, 65_536.0, 2880.0, 2880.0)
    }

    #[test]
    fn gpt_oss_experts_by_hand() {
        let (_, m) = mixtral();
        let oss = MoeShape { extras: ExpertExtras { clamped_glu: true, biases: true }, ..m };
        let ops = priced(&oss, &MoeOptions::default());
        assert_eq!(ops.iter().map(|o| o.name).collect::<Vec<_>>(), [CLAMP_OP, BIAS_OP]);
        // fc1 output W = 65,536 · 2 · 2,880 · 2 B = 754,974,720 B; the clamp moves 4 W =
        // 3,019,898,880 B forward and 5 W = 3,774,873,600 B backward, and keeps W.
        let w = 754_974_720.0;
        assert_eq!(ops[0].bytes, 3_019_898_880.0);
        assert_eq!(ops[0].kept.none, w);
        // Priced as element-wise traffic of those bytes each way.
        let hw = Hardware::from_params(&crate::SystemParams::h200().with_domain_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        assert_eq!(ops[0].fwd, p.elementwise(4.0 * w));
        assert_eq!(ops[0].bwd, p.elementwise(5.0 * w));
        // The bias loop: 6 · 65,536 · 2,880 · 2 B = 2,264,924,160 B each way.
        assert_eq!(ops[1].bytes, 2_264_924_160.0);
        assert_eq!(ops[1].fwd, ops[1].bwd);
        assert_eq!(ops[1].kept.none, 0.0);
        // `moe_act` reruns the clamp and drops what it kept.
        let mut mo = MoeOptions::default();
        mo.recompute_modules.moe_act = true;
        let again = priced(&oss, &mo);
        assert_eq!((again[0].selective_recompute, again[0].kept.selective, again[0].kept.none), (1.0, 0.0, w));
    }

    #[test]
    fn nothing_without_the_extras_or_under_one_grouped_kernel() {
        let (_, m) = mixtral();
        assert!(priced(&m, &MoeOptions::default()).is_empty());
        let oss = MoeShape { extras: ExpertExtras { clamped_glu: true, biases: true }, ..m };
        assert!(priced(&oss, &MoeOptions { one_grouped_kernel: true, ..MoeOptions::default() }).is_empty());
        let hw = Hardware::from_params(&crate::SystemParams::h200().with_domain_size(8), true);
        let opts = ExtendedOptions { stack: Stack::Fsdp, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &opts };
        assert!(operations(&p, &oss, &MoeOptions::default(), 65_536.0, 2880.0, 2880.0).is_empty());
        // A clamp needs a gated activation; biases alone add the bias loop only.
        let plain = MoeShape { gated: false, ..oss };
        assert_eq!(priced(&plain, &MoeOptions::default()).iter().map(|o| o.name).collect::<Vec<_>>(), [BIAS_OP]);
    }
}
