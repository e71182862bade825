//! `fmperf catalog models|systems`: the model and system catalogs as tables (units in the headers,
//! a source column) or as JSON documents in the versioned format.

use std::io::Write;

use fmperf_core::catalog::{self, CatalogModel, CatalogSystem, MappingOptions, default_precision};
use fmperf_core::extended::{Hardware, Workload};
use fmperf_core::format::{self, Document};
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::schema::emit::J;

use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};
use crate::table::Table;

/// Help text of `fmperf catalog`.
pub const HELP: &str = "\
fmperf catalog — the catalogs of models and systems

USAGE: fmperf catalog models|systems [--format table|json|csv]

models   every catalog model: shape (sequence, width, heads, key/value heads, blocks, MLP width and kind),
         vocabulary, stated parameters, training budget, whether reference mode represents it exactly,
         whether extended mode runs it, and its source. `?` = unknown (the source does not state it).
systems  every catalog system: per-precision dense peaks, memory, scale-up (one direction) and its
         domain, scale-out per device, the measured matmul ceiling, the architecture class, whether
         extended mode runs it as it ships (at its default precision) and with how many estimated
         figure groups (`field_sources` marked `estimate`), source.
         The ref-* entries are the reference's system files (names A100, H200, B200, B200-next).

JSON output is a list of documents in fmperf's versioned format (each one valid input).
Details of one entry: `fmperf show <id>`.
";

/// Runs `fmperf catalog`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let args = Args::parse(raw, &["format"], &["help"])?.refuse_trailing()?;
    if args.flag("help") {
        write!(out, "{HELP}")?;
        return Ok(());
    }
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Csv])?;
    let what = one_positional(&args, "catalog", "`models` or `systems`")?;
    let (docs, table) = match what {
        "models" => (
            catalog::models().iter().map(|m| Document::Model(m.clone())).collect::<Vec<_>>(),
            models_table(catalog::models()),
        ),
        "systems" => (
            catalog::systems().iter().map(|s| Document::System(s.clone())).collect::<Vec<_>>(),
            systems_table(catalog::systems()),
        ),
        other => {
            return Err(CmdError::Usage(format!("unknown catalog `{other}`: must be `models` or `systems`")));
        }
    };
    match format {
        OutputFormat::Json => {
            let list = J::Arr(docs.iter().map(format::to_tree).collect());
            write!(out, "{}", J::obj().put(what, list).render())?;
        }
        OutputFormat::Csv => write!(out, "{}", table.to_csv())?,
        OutputFormat::Table => write!(out, "{}", table.render())?,
    }
    Ok(())
}

/// The single positional argument of `command` (described as `what` when missing).
pub fn one_positional<'a>(args: &'a Args, command: &str, what: &str) -> Result<&'a str, CmdError> {
    match args.positional() {
        [one] => Ok(one.as_str()),
        [] => Err(CmdError::Usage(format!("{command} needs {what}; see `fmperf {command} --help`"))),
        [_, extra, ..] => Err(CmdError::Usage(format!("unexpected argument `{extra}`; see `fmperf {command} --help`"))),
    }
}

/// `?` for unknown, else the value.
pub fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "?".to_string(), |x| x.to_string())
}

/// A number for a table: plain, or in exponent form when very small or large.
pub fn num(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e9) { format!("{x:e}") } else { format!("{x}") }
}

/// `?` for unknown, else [`num`].
pub fn opt_num(v: Option<f64>) -> String {
    v.map_or_else(|| "?".to_string(), num)
}

/// The first source, cut before its first comma or parenthesis (author and year, or document name).
pub fn short_source(sources: &[String]) -> String {
    let first = sources.first().map(String::as_str).unwrap_or("?");
    let end = [first.find(','), first.find(" (")].into_iter().flatten().min().unwrap_or(first.len());
    let cut = &first[..end];
    let mut s: String = cut.chars().take(48).collect();
    if sources.len() > 1 {
        s.push_str(&format!(" (+{})", sources.len() - 1));
    }
    s
}

