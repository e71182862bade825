//! The launcher's words of a Megatron or Trainer launch (`torchrun`, `python -m
//! torch.distributed.run`, `deepspeed`, `accelerate launch`, `srun`, `mpirun`, `#SBATCH`): the
//! device count, and the errors for values a script leaves to the job (`$3`, `$TP`, `$(…)`).

use super::note_replaced;
use crate::settings::{SettingOrigin, positive};
use crate::shell::Word;
use crate::{Launch, why};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::Sharding;
use fmperf_core::vocab::NoteList;

/// Puts a value into a slot, noting when it replaces a different earlier one.
macro_rules! put {
    ($l:expr, $slot:ident, $v:expr, $o:expr) => {{
        let r = $l.settings.$slot.put($v, $o);
        note_replaced($l, r, $o);
    }};
}

/// A flag's value that still holds a positional parameter the user did not give (`$3`) is an
/// error naming it; any other unknown value is read (and refused) by the flag's own rule.
pub(super) fn unknown_value(v: &str, o: &SettingOrigin) -> Result<(), Error> {
    let b = v.as_bytes();
    for (k, c) in b.iter().enumerate() {
        if *c != b'$' {
            continue;
        }
        let rest = &v[k + 1..];
        let digits: String = rest.trim_start_matches('{').chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() && digits != "0" {
            return Err(o.error(
                v,
                format!(
                    "needs positional argument ${digits} (give it after --: fmperf estimate --from FILE -- ARG1 ARG2 …)"
                ),
            ));
        }
    }
    Ok(())
}

/// An error about a value that is still a variable (`$TP`, `${TP}`) or a command substitution
/// says what is missing.
pub(super) fn explain_unknown(e: Error, value: Option<&str>, o: &SettingOrigin) -> Error {
    let Some(v) = value.filter(|v| v.contains('$') || v.contains('`')) else { return e };
    if v.contains("$(") || v.contains('`') {
        return o.error(v, "is computed by a command when the job runs (a command substitution); fmperf runs nothing: write the value in the file");
    }
    let name: String = v
        .split('$')
        .nth(1)
        .unwrap_or("")
        .trim_start_matches('{')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    o.error(v, format!("the variable {name} is not set in the script (the job's environment sets it); set it in the file or give the value"))
}

