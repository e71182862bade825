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

/// The verdict for a need of `need_gb` on `capacity_gb` with relative band `band` either way (a
/// need within `band` of the capacity either way is `Tight`): [`fits_between`] with `band` twice.
pub fn fits(need_gb: f64, capacity_gb: f64, band: f64) -> Fits {
    fits_between(need_gb, capacity_gb, band, band)
}

/// The verdict with a band of each side: `Yes` when the need fits even if it was under-predicted
/// by `under` (`need·(1 + under) ≤ capacity`: a `yes` that runs out of memory is the costly
/// mistake), `No` when it does not fit even if it was over-predicted by `over`
/// (`need·(1 − over) > capacity`), else `Tight` (may not fit).
pub fn fits_between(need_gb: f64, capacity_gb: f64, under: f64, over: f64) -> Fits {
    let (low, high) = need_range_gb(need_gb, under, over);
    if high <= capacity_gb {
        Fits::Yes
    } else if low > capacity_gb {
        Fits::No
    } else {
        Fits::Tight
    }
}

/// The range a need of `need_gb` may really take [GB] that [`fits_between`] judges: from
/// `need·(1 − over)` (over-predicted by `over`) to `need·(1 + under)` (under-predicted by `under`).
/// What a chart draws as the need's whisker against the capacity.
pub fn need_range_gb(need_gb: f64, under: f64, over: f64) -> (f64, f64) {
    (need_gb * (1.0 - over), need_gb * (1.0 + under))
}
