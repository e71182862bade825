//! An MoE evaluator's block costs, cached per block shape and expert layout for the
//! [`ExtendedEvaluator`](super::evaluate::ExtendedEvaluator) of a search: each MoE block priced
//! once per what it reads, its attention once per block shape, the parts that read no expert
//! degrees once per block shape; and, for a memory probe, the sizes of the parts (bytes kept,
//! parameters) once per what sizes read, which is less than what prices read (no fast-domain
//! placement): [`MoeCaches::sizes`].

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::attention::attention_operations;
use super::layout::Layout;
use super::moe::block::{AttentionPrefix, MoeBlockCost, moe_block_cost_after};
use super::moe::devices::{MoePartsView, SharedParts, shared_parts};
use super::moe::experts::ExpertLayout;
use super::pricing::Pricing;
use super::workload::Workload;
use crate::Error;
use crate::moe_shape::MoeShape;
use crate::reference::evaluate::ShapeHasher;

/// What an MoE layout's block costs depend on besides the expert degrees: tensor, context
/// parallelism, micro-batch and the fast-domain placement of the stage's ranks.
fn moe_block_key(layout: &Layout) -> [u64; 7] {
    let pl = layout.placement;
    // Whether the pipeline has one stage: a tied output head holds no weights of its own then
    // (`head_cost`), its own copy otherwise.
    [layout.tp, layout.cp, layout.mbs, pl.tp, pl.cp, pl.dp, u64::from(layout.pp == 1)]
}

/// What an MoE block's attention (and every dense part) reads of a layout: [`moe_block_key`]
/// without the data-parallel placement.
fn moe_shape_key(layout: &Layout) -> [u64; 5] {
    let pl = layout.placement;
    [layout.tp, layout.cp, layout.mbs, pl.tp, pl.cp]
}

/// What an MoE block reads of its expert layout: the degrees and their fast-domain shares
/// (`ep`, `etp`, `ep_fast`, `etp_fast`; the block reads no expert data parallelism).
fn expert_key(el: &ExpertLayout) -> [u64; 4] {
    [el.ep, el.etp, el.ep_fast, el.etp_fast]
}
/// A map keyed by a few integers, hashed by the reference's multiplicative [`ShapeHasher`]
/// (deterministic, and cheaper than the default keyed hasher for such keys).
/// What the parts that read no expert degrees ([`SharedParts`]: dense block, embedding, head,
/// MTP projection) read of a layout: [`moe_block_key`] without the data-parallel placement.
fn shared_key(layout: &Layout) -> [u64; 6] {
    let pl = layout.placement;
    [layout.tp, layout.cp, layout.mbs, pl.tp, pl.cp, u64::from(layout.pp == 1)]
}

/// What the sizes of an MoE block (parameters and bytes kept) read of its layout within a
/// `(tp, cp)` group: the micro-batch and the expert degrees, not where the ranks sit.
fn size_key(layout: &Layout) -> [u64; 3] {
    [layout.mbs, layout.ep, layout.etp]
}

/// What the sizes of the shared parts read of a layout within a `(tp, cp)` group: the
/// micro-batch and whether the pipeline has one stage ([`moe_block_key`]).
fn shared_size_key(layout: &Layout) -> [u64; 2] {
    [layout.mbs, u64::from(layout.pp == 1)]
}

/// The maps [`MoeCaches::block`] prices into: the MoE blocks' indices, the blocks, the attention
/// prefixes.
type BlockMaps<'a> = (
    &'a mut ShapeMap<([u64; 5], [u64; 4]), u32>,
    &'a mut Vec<MoeBlockCost>,
    &'a mut ShapeMap<[u64; 5], AttentionPrefix>,
);

pub(super) type ShapeMap<K, V> = HashMap<K, V, BuildHasherDefault<ShapeHasher>>;

