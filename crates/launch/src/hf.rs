//! Hugging Face `config.json`: the model's shape (no batch, no parallelism, no system).
//!
//! Keys read, with the other families' names in brackets: `hidden_size` [`n_embd`, `n_embed`,
//! `d_model`], `num_hidden_layers` [`n_layer`, `num_layers`], `num_attention_heads` [`n_head`],
//! `num_key_value_heads` [Falcon's `num_kv_heads` with `new_decoder_architecture`, `multi_query`;
//! default: the heads], `head_dim` (default `hidden / heads`; a width the heads do not divide
//! without `head_dim` is an error), `intermediate_size` [`n_inner`, OPT's `ffn_dim`, Falcon's
//! `ffn_hidden_size`; default `4·hidden`], `vocab_size`, `tie_word_embeddings`, `hidden_act` /
//! `activation_function` with `model_type` (gated MLP for the Llama, Mistral, Qwen, Gemma, Phi-3,
//! DeepSeek, Llama 4 and GPT-OSS families).
//!
//! Mixture of experts: Mixtral and GPT-OSS `num_local_experts` (GPT-OSS `experts_per_token`),
//! Qwen2/3-MoE `num_experts`, `moe_intermediate_size`, `shared_expert_intermediate_size`,
//! `decoder_sparse_step`, `mlp_only_layers` (a leading run of dense layers), DeepSeek
//! `n_routed_experts`, `n_shared_experts`, `first_k_dense_replace`, `moe_layer_freq`,
//! `scoring_func`, Llama 4 `num_local_experts`, `interleave_moe_layer_step`,
//! `intermediate_size_mlp` (the dense layers' width; `intermediate_size` is then the experts'),
//! with `num_experts_per_tok`. Multi-head latent attention: `kv_lora_rank` (switches MLA on),
//! `q_lora_rank`, `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim`, and
//! `num_nextn_predict_layers`. Sliding-window attention: `sliding_window`, `use_sliding_window`,
//! `layer_types`, `sliding_window_pattern`, `max_window_layers` and Gemma 2's alternation
//! ([`window_keys`], [`crate::window`]).
//!
//! A multimodal config (Llama 4, Gemma 3, Qwen2-VL, Mistral 3 / Pixtral, LLaVA, CLIP) is read for
//! its text model, `text_config` (a note says so); the vision tower is listed as unused.

use fmperf_core::vocab::NoteList;
use serde_json::{Map, Value};

use super::settings::SettingOrigin;
use super::{Format, Launch, why};
use fmperf_core::Error;
use fmperf_core::extended::AttentionKernel;

/// Families whose MLP is gated (SwiGLU / GeGLU).
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

/// Families whose configs tie the output layer to the embedding unless they say otherwise
/// (transformers' `*Config` defaults): the GPT-2 / OPT / Bloom / Falcon families and Gemma.
const TIED_FAMILIES: &[&str] =
    &["gpt2", "opt", "bloom", "falcon", "gemma", "gemma2", "gemma3_text", "clip_text_model", "phi"];

/// Families whose MoE layers have one shared expert of the experts' width that no key states
/// (transformers' `Llama4TextMoe`: `shared_expert`).
const ONE_SHARED_EXPERT: &[&str] = &["llama4_text"];

/// Keys read after the others (they depend on each other).
const LATE: &[&str] = &[
    "multi_query",
    "new_decoder_architecture",
    "num_kv_heads",
    "intermediate_size_mlp",
    "use_sliding_window",
    "max_window_layers",
    "layer_types",
    "sliding_window_pattern",
];

