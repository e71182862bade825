//! The versioned format and the reference's formats: defaults, every-problem reporting with field
//! paths and hints, cross-field rules, scenarios, imports and exports.

use fmperf_core::catalog::{self, Mlp, TrainingBudget, to_system_params};
use fmperf_core::format::{
    self, Document, DocumentFormat, model_to_reference_json, parse, parse_detailed, system_to_reference_json,
};
use fmperf_core::resolve::{ModelRef, SystemRef};
use fmperf_core::schema::{fields, model_fields, system_fields};
use fmperf_core::{Error, ModelShape, Strategy, SystemParams};
use serde_json::json;

fn errors(text: &str) -> Vec<Error> {
    parse(text).expect_err("document should be invalid")
}

fn fields_of(errs: &[Error]) -> Vec<String> {
    errs.iter().map(|e| e.field().unwrap_or("<none>").to_string()).collect()
}

fn model_doc(extra: serde_json::Value) -> String {
    let mut v = json!({"schema_version": 1, "kind": "model", "id": "m", "seq_len": 2048, "hidden": 4096,
        "heads": 32, "layers": 24});
    for (k, x) in extra.as_object().unwrap() {
        if x.is_null() && k.starts_with('-') {
            v.as_object_mut().unwrap().remove(&k[1..]);
        } else {
            v[k] = x.clone();
        }
    }
    v.to_string()
}

#[test]
fn minimal_model_gets_documented_defaults() {
    let Document::Model(m) = parse(&model_doc(json!({}))).unwrap() else { panic!() };
    assert_eq!(m.name, "m");
    assert_eq!(m.family, "custom");
    assert_eq!((m.ffn_hidden, m.kv_heads, m.mlp), (Some(16384), Some(32), Mlp::Gelu));
    assert_eq!(m.training_budget, TrainingBudget::Tokens(1e12));
    assert_eq!(m.to_shape().unwrap(), ModelShape::with_default_mlp(2048, 4096, 32, 24));
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = model_doc(json!({"seq_len": 0, "hidden": -5, "heads": 2.5, "layers": "24", "ffn_hiden": 3,
        "mlp": "swiglo", "vocab": true, "training_budget": {"tokens": 1e12, "samples": 5}}));
    let errs = errors(&text);
    let f = fields_of(&errs);
    for want in ["seq_len", "hidden", "heads", "layers", "ffn_hiden", "mlp", "vocab"] {
        assert!(f.contains(&want.to_string()), "{want} missing in {f:?}");
    }
    let all: String = errs.iter().map(|e| e.to_string() + "\n").collect();
    assert!(all.contains("did you mean `ffn_hidden`"), "{all}");
    assert!(all.contains("did you mean `swiglu`"), "{all}");
    assert!(all.contains("write the number without quotes: 24"), "{all}");
    assert!(all.contains("round to a whole number"), "{all}");
    assert!(all.contains("negative counts"), "{all}");
    assert!(all.contains("zero is not allowed"), "{all}");
}

#[test]
fn cross_field_rules_of_models() {
    let e = errors(&model_doc(json!({"heads": 8192, "hidden": 4096})));
    assert_eq!(fields_of(&e), ["heads"]);
    assert!(e[0].to_string().contains("must not exceed hidden = 4096"));
    let e = errors(&model_doc(json!({"kv_heads": 5})));
    assert_eq!(fields_of(&e), ["kv_heads"]);
    assert!(e[0].to_string().contains("must divide heads = 32"), "{}", e[0]);
    let e = errors(&model_doc(json!({"kv_heads": 64})));
    assert!(e[0].to_string().contains("must not exceed heads"));
    let e = errors(&model_doc(json!({"mlp": "swiglu"})));
    assert_eq!(e, vec![Error::MissingField { field: "ffn_hidden".into() }]);
    let e = errors(&model_doc(json!({"training_budget": {"tokens": 1, "samples": 2}})));
    assert_eq!(fields_of(&e), ["training_budget"]);
    let e = errors(&model_doc(json!({"training_budget": {}})));
    assert_eq!(fields_of(&e), ["training_budget"]);
    // Not divisible (issue 14: was a warning): an error naming the rule, unless the model gives
    // its head width.
    let e = errors(&model_doc(json!({"hidden": 4000, "heads": 48})));
    assert_eq!(fields_of(&e), ["hidden"]);
    assert!(e[0].to_string().contains("not a multiple of heads = 48"), "{}", e[0]);
    let Document::Model(m) = parse(&model_doc(json!({"hidden": 4000, "heads": 48, "head_dim": 128}))).unwrap() else {
        panic!()
    };
    assert_eq!(m.head_dim, Some(128));
}

