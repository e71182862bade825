//! The page's worker jobs: a search or sweep split into jobs, each job written as JSON, run from its
//! JSON (as a Web Worker runs it), its answer written and read back as JSON, and the answers merged
//! with the core's merges, equals the single-threaded run — field for field (compared through
//! `Debug`, which prints every number exactly and NaN as NaN) and in the sweep's CSV and JSON
//! Lines exports byte for byte.

use fmperf_app::explorer::fields_from_query;
use fmperf_app::jobs::{self, Answer, Job};
use fmperf_app::query::Query;
use fmperf_core::catalog;
use fmperf_core::explore::ExploreSearch;
use fmperf_core::mode::Mode;
use fmperf_core::presets::find_preset;
use fmperf_core::resolve::UserEntries;
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::sweep::{Sweep, SweepText, export};

/// Runs `jobs` as a worker would: JSON in, JSON out, progress reported; answers read back.
fn run_all(jobs: &[Job]) -> Vec<Answer> {
    jobs.iter()
        .map(|j| {
            let mut last = (0, 0);
            let out = jobs::run_json(&j.to_json(), |p| last = p);
            assert!(last.0 == last.1, "a finished job reports all its work done: {last:?}");
            Answer::from_json(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
        })
        .collect()
}

fn explore_case(fields: &ExploreFields, mode: &Mode, entries: &UserEntries, label: &str) -> String {
    let spec = jobs::explore_spec(fields, mode, entries).unwrap_or_else(|e| panic!("{label}: {e:?}"));
    let mut one = ExploreSearch::new(spec.clone()).unwrap();
    while !one.step(1 << 20) {}
    let single = format!("{:?}", (one.result(), one.diagnose(), one.widening_notes()));
    for workers in [1, 2, 3] {
        let answers = run_all(&jobs::explore_jobs(fields, mode, entries, workers));
        let merged = jobs::merge_explore(spec.clone(), answers).unwrap_or_else(|e| panic!("{label}: {e}"));
        let got = format!("{:?}", (merged.result(), merged.diagnose(), merged.widening_notes()));
        assert_eq!(got, single, "{label}, {workers} workers");
    }
    single
}

#[test]
fn explorer_searches_split_over_workers_equal_the_single_run() {
    // The page's default scenario (extended mode) and the published study's (reference mode).
    let fresh = fields_from_query(&Query::parse(""));
    explore_case(&fresh, &Mode::extended(), &UserEntries::none(), "default, extended");
    let legacy = fields_from_query(&Query::parse("mode=reference"));
    explore_case(&legacy, &Mode::Reference, &UserEntries::none(), "gpt3_1T, reference");
    // Nothing fits (the diagnosis reads the merged counters) and a device count that does not
    // factorise (fewer devices used).
    let tight = ExploreFields { model: "llama3-405b".into(), gpus: "8".into(), ..fresh.clone() };
    let oom = explore_case(&tight, &Mode::extended(), &UserEntries::none(), "out of memory");
    assert!(oom.contains("OutOfMemory"), "the out-of-memory diagnosis");
    let odd = ExploreFields { gpus: "2304".into(), ..legacy.clone() };
    let fewer = explore_case(&odd, &Mode::Reference, &UserEntries::none(), "2304 devices");
    assert!(fewer.contains("idle") && fewer.contains("NoFactorisation"), "the fewer-devices note and diagnosis");
    // A Mixture-of-Experts model, and the user's own model (travels as a versioned document).
    let moe = ExploreFields { model: "mixtral-8x7b".into(), gpus: "64".into(), batch: "512".into(), ..fresh.clone() };
    explore_case(&moe, &Mode::extended(), &UserEntries::none(), "MoE");
    let mut mine = catalog::find_model("llama3-8b").unwrap().clone();
    mine.id = "my-llama".into();
    mine.name = "My Llama".into();
    let entries = UserEntries { models: vec![mine], systems: Vec::new() };
    let own = ExploreFields { model: "my-llama".into(), gpus: "64".into(), batch: "512".into(), ..fresh };
    explore_case(&own, &Mode::extended(), &entries, "user's model");
}

fn sweep_case(text: &SweepText, label: &str) {
    let spec = jobs::sweep_spec(text, &UserEntries::none()).unwrap_or_else(|e| panic!("{label}: {e}"));
    let single = Sweep::new(spec.clone()).unwrap().finish();
    let points = spec.point_count();
    for workers in [1, 3] {
        let jobs = jobs::sweep_jobs(text, &UserEntries::none(), points, workers);
        assert_eq!(jobs.len(), (workers * jobs::CHUNKS_PER_WORKER).min(points), "{label}");
        let mut answers = run_all(&jobs);
        answers.reverse(); // chunks may finish in any order
        let merged = jobs::merge_sweep(spec.clone(), answers).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(format!("{merged:?}"), format!("{single:?}"), "{label}, {workers} workers");
        let axes = &spec.axes;
        assert_eq!(export::to_csv(axes, &merged.points, true), export::to_csv(axes, &single.points, true), "{label}");
        let lines = |r: &fmperf_core::sweep::SweepResult| export::to_json_lines(axes, &r.points);
        assert_eq!(lines(&merged), lines(&single), "{label}: JSON Lines");
    }
}

#[test]
fn sweeps_split_over_workers_equal_the_single_run() {
    let panel = |preset: &str, id: &str| find_preset(preset).unwrap().panel(id).unwrap().text.clone();
    // The paper's strong-scaling study (117 points of very different cost).
    sweep_case(&panel("strong-scaling", "gpt3_1T"), "strong scaling");
    // Points that differ only in restrictions share one pass over the candidates: chunks split
    // such passes, and the candidates walked still count each pass once.
    sweep_case(&panel("design-space", "gpt3_1T-1d"), "design space");
    // Extended mode with invalid and unsupported points among searched ones.
    sweep_case(&panel("accelerators", "sparsity"), "sparsity (extended)");
    let mut scaling = panel("accelerators", "scaling");
    scaling.mode = Some("extended".into());
    sweep_case(&scaling, "accelerators scaling (extended)");
}

#[test]
fn bad_jobs_and_answers_are_errors_not_panics() {
    let out = jobs::run_json("{not json", |_| {});
    assert!(Answer::from_json(&out).unwrap_err().contains("unreadable job"), "{out}");
    assert!(Answer::from_json("[1,2]").unwrap_err().contains("unreadable answer"));
    let fresh = fields_from_query(&Query::parse(""));
    let bad = ExploreFields { gpus: "0".into(), ..fresh.clone() };
    let job = &jobs::explore_jobs(&bad, &Mode::extended(), &UserEntries::none(), 2)[0];
    let err = Answer::from_json(&jobs::run_json(&job.to_json(), |_| {})).unwrap_err();
    assert!(err.contains("gpus") || err.contains("device"), "{err}");
    // Shards that do not cover the search are refused.
    let spec = jobs::explore_spec(&fresh, &Mode::extended(), &UserEntries::none()).unwrap();
    let mut answers = run_all(&jobs::explore_jobs(&fresh, &Mode::extended(), &UserEntries::none(), 3));
    answers.pop();
    let err = jobs::merge_explore(spec, answers).unwrap_err();
    assert!(err.contains("shard"), "{err}");
}

#[test]
fn sensitivities_split_over_workers_equal_the_single_run() {
    use fmperf_core::sensitivity::{Base, Sensitivity};
    let fields = ExploreFields {
        model: "llama3-8b".into(),
        system: "nvidia_h100_sxm5_80gb".into(),
        gpus: "64".into(),
        batch: "512".into(),
        ..fields_from_query(&Query::parse(""))
    };
    let (mode, entries) = (Mode::extended(), UserEntries::none());
    let spec = jobs::explore_spec(&fields, &mode, &entries).unwrap();
    let single = Sensitivity::new(Base::of_explore(&spec)).unwrap().finish();
    for workers in [1, 3] {
        let answers = run_all(&jobs::sensitivity_jobs(&fields, &mode, &entries, workers));
        let merged = jobs::merge_sensitivity(&spec, answers).unwrap();
        assert_eq!(format!("{:?}", merged.result()), format!("{single:?}"), "{workers} workers");
    }
    // A missing part is refused, and a sweep's answer is not a sensitivity's.
    let mut answers = run_all(&jobs::sensitivity_jobs(&fields, &mode, &entries, 2));
    answers.pop();
    assert!(jobs::merge_sensitivity(&spec, answers).is_err());
    assert!(jobs::merge_sensitivity(&spec, vec![Answer::Sweep(Vec::new())]).is_err());
}
