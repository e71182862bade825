//! Sliding-window (local) attention read from a file: the window in tokens
//! ([`Settings::window_tokens`]) and which blocks attend through it
//! ([`Settings::window_pattern`]), into the model's [`SlidingWindow`].
//!
//! Where each reader finds them:
//! - Megatron-LM (and NeMo / Megatron-Bridge YAML, whose keys are its flags): `--window-size`
//!   `(left,right)` — the left side is the window, −1 an unbounded one (no window) — and
//!   `--window-attn-skip-freq`: an integer `n` puts a full block at every block number divisible
//!   by `n` (1-based), a list has one 0/1 per block (1: windowed); unset, every block is windowed
//!   (`megatron/core/transformer/utils.py`, `is_layer_window_attention`, NVIDIA/Megatron-LM at
//!   d98e8a6).
//! - Hugging Face `config.json`: `sliding_window` (null: none), `use_sliding_window` (Qwen2/3:
//!   false switches it off), `layer_types` (`"sliding_attention"` / `"full_attention"` per block:
//!   gpt-oss, newer Gemma 3 and Qwen3 configs), `sliding_window_pattern` (Gemma 3, Cohere 2: one
//!   full block in every `n`), and Gemma 2's alternation (transformers' `Gemma2DecoderLayer`:
//!   even blocks windowed); any other family with a window windows every block (Mistral 7B v0.1,
//!   Phi-3).
//!
//! fmperf prices the share of windowed blocks ([`SlidingWindow::windowed_share`]), so a pattern
//! it can hold is "one full block in every `n`" or "every block"; another pattern (Qwen2's
//! `max_window_layers`, a hand-written list) is listed as not modelled and the blocks are priced
//! with full attention, as the note says.

use fmperf_core::Error;
use fmperf_core::vocab::{Note, SlidingWindow};

use super::settings::{SettingOrigin, Settings};

/// What a file's window settings say, before they become a [`SlidingWindow`].
#[derive(Debug, Clone, PartialEq)]
enum Pattern {
    /// Every block windowed.
    Every,
    /// One full block in every `n` (1: none windowed).
    FullEvery(u64),
    /// One flag per block (1: windowed).
    List(Vec<bool>),
}

/// The model's sliding window from `s` for a model of `layers` blocks; `None` when the file
/// states none (or one that covers no block). Notes say how the pattern was read.
pub fn model(s: &Settings, layers: u64, notes: &mut Vec<Note>) -> Result<Option<SlidingWindow>, Error> {
    let Some(tokens) = s.window_tokens.copied() else {
        if let (Some(p), Some(o)) = (s.window_pattern.get(), &s.window_pattern.origin) {
            notes.push(Note::not_applied(format!("{} = {p}: no effect without a window size", o.key)).about(&o.key));
        }
        return Ok(None);
    };
    let origin = s.window_pattern.origin.clone().unwrap_or(SettingOrigin::new("window_attn_skip_freq", 0));
    let pattern = match s.window_pattern.get() {
        None => Pattern::Every,
        Some(text) => parse(text, layers).map_err(|rule| origin.error(text, rule))?,
    };
    let window_key = s.window_tokens.key_or("sliding_window");
    let full_every = match pattern {
        Pattern::Every => None,
        Pattern::FullEvery(n) => Some(n),
        Pattern::List(flags) => match periodic(&flags) {
            Some(p) => p,
            None => {
                let windowed = flags.iter().filter(|&&w| w).count();
                notes.push(
                    Note::not_applied(format!(
                        "{}: {windowed} of {} blocks windowed in a pattern other than one full block in every n \
                         (not modelled): every block is priced with full attention",
                        origin.key,
                        flags.len()
                    ))
                    .about(&origin.key),
                );
                return Ok(None);
            }
        },
    };
    if full_every == Some(1) {
        let text = format!("{window_key} = {tokens}: no block attends through the window (every block full)");
        notes.push(Note::reading(text).about(window_key));
        return Ok(None);
    }
    let text = match full_every {
        None => format!("sliding-window attention: {tokens} tokens in every block ({window_key})"),
        Some(n) => format!(
            "sliding-window attention: {tokens} tokens in {} of every {n} blocks ({window_key}, {})",
            n - 1,
            origin.key
        ),
    };
    let mut note = Note::reading(text).about(window_key);
    if full_every.is_some() {
        note = note.about(&origin.key);
    }
    notes.push(note);
    Ok(Some(SlidingWindow { tokens, full_every }))
}

