//! `fmperf sweep`: how training time moves when one or more inputs change (the studies view of the
//! page, headless). Every point is the fastest configuration that fits in memory, with its
//! breakdown, or the reason there is none; `--preset` runs the studies that regenerate the
//! papers' figures, `--shard i/n` one part of a large sweep.

use std::io::Write;

use fmperf_core::format::Document;
use fmperf_core::mode::Mode;
use fmperf_core::presets::{self, Panel, Preset};
use fmperf_core::resolve::sweep_spec::{Shard, SweepSpec};
use fmperf_core::resolve::{ModelRef, SystemRef};
use fmperf_core::sweep::{PointResult, SweepResult, SweepText, export};
use serde_json::Value;

use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};
use crate::inputs::{file_document, stem};
use crate::table::Table;
use crate::threads;

/// Help text of `fmperf sweep`.
pub const HELP: &str = "\
fmperf sweep — how training time moves when inputs change (best configuration per point, either mode)

USAGE: fmperf sweep --model <ID|FILE> --system <ID[,key=value…]|FILE> --axis KEY=VALUES [--axis …]
                    [--strategy 1d,2d,2d-seqp|all] [--gpus N] [--domain K] [--precision P]
                    [--global-batch G | --per-device-batch B] [--fix tp=…,pp=…,dp=…,mbs=…,accum=…]
                    [--mode extended|reference] [--ext KEY=VALUE,…] [--shard i/n] [--format table|csv|json]
                    [--calibration MY-STACK.json] [--price-per-device-hour P]
       fmperf sweep --preset <ID> [--panel <ID>] [--mode reference|extended] [--ext …] [--shard i/n]
                    [--format table|csv|json]
       fmperf sweep --list
       (both sweep forms also take [--threads N], default: every core available)

