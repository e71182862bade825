//! A reader of the YAML that training configurations use (a subset, no dependency): block mappings
//! by indentation, block sequences (`- item`, `- key: value`), plain, single- and double-quoted
//! scalars, flow lists and maps kept as text (`[0.9, 0.95]`), block scalars (`|`, `>`), comments,
//! `---` document markers, tags and anchors skipped; OmegaConf interpolations `${a.b}` and
//! `${.sibling}` resolved (NeMo's configs use them). Output: every leaf as an [`Entry`] with its
//! dotted path, in file order. Errors name the line and the rule.

use super::settings::Entry;
use fmperf_core::Error;

/// Whether a line looks like a YAML mapping line (`key: value` or `key:`).
pub fn looks_like_mapping_line(line: &str) -> bool {
    split_key(line.trim()).is_some_and(|(k, _)| !k.contains(' ') || k.starts_with('"'))
}

fn err(line: usize, msg: impl Into<String>) -> Error {
    Error::Parse { message: format!("YAML line {line}: {}", msg.into()) }
}

/// The content of a line without its comment (a `#` at the start or after a space, outside quotes).
fn strip_comment(s: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &s[..i],
            _ => {}
        }
        prev = c;
    }
    s
}

/// Splits `key: value` (or `key:`) outside quotes and brackets.
fn split_key(c: &str) -> Option<(String, &str)> {
    let (mut single, mut double, mut depth) = (false, false, 0i32);
    let bytes: Vec<(usize, char)> = c.char_indices().collect();
    for (n, &(i, ch)) in bytes.iter().enumerate() {
        match ch {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '[' | '{' if !single && !double => depth += 1,
            ']' | '}' if !single && !double => depth -= 1,
            ':' if !single && !double && depth == 0 => {
                let next = bytes.get(n + 1).map(|p| p.1);
                if next.is_none() || next.is_some_and(char::is_whitespace) {
                    let key = c[..i].trim();
                    if key.is_empty() || key.starts_with('-') && key.len() == 1 {
                        return None;
                    }
                    let key = key.trim_matches(|q| q == '"' || q == '\'').to_string();
                    return Some((key, c[i + 1..].trim()));
                }
            }
            _ => {}
        }
    }
    None
}

/// A scalar's text: tags and anchors dropped, quotes removed.
fn scalar(v: &str) -> String {
    let mut v = v.trim();
    loop {
        if v.starts_with("!!") || v.starts_with('&') || (v.starts_with('!') && v.len() > 1) {
            v = v.split_once(char::is_whitespace).map_or("", |(_, r)| r.trim_start());
        } else {
            break;
        }
    }
    if v.len() >= 2 && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\''))) {
        return v[1..v.len() - 1].to_string();
    }
    if matches!(v, "null" | "~" | "Null" | "NULL") {
        return String::new();
    }
    v.to_string()
}

struct Frame {
    indent: usize,
    prefix: String,
    seq: usize,
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") }
}

