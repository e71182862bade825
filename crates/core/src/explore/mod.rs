//! The explorer's logic (everything the Explorer page computes that is not UI): one scenario →
//! the best configurations of several strategies, merged, with the derived numbers a reader
//! wants next to them. The catalogs a scenario's ids resolve against (built-in plus the user's own
//! entries) are the resolver's ([`crate::resolve::UserEntries`]), imported from there.
//!
//! * [`choices`]: the models and systems to pick from, reference presets first, unusable ones marked;
//! * [`inputs`]: the scenario's defaults as the page's fields hold them (text); the form itself
//!   and its validation field by field into an
//!   [`ExploreSpec`](crate::resolve::explorer::ExploreSpec) are the resolver's
//!   ([`crate::resolve::explorer`]); every rejected field is an [`crate::Error`] naming it;
//! * [`task`]: [`ExploreSearch`], a resumable search over several strategies (one
//!   [`crate::search::Search`] each) that a page runs in time slices, and [`merge`] of their
//!   results;
//! * [`metrics`]: training days from a budget, model-FLOP utilisation, memory against capacity;
//! * [`report`]: [`ConfigReport`], one configuration with its time and memory breakdowns and the
//!   placement of each parallel dimension on the fast domain;
//! * [`own`]: "try your own configuration": a typed configuration evaluated even when it is not in
//!   the top list, with how far over memory it is or which rule it breaks;
//! * [`layers`]: the drill-down of one configuration, layer by layer;
//! * a configuration's compact, URL-safe text form (`2d.dp4.tp8x1.pp128.mbs1.nb16.nv8x1x1x1`)
//!   lives with the result row, in [`crate::search::code`] (the row's `config` column);
//! * [`export`]: CSV and JSON of result lists;
//! * [`saved`]: the versioned format of scenarios saved in browser storage;
//! * [`calibrated`]: the scenario calibrated on the user's measured run, and where a calibration
//!   covers a prediction;
//! * [`mode`]: the scenario in reference or extended mode (searches, full evaluations, MFU's
//!   model FLOPs).
//!
//! Units: as in the rest of the crate (seconds, GB, TFLOP, TFLOP/s), plus days for training time.

pub mod calibrated;
pub mod choices;
pub mod export;
pub mod inputs;
pub mod layers;
pub mod merge;
pub mod metrics;
pub mod own;
pub mod priced;
pub mod report;
pub mod saved;
pub mod task;

pub use merge::{StrategyTop, merge};
pub use metrics::{MemoryFit, training_days};
pub use own::{OwnConfig, OwnOutcome, evaluate_own};
pub use report::{ConfigReport, ParallelDimension, ReportContext};
pub use task::{ExploreResult, ExploreSearch, ExploreShard};