/// An MoE evaluator's block costs, for the block shapes of one `(tp, cp)` group at a time: a
/// search generates its candidates with the tensor- and context-parallel degrees outermost (the
/// reference's loop order), so a group's shapes never come back once another group's came, and the
/// caches, forgotten when the group changes, stay the size of one group's (the whole search's ran
/// to hundreds of MB on DeepSeek-V3's 2d-seqp space, a cost of its own in a page's worker). A
/// memo: whatever the order of the layouts asked for, the parts are those priced afresh.
#[derive(Default)]
pub(super) struct MoeCaches {
    /// The `(tp, cp)` of the layouts cached.
    pub(super) group: Option<(u64, u64)>,
    /// MoE block costs per block shape ([`moe_block_key`]): its parts and, per expert degrees
    /// `(ep, etp)`, the index of its MoE block in `list`.
    shapes: ShapeMap<[u64; 7], ShapeParts>,
    /// The index in `list` of the MoE block of each block shape without the data-parallel
    /// placement ([`moe_shape_key`]) and expert layout ([`expert_key`]): placements that fold an
    /// expert layout alike share its block.
    blocks: ShapeMap<([u64; 5], [u64; 4]), u32>,
    /// The MoE blocks priced, each once (the caches hold indices: a block shape's parts are its
    /// [`ShapeParts::shared`] with one of these, joined by a view when read, so the caches grow
    /// by a few bytes per expert layout and nothing is copied).
    pub(super) list: Vec<MoeBlockCost>,
    /// An MoE block's attention operations per [`moe_shape_key`] (they read no expert layout), as
    /// the sums its blocks start from.
    attention: ShapeMap<[u64; 5], AttentionPrefix>,
    /// The shared parts per what they read ([`shared_key`]: not the data-parallel placement),
    /// priced once for the block shapes of [`Self::shapes`] that differ only in it.
    shared: ShapeMap<[u64; 6], Box<SharedParts>>,
    /// The index in `list` of an MoE block per what its sizes read ([`size_key`]): the block of
    /// the first expert layout and placement of those degrees priced, whose sizes every other
    /// shares ([`Self::sizes`]).
    size_blocks: ShapeMap<[u64; 3], u32>,
    /// The shared parts per what their sizes read ([`shared_size_key`]), as [`Self::size_blocks`].
    size_shared: ShapeMap<[u64; 2], Box<SharedParts>>,
    /// The indices in `list` of the last [`Self::sizes`] (one per expert choice, in order).
    sized: Vec<u32>,
}

impl MoeCaches {
    /// Appends to `out` where the parts of `layout`'s block shape under each expert degrees
    /// `(ep, etp)` of `choices` are cached, in order (indices into its [`ShapeParts::blocks`]:
    /// [`Self::current`] reads them), priced on first use (the MoE block once per
    /// [`moe_shape_key`] and [`expert_key`], its attention once per the former, the other parts
    /// once per block shape); each equal to `moe_parts` of the layout with those degrees (test
    /// `cached_parts_equal_fresh_ones`). A layout of another `(tp, cp)` than the last forgets the
    /// caches: earlier indices then point nowhere.
    pub(super) fn parts(
        &mut self,
        (w, m, p): (&Workload, &MoeShape, &Pricing),
        layout: &Layout,
        choices: &[(u64, u64)],
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let group = (layout.tp, layout.cp);
        if self.group != Some(group) {
            self.shapes.clear();
            self.blocks.clear();
            self.list.clear();
            self.attention.clear();
            self.shared.clear();
            self.size_blocks.clear();
            self.size_shared.clear();
            self.group = Some(group);
        }
        let entry = self.shapes.entry(moe_block_key(layout)).or_default();
        for &(ep, etp) in choices {
            let k = match entry.blocks.iter().position(|(x, _)| *x == (ep, etp)) {
                Some(k) => k,
                None => {
                    let l = layout.with_experts(ep, etp);
                    let i = Self::block((w, m, p), &l, (&mut self.blocks, &mut self.list, &mut self.attention))?;
                    if entry.shared.is_none() {
                        let shared = self.shared.entry(shared_key(layout));
                        entry.shared = Some(shared.or_insert_with(|| Box::new(shared_parts(w, &l, p))).clone());
                    }
                    entry.blocks.push(((ep, etp), i));
                    entry.blocks.len() - 1
                }
            };
            out.push(k as u32);
        }
        Ok(())
    }

