//! From a catalog entry to the reference model's [`SystemParams`]:
//! `entry + domain size + NICs per device + precision → SystemParams`.
//!
//! Decisions (each value that is not read directly from the catalog is reported in
//! [`MappedSystem::approximations`]; nothing is filled in silently):
//!
//! * **Matrix peak** (`matrix_flops_fp16`, the reference's `R_mat`): the dense matrix rate of the
//!   chosen precision (`bf16`, `fp16`, `fp8`, `tf32`; `fp32` uses `fp32_matrix`, else the FP32
//!   vector rate, labelled). A precision the entry does not list is an error naming the listed ones.
//! * **Vector peak** (`vector_flops_fp16`, `R_vec`, used by element-wise layers and for
//!   `TCF = R_mat/R_vec` in attention): the 16-bit vector rate (`fp16_vector`) for 16- and 8-bit
//!   training (8-bit recipes run element-wise work in 16 bits), the FP32 vector rate for FP32/TF32.
//!   When the 16-bit vector rate is missing the FP32 vector rate is used and labelled: it is a lower
//!   bound (16-bit vector math is 1–4× faster on every GPU listed), so vector-bound layers come out
//!   slow, never optimistic. When both are missing the mapping fails and asks for `vector=`.
//! * **Scale-up bandwidth** (`nvlink_bandwidth`, `B_nv`): the per-device **unidirectional**
//!   bandwidth. The reference's values are exactly the catalog's unidirectional figures — A100 300
//!   (NVLink 3, 600 bidirectional), H200 450 (NVLink 4, 900 bidirectional), B200 900 (NVLink 5, 1800
//!   bidirectional) — and the ring model's `c·V/B` is the time for each device to send its share
//!   over its outgoing links while receiving on the incoming ones at the same time, i.e. one
//!   direction. A missing unidirectional figure is taken as half the bidirectional one (labelled).
//!   For switchless meshes (AMD xGMI, Gaudi RoCE) the figure is the sum over all peer links: a group
//!   spanning the whole domain can use it, a smaller group cannot (labelled; extended mode prices a
//!   group of k devices in one domain by its k − 1 pair links; `scale_up=` overrides).
//! * **Scale-out bandwidth** (`ib_bandwidth`, `B_ib`): the per-device NIC bandwidth in GB/s (one
//!   direction), or `nic_gbit_per_device / 8` (labelled). The catalog's figures are per device,
//!   i.e. one NIC of that speed per device; `nic_factor` = the chosen NICs per device (default 1)
//!   multiplies it where the reference's ring model lets several NICs work in parallel.
//! * **Efficiencies and latencies**: the entry's `network` values, which default to the reference's
//!   0.7 / 2.5 µs (scale-up) and 0.7 / 5 µs (scale-out); the hardware catalog states none.
//! * **Element size**: 4e-9 GB (FP32, TF32), 2e-9 GB (FP16, BF16), 1e-9 GB (FP8, labelled as an
//!   approximation); dropout masks 1e-9 GB; FLOP counts in TFLOP (`flops_units` 1e-12).
//! * **Presets** (the reference's four files) map to their exact parameters; only the domain size
//!   and NIC count are replaced when given, and only 16-bit precisions are accepted.
//! * **Estimates**: a value whose `field_sources` text starts with `estimate` (a figure the
//!   vendor does not publish, filled in with its reasoning so the part runs out of the box) is
//!   reported among the approximations with that reasoning, whenever the mapping reads it.
//! * **Parts the model was not made for** (wafer-scale, dataflow, IPU, torus) map when the data is
//!   there, always labelled with the entry's `model_fit` statement.
//! * **Provenance**: every parameter's origin (catalog field, derived, the user's value, a default,
//!   the reference file, unread) is recorded as the mapping decides it
//!   ([`MappedSystem::provenance`]), typed, with the entry's reasoning when the figure is an
//!   estimate.
//! * **Which model reads it** ([`MappingOptions::mode`]): extended mode never reads the vector
//!   rates (a missing one maps to an unread placeholder instead of failing, with no note) and keeps
//!   stored tensors in 16 bits under FP8 (no "every tensor at 1 byte" note).

