//! A configuration's iteration time in stages, for work that prices one configuration at many
//! values of the fitted constants (`η`, `η_att`, `c`, `c_att`: the leave-one-source-out fits of
//! [`crate::validate`]):
//!
//! 1. **workload and layout**: the checks, the data-parallel groups and collectives, the stage
//!    split and the stage-to-stage messages, once;
//! 2. **the block's operations** ([`super::ops`]) and the head laid out, once, each saying how
//!    its passes follow from the compute rates ([`super::ops::Work`]);
//! 3. **priced operations**: at each set of constants the operations are priced again by that
//!    rule and summed ([`super::block::BlockCost::of_operations`]);
//! 4. **time**: the evaluator's own last stage (`timing` in [`super::iteration`]).
//!
//! [`super::evaluate`] runs the same builders, the same sums and the same last stage, so the
//! time of [`TimePlan::time_s`] is [`super::evaluate()`]'s to the bit (the test below and
//! `validate`'s fit cache check it);
//! what is not repeated is the work that reads no fitted constant (checks, element-wise traffic,
//! collectives, memory). Dense models only: a Mixture-of-Experts block or latent attention is
//! not described operation by operation ([`TimePlan::new`] returns `None`; those are evaluated
//! in full).
//!
//! **Many points at once** ([`TimePlan::times_s`], a [`PointBatch`]): the block's sums split by
//! what each operation reads — the operations reading no constant (summed once), those reading
//! `η` and `c` (with the head), those reading `η_att` and `c_att` — so that each side is priced
//! and summed once per distinct value of its own constants (a grid of 15 × 17 points prices 15
//! matmul sides and 17 attention sides, kept for the next walks that meet the same values), and
//! a point adds the three sums' times and runs the last stage.
//! The same terms added in another order: equal in real arithmetic, not always to the last bit
//! (within ~1e-15 relative; the fits decide near-ties with [`TimePlan::time_s`],
//! `validate/fit_cache.rs`).

use super::block::BlockCost;
use super::block::operations;
use super::data_parallel::{DpCollectives, DpGroups, dp_collectives};
use super::efficiency::Efficiency;
use super::hardware::Hardware;
use super::head::{EndCost, HeadWork, embedding_cost, head_work};
use super::iteration::{Parts, block_host_s, check, timing};
use super::layout::Layout;
use super::ops::{Operation, Reads, reprice, repriceable};
use super::options::{ExtendedOptions, HardwareChoices};
use super::pipeline::{StageSplit, message_s};
use super::pricing::{Pass, Pricing};
use super::workload::Workload;
use crate::Error;

/// `hardware` with the fitted constants `e` (its other choices kept).
pub fn with_constants(hardware: HardwareChoices, e: Efficiency) -> HardwareChoices {
    HardwareChoices {
        matmul_efficiency: e.matmul,
        attention_efficiency: e.attention,
        gemm_half_dim: e.gemm_half_dim,
        attention_half_seq: e.attention_half_seq,
        ..hardware
    }
}

/// One dense configuration laid out for pricing at many values of the fitted constants.
#[derive(Debug, Clone)]
pub struct TimePlan {
    layout: Layout,
    hw: Hardware,
    /// The switches; their compute constants are those of the last pricing.
    opts: ExtendedOptions,
    /// One block's operations, priced at the last constants.
    ops: Vec<Operation>,
    head: Option<HeadWork>,
    /// The head priced at the last constants.
    head_cost: EndCost,
    embedding: EndCost,
    groups: DpGroups,
    /// The data-parallel collectives priced so far, per device `(blocks, parameters' bits, linear parameters' bits)`.
    collectives: Vec<(u64, u64, u64, DpCollectives)>,
    stages: StageSplit,
    /// Stage-to-stage message time and the head's stage's logits exchange per micro-batch
    /// ([`super::stack_nanotron::head_exchange_s`]) [s], and nanotron's tied-gradient sync per
    /// step ([`super::stack_nanotron::tied_sync_s`]) [s].
    message: (f64, f64, f64),
    /// The block's sums at the plan's constants (its parameters and bytes read none).
    whole: BlockCost,
    /// The sums of the operations reading no constant, with their kernel counts.
    fixed: (BlockCost, [f64; 3]),
    /// Copies of the operations reading the matmul constants, then of those reading attention's
    /// (priced by [`TimePlan::times_s`]).
    sides: [Vec<Operation>; 2],
    /// Their times at the side values met, in the slots of [`PointBatch`].
    memo: [Vec<Side>; 2],
}

