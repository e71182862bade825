//! The explorer's URL query keys: `fmperf_app::explorer` (host-tested) with its MoE controls
//! (`moe_keys`) and compared configurations (`pins`), re-exported.

pub use fmperf_app::explorer::moe_keys::*;
pub use fmperf_app::explorer::pins::*;
pub use fmperf_app::explorer::*;
