//! The reference implementation's own JSON formats: its model dictionaries `{"l","e","h","depth"[,"f"]}`
//! (spec §1.1) and its system files `systems/config-<name>.json` (spec §1.2). Read (import) and
//! written (export) with the same checks as the versioned format.

use serde_json::{Map, Value};

use super::check::{Fields, Problems, failed, walk};
use super::emit::J;
use super::fields::{REFERENCE_MODEL_FIELDS, REFERENCE_SYSTEM_FIELDS};
use crate::{Error, ModelShape, SystemParams};

/// Whether an object looks like the reference's model JSON (has any of `l`, `e`, `h`, `depth`).
pub(crate) fn looks_like_model(obj: &Map<String, Value>) -> bool {
    ["l", "e", "h", "depth"].iter().any(|k| obj.contains_key(*k))
}

/// Whether an object looks like the reference's system JSON (has any of its rate/bandwidth keys).
pub(crate) fn looks_like_system(obj: &Map<String, Value>) -> bool {
    ["matrix_flops_fp16", "vector_flops_fp16", "hbm_bandwidth", "hbm_capacity", "nvlink_bandwidth", "ib_bandwidth"]
        .iter()
        .any(|k| obj.contains_key(*k))
}

/// Reads the reference's model JSON. `f` defaults to `4·e` (what every reference driver sets), with
/// a warning saying so.
pub(crate) fn read_reference_model(obj: &Map<String, Value>, report: &mut Problems) -> Option<ModelShape> {
    let start = report.errors.len();
    walk(REFERENCE_MODEL_FIELDS, "", obj, "", &[], report);
    let f = Fields::from_map(obj);
    let (e, h) = (f.int("e"), f.int("h"));
    if let (Some(e), Some(h)) = (e, h)
        && !failed(report, start, "e")
        && !failed(report, start, "h")
    {
        if h > e {
            report.error(
                Error::invalid("h", h, format!("must not exceed e = {e}"))
                    .with_hint("each head needs at least one embedding channel"),
            );
        } else if e % h != 0 {
            report.warn(
                Error::invalid("e", e, format!("is not a multiple of h = {h}"))
                    .with_hint(format!("the head width is rounded down to {}", e / h)),
            );
        }
    }
    if report.errors.len() > start {
        return None;
    }
    let e = e.unwrap_or(1);
    let ffn = match f.int("f") {
        Some(v) => v,
        None => {
            report.warn(
                Error::invalid("f", "absent", format!("set to 4·e = {}", 4 * e))
                    .with_hint("the reference's drivers always use f = 4·e; give f to change it"),
            );
            4 * e
        }
    };
    let shape = ModelShape {
        l: f.int("l").unwrap_or(1),
        e,
        h: f.int("h").unwrap_or(1),
        depth: f.int("depth").unwrap_or(1),
        f: ffn,
    };
    match shape.validate() {
        Ok(()) => Some(shape),
        Err(err) => {
            report.error(err);
            None
        }
    }
}

