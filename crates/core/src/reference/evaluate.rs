//! Evaluation of one configuration: the full, inspectable [`Evaluation`] (every layer row, the
//! DP/PP pseudo-layers and the totals) and the allocation-free [`Evaluator`] the search uses.
//! Both go through the same functions ([`BlockSums`], [`assemble`]), so their totals are
//! bit-identical.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::block::{self, ATTENTION_ROWS, BlockShape, BlockSums, BlockTimes, LayerTime, MLP_ROWS};
use super::collective::Collective;
use super::layers::LayerCounts;
use super::machine::Machine;
use super::parallel::{DpStats, PpStats, data_parallel, pipeline_parallel};
use super::timing::PassTime;
use super::totals::{IterationShape, totals};
use crate::vocab::{Candidate, Outcome, Totals};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// One row of a module table: a layer's counts and pass times for one micro-batch on one device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LayerRow {
    /// The reference's row name (`fc1`, `fusedla`, `ln2`, …).
    pub name: &'static str,
    /// Weights [GB].
    pub weights_gb: f64,
    /// Weight gradients [GB].
    pub weight_grads_gb: f64,
    /// Activations kept for the backward pass [GB].
    pub activations_gb: f64,
    /// Forward work [TFLOP].
    pub flops_fwd_tflop: f64,
    /// Backward work [TFLOP].
    pub flops_bwd_tflop: f64,
    /// Forward HBM traffic [GB].
    pub mem_fwd_gb: f64,
    /// Backward HBM traffic [GB].
    pub mem_bwd_gb: f64,
    /// Whether the layer runs on tensor cores.
    pub tensor_cores: bool,
    /// Forward collectives (empty: none).
    pub collectives_fwd: Vec<Collective>,
    /// Backward collectives (empty: none).
    pub collectives_bwd: Vec<Collective>,
    /// Forward time [s].
    pub t_fwd_s: f64,
    /// Forward exposed communication [s].
    pub t_fwd_comm_s: f64,
    /// Forward compute [s].
    pub t_fwd_comp_s: f64,
    /// Forward exposed memory time [s].
    pub t_fwd_mem_s: f64,
    /// Forward `T_flops/T_mem` [dimensionless] (quirk Q12).
    pub intensity_fwd: f64,
    /// Backward time [s].
    pub t_bwd_s: f64,
    /// Backward exposed communication [s].
    pub t_bwd_comm_s: f64,
    /// Backward compute [s].
    pub t_bwd_comp_s: f64,
    /// Backward exposed memory time [s].
    pub t_bwd_mem_s: f64,
    /// Backward `T_flops/T_mem` [dimensionless].
    pub intensity_bwd: f64,
    /// `t_fwd_s + t_bwd_s` [s].
    pub t_s: f64,
}

impl LayerRow {
    fn new(name: &'static str, c: &LayerCounts, t: &LayerTime) -> LayerRow {
        let priced = |list: &super::layers::CommList, pass: &PassTime| -> Vec<Collective> {
            list.as_slice()
                .iter()
                .zip(pass.comm_times)
                .map(|(s, time_s)| Collective {
                    kind: s.kind,
                    volume_gb: s.volume_gb,
                    group_size: s.group_size,
                    fast_share: s.fast_share,
                    time_s,
                })
                .collect()
        };
        LayerRow {
            name,
            weights_gb: c.weights_gb,
            weight_grads_gb: c.weight_grads_gb,
            activations_gb: c.activations_gb,
            flops_fwd_tflop: c.flops_fwd_tflop,
            flops_bwd_tflop: c.flops_bwd_tflop,
            mem_fwd_gb: c.mem_fwd_gb,
            mem_bwd_gb: c.mem_bwd_gb,
            tensor_cores: c.tensor_cores,
            collectives_fwd: priced(&c.comm_fwd, &t.fwd),
            collectives_bwd: priced(&c.comm_bwd, &t.bwd),
            t_fwd_s: t.fwd.t,
            t_fwd_comm_s: t.fwd.t_comm,
            t_fwd_comp_s: t.fwd.t_comp,
            t_fwd_mem_s: t.fwd.t_mem,
            intensity_fwd: t.fwd.intensity,
            t_bwd_s: t.bwd.t,
            t_bwd_comm_s: t.bwd.t_comm,
            t_bwd_comp_s: t.bwd.t_comp,
            t_bwd_mem_s: t.bwd.t_mem,
            intensity_bwd: t.bwd.intensity,
            t_s: t.total(),
        }
    }
}

