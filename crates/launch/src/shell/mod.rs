//! The training command of a shell launch script, found the way bash would run the script, without
//! running anything: assignments (`export`/`local`/`declare`/`readonly` too), parameter expansion
//! with defaults (`${V:-d}`, `${V:=d}`, `: "${V:=d}"`), arrays over several lines with comments
//! inside (`A=(…)`, `A+=(…)`, `"${A[@]}"` anywhere, also in strings run later), `$((…))`,
//! positional parameters given by the user (`$1`, `${1:-x}`, `$@`, `$#`, `shift`), `if`/`elif`/
//! `else` and `case` on values the script knows, `for` over literal lists, functions called with
//! arguments, `bash -c "$CMD"`, `srun … bash -c`, `eval`, `$CMD`, here-documents written to a
//! file and run (`cat > run.sh <<EOF` … `bash run.sh`), and `#SBATCH` directives.
//!
//! What the script cannot know stays as written and marked: a variable of the job's environment
//! (`$TP`), a positional parameter the user did not give (`$3`), a command substitution
//! (`$(hostname)`), so that a reader names what is missing. A condition on such a value reads
//! every branch in order (the last value wins) and says so in [`Command::notes`].
//!
//! Bounded: any one word or variable at most [`MAX_WORD`] bytes, [`MAX_TOTAL`] bytes of expanded
//! text in all, [`MAX_STATEMENTS`] commands run, calls nested [`MAX_DEPTH`] deep, loops of
//! [`MAX_ITERATIONS`]; a script over a cap is an [`Error`] naming it.

mod arith;
mod cond;
mod exec;
mod expand;
mod lex;
mod parse;

use exec::{Found, Shell};
use fmperf_core::Error;
use fmperf_core::vocab::{Note, NoteList};

/// Bytes of one word or variable, at most.
pub const MAX_WORD: usize = 1 << 20;
/// Bytes of expanded text (and of command strings read) in all, at most.
pub const MAX_TOTAL: usize = 16 << 20;
/// Commands run, at most.
pub const MAX_STATEMENTS: usize = 100_000;
/// Nesting of function calls, `eval`, `bash -c` and `source`, at most.
pub const MAX_DEPTH: usize = 64;
/// Iterations of one loop, at most.
pub const MAX_ITERATIONS: usize = 10_000;

/// One word of the command and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word after expansion and quote removal.
    pub text: String,
    /// Its line in the script.
    pub line: usize,
}

/// A training command found in a script.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    /// The launcher's words before the training script (`torchrun --nproc_per_node 8 …`).
    pub launcher: Vec<Word>,
    /// The training script (`pretrain_gpt.py`, or the module of `python -m module`), when there
    /// is one.
    pub script: Option<Word>,
    /// The words after the script: the training flags.
    pub args: Vec<Word>,
    /// Words of `#SBATCH` directives (`--nodes=2`, `--gpus-per-node=8`).
    pub sbatch: Vec<Word>,
    /// No command runs a Python script: [`Self::args`] are the `--flags` the script's variables
    /// hold (a file of flag arrays that another script sources).
    pub from_variables: bool,
    /// How the script was read where it needed a choice (a condition on an unset variable,
    /// defaults of unset variables, a file sourced but not read).
    pub notes: Vec<Note>,
}

/// Finds the training command of `script` run without positional parameters: the last command
/// that runs a `.py` script with `--flags` (or, without one, every `--flag` word of the text: a
/// pasted list of flags).
/// A script over one of the caps gives an empty command with a note saying which.
pub fn command(script: &str) -> Command {
    read(script, &[], &|_| true)
        .unwrap_or_else(|e| Command { notes: vec![Note::reading(e.to_string())], ..Command::default() })
}

