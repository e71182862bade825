//! Megatron-LM's fine-grained activation offloading of the routed experts' saved tensors
//! (`--fine-grained-activation-offloading` with `--offload-modules expert_fc1 moe_act`) as memory
//! sees it: what the routed experts no longer keep on the device for their backward. Units: bytes
//! (B) and elements [count].
//!
//! Read in NVIDIA/Megatron-LM at d98e8a6:
//! * `expert_fc1` — "offload the input of the expert fc1 part", `moe_act` — "offload the input of
//!   the moe act part" (`megatron/core/transformer/transformer_config.py` l. 1328–1343);
//! * `TEGroupedMLP.forward` (`megatron/core/transformer/moe/experts.py` l. 928–941 and 1020–1038)
//!   runs the first grouped GEMM inside the `expert_fc1` scope (what it saves for its backward:
//!   the dispatched token copies, FP8 under MXFP8/NVFP4, else the original 16-bit input,
//!   `set_save_original_input`, l. 279–284) and the activation inside the `moe_act` scope (what it
//!   saves: the first GEMM's output, `gates·f` per copy; with the `moe_act` recompute module the
//!   checkpoint's saved input, the same tensor); the second GEMM's saved input (the activation's
//!   output) is in neither scope;
//! * every tensor saved inside a scope is copied to pinned host memory after the group's forward
//!   and reloaded before its backward; tensors under 1,048,576 elements stay on the device
//!   (`min_offloaded_tensor_size`, `transformer_config.py` l. 1344;
//!   `megatron/core/pipeline_parallel/fine_grained_activation_offload.py` l. 747 and 1084).
//!
//! At a stage's memory peak (the end of its warm-up forwards) the offloaded tensors of the
//! micro-batches in flight are on the host: the routed experts keep only what is outside the
//! scopes. Not counted: the one group per module name that Megatron keeps on the device after its
//! warm-up so that the first reload does not block the compute stream (`post_warmup_callback`,
//! l. 609–640: one block of one micro-batch), and the copies' time (the rows' notes say so; the
//! time of an MoE row stays as priced without them).

use super::options::ExpertOffload;
use crate::extended::ops::{Operation, saved_input};
use crate::extended::pricing::Pricing;

/// Tensors of fewer elements stay on the device (Megatron-LM's `min_offloaded_tensor_size`
/// default, 1024 · 1024; module docs) [count].
pub const MIN_OFFLOADED_ELEMENTS: f64 = 1_048_576.0;

/// One tensor the routed experts save for their backward: its bytes on the device as the memory
/// model counts them and its elements (what Megatron's size threshold reads).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SavedTensor {
    /// Bytes kept on the device without offloading [B].
    pub bytes: f64,
    /// Elements of the tensor [count].
    pub elements: f64,
}

impl SavedTensor {
    /// The bytes that leave the device when the tensor's scope is offloaded: all of them at
    /// [`MIN_OFFLOADED_ELEMENTS`] or more, none below [B].
    fn offloaded_bytes(&self, scope_offloaded: bool) -> f64 {
        if scope_offloaded && self.elements >= MIN_OFFLOADED_ELEMENTS { self.bytes } else { 0.0 }
    }
}

/// The bytes the routed experts no longer keep on the device under `o`, from the first GEMM's saved
/// input `fc1_input` and the activation's saved input `act_input` [B] (module docs).
pub fn offloaded_bytes(o: &ExpertOffload, fc1_input: SavedTensor, act_input: SavedTensor) -> f64 {
    fc1_input.offloaded_bytes(o.expert_fc1) + act_input.offloaded_bytes(o.moe_act)
}

/// The routed experts' two saved tensors the offload modules name, for `rows` token copies of
/// width `h` into a first GEMM of output width `fc1_width` (`gates·f` of this rank) whose output
/// is kept at `act_bytes` per element (16-bit, or FP8 with the SwiGLU cache): the first GEMM's
/// saved input ([`saved_input`]) and the activation's input.
pub(super) fn saved_tensors(p: &Pricing, rows: f64, h: f64, fc1_width: f64, act_bytes: f64) -> [SavedTensor; 2] {
    [
        SavedTensor { bytes: saved_input(p, rows * p.hw.element_bytes * h).none, elements: rows * h },
        SavedTensor { bytes: rows * fc1_width * act_bytes, elements: rows * fc1_width },
    ]
}

