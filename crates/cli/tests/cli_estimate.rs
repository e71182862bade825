//! The `fmperf estimate --from FILE` contract, run through the built binary: JSON with the
//! configuration, the memory object and the unused flags; exit 2 and one line on a bad file.

mod support;
use support::{arg, fmperf, json, temp_file, usage_error};

use std::path::PathBuf;

use serde_json::Value;

fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/launch").join(name);
    p.to_str().unwrap().to_string()
}

#[test]
fn megatron_script_as_json() {
    let j = json(&["estimate", "--from", &example("megatron-llama3-70b.sh"), "--format", "json"]);
    assert_eq!(j["format"], "megatron");
    let c = &j["config"];
    let got: Vec<u64> = ["tp", "pp", "dp", "cp", "mbs", "vpp"].iter().map(|k| c[k].as_u64().unwrap()).collect();
    assert_eq!(got, [8, 4, 2, 1, 1, 4]);
    assert_eq!((c["recompute"].as_str(), c["sharding"].as_str()), (Some("selective"), Some("zero1")));
    let m = &j["memory"];
    assert_eq!(m["kind"], "nvidia_smi");
    assert!(m["measured_gb"].is_null() && m["band_gb"].as_f64().unwrap() > 0.0);
    // The H100's device total as nvidia-smi reports it (81,559 MiB), not its "80 GB" label.
    assert_eq!(m["capacity_gb"], 85.521);
    assert!(m["predicted_gb"].as_f64().unwrap() > 20.0);
    assert!(matches!(m["fits"].as_str(), Some("yes" | "tight" | "no")));
    let unused = j["unused"].as_array().unwrap();
    let save = unused.iter().find(|u| u["key"] == "--save-interval").expect("--save-interval listed");
    assert_eq!(save["value"], "1000");
    assert!(save["why"].as_str().unwrap().contains("does not affect performance"));
}

