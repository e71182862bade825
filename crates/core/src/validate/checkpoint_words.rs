//! What a run's activation checkpointing keeps beyond its policy, read from the words naming the
//! stack: tensors the checkpointed blocks hand on that the policy itself does not count.
//!
//! | what the words say | read as | source |
//! |---|---|---|
//! | ATorch (its `checkpoint` optimization wraps the blocks) over a Hugging Face transformers model, checkpointed | the output holds every block's keys and values ([`read_outputs_hold_kv`]) | ATorch wraps the decoder layers with PyTorch's `checkpoint_wrapper` and leaves the model's own `gradient_checkpointing` off (intelligent-machine-learning/dlrover 3a442b7 `atorch/atorch/auto/opt_lib/checkpoint_optimization.py`; `atorch/examples/llama2/fsdp_llama2.py`, `transformers==4.31.0` in `atorch/atorch/requirements.txt`); transformers 4.31's `LlamaModel.forward` takes `use_cache` from the config and turns it off only under its own `gradient_checkpointing`, collecting `next_decoder_cache` from every layer; ATorch's flash-attention `LlamaAttentionFA` returns `(key_states, value_states) if use_cache` |
//! | `use_cache` said true / false | on / off | the words as written |
//! | torchtitan's operator-level policy on a B200-class part (NVIDIA B200, B300, GB200, GB300) | the attention is recomputed, not saved ([`read_op_saves_attention`]) | pytorch/torchtitan 3b85aa3 (2025-05-14) puts the cuDNN SDPA backend first on compute capability 10.0 (`torchtitan/models/attention.py`); its `_save_list` (`torchtitan/models/llama3/infra/parallelize.py` at 6fc499f) names the flash and efficient backends only until b39377f (2025-12-01, "add all SDPA backends to op_sac_save_list") |
//!
//! Each reading is noted; nothing is read where the words do not name the stack.

use super::words::Words;
use crate::extended::Recompute;
use crate::vocab::Note;

/// What a run's checkpointing keeps beyond its policy, as the words say, with the notes.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointKeeps {
    /// [`crate::extended::ExtendedOptions::op_saves_attention`].
    pub op_saves_attention: bool,
    /// [`crate::extended::ExtendedOptions::outputs_hold_kv`].
    pub outputs_hold_kv: bool,
    /// How they were read (empty when nothing departs from the defaults).
    pub notes: Vec<Note>,
}

impl CheckpointKeeps {
    /// Reads both from the words naming the stack, the part's catalog id and the policy (an
    /// error where the words set `use_cache` both on and off).
    pub fn read(stack: &Words, system_id: &str, recompute: Recompute) -> Result<CheckpointKeeps, crate::Error> {
        let (op_saves_attention, a) = read_op_saves_attention(stack, system_id, recompute);
        let (outputs_hold_kv, b) = read_outputs_hold_kv(stack, recompute)?;
        Ok(CheckpointKeeps { op_saves_attention, outputs_hold_kv, notes: [a, b].into_iter().flatten().collect() })
    }
}

/// Whether the model's output holds every block's keys and values through the backward
/// ([`crate::extended::ExtendedOptions::outputs_hold_kv`]), and the note saying why: `use_cache`
/// said true or false decides; otherwise ATorch checkpointing a Hugging Face transformers model
/// (`recompute` not none) holds them. Without checkpointing the keys and values are saved for the
/// backward anyway, so nothing is added. `use_cache` set both on and off is an error naming it.
pub fn read_outputs_hold_kv(stack: &Words, recompute: Recompute) -> Result<(bool, Option<Note>), crate::Error> {
    let use_cache =
        super::step_words::stated_flag(stack, "use cache", "framework / parallel.other / notes", "use_cache")?;
    if use_cache == Some(false) || recompute == Recompute::None {
        return Ok((false, None));
    }
    if use_cache == Some(true) {
        return Ok((
            true,
            Some(Note::reading("`use_cache` on beside checkpointing: the output holds every block's keys and values")),
        ));
    }
    let hf = stack.any(&["hf transformers", "hugging face", "huggingface", "transformers", "hf"]);
    if stack.has("atorch") && hf {
        return Ok((
            true,
            Some(Note::reading(
                "ATorch checkpoints the Hugging Face decoder layers with its own wrapper, so the model keeps the config's \
                 use_cache (transformers 4.31): its output holds every block's keys and values through the backward",
            )),
        ));
    }
    Ok((false, None))
}

