//! NeMo and Megatron-Bridge YAML written back: the layout keys of a NeMo 1 (`trainer:`/`model:`)
//! or Bridge (`model:`/`train:`/`optimizer:`) file rewritten in place, keeping indentation and
//! comments, or a fresh Bridge file of override keys.

use super::lines::{Lines, indent, value_at};
use super::{Header, Plan};
use crate::Launch;
use crate::settings::{SettingOrigin, Slot};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{ExtendedOptions, Fp8Recipe, Recompute, Sharding};
use fmperf_core::vocab::{Note, NoteList};

/// Block-mapping keys of a YAML text: dotted path → (line, indent), in file order.
pub(super) fn paths(lines: &Lines) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    for n in 1..=lines.len() {
        let body = lines.get(n).unwrap_or("");
        let t = body.trim_start();
        if t.is_empty() || t.starts_with('#') || t.starts_with('-') || t.starts_with("---") {
            continue;
        }
        let ind = body.len() - t.len();
        let Some(colon) = key_colon(t) else { continue };
        let key = t[..colon].trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        while stack.last().is_some_and(|(i, _)| *i >= ind) {
            stack.pop();
        }
        let mut path: Vec<&str> = stack.iter().map(|(_, k)| k.as_str()).collect();
        path.push(&key);
        out.push((path.join("."), n, ind));
        stack.push((ind, key));
    }
    out
}

/// Byte index of the `:` that ends a plain key (followed by a space or the end).
fn key_colon(t: &str) -> Option<usize> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b':' if b.get(i + 1).is_none_or(|c| *c == b' ' || *c == b'\t') => return Some(i),
            b' ' | b'\t' | b'{' | b'[' | b'#' => return None,
            _ => i += 1,
        }
    }
    None
}

/// Which keys a NeMo-family file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    /// NeMo 1 `megatron_gpt_config.yaml`: everything under `model:`.
    Nemo1,
    /// Megatron-Bridge: `model:`, `train:`, `optimizer:`, `ddp:`.
    Bridge,
}

impl Family {
    fn path(self, what: &str) -> String {
        let nemo1 = self == Family::Nemo1;
        match what {
            "mbs" if !nemo1 => "train.micro_batch_size".into(),
            "gbs" if !nemo1 => "train.global_batch_size".into(),
            "mbs" => "model.micro_batch_size".into(),
            "gbs" => "model.global_batch_size".into(),
            "granularity" if nemo1 => "model.activations_checkpoint_granularity".into(),
            "method" if nemo1 => "model.activations_checkpoint_method".into(),
            "num_layers" if nemo1 => "model.activations_checkpoint_num_layers".into(),
            "granularity" => "model.recompute_granularity".into(),
            "method" => "model.recompute_method".into(),
            "num_layers" => "model.recompute_num_layers".into(),
            other => format!("model.{other}"),
        }
    }
}

