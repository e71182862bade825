//! How MoE measured-run rows are read where a field's plain value is not what ran: a per-device
//! batch with tensor parallelism, MaxText's `custom` remat policy, a recompute value that opens
//! with "none", a torchtitan FP8 run (torchao) and its compiled loss, and a stated configuration
//! that cannot fit its device (evaluated with the least recomputation that could have run).

use fmperf_core::extended::{Fp8Recipe, Recompute};
use fmperf_core::validate::moe_runs::{MEMORY_CONTRADICTION_FACTOR, MOE_RUNS_JSON, MoeRunSetup, interpret_moe_row};
use serde_json::{Value, json};

fn shipped(id: &str) -> Value {
    let doc: Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    doc["rows"].as_array().unwrap().iter().find(|r| r["id"] == id).cloned().unwrap()
}

/// The shipped row `id` as read.
fn read(id: &str) -> MoeRunSetup {
    interpret_moe_row(&shipped(id)).unwrap()
}

#[test]
fn a_per_device_batch_with_tensor_parallelism_is_the_replicas_tp_times_it() {
    // Maverick on 128 chips, tp 4 × fsdp 32: per-device batch 4, no accumulation, global 512.
    // dp·grad_accum·m = 32·1·4 = 128 ≠ 512, but ·tp = 512: each replica of 4 chips runs 16
    // sequences in one micro-batch (not 4 micro-batches of 4).
    let row = shipped("v5p_llama4maverick_128_bf16");
    let s = interpret_moe_row(&row).unwrap();
    assert_eq!((s.layout.mbs, s.layout.microbatches()), (16, 1));
    assert!(s.notes.iter().any(|n| n.contains("per device")), "{:?}", s.notes);
    // A row whose figures agree keeps its micro-batch (Megatron: 4096 = 128 · 16 · 2).
    let s = read("mb2602_dsv3_gb300_mxfp8_256");
    assert_eq!((s.layout.mbs, s.layout.microbatches()), (2, 16));
    // Without a stated accumulation nothing contradicts the stated micro-batch.
    let mut row = row;
    row["batch"]["grad_accum"] = Value::Null;
    assert_eq!(interpret_moe_row(&row).unwrap().layout.mbs, 4);
}

#[test]
fn recomputation_words_are_read_by_the_shared_reader() {
    // MaxText `remat_policy=custom` (every named tensor rematerialised unless listed): full;
    // "none (… --recompute-num-layers 0)" (a block of 0 layers): none; Megatron's selective
    // modules: selective.
    let levels = [
        ("v5p_dsv3_512_bf16", Recompute::Full),
        ("sm_deepseekv3_l4_tp1_ep8_pp1_dp8_mbc8_cef", Recompute::None),
        ("mb2602_dsv3_b200_mxfp8_256", Recompute::Selective),
    ];
    for (id, level) in levels {
        assert_eq!(read(id).options.recompute, level, "{id}");
    }
}

#[test]
fn torchtitan_fp8_is_torchao() {
    assert_eq!(read("tt_llama4scout_gb200_mxfp8_256").options.fp8_recipe, Fp8Recipe::Torchao);
    // Megatron-Bridge's rows are read as its dense rows are: its FP8 and MXFP8 mixed-precision
    // recipes set `fp8_param_gather=True` (`bf16_with_mxfp8_mixed` in
    // `megatron/bridge/training/mixed_precision.py`, with `reuse_grad_buf_for_mxfp8_param_ag`).
    assert_eq!(read("mb2602_dsv3_b200_mxfp8_256").options.fp8_recipe, Fp8Recipe::TransformerEngineFp8Weights);
}

