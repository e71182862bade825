//! Megatron-Core's rotary position embedding without its fused kernel (`--no-rope-fusion`, switch
//! [`super::ExtendedOptions::rope_fusion`] off): the chain of element-wise PyTorch kernels that
//! `apply_rotary_pos_emb` runs over the queries and the keys when `config.apply_rope_fusion` is
//! false, forward and backward, priced by its HBM bytes (one element-wise operation of the block,
//! [`operation`]) and by the host time of its further launches ([`host_s`]).
//!
//! **Where** (NVIDIA/Megatron-LM at commit d98e8a6, the commit of the functional tests in
//! `tests/data/megatron-ft-runs.json`): `SelfAttention.forward` calls `apply_rotary_pos_emb` once
//! for the queries and once for the keys (`megatron/core/transformer/attention.py` l. 1508 and
//! 1527; `split_qkv` holds unless `fused_single_qkv_rope`, off by default, l. 1362–1378), which
//! with `apply_rope_fusion` on calls Transformer Engine's `fused_apply_rotary_pos_emb` (one kernel
//! forward, one backward per tensor) and otherwise `_apply_rotary_pos_emb_bshd`
//! (`megatron/core/models/common/embeddings/rope_utils.py` l. 340–414, l. 92–156).
//! `--no-rope-fusion` stores false into `apply_rope_fusion` (`megatron/training/arguments.py`
//! l. 2902–2905), which is on by default for RoPE models (l. 1628–1629 turn it off for the
//! others).
//!
//! **Kernels per tensor** (`t` the queries or the keys, `freqs` the FP32 angles of `s × d`):
//! forward [`FORWARD_LAUNCHES`] = 12 — `torch.cos(freqs)`, `* mscale`, `.to(t.dtype)` and the same
//! three for `sin` (l. 142–143: 6, on the small `freqs`), `t * cos_`, `-x2` and `torch.cat` in
//! `_rotate_half` (l. 83–84; with `--rotary-interleaved` `-x2` and `torch.stack`, l. 86–89: the
//! same two launches), `* sin_`, the sum (l. 147: 5), and `torch.cat((t, t_pass))` (l. 156: 1);
//! beside them [`FORWARD_BARE_CALLS`] = 3 calls that launch nothing (the two slices of l. 133 and
//! `torch.chunk`). Backward [`BACKWARD_LAUNCHES`] = 9, the autograd nodes of that graph: the two
//! products' gradients (`grad * cos_`, `grad * sin_`: 2), the negation's (1), `torch.chunk`'s
//! (`split_backward` concatenates the two halves: 1), the sum of the two gradients of the rotated
//! slice (1), the slice of l. 133 (`slice_backward`: a zero fill and a copy, 2), the empty
//! `t_pass` slice's zero fill (1) and the sum into `t`'s gradient (1); the cats' and the stack's
//! backwards are views. The fused path launches one kernel each way ([`FUSED_LAUNCHES`]). With
//! `--rotary-interleaved` (not read) the two strided slices' backwards launch a zero fill and a
//! copy each where `torch.chunk`'s launches one cat: 3 more per tensor, left out (a floor).
//!
//! **Bytes per element of the queries and keys** (16-bit elements, reads and writes):
//! forward [`FORWARD_ELEMENT_ACCESSES`] = 12 — the negation 1 (half read, half written), the cat
//! 2, each product 2, the sum 3, the final cat 2 (`freqs`' `s × d` FP32 kernels left out: under
//! 1/(2·b·heads) of these); backward [`BACKWARD_ELEMENT_ACCESSES`] = 17 — the products 2 each,
//! the negation 1, `split_backward`'s cat 2, the first sum 3, `slice_backward` 3 (fill 1, copy 2),
//! the empty slice's fill 1, the last sum 3. The fused kernel, never priced (under 1 % of a step,
//! [`super::ops::ElementwiseTraffic`]), reads and writes each element once.
//!
//! **Price**: the operation is one element-wise operation of the block (its HBM time, and the
//! per-operation issue time of every operation, [`super::block`]); the further launches
//! (`2 · (12 − 1)` forward, `2 · (9 − 1)` backward) at [`TORCH_CALL_HOST_S`] each and the bare
//! calls at [`BARE_CALL_HOST_S`], times the host's speed, join the pass's issue floor as the
//! layer's Python does ([`super::block::BlockCost::issue_bounded_layer`]). The backward's launches
//! come from the autograd engine's C++ without Python, so pricing them at the per-call figure,
//! which includes Python, is the high side of that part; the forward's calls are Python's.
//! Full recomputation reruns the forward's share. Only under the Megatron stack (the flag is
//! Megatron-LM's) on a host-launched part for the host time, and not for multi-head latent
//! attention (its own list, [`super::moe::mla`]) nor under eager fusion, whose RoPE is priced
//! already ([`super::ops::ElementwiseTraffic`]). An MoE block shares the attention sub-layer and
//! so the operation; its further launches join only the dense blocks' host parts (a floor for MoE
//! layers, whose readers do not read the flag yet).
//!
//! Measured (`tests/data/megatron-ft-runs.json`, the four `rope_embeddings_interleaved_no_fusion`
//! cases, which named the rule and so are not unseen for it): each runs 11–16 % longer than its
//! fused sibling on the same host (`rope_embeddings`, the same layout and backend); priced,
//! 14–19 % longer.

