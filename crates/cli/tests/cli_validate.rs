//! The `fmperf validate` contract, run through the built binary: JSON keys, the error definition,
//! modes, and exit code 2 with one line for bad input.

mod support;
use support::{fmperf, json, temp_file, usage_error};

use std::path::PathBuf;

use serde_json::Value;

/// The shipped file, as a user would pass it.
fn shipped() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/data/measured-training-runs.json")
}

#[test]
fn json_has_the_contract_keys_and_errors_are_fractions() {
    let path = shipped();
    let v = json(&["validate", "--data", path.to_str().unwrap(), "--format", "json"]);
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 108);
    let mut evaluated = 0;
    for r in rows {
        for key in ["id", "predicted", "measured", "metric", "error", "skipped", "reason"] {
            assert!(r.get(key).is_some(), "row {} lacks {key}", r["id"]);
        }
        if r["skipped"].as_bool().unwrap() {
            assert!(r["error"].is_null() && r["predicted"].is_null());
            assert!(!r["reason"].as_str().unwrap().is_empty(), "skipped row {} has a reason", r["id"]);
        } else {
            evaluated += 1;
            let (p, m, e) =
                (r["predicted"].as_f64().unwrap(), r["measured"].as_f64().unwrap(), r["error"].as_f64().unwrap());
            assert!((e - (p / m - 1.0)).abs() < 1e-12, "error = predicted/measured − 1 for {}", r["id"]);
            assert!(r["metric"].is_string() && r["reason"].is_null());
        }
    }
    let s = &v["summary"];
    for key in ["evaluated", "skipped", "mape", "median_abs_error"] {
        assert!(s.get(key).is_some(), "summary lacks {key}");
    }
    assert_eq!(s["evaluated"].as_u64().unwrap(), evaluated);
    assert_eq!(s["evaluated"].as_u64().unwrap() + s["skipped"].as_u64().unwrap(), 108);
    // Errors are fractions: extended mode is within 15 % on average.
    let mape = s["mape"].as_f64().unwrap();
    assert!(mape > 0.0 && mape <= 0.15, "{mape}");
    assert_eq!(v["mode"], "extended");
    assert!(!s["per_source"].as_array().unwrap().is_empty());
}

#[test]
fn both_modes_run_and_extended_is_closer() {
    let ext = json(&["validate", "--data", "builtin", "--format", "json", "--mode", "extended"]);
    let reference = json(&["validate", "--data", "builtin", "--format", "json", "--mode", "reference"]);
    assert_eq!(reference["mode"], "reference");
    let mape = |v: &Value| v["summary"]["mape"].as_f64().unwrap();
    assert!(mape(&reference) > 2.0 * mape(&ext), "reference {} vs extended {}", mape(&reference), mape(&ext));
    // The table names every source and the overall line.
    let out = fmperf(&["validate", "--data", "builtin", "--mode", "reference"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("reference mode") && text.contains("all sources") && text.contains("torchtitan"));
}

/// A file of one dense run measured on one's own cluster.
const ONE_DENSE_RUN: &str = r#"{"schema_version": 1, "rows": [{
        "id": "mine", "source": {"title": "my cluster"}, "hardware_id": "nvidia_h100_sxm5_80gb", "num_devices": 8,
        "precision": "bf16",
        "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336, "ffn_type": "swiglu",
                  "seq_len": 8192, "vocab": 128256},
        "parallel": {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "fsdp": "FSDP 8", "recompute": "selective"},
        "batch": {"global_batch_seqs": 16, "micro_batch": 2},
        "measured": {"flop_convention": "tokens/s/GPU", "tokens_per_s_per_device": 6000}}]}"#;

