//! Achievable compute rates: the measured matmul ceiling of each accelerator and the global
//! efficiency constants fitted on the measured training runs.
//!
//! * **Ceiling.** The hardware catalog records, for some parts, the *maximum achievable matmul
//!   FLOP/s* (MAMF: best-shape BF16/FP8 `torch.matmul`, S. Bekman's ML Engineering book). It is the
//!   rate a real GEMM can reach on that part, not the datasheet peak: 0.87 of peak on A100, 0.80 on
//!   H100 (BF16), 0.71 on H100 (FP8). FP16 uses the BF16 measurement (same tensor-core rate on
//!   every part measured). A part or precision without a measurement (TPUs, V100, FP32/TF32) uses
//!   its datasheet peak: the measured ratios of GPUs (0.51–0.97 of peak) say nothing about other
//!   architectures, and the TPU training runs of the validation set sustain about 0.8 of peak in
//!   hardware FLOPs — more than the GPUs' median ratio, which therefore cannot be their ceiling.
//! * **Efficiencies `η` and `η_att`** ([`Efficiency::FITTED`]): the fractions of that ceiling a
//!   whole training step sustains in the matmuls of its linear layers and of its flash attention
//!   (shapes that are not the best shape, kernel launch gaps and tails, clocks under sustained
//!   load, the softmax inside attention, framework work not otherwise modelled). They are the only
//!   constants of extended mode fitted to measured training runs.
//!
//! How they were fitted (reproduced by `crate::validate::fit` and pinned by the test
//! `validate_fit`): every row of `data/measured-training-runs.json` that extended mode can
//! evaluate is predicted at its exact configuration on a grid of `(η, η_att)`; the pair with the
//! smallest mean absolute error `|predicted/measured − 1|` is kept (see `crate::validate::fit` for
//! the grid). Nothing is fitted per run or per source; `fmperf validate --fit` reports the
//! leave-one-source-out error (fit without a source, predict it).

use crate::catalog::{CatalogSystem, Precision};

/// `η`: fraction of the matmul ceiling sustained by the linear layers of a training step, fitted
/// once on `data/measured-training-runs.json` (see the module documentation).
pub const FITTED_MATMUL_EFFICIENCY: f64 = 0.728;

/// `η_att`: the same fraction for the matmuls of flash attention, fitted jointly with `η`.
pub const FITTED_ATTENTION_EFFICIENCY: f64 = 0.401;

/// The two fitted efficiencies.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Efficiency {
    /// `η` of the linear layers' matmuls.
    pub matmul: f64,
    /// `η_att` of flash attention.
    pub attention: f64,
}

impl Efficiency {
    /// The constants fitted on the shipped measured runs.
    pub const FITTED: Efficiency =
        Efficiency { matmul: FITTED_MATMUL_EFFICIENCY, attention: FITTED_ATTENTION_EFFICIENCY };
}

/// Where a ceiling comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeilingSource {
    /// The part's measured maximum achievable matmul rate (MAMF) at this precision.
    Measured,
    /// The datasheet peak: no measurement for this part and precision.
    Unmeasured,
    /// The datasheet peak: measured ceilings switched off.
    Peak,
}

impl CeilingSource {
    /// A short description for tables.
    pub fn describe(&self) -> &'static str {
        match self {
            CeilingSource::Measured => "measured matmul ceiling (MAMF)",
            CeilingSource::Unmeasured => "datasheet peak (no measured ceiling for this part)",
            CeilingSource::Peak => "datasheet peak (measured ceilings off)",
        }
    }
}

/// The measurement that applies to `precision`: FP8 uses the FP8 one, FP16 and BF16 the BF16 one.
fn measured_at(sys: &CatalogSystem, precision: Precision) -> Option<f64> {
    let m = sys.measured_matmul_tflops.as_ref()?;
    match precision {
        Precision::Fp8 => m.fp8,
        Precision::Bf16 | Precision::Fp16 => m.bf16,
        Precision::Tf32 | Precision::Fp32 => None,
    }
}

/// The median of a list (sorted in place); `None` when empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}

/// The achievable matmul rate [TFLOP/s] of `sys` at `precision` given its datasheet peak there, and
/// where it comes from.
pub fn ceiling(
    sys: Option<&CatalogSystem>,
    precision: Precision,
    peak_tflops: f64,
    measured: bool,
) -> (f64, CeilingSource) {
    if !measured {
        return (peak_tflops, CeilingSource::Peak);
    }
    match sys.and_then(|s| measured_at(s, precision)) {
        // A measurement above the peak it is compared with would be a catalog error: keep the peak.
        Some(m) => (m.min(peak_tflops), CeilingSource::Measured),
        None => (peak_tflops, CeilingSource::Unmeasured),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn measured_ceilings_and_the_peak_fallback() {
        let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        assert_eq!(ceiling(Some(h100), Precision::Bf16, 989.4, true), (794.5, CeilingSource::Measured));
        assert_eq!(ceiling(Some(h100), Precision::Fp16, 989.4, true), (794.5, CeilingSource::Measured));
        assert_eq!(ceiling(Some(h100), Precision::Fp8, 1978.9, true).0, 1402.6);
        assert_eq!(ceiling(Some(h100), Precision::Bf16, 989.4, false), (989.4, CeilingSource::Peak));
        assert_eq!(ceiling(Some(h100), Precision::Tf32, 494.7, true), (494.7, CeilingSource::Unmeasured));
        let v5e = catalog::find_system("google_tpu_v5e").unwrap();
        assert_eq!(ceiling(Some(v5e), Precision::Bf16, 197.0, true), (197.0, CeilingSource::Unmeasured));
        assert_eq!(ceiling(None, Precision::Bf16, 312.0, true), (312.0, CeilingSource::Unmeasured));
    }

    #[test]
    fn median_of_even_and_odd_lists() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
