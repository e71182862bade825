//! The corpus of real launch and model files (`data/real/`, taken unedited from public
//! repositories; `data/real/README.md` gives each file's repository, path, commit and licence) read
//! the way a user runs `fmperf estimate --from FILE [--from FILE2] [--gpus N] --system ID -- ARGS`
//! (or `fmperf show FILE` for a model file), and compared with what each file states
//! (`manifest.json`'s `states`, read by a person).
//!
//! It replaces the per-format corpus reports the readers were first written against: one harness,
//! per-format floors.
//!
//! Every case ends as one of: **read** (every value the file states is in the output), **misread**
//! (read without an error, but a stated value differs: the worst outcome, a silent wrong answer) or
//! **refused** (an error naming the key or the missing input). The test prints the table
//! (`cargo test -p fmperf-launch --test real_files -- --nocapture`) and holds the counts to the
//! floors below, raised as the readers improve.

use std::path::PathBuf;

use fmperf_launch::model_document::model_document;
use fmperf_launch::{Overrides, Source, estimate_files};
use serde_json::Value;

/// The system every case is estimated on (the check names one; the layout does not depend on it).
const SYSTEM: &str = "nvidia_h100_sxm5_80gb";

/// Cases read with every stated value, per format: at least this many.
const READ_PER_FORMAT_AT_LEAST: [(&str, usize); 10] = [
    ("bridge-yaml", 0),
    ("deepspeed-json", 0),
    ("hf-config", 7),
    ("hf-trainer-deepspeed", 10),
    ("maxtext", 13),
    ("megatron", 13),
    ("megatron-deepspeed", 5),
    ("megatron-functional-yaml", 3),
    ("nemo-yaml", 10),
    ("torchtitan", 9),
];
/// Cases read with every stated value: at least this many (of the corpus's 82).
const READ_AT_LEAST: usize = 70;
/// Cases read with a stated value wrong: at most this many.
const MISREAD_AT_MOST: usize = 0;

#[derive(Debug)]
enum Outcome {
    Read,
    Misread(Vec<String>),
    Refused(String),
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/real")
}

/// The stated keys and where the estimate's JSON has them.
const CONFIG_KEYS: [&str; 7] = ["tp", "pp", "cp", "ep", "vpp", "mbs", "global_batch"];
const MODEL_KEYS: [&str; 10] = [
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "seq_len",
    "num_experts",
    "topk",
    "moe_ffn_hidden",
];

/// The differences between what a case states and what was read (`got` is the estimate's JSON, or
/// a model document for a model file).
fn differences(states: &Value, got: &Value, model_only: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some(states) = states.as_object() else { return out };
    for (k, want) in states {
        let Some(want) = want.as_u64() else { continue };
        let found: Vec<Option<u64>> = if model_only {
            match k.as_str() {
                "num_experts" => vec![got["moe"]["experts"].as_u64()],
                "topk" => vec![got["moe"]["top_k"].as_u64()],
                "moe_ffn_hidden" => vec![got["moe"]["expert_ffn"].as_u64()],
                _ => vec![got[k.as_str()].as_u64()],
            }
        } else if CONFIG_KEYS.contains(&k.as_str()) {
            vec![got["config"][k.as_str()].as_u64()]
        } else if k == "vocab" {
            vec![got["model"]["vocab"].as_u64(), got["model"]["vocab_read"].as_u64()]
        } else if MODEL_KEYS.contains(&k.as_str()) {
            vec![got["model"][k.as_str()].as_u64()]
        } else {
            continue;
        };
        // Megatron's NullTokenizer counts an end-of-document token after `--vocab-size` (the
        // reader's note says so): the file's number plus one.
        let null_tokenizer = k == "vocab" && notes_mention(got, "NullTokenizer") && found.contains(&Some(want + 1));
        if !found.contains(&Some(want)) && !null_tokenizer {
            out.push(format!("{k}: states {want}, read {:?}", found.first().copied().flatten()));
        }
    }
    out
}

/// Whether a note of the estimate's JSON mentions `word`.
fn notes_mention(got: &Value, word: &str) -> bool {
    got["notes"].as_array().is_some_and(|n| n.iter().any(|n| n.as_str().is_some_and(|t| t.contains(word))))
}

