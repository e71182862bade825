//! The six system features a sensitivity varies, and one feature scaled by a factor on a
//! scenario's system: the reference's parameters and, in extended mode, the part.

use std::fmt;

use crate::extended::Hardware;
use crate::{Error, SystemParams};

/// A system feature the sensitivity scales.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// Matrix (tensor-core) FLOP rate at every precision [TFLOP/s]: the peak and the achievable
    /// ceilings of the linear layers and of attention scale together.
    Matrix,
    /// HBM bandwidth [GB/s].
    HbmBandwidth,
    /// HBM capacity per device [GB]: the memory the search must fit in.
    HbmCapacity,
    /// Scale-up (NVLink, ICI, xGMI) bandwidth per device, one direction [GB/s].
    ScaleUp,
    /// Scale-out (NIC) bandwidth per NIC, one direction [GB/s].
    ScaleOut,
    /// Devices per scale-up domain [devices].
    Domain,
}

impl Feature {
    /// Every feature, in display order (the order ties keep).
    pub const ALL: [Feature; 6] = [
        Feature::Matrix,
        Feature::HbmBandwidth,
        Feature::HbmCapacity,
        Feature::ScaleUp,
        Feature::ScaleOut,
        Feature::Domain,
    ];

    /// The key: the sweep axis of the same feature (`fmperf sweep --axis KEY=…`, Studies' `ax.KEY`).
    pub fn key(self) -> &'static str {
        match self {
            Feature::Matrix => "matrix",
            Feature::HbmBandwidth => "hbm_bandwidth",
            Feature::HbmCapacity => "hbm_capacity",
            Feature::ScaleUp => "scale_up",
            Feature::ScaleOut => "scale_out",
            Feature::Domain => "domain",
        }
    }

    /// What the feature is, in words (no unit).
    pub fn label(self) -> &'static str {
        match self {
            Feature::Matrix => "matrix FLOP rate",
            Feature::HbmBandwidth => "HBM bandwidth",
            Feature::HbmCapacity => "HBM capacity",
            Feature::ScaleUp => "scale-up bandwidth",
            Feature::ScaleOut => "scale-out bandwidth",
            Feature::Domain => "scale-up domain size",
        }
    }

    /// The unit of [`Feature::value`].
    pub fn unit(self) -> &'static str {
        match self {
            Feature::Matrix => "TFLOP/s",
            Feature::HbmCapacity => "GB",
            Feature::Domain => "devices",
            _ => "GB/s",
        }
    }

    /// The feature's value on a system, in [`Feature::unit`]: in extended mode the part's own
    /// figures (the matrix peak at the run's precision, the device's total memory), in reference
    /// mode the system parameters'.
    pub fn value(self, system: &SystemParams, hardware: Option<&Hardware>) -> f64 {
        match (self, hardware) {
            (Feature::Matrix, Some(h)) => h.matmul_peak_tflops,
            (Feature::Matrix, None) => system.matrix_flops_fp16,
            (Feature::HbmBandwidth, Some(h)) => h.hbm_bandwidth_gbps,
            (Feature::HbmBandwidth, None) => system.hbm_bandwidth,
            (Feature::HbmCapacity, Some(h)) => h.hbm_capacity_gb,
            (Feature::HbmCapacity, None) => system.hbm_capacity,
            (Feature::ScaleUp, _) => system.nvlink_bandwidth,
            (Feature::ScaleOut, _) => system.ib_bandwidth,
            (Feature::Domain, _) => system.domain_size as f64,
        }
    }

    /// The values of the full sweep of this feature (Studies, `fmperf sweep --axis`): factors
    /// ×0.25 to ×4 of the system's own, or for the domain the sizes from a quarter to four times
    /// `domain` (halving while even, at least 1 device).
    pub fn sweep_axis(self, domain: u64) -> String {
        if self != Feature::Domain {
            return format!("{}=x0.25,x0.5,x1,x2,x4", self.key());
        }
        let mut sizes = vec![domain.max(1)];
        for _ in 0..2 {
            match sizes[0] {
                d if d > 1 && d % 2 == 0 => sizes.insert(0, d / 2),
                _ => break,
            }
        }
        let top = domain.max(1);
        for k in [2u64, 4] {
            if let Some(d) = top.checked_mul(k).filter(|d| *d <= crate::resolve::form::MAX_DOMAIN) {
                sizes.push(d);
            }
        }
        let text: Vec<String> = sizes.iter().map(u64::to_string).collect();
        format!("domain={}", text.join(","))
    }
}

