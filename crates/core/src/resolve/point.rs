//! From a point of a sweep (one value per axis) to the model's inputs: the scenario with every
//! axis applied, resolved against the catalogs ([`super::point_system`]), with system-parameter
//! overrides, and in extended mode the workload, the part and the switches of the point.

use super::SystemParam;
use super::sweep_axis::{AxisKey, AxisValue};
use super::sweep_spec::{BatchRule, Constraints, SweepSpec};
use super::{ModelRef, SystemRef};
use crate::catalog::Precision;
use crate::cost::{ExtendedSetup, Pricer};
use crate::extended::sparsity::no_effect_note;
use crate::extended::{ExtendedOptions, Hardware, HardwareChoices, ModelFeatures};
use crate::mode::Mode;
use crate::reference::machine::Machine;
use crate::vocab::{Note, NoteList};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// Everything needed to evaluate one point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointInputs {
    /// Model id (catalog id, or the id of a user's model).
    pub model_id: String,
    /// System id.
    pub system_id: String,
    /// The model as the reference sees it (sequence-length axis applied); it also generates the
    /// candidates in extended mode.
    pub shape: ModelShape,
    /// The system as the reference sees it (precision, domain size and parameter axes applied).
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
    /// Weight sparsity [fraction] (0 = dense) in force.
    pub sparsity: f64,
    /// Labelled approximations of the system mapping and what the mode loses on the model.
    pub notes: Vec<Note>,
    /// Extended mode's inputs (`None`: reference mode).
    pub extended: Option<ExtendedSetup>,
}

impl PointInputs {
    /// What the point is priced with, in its mode ([`Pricer`]).
    pub fn pricer(&self) -> Pricer<'_> {
        Pricer { shape: &self.shape, system: &self.params, extended: self.extended.as_ref() }
    }

    /// The mode the point is priced in, with the point's own precision and sparsity.
    pub fn mode(&self) -> Mode {
        self.pricer().mode()
    }

    /// Memory per device [GB]: the feasibility limit.
    pub fn capacity_gb(&self) -> f64 {
        self.pricer().capacity_gb()
    }

    /// A system parameter as the point's mode reads it (`None`: not read, i.e. the vector rate in
    /// extended mode).
    pub fn system_value(&self, p: SystemParam) -> Option<f64> {
        (self.extended.is_none() || p != SystemParam::Vector).then(|| p.get(&self.params))
    }
}

/// Why a point cannot be evaluated before any search: the core's [`Error`], at the field that
/// fails (an axis `axis.<key>`, `devices`, `global_batch`, `strategies`, or the model's or the
/// system's own field).
#[derive(Debug, Clone, PartialEq)]
pub enum Unresolved {
    /// An input is invalid at this point (a parameter, a shape, a missing catalog value).
    Invalid(Error),
    /// The point asks for something the mode's model cannot express; the error's rule says what.
    Unsupported(Error),
}

impl Unresolved {
    /// The reason a point's result gives (`PointResult::reason`): an invalid input's whole
    /// message, or for an unsupported one the rule alone (what the model cannot express, e.g.
    /// [`SPARSITY_UNSUPPORTED`]).
    pub fn reason(&self) -> String {
        match self {
            Unresolved::Invalid(e) => e.to_string(),
            Unresolved::Unsupported(Error::InvalidField { rule, .. }) => rule.clone(),
            Unresolved::Unsupported(e) => e.to_string(),
        }
    }

    /// The error as it is.
    pub fn error(&self) -> &Error {
        match self {
            Unresolved::Invalid(e) | Unresolved::Unsupported(e) => e,
        }
    }
}

