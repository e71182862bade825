//! The generic validator: checks a JSON object against a field table ([`super::fields`]), collecting
//! every problem (unknown fields with a hint, missing fields, wrong types, out-of-range values), and
//! typed reads of values that passed.

use crate::vocab::Note;
use serde_json::{Map, Value};

use super::fields::{ALIASES, FieldSpec, Kind};
use crate::Error;
use crate::hint;

/// Problems found while reading a document: `errors` make it invalid, `warnings` do not.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Problems {
    /// Problems that make the document unusable.
    pub errors: Vec<Error>,
    /// Things worth knowing that do not stop the document from being used.
    pub warnings: Vec<Error>,
}

impl Problems {
    /// Adds an error.
    pub fn error(&mut self, e: Error) {
        self.errors.push(e);
    }
    /// Adds a warning.
    pub fn warn(&mut self, e: Error) {
        self.warnings.push(e);
    }
}

/// Whether a check since error index `start` failed on `path` (cross-field rules skip such fields).
pub(crate) fn failed(report: &Problems, start: usize, path: &str) -> bool {
    report.errors[start..].iter().any(|e| e.is_at(path))
}

/// A short rendering of a JSON value for messages: strings quoted, long values cut.
pub fn show(v: &Value) -> String {
    let s = match v {
        Value::Object(_) => "{…}".to_string(),
        Value::Array(a) if a.len() > 4 => format!("[… {} items]", a.len()),
        other => other.to_string(),
    };
    if s.chars().count() > 60 { format!("{}…", s.chars().take(57).collect::<String>()) } else { s }
}

/// `a.b` joined, or `b` when `a` is empty.
pub fn join(a: &str, b: &str) -> String {
    if a.is_empty() { b.to_string() } else { format!("{a}.{b}") }
}

/// The byte index of the last `.` of a spec path (a dot is one byte in UTF-8, never inside
/// another character: a byte search finds what `rsplit_once('.')` finds, without the generic
/// pattern's cost, which the page's catalog load spent a share of its time on).
fn last_dot(path: &str) -> Option<usize> {
    path.bytes().rposition(|b| b == b'.')
}

fn parent(path: &str) -> &str {
    last_dot(path).map(|i| &path[..i]).unwrap_or("")
}

fn leaf(path: &str) -> &str {
    last_dot(path).map(|i| &path[i + 1..]).unwrap_or(path)
}

/// A JSON number as an exact integer, if it is one (accepts `12288.0` and `1e3`).
pub fn as_integer(v: &Value) -> Option<u64> {
    if let Some(u) = v.as_u64() {
        return Some(u);
    }
    let x = v.as_f64()?;
    (x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9.007_199_254_740_992e15).then_some(x as u64)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn quoted_number_hint(v: &Value) -> Option<String> {
    let s = v.as_str()?;
    s.trim().parse::<f64>().ok().map(|_| format!("write the number without quotes: {}", s.trim()))
}

fn fmt_bound(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e6 || x.abs() < 1e-3) { format!("{x:e}") } else { format!("{x}") }
}

/// The rule of a kind in words ("must be an integer from 1 to 65536").
pub fn rule_of(kind: &Kind) -> String {
    match kind {
        Kind::Int { min, max } if min == max => format!("must be {min}"),
        Kind::Int { min, max } => format!("must be an integer from {min} to {max}"),
        Kind::Num { min, min_open: true, max } => {
            format!("must be a number greater than {} and at most {}", fmt_bound(*min), fmt_bound(*max))
        }
        Kind::Num { min, min_open: false, max } => {
            format!("must be a number from {} to {}", fmt_bound(*min), fmt_bound(*max))
        }
        Kind::Text { max_len } => format!("must be a text of at most {max_len} characters"),
        Kind::Id => "must be 1 to 64 characters from A-Z a-z 0-9 . _ -".to_string(),
        Kind::TextList => "must be a list of texts".to_string(),
        Kind::Choice(names) => format!("must be one of {}", names.join(", ")),
        Kind::ChoiceList(names) => format!("must be a non-empty list of distinct names from {}", names.join(", ")),
        Kind::Bool => "must be true or false".to_string(),
        Kind::Object | Kind::ReferenceSystem => "must be an object".to_string(),
        Kind::ModelRef => "must be a model catalog id (text) or a model object".to_string(),
        Kind::SystemRef => "must be a system catalog id (text) or a system object".to_string(),
    }
}

