//! The physics corrections of issue 16 §3, each checked against a hand computation.

use fmperf_core::SystemParams;
use fmperf_core::catalog::{self, MappingOptions, Precision};
use fmperf_core::extended::block::operations;
use fmperf_core::extended::data_parallel::{DpGroups, data_parallel_cost, grad_reduce_bytes};
use fmperf_core::extended::head::head_cost;
use fmperf_core::extended::ops::OpKind;
use fmperf_core::extended::pricing::Pricing;
use fmperf_core::extended::{
    ExtendedOptions, Fp8Recipe, Fusion, GradReduce, Hardware, HardwareChoices, Layout, Recompute, Sharding, Workload,
};
use fmperf_core::vocab::CollectiveKind;

fn gpt(seq: u64) -> Workload {
    Workload { gated_mlp: false, kv_heads: 32, ffn_hidden: 16384, vocab: None, seq_len: seq, ..Workload::LLAMA3_8B }
}

fn h200() -> Hardware {
    Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-30), "{what}: {a} vs {b}");
}

#[test]
fn sequence_parallelism_shards_every_kept_activation() {
    // GPT block (f = 4h, no GQA, 2-byte activations), flash attention, no recomputation:
    // norm inputs 2h, norm outputs feeding Q/K/V and the MLP 2h, Q/K/V 3h, attention output h,
    // MLP pre-activation 4h and activation output 4h = 16h elements per token = 32·s·b·h bytes,
    // all divided by t with sequence parallelism (Korthikanti et al.'s 34/t without dropout masks
    // and scores).
    let (s, h) = (2048.0, 4096.0);
    let hw = h200();
    for t in [1u64, 4, 8] {
        let opts = ExtendedOptions { recompute: Recompute::None, ..ExtendedOptions::realistic() };
        let layout = Layout::placed(t, 1, 1, 1, 1, 1, 8);
        let kept: f64 =
            operations(&gpt(2048), &layout, &Pricing { hw: &hw, opts: &opts }).iter().map(|o| o.kept.none).sum();
        close(kept, 32.0 / t as f64 * s * h, &format!("t = {t}"));
        // Without sequence parallelism the four token-wise tensors stay whole: (8 + 24/t)·sbh.
        let no_sp = ExtendedOptions { sequence_parallel: false, ..opts };
        let kept: f64 =
            operations(&gpt(2048), &layout, &Pricing { hw: &hw, opts: &no_sp }).iter().map(|o| o.kept.none).sum();
        close(kept, (8.0 + 24.0 / t as f64) * s * h, &format!("t = {t} without SP"));
    }
}

#[test]
fn gradients_are_reduced_in_fp32_for_bf16_training_by_default() {
    let hw = h200();
    let auto = ExtendedOptions { sharding: Sharding::Ddp, ..ExtendedOptions::realistic() };
    assert_eq!(grad_reduce_bytes(&hw, &auto), 4.0);
    let param = ExtendedOptions { grad_reduce: GradReduce::Param, ..auto };
    assert_eq!(grad_reduce_bytes(&hw, &param), 2.0);
    // One block of 1e9 parameters, 8 replicas in one NVLink domain, nothing to overlap with:
    // all-reduce = reduce-scatter + all-gather in bandwidth, each (7/8)·V/bf, V = 4 GB in FP32,
    // plus NCCL's Simple ring latency of 2·7 NVLink steps, 8.4 + 14·3.4 µs (extended::latency).
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let groups = DpGroups::of(&layout, &auto).unwrap();
    let cost = data_parallel_cost(&groups, &Pricing { hw: &hw, opts: &auto }, 1, 1e9, 0.0, 0.0);
    let net = &hw.net;
    let all_reduce = |v: f64| 2.0 * 7.0 / 8.0 * v / net.fast_bandwidth + (8.4 + 14.0 * 3.4) * 1e-6;
    close(cost.per_iteration_s, all_reduce(4.0), "FP32 all-reduce");
    let cost16 = data_parallel_cost(&groups, &Pricing { hw: &hw, opts: &param }, 1, 1e9, 0.0, 0.0);
    close(cost16.per_iteration_s, all_reduce(2.0), "16-bit all-reduce");
    // FP16 training reduces in FP16.
    let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let fp16 = Hardware::from_catalog(h100, Precision::Fp16, true, &MappingOptions::default()).unwrap();
    assert_eq!(grad_reduce_bytes(&fp16, &auto), 2.0);
}

