//! Form editing of documents: every catalog entry survives the trip through form texts, and a
//! table of bad inputs gets the specific message at the specific field.

use fmperf_core::catalog;
use fmperf_core::format::form::{FormValues, check_form, document_of, field_for, form_fields, values_of_document};
use fmperf_core::format::{Document, to_json};

fn model_values() -> FormValues {
    values_of_document(&Document::Model(catalog::find_model("gpt3").unwrap().clone()))
}

fn system_values(id: &str) -> FormValues {
    values_of_document(&Document::System(catalog::find_system(id).unwrap().clone()))
}

#[test]
fn every_catalog_entry_round_trips_through_the_form() {
    let docs = catalog::models()
        .iter()
        .map(|m| Document::Model(m.clone()))
        .chain(catalog::systems().iter().map(|s| Document::System(s.clone())));
    let mut n = 0;
    for doc in docs {
        let values = values_of_document(&doc);
        let check = check_form(doc.kind(), &values);
        assert!(check.all_errors().is_empty(), "{}: {:?}", to_json(&doc), check.all_errors());
        assert_eq!(check.document.as_ref(), Some(&doc), "round trip of {}", to_json(&doc));
        n += 1;
    }
    assert!(n > 40, "{n} entries");
}

/// (field, typed text, expected part of the message at that field)
const BAD_MODEL_INPUTS: &[(&str, &str, &str)] = &[
    ("heads", "0", "zero is not allowed"),
    ("heads", "-4", "negative counts are meaningless"),
    ("heads", "1.5", "round to a whole number"),
    ("heads", "abc", "must be an integer from 1 to 65536 (got a string)"),
    ("heads", "20000", "must not exceed hidden = 12288"),
    ("layers", "1e9", "must be an integer from 1 to 100000"),
    ("id", "", "is required"),
    ("id", "my model", "e.g. `my-model`"),
    ("mlp", "swiglo", "did you mean `swiglu`"),
    ("kv_heads", "7", "must divide heads = 96"),
    ("params_b", "-1", "must be a number greater than 0"),
    ("training_budget.tokens", "lots", "(got a string)"),
];

#[test]
fn bad_model_inputs_are_reported_at_their_field() {
    for (field, text, want) in BAD_MODEL_INPUTS {
        let mut v = model_values();
        v.insert(field.to_string(), text.to_string());
        let check = check_form("model", &v);
        assert!(check.document.is_none(), "{field}={text} should be invalid");
        let msgs: Vec<String> =
            check.field_errors.get(*field).map(|l| l.iter().map(|e| e.to_string()).collect()).unwrap_or_default();
        assert!(msgs.iter().any(|m| m.contains(want)), "{field}={text}: want `{want}`, got {msgs:?} / {check:?}");
        // Only that field is wrong.
        assert_eq!(check.field_errors.len(), 1, "{field}={text}: {:?}", check.field_errors);
    }
}

#[test]
fn bad_system_inputs_are_reported_at_their_field() {
    let table: &[(&str, &str, &str)] = &[
        ("network.scale_up_eff", "1.5", "must be a number greater than 0 and at most 1"),
        ("network.scale_out_eff", "0", "greater than 0"),
        ("scale_up.domain_size", "", "is required"),
        ("scale_up.domain_size", "8.5", "round to a whole number"),
        ("memory_gb", "eighty", "(got a string)"),
        ("peak_tflops.bf16", "-989", "the unit is TFLOP/s"),
        ("scale_up.bw_per_device_bidir_gbps", "100", "must be at least the unidirectional 450"),
        ("architecture", "gpuu", "did you mean `gpu`"),
        ("measured_matmul_tflops.bf16", "1500", "must not exceed the peak peak_tflops.bf16"),
        ("memory_device_gb", "40", "must be at least its capacity memory_gb"),
        ("value_kind", "made_up", "must be one of vendor_claimed_peak"),
    ];
    for (field, text, want) in table {
        let mut v = system_values("nvidia_h200_sxm_141gb");
        v.insert(field.to_string(), text.to_string());
        let check = check_form("system", &v);
        let msgs: Vec<String> =
            check.field_errors.get(*field).map(|l| l.iter().map(|e| e.to_string()).collect()).unwrap_or_default();
        assert!(msgs.iter().any(|m| m.contains(want)), "{field}={text}: want `{want}`, got {msgs:?} / {check:?}");
        assert!(!check.is_valid());
    }
}

