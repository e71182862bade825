//! The words of a training command in a shell script, as bash would pass them: line continuations
//! (`\` at the end of a line) joined, comments dropped, quotes removed, variables set earlier in the
//! script expanded (`NAME=value`, `export NAME=value`, `NAME=${NAME:-default}`, arrays
//! `ARGS=( … )` over several lines, `"$ARGS"`, `${ARGS[@]}`, `$((a * b))` arithmetic).
//!
//! Variables that the script does not set (the job's environment) stay as written (`$TP`), so a
//! reader that needs their value can say which variable is missing. Command substitutions
//! (`$(hostname)`) stay as written too. `#SBATCH` lines are kept as launcher words.

use std::collections::BTreeMap;

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
    /// The training script (`pretrain_gpt.py`), when there is one.
    pub script: Option<Word>,
    /// The words after the script: the training flags.
    pub args: Vec<Word>,
    /// Words of `#SBATCH` directives (`--nodes=2`, `--gpus-per-node=8`).
    pub sbatch: Vec<Word>,
}

/// A logical line: its text (continuations joined) and the line it starts on.
struct Logical {
    text: String,
    line: usize,
}

/// Splits `script` into logical lines: continuations joined, and a line whose quotes or array
/// parentheses are still open joined with the next.
fn logical_lines(script: &str) -> Vec<Logical> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    for (i, raw) in script.lines().enumerate() {
        if cur.is_empty() {
            start = i + 1;
        }
        let line = raw.trim_end_matches('\r');
        if let Some(head) = line.strip_suffix('\\') {
            cur.push_str(head);
            cur.push('\n');
            continue;
        }
        cur.push_str(line);
        if open_quote_or_paren(&cur) {
            cur.push('\n');
            continue;
        }
        out.push(Logical { text: std::mem::take(&mut cur), line: start });
    }
    if !cur.trim().is_empty() {
        out.push(Logical { text: cur, line: start });
    }
    out
}

/// Whether `s` ends inside a quote or inside an unclosed `(` of an array assignment (outside
/// comments).
fn open_quote_or_paren(s: &str) -> bool {
    let (mut single, mut double, mut depth) = (false, false, 0i64);
    let mut prev = ' ';
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !single => {
                chars.next();
                prev = 'x';
                continue;
            }
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (prev.is_whitespace() || prev == '(') => {
                // A comment runs to the end of its physical line.
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                prev = ' ';
                continue;
            }
            '(' if !single && !double => depth += 1,
            ')' if !single && !double => depth -= 1,
            _ => {}
        }
        prev = c;
    }
    single || double || depth > 0
}

/// A lexed piece of a line: literal text or text to expand, and whether it may be split into words.
#[derive(Debug, Clone)]
struct Piece {
    text: String,
    expand: bool,
    split: bool,
}

/// A raw word: its pieces and the physical line it starts on, counted from its logical line.
type RawWord = (Vec<Piece>, usize);

