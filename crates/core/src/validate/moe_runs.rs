//! Validation against measured Mixture-of-Experts training runs: a file of the shape of
//! `data/measured-moe-runs.json` (given as text; core reads no files) is read row by row, each
//! row's model, system, parallel layout (EP/ETP included), routing and dispatcher are interpreted
//! from its fields and words, the configuration is evaluated in extended mode, and the predicted
//! figure is put in the row's own terms: model TFLOP/s per device under the source's FLOP
//! convention ([`super::moe_flops`]) when the row reports one, else tokens/s per device; peak
//! memory where the row measured it.
//!
//! Fields are read under every name people give them ([`super::keys`]: Hugging Face config.json
//! of Mixtral/DeepSeek/Qwen-MoE/Llama 4, Megatron-LM arguments, …), in their group (`model`,
//! `parallel`, `batch`, `measured`, `routing`) or flat at the top of the row, numbers also as
//! strings ([`super::moe_row_fields`]); a row is MoE when it states more than one routed expert
//! ([`super::moe_row_fields::is_moe_row`]).
//!
//! Interpretation rules (each applied rule is listed in the row's notes):
//! * experts: `num_experts`, `top_k`, `moe_ffn_hidden` (else the FFN width, Mixtral's
//!   `intermediate_size`, which is the dense width when the experts' is stated apart);
//!   `shared_ffn_hidden` is the TOTAL shared width (÷ `shared_experts` per expert); dense layers
//!   lead (`dense_layers`), or one layer in `moe_layer_step` is MoE (Llama 4's
//!   `interleave_moe_layer_step`, Megatron's integer `moe_layer_freq` or its 0/1 list
//!   `([0]*3+[1]*12)`: k dense blocks, then every n-th MoE), or dense and MoE layers
//!   alternate when there are as many of each (counts making up the model, or words saying
//!   "interleave"/"alternat"/"every other") — never read from the model's name;
//! * MLA dims from `mla`; `head_dim` when given; `mtp_layers` null → 0;
//! * precision words with "fp8" (FP8-CS, MXFP8, blockwise) → FP8, else BF16;
//! * recompute words: the dense rows' reader ([`super::recompute_words::read_recompute`]: a value
//!   opening with "none" is none, `--recompute-num-layers 0` is none, Megatron's selective modules
//!   selective, MaxText's `custom` policy — every tensor rematerialised unless listed — full);
//!   blank → none; under selective, the Megatron-Core recompute modules the words name
//!   (`mla_up_proj`, `moe_act`, `moe`; [`crate::extended::moe::RecomputeModules`]); a stated level whose memory
//!   estimate exceeds [`MEMORY_CONTRADICTION_FACTOR`] × the device's memory cannot be what ran:
//!   the least deeper level that fits, noted;
//! * micro-batch: the stated one, per data-parallel replica, unless the stated accumulation makes
//!   it per device (`G = dp·grad_accum·tp·m`: `tp·m` per replica, MaxText's per-device batch);
//! * FP8 recipe: torchao (casts in every pass) when the precision words name torchao/float8 or
//!   the run is torchtitan's, else Transformer Engine;
//! * sharding: the dense rows' reader ([`super::sharding_words::read_sharding`]: FSDP, HSDP and
//!   Megatron-FSDP words with their strategy and shard group, a ZeRO stage, the distributed
//!   optimizer in the optimizer or other parallel words); nothing stated → the distributed
//!   optimizer (ZeRO-1), not noted; `parallel.fsdp` may be a flag or a number (0: off; `n`: FSDP
//!   over `n` ranks);
//! * `grad_reduce_in_fp32` said off (False/0/off) in the row's words → gradients reduced and kept
//!   in the parameter type (the dense rows' reading,
//!   [`super::precision_words::says_16bit_grad_reduce`]);
//! * dispatcher words: "deepep"/"hybridep"/"flex" → hierarchical (node-limited to `M` domains when
//!   the router words say "top-M groups"), "allgather" → all-gather, else all-to-all; "overlap"
//!   without "no"/"=0" → all-to-all overlap; "megablox"/"gmm"/"grouped_mm" or a torchtitan run →
//!   the local experts' GEMMs as one grouped kernel (no per-expert issue time);
//! * the MoE layer's host calls ([`super::moe_host_words`]): permute and router fusion,
//!   SequentialMLP (stated, or a functional test's MODEL_ARGS without `--moe-grouped-gemm`), the
//!   balancing type from the router words, Transformer Engine's CUDA-graph scopes as listed;
//! * routing: `forced_balance` → forced; `token_drop` with `capacity_factor` → capacity; else
//!   dropless with the default imbalance;
//! * attention kernel: read from the framework, notes, tags, parallel words and source as for
//!   dense rows ([`super::kernel_words::read_attention_kernel`]: torchtitan → FlashAttention-2
//!   class, else the part's own-generation kernel).

