//! The constants that describe a user's software stack on one system, with their bounds and
//! priors, and how they change extended mode's hardware.
//!
//! * `compute_scale` — multiplies the matmul and attention ceilings the part sustains
//!   ([`Hardware::matmul_ceiling_tflops`], [`Hardware::attention_ceiling_tflops`]): the user's
//!   kernels against the shipped fit's (`η`, `η_att` of [`crate::extended::efficiency::Efficiency::FITTED`]).
//!   Bounds 0.5–1.5; prior: log-normal around 1 with σ = 0.15 (the shipped sources' median errors
//!   spread by about 6 % around the fit, the users' stacks by 10–40 %: the prior lets one
//!   measured run move it by tens of percent but not without evidence).
//! * `scale_out_bandwidth_scale` — multiplies the achievable scale-out bandwidth per NIC
//!   ([`crate::reference::machine::NetworkTiers::slow_bandwidth`]): the user's network against the
//!   catalog's efficiency (0.7 of the line rate for every system, not fitted on measured runs).
//!   Bounds 0.25–2; prior σ = 0.35 (wider: nothing measured constrains it).
//! * `memory_overhead_gb` — device memory the stack uses beyond extended mode's estimate [GB]
//!   (another allocator setting, a larger NCCL buffer, a framework's own caches); negative when it
//!   uses less. Added to every predicted memory figure and so taken off the capacity a layout may
//!   use. Bounds −20 to +40 GB; prior 0 (fitted only from a measured memory figure).
//!
//! The shipped values ([`StackConstants::SHIPPED`]: 1, 1, 0 GB) leave extended mode unchanged.

use crate::Error;
use crate::extended::Hardware;

/// One constant's name, bounds and prior.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConstantSpec {
    /// JSON key.
    pub key: &'static str,
    /// What it is, in words.
    pub what: &'static str,
    /// Least value allowed.
    pub min: f64,
    /// Greatest value allowed.
    pub max: f64,
    /// The shipped value (the prior's centre).
    pub shipped: f64,
    /// Prior width: of `ln(value)` for a scale, of the value [GB] for the memory overhead.
    pub prior_sigma: f64,
}

/// `compute_scale`'s specification.
pub const COMPUTE: ConstantSpec = ConstantSpec {
    key: "compute_scale",
    what: "matmul and attention rate against the shipped fit",
    min: 0.5,
    max: 1.5,
    shipped: 1.0,
    prior_sigma: 0.15,
};

/// `scale_out_bandwidth_scale`'s specification.
pub const SCALE_OUT: ConstantSpec = ConstantSpec {
    key: "scale_out_bandwidth_scale",
    what: "achievable scale-out bandwidth against the catalog's",
    min: 0.25,
    max: 2.0,
    shipped: 1.0,
    prior_sigma: 0.35,
};

/// `memory_overhead_gb`'s specification.
pub const MEMORY: ConstantSpec = ConstantSpec {
    key: "memory_overhead_gb",
    what: "device memory beyond extended mode's estimate [GB]",
    min: -20.0,
    max: 40.0,
    shipped: 0.0,
    prior_sigma: 4.0,
};

/// Every constant, in document order.
pub const ALL: [ConstantSpec; 3] = [COMPUTE, SCALE_OUT, MEMORY];

/// The stack constants of one calibration.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StackConstants {
    /// Multiplies the matmul and attention ceilings [fraction].
    pub compute_scale: f64,
    /// Multiplies the achievable scale-out bandwidth [fraction].
    pub scale_out_bandwidth_scale: f64,
    /// Device memory beyond the estimate [GB].
    pub memory_overhead_gb: f64,
}

impl Default for StackConstants {
    fn default() -> Self {
        StackConstants::SHIPPED
    }
}

impl StackConstants {
    /// The shipped fit: extended mode unchanged.
    pub const SHIPPED: StackConstants =
        StackConstants { compute_scale: 1.0, scale_out_bandwidth_scale: 1.0, memory_overhead_gb: 0.0 };

    /// The value of constant `spec`.
    pub fn get(&self, spec: &ConstantSpec) -> f64 {
        match spec.key {
            "compute_scale" => self.compute_scale,
            "scale_out_bandwidth_scale" => self.scale_out_bandwidth_scale,
            _ => self.memory_overhead_gb,
        }
    }

