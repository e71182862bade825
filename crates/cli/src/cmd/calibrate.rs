//! `fmperf calibrate`: a measured run of your own (a log pasted into a file, or numbers) and its
//! launch file → the calibration document of your stack on that system (JSON on stdout,
//! `> my-stack.json`); and the side-by-side output of `--calibration FILE` on `estimate` and
//! `search`.

use std::io::Write;

use fmperf_core::calibrate::fit::{Prediction, fit};
use fmperf_core::calibrate::{Calibration, Figure, Measured, RunFacts, StackConstants};
use fmperf_core::extended::Hardware;
use fmperf_core::resolve::{self, UserEntries};
use fmperf_core::vocab::{MemoryKind, MetricKind, Note, PredictedMemory};
use fmperf_launch::{self as launch, Estimate, MemoryVerdict, Source};
use serde_json::{Value, json};

use super::estimate::{file_error, overrides, read_sources};
use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};
use crate::table::Table;

/// Help text of `fmperf calibrate`.
pub const HELP: &str = "\
fmperf calibrate — your measured run as the anchor: fit the constants of your stack on one system

USAGE: fmperf calibrate --from LAUNCH [--from FILE2 …] [--system ID] [--gpus N] [--global-batch G]
                        [--seq-len S] (--log FILE | --step-time S | --tokens-per-s-per-device X |
                        --tokens-per-s X | --samples-per-s X | --tflops X | --mfu F | --peak-reserved-gb X |
                        --peak-allocated-gb X | --nvidia-smi-gb X …) [--format json|table] > my-stack.json

  --from           the launch file of the measured run (as for `fmperf estimate --from`)
  --log            a file of the log lines your framework printed (Megatron-LM / NeMo, torchtitan,
                   MaxText, Hugging Face Trainer, DeepSpeed, nanotron, nanoGPT, nanochat): the median of the steady-state
                   steps is read (steps 1-10 are warm-up), peak memory as the largest reading
  --step-time      seconds per optimizer step
  --tokens-per-s-per-device, --tokens-per-s (all devices), --samples-per-s (all devices)
  --tflops         model TFLOP/s per device (NeMo, MaxText, torchtitan count model FLOPs)
  --mfu            model FLOP utilisation, a fraction (0.42) or a percentage (42%)
  --peak-reserved-gb, --peak-allocated-gb, --nvidia-smi-gb
                   peak memory of one device [GB = 1e9 bytes] as PyTorch's max reserved, max allocated
                   or nvidia-smi shows it
  --format         json (default: the calibration document) or table

