//! torchtitan job TOML written back: the `[parallelism]`, `[training]` and
//! `[activation_checkpoint]` keys of a file rewritten in place (tables kept, missing keys added at
//! the end of their table, a missing table appended), or a fresh file of the current schema.
//!
//! torchtitan's meanings (`torchtitan/config/job_config.py`): data parallelism is
//! `data_parallel_replicate_degree × data_parallel_shard_degree` (FSDP over the shard degree, HSDP
//! with replicas, plain DDP with a shard degree of 1); `training.local_batch_size` is one rank's
//! batch, cut into micro-batches of `pipeline_parallel_microbatch_size` under pipelining;
//! `training.global_batch_size` above `local × dp` accumulates gradients.

use super::lines::{Lines, value_at};
use super::{Header, Plan};
use crate::Launch;
use crate::settings::SettingOrigin;
use crate::torchtitan::FLAVOURS;
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{ExtendedOptions, Fusion, Recompute, Sharding};
use fmperf_core::vocab::{Note, NoteList};

/// A value to write: TOML text (`8`, `"full"`).
type Item = (&'static str, &'static str, String);

/// The `(table, key, value)` items of a plan, with notes for what torchtitan cannot express.
fn items(p: &Plan, notes: &mut Vec<Note>) -> Vec<Item> {
    let (shard, replicate) = match p.sharding {
        Sharding::Ddp => (1, p.dp),
        Sharding::Zero3 => match p.shard_group {
            Some(g) if g.is_multiple_of(p.cp) && p.dp.is_multiple_of(g / p.cp) && g / p.cp > 1 => {
                (g / p.cp, p.dp / (g / p.cp))
            }
            Some(g) => {
                notes.not_written(format!(
                    "shard group {g} does not fold into the data-parallel degree {}: full FSDP written",
                    p.dp
                ));
                (p.dp, 1)
            }
            None => (p.dp, 1),
        },
        s => {
            notes.not_written(format!(
                "sharding {}: torchtitan shards with FSDP (parameters, gradients and optimizer states, ZeRO-3); the \
                 nearest, FSDP over the {} data-parallel ranks, is written",
                s.as_str(),
                p.dp
            ));
            (p.dp, 1)
        }
    };
    if shard == 1 && p.sharding == Sharding::Zero3 {
        notes.not_written("FSDP over one rank is plain data parallelism in torchtitan".into());
    }
    let mut v: Vec<Item> = vec![
        ("parallelism", "data_parallel_replicate_degree", replicate.to_string()),
        ("parallelism", "data_parallel_shard_degree", shard.to_string()),
        ("parallelism", "tensor_parallel_degree", p.tp.to_string()),
        ("parallelism", "pipeline_parallel_degree", p.pp.to_string()),
        ("parallelism", "context_parallel_degree", p.cp.to_string()),
    ];
    if p.moe {
        v.push(("parallelism", "expert_parallel_degree", p.ep.to_string()));
        v.push(("parallelism", "expert_tensor_parallel_degree", p.etp.to_string()));
    }
    if p.tp > 1 && !p.sequence_parallel {
        notes.not_written("torchtitan's tensor parallelism always runs with sequence parallelism".into());
    }
    let local = if p.pp > 1 {
        v.push(("parallelism", "pipeline_parallel_microbatch_size", p.mbs.to_string()));
        if p.vpp > 1 {
            match p.layers_per_virtual_stage() {
                Some(n) => v.push(("parallelism", "pipeline_parallel_layers_per_stage", n.to_string())),
                None => notes.not_written(format!(
                    "{} virtual stages do not divide the {} blocks evenly: torchtitan's multi-stage schedule reads as 2 \
                     stages per rank without pipeline_parallel_layers_per_stage",
                    p.vpp, p.layers
                )),
            }
            v.push(("parallelism", "pipeline_parallel_schedule", "\"Interleaved1F1B\"".into()));
        } else {
            v.push(("parallelism", "pipeline_parallel_layers_per_stage", (p.layers / p.pp).max(1).to_string()));
            v.push(("parallelism", "pipeline_parallel_schedule", "\"1F1B\"".into()));
        }
        p.global / p.dp
    } else {
        p.mbs
    };
    v.push(("training", "local_batch_size", local.to_string()));
    v.push(("training", "global_batch_size", p.global.to_string()));
    let (mode, option) = match p.recompute {
        Recompute::None => ("none", None),
        Recompute::Full => ("full", None),
        Recompute::Op => ("selective", Some("op")),
        Recompute::Partial(share) => {
            let whole = if share.fraction() >= 0.5 { "full" } else { "none" };
            notes.not_written(format!(
                "recompute {}: torchtitan's layer-wise selective checkpointing recomputes every n-th block; the \
                 nearer whole mode, \"{whole}\", is written",
                share.fraction()
            ));
            (whole, None)
        }
        Recompute::Selective => {
            notes.not_written(
                "recompute selective (Megatron's: the attention core only) has no torchtitan mode of that kind; its \
                 nearest is mode = \"none\" (with SDPA's flash attention the attention scores are never stored, so \
                 nothing else is recomputed); torchtitan's own selective mode (per operation) recomputes more"
                    .into(),
            );
            ("none", None)
        }
    };
    v.push(("activation_checkpoint", "mode", format!("\"{mode}\"")));
    if let Some(op) = option {
        v.push(("activation_checkpoint", "selective_ac_option", format!("\"{op}\"")));
    }
    v
}

