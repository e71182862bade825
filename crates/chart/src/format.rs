//! Number formatting for tick labels and tooltips: significant digits, SI prefixes for large
//! values, scientific notation for tiny ones, plain integers for counts, durations, percentages.
//!
//! The rules of [`format_resolved`], the base of the others:
//! - 0 prints as `0`; trailing zeros after a decimal point are dropped (`0.10` → `0.1`);
//! - |v| < 0.001 prints in scientific notation: `3.7e-5`;
//! - 0.001 ≤ |v| < 1000 prints as a plain decimal: `0.05`, `12.5`, `999`;
//! - |v| ≥ 1000 prints with an SI prefix (k, M, G, T, P, E) when three significant digits or fewer
//!   say it exactly (`1.2k`, `1.25k`, `4M`), else as a plain integer below a million
//!   (`16384`, `2024`), else with an SI prefix and as many digits as needed (`1.2346M`).

/// SI prefixes for thousands: 10^3 … 10^18.
const SI_PREFIXES: [&str; 6] = ["k", "M", "G", "T", "P", "E"];

/// The largest power of ten ≤ |v| as an exponent (`floor(log10 |v|)`), robust to log10 rounding
/// just below an integer. `v` must be finite and non-zero.
fn exponent(v: f64) -> i32 {
    let e = v.abs().log10().floor() as i32;
    if v.abs() >= pow10(e + 1) {
        e + 1
    } else if v.abs() < pow10(e) {
        e - 1
    } else {
        e
    }
}

/// 10^e, exact for small |e| in both directions.
fn pow10(e: i32) -> f64 {
    if e >= 0 { 10f64.powi(e) } else { 1.0 / 10f64.powi(-e) }
}

/// Rounds `v` to a multiple of 10^e (exact decimal arithmetic where possible).
fn round_to(v: f64, e: i32) -> f64 {
    if e >= 0 { (v / pow10(e)).round() * pow10(e) } else { (v * pow10(-e)).round() / pow10(-e) }
}

/// Drops trailing zeros (and a trailing point) from a decimal string; turns `-0` into `0`.
fn trim_decimal(s: String) -> String {
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" { "0".to_string() } else { s }
}

/// `v` with `decimals` digits after the point, trailing zeros dropped.
fn fixed(v: f64, decimals: usize) -> String {
    trim_decimal(format!("{v:.decimals$}"))
}

/// `v` with exactly `decimals` digits after the point, trailing zeros kept (`69.0`, `0.6`), so
/// that a column of figures aligns and reads alike everywhere; `–` when not finite.
pub fn format_fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() { format!("{v:.decimals$}") } else { "–".to_string() }
}

/// Formats `v` exactly to `resolution_exp` (the value is rounded to a multiple of
/// 10^resolution_exp first), following the rules in the module documentation. Non-finite values
/// print as `NaN`, `∞`, `-∞`.
pub fn format_resolved(v: f64, resolution_exp: i32) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞".to_string() } else { "-∞".to_string() };
    }
    let v = round_to(v, resolution_exp);
    if v == 0.0 {
        return "0".to_string();
    }
    let e = exponent(v);
    let digits = (e - resolution_exp + 1).max(1) as usize;
    if v.abs() < 1e-3 {
        let s = format!("{:.*e}", digits - 1, v);
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{}", trim_decimal(mantissa.to_string()), exp);
    }
    if v.abs() < 1e3 {
        return fixed(v, (-resolution_exp).max(0) as usize);
    }
    if digits > 3 && v.abs() < 1e6 {
        return fixed(v, (-resolution_exp).max(0) as usize);
    }
    let group = ((e / 3) as usize).min(SI_PREFIXES.len());
    if e >= 3 * (SI_PREFIXES.len() as i32 + 1) {
        return format!("{v:.0e}");
    }
    let scaled = v / pow10(3 * group as i32);
    let decimals = (3 * group as i32 - resolution_exp).max(0) as usize;
    format!("{}{}", fixed(scaled, decimals), SI_PREFIXES[group - 1])
}

