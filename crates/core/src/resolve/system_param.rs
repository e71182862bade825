//! The system parameters a scenario may set beyond its catalog entry (a sweep's system-parameter
//! axes): each names the mapped value it replaces ([`SystemParams`]) and, for a stand-in, the
//! catalog value it fills ([`super::stand_ins`]).

use crate::SystemParams;
use crate::catalog::Precision;

/// A system parameter a sweep can vary (applied after the catalog mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemParam {
    /// Peak matrix rate `R_mat` [TFLOP/s].
    Matrix,
    /// Peak vector rate `R_vec` [TFLOP/s].
    Vector,
    /// HBM capacity `C` [GB].
    HbmCapacity,
    /// HBM bandwidth `B_hbm` [GB/s].
    HbmBandwidth,
    /// Scale-up (NVLink) bandwidth per device, one direction, `B_nv` [GB/s].
    ScaleUp,
    /// Scale-out (NIC) bandwidth per NIC, one direction, `B_ib` [GB/s].
    ScaleOut,
}

impl SystemParam {
    /// Every parameter, in display order.
    pub const ALL: [SystemParam; 6] = [
        SystemParam::Matrix,
        SystemParam::Vector,
        SystemParam::HbmCapacity,
        SystemParam::HbmBandwidth,
        SystemParam::ScaleUp,
        SystemParam::ScaleOut,
    ];

    /// Its key: a sweep's axis name, a CSV column's stem (`matrix`, `hbm_capacity`, …).
    pub fn key(self) -> &'static str {
        match self {
            SystemParam::Matrix => "matrix",
            SystemParam::Vector => "vector",
            SystemParam::HbmCapacity => "hbm_capacity",
            SystemParam::HbmBandwidth => "hbm_bandwidth",
            SystemParam::ScaleUp => "scale_up",
            SystemParam::ScaleOut => "scale_out",
        }
    }

    /// The unit of absolute values.
    pub fn unit(self) -> &'static str {
        match self {
            SystemParam::Matrix | SystemParam::Vector => "TFLOP/s",
            SystemParam::HbmCapacity => "GB",
            _ => "GB/s",
        }
    }

    /// What the parameter is, in words, for notes (the matrix rate names its precision).
    pub fn describe(self, precision: Precision) -> String {
        match self {
            SystemParam::Matrix => format!("{} matrix rate", precision.as_str().to_ascii_uppercase()),
            SystemParam::Vector => "vector (non-matrix) rate".to_string(),
            SystemParam::HbmCapacity => "memory capacity".to_string(),
            SystemParam::HbmBandwidth => "memory bandwidth".to_string(),
            SystemParam::ScaleUp => "scale-up bandwidth".to_string(),
            SystemParam::ScaleOut => "scale-out (NIC) bandwidth".to_string(),
        }
    }

    /// The value in `p`.
    pub fn get(self, p: &SystemParams) -> f64 {
        match self {
            SystemParam::Matrix => p.matrix_flops_fp16,
            SystemParam::Vector => p.vector_flops_fp16,
            SystemParam::HbmCapacity => p.hbm_capacity,
            SystemParam::HbmBandwidth => p.hbm_bandwidth,
            SystemParam::ScaleUp => p.nvlink_bandwidth,
            SystemParam::ScaleOut => p.ib_bandwidth,
        }
    }

    /// Sets the value in `p`.
    pub fn set(self, p: &mut SystemParams, v: f64) {
        match self {
            SystemParam::Matrix => p.matrix_flops_fp16 = v,
            SystemParam::Vector => p.vector_flops_fp16 = v,
            SystemParam::HbmCapacity => p.hbm_capacity = v,
            SystemParam::HbmBandwidth => p.hbm_bandwidth = v,
            SystemParam::ScaleUp => p.nvlink_bandwidth = v,
            SystemParam::ScaleOut => p.ib_bandwidth = v,
        }
    }
}
