//! The one scenario resolver: from an input (a catalog id, a system spec `ID,domain=…,precision=…`,
//! a user entry, a document the caller has read) plus the catalogs **passed in as a value**
//! ([`UserEntries`]: the built-in catalogs and the user's own entries) plus the mode, to what the
//! models read: the catalog model (its reference [`ModelShape`], its extended [`Workload`]), the
//! catalog system mapped for the mode ([`MappedSystem`] with its typed provenance, or extended
//! mode's [`Hardware`]), and typed [`Note`]s saying what was approximated, stood in or
//! placeholdered (the one [`Note`] of `crate::vocab`).
//!
//! Every module outside `catalog/` looks ids up and maps systems here (the tidy test enforces it
//! for the look-ups); callers only word the errors for their own fields (a form field, a CLI flag,
//! a document path). Missing values are typed: a lookup error is [`Error::UnknownName`], a spec
//! error is told apart from an unknown id by [`SpecError`], and a scenario's errors say whether
//! the model or the system failed ([`ScenarioError`]); nothing here matches on error text.

mod entries;
pub mod explorer;
pub mod form;
pub mod mode_inputs;
pub mod point;
mod scenario;
pub mod search_inputs;
mod stand_ins;
pub mod sweep_axis;
pub mod sweep_spec;
mod system_param;

pub use entries::UserEntries;
pub use scenario::{ModelRef, ResolvedScenario, Scenario, SystemRef};
pub use stand_ins::{PointSystem, point_system};
pub use system_param::SystemParam;

use crate::catalog::{self, CatalogModel, CatalogSystem, MappedSystem, MappingOptions, Precision};
use crate::extended::{Hardware, Workload};
use crate::vocab::Note;
use crate::{Error, ModelShape};

/// The model `id` among `cats` (the user's entry first). The error is [`Error::UnknownName`] with
/// the nearest ids of both.
pub fn find_model<'a>(cats: &'a UserEntries, id: &str) -> Result<&'a CatalogModel, Error> {
    cats.find_model(id)
}

/// The system `id` among `cats` (reference names such as `H200` give the exact presets).
pub fn find_system<'a>(cats: &'a UserEntries, id: &str) -> Result<&'a CatalogSystem, Error> {
    cats.find_system(id)
}

/// Why a system spec did not resolve: the spec itself (a bad key or value), or its id.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecError {
    /// The spec's syntax or one of its options (the error names the option).
    Spec(Error),
    /// The id is in no catalog ([`Error::UnknownName`]).
    Unknown(Error),
}

impl SpecError {
    /// The error as it is.
    pub fn plain(self) -> Error {
        match self {
            SpecError::Spec(e) | SpecError::Unknown(e) => e,
        }
    }
}

/// A system spec `ID[,key=value]…` ([`catalog::parse_system_spec`]) among `cats`: the entry and
/// the mapping choices the spec makes.
pub fn system_spec<'a>(cats: &'a UserEntries, spec: &str) -> Result<(&'a CatalogSystem, MappingOptions), SpecError> {
    let (id, options) = catalog::parse_system_spec(spec).map_err(SpecError::Spec)?;
    let entry = cats.find_system(&id).map_err(SpecError::Unknown)?;
    Ok((entry, options))
}

/// `sys` mapped onto the reference model's parameters with `options`, for the model that reads it
/// ([`MappingOptions::mode`]: extended mode maps parts without a vector rate, with an unread
/// placeholder).
pub fn map_system(sys: &CatalogSystem, options: &MappingOptions) -> Result<MappedSystem, Error> {
    catalog::to_system_params(sys, options)
}

/// The notes of a mapping: its approximations, about `sys`.
pub fn mapping_notes(sys: &CatalogSystem, mapped: &MappedSystem) -> Vec<Note> {
    Note::of_field_entry("system", &sys.id, &mapped.approximations)
}

/// `sys` as extended mode's part at matmul `precision` (see [`Hardware::from_catalog`]), with its
/// notes.
pub fn hardware(
    sys: &CatalogSystem,
    precision: Precision,
    measured_ceiling: bool,
    options: &MappingOptions,
) -> Result<(Hardware, Vec<Note>), Error> {
    let hw = Hardware::from_catalog(sys, precision, measured_ceiling, options)?;
    let notes = Note::of_field_entry("system", &sys.id, &hw.approximations);
    Ok((hw, notes))
}

/// The reference model's view of `m` (an error when a field it needs is unknown).
pub fn model_shape(m: &CatalogModel) -> Result<ModelShape, Error> {
    m.to_shape()
}

/// Extended mode's view of `m` (its GQA, gated MLP, vocabulary, experts).
pub fn workload(m: &CatalogModel) -> Result<Workload, Error> {
    Workload::from_catalog(m)
}

