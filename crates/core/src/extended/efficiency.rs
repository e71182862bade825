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
//! * **Attention kernel (measured).** Flash attention's rate is a kernel benchmark, not a fitted
//!   fraction of the ceiling: [`attention_kernel_fraction`] is the forward + backward rate of the
//!   FlashAttention-3 paper's H100 benchmarks (Shah et al. 2024, arXiv:2407.08608, Fig. 5–6:
//!   [`H100_ATTENTION_BENCHMARK`]: cuDNN for a part's own-generation kernel, FlashAttention-2
//!   for an FA2-class kernel on Hopper and later) over the H100's matmul ceiling, by the key
//!   length of a call (512 → 16k tokens: cuDNN 0.43 → 0.68 of the ceiling, FlashAttention-2
//!   0.30 → 0.42), with a causal mask's diagonal tiles ([`CAUSAL_TILE_TOKENS`]). The benchmark
//!   counts the forward `4·b·s²·a·d` FLOPs non-causal and the backward 2.5 times that, as
//!   extended mode does ([`FLASH_BACKWARD_FACTOR`]); extended mode counts a
//!   causal mask's work halved, so the rate it divides by is the benchmark's times
//!   `s/(s + 128)`. Head dimension 128 (the paper's backward at 64 is 0.85–0.87 of it; not
//!   modelled). Every figure, with its panel and the panels not used (head dimensions 64 and
//!   256, the causal forward): `data/attention-kernel-benchmarks.md`. Tried and not used
//!   (session 29, issue 32): the paper's causal panel (Fig. 5(d)) instead of the tile factor
//!   (the mask costs cuDNN 0.63 of its forward at 512 tokens, 0.91 at 16k, the backward assumed
//!   alike): refitted `η_att` 0.676 (`c_att` stays 1024), dense leave-one-source-out 8.68 % →
//!   8.88 %, MoE 17.28 % → 17.35 %; the long-context MoE rows move by under half a point,
//!   because their calls (16k queries per device after context parallelism) sit where the
//!   long-context dense rows that set `η_att` sit (NeMo long-sequence: 16k–32k per device).
//! * **Efficiencies `η` and `η_att`** ([`Efficiency::FITTED`], fitted): `η` the fraction of the
//!   ceiling a whole training step sustains in the matmuls of its linear layers (shapes that are
//!   not the best shape, kernel launch gaps and tails, clocks under sustained load, framework work
//!   not otherwise modelled), `η_att` the fraction of the attention kernel's benchmark rate the
//!   step sustains (one overall scale, the same for every kernel and part), with the two size
//!   constants `c` (GEMM dimension at half rate) and `c_att` (a further sequence factor the
//!   training runs show at 2–4k tokens beyond the benchmark's, whose calls hold a fixed 16k
//!   tokens). These four are the only constants of extended mode fitted to measured training
//!   runs. Result: `η` = 1.0, `η_att` = 0.613 (0.615 before session 31's FSDP reading), `c` = 512, `c_att` = 1024: the measured runs
//!   sustain about 0.6 of the benchmark in attention, the same for the cuDNN-class runs (NeMo
//!   24.03 at 16k–1M tokens: 0.41 of the ceiling) and the FlashAttention-2-class ones
//!   (torchtitan, llm-foundry): the scale is identified by the long-context rows, where
//!   attention is nearly all of the work (each source held out refits it at 0.605–0.617).
//!
//! How they were fitted (reproduced by `crate::validate::fit` and pinned by the test
//! `validate_fit`): every row of `data/measured-training-runs.json` that extended mode can
//! evaluate is predicted at its exact configuration on a grid of `(η, η_att)` for each `(c, c_att)`
//! of a grid; the constants with the
//! smallest mean absolute error `|predicted/measured − 1|` is kept (see `crate::validate::fit` for
//! the grid). Nothing is fitted per run or per source; `fmperf validate --fit` reports the
//! leave-one-source-out error (fit without a source, predict it).

use crate::catalog::{CatalogSystem, Precision};

/// Flash attention's backward FLOPs relative to its forward: five matmuls (logits recomputed,
/// gradients of P, V, Q, K) against two.
pub const FLASH_BACKWARD_FACTOR: f64 = 2.5;

/// `η`: fraction of the matmul ceiling sustained by the linear layers of a training step, fitted
/// once on `data/measured-training-runs.json` (see the module documentation).
pub const FITTED_MATMUL_EFFICIENCY: f64 = 1.0;

/// `η_att`: the fraction of the attention kernel's benchmark rate
/// ([`attention_kernel_fraction`]) a training step sustains, fitted jointly with `η`.
pub const FITTED_ATTENTION_EFFICIENCY: f64 = 0.613;

