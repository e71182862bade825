//! How [`ExtendedEvaluator`] prices an MoE candidate: expert parallelism is a dimension of its
//! own, so every `(ep, etp)` the layout allows ([`expert_choices`]) is a choice; their block costs
//! come from the evaluator's caches ([`MoeCaches`](crate::extended::moe_caches::MoeCaches)), their
//! time floors [s] order them and prune the ones that cannot win, their memories per device [GB]
//! alone (nothing assembled) say which fit. The fastest that fits is the evaluation; the floors and
//! memory probes also answer the search's pruning questions ([`ExtendedEvaluator::moe_time_floor`],
//! [`ExtendedEvaluator::moe_memory_floor`], [`ExtendedEvaluator::moe_fits`]). A dense model's
//! candidate goes straight to [`ExtendedEvaluator::evaluate_layout`].

use super::{ExtendedEvaluation, ExtendedEvaluator};
use crate::Error;
use crate::extended::data_parallel::DpGroups;
use crate::extended::iteration::check_layout;
use crate::extended::layout::Layout;
use crate::extended::moe::devices::{MoeParts, MoePartsView};
use crate::extended::moe::evaluate::{MoeMemories, assemble_moe, moe_memories_gb, moe_time_floors_s};
use crate::extended::moe::experts::expert_choices;
use crate::extended::pricing::Pricing;
use crate::moe_shape::MoeShape;
use crate::vocab::Candidate;

/// The expert choices and time floors of the last MoE layout ([`ExtendedEvaluator::moe_floors`]).
#[derive(Debug, Clone)]
pub(super) struct FloorsMemo {
    layout: Layout,
    /// The interleave degree the layout was last checked under.
    interleave: u64,
    /// The `(ep, etp)` choices.
    choices: Vec<(u64, u64)>,
    /// Each choice's time floor [s] with its index, least first (ties by index); formed when
    /// first asked for ([`ExtendedEvaluator::moe_order`]): a search judges most candidates by
    /// their memory and a floor without recomputation, which need no order.
    order: Option<Vec<(f64, usize)>>,
}

