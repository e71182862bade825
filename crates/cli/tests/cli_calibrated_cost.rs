//! `--calibration FILE` on `fmperf sweep` and `fmperf search --from`, and the whole run's cost on
//! `fmperf search` (JSON `cost` per row, table and CSV columns), through the built binary.

mod support;
use support::{json, stdout, usage_error};

use std::path::PathBuf;

fn repo(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(p).to_str().unwrap().to_string()
}

/// `command` on Llama 3 8B and the H100 SXM5, then `rest`.
fn on<'a>(command: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![command, "--model", "llama3-8b", "--system", "nvidia_h100_sxm5_80gb"];
    v.extend(rest);
    v
}

const TOML: &str = "examples/launch/torchtitan-llama3-8b.toml";
const CAL: &str = "examples/own/my-stack.json";

fn sweep(extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args =
        on("sweep", &["--strategy", "1d", "--global-batch", "512", "--axis", "gpus=64,128", "--format", "json"]);
    args.extend(extra);
    stdout(&args).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_calibrated_sweep_prices_its_system_as_the_stack_runs_it() {
    let cal = repo(CAL);
    let (plain, calibrated) = (sweep(&[]), sweep(&["--calibration", &cal]));
    assert_eq!(plain.len(), 2);
    for (a, b) in plain.iter().zip(&calibrated) {
        let (ta, tb) = (a["best"]["iteration_s"].as_f64().unwrap(), b["best"]["iteration_s"].as_f64().unwrap());
        // The example stack is slower (compute_scale 0.918).
        assert!(tb > ta * 1.02, "{ta} {tb}");
        let notes = b["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n.as_str().unwrap().starts_with("calibrated on your measured run: compute_scale"))
        );
        // The cost metrics of a point: device-hours = days × 24 × devices.
        let best = &b["best"];
        let hours = best["days"].as_f64().unwrap() * 24.0 * b["devices"].as_f64().unwrap();
        assert!((best["gpu_hours"].as_f64().unwrap() / hours - 1.0).abs() < 1e-9);
        assert!((best["cost_usd"].as_f64().unwrap() / (hours * 12.29) - 1.0).abs() < 1e-9);
    }
    // The same calibrated point as a calibrated search of that scenario.
    let s = json(&on(
        "search",
        &[
            "--strategy",
            "1d",
            "--gpus",
            "64",
            "--global-batch",
            "512",
            "--top",
            "1",
            "--sharding",
            "zero1",
            "--calibration",
            &cal,
            "--format",
            "json",
        ],
    ));
    let t = s["calibrated"]["results"][0]["time_per_iteration_s"].as_f64().unwrap();
    // Known gap (noted on issue 28): a sweep point runs the switches' default execution (the
    // data-parallel overlap and the rest as set), the search chooses it, so the two bests may
    // differ slightly; the calibration itself applies the same way to both. The sharding is
    // fixed to the sweep's (ZeRO-1): left to choose, the search runs Megatron-FSDP over all 64
    // GPUs (its gathers cross the 8 nodes through every NIC), 7.52 s against the sweep's 8.01 s.
    let swept = calibrated[0]["best"]["iteration_s"].as_f64().unwrap();
    assert!((t / swept - 1.0).abs() < 0.005, "search {t} s vs sweep {swept} s");
    // Another system, reference mode: errors naming the flag.
    let e = usage_error([
        "sweep",
        "--model",
        "llama3-8b",
        "--system",
        "nvidia_a100_sxm4_80gb",
        "--axis",
        "gpus=64",
        "--calibration",
        &cal,
    ]);
    assert!(e.contains("--calibration") && e.contains("nvidia_h100_sxm5_80gb"), "{e}");
    let e = usage_error(on("sweep", &["--axis", "gpus=64", "--mode", "reference", "--calibration", &cal]));
    assert!(e.contains("reference"), "{e}");
}

#[test]
fn search_from_a_launch_with_a_calibration_shows_both() {
    let j = json(&["search", "--from", &repo(TOML), "--calibration", &repo(CAL), "--top", "3", "--format", "json"]);
    assert_eq!(j["calibration"]["system"], "nvidia_h100_sxm5_80gb");
    let (u, c) = (&j["uncalibrated"], &j["calibrated"]);
    assert_eq!(u["from"], c["from"]);
    let time = |x: &serde_json::Value| x["own"]["time_per_step_s"].as_f64().unwrap();
    assert!(time(c) > time(u), "{} {}", time(u), time(c));
    // The calibrated own layout is what `estimate --from --calibration` says.
    let e = json(&["estimate", "--from", &repo(TOML), "--calibration", &repo(CAL), "--format", "json"]);
    assert_eq!(e["calibrated"]["time_per_step_s"], c["own"]["time_per_step_s"]);
    let table = stdout(&["search", "--from", &repo(TOML), "--calibration", &repo(CAL), "--top", "2"]);
    assert!(table.contains("uncalibrated (shipped fit):") && table.contains("calibrated on"), "{table}");
}

#[test]
fn search_rows_carry_the_run_cost() {
    let base = on("search", &["--gpus", "64", "--global-batch", "512", "--top", "2", "--tokens", "1e12"]);
    let mut args = base.to_vec();
    args.extend(["--format", "json"]);
    let j = json(&args);
    for r in j["results"].as_array().unwrap() {
        let c = &r["cost"];
        // 1e12 tokens of 8192 at the row's samples/s on 64 devices; 700 W; the example 12.29 USD.
        let hours = 1e12 / 8192.0 / r["throughput_samples_per_s"].as_f64().unwrap() * 64.0 / 3600.0;
        assert!((c["gpu_hours"].as_f64().unwrap() / hours - 1.0).abs() < 1e-9, "{c}");
        assert!((c["energy_mwh"].as_f64().unwrap() / (hours * 700.0e-6) - 1.0).abs() < 1e-9);
        assert!((c["total"].as_f64().unwrap() / (hours * 12.29) - 1.0).abs() < 1e-9);
        assert_eq!(c["price_is_example"], true);
        assert!(c["price_source"].as_str().unwrap().starts_with("example, not a quote: AWS"));
    }
    // The user's price replaces the example; the table has the columns and says what they rest on.
    args.extend(["--price-per-device-hour", "2"]);
    let mine = json(&args);
    assert_eq!(mine["results"][0]["cost"]["price_per_device_hour"], 2.0);
    assert_eq!(mine["results"][0]["cost"]["price_is_example"], false);
    let table = stdout(&base);
    assert!(table.contains("device-hours") && table.contains("(example price)"), "{table}");
    assert!(table.contains("cost of the whole run: energy at 700 W per device"), "{table}");
    let mut csv = base.to_vec();
    csv.extend(["--format", "csv"]);
    assert!(stdout(&csv).lines().next().unwrap().ends_with("gpu_hours,energy_mwh,price_per_device_hour,cost_total"));
    // Without a budget the rows have no cost (the contract's keys only).
    let mut plain = base[..base.len() - 2].to_vec();
    plain.extend(["--format", "json"]);
    assert!(json(&plain)["results"][0].get("cost").is_none());
}
