//! `fmperf search`: the fastest parallel configurations of a model on a system that fit in memory
//! (the reference's search, spec §7), in extended mode (the default: it also chooses the
//! execution) or in reference mode (`--mode reference`, bit-exact), on every core.
//!
//! Flags are read into a [`SearchRequest`]; [`execute`] runs one. Other sources of a request
//! (e.g. a launch file, `search --from`) build a [`SearchRequest`] and call [`execute`].

use std::io::Write;

use fmperf_core::catalog::Precision;
use fmperf_core::cost::{ExtendedSetup, Pricer};
use fmperf_core::explore::{StrategyTop, merge};
use fmperf_core::extended::{Hardware, Workload};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::mode_inputs::{searches_execution, switch_choices};
use fmperf_core::resolve::search_inputs::{SearchAsk, SearchInputs, SearchSource, search_inputs};
use fmperf_core::search::row::Digits;
use fmperf_core::search::shard_state::merge_shards;
use fmperf_core::search::{Diagnosis, ExecutionChoices, ResultRow, Search, SearchResult, SearchSpec};
use fmperf_core::vocab::Note;
use fmperf_core::{Strategy, SystemParams};
use serde_json::{Value, json};

use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};
use crate::inputs::{load_hardware, load_model, load_system, load_workload_at};
use crate::table::Table;

/// Help text of `fmperf search`.
pub const HELP: &str = "\
fmperf search — the fastest parallel configurations that fit in memory (extended or reference mode)

