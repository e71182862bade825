//! The search in extended mode: same candidates, extended pricing, the reference's result shape.

use fmperf_core::catalog::{self, MappingOptions, Precision};
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::{ExtendedOptions, Hardware, HardwareChoices, Layout, Workload, evaluate};
use fmperf_core::search::{Search, SearchSpec};
use fmperf_core::{Strategy, catalog::to_system_params};

fn setup(precision: Precision) -> (SearchSpec, ExtendedSetup) {
    let sys = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let params = to_system_params(sys, &MappingOptions::default()).unwrap().params;
    let workload = Workload { seq_len: 4096, ..Workload::LLAMA3_8B };
    let spec = SearchSpec {
        model: workload.to_shape(),
        system: params,
        strategy: Strategy::OneD,
        n_gpus: 64,
        global_batch: 512,
        top_k: 5,
    };
    let hardware = Hardware::from_catalog(sys, precision, true, &MappingOptions::default()).unwrap();
    let options = ExtendedOptions {
        hardware: HardwareChoices { precision, ..HardwareChoices::realistic() },
        ..ExtendedOptions::realistic()
    };
    (spec, ExtendedSetup { workload, hardware, options })
}

#[test]
fn extended_search_ranks_candidates_with_extended_totals() {
    let (spec, ext) = setup(Precision::Bf16);
    let reference = Search::new(spec.clone()).unwrap().finish();
    let mut search = Search::new_extended(spec, ext.clone()).unwrap();
    while !search.step(100) {}
    let result = search.result();
    assert_eq!(result.candidates, reference.candidates, "same candidate space");
    assert!(!result.top.is_empty());
    let best = result.top[0];
    // The ranked totals are extended mode's evaluation of that candidate.
    let layout = Layout::from_candidate(&best.candidate, 512).unwrap();
    let direct = evaluate(&ext.workload, &ext.hardware, &layout, &ext.options).unwrap();
    assert_eq!(best.totals, direct.totals);
    assert_eq!(search.evaluate_extended(&best.candidate).unwrap().unwrap().totals, direct.totals);
    let t = &best.totals;
    let sum = t.t_comp + t.t_mem + t.t_tp_comm + t.t_dp_comm + t.t_pp_comm + t.t_bubble;
    assert!((sum - t.t).abs() < 1e-9 * t.t);
    // Best first, all feasible, and slower than the published model's optimism.
    assert!(result.top.windows(2).all(|w| w[0].throughput_samples_per_s >= w[1].throughput_samples_per_s));
    assert!(result.top.iter().all(|r| r.mem_gb <= 80.0));
    assert!(best.throughput_samples_per_s < reference.top[0].throughput_samples_per_s);
}

#[test]
fn fp8_is_faster_and_summa_is_rejected() {
    let (spec, ext) = setup(Precision::Bf16);
    let bf16 = Search::new_extended(spec.clone(), ext).unwrap().finish();
    let (spec8, ext8) = setup(Precision::Fp8);
    let fp8 = Search::new_extended(spec8, ext8.clone()).unwrap().finish();
    assert!(fp8.top[0].throughput_samples_per_s > bf16.top[0].throughput_samples_per_s);
    let summa = SearchSpec { strategy: Strategy::Summa2D, ..spec.clone() };
    assert!(Search::new_extended(summa, ext8.clone()).is_err());
    let cp = SearchSpec { strategy: Strategy::ContextParallel2D, ..spec.clone() };
    assert!(!Search::new_extended(cp, ext8.clone()).unwrap().finish().top.is_empty());
    // The spec's domain must be the hardware's.
    let wrong = SearchSpec { system: spec.system.clone().with_nvlink_size(4), ..spec };
    assert_eq!(Search::new_extended(wrong, ext8).unwrap_err().field(), Some("system.nvlink_size"));
}
