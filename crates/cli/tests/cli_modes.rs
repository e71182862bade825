//! `--mode` and `--ext` of `fmperf search` and `fmperf sweep`, run through the built binary: the
//! JSON says which mode and switches priced it, extended mode differs from the reference, bad
//! switches exit 2 naming the flag, and `--help` lists every switch.

mod support;
use support::fmperf as run;

use fmperf_core::extended::switches::SWITCHES;
use serde_json::Value;

/// `fmperf` with the words of `line`.
fn fmperf(line: &str) -> std::process::Output {
    run(line.split_whitespace())
}

fn stdout(line: &str) -> String {
    support::stdout(line.split_whitespace())
}

fn usage_error(line: &str) -> String {
    support::usage_error(line.split_whitespace())
}

const SEARCH: &str = "search --model llama3-8b --system nvidia_h100_sxm5_80gb --strategy 1d --gpus 64 --global-batch 512 \
                      --top 3 --format json";

#[test]
fn search_json_says_which_mode_and_switches() {
    // Extended mode is the default (issue 16 §5): reference outputs need `--mode reference`.
    let reference: Value = serde_json::from_str(&stdout(&format!("{SEARCH} --mode reference"))).unwrap();
    let default: Value = serde_json::from_str(&stdout(SEARCH)).unwrap();
    assert_eq!(default["mode"], "extended");
    assert_eq!(reference["mode"], "reference");
    assert!(reference["switches"].is_null());
    let ext: Value = serde_json::from_str(&stdout(&format!("{SEARCH} --mode extended --ext recompute=full"))).unwrap();
    assert_eq!(ext["mode"], "extended");
    assert_eq!(ext["switches"].as_object().unwrap().len(), SWITCHES.len());
    assert_eq!(ext["switches"]["recompute"], "full");
    assert_eq!(ext["switches"]["precision"], "bf16");
    // Same candidates, other prices.
    assert_eq!(ext["candidates"], reference["candidates"]);
    let thr = |v: &Value| v["results"][0]["throughput_samples_per_s"].as_f64().unwrap();
    assert!(thr(&ext) < thr(&reference), "extended mode is less optimistic");
    // The system spec's precision wins over the switch.
    let fp8: Value =
        serde_json::from_str(&stdout(&format!("{SEARCH} --mode extended").replace("80gb", "80gb,precision=fp8")))
            .unwrap();
    assert_eq!(fp8["switches"]["precision"], "fp8");
    assert!(thr(&fp8) > thr(&serde_json::from_str(&stdout(&format!("{SEARCH} --mode extended"))).unwrap()));
}

#[test]
fn extended_search_runs_where_reference_mode_cannot() {
    // TPU v5e has no vector rate: reference mode stops, extended mode never reads it.
    let line = "search --model llama3-8b --system google_tpu_v5e --strategy 1d --gpus 256 --global-batch 256 --top 1";
    let out = fmperf(&format!("{line} --mode reference"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).trim_end().lines().last().unwrap().contains("vector"));
    let ext: Value = serde_json::from_str(&stdout(&format!("{line} --mode extended --format json"))).unwrap();
    assert_eq!(ext["results"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_modes_and_switches_name_the_flag() {
    let err = usage_error(&format!("{SEARCH} --mode fast"));
    assert!(err.contains("--mode") && err.contains("reference or extended"), "{err}");
    let err = usage_error(&format!("{SEARCH} --mode reference --ext causal=off"));
    assert!(err.contains("--ext") && err.contains("need extended mode"), "{err}");
    let err = usage_error(&format!("{SEARCH} --mode extended --ext recompte=full"));
    assert!(err.contains("--ext") && err.contains("did you mean `recompute`"), "{err}");
    let err = usage_error(&format!("{SEARCH} --mode extended --ext weight_sparsity=1.5"));
    assert!(err.contains("ext.weight_sparsity"), "{err}");
    let err = usage_error(&format!("{SEARCH} --mode extended").replace("--strategy 1d", "--strategy 2d"));
    assert!(err.contains("2D SUMMA"), "{err}");
    let sweep = "sweep --model gpt3_1T --system B200 --axis gpus=512";
    let err = usage_error(&format!("{sweep} --mode extended --ext sharding=zero9"));
    assert!(err.contains("--ext") && err.contains("ext.sharding"), "{err}");
}

#[test]
fn sweep_outputs_carry_the_mode_and_the_preset_runs_in_either() {
    let sweep = "sweep --model gpt3_1T --system B200 --axis gpus=512,1024";
    let json = stdout(&format!("{sweep} --mode extended --ext sharding=zero3 --format json"));
    for line in json.lines() {
        let p: Value = serde_json::from_str(line).unwrap();
        assert_eq!(p["mode"], "extended");
        assert_eq!(p["switches"]["sharding"], "zero3");
        assert!(p["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("2D SUMMA")));
        assert!(p["per_strategy"].get("2d").is_none());
    }
    let csv = stdout(&format!("{sweep} --mode extended --ext sharding=zero3 --format csv"));
    assert!(csv.lines().next().unwrap().ends_with(",mode,switches"));
    assert!(csv.lines().nth(1).unwrap().ends_with(",extended,sharding=zero3"));
    let table = stdout(&format!("{sweep} --mode extended"));
    assert!(table.contains("--mode extended") && table.contains("mode: extended mode (default switches)"), "{table}");
    let reference = stdout(&format!("{sweep} --mode reference --format csv"));
    assert!(stdout(&format!("{sweep} --format csv")).lines().nth(1).unwrap().contains(",extended,"), "the default");
    assert!(reference.lines().nth(1).unwrap().ends_with(",reference,"));
    // A paper preset in extended mode: the published values stand next to extended mode's numbers.
    let table = stdout("sweep --preset strong-scaling --panel gpt3_1T --mode extended");
    assert!(table.contains("mode: extended mode"), "{table}");
    assert!(table.contains("n/a (extended mode)") && !table.contains(" NO "), "{table}");
}

#[test]
fn help_lists_every_switch() {
    for cmd in ["search --help", "sweep --help"] {
        let h = stdout(cmd);
        assert!(h.contains("--mode reference") && h.contains("--ext KEY=VALUE"), "{cmd}");
        for sw in SWITCHES {
            assert!(h.contains(&format!("  {} = ", sw.key)), "{cmd}: {}", sw.key);
        }
    }
}