/// Reads the reference's system JSON (also a system document's `preset` object, with `prefix`
/// `"preset."`). Optional keys get the reference's values, each with a warning.
pub(crate) fn read_reference_system(
    obj: &Map<String, Value>,
    prefix: &str,
    report: &mut Problems,
) -> Option<SystemParams> {
    let start = report.errors.len();
    walk(REFERENCE_SYSTEM_FIELDS, "", obj, prefix, &[], report);
    let f = Fields::from_map(obj);
    let p = |k: &str| format!("{prefix}{k}");
    if let Some(u) = f.num("flops_units")
        && u != 1e-12
        && !failed(report, start, &p("flops_units"))
    {
        report.error(
            Error::invalid(p("flops_units"), u, "must be 1e-12")
                .with_hint("fmperf keeps FLOP counts in TFLOP and rates in TFLOP/s"),
        );
    }
    if f.bool("empirical") == Some(true) {
        report.error(
            Error::invalid(p("empirical"), true, "must be false")
                .with_hint("empirical mode needs measurement files that the reference does not ship"),
        );
    }
    if let Some(nb) = f.int("summa_nb") {
        report.warn(
            Error::invalid(p("summa_nb"), nb, "is ignored")
                .with_hint("the 2D search sets the panel count per candidate (spec Q18)"),
        );
    }
    if report.errors.len() > start {
        return None;
    }
    let mut defaulted = |key: &str, default: f64, what: &str| -> f64 {
        f.num(key).unwrap_or_else(|| {
            report.warn(Error::invalid(p(key), "absent", format!("set to {default:e} ({what})")));
            default
        })
    };
    let nic_factor = defaulted("nic_factor", 1.0, "one NIC per device");
    let element_size = defaulted("element_size", 2e-9, "16-bit elements");
    let mask_element_size = defaulted("mask_element_size", 1e-9, "1-byte dropout masks");
    let num = |k: &str| f.num(k).unwrap_or(0.0);
    let params = SystemParams {
        matrix_flops_fp16: num("matrix_flops_fp16"),
        vector_flops_fp16: num("vector_flops_fp16"),
        vector_flops_fp32: num("vector_flops_fp32"),
        hbm_bandwidth: num("hbm_bandwidth"),
        hbm_capacity: num("hbm_capacity"),
        nvlink_bandwidth: num("nvlink_bandwidth"),
        nvlink_eff: num("nvlink_eff"),
        nvlink_latency: num("nvlink_latency"),
        ib_bandwidth: num("ib_bandwidth"),
        ib_eff: num("ib_eff"),
        ib_latency: num("ib_latency"),
        domain_size: f.int("nvlink_size").unwrap_or(1),
        nic_factor,
        element_size,
        mask_element_size,
        flops_units: 1e-12,
    };
    match params.validate() {
        Ok(()) => Some(params),
        Err(err) => {
            report.error(err);
            None
        }
    }
}

/// The reference's model JSON of a shape.
pub fn model_json(shape: &ModelShape) -> J {
    J::obj()
        .put("l", J::Int(shape.l))
        .put("e", J::Int(shape.e))
        .put("h", J::Int(shape.h))
        .put("depth", J::Int(shape.depth))
        .put("f", J::Int(shape.f))
}

/// The reference's system JSON of a parameter set (with `empirical: false` and `summa_nb: 4`, as
/// the shipped files have them).
pub fn system_json(p: &SystemParams) -> J {
    J::obj()
        .put("matrix_flops_fp16", J::Num(p.matrix_flops_fp16))
        .put("vector_flops_fp16", J::Num(p.vector_flops_fp16))
        .put("vector_flops_fp32", J::Num(p.vector_flops_fp32))
        .put("hbm_bandwidth", J::Num(p.hbm_bandwidth))
        .put("hbm_capacity", J::Num(p.hbm_capacity))
        .put("nvlink_bandwidth", J::Num(p.nvlink_bandwidth))
        .put("nvlink_eff", J::Num(p.nvlink_eff))
        .put("nvlink_latency", J::Num(p.nvlink_latency))
        .put("ib_bandwidth", J::Num(p.ib_bandwidth))
        .put("ib_eff", J::Num(p.ib_eff))
        .put("ib_latency", J::Num(p.ib_latency))
        .put("nvlink_size", J::Int(p.domain_size))
        .put("nic_factor", J::Num(p.nic_factor))
        .put("empirical", J::Bool(false))
        .put("summa_nb", J::Int(4))
        .put("element_size", J::Num(p.element_size))
        .put("mask_element_size", J::Num(p.mask_element_size))
        .put("flops_units", J::Num(p.flops_units))
}

/// A preset object inside a system document: the reference's fields without the two knobs the
/// search never reads.
pub(crate) fn preset_json(p: &SystemParams) -> J {
    match system_json(p) {
        J::Obj(items) => J::Obj(items.into_iter().filter(|(k, _)| k != "empirical" && k != "summa_nb").collect()),
        other => other,
    }
}
