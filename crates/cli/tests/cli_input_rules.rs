//! Issue 30: input is never silently bent. A key given twice in any `key=value` list (`--ext`,
//! `--moe`, a system spec, `--fix`) or by a flag and a switch with different values is an error
//! naming both; a flag that cannot apply is an error saying why; a failed write exits 1 with a
//! message, help included; messages say the rule that applies.

mod support;

use std::process::{Command, Stdio};

use support::{fmperf, stdout, usage_error};

const SEARCH: &str = "search --model gpt3 --system H200 --gpus 64 --global-batch 512 --top 1 --threads 1";
const H100: &str = "nvidia_h100_sxm5_80gb";

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn a_switch_given_twice_differently_is_an_error_naming_both() {
    // Before: exit 0, the last one won (recompute=none).
    let err = usage_error(words(&format!("{SEARCH} --ext recompute=full,recompute=none")));
    assert_eq!(err.trim_end(), "fmperf: --ext: ext.recompute = none: given twice (full, then none); give it once");
    // The same value twice is accepted.
    stdout(words(&format!("{SEARCH} --ext recompute=full,recompute=full --format json")));
}

#[test]
fn a_flag_and_a_switch_of_the_same_choice_must_agree() {
    // Before: exit 0, the flag won (recompute=full) and the switch was ignored.
    let err = usage_error(words(&format!("{SEARCH} --recompute full --ext recompute=none")));
    assert!(err.contains("--recompute full") && err.contains("--ext recompute=none"), "{err}");
    // `search` (let the search choose) is not the switch's fixed value either.
    let err = usage_error(words(&format!("{SEARCH} --sharding search --ext sharding=zero3")));
    assert!(err.contains("--sharding search") && err.contains("--ext sharding=zero3"), "{err}");
    // Equal values are accepted.
    let doc = support::json(words(&format!("{SEARCH} --recompute full --ext recompute=full --format json")));
    assert_eq!(doc["results"][0]["execution"]["recompute"], "full");
}

#[test]
fn a_moe_key_given_twice_differently_is_an_error_naming_both() {
    // Before: exit 0 (ep=16 won, or, on a dense model, --moe was ignored altogether).
    let moe = "search --model mixtral-8x7b --system H200 --strategy 1d --gpus 8 --global-batch 8 --top 1";
    let err = usage_error(words(&format!("{moe} --moe ep=8,ep=16")));
    assert_eq!(err.trim_end(), "fmperf: --moe: moe.ep = 16: given twice (8, then 16); give it once");
}

#[test]
fn a_system_option_given_twice_differently_is_an_error_naming_both() {
    // Before: exit 0 with domain 16 (and a note about a hypothetical system).
    for mode in ["", " --mode reference"] {
        let out = fmperf(words(&format!(
            "search --model gpt3 --system {H100},domain=8,domain=16 --gpus 64 --global-batch 512{mode}"
        )));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mode}: {err}");
        assert!(err.contains("system.domain = 16: given twice (8, then 16); give it once"), "{mode}: {err}");
    }
    // An alias of the same key is the same key.
    let err = usage_error(words(&format!(
        "search --model gpt3 --system {H100},domain=8,nvlink=4 --gpus 64 --global-batch 512"
    )));
    assert!(err.contains("given twice (domain=8, then nvlink=4)"), "{err}");
}

#[test]
fn a_sweep_restriction_given_twice_or_also_swept_is_an_error() {
    let sweep = "sweep --model gpt3 --system H200 --gpus 64 --global-batch 512";
    // Before: exit 0 with tp=4 (last one wins).
    let err = usage_error(words(&format!("{sweep} --fix tp=8,tp=4")));
    assert_eq!(err.trim_end(), "fmperf: --fix: fix.tp = 4: given twice (8, then 4); give it once");
    // Before: exit 0, the axis silently replaced the restriction.
    let err = usage_error(words(&format!("{sweep} --fix tp=4 --axis tp=1,2")));
    assert!(err.contains("--fix") && err.contains("tp=1,2") && err.contains("not both"), "{err}");
}

