//! YAML 1.2 as training configurations write it, read by `yaml-rust2`'s event parser (its
//! [`Marker`]s give the lines): block and flow collections, every scalar style, multi-line
//! strings, tags (`!!python/tuple`, `!!float`: read as plain values), anchors, aliases and merge
//! keys (`<<: *base`, `<<: [*a, *b]`).
//!
//! Output: every leaf as an [`Entry`] with its dotted path and the line of its key (a sequence
//! item's own line), in file order. Mappings (block or flow) are walked; block sequences give
//! their items by index (`layers.0.name`); flow sequences (`[0.9, 0.95]`) and empty collections
//! (`{}`, `[]`) are one entry with their text. Null (`null`, `~`, nothing) is `""`.
//!
//! Rules: a key given twice in one mapping is an error naming it and both lines (a merged key is
//! overridden, not duplicated, as the merge-key spec says); several documents are an error naming
//! the second one's line unless the later documents are empty; a file whose top level is not a
//! mapping is an error. Bounds against hostile input: nesting depth ≤ [`MAX_DEPTH`], nodes produced
//! (aliases expanded) ≤ [`MAX_NODES`]; an alias bomb is an error naming the cap. OmegaConf's
//! `${…}` interpolations are left as written (see [`super::omegaconf`]).

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::settings::Entry;
use fmperf_core::Error;

/// Deepest nesting of collections (aliases expanded) read.
pub const MAX_DEPTH: usize = 64;
/// Most nodes a file may produce with its aliases expanded.
pub const MAX_NODES: usize = 1_000_000;

/// One node of the document.
#[derive(Debug, Clone)]
enum Node {
    /// A scalar's text, whether it was quoted, and its line.
    Scalar(String, bool, usize),
    /// A sequence: items, flow style (`[…]`), line.
    Seq(Vec<Node>, bool, usize),
    /// A mapping: `(key, key line, value)` in order, line.
    Map(Vec<(String, usize, Node)>, usize),
}

impl Node {
    fn line(&self) -> usize {
        match self {
            Node::Scalar(_, _, l) | Node::Seq(_, _, l) | Node::Map(_, l) => *l,
        }
    }

    /// Nodes in this tree and its depth.
    fn size(&self) -> (usize, usize) {
        match self {
            Node::Scalar(..) => (1, 0),
            Node::Seq(items, ..) => items.iter().map(Node::size).fold((1, 1), |(n, d), (m, e)| (n + m, d.max(e + 1))),
            Node::Map(items, _) => {
                items.iter().map(|(_, _, v)| v.size()).fold((1, 1), |(n, d), (m, e)| (n + m, d.max(e + 1)))
            }
        }
    }
}

fn err(line: usize, msg: impl Into<String>) -> Error {
    Error::Parse { message: format!("YAML line {line}: {}", msg.into()) }
}

/// An open collection while the events arrive.
enum Open {
    Seq { items: Vec<Node>, flow: bool, line: usize, anchor: usize },
    Map { items: Vec<(Node, Node)>, key: Option<Node>, line: usize, anchor: usize },
}

/// Builds the tree from the parser's events, with the bounds of the module.
struct Builder<'t> {
    text: &'t str,
    offsets: Option<Vec<usize>>,
    stack: Vec<Open>,
    anchors: HashMap<usize, (Node, usize, usize)>,
    nodes: usize,
    /// Aliases expanded so far (to tell an alias bomb from a file that is merely huge).
    aliases: usize,
    documents: Vec<(Node, usize)>,
    doc_line: usize,
    error: Option<Error>,
}

