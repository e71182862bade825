//! A file's Mixture-of-Experts fields as what extended mode evaluates: the workload's
//! [`MoeShape`] (experts, widths, top-k, shared experts, which blocks are MoE, the router), its
//! multi-head latent attention ([`Mla`]) and multi-token-prediction blocks, and the MoE options
//! (expert-parallel degrees, dispatcher, capacity factor, all-to-all overlap).
//!
//! The frameworks' defaults where the file is silent, each applied with a note (Megatron-LM
//! `megatron/training/arguments.py`): `--moe-router-topk 2`, `--moe-ffn-hidden-size` = the dense
//! `--ffn-hidden-size`, `--expert-model-parallel-size 1`, `--expert-tensor-parallel-size` = the
//! tensor-parallel degree, `--moe-layer-freq 1`, the `alltoall` dispatcher, dropless routing;
//! MLA's `--kv-lora-rank 32`, `--qk-head-dim 128`, `--qk-pos-emb-head-dim 64`, `--v-head-dim 128`
//! and no query compression.

use super::settings::{Moe, SettingOrigin, Slot};
use super::{Format, Launch};
use fmperf_core::Error;
use fmperf_core::extended::moe::{Dispatcher, Load, MoeOptions, options::DEFAULT_IMBALANCE};
use fmperf_core::moe_shape::{Mla, MoeShape, Router};
use fmperf_core::vocab::{Note, NoteList};

/// The MoE part of a file's model.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpertModel {
    /// Experts, widths and pattern.
    pub shape: MoeShape,
    /// Latent attention, when the file switches it on.
    pub mla: Option<Mla>,
    /// Multi-token-prediction blocks.
    pub mtp_layers: u64,
}

/// The name of a field in the file's own language (for defaults and missing values).
fn name(f: Format, megatron: &str, hf: &str) -> String {
    match f {
        Format::HfConfig => hf.to_string(),
        Format::Megatron => format!("--{megatron}"),
        Format::NemoYaml | Format::Torchtitan | Format::MaxText | Format::DeepSpeed | Format::TrainerYaml => {
            megatron.replace('-', "_")
        }
    }
}

/// The MoE model of `m` (a model of `layers` blocks, dense MLP width `ffn` [channels], gated or
/// not). Errors name the flag or key and the rule; defaults are added to `notes`.
pub fn model(
    m: &Moe,
    f: Format,
    layers: u64,
    ffn: u64,
    gated: bool,
    notes: &mut Vec<Note>,
) -> Result<ExpertModel, Error> {
    let experts = m.experts.copied().unwrap_or(1);
    let top_k = match m.top_k.copied() {
        Some(k) => k,
        None if f == Format::HfConfig => {
            return Err(Error::MissingField { field: "num_experts_per_tok".into() });
        }
        None => {
            notes.reading(format!("{} not given: Megatron's default 2", name(f, "moe-router-topk", "")));
            2
        }
    };
    if top_k > experts {
        return Err(m.top_k.error("moe_router_topk", top_k, format!("must not exceed the routed experts {experts}")));
    }
    let expert_ffn = match m.expert_ffn_hidden.copied() {
        Some(v) => v,
        None => {
            notes.reading(format!(
                "{} not given: each expert has the dense MLP width {ffn}",
                name(f, "moe-ffn-hidden-size", "moe_intermediate_size")
            ));
            ffn
        }
    };
    let (shared_experts, shared_ffn) = match (m.shared_experts.copied(), m.shared_ffn_hidden.copied()) {
        (Some(c), None) => (c, expert_ffn),
        (Some(c), Some(w)) if w.is_multiple_of(c) => (c, w / c),
        (_, Some(w)) => (1, w),
        (None, None) => (0, 0),
    };
    let router = match m.router.get().map(|r| r.trim().to_ascii_lowercase()) {
        None => Router::Softmax,
        Some(r) => Router::from_name(&r)
            .ok_or_else(|| m.router.error("moe_router_score_function", &r, "must be softmax or sigmoid"))?,
    };
    let (first_dense, moe_every) = pattern(m, f, layers, notes)?;
    let shape = MoeShape {
        experts,
        expert_ffn,
        top_k,
        shared_experts,
        shared_ffn,
        gated,
        first_dense,
        moe_every,
        router,
        extras: Default::default(),
    };
    shape.validate(layers, "").map_err(|e| rename(e, m))?;
    let mla = mla(m, f, notes)?;
    if let Some(a) = &mla {
        a.validate("").map_err(|e| rename(e, m))?;
    }
    let mtp_layers = m.mtp_layers.copied().unwrap_or(0);
    if mtp_layers > fmperf_core::moe_shape::MAX_MTP_LAYERS {
        return Err(m.mtp_layers.error(
            "mtp_layers",
            mtp_layers,
            format!("must be at most {}", fmperf_core::moe_shape::MAX_MTP_LAYERS),
        ));
    }
    Ok(ExpertModel { shape, mla, mtp_layers })
}

