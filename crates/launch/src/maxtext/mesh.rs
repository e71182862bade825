//! MaxText's device mesh and batch: the `ici_<axis>_parallelism` (inside a slice) and
//! `dcn_<axis>_parallelism` (across slices) degrees of every mesh axis, `-1` meaning "the devices
//! that remain" (base.yml: `ici_fsdp_parallelism: -1`, `dcn_data_parallelism: -1`), and
//! `per_device_batch_size` (sequences per device, may be fractional), `gradient_accumulation_steps`
//! and `num_pipeline_microbatches` (MaxText's `pyconfig.py`: the global batch is
//! `per_device_batch_size · devices · gradient_accumulation_steps`).
//!
//! The axes map onto fmperf's degrees: data, fsdp, fsdp_transpose and expert shard the batch
//! (data-parallel; fsdp and fsdp_transpose also shard the model states: ZeRO-3; expert is also
//! the expert-parallel degree); tensor, tensor_transpose, tensor_sequence and autoregressive shard
//! the layers (tensor-parallel); sequence, context and context_autoregressive the sequence
//! (context-parallel); pipeline the layers into stages.

use super::Keys;
use crate::Launch;
use crate::settings::{SettingOrigin, number, positive};
use fmperf_core::Error;
use fmperf_core::extended::Sharding;
use fmperf_core::vocab::{Note, NoteList};

/// What an axis shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Data,
    Tensor,
    Context,
    Pipeline,
}

/// MaxText's mesh axes (`create_parallelisms_list` in `pyconfig.py`) and base.yml's default
/// degrees `(ici, dcn)`.
const AXES: &[(&str, Class, i64, i64)] = &[
    ("data", Class::Data, 1, -1),
    ("pipeline", Class::Pipeline, 1, 1),
    ("fsdp", Class::Data, -1, 1),
    ("fsdp_transpose", Class::Data, 1, 1),
    ("sequence", Class::Context, 1, 1),
    ("context", Class::Context, 1, 1),
    ("context_autoregressive", Class::Context, 1, 1),
    ("tensor", Class::Tensor, 1, 1),
    ("tensor_transpose", Class::Tensor, 1, 1),
    ("tensor_sequence", Class::Tensor, 1, 1),
    ("expert", Class::Data, 1, 1),
    ("autoregressive", Class::Tensor, 1, 1),
];

/// Most devices a mesh may have.
const MAX_DEVICES: u64 = 1 << 40;

/// Keys read here.
pub fn is_read(key: &str) -> bool {
    matches!(key, "per_device_batch_size" | "gradient_accumulation_steps" | "num_pipeline_microbatches")
        || AXES.iter().any(|(a, ..)| key == format!("ici_{a}_parallelism") || key == format!("dcn_{a}_parallelism"))
}

/// One degree as given: its value (`-1`: the rest) and its key.
struct Degree {
    axis: &'static str,
    class: Class,
    value: i64,
    origin: SettingOrigin,
    given: bool,
}

fn degree(k: &Keys, key: String, default: i64) -> Result<(i64, SettingOrigin, bool), Error> {
    match k.get(&key) {
        None => Ok((default, SettingOrigin::new(key, 0), false)),
        Some(r) => {
            let v = r.value.trim().replace('_', "");
            match v.parse::<i64>() {
                Ok(n) if n == -1 || (1..=1 << 20).contains(&n) => Ok((n, r.origin.clone(), true)),
                _ => Err(r.origin.error(&r.value, "must be a positive degree or -1 (the devices that remain)")),
            }
        }
    }
}

