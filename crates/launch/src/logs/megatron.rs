//! Megatron-LM's training log (`megatron/training/training.py`, `training_log`): one line every
//! `--log-interval` iterations,
//!
//! ```text
//!  [2024-…] iteration      100/  500000 | consumed samples: 51200 | elapsed time per iteration (ms): 1234.5 |
//!  throughput per GPU (TFLOP/s/GPU): 402.1 | learning rate: … | global batch size:   512 | lm loss: … |
//! ```
//!
//! (one line in the log), with Megatron-DeepSpeed's additions `samples per second: …`,
//! `tokens per gpu per second (tgs): …` and `TFLOPs: …` (per GPU); and the memory report
//! (`report_memory`) `[Rank 0] (after 10 iterations) memory (MB) | allocated: … | max allocated: …
//! | reserved: … | max reserved: …`, in MB of 2²⁰ bytes.
//!
//! The time is the mean over the interval; TFLOP/s are per GPU in Megatron's count (model FLOPs;
//! older versions count recomputation too: the calibration takes the step time first).

use super::{MIB_IN_GB, Reading, number_after};
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::{MemoryKind, MetricKind};

/// Reads one line (see the module documentation).
pub fn read_line(line: &str) -> Option<Result<Reading, String>> {
    if line.contains("elapsed time per iteration (ms):") {
        return Some(iteration_line(line));
    }
    if line.contains("memory (MB)") && line.contains("max reserved:") {
        return Some(memory_line(line));
    }
    None
}

/// The iteration number of a line: the digits after the first `iteration` followed by one.
fn iteration(line: &str) -> Option<u64> {
    let mut rest = line;
    while let Some(at) = rest.find("iteration") {
        rest = &rest[at + "iteration".len()..];
        let digits: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
    }
    None
}

fn iteration_line(line: &str) -> Result<Reading, String> {
    let mut figures = Vec::new();
    if let Some(ms) = number_after(line, "elapsed time per iteration (ms):", "elapsed time per iteration", false) {
        figures.push((Figure::Time(MetricKind::StepTimeS), ms? / 1000.0));
    }
    for (key, kind) in [
        ("tokens per gpu per second (tgs):", MetricKind::TokensPerSPerDevice),
        ("samples per second:", MetricKind::SamplesPerS),
        ("throughput per GPU (TFLOP/s/GPU):", MetricKind::TflopsPerDevice),
        ("TFLOPs:", MetricKind::TflopsPerDevice),
    ] {
        if let Some(v) = number_after(line, key, key.trim_end_matches(':'), false) {
            let v = v?;
            if !figures.iter().any(|(f, _)| *f == Figure::Time(kind)) {
                figures.push((Figure::Time(kind), v));
            }
        }
    }
    Ok(Reading { step: iteration(line), figures, note: None })
}

fn memory_line(line: &str) -> Result<Reading, String> {
    let mut figures = Vec::new();
    for (key, kind) in [("max allocated:", MemoryKind::PeakAllocated), ("max reserved:", MemoryKind::PeakReserved)] {
        if let Some(v) = number_after(line, key, key.trim_end_matches(':'), false) {
            figures.push((Figure::Memory(kind), v? * MIB_IN_GB));
        }
    }
    let step = line.find("(after").and_then(|at| {
        let digits: String = line[at + 6..].trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    });
    Ok(Reading { step, figures, note: None })
}