#[test]
fn torchtitan_compiles_its_loss_with_the_model() {
    // "torch.compile enabled" in torchtitan's Scout rows (the source dated 2025-12-03/2026-08-21):
    // `compile.components` defaults to ["model", "loss"] (torchtitan/config/job_config.py
    // @b3da1a2d8 lines 659–661), read as the dense rows read it. The loss of 81,920 tokens ×
    // 202,048 logits is 2 B + 4 B per token (33.1 GB), not 10 B (165.5 GB): `loss_memory`'s test.
    for id in ["tt_llama4scout_gb200_bf16_256", "tt_llama4scout_gb200_mxfp8_256"] {
        let s = read(id);
        assert!(s.options.compiled_loss, "{id}");
        assert!(s.notes.iter().any(|n| n.contains("compiles its loss")), "{:?}", s.notes);
    }
    // Megatron-Bridge and MaxText rows do not compile a PyTorch loss.
    for id in ["mb2602_dsv3_b200_mxfp8_256", "v5p_dsv3_512_bf16"] {
        assert!(!read(id).options.compiled_loss, "{id}");
    }
}

#[test]
fn one_grouped_kernel_is_read_from_the_dispatcher_and_framework_words() {
    // MaxText's megablox GMM and torchtitan's torch._grouped_mm: one kernel for the local
    // experts; Megatron's grouped GEMM (Transformer Engine): one GEMM issued per expert.
    for (id, one) in
        [("v5p_dsv3_512_bf16", true), ("tt_llama4scout_gb200_bf16_256", true), ("mb2602_qwen3_30b_b200_mxfp8_8", false)]
    {
        assert_eq!(read(id).options.moe.one_grouped_kernel, one, "{id}");
    }
}

#[test]
fn a_configuration_that_cannot_fit_is_evaluated_with_the_recomputation_that_could() {
    // Llama 4 Scout, 10 × 8,192 tokens per 186 GB GB200 with "none": the estimate without
    // recomputation is ~1 TB per device (> 1.5 × 186 GB): evaluated with full recomputation, noted.
    let row = shipped("tt_llama4scout_gb200_bf16_256");
    assert_eq!(row["parallel"]["recompute"], json!("none (activation checkpointing mode 'none')"));
    let s = interpret_moe_row(&row).unwrap();
    assert_eq!(s.options.recompute, Recompute::Full);
    let note = s.notes.iter().find(|n| n.contains("cannot have held")).expect("noted");
    assert!(note.contains(&format!("{MEMORY_CONTRADICTION_FACTOR}×")), "{note}");
    // One sequence per device fits: the stated "none" stands.
    let mut small = row.clone();
    small["batch"]["micro_batch"] = json!(1);
    small["batch"]["global_batch_seqs"] = json!(256);
    let s = interpret_moe_row(&small).unwrap();
    assert_eq!(s.options.recompute, Recompute::None);
    assert!(!s.notes.iter().any(|n| n.contains("cannot have held")));
}

#[test]
fn megatron_recompute_modules_are_read_from_the_recompute_words() {
    use fmperf_core::extended::moe::RecomputeModules;
    let none = RecomputeModules::default();
    let cases = [
        ("selective: mla_up_proj", RecomputeModules { mla_up_proj: true, ..none }),
        ("selective: layernorm, moe_act", RecomputeModules { moe_act: true, layernorm: true, ..none }),
        // `moe` as a word of its own is the whole MoE layer, not its activation.
        ("selective: layernorm, moe", RecomputeModules { moe: true, layernorm: true, ..none }),
        // DeepSeek-V3's words: every RMSNorm and the MLA up-projections.
        (
            "rmsnorm + MLA up-projection recomputed in backward",
            RecomputeModules { mla_up_proj: true, layernorm: true, ..none },
        ),
        (
            "--recompute-granularity selective --recompute-modules moe_act moe",
            RecomputeModules { moe_act: true, moe: true, ..none },
        ),
        // Modules act only under selective recomputation.
        ("full", none),
    ];
    let row = shipped("mb2602_dsv3_b200_mxfp8_256");
    for (words, want) in cases {
        let mut r = row.clone();
        r["parallel"]["recompute"] = json!(words);
        assert_eq!(interpret_moe_row(&r).unwrap().options.moe.recompute_modules, want, "{words}");
    }
}

