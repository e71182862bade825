//! Measurement conventions: which number a row measured and how its source counts FLOPs, read from
//! the row's `flop_convention`, and the conversion of a predicted iteration time into that number.
//!
//! Conventions recognised (case-insensitive substrings of `flop_convention`):
//!
//! | text | metric | FLOPs per iteration |
//! |---|---|---|
//! | `iteration time` | seconds per iteration | — |
//! | `tokens/s` | tokens per second per device | — |
//! | `megatron eq` | TFLOP/s per device | Narayanan et al. 2021 eq. (3): `96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h))`, which includes the forward pass of full recomputation (hardware-FLOP style) |
//! | `llm-foundry` | MFU | `(6·N·s + 12·L·h·s²)` per sequence, `N` the stated parameter count, against the dense peak of the precision |
//! | `nemo`, `maxtext`, `model tflop` | TFLOP/s per device | model FLOPs: three times the forward matmul FLOPs of a non-causal decoder (Q, K/V with their own width, output projection, two or three MLP matrices, `4·s·a·d` of attention per token and layer) plus the output head `2·h·V` per token — the formulas of NeMo's `flops_formulas.py` and MaxText's per-device TFLOP count |
//!
//! Because every convention is a fixed count per iteration, `predicted/measured − 1` equals
//! `measured time / predicted time − 1` in any of them; the convention only has to be the source's
//! own for the measured time to be read back correctly.

use super::schema::MeasuredRun;

/// How a source counts the FLOPs of one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlopConvention {
    /// Megatron-LM eq. (3) (with the recomputation forward).
    MegatronEq3,
    /// Model FLOPs of a non-causal decoder with its head (NeMo, MaxText).
    ModelFlops,
    /// llm-foundry's `6·N·s + 12·L·h·s²` per sequence.
    LlmFoundry,
}

/// The number a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// TFLOP/s per device in a FLOP convention.
    TflopsPerDevice(FlopConvention),
    /// Model FLOP utilisation (0–1) in a FLOP convention, against the dense peak.
    Mfu(FlopConvention),
    /// Tokens per second per device.
    TokensPerDevice,
    /// Seconds per iteration.
    StepTime,
}

impl Metric {
    /// Name with unit, for tables and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Metric::TflopsPerDevice(FlopConvention::MegatronEq3) => {
                "TFLOP/s per device (Megatron eq. 3, hardware FLOPs)"
            }
            Metric::TflopsPerDevice(_) => "model TFLOP/s per device",
            Metric::Mfu(_) => "MFU [fraction of peak]",
            Metric::TokensPerDevice => "tokens/s per device",
            Metric::StepTime => "iteration time [s]",
        }
    }

    /// A short key (`tflops`, `mfu`, `tokens_per_s`, `step_time_s`).
    pub fn key(&self) -> &'static str {
        match self {
            Metric::TflopsPerDevice(_) => "tflops_per_device",
            Metric::Mfu(_) => "mfu",
            Metric::TokensPerDevice => "tokens_per_s_per_device",
            Metric::StepTime => "step_time_s",
        }
    }

    /// Whether a larger value means faster (all but the step time).
    pub fn higher_is_faster(&self) -> bool {
        *self != Metric::StepTime
    }
}

/// The metric and measured value of a row, or why it has none.
pub fn measured_metric(run: &MeasuredRun) -> Result<(Metric, f64), String> {
    let conv = run.measured.flop_convention.as_deref().unwrap_or("").to_ascii_lowercase();
    let m = &run.measured;
    let need = |v: Option<f64>, what: &str| {
        v.ok_or_else(|| format!("the convention `{conv}` needs `measured.{what}`, which is null"))
    };
    if conv.contains("iteration time") {
        return Ok((Metric::StepTime, need(m.step_time_s, "step_time_s")?));
    }
    if conv.contains("tokens/s") {
        let per_device = m.tokens_per_s_per_device.or_else(|| Some(m.tokens_per_s_total? / run.num_devices? as f64));
        return Ok((Metric::TokensPerDevice, need(per_device, "tokens_per_s_per_device")?));
    }
    if conv.contains("megatron eq") {
        return Ok((
            Metric::TflopsPerDevice(FlopConvention::MegatronEq3),
            need(m.tflops_per_device, "tflops_per_device")?,
        ));
    }
    if conv.contains("llm-foundry") {
        return Ok((Metric::Mfu(FlopConvention::LlmFoundry), need(m.mfu, "mfu")?));
    }
    if conv.contains("nemo") || conv.contains("maxtext") || conv.contains("model tflop") {
        return Ok((
            Metric::TflopsPerDevice(FlopConvention::ModelFlops),
            need(m.tflops_per_device, "tflops_per_device")?,
        ));
    }
    if conv.is_empty() {
        Err("measured.flop_convention is null: the measured number cannot be interpreted".to_string())
    } else {
        Err(format!(
            "flop_convention `{}` is not a convention fmperf knows",
            run.measured.flop_convention.as_deref().unwrap_or("")
        ))
    }
}

