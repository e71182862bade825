//! The shell's grammar over [`super::lex`]'s tokens: simple commands with their assignments and
//! redirections, and-or lists, pipelines, `if`/`elif`/`else`, `case`, `for`, `while`/`until`,
//! `{ … }` and `( … )` groups, function definitions, `[[ … ]]` and `((…))`. Lenient: a token
//! that fits nowhere is skipped, never an error; nesting deeper than [`MAX_NESTING`] is an error.

use super::lex::{Heredoc, Piece, RawWord, Tok, assignment_head, is_name};
use fmperf_core::Error;
use std::rc::Rc;

/// Deepest nesting of compound commands read.
pub(super) const MAX_NESTING: usize = 100;

/// An assignment's value.
#[derive(Debug, Clone)]
pub(super) enum Value {
    /// `NAME=word` (the word after `=`).
    Scalar(RawWord),
    /// `NAME=( … )`.
    Array(Vec<RawWord>),
}

/// `NAME=value`, `NAME+=value`, `NAME[i]=value`.
#[derive(Debug, Clone)]
pub(super) struct Assign {
    pub name: String,
    /// The subscript as written (`NAME[i]=…`).
    pub index: Option<String>,
    pub append: bool,
    pub value: Value,
}

/// A simple command.
#[derive(Debug, Clone)]
pub(super) struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<RawWord>,
    /// The here-document fed to it.
    pub heredoc: Option<Heredoc>,
    /// The file its output goes to (`> run.sh`).
    pub out_file: Option<RawWord>,
    pub line: usize,
}

/// How a command joins the previous one of an and-or list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Conn {
    /// Always run (`;`, `|`, the first command).
    Seq,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

/// A command.
#[derive(Debug, Clone)]
pub(super) enum Node {
    Simple(Simple),
    /// Commands joined by `&&`, `||`, `|`.
    List(Vec<(Conn, Node)>),
    /// `! cmd`.
    Not(Box<Node>),
    /// `if`: (condition, body) arms, the `else` body, the condition's text and line.
    If {
        arms: Vec<(Vec<Node>, Vec<Node>, String, usize)>,
        otherwise: Option<Vec<Node>>,
    },
    /// `case word in pattern) … ;; esac`.
    Case {
        subject: RawWord,
        arms: Vec<(Vec<RawWord>, Vec<Node>)>,
    },
    /// `for NAME in words; do … done` (`items` `None`: the positional parameters; `None` name: a
    /// C-style loop, not run).
    For {
        var: Option<String>,
        items: Option<Vec<RawWord>>,
        body: Vec<Node>,
        line: usize,
    },
    /// `while`/`until`.
    While {
        until: bool,
        cond: Vec<Node>,
        body: Vec<Node>,
        line: usize,
    },
    /// A function definition.
    Func {
        name: String,
        body: Rc<Vec<Node>>,
    },
    /// `{ … }`, `( … )`.
    Group(Vec<Node>),
    /// `((…))`.
    Arith(String),
}

struct Parser {
    /// Simple commands parsed so far.
    commands: usize,
    toks: Vec<Tok>,
    heredocs: std::vec::IntoIter<Heredoc>,
    i: usize,
    depth: usize,
}

