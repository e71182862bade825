//! The transformer as extended mode sees it: the reference's shape plus grouped-query attention, a
//! head width of its own, a gated MLP and the vocabulary; for Mixture-of-Experts models also the
//! experts, multi-head latent attention and multi-token prediction ([`super::moe`]).

use crate::catalog::{CatalogModel, Mlp};
use crate::moe_shape::{MAX_MTP_LAYERS, Mla, MoeShape};
use crate::vocab::SlidingWindow;
use crate::vocab::{Note, NoteKind};
use crate::{Error, ModelShape};

/// A decoder-only transformer. All fields are counts (dimensionless).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Workload {
    /// Sequence length [tokens per sample].
    pub seq_len: u64,
    /// Model width `h` [channels].
    pub hidden: u64,
    /// Query heads `a`.
    pub heads: u64,
    /// Key/value heads (`< heads`: grouped-query attention, 1: multi-query).
    pub kv_heads: u64,
    /// Width of one head `d` [channels] (usually `hidden / heads`).
    pub head_dim: u64,
    /// Transformer blocks `D`.
    pub layers: u64,
    /// MLP hidden width `f` [channels] (gated MLPs: width of each branch).
    pub ffn_hidden: u64,
    /// Gated MLP (SwiGLU): gate, up and down matrices.
    pub gated_mlp: bool,
    /// Vocabulary size [tokens]; `None`: no embedding and no output head are modelled.
    pub vocab: Option<u64>,
    /// Mixture-of-Experts blocks; `None`: a dense model (every block's MLP of width `ffn_hidden`;
    /// with experts, `ffn_hidden` is the width of the dense blocks' MLP).
    pub moe: Option<MoeShape>,
    /// Multi-head latent attention instead of (grouped-query) multi-head attention.
    pub mla: Option<Mla>,
    /// Multi-token-prediction blocks trained beside the `layers` blocks (DeepSeek-V3: 1), each one
    /// block of the model's last kind plus a `2h × h` projection and its own pass through the head.
    pub mtp_layers: u64,
    /// The output head reuses the embedding matrix (GPT-2, Gemma, Llama 3.2 1B/3B): its
    /// parameters, gradients and optimizer states count once when both ends sit on one device
    /// (with pipeline parallelism the first and last stages each hold a copy, as Megatron-LM does).
    pub tied_embeddings: bool,
    /// Sliding-window attention in some of the blocks (`None`: every block attends to the whole
    /// causal prefix).
    pub sliding_window: Option<SlidingWindow>,
}

/// Largest vocabulary accepted [tokens] (keeps products in range).
const MAX_VOCAB: u64 = 16_777_216;

impl Workload {
    /// Llama 3 8B (Meta's public configuration): sequence 8192, width 4096, 32 query heads, 8 KV
    /// heads of width 128, 32 blocks, SwiGLU MLP of width 14336, vocabulary 128256.
    pub const LLAMA3_8B: Workload = Workload {
        seq_len: 8192,
        hidden: 4096,
        heads: 32,
        kv_heads: 8,
        head_dim: 128,
        layers: 32,
        ffn_hidden: 14336,
        gated_mlp: true,
        vocab: Some(128256),
        moe: None,
        mla: None,
        mtp_layers: 0,
        tied_embeddings: false,
        sliding_window: None,
    };

    /// The GPT of Megatron-LM's functional tests (`tests/functional_tests/test_cases/gpt/*/
    /// model_config.yaml` at NVIDIA/Megatron-LM d98e8a6): 12 blocks of width 512, 8 heads of 64,
    /// a GELU MLP of 4h, 1,024 tokens; no vocabulary (a block's view).
    pub const MEGATRON_TEST_GPT: Workload = Workload {
        seq_len: 1024,
        hidden: 512,
        heads: 8,
        kv_heads: 8,
        head_dim: 64,
        layers: 12,
        ffn_hidden: 2048,
        gated_mlp: false,
        vocab: None,
        ..Workload::LLAMA3_8B
    };

    /// The reference's view of a model: full multi-head attention, two-matrix MLP, no vocabulary.
    pub fn from_shape(m: &ModelShape) -> Workload {
        Workload {
            seq_len: m.l,
            hidden: m.e,
            heads: m.h,
            kv_heads: m.h,
            head_dim: m.head_width(),
            layers: m.depth,
            ffn_hidden: m.f,
            gated_mlp: false,
            vocab: None,
            moe: None,
            mla: None,
            mtp_layers: 0,
            tied_embeddings: false,
            sliding_window: None,
        }
    }

