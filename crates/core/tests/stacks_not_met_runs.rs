//! Dense training throughput from stacks fmperf had not met (`data/stacks-not-met-runs.json`, held
//! out, in no fit): PyTorch FSDP outside torchtitan (IBM's fms-fsdp on 128 A100 and 96 H100,
//! Llama 2 7B–70B; OLMo-core's FSDP2 HSDP on 8 H100, 1B–13B in BF16 and torchao float8), Hugging
//! Face Accelerate with FSDP and with DeepSpeed ZeRO-3 (Granite 7B on 4 A100), and Hugging Face's
//! Trainer with DeepSpeed ZeRO-1 or plain DDP on GPT-2 (12–36 layers, hidden 768–1,280) on one
//! 16-V100 NVSwitch node.
//!
//! What the rows show (session 31, w152; 28 rows, extended mode): mean |error| 36 %, 8 of 28
//! within 12 %. By source: fms-fsdp blog −37 % mean, fms-fsdp README −28 %, Accelerate +24 %,
//! DeepSpeed autotuning GPT-2 +53 %, OLMo-core +21 %.
//! * FSDP FULL_SHARD across nodes (Llama 2 34B and 70B on 128 A100 and 96 H100, 6 rows, −32 to
//!   −84 %): the all-gathers and reduce-scatters are priced at one NIC per device (the `fsdp`
//!   stack's rule, [`fmperf_core::extended::Stack`]); the same rows priced through every NIC of a
//!   node (as Megatron-FSDP is) come to −3 to +2 % on A100 and +21 % on H100. Session 31 (w153,
//!   issue 31) changed the rule on these rows' evidence: PyTorch FSDP gathers each unit's flat
//!   parameter in one collective and is now priced through every NIC (−3 to +2 % on A100, +21 %
//!   on H100; the file's mean |error| 36.2 % → 23.3 %, 12 of 28 within 12 %); only DeepSpeed's per-parameter ZeRO-3 keeps one NIC per device. The rows are
//!   no longer unseen for that rule (data README).
//! * GPT-2 under Hugging Face's Trainer without DeepSpeed (+44 to +134 %): the same model and
//!   micro-batch under DeepSpeed ZeRO-1 measures 1.4× faster (GPT-2 at 8 per GPU: 397.8 against
//!   284.1 samples/s) and is predicted the same; the Trainer's own AdamW and AMP gradient handling
//!   are not priced. Session 32 (w159, issue 31) priced them (`hf_trainer_step`,
//!   [`fmperf_core::extended::stack_eager`]): +34, +61, +65 % (small, medium, large); what is
//!   left is autocast's FP32 element-wise chains (not priced; see the data README).
//! * Memory, session 32 (issue 32): the Granite rows' `no` is judged at full checkpointing too
//!   (their source states none): `tight`; runs that ran called "no" 2 → 0.
//! * Memory (every row ran, `measured.oom: false`): 14 yes, 9 tight, 5 no. The five: the blog's two
//!   13B rows (fms-fsdp's every-n-th-block checkpointing, n not stated, read as none; read as every
//!   other layer they are tight and +6 / +15 %), the two Granite rows (recompute not stated, read
//!   as none: 227 GB needed; read as full they fit and come to −7 / −5 %) and OLMo-core's 1B in
//!   BF16 (8 × 4,096 tokens a micro-batch, 75.7 GB).
//!
//! The bounds guard the aggregate and the reading of every row; they are not targets.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{parse_measured_runs, validate};

const RUNS: &str = include_str!("data/stacks-not-met-runs.json");

