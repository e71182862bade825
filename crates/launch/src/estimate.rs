//! The estimate of exactly the configuration in a file (no search): extended mode's evaluation of
//! its [`LaunchScenario`] on its system, with time per step, tokens/s, model-FLOP utilisation and the
//! memory per device against the capacity. The CLI (`fmperf estimate --from`) and the page's
//! import panel both print [`Estimate::to_json`], so they show the same numbers.

use fmperf_core::vocab::Note;
use serde_json::{Value, json};

use super::scenario::{LaunchScenario, Overrides};
use super::{Launch, Source, parse_files};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::explore::priced::model_flops_per_sample_tflop;
use fmperf_core::extended::{ExtendedEvaluation, Hardware, Layout, evaluate};
use fmperf_core::resolve::{self, SpecError, UserEntries};
use fmperf_core::validate::memory;
use fmperf_core::vocab::{MemoryKind, PredictedMemory, model_flops_utilisation, predicted_memory_gb};
use fmperf_core::vocab::{TimePart, Totals};

/// Memory of the busiest device against its capacity, in the shape of `fmperf validate`'s memory
/// object (issue 18 §2): the predicted figure of its `kind`, the capacity and the verdict with the
/// error band of the shipped memory runs ([`fmperf_core::validate::memory`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemoryVerdict {
    /// Which figure `predicted_gb` is: `nvidia_smi`, the device-level need (tensors, runtime
    /// context and the allocator's margin), the one that must fit in the capacity.
    pub kind: &'static str,
    /// Predicted memory of that kind [GB].
    pub predicted_gb: f64,
    /// No measured figure for an estimate (`null`; the field keeps the shape of the contract).
    pub measured_gb: Option<f64>,
    /// Device memory [GB].
    pub capacity_gb: f64,
    /// `yes` (fits at the top of the band), `tight` (within the band of the capacity: may not
    /// fit), `no` (does not fit at the bottom of the band even without the allocator's cache,
    /// [`fmperf_core::vocab::Need`]).
    pub fits: fmperf_core::vocab::Fits,
    /// Predicted peak of PyTorch's allocated memory [GB].
    pub allocated_gb: f64,
    /// Predicted peak of PyTorch's reserved memory [GB].
    pub reserved_gb: f64,
    /// Predicted device-level need [GB].
    pub device_gb: f64,
    /// Half-width of the error band around the need [GB].
    pub band_gb: f64,
}

impl MemoryVerdict {
    /// The verdict of a prediction on a device of `capacity_gb`, with the shipped error band.
    pub fn new(p: &PredictedMemory, capacity_gb: f64) -> MemoryVerdict {
        let band = memory::shipped_band();
        MemoryVerdict {
            kind: MemoryKind::NvidiaSmi.as_str(),
            predicted_gb: predicted_memory_gb(p, MemoryKind::NvidiaSmi),
            measured_gb: None,
            capacity_gb,
            fits: memory::verdict(p.need(), capacity_gb),
            allocated_gb: p.allocated_gb,
            reserved_gb: p.reserved_gb,
            device_gb: p.device_gb,
            band_gb: band * p.device_gb,
        }
    }
}

/// One configuration evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The scenario.
    pub scenario: LaunchScenario,
    /// The catalog id of the system.
    pub system_id: String,
    /// The layout evaluated (placement innermost-first on the system's domain).
    pub layout: Layout,
    /// Extended mode's evaluation.
    pub evaluation: ExtendedEvaluation,
    /// Model FLOPs of one sample, forward and backward [TFLOP].
    pub model_tflop_per_sample: f64,
    /// Peak matmul rate of one device at the run's precision [TFLOP/s] (MFU's denominator).
    pub peak_tflops: f64,
    /// Model-FLOP utilisation [fraction].
    pub mfu: f64,
    /// Memory against capacity.
    pub memory: MemoryVerdict,
    /// Notes about the system mapping.
    pub system_notes: Vec<Note>,
}

/// The part named by a system spec (`ID[,domain=…,precision=…]`) at `precision` (the spec's
/// `precision=` wins). Returns the catalog id, the part and the
/// precision used. `measured_ceiling`: the matrix units' measured ceiling (on) or their datasheet
/// peak (off), as the scenario's extended switch `measured_ceiling` says.
pub fn hardware(
    spec: &str,
    precision: Precision,
    measured_ceiling: bool,
) -> Result<(String, Hardware, Precision), Error> {
    let (sys, opts) = resolve::system_spec(UserEntries::builtin(), spec).map_err(SpecError::plain)?;
    let p = opts.precision.unwrap_or(precision);
    let (hw, _) = resolve::hardware(sys, p, measured_ceiling, &opts)?;
    Ok((sys.id.clone(), hw, p))
}

