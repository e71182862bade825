//! The explorer's scenario resolved: its form ([`ExploreFields`], text exactly as typed) becomes
//! an [`ExploreSpec`] (the entries, the model's shape, the system mapped for the mode, in extended
//! mode the workload, part and switches, and typed notes) with every field checked on its own and
//! every problem reported at once, each at the form's field ([`field`]). The CLI, the page, its
//! workers, the first view and the explorer's presets resolve a scenario here. Nothing here
//! panics, whatever the text.

use super::UserEntries;
use super::form::{MAX_DOMAIN, MAX_TOP, field, parse_budget, parse_count, parse_strategies};
use crate::catalog::{self, MappingOptions, TrainingBudget};
use crate::cost::ExtendedSetup;
use crate::extended::ExtendedOptions;
use crate::extended::sparsity::no_effect_note;
use crate::mode::Mode;
use crate::search::{ExecutionChoices, SearchSpec};
use crate::vocab::{MAX_DEVICES, MAX_GLOBAL_BATCH, Note};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// The scenario as typed: one string per field. An empty `domain` means the system's own domain
/// size; an empty `budget` the model's training budget (and then `budget_unit` is ignored).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ExploreFields {
    /// Model catalog id.
    pub model: String,
    /// System catalog id (or a reference name: `A100`, `H200`, `B200`, `B200-next`).
    pub system: String,
    /// Scale-up domain size [devices].
    pub domain: String,
    /// Device count.
    pub gpus: String,
    /// Global batch [samples].
    pub batch: String,
    /// Strategies, comma-separated (`1d,2d,2d-seqp`).
    pub strategies: String,
    /// How many configurations to list.
    pub top: String,
    /// Training budget amount (`1e12`, `350000*80`).
    pub budget: String,
    /// `tokens` or `samples` (empty: tokens).
    pub budget_unit: String,
}

/// A validated scenario: everything the searches and the derived numbers need.
#[derive(Debug, Clone, PartialEq)]
pub struct ExploreSpec {
    /// Model catalog id.
    pub model_id: String,
    /// Model display name.
    pub model_name: String,
    /// The reference model's view of the model.
    pub model: ModelShape,
    /// System catalog id.
    pub system_id: String,
    /// System display name.
    pub system_name: String,
    /// The system as the reference model reads it, with the chosen domain size.
    pub system: SystemParams,
    /// Strategies to search, in the order given, without repeats.
    pub strategies: Vec<Strategy>,
    /// Devices.
    pub n_gpus: u64,
    /// Global batch [samples].
    pub global_batch: u64,
    /// Configurations to keep per strategy and in the merged list.
    pub top_k: usize,
    /// Training budget in force.
    pub budget: TrainingBudget,
    /// Whether the budget is the model's default (not typed).
    pub budget_is_default: bool,
    /// What the numbers do not capture: the model's caveats in the mode and the system mapping's
    /// approximations, one sentence each.
    pub notes: Vec<Note>,
    /// The model that prices the candidates (see [`crate::mode`]).
    pub mode: Mode,
    /// Extended mode's workload, part and switches (`None` in reference mode).
    pub extended: Option<ExtendedSetup>,
    /// The model entry the scenario names (built-in or the user's).
    pub model_entry: catalog::CatalogModel,
    /// The system entry the scenario names (built-in or the user's).
    pub system_entry: catalog::CatalogSystem,
    /// The mapping choices of the system spec (`ID,domain=…,nics=…,precision=…,vector=…,
    /// scale_up=…,scale_out=…`), with the domain size in force.
    pub mapping: MappingOptions,
    /// The execution choices extended mode's searches make or the user fixed (see
    /// [`ExploreSpec::with_execution`]; unused in reference mode).
    pub execution: ExecutionChoices,
}

impl ExploreSpec {
    /// The search of one strategy.
    pub fn search_spec(&self, strategy: Strategy) -> SearchSpec {
        SearchSpec {
            model: self.model,
            system: self.system.clone(),
            strategy,
            n_gpus: self.n_gpus,
            global_batch: self.global_batch,
            top_k: self.top_k,
        }
    }

    /// This scenario priced in `mode`. In extended mode the workload and the part are read from
    /// the catalog (the part at the switch's precision, with the scenario's domain size), 2D SUMMA
    /// is left out with a note, and the notes are extended mode's. Errors name the field: `model`,
    /// `system`, `strategies`, or `ext.precision` for a precision the part does not list.
    pub fn with_mode(mut self, mode: Mode) -> Result<ExploreSpec, Error> {
        self.mode = mode;
        self.extended = None;
        mode.per_mode(self, Ok, ExploreSpec::with_switches)
    }

