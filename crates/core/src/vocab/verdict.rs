//! The memory verdict every output shares: will a device-level need fit its capacity, given the
//! error band of the memory model (validation's held-out band, [`crate::validate::memory::shipped_band`]).
//! A search's result rows, an estimate and a validated run all say it in these words.

/// Will it fit: the verdict on a device-level need against the capacity, with the error band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fits {
    /// Fits even at the top of the band.
    Yes,
    /// Within the band of the capacity: may not fit.
    Tight,
    /// Does not fit even at the bottom of the band.
    No,
}

impl Fits {
    /// `yes` / `tight` / `no`.
    pub fn as_str(self) -> &'static str {
        match self {
            Fits::Yes => "yes",
            Fits::Tight => "tight",
            Fits::No => "no",
        }
    }

    /// The verdict in a reader's words, as the page's import, rows and breakdown say it after
    /// "needs X ± Y of Z GB:" (`fits`, `may not fit`, `does not fit`).
    pub fn words(self) -> &'static str {
        match self {
            Fits::Yes => "fits",
            Fits::Tight => "may not fit",
            Fits::No => "does not fit",
        }
    }

    /// [`Self::words`] where a table cell says only what needs a reader's attention: `None` for a
    /// plain fit.
    pub fn short_words(self) -> Option<&'static str> {
        (self != Fits::Yes).then(|| self.words())
    }
}

/// A device-level need as the verdict judges it [GB]: what a run shows with its caching
/// allocator's cache (`with_cache_gb`: the reserved figure plus the CUDA context and the
/// collective buffers — the device figure predictions are scored on) and what it needs once the
/// allocator has handed that cache back (`without_cache_gb`: allocated plus context and buffers).
///
/// PyTorch's caching allocator, when `cudaMalloc` fails, frees the cached blocks that would serve
/// the request and then every unsplit cached block before it retries, and raises an out-of-memory
/// error only when that retry fails too (pytorch/pytorch `c10/cuda/CUDACachingAllocator.cpp`,
/// `DeviceCachingAllocator::malloc`, commit 001074d25084fdb87a799823e395a50f5ec044d3:
/// `alloc_block` || `release_available_cached_blocks` + `alloc_block` || `release_cached_blocks` +
/// `alloc_block`; its comment: "at this point free_cached_blocks has already returned all
/// possible 'cached' memory to the driver. The only remaining 'cached' memory is split from a
/// larger block that is partially in-use"). So reserved − allocated is what a run shows with
/// memory to spare, not what it needs. The unreleasable remainder (free pieces of partially used
/// segments) is not modelled and counted as none: `without_cache_gb` is the least a run can need,
/// the side a `no` must fail even at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Need {
    /// With the allocator's cache [GB] (the reserved-based device figure).
    pub with_cache_gb: f64,
    /// Without the cache the allocator releases before an out-of-memory error [GB] (≤ the other).
    /// Validation takes it at the most memory-saving reading of what a run's source leaves
    /// unstated (a run whose recomputation is not stated, priced with none, at full
    /// recomputation: `validate::prepared`), so that a `no` holds however the run ran.
    pub without_cache_gb: f64,
}

impl Need {
    /// One figure for both sides (reference mode, which has no allocator cache).
    pub fn single(gb: f64) -> Need {
        Need { with_cache_gb: gb, without_cache_gb: gb }
    }
}

/// The verdict for a need of `need_gb` on `capacity_gb` with relative band `band` either way (a
/// need within `band` of the capacity either way is `Tight`): [`fits_between`] with `band` twice
/// and one figure for both sides of the need.
pub fn fits(need_gb: f64, capacity_gb: f64, band: f64) -> Fits {
    fits_between(Need::single(need_gb), capacity_gb, band, band)
}

/// The two-sided verdict: `Yes` when the need *with* the allocator's cache fits even if it was
/// under-predicted by `under` (`with·(1 + under) ≤ capacity`: a `yes` that runs out of memory is
/// the costly mistake), `No` when the need *without* the cache does not fit even if it was
/// over-predicted by `over` (`without·(1 − over) > capacity`: the allocator gives its cache back
/// before it fails, [`Need`]), else `Tight` (may not fit).
pub fn fits_between(need: Need, capacity_gb: f64, under: f64, over: f64) -> Fits {
    let (low, high) = need_range_gb(need, under, over);
    if high <= capacity_gb {
        Fits::Yes
    } else if low > capacity_gb {
        Fits::No
    } else {
        Fits::Tight
    }
}