/// The wanted `(path, value)` of a plan for `family`, with the slot whose origin names where the
/// file writes it (when it does).
pub(super) fn wanted<'a>(
    f: Family,
    p: &Plan,
    l: Option<&'a Launch>,
    notes: &mut Vec<Note>,
) -> Vec<(String, String, Option<&'a SettingOrigin>)> {
    let s = l.map(|l| &l.settings);
    let o = |slot: Option<&'a Slot<u64>>| slot.and_then(|s| s.origin.as_ref());
    let mut v: Vec<(String, String, Option<&'a SettingOrigin>)> = vec![
        (f.path("tensor_model_parallel_size"), p.tp.to_string(), o(s.map(|s| &s.tp))),
        (f.path("pipeline_model_parallel_size"), p.pp.to_string(), o(s.map(|s| &s.pp))),
        (f.path("context_parallel_size"), p.cp.to_string(), o(s.map(|s| &s.cp))),
        (
            f.path("virtual_pipeline_model_parallel_size"),
            if p.vpp > 1 { p.vpp.to_string() } else { "null".into() },
            o(s.map(|s| &s.vpp)),
        ),
    ];
    if p.moe {
        v.push((f.path("expert_model_parallel_size"), p.ep.to_string(), o(s.map(|s| &s.moe.ep))));
        v.push((f.path("expert_tensor_parallel_size"), p.etp.to_string(), o(s.map(|s| &s.moe.etp))));
    }
    v.push((f.path("mbs"), p.mbs.to_string(), o(s.map(|s| &s.mbs))));
    v.push((f.path("gbs"), p.global.to_string(), o(s.map(|s| &s.global_batch))));
    let rec = s.and_then(|s| s.recompute.origin.as_ref());
    let (gran, full) = match p.recompute {
        Recompute::None => ("null", false),
        Recompute::Selective => ("selective", false),
        Recompute::Op => {
            notes.not_written(
                "recompute op (torchtitan's operator-level checkpointing) has no NeMo key: Megatron's selective \
                 recomputation is written"
                    .into(),
            );
            ("selective", false)
        }
        Recompute::Full | Recompute::Partial(_) => ("full", true),
    };
    v.push((f.path("granularity"), gran.into(), rec));
    if let Recompute::Partial(share) = p.recompute {
        // The block method on the share of a model chunk's blocks (at least one).
        let k = p.block_recompute_layers(share.fraction());
        v.push((f.path("method"), "block".into(), None));
        v.push((f.path("num_layers"), k.to_string(), None));
    } else if full {
        v.push((f.path("method"), "uniform".into(), None));
        v.push((f.path("num_layers"), "1".into(), None));
    }
    v.push((
        f.path("sequence_parallel"),
        p.sequence_parallel.to_string(),
        s.and_then(|s| s.sequence_parallel.origin.as_ref()),
    ));
    let sh = s.and_then(|s| s.sharding.origin.as_ref());
    if p.shard_group.is_some() && p.sharding == Sharding::Zero3 {
        notes.not_written(
            "sharding inside groups (HSDP) has no NeMo key fmperf writes: full sharding is written".into(),
        );
    }
    match f {
        Family::Nemo1 => {
            let name = match p.sharding {
                Sharding::Ddp => "fused_adam",
                Sharding::Zero1 => "mcore_distributed_optim",
                Sharding::Zero2 => "distributed_fused_adam",
                s => {
                    notes.not_written(format!(
                        "sharding {}: a NeMo 1 file shards at most optimizer states and gradients \
                         (distributed_fused_adam, Apex's ZeRO-2); its FSDP switches are not written",
                        s.as_str()
                    ));
                    "distributed_fused_adam"
                }
            };
            v.push(("model.optim.name".into(), name.into(), sh.filter(|o| o.key.ends_with("optim.name"))));
        }
        Family::Bridge => {
            let dist = p.sharding != Sharding::Ddp;
            v.push((
                "optimizer.use_distributed_optimizer".into(),
                dist.to_string(),
                sh.filter(|o| o.key.ends_with("use_distributed_optimizer")),
            ));
            if matches!(p.sharding, Sharding::Zero2 | Sharding::Zero3) {
                v.push(("ddp.use_megatron_fsdp".into(), "true".into(), None));
                let st = if p.sharding == Sharding::Zero2 { "optim_grads" } else { "optim_grads_params" };
                v.push(("ddp.data_parallel_sharding_strategy".into(), st.into(), None));
            }
        }
    }
    v
}

