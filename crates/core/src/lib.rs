//! # fmperf-core
//!
//! The performance model of foundation-model training that fmperf's web page and command-line tool
//! share: transformer layer counts, parallel strategies, collectives, iteration totals, the
//! configuration searches, sweeps and the catalogs of models and systems.
//!
//! Invariants (see `ARCHITECTURE.md`):
//! * no I/O and no web dependencies: inputs come in as values or strings, results go out as values;
//! * deterministic: the same inputs give bit-identical outputs on every platform;
//! * never panics on user input: invalid inputs are rejected with an [`Error`] naming the field;
//! * long work (searches, sweeps) is resumable, so a page can run it in time slices.
//!
//! Units: FLOP counts in TFLOP, memory and message volumes in GB (1e9 bytes), bandwidths in GB/s,
//! compute rates in TFLOP/s, times in seconds, unless a name says otherwise.

pub mod calibrate;
pub mod catalog;
pub mod cost;
pub mod error;
pub mod explore;
pub mod extended;
pub mod format;
pub mod hint;
pub mod layer_list;
pub mod mode;
pub mod mode_kind;
pub mod model;
pub mod moe_shape;
pub mod presets;
pub mod reference;
pub mod resolve;
pub mod run_cost;
pub mod schema;
pub mod search;
pub mod sensitivity;
pub mod sort;
pub mod strategy;
pub mod strict_json;
pub mod sweep;
pub mod system;
pub mod validate;
pub mod vocab;

pub use error::{Error, FieldPath, FieldPathBuf};
pub use model::ModelShape;
pub use strategy::Strategy;
pub use system::SystemParams;
