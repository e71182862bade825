//! Hugging Face Trainer runs written as YAML: a file of `TrainingArguments` (LLaMA-Factory's
//! `llamafactory-cli train config.yaml`, alignment-handbook / TRL recipes' `config_full.yaml`) and
//! an Accelerate config (`accelerate launch --config_file zero3.yaml`).
//!
//! The training arguments are read by the same per-key rules as the Trainer's command-line flags
//! ([`crate::megatron::TrainerKeys`]: micro-batch `per_device_train_batch_size`, gradient
//! accumulation, `bf16`/`fp16`, `gradient_checkpointing`, the sequence length `cutoff_len` /
//! `max_seq_length` / `max_length`, `fsdp`, `model_name_or_path`). The Trainer runs plain data
//! parallelism over every device (tp = pp = 1). A `deepspeed:` key naming a JSON is listed as unused:
//! the JSON is read when given with a second `--from`.
//!
//! The Accelerate config gives the devices (`num_processes`: every process of every machine, one
//! device each; `num_machines`), the sharding (`distributed_type: DEEPSPEED` with
//! `deepspeed_config.zero_stage`, `FSDP` with `fsdp_config.fsdp_sharding_strategy` or FSDP2's
//! `fsdp_reshard_after_forward`, `MULTI_GPU` as DDP) and the precision (`mixed_precision`).
//!
//! Defaults applied, each with a note: the Trainer keeps every activation without
//! `gradient_checkpointing: true`; LLaMA-Factory recomputes every layer unless
//! `disable_gradient_checkpointing: true` (`src/llamafactory/model/model_utils/checkpointing.py`,
//! `prepare_model_for_training`); Accelerate shards fully when FSDP names no strategy
//! (`FULL_SHARD`, Accelerate's `FullyShardedDataParallelPlugin` default).

