//! The `fmperf sweep` contract, run through the built binary: shards concatenate to the whole
//! sweep (CSV and JSON Lines), bad axes and flags exit 2 naming them, presets run, files work;
//! `--threads N` gives byte-identical output in the same order as `--threads 1`.

mod support;
use support::{fmperf, stdout, usage_error};

use serde_json::Value;

/// Pins reference-mode outputs: `--mode reference` since extended mode became the default (issue 16 §5).
const SWEEP: &[&str] = &[
    "sweep",
    "--mode",
    "reference",
    "--model",
    "vit_era5",
    "--system",
    "B200",
    "--axis",
    "nvlink=8,64",
    "--axis",
    "gpus=16..512",
];

fn with(extra: &[&str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = SWEEP.to_vec();
    for e in extra {
        v.push(Box::leak(e.to_string().into_boxed_str()));
    }
    v
}

#[test]
fn shards_concatenate_to_the_whole_output() {
    for format in ["csv", "json"] {
        let whole = stdout(&with(&["--format", format]));
        for n in [2, 3, 5] {
            let parts: String =
                (0..n).map(|i| stdout(&with(&["--format", format, "--shard", &format!("{i}/{n}")]))).collect();
            assert_eq!(parts, whole, "{format}, {n} shards");
        }
        let lines = whole.lines().count();
        assert_eq!(lines, if format == "csv" { 13 } else { 12 }, "{format}");
    }
    // Shard 0 carries the header, the others do not.
    let first = stdout(&with(&["--format", "csv", "--shard", "0/2"]));
    let second = stdout(&with(&["--format", "csv", "--shard", "1/2"]));
    // The axis was given as `nvlink=…`, the old name of `domain` (issue 11 §5).
    assert!(first.starts_with("index,axis domain [devices],axis gpus [devices],model,"));
    assert!(second.starts_with("6,"), "{second}");
}

#[test]
fn json_lines_hold_the_best_configuration_or_the_reason() {
    let text = stdout(&with(&["--format", "json"]));
    let points: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(points[0]["axes"]["gpus"], 16);
    assert_eq!(points[0]["status"], "out_of_memory");
    assert!(points[0]["reason"].as_str().unwrap().contains("nothing fits in memory"));
    let ok = &points[5];
    assert_eq!(ok["status"], "ok");
    let best = &ok["best"];
    let days = best["days"].as_f64().unwrap();
    let thr = best["throughput"].as_f64().unwrap();
    assert_eq!(days, 2.8e7 / thr / 86400.0);
    let parts: f64 = ["comp", "mem", "tp_comm", "dp_comm", "pp_comm", "bubble"]
        .iter()
        .map(|k| best["time_s"][k].as_f64().unwrap())
        .sum();
    // The breakdown adds up to the iteration time up to the overlap the model applies.
    assert!(parts > 0.0 && best["iteration_s"].as_f64().unwrap() > 0.0);
    assert!(ok["per_strategy"]["2d"]["candidates"].as_u64().unwrap() > 0);
}

#[test]
fn bad_axes_and_flags_exit_2_naming_them() {
    for (axis, named) in [
        ("gpus=0", "axis.gpus"),
        ("gpus=64..8", "axis.gpus"),
        ("hbm_capacity=lots", "axis.hbm_capacity"),
        ("precision=fp7", "axis.precision"),
        ("warp=9", "warp"),
        ("gpus", "axis"),
    ] {
        let err = usage_error(&["sweep", "--model", "gpt3_1T", "--system", "B200", "--axis", axis]);
        assert!(err.contains(named) && err.contains("--axis"), "{axis}: {err}");
    }
    let base = ["sweep", "--model", "gpt3_1T", "--system", "B200"];
    let err = usage_error(&[&base[..], &["--axis", "gpus=8", "--axis", "gpus=16"]].concat());
    assert!(err.contains("axis.gpus") && err.contains("twice"), "{err}");
    let err = usage_error(&[&base[..], &["--shard", "2/2"]].concat());
    assert!(err.contains("shard"), "{err}");
    let err = usage_error(&[&base[..], &["--fix", "zz=1"]].concat());
    assert!(err.contains("--fix"), "{err}");
    let err = usage_error(&["sweep", "--model", "gpt3_1T", "--system", "nosuchsystem"]);
    assert!(err.contains("nosuchsystem"), "{err}");
    let err = usage_error(&["sweep", "--preset", "strong-scaling", "--format", "csv"]);
    assert!(err.contains("--panel"), "{err}");
    let err = usage_error(&["sweep", "--preset", "strong-scaling", "--model", "gpt3"]);
    assert!(err.contains("--model"), "{err}");
    let err = usage_error(&["sweep", "--preset", "nope"]);
    assert!(err.contains("strong-scaling"), "{err}");
}

#[test]
fn presets_run_and_compare() {
    let text = stdout(&["sweep", "--preset", "accelerators", "--panel", "sparsity"]);
    assert!(text.contains("mode: extended mode"), "{text}");
    assert!(text.contains("published") && text.contains("GPT-2 XL: speed-up at 90 %"), "{text}");
    // The same panel in reference mode: the sparse points say why they have no value.
    let text = stdout(&["sweep", "--preset", "accelerators", "--panel", "sparsity", "--mode", "reference"]);
    assert!(text.contains("unsupported") && text.contains("not in the reference model"), "{text}");
    let list = stdout(&["sweep", "--list"]);
    for id in ["strong-scaling", "hardware", "design-space", "accelerators"] {
        assert!(list.contains(id), "{list}");
    }
    let json = stdout(&["sweep", "--preset", "design-space", "--panel", "gpt3_1T-1d", "--format", "json"]);
    let first: Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["preset"], "design-space");
    assert_eq!(first["axes"]["pp"], 1);
}

