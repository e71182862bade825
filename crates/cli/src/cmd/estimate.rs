//! `fmperf estimate --from FILE`: exactly the configuration of a launch script, NeMo /
//! Megatron-Bridge YAML or torchtitan TOML, evaluated in extended mode (no search): time per step,
//! tokens/s, MFU and the memory per device, with every flag fmperf does not use listed.

use std::io::Write;

use fmperf_core::extended::moe::MoeTimePart;
use fmperf_core::resolve::{self, UserEntries};
use fmperf_core::vocab::{Fits, Note, TimePart};
use fmperf_launch::{self as launch, Overrides, Source};

use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};
use crate::table::Table;

/// Help text of `fmperf estimate`.
pub const HELP: &str = "\
fmperf estimate — the time and memory of the configuration in your launch file (no search)

USAGE: fmperf estimate --from FILE [--from FILE2 …] [--model CONFIG.json] [--system ID] [--gpus N]
                       [--global-batch G] [--seq-len S] [--ext KEY=VALUE,…] [--format table|json]
                       [--calibration FILE] [-- ARGS…]

  --from           a launch file, format detected: a Megatron-LM / Megatron-DeepSpeed / NeMo / Hugging
                   Face Trainer launch script or Slurm job (read by a shell evaluator that runs nothing),
                   a NeMo / Megatron-Bridge YAML, a torchtitan TOML, a MaxText config or command line,
                   a Trainer (LLaMA-Factory, TRL) or Accelerate YAML, a DeepSpeed JSON, a Hugging Face
                   config.json (the model). Repeat it to read files
                   together (a launch and its ds_config.json; a TOML and the model's config.json): a
                   setting one file leaves out comes from another, two different values are an error
  --model          the model's Hugging Face config.json, read with the --from files (the same as one
                   more --from)
  -- ARGS          positional parameters of the script ($1, $2, …), as you would run it
  --system         the system: a catalog id with options (`fmperf catalog systems`); default: the
                   file's `# fmperf: system=ID` line
  --gpus           devices (default: the launcher's nodes × GPUs per node, or `# fmperf: gpus=N`)
  --global-batch   samples per step (default: the file's)
  --seq-len        tokens per sample (default: the file's)
  --ext            extended mode's switches over the file's, e.g. --ext recompute=full (see SWITCHES
                   below; each value noted as from --ext)
  --format         table (default) or json
  --calibration    a calibration of your stack on this system (`fmperf calibrate`): uncalibrated and
                   calibrated figures side by side (JSON: {\"calibration\", \"uncalibrated\", \"calibrated\"})

Extended mode with the file's own switches: precision, recomputation, distributed optimizer / FSDP,
sequence parallelism, virtual pipeline stages, and --ext's over them. JSON: {\"config\", \"memory\": {\"kind\", \"predicted_gb\",
\"capacity_gb\", \"fits\": yes|tight|no, …}, \"unused\": [{\"key\", \"value\", \"why\"}], …}. Exit 2 with one line naming the
flag or key when the file cannot be read.
";

/// The value flags of `fmperf estimate` (besides [`crate::run_cost::FLAGS`]).
pub const VALUE_FLAGS: [&str; 9] =
    ["from", "model", "system", "gpus", "global-batch", "seq-len", "ext", "format", "calibration"];

/// Runs `fmperf estimate`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let value_flags: Vec<&str> = VALUE_FLAGS.iter().chain(&crate::run_cost::FLAGS).copied().collect();
    let help = format!("{HELP}{}{}", crate::run_cost::HELP, crate::mode::ext_help());
    let Some(args) = super::parse_flags(raw, &value_flags, &help, out)? else {
        return Ok(());
    };
    run_args(&args, out)
}

/// Runs `fmperf estimate` with the parsed flags `args`.
pub fn run_args(args: &Args, out: &mut dyn Write) -> CmdResult {
    super::from_flags::check(args, "estimate --from", super::from_flags::ESTIMATE_FROM)?;
    let format = OutputFormat::from_args(args, &[OutputFormat::Table, OutputFormat::Json])?;
    // The flags first: a bad `--system` or `--gpus` is reported even when the file has problems too.
    let overrides = overrides(args)?;
    let files = read_sources(args)?;
    let path = files.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(" + ");
    let sources: Vec<Source<'_>> = files.iter().map(|(p, t)| Source { name: Some(p), text: t }).collect();
    let (launch, e) = launch::estimate_files(&sources, args.trailing(), &overrides)
        .map_err(|err| file_error(&path, &overrides, err))?;
    let budget = crate::run_cost::from_args(args)?;
    if let Some(cal) = super::calibrate::read_calibration(args)? {
        return super::calibrate::estimate_side_by_side(&path, &launch, &e, &cal, budget, format, out);
    }
    let cost = budget.map(|(b, p)| crate::run_cost::of_estimate(&e, b, p)).transpose()?;
    match format {
        OutputFormat::Json => {
            let mut doc = e.to_json(&launch);
            if let Some(c) = &cost {
                doc["cost"] = c.to_json();
            }
            writeln!(out, "{doc}")?
        }
        _ => {
            write!(out, "{}", render(&path, &launch, &e))?;
            if let Some(c) = &cost {
                writeln!(out, "\ncost     {}", crate::run_cost::line(c))?;
            }
        }
    }
    Ok(())
}

/// Reads every `--from` (and `--model` when it names a file): their paths and texts, in order.
pub fn read_sources(args: &Args) -> Result<Vec<(String, String)>, CmdError> {
    let mut out = Vec::new();
    let from = args.values("from");
    if from.is_empty() {
        return Err(CmdError::Usage("--from is required".into()));
    }
    for path in from {
        let text = crate::files::read_text("--from", path, crate::files::MAX_INPUT_BYTES)?;
        out.push((path.to_string(), text));
    }
    if let Some(model) = args.value("model")? {
        if !std::path::Path::new(model).is_file() {
            return Err(CmdError::Usage(format!(
                "--model {model}: with --from, --model names the model's config.json (a file), read with the launch"
            )));
        }
        let text = crate::files::read_text("--model", model, crate::files::MAX_INPUT_BYTES)?;
        out.push((model.to_string(), text));
    }
    Ok(out)
}

/// An error of reading and estimating the `--from` files (`path`), named by what is at fault: a
/// command-line flag (`--gpus`, `--system` when given, the script's arguments after `--`; `--ext`
/// for a switch) is named alone; anything else is the files'.
pub fn file_error(path: &str, o: &Overrides, e: fmperf_core::Error) -> CmdError {
    if let Some(ext) = crate::mode::ext_error(&e) {
        return ext;
    }
    let flag = match &e {
        fmperf_core::Error::UnknownName { kind, .. } => kind == "system" && o.system.is_some(),
        _ => {
            ["--gpus", "--global-batch", "--seq-len", "--"].iter().any(|f| e.is_at(*f))
                || (e.is_at("--system") && o.system.is_some())
        }
    };
    if flag { CmdError::Usage(e.to_string()) } else { CmdError::Usage(format!("--from {path}: {e}")) }
}

/// `--system`, `--gpus`, `--global-batch`, `--seq-len`, `--ext` as overrides of the file.
/// `--system` and `--ext` are checked here, before any file is read: an unknown id, a bad option
/// or switch is the flag's error, never hidden behind a problem of the file.
pub fn overrides(args: &Args) -> Result<Overrides, CmdError> {
    let system = args.value("system")?;
    if let Some(spec) = system {
        resolve::system_spec(UserEntries::builtin(), spec).map_err(|e| CmdError::Usage(e.plain().to_string()))?;
    }
    Ok(Overrides {
        system: system.map(str::to_string),
        gpus: args.positive_int("gpus")?,
        global_batch: args.positive_int("global-batch")?,
        seq_len: args.positive_int("seq-len")?,
        switches: crate::mode::ext_text(args)?,
    })
}

/// The verdict in words.
pub fn fits_words(fits: Fits) -> &'static str {
    match fits {
        Fits::Yes => "yes",
        Fits::Tight => "tight: within the error band of the capacity, may not fit",
        Fits::No => "no",
    }
}

/// The Mixture-of-Experts parts of the busiest device, as core lists them: time [s] (forward and
/// backward over the iteration, `times`) beside the expert memory [GB] and the routing figures
/// (`figures`).
fn moe_table(times: &[(MoeTimePart, f64)], figures: &[(String, String)]) -> Table {
    let mut table = Table::new(&["MoE time part", "[s]", "MoE figure", "value"]);
    // Two columns side by side: as many rows as the longer one, the other's cells left blank (no
    // figure dropped if one list grows).
    for i in 0..times.len().max(figures.len()) {
        let (name, v) =
            times.get(i).map_or((String::new(), String::new()), |(p, v)| (p.key().to_string(), format!("{v:.3}")));
        let (fig, fv) = figures.get(i).cloned().unwrap_or_default();
        table.push(vec![name, v, fig, fv]);
    }
    table
}

fn render(path: &str, l: &launch::Launch, e: &launch::Estimate) -> String {
    let s = &e.scenario;
    let o = &s.options;
    let ev = &e.evaluation;
    let t = &ev.totals;
    let m = &ev.memory;
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!("{path} ({})", l.format.title()));
    line(format!("model    {}", e.model_line()));
    if let Some(x) = e.experts_line() {
        line(format!("experts  {x}"));
    }
    line(format!("system   {} × {} devices, {}", e.system_id, s.devices, o.hardware.precision));
    line(format!("config   {}", e.config_line()));
    if let Some(x) = e.expert_layout_line() {
        line(format!("experts  {x}"));
    }
    line(String::new());
    let mut head = Table::new(&["", "value"]);
    head.push(vec!["time per step [s]".into(), format!("{:.3}", t.t)]);
    head.push(vec!["tokens/s".into(), format!("{:.0}", ev.tokens_per_s)]);
    head.push(vec!["tokens/s per device".into(), format!("{:.0}", ev.tokens_per_s / s.devices as f64)]);
    head.push(vec!["MFU [%]".into(), format!("{:.1}", 100.0 * e.mfu)]);
    head.push(vec!["memory per device [GB] (device level)".into(), format!("{:.1}", e.memory.predicted_gb)]);
    head.push(vec!["error band [GB]".into(), format!("± {:.1}", e.memory.band_gb)]);
    head.push(vec!["device memory [GB]".into(), format!("{:.1}", e.memory.capacity_gb)]);
    head.push(vec!["fits".into(), fits_words(e.memory.fits).to_string()]);
    out.push_str(&head.render());
    out.push('\n');
    let mut parts = Table::new(&["time part", "[s]", "memory part", "[GB]"]);
    let mem = m.parts();
    // The time parts of the vocabulary (a dense model's without the EP all-to-all), beside the
    // memory parts (the longer list sets the rows).
    let time_parts = TimePart::shown([t]);
    for i in 0..time_parts.len().max(mem.len()) {
        let time = time_parts
            .get(i)
            .map_or([String::new(), String::new()], |p| [p.label().to_string(), format!("{:.3}", p.of(t))]);
        let memory =
            mem.get(i).map_or([String::new(), String::new()], |(p, v)| [p.key().to_string(), format!("{v:.2}")]);
        parts.push([time, memory].concat());
    }
    out.push_str(&parts.render());
    // Host time inside the time parts (not added to them: each is part of exposed memory).
    out.push('\n');
    let mut host = Table::new(&["host work (hidden behind the GPU unless host-bound)", "[s]"]);
    for (p, v) in ev.breakdown.host_parts() {
        host.push(vec![p.label().to_string(), format!("{v:.3}")]);
    }
    out.push_str(&host.render());
    // The MoE part, where core lists one (a dense model has none).
    let (moe_times, moe_figures) = (ev.moe_times(), ev.moe_figures());
    if !moe_times.is_empty() || !moe_figures.is_empty() {
        out.push('\n');
        out.push_str(&moe_table(&moe_times, &moe_figures).render());
    }
    let mut list = |title: &str, items: Vec<String>| {
        if !items.is_empty() {
            out.push_str(&format!("\n{title} ({}):\n", items.len()));
            for i in items {
                out.push_str(&format!("  {i}\n"));
            }
        }
    };
    list(
        "not used by fmperf",
        l.unused
            .iter()
            .map(|u| {
                if u.value.is_empty() {
                    format!("{}: {}", u.key, u.why)
                } else {
                    format!("{} {}: {}", u.key, u.value, u.why)
                }
            })
            .collect(),
    );
    list("assumed", Note::texts(&s.assumptions));
    list("read with a rule", l.notes.iter().chain(&e.system_notes).map(|n| n.text.clone()).collect());
    out
}