/// `c` of the GEMM-size factor `Π x/(x + c)` ([`crate::extended::HardwareChoices::gemm_half_dim`])
/// [elements], fitted with `η` and `η_att`.
pub const FITTED_GEMM_HALF_DIM: f64 = 512.0;

/// `c_att` of flash attention's sequence-size factor `s_q/(s_q + c)·s_k/(s_k + c)`
/// ([`crate::extended::HardwareChoices::attention_half_seq`]) [tokens], fitted with `η`, `η_att`, `c`.
pub const FITTED_ATTENTION_HALF_SEQ: f64 = 1024.0;

/// One point of an attention-kernel benchmark: the sequence length and the kernel's forward and
/// backward rates there, non-causal, head dimension 128, BF16, at a fixed 16k tokens per call
/// (batch × sequence), counted as the FlashAttention papers count them (forward
/// `4·b·s²·a·d` FLOPs, backward [`FLASH_BACKWARD_FACTOR`] times that).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelPoint {
    /// Sequence length (queries = keys) [tokens].
    pub seq: f64,
    /// Forward rate [TFLOP/s].
    pub fwd_tflops: f64,
    /// Backward rate [TFLOP/s].
    pub bwd_tflops: f64,
}

/// Attention kernels on an H100 SXM5: Shah et al. 2024, FlashAttention-3 (arXiv:2407.08608),
/// Fig. 5 (forward) and Fig. 6 (backward), head dimension 128, non-causal, BF16, 16k tokens per
/// call. Columns: sequence length [tokens]; cuDNN fused attention (what Transformer Engine's
/// `FusedAttention` calls) forward and backward; FlashAttention-2 forward and backward
/// [TFLOP/s].
pub const H100_ATTENTION_BENCHMARK: [[f64; 5]; 6] = [
    [512.0, 497.0, 305.0, 309.0, 214.0],
    [1024.0, 574.0, 408.0, 350.0, 260.0],
    [2048.0, 617.0, 465.0, 362.0, 291.0],
    [4096.0, 609.0, 499.0, 368.0, 310.0],
    [8192.0, 600.0, 518.0, 370.0, 318.0],
    [16384.0, 595.0, 516.0, 370.0, 322.0],
];

/// The benchmark points of `curve` ([`H100_ATTENTION_BENCHMARK`]'s cuDNN or FlashAttention-2
/// columns).
pub fn kernel_points(curve: KernelCurve) -> [KernelPoint; 6] {
    let col = match curve {
        KernelCurve::Native => 1,
        KernelCurve::Fa2OnAsyncMma => 3,
    };
    H100_ATTENTION_BENCHMARK.map(|r| KernelPoint { seq: r[0], fwd_tflops: r[col], bwd_tflops: r[col + 1] })
}

/// The matmul ceiling of the part the benchmarks ran on (H100 SXM5, BF16 MAMF, the catalog's
/// `measured_matmul_tflops`) [TFLOP/s]: the curves are carried to other parts as fractions of it.
pub const BENCHMARK_CEILING_TFLOPS: f64 = 794.5;

/// Query/key tile of the attention kernels [tokens]: a causal mask skips the tiles above the
/// diagonal and computes the `n` diagonal tiles of `n = s/128` whole, so the work executed is
/// `n(n+1)/2` tiles against the `n²/2` the halved count credits: the rate in halved FLOPs is the
/// non-causal rate times `s/(s + 128)`. (128 × 128 is FlashAttention-2's and -3's forward tile at
/// head dimension 128; the papers' causal panels were not retrieved, so this geometric factor is
/// all of the mask's cost modelled.)
pub const CAUSAL_TILE_TOKENS: f64 = 128.0;

/// Which benchmark an attention kernel's rate follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelCurve {
    /// The part's own-generation fused kernel: cuDNN on H100 ([`H100_ATTENTION_BENCHMARK`]), carried to
    /// every part as the same fraction of its own matmul ceiling (Ampere's FlashAttention-2, TPUs'
    /// splash attention, AMD's CK kernels: no benchmark of them at hand; the cuDNN frontend's
    /// GB200 and B200 runs are recorded in `data/attention-kernels.json`, tried in session 33 and
    /// not used: `data/attention-kernel-benchmarks.md` says why). The FlashAttention-2 paper puts its A100 kernel at 50–73 % of the peak forward +
    /// backward (Dao 2023, arXiv:2307.08691), 0.58–0.84 of the A100's ceiling, above cuDNN's
    /// 0.43–0.68 on H100; priced that way the measured A100 runs (mostly Megatron-LM 2021–22,
    /// whose attention was not yet flash attention) come out worse (leave-one-source-out 9.2 %
    /// against 8.7 %), so the one fraction is kept for all parts.
    Native,
    /// A FlashAttention-2-class kernel on a part with asynchronous warp-group MMA (Hopper and
    /// later, [`crate::extended::Hardware::async_mma`]), which it does not use
    /// ([`H100_ATTENTION_BENCHMARK`]); on other parts FlashAttention-2 is the native kernel.
    Fa2OnAsyncMma,
}