#[test]
fn a_file_of_ones_own_is_evaluated() {
    let one = ONE_DENSE_RUN;
    let p = temp_file("one.json", one);
    let v = json(&["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    let r = &v["rows"][0];
    assert_eq!(r["skipped"], false, "{r}");
    assert_eq!(r["metric"], "tokens/s per device");
    assert!(r["predicted"].as_f64().unwrap() > 1000.0);
    assert_eq!(r["metric_structured"]["kind"], "tokens_per_s_per_device");
    // Words fmperf does not understand do not skip a row whose figure is there: the figure is
    // compared and the note says how the words were read.
    let odd_words = one.replace("\"tokens/s/GPU\"", "\"furlongs per fortnight\"");
    let p = temp_file("unknown-convention.json", &odd_words);
    let v = json(&["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["rows"][0]["skipped"], false);
    let notes = v["rows"][0]["assumptions"].to_string();
    assert!(notes.contains("furlongs per fortnight") && notes.contains("tokens_per_s_per_device"), "{notes}");
    // A row whose figure is absent is skipped, and the reason names the missing number.
    let no_figure = one.replace("\"tokens_per_s_per_device\": 6000", "\"tokens_per_s_per_device\": null");
    let p = temp_file("no-figure.json", &no_figure);
    let v = json(&["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["rows"][0]["skipped"], true);
    assert!(v["rows"][0]["reason"].as_str().unwrap().contains("no measured figure"));
    assert_eq!(v["summary"]["mape"], Value::Null);
}

#[test]
fn bad_input_exits_2_with_one_line() {
    assert!(usage_error(&["validate"]).contains("--data"));
    assert!(usage_error(&["validate", "--data", "/nonexistent/runs.json"]).contains("cannot read"));
    let p = temp_file("not-json.json", "{ rows: ");
    assert!(usage_error(&["validate", "--data", p.to_str().unwrap()]).contains("JSON"));
    let p = temp_file("no-rows.json", r#"{"runs": []}"#);
    assert!(usage_error(&["validate", "--data", p.to_str().unwrap()]).contains("rows"));
    let p = temp_file("bad-type.json", r#"[{"id": "x", "parallel": {"tp": "eight"}}]"#);
    assert!(usage_error(&["validate", "--data", p.to_str().unwrap()]).contains("parallel.tp"));
    assert!(usage_error(&["validate", "--data", "builtin", "--mode", "fast"]).contains("--mode"));
    assert!(usage_error(&["validate", "--data", "builtin", "--format", "yaml"]).contains("--format"));
    assert!(usage_error(&["validate", "--data", "builtin", "stray"]).contains("stray"));
}

#[test]
fn fit_reports_the_leave_one_source_out_error() {
    let v = json(&["validate", "--data", "builtin", "--fit", "--format", "json"]);
    let eff = &v["efficiency"];
    assert!(eff["matmul"].as_f64().unwrap() > 0.3 && eff["attention"].as_f64().unwrap() > 0.2);
    let loso = v["leave_one_source_out"]["mape"].as_f64().unwrap();
    let in_sample = v["in_sample"]["mape"].as_f64().unwrap();
    assert!(loso >= in_sample - 1e-12, "held out {loso} vs in-sample {in_sample}");
    // Seven sources with evaluated rows (torchtitan since the 96 GB H100 has its estimated figures).
    assert_eq!(v["per_source"].as_array().unwrap().len(), 7);
}

#[test]
fn the_headline_is_leave_one_source_out_with_in_sample_beside_it() {
    let v = json(&["validate", "--data", "builtin", "--format", "json"]);
    let h = &v["leave_one_source_out"];
    let loso = h["leave_one_source_out"]["mape"].as_f64().unwrap();
    let inside = h["in_sample"]["mape"].as_f64().unwrap();
    assert!(h["fitted"].as_bool().unwrap());
    assert!(loso >= inside - 1e-12 && loso < 0.5, "held out {loso} vs in-sample {inside}");
    assert_eq!(h["in_sample"]["evaluated"], v["summary"]["evaluated"]);
    for r in v["rows"].as_array().unwrap() {
        assert_eq!(r["error"].is_null(), r["error_loso"].is_null(), "{}", r["id"]);
    }
    let text = String::from_utf8(fmperf(&["validate", "--data", "builtin"]).stdout).unwrap();
    let headline = text.lines().nth(1).unwrap();
    assert!(
        headline.starts_with("Time, leave-one-source-out (headline)") && headline.contains("in-sample"),
        "{headline}"
    );
    // Reference mode fits nothing: its held-out errors are its errors.
    let r = json(&["validate", "--data", "builtin", "--format", "json", "--mode", "reference"]);
    assert_eq!(r["leave_one_source_out"]["fitted"], false);
    assert_eq!(r["leave_one_source_out"]["leave_one_source_out"], r["leave_one_source_out"]["in_sample"]);
}

#[test]
fn memory_rows_carry_the_memory_contract() {
    let v = json(&["validate", "--data", "builtin-memory", "--format", "json"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 109);
    let mut with_prediction = 0;
    for r in rows {
        let m = &r["memory"];
        for key in ["kind", "predicted_gb", "measured_gb", "capacity_gb", "fits"] {
            assert!(m.get(key).is_some(), "row {} memory lacks {key}", r["id"]);
        }
        assert!(["peak_allocated", "peak_reserved", "nvidia_smi"].contains(&m["kind"].as_str().unwrap()));
        // Memory rows have no time figure: neither evaluated nor skipped for time.
        assert_eq!((r["has_time_figure"].as_bool(), r["skipped"].as_bool()), (Some(false), Some(false)));
        if let Some(p) = m["predicted_gb"].as_f64() {
            with_prediction += 1;
            assert!(p > 0.0 && m["capacity_gb"].as_f64().unwrap() > 0.0);
            assert!(["yes", "tight", "no"].contains(&m["fits"].as_str().unwrap()), "{}", r["id"]);
            if let (Some(x), false) = (m["measured_gb"].as_f64(), m["oom"] == true) {
                assert!((m["error"].as_f64().unwrap() - (p / x - 1.0)).abs() < 1e-12);
            }
        } else {
            assert!(!m["reason"].as_str().unwrap().is_empty(), "{}", r["id"]);
        }
    }
    assert!(with_prediction >= 100, "{with_prediction} of 109 rows predicted");
    // GB = 1e9 bytes: a row stated in GiB is converted.
    let tt = rows.iter().find(|r| r["id"] == "torchtitan_h100_t1_8b_fsdp8_eager").unwrap();
    assert!((tt["memory"]["measured_gb"].as_f64().unwrap() - 88.476).abs() < 0.01);
    assert_eq!(tt["hardware"], "nvidia_h100_sxm_96gb_hbm2e_500w", "the accelerator named in words is mapped");
    let s = &v["summary"]["memory"];
    for key in ["mape", "median_abs_error", "verdicts", "per_source", "band"] {
        assert!(s.get(key).is_some(), "memory summary lacks {key}");
    }
    let verdicts = &s["verdicts"];
    let n = |k: &str| verdicts[k].as_u64().unwrap();
    assert_eq!(n("yes") + n("tight") + n("no"), with_prediction);
    assert_eq!(n("oom_runs"), 7);
    assert_eq!(s["per_source"].as_array().unwrap().len(), 6);
}

/// One MoE run, Hugging Face and Megatron-LM names.
const ONE_MOE_ROW: &str = r#"{
        "id": "mine-moe", "source": "my cluster", "hardware_id": "nvidia_h100_sxm5_80gb", "num_devices": 8,
        "precision": "bf16",
        "model": {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                  "intermediate_size": 14336, "ffn_type": "swiglu", "num_local_experts": 8, "num_experts_per_tok": 2,
                  "seq_length": 4096, "vocab_size": 32000},
        "parallel": {"tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1,
                     "expert_model_parallel_size": 8, "data_parallel_size": 8},
        "batch": {"global_batch_size": 64, "micro_batch_size": 1},
        "measured": {"tokens_per_s_per_device": 5000}}"#;

/// A file mixing a dense row (`num_experts: null`) and an MoE row written with Hugging Face and
/// Megatron-LM names: each row goes to its validator, the dense report first, then the MoE one
/// (JSON: one document per line).
#[test]
fn a_file_mixing_dense_and_moe_rows_reports_both() {
    let mut mixed: Value = serde_json::from_str(ONE_DENSE_RUN).unwrap();
    mixed["rows"][0]["id"] = "mine-dense".into();
    mixed["rows"][0]["model"]["num_experts"] = Value::Null;
    let moe: Value = serde_json::from_str(ONE_MOE_ROW).unwrap();
    mixed["rows"].as_array_mut().unwrap().push(moe);
    let mixed = mixed.to_string();
    let p = temp_file("mixed.json", &mixed);
    let out = fmperf(["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(docs.len(), 2, "{text}");
    assert_eq!(docs[0]["rows"][0]["id"], "mine-dense");
    assert_eq!(docs[0]["rows"].as_array().unwrap().len(), 1);
    let moe = docs[1].to_string();
    assert!(moe.contains("mine-moe") && !moe.contains("mine-dense"), "{moe}");
    assert!(moe.contains("[8,1,1]"), "ep 8 read from expert_model_parallel_size: {moe}");
}

/// Runs fmperf was never fitted on, written as a user would: the rows read, and the pipeline
/// schedule the paper states in words (section 3.3.2: interleaved, one Transformer layer per model
/// chunk, so 8 virtual stages per rank of 16: 126 layers + embedding + loss = 128 chunks) is read.
/// Without it the unstated schedule is named in each row's assumptions (plain 1F1B).
#[test]
fn llama3_405b_runs_from_the_paper_read_and_say_what_they_assume() {
    let text = include_str!("../../core/tests/data/llama3-405b-table4.json");
    let p = temp_file("llama3-405b-table4.json", text);
    let v = json(["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    let rows = v["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let said = r["assumptions"].to_string();
        assert!(!said.contains("virtual pipeline stages not stated"), "{said}");
        assert!(said.contains("micro-batch not stated"), "{said}");
        assert!(r["config"].as_str().unwrap().contains("vpp 8"), "{r}");
        assert!(r["error_loso"].as_f64().is_some_and(f64::is_finite), "{r}");
    }
    // The same rows without the paper's schedule words: plain 1F1B, stated as an assumption.
    let plain_text: String =
        text.lines().filter(|l| !l.contains("virtual_pipeline_model_parallel_size")).collect::<Vec<_>>().join("\n");
    let p = temp_file("llama3-405b-table4-plain.json", &plain_text);
    let v = json(["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    let plain = v["rows"].as_array().unwrap();
    for (a, b) in plain.iter().zip(&rows) {
        assert!(a["assumptions"].to_string().contains("virtual pipeline stages not stated: plain 1F1B"), "{a}");
        // Bubble slots (pp − 1)/v: 15 plain, 15/8 = 1.875 interleaved, so the bubble shrinks by
        // 8× before its messages (2 per slot plain, 16 interleaved, all exposed in the bubble):
        // more than 7× in all here (8k rows: 3.754 s -> 0.495 s = 7.6×).
        let (tp, ti) = (a["totals"]["t_bubble"].as_f64().unwrap(), b["totals"]["t_bubble"].as_f64().unwrap());
        assert!(ti * 7.0 < tp && ti * 8.0 >= tp * 0.999, "bubble {tp} s -> {ti} s");
        assert!(b["predicted"].as_f64().unwrap() > a["predicted"].as_f64().unwrap() * 1.1, "{a} {b}");
    }
}

/// Issue 30: a number written as text is refused naming the field and the rule (a dense file:
/// exit 2; an MoE row: skipped with that reason), and a dense row stating 0 experts is refused.
#[test]
fn numbers_written_as_text_are_refused() {
    let mut doc: Value = serde_json::from_str(ONE_DENSE_RUN).unwrap();
    doc["rows"][0]["model"]["hidden"] = "4096".into();
    let p = temp_file("hidden-as-text.json", &doc.to_string());
    let e = usage_error(["validate", "--data", p.to_str().unwrap()]);
    assert!(e.contains("model.hidden") && e.contains("not a string"), "{e}");
    let mut doc: Value = serde_json::from_str(ONE_DENSE_RUN).unwrap();
    doc["rows"][0]["model"]["num_experts"] = 0.into();
    let p = temp_file("zero-experts.json", &doc.to_string());
    let e = usage_error(["validate", "--data", p.to_str().unwrap()]);
    assert!(e.contains("num_experts") && e.contains("must be 1 for a dense model"), "{e}");
    let moe = ONE_MOE_ROW.replace(r#""expert_model_parallel_size": 8"#, r#""expert_model_parallel_size": "8""#);
    let p = temp_file("moe-ep-as-text.json", &format!(r#"{{"rows": [{moe}]}}"#));
    let out = fmperf(["validate", "--data", p.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("parallel.expert_model_parallel_size: must be a JSON number"), "{text}");
}