#[test]
fn fsdp_on_a_torus_shards_inside_the_slice() {
    // TPU v5e, 2048 chips in slices of 256, FSDP of unstated size: shards of 256 inside the ICI
    // slice, replicated over the 8 slices (MaxText's defaults), not one group over the DCN.
    let v5e = catalog::find_system("google_tpu_v5e").unwrap();
    let hw = Hardware::from_catalog(v5e, Precision::Bf16, true, &MappingOptions::default()).unwrap();
    assert!(hw.torus);
    let opts = ExtendedOptions { sharding: Sharding::Zero3, ..ExtendedOptions::realistic() };
    let layout = Layout::placed(1, 1, 1, 2048, 1, 2048, hw.domain_size());
    let g = DpGroups::on(&layout, &opts, &hw).unwrap();
    assert_eq!((g.replicas, g.shard, g.shard_fast, g.shard_groups()), (2048, 256, 256, 8));
    // A GPU keeps the whole group; a stated group is kept on the torus too.
    assert_eq!(DpGroups::on(&layout, &opts, &h200()).unwrap().shard, 2048);
    let stated = ExtendedOptions { shard_group: Some(2048), ..opts };
    assert_eq!(DpGroups::on(&layout, &stated, &hw).unwrap().shard, 2048);
}

#[test]
fn tied_embeddings_count_once_on_a_single_stage() {
    let hw = h200();
    let opts = ExtendedOptions::realistic();
    let p = Pricing { hw: &hw, opts: &opts };
    let tied = Workload { tied_embeddings: true, ..Workload::LLAMA3_8B };
    let one = Layout::placed(2, 1, 1, 1, 1, 1, 8);
    assert_eq!(head_cost(&tied, &one, &p).parameters, 0.0);
    assert_eq!(head_cost(&Workload::LLAMA3_8B, &one, &p).parameters, 4096.0 * 128256.0 / 2.0);
    // With pipeline stages the last stage holds its own copy (Megatron-LM).
    let two = Layout::placed(2, 1, 2, 1, 1, 1, 8);
    assert_eq!(head_cost(&tied, &two, &p).parameters, 4096.0 * 128256.0 / 2.0);
}

#[test]
fn tensor_parallel_collectives_and_their_overlap() {
    let hw = h200();
    let w = gpt(2048);
    let layout = Layout::placed(8, 1, 1, 1, 1, 1, 8);
    let base = ExtendedOptions::realistic();
    let p = Pricing { hw: &hw, opts: &base };
    let ops = operations(&w, &layout, &p);
    let v = 2048.0 * 4096.0 * 2.0 * 1e-9;
    let ag = p.collective(CollectiveKind::AllGather, v, 8, 8);
    let rs = p.collective(CollectiveKind::ReduceScatter, v, 8, 8);
    let find = |ops: &[fmperf_core::extended::ops::Operation], n: &str| *ops.iter().find(|o| o.name == n).unwrap();
    let entry = find(&ops, "attn_all_gather");
    let qkv = find(&ops, "qkv_proj");
    // Forward: the all-gather exposed; backward: the re-gather of the sharded input overlapped
    // with the input-gradient GEMM and the reduce-scatter with the weight-gradient GEMM.
    close(entry.fwd.tp_comm_s, ag, "entry forward");
    let hidden = |t: f64| (t - qkv.fwd.compute_s).max(0.0);
    close(entry.bwd.tp_comm_s + 1e-30, hidden(ag) + hidden(rs) + 1e-30, "entry backward");
    let exit = find(&ops, "attn_reduce_scatter");
    close(exit.fwd.tp_comm_s, rs, "exit forward");
    close(exit.bwd.tp_comm_s, ag, "exit backward");
    // With --tp-comm-overlap every collective hides behind its GEMM.
    let over = ExtendedOptions { tp_comm_overlap: true, ..base };
    let ops = operations(&w, &layout, &Pricing { hw: &hw, opts: &over });
    let out = find(&ops, "out_proj");
    close(
        find(&ops, "attn_reduce_scatter").fwd.tp_comm_s + 1e-30,
        (rs - out.fwd.compute_s).max(0.0) + 1e-30,
        "overlap",
    );
    assert!(ops.iter().filter(|o| o.kind == OpKind::Collective).all(|o| o.fwd.tp_comm_s <= ag));
}