/// One side's times at one value of its constants ([`TimePlan::times_s`]), kept by the plan in
/// the slot its batch gives that value.
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    /// The value (bits of the side's two constants); `None`: an empty slot.
    key: Option<[u64; 2]>,
    /// Forward, backward and recomputation times of the side's operations [s].
    times: [f64; 3],
    /// Their kernel counts (small integers).
    kernels: [f32; 3],
    /// The head's forward and backward times at the same constants [s] (matmul side).
    head: [f64; 2],
    /// Whether the constants are accepted ([`ExtendedOptions::validate`]).
    ok: bool,
}

/// `base` with side `s`'s two constants taken from `e` (0: `η`, `c`; 1: `η_att`, `c_att`).
fn with_side(base: HardwareChoices, e: &Efficiency, s: usize) -> HardwareChoices {
    let (mut h, all) = (base, with_constants(base, *e));
    if s == 0 {
        (h.matmul_efficiency, h.gemm_half_dim) = (all.matmul_efficiency, all.gemm_half_dim);
    } else {
        (h.attention_efficiency, h.attention_half_seq) = (all.attention_efficiency, all.attention_half_seq);
    }
    h
}

/// The distinct values of each side's constants met by the batches of one walk of points, each
/// given a slot: a plan prices a side once per value and keeps it in that slot
/// ([`TimePlan::times_s`]) until another value takes the slot.
#[derive(Debug, Clone, Default)]
pub struct SideSlots {
    slots: [std::collections::HashMap<[u64; 2], usize>; 2],
}

impl SideSlots {
    /// Forgets the values (their slots go to the next ones met).
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| s.clear());
    }
}

/// The two constants each side reads: `(η, c)` for the matmul side, `(η_att, c_att)` for attention.
fn side_keys(e: &Efficiency) -> [[u64; 2]; 2] {
    [[e.matmul.to_bits(), e.gemm_half_dim.to_bits()], [e.attention.to_bits(), e.attention_half_seq.to_bits()]]
}

/// Points at which to price plans ([`TimePlan::times_s`]), with the distinct values of each
/// side's constants and their slots.
#[derive(Debug, Clone)]
pub struct PointBatch {
    points: Vec<Efficiency>,
    /// A point of each distinct matmul-side value with its slot, then the same for attention.
    sides: [Vec<(Efficiency, usize)>; 2],
    /// Per point: the slots of its matmul-side and attention-side values.
    of: Vec<[usize; 2]>,
}

impl PointBatch {
    /// The batch of `points` (in that order), each side value in its slot of `slots` (a new
    /// value takes the next free slot).
    pub fn new(points: &[Efficiency], slots: &mut SideSlots) -> PointBatch {
        let mut sides: [Vec<(Efficiency, usize)>; 2] = [Vec::new(), Vec::new()];
        let mut seen = [std::collections::HashSet::new(), std::collections::HashSet::new()];
        let of = points
            .iter()
            .map(|e| {
                let keys = side_keys(e);
                let mut at = [0; 2];
                for s in 0..2 {
                    let next = slots.slots[s].len();
                    at[s] = *slots.slots[s].entry(keys[s]).or_insert(next);
                    if seen[s].insert(at[s]) {
                        sides[s].push((*e, at[s]));
                    }
                }
                at
            })
            .collect();
        PointBatch { points: points.to_vec(), sides, of }
    }

    /// The points.
    pub fn points(&self) -> &[Efficiency] {
        &self.points
    }
}

/// A pass whose whole time is `t` [s] (the last stage reads passes' times only).
fn pass_of(t: f64) -> Pass {
    Pass { compute_s: t, ..Pass::default() }
}

