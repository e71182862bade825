//! `fmperf search --from FILE`: the search with the model, global batch, device count, system and
//! extended-mode switches of a launch file (or a Hugging Face `config.json` with `--gpus`,
//! `--global-batch`, `--seq-len`), and where the file's own layout ranks among the configurations
//! that fit.

use std::cell::OnceCell;
use std::io::Write;

use fmperf_core::calibrate::Calibration;
use fmperf_core::catalog::Precision;
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::moe::MoeOptions;
use fmperf_core::extended::{ExtendedOptions, Hardware, Workload};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::search_inputs::{SearchAsk, SearchInputs, SearchSource, search_inputs};
use fmperf_core::search::row::Digits;
use fmperf_core::search::{ExecutionChoices, ResultRow};
use fmperf_core::{ModelShape, Strategy, SystemParams};
use fmperf_launch::emit::{self, Target};
use fmperf_launch::{self as launch, Format as FileFormat, LaunchScenario, ModelOnly};
use serde_json::json;

use super::estimate::{overrides, read_sources};
use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};

/// Help lines of `--from`, appended to `fmperf search --help`.
pub const HELP: &str = "\
  --from FILE      search with the model, global batch, devices, system and switches of a launch file
                   (Megatron-LM script, NeMo / Megatron-Bridge YAML, torchtitan TOML; a Hugging Face
                   config.json with --gpus, --global-batch, --seq-len) and say where its own layout
                   ranks; --system, --gpus, --global-batch, --seq-len, --ext's and --moe's switches
                   override the file (each --ext switch noted as from --ext; the file's own layout
                   keeps its expert degrees, --moe ep=/etp= fix the searched ones); --recompute,
                   --sharding, --shard-group, --interleave fix or free (`search`) the execution the
                   search otherwise takes from the file, --cp and --mbs fix what it otherwise
                   chooses (your layout stays as the file has it); --strategy (one) defaults to
                   2d-seqp when the file uses context parallelism, else 1d; --mode reference,
                   --domain (give it in --system ID,domain=K), --sensitivity, --tokens, --samples
                   and --price-per-device-hour are refused with --from
  --emit FORMAT    write the best configuration as a launch file: megatron, nemo, torchtitan or
                   maxtext. A single input file of that family is rewritten in place (only the
                   layout's values change; every other line is kept); otherwise a fresh, complete
                   file. The file goes to standard output (`> best.sh`), what a format cannot
                   express to stderr; with --format json it is the \"emitted\" object
";

/// Every feasible configuration is kept to rank the file's own (the list shows `--top`).
const ALL: usize = 1 << 22;

/// A launch file is searched in extended mode only.
fn reference_refused() -> CmdError {
    CmdError::Usage(
        "--mode reference with `search --from`: a launch file is searched in extended mode only (its \
         switches are extended mode's); drop --mode, or give --model, --system, --gpus and --global-batch \
         instead of --from"
            .into(),
    )
}

/// Runs `fmperf search --from FILE` with the already parsed flags; with `--calibration FILE`, the
/// search without and with it, side by side (with `--emit`: the calibrated best is written).
pub fn run(args: &Args, format: OutputFormat, out: &mut dyn Write) -> CmdResult {
    // `--mode extended` is what runs; a launch file's switches are extended mode's.
    if crate::mode::from_args(args)?.is_some_and(|m| !m.kind().takes_switches()) {
        return Err(reference_refused());
    }
    let Some(cal) = super::calibrate::read_calibration(args)? else { return run_with(args, format, None, out) };
    if args.value("emit")?.is_some() {
        return run_with(args, format, Some(&cal), out);
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    run_with(args, format, None, &mut a)?;
    run_with(args, format, Some(&cal), &mut b)?;
    super::calibrate::side_by_side(format, &cal, &String::from_utf8_lossy(&a), &String::from_utf8_lossy(&b), out)
}

/// One search of the file's scenario, its part as calibration `cal` runs it when given.
fn run_with(args: &Args, format: OutputFormat, cal: Option<&Calibration>, out: &mut dyn Write) -> CmdResult {
    let files = read_sources(args)?;
    let path = files.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(" + ");
    let o = overrides(args)?;
    let usage = |e: fmperf_core::Error| super::estimate::file_error(&path, &o, e);
    let sources: Vec<launch::Source<'_>> =
        files.iter().map(|(p, t)| launch::Source { name: Some(p), text: t }).collect();
    let launch = launch::parse_files(&sources, args.trailing()).map_err(usage)?;
    // The file's own scenario, or its model with the flags' device count and batch.
    let (scenario, workload, mut options, gpus, batch, system) = if launch.format == FileFormat::HfConfig {
        let m = ModelOnly::from_launch(&launch, &o, 1).map_err(usage)?;
        let need = |v: Option<u64>, flag: &str| {
            v.ok_or_else(|| CmdError::Usage(format!("--from {path}: a config.json holds the model only; give {flag}")))
        };
        let (gpus, batch) = (need(o.gpus, "--gpus N")?, need(o.global_batch, "--global-batch G")?);
        let system = o.system.clone().or_else(|| launch.settings.system.get().cloned());
        let mut notes = Vec::new();
        let options =
            launch::switch_overrides::set_over(ExtendedOptions::realistic(), o.switches.as_deref(), &mut notes)
                .map_err(usage)?;
        (None, m.workload, options, gpus, batch, system)
    } else {
        let s = LaunchScenario::from_launch(&launch, &o).map_err(usage)?;
        let (w, opts, gpus, batch, system) =
            (s.workload, s.options, s.devices, s.layout.global_batch, s.system.clone());
        (Some(s), w, opts, gpus, batch, system)
    };
    // `--moe` over the file's Mixture-of-Experts switches (the file's own expert degrees kept for its
    // layout; the flag's fix the searched ones).
    let moe = args.value("moe")?;
    if let Some(text) = moe {
        workload.check_moe_switches(text).map_err(|_| super::search::dense_refuses_moe(text, &path))?;
        let set = options.moe.with_text(text).map_err(|e| CmdError::Usage(format!("--moe: {e}")))?;
        options.moe = MoeOptions { ep: options.moe.ep, etp: options.moe.etp, ..set };
    }
    let threads = crate::threads::from_args(args)?;
    let system = system.ok_or_else(|| {
        CmdError::Usage(format!("--from {path}: the file does not name its system; give --system ID"))
    })?;
    // Core composes the search's inputs in the mode (extended: the file's switches at the part's
    // precision); the file and the flags are what it reads them from.
    let source = FileInputs { workload, system: &system, calibration: cal, usage: &usage, system_id: OnceCell::new() };
    let ask = SearchAsk {
        model: &path,
        system: &system,
        strategies: &[],
        n_gpus: gpus,
        global_batch: batch,
        top_k: ALL,
        seq_len: None,
        domain: None,
    };
    let SearchInputs { setup, .. } = search_inputs(&Mode::from(options), &ask, &source)?;
    let Some(ExtendedSetup { workload, hardware, options }) = setup else { return Err(reference_refused()) };
    let system_id = source.system_id.into_inner().unwrap_or_default();
    // Every row with its memory verdict on the part (JSON, table and CSV alike).
    let capacity_gb = hardware.hbm_capacity_gb;
    let with_verdict = |row: ResultRow| {
        use fmperf_core::validate::memory::{shipped_band, shipped_under_band};
        row.with_capacity(capacity_gb, shipped_band(), shipped_under_band())
    };
    let strategy: Strategy = match args.value("strategy")? {
        Some(s) => s.parse().map_err(|e: fmperf_core::Error| CmdError::Usage(format!("--strategy: {e}")))?,
        None if scenario.as_ref().is_some_and(|s| s.layout.cp > 1) => Strategy::ContextParallel2D,
        None => Strategy::OneD,
    };
    if strategy == Strategy::Summa2D {
        return Err(CmdError::Usage(format!("--strategy 2d: {}", fmperf_core::mode::SUMMA_UNSUPPORTED)));
    }
    let top = usize::try_from(args.positive_int("top")?.unwrap_or(10)).unwrap_or(usize::MAX);
    // The search chooses the expert degrees per candidate (unless --moe fixes them); the file's own
    // stay fixed in its layout.
    let mut searched = launch::best::searched_options(&options);
    if let Some(text) = moe {
        let named = MoeOptions::default().with_text(text).map_err(|e| CmdError::Usage(format!("--moe: {e}")))?;
        searched.moe = MoeOptions { ep: named.ep, etp: named.etp, ..searched.moe };
    }
    let (choices, execution_flags) = execution_over(args, ExecutionChoices::fixed(&searched), &options)?;
    super::search::applies(args, &choices, &[strategy])?;
    let setup = ExtendedSetup { workload, hardware: hardware.clone(), options: searched };
    // A `moe.*` error of the search is about a degree `--moe` fixed (the file's own are not searched).
    let search_error = |e| super::search::moe_flag_error(e).unwrap_or_else(usage);
    let make = || launch::best::search_with(setup.clone(), choices, strategy, gpus, batch, ALL).map_err(search_error);
    let result = super::search::on_threads(&make, threads)?;
    let searched = setup.options;
    let setup_workload = workload;
    let emit_target = args
        .value("emit")?
        .map(|t| Target::parse(t).map_err(|e| CmdError::Usage(format!("--emit: {e}"))))
        .transpose()?;
    let emitted = match emit_target {
        Some(target) => {
            let best = result.top.first().ok_or_else(|| {
                CmdError::Usage(format!("--emit {target}: no configuration fits in memory, nothing to write"))
            })?;
            let (layout, chosen) = emit::choice(best, batch, &searched).map_err(usage)?;
            let base = match &scenario {
                Some(s) => LaunchScenario { options, ..s.clone() },
                None => LaunchScenario {
                    model_name: launch.settings.model_name.get().cloned().unwrap_or_else(|| path.clone()),
                    workload: setup_workload,
                    system: Some(system.clone()),
                    devices: gpus,
                    layout,
                    options,
                    assumptions: Vec::new(),
                    origins: Vec::new(),
                },
            };
            Some(emit::emit_for_files(target, &sources, &launch, &base, &layout, &chosen).map_err(usage)?)
        }
        None => None,
    };
    let own = match scenario {
        Some(s) => {
            let e = launch::estimate(&LaunchScenario { options, ..s }, &system_id, &hardware).map_err(usage)?;
            let r = launch::rank(&e.layout, e.evaluation.throughput_samples_per_s, &result.top);
            Some((e, r))
        }
        None => None,
    };
    let shown = &result.top[..result.top.len().min(top)];
    if let Some(e) = &emitted
        && format != OutputFormat::Json
    {
        // The launch file itself on standard output (`> best.sh`), what it could not carry on stderr.
        for n in &e.notes {
            eprintln!("fmperf: note: {n}");
        }
        write!(out, "{}", e.text)?;
        return Ok(());
    }
    match format {
        OutputFormat::Json => {
            let own_json = own.as_ref().map(|(e, r)| {
                let j = e.to_json(&launch);
                json!({
                    "config": j["config"], "time_per_step_s": j["time_per_step_s"], "tokens_per_s": j["tokens_per_s"],
                    "throughput_samples_per_s": e.evaluation.throughput_samples_per_s, "memory": j["memory"],
                    "rank": r.position, "of": r.of, "in_search": r.in_search, "relative_to_best": r.relative_to_best,
                })
            });
            let results: Vec<_> = shown.iter().map(|r| with_verdict(ResultRow::of(r, batch)).to_json()).collect();
            let mut doc = json!({ "mode": "extended", "from": path, "format": launch.format.as_str(), "system": system_id,
                        "gpus": gpus, "global_batch": batch, "strategy": strategy.to_string(), "ext": o.switches,
                        "candidates": result.candidates, "feasible": result.feasible, "results": results, "own": own_json,
                        "emitted": emitted.as_ref().map(|e| json!({ "format": emit_target.map(|t| t.as_str()),
                            "file_name": e.file_name, "in_place": e.in_place, "text": e.text, "notes": e.notes })) });
            // Only when given, so that the document of a plain `search --from` stays as it was.
            if let Some(text) = moe {
                doc["moe"] = json!(text);
            }
            if !execution_flags.is_empty() {
                doc["execution"] = json!(execution_flags.join(" "));
            }
            writeln!(out, "{doc}")?;
        }
        OutputFormat::Table | OutputFormat::Csv => {
            let rows: Vec<ResultRow> = shown.iter().map(|r| with_verdict(ResultRow::of(r, batch))).collect();
            let digits = if format == OutputFormat::Csv { Digits::Exact } else { Digits::Rounded };
            let table = super::search::flat_table(&rows, digits);
            if format == OutputFormat::Csv {
                write!(out, "{}", table.to_csv())?;
                return Ok(());
            }
            writeln!(
                out,
                "{path} ({}) on {system_id} × {gpus}, strategy {strategy}, global batch {batch}, extended mode with the file's switches{}: {} candidates, {} fit in {} GB",
                launch.format.title(),
                flags_over(o.switches.as_deref(), moe),
                result.candidates,
                result.feasible,
                hardware.hbm_capacity_gb
            )?;
            if !execution_flags.is_empty() {
                writeln!(
                    out,
                    "execution of the search as {} set it (your layout's as the file has it)",
                    execution_flags.join(" ")
                )?;
            }
            if shown.is_empty() {
                writeln!(out, "no configuration fits in memory")?;
            } else {
                write!(out, "{}", table.render())?;
            }
            if let Some((e, r)) = &own {
                let y = &e.layout;
                let fits = if e.memory.fits == fmperf_core::vocab::Fits::No { ", does not fit" } else { "" };
                let place = if e.memory.fits == fmperf_core::vocab::Fits::No {
                    format!("not ranked ({:.1} GB needed)", e.memory.predicted_gb)
                } else {
                    format!("rank {} of {}", r.position, r.of)
                };
                let experts = y.expert_degrees_text(&e.scenario.workload);
                writeln!(
                    out,
                    "\nyour layout: tp {} · pp {} · cp {} · dp {} · mbs {}{experts}: {:.4} samples/s, {:.3} s per step{fits}; {place}, {:.0} % of the best's throughput{}",
                    y.tp,
                    y.pp,
                    y.cp,
                    y.dp,
                    y.mbs,
                    e.evaluation.throughput_samples_per_s,
                    e.evaluation.totals.t,
                    100.0 * r.relative_to_best,
                    if r.in_search { "" } else { " (its placement is not among the searched candidates)" }
                )?;
            }
        }
    }
    Ok(())
}

/// The switches given over the file's, as the header says them: ` and --ext … over them`,
/// ` and --ext …, --moe … over them`; empty when neither flag was given.
fn flags_over(ext: Option<&str>, moe: Option<&str>) -> String {
    let given: Vec<String> =
        [("ext", ext), ("moe", moe)].iter().filter_map(|(f, t)| t.map(|t| format!("--{f} {t}"))).collect();
    if given.is_empty() { String::new() } else { format!(" and {} over them", given.join(", ")) }
}

/// The file's execution choices `file` with each execution flag given set over it (`search`: the
/// search chooses; a value: fixed to it), checked as plain `search` checks them against `--ext`
/// (`o`: the file's switches with `--ext`'s), and the flags as given (`--recompute full`).
fn execution_over(
    args: &Args,
    file: ExecutionChoices,
    o: &ExtendedOptions,
) -> Result<(ExecutionChoices, Vec<String>), CmdError> {
    let mut c = file;
    let mut given = Vec::new();
    for (flag, key) in super::search::EXECUTION_FLAGS {
        let Some(v) = args.value(flag)? else { continue };
        let one = ExecutionChoices::from_text(&format!("{key}={v}")).map_err(super::search::execution_error)?;
        match key {
            "recompute" => c.recompute = one.recompute,
            "sharding" => c.sharding = one.sharding,
            "shard_group" => c.shard_group = one.shard_group,
            "interleave" => c.interleave = one.interleave,
            "cp" => c.cp = one.cp,
            _ => c.mbs = one.mbs,
        }
        given.push(format!("--{flag} {v}"));
    }
    super::search::agree_with_switches(args, &c, &Mode::from(*o))?;
    Ok((c, given))
}

/// The file's scenario as core's search reads its inputs ([`search_inputs`]): extended mode's
/// workload as the file (and the flags over it) states it, and the part of its system spec with
/// `--calibration` applied, whose catalog id is kept for the output. Reference mode reads no
/// launch file (`--mode reference` is refused before), so its inputs are that error.
struct FileInputs<'a> {
    /// The file's workload (`--seq-len` and `--moe` already applied).
    workload: Workload,
    /// The system spec (`--system`, else the file's).
    system: &'a str,
    /// `--calibration`'s stack constants.
    calibration: Option<&'a Calibration>,
    /// A core error worded for the file and its flags.
    usage: &'a dyn Fn(fmperf_core::Error) -> CmdError,
    /// The system's catalog id, once the part is read.
    system_id: OnceCell<String>,
}

impl SearchSource for FileInputs<'_> {
    type Error = CmdError;
    fn shape(&self) -> Result<(String, ModelShape), CmdError> {
        Err(reference_refused())
    }
    fn system(&self) -> Result<(String, SystemParams), CmdError> {
        Err(reference_refused())
    }
    fn workload(&self, _: Option<u64>) -> Result<Workload, CmdError> {
        Ok(self.workload)
    }
    /// The part at its measured ceiling or its datasheet peak as the switch `measured_ceiling`
    /// says, as `fmperf estimate --from` prices the file's own layout ([`launch::hardware`]); no
    /// `--domain` with `--from`.
    fn hardware(
        &self,
        precision: Precision,
        measured_ceiling: bool,
        _: Option<u64>,
    ) -> Result<(Hardware, Precision), CmdError> {
        let (id, hardware, precision) =
            launch::hardware(self.system, precision, measured_ceiling).map_err(self.usage)?;
        let hardware = match self.calibration {
            Some(c) => {
                c.check_system(&id).map_err(|e| CmdError::Usage(format!("--calibration: {e}")))?;
                c.constants.apply(&hardware)
            }
            None => hardware,
        };
        let _ = self.system_id.set(id);
        Ok((hardware, precision))
    }
}