/// `table.key` → line, and each table's header line and last key line, of a TOML text.
struct Tables {
    keys: Vec<(String, usize)>,
    /// `(table, header line, last line with a key)`.
    tables: Vec<(String, usize, usize)>,
}

fn tables(lines: &Lines) -> Tables {
    let mut keys = Vec::new();
    let mut tables: Vec<(String, usize, usize)> = Vec::new();
    let mut current = String::new();
    for n in 1..=lines.len() {
        let t = lines.get(n).unwrap_or("").trim();
        if t.starts_with("[[") {
            current = format!("[[{}", t.trim_start_matches('['));
            continue;
        }
        if let Some(name) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            current = name.trim().to_string();
            tables.push((current.clone(), n, n));
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some((k, _)) = t.split_once('=') {
            let k = k.trim().trim_matches('"');
            let path = if current.is_empty() { k.to_string() } else { format!("{current}.{k}") };
            keys.push((path, n));
            if let Some(last) = tables.iter_mut().rev().find(|(name, _, _)| *name == current) {
                last.2 = n;
            }
        }
    }
    Tables { keys, tables }
}

/// Rewrites a torchtitan TOML's layout keys in place.
pub(super) fn rewrite(text: &str, l: &Launch, p: &Plan, notes: &mut Vec<Note>) -> Result<String, Error> {
    let mut lines = Lines::new(text);
    let t = tables(&lines);
    let s = &l.settings;
    let origin_of = |key: &str| -> Option<&SettingOrigin> {
        let slot = match key {
            "local_batch_size" => s.local_batch.origin.as_ref(),
            "global_batch_size" => s.global_batch.origin.as_ref(),
            _ => None,
        };
        slot.filter(|o| o.line > 0 && o.file.is_none())
    };
    let mut added = Vec::new();
    for (table, key, v) in items(p, notes) {
        let path = format!("{table}.{key}");
        let at = origin_of(key)
            .map(|o| (o.line, o.key.rsplit('.').next().unwrap_or(key).to_string()))
            .or_else(|| t.keys.iter().find(|(k, _)| *k == path).map(|(_, n)| (*n, key.to_string())));
        match at {
            Some((n, _)) if key == "pipeline_parallel_schedule" && same_kind(lines.get(n).unwrap_or(""), &v) => {}
            Some((n, leaf)) => set_line(&mut lines, n, &leaf, &v)?,
            None if is_default(key, &v, p) => {}
            None => added.push((table, key, v)),
        }
    }
    let mut appended: Vec<(&str, Vec<String>)> = Vec::new();
    for (table, key, v) in &added {
        match t.tables.iter().rev().find(|(name, _, _)| name == table) {
            Some((_, _, last)) => lines.insert_after(*last, format!("{key} = {v}")),
            None => match appended.iter_mut().find(|(name, _)| name == table) {
                Some((_, ks)) => ks.push(format!("{key} = {v}")),
                None => appended.push((table, vec![format!("{key} = {v}")])),
            },
        }
    }
    let n = lines.len();
    for (table, ks) in appended {
        lines.insert_after(n, String::new());
        lines.insert_after(n, format!("[{table}]"));
        for k in ks {
            lines.insert_after(n, k);
        }
    }
    if !added.is_empty() {
        let keys: Vec<String> = added.iter().map(|(t, k, v)| format!("{t}.{k} = {v}")).collect();
        notes.not_written(format!("added: {}", keys.join(", ")));
    }
    Ok(lines.finish())
}

/// Whether a missing key's value is torchtitan's default (`JobConfig`): degrees and the pipeline
/// micro-batch of 1, the 1F1B schedule, one stage per rank, a global batch of `local × dp`.
fn is_default(key: &str, v: &str, p: &Plan) -> bool {
    match key {
        "pipeline_parallel_schedule" => v == "\"1F1B\"",
        "pipeline_parallel_layers_per_stage" => p.vpp <= 1,
        "global_batch_size" => {
            let local = if p.pp > 1 { p.global / p.dp } else { p.mbs };
            p.global == local.saturating_mul(p.dp)
        }
        "mode" | "selective_ac_option" | "local_batch_size" | "data_parallel_shard_degree" => false,
        _ => v == "1",
    }
}

/// Whether the schedule written on `line` is of the same kind (one stage per rank, or several) as
/// `want`: a file's `GPipe` stays for a plain pipeline, its `ZBVZeroBubble` for an interleaved one.
fn same_kind(line: &str, want: &str) -> bool {
    let multi = |t: &str| ["Interleaved", "Looped", "ZBV", "DualPipe", "ZeroBubble"].iter().any(|m| t.contains(m));
    let written = line.split_once('=').map_or("", |(_, v)| v);
    multi(written) == multi(want)
}

