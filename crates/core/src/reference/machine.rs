//! The constants of one system that the reference formulas read, derived once from
//! [`SystemParams`] (spec §1.2 and §2).

use super::timing;
use crate::SystemParams;

/// The two network tiers as the collective model of spec §2.4 sees them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetworkTiers {
    /// `bs = ib_bandwidth · ib_eff`: achievable scale-out bandwidth per NIC [GB/s].
    pub slow_bandwidth: f64,
    /// `bf = nvlink_bandwidth · nvlink_eff`: achievable scale-up bandwidth per device [GB/s].
    pub fast_bandwidth: f64,
    /// `λs`: latency of one scale-out hop [s].
    pub slow_latency: f64,
    /// `λf`: latency of one scale-up hop [s].
    pub fast_latency: f64,
    /// `ν`: NICs per device (multiplies the rings that leave a domain) [count].
    pub nic_factor: f64,
    /// `N_vs`: devices per scale-up domain [count].
    pub domain_size: u64,
}

/// Element sizes, FLOP unit and the tensor-core factor: what the layer counts of spec §3 need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Units {
    /// `ES`: GB per tensor element (2e-9 for 16-bit training).
    pub element_gb: f64,
    /// `MS`: GB per dropout-mask element (1e-9).
    pub mask_element_gb: f64,
    /// `U`: TFLOP per FLOP (1e-12).
    pub flop: f64,
    /// `TCF = R_mat / R_vec` [dimensionless]: inflation of non-matmul work inside flash attention
    /// (quirk Q6, applied in `layers/attention.rs`).
    pub tensor_core_factor: f64,
}

/// Everything the reference model reads from a system, in the form the formulas use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    /// Effective tensor-core rate `R_mat · 0.8` [TFLOP/s] (see [`timing::effective_rate`]).
    pub matrix_rate: f64,
    /// Effective vector rate `R_vec · 0.8` [TFLOP/s].
    pub vector_rate: f64,
    /// `B_hbm` [GB/s].
    pub hbm_bandwidth: f64,
    /// HBM capacity per device [GB]: the feasibility limit.
    pub hbm_capacity: f64,
    /// The network tiers.
    pub net: NetworkTiers,
    /// Element sizes and FLOP unit.
    pub units: Units,
}

impl Machine {
    /// Derives the constants from a (validated) system description.
    pub fn new(s: &SystemParams) -> Machine {
        Machine {
            matrix_rate: timing::effective_rate(s.matrix_flops_fp16),
            vector_rate: timing::effective_rate(s.vector_flops_fp16),
            hbm_bandwidth: s.hbm_bandwidth,
            hbm_capacity: s.hbm_capacity,
            net: NetworkTiers {
                slow_bandwidth: s.ib_bandwidth * s.ib_eff,
                fast_bandwidth: s.nvlink_bandwidth * s.nvlink_eff,
                slow_latency: s.ib_latency,
                fast_latency: s.nvlink_latency,
                nic_factor: s.nic_factor,
                domain_size: s.domain_size,
            },
            units: Units {
                element_gb: s.element_size,
                mask_element_gb: s.mask_element_size,
                flop: s.flops_units,
                tensor_core_factor: s.matrix_flops_fp16 / s.vector_flops_fp16,
            },
        }
    }
}
