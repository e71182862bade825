//! `fmperf validate`: predicted against measured for every row of a file of measured training runs
//! (the schema of `measured-training-runs.json`), in reference or extended mode; `--fit` refits the
//! global efficiencies of extended mode and reports the leave-one-source-out error.

use std::io::Write;

use fmperf_core::extended::efficiency::Efficiency;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{self, Report, parse_measured_runs};

use super::{CmdError, CmdResult};
use crate::args::OutputFormat;
use crate::table::Table;

/// Help text of `fmperf validate`.
pub const HELP: &str = "\
fmperf validate — the model against measured runs (time and memory)

USAGE: fmperf validate --data FILE.json|builtin|builtin-memory|builtin-moe|builtin-layouts
                       [--mode reference|extended] [--format table|json|csv] [--fit]

Reads a file in the schema of measured-training-runs.json or measured-memory-runs.json (`builtin`:
the 108 training runs fmperf ships; `builtin-memory`: the 109 peak-memory runs), or a file of
measured layout sweeps in the schema of measured-layout-sweeps.json (an object with `groups`: runs
of one job that differ only in layout; `builtin-layouts`: the 15 groups, 63 runs fmperf ships),
each run read as a row with its group's model, part, batch and measured figure. Each row's words
are read by meaning: which figure was measured (step time, tokens/s per device or in all,
samples/s, TFLOP/s, MFU, HFU; model or hardware FLOPs; the stated peak), recomputation (Megatron,
PyTorch, DeepSpeed, MaxText names), ZeRO/FSDP/HSDP, precision, the accelerator named in words; how
each was read is in the row's `assumptions`. A row is skipped only when a number it needs is absent,
and the reason names it.

Fields may carry other tools' names (Hugging Face `num_hidden_layers`, Megatron-LM
`tensor_model_parallel_size`, `micro_batch_size`, `num_gpus`, `step_time_ms`, …), rows may be flat,
and `source` may be a title or an address.

Ranking: rows of one job that differ in layout (a sweep's group, or one source's rows sharing
model, part, precision, device count and global batch) are ranked by predicted throughput and
compared with the measured order: Kendall's tau-b, and the top-1 regret = measured throughput of
the measured-best layout / that of the layout fmperf ranks first (among those it says fit) − 1;
runs that ran but that fmperf calls \"does not fit\" are listed. Per group, per source and overall.

