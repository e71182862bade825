use fmperf_core::validate::moe_fit::{fit_rows, moe_fit_report};
use fmperf_core::validate::moe_runs::MOE_RUNS_JSON;
#[test]
fn scratch() {
    let rows = fit_rows(MOE_RUNS_JSON).unwrap();
    let r = moe_fit_report(&rows);
    println!("tau {} loso {:?} in {:?}", r.overhead_s, r.loso.mape, r.in_sample.mape);
    for s in &r.sources {
        println!(
            "{:60} tau {:.4} loso {:.3} in {:.3} n {}",
            s.source,
            s.overhead_s,
            s.loso.mape.unwrap_or(0.0),
            s.in_sample.mape.unwrap_or(0.0),
            s.loso.evaluated
        );
    }
    for (id, l, i) in &r.rows {
        println!("{id:50} {:+.0} {:+.0}", l * 100.0, i * 100.0);
    }
}