Fitted (bounded, priors from the shipped fit): compute_scale (matmul and attention rate, 0.5-1.5),
scale_out_bandwidth_scale (0.25-2), memory_overhead_gb (-20 to 40, from a memory figure only). One
run moves the scales about two thirds of the way to explaining it exactly (the model's own scatter
between runs of one stack is about 10 %). The document {\"version\": 1, \"system\", \"stack_constants\",
\"changed\", \"from\"} is read by `--calibration FILE` on `fmperf estimate --from` and `fmperf search`,
which then show uncalibrated and calibrated results side by side.
";

/// The numeric figure flags: flag, figure, whether a percentage is allowed.
const FIGURE_FLAGS: [(&str, Figure); 9] = [
    ("step-time", Figure::Time(MetricKind::StepTimeS)),
    ("tokens-per-s-per-device", Figure::Time(MetricKind::TokensPerSPerDevice)),
    ("tokens-per-s", Figure::Time(MetricKind::TokensPerSTotal)),
    ("samples-per-s", Figure::Time(MetricKind::SamplesPerS)),
    ("tflops", Figure::Time(MetricKind::TflopsPerDevice)),
    ("mfu", Figure::Time(MetricKind::Mfu)),
    ("peak-reserved-gb", Figure::Memory(MemoryKind::PeakReserved)),
    ("peak-allocated-gb", Figure::Memory(MemoryKind::PeakAllocated)),
    ("nvidia-smi-gb", Figure::Memory(MemoryKind::NvidiaSmi)),
];

/// Runs `fmperf calibrate`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let mut value_flags = vec!["from", "model", "system", "gpus", "global-batch", "seq-len", "format", "log"];
    value_flags.extend(FIGURE_FLAGS.iter().map(|(f, _)| *f));
    let Some(args) = super::parse_flags(raw, &value_flags, HELP, out)? else {
        return Ok(());
    };
    // The document is the product (`> my-stack.json`): JSON unless told.
    let format = match args.value("format")? {
        None => OutputFormat::Json,
        Some(_) => OutputFormat::from_args(&args, &[OutputFormat::Json, OutputFormat::Table])?,
    };
    let mut log_notes = Vec::new();
    let measured = measured_figures(&args, &mut log_notes)?;
    let files = read_sources(&args)?;
    let path = files.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(" + ");
    let o = overrides(&args)?;
    let sources: Vec<Source<'_>> = files.iter().map(|(p, t)| Source { name: Some(p), text: t }).collect();
    let (_, e) = launch::estimate_files(&sources, args.trailing(), &o).map_err(|err| file_error(&path, &o, err))?;
    let hw = hardware_of(&e).map_err(|err| file_error(&path, &o, err))?;
    let s = &e.scenario;
    let facts = RunFacts {
        global_batch: e.layout.global_batch,
        seq_len: s.workload.seq_len,
        devices: s.devices,
        model_tflop_per_sample: e.model_tflop_per_sample,
        peak_tflops: e.peak_tflops,
    };
    let mut predict = |k: &StackConstants| {
        let x = launch::estimate(s, &e.system_id, &k.apply(&hw))?;
        Ok(Prediction { step_s: x.evaluation.totals.t, memory: PredictedMemory::of(&x.evaluation) })
    };
    let mut fitted =
        fit(&measured, &facts, &mut predict).map_err(|err| CmdError::Usage(format!("calibrate: {err}")))?;
    fitted.notes.splice(0..0, log_notes);
    let cal = Calibration::of_fit(&e.system_id, &s.model_name, s.devices, &e.config_line(), &fitted);
    match format {
        OutputFormat::Table => write!(out, "{}", render(&cal))?,
        _ => writeln!(out, "{}", serde_json::to_string_pretty(&cal.to_json()).unwrap_or_default())?,
    }
    Ok(())
}

/// The figures of `--log` and the numeric flags, in that order.
fn measured_figures(args: &Args, notes: &mut Vec<Note>) -> Result<Vec<Measured>, CmdError> {
    let mut out = Vec::new();
    if let Some(path) = args.value("log")? {
        let text = crate::files::read_text("--log", path, crate::files::MAX_DATA_BYTES)?;
        let figures =
            fmperf_launch::logs::read_log(&text).map_err(|e| CmdError::Usage(format!("--log {path}: {e}")))?;
        notes.extend(
            figures.notes.iter().map(|n| Note { text: format!("{} log: {n}", figures.framework), ..n.clone() }),
        );
        out.extend(figures.measured);
    }
    for (flag, figure) in FIGURE_FLAGS {
        let Some(text) = args.value(flag)? else { continue };
        let t = text.trim();
        let (number, percent) = match t.strip_suffix('%') {
            Some(n) if flag == "mfu" => (n.trim(), true),
            _ => (t, false),
        };
        let v: f64 = number.parse().map_err(|_| CmdError::Usage(format!("--{flag} {text}: not a number")))?;
        let v = if percent { v / 100.0 } else { v };
        if out.iter().any(|m: &Measured| m.figure == figure) {
            return Err(CmdError::Usage(format!(
                "--{flag} {text}: the log already gives this figure; give one or the other"
            )));
        }
        out.push(Measured::new(figure, v, format!("--{flag}"), &format!("--{flag}"))?);
    }
    if out.is_empty() {
        return Err(CmdError::Usage(
            "calibrate needs a measured figure: --log FILE, --step-time S, --tokens-per-s-per-device X, --mfu F, … \
             (see --help)"
                .into(),
        ));
    }
    Ok(out)
}