/// Reads a pattern as written: an integer `n` ≥ 1 up to the blocks, or a 0/1 list of one entry
/// per block ([`super::layer_list::expand`]).
fn parse(text: &str, layers: u64) -> Result<Pattern, String> {
    let t = text.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    if let Ok(n) = t.parse::<u64>() {
        return if n == 0 || n > layers.max(1) {
            Err(format!("must be from 1 to the {layers} blocks, or a list of 0/1 per block such as [1,1,1,0]*3"))
        } else {
            Ok(Pattern::FullEvery(n))
        };
    }
    let flags = super::layer_list::expand(t, ("full attention", "windowed")).map_err(|e| e.to_string())?;
    if flags.len() as u64 != layers {
        return Err(format!("lists {} blocks, the model has {layers}", flags.len()));
    }
    Ok(Pattern::List(flags))
}

/// A per-block list as a pattern fmperf holds: `Some(None)` every block windowed, `Some(Some(n))`
/// a full block exactly at every `n`-th block (block numbers `n, 2n, …` counted from 1; `n` larger
/// than the list: none full), `None` any other pattern.
fn periodic(flags: &[bool]) -> Option<Option<u64>> {
    if flags.iter().all(|&w| w) {
        return Some(None);
    }
    if flags.iter().all(|&w| !w) {
        return Some(Some(1));
    }
    let n = flags.iter().position(|&w| !w)? + 1;
    flags.iter().enumerate().all(|(i, &w)| w == !(i + 1).is_multiple_of(n)).then_some(Some(n as u64))
}

/// Whether the 0/1 list `text` (1: windowed) puts a full block exactly at every `n`-th block, as
/// a `sliding_window_pattern` of `n` does.
pub fn lists_full_every(text: &str, n: u64) -> bool {
    let flags = match super::layer_list::expand(text, ("full attention", "windowed")) {
        Ok(f) => f,
        Err(_) => return false, // `text` is hf_layer_types' own 0/1 output: always a list
    };
    periodic(&flags) == Some(Some(n)) || (n as usize > flags.len() && periodic(&flags) == Some(None))
}

/// A Hugging Face `layer_types` list (`"sliding_attention"`, `"full_attention"`, and
/// `"chunked_attention"` or others, which fmperf does not price as windows) as the 0/1 text of
/// [`Settings::window_pattern`]; `Err` names an entry that is not a string.
pub fn hf_layer_types(list: &[serde_json::Value]) -> Result<String, String> {
    let mut flags = Vec::with_capacity(list.len());
    for v in list {
        let kind = v.as_str().ok_or("must be a list of layer kinds such as \"sliding_attention\"")?;
        flags.push(if kind == "sliding_attention" { "1" } else { "0" });
    }
    Ok(format!("[{}]", flags.join(",")))
}