impl TimePlan {
    /// The plan of `w` on `hw` under `layout` and `opts` (checked as [`super::evaluate()`] checks
    /// them); `None` for a configuration whose operations are not all described (module docs).
    pub fn new(
        w: &Workload,
        hw: &Hardware,
        layout: &Layout,
        opts: &ExtendedOptions,
    ) -> Result<Option<TimePlan>, Error> {
        check(w, hw, layout, opts)?;
        // Muon's step is priced by the evaluator after the timing ([`super::muon`]).
        if w.moe.is_some() || opts.optimizer.is_muon() {
            return Ok(None);
        }
        let p = Pricing { hw, opts };
        let ops = operations(w, layout, &p);
        if !repriceable(&ops) {
            return Ok(None);
        }
        let head = head_work(w, layout, &p);
        let of = |reads: Reads| ops.iter().filter(|o| o.work.reads() == reads).copied().collect::<Vec<_>>();
        let sides = [of(Reads::Matmul), of(Reads::Attention)];
        let fixed = BlockCost::sums(&of(Reads::Nothing), opts.recompute);
        Ok(Some(TimePlan {
            whole: BlockCost::of_operations(&ops, opts.recompute, p.host_time_per_operation_s()),
            fixed,
            sides,
            memo: [Vec::new(), Vec::new()],
            layout: *layout,
            hw: hw.clone(),
            opts: *opts,
            ops,
            head,
            head_cost: head.map_or_else(EndCost::default, |h| h.priced(&p)),
            embedding: embedding_cost(w, layout, &p),
            groups: DpGroups::on(layout, opts, hw)?,
            collectives: Vec::new(),
            stages: super::stack_nanotron::stage_split(w, layout.pp, opts),
            message: (
                message_s(w, layout, &p),
                super::stack_nanotron::head_exchange_s(w, layout, &p),
                super::stack_nanotron::tied_sync_s(w, layout, &p),
            ),
        }))
    }

    /// The iteration time [s] with the fitted constants `e` (the plan's switches otherwise):
    /// [`super::evaluate()`]'s `totals.t` with `opts.hardware` = [`with_constants`]`(opts.hardware,
    /// e)`, to the bit. What reads only constants that did not change since the last call is not
    /// priced again.
    pub fn time_s(&mut self, e: Efficiency) -> Result<f64, Error> {
        let (old, new) = (self.opts.hardware, with_constants(self.opts.hardware, e));
        let matmul = (old.matmul_efficiency, old.gemm_half_dim) != (new.matmul_efficiency, new.gemm_half_dim);
        let attention =
            (old.attention_efficiency, old.attention_half_seq) != (new.attention_efficiency, new.attention_half_seq);
        if matmul || attention {
            self.opts.hardware = new;
            if let Err(e) = self.opts.validate() {
                self.opts.hardware = old;
                return Err(e);
            }
        }
        let p = Pricing { hw: &self.hw, opts: &self.opts };
        reprice(&mut self.ops, &p, matmul, attention);
        if matmul {
            self.head_cost = self.head.map_or_else(EndCost::default, |h| h.priced(&p));
        }
        let host_s = p.host_time_per_operation_s();
        let (opts, head) = (self.opts, self.head_cost);
        let (sums, kernels) = BlockCost::sums(&self.ops, opts.recompute);
        let (python_s, bwd_host_s) = block_host_s(&Pricing { hw: &self.hw, opts: &opts });
        let block = sums.issue_bounded_layer(kernels, host_s, python_s);
        Ok(self.iteration_s(&opts, block, [kernels[1] * host_s + bwd_host_s, sums.bwd.time()], head))
    }

    /// The last stage: the iteration time [s] of `block` and `head` under `opts` (the plan's
    /// switches with some constants), its data-parallel collectives priced once per size.
    /// `[bwd_issue_s, bwd_work_s]`: the block backward's issue time and its work before the floor
    /// [s].
    fn iteration_s(&mut self, opts: &ExtendedOptions, block: BlockCost, bwd: [f64; 2], head: EndCost) -> f64 {
        let p = Pricing { hw: &self.hw, opts };
        let parts = Parts { block, embedding: self.embedding, head, bwd_issue_s: bwd[0], bwd_work: pass_of(bwd[1]) };
        let (groups, priced) = (&self.groups, &mut self.collectives);
        let mut collectives = |blocks: u64, parameters: f64, linear: f64| {
            let key = (blocks, parameters.to_bits(), linear.to_bits());
            if let Some(c) = priced.iter().find(|c| (c.0, c.1, c.2) == key) {
                return c.3;
            }
            let c = dp_collectives(groups, &p, blocks, parameters, linear);
            priced.push((key.0, key.1, key.2, c));
            c
        };
        timing(&self.layout, &p, &parts, &self.groups, self.stages, self.message, &mut collectives).t
    }