/// The part an estimate was priced on (its system spec at its precision).
fn hardware_of(e: &Estimate) -> Result<Hardware, fmperf_core::Error> {
    let spec = e.scenario.system.clone().unwrap_or_else(|| e.system_id.clone());
    let h = &e.scenario.options.hardware;
    launch::hardware(&spec, h.precision, h.measured_ceiling).map(|(_, hw, _)| hw)
}

fn render(cal: &Calibration) -> String {
    let c = &cal.constants;
    let mut out = format!("calibration of {} (version 1)\n", cal.system);
    let mut t = Table::new(&["constant", "shipped", "calibrated"]);
    t.push(vec!["compute_scale".into(), "1".into(), format!("{:.3}", c.compute_scale)]);
    t.push(vec!["scale_out_bandwidth_scale".into(), "1".into(), format!("{:.3}", c.scale_out_bandwidth_scale)]);
    t.push(vec!["memory_overhead_gb".into(), "0".into(), format!("{:+.2}", c.memory_overhead_gb)]);
    out.push_str(&t.render());
    let changes = c.changes();
    out.push_str(&if changes.is_empty() {
        "\nnothing changed: the run agrees with the shipped fit\n".to_string()
    } else {
        format!("\nchanged: {}\n", changes.iter().map(|x| x.text()).collect::<Vec<_>>().join("; "))
    });
    let mut f = Table::new(&["measured figure", "value", "predicted before", "predicted after", "from"]);
    for m in cal.from["measured"].as_array().into_iter().flatten() {
        let num = |k: &str| m[k].as_f64().map_or("-".to_string(), |v| format!("{v:.4}"));
        f.push(vec![
            m["figure"].as_str().unwrap_or("").to_string(),
            num("value"),
            num("predicted_before"),
            num("predicted_after"),
            m["source"].as_str().unwrap_or("").to_string(),
        ]);
    }
    out.push_str(&format!(
        "\nrun: {} on {} devices, {}\n",
        cal.from["model"].as_str().unwrap_or(""),
        cal.from["devices"],
        cal.from["layout"].as_str().unwrap_or("")
    ));
    out.push_str(&f.render());
    for n in cal.from["notes"].as_array().into_iter().flatten() {
        out.push_str(&format!("note: {}\n", n.as_str().unwrap_or("")));
    }
    out
}

/// Reads `--calibration FILE` (when given).
pub fn read_calibration(args: &Args) -> Result<Option<Calibration>, CmdError> {
    let Some(path) = args.value("calibration")? else { return Ok(None) };
    let text = crate::files::read_text("--calibration", path, crate::files::MAX_INPUT_BYTES)?;
    Calibration::parse(&text).map(Some).map_err(|e| CmdError::Usage(format!("--calibration {path}: {e}")))
}

/// The catalog id a `--system` argument names (`ID` or `ID,options`), for checking a calibration
/// against it; an error when it names no catalog system (a file, a reference name).
pub fn catalog_id(system: &str, cal: &Calibration) -> Result<String, CmdError> {
    match resolve::system_spec(UserEntries::builtin(), system) {
        Ok((entry, _)) => Ok(entry.id.clone()),
        Err(_) => Err(CmdError::Usage(format!(
            "--calibration: --system {system} is not a catalog system; the calibration is of {}: give --system {}",
            cal.system, cal.system
        ))),
    }
}