Every row is evaluated at its exact configuration and compared in its own figure:
error = predicted / measured - 1 (a fraction: 0.05 = 5 % above the measured figure: faster for a
throughput, slower for a step time). The headline is the
leave-one-source-out error (each row predicted with constants fitted on the shipped runs and the
file's other sources, without its source or a shipped restatement of the same run); the
in-sample error is beside it. Rows with a memory figure or an out-of-memory outcome are compared
with the prediction of the kind they measured (peak allocated, peak reserved, nvidia-smi) and get a
verdict: fits yes / tight (within the error band of the capacity) / no. Their headline error is
leave-one-source-out too (the allocator fragmentation, the one constant fitted on memory runs,
refitted without the row's source), the in-sample error beside it; the band is the 80th
percentile of the held-out |error| on the shipped memory runs.

Mixture-of-Experts runs (measured-moe-runs.json, `builtin-moe`: the 53 MoE runs) are evaluated in
extended mode with their expert parallelism, routing and dispatcher, compared in the row's FLOP
convention (Megatron or MaxText model TFLOP/s per device, else tokens/s per device) and memory where
measured, with the leave-one-source-out error of the fitted MoE constant beside the in-sample error.
A row is MoE when it states more than one routed expert, in its model group or flat, under any name
people use (`num_experts`, `num_local_experts`, `n_routed_experts`, `moe_num_experts`, …; top-k as
`top_k`, `num_experts_per_tok`, `moe_router_topk`; expert width as `moe_ffn_hidden`,
`moe_intermediate_size`, `moe_ffn_hidden_size`; `expert_model_parallel_size` for ep); `null` or 1
expert is dense. A file mixing dense and MoE rows is split by row and each part is evaluated by its
own validator: the dense report first, then the MoE report (with --format json: two JSON
documents, one per line; --fit refits the dense part only).

  --mode     reference (the published model) or extended (default)
  --format   table (default), csv, or json: {\"rows\": [{\"id\", \"metric\", \"metric_structured\",
             \"predicted\", \"measured\", \"error\", \"error_loso\", \"error_one_shot\", \"skipped\",
             \"reason\", \"assumptions\", \"memory\": {\"kind\", \"predicted_gb\", \"measured_gb\", \"capacity_gb\",
             \"fits\", \"error\", \"error_loso\", \"oom\"}, ...}], \"summary\": {\"evaluated\",
             \"skipped\", \"mape\", \"median_abs_error\", ..., \"per_source\": [...], \"memory\":
             {\"mape\" (held out), \"in_sample\", \"band\", \"verdicts\", \"per_source\", ...}},
             \"leave_one_source_out\": {\"leave_one_source_out\", \"in_sample\", \"per_source\"},
             \"ranking\": {\"groups\": [{\"group\", \"source\", \"ranked\", \"tau\", \"regret\",
             \"measured_best\", \"predicted_best\", \"pick_measured_rank\", \"ran_called_no\",
             \"pick_ran_out_of_memory\", \"runs\"}], \"per_source\": [...], \"overall\": {\"groups\",
             \"tau_mean\", \"regret_median\", \"regret_mean\", \"regret_max\", \"top1_hits\",
             \"ran_called_no\"}},
             \"one_shot\": {\"mape\", …, \"uncalibrated\", \"per_source\": [{\"source\", \"one_shot\",
             \"uncalibrated\", \"anchors\"}]}} (extended mode; error_one_shot: the row predicted after
             calibrating the stack on one other run of its source and system, `fmperf calibrate`)
             (GB = 1e9 bytes)
  --fit      refit extended mode's efficiencies on the file and report the leave-one-source-out
             error per held-out source
";

/// Runs `fmperf validate`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let args = crate::args::Args::parse(raw, &["data", "mode", "format"], &["help", "fit"])?.refuse_trailing()?;
    if args.flag("help") {
        write!(out, "{HELP}")?;
        return Ok(());
    }
    if let Some(p) = args.positional().first() {
        return Err(CmdError::Usage(format!("unexpected argument `{p}`; see --help")));
    }
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Csv])?;
    let mode = match args.value("mode")? {
        None => ModeKind::REALISTIC,
        Some(m) => {
            ModeKind::parse(m).ok_or_else(|| CmdError::Usage(format!("--mode {m}: must be reference or extended")))?
        }
    };
    let data = args.required("data")?;
    let text = match data {
        "builtin" => validate::MEASURED_RUNS_JSON.to_string(),
        "builtin-memory" => validate::MEASURED_MEMORY_RUNS_JSON.to_string(),
        "builtin-moe" => fmperf_core::validate::moe_runs::MOE_RUNS_JSON.to_string(),
        "builtin-layouts" => validate::layout_sweeps::shipped_sweep_rows_json(),
        path => crate::files::read_text("--data", path, crate::files::MAX_DATA_BYTES)?,
    };
    // A file of layout sweeps (`groups`): its runs as rows, each with its group.
    let text = if validate::layout_sweeps::is_layout_sweeps(&text) {
        validate::layout_sweeps::sweep_rows_json(&text).map_err(|e| CmdError::Usage(format!("--data {data}: {e}")))?
    } else {
        text
    };
    // Mixture-of-Experts rows (more than one routed expert) have a validation of their own; a
    // file of both kinds is reported in two parts, dense first.
    let (dense, moe) = fmperf_core::validate::moe_row_fields::split_by_kind(&text);
    if let Some(text) = dense {
        run_dense(&text, data, &args, mode, format, out)?;
    }
    match moe {
        Some(text) => super::validate_moe::run(&text, format, out),
        None => Ok(()),
    }
}

/// The dense validation of `text` (the rows of `--data` that are not MoE).
fn run_dense(
    text: &str,
    data: &str,
    args: &crate::args::Args,
    mode: ModeKind,
    format: OutputFormat,
    out: &mut dyn Write,
) -> CmdResult {
    let file = parse_measured_runs(text).map_err(|e| CmdError::Usage(format!("--data {data}: {e}")))?;
    if args.flag("fit") {
        let fit = validate::fit_report(&file);
        match format {
            OutputFormat::Json => writeln!(out, "{}", serde_json::to_string(&fit).unwrap_or_default())?,
            _ => write!(out, "{}", fit_table(&fit))?,
        }
        return Ok(());
    }
    let report = validate::compare::validate_headline_from(&file, mode, holdout_with_progress(&file, mode));
    let ranking = validate::ranking::ranking(&file, &report);
    match format {
        OutputFormat::Json => {
            let mut doc = serde_json::to_value(&report).unwrap_or_default();
            if let Some(o) = doc.as_object_mut() {
                o.insert("ranking".into(), serde_json::to_value(&ranking).unwrap_or_default());
            }
            writeln!(out, "{doc}")?
        }
        OutputFormat::Csv => write!(out, "{}", validate::csv(&[&report]))?,
        _ => {
            write!(out, "{}", report_table(&report))?;
            write!(out, "{}", super::validate_ranking::ranking_table(&ranking))?
        }
    }
    Ok(())
}

