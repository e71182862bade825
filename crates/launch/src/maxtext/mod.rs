//! MaxText configurations: `base.yml`-style YAML, model files (`configs/models/*.yml`) and command
//! lines of `key=value` overrides (`python3 -m MaxText.train MaxText/configs/base.yml key=value …`,
//! `MaxText/train.py`, `python3 -m maxtext.trainers.pre_train.train`), also inside the run scripts
//! of `configs/{a3,v5e,v5p,…}/` (words read by [`crate::shell`]).
//!
//! MaxText's own precedence is kept: the config YAML, then the model file `model_name` names,
//! then the command line's overrides ([`parse_sources`] reads several files as one run). Keys are
//! read into [`crate::Settings`] by [`keys`], the device mesh by [`mesh`]; `model_name` without its
//! file takes the shape from [`models`]. Values of base.yml that apply where the files are silent
//! are named in the notes.

pub mod keys;
pub mod mesh;
pub mod models;
mod split;

use fmperf_core::vocab::{Note, NoteList};
use std::collections::BTreeMap;

use super::settings::SettingOrigin;
use super::{Format, Launch, shell};
use fmperf_core::Error;

/// Whether `text` looks like a MaxText configuration or command line.
pub fn looks_like(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let runs_maxtext =
        lower.contains("maxtext/train.py") || lower.contains("maxtext.train") || lower.contains("-m maxtext.");
    // MaxText's own keys, as YAML lines or command-line words.
    let own_key = |k: &str| {
        k == "base_emb_dim"
            || k == "base_num_decoder_layers"
            || k == "per_device_batch_size"
            || (k.starts_with("ici_") || k.starts_with("dcn_")) && k.ends_with("_parallelism")
    };
    let yaml_line = text.lines().any(|l| l.split_once(':').is_some_and(|(k, _)| own_key(k.trim())));
    let word = text.split_whitespace().any(|w| w.split_once('=').is_some_and(|(k, _)| own_key(k)));
    runs_maxtext || yaml_line || (word && !text.contains("pretrain_"))
}

/// How strongly a source's values count (MaxText's precedence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Precedence {
    /// The config YAML (`base.yml` or a file with `base_config: base.yml`).
    Config,
    /// A model file (`configs/models/*.yml`: only the model's keys).
    Model,
    /// The command line's `key=value` overrides.
    Command,
}

/// One key as given: its value as text, where, and how strongly it counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    /// The value as written (quotes removed).
    pub value: String,
    /// Where it was read.
    pub origin: SettingOrigin,
    /// Its precedence.
    pub rank: Precedence,
    /// The source it came from (0-based, for file order).
    pub source: usize,
}

/// The keys of every source, the strongest value of each.
#[derive(Debug, Default)]
pub struct Keys {
    /// By key.
    pub map: BTreeMap<String, Raw>,
    /// Values that a stronger source replaced, as notes.
    pub replaced: Vec<Note>,
}

