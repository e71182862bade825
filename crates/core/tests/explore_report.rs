//! Reports of configurations: breakdowns add up, MFU and memory fit follow their definitions,
//! placements and the layer drill-down are consistent with the evaluation, and exports hold the
//! exact numbers.

use fmperf_core::explore::export::{results_csv, results_json};
use fmperf_core::explore::layers::layer_table;
use fmperf_core::explore::{ConfigReport, ExploreSearch, MemoryFit, ParallelDimension, ReportContext};
use fmperf_core::reference::{evaluate, model_summary};
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::search::code::format_candidate;
use fmperf_core::vocab::Candidate;
use fmperf_core::{ModelShape, Strategy, SystemParams};

fn default_reports() -> (fmperf_core::resolve::explorer::ExploreSpec, Vec<ConfigReport>) {
    let spec = ExploreFields::default_scenario().resolve().unwrap();
    let ctx = ReportContext::new(&spec).unwrap();
    let result = ExploreSearch::new(spec.clone()).unwrap().finish();
    let reports = result.merged.iter().map(|r| ConfigReport::of_ranked(&ctx, r)).collect();
    (spec, reports)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn breakdowns_add_up() {
    let (_, reports) = default_reports();
    for r in &reports {
        let t: f64 = r.time_parts().iter().map(|(_, v)| v).sum();
        assert!(close(t, r.time_per_step_s, 1e-12), "{t} vs {}", r.time_per_step_s);
        let m: f64 = r.memory_parts().iter().map(|(_, v)| v).sum();
        assert!(close(m, r.memory.used_gb, 1e-12));
        assert!(r.memory.fits() && r.memory.used_gb <= 141.0);
        assert!(close(r.throughput_samples_per_s * r.time_per_step_s, 4096.0, 1e-12));
        assert!(r.mfu > 0.0 && r.mfu < 1.0, "{}", r.mfu);
    }
}

#[test]
fn mfu_follows_its_definition() {
    // gpt3_1T: 12.57 PFLOP per sample (the reference's count on its H200 file).
    let flops = model_summary(&ModelShape::GPT3_1T).unwrap().flops_per_sample_tflop;
    assert!((flops - 12_570.0).abs() < 5.0, "{flops}");
    let (spec, reports) = default_reports();
    let best = &reports[0];
    let expected = flops * best.throughput_samples_per_s / (4096.0 * spec.system.matrix_flops_fp16);
    assert!(close(best.mfu, expected, 1e-12));
    // About 63 % for the best 2D configuration (203.5 samples/s).
    assert!((best.mfu - 0.631).abs() < 0.005, "{}", best.mfu);
}

#[test]
fn memory_fit() {
    let fit = MemoryFit { used_gb: 219.02283264, need_gb: 219.02283264, capacity_gb: 141.0 };
    assert!(!fit.fits());
    assert!((fit.over_gb() - 78.02283264).abs() < 1e-9);
    assert!(fit.headroom_gb() < 0.0 && fit.fraction() > 1.5);
    let ok = MemoryFit { used_gb: 141.0, need_gb: 141.0, capacity_gb: 141.0 };
    assert!(ok.fits() && ok.over_gb() == 0.0);
    // Extended mode judges the need without the allocator's cache: 96.68 GB with it, 78.81
    // without, on 85.899 GB fits (78.81 ≤ 85.899), nothing over, though the device figure is
    // 10.781 GB above the capacity (headroom −10.781).
    let cached = MemoryFit { used_gb: 96.68, need_gb: 78.81, capacity_gb: 85.899 };
    assert!(cached.fits() && cached.over_gb() == 0.0);
    assert!((cached.headroom_gb() + 10.781).abs() < 1e-9);
    // 123.78 with, 100.89 without on 85.521: 100.89 − 85.521 = 15.369 GB over.
    let over = MemoryFit { used_gb: 123.78, need_gb: 100.89, capacity_gb: 85.521 };
    assert!(!over.fits() && (over.over_gb() - 15.369).abs() < 1e-9);
}

#[test]
fn placement_names_each_dimension() {
    let one = ParallelDimension::of(&Candidate::one_d(16, 4, 32, 1, 4, 1, 2));
    let got: Vec<(&str, u64, u64, u64)> = one.iter().map(|p| (p.name, p.degree, p.in_domain, p.domains())).collect();
    assert_eq!(got, vec![("TP", 4, 4, 1), ("DP", 16, 1, 16), ("PP", 32, 2, 16)]);
    let cp = Candidate {
        strategy: Strategy::ContextParallel2D,
        tp2: 4,
        nv_tp2: 2,
        nv_pp: 1,
        ..Candidate::one_d(16, 8, 32, 1, 4, 1, 1)
    };
    let names: Vec<&str> = ParallelDimension::of(&cp).iter().map(|p| p.name).collect();
    assert_eq!(names, vec!["TP", "CP", "DP", "PP"]);
    let summa = Candidate { strategy: Strategy::Summa2D, ..cp };
    let names: Vec<&str> = ParallelDimension::of(&summa).iter().map(|p| p.name).collect();
    assert_eq!(names, vec!["TP1", "TP2", "DP", "PP"]);
}

#[test]
fn layer_table_matches_the_evaluation() {
    let c = Candidate::one_d(16, 4, 32, 1, 4, 1, 1);
    let model = ModelShape::GPT3_1T;
    let ev = evaluate(&model, &SystemParams::h200().with_domain_size(4), 4096, &c).unwrap();
    let table = layer_table(&ev, model.depth);
    assert_eq!(table.lines.len(), 14);
    assert_eq!(table.blocks_per_stage, 4);
    assert_eq!(table.microbatches, 256);
    assert_eq!(table.lines[0].name, "fc1");
    assert_eq!(table.lines[8].module, "attention");
    // The blocks' share of the step: everything but DP, PP and the bubble.
    let share: f64 = table.lines.iter().map(|l| l.share_of_step).sum();
    let t = &ev.totals;
    let expected = (t.t_comp + t.t_mem + t.t_tp_comm) / t.t;
    assert!(close(share, expected, 1e-9), "{share} vs {expected}");
    for l in &table.lines {
        assert!(close(l.time_s, l.compute_s + l.memory_s + l.comm_s, 1e-12) || l.time_s == 0.0, "{}", l.name);
    }
    // 1D tensor parallelism communicates in fc1 (all-gather) and fc2 (reduce-scatter).
    assert!(table.lines.iter().any(|l| l.collectives.iter().any(|c| c.contains("allgather"))));
}

#[test]
fn exports_hold_the_exact_numbers() {
    let (spec, reports) = default_reports();
    let csv = results_csv(&reports);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), reports.len() + 1);
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header[3], "throughput [samples/s]");
    assert!(header.iter().all(|h| !h.is_empty()));
    for (line, r) in lines[1..].iter().zip(&reports) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), header.len());
        assert_eq!(cells[2], format_candidate(&r.candidate));
        assert_eq!(cells[3].parse::<f64>().unwrap(), r.throughput_samples_per_s);
        assert_eq!(cells[5].parse::<f64>().unwrap(), r.training_days);
    }
    let json: serde_json::Value = serde_json::from_str(&results_json(&spec, "all", &reports)).unwrap();
    assert_eq!(json["format"], "fmperf.explore.results");
    assert_eq!(json["scenario"]["model"], "gpt3_1T");
    assert_eq!(json["scenario"]["domain_size"], 8);
    assert_eq!(json["scenario"]["training_budget"]["tokens"], 1e12);
    let results = json["results"].as_array().unwrap();
    assert_eq!(results.len(), reports.len());
    assert_eq!(results[0]["throughput_samples_per_s"].as_f64().unwrap(), reports[0].throughput_samples_per_s);
    assert_eq!(results[0]["time_s"]["comp"].as_f64().unwrap(), reports[0].totals.t_comp);
    assert_eq!(results[0]["candidate"]["tp1"], reports[0].candidate.tp1);
}
