//! The routed experts' grouped GEMM at few tokens per expert: the tokens each local expert
//! receives, `M`, fill its row tiles only partly, so the kernel runs at `M/(M + M½)` of its
//! large-`M` rate ([`efficiency`]), with `M½` the kernel's row tile ([`half_tokens`]):
//!
//! * **GPU** (Megatron-Core's grouped GEMM through cuBLAS / CUTLASS / DeepGEMM): 128-row tiles,
//!   [`GPU_HALF_TOKENS`]. Checked against the one published table of a grouped FP8 GEMM by
//!   tokens per expert, DeepGEMM's on H800 ([`DEEPGEMM_H800`]): the curve's least-squares best
//!   fit is `M½ ≈ 100` (root-mean-square deviation 3.5 %), 128 deviates by 4.2 % (test
//!   `the_gpu_half_against_deepgemms_table`); 128 is kept (shipped MoE leave-one-source-out
//!   17.28 % at 128, 17.33 % at 100, `data/moe-physics.md`, session 30).
//! * **TPU** (MaxText's `megablox` grouped matmul, the kernel of every MaxText MoE row with
//!   `megablox: True`, `sparse_matmul: True`): the kernel walks the rows in tiles of `tm` and
//!   visits a tile once per group it holds (AI-Hypercomputer/maxtext at 9ca35d7e60,
//!   `MaxText/kernels/megablox/gmm.py` `make_group_metadata`, lines 140–176: each group's rows
//!   rounded down at its start and up at its end to multiples of `tm`, `group_tiles =
//!   rounded_group_sizes // tm`, "tiles_m <= group_tiles.sum() <= tiles_m + num_groups - 1"), so
//!   a group of `M` rows costs up to `M/tm + 1` tiles, one more than its rows fill when its
//!   boundaries fall inside tiles: `M/(M + tm)` of the work is useful. `tm` is MaxText's
//!   `tile_batch_seq` (`MaxText/layers/moe.py` line 521 at 9ca35d7e60; `src/MaxText/layers/moe.py`
//!   lines 805–808 at 3eb77db3c9, capped at the rows), 512 by default (`MaxText/configs/base.yml`
//!   line 145 at 9ca35d7e60, `src/MaxText/configs/base.yml` line 176 at 3eb77db3c9; the
//!   DeepSeek-V3 v5p recipe `deepseek3_671b_v5p_1024` sets 512 itself,
//!   `benchmarks/maxtext_v5p_model_configs.py` line 314 at 3eb77db3c9; the Llama 4 v5p recipes
//!   leave the default): the TPU's [`TPU_HALF_TOKENS`].
//!
//! Their weight gradients: under Megatron-Core with gradient-accumulation fusion each expert's
//! weight-gradient GEMM accumulates into the expert's main gradient (Transformer Engine's
//! `GroupedLinear` backward with `accumulate = True`, β = 1), reading and writing it whole at every
//! micro-batch ([`main_grad_bytes`]). That traffic does not hide behind the GEMM's math: the
//! measured B200 table of SimuMax ([`SIMUMAX_B200_WGRAD`]) gives each grouped weight-gradient GEMM
//! the time of the same GEMM at its forward rate plus the main gradient's read and write at the
//! HBM bandwidth (test `the_main_gradient_traffic_against_simumaxs_b200_table`; at the forward's
//! rate alone the weight gradients would run 64 % faster than measured). Few tokens per expert
//! make it count: DeepSeek-V3's experts at 128 tokens each spend 1.8× the GEMM's own time on an
//! FP32 main gradient, at 1,024 tokens 0.5×. The dense layers' weight gradients are left as they
//! were (their fitted efficiency holds whatever they pay).

use crate::extended::hardware::Hardware;
use crate::extended::pricing::Pricing;

/// Tokens per local expert at which a GPU's grouped GEMM runs at half its large-`M` rate
/// [tokens]: the 128-row GEMM tiles of Hopper/Blackwell kernels (an expert with `M` tokens fills
/// `M/(M + 128)` of its tiles' work once the partial tile is counted). DeepGEMM's H800 table
/// ([`DEEPGEMM_H800`]) fits 100 best and 128 within 0.7 points of it.
pub const GPU_HALF_TOKENS: f64 = 128.0;

/// The TPU's (`megablox`'s) row tile, MaxText's default `tile_batch_seq` [tokens] (module
/// documentation).
pub const TPU_HALF_TOKENS: f64 = 512.0;

