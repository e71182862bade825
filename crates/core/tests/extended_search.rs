//! The search in extended mode: same candidates, extended pricing, the reference's result shape.

use fmperf_core::catalog::{self, MappingOptions, Precision};
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::{ExtendedOptions, Hardware, HardwareChoices, Layout, Workload, evaluate};
use fmperf_core::search::{ExecutionChoices, Search, SearchSpec};
use fmperf_core::{ModelShape, Strategy, catalog::to_system_params};

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
    let mut search = Search::in_mode(spec, Some(ext.clone()), ExecutionChoices::fixed(&ext.options)).unwrap();
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
    // Feasible: the need without the allocator's cache fits.
    assert!(result.top.iter().all(|r| r.need_gb <= 80.0));
    assert!(best.throughput_samples_per_s < reference.top[0].throughput_samples_per_s);
}

#[test]
fn fp8_is_faster_and_summa_is_rejected() {
    let (spec, ext) = setup(Precision::Bf16);
    let bf16 =
        Search::in_mode(spec.clone(), Some(ext.clone()), ExecutionChoices::fixed(&ext.options)).unwrap().finish();
    let (spec8, ext8) = setup(Precision::Fp8);
    let fp8 = Search::in_mode(spec8, Some(ext8.clone()), ExecutionChoices::fixed(&ext8.options)).unwrap().finish();
    assert!(fp8.top[0].throughput_samples_per_s > bf16.top[0].throughput_samples_per_s);
    let summa = SearchSpec { strategy: Strategy::Summa2D, ..spec.clone() };
    assert!(Search::in_mode(summa, Some(ext8.clone()), ExecutionChoices::fixed(&ext8.options)).is_err());
    let cp = SearchSpec { strategy: Strategy::ContextParallel2D, ..spec.clone() };
    assert!(
        !Search::in_mode(cp, Some(ext8.clone()), ExecutionChoices::fixed(&ext8.options))
            .unwrap()
            .finish()
            .top
            .is_empty()
    );
    // The spec's domain must be the hardware's.
    let wrong = SearchSpec { system: spec.system.clone().with_domain_size(4), ..spec };
    assert_eq!(
        Search::in_mode(wrong, Some(ext8.clone()), ExecutionChoices::fixed(&ext8.options)).unwrap_err().field(),
        Some("system.nvlink_size")
    );
}

/// The spec's model is the workload's reference shape, from the resolver: a spec of another model
/// is rejected at `model`, not replaced by the workload's shape.
#[test]
fn an_extended_search_of_another_model_is_rejected() {
    let (spec, ext) = setup(Precision::Bf16);
    let choices = ExecutionChoices::fixed(&ext.options);
    let other = SearchSpec { model: ModelShape { depth: spec.model.depth + 1, ..spec.model }, ..spec.clone() };
    let e = Search::in_mode(other, Some(ext.clone()), choices).unwrap_err();
    assert!(e.is_at("model"), "{e}");
    assert!(e.to_string().contains("reference shape"), "{e}");
    assert!(Search::in_mode(spec, Some(ext), choices).is_ok());
}
