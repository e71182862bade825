//! Editing a model or system document as a form: one text input per leaf field of the field tables
//! ([`MODEL_FIELDS`], [`SYSTEM_FIELDS`], and for a system's exact reference parameters the
//! [`REFERENCE_SYSTEM_FIELDS`] under `preset.`), the text of each field read from a document, a
//! document built back from the texts, and every problem placed at the field it belongs to.
//!
//! The rules are the format's own: each field is checked with [`super::validate_field`] as it is
//! typed, and the whole document with [`super::parse_value`] (which adds the cross-field rules, e.g.
//! heads ≤ hidden). A form never holds a rule of its own.
//!
//! Texts: numbers as written (`989.4`, `1e12`), lists of texts one entry per line. An empty text
//! means "unknown" (`null`) for a field that accepts `null`, the documented default for an
//! optional field that does not, and is an error for a required one.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Document, parse_value, validate_field};
use crate::schema::check::{join, rule_of};
use crate::schema::emit::J;
use crate::schema::fields::{FieldSpec, Kind, REFERENCE_SYSTEM_FIELDS, SCHEMA_VERSION};
use crate::schema::model_fields::MODEL_FIELDS;
use crate::schema::system_fields::SYSTEM_FIELDS;
use crate::{Error, FieldPath};

/// The texts of a form, by dotted field path (`heads`, `scale_up.domain_size`, `preset.nvlink_size`).
pub type FormValues = BTreeMap<String, String>;

/// Path prefix of a system's exact reference parameters.
pub const PRESET_PREFIX: &str = "preset.";

/// One editable field: its spec and the prefix of its path in the document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FormField {
    /// `""`, or [`PRESET_PREFIX`] for a system's reference parameters.
    pub prefix: &'static str,
    /// The table the spec belongs to (its paths are relative to `prefix`).
    pub table: &'static [FieldSpec],
    /// Unit, description and rule of the field.
    pub spec: &'static FieldSpec,
}

impl FormField {
    /// Dotted path in the document.
    pub fn path(&self) -> String {
        format!("{}{}", self.prefix, self.spec.path)
    }

    /// The group the field belongs to: the first path segment of a nested field
    /// (`peak_tflops`, `scale_up`, `preset`, …), `""` for a top-level field.
    pub fn group(&self) -> &'static str {
        if !self.prefix.is_empty() {
            return self.prefix.trim_end_matches('.');
        }
        self.spec.path.split_once('.').map_or("", |(g, _)| g)
    }

    /// Whether the input should be several lines (lists of texts, long texts).
    pub fn multiline(&self) -> bool {
        matches!(self.spec.kind, Kind::TextList | Kind::Text { max_len: 201.. })
    }

    /// Whether an empty text is accepted: "unknown" (`null`) or "use the default".
    pub fn may_be_empty(&self) -> bool {
        !self.spec.required || self.spec.nullable
    }

    /// Checks one typed text against the field's rule. An empty text of a field that must be given
    /// is an error that names the rule.
    pub fn validate(&self, text: &str) -> Result<(), Error> {
        if text.trim().is_empty() && !self.may_be_empty() {
            return Err(Error::invalid(
                self.path(),
                "(empty)",
                format!("is required: it {}", rule_of(&self.spec.kind)),
            )
            .with_hint("enter a value"));
        }
        validate_field(self.table, self.spec.path, text).map_err(|e| with_prefix(e, self.prefix))
    }
}

/// The same error with `prefix` before its field path.
pub(crate) fn with_prefix(e: Error, prefix: &str) -> Error {
    if prefix.is_empty() {
        return e;
    }
    match e {
        Error::InvalidField { field, value, rule, hint } => {
            Error::InvalidField { field: format!("{prefix}{field}"), value, rule, hint }
        }
        Error::MissingField { field } => Error::MissingField { field: format!("{prefix}{field}") },
        Error::UnknownField { field, hint } => Error::UnknownField { field: format!("{prefix}{field}"), hint },
        other => other,
    }
}

fn leaves(prefix: &'static str, table: &'static [FieldSpec]) -> impl Iterator<Item = FormField> {
    table
        .iter()
        .filter(|s| !matches!(s.kind, Kind::Object | Kind::ReferenceSystem))
        // `empirical` must be false and `summa_nb` is ignored: nothing to edit.
        .filter(move |s| prefix.is_empty() || !matches!(s.path, "empirical" | "summa_nb"))
        .map(move |spec| FormField { prefix, table, spec })
}

/// The editable fields of a document kind in table order: `"model"`, or `"system"` (whose
/// reference parameters come last, under `preset.`). Other kinds have none.
pub fn form_fields(kind: &str) -> Vec<FormField> {
    match kind {
        "model" => leaves("", MODEL_FIELDS).collect(),
        "system" => leaves("", SYSTEM_FIELDS).chain(leaves(PRESET_PREFIX, REFERENCE_SYSTEM_FIELDS)).collect(),
        _ => Vec::new(),
    }
}