/// Forward + backward rate of one benchmark point [TFLOP/s]: `(1 + β)/(1/f + β/b)`, `β` the
/// backward factor.
fn combined(p: &KernelPoint) -> f64 {
    let beta = FLASH_BACKWARD_FACTOR;
    (1.0 + beta) / (1.0 / p.fwd_tflops + beta / p.bwd_tflops)
}

/// The forward + backward rate of `table` at `seq` tokens [TFLOP/s]: linear in `log2 s` between
/// points, the last point's rate above the table, and below it `r₀·(s/(s + c))/(s₀/(s₀ + c))`
/// with `c` such that this form passes through the first two points (a rate that falls to zero
/// with the sequence rather than a line that crosses it).
pub fn benchmark_rate(table: &[KernelPoint], seq: f64) -> f64 {
    let (first, last) = (&table[0], &table[table.len() - 1]);
    if seq >= last.seq {
        return combined(last);
    }
    if seq <= first.seq {
        let (r0, rho) = (combined(first), combined(&table[1]) / combined(first));
        let ratio = table[1].seq / first.seq;
        // ρ = (s₁/(s₁+c))/(s₀/(s₀+c)) with s₁ = k·s₀  ⇒  c = s₀·k·(ρ − 1)/(k − ρ).
        let c = (first.seq * ratio * (rho - 1.0) / (ratio - rho)).max(0.0);
        return r0 * (seq / (seq + c)) / (first.seq / (first.seq + c));
    }
    let i = table.windows(2).position(|w| seq < w[1].seq).unwrap_or(table.len() - 2);
    let (a, b) = (&table[i], &table[i + 1]);
    let t = (seq.log2() - a.seq.log2()) / (b.seq.log2() - a.seq.log2());
    combined(a) + t * (combined(b) - combined(a))
}

/// The attention kernel's forward + backward rate as a fraction of the part's matmul ceiling,
/// for calls whose key length is `seq` tokens, `causal` counting the causal work halved (as
/// extended mode counts it): the benchmark of `curve` over [`BENCHMARK_CEILING_TFLOPS`], times
/// `s/(s + 128)` when causal ([`CAUSAL_TILE_TOKENS`]). Measured, not fitted; the fitted
/// `η_att` scales it.
pub fn attention_kernel_fraction(curve: KernelCurve, seq: f64, causal: bool) -> f64 {
    let seq = seq.max(1.0);
    let bench = benchmark_rate(&kernel_points(curve), seq) / BENCHMARK_CEILING_TFLOPS;
    if causal { bench * seq / (seq + CAUSAL_TILE_TOKENS) } else { bench }
}

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