/// The estimate `e` (priced on `hw`) with calibration `cal` applied: the constants on the part,
/// the memory overhead added to every memory figure and judged against the device's capacity.
pub fn calibrated_estimate(e: &Estimate, hw: &Hardware, cal: &Calibration) -> Result<Estimate, fmperf_core::Error> {
    cal.check_system(&e.system_id)?;
    let k = &cal.constants;
    let mut x = launch::estimate(&e.scenario, &e.system_id, &k.apply(hw))?;
    let p = PredictedMemory::of(&x.evaluation);
    let o = k.memory_overhead_gb;
    let with = PredictedMemory {
        allocated_gb: p.allocated_gb + o,
        reserved_gb: p.reserved_gb + o,
        device_gb: p.device_gb + o,
    };
    x.memory = MemoryVerdict::new(&with, hw.hbm_capacity_gb);
    Ok(x)
}

/// `fmperf estimate --from … --calibration FILE`: both estimates, labelled.
pub fn estimate_side_by_side(
    path: &str,
    l: &launch::Launch,
    e: &Estimate,
    cal: &Calibration,
    budget: Option<(fmperf_core::catalog::TrainingBudget, Option<f64>)>,
    format: OutputFormat,
    out: &mut dyn Write,
) -> CmdResult {
    let hw = hardware_of(e).map_err(|err| CmdError::Usage(format!("--from {path}: {err}")))?;
    let c = calibrated_estimate(e, &hw, cal).map_err(|err| CmdError::Usage(format!("--calibration: {err}")))?;
    let cost = |x: &Estimate| budget.map(|(b, p)| crate::run_cost::of_estimate(x, b, p)).transpose();
    let (cost_u, cost_c) = (cost(e)?, cost(&c)?);
    match format {
        OutputFormat::Json => {
            let mut doc = json!({
                "calibration": calibration_json(cal),
                "uncalibrated": e.to_json(l),
                "calibrated": c.to_json(l),
            });
            if let (Some(u), Some(k)) = (&cost_u, &cost_c) {
                doc["uncalibrated"]["cost"] = u.to_json();
                doc["calibrated"]["cost"] = k.to_json();
            }
            writeln!(out, "{doc}")?;
        }
        _ => {
            let mut t = Table::new(&["", "uncalibrated (shipped fit)", "calibrated"]);
            let n = e.scenario.devices as f64;
            let rows: [(&str, Box<dyn Fn(&Estimate) -> String>); 6] = [
                ("time per step [s]", Box::new(|x| format!("{:.3}", x.evaluation.totals.t))),
                ("tokens/s", Box::new(|x| format!("{:.0}", x.evaluation.tokens_per_s))),
                ("tokens/s per device", Box::new(move |x| format!("{:.0}", x.evaluation.tokens_per_s / n))),
                ("MFU [%]", Box::new(|x| format!("{:.1}", 100.0 * x.mfu))),
                ("memory per device [GB]", Box::new(|x| format!("{:.1}", x.memory.predicted_gb))),
                ("fits", Box::new(|x| super::estimate::fits_words(x.memory.fits).to_string())),
            ];
            for (name, f) in rows {
                t.push(vec![name.to_string(), f(e), f(&c)]);
            }
            if let (Some(u), Some(k)) = (&cost_u, &cost_c) {
                t.push(vec!["run cost".into(), crate::run_cost::line(u), crate::run_cost::line(k)]);
            }
            writeln!(
                out,
                "{path} ({}): {} on {} × {}",
                l.format.title(),
                e.model_line(),
                e.system_id,
                e.scenario.devices
            )?;
            writeln!(out, "config   {}", e.config_line())?;
            writeln!(out, "{}", calibration_line(cal))?;
            write!(out, "{}", t.render())?;
        }
    }
    Ok(())
}

/// The calibration as the outputs label it: system, constants, what changed, the run it came from.
pub fn calibration_json(cal: &Calibration) -> Value {
    let doc = cal.to_json();
    json!({
        "system": doc["system"],
        "stack_constants": doc["stack_constants"],
        "changed": doc["changed"],
        "from": {"model": cal.from["model"], "devices": cal.from["devices"], "layout": cal.from["layout"]},
    })
}

