//! The README's command-line examples run: every `$ fmperf …` line of its `console` blocks and every
//! `fmperf …` line of its `sh` blocks is run from the repository root with the built binary and must
//! exit as the README shows (0, or 2 where it shows the one-line `fmperf: …` error). For
//! reference-mode examples (bit-exact, so their output cannot drift) every output line the README
//! shows in full (without `…`) must appear in the real output (or be a piece of a real line: long
//! JSON is wrapped); extended-mode numbers may move when
//! the physics is refined, so for them only the command itself is checked.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One example: the arguments after `fmperf`, and the output lines the README shows under it.
#[derive(Debug)]
struct Example {
    line: usize,
    args: Vec<String>,
    shown: Vec<String>,
}

/// Splits a command line into words: whitespace-separated, with '…' and "…" quoting; stops at a
/// `#` comment or an output redirection (`>`), which the test does not perform.
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for ch in cmd.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                started = true;
            }
            (None, '#' | '>') if !started => break,
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            (None, c) => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out
}

/// The examples of the README, in order.
fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut block: Option<String> = None;
    let mut lines = readme.lines().enumerate().peekable();
    while let Some((n, raw)) = lines.next() {
        let line = raw.trim_start();
        if let Some(lang) = line.strip_prefix("```") {
            block = if block.is_some() { None } else { Some(lang.trim().to_string()) };
            continue;
        }
        let Some(lang) = block.as_deref() else { continue };
        let command = match lang {
            "console" => line.strip_prefix("$ fmperf "),
            "sh" => line.strip_prefix("fmperf "),
            _ => None,
        };
        match command {
            Some(c) => {
                let mut text = c.to_string();
                while text.ends_with('\\') {
                    text.pop();
                    match lines.next() {
                        Some((_, more)) => text.push_str(more),
                        None => break,
                    }
                }
                out.push(Example { line: n + 1, args: words(&text), shown: Vec::new() });
            }
            None if lang == "console" && !line.starts_with('$') => {
                if let Some(e) = out.last_mut() {
                    e.shown.push(line.trim_end().to_string());
                }
            }
            None => {}
        }
    }
    out
}

/// The decimal numbers of a line (`187.4685`, `-0.5`), as written.
fn decimals(line: &str) -> Vec<String> {
    let c: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let boundary = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_' || c[i - 1] == '.');
        if c[i].is_ascii_digit() && boundary {
            let start = i;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            let n: String = c[start..i].iter().collect::<String>().trim_end_matches('.').to_string();
            let followed_by_word = i < c.len() && (c[i].is_alphabetic() || c[i] == '_');
            if n.contains('.') && !followed_by_word {
                out.push(n);
            }
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn every_readme_example_runs_as_shown() {
    let root = repo();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let all = examples(&readme);
    assert!(all.len() >= 15, "found {} examples", all.len());
    let mut commands: Vec<&str> = all.iter().filter_map(|e| e.args.first().map(String::as_str)).collect();
    commands.sort();
    commands.dedup();
    for c in ["bench", "catalog", "check", "models", "search", "show", "sweep", "validate"] {
        assert!(commands.contains(&c), "the README has no example of `fmperf {c}`: {commands:?}");
    }
    for e in &all {
        let out = Command::new(env!("CARGO_BIN_EXE_fmperf")).args(&e.args).current_dir(&root).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let fails = e.shown.iter().any(|l| l.starts_with("fmperf: ") && !l.starts_with("fmperf: note:"));
        let expected = if fails { 2 } else { 0 };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "README line {}: fmperf {}\nstderr: {stderr}",
            e.line,
            e.args.join(" ")
        );
        let reference = e.args.windows(2).any(|w| w[0] == "--mode" && w[1] == "reference") || e.args[0] == "models";
        if reference {
            for number in e.shown.iter().flat_map(|l| decimals(l)) {
                assert!(
                    stdout.contains(&number),
                    "README line {}: fmperf {}\nshows {number}, which the output does not have:\n{stdout}",
                    e.line,
                    e.args.join(" ")
                );
            }
        }
    }
}

#[test]
fn the_example_reader_understands_the_readme_syntax() {
    let text = "```console\n$ fmperf search --model a \\\n      --top 3\nrow 1\n…\n```\n\
                ```sh\nfmperf show x --format json > out.json   # edit\n```\n```text\nfmperf nope\n```\n";
    let e = examples(text);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].args, ["search", "--model", "a", "--top", "3"]);
    assert_eq!(e[0].shown, ["row 1", "…"]);
    assert_eq!(e[1].args, ["show", "x", "--format", "json"]);
    assert_eq!(words("a 'b c' \"d\" # e"), ["a", "b c", "d"]);
    assert_eq!(
        decimals("1  1d.dp8.tp4  187.4685  21.8490 98.10 (scale 8) x1.5 -0.5 §3.2."),
        ["187.4685", "21.8490", "98.10", "0.5", "3.2"]
    );
}

