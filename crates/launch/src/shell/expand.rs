//! Expansion of a word as bash does it, without running anything: parameters (`$V`, `${V}`,
//! `${V:-d}`, `${V-d}`, `${V:=d}`, `${V:+a}`, `${V:?m}`, `${#V}`, `${!V}`, `${V%p}`, `${V%%p}`,
//! `${V#p}`, `${V##p}`, `${V/a/b}`, `${V//a/b}`, `${V^^}`, `${V,,}`, `${V:off:len}`), arrays
//! (`${A[@]}`, `${A[*]}`, `${A[i]}`, `${#A[@]}`), positional parameters (`$1`, `${10}`, `$@`,
//! `$*`, `$#`), `$((…))`, quote removal and field splitting. A variable the script does not set
//! and no default covers (the job's environment), a command substitution `$(…)` or `` `…` `` stay
//! as written, marked unknown, so that a reader can name what is missing.

use super::arith;
use super::exec::Shell;
use super::lex::{Piece, RawWord, is_name, skip_braces, skip_parens};
use fmperf_core::Error;

/// One word after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field {
    pub text: String,
    pub line: usize,
    /// Every expansion in it was known.
    pub known: bool,
}

/// A piece of expanded text.
enum Seg {
    /// Text; `split`: subject to field splitting (an unquoted expansion).
    Text { s: String, split: bool, known: bool },
    /// A field boundary (between the elements of `"${A[@]}"`).
    Break,
}

/// The value of a parameter expansion.
enum Res {
    /// Its elements; `all`: `@` (separate fields when quoted), else joined by spaces; whether
    /// the value holds nothing unknown (a variable set from an unknown one is itself unknown).
    Known(Vec<String>, bool, bool),
    /// Kept as written.
    Unknown(String),
}

impl Shell {
    /// The fields of `w`.
    pub(super) fn fields(&mut self, w: &RawWord) -> Result<Vec<Field>, Error> {
        let mut segs = Vec::new();
        for p in &w.pieces {
            match p {
                Piece::Lit(t) => segs.push(Seg::Text { s: t.clone(), split: false, known: true }),
                Piece::Unq(t) => self.expand_into(t, false, &mut segs)?,
                Piece::Dq(t) => {
                    if !(t.contains("[@]") || t.contains("$@")) {
                        segs.push(Seg::Text { s: String::new(), split: false, known: true });
                    }
                    self.expand_into(t, true, &mut segs)?;
                }
            }
        }
        let line = self.at_line.unwrap_or(w.line);
        let mut out = Vec::new();
        let (mut cur, mut has, mut known) = (String::new(), false, true);
        let push = |cur: &mut String, has: &mut bool, known: &mut bool, out: &mut Vec<Field>| {
            if *has || !cur.is_empty() {
                out.push(Field { text: std::mem::take(cur), line, known: *known });
            }
            *has = false;
            *known = true;
        };
        for seg in segs {
            match seg {
                Seg::Break => push(&mut cur, &mut has, &mut known, &mut out),
                Seg::Text { s, split: false, known: k } => {
                    cur.push_str(&s);
                    has = true;
                    known &= k;
                }
                Seg::Text { s, split: true, known: k } => {
                    known &= k;
                    for (n, part) in s.split(|c: char| c.is_ascii_whitespace()).enumerate() {
                        if n > 0 {
                            push(&mut cur, &mut has, &mut known, &mut out);
                            known &= k;
                        }
                        cur.push_str(part);
                    }
                }
            }
            self.check_len(cur.len())?;
        }
        push(&mut cur, &mut has, &mut known, &mut out);
        Ok(out)
    }