/// Tensor Core alignment of a 16-bit matmul: NVIDIA's *Matrix Multiplication Background User's
/// Guide* (Deep Learning Performance documentation, "Tensor Core Requirements") asks for every
/// dimension `m`, `k`, `n` a multiple of 8 elements (16 bytes) in FP16/BF16; a matmul that is not
/// may miss the Tensor Cores. True when all three are.
pub fn tensor_core_aligned(m: f64, k: f64, n: f64) -> bool {
    [m, k, n].iter().all(|x| x % 8.0 == 0.0)
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
    crate::sort::sort_by(v, f64::total_cmp);
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
    fn tensor_core_alignment_by_hand() {
        // BLOOM's head width 14400 / 64 = 225 = 8·28 + 1: the scores Q·Kᵀ (2048 × 225)·(225 × 2048).
        assert!(!tensor_core_aligned(2048.0, 225.0, 2048.0));
        // 13824 / 128 = 108 = 8·13 + 4: the context P·V (2048 × 2048)·(2048 × 108).
        assert!(!tensor_core_aligned(2048.0, 2048.0, 108.0));
        // 14336 / 64 = 224 = 8·28.
        assert!(tensor_core_aligned(2048.0, 224.0, 2048.0));
    }

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
    fn attention_kernel_rates_by_hand() {
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
        use KernelCurve::{Fa2OnAsyncMma, Native};
        // cuDNN at 8k tokens, forward 600 and backward 518 TFLOP/s (FlashAttention-3 paper,
        // Fig. 5–6): one forward and a backward of 2.5× its FLOPs run at
        // 3.5/(1/600 + 2.5/518) = 539.05 TFLOP/s, 0.6785 of the H100's 794.5.
        let native_8k: f64 = 3.5 / (1.0 / 600.0 + 2.5 / 518.0) / 794.5;
        assert!((native_8k - 0.6785).abs() < 1e-4);
        close(attention_kernel_fraction(Native, 8192.0, false), native_8k);
        // Causal: 64 diagonal tiles of 128 computed whole next to the 64²/2 credited, 8192/8320.
        close(attention_kernel_fraction(Native, 8192.0, true), native_8k * 8192.0 / 8320.0);
        // Beyond the table, its last point (16k: 595 / 516 → 536.35 TFLOP/s).
        let native_16k: f64 = 3.5 / (1.0 / 595.0 + 2.5 / 516.0) / 794.5;
        close(attention_kernel_fraction(Native, 1048576.0, false), native_16k);
        close(attention_kernel_fraction(Native, 16384.0, false), native_16k);
        // Between points, linear in log2 s: halfway from 2k (500.21) to 4k (526.15) at 2k·√2.
        let (r2k, r4k): (f64, f64) = (3.5 / (1.0 / 617.0 + 2.5 / 465.0), 3.5 / (1.0 / 609.0 + 2.5 / 499.0));
        close(attention_kernel_fraction(Native, 2048.0 * 2f64.sqrt(), false), 0.5 * (r2k + r4k) / 794.5);
        // Below 512 tokens: r(512)·(s/(s + c))/(512/(512 + c)), c through 512 (342.84) and 1k
        // (444.75): ρ = 1.29724, c = 1024·(ρ − 1)/(2 − ρ) = 433.1; at 256 tokens 235.10 TFLOP/s.
        let below = attention_kernel_fraction(Native, 256.0, false) * 794.5;
        assert!((below - 235.10).abs() < 0.01, "{below}");
        // FlashAttention-2 on H100 at 8k: 3.5/(1/370 + 2.5/318) = 331.3 TFLOP/s, 0.615 of cuDNN's
        // (0.623 at 16k: the 0.62 the kernel reading used before as one ratio).
        let fa2 = attention_kernel_fraction(Fa2OnAsyncMma, 8192.0, false);
        close(fa2, 3.5 / (1.0 / 370.0 + 2.5 / 318.0) / 794.5);
        assert!((fa2 / native_8k - 0.6146).abs() < 1e-4);
        // The rate grows with the sequence and never reaches the ceiling.
        let mut last = 0.0;
        for s in [64.0, 256.0, 512.0, 700.0, 1024.0, 3000.0, 8192.0] {
            let f = attention_kernel_fraction(Native, s, false);
            assert!(f > last && f < 1.0, "{s}: {f}");
            last = f;
        }
    }

    /// The rows of the first table after the paragraph starting with `caption` in
    /// `data/attention-kernel-benchmarks.md`: sequence length, FlashAttention-2, cuDNN,
    /// FlashAttention-3.
    fn data_table(caption: &str) -> Vec<[f64; 4]> {
        let md = include_str!("../../data/attention-kernel-benchmarks.md");
        let start = md.find(&format!("\n{caption}")).unwrap_or_else(|| panic!("no table {caption}"));
        md[start..]
            .lines()
            .skip_while(|l| !l.starts_with("| 512"))
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let v: Vec<f64> = l.split('|').filter_map(|c| c.trim().parse().ok()).collect();
                [v[0], v[1], v[2], v[3]]
            })
            .collect()
    }

    /// The benchmark the code uses is the one the data file records, figure by figure.
    #[test]
    fn benchmark_table_matches_the_data_file() {
        let (fwd, bwd) = (data_table("Fig. 5(c)"), data_table("Fig. 6, backward, head dimension 128"));
        assert_eq!((fwd.len(), bwd.len()), (6, 6));
        for ((f, b), table) in fwd.iter().zip(&bwd).zip(H100_ATTENTION_BENCHMARK) {
            let [s, fa2, cudnn, _] = *f;
            assert_eq!([s, cudnn, b[2], fa2, b[1]], table, "{s} tokens");
            assert_eq!(b[0], s);
        }
    }

    /// The causal panel the data file records (Fig. 5(d), tried and not used, session 29): the
    /// mask costs cuDNN's forward far more than the diagonal tiles `s/(s + 128)` that price it.
    /// At 512 tokens 315/497 = 0.634 against 512/640 = 0.800; at 16k 539/595 = 0.906 against
    /// 16384/16512 = 0.992.
    #[test]
    fn causal_panel_against_the_tile_factor() {
        let causal = data_table("Fig. 5(d)");
        assert_eq!(causal.len(), 6);
        for (c, f) in causal.iter().zip(H100_ATTENTION_BENCHMARK) {
            assert_eq!(c[0], f[0]);
            let (measured, tiles) = (c[2] / f[1], f[0] / (f[0] + CAUSAL_TILE_TOKENS));
            assert!(measured < tiles && measured > 0.6, "{}: {measured} vs {tiles}", f[0]);
        }
        assert!((causal[0][2] / 497.0 - 0.634).abs() < 5e-4 && (causal[5][2] / 595.0 - 0.906).abs() < 5e-4);
    }

    #[test]
    fn median_of_even_and_odd_lists() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
