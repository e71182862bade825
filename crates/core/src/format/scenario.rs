//! A whole scenario document (`"kind": "scenario"`): model + system + domain size + device count +
//! global batch + strategies + top-k + training budget, read into and written from the resolver's
//! [`Scenario`] (which resolves it into the models' inputs).

use serde_json::{Map, Value};

use super::model_doc::{read_budget, read_model, write_budget, write_model};
use super::system_doc::{read_system, write_system};
use crate::resolve::{self, ModelRef, Scenario, SystemRef, UserEntries};
use crate::schema::check::{Fields, Problems, failed, walk};
use crate::schema::emit::J;
use crate::schema::fields::{SCENARIO_FIELDS, SCHEMA_VERSION};
use crate::{Error, Strategy};

fn check_envelope(obj: &Map<String, Value>, prefix: &str, kind: &str, report: &mut Problems) {
    if let Some(v) = obj.get("schema_version")
        && v.as_u64() != Some(SCHEMA_VERSION)
    {
        report.error(Error::invalid(format!("{prefix}schema_version"), v, format!("must be {SCHEMA_VERSION}")));
    }
    if let Some(v) = obj.get("kind")
        && v.as_str() != Some(kind)
    {
        report.error(
            Error::invalid(format!("{prefix}kind"), v, format!("must be \"{kind}\" here"))
                .with_hint("remove the inner `kind` or give a document of the right kind"),
        );
    }
}

/// Reads a scenario object. References to catalog ids are checked against the catalog; the whole
/// scenario is resolved (model shape, system mapping) so that a valid scenario can run.
pub(crate) fn read_scenario(obj: &Map<String, Value>, report: &mut Problems) -> Option<Scenario> {
    let start = report.errors.len();
    walk(SCENARIO_FIELDS, "", obj, "", &["schema_version", "kind"], report);
    let f = Fields::from_map(obj);
    let envelope = ["schema_version", "kind"];
    let model = match obj.get("model") {
        Some(Value::String(id)) => match resolve::find_model(UserEntries::builtin(), id) {
            Ok(m) => Some(ModelRef::Catalog(m.id.clone())),
            Err(e) => {
                report.error(catalog_error("model", id, e));
                None
            }
        },
        Some(Value::Object(m)) => {
            check_envelope(m, "model.", "model", report);
            read_model(m, "model.", &envelope, report).map(|m| ModelRef::Inline(Box::new(m)))
        }
        _ => None,
    };
    let system = match obj.get("system") {
        Some(Value::String(id)) => match resolve::find_system(UserEntries::builtin(), id) {
            Ok(s) => Some(SystemRef::Catalog(s.id.clone())),
            Err(e) => {
                report.error(catalog_error("system", id, e));
                None
            }
        },
        Some(Value::Object(s)) => {
            check_envelope(s, "system.", "system", report);
            read_system(s, "system.", &envelope, report).map(|s| SystemRef::Inline(Box::new(s)))
        }
        _ => None,
    };
    let budget = match f.obj("training_budget") {
        Some(b) if !failed(report, start, "training_budget") => read_budget(b, "training_budget", report),
        _ => None,
    };
    let strategies: Vec<Strategy> = match obj.get("strategies").and_then(Value::as_array) {
        Some(items) => items.iter().filter_map(Value::as_str).filter_map(|s| s.parse().ok()).collect(),
        None => Strategy::ALL.to_vec(),
    };
    if let (Some(d), Some(n)) = (f.int("domain_size"), f.int("devices"))
        && d > n
    {
        report.warn(
            Error::invalid("domain_size", d, format!("is larger than devices = {n}"))
                .with_hint("all devices then share one scale-up domain"),
        );
    }
    if report.errors.len() > start {
        return None;
    }
    let scenario = Scenario {
        name: f.text("name"),
        model: model?,
        system: system?,
        domain_size: f.int("domain_size"),
        nics_per_device: f.int("nics_per_device"),
        precision: f.text("precision").and_then(|p| p.parse().ok()),
        devices: f.int("devices")?,
        global_batch: f.int("global_batch")?,
        strategies,
        top_k: f.int("top_k").unwrap_or(10),
        training_budget: budget,
        notes: f.notes("notes"),
    };
    match scenario.resolve() {
        Ok(r) => {
            for n in resolve::scenario_notes(&r) {
                let field = if n.concerns("model") { "model" } else { "system" };
                report.warn(Error::invalid(field, n.entry.as_deref().unwrap_or_default(), n.text));
            }
            Some(scenario)
        }
        Err(e) => {
            report.error(e);
            None
        }
    }
}

fn catalog_error(field: &str, id: &str, e: Error) -> Error {
    let hint = match &e {
        Error::UnknownName { known, .. } if !known.is_empty() => format!("nearest catalog ids: {}", known.join(", ")),
        _ => format!("list them with `fmperf catalog {field}s`"),
    };
    Error::invalid(
        field,
        crate::schema::check::show(&Value::String(id.to_string())),
        format!("is not in the {field} catalog"),
    )
    .with_hint(hint)
}

/// Writes a scenario object with `schema_version` and `kind` first.
pub(crate) fn write_scenario(s: &Scenario) -> J {
    let model = match &s.model {
        ModelRef::Catalog(id) => J::Str(id.clone()),
        ModelRef::Inline(m) => write_model(m, false),
    };
    let system = match &s.system {
        SystemRef::Catalog(id) => J::Str(id.clone()),
        SystemRef::Inline(x) => write_system(x, false),
    };
    J::obj()
        .put("schema_version", J::Int(SCHEMA_VERSION))
        .put("kind", J::Str("scenario".into()))
        .put_some("name", s.name.as_deref().map(|n| J::Str(n.into())))
        .put("model", model)
        .put("system", system)
        .put_some("domain_size", s.domain_size.map(J::Int))
        .put_some("nics_per_device", s.nics_per_device.map(J::Int))
        .put_some("precision", s.precision.map(|p| J::Str(p.as_str().into())))
        .put("devices", J::Int(s.devices))
        .put("global_batch", J::Int(s.global_batch))
        .put("strategies", J::Arr(s.strategies.iter().map(|x| J::Str(x.as_str().into())).collect()))
        .put("top_k", J::Int(s.top_k))
        .put_some("training_budget", s.training_budget.map(write_budget))
        .put("notes", J::texts(&s.notes))
}