use super::precision::Precision;
use super::provenance::{Origin, Provenance};
use super::system::CatalogSystem;
use crate::mode_kind::ModeKind;
use crate::vocab::{Note, NoteKind, NoteList};
use crate::{Error, SystemParams};

/// Choices made when a catalog entry becomes [`SystemParams`]. `None` = the entry's own value (or
/// the documented rule above).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MappingOptions {
    /// Scale-up domain size in devices (default: the entry's `scale_up.domain_size`).
    pub domain_size: Option<u64>,
    /// NICs per device, each of the entry's per-device scale-out bandwidth (default 1).
    pub nics_per_device: Option<u64>,
    /// Training precision (default: bf16 when listed, else fp16).
    pub precision: Option<Precision>,
    /// Vector rate in TFLOP/s replacing the catalog's.
    pub vector_tflops: Option<f64>,
    /// Scale-up bandwidth per device, one direction, in GB/s replacing the catalog's.
    pub scale_up_gbps: Option<f64>,
    /// Scale-out bandwidth per NIC, one direction, in GB/s replacing the catalog's.
    pub scale_out_gbps: Option<f64>,
    /// The scale-out fabric's stated figures over the entry's `fabric` (a run's words, a named
    /// instance, the spec's `fabric=…` keys). Only extended mode reads it
    /// ([`super::fabric`]); the reference parameters never change with it.
    pub fabric: Option<super::fabric::Fabric>,
    /// The model that reads the mapping (default: reference mode). Extended mode never reads the
    /// vector rates, so an entry without one maps (placeholder, [`Origin::Unread`]), and it prices
    /// stored tensors in 16 bits under FP8.
    pub mode: ModeKind,
}

/// The result of a mapping: the parameters and every value that did not come straight from the
/// catalog, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedSystem {
    /// What the reference model reads.
    pub params: SystemParams,
    /// The precision the rates belong to.
    pub precision: Precision,
    /// Labelled approximations, overrides and derived values (empty for an exact preset).
    pub approximations: Vec<Note>,
    /// Where each parameter came from, one entry per [`SystemParams`] field, in field order.
    pub provenance: Vec<Provenance>,
}

impl MappedSystem {
    /// Where parameter `param` (a [`SystemParams`] field name) came from.
    pub fn origin_of(&self, param: &str) -> Option<&Provenance> {
        self.provenance.iter().find(|p| p.param == param)
    }
}

/// The parameters of [`SystemParams`] in field order.
pub const SYSTEM_PARAMS: [&str; 16] = SystemParams::FIELDS;

/// Origins recorded while mapping, one per parameter (a later record replaces an earlier one).
#[derive(Debug, Default)]
struct Origins(Vec<Provenance>);

impl Origins {
    fn set(&mut self, param: &'static str, origin: Origin) {
        self.0.retain(|p| p.param != param);
        self.0.push(Provenance::new(param, origin));
    }

    fn catalog(&mut self, param: &'static str, field: &'static str, what: impl Into<String>) {
        self.set(param, Origin::Catalog { field, what: what.into() });
    }

    /// Marks the parameters read from catalog group `group` as estimates when the entry says so.
    fn estimates(&mut self, sys: &CatalogSystem, group: &str, params: &[&str]) {
        if !sys.field_sources.is_estimate(group) {
            return;
        }
        let why = sys.field_sources.get(group).unwrap_or_default().to_string();
        for p in self.0.iter_mut().filter(|p| params.contains(&p.param)) {
            if matches!(p.origin, Origin::Catalog { .. } | Origin::Derived { .. }) {
                p.estimate = Some(why.clone());
            }
        }
    }

    /// In [`SYSTEM_PARAMS`] order.
    fn finish(mut self) -> Vec<Provenance> {
        crate::sort::sort_by_key(&mut self.0, |p| {
            SYSTEM_PARAMS.iter().position(|n| *n == p.param).unwrap_or(usize::MAX)
        });
        self.0
    }
}

fn unknown(sys: &CatalogSystem, field: &str, what: &str, hint: impl Into<String>) -> Error {
    Error::invalid(field, "null (unknown)", format!("{} lists no {what}", sys.id)).with_hint(hint)
}

