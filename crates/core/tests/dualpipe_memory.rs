//! DeepSeek-V3's published layout (technical report, arXiv 2412.19437: 2,048 H800 80 GB, PP 16
//! with DualPipe, EP 64, ZeRO-1 data parallelism, FP8, RMSNorm and MLA up-projections
//! recomputed) as memory sees it, with DualPipe's memory as the report's Table 2 states it:
//! each rank holds two stages ("parameter 2×") and `PP + 1` micro-batches of one stage's
//! activations ("activation PP + 1", against 1F1B's `PP`). Hand checks of the parts, and the
//! breakdown before (1F1B's memory) and after (DualPipe's); the report's memory savings (BF16
//! Adam moments, FP8-cached SwiGLU inputs, norms recomputed) part by part.

use fmperf_core::extended::memory::MemoryEstimate;
use fmperf_core::extended::moe::{MoeOptions, RecomputeModules};
use fmperf_core::extended::{ExtendedOptions, OptimizerStates, Recompute, evaluate};
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

/// The row's options without the report's memory savings (BF16 Adam moments, FP8-cached SwiGLU
/// inputs, norms recomputed): the reading before they were modelled.
fn without_savings(o: ExtendedOptions) -> ExtendedOptions {
    let modules = RecomputeModules { layernorm: false, ..o.moe.recompute_modules };
    ExtendedOptions {
        optimizer_states: OptimizerStates::Fp32Master,
        moe: MoeOptions { fp8_swiglu_cache: false, recompute_modules: modules, ..o.moe },
        ..o
    }
}

