//! From a point of a sweep (one value per axis) to the reference model's inputs: the scenario with
//! every axis applied, resolved against the catalogs, with system-parameter overrides.

use super::axis::{AxisKey, AxisValue, SystemParam};
use super::spec::{BatchRule, Constraints, SweepSpec};
use crate::catalog::Precision;
use crate::catalog::{self, MappingOptions, to_system_params};
use crate::format::{ModelRef, ResolvedScenario, Scenario, SystemRef};
use crate::{ModelShape, Strategy, SystemParams};

/// Everything needed to evaluate one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointInputs {
    /// Model id (catalog id, or the id of a user's model).
    pub model_id: String,
    /// System id.
    pub system_id: String,
    /// The model as the reference sees it (sequence-length axis applied).
    pub shape: ModelShape,
    /// The system (precision, domain size and parameter axes applied).
    pub params: SystemParams,
    /// The precision the system's rates belong to.
    pub precision: Precision,
    /// Strategies searched.
    pub strategies: Vec<Strategy>,
    /// Devices [count].
    pub devices: u64,
    /// Global batch `G` [samples].
    pub global_batch: u64,
    /// Configuration restrictions.
    pub constraints: Constraints,
    /// Training budget [samples] (a token budget divided by the sequence length).
    pub budget_samples: f64,
    /// Weight sparsity [fraction] (0 = dense).
    pub sparsity: f64,
    /// Labelled approximations of the system mapping and what the reference loses on the model.
    pub notes: Vec<String>,
}

/// Why a point cannot be evaluated before any search.
#[derive(Debug, Clone, PartialEq)]
pub enum Unresolved {
    /// An input is invalid at this point (a parameter, a shape, a missing catalog value).
    Invalid(String),
    /// The point asks for something the reference model cannot express.
    Unsupported(String),
}

/// What the reference model says about weight sparsity, for messages in the page and the CLI.
pub const SPARSITY_UNSUPPORTED: &str = "weight sparsity is not in the reference model: it prices every weight as \
     dense (FLOPs, memory, traffic); only sparsity 0 can be evaluated";

/// How a point names its model, system and size, known even when it cannot be resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct PointLabels {
    /// Model id as given (catalog id or the id of a user's model).
    pub model_id: String,
    /// System id as given.
    pub system_id: String,
    /// Devices [count].
    pub devices: u64,
}

/// Applies the axis values `values` (one per axis of `spec`) to the base scenario and resolves it.
pub fn resolve_point(spec: &SweepSpec, values: &[&AxisValue]) -> (PointLabels, Result<PointInputs, Unresolved>) {
    let mut scenario = spec.base.clone();
    let result = apply_and_resolve(spec, values, &mut scenario);
    let labels = PointLabels {
        model_id: match &scenario.model {
            ModelRef::Catalog(id) => id.clone(),
            ModelRef::Inline(m) => m.id.clone(),
        },
        system_id: match &scenario.system {
            SystemRef::Catalog(id) => id.clone(),
            SystemRef::Inline(s) => s.id.clone(),
        },
        devices: scenario.devices,
    };
    (labels, result)
}

