//! Data parallelism by ZeRO stage (and FSDP, which is ZeRO-3): which collectives move the
//! parameters and gradients, how often, over which group, and how much of them compute hides.
//!
//! Overlap rule (the reference's, spec §5.1, applied to each pattern): collectives are issued per
//! block and overlap with the compute of the neighbouring block in the same pass, so of `n` blocks
//! the first block's collective is exposed in full and each other block exposes only the part
//! longer than one block's pass: `c + (n − 1)·max(c − t_block, 0)`. Without
//! [`ExtendedOptions::dp_overlap`] the once-per-iteration collectives of ZeRO-0/1/2 (and the
//! cross-group all-reduce of hybrid sharding) run as one collective of the stage's whole volume
//! after the backward (gradients) or after the optimizer step (parameters), exposed in full.
//!
//! Patterns (parameters gathered in the stored 16-bit type, the linear layers' weights in FP8 where
//! the FP8 recipe keeps or gathers them so, [`super::options::Fp8Recipe::gathers_fp8`]; gradients
//! reduced at the width of
//! [`ExtendedOptions::grad_reduce`]: by default FP32 for BF16 training — Megatron-LM sets
//! `accumulate_allreduce_grads_in_fp32` whenever `--bf16` is given, torchtitan's FSDP2 policy has
//! `reduce_dtype=float32` — and FP16 for FP16 training and for pure-BF16 runs without master
//! weights):
//! * ZeRO-0: one all-reduce of the gradients per iteration, overlapped with the last micro-batch's
//!   backward;
//! * ZeRO-1/2: a reduce-scatter of the gradients (last backward) and an all-gather of the updated
//!   parameters (overlapped with the next forward) per iteration; with a shard group smaller than
//!   the replica group (hierarchical ZeRO: InternLM's `zero1` size, "optimizer states sharded
//!   within groups of 8 ranks, replicated across groups"; PyTorch FSDP's `_HYBRID_SHARD_ZERO2`)
//!   the reduce-scatter and the all-gather run inside the group and each gradient shard is also
//!   all-reduced across the groups, behind the same backward. The volume crossing the network is
//!   the same as the flat pattern's; what differs is the latency NCCL pays
//!   ([`super::latency`]): a flat ring over `n` ranks takes `n − 1` steps per call, the groups'
//!   rings `z − 1` steps over the scale-up links and the cross-group all-reduce a tree of
//!   `log2(nodes)` network steps — at 1,024 A100s (128 nodes of 8) 4.3 ms against ≈ 1.1 ms per
//!   bucket with the Simple protocol;
//! * the gradients' reduction of ZeRO-0/1/2, bucketed behind the backward, is one collective per
//!   block, or on a stack whose DDP buckets are smaller than a block (nanotron's 25 MiB,
//!   [`super::stack::Stack::gradient_buckets_per_block`]) `k` collectives of `1/k` of it, each
//!   paying NCCL's latency over the whole replica group: what makes a data-parallel group of many
//!   ranks slow on a fabric of long network steps (EFA, [`crate::catalog::fabric::EFA_NCCL_STEP_S`]);
//! * ZeRO-2 under gradient accumulation: as ZeRO-1, but the gradients are reduced behind every
//!   micro-batch's backward, not once per step. A ZeRO-2 rank keeps only the gradient shard it owns,
//!   so it cannot accumulate the full gradient over the micro-batches; each micro-batch's gradients
//!   are reduced to their owners as the backward produces them and the owner accumulates its shard.
//!   DeepSpeed's engine (`allreduce_gradients`, runtime/engine.py): "ZeRO stage >= 2 communicates
//!   during non gradient accumulation boundaries as well", stage 1 "only at gradient accumulation
//!   boundaries"; Megatron-LM's Megatron-FSDP test (tests/unit_tests/distributed/mfsdp_v2/
//!   test_overlap.py): "ZeRO-1 reduces only the second microbatch, while ZeRO-2 reduces both"; Paddle's
//!   `GroupShardedStage2` reduces each gradient to its owner from the backward hooks of every
//!   micro-batch. The parameters are still all-gathered once per step and a hybrid group's
//!   cross-group all-reduce still runs once ("HSDP reduce-scatters DP-inner every microbatch but
//!   all-reduces DP-outer once", the same test file). With `m` micro-batches a ZeRO-2 step moves
//!   `m` times ZeRO-1's gradient volume. Not where the stack's schedule defers the gradient sync
//!   to the last micro-batch (Megatron-Core's `no_sync_func`, PyTorch's pipeline schedules with
//!   FSDP: [`super::stack::Stack::zero2_reduces_every_microbatch`]), which prices as ZeRO-1;
//! * ZeRO-1 on a stack whose optimizer step gathers the parameters itself
//!   ([`super::stack::Stack::zero1_gathers_in_optimizer_step`]: nanotron's
//!   `ZeroDistributedOptimizer`): the gradients reduce-scattered as above, and the updated 16-bit
//!   parameters all-gathered by one blocking collective of the whole stage's volume after the
//!   step, exposed in full whatever the overlap;
//! * ZeRO-1/2 with [`ExtendedOptions::param_broadcast`] (InternLM's hybrid ZeRO optimizer and
//!   Colossal-AI's low-level ZeRO it derives from): the gradients all-reduced over the whole
//!   replica group (bucketed behind the backward, as ZeRO-0), and after the optimizer step each of
//!   the `z` owners of a shard broadcasts its `1/z` of the updated 16-bit parameters over the shard
//!   group — `z` ring broadcasts in a row, each paying NCCL's latency of a ring over `z` ranks, so
//!   the latency grows as `z·(z − 1)` steps while the volume stays that of one all-gather. This is
//!   what separates InternLM's ZeRO-1 over all ranks from its ZeRO-1 within a node at scale (its
//!   published throughput table, `measured-layout-sweeps.json`): at 1,024 A100s the 1,024
//!   broadcasts of 14 MB each cost ≈ 1.4 ms apiece (LL protocol, 896 NVLink and 127 network steps),
//!   ≈ 1.5 s per step against 8 broadcasts inside the node;
//! * ZeRO-3/FSDP: per micro-batch, an all-gather of each block's parameters before its forward,
//!   another before its backward (serving the recomputed forward too) and a reduce-scatter of its
//!   gradients; with a shard group smaller than the replica group (hybrid sharding) the gradient
//!   shards are also all-reduced across groups once per iteration.
//!
//! The replica group is `dp·cp` (context-parallel ranks hold the same weights); its fast share is
//! `nv_dp·nv_cp`. A shard group holds the innermost `z` of those ranks. On torus parts (TPU) a
//! ZeRO-3/FSDP group without a stated size shards inside the ICI slice and replicates across
//! slices (MaxText's defaults `ici_fsdp_parallelism = -1`, `dcn_data_parallelism = -1`): sharded
//! data parallelism never runs its per-block gathers over the data-centre network.
//!
//! Collectives of groups spanning several fast domains use every NIC of a domain at once (the
//! two-tier ring's case 9), for ZeRO-3/FSDP as for ZeRO-1/2: NCCL builds one ring or tree channel
//! per NIC (rail) for all-gathers and reduce-scatters alike, so the per-block gathers of FSDP are
//! not limited to one NIC per device. [`crate::extended::HardwareChoices::zero3_per_nic`] keeps
//! the former one-NIC pricing as an option.