    /// Every value finite and within its bounds; the error names the constant, its value and the
    /// bounds (`field` is where it was read, e.g. `stack_constants`).
    pub fn check(&self, field: &str) -> Result<(), Error> {
        for spec in ALL {
            let v = self.get(&spec);
            if !v.is_finite() || v < spec.min || v > spec.max {
                return Err(Error::invalid(
                    format!("{field}.{}", spec.key),
                    v,
                    format!("must be within {} to {} ({})", spec.min, spec.max, spec.what),
                ));
            }
        }
        Ok(())
    }

    /// `hw` as this stack runs it: ceilings and scale-out bandwidth scaled, capacity left to the
    /// modelled memory reduced by the overhead. The shipped constants return `hw` unchanged.
    pub fn apply(&self, hw: &Hardware) -> Hardware {
        let mut h = hw.clone();
        h.matmul_ceiling_tflops *= self.compute_scale;
        h.attention_ceiling_tflops *= self.compute_scale;
        h.net.slow_bandwidth *= self.scale_out_bandwidth_scale;
        h.hbm_capacity_gb -= self.memory_overhead_gb;
        h
    }

    /// The negative log prior of these values (0 at the shipped ones).
    pub fn prior_penalty(&self) -> f64 {
        let z = |spec: &ConstantSpec, x: f64| x / spec.prior_sigma;
        z(&COMPUTE, self.compute_scale.ln()).powi(2)
            + z(&SCALE_OUT, self.scale_out_bandwidth_scale.ln()).powi(2)
            + z(&MEMORY, self.memory_overhead_gb).powi(2)
    }

    /// What changed against the shipped fit, in words (`compute_scale 1 → 0.87 (−13 %)`), one
    /// entry per constant that moved by more than 0.5 % (0.05 GB for memory).
    pub fn changes(&self) -> Vec<Change> {
        let mut out = Vec::new();
        for spec in ALL {
            let v = self.get(&spec);
            let moved = if spec.key == MEMORY.key {
                (v - spec.shipped).abs() >= 0.05
            } else {
                (v / spec.shipped - 1.0).abs() >= 0.005
            };
            if moved {
                out.push(Change { constant: spec.key, shipped: spec.shipped, value: v });
            }
        }
        out
    }
}

/// One constant moved by a calibration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Its key.
    pub constant: &'static str,
    /// The shipped value.
    pub shipped: f64,
    /// The calibrated value.
    pub value: f64,
}

impl Change {
    /// In words: `compute_scale 1 → 0.870 (−13.0 %)` or `memory_overhead_gb 0 → 3.20 GB`.
    pub fn text(&self) -> String {
        if self.constant == MEMORY.key {
            format!("{} {} → {:+.2} GB", self.constant, self.shipped, self.value)
        } else {
            format!(
                "{} {} → {:.3} ({:+.1} %)",
                self.constant,
                self.shipped,
                self.value,
                (self.value / self.shipped - 1.0) * 100.0
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_changes_nothing_and_bounds_are_checked() {
        let hw = Hardware::from_params(&crate::SystemParams::a100(), false);
        assert_eq!(StackConstants::SHIPPED.apply(&hw), hw);
        assert!(StackConstants::SHIPPED.changes().is_empty());
        assert_eq!(StackConstants::SHIPPED.prior_penalty(), 0.0);
        let bad = StackConstants { compute_scale: 3.0, ..StackConstants::SHIPPED };
        let e = bad.check("stack_constants").unwrap_err().to_string();
        assert!(e.contains("stack_constants.compute_scale") && e.contains("0.5 to 1.5"), "{e}");
        let nan = StackConstants { memory_overhead_gb: f64::NAN, ..StackConstants::SHIPPED };
        assert!(nan.check("x").is_err());
        let c = StackConstants { compute_scale: 0.87, ..StackConstants::SHIPPED };
        assert_eq!(c.changes().len(), 1);
        assert_eq!(c.changes()[0].text(), "compute_scale 1 → 0.870 (-13.0 %)");
        let h = c.apply(&hw);
        assert!((h.matmul_ceiling_tflops / hw.matmul_ceiling_tflops - 0.87).abs() < 1e-12);
    }
}
