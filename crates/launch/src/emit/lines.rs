//! Line edits of a text that keep every untouched line byte for byte: replace a part of a line,
//! insert lines after one, delete one. Lines are 1-based as the readers' origins are.

use std::collections::BTreeMap;

/// A text cut into lines (each with its own line ending), with pending edits.
#[derive(Debug, Clone)]
pub(crate) struct Lines {
    /// `(body, ending)`: the ending is `\n`, `\r\n` or empty (the last line without one).
    lines: Vec<(String, String)>,
    /// Lines inserted after line `n` (0: before the first), in order.
    after: BTreeMap<usize, Vec<String>>,
    /// Lines removed.
    removed: Vec<bool>,
    /// The file's own line ending, for inserted lines.
    eol: &'static str,
}

impl Lines {
    /// Cuts `text`.
    pub fn new(text: &str) -> Lines {
        let mut lines = Vec::new();
        for piece in text.split_inclusive('\n') {
            let (body, end) = if let Some(b) = piece.strip_suffix("\r\n") {
                (b, "\r\n")
            } else if let Some(b) = piece.strip_suffix('\n') {
                (b, "\n")
            } else {
                (piece, "")
            };
            lines.push((body.to_string(), end.to_string()));
        }
        let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let n = lines.len();
        Lines { lines, after: BTreeMap::new(), removed: vec![false; n], eol }
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The body of line `n` (1-based), as edited so far.
    pub fn get(&self, n: usize) -> Option<&str> {
        let i = n.checked_sub(1)?;
        self.lines.get(i).map(|(b, _)| b.as_str())
    }

    /// Replaces the body of line `n`.
    pub fn set(&mut self, n: usize, body: String) {
        if let Some((b, _)) = n.checked_sub(1).and_then(|i| self.lines.get_mut(i)) {
            *b = body;
        }
    }

    /// Replaces bytes `start..end` of line `n` by `with` (no change when out of range).
    pub fn splice(&mut self, n: usize, start: usize, end: usize, with: &str) {
        if let Some(body) = self.get(n)
            && start <= end
            && end <= body.len()
            && body.is_char_boundary(start)
            && body.is_char_boundary(end)
        {
            let new = format!("{}{with}{}", &body[..start], &body[end..]);
            self.set(n, new);
        }
    }

    /// Inserts `body` as a new line after line `n` (after earlier insertions there).
    pub fn insert_after(&mut self, n: usize, body: String) {
        self.after.entry(n.min(self.lines.len())).or_default().push(body);
    }

    /// Removes line `n`.
    pub fn remove(&mut self, n: usize) {
        if let Some(r) = n.checked_sub(1).and_then(|i| self.removed.get_mut(i)) {
            *r = true;
        }
    }

    /// The edited text.
    pub fn finish(self) -> String {
        let mut out = String::new();
        let mut pending_eol = false;
        let push = |out: &mut String, body: &str, end: &str, pending: &mut bool| {
            if *pending {
                out.push_str(self.eol);
            }
            out.push_str(body);
            out.push_str(end);
            *pending = end.is_empty();
        };
        if let Some(ins) = self.after.get(&0) {
            for b in ins {
                push(&mut out, b, self.eol, &mut pending_eol);
            }
        }
        for (i, (body, end)) in self.lines.iter().enumerate() {
            if !self.removed.get(i).copied().unwrap_or(false) {
                push(&mut out, body, end, &mut pending_eol);
            }
            if let Some(ins) = self.after.get(&(i + 1)) {
                for b in ins {
                    push(&mut out, b, self.eol, &mut pending_eol);
                }
            }
        }
        out
    }
}

/// Leading whitespace of a line.
pub(crate) fn indent(body: &str) -> &str {
    &body[..body.len() - body.trim_start().len()]
}

/// Byte range of the plain value that starts at `from` in `body` (after spaces): a quoted string
/// with its quotes, or a run of characters up to whitespace, a comment, a quote or a shell
/// operator. `None` when nothing is there.
pub(crate) fn value_at(body: &str, from: usize) -> Option<(usize, usize)> {
    let rest = body.get(from..)?;
    let start = from + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
    let b = body.as_bytes();
    let first = *b.get(start)?;
    if first == b'"' || first == b'\'' {
        let close = body.get(start + 1..)?.find(first as char)?;
        return Some((start, start + 1 + close + 1));
    }
    let mut end = start;
    let mut braces = 0usize;
    while let Some(&c) = b.get(end) {
        match c {
            b'{' => braces += 1,
            b'}' => braces = braces.saturating_sub(1),
            b' ' | b'\t' | b'"' | b'\'' | b';' | b')' | b'`' | b'\\' | b'#' | b',' if braces == 0 => break,
            _ => {}
        }
        end += 1;
    }
    (end > start).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_other_lines() {
        let mut l = Lines::new("a\r\nb\r\nc");
        l.splice(2, 0, 1, "B");
        l.insert_after(3, "d".into());
        l.remove(1);
        assert_eq!(l.finish(), "B\r\nc\r\nd\r\n");
        assert_eq!(value_at("--tp ${TP:-8} \\", 4), Some((5, 13)));
        assert_eq!(value_at("x: \"8\" # c", 2), Some((3, 6)));
        assert_eq!(value_at("x:", 2), None);
    }
}
