//! "What would help most" (issue 29 §3): the scenario re-searched with each system feature at ×0.5
//! and ×2, checked by hand: a compute-bound run gets faster with a faster matrix unit, more memory
//! never hurts, the features come out sorted, the baseline is the explorer's best, a scenario that
//! fits nowhere says so, impossible domain sizes say why, and the run does not depend on how it is
//! sliced or split.

use fmperf_core::explore::ExploreSearch;
use fmperf_core::mode::Mode;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};
use fmperf_core::sensitivity::{Base, FACTORS, Feature, PointStatus, Sensitivity, SensitivityResult};

fn spec(model: &str, system: &str, domain: &str, gpus: &str, batch: &str, mode: &str) -> ExploreSpec {
    let f = ExploreFields {
        model: model.into(),
        system: system.into(),
        domain: domain.into(),
        gpus: gpus.into(),
        batch: batch.into(),
        strategies: "1d,2d-seqp".into(),
        top: "10".into(),
        budget: String::new(),
        budget_unit: String::new(),
    };
    f.resolve_in(&Mode::from_text(Some(mode), None).unwrap()).unwrap()
}

/// Llama 3 8B on 64 H100 (extended mode): small enough to search thirteen times in a test.
fn small() -> ExploreSpec {
    spec("llama3-8b", "nvidia_h100_sxm5_80gb", "", "64", "512", "extended")
}

fn run(spec: &ExploreSpec) -> SensitivityResult {
    Sensitivity::new(Base::of_explore(spec)).unwrap().finish()
}

fn days(r: &SensitivityResult, f: Feature, x: f64) -> Option<f64> {
    r.features.iter().find(|e| e.feature == f).and_then(|e| e.at(x)).and_then(|p| p.training_days)
}