impl ExtendedEvaluator {
    /// Full evaluation of a candidate. For an MoE model, expert parallelism is a dimension of its
    /// own: of every `(ep, etp)` of [`expert_choices`] (or the fixed ones of the MoE options) the
    /// fastest that fits is kept (the smallest in memory when none fits; ties: the first in the
    /// choices' order); the evaluation's `moe.experts` says which. Exact pruning: the choices are
    /// priced in the order of their time floor ([`moe_time_floor_s`](crate::extended::moe::evaluate::moe_time_floor_s), from the cached block costs),
    /// and once one fits, a choice whose floor cannot beat it is not assembled.
    pub fn evaluate_full(&mut self, c: &Candidate) -> Result<ExtendedEvaluation, Error> {
        let layout = Layout::from_candidate(c, self.global_batch)?;
        let Some(m) = self.workload.moe else {
            return self.evaluate_layout(&layout);
        };
        let mo = self.options.moe;
        self.moe_floors(&layout, &m)?;
        self.moe_order();
        let Some(FloorsMemo { choices, order: Some(order), .. }) = &self.moe_floors_memo else {
            return Err(Error::invalid("layout", "moe", "has no expert choices"));
        };
        let (w, p) = (&self.workload, Pricing { hw: &self.hardware, opts: &self.options });
        let current = self.moe_caches.current(&layout, &self.moe_current);
        let parts_of = |i: usize| current.get(i).copied();
        let g = layout.global_batch as f64;
        // The fastest layout that fits, and while none fits the one with the least memory (ties:
        // the first in floor order), by its memory alone (`moe_memory_gb`, the assembly's own
        // figure, here by [`MoeMemories`]): a layout that does not fit is assembled only if it is
        // the answer.
        let mut best: Option<(ExtendedEvaluation, usize)> = None;
        let mut leanest: Option<(f64, usize)> = None;
        let mut memories: Option<MoeMemories> = None;
        for &(floor, i) in order {
            if let Some((b, bi)) = &best {
                let ceiling = g / floor;
                if ceiling < b.throughput_samples_per_s || (ceiling == b.throughput_samples_per_s && i > *bi) {
                    continue;
                }
            }
            let (ep, etp) = choices[i];
            let Some(parts) = parts_of(i) else { continue };
            let l = layout.with_experts(ep, etp);
            // The groups and devices formed once for the layout's expert layouts.
            if memories.is_none() {
                memories = Some(MoeMemories::new(w, &m, &layout, &p, parts)?);
            }
            let Some(mem) = memories.as_ref().map(|x| x.of((ep, etp), parts)).transpose()? else { continue };
            // Not `mem > capacity`: the assembly's `feasible` is `mem <= capacity`.
            if !(mem <= self.hardware.hbm_capacity_gb) {
                if best.is_none() && leanest.is_none_or(|(lm, li)| mem < lm || (mem == lm && i < li)) {
                    leanest = Some((mem, i));
                }
                continue;
            }
            let e = assemble_moe(w, &m, &l, &p, parts)?;
            let better = best.as_ref().is_none_or(|(b, bi)| {
                e.throughput_samples_per_s > b.throughput_samples_per_s
                    || (e.throughput_samples_per_s == b.throughput_samples_per_s && i < *bi)
            });
            if better {
                best = Some((e, i));
            }
        }
        if best.is_none()
            && let Some((_, i)) = leanest
            && let Some(parts) = parts_of(i)
        {
            let (ep, etp) = choices[i];
            best = Some((assemble_moe(w, &m, &layout.with_experts(ep, etp), &p, parts)?, i));
        }
        best.map(|(e, _)| e).ok_or_else(|| {
            let group = layout.tp * layout.cp * layout.dp;
            Error::invalid(
                crate::extended::moe::experts::ExpertLayout::EP_FIELD.as_str(),
                mo.ep.map_or("any".to_string(), |e| e.to_string()),
                format!("no expert-parallel degree folds over tp·cp·dp = {group} for {} experts", m.experts),
            )
        })
    }

    /// The `(ep, etp)` choices of an MoE layout with their parts. Checks the layout and fills the
    /// block-cost cache; the answer is `moe_floors_memo` (and the parts `moe_current`), its
    /// floors' order formed by [`Self::moe_order`].
    fn moe_floors(&mut self, layout: &Layout, m: &MoeShape) -> Result<(), Error> {
        // The choices and floors do not read the interleave degree (it sets only the micro-batches
        // in flight, a memory figure): another degree for the same layout only checks the layout.
        if let Some(memo) = &mut self.moe_floors_memo
            && memo.layout == *layout
        {
            if memo.interleave != self.options.interleave {
                if !memo.choices.is_empty() {
                    check_layout(&self.workload, &self.hardware, layout, &self.options)?;
                }
                memo.interleave = self.options.interleave;
            }
            return Ok(());
        }
        let mo = self.options.moe;
        // `expert_choices` reads the tensor-, context- and data-parallel degrees of a layout (and
        // the evaluator's fixed degrees and model): formed once per such triple.
        let choices = self
            .moe_choices
            .entry([layout.tp, layout.cp, layout.dp])
            .or_insert_with(|| expert_choices(layout, m, mo.ep, mo.etp))
            .clone();
        if !choices.is_empty() {
            // The layout's checks do not read the expert degrees of an MoE model.
            check_layout(&self.workload, &self.hardware, layout, &self.options)?;
        }
        // Every choice's block costs (one cache entry per block shape), then its time floor.
        if let Err(e) = self.fill_current(layout, m, &choices) {
            // `moe_current` no longer holds the memo's layout.
            self.moe_floors_memo = None;
            return Err(e);
        }
        self.moe_floors_memo =
            Some(FloorsMemo { layout: *layout, interleave: self.options.interleave, choices, order: None });
        Ok(())
    }

