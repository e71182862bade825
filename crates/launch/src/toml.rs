//! A reader of the TOML that job files use (a subset, no dependency): tables `[a.b]`, arrays of
//! tables `[[a]]` (items by index: `a.0.key`), `key = value` with bare, quoted and dotted keys,
//! basic and literal strings (also `"""` multi-line), numbers, booleans, arrays over several lines
//! and inline tables kept as text, comments. Output: every key as an [`Entry`] with its dotted
//! path, in file order. A key given twice is an error, as TOML says; errors name the line.

use std::collections::BTreeMap;

use super::settings::Entry;
use fmperf_core::Error;

fn err(line: usize, msg: impl Into<String>) -> Error {
    Error::Parse { message: format!("TOML line {line}: {}", msg.into()) }
}

/// The line without its comment (a `#` outside strings).
fn strip_comment(s: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            '\\' if double && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !single && !escaped => double = !double,
            '\'' if !double => single = !single,
            '#' if !single && !double => return &s[..i],
            _ => {}
        }
        escaped = false;
    }
    s
}

/// A key path (`a."b.c".d`) as parts.
fn key_parts(k: &str, line: usize) -> Result<Vec<String>, Error> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in k.trim().chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => parts.push(std::mem::take(&mut cur).trim().to_string()),
            (None, c) if c.is_ascii_alphanumeric() || c == '_' || c == '-' => cur.push(c),
            (None, c) if c.is_whitespace() => {}
            (None, c) => return Err(err(line, format!("`{c}` cannot appear in a bare key `{}`", k.trim()))),
        }
    }
    if quote.is_some() {
        return Err(err(line, format!("unclosed quote in key `{}`", k.trim())));
    }
    parts.push(cur.trim().to_string());
    if parts.iter().any(String::is_empty) {
        return Err(err(line, format!("empty key part in `{}`", k.trim())));
    }
    Ok(parts)
}

/// Whether brackets and braces of a value are balanced (outside strings).
fn balanced(v: &str) -> bool {
    let (mut depth, mut single, mut double) = (0i32, false, false);
    for c in v.chars() {
        match c {
            '"' if !single => double = !double,
            '\'' if !double => single = !single,
            '[' | '{' if !single && !double => depth += 1,
            ']' | '}' if !single && !double => depth -= 1,
            _ => {}
        }
    }
    depth <= 0
}

/// A value's text: strings unquoted (escapes `\"`, `\\`, `\n`, `\t` read), others as written;
/// anything that is not a TOML value is an error.
fn value_text(v: &str, line: usize) -> Result<String, Error> {
    let v = v.trim();
    if v.is_empty() {
        return Err(err(line, "a key needs a value"));
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(o) => out.push(o),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        return Ok(out);
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Ok(inner.to_string());
    }
    if v.starts_with('[') || v.starts_with('{') {
        return Ok(v.to_string());
    }
    let plain = v.replace('_', "");
    let number = plain.parse::<f64>().is_ok()
        || plain.starts_with("0x")
        || matches!(plain.trim_start_matches(['+', '-']), "inf" | "nan");
    if number || v == "true" || v == "false" || v.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return Ok(v.to_string());
    }
    Err(err(line, format!("`{v}` is not a TOML value (strings need quotes)")))
}

/// Reads `text` into its keys (see the module documentation).
pub fn read(text: &str) -> Result<Vec<Entry>, Error> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Entry> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut arrays: BTreeMap<String, usize> = BTreeMap::new();
    let mut table = String::new();
    let mut n = 0;
    while n < lines.len() {
        let line_no = n + 1;
        let raw = lines[n].trim_end_matches('\r');
        n += 1;
        let body = strip_comment(raw).trim();
        if body.is_empty() {
            continue;
        }
        if let Some(rest) = body.strip_prefix("[[") {
            let name = rest.strip_suffix("]]").ok_or_else(|| err(line_no, "an array of tables needs `]]`"))?;
            let name = key_parts(name, line_no)?.join(".");
            let idx = arrays.entry(name.clone()).or_insert(0);
            table = format!("{name}.{idx}");
            *idx += 1;
            continue;
        }
        if let Some(rest) = body.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| err(line_no, "a table header needs `]`"))?;
            table = key_parts(name, line_no)?.join(".");
            if let Some(first) = seen.insert(format!("[{table}]"), line_no) {
                return Err(err(line_no, format!("table [{table}] is defined twice (first on line {first})")));
            }
            continue;
        }
        let Some((k, v)) = body.split_once('=') else {
            return Err(err(line_no, format!("expected `key = value` or a [table], found `{body}`")));
        };
        let mut value = v.trim().to_string();
        // Multi-line strings and arrays.
        if value.starts_with("\"\"\"") || value.starts_with("'''") {
            let q = &value[..3].to_string();
            let mut s = value[3..].to_string();
            while !s.contains(q.as_str()) {
                let Some(next) = lines.get(n) else { return Err(err(line_no, "unclosed multi-line string")) };
                s.push('\n');
                s.push_str(next);
                n += 1;
            }
            let end = s.find(q.as_str()).unwrap_or(s.len());
            value = format!("\"{}\"", s[..end].trim_start_matches('\n').replace('"', "\\\""));
        } else {
            while !balanced(&value) {
                let Some(next) = lines.get(n) else { return Err(err(line_no, "unclosed array or inline table")) };
                value.push(' ');
                value.push_str(strip_comment(next).trim());
                n += 1;
            }
        }
        let key = key_parts(k, line_no)?.join(".");
        let path = if table.is_empty() { key } else { format!("{table}.{key}") };
        if let Some(first) = seen.insert(path.clone(), line_no) {
            return Err(err(line_no, format!("key {path} is given twice (first on line {first})")));
        }
        out.push(Entry { key: path, value: value_text(&value, line_no)?, line: line_no });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_keys_and_values() {
        let got = read(
            "# job\n[job]\ndump_folder = \"./out\" # here\n[model]\nname = 'llama3'\nflavor = \"8B\"\n\
             converters = [\n  \"float8\",\n]\n[training]\nseq_len = 8_192\nlr = 3e-4\ncompile = false\n\
             [[layers]]\nx = 1\n[[layers]]\nx = 2\n",
        )
        .unwrap();
        let kv: Vec<(&str, &str)> = got.iter().map(|e| (e.key.as_str(), e.value.as_str())).collect();
        assert_eq!(
            kv,
            [
                ("job.dump_folder", "./out"),
                ("model.name", "llama3"),
                ("model.flavor", "8B"),
                ("model.converters", "[ \"float8\", ]"),
                ("training.seq_len", "8_192"),
                ("training.lr", "3e-4"),
                ("training.compile", "false"),
                ("layers.0.x", "1"),
                ("layers.1.x", "2"),
            ]
        );
        assert_eq!(got[4].line, 11);
    }

    #[test]
    fn malformed_toml_names_the_line() {
        for (text, needle) in [
            ("[training\nseq_len = 1\n", "line 1"),
            ("[training]\nseq_len = 1\nseq_len = 2\n", "given twice"),
            ("[training]\nseq_len 8192\n", "key = value"),
            ("[training]\nname = llama\n", "strings need quotes"),
            ("a = [1,\n2\n", "unclosed"),
            ("a = \"\"\"open\n", "unclosed"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