/// Evaluates `scenario` on `hw` (the system `system_id`).
pub fn estimate(scenario: &LaunchScenario, system_id: &str, hw: &Hardware) -> Result<Estimate, Error> {
    let s = scenario;
    let y = s.layout;
    let layout =
        Layout::placed(y.tp, y.cp, y.pp, y.dp, y.mbs, y.global_batch, hw.domain_size()).with_experts(y.ep, y.etp);
    let evaluation = evaluate(&s.workload, hw, &layout, &s.options)?;
    let o = &s.options;
    let model_tflop_per_sample =
        model_flops_per_sample_tflop(&s.workload, o.model.grouped_query_attention, o.model.gated_mlp);
    let peak_tflops = hw.matmul_peak_tflops;
    let mfu =
        model_flops_utilisation(model_tflop_per_sample, evaluation.throughput_samples_per_s, s.devices, peak_tflops);
    let memory = MemoryVerdict::new(&PredictedMemory::of(&evaluation), hw.hbm_capacity_gb);
    Ok(Estimate {
        scenario: s.clone(),
        system_id: system_id.to_string(),
        layout,
        evaluation,
        model_tflop_per_sample,
        peak_tflops,
        mfu,
        memory,
        system_notes: hw.approximations.clone(),
    })
}

/// Reads `text` (format detected; `name` is the file name, if any), builds its scenario with
/// `overrides` and evaluates it on the system the overrides or the file name.
pub fn estimate_text(text: &str, name: Option<&str>, overrides: &Overrides) -> Result<(Launch, Estimate), Error> {
    estimate_files(&[Source { name, text }], &[], overrides)
}

/// Reads several files as one run ([`super::parse_files`], with the script's positional
/// parameters `args`) and estimates it as [`estimate_text`] does.
pub fn estimate_files(
    sources: &[Source<'_>],
    args: &[String],
    overrides: &Overrides,
) -> Result<(Launch, Estimate), Error> {
    let launch = parse_files(sources, args)?;
    let mut scenario = LaunchScenario::from_launch(&launch, overrides)?;
    let Some(spec) = scenario.system.clone() else {
        return Err(Error::invalid("--system", "missing", "the file does not name the system it runs on")
            .with_hint("give --system ID (`fmperf catalog systems`), or a `# fmperf: system=ID` line in the file"));
    };
    let h = &scenario.options.hardware;
    let (id, hw, precision) = hardware(&spec, h.precision, h.measured_ceiling)?;
    scenario.options.hardware.precision = precision;
    let e = estimate(&scenario, &id, &hw)?;
    Ok((launch, e))
}

impl Estimate {
    /// Everything as JSON: the configuration, the headline numbers, the time and memory parts,
    /// and from `launch` the unused flags and the notes.
    pub fn to_json(&self, launch: &Launch) -> Value {
        let s = &self.scenario;
        let y = &self.layout;
        let w = &s.workload;
        let e = &self.evaluation;
        let t = &e.totals;
        let m = &e.memory;
        let o = &s.options;
        let mut doc = json!({
            "format": launch.format.as_str(),
            "model": {
                "name": s.model_name,
                "layers": w.layers,
                "hidden": w.hidden,
                "ffn_hidden": w.ffn_hidden,
                "heads": w.heads,
                "kv_heads": w.kv_heads,
                "head_dim": w.head_dim,
                "gated_mlp": w.gated_mlp,
                "vocab": w.vocab,
                "vocab_read": launch.settings.vocab.copied(),
                "num_experts": w.moe.as_ref().map(|m| m.experts),
                "topk": w.moe.as_ref().map(|m| m.top_k),
                "moe_ffn_hidden": w.moe.as_ref().map(|m| m.expert_ffn),
                "tied_embeddings": w.tied_embeddings,
                "seq_len": w.seq_len,
                "parameters_b": e.breakdown.parameters * 1e-9,
            },
            "system": {
                "id": self.system_id,
                "devices": s.devices,
                "domain": self.layout.placement.tp * self.layout.placement.cp * self.layout.placement.dp * self.layout.placement.pp,
                "peak_tflops": self.peak_tflops,
            },
            "config": {
                "tp": y.tp,
                "pp": y.pp,
                "dp": y.dp,
                "cp": y.cp,
                "mbs": y.mbs,
                "global_batch": y.global_batch,
                "microbatches": e.breakdown.microbatches,
                "vpp": o.interleave,
                "recompute": o.recompute.as_str(),
                "sharding": o.sharding.as_str(),
                "stack": o.stack.as_str(),
                "shard_group": o.shard_group,
                "sequence_parallel": o.sequence_parallel,
                "precision": o.hardware.precision.as_str(),
            },
            "time_per_step_s": t.t,
            "tokens_per_s": e.tokens_per_s,
            "samples_per_s": e.throughput_samples_per_s,
            "mfu": self.mfu,
            "model_tflop_per_sample": self.model_tflop_per_sample,
            "time_s": time_json(t, &e.breakdown),
            "memory": {
                "kind": self.memory.kind,
                "predicted_gb": self.memory.predicted_gb,
                "measured_gb": null,
                "capacity_gb": self.memory.capacity_gb,
                "fits": self.memory.fits.as_str(),
                "allocated_gb": self.memory.allocated_gb,
                "reserved_gb": self.memory.reserved_gb,
                "device_gb": self.memory.device_gb,
                "band_gb": self.memory.band_gb,
                "parts_gb": m.parts().iter().map(|(p, gb)| (p.key().to_string(), json!(gb))).collect::<serde_json::Map<_, _>>(),
            },
            "moe": self.moe_json(),
            "origins": s.origins.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "unused": launch.unused,
            "assumptions": s.assumptions,
            "notes": launch.notes.iter().chain(&self.system_notes).collect::<Vec<_>>(),
        });
        // The expert degrees (1 for a dense model, whose layout has no experts).
        doc["config"]["ep"] = json!(y.ep);
        doc["config"]["etp"] = json!(y.etp);
        doc
    }

    /// The Mixture-of-Experts part of [`Estimate::to_json`] (`null` for a dense model): the shape
    /// (experts, widths, top-k, shared experts, pattern, router, latent attention, MTP blocks),
    /// the options as text (`load=…,dispatcher=…,ep=…,etp=…`) and extended mode's MoE breakdown
    /// (expert layout, blocks, tokens per expert, dropped fraction, time parts [s], expert
    /// memory [GB], parameter counts).
    pub fn moe_json(&self) -> Value {
        let w = &self.scenario.workload;
        let (Some(m), Some(b)) = (&w.moe, &self.evaluation.moe) else {
            return Value::Null;
        };
        json!({
            "experts": m.experts,
            "expert_ffn": m.expert_ffn,
            "top_k": m.top_k,
            "shared_experts": m.shared_experts,
            "shared_ffn": m.shared_ffn,
            "first_dense": m.first_dense,
            "moe_every": m.moe_every,
            "moe_blocks": m.moe_blocks(w.layers),
            "router": m.router.as_str(),
            "mla": w.mla.map(|a| json!({
                "q_lora_rank": a.q_lora_rank,
                "kv_lora_rank": a.kv_lora_rank,
                "qk_nope_head_dim": a.qk_nope_head_dim,
                "qk_rope_head_dim": a.qk_rope_head_dim,
                "v_head_dim": a.v_head_dim,
            })),
            "mtp_layers": w.mtp_layers,
            "options": self.scenario.options.moe.to_string(),
            "active_parameters_b": b.parameters.active * 1e-9,
            "breakdown": b,
        })
    }
}

/// Where a configuration ranks among a search's feasible configurations (best first).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rank {
    /// 1-based position: one more than the number of configurations strictly faster.
    pub position: usize,
    /// Feasible configurations ranked.
    pub of: usize,
    /// Whether the exact configuration (degrees, micro-batch and placement) is one of them.
    pub in_search: bool,
    /// Its throughput over the best's [fraction].
    pub relative_to_best: f64,
}