/// A shape error (`moe.top_k`, `mla.kv_lora_rank`, …) named by the file's flag when there is one:
/// the core's field paths and the flags that set them. The first dense blocks come from their own
/// flag, else from the layer pattern (`--moe-layer-freq`), as the MoE interval always does.
fn rename(e: Error, m: &Moe) -> Error {
    let pattern = m.layer_pattern.origin.as_ref();
    let flags = [
        ("moe.experts", m.experts.origin.as_ref()),
        ("moe.top_k", m.top_k.origin.as_ref()),
        ("moe.expert_ffn", m.expert_ffn_hidden.origin.as_ref()),
        ("moe.shared_experts", m.shared_experts.origin.as_ref()),
        ("moe.shared_ffn", m.shared_ffn_hidden.origin.as_ref()),
        ("moe.first_dense", m.first_dense_layers.origin.as_ref().or(pattern)),
        ("moe.moe_every", pattern),
        ("mla.q_lora_rank", m.q_lora_rank.origin.as_ref()),
        ("mla.kv_lora_rank", m.kv_lora_rank.origin.as_ref()),
        ("mla.qk_nope_head_dim", m.qk_nope_head_dim.origin.as_ref()),
        ("mla.qk_rope_head_dim", m.qk_rope_head_dim.origin.as_ref()),
        ("mla.v_head_dim", m.v_head_dim.origin.as_ref()),
    ];
    at_flag(e, &flags)
}

/// `e` named by the flag or key that set its field, `flags` pairing the core's field paths with
/// where the file set them (`None`: not set, so the core's name stays): an invalid value keeps its
/// value and rule, behind the flag's line; any other error, or one at no listed field, as it is.
pub(crate) fn at_flag(e: Error, flags: &[(&str, Option<&SettingOrigin>)]) -> Error {
    let origin = flags.iter().find(|(field, _)| e.is_at(*field)).and_then(|(_, origin)| *origin);
    match (origin, &e) {
        (Some(o), Error::InvalidField { value, rule, .. }) => o.error(value, rule.clone()),
        _ => e,
    }
}

/// The latent attention of `m`: on with Megatron's `--multi-latent-attention` (NeMo / Bridge
/// `multi_latent_attention`), or in a Hugging Face config that gives `kv_lora_rank`.
fn mla(m: &Moe, f: Format, notes: &mut Vec<Note>) -> Result<Option<Mla>, Error> {
    let on = match f {
        Format::HfConfig => m.kv_lora_rank.get().is_some(),
        _ => m.mla.copied().unwrap_or(false),
    };
    if !on {
        return Ok(None);
    }
    let mut default = |slot: &Slot<u64>, flag: &str, v: u64| {
        slot.copied().unwrap_or_else(|| {
            notes.reading(format!("{} not given: Megatron's default {v}", name(f, flag, flag)));
            v
        })
    };
    let kv_lora_rank = default(&m.kv_lora_rank, "kv-lora-rank", 32);
    let qk_nope_head_dim = default(&m.qk_nope_head_dim, "qk-head-dim", 128);
    let qk_rope_head_dim = default(&m.qk_rope_head_dim, "qk-pos-emb-head-dim", 64);
    let v_head_dim = default(&m.v_head_dim, "v-head-dim", 128);
    Ok(Some(Mla { q_lora_rank: m.q_lora_rank.copied(), kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim }))
}

/// Which blocks are MoE as `(first_dense, moe_every)` ([`MoeShape`]'s pattern): the file's
/// first-k-dense count and its frequency (an integer `n`: every `n`-th block; Megatron's list
/// `([0]*3+[1]*58)`: one 0/1 entry per block, which must be k dense blocks then every n-th).
fn pattern(m: &Moe, f: Format, layers: u64, notes: &mut Vec<Note>) -> Result<(u64, u64), Error> {
    let first = m.first_dense_layers.copied().unwrap_or(0);
    let Some(text) = m.layer_pattern.get() else {
        return Ok((first, 1));
    };
    let origin = m.layer_pattern.origin.clone().unwrap_or(SettingOrigin::new("moe_layer_freq", 0));
    let t = text.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    if let Ok(n) = t.parse::<u64>() {
        if n == 0 || n > layers.max(1) {
            return Err(origin.error(
                text,
                format!("must be from 1 to the {layers} blocks, or a list of 0/1 per block such as ([0]*3+[1]*58)"),
            ));
        }
        // Megatron and DeepSeek's configs put the MoE blocks at `i % n == 0` (blocks 0, n, 2n, …);
        // Qwen's `decoder_sparse_step` and Llama 4's `interleave_moe_layer_step` at
        // `(i + 1) % n == 0`, fmperf's pattern.
        let offset_zero = matches!(f, Format::Megatron | Format::NemoYaml) || origin.key == "moe_layer_freq";
        if n > 1 && offset_zero {
            notes.reading(format!(
                "{} = {n}: the MoE blocks are priced at every {n}-th block from block {} (the file's \
                 blocks {first}, {}, … : the same pattern shifted by {} blocks)",
                origin.key,
                first.saturating_add(n - 1),
                first.saturating_add(n),
                n - 1
            ));
        }
        return Ok((first, n));
    }
    let flags = super::layer_list::expand(t, ("dense", "MoE")).map_err(|rule| origin.error(text, rule))?;
    if flags.len() as u64 != layers {
        return Err(origin.error(text, format!("lists {} blocks, the model has {layers}", flags.len())));
    }
    let found = super::layer_list::moe_pattern(&flags);
    match found {
        Some(p) => Ok(p),
        _ => Err(origin.error(
            text,
            "must be k dense blocks then every n-th block MoE (the patterns fmperf models); this list is not",
        )),
    }
}

