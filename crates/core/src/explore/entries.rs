//! The catalogs a scenario's ids are resolved against live with the resolver
//! ([`crate::resolve::UserEntries`]); re-exported here, where the explorer's users import them.

pub use crate::resolve::UserEntries;
