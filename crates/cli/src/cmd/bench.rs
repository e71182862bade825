//! `fmperf bench`: times complete reference searches over a fixed suite and reports the
//! evaluation rate.

use std::io::Write;
use std::time::Instant;

use fmperf_core::search::{Search, SearchSpec};
use fmperf_core::{ModelShape, Strategy, SystemParams};

use super::CmdResult;
use crate::args::Format;
use crate::table::Table;

/// Help text of `fmperf bench`.
pub const HELP: &str = "\
fmperf bench — time the reference searches of a fixed suite

USAGE: fmperf bench [--format table|json]

Suite: gpt3_1T and vit_era5 × strategies 1d, 2d, 2d-seqp × 512, 4096, 16384 GPUs × H200 with
NVLink domains of 8 and 64, global batch 4096, top 10. Prints per case the candidates evaluated,
the wall time [s] and the rate [candidates/s], then the totals.
";

/// One timed search.
struct Case {
    model: &'static str,
    strategy: Strategy,
    nvlink: u64,
    gpus: u64,
    candidates: u64,
    seconds: f64,
}

/// Runs `fmperf bench`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let Some(args) = super::parse_flags(raw, &["format"], HELP, out)? else {
        return Ok(());
    };
    let format = Format::from_args(&args, &[Format::Table, Format::Json])?;
    let mut cases = Vec::new();
    for model in ["gpt3_1T", "vit_era5"] {
        for strategy in Strategy::ALL {
            for nvlink in [8, 64] {
                for gpus in [512, 4096, 16384] {
                    let spec = SearchSpec {
                        model: ModelShape::reference(model)?,
                        system: SystemParams::h200().with_nvlink_size(nvlink),
                        strategy,
                        n_gpus: gpus,
                        global_batch: 4096,
                        top_k: 10,
                    };
                    let start = Instant::now();
                    let result = Search::new(spec)?.finish();
                    let seconds = start.elapsed().as_secs_f64();
                    cases.push(Case { model, strategy, nvlink, gpus, candidates: result.candidates, seconds });
                }
            }
        }
    }
    let total_candidates: u64 = cases.iter().map(|c| c.candidates).sum();
    let total_seconds: f64 = cases.iter().map(|c| c.seconds).sum();
    let rate = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { f64::INFINITY };
    match format {
        Format::Json => {
            let list: Vec<serde_json::Value> = cases
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "model": c.model, "strategy": c.strategy.as_str(), "nvlink_size": c.nvlink, "gpus": c.gpus,
                        "candidates": c.candidates, "seconds": c.seconds,
                        "candidates_per_s": rate(c.candidates, c.seconds),
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "system": "H200", "global_batch": 4096, "cases": list,
                "total": { "candidates": total_candidates, "seconds": total_seconds,
                           "candidates_per_s": rate(total_candidates, total_seconds) },
            });
            writeln!(out, "{doc}")?;
        }
        _ => {
            let mut t = Table::new(&[
                "model",
                "strategy",
                "NVLink [GPUs]",
                "GPUs",
                "candidates",
                "time [s]",
                "rate [candidates/s]",
            ]);
            for c in &cases {
                t.push(vec![
                    c.model.to_string(),
                    c.strategy.to_string(),
                    c.nvlink.to_string(),
                    c.gpus.to_string(),
                    c.candidates.to_string(),
                    format!("{:.4}", c.seconds),
                    format!("{:.0}", rate(c.candidates, c.seconds)),
                ]);
            }
            t.push(vec![
                "total".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                total_candidates.to_string(),
                format!("{total_seconds:.4}"),
                format!("{:.0}", rate(total_candidates, total_seconds)),
            ]);
            write!(out, "{}", t.render())?;
        }
    }
    Ok(())
}
