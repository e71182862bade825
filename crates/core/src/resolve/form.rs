//! A scenario's model and system as a form or a command line writes them (a model id, a system
//! spec `ID[,key=value]…` with the form's own domain field), resolved against the catalogs, with
//! every error at the form's field ([`field`]: `model`, `system`, `domain`). The explorer's form
//! (`explore::ExploreFields`) resolves its model and system here.

use super::UserEntries;
use crate::catalog::{self, MappingOptions, parse_system_spec};
use crate::mode_kind::ModeKind;
use crate::{Error, ModelShape};

/// The fields this resolution's errors name (the explorer's form fields of the same names).
pub mod field {
    /// Model catalog id.
    pub const MODEL: &str = "model";
    /// System catalog id.
    pub const SYSTEM: &str = "system";
    /// Scale-up domain size [devices].
    pub const DOMAIN: &str = "domain";
}

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
    let (id, mut options) = parse_system_spec(spec.trim()).map_err(|e| match e {
        Error::InvalidField { field, value, rule, hint } if field == "system" => {
            Error::InvalidField { field: field::SYSTEM.into(), value, rule, hint }
        }
        other => other,
    })?;
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
    super::map_system(s, &MappingOptions { mode, ..*options }).map_err(|e| match e {
        Error::InvalidField { field, value, rule, hint } if field == "domain_size" || field == "system.nvlink_size" => {
            Error::InvalidField { field: field::DOMAIN.into(), value, rule, hint }
        }
        other => Error::invalid(field::SYSTEM, &s.id, format!("cannot be used by {}: {other}", mode.model_name())),
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
