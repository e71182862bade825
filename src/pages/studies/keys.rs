//! The studies view's URL query keys: `fmperf_app::studies` (host-tested), re-exported.

pub use fmperf_app::studies::*;
