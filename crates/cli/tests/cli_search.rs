//! The `fmperf search` and `fmperf models` contracts, run through the built binary.

mod support;
use support::{arg as path, temp_file};

use serde_json::Value;

/// The words of `line` followed by `extra`.
fn words<'a>(line: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    line.split_whitespace().chain(extra.iter().copied()).collect()
}

fn fmperf(line: &str, extra: &[&str]) -> std::process::Output {
    support::fmperf(words(line, extra))
}

/// Runs a command that must succeed and print JSON.
fn json(line: &str, extra: &[&str]) -> Value {
    support::json(words(line, extra))
}

/// Runs a command that must fail with exit 2 and one line on stderr; returns that line.
fn usage_error(line: &str, extra: &[&str]) -> String {
    support::usage_error(words(line, extra))
}

const H200_NVS4: &str = r#"{"matrix_flops_fp16": 989.4, "vector_flops_fp32": 66.9, "vector_flops_fp16": 133.8,
 "hbm_bandwidth": 4800, "hbm_capacity": 141, "nvlink_bandwidth": 450, "nvlink_eff": 0.7, "nvlink_latency": 2.5e-06,
 "ib_bandwidth": 50, "ib_eff": 0.7, "ib_latency": 5e-06, "nvlink_size": 4, "nic_factor": 1, "empirical": false,
 "summa_nb": 4, "element_size": 2e-09, "mask_element_size": 1e-09, "flops_units": 1e-12}"#;

/// The case of spec §10: gpt3_1T, H200 with NVLink 4, 2048 GPUs, G = 4096, 1d.
/// Reference-mode outputs are pinned: `--mode reference` since extended mode is the default (issue
/// 16 §5). `--nvlink-size` is the old spelling of `--domain`, still accepted.
const BEST_1D: &str = "search --mode reference --model gpt3_1T --system H200 --strategy 1d --gpus 2048 --global-batch 4096 --nvlink-size 4";
/// A case where nothing fits (1d is infeasible for vit_era5 on A100).
const NOTHING_FITS: &str =
    "search --mode reference --model vit_era5 --system A100 --strategy 1d --gpus 256 --global-batch 4096 --domain 4";

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() <= 1e-12 * want.abs())
}

#[test]
fn json_contract_matches_the_reference_best_1d_configuration() {
    let doc = json(&format!("{BEST_1D} --format json"), &[]);
    assert_eq!(doc.as_object().unwrap().len(), 4, "`mode`, `switches`, `candidates` and `results`");
    assert_eq!(doc["mode"], "reference");
    assert!(doc["switches"].is_null());
    assert_eq!(doc["candidates"], 1810);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 10, "--top defaults to 10");
    let best = &results[0];
    // spec §10 / stats.ipynb: dp 16, tp 4, pp 32, mbs 1, nv_tp 4, 102.463805377367 samples/s.
    assert!(close(&best["throughput_samples_per_s"], 102.463805377367), "{best}");
    assert!(close(&best["time_per_iteration_s"], 39.97509154490915));
    assert!(close(&best["mem_gb"], 124.64239104));
    let cfg = &best["config"];
    let dims: Vec<Option<u64>> = ["dp", "tp", "pp", "mbs", "microbatches"].iter().map(|k| cfg[*k].as_u64()).collect();
    assert_eq!(dims, [Some(16), Some(4), Some(32), Some(1), Some(256)]);
    assert!(cfg.get("tp1").is_none() && cfg.get("nb").is_none());
    assert_eq!(best["placement"], serde_json::json!({"nv_tp": 4, "nv_dp": 1, "nv_pp": 1}));
    for k in ["comp", "mem", "tp_comm", "dp_comm", "pp_comm", "bubble"] {
        assert!(best["time_s"][k].is_f64(), "time_s.{k}");
    }
    assert!(close(&best["time_s"]["bubble"], 4.237732820075002));
    for k in ["weights", "grads", "optimizer", "activations"] {
        assert!(best["memory_gb"][k].is_f64(), "memory_gb.{k}");
    }
    let t: Vec<f64> = results.iter().map(|r| r["throughput_samples_per_s"].as_f64().unwrap()).collect();
    assert!(t.windows(2).all(|w| w[0] >= w[1]), "best first");
}

