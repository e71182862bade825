//! What the property tests share: a seeded generator of our own (no extra dependency) and the
//! environment knobs every fuzz test reads (`FMPERF_FUZZ_CASES`, `FMPERF_FUZZ_SEED`).
#![allow(dead_code)]

/// SplitMix64: small, fast, reproducible.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    /// An index below `n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }
    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// `FMPERF_FUZZ_CASES` or `default`.
pub fn cases(default: usize) -> usize {
    std::env::var("FMPERF_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `FMPERF_FUZZ_SEED` or `default`.
pub fn seed(default: u64) -> u64 {
    std::env::var("FMPERF_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