#[test]
fn null_means_unknown_but_absent_required_is_missing() {
    let Document::Model(m) = parse(&model_doc(json!({"hidden": null, "ffn_hidden": null}))).unwrap() else { panic!() };
    assert_eq!((m.hidden, m.ffn_hidden), (None, None));
    assert_eq!(m.to_shape().unwrap_err().field(), Some("hidden"));
    let e = errors(&model_doc(json!({"-layers": null})));
    assert_eq!(e, vec![Error::MissingField { field: "layers".into() }]);
    let e = errors(&model_doc(json!({"id": null})));
    assert!(e[0].to_string().contains("must not be null"), "{}", e[0]);
}

#[test]
fn envelope_errors_are_specific() {
    let e = errors(&model_doc(json!({"schema_version": 2})));
    assert!(e[0].to_string().contains("not supported") && e[0].to_string().contains("newer fmperf"), "{}", e[0]);
    let e = errors(&model_doc(json!({"schema_version": "1"})));
    assert_eq!(fields_of(&e), ["schema_version"]);
    let e = errors(&model_doc(json!({"kind": "modle"})));
    assert!(e[0].to_string().contains("did you mean `model`"), "{}", e[0]);
    // Missing kind: the body is still checked (guessed from its keys).
    let e = errors(&model_doc(json!({"-kind": null, "heads": 0})));
    assert_eq!(fields_of(&e), ["kind", "heads"]);
    let e = errors(r#"{"id": "x"}"#);
    assert_eq!(fields_of(&e), ["schema_version", "kind"]);
    // A model document with system fields: every unknown field named.
    let e = errors(&model_doc(json!({"memory_gb": 80})));
    assert_eq!(fields_of(&e), ["memory_gb"]);
}

#[test]
fn not_json_or_not_an_object() {
    for text in ["", "{", "[1,2]", "\"x\"", "42", "null", "{\"a\":1,}", "{'a': 1}"] {
        let e = errors(text);
        assert!(matches!(e[0], Error::Parse { .. }), "{text}: {e:?}");
    }
    let deep = "[".repeat(100_000);
    assert!(matches!(errors(&deep)[0], Error::Parse { .. }));
}

#[test]
fn reference_model_json_is_imported() {
    let p = parse_detailed(r#"{"l": 2048, "e": 25600, "h": 160, "depth": 128}"#).unwrap();
    assert_eq!(p.origin, DocumentFormat::ReferenceModel);
    let Document::Model(m) = &p.document else { panic!() };
    assert_eq!(m.to_shape().unwrap(), ModelShape::GPT3_1T);
    assert_eq!(p.warnings.len(), 1, "f defaulted to 4e is said");
    let with_f = parse_detailed(&model_to_reference_json(&ModelShape { f: 1000, ..ModelShape::GPT3 })).unwrap();
    assert!(with_f.warnings.is_empty());
    let Document::Model(m) = with_f.document else { panic!() };
    assert_eq!(m.to_shape().unwrap().f, 1000);
    let e = errors(r#"{"l": 2048, "e": 64, "h": 96, "depth": 0, "dept": 1}"#);
    assert_eq!(fields_of(&e), ["dept", "depth", "h"]);
}

#[test]
fn reference_system_json_is_imported_exactly() {
    for name in SystemParams::REFERENCE_NAMES {
        let exact = SystemParams::reference(name).unwrap();
        let p = parse_detailed(&system_to_reference_json(&exact)).unwrap();
        assert_eq!(p.origin, DocumentFormat::ReferenceSystem);
        let Document::System(s) = &p.document else { panic!() };
        assert_eq!(to_system_params(s, &Default::default()).unwrap().params, exact, "{name}");
        assert_eq!(p.warnings.len(), 1, "{name}: summa_nb is ignored: {:?}", p.warnings);
    }
    let mut v: serde_json::Value = serde_json::from_str(&system_to_reference_json(&SystemParams::a100())).unwrap();
    v["empirical"] = json!(true);
    v["flops_units"] = json!(1e-9);
    v["nvlink_eff"] = json!(1.5);
    v["ib_bandwith"] = json!(25);
    let e = errors(&v.to_string());
    let f = fields_of(&e);
    for want in ["empirical", "flops_units", "nvlink_eff", "ib_bandwith"] {
        assert!(f.contains(&want.to_string()), "{want}: {f:?}");
    }
    assert!(e.iter().any(|x| x.to_string().contains("did you mean `ib_bandwidth`")));
}

#[test]
fn system_rules_and_defaults() {
    let base = |extra: serde_json::Value| {
        let mut v = json!({"schema_version": 1, "kind": "system", "id": "s", "peak_tflops": {"bf16": 100},
            "memory_gb": 80, "memory_bw_gbps": 2000, "scale_up": {"bw_per_device_unidir_gbps": 300, "domain_size": 8},
            "scale_out": {"nic_gbps_per_device": 25}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v.to_string()
    };
    let Document::System(s) = parse(&base(json!({}))).unwrap() else { panic!() };
    assert_eq!(s.network, catalog::Network::REFERENCE_DEFAULT);
    let e = errors(&base(
        json!({"scale_up": {"bw_per_device_unidir_gbps": 300, "bw_per_device_bidir_gbps": 100, "domain_size": 0}}),
    ));
    assert_eq!(fields_of(&e), ["scale_up.domain_size", "scale_up.bw_per_device_bidir_gbps"]);
    let e = errors(&base(json!({"peak_tflops": {"bf61": 1}, "network": {"scale_up_eff": 0}})));
    assert_eq!(fields_of(&e), ["peak_tflops.bf61", "network.scale_up_eff"]);
    assert!(e[0].to_string().contains("did you mean `bf16`"));
    let e = errors(&base(json!({"preset": {"matrix_flops_fp16": 1}})));
    assert!(fields_of(&e).contains(&"preset.hbm_bandwidth".to_string()), "{e:?}");
    let w =
        parse_detailed(&base(json!({"scale_out": {"nic_gbit_per_device": 400, "nic_gbps_per_device": 25}}))).unwrap();
    assert_eq!(w.warnings.len(), 1);
    // Physical plausibility: a measured ceiling above the peak, a device reporting less memory
    // than it is sold with, a value kind nobody defined.
    let e =
        errors(&base(json!({"measured_matmul_tflops": {"bf16": 120}, "memory_device_gb": 70, "value_kind": "guess"})));
    assert_eq!(fields_of(&e), ["measured_matmul_tflops.bf16", "memory_device_gb", "value_kind"]);
    assert!(e[0].to_string().contains("must not exceed the peak peak_tflops.bf16 = 100"), "{}", e[0]);
    let Document::System(s) =
        parse(&base(json!({"measured_matmul_tflops": {"bf16": 100}, "memory_device_gb": 80, "value_kind": "user"})))
            .unwrap()
    else {
        panic!()
    };
    assert_eq!(s.memory_device_gb, Some(80.0));
}

fn scenario(extra: serde_json::Value) -> String {
    let mut v = json!({"schema_version": 1, "kind": "scenario", "model": "gpt3_1T", "system": "H200",
        "devices": 2048, "global_batch": 4096});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string()
}

#[test]
fn scenarios_resolve_catalog_ids_and_inline_documents() {
    let Document::Scenario(s) = parse(&scenario(json!({}))).unwrap() else { panic!() };
    assert_eq!(s.model, ModelRef::Catalog("gpt3_1T".into()));
    assert_eq!(s.system, SystemRef::Catalog("ref-H200".into()));
    assert_eq!((s.strategies.clone(), s.top_k), (Strategy::ALL.to_vec(), 10));
    let r = s.resolve().unwrap();
    assert_eq!(r.shape, ModelShape::GPT3_1T);
    assert_eq!(r.mapped.params, SystemParams::h200());
    assert_eq!(r.budget, TrainingBudget::Tokens(1e12));

    let inline = scenario(json!({"model": {"id": "mine", "seq_len": 4096, "hidden": 8192, "heads": 64, "layers": 80},
        "system": {"schema_version": 1, "kind": "system", "id": "gpu", "peak_tflops": {"bf16": 500, "fp16_vector": 60},
            "memory_gb": 96, "memory_bw_gbps": 3000, "scale_up": {"bw_per_device_unidir_gbps": 400, "domain_size": 8},
            "scale_out": {"nic_gbps_per_device": 50}},
        "domain_size": 16, "strategies": ["2d"], "top_k": 3, "training_budget": {"samples": 1e6}}));
    let Document::Scenario(s) = parse(&inline).unwrap() else { panic!() };
    let r = s.resolve().unwrap();
    assert_eq!(r.shape, ModelShape::with_default_mlp(4096, 8192, 64, 80));
    assert_eq!((r.mapped.params.domain_size, r.mapped.params.matrix_flops_fp16), (16, 500.0));
    assert_eq!(r.budget, TrainingBudget::Samples(1e6));
    let back = parse(&format::to_json(&Document::Scenario(s.clone()))).unwrap();
    assert_eq!(back, Document::Scenario(s));
}

#[test]
fn scenario_problems_name_their_fields() {
    let e = errors(&scenario(json!({"model": "gpt-3", "system": "h100", "devices": 0, "strategies": ["1d", "3d"],
        "top_k": 1.5, "precison": "bf16"})));
    let f = fields_of(&e);
    for want in ["model", "system", "devices", "strategies[1]", "top_k", "precison"] {
        assert!(f.contains(&want.to_string()), "{want}: {f:?}");
    }
    let all: String = e.iter().map(|x| x.to_string() + "\n").collect();
    assert!(all.contains("did you mean `precision`"), "{all}");
    assert!(all.contains("nearest catalog ids"), "{all}");
    // Resolution problems: unknown dimensions of a catalog model, missing data of a system.
    let e = errors(&scenario(json!({"model": {"id": "m", "seq_len": 1024, "hidden": 512, "heads": 8, "layers": 4,
        "ffn_hidden": null}})));
    assert_eq!(fields_of(&e), ["model.ffn_hidden"]);
    // (Gaudi 2 now has an estimated vector rate; TPUs still publish none, which reference mode needs.)
    let e = errors(&scenario(json!({"system": "google_tpu_v5e"})));
    assert_eq!(fields_of(&e), ["system.peak_tflops.fp16_vector"]);
    let e = errors(&scenario(json!({"system": "ref-A100", "precision": "fp8"})));
    assert_eq!(fields_of(&e), ["precision"]);
    let e = errors(&scenario(
        json!({"model": {"kind": "system", "id": "x", "seq_len": 1, "hidden": 1, "heads": 1, "layers": 1}}),
    ));
    assert_eq!(fields_of(&e), ["model.kind"]);
    // Labelled approximations become warnings.
    // (H200 now carries the H100 silicon's 16-bit vector rate; MI300X still lists only FP32.)
    let p = parse_detailed(&scenario(json!({"system": "amd_mi300x", "model": "llama3-8b"}))).unwrap();
    let w: String = p.warnings.iter().map(|x| x.to_string() + "\n").collect();
    assert!(w.contains("FP32 vector rate"), "{w}");
    assert!(w.contains("SwiGLU"), "{w}");
}

#[test]
fn field_table_is_complete_and_consistent_with_the_model() {
    for table in [
        model_fields::MODEL_FIELDS,
        system_fields::SYSTEM_FIELDS,
        fields::SCENARIO_FIELDS,
        fields::REFERENCE_SYSTEM_FIELDS,
    ] {
        for s in table {
            assert!(!s.description.is_empty(), "{}", s.path);
            let numeric = matches!(s.kind, fields::Kind::Int { .. } | fields::Kind::Num { .. });
            assert_eq!(numeric, !s.unit.is_empty() || s.path == "flops_units", "{}: unit {:?}", s.path, s.unit);
        }
    }
    // The bounds of the format are those of ModelShape::validate.
    let max = ModelShape {
        l: fields::MAX_SEQ_LEN,
        e: fields::MAX_HIDDEN,
        h: fields::MAX_HEADS,
        depth: fields::MAX_LAYERS,
        f: fields::MAX_FFN,
    };
    assert!(max.validate().is_ok());
    for bump in 0..5 {
        let mut m = max;
        match bump {
            0 => m.l += 1,
            1 => m.e += 1,
            2 => m.h += 1,
            3 => m.depth += 1,
            _ => m.f += 1,
        }
        assert!(m.validate().is_err(), "bound {bump}");
    }
}

#[test]
fn exported_reference_formats_parse_back() {
    let text = model_to_reference_json(&ModelShape::VIT_ERA5);
    let Document::Model(m) = parse(&text).unwrap() else { panic!() };
    assert_eq!(m.to_shape().unwrap(), ModelShape::VIT_ERA5);
    let v: serde_json::Value = serde_json::from_str(&system_to_reference_json(&SystemParams::b200_next())).unwrap();
    assert_eq!(v["nvlink_bandwidth"], json!(3600.0));
    assert_eq!(v["empirical"], json!(false));
}
