//! One transformer block per strategy (spec §4): the MLP module (8 rows) and the attention module
//! (6 rows) with the layers and arguments `modules.py` uses, their pass times and the column sums
//! the totals read.
//!
//! Quirk Q15: no bias on qkv, no residual adds, no embeddings, LM head or loss — only these rows.

use super::layers::{
    Act, Bias, DropOut, FusedLA, FusedLASeqp, Layer, LayerCounts, LayerNorm, LayerNorm2D, Linear, LinearSeqp,
    LinearSumma,
};
use super::machine::{Machine, Units};
use super::timing::{PassTime, pass_time};
use crate::{ModelShape, Strategy};

/// Row names of the MLP module, in the reference's order.
pub const MLP_ROWS: [&str; 8] = ["fc1", "fc1-bias", "act1", "dpr1", "fc2", "fc2-bias", "dpr2", "ln1"];
/// Row names of the attention module, in the reference's order.
pub const ATTENTION_ROWS: [&str; 6] = ["qkv", "fusedla", "vproj", "vproj-bias", "dpr_v", "ln2"];

/// The per-block parallel shape: everything the block's rows depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockShape {
    /// Micro-batch size `b` [samples].
    pub b: u64,
    /// `m1`: tensor-parallel degree (`tp` in 1d, `tp1` otherwise) [devices].
    pub m1: u64,
    /// `m2`: second grid dimension (`tp2`; 1 in 1d) [devices].
    pub m2: u64,
    /// SUMMA panel count `nb` (1 unless 2d) [count].
    pub nb: u64,
    /// `τ1`: fast-domain share of `m1` [devices].
    pub tau1: u64,
    /// `τ2`: fast-domain share of `m2` [devices].
    pub tau2: u64,
}

/// Counts of the 14 rows of one block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockCounts {
    /// The MLP module, rows as in [`MLP_ROWS`].
    pub mlp: [LayerCounts; 8],
    /// The attention module, rows as in [`ATTENTION_ROWS`].
    pub attention: [LayerCounts; 6],
}

/// Forward and backward time of one row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LayerTime {
    /// Forward pass.
    pub fwd: PassTime,
    /// Backward pass.
    pub bwd: PassTime,
}

impl LayerTime {
    /// Prices both passes of a row.
    pub fn of(c: &LayerCounts, machine: &Machine) -> LayerTime {
        LayerTime {
            fwd: pass_time(machine, c.flops_fwd_tflop, c.mem_fwd_gb, c.tensor_cores, &c.comm_fwd, c.timing),
            bwd: pass_time(machine, c.flops_bwd_tflop, c.mem_bwd_gb, c.tensor_cores, &c.comm_bwd, c.timing),
        }
    }

    /// `t = t_fwd + t_bwd` [s].
    pub fn total(&self) -> f64 {
        self.fwd.t + self.bwd.t
    }
}

/// The counts of one block of `strategy` for `model` at `shape`.
pub fn block_counts(strategy: Strategy, model: &ModelShape, units: &Units, shape: &BlockShape) -> BlockCounts {
    let layers = match strategy {
        Strategy::OneD => one_d(model, shape),
        Strategy::Summa2D => summa_2d(model, shape),
        Strategy::ContextParallel2D => context_parallel(model, shape),
    };
    BlockCounts { mlp: layers.0.map(|l| l.counts(units)), attention: layers.1.map(|l| l.counts(units)) }
}

type Rows = ([Row; 8], [Row; 6]);

/// A row of a module: one of the catalogue's layers.
#[derive(Debug, Clone, Copy)]
enum Row {
    Linear(Linear),
    LinearSeqp(LinearSeqp),
    LinearSumma(LinearSumma),
    Bias(Bias),
    Act(Act),
    DropOut(DropOut),
    LayerNorm(LayerNorm),
    LayerNorm2D(LayerNorm2D),
    FusedLA(FusedLA),
    FusedLASeqp(FusedLASeqp),
}