#[test]
fn deepseek_v3_dualpipe_memory_by_hand() {
    let mut s = interpret_moe_row(&deepseek_v3_row()).unwrap();
    // Read as written (selective recomputation, DualPipe applied).
    assert_eq!(s.options.recompute, Recompute::Selective, "{:?}", s.notes);
    assert!(s.options.moe.dual_pipe && s.notes.iter().any(|n| n.contains("dual_pipe=on")), "{:?}", s.notes);
    // DualPipe's structure against 1F1B's, checked on the reading without the report's savings.
    s.options = without_savings(ExtendedOptions { moe: MoeOptions { dual_pipe: false, ..s.options.moe }, ..s.options });
    let sys = fmperf_core::resolve::builtin_system(&s.hardware_id).unwrap();
    let (hw, _) = fmperf_core::resolve::hardware(sys, s.precision, true, &s.mapping).unwrap();
    let dual = ExtendedOptions { moe: MoeOptions { dual_pipe: true, ..s.options.moe }, ..s.options };
    let before = evaluate(&s.workload, &hw, &s.layout, &s.options).unwrap();
    let after = evaluate(&s.workload, &hw, &s.layout, &dual).unwrap();
    let (b, a) = (&before.memory_estimate, &after.memory_estimate);
    show("1F1B memory (before)", b, hw.hbm_capacity_gb);
    show("DualPipe memory (after)", a, hw.hbm_capacity_gb);
    // Time: the same slots, DualPipe's bubble (pp/2 − 1)·2/3 = 14/3 slots against 1F1B's 15.
    assert_eq!(before.totals.t_comp, after.totals.t_comp);
    let ratio = after.totals.t_bubble / before.totals.t_bubble;
    assert!((ratio - 14.0 / 3.0 / 15.0).abs() < 1e-12, "{ratio}");
    assert!(after.totals.t < before.totals.t);
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
    // the embedding and the head. In flight (DualPipe's schedule, 17 = PP + 1 in all): 16
    // micro-batches of stage 0, which it runs first in its direction, one of stage 15 with the MTP
    // module, which it runs last in the other: 16·(3 dense + 1 MoE) + 1·(3 + 1 MoE) blocks.
    assert_eq!(a.stage, "first");
    close(a.part("activations"), 48.0 * dense_kept + 20.0 * moe_kept, "DualPipe activations");
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

/// The report's memory savings (§3.2.3, §3.3.3) as the row states them, part by part by hand on
/// one MoE block and on the optimizer states, and the run's layout before and after: 1F1B's
/// memory then fits the 80 GB H800; DualPipe's first rank still does not.
#[test]
fn deepseek_v3_memory_savings_by_hand() {
    let s = interpret_moe_row(&deepseek_v3_row()).unwrap();
    // The savings on 1F1B's memory first, then DualPipe's (as the row states it).
    assert!(s.options.moe.dual_pipe);
    let o = ExtendedOptions { moe: MoeOptions { dual_pipe: false, ..s.options.moe }, ..s.options };
    assert_eq!(o.optimizer_states, OptimizerStates::Bf16Moments, "{:?}", s.notes);
    assert!(o.moe.fp8_swiglu_cache && o.moe.recompute_modules.layernorm && o.moe.recompute_modules.mla_up_proj);
    let sys = fmperf_core::resolve::builtin_system(&s.hardware_id).unwrap();
    let (hw, _) = fmperf_core::resolve::hardware(sys, s.precision, true, &s.mapping).unwrap();
    let before_opts = without_savings(o);
    let kept = |opts: &ExtendedOptions| -> f64 {
        fmperf_core::extended::ops::block_operations(&s.workload, &hw, &s.layout, opts)
            .unwrap()
            .iter()
            .map(|op| op.kept.under(Recompute::Selective))
            .sum()
    };
    // One MoE block, one micro-batch of T = 4,096 tokens, h = 7,168, expert width f = 2,048
    // (gated: 2f into the SwiGLU), top-8 at imbalance 1.1: 36,044.8 routed copies.
    // Routed experts per copy: h (FP8 input) + 2f·2 B (SwiGLU input) + f (FP8 output) = 17,408 B
    // before; h + 2f·(1 + 4/128) = 11,392 B after. Shared expert per token: 2f·2 + f = 10,240 B
    // before, 2f·1.03125 = 4,224 B after. Norms recomputed: the MLA down-projection's FP8 input
    // (h) and the up-projections' (q rank 1,536 + kv rank 512) per token.
    let (t, copies) = (4096.0, 4096.0 * 8.0 * 1.1);
    let want = copies * (17408.0 - 11392.0) + t * (10240.0 - 4224.0) + t * (7168.0 + 1536.0 + 512.0);
    let saved = kept(&before_opts) - kept(&o);
    assert!((saved - want).abs() < 1e-6 * want, "{saved} B vs {want} B by hand");
    let before = evaluate(&s.workload, &hw, &s.layout, &before_opts).unwrap();
    let after = evaluate(&s.workload, &hw, &s.layout, &o).unwrap();
    let dual =
        evaluate(&s.workload, &hw, &s.layout, &ExtendedOptions { moe: MoeOptions { dual_pipe: true, ..o.moe }, ..o })
            .unwrap();
    let cap = hw.hbm_capacity_gb;
    show("before the savings (1F1B)", &before.memory_estimate, cap);
    show("after the savings (1F1B)", &after.memory_estimate, cap);
    show("after the savings (DualPipe)", &dual.memory_estimate, cap);
    // Adam's moments in BF16: the expert optimizer states of a stage are (4 + 2 + 2)/(4 + 4 + 4)
    // of FP32's (compared on the stage the estimate before peaks on, both of 4 MoE blocks).
    let (b, a) = (&before.memory_estimate, &after.memory_estimate);
    let per_block = |m: &MemoryEstimate| m.part("expert_optimizer_states") / m.part("expert_weights");
    assert!((per_block(a) / per_block(b) - 8.0 / 12.0).abs() < 1e-12);
    // The report's layout: 1F1B's memory fits after the savings, not before; DualPipe's first
    // rank (two stages, both ends, the logits) does not fit either way.
    assert!(b.device_gb > cap && a.device_gb < cap, "{} / {} GB of {cap}", b.device_gb, a.device_gb);
    assert!(dual.memory_estimate.device_gb > cap);
    // The FP8 cast and the recomputed SwiGLU cost time: a little slower.
    assert!(after.totals.t > before.totals.t && after.totals.t < 1.02 * before.totals.t);
    // The row as read: DualPipe with the savings.
    let read = evaluate(&s.workload, &hw, &s.layout, &s.options).unwrap();
    assert_eq!(read.memory_estimate.device_gb, dual.memory_estimate.device_gb);
}