/// Reads `text` into its leaves (see the module documentation).
pub fn read(text: &str) -> Result<Vec<Entry>, Error> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut frames = vec![Frame { indent: 0, prefix: String::new(), seq: 0 }];
    let mut pending: Option<(String, usize, usize)> = None;
    let mut n = 0;
    while n < lines.len() {
        let raw = lines[n].trim_end_matches('\r');
        let line_no = n + 1;
        n += 1;
        let body = strip_comment(raw);
        if body.trim().is_empty() || matches!(body.trim(), "---" | "...") || body.trim_start().starts_with('%') {
            continue;
        }
        let lead = &body[..body.len() - body.trim_start().len()];
        if lead.contains('\t') {
            return Err(err(line_no, "indentation must be spaces, not tabs"));
        }
        let mut indent = lead.len();
        let mut content = body.trim().to_string();
        if let Some((path, key_indent, _)) = pending.take() {
            if indent > key_indent || (indent == key_indent && content.starts_with('-')) {
                frames.push(Frame { indent, prefix: path, seq: 0 });
            } else {
                out.push(Entry { key: path, value: String::new(), line: line_no - 1 });
            }
        }
        loop {
            while frames.len() > 1 && frames.last().is_some_and(|f| indent < f.indent) {
                frames.pop();
            }
            let Some(f) = frames.last_mut() else { return Err(err(line_no, "unbalanced indentation")) };
            if indent != f.indent {
                return Err(err(line_no, "the indentation matches no enclosing block"));
            }
            if content == "-" || content.starts_with("- ") {
                let item = content[1..].trim_start().to_string();
                let path = join(&f.prefix, &f.seq.to_string());
                f.seq += 1;
                if item.is_empty() {
                    pending = Some((path, indent, line_no));
                } else if split_key(&item).is_some() && !item.starts_with('[') && !item.starts_with('{') {
                    let col = indent + content.len() - item.len();
                    frames.push(Frame { indent: col, prefix: path, seq: 0 });
                    indent = col;
                    content = item;
                    continue;
                } else {
                    out.push(Entry { key: path, value: scalar(&item), line: line_no });
                }
                break;
            }
            let Some((key, value)) = split_key(&content) else {
                return Err(err(line_no, format!("expected `key: value`, found `{content}`")));
            };
            let path = join(&f.prefix, &key);
            if value.is_empty() {
                pending = Some((path, indent, line_no));
            } else if value.starts_with('|') || value.starts_with('>') {
                let mut block = Vec::new();
                while n < lines.len() {
                    let l = lines[n];
                    let li = l.len() - l.trim_start().len();
                    if !l.trim().is_empty() && li <= indent {
                        break;
                    }
                    block.push(l.trim());
                    n += 1;
                }
                let sep = if value.starts_with('>') { " " } else { "\n" };
                out.push(Entry { key: path, value: block.join(sep).trim().to_string(), line: line_no });
            } else {
                if (value.starts_with('[') && !value.ends_with(']'))
                    || (value.starts_with('{') && !value.ends_with('}'))
                {
                    return Err(err(line_no, "a flow list or map must close on its line"));
                }
                out.push(Entry { key: path, value: scalar(value), line: line_no });
            }
            break;
        }
    }
    if let Some((path, _, line)) = pending {
        out.push(Entry { key: path, value: String::new(), line });
    }
    resolve_interpolations(&mut out)?;
    Ok(out)
}

/// Resolves OmegaConf interpolations: `${a.b.c}` (absolute) and `${.x}`, `${..x}` (relative to the
/// key's own mapping). Resolvers (`${oc.env:X}`) and unknown paths stay as written.
fn resolve_interpolations(entries: &mut [Entry]) -> Result<(), Error> {
    for _round in 0..8 {
        let mut changed = false;
        for i in 0..entries.len() {
            let v = entries[i].value.clone();
            let Some(start) = v.find("${") else { continue };
            let Some(len) = v[start..].find('}') else { continue };
            let inner = &v[start + 2..start + len];
            if inner.contains(':') {
                continue;
            }
            let target = if let Some(rel) = inner.strip_prefix('.') {
                let mut parent: Vec<&str> = entries[i].key.split('.').collect();
                parent.pop();
                let mut rel = rel;
                while let Some(r) = rel.strip_prefix('.') {
                    parent.pop();
                    rel = r;
                }
                join(&parent.join("."), rel)
            } else {
                inner.to_string()
            };
            if let Some(found) = entries.iter().find(|e| e.key == target).map(|e| e.value.clone())
                && !found.contains("${")
            {
                entries[i].value = format!("{}{}{}", &v[..start], found, &v[start + len + 1..]);
                changed = true;
            }
        }
        if !changed {
            return Ok(());
        }
    }
    Ok(())
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
                      seq: ${model.len}\n  len: 4096\n  max: ${.len}\n  betas: [0.9, 0.95]\n  empty:\n  \
                      list:\n    - 1\n    - name: a\n      size: 2\n  text: |\n    two\n    lines\nlast: ~\n");
        let want = [
            ("trainer.devices", "8"),
            ("trainer.precision", "bf16-mixed"),
            ("model.seq", "4096"),
            ("model.len", "4096"),
            ("model.max", "4096"),
            ("model.betas", "[0.9, 0.95]"),
            ("model.empty", ""),
            ("model.list.0", "1"),
            ("model.list.1.name", "a"),
            ("model.list.1.size", "2"),
            ("model.text", "two\nlines"),
            ("last", ""),
        ];
        let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn malformed_yaml_is_an_error_with_its_line() {
        let e = read("model:\n  a: 1\n b: 2\n").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        let e = read("model:\n\ta: 1\n").unwrap_err().to_string();
        assert!(e.contains("tabs"), "{e}");
        let e = read("just words here\n").unwrap_err().to_string();
        assert!(e.contains("key: value"), "{e}");
        let e = read("a: [1, 2\n").unwrap_err().to_string();
        assert!(e.contains("flow"), "{e}");
        // Interpolation cycles and resolvers stay as written, without looping.
        let got = kv("a: ${b}\nb: ${a}\nc: ${oc.env:X}\n");
        assert_eq!(got[2].1, "${oc.env:X}");
    }
}
