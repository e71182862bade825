//! The catalogs of models and systems, compiled in from `crates/core/data/`:
//!
//! * `models.json` — the model catalog, written in fmperf's versioned model format (each entry
//!   with its sources and notes);
//! * `models-moe.json` — the Mixture-of-Experts models of the catalog (same format, `moe`/`mla`
//!   objects; kept in their own file so that dense and MoE entries are edited apart), appended
//!   after `models.json`'s entries;
//! * `hardware-catalog.json` — the hardware catalog of `shared/data` (every value with its sources),
//!   with the parts and figures fmperf added, each with its source or marked an estimate
//!   (`data/README.md` lists them);
//! * `system-modelling.json` — fmperf's annotations of it: the architecture class of each
//!   accelerator and what the performance model captures for it, plus the reference's four system
//!   files as exact presets (`ref-A100`, `ref-H200`, `ref-B200`, `ref-B200-next`; the names `A100`,
//!   `H200`, `B200`, `B200-next` resolve to them).
//!
//! Both catalogs are parsed with the versioned format's schema ([`crate::schema`]: its field tables
//! and validator, the same rules as a user's document), once, on first use.

pub mod fabric;
pub mod instances;
pub mod mapping;
pub mod model;
pub(crate) mod model_doc;
pub mod names;
pub mod precision;
pub mod provenance;
pub mod system;
pub(crate) mod system_doc;
pub mod system_spec;

use std::sync::OnceLock;

use serde_json::Value;

pub use fabric::{Fabric, FabricKind, IbGeneration};
pub use mapping::{MappedSystem, MappingOptions, default_precision, to_system_params};
pub use model::{CatalogModel, Mlp, TrainingBudget};
pub use names::{find_system_named, system_named_in};
pub use precision::Precision;
pub use provenance::FieldSources;
pub use system::{Architecture, CatalogSystem, Host, MeasuredMatmul, Network, PeakRates, ScaleOut, ScaleUp, Torus};
pub use system_spec::parse_system_spec;

use crate::schema::check::Problems;
use crate::schema::fields::SCHEMA_VERSION;
use crate::{Error, SystemParams, hint, schema};

const MODELS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/models.json"));
const MOE_MODELS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/models-moe.json"));
pub(crate) const HARDWARE_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/hardware-catalog.json"));
pub(crate) const MODELLING_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/system-modelling.json"));

static MODELS: OnceLock<Vec<CatalogModel>> = OnceLock::new();
static SYSTEMS: OnceLock<Vec<CatalogSystem>> = OnceLock::new();

/// Every model of the catalog, in catalog order (the reference's three first).
pub fn models() -> &'static [CatalogModel] {
    MODELS.get_or_init(|| load_models().unwrap_or_default())
}

/// Every system of the catalog: the reference's four presets, then the hardware catalog's
/// accelerators in its order.
pub fn systems() -> &'static [CatalogSystem] {
    SYSTEMS.get_or_init(|| load_systems().unwrap_or_default())
}

fn not_found(kind: &str, id: &str, ids: Vec<&str>) -> Error {
    Error::UnknownName {
        kind: kind.to_string(),
        name: id.chars().take(100).collect(),
        known: hint::closest(id, ids, 5).into_iter().map(str::to_string).collect(),
    }
}

/// A model by id (exact, else ignoring ASCII case). The error lists the nearest ids.
pub fn find_model(id: &str) -> Result<&'static CatalogModel, Error> {
    let all = models();
    let id = id.trim();
    all.iter()
        .find(|m| m.id == id)
        .or_else(|| all.iter().find(|m| m.id.eq_ignore_ascii_case(id)))
        .ok_or_else(|| not_found("model", id, all.iter().map(|m| m.id.as_str()).collect()))
}

/// A system by id (exact, else ignoring ASCII case); the reference's names `A100`, `H200`, `B200`,
/// `B200-next` give the exact presets `ref-…`. The error lists the nearest ids.
pub fn find_system(id: &str) -> Result<&'static CatalogSystem, Error> {
    let all = systems();
    let id = id.trim();
    let preset = SystemParams::REFERENCE_NAMES.iter().find(|n| n.eq_ignore_ascii_case(id)).map(|n| format!("ref-{n}"));
    let id = preset.as_deref().unwrap_or(id);
    all.iter()
        .find(|s| s.id == id)
        .or_else(|| all.iter().find(|s| s.id.eq_ignore_ascii_case(id)))
        .ok_or_else(|| not_found("system", id, all.iter().map(|s| s.id.as_str()).collect()))
}