AXES (KEY=VALUES; values a,b,c or a..b = a, 2a, 4a, … up to b, i.e. powers of two from a power of two):
  gpus            devices                         domain        scale-up domain size [devices] (alias nvlink)
  matrix, vector  FLOP rates [TFLOP/s]            hbm_capacity  [GB]          hbm_bandwidth [GB/s]
  scale_up        NVLink bandwidth per device, one direction [GB/s]
  scale_out       NIC bandwidth per NIC, one direction [GB/s]
                  (system parameters: absolute values, or factors of the system's own: x0.5,x1,x2;
                  an absolute value stands in for one the catalog lacks, e.g. matrix=1000 on
                  cerebras_cs2, labelled in the point's notes)
  seq             sequence length [tokens]        batch         global batch [samples]
  accum           gradient-accumulation steps = micro-batches per iteration G/(dp·mbs): with a fixed
                  global batch they restrict dp·mbs = G/accum; with --per-device-batch B the global
                  batch is B × devices × accum
  precision       fp32, tf32, fp16, bf16, fp8 (the catalog's matrix peak of that precision)
  sparsity        weight sparsity 0 ≤ s < 1: NOT in the reference model (points with s > 0 say so);
                  in extended mode it sets the switch weight_sparsity (effect on wafer-scale parts only)
  system, model   catalog ids                     strategy      1d, 2d, 2d-seqp (one per point)
  tp, tp1, tp2, pp, dp, mbs   restrict the configurations (e.g. a TP × PP map)

--system takes the catalog's mapping choices: ID,domain=K,nics=N,precision=P,vector=TFLOP/s,
scale_up=GB/s,scale_out=GB/s (e.g. amd_mi250x,scale_out=50 for a part whose entry lists no NIC), and
the scale-out fabric (extended mode): fabric=efa|roce|infiniband_ndr|tpu_dcn|…,
fabric_latency_us=µs per network step, fabric_eff=fraction, oversub=r (r:1), rails=yes|no.
Defaults: all strategies, 8 devices, global batch 4096, the system's domain size and precision.

OUTPUT: one line per point in sweep order (the last axis varies fastest). csv: header + rows, full
precision, the last columns `mode` and `switches`; json: JSON Lines (one object per point, with
\"mode\" and, in extended mode, \"switches\": every switch and its value). With --shard i/n (0 ≤ i < n) only the i-th of n
contiguous parts is computed; the CSV header is written by shard 0 only, so the parts' outputs
concatenate (cat part0 part1 …) to the whole sweep's output, in csv and json alike.
--threads N runs the points (of the shard) on N threads, default every core available; the output
is byte-identical and in the same order for any N. csv and json are written as points finish, in order.

--calibration FILE (`fmperf calibrate`; extended mode) prices every point on the calibration's system
as your stack runs it; each point's notes say so (points on another system say they are not calibrated).

METRICS of the points include the whole run's cost on the model's budget: gpu_hours, energy_mwh (the
devices at the catalog's board power) and cost_usd (at the part's example price: not a quote).
--price-per-device-hour P (your price of one device-hour) adds the whole run's cost at P to every
point with a configuration: table columns device-hours, energy [MWh], cost; CSV columns gpu_hours,
energy_mwh, price_per_device_hour, cost_total; JSON a \"cost\" object as `fmperf search` writes.

Presets (`--list`): strong-scaling, hardware, design-space, accelerators; table output adds the
published figures next to fmperf's. Exit 0 (points without a configuration are results, with their
reason); 2 on bad input, naming the flag or axis. --mode/--ext with --preset run its panels in that
mode (the paper presets are reference-mode studies; the accelerator sparsity panel is extended).

";

/// Runs `fmperf sweep`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let value_flags = [
        "model",
        "system",
        "strategy",
        "gpus",
        "domain",
        "precision",
        "global-batch",
        "per-device-batch",
        "fix",
        "axis",
        "shard",
        "format",
        "preset",
        "panel",
        "mode",
        "ext",
        "moe",
        "threads",
        "calibration",
        "price-per-device-hour",
    ];
    let args = Args::parse(raw, &value_flags, &["help", "list"])?.refuse_trailing()?;
    if args.flag("help") {
        write!(out, "{HELP}{}", crate::mode::help())?;
        return Ok(());
    }
    if let Some(p) = args.positional().first() {
        return Err(CmdError::Usage(format!("unexpected argument `{p}`; see --help")));
    }
    if args.flag("list") {
        return list(out);
    }
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Csv])?;
    let shard = match args.value("shard")? {
        Some(s) => Shard::parse(s).map_err(|e| CmdError::Usage(format!("--shard {e}")))?,
        None => Shard::WHOLE,
    };
    let threads = threads::from_args(&args)?;
    if let Some(id) = args.value("preset")? {
        let sweep_flags = ["model", "system", "strategy", "gpus", "domain", "precision", "global-batch"];
        for f in sweep_flags.iter().chain(&["per-device-batch", "fix", "axis", "price-per-device-hour"]) {
            if !args.values(f).is_empty() {
                return Err(CmdError::Usage(format!("--{f} cannot be combined with --preset (the preset sets it)")));
            }
        }
        let preset = presets::find_preset(id).map_err(|e| CmdError::Usage(format!("--preset: {e}")))?;
        let mode = crate::mode::from_args(&args)?;
        return run_preset(preset, args.value("panel")?, mode, (shard, threads), format, out);
    }
    if args.value("panel")?.is_some() {
        return Err(CmdError::Usage("--panel needs --preset".into()));
    }
    let price = crate::run_cost::number_flag(&args, "price-per-device-hour")?;
    let text = SweepText {
        model: args.required("model")?.to_string(),
        system: args.required("system")?.to_string(),
        strategy: args.value("strategy")?.map(str::to_string),
        gpus: args.value("gpus")?.map(str::to_string),
        nvlink: args.value("domain")?.map(str::to_string),
        precision: args.value("precision")?.map(str::to_string),
        global_batch: args.value("global-batch")?.map(str::to_string),
        per_device_batch: args.value("per-device-batch")?.map(str::to_string),
        fix: args.value("fix")?.map(str::to_string),
        // Extended mode is the default (issue 16 §5); presets keep their own mode.
        mode: Some(args.value("mode")?.unwrap_or("extended").to_string()),
        ext: args.value("ext")?.map(str::to_string),
        axes: args.values("axis").iter().map(|s| s.to_string()).collect(),
    };
    let mut model = model_file(&text.model)?;
    if let Some(ModelRef::Inline(m)) = &mut model
        && m.seq_len.is_none()
    {
        // A model file without a training length (a config.json): the `seq` axis gives it.
        let first = text
            .axes
            .iter()
            .filter_map(|a| a.strip_prefix("seq="))
            .find_map(|v| v.split(',').next().and_then(|x| x.trim().parse::<u64>().ok()).filter(|&n| n > 0));
        match first {
            Some(n) => m.seq_len = Some(n),
            None => {
                return Err(CmdError::Usage(format!(
                    "--model {}: the model states no training sequence length; give it as an axis (--axis seq=TOKENS)",
                    text.model
                )));
            }
        }
    }
    let system = system_file(&text.system)?;
    let mut spec = text.to_spec(model, system).map_err(|e| CmdError::Usage(flag_error(&e)))?;
    if let Some(cal) = super::calibrate::read_calibration(&args)? {
        calibration_applies(&spec, &cal)?;
        spec.calibration = Some(cal);
    }
    match (format, price) {
        (OutputFormat::Csv, None) => {
            let mut header = shard.index == 0;
            threads::run_sweep(&spec, shard, threads, |part| {
                write!(out, "{}", export::to_csv(&part.spec.axes, &part.points, std::mem::take(&mut header)))?;
                Ok(())
            })
        }
        (OutputFormat::Csv, Some(price)) => {
            let mut header = shard.index == 0;
            threads::run_sweep(&spec, shard, threads, |part| {
                if std::mem::take(&mut header) {
                    let h = export::csv_header(&part.spec.axes);
                    writeln!(out, "{},{}", h.trim_end(), COST_CSV.join(","))?;
                }
                for p in &part.points {
                    let mut t = Table { header: Vec::new(), rows: vec![Vec::new()] };
                    let cost = point_cost(p, price)?;
                    crate::run_cost::add_optional_columns(&mut t, &[cost.as_ref()], true);
                    writeln!(out, "{},{}", export::csv_row(p).trim_end(), t.rows[0].join(","))?;
                }
                Ok(())
            })
        }
        (OutputFormat::Json, price) => threads::run_sweep(&spec, shard, threads, |part| {
            for p in &part.points {
                let mut v = export::point_json(&part.spec.axes, p);
                if let Some(price) = price {
                    v["cost"] = point_cost(p, price)?.map_or(Value::Null, |c| c.to_json());
                }
                writeln!(out, "{v}")?;
            }
            Ok(())
        }),
        (_, price) => {
            let result = run_whole(&spec, shard, threads)?;
            writeln!(out, "{}", describe(&result.spec))?;
            write!(out, "{}", points_table(&result, price)?)?;
            Ok(())
        }
    }
}

