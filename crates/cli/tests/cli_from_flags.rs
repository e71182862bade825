//! Every flag `fmperf search` and `fmperf estimate` accept is, on the `--from FILE` route, applied
//! over the file or refused with its rule — never accepted and ignored (issues 32/33). The route
//! tables ([`from_flags::SEARCH_FROM`], [`from_flags::ESTIMATE_FROM`]) must list exactly the
//! parsers' flags, each flag they apply must be read by the route ([`Args::unread`]), and each
//! they refuse must fail naming the flag.

use fmperf_cli::args::Args;
use fmperf_cli::cmd::from_flags::{self, FromUse};
use fmperf_cli::cmd::{CmdError, estimate, search};

/// A gpt-oss-style Megatron-LM launch with 4 experts (MoE), 8 devices, global batch 128.
const MOE_SCRIPT: &str = "../launch/tests/data/real/05-gptoss_02_train.sh";
const SYSTEM: &str = "nvidia_b200_hgx";
/// A dense Megatron-LM launch (Llama 3 8B).
const DENSE_SCRIPT: &str = "../launch/tests/data/real/02-train_llama3_8b_h100_fp8.sh";

/// The value flags of `fmperf search`'s parser.
fn search_value_flags() -> Vec<&'static str> {
    search::VALUE_FLAGS.iter().chain(&fmperf_cli::run_cost::FLAGS).copied().collect()
}

/// Every flag of `fmperf search`'s parser.
fn search_flags() -> Vec<&'static str> {
    search_value_flags().into_iter().chain(search::BOOL_FLAGS).collect()
}

fn estimate_flags() -> Vec<&'static str> {
    estimate::VALUE_FLAGS.iter().chain(&fmperf_cli::run_cost::FLAGS).copied().collect()
}

fn parse(words: &[&str], value_flags: &[&str], bool_flags: &[&str]) -> Args {
    Args::parse(words.iter().map(|w| w.to_string()).collect(), value_flags, bool_flags).expect("flags parse")
}

/// `fmperf search` with `words`: the flags left unread and the outcome (output or error).
fn search_with(words: &[&str]) -> (Vec<String>, Result<String, String>) {
    let args = parse(words, &search_value_flags(), &search::BOOL_FLAGS);
    let mut out = Vec::new();
    let r = search::run_args(&args, &mut out);
    let unread = args.unread().iter().map(|s| s.to_string()).collect();
    (unread, outcome(r, out))
}

fn outcome(r: Result<(), CmdError>, out: Vec<u8>) -> Result<String, String> {
    match r {
        Ok(()) => Ok(String::from_utf8(out).unwrap()),
        Err(CmdError::Usage(m)) => Err(m),
        Err(CmdError::Io(e)) => Err(e.to_string()),
    }
}