/// Replaces the value on line `n` of the key `leaf`; an error when the line is not `leaf: value`.
fn set_line(lines: &mut Lines, n: usize, leaf: &str, v: &str, key: &str) -> Result<(), Error> {
    let body = lines.get(n).unwrap_or("").to_string();
    let t = body.trim_start();
    let ind = body.len() - t.len();
    let colon = key_colon(t).map(|c| ind + c);
    let ok = colon.is_some_and(|c| body[ind..c].trim().trim_matches(|q| q == '"' || q == '\'') == leaf);
    let Some(c) = colon.filter(|_| ok) else {
        return Err(Error::invalid(key, n, "not a `key: value` line that fmperf can rewrite in place"));
    };
    match value_at(&body, c + 1) {
        Some((s, e)) => {
            if &body[s..e] != v {
                lines.splice(n, s, e, v);
            }
        }
        None => {
            let rest = body[c + 1..].trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(Error::invalid(key, n, "its value is not a plain scalar fmperf can rewrite"));
            }
            lines.splice(n, c + 1, c + 1, &format!(" {v}"));
        }
    }
    Ok(())
}

/// Rewrites a NeMo 1 or Megatron-Bridge YAML's layout keys in place.
pub(super) fn rewrite(text: &str, l: &Launch, p: &Plan, notes: &mut Vec<Note>) -> Result<String, Error> {
    let mut lines = Lines::new(text);
    let map = paths(&lines);
    let has = |pre: &str| map.iter().any(|(k, _, _)| k.starts_with(pre));
    let family =
        if has("train.") || has("optimizer.") || has("ddp.") || !has("model.micro_batch_size") && !has("trainer.") {
            Family::Bridge
        } else {
            Family::Nemo1
        };
    let mut added: Vec<(String, String)> = Vec::new();
    // The last line written in each parent mapping, next to which its missing keys go.
    let mut near: Vec<(String, usize)> = Vec::new();
    let mut new_sections: Vec<(String, Vec<String>)> = Vec::new();
    for (path, v, origin) in wanted(family, p, Some(l), notes) {
        let parent = path.rsplit_once('.').map_or("", |(p, _)| p).to_string();
        let at = origin
            .filter(|o| o.line > 0 && o.file.is_none() && o.key.contains('.') && !o.key.starts_with('#'))
            .map(|o| (o.line, o.key.clone()))
            .or_else(|| map.iter().find(|(k, _, _)| *k == path).map(|(k, n, _)| (*n, k.clone())));
        match at {
            Some((n, key)) => {
                let leaf = key.rsplit('.').next().unwrap_or(&key).to_string();
                set_line(&mut lines, n, &leaf, &v, &key)?;
                near.retain(|(p, _)| *p != parent);
                near.push((parent, n));
            }
            None if v == "null"
                || (v == "false" && path.ends_with("sequence_parallel"))
                || (v == "1" && is_degree(&path)) => {}
            None => {
                let leaf = path.rsplit('.').next().unwrap_or(&path).to_string();
                if let Some((_, n)) = near.iter().find(|(p, _)| *p == parent) {
                    let ind = indent(lines.get(*n).unwrap_or("")).to_string();
                    lines.insert_after(*n, format!("{ind}{leaf}: {v}"));
                } else if map.iter().any(|(k, _, _)| *k == parent) {
                    insert(&mut lines, &map, &path, &v);
                } else {
                    match new_sections.iter_mut().find(|(s, _)| *s == parent) {
                        Some((_, keys)) => keys.push(format!("{leaf}: {v}")),
                        None => new_sections.push((parent.clone(), vec![format!("{leaf}: {v}")])),
                    }
                }
                added.push((path, v));
            }
        }
    }
    let end = lines.len();
    for (section, keys) in new_sections {
        // A new mapping at the end (its path one level per indentation step).
        let mut prefix = String::new();
        for part in section.split('.').filter(|s| !s.is_empty()) {
            lines.insert_after(end, format!("{prefix}{part}:"));
            prefix.push_str("  ");
        }
        for k in keys {
            lines.insert_after(end, format!("{prefix}{k}"));
        }
    }
    if !added.is_empty() {
        let keys: Vec<String> = added.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        notes.not_written(format!("added: {}", keys.join(", ")));
    }
    Ok(lines.finish())
}