use crate::megatron::TrainerKeys;
use crate::settings::{Entry, SettingOrigin, boolean, is_null, positive};
use crate::{Format, Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{OptimizerStates, Recompute, Sharding};
use fmperf_core::vocab::NoteList;

/// Top-level keys that only a `TrainingArguments`, LLaMA-Factory or Accelerate YAML has.
const MARKERS: &[&str] = &[
    "per_device_train_batch_size",
    "per_gpu_train_batch_size",
    "model_name_or_path",
    "finetuning_type",
    "cutoff_len",
    "num_train_epochs",
    "distributed_type",
    "compute_environment",
];

/// Keys of preference and RL training (TRL's `DPOConfig`, `ORPOConfig`, `KTOConfig`, `GRPOConfig`;
/// LLaMA-Factory's `pref_*`): such a run is not one model's supervised training.
const PREFERENCE: &[&str] = &[
    "beta",
    "max_prompt_length",
    "num_generations",
    "pref_beta",
    "pref_loss",
    "ref_model",
    "reward_funcs",
    "use_vllm",
];

/// Keys only LLaMA-Factory's arguments have (its gradient-checkpointing default differs).
const LLAMA_FACTORY: &[&str] =
    &["stage", "finetuning_type", "cutoff_len", "disable_gradient_checkpointing", "template"];

/// Whether `text` is a YAML whose top-level keys are `TrainingArguments`, LLaMA-Factory or
/// Accelerate ones (a line at column 0 `per_device_train_batch_size:`, `distributed_type:`, …).
pub fn looks_like(text: &str) -> bool {
    // A script (that may write such a YAML in a here-document) is not one.
    !text.starts_with("#!")
        && text.lines().take(10_000).any(|line| {
            line.split_once(':').is_some_and(|(k, _)| {
                !k.starts_with([' ', '\t', '-', '#']) && MARKERS.contains(&k.trim_matches(|c| c == '"' || c == '\''))
            })
        })
}

/// Reads a Trainer or Accelerate YAML (see the module documentation). Errors name the key and line.
pub fn parse(text: &str) -> Result<Launch, Error> {
    let entries = crate::yaml::read(text)?;
    let mut l = Launch::new(Format::TrainerYaml);
    let mut keys = TrainerKeys::new();
    let top = |e: &Entry| e.key.split('.').next().unwrap_or("").to_string();
    let llama_factory = entries.iter().any(|e| LLAMA_FACTORY.contains(&top(e).as_str()));
    let accelerate = entries.iter().any(|e| matches!(top(e).as_str(), "distributed_type" | "compute_environment"));
    let training = entries.iter().any(|e| MARKERS[..6].contains(&top(e).as_str()));
    let distributed = entries.iter().find(|e| e.key == "distributed_type").map(|e| e.value.to_ascii_uppercase());
    let mut checkpointing_given = false;
    for e in &entries {
        let o = SettingOrigin::new(e.key.clone(), e.line);
        let (head, rest) = e.key.split_once('.').unwrap_or((e.key.as_str(), ""));
        checkpointing_given |= matches!(head, "gradient_checkpointing" | "disable_gradient_checkpointing");
        let read = match head {
            "deepspeed_config" | "fsdp_config" | "megatron_lm_config" => {
                section(&mut l, &mut keys, head, rest, &e.value, &o, distributed.as_deref())?
            }
            _ if rest.is_empty() => top_key(&mut l, &mut keys, head, &e.value, &o)?,
            _ => false,
        };
        if !read {
            let dashed = head.replace('_', "-");
            let why = own_irrelevant(head).or_else(|| TrainerKeys::irrelevant(&dashed)).unwrap_or(why::UNKNOWN);
            l.unused(e.key.clone(), e.value.clone(), why);
        }
    }
    let (granularity, _) = keys.given();
    if training {
        for (slot, key) in [(&mut l.settings.tp, "tp"), (&mut l.settings.pp, "pp")] {
            if slot.get().is_none() {
                slot.put(1, &SettingOrigin::new(format!("(Hugging Face Trainer: {key})"), 0));
            }
        }
        l.notes.reading(
            "a Hugging Face Trainer run: data parallel over every device (tensor and pipeline parallel 1); the \
             model's shape from its name or its config.json (a second --from)"
                .into(),
        );
        if llama_factory && !checkpointing_given && !granularity {
            l.settings.recompute.put(Recompute::Full, &SettingOrigin::new("disable_gradient_checkpointing", 0));
            l.notes.reading(
                "no disable_gradient_checkpointing: LLaMA-Factory recomputes every layer (gradient checkpointing on \
                 by default; recompute full)"
                    .into(),
            );
        } else if !checkpointing_given {
            l.notes.reading("no gradient_checkpointing: the Trainer keeps every activation (recompute none)".into());
        }
    }
    let half_given = keys.given().1 || l.settings.precision.get().is_some();
    keys.finish(&mut l)?;
    if training && !half_given && !accelerate {
        l.notes.reading(
            "no bf16 or fp16: the precision is the Accelerate config's mixed_precision or the DeepSpeed JSON's; \
             give that file with a second --from (alone, the Trainer trains in FP32)"
                .into(),
        );
    }
    Ok(l)
}

/// A top-level key: a Trainer argument, an Accelerate setting or a LLaMA-Factory / TRL one.
/// `Ok(false)`: not read (listed as unused by the caller).
fn top_key(l: &mut Launch, keys: &mut TrainerKeys, key: &str, v: &str, o: &SettingOrigin) -> Result<bool, Error> {
    let value = v.trim();
    match key {
        "deepspeed" if !is_null(value) && boolean(value, o).is_err() => {
            l.unused(
                key,
                value,
                format!(
                    "the DeepSpeed JSON is a file of its own: read it with `--from {value}` (its ZeRO stage and batch)"
                ),
            );
            // The Trainer rules know the JSON is given (its precision is the JSON's).
            keys.apply(l, "deepspeed", value, o)?;
            l.unused.pop();
            return Ok(true);
        }
        "num_processes" => put(l, |s| &mut s.devices, positive(value, o)?, o),
        "num_machines" => put(l, |s| &mut s.nodes, positive(value, o)?, o),
        "distributed_type" => distributed_type(l, value, o)?,
        "mixed_precision" => {
            let p = match value.to_ascii_lowercase().as_str() {
                "bf16" => Precision::Bf16,
                "fp16" => Precision::Fp16,
                "fp8" => Precision::Fp8,
                "no" | "false" => Precision::Fp32,
                _ => return Err(o.error(value, "must be no, fp16, bf16 or fp8")),
            };
            put(l, |s| &mut s.precision, p, o);
        }
        "use_cpu" if boolean(value, o)? => {
            return Err(o.error(value, "training on CPUs is not modelled: fmperf estimates accelerators"));
        }
        "stage" => match value.to_ascii_lowercase().as_str() {
            "sft" | "pt" => l.unused(key, value, "supervised fine-tuning or pre-training: what fmperf prices"),
            "rm" => l.unused(key, value, "affects performance slightly, not modelled: a reward model's value head"),
            other => {
                return Err(o.error(
                    other,
                    "fmperf prices one model's training (sft, pt); DPO, KTO and PPO also run a reference model \
                     (and PPO generation)",
                ));
            }
        },
        "finetuning_type" => match value.to_ascii_lowercase().as_str() {
            "full" => l.unused(key, value, "full fine-tuning: what fmperf prices"),
            _ => l.unused(
                key,
                value,
                "affects performance, not modelled: LoRA / freeze train part of the weights; fmperf prices full \
                 training",
            ),
        },
        // Hugging Face's Trainer applies Liger's kernels with their defaults, the fused linear
        // cross-entropy among them (`_apply_liger_kernel_to_instance`), as LLaMA-Factory does.
        "use_liger_kernel" | "enable_liger_kernel" => {
            if boolean(value, o)? {
                put(l, |s| &mut s.loss_head_chunked, true, o);
            } else {
                l.unused(key, value, "Liger's kernels off: the model's own loss and element-wise kernels");
            }
        }
        "disable_gradient_checkpointing" => {
            if boolean(value, o)? {
                put(l, |s| &mut s.recompute, Recompute::None, o);
            } else {
                keys.apply(l, "gradient-checkpointing", "true", o)?;
            }
        }
        _ if PREFERENCE.contains(&key) => {
            return Err(o.error(
                value,
                "a preference or RL recipe's key (DPO, ORPO, KTO, GRPO): fmperf prices one model's supervised \
                 training, not chosen/rejected pairs, a reference model or generation",
            ));
        }
        // LLaMA-Factory (hiyouga/LLaMA-Factory at ff6d4d12): "train model in purely bf16 precision
        // (without AMP)" (`src/llamafactory/hparams/finetuning_args.py` l. 456–459): the trainable
        // parameters stay in BF16 instead of being upcast to FP32 (`src/llamafactory/model/adapter.py`
        // l. 337–345), so the optimizer's moments and the gradients follow them; its README's
        // hardware table counts 8 B per parameter for it ("Full (`pure_bf16`) … `8x`GB") against 18
        // for mixed precision: core's `optimizer_states=pure_bf16` (2 + 2 + 4 B).
        "pure_bf16" if boolean(value, o)? => put(l, |s| &mut s.optimizer_states, OptimizerStates::PureBf16, o),
        "quantization_bit" | "use_peft" | "load_in_4bit" | "load_in_8bit" => l.unused(
            key,
            value,
            "affects performance, not modelled: LoRA / QLoRA train small adapters of frozen (or quantized) weights; \
             fmperf prices full training",
        ),
        "torch_dtype" | "dtype" => l.unused(
            key,
            value,
            "the dtype the weights are loaded in; the training precision is bf16 / fp16 (mixed precision) or the \
             Accelerate config's",
        ),
        _ => return keys.apply(l, &key.replace('_', "-"), value, o),
    }
    Ok(true)
}

/// Accelerate's `distributed_type`: DDP for `MULTI_GPU` (and other accelerators' DDP); DeepSpeed
/// and FSDP take their sharding from their own section.
fn distributed_type(l: &mut Launch, value: &str, o: &SettingOrigin) -> Result<(), Error> {
    match value.to_ascii_uppercase().as_str() {
        "MULTI_GPU" | "MULTI_NPU" | "MULTI_XPU" | "MULTI_MLU" | "MULTI_MUSA" | "MULTI_HPU" | "MULTI_SDAA" => {
            put(l, |s| &mut s.sharding, Sharding::Ddp, o)
        }
        "NO" => l.unused(o.key.clone(), value, "one process: the device count is --gpus or num_processes"),
        "DEEPSPEED" | "FSDP" => l.unused(o.key.clone(), value, "read with its section (deepspeed_config, fsdp_config)"),
        other => {
            return Err(o.error(other, "must be NO, MULTI_GPU, DEEPSPEED or FSDP (the ones fmperf models)"));
        }
    }
    Ok(())
}

/// A key of Accelerate's `deepspeed_config`, `fsdp_config` or `megatron_lm_config` section.
fn section(
    l: &mut Launch,
    keys: &mut TrainerKeys,
    head: &str,
    sub: &str,
    value: &str,
    o: &SettingOrigin,
    distributed: Option<&str>,
) -> Result<bool, Error> {
    let v = value.trim();
    let active = match head {
        "deepspeed_config" => distributed == Some("DEEPSPEED"),
        "fsdp_config" => distributed == Some("FSDP"),
        _ => distributed == Some("MEGATRON_LM"),
    };
    if !active {
        l.unused(o.key.clone(), v, "ignored by Accelerate: distributed_type does not name this section's backend");
        return Ok(true);
    }
    match (head, sub) {
        ("deepspeed_config", "zero_stage") => {
            let n = positive(v, o).or_else(|e| if v == "0" { Ok(0) } else { Err(e) })?;
            let s = Sharding::of_zero_stage(n).ok_or_else(|| o.error(v, "must be 0, 1, 2 or 3"))?;
            put(l, |st| &mut st.sharding, s, o);
        }
        ("deepspeed_config", "gradient_accumulation_steps") => put(l, |s| &mut s.grad_accumulation, positive(v, o)?, o),
        ("deepspeed_config", "deepspeed_config_file") => l.unused(
            o.key.clone(),
            v,
            format!("the DeepSpeed JSON is a file of its own: read it with `--from {v}` (its ZeRO stage and batch)"),
        ),
        ("deepspeed_config", "offload_optimizer_device" | "offload_param_device")
        | ("fsdp_config", "fsdp_offload_params") => {
            let off = is_null(v) || v.eq_ignore_ascii_case("none") || boolean(v, o).is_ok_and(|b| !b);
            let why = if off {
                "no offload"
            } else {
                "affects performance, not modelled: offloaded states live in host memory or NVMe; fmperf prices and \
                 counts them on the device"
            };
            l.unused(o.key.clone(), v, why);
        }
        ("fsdp_config", "fsdp_sharding_strategy") => fsdp_strategy(l, keys, v, o)?,
        ("fsdp_config", "fsdp_reshard_after_forward") => {
            // FSDP2: resharding after forward is full sharding; keeping the parameters is ZeRO-2's.
            let word = if boolean(v, o)? { "full_shard" } else { "shard_grad_op" };
            keys.apply(l, "fsdp", word, o)?;
        }
        ("fsdp_config", "fsdp_activation_checkpointing") => {
            keys.apply(l, "gradient-checkpointing", v, o)?;
        }
        ("megatron_lm_config", _) => {
            return Err(
                o.error(v, "Accelerate's Megatron-LM plugin is not read: give the degrees as a Megatron launch")
            );
        }
        _ => {
            let why = if sub.contains("save") || sub.contains("state_dict") {
                why::CHECKPOINT
            } else if sub.contains("launcher") || sub.contains("init") || sub.contains("loading") {
                why::JOB
            } else {
                why::KERNEL
            };
            l.unused(o.key.clone(), v, why);
        }
    }
    Ok(true)
}

/// Accelerate's `fsdp_sharding_strategy` (a name or its number, `FULL_SHARD` = 1 … `HYBRID_SHARD_ZERO2`
/// = 5, as `torch.distributed.fsdp.ShardingStrategy`), read as the Trainer reads `--fsdp`.
fn fsdp_strategy(l: &mut Launch, keys: &mut TrainerKeys, v: &str, o: &SettingOrigin) -> Result<(), Error> {
    let word = match v.to_ascii_lowercase().as_str() {
        "1" | "full_shard" => "full_shard",
        "2" | "shard_grad_op" => "shard_grad_op",
        "3" | "no_shard" => "no_shard",
        "4" | "hybrid_shard" => "hybrid_shard",
        "5" | "hybrid_shard_zero2" => {
            put(l, |s| &mut s.sharding, Sharding::Zero2, o);
            l.notes.reading(format!(
                "{} HYBRID_SHARD_ZERO2: read as ZeRO-2 sharding; fmperf does not model sharding within a node only",
                o.key
            ));
            return Ok(());
        }
        _ => {
            return Err(o.error(v, "must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2"));
        }
    };
    keys.apply(l, "fsdp", word, o)?;
    Ok(())
}

/// Why a LLaMA-Factory, TRL or Accelerate key the Trainer rules do not know does not matter.
fn own_irrelevant(key: &str) -> Option<&'static str> {
    Some(match key {
        "compute_environment"
        | "machine_rank"
        | "main_process_ip"
        | "main_process_port"
        | "main_training_function"
        | "rdzv_backend"
        | "same_network"
        | "gpu_ids"
        | "debug"
        | "enable_cpu_affinity"
        | "use_cpu"
        | "ddp_timeout"
        | "tpu_env"
        | "tpu_use_cluster"
        | "tpu_use_sudo"
        | "do_train"
        | "hub_model_id"
        | "hub_strategy"
        | "push_to_hub"
        | "hub_private_repo"
        | "model_revision"
        | "plot_loss"
        | "plot_loss_only" => why::JOB,
        "downcast_bf16" | "dynamo_config" | "dynamo_backend" | "flash_attn" | "use_unsloth" | "packing"
        | "neat_packing" | "use_reentrant_gc" | "upcast_layernorm" => why::KERNEL,
        "max_samples" | "chat_template" | "dataset_mixture" | "dataset_num_proc" | "dataset_name"
        | "dataset_config" | "dataset_text_field" | "overwrite_cache" | "val_size" | "mix_strategy" | "streaming" => {
            why::DATA
        }
        _ => return None,
    })
}

/// Puts `v` into a slot, noting when it replaces an earlier value.
fn put<T: PartialEq>(
    l: &mut Launch,
    slot: impl Fn(&mut crate::Settings) -> &mut crate::Slot<T>,
    v: T,
    o: &SettingOrigin,
) {
    if let Some(old) = slot(&mut l.settings).put(v, o) {
        l.notes.reading(format!(
            "{} (line {}) replaces the value of {} (line {}): the later one is used",
            o.key, o.line, old.key, old.line
        ));
    }
}
