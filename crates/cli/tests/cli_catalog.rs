//! `fmperf catalog`, `fmperf show`, `fmperf check`, and catalog ids / versioned files as `--model`
//! and `--system`, run through the built binary.

mod support;
use support::{fmperf, stdout, temp_file};

use serde_json::{Value, json};

/// Exit 2 with exactly one line on stderr; returns (stdout, stderr).
fn exit_2(args: &[&str]) -> (String, String) {
    let out = fmperf(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line on stderr, got {err:?}");
    (String::from_utf8_lossy(&out.stdout).to_string(), err)
}

fn model(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
    let mut v = json!({"schema_version": 1, "kind": "model", "id": "mine", "seq_len": 2048, "hidden": 4096,
        "heads": 32, "layers": 24});
    edit(v.as_object_mut().unwrap());
    v.to_string()
}

/// Pins reference-mode outputs: `--mode reference` since extended mode became the default (issue 16 §5).
const SEARCH: [&str; 11] =
    ["search", "--mode", "reference", "--strategy", "1d", "--gpus", "64", "--global-batch", "512", "--format", "json"];

#[test]
fn bad_inputs_exit_2_with_the_specific_message() {
    // (case, document, what `check` must say, what `--model FILE` must say or "" when the file goes
    // to the reference-format reader).
    let cases: Vec<(&str, String, &[&str], &str)> = vec![
        ("bad JSON", r#"{"schema_version": 1, "kind": "model","#.to_string(), &["not valid JSON"], ""),
        (
            "wrong type",
            model(|m| {
                m.insert("hidden".into(), json!("4096"));
            }),
            &["hidden", "(got a string)", "without quotes"],
            "hidden",
        ),
        (
            "negative",
            model(|m| {
                m.insert("layers".into(), json!(-3));
            }),
            &["layers: -3", "negative counts"],
            "layers = -3",
        ),
        (
            "zero",
            model(|m| {
                m.insert("heads".into(), json!(0));
            }),
            &["heads: 0", "from 1 to 65536", "zero is not allowed"],
            "heads = 0",
        ),
        (
            "non-integer",
            model(|m| {
                m.insert("seq_len".into(), json!(2048.5));
            }),
            &["seq_len: 2048.5", "round to a whole number"],
            "seq_len",
        ),
        (
            "unknown field",
            model(|m| {
                m.insert("num_layers".into(), json!(24));
            }),
            &["num_layers: unknown field", "did you mean `layers`?"],
            "did you mean `layers`?",
        ),
        (
            "typo field",
            model(|m| {
                m.insert("ffn_hiden".into(), json!(1));
            }),
            &["ffn_hiden: unknown field", "did you mean `ffn_hidden`?"],
            "ffn_hidden",
        ),
        (
            "missing field",
            model(|m| {
                m.remove("heads");
            }),
            &["heads: missing", "add `heads`"],
            "missing field `heads`",
        ),
        (
            "null required",
            model(|m| {
                m.insert("id".into(), Value::Null);
            }),
            &["id: null", "must not be null"],
            "must not be null",
        ),
        (
            "bad schema_version",
            model(|m| {
                m.insert("schema_version".into(), json!(2));
            }),
            &["schema_version: 2", "not supported", "newer fmperf"],
            "schema_version",
        ),
        (
            "schema_version as text",
            model(|m| {
                m.insert("schema_version".into(), json!("1"));
            }),
            &["schema_version: \"1\"", "must be 1"],
            "schema_version",
        ),
        (
            "wrong kind",
            model(|m| {
                m.insert("kind".into(), json!("modle"));
            }),
            &["kind: \"modle\"", "did you mean `model`?"],
            "kind",
        ),
        (
            "heads above hidden",
            model(|m| {
                m.insert("heads".into(), json!(8192));
            }),
            &["heads: 8192", "must not exceed hidden = 4096"],
            "must not exceed",
        ),
        (
            "kv heads not dividing",
            model(|m| {
                m.insert("kv_heads".into(), json!(5));
            }),
            &["kv_heads: 5", "must divide heads = 32"],
            "must divide",
        ),
        (
            "swiglu without width",
            model(|m| {
                m.insert("mlp".into(), json!("swiglu"));
            }),
            &["ffn_hidden: missing"],
            "ffn_hidden",
        ),
        ("not an object", "[1, 2, 3]".to_string(), &["expected a JSON object"], ""),
    ];
    for (case, text, check_says, model_says) in &cases {
        let file = temp_file(&format!("{}.json", case.replace(' ', "-")), text);
        let p = file.to_str().unwrap();
        let (out, err) = exit_2(&["check", p]);
        for want in *check_says {
            assert!(out.contains(want), "{case}: `check` should say {want:?}:\n{out}");
        }
        assert!(out.contains("invalid: 1 problem"), "{case}: exactly one problem expected:\n{out}");
        assert!(err.contains("is invalid"), "{case}: {err}");
        if !model_says.is_empty() {
            let mut args = SEARCH.to_vec();
            args.extend(["--system", "H200", "--model", p]);
            let (_, err) = exit_2(&args);
            assert!(
                err.contains("--model") && err.contains(model_says),
                "{case}: --model should say {model_says:?}: {err}"
            );
        }
    }
}

#[test]
fn check_reports_every_problem_and_explains_systems_and_scenarios() {
    let many = model(|m| {
        m.insert("heads".into(), json!(0));
        m.insert("layers".into(), json!(-1));
        m.insert("layerz".into(), json!(1));
    });
    let (out, _) = exit_2(&["check", temp_file("many.json", &many).to_str().unwrap()]);
    assert!(out.contains("invalid: 3 problems"), "{out}");
    let sys = json!({"schema_version": 1, "kind": "system", "id": "g", "peak_tflops": {"bf16": 100},
        "memory_gb": 80, "memory_bw_gbps": 2000, "scale_up": {"domain_size": 8}, "scale_out": {},
        "network": {"scale_up_eff": 1.5}});
    let (out, _) = exit_2(&["check", temp_file("sys.json", &sys.to_string()).to_str().unwrap()]);
    assert!(out.contains("network.scale_up_eff: 1.5") && out.contains("greater than 0 and at most 1"), "{out}");
    let scen = json!({"schema_version": 1, "kind": "scenario", "model": "gpt-3", "system": "H200", "devices": 64,
        "global_batch": 512});
    let (out, _) = exit_2(&["check", temp_file("scen.json", &scen.to_string()).to_str().unwrap()]);
    assert!(out.contains("is not in the model catalog") && out.contains("gpt3"), "{out}");
    let refsys = temp_file(
        "refsys.json",
        r#"{"matrix_flops_fp16": 312, "vector_flops_fp16": 78, "vector_flops_fp32": 19.5,
        "hbm_bandwidth": 1555, "hbm_capacity": 80, "nvlink_bandwidth": 300, "nvlink_eff": 0.7, "nvlink_latency": 2.5e-6,
        "ib_bandwidth": 25, "ib_eff": 0.7, "ib_latency": 5e-6, "nvlink_size": 4, "empirical": true}"#,
    );
    let (out, _) = exit_2(&["check", refsys.to_str().unwrap()]);
    assert!(out.contains("reference-format system JSON") && out.contains("empirical: true"), "{out}");

    // (MI300X lists no 16-bit vector rate, so its FP32 rate is used and labelled.)
    let ok = json!({"schema_version": 1, "kind": "scenario", "model": "gpt3_1T", "system": "amd_mi300x",
        "devices": 2048, "global_batch": 4096, "domain_size": 8});
    let out = stdout(&["check", temp_file("ok.json", &ok.to_string()).to_str().unwrap()]);
    assert!(out.contains("valid") && out.contains("2048 x `amd_mi300x`"), "{out}");
    assert!(out.contains("warnings:") && out.contains("FP32 vector rate"), "{out}");
    let out = fmperf(&["check", temp_file("many2.json", &many).to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], json!(false));
    assert_eq!(v["problems"].as_array().unwrap().len(), 3);
    let (_, err) = exit_2(&["check", "/nonexistent/file.json"]);
    assert!(err.contains("cannot read"), "{err}");
}

#[test]
fn catalog_tables_have_units_and_sources() {
    let models = stdout(&["catalog", "models"]);
    let header = models.lines().next().unwrap();
    for col in ["seq [tokens]", "vocab [tokens]", "params [B]", "reference mode", "source"] {
        assert!(header.contains(col), "{col} in {header}");
    }
    for id in
        ["gpt3", "gpt3_1T", "vit_era5", "gpt2-xl", "gpt2-xl-block", "genslm-13b", "llama3-405b", "megatron-gpt-1.7b"]
    {
        assert!(models.lines().any(|l| l.starts_with(&format!("{id} "))), "{id} missing");
    }
    let systems = stdout(&["catalog", "systems"]);
    let header = systems.lines().next().unwrap();
    for col in [
        "BF16 [TFLOP/s]",
        "mem [GB]",
        "mem bw [GB/s]",
        "scale-up [GB/s, 1 dir]",
        "domain [devices]",
        "scale-out [GB/s/device]",
        "source",
    ] {
        assert!(header.contains(col), "{col} in {header}");
    }
    assert_eq!(systems.lines().count(), 2 + 33);
    let csv = stdout(&["catalog", "systems", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 1 + 33);
    let (_, err) = exit_2(&["catalog", "gpus"]);
    assert!(err.contains("models") && err.contains("systems"), "{err}");
}

#[test]
fn catalog_json_lists_valid_documents() {
    for what in ["models", "systems"] {
        let v: Value = serde_json::from_str(&stdout(&["catalog", what, "--format", "json"])).unwrap();
        let list = v[what].as_array().unwrap();
        assert!(list.len() >= 26, "{what}");
        for (i, doc) in list.iter().enumerate() {
            let file = temp_file(&format!("{what}-{i}.json"), &doc.to_string());
            let out = stdout(&["check", file.to_str().unwrap()]);
            assert!(out.lines().nth(1) == Some("valid"), "{what}[{i}]: {out}");
        }
    }
}

#[test]
fn show_prints_every_field_with_unit_and_source() {
    let out = stdout(&["show", "llama2-70b"]);
    for want in [
        "kv_heads",
        "8",
        "heads",
        "ffn_hidden",
        "28672",
        "channels",
        "sources:",
        "Touvron",
        "reference mode: approx.",
        "grouped-query",
    ] {
        assert!(out.contains(want), "{want}:\n{out}");
    }
    let out = stdout(&["show", "H200"]);
    assert!(
        out.contains("system ref-H200")
            && out.contains("approximations: none")
            && out.contains("preset.nvlink_bandwidth"),
        "{out}"
    );
    let out = stdout(&["show", "cerebras_cs2"]);
    assert!(out.contains("wafer_scale") && out.contains("weight streaming") && out.contains("not available"), "{out}");
    let (_, err) = exit_2(&["show", "nvidia_h100"]);
    assert!(err.contains("nvidia_h100_sxm5_80gb"), "{err}");
}

/// A catalog id, its exported document and the reference format give the same search.
#[test]
fn model_and_system_flags_accept_catalog_ids_and_versioned_files() {
    let run = |model: &str, system: &str| -> Value {
        let mut args = SEARCH.to_vec();
        args.extend(["--model", model, "--system", system]);
        let mut v: Value = serde_json::from_str(&stdout(&args)).unwrap();
        let obj = v.as_object_mut().unwrap();
        obj.retain(|k, _| k != "model" && k != "system");
        v
    };
    let exported_model = temp_file("gpt3.json", &stdout(&["show", "gpt3", "--format", "json"]));
    let exported_system = temp_file("h200.json", &stdout(&["show", "ref-H200", "--format", "json"]));
    let by_name = run("gpt3", "H200");
    assert!(!by_name["results"].as_array().unwrap().is_empty());
    // Narayanan et al.'s 1008B model has the reference's gpt3_1T shape.
    assert_eq!(run("megatron-gpt-1008b", "H200"), run("gpt3_1T", "H200"));
    assert_eq!(run(exported_model.to_str().unwrap(), exported_system.to_str().unwrap()), by_name);
    assert_eq!(run("gpt3", "ref-H200"), by_name);
    assert_eq!(run("gpt3", "ref-H200,domain=64"), by_name);
    // A hardware entry maps with labelled notes on stderr; stdout stays JSON.
    let mut args = SEARCH.to_vec();
    args.extend(["--model", "llama3-8b", "--system", "amd_mi300x,precision=bf16"]);
    let out = fmperf(&args);
    assert_eq!(out.status.code(), Some(0));
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
    let notes = String::from_utf8_lossy(&out.stderr);
    assert!(notes.contains("note: llama3-8b") && notes.contains("note: amd_mi300x"), "{notes}");
    // Errors of catalog inputs are one line naming the flag.
    for (model, system, says) in [
        ("gpt3", "cerebras_cs2", "peak_tflops.bf16"),
        ("gpt3", "google_tpu_v5e", "vector="),
        ("gpt3", "nvidia_h100,domain=8", "nvidia_h100_sxm5_80gb"),
        ("gpt3", "nvidia_h100_sxm5_80gb,domian=8", "did you mean `domain`"),
        ("gpt3", "ref-A100,precision=fp8", "16-bit"),
    ] {
        let mut args = SEARCH.to_vec();
        args.extend(["--model", model, "--system", system]);
        let (_, err) = exit_2(&args);
        assert!(err.contains(says), "{model} {system}: {err}");
    }
    let mut args = SEARCH.to_vec();
    args.extend(["--model", exported_system.to_str().unwrap(), "--system", "H200"]);
    let (_, err) = exit_2(&args);
    assert!(err.contains("is a system document"), "{err}");
}