#[test]
fn two_d_results_carry_grid_and_panels() {
    let line = "search --mode reference --model gpt3_1T --system B200 --gpus 128 --global-batch 4096 --format json";
    let doc = json(&format!("{line} --strategy 2d --nvlink-size 64 --top 3"), &[]);
    assert_eq!(doc["candidates"], 11723);
    let r = &doc["results"][0];
    for k in ["dp", "tp", "tp1", "tp2", "pp", "mbs", "microbatches", "nb"] {
        assert!(r["config"][k].is_u64(), "config.{k}");
    }
    for k in ["nv_tp1", "nv_tp2", "nv_dp", "nv_pp"] {
        assert!(r["placement"][k].is_u64(), "placement.{k}");
    }
    let tp = |k: &str| r["config"][k].as_u64().unwrap();
    assert_eq!(tp("tp"), tp("tp1") * tp("tp2"));
    let seqp = json(&format!("{line} --strategy 2d-seqp --nvlink-size 4 --top 1"), &[]);
    assert_eq!(seqp["candidates"], 5863);
    assert!(seqp["results"][0]["config"].get("nb").is_none());
    assert!(seqp["results"][0]["config"]["tp2"].is_u64());
}

#[test]
fn reference_json_files_give_the_same_answer_as_built_ins() {
    let model = temp_file("gpt3_1T.json", r#"{"l": 2048, "e": 25600, "h": 160, "depth": 128}"#);
    let system = temp_file("config-H200.json", H200_NVS4);
    let line = "search --mode reference --strategy 1d --gpus 2048 --global-batch 4096 --top 3 --format json";
    let from_files = json(line, &["--model", path(&model), "--system", path(&system)]);
    assert_eq!(from_files, json(&format!("{BEST_1D} --top 3 --format json"), &[]));
}

#[test]
fn nothing_fits_exits_zero_with_empty_results() {
    let doc = json(&format!("{NOTHING_FITS} --format json"), &[]);
    assert_eq!(doc["candidates"], 1296);
    assert_eq!(doc["results"], serde_json::json!([]));
    let out = fmperf(NOTHING_FITS, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no configuration fits"));
}

#[test]
fn table_and_csv_have_unit_bearing_headers() {
    let out = fmperf(&format!("{BEST_1D} --top 2 --format csv"), &[]);
    assert_eq!(out.status.code(), Some(0));
    let csv = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    for title in ["throughput [samples/s]", "mem [GB]", "bubble [s]", "activations [GB]"] {
        assert!(lines[0].contains(title), "{title} in {}", lines[0]);
    }
    // The CSV is the result row's flat form (issue 11 §4): rank, strategy, config code, then the
    // numbers in full precision (it used to hold the table's rounded numbers).
    assert!(lines[1].starts_with("1,1d,1d.dp16.tp4.pp32.mbs1.nv4x1x1,102.463805377367,"), "{}", lines[1]);
    let text = String::from_utf8(fmperf(BEST_1D, &[]).stdout).unwrap();
    assert!(text.contains("1810 candidates") && text.contains("102.4638"));
}

#[test]
fn extended_table_and_csv_carry_the_memory_verdict() {
    // Issue 32: the verdict is in the flat outputs, not only in JSON: `fits` and the band after
    // the iteration time, the same values as the JSON rows'.
    let line =
        "search --model llama3-8b --system nvidia_h100_sxm5_80gb --gpus 64 --global-batch 256 --strategy 1d --top 3";
    let out = fmperf(line, &["--format", "csv"]);
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(&header[5..8], &["fits", "mem band [GB]", "mem [GB]"], "{}", lines[0]);
    let j = json(line, &["--format", "json"]);
    for (row, r) in lines[1..].iter().zip(j["results"].as_array().unwrap()) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[5], r["fits"].as_str().unwrap());
        assert_eq!(cells[6].parse::<f64>().unwrap(), r["memory_band_gb"].as_f64().unwrap());
    }
    let text = String::from_utf8(fmperf(line, &[]).stdout).unwrap();
    assert!(text.contains("fits") && text.contains("mem band [GB]"), "{text}");
    // Reference mode has no verdict: no such columns.
    let reference = String::from_utf8(fmperf(BEST_1D, &["--format", "csv"]).stdout).unwrap();
    assert!(!reference.lines().next().unwrap().contains("fits"));
}