#[test]
fn flags_that_cannot_apply_are_errors_saying_why() {
    // Before: exit 0, --moe ignored on a dense model.
    let err = usage_error(words(&format!("{SEARCH} --moe ep=8")));
    assert!(err.contains("--moe ep=8") && err.contains("dense"), "{err}");
    // Before: exit 0, the shard group ignored without sharding. (Under ZeRO-1/2 it applies since
    // issue 31: hierarchical ZeRO, optimizer states sharded within the group.)
    let err = usage_error(words(&format!("{SEARCH} --shard-group 8 --sharding zero0")));
    assert!(
        err.contains("--shard-group 8") && err.contains("--sharding zero0") && err.contains("shards nothing"),
        "{err}"
    );
    let err = usage_error(words(&format!("{SEARCH} --shard-group 8 --ext sharding=zero0")));
    assert!(err.contains("--shard-group 8") && err.contains("--ext sharding=zero0"), "{err}");
    stdout(words(&format!("{SEARCH} --shard-group 8 --sharding fsdp")));
    // A switch at its default value (ZeRO-1) fixes the stage: the shard group applies to it.
    let small = format!("search --model llama3-8b --system {H100} --gpus 64 --global-batch 512 --top 1 --threads 1");
    for stage in ["--sharding zero1", "--ext sharding=zero1", "--ext sharding=zero2"] {
        let doc = support::json(words(&format!("{small} --shard-group 8 {stage} --format json")));
        let e = &doc["results"][0]["execution"];
        assert!(e["sharding"].as_str().is_some_and(|s| stage.ends_with(s)), "{stage}: {e}");
        assert_eq!(e["shard_group"], 8, "{stage}: {e}");
    }
    let doc = support::json(words(&format!("{SEARCH} --ext sharding=zero1 --format json")));
    assert_eq!(doc["results"][0]["execution"]["sharding"], "zero1");
    // Before: exit 0 with a diagnosis of 1d that never named --cp.
    let err = usage_error(words(&format!("{SEARCH} --strategy 1d --cp 2")));
    assert!(err.starts_with("fmperf: --cp 2:") && err.contains("2d-seqp"), "{err}");
}

#[test]
fn messages_say_the_rule_that_applies() {
    // Before: "must be a positive integer" (the value is one; the rule broken is the maximum).
    let err = usage_error(["search", "--model", "gpt3", "--system", "H200", "--gpus", "18446744073709551616"]);
    assert_eq!(err.trim_end(), "fmperf: --gpus 18446744073709551616: must be a positive integer of at most 4294967296");
    let err = usage_error(words("search --model gpt3 --system H200 --gpus 64 --global-batch 4294967297"));
    assert!(err.contains("--global-batch 4294967297: must be a positive integer of at most 4294967296"), "{err}");
    // Before: "unknown name; known: …" suggesting the very id typed.
    let err = usage_error(words(&format!("search --model gpt3 --system {H100},domain=0 --gpus 64 --global-batch 512")));
    assert!(err.contains("domain = 0: must be a positive integer") && !err.contains("unknown name"), "{err}");
}

#[test]
fn the_domain_and_precision_are_given_once() {
    // Before: exit 0, --domain won over the spec's domain= (search and sweep alike).
    let err = usage_error(words(&format!(
        "search --model gpt3 --system {H100},domain=8 --domain 16 --gpus 64 --global-batch 512 --top 1"
    )));
    assert!(err.contains("--domain 16") && err.contains("domain=8"), "{err}");
    let sweep = format!("sweep --model gpt3 --system {H100},domain=8 --gpus 64 --global-batch 512 --axis tp=1,2");
    let err = usage_error(words(&format!("{sweep} --domain 16")));
    assert!(err.starts_with("fmperf: --domain: domain = 16:") && err.contains("says domain=8"), "{err}");
    let err = usage_error(words(&format!(
        "sweep --model gpt3 --system {H100},precision=bf16 --precision fp8 --gpus 64 --global-batch 512 --axis tp=1,2"
    )));
    assert!(err.contains("--precision: precision = fp8") && err.contains("says precision=bf16"), "{err}");
    // The same value twice is accepted.
    stdout(words(&format!("{sweep} --domain 8")));
    // Before: "must be a positive integer" for a count above the bound.
    let err = usage_error(words("sweep --model gpt3 --system H200 --gpus 18446744073709551616 --axis tp=1,2"));
    assert!(err.contains("must be a positive integer of at most 4294967296"), "{err}");
}

#[test]
fn help_names_its_command() {
    // Before: `help search` printed the general help.
    let h = stdout(["help", "search"]);
    assert!(h.starts_with("fmperf search"), "{h}");
    assert_eq!(stdout(["help", "sweep"]), stdout(["sweep", "--help"]));
    assert!(stdout(["help"]).contains("COMMANDS:"));
    assert!(usage_error(["help", "bogus"]).contains("unknown command `bogus`"));
}