use super::layout::Layout;
use super::ops::{OpKind, Operation, Shape};
use super::options::{ExtendedOptions, Fusion};
use super::pricing::{BARE_CALL_HOST_S, Pricing, TORCH_CALL_HOST_S};
use super::stack::Stack;
use super::workload::Workload;

/// Tensors RoPE is applied to in a layer: the queries and the keys [count].
pub const TENSORS: f64 = 2.0;

/// Kernels `_apply_rotary_pos_emb_bshd` launches per tensor in the forward (module docs) [count].
pub const FORWARD_LAUNCHES: f64 = 12.0;

/// PyTorch calls that launch no kernel per tensor in the forward: two slices and `torch.chunk`
/// (module docs) [count].
pub const FORWARD_BARE_CALLS: f64 = 3.0;

/// Kernels the autograd engine launches per tensor in the backward (module docs) [count].
pub const BACKWARD_LAUNCHES: f64 = 9.0;

/// Kernels of the fused path per tensor, each way: Transformer Engine's fused RoPE [count].
pub const FUSED_LAUNCHES: f64 = 1.0;

/// Element reads and writes of the unfused forward per element of a tensor [count].
pub const FORWARD_ELEMENT_ACCESSES: f64 = 12.0;

/// Element reads and writes of the unfused backward per element of a tensor [count].
pub const BACKWARD_ELEMENT_ACCESSES: f64 = 17.0;

/// Whether `opts` price Megatron-Core's unfused RoPE: `rope_fusion` off under the Megatron stack
/// with fused element-wise kernels otherwise (module docs).
fn unfused(opts: &ExtendedOptions) -> bool {
    !opts.rope_fusion && opts.stack == Stack::Megatron && opts.fusion == Fusion::Fused
}

/// The unfused RoPE of one block on one device for one micro-batch as one element-wise
/// operation `rope_unfused`: [`FORWARD_ELEMENT_ACCESSES`] and [`BACKWARD_ELEMENT_ACCESSES`] per
/// element of this device's queries (`q_width / tp` per token) and keys (`kv_local` per token)
/// at the activation width; none when RoPE is fused, another stack's or eager
/// (module docs). It keeps nothing for the backward beyond the small `cos`/`sin` tables.
pub fn operation(w: &Workload, layout: &Layout, p: &Pricing, kv_local: f64) -> Option<Operation> {
    if !unfused(p.opts) {
        return None;
    }
    let s = Shape::of(w, layout, p);
    let elements = (w.q_width() as f64 / s.tp + kv_local) * s.tokens;
    let fwd_bytes = FORWARD_ELEMENT_ACCESSES * elements * s.es;
    let bwd_bytes = BACKWARD_ELEMENT_ACCESSES * elements * s.es;
    let op = Operation::new(
        "rope_unfused",
        OpKind::Elementwise,
        p.elementwise(fwd_bytes),
        p.elementwise(bwd_bytes),
        fwd_bytes,
    );
    Some(op.fixed().op_policy(0.0, 1.0))
}