use crate::vocab::{Note, NoteKind, NoteList};
use serde_json::Value;

use super::keys;
use super::moe_row_fields::{Group, int, not_stated, num, numbers_are_numbers, words};
use super::moe_row_model::model_of;
use super::moe_words::{
    a2a_overlap_of, dual_pipe_of, fp8_dispatch_of, fp8_swiglu_cache_of, group_limit, loss_fp32_upcast_of, optimizer_of,
    optimizer_states_of, recompute_modules_of,
};
use super::reason::{RowReason, UnreadFile};
use super::recompute_words::read_recompute;
use super::sharding_words::{ShardingInput, read_sharding};

use super::moe_flops::{FlopRules, model_flops_per_token};
use crate::catalog::{self, MappingOptions, Precision};
use crate::extended::moe::{A2aOverlap, Dispatcher, Load, MoeOptions};
use crate::extended::muon::Optimizer;
use crate::extended::{
    ExtendedOptions, GradReduce, Hardware, HardwareChoices, Layout, OptimizerStates, Recompute, Sharding, Stack,
    Workload, evaluate,
};
use crate::resolve;
use crate::vocab::MemoryKind;

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
    /// Devices of the degrees per catalog chip (2 for a TPU7x row counting JAX devices; else 1):
    /// each device is evaluated as that share of a chip ([`super::device_count::share_of_chip`]).
    pub devices_per_chip: u64,
    /// Devices one measured per-device figure covers (the chip's `devices_per_chip` when the row
    /// gives it per chip; else 1).
    pub devices_per_figure: u64,
    /// Rules applied, in words.
    pub notes: Vec<Note>,
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
    pub notes: Vec<Note>,
}

/// NIC bandwidth assumed for a system whose catalog entry states none [GB/s]: one 400 Gb/s NIC per
/// GPU, the build of the GB200 NVL72 systems in the measured rows' sources (DGX GB200: four
/// ConnectX-7 400 Gb/s per four-GPU tray).
const FALLBACK_NIC_GBPS: f64 = 50.0;

/// Whether a MoE row overlaps its data-parallel gradient reduction with the backward, as its
/// words state it (`overlap_grad_reduce=False`, "no --overlap-grad-reduce": off; stated on: on;
/// unstated: on) by the dense rows' phrases ([`super::parallel_words::read_dp_overlap`]), off noted.
/// Unlike dense rows, a Megatron-LM stack alone does not turn it off: the shipped MoE sources'
/// Megatron stacks set it (Megatron-Bridge's recipes; the Megatron MoE Model Zoo's
/// `model_configs/benchmarking/*.yaml` `--overlap-grad-reduce: true`, yanring/Megatron-MoE-ModelZoo
/// e865051), so a MoE row without the words keeps it on.
fn dp_overlap_as_stated(text: &str, notes: &mut Vec<Note>) -> bool {
    let none = super::words::Words::new("");
    let (on, _) = super::parallel_words::read_dp_overlap(&super::words::Words::new(text), &none, false);
    if !on {
        notes.reading(
            "data-parallel gradient reduction not overlapped with the backward, as stated (dp_overlap=off)".into(),
        );
    }
    on
}