/// Everything the reference computes for one configuration.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Evaluation {
    /// The configuration.
    pub candidate: Candidate,
    /// Micro-batches per iteration.
    pub microbatches: u64,
    /// MLP module rows (one block, one micro-batch).
    pub mlp: Vec<LayerRow>,
    /// Attention module rows (one block, one micro-batch).
    pub attention: Vec<LayerRow>,
    /// Data-parallel pseudo-layer.
    pub dp: DpStats,
    /// Pipeline pseudo-layer.
    pub pp: PpStats,
    /// Iteration totals.
    pub totals: Totals,
    /// `G / t` [samples/s].
    pub throughput_samples_per_s: f64,
    /// Memory per device [GB] (= `totals.mem`).
    pub mem_gb: f64,
    /// `mem ≤ hbm_capacity`.
    pub feasible: bool,
}

/// DP, PP, totals and the headline numbers from one block's sums (shared by both paths).
pub fn assemble(
    machine: &Machine,
    model: &ModelShape,
    global_batch: u64,
    c: &Candidate,
    sums: &BlockSums,
) -> (DpStats, PpStats, Outcome) {
    let blocks = model.depth / c.pp;
    let nmb = c.microbatches(global_batch);
    let (group, share) = c.dp_group();
    let dp = data_parallel(&machine.net, sums.weights(), sums.t_fwd(), sums.t_bwd(), blocks, group, share);
    let pp = pipeline_parallel(&machine.net, sums.pp_volume_gb, c.pp, c.nv_pp, nmb);
    let shape =
        IterationShape { depth: model.depth, pp: c.pp, dp: c.dp, seqp: c.optimizer_shards(), microbatches: nmb };
    let t = totals(sums, dp.t_s, pp.t_s, &shape);
    let outcome = Outcome {
        throughput_samples_per_s: global_batch as f64 / t.t,
        mem_gb: t.mem,
        // The published model has no allocator cache: its one figure is the need.
        need_gb: t.mem,
        // Feasible iff mem ≤ capacity (strictly greater is rejected).
        feasible: t.mem <= machine.hbm_capacity,
        totals: t,
    };
    (dp, pp, outcome)
}

/// Evaluates one configuration with every detail (spec §3–§6).
///
/// Validates the model, the system and the candidate first; the error names the broken rule.
pub fn evaluate(
    model: &ModelShape,
    system: &SystemParams,
    global_batch: u64,
    candidate: &Candidate,
) -> Result<Evaluation, Error> {
    model.validate()?;
    system.validate()?;
    candidate.check(model, system, global_batch)?;
    let machine = Machine::new(system);
    let counts = block::block_counts(candidate.strategy, model, &machine.units, &candidate.block_shape());
    let times = BlockTimes::of(&counts, &machine);
    let sums = BlockSums::of(&counts, &times);
    let (dp, pp, outcome) = assemble(&machine, model, global_batch, candidate, &sums);
    let rows = |names: &[&'static str], c: &[LayerCounts], t: &[LayerTime]| -> Vec<LayerRow> {
        names.iter().zip(c).zip(t).map(|((n, c), t)| LayerRow::new(n, c, t)).collect()
    };
    Ok(Evaluation {
        candidate: *candidate,
        microbatches: candidate.microbatches(global_batch),
        mlp: rows(&MLP_ROWS, &counts.mlp, &times.mlp),
        attention: rows(&ATTENTION_ROWS, &counts.attention, &times.attention),
        dp,
        pp,
        totals: outcome.totals,
        throughput_samples_per_s: outcome.throughput_samples_per_s,
        mem_gb: outcome.mem_gb,
        feasible: outcome.feasible,
    })
}

/// Fast evaluation of many configurations of one strategy, model, system and batch.
///
/// A block's rows depend only on its [`BlockShape`] `(mbs, tp1, tp2, nb, nv_tp1, nv_tp2)`; their
/// column sums are cached per shape, so a configuration that differs from an earlier one only in
/// `dp`, `pp` or their placement costs two collective prices, one message price and the totals. Results are bit-identical to
/// [`evaluate`].
#[derive(Debug, Clone)]
pub struct Evaluator {
    model: ModelShape,
    system: SystemParams,
    machine: Machine,
    strategy: Strategy,
    global_batch: u64,
    sums: HashMap<BlockShape, BlockSums, BuildHasherDefault<ShapeHasher>>,
}

