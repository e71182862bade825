//! Whether a row's measured time figure is physically possible on its part: a figure faster than
//! the part's peak is a typo, a per-node or sparse figure, or a misread unit, and scoring the model
//! against it would move the fit and the headline. Such a row is skipped with the reason.
//!
//! The rule: the model FLOP rate per device the figure implies is at most the part's dense peak at
//! the row's precision ([`super::row::RunSetup::mfu_peak_tflops`]). A stated TFLOP/s per device or
//! an MFU/HFU is held to the peak exactly (an MFU above 100 %); a figure of time or throughput is
//! turned into a FLOP rate with fmperf's model FLOP count, which counts attention and the head by
//! one convention among several (causal halving, the vocabulary), so it is held to
//! [`TIME_FIGURE_MARGIN`] × the peak: only figures no convention can explain are refused. A row
//! whose part has no known peak is not checked.

use super::convention::flops_of;
use super::metric::FlopCount;
use super::row::RunSetup;
use crate::vocab::MetricKind;

/// How far above the peak a time or throughput figure may imply, through fmperf's own FLOP count,
/// before it is called implausible (the spread of FLOP conventions, not of measurements).
pub const TIME_FIGURE_MARGIN: f64 = 1.5;

/// A measured figure above what its part can do: the row is skipped with this reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Implausible {
    /// The figure as the row states it, with the rate it implies where that is not the figure.
    what: String,
    /// The part's dense peak at the row's precision [TFLOP/s per device].
    peak_tflops: f64,
    /// How far above the peak the figure may imply (1: not at all; [`TIME_FIGURE_MARGIN`]).
    margin: f64,
}

impl std::fmt::Display for Implausible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (peak, margin) = (self.peak_tflops, self.margin);
        let bound = if margin == 1.0 {
            format!("the part's dense peak of {peak} TFLOP/s per device")
        } else {
            format!("{margin} × the part's dense peak of {peak} TFLOP/s per device (room for FLOP conventions)")
        };
        write!(
            f,
            "implausible measured figure: {} is above {bound}; a typo, a per-node or sparse figure, or another unit? \
             (skipped)",
            self.what
        )
    }
}

impl std::error::Error for Implausible {}

/// `Err` when the row's measured time figure implies more than its part can do.
pub fn measured_within_peak(setup: &RunSetup) -> Result<(), Implausible> {
    let Some(metric) = setup.metric.as_ref() else { return Ok(()) };
    let peak = setup.mfu_peak_tflops;
    if !(peak > 0.0) || !metric.value.is_finite() || metric.value <= 0.0 {
        return Ok(());
    }
    let l = &setup.layout;
    let (devices, batch) = (l.devices() as f64, l.global_batch as f64);
    let tokens = batch * setup.workload.seq_len as f64;
    let v = metric.value;
    let step_s = match metric.kind {
        MetricKind::TflopsPerDevice => {
            return refuse_above(v, peak, 1.0, &format!("{} = {v} TFLOP/s per device", metric.kind.key()));
        }
        MetricKind::Mfu | MetricKind::Hfu => {
            let stated = metric.peak_tflops.unwrap_or(peak);
            return refuse_above(v * stated, stated, 1.0, &format!("{} = {:.1} %", metric.kind.key(), v * 100.0));
        }
        MetricKind::StepTimeS => v,
        MetricKind::TokensPerSPerDevice => tokens / (v * devices),
        MetricKind::TokensPerSTotal => tokens / v,
        MetricKind::SamplesPerS => batch / v,
    };
    let Ok((flops, _)) = flops_of(FlopCount::Model, &setup.convention_shape, batch, setup.options.recompute) else {
        return Ok(());
    };
    let implied = flops / (step_s * devices) * 1e-12;
    refuse_above(
        implied,
        peak,
        TIME_FIGURE_MARGIN,
        &format!("{} = {v} (that is {implied:.4e} model TFLOP/s per device)", metric.kind.key()),
    )
}

/// `Err` when `rate` [TFLOP/s per device] exceeds `margin` × `peak`.
fn refuse_above(rate: f64, peak: f64, margin: f64, what: &str) -> Result<(), Implausible> {
    if rate <= peak * margin {
        return Ok(());
    }
    Err(Implausible { what: what.to_string(), peak_tflops: peak, margin })
}
