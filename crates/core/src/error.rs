//! The one error type of fmperf-core: every rejected input names the field, the value and the rule.

use std::fmt;

/// Why an input was rejected. Every variant carries enough to tell a user what to fix.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Error {
    /// A field's value breaks a rule (range, integer-ness, divisibility, …).
    InvalidField {
        /// Dotted path of the field, e.g. `model.heads` or `system.hbm_capacity`.
        field: String,
        /// The offending value as the user wrote it (or as parsed).
        value: String,
        /// The rule that was broken, in words ("must be a positive integer").
        rule: String,
        /// How to fix it, if there is a clear suggestion.
        hint: Option<String>,
    },
    /// A field the format does not know.
    UnknownField {
        /// Dotted path of the unknown field.
        field: String,
        /// Nearest known field name or other advice.
        hint: Option<String>,
    },
    /// A required field is absent.
    MissingField {
        /// Dotted path of the missing field.
        field: String,
    },
    /// The text is not parseable at all (not JSON, wrong top-level type, …).
    Parse {
        /// What went wrong, with line/column when known.
        message: String,
    },
    /// A name that is not in a catalog.
    UnknownName {
        /// What kind of thing was looked up ("model", "system", "strategy").
        kind: String,
        /// The name given.
        name: String,
        /// Known names (or the nearest ones).
        known: Vec<String>,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidField`] without a hint.
    pub fn invalid(field: impl Into<String>, value: impl fmt::Display, rule: impl Into<String>) -> Self {
        Error::InvalidField { field: field.into(), value: value.to_string(), rule: rule.into(), hint: None }
    }

    /// `key` given twice with different values in a `key=value,…` text (`--ext`, `--moe`, a system
    /// spec, `fix`): an [`Error::InvalidField`] on `{group}.{key}` naming both items in the order
    /// given, by their values when both spell the key alike (`given twice (full, then none); give
    /// it once`), else as typed (`given twice (zero=zero1, then sharding=zero3)`).
    pub fn given_twice(group: &str, key: &str, first: &str, second: &str) -> Self {
        fn split(item: &str) -> (&str, &str) {
            item.split_once('=').map_or(("", item.trim()), |(k, v)| (k.trim(), v.trim()))
        }
        let ((k1, v1), (k2, v2)) = (split(first), split(second));
        let both =
            if k1 == k2 { format!("{v1}, then {v2}") } else { format!("{}, then {}", first.trim(), second.trim()) };
        Error::invalid(format!("{group}.{key}"), v2, format!("given twice ({both}); give it once"))
    }

    /// Adds (or replaces) the hint of an [`Error::InvalidField`] or [`Error::UnknownField`].
    pub fn with_hint(mut self, text: impl Into<String>) -> Self {
        match &mut self {
            Error::InvalidField { hint, .. } | Error::UnknownField { hint, .. } => *hint = Some(text.into()),
            _ => {}
        }
        self
    }

    /// The same [`Error::InvalidField`] at `field` (a form's own field for the value the model
    /// read under another name), its value, rule and hint kept; any other error as it is.
    pub fn placed_at(mut self, new_field: impl Into<String>) -> Self {
        if let Error::InvalidField { field, .. } = &mut self {
            *field = new_field.into();
        }
        self
    }

    /// The same error with its field's path inside `group` (`heads` within `model` is
    /// `model.heads`), for a caller that read a part of a larger document (a scenario's model or
    /// system): value, rule and hint kept; an error about no field as it is.
    pub fn within(mut self, group: &str) -> Self {
        if let Error::InvalidField { field, .. } | Error::UnknownField { field, .. } | Error::MissingField { field } =
            &mut self
        {
            *field = format!("{group}.{field}");
        }
        self
    }

    /// The field this error is about, when it is about one (used by forms to place the message).
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::InvalidField { field, .. } | Error::UnknownField { field, .. } | Error::MissingField { field } => {
                Some(field)
            }
            _ => None,
        }
    }

    /// [`Error::field`] as a path, for callers that route the error by the group it is in (a
    /// flag, a form's section): `e.path().is_some_and(|p| p.is_in("ext"))`.
    pub fn path(&self) -> Option<FieldPath<'_>> {
        self.field().map(FieldPath::new)
    }

    /// Whether this error is about exactly the field `path` (not a field inside it: see
    /// [`FieldPath::is_in`] for a group). The one way a caller places an error at a field.
    pub fn is_at<'p>(&self, path: impl Into<FieldPath<'p>>) -> bool {
        self.path() == Some(path.into())
    }
}