#[test]
fn empty_texts_mean_unknown_or_default() {
    let mut v = model_values();
    v.insert("ffn_hidden".into(), String::new());
    v.insert("seq_len".into(), "  ".into());
    let check = check_form("model", &v);
    let Some(Document::Model(m)) = check.document else { panic!("{check:?}") };
    assert_eq!((m.seq_len, m.ffn_hidden), (None, None), "empty = unknown where null is accepted");
    let doc = document_of("model", &v);
    assert!(doc["seq_len"].is_null() && doc["ffn_hidden"].is_null());
    // Where null is not accepted, empty = the documented default.
    let mut v = system_values("nvidia_h200_sxm_141gb");
    v.insert("network.scale_up_eff".into(), String::new());
    v.insert("measured_matmul_tflops.bf16".into(), String::new());
    let doc = document_of("system", &v);
    assert!(doc["network"].get("scale_up_eff").is_none());
    let check = check_form("system", &v);
    let Some(Document::System(s)) = check.document else { panic!("{check:?}") };
    assert_eq!(s.network.scale_up_eff, 0.7);
}

#[test]
fn presets_are_edited_as_their_reference_parameters() {
    let mut v = system_values("ref-H200");
    assert_eq!(v["preset.matrix_flops_fp16"], "989.4");
    v.insert("preset.nvlink_eff".into(), "2".into());
    v.insert("preset.hbm_capacity".into(), String::new());
    let check = check_form("system", &v);
    assert!(check.field_errors.contains_key("preset.nvlink_eff"), "{check:?}");
    let cap = check.field_errors["preset.hbm_capacity"][0].to_string();
    assert!(cap.contains("is required"), "{cap}");
    // Clearing every preset field gives a hardware-described system.
    for f in form_fields("system").iter().filter(|f| f.group() == "preset") {
        v.insert(f.path(), String::new());
    }
    let check = check_form("system", &v);
    let Some(Document::System(s)) = check.document else { panic!("{check:?}") };
    assert!(s.preset.is_none());
}

#[test]
fn problems_find_their_field() {
    assert_eq!(field_for("model", "sources[3]").as_deref(), Some("sources"));
    assert_eq!(field_for("model", "training_budget").as_deref(), Some("training_budget.tokens"));
    assert_eq!(field_for("system", "preset").as_deref(), Some("preset.matrix_flops_fp16"));
    assert_eq!(field_for("model", "nonsense"), None);
    let mut v = model_values();
    v.insert("training_budget.samples".into(), "5".into());
    let check = check_form("model", &v);
    let msgs: Vec<String> = check.field_errors["training_budget.tokens"].iter().map(|e| e.to_string()).collect();
    assert!(msgs[0].contains("exactly one of tokens or samples"), "{msgs:?}");
}

/// Issue 14: a hidden size that heads do not divide was a warning; it is now an error unless the
/// model gives its head width (`head_dim`).
#[test]
fn hidden_not_a_multiple_of_heads_needs_a_head_dim() {
    let mut v = model_values();
    v.insert("heads".into(), "100".into());
    v.insert("kv_heads".into(), "100".into());
    let check = check_form("model", &v);
    assert!(!check.is_valid(), "{check:?}");
    let msg = check.field_errors["hidden"][0].to_string();
    assert!(msg.contains("not a multiple of heads") && msg.contains("head_dim"), "{msg}");
    v.insert("head_dim".into(), "128".into());
    let check = check_form("model", &v);
    assert!(check.is_valid(), "{check:?}");
    let Some(fmperf_core::format::Document::Model(m)) = check.document else { panic!("{check:?}") };
    assert_eq!(m.head_dim, Some(128));
}
