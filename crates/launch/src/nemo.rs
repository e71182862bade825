//! NeMo and Megatron-Bridge YAML configurations. Their keys are Megatron's flags with underscores
//! (`model.tensor_model_parallel_size`, `model.num_layers`, `train.micro_batch_size`), read by
//! [`super::megatron::apply`], plus the names of their own (below). The section a key sits in does
//! not change its meaning, except that unknown keys of logging, checkpoint, data, optimizer and
//! scheduler sections are listed with that section's reason.
//!
//! NeMo's own names: `trainer.devices` and `trainer.num_nodes` (devices per node and nodes),
//! `trainer.precision` (`bf16`, `bf16-mixed`, `16-mixed`, `32`), `model.encoder_seq_length`,
//! `model.activations_checkpoint_granularity|method|num_layers` (recomputation),
//! `model.activation` (`fast-swiglu`, `swiglu`, `geglu`: a gated MLP), `model.num_moe_experts`,
//! `model.share_embeddings_and_output_weights`, `model.optim.name` (`distributed_fused_adam`: Apex's
//! ZeRO-2, gradients sharded; `mcore_distributed_optim`: Megatron-Core's distributed optimizer,
//! ZeRO-1), `model.fp8` (true: FP8 linear layers), `model.tokenizer.type`.
//! Megatron-Bridge's: `model.seq_length`, `model.gated_linear_unit`, `model.fp8` (`hybrid`, `e4m3`),
//! `model.bf16`, `mixed_precision` (`bf16_mixed`, `…fp8…`), `ddp.use_distributed_optimizer`,
//! `tokenizer.tokenizer_model`.

