//! A whole scenario (`"kind": "scenario"`): model + system + domain size + device count + global
//! batch + strategies + top-k + training budget, and its resolution into the reference model's inputs.

use serde_json::{Map, Value};

use super::check::{Fields, Report, walk};
use super::emit::J;
use super::fields::{SCENARIO_FIELDS, SCHEMA_VERSION};
use super::model_doc::{failed, read_budget, read_model, write_budget, write_model};
use super::system_doc::{read_system, write_system};
use crate::catalog::{CatalogModel, CatalogSystem, MappedSystem, MappingOptions, Precision, TrainingBudget};
use crate::resolve::{self, NoteKind, ScenarioError, UserEntries};
use crate::{Error, ModelShape, Strategy};

/// The model of a scenario: a catalog id or a model of its own.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelRef {
    /// A model catalog id.
    Catalog(String),
    /// A model given inline.
    Inline(Box<CatalogModel>),
}

/// The system of a scenario: a catalog id or a system of its own.
#[derive(Debug, Clone, PartialEq)]
pub enum SystemRef {
    /// A system catalog id.
    Catalog(String),
    /// A system given inline.
    Inline(Box<CatalogSystem>),
}

/// A scenario: everything a search needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Name of the scenario.
    pub name: Option<String>,
    /// The model.
    pub model: ModelRef,
    /// The system.
    pub system: SystemRef,
    /// Scale-up domain size in devices (`None`: the system's).
    pub domain_size: Option<u64>,
    /// NICs per device (`None`: 1).
    pub nics_per_device: Option<u64>,
    /// Training precision (`None`: bf16, or fp16 when the system lists no bf16 rate).
    pub precision: Option<Precision>,
    /// Total device count.
    pub devices: u64,
    /// Global batch in samples.
    pub global_batch: u64,
    /// Strategies to search.
    pub strategies: Vec<Strategy>,
    /// How many best configurations to return.
    pub top_k: u64,
    /// Training budget (`None`: the model's).
    pub training_budget: Option<TrainingBudget>,
    /// Remarks.
    pub notes: Vec<String>,
}

/// A scenario with its references looked up and its system mapped.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedScenario {
    /// The model.
    pub model: CatalogModel,
    /// The reference model's view of it.
    pub shape: ModelShape,
    /// The system entry.
    pub system: CatalogSystem,
    /// The system as the reference model reads it, with the mapping's approximations.
    pub mapped: MappedSystem,
    /// The training budget in force.
    pub budget: TrainingBudget,
}

impl Scenario {
    /// The mapping options the scenario asks for.
    pub fn mapping_options(&self) -> MappingOptions {
        MappingOptions {
            domain_size: self.domain_size,
            nics_per_device: self.nics_per_device,
            precision: self.precision,
            ..MappingOptions::default()
        }
    }

    /// Looks up the model and system in the built-in catalogs, reduces the model to its reference
    /// shape and maps the system. Errors name the scenario field (`model`, `system`,
    /// `model.ffn_hidden`, …).
    pub fn resolve(&self) -> Result<ResolvedScenario, Error> {
        self.resolve_in(UserEntries::builtin())
    }

    /// [`Scenario::resolve`] among `cats` (the built-in catalogs plus the user's entries), through
    /// the resolver ([`resolve::scenario`]).
    pub fn resolve_in(&self, cats: &UserEntries) -> Result<ResolvedScenario, Error> {
        resolve::scenario(cats, self, &self.mapping_options()).map_err(|e| match e {
            ScenarioError::Lookup(e) => e,
            ScenarioError::Model(e) => prefix_error(e, "model."),
            ScenarioError::System(e) => prefix_error(e, "system."),
        })
    }
}

/// The same error with `prefix` before its field path (scenario-level fields are left alone).
fn prefix_error(e: Error, prefix: &str) -> Error {
    match e {
        Error::InvalidField { field, value, rule, hint }
            if !matches!(field.as_str(), "precision" | "domain_size" | "nics_per_device") =>
        {
            Error::InvalidField { field: format!("{prefix}{field}"), value, rule, hint }
        }
        other => other,
    }
}

fn check_envelope(obj: &Map<String, Value>, prefix: &str, kind: &str, report: &mut Report) {
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
pub(crate) fn read_scenario(obj: &Map<String, Value>, report: &mut Report) -> Option<Scenario> {
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
        notes: f.texts("notes"),
    };
    match scenario.resolve() {
        Ok(r) => {
            for n in resolve::scenario_notes(&r) {
                let field = if n.kind == NoteKind::ModelCaveat { "model" } else { "system" };
                report.warn(Error::invalid(field, &n.entry, n.text));
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
    Error::invalid(field, super::check::show(&Value::String(id.to_string())), format!("is not in the {field} catalog"))
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