/// Checks one value against a field's kind (not the contents of nested objects).
pub fn check_value(spec: &FieldSpec, v: &Value, path: &str) -> Result<(), Error> {
    let bad = |rule: String| Error::invalid(path, show(v), rule);
    if v.is_null() {
        if spec.nullable {
            return Ok(());
        }
        let hint = if spec.required { "give a value" } else { "give a value or leave the field out" };
        return Err(bad(format!("must not be null; {}", rule_of(&spec.kind))).with_hint(hint));
    }
    match spec.kind {
        Kind::Int { min, max } => {
            let Some(x) = v.as_f64().filter(|_| v.is_number()) else {
                let e = bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)));
                return Err(match quoted_number_hint(v) {
                    Some(h) => e.with_hint(h),
                    None => e,
                });
            };
            if x.fract() != 0.0 {
                return Err(bad(rule_of(&spec.kind)).with_hint(format!("round to a whole number, e.g. {}", x.round())));
            }
            let n = as_integer(v);
            match n {
                Some(n) if n >= min && n <= max => Ok(()),
                _ if x < min as f64 && min == 1 => Err(bad(rule_of(&spec.kind)).with_hint(if x < 0.0 {
                    "negative counts are meaningless"
                } else {
                    "zero is not allowed here"
                })),
                _ => Err(bad(rule_of(&spec.kind))),
            }
        }
        Kind::Num { min, min_open, max } => {
            let Some(x) = v.as_f64().filter(|_| v.is_number()) else {
                let e = bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)));
                return Err(match quoted_number_hint(v) {
                    Some(h) => e.with_hint(h),
                    None => e,
                });
            };
            let low_ok = if min_open { x > min } else { x >= min };
            if x.is_finite() && low_ok && x <= max {
                Ok(())
            } else {
                let e = bad(rule_of(&spec.kind));
                Err(if spec.unit.is_empty() { e } else { e.with_hint(format!("the unit is {}", spec.unit)) })
            }
        }
        Kind::Text { max_len } => match v.as_str() {
            Some(s) if s.chars().count() <= max_len => Ok(()),
            Some(_) => Err(bad(rule_of(&spec.kind)).with_hint("shorten it")),
            None => Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)))),
        },
        Kind::Id => match v.as_str() {
            Some(s) if valid_id(s) => Ok(()),
            Some(s) => {
                let fixed: String = s
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
                    .take(64)
                    .collect();
                let e = bad(rule_of(&spec.kind));
                Err(if valid_id(&fixed) { e.with_hint(format!("e.g. `{fixed}`")) } else { e })
            }
            None => Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)))),
        },
        Kind::TextList => match v.as_array() {
            Some(items) if items.len() <= 500 => {
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some(s) if s.chars().count() <= 4000 => {}
                        Some(_) => {
                            return Err(Error::invalid(
                                format!("{path}[{i}]"),
                                show(item),
                                "must be at most 4000 characters",
                            ));
                        }
                        None => {
                            return Err(Error::invalid(
                                format!("{path}[{i}]"),
                                show(item),
                                format!("must be a text (got {})", type_name(item)),
                            ));
                        }
                    }
                }
                Ok(())
            }
            Some(_) => Err(bad("must have at most 500 entries".into())),
            None if v.is_string() => Err(bad(rule_of(&spec.kind)).with_hint(format!("write [{}]", v))),
            None => Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)))),
        },
        Kind::Choice(names) => match v.as_str() {
            Some(s) if names.contains(&s) => Ok(()),
            Some(s) => {
                let e = bad(rule_of(&spec.kind));
                Err(match hint::nearest(s, names.iter().copied()) {
                    Some(n) => e.with_hint(format!("did you mean `{n}`?")),
                    None => e,
                })
            }
            None => Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)))),
        },
        Kind::ChoiceList(names) => {
            let Some(items) = v.as_array() else {
                let e = bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v)));
                return Err(if v.is_string() { e.with_hint(format!("write [{v}]")) } else { e });
            };
            if items.is_empty() {
                return Err(bad(rule_of(&spec.kind)).with_hint("leave the field out to use the default"));
            }
            let mut seen: Vec<&str> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}[{i}]");
                match item.as_str() {
                    Some(s) if names.contains(&s) => {
                        if seen.contains(&s) {
                            return Err(
                                Error::invalid(p, show(item), "appears twice").with_hint("remove the repetition")
                            );
                        }
                        seen.push(s);
                    }
                    Some(s) => {
                        let e = Error::invalid(p, show(item), format!("must be one of {}", names.join(", ")));
                        return Err(match hint::nearest(s, names.iter().copied()) {
                            Some(n) => e.with_hint(format!("did you mean `{n}`?")),
                            None => e,
                        });
                    }
                    None => {
                        return Err(Error::invalid(p, show(item), format!("must be a name (got {})", type_name(item))));
                    }
                }
            }
            Ok(())
        }
        Kind::Bool => {
            if v.is_boolean() {
                Ok(())
            } else {
                Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v))))
            }
        }
        Kind::Object | Kind::ReferenceSystem => {
            if v.is_object() {
                Ok(())
            } else {
                Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v))))
            }
        }
        Kind::ModelRef | Kind::SystemRef => {
            if v.is_object() || v.is_string() {
                Ok(())
            } else {
                Err(bad(format!("{} (got {})", rule_of(&spec.kind), type_name(v))))
            }
        }
    }
}