/// The rows of the README's command table (`| [`cmd`](#anchor) | what it answers |`): the command
/// and its answer, in order.
fn command_table(readme: &str) -> Vec<(String, String)> {
    let mut lines = readme.lines().skip_while(|l| !l.starts_with("| command | what it answers |")).skip(2);
    let mut out = Vec::new();
    while let Some(line) = lines.next().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let command = cells.first().and_then(|c| c.split('`').nth(1)).unwrap_or("").to_string();
        out.push((command, cells.get(1).copied().unwrap_or("").to_string()));
    }
    out
}

/// Why a row of the command table is a placeholder, if it is one: no command, no answer, or an
/// answer that is a stand-in (`…`, `TODO`, `TBD`, `placeholder`, `-`).
fn placeholder(command: &str, answer: &str) -> Option<&'static str> {
    let a = answer.to_ascii_lowercase();
    if command.is_empty() {
        Some("names no command")
    } else if a.len() < 12 || ["…", "...", "todo", "tbd", "placeholder", "xxx"].iter().any(|p| a.contains(p)) {
        Some("says nothing yet")
    } else {
        None
    }
}

/// The commands `fmperf help` lists (besides `help`).
fn help_commands() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_fmperf")).arg("help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let listed = text.lines().skip_while(|l| !l.starts_with("COMMANDS:")).skip(1).take_while(|l| !l.trim().is_empty());
    listed.filter_map(|l| l.split_whitespace().next()).filter(|c| *c != "help").map(str::to_string).collect()
}

#[test]
fn the_readme_command_table_lists_every_command_and_no_placeholder() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let rows = command_table(&readme);
    for (command, answer) in &rows {
        assert_eq!(placeholder(command, answer), None, "README command table row `{command}`: {answer:?}");
        let section = format!("\n### fmperf {command}\n");
        assert!(readme.contains(&section), "the README has no section `### fmperf {command}` for its table row");
    }
    let mut table: Vec<String> = rows.into_iter().map(|(c, _)| c).collect();
    let mut help = help_commands();
    assert!(help.len() >= 9, "fmperf help lists {help:?}");
    table.sort();
    help.sort();
    assert_eq!(table, help, "the README's command table and `fmperf help` list different commands");
}

#[test]
fn the_command_table_reader_finds_rows_and_placeholders() {
    let text = "| command | what it answers |\n|---|---|\n| [`search`](#fmperf-search) | the fastest configurations |\n\
                | [`sweep`](#x) | … |\n| | TODO |\n\nafter";
    let rows = command_table(text);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0], ("search".to_string(), "the fastest configurations".to_string()));
    assert_eq!(placeholder(&rows[0].0, &rows[0].1), None);
    assert_eq!(placeholder(&rows[1].0, &rows[1].1), Some("says nothing yet"));
    assert_eq!(placeholder(&rows[2].0, &rows[2].1), Some("names no command"));
}
