//! The real MaxText, DeepSpeed JSON and Hugging Face files of `tests/data/real/` (unedited, with
//! their companions; `manifest.json` states what each says), read through
//! `fmperf_launch::parse_files`. A global batch the files leave to the device count (a `-1` mesh
//! degree) is checked through the scenario with the manifest's device count.

use std::path::Path;

use fmperf_launch::{Overrides, Scenario, Source, parse_files};
use serde_json::Value;

/// `(id, problems)` for every manifest entry whose format is in `formats`.
fn check(formats: &[&str]) -> Vec<(String, Vec<String>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real");
    let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else { return Vec::new() };
    let manifest: Value = serde_json::from_str(&text).expect("manifest is JSON");
    let mut out = Vec::new();
    for e in manifest.as_array().into_iter().flatten() {
        let format = e["format"].as_str().unwrap_or("");
        let files: Vec<String> =
            e["files"].as_array().into_iter().flatten().filter_map(|f| f.as_str().map(str::to_string)).collect();
        if !formats.contains(&format) {
            continue;
        }
        let Ok(texts) = files.iter().map(|f| std::fs::read_to_string(dir.join(f))).collect::<Result<Vec<_>, _>>()
        else {
            continue;
        };
        let sources: Vec<Source> =
            files.iter().zip(&texts).map(|(n, t)| Source { name: Some(n.as_str()), text: t.as_str() }).collect();
        let args: Vec<String> =
            e["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_string)).collect();
        let id = format!("{} {}", e["id"].as_str().unwrap_or(""), files.join("+"));
        let mut problems = Vec::new();
        match parse_files(&sources, &args) {
            Err(err) => problems.push(format!("error: {err}")),
            Ok(l) => {
                let s = &l.settings;
                let m = &s.moe;
                let mut global = s.global_batch.copied();
                // A launch becomes a scenario with the manifest's device count (the global batch
                // of a `-1` mesh degree follows from it).
                if let Some(g) = e["gpus"].as_u64() {
                    let o = Overrides { gpus: Some(g), ..Overrides::default() };
                    match Scenario::from_launch(&l, &o) {
                        Ok(sc) => _ = global.get_or_insert(sc.layout.global_batch),
                        Err(err) => problems.push(format!("scenario with {g} devices: {err}")),
                    }
                }
                let got: [(&str, Option<u64>); 17] = [
                    ("tp", s.tp.copied()),
                    ("pp", s.pp.copied()),
                    ("cp", s.cp.copied()),
                    ("ep", m.ep.copied()),
                    ("vpp", s.vpp.copied()),
                    ("mbs", s.mbs.copied()),
                    ("global_batch", global),
                    ("layers", s.layers.copied()),
                    ("hidden", s.hidden.copied()),
                    ("heads", s.heads.copied()),
                    ("kv_heads", s.kv_heads.copied()),
                    ("ffn_hidden", s.ffn_hidden.copied()),
                    ("vocab", s.vocab.copied()),
                    ("seq_len", s.seq_len.copied()),
                    ("num_experts", m.experts.copied()),
                    ("topk", m.top_k.copied()),
                    ("moe_ffn_hidden", m.expert_ffn_hidden.copied()),
                ];
                for (k, v) in got {
                    let want = e["states"][k].as_u64();
                    let default_one = matches!(k, "tp" | "pp" | "cp" | "ep" | "vpp") && want == Some(1) && v.is_none();
                    if want.is_some() && want != v && !default_one {
                        problems.push(format!("{k}: manifest {want:?}, read {v:?}"));
                    }
                }
            }
        }
        out.push((id, problems));
    }
    out
}

fn report(formats: &[&str]) -> (usize, usize) {
    let all = check(formats);
    let ok = all.iter().filter(|(_, p)| p.is_empty()).count();
    for (id, p) in &all {
        eprintln!("{} {id}: {}", if p.is_empty() { "OK  " } else { "MISS" }, p.join("; "));
    }
    (ok, all.len())
}

#[test]
fn real_deepspeed_runs_are_reported() {
    // Megatron-DeepSpeed launches with their ds_config.json: the launch is the Megatron reader's,
    // so this only reports (the DeepSpeed JSON's own reading is tested in deepspeed_config.rs).
    let (ok, n) = report(&["megatron-deepspeed"]);
    eprintln!("Megatron-DeepSpeed with ds_config.json: {ok} of {n} read as the manifest states");
}

#[test]
fn real_deepspeed_and_hf_config_files_are_read_as_stated() {
    let (ok, n) = report(&["deepspeed-json", "hf-config"]);
    eprintln!("DeepSpeed JSON and config.json alone: {ok} of {n} read as the manifest states");
    assert_eq!(ok, n, "DeepSpeed JSON or config.json files not read as stated");
    // Every DeepSpeed JSON of the corpus, alone, is read or refused with the key and line.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real");
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.ends_with(".json") || name == "manifest.json" {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        match fmperf_launch::parse(&text, Some(&name)) {
            Ok(l) => eprintln!("{name}: {} ({} unused, {} notes)", l.format.as_str(), l.unused.len(), l.notes.len()),
            Err(e) => eprintln!("{name}: error: {e}"),
        }
    }
}

#[test]
fn real_maxtext_files_are_read_as_stated() {
    let (ok, n) = report(&["maxtext"]);
    eprintln!("MaxText: {ok} of {n} read as the manifest states");
    // Every real MaxText file present is read as stated (the corpus may still be growing).
    assert_eq!(ok, n, "MaxText files not read as stated");
}
