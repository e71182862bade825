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

use crate::extended::hardware::Hardware;

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
    fn megablox_tiles_by_hand() {
        // 64 rows per group in 512-row tiles: 64/576 = 1/9 of the visited work is useful (each
        // group visits one whole tile it shares with up to seven others); 1,536 rows: 3/4.
        assert!((efficiency(64.0, TPU_HALF_TOKENS) - 1.0 / 9.0).abs() < 1e-12);
        assert!((efficiency(1536.0, TPU_HALF_TOKENS) - 0.75).abs() < 1e-12);
        assert_eq!(efficiency(128.0, GPU_HALF_TOKENS), 0.5);
        assert_eq!(efficiency(0.0, GPU_HALF_TOKENS), 1.0);
    }
}