/// DeepGEMM's grouped FP8 GEMM on H800, `(M per group, N, K, TFLOP/s)`: the contiguous layout at
/// 8,192 and 4,096 tokens per group, the masked layout at 1,024, 512 and 256 (deepseek-ai/DeepGEMM
/// README, "Grouped GEMMs for MoE models (contiguous layout)" and "(masked layout)", the first
/// release's tables, 2025-02).
pub const DEEPGEMM_H800: [(f64, f64, f64, f64); 10] = [
    (8192.0, 4096.0, 7168.0, 1297.0),
    (4096.0, 4096.0, 7168.0, 1288.0),
    (1024.0, 4096.0, 7168.0, 1233.0),
    (512.0, 4096.0, 7168.0, 1040.0),
    (256.0, 4096.0, 7168.0, 932.0),
    (8192.0, 7168.0, 2048.0, 1099.0),
    (4096.0, 7168.0, 2048.0, 1093.0),
    (1024.0, 7168.0, 2048.0, 925.0),
    (512.0, 7168.0, 2048.0, 916.0),
    (256.0, 7168.0, 2048.0, 815.0),
];

/// SimuMax's measured Transformer Engine grouped GEMMs on B200 (BF16, TE 2.11), as fractions of
/// the 2,250 TFLOP/s peak, `(groups, M per group, N, K, forward, weight gradient into an FP32 main
/// gradient, weight gradient into a BF16 one)`, `None` where the file has no entry
/// (MooreThreads/SimuMax at e691807a7e, `configs/system/b200_bf16_ceperm.json`,
/// `group_matmul.accurate_efficient_factor`, stages `fwd` and `bwd_grad_w` with `main_grad_dtype`
/// fp32 / bf16: the DeepSeek-V3 and DeepSeek-V2 expert shapes of its B200 rows, 128 to 9,832
/// tokens per expert; the same file's HBM bandwidth is 8,000 GB/s, `bandwidth.default.gbps`).
pub const SIMUMAX_B200_WGRAD: [(f64, f64, f64, f64, f64, Option<f64>, Option<f64>); 20] = [
    (256.0, 128.0, 4096.0, 7168.0, 0.2081, Some(0.0775), Some(0.1416)),
    (256.0, 128.0, 7168.0, 2048.0, 0.1782, Some(0.0801), Some(0.1414)),
    (128.0, 256.0, 4096.0, 7168.0, 0.2714, Some(0.1473), Some(0.2190)),
    (128.0, 256.0, 7168.0, 2048.0, 0.3035, Some(0.1409), Some(0.2182)),
    (64.0, 512.0, 4096.0, 7168.0, 0.3670, Some(0.2192), Some(0.2891)),
    (64.0, 512.0, 7168.0, 2048.0, 0.4274, Some(0.2145), Some(0.2844)),
    (32.0, 1024.0, 4096.0, 7168.0, 0.4571, Some(0.2888), Some(0.3469)),
    (32.0, 1024.0, 7168.0, 2048.0, 0.3842, Some(0.2744), Some(0.2948)),
    (160.0, 154.0, 3072.0, 5120.0, 0.1997, None, Some(0.1486)),
    (160.0, 154.0, 5120.0, 1536.0, 0.1158, Some(0.0828), Some(0.1228)),
    (80.0, 308.0, 3072.0, 5120.0, 0.3868, Some(0.1616), Some(0.2433)),
    (80.0, 308.0, 5120.0, 1536.0, 0.2350, Some(0.1780), Some(0.2447)),
    (40.0, 616.0, 3072.0, 5120.0, 0.4618, Some(0.2579), Some(0.3430)),
    (40.0, 616.0, 5120.0, 1536.0, 0.3258, Some(0.2723), Some(0.3612)),
    (20.0, 1232.0, 3072.0, 5120.0, 0.5134, Some(0.3276), Some(0.3849)),
    (20.0, 1232.0, 5120.0, 1536.0, 0.3974, Some(0.3198), Some(0.3603)),
    (40.0, 2460.0, 3072.0, 5120.0, 0.4868, Some(0.4166), None),
    (40.0, 2460.0, 5120.0, 1536.0, 0.4958, Some(0.4026), None),
    (40.0, 9832.0, 3072.0, 5120.0, 0.4746, Some(0.4186), None),
    (40.0, 9832.0, 5120.0, 1536.0, 0.4447, Some(0.4134), None),
];