impl Row {
    fn counts(&self, u: &Units) -> LayerCounts {
        match self {
            Row::Linear(x) => x.counts(u),
            Row::LinearSeqp(x) => x.counts(u),
            Row::LinearSumma(x) => x.counts(u),
            Row::Bias(x) => x.counts(u),
            Row::Act(x) => x.counts(u),
            Row::DropOut(x) => x.counts(u),
            Row::LayerNorm(x) => x.counts(u),
            Row::LayerNorm2D(x) => x.counts(u),
            Row::FusedLA(x) => x.counts(u),
            Row::FusedLASeqp(x) => x.counts(u),
        }
    }
}

/// §4.1: Megatron 1D tensor parallelism with sequence parallelism, degree `m`, fast share `τ`.
fn one_d(model: &ModelShape, s: &BlockShape) -> Rows {
    let ModelShape { l, e, h, f, .. } = *model;
    let (b, m, t) = (s.b, s.m1, s.tau1);
    let lin = |k, n, m_in, m_out, tau_in, tau_out| Row::Linear(Linear { b, l, k, n, m_in, m_out, tau_in, tau_out });
    let norm = Row::LayerNorm(LayerNorm { b, l, e, m, tau: t });
    let unsharded_bias = Row::Bias(Bias { b, l, n: e, m2: 1, m1: 1 });
    let seq_shard = Row::DropOut(DropOut { elements: b * (l / m) * e });
    let mlp = [
        lin(e, f, 1, m, 1, t),
        Row::Bias(Bias { b, l, n: f, m2: 1, m1: m }),
        Row::Act(Act { elements: b * l * (f / m) }),
        Row::DropOut(DropOut { elements: b * l * (f / m) }),
        lin(f, e, m, 1, t, 1),
        // Quirk Q9: the output biases are unsharded (b, l, e) although the output was reduce-scattered.
        unsharded_bias,
        seq_shard,
        norm,
    ];
    let attention = [
        lin(e, 3 * e, 1, m, 1, t),
        Row::FusedLA(FusedLA { b, l, q: e / h, h, m, tau: t }),
        lin(e, e, m, 1, t, 1),
        unsharded_bias,
        seq_shard,
        norm,
    ];
    (mlp, attention)
}

/// §4.2: SUMMA on an `m1 × m2` grid (features × tokens).
fn summa_2d(model: &ModelShape, s: &BlockShape) -> Rows {
    let ModelShape { l, e, h, f, .. } = *model;
    let BlockShape { b, m1, m2, nb, tau1, tau2 } = *s;
    let summa = |k, n| Row::LinearSumma(LinearSumma { b, l, k, n, m2, m1, tau2, tau1, nb });
    let bias = |n| Row::Bias(Bias { b, l, n, m2, m1 });
    let norm = Row::LayerNorm2D(LayerNorm2D { b, l, e, m2, m1, tau2, tau1 });
    let hidden = b * (l / m2) * (f / m1);
    let out = Row::DropOut(DropOut { elements: b * (l / m2) * (e / m1) });
    let mlp = [
        summa(e, f),
        bias(f),
        Row::Act(Act { elements: hidden }),
        Row::DropOut(DropOut { elements: hidden }),
        summa(f, e),
        bias(e),
        out,
        norm,
    ];
    // Quirk Q2: the 2D search builds its attention with `sa_2d_seqp`: SUMMA projections around a
    // context-parallel flash attention (the SUMMA logits/softmax/attend path is never used).
    let attention = [
        summa(e, 3 * e),
        Row::FusedLASeqp(FusedLASeqp { b, l, q: e / h, h, m2, m1, tau2, tau1 }),
        summa(e, e),
        bias(e),
        out,
        norm,
    ];
    (mlp, attention)
}

