//! FLOP counts of one iteration, as sources count them, so that a predicted iteration time can be
//! converted into a row's own TFLOP/s or MFU (which figure a row measured and which count it uses
//! is read by [`super::metric`]).
//!
//! | count | FLOPs per iteration |
//! |---|---|
//! | Megatron eq. (3) | Narayanan et al. 2021: `96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h))`, which includes the forward pass of full recomputation (hardware-FLOP style) |
//! | 6·N (llm-foundry, PaLM) | `(6·N·s + 12·L·h·s²)` per sequence, `N` the stated parameter count (else counted from the shape: blocks plus one embedding matrix) |
//! | model FLOPs (NeMo, MaxText) | three times the forward matmul FLOPs of a non-causal decoder (Q, K/V with their own width, output projection, two or three MLP matrices, `4·s·a·d` of attention per token and layer) plus the output head `2·h·V` per token — the formulas of NeMo's `flops_formulas.py` and MaxText's per-device TFLOP count |
//! | hardware FLOPs | model FLOPs plus the forward work recomputation repeats: every block's forward (full), the attention core's (selective), nothing (none) |
//!
//! Because every count is a fixed number per iteration, `predicted/measured − 1` equals
//! `measured time / predicted time − 1` in any of them; the count only has to be the source's own
//! for the measured time to be read back correctly.

use super::metric::FlopCount;
use crate::extended::Recompute;
use crate::vocab::Note;

/// How a source counts the FLOPs of one iteration (the formulas of the table above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlopConvention {
    /// Megatron-LM eq. (3) (with the recomputation forward).
    MegatronEq3,
    /// Model FLOPs of a non-causal decoder with its head (NeMo, MaxText).
    ModelFlops,
    /// llm-foundry's `6·N·s + 12·L·h·s²` per sequence.
    LlmFoundry,
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

/// Why a convention cannot count a shape's FLOPs: a number it needs is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UncountedFlops {
    /// Megatron's eq. (3) without the vocabulary.
    NoVocabulary,
    /// llm-foundry's 6·N without the stated parameter count.
    NoParameterCount,
}

impl std::fmt::Display for UncountedFlops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UncountedFlops::NoVocabulary => "Megatron's eq. (3) needs the vocabulary, which is null",
            UncountedFlops::NoParameterCount => {
                "llm-foundry's MFU needs the stated parameter count (model.params_b), which is null"
            }
        })
    }
}

impl std::error::Error for UncountedFlops {}

/// FLOPs of one iteration of `batch` sequences in a convention [FLOP], or why it cannot be counted.
pub fn iteration_flops(conv: FlopConvention, s: &ConventionShape, batch: f64) -> Result<f64, UncountedFlops> {
    let (l, h, seq) = (s.layers, s.hidden, s.seq);
    match conv {
        FlopConvention::MegatronEq3 => {
            if s.vocab == 0.0 {
                return Err(UncountedFlops::NoVocabulary);
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
            let n = s.params.ok_or(UncountedFlops::NoParameterCount)?;
            Ok((6.0 * n * seq + 12.0 * l * h * seq * seq) * batch)
        }
    }
}

/// Parameters of the shape [count]: blocks (attention and MLP matrices) plus one embedding matrix.
fn counted_parameters(s: &ConventionShape) -> f64 {
    let block = s.hidden * (s.q_width + 2.0 * s.kv_width) + s.q_width * s.hidden + s.mlp_matrices * s.hidden * s.ffn;
    s.layers * block + s.vocab * s.hidden
}

/// Forward FLOPs of one sequence that recomputation repeats [FLOP].
fn recompute_forward(s: &ConventionShape, recompute: Recompute) -> f64 {
    let attention_core = 4.0 * s.seq * s.q_width * s.seq;
    match recompute {
        Recompute::None => 0.0,
        Recompute::Selective => s.layers * attention_core,
        // torchtitan's operator-level policy: the K, output and MLP-up projections (every second
        // matmul) run again; attention is saved.
        Recompute::Op => {
            let up = if s.mlp_matrices > 2.0 { 2.0 * s.hidden * s.ffn } else { 0.0 };
            s.layers * (2.0 * s.hidden * s.kv_width + 2.0 * s.q_width * s.hidden + up) * s.seq
        }
        Recompute::Full => {
            let matmuls = 2.0 * s.hidden * (s.q_width + 2.0 * s.kv_width)
                + 2.0 * s.q_width * s.hidden
                + 2.0 * s.mlp_matrices * s.hidden * s.ffn;
            s.layers * (matmuls * s.seq + attention_core)
        }
        // Its share of a full recomputation.
        Recompute::Partial(share) => share.fraction() * recompute_forward(s, Recompute::Full),
    }
}

/// FLOPs of one iteration of `batch` sequences in a count read from a row [FLOP]; `recompute` is
/// the row's policy (hardware FLOPs count its extra forward). The note (if any) says what was
/// assumed.
pub fn flops_of(
    count: FlopCount,
    s: &ConventionShape,
    batch: f64,
    recompute: Recompute,
) -> Result<(f64, Option<Note>), UncountedFlops> {
    match count {
        FlopCount::Model => Ok((iteration_flops(FlopConvention::ModelFlops, s, batch)?, None)),
        FlopCount::Hardware => {
            let model = iteration_flops(FlopConvention::ModelFlops, s, batch)?;
            Ok((model + recompute_forward(s, recompute) * batch, None))
        }
        FlopCount::MegatronEq3 => Ok((iteration_flops(FlopConvention::MegatronEq3, s, batch)?, None)),
        FlopCount::SixN => match s.params {
            Some(_) => Ok((iteration_flops(FlopConvention::LlmFoundry, s, batch)?, None)),
            None => {
                let n = counted_parameters(s);
                let with = ConventionShape { params: Some(n), ..*s };
                Ok((
                    iteration_flops(FlopConvention::LlmFoundry, &with, batch)?,
                    Some(
                        Note::assumption(format!(
                            "parameter count not stated: {:.3} B counted from the shape",
                            n * 1e-9
                        ))
                        .about("model.params_b"),
                    ),
                ))
            }
        },
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

    #[test]
    fn hardware_flops_add_the_recomputed_forward() {
        // h = 1024, no vocabulary, one layer, s = 1024, MLP 4h: forward matmuls 24·h²·s, attention
        // 4·s²·h; model = 3× forward; full recompute adds one forward, selective the attention core.
        let (h, s) = (1024.0, 1024.0);
        let sh = shape(1.0, h, 4.0 * h, 2.0, h, s, 0.0);
        let fwd = 24.0 * h * h * s + 4.0 * s * s * h;
        let (model, _) = flops_of(FlopCount::Model, &sh, 1.0, Recompute::Full).unwrap();
        assert!((model / (3.0 * fwd) - 1.0).abs() < 1e-12);
        let (full, _) = flops_of(FlopCount::Hardware, &sh, 1.0, Recompute::Full).unwrap();
        assert!((full / (4.0 * fwd) - 1.0).abs() < 1e-12);
        let (sel, _) = flops_of(FlopCount::Hardware, &sh, 1.0, Recompute::Selective).unwrap();
        assert!((sel - (3.0 * fwd + 4.0 * s * s * h)).abs() < 1e-3);
        let (six, note) = flops_of(FlopCount::SixN, &sh, 1.0, Recompute::None).unwrap();
        assert_eq!(six, 6.0 * 12.0 * h * h * s + 12.0 * h * s * s);
        assert!(note.unwrap().contains("counted from the shape"));
    }
}
