//! fmperf's one versioned JSON input format, and the reference's own formats.
//!
//! A document is an object with `"schema_version": 1` and `"kind"`: `"model"`, `"system"` or
//! `"scenario"` (fields in [`fields`]). Without them, the reference's model JSON
//! (`{"l","e","h","depth"[,"f"]}`) and system JSON (`systems/config-<name>.json`) are recognised
//! by their keys and imported. [`parse`] reports every problem of a document at once (for an
//! editor to mark every field), each naming the dotted field path, the value, the rule and a fix;
//! unknown fields get a "did you mean" hint. Nothing here panics on any input.
//!
//! [`to_json`] writes any document back in the versioned format; `parse(to_json(d)) == d`.

pub mod custom_store;
pub mod form;
pub mod notes;
pub mod scenario;

use serde_json::{Map, Value};

use crate::schema::check::Problems;
use crate::schema::fields::{FieldSpec, Kind, SCENARIO_FIELDS};
use crate::schema::model_fields::MODEL_FIELDS;
use crate::schema::system_fields::SYSTEM_FIELDS;
use crate::schema::{check, emit, fields, reference};

use crate::catalog::{CatalogModel, CatalogSystem, model_doc, system_doc};
use crate::resolve::Scenario;
use crate::{Error, ModelShape, SystemParams};

/// Largest document accepted, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 8 << 20;

/// A parsed document.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one document at a time; boxing would only burden callers
pub enum Document {
    /// A model (`"kind": "model"`, or the reference's model JSON).
    Model(CatalogModel),
    /// A system (`"kind": "system"`, or the reference's system JSON).
    System(CatalogSystem),
    /// A scenario (`"kind": "scenario"`).
    Scenario(Scenario),
}

impl Document {
    /// `"model"`, `"system"` or `"scenario"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Document::Model(_) => "model",
            Document::System(_) => "system",
            Document::Scenario(_) => "scenario",
        }
    }
}

/// Which format a document was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentFormat {
    /// fmperf's versioned format.
    Versioned,
    /// The reference's model JSON (`l`, `e`, `h`, `depth`, optional `f`).
    ReferenceModel,
    /// The reference's system JSON (spec §1.2).
    ReferenceSystem,
}

impl DocumentFormat {
    /// A description for messages.
    pub fn describe(self) -> &'static str {
        match self {
            DocumentFormat::Versioned => "fmperf document, schema version 1",
            DocumentFormat::ReferenceModel => "reference-format model JSON (imported)",
            DocumentFormat::ReferenceSystem => "reference-format system JSON (imported)",
        }
    }
}

/// A document with the format it came in and the warnings it raised.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The document.
    pub document: Document,
    /// The format it was written in.
    pub origin: DocumentFormat,
    /// Things worth knowing that did not make it invalid (each names field, value, rule, hint).
    pub warnings: Vec<Error>,
}

/// Parses a document in any supported format. On failure, every problem found.
pub fn parse(text: &str) -> Result<Document, Vec<Error>> {
    parse_detailed(text).map(|p| p.document)
}

/// Parses a document and also returns its format and warnings.
pub fn parse_detailed(text: &str) -> Result<Parsed, Vec<Error>> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(vec![Error::Parse {
            message: format!(
                "document of {} bytes is larger than the {} bytes accepted",
                text.len(),
                MAX_DOCUMENT_BYTES
            ),
        }]);
    }
    let value: Value =
        crate::strict_json::parse(text).map_err(|e| vec![Error::Parse { message: format!("not valid JSON: {e}") }])?;
    parse_value(&value)
}

/// Parses an already decoded JSON value.
pub fn parse_value(value: &Value) -> Result<Parsed, Vec<Error>> {
    let Some(obj) = value.as_object() else {
        let got = match value {
            Value::Array(_) => "a list",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(vec![Error::Parse {
            message: format!("expected a JSON object {{…}} at the top level, got {got}"),
        }]);
    };
    let mut report = Problems::default();
    let versioned = obj.contains_key("schema_version") || obj.contains_key("kind");
    let (document, origin) = if !versioned && reference::looks_like_model(obj) {
        let shape = reference::read_reference_model(obj, &mut report);
        let doc = shape.map(|s| {
            Document::Model(CatalogModel::from_shape(
                "custom",
                "model from reference JSON",
                s,
                "user file (reference model JSON)",
            ))
        });
        (doc, DocumentFormat::ReferenceModel)
    } else if !versioned && reference::looks_like_system(obj) {
        let params = reference::read_reference_system(obj, "", &mut report);
        let doc = params.map(|p| {
            Document::System(CatalogSystem::from_params(
                "custom",
                "system from reference JSON",
                p,
                vec!["user file (reference system JSON)".to_string()],
                Vec::new(),
            ))
        });
        (doc, DocumentFormat::ReferenceSystem)
    } else {
        (read_versioned(obj, &mut report), DocumentFormat::Versioned)
    };
    match document {
        Some(document) if report.errors.is_empty() => Ok(Parsed { document, origin, warnings: report.warnings }),
        _ => {
            if report.errors.is_empty() {
                report.error(Error::Parse { message: "document could not be read".to_string() });
            }
            Err(report.errors)
        }
    }
}

fn read_versioned(obj: &Map<String, Value>, report: &mut Problems) -> Option<Document> {
    let envelope = ["schema_version", "kind"];
    match crate::schema::read_kind(obj, report)? {
        "model" => model_doc::read_model(obj, "", &envelope, report).map(Document::Model),
        "system" => system_doc::read_system(obj, "", &envelope, report).map(Document::System),
        _ => scenario::read_scenario(obj, report).map(Document::Scenario),
    }
}

/// Writes a document in the versioned format (pretty-printed, `schema_version` and `kind` first).
pub fn to_json(doc: &Document) -> String {
    to_tree(doc).render()
}

/// The versioned-format tree of a document, for embedding it in a larger JSON output.
pub fn to_tree(doc: &Document) -> emit::J {
    match doc {
        Document::Model(m) => model_doc::write_model(m, true),
        Document::System(s) => system_doc::write_system(s, true),
        Document::Scenario(s) => scenario::write_scenario(s),
    }
}

/// Writes a model shape in the reference's model JSON.
pub fn model_to_reference_json(shape: &ModelShape) -> String {
    reference::model_json(shape).render()
}

/// Writes system parameters in the reference's system JSON.
pub fn system_to_reference_json(params: &SystemParams) -> String {
    reference::system_json(params).render()
}

/// The field table of a document kind (`"model"`, `"system"`, `"scenario"`), for form labels.
pub fn fields_of(kind: &str) -> Option<&'static [FieldSpec]> {
    match kind {
        "model" => Some(MODEL_FIELDS),
        "system" => Some(SYSTEM_FIELDS),
        "scenario" => Some(SCENARIO_FIELDS),
        _ => None,
    }
}