/// §4.3: 1D tensor parallelism over `m1` × context parallelism over `m2`; weights split over `m1`
/// only and replicated over `m2`.
fn context_parallel(model: &ModelShape, s: &BlockShape) -> Rows {
    let ModelShape { l, e, h, f, .. } = *model;
    let BlockShape { b, m1, m2, tau1, tau2, .. } = *s;
    let lin = |k, n, m_in, m_out, tau_in, tau_out| {
        Row::LinearSeqp(LinearSeqp {
            linear: Linear { b, l, k, n, m_in, m_out, tau_in, tau_out },
            m_seq: m2,
            tau_seq: tau2,
        })
    };
    let l_seq = l / m2;
    let norm = Row::LayerNorm(LayerNorm { b, l: l_seq, e, m: m1, tau: tau1 });
    let hidden = b * l_seq * (f / m1);
    let out = Row::DropOut(DropOut { elements: b * (l / (m1 * m2)) * e });
    let mlp = [
        lin(e, f, 1, m1, 1, tau1),
        Row::Bias(Bias { b, l, n: f, m2, m1 }),
        Row::Act(Act { elements: hidden }),
        Row::DropOut(DropOut { elements: hidden }),
        lin(f, e, m1, 1, tau1, 1),
        // Quirk Q9: fc2-bias covers ⌊⌊l/m2⌋/m1⌋ × e while vproj-bias covers ⌊l/m2⌋ × ⌊e/m1⌋.
        Row::Bias(Bias { b, l: l_seq, n: e, m2: m1, m1: 1 }),
        out,
        norm,
    ];
    let attention = [
        lin(e, 3 * e, 1, m1, 1, tau1),
        Row::FusedLASeqp(FusedLASeqp { b, l, q: e / h, h, m2, m1, tau2, tau1 }),
        lin(e, e, m1, 1, tau1, 1),
        Row::Bias(Bias { b, l, n: e, m2, m1 }),
        out,
        norm,
    ];
    (mlp, attention)
}

/// Column sums of one module table (the `df[col].sum()` the reference's totals read).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ModuleSums {
    /// Σ `F_f` [TFLOP].
    pub flops_fwd: f64,
    /// Σ `F_b` [TFLOP].
    pub flops_bwd: f64,
    /// Σ forward time [s].
    pub t_fwd: f64,
    /// Σ backward time [s].
    pub t_bwd: f64,
    /// Σ forward exposed communication [s].
    pub t_fwd_comm: f64,
    /// Σ backward exposed communication [s].
    pub t_bwd_comm: f64,
    /// Σ forward compute [s].
    pub t_fwd_comp: f64,
    /// Σ backward compute [s].
    pub t_bwd_comp: f64,
    /// Σ forward exposed memory time [s].
    pub t_fwd_mem: f64,
    /// Σ backward exposed memory time [s].
    pub t_bwd_mem: f64,
    /// Σ weights [GB].
    pub weights: f64,
    /// Σ activations kept for the backward pass [GB].
    pub activations: f64,
}

impl ModuleSums {
    /// Sums the columns of a module table the way NumPy does (see [`numpy_sum`]).
    pub fn of(counts: &[LayerCounts], times: &[LayerTime]) -> ModuleSums {
        let col = |f: &dyn Fn(&LayerCounts, &LayerTime) -> f64| {
            let mut v = [0.0; 8];
            for (i, (c, t)) in counts.iter().zip(times).take(8).enumerate() {
                v[i] = f(c, t);
            }
            numpy_sum(&v[..counts.len().min(8)])
        };
        ModuleSums {
            flops_fwd: col(&|c, _| c.flops_fwd_tflop),
            flops_bwd: col(&|c, _| c.flops_bwd_tflop),
            t_fwd: col(&|_, t| t.fwd.t),
            t_bwd: col(&|_, t| t.bwd.t),
            t_fwd_comm: col(&|_, t| t.fwd.t_comm),
            t_bwd_comm: col(&|_, t| t.bwd.t_comm),
            t_fwd_comp: col(&|_, t| t.fwd.t_comp),
            t_bwd_comp: col(&|_, t| t.bwd.t_comp),
            t_fwd_mem: col(&|_, t| t.fwd.t_mem),
            t_bwd_mem: col(&|_, t| t.bwd.t_mem),
            weights: col(&|c, _| c.weights_gb),
            activations: col(&|c, _| c.activations_gb),
        }
    }
}

