//! A file of someone else's measured runs, written with other names for the fields (Hugging Face,
//! Megatron-LM, DeepSpeed keys), flat rows, a source given as words and figures in other units, is
//! read as the shipped schema; its leave-one-source-out errors come from constants fitted on the
//! shipped runs plus the file's other sources, never on the held-out source or a shipped restatement
//! of the same run.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::fit::fit_on;
use fmperf_core::validate::holdout::{HoldoutJob, same_run};
use fmperf_core::validate::prepared::Prepared;
use fmperf_core::validate::{MeasuredFile, parse_measured_runs, shipped_runs};

/// One run written three ways: the shipped schema, other key names in the groups, and flat.
const CANONICAL: &str = r#"{"id": "a", "source": {"title": "Lab blog", "url": "https://example.org/post"},
  "hardware_id": "nvidia_h100_sxm5_80gb", "num_devices": 64, "precision": "bf16",
  "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336, "ffn_type": "swiglu",
            "seq_len": 8192, "vocab": 128256},
  "parallel": {"tp": 2, "pp": 1, "dp": 32, "cp": 1, "interleave_vpp": 2, "recompute": "selective"},
  "batch": {"global_batch_seqs": 512, "micro_batch": 1, "grad_accum": 16},
  "measured": {"step_time_s": 6.5, "memory_gb": 61.0, "memory_kind": "peak_allocated"}}"#;

const RENAMED: &str = r#"{"id": "a", "source": "https://example.org/post",
  "system_id": "nvidia_h100_sxm5_80gb", "num_gpus": 64, "dtype": "bf16",
  "model_config": {"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "hidden_act": "swiglu",
            "seq_length": 8192, "vocab_size": 128256},
  "parallelism": {"tensor_model_parallel_size": 2, "pipeline_model_parallel_size": 1, "data_parallel_size": 32,
            "context_parallel_size": 1, "virtual_pipeline_model_parallel_size": 2, "recompute_granularity": "selective"},
  "batch": {"global_batch_size": 512, "micro_batch_size": 1, "gradient_accumulation_steps": 16},
  "results": {"step_time_ms": 6500, "peak_memory_mb": 61000, "memory_kind": "peak_allocated"}}"#;

const FLAT: &str = r#"{"id": "a", "source": "Lab blog", "gpu": "H100 SXM5 80GB", "hardware_id": "nvidia_h100_sxm5_80gb",
  "world_size": 64, "precision": "bf16", "n_layers": 32, "d_model": 4096, "n_heads": 32, "n_kv_heads": 8,
  "d_ff": 14336, "activation": "swiglu", "max_seq_len": 8192, "vocab": 128256, "tp_size": 2, "pp_size": 1,
  "dp_size": 32, "cp": 1, "vpp": 2, "activation_checkpointing": "selective", "gbs": 512, "mbs": 1,
  "grad_accum": 16, "iteration_time_s": 6.5, "memory_gb": 61.0, "memory_kind": "peak_allocated"}"#;

fn one(row: &str) -> fmperf_core::validate::MeasuredRun {
    let f = parse_measured_runs(&format!("[{row}]")).unwrap_or_else(|e| panic!("{e}"));
    f.rows.into_iter().next().unwrap()
}

#[test]
fn other_names_flat_rows_and_other_units_read_as_the_schema() {
    let want = one(CANONICAL);
    for (what, text) in [("renamed", RENAMED), ("flat", FLAT)] {
        let got = one(text);
        assert_eq!(got.model, want.model, "{what}: model");
        assert_eq!(got.batch, want.batch, "{what}: batch");
        assert_eq!(got.num_devices, Some(64), "{what}");
        assert_eq!(got.hardware_id.as_deref(), Some("nvidia_h100_sxm5_80gb"), "{what}");
        assert_eq!(got.precision.as_deref(), Some("bf16"), "{what}");
        let (p, q) = (&got.parallel, &want.parallel);
        assert_eq!(
            (p.tp, p.pp, p.dp, p.cp, &p.interleave, &p.recompute),
            (q.tp, q.pp, q.dp, q.cp, &q.interleave, &q.recompute),
            "{what}"
        );
        let m = &got.measured;
        assert!((m.step_time_s.unwrap() - 6.5).abs() < 1e-12, "{what}: step time in s");
        assert!((m.memory.gb.unwrap() - 61.0).abs() < 1e-9, "{what}: memory in GB");
    }
    // A source given as an address is its title and its address.
    let r = one(RENAMED);
    assert_eq!(
        (r.source.as_str(), r.source_url.as_deref()),
        ("https://example.org/post", Some("https://example.org/post"))
    );
    assert_eq!(one(FLAT).source, "Lab blog");
}