    /// The index in `list` of the MoE block of layout `l` (with its expert degrees), priced on
    /// first use (once per [`moe_shape_key`] and [`expert_key`], its attention once per the former).
    fn block(
        (w, m, p): (&Workload, &MoeShape, &Pricing),
        l: &Layout,
        (blocks, list, attention): BlockMaps,
    ) -> Result<u32, Error> {
        let el = ExpertLayout::fold(l, m, l.ep, l.etp)?;
        let shape = moe_shape_key(l);
        Ok(*blocks.entry((shape, expert_key(&el))).or_insert_with(|| {
            let prefix =
                attention.entry(shape).or_insert_with(|| AttentionPrefix::of(&attention_operations(w, l, p), p));
            list.push(moe_block_cost_after(w, m, l, &el, p, prefix));
            (list.len() - 1) as u32
        }))
    }

    /// Parts whose sizes (parameters, bytes kept: all the memory model reads) are those of
    /// `layout`'s block shape under each expert degrees `(ep, etp)` of `choices`, in order, read
    /// by [`Self::sized`]: the parts of the first layout priced with the same [`size_key`] (and
    /// [`shared_size_key`]), whose times may be another fast-domain placement's. What a memory
    /// probe reads instead of [`Self::parts`], pricing an expert layout once per what its sizes
    /// read instead of once per placement (test `sized_parts_have_the_sizes_of_fresh_ones`). The
    /// same errors as [`Self::parts`]; another `(tp, cp)` than the last forgets the caches.
    pub(super) fn sizes(
        &mut self,
        (w, m, p): (&Workload, &MoeShape, &Pricing),
        layout: &Layout,
        choices: &[(u64, u64)],
    ) -> Result<(), Error> {
        if self.group != Some((layout.tp, layout.cp)) {
            let mut none = Vec::new();
            self.parts((w, m, p), layout, &[], &mut none)?;
        }
        self.sized.clear();
        let size_key_of_shared = shared_size_key(layout);
        if !self.size_shared.contains_key(&size_key_of_shared) {
            let entry = self.shapes.entry(moe_block_key(layout)).or_default();
            let priced = self.shared.entry(shared_key(layout));
            let shared = priced.or_insert_with(|| Box::new(shared_parts(w, layout, p)));
            let shared = entry.shared.get_or_insert_with(|| shared.clone());
            self.size_shared.insert(size_key_of_shared, shared.clone());
        }
        for &(ep, etp) in choices {
            let l = layout.with_experts(ep, etp);
            let key = size_key(&l);
            let i = match self.size_blocks.get(&key) {
                Some(&i) => i,
                None => {
                    let i = Self::block((w, m, p), &l, (&mut self.blocks, &mut self.list, &mut self.attention))?;
                    *self.size_blocks.entry(key).or_insert(i)
                }
            };
            self.sized.push(i);
        }
        Ok(())
    }

    /// The parts of the last [`Self::sizes`] for `layout`, in order: their sizes are `layout`'s
    /// (empty when the caches no longer hold them).
    pub(super) fn sized(&self, layout: &Layout) -> Vec<MoePartsView<'_>> {
        let Some(shared) = self.size_shared.get(&shared_size_key(layout)) else { return Vec::new() };
        let view = |&i: &u32| Some(MoePartsView { shared, moe: self.list.get(i as usize)? });
        self.sized.iter().filter_map(view).collect()
    }

    /// The parts `indices` of [`Self::parts`] for `layout` point to, in order (empty when the
    /// caches no longer hold its block shape).
    pub(super) fn current(&self, layout: &Layout, indices: &[u32]) -> Vec<MoePartsView<'_>> {
        let Some(entry) = self.shapes.get(&moe_block_key(layout)) else { return Vec::new() };
        let Some(shared) = entry.shared.as_deref() else { return Vec::new() };
        let view = |&k: &u32| {
            let &(_, i) = entry.blocks.get(k as usize)?;
            Some(MoePartsView { shared, moe: self.list.get(i as usize)? })
        };
        indices.iter().filter_map(view).collect()
    }
}

/// One MoE block shape's cached parts.
#[derive(Debug, Clone, Default)]
struct ShapeParts {
    /// The parts that read no expert degrees (dense block, ends, counts), priced on first use.
    shared: Option<Box<SharedParts>>,
    /// `((ep, etp), the index of the MoE block under those degrees in [`MoeCaches::list`])`:
    /// with `shared`, the parts of that expert layout ([`MoeCaches::current`]).
    blocks: Vec<((u64, u64), u32)>,
}
