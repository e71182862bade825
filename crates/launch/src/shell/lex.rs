//! The shell's tokens: words (made of literal, unquoted and double-quoted pieces, expanded later),
//! operators, newlines, the opening of an array assignment `NAME=(`, arithmetic commands `((…))`
//! and the bodies of here-documents. Comments are dropped, `\`-newline joins lines, and every word
//! keeps its physical line (1-based) and its source text.

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// Single-quoted text: no expansion, no splitting.
    Lit(String),
    /// Unquoted text: expanded, then split on whitespace (`\x` escapes kept for the expander).
    Unq(String),
    /// Double-quoted text: expanded, never split (`\` escapes kept for the expander).
    Dq(String),
}

/// A word as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RawWord {
    /// Its pieces, in order.
    pub pieces: Vec<Piece>,
    /// The line it starts on (1-based).
    pub line: usize,
    /// Its source text.
    pub raw: String,
}

impl RawWord {
    /// The word's text when it is one plain unquoted piece without `$`, `\` or backquotes
    /// (reserved words, operators inside `[[ ]]`).
    pub fn plain(&self) -> Option<&str> {
        match self.pieces.as_slice() {
            [Piece::Unq(t)] if !t.contains(['$', '\\', '`']) => Some(t),
            _ => None,
        }
    }

    /// A literal word (an operator's text inside `[[ ]]`).
    pub fn literal(text: &str, line: usize) -> RawWord {
        RawWord { pieces: vec![Piece::Lit(text.to_string())], line, raw: text.to_string() }
    }
}

/// A here-document's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Heredoc {
    /// The lines between the operator's line and the delimiter.
    pub body: String,
    /// Whether the delimiter was quoted (the body is not expanded).
    pub quoted: bool,
}

/// A token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// A word.
    Word(RawWord),
    /// An operator (`;`, `;;`, `&`, `&&`, `|`, `||`, `(`, `)`, `<`, `>`, `<<`, `<<<`) and its line.
    Op(&'static str, usize),
    /// The end of a line.
    Newline(usize),
    /// `NAME=(`, `NAME+=(`: the elements follow up to `)`.
    ArrayOpen { name: String, append: bool, line: usize },
    /// `((…))`: an arithmetic command, its expression.
    Arith(String, usize),
}

/// A lexed script: its tokens and its here-documents' bodies in the order of their `<<`.
#[derive(Debug, Default)]
pub(super) struct Lexed {
    pub toks: Vec<Tok>,
    pub heredocs: Vec<Heredoc>,
    /// The first quote (`'`, `"` or `` ` ``) that the text never closes, with its line: bash stops
    /// such a script with "unexpected EOF while looking for matching …", so the reader refuses it.
    pub unclosed: Option<(char, usize)>,
}

/// The word being read.
struct WordBuf {
    pieces: Vec<Piece>,
    unq: Vec<u8>,
    start: Option<usize>,
    line: usize,
}

