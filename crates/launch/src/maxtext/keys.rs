//! The model, precision and recomputation keys of a MaxText configuration (the device mesh and the
//! batch are [`super::mesh`]'s), and why the other keys do not matter.

use super::models::{self, Model};
use super::{Keys, Precedence, Raw};
use crate::settings::{SettingOrigin, boolean, positive};
use crate::{Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::Recompute;
use fmperf_core::vocab::{Note, NoteList};

/// Keys of a model file (`configs/models/*.yml`): a YAML with only these is read as a model file.
const MODEL_KEYS: &[&str] = &[
    "base_emb_dim",
    "base_num_query_heads",
    "base_num_kv_heads",
    "base_mlp_dim",
    "base_moe_mlp_dim",
    "base_moe_dim",
    "base_num_decoder_layers",
    "head_dim",
    "mlp_activations",
    "vocab_size",
    "decoder_block",
    "logits_via_embedding",
    "num_experts",
    "num_experts_per_tok",
    "shared_experts",
    "first_num_dense_layers",
    "interleave_moe_layer_step",
    "attention_type",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "mtp_num_layers",
    "routed_score_func",
    "global_parameter_scale",
];

/// Keys this module reads (the rest are [`super::mesh`]'s or unused).
const READ: &[&str] =
    &["model_name", "max_target_length", "dtype", "quantization", "remat_policy", "sliding_window_size"];

/// MaxText's decoders with local (sliding-window) attention blocks, as one full (global) block in
/// every `n`: their attention patterns in google/maxtext at e591f30 — `models/gemma2.py` (each
/// MaxText layer a local then a global block), `gemma3.py` and `gemma4.py` (five local, one
/// global), `gpt_oss.py` (local, global), `olmo3.py` (three local, one global). Other decoders
/// build global attention only, so `sliding_window_size` has no effect there
/// (`layers/attentions.py`: "Sliding window applies only to LOCAL_SLIDING layers").
const WINDOWED_DECODERS: [(&str, u64); 5] = [("gemma2", 2), ("gemma3", 6), ("gemma4", 6), ("gpt_oss", 2), ("olmo3", 4)];

/// Whether `key` belongs to a model file (shape, experts, attention, normalisation, RoPE).
pub fn is_model_key(key: &str) -> bool {
    MODEL_KEYS.contains(&key)
        || key.starts_with("rope_")
        || key.starts_with("normaliz")
        || key.starts_with("routed_")
        || key.starts_with("mlp_")
        || key.starts_with("use_")
        || key.starts_with("tokenizer_")
        || key.starts_with("_")
        || [
            "enable_dropout",
            "max_position_embeddings",
            "original_max_position_embeddings",
            "beta_fast",
            "beta_slow",
            "mscale",
            "sliding_window_size",
            "attention_bias",
            "attention_sink",
            "final_logits_soft_cap",
            "attn_logits_soft_cap",
            "nope_layer_interval",
            "layers_to_repeat",
            "temperature_tuning",
            "chunk_attn_window_size",
            "inhomogeneous_layer_cycle_interval",
            "load_balance_loss_weight",
            "norm_topk_prob",
            "logits_dot_in_fp32",
            "normalize_embedding_logits",
            "trainable_position_size",
            "fused_qkv",
            "fused_mlp",
            "opt_type",
            "local_rope_max_timescale",
        ]
        .contains(&key)
}

/// Whether `key` is read by [`apply`] or [`super::mesh::apply`].
pub fn is_read(key: &str) -> bool {
    MODEL_KEYS.contains(&key) || READ.contains(&key) || super::mesh::is_read(key)
}

fn origin(r: &Raw) -> SettingOrigin {
    r.origin.clone()
}

fn int(r: &Raw) -> Result<u64, Error> {
    positive(&r.value, &r.origin)
}

fn nonneg(r: &Raw) -> Result<u64, Error> {
    let t = r.value.trim().replace('_', "");
    t.parse::<u64>().map_err(|_| r.origin.error(&r.value, "must be a non-negative integer"))
}

/// Reads the model, sequence, precision and recomputation keys of `k` into `l`, and lists every
/// key neither this module nor the mesh reads. `launch`: the sources include a config or command
/// line (base.yml's defaults then apply where they are silent).
pub fn apply(l: &mut Launch, k: &Keys, launch: bool) -> Result<(), Error> {
    if let Some(g) = k.get("global_parameter_scale")
        && g.value.trim() != "1"
    {
        return Err(g
            .origin
            .error(&g.value, "scales the base_* dimensions; fmperf reads only global_parameter_scale=1"));
    }
    shape(l, k, launch)?;
    window(l, k)?;
    experts(l, k)?;
    run(l, k, launch)?;
    let mut rest: Vec<(&String, &Raw)> = k.map.iter().filter(|(key, _)| !is_read(key)).collect();
    fmperf_core::sort::sort_by_key(&mut rest, |(_, r)| (r.source, r.origin.line));
    for (key, r) in rest {
        let shown = match &r.origin.file {
            Some(f) => format!("{f}: {key}"),
            None => key.clone(),
        };
        l.unused(shown, r.value.clone(), reason(key));
    }
    Ok(())
}

/// The shape: the keys given, else the model file `model_name` names, else base.yml's defaults.
fn shape(l: &mut Launch, k: &Keys, launch: bool) -> Result<(), Error> {
    let name = k.get("model_name").filter(|r| !matches!(r.value.trim(), "" | "default"));
    if let Some(n) = name {
        l.settings.model_name.put(n.value.trim().to_string(), &origin(n));
    }
    // A key from a model file or the command line; a config YAML's shape is replaced by the model file.
    let strong = |key: &str| k.get(key).filter(|r| r.rank > Precedence::Config || name.is_none());
    let table: Option<&Model> = match name {
        Some(n) if strong("base_emb_dim").is_none() => Some(models::find(&n.value).ok_or_else(|| {
            n.origin
                .error(&n.value, "not a MaxText model file fmperf knows; give the model file (configs/models/<name>.yml) with another --from")
                .with_hint(format!("known: {}", models::names()))
        })?),
        _ => None,
    };
    if let (Some(m), Some(n)) = (table, name) {
        l.notes.reading_of("model_name", format!(
            "model_name={}: the shape of MaxText's configs/models/{}.yml ({} layers, width {}, {} heads, {} KV heads, MLP {}, vocabulary {})",
            n.value, m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.mlp, m.vocab
        ));
    }
    let s = &mut l.settings;
    let from_table = |v: u64| name.map(|n| (v, n.origin.clone()));
    let none_given = strong("base_emb_dim").is_none() && table.is_none();
    if none_given && !launch {
        return Ok(());
    }
    let default = |key: &str, v: u64, notes: &mut Vec<Note>| {
        notes.reading_of(key, format!("{key} not given: base.yml's {v}"));
        (v, SettingOrigin::new(key, 0))
    };
    let mut notes = Vec::new();
    macro_rules! dim {
        ($slot:ident, $key:literal, $field:ident, $base:expr) => {{
            let (v, o) = match (strong($key), table) {
                (Some(r), _) => (int(r)?, origin(r)),
                (None, Some(m)) => from_table(m.$field).unwrap_or((m.$field, SettingOrigin::new("model_name", 0))),
                (None, None) => default($key, $base, &mut notes),
            };
            s.$slot.put(v, &o);
        }};
    }
    dim!(layers, "base_num_decoder_layers", layers, 16);
    dim!(hidden, "base_emb_dim", hidden, 2048);
    dim!(heads, "base_num_query_heads", heads, 16);
    dim!(kv_heads, "base_num_kv_heads", kv_heads, 16);
    dim!(head_dim, "head_dim", head_dim, 128);
    dim!(ffn_hidden, "base_mlp_dim", mlp, 7168);
    dim!(vocab, "vocab_size", vocab, 32000);
    let gated = match (strong("mlp_activations"), table) {
        (Some(r), _) => {
            let n = r
                .value
                .trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .split(',')
                .filter(|w| !w.trim().is_empty())
                .count();
            match n {
                1 => false,
                2 => true,
                _ => return Err(r.origin.error(&r.value, "must list one activation or two (a gated MLP)")),
            }
        }
        (None, Some(m)) => m.gated,
        (None, None) => {
            notes.reading_of(
                "mlp_activations",
                "mlp_activations not given: base.yml's [\"silu\", \"linear\"] (gated)".into(),
            );
            true
        }
    };
    let go = strong("mlp_activations").map_or_else(|| SettingOrigin::new("mlp_activations", 0), origin);
    s.gated_mlp.put(gated, &go);
    let (tied, to) = match (strong("logits_via_embedding"), table) {
        (Some(r), _) => (boolean(&r.value, &r.origin)?, origin(r)),
        (None, Some(m)) => (m.tied, name.map_or(SettingOrigin::new("model_name", 0), origin)),
        (None, None) => {
            notes.reading_of(
                "logits_via_embedding",
                "logits_via_embedding not given: base.yml's False (untied output layer)".into(),
            );
            (false, SettingOrigin::new("logits_via_embedding", 0))
        }
    };
    s.tied_embeddings.put(tied, &to);
    if let Some(b) = k.get("decoder_block")
        && b.value.trim() == "gemma2"
        && let Some(n) = s.layers.copied()
    {
        s.layers.put(2 * n, &origin(b));
        notes.reading_of(
            "decoder_block",
            format!(
                "decoder_block gemma2: each MaxText layer is a local and a global attention block: {} blocks",
                2 * n
            ),
        );
    }
    if let Some(m) = table
        && let Some(e) = m.moe
    {
        let o = name.map_or(SettingOrigin::new("model_name", 0), origin);
        let mm = &mut s.moe;
        mm.experts.put(e.experts, &o);
        mm.top_k.put(e.top_k, &o);
        mm.expert_ffn_hidden.put(e.mlp, &o);
        if e.shared > 0 {
            mm.shared_experts.put(e.shared, &o);
        }
        if e.first_dense > 0 {
            mm.first_dense_layers.put(e.first_dense, &o);
        }
        if let Some((q, kv, nope, rope, v)) = e.mla {
            mm.mla.put(true, &o);
            if q > 0 {
                mm.q_lora_rank.put(q, &o);
            }
            mm.kv_lora_rank.put(kv, &o);
            mm.qk_nope_head_dim.put(nope, &o);
            mm.qk_rope_head_dim.put(rope, &o);
            mm.v_head_dim.put(v, &o);
        }
    }
    if name.is_some() {
        for (key, r) in
            k.map.iter().filter(|(key, r)| r.rank == Precedence::Config && MODEL_KEYS.contains(&key.as_str()))
        {
            notes.assumption_of(
                key,
                format!("{key} = {} of the config YAML is replaced by the model file model_name names", r.value),
            );
        }
    }
    l.notes.append(&mut notes);
    Ok(())
}

/// The sliding window: `sliding_window_size` (0: none, base.yml's default) in the blocks that the
/// decoder makes local ([`WINDOWED_DECODERS`]); with `model_name` alone, the model file's
/// ([`models::WINDOWS`]). A window the decoder does not use is listed with why.
fn window(l: &mut Launch, k: &Keys) -> Result<(), Error> {
    let named = k.get("model_name").and_then(|n| {
        models::WINDOWS.iter().find(|w| models::find(&n.value).is_some_and(|m| m.name == w.0)).map(|w| (n, w))
    });
    let given = k.get("sliding_window_size");
    let (tokens, to) = match (given, named) {
        (Some(r), _) => (nonneg(r)?, origin(r)),
        (None, Some((n, w))) if k.get("decoder_block").is_none() => (w.2, origin(n)),
        _ => return Ok(()),
    };
    if tokens == 0 {
        return Ok(());
    }
    let block = match (k.get("decoder_block"), named) {
        (Some(b), _) => Some((b.value.trim().trim_matches('"').to_string(), origin(b))),
        (None, Some((n, w))) => Some((w.1.to_string(), origin(n))),
        (None, None) => None,
    };
    let pattern =
        block.as_ref().and_then(|(b, o)| WINDOWED_DECODERS.iter().find(|d| d.0 == b).map(|d| (d.1, o.clone())));
    match pattern {
        Some((n, o)) => {
            l.settings.window_tokens.put(tokens, &to);
            l.settings.window_pattern.put(n.to_string(), &o);
            l.notes.reading(format!(
                "decoder_block {}: local attention in {} of every {n} blocks (MaxText's models/{}.py)",
                block.as_ref().map_or("", |(b, _)| b.as_str()),
                n - 1,
                block.as_ref().map_or("", |(b, _)| b.as_str())
            ));
        }
        None => {
            if let Some(r) = given {
                let why = match &block {
                    Some((b, _)) => format!("no effect: decoder_block {b} has no local-attention blocks (MaxText applies the window only to them)"),
                    None => "no effect: the decoder_block is not given (MaxText applies the window only to the local blocks of Gemma, gpt-oss and OLMo 3 decoders)".to_string(),
                };
                let shown = match &r.origin.file {
                    Some(f) => format!("{f}: sliding_window_size"),
                    None => "sliding_window_size".to_string(),
                };
                l.unused(shown, r.value.clone(), why);
            }
        }
    }
    Ok(())
}

/// Experts and latent attention given as keys (over the model file's).
fn experts(l: &mut Launch, k: &Keys) -> Result<(), Error> {
    let named = k.get("model_name").is_some_and(|r| !matches!(r.value.trim(), "" | "default"));
    // Inserted one by one, not collected: a `collect` into a map sorts its entries again, with its
    // own copy of the standard sort in the page.
    let mut view = Keys::default();
    for (key, r) in k.map.iter().filter(|(_, r)| r.rank > Precedence::Config || !named) {
        view.map.insert(key.clone(), r.clone());
    }
    let k = &view;
    let m = &mut l.settings.moe;
    if let Some(r) = k.get("num_experts") {
        m.experts.put(int(r)?, &origin(r));
    }
    if let Some(r) = k.get("num_experts_per_tok") {
        m.top_k.put(int(r)?, &origin(r));
    }
    if let Some(r) = k.get("base_moe_mlp_dim").or_else(|| k.get("base_moe_dim")) {
        m.expert_ffn_hidden.put(int(r)?, &origin(r));
    }
    if let Some(r) = k.get("shared_experts") {
        let n = nonneg(r)?;
        if n > 0 {
            m.shared_experts.put(n, &origin(r));
        }
    }
    if let Some(r) = k.get("first_num_dense_layers") {
        m.first_dense_layers.put(nonneg(r)?, &origin(r));
    }
    if let Some(r) = k.get("interleave_moe_layer_step") {
        m.layer_pattern.put(r.value.trim().to_string(), &origin(r));
    }
    if let Some(r) = k.get("routed_score_func") {
        m.router.put(r.value.trim().to_string(), &origin(r));
    }
    if let Some(r) = k.get("mtp_num_layers") {
        let n = nonneg(r)?;
        if n > 0 {
            m.mtp_layers.put(n, &origin(r));
        }
    }
    let mla = k.get("attention_type").is_some_and(|r| r.value.trim() == "mla");
    if let Some(r) = k.get("attention_type") {
        if mla {
            m.mla.put(true, &origin(r));
        } else {
            l.unused(
                r.origin.key.clone(),
                r.value.clone(),
                "affects attention FLOPs, not modelled: fmperf prices full causal attention",
            );
        }
    }
    let m = &mut l.settings.moe;
    for (key, slot) in [
        ("q_lora_rank", &mut m.q_lora_rank),
        ("kv_lora_rank", &mut m.kv_lora_rank),
        ("qk_nope_head_dim", &mut m.qk_nope_head_dim),
        ("qk_rope_head_dim", &mut m.qk_rope_head_dim),
        ("v_head_dim", &mut m.v_head_dim),
    ] {
        if let Some(r) = k.get(key) {
            let n = nonneg(r)?;
            if mla && n > 0 {
                slot.put(n, &origin(r));
            } else if !mla {
                l.unused.push(crate::Unused {
                    key: key.to_string(),
                    value: r.value.clone(),
                    why: "no effect without attention_type: mla".into(),
                });
            }
        }
    }
    Ok(())
}

/// Sequence length, precision and recomputation.
fn run(l: &mut Launch, k: &Keys, launch: bool) -> Result<(), Error> {
    let s = &mut l.settings;
    match k.get("max_target_length") {
        Some(r) => _ = s.seq_len.put(int(r)?, &origin(r)),
        None if launch => {
            s.seq_len.put(2048, &SettingOrigin::new("max_target_length", 0));
            l.notes.reading_of("max_target_length", "max_target_length not given: base.yml's 2048".into());
        }
        None => {}
    }
    let quant = k.get("quantization").filter(|r| !r.value.trim().is_empty());
    if let Some(q) = quant {
        let v = q.value.trim().to_ascii_lowercase();
        if v.contains("fp8") {
            s.precision.put(Precision::Fp8, &origin(q));
            l.notes.reading_of("quantization", format!("quantization={v}: FP8 matmuls"));
        } else if v == "int8" {
            s.precision.put(Precision::Fp8, &origin(q));
            l.notes.reading_of("quantization", "quantization=int8: 8-bit matmuls, priced at the FP8 rate".into());
        } else {
            return Err(q.origin.error(&q.value, "fmperf reads quantization fp8 (and its variants) or int8"));
        }
    } else if let Some(d) = k.get("dtype") {
        let p = match d.value.trim().to_ascii_lowercase().as_str() {
            "bfloat16" | "bf16" => Precision::Bf16,
            "float32" | "fp32" => Precision::Fp32,
            "float16" | "fp16" => Precision::Fp16,
            _ => return Err(d.origin.error(&d.value, "must be bfloat16, float32 or float16")),
        };
        s.precision.put(p, &origin(d));
    } else if launch {
        s.precision.put(Precision::Bf16, &SettingOrigin::new("dtype", 0));
        l.notes.reading_of("dtype", "dtype not given: base.yml's bfloat16".into());
    }
    if quant.is_some()
        && let Some(d) = k.get("dtype")
    {
        l.unused(
            d.origin.key.clone(),
            d.value.clone(),
            "the matmul precision is quantization's; other tensors are not modelled apart",
        );
    }
    let (policy, o) = match k.get("remat_policy") {
        Some(r) => (r.value.trim().to_string(), origin(r)),
        None if launch => {
            l.notes.reading_of("remat_policy", "remat_policy not given: base.yml's full".into());
            ("full".to_string(), SettingOrigin::new("remat_policy", 0))
        }
        None => return Ok(()),
    };
    let level = match policy.as_str() {
        "full" => Recompute::Full,
        "none" => Recompute::None,
        "" => return Err(o.error(&policy, "must name a remat policy (full, minimal, save_qkv_proj, …, none)")),
        // Every other policy as validation reads the same words (one reading of a remat policy):
        // by the share of the forward's matmul work it recomputes (the partial level).
        p => {
            let read = fmperf_core::validate::recompute_words::read_recompute(Some(p), None);
            l.notes.reading_of(
                "remat_policy",
                format!(
                    "remat_policy={p}: {}{}",
                    read.note.map(|n| n.text).unwrap_or_else(|| format!("read as {}", read.level.as_str())),
                    if read.offloaded { "; the offload to host memory is not modelled" } else { "" }
                ),
            );
            read.level
        }
    };
    if policy == "none" {
        l.notes.reading_of("remat_policy", "remat_policy=none: every activation kept (no recomputation)".into());
    }
    l.settings.recompute.put(level, &o);
    Ok(())
}

/// Why a MaxText key fmperf does not read does not matter.
pub fn reason(key: &str) -> &'static str {
    let has = |p: &[&str]| p.iter().any(|w| key.contains(w));
    if matches!(
        key,
        "enable_dropout"
            | "logits_dot_in_fp32"
            | "cast_logits_to_fp32"
            | "normalize_embedding_logits"
            | "activations_in_float32"
    ) {
        "affects performance slightly, not modelled"
    } else if has(&["checkpoint", "load_parameters", "load_full_state", "save_"]) {
        why::CHECKPOINT
    } else if has(&[
        "dataset",
        "data_column",
        "tokeniz",
        "hf_",
        "grain_",
        "add_bos",
        "add_eos",
        "shuffle",
        "packing",
        "max_segments",
        "expansion_factor",
        "reuse_example_batch",
        "corpus",
    ]) {
        why::DATA
    } else if has(&[
        "learning_rate",
        "adam_",
        "warmup",
        "lr_",
        "weight_decay",
        "gradient_clipping",
        "init_weights",
        "seed",
        "dropout",
        "opt_type",
        "loss",
        "z_loss",
        "norm_topk_prob",
        "epsilon",
        "rope",
        "scaling_factor",
        "routed_bias",
        "beta_",
    ]) {
        why::HYPERPARAMETER
    } else if has(&["log", "metrics", "profiler", "tensorboard", "goodput", "stack_trace", "monitor", "gcs"]) {
        why::LOGGING
    } else if has(&["eval"]) {
        why::EVALUATION
    } else if matches!(key, "steps") {
        why::LENGTH
    } else if matches!(
        key,
        "run_name"
            | "base_output_directory"
            | "base_config"
            | "jax_cache_dir"
            | "enable_single_controller"
            | "skip_jax_distributed_system"
    ) {
        why::JOB
    } else if matches!(key, "hardware" | "compile_topology" | "compile_topology_num_slices") {
        "the system comes from --system (a `# fmperf: system=` line); the hardware key only picks MaxText's code path"
    } else if has(&[
        "attention",
        "sa_block",
        "megablox",
        "sparse_matmul",
        "scan_",
        "fused_",
        "matmul_precision",
        "use_iota_embed",
        "cudnn",
        "kernel",
        "xla",
        "pallas",
        "tile",
    ]) {
        why::KERNEL
    } else if has(&[
        "sliding_window",
        "soft_cap",
        "chunk_attn",
        "nope_layer",
        "attention_sink",
        "attention_bias",
        "mlp_bias",
        "post_attn_norm",
        "post_ffw_norm",
        "qk_norm",
        "inhomogeneous",
        "layers_to_repeat",
        "temperature_tuning",
    ]) {
        "affects the blocks slightly or their attention FLOPs, not modelled"
    } else if matches!(key, "weight_dtype") {
        "fmperf keeps FP32 master weights and optimizer states (mixed precision); the weights' storage type is not modelled apart"
    } else if matches!(key, "capacity_factor") {
        "token dropping: fmperf prices dropless routing (MaxText's default -1)"
    } else if has(&["max_position_embeddings", "trainable_position_size"]) {
        "does not affect performance (the longest position; the training length is max_target_length)"
    } else if matches!(key, "decoder_block") {
        "the block type: its shape is read from the other keys"
    } else if matches!(
        key,
        "enable_dropout"
            | "logits_dot_in_fp32"
            | "cast_logits_to_fp32"
            | "normalize_embedding_logits"
            | "activations_in_float32"
    ) {
        "affects performance slightly, not modelled"
    } else {
        why::UNKNOWN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_keys_and_reasons() {
        assert!(
            is_model_key("base_emb_dim")
                && is_model_key("rope_max_timescale")
                && !is_model_key("per_device_batch_size")
        );
        assert_eq!(reason("steps"), why::LENGTH);
        assert_eq!(reason("enable_checkpointing"), why::CHECKPOINT);
        assert_eq!(reason("something_new"), why::UNKNOWN);
    }
}
