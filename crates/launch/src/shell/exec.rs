//! The evaluator: walks the commands of a script as bash would, keeping variables, arrays,
//! functions and positional parameters, and records every command that runs a Python script;
//! nothing is ever executed. Conditions it cannot decide (a variable of the job's environment)
//! read every branch in order, with a note; loops run over known lists only, bounded.

use super::arith;
use super::cond;
use super::expand::{Field, cap, glob};
use super::lex::{self, is_name};
use super::parse::{self, Assign, Node, Simple, Value};
use fmperf_core::Error;
use fmperf_core::vocab::{Note, NoteList};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// A command that runs a Python script: its words and the index of the script among them.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub words: Vec<Field>,
    pub script_at: usize,
}

/// The evaluator's state.
#[derive(Debug, Default)]
pub(super) struct Shell {
    /// Variables (a scalar is an array of one element).
    pub vars: BTreeMap<String, Vec<String>>,
    /// Variables whose value holds something unknown (`X=$2` without arguments, `X=$(cmd)`).
    pub tainted: BTreeSet<String>,
    /// Associative arrays (`declare -A`).
    pub assoc: BTreeMap<String, BTreeMap<String, String>>,
    pub funcs: BTreeMap<String, Rc<Vec<Node>>>,
    /// `$1…`: `None` when the user gave none (they stay unknown).
    pub positional: Option<Vec<String>>,
    /// Names left unexpanded since the last reset.
    pub unknown_names: Vec<String>,
    /// Defaults of unset variables that were used (`NAME=value`).
    pub defaults: Vec<String>,
    pub notes: Vec<Note>,
    /// Bytes of expanded text so far.
    pub total: usize,
    /// Expansions being expanded inside one another.
    pub nesting: usize,
    pub statements: usize,
    pub depth: usize,
    /// Inside a branch read without knowing its condition (`exit`, `return`, `break` ignored).
    pub uncertain: usize,
    /// The line every word is given (a command string run by `bash -c` or `eval`).
    pub at_line: Option<usize>,
    /// Files written by here-documents (`cat > run.sh <<EOF`).
    pub files: BTreeMap<String, String>,
    pub found: Vec<Found>,
    /// Words of commands without a script that hold `--flags` (a pasted list of flags).
    pub flags_only: Vec<Field>,
    /// Variables whose value holds `--flags`, by first assignment (a file of flag arrays that
    /// another script sources): their latest words.
    pub flag_vars: Vec<(String, Vec<Field>)>,
}

/// How control leaves a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Next,
    Break(u32),
    Continue(u32),
    Return,
    Exit,
}

type Out = Result<(Flow, Option<bool>), Error>;

/// Python modules that launch another script (`python -m torch.distributed.run … train.py`).
const LAUNCHER_MODULES: &[&str] = &[
    "torch.distributed.run",
    "torch.distributed.launch",
    "deepspeed.launcher.runner",
    "accelerate.commands.launch",
    "torch.distributed.elastic.multiprocessing",
];

impl Shell {
    fn add_note(&mut self, n: String) {
        if !self.notes.iter().any(|m| m.text == n) && self.notes.len() < 100 {
            self.notes.reading(n);
        }
    }

    /// Sets a variable (checking the caps).
    pub(super) fn set_var(&mut self, name: &str, v: Vec<String>) -> Result<(), Error> {
        let n: usize = v.iter().map(|e| e.len() + 24).sum();
        if n > super::MAX_WORD {
            return Err(cap(format!("a word or variable over {} bytes (`{name}`)", super::MAX_WORD)));
        }
        self.vars.insert(name.to_string(), v);
        self.tainted.remove(name);
        Ok(())
    }