impl Keys {
    /// Adds `key = value`; a value of a weaker source than the one kept is dropped (with a note).
    pub fn add(&mut self, key: &str, raw: Raw) {
        match self.map.get(key) {
            Some(old) if old.rank > raw.rank => {
                if old.value != raw.value {
                    self.replaced.assumption(note_replaced(key, &raw, old));
                }
            }
            Some(old) => {
                if old.value != raw.value {
                    self.replaced.assumption(note_replaced(key, old, &raw));
                }
                self.map.insert(key.to_string(), raw);
            }
            None => _ = self.map.insert(key.to_string(), raw),
        }
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&Raw> {
        self.map.get(key)
    }
}

fn note_replaced(key: &str, weak: &Raw, strong: &Raw) -> String {
    let place = |r: &Raw| match (&r.origin.file, r.origin.line) {
        (Some(f), 0) => f.clone(),
        (Some(f), n) => format!("{f} line {n}"),
        (None, n) => format!("line {n}"),
    };
    format!(
        "{key} = {} ({}) replaced by {} ({}): MaxText's order is config YAML, model file, command line",
        weak.value,
        place(weak),
        strong.value,
        place(strong)
    )
}

/// Reads a MaxText configuration (a YAML or a command line) with the positional parameters of
/// its script.
pub fn parse(text: &str, args: &[String]) -> Result<Launch, Error> {
    parse_sources(&[(None, text)], args)
}

/// Reads several MaxText files as one run: `(name, text)` each, `args` for the script among them.
/// A later source of the same rank replaces an earlier one's value.
pub fn parse_sources(sources: &[(Option<&str>, &str)], args: &[String]) -> Result<Launch, Error> {
    let mut l = Launch::new(Format::MaxText);
    let mut keys = Keys::default();
    let several = sources.len() > 1;
    let mut launch_like = false;
    for (i, (name, text)) in sources.iter().enumerate() {
        let file = if several { name.map(str::to_string).or(Some(format!("file {}", i + 1))) } else { None };
        let tag = |mut o: SettingOrigin| {
            o.file = file.clone();
            o
        };
        if is_command(text) {
            launch_like = true;
            for (k, v, line) in command_words(text, args, &mut l, file.as_deref())? {
                keys.add(
                    &k,
                    Raw {
                        value: v,
                        origin: tag(SettingOrigin::new(k.clone(), line)),
                        rank: Precedence::Command,
                        source: i,
                    },
                );
            }
        } else {
            let entries = super::yaml::read(text)?;
            let model_file = entries.iter().all(|e| keys::is_model_key(&e.key));
            let rank = if model_file { Precedence::Model } else { Precedence::Config };
            launch_like |= !model_file;
            for e in entries {
                let o = tag(SettingOrigin::new(e.key.clone(), e.line));
                keys.add(&e.key, Raw { value: e.value, origin: o, rank, source: i });
            }
        }
    }
    l.notes.append(&mut keys.replaced);
    keys::apply(&mut l, &keys, launch_like)?;
    if launch_like {
        mesh::apply(&mut l, &keys, directive_gpus(sources))?;
    }
    Ok(l)
}

/// Whether `text` is a command line or script rather than a YAML.
fn is_command(text: &str) -> bool {
    let body: String = text.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    let text = body.as_str();
    let lower = text.to_ascii_lowercase();
    lower.contains("maxtext/train.py")
        || lower.contains("maxtext.train")
        || lower.contains("-m maxtext.")
        || lower.contains("train.py ")
        || text.lines().any(|l| {
            let t = l.trim();
            !t.starts_with('#')
                && t.split_whitespace().filter(|w| w.contains('=') && !w.contains(':')).count() >= 2
                && !t.contains(": ")
        })
}

/// The `key=value` words of the MaxText command in `text`, with their lines; other words are
/// listed as unused in `l`.
fn command_words(
    text: &str,
    args: &[String],
    l: &mut Launch,
    file: Option<&str>,
) -> Result<Vec<(String, String, usize)>, Error> {
    let is_train = |w: &str| {
        let t = w.to_ascii_lowercase();
        (t.contains("maxtext") && t.contains("train")) || t.ends_with("train.py") || t.ends_with("train_compile.py")
    };
    let cmd = shell::command(text);
    let mut words: Vec<shell::Word> =
        cmd.launcher.iter().chain(cmd.script.iter()).chain(cmd.args.iter()).cloned().collect();
    if !words.iter().any(|w| is_train(&w.text)) {
        // `python3 -m MaxText.train …` runs no `.py` file the shell reader looks for: the words of
        // the line that runs the module.
        words = split::module_command(text, &is_train).unwrap_or(words);
    }
    // A command passed as one string (`bash -c "…"`, `xpk … --command="…"`): the words of the
    // command inside it, at the line of the string (bounded: a string within a string, a few deep).
    for _ in 0..4 {
        let Some(w) = words.iter().find(|w| is_train(&w.text) && w.text.contains(char::is_whitespace)) else {
            break;
        };
        let line = w.line;
        let Some(inner) = split::embedded(&w.text, &is_train) else { break };
        words = inner.into_iter().map(|text| shell::Word { text, line }).collect();
    }
    let start = match words.iter().position(|w| is_train(&w.text)) {
        Some(p) => p + 1,
        None if words.iter().any(|w| w.text.split_once('=').is_some_and(|(k, _)| is_key(k))) => 0,
        None => {
            return Err(Error::Parse {
                message: "no MaxText command found: expected `python3 -m MaxText.train <config.yml> key=value …` \
                          (or MaxText/train.py)"
                    .into(),
            });
        }
    };
    let mut out = Vec::new();
    let mut config_seen = false;
    let prefix = |k: &str| file.map_or_else(|| k.to_string(), |f| format!("{f}: {k}"));
    let mut i = start;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        let t = substitute(&w.text, args);
        if let Some((k, v)) = t.split_once('=')
            && is_key(k)
        {
            out.push((k.to_string(), v.to_string(), w.line));
            continue;
        }
        if !config_seen && (t.ends_with(".yml") || t.ends_with(".yaml")) {
            config_seen = true;
            l.unused(
                prefix("config"),
                t,
                "the config YAML the command names: give it with another --from to read its keys (base.yml's \
                 defaults apply where it is not given)",
            );
            continue;
        }
        if let Some(k) = t.strip_suffix(':')
            && is_key(k)
            && let Some(v) = words.get(i)
        {
            i += 1;
            l.unused(
                prefix(k),
                v.text.clone(),
                "written `key: value` on the command line, which MaxText reads only as key=value; not used",
            );
            continue;
        }
        l.unused(prefix(&t), "", "a word of the command that is not a MaxText key=value; not used");
    }
    Ok(out)
}

/// Whether `k` is a MaxText key name.
fn is_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() < 128
        && k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `word` with `$NAME`/`${NAME}` replaced by the `NAME=value` parameters of `args` (MaxText's run
/// scripts export them) and `$1`… by the positional ones.
fn substitute(word: &str, args: &[String]) -> String {
    if !word.contains('$') {
        return word.to_string();
    }
    let mut out = word.to_string();
    for (i, a) in args.iter().enumerate().take(9) {
        if let Some((k, v)) = a.split_once('=')
            && is_key(k)
        {
            out = out.replace(&format!("${{{k}}}"), v).replace(&format!("${k}"), v);
        }
        out = out.replace(&format!("${{{}}}", i + 1), a).replace(&format!("${}", i + 1), a);
    }
    out
}

/// The device count of a `# fmperf: gpus=N` directive in any source.
fn directive_gpus(sources: &[(Option<&str>, &str)]) -> Option<(u64, SettingOrigin)> {
    for (_, text) in sources {
        for (i, line) in text.lines().enumerate() {
            let Some(rest) =
                line.trim_start().strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("fmperf:"))
            else {
                continue;
            };
            for w in rest.split_whitespace() {
                if let Some(n) = w.strip_prefix("gpus=").and_then(|n| n.parse::<u64>().ok()).filter(|n| *n > 0) {
                    return Some((n, SettingOrigin::new("# fmperf: gpus", i + 1)));
                }
            }
        }
    }
    None
}
