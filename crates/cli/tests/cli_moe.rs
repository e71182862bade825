//! The Mixture-of-Experts contract of `fmperf search`: MoE catalog models search in extended mode,
//! each configuration's `config` carries the expert-parallel degrees `ep` and `etp` (with the
//! expert data-parallel degree `edp`) next to the dense keys, and `--moe` fixes or changes them.

mod support;
use support::fmperf as run;

use serde_json::Value;

/// `fmperf` with the words of `line`.
fn fmperf(line: &str) -> std::process::Output {
    run(line.split_whitespace())
}

fn json(line: &str) -> Value {
    support::json(line.split_whitespace())
}

/// The system of the contract when the catalog has it, else the H100 it derives from.
fn system() -> &'static str {
    let out = fmperf("catalog systems --format json");
    if String::from_utf8_lossy(&out.stdout).contains("nvidia_h800_sxm5_80gb") {
        "nvidia_h800_sxm5_80gb"
    } else {
        "nvidia_h100_sxm5_80gb"
    }
}

#[test]
fn deepseek_v3_configurations_carry_ep_and_etp() {
    let v = json(&format!(
        "search --mode extended --model deepseek-v3 --system {} --strategy 1d --gpus 2048 --global-batch 15360 --format json",
        system()
    ));
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{v}");
    for r in results {
        let c = &r["config"];
        for key in ["dp", "tp", "pp", "mbs", "microbatches", "ep", "etp", "edp"] {
            assert!(c[key].as_u64().is_some(), "{key} missing in {c}");
        }
        let (tp, dp, ep, etp, edp) = (
            c["tp"].as_u64().unwrap(),
            c["dp"].as_u64().unwrap(),
            c["ep"].as_u64().unwrap(),
            c["etp"].as_u64().unwrap(),
            c["edp"].as_u64().unwrap(),
        );
        // EP divides the 256 experts; ep·etp·edp folds the stage's tp·dp ranks.
        assert_eq!(256 % ep, 0);
        assert_eq!(ep * etp * edp, tp * dp, "{c}");
        // Extended mode judges fit against the device total the driver reports (85.521 GB for
        // an "80 GB" H800: 81,559 MiB), not the label, with the need without the allocator's
        // cache: a row is never a "no", and "yes" only at 85.521 or less with the cache.
        assert_ne!(r["fits"], "no", "{r}");
        assert!(r["fits"] != "yes" || r["mem_gb"].as_f64().unwrap() <= 85.521, "{r}");
    }
    assert_eq!(v["mode"], "extended");
    assert!(v["moe"].as_str().unwrap().contains("load=dropless"));
}

