//! NeMo's training metrics, logged through PyTorch Lightning: `train_step_timing in s` (the
//! step timer of NeMo's `MegatronStrategy` / `NLPDDPStrategy` callbacks, seconds per optimizer
//! step) and, with the FLOPs measurement callback, `TFLOPS_per_GPU`. They appear in the progress
//! bar (`…, global_step=49.0, train_step_timing in s=1.23]`) and in NeMo 2's text logger
//! (`Training epoch 0, iteration 49/99 | … | global_step: 49 | reduced_train_loss: 6.9 |
//! train_step_timing in s: 1.23 | …`), `=` or `:` between key and value.
//!
//! Without `train_step_timing` (NeMo 1 runs that did not log it), Lightning's training progress
//! bar still says how fast it goes: `Epoch 0:   1%|   | 795/77225 [9:07:58<878:01:48, 41.36s/it,
//! loss=3.1, …, global_step=794.0, …]`. Its rate (tqdm's `s/it`, or `it/s` when faster than one
//! per second) is a moving average over the last iterations, and one Lightning iteration is one
//! optimizer step in NeMo (its microbatches run inside the step). Only a bar whose description is
//! `Epoch N:` is read: validation bars, checkpoint loading and other tqdm bars are not steps.

use super::Reading;
use fmperf_core::calibrate::Figure;
use fmperf_core::vocab::MetricKind;

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
        return progress_bar(line);
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
        Ok(Reading { step, figures, note: None })
    })())
}

/// Lightning's training progress bar (see the module documentation): `None` when the line is not
/// one; no figure while tqdm has no rate yet (`?it/s`).
fn progress_bar(line: &str) -> Option<Result<Reading, String>> {
    let t = line.trim_start();
    let epoch = t.strip_prefix("Epoch ")?;
    let digits = epoch.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || !epoch[digits..].starts_with(':') {
        return None;
    }
    // `| n/total [elapsed<remaining, RATE, postfix…]`
    let bracket = &t[t.find("| ").and_then(|bar| t[bar..].find('[').map(|b| bar + b + 1))?..];
    let rate = bracket.split_once(',')?.1.split([',', ']']).next()?.trim();
    let seconds = if let Some(s) = rate.strip_suffix("s/it") {
        Some(super::number(s, "progress bar rate (s/it)", false))
    } else if let Some(r) = rate.strip_suffix("it/s") {
        if r == "?" {
            None
        } else {
            Some(super::number(r, "progress bar rate (it/s)", false).map(|r| if r > 0.0 { 1.0 / r } else { 0.0 }))
        }
    } else {
        return None;
    };
    Some((|| {
        let figures = match seconds {
            Some(s) => vec![(Figure::Time(MetricKind::StepTimeS), s?)],
            None => Vec::new(),
        };
        let step = value(line, "global_step").and_then(Result::ok).map(|s| s as u64);
        Ok(Reading {
            step,
            figures,
            note: Some(
                "step time from Lightning's progress bar: tqdm's moving average of seconds per iteration (one \
                 optimizer step); NeMo's `train_step_timing in s` is the step timer itself, when logged",
            ),
        })
    })())
}