/// Leave-one-source-out ([`validate::holdout`]), one fit per source and one on all rows, run side
/// by side: when it runs longer than a few seconds, how far it is and about how long is left go to
/// stderr (stdout stays the report).
fn holdout_with_progress(file: &validate::MeasuredFile, mode: ModeKind) -> validate::holdout::Holdout {
    use std::time::{Duration, Instant};
    let mut job = validate::holdout::HoldoutJob::new(file, mode);
    let start = Instant::now();
    let mut said = start;
    while !job.step() {
        let now = Instant::now();
        if now - start >= Duration::from_secs(3) && now - said >= Duration::from_secs(3) {
            said = now;
            let (done, all) = job.progress();
            // The first fit at a size pair prices its points for all the others: the time left is
            // estimated from the size pairs done.
            let grid = validate::fit::GRID_POINTS as u64;
            let pairs = (all / grid).max(1);
            let pairs_done = done / pairs;
            let left = if pairs_done == 0 {
                String::new()
            } else {
                let s = (now - start).as_secs_f64() / pairs_done as f64 * (grid - pairs_done.min(grid)) as f64;
                format!(", ~{s:.0} s left")
            };
            eprintln!(
                "fmperf: validate: leave-one-source-out, {pairs} fits side by side: size pair {} of {grid} of the grid{left}",
                (pairs_done + 1).min(grid)
            );
        }
    }
    job.finish()
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{:+.1}", v * 100.0))
}

fn abs_pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{:.1}", v * 100.0))
}

