//! The reference's search space (spec §7.1–7.4): candidate generators and the list of candidates
//! of one search, in the order of the reference's nested loops.

use crate::vocab::{Candidate, divisors};
use crate::{ModelShape, Strategy};

/// Pipeline degrees: divisors of `min(⌊n/tp⌋, D)` with `n mod (tp·pp) = 0` and `D mod pp = 0`
/// (equal stages).
pub fn pp_cands(n: u64, tp: u64, depth: u64) -> Vec<u64> {
    if tp == 0 {
        return Vec::new();
    }
    divisors((n / tp).min(depth))
        .into_iter()
        .filter(|&pp| n.is_multiple_of(tp * pp) && depth.is_multiple_of(pp))
        .collect()
}

/// Micro-batch sizes: divisors of the local batch `G/dp` with `(mbs·l) mod split = 0`, where
/// `split` is the sequence split (`tp` in 1d, `tp2` in 2d, `tp1·tp2` in 2d-seqp). Quirk Q10: only
/// `mbs·l`, not `l`, needs to be divisible.
pub fn mbs_cands(global_batch: u64, split: u64, dp: u64, l: u64) -> Vec<u64> {
    if dp == 0 || split == 0 {
        return Vec::new();
    }
    divisors(global_batch / dp).into_iter().filter(|&c| (c as u128 * l as u128).is_multiple_of(split as u128)).collect()
}

/// Fast-domain placements of `dims` on domains of `nvs` devices: if the whole job fits
/// (`Π dims ≤ nvs`) the single placement `dims`; otherwise every factorisation
/// `nvs = n1·n2·…` (loops nested in the order of `dims`, each factor a divisor of what is left,
/// the last one the rest) with `n_i | dims_i`. The domain is always exactly filled.
fn placements<const K: usize>(dims: [u64; K], nvs: u64) -> Vec<[u64; K]> {
    let total = dims.iter().fold(1u128, |a, &d| a * d as u128);
    if total <= nvs as u128 {
        return vec![dims];
    }
    let mut out = Vec::new();
    let mut cur = [1u64; K];
    fn rec<const K: usize>(i: usize, rest: u64, dims: &[u64; K], cur: &mut [u64; K], out: &mut Vec<[u64; K]>) {
        if i + 1 == K {
            cur[i] = rest;
            if dims[i].is_multiple_of(rest) {
                out.push(*cur);
            }
            return;
        }
        for d in divisors(rest) {
            if dims[i].is_multiple_of(d) {
                cur[i] = d;
                rec(i + 1, rest / d, dims, cur, out);
            }
        }
    }
    if nvs > 0 {
        rec(0, nvs, &dims, &mut cur, &mut out);
    }
    out
}

/// Placements on **partial** domains, for groups that cannot fill a whole domain of `nvs`
/// (e.g. power-of-two groups on NVL72's 72-device domains): each domain holds `p` devices of the
/// job, where `p < nvs` is the largest product `n1·n2·…` with `n_i | dims_i` (the other
/// `nvs − p` devices of each domain stay idle); every placement reaching `p`, in the nested order
/// of [`placements`]. Empty when the dims can exactly fill a domain (`nvs | Π dims`: every prime
/// power of `nvs` can be spread over the dims) or the job fits in one.
pub fn partial_placements<const K: usize>(dims: [u64; K], nvs: u64) -> Vec<[u64; K]> {
    let total = dims.iter().fold(1u128, |a, &d| a * d as u128);
    if nvs == 0 || total <= nvs as u128 || total.is_multiple_of(nvs as u128) {
        return Vec::new();
    }
    let divs: Vec<Vec<u64>> = dims.iter().map(|&d| divisors(d).into_iter().filter(|&x| x <= nvs).collect()).collect();
    let mut best = 0u64;
    let mut out: Vec<[u64; K]> = Vec::new();
    let mut cur = [1u64; K];
    #[allow(clippy::too_many_arguments)]
    fn rec<const K: usize>(
        i: usize,
        prod: u64,
        nvs: u64,
        divs: &[Vec<u64>],
        cur: &mut [u64; K],
        best: &mut u64,
        out: &mut Vec<[u64; K]>,
    ) {
        if i == K {
            if prod > *best {
                *best = prod;
                out.clear();
            }
            if prod == *best {
                out.push(*cur);
            }
            return;
        }
        for &d in &divs[i] {
            let Some(p) = prod.checked_mul(d).filter(|&p| p <= nvs) else { break };
            cur[i] = d;
            rec(i + 1, p, nvs, divs, cur, best, out);
        }
    }
    rec(0, 1, nvs, &divs, &mut cur, &mut best, &mut out);
    out
}

