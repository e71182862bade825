//! The model a read file describes, without a layout ([`ModelOnly`]: what `fmperf search --from`,
//! `fmperf show` and the page's catalog editor read): the shape with the framework's defaults
//! applied, each noted (Megatron's `ffn = 4h`, with SwiGLU `⌊8h/3 / 64⌋·64`; the vocabulary padded
//! to `make-vocab-size-divisible-by · tp`), the experts, the sliding window, and the catalog model
//! of the same shape ([`catalog_model`]). Widths and vocabularies are counts, lengths in tokens.

use super::{Overrides, key, required};
use crate::settings::Settings;
use crate::{Format, Launch, experts, hub_models};
use fmperf_core::Error;
use fmperf_core::extended::Workload;
use fmperf_core::vocab::{Note, NoteList};

/// The model a file describes, without a layout (what `fmperf search --from` needs).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOnly {
    /// Its name as the file gives it (or the file's format).
    pub name: String,
    /// The model with its training sequence length.
    pub workload: Workload,
    /// Rules applied where the file is silent.
    pub notes: Vec<Note>,
}

impl ModelOnly {
    /// The model of `launch` (its vocabulary padded for tensor-parallel degree `tp` as Megatron
    /// pads it). Errors name the missing or invalid flag or key.
    pub fn from_launch(launch: &Launch, o: &Overrides, tp: u64) -> Result<ModelOnly, Error> {
        let f = launch.format;
        let mut notes: Vec<Note> = Vec::new();
        // A launch that names a well-known model but not its shape (a Trainer launch).
        let named = hub_models::filled(&launch.settings);
        let s = match &named {
            Some((filled, note)) => {
                notes.assumption(note.clone());
                filled
            }
            None => &launch.settings,
        };
        let hidden = required(&s.hidden, key(f, "hidden-size", "model.hidden_size", "model.flavor", "hidden_size"))?;
        let layers =
            required(&s.layers, key(f, "num-layers", "model.num_layers", "model.flavor", "num_hidden_layers"))?;
        let heads = required(
            &s.heads,
            key(f, "num-attention-heads", "model.num_attention_heads", "model.flavor", "num_attention_heads"),
        )?;
        let gated = s.gated_mlp.copied().unwrap_or(false);
        let ffn = match s.ffn_hidden.copied() {
            Some(v) => v,
            None if f == Format::HfConfig => 4 * hidden,
            None => {
                let v = if gated { (8 * hidden / 3) / 64 * 64 } else { 4 * hidden };
                notes.assumption(format!(
                    "MLP width not given: Megatron's default {v} ({})",
                    if gated { "⌊8h/3 / 64⌋·64 with SwiGLU" } else { "4h" }
                ));
                v
            }
        };
        let seq_len = match (o.seq_len, s.seq_len.copied()) {
            (Some(v), _) | (None, Some(v)) => v,
            (None, None) => {
                return Err(Error::MissingField {
                    field: key(f, "seq-length", "model.encoder_seq_length", "training.seq_len", "--seq-len"),
                });
            }
        };
        let vocab = vocab(s, f, tp, &mut notes)?;
        let moe = if s.moe.is_moe() {
            Some(experts::model(&s.moe, f, layers, ffn, gated, &mut notes).map_err(|e| rename_model_error(e, s))?)
        } else {
            None
        };
        let workload = Workload {
            seq_len,
            hidden,
            heads,
            kv_heads: s.kv_heads.copied().unwrap_or(heads),
            head_dim: s.head_dim.copied().unwrap_or(hidden / heads.max(1)),
            layers,
            ffn_hidden: ffn,
            gated_mlp: gated,
            vocab,
            // Megatron-LM ties unless told `--untie-embeddings-and-output-weights`; the other
            // readers set the key from their file.
            tied_embeddings: s.tied_embeddings.copied().unwrap_or(true),
            sliding_window: crate::window::model(s, layers, &mut notes)?,
            moe: moe.as_ref().map(|m| m.shape),
            mla: moe.as_ref().and_then(|m| m.mla),
            mtp_layers: moe.as_ref().map_or(0, |m| m.mtp_layers),
        };
        workload.validate().map_err(|e| rename_model_error(e, s))?;
        notes.extend(workload.alignment_caveat());
        let name = s.model_name.get().cloned().unwrap_or_else(|| match catalog_model(&workload) {
            Some(id) => format!("{id} (the catalog's shape)"),
            None => "custom model".to_string(),
        });
        Ok(ModelOnly { name, workload, notes })
    }
}

