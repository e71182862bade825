//! Validation against measured Mixture-of-Experts training runs: a file of the shape of
//! `data/measured-moe-runs.json` (given as text; core reads no files) is read row by row, each
//! row's model, system, parallel layout (EP/ETP included), routing and dispatcher are interpreted
//! from its fields and words, the configuration is evaluated in extended mode, and the predicted
//! figure is put in the row's own terms: model TFLOP/s per device under the source's FLOP
//! convention ([`super::moe_flops`]) when the row reports one, else tokens/s per device; peak
//! memory where the row measured it.
//!
//! Interpretation rules (each applied rule is listed in the row's notes):
//! * experts: `num_experts`, `top_k`, `moe_ffn_hidden`; `shared_ffn_hidden` is the TOTAL shared
//!   width (÷ `shared_experts` per expert); dense layers lead (`dense_layers`), or alternate when
//!   there are as many dense as MoE layers and the words say "interleave"/"alternat";
//! * MLA dims from `mla`; `head_dim` when given; `mtp_layers` null → 0;
//! * precision words with "fp8" (FP8-CS, MXFP8, blockwise) → FP8, else BF16;
//! * recompute words: "full" → full, "selective"/"remat" → selective, none/blank → none;
//! * FSDP words (not null, naming FSDP) → ZeRO-3, else the distributed optimizer (ZeRO-1);
//! * dispatcher words: "deepep"/"hybridep"/"flex" → hierarchical (node-limited to `M` domains when
//!   the router words say "top-M groups"), "allgather" → all-gather, else all-to-all; "overlap"
//!   without "no"/"=0" → all-to-all overlap;
//! * routing: `forced_balance` → forced; `token_drop` with `capacity_factor` → capacity; else
//!   dropless with the default imbalance;
//! * attention kernel: read from the framework, notes, tags, parallel words and source as for
//!   dense rows ([`super::kernel_words::read_attention_kernel`]: torchtitan → FlashAttention-2
//!   class, else the part's own-generation kernel).

use serde_json::Value;

use super::moe_flops::{FlopRules, model_flops_per_token};
use crate::catalog::{self, MappingOptions, Precision};
use crate::extended::memory::MemoryKind;
use crate::extended::moe::{Dispatcher, Load, Mla, MoeOptions, MoeShape, Router};
use crate::extended::{ExtendedOptions, Hardware, Layout, Recompute, Sharding, Workload, evaluate};

/// The MoE runs fmperf ships (53 rows from nine sources; each row names its source).
pub const MOE_RUNS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/measured-moe-runs.json"));

/// GiB in GB.
const GIB_GB: f64 = 1.073_741_824;

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MoeMetric {
    /// Model TFLOP/s per device under the row's convention.
    TflopsPerDevice,
    /// Tokens per second per device (measured or derived by the file).
    TokensPerDevice,
}

/// One row read and set up for evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct MoeRunSetup {
    /// The model.
    pub workload: Workload,
    /// System id of the catalog.
    pub hardware_id: String,
    /// Training precision of the linear layers.
    pub precision: Precision,
    /// How the system is mapped (domain used by the job, NIC fallback).
    pub mapping: MappingOptions,
    /// The layout with its expert degrees.
    pub layout: Layout,
    /// Extended mode's switches for the row.
    pub options: ExtendedOptions,
    /// The row's counting rules (`None`: it reports tokens only).
    pub rules: Option<FlopRules>,
    /// What is compared and the measured value.
    pub metric: MoeMetric,
    /// The measured value [TFLOP/s or tokens/s per device].
    pub measured: f64,
    /// Measured peak allocated memory [GB], when the row states it.
    pub measured_memory_gb: Option<f64>,
    /// Rules applied, in words.
    pub notes: Vec<String>,
}

