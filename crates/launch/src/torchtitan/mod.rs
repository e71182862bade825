//! torchtitan job files (TOML): the model family and flavour (their shapes from [`flavours`]: llama2,
//! llama3, llama4, qwen3, deepseek_v3), the FSDP / HSDP,
//! tensor, pipeline and context parallel degrees, activation checkpointing, Float8, the local batch
//! and the sequence length.
//!
//! Meanings (torchtitan's `JobConfig`): `training.local_batch_size` is the batch of one
//! data-parallel rank (`training.batch_size` in older files); `training.global_batch_size` (−1 or
//! absent: `local × dp`) adds gradient accumulation; with pipeline parallelism a rank's batch is cut
//! into micro-batches of `parallelism.pipeline_parallel_microbatch_size` (default 1). Data
//! parallelism is `data_parallel_replicate_degree × data_parallel_shard_degree` ranks; the shard
//! degree (−1: the remaining devices) is FSDP (ZeRO-3), hybrid (HSDP) when the replicate degree is
//! above 1. Tensor parallelism always runs with sequence parallelism. Defaults: BF16 parameters
//! (`training.mixed_precision_param`), selective activation checkpointing, the `1F1B` schedule.

use super::settings::{SettingOrigin, boolean, positive};
use super::toml::TomlType;
use super::{Format, Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_core::vocab::NoteList;

pub mod flavours;
pub use flavours::{FLAVOURS, Flavour, Shape};

/// Pipeline schedules torchtitan names (`parallelism.pipeline_parallel_schedule`) and how fmperf
/// prices them: `(name, multi-stage, note)`.
const SCHEDULES: &[(&str, bool, Option<&str>)] = &[
    ("1F1B", false, None),
    ("Interleaved1F1B", true, None),
    ("GPipe", false, Some("GPipe keeps every micro-batch's activations; fmperf prices 1F1B (at most pp in flight)")),
    ("LoopedBFS", true, Some("LoopedBFS is priced as interleaved 1F1B")),
    ("InterleavedZeroBubble", true, Some("zero-bubble schedules are priced as interleaved 1F1B (bubble not removed)")),
    ("ZBVZeroBubble", true, Some("zero-bubble schedules are priced as interleaved 1F1B (bubble not removed)")),
    ("DualPipeV", true, Some("DualPipeV is priced as interleaved 1F1B")),
];

/// Reads a torchtitan TOML.
pub fn parse(text: &str) -> Result<Launch, Error> {
    let values = super::toml::read_typed(text)?;
    let mut l = Launch::new(Format::Torchtitan);
    let mut name: Option<(String, SettingOrigin)> = None;
    let mut flavour: Option<(String, SettingOrigin)> = None;
    let mut float8: Option<SettingOrigin> = None;
    let mut param_dtype: Option<(Precision, SettingOrigin)> = None;
    let mut schedule: Option<(&'static str, bool, SettingOrigin)> = None;
    let mut ac_mode: Option<(String, SettingOrigin)> = None;
    let mut ac_option: Option<(String, SettingOrigin)> = None;
    let mut components: Option<(String, SettingOrigin)> = None;
    for tv in &values {
        let e = &tv.entry;
        let o = SettingOrigin::new(e.key.clone(), e.line);
        let v = e.value.as_str();
        let section = e.key.split('.').next().unwrap_or("");
        let leaf = e.key.rsplit('.').next().unwrap_or("");
        // A number written as a string (`tensor_parallel_degree = "2"`) is not a number to TOML.
        let int = || match tv.kind {
            TomlType::Integer => positive(v, &o),
            k => Err(o.error(v, format!("must be an integer, not {} (write it without quotes)", k.name()))),
        };
        match (section, leaf) {
            ("model", "name") => name = Some((v.to_string(), o)),
            ("model", "flavor" | "flavour") => flavour = Some((v.to_string(), o)),
            ("model", "converters") => {
                if v.contains("float8") || v.contains("mx") {
                    float8 = Some(o);
                } else if v.trim_matches(|c| c == '[' || c == ']' || c == ' ').is_empty() {
                } else {
                    return Err(o.error(v, "fmperf knows the float8 and mx converters"));
                }
            }
            ("float8", "enable_float8_linear") | ("training", "enable_fp8_linear") if boolean(v, &o)? => {
                float8 = Some(o)
            }
            ("float8", "enable_float8_linear") | ("training", "enable_fp8_linear") => {}
            ("float8" | "quantize", "enable_fsdp_float8_all_gather") => {
                _ = l.settings.fp8_all_gather.put(boolean(v, &o)?, &o)
            }
            // 2024: `[training] fp8_linear = "dynamic"` (empty: off).
            ("training", "fp8_linear") => {
                if !v.trim().is_empty() {
                    float8 = Some(o);
                } else {
                    l.unused(e.key.clone(), v, "Float8 off (empty)");
                }
            }
            ("training", "local_batch_size" | "batch_size") => l.settings.local_batch.put_once(int()?, &o)?,
            ("training", "global_batch_size") => {
                if v.trim() != "-1" {
                    l.settings.global_batch.put(int()?, &o);
                }
            }
            ("training", "seq_len") => l.settings.seq_len.put_once(int()?, &o)?,
            ("training", "mixed_precision_param") => {
                let p = match v {
                    "bfloat16" => Precision::Bf16,
                    "float16" => Precision::Fp16,
                    "float32" => Precision::Fp32,
                    _ => return Err(o.error(v, "must be bfloat16, float16 or float32")),
                };
                param_dtype = Some((p, o));
            }
            (_, "data_parallel_replicate_degree") => l.settings.dp_replicate.put_once(int()?, &o)?,
            (_, "data_parallel_shard_degree" | "data_parallel_degree") => {
                if v.trim() != "-1" {
                    l.settings.dp.put(int()?, &o);
                } else {
                    l.notes.reading_of(
                        &o.key,
                        format!(
                            "{} = -1: all the devices the other degrees leave (the device count decides it)",
                            o.key
                        ),
                    );
                    l.settings.dp.origin = Some(o);
                }
            }
            (_, "tensor_parallel_degree") => l.settings.tp.put_once(int()?, &o)?,
            (_, "pipeline_parallel_degree") => l.settings.pp.put_once(int()?, &o)?,
            (_, "context_parallel_degree") => l.settings.cp.put_once(int()?, &o)?,
            (_, "expert_parallel_degree") => l.settings.moe.ep.put_once(int()?, &o)?,
            (_, "expert_tensor_parallel_degree") => l.settings.moe.etp.put_once(int()?, &o)?,
            (_, "pipeline_parallel_microbatch_size") => l.settings.mbs.put_once(int()?, &o)?,
            (_, "pipeline_parallel_layers_per_stage") => l.settings.layers_per_virtual_stage.put_once(int()?, &o)?,
            (_, "pipeline_parallel_schedule") => {
                let Some((n, multi, note)) = SCHEDULES.iter().find(|s| s.0.eq_ignore_ascii_case(v)) else {
                    let known: Vec<&str> = SCHEDULES.iter().map(|s| s.0).collect();
                    return Err(o.error(v, format!("must be one of {}", known.join(", "))));
                };
                if let Some(n) = note {
                    l.notes.reading_of(&o.key, format!("{} = {v}: {n}", o.key));
                }
                schedule = Some((n, *multi, o));
            }
            // `[compile] enable` (torchtitan since mid-2025) or the older `training.compile`.
            ("compile", "enable") | ("training", "compile") => _ = l.settings.compiled.put(boolean(v, &o)?, &o),
            ("compile", "components") => components = Some((v.to_string(), o)),
            ("activation_checkpoint", "mode") => ac_mode = Some((v.to_string(), o)),
            ("activation_checkpoint", "selective_ac_option") => ac_option = Some((v.to_string(), o)),
            _ => {
                let why = reason(section, leaf);
                l.unused(e.key.clone(), v, why);
            }
        }
    }
    model(&mut l, name, flavour)?;
    // Precision: Float8 linear layers, else the parameter dtype (default bfloat16).
    match (float8, param_dtype) {
        (Some(o), _) => _ = l.settings.precision.put(Precision::Fp8, &o),
        (None, Some((p, o))) => _ = l.settings.precision.put(p, &o),
        (None, None) => {
            l.settings.precision.put(Precision::Bf16, &SettingOrigin::new("training.mixed_precision_param", 0));
            l.notes.reading_of(
                "training.mixed_precision_param",
                "training.mixed_precision_param not given: torchtitan's default bfloat16".into(),
            );
        }
    }
    recompute(&mut l, ac_mode, ac_option)?;
    compile(&mut l, components)?;
    if let Some((_, multi, o)) = schedule
        && multi
        && l.settings.layers_per_virtual_stage.get().is_none()
    {
        l.settings.vpp.put(2, &o);
        l.notes.reading_of(
            &o.key,
            format!(
                "{}: a multi-stage schedule without pipeline_parallel_layers_per_stage is read as 2 stages per rank",
                o.key
            ),
        );
    }
    // Sharding: FSDP over the shard degree (HSDP with replicas); the scenario settles DDP when the
    // shard degree is 1.
    let shard_origin =
        l.settings.dp.origin.clone().unwrap_or(SettingOrigin::new("parallelism.data_parallel_shard_degree", 0));
    l.settings.sharding.put(Sharding::Zero3, &shard_origin);
    if l.settings.tp.copied().unwrap_or(1) > 1 {
        let o = l.settings.tp.origin.clone().unwrap_or(SettingOrigin::new("parallelism.tensor_parallel_degree", 0));
        l.settings.sequence_parallel.put(true, &o);
    } else {
        l.settings.sequence_parallel.put(false, &SettingOrigin::new("parallelism.tensor_parallel_degree", 0));
    }
    Ok(l)
}

/// What `torch.compile` covers: the blocks (fused element-wise kernels, [`fmperf_core::extended::Fusion`])
/// and, with `"loss"` among `[compile] components` (torchtitan's default `["model", "loss"]`,
/// `torchtitan/config/job_config.py`), the loss, so no FP32 logits are held (`compiled_loss`).
/// Compilation off (torchtitan's default) runs eager PyTorch kernels. The older key
/// `training.compile` compiled the loss too from April 2025 (torchtitan PR #1033); a file using it
/// is read that way, and a note says so.
fn compile(l: &mut Launch, components: Option<(String, SettingOrigin)>) -> Result<(), Error> {
    if l.settings.compiled.get().is_none() {
        l.settings.compiled.put(false, &SettingOrigin::new("compile.enable", 0));
        l.notes.reading_of(
            "compile.enable",
            "compile.enable not given: torchtitan's default, off (eager PyTorch kernels)".into(),
        );
    }
    let on = l.settings.compiled.copied() == Some(true);
    let key = l.settings.compiled.origin.as_ref().map(|o| o.key.clone()).unwrap_or_default();
    let loss = match &components {
        Some((v, o)) => {
            let names: Vec<String> = v
                .split([',', '[', ']'])
                .map(|n| n.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
                .filter(|n| !n.is_empty())
                .collect();
            if let Some(bad) = names.iter().find(|n| !matches!(n.as_str(), "model" | "loss")) {
                return Err(o.error(bad, "the components torchtitan compiles are \"model\" and \"loss\""));
            }
            if on && !names.iter().any(|n| n == "model") {
                l.notes.reading_of(&o.key, format!("{}: the blocks are not compiled, priced as eager kernels", o.key));
                l.settings.compiled.put(false, o);
            }
            names.iter().any(|n| n == "loss")
        }
        None => true,
    };
    if on {
        let o = components.as_ref().map_or_else(|| SettingOrigin::new(key.clone(), 0), |(_, o)| o.clone());
        l.settings.compiled_loss.put(loss, &o);
        if key == "training.compile" {
            l.notes.reading_of(
                "training.compile",
                "training.compile: read as compiling the loss with the model, as torchtitan does since April 2025 \
                 (PR #1033); older versions kept FP32 logits (switch compiled_loss=false)"
                    .into(),
            );
        }
    }
    Ok(())
}

/// The model's shape from `model.name` (default `llama3`, torchtitan's default) and
/// `model.flavor`, from [`flavours`].
fn model(
    l: &mut Launch,
    name: Option<(String, SettingOrigin)>,
    flavour: Option<(String, SettingOrigin)>,
) -> Result<(), Error> {
    let Some((flavour, fo)) = flavour else {
        return Err(Error::MissingField { field: "model.flavor".into() });
    };
    let family = match &name {
        Some((n, _)) => n.clone(),
        None => {
            l.notes.reading_of("model.name", "model.name not given: torchtitan's default llama3".into());
            "llama3".into()
        }
    };
    let f = flavours::shape(&family, &flavour).map_err(|rule| match (&name, rule.starts_with("must be")) {
        (Some((n, o)), false) => o.error(n, rule),
        _ => fo.error(&flavour, rule),
    })?;
    let s = &mut l.settings;
    s.model_name.put(f.name.clone(), &fo);
    s.hidden.put(f.dim, &fo);
    s.layers.put(f.layers, &fo);
    s.heads.put(f.heads, &fo);
    s.kv_heads.put(f.kv_heads, &fo);
    if let Some(h) = f.head_dim {
        s.head_dim.put(h, &fo);
    }
    s.ffn_hidden.put(f.ffn, &fo);
    s.gated_mlp.put(true, &fo);
    s.vocab.put(f.vocab, &fo);
    s.tied_embeddings.put(f.tied, &fo);
    let mut text = format!(
        "model.flavor = {flavour}: torchtitan's {} (width {}, {} blocks, {} heads, {} K/V heads, SwiGLU {}, vocabulary {}",
        f.name, f.dim, f.layers, f.heads, f.kv_heads, f.ffn, f.vocab
    );
    if let Some(m) = &f.moe {
        let moe = &mut s.moe;
        moe.experts.put(m.experts, &fo);
        moe.top_k.put(m.top_k, &fo);
        moe.expert_ffn_hidden.put(m.expert_ffn, &fo);
        moe.router.put(m.router.to_string(), &fo);
        if m.shared > 0 {
            moe.shared_experts.put(m.shared, &fo);
            moe.shared_ffn_hidden.put(m.expert_ffn * m.shared, &fo);
        }
        if m.first_dense > 0 {
            moe.first_dense_layers.put(m.first_dense, &fo);
        }
        if m.every > 1 {
            moe.layer_pattern.put(m.every.to_string(), &fo);
        }
        text.push_str(&format!(
            "; {} experts of width {}, top-{}, {} shared, {} dense blocks first, MoE every {} block(s)",
            m.experts, m.expert_ffn, m.top_k, m.shared, m.first_dense, m.every
        ));
    }
    if let Some(a) = &f.mla {
        let moe = &mut s.moe;
        moe.mla.put(true, &fo);
        if a.q_lora_rank > 0 {
            moe.q_lora_rank.put(a.q_lora_rank, &fo);
        }
        moe.kv_lora_rank.put(a.kv_lora_rank, &fo);
        moe.qk_nope_head_dim.put(a.qk_nope, &fo);
        moe.qk_rope_head_dim.put(a.qk_rope, &fo);
        moe.v_head_dim.put(a.v_head, &fo);
        text.push_str("; multi-head latent attention");
    }
    text.push(')');
    l.notes.reading(text);
    Ok(())
}

/// Activation checkpointing: `none`, `selective` (`op`: per operation, [`Recompute::Op`], the
/// policy torchtitan's `_op_sac_save_list` defines; `N`: every N-th block fully), `full`.
fn recompute(
    l: &mut Launch,
    mode: Option<(String, SettingOrigin)>,
    option: Option<(String, SettingOrigin)>,
) -> Result<(), Error> {
    let (mode, o) = mode.unwrap_or_else(|| {
        l.notes.reading_of(
            "activation_checkpoint.mode",
            "activation_checkpoint.mode not given: torchtitan's default selective".into(),
        );
        ("selective".into(), SettingOrigin::new("activation_checkpoint.mode", 0))
    });
    match mode.as_str() {
        "none" => _ = l.settings.recompute.put(Recompute::None, &o),
        "full" => _ = l.settings.recompute.put(Recompute::Full, &o),
        "selective" => match option {
            None => _ = l.settings.recompute.put(Recompute::Selective, &o),
            Some((v, oo)) if v == "op" => _ = l.settings.recompute.put(Recompute::Op, &oo),
            Some((v, oo)) => {
                let every = positive(&v, &oo).map_err(|_| oo.error(&v, "must be op or a positive integer"))?;
                l.settings.recompute.put(Recompute::Full, &oo);
                if let Some(layers) = l.settings.layers.copied() {
                    l.settings.recompute_blocks.put(layers.div_ceil(every), &oo);
                }
            }
        },
        "memory_budget" => {
            return Err(o.error(&mode, "fmperf cannot price a memory budget; use none, selective or full"));
        }
        _ => return Err(o.error(&mode, "must be none, selective or full")),
    }
    Ok(())
}

/// Why a torchtitan key that fmperf does not read does not matter, by section and name.
fn reason(section: &str, leaf: &str) -> &'static str {
    match (section, leaf) {
        ("job" | "comm" | "fault_tolerance" | "experimental", _) => why::JOB,
        ("metrics" | "profiling" | "memory_estimation", _) => why::LOGGING,
        ("checkpoint", _) => why::CHECKPOINT,
        ("validation", _) => why::EVALUATION,
        ("optimizer" | "lr_scheduler", _) => why::HYPERPARAMETER,
        ("compile" | "float8" | "mx" | "quantize", _) => why::KERNEL,
        ("model", "tokenizer_path" | "hf_assets_path" | "norm_type") => why::DATA,
        ("model", "print_after_conversion") => why::LOGGING,
        ("training", "steps" | "warmup_steps") => why::LENGTH,
        ("training", "dataset" | "dataset_path") => why::DATA,
        ("training", "max_norm" | "seed" | "lr") => why::HYPERPARAMETER,
        ("training", "gc_freq" | "deterministic" | "mixed_precision_reduce") => why::KERNEL,
        ("training", "enable_cpu_offload") => "affects memory and time, not modelled (CPU offload)",
        (_, "fsdp_reshard_after_forward") => {
            "affects memory, not modelled: fmperf's FSDP reshards after forward and gathers again for backward"
        }
        (_, "enable_async_tensor_parallel" | "enable_compiled_autograd" | "disable_loss_parallel") => why::KERNEL,
        (_, "context_parallel_rotate_method") => why::ASSUMED,
        (_, "pipeline_parallel_split_points") => {
            "affects performance, not modelled: fmperf splits the blocks evenly over the stages"
        }
        _ => why::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavour_widths_match_meta() {
        // Meta's published intermediate sizes: 14336, 28672, 53248.
        let w: Vec<u64> = FLAVOURS[1..].iter().map(Flavour::ffn_hidden).collect();
        assert_eq!(w, [14336, 28672, 53248]);
    }

    #[test]
    fn reads_a_job_file() {
        let l = parse(
            "[job]\ndump_folder = \"./outputs\"\n[model]\nname = \"llama3\"\nflavor = \"8B\"\n\
             converters = [\"float8\"]\n[training]\nlocal_batch_size = 2\nseq_len = 8192\nsteps = 1000\n\
             [parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 2\n\
             [activation_checkpoint]\nmode = \"full\"\n",
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!(s.ffn_hidden.copied(), Some(14336));
        assert_eq!(s.precision.copied(), Some(Precision::Fp8));
        assert_eq!(s.recompute.copied(), Some(Recompute::Full));
        assert_eq!((s.local_batch.copied(), s.tp.copied(), s.dp.copied()), (Some(2), Some(2), None));
        assert_eq!(s.sequence_parallel.copied(), Some(true));
        let unused: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(unused, ["job.dump_folder", "training.steps"]);
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse("[model]\nname = \"llama3\"\nflavor = \"9B\"\n").unwrap_err();
        assert_eq!(e.field(), Some("model.flavor"));
        let e = parse("[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 0\n").unwrap_err();
        assert_eq!(e.field(), Some("parallelism.tensor_parallel_degree"));
        let e = parse("[model]\nflavor = \"8B\"\n[activation_checkpoint]\nmode = \"sometimes\"\n").unwrap_err();
        assert_eq!(e.field(), Some("activation_checkpoint.mode"));
        let e = parse("[model]\nflavor = \"8B\"\n[parallelism]\npipeline_parallel_schedule = \"Magic\"\n").unwrap_err();
        assert_eq!(e.field(), Some("parallelism.pipeline_parallel_schedule"));
        assert!(matches!(parse("[training]\nseq_len = 8\n").unwrap_err(), Error::MissingField { .. }));
    }
}