/// Parses a lexed script into its commands.
pub(super) fn parse(toks: Vec<Tok>, heredocs: Vec<Heredoc>) -> Result<Vec<Node>, Error> {
    let mut p = Parser { commands: 0, toks, heredocs: heredocs.into_iter(), i: 0, depth: 0 };
    let mut out = Vec::new();
    while p.i < p.toks.len() {
        let before = p.i;
        out.extend(p.list(&[])?);
        if p.i == before {
            p.i += 1;
        }
    }
    Ok(out)
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn word_is(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(rw)) if rw.plain() == Some(w))
    }

    fn op_is(&self, o: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(x, _)) if *x == o)
    }

    fn line(&self) -> usize {
        match self.peek() {
            Some(Tok::Word(w)) => w.line,
            Some(Tok::Op(_, l) | Tok::Newline(l) | Tok::Arith(_, l)) => *l,
            Some(Tok::ArrayOpen { line, .. }) => *line,
            None => 0,
        }
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Some(Tok::Newline(_)) | Some(Tok::Op(";", _))) {
            self.i += 1;
        }
    }

    fn expect_word(&mut self, w: &str) {
        self.skip_newlines();
        if self.word_is(w) {
            self.i += 1;
        }
    }

    /// Commands up to one of the reserved words `ends` (or `)`/`;;` when listed), or the end.
    fn list(&mut self, ends: &[&str]) -> Result<Vec<Node>, Error> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error::Parse {
                message: format!(
                    "the script nests compound commands deeper than {MAX_NESTING} (a cap of fmperf's shell reader)"
                ),
            });
        }
        let mut out = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek() {
                None => break,
                Some(Tok::Word(w)) if w.plain().is_some_and(|t| ends.contains(&t)) => break,
                Some(Tok::Op(o, _)) if ends.contains(o) => break,
                Some(Tok::Op("&", _)) => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            if self.commands > super::MAX_STATEMENTS {
                return Err(super::expand::cap(format!("over {} commands", super::MAX_STATEMENTS)));
            }
            let before = self.i;
            if let Some(n) = self.and_or(ends)? {
                out.push(n);
            }
            if self.i == before {
                // A token that fits nowhere (a stray `)`, `fi`): skipped.
                if ends.is_empty() || !matches!(self.peek(), Some(Tok::Op(")" | ";;", _))) {
                    self.i += 1;
                } else {
                    break;
                }
            }
        }
        self.depth -= 1;
        Ok(out)
    }

    fn and_or(&mut self, ends: &[&str]) -> Result<Option<Node>, Error> {
        let mut items: Vec<(Conn, Node)> = Vec::new();
        let mut conn = Conn::Seq;
        loop {
            let negate = self.word_is("!");
            if negate {
                self.i += 1;
            }
            let Some(mut n) = self.command(ends)? else { break };
            if negate {
                n = Node::Not(Box::new(n));
            }
            items.push((conn, n));
            conn = match self.peek() {
                Some(Tok::Op("&&", _)) => Conn::And,
                Some(Tok::Op("||", _)) => Conn::Or,
                Some(Tok::Op("|", _)) => Conn::Seq,
                _ => break,
            };
            self.i += 1;
            while matches!(self.peek(), Some(Tok::Newline(_))) {
                self.i += 1;
            }
        }
        Ok(match items.len() {
            0 => None,
            1 => items.pop().map(|(_, n)| n),
            _ => Some(Node::List(items)),
        })
    }

    fn command(&mut self, ends: &[&str]) -> Result<Option<Node>, Error> {
        let line = self.line();
        let word = match self.peek() {
            Some(Tok::Word(w)) => w.plain().map(str::to_string),
            Some(Tok::Arith(e, _)) => {
                let n = Node::Arith(e.clone());
                self.i += 1;
                return Ok(Some(n));
            }
            Some(Tok::Op("(", _)) => {
                self.i += 1;
                let body = self.list(&[")"])?;
                if self.op_is(")") {
                    self.i += 1;
                }
                return Ok(Some(Node::Group(body)));
            }
            Some(Tok::Op(..) | Tok::Newline(_)) | None => return Ok(None),
            Some(Tok::ArrayOpen { .. }) => None,
        };
        if word.as_deref().is_some_and(|w| ends.contains(&w)) {
            return Ok(None);
        }
        match word.as_deref() {
            Some("if") => return self.if_(line).map(Some),
            Some("case") => return self.case().map(Some),
            Some("for") => return self.for_(line).map(Some),
            Some(w @ ("while" | "until")) => {
                let until = w == "until";
                self.i += 1;
                let cond = self.list(&["do"])?;
                self.expect_word("do");
                let body = self.list(&["done"])?;
                self.expect_word("done");
                return Ok(Some(Node::While { until, cond, body, line }));
            }
            Some("{") => {
                self.i += 1;
                let body = self.list(&["}"])?;
                self.expect_word("}");
                return Ok(Some(Node::Group(body)));
            }
            Some("function") => {
                self.i += 1;
                let name = match self.peek() {
                    Some(Tok::Word(w)) => w.raw.clone(),
                    _ => return Ok(None),
                };
                self.i += 1;
                if self.op_is("(") && matches!(self.toks.get(self.i + 1), Some(Tok::Op(")", _))) {
                    self.i += 2;
                }
                return self.func_body(name).map(Some);
            }
            Some("[[") => return Ok(Some(self.double_bracket(line))),
            _ => {}
        }
        // `name() compound`.
        if let (Some(Tok::Word(w)), Some(Tok::Op("(", _)), Some(Tok::Op(")", _))) =
            (self.peek(), self.toks.get(self.i + 1), self.toks.get(self.i + 2))
        {
            let name = w.raw.clone();
            self.i += 3;
            return self.func_body(name).map(Some);
        }
        Ok(Some(Node::Simple(self.simple(line))))
    }

    fn func_body(&mut self, name: String) -> Result<Node, Error> {
        while matches!(self.peek(), Some(Tok::Newline(_))) {
            self.i += 1;
        }
        let body = match self.command(&[])? {
            Some(Node::Group(b)) => b,
            Some(n) => vec![n],
            None => Vec::new(),
        };
        Ok(Node::Func { name, body: Rc::new(body) })
    }

    fn if_(&mut self, _line: usize) -> Result<Node, Error> {
        let mut arms = Vec::new();
        let mut otherwise = None;
        self.i += 1;
        loop {
            let (from, line) = (self.i, self.line());
            let cond = self.list(&["then"])?;
            let src = self.source(from, self.i);
            self.expect_word("then");
            let body = self.list(&["elif", "else", "fi"])?;
            arms.push((cond, body, src, line));
            if self.word_is("elif") {
                self.i += 1;
                continue;
            }
            if self.word_is("else") {
                self.i += 1;
                otherwise = Some(self.list(&["fi"])?);
            }
            self.expect_word("fi");
            break;
        }
        Ok(Node::If { arms, otherwise })
    }

    /// The source text of tokens `from..to` (for notes).
    fn source(&self, from: usize, to: usize) -> String {
        let mut s = String::new();
        for t in self.toks.get(from..to).unwrap_or(&[]) {
            let piece = match t {
                Tok::Word(w) => w.raw.as_str(),
                Tok::Op(o, _) => o,
                Tok::Newline(_) => continue,
                Tok::Arith(e, _) => e.as_str(),
                Tok::ArrayOpen { name, .. } => name.as_str(),
            };
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(piece);
            if s.len() > 200 {
                break;
            }
        }
        s.trim_end_matches([';', ' ']).to_string()
    }

    fn case(&mut self) -> Result<Node, Error> {
        self.i += 1;
        let subject = match self.peek() {
            Some(Tok::Word(w)) => w.clone(),
            _ => RawWord::literal("", self.line()),
        };
        self.i += 1;
        self.expect_word("in");
        let mut arms = Vec::new();
        loop {
            while matches!(self.peek(), Some(Tok::Newline(_)) | Some(Tok::Op(";" | ";;", _))) {
                self.i += 1;
            }
            if self.word_is("esac") || self.peek().is_none() {
                self.i += 1;
                break;
            }
            if self.op_is("(") {
                self.i += 1;
            }
            let mut pats = Vec::new();
            while let Some(t) = self.peek() {
                match t {
                    Tok::Word(w) => pats.push(w.clone()),
                    Tok::Op("|", _) => {}
                    Tok::Op(")", _) => {
                        self.i += 1;
                        break;
                    }
                    _ => break,
                }
                self.i += 1;
            }
            let body = self.list(&[";;", "esac"])?;
            if self.op_is(";;") {
                self.i += 1;
            }
            arms.push((pats, body));
        }
        Ok(Node::Case { subject, arms })
    }

    fn for_(&mut self, line: usize) -> Result<Node, Error> {
        self.i += 1;
        let var = match self.peek() {
            Some(Tok::Word(w)) => {
                let v = w.plain().filter(|t| is_name(t)).map(str::to_string);
                self.i += 1;
                v
            }
            Some(Tok::Arith(..)) => {
                self.i += 1;
                None
            }
            _ => None,
        };
        while matches!(self.peek(), Some(Tok::Newline(_))) {
            self.i += 1;
        }
        let mut items = None;
        if self.word_is("in") {
            self.i += 1;
            let mut list = Vec::new();
            while let Some(Tok::Word(w)) = self.peek() {
                if w.plain() == Some("do") {
                    break;
                }
                list.push(w.clone());
                self.i += 1;
            }
            items = Some(list);
        }
        self.expect_word("do");
        let body = self.list(&["done"])?;
        self.expect_word("done");
        Ok(Node::For { var, items, body, line })
    }

    /// `[[ … ]]`: its words, operators as literal words.
    fn double_bracket(&mut self, line: usize) -> Node {
        let mut words = Vec::new();
        while let Some(t) = self.peek() {
            match t {
                Tok::Word(w) => {
                    let end = w.plain() == Some("]]");
                    words.push(w.clone());
                    self.i += 1;
                    if end {
                        break;
                    }
                }
                Tok::Op(o, l) => {
                    words.push(RawWord::literal(o, *l));
                    self.i += 1;
                }
                _ => break,
            }
        }
        Node::Simple(Simple { assigns: Vec::new(), words, heredoc: None, out_file: None, line })
    }

    fn simple(&mut self, line: usize) -> Simple {
        self.commands += 1;
        let mut s = Simple { assigns: Vec::new(), words: Vec::new(), heredoc: None, out_file: None, line };
        let mut declaring = false;
        while let Some(t) = self.peek().cloned() {
            match t {
                Tok::ArrayOpen { name, append, .. } => {
                    self.i += 1;
                    let mut elems = Vec::new();
                    while let Some(t) = self.peek() {
                        match t {
                            Tok::Word(w) => elems.push(w.clone()),
                            Tok::Op(")", _) => {
                                self.i += 1;
                                break;
                            }
                            Tok::Newline(_) => {}
                            Tok::Op(o, l) => elems.push(RawWord::literal(o, *l)),
                            _ => break,
                        }
                        self.i += 1;
                    }
                    s.assigns.push(Assign { name, index: None, append, value: Value::Array(elems) });
                }
                Tok::Word(w) => {
                    self.i += 1;
                    if (s.words.is_empty() || declaring)
                        && let Some(a) = assignment(&w)
                    {
                        s.assigns.push(a);
                        continue;
                    }
                    if s.words.is_empty() {
                        declaring = matches!(w.plain(), Some("export" | "local" | "declare" | "typeset" | "readonly"));
                    }
                    s.words.push(w);
                }
                Tok::Op(op @ (">" | "<" | "<<<" | "<<"), _) => {
                    self.i += 1;
                    let target = match self.peek() {
                        Some(Tok::Word(w)) => {
                            let w = w.clone();
                            self.i += 1;
                            Some(w)
                        }
                        _ => None,
                    };
                    match op {
                        "<<" => s.heredoc = self.heredocs.next(),
                        ">" => s.out_file = target,
                        _ => {}
                    }
                }
                _ => break,
            }
        }
        s
    }
}

/// `NAME=…` as an assignment (the first piece unquoted and starting with the head).
fn assignment(w: &RawWord) -> Option<Assign> {
    let Some(Piece::Unq(first)) = w.pieces.first() else { return None };
    let eq = first.find('=')?;
    let (name, append) = assignment_head(&first[..=eq])?;
    let head = &first[..eq];
    let index = head.find('[').map(|b| head[b + 1..].trim_end_matches(['+', ']']).to_string());
    let mut pieces = w.pieces.clone();
    if let Some(Piece::Unq(t)) = pieces.first_mut() {
        *t = t[eq + 1..].to_string();
    }
    let raw = w.raw.split_once('=').map_or(String::new(), |(_, r)| r.to_string());
    Some(Assign { name: name.to_string(), index, append, value: Value::Scalar(RawWord { pieces, line: w.line, raw }) })
}
