//! Numbers as people type them in the page's fields: `4096`, `2,304`, `4k`, `16M`, `15T`, `1e12`,
//! `1.5e3`, `2^12`. A suffix is a power of ten (`k` 1e3, `M` 1e6, `B`/`G` 1e9, `T` 1e12, `P`
//! 1e15; a lower-case `m` means million too, since no count is in thousandths), and may be
//! followed by a unit word (`15T tokens`).
//!
//! The page rewrites such a text into plain digits before core validates it ([`normalize_count`],
//! [`normalize_amount`]), so core's rules and messages stay the only ones; text that is not a
//! number in this sense is passed on unchanged and core says what is wrong with it.

/// The value of one number as typed, or `None` when the text is not one.
pub fn parse_quantity(text: &str) -> Option<f64> {
    let t = text.trim();
    // A trailing unit word (`tokens`, `samples`, `GPUs`) after a space is ignored.
    let t = match t.rsplit_once(char::is_whitespace) {
        Some((num, word)) if word.chars().all(|c| c.is_ascii_alphabetic()) && word.len() > 1 => num.trim(),
        _ => t,
    };
    let cleaned: String = t.chars().filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}' | '\u{202f}' | '\'')).collect();
    if cleaned.is_empty() {
        return None;
    }
    if let Some((base, exp)) = cleaned.split_once('^') {
        let (b, e) = (base.parse::<f64>().ok()?, exp.parse::<i32>().ok()?);
        return finite(b.powi(e));
    }
    let (digits, scale) = match cleaned.chars().last() {
        Some('k' | 'K') => (&cleaned[..cleaned.len() - 1], 1e3),
        Some('m' | 'M') => (&cleaned[..cleaned.len() - 1], 1e6),
        Some('b' | 'B' | 'g' | 'G') => (&cleaned[..cleaned.len() - 1], 1e9),
        Some('t' | 'T') => (&cleaned[..cleaned.len() - 1], 1e12),
        Some('p' | 'P') => (&cleaned[..cleaned.len() - 1], 1e15),
        _ => (cleaned.as_str(), 1.0),
    };
    // Only digits, one point, and an exponent: `f64::from_str` would also take `inf` and `NaN`.
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) {
        return None;
    }
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    finite(digits.parse::<f64>().ok()? * scale)
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// A whole count as digits (`4k` → `4000`, `1e12` → `1000000000000`, `2,304` → `2304`), or the
/// text unchanged when it is not a whole, non-negative number below 2^53 (core then says why).
pub fn normalize_count(text: &str) -> String {
    match parse_quantity(text) {
        Some(v) if v >= 0.0 && v.fract() == 0.0 && v < 9.007_199_254_740_992e15 => format!("{}", v as u64),
        _ => text.to_string(),
    }
}

/// An amount (a budget: `15T`, `1e12`, `350000*80`) with every factor's suffix expanded, for
/// core's amount parser; unchanged when a factor is not a number.
pub fn normalize_amount(text: &str) -> String {
    let mut out = Vec::new();
    for factor in text.split(['*', '×']) {
        match parse_quantity(factor) {
            Some(v) if factor.trim().chars().any(|c| c.is_ascii_alphabetic() && !matches!(c, 'e' | 'E')) => {
                out.push(format!("{v:e}"))
            }
            _ => out.push(factor.trim().to_string()),
        }
    }
    out.join("*")
}

/// What a count typed with a suffix, an exponent or a power reads as, said under its field:
/// `2k` → `“2k” = 2,000 devices (k = 1,000, not 1,024)`, so that a reader who meant 2,048 sees
/// it. `None` for plain digits (grouped or not) and for text that is no whole count (core then
/// says what is wrong with it). `unit` is the field's unit in the plural (`devices`).
pub fn count_reading(text: &str, unit: &str) -> Option<String> {
    let t = text.trim();
    if t.chars().all(|c| c.is_ascii_digit() || matches!(c, ',' | '_' | ' ' | '\u{a0}' | '\u{202f}' | '\'')) {
        return None;
    }
    let digits = normalize_count(t);
    let v: u64 = digits.parse().ok()?;
    let binary = match t.chars().rev().find(|c| c.is_ascii_alphabetic()) {
        Some('k' | 'K') => " (k = 1,000, not 1,024)",
        Some('m' | 'M') => " (M = 1,000,000)",
        _ => "",
    };
    Some(format!("“{t}” = {} {unit}{binary}", crate::fmt::count(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_exponents_and_separators() {
        let cases = [
            ("15T", 15e12),
            ("16M", 16e6),
            ("16m", 16e6),
            ("4k", 4000.0),
            ("4K", 4000.0),
            ("1e12", 1e12),
            ("1.5e3", 1500.0),
            ("2,304", 2304.0),
            ("18_432", 18432.0),
            ("1 024", 1024.0),
            ("2^12", 4096.0),
            ("0.5k", 500.0),
            ("2.5B", 2.5e9),
            ("15T tokens", 15e12),
            ("  9216 ", 9216.0),
        ];
        for (text, want) in cases {
            assert_eq!(parse_quantity(text), Some(want), "{text}");
        }
    }

    #[test]
    fn not_numbers() {
        for text in ["", "abc", "4x", "inf", "NaN", "k", "T", "1e999", "--3", "e5", "4 k k"] {
            assert_eq!(parse_quantity(text), None, "{text}");
        }
    }

    #[test]
    fn counts_become_digits_or_stay_as_typed() {
        assert_eq!(normalize_count("4k"), "4000");
        assert_eq!(normalize_count("1e12"), "1000000000000");
        assert_eq!(normalize_count("2,304"), "2304");
        assert_eq!(normalize_count("16M"), "16000000");
        // Not whole, negative or not a number: core's message applies to the text as typed.
        assert_eq!(normalize_count("1.5"), "1.5");
        assert_eq!(normalize_count("-8"), "-8");
        assert_eq!(normalize_count("eight"), "eight");
    }

    #[test]
    fn amounts_expand_suffixes_per_factor() {
        assert_eq!(parse_quantity(&normalize_amount("15T")), Some(15e12));
        assert_eq!(normalize_amount("350000*80"), "350000*80");
        let p: f64 = normalize_amount("2M*8k").split('*').map(|f| f.parse::<f64>().unwrap()).product();
        assert_eq!(p, 16e9);
        assert_eq!(normalize_amount("lots"), "lots");
    }

    #[test]
    fn a_suffix_is_said_in_words_under_the_field() {
        // Issue 29: "2k" devices were read as 2,000 without a word.
        assert_eq!(count_reading("2k", "devices").as_deref(), Some("“2k” = 2,000 devices (k = 1,000, not 1,024)"));
        assert_eq!(count_reading("2^11", "devices").as_deref(), Some("“2^11” = 2,048 devices"));
        assert_eq!(count_reading("1e3", "samples").as_deref(), Some("“1e3” = 1,000 samples"));
        for plain in ["2048", "2,304", " 512 ", "", "eight", "1.5"] {
            assert_eq!(count_reading(plain, "devices"), None, "{plain}");
        }
    }
}
