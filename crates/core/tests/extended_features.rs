//! Each switch of extended mode against hand-computed values, through the public evaluation.

use fmperf_core::SystemParams;
use fmperf_core::catalog::{self, MappingOptions, Precision};
use fmperf_core::extended::{
    ExtendedOptions, Hardware, HardwareChoices, Layout, ModelFeatures, Recompute, Sharding, StageSplitRule, Workload,
    evaluate,
};

/// Llama 3 8B at 4096 tokens on one H100 node.
fn h100(precision: Precision, measured: bool) -> Hardware {
    let sys = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    Hardware::from_catalog(sys, precision, measured, &MappingOptions::default()).unwrap()
}

fn base() -> ExtendedOptions {
    ExtendedOptions {
        hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
        recompute: Recompute::None,
        ..ExtendedOptions::realistic()
    }
}

fn llama(seq: u64) -> Workload {
    Workload { seq_len: seq, ..Workload::LLAMA3_8B }
}

/// One device, one micro-batch of one sequence, one iteration.
fn single() -> Layout {
    Layout::placed(1, 1, 1, 1, 1, 1, 8)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn swiglu_adds_the_third_matrix_forward_and_backward() {
    let hw = h100(Precision::Bf16, true);
    let on = evaluate(&llama(4096), &hw, &single(), &base()).unwrap();
    let off_opts = ExtendedOptions { model: ModelFeatures { gated_mlp: false, ..base().model }, ..base() };
    let off = evaluate(&llama(4096), &hw, &single(), &off_opts).unwrap();
    // Gate matrix: 2·s·h·f forward, twice that backward, in each of the 32 blocks.
    let (s, h, f) = (4096.0, 4096.0, 14336.0);
    let expect = 32.0 * 3.0 * 2.0 * s * h * f * 1e-12;
    assert!(rel(on.totals.flops_per_gpu - off.totals.flops_per_gpu, expect) < 1e-9);
}

#[test]
fn causal_attention_halves_logits_and_attend() {
    let hw = h100(Precision::Bf16, true);
    let causal = evaluate(&llama(8192), &hw, &single(), &base()).unwrap();
    let full_opts = ExtendedOptions { model: ModelFeatures { causal: false, ..base().model }, ..base() };
    let full = evaluate(&llama(8192), &hw, &single(), &full_opts).unwrap();
    // Full attention forward: 4·s²·a·d; flash backward 2.5×; the causal mask saves half of all of it.
    let s = 8192.0;
    let attention = 32.0 * 4.0 * s * s * 4096.0 * (1.0 + 2.5) * 1e-12;
    assert!(rel(full.totals.flops_per_gpu - causal.totals.flops_per_gpu, attention / 2.0) < 1e-9);
}

#[test]
fn full_recompute_adds_one_forward_pass() {
    let hw = h100(Precision::Bf16, true);
    let w = llama(4096);
    let none = evaluate(&w, &hw, &single(), &base()).unwrap();
    let full = evaluate(&w, &hw, &single(), &ExtendedOptions { recompute: Recompute::Full, ..base() }).unwrap();
    // Block forward: linear 2·s·(h·(a·d + 2·kv·d) + a·d·h + 3·h·f), attention 4·s²·a·d / 2.
    let (s, h, f) = (4096.0, 4096.0, 14336.0);
    let fwd = 2.0 * s * (h * (h + 2.0 * 1024.0) + h * h + 3.0 * h * f) + 2.0 * s * s * h;
    assert!(rel(full.totals.flops_per_gpu - none.totals.flops_per_gpu, 32.0 * fwd * 1e-12) < 1e-9);
    assert!(full.breakdown.t_recompute_s > 0.0 && none.breakdown.t_recompute_s == 0.0);
    assert!(full.totals.acts_mem < none.totals.acts_mem);
}

#[test]
fn zero_stages_shard_weights_gradients_and_optimizer_by_dp() {
    let hw = h100(Precision::Bf16, true);
    let w = llama(4096);
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let mem = |s: Sharding| evaluate(&w, &hw, &layout, &ExtendedOptions { sharding: s, ..base() }).unwrap().totals;
    let (z0, z1, z2, z3) = (mem(Sharding::Ddp), mem(Sharding::Zero1), mem(Sharding::Zero2), mem(Sharding::Zero3));
    // 2 B weights, 4 B gradients, 12 B optimizer states per parameter.
    assert!(
        rel(z0.wts_grad_mem, 2.0 * z0.wts_mem) < 1e-12 && rel(z0.wts_optimizer_states_mem, 6.0 * z0.wts_mem) < 1e-12
    );
    assert!(rel(z1.wts_optimizer_states_mem, z0.wts_optimizer_states_mem / 8.0) < 1e-12);
    assert_eq!(z1.wts_grad_mem, z0.wts_grad_mem);
    assert!(rel(z2.wts_grad_mem, z0.wts_grad_mem / 8.0) < 1e-12);
    // ZeRO-3/FSDP (changed on purpose, issue 18 §1): FP32 sharded parameters (the master copy,
    // 4 B / dp) and, gathered at the loss in 16 bits, the last block and FSDP's root unit (the
    // embedding and output head, never resharded after the forward).
    let gathered_bytes = (w.block_parameters(true, true) + 2.0 * w.vocab_parameters()) * 2.0 * 1e-9;
    assert!(rel(z3.wts_mem, 2.0 * z0.wts_mem / 8.0 + gathered_bytes) < 1e-12);
    // … and pays its gathers every micro-batch.
    assert!(z3.t_dp_comm > z1.t_dp_comm);
}

#[test]
fn fp8_runs_the_linear_layers_at_the_fp8_ceiling() {
    let w = llama(4096);
    // Attention at its rate without the sequence-size factor, so that it can be taken out by hand.
    let base =
        || ExtendedOptions { hardware: HardwareChoices { attention_half_seq: 0.0, ..base().hardware }, ..base() };
    let bf = evaluate(&w, &h100(Precision::Bf16, true), &single(), &base()).unwrap();
    let f8_opts =
        ExtendedOptions { hardware: HardwareChoices { precision: Precision::Fp8, ..base().hardware }, ..base() };
    let f8 = evaluate(&w, &h100(Precision::Fp8, true), &single(), &f8_opts).unwrap();
    assert_eq!(bf.totals.flops_per_gpu, f8.totals.flops_per_gpu);
    // Linear-layer compute scales by the measured ceilings 794.5 → 1402.6; attention stays in BF16.
    let attention_s = |e: &fmperf_core::extended::ExtendedEvaluation| {
        let opts = base();
        let s = 4096.0;
        // The cuDNN kernel's rate at 4k tokens (FlashAttention-3 paper: 3.5/(1/609 + 2.5/499) =
        // 526.15 TFLOP/s of the H100's 794.5), causal (4096/4224).
        let kernel = 3.5 / (1.0 / 609.0 + 2.5 / 499.0) / 794.5 * s / (s + 128.0);
        32.0 * 2.0 * s * s * 4096.0 * 3.5 * 1e-12 / (opts.hardware.attention_efficiency * 794.5 * kernel)
            * e.breakdown.microbatches as f64
    };
    let linear_bf = bf.totals.t_comp - attention_s(&bf);
    let linear_f8 = f8.totals.t_comp - attention_s(&f8);
    assert!(rel(linear_bf / linear_f8, 1402.6 / 794.5) < 1e-9, "{}", linear_bf / linear_f8);
}

#[test]
fn measured_ceiling_replaces_the_datasheet_peak() {
    let w = llama(4096);
    let measured = evaluate(&w, &h100(Precision::Bf16, true), &single(), &base()).unwrap();
    let peak_opts =
        ExtendedOptions { hardware: HardwareChoices { measured_ceiling: false, ..base().hardware }, ..base() };
    let peak = evaluate(&w, &h100(Precision::Bf16, false), &single(), &peak_opts).unwrap();
    assert!(rel(measured.totals.t_comp / peak.totals.t_comp, 989.4 / 794.5) < 1e-9);
}

#[test]
fn interleaving_divides_the_bubble_and_uneven_stages_keep_every_block() {
    let hw = Hardware::from_params(&SystemParams::a100().with_domain_size(8), true);
    let w = Workload { vocab: None, ..Workload::from_shape(&fmperf_core::ModelShape::GPT3) };
    let layout = Layout::placed(8, 1, 8, 2, 1, 64, 8);
    let plain = evaluate(&w, &hw, &layout, &base()).unwrap();
    let inter = evaluate(&w, &hw, &layout, &ExtendedOptions { interleave: 3, ..base() }).unwrap();
    // Bubble = (pp − 1)/v slots; the steady state's slot changes only by the overlapped messages,
    // but the bubble's slots (warm-up and cool-down, whose exchanges Megatron waits for) carry all
    // 2v = 6 messages against plain 1F1B's 2: 4 messages more per bubble slot.
    let slot = |e: &fmperf_core::extended::ExtendedEvaluation| e.totals.t_bubble / (7.0 / 3.0);
    assert!(
        rel(
            plain.totals.t_bubble,
            7.0 * (plain.totals.t - plain.totals.t_bubble - plain.totals.t_dp_comm - plain.breakdown.t_optimizer_s)
                / 32.0
        ) < 1e-6
    );
    let message = inter.breakdown.message_s;
    assert!(message > 0.0 && plain.breakdown.message_s == message);
    assert!(rel(slot(&inter), plain.totals.t_bubble / 7.0 + 4.0 * message) < 1e-9);
    assert!(inter.totals.t_bubble < plain.totals.t_bubble);
    // 100 blocks on 8 stages: the busiest holds 13 (the reference would keep 8 × 12 = 96).
    let deep = Workload { layers: 100, ..w };
    let uneven = evaluate(&deep, &hw, &layout, &base()).unwrap();
    assert_eq!((uneven.breakdown.stages.most, uneven.breakdown.stages.last), (13, 12));
    let strict = ExtendedOptions { uneven_stages: false, ..base() };
    assert_eq!(evaluate(&deep, &hw, &layout, &strict).unwrap_err().field(), Some("layout.pp"));
}

#[test]
fn context_parallel_ring_hides_its_transfers() {
    let hw = h100(Precision::Bf16, true);
    let w = llama(65536);
    let layout = Layout::placed(1, 4, 1, 2, 1, 2, 8);
    let ring = evaluate(&w, &hw, &layout, &base()).unwrap();
    let gather = evaluate(&w, &hw, &layout, &ExtendedOptions { cp_ring_overlap: false, ..base() }).unwrap();
    assert!(ring.breakdown.t_cp_comm_s < gather.breakdown.t_cp_comm_s);
    assert!(gather.breakdown.t_cp_comm_s > 0.0);
    // Each rank holds a quarter of the sequence: a quarter of the block work of one sequence.
    let one = evaluate(&w, &hw, &Layout::placed(1, 1, 1, 2, 1, 2, 8), &base()).unwrap();
    assert!(rel(ring.totals.flops_per_gpu * 4.0, one.totals.flops_per_gpu) < 1e-9);
}

#[test]
fn grouped_query_attention_narrows_the_kv_projections() {
    let hw = h100(Precision::Bf16, true);
    let w = llama(4096);
    let gqa = evaluate(&w, &hw, &single(), &base()).unwrap();
    let mha_opts =
        ExtendedOptions { model: ModelFeatures { grouped_query_attention: false, ..base().model }, ..base() };
    let mha = evaluate(&w, &hw, &single(), &mha_opts).unwrap();
    // K and V of 4096 instead of 1024 columns: 2·s·h·2·3072 forward, ×3 with the backward.
    let expect = 32.0 * 3.0 * 2.0 * 4096.0 * 4096.0 * 2.0 * 3072.0 * 1e-12;
    assert!(rel(mha.totals.flops_per_gpu - gqa.totals.flops_per_gpu, expect) < 1e-9);
}

#[test]
fn embeddings_and_head_add_the_vocabulary_matmul_and_parameters() {
    let hw = h100(Precision::Bf16, true);
    let w = llama(4096);
    let with = evaluate(&w, &hw, &single(), &base()).unwrap();
    let without_opts =
        ExtendedOptions { model: ModelFeatures { embeddings_and_head: false, ..base().model }, ..base() };
    let without = evaluate(&w, &hw, &single(), &without_opts).unwrap();
    let expect = 3.0 * 2.0 * 4096.0 * 4096.0 * 128256.0 * 1e-12;
    assert!(rel(with.totals.flops_per_gpu - without.totals.flops_per_gpu, expect) < 1e-9);
    assert!(rel(with.breakdown.parameters, 8.03e9) < 0.01, "{}", with.breakdown.parameters);
}

#[test]
fn memory_overheads_are_a_documented_margin() {
    // Changed on purpose (issue 18 §1): the margin is now the allocator's fitted fragmentation
    // (reserved) plus the CUDA context and NCCL buffers per communicator (device level).
    use fmperf_core::extended::memory::{CUDA_CONTEXT_GB, FRAGMENTATION, NCCL_BUFFERS_GB};
    let hw = h100(Precision::Bf16, true);
    let w = llama(4096);
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let bare = evaluate(&w, &hw, &layout, &base()).unwrap();
    let with_opts =
        ExtendedOptions { hardware: HardwareChoices { memory_overheads: true, ..base().hardware }, ..base() };
    let with = evaluate(&w, &hw, &layout, &with_opts).unwrap();
    // One communicator (the 8 data-parallel replicas).
    let expect = FRAGMENTATION * bare.mem_gb + CUDA_CONTEXT_GB + NCCL_BUFFERS_GB;
    assert!(rel(with.mem_gb - bare.mem_gb, expect) < 1e-9);
    assert!(rel(with.breakdown.overhead_gb, expect) < 1e-9);
}

#[test]
fn never_panics_on_arbitrary_layouts_and_options() {
    let specials = [0u64, 1, 2, 3, 7, 8, 64, 4096, 1 << 20, 1 << 32, u64::MAX / 3, u64::MAX];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let hw = h100(Precision::Bf16, true);
    let workloads = [
        llama(4096),
        Workload::from_shape(&fmperf_core::ModelShape::VIT_ERA5),
        Workload {
            seq_len: 8,
            hidden: 16,
            heads: 4,
            kv_heads: 2,
            head_dim: 4,
            layers: 3,
            ffn_hidden: 8,
            gated_mlp: true,
            vocab: Some(5),
            moe: None,
            mla: None,
            mtp_layers: 0,
            tied_embeddings: false,
            sliding_window: None,
        },
    ];
    let mut evaluated = 0;
    for i in 0..20_000 {
        let mut pick = || {
            let r = next();
            if r % 3 == 0 { specials[(r / 3 % specials.len() as u64) as usize] } else { 1 << (r % 7) }
        };
        let mut layout = Layout {
            tp: pick(),
            cp: pick(),
            pp: pick(),
            dp: pick(),
            mbs: pick(),
            global_batch: pick(),
            placement: fmperf_core::extended::Placement { tp: pick(), cp: pick(), dp: pick(), pp: pick() },
            ep: pick(),
            etp: pick(),
        };
        if i % 3 != 0 {
            // A consistent layout of random degrees, placed on the node, so that many evaluate.
            let l = layout;
            let batch = l.dp.saturating_mul(l.mbs).saturating_mul(1 + (pick() % 4));
            layout = Layout::placed(l.tp % 9, l.cp % 5, l.pp % 9, l.dp % 65, l.mbs % 5, batch, 8);
        }
        let opts = ExtendedOptions {
            interleave: pick(),
            shard_group: if i % 5 == 0 { Some(pick()) } else { None },
            sharding: Sharding::ALL[i % 4],
            recompute: Recompute::ALL[i % 3],
            ..ExtendedOptions::realistic()
        };
        if let Ok(e) = evaluate(&workloads[i % 3], &hw, &layout, &opts) {
            assert!(e.totals.t.is_finite() && e.totals.t > 0.0, "{layout:?} {opts:?}");
            assert!(e.mem_gb.is_finite() && e.mem_gb > 0.0);
            evaluated += 1;
        }
    }
    assert!(evaluated > 50, "only {evaluated} random layouts were valid");
}

#[test]
fn ends_counted_as_blocks_lighten_the_end_stages() {
    // BLOOM-176B's shape and its 02-28 trial layout (tp 4, pp 12, dp 8, micro-batch 2).
    let hw = Hardware::from_params(&SystemParams::a100().with_domain_size(8), true);
    let w = Workload {
        layers: 70,
        hidden: 14336,
        heads: 112,
        kv_heads: 112,
        head_dim: 128,
        ffn_hidden: 4 * 14336,
        seq_len: 2048,
        gated_mlp: false,
        vocab: Some(250_880),
        tied_embeddings: true,
        ..Workload::from_shape(&fmperf_core::ModelShape::GPT3)
    };
    let layout = Layout::placed(4, 1, 12, 8, 2, 2048, 8);
    let full = ExtendedOptions { recompute: Recompute::Full, ..base() };
    let plain = evaluate(&w, &hw, &layout, &full).unwrap();
    let ends = ExtendedOptions { stage_split: StageSplitRule::EndsAsBlocks, ..full };
    let split = evaluate(&w, &hw, &layout, &ends).unwrap();
    // Blocks alone: 70 over 12, the first ten stages take 6. Ends counted: 72 units over 12
    // stages, the end stages hold 5 blocks and an embedding, the others 6.
    assert_eq!(plain.breakdown.stages, fmperf_core::extended::pipeline::StageSplit { first: 6, last: 5, most: 6 });
    assert_eq!(split.breakdown.stages, fmperf_core::extended::pipeline::StageSplit { first: 5, last: 5, most: 6 });
    // The first stage holds one block's states and checkpoints fewer: its peak drops by about
    // one block's share (616 M parameters on a device) and never rises.
    let drop = plain.memory_estimate.allocated_gb - split.memory_estimate.allocated_gb;
    let block_params = 12.0 * 14336.0 * 14336.0 / 4.0;
    assert!(drop > block_params * 6.0e-9 && drop < block_params * 12.0e-9, "dropped {drop} GB");
    // The busiest device's work shrinks too: no device holds an embedding on top of 6 blocks.
    assert!(split.totals.t < plain.totals.t);
    // Counting an end needs uneven stages (the error names the switch).
    let strict = ExtendedOptions { uneven_stages: false, ..ends };
    assert_eq!(evaluate(&w, &hw, &layout, &strict).unwrap_err().field(), Some("stage_split"));
    // One stage counts no ends.
    let single = Layout::placed(4, 1, 1, 8, 2, 2048, 8);
    let a = evaluate(&w, &hw, &single, &full).unwrap();
    let b = evaluate(&w, &hw, &single, &ends).unwrap();
    assert_eq!(a.totals.t, b.totals.t);
    assert_eq!(a.memory_estimate.device_gb, b.memory_estimate.device_gb);
}
