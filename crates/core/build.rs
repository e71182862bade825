//! Build script: copies the built-in JSON data (`data/*.json`, `src/presets/studies.json`) into
//! `OUT_DIR` without the whitespace between tokens, and the crate compiles those copies in
//! (`include_str!(concat!(env!("OUT_DIR"), "/…"))`). The repository's files stay pretty-printed
//! for people; the program carries ~94 KB less (issue 13 §2: the web page's download).
//!
//! Only whitespace outside strings is dropped: every token — string, number, literal, bracket — is
//! copied byte for byte, so parsing the copy gives exactly what parsing the source gave.

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

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    for file in FILES {
        println!("cargo::rerun-if-changed={file}");
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let name = Path::new(file).file_name().expect("a file name");
        std::fs::write(Path::new(&out).join(name), compact(&text)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

/// `text` without JSON's insignificant whitespace (space, tab, CR, LF outside strings).
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if !matches!(c, ' ' | '\t' | '\r' | '\n') {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}