    /// Runs `text` as a script; `at_line`: the line its words are given (a command string).
    pub(super) fn script(&mut self, text: &str, at_line: Option<usize>) -> Out {
        self.depth += 1;
        if self.depth > super::MAX_DEPTH {
            return Err(cap(format!("calls nested deeper than {} (functions, eval, bash -c)", super::MAX_DEPTH)));
        }
        self.total = self.total.saturating_add(text.len());
        if self.total > super::MAX_TOTAL {
            return Err(cap(format!("over {} bytes of expanded text in all", super::MAX_TOTAL)));
        }
        let lexed = lex::lex(text, at_line.unwrap_or(1));
        if let Some((quote, line)) = lexed.unclosed {
            return Err(Error::Parse {
                message: format!(
                    "line {line}: the {quote} quote opened here is never closed (bash stops such a script with \
                     \"unexpected EOF while looking for matching `{quote}'\"); close it"
                ),
            });
        }
        let nodes = parse::parse(lexed.toks, lexed.heredocs)?;
        let saved = self.at_line;
        if self.at_line.is_none() {
            self.at_line = at_line;
        }
        let r = self.nodes(&nodes);
        self.at_line = saved;
        self.depth -= 1;
        r
    }

    pub(super) fn nodes(&mut self, nodes: &[Node]) -> Out {
        let mut status = Some(true);
        for n in nodes {
            let (f, st) = self.node(n)?;
            status = st;
            if f != Flow::Next {
                return Ok((f, status));
            }
        }
        Ok((Flow::Next, status))
    }