use super::megatron::{self, Pending};
use super::settings::{Entry, SettingOrigin, boolean, is_null, positive};
use super::{Format, Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::Sharding;
use fmperf_core::vocab::NoteList;

/// Reads a NeMo / Megatron-Bridge YAML.
pub fn parse(text: &str) -> Result<Launch, Error> {
    let mut entries = super::yaml::read(text)?;
    if entries.is_empty() {
        return Err(Error::Parse { message: "the YAML has no keys".into() });
    }
    let resolved = super::omegaconf::resolve(&mut entries);
    let unresolved_at: std::collections::HashMap<usize, &str> =
        resolved.unresolved.iter().map(|(i, why)| (*i, why.as_str())).collect();
    let mut l = Launch::new(Format::NemoYaml);
    l.notes.extend(resolved.notes.iter().cloned());
    let mut p = Pending::default();
    let mut defaults_noted = false;
    // A Megatron-LM functional test's `model_config.yaml`: the command's flags as keys.
    let functional_test = entries.iter().any(|e| e.key.starts_with("MODEL_ARGS.--"));
    let mut env_noted = false;
    let recomputes = entries
        .iter()
        .any(|e| e.key.rsplit('.').next() == Some("activations_checkpoint_granularity") && !is_null(&e.value));
    for (i, e) in entries.iter().enumerate() {
        let o = SettingOrigin::new(e.key.clone(), e.line);
        let top = e.key.split('.').next().unwrap_or("");
        if top == "defaults" {
            if !defaults_noted {
                l.notes.reading(format!(
                    "line {}: the Hydra `defaults:` list is not followed (the files it names are not read; give them \
                     with another --from)",
                    e.line
                ));
                defaults_noted = true;
            }
            l.unused(&e.key, &e.value, "a Hydra defaults list: the config files it names are not followed");
            continue;
        }
        if top == "hydra" {
            l.unused(&e.key, &e.value, why::JOB);
            continue;
        }
        let leaf = e.key.rsplit('.').next().unwrap_or("");
        if matches!(leaf, "activations_checkpoint_method" | "activations_checkpoint_num_layers") && !recomputes {
            // NeMo reads the method and block count only with a granularity.
            l.unused(&e.key, &e.value, "no effect: activations_checkpoint_granularity is null (no recomputation)");
            continue;
        }
        if let Some(reason) = unresolved_at.get(&i) {
            if !(functional_test && e.key.starts_with("MODEL_ARGS.")) {
                unresolved(&mut l, e, &o, reason)?;
                continue;
            }
            // Megatron-LM's functional tests fill `${DATA_PATH}` and the like from the environment
            // (`envsubst`, tests/functional_tests/shell_test_utils/_run_training.sh l. 70 at
            // d98e8a6): paths, read as written.
            if !env_noted {
                l.notes.reading(format!(
                    "line {}: `${{…}}` in MODEL_ARGS are the functional tests' environment variables (paths), read as                      written",
                    e.line
                ));
                env_noted = true;
            }
        }
        apply_key(&mut l, &mut p, &e.key, &e.value, &o)?;
    }
    // A functional test's `MODEL_ARGS` are Megatron-LM's arguments as written: Megatron-Core's
    // defaults hold for what they leave out (`crate::moe_host`).
    if let Some(e) = entries.iter().find(|e| functional_test && e.key.starts_with("MODEL_ARGS.--")) {
        l.settings.moe.megatron_args.put(true, &SettingOrigin::new("MODEL_ARGS", e.line));
    }
    megatron::finish(&mut l, p)?;
    Ok(l)
}

/// A key whose `${…}` could not be resolved: listed as unused when fmperf does not use the key,
/// else an error naming it and why.
fn unresolved(l: &mut Launch, e: &Entry, o: &SettingOrigin, reason: &str) -> Result<(), Error> {
    // A probe on an empty reading: whether the key is one fmperf uses.
    let mut probe = Launch::new(Format::NemoYaml);
    let mut pp = Pending::default();
    let before = probe.unused.len();
    let used = match apply_key(&mut probe, &mut pp, &e.key, &e.value, o) {
        Ok(()) => probe.unused.len() == before,
        Err(_) => true,
    };
    if used {
        return Err(o.error(&e.value, format!("the interpolation cannot be resolved: {reason}")));
    }
    let why = probe.unused.pop().map(|u| u.why).unwrap_or_else(|| why::UNKNOWN.into());
    l.unused(&e.key, &e.value, format!("{why}; its interpolation is not resolved ({reason})"));
    Ok(())
}

/// The section reason of an unknown key (`exp_manager.…`, `model.data.…`, …).
fn section_reason(path: &str) -> Option<&'static str> {
    let parts: Vec<&str> = path.split('.').collect();
    let has = |names: &[&str]| parts.iter().take(parts.len().saturating_sub(1)).any(|p| names.contains(p));
    Some(
        if has(&[
            "exp_manager",
            "logger",
            "logging",
            "profiling",
            "nsys_profile",
            "wandb",
            "tensorboard",
            "megatron_timer_kwargs",
        ]) {
            why::LOGGING
        } else if parts.first() == Some(&"run") && parts.len() > 1 {
            // NeMo-Framework-Launcher's `run:` (name, results_dir, time_limit, dependency).
            why::JOB
        } else if has(&["checkpoint", "checkpointing", "ckpt", "s3_checkpointing"]) {
            why::CHECKPOINT
        } else if has(&["data", "dataset", "tokenizer", "train_ds", "validation_ds"]) {
            why::DATA
        } else if has(&["optim", "optimizer", "sched", "scheduler", "rng"]) {
            why::HYPERPARAMETER
        } else {
            return None;
        },
    )
}

/// Reasons for the Lightning trainer's and Megatron-Bridge's own keys.
fn trainer_reason(leaf: &str) -> Option<&'static str> {
    Some(match leaf {
        "max_steps" | "max_epochs" | "max_time" | "train_iters" | "limit_train_batches" => why::LENGTH,
        "log_every_n_steps" | "enable_progress_bar" | "enable_model_summary" | "logger" => why::LOGGING,
        "val_check_interval"
        | "limit_val_batches"
        | "limit_test_batches"
        | "num_sanity_val_steps"
        | "eval_iters"
        | "eval_interval"
        | "check_val_every_n_epoch" => why::EVALUATION,
        "enable_checkpointing" | "save_interval" | "save" | "load" => why::CHECKPOINT,
        "accelerator" | "strategy" | "use_distributed_sampler" | "benchmark" | "plugins" | "callbacks" | "name" => {
            why::JOB
        }
        "bias" | "add_bias_linear" | "add_qkv_bias" => "affects performance slightly, not modelled (biases)",
        "gradient_clip_val" | "gradient_clip_algorithm" | "seed" => why::HYPERPARAMETER,
        "accumulate_grad_batches" => {
            "Megatron's gradient accumulation comes from global / (micro × data-parallel) batch"
        }
        "megatron_amp_O2" | "transformer_engine" | "use_flash_attention" | "mcore_gpt" => why::ASSUMED,
        _ => return None,
    })
}

