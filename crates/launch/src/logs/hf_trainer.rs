//! Hugging Face Trainer and DeepSpeed.
//!
//! **Trainer** (`transformers/trainer.py`, `speed_metrics` at the end of `train`): the final
//! metrics, printed as a dict (`{'train_runtime': 1234.5, 'train_samples_per_second': 41.5,
//! 'train_steps_per_second': 0.162, 'train_loss': 2.1, 'epoch': 1.0}`), by `log_metrics` as
//! `  train_samples_per_second =     41.5`, or as JSON in `train_results.json`. Samples per second
//! over the whole run and every device, warm-up included (Trainer logs no per-step speed); the
//! steps per second are rounded to three decimals, so only the samples are read.
//!
//! **DeepSpeed** (`deepspeed/utils/timer.py`, `ThroughputTimer`, every `steps_per_print`):
//! `epoch=0/micro_step=100/global_step=100, RunningAvgSamplesPerSec=45.6, CurrSamplesPerSec=46.1,
//! MemAllocated=12.3GB, MaxMemAllocated=20.1GB` — samples per second of the global batch, and the
//! allocator's allocated bytes divided by 1024³ (GiB, though labelled GB). Its older timer
//! (2021–22) printed `EPOCH/STEP, SamplesPerSec=…, MemAllocated=…GB, MaxMemAllocated=…GB`, the
//! samples per second averaged since the timer's start step.

use super::{GIB_IN_GB, Reading};
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::{MemoryKind, MetricKind};

/// The number after `key` and any of `'":= ` (`None` without `key`).
fn value(line: &str, key: &str) -> Option<Result<f64, String>> {
    let at = line.find(key)? + key.len();
    let rest = line[at..].trim_start_matches(['\'', '"', ':', '=', ' ', '\t']);
    let text: String =
        rest.chars().take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')).collect();
    Some(match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{key} `{}` is not a number", rest.split([',', '}']).next().unwrap_or("").trim())),
    })
}

/// Reads one line of Trainer's final metrics.
pub fn read_trainer_line(line: &str) -> Option<Result<Reading, String>> {
    let v = value(line, "train_samples_per_second")?;
    Some(v.map(|v| Reading { step: None, figures: vec![(Figure::Time(MetricKind::SamplesPerS), v)], note: None }))
}

/// Reads one line of DeepSpeed's throughput timer.
pub fn read_deepspeed_line(line: &str) -> Option<Result<Reading, String>> {
    // The current timer's `CurrSamplesPerSec`, else the older timer's `, SamplesPerSec=` (the
    // current line's `RunningAvgSamplesPerSec=` has no space before `SamplesPerSec`).
    let (samples, old) = match value(line, "CurrSamplesPerSec") {
        Some(v) => (v, false),
        None => (value(line, " SamplesPerSec=")?, true),
    };
    Some((|| {
        let mut figures = vec![(Figure::Time(MetricKind::SamplesPerS), samples?)];
        if let Some(m) = value(line, "MaxMemAllocated") {
            figures.push((Figure::Memory(MemoryKind::PeakAllocated), m? * GIB_IN_GB));
        }
        let step = if old { old_step(line) } else { value(line, "global_step").and_then(Result::ok).map(|s| s as u64) };
        let note = old.then_some(
            "DeepSpeed's older timer prints samples per second averaged since its start step, not the last step's",
        );
        Ok(Reading { step, figures, note })
    })())
}

/// The step of the older timer's line: `STEP` in the `EPOCH/STEP` before `, SamplesPerSec=`.
fn old_step(line: &str) -> Option<u64> {
    let before = &line[..line.find(", SamplesPerSec=")?];
    before.split_whitespace().last()?.split('/').nth(1)?.parse().ok()
}
