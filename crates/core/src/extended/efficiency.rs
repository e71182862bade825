//! Achievable compute rates: the measured matmul ceiling of each accelerator and the global
//! efficiency constants fitted on the measured training runs.
//!
//! * **Ceiling.** The hardware catalog records, for some parts, the *maximum achievable matmul
//!   FLOP/s* (MAMF: best-shape BF16/FP8 `torch.matmul`, S. Bekman's ML Engineering book). It is the
//!   rate a real GEMM can reach on that part, not the datasheet peak: 0.87 of peak on A100, 0.80 on
//!   H100 (BF16), 0.71 on H100 (FP8). FP16 uses the BF16 measurement (same tensor-core rate on
//!   every part measured). A measurement of one precision is never mixed with another precision's
//!   peak: a precision the part was not measured at gets the part's measured ceiling/peak ratio
//!   (BF16's first) times that precision's peak (MI300X FP8 = 668.4 × 2614.9/1307.4, not the FP8
//!   peak); a part without any measurement gets the ratio of a part with identical datasheet peaks
//!   (same silicon: H200 and H800 get H100 SXM's, so H200 never beats H100 on BF16). Parts with
//!   neither (TPUs, V100) use their datasheet peak: the measured ratios of GPUs (0.51–0.97 of
//!   peak) say nothing about other architectures, and the TPU training runs of the validation set
//!   sustain about 0.8 of peak in hardware FLOPs — more than the GPUs' median ratio, which
//!   therefore cannot be their ceiling.
//! * **Efficiencies `η` and `η_att`** ([`Efficiency::FITTED`]): the fractions of that ceiling a
//!   whole training step sustains in the matmuls of its linear layers and of its flash attention
//!   (shapes that are not the best shape, kernel launch gaps and tails, clocks under sustained
//!   load, the softmax inside attention, framework work not otherwise modelled). They are the only
//!   constants of extended mode fitted to measured training runs. `η_att` is that of the part's
//!   own-generation attention kernel (cuDNN / FlashAttention-3 on Hopper); a
//!   FlashAttention-2-class kernel on Hopper and later runs at [`FA2_ON_ASYNC_MMA_RATIO`] of it
//!   (a kernel benchmark, not a fitted constant; [`crate::extended::AttentionKernel`]).
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
pub const FITTED_MATMUL_EFFICIENCY: f64 = 0.999;

/// `η_att`: the same fraction for the matmuls of flash attention, fitted jointly with `η`.
pub const FITTED_ATTENTION_EFFICIENCY: f64 = 0.41;

/// `c` of the GEMM-size factor `Π x/(x + c)` ([`crate::extended::HardwareChoices::gemm_half_dim`])
/// [elements], fitted with `η` and `η_att`.
pub const FITTED_GEMM_HALF_DIM: f64 = 512.0;

/// `c_att` of flash attention's sequence-size factor `s_q/(s_q + c)·s_k/(s_k + c)`
/// ([`crate::extended::HardwareChoices::attention_half_seq`]) [tokens], fitted with `η`, `η_att`, `c`.
pub const FITTED_ATTENTION_HALF_SEQ: f64 = 1024.0;

/// The rate of a FlashAttention-2-class kernel relative to the part's own-generation fused
/// attention on parts with asynchronous warp-group MMA (Hopper and later,
/// [`crate::extended::Hardware::async_mma`]) [fraction], for
/// [`crate::extended::AttentionKernel::Fa2`].
///
/// Source: Shah et al. 2024, FlashAttention-3 (arXiv:2407.08608), Fig. 5, H100 SXM5, BF16, head
/// dimension 128, at 8k and 16k tokens: forward FlashAttention-2 370 / 370 TFLOP/s against cuDNN
/// 600 / 595 and FlashAttention-3 646 / 648; backward 318 / 322 against cuDNN 518 / 516 and
/// FlashAttention-3 559 / 561. A training step's attention is one forward and a backward of 2.5×
/// its FLOPs ([`crate::extended::ops::FLASH_BACKWARD_FACTOR`]), so against cuDNN (what
/// Transformer Engine calls):
/// `(1/597.5 + 2.5/517) / (1/370 + 2.5/320) = 0.619`; against FlashAttention-3 0.572. 0.62 is
/// the cuDNN figure (the kernel of the native runs measured here). PyTorch's own benchmark agrees
/// on the side of SDPA: its default flash backend 329 TFLOP/s against cuDNN 631 on H100
/// (pytorch/pytorch#142132, Dec 2024, 0.52 forward).
pub const FA2_ON_ASYNC_MMA_RATIO: f64 = 0.62;

