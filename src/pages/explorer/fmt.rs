//! How the explorer writes numbers: [`fmperf_app::fmt`] (shared with the first view), re-exported.

pub use fmperf_app::fmt::*;
