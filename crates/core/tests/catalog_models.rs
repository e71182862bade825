//! The model catalog: it loads, every entry has sources, the reference's three map exactly onto the
//! reference shapes, Llama entries keep GQA/SwiGLU and say what reference mode loses, unknown
//! GenSLM dimensions stay unknown, and every entry survives export and re-import.

use fmperf_core::catalog::{self, Mlp, TrainingBudget};
use fmperf_core::format::{self, Document};
use fmperf_core::{Error, ModelShape};

#[test]
fn catalog_loads_without_problems() {
    let loaded = catalog::load_models();
    assert!(loaded.is_ok(), "{:?}", loaded.err());
    let models = catalog::models();
    assert!(models.len() >= 26, "{} models", models.len());
    let mut ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), models.len(), "ids must be unique");
}

#[test]
fn every_entry_has_sources_and_a_name() {
    for m in catalog::models() {
        assert!(!m.sources.is_empty(), "{} has no source", m.id);
        assert!(!m.name.is_empty() && !m.family.is_empty(), "{}", m.id);
    }
}

#[test]
fn reference_models_are_exact() {
    for (name, shape) in ModelShape::REFERENCE {
        let m = catalog::find_model(name).unwrap();
        assert_eq!(m.to_shape().unwrap(), shape, "{name}");
        assert!(m.reference_compatible(), "{name}");
        assert!(m.reference_caveats().is_empty(), "{name}: {:?}", m.reference_caveats());
    }
    assert_eq!(catalog::find_model("vit_era5").unwrap().training_budget, TrainingBudget::Samples(2.8e7));
    assert_eq!(catalog::find_model("gpt3_1T").unwrap().training_budget, TrainingBudget::Tokens(1e12));
}

#[test]
fn megatron_family_is_gpt_with_4x_mlp() {
    let family: Vec<_> = catalog::models().iter().filter(|m| m.id.starts_with("megatron-gpt-")).collect();
    assert_eq!(family.len(), 11);
    for m in family {
        assert_eq!(m.mlp, Mlp::Gelu);
        assert_eq!(m.ffn_hidden, m.hidden.map(|e| 4 * e), "{}", m.id);
        assert_eq!(m.kv_heads, m.heads);
        assert!(m.reference_compatible(), "{}", m.id);
        assert_eq!(m.to_shape().unwrap().f, 4 * m.hidden.unwrap());
    }
    // The 1008B model of Narayanan et al. has the reference's gpt3_1T shape.
    let big = catalog::find_model("megatron-gpt-1008b").unwrap().to_shape().unwrap();
    assert_eq!(big, ModelShape::GPT3_1T);
}

#[test]
fn llama_models_keep_gqa_and_swiglu_and_explain_the_loss() {
    let cases = [
        ("llama2-7b", 32, 32, 11008, 32000),
        ("llama2-13b", 40, 40, 13824, 32000),
        ("llama2-70b", 64, 8, 28672, 32000),
        ("llama3-8b", 32, 8, 14336, 128256),
        ("llama3-70b", 64, 8, 28672, 128256),
        ("llama3-405b", 128, 8, 53248, 128256),
    ];
    for (id, heads, kv, ffn, vocab) in cases {
        let m = catalog::find_model(id).unwrap();
        assert_eq!(
            (m.heads, m.kv_heads, m.ffn_hidden, m.vocab),
            (Some(heads), Some(kv), Some(ffn), Some(vocab)),
            "{id}"
        );
        assert_eq!(m.mlp, Mlp::SwiGlu);
        assert!(!m.reference_compatible(), "{id}");
        let caveats = m.reference_caveats().join(" ");
        assert!(caveats.contains("SwiGLU"), "{id}: {caveats}");
        assert_eq!(caveats.contains("grouped-query"), kv < heads, "{id}: {caveats}");
        // The reduction still gives a shape (f = ffn width) for approximate use.
        assert_eq!(m.to_shape().unwrap().f, ffn);
    }
}