/// The dotted path of a field an error names (`model.heads`, `ext.recompute`, `axis.devices`):
/// its groups are the segments before a dot. Routing an error to a flag or a form field asks the
/// path for its group ([`FieldPath::is_in`], [`FieldPath::below`], [`FieldPath::group`]) rather
/// than matching the text's start, so `ext` holds `ext.recompute` but not `extra`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldPath<'a>(&'a str);

impl<'a> FieldPath<'a> {
    /// The path `path` (dotted, as written).
    pub const fn new(path: &'a str) -> FieldPath<'a> {
        FieldPath(path)
    }

    /// The path as written.
    pub fn as_str(self) -> &'a str {
        self.0
    }

    /// Whether the path is `group` itself or a field inside it (`ext` and `ext.recompute` are in
    /// `ext`; `extra` is not). `group` may itself be dotted (`system.scale_up`).
    pub fn is_in(self, group: &str) -> bool {
        self.0 == group || self.below(group).is_some()
    }

    /// The rest of the path inside `group` (`recompute` for `ext.recompute` in `ext`); `None`
    /// outside it or for the group itself.
    pub fn below(self, group: &str) -> Option<&'a str> {
        self.0.strip_prefix(group)?.strip_prefix('.').filter(|rest| !rest.is_empty())
    }

    /// The outermost group (`model` for `model.heads`; the path itself when it has no dot).
    pub fn group(self) -> &'a str {
        self.0.split('.').next().unwrap_or(self.0)
    }
}

/// An owned [`FieldPath`], for a value that keeps the fields it concerns (a
/// [`crate::vocab::Note`]); read it through [`FieldPathBuf::as_path`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FieldPathBuf(String);

impl FieldPathBuf {
    /// The path `path` (dotted, as written).
    pub fn new(path: impl Into<String>) -> FieldPathBuf {
        FieldPathBuf(path.into())
    }

    /// The path, borrowed, to ask for its groups.
    pub fn as_path(&self) -> FieldPath<'_> {
        FieldPath(&self.0)
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<FieldPath<'_>> for FieldPathBuf {
    fn from(path: FieldPath<'_>) -> FieldPathBuf {
        FieldPathBuf(path.0.to_string())
    }
}

impl fmt::Display for FieldPathBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'a> From<&'a str> for FieldPath<'a> {
    fn from(path: &'a str) -> FieldPath<'a> {
        FieldPath(path)
    }
}

