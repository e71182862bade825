//! DeepSpeed JSON (`ds_config.json`): the batch (`train_batch_size`,
//! `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`; `"auto"` is left to the
//! launch), the ZeRO stage (`zero_optimization.stage` → [`Sharding`]), the precision
//! (`bf16.enabled`, `fp16.enabled`); everything else is listed as unused with why (offload,
//! buckets, activation-checkpointing options, optimizer, scheduler, logging). Read together with
//! the launch that names it (see [`super::parse_files`]). JSON with a key given twice is an error
//! naming the key (DeepSpeed's `json.load` would silently keep the last).

use fmperf_core::vocab::NoteList;
use serde_json::Value;

use super::settings::SettingOrigin;
use super::{Format, Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::Sharding;

/// Whether `text` looks like a DeepSpeed JSON rather than a Hugging Face config: it names one of
/// DeepSpeed's own top-level keys.
pub fn looks_like(text: &str) -> bool {
    [
        "\"zero_optimization\"",
        "\"train_micro_batch_size_per_gpu\"",
        "\"train_batch_size\"",
        "\"gradient_accumulation_steps\"",
        "\"zero_allow_untested_optimizer\"",
    ]
    .iter()
    .any(|k| text.contains(k))
}

/// Deepest nesting read (bounds the recursion on hostile input).
const MAX_DEPTH: usize = 64;

/// The deepest nesting of brackets in `text` (outside strings).
fn depth(text: &str) -> usize {
    let (mut d, mut max, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for c in text.chars() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (true, false, '"') => in_str = false,
            (false, _, '"') => in_str = true,
            (false, _, '{' | '[') => {
                d += 1;
                max = max.max(d);
            }
            (false, _, '}' | ']') => d = d.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Reads JSON `text` (named `what` in errors) with a key given twice refused, nesting bounded,
/// and the line of a syntax error shown (a template's placeholder such as `CONFIG_BATCH_SIZE`).
pub fn strict_json(text: &str, what: &str) -> Result<Value, Error> {
    if depth(text) > MAX_DEPTH {
        return Err(Error::Parse { message: format!("{what} nested deeper than {MAX_DEPTH} levels") });
    }
    fmperf_core::strict_json::parse(text).map_err(|e| {
        let shown: String =
            text.lines().nth(e.line().saturating_sub(1)).unwrap_or("").trim().chars().take(80).collect();
        Error::Parse { message: format!("{what} is not JSON: {e} (line {}: `{shown}`)", e.line()) }
    })
}

/// Reads a DeepSpeed JSON.
pub fn parse(text: &str) -> Result<Launch, Error> {
    let root = strict_json(text, "DeepSpeed JSON")?;
    let Some(obj) = root.as_object() else {
        return Err(Error::Parse { message: "a DeepSpeed JSON must be a JSON object".into() });
    };
    let mut l = Launch::new(Format::DeepSpeed);
    let line_of = |key: &str| text.lines().position(|l| l.contains(&format!("\"{key}\""))).map_or(0, |i| i + 1);
    let shown = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut stage: Option<u64> = None;
    let mut bf16 = false;
    for (key, value) in obj {
        let o = SettingOrigin::new(key.clone(), line_of(key));
        match key.as_str() {
            "train_batch_size" | "train_micro_batch_size_per_gpu" | "gradient_accumulation_steps" => {
                let Some(n) = batch_value(value, &o, &mut l)? else { continue };
                let s = &mut l.settings;
                match key.as_str() {
                    "train_batch_size" => _ = s.global_batch.put(n, &o),
                    "train_micro_batch_size_per_gpu" => _ = s.mbs.put(n, &o),
                    _ => _ = s.grad_accumulation.put(n, &o),
                }
            }
            "zero_optimization" => {
                let Some(z) = value.as_object() else {
                    return Err(o.error(value, "must be an object with a \"stage\""));
                };
                for (sub, v) in z {
                    let so = SettingOrigin::new(format!("zero_optimization.{sub}"), line_of(sub));
                    match sub.as_str() {
                        "stage" => {
                            let n = v.as_u64().ok_or_else(|| so.error(v, "must be 0, 1, 2 or 3"))?;
                            let sh = Sharding::of_zero_stage(n).ok_or_else(|| so.error(n, "must be 0, 1, 2 or 3"))?;
                            l.settings.sharding.put(sh, &so);
                            stage = Some(n);
                        }
                        "offload_optimizer" | "offload_param" => {
                            let device = v.get("device").and_then(Value::as_str).unwrap_or("none");
                            let why = if device == "none" {
                                "no offload (device none)"
                            } else {
                                "affects performance, not modelled: ZeRO-Offload keeps these states in host memory or \
                                 NVMe; fmperf prices and counts them on the device"
                            };
                            l.unused(so.key, shown(v), why);
                        }
                        _ => l.unused(
                            so.key,
                            shown(v),
                            "affects communication overlap and bucketing, not modelled: fmperf prices ZeRO's collectives \
                             at its fitted efficiency",
                        ),
                    }
                }
            }
            "bf16" | "fp16" => {
                let enabled = value.get("enabled").unwrap_or(&Value::Bool(false));
                let on = match enabled {
                    Value::Bool(b) => *b,
                    Value::String(s) if s == "auto" => {
                        l.notes.reading_of(
                            &format!("{key}.enabled"),
                            format!("{key}.enabled is \"auto\": the precision is left to the launch"),
                        );
                        false
                    }
                    other => {
                        return Err(o
                            .with_key(format!("{key}.enabled"))
                            .error(other, "must be true, false or \"auto\""));
                    }
                };
                if on {
                    let p = if key == "bf16" { Precision::Bf16 } else { Precision::Fp16 };
                    if let Some(old) = l.settings.precision.put(p, &o.with_key(format!("{key}.enabled"))) {
                        return Err(o.with_key(format!("{key}.enabled")).error(
                            "true",
                            format!("{} is enabled too: DeepSpeed takes one of bf16 and fp16", old.key),
                        ));
                    }
                    bf16 |= key == "bf16";
                }
                for (sub, v) in value.as_object().into_iter().flatten().filter(|(s, _)| s.as_str() != "enabled") {
                    l.unused(format!("{key}.{sub}"), shown(v), why::HYPERPARAMETER);
                }
            }
            "activation_checkpointing" => {
                for (sub, v) in value.as_object().into_iter().flatten() {
                    l.unused(
                        format!("activation_checkpointing.{sub}"),
                        shown(v),
                        "affects memory, not modelled: whether blocks are recomputed is the launch's \
                         (--checkpoint-activations); partitioning or CPU copies of the checkpoints are not modelled",
                    );
                }
            }
            _ => l.unused(key.clone(), shown(value), reason(key)),
        }
    }
    let s = &l.settings;
    if let (Some(g), Some(m), Some(ga)) = (s.global_batch.copied(), s.mbs.copied(), s.grad_accumulation.copied()) {
        if !g.is_multiple_of(m * ga) {
            return Err(s.global_batch.error(
                "train_batch_size",
                g,
                format!("must be micro-batch × accumulation × data-parallel ranks: {m} × {ga} does not divide it"),
            ));
        }
        l.notes.reading_of(
            "train_batch_size",
            format!("train_batch_size {g} = {m} × {ga} × {} data-parallel ranks", g / (m * ga)),
        );
    }
    // With bf16 and ZeRO stage 0 (or no `zero_optimization`), DeepSpeed wraps the optimizer in
    // its BF16 optimizer (`runtime/bf16_optimizer.py`): FP32 master weights and optimizer states
    // partitioned over the data-parallel ranks (ZeRO-1's layout) and gradients accumulated in an
    // FP32 buffer of every parameter; the Megatron-DeepSpeed reader reads `--zero-stage 0 --bf16`
    // the same way.
    if bf16 && matches!(stage, None | Some(0)) {
        let o = l.settings.precision.origin.clone().unwrap_or(SettingOrigin::new("bf16.enabled", 0));
        let so = l.settings.sharding.origin.clone().unwrap_or_else(|| o.clone());
        l.settings.sharding.put(Sharding::Zero1, &so);
        l.settings.fp32_grad_accumulation.put(true, &o);
        l.notes.reading(
            "bf16 with ZeRO stage 0: DeepSpeed runs its BF16 optimizer, which shards the optimizer states and FP32 \
             master weights over data parallelism (as ZeRO-1) and accumulates gradients in an FP32 buffer of every \
             parameter (grad_accumulation_buffer)"
                .into(),
        );
    }
    Ok(l)
}

/// A batch value: a positive integer, or `"auto"` (left to the launch: `None`, with a note).
fn batch_value(v: &Value, o: &SettingOrigin, l: &mut Launch) -> Result<Option<u64>, Error> {
    match v {
        Value::String(s) if s == "auto" => {
            l.notes.reading_of(
                &o.key,
                format!("{} is \"auto\": left to the launch (the Trainer's arguments fill it)", o.key),
            );
            Ok(None)
        }
        _ => v
            .as_u64()
            .filter(|n| *n > 0 && *n <= 1 << 40)
            .map(Some)
            .ok_or_else(|| o.error(v, "must be a positive integer or \"auto\"")),
    }
}

/// Why a DeepSpeed key fmperf does not read does not matter.
fn reason(key: &str) -> &'static str {
    match key {
        "optimizer" | "scheduler" | "gradient_clipping" | "prescale_gradients" | "gradient_predivide_factor" => {
            why::HYPERPARAMETER
        }
        "steps_per_print"
        | "wall_clock_breakdown"
        | "flops_profiler"
        | "wandb"
        | "tensorboard"
        | "csv_monitor"
        | "comms_logger"
        | "dump_state"
        | "memory_breakdown" => why::LOGGING,
        "checkpoint" | "load_universal_checkpoint" => why::CHECKPOINT,
        "zero_allow_untested_optimizer" | "zero_force_ds_cpu_optimizer" | "elasticity" | "autotuning" => why::JOB,
        "communication_data_type" | "data_types" | "sparse_gradients" | "amp" | "fp16_master_weights_and_grads" => {
            "affects performance, not modelled: fmperf prices gradients and collectives in the training precision"
        }
        "pipeline" => "the pipeline is the launch's (its --pipeline-model-parallel-size)",
        _ => why::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_ds_config() {
        let l = parse(
            r#"{
  "train_batch_size": 256,
  "train_micro_batch_size_per_gpu": 16,
  "steps_per_print": 1,
  "zero_optimization": { "stage": 2, "reduce_bucket_size": 5e8,
    "offload_optimizer": { "device": "cpu" } },
  "bf16": { "enabled": true }
}"#,
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.global_batch.copied(), s.mbs.copied()), (Some(256), Some(16)));
        assert_eq!(s.sharding.copied(), Some(Sharding::Zero2));
        assert_eq!(s.precision.copied(), Some(Precision::Bf16));
        assert_eq!(s.sharding.origin.as_ref().unwrap().line, 5);
        let keys: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
        assert!(keys.contains(&"zero_optimization.offload_optimizer") && keys.contains(&"steps_per_print"), "{keys:?}");
        assert!(s.fp32_grad_accumulation.get().is_none());
    }

    #[test]
    fn auto_duplicates_and_bad_values() {
        let l = parse(
            r#"{"train_batch_size": "auto", "gradient_accumulation_steps": "auto", "bf16": {"enabled": "auto"}}"#,
        )
        .unwrap();
        assert!(l.settings.global_batch.get().is_none() && l.settings.grad_accumulation.get().is_none());
        assert_eq!(l.notes.len(), 3);
        let e = parse("{\"train_batch_size\": 8,\n \"train_batch_size\": 16}").unwrap_err();
        assert!(e.to_string().contains("train_batch_size") && e.to_string().contains("twice"), "{e}");
        let e = parse("{\"zero_optimization\": {\"stage\": 4}}").unwrap_err();
        assert_eq!(e.field(), Some("zero_optimization.stage"));
        let e = parse(
            "{\"train_batch_size\": 10, \"train_micro_batch_size_per_gpu\": 4, \"gradient_accumulation_steps\": 1}",
        )
        .unwrap_err();
        assert_eq!(e.field(), Some("train_batch_size"));
        let e = parse("{\"bf16\": {\"enabled\": true}, \"fp16\": {\"enabled\": true}}").unwrap_err();
        assert_eq!(e.field(), Some("fp16.enabled"));
        assert!(parse("{\"train_batch_size\": CONFIG_BATCH_SIZE}").is_err());
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).is_err());
        let l = parse(r#"{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}}"#).unwrap();
        assert_eq!(l.settings.fp32_grad_accumulation.copied(), Some(true));
        assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero1));
    }

    #[test]
    fn bf16_with_stage_0_is_the_bf16_optimizer() {
        let l = parse(r#"{"zero_optimization": {"stage": 0}, "bf16": {"enabled": true}}"#).unwrap();
        assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero1));
        assert_eq!(l.settings.fp32_grad_accumulation.copied(), Some(true));
        assert_eq!(l.settings.sharding.origin.as_ref().map(|o| o.key.as_str()), Some("zero_optimization.stage"));
        assert!(l.notes.iter().any(|n| n.contains("BF16 optimizer")));
        // fp16 (or bf16 "auto") with stage 0 stays plain data parallelism.
        let l = parse(r#"{"zero_optimization": {"stage": 0}, "fp16": {"enabled": true}}"#).unwrap();
        assert_eq!(l.settings.sharding.copied(), Some(Sharding::Ddp));
        let l = parse(r#"{"zero_optimization": {"stage": 0}, "bf16": {"enabled": "auto"}}"#).unwrap();
        assert_eq!(l.settings.sharding.copied(), Some(Sharding::Ddp));
        let l = parse(r#"{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}}"#).unwrap();
        assert_eq!(l.settings.sharding.copied(), Some(Sharding::Zero2));
    }
}