/// `nv_cands_1d(tp, dp, pp, N_vs)`: placements `(nv_tp, nv_dp, nv_pp)`.
pub fn nv_cands_1d(tp: u64, dp: u64, pp: u64, nvs: u64) -> Vec<[u64; 3]> {
    placements([tp, dp, pp], nvs)
}

/// `nv_cands_2d(tp1, tp2, dp, pp, N_vs)`: placements `(nv_tp1, nv_tp2, nv_dp, nv_pp)`.
pub fn nv_cands_2d(tp1: u64, tp2: u64, dp: u64, pp: u64, nvs: u64) -> Vec<[u64; 4]> {
    placements([tp1, tp2, dp, pp], nvs)
}

/// SUMMA panel counts: `s = max(tp1, tp2)`, ladder `s·2^i` for integers `0 ≤ i < log2(⌊e/s⌋)`;
/// only `s` if `e/s < 512`, else the ladder values `c` with `e mod c = 0` and `⌊e/c⌋ ≥ 512`.
///
/// The reference compares `i` with the real `log2(⌊e/s⌋)`; `i < log2(x)` is evaluated exactly as
/// `2^i < x` (same set, no floating point). An empty ladder (`⌊e/s⌋ ≤ 1`, where the reference
/// raises an IndexError) gives no candidates.
pub fn nb_cands(tp1: u64, tp2: u64, e: u64) -> Vec<u64> {
    let s = tp1.max(tp2);
    if s == 0 {
        return Vec::new();
    }
    let x = e / s;
    let ladder: Vec<u64> = (0..64u32).take_while(|&i| (1u128 << i) < x as u128).map(|i| s << i).collect();
    if ladder.is_empty() {
        return Vec::new();
    }
    if (e as u128) < 512 * s as u128 {
        return vec![s];
    }
    ladder.into_iter().filter(|&c| e.is_multiple_of(c) && e / c >= 512).collect()
}

/// How a space is generated beyond the reference's own rules (spec §7). The reference's rules
/// ([`Rules::REFERENCE`]) are reproduced exactly by [`Space::new`]; the extensions are opt-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// Pipeline degrees that do not divide the depth: `pp` runs over the divisors of `n/tp` up to
    /// the depth (the busiest stage holds `⌈D/pp⌉` blocks; extended mode's `uneven_stages`).
    pub uneven_stages: bool,
    /// Points whose groups cannot exactly fill a fast domain are placed on partial domains
    /// ([`partial_placements`]) instead of being dropped.
    pub partial_domains: bool,
}

impl Rules {
    /// The reference's rules: `pp | D`, domains exactly filled (or the whole job in one domain).
    pub const REFERENCE: Rules = Rules { uneven_stages: false, partial_domains: false };
}

/// One point of the space without its placement: `(dp, tp1, tp2, pp, mbs, nb)` and the index of
/// its list of placements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Point {
    dp: u64,
    tp1: u64,
    tp2: u64,
    pp: u64,
    mbs: u64,
    nb: u64,
    placements: usize,
}

/// All candidates of one search (one strategy, model, domain size, device count and batch), in
/// the order of the reference's nested loops: `tp1, tp2, pp, mbs, nb, placement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Space {
    strategy: Strategy,
    devices: u64,
    points: Vec<Point>,
    placements: Vec<Vec<[u64; 4]>>,
    offsets: Vec<u64>,
    total: u64,
}

impl Space {
    /// Generates the space of `strategy` for `model` on `n` devices in fast domains of `nvs`, with
    /// `global_batch` samples per iteration (§7.2–7.4), exactly as the reference does. Every
    /// candidate satisfies [`Candidate::check`]: where that needs more than the reference's own
    /// filters (models with `f < tp1` or sequences shorter than their split, which the reference
    /// cannot evaluate), those points are left out.
    pub fn new(strategy: Strategy, model: &ModelShape, nvs: u64, n: u64, global_batch: u64) -> Space {
        Space::with_rules(strategy, model, nvs, n, global_batch, Rules::REFERENCE)
    }