#[test]
fn genslm_entries_are_complete_with_a_source_per_field() {
    let genslm: Vec<_> = catalog::models().iter().filter(|m| m.family == "GenSLM").collect();
    let ids: Vec<&str> = genslm.iter().map(|m| m.id.as_str()).collect();
    for want in
        ["genslm-13b", "genslm-13b-a100", "genslm-1.5b", "genslm-25m", "genslm-250m", "genslm-2.5b", "genslm-25b"]
    {
        assert!(ids.contains(&want), "{want} missing: {ids:?}");
    }
    for m in &genslm {
        assert!(m.unknown_fields().is_empty(), "{}: {:?}", m.id, m.unknown_fields());
        assert!(m.to_shape().is_ok(), "{}", m.id);
        for field in ["seq_len", "hidden", "heads", "layers", "ffn_hidden", "vocab", "params_b", "training_budget"] {
            assert!(m.field_sources.get(field).is_some(), "{}: no source for {field}", m.id);
        }
        assert_eq!(m.vocab, Some(69), "{}: the GenSLM configs' codon vocabulary", m.id);
    }
    // The accelerator study's models: its stated dimensions, d_ff = 4 d_model (Brown et al. Table 2.1).
    let m = catalog::find_model("genslm-13b").unwrap();
    assert_eq!(
        (m.layers, m.heads, m.hidden, m.seq_len, m.ffn_hidden),
        (Some(44), Some(64), Some(4992), Some(1024), Some(19968))
    );
    let long = catalog::find_model("genslm-1.5b").unwrap();
    assert_eq!(
        (long.seq_len, long.layers, long.heads, long.hidden, long.ffn_hidden),
        (Some(10240), Some(24), Some(16), Some(2048), Some(8192))
    );
    // The A100 variant's width is an estimate (GPT-3 13B's), and says so.
    assert!(catalog::find_model("genslm-13b-a100").unwrap().field_sources.is_estimate("hidden"));
    // The published family from the repository's GPT-NeoX configs; the parameter counts of the two
    // configs whose file names match their dimensions are reproduced exactly by the shape.
    for (id, exact) in [("genslm-25m", 25_290_752.0), ("genslm-2.5b", 2_533_931_008.0)] {
        let m = catalog::find_model(id).unwrap();
        let (e, f, l, v) = (m.hidden.unwrap() as f64, m.ffn_hidden.unwrap() as f64, m.layers.unwrap() as f64, 69.0);
        // GPT-NeoX: per block 4e² + 2ef + 9e + f (QKV, output, two MLP matrices, biases, two norms);
        // untied embedding and head 2·V·e, final norm 2e.
        let count = l * (4.0 * e * e + 2.0 * e * f + 9.0 * e + f) + 2.0 * v * e + 2.0 * e;
        assert_eq!(count, exact, "{id}");
    }
    // Two published 25B architectures: both kept, each saying why.
    for id in ["genslm-25b", "genslm-25b-gpt2"] {
        let m = catalog::find_model(id).unwrap();
        assert!(m.notes.iter().any(|n| n.contains("disagree")), "{id}");
    }
}

#[test]
fn micro_benchmark_block_is_one_gpt2_xl_layer() {
    let block = catalog::find_model("gpt2-xl-block").unwrap().to_shape().unwrap();
    let xl = catalog::find_model("gpt2-xl").unwrap().to_shape().unwrap();
    assert_eq!(block, ModelShape { depth: 1, ..xl });
    assert_eq!(block, ModelShape { l: 1024, e: 1600, h: 25, depth: 1, f: 6400 });
}

#[test]
fn every_entry_round_trips_through_the_versioned_format() {
    for m in catalog::models() {
        let doc = Document::Model(m.clone());
        let text = format::to_json(&doc);
        let back = format::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}\n{text}", m.id));
        assert_eq!(back, doc, "{}", m.id);
    }
}

#[test]
fn lookups_are_forgiving_about_case_and_helpful_when_wrong() {
    assert_eq!(catalog::find_model("GPT3_1t").unwrap().id, "gpt3_1T");
    match catalog::find_model("lama3-8b").unwrap_err() {
        Error::UnknownName { kind, known, .. } => {
            assert_eq!(kind, "model");
            assert_eq!(known.first().map(String::as_str), Some("llama3-8b"));
        }
        other => panic!("{other:?}"),
    }
}
