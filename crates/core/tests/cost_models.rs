//! The one cost-model interface (`cost::CostModel`) and its two implementations: through it, both
//! modes price the same candidates, their full detail agrees with their headline numbers, and the
//! reference's per-layer detail sums to its iteration totals (extended mode's per-operation sums:
//! `extended_operations.rs`).

use fmperf_core::cost::ExtendedSetup;
use fmperf_core::cost::{CostModel, Detail};
use fmperf_core::extended::{ExtendedEvaluator, ExtendedOptions, Hardware, Workload};
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::reference::Evaluator;
use fmperf_core::search::{ExecutionChoices, Search, SearchSpec};
use fmperf_core::vocab::Candidate;
use fmperf_core::{Strategy, SystemParams};

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-30), "{what}: {a} vs {b}");
}

const GLOBAL_BATCH: u64 = 256;

fn setup() -> ExtendedSetup {
    let hardware = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
    ExtendedSetup { workload: Workload::LLAMA3_8B, hardware, options: ExtendedOptions::realistic() }
}

/// Both models of one strategy, behind the interface, and the top candidates of each mode.
fn models(strategy: Strategy) -> Vec<(Box<dyn CostModel>, Vec<Candidate>)> {
    let ext = setup();
    let spec = ext.spec(strategy, 64, GLOBAL_BATCH, 5);
    let top = |s: Search| s.finish().top.into_iter().map(|r| r.candidate).collect::<Vec<_>>();
    let reference = Evaluator::new(&spec.model, &spec.system, strategy, GLOBAL_BATCH).unwrap();
    let extended = ExtendedEvaluator::new(&ext.workload, &ext.hardware, &ext.options, strategy, GLOBAL_BATCH).unwrap();
    vec![
        (Box::new(reference) as Box<dyn CostModel>, top(Search::new(spec.clone()).unwrap())),
        (
            Box::new(extended) as Box<dyn CostModel>,
            top(Search::in_mode(spec, Some(ext.clone()), ExecutionChoices::fixed(&ext.options)).unwrap()),
        ),
    ]
}

#[test]
fn both_modes_price_through_one_interface_and_their_detail_matches_the_headline() {
    for strategy in [Strategy::OneD, Strategy::ContextParallel2D] {
        let mut modes = Vec::new();
        for (mut model, top) in models(strategy) {
            assert!(!top.is_empty(), "{strategy}: no candidate");
            modes.push(model.mode());
            for c in &top {
                let o = model.price(c).unwrap();
                let (o2, experts) = model.price_with_experts(c).unwrap();
                assert_eq!(o, o2);
                assert_eq!(experts, None, "a dense model has no expert layout");
                let d = model.detail(c).unwrap();
                assert_eq!(matches!(d, Detail::Reference(_)), model.mode() == ModeKind::Reference);
                close(d.totals().t, o.totals.t, "iteration time");
                close(d.throughput_samples_per_s(), o.throughput_samples_per_s, "throughput");
                close(d.mem_gb(), o.mem_gb, "memory");
                // Fits by its need without the allocator's cache (the device figure in reference mode).
                assert!(o.need_gb <= model.capacity_gb() && o.need_gb <= o.mem_gb, "a ranked candidate fits");
                // A copy prices alike (searches are cloned to be sharded).
                let mut copy = model.clone();
                assert_eq!(copy.price(c).unwrap(), o);
            }
        }
        assert_eq!(modes, [ModeKind::Reference, ModeKind::Extended]);
    }
}

#[test]
fn the_references_layer_rows_sum_to_its_iteration_totals() {
    let ext = setup();
    let spec: SearchSpec = ext.spec(Strategy::OneD, 64, GLOBAL_BATCH, 5);
    let (mut model, top) = models(Strategy::OneD).into_iter().next().unwrap();
    for c in top {
        let Detail::Reference(e) = model.detail(&c).unwrap() else { panic!("reference detail") };
        let rows = || e.mlp.iter().chain(&e.attention);
        let blocks = (spec.model.depth / c.pp) as f64;
        let per_iteration = blocks * e.microbatches as f64;
        let flops: f64 = rows().map(|r| r.flops_fwd_tflop + r.flops_bwd_tflop).sum();
        close(e.totals.flops_per_gpu, per_iteration * flops, "TFLOP per device");
        let comp: f64 = rows().map(|r| r.t_fwd_comp_s + r.t_bwd_comp_s).sum();
        close(e.totals.t_comp, per_iteration * comp, "compute time");
        let comm: f64 = rows().map(|r| r.t_fwd_comm_s + r.t_bwd_comm_s).sum();
        close(e.totals.t_tp_comm, per_iteration * comm, "TP communication");
        let weights: f64 = rows().map(|r| r.weights_gb).sum();
        close(e.totals.wts_mem, blocks * weights, "weights");
        let time: f64 = rows().map(|r| r.t_s).sum();
        let bubble = (c.pp - 1) as f64 * (per_iteration * time + e.totals.t_pp_comm) / e.microbatches as f64;
        close(e.totals.t, per_iteration * time + e.totals.t_pp_comm + bubble + e.totals.t_dp_comm, "iteration time");
    }
}
