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
}

/// The verdict for a need of `need_gb` on `capacity_gb` with relative band `band` (a need within `band` of the capacity either way is `Tight`).
pub fn fits(need_gb: f64, capacity_gb: f64, band: f64) -> Fits {
    if need_gb * (1.0 + band) <= capacity_gb {
        Fits::Yes
    } else if need_gb * (1.0 - band) > capacity_gb {
        Fits::No
    } else {
        Fits::Tight
    }
}