#[test]
fn overrides_change_the_scenario_and_table_has_the_numbers() {
    let f = example("torchtitan-llama3-8b.toml");
    let j = json(&["estimate", "--from", &f, "--gpus", "16", "--global-batch", "64", "--format", "json"]);
    assert_eq!((j["config"]["dp"].as_u64(), j["config"]["global_batch"].as_u64()), (Some(16), Some(64)));
    let out = fmperf(&["estimate", "--from", &f]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let j = json(&["estimate", "--from", &f, "--format", "json"]);
    let step = format!("{:.3}", j["time_per_step_s"].as_f64().unwrap());
    assert!(text.contains(&step), "table shows the step time {step}:\n{text}");
    assert!(text.contains("not used by fmperf") && text.contains("training.steps"), "{text}");
}

#[test]
fn malformed_files_exit_2_with_one_line() {
    let e = usage_error(&["estimate", "--from", arg(&temp_file("bad.toml", "[model]\nflavor = \"9B\"\n"))]);
    assert!(e.contains("model.flavor"), "{e}");
    let e = usage_error(&["estimate", "--from", arg(&temp_file("bad.sh", "python pretrain_gpt.py --num-layers x\n"))]);
    assert!(e.contains("--num-layers"), "{e}");
    let e = usage_error(&["estimate", "--from", arg(&temp_file("bad.yaml", "model:\n  a: 1\n b: 2\n"))]);
    assert!(e.contains("line 3"), "{e}");
    let e = usage_error(&["estimate", "--from", arg(&temp_file("config.json", "{\"hidden_size\": 8"))]);
    assert!(e.contains("JSON"), "{e}");
    let e = usage_error(&["estimate", "--from", &example("hf-llama3-8b-config.json"), "--seq-len", "4096"]);
    assert!(e.contains("search --from"), "{e}");
    let e = usage_error(&["estimate", "--from", "/nonexistent/run.sh"]);
    assert!(e.contains("cannot read"), "{e}");
    let e = usage_error(&["estimate", "--from", &example("megatron-llama3-70b.sh"), "--gpus", "60"]);
    assert!(e.contains("--gpus"), "{e}");
    usage_error(&["estimate"]);
}

#[test]
fn search_from_ranks_the_files_layout() {
    let f = example("megatron-llama3-70b.sh");
    let j = json(&["search", "--from", &f, "--top", "3", "--format", "json"]);
    assert_eq!((j["gpus"].as_u64(), j["global_batch"].as_u64()), (Some(64), Some(128)));
    assert_eq!(j["results"].as_array().map(Vec::len), Some(3));
    let own = &j["own"];
    assert_eq!(own["config"]["tp"], 8);
    let (rank, of) = (own["rank"].as_u64().unwrap(), own["of"].as_u64().unwrap());
    assert!(rank >= 1 && rank <= of && of <= j["feasible"].as_u64().unwrap() + 1, "{own}");
    // The file's own layout evaluates to the same numbers as `estimate --from`.
    let e = json(&["estimate", "--from", &f, "--format", "json"]);
    assert_eq!(own["time_per_step_s"], e["time_per_step_s"]);
    // A model-only file needs the device count and batch.
    let hf = example("hf-llama3-8b-config.json");
    let err = usage_error(&["search", "--from", &hf, "--system", "nvidia_h100_sxm5_80gb", "--seq-len", "4096"]);
    assert!(err.contains("--gpus"), "{err}");
    let j = json(&[
        "search",
        "--from",
        &hf,
        "--system",
        "nvidia_h100_sxm5_80gb",
        "--seq-len",
        "4096",
        "--gpus",
        "16",
        "--global-batch",
        "64",
        "--format",
        "json",
    ]);
    assert!(j["own"].is_null() && j["feasible"].as_u64().unwrap() > 0);
}

/// Standard output of a command that succeeds.
fn text_of(args: &[&str]) -> String {
    let out = fmperf(args);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

// Mixture-of-Experts files: the MoE breakdown in the table and the JSON, the file's expert degrees
// fixed, the search's `ep`/`etp` columns and the file's own layout ranked; a bad expert degree is
// one line on stderr naming the flag.

#[test]
fn estimate_prints_the_moe_breakdown() {
    let path = example("megatron-deepseek-v3.sh");
    let table = text_of(&["estimate", "--from", &path]);
    assert!(
        table.contains("experts  256 routed, top-8, width 2048 + 1 shared (width 2048) · 58 MoE blocks of 61"),
        "{table}"
    );
    assert!(table.contains("experts  ep 64 · etp 1 · expert dp 1"), "{table}");
    assert!(table.contains("MoE time part") && table.contains("all-to-all"), "{table}");
    let j: Value = serde_json::from_str(&text_of(&["estimate", "--from", &path, "--format", "json"])).unwrap();
    assert_eq!((j["config"]["ep"].as_u64(), j["config"]["etp"].as_u64()), (Some(64), Some(1)));
    assert_eq!(j["moe"]["router"], "sigmoid");
    assert_eq!(j["moe"]["mla"]["kv_lora_rank"].as_u64(), Some(512));
    assert!(j["moe"]["breakdown"]["times"]["a2a_s"].as_f64().unwrap() > 0.0);
    assert_eq!((j["model"]["num_experts"].as_u64(), j["model"]["topk"].as_u64()), (Some(256), Some(8)));
    assert_eq!(j["model"]["moe_ffn_hidden"].as_u64(), Some(2048));
    // A dense file: no MoE object, no experts; the expert degrees of its layout are 1.
    let j: Value =
        serde_json::from_str(&text_of(&["estimate", "--from", &example("megatron-llama3-70b.sh"), "--format", "json"]))
            .unwrap();
    assert!(j["moe"].is_null() && j["model"]["num_experts"].is_null());
    assert_eq!((j["config"]["ep"].as_u64(), j["config"]["etp"].as_u64()), (Some(1), Some(1)));
    // Where each value came from.
    assert!(j["origins"]["tp"].as_str().unwrap().contains("--tensor-model-parallel-size"), "{}", j["origins"]);
}

#[test]
fn search_ranks_the_files_expert_layout() {
    let path = example("bridge-mixtral-8x7b.yaml");
    let j: Value =
        serde_json::from_str(&text_of(&["search", "--from", &path, "--top", "3", "--format", "json"])).unwrap();
    let own = &j["own"];
    assert_eq!((own["config"]["ep"].as_u64(), own["config"]["etp"].as_u64()), (Some(8), Some(1)));
    assert!(own["rank"].as_u64().unwrap() >= 1 && own["of"].as_u64().unwrap() >= 1);
    assert!(j["results"].as_array().unwrap().iter().all(|r| r.to_string().contains("\"ep\"")));
    let table = text_of(&["search", "--from", &path, "--top", "3"]);
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
    assert!(text_of(&args).contains("1d.dp"));
}

#[test]
fn a_bad_expert_degree_is_one_line_naming_the_flag() {
    let text = std::fs::read_to_string(example("megatron-deepseek-v3.sh")).unwrap().replace("EP=64", "EP=48");
    let err = usage_error(&["estimate", "--from", arg(&temp_file("bad-ep.sh", &text))]);
    assert!(
        err.contains("--expert-model-parallel-size") && err.contains("must divide the routed experts 256"),
        "{err}"
    );
}

// Several files read as one run (issue 27 §2): a launch that leaves the model out and the model's
// config.json; where each value came from; two files that disagree; files that are not files.
#[test]
fn a_launch_and_its_model_file_read_together() {
    let run = temp_file(
        "run-no-model.sh",
        "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\\n  --tensor-model-parallel-size 2 \
         --pipeline-model-parallel-size 2 \\\n  --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16\n",
    );
    let run = arg(&run);
    let hf = example("hf-llama3-8b-config.json");
    let j = json(&["estimate", "--from", &run, "--from", &hf, "--system", "nvidia_h100_sxm5_80gb", "--format", "json"]);
    let c = &j["config"];
    assert_eq!((c["tp"].as_u64(), c["pp"].as_u64(), c["dp"].as_u64()), (Some(2), Some(2), Some(4)));
    assert_eq!((j["model"]["layers"].as_u64(), j["model"]["hidden"].as_u64()), (Some(32), Some(4096)));
    assert!(j["origins"]["layers"].as_str().unwrap().contains("hf-llama3-8b-config.json: num_hidden_layers"));
    assert!(j["origins"]["tp"].as_str().unwrap().contains("run-no-model.sh: --tensor-model-parallel-size"));
    assert!(j["origins"]["system"].as_str().unwrap().contains("--system"));
    // --model names the same config.json.
    let k =
        json(&["estimate", "--from", &run, "--model", &hf, "--system", "nvidia_h100_sxm5_80gb", "--format", "json"]);
    assert_eq!(k["time_per_step_s"], j["time_per_step_s"]);
    // Without the model file, the missing field is named.
    let e = usage_error(&["estimate", "--from", &run, "--system", "nvidia_h100_sxm5_80gb"]);
    assert!(e.contains("--hidden-size"), "{e}");
    // Two files that disagree: an error naming both.
    let other = temp_file("seq.sh", "torchrun pretrain_gpt.py --seq-length 8192 --micro-batch-size 1\n");
    let other = arg(&other);
    let e = usage_error(&[
        "estimate",
        "--from",
        &run,
        "--from",
        &other,
        "--from",
        &hf,
        "--system",
        "nvidia_h100_sxm5_80gb",
    ]);
    assert!(e.contains("--seq-length") && e.contains("8192") && e.contains("4096"), "{e}");
}

#[test]
fn inputs_that_are_not_regular_files_or_not_for_this_command_are_refused() {
    if std::path::Path::new("/dev/zero").exists() {
        let e = usage_error(&["estimate", "--from", "/dev/zero", "--system", "nvidia_h100_sxm5_80gb"]);
        assert!(e.contains("not a regular file"), "{e}");
        let e =
            usage_error(&["search", "--model", "/dev/zero", "--system", "h100", "--gpus", "8", "--global-batch", "64"]);
        assert!(e.contains("not a regular file"), "{e}");
    }
    let dir = std::env::temp_dir().to_string_lossy().to_string();
    assert!(usage_error(&["estimate", "--from", &dir, "--system", "nvidia_h100_sxm5_80gb"]).contains("is a directory"));
    // A flag at fault is named alone, not blamed on the file.
    let from = example("megatron-llama3-70b.sh");
    let e = usage_error(&["estimate", "--from", &from, "--system", "bogus"]);
    assert!(e.contains("unknown system `bogus`") && !e.contains("--from"), "{e}");
    // ... also when the file has a problem of its own: the flag is checked before the file is read.
    let broken = std::env::temp_dir().join(format!("fmperf-broken-{}.toml", std::process::id()));
    std::fs::write(&broken, "[model]\nname = \"x\"\n").unwrap();
    let broken = broken.to_string_lossy().to_string();
    let e = usage_error(&["estimate", "--from", &broken, "--system", "bogus"]);
    assert!(e.contains("unknown system `bogus`") && !e.contains("model.flavor"), "{e}");
    let e = usage_error(&["estimate", "--from", &broken, "--system", "nvidia_h100_sxm5_80gb,domain=zero"]);
    assert!(e.contains("domain") && !e.contains("model.flavor"), "{e}");
    let e = usage_error(&["estimate", "--from", &broken, "--system", "nvidia_h100_sxm5_80gb"]);
    assert!(e.contains("--from") && e.contains("model.flavor"), "{e}");
    let _ = std::fs::remove_file(&broken);
    let e = usage_error(&["estimate", "--from", &from, "--gpus", "7"]);
    assert!(e.starts_with("fmperf: --gpus = 7") && e.contains("tp·pp·cp = 32"), "{e}");
    // Positional parameters belong to a script given with --from.
    let e = usage_error(&["show", "llama3-8b", "--", "a"]);
    assert!(e.contains("positional parameters"), "{e}");
    let e = usage_error(&["search", "--model", "llama3-8b", "--system", "h100", "--gpus", "8", "--", "x"]);
    assert!(e.contains("positional parameters"), "{e}");
}

// The way back (issue 27 §4): `search --from FILE --emit FORMAT` writes the best configuration as a
// launch; read back, it is the search's best with the same time per step.
#[test]
fn the_best_layout_is_written_back_and_reads_back_the_same() {
    let from = example("megatron-llama3-70b.sh");
    let j = json(&["search", "--from", &from, "--top", "1", "--format", "json"]);
    let best = &j["results"][0];
    for target in ["megatron", "torchtitan", "nemo", "maxtext"] {
        let out = fmperf(&["search", "--from", &from, "--emit", target]);
        assert_eq!(out.status.code(), Some(0), "{target}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let ext = match target {
            "megatron" => "sh",
            "torchtitan" => "toml",
            _ => "yaml",
        };
        if target == "maxtext" {
            // A MaxText command line of key=value overrides.
            assert!(text.contains("ici_tensor_parallelism") || text.contains("tensor_parallelism"), "{text}");
            continue;
        }
        let written = temp_file(&format!("best-{target}.{ext}"), &text);
        let back = json(&[
            "estimate",
            "--from",
            arg(&written),
            "--system",
            "nvidia_h100_sxm5_80gb",
            "--gpus",
            "64",
            "--format",
            "json",
        ]);
        let c = &back["config"];
        let want = (best["config"]["tp"].as_u64(), best["config"]["pp"].as_u64(), best["config"]["dp"].as_u64());
        assert_eq!((c["tp"].as_u64(), c["pp"].as_u64(), c["dp"].as_u64()), want, "{target}: {text}");
        if target == "megatron" {
            // In place: the same stack, so the same time per step within 0.1 %.
            let (t, b) = (back["time_per_step_s"].as_f64().unwrap(), best["time_per_iteration_s"].as_f64().unwrap());
            assert!((t / b - 1.0).abs() < 1e-3, "{target}: {t} vs {b}");
        }
    }
    let e = usage_error(&[
        "search",
        "--model",
        "llama3-8b",
        "--system",
        "h100",
        "--gpus",
        "8",
        "--global-batch",
        "8",
        "--emit",
        "megatron",
    ]);
    assert!(e.contains("--from"), "{e}");
    let e = usage_error(&["search", "--from", &from, "--emit", "slurm"]);
    assert!(e.contains("--emit"), "{e}");
}

// Extended mode's host parts (core's `Breakdown::host_parts`): in the JSON's `time_s` and as a
// table of their own. Megatron-LM's Llama 3 70B script on 64 H100s: tp 8, pp 4, 80 blocks, so 20
// per device, 64 micro-batches, selective recomputation (no layer run twice); each layer's forward
// runs 13 · 2.17 µs + 4 · (99.66 − 37.08) / 1.25 µs = 228.466 µs of Python on a DGX H100 host
// (`layer_python`), so 64 · 20 · 228.466 µs = 0.29243648 s. The script logs no statistics
// (no --log-num-zeros-in-grad, --log-params-norm): 0.
#[test]
fn estimate_shows_the_host_parts() {
    let f = example("megatron-llama3-70b.sh");
    let j = json(&["estimate", "--from", &f, "--format", "json"]);
    let t = &j["time_s"];
    assert!((t["layer_python"].as_f64().unwrap() - 0.29243648).abs() < 1e-9, "{t}");
    assert_eq!(t["step_host"], 0.0, "{t}");
    let out = fmperf(&["estimate", "--from", &f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("host work (hidden behind the GPU unless host-bound)")
                && l.trim_end().ends_with("[s]")),
        "{text}"
    );
    let row = text.lines().find(|l| l.starts_with("layers' Python, host")).expect("the layers' Python row");
    assert!(row.ends_with(" 0.292"), "{row}");
    assert!(text.lines().any(|l| l.starts_with("logged statistics, host") && l.ends_with(" 0.000")), "{text}");
}
