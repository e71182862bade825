//! The golden search outputs: search-space sizes (`candidate_counts[]`), complete candidate lists
//! (`candidate_lists[]`) and full searches with their top-k (`searches[]`).

mod golden_support;

use fmperf_core::search::{Search, SearchSpec, Space};
use fmperf_core::{ModelShape, Strategy};
use golden_support::*;
use serde_json::Value;

#[test]
fn every_candidate_count() {
    let mut ck = Checker::default();
    let entries = section("candidate_counts");
    assert!(entries.len() >= 54);
    let mut cases = 0;
    for e in entries {
        let strategy = strategy(&e["strategy"]);
        let model = ModelShape::reference(e["model_name"].as_str().unwrap()).unwrap();
        let (nvs, g) = (u(&e["nvlink_size"]), u(&e["global_batch_size"]));
        for (n, count) in e["counts_by_n_gpus"].as_object().unwrap() {
            let n: u64 = n.parse().unwrap();
            let space = Space::new(strategy, &model, nvs, n, g);
            ck.same(format!("{} {strategy} NVS{nvs} G={g} n={n}", e["model_name"]), space.len(), u(count));
            cases += 1;
        }
    }
    println!("{cases} search-space sizes");
    ck.finish("golden candidate counts");
}

#[test]
fn every_candidate_list_exactly() {
    let mut ck = Checker::default();
    for e in section("candidate_lists") {
        let strategy = strategy(&e["strategy"]);
        let model = ModelShape::reference(e["model_name"].as_str().unwrap()).unwrap();
        let space = Space::new(strategy, &model, u(&e["nvlink_size"]), u(&e["n_gpus"]), u(&e["global_batch_size"]));
        let mut ours: Vec<Vec<u64>> = space.iter().map(|c| c.reference_tuple()).collect();
        ours.sort();
        let golden: Vec<Vec<u64>> =
            e["candidates"].as_array().unwrap().iter().map(|t| t.as_array().unwrap().iter().map(u).collect()).collect();
        let what = format!("{} {strategy} NVS{} n={}", e["model_name"], e["nvlink_size"], e["n_gpus"]);
        ck.same(format!("{what} count"), ours.len() as u64, u(&e["count"]));
        ck.same(format!("{what} list"), &ours, &golden);
        // Every generated candidate is accepted by the evaluator's rules.
        let system = fmperf_core::SystemParams::h200().with_domain_size(u(&e["nvlink_size"]));
        for c in space.iter() {
            if let Err(err) = c.check(&model, &system, u(&e["global_batch_size"])) {
                ck.same(format!("{what} {c:?} check"), err.to_string(), String::new());
            }
        }
    }
    ck.finish("golden candidate lists");
}

/// Groups of tied ranks (each rank in exactly one group).
fn tie_groups(topk: &[Value]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, t) in topk.iter().enumerate() {
        if groups.iter().any(|g| g.contains(&i)) {
            continue;
        }
        let mut g: Vec<usize> = t["ties_with_ranks"].as_array().unwrap().iter().map(|x| u(x) as usize).collect();
        g.push(i);
        g.sort();
        g.dedup();
        groups.push(g);
    }
    groups
}

#[test]
fn every_search_top_k_and_size() {
    let mut ck = Checker::default();
    let searches = section("searches");
    assert!(!searches.is_empty());
    for (i, s) in searches.iter().enumerate() {
        let strategy = strategy(&s["strategy"]);
        let spec = SearchSpec {
            model: model(s),
            system: system(s),
            strategy,
            n_gpus: u(&s["n_gpus"]),
            global_batch: u(&s["global_batch_size"]),
            top_k: u(&s["nlargest"]) as usize,
        };
        assert_eq!(spec.system.domain_size, u(&s["nvlink_size"]));
        let w = format!(
            "searches[{i}] {} {} {strategy} NVS{} n={}",
            s["model_name"], s["system_name"], s["nvlink_size"], s["n_gpus"]
        );
        let result = Search::new(spec.clone()).unwrap().finish();
        ck.same(format!("{w} candidates"), result.candidates, u(&s["candidates"]));
        let topk = s["topk"].as_array().unwrap();
        ck.same(format!("{w} top-k length"), result.top.len(), topk.len());
        if result.top.len() != topk.len() {
            continue;
        }
        for group in tie_groups(topk) {
            // Within a tie group, match each golden entry to one of ours with the same config.
            let mut unused: Vec<usize> = group.clone();
            for &gi in &group {
                let t = &topk[gi];
                let mut config = t["config"].clone();
                for (k, v) in t["stats"].as_object().unwrap() {
                    if k.starts_with("nv_") {
                        config[k] = v.clone();
                    }
                }
                let want = candidate(strategy, &config);
                let Some(pos) = unused.iter().position(|&oi| result.top[oi].candidate == want) else {
                    ck.same(format!("{w} rank {gi} config"), format!("not among ranks {group:?}"), format!("{want:?}"));
                    continue;
                };
                let r = &result.top[unused.remove(pos)];
                let rw = format!("{w} rank {gi}");
                ck.num(format!("{rw} throughput"), r.throughput_samples_per_s, &t["throughput_samples_per_s"]);
                ck.num(format!("{rw} time"), r.time_per_iteration_s, &t["time_per_iteration_s"]);
                ck.num(format!("{rw} mem"), r.mem_gb, &t["mem_GB"]);
                ck.same(
                    format!("{rw} microbatches"),
                    r.candidate.microbatches(spec.global_batch),
                    u(&t["config"]["n_microbatches"]),
                );
                let ours = serde_json::to_value(r.totals).unwrap();
                for (k, v) in t["stats"].as_object().unwrap() {
                    if !k.starts_with("nv_") {
                        ck.num(format!("{rw} {k}"), ours[k].as_f64().unwrap(), v);
                    }
                }
            }
        }
    }
    ck.finish("golden searches");
}

#[test]
fn resumable_search_equals_one_shot() {
    let spec = SearchSpec {
        model: ModelShape::GPT3_1T,
        system: fmperf_core::SystemParams::b200().with_domain_size(8),
        strategy: Strategy::Summa2D,
        n_gpus: 64,
        global_batch: 4096,
        top_k: 10,
    };
    let whole = Search::new(spec.clone()).unwrap().finish();
    let mut s = Search::new(spec).unwrap();
    let total = s.progress().1;
    let mut steps = 0;
    while !s.step(37) {
        steps += 1;
        let (done, all) = s.progress();
        assert_eq!(all, total);
        assert_eq!(done, (steps * 37).min(total));
    }
    assert_eq!(s.result(), whole);
    assert_eq!(whole.candidates, total);
}