/// Mapping options for a row's system: the catalog's, with [`FALLBACK_NIC_GBPS`] when it lists no
/// scale-out bandwidth (noted).
fn mapping_for(sys: &catalog::CatalogSystem, notes: &mut Vec<Note>) -> MappingOptions {
    let plain = MappingOptions::default();
    if resolve::hardware(sys, Precision::Bf16, true, &plain).is_ok() {
        return plain;
    }
    notes.reading(format!("{} lists no NIC bandwidth: {FALLBACK_NIC_GBPS} GB/s per GPU assumed", sys.id));
    MappingOptions { scale_out_gbps: Some(FALLBACK_NIC_GBPS), ..plain }
}

/// The sharding words of an MoE row for [`read_sharding`] (the dense rows' reader): `parallel.fsdp`
/// as words, or as a flag when it is `true`/`false`, or a number (`0`: off, as NeMo's performance
/// tables write it; `n`: FSDP over `n` ranks); the optimizer words; the degrees.
fn moe_sharding_input<'a>(
    fsdp: Option<&Value>,
    fsdp_words: &'a str,
    optimizer_words: &'a str,
    dp: u64,
    cp: u64,
) -> ShardingInput<'a> {
    let (fsdp, fsdp_flag) = match fsdp {
        Some(Value::Bool(b)) => (None, Some(*b)),
        Some(Value::Number(n)) if n.as_u64() == Some(0) => (None, Some(false)),
        Some(Value::Number(_)) => (Some(fsdp_words), None),
        _ => (Some(fsdp_words).filter(|t| !t.trim().is_empty()), None),
    };
    let optimizer = Some(optimizer_words).filter(|t| t.split(';').any(|w| !w.trim().is_empty()));
    ShardingInput { fsdp, fsdp_flag, optimizer, dp, cp, ..ShardingInput::default() }
}

/// A stated ZeRO stage (`parallel.zero_stage`): a whole number, or words naming it as the dense
/// rows' schema reads them (`"ZeRO-2"`, `"stage 3"`: the one digit 0–3 they hold); null or absent
/// is unstated, anything else an error naming the field.
fn zero_stage_of(v: Option<&Value>) -> Result<Option<u64>, RowReason> {
    let stage = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(v @ Value::String(_)) => super::schema::zero_stage_in_words(v),
        Some(v) => keys::whole_number(v).filter(|&z| z <= 3),
    };
    match (stage, v) {
        (Some(z), _) => Ok(Some(z)),
        (None, Some(v)) => Err(RowReason::Configuration(crate::Error::invalid(
            "parallel.zero_stage",
            v.to_string(),
            super::schema::ZERO_STAGE_RULE,
        ))),
        (None, None) => Ok(None),
    }
}

/// The micro-batch of one data-parallel replica [sequences]: the stated one, unless the stated
/// accumulation says it counts per device — a global batch `G = dp · grad_accum · tp · m` with a
/// stated `m` means `m` sequences per device and `tp · m` per replica (MaxText's
/// `per_device_batch_size` counts every chip, and a tensor-parallel group shares its replica's
/// batch; `global_batch_size = per_device_batch_size × devices`). Without a stated micro-batch:
/// `G / (dp · grad_accum)` when accumulation is stated, else 1.
fn micro_batch(gbs: u64, dp: u64, tp: u64, stated: Option<u64>, accum: Option<u64>, notes: &mut Vec<Note>) -> u64 {
    let replicas = |a: u64| dp.checked_mul(a).filter(|x| *x > 0);
    match (stated.filter(|m| *m > 0), accum.and_then(replicas)) {
        (Some(m), Some(r))
            if r.checked_mul(m) != Some(gbs) && r.checked_mul(m).and_then(|x| x.checked_mul(tp)) == Some(gbs) =>
        {
            notes.reading(format!(
                "micro-batch {m} per device: {} per replica of tp = {tp} devices (global batch = dp · grad_accum · tp · {m})",
                tp * m
            ));
            tp * m
        }
        (Some(m), _) => m,
        (None, Some(r)) if gbs.is_multiple_of(r) => gbs / r,
        (None, _) => 1,
    }
}

