//! Tensors a training stack keeps beyond what its recomputation policy counts, placed by
//! [`super::memory`] in a stage's peak. Units: bytes (B).
//!
//! * **FP32 block inputs** ([`fp32_input_extra`]) — under 16-bit autocast over FP32 parameters
//!   ([`ExtendedOptions::fp32_params_autocast`]; PyTorch AMP without a mixed-precision policy,
//!   ATorch's `amp_native`) the embedding output is FP32 (the embedding is not an autocast
//!   operation), each residual addition of a 16-bit sublayer output to it promotes to FP32, and
//!   Hugging Face's `LlamaRMSNorm` returns its input dtype: the residual stream, and so every
//!   block input kept for the backward, is 4 B per element.
//! * **Keys and values in the output** ([`kv_output_bytes`]) — a Hugging Face transformers model
//!   whose `use_cache` stays on ([`ExtendedOptions::outputs_hold_kv`]) returns every layer's
//!   `(key_states, value_states)` with its output (transformers 4.31 `LlamaModel.forward`
//!   collects `next_decoder_cache`; ATorch's `LlamaAttentionFA` returns them after RoPE), and the
//!   training loop keeps that output until the step's backward ends: beside checkpointed blocks,
//!   which keep nothing else of the attention, they are extra memory.
//!
//! (A stack's logits at the loss are counted with the loss, [`super::memory`]; nanotron's model
//! returns them in FP32 only, [`super::stack::Stack::logits_upcast_in_model`], tested here.)

use super::hardware::Hardware;
use super::layout::Layout;
use super::options::ExtendedOptions;
use super::workload::Workload;

/// Bytes a block's kept input gains when the residual stream is FP32
/// ([`ExtendedOptions::fp32_params_autocast`]): the input counted at the compute width `e`
/// (`input_bytes`, 2 B per element in 16-bit training) is 4 B per element, `input_bytes ·
/// (4 − e)/e` more. Every policy keeps the block input (the first norm saves it; full
/// recomputation keeps nothing else) [B].
pub(super) fn fp32_input_extra(hw: &Hardware, opts: &ExtendedOptions, input_bytes: f64) -> f64 {
    let es = hw.element_bytes;
    if opts.fp32_params_autocast && es < 4.0 { input_bytes * (4.0 - es) / es } else { 0.0 }
}

/// Bytes of one block's keys and values in the model's output when it holds them
/// ([`ExtendedOptions::outputs_hold_kv`]): key and value, each `micro-batch × kv heads ×
/// sequence × head dim` of one micro-batch in the compute width, `2 · tokens · kv width / tp ·
/// e` [B].
pub(super) fn kv_output_bytes(w: &Workload, layout: &Layout, hw: &Hardware, opts: &ExtendedOptions) -> f64 {
    let kv_width = w.kv_width(opts.model.grouped_query_attention) as f64 / layout.tp as f64;
    2.0 * layout.local_tokens(w) * kv_width * hw.element_bytes
}