/// Reads the mesh and the batch of `k` into `l`. `gpus`: a device count the files state
/// (`# fmperf: gpus=N`), which resolves the `-1` degrees.
pub fn apply(l: &mut Launch, k: &Keys, gpus: Option<(u64, SettingOrigin)>) -> Result<(), Error> {
    let mut all: Vec<Degree> = Vec::with_capacity(2 * AXES.len());
    for &(axis, class, ici, dcn) in AXES {
        for (level, default) in [("ici", ici), ("dcn", dcn)] {
            let (value, origin, given) = degree(k, format!("{level}_{axis}_parallelism"), default)?;
            all.push(Degree { axis, class, value, origin, given });
        }
    }
    let mut fixed: u64 = 1;
    for d in all.iter().filter(|d| d.value > 0) {
        fixed = fixed.checked_mul(d.value as u64).filter(|p| *p <= MAX_DEVICES).ok_or_else(|| {
            d.origin.error(d.value, "the mesh degrees multiply to more devices than fmperf models (2^40)")
        })?;
    }
    let open: Vec<(Class, bool, SettingOrigin)> =
        all.iter().filter(|d| d.value == -1).map(|d| (d.class, d.given, d.origin.clone())).collect();
    let mut notes = Vec::new();
    // The product of the data-like degrees when a -1 among them cannot be resolved.
    let mut data_rest: Option<u64> = Some(1);
    if !open.is_empty() {
        let names = open.iter().map(|d| d.2.key.clone()).collect::<Vec<_>>().join(", ");
        let defaulted = if open.iter().all(|d| !d.1) { " (base.yml's default)" } else { "" };
        match &gpus {
            Some((n, o)) => {
                if !n.is_multiple_of(fixed) {
                    return Err(o.error(n, format!("must be a multiple of the degrees the files fix ({fixed})")));
                }
                let rest = n / fixed;
                if open.len() > 1 && open.iter().any(|d| d.0 != Class::Data) && rest > 1 {
                    return Err(open[0].2.error(
                        -1,
                        format!("{names} are all -1: fmperf cannot tell how {rest} devices split between them"),
                    ));
                }
                if open.iter().all(|d| d.0 == Class::Data) {
                    data_rest = Some(rest);
                } else {
                    data_rest = Some(1);
                    // One non-data -1 takes the rest.
                    for d in all.iter_mut().filter(|d| d.value == -1) {
                        d.value = rest as i64;
                    }
                }
                notes.reading(format!("{names} = -1{defaulted}: the {rest} devices that remain of {n}"));
            }
            None => {
                if let Some(d) = open.iter().find(|d| d.0 != Class::Data) {
                    return Err(d.2.error(
                        -1,
                        "-1 (the devices that remain) on a model-parallel axis needs the device count: give the degree, \
                         or a `# fmperf: gpus=N` line",
                    ));
                }
                data_rest = None;
                notes.reading(format!(
                    "{names} = -1{defaulted}: the devices that remain; the files do not state the device count, so the \
                     data-parallel degree and the global batch follow from --gpus"
                ));
            }
        }
    }
    let product =
        |c: Class| -> u64 { all.iter().filter(|d| d.class == c && d.value > 0).map(|d| d.value as u64).product() };
    let keys_of = |c: Class| -> SettingOrigin {
        let given: Vec<&Degree> = all.iter().filter(|d| d.class == c && d.value != 1).collect();
        match given.as_slice() {
            [] => all.iter().find(|d| d.class == c).map_or(SettingOrigin::new("parallelism", 0), |d| d.origin.clone()),
            [one] => one.origin.clone(),
            more => more[0].origin.with_key(more.iter().map(|d| d.origin.key.as_str()).collect::<Vec<_>>().join(" × ")),
        }
    };
    let (tp, cp, pp) = (product(Class::Tensor), product(Class::Context), product(Class::Pipeline));
    let s = &mut l.settings;
    s.tp.put(tp, &keys_of(Class::Tensor));
    s.cp.put(cp, &keys_of(Class::Context));
    s.pp.put(pp, &keys_of(Class::Pipeline));
    let axis_product = |name: &str| -> Option<u64> {
        let ds: Vec<&Degree> = all.iter().filter(|d| d.axis == name).collect();
        if ds.iter().any(|d| d.value == -1) { None } else { Some(ds.iter().map(|d| d.value as u64).product()) }
    };
    let ep = axis_product("expert").unwrap_or(1);
    if ep > 1 {
        s.moe.ep.put(
            ep,
            &all.iter()
                .find(|d| d.axis == "expert" && d.value > 1)
                .map_or(SettingOrigin::new("ici_expert_parallelism", 0), |d| d.origin.clone()),
        );
    }
    let fsdp = ["fsdp", "fsdp_transpose"].iter().map(|a| axis_product(a)).try_fold(1u64, |acc, p| p.map(|p| acc * p));
    let data = axis_product("data");
    let fsdp_origin = all
        .iter()
        .find(|d| (d.axis == "fsdp" || d.axis == "fsdp_transpose") && d.value != 1)
        .map_or(SettingOrigin::new("ici_fsdp_parallelism", 0), |d| d.origin.clone());
    let shard = match (fsdp, data_rest) {
        (Some(f), _) if f > 1 => Some(f),
        (Some(_), _) => Some(1),
        (None, Some(rest)) if data.is_none() => {
            // data and fsdp both -1 with a known device count: one slice, fsdp takes the rest.
            notes.reading(
                "a -1 on both the data and the fsdp axes: read as one slice, FSDP over the devices that remain".into(),
            );
            Some(rest)
        }
        (None, Some(rest)) => Some(rest),
        (None, None) => None,
    };
    match shard {
        Some(1) => {
            s.sharding.put(Sharding::Ddp, &fsdp_origin);
            notes.reading("fsdp degree 1: plain data parallelism, model states replicated (zero0)".into());
        }
        _ => {
            s.sharding.put(Sharding::Zero3, &fsdp_origin);
            notes.reading("FSDP axis: parameters, gradients and optimizer states sharded (zero3)".into());
            if data.is_some_and(|d| d > 1) && fsdp.is_some_and(|f| f > 1) {
                notes.reading(
                    "data replicas of FSDP shards (hybrid sharding): priced as ZeRO-3 over every data-parallel rank"
                        .into(),
                );
            }
        }
    }
    if let Some(d) = all.iter().find(|d| d.axis == "tensor_sequence" && d.value > 1) {
        s.sequence_parallel.put(true, &d.origin);
        notes.reading(
            "tensor_sequence axis: tensor parallelism with the sequence sharded between the layers (sequence parallel)"
                .into(),
        );
    }
    if all.iter().any(|d| d.axis == "autoregressive" && d.value > 1) {
        notes.reading("autoregressive axis (an inference axis): read as tensor parallelism".into());
    }
    // Devices and data-parallel degree.
    let model_parallel: u64 =
        all.iter().filter(|d| d.class != Class::Data && d.value > 0).map(|d| d.value as u64).product();
    let data_fixed: u64 =
        all.iter().filter(|d| d.class == Class::Data && d.value > 0).map(|d| d.value as u64).product();
    let dp = data_rest.map(|r| r * data_fixed);
    let devices = dp.map(|d| d * model_parallel);
    if let (Some(dp), Some(n)) = (dp, devices) {
        let o = match &gpus {
            Some((_, o)) if !open.is_empty() => o.clone(),
            _ => keys_of(Class::Data),
        };
        s.dp.put(dp, &keys_of(Class::Data));
        s.devices.put(n, &o.with_key(format!("{} (mesh)", o.key)));
        notes.reading(format!("devices = the product of the ici_* and dcn_* degrees = {n} (data-parallel {dp}, tensor {tp}, context {cp}, pipeline {pp})"));
    }
    batch(l, k, model_parallel, pp, devices, &mut notes)?;
    l.notes.append(&mut notes);
    Ok(())
}

