//! OmegaConf / Hydra interpolations in the values of a YAML read by [`super::yaml`] (NeMo and its
//! launcher write them everywhere): node references `${a.b.c}` (absolute), `${.x}`, `${..x}`
//! (relative to the key's own mapping, each further dot one level up), `${a[0]}`; several or nested
//! interpolations inside a string (`"${a}_${b}"`, `${multiply:4, ${.hidden_size}}`); and resolvers:
//!
//! * `oc.env:VAR` / `oc.env:VAR,default`: there is no environment here, so the default is taken
//!   (with a note); without one the value stays unknown;
//! * `oc.select:key,default`: the key, or the default when the file lacks it;
//! * NeMo-Framework-Launcher's (`launcher_scripts/main.py` registers `multiply`, `divide_ceil`,
//!   `divide_floor`), and the arithmetic names other NeMo configs use (`floor_div`, `add`, `sum`,
//!   `subtract`).
//!
//! A value that resolves to a number is written as that number (`16384`). A file of a Hydra config
//! group (NeMo-Framework-Launcher's `conf/training/gpt3/5b.yaml`) refers to its own keys under the
//! group's package (`${training.model.hidden_size}`): a reference whose first part is not a
//! top-level key of the file is looked up without it, with a note.
//!
//! A value that cannot be resolved (a section, a missing key, an environment variable without a
//! default, an unknown resolver) stays as written and is reported in [`ResolveReport::unresolved`] with
//! why; the reader decides whether the key matters. Bounds: nesting and reference chains ≤
//! [`MAX_DEPTH`], cycles detected, results ≤ 4096 characters.

use fmperf_core::vocab::{Note, NoteList};
use std::collections::{HashMap, HashSet};

use super::settings::Entry;

/// Deepest chain of references and nested interpolations followed.
pub const MAX_DEPTH: usize = 32;
const MAX_LEN: usize = 4096;

/// What [`resolve`] did besides rewriting the values.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ResolveReport {
    /// `(entry index, why)` of each value left as written.
    pub unresolved: Vec<(usize, String)>,
    /// How a value was read where a rule was needed (a default of `oc.env`, a group package).
    pub notes: Vec<Note>,
}

struct Ctx<'a> {
    entries: &'a [Entry],
    index: HashMap<&'a str, usize>,
    tops: HashSet<&'a str>,
    sections: HashSet<&'a str>,
    done: Vec<Option<Result<String, String>>>,
    visiting: Vec<bool>,
    notes: Vec<Note>,
}

/// Resolves the interpolations of `entries` in place (see the module documentation).
pub fn resolve(entries: &mut [Entry]) -> ResolveReport {
    let tops: HashSet<&str> = entries.iter().map(|e| e.key.split('.').next().unwrap_or("")).collect();
    // Every mapping above a key (`a`, `a.b` of `a.b.c`).
    let sections: HashSet<&str> =
        entries.iter().flat_map(|e| e.key.match_indices('.').map(|(i, _)| &e.key[..i])).collect();
    let mut cx = Ctx {
        entries,
        index: entries.iter().enumerate().map(|(i, e)| (e.key.as_str(), i)).collect(),
        tops,
        sections,
        done: vec![None; entries.len()],
        visiting: vec![false; entries.len()],
        notes: Vec::new(),
    };
    for i in 0..entries.len() {
        let _ = cx.entry(i, 0);
    }
    let mut out = ResolveReport { notes: std::mem::take(&mut cx.notes), ..ResolveReport::default() };
    let done = std::mem::take(&mut cx.done);
    for (i, r) in done.into_iter().enumerate() {
        match r {
            Some(Ok(v)) => entries[i].value = v,
            Some(Err(why)) => out.unresolved.push((i, why)),
            None => {}
        }
    }
    out.notes.dedup();
    out
}

