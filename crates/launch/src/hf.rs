//! Hugging Face `config.json`: the model's shape (no batch, no parallelism, no system).
//!
//! Keys read (with the GPT-2 family's names in brackets): `hidden_size` [`n_embd`],
//! `num_hidden_layers` [`n_layer`], `num_attention_heads` [`n_head`], `num_key_value_heads`
//! (default: the heads), `head_dim` (default `hidden / heads`), `intermediate_size` [`n_inner`,
//! default `4·hidden`], `vocab_size`, `tie_word_embeddings`, `hidden_act` with `model_type`
//! (gated MLP for the Llama, Mistral, Qwen, Gemma, Phi-3 and DeepSeek families), and the MoE fields of Mixtral (`num_local_experts`), Qwen-MoE
//! (`num_experts`, `moe_intermediate_size`, `shared_expert_intermediate_size`) and DeepSeek
//! (`n_routed_experts`, `n_shared_experts`, `first_k_dense_replace`, `scoring_func`, the latent attention's
//! `q_lora_rank`, `kv_lora_rank`, `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim` and
//! `num_nextn_predict_layers`), with `num_experts_per_tok`.

use serde_json::Value;

use super::settings::Origin;
use super::{Format, Launch, why};
use fmperf_core::Error;

/// Families whose MLP is gated (SwiGLU / GeGLU) and whose embeddings are untied by default.
const GATED_FAMILIES: &[&str] = &[
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3_text",
    "phi3",
    "deepseek_v2",
    "deepseek_v3",
    "olmo",
    "olmo2",
    "granite",
    "llama4_text",
    "gpt_oss",
];

/// Reads a Hugging Face `config.json`.
pub fn parse(text: &str) -> Result<Launch, Error> {
    let root: Value = serde_json::from_str(text)
        .map_err(|e| Error::Parse { message: format!("config.json is not JSON: {e} (line {})", e.line()) })?;
    let Some(obj) = root.as_object() else {
        return Err(Error::Parse { message: "config.json must be a JSON object".into() });
    };
    let mut l = Launch::new(Format::HfConfig);
    let line_of = |key: &str| text.lines().position(|l| l.contains(&format!("\"{key}\""))).map_or(0, |i| i + 1);
    let model_type = obj.get("model_type").and_then(Value::as_str).unwrap_or("").to_string();
    let gated_family = GATED_FAMILIES.contains(&model_type.as_str());
    for (key, value) in obj {
        let o = Origin::new(key.clone(), line_of(key));
        let int = || -> Result<u64, Error> {
            value
                .as_u64()
                .filter(|n| *n > 0 && *n <= 1 << 40)
                .ok_or_else(|| o.error(value, "must be a positive integer"))
        };
        let s = &mut l.settings;
        match key.as_str() {
            "hidden_size" | "n_embd" | "d_model" => _ = s.hidden.put(int()?, &o),
            "num_hidden_layers" | "n_layer" | "num_layers" => _ = s.layers.put(int()?, &o),
            "num_attention_heads" | "n_head" => _ = s.heads.put(int()?, &o),
            "num_key_value_heads" => _ = s.kv_heads.put(int()?, &o),
            "head_dim" => _ = s.head_dim.put(int()?, &o),
            "intermediate_size" | "n_inner" => {
                if !value.is_null() {
                    s.ffn_hidden.put(int()?, &o);
                }
            }
            "vocab_size" => _ = s.vocab.put(int()?, &o),
            "tie_word_embeddings" => {
                let b = value.as_bool().ok_or_else(|| o.error(value, "must be true or false"))?;
                s.tied_embeddings.put(b, &o);
            }
            "hidden_act" | "activation_function" => {
                let act = value.as_str().ok_or_else(|| o.error(value, "must be a string"))?;
                let gated = gated_family || act.contains("glu");
                s.gated_mlp.put(gated, &o);
            }
            "model_type" => {}
            "architectures" => {
                let name = value.as_array().and_then(|a| a.first()).and_then(Value::as_str).unwrap_or(&model_type);
                s.model_name.put(name.to_string(), &o);
            }
            "num_local_experts" | "n_routed_experts" | "num_experts" => _ = s.moe.experts.put(int()?, &o),
            "num_experts_per_tok" => _ = s.moe.top_k.put(int()?, &o),
            "moe_intermediate_size" => _ = s.moe.expert_ffn_hidden.put(int()?, &o),
            "shared_expert_intermediate_size" => _ = s.moe.shared_ffn_hidden.put(int()?, &o),
            "n_shared_experts" => {
                if !value.is_null() {
                    s.moe.shared_experts.put(int()?, &o);
                }
            }
            "first_k_dense_replace" => {
                let n = value.as_u64().ok_or_else(|| o.error(value, "must be a non-negative integer"))?;
                s.moe.first_dense_layers.put(n, &o);
            }
            "decoder_sparse_step" | "moe_layer_freq" | "interleave_moe_layer_step" => {
                _ = s.moe.layer_pattern.put(value.to_string(), &o)
            }
            "scoring_func" => {
                let v = value.as_str().ok_or_else(|| o.error(value, "must be a string"))?;
                s.moe.router.put(v.to_string(), &o);
            }
            "q_lora_rank" => {
                if !value.is_null() {
                    s.moe.q_lora_rank.put(int()?, &o);
                }
            }
            "kv_lora_rank" => _ = s.moe.kv_lora_rank.put(int()?, &o),
            "qk_nope_head_dim" => _ = s.moe.qk_nope_head_dim.put(int()?, &o),
            "qk_rope_head_dim" => _ = s.moe.qk_rope_head_dim.put(int()?, &o),
            "v_head_dim" => _ = s.moe.v_head_dim.put(int()?, &o),
            "num_nextn_predict_layers" => {
                let n = value.as_u64().ok_or_else(|| o.error(value, "must be a non-negative integer"))?;
                if n > 0 {
                    s.moe.mtp_layers.put(n, &o);
                }
            }
            _ => {
                let shown = match value {
                    Value::String(v) => v.clone(),
                    other => other.to_string(),
                };
                l.unused(key.clone(), shown, reason(key));
            }
        }
    }
    let s = &mut l.settings;
    if s.model_name.get().is_none() && !model_type.is_empty() {
        s.model_name.put(model_type.clone(), &Origin::new("model_type", line_of("model_type")));
    }
    if s.gated_mlp.get().is_none() {
        s.gated_mlp.put(gated_family, &Origin::new("model_type", line_of("model_type")));
    }
    if s.tied_embeddings.get().is_none() {
        // Transformers' default is tied; the gated families' own configs default to untied.
        let tied = !gated_family;
        s.tied_embeddings.put(tied, &Origin::new("tie_word_embeddings", 0));
        l.notes.push(format!(
            "tie_word_embeddings not given: {} (the default of `{model_type}` configs)",
            if tied { "tied" } else { "untied" }
        ));
    }
    if l.settings.moe.is_moe() && l.settings.moe.expert_ffn_hidden.get().is_none() {
        // Mixtral's experts have the dense MLP width.
        if let Some(f) = l.settings.ffn_hidden.copied() {
            let o = l.settings.ffn_hidden.origin.clone().unwrap_or(Origin::new("intermediate_size", 0));
            l.settings.moe.expert_ffn_hidden.put(f, &o);
        }
    }
    Ok(l)
}