    /// Forms the memo's order, if not yet: each expert choice's time floor
    /// ([`moe_time_floor_s`](crate::extended::moe::evaluate::moe_time_floor_s)) with its index, least first
    /// (ties by index).
    fn moe_order(&mut self) {
        let Some(memo) = self.moe_floors_memo.as_mut().filter(|memo| memo.order.is_none()) else { return };
        let Some(m) = self.workload.moe else { return };
        let list = self.moe_caches.current(&memo.layout, &self.moe_current);
        let floors = moe_time_floors_s(&self.workload, &m, &memo.layout, &self.options, &list, true);
        let mut order: Vec<(f64, usize)> = floors.into_iter().zip(0..).collect();
        crate::sort::sort_by(&mut order, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        memo.order = Some(order);
    }

    /// The parts of `layout`'s block shape under expert degrees `(ep, etp)` ([`MoeCaches::parts`]).
    pub(super) fn shape_parts(&mut self, layout: &Layout, m: &MoeShape, choice: (u64, u64)) -> Result<MoeParts, Error> {
        if self.moe_caches.group != Some((layout.tp, layout.cp)) {
            // The caches forget the memo's block shapes.
            self.moe_floors_memo = None;
        }
        let p = Pricing { hw: &self.hardware, opts: &self.options };
        let mut one = Vec::with_capacity(1);
        self.moe_caches.parts((&self.workload, m, &p), layout, &[choice], &mut one)?;
        let parts = self.moe_caches.current(layout, &one).first().map(|&view| MoeParts::of(view));
        parts.ok_or_else(|| Error::invalid("layout", "moe", "has no expert layout priced"))
    }

    /// Fills `moe_current` with the parts of every choice of `layout` (in the choices' order).
    fn fill_current(&mut self, layout: &Layout, m: &MoeShape, choices: &[(u64, u64)]) -> Result<(), Error> {
        self.moe_current.clear();
        let p = Pricing { hw: &self.hardware, opts: &self.options };
        self.moe_caches.parts((&self.workload, m, &p), layout, choices, &mut self.moe_current)
    }

    /// For an MoE model: a lower bound on the iteration time of candidate `c` under every expert
    /// layout the evaluator may choose [s] (the least time floor; recomputation only adds to it,
    /// sharding and interleaving leave it unchanged). `None` for a dense model or when the
    /// candidate is rejected. What the search's execution pruning bounds MoE candidates with: the
    /// chosen layout's own time is no bound when none fits (the leanest is returned then).
    pub fn moe_time_floor(&mut self, c: &Candidate) -> Option<f64> {
        let m = self.workload.moe?;
        let layout = Layout::from_candidate(c, self.global_batch).ok()?;
        self.moe_floors(&layout, &m).ok()?;
        self.moe_order();
        self.moe_floors_memo.as_ref()?.order.as_ref()?.first().map(|(f, _)| *f)
    }

    /// For an MoE model: [`Self::moe_time_floor`] with the recomputation left out — the least
    /// time floor of `c` over its expert layouts under no recomputation, read from this
    /// evaluator's cached block costs whatever its own level (equal to `moe_time_floor` of an
    /// evaluator without recomputation, test `floors_without_recomputation_from_any_level`), so a
    /// lower bound on the iteration time under every level, sharding and interleave degree.
    /// `None` for a dense model or a rejected candidate.
    pub fn moe_time_floor_without_recompute(&mut self, c: &Candidate) -> Option<f64> {
        let m = self.workload.moe?;
        let layout = Layout::from_candidate(c, self.global_batch).ok()?;
        self.moe_floors(&layout, &m).ok()?;
        let list = self.moe_caches.current(&layout, &self.moe_current);
        let floors = moe_time_floors_s(&self.workload, &m, &layout, &self.options, &list, false);
        floors.into_iter().min_by(f64::total_cmp)
    }

    /// For an MoE model: the least memory per device of candidate `c` over its expert layouts
    /// [GB] and whether any fits, from their memory alone (nothing assembled). [`Self::evaluate`]
    /// of `c` answers a layout that fits exactly when one does, and its memory is no less than
    /// this least one (it is the least when none fits). `None` for a dense model, a rejected
    /// candidate or one without expert layouts (ask [`Self::evaluate`] then).
    pub fn moe_memory_floor(&mut self, c: &Candidate) -> Option<(f64, bool)> {
        let capacity = self.hardware.hbm_capacity_gb;
        let (mut least, mut fits) = (f64::INFINITY, false);
        // In the choices' order: the least and whether any fits do not depend on it.
        self.moe_memories(c, false, |x| {
            least = least.min(x);
            fits |= x <= capacity;
            true
        })?;
        Some((least, fits))
    }

    /// For an MoE model: whether an expert layout of candidate `c` fits in memory — the `fits` of
    /// [`Self::moe_memory_floor`], without its least memory: the layouts' memories are formed
    /// until one fits, the most expert-parallel first (whose expert states are spread over the
    /// most ranks: the likeliest to fit). `None` where `moe_memory_floor` answers `None`.
    pub fn moe_fits(&mut self, c: &Candidate) -> Option<bool> {
        let capacity = self.hardware.hbm_capacity_gb;
        let mut fits = false;
        self.moe_memories(c, true, |x| {
            fits = x <= capacity;
            !fits
        })?;
        Some(fits)
    }

    /// Hands `each` the memory per device [GB] of candidate `c` under its expert layouts
    /// ([`moe_memories_gb`]), in the choices' order or (`reversed`) the other way, until it
    /// answers `false`. `None` (and `each` perhaps not called for all) for a dense model, a
    /// rejected candidate, one without expert layouts or a memory that is not a number.
    fn moe_memories(&mut self, c: &Candidate, reversed: bool, mut each: impl FnMut(f64) -> bool) -> Option<()> {
        let m = self.workload.moe?;
        let layout = Layout::from_candidate(c, self.global_batch).ok()?;
        // The checks and errors of `moe_floors`, the parts' sizes alone (`MoeCaches::sizes`).
        let mo = self.options.moe;
        let choices = self.moe_choices.entry([layout.tp, layout.cp, layout.dp]);
        let choices = choices.or_insert_with(|| expert_choices(&layout, &m, mo.ep, mo.etp)).clone();
        if choices.is_empty() {
            return None;
        }
        check_layout(&self.workload, &self.hardware, &layout, &self.options).ok()?;
        if self.moe_caches.group != Some((layout.tp, layout.cp)) {
            // The caches forget the memo's block shapes; the probes, another group's layouts.
            self.moe_floors_memo = None;
            self.moe_probes.clear();
        }
        let g = DpGroups::on(&layout, &self.options, &self.hardware).ok()?;
        let l = layout;
        let key =
            [l.tp, l.cp, l.pp, l.dp, l.mbs, l.global_batch, g.replicas, g.shard, u64::from(g.gradient_sync_deferred)];
        if !self.moe_probes.contains_key(&key) {
            let p = Pricing { hw: &self.hardware, opts: &self.options };
            self.moe_caches.sizes((&self.workload, &m, &p), &layout, &choices).ok()?;
            let current = self.moe_caches.sized(&layout);
            let list: Vec<((u64, u64), MoePartsView)> = choices.iter().copied().zip(current).collect();
            if list.is_empty() || list.len() != choices.len() {
                return None;
            }
            let memories = moe_memories_gb(&self.workload, &m, &layout, &p, &list).ok()?;
            let memories = memories.map(|x| x.ok().filter(|x| !x.is_nan())).collect();
            self.moe_probes.insert(key, memories);
        }
        let memories = self.moe_probes.get(&key)?;
        let mut step = |x: Option<f64>| x.map(&mut each);
        if reversed {
            for &x in memories.iter().rev() {
                if !step(x)? {
                    break;
                }
            }
        } else {
            for &x in memories {
                if !step(x)? {
                    break;
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extended::hardware::Hardware;
    use crate::extended::moe::devices::moe_parts;
    use crate::extended::moe::experts::ExpertLayout;
    use crate::extended::options::{ExtendedOptions, Recompute, Sharding};
    use crate::extended::workload::Workload;
    use crate::{Strategy, SystemParams};

    #[test]
    fn memoised_choices_equal_fresh_ones() {
        // The expert choices memoised per (tp, cp, dp) equal `expert_choices` of each layout, over
        // placements that share the triple (the fast-domain shares differ; the choices do not)
        // and fixed degrees.
        use crate::extended::layout::Placement;
        use crate::extended::moe::experts::expert_choices;
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let w = Workload::from_catalog(crate::catalog::find_model("deepseek-v3").unwrap()).unwrap();
        let m = w.moe.unwrap();
        let mut compared = 0;
        for (ep, etp) in [(None, None), (Some(8), None), (None, Some(1))] {
            let mut opts = ExtendedOptions::realistic();
            (opts.moe.ep, opts.moe.etp) = (ep, etp);
            let mut ev = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::ContextParallel2D, 1024).unwrap();
            for (tp, cp, pp, dp) in [(2, 1, 4, 32), (2, 2, 2, 32), (1, 1, 8, 64), (4, 2, 1, 16)] {
                for (pl_tp, pl_cp, pl_dp) in [(tp, 1, 1), (tp, 1, 2), (1, 1, 8), (tp.min(2), cp, 2)] {
                    let layout = Layout {
                        placement: Placement { tp: pl_tp, cp: pl_cp, dp: pl_dp, pp: 1 },
                        ..Layout::placed(tp, cp, pp, dp, 1, 1024, 8)
                    };
                    if ev.moe_floors(&layout, &m).is_err() {
                        continue;
                    }
                    let memo = ev.moe_floors_memo.as_ref().unwrap();
                    assert_eq!(memo.choices, expert_choices(&layout, &m, ep, etp), "{layout:?} {ep:?} {etp:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 20, "{compared}");
    }

    #[test]
    fn cached_parts_equal_fresh_ones() {
        // MLA with multi-token prediction (DeepSeek-V3) and plain attention (Mixtral), every
        // recomputation level: one evaluator prices block shapes that differ only in the
        // data-parallel placement (sharing MoE blocks and attention) and in the expert layout;
        // every cached part equals the parts priced afresh, bit for bit. The groups of tensor and
        // context-parallel degrees come twice (the caches hold one group at a time).
        use crate::extended::layout::Placement;
        use crate::extended::moe::experts::{ExpertLayout, expert_choices};
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        for model in ["deepseek-v3", "mixtral-8x7b"] {
            let w = Workload::from_catalog(crate::catalog::find_model(model).unwrap()).unwrap();
            let m = w.moe.unwrap();
            for recompute in [Recompute::None, Recompute::Selective, Recompute::Full] {
                let opts = ExtendedOptions { recompute, ..ExtendedOptions::realistic() };
                let p = Pricing { hw: &hw, opts: &opts };
                let mut ev = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::ContextParallel2D, 1024).unwrap();
                let (mut checked, mut priced) = (0, 0);
                let groups = [(2, 1, 4, 32, 1), (2, 2, 2, 32, 2), (1, 1, 8, 32, 1), (4, 2, 1, 32, 1)];
                for (tp, cp, pp, dp, mbs) in groups.into_iter().chain(groups.into_iter().rev()) {
                    for (pl_tp, pl_cp, pl_dp) in [(tp, 1, 1), (tp, 1, 2), (tp, 1, 4), (tp.min(2), cp, 2), (1, 1, 8)] {
                        if tp % pl_tp != 0 || cp % pl_cp != 0 || dp % pl_dp != 0 || pl_tp * pl_cp * pl_dp > 8 {
                            continue;
                        }
                        let layout = Layout {
                            placement: Placement { tp: pl_tp, cp: pl_cp, dp: pl_dp, pp: 1 },
                            ..Layout::placed(tp, cp, pp, dp, mbs, 1024, 8)
                        };
                        for c in expert_choices(&layout, &m, None, None) {
                            let l = layout.with_experts(c.0, c.1);
                            let el = ExpertLayout::fold(&l, &m, c.0, c.1).unwrap();
                            let fresh = moe_parts(&w, &m, &l, &el, &p);
                            assert_eq!(ev.shape_parts(&layout, &m, c).unwrap(), fresh, "{model} {l:?}");
                            checked += 1;
                        }
                    }
                    // Each group's blocks were priced once for its placements and expert layouts.
                    priced += ev.moe_caches.list.len();
                }
                assert!(checked > 100 && priced < checked, "{checked} {priced}");
            }
        }
    }

    /// 1d layouts of DeepSeek-V3 on 2,048 H800 (most fit) and on 128 (none fits), each domain of
    /// 8 filled by tensor, data and pipeline ranks in every way they divide it.
    fn h800_candidates() -> Vec<Candidate> {
        let mut candidates = Vec::new();
        for (n, tp, pp) in
            [2048, 128].into_iter().flat_map(|n| (0..4).flat_map(move |t| (0..5).map(move |p| (n, 1 << t, 1 << p))))
        {
            for (nv_tp1, nv_dp) in [(1, 8), (1, 4), (2, 4), (2, 2), (4, 2), (8, 1), (1, 1)] {
                let nv_pp = 8 / (nv_tp1 * nv_dp);
                let dp = n / (tp * pp);
                if tp % nv_tp1 == 0 && pp % nv_pp == 0 && dp % nv_dp == 0 {
                    for mbs in [1, 2, 3] {
                        let (strategy, tp1, tp2, nb, nv_tp2) = (Strategy::OneD, tp, 1, 1, 1);
                        candidates.push(Candidate {
                            strategy,
                            dp,
                            tp1,
                            tp2,
                            pp,
                            mbs,
                            nb,
                            nv_tp1,
                            nv_tp2,
                            nv_dp,
                            nv_pp,
                        });
                    }
                }
            }
        }
        candidates
    }

    #[test]
    fn sized_parts_have_the_sizes_of_fresh_ones() {
        // The memory probe reads parts priced once per what their sizes read (another placement's
        // times): its least memory and verdict equal those of parts priced afresh for each
        // candidate's own placement, bit for bit, at every recomputation level (DeepSeek-V3 on
        // H800, the placements of `h800_candidates` in turn).
        use crate::catalog::{MappingOptions, find_model, find_system};
        use crate::extended::moe::evaluate::moe_memory_gb;
        let w = Workload::from_catalog(find_model("deepseek-v3").unwrap()).unwrap();
        let m = w.moe.unwrap();
        let sys = find_system("nvidia_h800_sxm5_80gb").unwrap();
        let base = ExtendedOptions::realistic();
        let hw = Hardware::from_catalog(sys, base.hardware.precision, true, &MappingOptions::default()).unwrap();
        let (mut compared, mut shared) = (0, 0);
        for recompute in [Recompute::Full, Recompute::Selective, Recompute::None] {
            let o = ExtendedOptions { recompute, sharding: Sharding::Zero3, ..base };
            let mut ev = ExtendedEvaluator::new(&w, &hw, &o, Strategy::OneD, 15360).unwrap();
            let p = Pricing { hw: &hw, opts: &o };
            for c in h800_candidates() {
                let Some((least, fits)) = ev.moe_memory_floor(&c) else { continue };
                let layout = Layout::from_candidate(&c, 15360).unwrap();
                let fresh: Vec<f64> = expert_choices(&layout, &m, None, None)
                    .into_iter()
                    .map(|(ep, etp)| {
                        let l = layout.with_experts(ep, etp);
                        let el = ExpertLayout::fold(&l, &m, ep, etp).unwrap();
                        moe_memory_gb(&w, &m, &l, &p, moe_parts(&w, &m, &l, &el, &p).view()).unwrap()
                    })
                    .collect();
                let fresh_least = fresh.iter().copied().fold(f64::INFINITY, f64::min);
                assert_eq!(least.to_bits(), fresh_least.to_bits(), "{c:?} {recompute:?}");
                assert_eq!(fits, fresh.iter().any(|&x| x <= hw.hbm_capacity_gb), "{c:?}");
                compared += 1;
            }
            shared += ev.moe_caches.list.len();
        }
        assert!(compared > 300 && shared > 0, "{compared} {shared}");
    }

    #[test]
    fn the_fits_probe_stops_at_the_first_layout_that_fits() {
        // DeepSeek-V3 on H800 (domain 8), the leanest execution: `moe_fits` agrees with the
        // full probe on every candidate; where a layout fits it reads the layouts until one does
        // (fewer than all on some), where none fits it must read every one.
        use crate::catalog::{MappingOptions, find_model, find_system};
        let (w, base) =
            (Workload::from_catalog(find_model("deepseek-v3").unwrap()).unwrap(), ExtendedOptions::realistic());
        let sys = find_system("nvidia_h800_sxm5_80gb").unwrap();
        let hw = Hardware::from_catalog(sys, base.hardware.precision, true, &MappingOptions::default()).unwrap();
        let lean = ExtendedOptions { recompute: Recompute::Full, sharding: Sharding::Zero3, ..base };
        let mut ev = ExtendedEvaluator::new(&w, &hw, &lean, Strategy::OneD, 15360).unwrap();
        let candidates = h800_candidates();
        let (mut early, mut fit, mut none) = (0, 0, 0);
        for c in candidates {
            let Some((least, fits)) = ev.moe_memory_floor(&c) else { continue };
            assert_eq!(ev.moe_fits(&c), Some(fits), "{c:?}");
            let (mut all, mut read) = (0, 0);
            ev.moe_memories(&c, false, |_| {
                all += 1;
                true
            });
            ev.moe_memories(&c, true, |x| {
                read += 1;
                x > hw.hbm_capacity_gb
            });
            if fits {
                fit += 1;
                early += usize::from(read < all);
            } else {
                none += 1;
                assert!(read == all && least > hw.hbm_capacity_gb, "{c:?}: {read} of {all}");
            }
        }
        assert!(early > 20 && none > 20, "{early} early of {fit} that fit, {none} none");
    }

    #[test]
    fn a_tied_head_keeps_its_parts_per_pipeline_depth() {
        // Tied embeddings: with one pipeline stage the head's weights are the embedding's (none of
        // its own), with more it keeps a copy. Block shapes that differ only in pp are priced
        // apart, in either order (the cache once keyed them alike: the first one priced won).
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
        let base = Workload::from_catalog(crate::catalog::find_model("mixtral-8x7b").unwrap()).unwrap();
        let w = Workload { tied_embeddings: true, ..base };
        let m = w.moe.unwrap();
        let opts = ExtendedOptions::realistic();
        let p = Pricing { hw: &hw, opts: &opts };
        for order in [[1, 2, 1], [2, 1, 2]] {
            let mut ev = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::OneD, 1024).unwrap();
            for pp in order {
                let layout = Layout::placed(2, 1, pp, 32, 1, 1024, 8);
                let c = (8, 1);
                let l = layout.with_experts(c.0, c.1);
                let fresh = moe_parts(&w, &m, &l, &ExpertLayout::fold(&l, &m, c.0, c.1).unwrap(), &p);
                assert_eq!(ev.shape_parts(&layout, &m, c).unwrap(), fresh, "pp {pp} after {order:?}");
            }
        }
    }
}
