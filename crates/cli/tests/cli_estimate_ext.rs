//! `fmperf estimate --from FILE --ext key=value,…` (issue 32): extended mode's switches set over
//! the ones the file implied, read and refused exactly as `fmperf search --ext` reads them, each
//! value noted as from `--ext`; `search --from` applies them too.

mod support;
use support::{fmperf, json, stdout, usage_error};

use std::path::PathBuf;

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/launch").join(name);
    p.to_str().unwrap().to_string()
}

/// `fmperf estimate --from` the 70B Megatron script (selective recomputation, BF16) as JSON, with
/// `extra` flags.
fn estimate(extra: &[&str]) -> serde_json::Value {
    let f = example("megatron-llama3-70b.sh");
    let mut a = vec!["estimate", "--from", f.as_str(), "--format", "json"];
    a.extend(extra);
    json(&a)
}

/// The notes of an estimate that say a value came from `--ext`.
fn from_ext(j: &serde_json::Value) -> Vec<String> {
    j["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.contains("--ext"))
        .map(String::from)
        .collect()
}

#[test]
fn an_override_changes_the_estimate_and_says_so() {
    let file = estimate(&[]);
    assert_eq!(file["config"]["recompute"], "selective");
    assert!(from_ext(&file).is_empty());
    // Full recomputation over the file's selective: the forward runs twice, so the step is longer
    // and the activations of all but each block's input are freed, so the memory is smaller.
    let full = estimate(&["--ext", "recompute=full"]);
    assert_eq!(full["config"]["recompute"], "full");
    let step = |j: &serde_json::Value| j["time_per_step_s"].as_f64().unwrap();
    let mem = |j: &serde_json::Value| j["memory"]["predicted_gb"].as_f64().unwrap();
    assert!(step(&full) > step(&file), "{} vs {}", step(&full), step(&file));
    assert!(mem(&full) < mem(&file), "{} vs {}", mem(&full), mem(&file));
    assert_eq!(from_ext(&full), ["recompute=full from --ext (the file's: selective)"]);
    // Everything else is the file's: the layout and the sharding.
    for k in ["tp", "pp", "dp", "vpp", "sharding", "precision"] {
        assert_eq!(full["config"][k], file["config"][k], "{k}");
    }
    // A value by hand: FP8 over the file's BF16 doubles the matrix peak MFU is counted against
    // (H100 SXM5 dense 989.4 → 1,978.9 TFLOP/s, NVIDIA's datasheet, the catalog's figures), read
    // back from MFU = model TFLOP per sample × samples/s / (devices × peak).
    let fp8 = estimate(&["--ext", "precision=fp8"]);
    assert_eq!(fp8["config"]["precision"], "fp8");
    let peak = |j: &serde_json::Value| {
        j["model_tflop_per_sample"].as_f64().unwrap() * j["samples_per_s"].as_f64().unwrap()
            / (64.0 * j["mfu"].as_f64().unwrap())
    };
    assert!((peak(&file) - 989.4).abs() < 0.5, "{}", peak(&file));
    assert!((peak(&fp8) / peak(&file) - 2.0).abs() < 1e-3, "{} / {}", peak(&fp8), peak(&file));
    assert!(step(&fp8) < step(&file));
    // The file's own value again: the same estimate, noted as the file's.
    let same = estimate(&["--ext", "recompute=selective"]);
    assert_eq!(same["time_per_step_s"], file["time_per_step_s"]);
    assert_eq!(from_ext(&same), ["recompute=selective from --ext (as the file implied)"]);
    // The table shows the note under "assumed".
    let f = example("megatron-llama3-70b.sh");
    let text = stdout(["estimate", "--from", f.as_str(), "--ext", "recompute=full"]);
    assert!(
        text.contains("recompute full") && text.contains("recompute=full from --ext (the file's: selective)"),
        "{text}"
    );
}

#[test]
fn bad_switches_are_refused_as_search_refuses_them() {
    let f = example("megatron-llama3-70b.sh");
    let search = [
        "search",
        "--model",
        "llama3-70b",
        "--system",
        "nvidia_h100_sxm5_80gb",
        "--gpus",
        "64",
        "--global-batch",
        "128",
    ];
    for (ext, want) in [
        // An unknown key: the flag named, the nearest switch suggested or every switch listed.
        ("recompte=full", "did you mean `recompute`?"),
        ("foo=1", "switches: precision, matmul_efficiency,"),
        // A bad value: the switch named with the values it takes.
        ("recompute=most", "ext.recompute = most: must be one of none, selective, full, op"),
        ("recompute", "must be written key=value"),
        ("recompute=full,recompute=none", "given twice (full, then none)"),
    ] {
        let e = usage_error(["estimate", "--from", f.as_str(), "--ext", ext]);
        assert!(e.starts_with("fmperf: --ext: ") && e.contains(want), "{ext}: {e}");
        let mut s = search.to_vec();
        s.extend(["--ext", ext]);
        assert_eq!(e, usage_error(&s), "{ext}: the same message as search's");
        // Checked before the file is read: the flag's error, not the file's.
        assert_eq!(e, usage_error(["estimate", "--from", "/nonexistent.sh", "--ext", ext]), "{ext}");
    }
}

#[test]
fn search_from_a_file_applies_them_too() {
    let f = example("torchtitan-llama3-8b.toml");
    let base = ["search", "--from", f.as_str(), "--top", "1", "--format", "json"];
    let plain = json(base);
    let mut a = base.to_vec();
    a.extend(["--ext", "recompute=full"]);
    let full = json(&a);
    assert_eq!(full["ext"], "recompute=full");
    assert!(plain["ext"].is_null());
    assert_eq!(full["results"][0]["execution"]["recompute"], "full");
    assert_eq!(full["own"]["config"]["recompute"], "full");
    assert_ne!(plain["own"]["config"]["recompute"], "full");
}

#[test]
fn help_shows_the_flag_and_the_switches() {
    let out = fmperf(["estimate", "--help"]);
    let h = String::from_utf8_lossy(&out.stdout);
    assert!(h.contains("[--ext KEY=VALUE,…]") && h.contains("SWITCHES (key = default"), "{h}");
    assert!(h.contains("  recompute = selective [") && h.contains("  op_saves_attention = on ["), "{h}");
}

/// `measured_ceiling=off` prices the matrix units at their datasheet peak rather than at their
/// measured ceiling, for a launch file as for a hand-built scenario: `estimate --from` and
/// `search --from` (whose own layout is the file's) both get faster, the peak MFU is counted
/// against stays the datasheet's. (Before session 31 the launch path priced the measured ceiling
/// whatever the switch said.)
#[test]
fn measured_ceiling_off_is_priced_for_a_launch_file() {
    let on = estimate(&[]);
    let off = estimate(&["--ext", "measured_ceiling=off"]);
    let rate = |j: &serde_json::Value| j["samples_per_s"].as_f64().unwrap();
    assert!(rate(&off) > rate(&on) * 1.05, "{} vs {}", rate(&off), rate(&on));
    assert_eq!(off["system"]["peak_tflops"], on["system"]["peak_tflops"]);
    let f = example("megatron-llama3-70b.sh");
    let search = |extra: &[&str]| {
        let mut a = vec!["search", "--from", f.as_str(), "--format", "json"];
        a.extend(extra);
        json(&a)
    };
    let own = |j: &serde_json::Value| j["own"]["throughput_samples_per_s"].as_f64().unwrap();
    let (s_on, s_off) = (search(&[]), search(&["--ext", "measured_ceiling=off"]));
    assert!(own(&s_off) > own(&s_on) * 1.05, "{} vs {}", own(&s_off), own(&s_on));
}