/// The scenario's system with `feature` scaled by `factor`: the reference's parameters (`system`)
/// and, in extended mode, the part (`hardware`, whose own parameters and network tiers follow).
/// Rates, bandwidths and capacity are multiplied; the domain takes `factor ×` its size, which must
/// be a whole number of devices from 1 to `max_domain` and is otherwise impossible (`Err` says
/// why, in words). `n_gpus` [devices]: a domain larger than the job changes nothing, so a larger
/// size than needed to hold every device is also reported as impossible.
pub fn scaled(
    feature: Feature,
    factor: f64,
    system: &SystemParams,
    hardware: Option<&Hardware>,
    n_gpus: u64,
    max_domain: u64,
) -> Result<(SystemParams, Option<Hardware>), Unscalable> {
    if !factor.is_finite() || factor <= 0.0 {
        return Err(Unscalable::Factor(factor));
    }
    let mut p = system.clone();
    let mut hw = hardware.cloned();
    match feature {
        Feature::Matrix => {
            p.matrix_flops_fp16 *= factor;
            if let Some(h) = hw.as_mut() {
                h.matmul_peak_tflops *= factor;
                h.matmul_ceiling_tflops *= factor;
                h.attention_ceiling_tflops *= factor;
                h.params.matrix_flops_fp16 *= factor;
            }
        }
        Feature::HbmBandwidth => {
            p.hbm_bandwidth *= factor;
            if let Some(h) = hw.as_mut() {
                h.hbm_bandwidth_gbps *= factor;
                h.params.hbm_bandwidth *= factor;
            }
        }
        Feature::HbmCapacity => {
            p.hbm_capacity *= factor;
            if let Some(h) = hw.as_mut() {
                h.hbm_capacity_gb *= factor;
                h.params.hbm_capacity *= factor;
            }
        }
        Feature::ScaleUp => {
            p.nvlink_bandwidth *= factor;
            if let Some(h) = hw.as_mut() {
                h.net.fast_bandwidth *= factor;
                h.params.nvlink_bandwidth *= factor;
            }
        }
        Feature::ScaleOut => {
            p.ib_bandwidth *= factor;
            if let Some(h) = hw.as_mut() {
                h.net.slow_bandwidth *= factor;
                h.params.ib_bandwidth *= factor;
            }
        }
        Feature::Domain => {
            let d = domain_size(system.domain_size, factor, n_gpus, max_domain)?;
            p.domain_size = d;
            if let Some(h) = hw.as_mut() {
                h.net.domain_size = d;
                h.params.domain_size = d;
            }
        }
    }
    p.validate().map_err(Unscalable::Invalid)?;
    Ok((p, hw))
}

/// Why a feature cannot be scaled by a factor ([`scaled`]); its words are the point's reason.
#[derive(Debug, Clone, PartialEq)]
pub enum Unscalable {
    /// The factor is not a positive number.
    Factor(f64),
    /// The domain [devices] times the factor is below one device.
    BelowOne {
        /// The domain [devices].
        domain: u64,
        /// The factor.
        factor: f64,
    },
    /// The domain [devices] times the factor is not a whole number of devices.
    NotWhole {
        /// The domain [devices].
        domain: u64,
        /// The factor.
        factor: f64,
    },
    /// The scaled domain [devices] is larger than the largest domain fmperf models.
    AboveLargest {
        /// The scaled domain [devices].
        want: f64,
        /// The largest domain [devices].
        max_domain: u64,
    },
    /// A larger domain than one holding the whole job changes nothing.
    HoldsTheJob {
        /// The domain [devices].
        domain: u64,
        /// The job's devices.
        n_gpus: u64,
    },
    /// The scaled system breaks a rule of its parameters.
    Invalid(Error),
}

impl fmt::Display for Unscalable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unscalable::Factor(factor) => write!(f, "factor {factor} is not a positive number"),
            Unscalable::BelowOne { domain, factor } => {
                write!(f, "a domain of {domain} device(s) cannot be made {factor}× smaller")
            }
            Unscalable::NotWhole { domain, factor } => {
                write!(f, "{factor} × {domain} devices is not a whole number of devices")
            }
            Unscalable::AboveLargest { want, max_domain } => {
                write!(f, "{want} devices is more than the largest domain ({max_domain} devices)")
            }
            Unscalable::HoldsTheJob { domain, n_gpus } => write!(
                f,
                "the domain of {domain} devices already holds all {n_gpus} devices of the job: a larger one changes nothing"
            ),
            Unscalable::Invalid(e) => write!(f, "{e}"),
        }
    }
}

/// `factor ×` a domain of `domain` devices, if it is a whole number of devices from 1 to
/// `max_domain` that differs from the job's whole (see [`scaled`]).
fn domain_size(domain: u64, factor: f64, n_gpus: u64, max_domain: u64) -> Result<u64, Unscalable> {
    let want = domain as f64 * factor;
    if want < 1.0 {
        return Err(Unscalable::BelowOne { domain, factor });
    }
    if want.fract() != 0.0 {
        return Err(Unscalable::NotWhole { domain, factor });
    }
    if want > max_domain as f64 {
        return Err(Unscalable::AboveLargest { want, max_domain });
    }
    let d = want as u64;
    if factor > 1.0 && domain >= n_gpus {
        return Err(Unscalable::HoldsTheJob { domain, n_gpus });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_sizes_are_whole_and_bounded() {
        assert_eq!(domain_size(8, 0.5, 1024, 1 << 20), Ok(4));
        assert_eq!(domain_size(72, 2.0, 1024, 1 << 20), Ok(144));
        assert!(domain_size(1, 0.5, 1024, 1 << 20).unwrap_err().to_string().contains("cannot be made"));
        assert!(domain_size(9, 0.5, 1024, 1 << 20).unwrap_err().to_string().contains("whole number"));
        assert!(domain_size(64, 2.0, 64, 1 << 20).unwrap_err().to_string().contains("changes nothing"));
        assert!(domain_size(1 << 20, 2.0, u64::MAX, 1 << 20).unwrap_err().to_string().contains("largest domain"));
    }

    #[test]
    fn sweep_axes_are_the_studies_axes() {
        assert_eq!(Feature::Matrix.sweep_axis(8), "matrix=x0.25,x0.5,x1,x2,x4");
        assert_eq!(Feature::Domain.sweep_axis(8), "domain=2,4,8,16,32");
        assert_eq!(Feature::Domain.sweep_axis(72), "domain=18,36,72,144,288");
        assert_eq!(Feature::Domain.sweep_axis(9), "domain=9,18,36");
        assert_eq!(Feature::Domain.sweep_axis(1), "domain=1,2,4");
        for f in Feature::ALL {
            let axis = crate::resolve::sweep_axis::Axis::parse(&f.sweep_axis(8)).unwrap();
            assert_eq!(axis.key.name(), f.key());
        }
    }
}