    /// A catalog model (its shape must be known; see [`CatalogModel::to_shape`]).
    pub fn from_catalog(m: &CatalogModel) -> Result<Workload, Error> {
        let shape = m.to_shape()?;
        let w = Workload {
            kv_heads: m.kv_heads.unwrap_or(shape.h),
            head_dim: m.head_dim.unwrap_or(shape.e / shape.h.max(1)),
            gated_mlp: m.mlp == Mlp::SwiGlu,
            vocab: m.vocab,
            moe: m.moe,
            mla: m.mla,
            mtp_layers: m.mtp_layers.unwrap_or(0),
            sliding_window: m.sliding_window,
            ..Workload::from_shape(&shape)
        };
        w.validate()?;
        Ok(w)
    }

    /// The reference's [`ModelShape`] of this workload (what reference mode is given).
    pub fn to_shape(&self) -> ModelShape {
        ModelShape { l: self.seq_len, e: self.hidden, h: self.heads, depth: self.layers, f: self.ffn_hidden }
    }

    /// Checks the fields: the reference's shape rules, `1 ≤ kv_heads ≤ heads` with `kv_heads`
    /// dividing `heads`, a positive head width, a vocabulary of at most 2²⁴ tokens.
    pub fn validate(&self) -> Result<(), Error> {
        self.to_shape().validate()?;
        if self.kv_heads == 0 || self.kv_heads > self.heads || !self.heads.is_multiple_of(self.kv_heads) {
            return Err(Error::invalid(
                "model.kv_heads",
                self.kv_heads,
                format!("must divide the number of query heads {}", self.heads),
            ));
        }
        if self.head_dim == 0 || self.head_dim > 65_536 {
            return Err(Error::invalid("model.head_dim", self.head_dim, "must be from 1 to 65536"));
        }
        if let Some(v) = self.vocab.filter(|v| *v == 0 || *v > MAX_VOCAB) {
            return Err(Error::invalid("model.vocab", v, format!("must be from 1 to {MAX_VOCAB}")));
        }
        if let Some(m) = &self.moe {
            m.validate(self.layers, "model.")?;
        }
        if let Some(m) = &self.mla {
            m.validate("model.")?;
        }
        if let Some(sw) = &self.sliding_window {
            if sw.tokens == 0 {
                return Err(Error::invalid("model.sliding_window.tokens", sw.tokens, "must be at least 1"));
            }
            if sw.full_every == Some(0) {
                return Err(Error::invalid(
                    "model.sliding_window.full_every",
                    0,
                    "must be at least 1 (one block in every `full_every` attends to the whole sequence)",
                ));
            }
        }
        if self.mtp_layers > MAX_MTP_LAYERS {
            return Err(Error::invalid(
                "model.mtp_layers",
                self.mtp_layers,
                format!("must be from 0 to {MAX_MTP_LAYERS}"),
            ));
        }
        Ok(())
    }

    /// A caveat when a matmul dimension of the model is not a multiple of 8 elements (the head
    /// width, the model width or the MLP width): NVIDIA's *Matrix Multiplication Background
    /// User's Guide* (Tensor Core requirements) has 16-bit Tensor Core GEMMs most efficient at
    /// multiples of 8 elements (16 bytes). fmperf prices unfused attention's matmuls off that rule
    /// at the FP16 non-Tensor-Core peak ([`super::pricing::Pricing::activation_matmul`]) and every
    /// other GEMM at its fitted efficiency; before that, BLOOM-176B's February 2022 trials (BigScience
    /// `chronicles-prequel.md`) ran such shapes (hidden 14400 with 64 heads, head width 108)
    /// 30–40 % slower than fmperf predicts, aligned ones 17 % (test `bloom_prequel_times`).
    /// `None`: all three are multiples of 8. The note ([`NoteKind::ModelCaveat`]) concerns the
    /// widths that are off (`model.head_dim`, `model.hidden`, `model.ffn_hidden`).
    pub fn alignment_caveat(&self) -> Option<Note> {
        let off: Vec<(&str, &str, u64)> = [
            ("head width", "head_dim", self.head_dim),
            ("model width", "hidden", self.hidden),
            ("MLP width", "ffn_hidden", self.ffn_hidden),
        ]
        .into_iter()
        .filter(|(_, _, v)| !v.is_multiple_of(8))
        .collect();
        (!off.is_empty()).then(|| {
            let named: Vec<String> = off.iter().map(|(name, _, v)| format!("{name} {v}")).collect();
            let text = format!(
                "{} not a multiple of 8: Tensor Core matmuls run below the fitted efficiency; fmperf prices unfused \
                 attention's matmuls at the FP16 non-Tensor-Core peak and the linear layers at the fitted efficiency \
                 (BLOOM-176B's 2022 trials with such shapes: TP 8 still 21 % faster than measured, against 15 % for \
                 its aligned shapes)",
                named.join(", ")
            );
            off.iter().fold(Note::new(NoteKind::ModelCaveat, text), |n, (_, key, _)| n.about(format!("model.{key}")))
        })
    }