/// Splits one logical line into raw words (each a list of pieces), dropping comments.
fn lex(line: &str) -> Vec<RawWord> {
    let mut words: Vec<RawWord> = Vec::new();
    let mut newlines = 0usize;
    let mut word_line = 0usize;
    let mut cur: Vec<Piece> = Vec::new();
    let mut buf = String::new();
    let mut chars = line.chars().peekable();
    let flush = |buf: &mut String, cur: &mut Vec<Piece>, expand: bool, split: bool| {
        if !buf.is_empty() || !split {
            cur.push(Piece { text: std::mem::take(buf), expand, split });
        }
    };
    let mut at_word_start = true;
    while let Some(c) = chars.next() {
        if at_word_start {
            word_line = newlines;
        }
        match c {
            c if c.is_whitespace() => {
                flush(&mut buf, &mut cur, true, true);
                if !cur.is_empty() {
                    words.push((std::mem::take(&mut cur), word_line));
                }
                if c == '\n' {
                    newlines += 1;
                }
                at_word_start = true;
                continue;
            }
            '#' if at_word_start => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        newlines += 1;
                        break;
                    }
                }
                continue;
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    buf.push(n);
                }
            }
            '\'' => {
                flush(&mut buf, &mut cur, true, true);
                let mut lit = String::new();
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    lit.push(n);
                }
                cur.push(Piece { text: lit, expand: false, split: false });
            }
            '"' => {
                flush(&mut buf, &mut cur, true, true);
                let mut q = String::new();
                while let Some(n) = chars.next() {
                    if n == '\n' {
                        newlines += 1;
                    }
                    match n {
                        '"' => break,
                        '\\' => {
                            if let Some(m) = chars.next() {
                                q.push(m);
                            }
                        }
                        _ => q.push(n),
                    }
                }
                cur.push(Piece { text: q, expand: true, split: false });
            }
            '$' if chars.peek() == Some(&'(') => {
                // `$(…)` or `$((…))`: keep the balanced text as one piece to expand.
                buf.push('$');
                let mut depth = 0;
                for n in chars.by_ref() {
                    buf.push(n);
                    match n {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            // Array parentheses and statement separators are words of their own.
            '(' | ')' | ';' | '&' | '|' => {
                flush(&mut buf, &mut cur, true, true);
                if !cur.is_empty() {
                    words.push((std::mem::take(&mut cur), word_line));
                }
                words.push((vec![Piece { text: c.to_string(), expand: false, split: false }], newlines));
                at_word_start = true;
                continue;
            }
            _ => buf.push(c),
        }
        at_word_start = false;
    }
    flush(&mut buf, &mut cur, true, true);
    if !cur.is_empty() {
        words.push((cur, word_line));
    }
    words
}

/// The script's variables: scalars and arrays (a scalar is an array of one element).
#[derive(Debug, Default)]
struct Vars {
    values: BTreeMap<String, Vec<String>>,
}

impl Vars {
    /// Expands `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME[@]}`, `$((…))` in `s`; unknown
    /// variables and command substitutions stay as written.
    fn expand(&self, s: &str) -> String {
        let mut out = String::new();
        let b: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i] != '$' || i + 1 >= b.len() {
                out.push(b[i]);
                i += 1;
                continue;
            }
            if b[i + 1] == '(' {
                let end = matching(&b, i + 1);
                let inner: String = b[i + 1..(end + 1).min(b.len())].iter().collect();
                if inner.len() >= 4 && inner.starts_with("((") && inner.ends_with("))") {
                    let expr = self.bare_names(&self.expand(&inner[2..inner.len() - 2]));
                    match arithmetic(&expr) {
                        Some(v) => out.push_str(&v.to_string()),
                        None => out.push_str(&format!("$(({expr}))")),
                    }
                } else {
                    out.push('$');
                    out.push_str(&inner);
                }
                i = end + 1;
                continue;
            }
            if b[i + 1] == '{' {
                let Some(close) = b[i..].iter().position(|c| *c == '}').map(|p| p + i) else {
                    out.extend(&b[i..]);
                    break;
                };
                let inner: String = b[i + 2..close].iter().collect();
                out.push_str(&self.braced(&inner));
                i = close + 1;
                continue;
            }
            let name: String = b[i + 1..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').collect();
            if name.is_empty() {
                out.push('$');
                i += 1;
                continue;
            }
            match self.values.get(&name) {
                Some(v) => out.push_str(v.first().map_or("", String::as_str)),
                None => {
                    out.push('$');
                    out.push_str(&name);
                }
            }
            i += 1 + name.chars().count();
        }
        out
    }

    /// Arithmetic reads variables without `$`: replaces each bare name that the script set.
    fn bare_names(&self, expr: &str) -> String {
        let mut out = String::new();
        let mut name = String::new();
        let flush = |name: &mut String, out: &mut String| {
            if !name.is_empty() {
                match self.values.get(name.as_str()).and_then(|v| v.first()) {
                    Some(v) if !name.starts_with(|c: char| c.is_ascii_digit()) => out.push_str(v),
                    _ => out.push_str(name),
                }
                name.clear();
            }
        };
        for c in expr.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
            } else {
                flush(&mut name, &mut out);
                out.push(c);
            }
        }
        flush(&mut name, &mut out);
        out
    }

    /// `${…}`: `NAME`, `NAME[@]`/`NAME[*]` (all elements, space-joined), `NAME:-default`,
    /// `NAME:=default`, `NAME-default`.
    fn braced(&self, inner: &str) -> String {
        let name_len = inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
        let (name, rest) = inner.split_at(name_len);
        let value = self.values.get(name);
        if rest == "[@]" || rest == "[*]" {
            return value.map_or(format!("${{{inner}}}"), |v| v.join(" "));
        }
        for op in [":-", ":=", "-", "="] {
            if let Some(default) = rest.strip_prefix(op) {
                return match value {
                    Some(v) if !(op.starts_with(':') && v.iter().all(String::is_empty)) => {
                        v.first().cloned().unwrap_or_default()
                    }
                    _ => self.expand(default),
                };
            }
        }
        if rest.is_empty() {
            return value.map_or(format!("${{{inner}}}"), |v| v.first().cloned().unwrap_or_default());
        }
        format!("${{{inner}}}")
    }
}