/// HBM bytes the routed experts' weight-gradient GEMMs move for the experts' main gradient in one
/// micro-batch's backward, for `expert_parameters` on the device [B]: a read and a write of each
/// parameter's gradient at the main gradient's element size (FP32, or the 16-bit parameter type
/// with `grad_reduce_in_fp32` off: [`Pricing::grad_element_bytes`]) when the GEMMs accumulate into
/// it — Megatron-Core with gradient-accumulation fusion on a GPU (module documentation). Zero
/// otherwise: the unfused accumulation's traffic is priced with the step's host work
/// (`step_host::unfused_wgrad_bytes`), other stacks' is not modelled.
pub fn main_grad_bytes(p: &Pricing, expert_parameters: f64) -> f64 {
    let fused = p.hw.host_launched
        && p.opts.stack == crate::extended::stack::Stack::Megatron
        && p.opts.grad_accumulation_fusion;
    if !fused {
        return 0.0;
    }
    2.0 * p.grad_element_bytes() * expert_parameters.max(0.0)
}

/// The row tile `M½` of the grouped GEMM that runs the experts on `hw` [tokens]: megablox's on a
/// TPU (a torus of chips, compiled steps), else a GPU kernel's.
pub fn half_tokens(hw: &Hardware) -> f64 {
    if hw.torus && !hw.host_launched { TPU_HALF_TOKENS } else { GPU_HALF_TOKENS }
}