/// Reads one row (see the module documentation); `Err` is the reason it is skipped.
pub fn interpret_moe_row(row: &Value) -> Result<MoeRunSetup, RowReason> {
    let mut notes = Vec::new();
    let top = Group::top(row);
    numbers_are_numbers(&top)?;
    let model = top.child("model");
    let workload = model_of(&model, &mut notes)?;
    let hardware_id =
        top.get("hardware_id").and_then(Value::as_str).ok_or_else(|| not_stated("hardware_id"))?.to_string();
    let sys = crate::resolve::builtin_system(&hardware_id).map_err(RowReason::Hardware)?;
    let prec_words = words(&top, "precision");
    let precision = if prec_words.contains("fp8") { Precision::Fp8 } else { Precision::Bf16 };
    if sys.peak_tflops.fp8.is_none() && precision == Precision::Fp8 {
        return Err(RowReason::NoFp8Rate { system: hardware_id });
    }

    let p = &top.child("parallel");
    let (tp, pp, cp) = (int(p, "tp").unwrap_or(1), int(p, "pp").unwrap_or(1), int(p, "cp").unwrap_or(1));
    let num_devices = int(&top, "num_devices").filter(|d| *d > 0);
    let model_parallel = tp.checked_mul(pp).and_then(|x| x.checked_mul(cp)).ok_or(RowReason::DegreesTooLarge)?;
    // The data-parallel degree, else the devices the other degrees leave.
    let dp = match (int(p, "dp").filter(|d| *d > 0), num_devices) {
        (Some(d), _) => d,
        (None, Some(n)) if n.is_multiple_of(model_parallel) => {
            notes.reading(format!("dp not stated: num_devices / (tp·pp·cp) = {}", n / model_parallel));
            n / model_parallel
        }
        (None, Some(n)) => {
            return Err(RowReason::DevicesNotDivisible { devices: n });
        }
        (None, None) => return Err(RowReason::DpAndDevicesNotStated),
    };
    let (ep, etp) = (int(p, "ep").unwrap_or(1).max(1), int(p, "etp").unwrap_or(1).max(1));
    let b = &top.child("batch");
    let gbs = int(b, "global_batch_seqs").ok_or_else(|| not_stated("batch.global_batch_seqs"))?;
    let mbs = micro_batch(gbs, dp, tp, int(b, "micro_batch"), int(b, "grad_accum"), &mut notes);
    let n = model_parallel.checked_mul(dp).ok_or(RowReason::DegreesTooLarge)?;
    let mut mapping = mapping_for(sys, &mut notes);
    let (chip, _) = resolve::hardware(sys, precision, true, &mapping).map_err(RowReason::Priced)?;
    // Devices as the degrees count them (two JAX devices per TPU7x chip), when the stated count
    // is of chips ([`super::device_count`]).
    let m = &top.child("measured");
    let unit_words = [words(&top, "device_unit"), words(m, "flop_convention")].join("; ");
    let devices_per_chip = match num_devices.filter(|d| *d != n) {
        None => 1,
        Some(devices) => match super::device_count::devices_per_chip(devices, n, chip.torus, &unit_words) {
            Some(k) => {
                notes.reading(format!(
                    "num_devices {devices} counts chips, the degrees {n} devices: {k} devices per chip, each 1/{k} of a chip"
                ));
                k
            }
            None => return Err(RowReason::DevicesDiffer { devices, degrees: n }),
        },
    };
    let chips = n / devices_per_chip;
    let domain = chip.domain_size();
    let used = super::run_hardware::job_domain(domain, chips);
    if used != domain {
        notes.reading(format!("{chips} devices on domains of {domain}: {used} per domain"));
        mapping.domain_size = Some(used);
    }
    let (hw, _) = resolve::hardware(sys, precision, true, &mapping).map_err(RowReason::Priced)?;
    let hw = super::device_count::share_of_chip(&hw, devices_per_chip);
    let layout = Layout::placed(tp, cp, pp, dp, mbs, gbs, hw.domain_size()).with_experts(ep, etp);

    // Recomputation by the dense rows' reader (MaxText `remat_policy=custom`: every named tensor
    // rematerialised unless listed, so at least half the forward again: full).
    let rec = words(p, "recompute");
    let reading =
        read_recompute(Some(&rec).filter(|r| !r.trim().is_empty()).map(String::as_str), Some(workload.layers));
    if !rec.trim().is_empty() {
        notes.extend(reading.note.map(|n| n.about("parallel.recompute")));
    }
    let recompute = reading.level;
    let recompute_modules = recompute_modules_of(&rec, recompute, &mut notes);
    // ZeRO words may stand in the optimizer text or among the other parallel words
    // (`--use-distributed-optimizer`), as for dense rows.
    let optimizer_words = [words(&top, "optimizer"), words(p, "optimizer"), words(p, "other")].join("; ");
    let fsdp = match p.get("fsdp") {
        Some(Value::Number(n)) => format!("fsdp {n}"),
        _ => words(p, "fsdp"),
    };
    let reading = read_sharding(&ShardingInput {
        zero_stage: zero_stage_of(p.get("zero_stage"))?,
        distributed_optimizer: p.get("distributed_optimizer").and_then(Value::as_bool),
        ..moe_sharding_input(p.get("fsdp"), &fsdp, &optimizer_words, dp, cp)
    });
    if reading.stated {
        notes.extend(reading.notes.iter().cloned().map(|n| n.about("parallel")));
    }
    let (sharding, shard_group) = (reading.sharding, reading.shard_group);
    let disp = words(p, "dispatcher");
    let router = words(&model, "router");
    let dw = super::words::Words::new(&disp);
    // Hierarchical dispatch: DeepEP / HybridEP / Megatron's flex dispatcher, or words that
    // describe DeepSeek's own node-limited, two-hop exchange (across nodes over the NICs, then
    // inside the node over NVLink).
    let dispatcher = if dw.any(&["deepep", "deep ep", "hybridep", "hybrid ep", "flex", "node limited", "hierarchical"])
        || (dw.has("ib") && dw.has("nvlink"))
    {
        Dispatcher::Hierarchical { max_domains: group_limit(&router) }
    } else if dw.any(&["allgather", "all gather"]) {
        Dispatcher::AllGather
    } else {
        Dispatcher::AllToAll
    };
    let r = &top.child("routing");
    let flag = |k: &str| r.get(k).and_then(Value::as_bool) == Some(true);
    let load = if flag("forced_balance") {
        Load::Forced
    } else if flag("token_drop") {
        let c = num(r, "capacity_factor").unwrap_or(1.0);
        notes.reading(format!(
            "capacity factor {c}, router imbalance {}",
            super::super::extended::moe::options::DEFAULT_IMBALANCE
        ));
        Load::Capacity { factor: c, imbalance: crate::extended::moe::options::DEFAULT_IMBALANCE }
    } else {
        notes.reading("dropless routing at the default imbalance".into());
        Load::DEFAULT
    };
    // One grouped kernel for the local experts (no per-expert issue) when the words name one:
    // MaxText's megablox / `gmm`, `torch._grouped_mm` — torchtitan's default MoE path.
    let kernel_words = format!("{disp}; {}", words(&top, "framework"));
    let one_grouped_kernel = ["megablox", "gmm", "grouped_mm", "torchtitan"].iter().any(|k| kernel_words.contains(k))
        || words(&top, "source").contains("torchtitan");
    let schedule = [words(p, "other"), words(p, "pp_schedule"), words(p, "schedule")].join("; ");
    // The MoE layer's host calls as the words configure them ([`super::moe_host_words`]).
    let host_text =
        ["framework", "notes", "tags", "source"].iter().map(|k| words(&top, k)).collect::<Vec<_>>().join("; ")
            + "; "
            + &words(p, "other")
            + "; "
            + &disp;
    let (host, host_note) =
        super::moe_host_words::read_moe_host(&host_text, &router, words(&top, "source").contains("model_config.yaml"))
            .map_err(RowReason::Configuration)?;
    if let Some(n) = host_note {
        notes.reading(n);
    }
    let (activation_offload, offload, offload_note) =
        super::offload_words::read_offload_with_experts(&host_text).map_err(RowReason::Configuration)?;
    if let Some(n) = offload_note {
        notes.reading(n);
    }
    let moe = MoeOptions {
        load,
        dispatcher,
        a2a_overlap: A2aOverlap::from(a2a_overlap_of(p.get("a2a_overlap"), &disp, &schedule, &mut notes)),
        dual_pipe: dual_pipe_of(&disp, &schedule),
        fp8_dispatch: fp8_dispatch_of(&dw, &mut notes),
        one_grouped_kernel,
        recompute_modules,
        fp8_swiglu_cache: fp8_swiglu_cache_of(
            &[words(&top, "activation_cache"), words(p, "activation_cache"), words(&top, "activations")].join("; "),
            &mut notes,
        ),
        host,
        offload,
        ..MoeOptions::default()
    };
    let optimizer = optimizer_of(&words(&top, "optimizer"), &words(p, "other"), &mut notes);
    let optimizer_states =
        optimizer_states_of(&[words(&top, "optimizer"), words(p, "optimizer")].join("; "), &mut notes)
            .unwrap_or(OptimizerStates::Fp32Master);
    let interleave = int(p, "interleave_vpp").unwrap_or(1);
    // The row's words as the dense readers take them (framework, notes, tags, source, the
    // layout's other arguments); `source` as words or as its object's text: title, where, address.
    let row_text =
        ["framework", "notes", "tags", "source"].iter().map(|k| words(&top, k)).collect::<Vec<_>>().join("; ")
            + "; "
            + &words(p, "other");
    let flash_attention = match p.find("flash_attention") {
        None => None,
        Some((_, Value::Bool(b))) => Some(*b),
        Some((name, v)) => {
            let rule = "must be true, false or null";
            return Err(RowReason::Configuration(crate::Error::invalid(
                format!("parallel.{name}"),
                v.to_string(),
                rule,
            )));
        }
    };
    let (attention_kernel, attention_note) =
        super::kernel_words::read_stated_attention_kernel(flash_attention, &super::words::Words::new(&row_text))
            .map_err(RowReason::Configuration)?;
    let dp_overlap = dp_overlap_as_stated(&row_text, &mut notes);
    // The layer spec as for dense rows ([`super::step_words::read_transformer_impl`]), and the
    // local spec's core attention where the words name no kernel.
    let (spec, spec_note) = super::step_words::read_transformer_impl(&super::words::Words::new(&words(p, "other")))
        .map_err(RowReason::Configuration)?;
    notes.extend(spec_note);
    let (attention_kernel, attention_note) = super::step_words::spec_attention(spec, attention_kernel, attention_note);
    notes.extend(attention_note);
    // The per-step statistics as for dense rows ([`super::step_words::read_step_statistics`]:
    // `--log-num-zeros-in-grad`, `--log-params-norm` in the row's arguments).
    let (log_num_zeros_in_grad, log_params_norm, statistics_note) =
        super::step_words::read_step_statistics(&super::words::Words::new(&words(p, "other")))
            .map_err(RowReason::Configuration)?;
    notes.extend(statistics_note);
    // RoPE's fusion as for dense rows ([`super::step_words::read_rope_fusion`]: `--no-rope-fusion`,
    // `apply_rope_fusion`), one switch for the dense block's RoPE and multi-latent attention's calls.
    let (rope_stated, rope_note) = super::step_words::read_rope_fusion(&super::words::Words::new(&words(p, "other")))
        .map_err(RowReason::Configuration)?;
    notes.extend(rope_note);
    // The stack of FSDP as for dense rows: Megatron-FSDP only where the words name it.
    let stack = match sharding {
        Sharding::Zero3 => {
            let all = super::words::Words::new(&format!("{fsdp}; {row_text}"));
            let (stack, note) = super::stack_words::read_zero3_stack(Stack::default(), &all);
            notes.extend(note);
            stack
        }
        _ => Stack::default(),
    };
    // The FP8 recipe as for dense rows ([`super::kernel_words::read_fp8_recipe`]).
    let (fp8_recipe, fp8_note) = super::kernel_words::read_fp8_recipe(
        &super::words::Words::new(&prec_words),
        &super::words::Words::new(&row_text),
    );
    if precision == Precision::Fp8 {
        notes.extend(fp8_note.map(|n| n.about("precision")));
    }
    // A gradient reduction in the parameter type when the words say `grad_reduce_in_fp32` is off
    // (the dense rows' reading): 16-bit gradient buffers.
    let grad_reduce = if super::precision_words::says_16bit_grad_reduce(&row_text) {
        notes.reading("gradients reduced in the parameter type (`grad_reduce_in_fp32` off)".into());
        GradReduce::Param
    } else {
        GradReduce::Auto
    };
    // Muon without the distributed optimizer keeps every state on every rank (Megatron's
    // `arguments.py:1724–1736` turns the distributed optimizer into Muon's layer-wise variant).
    let sharding = if optimizer == Optimizer::Muon && sharding == Sharding::Zero1 { Sharding::Ddp } else { sharding };
    let loss_fp32_upcast = loss_fp32_upcast_of(&words(&top, "loss"), &mut notes).map_err(RowReason::Configuration)?;
    // A loss compiled with the model, by the dense rows' reading of the same words (torchtitan's
    // `compile.components` holds the loss since April 2025).
    let (compiled_loss, loss_note) = super::kernel_words::read_compiled_loss(&super::words::Words::new(&row_text));
    notes.extend(loss_note.map(|n| n.about("loss")));
    let options = ExtendedOptions {
        hardware: HardwareChoices { precision, ..HardwareChoices::realistic() },
        recompute,
        sharding,
        shard_group,
        grad_reduce,
        interleave: if pp > 1 { interleave } else { 1 },
        optimizer_states,
        optimizer,
        loss_fp32_upcast,
        compiled_loss,
        moe,
        attention_kernel,
        fp8_recipe,
        stack,
        activation_offload,
        transformer_impl: spec.unwrap_or_default(),
        dp_overlap,
        log_num_zeros_in_grad,
        log_params_norm,
        rope_fusion: rope_stated.unwrap_or(true),
        ..ExtendedOptions::realistic()
    };

    let fc = &top.child("flop_check");
    let rules = FlopRules::from_words(&words(m, "flop_convention"), &words(fc, "formula"), &words(&model, "ffn_type"));
    let named = |k: &str| m.find(k).and_then(|(name, v)| Some((name.to_string(), keys::decimal(v)?)));
    let (metric, measured, field) = match (named("tflops_per_device"), rules) {
        (Some((name, t)), Some(_)) => (MoeMetric::TflopsPerDevice, t, name),
        _ => {
            let (tokens, name) = named("tokens_per_s_per_device")
                .or_else(|| named("tokens_per_s_per_device_derived"))
                .map(|(name, t)| (t, name))
                .or_else(|| {
                    let step = num(m, "step_time_s")?;
                    Some((gbs as f64 * workload.seq_len as f64 / step / n as f64, "step_time_s".into()))
                })
                .ok_or(RowReason::NoThroughput)?;
            (MoeMetric::TokensPerDevice, tokens, name)
        }
    };
    let per_chip = devices_per_chip > 1 && super::device_count::per_chip_figure(&field, &unit_words);
    let devices_per_figure = if per_chip { devices_per_chip } else { 1 };
    if per_chip {
        notes.reading(format!("the measured figure is per chip: {devices_per_chip} devices' worth"));
    }
    let measured_memory_gb = num(m, "memory_peak_allocated_gib").map(|g| g * GIB_GB);
    let options = recompute_that_ran(&workload, &hw, &layout, options, &mut notes);
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
        devices_per_chip,
        devices_per_figure,
        notes,
    })
}