impl Builder<'_> {
    /// Whether the collection starting at `mark` is a flow one (`[` or `{` there). The marker
    /// counts characters; `offsets` maps them to bytes when the text is not ASCII.
    fn is_flow(&self, mark: &Marker) -> bool {
        let at = match &self.offsets {
            Some(o) => o.get(mark.index()).copied().unwrap_or(self.text.len()),
            None => mark.index(),
        };
        let rest = self.text.get(at..).unwrap_or("");
        rest.trim_start_matches([' ', '\t']).starts_with(['[', '{'])
    }

    fn count(&mut self, n: usize, line: usize) -> Result<(), Error> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            let why = if self.aliases > 0 {
                format!("more than {MAX_NODES} nodes with its {} aliases expanded (an alias bomb?)", self.aliases)
            } else {
                format!("more than {MAX_NODES} nodes: larger than any launch or config file this reads")
            };
            return Err(err(line, why));
        }
        Ok(())
    }

    /// Adds a finished node to its parent (or as a document), registering its anchor.
    fn push(&mut self, node: Node, anchor: usize, depth: usize) -> Result<(), Error> {
        if anchor > 0 {
            let (n, d) = node.size();
            self.anchors.insert(anchor, (node.clone(), n, d.max(depth)));
        }
        match self.stack.last_mut() {
            None => self.documents.push((node, self.doc_line)),
            Some(Open::Seq { items, .. }) => items.push(node),
            Some(Open::Map { items, key, .. }) => match key.take() {
                Some(k) => items.push((k, node)),
                None => *key = Some(node),
            },
        }
        Ok(())
    }

    fn event(&mut self, ev: Event, mark: Marker) -> Result<(), Error> {
        let line = mark.line().max(1);
        match ev {
            Event::DocumentStart => self.doc_line = line,
            Event::Scalar(text, style, anchor, _tag) => {
                self.count(1, line)?;
                let quoted = !matches!(style, TScalarStyle::Plain);
                let text = if !quoted && matches!(text.as_str(), "null" | "~" | "Null" | "NULL") {
                    String::new()
                } else {
                    text
                };
                self.push(Node::Scalar(text, quoted, line), anchor, 0)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(err(line, format!("nested deeper than {MAX_DEPTH} levels")));
                }
                self.count(1, line)?;
                self.stack.push(if matches!(ev, Event::SequenceStart(..)) {
                    Open::Seq { items: Vec::new(), flow: self.is_flow(&mark), line, anchor }
                } else {
                    Open::Map { items: Vec::new(), key: None, line, anchor }
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(open) = self.stack.pop() else { return Err(err(line, "unbalanced collection")) };
                let (node, anchor) = match open {
                    Open::Seq { items, flow, line, anchor } => (Node::Seq(items, flow, line), anchor),
                    Open::Map { items, line, anchor, .. } => (Node::Map(mapping(items)?, line), anchor),
                };
                let depth = self.stack.len();
                self.push(node, anchor, depth)?;
            }
            Event::Alias(id) => {
                let Some((node, n, d)) = self.anchors.get(&id).cloned() else {
                    return Err(err(line, "an alias names no anchor before it"));
                };
                if self.stack.len() + d > MAX_DEPTH {
                    return Err(err(line, format!("an alias nests deeper than {MAX_DEPTH} levels")));
                }
                self.aliases += 1;
                self.count(n, line)?;
                self.push(node, 0, 0)?;
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
        Ok(())
    }
}

impl MarkedEventReceiver for Builder<'_> {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_none()
            && let Err(e) = self.event(ev, mark)
        {
            self.error = Some(e);
        }
    }
}

/// A mapping's pairs as `(key, line, value)`: keys must be scalars and given once; merge keys
/// (`<<`) add the keys of their mapping(s) that the mapping does not give itself.
fn mapping(items: Vec<(Node, Node)>) -> Result<Vec<(String, usize, Node)>, Error> {
    let mut own: Vec<(String, usize, Node)> = Vec::with_capacity(items.len());
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(items.len());
    let mut merges: Vec<(usize, Node)> = Vec::new();
    for (k, v) in items {
        let Node::Scalar(key, quoted, line) = k else {
            return Err(err(k.line(), "a key must be a scalar, not a list or mapping"));
        };
        if key == "<<" && !quoted {
            merges.push((own.len(), v));
            continue;
        }
        if let Some(first) = seen.insert(key.clone(), line) {
            return Err(err(line, format!("key `{key}` is given twice in one mapping (first on line {first})")));
        }
        own.push((key, line, v));
    }
    // Merged keys go where the `<<` was; earlier merged mappings win over later ones.
    for (at, v) in merges.into_iter().rev() {
        let line = v.line();
        let sources = match v {
            Node::Map(m, _) => vec![m],
            Node::Seq(items, ..) => {
                let mut maps = Vec::new();
                for i in items {
                    let Node::Map(m, _) = i else { return Err(err(line, "`<<` merges mappings only")) };
                    maps.push(m);
                }
                maps
            }
            Node::Scalar(..) => return Err(err(line, "`<<` merges a mapping (`<<: *anchor`)")),
        };
        let mut add: Vec<(String, usize, Node)> = Vec::new();
        for m in sources {
            for (k, l, n) in m {
                if !seen.contains_key(&k) {
                    seen.insert(k.clone(), l);
                    add.push((k, l, n));
                }
            }
        }
        let at = at.min(own.len());
        own.splice(at..at, add);
    }
    Ok(own)
}

/// A flow collection or scalar as text (`[0.9, 0.95]`, `{a: 1}`, `"quoted"`).
fn render(node: &Node, out: &mut String) {
    match node {
        Node::Scalar(t, true, _) => {
            out.push('"');
            out.push_str(&t.replace('"', "\\\""));
            out.push('"');
        }
        Node::Scalar(t, false, _) => out.push_str(if t.is_empty() { "null" } else { t }),
        Node::Seq(items, ..) => {
            out.push('[');
            for (i, n) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(n, out);
            }
            out.push(']');
        }
        Node::Map(items, _) => {
            out.push('{');
            for (i, (k, _, n)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                render(n, out);
            }
            out.push('}');
        }
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") }
}

