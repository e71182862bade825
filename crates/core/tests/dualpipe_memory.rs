//! DeepSeek-V3's published layout (technical report, arXiv 2412.19437: 2,048 H800 80 GB, PP 16
//! with DualPipe, EP 64, ZeRO-1 data parallelism, FP8, RMSNorm and MLA up-projections
//! recomputed) as memory sees it, with DualPipe's memory as the report's Table 2 states it:
//! each rank holds two stages ("parameter 2×") and `PP + 1` micro-batches of one stage's
//! activations ("activation PP + 1", against 1F1B's `PP`). Hand checks of the parts, and the
//! breakdown before (1F1B's memory) and after (DualPipe's).

use fmperf_core::extended::memory::MemoryEstimate;
use fmperf_core::extended::moe::MoeOptions;
use fmperf_core::extended::{ExtendedOptions, Recompute, evaluate};
use fmperf_core::validate::moe_runs::interpret_moe_row;

/// The run as the report states it (`tests/data/deepseek-v3-report-run.json`).
fn deepseek_v3_row() -> serde_json::Value {
    serde_json::from_str(include_str!("data/deepseek-v3-report-run.json")).unwrap()
}

fn show(what: &str, m: &MemoryEstimate, capacity: f64) {
    eprintln!(
        "{what}: stage {}, allocated {:.1} GB, reserved {:.1} GB, device {:.1} GB of {capacity:.1} GB",
        m.stage, m.allocated_gb, m.reserved_gb, m.device_gb
    );
    for p in &m.parts {
        eprintln!("    {:26} {:8.2} GB", p.name, p.gb);
    }
}

#[test]
fn deepseek_v3_dualpipe_memory_by_hand() {
    let s = interpret_moe_row(&deepseek_v3_row()).unwrap();
    // Read as written (selective recomputation); DualPipe's memory is noted, not applied.
    assert_eq!(s.options.recompute, Recompute::Selective, "{:?}", s.notes);
    assert!(!s.options.moe.dual_pipe && s.notes.iter().any(|n| n.contains("dual_pipe=on")), "{:?}", s.notes);
    let sys = fmperf_core::resolve::builtin_system(&s.hardware_id).unwrap();
    let (hw, _) = fmperf_core::resolve::hardware(sys, s.precision, true, &s.mapping).unwrap();
    let dual = ExtendedOptions { moe: MoeOptions { dual_pipe: true, ..s.options.moe }, ..s.options };
    let before = evaluate(&s.workload, &hw, &s.layout, &s.options).unwrap();
    let after = evaluate(&s.workload, &hw, &s.layout, &dual).unwrap();
    let (b, a) = (&before.memory_estimate, &after.memory_estimate);
    show("1F1B memory (before)", b, hw.hbm_capacity_gb);
    show("DualPipe memory (after)", a, hw.hbm_capacity_gb);
    // Time is 1F1B's either way (DualPipe's bubble is not modelled).
    assert_eq!(before.totals.t, after.totals.t);
    // Kept bytes of one micro-batch through one MoE block and one dense block (selective
    // recomputation: nothing is being recomputed at the peak).
    let kept = |w: &fmperf_core::extended::Workload, l: &fmperf_core::extended::Layout| -> f64 {
        fmperf_core::extended::ops::block_operations(w, &hw, l, &s.options)
            .unwrap()
            .iter()
            .map(|o| o.kept.under(Recompute::Selective))
            .sum::<f64>()
            * 1e-9
    };
    let moe_kept = kept(&s.workload, &s.layout);
    let dense_w = fmperf_core::extended::Workload { moe: None, ..s.workload };
    let dense_kept = kept(&dense_w, &fmperf_core::extended::Layout { ep: 1, etp: 1, ..s.layout });
    let close = |x: f64, y: f64, what: &str| assert!((x - y).abs() < 1e-9 * y.abs().max(1.0), "{what}: {x} vs {y}");
    // 1F1B: the peak is the second stage, 4 MoE blocks with 15 micro-batches in flight.
    assert_eq!(b.stage, "middle");
    close(b.part("activations"), 15.0 * 4.0 * moe_kept, "1F1B activations");
    // DualPipe: 61 blocks over 16 stages are 13 stages of 4 then 3 of 3; the first rank holds
    // stage 0 (3 dense blocks, 1 MoE) and stage 15 (3 MoE) with the MTP module (1 MoE block),
    // the embedding and the head, with min(120, 17)/2 = 8.5 micro-batches counted on each block.
    assert_eq!(a.stage, "first");
    close(a.part("activations"), 8.5 * (3.0 * dense_kept + 5.0 * moe_kept), "DualPipe activations");
    // Its routed experts: 5 MoE blocks against the 1F1B stage's 4.
    for part in ["expert_weights", "expert_gradients", "expert_optimizer_states"] {
        close(a.part(part), 5.0 / 4.0 * b.part(part), part);
    }
    assert!(a.part("logits_and_loss") > 0.0 && b.part("logits_and_loss") == 0.0);
    // The need rises: DualPipe does not explain how the run fit in 80 GB (see moe-physics.md).
    assert!(a.device_gb > b.device_gb);
}

/// The first rank holds the embedding, the output head and the MTP module together, and the
/// MTP module's pass through the head adds no parameters (the head is shared with the main model).
#[test]
fn the_first_dualpipe_rank_holds_both_ends_and_one_head() {
    let mut s = interpret_moe_row(&deepseek_v3_row()).unwrap();
    s.options.moe.dual_pipe = true;
    let sys = fmperf_core::resolve::builtin_system(&s.hardware_id).unwrap();
    let (hw, _) = fmperf_core::resolve::hardware(sys, s.precision, true, &s.mapping).unwrap();
    // Many micro-batches in flight make the middle ranks the peak; with two per data-parallel
    // rank (one counted on each stage) and the logits on the first rank, the first rank is.
    let few = fmperf_core::extended::Layout { global_batch: 256, ..s.layout };
    let e = evaluate(&s.workload, &hw, &few, &s.options).unwrap();
    let m = &e.memory_estimate;
    assert_eq!(m.stage, "first", "{m:?}");
    assert!(m.part("logits_and_loss") > 0.0);
    // Dense weights on the first rank (tp 1): 3 dense blocks, 1 + 3 + 1 (MTP) MoE blocks' dense
    // parts, the embedding, one head (shared by the MTP module) and the MTP projection 2h·h.
    let (h, v) = (7168.0, 129280.0);
    let moe = fmperf_core::extended::ops::block_operations(&s.workload, &hw, &few, &s.options).unwrap();
    let moe_dense: f64 = moe.iter().filter(|o| o.name != "moe_experts").map(|o| o.parameters).sum();
    let dense_w = fmperf_core::extended::Workload { moe: None, ..s.workload };
    let dense_layout = fmperf_core::extended::Layout { ep: 1, etp: 1, ..few };
    let dense_block: f64 = fmperf_core::extended::ops::block_operations(&dense_w, &hw, &dense_layout, &s.options)
        .unwrap()
        .iter()
        .map(|o| o.parameters)
        .sum();
    let params = 3.0 * dense_block + 5.0 * moe_dense + 2.0 * v * h + 2.0 * h * h;
    let weights = m.part("weights");
    assert!((weights - params * 2.0 * 1e-9).abs() < 1e-6 * weights, "{weights} GB vs {} GB", params * 2e-9);
}