#[test]
fn bad_inputs_exit_2_naming_the_flag_or_field() {
    let gpt3 = "search --model gpt3 --gpus 64 --global-batch 4096";
    assert!(usage_error(&format!("{gpt3} --system H200 --strategy 3d"), &[]).contains("--strategy"));
    let zero = "search --model gpt3 --system H200 --strategy 1d --gpus 0 --global-batch 4096";
    assert!(usage_error(zero, &[]).contains("--gpus"));
    assert!(usage_error(&format!("{gpt3} --system H200 --strategy 1d --frobnicate 1"), &[]).contains("--frobnicate"));
    assert!(usage_error(&format!("{gpt3} --system H200 --strategy 1d --top x"), &[]).contains("--top"));
    assert!(usage_error("search --model gpt3 --system H200 --strategy 1d", &[]).contains("--gpus"));
    let huge = "search --model gpt3 --system H200 --strategy 1d --gpus 99999999999 --global-batch 8";
    assert!(usage_error(huge, &[]).contains("--gpus"));
    assert!(
        usage_error("search --model gpt4 --system H200 --strategy 1d --gpus 8 --global-batch 8", &[])
            .contains("gpt3_1T")
    );

    let missing = std::env::temp_dir().join("fmperf-no-such-dir/model.json");
    let e =
        usage_error("search --system H200 --strategy 1d --gpus 64 --global-batch 4096", &["--model", path(&missing)]);
    assert!(e.contains("--model") && e.contains("cannot read"), "{e}");

    let with_system = format!("{gpt3} --strategy 1d --system");
    let malformed = temp_file("broken.json", r#"{"matrix_flops_fp16": 989.4,"#);
    let e = usage_error(&with_system, &[path(&malformed)]);
    assert!(e.contains("--system") && e.contains("parse"), "{e}");

    let typo = temp_file("typo.json", &H200_NVS4.replace("hbm_capacity", "hbm_capacty"));
    let e = usage_error(&with_system, &[path(&typo)]);
    assert!(e.contains("system.hbm_capacty") && e.contains("hbm_capacity"), "{e}");

    let zero_heads = temp_file("zero-heads.json", r#"{"l": 2048, "e": 25600, "h": 0, "depth": 128}"#);
    let e = usage_error(
        "search --system H200 --strategy 1d --gpus 64 --global-batch 4096",
        &["--model", path(&zero_heads)],
    );
    assert!(e.contains("model.h"), "{e}");
}

#[test]
fn models_lists_the_reference_models() {
    let doc = json("models --format json", &[]);
    let models = doc["models"].as_array().unwrap();
    assert_eq!(models.len(), 3);
    let t1 = models.iter().find(|m| m["name"] == "gpt3_1T").unwrap();
    assert!((t1["parameters_b"].as_f64().unwrap() - 1006.67).abs() < 0.005);
    assert!((t1["train_flops_per_sample_pflop"].as_f64().unwrap() - 12.57).abs() < 0.005);
    assert_eq!(t1["f"], 102400);
    let csv = String::from_utf8(fmperf("models --format csv", &[]).stdout).unwrap();
    assert!(csv.lines().next().unwrap().contains("params [B]"));
}

/// Issue 13 §3: any thread count gives the single-threaded output, byte for byte, in both modes.
#[test]
fn threads_do_not_change_the_output() {
    for line in [
        format!("{BEST_1D} --top 20 --format json"),
        "search --model gpt3_1T --system H200 --strategy 2d --gpus 512 --global-batch 4096 --domain 8 --mode reference --format csv".to_string(),
        "search --model llama3-8b --system nvidia_h100_sxm5_80gb --strategy 2d-seqp --gpus 64 --global-batch 512 --top 15 --format json".to_string(),
    ] {
        let one = fmperf(&format!("{line} --threads 1"), &[]).stdout;
        for n in [2, 3, 8] {
            assert_eq!(fmperf(&format!("{line} --threads {n}"), &[]).stdout, one, "{line} with {n} threads");
        }
    }
}

/// Issue 11 §5: `--domain` is the flag; `--nvlink-size` stays an alias.
#[test]
fn domain_flag_and_its_old_spelling_agree() {
    let new = json(&BEST_1D.replace("--nvlink-size 4", "--domain 4 --format json"), &[]);
    assert_eq!(new, json(&format!("{BEST_1D} --format json"), &[]));
}

/// Issue 14: NVL72 (72-device domains) at 2,304 GPUs gives results in both modes and says how;
/// a search with no split of its devices says why and what works.
#[test]
fn nvl72_counts_and_empty_searches_explain_themselves() {
    let line =
        "search --model gpt3_1T --system B200 --strategy 1d --gpus 2304 --global-batch 4096 --domain 72 --format json";
    let reference = json(&format!("{line} --mode reference"), &[]);
    assert!(!reference["results"].as_array().unwrap().is_empty());
    assert_eq!(reference["devices_used"], 2048);
    assert!(reference["diagnosis"]["message"].as_str().unwrap().contains("3^2"), "{reference}");
    let extended = json(
        "search --model llama3-70b --system nvidia_gb200_nvl72,scale_out=50 --strategy 1d --gpus 2304 --global-batch 4096 --format json",
        &[],
    );
    assert!(!extended["results"].as_array().unwrap().is_empty(), "{extended}");
    assert!(extended.get("devices_used").is_none(), "all 2,304 devices used");
    assert!(extended["results"][0]["execution"]["recompute"].is_string());
    // GPT-2 XL (25 heads, 48 blocks) on 7 GPUs: not memory; the factor 7 fits nothing.
    let text = String::from_utf8(
        fmperf("search --model gpt2-xl --system A100 --strategy 1d --gpus 7 --global-batch 512 --mode reference", &[])
            .stdout,
    )
    .unwrap();
    assert!(text.contains("factor 7") && text.contains("use 6 (1 idle)"), "{text}");
}

#[test]
fn execution_flags_fix_what_the_search_chooses() {
    let line = "search --model llama3-8b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 64 --global-batch 512 --top 5 --format json";
    let fixed = json(&format!("{line} --recompute full --sharding fsdp --interleave 1"), &[]);
    for r in fixed["results"].as_array().unwrap() {
        assert_eq!(r["execution"]["recompute"], "full");
        assert_eq!(r["execution"]["sharding"], "zero3");
    }
    let mbs = json(&format!("{line} --mbs 2"), &[]);
    assert!(mbs["results"].as_array().unwrap().iter().all(|r| r["config"]["mbs"] == 2));
    assert!(usage_error(&format!("{line} --recompute most"), &[]).contains("--recompute"));
    assert!(usage_error(&format!("{line} --mode reference --cp 2"), &[]).contains("extended mode"));
}

/// Without `--strategy` every strategy of the mode is searched and merged best first.
#[test]
fn every_strategy_by_default_merged_best_first() {
    let base =
        "search --mode reference --model gpt3_1T --system H200 --gpus 512 --global-batch 4096 --domain 8 --format json";
    let all = json(&format!("{base} --top 5"), &[]);
    let each: Vec<Value> =
        ["1d", "2d", "2d-seqp"].iter().map(|s| json(&format!("{base} --strategy {s} --top 5"), &[])).collect();
    let sum: u64 = each.iter().map(|d| d["candidates"].as_u64().unwrap()).sum();
    assert_eq!(all["candidates"], sum);
    let mut best: Vec<f64> = each
        .iter()
        .flat_map(|d| d["results"].as_array().unwrap().iter().map(|r| r["throughput_samples_per_s"].as_f64().unwrap()))
        .collect();
    best.sort_by(|a, b| b.total_cmp(a));
    let got: Vec<f64> =
        all["results"].as_array().unwrap().iter().map(|r| r["throughput_samples_per_s"].as_f64().unwrap()).collect();
    assert_eq!(got, best[..5].to_vec());
    assert_eq!(json(&format!("{base} --strategy all --top 5"), &[]), all);
    // Extended mode's `all` has no 2d.
    let ext = json(
        "search --model llama3-8b --system nvidia_h100_sxm5_80gb --gpus 64 --global-batch 512 --strategy all --top 3 --format json",
        &[],
    );
    assert!(ext["results"].as_array().unwrap().iter().all(|r| r["strategy"] != "2d"));
}