/// `v` with `sig` significant digits (at least 1), per the module rules: `format_sig(1234.0, 2)`
/// is `1.2k`, `format_sig(0.0512, 1)` is `0.05`, `format_sig(3.71e-5, 2)` is `3.7e-5`.
pub fn format_sig(v: f64, sig: usize) -> String {
    if !v.is_finite() || v == 0.0 {
        return format_resolved(v, 0);
    }
    let sig = sig.max(1) as i32;
    let resolution = exponent(v) - sig + 1;
    // Rounding can carry into the next power (999.7 → 1000): recompute on the rounded value.
    let rounded = round_to(v, resolution);
    format_resolved(rounded, exponent(rounded) - sig + 1)
}

/// A count (devices, layers, tokens per batch…): a plain integer below a million (`16384`), else
/// [`format_sig`] with 4 digits (`1.049M`). Non-integers are rounded.
pub fn format_count(v: f64) -> String {
    if v.is_finite() && v.abs() < 1e6 {
        return format!("{}", v.round() as i64);
    }
    format_sig(v, 4)
}

/// An integer with comma grouping, for counts in text (`9,183,444`).
pub fn format_grouped(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Labels for ticks that are multiples of `step` (the distance between neighbouring linear ticks):
/// each label has just the digits that `step` resolves, so `0, 0.05, 0.1` and `0, 250, 500` and
/// `0, 2k, 4k` come out aligned and distinct.
pub fn format_linear_tick(v: f64, step: f64) -> String {
    if !(step > 0.0 && step.is_finite()) {
        return format_sig(v, 3);
    }
    format_resolved(v, exponent(step))
}

/// Label for a tick at a power of ten or at 1-2-5 × 10^k on a log axis: `1`, `20`, `5k`, `0.01`,
/// `1e-5`.
pub fn format_log_tick(v: f64) -> String {
    format_sig(v, 2)
}

/// A fraction as a percentage with `sig` significant digits: `format_percent(0.125, 3)` is
/// `12.5 %`.
pub fn format_percent(fraction: f64, sig: usize) -> String {
    format!("{} %", format_sig(fraction * 100.0, sig))
}

/// A unit to show durations in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DurationUnit {
    /// Unit name as printed after the number (`"s"`, `"min"`, `"h"`, `"days"` …).
    pub name: &'static str,
    /// Length of one unit in seconds.
    pub seconds: f64,
}

/// Duration units from the smallest to the largest.
pub const DURATION_UNITS: [DurationUnit; 6] = [
    DurationUnit { name: "µs", seconds: 1e-6 },
    DurationUnit { name: "ms", seconds: 1e-3 },
    DurationUnit { name: "s", seconds: 1.0 },
    DurationUnit { name: "min", seconds: 60.0 },
    DurationUnit { name: "h", seconds: 3600.0 },
    DurationUnit { name: "days", seconds: 86400.0 },
];

/// The unit to show a duration of `seconds` in: the largest unit with at least 1 of it, except
/// that minutes start at 2 min, hours at 2 h and days at 2 days (90 s reads better than 1.5 min).
/// Durations below 1 µs (and 0, NaN) use µs.
pub fn duration_unit(seconds: f64) -> DurationUnit {
    let s = seconds.abs();
    let threshold = |u: &DurationUnit| if u.seconds >= 60.0 { 2.0 * u.seconds } else { u.seconds };
    DURATION_UNITS.iter().rev().find(|u| s >= threshold(u)).copied().unwrap_or(DURATION_UNITS[0])
}

/// A duration in seconds in a readable unit with 3 significant digits (whole numbers from 1000
/// units up): `42 s`, `3.5 min`, `2.1 h`, `12.3 days`, `1234 days`, `350 ms`.
pub fn format_duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return format!("{} s", format_resolved(seconds, 0));
    }
    let unit = duration_unit(seconds);
    let value = seconds / unit.seconds;
    let number = if value.abs() >= 1000.0 { format_count(value) } else { format_sig(value, 3) };
    format!("{number} {}", unit.name)
}

/// A file-name stem from a free-form title: ASCII letters and digits (lower-cased), `_` and `.`
/// kept, every run of anything else turned into one `-`, trimmed, at most 80 characters; `chart`
/// if nothing is left. `"Step time [s] vs. GPUs"` gives `step-time-s-vs.-gpus`.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches(['-', '.']).chars().take(80).collect();
    let out = out.trim_end_matches(['-', '.']).to_string();
    if out.is_empty() { "chart".to_string() } else { out }
}

