//! "Did you mean" suggestions: edit distance between names.

/// Edit distance between two strings (insertions, deletions, substitutions and swaps of two
/// neighbouring characters each count 1), counted in characters, ignoring ASCII case.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let w = b.len() + 1;
    // Rows i-2, i-1 and i of the dynamic-programming table.
    let mut rows = vec![vec![0usize; w]; 3];
    for (j, cell) in rows[1].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (cur, prev, prev2) = (i % 3, (i + 2) % 3, (i + 1) % 3);
        rows[cur][0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[prev][j - 1] + cost).min(rows[prev][j] + 1).min(rows[cur][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[prev2][j - 2] + 1);
            }
            rows[cur][j] = d;
        }
    }
    rows[a.len() % 3 + if a.is_empty() { 1 } else { 0 }][b.len()]
}

/// The candidate closest to `word` if it is close enough to be a plausible typo: at most a third of
/// the word's length (at least 1, at most 4) edits away, and keeping at least one character of each
/// (`x` is no typo of `l`). Ties go to the earlier candidate.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    // Very long words cannot be typos of field names; skip the quadratic work.
    if word.chars().count() > 200 {
        return None;
    }
    let len = word.chars().count();
    let limit = (len / 3).clamp(1, 4);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(word, c);
        let keeps_one = d < len.max(c.chars().count());
        if d <= limit && keeps_one && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Up to `n` candidates for "known names" lists: those containing `word` (ignoring case) first,
/// then by distance to `word`.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>, n: usize) -> Vec<&'a str> {
    let word: String = word.chars().take(200).collect::<String>().to_ascii_lowercase();
    let mut scored: Vec<(bool, usize, usize, &str)> = candidates
        .into_iter()
        .enumerate()
        .map(|(i, c)| (word.is_empty() || !c.to_ascii_lowercase().contains(&word), distance(&word, c), i, c))
        .collect();
    crate::sort::sort(&mut scored);
    scored.into_iter().take(n).map(|(_, _, _, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("hiden", "hidden"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("Heads", "heads"), 0);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("bf61", "bf16"), 1);
        assert_eq!(distance("abc", ""), 3);
    }

    #[test]
    fn nearest_names() {
        let names = ["hidden", "heads", "layers", "seq_len"];
        assert_eq!(nearest("hiden", names), Some("hidden"));
        assert_eq!(nearest("layer", names), Some("layers"));
        assert_eq!(nearest("zzzzzzzz", names), None);
        // A one-letter name that shares no letter is no typo; one letter more or less is.
        assert_eq!(nearest("x", ["l", "h"]), None);
        assert_eq!(nearest("h", ["l", "h"]), Some("h"));
        assert_eq!(nearest("hh", ["h"]), Some("h"));
        assert_eq!(closest("head", names, 2), vec!["heads", "hidden"]);
    }
}
