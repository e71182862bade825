//! The schema of fmperf's versioned JSON format, below both the catalog and the format: the field
//! tables of every document kind (their vocabulary and the small tables in [`fields`], the model's
//! in [`model_fields`], the system's in [`system_fields`]), the generic validator that checks a JSON object
//! against a table and collects every problem ([`check`]), the ordered JSON writer ([`emit`]), the
//! reference's own model and system JSON ([`reference`]) and the envelope every versioned document
//! opens with ([`read_kind`]: `schema_version` and `kind`).
//!
//! The catalog reads its compiled-in entries with these (its model and system documents,
//! `catalog::model_doc`, `catalog::system_doc`); `crate::format` reads whole documents (scenarios
//! too) with them. This module depends only on the value types and `hint`, so neither closes a
//! cycle through it (the tidy test's `no_module_cycles`).

pub mod check;
pub mod emit;
pub mod fields;
pub mod model_fields;
pub mod reference;
pub mod system_fields;

use serde_json::{Map, Value};

use crate::{Error, hint};
use check::Problems;
use fields::SCHEMA_VERSION;

/// Checks the envelope of a versioned document (`schema_version` is [`SCHEMA_VERSION`], `kind` one
/// of [`fields::KIND_NAMES`]), reporting each problem, and gives its kind: the declared one, else
/// the one its keys suggest (so that the body still gets checked), else `None`.
pub(crate) fn read_kind(obj: &Map<String, Value>, report: &mut Problems) -> Option<&'static str> {
    match obj.get("schema_version") {
        None => report.error(Error::MissingField { field: "schema_version".to_string() }),
        Some(v) => match check::as_integer(v) {
            Some(SCHEMA_VERSION) => {}
            Some(n) if n > SCHEMA_VERSION => report.error(
                Error::invalid(
                    "schema_version",
                    n,
                    format!("is not supported: this fmperf reads schema_version {SCHEMA_VERSION}"),
                )
                .with_hint("the file was written by a newer fmperf; update fmperf"),
            ),
            _ => report.error(
                Error::invalid("schema_version", check::show(v), format!("must be {SCHEMA_VERSION}"))
                    .with_hint(format!("write \"schema_version\": {SCHEMA_VERSION}")),
            ),
        },
    }
    let declared = match obj.get("kind") {
        None => {
            report.error(Error::MissingField { field: "kind".to_string() });
            None
        }
        Some(v) => match v.as_str().and_then(|k| fields::KIND_NAMES.iter().find(|n| **n == k)) {
            Some(k) => Some(*k),
            None => {
                let e =
                    Error::invalid("kind", check::show(v), format!("must be one of {}", fields::KIND_NAMES.join(", ")));
                report.error(match v.as_str().and_then(|s| hint::nearest(s, fields::KIND_NAMES.iter().copied())) {
                    Some(n) => e.with_hint(format!("did you mean `{n}`?")),
                    None => e,
                });
                None
            }
        },
    };
    declared.or_else(|| guess_kind(obj))
}

/// Guesses a document kind from its keys (used when `kind` is missing or wrong, so that the body
/// still gets checked).
fn guess_kind(obj: &Map<String, Value>) -> Option<&'static str> {
    let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
    if has(&["devices", "global_batch", "strategies", "top_k"]) {
        Some("scenario")
    } else if has(&["peak_tflops", "scale_up", "scale_out", "memory_gb", "memory_bw_gbps"]) {
        Some("system")
    } else if has(&["seq_len", "hidden", "heads", "layers", "ffn_hidden"]) {
        Some("model")
    } else {
        None
    }
}
