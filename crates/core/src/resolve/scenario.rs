//! The scenario the resolver takes (a model and a system, each a catalog id or an entry of its own,
//! with the device count, batch, strategies, top-k and training budget) and what it resolves into
//! ([`ResolvedScenario`]). The scenario document (`"kind": "scenario"`) is read and written by
//! [`crate::format`].

use super::{ScenarioError, UserEntries};
use crate::catalog::{CatalogModel, CatalogSystem, MappedSystem, MappingOptions, Precision, TrainingBudget};
use crate::vocab::Note;
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
    pub notes: Vec<Note>,
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

    /// [`Scenario::resolve`] with `options` in place of the scenario's own mapping choices (a
    /// sweep's point adds its vector rate, scale-up and scale-out bandwidths and mode). Where they
    /// add nothing, the scenario resolves as it would alone, its errors naming its fields
    /// (`model.…`, `system.…`); else the resolver's error as it stands.
    pub fn resolve_with(&self, options: &MappingOptions) -> Result<ResolvedScenario, Error> {
        if *options == self.mapping_options() {
            return self.resolve();
        }
        super::scenario(UserEntries::builtin(), self, options).map_err(ScenarioError::plain)
    }

    /// [`Scenario::resolve`] among `cats` (the built-in catalogs plus the user's entries), through
    /// the resolver ([`super::scenario`]).
    pub fn resolve_in(&self, cats: &UserEntries) -> Result<ResolvedScenario, Error> {
        super::scenario(cats, self, &self.mapping_options()).map_err(|e| match e {
            ScenarioError::Lookup(e) | ScenarioError::Options(e) => e,
            ScenarioError::Model(e) => e.within("model"),
            ScenarioError::System(e) => e.within("system"),
        })
    }
}