/// Reasons for NeMo 1's own model keys (`megatron_gpt_config.yaml`, the launcher's
/// `conf/training/*/*.yaml`) and Megatron-Bridge's that are not Megatron flags.
fn nemo_reason(leaf: &str) -> Option<&'static str> {
    Some(match leaf {
        "ub_tp_comm_overlap"
        | "ub_tp_comm_overlap_cfg"
        | "overlap_p2p_comm"
        | "batch_p2p_comm"
        | "grad_div_ar_fusion"
        | "persist_layer_norm"
        | "get_attention_mask_from_fusion"
        | "use_emha"
        | "sharp"
        | "fp16_lm_cross_entropy"
        | "gradient_as_bucket_view"
        | "sync_batch_comm"
        | "wgrad_deferral_limit"
        | "reduce_amax"
        | "fp8_wgrad"
        | "grad_allreduce_chunk_size_mb"
        | "gc_interval"
        | "deterministic_mode"
        | "deteministic_mode"
        | "average_in_collective"
        | "validation_param_sync_overlap" => why::KERNEL,
        "fp8_e4m3" | "fp8_hybrid" => "the FP8 format of model.fp8: fmperf prices every FP8 format alike",
        "use_scaled_init_method"
        | "ffn_dropout"
        | "do_layer_norm_weight_decay"
        | "native_amp_init_scale"
        | "native_amp_growth_interval"
        | "reset_lr"
        | "reset_lr_steps"
        | "seq_len_interpolation_factor"
        | "scale_positional_embedding"
        | "rotary_percentage"
        | "normalize_attention_scores"
        | "layernorm_zero_centered_gamma"
        | "headscale" => why::HYPERPARAMETER,
        "pre_process" | "post_process" | "transformer_block_type" | "attention_type" | "mcore_gpt" => why::ASSUMED,
        "openai_gelu" => "the GELU approximation: not modelled (element-wise)",
        "qkv_bias" => "affects performance slightly, not modelled (biases)",
        "fp32_residual_connection" => "affects memory slightly, not modelled (FP32 residual stream)",
        "cpu_offloading" | "cpu_offloading_num_layers" | "cpu_offloading_activations" | "cpu_offloading_weights" => {
            "affects memory and time, not modelled (CPU offload)"
        }
        "num_micro_batches_with_partial_activation_checkpoints" | "activations_checkpoint_layers_per_pipeline" => {
            "affects memory, not modelled (partial recomputation of some micro-batches)"
        }
        "fsdp_grad_reduce_dtype" | "fsdp_sharded_checkpoint" => why::KERNEL,
        "resume_from_checkpoint" | "restore_from_path" | "restore_from_ckpt" | "pretrained_checkpoint" => {
            why::CHECKPOINT
        }
        "onnx_safe"
        | "apex_transformer_log_level"
        | "enable_megatron_timers"
        | "nccl_communicator_config_path"
        | "time_limit"
        | "dependency"
        | "results_dir" => why::JOB,
        "freeze_language_model" | "freeze_vision_model" | "freeze_vision_projection" => {
            "affects performance, not modelled (frozen parameters keep no gradients or optimizer states)"
        }
        "use_hf_vision_model" => "the vision tower: fmperf prices the language model",
        _ => return None,
    })
}

/// A precision name of NeMo / Lightning / Megatron-Bridge (`bf16-mixed`, `16`, `bf16_mixed`,
/// `bf16_with_fp8_delayed_scaling_mixed`).
fn precision_name(v: &str, o: &SettingOrigin) -> Result<Option<Precision>, Error> {
    let t = v.trim().to_ascii_lowercase().replace('_', "-");
    Ok(Some(if t.contains("fp8") {
        Precision::Fp8
    } else if t.starts_with("bf16") {
        Precision::Bf16
    } else if t.starts_with("16") || t.starts_with("fp16") {
        Precision::Fp16
    } else if t.starts_with("32") || t.starts_with("fp32") {
        Precision::Fp32
    } else if is_null(&t) {
        return Ok(None);
    } else {
        return Err(o.error(v, "must be bf16, bf16-mixed, 16, 16-mixed, 32 or a Megatron-Bridge recipe name"));
    }))
}

