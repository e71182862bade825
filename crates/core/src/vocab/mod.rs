//! The words both models and every caller share, in one neutral home below them all: a parallel
//! configuration ([`Candidate`], and the [`divisors`] its degrees are drawn from), what pricing it gives ([`Totals`], [`Outcome`]), the collective
//! operations ([`CollectiveKind`]) and the parts of the iteration time and of the memory per
//! device ([`TimePart`], [`MemoryPart`]), whether a need fits a device ([`Fits`]), and what a
//! measured figure is ([`MetricKind`], [`MemoryKind`]) with the memory prediction it is compared
//! with ([`PredictedMemory`]), model-FLOP utilisation ([`mfu`]), the one [`Note`] every list of notes holds, and the model's
//! [`SlidingWindow`] attention that the model format reads and extended mode prices.
//!
//! The reference model (`reference/`), extended mode (`extended/`), the searches, sweeps, the
//! explorer, validation and calibration import them from here; this module depends only on the value types
//! (`strategy`, `mode_kind`), so it closes no cycle (the tidy test's `no_module_cycles`).
//!
//! Units: TFLOP, GB (1e9 bytes), seconds, unless a name says otherwise.

pub mod candidate;
pub mod collective;
pub mod measured;
pub mod mfu;
pub mod note;
mod parts;
pub mod sliding_window;
pub mod totals;
pub mod verdict;

pub use candidate::{Candidate, MAX_DEVICES, MAX_GLOBAL_BATCH, divisors};
pub use collective::CollectiveKind;
pub use measured::{MemoryKind, MetricKind, PredictedMemory, predicted_memory_gb};
pub use mfu::{model_flops_utilisation, step_time_at_utilisation, utilisation_of_step};
pub use note::{Note, NoteKind, NoteList};
pub use parts::{MemoryPart, TimePart};
pub use sliding_window::SlidingWindow;
pub use totals::{Outcome, Totals};
pub use verdict::{Fits, Need, fits, fits_between, need_range_gb};