/// Why a `config.json` key that fmperf does not read does not matter.
fn reason(key: &str) -> &'static str {
    match key {
        "torch_dtype" | "dtype" => "the training precision comes from the launch, not the model file",
        "transformers_version" | "_name_or_path" | "auto_map" | "use_cache" | "return_dict" => why::JOB,
        "bos_token_id" | "eos_token_id" | "pad_token_id" => why::DATA,
        "rope_theta"
        | "rope_scaling"
        | "rms_norm_eps"
        | "layer_norm_eps"
        | "layer_norm_epsilon"
        | "initializer_range"
        | "router_aux_loss_coef"
        | "output_router_logits"
        | "router_z_loss_coef"
        | "norm_topk_prob"
        | "routed_scaling_factor"
        | "topk_method"
        | "seq_aux"
        | "aux_loss_alpha" => why::HYPERPARAMETER,
        "n_group" | "topk_group" => {
            "affects the dispatch, not modelled here: group-limited routing; give `--moe dispatcher=deepep:M` to cap the domains a token reaches"
        }
        "ep_size" => "the expert-parallel degree comes from the launch or the search, not the model file",
        "mlp_only_layers" => {
            "affects which blocks are MoE, not modelled: fmperf reads first-k-dense and every-n-th patterns"
        }
        "attention_dropout" | "hidden_dropout" | "resid_pdrop" | "embd_pdrop" | "attn_pdrop" | "attention_bias"
        | "mlp_bias" => "affects performance slightly, not modelled (dropout, biases)",
        "sliding_window" | "use_sliding_window" | "max_window_layers" | "layer_types" => {
            "affects attention FLOPs, not modelled: fmperf prices full causal attention"
        }
        "pretraining_tp" => why::ASSUMED,
        "max_position_embeddings" | "n_positions" => {
            "does not affect performance (the longest position; the training sequence length is --seq-len)"
        }
        _ => why::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_llama_and_mixtral_configs() {
        let l = parse(
            r#"{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072,
               "hidden_act": "silu", "torch_dtype": "bfloat16", "rope_theta": 500000.0}"#,
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.hidden.copied(), s.kv_heads.copied(), s.gated_mlp.copied()), (Some(4096), Some(8), Some(true)));
        assert_eq!(s.tied_embeddings.copied(), Some(false));
        assert_eq!(s.model_name.get().map(String::as_str), Some("LlamaForCausalLM"));
        let keys: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["max_position_embeddings", "rope_theta", "torch_dtype"]);
        let m = parse(r#"{"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2, "intermediate_size": 14336}"#)
            .unwrap();
        assert!(m.settings.moe.is_moe());
        assert_eq!(m.settings.moe.expert_ffn_hidden.copied(), Some(14336));
    }

    #[test]
    fn malformed_configs_are_errors() {
        assert!(matches!(parse("{\"hidden_size\": 4096,").unwrap_err(), Error::Parse { .. }));
        assert!(matches!(parse("[1, 2]").unwrap_err(), Error::Parse { .. }));
        let e = parse("{\n  \"hidden_size\": \"big\"\n}").unwrap_err();
        assert_eq!(e.field(), Some("hidden_size"));
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = parse("{\"tie_word_embeddings\": 1}").unwrap_err();
        assert_eq!(e.field(), Some("tie_word_embeddings"));
    }
}
