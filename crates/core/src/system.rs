//! The system parameters the reference model reads (spec §1.2), one accelerator plus its two
//! network tiers: a fast scale-up domain (NVLink/NVSwitch-like) and a slower scale-out network.

use crate::Error;

/// The reference's system description. Field names follow the reference's JSON keys
/// (`systems/config-<name>.json`), so that files in that format map one to one.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SystemParams {
    /// Peak matrix (tensor-core) rate in TFLOP/s at the training precision (`R_mat`).
    pub matrix_flops_fp16: f64,
    /// Peak vector (non-tensor-core) rate in TFLOP/s at the training precision (`R_vec`).
    pub vector_flops_fp16: f64,
    /// Peak FP32 vector rate in TFLOP/s (unused by the reference model, quirk Q18).
    pub vector_flops_fp32: f64,
    /// HBM bandwidth in GB/s (`B_hbm`).
    pub hbm_bandwidth: f64,
    /// HBM capacity in GB (feasibility limit `C`).
    pub hbm_capacity: f64,
    /// Scale-up (NVLink) bandwidth per device in GB/s (`B_nv`).
    pub nvlink_bandwidth: f64,
    /// Achievable fraction of `nvlink_bandwidth` (dimensionless, 0–1].
    pub nvlink_eff: f64,
    /// Latency of one scale-up hop in seconds (`λf`).
    pub nvlink_latency: f64,
    /// Scale-out (InfiniBand) bandwidth per NIC in GB/s (`B_ib`).
    pub ib_bandwidth: f64,
    /// Achievable fraction of `ib_bandwidth` (dimensionless, 0–1].
    pub ib_eff: f64,
    /// Latency of one scale-out hop in seconds (`λs`).
    pub ib_latency: f64,
    /// Scale-up domain size in devices (`N_vs`).
    pub domain_size: u64,
    /// NICs per device (`ν`): multiplies the rings that leave a domain.
    pub nic_factor: f64,
    /// Bytes per tensor element, in GB (2e-9 for 16-bit training).
    pub element_size: f64,
    /// Bytes per dropout-mask element, in GB (1e-9).
    pub mask_element_size: f64,
    /// Unit of FLOP counts (1e-12: counts are kept in TFLOP).
    pub flops_units: f64,
}

impl SystemParams {
    /// The parameters' names in field order: the keys of the reference's system file, less its
    /// unused `empirical` and `summa_nb`.
    pub const FIELDS: [&'static str; 16] = [
        "matrix_flops_fp16",
        "vector_flops_fp16",
        "vector_flops_fp32",
        "hbm_bandwidth",
        "hbm_capacity",
        "nvlink_bandwidth",
        "nvlink_eff",
        "nvlink_latency",
        "ib_bandwidth",
        "ib_eff",
        "ib_latency",
        "nvlink_size",
        "nic_factor",
        "element_size",
        "mask_element_size",
        "flops_units",
    ];

    /// The reference's `A100` system file (NVLink size as shipped: 4).
    pub fn a100() -> Self {
        Self::reference_gpu(312.0, 78.0, 19.5, 1555.0, 80.0, 300.0, 0.7, 2.5e-6, 25.0, 0.7, 5e-6, 4)
    }
    /// The reference's `H200` system file (NVLink size as shipped: 64).
    pub fn h200() -> Self {
        Self::reference_gpu(989.4, 133.8, 66.9, 4800.0, 141.0, 450.0, 0.7, 2.5e-6, 50.0, 0.7, 5e-6, 64)
    }
    /// The reference's `B200` system file (NVLink size as shipped: 4).
    pub fn b200() -> Self {
        Self::reference_gpu(2500.0, 339.0, 169.0, 8000.0, 192.0, 900.0, 0.7, 2.5e-6, 100.0, 0.7, 5e-6, 4)
    }
    /// The reference's extrapolated `B200-next` system file (NVLink size as shipped: 64).
    pub fn b200_next() -> Self {
        Self::reference_gpu(3750.0, 508.5, 253.5, 16000.0, 384.0, 3600.0, 0.8, 5e-6, 200.0, 0.8, 1e-5, 64)
    }

