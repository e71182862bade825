//! The time model on a source it was never fitted on (`data/bloom-prequel-times.json`): 130
//! measured seconds per iteration of BLOOM-176B's pre-training topology sweeps (BigScience tr11
//! `chronicles-prequel.md`, Feb 2022: 176-206B GPT models of 250k vocabulary, Megatron-DeepSpeed
//! with ZeRO-1 on 8 to 384 A100 80GB of Jean Zay; TP 1/2/4/8, PP 1-48, MBS 1-8, NHEADS 16-256,
//! fp16, and bf16 with the BF16 optimizer and the `type:transformer|embedding` split from 02-28).
//! Every table row with a `Sec/it` is one row (a value repeated verbatim in a later table is one
//! row); rows without a time or out of memory are left out.
//!
//! Every row must be read as the source says (layout, batch, precision, ZeRO stage, full
//! recompute, the pipeline split where the partition method is named) and evaluated with the
//! shipped (fitted) constants; the error (`predicted / measured − 1` of the step time: negative =
//! predicted too fast) is printed per row, per table, per TP, per micro-batch and per shape
//! alignment, and bounded only loosely (a guard against regressions, not a fit).
//!
//! Measured at first (branch s8 at b146810): mean |error| 21.5 % over the 130 rows, mean error
//! −21.4 % (all but two rows predicted too fast). Per table: 02-17 `Best TFLOPs` 29.5 % (fp16) and
//! 30.2 % (bf16); 02-20 topology and MBS tables at NHIDDEN=14400 34.7-39.9 %; 02-20 NHIDDEN=13824
//! (tile and wave quantization) 14.7 %; 02-21 contenders 19.4 %, single node 17.3 %, ZeRO 0/1
//! 17.4 %; 02-23 final round 20.0 %; NHEADS comparison 25.1 % (02-23) and 25.6 % (02-24); 02-25
//! GBS variations 16.7 %, lower PP 24.0 %, TP tweaks 9.2 %; 02-26 NHEADS 18.0 %, batch-size
//! warm-up 14.5 %; 02-27 re-do 16.1 %; 02-28 rebalancing (bf16) 18.0 %. Per TP: 8 → 24.8 % (89
//! rows), 4 → 15.5 % (37), 2 → 4.2 % (3), 1 → +8.2 % (1, too slow). Shapes whose hidden is not a
//! multiple of 128 or whose head dimension is not a multiple of 8 (NHIDDEN=14400; 13824/128 = 108)
//! 35.2 % over 30 rows; the other 100 rows 17.4 %.
//!
//! What the pairs of rows say (measured ratio vs predicted ratio; the model is unchanged):
//! NHIDDEN 14400 over 13824 at the same layout 1.38 vs 1.07, head dimension 108 over 144 or 216
//! 1.30-1.42 vs 1.00 (no alignment term: hidden not a multiple of 128, head dimension not of 8);
//! the 02-28 BF16 optimizer over the 02-27 fp16 rows 1.05 vs 1.00 (the fp32 gradient accumulation
//! is not timed); after the 02-25 NUMA fix over before 0.94 vs 1.00 (the cluster changed); TP 8
//! MBS 2 over MBS 4 1.08-1.16 vs 1.01-1.02 (no such effect at TP 4); PP 2 (DP 24) over PP 12 1.06
//! vs 0.87 (the shorter pipeline's gain does not appear).
//!
//! Session 20: the rows state `flash_attention: false` and "no FlashAttention" (Megatron-DeepSpeed
//! of February 2022 ran Megatron's fused scaled-masked softmax between two batched matmuls), which
//! fmperf now reads as unfused attention ([`fmperf_core::extended::unfused_attention`]: every score
//! computed, the scores written, normalised and read back, `d`-deep matmuls at their size factor;
//! no constant fitted). Mean |error| 21.2 → 17.4 %, within 12 %: 22 → 52 of 130; by TP: 8 → 21.2 %,
//! 4 → 9.5 %, 2 → 3.1 %; the NHEADS comparisons 25.1/25.6 → 19.4/17.2 % (more heads at the same
//! width are narrower, slower score matmuls, as measured). Still too fast at TP 8 (−21 %) and on
//! NHIDDEN=14400 (−34 %: no alignment term).
//!
//! Session 26: an unfused-attention matmul with a dimension off the multiples of 8 (NVIDIA's FP16
//! Tensor Core rule; head dimensions 225, 150, 450, 108 here) runs at the part's FP16
//! non-Tensor-Core peak (`Pricing::activation_matmul`, `efficiency::tensor_core_aligned`; no
//! constant fitted). Mean |error| 17.4 → 14.4 %, median −15.2 → −13.5 %, within 12 %: 52 → 56 of
//! 130; misaligned TP 8 rows −33 → −21 % median, TP 4 −28 → −3 %. This file's split by head
//! dimension suggested the rule (a GEMM tile/wave model was tried first and made this file and the
//! shipped MoE rows worse), so it is no longer unseen for that rule. Still too fast at TP 8 (about
//! −15 % on aligned shapes too).
//!
//! Session 30: BigScience's Megatron-DeepSpeed all-reduces a column-parallel layer's input
//! gradient synchronously after the layer's backward (`copy_to_tensor_model_parallel_region`,
//! bigscience-workshop/Megatron-DeepSpeed @ 58d92042 `megatron/mpu/mappings.py` line 89), where
//! Megatron-LM overlaps it with the weight-gradient GEMM; the rows, whose framework names
//! `bigscience`, are read with `tp_grad_overlap=off` (no constant fitted; the source code, not
//! these rows, gives the rule, but the TP 8 rows pointed at it, so the file is no longer unseen
//! for it). Mean |error| 14.4 → 12.3 %, median −13.5 → −11.2 %, within 12 %: 56 → 69 of 130; by
//! TP: 8 → 14.9 %, 4 → 6.8 %; ranking tau 0.510 → 0.515, top-1 hits 10 → 11 of 19, mean regret
//! 3.9 → 2.9 %. Still too fast at TP 8 (−15 %).

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::{MeasuredFile, parse_measured_runs, validate};
use std::collections::BTreeMap;

