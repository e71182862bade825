//! `fmperf search`: the fastest parallel configurations of a model on a system that fit in memory
//! (the reference's search, spec §7), in reference mode or in extended mode (`--mode`, `--ext`).

use std::io::Write;

use fmperf_core::extended::ExtendedOptions;
use fmperf_core::mode::ModelMode;
use fmperf_core::search::{ExtendedSetup, Ranked, Search, SearchSpec};
use fmperf_core::{Strategy, SystemParams};
use serde_json::{Map, Value, json};

use super::{CmdError, CmdResult};
use crate::args::Format;
use crate::inputs::{load_hardware, load_model, load_system, load_workload};
use crate::table::Table;

/// Help text of `fmperf search`.
pub const HELP: &str = "\
fmperf search — the fastest parallel configurations that fit in memory (reference or extended mode)

USAGE: fmperf search --model <NAME|FILE.json> --system <NAME|FILE.json> --strategy <1d|2d|2d-seqp>
                     --gpus N --global-batch G [--nvlink-size K] [--top K] [--format table|json|csv]
                     [--mode reference|extended] [--ext KEY=VALUE,…] [--moe KEY=VALUE,…]

  --model          gpt3, gpt3_1T, vit_era5, a catalog id (`fmperf catalog models`), a reference model
                   file {\"l\",\"e\",\"h\",\"depth\"[,\"f\"]} or a versioned model file
  --system         A100, H200, B200, B200-next, a catalog id with options
                   (`ID,domain=8,nics=1,precision=bf16`; `fmperf catalog systems`), a reference system
                   file (config-<name>.json) or a versioned system file
  --strategy       1d (Megatron TP + SP), 2d (SUMMA), 2d-seqp (TP × context parallel)
  --gpus           devices to use
  --global-batch   samples per iteration
  --nvlink-size    devices per NVLink domain (default: the system's nvlink_size)
  --top            how many configurations to list (default 10)
  --format         table (default), json or csv

Every candidate is evaluated; those needing more HBM than the device has are dropped. Exit 0 with an
empty list when nothing fits, 2 on bad input. In extended mode the system spec's precision= (else the
switch `precision`) sets the precision; --format json says {\"mode\", \"switches\"} next to the results.

";

/// Runs `fmperf search`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let value_flags =
        ["model", "system", "strategy", "gpus", "global-batch", "nvlink-size", "top", "format", "mode", "ext", "moe"];
    let help = format!("{HELP}{}{}", crate::mode::help(), crate::mode::moe_help());
    let Some(args) = super::parse_flags(raw, &value_flags, &help, out)? else {
        return Ok(());
    };
    let format = Format::from_args(&args, &[Format::Table, Format::Json, Format::Csv])?;
    let mode = crate::mode::from_args(&args)?.unwrap_or_default();
    let strategy: Strategy = args
        .required("strategy")?
        .parse()
        .map_err(|e: fmperf_core::Error| CmdError::Usage(format!("--strategy: {e}")))?;
    let gpus = args.positive_int("gpus")?.ok_or_else(|| CmdError::Usage("--gpus is required".into()))?;
    let global_batch =
        args.positive_int("global-batch")?.ok_or_else(|| CmdError::Usage("--global-batch is required".into()))?;
    let top = args.positive_int("top")?.unwrap_or(10);
    let top_k = usize::try_from(top).map_err(|_| CmdError::Usage(format!("--top {top}: too large")))?;
    let (model_arg, system_arg) = (args.required("model")?, args.required("system")?);
    let domain = args.positive_int("nvlink-size")?;
    let (model_name, system_name, spec, mode, capacity, result) = match mode {
        ModelMode::Reference => {
            let (model_name, model) = load_model(model_arg)?;
            let (system_name, mut system) = load_system(system_arg)?;
            if let Some(k) = domain {
                system.nvlink_size = k;
            }
            let capacity = system.hbm_capacity;
            let spec = SearchSpec { model, system, strategy, n_gpus: gpus, global_batch, top_k };
            let result = Search::new(spec.clone()).map_err(flag_error)?.finish();
            (model_name, system_name, spec, ModelMode::Reference, capacity, result)
        }
        ModelMode::Extended(o) => {
            if strategy == Strategy::Summa2D {
                return Err(CmdError::Usage(format!("--strategy 2d: {}", fmperf_core::sweep::SUMMA_UNSUPPORTED)));
            }
            let workload = load_workload(model_arg)?;
            let (hardware, precision) = load_hardware(system_arg, o.precision, o.measured_ceiling, domain)?;
            let options = ExtendedOptions { precision, ..o };
            // Extended mode reads only the domain size of the spec's system (it generates the
            // candidates); the part itself is `hardware`.
            let system = SystemParams::h200().with_nvlink_size(hardware.domain_size());
            let capacity = hardware.hbm_capacity_gb;
            let spec = SearchSpec { model: workload.to_shape(), system, strategy, n_gpus: gpus, global_batch, top_k };
            let setup = ExtendedSetup { workload, hardware, options };
            let result = Search::new_extended(spec.clone(), setup).map_err(flag_error)?.finish();
            (model_arg.to_string(), system_arg.to_string(), spec, ModelMode::Extended(options), capacity, result)
        }
    };

    match format {
        Format::Json => {
            let results: Vec<Value> = result.top.iter().map(|r| result_json(r, global_batch)).collect();
            let m = mode.to_json();
            let mut doc = json!({ "mode": m["mode"], "switches": m.get("switches"), "candidates": result.candidates, "results": results });
            // MoE searches also say which Mixture-of-Experts switches priced them.
            if result.top.iter().any(|r| r.experts.is_some()) {
                doc["moe"] = m.get("moe").cloned().unwrap_or(Value::Null);
            }
            writeln!(out, "{}", doc)?;
        }
        Format::Table | Format::Csv => {
            let table = result_table(&result.top, strategy, global_batch);
            if format == Format::Csv {
                write!(out, "{}", table.to_csv())?;
            } else {
                writeln!(
                    out,
                    "{model_name} on {system_name} (NVLink domain {} GPUs), strategy {strategy}, {gpus} GPUs, global batch {global_batch}, {}: {} candidates, {} fit in {} GB",
                    spec.system.nvlink_size,
                    mode.label(),
                    result.candidates,
                    result.feasible,
                    capacity
                )?;
                if result.top.is_empty() {
                    writeln!(out, "no configuration fits in memory")?;
                } else {
                    write!(out, "{}", table.render())?;
                }
            }
        }
    }
    Ok(())
}

/// Named values of one ranked configuration, shared by the JSON and the table/CSV output.
struct Parts {
    config: Vec<(&'static str, u64)>,
    placement: Vec<(&'static str, u64)>,
    time_s: [(&'static str, f64); 6],
    memory_gb: [(&'static str, f64); 4],
}

fn parts(r: &Ranked, global_batch: u64) -> Parts {
    let c = &r.candidate;
    let mut config = vec![("dp", c.dp), ("tp", c.tp())];
    if c.strategy != Strategy::OneD {
        config.extend([("tp1", c.tp1), ("tp2", c.tp2)]);
    }
    config.extend([("pp", c.pp), ("mbs", c.mbs), ("microbatches", c.microbatches(global_batch))]);
    if let Some(x) = r.experts {
        // MoE models: expert parallelism folded over tp·cp·dp (expert data parallel = edp).
        config.extend([("ep", x.ep), ("etp", x.etp), ("edp", x.edp)]);
    }
    if c.strategy == Strategy::Summa2D {
        config.push(("nb", c.nb));
    }
    let mut placement = if c.strategy == Strategy::OneD {
        vec![("nv_tp", c.nv_tp1)]
    } else {
        vec![("nv_tp1", c.nv_tp1), ("nv_tp2", c.nv_tp2)]
    };
    placement.extend([("nv_dp", c.nv_dp), ("nv_pp", c.nv_pp)]);
    let t = &r.totals;
    Parts {
        config,
        placement,
        time_s: [
            ("comp", t.t_comp),
            ("mem", t.t_mem),
            ("tp_comm", t.t_tp_comm),
            ("dp_comm", t.t_dp_comm),
            ("pp_comm", t.t_pp_comm),
            ("bubble", t.t_bubble),
        ],
        memory_gb: [
            ("weights", t.wts_mem),
            ("grads", t.wts_grad_mem),
            ("optimizer", t.wts_optimizer_states_mem),
            ("activations", t.acts_mem),
        ],
    }
}

fn result_json(r: &Ranked, global_batch: u64) -> Value {
    let p = parts(r, global_batch);
    let ints =
        |v: &[(&str, u64)]| Value::Object(v.iter().map(|(k, x)| (k.to_string(), json!(x))).collect::<Map<_, _>>());
    let floats =
        |v: &[(&str, f64)]| Value::Object(v.iter().map(|(k, x)| (k.to_string(), json!(x))).collect::<Map<_, _>>());
    json!({
        "throughput_samples_per_s": r.throughput_samples_per_s,
        "time_per_iteration_s": r.time_per_iteration_s,
        "mem_gb": r.mem_gb,
        "config": ints(&p.config),
        "placement": ints(&p.placement),
        "time_s": floats(&p.time_s),
        "memory_gb": floats(&p.memory_gb),
    })
}

fn result_table(top: &[Ranked], strategy: Strategy, global_batch: u64) -> Table {
    // Column titles from the parts of a representative entry (the layout depends only on the strategy).
    let sample = Ranked {
        candidate: fmperf_core::reference::Candidate {
            strategy,
            ..fmperf_core::reference::Candidate::one_d(1, 1, 1, 1, 1, 1, 1)
        },
        throughput_samples_per_s: 0.0,
        time_per_iteration_s: 0.0,
        mem_gb: 0.0,
        totals: Default::default(),
        // MoE searches add the expert columns (every entry of one search has them or none does).
        experts: top.first().and_then(|r| r.experts),
        execution: None,
    };
    let layout = parts(&sample, global_batch);
    let mut header: Vec<String> =
        vec!["rank".into(), "throughput [samples/s]".into(), "iteration [s]".into(), "mem [GB]".into()];
    header.extend(layout.config.iter().chain(&layout.placement).map(|(k, _)| k.to_string()));
    header.extend(layout.time_s.iter().map(|(k, _)| format!("{} [s]", time_label(k))));
    header.extend(layout.memory_gb.iter().map(|(k, _)| format!("{k} [GB]")));
    let mut t = Table { header, rows: Vec::new() };
    for (i, r) in top.iter().enumerate() {
        let p = parts(r, global_batch);
        let mut row = vec![
            (i + 1).to_string(),
            format!("{:.4}", r.throughput_samples_per_s),
            format!("{:.4}", r.time_per_iteration_s),
            format!("{:.2}", r.mem_gb),
        ];
        row.extend(p.config.iter().chain(&p.placement).map(|(_, v)| v.to_string()));
        row.extend(p.time_s.iter().map(|(_, v)| format!("{v:.4}")));
        row.extend(p.memory_gb.iter().map(|(_, v)| format!("{v:.2}")));
        t.push(row);
    }
    t
}

/// Table title of a time component (the JSON keeps the short key).
fn time_label(key: &str) -> &str {
    match key {
        "comp" => "compute",
        "mem" => "exposed memory",
        "tp_comm" => "TP comm",
        "dp_comm" => "DP comm",
        "pp_comm" => "PP comm",
        other => other,
    }
}

/// Names the command-line flag of a rejected search parameter.
fn flag_error(e: fmperf_core::Error) -> CmdError {
    let flag = match e.field() {
        Some("n_gpus") => "--gpus",
        Some("global_batch") => "--global-batch",
        Some("top_k") => "--top",
        Some("system.nvlink_size") => "--nvlink-size / system.nvlink_size",
        _ => return CmdError::from(e),
    };
    CmdError::Usage(format!("{flag}: {e}"))
}