/// Every row is read, none skipped, each with the layout, sharding and precision it states.
#[test]
fn every_row_is_read_with_its_stated_layout() {
    let file = parse_measured_runs(RUNS).expect("the file reads");
    let raw: serde_json::Value = serde_json::from_str(RUNS).unwrap();
    let raw_rows = raw["rows"].as_array().unwrap();
    assert_eq!(file.rows.len(), 28);
    assert_eq!(raw_rows.len(), 28);
    let report = validate(&file, ModeKind::Extended);
    assert_eq!(report.rows.len(), 28);
    for (r, raw) in report.rows.iter().zip(raw_rows) {
        assert_eq!(r.id, raw["id"].as_str().unwrap());
        assert!(!r.skipped, "{}: skipped ({:?})", r.id, r.reason);
        let config = r.config.as_deref().unwrap_or("");
        let p = &raw["parallel"];
        let layout = format!("tp{} pp{} dp{} cp1", p["tp"], p["pp"], p["dp"]);
        assert!(config.contains(&layout), "{}: {config} (want {layout})", r.id);
        let precision = raw["precision"].as_str().unwrap();
        assert!(config.contains(&format!("· {precision} ·")), "{}: {config} (want {precision})", r.id);
        // The sharding the words state: HSDP inside a node of 8 (the whole group on one node),
        // FSDP/ZeRO-3 over every rank, ZeRO-1 (DeepSpeed), or none (DDP).
        let fsdp = p["fsdp"].as_str().unwrap_or("");
        let want = if fsdp.starts_with("HSDP") && p["dp"].as_u64() > Some(8) {
            "zero3 (shard 8)"
        } else if !fsdp.is_empty() || p["zero_stage"] == 3 {
            "zero3"
        } else if p["zero_stage"] == 1 {
            "zero1"
        } else {
            "zero0"
        };
        assert!(config.ends_with(want), "{}: {config} (want {want})", r.id);
        eprintln!(
            "{:48} measured {:9.1} predicted {:9.1} {:+7.1} %",
            r.id,
            r.measured.unwrap_or(f64::NAN),
            r.predicted.unwrap_or(f64::NAN),
            100.0 * r.error.expect("evaluated")
        );
    }
}

/// The figures and words as the reader takes them, each checked by hand.
#[test]
fn figures_and_network_words_are_read_as_stated() {
    let file = parse_measured_runs(RUNS).expect("the file reads");
    let report = validate(&file, ModeKind::Extended);
    let row = |id: &str| report.rows.iter().find(|r| r.id == id).expect(id);
    // Samples per second over the whole node, 1,024-token samples, 16 devices:
    // 397.827 × 1,024 / 16 = 25,460.928 tokens/s per device.
    let gpt2 = row("dsautotune_gpt2_ds_zero1_v100_16");
    let tokens = gpt2.measured_tokens_per_s.expect("a time figure");
    assert!((tokens - 25_460.928).abs() < 1e-6, "{tokens}");
    // GPT-2 under transformers 4.12 runs eager attention (the words say so), not FlashAttention.
    assert!(gpt2.assumptions.iter().any(|a| a.text.contains("attention kernel unfused")), "{:?}", gpt2.assumptions);
    // 400 Gbps per node of 8 A100: 400 / 8 bits / 8 devices = 6.25 GB/s per device; 800 Gbps per
    // node of 8 H100: 12.5 GB/s.
    for (id, gbs) in [("ptfsdp_llama2_70b_a100_128", "6.25"), ("ptfsdp_llama2_70b_h100_96", "12.5")] {
        let r = row(id);
        let want = format!("scale-out network read from the words: {gbs} GB/s per device");
        assert!(r.assumptions.iter().any(|a| a.text == want), "{id}: {:?}", r.assumptions);
    }
    // Granite 7B: 8 sequences of 4,096 tokens per device at 3,158.7 tokens/s per device is
    // 32,768 / 3,158.7 = 10.374 s a step; the blog prints 10.4 s (0.25 % apart).
    let granite = row("hf_accelerate_granite7b_fsdp_a100_4");
    let step = granite.measured_step_s.expect("a step time");
    assert!((step - 10.374).abs() < 0.001, "{step}");
    assert!((step / 10.4 - 1.0).abs() < 0.005, "{step}");
}

/// The three Trainer-with-DDP rows (transformers 4.12, native AMP) are priced with the Trainer's
/// own step (`hf_trainer_step`), noted; the three under DeepSpeed keep DeepSpeed's fused step.
/// GPT-2 large at one sequence per GPU on a V100 (900 GB/s; 438 tensors, 774 M parameters): the
/// step is HBM-bound, 24 B per parameter each micro-batch and 112 B per step in place of the fused
/// step's 30 B — (24 + 112 − 30) · 774e6 B / 900 GB/s = 91.2 ms more, at least (a phase whose host
/// time is longer costs that): the predicted step grows from 0.245 s by 0.09–0.11 s, and the row's
/// error (predicted too fast) falls from +134 % to between +55 and +75 %.
#[test]
fn the_trainers_own_step_is_priced_on_its_ddp_rows() {
    let file = parse_measured_runs(RUNS).expect("the file reads");
    let report = validate(&file, ModeKind::Extended);
    let row = |id: &str| report.rows.iter().find(|r| r.id == id).expect(id);
    for id in [
        "dsautotune_gpt2_hf_ddp_v100_16",
        "dsautotune_gpt2_medium_hf_ddp_v100_16",
        "dsautotune_gpt2_large_hf_ddp_v100_16",
    ] {
        assert!(row(id).assumptions.iter().any(|a| a.text.contains("hf_trainer_step=on")), "{id}");
    }
    for id in ["dsautotune_gpt2_ds_zero1_v100_16", "dsautotune_gpt2_large_ds_zero1_v100_16"] {
        assert!(!row(id).assumptions.iter().any(|a| a.text.contains("hf_trainer_step")), "{id}");
    }
    let large = row("dsautotune_gpt2_large_hf_ddp_v100_16");
    let step = large.predicted_step_s.expect("a step");
    assert!((0.245 + 0.0912..0.245 + 0.11).contains(&step), "{step}");
    let e = large.error.expect("evaluated");
    assert!((0.55..0.75).contains(&e), "{e}");
}