/// What reference mode approximates of `m` ([`CatalogModel::reference_caveats`]; a model it runs as
/// it is, [`CatalogModel::reference_compatible`], may still have a rounded head width), and a
/// matmul width neither mode prices the misalignment of ([`Workload::alignment_caveat`]).
pub fn model_notes(m: &CatalogModel) -> Vec<Note> {
    let mut caveats = m.reference_caveats();
    let alignment = Workload::from_catalog(m).ok().and_then(|w| w.alignment_caveat());
    caveats.extend(alignment.map(|note| note.of_entry(&m.id).about("model")));
    caveats
}

/// Why a scenario did not resolve, by part: typed so that each caller words it (a scenario
/// document prefixes the model's and the system's field paths; a sweep point does not).
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioError {
    /// A catalog id of the scenario is unknown.
    Lookup(Error),
    /// The model cannot be reduced to the reference's shape (its field paths are the model's).
    Model(Error),
    /// The system cannot be mapped (its field paths are the system's).
    System(Error),
    /// One of the mapping's options is rejected (its field paths are the options' own,
    /// [`MAPPING_OPTION_FIELDS`]: the scenario's `precision`, `domain_size`, …).
    Options(Error),
}

/// The fields [`map_system`] names when it rejects one of the mapping's options rather than the
/// system entry (`catalog::to_system_params`: a precision a 16-bit reference file cannot run, a
/// domain size or NIC count of 0, a vector, scale-up or scale-out rate that is not positive).
pub const MAPPING_OPTION_FIELDS: [&str; 6] =
    ["precision", "domain_size", "nics_per_device", "vector", "scale_up", "scale_out"];

impl ScenarioError {
    /// The error as it is.
    pub fn plain(self) -> Error {
        match self {
            ScenarioError::Lookup(e)
            | ScenarioError::Model(e)
            | ScenarioError::System(e)
            | ScenarioError::Options(e) => e,
        }
    }
}

/// The model entry a scenario names (a catalog id among `cats`, or its own).
pub fn scenario_model(cats: &UserEntries, model: &ModelRef) -> Result<CatalogModel, Error> {
    Ok(match model {
        ModelRef::Catalog(id) => cats.find_model(id)?.clone(),
        ModelRef::Inline(m) => (**m).clone(),
    })
}

/// The system entry a scenario names (a catalog id among `cats`, or its own).
pub fn scenario_system(cats: &UserEntries, system: &SystemRef) -> Result<CatalogSystem, Error> {
    Ok(match system {
        SystemRef::Catalog(id) => cats.find_system(id)?.clone(),
        SystemRef::Inline(s) => (**s).clone(),
    })
}

/// `s` resolved among `cats`, its system mapped with `options` (the scenario's choices, possibly
/// with a sweep's values and mode): the entries, the model's reference shape, the mapping and the
/// budget in force.
pub fn scenario(cats: &UserEntries, s: &Scenario, options: &MappingOptions) -> Result<ResolvedScenario, ScenarioError> {
    let model = scenario_model(cats, &s.model).map_err(ScenarioError::Lookup)?;
    let system = scenario_system(cats, &s.system).map_err(ScenarioError::Lookup)?;
    let shape = model_shape(&model).map_err(ScenarioError::Model)?;
    let mapped = map_system(&system, options).map_err(|e| {
        if MAPPING_OPTION_FIELDS.iter().any(|f| e.is_at(*f)) {
            ScenarioError::Options(e)
        } else {
            ScenarioError::System(e)
        }
    })?;
    let budget = s.training_budget.unwrap_or(model.training_budget);
    Ok(ResolvedScenario { model, shape, system, mapped, budget })
}

/// The notes of a resolved scenario: the mapping's approximations, then the model's caveats.
pub fn scenario_notes(r: &ResolvedScenario) -> Vec<Note> {
    let mut notes = mapping_notes(&r.system, &r.mapped);
    notes.extend(model_notes(&r.model));
    notes
}

/// The model `id` among the built-in catalogs alone (for inputs only they can name: validation's
/// rows, documents read without user entries).
pub fn builtin_model(id: &str) -> Result<&'static CatalogModel, Error> {
    find_model(UserEntries::builtin(), id)
}