fn number(x: Option<f64>) -> String {
    match x {
        None => "-".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn gb(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.1}"))
}

fn headline(r: &Report) -> String {
    let s = &r.summary.overall;
    let mut out = String::new();
    match &r.leave_one_source_out {
        Some(h) if h.fitted => out.push_str(&format!(
            "Time, leave-one-source-out (headline): mean |error| {} %, median |error| {} %, median error {} % over {} \
             rows ({} skipped); in-sample beside it: mean |error| {} %, median |error| {} %\n",
            abs_pct(h.leave_one_source_out.mape),
            abs_pct(h.leave_one_source_out.median_abs_error),
            pct(h.leave_one_source_out.median_error),
            h.leave_one_source_out.evaluated,
            s.skipped,
            abs_pct(h.in_sample.mape),
            abs_pct(h.in_sample.median_abs_error),
        )),
        _ => out.push_str(&format!(
            "Time: mean |error| {} %, median |error| {} % over {} rows ({} skipped); nothing is fitted in this mode, \
             so leave-one-source-out = in-sample\n",
            abs_pct(s.mape),
            abs_pct(s.median_abs_error),
            s.evaluated,
            s.skipped
        )),
    }
    if s.evaluated + s.skipped == 0 {
        out.clear();
    }
    if let Some(o) = &r.one_shot {
        out.push_str(&format!(
            "Time, one-shot (calibrated on one other run of the same source and system, from constants fitted without the source): mean |error| {} % over {} rows, against {} % uncalibrated on the same rows\n",
            abs_pct(o.overall.mape),
            o.overall.evaluated,
            abs_pct(o.uncalibrated.mape)
        ));
    }
    if r.summary.no_time_figure > 0 {
        out.push_str(&format!("{} rows state no time figure (memory rows)\n", r.summary.no_time_figure));
    }
    let m = &r.summary.memory;
    if m.rows > 0 {
        let v = &m.verdicts;
        out.push_str(&format!(
            "Memory: {} rows with a figure or outcome, {} scored: mean |error| {} % leave-one-source-out (in-sample {} \
             %), median error {} %; fits yes {} / tight {} / no {} (band ±{:.0} %); out-of-memory runs {} ({} predicted \
             yes), runs that ran predicted no: {}\n",
            m.rows,
            m.stats.evaluated,
            abs_pct(m.stats.mape),
            abs_pct(m.in_sample.mape),
            pct(m.stats.median_error),
            v.yes,
            v.tight,
            v.no,
            m.band * 100.0,
            v.oom_runs,
            v.oom_predicted_yes,
            v.ran_predicted_no
        ));
    }
    out
}

fn report_table(r: &Report) -> String {
    let mut t = Table::new(&[
        "id",
        "metric",
        "measured",
        "predicted",
        "error [%]",
        "LOSO error [%]",
        "memory kind",
        "measured [GB]",
        "predicted [GB]",
        "capacity [GB]",
        "fits",
        "skipped: reason",
    ]);
    for row in &r.rows {
        let m = row.memory.as_ref();
        t.push(vec![
            row.id.clone(),
            row.metric.clone().unwrap_or_else(|| "-".into()),
            number(row.measured),
            number(row.predicted),
            pct(row.error),
            pct(row.error_loso),
            m.map_or("-".into(), |m| m.kind.to_string()),
            gb(m.and_then(|m| m.measured_gb)),
            gb(m.and_then(|m| m.predicted_gb)),
            gb(m.and_then(|m| m.capacity_gb)),
            m.and_then(|m| m.fits).map_or("-".into(), |f| f.as_str().to_string()),
            row.reason.clone().unwrap_or_default(),
        ]);
    }
    let mut s = Table::new(&[
        "source",
        "evaluated",
        "skipped",
        "LOSO mean |error| [%]",
        "LOSO median error [%]",
        "in-sample mean |error| [%]",
        "memory rows",
        "memory LOSO mean |error| [%]",
        "memory LOSO median error [%]",
        "fits yes/tight/no",
    ]);
    let holdout = r.leave_one_source_out.as_ref();
    let mut sources = validate::compare::sources_of(&r.rows);
    sources.retain(|x| !x.is_empty());
    for src in &sources {
        let time = r.summary.per_source.iter().find(|p| &p.source == src);
        let held = holdout.and_then(|h| h.per_source.iter().find(|p| &p.source == src));
        let mem = r.summary.memory.per_source.iter().find(|p| &p.source == src);
        let loso = held.map(|h| &h.leave_one_source_out).or(time.map(|t| &t.stats));
        s.push(vec![
            src.clone(),
            time.map_or("-".into(), |t| t.stats.evaluated.to_string()),
            time.map_or("-".into(), |t| t.stats.skipped.to_string()),
            abs_pct(loso.and_then(|l| l.mape)),
            pct(loso.and_then(|l| l.median_error)),
            abs_pct(time.and_then(|t| t.stats.mape)),
            mem.map_or("-".into(), |m| (m.stats.evaluated + m.stats.skipped).to_string()),
            abs_pct(mem.and_then(|m| m.stats.mape)),
            pct(mem.and_then(|m| m.stats.median_error)),
            mem.map_or("-".into(), |m| format!("{}/{}/{}", m.verdicts.yes, m.verdicts.tight, m.verdicts.no)),
        ]);
    }
    let all = &r.summary.overall;
    let mem = &r.summary.memory;
    let loso = holdout.map(|h| &h.leave_one_source_out).unwrap_or(all);
    s.push(vec![
        "all sources".to_string(),
        all.evaluated.to_string(),
        all.skipped.to_string(),
        abs_pct(loso.mape),
        pct(loso.median_error),
        abs_pct(all.mape),
        mem.rows.to_string(),
        abs_pct(mem.stats.mape),
        pct(mem.stats.median_error),
        format!("{}/{}/{}", mem.verdicts.yes, mem.verdicts.tight, mem.verdicts.no),
    ]);
    let eff = r.efficiency;
    let mode = r.mode.with_constants(&eff);
    format!(
        "{mode}; error = predicted / measured − 1 (positive: predicted above measured: faster for throughput, TFLOP/s and MFU, slower for a step time; more memory)\n{}\n{}\n{}",
        headline(r),
        t.render(),
        s.render()
    )
}

fn fit_table(f: &validate::FitReport) -> String {
    let e = |x: Efficiency| format!("{:.3} / {:.3}", x.matmul, x.attention);
    let mut t =
        Table::new(&["held-out source", "η / η_att fitted without it", "rows", "mean |error| [%]", "median error [%]"]);
    for h in &f.per_source {
        t.push(vec![
            h.source.clone(),
            e(h.efficiency),
            h.stats.evaluated.to_string(),
            abs_pct(h.stats.mape),
            pct(h.stats.median_error),
        ]);
    }
    format!(
        "fitted on all rows: η / η_att = {} (shipped: {})\nin-sample: mean |error| {} %, median |error| {} % over {} rows\n\
         leave-one-source-out: mean |error| {} %, median |error| {} %\n\n{}",
        e(f.efficiency),
        e(Efficiency::FITTED),
        abs_pct(f.in_sample.mape),
        abs_pct(f.in_sample.median_abs_error),
        f.in_sample.evaluated,
        abs_pct(f.leave_one_source_out.mape),
        abs_pct(f.leave_one_source_out.median_abs_error),
        t.render()
    )
}
