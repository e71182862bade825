//! A small, strict flag parser: `--name value`, `--name=value` and boolean `--name`.
//! Unknown flags, missing values and repeated single-valued flags are errors naming the flag.

use crate::cmd::CmdError;

/// Old spellings of flags, accepted as aliases of the current name (`--nvlink-size` of the
/// scale-up domain, issue 11: one name, `domain`). Only applies when the command takes the new name.
pub const FLAG_ALIASES: &[(&str, &str)] = &[("nvlink-size", "domain"), ("nvlink", "domain"), ("nvs", "domain")];

/// Parsed command-line flags of one command.
#[derive(Debug, Default)]
pub struct Args {
    items: Vec<(String, Option<String>)>,
    positional: Vec<String>,
    /// The words after a bare `--`: positional parameters of a launch script (`$1`, `$2`, …).
    trailing: Vec<String>,
    /// Whether a bare `--` was given (even with nothing after it).
    dashes: bool,
    /// The flags a command has asked for (given or not), so that a route can be checked to read
    /// every flag it accepts ([`Args::unread`]).
    asked: std::cell::RefCell<Vec<String>>,
}

impl Args {
    /// Parses `raw`. `value_flags` take a value; `bool_flags` do not. Anything else starting with
    /// `--` is rejected.
    pub fn parse(raw: Vec<String>, value_flags: &[&str], bool_flags: &[&str]) -> Result<Args, CmdError> {
        let mut args = Args::default();
        let mut it = raw.into_iter();
        while let Some(a) = it.next() {
            if a == "--" {
                args.dashes = true;
                args.trailing.extend(it.by_ref());
                break;
            }
            if let Some(name) = a.strip_prefix("--") {
                let (name, inline) = match name.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (name.to_string(), None),
                };
                let name = match FLAG_ALIASES.iter().find(|(old, _)| *old == name) {
                    Some((_, new)) if !value_flags.contains(&name.as_str()) && value_flags.contains(new) => {
                        new.to_string()
                    }
                    _ => name,
                };
                if value_flags.contains(&name.as_str()) {
                    let v = match inline {
                        Some(v) => v,
                        None => it.next().ok_or_else(|| CmdError::Usage(format!("--{name} needs a value")))?,
                    };
                    args.items.push((name, Some(v)));
                } else if bool_flags.contains(&name.as_str()) {
                    if inline.is_some() {
                        return Err(CmdError::Usage(format!("--{name} takes no value")));
                    }
                    args.items.push((name, None));
                } else {
                    let mut known: Vec<String> =
                        value_flags.iter().chain(bool_flags.iter()).map(|f| format!("--{f}")).collect();
                    known.sort();
                    return Err(CmdError::Usage(format!(
                        "unknown flag --{name}; this command takes {}",
                        known.join(", ")
                    )));
                }
            } else {
                args.positional.push(a);
            }
        }
        Ok(args)
    }

    /// The value of a single-valued flag, if given; an error if given twice.
    pub fn value(&self, name: &str) -> Result<Option<&str>, CmdError> {
        self.ask(name);
        let mut found = self.items.iter().filter(|(n, _)| n == name);
        let first = found.next();
        if found.next().is_some() {
            return Err(CmdError::Usage(format!("--{name} given more than once")));
        }
        Ok(first.and_then(|(_, v)| v.as_deref()))
    }

    /// Every value of a repeatable flag, in order.
    pub fn values(&self, name: &str) -> Vec<&str> {
        self.ask(name);
        self.items.iter().filter(|(n, _)| n == name).filter_map(|(_, v)| v.as_deref()).collect()
    }

    /// Whether a boolean flag was given.
    pub fn flag(&self, name: &str) -> bool {
        self.ask(name);
        self.items.iter().any(|(n, _)| n == name)
    }

    fn ask(&self, name: &str) {
        let mut asked = self.asked.borrow_mut();
        if !asked.iter().any(|a| a == name) {
            asked.push(name.to_string());
        }
    }

    /// The names of the flags given, in order, each once.
    pub fn given(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for (n, _) in &self.items {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
        names
    }

    /// The flags given that nothing has read yet: after a command ran, each is a flag the parser
    /// accepted and the command ignored.
    pub fn unread(&self) -> Vec<&str> {
        let asked = self.asked.borrow();
        self.given().into_iter().filter(|n| !asked.iter().any(|a| a == n)).collect()
    }

    /// A required single-valued flag.
    pub fn required(&self, name: &str) -> Result<&str, CmdError> {
        self.value(name)?.ok_or_else(|| CmdError::Usage(format!("--{name} is required")))
    }

    /// A flag parsed as a positive integer, with its rule in the error.
    pub fn positive_int(&self, name: &str) -> Result<Option<u64>, CmdError> {
        match self.value(name)? {
            None => Ok(None),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(CmdError::Usage(format!("--{name} {v}: must be a positive integer"))),
            },
        }
    }

    /// A flag parsed as a positive integer of at most `max` (the limit the core enforces), with
    /// that rule in the error.
    pub fn positive_int_at_most(&self, name: &str, max: u64) -> Result<Option<u64>, CmdError> {
        match self.value(name)? {
            None => Ok(None),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n > 0 && n <= max => Ok(Some(n)),
                _ => Err(CmdError::Usage(format!("--{name} {v}: must be a positive integer of at most {max}"))),
            },
        }
    }

    /// Positional arguments.
    pub fn positional(&self) -> &[String] {
        &self.positional
    }

    /// The words after a bare `--` (a launch script's positional parameters).
    pub fn trailing(&self) -> &[String] {
        &self.trailing
    }

    /// Whether a bare `--` was given.
    pub fn has_dashes(&self) -> bool {
        self.dashes
    }

    /// An error when words follow a bare `--` in a command that runs no launch script.
    pub fn refuse_trailing(self) -> Result<Args, CmdError> {
        if self.dashes {
            return Err(CmdError::Usage(
                "arguments after -- are a launch script's positional parameters: only `estimate --from` and \
                 `search --from` take them"
                    .into(),
            ));
        }
        Ok(self)
    }
}

/// Output format of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned plain-text table (default).
    Table,
    /// One JSON document.
    Json,
    /// Comma-separated values with a header row.
    Csv,
}

impl OutputFormat {
    /// Parses `--format`, accepting only the formats in `allowed`.
    pub fn from_args(args: &Args, allowed: &[OutputFormat]) -> Result<OutputFormat, CmdError> {
        let f = match args.value("format")? {
            None | Some("table") => OutputFormat::Table,
            Some("json") => OutputFormat::Json,
            Some("csv") => OutputFormat::Csv,
            Some(other) => {
                return Err(CmdError::Usage(format!("--format {other}: must be one of {}", names(allowed))));
            }
        };
        if !allowed.contains(&f) {
            return Err(CmdError::Usage(format!("--format: this command supports {}", names(allowed))));
        }
        Ok(f)
    }
}

fn names(allowed: &[OutputFormat]) -> String {
    allowed
        .iter()
        .map(|f| match f {
            OutputFormat::Table => "table",
            OutputFormat::Json => "json",
            OutputFormat::Csv => "csv",
        })
        .collect::<Vec<_>>()
        .join(", ")
}