/// Reads one key (`path`) of a NeMo / Megatron-Bridge YAML, or a Hydra override of a NeMo script.
pub(crate) fn apply_key(
    l: &mut Launch,
    p: &mut Pending,
    path: &str,
    value: &str,
    o: &SettingOrigin,
) -> Result<(), Error> {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    // Megatron-LM's functional tests write their arguments as keys (`MODEL_ARGS:` with
    // `--num-layers: 16`): the flag's name.
    let leaf = leaf.strip_prefix("--").unwrap_or(leaf);
    if list_item(l, path, value, o).is_some() {
        return Ok(());
    }
    let in_optim = path.split('.').any(|s| s == "optim" || s == "optimizer");
    let flag = |name: &str| name.replace('_', "-");
    let mut handled = true;
    match leaf {
        "name" if path == "name" => _ = l.settings.model_name.put(value.to_string(), o),
        // NeMo 2 recipes keep the batch in their data module (`data.micro_batch_size`).
        "micro_batch_size" | "global_batch_size" if path == format!("data.{leaf}") => {
            megatron::apply(l, p, &flag(leaf), Some(value), o)?;
        }
        // Hydra / NeMo 2 (`nemo_run`) instantiation: the class a section builds.
        "_target_" | "_partial_" | "_recursive_" | "_convert_" => {
            if leaf == "_target_" && path.starts_with("model.") {
                l.notes.reading(format!(
                    "{path} = {value}: the model class's own defaults are not known to fmperf; the keys the file \
                     gives are read"
                ));
            }
            l.unused(path, value, "Hydra instantiation (the class a section builds)");
        }
        "devices" if path.contains("trainer") || path == "devices" => {
            if !is_null(value) && value != "-1" && value != "auto" {
                let n = positive(value, o)?;
                l.settings.devices_per_node.put(n, o);
            }
        }
        "num_nodes" => {
            let n = positive(value, o)?;
            l.settings.nodes.put(n, o);
        }
        "precision" | "mixed_precision" if !in_optim => {
            if let Some(prec) = precision_name(value, o)? {
                match prec {
                    Precision::Fp8 => {
                        megatron::apply(l, p, "bf16", None, o)?;
                        megatron::apply(l, p, "fp8-format", Some("hybrid"), o)?;
                        // A Megatron-Bridge FP8 recipe (`bf16_with_fp8_current_scaling_mixed`, …)
                        // sets fp8_param_gather=True (megatron/bridge/training/mixed_precision.py),
                        // unless the file says otherwise.
                        if value.to_ascii_lowercase().contains("mixed") && l.settings.fp8_weights.get().is_none() {
                            l.settings.fp8_weights.put(true, o);
                        }
                    }
                    Precision::Bf16 => _ = megatron::apply(l, p, "bf16", None, o)?,
                    Precision::Fp16 => _ = megatron::apply(l, p, "fp16", None, o)?,
                    _ => {}
                }
            }
        }
        "bf16" | "fp16" if in_optim => l.unused(path, value, "the optimizer's copy of the precision flag"),
        "fp8" => {
            let v = value.trim();
            match v.to_ascii_lowercase().as_str() {
                "true" => _ = megatron::apply(l, p, "fp8-format", Some("hybrid"), o)?,
                "false" => {}
                _ => _ = megatron::apply(l, p, "fp8-format", Some(v), o)?,
            }
        }
        "activation" | "activation_func" => {
            let t = value.to_ascii_lowercase();
            if t.contains("glu") {
                l.settings.gated_mlp.put(true, o);
            } else if !t.contains("gated") {
                l.settings.gated_mlp.put(false, o);
            }
        }
        "gated_linear_unit" => {
            let b = boolean(value, o)?;
            l.settings.gated_mlp.put(b, o);
        }
        "share_embeddings_and_output_weights" => {
            let b = boolean(value, o)?;
            l.settings.tied_embeddings.put(b, o);
        }
        "activations_checkpoint_granularity" => _ = megatron::apply(l, p, "recompute-granularity", Some(value), o)?,
        "activations_checkpoint_method" => _ = megatron::apply(l, p, "recompute-method", Some(value), o)?,
        "activations_checkpoint_num_layers" => _ = megatron::apply(l, p, "recompute-num-layers", Some(value), o)?,
        // Megatron-Bridge keeps it in its `optimizer` (and `ddp`) config, not in the model's.
        "use_distributed_optimizer" => _ = megatron::apply(l, p, "use-distributed-optimizer", Some(value), o)?,
        "num_moe_experts" => {
            if !is_null(value) {
                megatron::apply(l, p, "num-experts", Some(value), o)?;
            }
        }
        // Apex's `DistributedFusedAdam` (NeMo 1's `distributed_fused_adam`) "implements the ZeRO-2
        // algorithm, which distributes the optimizer state and gradients" (its docstring,
        // apex/contrib/optimizers/distributed_fused_adam.py): gradients sharded. Megatron-Core's
        // distributed optimizer (`mcore_distributed_optim`, Megatron-Bridge's
        // `use_distributed_optimizer`) keeps the whole main-gradient buffer: ZeRO-1.
        "name" if path.ends_with("optim.name") || path.ends_with("optimizer.name") => {
            let v = value.trim().to_ascii_lowercase();
            let s = if v == "distributed_fused_adam" {
                Sharding::Zero2
            } else if v.contains("distributed") {
                Sharding::Zero1
            } else {
                Sharding::Ddp
            };
            l.settings.sharding.put(s, o);
        }
        "type" | "tokenizer_model" | "tokenizer_type" | "library" if path.contains("tokenizer") => {
            if leaf == "library" {
                l.unused(path, value, why::DATA);
            } else if !is_null(value) {
                megatron::apply(l, p, "tokenizer-model", Some(value), o)?;
            }
        }
        // NeMo 1's torch FSDP (`model.fsdp`, with `fsdp_sharding_strategy` full / grad / hybrid).
        "fsdp" if path.ends_with("model.fsdp") || path == "fsdp" => {
            if boolean(value, o)? {
                l.settings.sharding.put(Sharding::Zero3, o);
            } else {
                l.unused(path, value, "FSDP off: the optimizer setting decides the sharding");
            }
        }
        "fsdp_sharding_strategy" => {
            if l.settings.sharding.get() == Some(&Sharding::Zero3) {
                match value.trim().to_ascii_lowercase().as_str() {
                    "full" => {}
                    "grad" => _ = l.settings.sharding.put(Sharding::Zero2, o),
                    "hybrid" => l.notes.reading(format!(
                        "{path} = hybrid: priced as full sharding over the data-parallel ranks (NeMo shards \
                         within a node and replicates across nodes)"
                    )),
                    _ => return Err(o.error(value, "must be full, grad or hybrid")),
                }
            } else {
                l.unused(path, value, "no effect: model.fsdp is off");
            }
        }
        // NeMo's vocabulary without the tokenizer's own (`model.override_vocab_size`).
        "override_vocab_size" => {
            if !is_null(value) {
                megatron::apply(l, p, "vocab-size", Some(value), o)?;
            }
        }
        "seq_length" | "encoder_seq_length" => {
            if !is_null(value) {
                megatron::apply(l, p, "seq-length", Some(value), o)?;
            }
        }
        _ => handled = false,
    }
    if handled {
        return Ok(());
    }
    if is_null(value) && megatron_knows(leaf) {
        // A null for a flag fmperf reads: the framework's default.
        return Ok(());
    }
    if section_reason(path).is_none() && megatron::apply(l, p, &flag(leaf), Some(value), o)? {
        return Ok(());
    }
    let why = section_reason(path)
        .or_else(|| trainer_reason(leaf))
        .or_else(|| nemo_reason(leaf))
        .or_else(|| megatron::irrelevant(&flag(leaf)));
    // A parallel degree fmperf does not know would split the devices differently from the run.
    if why.is_none() && megatron::is_parallel_degree(leaf) && !is_null(value) && value.trim() != "1" {
        return Err(o.error(
            value,
            "a parallel degree fmperf's reader does not know: the devices would be split differently from the \
             run's, so the file is not estimated",
        ));
    }
    l.unused(path, value, why.unwrap_or(why::UNKNOWN));
    Ok(())
}