pub(super) fn is_degree(path: &str) -> bool {
    path.ends_with("_parallel_size") && !path.ends_with("expert_tensor_parallel_size")
}

/// Inserts `path: v` at the end of its parent's block (with the children's indentation), or a new
/// section at the end of the file.
fn insert(lines: &mut Lines, map: &[(String, usize, usize)], path: &str, v: &str) {
    let (parent, leaf) = path.rsplit_once('.').unwrap_or(("", path));
    let Some((_, pline, pind)) = map.iter().find(|(k, _, _)| k == parent) else {
        return;
    };
    let children: Vec<&(String, usize, usize)> =
        map.iter().filter(|(k, n, _)| *n > *pline && k.starts_with(&format!("{parent}."))).collect();
    let child_indent = map
        .iter()
        .find(|(k, n, _)| {
            *n > *pline
                && k.starts_with(&format!("{parent}."))
                && k.matches('.').count() == parent.matches('.').count() + 1
        })
        .map_or(pind + 2, |(_, _, i)| *i);
    // The block ends before the first later line indented no deeper than the parent.
    let mut end = children.iter().map(|(_, n, _)| *n).max().unwrap_or(*pline);
    let mut n = end + 1;
    while let Some(body) = lines.get(n) {
        let t = body.trim_start();
        if !t.is_empty() && !t.starts_with('#') && body.len() - t.len() <= *pind {
            break;
        }
        if !t.is_empty() && !t.starts_with('#') {
            end = n;
        }
        n += 1;
    }
    lines.insert_after(end, format!("{}{leaf}: {v}", " ".repeat(child_indent)));
}

/// Only the layout keys, as a Bridge YAML.
pub(super) fn layout_keys(p: &Plan, notes: &mut Vec<Note>) -> String {
    let items: Vec<(String, String)> =
        wanted(Family::Bridge, p, None, notes).into_iter().map(|(k, v, _)| (k, v)).collect();
    grouped(&items)
}