/// The micro-batch, accumulation and global batch. `per_dp`: devices per data-parallel rank.
fn batch(
    l: &mut Launch,
    k: &Keys,
    per_dp: u64,
    pp: u64,
    devices: Option<u64>,
    notes: &mut Vec<Note>,
) -> Result<(), Error> {
    let (pdbs, po) = match k.get("per_device_batch_size") {
        Some(r) => (number(&r.value, &r.origin)?, r.origin.clone()),
        None => {
            notes.reading("per_device_batch_size not given: base.yml's 12".into());
            (12.0, SettingOrigin::new("per_device_batch_size", 0))
        }
    };
    if !(pdbs > 0.0 && pdbs < 1e9) {
        return Err(po.error(pdbs, "must be a positive number of sequences"));
    }
    let ga = match k.get("gradient_accumulation_steps") {
        Some(r) => Some((positive(&r.value, &r.origin)?, r.origin.clone())),
        None => None,
    };
    let nmb = match (k.get("num_pipeline_microbatches"), pp > 1) {
        (Some(r), true) if r.value.trim() != "-1" => positive(&r.value, &r.origin)?,
        (_, true) => {
            notes.reading(format!("num_pipeline_microbatches not given (-1): the pipeline's {pp} stages"));
            pp
        }
        (Some(r), false) => {
            l.unused(r.origin.key.clone(), r.value.clone(), "no effect without pipeline parallelism");
            1
        }
        (None, false) => 1,
    };
    let per_rank = pdbs * per_dp as f64 / nmb as f64;
    let mbs = per_rank.round();
    if (per_rank - mbs).abs() > 1e-9 || mbs < 1.0 {
        return Err(po.error(
            pdbs,
            format!(
                "× {per_dp} devices per data-parallel rank{} = {per_rank} sequences per micro-batch: fmperf needs a whole number",
                if nmb > 1 { format!(" / {nmb} pipeline micro-batches") } else { String::new() }
            ),
        ));
    }
    if mbs > MAX_DEVICES as f64 {
        return Err(po.error(pdbs, "is more sequences than fmperf models"));
    }
    let mbs = mbs as u64;
    let s = &mut l.settings;
    s.mbs.put(mbs, &po);
    if per_dp > 1 || nmb > 1 {
        notes.reading(format!(
            "micro-batch per data-parallel rank = per_device_batch_size × {per_dp} devices{} = {mbs}",
            if nmb > 1 { format!(" / {nmb} micro-batches") } else { String::new() }
        ));
    }
    let ga_n = ga.as_ref().map_or(1, |(n, _)| *n);
    if ga.is_some() || nmb > 1 {
        let o = ga.as_ref().map_or(SettingOrigin::new("num_pipeline_microbatches", 0), |(_, o)| o.clone());
        s.grad_accumulation.put(ga_n * nmb, &o);
    }
    if let Some(n) = devices {
        let global = [nmb, ga_n, n / per_dp]
            .iter()
            .try_fold(mbs, |acc, x| acc.checked_mul(*x).filter(|g| *g <= MAX_DEVICES))
            .ok_or_else(|| po.error(pdbs, "the global batch is more sequences than fmperf models"))?;
        s.global_batch.put(global, &po);
        notes.reading(format!(
            "global batch = per_device_batch_size × {n} devices × gradient_accumulation_steps {ga_n} = {global}"
        ));
    }
    Ok(())
}
