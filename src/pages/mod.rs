//! One module per top-level view.

pub mod about;
pub mod catalog;
pub mod explorer;
pub mod models_table;
pub mod studies;
pub mod validation;