    fn unsure<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Error>) -> Result<T, Error> {
        self.uncertain += 1;
        let r = f(self);
        self.uncertain -= 1;
        r
    }

    fn node(&mut self, n: &Node) -> Out {
        match n {
            Node::Simple(s) => self.simple(s),
            Node::List(items) => {
                self.unknown_names.clear();
                let mut status = Some(true);
                for (conn, n) in items {
                    use parse::Conn;
                    match (conn, status) {
                        (Conn::And, Some(false)) | (Conn::Or, Some(true)) => continue,
                        (Conn::And | Conn::Or, None) => {
                            let names = self.unknown_names.join(", ");
                            if let Some(line) = first_line(n) {
                                let op = if *conn == Conn::And { "&&" } else { "||" };
                                self.add_note(format!(
                                    "line {line}: the command after `{op}` is read, its condition not known ({} not set)",
                                    if names.is_empty() { "a value" } else { names.as_str() }
                                ));
                            }
                            let (f, st) = self.unsure(|s| s.node(n))?;
                            status = if f == Flow::Next { st } else { None };
                        }
                        _ => {
                            let (f, st) = self.node(n)?;
                            if f != Flow::Next {
                                return Ok((f, st));
                            }
                            status = st;
                        }
                    }
                }
                Ok((Flow::Next, status))
            }
            Node::Not(n) => {
                let (f, st) = self.node(n)?;
                Ok((f, st.map(|b| !b)))
            }
            Node::If { arms, otherwise } => self.if_(arms, otherwise.as_deref()),
            Node::Case { subject, arms } => {
                self.unknown_names.clear();
                let (s, known) = self.string(subject)?;
                if known {
                    for (pats, body) in arms {
                        for p in pats {
                            let (p, _) = self.string(p)?;
                            if glob(&p, &s) {
                                return self.nodes(body);
                            }
                        }
                    }
                    return Ok((Flow::Next, Some(true)));
                }
                let names = self.unknown_names.join(", ");
                self.add_note(format!(
                    "`case {}` (line {}): {names} not set; every branch read in order, the last value fmperf can read wins",
                    subject.raw, subject.line
                ));
                for (_, body) in arms {
                    let (f, _) = self.unsure(|s| s.nodes(body))?;
                    if f == Flow::Exit {
                        return Ok((f, None));
                    }
                }
                Ok((Flow::Next, None))
            }
            Node::For { var, items, body, line } => self.for_(var.as_deref(), items.as_deref(), body, *line),
            Node::While { until, cond, body, line } => {
                for _ in 0..super::MAX_ITERATIONS {
                    self.unknown_names.clear();
                    let (f, st) = self.nodes(cond)?;
                    if f != Flow::Next {
                        return Ok((f, st));
                    }
                    match st {
                        Some(c) if c == *until => return Ok((Flow::Next, Some(true))),
                        Some(_) => match self.nodes(body)?.0 {
                            Flow::Break(_) => return Ok((Flow::Next, Some(true))),
                            f @ (Flow::Return | Flow::Exit) => return Ok((f, None)),
                            _ => {}
                        },
                        None => {
                            self.add_note(format!(
                                "a `while` loop (line {line}) whose condition is not known: its body read once"
                            ));
                            self.unsure(|s| s.nodes(body))?;
                            return Ok((Flow::Next, None));
                        }
                    }
                }
                Err(cap(format!("a loop of over {} iterations (line {line})", super::MAX_ITERATIONS)))
            }
            Node::Func { name, body } => {
                self.funcs.insert(name.clone(), Rc::clone(body));
                Ok((Flow::Next, Some(true)))
            }
            Node::Group(body) => self.nodes(body),
            Node::Arith(e) => {
                self.statements += 1;
                let mut status = None;
                for part in e.split(',') {
                    let (expr, known) = self.string(&lex::RawWord {
                        pieces: vec![lex::Piece::Dq(part.to_string())],
                        line: 0,
                        raw: String::new(),
                    })?;
                    if !known {
                        continue;
                    }
                    if let Some((name, v)) = arith::assignment(&expr, &|n| self.scalar(n)) {
                        self.set_var(&name, vec![v.to_string()])?;
                        status = Some(v != 0);
                    } else {
                        status = arith::eval(&expr, &|n| self.scalar(n)).map(|v| v != 0);
                    }
                }
                Ok((Flow::Next, status))
            }
        }
    }

    fn if_(&mut self, arms: &[(Vec<Node>, Vec<Node>, String, usize)], otherwise: Option<&[Node]>) -> Out {
        let mut unsure = false;
        for (cond, body, src, line) in arms {
            self.unknown_names.clear();
            let (f, st) = self.nodes(cond)?;
            if f != Flow::Next {
                return Ok((f, st));
            }
            match st {
                Some(true) if unsure => return self.unsure(|s| s.nodes(body)),
                Some(true) => return self.nodes(body),
                Some(false) => {}
                None => {
                    let names = if self.unknown_names.is_empty() {
                        "its value cannot be known before the run".to_string()
                    } else {
                        format!("{} not set", self.unknown_names.join(", "))
                    };
                    self.add_note(format!(
                        "`if {src}` (line {line}): {names}; branches read in order, the last value fmperf can read wins"
                    ));
                    unsure = true;
                    let (f, _) = self.unsure(|s| s.nodes(body))?;
                    if f == Flow::Exit {
                        return Ok((f, None));
                    }
                }
            }
        }
        match otherwise {
            Some(o) if unsure => self.unsure(|s| s.nodes(o)),
            Some(o) => self.nodes(o),
            None => Ok((Flow::Next, Some(true))),
        }
    }

    fn for_(&mut self, var: Option<&str>, items: Option<&[lex::RawWord]>, body: &[Node], line: usize) -> Out {
        let Some(var) = var else {
            self.add_note(format!("a C-style `for ((…))` loop (line {line}) is not read"));
            return Ok((Flow::Next, None));
        };
        let values: Vec<Field> = match items {
            Some(ws) => {
                let mut v = Vec::new();
                for w in ws {
                    v.extend(self.fields(w)?);
                }
                v
            }
            None => match &self.positional {
                Some(p) => p.iter().map(|t| Field { text: t.clone(), line, known: true }).collect(),
                None => Vec::new(),
            },
        };
        if values.iter().any(|f| !f.known) {
            self.add_note(format!("a `for {var}` loop (line {line}) over values not known: not read"));
            return Ok((Flow::Next, None));
        }
        if values.len() > super::MAX_ITERATIONS {
            return Err(cap(format!("a loop of over {} iterations (line {line})", super::MAX_ITERATIONS)));
        }
        for v in values {
            self.set_var(var, vec![v.text])?;
            match self.nodes(body)?.0 {
                Flow::Break(_) => break,
                f @ (Flow::Return | Flow::Exit) => return Ok((f, None)),
                _ => {}
            }
        }
        Ok((Flow::Next, Some(true)))
    }

    /// Performs an assignment. In a branch read without knowing its condition, a value holding
    /// something unknown is not assigned: of the branches, the last that gives a value fmperf can
    /// read wins, and a variable no branch gives a readable value stays unset (a later
    /// `${V:-default}` applies).
    fn assign(&mut self, a: &Assign) -> Result<(), Error> {
        let (mut values, known) = match &a.value {
            Value::Scalar(w) => {
                let (v, k) = self.string(w)?;
                (vec![v], k)
            }
            Value::Array(ws) => {
                let mut v = Vec::new();
                let mut k = true;
                for w in ws {
                    for f in self.fields(w)? {
                        k &= f.known;
                        v.push(f);
                    }
                }
                self.remember_flags(&a.name, &v, a.append);
                (v.into_iter().map(|f| f.text).collect(), k)
            }
        };
        if let (Value::Scalar(w), Some(text)) = (&a.value, values.first())
            && text.trim_start().starts_with("--")
        {
            let line = self.at_line.unwrap_or(w.line);
            let fl: Vec<Field> =
                text.split_whitespace().map(|t| Field { text: t.to_string(), line, known: true }).collect();
            self.remember_flags(&a.name, &fl, false);
        }
        if !known && self.uncertain > 0 {
            return Ok(());
        }
        let r = self.assign_values(a, &mut values);
        if !known && a.index.is_none() {
            self.tainted.insert(a.name.clone());
        }
        r
    }

    fn remember_flags(&mut self, name: &str, fields: &[Field], append: bool) {
        if !fields.iter().any(|f| f.text.starts_with("--")) && !append {
            return;
        }
        let count = self.flag_vars.len();
        match self.flag_vars.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) if append => v.extend(fields.iter().cloned()),
            Some((_, v)) => *v = fields.to_vec(),
            None if count < 1000 => self.flag_vars.push((name.to_string(), fields.to_vec())),
            None => {}
        }
    }

    fn assign_values(&mut self, a: &Assign, values: &mut Vec<String>) -> Result<(), Error> {
        let mut values = std::mem::take(values);
        if let Some(idx) = &a.index {
            let (key, _) =
                self.string(&lex::RawWord { pieces: vec![lex::Piece::Dq(idx.clone())], line: 0, raw: String::new() })?;
            if let Some(map) = self.assoc.get_mut(&a.name) {
                map.insert(key, values.pop().unwrap_or_default());
                return Ok(());
            }
            let i =
                arith::eval(&key, &|n| self.scalar(n)).and_then(|i| usize::try_from(i).ok()).filter(|i| *i < 100_000);
            let Some(i) = i else { return Ok(()) };
            let mut cur = self.vars.get(&a.name).cloned().unwrap_or_default();
            if cur.len() <= i {
                cur.resize(i + 1, String::new());
            }
            cur[i] = values.pop().unwrap_or_default();
            return self.set_var(&a.name, cur);
        }
        if a.append {
            let mut cur = self.vars.get(&a.name).cloned().unwrap_or_default();
            match (&a.value, cur.first_mut()) {
                (Value::Scalar(_), Some(first)) => first.push_str(values.first().map_or("", String::as_str)),
                _ => cur.append(&mut values),
            }
            values = cur;
        }
        self.set_var(&a.name, values)
    }

    fn simple(&mut self, s: &Simple) -> Out {
        self.statements += 1;
        if self.statements > super::MAX_STATEMENTS {
            return Err(cap(format!("over {} statements run", super::MAX_STATEMENTS)));
        }
        let mut f: Vec<Field> = Vec::new();
        for w in &s.words {
            f.extend(self.fields(w)?);
        }
        let line = self.at_line.unwrap_or(s.line);
        let first = f.first().map(|w| w.text.rsplit('/').next().unwrap_or("").to_string()).unwrap_or_default();
        let declaring = matches!(first.as_str(), "export" | "local" | "declare" | "typeset" | "readonly");
        if f.is_empty() || declaring {
            if declaring && f.iter().any(|w| w.text == "-A") {
                for w in f.iter().skip(1).filter(|w| is_name(&w.text)) {
                    self.assoc.entry(w.text.clone()).or_default();
                }
                for a in &s.assigns {
                    self.assoc.entry(a.name.clone()).or_default();
                }
            }
            for a in &s.assigns {
                self.assign(a)?;
            }
            return Ok((Flow::Next, Some(true)));
        }
        if let (Some(h), Some(target)) = (&s.heredoc, &s.out_file) {
            let (path, _) = self.string(target)?;
            let body = if h.quoted { h.body.clone() } else { self.heredoc_text(&h.body)? };
            self.files.insert(path, body);
        }
        let certain = self.uncertain == 0;
        let arg = |k: usize| f.get(k).map(|w| w.text.clone());
        let status = match first.as_str() {
            ":" | "true" => Some(true),
            "false" => Some(false),
            "[" | "test" => cond::test(&f[1..], false),
            "[[" => cond::test(&f[1..], true),
            "shift" => {
                let n = arg(1).and_then(|n| n.parse::<usize>().ok()).unwrap_or(1);
                if let Some(p) = self.positional.as_mut() {
                    p.drain(..n.min(p.len()));
                }
                Some(true)
            }
            "set" => {
                if arg(1).as_deref() == Some("--") {
                    self.positional = Some(f[2..].iter().map(|w| w.text.clone()).collect());
                }
                Some(true)
            }
            "unset" => {
                for w in &f[1..] {
                    self.vars.remove(&w.text);
                }
                Some(true)
            }
            "exit" if certain => return Ok((Flow::Exit, None)),
            "return" if certain => return Ok((Flow::Return, None)),
            "break" if certain => return Ok((Flow::Break(1), None)),
            "continue" if certain => return Ok((Flow::Continue(1), None)),
            "exit" | "return" | "break" | "continue" => None,
            "source" | "." => {
                let path = arg(1).unwrap_or_default();
                if let Some(text) = self.files.get(&path).cloned() {
                    return self.script(&text, Some(line));
                }
                self.add_note(format!(
                    "`{first} {path}` (line {line}) is not read: the variables it sets are not known"
                ));
                None
            }
            "eval" => {
                let text: Vec<String> = f[1..].iter().map(|w| w.text.clone()).collect();
                return self.script(&text.join(" "), Some(line));
            }
            "read" => {
                // `read -r -d '' NAME <<EOF … EOF`: the here-document's text into NAME.
                let name = f[1..].iter().rev().find(|w| is_name(&w.text)).map(|w| w.text.clone());
                if let (Some(h), Some(name)) = (&s.heredoc, name) {
                    let body = if h.quoted { h.body.clone() } else { self.heredoc_text(&h.body)? };
                    let whole = f.iter().any(|w| w.text == "-d");
                    let text = if whole {
                        body.trim_end_matches('\n').to_string()
                    } else {
                        body.lines().next().unwrap_or("").to_string()
                    };
                    if f.iter().any(|w| w.text == "-a") {
                        self.set_var(&name, text.split_whitespace().map(str::to_string).collect())?;
                    } else {
                        self.set_var(&name, vec![text])?;
                    }
                }
                Some(true)
            }
            "let" => {
                for w in &f[1..] {
                    if let Some((name, v)) = arith::assignment(&w.text, &|n| self.scalar(n)) {
                        self.set_var(&name, vec![v.to_string()])?;
                    }
                }
                Some(true)
            }
            name if self.funcs.contains_key(name) => {
                let body = self.funcs.get(name).cloned().unwrap_or_default();
                self.depth += 1;
                if self.depth > super::MAX_DEPTH {
                    return Err(cap(format!("calls nested deeper than {}", super::MAX_DEPTH)));
                }
                let saved = self.positional.replace(f[1..].iter().map(|w| w.text.clone()).collect());
                let r = self.nodes(&body);
                self.positional = saved;
                self.depth -= 1;
                let (flow, st) = r?;
                return Ok((if flow == Flow::Exit { Flow::Exit } else { Flow::Next }, st));
            }
            _ => return self.command(&f, s, line),
        };
        Ok((Flow::Next, status))
    }

    /// A here-document's body expanded (an unquoted delimiter).
    fn heredoc_text(&mut self, body: &str) -> Result<String, Error> {
        let w = lex::RawWord { pieces: vec![lex::Piece::Dq(body.replace('"', "\\\""))], line: 0, raw: String::new() };
        Ok(self.string(&w)?.0)
    }

    /// Any other command: a shell running a string or a file, or a command to record.
    fn command(&mut self, f: &[Field], s: &Simple, line: usize) -> Out {
        let prog = |w: &Field| w.text.rsplit('/').next().unwrap_or("").to_string();
        // A job script given as a here-document (`sbatch <<EOF`, `bash <<EOF`): its text is run.
        let first = f.first().map(prog).unwrap_or_default();
        if let Some(h) = &s.heredoc
            && s.out_file.is_none()
            && matches!(first.as_str(), "sbatch" | "salloc" | "srun" | "bash" | "sh" | "zsh" | "dash")
            && !f[1..].iter().any(|w| !w.text.starts_with('-') && (w.text.ends_with(".sh") || w.text == "-c"))
        {
            let body = if h.quoted { h.body.clone() } else { self.heredoc_text(&h.body)? };
            return self.script(&body, Some(line)).map(|(_, st)| (Flow::Next, st));
        }
        let shell_at = f.iter().position(|w| matches!(prog(w).as_str(), "bash" | "sh" | "zsh" | "dash"));
        if let Some(k) = shell_at
            && script_index(&f[..k]).is_none()
        {
            let rest = &f[k + 1..];
            let dash_c = rest.iter().position(|w| {
                w.text == "-c" || (w.text.starts_with('-') && w.text.ends_with('c') && !w.text.starts_with("--"))
            });
            if let Some(c) = dash_c
                && let Some(text) = rest.get(c + 1)
            {
                let saved = self.positional.clone();
                if rest.len() > c + 2 {
                    let from = (c + 3).min(rest.len());
                    self.positional = Some(rest[from..].iter().map(|w| w.text.clone()).collect());
                }
                let r = self.script(&text.text.clone(), Some(line));
                self.positional = saved;
                return r.map(|(_, st)| (Flow::Next, st));
            }
            if let Some(h) = &s.heredoc
                && rest.iter().all(|w| w.text.starts_with('-'))
            {
                let body = if h.quoted { h.body.clone() } else { self.heredoc_text(&h.body)? };
                return self.script(&body, Some(line)).map(|(_, st)| (Flow::Next, st));
            }
            if let Some(file) = rest.iter().find(|w| !w.text.starts_with('-'))
                && let Some(text) = self.files.get(&file.text).cloned()
            {
                let at = rest.iter().position(|w| w.text == file.text).unwrap_or(0);
                let saved = self.positional.replace(rest[at + 1..].iter().map(|w| w.text.clone()).collect());
                let r = self.script(&text, Some(line));
                self.positional = saved;
                return r.map(|(_, st)| (Flow::Next, st));
            }
        }
        if let Some(at) = script_index(f) {
            self.found.push(Found { words: f.to_vec(), script_at: at });
        } else if f.iter().any(|w| w.text.starts_with("--")) {
            self.flags_only.extend(f.iter().cloned());
        }
        Ok((Flow::Next, None))
    }
}

