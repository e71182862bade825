//! Mixture-of-Experts training in extended mode: the model's experts, multi-head latent attention
//! and multi-token prediction ([`shape`]), their parameter counts ([`counts`]).

pub mod counts;
pub mod shape;

pub use counts::{ParameterCounts, parameter_counts};
pub use shape::{Mla, MoeShape, Router};
