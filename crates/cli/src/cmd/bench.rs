//! `fmperf bench`: times complete reference searches over a fixed suite and reports the
//! evaluation rate.

use std::io::Write;
use std::time::Instant;

use fmperf_core::cost::ExtendedSetup;
use fmperf_core::search::{ExecutionChoices, Search, SearchSpec};
use fmperf_core::{ModelShape, Strategy, SystemParams};

use super::{CmdError, CmdResult};
use crate::args::OutputFormat;
use crate::table::Table;

/// Help text of `fmperf bench`.
pub const HELP: &str = "\
fmperf bench — time the reference searches of a fixed suite

USAGE: fmperf bench [--format table|json]

Suite: gpt3_1T and vit_era5 × strategies 1d, 2d, 2d-seqp × 512, 4096, 16384 GPUs × H200 with
NVLink domains of 8 and 64, global batch 4096, top 10. Prints per case the candidates evaluated,
the wall time [s] and the rate [candidates/s], then the totals.

Then the extended-mode scenario the explorer opens on (Llama 3 70B, 1,024 H100 SXM, domain 8,
global batch 512 = 4 M tokens, strategies 1d and 2d-seqp, top 10), one thread: with the execution
fixed to the default switches, and with the search choosing recomputation, ZeRO/FSDP and shard
group, interleaving (candidates, configurations priced, wall time).

Then the Mixture-of-Experts scenario (DeepSeek-V3 on 2,048 H800 SXM5, domain 8, global batch
15,360, strategy 1d, top 10), one thread, execution and expert degrees (ep, etp) chosen by the
search: what `fmperf search --model deepseek-v3 --system nvidia_h800_sxm5_80gb --gpus 2048
--global-batch 15360 --strategy 1d --threads 1` does.