/// Grouped-GEMM efficiency at `m` tokens per local expert with row tile `half` [0–1].
pub fn efficiency(m: f64, half: f64) -> f64 {
    if m <= 0.0 { 1.0 } else { m / (m + half) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root-mean-square relative deviation of `rate = P·M/(M + half)` from DeepGEMM's table, `P`
    /// fitted per `(N, K)` shape by least squares.
    fn deviation(half: f64) -> f64 {
        let mut sum = 0.0;
        for shape in [(4096.0, 7168.0), (7168.0, 2048.0)] {
            let rows: Vec<_> = DEEPGEMM_H800.iter().filter(|r| (r.1, r.2) == shape).collect();
            let xs: Vec<f64> = rows.iter().map(|r| efficiency(r.0, half)).collect();
            let p = rows.iter().zip(&xs).map(|(r, x)| x * r.3).sum::<f64>() / xs.iter().map(|x| x * x).sum::<f64>();
            sum += rows.iter().zip(&xs).map(|(r, x)| ((p * x - r.3) / r.3).powi(2)).sum::<f64>();
        }
        (sum / DEEPGEMM_H800.len() as f64).sqrt()
    }

    #[test]
    fn the_gpu_half_against_deepgemms_table() {
        // By hand (python, same least squares): M½ 64 → 5.36 %, 100 → 3.47 %, 128 → 4.19 %,
        // 192 → 8.33 %, 256 → 12.41 %: the table wants ≈ 100; 128 stays within 1 point of it.
        assert!((deviation(100.0) - 0.0347).abs() < 5e-4, "{}", deviation(100.0));
        assert!((deviation(GPU_HALF_TOKENS) - 0.0419).abs() < 5e-4, "{}", deviation(GPU_HALF_TOKENS));
        assert!(deviation(GPU_HALF_TOKENS) < deviation(64.0) && deviation(GPU_HALF_TOKENS) < deviation(192.0));
        assert!(deviation(TPU_HALF_TOKENS) > 0.2, "the TPU's tile is not the GPU kernel's");
    }

    #[test]
    fn the_main_gradient_traffic_against_simumaxs_b200_table() {
        // Weight-gradient efficiency = FLOPs / (FLOPs at the forward's rate + 2·b·groups·N·K bytes
        // at 8,000 GB/s), against SimuMax's measured one. By hand, 32 × 1,024 × 4,096 × 7,168 into
        // FP32: 1.924 TFLOP at 0.4571 · 2,250 = 1.871 ms, plus 2 · 4 · 32 · 29.36 M B = 7.52 GB in
        // 0.940 ms: 2.811 ms, 0.304 of the peak against 0.289 measured (the forward's 0.457 would
        // be +58 %). Over the table (python, same rule): FP32 19 entries, mean deviation −6.4 %,
        // root mean square 12.3 %; BF16 16 entries, −13.5 % and 19.7 %; at the forward's rate
        // (no traffic) +64 % and +27 % mean.
        let (peak, bw) = (2250e12, 8000e9);
        let dev = |b: f64, traffic: bool| {
            let e: Vec<f64> = SIMUMAX_B200_WGRAD
                .iter()
                .filter_map(|&(ng, m, n, k, fwd, w32, w16)| {
                    let measured = if b == 4.0 { w32 } else { w16 }?;
                    let flop = 2.0 * ng * m * n * k;
                    let bytes = if traffic { 2.0 * b * ng * n * k } else { 0.0 };
                    Some(flop / (flop / (fwd * peak) + bytes / bw) / peak / measured - 1.0)
                })
                .collect();
            let mean = e.iter().sum::<f64>() / e.len() as f64;
            (e.len(), mean, (e.iter().map(|x| x * x).sum::<f64>() / e.len() as f64).sqrt())
        };
        let (n32, mean32, rms32) = dev(4.0, true);
        let (n16, mean16, rms16) = dev(2.0, true);
        assert_eq!((n32, n16), (19, 16));
        assert!((mean32 + 0.0636).abs() < 0.001 && (rms32 - 0.1230).abs() < 0.001, "{mean32} {rms32}");
        assert!((mean16 + 0.1349).abs() < 0.001 && (rms16 - 0.1965).abs() < 0.001, "{mean16} {rms16}");
        assert!((dev(4.0, false).1 - 0.6355).abs() < 0.001 && (dev(2.0, false).1 - 0.2672).abs() < 0.001);
    }

    #[test]
    fn the_experts_backward_reads_and_writes_their_main_gradient_by_hand() {
        use crate::SystemParams;
        use crate::extended::moe::ExpertLayout;
        use crate::extended::moe::layer::{EXPERTS_OP, moe_mlp_operations};
        use crate::extended::moe::options::{Load, MoeOptions};
        use crate::extended::options::{ExtendedOptions, GradReduce};
        use crate::extended::{Layout, Stack};
        // Mixtral's experts (8 × 3·4,096·14,336) on 8 H200 of ep 8, one local expert each:
        // 176,160,768 parameters; FP32 main gradient read and written: 8 B each = 1,409,286,144 B
        // per micro-batch's backward, 0.2936 ms at the H200's 4,800 GB/s; 2 B each way (4 B) with
        // `grad_reduce = param`; none with the fusion off or under another stack. The forward is
        // untouched.
        let (w, m) = crate::extended::moe::layer::tests::mixtral();
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let el = ExpertLayout::fold(&layout, &m, 8, 1).unwrap();
        let mo = MoeOptions { load: Load::Forced, ..Default::default() };
        let experts = |opts: &ExtendedOptions| {
            let p = Pricing { hw: &hw, opts };
            let (ops, _) = moe_mlp_operations(&w, &m, &layout, &el, &p, &mo, (0.0, 0.0));
            *ops.iter().find(|o| o.name == EXPERTS_OP).unwrap()
        };
        let base = ExtendedOptions::realistic();
        let unfused = ExtendedOptions { grad_accumulation_fusion: false, ..base };
        let (with, without) = (experts(&base), experts(&unfused));
        let params = 3.0 * 4096.0 * 14336.0;
        assert_eq!(params, 176_160_768.0);
        assert_eq!(main_grad_bytes(&Pricing { hw: &hw, opts: &base }, params), 1_409_286_144.0);
        let want = 1_409_286_144.0 * 1e-9 / hw.hbm_bandwidth_gbps;
        assert!((hw.hbm_bandwidth_gbps - 4800.0).abs() < 1e-9, "{}", hw.hbm_bandwidth_gbps);
        assert!(((with.bwd.memory_s - without.bwd.memory_s) - want).abs() < 1e-15, "{want}");
        assert!((want - 0.2936e-3).abs() < 1e-7);
        assert_eq!(with.fwd, without.fwd);
        assert_eq!(with.bwd.compute_s, without.bwd.compute_s);
        let param = ExtendedOptions { grad_reduce: GradReduce::Param, ..base };
        assert_eq!(main_grad_bytes(&Pricing { hw: &hw, opts: &param }, params), 704_643_072.0);
        for o in [unfused, ExtendedOptions { stack: Stack::Fsdp, ..base }] {
            assert_eq!(main_grad_bytes(&Pricing { hw: &hw, opts: &o }, params), 0.0);
        }
    }

    #[test]
    fn megablox_tiles_by_hand() {
        // 64 rows per group in 512-row tiles: 64/576 = 1/9 of the visited work is useful (each
        // group visits one whole tile it shares with up to seven others); 1,536 rows: 3/4.
        assert!((efficiency(64.0, TPU_HALF_TOKENS) - 1.0 / 9.0).abs() < 1e-12);
        assert!((efficiency(1536.0, TPU_HALF_TOKENS) - 0.75).abs() < 1e-12);
        assert_eq!(efficiency(128.0, GPU_HALF_TOKENS), 0.5);
        assert_eq!(efficiency(0.0, GPU_HALF_TOKENS), 1.0);
    }
}
