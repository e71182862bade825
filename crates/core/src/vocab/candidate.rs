//! One parallel configuration of the search space (spec §7): the degrees and fast-domain shares
//! every model prices, every search generates and every result names. The rules a configuration
//! must satisfy to be evaluated are the reference model's ([`crate::reference::candidate`]).

use crate::Strategy;

/// Largest global batch accepted [samples] (keeps every integer product of the model in range).
pub const MAX_GLOBAL_BATCH: u64 = 1 << 32;
/// Largest device count accepted [devices].
pub const MAX_DEVICES: u64 = 1 << 32;

/// One configuration in the unified form of all three strategies.
///
/// * `1d`: `tp1 = tp`, `tp2 = 1`, `nv_tp2 = 1`, `nb = 1`.
/// * `2d` (SUMMA): grid `tp1` (features) × `tp2` (tokens), `nb` panels.
/// * `2d-seqp`: `tp1` tensor parallel × `tp2` context parallel, `nb = 1`.
///
/// All fields are counts: degrees and fast-domain shares in devices, `mbs` in samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    /// Tensor-parallel strategy.
    pub strategy: Strategy,
    /// Data-parallel degree.
    pub dp: u64,
    /// Tensor-parallel degree (1d) or first grid dimension (features/heads).
    pub tp1: u64,
    /// Second grid dimension (tokens); 1 in 1d.
    pub tp2: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Micro-batch size [samples].
    pub mbs: u64,
    /// SUMMA panel count; 1 unless 2d.
    pub nb: u64,
    /// Members of the `tp1` group inside one fast domain.
    pub nv_tp1: u64,
    /// Members of the `tp2` group inside one fast domain; 1 in 1d.
    pub nv_tp2: u64,
    /// Members of the data-parallel group inside one fast domain.
    pub nv_dp: u64,
    /// Pipeline stages inside one fast domain.
    pub nv_pp: u64,
}

impl Candidate {
    /// A 1d configuration (`tp2 = nv_tp2 = nb = 1`).
    #[allow(clippy::too_many_arguments)]
    pub fn one_d(dp: u64, tp: u64, pp: u64, mbs: u64, nv_tp: u64, nv_dp: u64, nv_pp: u64) -> Candidate {
        Candidate {
            strategy: Strategy::OneD,
            dp,
            tp1: tp,
            tp2: 1,
            pp,
            mbs,
            nb: 1,
            nv_tp1: nv_tp,
            nv_tp2: 1,
            nv_dp,
            nv_pp,
        }
    }

    /// Total tensor-parallel degree `tp1·tp2`.
    pub fn tp(&self) -> u64 {
        self.tp1.saturating_mul(self.tp2)
    }

    /// Devices used `dp·tp1·tp2·pp` (saturating; validated configurations never saturate).
    pub fn n_gpus(&self) -> u64 {
        self.dp.saturating_mul(self.tp()).saturating_mul(self.pp)
    }

    /// Micro-batches per iteration `⌊⌊G/dp⌋/mbs⌋` (0 if `dp` or `mbs` is 0).
    pub fn microbatches(&self, global_batch: u64) -> u64 {
        global_batch.checked_div(self.dp).and_then(|x| x.checked_div(self.mbs)).unwrap_or(0)
    }

    /// Group and fast share of the data-parallel collectives (§5.1): `(dp, nv_dp)`, or
    /// `(dp·tp2, nv_dp·nv_tp2)` under context parallelism.
    pub fn dp_group(&self) -> (u64, u64) {
        match self.strategy {
            Strategy::ContextParallel2D => (self.dp * self.tp2, self.nv_dp * self.nv_tp2),
            _ => (self.dp, self.nv_dp),
        }
    }

    /// The degree that shards optimizer states besides `dp` (`tp2` for 2d-seqp, else 1).
    pub fn optimizer_shards(&self) -> u64 {
        if self.strategy == Strategy::ContextParallel2D { self.tp2 } else { 1 }
    }

    /// The candidate as the reference's tuple (see `meta.tuple_orders` of the golden file):
    /// 1d `(dp, tp, pp, mbs, nv_tp, nv_dp, nv_pp)`; 2d `(dp, tp1, tp2, pp, mbs, nb, nv_tp1, nv_tp2,
    /// nv_dp, nv_pp)`; 2d-seqp the same without `nb`.
    pub fn reference_tuple(&self) -> Vec<u64> {
        let c = self;
        match c.strategy {
            Strategy::OneD => vec![c.dp, c.tp1, c.pp, c.mbs, c.nv_tp1, c.nv_dp, c.nv_pp],
            Strategy::Summa2D => vec![c.dp, c.tp1, c.tp2, c.pp, c.mbs, c.nb, c.nv_tp1, c.nv_tp2, c.nv_dp, c.nv_pp],
            Strategy::ContextParallel2D => vec![c.dp, c.tp1, c.tp2, c.pp, c.mbs, c.nv_tp1, c.nv_tp2, c.nv_dp, c.nv_pp],
        }
    }
}

/// Divisors of `x` in ascending order (`divisors(0)` is empty).
pub fn divisors(x: u64) -> Vec<u64> {
    let mut low = Vec::new();
    let mut high = Vec::new();
    let mut d = 1u64;
    while d.saturating_mul(d) <= x {
        if x.is_multiple_of(d) {
            low.push(d);
            if d != x / d {
                high.push(x / d);
            }
        }
        d += 1;
    }
    low.extend(high.into_iter().rev());
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_ascending() {
        assert_eq!(divisors(12), vec![1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(1), vec![1]);
        assert_eq!(divisors(16), vec![1, 2, 4, 8, 16]);
        assert!(divisors(0).is_empty());
    }
}
