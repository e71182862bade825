//! Training logs as pasted: the lines frameworks print while they train, read as written into
//! measured figures ([`fmperf_core::calibrate::Measured`]) that a calibration fits.
//!
//! One module per framework, each reading its own lines (named after the logging code that prints
//! them): [`megatron`] (Megatron-LM's `training_log`, Megatron-DeepSpeed's additions and its memory
//! report), [`nemo`] (NeMo's Lightning metrics `train_step_timing in s`), [`torchtitan`]
//! (`train.py`'s step line), [`maxtext`] (`completed step: …`), [`hf_trainer`] (Hugging Face
//! Trainer's final metrics and DeepSpeed's `ThroughputTimer` line), [`nanotron`] (its trainer's
//! `LogItem` line, numbers in its human format `1.52K`), [`nanogpt`] (nanoGPT's and nanochat's
//! step lines). `tests/data/logs/real/` holds lines each framework printed in public threads.
//!
//! Rules, the same for every framework:
//! * only lines that report a training step (or a run's final or peak figures) are read: an
//!   evaluation line, a validation or checkpoint-loading progress bar is not a step;
//! * a line a reader does not recognise is skipped (a paste carries other log lines); a line it
//!   recognises but whose value cannot be read is an error naming the line number and the text;
//! * lines of two frameworks in one paste are an error naming both lines;
//! * **steady state**: readings of steps 1 to [`WARMUP_STEPS`] are warm-up (compilation, NCCL
//!   set-up, the allocator growing) and left out when a later step is logged; each figure is the
//!   median of the remaining readings, with a note saying how many and which lines; a peak-memory
//!   figure is a maximum since the start, so the largest reading is kept, warm-up included;
//! * units as the framework prints them, converted to fmperf's (ms → s, GiB/MiB → GB = 1e9 B,
//!   percent → fraction), with the figure's kind (per device or in all) as the framework
//!   computes it.
//!
//! Text in, figures out, no I/O: the CLI (`fmperf calibrate --log FILE`) and the page call it.

pub mod hf_trainer;
pub mod maxtext;
pub mod megatron;
pub mod nanogpt;
pub mod nanotron;
pub mod nemo;
pub mod torchtitan;

use fmperf_core::Error;
use fmperf_core::calibrate::{Figure, Measured};
use fmperf_core::extended::efficiency::median;
use fmperf_core::vocab::{Note, NoteList};

/// Steps counted as warm-up.
pub const WARMUP_STEPS: u64 = 10;

/// Bytes in a GiB over bytes in a GB.
pub const GIB_IN_GB: f64 = 1.073_741_824;

/// Bytes in a MiB over bytes in a GB.
pub const MIB_IN_GB: f64 = 1.048_576e-3;

/// What one recognised line says.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// The step (iteration) it reports, when the line names one.
    pub step: Option<u64>,
    /// Figures in fmperf's units.
    pub figures: Vec<(Figure, f64)>,
    /// What the reader assumed of this kind of line (said once per paste), e.g. that a progress
    /// bar's rate is a moving average, or which printed figure it left out and why.
    pub note: Option<&'static str>,
}

/// A framework's line reader: `None` when the line is not one of its lines, an error text when it
/// is but a value cannot be read.
type LineReader = fn(&str) -> Option<Result<Reading, String>>;

/// The readers, tried in this order (the first to recognise a line reads it).
const READERS: [(&str, LineReader); 9] = [
    ("Megatron-LM", megatron::read_line),
    ("NeMo", nemo::read_line),
    ("torchtitan", torchtitan::read_line),
    ("MaxText", maxtext::read_line),
    ("Hugging Face Trainer", hf_trainer::read_trainer_line),
    ("DeepSpeed", hf_trainer::read_deepspeed_line),
    ("nanotron", nanotron::read_line),
    ("nanoGPT", nanogpt::read_nanogpt_line),
    ("nanochat", nanogpt::read_nanochat_line),
];

/// The logs read, in words (for errors and help texts).
pub const FRAMEWORKS: &str = "Megatron-LM, NeMo (its text logger or Lightning progress bar), torchtitan, MaxText, \
                              Hugging Face Trainer, DeepSpeed, nanotron, nanoGPT, nanochat";

/// The figures of a pasted log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogFigures {
    /// The framework whose lines were read.
    pub framework: &'static str,
    /// One figure of each kind: the median over the steady-state readings.
    pub measured: Vec<Measured>,
    /// Recognised lines, and how many were left out as warm-up.
    pub lines_read: usize,
    /// Readings left out as warm-up.
    pub warmup_skipped: usize,
    /// What was assumed, in words.
    pub notes: Vec<Note>,
}

