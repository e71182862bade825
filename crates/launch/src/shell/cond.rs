//! Conditions of `[ … ]`, `test …` and `[[ … ]]` over expanded words, in three values: `Some(true)`,
//! `Some(false)`, or `None` where fmperf cannot know (an operand the script does not set, a file
//! test, a regular expression).

use super::expand::{Field, glob};

/// Evaluates the arguments of `[`/`test` (`double`: `[[`, whose `==` right side is a pattern).
pub(super) fn test(args: &[Field], double: bool) -> Option<bool> {
    let mut a: Vec<&Field> = args.iter().collect();
    if a.last().is_some_and(|l| l.text == "]" || l.text == "]]") {
        a.pop();
    }
    if a.is_empty() {
        return Some(false);
    }
    let mut p = P { a: &a, i: 0, double, depth: 0 };
    let v = p.or();
    if p.i == a.len() { v } else { None }
}

struct P<'a> {
    a: &'a [&'a Field],
    i: usize,
    double: bool,
    depth: usize,
}

fn and3(x: Option<bool>, y: Option<bool>) -> Option<bool> {
    match (x, y) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn or3(x: Option<bool>, y: Option<bool>) -> Option<bool> {
    match (x, y) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

const UNARY_FILE: &[&str] = &[
    "-e", "-f", "-d", "-x", "-r", "-w", "-s", "-L", "-h", "-S", "-p", "-b", "-c", "-g", "-u", "-k", "-O", "-G", "-N",
    "-t",
];

impl P<'_> {
    fn text(&self, k: usize) -> Option<&str> {
        self.a.get(k).map(|f| f.text.as_str())
    }

    fn or(&mut self) -> Option<bool> {
        let mut v = self.and();
        while matches!(self.text(self.i), Some("-o" | "||")) {
            self.i += 1;
            let r = self.and();
            v = or3(v, r);
        }
        v
    }

    fn and(&mut self) -> Option<bool> {
        let mut v = self.not();
        while matches!(self.text(self.i), Some("-a" | "&&")) && self.a.len() > self.i + 1 {
            self.i += 1;
            let r = self.not();
            v = and3(v, r);
        }
        v
    }

    fn not(&mut self) -> Option<bool> {
        self.depth += 1;
        if self.depth > 100 {
            self.i = self.a.len() + 1;
            return None;
        }
        let v = if self.text(self.i) == Some("!") && self.a.len() > self.i + 1 {
            self.i += 1;
            self.not().map(|b| !b)
        } else {
            self.primary()
        };
        self.depth -= 1;
        v
    }

    fn primary(&mut self) -> Option<bool> {
        let i = self.i;
        let Some(first) = self.a.get(i) else {
            self.i += 1;
            return None;
        };
        if first.text == "(" {
            self.i += 1;
            let v = self.or();
            if self.text(self.i) == Some(")") {
                self.i += 1;
            }
            return v;
        }
        if let Some(op) = self.a.get(i + 1).map(|f| f.text.as_str())
            && let Some(rhs) = self.a.get(i + 2)
            && is_binary(op)
        {
            self.i += 3;
            if !first.known || !rhs.known {
                return None;
            }
            return binary(&first.text, op, &rhs.text, self.double);
        }
        if let Some(arg) = self.a.get(i + 1)
            && first.text.starts_with('-')
            && first.text.len() == 2
        {
            self.i += 2;
            return match first.text.as_str() {
                "-z" => arg.known.then(|| arg.text.is_empty()),
                "-n" => arg.known.then(|| !arg.text.is_empty()),
                t if UNARY_FILE.contains(&t) => None,
                _ => None,
            };
        }
        self.i += 1;
        first.known.then(|| !first.text.is_empty())
    }
}

fn is_binary(op: &str) -> bool {
    matches!(
        op,
        "=" | "==" | "!=" | "<" | ">" | "=~" | "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-nt" | "-ot" | "-ef"
    )
}

fn binary(l: &str, op: &str, r: &str, double: bool) -> Option<bool> {
    let int = |s: &str| s.trim().parse::<i128>().ok();
    Some(match op {
        "=" | "==" if double => glob(r, l),
        "=" | "==" => l == r,
        "!=" if double => !glob(r, l),
        "!=" => l != r,
        "<" => l < r,
        ">" => l > r,
        "-eq" => int(l)? == int(r)?,
        "-ne" => int(l)? != int(r)?,
        "-lt" => int(l)? < int(r)?,
        "-le" => int(l)? <= int(r)?,
        "-gt" => int(l)? > int(r)?,
        "-ge" => int(l)? >= int(r)?,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(words: &[(&str, bool)]) -> Vec<Field> {
        words.iter().map(|(t, k)| Field { text: t.to_string(), line: 1, known: *k }).collect()
    }

    #[test]
    fn three_valued() {
        assert_eq!(test(&f(&[("7B", true), ("=", true), ("7B", true), ("]", true)]), false), Some(true));
        assert_eq!(test(&f(&[("$M", false), ("=", true), ("7B", true)]), false), None);
        assert_eq!(test(&f(&[("-z", true), ("", true)]), false), Some(true));
        assert_eq!(
            test(&f(&[("3", true), ("-gt", true), ("2", true), ("-a", true), ("-f", true), ("x", true)]), false),
            None
        );
        assert_eq!(
            test(&f(&[("3", true), ("-lt", true), ("2", true), ("-a", true), ("-f", true), ("x", true)]), false),
            Some(false)
        );
        assert_eq!(test(&f(&[("70B", true), ("==", true), ("*0B", true), ("]]", true)]), true), Some(true));
        assert!(test(&f(&[("!", true), ("!", true), ("!", true)]), false).is_some());
    }
}