/// The keys whose value is a list of names that a YAML may write item by item
/// (`cuda_graph_scope:` then `- attn`, read as `cuda_graph_scope.0`, `.1`, …).
const LIST_KEYS: [&str; 3] = ["cuda_graph_scope", "cuda_graph_modules", "moe_router_load_balancing_type"];

/// Reads one item of a [`LIST_KEYS`] list (`path` ends in its index; `o` its line): the items
/// joined by spaces, as Megatron's command line gives them, named by the list's key and first
/// line. `None` for any other key.
fn list_item(l: &mut Launch, path: &str, value: &str, o: &SettingOrigin) -> Option<()> {
    let (parent, index) = path.rsplit_once('.')?;
    let index: usize = index.parse().ok()?;
    let key = parent.rsplit('.').next().filter(|k| LIST_KEYS.contains(k))?;
    let m = &mut l.settings.moe;
    let slot = if key == "moe_router_load_balancing_type" { &mut m.balancing } else { &mut m.graph_modules };
    let earlier = match (&slot.origin, &slot.value) {
        (Some(first), Some(v)) if index > 0 && first.key == parent => Some((first.line, v.clone())),
        _ => None,
    };
    let (line, joined) =
        earlier.map_or_else(|| (o.line, value.to_string()), |(line, v)| (line, format!("{v} {value}")));
    slot.put(joined, &o.with_key(parent).with_line(line));
    Some(())
}