#[test]
fn fp8_weight_casts_by_recipe() {
    let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let hw = Hardware::from_catalog(h100, Precision::Fp8, true, &MappingOptions::default()).unwrap();
    let w = gpt(2048);
    let layout = Layout::placed(1, 1, 1, 1, 1, 1, 8);
    let te = ExtendedOptions {
        hardware: HardwareChoices { precision: Precision::Fp8, ..HardwareChoices::realistic() },
        ..ExtendedOptions::realistic()
    };
    let ops = operations(&w, &layout, &Pricing { hw: &hw, opts: &te });
    assert!(ops.iter().any(|o| o.name == "fp8_casts") && !ops.iter().any(|o| o.name == "fp8_weight_casts"));
    // torchao: every forward (and backward) reads the 16-bit weight and writes an FP8 one: 3 B per
    // linear-layer parameter, 12h² parameters in a GPT block.
    let ao = ExtendedOptions { fp8_recipe: Fp8Recipe::Torchao, ..te };
    let ops = operations(&w, &layout, &Pricing { hw: &hw, opts: &ao });
    let cast = ops.iter().find(|o| o.name == "fp8_weight_casts").unwrap();
    close(cast.bytes, 12.0 * 4096.0 * 4096.0 * 3.0, "torchao weight-cast bytes");
}

#[test]
fn eager_kernels_move_each_primitives_tensors() {
    // Llama 3 8B block (h = 4096, Q 4096 and K 1024 wide, SwiGLU f = 14336), one device, one
    // sequence of 2048 tokens, BF16 (2 B per element). Forward element-wise elements per token:
    // fused: two norms 2·2h + SwiGLU 3f + two residual adds 2·3h
    //        = 16 384 + 43 008 + 24 576 = 83 968;
    // eager: two norms 2·18h (upcast, pow, mean, ·rsqrt, downcast, ·weight) + RoPE 10·(4096 + 1024)
    //        + SwiGLU 5f (silu, mul) + residuals 6h = 147 456 + 51 200 + 71 680 + 24 576 = 294 912.
    let hw = h200();
    let w = Workload { seq_len: 2048, ..Workload::LLAMA3_8B };
    let layout = Layout::placed(1, 1, 1, 1, 1, 1, 8);
    let fused = ExtendedOptions::realistic();
    assert_eq!(fused.fusion, Fusion::Fused, "fused by default");
    let eager = ExtendedOptions { fusion: Fusion::Eager, ..fused };
    let elementwise = |opts: &ExtendedOptions| -> (f64, f64, f64) {
        let ops = operations(&w, &layout, &Pricing { hw: &hw, opts });
        let ew = ops.iter().filter(|o| o.kind == OpKind::Elementwise);
        let bytes = ew.clone().map(|o| o.bytes).sum();
        let fwd = ew.clone().map(|o| o.fwd.memory_s).sum();
        let bwd = ew.map(|o| o.bwd.memory_s).sum();
        (bytes, fwd, bwd)
    };
    let (fused_bytes, fused_fwd, fused_bwd) = elementwise(&fused);
    let (eager_bytes, eager_fwd, eager_bwd) = elementwise(&eager);
    close(fused_bytes, 83_968.0 * 2048.0 * 2.0, "fused bytes");
    close(eager_bytes, 294_912.0 * 2048.0 * 2.0, "eager bytes");
    // Memory-bound time scales with the bytes, backward twice the forward, in both modes.
    close(eager_fwd / fused_fwd, 294_912.0 / 83_968.0, "eager / fused forward time");
    close(eager_bwd, 2.0 * eager_fwd, "eager backward");
    close(fused_bwd, 2.0 * fused_fwd, "fused backward");
    // The matmuls and attention are the same kernels either way.
    let compute = |opts: &ExtendedOptions| -> f64 {
        operations(&w, &layout, &Pricing { hw: &hw, opts }).iter().map(|o| o.fwd.compute_s).sum()
    };
    close(compute(&eager), compute(&fused), "compute");
    // The switch's text form.
    assert_eq!(eager.to_text(), "fusion=eager");
    assert_eq!(ExtendedOptions::from_text("fusion=compiled").unwrap().fusion, Fusion::Fused);
    assert_eq!(ExtendedOptions::from_text("fusion=eager").unwrap(), eager);
    assert!(ExtendedOptions::from_text("fusion=maybe").is_err());
}

