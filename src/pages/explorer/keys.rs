//! The explorer's URL query keys: `fmperf_app::explorer` (host-tested), re-exported.

pub use fmperf_app::explorer::*;