/// How an axis or a tooltip shows the values of one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ValueFormat {
    /// [`format_sig`] with 3 digits (ticks: [`format_linear_tick`] / [`format_log_tick`]).
    #[default]
    Auto,
    /// Integer counts: [`format_count`].
    Count,
    /// Seconds shown as durations: [`format_duration`] (tooltips; ticks stay numeric).
    Duration,
    /// Fractions shown as percentages: [`format_percent`].
    Percent,
    /// A fixed number of decimals, trailing zeros kept: [`format_fixed`] (memory in GB, 1 decimal,
    /// so that a bar's total reads as its table's figure: `69.0`, not `69`; ticks stay numeric).
    Fixed(u8),
}

impl ValueFormat {
    /// A value for a tooltip or legend.
    pub fn format(self, v: f64) -> String {
        match self {
            ValueFormat::Auto => format_sig(v, 3),
            ValueFormat::Count => format_count(v),
            ValueFormat::Duration => format_duration(v),
            ValueFormat::Percent => format_percent(v, 3),
            ValueFormat::Fixed(decimals) => format_fixed(v, usize::from(decimals)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_decimals_keep_their_zeros() {
        assert_eq!(format_fixed(69.0, 1), "69.0");
        assert_eq!(format_fixed(68.96, 1), "69.0");
        assert_eq!(format_fixed(0.6, 1), "0.6");
        assert_eq!(format_fixed(123.456, 3), "123.456");
        assert_eq!(format_fixed(f64::NAN, 1), "–");
        assert_eq!(format_fixed(f64::INFINITY, 1), "–");
        assert_eq!(ValueFormat::Fixed(1).format(69.04), "69.0");
        assert_eq!(ValueFormat::Auto.format(69.04), "69", "the default keeps 3 significant digits");
    }

    #[test]
    fn significant_digits_table() {
        let table: &[(f64, usize, &str)] = &[
            (0.0, 3, "0"),
            (1.0, 3, "1"),
            (-1.0, 3, "-1"),
            (1234.0, 2, "1.2k"),
            (1200.0, 3, "1.2k"),
            (999.0, 3, "999"),
            (999.7, 3, "1k"),
            (1250.0, 3, "1.25k"),
            (16384.0, 5, "16384"),
            (16384.0, 3, "16.4k"),
            (2.5e6, 3, "2.5M"),
            (1234567.0, 5, "1.2346M"),
            (4.2e9, 2, "4.2G"),
            (7.0e12, 1, "7T"),
            (3.1e15, 2, "3.1P"),
            (2e18, 1, "2E"),
            (5e22, 1, "5e22"),
            (0.05, 2, "0.05"),
            (0.0512, 1, "0.05"),
            (0.125, 3, "0.125"),
            (0.001, 3, "0.001"),
            (3.7e-5, 2, "3.7e-5"),
            (3.71e-5, 2, "3.7e-5"),
            (1e-9, 3, "1e-9"),
            (-0.00042, 2, "-4.2e-4"),
            (12.3456, 3, "12.3"),
            (-98765.0, 2, "-99k"),
            (0.999999, 3, "1"),
        ];
        for &(v, sig, want) in table {
            assert_eq!(format_sig(v, sig), want, "format_sig({v}, {sig})");
        }
        assert_eq!(format_sig(f64::NAN, 3), "NaN");
        assert_eq!(format_sig(f64::INFINITY, 3), "∞");
        assert_eq!(format_sig(f64::NEG_INFINITY, 3), "-∞");
    }

    #[test]
    fn linear_tick_labels_follow_the_step() {
        let cases: &[(&[f64], f64, &[&str])] = &[
            (&[0.0, 0.05, 0.1, 0.15], 0.05, &["0", "0.05", "0.1", "0.15"]),
            (&[0.0, 250.0, 500.0, 750.0], 50.0, &["0", "250", "500", "750"]),
            (&[0.0, 2000.0, 4000.0], 2000.0, &["0", "2k", "4k"]),
            (&[1000.0, 1500.0, 2000.0], 500.0, &["1k", "1.5k", "2k"]),
            (&[2018.0, 2020.0, 2022.0], 2.0, &["2018", "2020", "2022"]),
            (&[-1.0, -0.5, 0.0, 0.5], 0.5, &["-1", "-0.5", "0", "0.5"]),
            (&[1e-5, 2e-5, 3e-5], 1e-5, &["1e-5", "2e-5", "3e-5"]),
            (&[0.0, 2e9, 4e9], 2e9, &["0", "2G", "4G"]),
            (&[100000.0, 100010.0], 10.0, &["100000", "100010"]),
        ];
        for (values, step, want) in cases {
            let got: Vec<String> = values.iter().map(|&v| format_linear_tick(v, *step)).collect();
            assert_eq!(&got, want, "step {step}");
        }
        assert_eq!(format_linear_tick(0.3, 0.0), "0.3");
    }

    #[test]
    fn log_tick_labels() {
        let values = [1e-5, 1e-3, 0.01, 0.2, 1.0, 5.0, 20.0, 1000.0, 5000.0, 1e6, 2e9];
        let want = ["1e-5", "0.001", "0.01", "0.2", "1", "5", "20", "1k", "5k", "1M", "2G"];
        for (v, w) in values.iter().zip(want) {
            assert_eq!(format_log_tick(*v), w);
        }
    }

    #[test]
    fn counts_and_percentages() {
        assert_eq!(format_grouped(9183444), "9,183,444");
        assert_eq!(format_grouped(84646), "84,646");
        assert_eq!(format_grouped(0), "0");
        assert_eq!(format_grouped(100), "100");
        assert_eq!(format_count(16384.0), "16384");
        assert_eq!(format_count(8.0), "8");
        assert_eq!(format_count(7.6), "8");
        assert_eq!(format_count(1048576.0), "1.049M");
        assert_eq!(format_percent(0.125, 3), "12.5 %");
        assert_eq!(format_percent(1.0, 3), "100 %");
        assert_eq!(format_percent(0.0004, 2), "0.04 %");
    }

    #[test]
    fn durations_pick_readable_units() {
        let table: &[(f64, &str)] = &[
            (42.0, "42 s"),
            (90.0, "90 s"),
            (210.0, "3.5 min"),
            (7560.0, "2.1 h"),
            (3600.0 * 30.0, "30 h"),
            (86400.0 * 12.3, "12.3 days"),
            (86400.0 * 1234.0, "1234 days"),
            (0.35, "350 ms"),
            (2.5e-5, "25 µs"),
            (1.0, "1 s"),
            (0.0, "0 µs"),
        ];
        for &(s, want) in table {
            assert_eq!(format_duration(s), want, "{s} s");
        }
        assert_eq!(duration_unit(3.0 * 86400.0).name, "days");
        assert_eq!(duration_unit(119.0).name, "s");
        assert_eq!(duration_unit(120.0).name, "min");
        assert_eq!(format_duration(f64::INFINITY), "∞ s");
    }

    #[test]
    fn slugs_for_file_names() {
        assert_eq!(slug("Step time [s] vs. GPUs"), "step-time-s-vs.-gpus");
        assert_eq!(slug("  Memory / GPU (GB)  "), "memory-gpu-gb");
        assert_eq!(slug("Ünïcödé only ✓"), "n-c-d-only");
        assert_eq!(slug("…"), "chart");
        assert_eq!(slug(""), "chart");
        assert_eq!(slug(&"x".repeat(200)).len(), 80);
    }

    #[test]
    fn value_formats_dispatch() {
        assert_eq!(ValueFormat::Auto.format(1234.0), "1.23k");
        assert_eq!(ValueFormat::Count.format(4096.0), "4096");
        assert_eq!(ValueFormat::Duration.format(5400.0), "90 min");
        assert_eq!(ValueFormat::Percent.format(0.5), "50 %");
    }
}

/// SVG markup without comments (`<!---->`, `<!--hk=…-->`: the markers a UI framework leaves
/// between its nodes), so an exported file holds only the drawing.
pub fn strip_comments(markup: &str) -> String {
    let mut out = String::with_capacity(markup.len());
    let mut rest = markup;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start + 4..].find("-->") {
            Some(end) => rest = &rest[start + 4 + end + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod strip_comments_tests {
    use super::strip_comments;

    #[test]
    fn framework_markers_are_removed_and_the_rest_kept() {
        assert_eq!(
            strip_comments("<svg><!----><g><!--hk=1--><path d=\"M0 0\"/></g><!----></svg>"),
            "<svg><g><path d=\"M0 0\"/></g></svg>"
        );
        assert_eq!(strip_comments("<svg>a &lt;!-- b</svg>"), "<svg>a &lt;!-- b</svg>");
        assert_eq!(strip_comments("<svg><!-- open"), "<svg>");
        assert_eq!(strip_comments(""), "");
    }
}
