//! MaxText written back: a command line of `key=value` overrides of `base.yml`
//! (`python3 -m MaxText.train MaxText/configs/base.yml key=value …`), or the same keys rewritten in
//! place in a MaxText command line (`key=value` words) or YAML (`key: value` lines).
//!
//! MaxText's meanings (`MaxText/configs/base.yml`): the mesh is `ici_*` (inside a slice) times
//! `dcn_*` (across slices) per axis — `data` (replicas), `fsdp` (parameters, gradients and
//! optimizer states sharded: ZeRO-3), `tensor`, `pipeline`, `context`, `expert`; the global batch
//! is `per_device_batch_size × devices × gradient_accumulation_steps` (a fractional per-device
//! batch is allowed); under pipelining a step's batch is cut into `num_pipeline_microbatches`;
//! `remat_policy` chooses what the backward recomputes (`full`, `minimal`, `save_qkv_proj`, …).

use super::lines::{Lines, value_at};
use super::{Header, Plan};
use crate::LaunchScenario;
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{ExtendedOptions, Recompute, Sharding};
use fmperf_core::vocab::{Note, NoteList};

/// MaxText's mesh axes besides data and fsdp that [`layout_items`] writes on `ici_*`; their `dcn_*`
/// degrees are set to 1 when a file being rewritten gives them.
const AXES: &[&str] = &[
    "data",
    "fsdp",
    "fsdp_transpose",
    "sequence",
    "context",
    "context_autoregressive",
    "tensor",
    "tensor_transpose",
    "tensor_sequence",
    "pipeline",
    "expert",
    "autoregressive",
];

/// The layout as MaxText keys `key=value`, with notes for what MaxText cannot express.
fn layout_items(p: &Plan, notes: &mut Vec<Note>) -> Vec<(String, String)> {
    // MaxText's expert axis is one of the batch axes: expert × data × fsdp = the data-parallel degree.
    let expert = if p.moe && p.ep > 1 && p.dp.is_multiple_of(p.ep) {
        p.ep
    } else {
        if p.moe && p.ep > 1 {
            notes.not_written(format!(
                "expert parallelism {} does not divide the data-parallel degree {}: MaxText's expert axis is one of \
                 the batch axes; ici_expert_parallelism=1 written",
                p.ep, p.dp
            ));
        }
        1
    };
    let rest = p.dp / expert;
    let (data, fsdp) = match p.sharding {
        Sharding::Ddp => (rest, 1),
        Sharding::Zero3 => {
            if p.shard_group.is_some() {
                notes.not_written(
                    "sharding inside groups (HSDP): MaxText's data × fsdp axes are priced as ZeRO-3 over every \
                     data-parallel rank; FSDP over all of them is written"
                        .into(),
                );
            }
            (1, rest)
        }
        s => {
            notes.not_written(format!(
                "sharding {}: MaxText's fsdp axis shards parameters, gradients and optimizer states (ZeRO-3); the \
                 nearest, ici_fsdp_parallelism over the data-parallel ranks, is written",
                s.as_str()
            ));
            (1, rest)
        }
    };
    notes.not_written(
        "every degree is written on the ici_* axes (one slice); for several slices or \
         nodes move the data or fsdp factor across them to dcn_data_parallelism / dcn_fsdp_parallelism"
            .into(),
    );
    if p.tp > 1 && !p.sequence_parallel {
        notes.not_written(
            "tensor parallelism without sequence parallelism: ici_tensor_parallelism (no tensor_sequence axis)".into(),
        );
    }
    let (tensor_axis, tensor_other) = if p.sequence_parallel {
        ("ici_tensor_sequence_parallelism", "ici_tensor_parallelism")
    } else {
        ("ici_tensor_parallelism", "ici_tensor_sequence_parallelism")
    };
    let mut v: Vec<(String, String)> = vec![
        ("ici_data_parallelism".into(), data.to_string()),
        ("ici_fsdp_parallelism".into(), fsdp.to_string()),
        (tensor_axis.into(), p.tp.to_string()),
        (tensor_other.into(), "1".into()),
        ("ici_pipeline_parallelism".into(), p.pp.to_string()),
        ("ici_context_parallelism".into(), p.cp.to_string()),
        ("ici_expert_parallelism".into(), expert.to_string()),
        ("dcn_data_parallelism".into(), "1".into()),
    ];
    if p.moe && p.etp != 1 {
        notes
            .not_written(format!("expert tensor parallelism {}: MaxText's experts use the model's tensor axis", p.etp));
    }
    let number = |num: u64, den: u64| -> String {
        if num.is_multiple_of(den) { (num / den).to_string() } else { format!("{}", num as f64 / den as f64) }
    };
    if p.pp > 1 {
        let micro = p.global / p.dp.saturating_mul(p.mbs).max(1);
        v.push(("per_device_batch_size".into(), number(p.global, p.devices)));
        v.push(("num_pipeline_microbatches".into(), micro.to_string()));
        v.push(("gradient_accumulation_steps".into(), "1".into()));
        notes.not_written(format!(
            "MaxText has no micro-batch size of its own under pipelining: the micro-batch {} is written as {micro} \
             pipeline micro-batches of the step's batch (num_pipeline_microbatches)",
            p.mbs
        ));
        if p.vpp > 1 {
            notes.not_written(format!(
                "{} virtual stages per rank: MaxText's circular pipeline (num_layers_per_pipeline_stage) is the \
                 nearest; not written (fmperf prices the file without interleaving)",
                p.vpp
            ));
        }
    } else {
        v.push(("per_device_batch_size".into(), number(p.mbs, p.tp.saturating_mul(p.cp))));
        v.push(("gradient_accumulation_steps".into(), p.accumulation().to_string()));
    }
    let remat = match p.recompute {
        Recompute::Full => "full",
        Recompute::None => "none",
        // The MaxText policy whose share of the forward is nearest (one reading of a policy).
        Recompute::Partial(s) => {
            let (name, f) = fmperf_core::validate::recompute_words::nearest_maxtext_policy(s.fraction());
            if (f - s.fraction()).abs() > 0.0005 {
                notes.not_written(format!(
                    "recompute {}: MaxText's nearest policy, remat_policy={name}, recomputes {:.3} of the forward",
                    s.fraction(),
                    f
                ));
            }
            name
        }
        r => {
            notes.not_written(format!(
                "recompute {}: MaxText has no policy of exactly that kind; the nearest, remat_policy=minimal (matmul \
                 outputs saved, the rest recomputed), is written",
                r.as_str()
            ));
            "minimal"
        }
    };
    v.push(("remat_policy".into(), remat.into()));
    v
}

