//! A sweep point's scenario against the catalogs: the model and system entries, the system mapped
//! with the sweep's mapping values, and the three ways a sweep makes a system usable that the
//! catalog alone does not describe (each labelled in the point's notes):
//!
//! * **stand-ins**: an absolute value of a system-parameter axis (`matrix=1000`,
//!   `hbm_capacity=1500`, …) replaces the system's own value anyway; where the catalog lists none
//!   (a part whose dense peak is not published), it stands in for the missing value;
//! * **one scale-up domain**: a system without a scale-out (NIC) bandwidth is usable for jobs that
//!   fit in one scale-up domain, which never use the scale-out network (a placeholder bandwidth that
//!   cannot change any result);
//! * **extended mode without a vector rate**: extended mode prices element-wise work by its HBM
//!   traffic and never reads the vector rate, so a part whose entry lacks one (TPUs, Gaudi 2) maps
//!   with an unread placeholder that is not shown (the mapping's own rule for extended mode,
//!   [`MappingOptions::mode`]).
//!
//! Each case is decided from the entry's values (typed options), never from an error's text.

use super::{ResolvedScenario, Scenario, SystemParam, SystemRef, UserEntries};
use crate::catalog::{CatalogSystem, MappingOptions, Precision, default_precision};
use crate::mode_kind::ModeKind;
use crate::vocab::{Note, NoteKind};

/// A system resolved for one point, with what was done to make it usable.
#[derive(Debug, Clone)]
pub struct PointSystem {
    /// The scenario resolved (its `system` is the entry actually mapped).
    pub scenario: ResolvedScenario,
    /// The mapping options the system was mapped with (scenario choices plus the sweep's values).
    pub mapping: MappingOptions,
    /// Labelled stand-ins and placeholders.
    pub notes: Vec<Note>,
}

/// The scenario's mapping choices with the sweep's values.
fn with_extra(scenario: &Scenario, extra: &MappingOptions) -> MappingOptions {
    MappingOptions {
        vector_tflops: extra.vector_tflops,
        scale_up_gbps: extra.scale_up_gbps,
        scale_out_gbps: extra.scale_out_gbps,
        mode: extra.mode,
        ..scenario.mapping_options()
    }
}

/// The system entry of a scenario.
fn entry(scenario: &Scenario) -> Result<CatalogSystem, crate::Error> {
    super::scenario_system(UserEntries::builtin(), &scenario.system)
}

/// The scenario with `system` as its (inline) system.
fn with_system(scenario: &Scenario, system: CatalogSystem) -> Scenario {
    Scenario { system: SystemRef::Inline(Box::new(system)), ..scenario.clone() }
}

/// Fills the values `sys` lacks with the `absolutes` (a sweep's absolute system-parameter values);
/// returns a note per value filled.
fn fill_missing(sys: &mut CatalogSystem, precision: Precision, absolutes: &[(SystemParam, f64)]) -> Vec<Note> {
    let mut notes = Vec::new();
    for (param, v) in absolutes {
        let p = &mut sys.peak_tflops;
        let slot = match param {
            SystemParam::Matrix => match precision {
                Precision::Bf16 => &mut p.bf16,
                Precision::Fp16 => &mut p.fp16,
                Precision::Fp8 => &mut p.fp8,
                Precision::Tf32 => &mut p.tf32,
                Precision::Fp32 => &mut p.fp32_matrix,
            },
            SystemParam::Vector if precision.is_16bit() || precision == Precision::Fp8 => &mut p.fp16_vector,
            SystemParam::Vector => &mut p.fp32_vector,
            SystemParam::HbmCapacity => &mut sys.memory_gb,
            SystemParam::HbmBandwidth => &mut sys.memory_bw_gbps,
            SystemParam::ScaleUp if sys.scale_up.bw_per_device_bidir_gbps.is_none() => {
                &mut sys.scale_up.bw_per_device_unidir_gbps
            }
            SystemParam::ScaleOut if sys.scale_out.nic_gbit_per_device.is_none() => {
                &mut sys.scale_out.nic_gbps_per_device
            }
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(*v);
            let text = format!(
                "{} lists no {}: the sweep's {} = {v} {} stands in for it (a hypothetical value)",
                sys.id,
                param.describe(precision),
                param.key(),
                param.unit()
            );
            let kind = NoteKind::StandIn { what: "an absolute value of a sweep's system-parameter axis" };
            notes.push(Note::new(kind, text).of_entry(&sys.id).about(format!("axis.{}", param.key())));
        }
    }
    notes
}

/// The system of a sweep point (see the module documentation): stand-ins from the sweep's
/// `absolutes` (absolute system-parameter values), one-domain jobs without a NIC bandwidth, and (in
/// extended `mode`) parts without a vector rate.
pub fn point_system(
    scenario: &Scenario,
    extra: &MappingOptions,
    absolutes: &[(SystemParam, f64)],
    mode: ModeKind,
) -> Result<PointSystem, crate::Error> {
    let mut scenario = scenario.clone();
    let mut notes = Vec::new();
    if !absolutes.is_empty() {
        let mut sys = entry(&scenario)?;
        let precision = default_precision(&sys, scenario.precision).unwrap_or(Precision::Bf16);
        let filled = fill_missing(&mut sys, precision, absolutes);
        if !filled.is_empty() {
            notes.extend(filled);
            scenario = with_system(&scenario, sys);
        }
    }
    let extra = MappingOptions { mode, ..*extra };
    // A part without a NIC figure: usable by jobs that stay inside one scale-up domain (a
    // placeholder that no result reads); otherwise the mapping's own error names the figure.
    let mut sys = entry(&scenario)?;
    let (out, domain) = (&sys.scale_out, scenario.domain_size.unwrap_or(sys.scale_up.domain_size));
    if out.nic_gbps_per_device.is_none()
        && out.nic_gbit_per_device.is_none()
        && extra.scale_out_gbps.is_none()
        && scenario.devices <= domain
    {
        sys.scale_out.nic_gbps_per_device = Some(1.0);
        let text = format!(
            "{} lists no scale-out bandwidth; not needed here: the {} devices fit in one scale-up domain of {domain}",
            sys.id, scenario.devices
        );
        let kind =
            NoteKind::Placeholder { why: "the job fits in one scale-up domain and never uses the scale-out network" };
        notes.push(Note::new(kind, text).of_entry(&sys.id).about("system.scale_out"));
        scenario = with_system(&scenario, sys);
    }
    let mapping = with_extra(&scenario, &extra);
    let resolved = scenario.resolve_with(&mapping)?;
    Ok(PointSystem { scenario: resolved, mapping, notes })
}
