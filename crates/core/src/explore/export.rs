//! Result lists as CSV and JSON files. Numbers are written in full (shortest round-trip form of
//! each `f64`), so a file holds exactly what the page computed; units are in the headers / keys.

use serde_json::{Value, json};

use super::inputs::{BudgetUnit, strategies_text};
use super::report::ConfigReport;
use crate::catalog::TrainingBudget;
use crate::resolve::explorer::ExploreSpec;
use crate::search::ResultRow;
use crate::search::row::Digits;
use crate::sweep::export::csv_cell;

/// The `format` value of exported JSON files.
pub const JSON_FORMAT: &str = "fmperf.explore.results";
/// The version of the JSON layout. 2: each result is the result row of `fmperf search` (issue 11
/// §4): `config` is the dimensions object and the text form moved to `code`; `placement` holds
/// the fast-domain shares and the per-dimension table moved to `placement_groups`.
pub const JSON_VERSION: u64 = 2;

fn budget_amount(b: TrainingBudget) -> f64 {
    match b {
        TrainingBudget::Tokens(v) | TrainingBudget::Samples(v) => v,
    }
}

/// The explorer's columns next to the result row's ([`ResultRow::header`]).
const EXTRA: [&str; 4] = ["training time [days]", "MFU [%]", "capacity [GB]", "fits"];

/// CSV of `reports` (best first): the result row's flat columns ([`ResultRow`]) with the
/// explorer's training time, MFU, capacity and fit after the iteration time.
pub fn results_csv(reports: &[ConfigReport]) -> String {
    let mut out = ResultRow::header(&EXTRA).iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(",");
    out.push('\n');
    for (i, r) in reports.iter().enumerate() {
        let extra = vec![
            r.training_days.to_string(),
            (r.mfu * 100.0).to_string(),
            r.memory.capacity_gb.to_string(),
            r.memory.fits().to_string(),
        ];
        let cells = r.row().cells(i + 1, extra, Digits::Exact);
        out.push_str(&cells.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(","));
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
        "domain_size": spec.system.domain_size,
        "domain": spec.system.domain_size,
        "execution": spec.extended.as_ref().map(|_| spec.execution.to_text()),
        "devices": spec.n_gpus,
        "global_batch": spec.global_batch,
        "strategies": strategies_text(&spec.strategies).split(',').collect::<Vec<_>>(),
        "top_k": spec.top_k,
        "training_budget": { BudgetUnit::of(spec.budget).as_str(): budget_amount(spec.budget) },
    })
}

/// One report as a JSON object: the result row ([`ResultRow::to_json`], the contract shared with
/// `fmperf search`) plus the explorer's `rank`, `time_per_step_s`, `training_days`, `capacity_gb`,
/// `fits`, `mfu`, `microbatches`, the full `candidate` and each dimension's `placement_groups`;
/// for an MoE model also `expert_placement_groups` (EP, ETP, EDP and their members in one fast
/// domain; `config` has `ep`, `etp`, `edp` as `fmperf search` writes them).
pub fn report_json(rank: usize, r: &ConfigReport) -> Value {
    let mut v = r.row().to_json();
    let extra = json!({
        "rank": rank,
        "time_per_step_s": r.time_per_step_s,
        "training_days": r.training_days,
        "capacity_gb": r.memory.capacity_gb,
        "fits": r.memory.fits(),
        "mfu": r.mfu,
        "candidate": r.candidate,
        "microbatches": r.microbatches,
        "placement_groups": r.placement(),
    });
    let extra = match (extra, r.experts.is_some()) {
        (Value::Object(mut e), true) => {
            e.insert("expert_placement_groups".into(), json!(r.expert_placement()));
            Value::Object(e)
        }
        (e, _) => e,
    };
    if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
        m.extend(e);
    }
    v
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
        "model_flops_definition": spec.mode.model_flops_definition(),
        "results": results,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}