/// Whether extended mode runs a model: `yes`, or `no: <field>` (the first missing dimension).
fn extended_model_status(m: &CatalogModel) -> String {
    match Workload::from_catalog(m) {
        Ok(_) => "yes".to_string(),
        Err(e) => format!("no: {}", e.field().unwrap_or("shape")),
    }
}

/// Whether extended mode runs a system as it ships, at its default precision: `yes` (with the
/// number of estimated figure groups, if any), `preset`, or `no: <field>` (the missing figure).
fn extended_system_status(s: &CatalogSystem) -> String {
    if s.preset.is_some() {
        return "yes (reference file)".to_string();
    }
    let hw = default_precision(s, None).and_then(|p| Hardware::from_catalog(s, p, true, &MappingOptions::default()));
    match hw {
        Ok(_) => match s.field_sources.estimates().count() {
            0 => "yes".to_string(),
            n => format!("yes ({n} est.)"),
        },
        Err(e) => format!("no: {}", e.field().unwrap_or("system")),
    }
}

/// How reference mode represents a model: `exact`, `approx.` (runs, but loses GQA/SwiGLU) or
/// `no` (unknown dimensions).
pub fn reference_status(m: &CatalogModel) -> &'static str {
    if m.reference_compatible() {
        "exact"
    } else if m.to_shape().is_ok() {
        "approx."
    } else {
        "no"
    }
}

fn models_table(models: &[CatalogModel]) -> Table {
    // One column per mode, in `ModeKind::ALL`'s order (the published model first).
    let [reference, extended] = ModeKind::ALL.map(ModeKind::label);
    let mut t = Table::new(&[
        "id",
        "family",
        "seq [tokens]",
        "hidden",
        "heads",
        "kv heads",
        "layers",
        "ffn hidden",
        "mlp",
        "vocab [tokens]",
        "params [B]",
        "budget",
        reference,
        extended,
        "source",
    ]);
    for m in models {
        t.push(vec![
            m.id.clone(),
            m.family.clone(),
            opt(m.seq_len),
            opt(m.hidden),
            opt(m.heads),
            opt(m.kv_heads),
            opt(m.layers),
            opt(m.ffn_hidden),
            m.mlp.as_str().to_string(),
            opt(m.vocab),
            opt_num(m.params_b),
            m.training_budget.describe(),
            reference_status(m).to_string(),
            extended_model_status(m),
            short_source(&m.sources),
        ]);
    }
    t
}

fn systems_table(systems: &[CatalogSystem]) -> Table {
    // Extended mode's column (whether it runs the system as it ships), named as the models table does.
    let [_, extended] = ModeKind::ALL.map(ModeKind::label);
    let mut t = Table::new(&[
        "id",
        "arch",
        "BF16 [TFLOP/s]",
        "FP16 [TFLOP/s]",
        "FP8 [TFLOP/s]",
        "vector 16-bit [TFLOP/s]",
        "mem [GB]",
        "mem bw [GB/s]",
        "scale-up [GB/s, 1 dir]",
        "domain [devices]",
        "scale-out [GB/s/device]",
        "MAMF BF16 [TFLOP/s]",
        extended,
        "source",
    ]);
    for s in systems {
        let p = &s.peak_tflops;
        t.push(vec![
            s.id.clone(),
            s.architecture.as_str().to_string(),
            opt_num(p.bf16),
            opt_num(p.fp16),
            opt_num(p.fp8),
            opt_num(p.fp16_vector),
            opt_num(s.memory_gb),
            opt_num(s.memory_bw_gbps),
            opt_num(s.scale_up.bw_per_device_unidir_gbps),
            s.scale_up.domain_size.to_string(),
            opt_num(s.scale_out.nic_gbps_per_device),
            opt_num(s.measured_matmul_tflops.as_ref().and_then(|m| m.bf16)),
            extended_system_status(s),
            short_source(&s.sources),
        ]);
    }
    t
}
