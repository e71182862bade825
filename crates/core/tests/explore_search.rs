//! The explorer's multi-strategy search: it finds exactly what the single-strategy searches find,
//! merges them best first, is resumable in any slice size, and its derived training days match the
//! golden file's.

mod golden_support;

use fmperf_core::Strategy;
use fmperf_core::catalog::find_model;
use fmperf_core::explore::{ConfigReport, ExploreSearch, ReportContext, merge, training_days};
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::search::Search;
use golden_support::*;

fn default_spec() -> fmperf_core::resolve::explorer::ExploreSpec {
    ExploreFields::default_scenario().resolve().expect("default scenario is valid")
}

#[test]
fn default_scenario_is_the_published_setting() {
    let spec = default_spec();
    assert_eq!(spec.model_id, "gpt3_1T");
    assert_eq!(spec.system_id, "ref-H200");
    assert_eq!(spec.system.domain_size, 8);
    assert_eq!(spec.system, fmperf_core::SystemParams::h200().with_domain_size(8));
    assert_eq!((spec.n_gpus, spec.global_batch, spec.top_k), (4096, 4096, 10));
    assert_eq!(spec.strategies, Strategy::ALL.to_vec());
    assert!(spec.budget_is_default);
    assert_eq!(spec.budget.samples(2048), 1e12 / 2048.0);
}

#[test]
fn equals_the_single_strategy_searches_and_merges_best_first() {
    let spec = default_spec();
    let result = ExploreSearch::new(spec.clone()).unwrap().finish();
    assert_eq!(result.outcomes.len(), 3);
    let mut bests = Vec::new();
    for o in &result.outcomes {
        let single = Search::new(spec.search_spec(o.strategy)).unwrap().finish();
        assert_eq!(o.top, single.top, "{}", o.strategy);
        assert_eq!((o.candidates, o.feasible), (single.candidates, single.feasible));
        assert_eq!(o.top.len(), 10);
        bests.push(o.top[0].throughput_samples_per_s);
    }
    // Known sizes of the default scenario's spaces (1d, 2d, 2d-seqp).
    let counts: Vec<u64> = result.outcomes.iter().map(|o| o.candidates).collect();
    assert_eq!(counts, vec![2544, 59390, 22712]);
    assert_eq!(result.candidates(), 2544 + 59390 + 22712);
    assert_eq!(result.merged.len(), 10);
    let best = bests.iter().cloned().fold(f64::MIN, f64::max);
    assert_eq!(result.merged[0].throughput_samples_per_s, best);
    assert!(result.merged.windows(2).all(|w| w[0].throughput_samples_per_s >= w[1].throughput_samples_per_s));
    // The merged list is exactly the 10 best of the union.
    let mut union: Vec<f64> =
        result.outcomes.iter().flat_map(|o| o.top.iter().map(|r| r.throughput_samples_per_s)).collect();
    union.sort_by(|a, b| b.total_cmp(a));
    let merged: Vec<f64> = result.merged.iter().map(|r| r.throughput_samples_per_s).collect();
    assert_eq!(merged, union[..10].to_vec());
    // The published study: 2D SUMMA wins on H200-NVS8 at 4096 GPUs, 27.8 days.
    assert_eq!(result.merged[0].candidate.strategy, Strategy::Summa2D);
    let ctx = ReportContext::new(&spec).unwrap();
    let days = ConfigReport::of_ranked(&ctx, &result.merged[0]).training_days;
    assert!((days - 27.77).abs() < 0.01, "{days}");
}

#[test]
fn any_slice_size_gives_the_same_result_and_progress_is_monotone() {
    let mut spec = default_spec();
    spec.n_gpus = 512;
    let reference = ExploreSearch::new(spec.clone()).unwrap().finish();
    for slice in [1usize, 7, 1000, 100_000] {
        let mut task = ExploreSearch::new(spec.clone()).unwrap();
        let mut last = (0, 0);
        let mut steps = 0;
        while !task.step(slice) {
            let p = task.progress();
            assert!(p.0 >= last.0 && p.1 >= last.1 && p.0 <= p.1, "{p:?} after {last:?}");
            last = p;
            steps += 1;
            assert!(steps < 10_000_000);
        }
        assert!(task.is_done());
        let (done, total) = task.progress();
        assert_eq!(done, total);
        assert_eq!(total, reference.candidates());
        assert_eq!(task.result(), reference, "slice {slice}");
    }
}

#[test]
fn merge_keeps_order_of_ties_and_truncates() {
    let spec = default_spec();
    let result = ExploreSearch::new(spec).unwrap().finish();
    let mut doubled = result.outcomes.clone();
    doubled.extend(result.outcomes.clone());
    let m = merge(&doubled, 4);
    assert_eq!(m.len(), 4);
    assert_eq!(m[0], m[1]);
    assert_eq!(merge(&[], 3), vec![]);
}

#[test]
fn training_days_match_the_golden_file() {
    let mut checked = 0;
    for e in section("searches") {
        let name = e["model_name"].as_str().unwrap();
        let budget = find_model(name).unwrap().training_budget;
        let l = model(e).l;
        for r in e["topk"].as_array().unwrap() {
            let days = training_days(budget, l, f(&r["throughput_samples_per_s"]));
            let golden = f(&r["derived_training_days"]);
            assert!((days - golden).abs() <= 1e-9 * golden, "{name}: {days} vs {golden}");
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn nothing_fits_gives_empty_lists() {
    let mut fields = ExploreFields::default_scenario();
    fields.gpus = "8".into();
    let spec = fields.resolve().unwrap();
    let result = ExploreSearch::new(spec).unwrap().finish();
    assert!(result.merged.is_empty());
    assert!(result.candidates() > 0);
    assert_eq!(result.feasible(), 0);
}