/// The fitted constants of the time model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Efficiency {
    /// `η` of the linear layers' matmuls.
    pub matmul: f64,
    /// `η_att` of flash attention.
    pub attention: f64,
    /// `c` of the GEMM-size factor [elements] (0: no size dependence).
    pub gemm_half_dim: f64,
    /// `c_att` of flash attention's sequence-size factor [tokens] (0: no size dependence).
    pub attention_half_seq: f64,
}

impl Efficiency {
    /// The constants fitted on the shipped measured runs.
    pub const FITTED: Efficiency = Efficiency {
        matmul: FITTED_MATMUL_EFFICIENCY,
        attention: FITTED_ATTENTION_EFFICIENCY,
        gemm_half_dim: FITTED_GEMM_HALF_DIM,
        attention_half_seq: FITTED_ATTENTION_HALF_SEQ,
    };
}

/// The GEMM-size factor `Π_{x∈m,k,n} x/(x + c)` of a matmul `(m×k)·(k×n)` (1 when `c = 0`; an
/// infinite dimension contributes 1).
pub fn gemm_size_factor(m: f64, k: f64, n: f64, c: f64) -> f64 {
    if c <= 0.0 {
        return 1.0;
    }
    [m, k, n].iter().filter(|x| x.is_finite()).map(|x| x / (x + c)).product()
}

/// Where a ceiling comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeilingSource {
    /// The part's measured maximum achievable matmul rate (MAMF) at this precision.
    Measured,
    /// The part's measurement at another precision, scaled by the datasheet ratio of the two peaks
    /// (e.g. an FP8 ceiling from a BF16 measurement × FP8 peak / BF16 peak).
    ScaledFromOtherPrecision,
    /// The measured ceiling-to-peak ratio of another catalog part with the same datasheet peaks at
    /// every precision (the same compute silicon: H200 and H800 are H100 SXM silicon).
    SameSilicon(&'static str),
    /// The datasheet peak: no measurement for this part and precision.
    Unmeasured,
    /// The datasheet peak: measured ceilings switched off.
    Peak,
}

impl CeilingSource {
    /// A short description for tables.
    pub fn describe(&self) -> String {
        match self {
            CeilingSource::Measured => "measured matmul ceiling (MAMF)".to_string(),
            CeilingSource::ScaledFromOtherPrecision => {
                "measured matmul ceiling (MAMF) at another precision × the datasheet ratio of the peaks".to_string()
            }
            CeilingSource::SameSilicon(id) => format!("measured ceiling/peak ratio of {id} (same compute silicon)"),
            CeilingSource::Unmeasured => "datasheet peak (no measured ceiling for this part)".to_string(),
            CeilingSource::Peak => "datasheet peak (measured ceilings off)".to_string(),
        }
    }
}

