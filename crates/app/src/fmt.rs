//! How the explorer writes numbers: fixed decimals per quantity (so that columns align and the
//! printed precision is predictable), thousands separators for counts.

/// `v` with `decimals` digits after the point; `–` when not finite (the charts' own
/// [`fmperf_chart::format::format_fixed`], so a chart's label and a table's cell agree).
pub fn fixed(v: f64, decimals: usize) -> String {
    fmperf_chart::format::format_fixed(v, decimals)
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

/// Training time [days]: 2 decimals below 100 days, 1 above, and in powers of ten from a
/// million days (`3.2e9`), so that no figure runs to hundreds of digits.
pub fn days(v: f64) -> String {
    if v.is_finite() && v >= 1e6 {
        compact(v)
    } else if v.is_finite() && v >= 100.0 {
        fixed(v, 1)
    } else {
        fixed(v, 2)
    }
}

/// A large amount in few characters: grouped digits below a million (`840,000`), else a power of
/// ten with two significant decimals (`1.50e13`); `–` when not finite.
pub fn compact(v: f64) -> String {
    if !v.is_finite() {
        "–".to_string()
    } else if v.abs() < 1e6 {
        count(v.round().max(0.0) as u64)
    } else {
        format!("{v:.2e}")
    }
}

/// Decimals of every memory figure [GB] on the page: tables, headline, sentences, charts.
pub const GB_DECIMALS: u8 = 1;

/// How a memory chart writes its figures (bar totals, tooltips): as [`gb`] does.
pub const GB_FORMAT: fmperf_chart::ValueFormat = fmperf_chart::ValueFormat::Fixed(GB_DECIMALS);

/// Memory [GB], [`GB_DECIMALS`] decimals.
pub fn gb(v: f64) -> String {
    fixed(v, usize::from(GB_DECIMALS))
}

/// A fraction as a percentage with 1 decimal: `63.1 %`.
pub fn percent(fraction: f64) -> String {
    format!("{} %", fixed(fraction * 100.0, 1))
}

/// `text` with its spaces made no-break spaces (U+00A0): a figure and its unit (`6.9 %`,
/// `85.5 GB`) that a wrapped title or label must not split (the charts' wrapping keeps them whole).
pub fn unbroken(text: &str) -> String {
    text.replace(' ', "\u{a0}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_with_units_stay_whole() {
        assert_eq!(unbroken(&percent(0.069)), "6.9\u{a0}%");
        assert_eq!(unbroken(&format!("{} GB", gb(85.5))), "85.5\u{a0}GB");
        assert_eq!(unbroken("85.5"), "85.5");
    }

    #[test]
    fn a_memory_chart_writes_memory_as_the_table_does() {
        for v in [69.0, 68.96, 0.6, 0.04, 123.45, 85.5] {
            assert_eq!(GB_FORMAT.format(v), gb(v), "{v}");
        }
        assert_eq!(gb(69.0), "69.0");
        assert_eq!(GB_FORMAT.format(f64::NAN), "–");
    }

    #[test]
    fn large_numbers_stay_short() {
        assert_eq!(days(1e300), "1.00e300");
        assert_eq!(days(123.45), "123.5");
        assert_eq!(days(1.234), "1.23");
        assert_eq!(compact(840_000.0), "840,000");
        assert_eq!(compact(1.5e13), "1.50e13");
    }
}