impl std::fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidField { field, value, rule, hint } => {
                write!(f, "{field} = {}: {rule}", Shown(value))?;
                if let Some(h) = hint {
                    write!(f, " ({h})")?;
                }
                Ok(())
            }
            Error::UnknownField { field, hint } => {
                write!(f, "unknown field `{field}`")?;
                if let Some(h) = hint {
                    write!(f, " ({h})")?;
                }
                Ok(())
            }
            Error::MissingField { field } => write!(f, "missing field `{field}`"),
            Error::Parse { message } => write!(f, "cannot parse input: {message}"),
            Error::UnknownName { kind, name, known } => {
                write!(f, "unknown {kind} `{}`", Shown(name))?;
                if !known.is_empty() {
                    write!(f, "; known: {}", known.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}

/// Longest value (in characters) an error message repeats whole; a longer one (an axis of 10,000
/// values, a pasted file) is shown by its start and its length, so a message stays one short line.
const SHOWN_CHARS: usize = 80;

/// A value as an error message repeats it: whole up to [`SHOWN_CHARS`] characters, else its first
/// 60 characters, "…" and its length in characters.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chars = self.0.chars().count();
        if chars <= SHOWN_CHARS {
            return f.write_str(self.0);
        }
        let start: String = self.0.chars().take(60).collect();
        write!(f, "{start}… ({chars} characters)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_field_is_placed_at_another_field_with_its_value_rule_and_hint() {
        let e = Error::invalid("domain_size", 3, "must divide the devices").with_hint("try 4").placed_at("domain");
        assert!(e.is_at("domain") && !e.is_at("domain_size"));
        assert_eq!(e, Error::invalid("domain", 3, "must divide the devices").with_hint("try 4"));
        // Any other error stays as it is.
        let parse = Error::Parse { message: "x".into() };
        assert_eq!(parse.clone().placed_at("domain"), parse);
    }

    #[test]
    fn an_error_within_a_group_keeps_its_value_rule_and_hint() {
        let e = Error::invalid("heads", 7, "must divide hidden").with_hint("try 8").within("model");
        assert!(e.is_at("model.heads") && e.path().is_some_and(|p| p.below("model") == Some("heads")));
        // `model.heads = 7: must divide hidden (try 8)`: the old text behind the group's name.
        assert_eq!(e.to_string(), "model.heads = 7: must divide hidden (try 8)");
        let missing = Error::MissingField { field: "scale_up.bw".into() }.within("system");
        assert_eq!(missing.to_string(), "missing field `system.scale_up.bw`");
        // An error about no field stays as it is.
        let parse = Error::Parse { message: "x".into() };
        assert_eq!(parse.clone().within("model"), parse);
    }

    #[test]
    fn a_path_is_in_its_groups_only() {
        let p = FieldPath::new("ext.recompute");
        assert!(p.is_in("ext") && p.is_in("ext.recompute") && !p.is_in("ex") && !p.is_in("ext.re"));
        assert!(!FieldPath::new("extra").is_in("ext"));
        assert_eq!((p.below("ext"), p.below("ext.recompute"), p.below("model")), (Some("recompute"), None, None));
        assert_eq!(FieldPath::new("system.scale_up.bw").below("system.scale_up"), Some("bw"));
        assert_eq!((p.group(), FieldPath::new("n_gpus").group()), ("ext", "n_gpus"));
        assert_eq!(Error::invalid("axis.devices", "0", "r").path().map(|p| p.is_in("axis")), Some(true));
        assert_eq!(Error::Parse { message: "x".into() }.path(), None);
        let e = Error::invalid("ext.recompute", "x", "r");
        assert!(
            e.is_at("ext.recompute") && !e.is_at("ext") && !e.is_at("ext.re") && !e.is_at(FieldPath::new("recompute"))
        );
        assert!(!Error::Parse { message: "x".into() }.is_at("x"));
        let owned = FieldPathBuf::new("ext.recompute");
        assert_eq!((owned.as_path(), owned.as_str(), owned.to_string()), (p, "ext.recompute", p.to_string()));
        assert_eq!(FieldPathBuf::from(p), owned);
    }

    #[test]
    fn a_long_value_is_shown_by_its_start_and_length() {
        let long: String = (1..=10_000).map(|n| n.to_string()).collect::<Vec<_>>().join(",");
        let e = Error::invalid("axis.devices", &long, "has more than 4096 values");
        let text = e.to_string();
        assert!(text.len() < 200, "{text}");
        assert!(text.starts_with("axis.devices = 1,2,3,4,5,"), "{text}");
        assert!(text.ends_with(&format!("… ({} characters): has more than 4096 values", long.len())), "{text}");
        let short = Error::invalid("model.heads", "7", "must divide hidden").to_string();
        assert_eq!(short, "model.heads = 7: must divide hidden");
        let name = Error::UnknownName { kind: "system".into(), name: "x".repeat(500), known: vec![] };
        assert!(name.to_string().contains("(500 characters)"), "{name}");
    }
}
