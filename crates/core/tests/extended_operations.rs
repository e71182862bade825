//! Extended mode's per-operation detail: the operations of a block sum to the block's totals and,
//! multiplied by blocks and micro-batches, to the iteration's totals.

use fmperf_core::SystemParams;
use fmperf_core::extended::block_operations::block_operations;
use fmperf_core::extended::ops::OpKind;
use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Recompute, Workload, evaluate};

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-30), "{what}: {a} vs {b}");
}

#[test]
fn operations_sum_to_the_block_and_iteration_totals() {
    let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
    let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
    for recompute in Recompute::ALL {
        let opts = ExtendedOptions { recompute, ..ExtendedOptions::realistic() };
        // tp 4, cp 2, one pipeline stage, 4 replicas, 8 micro-batches of 1.
        let layout = Layout::placed(4, 2, 1, 4, 1, 32, 8);
        let ops = block_operations(&w, &hw, &layout, &opts).unwrap();
        let names: Vec<&str> = ops.iter().map(|o| o.name).collect();
        for n in ["qkv_proj", "attention", "cp_kv_exchange", "mlp_reduce_scatter", "mlp_out_proj"] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        assert_eq!(ops.iter().filter(|o| o.kind == OpKind::Matmul).count(), 4);
        assert!(ops.iter().filter(|o| o.kind == OpKind::Collective).all(|o| o.collective.is_some()));

        let e = evaluate(&w, &hw, &layout, &opts).unwrap();
        let (blocks, nmb) = (w.layers as f64, e.breakdown.microbatches as f64);
        assert_eq!(nmb, 8.0);
        let full = recompute == Recompute::Full;
        let fwd: f64 = ops.iter().map(|o| o.fwd.tflop).sum();
        let bwd: f64 = ops.iter().map(|o| o.bwd.tflop).sum();
        let tflop = fwd + bwd + if full { fwd } else { 0.0 };
        close(e.totals.flops_per_gpu, nmb * blocks * tflop, "iteration TFLOP");
        let compute: f64 = ops.iter().map(|o| o.fwd.compute_s + o.bwd.compute_s).sum::<f64>()
            + if full { ops.iter().map(|o| o.fwd.compute_s).sum() } else { 0.0 };
        close(e.totals.t_comp, nmb * blocks * compute, "iteration compute time");
        let comm: f64 =
            ops.iter().map(|o| o.fwd.tp_comm_s + o.fwd.cp_comm_s + o.bwd.tp_comm_s + o.bwd.cp_comm_s).sum::<f64>()
                + if full { ops.iter().map(|o| o.fwd.tp_comm_s + o.fwd.cp_comm_s).sum() } else { 0.0 };
        close(e.totals.t_tp_comm, nmb * blocks * comm, "iteration TP+CP communication");
        let params: f64 = ops.iter().map(|o| o.parameters).sum();
        close(e.breakdown.parameters, blocks * params * 4.0, "model parameters");
        close(params * 4.0, w.block_parameters(true, true), "block parameters");
        // One stage: one micro-batch in flight; full recomputation also holds one block's
        // activations while it is recomputed.
        let kept: f64 = ops.iter().map(|o| o.kept.under(recompute)).sum();
        let working = if full { ops.iter().map(|o| o.kept.none).sum() } else { 0.0 };
        close(e.memory.activations_gb, (blocks * kept + working) * 1e-9, "activation memory");
    }
}

#[test]
fn block_operations_validates_its_inputs() {
    let w = Workload::LLAMA3_8B;
    let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
    let bad = Layout::placed(3, 1, 1, 1, 1, 1, 8);
    assert_eq!(block_operations(&w, &hw, &bad, &ExtendedOptions::realistic()).unwrap_err().field(), Some("layout.tp"));
}