/// The datasheet dense peak of `sys` at `precision` [TFLOP/s], if listed.
fn peak_at(sys: &CatalogSystem, precision: Precision) -> Option<f64> {
    let p = &sys.peak_tflops;
    match precision {
        Precision::Fp8 => p.fp8,
        Precision::Bf16 => p.bf16,
        Precision::Fp16 => p.fp16.or(p.bf16),
        Precision::Tf32 => p.tf32,
        Precision::Fp32 => p.fp32_matrix.or(p.fp32_vector),
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

/// The part's ceiling/peak ratio at `precision` from its own measurements: at that precision, or
/// else at BF16, else at FP8 (a measured ratio carries over between precisions of one part; a
/// measurement of one precision is never compared with another precision's peak).
fn own_ratio(sys: &CatalogSystem, precision: Precision) -> Option<(f64, CeilingSource)> {
    if let (Some(m), Some(pk)) = (measured_at(sys, precision), peak_at(sys, precision)) {
        return Some((m / pk, CeilingSource::Measured));
    }
    [Precision::Bf16, Precision::Fp8].into_iter().find_map(|q| {
        let (m, pk) = (measured_at(sys, q)?, peak_at(sys, q)?);
        (pk > 0.0).then_some((m / pk, CeilingSource::ScaledFromOtherPrecision))
    })
}

/// Another catalog part with the same vendor and the same datasheet peaks at every precision
/// (same compute silicon) that has a measurement.
fn same_silicon(sys: &CatalogSystem) -> Option<&'static CatalogSystem> {
    let key = |s: &CatalogSystem| {
        let p = &s.peak_tflops;
        (p.bf16, p.fp16, p.fp8, p.tf32)
    };
    let any_peak = |s: &CatalogSystem| key(s).0.is_some() || key(s).1.is_some();
    crate::catalog::systems().iter().find(|o| {
        o.id != sys.id
            && o.vendor == sys.vendor
            && any_peak(sys)
            && key(o) == key(sys)
            && o.measured_matmul_tflops.as_ref().is_some_and(|m| m.bf16.is_some() || m.fp8.is_some())
    })
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
/// where it comes from. In order: the part's measurement at this precision; its measured
/// ceiling/peak ratio at another precision applied to this precision's peak; the measured ratio
/// of a part with the same silicon; the peak. Never above the peak.
pub fn ceiling(
    sys: Option<&CatalogSystem>,
    precision: Precision,
    peak_tflops: f64,
    measured: bool,
) -> (f64, CeilingSource) {
    if !measured {
        return (peak_tflops, CeilingSource::Peak);
    }
    let Some(sys) = sys else { return (peak_tflops, CeilingSource::Unmeasured) };
    if let Some(m) = measured_at(sys, precision) {
        // A measurement above the peak it is compared with would be a catalog error: keep the peak.
        return (m.min(peak_tflops), CeilingSource::Measured);
    }
    let ratio = own_ratio(sys, precision).or_else(|| {
        let o = same_silicon(sys)?;
        own_ratio(o, precision).map(|(r, _)| (r, CeilingSource::SameSilicon(o.id.as_str())))
    });
    match ratio {
        Some((r, src)) => ((r * peak_tflops).min(peak_tflops), src),
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
        // TF32: H100's BF16 ratio 794.5/989.4 on the TF32 peak.
        let (c, src) = ceiling(Some(h100), Precision::Tf32, 494.7, true);
        assert!((c - 494.7 * 794.5 / 989.4).abs() < 1e-9 && src == CeilingSource::ScaledFromOtherPrecision);
        // H200: measured at FP8 only; its BF16 ceiling is that ratio on the BF16 peak, never the
        // BF16 peak, and not above H100's on the same silicon.
        let h200 = catalog::find_system("nvidia_h200_sxm_141gb").unwrap();
        let (c, src) = ceiling(Some(h200), Precision::Bf16, 989.4, true);
        assert!(c <= 794.5 + 1e-9, "{c}");
        assert_ne!(src, CeilingSource::Unmeasured);
        // MI300X: measured at BF16 only; FP8 = 668.4 × 2614.9 / 1307.4 (2× its BF16, not 3.9×).
        let mi300x = catalog::find_system("amd_mi300x").unwrap();
        let (c, src) = ceiling(Some(mi300x), Precision::Fp8, 2614.9, true);
        assert!((c - 668.4 * 2614.9 / 1307.4).abs() < 1e-9, "{c}");
        assert_eq!(src, CeilingSource::ScaledFromOtherPrecision);
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