/// The line a command starts on.
fn first_line(n: &Node) -> Option<usize> {
    match n {
        Node::Simple(s) => Some(s.line),
        Node::List(items) => items.first().and_then(|(_, n)| first_line(n)),
        Node::Not(n) => first_line(n),
        Node::For { line, .. } | Node::While { line, .. } => Some(*line),
        Node::If { arms, .. } => arms.first().map(|a| a.3),
        Node::Group(b) => b.first().and_then(first_line),
        _ => None,
    }
}

/// The index of the Python training script among a command's words: the first `.py` word that is
/// not a flag, or the module of `python -m module` (not a launcher's module).
pub(super) fn script_index(f: &[Field]) -> Option<usize> {
    let py = f.iter().position(|w| w.text.ends_with(".py") && !w.text.starts_with('-') && !w.text.contains('='));
    let module = f.windows(2).position(|p| {
        matches!(p[0].text.as_str(), "-m" | "--module")
            && !LAUNCHER_MODULES.contains(&p[1].text.as_str())
            && !p[1].text.starts_with('-')
    });
    match (py, module) {
        (Some(p), Some(m)) if m + 1 < p => Some(m + 1),
        (Some(p), _) => Some(p),
        (None, Some(m)) => Some(m + 1),
        _ => None,
    }
}
