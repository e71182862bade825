//! The devices of an MoE pipeline: the block parts priced once per block shape and expert layout
//! ([`MoeParts`]: the dense block, embedding, head and MTP projection every expert layout shares,
//! and the MoE block of one) and which of them each device holds (first, middle, last, or the
//! only one under 1F1B; the paired stages of DualPipe's ranks, with their micro-batches in flight
//! and DualPipe's bubble). [`super::evaluate`] prices a configuration from them.

use super::block::{MoeBlockCost, moe_block_cost};
use super::counts::{ParameterCounts, parameter_counts};
use super::experts::ExpertLayout;
use crate::extended::block::{BlockCost, block_cost};
use crate::extended::head::{EndCost, embedding_cost, head_cost};
use crate::extended::layout::Layout;
use crate::extended::memory::{first_stage_in_flight, second_stage_in_flight};
use crate::extended::pipeline::{StageSplitRule, split, stage_blocks};
use crate::extended::pricing::{Pass, Pricing};
use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;

/// The costs that depend only on the block-level layout (the evaluator caches them): the parts
/// its block shape shares by every expert layout, and the MoE block of one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeParts {
    shared: SharedParts,
    moe: MoeBlockCost,
}

/// The parts of a block shape that read no expert degrees: the dense block, the ends, the
/// multi-token-prediction projection and the parameter counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedParts {
    pub(super) dense: BlockCost,
    pub(super) embedding: EndCost,
    pub(super) head: EndCost,
    pub(super) mtp_projection: Pass,
    /// Whole-model parameter counts (they depend on the workload alone).
    pub(super) counts: ParameterCounts,
}

/// What the assembly reads of one configuration's parts: its block shape's [`SharedParts`] and
/// its expert layout's MoE block, each where it is held (a search caches the shared parts once
/// per block shape and each MoE block once: a view joins them instead of a copy of the whole
/// parts per block shape and expert layout).
#[derive(Debug, Clone, Copy)]
pub struct MoePartsView<'a> {
    pub shared: &'a SharedParts,
    pub moe: &'a MoeBlockCost,
}

/// Prices the parts of `w` (with experts `m`) under `layout` and its expert layout.
pub fn moe_parts(w: &Workload, m: &MoeShape, layout: &Layout, el: &ExpertLayout, p: &Pricing) -> MoeParts {
    MoeParts { shared: shared_parts(w, layout, p), moe: moe_block_cost(w, m, layout, el, p) }
}

/// The [`SharedParts`] of `w` under `layout` (those of [`moe_parts`] under any expert layout).
pub fn shared_parts(w: &Workload, layout: &Layout, p: &Pricing) -> SharedParts {
    let proj = if w.mtp_layers > 0 {
        let h = w.hidden as f64;
        p.weight_linear(layout.local_tokens(w), 2.0 * h, h / layout.tp as f64)
    } else {
        Pass::default()
    };
    SharedParts {
        dense: block_cost(w, layout, p),
        embedding: embedding_cost(w, layout, p),
        head: head_cost(w, layout, p),
        mtp_projection: proj,
        counts: parameter_counts(w),
    }
}

/// [`moe_parts`] for another expert layout `el` of a block-level layout whose parts `same` were
/// priced under other expert degrees: only the MoE block is priced again; the parts that do not
/// read the expert degrees (dense block, embedding, head, MTP projection, counts) are `same`'s.
/// Equal to `moe_parts(w, m, layout, el, p)` (test `shared_parts_equal_fresh_ones`): what lets a
/// search price each block shape's dense parts once for all its expert layouts.
pub fn moe_parts_sharing(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    el: &ExpertLayout,
    p: &Pricing,
    same: &MoeParts,
) -> MoeParts {
    same.with_block(moe_block_cost(w, m, layout, el, p))
}

impl MoeParts {
    /// These parts with another expert layout's MoE block (the other parts do not read the expert
    /// degrees, [`moe_parts_sharing`]).
    pub fn with_block(&self, moe: MoeBlockCost) -> MoeParts {
        MoeParts { moe, ..*self }
    }

    /// These parts as the assembly reads them.
    pub fn view(&self) -> MoePartsView<'_> {
        MoePartsView { shared: &self.shared, moe: &self.moe }
    }

    /// The shared parts and the MoE block of a view, as owned parts.
    pub fn of(view: MoePartsView) -> MoeParts {
        MoeParts { shared: *view.shared, moe: *view.moe }
    }
}