    /// `w` expanded to one string (assignments, `case` subjects): no splitting, arrays joined.
    pub(super) fn string(&mut self, w: &RawWord) -> Result<(String, bool), Error> {
        let mut segs = Vec::new();
        for p in &w.pieces {
            match p {
                Piece::Lit(t) => segs.push(Seg::Text { s: t.clone(), split: false, known: true }),
                Piece::Unq(t) | Piece::Dq(t) => self.expand_into(t, true, &mut segs)?,
            }
        }
        let (mut s, mut known, mut brk) = (String::new(), true, false);
        for seg in segs {
            match seg {
                Seg::Break => brk = true,
                Seg::Text { s: t, known: k, .. } => {
                    if brk {
                        s.push(' ');
                        brk = false;
                    }
                    s.push_str(&t);
                    known &= k;
                    self.check_len(s.len())?;
                }
            }
        }
        Ok((s, known))
    }

    fn check_len(&self, n: usize) -> Result<(), Error> {
        if n > super::MAX_WORD {
            return Err(cap(format!("a word or variable over {} bytes", super::MAX_WORD)));
        }
        Ok(())
    }

    fn count(&mut self, n: usize) -> Result<(), Error> {
        self.total = self.total.saturating_add(n);
        if self.total > super::MAX_TOTAL {
            return Err(cap(format!("over {} bytes of expanded text in all", super::MAX_TOTAL)));
        }
        Ok(())
    }

    /// Expands `t` (the text of an unquoted or double-quoted piece) into `segs`.
    fn expand_into(&mut self, t: &str, quoted: bool, segs: &mut Vec<Seg>) -> Result<(), Error> {
        self.nesting += 1;
        if self.nesting > 100 {
            return Err(cap("expansions nested over 100 deep (`${A:-${B:-…}}`)".into()));
        }
        let r = self.expand_text(t, quoted, segs);
        self.nesting -= 1;
        r
    }

    fn expand_text(&mut self, t: &str, quoted: bool, segs: &mut Vec<Seg>) -> Result<(), Error> {
        let b = t.as_bytes();
        let mut lit: Vec<u8> = Vec::new();
        let mut i = 0;
        let flush = |lit: &mut Vec<u8>, segs: &mut Vec<Seg>| {
            if !lit.is_empty() {
                segs.push(Seg::Text { s: String::from_utf8_lossy(lit).into_owned(), split: false, known: true });
                lit.clear();
            }
        };
        while i < b.len() {
            let c = b[i];
            match c {
                b'\\' => {
                    let n = b.get(i + 1).copied();
                    match n {
                        Some(b'\n') => {}
                        Some(x) if !quoted || matches!(x, b'$' | b'`' | b'"' | b'\\') => lit.push(x),
                        Some(x) => lit.extend_from_slice(&[b'\\', x]),
                        None => lit.push(b'\\'),
                    }
                    i += 2;
                }
                b'`' => {
                    let end = b[i + 1..].iter().position(|x| *x == b'`').map_or(b.len(), |p| i + 2 + p);
                    flush(&mut lit, segs);
                    segs.push(Seg::Text { s: unsplittable(&t[i..end.min(t.len())]), split: false, known: false });
                    self.note_unknown("`…`");
                    i = end;
                }
                b'$' => {
                    let (end, res) = self.dollar(t, i, quoted)?;
                    if end == i + 1 && matches!(res, Res::Unknown(ref s) if s == "$") {
                        lit.push(b'$');
                        i = end;
                        continue;
                    }
                    flush(&mut lit, segs);
                    match res {
                        Res::Unknown(s) => segs.push(Seg::Text { s, split: false, known: false }),
                        Res::Known(v, all, known) => {
                            // Each element also counts the memory it takes apart from its text.
                            let n: usize = v.iter().map(|e| e.len() + 24).sum();
                            self.count(n)?;
                            if quoted && !all {
                                segs.push(Seg::Text { s: v.join(" "), split: false, known });
                            } else {
                                for (k, e) in v.into_iter().enumerate() {
                                    if k > 0 {
                                        segs.push(Seg::Break);
                                    }
                                    segs.push(Seg::Text { s: e, split: !quoted, known });
                                }
                            }
                        }
                    }
                    i = end;
                }
                _ => {
                    lit.push(c);
                    i += 1;
                }
            }
        }
        flush(&mut lit, segs);
        Ok(())
    }