/// One line naming the calibration and what it changed.
pub fn calibration_line(cal: &Calibration) -> String {
    let changes: Vec<String> = cal.constants.changes().iter().map(|x| x.text()).collect();
    format!(
        "calibrated on {} ({} devices, {}): {}",
        cal.from["model"].as_str().unwrap_or("a measured run"),
        cal.from["devices"],
        cal.from["layout"].as_str().unwrap_or(""),
        if changes.is_empty() { "nothing changed".to_string() } else { changes.join("; ") }
    )
}

/// `fmperf search … --calibration FILE`: the search without and with the calibration, labelled.
/// `execute_one` runs one search (the request's calibration applied when present).
pub fn search_side_by_side(
    req: &super::search::SearchRequest,
    cal: &Calibration,
    out: &mut dyn Write,
    execute_one: fn(&super::search::SearchRequest, &mut dyn Write) -> CmdResult,
) -> CmdResult {
    if !req.mode.kind().takes_switches() {
        return Err(CmdError::Usage(
            "--calibration changes extended mode's pricing; --mode reference is the published model: drop one".into(),
        ));
    }
    let id = catalog_id(&req.system, cal)?;
    cal.check_system(&id).map_err(|e| CmdError::Usage(format!("--calibration: {e}")))?;
    let plain = super::search::SearchRequest { calibration: None, ..req.clone() };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    execute_one(&plain, &mut a)?;
    execute_one(req, &mut b)?;
    side_by_side(req.format, cal, &String::from_utf8_lossy(&a), &String::from_utf8_lossy(&b), out)
}

/// A search's outputs without (`a`) and with (`b`) calibration `cal`, side by side: JSON
/// `{"calibration", "uncalibrated", "calibrated"}` (each calibrated row with its
/// `mem_gb_with_overhead`), CSV one table with a first column `calibrated`, tables one after the
/// other, labelled.
pub fn side_by_side(format: OutputFormat, cal: &Calibration, a: &str, b: &str, out: &mut dyn Write) -> CmdResult {
    match format {
        OutputFormat::Json => {
            let parse = |s: &str| serde_json::from_str::<Value>(s.trim()).unwrap_or(Value::Null);
            let mut calibrated = parse(b);
            // The rows keep the contract's memory (extended mode's estimate); the calibrated device
            // figure is beside it (feasibility was judged on the need without the allocator's
            // cache against the capacity less the overhead).
            let o = cal.constants.memory_overhead_gb;
            for r in calibrated["results"].as_array_mut().into_iter().flatten() {
                if let Some(m) = r["mem_gb"].as_f64() {
                    r["mem_gb_with_overhead"] = json!(m + o);
                }
            }
            calibrated["memory_overhead_gb"] = json!(o);
            let doc = json!({"calibration": calibration_json(cal), "uncalibrated": parse(a), "calibrated": calibrated});
            writeln!(out, "{doc}")?;
        }
        OutputFormat::Csv => {
            // One table: a first column says which.
            for (i, line) in a.lines().enumerate() {
                writeln!(out, "{},{line}", if i == 0 { "calibrated" } else { "false" })?;
            }
            for line in b.lines().skip(1) {
                writeln!(out, "true,{line}")?;
            }
        }
        _ => {
            writeln!(out, "uncalibrated (shipped fit):\n{a}")?;
            let o = cal.constants.memory_overhead_gb;
            let memory = if o == 0.0 {
                String::new()
            } else {
                format!(
                    "\n(memory: each configuration needs its mem [GB] {o:+.2} GB of the stack's overhead; the capacity \
                     shown is what is left to it)"
                )
            };
            writeln!(out, "{}:{memory}\n{b}", calibration_line(cal))?;
        }
    }
    Ok(())
}