/// `op` (the routed experts' operation) keeping the tensors `[fc1_input, act_input]` offloaded
/// under `o` no longer ([`offloaded_bytes`]): under every policy that still keeps them
/// (`selective_keeps` false: the `moe` recompute module keeps nothing of the experts; full
/// recomputation keeps none either).
pub(super) fn take_off(op: &mut Operation, o: &ExpertOffload, [fc1, act]: [SavedTensor; 2], selective_keeps: bool) {
    let off = offloaded_bytes(o, fc1, act);
    op.kept.none -= off;
    op.kept.op -= off;
    if selective_keeps {
        op.kept.selective -= off;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offloaded_bytes_by_hand() {
        // Qwen3-235B on one GB200 of the Model Zoo's MXFP8 run: 3 × 4,096 tokens × top-8 =
        // 98,304 copies; fc1's saved input 98,304 × 4,096 elements at 1 B = 402,653,184 B; the
        // activation's input 98,304 × 2 × 1,536 elements at 2 B = 603,979,776 B.
        let fc1 = SavedTensor { bytes: 402_653_184.0, elements: 402_653_184.0 };
        let act = SavedTensor { bytes: 603_979_776.0, elements: 301_989_888.0 };
        let both = ExpertOffload { expert_fc1: true, moe_act: true };
        assert_eq!(offloaded_bytes(&both, fc1, act), 402_653_184.0 + 603_979_776.0);
        assert_eq!(offloaded_bytes(&ExpertOffload { moe_act: false, ..both }, fc1, act), 402_653_184.0);
        assert_eq!(offloaded_bytes(&ExpertOffload { expert_fc1: false, ..both }, fc1, act), 603_979_776.0);
        assert_eq!(offloaded_bytes(&ExpertOffload::default(), fc1, act), 0.0);
        // Below 1,048,576 elements a tensor stays: 1,024 copies × 1,023 wide = 1,047,552 elements.
        let small = SavedTensor { bytes: 2.0 * 1_047_552.0, elements: 1_047_552.0 };
        assert_eq!(offloaded_bytes(&both, small, act), 603_979_776.0);
        let at = SavedTensor { bytes: 2.0 * 1_048_576.0, elements: 1_048_576.0 };
        assert_eq!(offloaded_bytes(&both, at, act), 2.0 * 1_048_576.0 + 603_979_776.0);
    }

    #[test]
    fn mixtrals_experts_keep_what_is_not_offloaded() {
        use super::super::layer::EXPERTS_OP;
        use super::super::options::MoeOptions;
        use crate::extended::layout::Layout;
        use crate::extended::moe::{Load, RecomputeModules};
        use crate::extended::options::Recompute;
        // Mixtral on 8 ranks of EP 8, 4,096 tokens each, top-2, forced balance: 8,192 copies of
        // h = 4,096 through experts of f = 14,336 (gated), BF16. Kept without offloading:
        // copies · 2 B · (h + 2f + f) (`layer::tests::kept_activations_by_hand`); `expert_fc1`
        // takes copies · 2 B · h off, `moe_act` copies · 2 B · 2f: left copies · 2 B · f, the
        // second GEMM's input (8,192 · 2 · 14,336 = 234,881,024 B).
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let (copies, h, f) = (8192.0, 4096.0, 14336.0);
        let op = |offload, recompute_modules| {
            let mo = MoeOptions { load: Load::Forced, offload, recompute_modules, ..MoeOptions::default() };
            super::super::layer::tests::mlp(&layout, 8, mo).0.into_iter().find(|o| o.name == EXPERTS_OP).unwrap()
        };
        let (none, off) = (RecomputeModules::default(), ExpertOffload::default());
        let both = ExpertOffload { expert_fc1: true, moe_act: true };
        let plain = op(off, none);
        assert_eq!(plain.kept.none, copies * 2.0 * (h + 3.0 * f));
        let o = op(both, none);
        assert_eq!(o.kept.none, copies * 2.0 * f);
        assert_eq!(o.kept.none, 234_881_024.0);
        assert_eq!(o.kept.under(Recompute::Selective), copies * 2.0 * f);
        assert_eq!(o.kept.full, 0.0);
        // One module: only its tensor leaves.
        let fc1 = op(ExpertOffload { expert_fc1: true, moe_act: false }, none);
        assert_eq!(plain.kept.none - fc1.kept.none, copies * 2.0 * h);
        // With the `moe_act` recompute module the activation's output is not kept either: nothing
        // of the experts stays under selective recomputation.
        let act = RecomputeModules { moe_act: true, ..none };
        assert_eq!(op(both, act).kept.under(Recompute::Selective), 0.0);
        // The `moe` module keeps nothing of the experts already: offloading changes nothing there.
        let moe = RecomputeModules { moe: true, ..none };
        assert_eq!(op(both, moe).kept.selective, op(off, moe).kept.selective);
        // Memory only: the passes are the same.
        assert_eq!((o.fwd, o.bwd), (plain.fwd, plain.bwd));
    }

    #[test]
    fn names_read_back() {
        use super::super::options::MoeOptions;
        let both = ExpertOffload { expert_fc1: true, moe_act: true };
        assert_eq!(both.names(), "expert_fc1+moe_act");
        assert_eq!(ExpertOffload::default().names(), "none");
        let o = MoeOptions::default().with_text("offload_modules=expert_fc1+moe_act").unwrap();
        assert_eq!(o.offload, both);
        assert!(o.to_string().ends_with(",offload_modules=expert_fc1+moe_act"), "{o}");
        assert_eq!(MoeOptions::default().with_text(&o.to_string()).unwrap(), o);
        // The default's text stays as it was (no key written).
        assert!(!MoeOptions::default().to_string().contains("offload_modules"));
        let e = MoeOptions::default().with_text("offload_modules=expert_fc2").unwrap_err().to_string();
        assert!(e.contains("moe.offload_modules") && e.contains("expert_fc1, moe_act"), "{e}");
    }
}