/// The value at a dotted path of a JSON object.
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |node, key| node.get(key))
}

/// The text a form shows for a JSON value: `""` for absent or `null`, numbers as JSON writes them,
/// lists one entry per line.
pub fn text_of(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Number(n)) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), number_text),
        Some(other) => other.to_string(),
    }
}

/// A real number as a form shows it: integral values without `.0` (`141`), very large and very
/// small ones with an exponent (`1e12`, `2.5e-6`); always the shortest text that reads back as
/// the same number.
pub fn number_text(x: f64) -> String {
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e9).contains(&a) {
        format!("{x:e}")
    } else if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// The texts of every field of `kind` read from a document's JSON (fields it lacks are empty).
pub fn values_of(kind: &str, doc: &Value) -> FormValues {
    // `extend`, not `collect`: a collected map sorts with its own copy of the sort code
    // (`crate::sort`); inserting keeps the same map.
    let mut out = FormValues::new();
    out.extend(form_fields(kind).iter().map(|f| (f.path(), text_of(at(doc, &f.path())))));
    out
}

/// The texts of every field of a model or system document.
pub fn values_of_document(doc: &Document) -> FormValues {
    let tree: Value = serde_json::from_str(&super::to_json(doc)).unwrap_or(Value::Null);
    values_of(doc.kind(), &tree)
}

/// The JSON value a typed text stands for (before any check): numbers for numeric kinds when the
/// text is a JSON number (else the text, so that the check names what was typed), lines for lists.
fn value_of(spec: &FieldSpec, text: &str) -> Value {
    let t = text.trim();
    match spec.kind {
        Kind::Int { .. } | Kind::Num { .. } | Kind::Bool => serde_json::from_str::<Value>(t)
            .ok()
            .filter(|v| !v.is_object() && !v.is_array())
            .unwrap_or_else(|| t.into()),
        Kind::TextList => {
            Value::Array(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(Value::from).collect())
        }
        _ => Value::String(t.to_string()),
    }
}

fn insert(root: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        None => {
            root.insert(path.to_string(), v);
        }
        Some((head, rest)) => {
            let child = root.entry(head.to_string()).or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(m) = child {
                insert(m, rest, v);
            }
        }
    }
}

/// The versioned document (`schema_version`, `kind`, then the fields) the texts describe. An empty
/// text is `null` (unknown) for a field that accepts it — inside an optional object only when the
/// object has a given field — and is left out otherwise; the objects a kind requires
/// (`peak_tflops`, `scale_up`, `scale_out`) are always written.
pub fn document_of(kind: &str, values: &FormValues) -> Value {
    let mut root = Map::new();
    root.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
    root.insert("kind".into(), Value::from(kind));
    if kind == "system" {
        for required in ["peak_tflops", "scale_up", "scale_out"] {
            root.insert(required.into(), Value::Object(Map::new()));
        }
    }
    let fields = form_fields(kind);
    let given = |path: &str| values.get(path).is_some_and(|t| !t.trim().is_empty());
    for f in &fields {
        let path = f.path();
        if given(&path) {
            insert(&mut root, &path, value_of(f.spec, &values[&path]));
        } else if f.spec.nullable && f.prefix.is_empty() {
            // Inside an optional object, unknown children are written only when the object is.
            let written = match f.spec.path.rsplit_once('.') {
                None => true,
                Some((parent, _)) => {
                    let inner = format!("{parent}.");
                    f.table.iter().find(|p| p.path == parent).is_none_or(|p| p.required)
                        || fields.iter().any(|s| s.spec.path.starts_with(&inner) && given(&s.path()))
                }
            };
            if written {
                insert(&mut root, &path, Value::Null);
            }
        }
    }
    Value::Object(root)
}

/// The document the texts describe as pretty-printed JSON with the fields in table order
/// (`schema_version` and `kind` first), even while some texts are invalid: what a JSON view shows.
pub fn document_text(kind: &str, values: &FormValues) -> String {
    let mut order = vec!["schema_version".to_string(), "kind".to_string()];
    order.extend(form_fields(kind).iter().map(FormField::path));
    ordered(&document_of(kind, values), "", &order).render()
}

fn ordered(v: &Value, prefix: &str, order: &[String]) -> J {
    match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(n) => n.as_u64().map_or_else(|| J::Num(n.as_f64().unwrap_or(f64::NAN)), J::Int),
        Value::String(t) => J::Str(t.clone()),
        Value::Array(items) => J::Arr(items.iter().map(|i| ordered(i, prefix, order)).collect()),
        Value::Object(m) => {
            let rank = |key: &str| {
                let path = join(prefix, key);
                let inner = format!("{path}.");
                order.iter().position(|p| *p == path || p.starts_with(&inner)).unwrap_or(usize::MAX)
            };
            let mut keys: Vec<&String> = m.keys().collect();
            crate::sort::sort_by_key(&mut keys, |k| rank(k));
            J::Obj(keys.into_iter().map(|k| (k.clone(), ordered(&m[k], &join(prefix, k), order))).collect())
        }
    }
}