/// The catalog model with the shape of `w` (width, depth, heads, K/V heads, MLP, gating, experts;
/// the dense MLP width only when the model has dense blocks; the vocabulary may differ by
/// Megatron's padding, the sequence length by the run's choice), so that the explorer can search
/// the file's model.
pub fn catalog_model(w: &Workload) -> Option<&'static str> {
    fmperf_core::catalog::models().iter().find_map(|m| {
        let c = Workload::from_catalog(m).ok()?;
        let all_moe = w.moe.is_some_and(|m| m.moe_blocks(w.layers) == w.layers);
        let same = (c.hidden, c.layers, c.heads, c.kv_heads, c.gated_mlp)
            == (w.hidden, w.layers, w.heads, w.kv_heads, w.gated_mlp)
            && (all_moe || c.ffn_hidden == w.ffn_hidden)
            && same_experts(&c, w);
        let vocab_close = match (c.vocab, w.vocab) {
            (Some(a), Some(b)) => b >= a && b - a < 4096,
            _ => false,
        };
        (same && vocab_close).then_some(m.id.as_str())
    })
}

/// Whether two models have the same experts (count, widths, top-k, shared experts' total width,
/// pattern; the router's scoring does not change the shape), the same latent attention and MTP
/// blocks.
fn same_experts(c: &Workload, w: &Workload) -> bool {
    let key = |m: &fmperf_core::moe_shape::MoeShape| {
        (m.experts, m.expert_ffn, m.top_k, m.shared_experts * m.shared_ffn, m.first_dense, m.moe_every)
    };
    c.moe.as_ref().map(key) == w.moe.as_ref().map(key) && c.mla == w.mla && c.mtp_layers == w.mtp_layers
}

/// A workload error named by the file's flag when there is one: the core's field paths (the
/// reference shape's short names too) and the flags that set them.
fn rename_model_error(e: Error, s: &Settings) -> Error {
    let (heads, hidden, seq_len) = (s.heads.origin.as_ref(), s.hidden.origin.as_ref(), s.seq_len.origin.as_ref());
    let flags = [
        ("model.kv_heads", s.kv_heads.origin.as_ref()),
        ("model.head_dim", s.head_dim.origin.as_ref()),
        ("model.vocab", s.vocab.origin.as_ref()),
        ("model.h", heads),
        ("model.heads", heads),
        ("model.e", hidden),
        ("model.hidden", hidden),
        ("model.l", seq_len),
        ("model.seq_len", seq_len),
    ];
    experts::at_flag(e, &flags)
}

/// The vocabulary, padded as Megatron pads it (to a multiple of `make-vocab-size-divisible-by ·
/// tp`, default 128) for Megatron and NeMo files.
///
/// A file that does not say its vocabulary (a tokenizer file whose size is in the file's contents,
/// not its name) is estimated without the embedding and the output head, and a note says so and
/// how to give it: an omission stated, never a guessed number.
fn vocab(s: &Settings, f: Format, tp: u64, notes: &mut Vec<Note>) -> Result<Option<u64>, Error> {
    let Some(v) = s.vocab.copied() else {
        let k =
            key(f, "vocab-size", "model.tokenizer (a tokenizer fmperf knows by name)", "model.flavor", "vocab_size");
        notes.assumption(format!(
            "vocabulary not stated: the embedding and the output head are left out of the estimate (time per \
             step and memory per device somewhat low, more so for small models); give {k}"
        ));
        return Ok(None);
    };
    if !matches!(f, Format::Megatron | Format::NemoYaml) {
        return Ok(Some(v));
    }
    let multiple = s.vocab_divisible_by.copied().unwrap_or(128) * tp;
    let padded = v.div_ceil(multiple) * multiple;
    if padded != v {
        notes.assumption(format!(
            "vocabulary {v} padded to {padded} (a multiple of make-vocab-size-divisible-by·tp = {multiple})"
        ));
    }
    Ok(Some(padded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_twins_are_found() {
        let w = Workload { vocab: Some(128_512), ..Workload::LLAMA3_8B };
        assert_eq!(catalog_model(&w), Some("llama3-8b"));
        assert_eq!(catalog_model(&Workload { layers: 31, ..w }), None);
    }
}