/// What one device holds.
pub(super) struct Device {
    pub(super) name: &'static str,
    pub(super) dense: u64,
    pub(super) moe: u64,
    /// Embedding, heads and multi-token-prediction projections.
    pub(super) ends: Vec<EndCost>,
    /// Micro-batches in flight at the memory peak.
    pub(super) in_flight: f64,
    /// Whether it computes the logits and the loss.
    pub(super) head: bool,
}

impl Device {
    pub(super) fn blocks(&self) -> u64 {
        self.dense + self.moe
    }
}

/// The multi-token-prediction modules on the device with the last stage: (dense blocks, MoE
/// blocks, ends). Each module is a block of the last block's kind, a `2h × h` projection and
/// another pass through the output head, whose weights are the main model's (DeepSeek-V3
/// technical report §2.2: the MTP modules share the embedding and the output head with the main
/// model; §3.2.3: they sit on the same rank, sharing parameters and gradients), so the extra head
/// costs time and no parameters.
pub(super) fn mtp_modules(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    parts: MoePartsView,
) -> (u64, u64, Vec<EndCost>) {
    let mtp = w.mtp_layers;
    let h = w.hidden as f64;
    let projection = EndCost {
        fwd: parts.shared.mtp_projection,
        bwd: parts.shared.mtp_projection.times(2.0),
        parameters: 2.0 * h * h / layout.tp as f64,
        activation_bytes: 0.0,
    };
    let shared_head = EndCost { parameters: 0.0, ..parts.shared.head };
    let mut ends = Vec::with_capacity(2 * mtp as usize);
    for _ in 0..mtp {
        ends.extend([shared_head, projection]);
    }
    if m.is_moe_block(w.layers - 1) { (0, mtp, ends) } else { (mtp, 0, ends) }
}

/// The devices of one pipeline (first, last, a middle one; or the only one) with what each holds:
/// dense and MoE blocks, the ends (embedding, head, MTP blocks and projections on the last), the
/// micro-batches in flight at the memory peak.
pub(super) fn moe_devices(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    v: u64,
    rule: StageSplitRule,
    parts: MoePartsView,
) -> Vec<Device> {
    let stages = split(w.layers, layout.pp, rule);
    let in_first = first_stage_in_flight(layout.microbatches(), layout.pp, v);
    let SharedParts { embedding, head, .. } = *parts.shared;
    let count_moe = |start: u64, n: u64| (start..start + n).filter(|&i| m.is_moe_block(i)).count() as u64;
    // The last stage also holds the multi-token-prediction modules.
    let (mtp_dense, mtp_moe, mtp_ends) = mtp_modules(w, m, layout, parts);
    let mtp_device = |name, dense_n: u64, moe_n: u64, own: &[EndCost], in_flight| {
        let mut ends = Vec::with_capacity(own.len() + mtp_ends.len());
        ends.extend_from_slice(own);
        ends.extend_from_slice(&mtp_ends);
        Device { name, dense: dense_n + mtp_dense, moe: moe_n + mtp_moe, ends, in_flight, head: true }
    };
    if layout.pp == 1 {
        let n_moe = m.moe_blocks(w.layers);
        vec![mtp_device("only", w.layers - n_moe, n_moe, &[embedding, head], 1.0)]
    } else {
        let first_moe = count_moe(0, stages.first);
        let last_moe = count_moe(w.layers - stages.last, stages.last);
        let mid_moe = count_moe(stages.first, stages.most);
        let mut list = Vec::with_capacity(3);
        list.extend([
            Device {
                name: "first",
                dense: stages.first - first_moe,
                moe: first_moe,
                ends: vec![embedding],
                in_flight: in_first,
                head: false,
            },
            mtp_device("last", stages.last - last_moe, last_moe, &[head], 1.0),
        ]);
        if layout.pp > 2 {
            // The second stage: one micro-batch fewer in flight than the first.
            let in_flight = second_stage_in_flight(in_first);
            list.push(Device {
                name: "middle",
                dense: stages.most - mid_moe,
                moe: mid_moe,
                ends: vec![],
                in_flight,
                head: false,
            });
        }
        list
    }
}

