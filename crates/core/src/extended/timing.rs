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
//! 4. **time**: the evaluator's own last stage (`timing` in [`super::evaluate`]).
//!
//! [`super::evaluate`] runs the same builders, the same sums and the same last stage, so the
//! time is [`super::evaluate()`]'s to the bit (the test below and `validate`'s fit cache check it);
//! what is not repeated is the work that reads no fitted constant (checks, element-wise traffic,
//! collectives, memory). Dense models only: a Mixture-of-Experts block or latent attention is
//! not described operation by operation ([`TimePlan::new`] returns `None`; those are evaluated
//! in full).

use super::block::BlockCost;
use super::data_parallel::{DpCollectives, DpGroups, dp_collectives};
use super::efficiency::Efficiency;
use super::evaluate::{Parts, check, timing};
use super::hardware::Hardware;
use super::head::{EndCost, HeadWork, embedding_cost, head_work};
use super::layout::Layout;
use super::ops::{Operation, operations, reprice, repriceable};
use super::options::{ExtendedOptions, HardwareChoices};
use super::pipeline::{StageSplit, message_s, split};
use super::pricing::Pricing;
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
    /// The data-parallel collectives priced so far, per device `(blocks, parameters' bits)`.
    collectives: Vec<(u64, u64, DpCollectives)>,
    stages: StageSplit,
    /// Stage-to-stage message time [s].
    message: f64,
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
        if w.moe.is_some() {
            return Ok(None);
        }
        let p = Pricing { hw, opts };
        let ops = operations(w, layout, &p);
        if !repriceable(&ops) {
            return Ok(None);
        }
        let head = head_work(w, layout, &p);
        Ok(Some(TimePlan {
            layout: *layout,
            hw: hw.clone(),
            opts: *opts,
            ops,
            head,
            head_cost: head.map_or_else(EndCost::default, |h| h.priced(&p)),
            embedding: embedding_cost(w, layout, &p),
            groups: DpGroups::on(layout, opts, hw)?,
            collectives: Vec::new(),
            stages: split(w.layers, layout.pp, opts.stage_split),
            message: message_s(w, layout, &p),
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
        let parts = Parts {
            block: BlockCost::of_operations(&self.ops, self.opts.recompute),
            embedding: self.embedding,
            head: self.head_cost,
        };
        let (groups, priced) = (&self.groups, &mut self.collectives);
        let mut collectives = |blocks: u64, parameters: f64| {
            let key = (blocks, parameters.to_bits());
            if let Some(c) = priced.iter().find(|c| (c.0, c.1) == key) {
                return c.2;
            }
            let c = dp_collectives(groups, &p, blocks, parameters);
            priced.push((key.0, key.1, c));
            c
        };
        Ok(timing(&self.layout, &p, &parts, &self.groups, self.stages, self.message, &mut collectives).t)
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
        let hw = Hardware::from_params(&SystemParams::h200().with_nvlink_size(8), true);
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
                for (matmul, attention, gemm_half_dim, attention_half_seq) in [
                    (0.5, 0.41, 512.0, 1024.0),
                    (0.5, 0.3, 512.0, 1024.0),
                    (0.5, 0.3, 0.0, 4096.0),
                    (0.7, 0.9, 128.0, 0.0),
                    (0.7, 0.9, 128.0, 512.0),
                    (0.999, 0.41, 512.0, 1024.0),
                ] {
                    let e = Efficiency { matmul, attention, gemm_half_dim, attention_half_seq };
                    let hardware = with_constants(opts.hardware, e);
                    let full = evaluate(&w, &hw, &layout, &ExtendedOptions { hardware, ..opts }).unwrap();
                    assert_eq!(plan.time_s(e).unwrap().to_bits(), full.totals.t.to_bits(), "{e:?}");
                }
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
