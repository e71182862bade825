//! Integer arithmetic of `$((…))`, `((…))` and `let`: decimal and `0x` numbers, variables by
//! bare name, `+ - * / % **`, shifts, comparisons, `&& || !`, bit operators, `?:`, parentheses,
//! and at the top level `NAME = expr`, `NAME op= expr`, `NAME++`, `NAME--`. `None` when the
//! expression holds anything else or a variable fmperf does not know (the job's environment).

/// Evaluates `expr`; `var` gives a variable's value (as written, parsed here).
pub(super) fn eval(expr: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<i128> {
    let toks = tokens(expr)?;
    let mut p = P { t: &toks, i: 0, var, depth: 0 };
    let v = p.ternary()?;
    (p.i == toks.len()).then_some(v)
}

/// An assignment at the top of an arithmetic command: `(name, value)`; `None` when `expr` is not
/// one or its value is unknown.
pub(super) fn assignment(expr: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<(String, i128)> {
    let e = expr.trim();
    let name: String = e.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let rest = e[name.len()..].trim();
    let cur = || var(&name).and_then(|v| number(v.trim()));
    if rest == "++" || rest == "--" {
        let d = if rest == "++" { 1 } else { -1 };
        return Some((name.clone(), cur()?.checked_add(d)?));
    }
    for op in ["+=", "-=", "*=", "/=", "%=", "="] {
        if let Some(rhs) = rest.strip_prefix(op) {
            if op == "=" && rhs.starts_with('=') {
                return None;
            }
            let r = eval(rhs, var)?;
            let v = match op {
                "=" => r,
                "+=" => cur()?.checked_add(r)?,
                "-=" => cur()?.checked_sub(r)?,
                "*=" => cur()?.checked_mul(r)?,
                "/=" => cur()?.checked_div(r)?,
                _ => cur()?.checked_rem(r)?,
            };
            return Some((name, v));
        }
    }
    None
}

fn number(s: &str) -> Option<i128> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i128::from_str_radix(h, 16).ok();
    }
    if s.len() > 30 {
        return None;
    }
    s.parse().ok()
}

#[derive(Debug, Clone, PartialEq)]
enum T {
    Num(i128),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 24] = [
    "**", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "!", "~", "&", "|", "^",
    "(", ")", "?",
];

fn tokens(s: &str) -> Option<Vec<T>> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            out.push(T::Num(number(&s[start..i])?));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(T::Name(s[start..i].to_string()));
        } else if c == b':' {
            out.push(T::Op(":"));
            i += 1;
        } else {
            let op = OPS.iter().find(|o| s[i..].starts_with(**o))?;
            out.push(T::Op(op));
            i += op.len();
        }
        if out.len() > 10_000 {
            return None;
        }
    }
    Some(out)
}

struct P<'a> {
    t: &'a [T],
    i: usize,
    var: &'a dyn Fn(&str) -> Option<String>,
    depth: usize,
}

/// Binary operators by precedence, loosest first.
const LEVELS: [&[&str]; 10] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", "<=", ">", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl P<'_> {
    fn op(&self) -> Option<&'static str> {
        match self.t.get(self.i) {
            Some(T::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn ternary(&mut self) -> Option<i128> {
        self.depth += 1;
        if self.depth > 100 {
            return None;
        }
        let c = self.binary(0)?;
        let v = if self.op() == Some("?") {
            self.i += 1;
            let a = self.ternary()?;
            if self.op() != Some(":") {
                return None;
            }
            self.i += 1;
            let b = self.ternary()?;
            if c != 0 { a } else { b }
        } else {
            c
        };
        self.depth -= 1;
        Some(v)
    }

    fn binary(&mut self, level: usize) -> Option<i128> {
        let Some(ops) = LEVELS.get(level) else { return self.power() };
        let mut v = self.binary(level + 1)?;
        while let Some(o) = self.op().filter(|o| ops.contains(o)) {
            self.i += 1;
            let r = self.binary(level + 1)?;
            v = match o {
                "||" => i128::from(v != 0 || r != 0),
                "&&" => i128::from(v != 0 && r != 0),
                "|" => v | r,
                "^" => v ^ r,
                "&" => v & r,
                "==" => i128::from(v == r),
                "!=" => i128::from(v != r),
                "<" => i128::from(v < r),
                "<=" => i128::from(v <= r),
                ">" => i128::from(v > r),
                ">=" => i128::from(v >= r),
                "<<" => v.checked_shl(u32::try_from(r).ok().filter(|s| *s < 127)?)?,
                ">>" => v.checked_shr(u32::try_from(r).ok().filter(|s| *s < 127)?)?,
                "+" => v.checked_add(r)?,
                "-" => v.checked_sub(r)?,
                "*" => v.checked_mul(r)?,
                "/" => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
        Some(v)
    }

    fn power(&mut self) -> Option<i128> {
        let b = self.unary()?;
        if self.op() == Some("**") {
            self.i += 1;
            let e = self.power()?;
            return b.checked_pow(u32::try_from(e).ok().filter(|e| *e <= 128)?);
        }
        Some(b)
    }

    fn unary(&mut self) -> Option<i128> {
        match self.t.get(self.i)? {
            T::Op(o @ ("-" | "+" | "!" | "~")) => {
                let o = *o;
                self.i += 1;
                self.depth += 1;
                if self.depth > 100 {
                    return None;
                }
                let v = self.unary()?;
                self.depth -= 1;
                match o {
                    "-" => v.checked_neg(),
                    "+" => Some(v),
                    "!" => Some(i128::from(v == 0)),
                    _ => Some(!v),
                }
            }
            T::Op("(") => {
                self.i += 1;
                let v = self.ternary()?;
                if self.op() != Some(")") {
                    return None;
                }
                self.i += 1;
                Some(v)
            }
            T::Num(n) => {
                self.i += 1;
                Some(*n)
            }
            T::Name(n) => {
                self.i += 1;
                let v = (self.var)(n)?;
                number(v.trim())
            }
            T::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let var = |n: &str| (n == "GPUS").then(|| "8".to_string());
        assert_eq!(eval("GPUS * (2 + 2) - 1", &var), Some(31));
        assert_eq!(eval("2**10 / 4 % 5", &var), Some(1));
        assert_eq!(eval("GPUS > 4 ? 1 : 0", &var), Some(1));
        assert_eq!(eval("NOPE * 2", &var), None);
        assert_eq!(eval("8/0", &var), None);
        assert_eq!(eval("((((((", &var), None);
        assert_eq!(eval(&"-".repeat(10_000), &var), None);
        assert_eq!(assignment("GPUS += 2", &var), Some(("GPUS".into(), 10)));
        assert_eq!(assignment("GPUS++", &var), Some(("GPUS".into(), 9)));
    }
}