    /// The space generated with `rules` (the reference's loops and order, with the extensions
    /// `rules` turns on). With [`Rules::REFERENCE`] this is [`Space::new`].
    pub fn with_rules(
        strategy: Strategy,
        model: &ModelShape,
        nvs: u64,
        n: u64,
        global_batch: u64,
        rules: Rules,
    ) -> Space {
        let mut space =
            Space { strategy, devices: n, points: Vec::new(), placements: Vec::new(), offsets: Vec::new(), total: 0 };
        let ModelShape { l, e, h, depth, f } = *model;
        if h == 0 || e == 0 || l == 0 || n == 0 {
            return space;
        }
        for tp1 in divisors(n) {
            if !h.is_multiple_of(tp1) || !e.is_multiple_of(tp1) || tp1 > f {
                continue;
            }
            let tp2s = match strategy {
                Strategy::OneD => vec![1],
                Strategy::Summa2D => divisors(n / tp1).into_iter().filter(|&t| e.is_multiple_of(t)).collect(),
                Strategy::ContextParallel2D => divisors(n / tp1),
            };
            for tp2 in tp2s {
                let tp = tp1 * tp2;
                let (keep, split) = match strategy {
                    Strategy::OneD => ((3 * e) / tp >= 128 && tp <= l, tp),
                    // LayerNorm2D's width is ⌊l/tp1⌋ (quirk Q1): it must not be empty.
                    Strategy::Summa2D => (e / tp1 >= 128 && l / tp2 >= 128 && tp1 <= l, tp2),
                    Strategy::ContextParallel2D => (e / tp1 >= 128 && l / tp2 >= 128 && tp <= l, tp),
                };
                if !keep {
                    continue;
                }
                let nbs = if strategy == Strategy::Summa2D { nb_cands(tp1, tp2, e) } else { vec![1] };
                let pps = if rules.uneven_stages {
                    divisors(n / tp).into_iter().filter(|&pp| pp <= depth).collect()
                } else {
                    pp_cands(n, tp, depth)
                };
                for pp in pps {
                    let dp = n / (tp * pp);
                    if dp > global_batch || !global_batch.is_multiple_of(dp) {
                        continue;
                    }
                    let mut list = match strategy {
                        Strategy::OneD => {
                            nv_cands_1d(tp, dp, pp, nvs).into_iter().map(|[a, b, c]| [a, 1, b, c]).collect()
                        }
                        _ => nv_cands_2d(tp1, tp2, dp, pp, nvs),
                    };
                    if list.is_empty() && rules.partial_domains {
                        list = match strategy {
                            Strategy::OneD => partial_placements([tp, dp, pp], nvs)
                                .into_iter()
                                .map(|[a, b, c]| [a, 1, b, c])
                                .collect(),
                            _ => partial_placements([tp1, tp2, dp, pp], nvs),
                        };
                    }
                    if list.is_empty() {
                        continue;
                    }
                    let index = space.placements.len();
                    let count = list.len() as u64;
                    space.placements.push(list);
                    for mbs in mbs_cands(global_batch, split, dp, l) {
                        for &nb in &nbs {
                            space.offsets.push(space.total);
                            space.total += count;
                            space.points.push(Point { dp, tp1, tp2, pp, mbs, nb, placements: index });
                        }
                    }
                }
            }
        }
        space
    }

    /// Keeps the points (all their placements) for which `keep(dp, tp1, tp2, pp, mbs)` holds, in
    /// order (a user's fixed micro-batch or context-parallel degree).
    pub fn retain(&mut self, mut keep: impl FnMut(&Candidate) -> bool) {
        let points = std::mem::take(&mut self.points);
        self.offsets.clear();
        self.total = 0;
        for p in points {
            let first = self.candidate_of(&p, 0);
            if keep(&first) {
                self.offsets.push(self.total);
                self.total += self.placements[p.placements].len() as u64;
                self.points.push(p);
            }
        }
    }