    /// This scenario in extended mode with the switches `options` ([`ExploreSpec::with_mode`]).
    fn with_switches(mut self, options: ExtendedOptions) -> Result<ExploreSpec, Error> {
        options.validate()?;
        // The entries the scenario was resolved with (built-in or the user's), and its mapping
        // choices with the domain size in force.
        let model = &self.model_entry;
        let workload = super::workload(model).map_err(|e| {
            Error::invalid(field::MODEL, &self.model_id, format!("cannot be used by extended mode: {e}"))
        })?;
        let sys = &self.system_entry;
        let opts = MappingOptions { domain_size: Some(self.system.domain_size), ..self.mapping };
        let (hardware, hardware_notes) =
            super::hardware(sys, options.hardware.precision, options.hardware.measured_ceiling, &opts).map_err(
                |e| match e.path() {
                    Some(f) if f.is_in("peak_tflops") || f.is_in("precision") => Error::invalid(
                        "ext.precision",
                        options.hardware.precision,
                        format!("cannot be used on {}: {e}", sys.id),
                    )
                    .with_hint("choose a precision the part lists"),
                    _ => Error::invalid(field::SYSTEM, &sys.id, format!("cannot be used by extended mode: {e}")),
                },
            )?;
        let mut notes = hardware_notes;
        super::mode_inputs::priced_strategies(&self.mode, &mut self.strategies, &mut notes).map_err(|(s, why)| {
            Error::invalid(field::STRATEGIES, s.as_str(), why).with_hint("add 1d or 2d-seqp, or use reference mode")
        })?;
        notes.extend(no_effect_note(&sys.id, &hardware, options.model.weight_sparsity));
        self.notes = notes;
        self.extended = Some(ExtendedSetup { workload, hardware, options });
        self.execution = ExecutionChoices::from_switches(&options);
        Ok(self)
    }
}

impl ExploreFields {
    /// Validates every field in the default mode ([`Mode::default`]: the reference model, as
    /// old permalinks were read); all problems at once, each naming its [`field`].
    pub fn resolve(&self) -> Result<ExploreSpec, Vec<Error>> {
        self.resolve_in(&Mode::default())
    }

    /// Validates every field for `mode` (see [`ExploreSpec::with_mode`]; in extended mode a part
    /// without a vector rate is usable); all problems at once, each naming its [`field`] (or
    /// `mode`, `ext.<switch>`).
    pub fn resolve_in(&self, mode: &Mode) -> Result<ExploreSpec, Vec<Error>> {
        self.resolve_with(mode, &UserEntries::none())
    }

    /// [`ExploreFields::resolve_in`] against the built-in catalogs plus the user's `entries`; the
    /// `system` field may be a system spec (`ID,nics=2,scale_out=50`, the CLI's `--system`), whose
    /// option errors name the option (`nics`, `precision`, `vector`, `scale_up`, `scale_out`).
    pub fn resolve_with(&self, mode: &Mode, entries: &UserEntries) -> Result<ExploreSpec, Vec<Error>> {
        let mut errors = Vec::new();
        let model = keep(super::form::model(entries, &self.model), &mut errors);
        let domain = if self.domain.trim().is_empty() {
            None
        } else {
            keep(parse_count(field::DOMAIN, &self.domain, 1, MAX_DOMAIN), &mut errors)
        };
        let domain_ok = self.domain.trim().is_empty() || domain.is_some();
        let system = keep(super::form::system(entries, &self.system, domain, mode.kind()), &mut errors);
        let gpus = keep(parse_count(field::GPUS, &self.gpus, 1, MAX_DEVICES), &mut errors);
        let batch = keep(parse_count(field::BATCH, &self.batch, 1, MAX_GLOBAL_BATCH), &mut errors);
        let strategies = keep(parse_strategies(&self.strategies), &mut errors);
        let top = keep(parse_count(field::TOP, &self.top, 1, MAX_TOP), &mut errors);
        let budget = if self.budget.trim().is_empty() {
            None
        } else {
            keep(parse_budget(&self.budget, &self.budget_unit), &mut errors)
        };
        let budget_ok = self.budget.trim().is_empty() || budget.is_some();
        match (model, system, gpus, batch, strategies, top) {
            (Some(m), Some(s), Some(gpus), Some(batch), Some(strategies), Some(top))
                if errors.is_empty() && domain_ok && budget_ok =>
            {
                let (model, shape) = m;
                let (system, mapped, mapping) = s;
                let mut notes = super::model_notes(model);
                notes.extend(super::mapping_notes(system, &mapped));
                ExploreSpec {
                    model_id: model.id.clone(),
                    model_name: model.name.clone(),
                    model: shape,
                    system_id: system.id.clone(),
                    system_name: system.name.clone(),
                    system: mapped.params,
                    strategies,
                    n_gpus: gpus,
                    global_batch: batch,
                    top_k: top as usize,
                    budget: budget.unwrap_or(model.training_budget),
                    budget_is_default: budget.is_none(),
                    notes,
                    mode: *mode,
                    extended: None,
                    model_entry: model.clone(),
                    system_entry: system.clone(),
                    mapping,
                    execution: ExecutionChoices::SEARCH_ALL,
                }
                .with_mode(*mode)
                .map_err(|e| vec![e])
            }
            _ => Err(errors),
        }
    }
}

/// The value of `r`, or `None` after pushing its error on `errors`.
fn keep<T>(r: Result<T, Error>, errors: &mut Vec<Error>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
}