/// Whether `leaf` is a key fmperf reads (so that its null means "the default").
fn megatron_knows(leaf: &str) -> bool {
    let mut scratch = Launch::new(Format::NemoYaml);
    let mut p = Pending::default();
    // A probe with a valid value: a known flag accepts it or rejects the value; an unknown one
    // returns `false`.
    !matches!(
        megatron::apply(&mut scratch, &mut p, &leaf.replace('_', "-"), Some("1"), &SettingOrigin::new(leaf, 0)),
        Ok(false)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::extended::Recompute;

    #[test]
    fn nemo_keys_and_sections() {
        let l = parse(
            "trainer:\n  devices: 8\n  num_nodes: 4\n  precision: bf16-mixed\n  max_steps: 100\n\
             exp_manager:\n  name: run\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 256\n  \
             tensor_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: null\n  \
             encoder_seq_length: 4096\n  num_layers: 32\n  hidden_size: 4096\n  num_attention_heads: 32\n  \
             num_query_groups: 8\n  activation: fast-swiglu\n  activations_checkpoint_granularity: selective\n  \
             sequence_parallel: true\n  optim:\n    name: distributed_fused_adam\n    lr: 1e-4\n  \
             tokenizer:\n    library: huggingface\n    type: meta-llama/Meta-Llama-3-8B\n",
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.devices_per_node.copied(), s.nodes.copied()), (Some(8), Some(4)));
        assert_eq!(s.precision.copied(), Some(Precision::Bf16));
        assert_eq!(s.recompute.copied(), Some(Recompute::Selective));
        // `distributed_fused_adam` is Apex's ZeRO-2 (gradients sharded), not Megatron-Core's
        // distributed optimizer.
        assert_eq!(s.sharding.copied(), Some(Sharding::Zero2));
        assert_eq!((s.kv_heads.copied(), s.gated_mlp.copied(), s.vocab.copied()), (Some(8), Some(true), Some(128_256)));
        assert_eq!(s.vpp.copied(), None);
        let unused: Vec<(&str, &str)> = l.unused.iter().map(|u| (u.key.as_str(), u.why.as_str())).collect();
        assert!(
            unused.contains(&("trainer.max_steps", why::UNKNOWN)) || unused.iter().any(|u| u.0 == "trainer.max_steps")
        );
        assert!(unused.contains(&("exp_manager.name", why::LOGGING)), "{unused:?}");
        assert!(unused.contains(&("model.optim.lr", why::HYPERPARAMETER)), "{unused:?}");
    }

    #[test]
    fn megatron_bridge_and_hydra_overrides() {
        let l = parse(
            "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 2\n  seq_length: 16384\n  \
             num_layers: 32\n  hidden_size: 4096\n  num_attention_heads: 32\n  num_query_groups: 8\n  \
             gated_linear_unit: true\n  recompute_granularity: full\n  recompute_method: uniform\n  \
             recompute_num_layers: 1\n  fp8: hybrid\n  vocab_size: 128256\ntrain:\n  micro_batch_size: 1\n  \
             global_batch_size: 64\n  train_iters: 100\nddp:\n  use_distributed_optimizer: true\n\
             mixed_precision: bf16_mixed\n",
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.tp.copied(), s.cp.copied(), s.seq_len.copied()), (Some(2), Some(2), Some(16384)));
        assert_eq!((s.recompute.copied(), s.precision.copied()), (Some(Recompute::Full), Some(Precision::Fp8)));
        assert_eq!((s.sharding.copied(), s.gated_mlp.copied()), (Some(Sharding::Zero1), Some(true)));
        assert_eq!((s.mbs.copied(), s.global_batch.copied()), (Some(1), Some(64)));
        assert!(l.unused.iter().any(|u| u.key == "train.train_iters" && u.why == why::LENGTH));
        // NeMo's Hydra overrides on a command line.
        let c = crate::megatron::parse(
            "python megatron_gpt_pretraining.py trainer.devices=8 model.tensor_model_parallel_size=4 \
             model.micro_batch_size=2 exp_manager.name=x",
        )
        .unwrap();
        assert_eq!((c.settings.tp.copied(), c.settings.mbs.copied()), (Some(4), Some(2)));
        assert_eq!(c.settings.devices_per_node.copied(), Some(8));
        assert!(c.unused.iter().any(|u| u.key == "exp_manager.name" && u.why == why::LOGGING));
    }

    #[test]
    fn nemo1_fsdp_and_own_keys() {
        let l = parse(
            "run:\n  time_limit: 1-00:00:00\nmodel:\n  fsdp: true\n  fsdp_sharding_strategy: grad\n  \
             ub_tp_comm_overlap: true\n  activations_checkpoint_granularity: null\n  \
             activations_checkpoint_num_layers: 0\n",
        )
        .unwrap();
        assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero2));
        let why = |k: &str| l.unused.iter().find(|u| u.key == k).map(|u| u.why.clone()).unwrap_or_default();
        assert_eq!(why("run.time_limit"), why::JOB);
        assert_eq!(why("model.ub_tp_comm_overlap"), why::KERNEL);
        assert!(why("model.activations_checkpoint_num_layers").contains("null"));
        let e = parse("model:\n  fsdp: true\n  fsdp_sharding_strategy: most\n").unwrap_err();
        assert_eq!(e.field(), Some("model.fsdp_sharding_strategy"));
    }

    #[test]
    fn nemo2_recipe_data_module() {
        let l = parse(
            "_target_: nemo.collections.llm.api.pretrain\ndata:\n  _target_: MockDataModule\n  seq_length: 8192\n  \
             micro_batch_size: 2\n  global_batch_size: 512\nmodel:\n  _target_: LlamaModel\n  config:\n    \
             _target_: Llama3Config8B\n    num_layers: 32\ntrainer:\n  strategy:\n    tensor_model_parallel_size: 2\n",
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.mbs.copied(), s.global_batch.copied(), s.seq_len.copied()), (Some(2), Some(512), Some(8192)));
        assert_eq!((s.tp.copied(), s.layers.copied()), (Some(2), Some(32)));
        assert!(l.notes.iter().any(|n| n.contains("Llama3Config8B")), "{:?}", l.notes);
        assert!(l.unused.iter().any(|u| u.key == "data._target_"));
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = parse("model:\n  tensor_model_parallel_size: four\n").unwrap_err();
        assert_eq!(e.field(), Some("model.tensor_model_parallel_size"));
        let e = parse("trainer:\n  precision: half\n").unwrap_err();
        assert_eq!(e.field(), Some("trainer.precision"));
        let e = parse("model:\n  activations_checkpoint_granularity: most\n").unwrap_err();
        assert_eq!(e.field(), Some("model.activations_checkpoint_granularity"));
    }
}
