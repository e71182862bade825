//! The explorer's scenario calibrated on the user's measured run ([`crate::calibrate`]): the
//! measured figures of one configuration of the scenario fit the stack constants
//! ([`fit_on_configuration`]), the scenario priced with them ([`ExploreSpec::with_constants`],
//! [`ExploreSpec::calibrated`]) and whether a calibration covers a prediction ([`coverage`]): the
//! error band narrows only where it does.
//!
//! Extended mode only: a calibration changes extended mode's part; reference mode is the
//! published model and is never calibrated (an error naming `mode`).

use super::report::ReportContext;
use crate::Error;
use crate::calibrate::fit::{Fitted, Prediction, fit};
use crate::calibrate::{Calibration, Measured, RunFacts, StackConstants};
use crate::cost::Detail;
use crate::resolve::explorer::ExploreSpec;
use crate::search::Execution;
use crate::vocab::{Candidate, PredictedMemory};

/// Mean |error| of the shipped runs predicted after calibrating on one other run of their source
/// and system ([`crate::validate::one_shot`]; `tests/one_shot.rs` holds this figure to the check).
pub const ONE_SHOT_MAPE: f64 = 0.077;

/// Mean |error| of the same rows uncalibrated (leave-one-source-out).
pub const UNCALIBRATED_MAPE: f64 = 0.087;

/// How far from the measured run a calibration still covers a prediction: device counts within
/// this factor of the run's either way.
pub const COVERED_DEVICE_FACTOR: f64 = 4.0;

impl ExploreSpec {
    /// This scenario priced as a stack with constants `k` runs it (extended mode).
    pub fn with_constants(&self, k: &StackConstants) -> Result<ExploreSpec, Error> {
        let Some(e) = &self.extended else {
            return Err(Error::invalid(
                "mode",
                "reference",
                "a calibration changes extended mode's pricing; reference mode is the published model: switch to \
                 extended mode",
            ));
        };
        let mut spec = self.clone();
        let mut setup = e.clone();
        setup.hardware = k.apply(&e.hardware);
        spec.extended = Some(setup);
        Ok(spec)
    }

    /// This scenario as calibration `cal` prices it: an error naming `calibration.system` when it
    /// was measured on another system.
    pub fn calibrated(&self, cal: &Calibration) -> Result<ExploreSpec, Error> {
        cal.check_system(&self.system_id)?;
        self.with_constants(&cal.constants)
    }
}

/// What converts the scenario's throughput figures to step times.
pub fn run_facts(spec: &ExploreSpec, ctx: &ReportContext) -> RunFacts {
    RunFacts {
        global_batch: spec.global_batch,
        seq_len: spec.model.l,
        devices: spec.n_gpus,
        model_tflop_per_sample: ctx.flops_per_sample_tflop,
        peak_tflops: ctx.peak_matrix_tflops,
    }
}

/// Fits the stack constants to `measured`, figures of configuration `c` (run with `execution`)
/// of the scenario.
pub fn fit_on_configuration(
    spec: &ExploreSpec,
    c: &Candidate,
    execution: Option<Execution>,
    measured: &[Measured],
) -> Result<Fitted, Error> {
    let ctx = ReportContext::new(spec)?;
    let facts = run_facts(spec, &ctx);
    let mut predict = |k: &StackConstants| -> Result<Prediction, Error> {
        match spec.with_constants(k)?.evaluate_with(c, execution)? {
            Detail::Extended(e) => Ok(Prediction { step_s: e.totals.t, memory: PredictedMemory::of(&e) }),
            Detail::Reference(_) => Err(Error::invalid("mode", "reference", "cannot be calibrated")),
        }
    };
    fit(measured, &facts, &mut predict)
}

/// The calibration document of a fit on configuration `code` of the scenario.
pub fn calibration_of(spec: &ExploreSpec, code: &str, fitted: &Fitted) -> Calibration {
    Calibration::of_fit(&spec.system_id, &spec.model_id, spec.n_gpus, code, fitted)
}

/// Whether a calibration covers the predictions of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    /// The scenario is the measured run's model on its system at a device count within
    /// [`COVERED_DEVICE_FACTOR`] of it.
    pub covered: bool,
    /// Why, in words (`the measured run's model and system, 2× its devices` or `another model
    /// (llama3-70b, measured llama3-8b): the calibration extrapolates`).
    pub why: String,
}

impl Coverage {
    /// The error band's half-width for a prediction whose uncalibrated band is `band` (a
    /// fraction): narrowed by the shipped runs' one-shot against uncalibrated errors where the
    /// calibration covers the prediction, unchanged where it extrapolates.
    pub fn band(&self, band: f64) -> f64 {
        if self.covered { band * ONE_SHOT_MAPE / UNCALIBRATED_MAPE } else { band }
    }
}

/// Whether `cal` covers the predictions of `spec`: the same system (else not at all), the
/// measured run's model, and a device count within [`COVERED_DEVICE_FACTOR`] of the run's.
pub fn coverage(cal: &Calibration, spec: &ExploreSpec) -> Coverage {
    if cal.system != spec.system_id {
        return Coverage { covered: false, why: format!("another system (measured on {})", cal.system) };
    }
    let model = cal.from["model"].as_str().unwrap_or("");
    if model != spec.model_id && model != spec.model_name {
        return Coverage {
            covered: false,
            why: format!(
                "another model ({}, measured {}): the calibration extrapolates, the band stays wide",
                spec.model_id,
                if model.is_empty() { "an unnamed model" } else { model }
            ),
        };
    }
    let measured = cal.from["devices"].as_u64().unwrap_or(0);
    if measured == 0 {
        return Coverage { covered: false, why: "the measured run's device count is unknown".into() };
    }
    let ratio = spec.n_gpus as f64 / measured as f64;
    let scale = if ratio >= 1.0 { format!("{ratio:.3}×") } else { format!("1/{:.3}×", 1.0 / ratio) };
    let scale = scale.replace(".000", "");
    if ratio > COVERED_DEVICE_FACTOR || ratio < 1.0 / COVERED_DEVICE_FACTOR {
        return Coverage {
            covered: false,
            why: format!(
                "{scale} the measured run's {measured} devices: the calibration extrapolates, the band stays wide"
            ),
        };
    }
    Coverage { covered: true, why: format!("the measured run's model and system, {scale} its {measured} devices") }
}