    /// The expansion starting with the `$` at `i`: its end and value.
    fn dollar(&mut self, t: &str, i: usize, quoted: bool) -> Result<(usize, Res), Error> {
        let b = t.as_bytes();
        match b.get(i + 1) {
            Some(b'(') if b.get(i + 2) == Some(&b'(') => {
                let end = skip_parens(b, i + 1);
                let inner = t.get(i + 3..end.saturating_sub(2).max(i + 3)).unwrap_or("");
                let (expr, known) =
                    self.string(&RawWord { pieces: vec![Piece::Dq(inner.to_string())], line: 0, raw: String::new() })?;
                let v = if known { arith::eval(&expr, &|n| self.scalar(n)) } else { None };
                Ok(match v {
                    Some(v) => (end, Res::Known(vec![v.to_string()], false, true)),
                    None => {
                        self.note_unknown(&format!("$(({expr}))"));
                        (end, Res::Unknown(format!("$(({expr}))")))
                    }
                })
            }
            Some(b'(') => {
                let end = skip_parens(b, i + 1);
                self.note_unknown("$(…)");
                Ok((end, Res::Unknown(unsplittable(&t[i..end]))))
            }
            Some(b'{') => {
                let end = skip_braces(b, i + 1);
                let inner = t.get(i + 2..end.saturating_sub(1).max(i + 2)).unwrap_or("");
                Ok((end, self.braced(inner, quoted)?))
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let n = b[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                let name = &t[i + 1..i + 1 + n];
                Ok((i + 1 + n, self.plain(name, &t[i..i + 1 + n])))
            }
            Some(c) if c.is_ascii_digit() || matches!(c, b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => {
                let name = &t[i + 1..i + 2];
                Ok((i + 2, self.plain(name, &t[i..i + 2])))
            }
            _ => Ok((i + 1, Res::Unknown("$".into()))),
        }
    }

    /// `$NAME`: its value, or unknown as `written`.
    fn plain(&mut self, name: &str, written: &str) -> Res {
        match self.lookup(name, None) {
            Some((v, all)) => {
                let known = self.is_known(name);
                if !known {
                    self.note_unknown(name);
                }
                Res::Known(v, all, known)
            }
            None => {
                self.note_unknown(name);
                Res::Unknown(written.to_string())
            }
        }
    }

    pub(super) fn note_unknown(&mut self, name: &str) {
        if !self.unknown_names.iter().any(|n| n == name) && self.unknown_names.len() < 100 {
            self.unknown_names.push(name.to_string());
        }
    }

    /// Whether a variable's value holds nothing unknown.
    pub(super) fn is_known(&self, name: &str) -> bool {
        !self.tainted.contains(name)
    }

    /// A scalar's value (the first element of an array), for arithmetic.
    pub(super) fn scalar(&self, name: &str) -> Option<String> {
        self.lookup(name, None).and_then(|(v, _)| v.into_iter().next())
    }

    /// A parameter's elements and whether they are `@`-style (separate fields when quoted);
    /// `None` when fmperf does not know it.
    fn lookup(&self, name: &str, sub: Option<&str>) -> Option<(Vec<String>, bool)> {
        if name.chars().all(|c| c.is_ascii_digit()) && !name.is_empty() {
            let n: usize = name.parse().ok()?;
            if n == 0 {
                return None;
            }
            let args = self.positional.as_ref()?;
            return Some((vec![args.get(n - 1).cloned().unwrap_or_default()], false));
        }
        match name {
            // Without positional parameters, `$@` and `$*` are empty (the user passes none);
            // `$1`… and `$#` stay unknown (a script's own checks of them are not decided).
            "@" | "*" => return Some((self.positional.clone().unwrap_or_default(), name == "@")),
            "#" => return self.positional.as_ref().map(|a| (vec![a.len().to_string()], false)),
            "?" | "$" | "!" | "-" => return None,
            _ => {}
        }
        let v = self.vars.get(name)?;
        match sub {
            None => Some((v.first().cloned().into_iter().collect(), false)),
            Some("@") => Some((v.clone(), true)),
            Some("*") => Some((v.clone(), false)),
            Some(k) => {
                if let Some(map) = self.assoc.get(name) {
                    return map.get(k).map(|x| (vec![x.clone()], false));
                }
                let idx = arith::eval(k, &|n| self.scalar(n))?;
                let idx = if idx < 0 { i128::try_from(v.len()).ok()? + idx } else { idx };
                Some((vec![usize::try_from(idx).ok().and_then(|i| v.get(i)).cloned().unwrap_or_default()], false))
            }
        }
    }

    /// `${inner}`.
    fn braced(&mut self, inner: &str, quoted: bool) -> Result<Res, Error> {
        let written = format!("${{{inner}}}");
        if let Some(rest) = inner.strip_prefix('#').filter(|r| !r.is_empty()) {
            let (name, sub) = split_name(rest);
            return Ok(match self.lookup(name, sub.0) {
                Some((v, _)) if matches!(sub.0, Some("@" | "*")) => Res::Known(vec![v.len().to_string()], false, true),
                Some((v, _)) => {
                    Res::Known(vec![v.first().map_or(0, |s| s.chars().count()).to_string()], false, self.is_known(name))
                }
                None => {
                    self.note_unknown(name);
                    Res::Unknown(written)
                }
            });
        }
        if let Some(rest) = inner.strip_prefix('!').filter(|r| is_name(r)) {
            let target = self.scalar(rest).filter(|t| is_name(t));
            return Ok(match target.and_then(|t| self.lookup(&t, None)) {
                Some((v, all)) => Res::Known(v, all, true),
                None => {
                    self.note_unknown(rest);
                    Res::Unknown(written)
                }
            });
        }
        let (name, (sub, op)) = split_name(inner);
        if name.is_empty() {
            return Ok(Res::Unknown(written));
        }
        let value = self.lookup(name, sub);
        let known = self.is_known(name);
        if !known {
            self.note_unknown(name);
        }
        let set = |nonempty: bool| value.as_ref().is_some_and(|(v, _)| !nonempty || v.iter().any(|s| !s.is_empty()));
        for (o, colon) in [
            (":-", true),
            (":=", true),
            (":+", true),
            (":?", true),
            ("-", false),
            ("=", false),
            ("+", false),
            ("?", false),
        ] {
            let Some(word) = op.strip_prefix(o) else { continue };
            let is_set = set(colon);
            let kind = o.trim_start_matches(':');
            return Ok(match kind {
                "-" | "=" if is_set => value.map_or(Res::Unknown(written), |(v, a)| Res::Known(v, a, known)),
                "-" | "=" => {
                    let d = self.operand(word, quoted)?;
                    if kind == "=" && is_name(name) {
                        self.set_var(name, vec![d.clone()])?;
                    }
                    if value.is_none() {
                        self.note_default(name, &d);
                    }
                    Res::Known(vec![d], false, true)
                }
                "+" if is_set => Res::Known(vec![self.operand(word, quoted)?], false, known),
                "+" => Res::Known(vec![String::new()], false, true),
                _ if is_set => value.map_or(Res::Unknown(written), |(v, a)| Res::Known(v, a, known)),
                _ => {
                    self.note_unknown(name);
                    Res::Unknown(written)
                }
            });
        }
        let Some((v, all)) = value else {
            self.note_unknown(name);
            return Ok(Res::Unknown(written));
        };
        if op.is_empty() {
            return Ok(Res::Known(v, all, known));
        }
        // `${@:2}`, `${A[@]:1:3}`: a slice of the elements (`$@` counts from `$1`).
        let whole = matches!(name, "@" | "*") || matches!(sub, Some("@" | "*"));
        if whole && let Some(r) = op.strip_prefix(':') {
            let (off, len) = r.split_once(':').map_or((r, None), |(o, l)| (o, Some(l)));
            let num = |e: &str| arith::eval(e, &|x| self.scalar(x));
            let (Some(o), Some(l)) = (num(off), len.map_or(Some(i128::MAX), num)) else {
                return Ok(Res::Unknown(written));
            };
            let n = v.len() as i128;
            let o = if matches!(name, "@" | "*") && o > 0 { o - 1 } else { o };
            let start = if o < 0 { (n + o).max(0) } else { o.min(n) };
            let end = if l < 0 { (n + l).max(start) } else { start.saturating_add(l).min(n) };
            let slice = v.get(start as usize..end as usize).map(<[String]>::to_vec).unwrap_or_default();
            return Ok(Res::Known(slice, all, known));
        }
        let mut out = Vec::with_capacity(v.len());
        for s in v {
            match self.operate(&s, op, quoted)? {
                Some(x) => out.push(x),
                None => return Ok(Res::Unknown(written)),
            }
        }
        Ok(Res::Known(out, all, known))
    }

    /// An operand of `${V:-word}` and the like, expanded (outer quotes removed).
    fn operand(&mut self, word: &str, quoted: bool) -> Result<String, Error> {
        let piece = if word.len() >= 2 && word.starts_with('\'') && word.ends_with('\'') {
            Piece::Lit(word[1..word.len() - 1].to_string())
        } else if word.len() >= 2 && word.starts_with('"') && word.ends_with('"') {
            Piece::Dq(word[1..word.len() - 1].to_string())
        } else if quoted {
            Piece::Dq(word.to_string())
        } else {
            Piece::Unq(word.to_string())
        };
        Ok(self.string(&RawWord { pieces: vec![piece], line: 0, raw: String::new() })?.0)
    }

    /// Pattern removal, replacement, case and substrings on one value (`None`: not read).
    fn operate(&mut self, s: &str, op: &str, quoted: bool) -> Result<Option<String>, Error> {
        if s.len() > 4096 && op.starts_with(['%', '#']) {
            return Err(cap("a pattern removal on a value over 4 KiB".into()));
        }
        let chars: Vec<char> = s.chars().collect();
        let at = |k: usize| chars[..k.min(chars.len())].iter().collect::<String>();
        let from = |k: usize| chars[k.min(chars.len())..].iter().collect::<String>();
        let n = chars.len();
        Ok(Some(if let Some(p) = op.strip_prefix("%%") {
            let p = self.operand(p, quoted)?;
            (0..=n).find(|k| glob(&p, &from(*k))).map_or(s.to_string(), at)
        } else if let Some(p) = op.strip_prefix('%') {
            let p = self.operand(p, quoted)?;
            (0..=n).rev().find(|k| glob(&p, &from(*k))).map_or(s.to_string(), at)
        } else if let Some(p) = op.strip_prefix("##") {
            let p = self.operand(p, quoted)?;
            (0..=n).rev().find(|k| glob(&p, &at(*k))).map_or(s.to_string(), from)
        } else if let Some(p) = op.strip_prefix('#') {
            let p = self.operand(p, quoted)?;
            (0..=n).find(|k| glob(&p, &at(*k))).map_or(s.to_string(), from)
        } else if let Some(rest) = op.strip_prefix('/') {
            let (every, rest) = match rest.strip_prefix('/') {
                Some(r) => (true, r),
                None => (false, rest),
            };
            let (pat, rep) = rest.split_once('/').unwrap_or((rest, ""));
            let (pat, rep) = (self.operand(pat, quoted)?, self.operand(rep, quoted)?);
            if pat.is_empty() || pat.contains(['*', '?', '[']) {
                return Ok(None);
            }
            let grows = s.matches(pat.as_str()).count().saturating_mul(rep.len());
            if s.len().saturating_add(grows) > super::MAX_WORD {
                return Err(cap(format!("a word or variable over {} bytes", super::MAX_WORD)));
            }
            if every { s.replace(&pat, &rep) } else { s.replacen(&pat, &rep, 1) }
        } else if op == "^^" {
            s.to_uppercase()
        } else if op == ",," {
            s.to_lowercase()
        } else if let Some(r) = op.strip_prefix(':') {
            let (off, len) = match r.split_once(':') {
                Some((o, l)) => (o, Some(l)),
                None => (r, None),
            };
            let num = |e: &str| arith::eval(e, &|x| self.scalar(x));
            let Some(o) = num(off) else { return Ok(None) };
            let start = if o < 0 { (n as i128 + o).max(0) } else { o.min(n as i128) } as usize;
            let end = match len.map(num) {
                None => n,
                Some(None) => return Ok(None),
                Some(Some(l)) if l < 0 => ((n as i128 + l).max(start as i128)) as usize,
                Some(Some(l)) => (start as i128 + l).min(n as i128) as usize,
            };
            chars[start..end.max(start)].iter().collect()
        } else {
            return Ok(None);
        }))
    }

    fn note_default(&mut self, name: &str, value: &str) {
        let shown: String = value.chars().take(40).collect();
        let d = format!("{name}={shown}");
        if !self.defaults.contains(&d) && self.defaults.len() < 50 {
            self.defaults.push(d);
        }
    }
}

/// A command substitution kept as written, its blanks made no-break spaces (U+00A0) so that it
/// stays one word when a variable holding it is split into words later.
fn unsplittable(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_whitespace() { '\u{a0}' } else { c }).collect()
}

/// Splits `NAME[sub]rest` / a special parameter: `(name, (subscript, rest))`.
fn split_name(s: &str) -> (&str, (Option<&str>, &str)) {
    let n = if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.chars().take_while(char::is_ascii_digit).count()
    } else if s.starts_with(['@', '*', '#', '?', '$', '!', '-']) {
        1
    } else {
        s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count()
    };
    let (name, rest) = s.split_at(n);
    if let Some(r) = rest.strip_prefix('[')
        && let Some(close) = r.find(']')
    {
        return (name, (Some(&r[..close]), &r[close + 1..]));
    }
    (name, (None, rest))
}

