//! The explorer's scenario as a form holds it (text, exactly as typed) and its validation into an
//! [`ExploreSpec`]: every field is checked on its own, and every problem is reported at once as an
//! [`Error`] whose field is the form's field name ([`field`]), so a page can show each message next
//! to its input. Nothing here panics, whatever the text.

use crate::catalog::{self, MappingOptions, TrainingBudget};
use crate::cost::ExtendedSetup;
use crate::mode::Mode;
use crate::resolve::form::shorten;
use crate::resolve::{self, UserEntries};
use crate::search::{ExecutionChoices, SearchSpec};
use crate::vocab::Note;
use crate::vocab::{MAX_DEVICES, MAX_GLOBAL_BATCH};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// The form's field names (also the `field` of every [`Error`] [`ExploreFields::resolve`] returns).
pub mod field {
    pub use crate::resolve::form::field::{DOMAIN, MODEL, SYSTEM};
    /// Device count.
    pub const GPUS: &str = "gpus";
    /// Global batch [samples].
    pub const BATCH: &str = "batch";
    /// Strategies, comma-separated.
    pub const STRATEGIES: &str = "strategies";
    /// How many configurations to list.
    pub const TOP: &str = "top";
    /// Training budget amount (tokens or samples).
    pub const BUDGET: &str = "budget";
}

/// The default scenario: `gpt3_1T` on the reference's H200 with NVLink domains of 8, 4096 GPUs,
/// global batch 4096, all three strategies, top 10 (the published study's setting).
pub mod defaults {
    /// Model id.
    pub const MODEL: &str = "gpt3_1T";
    /// System id (the reference's H200 file).
    pub const SYSTEM: &str = "ref-H200";
    /// Scale-up domain size [devices].
    pub const DOMAIN: u64 = 8;
    /// Devices.
    pub const GPUS: u64 = 4096;
    /// Global batch [samples].
    pub const BATCH: u64 = 4096;
    /// Configurations listed.
    pub const TOP: u64 = 10;
}

/// Largest number of configurations a list may hold.
pub const MAX_TOP: u64 = 100;
/// Largest scale-up domain accepted [devices] (as [`SystemParams::validate`]).
pub const MAX_DOMAIN: u64 = 1 << 20;

/// The unit of a training budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetUnit {
    /// Tokens (language models): divided by the sequence length to get samples.
    Tokens,
    /// Samples (sequences, images, fields).
    Samples,
}

impl BudgetUnit {
    /// `tokens` or `samples`.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetUnit::Tokens => "tokens",
            BudgetUnit::Samples => "samples",
        }
    }

    /// The unit of a budget.
    pub fn of(b: TrainingBudget) -> BudgetUnit {
        match b {
            TrainingBudget::Tokens(_) => BudgetUnit::Tokens,
            TrainingBudget::Samples(_) => BudgetUnit::Samples,
        }
    }
}

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
    /// The model that prices the candidates (see [`super::mode`]).
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
}

impl ExploreFields {
    /// The default scenario's fields (see [`defaults`]).
    pub fn default_scenario() -> ExploreFields {
        ExploreFields {
            model: defaults::MODEL.into(),
            system: defaults::SYSTEM.into(),
            domain: defaults::DOMAIN.to_string(),
            gpus: defaults::GPUS.to_string(),
            batch: defaults::BATCH.to_string(),
            strategies: strategies_text(&Strategy::ALL),
            top: defaults::TOP.to_string(),
            budget: String::new(),
            budget_unit: String::new(),
        }
    }

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
        let model = keep(resolve::form::model(entries, &self.model), &mut errors);
        let domain = if self.domain.trim().is_empty() {
            None
        } else {
            keep(parse_count(field::DOMAIN, &self.domain, 1, MAX_DOMAIN), &mut errors)
        };
        let domain_ok = self.domain.trim().is_empty() || domain.is_some();
        let system = keep(resolve::form::system(entries, &self.system, domain, mode.kind()), &mut errors);
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
                let mut notes = resolve::model_notes(model);
                notes.extend(resolve::mapping_notes(system, &mapped));
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

/// `1d,2d,2d-seqp`: the field text of a strategy list.
pub fn strategies_text(list: &[Strategy]) -> String {
    list.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
}

/// Digits with optional thousands separators (`,`, `_`, spaces) → the digits, or `None`.
fn digits_only(text: &str) -> Option<String> {
    let t = text.trim();
    let cleaned: String = t.chars().filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}' | '\u{202f}' | '\'')).collect();
    (!cleaned.is_empty() && cleaned.chars().all(|c| c.is_ascii_digit())).then_some(cleaned)
}

/// A whole number in `min..=max` typed in `field` (thousands separators allowed). The error says
/// which rule the text breaks.
pub fn parse_count(field: &str, text: &str, min: u64, max: u64) -> Result<u64, Error> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::invalid(field, "(empty)", "is required"));
    }
    let Some(d) = digits_only(t) else {
        let rule = if t.starts_with('-') { "must not be negative" } else { "must be a whole number (digits only)" };
        return Err(Error::invalid(field, shorten(t), rule));
    };
    let range = || format!("must be from {min} to {max}");
    let v = d.parse::<u64>().map_err(|_| Error::invalid(field, shorten(t), range()))?;
    if v < min || v > max {
        return Err(Error::invalid(field, v, range()));
    }
    Ok(v)
}

/// A positive, finite amount: a number (`1e12`, `28,000,000`) or a product of numbers
/// (`350000*80`, `350000 × 80`).
pub fn parse_amount(field: &str, text: &str) -> Result<f64, Error> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::invalid(field, "(empty)", "is required"));
    }
    let mut product = 1.0f64;
    for factor in t.split(['*', '×']) {
        let cleaned: String = factor.trim().chars().filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}')).collect();
        let v: f64 = cleaned
            .parse()
            .map_err(|_| Error::invalid(field, shorten(t), "must be a number like 1e12 or a product like 350000*80"))?;
        product *= v;
    }
    if !(product.is_finite() && product > 0.0) {
        return Err(Error::invalid(field, shorten(t), "must be a positive, finite number"));
    }
    Ok(product)
}

/// A training budget of `amount` in `unit` (`tokens`, `samples`; empty: tokens).
pub fn parse_budget(amount: &str, unit: &str) -> Result<TrainingBudget, Error> {
    let v = parse_amount(field::BUDGET, amount)?;
    match unit.trim() {
        "" | "tokens" => Ok(TrainingBudget::Tokens(v)),
        "samples" => Ok(TrainingBudget::Samples(v)),
        other => Err(Error::invalid(field::BUDGET, shorten(other), "unit must be tokens or samples")),
    }
}

/// A comma-separated list of strategies, at least one, repeats dropped.
pub fn parse_strategies(text: &str) -> Result<Vec<Strategy>, Error> {
    let mut out: Vec<Strategy> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let s: Strategy = part.parse().map_err(|_| {
            Error::invalid(field::STRATEGIES, shorten(part), "is not a strategy").with_hint("use 1d, 2d or 2d-seqp")
        })?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(Error::invalid(field::STRATEGIES, "(none)", "choose at least one strategy"));
    }
    Ok(out)
}