/// Reads a pasted log (any number of lines; other lines are skipped).
pub fn read_log(text: &str) -> Result<LogFigures, Error> {
    let mut framework: Option<(&'static str, usize)> = None;
    let mut readings: Vec<(usize, Reading)> = Vec::new();
    let mut line_notes: Vec<&'static str> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        // A progress bar redrawn in place (`\r`) leaves its updates on one line of a log file:
        // what a terminal shows is the last one.
        let shown = raw.rsplit('\r').find(|s| !s.trim().is_empty()).unwrap_or(raw);
        let line = strip_ansi(shown);
        for (name, reader) in READERS {
            let Some(r) = reader(&line) else { continue };
            let r = r.map_err(|why| Error::invalid(format!("log line {n}"), shorten(line.trim()), why))?;
            match framework {
                Some((f, first)) if f != name => {
                    return Err(Error::invalid(
                        format!("log line {n}"),
                        shorten(line.trim()),
                        format!("is a {name} line, but line {first} is {f}'s: paste the lines of one run"),
                    ));
                }
                None => framework = Some((name, n)),
                _ => {}
            }
            if let Some(note) = r.note
                && !line_notes.contains(&note)
            {
                line_notes.push(note);
            }
            if !r.figures.is_empty() {
                readings.push((n, r));
            }
            break;
        }
    }
    let Some((framework, _)) = framework else {
        return Err(Error::invalid(
            "log",
            shorten(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("(empty)")),
            format!("has no line of a training log fmperf reads ({})", FRAMEWORKS),
        ));
    };
    if readings.is_empty() {
        return Err(Error::invalid("log", framework, "its lines carry no speed or memory figure"));
    }
    let lines_read = readings.len();
    let last_step = readings.iter().filter_map(|(_, r)| r.step).max();
    let steady: Vec<&(usize, Reading)> = readings
        .iter()
        .filter(|(_, r)| match (r.step, last_step) {
            (Some(s), Some(last)) => s > WARMUP_STEPS || last <= WARMUP_STEPS,
            _ => true,
        })
        .collect();
    let warmup_skipped = lines_read - steady.len();
    let mut notes: Vec<Note> = line_notes.iter().map(|n| Note::reading(n.to_string())).collect();
    if warmup_skipped > 0 {
        notes.reading(format!("{warmup_skipped} reading(s) of steps 1–{WARMUP_STEPS} left out as warm-up"));
    } else if last_step.is_some_and(|s| s <= WARMUP_STEPS) {
        notes.reading(format!(
            "every reading is of steps 1–{WARMUP_STEPS} (warm-up): a figure of later steps would be steadier"
        ));
    }
    let mut kinds: Vec<Figure> = Vec::new();
    for (_, r) in &readings {
        for (f, _) in &r.figures {
            if !kinds.contains(f) {
                kinds.push(*f);
            }
        }
    }
    let mut measured = Vec::new();
    for kind in kinds {
        // A peak-memory figure is a maximum since the start: the largest of every reading, warm-up
        // included; a time figure is the median of the steady-state readings.
        let is_memory = matches!(kind, Figure::Memory(_));
        let pool: Vec<&(usize, Reading)> =
            if is_memory { readings.iter().collect() } else { steady.iter().copied().collect() };
        let mut values: Vec<f64> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        for (n, r) in pool {
            for (f, v) in &r.figures {
                if *f == kind {
                    values.push(*v);
                    lines.push(*n);
                }
            }
        }
        let count = values.len();
        let value = if is_memory { values.iter().copied().reduce(f64::max) } else { median(&mut values) };
        let Some(value) = value else { continue };
        let source = match lines.as_slice() {
            [one] => format!("{framework} log line {one}"),
            _ if is_memory => {
                format!("largest of {count} readings of a {framework} log (lines {}–{})", lines[0], lines[count - 1])
            }
            _ => format!(
                "median of {count} steady-state readings of a {framework} log (lines {}–{})",
                lines[0],
                lines[count - 1]
            ),
        };
        measured.push(Measured::new(kind, value, source, &format!("log: {}", kind.key()))?);
    }
    Ok(LogFigures { framework, measured, lines_read, warmup_skipped, notes })
}

/// The line without terminal colour codes (`ESC [ … m`), which torchtitan and others print.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= 120 { s.to_string() } else { format!("{}…", s.chars().take(120).collect::<String>()) }
}

/// The text after `key` in `line` up to the next `|` or `,` (or the end), trimmed; `None` when the
/// line does not contain `key`.
pub fn value_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)? + key.len();
    let rest = &line[at..];
    let end = rest.find(['|', ',']).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The whitespace-separated word after `key` (`None` without `key`), for values that may hold a
/// thousands comma (`tps: 10,007`).
pub fn word_after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)? + key.len();
    Some(line[at..].split_whitespace().next().unwrap_or(""))
}

/// The first whitespace-separated word of `text`.
pub fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

/// A number as logs print it: digits with optional thousands separators (`6,543`), a decimal
/// point, an exponent; `human` also reads nanotron's suffixes (`1.52K`, `3.1M`, `2G`, `1T`).
pub fn number(text: &str, what: &str, human: bool) -> Result<f64, String> {
    let t = text.trim().trim_end_matches('%');
    let (body, scale) = match t.chars().last() {
        Some('K') if human => (&t[..t.len() - 1], 1e3),
        Some('M') if human => (&t[..t.len() - 1], 1e6),
        Some('G') if human => (&t[..t.len() - 1], 1e9),
        Some('T') if human => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    let clean: String = body.chars().filter(|c| *c != ',').collect();
    match clean.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
        _ => Err(format!("{what} `{text}` is not a number")),
    }
}

/// The number after `key` (the first word of its value), or `None` when the line lacks `key`.
pub fn number_after(line: &str, key: &str, what: &str, human: bool) -> Option<Result<f64, String>> {
    value_after(line, key).map(|v| number(first_word(v), what, human))
}

/// The step after `key` (`iteration      100/  500000` → 100).
pub fn step_after(line: &str, key: &str) -> Option<Result<u64, String>> {
    let v = value_after(line, key)?;
    let digits: String = v.trim().chars().take_while(|c| c.is_ascii_digit()).collect();
    Some(digits.parse::<u64>().map_err(|_| format!("step `{v}` is not a whole number")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_printed() {
        assert_eq!(number("6,543", "x", false), Ok(6543.0));
        assert_eq!(number("1.52K", "x", true), Ok(1520.0));
        assert_eq!(number("30.65%", "x", false), Ok(30.65));
        assert!(number("1.52K", "x", false).is_err());
        assert!(number("nan", "x", false).is_err());
        assert_eq!(strip_ansi("\u{1b}[31mstep: \u{1b}[39m 10"), "step:  10");
        assert_eq!(step_after("iteration      100/  500000 |", "iteration"), Some(Ok(100)));
    }
}
