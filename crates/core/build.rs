//! Build script: copies the built-in JSON data (`data/*.json`, `src/presets/studies.json`) into
//! `OUT_DIR` without the whitespace between tokens, and the crate compiles those copies in
//! (`include_str!(concat!(env!("OUT_DIR"), "/…"))`). The repository's files stay pretty-printed
//! for people; the program carries ~94 KB less (issue 13 §2: the web page's download).
//!
//! Only whitespace outside strings is dropped: every token — string, number, literal, bracket — is
//! copied byte for byte, so parsing the copy gives exactly what parsing the source gave. Besides,
//! a few files lose top-level members written for people that the program never reads
//! ([`UNREAD`]: field descriptions, caveats, a catalog's citation list and conventions; the
//! repository's files keep them): test `compiled_in_copies_are_the_sources_less_their_unread_members`.

use std::path::Path;

/// The files compiled in, relative to the crate's directory.
const FILES: &[&str] = &[
    "data/models.json",
    "data/models-moe.json",
    "data/measured-moe-runs.json",
    "data/hardware-catalog.json",
    "data/system-modelling.json",
    "data/measured-training-runs.json",
    "data/measured-memory-runs.json",
    "data/measured-layout-sweeps.json",
    "data/holdout-shipped.json",
    "data/run-cost-examples.json",
    "src/presets/studies.json",
];

/// Top-level members of the files compiled in that no code reads (documentation for people):
/// `(file, keys)`. The readers: `validate::schema::parse_measured_runs` and `validate::moe_fit`
/// read a runs file's `schema_version` and `rows`; `catalog::load_systems` reads the hardware
/// catalog's `accelerators` and the modelling file's `presets` and `accelerators` (its
/// `collective_latency` is read by a test, from the repository's file);
/// `validate::layout_sweeps::sweep_rows_json` reads a sweep file's `groups`.
const UNREAD: &[(&str, &[&str])] = &[
    ("data/measured-training-runs.json", &["fields", "caveats", "generated", "sources"]),
    ("data/measured-memory-runs.json", &["fields", "caveats", "generated", "sources"]),
    ("data/measured-moe-runs.json", &["fields", "caveats", "generated", "sources"]),
    ("data/hardware-catalog.json", &["generated_by", "units", "conventions", "sources", "systems", "emani_table1"]),
    ("data/measured-layout-sweeps.json", &["schema", "generated", "caveats"]),
    ("data/system-modelling.json", &["about"]),
];

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    for file in FILES {
        println!("cargo::rerun-if-changed={file}");
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let name = Path::new(file).file_name().expect("a file name");
        let mut text = compact(&text);
        if let Some((_, keys)) = UNREAD.iter().find(|(f, _)| f == file) {
            text = without_members(&text, keys).unwrap_or_else(|| panic!("{file}: not an object of members"));
        }
        std::fs::write(Path::new(&out).join(name), text).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

/// The compact JSON object `text` without its top-level members named in `keys` (the others
/// copied byte for byte, in order); `None` if `text` is not an object.
fn without_members(text: &str, keys: &[&str]) -> Option<String> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    // Split the members at the commas outside strings and nested values.
    let (mut members, mut start, mut depth) = (Vec::new(), 0, 0i32);
    let mut strings = Strings::default();
    for (i, c) in inner.char_indices() {
        if !strings.outside(c) {
            continue;
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                members.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner.is_empty() {
        members.push(&inner[start..]);
    }
    let kept: Vec<&str> =
        members.into_iter().filter(|m| !keys.iter().any(|k| m.starts_with(&format!("\"{k}\":")))).collect();
    Some(format!("{{{}}}", kept.join(",")))
}

/// `text` without JSON's insignificant whitespace (space, tab, CR, LF outside strings).
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut strings = Strings::default();
    for c in text.chars() {
        if !strings.outside(c) || !matches!(c, ' ' | '\t' | '\r' | '\n') {
            out.push(c);
        }
    }
    out
}

/// Where a scan of JSON text stands: inside a string or not (and after a backslash in one).
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Reads the next character `c`: whether it stands outside every string (an opening quote
    /// does, the characters of a string up to its closing quote do not).
    fn outside(&mut self, c: char) -> bool {
        if self.inside {
            if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                self.inside = false;
            }
            false
        } else {
            self.inside = c == '"';
            true
        }
    }
}
