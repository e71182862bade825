//! Hugging Face Trainer flags (`transformers.TrainingArguments`, as `train.py` scripts of
//! FastChat, LLaVA, Alpaca, TRL and the like take them through `HfArgumentParser`), launched by
//! `torchrun`, `deepspeed`, `accelerate launch` or `python`: the micro-batch
//! (`--per_device_train_batch_size`), gradient accumulation, precision (`--bf16 True`),
//! recomputation (`--gradient_checkpointing True`), the sequence length (`--model_max_length`,
//! `--max_seq_length`, …), FSDP sharding (`--fsdp "full_shard auto_wrap"`) and the model's name.
//! The Trainer runs plain data parallelism over every device (tp = pp = 1); the model's shape is
//! not in the flags (give its `config.json` with a second `--from`), nor is the DeepSpeed
//! configuration (its JSON, likewise).

use super::Pending;
use crate::settings::{SettingOrigin, boolean, positive};
use crate::{Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::{Recompute, Sharding};
use fmperf_core::vocab::NoteList;

/// Flags only the Trainer (or its scripts' own dataclasses) has: their presence makes a launch a
/// Trainer launch.
pub(super) fn is_trainer_flag(name: &str) -> bool {
    matches!(
        name,
        "per-device-train-batch-size"
            | "model-name-or-path"
            | "per-gpu-train-batch-size"
            | "num-train-epochs"
            | "output-dir"
            | "gradient-checkpointing"
            | "train.micro-batch-size"
            | "micro-train-batch-size"
            | "model.model-name-or-path"
    )
}

/// Reads one Trainer flag (name with dashes). `Ok(false)`: not a Trainer flag this reads.
pub(super) fn apply(
    l: &mut Launch,
    p: &mut Pending,
    name: &str,
    value: Option<&str>,
    o: &SettingOrigin,
) -> Result<bool, Error> {
    let need = || value.map(str::to_string).ok_or_else(|| o.error("", "needs a value"));
    let on = || value.map_or(Ok(true), |v| boolean(v, o));
    match name {
        "per-device-train-batch-size" | "per-gpu-train-batch-size" | "train-batch-size-per-device" => {
            put(l, |s| &mut s.mbs, positive(&need()?, o)?, o)
        }
        // OpenRLHF's own flags (`openrlhf.cli.train_sft`): the global batch and the micro-batch.
        "train-batch-size" | "train.batch-size" => put(l, |s| &mut s.global_batch, positive(&need()?, o)?, o),
        "micro-train-batch-size" | "train.micro-batch-size" => put(l, |s| &mut s.mbs, positive(&need()?, o)?, o),
        "ds.zero-stage" => return super::apply(l, p, "zero-stage", value, o),
        "ds.param-dtype" => match need()?.to_ascii_lowercase().as_str() {
            "bf16" | "bfloat16" => p.half = Some((Precision::Bf16, o.clone())),
            "fp16" | "float16" => p.half = Some((Precision::Fp16, o.clone())),
            v => return Err(o.error(v, "must be bf16 or fp16")),
        },
        "model.gradient-checkpointing-enable" | "gradient-checkpointing-enable" => {
            if on()? {
                p.granularity = Some(("full".into(), o.clone()));
            }
        }
        "max-source-length" => p.source_len = Some((positive(&need()?, o)?, o.clone())),
        "max-target-length" => p.target_len = Some((positive(&need()?, o)?, o.clone())),
        "gradient-accumulation-steps" => put(l, |s| &mut s.grad_accumulation, positive(&need()?, o)?, o),
        "model-max-length" | "max-seq-length" | "max-seq-len" | "cutoff-len" | "max-length" | "block-size"
        | "max-len" | "data.max-len" => put(l, |s| &mut s.seq_len, positive(&need()?, o)?, o),
        "model-name-or-path" | "model-name" | "pretrain" | "model.model-name-or-path" => {
            put(l, |s| &mut s.model_name, need()?, o);
            l.notes.reading(format!(
                "{} names the model ({}): its shape is not in the flags; give its config.json with a second --from",
                o.key,
                need()?
            ));
        }
        "bf16" | "fp16" if value.is_some_and(|v| boolean(v, o).is_ok()) || value.is_none() => {
            if on()? {
                let h = if name == "bf16" { Precision::Bf16 } else { Precision::Fp16 };
                p.half = Some((h, o.clone()));
            }
        }
        "gradient-checkpointing" => {
            if on()? {
                p.granularity = Some(("full".into(), o.clone()));
            } else {
                put(l, |s| &mut s.recompute, Recompute::None, o);
            }
        }
        "fsdp" => {
            let v = need()?.to_ascii_lowercase();
            let s = if v.contains("full_shard") || v.contains("hybrid_shard") {
                Sharding::Zero3
            } else if v.contains("shard_grad_op") {
                Sharding::Zero2
            } else if v.contains("no_shard") || v.trim().is_empty() || v == "false" {
                Sharding::Ddp
            } else {
                return Err(
                    o.error(v, "must name an FSDP strategy: full_shard, shard_grad_op, hybrid_shard or no_shard")
                );
            };
            if v.contains("hybrid_shard") {
                l.notes.reading(format!(
                    "{} hybrid_shard: read as full sharding (ZeRO-3); fmperf does not model sharding within a node only",
                    o.key
                ));
            }
            put(l, |s| &mut s.sharding, s, o);
        }
        "deepspeed" if value.is_some_and(|v| boolean(v, o).is_err()) => {
            p.ds_json = true;
            l.unused(
                o.key.clone(),
                need()?,
                "the DeepSpeed JSON is a file of its own: give it with a second --from to read its ZeRO stage and batch",
            )
        }
        _ => return Ok(false),
    }
    Ok(true)
}

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

/// Why a Trainer flag fmperf does not read does not matter, by name (dashes).
pub(super) fn irrelevant(n: &str) -> Option<&'static str> {
    let starts = |ps: &[&str]| ps.iter().any(|p| n.starts_with(p));
    Some(if starts(&["logging-", "report-to", "run-name", "disable-tqdm", "log-level"]) {
        why::LOGGING
    } else if starts(&["save-", "output-dir", "overwrite-output-dir", "resume-from-checkpoint", "load-best-model"]) {
        why::CHECKPOINT
    } else if starts(&[
        "learning-rate",
        "weight-decay",
        "warmup-",
        "lr-scheduler",
        "adam-",
        "max-grad-norm",
        "seed",
        "label-smoothing",
        "neftune",
    ]) {
        why::HYPERPARAMETER
    } else if starts(&["num-train-epochs", "max-steps", "max-train-samples"]) {
        why::LENGTH
    } else if starts(&[
        "eval",
        "per-device-eval-batch-size",
        "do-eval",
        "metric-for-best-model",
        "greater-is-better",
        "prediction-loss-only",
    ]) {
        why::EVALUATION
    } else if starts(&[
        "data-path",
        "eval-data-path",
        "dataset",
        "train-file",
        "validation-file",
        "lazy-preprocess",
        "image-folder",
        "template",
        "preprocessing-num-workers",
        "dataloader-",
        "remove-unused-columns",
        "conv-template",
        "data-",
        "tokenizer-name",
        "trust-remote-code",
        "cache-dir",
    ]) {
        why::DATA
    } else if starts(&[
        "tf32",
        "torch-compile",
        "ddp-",
        "fsdp-",
        "optim",
        "use-flash-attn",
        "flash-attn",
        "attn-implementation",
        "group-by-length",
        "local-rank",
    ]) {
        why::KERNEL
    } else if starts(&["lora", "use-lora", "q-lora", "peft", "bits", "double-quant", "quant-type"]) {
        "affects performance, not modelled: LoRA / QLoRA train small adapters of frozen (or quantized) weights; fmperf prices full training"
    } else if starts(&["do-train", "deepspeed", "gradient-checkpointing-kwargs"]) {
        "affects performance, not modelled here (a Trainer option; DeepSpeed's settings come from its JSON)"
    } else {
        return None;
    })
}