/// How many times its device's memory a configuration's estimate may reach and still be read as
/// stated [dimensionless]. With the MoE activations counted as Megatron-Core keeps them (routed
/// experts' FP8 inputs, fused permutes, recompute modules), the Megatron rows of the shipped file
/// are estimated at up to 1.15× their device's memory at the device level (allocator and
/// communicator overheads included; Megatron-Bridge 25.11's DeepSeek-V3 on GB300), the one that
/// offloads the routed experts' activations to the host at 0.63× with them off the device
/// ([`crate::extended::moe::expert_offload`]; 1.35× before session 32 counted them on it); a
/// stated level estimated beyond 1.5× cannot have run.
pub const MEMORY_CONTRADICTION_FACTOR: f64 = 1.5;

/// The recomputation a measured run must have used: the stated one unless its memory estimate
/// exceeds [`MEMORY_CONTRADICTION_FACTOR`] × the device's memory — a run that was measured fitted
/// in its device — then the least level beyond it (selective, then full) whose estimate does not
/// (full when none does), noted. A run said to checkpoint nothing with a batch that cannot be held
/// without checkpointing (e.g. 10 × 8,192 tokens of a 109-billion-parameter MoE per 186 GB device)
/// is evaluated as checkpointing.
fn recompute_that_ran(
    w: &Workload,
    hw: &Hardware,
    layout: &Layout,
    options: ExtendedOptions,
    notes: &mut Vec<Note>,
) -> ExtendedOptions {
    let limit = MEMORY_CONTRADICTION_FACTOR * hw.hbm_capacity_gb;
    let need = |o: &ExtendedOptions| evaluate(w, hw, layout, o).map_or(0.0, |e| e.mem_gb);
    let stated = need(&options);
    if stated <= limit {
        return options;
    }
    let deeper: &[Recompute] = match options.recompute {
        Recompute::None => &[Recompute::Selective, Recompute::Full],
        Recompute::Selective | Recompute::Op | Recompute::Partial(_) => &[Recompute::Full],
        Recompute::Full => &[],
    };
    let Some(last) = deeper.last() else { return options };
    let level =
        deeper.iter().copied().find(|r| need(&ExtendedOptions { recompute: *r, ..options }) <= limit).unwrap_or(*last);
    notes.reading(format!(
        "recomputation `{}` needs {stated:.0} GB per device, more than {MEMORY_CONTRADICTION_FACTOR}× its {:.0} GB: the \
         run cannot have held that; evaluated with `{}`",
        options.recompute,
        hw.hbm_capacity_gb,
        level.as_str()
    ));
    ExtendedOptions { recompute: level, ..options }
}

