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
        fmperf_core::extended::block_operations::block_operations(w, &hw, l, &s.options)
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
    let moe = fmperf_core::extended::block_operations::block_operations(&s.workload, &hw, &few, &s.options).unwrap();
    let moe_dense: f64 = moe.iter().filter(|o| o.name != "moe_experts").map(|o| o.parameters).sum();
    let dense_w = fmperf_core::extended::Workload { moe: None, ..s.workload };
    let dense_layout = fmperf_core::extended::Layout { ep: 1, etp: 1, ..few };
    let dense_block: f64 =
        fmperf_core::extended::block_operations::block_operations(&dense_w, &hw, &dense_layout, &s.options)
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
        fmperf_core::extended::block_operations::block_operations(&s.workload, &hw, &s.layout, opts)
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

/// The copies of the weights the report says exist, by hand on DualPipe's first rank (the
/// busiest): 16-bit weights (2 B), FP32 gradients (4 B, "used for batch size accumulation",
/// §3.3.3), FP32 master weights and BF16 moments sharded by ZeRO-1 over the 128 data-parallel
/// ranks (8/128 B; experts over their 2), no EMA on the GPU ("The EMA parameters are stored in CPU
/// memory", §3.2.3) and no FP8 weight copy: the report quantizes the weights online per 128×128
/// block (§3.3.2), so fmperf reads the row's precision words as `online_blockwise`, which keeps
/// none; Transformer Engine's reading kept an FP8 weight and its transpose (2 B per linear-layer
/// parameter). The casts then run at each GEMM: read 2 B, write 1 B per linear parameter in the
/// forward and again in the backward of every micro-batch.
#[test]
fn deepseek_v3_weight_copies_as_the_report_states_them() {
    use fmperf_core::extended::Fp8Recipe;
    let s = interpret_moe_row(&deepseek_v3_row()).unwrap();
    assert_eq!(s.options.fp8_recipe, Fp8Recipe::OnlineBlockwise, "{:?}", s.notes);
    assert!(s.notes.iter().any(|n| n.contains("online_blockwise")), "{:?}", s.notes);
    let sys = fmperf_core::resolve::builtin_system(&s.hardware_id).unwrap();
    let (hw, _) = fmperf_core::resolve::hardware(sys, s.precision, true, &s.mapping).unwrap();
    let online = evaluate(&s.workload, &hw, &s.layout, &s.options).unwrap();
    let te_opts = ExtendedOptions { fp8_recipe: Fp8Recipe::TransformerEngine, ..s.options };
    let te = evaluate(&s.workload, &hw, &s.layout, &te_opts).unwrap();
    let (m, t) = (&online.memory_estimate, &te.memory_estimate);
    show("Transformer Engine's FP8 copies (before)", t, hw.hbm_capacity_gb);
    show("online quantization (after)", m, hw.hbm_capacity_gb);
    assert_eq!(m.stage, "first");
    let close = |x: f64, y: f64, what: &str| assert!((x - y).abs() < 1e-9 * y.abs().max(1.0), "{what}: {x} vs {y}");
    // The first rank's parameters by hand: 3 dense blocks, the dense parts of 5 MoE blocks (stage
    // 0's one, stage 15's three, the MTP module's), the embedding and one head (vocabulary v,
    // hidden h), the MTP projection 2h·h; its routed experts: 4 of 256 per MoE block (EP 64).
    let (h, v) = (7168.0, 129280.0);
    let moe =
        fmperf_core::extended::block_operations::block_operations(&s.workload, &hw, &s.layout, &s.options).unwrap();
    let moe_dense: f64 = moe.iter().filter(|o| o.name != "moe_experts").map(|o| o.parameters).sum();
    let dense_w = fmperf_core::extended::Workload { moe: None, ..s.workload };
    let dense_layout = fmperf_core::extended::Layout { ep: 1, etp: 1, ..s.layout };
    let dense_ops =
        fmperf_core::extended::block_operations::block_operations(&dense_w, &hw, &dense_layout, &s.options).unwrap();
    let dense_block: f64 = dense_ops.iter().map(|o| o.parameters).sum();
    let params = 3.0 * dense_block + 5.0 * moe_dense + 2.0 * v * h + 2.0 * h * h;
    let experts = 5.0 * 4.0 * 3.0 * h * 2048.0;
    // 2 + 4 + 8/128 B per parameter: no EMA (it would add 4 B), master and moments sharded.
    close(
        m.part("weights") + m.part("gradients") + m.part("optimizer_states"),
        params * (2.0 + 4.0 + 8.0 / 128.0) * 1e-9,
        "dense states",
    );
    close(
        m.part("expert_weights") + m.part("expert_gradients") + m.part("expert_optimizer_states"),
        experts * (2.0 + 4.0 + 8.0 / 2.0) * 1e-9,
        "expert states",
    );
    // No FP8 weight copy; Transformer Engine's reading keeps 2 B per linear parameter of the
    // blocks (not the embedding and head, which the report keeps in BF16).
    assert_eq!(m.part("fp8_weight_copies"), 0.0);
    let linear_dense: f64 =
        dense_ops.iter().filter(|o| o.kind == fmperf_core::extended::ops::OpKind::Matmul).map(|o| o.parameters).sum();
    let linear_moe: f64 = moe
        .iter()
        .filter(|o| o.kind == fmperf_core::extended::ops::OpKind::Matmul && o.name != "moe_experts")
        .map(|o| o.parameters)
        .sum();
    let linear = 3.0 * linear_dense + 5.0 * (linear_moe + 4.0 * 3.0 * h * 2048.0);
    close(t.part("fp8_weight_copies"), linear * 2.0 * 1e-9, "TE's FP8 copies");
    close(t.allocated_gb - m.allocated_gb, linear * 2.0 * 1e-9, "allocated");
    // Nothing else moves: the inputs are cached in FP8 either way (§3.3.1).
    close(m.part("activations"), t.part("activations"), "activations");
    // The casts: per micro-batch the blocks' linear weights, read 2 B and written 1 B in the
    // forward and again in the backward, where Transformer Engine casts once per iteration.
    let cast = |ops: &[fmperf_core::extended::ops::Operation]| -> f64 {
        ops.iter().filter(|o| o.name == "fp8_weight_casts").map(|o| o.bytes).sum()
    };
    close(cast(&dense_ops), linear_dense * 3.0, "dense block's weight casts");
    assert!(online.totals.t > te.totals.t, "{} vs {} s", online.totals.t, te.totals.t);
    let rate = |o: &ExtendedOptions| fmperf_core::validate::moe_runs::predict_moe_row(&s, o).unwrap().0;
    let (r_online, r_te) = (rate(&s.options), rate(&te_opts));
    eprintln!("tokens/s per GPU: online {r_online:.0}, TE {r_te:.0}, measured {:.0}", s.measured);
    // The reading left open: §3.3.1 lists the weight gradients among the higher-precision parts
    // whose "impact can be minimized through efficient sharding across multiple DP ranks", while
    // §3.2 names ZeRO-1 and §3.3.3 keeps them in FP32 "for batch size accumulation". fmperf reads
    // ZeRO-1 (whole FP32 gradients); sharded like ZeRO-2 they would be 4/128 B per parameter
    // (4/2 B for the experts) and the first rank would fit.
    let z2 = ExtendedOptions { sharding: fmperf_core::extended::Sharding::Zero2, ..s.options };
    let sharded = evaluate(&s.workload, &hw, &s.layout, &z2).unwrap().memory_estimate;
    show("gradients sharded too (ZeRO-2 reading)", &sharded, hw.hbm_capacity_gb);
    close(sharded.part("gradients"), params * 4.0 / 128.0 * 1e-9, "sharded gradients");
    close(sharded.part("expert_gradients"), experts * 4.0 / 2.0 * 1e-9, "sharded expert gradients");
    assert!(m.device_gb > hw.hbm_capacity_gb && sharded.device_gb < hw.hbm_capacity_gb);
}