/// Host time of the unfused RoPE's launches beyond the one its operation issues, per block and
/// micro-batch `[forward, backward]` [s]: forward `2 · ((12 − 1) · 12.9 µs + 3 · 0.91 µs)`,
/// backward `2 · (9 − 1) · 12.9 µs`, times the host's speed (module docs); 0 where
/// [`operation`] prices none or the part launches its own kernels.
pub fn host_s(p: &Pricing) -> [f64; 2] {
    if !(unfused(p.opts) && p.hw.host_launched) {
        return [0.0, 0.0];
    }
    let factor = p.hw.host_op_time_factor;
    let fwd =
        TENSORS * ((FORWARD_LAUNCHES - FUSED_LAUNCHES) * TORCH_CALL_HOST_S + FORWARD_BARE_CALLS * BARE_CALL_HOST_S);
    let bwd = TENSORS * (BACKWARD_LAUNCHES - FUSED_LAUNCHES) * TORCH_CALL_HOST_S;
    [fwd * factor, bwd * factor]
}

/// [`host_s`] as the layer's host parts `[forward, recomputation, backward]` [s]: whole-block
/// recomputation reruns the forward's share ([`super::choices::Recompute::block_share`]), as it
/// reruns the layer's Python ([`super::layer_python::layer_python_s`]).
pub fn layer_host_s(p: &Pricing) -> [f64; 3] {
    let [fwd, bwd] = host_s(p);
    [fwd, fwd * p.opts.recompute.block_share().unwrap_or(0.0), bwd]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extended::hardware::Hardware;

    fn h100() -> Hardware {
        let sys = crate::catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        Hardware::from_catalog(sys, crate::catalog::Precision::Bf16, true, &Default::default()).unwrap()
    }

    #[test]
    fn the_unfused_launches_by_hand() {
        let hw = h100();
        let off = ExtendedOptions { rope_fusion: false, ..ExtendedOptions::realistic() };
        // Forward: 2 · (11 · 12.9 + 3 · 0.91) µs = 2 · (141.9 + 2.73) = 289.26 µs; backward
        // 2 · 8 · 12.9 µs = 206.4 µs (DGX H100 host, factor 1).
        let [fwd, bwd] = host_s(&Pricing { hw: &hw, opts: &off });
        assert!((fwd - 289.26e-6).abs() < 1e-12, "{fwd}");
        assert!((bwd - 206.4e-6).abs() < 1e-12, "{bwd}");
        // Full recomputation reruns the forward's launches.
        let full = ExtendedOptions { recompute: crate::extended::Recompute::Full, ..off };
        let parts = layer_host_s(&Pricing { hw: &hw, opts: &full });
        assert!((parts[1] - 289.26e-6).abs() < 1e-12 && (parts[2] - 206.4e-6).abs() < 1e-12);
        // Fused (the default), another stack, or eager element-wise kernels: nothing.
        for opts in [
            ExtendedOptions::realistic(),
            ExtendedOptions { stack: Stack::Fsdp, ..off },
            ExtendedOptions { fusion: Fusion::Eager, ..off },
        ] {
            assert_eq!(host_s(&Pricing { hw: &hw, opts: &opts }), [0.0, 0.0]);
        }
    }

    #[test]
    fn the_unfused_bytes_by_hand() {
        // 12 × 512 GPT of the functional tests, 8 heads of 64, 4 sequences of 1,024 on one GPU:
        // queries and keys 512 + 512 = 1,024 per token, 4,096 tokens, 2 B: 8 MiB of elements'
        // bytes; forward 12 × 8,388,608 B = 100,663,296 B, backward 17 × = 142,606,336 B.
        let hw = h100();
        let w = Workload::MEGATRON_TEST_GPT;
        let layout = Layout::placed(1, 1, 1, 1, 4, 4, 8);
        let off = ExtendedOptions { rope_fusion: false, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &off };
        let op = operation(&w, &layout, &p, 512.0).expect("priced with rope_fusion off");
        assert_eq!(op.bytes, 100_663_296.0);
        assert_eq!(op.bwd, p.elementwise(142_606_336.0));
        assert_eq!(op.kind, OpKind::Elementwise);
        let on = ExtendedOptions::realistic();
        assert!(operation(&w, &layout, &Pricing { hw: &hw, opts: &on }, 512.0).is_none());
    }
}
