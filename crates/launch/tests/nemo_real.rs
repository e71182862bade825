//! The real NeMo / Megatron-Bridge YAML and torchtitan TOML files of `tests/data/real/` (taken
//! unedited from public repositories; `manifest.json` states what each file says), read through
//! `fmperf_launch::parse_files`: the degrees, batch and shape the manifest states must come out.

use std::path::Path;

use fmperf_launch::{Source, parse_files};
use serde_json::Value;

/// `(id, file, problems)` for every manifest entry of `formats`.
pub fn check(formats: &[&str]) -> Vec<(String, Vec<String>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real");
    let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else { return Vec::new() };
    let manifest: Value = serde_json::from_str(&text).expect("manifest is JSON");
    let mut out = Vec::new();
    for e in manifest.as_array().into_iter().flatten() {
        let format = e["format"].as_str().unwrap_or("");
        if !formats.contains(&format) {
            continue;
        }
        let files: Vec<String> =
            e["files"].as_array().into_iter().flatten().filter_map(|f| f.as_str().map(str::to_string)).collect();
        let texts: Vec<String> = files.iter().map(|f| std::fs::read_to_string(dir.join(f)).unwrap()).collect();
        let sources: Vec<Source> =
            files.iter().zip(&texts).map(|(n, t)| Source { name: Some(n.as_str()), text: t.as_str() }).collect();
        let id = format!("{} {}", e["id"].as_str().unwrap_or(""), files.join("+"));
        let mut problems = Vec::new();
        // The reading must also evaluate (on H100s, with the manifest's device count).
        let overrides = fmperf_launch::Overrides {
            system: Some("nvidia_h100_sxm5_80gb".into()),
            gpus: e["gpus"].as_u64(),
            ..Default::default()
        };
        let evaluated = fmperf_launch::estimate::estimate_files(&sources, &[], &overrides);
        match parse_files(&sources, &[]) {
            Err(err) => problems.push(format!("error: {err}")),
            Ok(l) => {
                let s = &l.settings;
                let m = &s.moe;
                let dp_devices = s.devices.copied().or_else(|| Some(s.devices_per_node.copied()? * s.nodes.copied()?));
                let got: [(&str, Option<u64>); 17] = [
                    ("tp", s.tp.copied()),
                    ("pp", s.pp.copied()),
                    ("cp", s.cp.copied()),
                    ("ep", m.ep.copied()),
                    ("vpp", s.vpp.copied()),
                    ("mbs", s.mbs.copied().or(s.local_batch.copied())),
                    ("global_batch", s.global_batch.copied()),
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
                    // A degree of 1 the file states may be read as "not given" (the default 1).
                    let default_one = matches!(k, "tp" | "pp" | "cp" | "ep" | "vpp") && want == Some(1) && v.is_none();
                    if want.is_some() && want != v && !default_one {
                        problems.push(format!("{k}: manifest {want:?}, read {v:?}"));
                    }
                }
                // A file that leaves a needed value out (a Bridge override without the recipe's
                // model, a tokenizer file's vocabulary) is asked for it by name; anything else
                // that stops the estimate is a problem.
                match &evaluated {
                    Err(fmperf_core::Error::MissingField { .. }) | Ok(_) => {}
                    Err(err) => problems.push(format!("estimate: {err}")),
                }
                if format.starts_with("nemo")
                    && let Some(g) = e["gpus"].as_u64()
                    && dp_devices.is_some_and(|d| d != g)
                {
                    problems.push(format!("devices: manifest {g}, read {dp_devices:?}"));
                }
            }
        }
        out.push((id, problems));
    }
    out
}

/// Prints the reading of every file of `formats` and returns how many were read as stated.
pub fn report(formats: &[&str]) -> (usize, usize) {
    let all = check(formats);
    let ok = all.iter().filter(|(_, p)| p.is_empty()).count();
    for (id, p) in &all {
        eprintln!("{} {id}: {}", if p.is_empty() { "OK  " } else { "MISS" }, p.join("; "));
    }
    eprintln!("{ok} of {} read as the manifest states", all.len());
    (ok, all.len())
}

#[test]
fn real_nemo_and_bridge_files_are_read_as_stated() {
    let (ok, n) = report(&["nemo-yaml", "bridge-yaml"]);
    if n > 0 {
        assert!(ok >= n, "{ok} of {n}");
    }
}
