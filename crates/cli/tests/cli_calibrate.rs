//! `fmperf calibrate` and `--calibration FILE` on estimate and search, through the built binary:
//! a log and a launch file → the versioned document; the document applied side by side; errors
//! for another system, an unknown version, an out-of-bounds constant, a missing figure.

mod support;
use support::{fmperf, json, temp_file, usage_error};

use std::path::PathBuf;

fn repo(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(p).to_str().unwrap().to_string()
}

/// `fmperf search` of Llama 3 8B on 64 devices of `system` with the calibration `cal`.
fn search_args(system: &str, cal: &str) -> Vec<String> {
    [
        "search",
        "--model",
        "llama3-8b",
        "--system",
        system,
        "--gpus",
        "64",
        "--global-batch",
        "512",
        "--calibration",
        cal,
    ]
    .map(String::from)
    .to_vec()
}

const TOML: &str = "examples/launch/torchtitan-llama3-8b.toml";
const LOG: &str = "examples/logs/torchtitan-llama3-8b.log";

#[test]
fn a_log_calibrates_the_stack_and_the_shipped_example_is_what_it_writes() {
    let j = json(&["calibrate", "--from", &repo(TOML), "--log", &repo(LOG)]);
    assert_eq!(j["version"], 1);
    assert_eq!(j["system"], "nvidia_h100_sxm5_80gb");
    let k = &j["stack_constants"];
    // The log's 5,895 tokens/s per device is below the shipped prediction: a slower stack.
    let c = k["compute_scale"].as_f64().unwrap();
    assert!(c < 0.97 && c > 0.8, "{k}");
    // 59.18 GiB reserved against a smaller prediction: an overhead.
    assert!(k["memory_overhead_gb"].as_f64().unwrap() > 1.0, "{k}");
    let measured = j["from"]["measured"].as_array().unwrap();
    let tps = measured.iter().find(|m| m["figure"] == "tokens_per_s_per_device").unwrap();
    assert_eq!(tps["value"], 5895.0);
    // The calibration moves the prediction toward the measurement, not past it.
    let (before, after) = (tps["predicted_before"].as_f64().unwrap(), tps["predicted_after"].as_f64().unwrap());
    assert!(before > after && after > 5895.0, "{before} {after}");
    assert!(j["changed"].as_array().unwrap().iter().any(|c| c.as_str().unwrap().starts_with("compute_scale")));
    // The README's example document is this output.
    let shipped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("examples/own/my-stack.json")).unwrap()).unwrap();
    assert_eq!(shipped["stack_constants"], j["stack_constants"]);
}

#[test]
fn numbers_instead_of_a_log() {
    let j = json(&["calibrate", "--from", &repo(TOML), "--step-time", "1.45"]);
    let c = j["stack_constants"]["compute_scale"].as_f64().unwrap();
    assert!(c < 0.95, "{c}");
    assert_eq!(j["stack_constants"]["memory_overhead_gb"], 0.0);
    let mfu = json(&["calibrate", "--from", &repo(TOML), "--mfu", "34.5%"]);
    let c2 = mfu["stack_constants"]["compute_scale"].as_f64().unwrap();
    assert!(c2 < 1.0);
    let e = usage_error(["calibrate", "--from", &repo(TOML)]);
    assert!(e.contains("needs a measured figure"), "{e}");
    let e = usage_error(["calibrate", "--from", &repo(TOML), "--step-time", "fast"]);
    assert!(e.contains("--step-time fast"), "{e}");
    let e = usage_error(["calibrate", "--from", &repo(TOML), "--step-time", "100"]);
    assert!(e.contains("cannot be reached"), "{e}");
    let bad = temp_file("bad.log", "step: 20  loss: 7.1  tps: x,yz  mfu: 3%\n");
    let e = usage_error(["calibrate", "--from", &repo(TOML), "--log", bad.to_str().unwrap()]);
    assert!(e.contains("log line 1"), "{e}");
}

#[test]
fn estimate_and_search_show_both_labelled() {
    let cal = repo("examples/own/my-stack.json");
    let j = json(&["estimate", "--from", &repo(TOML), "--calibration", &cal, "--format", "json"]);
    let (u, c) = (&j["uncalibrated"], &j["calibrated"]);
    assert!(c["time_per_step_s"].as_f64().unwrap() > u["time_per_step_s"].as_f64().unwrap());
    let overhead = j["calibration"]["stack_constants"]["memory_overhead_gb"].as_f64().unwrap();
    let dm = c["memory"]["predicted_gb"].as_f64().unwrap() - u["memory"]["predicted_gb"].as_f64().unwrap();
    assert!((dm - overhead).abs() < 1e-6, "{dm} vs {overhead}");
    assert_eq!(c["memory"]["capacity_gb"], u["memory"]["capacity_gb"]);
    let text = String::from_utf8(fmperf(["estimate", "--from", &repo(TOML), "--calibration", &cal]).stdout).unwrap();
    assert!(text.contains("uncalibrated (shipped fit)") && text.contains("calibrated on llama3 8B"), "{text}");
    let mut args = search_args("nvidia_h100_sxm5_80gb", &cal);
    args.extend(["--top", "3", "--format", "json"].map(String::from));
    let s = json(&args);
    let (a, b) = (&s["uncalibrated"]["results"][0], &s["calibrated"]["results"][0]);
    assert!(b["time_per_iteration_s"].as_f64().unwrap() > a["time_per_iteration_s"].as_f64().unwrap());
    // The device figure with the stack's overhead; the search judged the need without the
    // allocator's cache against the capacity less the overhead, so the row is never a "no".
    let with = b["mem_gb_with_overhead"].as_f64().unwrap();
    assert!((with - b["mem_gb"].as_f64().unwrap() - overhead).abs() < 1e-9);
    assert_ne!(b["fits"], "no", "{b}");
}

#[test]
fn a_calibration_is_refused_where_it_does_not_apply() {
    let text = std::fs::read_to_string(repo("examples/own/my-stack.json")).unwrap();
    let search = |cal: &str, system: &str| usage_error(search_args(system, cal));
    let cal = repo("examples/own/my-stack.json");
    let e = search(&cal, "nvidia_a100_sxm4_80gb");
    assert!(e.contains("another system"), "{e}");
    let v2 = temp_file("v2.json", &text.replace("\"version\": 1", "\"version\": 2"));
    let e = search(v2.to_str().unwrap(), "nvidia_h100_sxm5_80gb");
    assert!(e.contains("calibration.version"), "{e}");
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["stack_constants"]["scale_out_bandwidth_scale"] = serde_json::json!(9.0);
    let big = temp_file("big.json", &doc.to_string());
    let e = search(big.to_str().unwrap(), "nvidia_h100_sxm5_80gb");
    assert!(e.contains("scale_out_bandwidth_scale") && e.contains("0.25 to 2"), "{e}");
    let mut args = search_args("nvidia_h100_sxm5_80gb", &cal);
    args.extend(["--mode", "reference"].map(String::from));
    let e = usage_error(args);
    assert!(e.contains("--mode reference"), "{e}");
}