#[test]
fn runs_that_ran_as_stated_are_estimated_near_their_devices_memory() {
    // Every shipped GPU row read as stated (no contradiction noted): its peak allocated estimate
    // is at most 1.15× its device's memory (the one row above 1.0× offloads expert activations to
    // the host, which the model does not count). TPU rows (XLA's rematerialisation under MaxText's
    // `custom` policy, read as full) are not held to it.
    use fmperf_core::extended::{Hardware, evaluate};
    use fmperf_core::vocab::MemoryKind;
    let doc: Value = serde_json::from_str(MOE_RUNS_JSON).unwrap();
    for row in doc["rows"].as_array().unwrap() {
        let s = interpret_moe_row(row).unwrap();
        if row["device_unit"] != "GPU" || s.notes.iter().any(|n| n.contains("cannot have held")) {
            continue;
        }
        let sys = fmperf_core::catalog::find_system(&s.hardware_id).unwrap();
        let hw = Hardware::from_catalog(sys, s.precision, true, &s.mapping).unwrap();
        let e = evaluate(&s.workload, &hw, &s.layout, &s.options).unwrap();
        let allocated = e.memory_estimate.of_kind(MemoryKind::PeakAllocated);
        assert!(
            allocated <= 1.15 * hw.hbm_capacity_gb,
            "{}: {allocated:.0} GB of {:.0}",
            row["id"],
            hw.hbm_capacity_gb
        );
    }
}

#[test]
fn the_data_parallel_overlap_is_read_as_the_words_state_it() {
    // Stated off: Megatron-Bridge 25.09's DeepSeek-V3 on H100 ("overlap_grad_reduce=False for
    // H100") and SimuMax's launcher ("no --overlap-grad-reduce"); stated on: Megatron-Bridge
    // 26.02's DeepSeek-V3 on GB300 ("overlap_grad_reduce on, overlap_param_gather off").
    for (id, on) in [
        ("mb2509_dsv3_h100_fp8_1024", false),
        ("sm_deepseekv3_l4_tp1_ep8_pp1_dp8_mbc4_cef", false),
        ("mb2602_dsv3_gb300_mxfp8_256", true),
    ] {
        let s = read(id);
        assert_eq!(s.options.dp_overlap, on, "{id}");
        assert_eq!(s.notes.iter().any(|n| n.contains("dp_overlap=off")), !on, "{id}: {:?}", s.notes);
    }
    // Unstated: on, even where the source names Megatron-LM (the Model Zoo's configs set
    // `--overlap-grad-reduce: true`), unlike a dense row's Megatron-LM default.
    let mut row = shipped("zoo_qwen3_235b_h100_bf16_256_ep32_pp8");
    assert!(read("zoo_qwen3_235b_h100_bf16_256_ep32_pp8").options.dp_overlap);
    row["notes"] = json!(["Megatron-LM launch"]);
    assert!(interpret_moe_row(&row).unwrap().options.dp_overlap);
    row["notes"] = json!(["Megatron-LM launch without --overlap-grad-reduce"]);
    assert!(!interpret_moe_row(&row).unwrap().options.dp_overlap);
}

#[test]
fn qwen3_30b_on_16_h100_is_the_sources_patch_container_measurement() {
    // Megatron-Bridge's 26.02.01 section re-measured the 26.02 row's stated configuration
    // (16 GPUs, FP8, GBS 1024, MBS 1, PP 2, VP 12, EP 8): 9,058 tokens/s, 208 TFLOP/s per GPU.
    let row = shipped("mb2602_qwen3_30b_h100_fp8cs_16");
    assert_eq!(row["measured"]["tokens_per_s_per_device"], json!(9058));
    let s = interpret_moe_row(&row).unwrap();
    assert_eq!(s.measured, 208.0);
    assert_eq!((s.layout.pp, s.options.interleave, s.layout.microbatches()), (2, 12, 128));
    // The two figures agree under Megatron-Bridge's count: 208e12 / 9,058 = 22.96 GFLOP per
    // token against the formula's 23.01 (the file's flop_check): within 0.3 %.
    let per_token = fmperf_core::validate::moe_flops::model_flops_per_token(&s.workload, s.rules.as_ref().unwrap());
    assert!((208e12 / 9058.0 / per_token - 1.0).abs() < 0.005, "{per_token}");
}