/// Megatron's `--window-size` `(left,right)` (also `left,right`, `[left, right]`): the window in
/// tokens, `None` for an unbounded left side (−1); `Err` is the rule broken.
pub fn megatron_window_size(text: &str) -> Result<Option<u64>, String> {
    let t = text.trim().trim_matches(|c| c == '"' || c == '\'');
    let inner = t.trim().trim_start_matches(['(', '[']).trim_end_matches([')', ']']);
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let rule = "must be two integers (left,right) such as (128,0); -1 is unbounded";
    let [left, right] = parts.as_slice() else { return Err(rule.into()) };
    let (left, right): (i64, i64) = (left.parse().map_err(|_| rule)?, right.parse().map_err(|_| rule)?);
    if left < -1 || right < -1 || left == 0 {
        return Err(rule.into());
    }
    Ok((left > 0).then_some(left as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(tokens: Option<u64>, pattern: Option<&str>) -> Settings {
        let mut s = Settings::default();
        if let Some(t) = tokens {
            s.window_tokens.put(t, &SettingOrigin::new("--window-size", 3));
        }
        if let Some(p) = pattern {
            s.window_pattern.put(p.to_string(), &SettingOrigin::new("--window-attn-skip-freq", 4));
        }
        s
    }

    fn read(
        tokens: Option<u64>,
        pattern: Option<&str>,
        layers: u64,
    ) -> (Result<Option<SlidingWindow>, Error>, Vec<Note>) {
        let mut notes = Vec::new();
        (model(&settings(tokens, pattern), layers, &mut notes), notes)
    }

    #[test]
    fn megatrons_patterns() {
        // gpt-oss: (128,0) with a full block in every 2.
        assert_eq!(read(Some(128), Some("2"), 24).0.unwrap(), Some(SlidingWindow { tokens: 128, full_every: Some(2) }));
        // No skip frequency: every block windowed.
        assert_eq!(read(Some(4096), None, 32).0.unwrap(), Some(SlidingWindow { tokens: 4096, full_every: None }));
        // A list that is one full block in every 4: `[1,1,1,0]*3` on 12 blocks.
        assert_eq!(
            read(Some(1024), Some("[1,1,1,0]*3"), 12).0.unwrap(),
            Some(SlidingWindow { tokens: 1024, full_every: Some(4) })
        );
        // Gemma 3's 62 blocks: full at 6, 12, …, 60; the last two windowed.
        let gemma3 = format!("([1]*5+[0])*10+[1]*2");
        assert_eq!(read(Some(1024), Some(&gemma3), 62).0.unwrap().unwrap().full_every, Some(6));
        // 1: every block full — no window, said.
        let (w, notes) = read(Some(128), Some("1"), 24);
        assert_eq!(w.unwrap(), None);
        assert!(notes[0].text.contains("no block"), "{notes:?}");
    }

    #[test]
    fn patterns_fmperf_cannot_hold_are_said_not_guessed() {
        // Qwen2-style: the first 4 blocks full, the rest windowed.
        let (w, notes) = read(Some(4096), Some("[0]*4+[1]*4"), 8);
        assert_eq!(w.unwrap(), None);
        assert!(notes[0].text.contains("4 of 8 blocks windowed") && notes[0].text.contains("full attention"));
        // A pattern without a window has no effect, said.
        let (w, notes) = read(None, Some("2"), 8);
        assert_eq!(w.unwrap(), None);
        assert!(notes[0].text.contains("no effect"));
    }

    #[test]
    fn bad_patterns_name_the_flag() {
        let e = read(Some(128), Some("0"), 24).0.unwrap_err();
        assert_eq!(e.field(), Some("--window-attn-skip-freq"));
        let e = read(Some(128), Some("[1,0]*3"), 24).0.unwrap_err();
        assert!(e.to_string().contains("lists 6 blocks, the model has 24"), "{e}");
        let e = read(Some(128), Some("[1,2]"), 2).0.unwrap_err();
        assert!(e.to_string().contains("0 (full attention) or 1 (windowed)"), "{e}");
    }

    #[test]
    fn window_sizes_and_layer_types() {
        assert_eq!(megatron_window_size("(128,0)"), Ok(Some(128)));
        assert_eq!(megatron_window_size("\"128, 0\""), Ok(Some(128)));
        assert_eq!(megatron_window_size("[4096, 0]"), Ok(Some(4096)));
        assert_eq!(megatron_window_size("(-1,-1)"), Ok(None));
        assert!(megatron_window_size("128").is_err());
        assert!(megatron_window_size("(0,0)").is_err());
        assert!(megatron_window_size("(a,0)").is_err());
        let types: Vec<serde_json::Value> =
            serde_json::from_str(r#"["sliding_attention","full_attention","sliding_attention","full_attention"]"#)
                .unwrap();
        assert_eq!(hf_layer_types(&types).unwrap(), "[1,0,1,0]");
        assert!(hf_layer_types(&[serde_json::json!(3)]).is_err());
    }
}
