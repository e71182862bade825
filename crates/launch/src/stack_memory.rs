//! What a launch file cannot say about the memory its stack keeps beyond the recomputation
//! policy: the switches of `fmperf_core::extended::stack_tensors` that depend on the stack's
//! version or its training loop, not on any key. A file is estimated with the switches' defaults,
//! and a note says what was assumed, which versions differ and how to price them (`fmperf estimate
//! --from FILE --ext SWITCH=…`); nothing is switched on a guess.
//!
//! * `op_saves_attention` — torchtitan's per-operation policy (`selective_ac_option = "op"`) on a
//!   B200-class part: torchtitan 3b85aa3 (2025-05-14) runs cuDNN attention there, which its save
//!   list left out until b39377f (2025-12-01); the row reader's rule
//!   (`fmperf_core::validate::checkpoint_words::read_op_saves_attention`) decides where it applies.
//! * `fp32_params_autocast` — torchtitan without FSDP, tensor or pipeline parallelism: from
//!   0b44d4c (2025-06-16, "support AMP for DDP / single-device training") `maybe_enable_amp`
//!   (`torchtitan/distributed/utils.py`) wrapped the step in `torch.autocast` over FP32 weights;
//!   00b7f56 (2026-04-09, "replace amp and replicate with fully_shard") applies fully_shard's
//!   mixed precision, 16-bit weights, there too.
//! * `outputs_hold_kv` — a Hugging Face model's `use_cache` (its `config.json`): read by
//!   [`crate::hf`] as without effect (see [`USE_CACHE`]).

use fmperf_core::extended::Recompute;
use fmperf_core::validate::checkpoint_words::read_op_saves_attention;
use fmperf_core::validate::words::Words;
use fmperf_core::vocab::{Note, NoteList};

/// Why a Hugging Face `config.json`'s `use_cache` changes nothing in a launch's estimate
/// (`outputs_hold_kv` stays off): the Hugging Face Trainer's `compute_loss` keeps only the loss of
/// the model's output, so the returned keys and values are freed before the backward, and the
/// model's own `gradient_checkpointing` turns `use_cache` off in training (transformers
/// `LlamaModel.forward`). A loop that keeps the output through the backward with a wrapper's
/// checkpointing (ATorch's) holds them: `--ext outputs_hold_kv=on`.
pub const USE_CACHE: &str = "read, no effect here: the Trainer frees the model's output (and its key/value cache) \
                             before the backward, and the model's own gradient checkpointing turns use_cache off \
                             (outputs_hold_kv=off; a loop that keeps the output through the backward under a \
                             wrapper's checkpointing holds them: --ext outputs_hold_kv=on)";

/// The assumptions of a torchtitan run's memory switches (module docs): `system` the catalog id
/// or spec when known, `recompute` the policy, `plain` whether no data-parallel sharding,
/// replication, tensor or pipeline parallelism is on.
pub fn torchtitan_notes(system: Option<&str>, recompute: Recompute, plain: bool, notes: &mut Vec<Note>) {
    if let Some(system) = system
        && !read_op_saves_attention(&Words::new("torchtitan"), system, recompute).0
    {
        notes.assumption(
            "per-operation recomputation on a B200-class part: the attention's output assumed saved, as torchtitan \
             does since b39377f (2025-12-01); torchtitan 3b85aa3 (2025-05-14) to b39377f ran cuDNN attention there \
             and recomputed it, keeping none of it: for such a version estimate with --ext op_saves_attention=off"
                .into(),
        );
    }
    if plain {
        notes.assumption(
            "no FSDP, tensor or pipeline parallelism: 16-bit weights assumed, as torchtitan's fully_shard mixed \
             precision gives since 00b7f56 (2026-04-09); torchtitan 0b44d4c (2025-06-16) to 00b7f56 ran \
             torch.autocast over FP32 weights here: for such a version estimate with --ext fp32_params_autocast=on"
                .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_dependent_switches_are_assumed_and_said() {
        let notes_of = |system: Option<&str>, recompute: Recompute, plain: bool| {
            let mut n = Vec::new();
            torchtitan_notes(system, recompute, plain, &mut n);
            n.iter().map(|n| n.text.clone()).collect::<Vec<_>>()
        };
        let b200 = Some("nvidia_b200_hgx");
        let op = notes_of(b200, Recompute::Op, false);
        assert_eq!(op.len(), 1);
        assert!(op[0].contains("op_saves_attention=off") && op[0].contains("b39377f"), "{op:?}");
        // Not on an H100, nor under another policy, nor without a system.
        assert!(notes_of(Some("nvidia_h100_sxm5_80gb"), Recompute::Op, false).is_empty());
        assert!(notes_of(b200, Recompute::Full, false).is_empty());
        assert!(notes_of(None, Recompute::Op, false).is_empty());
        let plain = notes_of(None, Recompute::None, true);
        assert!(plain.len() == 1 && plain[0].contains("fp32_params_autocast=on"), "{plain:?}");
    }
}