    /// The iteration time [s] at every point of `batch` (`None` where the constants are refused,
    /// as [`Self::time_s`] refuses them), each side of the block priced and summed once per
    /// distinct value of its constants and kept in its slot for later batches (module docs):
    /// [`Self::time_s`]'s terms added in another order, so equal to it but for the last bits.
    /// The state [`Self::time_s`] reads is left as it was.
    pub fn times_s(&mut self, batch: &PointBatch) -> Vec<Option<f64>> {
        let base = self.opts;
        for (s, reads) in [(0, Reads::Matmul), (1, Reads::Attention)] {
            for (e, slot) in &batch.sides[s] {
                let key = side_keys(e)[s];
                if self.memo[s].get(*slot).is_some_and(|m| m.key == Some(key)) {
                    continue;
                }
                // The side's operations read its own constants only; the checks of the four
                // constants are independent, so a point is accepted when both its sides are.
                let opts = ExtendedOptions { hardware: with_side(base.hardware, e, s), ..base };
                let p = Pricing { hw: &self.hw, opts: &opts };
                reprice(&mut self.sides[s], &p, reads == Reads::Matmul, reads == Reads::Attention);
                let (sums, kernels) = BlockCost::sums(&self.sides[s], opts.recompute);
                let head = match (reads, self.head) {
                    (Reads::Matmul, Some(h)) => h.priced(&p),
                    _ => EndCost::default(),
                };
                if self.memo[s].len() <= *slot {
                    self.memo[s].resize(*slot + 1, Side::default());
                }
                self.memo[s][*slot] = Side {
                    key: Some(key),
                    times: [sums.fwd.time(), sums.bwd.time(), sums.recompute.time()],
                    kernels: kernels.map(|k| k as f32),
                    head: [head.fwd.time(), head.bwd.time()],
                    ok: opts.validate().is_ok(),
                };
            }
        }
        let (f, fk) = self.fixed;
        let fixed = [f.fwd.time(), f.bwd.time(), f.recompute.time()];
        let host_s = Pricing { hw: &self.hw, opts: &base }.host_time_per_operation_s();
        let (python_s, bwd_host_s) = block_host_s(&Pricing { hw: &self.hw, opts: &base });
        batch
            .of
            .iter()
            .map(|&[m, a]| {
                let (m, a) = (self.memo[0][m], self.memo[1][a]);
                if !(m.ok && a.ok) {
                    return None;
                }
                let t = |i: usize| pass_of(fixed[i] + m.times[i] + a.times[i]);
                let k = |i: usize| fk[i] + f64::from(m.kernels[i]) + f64::from(a.kernels[i]);
                let block = BlockCost { fwd: t(0), bwd: t(1), recompute: t(2), ..self.whole }.issue_bounded_layer(
                    [k(0), k(1), k(2)],
                    host_s,
                    python_s,
                );
                let head = EndCost { fwd: pass_of(m.head[0]), bwd: pass_of(m.head[1]), ..self.head_cost };
                // The last stage reads no fitted constant: the plan's switches serve every point.
                Some(self.iteration_s(&base, block, [k(1) * host_s + bwd_host_s, t(1).time()], head))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::evaluate;
    use crate::extended::options::{Fusion, Recompute, Sharding};

    #[test]
    fn the_plan_prices_every_constant_as_the_evaluator_does() {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let w = Workload { vocab: Some(51200), ..Workload::from_shape(&crate::ModelShape::GPT3) };
        let base = ExtendedOptions::realistic();
        let layouts = [Layout::placed(8, 1, 12, 16, 1, 1536, 8), Layout::placed(4, 1, 1, 64, 2, 1024, 8)];
        let switches = [
            base,
            ExtendedOptions { sequence_parallel: false, recompute: Recompute::Full, ..base },
            ExtendedOptions { tp_comm_overlap: true, sharding: Sharding::Zero3, fusion: Fusion::Eager, ..base },
        ];
        for layout in layouts {
            for opts in switches {
                let mut plan = TimePlan::new(&w, &hw, &layout, &opts).unwrap().expect("a dense block is described");
                // Each constant alone, both sides, and back (what is priced again follows them).
                let mut points = Vec::new();
                let mut exact = Vec::new();
                for (matmul, attention, gemm_half_dim, attention_half_seq) in [
                    (0.5, 0.41, 512.0, 1024.0),
                    (0.5, 0.3, 512.0, 1024.0),
                    (0.5, 0.3, 0.0, 4096.0),
                    (0.7, 0.9, 128.0, 0.0),
                    (0.7, 0.9, 128.0, 512.0),
                    (0.999, 0.41, 512.0, 1024.0),
                    (0.0, 0.41, 512.0, 1024.0),
                ] {
                    let e = Efficiency { matmul, attention, gemm_half_dim, attention_half_seq };
                    let hardware = with_constants(opts.hardware, e);
                    let full = evaluate(&w, &hw, &layout, &ExtendedOptions { hardware, ..opts }).map(|f| f.totals.t);
                    let planned = plan.time_s(e);
                    assert_eq!(planned.is_ok(), full.is_ok(), "{e:?}");
                    if let (Ok(planned), Ok(full)) = (&planned, &full) {
                        assert_eq!(planned.to_bits(), full.to_bits(), "{e:?}");
                    }
                    points.push(e);
                    exact.push(full.ok());
                }
                // All the points at once (each side priced once per value): the same times but
                // for the last bits, the refused point refused; the plan's state untouched.
                let before = plan.time_s(points[0]).unwrap();
                let mut slots = SideSlots::default();
                let batch = PointBatch::new(&points, &mut slots);
                assert_eq!(batch.sides[0].len(), 5);
                assert_eq!(batch.sides[1].len(), 5);
                // Twice: priced, then read from the slots; then the slots reused by other values.
                let other: Vec<Efficiency> = points.iter().map(|e| Efficiency { matmul: 0.6, ..*e }).collect();
                let mut other_exact = Vec::new();
                for e in &other {
                    let hardware = with_constants(opts.hardware, *e);
                    other_exact.push(
                        evaluate(&w, &hw, &layout, &ExtendedOptions { hardware, ..opts }).ok().map(|f| f.totals.t),
                    );
                }
                slots.clear();
                let reused = PointBatch::new(&other, &mut slots);
                for (batch, exact) in [(&batch, &exact), (&batch, &exact), (&reused, &other_exact)] {
                    for (fast, exact) in plan.times_s(batch).into_iter().zip(exact) {
                        match (fast, exact) {
                            (Some(f), Some(x)) => assert!((f - x).abs() <= 1e-14 * x, "{f} vs {x}"),
                            (f, x) => assert_eq!(f.is_some(), x.is_some()),
                        }
                    }
                }
                assert_eq!(plan.time_s(points[0]).unwrap().to_bits(), before.to_bits());
            }
        }
        // Out-of-range constants are refused as the evaluator refuses them.
        let mut plan = TimePlan::new(&w, &hw, &layouts[0], &base).unwrap().unwrap();
        assert!(plan.time_s(Efficiency { matmul: 0.0, ..Efficiency::FITTED }).is_err());
        // A context-parallel ring (overlapping attention) and the all-gather without it.
        let ring = Layout::placed(2, 4, 1, 8, 1, 8, 8);
        let long = Workload { seq_len: 16384, ..w };
        for opts in [base, ExtendedOptions { cp_ring_overlap: false, ..base }] {
            let mut plan = TimePlan::new(&long, &hw, &ring, &opts).unwrap().expect("described");
            for e in [Efficiency { attention: 0.2, attention_half_seq: 0.0, ..Efficiency::FITTED }, Efficiency::FITTED]
            {
                let hardware = with_constants(opts.hardware, e);
                let full = evaluate(&long, &hw, &ring, &ExtendedOptions { hardware, ..opts }).unwrap();
                assert!(full.totals.t_tp_comm > 0.0);
                assert_eq!(plan.time_s(e).unwrap().to_bits(), full.totals.t.to_bits(), "{e:?}");
            }
        }
    }
}
