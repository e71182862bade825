//! The project's module size, read from the sources: no `.rs` file of a crate (`crates/*/src`) or
//! of the page (`src/`) holds more than [`MAX_CODE_LINES`] lines of code outside its unit tests
//! (a `#[cfg(test)]` module), so that a module stays one concept a reader can hold. A file still
//! over is named in [`STILL_OVER`] with why; the list only shrinks (a file under the limit again
//! must be struck from it).

use std::path::{Path, PathBuf};

/// Most lines of code a module holds outside its `#[cfg(test)]` modules (the project's standard:
/// modules of 100–700 lines, one concept per file).
const MAX_CODE_LINES: usize = 700;

/// Files still over the limit (path from the repository's root), each with why. Empty since
/// issue 33's splits (session 30: the launch readers, the explorer's keys, the catalog editor and
/// core's seven largest modules); a file that must stay over is added here with its reason.
const STILL_OVER: &[(&str, &str)] = &[];

/// The lines of `text` outside its top-level `#[cfg(test)]` modules (the attribute, then
/// `mod name {` up to the `}` that closes it at the start of a line).
fn code_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let (mut count, mut i) = (0, 0);
    while i < lines.len() {
        let opens_tests = lines[i].trim_end() == "#[cfg(test)]"
            && lines.get(i + 1).is_some_and(|l| {
                // `mod tests {`, `pub mod tests {`, `pub(super) mod tests {`.
                let l = l.trim_end();
                let after_pub = l.strip_prefix("pub").map_or(l, |rest| match rest.strip_prefix('(') {
                    Some(scoped) => scoped.split_once(") ").map_or(rest, |(_, r)| r),
                    None => rest.trim_start(),
                });
                after_pub.starts_with("mod ") && l.ends_with('{')
            });
        if opens_tests {
            i += 2;
            while i < lines.len() && lines[i].trim_end() != "}" {
                i += 1;
            }
            i += 1;
        } else {
            count += 1;
            i += 1;
        }
    }
    count
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The files of unit tests that `path`'s text declares (`#[cfg(test)]` then `mod name;`): `name.rs`
/// or `name/mod.rs` beside a `mod.rs`, `lib.rs` or `main.rs`, else in the folder named for the file.
fn test_files(path: &Path, text: &str) -> Vec<PathBuf> {
    let lines: Vec<&str> = text.lines().collect();
    let stem = path.file_stem().unwrap_or_default();
    let dir = match path.parent() {
        Some(d) if ["mod", "lib", "main"].iter().any(|s| stem == *s) => d.to_path_buf(),
        Some(d) => d.join(stem),
        None => PathBuf::new(),
    };
    lines
        .windows(2)
        .filter(|w| w[0].trim() == "#[cfg(test)]")
        .filter_map(|w| w[1].trim().strip_prefix("mod ")?.strip_suffix(';').map(str::to_string))
        .flat_map(|name| [dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")])
        .collect()
}

/// Every `.rs` file of `crates/*/src` and `src/` under `root` but unit-test files, as paths from
/// `root` with `/`, and its text.
fn sources(root: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for c in std::fs::read_dir(root.join("crates")).expect("crates/").flatten() {
        rust_files(&c.path().join("src"), &mut files);
    }
    let texts: Vec<(PathBuf, String)> =
        files.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect();
    let tests: Vec<PathBuf> = texts.iter().flat_map(|(p, t)| test_files(p, t)).collect();
    let mut named: Vec<(String, String)> = texts
        .into_iter()
        .filter(|(p, _)| !tests.contains(p))
        .map(|(p, t)| (p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"), t))
        .collect();
    named.sort();
    named
}

/// The problems of `sizes` (path, lines of code) against `allowed`: files over the limit that the
/// list does not name, and names on the list whose file is no longer over (or gone).
fn problems(sizes: &[(String, usize)], allowed: &[(&str, &str)]) -> Vec<String> {
    let mut out: Vec<String> = sizes
        .iter()
        .filter(|(p, n)| *n > MAX_CODE_LINES && !allowed.iter().any(|(a, _)| a == p))
        .map(|(p, n)| {
            format!(
                "{p}: {n} lines of code outside its unit tests, over {MAX_CODE_LINES}: split it by concept \
                 (one module per concept, named for what it holds)"
            )
        })
        .collect();
    for (a, _) in allowed {
        match sizes.iter().find(|(p, _)| p == a) {
            Some((_, n)) if *n > MAX_CODE_LINES => {}
            Some((_, n)) => out.push(format!("{a}: {n} lines now: strike it from STILL_OVER")),
            None => out.push(format!("{a}: no such file: strike it from STILL_OVER")),
        }
    }
    out
}

#[test]
fn no_module_is_over_700_lines_of_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sizes: Vec<(String, usize)> =
        sources(&root).into_iter().map(|(name, text)| (name, code_lines(&text))).collect();
    assert!(sizes.len() > 200, "read {} files", sizes.len());
    assert!(sizes.iter().any(|(p, _)| p == "src/main.rs") && sizes.iter().any(|(p, _)| p == "crates/core/src/lib.rs"));
    let found = problems(&sizes, STILL_OVER);
    assert!(found.is_empty(), "modules over {MAX_CODE_LINES} lines of code:\n{}", found.join("\n"));
}

#[test]
fn the_count_leaves_out_unit_tests_and_the_check_sees_a_big_file() {
    // 3 lines of code, a test module of 5 lines, then 2 more lines of code: 5.
    let text = "use a;\n\nfn f() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\nfn g() {}\n// end\n";
    assert_eq!(code_lines(text), 5);
    // Whatever its visibility.
    assert_eq!(code_lines("fn f() {}\n#[cfg(test)]\npub(super) mod tests {\n    fn t() {}\n}\n"), 1);
    assert_eq!(code_lines("#[cfg(test)]\npub mod tests {\n}\n"), 0);
    // A `#[cfg(test)]` item that is not a module counts (it is code of the crate's build for tests).
    assert_eq!(code_lines("#[cfg(test)]\nfn helper() {}\n"), 2);
    let big = vec![("crates/x/src/big.rs".to_string(), 701), ("crates/x/src/small.rs".to_string(), 700)];
    let found = problems(&big, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("crates/x/src/big.rs: 701 lines"), "{found:?}");
    assert!(problems(&big, &[("crates/x/src/big.rs", "why")]).is_empty());
    // A file of unit tests declared by its parent is left out.
    let tests = test_files(Path::new("crates/x/src/shell/mod.rs"), "#[cfg(test)]\nmod tests;\n");
    assert_eq!(tests[0], Path::new("crates/x/src/shell/tests.rs"));
    let tests = test_files(Path::new("crates/x/src/dates.rs"), "#[cfg(test)]\nmod unit;\n");
    assert_eq!(tests[0], Path::new("crates/x/src/dates/unit.rs"));
    let stale = problems(&big, &[("crates/x/src/big.rs", "why"), ("crates/x/src/small.rs", "why")]);
    assert_eq!(stale, ["crates/x/src/small.rs: 700 lines now: strike it from STILL_OVER"]);
}
