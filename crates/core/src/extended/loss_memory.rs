//! The memory of the logits and the cross-entropy loss of one micro-batch on the stage with the
//! output head, as each stack computes it. [`super::memory`] places it in the
//! stage's peak. Units: bytes (B), logits counted as `tokens · V/tp` on the device (the local
//! sequence shard's tokens under context parallelism, the vocabulary split over tensor
//! parallelism).
//!
//! * **Eager cross-entropy on upcast logits** ([`LOSS_BYTES_PER_LOGIT`], 10 B per logit at its
//!   peak): the 16-bit logits, their FP32 copy and a second FP32 tensor of the same shape.
//!   PyTorch's `F.cross_entropy(pred.float(), …)` (torchtitan `torchtitan/components/loss.py`
//!   @b3da1a2d8 lines 19–23; torchtune) saves an FP32 log-softmax beside the FP32 copy;
//!   Megatron-LM's `_VocabParallelCrossEntropy.forward` on `logits.float()` (the USP report's
//!   Megatron-LM @2196398: `megatron/core/models/common/language_module/language_module.py` line
//!   36, `megatron/core/tensor_parallel/cross_entropy.py` line 24,
//!   `vocab_parallel_logits = vocab_parallel_logits - logits_max.unsqueeze(dim=-1)`, a new FP32
//!   tensor while the upcast one is still the function's argument) holds the same 10 B until it
//!   returns. The FP32 part is divided by the loss chunks.
//! * **Without the upcast** ([`ExtendedOptions::loss_fp32_upcast`] off): 16-bit logits and a
//!   16-bit log-softmax, 4 B.
//! * **Compiled** ([`ExtendedOptions::compiled_loss`]): inductor fuses the upcast, the log-softmax
//!   and the NLL into one reduction: the 16-bit logits and an FP32 log-sum-exp per token.
//! * **A model returning FP32 logits** (nanotron, [`super::stack::Stack::logits_upcast_in_model`]):
//!   no 16-bit logits at the loss.
//! * **The head inside the chunks** ([`ExtendedOptions::loss_head_chunked`]: torchtitan's chunked
//!   loss, fused linear-cross-entropy kernels): one chunk's logits at a time, beside an FP32
//!   accumulator of the final hidden states' gradient ([`HIDDEN_GRAD_ACCUMULATOR_BYTES`]).
//!
//! Where the logits live: on the stage with the head, `tokens · V/tp` of one micro-batch, the
//! tokens those of the device's own sequence shard under context parallelism (Megatron-LM's
//! context-parallel ranks and the USP report's Ulysses ranks compute the output layer on their
//! local shard; the vocabulary is split over tensor parallelism by Megatron's
//! `ColumnParallelLinear` output layer and `_VocabParallelCrossEntropy`).

use super::layout::Layout;
use super::options::ExtendedOptions;
use super::workload::Workload;

/// Bytes per logit held at the loss (one micro-batch): the 16-bit logits (2 B), their FP32 copy
/// (4 B) and a second FP32 tensor of their shape (4 B: PyTorch's saved log-softmax, Megatron-LM's
/// max-subtracted logits) — the eager cross-entropy on upcast logits, see the module's sources.
/// (Megatron-LM subtracts in place since 9634c0e4a3, 2024-06-13, "Reduce logit memory pressure
/// by using in-place operation": 6 B there, not told apart yet.)
pub const LOSS_BYTES_PER_LOGIT: f64 = 10.0;

/// Bytes per logit held by an eager cross-entropy that does not upcast
/// ([`ExtendedOptions::loss_fp32_upcast`] off): the 16-bit logits (2 B) and the 16-bit
/// log-softmax `F.cross_entropy` saves for its backward (2 B).
const LOSS_16BIT_BYTES_PER_LOGIT: f64 = 4.0;

/// Bytes per logit of the FP32 part of [`LOSS_BYTES_PER_LOGIT`] (divided by the loss chunks).
const LOSS_FP32_BYTES_PER_LOGIT: f64 = 8.0;

/// Bytes per element of the final hidden states' gradient a head-inside-the-chunks loss
/// accumulates chunk by chunk before the decoder's backward (torchtitan's `ChunkedLossWrapper`:
/// `GradAccumulator(…, dtype=torch.float32)`, pytorch/torchtitan `torchtitan/components/loss.py`,
/// 2026): FP32, one per token and hidden unit, whole on every tensor-parallel rank (the head's
/// input is replicated over TP before chunking).
const HIDDEN_GRAD_ACCUMULATOR_BYTES: f64 = 4.0;

