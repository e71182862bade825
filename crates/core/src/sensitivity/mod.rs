//! "What would help most": the scenario's search re-run with one system feature at ×0.5 and at ×2
//! of its own value — matrix FLOP rate (every precision), HBM bandwidth, HBM capacity, scale-up
//! bandwidth, scale-out bandwidth and scale-up domain size ([`Feature`]) — each re-searched in the
//! scenario's mode, strategies and execution choices, so the best layout may change. The result
//! gives, per point, the training days on the scenario's budget, the device-hours (and energy and
//! price where known, [`crate::run_cost`]), the best layout and the change against the baseline
//! [%]; the features are sorted by effect, the largest saving first ([`SensitivityResult`]).
//!
//! * [`feature`]: the features, their units and how one is scaled on the system and the part;
//! * [`run`]: [`Sensitivity`], resumable (`step(budget)`) and splittable over workers
//!   ([`Sensitivity::part`] + [`Sensitivity::absorb`] equal the single run);
//! * [`result`]: the points, the per-feature effects, their order, and the JSON/CSV forms.
//!
//! Deterministic (searches are; ties keep [`Feature::ALL`]'s order) and panic-free on any input:
//! a factor that cannot apply (a domain of 1 halved, an odd domain halved, a domain already
//! holding every device doubled) is a point that says why.

pub mod feature;
pub mod result;
pub mod run;

pub use feature::{Feature, Unscalable, scaled};
pub use result::{FeatureEffect, Point, PointStatus, SensitivityResult};
pub use run::{Base, FACTORS, Found, POINTS, Sensitivity};
