//! Megatron-LM's per-block 0/1 lists, as its flags take them (`--moe-layer-freq`,
//! `--window-attn-skip-freq`): a Python list expression that `megatron/training/arguments.py`
//! evaluates (`_eval_pattern`), such as `([0]*3+[1]*58)`, `[1,1,1,0]*3`, `([1]*3+[0]*1)*3` or
//! `[0]*2+[1,0]*4`. fmperf reads the same expressions without evaluating Python: lists of 0 and 1,
//! `+` (concatenation), `*` by an integer on either side, and parentheses, nested.

/// Most entries an expanded list may have (a model has far fewer blocks).
const MAX_ENTRIES: usize = 1 << 20;

/// Why a list expression is refused: the rule the text breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListError {
    /// Text left after a whole expression (`rest`, from its 1-based character `at`).
    Unexpected { rest: String, at: usize },
    /// More entries than [`MAX_ENTRIES`].
    TooMany,
    /// An integer not followed by `*`.
    BareInteger,
    /// A `*` not followed by an integer.
    RepeatCount,
    /// A bracket (`(` or `[`) left open.
    NotClosed(char),
    /// Neither an integer nor a list where one was expected.
    Expected,
    /// An entry other than 0 or 1 (with what 0 and 1 stand for).
    Entry { zero: String, one: String },
}

impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListError::Unexpected { rest, at } => write!(f, "unexpected `{rest}` at character {at}"),
            ListError::TooMany => f.write_str("too many blocks"),
            ListError::BareInteger => f.write_str("a bare integer: expected a list such as [0]*3 or 3*[0]"),
            ListError::RepeatCount => f.write_str("the repeat count must be an integer"),
            ListError::NotClosed(c) => write!(f, "a `{c}` is not closed"),
            ListError::Expected => f.write_str("expected an integer or a list such as ([0]*3+[1]*58)"),
            ListError::Entry { zero, one } => write!(f, "entries must be 0 ({zero}) or 1 ({one})"),
        }
    }
}

impl std::error::Error for ListError {}

impl From<ListError> for String {
    fn from(e: ListError) -> String {
        e.to_string()
    }
}

/// Expands `text` into one flag per block (1: `true`). `meaning` names what 0 and 1 stand for
/// (`("dense", "MoE")`), for the message; `Err` is the rule the text breaks.
pub fn expand(text: &str, meaning: (&str, &str)) -> Result<Vec<bool>, ListError> {
    let mut p = Parser { s: text.as_bytes(), at: 0, meaning };
    let out = p.sum()?;
    p.skip_space();
    if p.at < p.s.len() {
        return Err(ListError::Unexpected { rest: text[p.at..].to_string(), at: p.at + 1 });
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

    fn sum(&mut self) -> Result<Vec<bool>, ListError> {
        let mut out = self.product()?;
        while self.eat(b'+') {
            let more = self.product()?;
            if out.len() + more.len() > MAX_ENTRIES {
                return Err(ListError::TooMany);
            }
            out.extend(more);
        }
        Ok(out)
    }

    fn product(&mut self) -> Result<Vec<bool>, ListError> {
        let start = self.at;
        if let Some(n) = self.int() {
            if !self.eat(b'*') {
                return Err(ListError::BareInteger);
            }
            return repeat(self.product()?, n);
        }
        self.at = start;
        let mut out = self.factor()?;
        while self.eat(b'*') {
            let n = self.int().ok_or(ListError::RepeatCount)?;
            out = repeat(out, n)?;
        }
        Ok(out)
    }

    fn factor(&mut self) -> Result<Vec<bool>, ListError> {
        if self.eat(b'(') {
            let inner = self.sum()?;
            return if self.eat(b')') { Ok(inner) } else { Err(ListError::NotClosed('(')) };
        }
        if !self.eat(b'[') {
            return Err(ListError::Expected);
        }
        let mut out = Vec::new();
        if self.eat(b']') {
            return Ok(out);
        }
        loop {
            match self.int() {
                Some(0) => out.push(false),
                Some(1) => out.push(true),
                _ => {
                    let (zero, one) = (self.meaning.0.to_string(), self.meaning.1.to_string());
                    return Err(ListError::Entry { zero, one });
                }
            }
            if self.eat(b']') {
                return Ok(out);
            }
            if !self.eat(b',') {
                return Err(ListError::NotClosed('['));
            }
        }
    }
}

/// The MoE blocks of a 0/1 list as `(first_dense, every)`: `first_dense` dense blocks, then one
/// MoE block in every `every` (the blocks `first_dense + every − 1`, `first_dense + 2·every − 1`,
/// …; [`crate::moe_shape::MoeShape`]'s pattern); the leading dense run may belong to the
/// every-`n`-th pattern (`[0,1,0,1]`: none first, every 2). `None` when the list is not of that
/// form or has no MoE block.
pub fn moe_pattern(flags: &[bool]) -> Option<(u64, u64)> {
    let k = flags.iter().take_while(|&&x| !x).count();
    if k == flags.len() {
        return None;
    }
    let fits =
        |fd: usize, n: usize| flags.iter().enumerate().all(|(i, &x)| x == (i >= fd && (i + 1 - fd).is_multiple_of(n)));
    (0..=k.min(flags.len().saturating_sub(1)))
        .rev()
        .find_map(|fd| (1..=flags.len()).find(|&n| fits(fd, n)).map(|n| (fd as u64, n as u64)))
}

fn repeat(items: Vec<bool>, n: usize) -> Result<Vec<bool>, ListError> {
    if items.len().saturating_mul(n) > MAX_ENTRIES {
        return Err(ListError::TooMany);
    }
    Ok(items.repeat(n))
}

#[cfg(test)]
mod tests {
    use super::{expand, moe_pattern};

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
    fn moe_patterns_of_lists() {
        let p = |t: &str| moe_pattern(&expand(t, M).unwrap());
        // Megatron's functional tests: three dense blocks, then every block MoE.
        assert_eq!(p("([0]*3+[1]*12)"), Some((3, 1)));
        assert_eq!(p("([0]*1+[1]*1)"), Some((1, 1)));
        // Alternation: none first, one in every 2 (blocks 1, 3, …).
        assert_eq!(p("[0,1]*4"), Some((0, 2)));
        assert_eq!(p("[1]*4"), Some((0, 1)));
        // Not k dense then every n-th; no MoE block.
        assert_eq!(p("[1,0,0,1,1]"), None);
        assert_eq!(p("[0]*4"), None);
    }

    #[test]
    fn bad_lists_say_why() {
        assert!(expand("[0,2]", M).unwrap_err().to_string().contains("0 (dense) or 1 (MoE)"));
        assert!(expand("[0]*x", M).unwrap_err().to_string().contains("repeat count"));
        assert!(expand("([0]*3", M).unwrap_err().to_string().contains("not closed"));
        assert!(expand("[0,1", M).unwrap_err().to_string().contains("not closed"));
        assert!(expand("[0]]", M).unwrap_err().to_string().contains("unexpected"));
        assert!(expand("[1]*2000000", M).unwrap_err().to_string().contains("too many"));
        assert!(expand("3", M).is_err());
    }
}