#[test]
fn a_reference_system_file_sweeps_like_its_name() {
    let dir = std::env::temp_dir().join(format!("fmperf-cli-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config-B200.json");
    std::fs::write(
        &file,
        r#"{"matrix_flops_fp16": 2500, "vector_flops_fp16": 339, "vector_flops_fp32": 169, "hbm_bandwidth": 8000,
            "hbm_capacity": 192, "nvlink_bandwidth": 900, "nvlink_eff": 0.7, "nvlink_latency": 2.5e-6,
            "ib_bandwidth": 100, "ib_eff": 0.7, "ib_latency": 5e-6, "nvlink_size": 4, "nic_factor": 1,
            "empirical": false, "summa_nb": 4, "element_size": 2e-9, "mask_element_size": 1e-9, "flops_units": 1e-12}"#,
    )
    .unwrap();
    let by_name = stdout(&with(&["--format", "csv"]));
    let mut args: Vec<&str> = SWEEP.to_vec();
    // The system (after `--mode reference`, which shifted the indices by two).
    args[6] = file.to_str().unwrap();
    args.extend(["--format", "csv"]);
    let by_file = stdout(&args);
    // Same numbers; only the system column differs (the file's stem instead of the catalog id).
    let strip = |s: &str| s.replace("config-B200", "ref-B200");
    assert_eq!(strip(&by_file), by_name);
}

/// The output with `--threads 1` and with each of `threads`, asserted equal; returns the first.
fn same_for_every_thread_count(args: &[&str], threads: &[&str]) -> String {
    let one = stdout(&[args, &["--threads", "1"]].concat());
    for t in threads {
        let many = stdout(&[args, &["--threads", t]].concat());
        assert!(many == one, "{args:?} with --threads {t} differs from --threads 1:\n{many}\n---\n{one}");
    }
    one
}

/// For `--threads`: a sweep of 2 × 8 × 3 = 48 points of very different cost (8 to 1024 devices), some without a
/// configuration.
const WIDE: &[&str] = &[
    "sweep",
    "--model",
    "gpt3",
    "--system",
    "H200",
    "--axis",
    "nvlink=4,64",
    "--axis",
    "gpus=8..1024",
    "--axis",
    "strategy=1d,2d,2d-seqp",
];

#[test]
fn threads_give_byte_identical_output_in_every_format_and_mode() {
    for mode in ["reference", "extended"] {
        for format in ["csv", "json", "table"] {
            let args = [WIDE, &["--mode", mode, "--format", format]].concat();
            let text = same_for_every_thread_count(&args, &["2", "7"]);
            let lines = text.lines().count();
            match format {
                "csv" => assert_eq!(lines, 49, "{mode}: header + 48 points"),
                "json" => assert_eq!(lines, 48, "{mode}"),
                _ => assert!(lines > 48, "{mode}: {text}"),
            }
        }
    }
    // Points come out in sweep order: the JSON Lines' indices count up from 0.
    let json = stdout(&[WIDE, &["--format", "json", "--threads", "4"]].concat());
    for (i, line) in json.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["index"], i, "{line}");
    }
}

#[test]
fn shards_on_threads_concatenate_to_the_whole_sweep() {
    let whole = stdout(&[WIDE, &["--format", "csv", "--threads", "1"]].concat());
    let parts: String = (0..4)
        .map(|i| stdout(&[WIDE, &["--format", "csv", "--shard", &format!("{i}/4"), "--threads", "3"]].concat()))
        .collect();
    assert_eq!(parts, whole);
}