/// Finds the training command of `script` run with the positional parameters `args` (`$1`, …;
/// empty: none given, they stay unknown). `is_training` tells the commands that carry training
/// flags: of the commands running a Python script, the last one it accepts is taken (else the
/// last one with `--flags`, else the last one).
pub fn read(script: &str, args: &[String], is_training: &dyn Fn(&[Word]) -> bool) -> Result<Command, Error> {
    let mut sh = Shell::default();
    if !args.is_empty() {
        sh.positional = Some(args.to_vec());
    }
    let mut cmd = Command::default();
    for (i, raw) in script.lines().enumerate() {
        let Some(rest) = raw.trim_start().strip_prefix("#SBATCH") else { continue };
        let rest = rest.split(" #").next().unwrap_or("");
        let words: Vec<&str> = rest.split_whitespace().collect();
        slurm_environment(&words, &mut sh);
        cmd.sbatch.extend(words.iter().map(|w| Word { text: (*w).to_string(), line: i + 1 }));
    }
    sh.script(script, None)?;
    // Command substitutions were kept as one word with no-break spaces: spaces again.
    let to_words = |f: &[expand::Field]| -> Vec<Word> {
        f.iter().map(|w| Word { text: w.text.replace('\u{a0}', " "), line: w.line }).collect()
    };
    let pick = |found: &[Found], ok: &dyn Fn(&Found) -> bool| found.iter().rposition(ok);
    let chosen = pick(&sh.found, &|c| is_training(&to_words(c.words.get(c.script_at + 1..).unwrap_or(&[]))))
        .or_else(|| pick(&sh.found, &|c| c.words.iter().skip(c.script_at + 1).any(|w| w.text.starts_with("--"))))
        .or_else(|| sh.found.len().checked_sub(1));
    match chosen.and_then(|k| sh.found.get(k)) {
        Some(c) => {
            let at = c.script_at.min(c.words.len().saturating_sub(1));
            cmd.launcher = to_words(&c.words[..at]);
            cmd.script = to_words(&c.words[at..]).into_iter().next();
            cmd.args = to_words(c.words.get(at + 1..).unwrap_or(&[]));
        }
        None if !sh.flags_only.is_empty() => cmd.args = to_words(&sh.flags_only),
        None => {
            // A file of flag arrays (`MODEL_ARGS=( --num-layers 94 … )`) that a run script sources.
            let all: Vec<expand::Field> = sh.flag_vars.iter().flat_map(|(_, v)| v.iter().cloned()).collect();
            if !all.is_empty() {
                cmd.notes.reading(format!(
                    "no command runs a Python script: the flags of the variables {} are read (a file that another \
                     script sources)",
                    sh.flag_vars.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
            cmd.from_variables = !all.is_empty();
            cmd.args = to_words(&all);
        }
    }
    let mut notes = std::mem::take(&mut sh.notes);
    notes.append(&mut cmd.notes);
    cmd.notes = notes;
    if !sh.defaults.is_empty() {
        cmd.notes.reading(format!(
            "variables the script does not set took the script's defaults (the job's environment may set them): {}",
            sh.defaults.join(", ")
        ));
    }
    Ok(cmd)
}

/// The variables Slurm sets in a job from its `#SBATCH` options, as far as they count devices
/// (Slurm's `sbatch` documentation, "OUTPUT ENVIRONMENT VARIABLES"): `SLURM_NNODES` and
/// `SLURM_JOB_NUM_NODES` from `--nodes`/`-N` (a single count), `SLURM_GPUS_PER_NODE` from
/// `--gpus-per-node`, `SLURM_NTASKS_PER_NODE` from `--ntasks-per-node`, `SLURM_NTASKS` from
/// `--ntasks`/`-n`, unless the script sets them itself.
fn slurm_environment(words: &[&str], sh: &mut Shell) {
    for (i, w) in words.iter().enumerate() {
        let (key, value) = match w.split_once('=') {
            Some((k, v)) => (k, v),
            None => (*w, words.get(i + 1).copied().unwrap_or("")),
        };
        let names: &[&str] = match key {
            "--nodes" | "-N" => &["SLURM_NNODES", "SLURM_JOB_NUM_NODES"],
            "--gpus-per-node" => &["SLURM_GPUS_PER_NODE"],
            "--ntasks-per-node" => &["SLURM_NTASKS_PER_NODE"],
            "--ntasks" | "-n" => &["SLURM_NTASKS", "SLURM_NPROCS"],
            _ => continue,
        };
        // `--gpus-per-node=h100:8`: the count after the type.
        let value = value.rsplit(':').next().unwrap_or("");
        if !value.is_empty() && value.chars().all(|c| c.is_ascii_digit()) {
            for name in names {
                sh.vars.entry((*name).to_string()).or_insert_with(|| vec![value.to_string()]);
            }
        }
    }
}

#[cfg(test)]
mod tests;