Then \"what would help most\" (`fmperf search --sensitivity`, the explorer's strip), one thread:
the baseline and six system features at x0.5 and x2, each re-searched, for the explorer's default
scenario (Llama 3 70B on 1,024 H100 SXM, its own batch of 2,048) and an MoE one (Mixtral 8x7B on
128 H100 SXM, batch 512), extended mode, strategies 1d and 2d-seqp.
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
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json])?;
    let mut cases = Vec::new();
    for model in ["gpt3_1T", "vit_era5"] {
        for strategy in Strategy::ALL {
            for nvlink in [8, 64] {
                for gpus in [512, 4096, 16384] {
                    let spec = SearchSpec {
                        model: ModelShape::reference(model)?,
                        system: SystemParams::h200().with_domain_size(nvlink),
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
    let extended = extended_cases()?;
    let moe = moe_case()?;
    let sensitivity = sensitivity_cases()?;
    let total_candidates: u64 = cases.iter().map(|c| c.candidates).sum();
    let total_seconds: f64 = cases.iter().map(|c| c.seconds).sum();
    let rate = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { f64::INFINITY };
    match format {
        OutputFormat::Json => {
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
            let ext: Vec<serde_json::Value> = extended
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "scenario": EXTENDED_SCENARIO, "execution": e.execution, "candidates": e.candidates,
                        "evaluations": e.evaluations, "seconds": e.seconds,
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "system": "H200", "global_batch": 4096, "cases": list,
                "total": { "candidates": total_candidates, "seconds": total_seconds,
                           "candidates_per_s": rate(total_candidates, total_seconds) },
                "extended": ext,
                "moe": { "scenario": MOE_SCENARIO, "candidates": moe.candidates,
                         "evaluations": moe.evaluations, "seconds": moe.seconds },
                "sensitivity": sensitivity.iter().map(|c| serde_json::json!({
                    "scenario": c.scenario, "points": fmperf_core::sensitivity::POINTS, "seconds": c.seconds,
                    "baseline_days": c.baseline_days, "most_help": c.most_help,
                })).collect::<Vec<_>>(),
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
            writeln!(out, "\nextended mode: {EXTENDED_SCENARIO}")?;
            write!(out, "{}", extended_table(&extended))?;
            writeln!(out, "\nmixture of experts: {MOE_SCENARIO}")?;
            write!(out, "{}", extended_table(std::slice::from_ref(&moe)))?;
            writeln!(out, "\nwhat would help most (13 searches each, one thread):")?;
            let mut t = Table::new(&["scenario", "time [s]", "baseline [days]", "helps most"]);
            for c in &sensitivity {
                t.push(vec![
                    c.scenario.to_string(),
                    format!("{:.4}", c.seconds),
                    c.baseline_days.map_or("-".into(), |d| format!("{d:.2}")),
                    c.most_help.clone(),
                ]);
            }
            write!(out, "{}", t.render())?;
        }
    }
    Ok(())
}

/// The text table of timed extended-mode searches.
fn extended_table(cases: &[ExtendedCase]) -> String {
    let mut t = Table::new(&["execution", "candidates", "configurations priced", "time [s]"]);
    for e in cases {
        t.push(vec![
            e.execution.to_string(),
            e.candidates.to_string(),
            e.evaluations.to_string(),
            format!("{:.4}", e.seconds),
        ]);
    }
    t.render()
}

/// The explorer's extended-mode scenario, in words.
const EXTENDED_SCENARIO: &str =
    "llama3-70b on 1024 nvidia_h100_sxm5_80gb (domain 8), global batch 512, strategies 1d + 2d-seqp, top 10";

/// One timed extended-mode scenario (both strategies).
struct ExtendedCase {
    execution: &'static str,
    candidates: u64,
    evaluations: u64,
    seconds: f64,
}

/// Times [`EXTENDED_SCENARIO`] with the execution fixed and chosen.
fn extended_cases() -> Result<Vec<ExtendedCase>, CmdError> {
    let model = fmperf_core::catalog::find_model("llama3-70b")?;
    let workload = fmperf_core::extended::Workload::from_catalog(model)?;
    let sys = fmperf_core::catalog::find_system("nvidia_h100_sxm5_80gb")?;
    let opts = fmperf_core::catalog::MappingOptions { domain_size: Some(8), ..Default::default() };
    let options = fmperf_core::extended::ExtendedOptions::realistic();
    let hardware = fmperf_core::extended::Hardware::from_catalog(sys, options.hardware.precision, true, &opts)?;
    let setup = ExtendedSetup { workload, hardware, options };
    let mut out = Vec::new();
    for (execution, choices) in [
        ("fixed (default switches)", ExecutionChoices::fixed(&options)),
        ("chosen by the search", ExecutionChoices::SEARCH_ALL),
    ] {
        let start = Instant::now();
        let (mut candidates, mut evaluations) = (0, 0);
        for strategy in [Strategy::OneD, Strategy::ContextParallel2D] {
            let spec = setup.spec(strategy, 1024, 512, 10);
            let r = Search::in_mode(spec, Some(setup.clone()), choices)?.finish();
            candidates += r.candidates;
            evaluations += r.evaluations;
        }
        out.push(ExtendedCase { execution, candidates, evaluations, seconds: start.elapsed().as_secs_f64() });
    }
    Ok(out)
}

/// The Mixture-of-Experts scenario, in words.
const MOE_SCENARIO: &str = "deepseek-v3 on 2048 nvidia_h800_sxm5_80gb (domain 8), global batch 15360, strategy 1d, \
                            execution and (ep, etp) chosen, top 10";

/// Times [`MOE_SCENARIO`] on one thread.
fn moe_case() -> Result<ExtendedCase, CmdError> {
    let model = fmperf_core::catalog::find_model("deepseek-v3")?;
    let workload = fmperf_core::extended::Workload::from_catalog(model)?;
    let sys = fmperf_core::catalog::find_system("nvidia_h800_sxm5_80gb")?;
    let options = fmperf_core::extended::ExtendedOptions::realistic();
    let mapping = fmperf_core::catalog::MappingOptions::default();
    let hardware = fmperf_core::extended::Hardware::from_catalog(sys, options.hardware.precision, true, &mapping)?;
    let setup = ExtendedSetup { workload, hardware, options };
    let spec = setup.spec(Strategy::OneD, 2048, 15360, 10);
    let start = Instant::now();
    let r = Search::in_mode(spec, Some(setup), ExecutionChoices::SEARCH_ALL)?.finish();
    Ok(ExtendedCase {
        execution: "chosen by the search",
        candidates: r.candidates,
        evaluations: r.evaluations,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// One timed sensitivity.
struct SensitivityCase {
    scenario: &'static str,
    seconds: f64,
    baseline_days: Option<f64>,
    /// The feature and factor with the largest saving, with it [%].
    most_help: String,
}

/// Times the sensitivity of the explorer's default scenario and of an MoE one, each resolved as
/// the page resolves it, on one thread.
fn sensitivity_cases() -> Result<Vec<SensitivityCase>, CmdError> {
    use fmperf_core::resolve::explorer::ExploreFields;
    use fmperf_core::sensitivity::{Base, Sensitivity};
    let mode = fmperf_core::mode::Mode::extended();
    let mut out = Vec::new();
    for (scenario, model, gpus, batch) in [
        ("llama3-70b on 1024 nvidia_h100_sxm5_80gb, batch 2048", "llama3-70b", "1024", "2048"),
        ("mixtral-8x7b on 128 nvidia_h100_sxm5_80gb, batch 512", "mixtral-8x7b", "128", "512"),
    ] {
        let fields = ExploreFields {
            model: model.into(),
            system: "nvidia_h100_sxm5_80gb".into(),
            gpus: gpus.into(),
            batch: batch.into(),
            strategies: "1d,2d-seqp".into(),
            top: "10".into(),
            ..ExploreFields::default()
        };
        let spec = fields.resolve_in(&mode).map_err(|e| CmdError::Usage(format!("{scenario}: {e:?}")))?;
        let start = Instant::now();
        let r = Sensitivity::new(Base::of_explore(&spec))?.finish();
        let seconds = start.elapsed().as_secs_f64();
        let most_help = r
            .features
            .first()
            .and_then(|f| {
                let p = f.points.iter().filter(|p| p.change_pct.is_some()).min_by(|a, b| {
                    a.change_pct.unwrap_or(f64::INFINITY).total_cmp(&b.change_pct.unwrap_or(f64::INFINITY))
                })?;
                Some(format!("{} x{} ({:+.1} %)", f.feature.key(), p.factor, p.change_pct.unwrap_or(f64::NAN)))
            })
            .unwrap_or_else(|| "-".into());
        out.push(SensitivityCase { scenario, seconds, baseline_days: r.baseline.training_days, most_help });
    }
    Ok(out)
}