#[cfg(test)]
mod tests {
    use crate::extended::evaluate::memory_estimate;
    use crate::extended::layout::Layout;
    use crate::extended::memory::tests::hw;
    use crate::extended::options::{ExtendedOptions, HardwareChoices, Recompute, Sharding};
    use crate::extended::workload::Workload;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
    }

    /// Llama 3 8B blocks only, 8 ranks, one micro-batch of 8,192 tokens, no overheads.
    fn base(sharding: Sharding) -> (Workload, Layout, ExtendedOptions) {
        let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
        let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
        let opts = ExtendedOptions {
            hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
            recompute: Recompute::Full,
            sharding,
            ..ExtendedOptions::realistic()
        };
        (w, layout, opts)
    }

    #[test]
    fn autocast_over_fp32_weights_by_hand() {
        // FSDP over 8 ranks, full recomputation. Block parameters: 4096·(4096 + 2·1024 + 4096) +
        // 3·4096·14336 + 2·4096 = 218,112,000.
        let (w, layout, fsdp) = base(Sharding::Zero3);
        let amp = ExtendedOptions { fp32_params_autocast: true, ..fsdp };
        let (a, b) =
            (memory_estimate(&w, &hw(), &layout, &fsdp).unwrap(), memory_estimate(&w, &hw(), &layout, &amp).unwrap());
        let block = 218_112_000.0;
        // The last block is gathered at the loss: 4 B instead of 2.
        close(b.part("gathered_layers") - a.part("gathered_layers"), block * 2.0 * 1e-9);
        // 32 kept block inputs of 8192 × 4096: 4 B instead of 2.
        close(b.part("activations") - a.part("activations"), 32.0 * 8192.0 * 4096.0 * 2.0 * 1e-9);
        // The sharded states are FSDP's FP32 ones either way: 4 + 4 + 8 B over 8.
        close(b.part("weights"), a.part("weights"));
        close(b.part("optimizer_states"), a.part("optimizer_states"));
        // ZeRO-1: FP32 weights (4 B, no 16-bit copy) and Adam's moments (8 B over 8) instead of
        // 16-bit weights and master + moments (12 B over 8).
        let (w, layout, z1) = base(Sharding::Zero1);
        let amp = ExtendedOptions { fp32_params_autocast: true, ..z1 };
        let (a, b) =
            (memory_estimate(&w, &hw(), &layout, &z1).unwrap(), memory_estimate(&w, &hw(), &layout, &amp).unwrap());
        let p = 32.0 * block;
        close(b.part("weights") - a.part("weights"), p * 2.0 * 1e-9);
        close(a.part("optimizer_states") - b.part("optimizer_states"), p * 4.0 / 8.0 * 1e-9);
        close(b.part("gradients"), a.part("gradients"));
    }

    #[test]
    fn outputs_holding_keys_and_values_by_hand() {
        // 32 blocks × key and value × 8192 tokens × 1024 (8 KV heads of 128) × 2 B; with TP 2 half.
        let (w, layout, opts) = base(Sharding::Zero3);
        let held = ExtendedOptions { outputs_hold_kv: true, ..opts };
        let (a, b) =
            (memory_estimate(&w, &hw(), &layout, &opts).unwrap(), memory_estimate(&w, &hw(), &layout, &held).unwrap());
        let kv = 32.0 * 2.0 * 8192.0 * 1024.0 * 2.0 * 1e-9;
        close(b.part("kv_outputs"), kv);
        close(a.part("kv_outputs"), 0.0);
        close(b.allocated_gb - a.allocated_gb, kv);
        let tp2 = Layout::placed(2, 1, 1, 4, 1, 8, 8);
        close(memory_estimate(&w, &hw(), &tp2, &held).unwrap().part("kv_outputs"), kv / 2.0);
    }

    #[test]
    fn nanotron_holds_fp32_logits_only_by_hand() {
        // Llama 3 8B with its head, 8192 tokens × 128256 logits: 2 + 8 B each under Megatron's loss,
        // the FP32 logits and one FP32 working copy (8 B) under nanotron's.
        let (_, layout, opts) = base(Sharding::Zero1);
        let w = Workload::LLAMA3_8B;
        let logits = 8192.0 * 128256.0;
        let megatron = memory_estimate(&w, &hw(), &layout, &opts).unwrap();
        let nanotron = ExtendedOptions { stack: crate::extended::stack::Stack::Nanotron, ..opts };
        let n = memory_estimate(&w, &hw(), &layout, &nanotron).unwrap();
        close(megatron.part("logits_and_loss"), logits * 10.0 * 1e-9);
        close(n.part("logits_and_loss"), logits * 8.0 * 1e-9);
        // Chunked, the FP32 part is divided as before.
        let chunked = memory_estimate(&w, &hw(), &layout, &ExtendedOptions { loss_chunks: 8, ..nanotron }).unwrap();
        close(chunked.part("logits_and_loss"), logits * 1e-9);
    }

    #[test]
    fn op_policy_without_the_attention_in_its_save_list_by_hand() {
        // torchtitan's operator-level policy: the attention output (8192 × 4096 × 2 B) and its FP32
        // log-sum-exp (8192 × 32 heads × 4 B) are saved per block; left out of the save list,
        // neither is kept, and the attention runs again before its backward.
        let (w, layout, fsdp) = base(Sharding::Zero3);
        let op = ExtendedOptions { recompute: Recompute::Op, ..fsdp };
        let recomputed = ExtendedOptions { op_saves_attention: false, ..op };
        let (a, b) = (
            memory_estimate(&w, &hw(), &layout, &op).unwrap(),
            memory_estimate(&w, &hw(), &layout, &recomputed).unwrap(),
        );
        close(
            a.part("activations") - b.part("activations"),
            32.0 * (8192.0 * 4096.0 * 2.0 + 8192.0 * 32.0 * 4.0) * 1e-9,
        );
        let p = crate::extended::pricing::Pricing { hw: &hw(), opts: &op };
        let block_a = crate::extended::block::block_cost(&w, &layout, &p);
        let block_b = crate::extended::block::block_cost(
            &w,
            &layout,
            &crate::extended::pricing::Pricing { hw: &hw(), opts: &recomputed },
        );
        assert!(block_b.recompute.time() > block_a.recompute.time());
        // Other policies do not read it.
        let full = memory_estimate(&w, &hw(), &layout, &ExtendedOptions { op_saves_attention: false, ..fsdp }).unwrap();
        close(full.allocated_gb, memory_estimate(&w, &hw(), &layout, &fsdp).unwrap().allocated_gb);
    }
}
