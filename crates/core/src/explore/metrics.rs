//! Numbers derived from a configuration's throughput and memory: training time for a budget and
//! memory against the device's capacity (model-FLOP utilisation is [`crate::vocab::mfu`]).

use crate::catalog::TrainingBudget;

/// Seconds in a day [s/day].
pub const SECONDS_PER_DAY: f64 = 86_400.0;

/// Days to train on `budget` at `throughput` [samples/s], for samples of `seq_len` tokens
/// (a token budget becomes `tokens / seq_len` samples): `samples / throughput / 86400` [days],
/// the published study's conversion (spec §8). Infinite when the throughput is not positive.
pub fn training_days(budget: TrainingBudget, seq_len: u64, throughput_samples_per_s: f64) -> f64 {
    if throughput_samples_per_s.is_nan() || throughput_samples_per_s <= 0.0 {
        return f64::INFINITY;
    }
    budget.samples(seq_len) / throughput_samples_per_s / SECONDS_PER_DAY
}

/// Memory per device against the device's capacity.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MemoryFit {
    /// Memory a device needs [GB] (with the allocator's cache: the device figure).
    pub used_gb: f64,
    /// What it needs once the allocator has given its cache back [GB]
    /// ([`crate::vocab::Outcome::need_gb`]; `used_gb` in reference mode): what the search judges
    /// its fit by.
    pub need_gb: f64,
    /// The device's memory capacity [GB].
    pub capacity_gb: f64,
}

impl MemoryFit {
    /// Whether the configuration fits (`need ≤ capacity`, as the search decides).
    pub fn fits(&self) -> bool {
        // As the search decides: only strictly more than the capacity is rejected (NaN fits).
        self.need_gb.partial_cmp(&self.capacity_gb) != Some(std::cmp::Ordering::Greater)
    }

    /// The need the memory verdict judges ([`crate::vocab::Need`]).
    pub fn need(&self) -> crate::vocab::Need {
        crate::vocab::Need { with_cache_gb: self.used_gb, without_cache_gb: self.need_gb }
    }

    /// How much more than the capacity is needed even without the allocator's cache [GB] (0 when
    /// it fits).
    pub fn over_gb(&self) -> f64 {
        (self.need_gb - self.capacity_gb).max(0.0)
    }

    /// Capacity left [GB] (negative when over).
    pub fn headroom_gb(&self) -> f64 {
        self.capacity_gb - self.used_gb
    }

    /// `used / capacity` [fraction; above 1 when over].
    pub fn fraction(&self) -> f64 {
        if self.capacity_gb > 0.0 { self.used_gb / self.capacity_gb } else { f64::INFINITY }
    }
}