fn run(case: &Value) -> Outcome {
    let names: Vec<String> =
        case["files"].as_array().into_iter().flatten().filter_map(|f| f.as_str().map(str::to_string)).collect();
    let texts: Vec<String> = names.iter().map(|n| std::fs::read_to_string(dir().join(n)).unwrap_or_default()).collect();
    let args: Vec<String> =
        case["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_string)).collect();
    let model_only = matches!(case["format"].as_str(), Some("hf-config"))
        || (names.len() == 1 && case["gpus"].is_null() && case["states"]["tp"].is_null());
    let states = &case["states"];
    if model_only {
        return match model_document(&texts[0], Some(&names[0]), "m") {
            Ok(m) => {
                let doc = fmperf_core::format::to_json(&fmperf_core::format::Document::Model(m));
                let got: Value = serde_json::from_str(&doc).unwrap_or(Value::Null);
                let d = differences(states, &got, true);
                if d.is_empty() { Outcome::Read } else { Outcome::Misread(d) }
            }
            Err(e) => Outcome::Refused(e.to_string()),
        };
    }
    let sources: Vec<Source<'_>> =
        names.iter().zip(&texts).map(|(n, t)| Source { name: Some(n.as_str()), text: t.as_str() }).collect();
    let overrides = Overrides { system: Some(SYSTEM.into()), gpus: case["gpus"].as_u64(), ..Overrides::default() };
    match estimate_files(&sources, &args, &overrides) {
        Ok((launch, e)) => {
            let got = e.to_json(&launch);
            let d = differences(states, &got, false);
            if d.is_empty() { Outcome::Read } else { Outcome::Misread(d) }
        }
        Err(e) => Outcome::Refused(e.to_string()),
    }
}

#[test]
fn the_real_corpus_is_read_as_written() {
    let text = std::fs::read_to_string(dir().join("manifest.json")).expect("the corpus's manifest");
    let manifest: Value = serde_json::from_str(&text).expect("manifest.json is JSON");
    let cases = manifest.as_array().expect("manifest.json is a list");
    let (mut read, mut misread, mut refused) = (0, 0, 0);
    let mut by_format: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for case in cases {
        let id = case["id"].as_str().unwrap_or("?");
        let format = case["format"].as_str().unwrap_or("?").to_string();
        let outcome = std::panic::catch_unwind(|| run(case)).unwrap_or_else(|_| Outcome::Refused("PANIC".into()));
        let entry = by_format.entry(format.clone()).or_default();
        entry.1 += 1;
        match &outcome {
            Outcome::Read => {
                read += 1;
                entry.0 += 1;
                eprintln!("{id} {format:<22} read");
            }
            Outcome::Misread(d) => {
                misread += 1;
                eprintln!("{id} {format:<22} MISREAD {}", d.join("; "));
            }
            Outcome::Refused(e) => {
                refused += 1;
                assert_ne!(e, "PANIC", "case {id} panicked");
                eprintln!("{id} {format:<22} refused: {}", e.chars().take(220).collect::<String>());
            }
        }
    }
    eprintln!("\nper format (read / cases):");
    for (f, (ok, n)) in &by_format {
        eprintln!("  {f:<22} {ok} / {n}");
    }
    eprintln!("read {read}, misread {misread}, refused {refused} of {}", cases.len());
    assert!(read >= READ_AT_LEAST, "read {read} < {READ_AT_LEAST}");
    for (format, floor) in READ_PER_FORMAT_AT_LEAST {
        let ok = by_format.get(format).map_or(0, |c| c.0);
        assert!(ok >= floor, "{format}: read {ok} < {floor}");
    }
    assert!(
        by_format.keys().all(|f| READ_PER_FORMAT_AT_LEAST.iter().any(|(g, _)| g == f)),
        "a format without a floor: {:?}",
        by_format.keys().collect::<Vec<_>>()
    );
    assert!(misread <= MISREAD_AT_MOST, "misread {misread} > {MISREAD_AT_MOST}");
}

/// NVIDIA's gpt-oss launch (`05-gptoss_02_train.sh`: `--window-size 127,0`,
/// `--window-attn-skip-freq 2`) gives the model its window: 127 tokens in every other block.
#[test]
fn the_gpt_oss_launch_gives_its_sliding_window() {
    let text = std::fs::read_to_string(dir().join("05-gptoss_02_train.sh")).unwrap();
    let l = fmperf_launch::parse(&text, Some("05-gptoss_02_train.sh")).unwrap();
    assert_eq!(
        (l.settings.window_tokens.copied(), l.settings.window_pattern.get().map(String::as_str)),
        (Some(127), Some("2"))
    );
    assert!(!l.unused.iter().any(|u| u.key.starts_with("--window")), "{:?}", l.unused);
    let o = Overrides { system: Some(SYSTEM.into()), ..Default::default() };
    let (_, e) = estimate_files(&[Source { name: Some("05-gptoss_02_train.sh"), text: &text }], &[], &o).unwrap();
    let window = e.scenario.workload.sliding_window;
    assert_eq!(window, Some(fmperf_core::vocab::SlidingWindow { tokens: 127, full_every: Some(2) }));
}

/// Megatron-LM's MoE functional tests (80–82) set the layer's host flags as their `MODEL_ARGS`
/// state them: attention CUDA graphs with grouped GEMMs and permute fusion (80), `SequentialMLP`
/// without `--moe-grouped-gemm` and sinkhorn (81), grouped GEMMs and permute fusion (82).
#[test]
fn the_moe_functional_tests_set_the_host_flags() {
    use fmperf_core::extended::moe::host_flags::{Balancing, GraphScope};
    let attn = GraphScope { attn: true, ..GraphScope::default() };
    for (file, sequential, permute, balancing, graphs) in [
        ("80-mlm_functional_moe_attn_cudagraph_model_config.yaml", false, true, Balancing::SeqAuxLoss, attn),
        (
            "81-mlm_functional_moe_8experts2parallel_model_config.yaml",
            true,
            false,
            Balancing::Sinkhorn,
            GraphScope::default(),
        ),
        (
            "82-mlm_functional_moe_deepseek_proxy_fsdp_model_config.yaml",
            false,
            true,
            Balancing::SeqAuxLoss,
            GraphScope::default(),
        ),
    ] {
        let text = std::fs::read_to_string(dir().join(file)).unwrap();
        let o = Overrides { system: Some(SYSTEM.into()), gpus: Some(8), ..Default::default() };
        let (_, e) = estimate_files(&[Source { name: Some(file), text: &text }], &[], &o).unwrap();
        let h = e.scenario.options.moe.host;
        assert_eq!(
            (h.sequential_experts, h.permute_fusion, h.router_fusion, h.balancing, h.graphs),
            (sequential, permute, false, balancing, graphs),
            "{file}"
        );
    }
}