/// Parses the compiled-in model catalog, `models.json` then `models-moe.json` (every problem, if
/// any: tests keep this `Ok`).
pub fn load_models() -> Result<Vec<CatalogModel>, Vec<Error>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (name, text) in [("models.json", MODELS_JSON), ("models-moe.json", MOE_MODELS_JSON)] {
        let entries: Vec<Value> = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                errors.push(Error::Parse { message: format!("{name}: {e}") });
                continue;
            }
        };
        for entry in &entries {
            match read_entry(entry) {
                Ok(Entry::Model(m)) => out.push(m),
                Ok(other) => errors.push(Error::Parse { message: format!("{name} holds a {}", other.kind()) }),
                Err(mut e) => errors.append(&mut e),
            }
        }
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// Parses the compiled-in system catalog (every problem, if any: tests keep this `Ok`).
pub fn load_systems() -> Result<Vec<CatalogSystem>, Vec<Error>> {
    let parse = |name: &str, text: &str| -> Result<Value, Vec<Error>> {
        serde_json::from_str(text).map_err(|e| vec![Error::Parse { message: format!("{name}: {e}") }])
    };
    let hardware = parse("hardware-catalog.json", HARDWARE_JSON)?;
    let modelling = parse("system-modelling.json", MODELLING_JSON)?;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for preset in modelling["presets"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let text = |k: &str| preset[k].as_str().unwrap_or("").to_string();
        match SystemParams::reference(&text("reference_name")) {
            Ok(params) => {
                let notes = preset["notes"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).map(crate::vocab::Note::stated).collect());
                out.push(CatalogSystem::from_params(
                    &text("id"),
                    &text("name"),
                    params,
                    vec![text("source")],
                    notes.unwrap_or_default(),
                ));
            }
            Err(e) => errors.push(e),
        }
    }
    for acc in hardware["accelerators"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let mut doc = acc.as_object().cloned().unwrap_or_default();
        let id = doc.get("id").and_then(Value::as_str).unwrap_or("").to_string();
        doc.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
        doc.insert("kind".into(), Value::from("system"));
        if let Some(extra) = modelling["accelerators"][id.as_str()].as_object() {
            for (k, v) in extra {
                doc.insert(k.clone(), v.clone());
            }
        } else {
            errors.push(Error::Parse { message: format!("system-modelling.json has no entry for `{id}`") });
        }
        match read_entry(&Value::Object(doc)) {
            Ok(Entry::System(s)) => out.push(s),
            Ok(other) => errors.push(Error::Parse { message: format!("{id} reads as a {}", other.kind()) }),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// A compiled-in entry as read: a model, a system or another kind of document.
enum Entry {
    Model(CatalogModel),
    System(CatalogSystem),
    Other(&'static str),
}

impl Entry {
    /// `"model"`, `"system"` or the other kind's name.
    fn kind(&self) -> &'static str {
        match self {
            Entry::Model(_) => "model",
            Entry::System(_) => "system",
            Entry::Other(kind) => kind,
        }
    }
}

/// Reads one compiled-in entry, a versioned document (`schema_version`, `kind`), with the rules a
/// user's document is read with (every problem, if any).
fn read_entry(value: &Value) -> Result<Entry, Vec<Error>> {
    let Some(obj) = value.as_object() else {
        return Err(vec![Error::Parse { message: "an entry is not a JSON object {…}".to_string() }]);
    };
    let mut report = Problems::default();
    let envelope = ["schema_version", "kind"];
    let entry = match schema::read_kind(obj, &mut report) {
        Some("model") => model_doc::read_model(obj, "", &envelope, &mut report).map(Entry::Model),
        Some("system") => system_doc::read_system(obj, "", &envelope, &mut report).map(Entry::System),
        Some(other) => Some(Entry::Other(other)),
        None => None,
    };
    match entry {
        Some(entry) if report.errors.is_empty() => Ok(entry),
        _ => {
            if report.errors.is_empty() {
                report.error(Error::Parse { message: "entry could not be read".to_string() });
            }
            Err(report.errors)
        }
    }
}
