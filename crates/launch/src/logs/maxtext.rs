//! MaxText's step line (`MaxText/train.py`, `record_scalar_metrics` and the metric logger):
//!
//! ```text
//! completed step: 20, seconds: 2.345, TFLOP/s/device: 185.123, Tokens/s/device: 3493.012, total_weights: 65536, loss: 9.876
//! ```
//!
//! `seconds` is the step's wall time; TFLOP/s and tokens/s are per device, TFLOP/s in MaxText's
//! model-FLOP count (`calculate_tflops_training_per_device`). Its 2023 line printed the same
//! per-device figure as `TFLOP/s:` (`completed step: 15107, seconds: 2.167, TFLOP/s: 36.722, loss:
//! 2.191`), without tokens.

use super::{Reading, number_after};
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::MetricKind;

/// Reads one line (see the module documentation).
pub fn read_line(line: &str) -> Option<Result<Reading, String>> {
    if !line.contains("completed step:") {
        return None;
    }
    Some((|| {
        let step = match number_after(line, "completed step:", "completed step", false) {
            Some(s) => Some(s? as u64),
            None => None,
        };
        let mut figures = Vec::new();
        for (key, kind) in [
            ("seconds:", MetricKind::StepTimeS),
            ("TFLOP/s/device:", MetricKind::TflopsPerDevice),
            ("Tokens/s/device:", MetricKind::TokensPerSPerDevice),
            ("TFLOP/s:", MetricKind::TflopsPerDevice),
        ] {
            if let Some(v) = number_after(line, key, key.trim_end_matches(':'), false) {
                let v = v?;
                if !figures.iter().any(|(f, _)| *f == Figure::Time(kind)) {
                    figures.push((Figure::Time(kind), v));
                }
            }
        }
        Ok(Reading { step, figures, note: None })
    })())
}