/// The logits and loss of one micro-batch on the stage with the output head, when the model has
/// a vocabulary and the switch counts it: `tokens · V/tp` logits at [`LOSS_BYTES_PER_LOGIT`], the
/// FP32 part divided by the loss chunks; a compiled loss keeps the 16-bit logits and one FP32
/// log-sum-exp per token. With the head inside the chunks ([`ExtendedOptions::loss_head_chunked`])
/// the same of one chunk (`tokens / loss_chunks`), plus the FP32 accumulator of the final hidden
/// states' gradient, `tokens · h` × 4 B.
pub(crate) fn loss_bytes(w: &Workload, layout: &Layout, opts: &ExtendedOptions) -> Option<f64> {
    let vocab = w.vocab.filter(|_| opts.model.embeddings_and_head)?;
    let all_tokens = layout.local_tokens(w);
    let chunks = opts.loss_chunks as f64;
    // The tokens whose logits exist at once, and the chunks the FP32 part is further split in.
    let (tokens, fp32_chunks, accumulator) = if opts.loss_head_chunked {
        (all_tokens / chunks, 1.0, all_tokens * w.hidden as f64 * HIDDEN_GRAD_ACCUMULATOR_BYTES)
    } else {
        (all_tokens, chunks, 0.0)
    };
    let logits = tokens * vocab as f64 / layout.tp as f64;
    // A stack whose model returns FP32 logits has freed the 16-bit ones before the loss.
    let sixteen_bit = if opts.stack.logits_upcast_in_model() && !opts.compiled_loss {
        0.0
    } else {
        LOSS_BYTES_PER_LOGIT - LOSS_FP32_BYTES_PER_LOGIT
    };
    let held = if opts.compiled_loss {
        logits * sixteen_bit + tokens * 4.0
    } else if !opts.loss_fp32_upcast {
        logits * LOSS_16BIT_BYTES_PER_LOGIT
    } else {
        logits * (sixteen_bit + LOSS_FP32_BYTES_PER_LOGIT / fp32_chunks)
    };
    Some(held + accumulator)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The USP report's Llama 2 7B (held-out `usp-long-sequence-splits.json`, Table 5's 30K group)
    /// at tp 1 and cp 8 with 16 sequences of 30,720 tokens in one micro-batch.
    fn usp_llama2_7b(tp: u64, cp: u64) -> (Workload, Layout) {
        let w =
            Workload { seq_len: 30_720, vocab: Some(32_000), kv_heads: 32, ffn_hidden: 11_008, ..Workload::LLAMA3_8B };
        (w, Layout::placed(tp, cp, 1, 8 / (tp * cp), 16, 16, 8))
    }

    #[test]
    fn megatron_2196398_holds_10_bytes_per_logit_of_the_local_shard() {
        // Megatron-LM @2196398 (the USP report's): 16 × 30,720 / 8 = 61,440 local tokens ×
        // 32,000 logits (tp 1) × 10 B (2 B logits + 4 B `logits.float()` + 4 B max-subtracted
        // copy) = 19,660,800,000 B.
        let (w, layout) = usp_llama2_7b(1, 8);
        let opts = ExtendedOptions::realistic();
        assert_eq!(loss_bytes(&w, &layout, &opts), Some(61_440.0 * 32_000.0 * 10.0));
        assert_eq!(loss_bytes(&w, &layout, &opts), Some(19_660_800_000.0));
        // tp 2 × cp 4: 122,880 local tokens × 16,000 logits × 10 B: the same bytes.
        let (w, layout) = usp_llama2_7b(2, 4);
        assert_eq!(loss_bytes(&w, &layout, &opts), Some(19_660_800_000.0));
        // tp 8, cp 1: 491,520 tokens × 4,000 logits × 10 B: again the same.
        let (w, layout) = usp_llama2_7b(8, 1);
        assert_eq!(loss_bytes(&w, &layout, &opts), Some(19_660_800_000.0));
    }

    #[test]
    fn torchtitan_scout_compiled_loss_by_hand() {
        // torchtitan's Llama 4 Scout on GB200 (shipped MoE row tt_llama4scout_gb200_mxfp8_256):
        // 10 × 8,192 = 81,920 tokens × 202,048 = 16,551,772,160 logits at tp 1. Eager: × 10 B
        // = 165,517,721,600 B; compiled with the model (`compile.components` ["model", "loss"],
        // torchtitan `torchtitan/config/job_config.py` @b3da1a2d8 lines 659–661): × 2 B + 81,920
        // × 4 B = 33,103,544,320 + 327,680 = 33,103,872,000 B (132.41 GB less: the row's predicted
        // memory 231.20 -> 98.79 GB).
        let w = Workload { seq_len: 8192, vocab: Some(202_048), ..Workload::LLAMA3_8B };
        let layout = Layout::placed(1, 1, 1, 256, 10, 2560, 72);
        let eager = ExtendedOptions::realistic();
        assert_eq!(loss_bytes(&w, &layout, &eager), Some(165_517_721_600.0));
        let compiled = ExtendedOptions { compiled_loss: true, ..eager };
        assert_eq!(loss_bytes(&w, &layout, &compiled), Some(33_103_872_000.0));
    }
}