use super::hardware::Hardware;
use super::layout::Layout;
use super::options::{ExtendedOptions, Sharding};
use super::pricing::Pricing;
use crate::Error;
use crate::vocab::CollectiveKind;

/// Bytes of one gradient element kept between the backward pass and the optimizer (FP32 main
/// gradients) [B].
pub const GRADIENT_BYTES: f64 = 4.0;

/// The data-parallel groups of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DpGroups {
    /// Ranks holding the same weights `dp·cp` [devices].
    pub replicas: u64,
    /// Their fast-domain share [devices].
    pub replicas_fast: u64,
    /// Shard group `z` (= `replicas` unless hybrid) [devices]: ZeRO-3's parameter shards, and the
    /// optimizer (and ZeRO-2 gradient) shards of ZeRO-1/2.
    pub shard: u64,
    /// Its fast-domain share [devices].
    pub shard_fast: u64,
    /// ZeRO-2's gradient reduction deferred to the last micro-batch's backward, as ZeRO-1's: the
    /// stack's pipeline schedule accumulates the gradients unsharded
    /// ([`super::stack::Stack::zero2_reduces_every_microbatch`]).
    pub gradient_sync_deferred: bool,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl DpGroups {
    /// The groups of `layout` under `opts` (the shard group of ZeRO-1/2/3 must divide `dp·cp`;
    /// plain data parallelism shards nothing and ignores it).
    pub fn of(layout: &Layout, opts: &ExtendedOptions) -> Result<DpGroups, Error> {
        let replicas = layout.dp * layout.cp;
        let replicas_fast = layout.placement.dp * layout.placement.cp;
        let shard = match (opts.sharding, opts.shard_group) {
            (Sharding::Zero1 | Sharding::Zero2 | Sharding::Zero3, Some(z)) => {
                if z == 0 || !replicas.is_multiple_of(z) {
                    return Err(Error::invalid(
                        "shard_group",
                        z,
                        format!("must divide the replica group dp·cp = {replicas}"),
                    ));
                }
                z
            }
            _ => replicas,
        };
        Ok(DpGroups {
            replicas,
            replicas_fast,
            shard,
            shard_fast: gcd(shard, replicas_fast),
            gradient_sync_deferred: !opts.stack.zero2_reduces_every_microbatch(layout.pp),
        })
    }

    /// The groups of `layout` under `opts` on `hw`: [`Self::of`], except that on a torus part a
    /// ZeRO-3/FSDP group of unstated size shards inside the fast (ICI) domain (module docs).
    pub fn on(layout: &Layout, opts: &ExtendedOptions, hw: &Hardware) -> Result<DpGroups, Error> {
        let mut g = DpGroups::of(layout, opts)?;
        if hw.torus && opts.sharding == Sharding::Zero3 && opts.shard_group.is_none() {
            g.shard = g.replicas_fast.max(1);
            g.shard_fast = g.shard;
        }
        Ok(g)
    }

    /// Shard groups per replica group (1 unless hybrid).
    pub fn shard_groups(&self) -> u64 {
        self.replicas / self.shard
    }
}

/// Bytes per gradient element in the data-parallel reduction [B] (see
/// [`ExtendedOptions::grad_reduce`]; [`Pricing::grad_element_bytes`], which the MoE experts'
/// main gradient reads too).
pub fn grad_reduce_bytes(hw: &Hardware, opts: &ExtendedOptions) -> f64 {
    Pricing { hw, opts }.grad_element_bytes()
}

/// Exposed data-parallel time.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct DpCost {
    /// Exposed per micro-batch on the device timeline (ZeRO-2's gradient reduction, ZeRO-3's
    /// gathers and reduction) [s].
    pub per_microbatch_s: f64,
    /// Exposed once per iteration [s].
    pub per_iteration_s: f64,
}

