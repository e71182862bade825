//! Calibration: a user's measured run as the anchor of every other prediction on its system.
//!
//! A measured figure of one configuration ([`Measured`]: step time, tokens/s per device or in all,
//! samples/s, TFLOP/s per device, MFU, or a peak-memory figure), together with that configuration
//! as extended mode prices it, fixes the few constants that describe the user's stack
//! ([`constants`]: a compute scale, a scale-out bandwidth scale, a memory overhead), by a bounded
//! fit with priors centred on the shipped fit ([`fit`]). The result is a small versioned document
//! ([`document::Calibration`]) that names its system and the run it came from; applied to that
//! system's [`crate::extended::Hardware`] ([`constants::StackConstants::apply`]) it changes every
//! extended-mode prediction there: other layouts, other sizes, other scales.
//!
//! No I/O: the CLI and the page read the files and the log lines (`fmperf-launch`'s `logs`) and
//! pass the figures in.

pub mod constants;
pub mod document;
pub mod fit;

pub use constants::StackConstants;
pub use document::Calibration;

use crate::Error;
use crate::vocab::MemoryKind;
use crate::vocab::MetricKind;
use crate::vocab::{Note, step_time_at_utilisation};

/// What a measured figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// A time figure (seconds per step, tokens/s, samples/s, TFLOP/s per device, MFU, HFU).
    Time(MetricKind),
    /// A peak memory figure of one device [GB = 1e9 B] of a kind (allocated, reserved,
    /// nvidia-smi).
    Memory(MemoryKind),
}

impl Figure {
    /// The JSON name: the metric's key (`step_time_s`, `tokens_per_s_per_device`, …) or
    /// `memory_<kind>_gb`.
    pub fn key(&self) -> String {
        match self {
            Figure::Time(k) => k.key().to_string(),
            Figure::Memory(k) => format!("memory_{}_gb", k.as_str()),
        }
    }

    /// The figure a key names ([`Figure::key`]).
    pub fn parse(key: &str) -> Option<Figure> {
        if let Some(k) = MetricKind::parse(key) {
            return Some(Figure::Time(k));
        }
        let kind = key.strip_prefix("memory_")?.strip_suffix("_gb")?;
        [MemoryKind::PeakAllocated, MemoryKind::PeakReserved, MemoryKind::NvidiaSmi]
            .into_iter()
            .find(|k| k.as_str() == kind)
            .map(Figure::Memory)
    }
}

/// One measured figure with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// What it is.
    pub figure: Figure,
    /// Its value, in the figure's unit (seconds, tokens/s, TFLOP/s, a fraction for MFU, GB).
    pub value: f64,
    /// Where it came from, in words (`--step-time`, `log line 42`, `median of 8 steady steps
    /// (lines 12–40) of a torchtitan log`).
    pub source: String,
}

impl Measured {
    /// A figure; the value must be positive and finite (`field` names it in the error).
    pub fn new(figure: Figure, value: f64, source: impl Into<String>, field: &str) -> Result<Measured, Error> {
        if !value.is_finite() || value <= 0.0 {
            return Err(Error::invalid(field, value, "must be a positive number"));
        }
        if figure == Figure::Time(MetricKind::Hfu) {
            return Err(Error::invalid(
                field,
                value,
                "HFU counts recomputed FLOPs, which depend on the stack's recomputation: calibrate from \
                 MFU, TFLOP/s, tokens/s or the step time",
            ));
        }
        if figure == Figure::Time(MetricKind::Mfu) && value > 1.0 {
            return Err(Error::invalid(field, value, "is a fraction of the peak (0–1): 0.42 for 42 %"));
        }
        Ok(Measured { figure, value, source: source.into() })
    }
}

/// What converts a throughput figure of a configuration to its step time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFacts {
    /// Samples per step.
    pub global_batch: u64,
    /// Tokens per sample.
    pub seq_len: u64,
    /// Devices of the run.
    pub devices: u64,
    /// Model FLOPs of one sample, forward and backward [TFLOP] (what NeMo, MaxText and torchtitan
    /// count in their TFLOP/s and MFU).
    pub model_tflop_per_sample: f64,
    /// Dense peak of one device at the run's precision [TFLOP/s] (MFU's denominator).
    pub peak_tflops: f64,
}

impl RunFacts {
    /// The step time [s] a time figure means for this configuration, with a note on the
    /// convention assumed (FLOP-based figures). `None` for a memory figure.
    pub fn step_time_s(&self, m: &Measured) -> Option<(f64, Option<Note>)> {
        let Figure::Time(kind) = m.figure else { return None };
        let g = self.global_batch as f64;
        let n = self.devices as f64;
        let tokens = g * self.seq_len as f64;
        let flops = self.model_tflop_per_sample * g;
        let model = "read in model FLOPs (6·N per token plus attention, no recomputation: the \
                     convention of NeMo, MaxText and torchtitan)";
        Some(match kind {
            MetricKind::StepTimeS => (m.value, None),
            MetricKind::TokensPerSPerDevice => (tokens / (m.value * n), None),
            MetricKind::TokensPerSTotal => (tokens / m.value, None),
            MetricKind::SamplesPerS => (g / m.value, None),
            MetricKind::TflopsPerDevice => {
                (flops / (m.value * n), Some(Note::reading(format!("TFLOP/s per device {model}"))))
            }
            // HFU is refused by `Measured::new`; read as MFU were one built by hand.
            MetricKind::Mfu | MetricKind::Hfu => (
                step_time_at_utilisation(flops, m.value, self.peak_tflops, n),
                Some(Note::reading(format!(
                    "{} {model}, of a dense peak of {} TFLOP/s per device",
                    kind.key().to_ascii_uppercase(),
                    self.peak_tflops
                ))),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_convert_to_one_step_time() {
        let f = RunFacts {
            global_batch: 256,
            seq_len: 4096,
            devices: 64,
            model_tflop_per_sample: 200.0,
            peak_tflops: 989.0,
        };
        let t = 10.0;
        let tokens = 256.0 * 4096.0;
        let cases = [
            (MetricKind::StepTimeS, t),
            (MetricKind::TokensPerSPerDevice, tokens / t / 64.0),
            (MetricKind::TokensPerSTotal, tokens / t),
            (MetricKind::SamplesPerS, 256.0 / t),
            (MetricKind::TflopsPerDevice, 200.0 * 256.0 / t / 64.0),
            (MetricKind::Mfu, 200.0 * 256.0 / t / 64.0 / 989.0),
        ];
        for (k, v) in cases {
            let m = Measured::new(Figure::Time(k), v, "test", "x").unwrap();
            let (s, _) = f.step_time_s(&m).unwrap();
            assert!((s - t).abs() < 1e-9, "{k:?}: {s}");
        }
        assert!(Measured::new(Figure::Time(MetricKind::Mfu), 42.0, "", "--mfu").is_err());
        assert!(Measured::new(Figure::Time(MetricKind::StepTimeS), -1.0, "", "--step-time").is_err());
        for key in ["step_time_s", "mfu", "memory_peak_reserved_gb", "memory_nvidia_smi_gb"] {
            assert_eq!(Figure::parse(key).unwrap().key(), key);
        }
        assert_eq!(Figure::parse("memory_x_gb"), None);
    }
}
