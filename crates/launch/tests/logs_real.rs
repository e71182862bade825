//! The training-log readers on **real** lines: each file of `tests/data/logs/real/` holds lines
//! as a framework printed them in a public thread (its URL, date and hardware in
//! `tests/data/logs/README.md`). Each is read through [`read_log`], the reader behind the
//! Explorer's "Your measured run" paste and `fmperf calibrate --log`, and every figure it yields is
//! checked against the number printed, converted to fmperf's units (ms → s, GiB → GB = 1e9 B,
//! percent → fraction). Lines of the same logs that report no training step must not be read as one.

use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::{MemoryKind, MetricKind};
use fmperf_launch::logs::{GIB_IN_GB, LogFigures, read_log};

const STEP: Figure = Figure::Time(MetricKind::StepTimeS);
const TFLOPS: Figure = Figure::Time(MetricKind::TflopsPerDevice);
const TPS: Figure = Figure::Time(MetricKind::TokensPerSPerDevice);
const TPS_ALL: Figure = Figure::Time(MetricKind::TokensPerSTotal);
const SAMPLES: Figure = Figure::Time(MetricKind::SamplesPerS);
const MFU: Figure = Figure::Time(MetricKind::Mfu);
const RESERVED: Figure = Figure::Memory(MemoryKind::PeakReserved);
const ALLOCATED: Figure = Figure::Memory(MemoryKind::PeakAllocated);

fn read(name: &str) -> LogFigures {
    let path = format!("{}/tests/data/logs/real/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    read_log(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Reads `name` and checks it yields exactly `figures` (each within 1e-12 relative), no other.
fn check(name: &str, framework: &str, figures: &[(Figure, f64)]) -> LogFigures {
    let f = read(name);
    assert_eq!(f.framework, framework, "{name}");
    for (figure, want) in figures {
        let got = f
            .measured
            .iter()
            .find(|m| m.figure == *figure)
            .unwrap_or_else(|| panic!("{name}: no {figure:?} in {:?}", f.measured))
            .value;
        assert!((got / want - 1.0).abs() < 1e-12, "{name}: {figure:?} = {got}, printed {want}");
    }
    let kinds: Vec<Figure> = f.measured.iter().map(|m| m.figure).collect();
    assert_eq!(kinds.len(), figures.len(), "{name}: read {kinds:?}, expected only {figures:?}");
    f
}

#[test]
fn megatron_lm_moe_iteration_line() {
    let f = check("megatron-lm-issue-756.log", "Megatron-LM", &[(STEP, 5.3616), (TFLOPS, 243.6)]);
    assert_eq!(f.lines_read, 1);
    assert!(f.notes.is_empty(), "iteration 71 is past warm-up: {:?}", f.notes);
}

#[test]
fn megatron_llm_line_without_tflops() {
    check("megatron-llm-issue-11.log", "Megatron-LM", &[(STEP, 86.5452)]);
}

#[test]
fn torchtitan_with_and_without_rank_prefix() {
    let f = check(
        "torchtitan-pr-2389.log",
        "torchtitan",
        &[(TPS, 10_007.0), (TFLOPS, 313.36), (MFU, 0.1393), (RESERVED, 66.91 * GIB_IN_GB)],
    );
    // Step 5 is warm-up, and the only reading: kept, with a note.
    assert!(f.notes.iter().any(|n| n.contains("every reading")), "{:?}", f.notes);
    check(
        "torchtitan-pr-3393.log",
        "torchtitan",
        &[(TPS, 7_334.0), (TFLOPS, 0.53), (MFU, 0.0017), (RESERVED, 9.46 * GIB_IN_GB)],
    );
}

#[test]
fn maxtext_per_device_lines_new_and_old() {
    check("maxtext-pr-761.log", "MaxText", &[(STEP, 1.341), (TFLOPS, 257.929), (TPS, 36_653.244)]);
    check("maxtext-pr-2232.log", "MaxText", &[(STEP, 5.667), (TFLOPS, 134.924), (TPS, 8_672.758)]);
    // 2023's line: `TFLOP/s:` without `/device` (the same per-device figure, renamed later).
    check("maxtext-issue-8.log", "MaxText", &[(STEP, 2.167), (TFLOPS, 36.722)]);
}

#[test]
fn nanotron_human_suffixes() {
    // 11.5K ms = 11.5 s; 11.4K tokens/s per GPU; `consumed_tokens: 85.8G` is not a figure.
    check("nanotron-issue-390.log", "nanotron", &[(STEP, 11.5), (TPS, 11_400.0), (TFLOPS, 38.3)]);
    check("nanotron-pr-23.log", "nanotron", &[(STEP, 0.0412), (TPS, 1_940.0), (TFLOPS, 0.0095)]);
}

#[test]
fn nemo_text_logger_and_lightning_progress_bar() {
    check("nemo2-bionemo-pr-740.log", "NeMo", &[(STEP, 0.03146)]);
    let f = check("nemo-launcher-issue-55.log", "NeMo", &[(STEP, 41.36)]);
    assert!(f.notes.iter().any(|n| n.contains("progress bar")), "{:?}", f.notes);
}

#[test]
fn deepspeed_old_timer_line() {
    check("deepspeed-issue-1825.log", "DeepSpeed", &[(SAMPLES, 83.48609168106144), (ALLOCATED, 9.02 * GIB_IN_GB)]);
}

#[test]
fn nanogpt_and_nanochat_time_and_tokens_not_their_mfu() {
    check("nanogpt-issue-110.log", "nanoGPT", &[(STEP, 0.56194)]);
    let f = check("nanochat-pr-147.log", "nanochat", &[(STEP, 0.98944), (TPS_ALL, 529_882.0)]);
    assert!(f.notes.iter().any(|n| n.contains("mfu")), "{:?}", f.notes);
}

#[test]
fn lines_that_report_no_training_step_are_not_read_as_one() {
    for line in [
        // A tqdm bar that is not Lightning's training bar.
        "Loading checkpoint shards: 100%|██████████| 4/4 [00:10<00:00,  2.61s/it]",
        "  5%|▌         | 50/1000 [01:00<19:00,  1.20s/it]",
        // Lightning's validation bar.
        "Validation DataLoader 0:  40%|████      | 4/10 [00:02<00:03,  1.93it/s]",
        // nanoGPT's evaluation line and nanochat's validation line.
        "step 2000: train loss 2.9012, val loss 3.0123",
        "Step 00250 | Validation bpb: 1.0123",
        // Megatron's validation report, Hugging Face's evaluation metrics, MaxText's memory line.
        " validation loss at iteration 100 | lm loss value: 2.5E+00 | lm loss PPL: 1.2E+01 |",
        "{'eval_loss': 2.1, 'eval_runtime': 12.3, 'eval_samples_per_second': 81.3, 'epoch': 1.0}",
        "\tMemstats: After params initialized:",
        // DeepSpeed's step line, which carries no figure.
        "[2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=40, skipped=0, lr=[0.0001]",
    ] {
        let e = read_log(line).expect_err(line).to_string();
        assert!(e.contains("no line of a training log"), "{line}: {e}");
    }
}
