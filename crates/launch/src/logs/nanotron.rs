//! nanotron's trainer line (`nanotron/trainer.py`, `train_step_logs`: a list of `LogItem`s joined
//! by ` | `, most in its human format `1.52K`):
//!
//! ```text
//! iteration: 20 / 1000 | consumed_tokens: 2.62M | elapsed_time_per_iteration_ms: 1.52K | tokens_per_sec: 86.2K |
//! tokens_per_sec_per_gpu: 10.8K | global_batch_size: 64 | lm_loss: 7.12 | lr: 0.0003 | model_tflops_per_gpu: 187 | …
//! ```
//!
//! and its memory line (`log_memory`): `Memory usage: 12345.67MiB. Peak allocated 23456.78MiB.
//! Peak reserved: 24567.89MiB` (MiB of 2²⁰ bytes).

use super::{MIB_IN_GB, Reading, number_after, step_after};
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::{MemoryKind, MetricKind};

/// Reads one line (see the module documentation).
pub fn read_line(line: &str) -> Option<Result<Reading, String>> {
    if line.contains("elapsed_time_per_iteration_ms:") {
        return Some((|| {
            let step = step_after(line, "iteration:").transpose()?;
            let mut figures = Vec::new();
            for (key, kind, scale) in [
                ("elapsed_time_per_iteration_ms:", MetricKind::StepTimeS, 1e-3),
                ("tokens_per_sec_per_gpu:", MetricKind::TokensPerSPerDevice, 1.0),
                ("model_tflops_per_gpu:", MetricKind::TflopsPerDevice, 1.0),
            ] {
                if let Some(v) = number_after(line, key, key.trim_end_matches(':'), true) {
                    figures.push((Figure::Time(kind), v? * scale));
                }
            }
            Ok(Reading { step, figures, note: None })
        })());
    }
    if line.contains("Memory usage:") && line.contains("Peak reserved") {
        return Some((|| {
            let at = line.find("Peak reserved").unwrap_or(0) + "Peak reserved".len();
            let rest = line[at..].trim_start_matches([':', ' ']);
            let mib = rest.split("MiB").next().unwrap_or(rest);
            let v = super::number(mib, "Peak reserved", false)?;
            Ok(Reading {
                step: None,
                figures: vec![(Figure::Memory(MemoryKind::PeakReserved), v * MIB_IN_GB)],
                note: None,
            })
        })());
    }
    None
}