/// The MoE options of `m` on a layout of tensor-parallel degree `tp`: the file's expert-parallel
/// degrees fixed (Megatron's defaults where absent), dispatcher, capacity factor, overlap.
pub fn options(m: &Moe, f: Format, tp: u64, notes: &mut Vec<Note>) -> Result<MoeOptions, Error> {
    let mut o = MoeOptions::default();
    o.ep = Some(m.ep.copied().unwrap_or_else(|| {
        notes.reading(format!("{} not given: 1 (no expert parallelism)", name(f, "expert-model-parallel-size", "")));
        1
    }));
    o.etp = Some(match (m.etp.copied(), f) {
        (Some(v), _) => v,
        (None, Format::Torchtitan) => 1,
        (None, _) => {
            if tp > 1 {
                notes.reading(format!(
                    "{} not given: Megatron's default, the tensor-parallel degree {tp}",
                    name(f, "expert-tensor-parallel-size", "")
                ));
            }
            tp
        }
    });
    if let Some(d) = m.dispatcher.get() {
        o.dispatcher = match d.trim().to_ascii_lowercase().as_str() {
            "alltoall" | "alltoall_seq" => Dispatcher::AllToAll,
            "allgather" => Dispatcher::AllGather,
            "flex" => Dispatcher::Hierarchical { max_domains: None },
            _ => return Err(m.dispatcher.error("moe_token_dispatcher_type", d, "must be alltoall, allgather or flex")),
        };
    }
    if let Some(c) = m.capacity_factor.copied() {
        if c <= 0.0 {
            return Err(m.capacity_factor.error("moe_expert_capacity_factor", c, "must be positive"));
        }
        o.load = Load::Capacity { factor: c, imbalance: DEFAULT_IMBALANCE };
        notes.reading(format!(
            "capacity factor {c}: tokens beyond it dropped, the router's imbalance before capping taken as {DEFAULT_IMBALANCE}"
        ));
    } else {
        notes.reading(format!("dropless routing: the busiest EP rank receives {DEFAULT_IMBALANCE}× the mean tokens"));
    }
    // As the file runs it: the stacks' default is no overlap (Megatron-Core's
    // `overlap_moe_expert_parallel_comm=False`) unless the file switches it on.
    o.a2a_overlap = m.a2a_overlap.copied().unwrap_or(false).into();
    o.host = super::moe_host::host_flags(m, f, notes)?;
    o.shared_overlap = super::moe_host::shared_overlap(m, &o, notes)?;
    Ok(o)
}

/// Lists the MoE values a file sets that change nothing in fmperf's MoE model (called for MoE
/// files): latent-attention widths without latent attention switched on. (Grouped GEMMs, the
/// fusions, the balancing loss and CUDA graphs change the layer's host calls: read by
/// [`super::moe_host`], which notes them.)
pub fn account(l: &mut Launch) {
    let m = l.settings.moe.clone();
    if l.format != Format::HfConfig && !m.mla.copied().unwrap_or(false) {
        for slot in [&m.q_lora_rank, &m.kv_lora_rank, &m.qk_nope_head_dim, &m.qk_rope_head_dim, &m.v_head_dim] {
            if let (Some(o), Some(v)) = (&slot.origin, slot.copied()) {
                l.unused(o.key.clone(), v.to_string(), "no effect without multi-head latent attention switched on");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_lists_expand_and_fit() {
        let mut m = Moe::default();
        m.layer_pattern.put("([0]*3+[1]*58)".into(), &SettingOrigin::new("--moe-layer-freq", 4));
        let mut notes = Vec::new();
        assert_eq!(pattern(&m, Format::Megatron, 61, &mut notes).unwrap(), (3, 1));
        m.layer_pattern.put("[0,1]*4".into(), &SettingOrigin::new("--moe-layer-freq", 4));
        assert_eq!(pattern(&m, Format::Megatron, 8, &mut notes).unwrap(), (0, 2));
        let e = pattern(&m, Format::Megatron, 9, &mut notes).unwrap_err();
        assert_eq!(e.field(), Some("--moe-layer-freq"));
        assert!(e.to_string().contains("lists 8 blocks, the model has 9"), "{e}");
        m.layer_pattern.put("[1,0,0,1]".into(), &SettingOrigin::new("--moe-layer-freq", 4));
        assert!(pattern(&m, Format::Megatron, 4, &mut notes).is_err());
    }
}
