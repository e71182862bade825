//! Which shard of a search evaluates which candidate ([`super::Search::shard`]).
//!
//! Two rules, both partitions of the candidate list (every candidate in exactly one shard, its
//! generation index kept as the tie-break), so the merged shards equal the single run whichever
//! applies:
//! * **interleaved** (every search but an extended-mode MoE one): shard `i` of `n` evaluates the
//!   candidates whose generation index is `i` modulo `n` — even shares of every block shape;
//! * **by block shape** (extended-mode searches of a Mixture-of-Experts model): every candidate of
//!   one block shape ([`block_shape`]: the tensor and context degrees, the micro-batch and their
//!   fast-domain shares, what an MoE evaluator prices its blocks per) goes to one shard, the shapes
//!   dealt out largest first to the shard with the fewest candidates so far ([`ShapeShards`]).
//!   Pricing an MoE block shape is most of a candidate's cost the first time (its expert layouts'
//!   blocks) and little after; interleaved, every shard priced nearly every shape, so two workers
//!   each did most of one run's block pricing. By shape, each shape is priced once over all shards.

use super::Space;
use crate::vocab::Candidate;

/// The block shape of a candidate as an MoE evaluator caches its blocks (`tp`, `cp`, micro-batch,
/// and the fast-domain shares of `tp` and `cp`: `extended::evaluate`'s `moe_shape_key`, read off
/// the candidate; 1d has `tp2 = nv_tp2 = 1`).
pub(crate) fn block_shape(c: &Candidate) -> [u64; 5] {
    [c.tp1, c.tp2, c.mbs, c.nv_tp1, c.nv_tp2]
}

/// A split of a search's candidates into `count` shards by block shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShapeShards {
    /// Each block shape with its shard, sorted by shape (a sorted list, not a map: the page's
    /// module stays smaller, and lookups are a binary search over a few hundred shapes).
    owner: Vec<([u64; 5], u64)>,
    /// Candidates of each shard [count].
    lens: Vec<u64>,
}

impl ShapeShards {
    /// The split of `space` into `count` shards (`count ≥ 1`): shapes by candidate count, largest
    /// first (ties: the shape generated first), each to the shard with the fewest candidates so far
    /// (ties: the lowest index). Deterministic: a function of the candidate list and `count`.
    pub(crate) fn of(space: &Space, count: u64) -> ShapeShards {
        let count = count.max(1);
        // Per shape, sorted by shape: (shape, candidates, generation index of its first).
        let mut shapes: Vec<([u64; 5], u64, u64)> = Vec::new();
        for (gi, c) in space.iter().enumerate() {
            let key = block_shape(&c);
            match shapes.binary_search_by(|s| s.0.cmp(&key)) {
                Ok(i) => shapes[i].1 += 1,
                Err(i) => shapes.insert(i, (key, 1, gi as u64)),
            }
        }
        let mut order: Vec<usize> = (0..shapes.len()).collect();
        crate::sort::sort_by(&mut order, |&a, &b| shapes[b].1.cmp(&shapes[a].1).then(shapes[a].2.cmp(&shapes[b].2)));
        let mut lens = vec![0u64; count as usize];
        let mut owner: Vec<([u64; 5], u64)> = shapes.iter().map(|s| (s.0, 0)).collect();
        for i in order {
            let (j, _) = lens.iter().enumerate().min_by_key(|&(j, &l)| (l, j)).unwrap_or((0, &0));
            lens[j] += shapes[i].1;
            owner[i].1 = j as u64;
        }
        ShapeShards { owner, lens }
    }

    /// The shard that evaluates `c` (a candidate of the space split).
    pub(crate) fn owner(&self, c: &Candidate) -> Option<u64> {
        let key = block_shape(c);
        self.owner.binary_search_by(|s| s.0.cmp(&key)).ok().map(|i| self.owner[i].1)
    }

    /// Candidates of shard `index` [count] (0 past the last shard).
    pub(crate) fn len(&self, index: u64) -> u64 {
        self.lens.get(index as usize).copied().unwrap_or(0)
    }
}
