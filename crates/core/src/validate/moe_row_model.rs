//! The model a Mixture-of-Experts measured row describes, read from its `model` group
//! ([`super::moe_row_fields`]) into extended mode's [`Workload`]: the transformer's shape (tokens,
//! widths, counts), the experts (routed and shared widths, top-k, dense and MoE blocks), latent
//! attention, the sliding window in tokens and the multi-token prediction layers, each rule
//! applied noted (`super::moe_runs` lists them).

use serde_json::Value;

use super::keys;
use super::moe_row_fields::{Group, int, not_stated, words};
use super::reason::RowReason;
use crate::extended::Workload;
use crate::moe_shape::{ExpertExtras, Mla, MoeShape, Router};
use crate::vocab::{Note, NoteList, SlidingWindow};

/// The model a row's `model` group describes (the module documentation lists the rules).
pub(super) fn model_of(m: &Group, notes: &mut Vec<Note>) -> Result<Workload, RowReason> {
    let need = |k: &str| int(m, k).filter(|x| *x > 0).ok_or_else(|| not_stated(&format!("model.{k}")));
    let (layers, hidden, heads, seq) = (need("layers")?, need("hidden")?, need("heads")?, need("seq_len")?);
    let experts = need("num_experts")?;
    let top_k = need("top_k")?;
    // The experts' width: `moe_ffn_hidden` (or its names), else the FFN width of a file whose
    // every FFN is an expert (Mixtral's `intermediate_size`); that width is then the dense one
    // only when the experts' own is stated apart (DeepSeek's `intermediate_size`).
    let stated_expert_ffn = int(m, "moe_ffn_hidden").filter(|x| *x > 0);
    let expert_ffn = stated_expert_ffn
        .or(int(m, "ffn_hidden").filter(|x| *x > 0))
        .ok_or_else(|| not_stated("model.moe_ffn_hidden"))?;
    let dense_ffn = int(m, "ffn_hidden_dense").or(stated_expert_ffn.and(int(m, "ffn_hidden"))).unwrap_or(expert_ffn);
    // Every how many layers one is MoE (Llama 4's `interleave_moe_layer_step`, Megatron's
    // integer `moe_layer_freq`, Qwen-MoE's `decoder_sparse_step`), or Megatron's 0/1 list of
    // `--moe-layer-freq` (`([0]*3+[1]*12)`: `k` dense blocks, then every `n`-th block MoE).
    let (step, listed) = match m.find("moe_layer_step") {
        None => (None, None),
        Some((name, v)) => match keys::whole_number(v) {
            Some(n) if n > 0 => (Some(n), None),
            // Megatron's 0/1 list as a JSON string ([`crate::layer_list::expand`]), whose MoE
            // blocks must be `k` dense then every `n`-th ([`crate::layer_list::moe_pattern`]).
            _ => {
                let rule = "must be a whole number of layers or Megatron's 0/1 list such as ([0]*3+[1]*12)";
                let bad = |rule: String| RowReason::LayerStepNotWhole { field: format!("model.{name}"), rule };
                let text = v.as_str().ok_or_else(|| bad(format!("{rule}, not {v}")))?;
                let flags = crate::layer_list::expand(text.trim().trim_matches(['"', '\'']), ("dense", "MoE"))
                    .map_err(|why| bad(format!("{why} ({rule})")))?;
                if flags.len() as u64 != layers {
                    return Err(bad(format!("lists {} blocks, the model has {layers}", flags.len())));
                }
                let pattern = crate::layer_list::moe_pattern(&flags).ok_or_else(|| {
                    bad(format!(
                        "must be k dense blocks then every n-th block MoE (the patterns fmperf models); {text} is not"
                    ))
                })?;
                (None, Some(pattern))
            }
        },
    };
    let moe_layers = int(m, "moe_layers").unwrap_or(match (step, listed) {
        (_, Some((first, every))) => (layers - first) / every,
        (Some(k), _) => layers / k,
        (None, None) => layers,
    });
    let dense_layers = int(m, "dense_layers").unwrap_or(layers.saturating_sub(moe_layers));
    let all = format!("{} {} {}", words(m, "name"), words(m, "router"), words(m, "shape_source"));
    let ffn_words = words(m, "ffn_type");
    let gated = !ffn_words.contains("non-gated") && (ffn_words.contains("glu") || ffn_words.contains("gated"));
    let extras = expert_extras_of(&ffn_words, gated, notes);
    let shared = int(m, "shared_experts").unwrap_or(0);
    let shared_total = int(m, "shared_ffn_hidden").unwrap_or(0);
    if shared > 0 && shared_total == 0 {
        return Err(RowReason::SharedExpertsWithoutWidth);
    }
    // Dense and MoE layers alternate when the counts say so (as many dense as MoE layers making
    // up the model) or the words do ("interleaved", "alternating", "every other layer") with
    // equal counts; a stated step says it directly.
    let interleaved = dense_layers > 0 && dense_layers == moe_layers && layers == 2 * moe_layers
        || ["interleave", "alternat", "every other"].iter().any(|x| all.contains(x));
    let (first_dense, moe_every) = match step {
        _ if let Some((first, every)) = listed => {
            notes.reading(format!("moe_layer_freq list: {first} dense blocks, then one MoE block in every {every}"));
            (first, every)
        }
        Some(k) if k > 1 => {
            notes.reading(format!("one MoE layer in every {k}"));
            (0, k)
        }
        _ if interleaved && dense_layers == moe_layers => {
            notes.reading("dense and MoE layers alternate".into());
            (0, 2)
        }
        _ => (dense_layers, 1),
    };
    let moe = MoeShape {
        experts,
        expert_ffn,
        top_k,
        shared_experts: shared,
        shared_ffn: if shared > 0 { shared_total / shared } else { 0 },
        gated,
        first_dense,
        moe_every,
        router: if words(m, "router").contains("sigmoid") { Router::Sigmoid } else { Router::Softmax },
        extras,
    };
    // Multi-head latent attention: the `mla` group, or its fields in the model (DeepSeek's
    // config.json writes `kv_lora_rank` … beside the other fields).
    let mla_group = match m.get("mla") {
        Some(Value::Object(o)) => Some(Group { obj: Some(o), flat: None }),
        _ if m.get("kv_lora_rank").is_some() => Some(*m),
        _ => None,
    };
    let mla = match mla_group {
        Some(g) => {
            let x = &g;
            Some(Mla {
                q_lora_rank: int(x, "q_lora_rank"),
                kv_lora_rank: int(x, "kv_lora_rank").ok_or_else(|| not_stated("mla.kv_lora_rank"))?,
                qk_nope_head_dim: int(x, "qk_nope_head_dim").ok_or_else(|| not_stated("mla.qk_nope_head_dim"))?,
                qk_rope_head_dim: int(x, "qk_rope_head_dim").unwrap_or(0),
                v_head_dim: int(x, "v_head_dim").ok_or_else(|| not_stated("mla.v_head_dim"))?,
            })
        }
        _ => None,
    };
    let mtp = match int(m, "mtp_layers") {
        Some(n) => n,
        None => {
            notes.reading("mtp_layers unknown: none".into());
            0
        }
    };
    let w = Workload {
        seq_len: seq,
        hidden,
        heads,
        kv_heads: int(m, "kv_heads").unwrap_or(heads),
        head_dim: int(m, "head_dim").unwrap_or(hidden / heads),
        layers,
        ffn_hidden: dense_ffn,
        gated_mlp: gated,
        vocab: int(m, "vocab"),
        moe: Some(moe),
        mla,
        mtp_layers: mtp,
        tied_embeddings: false,
        sliding_window: sliding_window_of(&words(m, "attention"), notes),
    };
    w.validate().map_err(RowReason::Model)?;
    Ok(w)
}

