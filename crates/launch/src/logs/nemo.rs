//! NeMo's training metrics, logged through PyTorch Lightning: `train_step_timing in s` (the
//! step timer of NeMo's `MegatronStrategy` / `NLPDDPStrategy` callbacks, seconds per optimizer
//! step) and, with the FLOPs measurement callback, `TFLOPS_per_GPU`. They appear in the progress
//! bar (`…, global_step=49.0, train_step_timing in s=1.23]`) and in NeMo 2's text logger
//! (`Training epoch 0, iteration 49/99 | … | global_step: 49 | reduced_train_loss: 6.9 |
//! train_step_timing in s: 1.23 | …`), `=` or `:` between key and value.

use super::Reading;
use fmperf_core::calibrate::Figure;
use fmperf_core::validate::metric::MetricKind;

/// The number after `key` followed by `=` or `:` (`None` without `key`).
fn value(line: &str, key: &str) -> Option<Result<f64, String>> {
    let at = line.find(key)? + key.len();
    let rest = line[at..].trim_start().trim_start_matches(['=', ':']).trim_start();
    let text: String =
        rest.chars().take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')).collect();
    Some(match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{key} `{}` is not a number", rest.split([',', '|', ']']).next().unwrap_or("").trim())),
    })
}

/// Reads one line (see the module documentation).
pub fn read_line(line: &str) -> Option<Result<Reading, String>> {
    if !line.contains("train_step_timing in s") {
        return None;
    }
    Some((|| {
        let mut figures = Vec::new();
        if let Some(t) = value(line, "train_step_timing in s") {
            figures.push((Figure::Time(MetricKind::StepTimeS), t?));
        }
        if let Some(f) = value(line, "TFLOPS_per_GPU") {
            figures.push((Figure::Time(MetricKind::TflopsPerDevice), f?));
        }
        // `global_step` is a float in the progress bar (49.0).
        let step = value(line, "global_step").and_then(Result::ok).map(|s| s as u64);
        Ok(Reading { step, figures })
    })())
}