/// What the reference model says about weight sparsity, for messages in the page and the CLI.
pub const SPARSITY_UNSUPPORTED: &str = "weight sparsity is not in the reference model: it prices every weight as \
     dense (FLOPs, memory, traffic); only sparsity 0 can be evaluated (extended mode prices it on wafer-scale parts)";

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
    scenario: &mut super::Scenario,
) -> Result<PointInputs, Unresolved> {
    let invalid = Unresolved::Invalid;
    let mut constraints = spec.fixed;
    let mut fixed_batch = None;
    let mut seq = None;
    let mut accum = None;
    let mut sparsity_axis = None;
    let mut moe_axes = Vec::new();
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
            (AxisKey::Sparsity, AxisValue::Fraction(s)) => sparsity_axis = Some(*s),
            (AxisKey::Moe(a), v) => moe_axes.push((a, (*v).clone())),
            (key, AxisValue::Count(v)) if key.is_constraint() => constraints.set(key, *v),
            (key, v) => {
                return Err(Unresolved::Invalid(Error::invalid(format!("axis.{key}"), v, "does not fit the axis")));
            }
        }
    }
    if let (false, Some((a, v))) = (spec.mode.kind().models_experts(), moe_axes.first()) {
        return Err(Unresolved::Unsupported(Error::invalid(
            format!("axis.{}", AxisKey::Moe(*a)),
            v,
            "Mixture-of-Experts axes need extended mode (reference mode has no experts)",
        )));
    }
    if let (false, Some(s)) = (spec.mode.kind().models_weight_sparsity(), sparsity_axis.filter(|s| *s > 0.0)) {
        return Err(Unresolved::Unsupported(Error::invalid(
            format!("axis.{}", AxisKey::Sparsity),
            s,
            SPARSITY_UNSUPPORTED,
        )));
    }
    let mut strategies = scenario.strategies.clone();
    let mut mode_notes = Vec::new();
    // The switches' precision unless the sweep sets one (field, system spec or axis).
    scenario.precision = scenario.precision.or(super::mode_inputs::switch_precision(&spec.mode));
    // What the mode cannot price is left out and said (extended mode's 2D SUMMA).
    super::mode_inputs::priced_strategies(&spec.mode, &mut strategies, &mut mode_notes)
        .map_err(|(s, why)| Unresolved::Unsupported(Error::invalid("strategies", s.as_str(), why)))?;
    let absolutes: Vec<(SystemParam, f64)> = overrides
        .iter()
        .filter_map(|(p, v)| if let AxisValue::Absolute(a) = v { Some((*p, *a)) } else { None })
        .collect();
    let resolved = super::point_system(scenario, &spec.mapping, &absolutes, spec.mode.kind()).map_err(invalid)?;
    let r = &resolved.scenario;
    let mut shape = r.shape;
    if let Some(l) = seq {
        shape.l = l;
        shape.validate().map_err(invalid)?;
    }
    let mut params = r.mapped.params.clone();
    for (p, v) in &overrides {
        let x = match **v {
            AxisValue::Factor(f) => f * p.get(&params),
            AxisValue::Absolute(a) => a,
            _ => {
                return Err(Unresolved::Invalid(Error::invalid(
                    format!("axis.{}", AxisKey::Param(*p)),
                    v,
                    "is not a number",
                )));
            }
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
    // Extended mode's switches build its setup; the reference model reads the mapping as it is.
    let priced: Result<(Option<ExtendedSetup>, Vec<Note>, f64), Unresolved> = spec.mode.per_mode(
        (),
        |()| {
            let mut notes = r.mapped.approximations.clone();
            notes.extend(resolved.notes.iter().cloned());
            notes.extend(r.model.reference_caveats());
            Ok((None, notes, 0.0))
        },
        |(), o| {
            let mut options = ExtendedOptions {
                hardware: HardwareChoices { precision: r.mapped.precision, ..o.hardware },
                model: ModelFeatures { weight_sparsity: sparsity_axis.unwrap_or(o.model.weight_sparsity), ..o.model },
                ..o
            };
            options.validate().map_err(invalid)?;
            let mut workload = super::workload(&r.model).map_err(invalid)?;
            workload.seq_len = shape.l;
            for (a, v) in &moe_axes {
                options.moe = a.apply_options(options.moe, &v.to_string()).map_err(invalid)?;
                if let AxisValue::Count(n) = v {
                    a.apply_model(&mut workload, *n).map_err(invalid)?;
                }
            }
            workload.validate().map_err(invalid)?;
            let (mut hardware, hardware_notes) = super::hardware(
                &r.system,
                options.hardware.precision,
                options.hardware.measured_ceiling,
                &resolved.mapping,
            )
            .map_err(invalid)?;
            if !overrides.is_empty() {
                let device_capacity_gb = hardware.hbm_capacity_gb;
                apply_overrides(&mut hardware, &r.mapped.params, &params);
                // A capacity factor multiplies the memory the part's search fits in (the device
                // total its driver reports), as the explorer's sensitivity does, not the label.
                let factor = overrides.iter().find_map(|(p, v)| match (p, v) {
                    (SystemParam::HbmCapacity, AxisValue::Factor(f)) => Some(*f),
                    _ => None,
                });
                if let Some(f) = factor {
                    hardware.hbm_capacity_gb = device_capacity_gb * f;
                }
            }
            let mut notes = hardware_notes;
            if let Some(cal) = &spec.calibration {
                let (calibrated, note) = calibrate_point(cal, &r.system.id, &hardware);
                hardware = calibrated;
                notes.assumption(note);
            }
            notes.extend(resolved.notes.iter().cloned());
            if overrides.iter().any(|(p, _)| *p == SystemParam::Vector) {
                notes.not_applied(
                    "extended mode does not read the vector rate (element-wise work is priced by HBM traffic): \
                     the vector axis changes nothing here"
                        .to_string(),
                );
            }
            notes.extend(no_effect_note(&r.system.id, &hardware, options.model.weight_sparsity));
            let sparsity = options.model.weight_sparsity;
            Ok((Some(ExtendedSetup { workload, hardware, options }), notes, sparsity))
        },
    );
    let (ext, mut notes, sparsity) = priced?;
    // What the mode left out (none in reference mode), last.
    notes.extend(mode_notes);
    Ok(PointInputs {
        model_id: r.model.id.clone(),
        system_id: r.system.id.clone(),
        shape,
        params,
        precision: r.mapped.precision,
        strategies,
        devices: scenario.devices,
        global_batch,
        constraints,
        budget_samples: r.budget.samples(shape.l),
        sparsity,
        notes,
        extended: ext,
    })
}

/// The part of a point on `system_id` as the calibration's stack runs it, with a note saying
/// what was applied; a point on another system keeps the shipped fit and says so.
fn calibrate_point(cal: &crate::calibrate::Calibration, system_id: &str, hw: &Hardware) -> (Hardware, String) {
    if cal.check_system(system_id).is_err() {
        let note = format!("not calibrated: the calibration is of {}, this point is on {system_id}", cal.system);
        return (hw.clone(), note);
    }
    let changes: Vec<String> = cal.constants.changes().iter().map(|c| c.text()).collect();
    let what = if changes.is_empty() { "nothing changed".to_string() } else { changes.join("; ") };
    (cal.constants.apply(hw), format!("calibrated on your measured run: {what}"))
}

/// Applies the point's system-parameter axes (`before` → `after`) to extended mode's part: the
/// matrix rate scales the peak and both achievable ceilings by the same factor; memory and network
/// values are taken over when the axes change them (the network tiers as the reference derives
/// them).
fn apply_overrides(hw: &mut Hardware, before: &SystemParams, after: &SystemParams) {
    if after.matrix_flops_fp16 != before.matrix_flops_fp16 {
        let f = after.matrix_flops_fp16 / before.matrix_flops_fp16;
        hw.matmul_peak_tflops *= f;
        hw.matmul_ceiling_tflops *= f;
        hw.attention_ceiling_tflops *= f;
    }
    // A capacity axis sets the value; otherwise the part keeps the device total its driver
    // reports (`Hardware::hbm_capacity_gb`), which the label in `before` understates.
    if after.hbm_capacity != before.hbm_capacity {
        hw.hbm_capacity_gb = after.hbm_capacity;
    }
    hw.hbm_bandwidth_gbps = after.hbm_bandwidth;
    hw.net = Machine::new(after).net;
    // The part's own reference view follows (its rates stay at the attention precision).
    let p = &mut hw.params;
    p.matrix_flops_fp16 *= after.matrix_flops_fp16 / before.matrix_flops_fp16;
    p.vector_flops_fp16 = after.vector_flops_fp16;
    p.hbm_capacity = after.hbm_capacity;
    p.hbm_bandwidth = after.hbm_bandwidth;
    (p.nvlink_bandwidth, p.ib_bandwidth, p.domain_size) =
        (after.nvlink_bandwidth, after.ib_bandwidth, after.domain_size);
}