/// Everything the form needs to show after a change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FormCheck {
    /// Problems by field path (each field's own rule first, then cross-field rules).
    pub field_errors: BTreeMap<String, Vec<Error>>,
    /// Problems that belong to no single field of the form.
    pub other_errors: Vec<Error>,
    /// Warnings (the document is usable), by field path; `""` for the document as a whole.
    pub warnings: BTreeMap<String, Vec<Error>>,
    /// The document, when there is no problem at all.
    pub document: Option<Document>,
}

impl FormCheck {
    /// Whether the form can be saved.
    pub fn is_valid(&self) -> bool {
        self.document.is_some()
    }

    /// Every problem, field problems first (for a summary).
    pub fn all_errors(&self) -> Vec<&Error> {
        self.field_errors.values().flatten().chain(self.other_errors.iter()).collect()
    }
}

/// The form field a problem at `path` belongs to: the field itself, the list holding an entry
/// (`sources[2]` → `sources`), or the first field inside an object (`training_budget` →
/// `training_budget.tokens`).
pub fn field_for(kind: &str, path: &str) -> Option<String> {
    let fields = form_fields(kind);
    let base = path.split('[').next().unwrap_or(path);
    if let Some(f) = fields.iter().find(|f| f.path() == base) {
        return Some(f.path());
    }
    fields.iter().map(FormField::path).find(|p| FieldPath::new(p).below(base).is_some())
}

/// Checks every field of a form and the document they make together.
pub fn check_form(kind: &str, values: &FormValues) -> FormCheck {
    let mut out = FormCheck::default();
    for f in form_fields(kind) {
        let text = values.get(&f.path()).map(String::as_str).unwrap_or("");
        let in_preset = !f.prefix.is_empty();
        if in_preset && !has_preset(values) {
            continue;
        }
        if let Err(e) = f.validate(text) {
            out.field_errors.entry(f.path()).or_default().push(e);
        }
    }
    match parse_value(&document_of(kind, values)) {
        Ok(parsed) => {
            for w in parsed.warnings {
                let at = w.field().and_then(|p| field_for(kind, p)).unwrap_or_default();
                out.warnings.entry(at).or_default().push(w);
            }
            if out.field_errors.is_empty() {
                out.document = Some(parsed.document);
            }
        }
        Err(errors) => {
            for e in errors {
                match e.field().and_then(|p| field_for(kind, p)) {
                    // The field's own check already said what is wrong with it.
                    Some(p) if out.field_errors.contains_key(&p) && e.is_at(p.as_str()) => {}
                    Some(p) => {
                        let list = out.field_errors.entry(p).or_default();
                        if !list.contains(&e) {
                            list.push(e);
                        }
                    }
                    None => out.other_errors.push(e),
                }
            }
        }
    }
    out
}

/// Whether any reference parameter (`preset.*`) is given.
pub fn has_preset(values: &FormValues) -> bool {
    values.iter().any(|(k, v)| k.starts_with(PRESET_PREFIX) && !v.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_fields_follow_the_system_fields() {
        let fields = form_fields("system");
        let first_preset = fields.iter().position(|f| f.group() == "preset").unwrap();
        assert!(fields[first_preset..].iter().all(|f| f.prefix == PRESET_PREFIX));
        assert!(!fields.iter().any(|f| f.path() == "preset.empirical"));
        assert!(form_fields("scenario").is_empty());
    }

    #[test]
    fn document_text_keeps_table_order() {
        let mut v = FormValues::new();
        v.insert("id".into(), "x".into());
        v.insert("heads".into(), "-4".into());
        v.insert("training_budget.tokens".into(), "1e12".into());
        let text = document_text("model", &v);
        let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(pos("schema_version") < pos("kind") && pos("kind") < pos("id") && pos("id") < pos("seq_len"));
        assert!(pos("heads") < pos("layers") && pos("layers") < pos("training_budget"));
        let mut back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["heads"].as_f64(), Some(-4.0));
        back["heads"] = Value::from(-4);
        assert_eq!(back, document_of("model", &v));
    }

    #[test]
    fn texts_round_trip_through_values() {
        let v = serde_json::json!({"a": [ "x", "y" ], "n": 1e12, "s": "t"});
        assert_eq!(text_of(v.get("a")), "x\ny");
        assert_eq!(text_of(v.get("s")), "t");
        assert_eq!(text_of(v.get("missing")), "");
        assert_eq!(text_of(v.get("n")), "1e12");
        for x in [141.0, 989.4, 2.5e-6, 1e-12, 3e11, 0.7, 1.0 / 3.0, 123456789.5, 0.0, -2.0] {
            let t = number_text(x);
            assert_eq!(t.parse::<f64>().unwrap(), x, "{t}");
        }
        assert_eq!(
            (number_text(141.0), number_text(2.5e-6), number_text(3e11)),
            ("141".into(), "2.5e-6".into(), "3e11".into())
        );
    }
}
