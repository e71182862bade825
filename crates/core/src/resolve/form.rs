//! A scenario's model and system as a form or a command line writes them (a model id, a system
//! spec `ID[,key=value]…` with the form's own domain field), resolved against the catalogs, with
//! every error at the form's field ([`field`]: `model`, `system`, `domain`), and the parsers of
//! the explorer's other fields (counts, amounts, budgets, strategy lists), whose errors name
//! their field too. The explorer's form ([`super::explorer::ExploreFields`]) resolves here.

use super::UserEntries;
use crate::catalog::{self, MappingOptions, TrainingBudget, parse_system_spec};
use crate::mode_kind::ModeKind;
use crate::{Error, ModelShape, Strategy};

/// The form's field names: the `field` of every error this resolution and the explorer's
/// ([`super::explorer::ExploreFields::resolve`]) return.
pub mod field {
    /// Model catalog id.
    pub const MODEL: &str = "model";
    /// System catalog id.
    pub const SYSTEM: &str = "system";
    /// Scale-up domain size [devices].
    pub const DOMAIN: &str = "domain";
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

/// Largest number of configurations a list may hold.
pub const MAX_TOP: u64 = 100;
/// Largest scale-up domain accepted [devices] (as [`crate::SystemParams::validate`]).
pub const MAX_DOMAIN: u64 = 1 << 20;

/// A model id among the built-in catalog plus the user's `entries`, which the reference model can
/// run, with its shape. The error is at [`field::MODEL`] and says why (unknown id, with the nearest
/// ids, or a shape the reference cannot use).
pub fn model<'a>(entries: &'a UserEntries, id: &str) -> Result<(&'a catalog::CatalogModel, ModelShape), Error> {
    let m = super::find_model(entries, id).map_err(|e| not_in_catalog(field::MODEL, id, e))?;
    shape_of(m).map(|shape| (m, shape))
}

/// The reference model's view of `m`, or why it cannot have one (at [`field::MODEL`]).
fn shape_of(m: &catalog::CatalogModel) -> Result<ModelShape, Error> {
    let shape = super::model_shape(m).map_err(|e| {
        Error::invalid(field::MODEL, &m.id, format!("cannot be used by the reference model: {e}"))
            .with_hint("choose a model whose shape is fully known")
    })?;
    Ok(shape)
}

/// A system spec `ID[,key=value]…` (see [`parse_system_spec`]) against the built-in catalog plus
/// the user's `entries`, mapped for either mode; `domain` (the form's own field) overrides the
/// spec's `domain=`. Returns the entry, the mapping and the options it was mapped with.
pub fn system<'a>(
    entries: &'a UserEntries,
    spec: &str,
    domain: Option<u64>,
    mode: ModeKind,
) -> Result<(&'a catalog::CatalogSystem, catalog::MappedSystem, MappingOptions), Error> {
    // The spec's own errors are at `system` (the form's field) or at its option.
    let (id, mut options) = parse_system_spec(spec.trim())?;
    if domain.is_some() {
        options.domain_size = domain;
    }
    let s = super::find_system(entries, &id).map_err(|e| not_in_catalog(field::SYSTEM, &id, e))?;
    map_for(s, &options, mode).map(|mapped| (s, mapped, options))
}

/// `s` mapped with `options` for `mode` (through the resolver); errors at [`field::DOMAIN`] or
/// [`field::SYSTEM`].
fn map_for(
    s: &catalog::CatalogSystem,
    options: &MappingOptions,
    mode: ModeKind,
) -> Result<catalog::MappedSystem, Error> {
    super::map_system(s, &MappingOptions { mode, ..*options }).map_err(|e| {
        let invalid = matches!(e, Error::InvalidField { .. });
        if invalid && (e.is_at("domain_size") || e.is_at("system.nvlink_size")) {
            e.placed_at(field::DOMAIN)
        } else {
            Error::invalid(field::SYSTEM, &s.id, format!("cannot be used by {}: {e}", mode.model_name()))
        }
    })
}

/// A catalog lookup's [`Error::UnknownName`] as an error at the form field `field` (`model` or
/// `system`), with the nearest ids as the hint.
fn not_in_catalog(field: &str, id: &str, e: Error) -> Error {
    match e {
        Error::UnknownName { known, .. } => {
            let e = Error::invalid(field, shorten(id), format!("is not in the {field} catalog"));
            if known.is_empty() { e } else { e.with_hint(format!("nearest: {}", known.join(", "))) }
        }
        other => other,
    }
}

/// Text as an error quotes it: trimmed, at most 60 characters, `(empty)` for none.
pub(crate) fn shorten(text: &str) -> String {
    let t: String = text.trim().chars().take(60).collect();
    if t.is_empty() { "(empty)".into() } else { t }
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