/// Checks one form field of a model (`path` as in [`MODEL_FIELDS`], value as typed). An empty value
/// means "not given".
pub fn validate_model_field(path: &str, value: &str) -> Result<(), Error> {
    validate_field(MODEL_FIELDS, path, value)
}

/// Checks one form field of a system (`path` as in [`SYSTEM_FIELDS`], e.g. `scale_up.domain_size`).
pub fn validate_system_field(path: &str, value: &str) -> Result<(), Error> {
    validate_field(SYSTEM_FIELDS, path, value)
}

/// Checks one form field of a scenario (`path` as in [`SCENARIO_FIELDS`]); `model` and `system`
/// ids are looked up in the catalogs.
pub fn validate_scenario_field(path: &str, value: &str) -> Result<(), Error> {
    validate_field(SCENARIO_FIELDS, path, value)?;
    let id = value.trim();
    if id.starts_with('{') || id.is_empty() {
        return Ok(());
    }
    match path {
        "model" => crate::resolve::builtin_model(id).map(|_| ()),
        "system" => crate::resolve::builtin_system(id).map(|_| ()),
        _ => Ok(()),
    }
}

/// Checks one value typed into a form against the field `path` of `table`.
pub fn validate_field(table: &'static [FieldSpec], path: &str, value: &str) -> Result<(), Error> {
    let Some(spec) = fields::spec(table, path) else {
        let known: Vec<&str> = table.iter().map(|s| s.path).collect();
        return Err(Error::UnknownField { field: path.to_string(), hint: Some(check::unknown_hint(path, &known)) });
    };
    let t = value.trim();
    if t.is_empty() {
        return if spec.required && !spec.nullable {
            Err(Error::MissingField { field: path.to_string() })
        } else {
            Ok(())
        };
    }
    let as_json = || serde_json::from_str::<Value>(t).unwrap_or_else(|_| Value::String(t.to_string()));
    let v = match spec.kind {
        Kind::Text { .. } | Kind::Id | Kind::Choice(_) => Value::String(t.to_string()),
        Kind::ModelRef | Kind::SystemRef if !t.starts_with('{') => Value::String(t.to_string()),
        Kind::TextList if !t.starts_with('[') => Value::Array(vec![Value::String(t.to_string())]),
        Kind::ChoiceList(_) if !t.starts_with('[') => {
            Value::Array(t.split(',').map(|s| Value::String(s.trim().to_string())).collect())
        }
        _ => as_json(),
    };
    check::check_value(spec, &v, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_validators() {
        assert!(validate_model_field("heads", "96").is_ok());
        assert!(validate_model_field("heads", "0").is_err());
        assert!(validate_model_field("heads", "1.5").is_err());
        assert!(validate_model_field("heads", "abc").is_err());
        assert!(validate_model_field("seq_len", "").is_ok());
        assert!(validate_model_field("mlp", "swiglu").is_ok());
        let e = validate_model_field("mlp", "swiglo").unwrap_err().to_string();
        assert!(e.contains("did you mean `swiglu`"), "{e}");
        let e = validate_model_field("hiden", "1").unwrap_err().to_string();
        assert!(e.contains("`hidden`"), "{e}");
        assert!(validate_system_field("scale_up.domain_size", "72").is_ok());
        assert!(validate_system_field("network.scale_up_eff", "1.5").is_err());
        assert!(validate_scenario_field("strategies", "1d, 2d-seqp").is_ok());
        assert!(validate_scenario_field("strategies", "1d,3d").is_err());
        assert!(validate_scenario_field("model", "gpt3_1T").is_ok());
        assert!(validate_scenario_field("model", "gpt4").is_err());
    }
}