/// Whether the operator-level policy saves the attention output
/// ([`crate::extended::ExtendedOptions::op_saves_attention`]), and the note when it does not:
/// torchtitan under [`Recompute::Op`] on a B200-class part (`system_id` names a B200, B300,
/// GB200 or GB300) runs cuDNN attention, which its save list left out until December 2025.
pub fn read_op_saves_attention(stack: &Words, system_id: &str, recompute: Recompute) -> (bool, Option<Note>) {
    if recompute != Recompute::Op || !stack.has("torchtitan") || !is_b200_class(system_id) {
        return (true, None);
    }
    (
        false,
        Some(Note::reading(
            "torchtitan runs cuDNN attention on B200-class parts (since 2025-05-14), which its per-op SAC save list left \
             out until 2025-12-01: the attention is recomputed, its output not kept",
        )),
    )
}

/// The note of the attention kernel where [`read_op_saves_attention`] read cuDNN's: `native`
/// (the part's own-generation fused attention), torchtitan putting SDPA's cuDNN backend first on
/// B200-class parts.
pub fn cudnn_kernel_note() -> Note {
    Note::reading(
        "attention kernel native: torchtitan puts PyTorch SDPA's cuDNN backend first on B200-class parts \
         (torchtitan/models/attention.py since 3b85aa3)",
    )
}

/// Whether a catalog id names an NVIDIA part of compute capability 10.x (B200, B300, GB200,
/// GB300: the parts torchtitan's `has_cuda_capability(10, 0)` selects).
fn is_b200_class(system_id: &str) -> bool {
    let id = Words::new(system_id);
    id.has("nvidia") && id.tokens.iter().any(|t| ["b200", "b300", "gb200", "gb300"].contains(&t.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atorch_over_hugging_face_holds_the_keys_and_values() {
        let atorch = Words::new("ATorch auto_accelerate: FSDP1 (wrap LlamaDecoderLayer), HF transformers Llama");
        assert!(read_outputs_hold_kv(&atorch, Recompute::Full).unwrap().0);
        // Without checkpointing they are saved for the backward anyway.
        assert!(!read_outputs_hold_kv(&atorch, Recompute::None).unwrap().0);
        // use_cache said off wins; said on holds them with any stack.
        assert!(
            !read_outputs_hold_kv(&Words::new("ATorch, HF transformers, use_cache=False"), Recompute::Full).unwrap().0
        );
        assert!(read_outputs_hold_kv(&Words::new("litgpt; use_cache: true"), Recompute::Full).unwrap().0);
        // Other stacks (whose Trainer turns use_cache off with its own checkpointing): nothing.
        assert!(
            !read_outputs_hold_kv(&Words::new("Hugging Face Trainer, gradient checkpointing"), Recompute::Full)
                .unwrap()
                .0
        );
        assert!(!read_outputs_hold_kv(&Words::new("torchtitan"), Recompute::Full).unwrap().0);
        // Set both ways: an error naming it, not the first reading.
        let e = read_outputs_hold_kv(&Words::new("use_cache=False; use_cache: true"), Recompute::Full).unwrap_err();
        assert!(e.to_string().contains("use_cache"), "{e}");
    }

    #[test]
    fn torchtitan_on_b200_recomputes_the_attention_under_op_sac() {
        let titan = Words::new("torchtitan 6fc499f, torchao 0.13.0, torch.compile");
        assert!(!read_op_saves_attention(&titan, "nvidia_b200_hgx", Recompute::Op).0);
        assert!(!read_op_saves_attention(&titan, "nvidia_gb200_nvl72", Recompute::Op).0);
        // Other parts, other policies and other stacks save it.
        assert!(read_op_saves_attention(&titan, "nvidia_h100_sxm5_80gb", Recompute::Op).0);
        assert!(read_op_saves_attention(&titan, "nvidia_b200_hgx", Recompute::Full).0);
        assert!(read_op_saves_attention(&Words::new("Megatron-LM"), "nvidia_b200_hgx", Recompute::Op).0);
    }
}