/// Flattens `node` found at `path` (its key on `line`) into `out`.
fn flatten(path: &str, line: usize, node: &Node, out: &mut Vec<Entry>) {
    match node {
        Node::Scalar(t, _, _) => out.push(Entry { key: path.to_string(), value: t.clone(), line }),
        Node::Map(items, _) if !items.is_empty() => {
            for (k, l, v) in items {
                flatten(&join(path, k), *l, v, out);
            }
        }
        Node::Seq(items, false, _) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten(&join(path, &i.to_string()), v.line(), v, out);
            }
        }
        other => {
            let mut s = String::new();
            render(other, &mut s);
            out.push(Entry { key: path.to_string(), value: s, line });
        }
    }
}

/// Reads `text` into its leaves (see the module documentation).
pub fn read(text: &str) -> Result<Vec<Entry>, Error> {
    let mut b = Builder {
        text,
        offsets: (!text.is_ascii()).then(|| text.char_indices().map(|(i, _)| i).collect()),
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        aliases: 0,
        documents: Vec::new(),
        doc_line: 1,
        error: None,
    };
    let mut parser = Parser::new_from_str(text);
    let loaded = parser.load(&mut b, true);
    if let Some(e) = b.error {
        return Err(e);
    }
    if let Err(e) = loaded {
        return Err(err(e.marker().line().max(1), e.info().to_string()));
    }
    let mut docs = b.documents.into_iter();
    let Some((root, _)) = docs.next() else { return Ok(Vec::new()) };
    if let Some((_, line)) = docs.find(|(d, _)| !matches!(d, Node::Scalar(t, false, _) if t.is_empty())) {
        return Err(err(line, "a second YAML document (`---`): fmperf reads one configuration per file"));
    }
    let mut out = Vec::new();
    match &root {
        Node::Map(..) => flatten("", root.line(), &root, &mut out),
        Node::Scalar(t, false, _) if t.is_empty() => {}
        other => {
            let mut s = String::new();
            render(other, &mut s);
            let s: String = s.chars().take(60).collect();
            return Err(err(other.line(), format!("expected `key: value` mappings, found `{s}`")));
        }
    }
    Ok(out)
}

/// Whether a line looks like a YAML mapping line (`key: value` or `key:`).
pub fn looks_like_mapping_line(line: &str) -> bool {
    let t = line.trim();
    let (mut single, mut double, mut depth) = (false, false, 0i32);
    let chars: Vec<char> = t.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '[' | '{' if !single && !double => depth += 1,
            ']' | '}' if !single && !double => depth -= 1,
            ':' if !single && !double && depth == 0 => {
                if chars.get(i + 1).is_some_and(|n| !n.is_whitespace()) {
                    continue;
                }
                let key: String = chars[..i].iter().collect();
                let key = key.trim();
                return !key.is_empty() && key != "-" && (!key.contains(' ') || key.starts_with('"'));
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(text: &str) -> Vec<(String, String)> {
        read(text).unwrap().into_iter().map(|e| (e.key, e.value)).collect()
    }

    #[test]
    fn mappings_sequences_and_scalars() {
        let got = kv("# c\ntrainer:\n  devices: 8 # per node\n  precision: \"bf16-mixed\"\nmodel:\n  \
                      len: 4096\n  betas: [0.9, 0.95]\n  empty:\n  \
                      list:\n    - 1\n    - name: a\n      size: 2\n  text: |\n    two\n    lines\nlast: ~\n");
        let want = [
            ("trainer.devices", "8"),
            ("trainer.precision", "bf16-mixed"),
            ("model.len", "4096"),
            ("model.betas", "[0.9, 0.95]"),
            ("model.empty", ""),
            ("model.list.0", "1"),
            ("model.list.1.name", "a"),
            ("model.list.1.size", "2"),
            ("model.text", "two\nlines\n"),
            ("last", ""),
        ];
        let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(got, want);
        let lines: Vec<usize> =
            read("a:\n  b: 1\n\n  c:\n    - x\n    - y\n").unwrap().iter().map(|e| e.line).collect();
        assert_eq!(lines, [2, 5, 6]);
    }

    #[test]
    fn malformed_yaml_is_an_error_with_its_line() {
        let e = read("model:\n  a: 1\n b: 2\n").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = read("just words here\n").unwrap_err().to_string();
        assert!(e.contains("key: value"), "{e}");
        let e = read("a: [1, 2\n").unwrap_err().to_string();
        assert!(e.contains("YAML line"), "{e}");
    }
}
