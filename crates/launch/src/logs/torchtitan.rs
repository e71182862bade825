//! torchtitan's step line (`torchtitan/train.py`, the metrics processor's `log`), printed every
//! `log_freq` steps, often in colour:
//!
//! ```text
//! [rank0]:[titan] 2025-… - root - INFO - step: 20  loss:  7.8012  grad_norm:  1.2  memory: 38.21GiB(40.22%)  tps: 6,543  tflops: 303.12  mfu: 30.65%
//! ```
//!
//! `tps` is tokens per second per device (the tokens of the interval over its time and the
//! non-data-parallel degree), `tflops` per device in model FLOPs, `mfu` a percentage of the peak
//! torchtitan assumes for the part, `memory` the peak *reserved* by the caching allocator in GiB.

use super::{GIB_IN_GB, Reading, number, word_after};
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::{MemoryKind, MetricKind};

/// Reads one line (see the module documentation).
pub fn read_line(line: &str) -> Option<Result<Reading, String>> {
    if !(line.contains("step:") && (line.contains("tps:") || line.contains("tflops:") || line.contains("mfu:"))) {
        return None;
    }
    Some((|| {
        let step = match word_after(line, "step:") {
            Some(w) => Some(w.parse::<u64>().map_err(|_| format!("step `{w}` is not a whole number"))?),
            None => None,
        };
        let mut figures = Vec::new();
        if let Some(w) = word_after(line, "memory:") {
            let gib = w.split("GiB").next().unwrap_or(w);
            figures.push((Figure::Memory(MemoryKind::PeakReserved), number(gib, "memory", false)? * GIB_IN_GB));
        }
        if let Some(w) = word_after(line, "tps:") {
            figures.push((Figure::Time(MetricKind::TokensPerSPerDevice), number(w, "tps", false)?));
        }
        if let Some(w) = word_after(line, "tflops:") {
            figures.push((Figure::Time(MetricKind::TflopsPerDevice), number(w, "tflops", false)?));
        }
        if let Some(w) = word_after(line, "mfu:") {
            figures.push((Figure::Time(MetricKind::Mfu), number(w, "mfu", false)? / 100.0));
        }
        Ok(Reading { step, figures, note: None })
    })())
}