    /// Devices every candidate uses.
    pub fn devices(&self) -> u64 {
        self.devices
    }

    /// The strategy of the space.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Number of candidates.
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Whether the space is empty.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The candidate at `index` (in generation order), if any.
    pub fn get(&self, index: u64) -> Option<Candidate> {
        if index >= self.total {
            return None;
        }
        let p = self.offsets.partition_point(|&o| o <= index) - 1;
        Some(self.candidate(p, (index - self.offsets[p]) as usize))
    }

    /// Every candidate, in generation order.
    pub fn iter(&self) -> impl Iterator<Item = Candidate> + '_ {
        (0..self.points.len())
            .flat_map(move |p| (0..self.placements[self.points[p].placements].len()).map(move |k| self.candidate(p, k)))
    }

    /// The `k`-th placement of the `p`-th point.
    fn candidate(&self, p: usize, k: usize) -> Candidate {
        self.candidate_of(&self.points[p], k)
    }

    fn candidate_of(&self, pt: &Point, k: usize) -> Candidate {
        let [nv_tp1, nv_tp2, nv_dp, nv_pp] = self.placements[pt.placements][k];
        Candidate {
            strategy: self.strategy,
            dp: pt.dp,
            tp1: pt.tp1,
            tp2: pt.tp2,
            pp: pt.pp,
            mbs: pt.mbs,
            nb: pt.nb,
            nv_tp1,
            nv_tp2,
            nv_dp,
            nv_pp,
        }
    }

    /// Iterates from a position `(point, placement)` onwards; used by the resumable search.
    pub(crate) fn walk(&self, from: (usize, usize)) -> impl Iterator<Item = ((usize, usize), Candidate)> + '_ {
        let (p0, k0) = from;
        (p0..self.points.len()).flat_map(move |p| {
            let start = if p == p0 { k0 } else { 0 };
            (start..self.placements[self.points[p].placements].len()).map(move |k| ((p, k), self.candidate(p, k)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_and_microbatch_candidates() {
        assert_eq!(pp_cands(64, 4, 128), vec![1, 2, 4, 8, 16]);
        assert_eq!(pp_cands(64, 1, 96), vec![1, 2, 4, 8, 16, 32]);
        assert_eq!(mbs_cands(4096, 4, 1024, 2048), vec![1, 2, 4]);
        // ViT: 64800 = 2^5·2025, so a split of 64 needs an even micro-batch (quirk Q10).
        assert_eq!(mbs_cands(4096, 64, 512, 64800), vec![2, 4, 8]);
    }

    #[test]
    fn placements_fill_the_domain_or_hold_the_job() {
        assert_eq!(nv_cands_1d(2, 1, 1, 4), vec![[2, 1, 1]]);
        assert_eq!(nv_cands_1d(4, 2, 2, 4), vec![[1, 2, 2], [2, 1, 2], [2, 2, 1], [4, 1, 1]]);
        assert!(nv_cands_1d(3, 3, 3, 4).is_empty());
        for c in nv_cands_2d(8, 2, 4, 4, 16) {
            assert_eq!(c.iter().product::<u64>(), 16);
        }
    }

    #[test]
    fn summa_panel_ladder() {
        // e = 25600, s = 8: ⌊e/s⌋ = 3200, i < 11.64 → 8·2^0 … 8·2^11; keep divisors with e/c ≥ 512.
        assert_eq!(nb_cands(8, 1, 25600), vec![8, 16, 32]);
        assert_eq!(nb_cands(1, 64, 25600), vec![64]);
        assert_eq!(nb_cands(128, 2, 25600), vec![128]);
        assert_eq!(nb_cands(4, 4, 12288), vec![4, 8, 16]);
    }

    #[test]
    fn indexing_matches_iteration() {
        let s = Space::new(Strategy::Summa2D, &ModelShape::GPT3_1T, 8, 64, 4096);
        let all: Vec<Candidate> = s.iter().collect();
        assert_eq!(all.len() as u64, s.len());
        for i in (0..s.len()).step_by(97) {
            assert_eq!(s.get(i), Some(all[i as usize]));
        }
        assert_eq!(s.get(s.len()), None);
    }
}