/// The aggregate as it stands (session 31): guards against a change that moves these rows off
/// by more than a few points without anyone looking.
#[test]
fn the_rows_hold_their_session_31_errors() {
    let file = parse_measured_runs(RUNS).expect("the file reads");
    let report = validate(&file, ModeKind::Extended);
    let errors: Vec<f64> = report.rows.iter().map(|r| r.error.expect("evaluated")).collect();
    let mean_abs = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64;
    let within = errors.iter().filter(|e| e.abs() <= 0.12).count();
    eprintln!("mean |error| {:.1} %, {within} of {} within 12 %", 100.0 * mean_abs, errors.len());
    assert!(mean_abs < 0.41, "mean |error| {mean_abs}");
    assert!(within >= 6, "{within} of {} within 12 %", errors.len());
}

/// A `no` must hold under every reading of what the source leaves open (session 32, issue 32). The
/// Granite rows state no activation checkpointing (neither the blog nor its Accelerate issue's
/// configs): read as the Trainer's default, none, the FSDP row needs 227.1 GB allocated; fully
/// checkpointed 47.2 GB without the allocator's cache, which fits 85.9 GB even 8 % over-predicted
/// (47.2 × 0.92 = 43.4 ≤ 85.9): `tight`, and a note says why. The same row stating `none` needs at
/// least 227.1 GB (227.1 × 0.92 = 208.9 > 85.9): `no`.
#[test]
fn an_unstated_recomputation_is_judged_at_full_for_does_not_fit() {
    use fmperf_core::vocab::Fits;
    let mut raw: serde_json::Value = serde_json::from_str(RUNS).unwrap();
    let fsdp = raw["rows"][12].clone();
    assert_eq!(fsdp["id"], "hf_accelerate_granite7b_fsdp_a100_4");
    let mut stated = fsdp.clone();
    stated["id"] = "stated_none".into();
    stated["parallel"]["recompute"] = "none".into();
    raw["rows"] = serde_json::Value::Array(vec![fsdp, stated]);
    let file = parse_measured_runs(&raw.to_string()).expect("the rows read");
    let report = validate(&file, ModeKind::Extended);
    let (unstated, stated) = (&report.rows[0], &report.rows[1]);
    for r in [unstated, stated] {
        let m = r.memory.as_ref().expect("a memory verdict");
        assert!((m.predicted_gb.unwrap() - 227.1).abs() < 0.1, "{}: {m:?}", r.id);
    }
    assert_eq!(unstated.memory.as_ref().unwrap().fits, Some(Fits::Tight));
    let note = unstated.assumptions.iter().find(|a| a.text.contains("judged at full recomputation"));
    assert!(note.is_some_and(|n| n.text.contains("(47.2 GB without")), "{:?}", unstated.assumptions);
    assert_eq!(stated.memory.as_ref().unwrap().fits, Some(Fits::No));
    assert!(!stated.assumptions.iter().any(|a| a.text.contains("judged at full")), "{:?}", stated.assumptions);
}

