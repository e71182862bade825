//! The error bar shown next to each predicted time (issue 14): how far off the mode was, out of
//! sample, on the shipped measured runs of the same kind of part and model, or a plain statement
//! that no measured run stands behind that combination. The numbers and the words are core's
//! ([`fmperf_core::validate::error_bands`]); the leave-one-source-out errors of the shipped
//! runs (and, in extended mode, of the shipped Mixture-of-Experts runs) come from core's cache
//! ([`fmperf_core::validate::error_bands::shipped_holdout`]), so no fit runs here; the page's
//! first view reads the cache alone ([`cached_band`]), so that it ships without the fitter.

use fmperf_core::extended::Workload;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::validate::error_bands::{
    ErrorBand, ModelClass, cached_shipped_holdout, error_band_from, part_class, shipped_holdout,
};
use fmperf_core::validate::holdout::Holdout;

/// The error bar of `spec`'s predictions (`None` when the model has no catalog shape).
pub fn band(spec: &ExploreSpec) -> Option<ErrorBand> {
    band_from(spec, |mode| Some(shipped_holdout(mode)))
}

/// [`band`] from the cached held-out errors alone (`None` also when the cache does not hold
/// them): the same bar wherever the cache is current, which a test of core keeps it.
pub fn cached_band(spec: &ExploreSpec) -> Option<ErrorBand> {
    band_from(spec, cached_shipped_holdout)
}

fn band_from(spec: &ExploreSpec, holdout: impl Fn(ModeKind) -> Option<&'static Holdout>) -> Option<ErrorBand> {
    let mode = spec.mode.kind();
    let workload = spec
        .extended
        .as_ref()
        .map(|e| e.workload.clone())
        .or_else(|| Workload::from_catalog(&spec.model_entry).ok())?;
    Some(error_band_from(holdout(mode)?, &part_class(&spec.system_entry), ModelClass::of_workload(&workload)))
}

/// The line under the results: `Error bar (±8 %): …`.
pub fn line(b: &ErrorBand) -> String {
    format!("Error bar ({}): {}", short(b), b.message)
}

/// The bar's short form next to a time: `±8 %` (the typical error), or `no runs`.
pub fn short(b: &ErrorBand) -> String {
    match b.median_abs_error {
        Some(e) if b.runs > 0 => format!("±{:.0} %", e * 100.0),
        _ => "no runs".to_string(),
    }
}