/// The launcher's device count: `torchrun`/`torch.distributed.run` `--nproc_per_node` and
/// `--nnodes`, `srun`/`#SBATCH` `--nodes`/`-N`, `--gpus-per-node`, `--ntasks-per-node`,
/// `--gres=gpu:N`, `deepspeed` `--num_gpus`/`--num_nodes`/`--include host:0,1,…`, `accelerate
/// launch` `--num_processes` (all devices), `--num_machines`, `--mixed_precision`, `--zero_stage`
/// and `--fsdp_sharding_strategy`, `mpirun -np` (all devices). A
/// count computed when the job runs (`$(nvidia-smi …)`, an unset variable) is listed as unused
/// with a note: the device count is then given with `--gpus`. Every other launcher word is listed
/// as unused (job setup).
pub(super) fn launcher(l: &mut Launch, words: &[Word], sbatch: &[Word]) -> Result<(), Error> {
    let all: Vec<&Word> = sbatch.iter().chain(words.iter()).collect();
    let mut tasks: Option<(String, SettingOrigin)> = None;
    let mut i = 0;
    while i < all.len() {
        let w = all[i];
        i += 1;
        let t = w.text.as_str();
        if !t.starts_with('-') {
            // The launcher program itself (`torchrun`, `python`, `-m`'s module, `srun`).
            continue;
        }
        let (name, value) = match t.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => match all.get(i) {
                Some(next) if !next.text.starts_with('-') && !next.text.ends_with(".py") && !is_program(&next.text) => {
                    i += 1;
                    (t.to_string(), Some(next.text.clone()))
                }
                _ => (t.to_string(), None),
            },
        };
        let o = SettingOrigin::new(name.clone(), w.line);
        let v = value.clone().unwrap_or_default();
        let key = name.trim_start_matches('-').replace('_', "-");
        let counts = matches!(
            key.as_str(),
            "ntasks-per-node"
                | "nproc-per-node"
                | "gpus-per-node"
                | "num-gpus"
                | "nnodes"
                | "nodes"
                | "N"
                | "num-nodes"
                | "num-machines"
                | "num-processes"
                | "np"
                | "n"
                | "gres"
                | "include"
        );
        // A count computed when the job runs (`$(nvidia-smi …)`, an unset variable), an elastic
        // range (`1:4`) or a placeholder (`your_num_nodes`) is no count fmperf can read: listed,
        // and the device count is asked for (`--gpus`).
        let count_text = if matches!(key.as_str(), "gpus-per-node" | "gres") {
            v.rsplit(':').next().unwrap_or("")
        } else {
            v.as_str()
        };
        let numeric = !count_text.is_empty() && count_text.replace('_', "").chars().all(|c| c.is_ascii_digit());
        if counts && !numeric && !matches!(key.as_str(), "include") && !(key == "gres" && !v.starts_with("gpu")) {
            let what = if v.contains('$') || v.contains('`') {
                "not known before the job runs (a variable of its environment or a command's output)"
            } else {
                "not a count fmperf can read (an elastic range or a placeholder)"
            };
            l.unused(name.clone(), v.clone(), what);
            l.notes.reading(format!("{name} (line {}) = {v} is {what}: give the device count with --gpus", w.line));
            continue;
        }
        match key.as_str() {
            // Slurm's tasks per node count devices only when no GPU count is given (a job may run
            // one task per node that starts a process per GPU, as torchrun does): read at the end.
            "ntasks-per-node" => tasks = Some((v, o)),
            "nproc-per-node" | "gpus-per-node" | "num-gpus" => {
                let count = v.rsplit(':').next().unwrap_or(&v);
                let n = positive(count, &o)
                    .map_err(|_| o.error(&v, "must be a positive integer (the launcher's devices per node)"))?;
                put!(l, devices_per_node, n, &o);
            }
            "nnodes" | "nodes" | "N" | "num-nodes" | "num-machines" => {
                let n = positive(&v, &o).map_err(|_| {
                    o.error(&v, "must be a positive integer (a node range of an elastic launch cannot be evaluated)")
                })?;
                put!(l, nodes, n, &o);
            }
            "num-processes" | "np" => {
                let n = positive(&v, &o)
                    .map_err(|_| o.error(&v, "must be a positive integer (processes: one per device)"))?;
                put!(l, devices, n, &o);
            }
            "include" if v.contains(':') => {
                // `deepspeed --include localhost:0,1,2,3`: the devices listed on one host.
                let hosts: Vec<&str> = v.split('@').collect();
                let per: Vec<usize> =
                    hosts.iter().map(|h| h.rsplit(':').next().unwrap_or("").split(',').count()).collect();
                if hosts.len() == 1
                    && let Some(n) = per.first()
                {
                    put!(l, devices_per_node, *n as u64, &o);
                } else {
                    let total: usize = per.iter().sum();
                    put!(l, devices, total as u64, &o);
                }
            }
            // `accelerate launch` options of the run itself.
            "mixed-precision" => {
                let p = match v.to_ascii_lowercase().as_str() {
                    "bf16" => Precision::Bf16,
                    "fp16" => Precision::Fp16,
                    "fp8" => Precision::Fp8,
                    "no" | "fp32" => Precision::Fp32,
                    _ => return Err(o.error(&v, "must be no, fp16, bf16 or fp8 (accelerate's mixed precision)")),
                };
                put!(l, precision, p, &o);
            }
            "zero-stage" => match v.trim().parse::<u64>().ok().and_then(Sharding::of_zero_stage) {
                Some(sh) => put!(l, sharding, sh, &o),
                None => return Err(o.error(&v, "must be 0, 1, 2 or 3 (DeepSpeed's ZeRO stage)")),
            },
            "fsdp-sharding-strategy" => {
                let sh = match v.to_ascii_uppercase().as_str() {
                    "FULL_SHARD" | "1" | "HYBRID_SHARD" | "4" => Sharding::Zero3,
                    "SHARD_GRAD_OP" | "2" | "HYBRID_SHARD_ZERO2" | "5" => Sharding::Zero2,
                    "NO_SHARD" | "3" => Sharding::Ddp,
                    _ => return Err(o.error(&v, "must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD")),
                };
                put!(l, sharding, sh, &o);
            }
            "gres" if v.starts_with("gpu") => {
                let count = v.rsplit(':').next().unwrap_or("");
                let n = positive(count, &o).map_err(|_| o.error(&v, "must end with the GPUs per node (gpu:8)"))?;
                put!(l, devices_per_node, n, &o);
            }
            _ => l.unused(name, v, why::JOB),
        }
    }
    if let Some((v, o)) = tasks {
        if l.settings.devices_per_node.get().is_some() {
            l.unused(o.key.clone(), v, "does not count devices here: the GPUs per node are given");
        } else {
            let n = positive(&v, &o)
                .map_err(|_| o.error(&v, "must be a positive integer (the launcher's devices per node)"))?;
            put!(l, devices_per_node, n, &o);
        }
    }
    Ok(())
}

/// A program a launcher runs (`srun … torchrun`, `mpirun … python`): not a flag's value.
fn is_program(w: &str) -> bool {
    let p = w.rsplit('/').next().unwrap_or("");
    matches!(p, "python" | "python3" | "torchrun" | "deepspeed" | "accelerate" | "bash" | "sh" | "numactl")
        || p.starts_with("python3.")
}