/// Replaces the value of `key = value` on line `n`.
fn set_line(lines: &mut Lines, n: usize, key: &str, v: &str) -> Result<(), Error> {
    let body = lines.get(n).unwrap_or("").to_string();
    let Some(eq) = body.find('=') else {
        return Err(Error::invalid(key, n, "not a `key = value` line fmperf can rewrite"));
    };
    if body[..eq].trim().trim_matches('"') != key {
        return Err(Error::invalid(key, n, "not a `key = value` line fmperf can rewrite"));
    }
    let Some((s, e)) = value_at(&body, eq + 1) else {
        return Err(Error::invalid(key, n, "its value is not a plain TOML value"));
    };
    let old = &body[s..e];
    let unquote = |t: &str| t.trim_matches(|c| c == '"' || c == '\'').to_string();
    if old != v && unquote(old) != unquote(v) || old.starts_with('[') != v.starts_with('[') {
        // A string keeps the file's quotes (`'op'` stays single-quoted).
        let v = if old.starts_with('\'') && v.starts_with('"') { format!("'{}'", unquote(v)) } else { v.to_string() };
        lines.splice(n, s, e, &v);
    }
    Ok(())
}

/// The layout tables alone.
pub(super) fn layout_tables(p: &Plan, _s: &crate::LaunchScenario, notes: &mut Vec<Note>) -> String {
    render(&items(p, notes).into_iter().map(|(t, k, v)| (t, k.to_string(), v)).collect::<Vec<_>>())
}

fn render(items: &[(&str, String, String)]) -> String {
    let mut out = String::new();
    let mut seen: Vec<&str> = Vec::new();
    for (table, _, _) in items {
        if seen.contains(table) {
            continue;
        }
        seen.push(table);
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[{table}]\n"));
        for (_, k, v) in items.iter().filter(|(t, _, _)| t == table) {
            out.push_str(&format!("{k} = {v}\n"));
        }
    }
    out
}

/// A fresh torchtitan TOML: the llama3 flavour of the model's shape, training, precision, compile,
/// parallelism and activation checkpointing.
pub(super) fn fresh(h: &Header<'_>, o: &ExtendedOptions, notes: &mut Vec<Note>) -> String {
    let w = &h.scenario.workload;
    let flavour = FLAVOURS.iter().find(|f| {
        (f.dim, f.layers, f.heads, f.kv_heads, f.ffn_hidden())
            == (w.hidden, w.layers, w.heads, w.kv_heads, w.ffn_hidden)
            && w.gated_mlp
            && w.moe.is_none()
    });
    let mut items: Vec<(&str, String, String)> = vec![("model", "name".into(), "\"llama3\"".into())];
    match flavour {
        Some(f) => items.push(("model", "flavor".into(), format!("\"{}\"", f.name))),
        None => {
            notes.not_written(format!(
                "none of torchtitan's llama3 flavours (debugmodel, 8B, 70B, 405B) has this model's shape: define a \
                 flavour with width {}, {} blocks, {} heads, {} K/V heads, MLP {} and set model.flavor (fmperf cannot \
                 read this file back until then)",
                w.hidden, w.layers, w.heads, w.kv_heads, w.ffn_hidden
            ));
            items.push(("model", "flavor".into(), "\"custom\"".into()));
        }
    }
    items.push(("training", "seq_len".into(), w.seq_len.to_string()));
    match o.hardware.precision {
        Precision::Bf16 | Precision::Fp8 => {
            items.push(("training", "mixed_precision_param".into(), "\"bfloat16\"".into()))
        }
        Precision::Fp16 => items.push(("training", "mixed_precision_param".into(), "\"float16\"".into())),
        Precision::Fp32 | Precision::Tf32 => {
            items.push(("training", "mixed_precision_param".into(), "\"float32\"".into()))
        }
    }
    let compiled = o.fusion == Fusion::Fused;
    items.push(("compile", "enable".into(), compiled.to_string()));
    items.push((
        "compile",
        "components".into(),
        if o.compiled_loss || !compiled { "[\"model\", \"loss\"]".into() } else { "[\"model\"]".into() },
    ));
    if o.hardware.precision == Precision::Fp8 {
        items.push(("float8", "enable_float8_linear".into(), "true".into()));
        if o.fp8_recipe.is_transformer_engine() {
            notes.not_written(
                "FP8 with Transformer Engine: torchtitan runs torchao's float8 (cast on every pass)".into(),
            );
        }
    }
    items.extend(self::items(h.plan, notes).into_iter().map(|(t, k, v)| (t, k.to_string(), v)));
    let mut out = String::new();
    for l in h.lines() {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(
        "# Launch: NGPU=<devices per node> CONFIG_FILE=<this file> ./run_train.sh; add your dataset, tokenizer\n",
    );
    out.push_str("# (model.hf_assets_path), optimizer and checkpoint settings.\n\n");
    out.push_str(&render(&items));
    out
}