    /// Query width `a·d` [channels].
    pub fn q_width(&self) -> u64 {
        self.heads * self.head_dim
    }

    /// Key (= value) width `kv·d` [channels], or the query width when GQA is not modelled.
    pub fn kv_width(&self, gqa: bool) -> u64 {
        if gqa { self.kv_heads * self.head_dim } else { self.q_width() }
    }

    /// MLP input projections (1 non-gated, 2 gated: gate and up) when gating is modelled.
    pub fn mlp_in_matrices(&self, gated: bool) -> u64 {
        if gated && self.gated_mlp { 2 } else { 1 }
    }

    /// Parameters of one block [count]: Q, K, V, output projections, MLP matrices and two norms
    /// (no biases: current models have none; the reference's biases are a few `h` per block).
    pub fn block_parameters(&self, gqa: bool, gated: bool) -> f64 {
        let h = self.hidden as f64;
        let mlp = (self.mlp_in_matrices(gated) + 1) as f64 * h * self.ffn_hidden as f64;
        self.attention_parameters(gqa) + mlp + 2.0 * h
    }

    /// Parameters of one block's attention [count]: Q, K, V and output projections, or multi-head
    /// latent attention's projections and latent norms ([`Mla::parameters`]).
    pub fn attention_parameters(&self, gqa: bool) -> f64 {
        if let Some(mla) = &self.mla {
            return mla.parameters(self.hidden, self.heads);
        }
        let h = self.hidden as f64;
        h * (self.q_width() + 2 * self.kv_width(gqa)) as f64 + self.q_width() as f64 * h
    }

    /// Parameters of the embedding table, or of the (untied) output head [count]: `V·h`.
    pub fn vocab_parameters(&self) -> f64 {
        self.vocab.map_or(0.0, |v| v as f64 * self.hidden as f64)
    }

    /// The MoE shape of block `i` (counted from 0) when that block routes its tokens to experts;
    /// `None` for a dense block, every block of a dense model among them. The model's one answer
    /// to "which blocks are MoE blocks" ([`MoeShape::is_moe_block`]: the first dense blocks and
    /// the MoE layer frequency), for the FLOP conventions and the block counts.
    pub fn moe_block(&self, i: u64) -> Option<&MoeShape> {
        self.moe.as_ref().filter(|m| m.is_moe_block(i))
    }

    /// Whether Mixture-of-Experts switches (`text`: the CLI's `--moe`, as given) apply to this
    /// model: an error at `moe` for a dense model, which has no experts for them to set (refused,
    /// never ignored). The callers word it for their flag; the check is the model's.
    pub fn check_moe_switches(&self, text: &str) -> Result<(), Error> {
        match self.moe {
            Some(_) => Ok(()),
            None => Err(Error::invalid(
                "moe",
                text,
                "the model is dense (no experts): Mixture-of-Experts switches apply to MoE models only",
            )
            .with_hint("drop the switches")),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unaligned_widths_carry_a_caveat() {
        assert_eq!(Workload::LLAMA3_8B.alignment_caveat(), None);
        // BLOOM's trial shapes: hidden 14400 over 64 heads (head width 225), 13824 over 128 (108).
        let w = Workload {
            hidden: 14400,
            heads: 64,
            kv_heads: 64,
            head_dim: 225,
            ffn_hidden: 57600,
            ..Workload::LLAMA3_8B
        };
        let c = w.alignment_caveat().expect("head width 225");
        assert!(c.starts_with("head width 225 not a multiple of 8"), "{c}");
        let w = Workload {
            hidden: 13824,
            heads: 128,
            kv_heads: 128,
            head_dim: 108,
            ffn_hidden: 55300,
            ..Workload::LLAMA3_8B
        };
        assert!(w.alignment_caveat().unwrap().starts_with("head width 108, MLP width 55300 not"));
    }

    use super::*;

    #[test]
    fn reference_shape_round_trip_and_parameters() {
        let w = Workload::from_shape(&ModelShape::GPT3);
        assert_eq!(w.to_shape(), ModelShape::GPT3);
        let h = 12288.0;
        // 12h² + 2h per block without biases.
        assert_eq!(w.block_parameters(true, true), 12.0 * h * h + 2.0 * h);
    }

    #[test]
    fn llama3_8b_has_8_billion_parameters() {
        // Untied embedding and head, one final norm.
        let w = Workload::LLAMA3_8B;
        w.validate().unwrap();
        let total = 32.0 * w.block_parameters(true, true) + 2.0 * w.vocab_parameters() + 4096.0;
        assert!((total / 1e9 - 8.03).abs() < 0.01, "{total}");
        // Without GQA and gating it is priced as a plain GPT block.
        assert!(w.block_parameters(false, false) < w.block_parameters(true, true));
        assert!(Workload { kv_heads: 3, ..w }.validate().is_err());
    }
}