impl Evaluator {
    /// An evaluator for `strategy` on `model` and `system` with `global_batch` samples per
    /// iteration (model and system are validated here).
    pub fn new(
        model: &ModelShape,
        system: &SystemParams,
        strategy: Strategy,
        global_batch: u64,
    ) -> Result<Self, Error> {
        model.validate()?;
        system.validate()?;
        if global_batch == 0 || global_batch > crate::vocab::MAX_GLOBAL_BATCH {
            return Err(Error::invalid(
                "global_batch",
                global_batch,
                format!("must be from 1 to {}", crate::vocab::MAX_GLOBAL_BATCH),
            ));
        }
        Ok(Evaluator {
            model: *model,
            system: system.clone(),
            machine: Machine::new(system),
            strategy,
            global_batch,
            sums: HashMap::default(),
        })
    }

    /// The model, system and global batch [samples] this evaluator prices.
    pub fn inputs(&self) -> (&ModelShape, &SystemParams, u64) {
        (&self.model, &self.system, self.global_batch)
    }

    /// Evaluates a candidate after checking it (see [`Candidate::check`]).
    pub fn evaluate(&mut self, c: &Candidate) -> Result<Outcome, Error> {
        if c.strategy != self.strategy {
            return Err(Error::invalid(
                "candidate.strategy",
                c.strategy,
                format!("this evaluator was built for the {} strategy", self.strategy),
            ));
        }
        c.check(&self.model, &self.system, self.global_batch)?;
        Ok(self.evaluate_unchecked(c))
    }

    /// Evaluates a candidate that satisfies [`Candidate::check`] (the search's generators only
    /// produce such candidates).
    pub(crate) fn evaluate_unchecked(&mut self, c: &Candidate) -> Outcome {
        let shape = c.block_shape();
        let sums = match self.sums.get(&shape) {
            Some(s) => *s,
            None => {
                let counts = block::block_counts(self.strategy, &self.model, &self.machine.units, &shape);
                let s = BlockSums::of(&counts, &BlockTimes::of(&counts, &self.machine));
                self.sums.insert(shape, s);
                s
            }
        };
        assemble(&self.machine, &self.model, self.global_batch, c, &sums).2
    }

    /// How many distinct block shapes have been priced so far (for diagnostics).
    pub fn cached_blocks(&self) -> usize {
        self.sums.len()
    }
}

/// A small multiplicative hasher for the block-shape cache: deterministic on every platform (no
/// random keys, which `wasm32-unknown-unknown` cannot provide) and cheap for six integers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShapeHasher(u64);

impl Hasher for ShapeHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    /// The bytes as little-endian words of 8, the last zero-padded. (Integer keys arrive here as
    /// one slice of their bytes: each word is formed by shifts, without the copies into a
    /// padded buffer that a page built for size spent a twentieth of its MoE search on.)
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        // A little-endian word of up to 8 bytes (fewer: the high bytes zero), by shifts alone.
        let word = |chunk: &[u8]| chunk.iter().rev().fold(0u64, |w, &b| (w << 8) | u64::from(b));
        let mut words = bytes.chunks_exact(8);
        for chunk in &mut words {
            self.write_u64(word(chunk));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            self.write_u64(word(rest));
        }
    }

    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

#[cfg(test)]
mod tests {
    use super::ShapeHasher;
    use std::hash::{Hash, Hasher};

    /// The hasher folds each little-endian word of 8 bytes, the last zero-padded: a key's hash is
    /// the same whether its bytes arrive as one slice or word by word (hand-folded here).
    #[test]
    fn a_key_hashes_as_its_words() {
        let fold =
            |words: &[u64]| words.iter().fold(0u64, |h, &x| (h.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95));
        let key = [3u64, 1 << 40, 7, u64::MAX, 0];
        let mut h = ShapeHasher::default();
        key.hash(&mut h);
        // `[u64; 5]` hashes as a slice: its length first, then its bytes.
        let mut words = vec![key.len() as u64];
        words.extend(key);
        assert_eq!(h.finish(), fold(&words));
        // A tail shorter than a word is zero-padded.
        let mut h = ShapeHasher::default();
        h.write(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(h.finish(), fold(&[u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]), 9 | (10 << 8)]));
    }
}