/// Index of the `)` closing the `(` at `open` (or the end).
fn matching(b: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (j, c) in b.iter().enumerate().skip(open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    b.len()
}

/// Integer arithmetic of `$((…))`: `+ - * / %`, parentheses, decimal numbers. `None` when the
/// expression holds anything else (an unset variable).
fn arithmetic(expr: &str) -> Option<i128> {
    fn sum(t: &[char], i: &mut usize) -> Option<i128> {
        let mut v = product(t, i)?;
        while *i < t.len() && (t[*i] == '+' || t[*i] == '-') {
            let op = t[*i];
            *i += 1;
            let r = product(t, i)?;
            v = if op == '+' { v.checked_add(r)? } else { v.checked_sub(r)? };
        }
        Some(v)
    }
    fn product(t: &[char], i: &mut usize) -> Option<i128> {
        let mut v = atom(t, i)?;
        while *i < t.len() && matches!(t[*i], '*' | '/' | '%') {
            let op = t[*i];
            *i += 1;
            let r = atom(t, i)?;
            v = match op {
                '*' => v.checked_mul(r)?,
                '/' => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
        Some(v)
    }
    fn atom(t: &[char], i: &mut usize) -> Option<i128> {
        if *i < t.len() && t[*i] == '(' {
            *i += 1;
            let v = sum(t, i)?;
            if *i >= t.len() || t[*i] != ')' {
                return None;
            }
            *i += 1;
            return Some(v);
        }
        if *i < t.len() && t[*i] == '-' {
            *i += 1;
            return atom(t, i)?.checked_neg();
        }
        let start = *i;
        while *i < t.len() && t[*i].is_ascii_digit() {
            *i += 1;
        }
        if start == *i || *i - start > 30 {
            return None;
        }
        t[start..*i].iter().collect::<String>().parse().ok()
    }
    let t: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let mut i = 0;
    let v = sum(&t, &mut i)?;
    (i == t.len()).then_some(v)
}

/// Expands a raw word into words (unquoted expansions are split on whitespace).
fn expand_word(vars: &Vars, pieces: &[Piece]) -> Vec<String> {
    let mut words: Vec<String> = vec![String::new()];
    let mut any_quoted = false;
    for p in pieces {
        let text = if p.expand { vars.expand(&p.text) } else { p.text.clone() };
        if !p.split {
            any_quoted = true;
            if let Some(last) = words.last_mut() {
                last.push_str(&text);
            }
            continue;
        }
        let mut parts = text.split_whitespace();
        if text.starts_with(char::is_whitespace) && words.last().is_some_and(|w| !w.is_empty()) {
            words.push(String::new());
        }
        if let Some(first) = parts.next()
            && let Some(last) = words.last_mut()
        {
            last.push_str(first);
        }
        for part in parts {
            words.push(part.to_string());
        }
        if text.ends_with(char::is_whitespace) && !text.trim().is_empty() {
            words.push(String::new());
        }
    }
    words.retain(|w| !w.is_empty() || any_quoted);
    words
}

/// Whether `w` is an assignment `NAME=…` (returns the name and the value's raw text position).
fn assignment_name(first: &[Piece]) -> Option<String> {
    let head = first.first()?;
    if !head.split {
        return None;
    }
    let (name, _) = head.text.split_once('=')?;
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ok && !name.is_empty()).then(|| name.to_string())
}

/// Finds the training command of `script`: the line running a `.py` training script (the last one
/// when several do), or, without one, every word of the text (a pasted list of flags).
pub fn command(script: &str) -> Command {
    let mut vars = Vars::default();
    let mut cmd = Command::default();
    let mut flags_only: Vec<Word> = Vec::new();
    run(script, None, &mut vars, &mut cmd, &mut flags_only);
    if cmd.script.is_none() {
        cmd.args = flags_only;
    }
    cmd
}

/// Reads the statements of `script` in order. `at_line`: the line every word is given (a command
/// string run by `bash -c`, whose words all come from that line); `None`: the script's own lines.
fn run(script: &str, at_line: Option<usize>, vars: &mut Vars, cmd: &mut Command, flags_only: &mut Vec<Word>) {
    for logical in logical_lines(script) {
        let line = at_line.unwrap_or(logical.line);
        let trimmed = logical.text.trim_start();
        if let Some(rest) = trimmed.strip_prefix("#SBATCH") {
            let words: Vec<&str> = rest.split('#').next().unwrap_or("").split_whitespace().collect();
            slurm_environment(&words, vars);
            cmd.sbatch.extend(rest.split_whitespace().map(|w| Word { text: w.to_string(), line }));
            continue;
        }
        let raw = lex(&logical.text);
        // Statements separated by `;`, `&&`, `|`.
        let is_separator =
            |w: &RawWord| w.0.len() == 1 && matches!(w.0[0].text.as_str(), ";" | "&" | "|") && !w.0[0].expand;
        for stmt in raw.split(is_separator) {
            if at_line.is_some() {
                let flat: Vec<RawWord> = stmt.iter().map(|(w, _)| (w.clone(), 0)).collect();
                statement(&flat, line, vars, cmd, flags_only);
            } else {
                statement(stmt, line, vars, cmd, flags_only);
            }
        }
    }
}

/// The variables Slurm sets in a job from its `#SBATCH` options, as far as they count devices:
/// `SLURM_NNODES` and `SLURM_JOB_NUM_NODES` from `--nodes`/`-N` (a single count), unless the script
/// sets them itself.
fn slurm_environment(words: &[&str], vars: &mut Vars) {
    for (i, w) in words.iter().enumerate() {
        let value = match w.split_once('=') {
            Some(("--nodes" | "-N", v)) => v,
            None if matches!(*w, "--nodes" | "-N") => words.get(i + 1).copied().unwrap_or(""),
            _ => continue,
        };
        if !value.is_empty() && value.chars().all(|c| c.is_ascii_digit()) {
            for name in ["SLURM_NNODES", "SLURM_JOB_NUM_NODES"] {
                vars.values.entry(name.to_string()).or_insert_with(|| vec![value.to_string()]);
            }
        }
    }
}

/// A shell running a command string (`bash -c "…"`, `sh -c`: how `srun` and `pdsh` lines run a
/// composed launcher and training command): the string, if the words hold one.
fn shell_string(words: &[Word]) -> Option<&Word> {
    let at = words.windows(2).position(|p| {
        let prog = p[0].text.rsplit('/').next().unwrap_or("");
        matches!(prog, "bash" | "sh" | "zsh" | "dash") && p[1].text == "-c"
    })?;
    words.get(at + 2)
}

fn statement(stmt: &[RawWord], line: usize, vars: &mut Vars, cmd: &mut Command, flags_only: &mut Vec<Word>) {
    let mut stmt = stmt;
    while let Some((first, _)) = stmt.first() {
        let t = first.first().map_or("", |p| p.text.as_str());
        let keyword = matches!(t, "export" | "local" | "declare" | "readonly" | "-x" | "-a" | "then" | "else" | "do");
        if keyword && first.len() == 1 {
            stmt = &stmt[1..];
        } else {
            break;
        }
    }
    let Some((first, _)) = stmt.first() else { return };
    if let Some(name) = assignment_name(first) {
        // `NAME=value` or `NAME=( … )`.
        let mut pieces: Vec<Piece> =
            first.iter().map(|p| Piece { text: p.text.clone(), expand: p.expand, split: p.split }).collect();
        if let Some(p) = pieces.first_mut() {
            p.text = p.text[name.len() + 1..].to_string();
        }
        let is_array = pieces.iter().all(|p| p.text.is_empty()) && stmt.get(1).is_some_and(|w| is_paren(&w.0, "("));
        let value = if is_array {
            let mut elems = Vec::new();
            for (w, _) in &stmt[2..] {
                if is_paren(w, ")") {
                    break;
                }
                elems.extend(expand_word(vars, w));
            }
            elems
        } else {
            let quoted: Vec<Piece> = pieces.into_iter().map(|p| Piece { split: false, ..p }).collect();
            vec![expand_word(vars, &quoted).join(" ")]
        };
        let rest_is_command = !is_array && stmt.len() > 1 && assignment_name(&stmt[1].0).is_none();
        vars.values.insert(name, value);
        if !rest_is_command {
            return;
        }
        stmt = &stmt[1..];
    }
    let words: Vec<Word> = stmt
        .iter()
        .flat_map(|(w, offset)| expand_word(vars, w).into_iter().map(move |text| Word { text, line: line + offset }))
        .collect();
    if !words.iter().any(|w| is_training_script(&w.text))
        && let Some(inner) = shell_string(&words)
        && inner.text.contains(".py")
    {
        // Its string is read as one command line, with the variables known so far: its line breaks
        // are those of the continued lines of the variables it was built from.
        let (text, at) = (inner.text.replace('\n', " "), inner.line);
        run(&text, Some(at), vars, cmd, flags_only);
        return;
    }
    if let Some(pos) = words.iter().position(|w| is_training_script(&w.text)) {
        cmd.launcher = words[..pos].to_vec();
        cmd.script = Some(words[pos].clone());
        cmd.args = words[pos + 1..].to_vec();
    } else if words.iter().any(|w| w.text.starts_with("--")) {
        flags_only.extend(words);
    }
}

fn is_paren(w: &[Piece], p: &str) -> bool {
    w.len() == 1 && w[0].text == p && !w[0].split
}

/// A Python training script (`pretrain_gpt.py`, `…/megatron_gpt_pretraining.py`).
fn is_training_script(w: &str) -> bool {
    w.ends_with(".py") && !w.starts_with("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(ws: &[Word]) -> Vec<&str> {
        ws.iter().map(|w| w.text.as_str()).collect()
    }

    #[test]
    fn continuations_variables_and_arrays() {
        let s = r#"#!/bin/bash
#SBATCH --nodes=4
GPUS_PER_NODE=8
TP=${TP:-4}
export PP=2
MODEL_ARGS=(
    --num-layers 32   # depth
    --hidden-size 4096
)
EXTRA="--bf16 --swiglu"
WORLD=$((GPUS_PER_NODE * 4))
torchrun --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \
    --tensor-model-parallel-size $TP \
    --pipeline-model-parallel-size=${PP} \
    ${MODEL_ARGS[@]} $EXTRA \
    --micro-batch-size "$MBS" --world $WORLD \
    --log-dir '/tmp/a b'
"#;
        let c = command(s);
        assert_eq!(texts(&c.launcher), ["torchrun", "--nproc_per_node", "8"]);
        assert_eq!(c.script.as_ref().unwrap().text, "pretrain_gpt.py");
        assert_eq!(
            texts(&c.args),
            [
                "--tensor-model-parallel-size",
                "4",
                "--pipeline-model-parallel-size=2",
                "--num-layers",
                "32",
                "--hidden-size",
                "4096",
                "--bf16",
                "--swiglu",
                "--micro-batch-size",
                "$MBS",
                "--world",
                "32",
                "--log-dir",
                "/tmp/a b"
            ]
        );
        assert_eq!(c.args[0].line, 13);
        assert_eq!(texts(&c.sbatch), ["--nodes=4"]);
    }

    #[test]
    fn pasted_flags_and_arithmetic() {
        let c = command("--num-layers 2 --hidden-size=64\n--bf16");
        assert!(c.script.is_none());
        assert_eq!(texts(&c.args), ["--num-layers", "2", "--hidden-size=64", "--bf16"]);
        assert_eq!(arithmetic("2*(3+4)-1"), Some(13));
        assert_eq!(arithmetic("8/0"), None);
        assert_eq!(arithmetic("$X*2"), None);
        // Unclosed quotes and parentheses never panic.
        let c = command("A=(\n--x 1\nB=\"open\npython pretrain_gpt.py --y");
        assert!(c.script.is_none() || !c.args.is_empty() || c.args.is_empty());
        let _ = command("$((((( ${ } $( \\");
    }

    #[test]
    fn a_command_string_run_by_bash_is_read() {
        let s = "#SBATCH --nodes=48   # nodes\n#SBATCH --gres=gpu:8\nNNODES=$SLURM_NNODES\n\
                 ARGS=\" \\\n    --num-layers 70 \\\n    --pp-partition-method 'type:transformer|embedding' \\\n    \"\n\
                 LAUNCHER=\"python -m torch.distributed.run --nnodes $NNODES\"\n\
                 CMD=\" `pwd`/pretrain_gpt.py $ARGS\"\n\
                 srun --jobid 1 bash -c \"$LAUNCHER --node_rank \\$SLURM_PROCID $CMD\" 2>&1 | tee log.txt\n";
        let c = command(s);
        assert_eq!(c.script.as_ref().map(|w| w.text.as_str()), Some("`pwd`/pretrain_gpt.py"));
        assert_eq!(
            texts(&c.launcher),
            ["python", "-m", "torch.distributed.run", "--nnodes", "48", "--node_rank", "$SLURM_PROCID"]
        );
        assert_eq!(texts(&c.args), ["--num-layers", "70", "--pp-partition-method", "type:transformer|embedding"]);
        assert!(c.args.iter().all(|w| w.line == 10), "the words of the string are on the srun line");
        // A script that sets the variable itself keeps its value; `-N 2` is read too.
        let c = command("#SBATCH -N 2\nSLURM_NNODES=3\ntorchrun --nnodes $SLURM_NNODES --nproc_per_node 8 x.py --a 1");
        assert_eq!(texts(&c.launcher)[2], "3");
        let c = command("#SBATCH -N 2\ntorchrun --nnodes $SLURM_JOB_NUM_NODES x.py");
        assert_eq!(texts(&c.launcher)[2], "2");
    }

    #[test]
    fn defaults_and_unset_variables() {
        let c = command("A=${UNSET:-7}\nB=${A}0\npython x.py --a $A --b $B --c ${NOPE} --d $(hostname)");
        assert_eq!(texts(&c.args), ["--a", "7", "--b", "70", "--c", "${NOPE}", "--d", "$(hostname)"]);
    }
}