#[test]
fn faster_matrix_units_shorten_a_compute_bound_run_and_memory_never_hurts() {
    for s in [small(), spec("gpt3_1T", "ref-H200", "8", "4096", "4096", "reference")] {
        let r = run(&s);
        let base = r.baseline.training_days.expect("the baseline fits");
        // Both scenarios spend most of an iteration in matrix work: twice the rate is faster,
        // half the rate slower.
        assert!(days(&r, Feature::Matrix, 2.0).unwrap() < base, "{}", s.model_id);
        assert!(days(&r, Feature::Matrix, 0.5).unwrap() > base, "{}", s.model_id);
        // More memory only adds layouts; less only removes them.
        assert!(days(&r, Feature::HbmCapacity, 2.0).unwrap() <= base, "{}", s.model_id);
        assert!(days(&r, Feature::HbmCapacity, 0.5).is_none_or(|d| d >= base), "{}", s.model_id);
        // Faster links and HBM never make the best layout slower.
        for f in [Feature::HbmBandwidth, Feature::ScaleUp, Feature::ScaleOut] {
            assert!(days(&r, f, 2.0).unwrap() <= base * (1.0 + 1e-12), "{} {f:?}", s.model_id);
        }
        // Sorted by effect: the fewest days at either factor first.
        assert_eq!(r.features.len(), 6);
        let best: Vec<f64> = r.features.iter().map(|e| e.best_days().unwrap_or(f64::INFINITY)).collect();
        assert!(best.windows(2).all(|w| w[0] <= w[1]), "{best:?}");
        for e in &r.features {
            assert_eq!(e.points.iter().map(|p| p.factor).collect::<Vec<_>>(), FACTORS.to_vec());
            for p in e.points.iter().filter(|p| p.training_days.is_some()) {
                let want = (p.training_days.unwrap() / base - 1.0) * 100.0;
                assert!((p.change_pct.unwrap() - want).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn the_baseline_is_the_explorers_best_and_days_are_the_budget_over_the_throughput() {
    let s = small();
    let r = run(&s);
    let explored = ExploreSearch::new(s.clone()).unwrap().finish();
    let best = r.baseline.best.unwrap();
    assert_eq!(best.candidate, explored.merged[0].candidate);
    assert_eq!(best.throughput_samples_per_s, explored.merged[0].throughput_samples_per_s);
    // Llama 3 8B's budget of 15T tokens at 8,192 tokens per sample.
    let samples = s.budget.samples(8192);
    let want = samples / best.throughput_samples_per_s / 86_400.0;
    assert!((r.baseline.training_days.unwrap() - want).abs() < 1e-9 * want);
    let cost = r.baseline.cost.as_ref().unwrap();
    assert!((cost.gpu_hours - 64.0 * want * 24.0).abs() < 1e-6 * cost.gpu_hours);
    assert!(cost.energy_mwh.is_some(), "the H100's board power is in the catalog");
    // The matrix value is the part's peak at its precision, doubled.
    let m = r.features.iter().find(|e| e.feature == Feature::Matrix).unwrap();
    assert_eq!(m.at(2.0).unwrap().value, Some(2.0 * m.base_value));
}

#[test]
fn impossible_domain_sizes_say_why() {
    // A domain of 1 cannot be halved; one holding every device cannot usefully grow.
    let r = run(&spec("llama3-8b", "nvidia_h100_sxm5_80gb", "1", "64", "512", "extended"));
    let d = r.features.iter().find(|e| e.feature == Feature::Domain).unwrap();
    let half = d.at(0.5).unwrap();
    assert!(matches!(&half.status, PointStatus::Impossible(w) if w.contains("cannot be made")), "{:?}", half.status);
    assert_eq!(half.training_days, None);
    assert_eq!(d.at(2.0).unwrap().status, PointStatus::Fits);
    let r = run(&spec("llama3-8b", "nvidia_h100_sxm5_80gb", "8", "8", "64", "extended"));
    let d = r.features.iter().find(|e| e.feature == Feature::Domain).unwrap();
    assert!(matches!(&d.at(2.0).unwrap().status, PointStatus::Impossible(w) if w.contains("changes nothing")));
    assert_eq!(d.at(0.5).unwrap().status, PointStatus::Fits);
    assert_eq!(d.at(0.5).unwrap().value, Some(4.0));
}

#[test]
fn a_scenario_that_fits_nowhere_says_so() {
    // GPT-3 1T on 8 H100: nothing fits, at the baseline nor with half the memory.
    let r = run(&spec("gpt3_1T", "nvidia_h100_sxm5_80gb", "8", "8", "8", "extended"));
    assert!(matches!(r.baseline.status, PointStatus::NothingFits { min_mem_gb: Some(m), .. } if m > 85.0));
    assert!(r.baseline.status.reason().unwrap().contains("nothing fits"));
    assert_eq!(r.baseline.training_days, None);
    for e in &r.features {
        for p in &e.points {
            assert_eq!(p.change_pct, None, "no change against a baseline without a layout");
        }
    }
    let json = r.to_json();
    assert_eq!(json["baseline"]["status"], "does_not_fit");
    assert!(json["baseline"]["training_days"].is_null());
}

#[test]
fn slicing_and_parts_do_not_change_the_result() {
    let s = small();
    let whole = run(&s);
    let mut sliced = Sensitivity::new(Base::of_explore(&s)).unwrap();
    let mut last = (0, 0);
    while !sliced.step(97) {
        let p = sliced.progress();
        assert!(p.0 >= last.0 && p.0 <= p.1, "{p:?} after {last:?}");
        last = p;
    }
    assert_eq!(sliced.progress().0, sliced.progress().1);
    assert_eq!(sliced.result(), whole);
    let mut found = Vec::new();
    for i in 0..3 {
        let mut part = Sensitivity::new(Base::of_explore(&s)).unwrap().part(i, 3).unwrap();
        while !part.step(usize::MAX) {}
        found.extend(part.found());
    }
    found.reverse();
    let merged = Sensitivity::new(Base::of_explore(&s)).unwrap().absorb(found.clone()).unwrap();
    assert_eq!(merged.result(), whole);
    // A missing part is an error, never a silent hole.
    found.pop();
    assert!(Sensitivity::new(Base::of_explore(&s)).unwrap().absorb(found).is_err());
}

#[test]
fn the_flat_table_and_json_name_every_point_with_units() {
    let r = run(&small());
    let rows = r.rows(false);
    assert_eq!(rows.len(), 13);
    assert_eq!(rows[0][0], "baseline");
    let header = SensitivityResult::header();
    assert!(header.iter().any(|h| h == "training days [days]") && header.iter().any(|h| h == "change vs baseline [%]"));
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let json = r.to_json();
    let features = json["features"].as_array().unwrap();
    assert_eq!(features.len(), 6);
    assert_eq!(features[0]["points"].as_array().unwrap().len(), 2);
    let units: Vec<&str> = features.iter().map(|f| f["unit"].as_str().unwrap()).collect();
    assert!(units.contains(&"TFLOP/s") && units.contains(&"GB") && units.contains(&"devices"));
    assert_eq!(features.iter().find(|f| f["feature"] == "domain").unwrap()["sweep_axis"], "domain=2,4,8,16,32");
}

#[test]
fn the_studies_sweep_of_a_feature_gives_the_strips_numbers() {
    // The link of each row opens the feature's sweep in Studies: its ×0.5 and ×2 points scale the
    // system as the strip does (HBM capacity: the device's own total, which the search fits in).
    // A sweep prices the switches' execution rather than choosing it, so the strip is run so too.
    use fmperf_core::search::ExecutionChoices;
    use fmperf_core::sweep::{Sweep, SweepText};
    let s = small();
    let mut base = Base::of_explore(&s);
    base.execution = ExecutionChoices::fixed(&s.extended.as_ref().unwrap().options);
    let r = Sensitivity::new(base).unwrap().finish();
    for feature in [Feature::HbmCapacity, Feature::Matrix, Feature::Domain] {
        let text = SweepText {
            model: "llama3-8b".into(),
            system: "nvidia_h100_sxm5_80gb".into(),
            strategy: Some("1d,2d-seqp".into()),
            gpus: Some("64".into()),
            nvlink: Some("8".into()),
            global_batch: Some("512".into()),
            mode: Some("extended".into()),
            axes: vec![feature.sweep_axis(8)],
            ..SweepText::default()
        };
        let sweep = Sweep::new(text.to_spec(None, None).unwrap()).unwrap().finish();
        let at = |i: usize| sweep.points[i].best.as_ref().map(|b| b.ranked.throughput_samples_per_s);
        let e = r.features.iter().find(|e| e.feature == feature).unwrap();
        let strip = |x: f64| e.at(x).unwrap().best.map(|b| b.throughput_samples_per_s);
        assert_eq!(at(1), strip(0.5), "{feature:?} x0.5");
        assert_eq!(at(2), r.baseline.best.map(|b| b.throughput_samples_per_s), "{feature:?} x1");
        assert_eq!(at(3), strip(2.0), "{feature:?} x2");
    }
}