/// The stack and chip words of issue 31's list are read as the stacks and parts they name: a row
/// of this file rewritten with DeepSpeed's `zero3`, PyTorch's `FSDP2`, and AMD parts named only by
/// words (`MI300X`, `MI325X`, with `ROCm`), which the catalog holds.
#[test]
fn stack_and_chip_words_are_read() {
    let mut raw: serde_json::Value = serde_json::from_str(RUNS).unwrap();
    let base = raw["rows"][13].clone();
    assert_eq!(base["id"], "hf_accelerate_granite7b_deepspeed_zero3_a100_4");
    let variant = |id: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut r = base.clone();
        r["id"] = id.into();
        edit(&mut r);
        r
    };
    let rows = vec![
        variant("zero3_word", &|r| {
            r["parallel"]["zero_stage"] = serde_json::Value::Null;
            r["parallel"]["other"] = "DeepSpeed zero3".into();
        }),
        variant("fsdp2_word", &|r| {
            r["parallel"]["zero_stage"] = serde_json::Value::Null;
            r["parallel"]["fsdp"] = "FSDP2".into();
            r["framework"] = "torchtune".into();
        }),
        variant("mi300x_words", &|r| {
            r["hardware_id"] = serde_json::Value::Null;
            r["hardware"] = "8x MI300X (ROCm 6.3)".into();
        }),
        variant("mi325x_words", &|r| {
            r["hardware_id"] = serde_json::Value::Null;
            r["hardware"] = "AMD Instinct MI325X, ROCm".into();
        }),
    ];
    raw["rows"] = rows.into();
    let file = parse_measured_runs(&raw.to_string()).expect("the rows read");
    let report = validate(&file, ModeKind::Extended);
    let row = |id: &str| report.rows.iter().find(|r| r.id == id).expect(id);
    for id in ["zero3_word", "fsdp2_word"] {
        let config = row(id).config.as_deref().unwrap_or("");
        assert!(config.ends_with("zero3"), "{id}: {config}");
    }
    assert_eq!(row("mi300x_words").hardware.as_deref(), Some("amd_mi300x"));
    assert_eq!(row("mi325x_words").hardware.as_deref(), Some("amd_mi325x"));
    assert!(report.rows.iter().all(|r| !r.skipped), "{:?}", report.rows.iter().map(|r| &r.reason).collect::<Vec<_>>());
}

/// Issue 31: PyTorch FSDP's FULL_SHARD across nodes is priced through every NIC of a node (one
/// flat all-gather and one reduce-scatter per FSDP unit, `Stack::zero3_one_nic_per_device`); the
/// same row read on the `deepspeed` stack keeps the one-NIC rate of DeepSpeed's per-parameter
/// ZeRO-3 and is far too slow. These rows chose the rule (data README): a guard, not a test of it.
///
/// By hand, Llama 2 70B on 128 A100 (400 Gbps per node, read 6.25 GB/s per device): a block holds
/// 2·8192² (q, o) + 2·8192·1024 (k, v) + 3·8192·28672 (SwiGLU) + 2·8192 (norms) = 855.6 M
/// parameters, 1.711 GB in BF16; a gather moves 127/128 of it: 1.698 GB / 6.25 GB/s = 0.272 s
/// through one NIC, 1.698 / (8 · 6.25) = 0.034 s through the node's eight. Per block and step
/// two gathers and one reduce-scatter: 0.81 s at one NIC against the block's ≈ 0.28 s of compute
/// (measured step 2 · 4,096 / 370 = 22.1 s over 80 blocks), 0.10 s through every NIC, hidden.
#[test]
fn full_shard_across_nodes_is_priced_through_every_nic() {
    let block = 2.0 * 8192.0f64.powi(2) + 2.0 * 8192.0 * 1024.0 + 3.0 * 8192.0 * 28672.0 + 2.0 * 8192.0;
    assert!((block - 855.65e6).abs() < 0.01e6, "{block}");
    let gather_gb = block * 2.0 * 127.0 / 128.0 * 1e-9;
    assert!((gather_gb / 6.25 - 0.2716).abs() < 1e-4 && (gather_gb / 50.0 - 0.03395).abs() < 1e-5);

    let mut raw: serde_json::Value = serde_json::from_str(RUNS).unwrap();
    let full_shard: Vec<serde_json::Value> = raw["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["parallel"]["fsdp"].as_str().is_some_and(|f| f.starts_with("FSDP (FULL_SHARD")))
        .cloned()
        .collect();
    assert_eq!(full_shard.len(), 6);
    let mut deepspeed = full_shard[1].clone();
    assert_eq!(deepspeed["id"], "ptfsdp_llama2_70b_a100_128");
    deepspeed["id"] = "as_deepspeed".into();
    deepspeed["framework"] = "DeepSpeed ZeRO-3".into();
    let mut rows = full_shard.clone();
    rows.push(deepspeed);
    raw["rows"] = rows.into();
    let report = validate(&parse_measured_runs(&raw.to_string()).unwrap(), ModeKind::Extended);
    let error = |id: &str| report.rows.iter().find(|r| r.id == id).and_then(|r| r.error).expect(id);
    for r in &full_shard {
        let (id, e) = (r["id"].as_str().unwrap(), error(r["id"].as_str().unwrap()));
        eprintln!("{id}: {:+.1} %", 100.0 * e);
        // Session 31 (w153): A100 −3 to +2 %, H100 +21 % (one NIC: −32 to −84 %).
        assert!(e.abs() < 0.3, "{id}: {e}");
    }
    let one_nic = error("as_deepspeed");
    eprintln!("the 70B A100 row read as DeepSpeed: {:+.1} %", 100.0 * one_nic);
    assert!(one_nic < -0.5, "{one_nic}");
}