/// Whether `s` is a valid identifier.
pub fn valid_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Hint for an unknown key: an alias of another tool, else the nearest known name at that level.
pub fn unknown_hint(key: &str, known: &[&str]) -> String {
    if let Some((_, ours)) = ALIASES.iter().find(|(alias, ours)| *alias == key && known.contains(ours)) {
        return format!("did you mean `{ours}`?");
    }
    match hint::nearest(key, known.iter().copied()) {
        Some(n) => format!("did you mean `{n}`?"),
        None => format!("known fields here: {}", known.join(", ")),
    }
}

/// Checks the object `obj` found at spec path `base` (`""` for the root) of `table`; paths in
/// messages get `prefix`. `extra_known` are keys accepted at this level without a spec (handled by
/// the caller). Recurses into nested objects. Every problem goes into `report`.
pub fn walk(
    table: &'static [FieldSpec],
    base: &str,
    obj: &Map<String, Value>,
    prefix: &str,
    extra_known: &[&str],
    report: &mut Problems,
) {
    let level: Vec<&'static FieldSpec> = table.iter().filter(|s| parent(s.path) == base).collect();
    let mut known: Vec<&str> = level.iter().map(|s| leaf(s.path)).collect();
    known.extend_from_slice(extra_known);
    // Membership by binary search in a sorted copy (`known` keeps its order for the hints).
    let mut sorted = known.clone();
    crate::sort::sort(&mut sorted);
    for key in obj.keys() {
        if sorted.binary_search(&key.as_str()).is_err() {
            let shown: String = key.chars().take(60).collect();
            report.error(Error::UnknownField {
                field: format!("{prefix}{}", join(base, &shown)),
                hint: Some(unknown_hint(key, &known)),
            });
        }
    }
    for spec in level {
        let path = format!("{prefix}{}", spec.path);
        match obj.get(leaf(spec.path)) {
            None if spec.required => report.error(Error::MissingField { field: path }),
            None => {}
            Some(v) => match check_value(spec, v, &path) {
                Err(e) => report.error(e),
                Ok(()) => {
                    if let (Kind::Object, Some(child)) = (spec.kind, v.as_object()) {
                        walk(table, spec.path, child, prefix, &[], report);
                    }
                }
            },
        }
    }
}