/// The CSV columns `--price-per-device-hour` adds (as `fmperf search --format csv` names them).
const COST_CSV: [&str; 4] = ["gpu_hours", "energy_mwh", "price_per_device_hour", "cost_total"];

/// The whole run's cost of a point's best configuration on the point's budget (the model's) at
/// `price` per device-hour (`None`: the point has no configuration).
fn point_cost(p: &PointResult, price: f64) -> Result<Option<fmperf_core::run_cost::RunCost>, CmdError> {
    let (Some(b), Some(inputs)) = (p.best.as_ref(), p.inputs.as_ref()) else { return Ok(None) };
    let budget = fmperf_core::catalog::TrainingBudget::Samples(inputs.budget_samples);
    crate::run_cost::of_run(
        &inputs.system_id,
        budget,
        inputs.shape.l,
        b.ranked.throughput_samples_per_s,
        inputs.devices,
        Some(price),
    )
    .map(Some)
}

/// A calibration needs extended mode and a point on its system (the sweep's system or a value of
/// its `system` axis).
fn calibration_applies(spec: &SweepSpec, cal: &fmperf_core::calibrate::Calibration) -> Result<(), CmdError> {
    if !spec.mode.kind().takes_switches() {
        return Err(CmdError::Usage(
            "--calibration changes extended mode's pricing; --mode reference is the published model: drop one".into(),
        ));
    }
    let base = match &spec.base.system {
        SystemRef::Catalog(id) => id.clone(),
        SystemRef::Inline(s) => s.id.clone(),
    };
    let on_axis = spec.axes.iter().filter(|a| a.key == fmperf_core::resolve::sweep_axis::AxisKey::System).any(|a| {
        a.values.iter().any(|v| matches!(v, fmperf_core::resolve::sweep_axis::AxisValue::Name(id) if *id == cal.system))
    });
    if base != cal.system && !on_axis {
        return Err(CmdError::Usage(format!(
            "--calibration: the calibration is of {}, and no point of the sweep is on it (--system {base}); give \
             --system {} or calibrate on a run of {base}",
            cal.system, cal.system
        )));
    }
    Ok(())
}

/// The sweep of `shard` on `threads` threads as one result (for tables and comparisons).
fn run_whole(spec: &SweepSpec, shard: Shard, threads: usize) -> Result<SweepResult, CmdError> {
    let mut parts = Vec::new();
    threads::run_sweep(spec, shard, threads, |part| {
        parts.push(part);
        Ok(())
    })?;
    threads::merge(parts).ok_or_else(|| CmdError::Usage("the sweep has no part to run".into()))
}

