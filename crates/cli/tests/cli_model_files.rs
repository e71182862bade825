//! A framework's model file (a Hugging Face config.json) wherever a model is accepted (issue 27
//! §2): `show`, `check`, `search --model` (with `--seq-len`, which a config.json does not state).

mod support;
use support::{fmperf, json, usage_error};

use std::path::PathBuf;

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/launch").join(name);
    p.to_str().unwrap().to_string()
}

#[test]
fn show_and_check_read_a_config_json_as_a_model() {
    let qwen = example("hf-qwen3-30b-a3b-config.json");
    let j = json(&["show", &qwen, "--format", "json"]);
    assert_eq!(j["kind"], "model");
    let got: Vec<u64> = ["layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "head_dim"]
        .iter()
        .map(|k| j[k].as_u64().unwrap_or_else(|| panic!("{k}: {j}")))
        .collect();
    assert_eq!(got, [48, 2048, 32, 4, 6144, 151936, 128]);
    assert_eq!((j["moe"]["experts"].as_u64(), j["moe"]["top_k"].as_u64()), (Some(128), Some(8)));
    assert_eq!(j["moe"]["expert_ffn"].as_u64(), Some(768));
    assert!(j["seq_len"].is_null(), "a config.json states no training length");
    // The document show writes is one fmperf reads back (`check` it).
    let out = fmperf(&["check", &example("hf-llama3-8b-config.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("valid") && text.contains("framework's model file"), "{text}");
}

#[test]
fn search_takes_a_config_json_as_the_model() {
    let hf = example("hf-llama3-8b-config.json");
    let args = ["search", "--model", &hf, "--system", "nvidia_h100_sxm5_80gb", "--gpus", "64", "--global-batch", "256"];
    let e = usage_error(&args);
    assert!(e.contains("--seq-len"), "{e}");
    let mut with_len = args.to_vec();
    with_len.extend(["--seq-len", "8192", "--top", "3", "--format", "json"]);
    let j = json(&with_len);
    let same = json(&[
        "search",
        "--model",
        "llama3-8b",
        "--system",
        "nvidia_h100_sxm5_80gb",
        "--gpus",
        "64",
        "--global-batch",
        "256",
        "--top",
        "3",
        "--format",
        "json",
    ]);
    assert!(j["results"][0]["throughput_samples_per_s"].as_f64().unwrap() > 0.0, "{j}");
    // The config.json is Llama 3 8B: the same results as the catalog's (which trains at 8192).
    assert_eq!(j["results"][0]["throughput_samples_per_s"], same["results"][0]["throughput_samples_per_s"], "{j}");
}

#[test]
fn a_sweep_takes_a_config_json_with_the_length_as_an_axis() {
    let hf = example("hf-llama3-8b-config.json");
    let base =
        ["sweep", "--model", &hf, "--system", "nvidia_h100_sxm5_80gb", "--global-batch", "256", "--axis", "gpus=64"];
    let e = usage_error(&base);
    assert!(e.contains("--axis seq="), "{e}");
    let mut with = base.to_vec();
    with.extend(["--axis", "seq=4096,8192", "--format", "csv"]);
    let out = fmperf(&with);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 3, "a header and two points: {csv}");
    assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
}
