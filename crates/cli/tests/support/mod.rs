//! What every CLI contract test does with the built `fmperf` binary: run it, read stdout as text or
//! one JSON document, check the usage-error contract (exit 2, one line on stderr, nothing on
//! stdout), and write input files to a per-test-binary temporary folder.
//!
//! Arguments are anything that yields strings: a slice (`&["search", "--gpus", "64"]`) or the words
//! of a line (`line.split_whitespace()`).
#![allow(dead_code)] // each test binary uses its own subset

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The arguments as owned strings, for running and for messages.
fn owned<I, S>(args: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    args.into_iter().map(|a| a.as_ref().to_string()).collect()
}

/// Runs `fmperf` with these arguments.
pub fn fmperf<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    Command::new(env!("CARGO_BIN_EXE_fmperf")).args(owned(args)).output().expect("the fmperf binary runs")
}

/// Runs a command that must succeed; returns its standard output.
pub fn stdout<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let args = owned(args);
    let out = fmperf(&args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: stderr {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs a command that must succeed and print one JSON document.
pub fn json<I, S>(args: I) -> Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    serde_json::from_str(&stdout(args)).expect("stdout is one JSON document")
}

/// Runs a command that must fail as a usage error: exit code 2, exactly one line on stderr and
/// nothing on stdout. Returns that line (with its newline).
pub fn usage_error<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let args = owned(args);
    let out = fmperf(&args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line on stderr, got {err:?}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout, got {}", String::from_utf8_lossy(&out.stdout));
    err
}

/// Writes `text` to `name` in this test binary's temporary folder and returns the path.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fmperf-{}-{}", env!("CARGO_CRATE_NAME"), std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temporary folder can be made");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("the temporary file can be written");
    p
}

/// A path as a command-line argument (test paths are UTF-8).
pub fn arg(p: &std::path::Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}
