//! The layer catalogue of spec §3: one small struct per layer concept, each computing its counts
//! for one micro-batch on one device.
//!
//! Conventions shared by every layer:
//! * Quirk Q11: a dot product of length `K` costs `K` multiplies and `K − 1` adds (LinearSumma's
//!   forward is the one exception, see `summa.rs`); the element-wise constants (GELU 8/13,
//!   LayerNorm ≈ 9/12, softmax, dropout 1/1) are the reference's.
//! * Quirk Q10: every split of a dimension is a floor division; remainders are dropped silently.
//! * Quirk Q17: integer sub-products are exact ([`Int`], 128-bit) and become `f64` (round to
//!   nearest) exactly where the reference's Python multiplies them by a float; the float
//!   operations then follow Python's left-to-right evaluation order (spec Appendix B).

pub mod attention;
pub mod elementwise;
pub mod linear;
pub mod norm;
pub mod summa;

pub use attention::{FusedLA, FusedLASeqp};
pub use elementwise::{Act, Bias, DropOut};
pub use linear::{Linear, LinearSeqp};
pub use norm::{LayerNorm, LayerNorm2D};
pub use summa::LinearSumma;

use super::collective::CommSpec;
use super::machine::Units;
use super::timing::TimingRule;

/// Exact integer for sub-products (Python integers in the reference; quirk Q17).
pub type Int = i128;

/// Converts an exact integer product to `f64` with round-to-nearest, as Python does on its first
/// multiplication by a float.
#[inline]
pub fn fl(x: Int) -> f64 {
    match i64::try_from(x) {
        Ok(v) => v as f64,
        Err(_) => x as f64,
    }
}

/// Widens a count to [`Int`].
#[inline]
pub fn int(x: u64) -> Int {
    x as Int
}

/// `[c]·x`: the reference multiplies volumes by booleans (0 when the group is trivial).
#[inline]
pub fn gated(condition: bool, x: f64) -> f64 {
    if condition { x } else { 0.0 }
}

/// Most collectives one pass of any layer issues (LinearSumma's backward has four).
pub const MAX_COMMS: usize = 4;

/// A short, fixed-capacity list of collectives (no allocation on the search's hot path).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommList {
    len: usize,
    items: [CommSpec; MAX_COMMS],
}

impl CommList {
    const EMPTY: CommSpec =
        CommSpec { kind: crate::vocab::CollectiveKind::AllReduce, volume_gb: 0.0, group_size: 0, fast_share: 0 };

    /// No collective (the reference's type `none`).
    pub fn none() -> CommList {
        CommList { len: 0, items: [Self::EMPTY; MAX_COMMS] }
    }

    /// The given collectives, in order (at most [`MAX_COMMS`]; extra ones are a programming error
    /// caught by the tests of each layer).
    pub fn of(comms: &[CommSpec]) -> CommList {
        let mut list = Self::none();
        for c in comms.iter().take(MAX_COMMS) {
            list.items[list.len] = *c;
            list.len += 1;
        }
        list
    }

    /// The collectives, in order.
    pub fn as_slice(&self) -> &[CommSpec] {
        &self.items[..self.len]
    }
}

/// What one layer costs for one micro-batch on one device (the symbols of spec §3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerCounts {
    /// `W`: weights held [GB].
    pub weights_gb: f64,
    /// `Wg`: weight gradients [GB] (reported; the totals use `W`, quirk Q8).
    pub weight_grads_gb: f64,
    /// `A`: activations kept for the backward pass [GB].
    pub activations_gb: f64,
    /// `F_f`: forward work [TFLOP].
    pub flops_fwd_tflop: f64,
    /// `F_b`: backward work [TFLOP].
    pub flops_bwd_tflop: f64,
    /// `M_f`: forward HBM traffic [GB].
    pub mem_fwd_gb: f64,
    /// `M_b`: backward HBM traffic [GB].
    pub mem_bwd_gb: f64,
    /// Whether the work runs on tensor cores (`R_mat`) or vector units (`R_vec`).
    pub tensor_cores: bool,
    /// Collectives of the forward pass.
    pub comm_fwd: CommList,
    /// Collectives of the backward pass.
    pub comm_bwd: CommList,
    /// How the passes are timed.
    pub timing: TimingRule,
}

/// A layer of the catalogue.
pub trait Layer {
    /// Its counts for one micro-batch on one device.
    fn counts(&self, units: &Units) -> LayerCounts;
}