fn apply_and_resolve(
    spec: &SweepSpec,
    values: &[&AxisValue],
    scenario: &mut crate::format::Scenario,
) -> Result<PointInputs, Unresolved> {
    let invalid = |e: crate::Error| Unresolved::Invalid(e.to_string());
    let mut constraints = spec.fixed;
    let mut fixed_batch = None;
    let mut seq = None;
    let mut accum = None;
    let mut sparsity = 0.0;
    let mut overrides: Vec<(SystemParam, &AxisValue)> = Vec::new();
    for (axis, value) in spec.axes.iter().zip(values) {
        match (axis.key, *value) {
            (AxisKey::Gpus, AxisValue::Count(n)) => scenario.devices = *n,
            (AxisKey::Domain, AxisValue::Count(n)) => scenario.domain_size = Some(*n),
            (AxisKey::Precision, AxisValue::Precision(p)) => scenario.precision = Some(*p),
            (AxisKey::GlobalBatch, AxisValue::Count(g)) => fixed_batch = Some(*g),
            (AxisKey::System, AxisValue::Name(id)) => scenario.system = SystemRef::Catalog(id.clone()),
            (AxisKey::Model, AxisValue::Name(id)) => scenario.model = ModelRef::Catalog(id.clone()),
            (AxisKey::Strategy, AxisValue::Strategy(s)) => scenario.strategies = vec![*s],
            (AxisKey::SeqLen, AxisValue::Count(l)) => seq = Some(*l),
            (AxisKey::Param(p), v) => overrides.push((p, v)),
            (AxisKey::Accum, AxisValue::Count(a)) => {
                accum = Some(*a);
                constraints.set(AxisKey::Accum, *a);
            }
            (AxisKey::Sparsity, AxisValue::Fraction(s)) => sparsity = *s,
            (key, AxisValue::Count(v)) if key.is_constraint() => constraints.set(key, *v),
            (key, v) => return Err(Unresolved::Invalid(format!("axis {key}: value {v} does not fit the axis"))),
        }
    }
    let (resolved, within_domain) = resolve_within_domain(scenario, &spec.mapping).map_err(invalid)?;
    let mut shape = resolved.shape;
    if let Some(l) = seq {
        shape.l = l;
        shape.validate().map_err(invalid)?;
    }
    let mut params = resolved.mapped.params.clone();
    for (p, v) in overrides {
        let x = match *v {
            AxisValue::Factor(f) => f * p.get(&params),
            AxisValue::Absolute(a) => a,
            _ => return Err(Unresolved::Invalid(format!("axis {}: value {v} is not a number", AxisKey::Param(p)))),
        };
        p.set(&mut params, x);
    }
    params.validate().map_err(invalid)?;
    let global_batch = match spec.batch {
        BatchRule::Fixed => fixed_batch.unwrap_or(scenario.global_batch),
        BatchRule::PerDevice(b) => {
            let g = (b as u128) * (scenario.devices as u128) * (accum.unwrap_or(1) as u128);
            u64::try_from(g).unwrap_or(u64::MAX)
        }
    };
    if sparsity > 0.0 {
        return Err(Unresolved::Unsupported(SPARSITY_UNSUPPORTED.to_string()));
    }
    let mut notes = resolved.mapped.approximations.clone();
    notes.extend(within_domain);
    notes.extend(resolved.model.reference_caveats());
    Ok(PointInputs {
        model_id: resolved.model.id.clone(),
        system_id: resolved.system.id.clone(),
        shape,
        params,
        precision: resolved.mapped.precision,
        strategies: scenario.strategies.clone(),
        devices: scenario.devices,
        global_batch,
        constraints,
        budget_samples: resolved.budget.samples(shape.l),
        sparsity,
        notes,
    })
}

/// The field of the mapping error of a system that lists no scale-out bandwidth.
const NO_SCALE_OUT: &str = "system.scale_out.nic_gbps_per_device";
/// The same without the scenario's prefix (mapping errors of [`resolve`] with extra values).
const NO_SCALE_OUT_UNPREFIXED: &str = "scale_out.nic_gbps_per_device";

/// Resolves `scenario` with the mapping values of `extra` (vector rate, scale-up and scale-out
/// bandwidth; see [`SweepSpec::mapping`]).
fn resolve(scenario: &Scenario, extra: &MappingOptions) -> Result<ResolvedScenario, crate::Error> {
    if extra.vector_tflops.is_none() && extra.scale_up_gbps.is_none() && extra.scale_out_gbps.is_none() {
        return scenario.resolve();
    }
    let model = match &scenario.model {
        ModelRef::Catalog(id) => catalog::find_model(id)?.clone(),
        ModelRef::Inline(m) => (**m).clone(),
    };
    let system = match &scenario.system {
        SystemRef::Catalog(id) => catalog::find_system(id)?.clone(),
        SystemRef::Inline(s) => (**s).clone(),
    };
    let shape = model.to_shape()?;
    let opts = MappingOptions {
        vector_tflops: extra.vector_tflops,
        scale_up_gbps: extra.scale_up_gbps,
        scale_out_gbps: extra.scale_out_gbps,
        ..scenario.mapping_options()
    };
    let mapped = to_system_params(&system, &opts)?;
    let budget = scenario.training_budget.unwrap_or(model.training_budget);
    Ok(ResolvedScenario { model, shape, system, mapped, budget })
}

/// Resolves `scenario`. A system that lists no scale-out (NIC) bandwidth is still usable for jobs
/// that fit in one scale-up domain, which never use the scale-out network: it is then mapped with
/// a placeholder bandwidth (that cannot change any result), and a note says so.
fn resolve_within_domain(
    scenario: &Scenario,
    extra: &MappingOptions,
) -> Result<(ResolvedScenario, Option<String>), crate::Error> {
    let e = match resolve(scenario, extra) {
        Ok(r) => return Ok((r, None)),
        Err(e) => e,
    };
    if !matches!(e.field(), Some(NO_SCALE_OUT | NO_SCALE_OUT_UNPREFIXED)) {
        return Err(e);
    }
    let mut entry = match &scenario.system {
        SystemRef::Catalog(id) => catalog::find_system(id)?.clone(),
        SystemRef::Inline(s) => (**s).clone(),
    };
    let domain = scenario.domain_size.unwrap_or(entry.scale_up.domain_size);
    if scenario.devices > domain {
        return Err(e);
    }
    entry.scale_out.nic_gbps_per_device = Some(1.0);
    let note = format!(
        "{} lists no scale-out bandwidth; not needed here: the {} devices fit in one scale-up domain of {domain}",
        entry.id, scenario.devices
    );
    let within = Scenario { system: SystemRef::Inline(Box::new(entry)), ..scenario.clone() };
    Ok((resolve(&within, extra)?, Some(note)))
}
