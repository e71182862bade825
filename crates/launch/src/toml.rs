//! TOML 1.0 as job files write it, read by the `toml` crate's spanned document parser
//! ([`toml::de::DeTable::parse`]; its spans give the lines). A key or table given twice, a value
//! that is not TOML (a bare word), an unclosed string or array are errors with their line.
//!
//! Output: every key as a [`Value`] (an [`Entry`] with its dotted path, its value as text and the
//! line of its key, plus the TOML type it was written as), in file order. Tables are walked
//! (`[a.b]`, dotted keys, inline tables); arrays of tables give their items by index
//! (`layers.0.name`); other arrays are one entry with their text (`["float8"]`). Strings are
//! unquoted; integers are written in decimal without `_` (`8_192` → `8192`, `0x10` → `16`).

use ::toml::Spanned;
use ::toml::de::{DeTable, DeValue};

use super::settings::Entry;
use fmperf_core::Error;

/// The TOML type a value was written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TomlType {
    /// A string (`"2"` is a string, not a number).
    String,
    /// An integer.
    Integer,
    /// A float.
    Float,
    /// `true` or `false`.
    Boolean,
    /// A date or time.
    Datetime,
    /// An array (not of tables), as text.
    Array,
    /// An empty table (`{}`), as text.
    Table,
}

impl TomlType {
    /// The TOML name of the type, for messages.
    pub fn name(self) -> &'static str {
        match self {
            TomlType::String => "a string",
            TomlType::Integer => "an integer",
            TomlType::Float => "a float",
            TomlType::Boolean => "a boolean",
            TomlType::Datetime => "a date",
            TomlType::Array => "an array",
            TomlType::Table => "a table",
        }
    }
}

/// One key of the file with its TOML type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    /// Path, text and line.
    pub entry: Entry,
    /// The type it was written as.
    pub kind: TomlType,
}

/// Line numbers (1-based) of byte offsets.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        Lines(std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect())
    }

    fn of(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset).max(1)
    }
}

/// Reads `text` into its keys with their types (see the module documentation).
pub fn read_typed(text: &str) -> Result<Vec<Value>, Error> {
    let lines = Lines::new(text);
    let doc = DeTable::parse(text).map_err(|e| {
        let line = e.span().map_or(1, |s| lines.of(s.start));
        let mut msg = e.message().trim().replace('\n', " ");
        // Name what the error is about (`duplicate key` → the key).
        if let Some(what) = e.span().and_then(|s| text.get(s)).filter(|w| !w.is_empty() && w.len() < 80) {
            msg = format!("{msg} (`{}`)", what.trim());
        }
        Error::Parse { message: format!("TOML line {line}: {msg}") }
    })?;
    let mut out: Vec<(usize, Value)> = Vec::new();
    table("", doc.get_ref(), &lines, &mut out, 0);
    fmperf_core::sort::sort_by_key(&mut out, |(at, _)| *at);
    Ok(out.into_iter().map(|(_, v)| v).collect())
}

/// Reads `text` into its keys (path, text, line) in file order.
pub fn read(text: &str) -> Result<Vec<Entry>, Error> {
    Ok(read_typed(text)?.into_iter().map(|v| v.entry).collect())
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") }
}

/// The entries of `t` under `prefix`, with the byte offset of each key (for file order). The
/// parser bounds nesting; `depth` bounds this walk as well.
fn table(prefix: &str, t: &DeTable<'_>, lines: &Lines, out: &mut Vec<(usize, Value)>, depth: usize) {
    for (k, v) in t.iter() {
        let path = join(prefix, k.get_ref());
        value(&path, k.span().start, v, lines, out, depth + 1);
    }
}