fn sorted(mut v: Vec<&'static str>) -> Vec<&'static str> {
    v.sort_unstable();
    v
}

#[test]
fn each_route_table_lists_exactly_its_parsers_flags() {
    let table = |t: &[(&'static str, FromUse)]| sorted(t.iter().map(|(f, _)| *f).collect());
    assert_eq!(table(from_flags::SEARCH_FROM), sorted(search_flags()), "search --from's table vs search's parser");
    assert_eq!(table(from_flags::ESTIMATE_FROM), sorted(estimate_flags()), "estimate --from's table vs its parser");
}

#[test]
fn search_from_reads_every_flag_it_applies() {
    // Every applied flag at once, with values that agree (`--recompute full` as --ext says; a shard
    // group of all devices; one strategy, cp 1): the search runs and no flag is left unread.
    let words = [
        "--from",
        MOE_SCRIPT,
        "--system",
        SYSTEM,
        "--gpus",
        "8",
        "--global-batch",
        "128",
        "--seq-len",
        "4096",
        "--ext",
        "recompute=full",
        "--moe",
        "load=forced",
        "--mode",
        "extended",
        "--strategy",
        "1d",
        "--top",
        "2",
        "--threads",
        "2",
        "--recompute",
        "full",
        "--sharding",
        "search",
        "--shard-group",
        "all",
        "--interleave",
        "1",
        "--cp",
        "1",
        "--mbs",
        "2",
        "--format",
        "json",
        "--emit",
        "megatron",
    ];
    let (unread, out) = search_with(&words);
    let out = out.expect("the search runs");
    assert!(unread.is_empty(), "accepted by search --from and read by no one: {unread:?}");
    let applied: Vec<&str> =
        from_flags::SEARCH_FROM.iter().filter(|(_, u)| *u == FromUse::Applied).map(|(f, _)| *f).collect();
    // `--model` and `--calibration` name files (checked alone below); the rest were all given.
    for flag in applied.iter().filter(|f| !["model", "calibration"].contains(f)) {
        assert!(words.contains(&format!("--{flag}").as_str()), "--{flag} is applied but not exercised here");
    }
    // The JSON says the flags given over the file: --moe's text, the execution flags.
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["moe"], "load=forced");
    assert_eq!(j["execution"], "--recompute full --sharding search --shard-group all --interleave 1 --cp 1 --mbs 2");
    // Every listed configuration has the micro-batch --mbs fixed.
    assert!(j["results"].as_array().unwrap().iter().all(|r| r["config"]["mbs"] == 2), "{}", j["results"]);
    // The two file flags are read (here: refused as files that do not exist, naming the flag).
    for flag in ["--model", "--calibration"] {
        let (unread, out) = search_with(&["--from", MOE_SCRIPT, "--system", SYSTEM, flag, "no-such-file.json"]);
        assert!(!unread.iter().any(|u| format!("--{u}") == flag), "{flag} unread");
        assert!(out.unwrap_err().contains(flag), "{flag}");
    }
}

#[test]
fn search_from_refuses_what_it_cannot_apply_naming_the_flag() {
    for (flag, rule) in from_flags::SEARCH_FROM {
        let FromUse::Refused(why) = rule else { continue };
        let value: &[&str] = if search::BOOL_FLAGS.contains(flag) { &[] } else { &["4"] };
        let name = format!("--{flag}");
        let mut words = vec!["--from", MOE_SCRIPT, "--system", SYSTEM, name.as_str()];
        words.extend(value);
        let e = search_with(&words).1.unwrap_err();
        assert!(e.starts_with(&format!("--{flag} with `search --from`: ")) && e.contains(why), "{e}");
    }
    // `--mode extended` is what runs; `--mode reference` is refused, saying why.
    let e = search_with(&["--from", MOE_SCRIPT, "--system", SYSTEM, "--mode", "reference"]).1.unwrap_err();
    assert!(e.contains("--mode reference") && e.contains("extended mode only"), "{e}");
    // An execution flag that cannot apply: context parallelism with strategy 1d (the file's).
    let e = search_with(&["--from", MOE_SCRIPT, "--system", SYSTEM, "--cp", "2"]).1.unwrap_err();
    assert!(e.contains("--cp 2") && e.contains("2d-seqp"), "{e}");
}

#[test]
fn search_from_applies_moe_over_the_files_switches() {
    // Issue 33's example: --moe was accepted and ignored (identical output). Forced (perfectly
    // balanced) routing prices the file's MoE layers differently from its aux-loss routing, so the
    // best row moves; the header names the flag; a dense file refuses --moe.
    let base = ["--from", MOE_SCRIPT, "--system", SYSTEM, "--top", "1", "--format", "csv"];
    let plain = search_with(&base).1.unwrap();
    let forced = search_with(&[&base[..], &["--moe", "load=forced"]].concat()).1.unwrap();
    assert_ne!(plain, forced, "--moe load=forced changed nothing");
    let table = search_with(&["--from", MOE_SCRIPT, "--system", SYSTEM, "--top", "1", "--moe", "ep=4"]).1.unwrap();
    assert!(table.lines().next().unwrap().contains("and --moe ep=4 over them"), "{table}");
    // --moe ep=4 fixes the searched expert degree (the search otherwise chooses it per candidate,
    // and its best here has ep 1): every row has ep 4.
    let json = |extra: &[&str]| -> serde_json::Value {
        let words = [&["--from", MOE_SCRIPT, "--system", SYSTEM, "--top", "5", "--format", "json"][..], extra].concat();
        serde_json::from_str(&search_with(&words).1.unwrap()).unwrap()
    };
    let eps = |j: &serde_json::Value| -> Vec<u64> {
        j["results"].as_array().unwrap().iter().map(|r| r["config"]["ep"].as_u64().unwrap()).collect()
    };
    assert_eq!(eps(&json(&["--moe", "ep=4"])), [4; 5]);
    assert_eq!(eps(&json(&[]))[0], 1);
    // The file's own layout keeps its expert degree (ep 1 in the script).
    assert_eq!(json(&["--moe", "ep=4"])["own"]["config"]["ep"], 1);
    // A dense launch refuses --moe, naming the flag.
    let e = search_with(&["--from", DENSE_SCRIPT, "--system", SYSTEM, "--moe", "load=forced"]).1.unwrap_err();
    assert!(e.starts_with("--moe load=forced: ") && e.contains("dense model"), "{e}");
}

#[test]
fn estimate_from_reads_every_flag_it_applies() {
    // estimate --from applies all its flags; each is read (run_cost's with --tokens and a price).
    let args = parse(
        &[
            "--from",
            MOE_SCRIPT,
            "--system",
            SYSTEM,
            "--gpus",
            "8",
            "--global-batch",
            "128",
            "--seq-len",
            "4096",
            "--ext",
            "recompute=full",
            "--format",
            "json",
            "--tokens",
            "1e9",
            "--price-per-device-hour",
            "2",
        ],
        &estimate_flags(),
        &[],
    );
    let r = estimate::run_args(&args, &mut Vec::new());
    assert!(r.is_ok(), "{r:?}");
    assert!(args.unread().is_empty(), "{:?}", args.unread());
    // --samples (the other budget), --model and --calibration: read, here refused as given.
    for (flag, value) in [("--samples", "1000"), ("--model", "no-such-file.json"), ("--calibration", "no-such.json")] {
        let args = parse(&["--from", MOE_SCRIPT, "--system", SYSTEM, flag, value], &estimate_flags(), &[]);
        let _ = estimate::run_args(&args, &mut Vec::new());
        assert!(args.unread().is_empty(), "{flag}: {:?}", args.unread());
    }
}
