//! The explorer in extended mode: its searches are extended searches (2D SUMMA left out with a
//! note), parts without a vector rate are usable, precisions a part does not list are an error at
//! the switch, "try your own" ranks in the mode, and MFU's model FLOPs are the standard count.

use fmperf_core::Strategy;
use fmperf_core::cost::Detail;
use fmperf_core::explore::{ConfigReport, ExploreSearch, OwnConfig, ReportContext, evaluate_own};
use fmperf_core::extended::{ExtendedOptions, ModelFeatures};
use fmperf_core::mode::{Mode, SUMMA_UNSUPPORTED};
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::search::Search;

fn extended(ext: &str) -> Mode {
    Mode::from_text(Some("extended"), Some(ext)).unwrap()
}

fn fields(f: impl FnOnce(&mut ExploreFields)) -> ExploreFields {
    let mut x = ExploreFields::default_scenario();
    f(&mut x);
    x
}

#[test]
fn extended_scenarios_search_in_extended_mode() {
    let spec = fields(|_| {}).resolve_in(&extended("")).unwrap();
    assert_eq!(spec.strategies, vec![Strategy::OneD, Strategy::ContextParallel2D]);
    assert!(spec.notes.iter().any(|n| n.contains(SUMMA_UNSUPPORTED)));
    let result = ExploreSearch::new(spec.clone()).unwrap().finish();
    for o in &result.outcomes {
        // Issue 16 §4: the explorer's extended searches also choose the execution.
        let single =
            Search::in_mode(spec.search_spec(o.strategy), Some(spec.extended.clone().unwrap()), spec.execution)
                .unwrap()
                .finish();
        assert_eq!(o.top, single.top, "{}", o.strategy);
    }
    let reference = ExploreSearch::new(fields(|_| {}).resolve().unwrap()).unwrap().finish();
    assert_ne!(result.merged[0], reference.merged[0], "the modes price differently");
    // The full evaluation of the best is extended mode's, and its report matches the ranked one.
    let best = result.merged[0];
    let detail = spec.evaluate(&best.candidate).unwrap();
    assert!(matches!(detail, Detail::Extended(_)));
    assert_eq!(*detail.totals(), best.totals);
    let ctx = ReportContext::new(&spec).unwrap();
    assert_eq!(ConfigReport::of_detail(&ctx, &best.candidate, &detail), ConfigReport::of_ranked(&ctx, &best));
    // Try your own finds the best again from its degrees, in the same mode.
    let c = best.candidate;
    let own =
        OwnConfig { strategy: c.strategy, tp1: c.tp1, tp2: c.tp2, pp: c.pp, mbs: c.mbs, nb: None, placement: None };
    let got = evaluate_own(&spec, &own).unwrap();
    assert_eq!(got.evaluation.throughput_samples_per_s(), best.throughput_samples_per_s);
}

#[test]
fn mfu_counts_model_flops_by_hand() {
    // gpt3_1T (no vocabulary, full attention, two-matrix MLP of 4h): per token and layer
    // 2h·3h + 2h·h + 2·2·h·4h + 4·s·h = 24h² + 4sh, ×3 for forward and backward.
    let spec = fields(|_| {}).resolve_in(&extended("")).unwrap();
    let ctx = ReportContext::new(&spec).unwrap();
    let (h, s, l) = (25600.0, 2048.0, 128.0);
    let want = 3.0 * l * (24.0 * h * h + 4.0 * s * h) * s * 1e-12;
    assert!((ctx.flops_per_sample_tflop - want).abs() < 1e-9 * want, "{} vs {want}", ctx.flops_per_sample_tflop);
    assert_eq!(ctx.peak_matrix_tflops, 989.4);
}

#[test]
fn modes_change_what_can_be_used() {
    // TPU v5e lists no vector rate: only extended mode can use it.
    let tpu = fields(|x| {
        x.model = "llama3-8b".into();
        x.system = "google_tpu_v5e".into();
        x.domain = String::new();
        x.gpus = "256".into();
        x.batch = "256".into();
    });
    assert_eq!(tpu.resolve().unwrap_err()[0].field(), Some("system"));
    let spec = tpu.resolve_in(&extended("")).unwrap();
    assert!(!ExploreSearch::new(spec).unwrap().finish().merged.is_empty());
    // FP8 on the reference's 16-bit H200 file: the error is at the switch.
    let e = fields(|_| {}).resolve_in(&extended("precision=fp8")).unwrap_err();
    assert_eq!(e[0].field(), Some("ext.precision"));
    // Only 2d: nothing to search in extended mode.
    let e = fields(|x| x.strategies = "2d".into()).resolve_in(&extended("")).unwrap_err();
    assert_eq!(e[0].field(), Some("strategies"));
    // Sparsity on a GPU is noted as having no effect.
    let spec = fields(|_| {}).resolve_in(&extended("weight_sparsity=0.9")).unwrap();
    assert!(spec.notes.iter().any(|n| n.contains("has no effect")));
    assert_eq!(
        spec.mode,
        Mode::Extended(ExtendedOptions {
            model: ModelFeatures { weight_sparsity: 0.9, ..ModelFeatures::realistic() },
            ..ExtendedOptions::realistic()
        })
    );
}

#[test]
fn fits_are_judged_against_the_capacity_of_the_mode() {
    // An "80 GB" H100: extended mode judges "fits" against the memory the driver reports (81,559
    // MiB = 85.52 GB, the catalog's `memory_device_gb`), reference mode against the datasheet's
    // 80 GB; the page's summary prints this capacity.
    let h100 = |f: &mut ExploreFields| f.system = "nvidia_h100_sxm5_80gb".into();
    let ext = fields(h100).resolve_in(&extended("")).unwrap();
    assert_eq!(Some(ext.capacity_gb()), ext.system_entry.memory_device_gb);
    assert!((ext.capacity_gb() - 81_559.0 * 1_048_576.0 * 1e-9).abs() < 0.01, "{}", ext.capacity_gb());
    let reference = fields(h100).resolve().unwrap();
    assert_eq!(reference.capacity_gb(), 80.0);
}