/// The message of a spec error, naming the flag (`--axis gpus=…`, `--fix`, `--global-batch`).
fn flag_error(e: &fmperf_core::Error) -> String {
    match e.path() {
        Some(f) if f.is_in("axis") => format!("--axis: {e}"),
        // The spec's `nvlink` is the URL's old name of `--domain`.
        Some(_) if e.is_at("nvlink") => {
            format!("--domain: {}", e.to_string().replacen("nvlink = ", "domain = ", 1))
        }
        Some(f) => format!("--{}: {e}", f.group()),
        None => e.to_string(),
    }
}

/// A model file (`None`: not a file, the value is a catalog id).
fn model_file(arg: &str) -> Result<Option<ModelRef>, CmdError> {
    Ok(match file_document("--model", arg, "model")? {
        Some(Document::Model(mut m)) => {
            name_after_file(&mut m.id, arg);
            Some(ModelRef::Inline(Box::new(m)))
        }
        _ => None,
    })
}

/// A system file (`None`: not a file, the value is a catalog id or spec).
fn system_file(arg: &str) -> Result<Option<SystemRef>, CmdError> {
    Ok(match file_document("--system", arg, "system")? {
        Some(Document::System(mut s)) => {
            name_after_file(&mut s.id, arg);
            Some(SystemRef::Inline(Box::new(s)))
        }
        _ => None,
    })
}

/// Documents imported from the reference's formats are called `custom`: use the file's stem.
fn name_after_file(id: &mut String, arg: &str) {
    if id == "custom" {
        *id = stem(arg);
    }
}

/// Two lines saying what was swept and in which mode.
fn describe(spec: &SweepSpec) -> String {
    let t = SweepText::from_spec(spec);
    let calibrated =
        spec.calibration.as_ref().map_or(String::new(), |c| format!("\n{}", super::calibrate::calibration_line(c)));
    format!(
        "sweep: {} points; {}\nmode: {}{calibrated}",
        spec.point_count(),
        t.to_cli().trim_start_matches("fmperf sweep "),
        spec.mode.label()
    )
}

/// The human table: axis values, status, best strategy, days, throughput, time, memory, the
/// configuration, and with a `price` per device-hour the whole run's cost; reasons of points
/// without a configuration under it.
fn points_table(r: &SweepResult, price: Option<f64>) -> Result<String, CmdError> {
    let mut header: Vec<String> = r.spec.axes.iter().map(|a| a.key.name().to_string()).collect();
    header.extend(
        [
            "status",
            "strategy",
            "days",
            "throughput [samples/s]",
            "iteration [s]",
            "mem [GB]",
            "dp",
            "tp1",
            "tp2",
            "pp",
            "mbs",
        ]
        .map(str::to_string),
    );
    let mut t = Table { header, rows: Vec::new() };
    let mut reasons = Vec::new();
    for p in &r.points {
        let mut row: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
        row.push(p.status.as_str().into());
        match &p.best {
            Some(b) => {
                let c = &b.ranked.candidate;
                row.extend([
                    b.strategy.as_str().to_string(),
                    format!("{:.2}", b.days),
                    format!("{:.3}", b.ranked.throughput_samples_per_s),
                    format!("{:.4}", b.ranked.time_per_iteration_s),
                    format!("{:.1}", b.ranked.mem_gb),
                ]);
                row.extend([c.dp, c.tp1, c.tp2, c.pp, c.mbs].map(|x| x.to_string()));
            }
            None => {
                row.extend(std::iter::repeat_n("-".to_string(), 10));
                reasons.push(format!("point {}: {}", p.index, p.reason.as_deref().unwrap_or("")));
            }
        }
        t.push(row);
    }
    if let Some(price) = price {
        let costs = r.points.iter().map(|p| point_cost(p, price)).collect::<Result<Vec<_>, _>>()?;
        crate::run_cost::add_optional_columns(&mut t, &costs.iter().map(Option::as_ref).collect::<Vec<_>>(), false);
    }
    let mut s = t.render();
    for r in reasons {
        s.push_str(&r);
        s.push('\n');
    }
    if let Some(c) = r.points.iter().find_map(|p| point_cost(p, price?).ok().flatten()) {
        s.push_str(&format!("cost of the whole run: {}\n", crate::run_cost::basis(&c)));
    }
    Ok(s)
}