/// The prediction of one row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MoeRowResult {
    /// Row id.
    pub id: String,
    /// Source title.
    pub source: String,
    /// Compared metric (`None`: skipped).
    pub metric: Option<MoeMetric>,
    /// Measured value.
    pub measured: Option<f64>,
    /// Predicted value.
    pub predicted: Option<f64>,
    /// `predicted / measured − 1`.
    pub error: Option<f64>,
    /// Measured peak memory [GB].
    pub measured_memory_gb: Option<f64>,
    /// Predicted peak allocated memory of the device with the most [GB] (what the file measures).
    pub predicted_memory_gb: Option<f64>,
    /// The expert layout evaluated `(ep, etp, edp)`.
    pub experts: Option<(u64, u64, u64)>,
    /// Why the row was skipped, or the rules applied.
    pub notes: Vec<String>,
}

fn int(v: &Value, key: &str) -> Option<u64> {
    let x = &v[key];
    x.as_u64().or_else(|| x.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1e15).map(|f| f as u64))
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v[key].as_f64().filter(|x| x.is_finite())
}

fn words(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.to_ascii_lowercase(),
        Value::Null => String::new(),
        other => other.to_string().to_ascii_lowercase(),
    }
}

/// The integer after `top-` and before `group` in router words ("top-4 groups") [domains].
fn group_limit(router: &str) -> Option<u64> {
    let i = router.find(" group")?;
    let before = &router[..i];
    let digits: String = before.rsplit("top-").next()?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// Whether words switch an overlap on ("+ EP A2A overlap") rather than off ("no … overlap",
/// "A2A_OVERLAP=0").
fn overlap_on(w: &str) -> bool {
    w.contains("overlap") && !w.contains("no ") && !w.contains("overlap=0") && !w.contains("no a2a")
}

/// NIC bandwidth assumed for a system whose catalog entry states none [GB/s]: one 400 Gb/s NIC per
/// GPU, the build of the GB200 NVL72 systems in the measured rows' sources (DGX GB200: four
/// ConnectX-7 400 Gb/s per four-GPU tray).
const FALLBACK_NIC_GBPS: f64 = 50.0;

/// Mapping options for a row's system: the catalog's, with [`FALLBACK_NIC_GBPS`] when it lists no
/// scale-out bandwidth (noted).
fn mapping_for(sys: &catalog::CatalogSystem, notes: &mut Vec<String>) -> MappingOptions {
    let plain = MappingOptions::default();
    if Hardware::from_catalog(sys, Precision::Bf16, true, &plain).is_ok() {
        return plain;
    }
    notes.push(format!("{} lists no NIC bandwidth: {FALLBACK_NIC_GBPS} GB/s per GPU assumed", sys.id));
    MappingOptions { scale_out_gbps: Some(FALLBACK_NIC_GBPS), ..plain }
}

/// The fast-domain size a job of `devices` uses on domains of `domain` devices: the largest
/// divisor of the job that fits in a domain (a 256-GPU job on NVL72 racks runs 64 GPUs per rack,
/// 16 of its 18 compute trays).
fn job_domain(domain: u64, devices: u64) -> u64 {
    (1..=domain.min(devices).max(1)).rev().find(|d| devices.is_multiple_of(*d)).unwrap_or(1)
}

fn model_of(m: &Value, notes: &mut Vec<String>) -> Result<Workload, String> {
    let need = |k: &str| int(m, k).filter(|x| *x > 0).ok_or_else(|| format!("model.{k} not stated"));
    let (layers, hidden, heads, seq) = (need("layers")?, need("hidden")?, need("heads")?, need("seq_len")?);
    let experts = need("num_experts")?;
    let top_k = need("top_k")?;
    let expert_ffn = need("moe_ffn_hidden")?;
    let moe_layers = int(m, "moe_layers").unwrap_or(layers);
    let dense_layers = int(m, "dense_layers").unwrap_or(layers.saturating_sub(moe_layers));
    let all = format!("{} {} {}", words(m, "name"), words(m, "router"), words(m, "shape_source"));
    let ffn_words = words(m, "ffn_type");
    let gated = !ffn_words.contains("non-gated") && (ffn_words.contains("glu") || ffn_words.contains("gated"));
    let shared = int(m, "shared_experts").unwrap_or(0);
    let shared_total = int(m, "shared_ffn_hidden").unwrap_or(0);
    if shared > 0 && shared_total == 0 {
        return Err("shared_experts given without shared_ffn_hidden".into());
    }
    let interleaved = dense_layers > 0 && dense_layers == moe_layers && layers == 2 * moe_layers
        || all.contains("interleave")
        || all.contains("alternat")
        || all.contains("maverick");
    let (first_dense, moe_every) = if interleaved && dense_layers == moe_layers {
        notes.push("dense and MoE layers alternate".into());
        (0, 2)
    } else {
        (dense_layers, 1)
    };
    let moe = MoeShape {
        experts,
        expert_ffn,
        top_k,
        shared_experts: shared,
        shared_ffn: if shared > 0 { shared_total / shared } else { 0 },
        gated,
        first_dense,
        moe_every,
        router: if words(m, "router").contains("sigmoid") { Router::Sigmoid } else { Router::Softmax },
    };
    let mla = match &m["mla"] {
        Value::Object(_) => {
            let x = &m["mla"];
            Some(Mla {
                q_lora_rank: int(x, "q_lora_rank"),
                kv_lora_rank: int(x, "kv_lora_rank").ok_or("mla.kv_lora_rank not stated")?,
                qk_nope_head_dim: int(x, "qk_nope_head_dim").ok_or("mla.qk_nope_head_dim not stated")?,
                qk_rope_head_dim: int(x, "qk_rope_head_dim").unwrap_or(0),
                v_head_dim: int(x, "v_head_dim").ok_or("mla.v_head_dim not stated")?,
            })
        }
        _ => None,
    };
    let mtp = match int(m, "mtp_layers") {
        Some(n) => n,
        None => {
            notes.push("mtp_layers unknown: none".into());
            0
        }
    };
    let w = Workload {
        seq_len: seq,
        hidden,
        heads,
        kv_heads: int(m, "kv_heads").unwrap_or(heads),
        head_dim: int(m, "head_dim").unwrap_or(hidden / heads),
        layers,
        ffn_hidden: int(m, "ffn_hidden_dense").unwrap_or(expert_ffn),
        gated_mlp: gated,
        vocab: int(m, "vocab"),
        moe: Some(moe),
        mla,
        mtp_layers: mtp,
        tied_embeddings: false,
    };
    w.validate().map_err(|e| format!("model: {e}"))?;
    Ok(w)
}

/// Reads one row (see the module documentation); `Err` is the reason it is skipped.
pub fn interpret_moe_row(row: &Value) -> Result<MoeRunSetup, String> {
    let mut notes = Vec::new();
    let workload = model_of(&row["model"], &mut notes)?;
    let hardware_id = row["hardware_id"].as_str().ok_or("hardware_id not stated")?.to_string();
    let sys = catalog::find_system(&hardware_id).map_err(|e| format!("hardware: {e}"))?;
    let prec_words = words(row, "precision");
    let precision = if prec_words.contains("fp8") { Precision::Fp8 } else { Precision::Bf16 };
    if sys.peak_tflops.fp8.is_none() && precision == Precision::Fp8 {
        return Err(format!("{hardware_id} lists no FP8 rate"));
    }

    let p = &row["parallel"];
    let (tp, pp, cp) = (int(p, "tp").unwrap_or(1), int(p, "pp").unwrap_or(1), int(p, "cp").unwrap_or(1));
    let dp = int(p, "dp").ok_or("parallel.dp not stated")?;
    let (ep, etp) = (int(p, "ep").unwrap_or(1).max(1), int(p, "etp").unwrap_or(1).max(1));
    let b = &row["batch"];
    let gbs = int(b, "global_batch_seqs").ok_or("batch.global_batch_seqs not stated")?;
    let mbs = int(b, "micro_batch").unwrap_or(1).max(1);
    let n = [tp, pp, cp, dp].iter().try_fold(1u64, |a, x| a.checked_mul(*x)).ok_or("degrees too large")?;
    if let Some(devices) = int(row, "num_devices").filter(|d| *d != n) {
        return Err(format!("num_devices {devices} differs from tp·pp·cp·dp = {n}"));
    }
    let mut mapping = mapping_for(sys, &mut notes);
    let domain = Hardware::from_catalog(sys, precision, true, &mapping).map_err(|e| e.to_string())?.domain_size();
    let used = job_domain(domain, n);
    if used != domain {
        notes.push(format!("{n} devices on domains of {domain}: {used} per domain"));
        mapping.domain_size = Some(used);
    }
    let hw = Hardware::from_catalog(sys, precision, true, &mapping).map_err(|e| e.to_string())?;
    let layout = Layout::placed(tp, cp, pp, dp, mbs, gbs, hw.domain_size()).with_experts(ep, etp);

    let rec = words(p, "recompute");
    let recompute = if rec.contains("full") {
        Recompute::Full
    } else if rec.contains("selective") || rec.contains("remat") || rec.contains("custom") {
        Recompute::Selective
    } else {
        Recompute::None
    };
    let fsdp = words(p, "fsdp");
    let sharding = if fsdp.contains("fsdp") { Sharding::Zero3 } else { Sharding::Zero1 };
    let disp = words(p, "dispatcher");
    let router = words(&row["model"], "router");
    let dispatcher = if disp.contains("deepep") || disp.contains("hybridep") || disp.contains("flex") {
        Dispatcher::Hierarchical { max_domains: group_limit(&router) }
    } else if disp.contains("allgather") || disp.contains("all-gather") {
        Dispatcher::AllGather
    } else {
        Dispatcher::AllToAll
    };
    let r = &row["routing"];
    let load = if r["forced_balance"].as_bool() == Some(true) {
        Load::Forced
    } else if r["token_drop"].as_bool() == Some(true) {
        let c = num(r, "capacity_factor").unwrap_or(1.0);
        notes.push(format!(
            "capacity factor {c}, router imbalance {}",
            super::super::extended::moe::options::DEFAULT_IMBALANCE
        ));
        Load::Capacity { factor: c, imbalance: crate::extended::moe::options::DEFAULT_IMBALANCE }
    } else {
        notes.push("dropless routing at the default imbalance".into());
        Load::DEFAULT
    };
    let moe = MoeOptions { load, dispatcher, a2a_overlap: overlap_on(&disp), ..MoeOptions::default() };
    let interleave = int(p, "vpp").unwrap_or(1).max(1);
    // The attention kernel, from the row's words as for dense rows (framework, notes, source).
    let attention_text = ["framework", "notes", "tags"].iter().map(|k| words(row, k)).collect::<Vec<_>>().join("; ")
        + "; "
        + &["title", "where", "url"].iter().map(|k| words(&row["source"], k)).collect::<Vec<_>>().join("; ")
        + "; "
        + &words(p, "other");
    let (attention_kernel, attention_note) =
        super::kernel_words::read_attention_kernel(&super::words::Words::new(&attention_text));
    notes.extend(attention_note);
    let options = ExtendedOptions {
        precision,
        recompute,
        sharding,
        interleave: if pp > 1 { interleave } else { 1 },
        moe,
        attention_kernel,
        ..ExtendedOptions::realistic()
    };

    let m = &row["measured"];
    let fc = &row["flop_check"];
    let rules =
        FlopRules::from_words(&words(m, "flop_convention"), &words(fc, "formula"), &words(&row["model"], "ffn_type"));
    let (metric, measured) = match (num(m, "tflops_per_device"), rules) {
        (Some(t), Some(_)) => (MoeMetric::TflopsPerDevice, t),
        _ => {
            let tokens = num(m, "tokens_per_s_per_device")
                .or_else(|| num(m, "tokens_per_s_per_device_derived"))
                .or_else(|| {
                    let step = num(m, "step_time_s")?;
                    Some(gbs as f64 * workload.seq_len as f64 / step / n as f64)
                })
                .ok_or("no measured throughput")?;
            (MoeMetric::TokensPerDevice, tokens)
        }
    };
    let measured_memory_gb = num(m, "memory_peak_allocated_gib").map(|g| g * GIB_GB);
    Ok(MoeRunSetup {
        workload,
        hardware_id,
        precision,
        mapping,
        layout,
        options,
        rules,
        metric,
        measured,
        measured_memory_gb,
        notes,
    })
}

/// Predicts one interpreted row with `options` (the row's switches, possibly with fitted
/// constants): `(predicted metric, predicted peak allocated memory [GB], (ep, etp, edp))`.
pub fn predict_moe_row(s: &MoeRunSetup, options: &ExtendedOptions) -> Result<(f64, f64, (u64, u64, u64)), String> {
    let sys = catalog::find_system(&s.hardware_id).map_err(|e| e.to_string())?;
    let hw = Hardware::from_catalog(sys, s.precision, true, &s.mapping).map_err(|e| e.to_string())?;
    let e = evaluate(&s.workload, &hw, &s.layout, options).map_err(|e| e.to_string())?;
    let tokens = e.tokens_per_s / s.layout.devices() as f64;
    let value = match (s.metric, s.rules) {
        (MoeMetric::TflopsPerDevice, Some(r)) => tokens * model_flops_per_token(&s.workload, &r) * 1e-12,
        _ => tokens,
    };
    let x = e.moe.map(|m| (m.experts.ep, m.experts.etp, m.experts.edp)).unwrap_or((1, 1, 1));
    // The file measures `torch.cuda.max_memory_allocated` (`memory_peak_allocated_gib`): compare
    // the memory model's peak allocated figure, not the device level.
    Ok((value, e.memory_estimate.of_kind(MemoryKind::PeakAllocated), x))
}

/// Every row of a file of that shape, read and predicted with the rows' own switches.
pub fn validate_moe_runs(text: &str) -> Result<Vec<MoeRowResult>, String> {
    validate_moe_runs_with(text, &|o| o)
}

/// [`validate_moe_runs`] with the switches of each row passed through `adjust` (fitted constants).
pub fn validate_moe_runs_with(
    text: &str,
    adjust: &dyn Fn(ExtendedOptions) -> ExtendedOptions,
) -> Result<Vec<MoeRowResult>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let rows = doc["rows"].as_array().ok_or("no `rows` list")?;
    Ok(rows.iter().map(|row| predict_row(row, adjust)).collect())
}

fn predict_row(row: &Value, adjust: &dyn Fn(ExtendedOptions) -> ExtendedOptions) -> MoeRowResult {
    let id = row["id"].as_str().unwrap_or("?").to_string();
    let source = row["source"]["title"].as_str().or(row["source"].as_str()).unwrap_or("unknown source").to_string();
    let mut out = MoeRowResult {
        id,
        source,
        metric: None,
        measured: None,
        predicted: None,
        error: None,
        measured_memory_gb: None,
        predicted_memory_gb: None,
        experts: None,
        notes: Vec::new(),
    };
    let setup = match interpret_moe_row(row) {
        Ok(s) => s,
        Err(why) => {
            out.notes.push(why);
            return out;
        }
    };
    out.metric = Some(setup.metric);
    out.measured = Some(setup.measured);
    out.measured_memory_gb = setup.measured_memory_gb;
    out.notes.clone_from(&setup.notes);
    match predict_moe_row(&setup, &adjust(setup.options)) {
        Ok((v, mem, x)) => {
            out.predicted = Some(v);
            out.error = Some(v / setup.measured - 1.0);
            out.predicted_memory_gb = Some(mem);
            out.experts = Some(x);
        }
        Err(why) => out.notes.push(why),
    }
    out
}