const BLOOM: &str = include_str!("data/bloom-prequel-times.json");

fn file() -> MeasuredFile {
    parse_measured_runs(BLOOM).expect("the file reads")
}

/// The row's table: its section and date as the file's `source.where` and tags name them.
fn table_of(raw: &serde_json::Value) -> String {
    let wh = raw["source"]["where"].as_str().unwrap_or("");
    let section = wh.split("section '").nth(1).and_then(|s| s.split('\'').next()).unwrap_or("?");
    let date = raw["tags"].as_array().and_then(|t| t.last()).and_then(|d| d.as_str()).unwrap_or("?");
    format!("{date} {section}")
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn bloom_prequel_times_are_read_and_evaluated() {
    let file = file();
    let raw: serde_json::Value = serde_json::from_str(BLOOM).unwrap();
    let raw_rows = raw["rows"].as_array().unwrap();
    assert_eq!(file.rows.len(), raw_rows.len());
    let report = validate(&file, ModeKind::Extended);

    let mut all = Vec::new();
    let mut signed = Vec::new();
    let mut by_table: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut by_tp: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut by_mbs: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut by_shape: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut split_rows = 0;
    for ((run, r), raw) in file.rows.iter().zip(&report.rows).zip(raw_rows) {
        assert_eq!(run.id, r.id);
        assert!(!r.skipped, "{}: skipped ({:?})", r.id, r.reason);
        let (p, m, e) = (r.predicted_step_s.unwrap(), r.measured_step_s.unwrap(), r.error.unwrap());
        // The figure is the measured seconds per iteration, compared as such.
        assert_eq!(raw["measured"]["step_time_s"].as_f64(), Some(m), "{}", r.id);
        // The layout as written (TP, PP, DP, micro-batch, global batch) is the layout evaluated.
        let config = r.config.as_deref().unwrap_or("");
        let par = &raw["parallel"];
        let want = format!("tp{} pp{} dp{} cp1", par["tp"], par["pp"], par["dp"]);
        assert!(config.contains(&want), "{}: {config} lacks {want}", r.id);
        let batch = format!("G{} mbs{}", raw["batch"]["global_batch_seqs"], raw["batch"]["micro_batch"]);
        assert!(config.contains(&batch), "{}: {config} lacks {batch}", r.id);
        // Precision and ZeRO stage as the row says them; full recompute (the tr11 launch script).
        let precision = if raw["precision"].as_str().unwrap().starts_with("bf16") { "bf16" } else { "fp16" };
        assert!(config.contains(&format!("· {precision} ·")), "{}: {config}", r.id);
        assert!(config.contains(&format!("zero{}", par["zero_stage"])), "{}: {config}", r.id);
        assert!(config.contains("rc full"), "{}: {config}", r.id);
        // The embedding and head counted as blocks exactly where the notes name the partition
        // method (02-27 NLAYERS=106 and 02-28 rows).
        let says_split =
            raw["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("transformer|embed"));
        let read_split = r.assumptions.iter().any(|a| a.contains("stage_split=ends_as_blocks"));
        assert_eq!(says_split, read_split, "{}: partition method read {read_split}", r.id);
        split_rows += read_split as usize;

        eprintln!("{:72} measured {:7.2} s predicted {:7.2} s  {:+6.1} %", r.id, m, p, 100.0 * e);
        all.push(e.abs());
        signed.push(e);
        by_table.entry(table_of(raw)).or_default().push(e);
        by_tp.entry(par["tp"].as_u64().unwrap()).or_default().push(e);
        by_mbs.entry(raw["batch"]["micro_batch"].as_u64().unwrap()).or_default().push(e);
        // Tensor-core alignment (NVIDIA, Matrix Multiplication Background User's Guide, "Tensor
        // Core Requirements" and "Tile Quantization"): the hidden size a multiple of 128 and the
        // head dimension a multiple of 8, as the source's own tile/wave section asks.
        let (hidden, heads) = (raw["model"]["hidden"].as_u64().unwrap(), raw["model"]["heads"].as_u64().unwrap());
        let aligned = hidden % 128 == 0 && hidden % heads == 0 && (hidden / heads) % 8 == 0;
        by_shape.entry(if aligned { "aligned" } else { "misaligned" }).or_default().push(e);
        // The row carries the caveat naming a width off the multiples of 8 (its attention matmuls
        // priced off the Tensor Cores since session 26).
        let caveat = r.assumptions.iter().any(|a| a.contains("not a multiple of 8"));
        assert_eq!(caveat, (hidden / heads) % 8 != 0 || hidden % 8 != 0, "{}: alignment caveat {caveat}", r.id);
    }
    let show = |what: &str, v: &[f64]| {
        let abs: Vec<f64> = v.iter().map(|e| e.abs()).collect();
        eprintln!(
            "{what:62} {:3} rows  mean |error| {:5.1} %  mean error {:+6.1} %",
            v.len(),
            100.0 * mean(&abs),
            100.0 * mean(v)
        );
    };
    eprintln!("--- per table (date, section)");
    for (t, v) in &by_table {
        show(t, v);
    }
    eprintln!("--- per tensor-parallel size");
    for (tp, v) in &by_tp {
        show(&format!("TP {tp}"), v);
    }
    eprintln!("--- per micro-batch");
    for (mbs, v) in &by_mbs {
        show(&format!("MBS {mbs}"), v);
    }
    eprintln!("--- per shape (hidden % 128, head dimension % 8)");
    for (k, v) in &by_shape {
        show(k, v);
    }
    show("all rows", &signed);

    assert_eq!(all.len(), 130, "rows evaluated");
    assert_eq!(split_rows, 19, "rows read with the type:transformer|embedding split");
    assert_eq!(report.summary.overall.evaluated, 130);
    // A loose regression guard (about 1.5 times the 21.5 % measured), not a fit.
    assert!(mean(&all) <= 0.32, "mean |error| {}", mean(&all));
    let aligned: Vec<f64> = by_shape["aligned"].iter().map(|e| e.abs()).collect();
    assert_eq!(aligned.len(), 100, "rows of aligned shapes");
    assert!(mean(&aligned) <= 0.26, "aligned shapes: mean |error| {}", mean(&aligned));
}

/// BigScience's Megatron-DeepSpeed all-reduces a column-parallel layer's input gradient after the
/// layer's backward (`megatron/mpu/mappings.py` line 89 @ 58d92042), so every row is read with
/// `tp_grad_overlap=off` (noted) and the entry collectives' backward is exposed in full. Hand
/// check on the 02-21 TP 8 × PP 6 × DP 8, MBS 4 row (no sequence parallelism): the all-reduce at a
/// sub-layer's entry moves the same bytes over the same group as the one at its exit, so its
/// backward (`ag + rs`, exposed) equals the exit's forward (`ag + rs`, exposed); with the switch
/// on, the entry's backward is only the part beyond the weight-gradient GEMM (0 here: 2.0 ms of
/// all-reduce against GEMMs of 5.6 ms (QKV) and 7.3 ms (MLP in)), so the iteration's TP time grows by
/// micro-batches × blocks per stage × 2 sub-layers × (ag + rs) = 64 × 12 × 2 × (ag + rs).
#[test]
fn the_tp_input_gradient_all_reduce_is_exposed_under_bigscience_megatron_deepspeed() {
    use fmperf_core::extended::{ExtendedOptions, block_operations::block_operations, evaluate};
    use fmperf_core::validate::row::interpret;
    let file = file();
    let run = file
        .rows
        .iter()
        .find(|r| r.id.starts_with("bloom_prequel_time_h14336_l72_a64_dp8_tp8_pp6_mbs4_gbs2048_0221"))
        .unwrap();
    let s = interpret(run).unwrap();
    assert!(!s.options.tp_grad_overlap, "read off");
    assert!(s.assumptions.iter().any(|n| n.to_string().contains("tp_grad_overlap=off")), "noted");
    let hw = s.hardware().unwrap();
    let ops = block_operations(&s.workload, &hw, &s.layout, &s.options).unwrap();
    let op = |name: &str| ops.iter().find(|o| o.name == name).unwrap();
    for (entry, exit) in [("attn_all_gather", "attn_reduce_scatter"), ("mlp_all_gather", "mlp_reduce_scatter")] {
        let all_reduce_s = op(exit).fwd.tp_comm_s;
        assert!(all_reduce_s > 1e-3 && all_reduce_s < 3e-3, "{exit}: {all_reduce_s}");
        assert_eq!(op(entry).bwd.tp_comm_s, all_reduce_s, "{entry}: exposed in full");
    }
    let on = ExtendedOptions { tp_grad_overlap: true, ..s.options };
    let ops_on = block_operations(&s.workload, &hw, &s.layout, &on).unwrap();
    assert!(ops_on.iter().filter(|o| o.name.ends_with("all_gather")).all(|o| o.bwd.tp_comm_s == 0.0), "hidden when on");
    let (off_e, on_e) = (
        evaluate(&s.workload, &hw, &s.layout, &s.options).unwrap(),
        evaluate(&s.workload, &hw, &s.layout, &on).unwrap(),
    );
    let per_block = op("attn_reduce_scatter").fwd.tp_comm_s + op("mlp_reduce_scatter").fwd.tp_comm_s;
    let grown = off_e.totals.t_tp_comm - on_e.totals.t_tp_comm;
    assert!((grown - 64.0 * 12.0 * per_block).abs() <= 1e-9 * grown, "{grown} vs {}", 64.0 * 12.0 * per_block);
}