/// Runs a preset (all panels, or one; each in `mode` when given, else in its own), writing the
/// points and, in table form, the comparisons.
fn run_preset(
    preset: &Preset,
    panel: Option<&str>,
    mode: Option<Mode>,
    (shard, threads): (Shard, usize),
    format: OutputFormat,
    out: &mut dyn Write,
) -> CmdResult {
    let panels: Vec<&Panel> = match panel {
        Some(id) => vec![preset.panel(id).ok_or_else(|| {
            let ids: Vec<&str> = preset.panels.iter().map(|p| p.id.as_str()).collect();
            CmdError::Usage(format!("--panel {id}: not a panel of {}; panels: {}", preset.id, ids.join(", ")))
        })?],
        None => preset.panels.iter().collect(),
    };
    if format == OutputFormat::Csv && panels.len() > 1 {
        let ids: Vec<&str> = panels.iter().map(|p| p.id.as_str()).collect();
        return Err(CmdError::Usage(format!(
            "--format csv needs one --panel (their columns differ); panels of {}: {}",
            preset.id,
            ids.join(", ")
        )));
    }
    if format == OutputFormat::Table {
        writeln!(out, "{}\n{}\n", preset.title, preset.summary)?;
    }
    for panel in panels {
        let mut spec = panel.spec.clone();
        if let Some(m) = mode {
            spec.mode = m;
        }
        match format {
            OutputFormat::Csv => {
                let mut header = shard.index == 0;
                threads::run_sweep(&spec, shard, threads, |part| {
                    write!(out, "{}", export::to_csv(&part.spec.axes, &part.points, std::mem::take(&mut header)))?;
                    Ok(())
                })?
            }
            OutputFormat::Json => threads::run_sweep(&spec, shard, threads, |part| {
                for p in &part.points {
                    writeln!(out, "{}", tagged(preset, panel, &part, p))?;
                }
                Ok(())
            })?,
            OutputFormat::Table => {
                let result = run_whole(&spec, shard, threads)?;
                writeln!(out, "== {} ({})\n{}", panel.title, panel.id, panel.description)?;
                writeln!(out, "{}", describe(&result.spec))?;
                write!(out, "{}", points_table(&result, None)?)?;
                if !panel.comparisons.is_empty() && shard == Shard::WHOLE {
                    writeln!(out)?;
                    write!(out, "{}", comparison_table(panel, &result))?;
                }
                for n in &panel.notes {
                    writeln!(out, "note: {n}")?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

/// A point's JSON object with the preset and panel ids.
fn tagged(preset: &Preset, panel: &Panel, r: &SweepResult, p: &PointResult) -> Value {
    let mut v = export::point_json(&r.spec.axes, p);
    if let Some(o) = v.as_object_mut() {
        o.insert("preset".into(), Value::from(preset.id.clone()));
        o.insert("panel".into(), Value::from(panel.id.clone()));
    }
    v
}

/// Published figures next to fmperf's, with the difference.
fn comparison_table(panel: &Panel, r: &SweepResult) -> String {
    let mut t = Table::new(&["compared", "published", "fmperf", "difference", "reproduced", "source"]);
    for c in &panel.comparisons {
        let o = c.evaluate(r);
        let d = c.def.decimals as usize;
        let show = |v: Option<f64>, s: Option<String>| match (v, s) {
            (Some(v), Some(s)) => format!("{v:.d$} ({s})"),
            (Some(v), None) => format!("{v:.d$}"),
            (None, _) => "none".to_string(),
        };
        let published = show(c.def.value, c.def.strategy.clone());
        let fmperf = match o.predicted {
            Some(v) => show(Some(v), o.predicted_strategy.filter(|_| c.strategy.is_some()).map(|s| s.to_string())),
            None => format!("none: {}", o.why_none.clone().unwrap_or_default()),
        };
        let diff = match o.difference(c.def.value) {
            Some((abs, rel)) if rel.is_finite() => format!("{abs:+.d$} ({:+.1} %)", rel * 100.0),
            Some((abs, _)) => format!("{abs:+.d$}"),
            None => "-".into(),
        };
        let reproduced = match (c.must_reproduce(r), c.def.reproduce) {
            (true, _) if c.reproduced(&o) => "yes",
            (true, _) => "NO",
            (false, true) => "n/a (extended mode)",
            (false, false) => "n/a (measured)",
        };
        t.push(vec![c.def.label.clone(), published, fmperf, diff, reproduced.into(), c.def.source.clone()]);
    }
    t.render()
}

/// `--list`: the presets and their panels.
fn list(out: &mut dyn Write) -> CmdResult {
    let mut t = Table::new(&["preset", "panel", "points", "title"]);
    for p in presets::presets() {
        for panel in &p.panels {
            t.push(vec![p.id.clone(), panel.id.clone(), panel.spec.point_count().to_string(), panel.title.clone()]);
        }
    }
    write!(out, "{}", t.render())?;
    Ok(())
}