/// `c + (n − 1)·max(c − t, 0)`: exposed time of `n` per-block collectives of `c` seconds each
/// overlapping blocks of `t` seconds.
pub fn overlapped(c: f64, t_block: f64, n: u64) -> f64 {
    if n == 0 || c <= 0.0 {
        return 0.0;
    }
    c + (n - 1) as f64 * (c - t_block).max(0.0)
}

/// Prices data parallelism for a device holding `blocks` blocks and `parameters` parameters in
/// total (blocks plus embedding/head; spread evenly over the blocks), whose blocks take `t_fwd` and
/// `t_bwd` (with recomputation) seconds per micro-batch.
pub fn data_parallel_cost(
    groups: &DpGroups,
    p: &Pricing,
    blocks: u64,
    parameters: f64,
    t_fwd: f64,
    t_bwd: f64,
) -> DpCost {
    dp_collectives(groups, p, blocks, parameters, 0.0).exposed(t_fwd, t_bwd)
}

/// The data-parallel collectives of a device ([`data_parallel_cost`]) priced, before compute
/// hides them ([`DpCollectives::exposed`]): they read no compute rate, so a fit pricing one
/// configuration at many rates prices them once ([`super::timing`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DpCollectives {
    /// The blocks whose passes hide them (0: nothing to price).
    blocks: u64,
    sharding: Sharding,
    /// Bucketed behind the blocks' passes ([`ExtendedOptions::dp_overlap`]).
    overlap: bool,
    /// ZeRO-1/2's parameters shared by broadcasts ([`ExtendedOptions::param_broadcast`]).
    broadcast: bool,
    /// ZeRO-1's parameter all-gather run inside the optimizer step, whole and exposed
    /// ([`super::stack::Stack::zero1_gathers_in_optimizer_step`]).
    gather_in_step: bool,
    /// Seconds: ZeRO-0 the gradient all-reduce; ZeRO-1/2 the gradient reduce-scatter and the
    /// parameter all-gather (inside the shard group) and the cross-group all-reduce, or with
    /// broadcasts the gradient all-reduce and the owners' broadcasts (all of them); ZeRO-3 the
    /// per-block gather and reduce-scatter and the cross-group all-reduce (0 without hybrid
    /// sharding). A once-per-iteration collective is per block with
    /// overlap, of the whole stage's volume without.
    seconds: [f64; 3],
}

/// The collectives of a device holding `blocks` blocks and `parameters` parameters
/// ([`data_parallel_cost`]), `linear_parameters` of them in the blocks' linear layers: under an
/// FP8 recipe that gathers FP8 weights ([`super::options::Fp8Recipe::gathers_fp8`]) those are
/// all-gathered at 1 B each, the rest (norms, embedding, head) at the stored 16-bit width.
/// [`data_parallel_cost`] gathers every parameter at 16 bits (the MoE blocks' pricing).
pub fn dp_collectives(
    groups: &DpGroups,
    p: &Pricing,
    blocks: u64,
    parameters: f64,
    linear_parameters: f64,
) -> DpCollectives {
    let (sharding, overlap, broadcast) = (p.opts.sharding, p.opts.dp_overlap, p.opts.param_broadcast);
    let sharding =
        if groups.gradient_sync_deferred && sharding == Sharding::Zero2 { Sharding::Zero1 } else { sharding };
    let gather_in_step = sharding == Sharding::Zero1 && !broadcast && p.opts.stack.zero1_gathers_in_optimizer_step();
    if groups.replicas <= 1 || blocks == 0 {
        return DpCollectives { blocks: 0, sharding, overlap, broadcast, gather_in_step, seconds: [0.0; 3] };
    }
    let per_block = parameters / blocks as f64;
    let fp8_gathered = if p.opts.fp8_recipe.gathers_fp8() { linear_parameters.clamp(0.0, parameters) } else { 0.0 };
    // (`operand_bytes` is 1 at FP8 and the element width otherwise: nothing changes off FP8.)
    let narrowing = (p.hw.element_bytes - p.hw.operand_bytes).max(0.0);
    let params_gb = (per_block * p.hw.element_bytes - fp8_gathered / blocks as f64 * narrowing) * 1e-9;
    let grads_gb = per_block * grad_reduce_bytes(p.hw, p.opts) * 1e-9;
    let (r, rf) = (groups.replicas, groups.replicas_fast);
    let c = |kind, v, g, s| p.collective(kind, v, g, s);
    // ZeRO-3 collectives of a group spanning domains: each device through its own NIC (spec §2.4
    // case 7) unless switched off; a group inside one domain stays fast.
    // A stack that combines and prefetches them (XLA) drives every NIC ([`super::stack::Stack::zero3_one_nic_per_device`]).
    let one_nic = p.opts.hardware.zero3_per_nic && p.opts.stack.zero3_one_nic_per_device();
    let per_nic = |g: u64, s: u64| if one_nic && s < g { 1 } else { s };
    // A once-per-iteration collective of `v` per block: bucketed behind the blocks' passes, or
    // (no overlap) one collective of the whole stage's volume after them, exposed in full.
    let once = |kind, v: f64, g, s| if overlap { c(kind, v, g, s) } else { c(kind, v * blocks as f64, g, s) };
    // The gradients' reduction of a block, bucketed behind its backward: one collective, or the
    // `k` buckets of the stack's DDP ([`super::stack::Stack::gradient_buckets_per_block`]), each
    // a collective of `1/k` of the block's gradients paying its own NCCL latency.
    let k = if overlap { p.opts.stack.gradient_buckets_per_block(per_block * p.hw.element_bytes) } else { 1.0 };
    let reduce = |kind, g, s| if k > 1.0 { k * c(kind, grads_gb / k, g, s) } else { once(kind, grads_gb, g, s) };
    // The parameters' all-gather: bucketed as `once`, or one collective of the stage's whole
    // volume where the optimizer step runs it.
    let gather = |v: f64, g, s| {
        if gather_in_step {
            c(CollectiveKind::AllGather, v * blocks as f64, g, s)
        } else {
            once(CollectiveKind::AllGather, v, g, s)
        }
    };
    // Hybrid sharding: the gradient shards all-reduced across the shard groups, once per
    // iteration (one rank of each group per shard; 0 without hybrid sharding).
    let across = groups.shard_groups();
    let cross = if across > 1 {
        let fast = gcd(across, rf / groups.shard_fast.max(1));
        once(CollectiveKind::AllReduce, grads_gb / groups.shard as f64, across, fast)
    } else {
        0.0
    };
    let seconds = match sharding {
        Sharding::Ddp => [reduce(CollectiveKind::AllReduce, r, rf), 0.0, 0.0],
        // One broadcast of each owner's shard of the whole stage's parameters, `z` in a row.
        Sharding::Zero1 | Sharding::Zero2 if broadcast => {
            let (z, zf) = (groups.shard, groups.shard_fast);
            let shard_gb = params_gb * blocks as f64 / z as f64;
            [
                once(CollectiveKind::AllReduce, grads_gb, r, rf),
                z as f64 * c(CollectiveKind::Broadcast, shard_gb, z, zf),
                0.0,
            ]
        }
        // Sharded over the whole replica group: exactly as before the shard group was read.
        Sharding::Zero1 | Sharding::Zero2 if across <= 1 => {
            [reduce(CollectiveKind::ReduceScatter, r, rf), gather(params_gb, r, rf), 0.0]
        }
        Sharding::Zero1 | Sharding::Zero2 => {
            let (z, zf) = (groups.shard, groups.shard_fast);
            [once(CollectiveKind::ReduceScatter, grads_gb, z, zf), gather(params_gb, z, zf), cross]
        }
        Sharding::Zero3 => {
            let (z, zf) = (groups.shard, per_nic(groups.shard, groups.shard_fast));
            [c(CollectiveKind::AllGather, params_gb, z, zf), c(CollectiveKind::ReduceScatter, grads_gb, z, zf), cross]
        }
    };
    DpCollectives { blocks, sharding, overlap, broadcast, gather_in_step, seconds }
}