/// The figures a hardware entry lacks for a mapping at a 16-bit precision, as `(catalog field,
/// study axis, unit, system-spec key)`: what a user must supply before the part maps.
fn missing_figures(sys: &CatalogSystem) -> Vec<(&'static str, &'static str, &'static str, Option<&'static str>)> {
    let p = &sys.peak_tflops;
    let (su, so) = (&sys.scale_up, &sys.scale_out);
    [
        (p.bf16.is_none() && p.fp16.is_none(), ("peak_tflops.bf16", "matrix", "TFLOP/s", None)),
        (
            p.fp16_vector.is_none() && p.fp32_vector.is_none(),
            ("peak_tflops.fp16_vector", "vector", "TFLOP/s", Some("vector")),
        ),
        (sys.memory_gb.is_none(), ("memory_gb", "hbm_capacity", "GB", None)),
        (sys.memory_bw_gbps.is_none(), ("memory_bw_gbps", "hbm_bandwidth", "GB/s", None)),
        (
            su.domain_size > 1 && su.bw_per_device_unidir_gbps.is_none() && su.bw_per_device_bidir_gbps.is_none(),
            ("scale_up.bw_per_device_unidir_gbps", "scale_up", "GB/s", Some("scale_up")),
        ),
        (
            so.nic_gbps_per_device.is_none() && so.nic_gbit_per_device.is_none(),
            ("scale_out.nic_gbps_per_device", "scale_out", "GB/s", Some("scale_out")),
        ),
    ]
    .into_iter()
    .filter_map(|(missing, f)| missing.then_some(f))
    .collect()
}

/// How to supply the missing figure `field` of `sys`, on the page and on the command line, and
/// which other figures the entry lacks (so the user learns them all at once).
pub fn supply_hint(sys: &CatalogSystem, field: &str) -> String {
    let missing = missing_figures(sys);
    let is_matrix = |f: &str| f.starts_with("peak_tflops.") && !f.ends_with("vector");
    // A matrix-peak field of any precision is supplied through the `matrix` axis.
    let matrix = ("peak_tflops.bf16", "matrix", "TFLOP/s", None);
    let this = missing
        .iter()
        .copied()
        .find(|(f, ..)| *f == field || (is_matrix(f) && is_matrix(field)))
        .or(is_matrix(field).then_some(matrix));
    let mut out = match this {
        Some((_, axis, unit, key)) => {
            let mut h = format!(
                "supply it on the page: add the study axis `{axis}=<{unit}>` (an absolute value stands in for the \
                 missing figure and is labelled), or set it in your copy of the entry (Catalog view: Duplicate & edit)"
            );
            if let Some(k) = key {
                h.push_str(&format!("; on the command line `{},{k}=<{unit}>`", sys.id));
            }
            h
        }
        None => "describe it in your own system file (Catalog view: Duplicate & edit)".to_string(),
    };
    let others: Vec<String> = missing
        .iter()
        .filter(|(f, ..)| Some(*f) != this.map(|t| t.0))
        .map(|(f, axis, ..)| format!("{f} ({axis}=)"))
        .collect();
    if !others.is_empty() {
        out.push_str(&format!("; {} also lacks {}", sys.id, others.join(", ")));
    }
    out
}

fn positive(field: &str, v: f64) -> Result<f64, Error> {
    if v.is_finite() && v > 0.0 { Ok(v) } else { Err(Error::invalid(field, v, "must be a positive finite number")) }
}

/// The precision a mapping uses: the requested one, else bf16 when the entry lists it, else fp16.
pub fn default_precision(sys: &CatalogSystem, requested: Option<Precision>) -> Result<Precision, Error> {
    if let Some(p) = requested {
        return Ok(p);
    }
    if sys.peak_tflops.bf16.is_some() {
        Ok(Precision::Bf16)
    } else if sys.peak_tflops.fp16.is_some() || sys.preset.is_some() {
        Ok(Precision::Fp16)
    } else {
        Err(unknown(sys, "peak_tflops.bf16", "16-bit matrix rate (bf16 or fp16)", listed_hint(sys)))
    }
}

