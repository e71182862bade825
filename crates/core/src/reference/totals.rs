//! Totals of one training iteration (spec §6): time, its components, memory and FLOPs per device.

use super::block::BlockSums;
use crate::vocab::Totals;

/// The iteration-level inputs of [`totals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IterationShape {
    /// Transformer blocks `D`.
    pub depth: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Data-parallel degree.
    pub dp: u64,
    /// Context-parallel degree that also shards the optimizer (`tp2` for 2d-seqp, else 1).
    pub seqp: u64,
    /// Micro-batches per iteration `nmb`.
    pub microbatches: u64,
}

/// Totals of one iteration from one block's sums, `t_dp` and `t_pp` [s] (spec §6, with the
/// evaluation order of Appendix B.3).
pub fn totals(s: &BlockSums, t_dp: f64, t_pp: f64, it: &IterationShape) -> Totals {
    let (m, a) = (&s.mlp, &s.attention);
    let blocks = (it.depth / it.pp.max(1)) as f64;
    let nmb = it.microbatches as f64;
    let per_iteration = |mlp_f: f64, mlp_b: f64, sa_f: f64, sa_b: f64| (mlp_f + mlp_b + sa_f + sa_b) * nmb * blocks;

    let flops_per_gpu = (m.flops_fwd + m.flops_bwd + a.flops_fwd + a.flops_bwd) * blocks * nmb;
    let mut t = ((m.t_fwd + a.t_fwd) + (m.t_bwd + a.t_bwd)) * nmb;
    t *= blocks;
    t += t_pp;
    // Quirk Q7: the bubble is priced on compute plus pipeline communication.
    let bubble = (it.pp.saturating_sub(1)) as f64 * (t / nmb);
    t += bubble;
    t += t_dp;

    // Quirk Q8: gradients are not sharded; optimizer states (12 bytes per parameter = 6× the fp16
    // weights) are sharded over dp (and the context-parallel group); 1F1B keeps min(pp, nmb)
    // micro-batches of activations on every stage; no recomputation outside flash attention.
    let wts = (m.weights + a.weights) * blocks;
    let wts_grad = wts;
    let opt = 6.0 * wts / (it.dp * it.seqp) as f64;
    let in_flight = if it.microbatches >= it.pp { it.pp } else { it.microbatches };
    let mut acts = (m.activations + a.activations) * blocks;
    acts *= in_flight as f64;
    let mem = wts + wts_grad + opt + acts;

    let t_tp_comm = per_iteration(m.t_fwd_comm, m.t_bwd_comm, a.t_fwd_comm, a.t_bwd_comm);
    let t_comp = per_iteration(m.t_fwd_comp, m.t_bwd_comp, a.t_fwd_comp, a.t_bwd_comp);
    let t_mem = per_iteration(m.t_fwd_mem, m.t_bwd_mem, a.t_fwd_mem, a.t_bwd_mem);
    Totals {
        t,
        flops_per_gpu,
        mem,
        t_comp,
        t_mem,
        t_tp_comm,
        t_dp_comm: t_dp,
        t_pp_comm: t_pp,
        t_bubble: bubble,
        // The published model has no experts: no expert-parallel all-to-all.
        t_ep_comm: 0.0,
        comp_frac: t_comp / t,
        tp_comm_frac: t_tp_comm / t,
        dp_comm_frac: t_dp / t,
        pp_comm_frac: t_pp / t,
        bubble_frac: bubble / t,
        mem_frac: t_mem / t,
        wts_mem: wts,
        wts_grad_mem: wts_grad,
        wts_optimizer_states_mem: opt,
        acts_mem: acts,
    }
}
