//! The way back on real files: every single-file launch of the corpus (`tests/data/real/`) that
//! fmperf evaluates is given another layout on the same devices, rewritten in place, and read
//! again: it must read, with the new layout, and only lines that carry the layout may change.

use fmperf_core::extended::{Layout, Recompute};
use fmperf_launch::emit::{Input, Target, emit};
use fmperf_launch::{LaunchScenario, Overrides, detect, estimate, hardware, parse_as_with};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/real");

/// Words of the keys that carry a layout, in every target (a changed line must hold one).
const LAYOUT_WORDS: &[&str] = &[
    "parallel",
    "micro",
    "batch",
    "virtual",
    "recompute",
    "checkpoint",
    "optimizer",
    "optim",
    "fsdp",
    "zero",
    "ZERO",
    "mode",
    "_degree",
    "remat",
    "TP",
    // A script's variable for a model-parallel degree (`TENSOR_MP_SIZE=8`).
    "MP_SIZE",
    "PP",
    "CP",
    "EP",
    "MBS",
    "GBS",
    "BS",
    "BATCH",
    "ddp",
    "selective_ac_option",
    "accumulation",
    "gradient_checkpointing",
];

/// Another layout on the same devices: half the tensor-parallel degree (twice the data-parallel),
/// else twice (when the heads allow), else half the pipeline, else the other recomputation.
fn other(sc: &LaunchScenario) -> (Layout, Recompute) {
    let y = sc.layout;
    let heads = sc.workload.heads;
    let flip = if sc.options.recompute == Recompute::Full { Recompute::None } else { Recompute::Full };
    let with = |tp: u64, pp: u64, dp: u64| {
        let mut l = Layout::placed(tp, y.cp, pp, dp, y.mbs, y.global_batch, 1).with_experts(y.ep, y.etp);
        if sc.workload.moe.is_some() && y.etp == y.tp {
            l = l.with_experts(y.ep, tp);
        }
        l
    };
    if y.tp >= 2 && y.global_batch.is_multiple_of(y.mbs * y.dp * 2) {
        (with(y.tp / 2, y.pp, y.dp * 2), sc.options.recompute)
    } else if y.dp.is_multiple_of(2) && heads.is_multiple_of(y.tp * 2) && y.tp < 8 {
        (with(y.tp * 2, y.pp, y.dp / 2), sc.options.recompute)
    } else if y.pp.is_multiple_of(2) && y.global_batch.is_multiple_of(y.mbs * y.dp * 2) {
        (with(y.tp, y.pp / 2, y.dp * 2), sc.options.recompute)
    } else {
        (y, flip)
    }
}

#[test]
fn real_launches_rewritten_in_place_read_back() {
    let Ok(manifest) = std::fs::read_to_string(format!("{DIR}/manifest.json")) else {
        return;
    };
    let entries: Vec<Value> = serde_json::from_str(&manifest).expect("manifest.json is JSON");
    let (mut tried, mut ok, mut refused) = (0, 0, 0);
    let mut failures = Vec::new();
    for e in &entries {
        let files: Vec<&str> =
            e["files"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let [file] = files.as_slice() else { continue };
        let Ok(text) = std::fs::read_to_string(format!("{DIR}/{file}")) else { continue };
        let args: Vec<String> = e["args"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
            .unwrap_or_default();
        let Ok(format) = detect(&text, Some(file)) else { continue };
        if Target::of_format(format).is_none() {
            continue;
        }
        let Ok(l) = parse_as_with(format, &text, &args) else { continue };
        let system = Some("nvidia_h100_sxm5_80gb".to_string());
        let plain = Overrides { system: system.clone(), ..Overrides::default() };
        let gpus = Overrides { gpus: e["gpus"].as_u64(), ..plain.clone() };
        let (sc, o) = match LaunchScenario::from_launch(&l, &plain) {
            Ok(sc) => (sc, plain),
            Err(_) => match LaunchScenario::from_launch(&l, &gpus) {
                Ok(sc) => (sc, gpus),
                Err(_) => continue,
            },
        };
        let target = Target::of_format(format).expect("checked above");
        // The other layout, else (refused: a Trainer launch has no tensor parallelism) data
        // parallelism with twice the micro-batch and the other recomputation.
        let y = sc.layout;
        let flip = if sc.options.recompute == Recompute::Full { Recompute::None } else { Recompute::Full };
        let mbs = if y.global_batch.is_multiple_of(2 * y.mbs * y.dp) { 2 * y.mbs } else { y.mbs };
        let dp_only = (Layout::placed(y.tp, y.cp, y.pp, y.dp, mbs, y.global_batch, 1).with_experts(y.ep, y.etp), flip);
        let mut emitted = None;
        for (layout, recompute) in [other(&sc), dp_only] {
            let options = fmperf_core::extended::ExtendedOptions { recompute, ..sc.options };
            let want = LaunchScenario { layout, options, ..sc.clone() };
            let Ok((id, hw, _)) =
                hardware("nvidia_h100_sxm5_80gb", options.hardware.precision, options.hardware.measured_ceiling)
            else {
                continue;
            };
            if estimate(&want, &id, &hw).is_err() {
                continue;
            }
            let input = Some(Input { text: &text, launch: &l, name: Some(file) });
            match emit(target, input, &sc, &layout, &options) {
                Ok(out) => {
                    eprintln!("{file}: {} {:?} → {:?} {:?}", format.as_str(), sc.layout, layout, recompute);
                    emitted = Some((out, want));
                    break;
                }
                Err(err) if err.is_at("layout") => {
                    eprintln!("  {file}: refused: {err}");
                    refused += 1;
                }
                Err(err) => {
                    failures.push(format!("{file}: not written: {err}"));
                    break;
                }
            }
        }
        let Some((out, want)) = emitted else { continue };
        tried += 1;
        let back = parse_as_with(format, &out.text, &args).and_then(|b| LaunchScenario::from_launch(&b, &o));
        let back = match back {
            Ok(b) => b,
            Err(err) => {
                failures.push(format!("{file}: written, not read back: {err}\n{:?}", out.notes));
                continue;
            }
        };
        let facts = |s: &LaunchScenario| {
            let y = s.layout;
            (y.tp, y.pp, y.cp, y.dp, y.mbs, y.global_batch, y.ep, y.etp, s.options.interleave, s.options.recompute)
        };
        // A recomputation the launcher's own flags cannot say is left as written, with a note.
        let mut want = want;
        if out.notes.iter().any(|n| n.starts_with("recompute") && n.contains("not written")) {
            want.options.recompute = sc.options.recompute;
        }
        if facts(&back) != facts(&want) {
            failures.push(format!("{file}: read back {:?}, wanted {:?}\n{:?}", facts(&back), facts(&want), out.notes));
            continue;
        }
        let kept = text.lines().filter(|l| !out.text.lines().any(|m| m == *l)).collect::<Vec<_>>();
        if let Some(bad) = kept.iter().find(|l| !l.trim().is_empty() && !LAYOUT_WORDS.iter().any(|w| l.contains(w))) {
            failures.push(format!("{file}: a line without a layout key changed: {bad:?}"));
            continue;
        }
        ok += 1;
    }
    eprintln!(
        "emit in place on the real corpus: {ok} of {tried} read back with the new layout ({refused} layouts refused)"
    );
    for f in &failures {
        eprintln!("  {f}");
    }
    assert!(failures.is_empty(), "{} of {tried} failed", failures.len());
}