#[test]
fn moe_flag_fixes_the_degrees_and_reports_errors_by_key() {
    let v = json(
        "search --mode extended --model mixtral-8x7b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 64 \
         --global-batch 256 --format json --top 3 --moe ep=4,etp=1,load=forced",
    );
    for r in v["results"].as_array().unwrap() {
        assert_eq!((r["config"]["ep"].as_u64(), r["config"]["etp"].as_u64()), (Some(4), Some(1)));
    }
    let out = fmperf(
        "search --mode extended --model mixtral-8x7b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 64 \
         --global-batch 256 --moe ep=0",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--moe") && err.contains("moe.ep"), "{err}");
    // Extended mode is the default, so `--moe` alone is fine; with reference mode it is an error.
    let out = fmperf(
        "search --mode reference --model mixtral-8x7b --system H200 --strategy 1d --gpus 8 --global-batch 8 --moe ep=2",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--moe"));
    // Dense models: ep = etp = 1 (the one result row always has them) and no expert data parallelism.
    let v = json(
        "search --mode extended --model llama3-8b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 8 \
         --global-batch 64 --format json --top 1",
    );
    let c = &v["results"][0]["config"];
    assert_eq!((c["ep"].as_u64(), c["etp"].as_u64()), (Some(1), Some(1)), "{c}");
    assert!(c.get("edp").is_none(), "{c}");
}

/// A degree `--moe` fixes that no candidate can take is refused by `--moe` and its rule, on plain
/// `search` and on `search --from`, instead of a search that ends in "0 fit" without a word on why.
#[test]
fn a_fixed_degree_the_experts_cannot_take_is_refused_by_name() {
    let refused = |line: &str, rule: &str| {
        let out = fmperf(line);
        assert_eq!(out.status.code(), Some(2), "{line}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("--moe: {rule}")), "{line}: {err}");
        assert!(out.stdout.is_empty(), "{line}: nothing searched");
    };
    // Mixtral 8x7B has 8 routed experts: ep 3 does not divide them, ep 16 exceeds them; its expert
    // width 14336 = 2^11 · 7 is not a multiple of 3.
    let plain = "search --model mixtral-8x7b --system nvidia_h100_sxm5_80gb --gpus 64 --global-batch 256";
    refused(&format!("{plain} --moe ep=3"), "moe.ep = 3: must divide the routed experts 8");
    refused(&format!("{plain} --moe ep=16"), "moe.ep = 16: must divide the routed experts 8");
    refused(&format!("{plain} --moe etp=3"), "moe.etp = 3: must divide the expert width 14336");
    // ep 8 divides the 8 experts but not a stage of 4 devices (tp·cp·dp = 4/pp ≤ 4 ranks); ep 4 with
    // etp 2 neither (4 · 2 = 8 > 4): refused up front, not after every candidate.
    let four = "search --model mixtral-8x7b --system nvidia_h100_sxm5_80gb --gpus 4 --global-batch 256";
    refused(
        &format!("{four} --moe ep=8"),
        "moe.ep = 8: ep·etp = 8 · 1 = 8 must divide the ranks of one pipeline stage",
    );
    refused(&format!("{four} --moe ep=4,etp=2"), "moe.etp = 2: ep·etp = 4 · 2 = 8 must divide");
    // The case: the launch file's model has 4 experts (`--num-experts 4`).
    refused(
        "search --from ../launch/tests/data/real/05-gptoss_02_train.sh --system nvidia_b200_hgx --moe ep=8",
        "moe.ep = 8: must divide the routed experts 4",
    );
}

#[test]
fn validate_reads_the_moe_runs_as_shipped() {
    let v = json("validate --data builtin-moe --format json");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 53);
    let evaluated = rows.iter().filter(|r| r["error"].is_f64()).count();
    assert!(evaluated >= 43, "{evaluated}");
    assert!(v["fit"]["loso"]["mape"].as_f64().unwrap() >= v["fit"]["in_sample"]["mape"].as_f64().unwrap() - 1e-9);
    // The same file given by path reads the same.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../core/data/measured-moe-runs.json");
    let w = json(&format!("validate --data {path} --format json"));
    assert_eq!(w["rows"], v["rows"]);
}

#[test]
fn deepseek_v3_on_1024_h800_with_the_overlap_it_used() {
    // Issue 32: DeepSeek-V3 in FP8 on 1,024 H800 took 175 days for 14.8 T tokens in fmperf's
    // search (12 s of each ~64 s step exposed all-to-all) against ~108 days from the report's
    // 2.664 M H800 GPU hours. With the all-to-all overlap chosen by the search (default
    // `a2a_overlap=search`, at the cost of the 20 of 132 SMs the exchange takes) and DeepSeek's own
    // exchange (node-limited to 4 nodes by DeepEP's kernels, FP8 dispatch) it is within 10 % of it.
    let days = |moe: &str| {
        let j = json(&format!(
            "search --model deepseek-v3 --system nvidia_h800_sxm5_80gb,precision=fp8 --gpus 1024 \
             --global-batch 15360 --strategy 1d --top 1 --format json --moe {moe}"
        ));
        let t = j["results"][0]["time_per_iteration_s"].as_f64().unwrap();
        14.8e12 / (15360.0 * 4096.0 / t) / 86400.0
    };
    let paper = 2.664e6 / 1024.0 / 24.0;
    let theirs = days("dispatcher=deepep:4,fp8_dispatch=on");
    assert!((theirs / paper - 1.0).abs() < 0.10, "{theirs:.1} days vs {paper:.1}");
    let exposed = days("dispatcher=deepep:4,fp8_dispatch=on,a2a_overlap=off");
    assert!(exposed > 1.1 * theirs, "{exposed:.1} vs {theirs:.1} days");
}

#[test]
fn the_expert_all_to_all_is_its_own_time_part_in_every_output() {
    // search --format json: `time_s.ep_comm` (an added key); at TP 1 no TP communication at all.
    let v = json(
        "search --model mixtral-8x7b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 128 --global-batch 512 --top 20 --format json",
    );
    let results = v["results"].as_array().unwrap();
    let tp1: Vec<&Value> =
        results.iter().filter(|r| r["config"]["tp"] == 1 && r["config"]["ep"].as_u64() > Some(1)).collect();
    assert!(!tp1.is_empty(), "{v}");
    for r in tp1 {
        assert_eq!(r["time_s"]["tp_comm"], 0.0, "{r}");
        assert!(r["time_s"]["ep_comm"].as_f64().unwrap() > 0.0, "{r}");
    }
    for r in results {
        let sum: f64 = r["time_s"].as_object().unwrap().values().map(|x| x.as_f64().unwrap()).sum();
        let t = r["time_per_iteration_s"].as_f64().unwrap();
        assert!((sum - t).abs() < 1e-9 * t, "the parts add up: {sum} vs {t}");
    }
    // CSV: a column of its own.
    let csv = String::from_utf8(
        fmperf("search --model mixtral-8x7b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 128 --global-batch 512 --top 1 --format csv").stdout,
    )
    .unwrap();
    assert!(csv.lines().next().unwrap().contains("EP all-to-all [s]"), "{csv}");
    // estimate --from: text and JSON (`ep_comm` beside the keys it always had).
    let file = format!("{}/../../examples/launch/bridge-mixtral-8x7b.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = String::from_utf8(fmperf(&format!("estimate --from {file}")).stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("EP all-to-all")), "{text}");
    let e = json(&format!("estimate --from {file} --format json"));
    let t = &e["time_s"];
    assert_eq!(t["tp_cp_comm"], 0.0, "{t}");
    assert!(t["ep_comm"].as_f64().unwrap() > 0.0, "{t}");
    for k in ["compute", "memory_bound", "dp_comm", "pp_comm", "bubble", "recompute", "optimizer"] {
        assert!(t[k].is_f64(), "{k} in {t}");
    }
    // A dense model's is 0.
    let d = json(
        "search --model llama3-8b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 64 --global-batch 256 --top 1 --format json",
    );
    assert_eq!(d["results"][0]["time_s"]["ep_comm"], 0.0, "{d}");
}
