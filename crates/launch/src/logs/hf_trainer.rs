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
//! allocator's allocated bytes divided by 1024³ (GiB, though labelled GB).

use super::{GIB_IN_GB, Reading};
use fmperf_core::calibrate::Figure;
use fmperf_core::validate::memory::MemoryKind;
use fmperf_core::validate::metric::MetricKind;

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
    Some(v.map(|v| Reading { step: None, figures: vec![(Figure::Time(MetricKind::SamplesPerS), v)] }))
}

/// Reads one line of DeepSpeed's throughput timer.
pub fn read_deepspeed_line(line: &str) -> Option<Result<Reading, String>> {
    let samples = value(line, "CurrSamplesPerSec")?;
    Some((|| {
        let mut figures = vec![(Figure::Time(MetricKind::SamplesPerS), samples?)];
        if let Some(m) = value(line, "MaxMemAllocated") {
            figures.push((Figure::Memory(MemoryKind::PeakAllocated), m? * GIB_IN_GB));
        }
        let step = value(line, "global_step").and_then(Result::ok).map(|s| s as u64);
        Ok(Reading { step, figures })
    })())
}
