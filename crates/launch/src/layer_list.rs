//! Megatron-LM's per-block 0/1 lists, as its flags take them (`--moe-layer-freq`,
//! `--window-attn-skip-freq`): a Python list expression that `megatron/training/arguments.py`
//! evaluates (`_eval_pattern`), such as `([0]*3+[1]*58)`, `[1,1,1,0]*3`, `([1]*3+[0]*1)*3` or
//! `[0]*2+[1,0]*4`. fmperf reads the same expressions without evaluating Python: lists of 0 and 1,
//! `+` (concatenation), `*` by an integer on either side, and parentheses, nested.

/// Most entries an expanded list may have (a model has far fewer blocks).
const MAX_ENTRIES: usize = 1 << 20;

/// Expands `text` into one flag per block (1: `true`). `meaning` names what 0 and 1 stand for
/// (`("dense", "MoE")`), for the message; `Err` is the rule the text breaks.
pub fn expand(text: &str, meaning: (&str, &str)) -> Result<Vec<bool>, String> {
    let mut p = Parser { s: text.as_bytes(), at: 0, meaning };
    let out = p.sum()?;
    p.skip_space();
    if p.at < p.s.len() {
        return Err(format!("unexpected `{}` at character {}", &text[p.at..], p.at + 1));
    }
    Ok(out)
}

/// A recursive-descent reader of the grammar
/// `sum := product ('+' product)*`, `product := factor ('*' int)* | int '*' product`,
/// `factor := '[' entries ']' | '(' sum ')'`.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    meaning: (&'a str, &'a str),
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_space();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn int(&mut self) -> Option<usize> {
        self.skip_space();
        let start = self.at;
        while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).ok()?.parse().ok()
    }

    fn sum(&mut self) -> Result<Vec<bool>, String> {
        let mut out = self.product()?;
        while self.eat(b'+') {
            let more = self.product()?;
            if out.len() + more.len() > MAX_ENTRIES {
                return Err("too many blocks".into());
            }
            out.extend(more);
        }
        Ok(out)
    }

    fn product(&mut self) -> Result<Vec<bool>, String> {
        let start = self.at;
        if let Some(n) = self.int() {
            if !self.eat(b'*') {
                return Err("a bare integer: expected a list such as [0]*3 or 3*[0]".into());
            }
            return repeat(self.product()?, n);
        }
        self.at = start;
        let mut out = self.factor()?;
        while self.eat(b'*') {
            let n = self.int().ok_or("the repeat count must be an integer")?;
            out = repeat(out, n)?;
        }
        Ok(out)
    }

    fn factor(&mut self) -> Result<Vec<bool>, String> {
        if self.eat(b'(') {
            let inner = self.sum()?;
            return if self.eat(b')') { Ok(inner) } else { Err("a `(` is not closed".into()) };
        }
        if !self.eat(b'[') {
            return Err("expected an integer or a list such as ([0]*3+[1]*58)".into());
        }
        let mut out = Vec::new();
        if self.eat(b']') {
            return Ok(out);
        }
        loop {
            match self.int() {
                Some(0) => out.push(false),
                Some(1) => out.push(true),
                _ => return Err(format!("entries must be 0 ({}) or 1 ({})", self.meaning.0, self.meaning.1)),
            }
            if self.eat(b']') {
                return Ok(out);
            }
            if !self.eat(b',') {
                return Err("a `[` is not closed".into());
            }
        }
    }
}

fn repeat(items: Vec<bool>, n: usize) -> Result<Vec<bool>, String> {
    if items.len().saturating_mul(n) > MAX_ENTRIES {
        return Err("too many blocks".into());
    }
    Ok(items.repeat(n))
}

#[cfg(test)]
mod tests {
    use super::expand;

    const M: (&str, &str) = ("dense", "MoE");

    #[test]
    fn megatrons_list_forms() {
        let (f, t) = (false, true);
        assert_eq!(expand("([0]*3+[1]*2)", M).unwrap(), [f, f, f, t, t]);
        assert_eq!(expand("[0,1]*2", M).unwrap(), [f, t, f, t]);
        assert_eq!(expand("2*[0,1]", M).unwrap(), [f, t, f, t]);
        // Megatron's own docstring examples (arguments.py): a parenthesized sum repeated.
        assert_eq!(expand("([1]*3+[0]*1)*3", M).unwrap(), [t, t, t, f, t, t, t, f, t, t, t, f]);
        assert_eq!(expand("[1,1,1,0]*3", M).unwrap(), expand("([1]*3+[0]*1)*3", M).unwrap());
        assert_eq!(expand("([0]+[1]*23)", M).unwrap().len(), 24);
        assert_eq!(expand(" [ 0 , 1 ] ", M).unwrap(), [f, t]);
    }

    #[test]
    fn bad_lists_say_why() {
        assert!(expand("[0,2]", M).unwrap_err().contains("0 (dense) or 1 (MoE)"));
        assert!(expand("[0]*x", M).unwrap_err().contains("repeat count"));
        assert!(expand("([0]*3", M).unwrap_err().contains("not closed"));
        assert!(expand("[0,1", M).unwrap_err().contains("not closed"));
        assert!(expand("[0]]", M).unwrap_err().contains("unexpected"));
        assert!(expand("[1]*2000000", M).unwrap_err().contains("too many"));
        assert!(expand("3", M).is_err());
    }
}