fn listed_hint(sys: &CatalogSystem) -> String {
    let p = &sys.peak_tflops;
    let listed: Vec<&str> =
        [("bf16", p.bf16), ("fp16", p.fp16), ("fp8", p.fp8), ("tf32", p.tf32), ("fp32", p.fp32_matrix)]
            .into_iter()
            .filter(|(_, v)| v.is_some())
            .map(|(n, _)| n)
            .collect();
    if listed.is_empty() {
        format!("no dense matrix peak is published for this part; {}", supply_hint(sys, "peak_tflops.bf16"))
    } else {
        format!(
            "choose one of the listed precisions: {}; or {}",
            listed.join(", "),
            supply_hint(sys, "peak_tflops.bf16").replace("supply it", "supply this one")
        )
    }
}

/// Maps a catalog entry to [`SystemParams`] (see the module documentation for every rule).
pub fn to_system_params(sys: &CatalogSystem, opts: &MappingOptions) -> Result<MappedSystem, Error> {
    let precision = default_precision(sys, opts.precision)?;
    let mut notes = Vec::new();
    let mut origins = Origins::default();
    let mut params = match &sys.preset {
        Some(preset) => {
            for p in SYSTEM_PARAMS {
                origins.set(p, Origin::ReferenceFile);
            }
            if !precision.is_16bit() {
                return Err(Error::invalid(
                    "precision",
                    precision,
                    format!("{} is a 16-bit reference system file", sys.id),
                )
                .with_hint("use fp16 or bf16, or a hardware entry of the catalog for other precisions"));
            }
            preset.clone()
        }
        None => map_hardware(sys, precision, opts, &mut notes, &mut origins)?,
    };
    if let Some(n) = opts.domain_size {
        if n == 0 {
            return Err(Error::invalid("domain_size", n, "must be a positive integer"));
        }
        if n > sys.scale_up.domain_size {
            notes.note(NoteKind::Mapping, format!(
                "domain size {n} is larger than the {} devices {} connects in one scale-up domain: a hypothetical system",
                sys.scale_up.domain_size, sys.id
            ));
        }
        params.domain_size = n;
        origins.set("nvlink_size", Origin::User { what: "the domain size you chose" });
    }
    if let Some(k) = opts.nics_per_device {
        if k == 0 {
            return Err(Error::invalid("nics_per_device", k, "must be a positive integer"));
        }
        params.nic_factor = k as f64;
        origins.set("nic_factor", Origin::User { what: "the NICs per device you chose" });
    }
    if sys.preset.is_some() {
        if let Some(v) = opts.vector_tflops {
            params.vector_flops_fp16 = positive("vector", v)?;
            notes.note(NoteKind::Mapping, format!("vector rate {v} TFLOP/s given by the user"));
            origins.set("vector_flops_fp16", Origin::User { what: VECTOR_GIVEN });
        }
        if let Some(v) = opts.scale_up_gbps {
            params.nvlink_bandwidth = positive("scale_up", v)?;
            notes.note(NoteKind::Mapping, format!("scale-up bandwidth {v} GB/s given by the user"));
            origins.set("nvlink_bandwidth", Origin::User { what: SCALE_UP_GIVEN });
        }
        if let Some(v) = opts.scale_out_gbps {
            params.ib_bandwidth = positive("scale_out", v)?;
            notes.note(NoteKind::Mapping, format!("scale-out bandwidth {v} GB/s given by the user"));
            origins.set("ib_bandwidth", Origin::User { what: SCALE_OUT_GIVEN });
        }
    }
    params.validate()?;
    Ok(MappedSystem { params, precision, approximations: notes, provenance: origins.finish() })
}

/// Why a missing vector rate does not stop extended mode.
const UNREAD_VECTOR: &str =
    "no vector rate listed; extended mode prices element-wise work by its HBM traffic and never reads it";

/// The user's values, in words (the page's "taken from" column).
const VECTOR_GIVEN: &str = "the vector rate you gave";
const SCALE_UP_GIVEN: &str = "the scale-up bandwidth you gave: per device, one direction";
const SCALE_OUT_GIVEN: &str = "the scale-out bandwidth you gave: per NIC, one direction";