/// The layout keys, `key=value` each.
pub(super) fn layout_keys(p: &Plan, _s: &LaunchScenario, notes: &mut Vec<Note>) -> Vec<String> {
    layout_items(p, notes).into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// A fresh MaxText command line: the model's keys, sequence length, precision and layout.
pub(super) fn fresh(h: &Header<'_>, o: &ExtendedOptions, notes: &mut Vec<Note>) -> String {
    let w = &h.scenario.workload;
    let mut keys: Vec<(&str, String)> = vec![
        ("run_name", "fmperf-best".into()),
        ("base_emb_dim", w.hidden.to_string()),
        ("base_num_decoder_layers", w.layers.to_string()),
        ("base_num_query_heads", w.heads.to_string()),
        ("base_num_kv_heads", w.kv_heads.to_string()),
        ("head_dim", w.head_dim.to_string()),
        ("base_mlp_dim", w.ffn_hidden.to_string()),
    ];
    if w.gated_mlp {
        keys.push(("mlp_activations", "[\"silu\",\"linear\"]".into()));
    }
    if let Some(v) = w.vocab {
        keys.push(("vocab_size", v.to_string()));
    }
    keys.push(("logits_via_embedding", h.scenario.workload.tied_embeddings.to_string()));
    if let Some(m) = &w.moe {
        keys.push(("num_experts", m.experts.to_string()));
        keys.push(("num_experts_per_tok", m.top_k.to_string()));
        keys.push(("base_moe_mlp_dim", m.expert_ffn.to_string()));
        if m.shared_experts > 0 {
            keys.push(("shared_experts", m.shared_experts.to_string()));
            if m.shared_ffn != m.expert_ffn {
                notes.not_written(format!(
                    "shared experts of width {}: MaxText's shared experts have the routed experts' width {}",
                    m.shared_ffn, m.expert_ffn
                ));
            }
        }
        if m.first_dense > 0 {
            keys.push(("first_num_dense_layers", m.first_dense.to_string()));
        }
        if m.moe_every > 1 {
            keys.push(("interleave_moe_layer_step", m.moe_every.to_string()));
        }
        if m.router == fmperf_core::moe_shape::Router::Sigmoid {
            keys.push(("routed_score_func", "sigmoid".into()));
        }
        notes.not_written("set MaxText's decoder_block (or model_name) for the model's family: not written".into());
    }
    if let Some(a) = &w.mla {
        keys.push(("attention_type", "mla".into()));
        if let Some(q) = a.q_lora_rank {
            keys.push(("q_lora_rank", q.to_string()));
        }
        keys.push(("kv_lora_rank", a.kv_lora_rank.to_string()));
        keys.push(("qk_nope_head_dim", a.qk_nope_head_dim.to_string()));
        keys.push(("qk_rope_head_dim", a.qk_rope_head_dim.to_string()));
        keys.push(("v_head_dim", a.v_head_dim.to_string()));
    }
    if w.mtp_layers > 0 {
        keys.push(("mtp_num_layers", w.mtp_layers.to_string()));
    }
    keys.push(("max_target_length", w.seq_len.to_string()));
    match o.hardware.precision {
        Precision::Bf16 => keys.push(("dtype", "bfloat16".into())),
        Precision::Fp8 => {
            keys.push(("dtype", "bfloat16".into()));
            keys.push(("quantization", "fp8".into()));
        }
        Precision::Fp16 => {
            notes.not_written("FP16: MaxText trains in bfloat16 or float32; bfloat16 written".into());
            keys.push(("dtype", "bfloat16".into()));
        }
        Precision::Fp32 | Precision::Tf32 => keys.push(("dtype", "float32".into())),
    }
    let layout = layout_items(h.plan, notes);
    let mut out = String::from("#!/bin/bash\n");
    for l in h.lines() {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(
        "# MaxText overrides of base.yml; set decoder_block (or model_name) and add your dataset, tokenizer\n",
    );
    out.push_str("# and output settings.\n");
    out.push_str("python3 -m MaxText.train MaxText/configs/base.yml \\\n");
    let all: Vec<String> = keys
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .chain(layout)
        .map(|(k, v)| format!("{k}={}", shell_word(&v)))
        .collect();
    let n = all.len();
    for (i, kv) in all.iter().enumerate() {
        out.push_str("    ");
        out.push_str(kv);
        out.push_str(if i + 1 < n { " \\\n" } else { "\n" });
    }
    out
}

/// A value quoted for the shell when it holds characters the shell would read.
fn shell_word(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | ',')) {
        v.to_string()
    } else {
        format!("'{v}'")
    }
}

