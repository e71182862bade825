//! `fmperf models`: the reference's built-in models with their parameter count and training work
//! per sample (spec §8, `model_summary`).

use std::io::Write;

use fmperf_core::ModelShape;
use fmperf_core::reference::model_summary;

use super::CmdResult;
use crate::args::OutputFormat;
use crate::table::Table;

/// Help text of `fmperf models`.
pub const HELP: &str = "\
fmperf models — the reference's models (gpt3, gpt3_1T, vit_era5)

USAGE: fmperf models [--format table|json|csv]

Columns: sequence length l [tokens], width e, heads h, blocks depth, MLP width f, parameters [B]
(Σ weights · depth / element size) and training work per sample [PFLOP] (forward + backward with
the attention recomputation, micro-batch 1, as the reference's notebook prints it on H200).
";

/// Runs `fmperf models`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let Some(args) = super::parse_flags(raw, &["format"], HELP, out)? else {
        return Ok(());
    };
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json, OutputFormat::Csv])?;
    let mut rows = Vec::new();
    for (name, m) in ModelShape::REFERENCE {
        let s = model_summary(&m)?;
        rows.push((name, m, s.parameters / 1e9, s.flops_per_sample_tflop / 1e3));
    }
    match format {
        OutputFormat::Json => {
            let list: Vec<serde_json::Value> = rows
                .iter()
                .map(|(name, m, params_b, pflop)| {
                    serde_json::json!({
                        "name": name, "l": m.l, "e": m.e, "h": m.h, "depth": m.depth, "f": m.f,
                        "parameters_b": params_b, "train_flops_per_sample_pflop": pflop,
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::json!({ "models": list }))?;
        }
        OutputFormat::Table | OutputFormat::Csv => {
            let mut t = Table::new(&[
                "model",
                "l [tokens]",
                "e",
                "h",
                "depth [blocks]",
                "f",
                "params [B]",
                "train FLOPs/sample [PFLOP]",
            ]);
            for (name, m, params_b, pflop) in &rows {
                t.push(vec![
                    name.to_string(),
                    m.l.to_string(),
                    m.e.to_string(),
                    m.h.to_string(),
                    m.depth.to_string(),
                    m.f.to_string(),
                    format!("{params_b:.2}"),
                    format!("{pflop:.2}"),
                ]);
            }
            let text = if format == OutputFormat::Csv { t.to_csv() } else { t.render() };
            write!(out, "{text}")?;
        }
    }
    Ok(())
}