#[test]
fn a_bad_value_under_another_name_is_named_as_written() {
    let e =
        parse_measured_runs(r#"[{"id": "x", "parallelism": {"tensor_model_parallel_size": "eight"}}]"#).unwrap_err();
    assert_eq!(e.field(), Some("rows[0] (x).parallelism.tensor_model_parallel_size"));
    let e = parse_measured_runs(r#"[{"id": "y", "num_gpus": -4}]"#).unwrap_err();
    assert_eq!(e.field(), Some("rows[0] (y).num_gpus"));
    let e = parse_measured_runs(r#"[{"id": "z", "source": 7}]"#).unwrap_err();
    assert_eq!(e.field(), Some("rows[0] (z).source"));
}

/// The shipped rows of two sources (a small pool keeps the fits quick).
fn pool() -> MeasuredFile {
    let all = shipped_runs();
    let keep = |s: &str| s.starts_with("Korthikanti") || s.starts_with("Narayanan");
    MeasuredFile { schema_version: None, rows: all.rows.into_iter().filter(|r| keep(&r.source)).collect() }
}

#[test]
fn a_restated_shipped_run_is_held_out_with_its_source() {
    let shipped = pool();
    // Someone else's file restates the first Korthikanti row under its own title and id.
    let mut restated = shipped.rows.iter().find(|r| r.source.starts_with("Korthikanti")).unwrap().clone();
    let original = restated.clone();
    restated.id = "their-row".into();
    restated.source = "Their measurements".into();
    let file = MeasuredFile { schema_version: None, rows: vec![restated.clone()] };
    assert!(same_run(&Prepared::new(&restated), &Prepared::new(&original)));

    let h = HoldoutJob::with_pool(&file, ModeKind::Extended, &shipped).finish();
    assert_eq!(h.rows.len(), 1, "only the file's rows are reported");
    // Held out: the file's source and the shipped restatement of its run; kept: every other row
    // (the pool in its order: the file's rows, then the shipped ones).
    let rows: Vec<Prepared> = file.rows.iter().chain(&shipped.rows).map(Prepared::new).collect();
    let expected = fit_on(&rows, &|r| r.run.id != original.id && r.run.id != restated.id);
    assert_eq!(h.per_source[0].efficiency, Some(expected));
    let expected_error = Prepared::new(&restated).predict(ModeKind::Extended, expected).error.unwrap();
    assert!((h.rows[0].error - expected_error).abs() < 1e-12);
}

#[test]
fn the_shipped_file_is_its_own_pool() {
    // Passing the pool as the file adds no row twice: the held-out fits are the file's own.
    let shipped = pool();
    let h = HoldoutJob::with_pool(&shipped, ModeKind::Extended, &shipped).finish();
    let rows: Vec<Prepared> = shipped.rows.iter().map(Prepared::new).collect();
    for s in &h.per_source {
        assert_eq!(s.efficiency, Some(fit_on(&rows, &|r| r.run.source != s.source)), "{}", s.source);
    }
}

#[test]
fn values_written_as_people_write_them() {
    let row = |extra: &str| one(&format!(r#"{{"id": "w", "num_gpus": 1024, {extra}}}"#));
    assert_eq!(row(r#""tp": 8"#).parallel.tp, Some(8));
    assert_eq!(row(r#""tp": 8.0"#).num_devices, Some(1024));
    assert_eq!(row(r#""sequence_parallel": "yes""#).parallel.sequence_parallel, Some(true));
    assert_eq!(row(r#""sp": 0"#).parallel.sequence_parallel, Some(false));
    assert_eq!(row(r#""zero_stage": "ZeRO-1""#).parallel.zero_stage, Some(1));
    assert_eq!(row(r#""zero": "stage 3""#).parallel.zero_stage, Some(3));
    assert_eq!(row(r#""zero_stage": "none""#).parallel.zero_stage, Some(0));
    assert_eq!(row(r#""activation_checkpointing": true"#).parallel.recompute.as_deref(), Some("full (given as on)"));
    assert_eq!(row(r#""gradient_checkpointing": false"#).parallel.recompute.as_deref(), Some("none"));
    assert_eq!(row(r#""recompute": ["attention", "mlp"]"#).parallel.recompute.as_deref(), Some("attention, mlp"));
    // What cannot be read is still an error naming the field as written.
    let bad = |extra: &str| parse_measured_runs(&format!(r#"[{{"id": "w", {extra}}}]"#)).unwrap_err();
    assert_eq!(bad(r#""zero_stage": "ZeRO-7""#).field(), Some("rows[0] (w).zero_stage"));
    assert_eq!(bad(r#""sequence_parallel": "maybe""#).field(), Some("rows[0] (w).sequence_parallel"));
    assert_eq!(bad(r#""num_gpus": "many""#).field(), Some("rows[0] (w).num_gpus"));
}

/// Issue 30: a number written as text (`"hidden": "4096"`) is refused naming the field and the
/// rule, in every group and for every numeric field (generated, not stored); so is a dense row
/// stating 0 experts (it was read as dense).
#[test]
fn numbers_written_as_text_and_zero_experts_are_refused() {
    let bad = |row: &str| parse_measured_runs(&format!("[{row}]")).unwrap_err().to_string();
    let fields = [
        ("model", "hidden"),
        ("model", "layers"),
        ("model", "heads"),
        ("model", "seq_len"),
        ("parallel", "tp"),
        ("parallel", "dp"),
        ("batch", "global_batch_seqs"),
        ("measured", "tflops_per_device"),
        ("measured", "step_time_s"),
        ("measured", "mfu"),
    ];
    for (group, field) in fields {
        for text in ["\"4096\"", "\"1,024\"", "\"0.43\"", "\"43%\"", "\" 8 \""] {
            let e = bad(&format!(r#"{{"id": "w", "{group}": {{"{field}": {text}}}}}"#));
            assert!(
                e.contains(&format!("{group}.{field}")) && e.contains("not a string"),
                "{group}.{field} = {text}: {e}"
            );
        }
    }
    let e = bad(r#"{"id": "w", "num_gpus": "8"}"#);
    assert!(e.contains("num_gpus") && e.contains("not a string"), "{e}");
    for zero in [r#""num_experts": 0"#, r#""num_local_experts": 0"#, r#""num_experts": "8""#] {
        let e = bad(&format!(r#"{{"id": "w", "model": {{{zero}}}}}"#));
        assert!(
            e.contains("experts") && (e.contains("must be 1 for a dense model") || e.contains("not a string")),
            "{e}"
        );
    }
    assert_eq!(one(r#"{"id": "w", "model": {"num_experts": 1}}"#).id, "w");
    assert_eq!(one(r#"{"id": "w", "model": {"num_experts": null}}"#).id, "w");
}

#[test]
fn a_memory_figure_named_by_its_kind() {
    use fmperf_core::validate::memory::read_memory_kind;
    use fmperf_core::vocab::MemoryKind;
    let mem = |extra: &str| one(&format!(r#"{{"id": "m", "measured": {{{extra}}}}}"#)).measured.memory;
    let m = mem(r#""max_memory_reserved_gib": 70.5"#);
    assert_eq!((m.gib, read_memory_kind(&m).0), (Some(70.5), MemoryKind::PeakReserved));
    let m = mem(r#""nvidia_smi_mib": 81920"#);
    assert_eq!((m.gib, read_memory_kind(&m).0), (Some(80.0), MemoryKind::NvidiaSmi));
    let m = mem(r#""max_memory_allocated_gb": 61"#);
    assert_eq!((m.gb, read_memory_kind(&m).0), (Some(61.0), MemoryKind::PeakAllocated));
    // A stated kind wins over the name's.
    let m = mem(r#""max_memory_allocated_gb": 61, "memory_kind": "nvidia-smi""#);
    assert_eq!(read_memory_kind(&m).0, MemoryKind::NvidiaSmi);
}

#[test]
fn a_restated_memory_source_is_held_out_as_the_shipped_one() {
    use fmperf_core::validate::{shipped_memory_runs, validate};
    // Someone else's file restates the rows of one shipped memory source under its own title: each
    // row's held-out memory error must be the one the shipped file gives it (the shipped copies of
    // the same runs are held out with it; every other shipped source is fitted on).
    let shipped = shipped_memory_runs();
    let theirs_of = |s: &str| s.starts_with("pytorch/torchtune");
    let mut rows: Vec<_> = shipped.rows.iter().filter(|r| theirs_of(&r.source)).cloned().collect();
    assert!(!rows.is_empty());
    for r in &mut rows {
        r.id = format!("their-{}", r.id);
        r.source = "Their memory log".into();
    }
    let theirs = validate(&MeasuredFile { schema_version: None, rows }, ModeKind::Extended);
    let ours = validate(&shipped, ModeKind::Extended);
    let mut compared = 0;
    for r in &theirs.rows {
        let o = ours.rows.iter().find(|o| format!("their-{}", o.id) == r.id).unwrap();
        let (a, b) = (r.memory.as_ref().and_then(|m| m.error_loso), o.memory.as_ref().and_then(|m| m.error_loso));
        assert_eq!(a.is_some(), b.is_some(), "{}", r.id);
        if let (Some(a), Some(b)) = (a, b) {
            assert!((a - b).abs() < 1e-12, "{}: {a} vs {b}", r.id);
            compared += 1;
        }
    }
    assert!(compared >= 3, "{compared} rows compared");
}