#[test]
fn presets_on_threads_are_byte_identical() {
    // Design-space maps: the points of a panel differ only in restrictions and share one pass over
    // the candidates when run together; split over threads they must give the same numbers.
    same_for_every_thread_count(&["sweep", "--preset", "design-space", "--format", "json"], &["5"]);
    // Table form holds the comparisons with the published figures, computed from the merged result.
    let table = same_for_every_thread_count(&["sweep", "--preset", "strong-scaling", "--panel", "vit_era5"], &["3"]);
    assert!(table.contains("published"), "{table}");
    same_for_every_thread_count(
        &["sweep", "--preset", "accelerators", "--panel", "sparsity", "--format", "csv"],
        &["2", "4"],
    );
}

#[test]
fn the_default_thread_count_gives_the_same_output() {
    let default = stdout(&[WIDE, &["--format", "csv"]].concat());
    let one = stdout(&[WIDE, &["--format", "csv", "--threads", "1"]].concat());
    assert_eq!(default, one);
}

#[test]
fn a_bad_thread_count_exits_2_naming_the_flag() {
    for bad in ["0", "x", "-2", "2000"] {
        let out = fmperf(&[WIDE, &["--threads", bad]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--threads") && err.contains(bad), "{err}");
        assert!(out.stdout.is_empty());
    }
}

/// Issue 30: a large sweep says its point count and a time estimate on stderr before it starts
/// (stdout stays the results); a small one says nothing.
#[test]
fn a_large_sweep_says_its_size_and_an_estimate_first() {
    let values: Vec<String> = (1..=500).map(|i| format!("{}", 100 + i)).collect();
    let axis = format!("scale_up={}", values.join(","));
    let args = ["sweep", "--mode", "reference", "--model", "vit_era5", "--system", "B200", "--axis", "nvlink=8,64"];
    let out = fmperf(args.iter().copied().chain(["--axis", axis.as_str(), "--format", "csv", "--threads", "2"]));
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("fmperf: sweep: 1,000 points on 2 threads, about ")
            && err.contains(" s per point, timed on the first "),
        "{err}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1 + 1000);
    let small = fmperf(args.iter().copied().chain(["--axis", "scale_up=100,200", "--format", "csv"]));
    assert_eq!(small.status.code(), Some(0));
    assert!(small.stderr.is_empty(), "{}", String::from_utf8_lossy(&small.stderr));
}

#[test]
fn a_price_adds_the_whole_runs_cost_to_the_table_csv_and_json() {
    let base = [
        "sweep",
        "--model",
        "llama3-8b",
        "--system",
        "nvidia_h100_sxm5_80gb",
        "--axis",
        "gpus=64,128",
        "--global-batch",
        "512",
        "--threads",
        "2",
        "--price-per-device-hour",
        "2.5",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { [&base[..], extra].concat() };
    let csv = support::stdout(with(&["--format", "csv"]));
    let mut lines = csv.lines();
    // The cost columns come last (earlier cells may be quoted text with commas).
    let header: Vec<&str> = lines.next().unwrap().rsplitn(5, ',').take(4).collect();
    assert_eq!(header, ["cost_total", "price_per_device_hour", "energy_mwh", "gpu_hours"]);
    let (total, price, energy, hours) = (0, 1, 2, 3);
    let rows: Vec<Vec<String>> = lines.map(|l| l.rsplitn(5, ',').take(4).map(str::to_string).collect()).collect();
    assert_eq!(rows.len(), 2);
    let json: Vec<serde_json::Value> =
        support::stdout(with(&["--format", "json"])).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (row, point) in rows.iter().zip(&json) {
        let h: f64 = row[hours].parse().unwrap();
        // The same device-hours as the JSON's metric, at 700 W per H100 and 2.5 per device-hour.
        assert!((h / point["best"]["gpu_hours"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{row:?} {point}");
        assert!((row[energy].parse::<f64>().unwrap() / (h * 700.0 * 1e-6) - 1.0).abs() < 1e-12);
        assert_eq!(row[price], "2.5");
        assert!((row[total].parse::<f64>().unwrap() / (h * 2.5) - 1.0).abs() < 1e-12);
        assert_eq!(point["cost"]["price_source"], "your price");
        assert!((point["cost"]["total"].as_f64().unwrap() / (h * 2.5) - 1.0).abs() < 1e-12);
    }
    let table = support::stdout(base);
    assert!(table.contains("device-hours") && table.contains("energy [MWh]"), "{table}");
    assert!(table.contains("cost of the whole run: energy at 700 W per device"), "{table}");
    // Without a price the CSV is as before (no cost columns).
    let plain = support::stdout(&base[..base.len() - 2].iter().chain(&["--format", "csv"]).collect::<Vec<_>>());
    assert!(!plain.lines().next().unwrap().contains("cost_total"));
}