/// The range a need may really take [GB] that [`fits_between`] judges: from
/// `without·(1 − over)` (over-predicted by `over`, the cache given back) to `with·(1 + under)`
/// (under-predicted by `under`, the cache kept). What a chart draws as the need's whisker against
/// the capacity.
pub fn need_range_gb(need: Need, under: f64, over: f64) -> (f64, f64) {
    (need.without_cache_gb * (1.0 - over), need.with_cache_gb * (1.0 + under))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sided_verdict_by_hand() {
        // USP's Llama 3 8B at 64K tokens, tp 1, cp 16 (held-out file usp-long-sequence-splits.json,
        // a run that ran on an 85.899 GB A800): 96.68 GB with the cache, 78.81 without (77.71
        // allocated + 0.6 context + 2 × 0.25 NCCL), bands under 0.302, over 0.08.
        let need = Need { with_cache_gb: 96.68, without_cache_gb: 78.81 };
        // Old rule (one figure): 96.68 · 0.92 = 88.95 > 85.899 → no.
        assert_eq!(fits_between(Need::single(96.68), 85.899, 0.302, 0.08), Fits::No);
        // Two-sided: 78.81 · 0.92 = 72.51 ≤ 85.899 (not no); 96.68 · 1.302 = 125.9 > 85.899 (not yes).
        assert_eq!(fits_between(need, 85.899, 0.302, 0.08), Fits::Tight);
        let (low, high) = need_range_gb(need, 0.302, 0.08);
        assert!((low - 78.81 * 0.92).abs() < 1e-12 && (high - 96.68 * 1.302).abs() < 1e-12);
        // No: even without the cache, 94 · 0.92 = 86.48 > 85.899.
        assert_eq!(fits_between(Need { with_cache_gb: 115.0, without_cache_gb: 94.0 }, 85.899, 0.302, 0.08), Fits::No);
        // Yes is judged with the cache: 60 · 1.302 = 78.12 ≤ 85.899, but 70 · 1.302 = 91.14 is
        // not, whatever the need without the cache (50 · 1.302 = 65.1 would fit).
        assert_eq!(fits_between(Need { with_cache_gb: 60.0, without_cache_gb: 49.0 }, 85.899, 0.302, 0.08), Fits::Yes);
        assert_eq!(
            fits_between(Need { with_cache_gb: 70.0, without_cache_gb: 50.0 }, 85.899, 0.302, 0.08),
            Fits::Tight
        );
    }

    #[test]
    fn an_unstated_policy_widens_the_need_to_its_least() {
        // Granite 7B under Accelerate with DeepSpeed ZeRO-3 on 4 A100 (held-out
        // stacks-not-met-runs.json, a run that ran), recomputation not stated: 288.4 GB with the
        // cache read as none; fully recomputed, 53.9 GB without the cache. One reading:
        // 0.92 × 235 > 85.899 → no. Both: 53.9 · 0.92 = 49.59 ≤ 85.899 (not no);
        // 288.4 · 1.302 = 375.5 > 85.899 (not yes) → tight.
        assert_eq!(fits_between(Need { with_cache_gb: 288.4, without_cache_gb: 235.0 }, 85.899, 0.302, 0.08), Fits::No);
        let widened = Need { with_cache_gb: 288.4, without_cache_gb: 53.9 };
        assert_eq!(fits_between(widened, 85.899, 0.302, 0.08), Fits::Tight);
        // A least need that does not fit even so stays no: 95 · 0.92 = 87.4 > 85.899 (USP's SP-only
        // 30K runs, 16 sequences of 30,720 tokens a micro-batch: 94.4 GB allocated fully
        // recomputed, plus the context and the collective buffers).
        assert_eq!(fits_between(Need { with_cache_gb: 410.0, without_cache_gb: 95.0 }, 85.899, 0.302, 0.08), Fits::No);
    }
}
