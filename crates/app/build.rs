//! Build script: the page's stylesheets that the modules carry (`style/explorer.css`,
//! `style/sensitivity.css`, emitted as `<style>` with their views) copied into `OUT_DIR` without
//! comments and without the whitespace CSS does not read; [`crate::style`](src/style.rs) compiles
//! the copies in. The repository's files stay commented for people.
//!
//! Rules (outside quoted strings, which are copied byte for byte): a comment becomes a space; a
//! run of whitespace becomes one space; a space next to `{`, `}`, `;` or `,` (where CSS reads
//! none) and at either end is dropped. Spaces elsewhere stay: `a :hover`, `and (`, `calc(a + b)`
//! read them.

use std::path::Path;

/// The stylesheets compiled in, relative to this crate's directory.
const FILES: &[&str] = &["../../style/explorer.css", "../../style/sensitivity.css"];

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    for file in FILES {
        println!("cargo::rerun-if-changed={file}");
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let name = Path::new(file).file_name().expect("a file name");
        std::fs::write(Path::new(&out).join(name), minify(&text)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

/// `css` without comments and unread whitespace (module documentation).
fn minify(css: &str) -> String {
    let chars: Vec<char> = css.chars().collect();
    let mut out = String::with_capacity(css.len());
    let mut space = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            let end = (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == '*' && chars[j + 1] == '/');
            i = end.map_or(chars.len(), |j| j + 2);
            space = true;
            continue;
        }
        if c.is_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        let tight = |x: char| matches!(x, '{' | '}' | ';' | ',');
        if space && !out.is_empty() && !tight(c) && !out.ends_with(tight) {
            out.push(' ');
        }
        space = false;
        if c == '"' || c == '\'' {
            // A quoted string, to its closing quote (a backslash escapes the next character).
            out.push(c);
            i += 1;
            while i < chars.len() {
                let s = chars[i];
                out.push(s);
                i += 1;
                if s == '\\' {
                    if let Some(&n) = chars.get(i) {
                        out.push(n);
                        i += 1;
                    }
                } else if s == c {
                    break;
                }
            }
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}