/// A fresh Megatron-Bridge YAML: the model, precision, layout and batch as override keys.
pub(super) fn fresh(h: &Header<'_>, o: &ExtendedOptions, notes: &mut Vec<Note>) -> String {
    let w = &h.scenario.workload;
    let p = h.plan;
    let mut model: Vec<(String, String)> = vec![
        ("num_layers".into(), w.layers.to_string()),
        ("hidden_size".into(), w.hidden.to_string()),
        ("ffn_hidden_size".into(), w.ffn_hidden.to_string()),
        ("num_attention_heads".into(), w.heads.to_string()),
        ("num_query_groups".into(), w.kv_heads.to_string()),
    ];
    if w.head_dim != w.hidden / w.heads.max(1) {
        model.push(("kv_channels".into(), w.head_dim.to_string()));
    }
    model.push(("seq_length".into(), w.seq_len.to_string()));
    model.push(("gated_linear_unit".into(), w.gated_mlp.to_string()));
    model.push(("share_embeddings_and_output_weights".into(), h.scenario.workload.tied_embeddings.to_string()));
    if let Some(v) = w.vocab {
        model.push(("vocab_size".into(), v.to_string()));
    }
    if let Some(m) = &w.moe {
        model.push(("num_moe_experts".into(), m.experts.to_string()));
        model.push(("moe_router_topk".into(), m.top_k.to_string()));
        model.push(("moe_ffn_hidden_size".into(), m.expert_ffn.to_string()));
        if m.shared_experts > 0 {
            model.push((
                "moe_shared_expert_intermediate_size".into(),
                m.shared_experts.saturating_mul(m.shared_ffn).to_string(),
            ));
        }
        if m.moe_blocks(w.layers) != w.layers {
            let list: Vec<&str> = (0..w.layers)
                .map(|i| {
                    let k = m.moe_every.max(1);
                    if i >= m.first_dense && (i - m.first_dense) % k == k - 1 { "1" } else { "0" }
                })
                .collect();
            model.push(("moe_layer_freq".into(), format!("[{}]", list.join(", "))));
        }
        if m.router == fmperf_core::moe_shape::Router::Sigmoid {
            model.push(("moe_router_score_function".into(), "sigmoid".into()));
        }
        model.push(("moe_grouped_gemm".into(), "true".into()));
        model.push(("moe_token_dispatcher_type".into(), "alltoall".into()));
    }
    if let Some(a) = &w.mla {
        model.push(("multi_latent_attention".into(), "true".into()));
        if let Some(q) = a.q_lora_rank {
            model.push(("q_lora_rank".into(), q.to_string()));
        }
        model.push(("kv_lora_rank".into(), a.kv_lora_rank.to_string()));
        model.push(("qk_head_dim".into(), a.qk_nope_head_dim.to_string()));
        model.push(("qk_pos_emb_head_dim".into(), a.qk_rope_head_dim.to_string()));
        model.push(("v_head_dim".into(), a.v_head_dim.to_string()));
    }
    if w.mtp_layers > 0 {
        model.push(("mtp_num_layers".into(), w.mtp_layers.to_string()));
    }
    match o.hardware.precision {
        Precision::Bf16 => model.push(("bf16".into(), "true".into())),
        Precision::Fp16 => model.push(("fp16".into(), "true".into())),
        Precision::Fp8 => {
            model.push(("bf16".into(), "true".into()));
            model.push(("fp8".into(), "hybrid".into()));
            if o.fp8_recipe == Fp8Recipe::TransformerEngineFp8Weights {
                model.push(("fp8_param_gather".into(), "true".into()));
            } else if !o.fp8_recipe.is_transformer_engine() {
                notes.not_written(format!(
                    "FP8 recipe {} is not Transformer Engine's; Megatron-Bridge runs FP8 with Transformer Engine (fp8: hybrid)",
                    o.fp8_recipe.as_str()
                ));
            }
        }
        Precision::Fp32 | Precision::Tf32 => {
            notes.not_written("FP32 training: no precision key written (Megatron's default)".into())
        }
    }
    let mut out = String::new();
    for l in h.lines() {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str("# Megatron-Bridge override keys; add your dataset, tokenizer, optimizer and checkpoint settings.\n");
    let mut items: Vec<(String, String)> = model.into_iter().map(|(k, v)| (format!("model.{k}"), v)).collect();
    items.extend(wanted(Family::Bridge, p, None, notes).into_iter().map(|(k, v, _)| (k, v)));
    out.push_str(&grouped(&items));
    out
}

/// `section.key: value` items as YAML, one block per section in the order of first appearance.
fn grouped(items: &[(String, String)]) -> String {
    let mut sections: Vec<(&str, Vec<(&str, &str)>)> = Vec::new();
    for (path, v) in items {
        let (sec, leaf) = path.split_once('.').unwrap_or(("", path.as_str()));
        match sections.iter_mut().find(|(s, _)| *s == sec) {
            Some((_, keys)) => keys.push((leaf, v)),
            None => sections.push((sec, vec![(leaf, v)])),
        }
    }
    let mut out = String::new();
    for (sec, keys) in sections {
        out.push_str(&format!("{sec}:\n"));
        for (k, v) in keys {
            out.push_str(&format!("  {k}: {v}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_indentation() {
        let l = Lines::new("# c\nmodel:\n  a: 1\n  optim:\n    name: x\ntrain:\n  b: 2\n");
        let p: Vec<(String, usize)> = paths(&l).into_iter().map(|(k, n, _)| (k, n)).collect();
        assert_eq!(
            p,
            [
                ("model".into(), 2),
                ("model.a".into(), 3),
                ("model.optim".into(), 4),
                ("model.optim.name".into(), 5),
                ("train".into(), 6),
                ("train.b".into(), 7)
            ]
        );
    }
}