/// Reads a Hugging Face `config.json`.
pub fn parse(text: &str) -> Result<Launch, Error> {
    let root = super::deepspeed::strict_json(text, "config.json")?;
    let Some(obj) = root.as_object() else {
        return Err(Error::Parse { message: "config.json must be a JSON object".into() });
    };
    let mut l = Launch::new(Format::HfConfig);
    let line_of = |key: &str| text.lines().position(|l| l.contains(&format!("\"{key}\""))).map_or(0, |i| i + 1);
    let nested = obj.get("text_config").and_then(Value::as_object);
    let str_of = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let model_type =
        nested.and_then(|t| str_of(t, "model_type")).or_else(|| str_of(obj, "model_type")).unwrap_or_default();
    let gated_family = GATED_FAMILIES.contains(&model_type.as_str());
    // Every key with the name shown (`text_config.hidden_size`): the root's, then the text model's
    // (which replace the root's).
    let mut keys: Vec<(String, &str, &Value)> = Vec::new();
    for (k, v) in obj {
        match k.as_str() {
            "text_config" if v.is_object() => {}
            _ => keys.push((k.clone(), k.as_str(), v)),
        }
    }
    if let Some(t) = nested {
        l.notes.reading(format!(
            "a multimodal config: its text model (text_config, `{model_type}`) is read; the other towers are not modelled"
        ));
        for (k, v) in t {
            keys.push((format!("text_config.{k}"), k.as_str(), v));
        }
    }
    let mut late: Vec<(String, &str, &Value)> = Vec::new();
    for (shown, key, value) in keys {
        if LATE.contains(&key) {
            late.push((shown, key, value));
            continue;
        }
        read_key(&mut l, &shown, key, value, line_of(key), &model_type)?;
    }
    late_keys(&mut l, &late, &line_of)?;
    window_keys(&mut l, &late, &line_of, &model_type)?;
    finish(&mut l, &model_type, gated_family, &line_of)?;
    Ok(l)
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads one key (`shown`: as written with its prefix; `key`: the bare name).
fn read_key(
    l: &mut Launch,
    shown_key: &str,
    key: &str,
    value: &Value,
    line: usize,
    model_type: &str,
) -> Result<(), Error> {
    let o = SettingOrigin::new(shown_key, line);
    let int = || -> Result<u64, Error> {
        value.as_u64().filter(|n| *n > 0 && *n <= 1 << 40).ok_or_else(|| o.error(value, "must be a positive integer"))
    };
    let nonneg = || value.as_u64().ok_or_else(|| o.error(value, "must be a non-negative integer"));
    let s = &mut l.settings;
    match key {
        "hidden_size" | "n_embd" | "n_embed" | "d_model" => s.hidden.put_once(int()?, &o)?,
        "num_hidden_layers" | "n_layer" | "num_layers" => s.layers.put_once(int()?, &o)?,
        "num_attention_heads" | "n_head" => s.heads.put_once(int()?, &o)?,
        "num_key_value_heads" => {
            if !value.is_null() {
                s.kv_heads.put(int()?, &o);
            }
        }
        "head_dim" => {
            if !value.is_null() {
                s.head_dim.put(int()?, &o);
            }
        }
        "intermediate_size" | "n_inner" | "ffn_dim" | "ffn_hidden_size" => {
            if !value.is_null() {
                s.ffn_hidden.put(int()?, &o);
            }
        }
        "vocab_size" => s.vocab.put_once(int()?, &o)?,
        "tie_word_embeddings" => {
            let b = value.as_bool().ok_or_else(|| o.error(value, "must be true or false"))?;
            s.tied_embeddings.put(b, &o);
        }
        "hidden_act" | "activation_function" => {
            let act = value.as_str().ok_or_else(|| o.error(value, "must be a string"))?;
            let gated = GATED_FAMILIES.contains(&model_type) || act.contains("glu");
            s.gated_mlp.put(gated, &o);
        }
        "model_type" => {}
        "architectures" => {
            if let Some(name) = value.as_array().and_then(|a| a.first()).and_then(Value::as_str) {
                s.model_name.put(name.to_string(), &o);
            } else if !value.is_null() {
                return Err(o.error(value, "must be a list of class names"));
            }
        }
        "num_local_experts" | "n_routed_experts" | "num_experts" => {
            if !value.is_null() {
                s.moe.experts.put(int()?, &o);
            }
        }
        "num_experts_per_tok" | "experts_per_token" => {
            if !value.is_null() {
                s.moe.top_k.put(int()?, &o);
            }
        }
        "moe_intermediate_size" => s.moe.expert_ffn_hidden.put_once(int()?, &o)?,
        "shared_expert_intermediate_size" => {
            if value.as_u64() != Some(0) {
                s.moe.shared_ffn_hidden.put(int()?, &o);
            }
        }
        "n_shared_experts" => {
            if !value.is_null() && value.as_u64() != Some(0) {
                s.moe.shared_experts.put(int()?, &o);
            }
        }
        "first_k_dense_replace" => s.moe.first_dense_layers.put_once(nonneg()?, &o)?,
        "decoder_sparse_step" | "moe_layer_freq" | "interleave_moe_layer_step" => {
            s.moe.layer_pattern.put(int()?.to_string(), &o);
        }
        "mlp_only_layers" => {
            let list = value.as_array().ok_or_else(|| o.error(value, "must be a list of layer indices"))?;
            let idx: Vec<u64> = list.iter().filter_map(Value::as_u64).collect();
            if idx.len() != list.len() || idx.iter().enumerate().any(|(i, v)| *v != i as u64) {
                return Err(o.error(
                    value,
                    "fmperf reads dense layers at the start of the model ([0, 1, …, k-1]); other dense layers are not modelled",
                ));
            }
            if !idx.is_empty() {
                s.moe.first_dense_layers.put(idx.len() as u64, &o);
            }
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
        "kv_lora_rank" => {
            if !value.is_null() {
                s.moe.kv_lora_rank.put(int()?, &o);
                s.moe.mla.put(true, &o);
            }
        }
        "qk_nope_head_dim" => s.moe.qk_nope_head_dim.put_once(int()?, &o)?,
        "qk_rope_head_dim" => s.moe.qk_rope_head_dim.put_once(int()?, &o)?,
        "v_head_dim" => s.moe.v_head_dim.put_once(int()?, &o)?,
        "sliding_window" => {
            if value.is_null() {
                l.unused(
                    shown_key.to_string(),
                    "null",
                    "no sliding window (null): every block attends to the whole prefix",
                );
            } else {
                s.window_tokens.put_once(int()?, &o)?;
            }
        }
        // The attention implementation transformers runs (`attn_implementation` as saved by
        // `save_pretrained`, `_attn_implementation` in older files): eager is unfused attention,
        // SDPA and flash-attn 2 FlashAttention-2 class, flash-attn 3 the part's own kernel.
        "attn_implementation" | "_attn_implementation" => {
            if value.is_null() {
                l.unused(shown_key.to_string(), "null", "not given (null): the stack's attention kernel");
            } else {
                let v = value.as_str().ok_or_else(|| o.error(value, "must be a string"))?;
                let kernel = match v.trim().to_ascii_lowercase().as_str() {
                    "eager" => AttentionKernel::Unfused,
                    "sdpa" | "flash_attention_2" | "flex_attention" => AttentionKernel::Fa2,
                    "flash_attention_3" => AttentionKernel::Native,
                    _ => {
                        return Err(o.error(
                            value,
                            "must be eager, sdpa, flash_attention_2, flash_attention_3 or flex_attention",
                        ));
                    }
                };
                s.attention_kernel.put_once(kernel, &o)?;
            }
        }
        "num_nextn_predict_layers" => {
            let n = nonneg()?;
            if n > 0 {
                s.moe.mtp_layers.put(n, &o);
            }
        }
        _ => l.unused(shown_key.to_string(), shown(value), reason(key)),
    }
    Ok(())
}

/// Falcon's key/value heads (`new_decoder_architecture` → `num_kv_heads`, else `multi_query` →
/// 1) and Llama 4's `intermediate_size_mlp`.
fn late_keys(l: &mut Launch, late: &[(String, &str, &Value)], line_of: &dyn Fn(&str) -> usize) -> Result<(), Error> {
    let find = |k: &str| late.iter().find(|(_, key, _)| *key == k);
    let flag = |k: &str| -> Result<Option<(bool, SettingOrigin)>, Error> {
        match find(k) {
            None => Ok(None),
            Some((shown, key, v)) => {
                let o = SettingOrigin::new(shown.clone(), line_of(key));
                let b = v.as_bool().ok_or_else(|| o.error(v, "must be true or false"))?;
                Ok(Some((b, o)))
            }
        }
    };
    let new_arch = flag("new_decoder_architecture")?;
    let multi_query = flag("multi_query")?;
    let kv = match find("num_kv_heads") {
        Some((shown, key, v)) if !v.is_null() => {
            let o = SettingOrigin::new(shown.clone(), line_of(key));
            Some((v.as_u64().filter(|n| *n > 0).ok_or_else(|| o.error(v, "must be a positive integer"))?, o))
        }
        _ => None,
    };
    let s = &mut l.settings;
    match (&new_arch, &multi_query, kv) {
        (Some((true, _)), _, Some((n, o))) => s.kv_heads.put_once(n, &o)?,
        (Some((true, o)), _, None) => {
            return Err(o.error("true", "the new decoder architecture needs num_kv_heads"));
        }
        (_, Some((true, o)), _) => {
            s.kv_heads.put(1, o);
            l.notes.reading("multi_query: one key/value head".into());
        }
        (None, None, Some((n, o))) => s.kv_heads.put_once(n, &o)?,
        (_, _, Some((n, o))) => {
            l.unused(o.key, n.to_string(), "no effect: Falcon reads num_kv_heads only with new_decoder_architecture")
        }
        _ => {}
    }
    for (which, o) in [new_arch, multi_query].into_iter().flatten().map(|(b, o)| (b, o)) {
        if !which {
            l.unused(o.key, "false", why::ASSUMED);
        }
    }
    if let Some((shown, key, v)) = find("intermediate_size_mlp") {
        let o = SettingOrigin::new(shown.clone(), line_of(key));
        let dense = v.as_u64().filter(|n| *n > 0).ok_or_else(|| o.error(v, "must be a positive integer"))?;
        let s = &mut l.settings;
        if let (Some(experts), Some(io)) = (s.ffn_hidden.copied(), s.ffn_hidden.origin.clone()) {
            s.moe.expert_ffn_hidden.put(experts, &io);
            l.notes.reading(format!(
                "{}: the experts' width {experts}; the dense layers' is intermediate_size_mlp {dense}",
                io.key
            ));
        }
        l.settings.ffn_hidden.put(dense, &o);
    }
    Ok(())
}

/// Which blocks use the `sliding_window` ([`crate::window`]): `use_sliding_window` false switches
/// it off (Qwen2/3); `layer_types` lists each block's kind; else `sliding_window_pattern` (Gemma 3,
/// Cohere 2: one full block in every `n`), Gemma 2's alternation, Qwen2's `max_window_layers`
/// (the first `m` blocks full), or every block.
fn window_keys(
    l: &mut Launch,
    late: &[(String, &str, &Value)],
    line_of: &dyn Fn(&str) -> usize,
    model_type: &str,
) -> Result<(), Error> {
    let find = |k: &str| {
        late.iter()
            .find(|(_, key, v)| *key == k && !v.is_null())
            .map(|(shown, key, v)| (SettingOrigin::new(shown.clone(), line_of(key)), *v))
    };
    // A window key written as null says nothing: listed, not read.
    for (shown, key, v) in late {
        if v.is_null()
            && ["use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern"].contains(key)
        {
            l.unused(shown.clone(), "null", "not given (null)");
        }
    }
    let (use_window, types, pattern, max_full) =
        (find("use_sliding_window"), find("layer_types"), find("sliding_window_pattern"), find("max_window_layers"));
    let switched_off = match &use_window {
        Some((o, v)) => !v.as_bool().ok_or_else(|| o.error(v, "must be true or false"))?,
        None => false,
    };
    let window = l.settings.window_tokens.copied();
    let unused = |l: &mut Launch, found: &Option<(SettingOrigin, &Value)>, why: &str| {
        if let Some((o, v)) = found {
            l.unused(o.key.clone(), shown(v), why);
        }
    };
    if switched_off || window.is_none() {
        let why = if switched_off {
            "no effect: use_sliding_window is false (every block attends to the whole prefix)"
        } else {
            "no effect without a sliding_window (every block attends to the whole prefix)"
        };
        if switched_off && let Some(tokens) = l.settings.window_tokens.value.take() {
            let key = l.settings.window_tokens.origin.take().map_or("sliding_window".to_string(), |o| o.key);
            l.unused(key, tokens.to_string(), why);
        }
        for found in [&types, &pattern, &max_full] {
            unused(l, found, why);
        }
        if let Some((o, v)) = &use_window {
            let said = if switched_off {
                "read: every block attends to the whole prefix"
            } else {
                "no effect: no sliding_window"
            };
            l.unused(o.key.clone(), shown(v), said);
        }
        return Ok(());
    }
    if let Some((o, v)) = &use_window {
        l.unused(o.key.clone(), shown(v), "read with sliding_window");
    }
    let put = |l: &mut Launch, text: String, o: &SettingOrigin| {
        l.settings.window_pattern.put(text, o);
    };
    if let Some((o, v)) = &types {
        let list = v.as_array().ok_or_else(|| o.error(v, "must be a list of layer kinds"))?;
        let listed = crate::window::hf_layer_types(list).map_err(|rule| o.error(v, rule))?;
        // Both given: they must say the same (one full block in every n), else an error naming both.
        if let Some((po, pv)) = &pattern
            && let Some(n) = pv.as_u64()
            && !crate::window::lists_full_every(&listed, n)
        {
            return Err(po.error(
                pv,
                format!("disagrees with {} (line {}): they must name the same full-attention blocks", o.key, o.line),
            ));
        }
        put(l, listed, o);
        unused(l, &pattern, "read from layer_types");
        unused(l, &max_full, "read from layer_types");
    } else if let Some((o, v)) = &pattern {
        let n = v.as_u64().filter(|n| *n > 0).ok_or_else(|| o.error(v, "must be a positive integer"))?;
        put(l, n.to_string(), o);
        unused(l, &max_full, "no effect with sliding_window_pattern");
    } else if model_type == "gemma2" {
        // transformers' Gemma2DecoderLayer: `is_sliding = not bool(layer_idx % 2)`.
        put(l, "2".to_string(), &SettingOrigin::new("model_type", line_of("model_type")));
        l.notes.reading(
            "`gemma2`: the window in every other block (Gemma 2's alternating local and global attention)".into(),
        );
        unused(l, &max_full, "no effect on Gemma 2");
    } else if let Some((o, v)) = &max_full {
        // Qwen2/3 (transformers' Qwen2Config): blocks from `max_window_layers` on are windowed.
        let m = v.as_u64().ok_or_else(|| o.error(v, "must be a non-negative integer"))?;
        let layers = l.settings.layers.copied().unwrap_or(0);
        if m < layers {
            let text = if m == 0 { format!("[1]*{layers}") } else { format!("[0]*{m}+[1]*{}", layers - m) };
            put(l, text, o);
        } else {
            let why = "no block is windowed: every block is below max_window_layers";
            l.unused(o.key.clone(), shown(v), why);
            if let (Some(tokens), Some(wo)) =
                (l.settings.window_tokens.value.take(), l.settings.window_tokens.origin.take())
            {
                l.unused(wo.key, tokens.to_string(), why);
            }
        }
    }
    Ok(())
}

/// Defaults of the family, the experts' width and the head-width rule.
fn finish(l: &mut Launch, model_type: &str, gated_family: bool, line_of: &dyn Fn(&str) -> usize) -> Result<(), Error> {
    let s = &mut l.settings;
    let mt = SettingOrigin::new("model_type", line_of("model_type"));
    if s.model_name.get().is_none() && !model_type.is_empty() {
        s.model_name.put(model_type.to_string(), &mt);
    }
    if s.gated_mlp.get().is_none() {
        s.gated_mlp.put(gated_family, &mt);
    }
    if s.tied_embeddings.get().is_none() {
        let tied = TIED_FAMILIES.contains(&model_type) || !(gated_family || ["gptj", "gpt_neox"].contains(&model_type));
        s.tied_embeddings.put(tied, &SettingOrigin::new("tie_word_embeddings", 0));
        l.notes.reading(format!(
            "tie_word_embeddings not given: {} (the default of `{model_type}` configs)",
            if tied { "tied" } else { "untied" }
        ));
    }
    let s = &mut l.settings;
    if s.moe.is_moe() {
        if s.moe.expert_ffn_hidden.get().is_none()
            && let (Some(f), Some(o)) = (s.ffn_hidden.copied(), s.ffn_hidden.origin.clone())
        {
            // Mixtral's and GPT-OSS's experts have the MLP width of intermediate_size.
            s.moe.expert_ffn_hidden.put(f, &o);
        }
        if ONE_SHARED_EXPERT.contains(&model_type) && s.moe.shared_experts.get().is_none() {
            s.moe.shared_experts.put(1, &mt);
            l.notes.reading(format!("`{model_type}`: one shared expert of the experts' width in every MoE layer"));
        }
    }
    let s = &l.settings;
    if s.head_dim.get().is_none()
        && let (Some(h), Some(n)) = (s.hidden.copied(), s.heads.copied())
        && !h.is_multiple_of(n)
    {
        return Err(s.hidden.error(
            "hidden_size",
            h,
            format!("is not a multiple of {} = {n} and no head_dim is given", s.heads.key_or("num_attention_heads")),
        ));
    }
    Ok(())
}

/// Why a `config.json` key that fmperf does not read does not matter.
fn reason(key: &str) -> &'static str {
    match key {
        "torch_dtype" | "dtype" => "the training precision comes from the launch, not the model file",
        "use_cache" => crate::stack_memory::USE_CACHE,
        "transformers_version" | "_name_or_path" | "auto_map" | "return_dict" => why::JOB,
        "bos_token_id" | "eos_token_id" | "pad_token_id" | "sep_token_id" | "decoder_start_token_id" => why::DATA,
        "rope_theta"
        | "rope_scaling"
        | "rms_norm_eps"
        | "layer_norm_eps"
        | "layer_norm_epsilon"
        | "initializer_range"
        | "initializer_factor"
        | "router_aux_loss_coef"
        | "output_router_logits"
        | "router_z_loss_coef"
        | "norm_topk_prob"
        | "routed_scaling_factor"
        | "topk_method"
        | "seq_aux"
        | "aux_loss_alpha"
        | "rotary_emb_base"
        | "logit_scale_init_value" => why::HYPERPARAMETER,
        "n_group" | "topk_group" => {
            "affects the dispatch, not modelled here: group-limited routing; give `--moe dispatcher=deepep:M` to cap the domains a token reaches"
        }
        "ep_size" => "the expert-parallel degree comes from the launch or the search, not the model file",
        "attention_dropout"
        | "hidden_dropout"
        | "resid_pdrop"
        | "embd_pdrop"
        | "attn_pdrop"
        | "attention_bias"
        | "mlp_bias"
        | "dropout"
        | "bias"
        | "enable_bias"
        | "alibi"
        | "parallel_attn"
        | "use_parallel_residual"
        | "rotary_dim"
        | "rotary_pct"
        | "partial_rotary_factor"
        | "apply_residual_connection_post_layernorm"
        | "do_layer_norm_before"
        | "word_embed_proj_dim"
        | "scale_attn_weights"
        | "layer_norm_elementwise_affine" => {
            "affects performance slightly, not modelled (dropout, biases, positional encoding, residual layout)"
        }
        "attention_chunk_size" | "no_rope_layers" | "query_pre_attn_scalar" => {
            "affects attention FLOPs, not modelled: fmperf prices chunked and NoPE blocks as full causal attention"
        }
        "pretraining_tp" => why::ASSUMED,
        "max_position_embeddings" | "n_positions" | "n_ctx" | "seq_length" => {
            "does not affect performance (the longest position; the training sequence length is the launch's --seq-len)"
        }
        "vision_config"
        | "vision_config_dict"
        | "audio_config"
        | "text_config_dict"
        | "projection_dim"
        | "mm_tokens_per_image"
        | "image_token_index"
        | "image_token_id"
        | "vision_feature_layer" => {
            "another tower of a multimodal model (or its projection): not modelled, fmperf prices the text model"
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