USAGE: fmperf search --model <NAME|FILE.json> --system <NAME|FILE.json> [--strategy <1d|2d|2d-seqp|…|all>]
                     --gpus N --global-batch G [--domain K] [--top K] [--format table|json|csv]
                     [--mode extended|reference] [--ext KEY=VALUE,…] [--moe KEY=VALUE,…] [--threads N]
                     [--recompute none|selective|full] [--sharding zero0|zero1|zero2|zero3|fsdp]
                     [--shard-group all|N] [--interleave N] [--cp N] [--mbs N] [--seq-len S]
                     [--calibration MY-STACK.json] [--tokens N | --samples N] [--price-per-device-hour P]

  --model          gpt3, gpt3_1T, vit_era5, a catalog id (`fmperf catalog models`), a reference model
                   file {\"l\",\"e\",\"h\",\"depth\"[,\"f\"]}, a versioned model file, or a
                   framework's model file (a Hugging Face config.json, a MaxText model YAML)
  --seq-len        training sequence length [tokens], replacing the model's own (a config.json
                   states none: give it)
  --system         A100, H200, B200, B200-next, a catalog id with options
                   (`ID,domain=8,nics=1,precision=bf16`; `fmperf catalog systems`), a reference system
                   file (config-<name>.json) or a versioned system file
  --strategy       1d (Megatron TP + SP), 2d (SUMMA), 2d-seqp (TP × context parallel), a comma
                   list, or all (default: every strategy of the mode, merged best first;
                   extended mode has no 2d)
  --gpus           devices to use
  --global-batch   samples per iteration
  --domain         devices per scale-up (NVLink, ICI) domain (default: the system's);
                   old spelling --nvlink-size still accepted
  --top            how many configurations to list (default 10)
  --format         table (default), json or csv
  --threads        worker threads (default: every core); the output is the same for any count
  --sensitivity    also answer \"what would help most\" (see below)
  --calibration    a calibration of your stack on this system (`fmperf calibrate`): the search runs
                   uncalibrated and calibrated, shown side by side (JSON: {\"calibration\",
                   \"uncalibrated\", \"calibrated\"}; CSV: a first column `calibrated`)
  --tokens, --samples, --price-per-device-hour
                   the whole run's cost next to each configuration: device-hours, energy and money
                   (JSON: each row's \"cost\"; table and CSV: columns), see `fmperf estimate --help`

EXECUTION (extended mode): the search chooses recomputation, ZeRO stage / FSDP and its shard group,
the interleave degree, the context-parallel degree (2d-seqp) and the micro-batch; each flag fixes one
(`search` = let the search choose). A switch changed with --ext (e.g. recompute=full) is fixed too.
--ext cp_comm=search also lets it choose the context-parallel flavour per layout: the K/V ring,
Ulysses (where cp divides the heads per TP rank) or each hybrid split u × cp/u; each row says which
(columns cp_comm, cp_ulysses = the Ulysses degree; JSON: in \"execution\").

Every candidate is evaluated (extended mode prunes execution choices that provably cannot enter the
list); those needing more HBM than the device has, even once the allocator has given its cache
back (extended mode: allocated + CUDA context + NCCL buffers), are dropped. Where no configuration uses every
device or domain, the search places groups on partial domains or uses fewer devices and says so;
where nothing is found it says why and the nearest device counts and batches that work (JSON key
\"diagnosis\"). Exit 0 (also with an empty list), 2 on bad input. In extended mode the system spec's
precision= (else the switch `precision`) sets the precision; --format json says {\"mode\",
\"switches\"} next to the results. --mode reference reproduces the published model bit-exactly.

";

/// One search to run, however it was asked for.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// `--model`: a name or a file.
    pub model: String,
    /// `--system`: a name, a catalog spec or a file.
    pub system: String,
    /// The strategies, searched one after the other and merged best first.
    pub strategies: Vec<Strategy>,
    /// Devices.
    pub gpus: u64,
    /// Global batch [samples].
    pub global_batch: u64,
    /// Scale-up domain [devices] replacing the system's.
    pub domain: Option<u64>,
    /// Configurations listed.
    pub top_k: usize,
    /// Reference or extended mode (with its switches).
    pub mode: Mode,
    /// Execution choices the user fixed (extended mode).
    pub execution: ExecutionChoices,
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// Output format.
    pub format: OutputFormat,
    /// `--seq-len`: the training sequence length [tokens] replacing the model's own (or giving one
    /// to a model file that states none).
    pub seq_len: Option<u64>,
    /// `--moe` as given (`None`: not given): a dense model refuses it rather than ignoring it.
    pub moe_switches: Option<String>,
    /// `--calibration FILE`: the search is run without and with it, side by side.
    pub calibration: Option<fmperf_core::calibrate::Calibration>,
    /// `--sensitivity`: also re-search with each system feature at ×0.5 and ×2.
    pub sensitivity: bool,
    /// `--tokens`/`--samples` and `--price-per-device-hour`: the run's cost next to each row.
    pub cost: Option<(fmperf_core::catalog::TrainingBudget, Option<f64>)>,
}

/// The value flags of `fmperf search`.
pub const VALUE_FLAGS: [&str; 22] = [
    "model",
    "system",
    "strategy",
    "gpus",
    "global-batch",
    "domain",
    "top",
    "format",
    "mode",
    "ext",
    "moe",
    "threads",
    "recompute",
    "sharding",
    "shard-group",
    "interleave",
    "cp",
    "mbs",
    "from",
    "seq-len",
    "emit",
    "calibration",
];

/// The flags of `fmperf search` that take no value (besides `--help`).
pub const BOOL_FLAGS: [&str; 1] = ["sensitivity"];

/// The execution flags and the switch (an [`ExecutionChoices`] key) each fixes.
pub(crate) const EXECUTION_FLAGS: [(&str, &str); 6] = [
    ("recompute", "recompute"),
    ("sharding", "sharding"),
    ("shard-group", "shard_group"),
    ("interleave", "interleave"),
    ("cp", "cp"),
    ("mbs", "mbs"),
];

/// Runs `fmperf search`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let help = format!(
        "{HELP}{}{}{}{}",
        super::search_sensitivity::HELP,
        super::search_from::HELP,
        crate::mode::help(),
        crate::mode::moe_help()
    );
    let flags: Vec<&str> = VALUE_FLAGS.iter().chain(&crate::run_cost::FLAGS).copied().collect();
    let Some(args) = super::parse_flags_with(raw, &flags, &BOOL_FLAGS, &help, out)? else {
        return Ok(());
    };
    run_args(&args, out)
}

/// Runs `fmperf search` with the parsed flags `args`: with `--from FILE` the file's search (its
/// flags as [`super::from_flags::SEARCH_FROM`] says), else the flags' search.
pub fn run_args(args: &Args, out: &mut dyn Write) -> CmdResult {
    if !args.values("from").is_empty() {
        super::from_flags::check(args, "search --from", super::from_flags::SEARCH_FROM)?;
        let format = OutputFormat::from_args(args, &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Csv])?;
        return super::search_from::run(args, format, out);
    }
    execute(&request_from_args(args)?, out)
}

/// The request the flags describe; errors name the flag.
pub fn request_from_args(args: &Args) -> Result<SearchRequest, CmdError> {
    let format = OutputFormat::from_args(args, &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Csv])?;
    if args.value("emit")?.is_some() {
        return Err(CmdError::Usage(
            "--emit writes the best layout back as a launch file: it needs --from FILE (the launch to start from)"
                .into(),
        ));
    }
    // Extended mode is the default (issue 16 §5); `--mode reference` is the published model.
    let mode = crate::mode::from_args(args)?.unwrap_or_else(Mode::extended);
    // Every strategy of the mode unless told (extended mode has no 2d).
    let every = mode.strategies();
    let strategies = match args.value("strategy")? {
        Some(text) if text.trim().eq_ignore_ascii_case("all") => every,
        Some(text) => {
            fmperf_core::sweep::text::parse_strategies(text).map_err(|e| CmdError::Usage(format!("--strategy: {e}")))?
        }
        None => every,
    };
    use fmperf_core::vocab::{MAX_DEVICES, MAX_GLOBAL_BATCH};
    let gpus =
        args.positive_int_at_most("gpus", MAX_DEVICES)?.ok_or_else(|| CmdError::Usage("--gpus is required".into()))?;
    let global_batch = args
        .positive_int_at_most("global-batch", MAX_GLOBAL_BATCH)?
        .ok_or_else(|| CmdError::Usage("--global-batch is required".into()))?;
    let top = args.positive_int("top")?.unwrap_or(10);
    let top_k = usize::try_from(top).map_err(|_| CmdError::Usage(format!("--top {top}: too large")))?;
    let threads = crate::threads::from_args(args)?;
    let mut text = Vec::new();
    for (flag, key) in EXECUTION_FLAGS {
        if let Some(v) = args.value(flag)? {
            text.push(format!("{key}={v}"));
        }
    }
    let fixed = ExecutionChoices::from_text(&text.join(",")).map_err(execution_error)?;
    if !text.is_empty() && !mode.kind().takes_switches() {
        return Err(CmdError::Usage(
            "--recompute, --sharding, --shard-group, --interleave, --cp and --mbs need extended mode \
             (drop --mode reference)"
                .into(),
        ));
    }
    agree_with_switches(args, &fixed, &mode)?;
    let execution = switch_choices(&mode, args.value("ext")?.unwrap_or_default()).fixing(fixed);
    applies(args, &execution, &strategies)?;
    crate::inputs::domain_agrees(args.required("system")?, args.positive_int("domain")?)?;
    if args.flag("sensitivity") && args.value("calibration")?.is_some() {
        return Err(CmdError::Usage("--sensitivity and --calibration: give one (run the search twice)".into()));
    }
    Ok(SearchRequest {
        model: args.required("model")?.to_string(),
        system: args.required("system")?.to_string(),
        strategies,
        gpus,
        global_batch,
        domain: args.positive_int("domain")?,
        top_k,
        mode,
        execution,
        threads,
        format,
        seq_len: args.positive_int("seq-len")?,
        moe_switches: args.value("moe")?.map(str::to_string),
        calibration: super::calibrate::read_calibration(args)?,
        sensitivity: args.flag("sensitivity"),
        cost: crate::run_cost::from_args(args)?,
    })
}

/// An error of the execution flags' text, named by the flag (`--shard-group` for `shard_group`).
pub(crate) fn execution_error(e: fmperf_core::Error) -> CmdError {
    let key = e.path().and_then(|f| f.below("execution")).unwrap_or("");
    CmdError::Usage(format!("--{}: {e}", key.replace('_', "-")))
}

/// `--moe` given for a dense model (`model`: as the user named it; the model's own check,
/// `Workload::check_moe_switches`, said no): refused, not ignored.
pub(crate) fn dense_refuses_moe(moe: &str, model: &str) -> CmdError {
    CmdError::Usage(format!(
        "--moe {moe}: {model} is a dense model (no experts): Mixture-of-Experts switches apply to MoE models \
         only; drop --moe"
    ))
}

/// An execution flag and the `--ext` switch of the same name must say the same thing
/// (`--recompute full --ext recompute=none` is an error naming both; equal values are accepted).
/// Nothing to agree with without `--ext` (which reference mode refuses before: its switches need
/// extended mode).
pub(crate) fn agree_with_switches(args: &Args, fixed: &ExecutionChoices, mode: &Mode) -> Result<(), CmdError> {
    let Some(ext) = args.value("ext")? else { return Ok(()) };
    // What the switches fix: every execution switch `--ext` names, at the mode's value.
    let by_ext = switch_choices(mode, ext);
    let group = |g: Option<Option<u64>>| g.map(|g| g.map_or("all".to_string(), |g| g.to_string()));
    let pairs = [
        ("recompute", "recompute", fixed.recompute.map(|r| r.to_string()), by_ext.recompute.map(|r| r.to_string())),
        ("sharding", "sharding", fixed.sharding.map(|s| s.to_string()), by_ext.sharding.map(|s| s.to_string())),
        ("shard-group", "shard_group", group(fixed.shard_group), group(by_ext.shard_group)),
        ("interleave", "interleave", fixed.interleave.map(|i| i.to_string()), by_ext.interleave.map(|i| i.to_string())),
    ];
    for (flag, key, by_flag, by_switch) in pairs {
        let (Some(given), Some(typed)) = (args.value(flag)?, fmperf_core::extended::switch_text::text_value(ext, key))
        else {
            continue;
        };
        // `search` (the flag's "let the search choose") differs from any value the switch fixes.
        if by_flag != by_switch {
            return Err(CmdError::Usage(format!(
                "--{flag} {given} and --ext {key}={typed} set the same choice differently; give one"
            )));
        }
    }
    Ok(())
}

/// Execution choices that cannot apply to what is searched are errors saying why, not ignored:
/// a shard group without a sharded stage (zero0), a context-parallel degree without 2d-seqp.
pub(crate) fn applies(args: &Args, execution: &ExecutionChoices, strategies: &[Strategy]) -> Result<(), CmdError> {
    use fmperf_core::extended::Sharding;
    let named = |flag: &str, key: &str, value: String| -> Result<String, CmdError> {
        Ok(match args.value(flag)? {
            Some(v) => format!("--{flag} {v}"),
            None => format!("--ext {key}={value}"),
        })
    };
    if let (Some(Some(group)), Some(sharding)) = (execution.shard_group, execution.sharding)
        && sharding == Sharding::Ddp
    {
        return Err(CmdError::Usage(format!(
            "{}: a shard group needs a sharded stage (zero1 or zero2: optimizer states, zero3 / fsdp: \
             parameters too), not {}, which shards nothing; drop the shard group or shard",
            named("shard-group", "shard_group", group.to_string())?,
            named("sharding", "sharding", sharding.to_string())?,
        )));
    }
    if let Some(cp) = execution.cp
        && cp > 1
        && !strategies.contains(&Strategy::ContextParallel2D)
    {
        let names: Vec<&str> = strategies.iter().map(|s| s.as_str()).collect();
        return Err(CmdError::Usage(format!(
            "--cp {cp}: context parallelism needs strategy 2d-seqp, and --strategy {} has none; add 2d-seqp or \
             drop --cp",
            names.join(",")
        )));
    }
    Ok(())
}

/// What a finished search prints.
struct Found {
    /// The mode as priced (the system spec's precision replaces the switch's).
    mode: Mode,
    model_name: String,
    system_name: String,
    domain: u64,
    capacity_gb: f64,
    /// The strategies' results merged (counts summed, top list best first).
    result: SearchResult,
    /// How the spaces departed from the reference's enumeration, one note per kind.
    notes: Vec<Note>,
    diagnosis: Option<Diagnosis>,
    /// The search's spec (its first strategy's) and extended mode's setup.
    spec: SearchSpec,
    setup: Option<ExtendedSetup>,
    /// Tokens per sample [tokens] (for the run's cost).
    seq_len: u64,
}

/// Runs a request and writes its output (with a calibration: without and with it, side by side).
pub fn execute(req: &SearchRequest, out: &mut dyn Write) -> CmdResult {
    match &req.calibration {
        Some(cal) => super::calibrate::search_side_by_side(req, cal, out, execute_one),
        None => execute_one(req, out),
    }
}

/// Runs a request (its calibration, if any, applied) and writes its output.
fn execute_one(req: &SearchRequest, out: &mut dyn Write) -> CmdResult {
    let found = search(req)?;
    let rows: Vec<ResultRow> = found
        .result
        .top
        .iter()
        .map(|r| {
            ResultRow::of(r, req.global_batch).with_capacity(
                found.capacity_gb,
                fmperf_core::validate::memory::shipped_band(),
                fmperf_core::validate::memory::shipped_under_band(),
            )
        })
        .collect();
    let result = &found.result;
    let sensitivity = if req.sensitivity {
        Some(super::search_sensitivity::compute(req, &found.spec, found.setup.as_ref())?)
    } else {
        None
    };
    let costs: Vec<fmperf_core::run_cost::RunCost> = match req.cost {
        Some((budget, price)) => rows
            .iter()
            .map(|r| {
                let t = r.throughput_samples_per_s;
                crate::run_cost::of_run(&req.system, budget, found.seq_len, t, result.devices_used, price)
            })
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    match req.format {
        OutputFormat::Json => {
            let m = found.mode.to_json();
            let mut doc = json!({
                "mode": m["mode"],
                "switches": m.get("switches"),
                "candidates": result.candidates,
                "results": rows.iter().map(ResultRow::to_json).collect::<Vec<Value>>(),
            });
            for (row, c) in doc["results"].as_array_mut().into_iter().flatten().zip(&costs) {
                row["cost"] = c.to_json();
            }
            // Added only when they say something, so the four keys above stay the whole document
            // of an ordinary search.
            if result.devices_used != result.n_gpus {
                doc["devices_used"] = json!(result.devices_used);
            }
            if !found.notes.is_empty() {
                doc["widening"] = json!(found.notes.join("; "));
            }
            // MoE searches also say which Mixture-of-Experts switches priced them.
            if result.top.iter().any(|r| r.experts.is_some()) {
                doc["moe"] = m.get("moe").cloned().unwrap_or(Value::Null);
            }
            if let Some(d) = &found.diagnosis {
                doc["diagnosis"] = serde_json::to_value(d).unwrap_or(Value::Null);
            }
            if let Some(s) = &sensitivity {
                doc["sensitivity"] = s.to_json();
            }
            writeln!(out, "{doc}")?;
        }
        // With --sensitivity the CSV is its points (one table per file).
        OutputFormat::Csv if sensitivity.is_some() => sensitivity.as_ref().map_or(Ok(()), |s| s.write_csv(out))?,
        OutputFormat::Csv => {
            let mut t = flat_table(&rows, Digits::Exact);
            crate::run_cost::add_columns(&mut t, &costs, true);
            write!(out, "{}", t.to_csv())?;
        }
        OutputFormat::Table => {
            writeln!(
                out,
                "{} on {} (scale-up domain {} devices), strategy {}, {} devices, global batch {}, {}: {} candidates, {} fit in {} GB",
                found.model_name,
                found.system_name,
                found.domain,
                req.strategies.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                req.gpus,
                req.global_batch,
                found.mode.label(),
                result.candidates,
                result.feasible,
                found.capacity_gb
            )?;
            if searches_execution(&req.mode, &req.execution) {
                writeln!(out, "execution chosen by the search ({} configurations priced)", result.evaluations)?;
            }
            for n in &found.notes {
                writeln!(out, "note: {n}")?;
            }
            if let Some(d) = &found.diagnosis {
                writeln!(out, "{}", if rows.is_empty() { d.text() } else { format!("why: {}", d.text()) })?;
            }
            if rows.is_empty() {
                writeln!(out, "no configuration fits in memory")?;
            } else {
                let mut t = flat_table(&rows, Digits::Rounded);
                crate::run_cost::add_columns(&mut t, &costs, false);
                write!(out, "{}", t.render())?;
                if let Some(c) = costs.first() {
                    writeln!(out, "cost of the whole run: {}", crate::run_cost::basis(c))?;
                }
            }
            if let Some(s) = &sensitivity {
                s.write_table(out)?;
            }
        }
    }
    Ok(())
}

/// The flat form of `rows` (table and CSV): the result row's columns, with the memory verdict's
/// ([`ResultRow::VERDICT`]: `fits`, `mem band [GB]`) after the iteration time when the rows have one
/// (extended mode), then the context-parallel flavour's ([`ResultRow::CP_FLAVOUR`]) when the
/// search chose one (`cp_comm=search`).
pub(crate) fn flat_table(rows: &[ResultRow], digits: Digits) -> Table {
    let verdict = rows.iter().any(|r| r.fits.is_some());
    let flavour = rows.iter().any(ResultRow::has_cp_flavour);
    let mut extra: Vec<&str> = Vec::new();
    if verdict {
        extra.extend(ResultRow::VERDICT);
    }
    if flavour {
        extra.extend(ResultRow::CP_FLAVOUR);
    }
    let mut t = Table { header: ResultRow::header(&extra), rows: Vec::new() };
    for (i, r) in rows.iter().enumerate() {
        let mut cells = if verdict { r.verdict_cells(digits) } else { Vec::new() };
        if flavour {
            cells.extend(r.cp_flavour_cells());
        }
        t.push(r.cells(i + 1, cells, digits));
    }
    t
}

/// Loads the inputs and runs each strategy's search on `req.threads` threads.
fn search(req: &SearchRequest) -> Result<Found, CmdError> {
    if let Some((s, why)) = req.strategies.iter().find_map(|s| req.mode.refuses(*s).map(|why| (s, why))) {
        return Err(CmdError::Usage(format!("--strategy {}: {why}", s.as_str())));
    }
    let ask = SearchAsk {
        model: &req.model,
        system: &req.system,
        strategies: &req.strategies,
        n_gpus: req.gpus,
        global_batch: req.global_batch,
        top_k: req.top_k,
        seq_len: req.seq_len,
        domain: req.domain,
    };
    let SearchInputs { model_name, system_name, spec: base, setup } = search_inputs(&req.mode, &ask, req)?;
    let domain = base.system.domain_size;
    let mut outcomes = Vec::new();
    let mut results = Vec::new();
    let mut notes: Vec<Note> = Vec::new();
    let mut diagnoses = Vec::new();
    for &strategy in &req.strategies {
        let spec = SearchSpec { strategy, ..base.clone() };
        let (result, diagnosis) = search_one(req, &spec, setup.as_ref())?;
        if let Some(n) = result.widening.note(domain)
            && !notes.iter().any(|m| m.text == n.text)
        {
            notes.push(n);
        }
        diagnoses.extend(diagnosis);
        outcomes.push(StrategyTop::from_result(strategy, result.clone()));
        results.push(result);
    }
    let all_empty = results.iter().all(|r| r.top.is_empty());
    let all_fewer = results.iter().all(|r| r.devices_used != r.n_gpus);
    let diagnosis =
        if all_empty || all_fewer { Diagnosis::combine(&diagnoses, req.gpus, req.global_batch) } else { None };
    let min_mem = results.iter().filter_map(|r| r.min_mem_gb).fold(f64::INFINITY, f64::min);
    let result = SearchResult {
        n_gpus: req.gpus,
        devices_used: results.iter().map(|r| r.devices_used).max().unwrap_or(req.gpus),
        widening: results.first().map(|r| r.widening).unwrap_or_default(),
        candidates: results.iter().map(|r| r.candidates).sum(),
        feasible: results.iter().map(|r| r.feasible).sum(),
        evaluations: results.iter().map(|r| r.evaluations).sum(),
        min_mem_gb: min_mem.is_finite().then_some(min_mem),
        top: merge(&outcomes, req.top_k),
    };
    let pricer = Pricer { shape: &base.model, system: &base.system, extended: setup.as_ref() };
    let (mode, capacity_gb) = (pricer.mode(), pricer.capacity_gb());
    let seq_len = base.model.l;
    Ok(Found {
        mode,
        model_name,
        system_name,
        domain,
        capacity_gb,
        result,
        notes,
        diagnosis,
        spec: base,
        setup,
        seq_len,
    })
}

/// One strategy's search on `req.threads` threads (shards merged into the single run's result),
/// with its diagnosis when it found nothing or had to use fewer devices.
fn search_one(
    req: &SearchRequest,
    spec: &SearchSpec,
    setup: Option<&ExtendedSetup>,
) -> Result<(SearchResult, Option<Diagnosis>), CmdError> {
    let make = || Search::in_mode(spec.clone(), setup.cloned(), req.execution).map_err(flag_error);
    let result = on_threads(&make, req.threads)?;
    // The diagnosis needs the whole search's state: re-run single-threaded only when it applies.
    let diagnosis = if result.top.is_empty() || result.devices_used != result.n_gpus {
        let mut whole = make()?;
        if result.top.is_empty() {
            whole = run_to_end(whole);
        }
        whole.diagnose()
    } else {
        None
    };
    Ok((result, diagnosis))
}

/// The search `make` builds, run to its end on `threads` threads (shards merged into the single
/// run's result: the same for any count).
pub(crate) fn on_threads(
    make: &dyn Fn() -> Result<Search, CmdError>,
    threads: usize,
) -> Result<SearchResult, CmdError> {
    let first = make()?;
    let threads = threads.clamp(1, crate::threads::MAX_THREADS) as u64;
    let shards: Vec<Search> = if threads == 1 || first.space().len() < 2 * threads {
        vec![run_to_end(first)]
    } else {
        let mut parts: Vec<Search> = Vec::new();
        for i in 0..threads {
            parts.push(make()?.shard(i, threads)?);
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts.into_iter().map(|s| scope.spawn(move || run_to_end(s))).collect();
            handles.into_iter().map(|h| h.join().expect("a search thread panicked")).collect()
        })
    };
    Ok(merge_shards(&shards).expect("at least one shard"))
}

/// The request's inputs, read from its names and files (`--calibration` applied to the part).
impl SearchSource for SearchRequest {
    type Error = CmdError;
    fn shape(&self) -> Result<(String, fmperf_core::ModelShape), CmdError> {
        load_model(&self.model)
    }
    fn system(&self) -> Result<(String, SystemParams), CmdError> {
        load_system(&self.system)
    }
    fn workload(&self, seq_len: Option<u64>) -> Result<Workload, CmdError> {
        let workload = load_workload_at(&self.model, seq_len)?;
        if let Some(text) = &self.moe_switches {
            workload.check_moe_switches(text).map_err(|_| dense_refuses_moe(text, &self.model))?;
        }
        Ok(workload)
    }
    fn hardware(
        &self,
        precision: Precision,
        ceiling: bool,
        domain: Option<u64>,
    ) -> Result<(Hardware, Precision), CmdError> {
        let (hardware, precision) = load_hardware(&self.system, precision, ceiling, domain)?;
        Ok((self.calibration.as_ref().map_or(hardware.clone(), |c| c.constants.apply(&hardware)), precision))
    }
}

fn run_to_end(mut s: Search) -> Search {
    while !s.step(usize::MAX) {}
    s
}

/// Names the command-line flag of a rejected search parameter.
fn flag_error(e: fmperf_core::Error) -> CmdError {
    /// The search's fields and the flags that give them.
    const FLAGS: [(&str, &str); 4] = [
        ("n_gpus", "--gpus"),
        ("global_batch", "--global-batch"),
        ("top_k", "--top"),
        ("system.nvlink_size", "--domain / the system's domain size"),
    ];
    match FLAGS.iter().find(|(field, _)| e.is_at(*field)) {
        Some((_, flag)) => CmdError::Usage(format!("{flag}: {e}")),
        None => moe_flag_error(e).unwrap_or_else(CmdError::from),
    }
}

/// A search's error about a `moe.*` field (a degree `--moe` fixes that the model's experts cannot
/// take, `moe.ep = 8: must divide the routed experts 4`) as `--moe`'s; else the error back.
pub(super) fn moe_flag_error(e: fmperf_core::Error) -> Result<CmdError, fmperf_core::Error> {
    match e.path() {
        Some(p) if p.is_in("moe") => Ok(CmdError::Usage(format!("--moe: {e}"))),
        _ => Err(e),
    }
}