/// One rank of a DualPipe pipeline as memory sees it: what it holds, with `device.in_flight` the
/// micro-batches in flight per block on average, and the block-micro-batches of activations each
/// kind of block keeps at the peak (`dense_kept`, `moe_kept`: the two stages' blocks, each times
/// its own direction's micro-batches in flight).
pub(super) struct DualRank {
    pub(super) device: Device,
    pub(super) dense_kept: f64,
    pub(super) moe_kept: f64,
}

/// Micro-batches in flight at the memory peak on DualPipe's rank with half-rank `h` (`min(r,
/// pp − 1 − r)`), one direction's each: `(pp − h, h + 1)` for the stage it runs first in its
/// direction (`h`) and the one it runs late (`pp − 1 − h`), each at most the direction's
/// `nmb/2` micro-batches. The sum is `pp + 1`, DeepSeek-V3 technical report (arXiv 2412.19437)
/// Table 2 ("activation PP + 1"); the split is the schedule's (github.com/deepseek-ai/DualPipe,
/// `dualpipe.py`: half-rank `h` first runs `2(pp/2 − h − 1)` forwards of its first direction, then
/// `h + 1` pairs of forwards of both, then steady forward-and-backward pairs that keep the count):
/// like 1F1B, a direction's first stage holds `pp` micro-batches and its last one.
pub fn dual_pipe_in_flight(pp: u64, h: u64, microbatches: u64) -> (f64, f64) {
    let per_direction = microbatches as f64 / 2.0;
    (((pp - h) as f64).min(per_direction), ((h + 1) as f64).min(per_direction))
}

/// The ranks of a DualPipe pipeline as memory sees them ([`super::MoeOptions::dual_pipe`]): rank
/// `r` holds stage `r` and stage `pp − 1 − r` (the first rank the embedding, the head and the MTP
/// modules too: DeepSeek-V3 report §3.2.3), with [`dual_pipe_in_flight`] micro-batches of each
/// stage's activations in flight (the first rank: `pp` of stage 0 with the embedding, one of the
/// last stage with the head and the MTP modules). `None` when `pp` is odd or 1 (1F1B then).
fn dual_pipe_devices(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    rule: StageSplitRule,
    parts: MoePartsView,
) -> Option<Vec<DualRank>> {
    let pp = layout.pp;
    if pp < 2 || pp % 2 == 1 {
        return None;
    }
    let count_moe = |(start, n): (u64, u64)| (start..start + n).filter(|&i| m.is_moe_block(i)).count() as u64;
    let (mtp_dense, mtp_moe, mtp_ends) = mtp_modules(w, m, layout, parts);
    Some(
        (0..pp / 2)
            .map(|r| {
                let (early, late) = dual_pipe_in_flight(pp, r, layout.microbatches());
                let (a, b) = (stage_blocks(w.layers, pp, rule, r), stage_blocks(w.layers, pp, rule, pp - 1 - r));
                let (moe_a, mut moe_b) = (count_moe(a), count_moe(b));
                let (dense_a, mut dense_b) = (a.1 - moe_a, b.1 - moe_b);
                let mut ends = Vec::new();
                if r == 0 {
                    // The last stage (the late one here) carries the head and the MTP modules.
                    (dense_b, moe_b) = (dense_b + mtp_dense, moe_b + mtp_moe);
                    let late_share = |e: &EndCost| EndCost { activation_bytes: e.activation_bytes * late, ..*e };
                    ends.push(EndCost {
                        activation_bytes: parts.shared.embedding.activation_bytes * early,
                        ..parts.shared.embedding
                    });
                    ends.push(late_share(&parts.shared.head));
                    ends.extend(mtp_ends.iter().map(late_share));
                }
                let (dense, moe) = (dense_a + dense_b, moe_a + moe_b);
                let dense_kept = early * dense_a as f64 + late * dense_b as f64;
                let moe_kept = early * moe_a as f64 + late * moe_b as f64;
                // Per block on average; the ends' activations carry their own counts (÷ this).
                let in_flight = (dense_kept + moe_kept) / (dense + moe).max(1) as f64;
                for e in &mut ends {
                    e.activation_bytes /= in_flight.max(f64::MIN_POSITIVE);
                }
                let (name, head) = if r == 0 { ("first", true) } else { ("middle", false) };
                DualRank { device: Device { name, dense, moe, ends, in_flight, head }, dense_kept, moe_kept }
            })
            .collect(),
    )
}