#[test]
fn flashattention2_kernels_run_slower_on_hopper_and_later() {
    use fmperf_core::extended::AttentionKernel;
    use fmperf_core::extended::hardware::has_async_mma;
    // Llama 3 8B block (32 query heads of 128), one sequence of 8192 tokens on one H100 SXM5,
    // BF16. Causal flash attention forward: 4·s·s·a·d/2 = 4·8192²·32·128/2 = 0.5498 TFLOP, at
    // η_att times the kernel benchmark's rate at 8k tokens (FlashAttention-3 paper, Fig. 5–6:
    // cuDNN 3.5/(1/600 + 2.5/518) = 539.05 TFLOP/s, FlashAttention-2 3.5/(1/370 + 2.5/318) =
    // 331.30, of the H100's MAMF 794.5), causal (8192/8320: the diagonal tiles), times
    // (8192/(8192 + c_att))² with the shipped c_att = 1024, i.e. (8/9)²: FlashAttention-2 at
    // 0.615 of cuDNN's rate.
    let cudnn: f64 = 3.5 / (1.0 / 600.0 + 2.5 / 518.0) / 794.5 * 8192.0 / 8320.0;
    let fa2: f64 = 3.5 / (1.0 / 370.0 + 2.5 / 318.0) / 794.5 * 8192.0 / 8320.0;
    assert!((fa2 / cudnn - 0.615).abs() < 5e-4, "ratio from the paper's rates: {}", fa2 / cudnn);
    let (s, a, d) = (8192.0, 32.0, 128.0);
    let tflop = 4.0 * s * s * a * d / 2.0 * 1e-12;
    let w = Workload { seq_len: 8192, ..Workload::LLAMA3_8B };
    let layout = Layout::placed(1, 1, 1, 1, 1, 1, 8);
    let attention_s = |id: &str, kernel: AttentionKernel| -> (f64, f64) {
        let sys = catalog::find_system(id).unwrap();
        let hw = Hardware::from_catalog(sys, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        let opts = ExtendedOptions { attention_kernel: kernel, ..ExtendedOptions::realistic() };
        let ops = operations(&w, &layout, &Pricing { hw: &hw, opts: &opts });
        let att = ops.iter().find(|o| o.kind == OpKind::Attention).unwrap();
        (att.fwd.compute_s, att.fwd.tflop)
    };
    let native = ExtendedOptions::realistic();
    assert_eq!(native.attention_kernel, AttentionKernel::Native, "native by default");
    let rate = native.hardware.attention_efficiency * 794.5 * (s / (s + native.hardware.attention_half_seq)).powi(2);
    let native_rate = rate * cudnn;
    let (t_native, f) = attention_s("nvidia_h100_sxm5_80gb", AttentionKernel::Native);
    close(f, tflop, "attention TFLOP");
    close(t_native, tflop / native_rate, "native attention forward [s]");
    let (t_fa2, _) = attention_s("nvidia_h100_sxm5_80gb", AttentionKernel::Fa2);
    close(t_fa2, tflop / (rate * fa2), "fa2 attention forward on H100 [s]");
    // Hopper and Blackwell parts have the asynchronous MMA FlashAttention-2 does not use; Ampere,
    // Volta, AMD and TPUs do not (FlashAttention-2, CK or Pallas is their own kernel): no change.
    for id in [
        "nvidia_h100_sxm5_80gb",
        "nvidia_h200_sxm_141gb",
        "nvidia_h800_sxm5_80gb",
        "nvidia_b200_hgx",
        "nvidia_gb200_nvl72",
    ] {
        assert!(has_async_mma(catalog::find_system(id).unwrap()), "{id}");
    }
    for id in ["nvidia_a100_sxm4_80gb", "nvidia_v100_sxm2", "amd_mi300x", "google_tpu_v5p"] {
        assert!(!has_async_mma(catalog::find_system(id).unwrap()), "{id}");
    }
    for id in ["nvidia_a100_sxm4_80gb", "google_tpu_v5p", "amd_mi300x"] {
        close(attention_s(id, AttentionKernel::Fa2).0, attention_s(id, AttentionKernel::Native).0, id);
    }
    // The switch's text form.
    let fa2 = ExtendedOptions { attention_kernel: AttentionKernel::Fa2, ..native };
    assert_eq!(fa2.to_text(), "attention_kernel=fa2");
    assert_eq!(ExtendedOptions::from_text("attention_kernel=sdpa").unwrap(), fa2);
    assert_eq!(ExtendedOptions::from_text("attention_kernel=cudnn").unwrap(), native);
    let e = ExtendedOptions::from_text("attention_kernel=fa9").unwrap_err();
    assert_eq!(e.field(), Some("ext.attention_kernel"));
}