fn value(path: &str, at: usize, v: &Spanned<DeValue<'_>>, lines: &Lines, out: &mut Vec<(usize, Value)>, depth: usize) {
    let line = lines.of(at);
    let mut push = |text: String, kind: TomlType| {
        out.push((at, Value { entry: Entry { key: path.to_string(), value: text, line }, kind }));
    };
    match v.get_ref() {
        DeValue::Table(t) if !t.is_empty() && depth < 64 => table(path, t, lines, out, depth),
        DeValue::Array(a)
            if !a.is_empty() && depth < 64 && a.iter().all(|i| matches!(i.get_ref(), DeValue::Table(_))) =>
        {
            for (i, item) in a.iter().enumerate() {
                value(&join(path, &i.to_string()), item.span().start, item, lines, out, depth + 1);
            }
        }
        DeValue::String(s) => push(s.to_string(), TomlType::String),
        DeValue::Integer(n) => push(integer(n.as_str(), n.radix()), TomlType::Integer),
        DeValue::Float(f) => push(f.as_str().replace('_', ""), TomlType::Float),
        DeValue::Boolean(b) => push(b.to_string(), TomlType::Boolean),
        DeValue::Datetime(d) => push(d.to_string(), TomlType::Datetime),
        DeValue::Array(_) => push(render(v.get_ref(), 0), TomlType::Array),
        DeValue::Table(_) => push(render(v.get_ref(), 0), TomlType::Table),
    }
}

/// An integer's decimal text.
fn integer(text: &str, radix: u32) -> String {
    let t = text.replace('_', "");
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d.to_string()),
        None => (false, t.trim_start_matches('+').to_string()),
    };
    let digits = match digits.get(..2) {
        Some("0x" | "0o" | "0b") => digits.get(2..).unwrap_or("").to_string(),
        _ => digits,
    };
    match i128::from_str_radix(&digits, radix) {
        Ok(n) => (if neg { -n } else { n }).to_string(),
        Err(_) => text.to_string(),
    }
}

/// A value as compact TOML-like text (`["float8", "mx"]`, `{a = 1}`).
fn render(v: &DeValue<'_>, depth: usize) -> String {
    if depth > 64 {
        return "…".into();
    }
    match v {
        DeValue::String(s) => format!("\"{}\"", s.replace('"', "\\\"")),
        DeValue::Integer(n) => integer(n.as_str(), n.radix()),
        DeValue::Float(f) => f.as_str().to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(a) => {
            let items: Vec<String> = a.iter().map(|i| render(i.get_ref(), depth + 1)).collect();
            format!("[{}]", items.join(", "))
        }
        DeValue::Table(t) => {
            let items: Vec<String> =
                t.iter().map(|(k, v)| format!("{} = {}", k.get_ref(), render(v.get_ref(), depth + 1))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_keys_and_values() {
        let got = read(
            "# job\n[job]\ndump_folder = \"./out\" # here\n[model]\nname = 'llama3'\nflavor = \"8B\"\n\
             converters = [\n  \"float8\",\n]\n[training]\nseq_len = 8_192\nlr = 3e-4\ncompile = false\n\
             [[layers]]\nx = 1\n[[layers]]\nx = 0x10\n",
        )
        .unwrap();
        let kv: Vec<(&str, &str)> = got.iter().map(|e| (e.key.as_str(), e.value.as_str())).collect();
        assert_eq!(
            kv,
            [
                ("job.dump_folder", "./out"),
                ("model.name", "llama3"),
                ("model.flavor", "8B"),
                ("model.converters", "[\"float8\"]"),
                ("training.seq_len", "8192"),
                ("training.lr", "3e-4"),
                ("training.compile", "false"),
                ("layers.0.x", "1"),
                ("layers.1.x", "16"),
            ]
        );
        assert_eq!(got[4].line, 11);
        let typed = read_typed("a = \"2\"\nb = 2\n").unwrap();
        assert_eq!((typed[0].kind, typed[1].kind), (TomlType::String, TomlType::Integer));
    }

    #[test]
    fn malformed_toml_names_the_line() {
        for (text, needle) in [
            ("[training\nseq_len = 1\n", "line 1"),
            ("[training]\nseq_len = 1\nseq_len = 2\n", "line 3: duplicate key (`seq_len`)"),
            ("[a]\nx = 1\n[a]\ny = 2\n", "line 3"),
            ("[training]\nseq_len 8192\n", "line 2"),
            ("[training]\nname = llama\n", "line 2"),
            ("a = [1,\n2\n", "TOML line"),
            ("a = \"\"\"open\n", "TOML line"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