/// DualPipe's pipeline bubble in micro-batch slots (DeepSeek-V3 technical report, arXiv
/// 2412.19437, Table 2: `(pp/2 − 1)·(F&B + B − 3W)` against 1F1B's `(pp − 1)·(F + B)`), for an even
/// `pp` of at least 2. A slot is `F + B`; the overlapped forward-and-backward pair `F&B` takes one
/// slot (its exchanges hidden: the MoE layer's overlap), the backward `B` two thirds of it and the
/// weight-gradient part `W` one third (a matmul's backward is twice its forward, half of it the
/// weight gradient): `(pp/2 − 1)·(1 + 2/3 − 1) = (pp/2 − 1)·2/3` slots (pp 16: 4.67 against 15).
pub fn dual_pipe_bubble_slots(pp: u64) -> f64 {
    (pp / 2).saturating_sub(1) as f64 * 2.0 / 3.0
}

/// The DualPipe ranks memory sees when the switch is on ([`dual_pipe_devices`]).
pub(super) fn dual_ranks(
    w: &Workload,
    m: &MoeShape,
    layout: &Layout,
    p: &Pricing,
    parts: MoePartsView,
) -> Option<Vec<DualRank>> {
    if p.opts.moe.dual_pipe { dual_pipe_devices(w, m, layout, p.opts.stage_split, parts) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::Hardware;
    use crate::extended::moe::experts::expert_choices;
    use crate::extended::options::ExtendedOptions;
    use crate::extended::pipeline::bubble_slots;

    #[test]
    fn dual_pipe_bubble_by_hand() {
        // Table 2 with F = 1, B = 2, W = 1 (slot F + B = 3, F&B = 3): (pp/2 − 1)(3 + 2 − 3) = 2 per
        // pair of ranks beyond the first, in slots of 3: pp 16 → 7·2/3; 1F1B's (pp − 1)(F + B) = 15.
        assert!((dual_pipe_bubble_slots(16) - 7.0 * 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(dual_pipe_bubble_slots(2), 0.0);
        assert!((dual_pipe_bubble_slots(8) - 2.0).abs() < 1e-12);
        assert!(dual_pipe_bubble_slots(16) < bubble_slots(16, 1));
    }

    #[test]
    fn dual_pipe_in_flight_by_hand() {
        // PP 16, 120 micro-batches (60 per direction): half-rank 0 holds 16 of its first stage and
        // 1 of its last, half-rank 7 (the middle) 9 and 8; always PP + 1 = 17 (Table 2).
        assert_eq!(dual_pipe_in_flight(16, 0, 120), (16.0, 1.0));
        assert_eq!(dual_pipe_in_flight(16, 7, 120), (9.0, 8.0));
        for h in 0..8 {
            let (a, b) = dual_pipe_in_flight(16, h, 120);
            assert_eq!(a + b, 17.0);
        }
        // Few micro-batches: 6 in all, 3 per direction.
        assert_eq!(dual_pipe_in_flight(16, 0, 6), (3.0, 1.0));
        assert_eq!(dual_pipe_in_flight(16, 7, 6), (3.0, 3.0));
    }

    #[test]
    fn shared_parts_equal_fresh_ones() {
        // DeepSeek-V3 (MLA, MTP, dense first blocks) under several block shapes and every expert
        // layout: the parts shared from the first layout equal the ones priced afresh.
        let w = Workload::from_catalog(crate::catalog::find_model("deepseek-v3").unwrap()).unwrap();
        let m = w.moe.unwrap();
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        for (tp, pp, dp, mbs) in [(1, 4, 64, 1), (2, 8, 16, 2), (4, 2, 32, 1), (8, 16, 8, 4)] {
            let layout = Layout::placed(tp, 1, pp, dp, mbs, dp * mbs * 8, 8);
            let choices = expert_choices(&layout, &m, None, None);
            assert!(choices.len() > 1, "{choices:?}");
            let first = |(ep, etp): (u64, u64)| {
                let l = layout.with_experts(ep, etp);
                (l, ExpertLayout::fold(&l, &m, ep, etp).unwrap())
            };
            let (l0, e0) = first(choices[0]);
            let same = moe_parts(&w, &m, &l0, &e0, &p);
            for &c in &choices[1..] {
                let (l, el) = first(c);
                assert_eq!(moe_parts_sharing(&w, &m, &l, &el, &p, &same), moe_parts(&w, &m, &l, &el, &p), "{c:?}");
            }
        }
    }
}
