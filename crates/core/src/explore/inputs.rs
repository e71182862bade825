//! The explorer's scenario as a form holds it: its defaults, the unit of a budget and the text
//! of a strategy list. The form itself ([`ExploreFields`]), its field names
//! ([`crate::resolve::form::field`]), the parsers of its fields and its validation into an
//! [`ExploreSpec`](crate::resolve::explorer::ExploreSpec) are the resolver's, their one home
//! ([`crate::resolve::explorer`], [`crate::resolve::form`]): every field is checked on its own,
//! and every problem is reported at once as an [`crate::Error`] whose field is the form's field
//! name, so a page can show each message next to its input.

use crate::Strategy;
use crate::catalog::TrainingBudget;
use crate::resolve::explorer::ExploreFields;

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
}

/// `1d,2d,2d-seqp`: the field text of a strategy list.
pub fn strategies_text(list: &[Strategy]) -> String {
    list.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
}