/// Runs `fmperf args` with stdout sent to `out`; returns (exit code, stderr).
fn run_into(args: &[&str], out: Stdio) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_fmperf"))
        .args(args)
        .stdout(out)
        .stderr(Stdio::piped())
        .output()
        .expect("the fmperf binary runs");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn failed_writes_exit_1_with_a_message() {
    // Before: exit 0 for help (its write errors were ignored).
    for args in [&["help"][..], &["help", "search"], &["--version"], &["models"]] {
        // A closed standard output (`fmperf help >&-`). Before: exit 0.
        let o = Command::new("sh")
            .args(["-c", "exec \"$0\" \"$@\" >&-", env!("CARGO_BIN_EXE_fmperf")])
            .args(args)
            .stderr(Stdio::piped())
            .output()
            .expect("sh runs");
        assert_eq!(o.status.code(), Some(1), "{args:?} >&-");
        assert!(String::from_utf8_lossy(&o.stderr).contains("standard output is closed"), "{args:?}");
        // Sent to /dev/null on purpose: fine.
        let (code, err) = run_into(args, Stdio::null());
        assert_eq!(code, Some(0), "{args:?} > /dev/null: {err}");
        // A pipe whose reader is gone (a closed stdout: `fmperf help | true`).
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let (code, err) = run_into(args, Stdio::from(writer));
        assert_eq!(code, Some(1), "{args:?} into a closed pipe: {err}");
        assert!(err.starts_with("fmperf: cannot write output:"), "{args:?}: {err}");
        // A full disk.
        if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
            let (code, err) = run_into(args, Stdio::from(full));
            assert_eq!(code, Some(1), "{args:?} into /dev/full: {err}");
            assert!(err.contains("cannot write output"), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_json_key_given_twice_is_an_error_in_every_reader() {
    // Before: exit 0, the last value won (`e` read as 2048; the hidden size of a config.json as
    // 1024; a measured row's figure replaced), as serde_json's and Python's readers do.
    let reference =
        support::temp_file("dup-ref.json", "{\"l\": 2048, \"e\": 1024,\n \"e\": 2048, \"h\": 16, \"depth\": 2}");
    let err = usage_error(
        ["search", "--model", support::arg(&reference), "--system", "A100", "--gpus", "8"].into_iter().chain([
            "--global-batch",
            "8",
            "--mode",
            "reference",
        ]),
    );
    assert!(err.contains("the key \"e\" is given twice at line 2"), "{err}");
    let hf = support::temp_file(
        "dup-config.json",
        "{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"num_hidden_layers\": 2,\n\
         \"intermediate_size\": 11008, \"vocab_size\": 32000, \"hidden_size\": 1024}",
    );
    let err = usage_error(
        ["search", "--model", support::arg(&hf), "--system", H100, "--gpus", "8", "--global-batch", "8"]
            .into_iter()
            .chain(["--seq-len", "2048"]),
    );
    assert!(err.contains("the key \"hidden_size\" is given twice at line 2"), "{err}");
    let runs = support::temp_file(
        "dup-runs.json",
        "{\"schema_version\": 1, \"rows\": [{\"id\": \"a\", \"num_devices\": 8,\n\"num_devices\": 16}]}",
    );
    let err = usage_error(["validate", "--data", support::arg(&runs)]);
    assert!(err.contains("the key \"num_devices\" is given twice at line 2"), "{err}");
    let versioned =
        support::temp_file("dup-system.json", "{\"kind\": \"system\", \"kind\": \"model\", \"name\": \"x\"}");
    let out = fmperf(["check", support::arg(&versioned)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("the key \"kind\" is given twice"));
}

#[test]
fn an_unclosed_quote_in_a_launch_script_is_named_with_its_line() {
    // Before: the rest of the line became the flag's value ("--hidden-size = 1024
    // --num-attention-heads 16: must be a positive integer").
    let script = support::temp_file(
        "unclosed.sh",
        "#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2 \\\n  --hidden-size \"1024 --num-attention-heads 16\n",
    );
    let err = usage_error(["estimate", "--from", support::arg(&script), "--system", H100]);
    assert!(err.contains("line 3: the \" quote opened here is never closed"), "{err}");
}

#[test]
fn a_later_schema_a_repeated_axis_value_and_a_directory_are_refused_by_name() {
    // Before: exit 0 for all three (a schema_version 99 file read as version 1; `gpus=8,8` swept
    // the same point twice; `show DIR` said "neither a catalog id nor a file").
    let runs = support::temp_file("later-schema.json", "{\"schema_version\": 99, \"rows\": []}");
    let err = usage_error(["validate", "--data", support::arg(&runs)]);
    assert!(err.contains("schema_version = 99: this fmperf reads schema_version 1"), "{err}");
    let sweep = "sweep --model llama3-8b --system nvidia_h100_sxm5_80gb --global-batch 512 --axis gpus=8,16,8";
    let err = usage_error(words(sweep));
    assert!(err.contains("axis.gpus = 8,16,8: gives the value 8 twice"), "{err}");
    let dir = std::env::temp_dir();
    let err = usage_error(["show", dir.to_str().expect("a UTF-8 temp dir")]);
    assert!(err.contains("show") && err.contains("is a directory"), "{err}");
}