/// The experts' extras the row's `ffn_type` words state ([`ExpertExtras`]): a clamped gated
/// activation ("clamp", with a gated MLP: GPT-OSS's "GLU with clamped sigmoid-gated activation
/// … limit 7") and biases ("bias"/"biases" as words, not negated: "no bias", "without biases",
/// `disable_bias_linear`, "biases: false", "bias-free"), each noted.
fn expert_extras_of(ffn: &str, gated: bool, notes: &mut Vec<Note>) -> ExpertExtras {
    let clamped_glu = gated && ffn.contains("clamp");
    let w = super::words::Words::new(ffn);
    let biases = (w.affirms("bias") || w.affirms("biases")) && !w.any(&["bias free", "biases free"]);
    if clamped_glu {
        notes.reading("experts: gated activation with its inputs clamped".into());
    }
    if biases {
        notes.reading("experts: biases on their GEMMs".into());
    }
    ExpertExtras { clamped_glu, biases }
}

/// A sliding window read from the model's attention words: "sliding-window" or "banded window"
/// with its width in tokens just before ("128-token sliding-window"), in every other block when
/// the words say the layers alternate ("alternating … / full"), in all but one of every `n`
/// when they say "every n" (one full block in `n`); `None` (every block full) otherwise.
fn sliding_window_of(attention: &str, notes: &mut Vec<Note>) -> Option<SlidingWindow> {
    let w = super::words::Words::new(attention);
    if !w.any(&["sliding window", "banded window", "local window"]) {
        return None;
    }
    let tokens = w.number_before("window", 4).filter(|t| *t >= 1.0 && t.fract() == 0.0)? as u64;
    let full_every =
        if w.has_prefix("alternat") { 2 } else { w.number_after("every", 2).filter(|n| *n >= 2.0)? as u64 };
    notes.reading(format!(
        "sliding-window attention: {tokens} tokens in {} of every {full_every} blocks",
        full_every - 1
    ));
    Some(SlidingWindow { tokens, full_every: Some(full_every) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt_oss_expert_words_read_as_its_extras() {
        let mut notes = Vec::new();
        // The shipped GPT-OSS rows' `ffn_type`, lower-cased as `words` gives it.
        let oss =
            "gated (glu with clamped sigmoid-gated activation, alpha=1.702, limit 7; 3 gemms like swiglu), with biases";
        assert_eq!(expert_extras_of(oss, true, &mut notes), ExpertExtras { clamped_glu: true, biases: true });
        assert_eq!(notes.len(), 2);
        // Every other shipped row says `swiglu`: nothing, nothing noted.
        let mut none = Vec::new();
        assert_eq!(expert_extras_of("swiglu", true, &mut none), ExpertExtras::default());
        assert!(none.is_empty());
        // A clamp needs a gated activation; biases said absent are absent.
        assert!(!expert_extras_of("clamped gelu", false, &mut none).clamped_glu);
        assert!(!expert_extras_of("swiglu, no bias", true, &mut none).biases);
        assert!(!expert_extras_of("swiglu without biases", true, &mut none).biases);
        // Other spellings of none: Megatron's flag, a key set false, "bias-free".
        for no in ["swiglu; disable_bias_linear", "swiglu, biases: false", "bias-free swiglu", "swiglu (no biases)"] {
            assert!(!expert_extras_of(no, true, &mut none).biases, "{no}");
        }
        // "bias" inside another word is not a bias ("unbiased routing").
        assert!(!expert_extras_of("swiglu, unbiased routing", true, &mut none).biases);
    }
}