impl Ctx<'_> {
    /// The resolved value of entry `i`.
    fn entry(&mut self, i: usize, depth: usize) -> Result<String, String> {
        if let Some(r) = self.done.get(i).cloned().flatten() {
            return r;
        }
        let entries = self.entries;
        let Some(e) = entries.get(i) else { return Err("no such key".into()) };
        if !e.value.contains("${") {
            return Ok(e.value.clone());
        }
        if self.visiting[i] {
            return Err(format!("the interpolation of {} refers back to itself (a cycle)", e.key));
        }
        if depth > MAX_DEPTH {
            return Err(format!("more than {MAX_DEPTH} interpolations deep"));
        }
        self.visiting[i] = true;
        let r = self.string(&e.value, &e.key, depth + 1);
        self.visiting[i] = false;
        self.done[i] = Some(r.clone());
        r
    }

    /// A string with its interpolations replaced, for the entry `key`.
    fn string(&mut self, s: &str, key: &str, depth: usize) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${") {
            // `\${` is a literal.
            if rest[..start].ends_with('\\') {
                out.push_str(&rest[..start - 1]);
                out.push_str("${");
                rest = &rest[start + 2..];
                continue;
            }
            out.push_str(&rest[..start]);
            let end = closing(&rest[start..]).ok_or_else(|| format!("`{}` is not closed by `}}`", &rest[start..]))?;
            let inner = &rest[start + 2..start + end];
            out.push_str(&self.interpolation(inner, key, depth)?);
            if out.len() > MAX_LEN {
                return Err(format!("the value grows beyond {MAX_LEN} characters"));
            }
            rest = &rest[start + end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// One `${…}` body.
    fn interpolation(&mut self, inner: &str, key: &str, depth: usize) -> Result<String, String> {
        if depth > MAX_DEPTH {
            return Err(format!("more than {MAX_DEPTH} interpolations deep"));
        }
        let inner = inner.trim();
        match split_top(inner, ':').as_slice() {
            [path] => self.reference(path.trim(), key, depth),
            [name, args @ ..] => {
                let args = args.join(":");
                let args: Vec<String> =
                    split_top(&args, ',').into_iter().map(|a| strip_quotes(a.trim()).to_string()).collect();
                self.resolver(name.trim(), &args, key, depth)
            }
            [] => Err("an empty interpolation `${}`".into()),
        }
    }

    /// A node reference, absolute or relative to `key`'s mapping.
    fn reference(&mut self, path: &str, key: &str, depth: usize) -> Result<String, String> {
        let path = path.replace('[', ".").replace(']', "");
        let target = if path.starts_with('.') {
            let dots = path.chars().take_while(|&c| c == '.').count();
            let mut parent: Vec<&str> = key.split('.').collect();
            for _ in 0..dots {
                parent.pop();
            }
            let rest = &path[dots..];
            [parent.join("."), rest.to_string()].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(".")
        } else {
            path.clone()
        };
        if let Some(&i) = self.index.get(target.as_str()) {
            return self.entry(i, depth + 1);
        }
        if self.sections.contains(target.as_str()) {
            return Err(format!("${{{path}}} names a section, not a value"));
        }
        // A config group's file refers to itself under its package (`training.model.x`).
        if let Some((first, rest)) = target.split_once('.')
            && !self.tops.contains(first)
            && let Some(&i) = self.index.get(rest)
        {
            self.notes.reading(format!(
                "${{{first}.…}}: read as this file's own keys (the file is the `{first}` config group of a Hydra \
                 configuration)"
            ));
            return self.entry(i, depth + 1);
        }
        Err(format!("${{{path}}} names no key of this file"))
    }

    fn resolver(&mut self, name: &str, args: &[String], key: &str, depth: usize) -> Result<String, String> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.string(a, key, depth + 1)?);
        }
        match name {
            "oc.env" | "env" => match vals.as_slice() {
                [var] => {
                    Err(format!("${{oc.env:{var}}} needs the environment variable {var}, which a file does not give"))
                }
                [var, default, ..] => {
                    self.notes.reading(format!(
                        "{key}: ${{oc.env:{var},…}} read with its default {default} (no environment here)"
                    ));
                    Ok(default.clone())
                }
                [] => Err("oc.env needs a variable".into()),
            },
            "oc.select" => {
                let [path, default @ ..] = vals.as_slice() else { return Err("oc.select needs a key".into()) };
                match self.reference(path, key, depth + 1) {
                    Ok(v) => Ok(v),
                    Err(why) => match default.first() {
                        Some(d) => Ok(d.clone()),
                        None => Err(why),
                    },
                }
            }
            "multiply" | "divide_ceil" | "divide_floor" | "floor_div" | "add" | "sum" | "subtract" => {
                let nums: Result<Vec<f64>, String> = vals
                    .iter()
                    .map(|v| {
                        v.trim()
                            .parse::<f64>()
                            .ok()
                            .filter(|x| x.is_finite())
                            .ok_or_else(|| format!("${{{name}:…}} needs numbers, got `{v}`"))
                    })
                    .collect();
                let nums = nums?;
                let all_int = vals.iter().all(|v| v.trim().parse::<i64>().is_ok());
                let r = match (name, nums.as_slice()) {
                    ("multiply", [a, b]) => a * b,
                    ("add" | "sum", [_, ..]) => nums.iter().sum(),
                    ("subtract", [a, rest @ ..]) => rest.iter().fold(*a, |x, y| x - y),
                    (_, [_, b]) if *b == 0.0 => return Err(format!("${{{name}:…}} divides by zero")),
                    ("divide_ceil", [a, b]) => (a / b).ceil(),
                    ("divide_floor" | "floor_div", [a, b]) => (a / b).floor(),
                    _ => return Err(format!("${{{name}:…}} takes two numbers")),
                };
                let integral = all_int || name.starts_with("divide") || name == "floor_div";
                Ok(number(r, integral))
            }
            _ => Err(format!("the resolver `{name}` is not one fmperf knows")),
        }
    }
}

