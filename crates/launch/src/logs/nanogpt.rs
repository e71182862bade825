//! nanoGPT's and nanochat's step lines (Andrej Karpathy's small trainers, plain PyTorch with DDP,
//! which many people run before anything larger):
//!
//! ```text
//! iter 1631: loss 4.0863, time 561.94ms, mfu 35.12%                         (nanoGPT train.py)
//! step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: 529,882 | mfu: 74.13 | total time: 0.00m
//!                                                                            (nanochat base_train.py)
//! ```
//!
//! Read: the iteration's wall time (`time`, `dt`, in ms; one optimizer step with its gradient
//! accumulation) and nanochat's `tok/sec` (the step's tokens over every rank, over `dt`). Left
//! out: their `mfu`, which both divide by a peak written into the script (nanoGPT an A100's
//! 312 TFLOP/s per GPU, nanochat an H100's 989 TFLOP/s per GPU) whatever the part, so it is no
//! utilisation of the part the run used; and nanoGPT's `mfu` is also a moving average. Evaluation
//! lines (`step 2000: train loss …, val loss …`, `Step 00250 | Validation bpb: …`) carry no time
//! and are not read.

use super::{Reading, first_word, number, word_after};
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::MetricKind;

const MFU_NOTE: &str = "the log's `mfu` is left out: nanoGPT and nanochat divide by a peak written into the \
                        script (an A100's or an H100's), not the part the run used";

/// A number of milliseconds printed as `561.94ms`, in seconds.
fn millis(word: &str, what: &str) -> Result<f64, String> {
    let ms = word.trim_end_matches(',').strip_suffix("ms").ok_or_else(|| format!("{what} `{word}` is not in ms"))?;
    Ok(number(ms, what, false)? / 1000.0)
}

/// nanoGPT's line: `iter N: loss L, time Tms[, mfu M%]`.
pub fn read_nanogpt_line(line: &str) -> Option<Result<Reading, String>> {
    let rest = line.trim_start().strip_prefix("iter ")?;
    let (n, rest) = rest.split_once(':')?;
    let step = n.trim().parse::<u64>().ok()?;
    let at = rest.find(", time ")?;
    if !rest[..at].trim_start().starts_with("loss ") {
        return None;
    }
    let time = first_word(&rest[at + ", time ".len()..]);
    Some(millis(time, "time").map(|s| Reading {
        step: Some(step),
        figures: vec![(Figure::Time(MetricKind::StepTimeS), s)],
        note: rest.contains("mfu").then_some(MFU_NOTE),
    }))
}

/// nanochat's line: `step N/TOTAL (P%) | loss: … | dt: Tms | tok/sec: K | mfu: M | …`.
pub fn read_nanochat_line(line: &str) -> Option<Result<Reading, String>> {
    let rest = line.trim_start().strip_prefix("step ")?;
    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if n.is_empty() || !rest[n.len()..].starts_with('/') || !line.contains("| dt:") {
        return None;
    }
    let step = n.parse::<u64>().ok()?;
    Some((|| {
        let dt = word_after(line, "| dt:").unwrap_or("");
        let mut figures = vec![(Figure::Time(MetricKind::StepTimeS), millis(dt, "dt")?)];
        if let Some(t) = word_after(line, "| tok/sec:") {
            figures.push((Figure::Time(MetricKind::TokensPerSTotal), number(t, "tok/sec", false)?));
        }
        Ok(Reading { step: Some(step), figures, note: line.contains("| mfu:").then_some(MFU_NOTE) })
    })())
}
