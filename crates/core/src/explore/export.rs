//! Result lists as CSV and JSON files. Numbers are written in full (shortest round-trip form of
//! each `f64`), so a file holds exactly what the page computed; units are in the headers / keys.

use serde_json::{Map, Value, json};

use super::code::format_candidate;
use super::inputs::{BudgetUnit, ExploreSpec, strategies_text};
use super::report::{ConfigReport, MemoryPart, TimePart};
use crate::catalog::TrainingBudget;
use crate::mode::ModelMode;

/// The `format` value of exported JSON files.
pub const JSON_FORMAT: &str = "fmperf.explore.results";
/// The version of the JSON layout.
pub const JSON_VERSION: u64 = 1;

fn budget_amount(b: TrainingBudget) -> f64 {
    match b {
        TrainingBudget::Tokens(v) | TrainingBudget::Samples(v) => v,
    }
}

/// CSV of `reports` (best first): one header row with units, one row per configuration.
pub fn results_csv(reports: &[ConfigReport]) -> String {
    let mut header: Vec<String> = [
        "rank",
        "strategy",
        "config",
        "throughput [samples/s]",
        "time per step [s]",
        "training time [days]",
        "memory [GB]",
        "capacity [GB]",
        "fits",
        "MFU [%]",
        "dp",
        "tp1",
        "tp2",
        "pp",
        "mbs",
        "nb",
        "microbatches",
        "nv_tp1",
        "nv_tp2",
        "nv_dp",
        "nv_pp",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(TimePart::ALL.iter().map(|p| format!("{} [s]", p.label())));
    header.extend(MemoryPart::ALL.iter().map(|p| format!("{} [GB]", p.label())));
    let mut out = header.join(",");
    out.push('\n');
    for (i, r) in reports.iter().enumerate() {
        let c = &r.candidate;
        let mut row: Vec<String> = vec![
            (i + 1).to_string(),
            c.strategy.to_string(),
            format_candidate(c),
            r.throughput_samples_per_s.to_string(),
            r.time_per_step_s.to_string(),
            r.training_days.to_string(),
            r.memory.used_gb.to_string(),
            r.memory.capacity_gb.to_string(),
            r.memory.fits().to_string(),
            (r.mfu * 100.0).to_string(),
        ];
        row.extend(
            [c.dp, c.tp1, c.tp2, c.pp, c.mbs, c.nb, r.microbatches, c.nv_tp1, c.nv_tp2, c.nv_dp, c.nv_pp]
                .iter()
                .map(u64::to_string),
        );
        row.extend(r.time_parts().iter().map(|(_, v)| v.to_string()));
        row.extend(r.memory_parts().iter().map(|(_, v)| v.to_string()));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// The scenario of a spec as a JSON object (ids, sizes, strategies, budget, the mode and, in
/// extended mode, every switch).
pub fn scenario_json(spec: &ExploreSpec) -> Value {
    let mode = spec.mode.to_json();
    json!({
        "mode": mode["mode"],
        "switches": mode.get("switches"),
        "model": spec.model_id,
        "system": spec.system_id,
        "domain_size": spec.system.nvlink_size,
        "devices": spec.n_gpus,
        "global_batch": spec.global_batch,
        "strategies": strategies_text(&spec.strategies).split(',').collect::<Vec<_>>(),
        "top_k": spec.top_k,
        "training_budget": { BudgetUnit::of(spec.budget).as_str(): budget_amount(spec.budget) },
    })
}

/// One report as a JSON object.
pub fn report_json(rank: usize, r: &ConfigReport) -> Value {
    let c = &r.candidate;
    let times: Map<String, Value> = r.time_parts().iter().map(|(p, v)| (p.key().to_string(), json!(v))).collect();
    let memory: Map<String, Value> = r.memory_parts().iter().map(|(p, v)| (p.key().to_string(), json!(v))).collect();
    json!({
        "rank": rank,
        "strategy": c.strategy.as_str(),
        "config": format_candidate(c),
        "throughput_samples_per_s": r.throughput_samples_per_s,
        "time_per_step_s": r.time_per_step_s,
        "training_days": r.training_days,
        "mem_gb": r.memory.used_gb,
        "capacity_gb": r.memory.capacity_gb,
        "fits": r.memory.fits(),
        "mfu": r.mfu,
        "candidate": c,
        "microbatches": r.microbatches,
        "time_s": times,
        "memory_gb": memory,
        "placement": r.placement(),
    })
}

/// JSON document of `reports` (best first) for `spec`; `list` names the list (`all` for the
/// merged list, or a strategy).
pub fn results_json(spec: &ExploreSpec, list: &str, reports: &[ConfigReport]) -> String {
    let results: Vec<Value> = reports.iter().enumerate().map(|(i, r)| report_json(i + 1, r)).collect();
    let doc = json!({
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "scenario": scenario_json(spec),
        "list": list,
        "model_flops_definition": match spec.mode {
            ModelMode::Reference => "MFU = reference FLOPs per sample (forward + backward incl. attention recomputation) × throughput / (devices × peak matrix TFLOP/s)",
            ModelMode::Extended(_) => "MFU = model FLOPs per sample (3 × forward: projections with the model's K/V heads, MLP matrices, attention 4·seq·width per token, output head; no recomputation) × throughput / (devices × peak matrix TFLOP/s at the mode's precision)",
        },
        "results": results,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}
