//! The `k` best candidates by throughput, kept in a small sorted buffer.

use super::execution::Execution;
use crate::extended::moe::ExpertLayout;
use crate::vocab::{Candidate, Totals};

/// A ranked configuration.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ranked {
    /// The configuration.
    pub candidate: Candidate,
    /// `G / t` [samples/s].
    pub throughput_samples_per_s: f64,
    /// Iteration time `t` [s].
    pub time_per_iteration_s: f64,
    /// Memory per device [GB].
    pub mem_gb: f64,
    /// What a device needs once the allocator has given its cache back [GB]
    /// ([`crate::vocab::Outcome::need_gb`]; `mem_gb` in reference mode); read as 0 when absent.
    #[serde(default)]
    pub need_gb: f64,
    /// Every stats value of the iteration.
    pub totals: Totals,
    /// Expert-parallel degrees chosen for the MoE blocks (MoE models in extended mode; `None`
    /// otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experts: Option<ExpertLayout>,
    /// The execution the search chose (extended mode; `None`: the switches' own, as in every
    /// reference-mode result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<Execution>,
}

/// The best `k` entries by throughput, best first.
///
/// Tie-break (quirk Q16): among exactly equal throughputs the entry offered first stays ahead, as
/// `heapq.nlargest` does; the reference offers candidates in CPython set order, this port in the
/// order of the nested loops of spec §7 (`tp1, tp2, pp, mbs, nb, placement`). Tied groups can
/// therefore differ in order (never in content) from the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct TopK {
    k: usize,
    items: Vec<Ranked>,
    /// Generation index of each kept entry (the tie-break key when shards are merged).
    order: Vec<u64>,
    /// Entries offered through [`TopK::offer`] (their generation index).
    offered: u64,
}

impl TopK {
    /// An empty list keeping at most `k` entries.
    pub fn new(k: usize) -> TopK {
        TopK { k, items: Vec::with_capacity(k.min(1024) + 1), order: Vec::new(), offered: 0 }
    }

    /// Whether an entry of this throughput would be kept.
    pub fn accepts(&self, throughput: f64) -> bool {
        self.items.len() < self.k || self.items.last().is_some_and(|w| throughput > w.throughput_samples_per_s)
    }

    /// Offers an entry; it is kept if it is among the best `k` so far. Its generation index is
    /// the number of entries offered before it.
    pub fn offer(&mut self, r: Ranked) {
        let index = self.offered;
        self.offered += 1;
        self.offer_at(index, r);
    }

    /// Offers an entry generated at `index`; entries must be offered in increasing index order,
    /// so that among equal throughputs the earlier one stays ahead.
    pub fn offer_at(&mut self, index: u64, r: Ranked) {
        if !self.accepts(r.throughput_samples_per_s) {
            return;
        }
        let at = self.items.partition_point(|x| x.throughput_samples_per_s >= r.throughput_samples_per_s);
        self.items.insert(at, r);
        self.order.insert(at, index);
        self.items.truncate(self.k);
        self.order.truncate(self.k);
    }

    /// The best `k` of several lists whose entries were offered by index (e.g. the shards of one
    /// search, each evaluating every n-th candidate): by throughput, ties by generation index —
    /// the list a single run over all entries keeps.
    pub fn merge<'a>(k: usize, parts: impl IntoIterator<Item = &'a TopK>) -> TopK {
        let mut all: Vec<(u64, Ranked)> =
            parts.into_iter().flat_map(|t| t.order.iter().copied().zip(t.items.iter().copied())).collect();
        crate::sort::sort_by(&mut all, |(ia, a), (ib, b)| {
            b.throughput_samples_per_s.total_cmp(&a.throughput_samples_per_s).then(ia.cmp(ib))
        });
        all.truncate(k);
        let (order, items) = all.into_iter().unzip();
        TopK { k, items, order, offered: 0 }
    }

    /// The kept entries, best first.
    pub fn items(&self) -> &[Ranked] {
        &self.items
    }

    /// The kept entries, best first, with their generation indices.
    pub fn indexed(&self) -> impl Iterator<Item = (u64, Ranked)> + '_ {
        self.order.iter().copied().zip(self.items.iter().copied())
    }

    /// A list keeping at most `k` entries holding `entries` (generation index, entry), best first
    /// as [`TopK::indexed`] gives them.
    pub fn from_indexed(k: usize, entries: &[(u64, Ranked)]) -> TopK {
        let mut entries = entries.to_vec();
        entries.truncate(k);
        let (order, items) = entries.into_iter().unzip();
        TopK { k, items, order, offered: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(t: f64, dp: u64) -> Ranked {
        Ranked {
            candidate: Candidate::one_d(dp, 1, 1, 1, 1, 1, 1),
            throughput_samples_per_s: t,
            time_per_iteration_s: 1.0 / t,
            mem_gb: 1.0,
            need_gb: 1.0,
            totals: Totals::default(),
            experts: None,
            execution: None,
        }
    }

    #[test]
    fn keeps_the_best_and_the_first_of_ties() {
        let mut top = TopK::new(3);
        for (t, id) in [(1.0, 1), (5.0, 2), (3.0, 3), (5.0, 4), (0.5, 5), (4.0, 6)] {
            top.offer(r(t, id));
        }
        let got: Vec<(f64, u64)> = top.items().iter().map(|x| (x.throughput_samples_per_s, x.candidate.dp)).collect();
        assert_eq!(got, vec![(5.0, 2), (5.0, 4), (4.0, 6)]);
        assert!(!top.accepts(4.0));
        assert!(TopK::new(0).items().is_empty());
    }

    #[test]
    fn merged_shards_equal_one_run() {
        let entries = [(1.0, 1), (5.0, 2), (3.0, 3), (5.0, 4), (0.5, 5), (4.0, 6), (5.0, 7), (4.0, 8)];
        let mut one = TopK::new(4);
        for (t, id) in entries {
            one.offer(r(t, id));
        }
        for n in 1..=4usize {
            let mut shards: Vec<TopK> = (0..n).map(|_| TopK::new(4)).collect();
            for (i, (t, id)) in entries.iter().enumerate() {
                shards[i % n].offer_at(i as u64, r(*t, *id));
            }
            assert_eq!(TopK::merge(4, &shards).items(), one.items(), "{n} shards");
        }
    }
}
