//! fmperf-launch's invariants, read from the sources: text in, `Launch` out (no file, environment,
//! process, network, thread or clock), and a leaf above core (core and the first view never depend
//! on it, so they carry neither the readers nor their grammar crates).

use std::path::{Path, PathBuf};

/// What the readers must not touch, with why.
const FORBIDDEN: [(&str, &str); 7] = [
    ("std::fs", "files are read by the CLI or the page, not the readers"),
    ("std::env", "a script's environment is what the script says, never this process's"),
    ("std::process", "a launch script is read, never run"),
    ("std::net", "no network"),
    ("std::thread", "the page runs it on one thread"),
    ("std::time", "deterministic: no clock"),
    ("Instant::now", "deterministic: no clock"),
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The problems of `text` (a source file's code, comments dropped).
fn problems(name: &str, text: &str) -> Vec<String> {
    let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    FORBIDDEN
        .iter()
        .filter(|(word, _)| code.contains(word))
        .map(|(word, why)| format!("{name}: uses {word} ({why})"))
        .collect()
}

#[test]
fn readers_do_no_io_and_core_does_not_depend_on_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    assert!(files.len() > 20, "read {} files", files.len());
    let mut found: Vec<String> = Vec::new();
    for f in &files {
        let name = f.strip_prefix(root).unwrap().to_string_lossy().to_string();
        found.extend(problems(&name, &std::fs::read_to_string(f).unwrap()));
    }
    for manifest in ["../core/Cargo.toml", "../first-view/Cargo.toml"] {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        if text.lines().any(|l| l.trim_start().starts_with("fmperf-launch")) {
            found.push(format!("{manifest} depends on fmperf-launch: the readers stay out of core and the first view"));
        }
    }
    assert!(found.is_empty(), "fmperf-launch breaks its invariants:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_a_forbidden_use() {
    assert_eq!(problems("a.rs", "fn f() { let _ = std::fs::read(\"x\"); }").len(), 1);
    assert_eq!(problems("a.rs", "use std::process::Command;").len(), 1);
    assert!(problems("a.rs", "// std::fs is not used here\nfn f() {}").is_empty());
}
