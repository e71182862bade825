//! A model file read as a launch (a Hugging Face `config.json`, a MaxText model YAML, the model
//! part of any launch) turned into fmperf's own model document ([`CatalogModel`]), so that such a
//! file is accepted wherever a model is: `--model FILE`, `fmperf show FILE`, `fmperf check FILE`,
//! the page's pickers and import.
//!
//! The shape is the one [`ModelOnly`] reads (the framework's defaults applied, each with a note);
//! the sequence length is the file's own when it states one (a Hugging Face config states only the
//! longest position, which is not the training length), else absent: the user gives it.

use fmperf_core::Error;
use fmperf_core::catalog::{CatalogModel, Mlp, TrainingBudget};
use fmperf_core::vocab::NoteList;

use super::scenario::{ModelOnly, Overrides};
use super::{Format, Launch, Source, parse_files};

/// The sequence length [tokens] used to read the shape of a file that states none; it never
/// reaches the document (its `seq_len` stays absent).
const SHAPE_ONLY_SEQ_LEN: u64 = 4096;

/// Whether `text` (named `name`) is a model file of a format fmperf's launch readers know, rather
/// than fmperf's own JSON or the reference's: a Hugging Face `config.json` or a MaxText model YAML.
pub fn is_model_file(text: &str, name: Option<&str>) -> bool {
    let Ok(format) = super::detect(text, name) else { return false };
    match format {
        Format::HfConfig => {
            // A model's config names its architecture or its width; fmperf's own documents and the
            // reference's model and system JSON name none of these (core reads them).
            const HF_KEYS: [&str; 9] = [
                "model_type",
                "architectures",
                "hidden_size",
                "n_embd",
                "d_model",
                "num_hidden_layers",
                "n_layer",
                "text_config",
                "num_attention_heads",
            ];
            let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else { return false };
            let Some(o) = v.as_object() else { return false };
            !(o.contains_key("schema_version") || o.contains_key("kind")) && HF_KEYS.iter().any(|k| o.contains_key(*k))
        }
        Format::MaxText => true,
        _ => false,
    }
}

/// The model of `text` as fmperf's model document, with `id` (the file's stem). Errors name the
/// key that is missing or invalid.
pub fn model_document(text: &str, name: Option<&str>, id: &str) -> Result<CatalogModel, Error> {
    let launch = parse_files(&[Source { name, text }], &[])?;
    from_launch(&launch, id, name.unwrap_or("the file"))
}

/// The model of a read `launch` as fmperf's model document.
pub fn from_launch(launch: &Launch, id: &str, file: &str) -> Result<CatalogModel, Error> {
    let stated_seq = launch.settings.seq_len.copied();
    let o = Overrides { seq_len: Some(stated_seq.unwrap_or(SHAPE_ONLY_SEQ_LEN)), ..Overrides::default() };
    let m = ModelOnly::from_launch(launch, &o, 1)?;
    let w = &m.workload;
    let mut notes = m.notes.clone();
    notes.extend(launch.notes.iter().cloned());
    if stated_seq.is_none() {
        notes.reading(format!(
            "{file} states no training sequence length (a config's max_position_embeddings is the longest position, \
             not the training length): give it with --seq-len or in the scenario"
        ));
    }
    Ok(CatalogModel {
        id: id.to_string(),
        name: m.name.clone(),
        family: launch.format.title().to_string(),
        seq_len: stated_seq,
        hidden: Some(w.hidden),
        heads: Some(w.heads),
        kv_heads: Some(w.kv_heads),
        head_dim: (w.head_dim * w.heads != w.hidden).then_some(w.head_dim),
        layers: Some(w.layers),
        ffn_hidden: Some(w.ffn_hidden),
        mlp: if w.gated_mlp { Mlp::SwiGlu } else { Mlp::Gelu },
        vocab: w.vocab,
        params_b: None,
        moe: w.moe.clone(),
        mla: w.mla,
        mtp_layers: (w.mtp_layers > 0).then_some(w.mtp_layers),
        sliding_window: w.sliding_window,
        training_budget: TrainingBudget::DEFAULT_TOKENS,
        sources: vec![format!("{file} ({}), read by fmperf", launch.format.title())],
        notes,
        field_sources: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HF: &str = include_str!("../../../examples/launch/hf-llama3-8b-config.json");
    const HF_MOE: &str = include_str!("../../../examples/launch/hf-qwen3-30b-a3b-config.json");

    #[test]
    fn a_config_json_becomes_a_model_document() {
        assert!(is_model_file(HF, Some("config.json")));
        assert!(!is_model_file("{\"schema_version\": 1, \"kind\": \"model\"}", Some("m.json")));
        assert!(!is_model_file("{\"l\": 2048, \"e\": 4096, \"h\": 32, \"depth\": 2}", Some("m.json")));
        assert!(!is_model_file("{\"matrix_flops_fp16\": 312, \"hbm_capacity\": 80}", Some("config-A100.json")));
        let m = model_document(HF, Some("config.json"), "config").unwrap();
        assert_eq!(
            (m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden),
            (Some(32), Some(4096), Some(32), Some(8), Some(14336))
        );
        assert_eq!((m.vocab, m.seq_len, m.mlp), (Some(128256), None, Mlp::SwiGlu));
        assert!(m.notes.iter().any(|n| n.contains("no training sequence length")), "{:?}", m.notes);
        let q = model_document(HF_MOE, Some("config.json"), "qwen3").unwrap();
        let moe = q.moe.unwrap();
        assert_eq!((moe.experts, moe.top_k, moe.expert_ffn), (128, 8, 768));
        assert_eq!(q.head_dim, Some(128), "Qwen3: 32 heads × 128 ≠ 2048");
    }
}