/// NumPy's summation of a float column (spec Appendix B.3): fewer than 8 values are added one after
/// the other starting from 0.0; from 8 to 128 values eight partial sums are combined pairwise,
/// `((r0+r1)+(r2+r3)) + ((r4+r5)+(r6+r7))`, then the remainder is added; longer columns are split
/// in halves (a multiple of 8) recursively.
pub fn numpy_sum(v: &[f64]) -> f64 {
    let n = v.len();
    if n < 8 {
        let mut s = 0.0;
        for x in v {
            s += x;
        }
        s
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&v[..8]);
        let full = n - n % 8;
        let mut i = 8;
        while i < full {
            for j in 0..8 {
                r[j] += v[i + j];
            }
            i += 8;
        }
        let mut s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for x in &v[full..] {
            s += x;
        }
        s
    } else {
        let half = (n / 2) - (n / 2) % 8;
        numpy_sum(&v[..half]) + numpy_sum(&v[half..])
    }
}

/// What the DP/PP pseudo-layers and the totals need from one block (one micro-batch).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BlockSums {
    /// Column sums of the MLP module.
    pub mlp: ModuleSums,
    /// Column sums of the attention module.
    pub attention: ModuleSums,
    /// `V_pp`: activation buffer of the `ln1` row, the pipeline message [GB] (§5.2).
    pub pp_volume_gb: f64,
}

impl BlockSums {
    /// The sums of a priced block.
    pub fn of(counts: &BlockCounts, times: &BlockTimes) -> BlockSums {
        BlockSums {
            mlp: ModuleSums::of(&counts.mlp, &times.mlp),
            attention: ModuleSums::of(&counts.attention, &times.attention),
            pp_volume_gb: counts.mlp[7].activations_gb,
        }
    }

    /// `W1` [GB]: weights of one block on this device.
    pub fn weights(&self) -> f64 {
        self.mlp.weights + self.attention.weights
    }

    /// `Tf1` [s]: forward time of one block for one micro-batch.
    pub fn t_fwd(&self) -> f64 {
        self.mlp.t_fwd + self.attention.t_fwd
    }

    /// `Tb1` [s]: backward time of one block for one micro-batch.
    pub fn t_bwd(&self) -> f64 {
        self.mlp.t_bwd + self.attention.t_bwd
    }
}

/// Pass times of the 14 rows of one block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockTimes {
    /// MLP rows.
    pub mlp: [LayerTime; 8],
    /// Attention rows.
    pub attention: [LayerTime; 6],
}

impl BlockTimes {
    /// Prices every row of a block.
    pub fn of(counts: &BlockCounts, machine: &Machine) -> BlockTimes {
        BlockTimes {
            mlp: counts.mlp.map(|c| LayerTime::of(&c, machine)),
            attention: counts.attention.map(|c| LayerTime::of(&c, machine)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_pairwise_and_sequential_orders() {
        let v = [1e16, 1.0, -1e16, 1.0, 3.0, 5.0, 7.0, 11.0];
        let pairwise = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
        assert_eq!(numpy_sum(&v), pairwise);
        let six = &v[..6];
        assert_eq!(numpy_sum(six), ((((0.0 + v[0]) + v[1]) + v[2]) + v[3] + v[4]) + v[5]);
        let long: Vec<f64> = (0..300).map(|i| i as f64 * 0.1).collect();
        assert!((numpy_sum(&long) - long.iter().sum::<f64>()).abs() < 1e-9);
    }
}
