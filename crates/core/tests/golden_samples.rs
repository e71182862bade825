//! The golden `samples[]`: random candidates of many search spaces evaluated as the reference's
//! search loop does, feasible or not; every stats key, throughput, memory and feasibility. Each
//! sample is also evaluated by the search's fast path, which must agree bit for bit.

mod golden_support;

use fmperf_core::reference::{Evaluator, evaluate};
use golden_support::*;
use serde_json::Value;

#[test]
fn every_sample_stats_throughput_memory_feasibility() {
    let mut ck = Checker::default();
    let samples = section("samples");
    assert!(samples.len() >= 100, "expected the full sample set");
    for (i, s) in samples.iter().enumerate() {
        let strategy = strategy(&s["strategy"]);
        let (model, system) = (model(s), system(s));
        let c = candidate(strategy, &s["candidate"]);
        let g = u(&s["global_batch_size"]);
        let w = format!("samples[{i}] {} {} {}", s["model_name"], s["system_name"], strategy);
        let ev = evaluate(&model, &system, g, &c).unwrap_or_else(|e| panic!("{w}: {e}"));
        ck.same(format!("{w} n_gpus"), c.n_gpus(), u(&s["n_gpus"]));
        ck.same(format!("{w} n_microbatches"), ev.microbatches, u(&s["n_microbatches"]));
        ck.num(format!("{w} throughput"), ev.throughput_samples_per_s, &s["throughput_samples_per_s"]);
        ck.num(format!("{w} mem_GB"), ev.mem_gb, &s["mem_GB"]);
        ck.same(format!("{w} feasible"), ev.feasible, s["feasible"].as_bool().unwrap());
        let ours = serde_json::to_value(ev.totals).unwrap();
        for (key, golden) in s["stats"].as_object().unwrap() {
            if key.starts_with("nv_") {
                let v = match key.as_str() {
                    "nv_tp" | "nv_tp1" => c.nv_tp1,
                    "nv_tp2" => c.nv_tp2,
                    "nv_dp" => c.nv_dp,
                    _ => c.nv_pp,
                };
                ck.same(format!("{w} {key}"), v, u(golden));
            } else {
                let v = ours.get(key).and_then(Value::as_f64).unwrap_or_else(|| panic!("Totals has no `{key}`"));
                ck.num(format!("{w} {key}"), v, golden);
            }
        }
        // The fast path gives the same bits.
        let mut fast = Evaluator::new(&model, &system, strategy, g).unwrap();
        let o = fast.evaluate(&c).unwrap();
        ck.same(format!("{w} fast totals"), o.totals, ev.totals);
        ck.same(
            format!("{w} fast throughput"),
            o.throughput_samples_per_s.to_bits(),
            ev.throughput_samples_per_s.to_bits(),
        );
    }
    ck.finish("golden samples");
}
