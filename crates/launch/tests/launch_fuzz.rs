//! Property test of every reader (issue 30): no launch file, however mangled, makes a reader
//! panic, hang or grow without bound. Each case takes a file of the real corpus (`data/real/`) or
//! the examples, mutates it the ways careless edits and hostile files do (lines dropped,
//! duplicated or swapped, digits changed, a value replaced by junk, shell and YAML syntax
//! injected: `${`, `$((`, `*alias`, `&anchor`, unclosed quotes, doubling variables), and runs
//! what `fmperf estimate --from FILE --system ID` runs. The result may be an estimate or an error;
//! it must come back, and within [`CASE_SECONDS`].
//!
//! `FMPERF_FUZZ_CASES` sets the number of cases (default 5,000, about 5 s in the host profile on
//! this repository's 2-core CI machine); `FMPERF_FUZZ_SEED` the seed. The run prints its case
//! count, time and how many cases ended in an estimate.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fmperf_launch::{Overrides, Source, estimate_files};

/// The longest one case may take [s] (the readers' caps bound every expansion far below this).
const CASE_SECONDS: u64 = 5;

/// SplitMix64: small, fast, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The corpus: every real file and every example launch file, with its name (the readers detect
/// the format from it).
fn corpus() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [root.join("tests/data/real"), root.join("../../examples/launch")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if name.ends_with(".md") || name == "manifest.json" || !p.is_file() {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&p) {
                files.push((name, text));
            }
        }
    }
    assert!(files.len() > 50, "the corpus was not found ({} files)", files.len());
    files
}

/// Text that careless edits and hostile files put into launch files.
const JUNK: &[&str] = &[
    "${",
    "${A:-${B:-${C",
    "$((1<<62))",
    "$((2**64))",
    "$(( 1 / 0 ))",
    "\"",
    "'",
    "\\",
    "`",
    "*a",
    "&a [1, 2]",
    "<<: *a",
    "{{",
    "}}",
    "[[",
    "]]",
    "= = =",
    "--tensor-model-parallel-size",
    "--num-layers -1",
    "--hidden-size 4097",
    "--global-batch-size 0",
    "--seq-length 18446744073709551616",
    "tensor_parallel_degree = \"2\"",
    "data_parallel_shard_degree = -1",
    "ici_fsdp_parallelism: -1",
    "A=\"$A $A\"",
    "for i in 1 2 3; do A=\"$A$A\"; done",
    "f() { f; }; f",
    "${oc.env:HOME}",
    "${..x}",
    "\t",
    "\u{0}",
    "\u{feff}",
    "1e309",
    "NaN",
    "-0",
    "0x10",
    "1_000_000_000_000_000_000_000",
];

/// One mutation of `text`.
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    for _ in 0..=rng.below(4) {
        let i = rng.below(lines.len());
        match rng.below(9) {
            0 => {
                lines.remove(i);
                if lines.is_empty() {
                    lines.push(String::new());
                }
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            3 => lines.insert(i, rng.pick(JUNK).to_string()),
            4 => {
                // A digit changed, or a number made huge, zero or negative.
                let l = &mut lines[i];
                if let Some(at) = l.find(|c: char| c.is_ascii_digit()) {
                    let with = *rng.pick(&["0", "-1", "99999999999999999999", "7", "1.5", ""]);
                    l.replace_range(at..at + 1, with);
                }
            }
            5 => {
                // Junk inside a line.
                let l = &mut lines[i];
                let at = (0..=l.len()).filter(|k| l.is_char_boundary(*k)).nth(rng.below(l.len() + 1)).unwrap_or(0);
                let junk: &str = JUNK[rng.below(JUNK.len())];
                l.insert_str(at, junk);
            }
            6 => {
                // Cut the line (an unterminated quote, bracket or continuation).
                let l = &mut lines[i];
                let keep = (0..=l.len()).filter(|k| l.is_char_boundary(*k)).nth(rng.below(l.len() + 1)).unwrap_or(0);
                l.truncate(keep);
            }
            7 => {
                // Indentation changed (YAML).
                let l = &mut lines[i];
                if rng.below(2) == 0 {
                    l.insert_str(0, "  ");
                } else {
                    *l = l.trim_start().to_string();
                }
            }
            _ => {
                // The file cut short.
                lines.truncate(i.max(1));
            }
        }
    }
    lines.join("\n")
}

#[test]
fn no_mangled_launch_file_makes_a_reader_panic_or_hang() {
    let cases: usize = std::env::var("FMPERF_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000);
    let seed: u64 = std::env::var("FMPERF_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let files = corpus();
    let mut rng = Rng(seed);
    let overrides = Overrides { system: Some("nvidia_h100_sxm5_80gb".into()), ..Overrides::default() };
    let start = Instant::now();
    let mut estimated = 0;
    for case in 0..cases {
        let (name, text) = rng.pick(&files);
        let mangled = mutate(&mut rng, text);
        let t = Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            estimate_files(&[Source { name: Some(name.as_str()), text: &mangled }], &[], &overrides).is_ok()
        });
        let took = t.elapsed();
        match outcome {
            Ok(ok) => estimated += usize::from(ok),
            Err(_) => panic!("case {case} (seed {seed}): {name} mangled made a reader panic:\n{mangled}"),
        }
        assert!(
            took < Duration::from_secs(CASE_SECONDS),
            "case {case} (seed {seed}): {name} mangled took {took:?}:\n{mangled}"
        );
    }
    println!(
        "{cases} mangled launch files (seed {seed}) in {:.1} s: {estimated} estimated, the rest refused with an error",
        start.elapsed().as_secs_f64()
    );
    // The mutations are small: many files still read, so the readers past the first error are
    // exercised too.
    assert!(estimated * 20 > cases, "only {estimated} of {cases} mangled files were read");
}