/// An error for a cap of the evaluator.
pub(super) fn cap(what: String) -> Error {
    Error::Parse {
        message: format!(
            "the script expands to {what}: a cap of fmperf's shell reader (it never runs a script; \
             bounded so that any input is read in bounded time and memory)"
        ),
    }
}

/// Whether `s` matches the glob `p` (`*`, `?`, `[…]` classes, `\` escapes), whole.
pub(super) fn glob(p: &str, s: &str) -> bool {
    let p: Vec<char> = p.chars().collect();
    let s: Vec<char> = s.chars().collect();
    // Iterative matching with one backtrack point for `*` (linear in practice).
    let (mut pi, mut si) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match class(&p, pi, s[si]) {
                Some((true, next)) => {
                    pi = next;
                    si += 1;
                    continue;
                }
                Some((false, _)) => None,
                None => (s[si] == '[').then_some(1),
            },
            Some('\\') if p.get(pi + 1) == Some(&s[si]) => {
                pi += 2;
                si += 1;
                continue;
            }
            Some(c) if *c == s[si] => Some(1),
            _ => None,
        };
        match step {
            Some(k) => {
                pi += k;
                si += 1;
            }
            None => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|c| *c == '*')
}

/// A `[…]` class at `p[at]` against `c`: whether it matches and the index after it.
fn class(p: &[char], at: usize, c: char) -> Option<(bool, usize)> {
    let mut i = at + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let start = i;
    while i < p.len() && (p[i] != ']' || i == start) {
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            hit |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            hit |= p[i] == c;
            i += 1;
        }
    }
    (i < p.len()).then_some((hit != negate, i + 1))
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("*B", "70B") && glob("7[0-9]B", "70B") && glob("?0B", "70B") && !glob("8*", "70B"));
        assert!(glob("*", "") && glob("a*b*c", "axxbyyc") && !glob("a*b*c", "axxbyy"));
        assert!(glob("--tp=*", "--tp=4") && glob("[!a]x", "bx") && !glob("[!a]x", "ax"));
        assert!(glob("[", "["));
    }
}