impl DpCollectives {
    /// What the blocks' passes of `t_fwd` and `t_bwd` seconds per micro-batch leave exposed.
    pub fn exposed(&self, t_fwd: f64, t_bwd: f64) -> DpCost {
        let blocks = self.blocks;
        if blocks == 0 {
            return DpCost::default();
        }
        let once = |c: f64, t_block: f64| if self.overlap { overlapped(c, t_block, blocks) } else { c };
        let [a, b, cross] = self.seconds;
        match self.sharding {
            Sharding::Ddp => DpCost { per_microbatch_s: 0.0, per_iteration_s: once(a, t_bwd) },
            // The owners' broadcasts follow the optimizer step, exposed in full.
            Sharding::Zero1 if self.broadcast => DpCost { per_microbatch_s: 0.0, per_iteration_s: once(a, t_bwd) + b },
            // ZeRO-2 reduces its gradients behind every micro-batch's backward.
            Sharding::Zero2 if self.broadcast => DpCost { per_microbatch_s: once(a, t_bwd), per_iteration_s: b },
            // Hierarchical ZeRO-1: each bucket's reduce-scatter inside its group, then the
            // all-reduce of its shard across groups, on the same stream behind the same backward.
            // Gathered inside the optimizer step: after it, before the next forward, in full.
            Sharding::Zero1 if self.gather_in_step => {
                DpCost { per_microbatch_s: 0.0, per_iteration_s: once(a + cross, t_bwd) + b }
            }
            Sharding::Zero1 => {
                DpCost { per_microbatch_s: 0.0, per_iteration_s: once(a + cross, t_bwd) + once(b, t_fwd) }
            }
            // ZeRO-2: the reduce-scatter inside the group behind every micro-batch's backward;
            // the cross-group all-reduce and the parameters' all-gather once per step.
            Sharding::Zero2 => {
                DpCost { per_microbatch_s: once(a, t_bwd), per_iteration_s: once(cross, t_bwd) + once(b, t_fwd) }
            }
            Sharding::Zero3 => {
                let (gather, scatter) = (a, b);
                let per_mb = overlapped(gather, t_fwd, blocks) + overlapped(gather + scatter, t_bwd, blocks);
                // Without hybrid sharding `cross` is 0, which exposes nothing.
                DpCost { per_microbatch_s: per_mb, per_iteration_s: once(cross, t_bwd) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::hardware::Hardware;

    #[test]
    fn overlap_rule() {
        assert_eq!(overlapped(1.0, 2.0, 10), 1.0);
        assert_eq!(overlapped(3.0, 2.0, 10), 3.0 + 9.0);
        assert_eq!(overlapped(3.0, 2.0, 0), 0.0);
    }

    #[test]
    fn without_overlap_the_reduction_is_exposed_as_one_collective() {
        // 64 replicas, 8 per domain, 32 blocks of 7e9/32 parameters, ZeRO-0: FP32 gradients.
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let on = ExtendedOptions { sharding: Sharding::Ddp, ..ExtendedOptions::realistic() };
        let off = ExtendedOptions { dp_overlap: false, ..on };
        let g = DpGroups::of(&layout, &on).unwrap();
        let cost = |o: &ExtendedOptions, t: f64| data_parallel_cost(&g, &Pricing { hw: &hw, opts: o }, 32, 7e9, t, t);
        let p = Pricing { hw: &hw, opts: &on };
        let whole = p.collective(CollectiveKind::AllReduce, 7e9 * 4.0 * 1e-9, 64, 8);
        let block = p.collective(CollectiveKind::AllReduce, 7e9 / 32.0 * 4.0 * 1e-9, 64, 8);
        // Off: the whole 28 GB all-reduced once, whatever the compute.
        let near = |a: f64, b: f64| (a - b).abs() < 1e-12 * b;
        assert!(near(cost(&off, 1.0).per_iteration_s, whole));
        assert!(near(cost(&off, 0.0).per_iteration_s, whole));
        // On: behind blocks longer than a block's collective only the first is exposed.
        assert!(near(cost(&on, 1.0).per_iteration_s, block));
        assert!(cost(&on, 0.0).per_iteration_s > whole);
    }

    #[test]
    fn zero3_gathers_every_microbatch_and_hybrid_groups() {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let z1 = ExtendedOptions { sharding: Sharding::Zero1, ..ExtendedOptions::realistic() };
        let z3 = ExtendedOptions { sharding: Sharding::Zero3, ..ExtendedOptions::realistic() };
        let g1 = DpGroups::of(&layout, &z1).unwrap();
        assert_eq!((g1.replicas, g1.replicas_fast, g1.shard), (64, 8, 64));
        let cost = |o: &ExtendedOptions| {
            let g = DpGroups::of(&layout, o).unwrap();
            data_parallel_cost(&g, &Pricing { hw: &hw, opts: o }, 32, 7e9, 0.0, 0.0)
        };
        let c1 = cost(&z1);
        let c3 = cost(&z3);
        assert_eq!(c1.per_microbatch_s, 0.0);
        assert!(c1.per_iteration_s > 0.0);
        // Nothing hides (zero compute): ZeRO-3 moves two gathers and one scatter per micro-batch,
        // ZeRO-1 one of each per iteration.
        assert!(c3.per_microbatch_s > c1.per_iteration_s);
        let hybrid = ExtendedOptions { shard_group: Some(8), ..z3 };
        let gh = DpGroups::of(&layout, &hybrid).unwrap();
        assert_eq!((gh.shard, gh.shard_fast, gh.shard_groups()), (8, 8, 8));
        let ch = cost(&hybrid);
        assert!(ch.per_microbatch_s < c3.per_microbatch_s && ch.per_iteration_s > 0.0);
        let bad = ExtendedOptions { shard_group: Some(6), ..z3 };
        assert_eq!(DpGroups::of(&layout, &bad).unwrap_err().field(), Some("shard_group"));
    }

    #[test]
    fn xla_and_megatron_fsdp_gathers_use_every_nic_of_a_node() {
        // FSDP over 64 H200s, 8 per domain, 32 blocks of 7e9/32 parameters, nothing to hide behind
        // (35 GB/s per NIC after the reference's 0.7, one NIC per GPU, 315 GB/s NVLink): a block's
        // 16-bit gather of 437.5 MB moves 63/64 of it. One NIC per device (DeepSpeed's
        // per-parameter gathers): 0.4307 GB / 35 GB/s = 12.30 ms. The jax, megatron (Megatron-FSDP)
        // and fsdp (PyTorch FSDP's flat parameter) stacks: the domain's 8 NICs at once, 0.4307 / (8 · 35) = 1.538 ms (the NVLink side,
        // 0.4307 / 315 = 1.367 ms, is not the limit); NCCL's latency on top of both (`latency.rs`).
        use super::super::Stack;
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let fsdp = ExtendedOptions { sharding: Sharding::Zero3, stack: Stack::Fsdp, ..ExtendedOptions::realistic() };
        let jax = ExtendedOptions { stack: Stack::Jax, ..fsdp };
        let megatron = ExtendedOptions { stack: Stack::Megatron, ..fsdp };
        let deepspeed = ExtendedOptions { stack: Stack::DeepSpeed, ..fsdp };
        let g = DpGroups::of(&layout, &fsdp).unwrap();
        let gather = |o: &ExtendedOptions| dp_collectives(&g, &Pricing { hw: &hw, opts: o }, 32, 7e9, 0.0).seconds[0];
        let gb = 7e9 / 32.0 * 2.0 * 1e-9 * 63.0 / 64.0;
        let (bs, nics) = (hw.net.slow_bandwidth, hw.net.nic_factor);
        assert!((bs - 35.0).abs() < 1e-9 && nics == 1.0, "{bs} GB/s, {nics} NICs per GPU");
        use crate::extended::latency::{Span, collective_s};
        let latency = |t: f64| collective_s(CollectiveKind::AllGather, Span::of(64, 8), t);
        let one_nic = collective_s(CollectiveKind::AllGather, Span::of(64, 1), gb / bs);
        assert!((gather(&deepspeed) - one_nic).abs() < 1e-12, "{} vs {one_nic}", gather(&deepspeed));
        assert!((gather(&jax) - latency(gb / (8.0 * bs))).abs() < 1e-12, "{}", gather(&jax));
        assert!((gb / (8.0 * bs) - 1.538e-3).abs() < 1e-6 && (gb / bs - 12.30e-3).abs() < 1e-5);
        assert_eq!(gather(&megatron), gather(&jax));
        assert_eq!(gather(&fsdp), gather(&jax));
        assert!(gather(&deepspeed) > 7.0 * gather(&jax));
        // With the one-NIC rule switched off DeepSpeed prices as XLA does.
        let off = ExtendedOptions {
            hardware: crate::extended::HardwareChoices { zero3_per_nic: false, ..deepspeed.hardware },
            ..deepspeed
        };
        assert_eq!(gather(&off), gather(&jax));
    }

    #[test]
    fn fp8_primary_weights_are_gathered_in_fp8_by_hand() {
        // Megatron-FSDP over 64 H200s at FP8 (8 per domain: the domain's 8 NICs, 280 GB/s, are
        // the limit), 32 blocks of 7e9/32 parameters, 6.3e9 of them in linear layers. With FP8
        // primary weights a block's gather moves (7e9·2 − 6.3e9·1)/32 = 0.240625 GB instead of
        // 0.4375 GB, 63/64 of it: 0.8459 ms against 1.538 ms, NCCL's latency on top; the
        // gradients' reduce-scatter is unchanged, and off FP8 nothing changes.
        use crate::extended::latency::{Span, collective_s};
        use crate::extended::options::Fp8Recipe;
        let bf16 = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let fp8 = Hardware { operand_bytes: 1.0, ..bf16.clone() };
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let te = ExtendedOptions { sharding: Sharding::Zero3, ..ExtendedOptions::realistic() };
        let weights = ExtendedOptions { fp8_recipe: Fp8Recipe::TransformerEngineFp8Weights, ..te };
        let g = DpGroups::of(&layout, &te).unwrap();
        let seconds =
            |hw: &Hardware, o: &ExtendedOptions| dp_collectives(&g, &Pricing { hw, opts: o }, 32, 7e9, 6.3e9).seconds;
        let gather = |gb: f64| collective_s(CollectiveKind::AllGather, Span::of(64, 8), gb * 63.0 / 64.0 / 280.0);
        assert!((0.240625_f64 * 63.0 / 64.0 / 280.0 - 0.8459e-3).abs() < 1e-7);
        assert!(near(seconds(&fp8, &weights)[0], gather(0.240625)), "{:?}", seconds(&fp8, &weights));
        assert!(near(seconds(&fp8, &te)[0], gather(0.4375)));
        assert_eq!(seconds(&fp8, &weights)[1], seconds(&fp8, &te)[1]);
        assert_eq!(seconds(&bf16, &weights), seconds(&bf16, &te));
        // torchao's FSDP float8 all-gather likewise.
        let torchao = ExtendedOptions { fp8_recipe: Fp8Recipe::TorchaoFp8AllGather, ..te };
        assert_eq!(seconds(&fp8, &torchao)[0], seconds(&fp8, &weights)[0]);
    }

    /// 7e9 parameters in 32 blocks on 64 replicas of H200, 8 per domain (35 GB/s per NIC, 315 GB/s
    /// NVLink after the reference's 0.7), nothing to hide behind: FP32 gradients of 28 GB and
    /// 16-bit parameters of 14 GB.
    fn zero1_64(o: ExtendedOptions, t: f64) -> DpCost {
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let g = DpGroups::of(&layout, &o).unwrap();
        data_parallel_cost(&g, &Pricing { hw: &hw, opts: &o }, 32, 7e9, t, t)
    }

    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    #[test]
    fn hierarchical_zero1_reduces_inside_the_node_and_across_groups() {
        let flat = ExtendedOptions { sharding: Sharding::Zero1, dp_overlap: false, ..ExtendedOptions::realistic() };
        let hier = ExtendedOptions { shard_group: Some(8), ..flat };
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let g = DpGroups::of(&layout, &hier).unwrap();
        assert_eq!((g.shard, g.shard_fast, g.shard_groups()), (8, 8, 8));
        // Plain data parallelism shards nothing: the group is ignored.
        let ddp = ExtendedOptions { sharding: Sharding::Ddp, ..hier };
        assert_eq!(DpGroups::of(&layout, &ddp).unwrap().shard, 64);
        let bad = ExtendedOptions { shard_group: Some(6), ..hier };
        assert_eq!(DpGroups::of(&layout, &bad).unwrap_err().field(), Some("shard_group"));
        // Flat (case 9, 8 rings leave a domain): reduce-scatter 63/64·28/280 s and all-gather
        // 63/64·14/280 s, each with NCCL's Simple ring over 64 ranks in 8 nodes: 8.4 + 56·3.4 +
        // 7·9.6 = 266 µs.
        let flat_s = 63.0 / 64.0 * (28.0 + 14.0) / 280.0 + 2.0 * 266e-6;
        assert!(near(zero1_64(flat, 0.0).per_iteration_s, flat_s), "{:?}", zero1_64(flat, 0.0));
        // Hierarchical: reduce-scatter inside the node, 7/8·28/315 s + (8.4 + 7·3.4) µs; the
        // 3.5 GB shard all-reduced across 8 groups, one rank per node on its own NIC,
        // 2·7/8·3.5/35 s + the Simple ring's 8.4 + 14·9.6 µs (the tree's 2·3·50 µs is more); the
        // all-gather inside the node, 7/8·14/315 s + 32.2 µs.
        let hier_s = 7.0 / 8.0 * 28.0 / 315.0
            + 32.2e-6
            + 2.0 * 7.0 / 8.0 * 3.5 / 35.0
            + 142.8e-6
            + 7.0 / 8.0 * 14.0 / 315.0
            + 32.2e-6;
        assert!(near(zero1_64(hier, 0.0).per_iteration_s, hier_s), "{:?}", zero1_64(hier, 0.0));
    }

    #[test]
    fn zero2_reduces_every_microbatch_zero1_once_by_hand() {
        // The 64-replica case of the test above, flat (no shard group), nothing to hide behind.
        // Both stages price one reduce-scatter of the 28 GB of FP32 gradients, 63/64·28/280 s, and
        // one all-gather of the 14 GB of parameters, 63/64·14/280 s, each with NCCL's Simple ring
        // latency over 64 ranks in 8 nodes, 266 µs. ZeRO-1 runs both once per step; ZeRO-2 runs
        // the reduce-scatter behind every micro-batch's backward.
        let z1 = ExtendedOptions {
            sharding: Sharding::Zero1,
            dp_overlap: false,
            stack: super::super::Stack::DeepSpeed,
            ..ExtendedOptions::realistic()
        };
        let z2 = ExtendedOptions { sharding: Sharding::Zero2, ..z1 };
        let (scatter, gather) = (63.0 / 64.0 * 28.0 / 280.0 + 266e-6, 63.0 / 64.0 * 14.0 / 280.0 + 266e-6);
        let c1 = zero1_64(z1, 0.0);
        assert!(c1.per_microbatch_s == 0.0 && near(c1.per_iteration_s, scatter + gather), "{c1:?}");
        let c2 = zero1_64(z2, 0.0);
        assert!(near(c2.per_microbatch_s, scatter) && near(c2.per_iteration_s, gather), "{c2:?}");
        // Over 16 micro-batches ZeRO-2 moves 16 reduce-scatters: 16·0.09870 + 0.04948 = 1.6287 s
        // against ZeRO-1's 0.14818 s.
        assert!(near(16.0 * c2.per_microbatch_s + c2.per_iteration_s, 16.0 * scatter + gather));
        // Bucketed behind blocks longer than a bucket's reduce-scatter, each micro-batch exposes
        // its first bucket only: 1/32 of the gradients.
        let on = ExtendedOptions { dp_overlap: true, ..z2 };
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let bucket = Pricing { hw: &hw, opts: &on }.collective(CollectiveKind::ReduceScatter, 28.0 / 32.0, 64, 8);
        assert!(near(zero1_64(on, 1.0).per_microbatch_s, bucket));
        // Deferred to the last backward (PyTorch's pipeline schedules with FSDP), ZeRO-2 prices as
        // ZeRO-1: the same 64 replicas behind 2 pipeline stages.
        let fsdp = ExtendedOptions { stack: super::super::Stack::Fsdp, ..z2 };
        let layout = Layout::placed(1, 1, 2, 64, 1, 64, 8);
        let g = DpGroups::of(&layout, &fsdp).unwrap();
        assert!(g.gradient_sync_deferred && !DpGroups::of(&layout, &z2).unwrap().gradient_sync_deferred);
        let cost = |o: &ExtendedOptions| data_parallel_cost(&g, &Pricing { hw: &hw, opts: o }, 32, 7e9, 0.0, 0.0);
        let once = cost(&z1);
        assert!(once.per_microbatch_s == 0.0 && once.per_iteration_s > 0.0);
        assert_eq!(cost(&fsdp), once);
        // Without a pipeline PyTorch FSDP's SHARD_GRAD_OP reduce-scatters every backward.
        let alone = DpGroups::of(&Layout::placed(1, 1, 1, 64, 1, 64, 8), &fsdp).unwrap();
        assert!(!alone.gradient_sync_deferred);
    }

    #[test]
    fn parameter_broadcasts_by_owner_by_hand() {
        let flat = ExtendedOptions {
            sharding: Sharding::Zero1,
            dp_overlap: false,
            param_broadcast: true,
            ..ExtendedOptions::realistic()
        };
        // The gradients all-reduced over the 64 replicas: 2·63/64·28/280 s + the Simple ring's
        // 8.4 + 112·3.4 + 14·9.6 = 523.6 µs (the tree's 2·(7·28 + 3·50) = 692 µs is more). Then
        // 64 broadcasts of 14/64 GB from each owner over all 64 ranks: 0.21875/280 s on the links,
        // with LL128 (15/16 of the bandwidth) and its ring latency 10 + 56·1.9 + 7·4 = 144.4 µs
        // the least of the three protocols.
        let reduce = 2.0 * 63.0 / 64.0 * 28.0 / 280.0 + 523.6e-6;
        let one_broadcast = 144.4e-6 + 14.0 / 64.0 / 280.0 / (15.0 / 16.0);
        let c = zero1_64(flat, 0.0);
        assert!(near(c.per_iteration_s, reduce + 64.0 * one_broadcast), "{c:?}");
        // Inside the node (InternLM's zero1 = 8): 8 broadcasts of 1.75 GB over NVLink,
        // 1.75/315 s + the Simple ring's 8.4 + 7·3.4 µs each.
        let node = ExtendedOptions { shard_group: Some(8), ..flat };
        let c8 = zero1_64(node, 0.0);
        assert!(near(c8.per_iteration_s, reduce + 8.0 * (1.75 / 315.0 + 32.2e-6)), "{c8:?}");
        // Bucketed behind long blocks the gradient reduction hides but for its first bucket; the
        // broadcasts follow the optimizer step and stay exposed.
        let hidden = zero1_64(ExtendedOptions { dp_overlap: true, ..flat }, 1.0);
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let bucket = Pricing { hw: &hw, opts: &flat }.collective(CollectiveKind::AllReduce, 28.0 / 32.0, 64, 8);
        assert!(near(hidden.per_iteration_s, bucket + 64.0 * one_broadcast), "{hidden:?}");
    }

    #[test]
    fn nanotron_reduces_the_gradients_in_ddp_buckets_by_hand() {
        use super::super::Stack;
        // ZeRO-0 over 64 H200s, 8 per domain, nothing to hide behind. 1e9 parameters in 32 blocks:
        // 31.25e6 per block, 62.5 MB of 16-bit gradients, 62.5e6 / 26,214,400 (25 MiB) = 2.3842
        // buckets; their FP32 gradients, 0.125 GB a block, leave as 2.3842 all-reduces of
        // 0.125 / 2.3842 GB each. Megatron's (one per block): one all-reduce of 0.125 GB.
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let layout = Layout::placed(1, 1, 1, 64, 1, 64, 8);
        let mega = ExtendedOptions { sharding: Sharding::Ddp, ..ExtendedOptions::realistic() };
        let nano = ExtendedOptions { stack: Stack::Nanotron, ..mega };
        let g = DpGroups::of(&layout, &mega).unwrap();
        let cost = |o: &ExtendedOptions, params: f64| {
            data_parallel_cost(&g, &Pricing { hw: &hw, opts: o }, 32, params, 0.0, 0.0)
        };
        let p = Pricing { hw: &hw, opts: &mega };
        let k: f64 = 62.5e6 / 26_214_400.0;
        assert!((k - 2.3842).abs() < 1e-4 && (Stack::Nanotron.gradient_buckets_per_block(62.5e6) - k).abs() < 1e-12);
        let bucket = p.collective(CollectiveKind::AllReduce, 0.125 / k, 64, 8);
        let block = p.collective(CollectiveKind::AllReduce, 0.125, 64, 8);
        // Nothing hides: all 32 blocks exposed.
        assert!(near(cost(&nano, 1e9).per_iteration_s, 32.0 * k * bucket), "{:?}", cost(&nano, 1e9));
        assert!(near(cost(&mega, 1e9).per_iteration_s, 32.0 * block));
        // The same bytes, more latency: k buckets pay k latencies.
        assert!(cost(&nano, 1e9).per_iteration_s > cost(&mega, 1e9).per_iteration_s);
        // A block of 7e9/32 parameters (437.5 MB at 16 bits, 16.7 caps) is four buckets, one per
        // weight matrix of nanotron's Llama block; a tiny block is one.
        assert_eq!(Stack::Nanotron.gradient_buckets_per_block(437.5e6), 4.0);
        assert_eq!(Stack::Nanotron.gradient_buckets_per_block(1e6), 1.0);
        assert_eq!(Stack::Megatron.gradient_buckets_per_block(437.5e6), 1.0);
        // Without overlap the stage's gradients leave as one collective on every stack.
        let off = |o: ExtendedOptions| cost(&ExtendedOptions { dp_overlap: false, ..o }, 1e9);
        assert_eq!(off(nano), off(mega));
    }

    #[test]
    fn nanotron_gathers_the_parameters_inside_the_optimizer_step_by_hand() {
        use super::super::Stack;
        // ZeRO-1 over 64 H200s, 8 per domain, 32 blocks of 7e9/32 parameters, blocks of 1 s: long
        // enough to hide every bucket but the first. Megatron's gather is bucketed behind the
        // next forward; nanotron's (`ZeroDistributedOptimizer._all_gather_params`) is one blocking
        // all-gather of all 14 GB of 16-bit parameters after the step. Its links' share by hand:
        // each rank receives 63/64 of 14 GB through the domain's 8 NICs at 35 GB/s each (280 GB/s):
        // 0.0492 s, plus NCCL's latency (well under 1 ms for one collective).
        let mega = ExtendedOptions { sharding: Sharding::Zero1, dp_overlap: true, ..ExtendedOptions::realistic() };
        let nano = ExtendedOptions { stack: Stack::Nanotron, ..mega };
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let p = Pricing { hw: &hw, opts: &mega };
        let rs_bucket = p.collective(CollectiveKind::ReduceScatter, 7.0 / 32.0 * 4.0, 64, 8);
        let ag_bucket = p.collective(CollectiveKind::AllGather, 7.0 / 32.0 * 2.0, 64, 8);
        let ag_whole = p.collective(CollectiveKind::AllGather, 14.0, 64, 8);
        let links = 63.0 / 64.0 * 14.0 / 280.0;
        assert!(ag_whole > links && ag_whole < links + 1e-3, "{ag_whole} against {links}");
        assert!(near(zero1_64(mega, 1.0).per_iteration_s, rs_bucket + ag_bucket));
        // nanotron's block of 437.5 MB of 16-bit gradients is four DDP buckets (one per weight
        // matrix, `Stack::gradient_buckets_per_block`): four reduce-scatters of a quarter each.
        let rs_nano = 4.0 * p.collective(CollectiveKind::ReduceScatter, 7.0 / 32.0 * 4.0 / 4.0, 64, 8);
        assert!(near(zero1_64(nano, 1.0).per_iteration_s, rs_nano + ag_whole));
        // Nothing to hide behind: both expose everything, nanotron still as one gather.
        let bare = zero1_64(nano, 0.0).per_iteration_s;
        assert!(near(bare, overlapped(rs_nano, 0.0, 32) + ag_whole), "{bare}");
        // ZeRO-0 has no gather: the stacks differ by the buckets of the all-reduce alone.
        let ddp = |o: ExtendedOptions| zero1_64(ExtendedOptions { sharding: Sharding::Ddp, ..o }, 1.0);
        let ar = |v: f64| p.collective(CollectiveKind::AllReduce, v, 64, 8);
        assert!(near(ddp(mega).per_iteration_s, ar(7.0 / 32.0 * 4.0)));
        assert!(near(ddp(nano).per_iteration_s, 4.0 * ar(7.0 / 32.0)));
    }
}