/// A number as OmegaConf would print it: an integer without `.0`.
fn number(x: f64, integral: bool) -> String {
    if integral && x.fract() == 0.0 && x.abs() < 9.0e15 { format!("{}", x as i64) } else { format!("{x}") }
}

/// The byte index of the `}` closing the `${` at the start of `s`.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `s` split at `sep` outside `${…}`, brackets and quotes.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{' | '[' | '(') => depth += 1,
            (None, '}' | ']' | ')') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if !s.is_empty() {
        out.push(&s[start..]);
    }
    out
}

fn strip_quotes(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> (Vec<(String, String)>, ResolveReport) {
        let mut e = super::super::yaml::read(text).unwrap();
        let r = resolve(&mut e);
        (e.into_iter().map(|e| (e.key, e.value)).collect(), r)
    }

    #[test]
    fn references_and_resolvers() {
        let (v, r) = run("model:\n  h: 4096\n  ffn: ${multiply:4, ${.h}}\n  seq: ${model.len}\n  len: 2048\n  \
             name: \"${.h}_${..top.x}\"\n  c: ${divide_ceil:${.h},3}\n  f: ${divide_floor:7,2}\ntop:\n  \
             x: ${oc.env:HOME,/root}\n  y: ${oc.select:nope,5}\n  z: ${oc.env:NOPE}\n");
        let get = |k: &str| v.iter().find(|(a, _)| a == k).map(|(_, b)| b.as_str()).unwrap();
        assert_eq!(get("model.ffn"), "16384");
        assert_eq!(get("model.seq"), "2048");
        assert_eq!(get("model.name"), "4096_/root");
        assert_eq!(get("model.c"), "1366");
        assert_eq!(get("model.f"), "3");
        assert_eq!(get("top.y"), "5");
        assert_eq!(get("top.z"), "${oc.env:NOPE}");
        assert_eq!(r.unresolved.len(), 1);
        assert!(r.notes.iter().any(|n| n.contains("default /root")), "{r:?}");
    }

    #[test]
    fn cycles_and_groups() {
        let (v, r) = run("a: ${b}\nb: ${a}\nc: ${training.d}\nd: 7\ne: ${nothing.here}\n");
        assert_eq!(v[2].1, "7");
        assert_eq!(r.unresolved.len(), 3, "{r:?}");
        assert!(r.unresolved.iter().any(|(_, w)| w.contains("cycle")));
        // A deep chain is bounded: the first keys, further than the bound from the value, stay.
        let mut text = String::new();
        for i in 0..199 {
            text.push_str(&format!("k{i}: ${{k{}}}\n", i + 1));
        }
        text.push_str("k199: 1\n");
        let (v, r) = run(&text);
        assert_eq!((v[0].1.as_str(), v[190].1.as_str()), ("${k1}", "1"));
        assert!(r.unresolved.iter().any(|(_, w)| w.contains("deep")), "{r:?}");
    }
}