impl WordBuf {
    fn is_empty(&self) -> bool {
        self.pieces.is_empty() && self.unq.is_empty()
    }
    fn begin(&mut self, at: usize, line: usize) {
        if self.start.is_none() {
            self.start = Some(at);
            self.line = line;
        }
    }
    fn flush_unq(&mut self) {
        if !self.unq.is_empty() {
            self.pieces.push(Piece::Unq(text(&std::mem::take(&mut self.unq))));
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Index just past the `)` closing the `(` at `open` (nested parentheses and quotes skipped), or
/// the end of `b`.
pub(super) fn skip_parens(b: &[u8], open: usize) -> usize {
    skip_nested(b, open, b'(', b')')
}

/// Index just past the `}` closing the `${` whose `{` is at `open`.
pub(super) fn skip_braces(b: &[u8], open: usize) -> usize {
    skip_nested(b, open, b'{', b'}')
}

/// Index just past the `close` that balances the `opener` at `open` (escapes and quotes skipped),
/// or the end of `b`.
fn skip_nested(b: &[u8], open: usize, opener: u8, close: u8) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' => i = find(b, i + 1, b'\'').unwrap_or(b.len()),
            b'"' => i = skip_dq(b, i + 1).saturating_sub(1),
            c if c == opener => depth += 1,
            c if c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Index just past the `"` closing a double-quoted string whose text starts at `from`, or the
/// end of `b` when no `"` closes it.
fn skip_dq(b: &[u8], from: usize) -> usize {
    close_dq(b, from).unwrap_or(b.len())
}

/// Index just past the `"` closing a double-quoted string whose text starts at `from`; `None`
/// when the text ends first (an unclosed quote).
fn close_dq(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'"' => return Some(i + 1),
            b'$' if b.get(i + 1) == Some(&b'(') => i = skip_parens(b, i + 1) - 1,
            b'$' if b.get(i + 1) == Some(&b'{') => i = skip_braces(b, i + 1) - 1,
            b'`' => i = find(b, i + 1, b'`').unwrap_or(b.len()),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the next unescaped `c` at or after `from`.
fn find(b: &[u8], from: usize, c: u8) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        if b[i] == b'\\' && c != b'\'' {
            i += 2;
            continue;
        }
        if b[i] == c {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn newlines(b: &[u8]) -> usize {
    b.iter().filter(|c| **c == b'\n').count()
}

/// Whether `s` is `NAME=`, `NAME+=` or `NAME[…]=` / `NAME[…]+=` (an assignment's head).
pub(super) fn assignment_head(s: &str) -> Option<(&str, bool)> {
    let head = s.strip_suffix('=')?;
    let (head, append) = match head.strip_suffix('+') {
        Some(h) => (h, true),
        None => (head, false),
    };
    let name = head.split('[').next().unwrap_or("");
    is_name(name).then_some((name, append))
}

/// A shell variable name.
pub(super) fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// Splits `src` into tokens; `line0` is the line of its first character.
pub(super) fn lex(src: &str, line0: usize) -> Lexed {
    let b = src.as_bytes();
    let mut out = Lexed::default();
    let mut line = line0;
    let mut i = 0;
    let mut w = WordBuf { pieces: Vec::new(), unq: Vec::new(), start: None, line };
    // Here-documents whose bodies start after the next newline: (delimiter, strip tabs, quoted).
    let mut pending: Vec<(String, bool, bool)> = Vec::new();
    let mut want_delim: Option<bool> = None;
    macro_rules! finish {
        () => {{
            w.flush_unq();
            if !w.pieces.is_empty() {
                let end = i.min(b.len());
                let start = w.start.unwrap_or(end).min(end);
                let raw = text(&b[start..end]);
                let pieces = std::mem::take(&mut w.pieces);
                if let Some(strip) = want_delim.take() {
                    let quoted = pieces.iter().any(|p| !matches!(p, Piece::Unq(t) if !t.contains('\\')));
                    let delim: String = pieces
                        .iter()
                        .map(|p| match p {
                            Piece::Lit(t) | Piece::Dq(t) => t.clone(),
                            Piece::Unq(t) => t.replace('\\', ""),
                        })
                        .collect();
                    pending.push((delim, strip, quoted));
                }
                out.toks.push(Tok::Word(RawWord { pieces, line: w.line, raw }));
            }
            w.start = None;
        }};
    }
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' if b.get(i + 1) == Some(&b'\n') => {
                i += 2;
                line += 1;
                continue;
            }
            b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => {
                i += 3;
                line += 1;
                continue;
            }
            b'\\' => {
                w.begin(i, line);
                let end = (i + 2).min(b.len());
                w.unq.extend_from_slice(&b[i..end]);
                i = end;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                finish!();
                i += 1;
                continue;
            }
            b'\n' => {
                finish!();
                out.toks.push(Tok::Newline(line));
                line += 1;
                i += 1;
                for (delim, strip, quoted) in std::mem::take(&mut pending) {
                    let mut body = String::new();
                    while i < b.len() {
                        let end = b[i..].iter().position(|x| *x == b'\n').map_or(b.len(), |p| i + p);
                        let raw = text(&b[i..end]);
                        i = (end + 1).min(b.len());
                        line += 1;
                        let t = raw.trim_end_matches('\r');
                        let t = if strip { t.trim_start_matches('\t') } else { t };
                        if t == delim {
                            break;
                        }
                        body.push_str(t);
                        body.push('\n');
                    }
                    out.heredocs.push(Heredoc { body, quoted });
                }
                continue;
            }
            b'#' if w.is_empty() => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' => {
                w.begin(i, line);
                w.flush_unq();
                let end = find(b, i + 1, b'\'').unwrap_or_else(|| {
                    out.unclosed.get_or_insert(('\'', line));
                    b.len()
                });
                let s = &b[(i + 1).min(end)..end];
                line += newlines(s);
                w.pieces.push(Piece::Lit(text(s)));
                i = end + 1;
                continue;
            }
            b'"' => {
                w.begin(i, line);
                w.flush_unq();
                let (end, inner_end) = match close_dq(b, i + 1) {
                    Some(end) => (end, end - 1),
                    None => {
                        out.unclosed.get_or_insert(('"', line));
                        (b.len(), b.len())
                    }
                };
                let s = &b[(i + 1).min(inner_end)..inner_end];
                line += newlines(s);
                w.pieces.push(Piece::Dq(text(s)));
                i = end;
                continue;
            }
            b'`' => {
                w.begin(i, line);
                let end = find(b, i + 1, b'`').map_or_else(
                    || {
                        out.unclosed.get_or_insert(('`', line));
                        b.len()
                    },
                    |e| e + 1,
                );
                line += newlines(&b[i..end]);
                w.unq.extend_from_slice(&b[i..end]);
                i = end;
                continue;
            }
            b'$' if matches!(b.get(i + 1), Some(b'(') | Some(b'{')) => {
                w.begin(i, line);
                let end = if b[i + 1] == b'(' { skip_parens(b, i + 1) } else { skip_braces(b, i + 1) };
                line += newlines(&b[i..end]);
                w.unq.extend_from_slice(&b[i..end]);
                i = end;
                continue;
            }
            b'(' => {
                let head = if w.pieces.is_empty() { std::str::from_utf8(&w.unq).ok() } else { None };
                if let Some((name, append)) = head.and_then(assignment_head) {
                    out.toks.push(Tok::ArrayOpen { name: name.to_string(), append, line: w.line });
                    w.unq.clear();
                    w.start = None;
                    i += 1;
                    continue;
                }
                if w.is_empty() && b.get(i + 1) == Some(&b'(') {
                    let end = skip_parens(b, i);
                    let inner = &b[(i + 2).min(end)..end.saturating_sub(2).max(i + 2).min(b.len())];
                    out.toks.push(Tok::Arith(text(inner), line));
                    line += newlines(&b[i..end]);
                    i = end;
                    continue;
                }
                finish!();
                out.toks.push(Tok::Op("(", line));
                i += 1;
                continue;
            }
            b')' | b';' | b'&' | b'|' | b'<' | b'>' => {
                // A file descriptor number before a redirection (`2>&1`) is not a word.
                if matches!(c, b'<' | b'>') && w.pieces.is_empty() && w.unq.iter().all(u8::is_ascii_digit) {
                    w.unq.clear();
                    w.start = None;
                }
                finish!();
                let next = |k: usize| b.get(i + k).copied();
                let (op, len): (&'static str, usize) = match (c, next(1), next(2)) {
                    (b')', _, _) => (")", 1),
                    (b';', Some(b';'), Some(b'&')) => (";;", 3),
                    (b';', Some(b';'), _) | (b';', Some(b'&'), _) => (";;", 2),
                    (b';', _, _) => (";", 1),
                    (b'&', Some(b'&'), _) => ("&&", 2),
                    (b'&', Some(b'>'), Some(b'>')) => (">", 3),
                    (b'&', Some(b'>'), _) => (">", 2),
                    (b'&', _, _) => ("&", 1),
                    (b'|', Some(b'|'), _) => ("||", 2),
                    (b'|', Some(b'&'), _) => ("|", 2),
                    (b'|', _, _) => ("|", 1),
                    (b'<', Some(b'<'), Some(b'<')) => ("<<<", 3),
                    (b'<', Some(b'<'), Some(b'-')) => ("<<-", 3),
                    (b'<', Some(b'<'), _) => ("<<", 2),
                    (b'<', Some(b'('), _) | (b'>', Some(b'('), _) => {
                        // Process substitution: one word, kept as written.
                        let end = skip_parens(b, i + 1);
                        w.begin(i, line);
                        w.pieces.push(Piece::Lit(text(&b[i..end])));
                        line += newlines(&b[i..end]);
                        i = end;
                        continue;
                    }
                    (b'<', Some(b'&' | b'>'), _) => ("<", 2),
                    (b'<', _, _) => ("<", 1),
                    (b'>', Some(b'>' | b'&' | b'|'), _) => (">", 2),
                    _ => (">", 1),
                };
                match op {
                    "<<" => want_delim = Some(false),
                    "<<-" => want_delim = Some(true),
                    _ => {}
                }
                let op = if op == "<<-" { "<<" } else { op };
                out.toks.push(Tok::Op(op, line));
                i += len;
                continue;
            }
            _ => {
                w.begin(i, line);
                w.unq.push(c);
                i += 1;
            }
        }
    }
    finish!();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_operators_heredocs() {
        let l = lex("A=(x # c\n y) ; echo \"a $B\"'c' 2>&1 | tee <<EOF\nbody $X\nEOF\nB=1 \\\n  c", 1);
        assert!(matches!(l.toks[0], Tok::ArrayOpen { ref name, append: false, line: 1 } if name == "A"));
        assert_eq!(l.heredocs.len(), 1);
        assert_eq!(l.heredocs[0].body, "body $X\n");
        let last = l.toks.iter().rev().find_map(|t| if let Tok::Word(w) = t { Some(w) } else { None }).unwrap();
        assert_eq!((last.raw.as_str(), last.line), ("c", 6));
        assert_eq!(lex("\"unclosed ${ $( `", 1).unclosed, Some(('"', 1)));
        assert_eq!(lex("A=1\nB='x\ny'\nC=\"z", 1).unclosed, Some(('"', 4)));
        assert_eq!(lex("A='x\nB=\"y\"", 1).unclosed, Some(('\'', 1)));
        assert_eq!(lex("A=`date", 3).unclosed, Some(('`', 3)));
        assert_eq!(lex("A=\"a'b\" B='c\"d' C=\\\" D=`e` # don't", 1).unclosed, None);
        let _ = lex("((((", 1);
    }
}