/// Predicts one interpreted row with `options` (the row's switches, possibly with fitted
/// constants): `(predicted metric, predicted peak allocated memory [GB], (ep, etp, edp))`.
pub fn predict_moe_row(s: &MoeRunSetup, options: &ExtendedOptions) -> Result<(f64, f64, (u64, u64, u64)), RowReason> {
    let sys = crate::resolve::builtin_system(&s.hardware_id).map_err(RowReason::Priced)?;
    let (hw, _) = resolve::hardware(sys, s.precision, true, &s.mapping).map_err(RowReason::Priced)?;
    let hw = super::device_count::share_of_chip(&hw, s.devices_per_chip);
    let e = evaluate(&s.workload, &hw, &s.layout, options).map_err(RowReason::Priced)?;
    let tokens = e.tokens_per_s / s.layout.devices() as f64 * s.devices_per_figure as f64;
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
pub fn validate_moe_runs(text: &str) -> Result<Vec<MoeRowResult>, UnreadFile> {
    validate_moe_runs_with(text, &|o| o)
}

/// [`validate_moe_runs`] with the switches of each row passed through `adjust` (fitted constants).
pub fn validate_moe_runs_with(
    text: &str,
    adjust: &dyn Fn(ExtendedOptions) -> ExtendedOptions,
) -> Result<Vec<MoeRowResult>, UnreadFile> {
    let doc: Value = crate::strict_json::parse(text).map_err(|e| UnreadFile::NotJson(e.to_string()))?;
    let rows = doc["rows"].as_array().ok_or(UnreadFile::NoRows)?;
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
            out.notes.push(skipped(&why));
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
        Err(why) => out.notes.push(skipped(&why)),
    }
    out
}

/// The note of a row skipped for `why`, about the field the reason names.
fn skipped(why: &RowReason) -> Note {
    let note = Note::new(NoteKind::Skipped, why.to_string());
    match why.field() {
        Some(f) => note.about(f),
        None => note,
    }
}