    /// The reference's four system files by name.
    pub const REFERENCE_NAMES: [&'static str; 4] = ["A100", "H200", "B200", "B200-next"];

    /// Looks up one of the reference's system files by name (`A100`, `H200`, `B200`, `B200-next`).
    pub fn reference(name: &str) -> Result<SystemParams, Error> {
        match name {
            "A100" => Ok(Self::a100()),
            "H200" => Ok(Self::h200()),
            "B200" => Ok(Self::b200()),
            "B200-next" => Ok(Self::b200_next()),
            _ => Err(Error::UnknownName {
                kind: "system".into(),
                name: name.into(),
                known: Self::REFERENCE_NAMES.iter().map(|s| s.to_string()).collect(),
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn reference_gpu(
        mat: f64,
        vec16: f64,
        vec32: f64,
        hbm_bw: f64,
        hbm_cap: f64,
        nv_bw: f64,
        nv_eff: f64,
        nv_lat: f64,
        ib_bw: f64,
        ib_eff: f64,
        ib_lat: f64,
        nvs: u64,
    ) -> Self {
        SystemParams {
            matrix_flops_fp16: mat,
            vector_flops_fp16: vec16,
            vector_flops_fp32: vec32,
            hbm_bandwidth: hbm_bw,
            hbm_capacity: hbm_cap,
            nvlink_bandwidth: nv_bw,
            nvlink_eff: nv_eff,
            nvlink_latency: nv_lat,
            ib_bandwidth: ib_bw,
            ib_eff,
            ib_latency: ib_lat,
            domain_size: nvs,
            nic_factor: 1.0,
            element_size: 2e-9,
            mask_element_size: 1e-9,
            flops_units: 1e-12,
        }
    }

    /// The same system with another scale-up domain size.
    pub fn with_domain_size(mut self, n: u64) -> Self {
        self.domain_size = n;
        self
    }

    /// Checks every field: rates, bandwidths and capacities positive and finite, efficiencies in
    /// (0, 1], latencies non-negative, domain size a positive integer.
    pub fn validate(&self) -> Result<(), Error> {
        let positive = |name: &str, v: f64| -> Result<(), Error> {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(format!("system.{name}"), v, "must be a positive finite number"));
            }
            Ok(())
        };
        positive("matrix_flops_fp16", self.matrix_flops_fp16)?;
        positive("vector_flops_fp16", self.vector_flops_fp16)?;
        if !(self.vector_flops_fp32.is_finite() && self.vector_flops_fp32 >= 0.0) {
            return Err(Error::invalid(
                "system.vector_flops_fp32",
                self.vector_flops_fp32,
                "must be a finite number ≥ 0",
            ));
        }
        positive("hbm_bandwidth", self.hbm_bandwidth)?;
        positive("hbm_capacity", self.hbm_capacity)?;
        positive("nvlink_bandwidth", self.nvlink_bandwidth)?;
        positive("ib_bandwidth", self.ib_bandwidth)?;
        positive("nic_factor", self.nic_factor)?;
        positive("element_size", self.element_size)?;
        positive("mask_element_size", self.mask_element_size)?;
        positive("flops_units", self.flops_units)?;
        for (name, v) in [("nvlink_eff", self.nvlink_eff), ("ib_eff", self.ib_eff)] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(Error::invalid(format!("system.{name}"), v, "must be in (0, 1]")
                    .with_hint("an efficiency is the achievable fraction of the peak bandwidth"));
            }
        }
        for (name, v) in [("nvlink_latency", self.nvlink_latency), ("ib_latency", self.ib_latency)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::invalid(format!("system.{name}"), v, "must be a finite number of seconds ≥ 0"));
            }
        }
        if self.domain_size == 0 || self.domain_size > 1_048_576 {
            return Err(Error::invalid("system.nvlink_size", self.domain_size, "must be an integer from 1 to 1048576"));
        }
        Ok(())
    }
}