/// Typed reads of an object that [`walk`] accepted. Absent and `null` both read as `None`.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    /// Reads the object `v` (an empty view if it is not one).
    pub fn of(v: &'a Value) -> Fields<'a> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        Fields { map: v.as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new)) }
    }
    /// Reads an object's map.
    pub fn from_map(map: &'a Map<String, Value>) -> Fields<'a> {
        Fields { map }
    }
    /// The raw value of a key.
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }
    /// Whether the key is present (even as `null`).
    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }
    /// An integer field.
    pub fn int(&self, key: &str) -> Option<u64> {
        self.raw(key).and_then(as_integer)
    }
    /// A number field.
    pub fn num(&self, key: &str) -> Option<f64> {
        self.raw(key).and_then(Value::as_f64)
    }
    /// A text field.
    pub fn text(&self, key: &str) -> Option<String> {
        self.raw(key).and_then(Value::as_str).map(str::to_string)
    }
    /// A boolean field.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.raw(key).and_then(Value::as_bool)
    }
    /// A list-of-texts field (empty when absent).
    pub fn texts(&self, key: &str) -> Vec<String> {
        self.raw(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    }
    /// A list-of-texts field read as the notes a document states (empty when absent).
    pub fn notes(&self, key: &str) -> Vec<Note> {
        self.texts(key).into_iter().map(Note::stated).collect()
    }
    /// A nested object.
    pub fn obj(&self, key: &str) -> Option<Fields<'a>> {
        self.raw(key).filter(|v| v.is_object()).map(Fields::of)
    }
}

#[cfg(test)]
mod tests {
    use super::super::model_fields::MODEL_FIELDS;
    use super::*;
    use serde_json::json;

    fn errors_of(v: Value) -> Vec<Error> {
        let mut r = Problems::default();
        walk(MODEL_FIELDS, "", v.as_object().unwrap(), "", &["schema_version", "kind"], &mut r);
        r.errors
    }

    #[test]
    fn reports_every_problem_with_paths() {
        let errs = errors_of(json!({"id": "x", "seq_len": 0, "hidden": "12", "heads": 1.5, "layerz": 3}));
        let fields: Vec<_> = errs.iter().filter_map(|e| e.field()).collect();
        assert!(fields.contains(&"seq_len"), "{errs:?}");
        assert!(fields.contains(&"hidden"));
        assert!(fields.contains(&"heads"));
        assert!(fields.contains(&"layerz"));
        assert!(fields.contains(&"layers"), "missing layers must be reported too");
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert!(text.iter().any(|t| t.contains("did you mean `layers`")), "{text:?}");
        assert!(text.iter().any(|t| t.contains("without quotes")), "{text:?}");
    }

    #[test]
    fn aliases_and_nested_paths() {
        let errs = errors_of(json!({"id": "x", "seq_len": 1, "hidden": 2, "heads": 1, "layers": 1,
            "num_key_value_heads": 1, "training_budget": {"tokenz": 5}}));
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert!(text.iter().any(|t| t.contains("num_key_value_heads") && t.contains("`kv_heads`")), "{text:?}");
        assert!(text.iter().any(|t| t.contains("training_budget.tokenz") && t.contains("`tokens`")), "{text:?}");
    }

    #[test]
    fn integers_accept_integral_floats() {
        assert!(errors_of(json!({"id": "x", "seq_len": 2048.0, "hidden": 1e3, "heads": 8, "layers": 2})).is_empty());
    }
}
