//! Reading free text by meaning: the small toolkit the readers of measured-run files share.
//!
//! Text is lowered and split into *tokens* (runs of letters and digits; `_`, `-`, `/`, spaces and
//! punctuation separate them), so `"Megatron-LM"`, `"megatron lm"` and `"MEGATRON_LM"` read alike.
//! Phrases are matched as token sequences (`has("model flops")` matches `"Model-FLOPs"` and
//! `"model FLOPs/s"`, not `"modelflopsx"`), numbers are read with their unit suffix (`"989 TFLOP/s"`,
//! `"96GB"`, `"1.2e3"`, `"4k"`), and no reader ever compares a whole string with a fixed one.

/// A text prepared for reading: its lowered tokens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Words {
    /// The original text.
    pub text: String,
    /// Lowered tokens (letters and digits; a token may mix both, e.g. `h100`, `96gb`).
    pub tokens: Vec<String>,
}

impl Words {
    /// Splits `text` into lowered tokens. A decimal point between digits stays inside the token
    /// (`0.44`, `2.5e3`).
    pub fn new(text: &str) -> Words {
        let lower = text.to_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        let mut tokens = Vec::new();
        let mut cur = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let keep_dot = c == '.'
                && cur.chars().last().is_some_and(|p| p.is_ascii_digit())
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
            if c.is_alphanumeric() || keep_dot {
                cur.push(c);
            } else if !cur.is_empty() {
                tokens.push(std::mem::take(&mut cur));
            }
        }
        if !cur.is_empty() {
            tokens.push(cur);
        }
        Words { text: text.to_string(), tokens }
    }

    /// Reads several optional texts as one (`None` and empty texts are skipped).
    pub fn join(texts: &[Option<&str>]) -> Words {
        let parts: Vec<&str> = texts.iter().flatten().copied().filter(|t| !t.trim().is_empty()).collect();
        Words::new(&parts.join(" ; "))
    }

    /// Whether the text is empty of tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The index of the first occurrence of `phrase` (its own tokens, in order), if any.
    pub fn find(&self, phrase: &str) -> Option<usize> {
        let want = Words::new(phrase).tokens;
        if want.is_empty() || want.len() > self.tokens.len() {
            return None;
        }
        (0..=self.tokens.len() - want.len()).find(|&i| self.tokens[i..i + want.len()] == want[..])
    }

    /// Whether `phrase` occurs as whole tokens.
    pub fn has(&self, phrase: &str) -> bool {
        self.find(phrase).is_some()
    }

    /// Whether any of `phrases` occurs.
    pub fn any(&self, phrases: &[&str]) -> bool {
        phrases.iter().any(|p| self.has(p))
    }

    /// Whether a token starts with `prefix` (e.g. `recomput` for recompute, recomputation,
    /// recomputed).
    pub fn has_prefix(&self, prefix: &str) -> bool {
        let p = prefix.to_lowercase();
        self.tokens.iter().any(|t| t.starts_with(&p))
    }

    /// Whether the text says `phrase` and does not negate it just before (`no`, `not`, `without`,
    /// `off`, `disabled`, `false` within the two previous tokens, or `off`/`disabled`/`false`
    /// right after).
    pub fn affirms(&self, phrase: &str) -> bool {
        let want = Words::new(phrase).tokens;
        if want.is_empty() || want.len() > self.tokens.len() {
            return false;
        }
        (0..=self.tokens.len() - want.len()).any(|i| {
            if self.tokens[i..i + want.len()] != want[..] {
                return false;
            }
            let before = &self.tokens[i.saturating_sub(2)..i];
            let after = self.tokens.get(i + want.len()).map(String::as_str);
            let wo = before.len() == 2 && before[0] == "w" && before[1] == "o";
            let neg_before = wo
                || before
                    .iter()
                    .any(|t| matches!(t.as_str(), "no" | "not" | "without" | "non" | "disable" | "disabled"));
            let neg_after = matches!(after, Some("off" | "disabled" | "false" | "none"));
            !neg_before && !neg_after
        })
    }

    /// Every number in the text with the token that follows it (its unit, lowered), in order.
    /// Suffixes glued to the number are split off: `96gb` gives `(96, "gb")`, `4k` gives
    /// `(4000, "")`, `1.5m` gives `(1.5e6, "")`, `62.4` followed by `tflop` gives `(62.4, "tflop")`.
    pub fn numbers(&self) -> Vec<(f64, String)> {
        let mut out = Vec::new();
        for (i, t) in self.tokens.iter().enumerate() {
            let digits: String = t.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            if digits.is_empty() || digits.starts_with('.') {
                continue;
            }
            let Ok(mut v) = digits.parse::<f64>() else { continue };
            let mut rest = t[digits.len()..].to_string();
            // Exponents (`2.5e3`) and multipliers (`4k`, `1.5m`, `2b`) glued to the number.
            if let Some(e) = rest.strip_prefix('e').and_then(|r| r.parse::<i32>().ok()) {
                v *= 10f64.powi(e);
                rest.clear();
            }
            let mult = match rest.as_str() {
                "k" => Some(1e3),
                "m" => Some(1e6),
                "b" | "bn" => Some(1e9),
                "t" => Some(1e12),
                _ => None,
            };
            if let Some(m) = mult {
                v *= m;
                rest.clear();
            }
            let unit = if rest.is_empty() { self.tokens.get(i + 1).cloned().unwrap_or_default() } else { rest };
            if v.is_finite() {
                out.push((v, unit));
            }
        }
        out
    }

    /// The first number whose unit starts with one of `units` (e.g. `["gb", "gib"]`).
    pub fn number_with_unit(&self, units: &[&str]) -> Option<(f64, String)> {
        self.numbers().into_iter().find(|(_, u)| units.iter().any(|w| u.starts_with(w)))
    }

    /// The first number within `window` tokens after `phrase` (e.g. the count after `every`).
    pub fn number_after(&self, phrase: &str, window: usize) -> Option<f64> {
        let at = self.find(phrase)? + Words::new(phrase).tokens.len();
        let end = (at + window).min(self.tokens.len());
        self.tokens[at..end].iter().find_map(|t| {
            let d: String = t.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            d.parse::<f64>().ok().filter(|_| !d.is_empty())
        })
    }

    /// The first number within `window` tokens before `phrase`.
    pub fn number_before(&self, phrase: &str, window: usize) -> Option<f64> {
        let at = self.find(phrase)?;
        let start = at.saturating_sub(window);
        self.tokens[start..at].iter().rev().find_map(|t| {
            let d: String = t.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            d.parse::<f64>().ok().filter(|_| !d.is_empty())
        })
    }

    /// The first fraction in the text, written as `k/n`, `k of n`, `k out of n` (with `k ≤ n`) or
    /// a percentage: `(k, n)` or `(p, 100)`.
    pub fn fraction(&self) -> Option<(f64, f64)> {
        let t = &self.text.to_lowercase();
        // `k/n`
        let bytes: Vec<char> = t.chars().collect();
        for (i, c) in bytes.iter().enumerate() {
            if *c == '/' && i > 0 {
                let left: String = bytes[..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_ascii_digit())
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect();
                let right: String = bytes[i + 1..].iter().take_while(|c| c.is_ascii_digit()).collect();
                if let (Ok(k), Ok(n)) = (left.parse::<f64>(), right.parse::<f64>())
                    && n > 0.0
                    && k <= n
                {
                    return Some((k, n));
                }
            }
        }
        for (i, tok) in self.tokens.iter().enumerate() {
            if tok == "of" && i > 0 {
                let k = self.tokens[i - 1].parse::<f64>().ok();
                let (k, n_at) = match (k, self.tokens.get(i - 1).map(String::as_str)) {
                    (Some(k), _) => (Some(k), i + 1),
                    (None, Some("out")) if i >= 2 => (self.tokens[i - 2].parse::<f64>().ok(), i + 1),
                    _ => (None, i + 1),
                };
                if let (Some(k), Some(n)) = (k, self.tokens.get(n_at).and_then(|t| t.parse::<f64>().ok()))
                    && n > 0.0
                    && k <= n
                {
                    return Some((k, n));
                }
            }
        }
        if let Some(at) = t.find('%') {
            let digits: String =
                t[..at].trim_end().chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let digits: String = digits.chars().rev().collect();
            if let Ok(p) = digits.parse::<f64>() {
                return Some((p, 100.0));
            }
        }
        self.numbers().into_iter().find(|(_, u)| u == "percent" || u == "pct").map(|(v, _)| (v, 100.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_phrases_and_numbers() {
        let w = Words::new("Model-FLOPs utilisation (MFU) vs. 989 TFLOP/s; 0.44 of peak, H100-SXM5 96GB, 4k seq");
        assert!(w.has("model flops"));
        assert!(w.has("mfu"));
        assert!(!w.has("model flop"));
        assert!(w.has_prefix("utilis"));
        let n = w.numbers();
        assert!(n.contains(&(989.0, "tflop".to_string())));
        assert!(n.contains(&(0.44, "of".to_string())));
        assert!(n.contains(&(96.0, "gb".to_string())));
        assert!(n.contains(&(4000.0, "seq".to_string())));
        assert_eq!(w.number_with_unit(&["gb", "gib"]).map(|x| x.0), Some(96.0));
        assert_eq!(Words::new("recompute every 4 layers").number_after("every", 2), Some(4.0));
        assert_eq!(Words::new("20 layers recomputed").number_before("layers", 1), Some(20.0));
        assert_eq!(Words::new("2.5e3 tokens").numbers()[0].0, 2500.0);
    }

    #[test]
    fn negations_and_fractions() {
        assert!(Words::new("with sequence parallel").affirms("sequence parallel"));
        assert!(!Words::new("no sequence parallel").affirms("sequence parallel"));
        assert!(!Words::new("without activation checkpointing").affirms("activation checkpointing"));
        assert!(!Words::new("activation checkpointing: off").affirms("activation checkpointing"));
        assert!(!Words::new("w/o recompute").affirms("recompute"));
        assert!(Words::new("w/ recompute").affirms("recompute"));
        assert_eq!(Words::new("recompute 20/32 layers").fraction(), Some((20.0, 32.0)));
        assert_eq!(Words::new("checkpoint 6 of 48 blocks").fraction(), Some((6.0, 48.0)));
        assert_eq!(Words::new("6 out of 48 blocks").fraction(), Some((6.0, 48.0)));
        assert_eq!(Words::new("recompute 25% of layers").fraction(), Some((25.0, 100.0)));
        assert_eq!(Words::new("fp16/bf16").fraction(), None);
        assert!(Words::join(&[None, Some(""), Some("a b")]).has("a b"));
    }
}
