//! The layout a read file implies: the device count and where it came from, the micro-batch and
//! global batch [samples] (torchtitan's `local_batch_size`, Megatron's accumulation; a global
//! batch of `mbs·dp` where the file is silent, noted) and the virtual pipeline stages per device.

use super::{Overrides, key, required};
use crate::Format;
use crate::settings::{SettingOrigin, Settings};
use fmperf_core::Error;
use fmperf_core::vocab::{Note, NoteList};

/// The device count and where it came from.
pub(super) fn devices(
    s: &Settings,
    o: &Overrides,
    f: Format,
    model_parallel: u64,
) -> Result<(u64, SettingOrigin), Error> {
    if let Some(n) = o.gpus {
        return Ok((n, SettingOrigin::new("--gpus", 0)));
    }
    if let (Some(n), Some(origin)) = (s.devices.copied(), &s.devices.origin) {
        return Ok((n, origin.clone()));
    }
    if let Some(per_node) = s.devices_per_node.copied() {
        let nodes = s.nodes.copied().unwrap_or(1);
        let origin = s.devices_per_node.origin.clone().unwrap_or(SettingOrigin::new("devices", 0));
        return Ok((per_node * nodes, origin.with_key(format!("{} × nodes", origin.key))));
    }
    if f == Format::Torchtitan
        && let Some(shard) = s.dp.copied()
    {
        let replicate = s.dp_replicate.copied().unwrap_or(1);
        return Ok((model_parallel * shard * replicate, SettingOrigin::new("parallelism", 0)));
    }
    Err(Error::invalid("--gpus", "missing", "the file does not say how many devices run it")
        .with_hint("give --gpus N, or a `# fmperf: gpus=N` line in the file"))
}

/// Micro-batch and global batch.
pub(super) fn batch(
    s: &Settings,
    o: &Overrides,
    f: Format,
    dp: u64,
    pp: u64,
    notes: &mut Vec<Note>,
) -> Result<(u64, u64), Error> {
    let (mbs, default_global) = if f == Format::Torchtitan {
        let local = s.local_batch.copied().unwrap_or_else(|| {
            notes.assumption("training.local_batch_size not given: torchtitan's default 8".into());
            8
        });
        let mbs = if pp > 1 { s.mbs.copied().unwrap_or(1) } else { local };
        if !local.is_multiple_of(mbs) {
            return Err(s.mbs.error(
                "parallelism.pipeline_parallel_microbatch_size",
                mbs,
                format!("must divide training.local_batch_size = {local}"),
            ));
        }
        (mbs, local * dp)
    } else {
        let mbs = required(&s.mbs, key(f, "micro-batch-size", "model.micro_batch_size", "", ""))?;
        match s.grad_accumulation.copied() {
            Some(ga) => (mbs, mbs * ga * dp),
            None => (mbs, mbs * dp),
        }
    };
    if let (Some(ga), Some(g)) = (s.grad_accumulation.copied(), o.global_batch.or(s.global_batch.copied()))
        && g != mbs * ga * dp
        && f != Format::Torchtitan
    {
        let origin = s.grad_accumulation.origin.clone().unwrap_or(SettingOrigin::new("gradient accumulation", 0));
        return Err(origin.error(
            ga,
            format!("the global batch {g} is not micro-batch × accumulation × data-parallel = {mbs} × {ga} × {dp}"),
        ));
    }
    let global = match (o.global_batch, s.global_batch.copied()) {
        (Some(g), _) | (None, Some(g)) => g,
        (None, None) => {
            if s.grad_accumulation.value.is_some() {
                notes.assumption(format!(
                    "global batch: micro-batch × gradient accumulation × data-parallel = {default_global}"
                ));
            } else {
                notes.assumption(format!("global batch not given: micro-batch × data-parallel = {default_global}"));
            }
            default_global
        }
    };
    if !global.is_multiple_of(mbs * dp) {
        let origin = if o.global_batch.is_some() {
            SettingOrigin::new("--global-batch", 0)
        } else {
            s.global_batch.origin.clone().unwrap_or(SettingOrigin::new("global batch", 0))
        };
        return Err(origin.error(global, format!("must be a multiple of micro-batch × data-parallel = {mbs} × {dp}")));
    }
    Ok((mbs, global))
}

/// Virtual pipeline stages per device: `vpp`, or `layers / (pp · layers per virtual stage)`.
pub(super) fn interleave(s: &Settings, layers: u64, pp: u64, notes: &mut Vec<Note>) -> Result<u64, Error> {
    let v = match (s.vpp.copied(), s.layers_per_virtual_stage.copied()) {
        (Some(v), _) => v,
        (None, Some(per)) => {
            let stage = layers / pp;
            if !layers.is_multiple_of(pp) || !stage.is_multiple_of(per) {
                return Err(s.layers_per_virtual_stage.error(
                    "layers per virtual stage",
                    per,
                    format!("must divide the blocks per pipeline stage {layers}/{pp}"),
                ));
            }
            stage / per
        }
        (None, None) => 1,
    };
    if v > 1 && pp == 1 {
        notes.assumption("virtual pipeline stages without pipeline parallelism: no interleaving".into());
        return Ok(1);
    }
    Ok(v)
}
