//! The catalogs a scenario's ids are resolved against: the built-in catalogs plus the user's own
//! entries (models and systems saved in the page's Catalog view, or read from files), passed in as
//! a value rather than read from a global, so the explorer can price a system the user defined.
//!
//! A user entry whose id equals a built-in id is found first (the user's copy wins, as in the page's
//! pickers, which mark it as the user's).

use crate::Error;
use crate::catalog::{self, CatalogModel, CatalogSystem};
use crate::hint;

/// The user's models and systems (each already validated by the versioned format's reader).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UserEntries {
    /// The user's models.
    pub models: Vec<CatalogModel>,
    /// The user's systems.
    pub systems: Vec<CatalogSystem>,
}

/// The built-in catalogs alone, as a value that lives as long as they do.
static BUILTIN_ONLY: UserEntries = UserEntries { models: Vec::new(), systems: Vec::new() };

impl UserEntries {
    /// No user entries: the built-in catalogs only.
    pub fn none() -> UserEntries {
        UserEntries::default()
    }

    /// The built-in catalogs only, borrowed for as long as the catalogs live (what the CLI and
    /// validation resolve against: they have no user entries).
    pub fn builtin() -> &'static UserEntries {
        &BUILTIN_ONLY
    }

    /// Whether `id` names one of the user's models.
    pub fn has_model(&self, id: &str) -> bool {
        self.models.iter().any(|m| m.id == id.trim())
    }

    /// Whether `id` names one of the user's systems.
    pub fn has_system(&self, id: &str) -> bool {
        self.systems.iter().any(|s| s.id == id.trim())
    }

    /// The model `id`: the user's entry of that id, else the catalog's. The error
    /// ([`Error::UnknownName`]) lists the nearest ids of both.
    pub fn find_model(&self, id: &str) -> Result<&CatalogModel, Error> {
        let t = id.trim();
        if let Some(m) = self.models.iter().find(|m| m.id == t) {
            return Ok(m);
        }
        catalog::find_model(t).map_err(|e| self.widen(e, self.models.iter().map(|m| m.id.as_str())))
    }

    /// The system `id`: the user's entry of that id, else the catalog's (reference names such as
    /// `H200` included). The error lists the nearest ids of both.
    pub fn find_system(&self, id: &str) -> Result<&CatalogSystem, Error> {
        let t = id.trim();
        if let Some(s) = self.systems.iter().find(|s| s.id == t) {
            return Ok(s);
        }
        catalog::find_system(t).map_err(|e| self.widen(e, self.systems.iter().map(|s| s.id.as_str())))
    }

    /// A catalog lookup error with the user's ids among the nearest names (unchanged without any).
    fn widen<'a>(&self, e: Error, user_ids: impl Iterator<Item = &'a str>) -> Error {
        let mut ids: Vec<&str> = user_ids.collect();
        if ids.is_empty() {
            return e;
        }
        match e {
            Error::UnknownName { kind, name, known } => {
                ids.extend(known.iter().map(String::as_str));
                let known = hint::closest(&name, ids, 5).into_iter().map(str::to_string).collect();
                Error::UnknownName { kind, name, known }
            }
            other => other,
        }
    }
}