/// Rewrites the layout keys of a MaxText command line (`key=value` words) or YAML (`key: value`
/// lines) in place; missing keys are added after the last one found (a new line of a continued
/// command, else on the same line), or at the end of a YAML.
pub(super) fn rewrite(
    text: &str,
    p: &Plan,
    _s: &LaunchScenario,
    _o: &ExtendedOptions,
    notes: &mut Vec<Note>,
) -> Result<String, Error> {
    let mut lines = Lines::new(text);
    let mut last: Option<(usize, bool)> = None;
    let mut missing = Vec::new();
    let mut items = layout_items(p, notes);
    // Axes the layout does not use but the file gives (`ici_fsdp_transpose_parallelism=2`) are set
    // to 1 too, so that the written degrees multiply to the devices.
    for axis in AXES {
        for key in [format!("dcn_{axis}_parallelism"), format!("ici_{axis}_parallelism")] {
            if !items.iter().any(|(k, _)| *k == key) && find(&lines, &key).is_some() {
                items.push((key, "1".into()));
            }
        }
    }
    for (key, v) in items {
        match find(&lines, &key) {
            Some((n, s, e, yaml)) => {
                if lines.get(n).and_then(|b| b.get(s..e)) != Some(v.as_str()) {
                    lines.splice(n, s, e, &v);
                }
                last = Some((n, yaml));
            }
            // A missing key already at base.yml's value stays unwritten (ici_* 1 but fsdp's -1; the
            // dcn_* degrees across slices as the file leaves them).
            None if (v == "1" && key != "ici_fsdp_parallelism") || key.starts_with("dcn_") => {}
            None => missing.push((key, v)),
        }
    }
    if !missing.is_empty() {
        let keys: Vec<String> = missing.iter().map(|(k, v)| format!("{k}={v}")).collect();
        notes.not_written(format!("added: {}", keys.join(" ")));
        match last {
            Some((n, false)) => {
                let body = lines.get(n).unwrap_or("").to_string();
                if body.trim_end().ends_with('\\') {
                    let ind = super::lines::indent(&body).to_string();
                    for k in keys {
                        lines.insert_after(n, format!("{ind}{k} \\"));
                    }
                } else {
                    let words: String = keys.iter().map(|k| format!(" {k}")).collect();
                    let end = body.trim_end().len();
                    lines.splice(n, end, end, &words);
                }
            }
            _ => {
                let n = lines.len();
                for (k, v) in &missing {
                    lines.insert_after(n, format!("{k}: {v}"));
                }
            }
        }
    }
    Ok(lines.finish())
}

/// The line and value range of `key=value` (a word) or `key: value` (a YAML line): `(line, start,
/// end, yaml)`; the last one wins, as MaxText's overrides do.
fn find(lines: &Lines, key: &str) -> Option<(usize, usize, usize, bool)> {
    let mut found = None;
    for n in 1..=lines.len() {
        let body = lines.get(n).unwrap_or("");
        let t = body.trim_start();
        if t.starts_with('#') {
            continue;
        }
        let ind = body.len() - t.len();
        if let Some(rest) = t.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
            let at = body.len() - rest.len();
            if let Some((s, e)) = value_at(body, at) {
                found = Some((n, s, e, true));
            }
            continue;
        }
        let _ = ind;
        let pat = format!("{key}=");
        let mut from = 0;
        while let Some(i) = body.get(from..).and_then(|r| r.find(&pat)) {
            let start = from + i;
            from = start + pat.len();
            let left = body[..start].chars().next_back();
            if left.is_some_and(|c| !(c.is_whitespace() || c == '"' || c == '\'')) {
                continue;
            }
            if let Some((s, e)) = value_at(body, from).filter(|(s, _)| *s == from) {
                found = Some((n, s, e, false));
            }
        }
    }
    found
}
