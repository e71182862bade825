//! `fmperf estimate --from` and `fmperf search --from` on Mixture-of-Experts files, through the
//! built binary: the MoE breakdown in the table and the JSON, the file's expert degrees fixed,
//! the search's `ep`/`etp` columns and the file's own layout ranked; a bad expert degree is one
//! line on stderr naming the flag.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fmperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fmperf")).args(args).output().expect("the fmperf binary runs")
}

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/launch").join(name);
    p.to_str().unwrap().to_string()
}

fn ok(args: &[&str]) -> String {
    let out = fmperf(args);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn estimate_prints_the_moe_breakdown() {
    let path = example("megatron-deepseek-v3.sh");
    let table = ok(&["estimate", "--from", &path]);
    assert!(
        table.contains("experts  256 routed, top-8, width 2048 + 1 shared (width 2048) · 58 MoE blocks of 61"),
        "{table}"
    );
    assert!(table.contains("experts  ep 64 · etp 1 · expert dp 1"), "{table}");
    assert!(table.contains("MoE time part") && table.contains("all-to-all"), "{table}");
    let j: Value = serde_json::from_str(&ok(&["estimate", "--from", &path, "--format", "json"])).unwrap();
    assert_eq!((j["config"]["ep"].as_u64(), j["config"]["etp"].as_u64()), (Some(64), Some(1)));
    assert_eq!(j["moe"]["router"], "sigmoid");
    assert_eq!(j["moe"]["mla"]["kv_lora_rank"].as_u64(), Some(512));
    assert!(j["moe"]["breakdown"]["times"]["a2a_s"].as_f64().unwrap() > 0.0);
    // A dense file keeps its shape: no MoE object, no expert degrees.
    let j: Value =
        serde_json::from_str(&ok(&["estimate", "--from", &example("megatron-llama3-70b.sh"), "--format", "json"]))
            .unwrap();
    assert!(j["moe"].is_null() && j["config"].get("ep").is_none());
}

#[test]
fn search_ranks_the_files_expert_layout() {
    let path = example("bridge-mixtral-8x7b.yaml");
    let j: Value = serde_json::from_str(&ok(&["search", "--from", &path, "--top", "3", "--format", "json"])).unwrap();
    let own = &j["own"];
    assert_eq!((own["config"]["ep"].as_u64(), own["config"]["etp"].as_u64()), (Some(8), Some(1)));
    assert!(own["rank"].as_u64().unwrap() >= 1 && own["of"].as_u64().unwrap() >= 1);
    assert!(j["results"].as_array().unwrap().iter().all(|r| r.to_string().contains("\"ep\"")));
    let table = ok(&["search", "--from", &path, "--top", "3"]);
    assert!(table.contains(" ep ") && table.contains(" etp "), "{table}");
    assert!(table.contains("your layout: tp 1 · pp 4 · cp 1 · dp 8 · mbs 1 · ep 8 · etp 1"), "{table}");
    // A model-only config.json of an MoE model searches too.
    let qwen = example("hf-qwen3-30b-a3b-config.json");
    let args = [
        "search",
        "--from",
        &qwen,
        "--system",
        "nvidia_h100_sxm5_80gb",
        "--gpus",
        "16",
        "--global-batch",
        "64",
        "--seq-len",
        "4096",
        "--top",
        "2",
    ];
    assert!(ok(&args).contains("1d.dp"));
}

#[test]
fn a_bad_expert_degree_is_one_line_naming_the_flag() {
    let text = std::fs::read_to_string(example("megatron-deepseek-v3.sh")).unwrap().replace("EP=64", "EP=48");
    let dir = std::env::temp_dir().join(format!("fmperf-cli-moe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.sh");
    std::fs::write(&p, text).unwrap();
    let out = fmperf(&["estimate", "--from", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--expert-model-parallel-size") && err.contains("must divide the routed experts 256"),
        "{err}"
    );
}