/// The shape numbers a FLOP convention reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConventionShape {
    /// Blocks `L`.
    pub layers: f64,
    /// Width `h`.
    pub hidden: f64,
    /// Query width `a·d`.
    pub q_width: f64,
    /// Key/value width `kv·d`.
    pub kv_width: f64,
    /// MLP width `f`.
    pub ffn: f64,
    /// MLP matrices (2, or 3 gated).
    pub mlp_matrices: f64,
    /// Sequence length `s`.
    pub seq: f64,
    /// Vocabulary `V` (0 when unknown).
    pub vocab: f64,
    /// Stated parameters `N` [count] (llm-foundry).
    pub params: Option<f64>,
}

/// FLOPs of one iteration of `batch` sequences in a convention [FLOP], or why it cannot be counted.
pub fn iteration_flops(conv: FlopConvention, s: &ConventionShape, batch: f64) -> Result<f64, String> {
    let (l, h, seq) = (s.layers, s.hidden, s.seq);
    match conv {
        FlopConvention::MegatronEq3 => {
            if s.vocab == 0.0 {
                return Err("Megatron's eq. (3) needs the vocabulary, which is null".to_string());
            }
            Ok(96.0 * batch * seq * l * h * h * (1.0 + seq / (6.0 * h) + s.vocab / (16.0 * l * h)))
        }
        FlopConvention::ModelFlops => {
            let per_layer = 2.0 * h * (s.q_width + 2.0 * s.kv_width)
                + 2.0 * s.q_width * h
                + 2.0 * s.mlp_matrices * h * s.ffn
                + 4.0 * seq * s.q_width;
            Ok(3.0 * (l * per_layer + 2.0 * h * s.vocab) * seq * batch)
        }
        FlopConvention::LlmFoundry => {
            let n =
                s.params.ok_or("llm-foundry's MFU needs the stated parameter count (model.params_b), which is null")?;
            Ok((6.0 * n * seq + 12.0 * l * h * seq * seq) * batch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(l: f64, h: f64, f: f64, m: f64, kv: f64, seq: f64, v: f64) -> ConventionShape {
        ConventionShape {
            layers: l,
            hidden: h,
            q_width: h,
            kv_width: kv,
            ffn: f,
            mlp_matrices: m,
            seq,
            vocab: v,
            params: None,
        }
    }

    #[test]
    fn nemo_formulas_are_reproduced() {
        // NeMo gpt3: (24·s·h² + 4·s²·h)·3L + 6·s·h·V per sequence (gbs = 1).
        let (l, h, s, v) = (24.0, 4096.0, 2048.0, 51200.0);
        let nemo = (24.0 * s * h * h + 4.0 * s * s * h) * 3.0 * l + 6.0 * s * h * v;
        let ours = iteration_flops(FlopConvention::ModelFlops, &shape(l, h, 4.0 * h, 2.0, h, s, v), 1.0).unwrap();
        assert!((ours / nemo - 1.0).abs() < 1e-12);
        // NeMo llama: s·L·h²·(12 + 12·kv/a + 18·f/h + 12·s/h + 6·V/(L·h)).
        let (l, h, f, s, v, kvw) = (32.0, 4096.0, 14336.0, 8192.0, 128256.0, 1024.0);
        let nemo = s * l * h * h * (12.0 + 12.0 * kvw / h + 18.0 * f / h + 12.0 * s / h + 6.0 * v / (l * h));
        let ours = iteration_flops(FlopConvention::ModelFlops, &shape(l, h, f, 3.0, kvw, s, v), 1.0).unwrap();
        assert!((ours / nemo - 1.0).abs() < 1e-12);
    }

    #[test]
    fn megatron_eq3_and_llm_foundry() {
        let s = shape(96.0, 12288.0, 49152.0, 2.0, 12288.0, 2048.0, 51200.0);
        let f = iteration_flops(FlopConvention::MegatronEq3, &s, 1536.0).unwrap();
        // 174B at batch 1536: about 4.5e18 FLOP per iteration.
        assert!((f / 4.51e18 - 1.0).abs() < 0.01, "{f}");
        assert!(iteration_flops(FlopConvention::MegatronEq3, &ConventionShape { vocab: 0.0, ..s }, 1.0).is_err());
        let mpt =
            ConventionShape { params: Some(6.659e9), ..shape(32.0, 4096.0, 16384.0, 2.0, 4096.0, 2048.0, 50368.0) };
        let f = iteration_flops(FlopConvention::LlmFoundry, &mpt, 1.0).unwrap();
        assert_eq!(f, 6.0 * 6.659e9 * 2048.0 + 12.0 * 32.0 * 4096.0 * 2048.0 * 2048.0);
    }
}