fn map_hardware(
    sys: &CatalogSystem,
    precision: Precision,
    opts: &MappingOptions,
    notes: &mut Vec<Note>,
    origins: &mut Origins,
) -> Result<SystemParams, Error> {
    if !sys.architecture.modelled_natively() {
        let fit = sys.model_fit.as_deref().unwrap_or("the GPU-style two-tier model is an approximation for it");
        notes.note(NoteKind::Mapping, format!("approximation ({}): {fit}", sys.architecture.as_str()));
    }
    let p = &sys.peak_tflops;
    let matrix = match precision {
        Precision::Bf16 => {
            p.bf16.ok_or_else(|| unknown(sys, "peak_tflops.bf16", "BF16 matrix rate", listed_hint(sys)))?
        }
        Precision::Fp16 => {
            p.fp16.ok_or_else(|| unknown(sys, "peak_tflops.fp16", "FP16 matrix rate", listed_hint(sys)))?
        }
        Precision::Fp8 => p.fp8.ok_or_else(|| unknown(sys, "peak_tflops.fp8", "FP8 matrix rate", listed_hint(sys)))?,
        Precision::Tf32 => {
            p.tf32.ok_or_else(|| unknown(sys, "peak_tflops.tf32", "TF32 matrix rate", listed_hint(sys)))?
        }
        Precision::Fp32 => match (p.fp32_matrix, p.fp32_vector) {
            (Some(m), _) => m,
            (None, Some(v)) => {
                notes.note(
                    NoteKind::Mapping,
                    format!("no FP32 matrix unit listed: FP32 matmuls priced at the FP32 vector rate {v} TFLOP/s"),
                );
                origins.set(
                    "matrix_flops_fp16",
                    Origin::Derived {
                        field: "peak_tflops.fp32_vector",
                        rule: "the FP32 vector rate (no FP32 matrix unit listed)",
                    },
                );
                v
            }
            (None, None) => return Err(unknown(sys, "peak_tflops.fp32_matrix", "FP32 rate", listed_hint(sys))),
        },
    };
    if !origins.0.iter().any(|o| o.param == "matrix_flops_fp16") {
        let field = match precision {
            Precision::Bf16 => "peak_tflops.bf16",
            Precision::Fp16 => "peak_tflops.fp16",
            Precision::Fp8 => "peak_tflops.fp8",
            Precision::Tf32 => "peak_tflops.tf32",
            Precision::Fp32 => "peak_tflops.fp32_matrix",
        };
        let what = match precision {
            Precision::Fp32 => "dense FP32 matrix peak".to_string(),
            other => format!("dense {} matrix peak", other.as_str().to_ascii_uppercase()),
        };
        origins.catalog("matrix_flops_fp16", field, what);
    }
    let reads_vector = opts.mode.reads_vector_rate();
    let vector = if let Some(v) = opts.vector_tflops {
        notes.note(NoteKind::Mapping, format!("vector rate {v} TFLOP/s given by the user"));
        origins.set("vector_flops_fp16", Origin::User { what: VECTOR_GIVEN });
        positive("vector", v)?
    } else {
        let sixteen = !matches!(precision, Precision::Fp32 | Precision::Tf32);
        match (sixteen, p.fp16_vector, p.fp32_vector) {
            (true, Some(v), _) => {
                origins.catalog("vector_flops_fp16", "peak_tflops.fp16_vector", "16-bit vector peak");
                v
            }
            (true, None, Some(v32)) if !reads_vector => {
                origins.set("vector_flops_fp16", Origin::Unread { why: UNREAD_VECTOR });
                v32
            }
            (true, None, Some(v32)) => {
                notes.note(NoteKind::Mapping, format!(
                    "no 16-bit vector rate listed: element-wise layers priced at the FP32 vector rate {v32} TFLOP/s \
                     (a lower bound: 16-bit vector math is at least as fast)"
                ));
                origins.set(
                    "vector_flops_fp16",
                    Origin::Derived {
                        field: "peak_tflops.fp32_vector",
                        rule: "the FP32 vector peak (no 16-bit vector rate listed; a lower bound)",
                    },
                );
                v32
            }
            (false, _, Some(v32)) => {
                origins.catalog(
                    "vector_flops_fp16",
                    "peak_tflops.fp32_vector",
                    "FP32 vector peak (FP32/TF32 training)",
                );
                v32
            }
            _ if !reads_vector => {
                // Any positive rate: extended mode prices element-wise work by its HBM traffic.
                origins.set("vector_flops_fp16", Origin::Unread { why: UNREAD_VECTOR });
                1.0
            }
            _ => {
                return Err(unknown(
                    sys,
                    "peak_tflops.fp16_vector",
                    "vector (non-matrix) rate",
                    supply_hint(sys, "peak_tflops.fp16_vector"),
                ));
            }
        }
    };
    let vector32 = match p.fp32_vector {
        Some(v) => {
            origins.catalog("vector_flops_fp32", "peak_tflops.fp32_vector", "");
            v
        }
        None => {
            if reads_vector {
                notes.note(
                    NoteKind::Mapping,
                    "FP32 vector rate unknown: vector_flops_fp32 set to 0 (the reference never reads it)".to_string(),
                );
            }
            origins.set("vector_flops_fp32", Origin::Unread { why: "0 (the model never reads it)" });
            0.0
        }
    };
    let capacity =
        sys.memory_gb.ok_or_else(|| unknown(sys, "memory_gb", "memory capacity", supply_hint(sys, "memory_gb")))?;
    let hbm_bw = sys
        .memory_bw_gbps
        .ok_or_else(|| unknown(sys, "memory_bw_gbps", "memory bandwidth", supply_hint(sys, "memory_bw_gbps")))?;
    origins.catalog("hbm_capacity", "memory_gb", "");
    origins.catalog("hbm_bandwidth", "memory_bw_gbps", "");
    let ib = if let Some(v) = opts.scale_out_gbps {
        notes.note(NoteKind::Mapping, format!("scale-out bandwidth {v} GB/s given by the user"));
        origins.set("ib_bandwidth", Origin::User { what: SCALE_OUT_GIVEN });
        positive("scale_out", v)?
    } else {
        match (sys.scale_out.nic_gbps_per_device, sys.scale_out.nic_gbit_per_device) {
            (Some(v), _) => {
                origins.catalog("ib_bandwidth", "scale_out.nic_gbps_per_device", "per NIC, one direction");
                v
            }
            (None, Some(gbit)) => {
                notes.note(
                    NoteKind::Mapping,
                    format!("scale-out bandwidth derived from {gbit} Gb/s as {} GB/s", gbit / 8.0),
                );
                origins.set(
                    "ib_bandwidth",
                    Origin::Derived {
                        field: "scale_out.nic_gbit_per_device",
                        rule: "the NIC's Gb/s divided by 8: per NIC, one direction",
                    },
                );
                gbit / 8.0
            }
            (None, None) => {
                return Err(unknown(
                    sys,
                    "scale_out.nic_gbps_per_device",
                    "scale-out (NIC) bandwidth",
                    format!(
                        "{} (e.g. 50 for one 400 Gb/s NIC per device)",
                        supply_hint(sys, "scale_out.nic_gbps_per_device")
                    ),
                ));
            }
        }
    };
    let domain = opts.domain_size.unwrap_or(sys.scale_up.domain_size);
    let su = &sys.scale_up;
    let nv = if let Some(v) = opts.scale_up_gbps {
        notes.note(NoteKind::Mapping, format!("scale-up bandwidth {v} GB/s given by the user"));
        origins.set("nvlink_bandwidth", Origin::User { what: SCALE_UP_GIVEN });
        positive("scale_up", v)?
    } else {
        match (su.bw_per_device_unidir_gbps, su.bw_per_device_bidir_gbps) {
            (Some(v), _) => {
                origins.catalog("nvlink_bandwidth", "scale_up.bw_per_device_unidir_gbps", "per device, one direction");
                if let Some(p2p) = su.p2p_bw_unidir_gbps.filter(|p2p| *p2p < v) {
                    notes.note(NoteKind::Mapping, format!(
                        "switchless mesh: {v} GB/s is the sum over all peer links, one device pair gets {p2p} GB/s; \
                         extended mode gives a group of k devices in one domain its k − 1 pair links (at most the sum), \
                         the published model every group the sum (`scale_up=` gives every group the figure you set)"
                    ));
                }
                v
            }
            (None, Some(bi)) => {
                notes.note(
                    NoteKind::Mapping,
                    format!("scale-up bandwidth taken as half of the bidirectional {bi} GB/s"),
                );
                origins.set(
                    "nvlink_bandwidth",
                    Origin::Derived {
                        field: "scale_up.bw_per_device_bidir_gbps",
                        rule: "half of the bidirectional bandwidth (both directions summed): one direction",
                    },
                );
                bi / 2.0
            }
            (None, None) if domain == 1 => {
                origins.set(
                    "nvlink_bandwidth",
                    Origin::Unread { why: "no scale-up bandwidth listed; never used with a one-device domain" },
                );
                notes.note(
                    NoteKind::Mapping,
                    "no scale-up bandwidth listed; with a domain of one device it is never used (set to the scale-out \
                     bandwidth)"
                        .to_string(),
                );
                ib
            }
            (None, None) => {
                return Err(unknown(
                    sys,
                    "scale_up.bw_per_device_unidir_gbps",
                    "scale-up bandwidth",
                    format!(
                        "{}; or use `domain=1` to put every group on the scale-out network",
                        supply_hint(sys, "scale_up.bw_per_device_unidir_gbps")
                    ),
                ));
            }
        }
    };
    // Extended mode never reads the vector rates: their estimates are not worth a note there.
    let vector_from_catalog = opts.vector_tflops.is_none() && reads_vector;
    let used = [
        ("peak_tflops", "matrix peak", true),
        ("vector", "vector rate", vector_from_catalog),
        ("memory", "memory capacity and bandwidth", true),
        ("scale_up", "scale-up bandwidth", opts.scale_up_gbps.is_none() && domain > 1),
        ("scale_out", "scale-out bandwidth", opts.scale_out_gbps.is_none()),
    ];
    origins.estimates(sys, "peak_tflops", &["matrix_flops_fp16"]);
    origins.estimates(sys, "vector", &["vector_flops_fp16", "vector_flops_fp32"]);
    origins.estimates(sys, "memory", &["hbm_capacity", "hbm_bandwidth"]);
    origins.estimates(sys, "scale_up", &["nvlink_bandwidth"]);
    origins.estimates(sys, "scale_out", &["ib_bandwidth"]);
    for (group, what, read) in used {
        if read && sys.field_sources.is_estimate(group) {
            let why = sys.field_sources.get(group).unwrap_or_default();
            notes
                .note(NoteKind::Mapping, format!("{what} of {} is an estimate, not a published figure: {why}", sys.id));
        }
    }
    if precision == Precision::Fp8 && opts.mode.stores_fp8_tensors_in_one_byte() {
        notes.note(
            NoteKind::Mapping,
            "fp8: every tensor priced at 1 byte per element; real FP8 recipes keep weights, optimizer states and \
             some activations in 16/32 bits, so memory comes out low"
                .to_string(),
        );
    }
    let net = sys.network;
    origins.catalog("nvlink_eff", "network.scale_up_eff", "");
    origins.catalog("nvlink_latency", "network.scale_up_latency_s", "");
    origins.catalog("ib_eff", "network.scale_out_eff", "");
    origins.catalog("ib_latency", "network.scale_out_latency_s", "");
    origins.catalog("nvlink_size", "scale_up.domain_size", "");
    origins.set("nic_factor", Origin::Default { rule: "one NIC per device (default)".to_string() });
    origins.set(
        "element_size",
        Origin::Default { rule: format!("{precision}: {} bytes per element", precision.element_size_gb() * 1e9) },
    );
    origins.set("mask_element_size", Origin::Default { rule: "1 byte per dropout-mask element".to_string() });
    origins.set("flops_units", Origin::Default { rule: "FLOP counts kept in TFLOP".to_string() });
    Ok(SystemParams {
        matrix_flops_fp16: positive("matrix", matrix)?,
        vector_flops_fp16: vector,
        vector_flops_fp32: vector32,
        hbm_bandwidth: hbm_bw,
        hbm_capacity: capacity,
        nvlink_bandwidth: nv,
        nvlink_eff: net.scale_up_eff,
        nvlink_latency: net.scale_up_latency_s,
        ib_bandwidth: ib,
        ib_eff: net.scale_out_eff,
        ib_latency: net.scale_out_latency_s,
        domain_size: domain,
        nic_factor: 1.0,
        element_size: precision.element_size_gb(),
        mask_element_size: 1e-9,
        flops_units: 1e-12,
    })
}