/// The system `id` among the built-in catalogs alone (see [`builtin_model`]).
pub fn builtin_system(id: &str) -> Result<&'static CatalogSystem, Error> {
    find_system(UserEntries::builtin(), id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::provenance::Origin;
    use crate::mode_kind::ModeKind;
    use crate::vocab::NoteKind;

    fn h100() -> CatalogSystem {
        builtin_system("nvidia_h100_sxm5_80gb").unwrap().clone()
    }

    #[test]
    fn a_user_entry_is_found_first_and_mapped_like_a_builtin() {
        let mut mine = h100();
        mine.memory_gb = Some(96.0);
        let cats = UserEntries { models: Vec::new(), systems: vec![mine] };
        let (sys, opts) = system_spec(&cats, "nvidia_h100_sxm5_80gb,domain=4").unwrap();
        assert_eq!(sys.memory_gb, Some(96.0), "the user's copy wins");
        assert_eq!(opts.domain_size, Some(4));
        let mapped = map_system(sys, &opts).unwrap();
        assert_eq!(mapped.params.domain_size, 4);
        assert_eq!(mapped.params.hbm_capacity, 96.0);
        // The built-in catalogs alone give the datasheet's 80 GB.
        let (sys, _) = system_spec(UserEntries::builtin(), "nvidia_h100_sxm5_80gb").unwrap();
        assert_eq!(sys.memory_gb, Some(80.0));
    }

    #[test]
    fn spec_and_lookup_errors_are_told_apart_by_type() {
        let cats = UserEntries::builtin();
        assert!(matches!(system_spec(cats, "nvidia_h100_sxm5_80gb,bogus=1"), Err(SpecError::Spec(_))));
        match system_spec(cats, "nvidia_h100_sxm5_80gbx") {
            Err(SpecError::Unknown(Error::UnknownName { known, .. })) => {
                assert_eq!(known.first().map(String::as_str), Some("nvidia_h100_sxm5_80gb"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn notes_are_typed_by_what_was_assumed() {
        let m = builtin_model("llama3-8b").unwrap();
        let notes = model_notes(m);
        assert!(
            !notes.is_empty()
                && notes.iter().all(|n| n.kind == NoteKind::ModelCaveat && n.entry.as_ref() == Some(&m.id))
        );
        let v5e = builtin_system("google_tpu_v5e").unwrap();
        // Reference mode cannot map a part without a vector rate; extended mode maps it with an
        // unread placeholder, recorded in the provenance, and no note about it.
        let opts = MappingOptions { scale_out_gbps: Some(25.0), ..MappingOptions::default() };
        assert!(map_system(v5e, &opts).is_err());
        let ext = MappingOptions { mode: ModeKind::Extended, ..opts };
        let mapped = map_system(v5e, &ext).unwrap();
        let unread = mapped.provenance.iter().any(|p| matches!(p.origin, Origin::Unread { .. }));
        assert!(unread, "{:?}", mapped.provenance);
        let notes = mapping_notes(v5e, &mapped);
        assert_eq!(Note::texts(&notes), mapped.approximations);
        assert!(notes.iter().all(|n| n.kind == NoteKind::Mapping && n.entry.as_ref() == Some(&v5e.id)));
    }

    #[test]
    fn a_scenario_error_says_which_part_failed() {
        let mut s = crate::resolve::Scenario {
            name: None,
            model: ModelRef::Catalog("llama3-8b".into()),
            system: SystemRef::Catalog("google_tpu_v5e".into()),
            domain_size: None,
            nics_per_device: None,
            precision: None,
            devices: 8,
            global_batch: 8,
            strategies: vec![crate::Strategy::OneD],
            top_k: 1,
            training_budget: None,
            notes: Vec::new(),
        };
        let cats = UserEntries::builtin();
        assert!(matches!(scenario(cats, &s, &s.mapping_options()), Err(ScenarioError::System(_))));
        // The TPU lists no 16-bit vector rate: the system's field, under `system.` in a scenario.
        let e = s.resolve().unwrap_err();
        assert!(e.path().is_some_and(|p| p.is_in("system")), "{e}");
        // A domain of 0 devices is the scenario's own option, named as the scenario names it.
        s.system = SystemRef::Catalog("nvidia_h100_sxm5_80gb".into());
        s.domain_size = Some(0);
        assert!(matches!(scenario(cats, &s, &s.mapping_options()), Err(ScenarioError::Options(_))));
        assert_eq!(s.resolve().unwrap_err().to_string(), "domain_size = 0: must be a positive integer");
        s.domain_size = None;
        s.system = SystemRef::Catalog("google_tpu_v5e".into());
        s.model = ModelRef::Catalog("no-such-model".into());
        assert!(matches!(scenario(cats, &s, &s.mapping_options()), Err(ScenarioError::Lookup(_))));
        s.model = ModelRef::Catalog("llama3-8b".into());
        s.system = SystemRef::Catalog("nvidia_h100_sxm5_80gb".into());
        let r = scenario(cats, &s, &s.mapping_options()).unwrap();
        assert_eq!(r.budget, r.model.training_budget);
        let notes = scenario_notes(&r);
        assert!(
            notes.iter().any(|n| n.kind == NoteKind::ModelCaveat && n.entry.as_deref() == Some("llama3-8b")),
            "{notes:?}"
        );
    }
}
