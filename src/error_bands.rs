//! The error bar shown next to each predicted time (issue 14): how far off the mode was, out of
//! sample, on the shipped measured runs of the same kind of part and model, or a plain statement
//! that no measured run stands behind that combination. The numbers and the words are core's
//! ([`fmperf_core::validate::error_bands`]); this module only computes the leave-one-source-out
//! fits once per page and mode, in ~10 ms slices (so the page stays responsive), and shares them.

use std::cell::OnceCell;
use std::sync::Arc;

use fmperf_core::explore::ExploreSpec;
use fmperf_core::extended::Workload;
use fmperf_core::mode::ModelMode;
use fmperf_core::validate::Mode;
use fmperf_core::validate::error_bands::{ErrorBand, ModelClass, error_band_from, part_class};
use fmperf_core::validate::holdout::{Holdout, HoldoutJob};
use fmperf_core::validate::shipped_runs;
use leptos::prelude::*;

use crate::runner::{Sliced, spawn_sliced};

/// The held-out errors of each mode once computed (`None` while the fits run).
#[derive(Clone)]
struct Store {
    reference: ArcRwSignal<Option<Arc<Holdout>>>,
    extended: ArcRwSignal<Option<Arc<Holdout>>>,
}

thread_local! {
    static STORE: OnceCell<Store> = const { OnceCell::new() };
}

/// The fits of one mode, one per step.
struct Job(HoldoutJob);

impl Sliced for Job {
    type Output = Holdout;
    fn step(&mut self, _units: usize) -> bool {
        self.0.step()
    }
    fn progress(&self) -> (u64, u64) {
        self.0.progress()
    }
    fn finish(self) -> Holdout {
        self.0.finish()
    }
}

fn store() -> Store {
    STORE.with(|cell| {
        cell.get_or_init(|| {
            let s = Store { reference: ArcRwSignal::new(None), extended: ArcRwSignal::new(None) };
            for (mode, slot) in [(Mode::Reference, s.reference.clone()), (Mode::Extended, s.extended.clone())] {
                let _ = spawn_sliced(
                    Job(HoldoutJob::new(&shipped_runs(), mode)),
                    |_| {},
                    move |h| slot.set(Some(Arc::new(h))),
                );
            }
            s
        })
        .clone()
    })
}

/// The error bar of `spec`'s predictions (tracked; `None` while the fits still run).
pub fn band(spec: &ExploreSpec) -> Option<ErrorBand> {
    let s = store();
    let slot = match spec.mode {
        ModelMode::Reference => s.reference,
        ModelMode::Extended(_) => s.extended,
    };
    let held = slot.get()?;
    let workload = spec
        .extended
        .as_ref()
        .map(|e| e.workload.clone())
        .or_else(|| Workload::from_catalog(&spec.model_entry).ok())?;
    Some(error_band_from(&held, &part_class(&spec.system_entry), ModelClass::of(&workload, false)))
}

/// The bar's short form next to a time: `±8 %` (the typical error), or `no runs`.
pub fn short(b: &ErrorBand) -> String {
    match b.median_abs_error {
        Some(e) if b.runs > 0 => format!("±{:.0} %", e * 100.0),
        _ => "no runs".to_string(),
    }
}
