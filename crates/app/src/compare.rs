//! Comparing configurations side by side: each column's value over the first column's (the
//! baseline, column A), the label of each column's bar, and the count the Compare tab shows.

/// `value / base` when both are finite and the base is not zero (`None`: no ratio to show).
pub fn ratio(value: f64, base: f64) -> Option<f64> {
    (value.is_finite() && base.is_finite() && base != 0.0).then(|| value / base)
}

/// A ratio as shown in a ratio column: `1.00×` for the baseline, `2.35×`, `0.427×` (three
/// significant digits); `—` when there is none.
pub fn ratio_text(r: Option<f64>) -> String {
    match r {
        None => "—".to_string(),
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 10.0 => format!("{r:.1}×"),
        Some(r) if r >= 1.0 => format!("{r:.2}×"),
        Some(r) => format!("{r:.3}×"),
    }
}

/// Whether a ratio is better than the baseline for a quantity where `higher_is_better` (for
/// the page's colouring and screen-reader text): `Some(true)` better, `Some(false)` worse, `None`
/// equal within 0.5 % or no ratio.
pub fn better(r: Option<f64>, higher_is_better: bool) -> Option<bool> {
    let r = r?;
    if (r - 1.0).abs() < 0.005 {
        return None;
    }
    Some((r > 1.0) == higher_is_better)
}

/// The label of one compared configuration's bar: its letter, the names shown where the
/// columns differ (`(differs, name)`: the model's, the system's) and its layout in words
/// (`B · NVIDIA B200 · 1d dp16 tp8 pp8 mbs1`), so that the chart can wrap it onto two lines.
pub fn bar_label(letter: char, names: &[(bool, &str)], layout: &str) -> String {
    let mut parts = vec![letter.to_string()];
    parts.extend(names.iter().filter(|(differs, _)| *differs).map(|(_, n)| n.to_string()));
    parts.push(layout.to_string());
    parts.join(" · ")
}

/// The Compare tab's title: the number of configurations that could be evaluated, and how many
/// of the pinned ones could not (`Compare (2)`, `Compare (2 + 1 invalid)`).
pub fn tab_title(evaluated: usize, invalid: usize) -> String {
    match (evaluated, invalid) {
        (0, 0) => "Compare".to_string(),
        (n, 0) => format!("Compare ({n})"),
        (n, k) => format!("Compare ({n} + {k} invalid)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_against_the_first_column() {
        assert_eq!(ratio(2.0, 1.0), Some(2.0));
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
        assert_eq!(ratio_text(ratio(3.0, 3.0)), "1.00×");
        assert_eq!(ratio_text(Some(2.346)), "2.35×");
        assert_eq!(ratio_text(Some(0.4271)), "0.427×");
        assert_eq!(ratio_text(Some(12.34)), "12.3×");
        assert_eq!(ratio_text(None), "—");
        // Throughput: higher is better; time: lower is better.
        assert_eq!(better(Some(1.2), true), Some(true));
        assert_eq!(better(Some(1.2), false), Some(false));
        assert_eq!(better(Some(1.001), true), None);
    }

    #[test]
    fn labels_and_an_honest_tab_count() {
        let layout = "1d dp8 tp8 pp8 mbs1";
        assert_eq!(
            bar_label('B', &[(false, "Llama 3 70B"), (false, "NVIDIA H100")], layout),
            "B · 1d dp8 tp8 pp8 mbs1"
        );
        assert_eq!(
            bar_label('A', &[(false, "Llama 3 70B"), (true, "NVIDIA GB200 NVL72")], layout),
            "A · NVIDIA GB200 NVL72 · 1d dp8 tp8 pp8 mbs1",
            "the system, where the columns' systems differ, by name (not its id)"
        );
        assert_eq!(
            bar_label('C', &[(true, "Llama 3 8B"), (true, "NVIDIA B200")], "1d"),
            "C · Llama 3 8B · NVIDIA B200 · 1d"
        );
        assert_eq!(tab_title(0, 0), "Compare");
        assert_eq!(tab_title(2, 0), "Compare (2)");
        assert_eq!(tab_title(1, 1), "Compare (1 + 1 invalid)");
    }
}
