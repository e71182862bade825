//! The training-log readers on excerpts in each framework's format (`tests/data/logs/`, see its
//! README for where each format comes from): figures, steady-state medians, units, errors.

use fmperf_core::calibrate::{Figure, Measured};
use fmperf_core::vocab::{MemoryKind, MetricKind};
use fmperf_launch::logs::{LogFigures, read_log};

fn read(name: &str) -> LogFigures {
    let path = format!("{}/tests/data/logs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    read_log(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn get(f: &LogFigures, figure: Figure) -> &Measured {
    f.measured.iter().find(|m| m.figure == figure).unwrap_or_else(|| panic!("{figure:?} in {:?}", f.measured))
}

fn close(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 1e-9
}

const STEP: Figure = Figure::Time(MetricKind::StepTimeS);
const TFLOPS: Figure = Figure::Time(MetricKind::TflopsPerDevice);
const TPS: Figure = Figure::Time(MetricKind::TokensPerSPerDevice);
const SAMPLES: Figure = Figure::Time(MetricKind::SamplesPerS);

#[test]
fn megatron_lm_median_of_steady_iterations_and_memory_in_mib() {
    let f = read("megatron-lm.log");
    assert_eq!(f.framework, "Megatron-LM");
    // Iteration 10 is warm-up; the median of 20, 30, 40, 50.
    assert!(close(get(&f, STEP).value, (14.8954 + 14.9023) / 2.0), "{:?}", get(&f, STEP));
    assert!(close(get(&f, TFLOPS).value, (349.5 + 349.7) / 2.0));
    assert_eq!(f.warmup_skipped, 2, "the iteration-10 line and the memory report after 10 iterations");
    // The memory report (after 10 iterations) is kept: a peak is a maximum since the start.
    assert!(close(get(&f, Figure::Memory(MemoryKind::PeakReserved)).value, 60112.0 * 1.048576e-3));
    assert!(close(get(&f, Figure::Memory(MemoryKind::PeakAllocated)).value, 52410.55 * 1.048576e-3));
    assert!(get(&f, STEP).source.contains("median of 4"), "{}", get(&f, STEP).source);
    assert!(f.notes.iter().any(|n| n.contains("warm-up")));
}

#[test]
fn megatron_deepspeed_additions() {
    let f = read("megatron-deepspeed.log");
    assert_eq!(f.framework, "Megatron-LM");
    assert!(close(get(&f, STEP).value, (5.1234 + 5.1019) / 2.0));
    assert!(close(get(&f, SAMPLES).value, (99.933 + 100.355) / 2.0));
    assert!(close(get(&f, TPS).value, (3197.9 + 3211.4) / 2.0));
    assert!(close(get(&f, TFLOPS).value, (148.21 + 148.83) / 2.0));
}

#[test]
fn nemo_text_logger_and_progress_bar() {
    let f = read("nemo.log");
    assert_eq!(f.framework, "NeMo");
    assert!(close(get(&f, STEP).value, 12.45));
    assert!(close(get(&f, TFLOPS).value, 613.1));
    let p = read("nemo-progress-bar.log");
    // One warm-up reading and nothing later: kept, with a note.
    assert!(close(get(&p, STEP).value, 15.10));
    assert!(p.notes.iter().any(|n| n.contains("every reading")), "{:?}", p.notes);
}

#[test]
fn torchtitan_in_colour() {
    let f = read("torchtitan.log");
    assert_eq!(f.framework, "torchtitan");
    // Steps 1 and 10 are warm-up; median of 20, 30, 40.
    assert!(close(get(&f, TPS).value, 6505.0));
    assert!(close(get(&f, TFLOPS).value, 376.78));
    assert!(close(get(&f, Figure::Time(MetricKind::Mfu)).value, 0.3810));
    assert!(close(get(&f, Figure::Memory(MemoryKind::PeakReserved)).value, 55.71 * 1.073741824));
}

#[test]
fn maxtext_steps() {
    let f = read("maxtext.log");
    assert_eq!(f.framework, "MaxText");
    assert!(close(get(&f, STEP).value, 2.391));
    assert!(close(get(&f, TPS).value, 3426.092));
    assert!(close(get(&f, TFLOPS).value, 177.096));
    assert_eq!(f.warmup_skipped, 2);
}

#[test]
fn hugging_face_trainer_final_metrics() {
    let f = read("hf-trainer.log");
    assert_eq!(f.framework, "Hugging Face Trainer");
    assert!(close(get(&f, SAMPLES).value, 45.236));
    assert_eq!(f.measured.len(), 1);
}

#[test]
fn deepspeed_throughput_timer() {
    let f = read("deepspeed.log");
    assert_eq!(f.framework, "DeepSpeed");
    assert!(close(get(&f, SAMPLES).value, 41.73));
    assert!(close(get(&f, Figure::Memory(MemoryKind::PeakAllocated)).value, 31.87 * 1.073741824));
}

#[test]
fn nanotron_human_numbers() {
    let f = read("nanotron.log");
    assert_eq!(f.framework, "nanotron");
    assert!(close(get(&f, STEP).value, 2.375));
    assert!(close(get(&f, TPS).value, 27_600.0));
    assert!(close(get(&f, TFLOPS).value, 224.5));
    assert!(close(get(&f, Figure::Memory(MemoryKind::PeakReserved)).value, 24780.0 * 1.048576e-3));
}

#[test]
fn bad_lines_are_errors_naming_the_line() {
    let e = read_log("hello\ncompleted step: 12, seconds: fast, TFLOP/s/device: 1.0\n").unwrap_err().to_string();
    assert!(e.contains("log line 2") && e.contains("seconds `fast`"), "{e}");
    let e = read_log("just some words\nand more").unwrap_err().to_string();
    assert!(e.contains("no line of a training log"), "{e}");
    let mixed = "completed step: 12, seconds: 2.3\n iteration 20/100 | elapsed time per iteration (ms): 100.0 |\n";
    let e = read_log(mixed).unwrap_err().to_string();
    assert!(e.contains("log line 2") && e.contains("line 1"), "{e}");
    let e = read_log("step: 20  loss: 1.0  tps: 1,2x4  mfu: 3%").unwrap_err().to_string();
    assert!(e.contains("log line 1") && e.contains("tps"), "{e}");
    // A zero throughput is no figure to calibrate on.
    assert!(read_log("completed step: 20, seconds: 0.0").is_err());
}

#[test]
fn a_progress_bar_redrawn_in_place_reads_its_last_update() {
    // tqdm redraws with `\r`: a log file keeps every update on one line; the last is what shows.
    let line = "Epoch 0:   1%|          | 20/2000 [00:40<1:06:00, 2.50s/it, global_step=19.0]\r\
                Epoch 0:   1%|          | 21/2000 [00:42<1:05:58, 2.00s/it, global_step=20.0]\r\
                Epoch 0:   1%|          | 22/2000 [00:44<1:05:56, 4.00it/s, global_step=21.0]\n";
    let f = read_log(line).unwrap();
    assert_eq!(f.framework, "NeMo");
    assert!(close(get(&f, STEP).value, 0.25), "4 it/s = 0.25 s per step: {:?}", f.measured);
    // Before tqdm has a rate there is no figure.
    assert!(read_log("Epoch 0:   0%|          | 0/2000 [00:00<?, ?it/s]").is_err());
}