/// The rank of `own` (throughput [samples/s] of `layout`) among `results` (a search's feasible
/// configurations, best first, all of them). For an MoE model the expert degrees are part of the
/// configuration: the search keeps the best `(ep, etp)` of each candidate.
pub fn rank(layout: &Layout, throughput: f64, results: &[fmperf_core::search::Ranked]) -> Rank {
    let faster = results.iter().filter(|r| r.throughput_samples_per_s > throughput * (1.0 + 1e-12)).count();
    let in_search = results.iter().any(|r| {
        fmperf_core::extended::Layout::from_candidate(&r.candidate, layout.global_batch)
            .map(|l| match r.experts {
                Some(x) => l.with_experts(x.ep, x.etp),
                None => l,
            })
            .is_ok_and(|l| l == *layout)
    });
    let best = results.first().map_or(throughput, |r| r.throughput_samples_per_s.max(throughput));
    Rank {
        position: faster + 1,
        of: results.len() + usize::from(!in_search),
        in_search,
        relative_to_best: if best > 0.0 { throughput / best } else { 0.0 },
    }
}

/// The key of a time part in an estimate's `time_s`: the names this JSON has always used
/// (`memory_bound`, `tp_cp_comm`), and the vocabulary's key for parts added since (`ep_comm`).
/// Exhaustive, so a part added to [`TimePart`] cannot be left out.
fn time_key(p: TimePart) -> &'static str {
    match p {
        TimePart::Compute => "compute",
        TimePart::ExposedMemory => "memory_bound",
        TimePart::TpComm => "tp_cp_comm",
        TimePart::EpComm | TimePart::DpComm | TimePart::PpComm | TimePart::Bubble => p.key(),
    }
}

/// An estimate's `time_s`: every time part of [`TimePart::ALL`] [s], plus the recomputation, the
/// optimizer step and the host parts of [`Breakdown::host_parts`] (`step_host`, `layer_python`:
/// parts of them) [s].
///
/// [`Breakdown::host_parts`]: fmperf_core::extended::Breakdown::host_parts
fn time_json(t: &Totals, b: &fmperf_core::extended::Breakdown) -> Value {
    let mut m: serde_json::Map<String, Value> =
        TimePart::ALL.iter().map(|p| (time_key(*p).to_string(), json!(p.of(t)))).collect();
    m.insert("recompute".into(), json!(b.t_recompute_s));
    m.insert("optimizer".into(), json!(b.t_optimizer_s));
    for (p, s) in b.host_parts() {
        m.insert(p.key().into(), json!(s));
    }
    Value::Object(m)
}
