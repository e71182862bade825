//! The words of the line of a script that runs MaxText as a module (`python3 -m MaxText.train …`,
//! `python3 -m maxtext.trainers.pre_train.$EXECUTABLE …`), for when [`crate::shell`] finds no
//! `.py` script: continuations joined, quotes removed, `$NAME` / `${NAME}` / `${NAME:-default}`
//! expanded from plain assignments earlier in the script (`NAME=value`, `export NAME=value`);
//! other expansions stay as written.

use std::collections::BTreeMap;

use crate::shell::Word;

/// Longest script read (bytes) and most words kept, bounding time and memory.
const MAX_WORDS: usize = 10_000;

/// The words of the first logical line where `is_train` matches a word, with their lines.
pub fn module_command(text: &str, is_train: &dyn Fn(&str) -> bool) -> Option<Vec<Word>> {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let mut cur = String::new();
    let mut start = 0;
    for (i, raw) in text.lines().enumerate() {
        if cur.is_empty() {
            start = i + 1;
        }
        let line = raw.trim_end_matches('\r');
        if let Some(head) = line.strip_suffix('\\') {
            cur.push_str(head);
            cur.push(' ');
            continue;
        }
        cur.push_str(line);
        let logical = std::mem::take(&mut cur);
        let t = logical.trim();
        if t.starts_with('#') {
            continue;
        }
        let segments = split(t, &vars);
        if let Some(words) = segments.iter().find(|s| s.iter().any(|w| is_train(w))) {
            return Some(words.iter().take(MAX_WORDS).map(|w| Word { text: w.clone(), line: start }).collect());
        }
        let words = segments.into_iter().next().unwrap_or_default();
        // A plain assignment: `NAME=value` or `export NAME=value`.
        let body = t.strip_prefix("export ").unwrap_or(t);
        if words.len() == 1 + usize::from(t.starts_with("export "))
            && let Some((k, _)) = body.split_once('=')
            && !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && let Some(w) = words.last()
            && let Some((_, v)) = w.split_once('=')
        {
            vars.insert(k.to_string(), v.to_string());
        }
    }
    None
}

/// The words of the MaxText command inside a word that holds a whole command line, as a command
/// passed as one string does (`bash -c "… python3 -m MaxText.train …"`, `xpk workload create
/// --command="set -e && python3 -m MaxText.train …"`): the `--flag=` before it dropped, split as
/// a line (its variables already expanded by the outer line), the command of the list that runs
/// `is_train`. `None` when `word` holds no such command.
pub fn embedded(word: &str, is_train: &dyn Fn(&str) -> bool) -> Option<Vec<String>> {
    let body = match word.split_once('=') {
        Some((flag, rest)) if flag.starts_with('-') && !flag.contains(char::is_whitespace) => rest,
        _ => word,
    };
    split(body, &BTreeMap::new()).into_iter().find(|s| s.iter().any(|w| is_train(w)))
}

/// Splits `line` into the commands of a list (separated by `;`, `&&`, `||` or `|` outside quotes;
/// a redirection's `&` as in `2>&1` too) and each into words: whitespace outside quotes
/// separates, quotes are removed, `$NAME` and `${NAME}` / `${NAME:-default}` expanded from `vars`
/// (kept as written when unknown) except inside single quotes.
fn split(line: &str, vars: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let (mut single, mut double) = (false, false);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\'' if !double => {
                single = !single;
                has = true;
            }
            '"' if !single => {
                double = !double;
                has = true;
            }
            '$' if !single => {
                let (text, next) = expand(&chars, i, vars);
                cur.push_str(&text);
                has = true;
                i = next;
            }
            // A redirection's `&` (`2>&1`) is part of its word.
            '&' if cur.ends_with('>') => cur.push(c),
            ';' | '|' | '&' if !single && !double => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
                if !out.is_empty() {
                    commands.push(std::mem::take(&mut out));
                }
            }
            c if c.is_whitespace() && !single && !double => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
    }
    if has {
        out.push(cur);
    }
    if !out.is_empty() {
        commands.push(out);
    }
    commands
}

/// The expansion of the `$…` starting at `chars[i]` (after the `$`) and the index after it.
fn expand(chars: &[char], i: usize, vars: &BTreeMap<String, String>) -> (String, usize) {
    let name_end = |from: usize| {
        let mut j = from;
        while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
            j += 1;
        }
        j
    };
    if chars.get(i) == Some(&'{') {
        let Some(close) = chars[i..].iter().position(|c| *c == '}').map(|p| p + i) else {
            return ("$".into(), i);
        };
        let inner: String = chars[i + 1..close].iter().collect();
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n.to_string(), Some(d.to_string())),
            None => (inner.clone(), None),
        };
        let text = match (vars.get(&name), default) {
            (Some(v), _) => v.clone(),
            (None, Some(d)) if !d.contains('$') => d,
            _ => format!("${{{inner}}}"),
        };
        return (text, close + 1);
    }
    let end = name_end(i);
    if end == i {
        return ("$".into(), i);
    }
    let name: String = chars[i..end].iter().collect();
    (vars.get(&name).cloned().unwrap_or_else(|| format!("${name}")), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lines_are_split_with_variables() {
        let t = "export EXE=\"train\"\nN=4\n# python3 -m MaxText.train old\npython3 -m maxtext.trainers.pre_train.$EXE \"${DIR:-x}/base.yml\" \\\n  per_device_batch_size=$N attention='flash' run=$UNSET; echo done\n";
        let is_train = |w: &str| w.to_ascii_lowercase().contains("maxtext") && w.contains("train");
        let w = module_command(t, &is_train).unwrap();
        let texts: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "python3",
                "-m",
                "maxtext.trainers.pre_train.train",
                "x/base.yml",
                "per_device_batch_size=4",
                "attention=flash",
                "run=$UNSET"
            ]
        );
        assert_eq!(w[0].line, 4);
        assert!(module_command("echo hi", &is_train).is_none());
    }

    #[test]
    fn commands_of_a_list_and_command_strings() {
        let is_train = |w: &str| w.to_ascii_lowercase().contains("maxtext") && w.contains("train");
        let t = "set -e; python3 -m MaxText.train base.yml a=1 2>&1 | tee log && echo ok\n";
        let w = module_command(t, &is_train).unwrap();
        let texts: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["python3", "-m", "MaxText.train", "base.yml", "a=1", "2>&1"]);
        let inner =
            embedded("--command=set -e && export X='y z' && python3 -m MaxText.train b.yml k=2 | tee l", &is_train);
        assert_eq!(inner.unwrap(), ["python3", "-m", "MaxText.train", "b.yml", "k=2"]);
        assert!(embedded("--command=echo hi && ls", &is_train).is_none());
    }
}
