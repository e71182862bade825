//! How the explorer writes numbers: fixed decimals per quantity (so that columns align and the
//! printed precision is predictable), thousands separators for counts.

/// `v` with `decimals` digits after the point; `–` when not finite.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() { format!("{v:.decimals$}") } else { "–".to_string() }
}

/// An integer with comma grouping: `84,646`.
pub fn count(v: u64) -> String {
    fmperf_chart::format::format_grouped(v)
}

/// Throughput [samples/s], 2 decimals.
pub fn throughput(v: f64) -> String {
    fixed(v, 2)
}

/// Time per step [s], 3 decimals.
pub fn seconds(v: f64) -> String {
    fixed(v, 3)
}

/// Training time [days]: 2 decimals below 100 days, 1 above.
pub fn days(v: f64) -> String {
    if v.is_finite() && v >= 100.0 { fixed(v, 1) } else { fixed(v, 2) }
}

/// Memory [GB], 1 decimal.
pub fn gb(v: f64) -> String {
    fixed(v, 1)
}

/// A fraction as a percentage with 1 decimal: `63.1 %`.
pub fn percent(fraction: f64) -> String {
    format!("{} %", fixed(fraction * 100.0, 1))
}
