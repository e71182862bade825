//! nanotron's pipeline split, as its source deals a Llama's blocks to the stages (switch
//! `stack=nanotron`; the other stacks' split is [`super::pipeline::split`] by `stage_split`).
//!
//! huggingface/nanotron at a756526 (the revision of the Ultra-Scale Playbook's benchmark script;
//! the same code at 67c5ebb6 and 2411b02):
//! * `build_model` (`src/nanotron/models/base.py` l. 211–236) walks the model's `PipelineBlock`s
//!   in registration order with the cumulative sum of their costs (`np.cumsum`, l. 218–223) and
//!   the thresholds `total · (r + 1)/pp` of each rank `r` (l. 225): a block goes to the current
//!   rank, and the rank moves on once the sum *including* that block passes the rank's threshold
//!   (l. 229–233). So each stage ends with the block that crosses its share: the first stages hold
//!   one block more than an even share, and the head's weight pushes blocks off the last.
//! * The costs (`LlamaForTraining.get_block_compute_costs`, `src/nanotron/models/llama.py`
//!   l. 913–925): a decoder layer `4 · heads · d_qkv · hidden + 3 · ffn · hidden` (`d_qkv =
//!   hidden // heads`), the head (`TensorParallelColumnLinear`) `vocab · hidden`, every other
//!   block 0.
//! * The blocks in order (`llama.py` l. 811–880, 990–991): the embedding, the decoder layers,
//!   the final norm, the head, `cast_to_fp32`, then the loss.
//!
//! When the head alone weighs at least one stage's share (`vocab · hidden · (pp − 1) ≥ layers ·
//! layer cost`: the 1B model of the playbook from `pp = 5`, its 3B and 8B from `pp = 9` and
//! `pp = 16`), the head lands on stage `pp − 2` and its cumulative sum, the total, passes that
//! stage's threshold: `cast_to_fp32` and the loss go to the last stage, which holds no decoder
//! layer. Every micro-batch then sends its 16-bit logits shard (`tokens · vocab / tp`, the
//! column-parallel head's output) to the last stage and gets their gradient back, through the
//! pipeline's point-to-point path (`PipelineBlock.forward`, `src/nanotron/parallel/
//! pipeline_parallel/block.py` l. 60–): [`head_exchange_s`]. The last stage's own work (the cast
//! and the cross-entropy) is left with the head's cost (priced on the head's stage, a slight
//! overestimate of that stage).
//! * Once a step, after the data-parallel reduction, the tied embedding's FP32 gradient is
//!   all-reduced between the embedding's rank and the head's, unoverlapped: [`tied_sync_s`].
//!
//! Read and not priced (session 30, w141): the pipeline engines do not reduce gradients every
//! micro-batch. Every forward runs under DDP's `no_sync` (`parallel/pipeline_parallel/engine.py`
//! l. 61–65) and only the last backward arms DDP's reducer (`_get_bwd_context`, l. 97–115;
//! `ddp_trigger_sync_in_bwd`, `parallel/data_parallel/utils.py` l. 10–25), the others accumulate
//! into the FP32 buffer under the accumulator's `no_sync`; both ZeRO-0 (the DDP hook's
//! `all_reduce_coalesced` of the FP32 buffers, `optim/gradient_accumulator.py` l. 374–379) and
//! ZeRO-1 (`dist.all_reduce` of the contiguous FP32 buffer, l. 155, `reduce_scatter=False` at
//! `trainer.py` l. 525) reduce once a step in FP32, as [`super::data_parallel`] already prices.
//! Each tensor crossing stages (`p2p.py` `_send_meta`/`_recv_meta`, l. 207–287) is preceded by
//! two blocking metadata messages read back on the host, but only where a block's rank changes:
//! a decoder layer hands on two tensors (`hidden_states`, `sequence_mask`, `llama.py` l. 842), so
//! a few network latencies per stage boundary and micro-batch, not a per-layer cost.
//!
//! Read and not priced (session 31, w148), huggingface/nanotron at a756526:
//! * ZeRO-1's parameter gather (`ZeroDistributedOptimizer._all_gather_params`, `optim/zero.py`
//!   l. 217–245, called at the end of `step`, l. 119) is `all_gather_coalesced`
//!   (`distributed.py` l. 153–220): the shards flattened into one buffer per rank and one blocking
//!   `dist.all_gather` (a single NCCL all-gather where the ranks' buffers are equal: every
//!   parameter of the playbook's models divides by its data-parallel degree, `_partition_parameters`
//!   l. 150–215), then `update_output` copies each parameter's shard of each rank back, one
//!   `copy_` per rank and parameter tensor: `dp · tensors` host calls (the 1B model at DP 128:
//!   98 tensors, 12,544 calls). The collective is priced (whole, after the step:
//!   [`super::stack::Stack::zero1_gathers_in_optimizer_step`]); the copies are not: no sourced host
//!   time of a small `copy_` (the per-call figure of [`super::pricing::TORCH_CALL_HOST_S`] is a GEMM
//!   launch's).
//! * The metadata messages above make the host wait for the device on both sides of a stage
//!   boundary, every micro-batch: the sender copies a CPU tensor into a device buffer and reads an
//!   element back (`P2P._send_meta`, `p2p.py` l. 207–243), the receiver branches on the received
//!   device scalars (`_recv_meta`, l. 245–287). The benchmarks' launch script sets
//!   `CUDA_DEVICE_MAX_CONNECTIONS=1` (`run_multinode.sh` l. 38).
//! * The benchmark mode times one step, the third (`NANOTRON_BENCHMARK=1`, `trainer.py` l. 671,
//!   after a barrier and a synchronize, l. 603–605), and reports `max_memory_allocated` and
//!   `max_memory_reserved` over 1024³ (GiB, `helpers.py` l. 617–618).
//!
//! Read and not priced (session 32, w160): the Playbook's benchmarks ran nanotron's branch
//! `nouamane/bench2` (its `scaling_benchmarks.py` at 6ac7d733, 2024-12-13, and at its head
//! 67c5ebb6, 2024-12-27, ties the embeddings below an FFN of 10,000, counts parameters at a 131,072
//! vocabulary and takes `REDUCE_SCATTER` by default; a756526 is an ancestor on that branch). Its
//! head commit ("pp") rewrote the metadata exchange in front of every pipeline tensor
//! (`src/nanotron/parallel/pipeline_parallel/p2p.py` `P2P._send_meta` / `_recv_meta`, l. 261–439 at
//! 67c5ebb6): each of the two metadata messages is an `isend`/`irecv` whose completion is polled
//! with `while not work.is_completed(): … time.sleep(0.1)` (l. 293–301, 329–337, 367–376, 406–414),
//! on the sender and on the receiver. The first test follows the launch by microseconds, so every
//! message costs at least 0.1 s at both ends. A decoder stage hands on two tensors per micro-batch
//! forward (`hidden_states`, `sequence_mask`, `llama.py` l. 841–842 at a756526) and gets one
//! gradient back (the mask has none), so a middle stage polls 12 messages per micro-batch (at least
//! 1.2 s) and an end stage 6 (at least 0.6 s), whatever the layer's size. Not priced: nanotron
//! before that commit (a756526: `_send_meta` waits in NCCL) and its main branch (2411b02) never
//! poll, the Playbook's grid mixes runs made before and after that commit, and a row does not say
//! which (`tests/data/README.md`, `ultrascale-playbook-sweeps.json`: the rows on that floor). Also
//! read there and found not to scale with `tp × layers`: TP's linear layers
//! (`parallel/tensor_parallel/functional.py` l. 118–604 at a756526: asynchronous all-gather and
//! reduce-scatter with the local shard's GEMM in between, at most three GEMMs per linear) and its
//! primitives (`distributed_differentiable_primitives.py`) hold no host synchronisation and no loop
//! over the ranks, and the pipeline engine's `run_communication` (`state.py`) exchanges at the
//! stage boundaries only. So the rest of the TP × PP rows' time, about 3 ms per TP rank and decoder
//! layer of the busiest stage per micro-batch (the rows' medians 3.4, 2.7 and 2.9 ms at tp 4, 8 and
//! 16), has no source here and stays unpriced.

use super::data_parallel::GRADIENT_BYTES;
use super::layout::Layout;
use super::options::ExtendedOptions;
use super::pipeline::{StageSplit, split as even_split};
use super::pricing::Pricing;
use super::stack::Stack;
use super::workload::Workload;
use crate::vocab::CollectiveKind;

/// nanotron's split of a Llama over the pipeline stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NanotronSplit {
    /// Decoder layers: on the first stage, on the stage holding the head, the most on any stage.
    pub stages: StageSplit,
    /// Whether the loss (with `cast_to_fp32`) sits on a stage after the head's.
    pub loss_apart: bool,
}

/// A decoder layer's cost in nanotron's split [multiply-adds per token]:
/// `4 · heads · (hidden / heads) · hidden + 3 · ffn · hidden` (module documentation).
pub fn layer_cost(w: &Workload) -> f64 {
    let d_qkv = w.hidden / w.heads.max(1);
    (4 * w.heads * d_qkv * w.hidden + 3 * w.ffn_hidden * w.hidden) as f64
}

/// The head's cost in nanotron's split [multiply-adds per token]: `vocab · hidden` (0 without a
/// vocabulary).
pub fn head_cost(w: &Workload) -> f64 {
    (w.vocab.unwrap_or(0) * w.hidden) as f64
}

/// nanotron's split of `w`'s blocks over `pp` stages (module documentation).
pub fn split(w: &Workload, pp: u64) -> NanotronSplit {
    let layers = w.layers;
    if pp <= 1 {
        return NanotronSplit { stages: StageSplit { first: layers, last: layers, most: layers }, loss_apart: false };
    }
    let mut walk = Walk { pp, total: layers as f64 * layer_cost(w) + head_cost(w), ..Walk::default() };
    walk.place(0.0, false); // the embedding
    for _ in 0..layers {
        walk.place(layer_cost(w), true);
    }
    walk.place(0.0, false); // the final norm
    let head_layers = walk.here;
    let head_stage = walk.place(head_cost(w), false);
    walk.place(0.0, false); // cast_to_fp32
    let loss_stage = walk.place(0.0, false);
    let most = walk.most.max(walk.here);
    let first = if walk.stage == 0 { walk.here } else { walk.first };
    NanotronSplit { stages: StageSplit { first, last: head_layers, most }, loss_apart: loss_stage > head_stage }
}

/// The walk of `build_model` over the blocks: the rank, the running sum of the costs, the layers
/// of the current rank, of the first, and the most of a finished one.
#[derive(Debug, Default)]
struct Walk {
    pp: u64,
    total: f64,
    cumulative: f64,
    stage: u64,
    here: u64,
    first: u64,
    most: u64,
}

impl Walk {
    /// Places one block of `cost` (a decoder layer when `layer`) on the current rank, returned;
    /// moves on when the sum passes the rank's threshold `total · (r + 1)/pp`.
    fn place(&mut self, cost: f64, layer: bool) -> u64 {
        let stage = self.stage;
        self.cumulative += cost;
        self.here += u64::from(layer);
        let threshold = self.total * ((stage + 1) as f64 / self.pp as f64);
        if self.cumulative > threshold && stage + 1 < self.pp {
            if stage == 0 {
                self.first = self.here;
            }
            self.most = self.most.max(self.here);
            self.stage += 1;
            self.here = 0;
        }
        stage
    }
}

/// The stage split a configuration is priced with: nanotron's own on `stack=nanotron`, otherwise
/// `stage_split`'s ([`super::pipeline::split`]).
pub fn stage_split(w: &Workload, pp: u64, opts: &ExtendedOptions) -> StageSplit {
    if opts.stack == Stack::Nanotron {
        return split(w, pp).stages;
    }
    even_split(w.layers, pp, opts.stage_split)
}

/// The logits exchange of one micro-batch on the head's stage [s], when nanotron's split puts the
/// loss on the next stage (0 otherwise, and on every other stack): the 16-bit logits shard of the
/// micro-batch, `tokens · vocab / tp` elements, sent forward and its gradient received back, each
/// one point-to-point message, inside the fast domain when it holds two stages or more
/// (consecutive stages share a domain), across it otherwise.
pub fn head_exchange_s(w: &Workload, layout: &Layout, p: &Pricing) -> f64 {
    if p.opts.stack != Stack::Nanotron || layout.pp <= 1 || !split(w, layout.pp).loss_apart {
        return 0.0;
    }
    let volume_gb = layout.local_tokens(w) * w.vocab.unwrap_or(0) as f64 * p.hw.element_bytes / layout.tp as f64 * 1e-9;
    2.0 * p.p2p(volume_gb, layout.placement.pp > 1)
}

/// nanotron's synchronous all-reduce of the tied embedding's gradient once per step [s] (0 with
/// untied embeddings, one stage, and on every other stack).
///
/// huggingface/nanotron at a756526: after the data-parallel reduction, `training_step` calls
/// `sync_tied_weights_gradients` (`src/nanotron/trainer.py` l. 531–536, "TODO … Put this in hooks
/// so we can overlap communication with gradient computation on the last backward pass"), which
/// takes the tied parameter's gradient from the FP32 accumulator when there is one
/// (`src/nanotron/parallel/tied_parameters.py` l. 146–149; the playbook runs
/// `accumulate_grad_in_fp32`) and all-reduces it over the tie's group, the rank holding the
/// embedding and the one holding the head (`all_reduce_coalesced`, l. 164–165); the head is tied
/// to the embedding when `tie_word_embeddings` (`src/nanotron/models/llama.py` l. 1084–1089). So
/// one all-reduce of `vocab · hidden / tp` FP32 elements ([`GRADIENT_BYTES`]) between two ranks,
/// nothing to hide behind; inside the fast domain when the whole pipeline sits in one
/// (`placement.pp ≥ pp`: the first stage and the head's share it), across it otherwise.
pub fn tied_sync_s(w: &Workload, layout: &Layout, p: &Pricing) -> f64 {
    if p.opts.stack != Stack::Nanotron || layout.pp <= 1 || !w.tied_embeddings {
        return 0.0;
    }
    let volume_gb = w.vocab_parameters() / layout.tp as f64 * GRADIENT_BYTES * 1e-9;
    let share = if layout.placement.pp >= layout.pp { 2 } else { 1 };
    p.collective(CollectiveKind::AllReduce, volume_gb, 2, share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama(layers: u64, hidden: u64, heads: u64, ffn: u64, vocab: u64) -> Workload {
        let shape = crate::ModelShape { l: 4096, e: hidden, h: heads, depth: layers, f: ffn };
        Workload { gated_mlp: true, vocab: Some(vocab), ..Workload::from_shape(&shape) }
    }

    #[test]
    fn the_playbook_1b_by_hand() {
        // 1B: 16 layers, hidden 2,048, 32 heads, ffn 8,192, vocab 131,072. A layer costs
        // 4 · 2,048² + 3 · 8,192 · 2,048 = 16,777,216 + 50,331,648 = 67,108,864; the head
        // 131,072 · 2,048 = 268,435,456 = 4 layers; the total 20 layers.
        let w = llama(16, 2048, 32, 8192, 131_072);
        assert_eq!(layer_cost(&w), 67_108_864.0);
        assert_eq!(head_cost(&w), 4.0 * 67_108_864.0);
        // pp 8: thresholds 2.5, 5, 7.5, …, 17.5, 20 layers. Stage 0 takes layers 1–3 (3 > 2.5),
        // stage 1 layers 4–6 (5 is not > 5; 6 is), stage 2 7–8, stage 3 9–11, stage 4 12–13,
        // stage 5 14–16 (16 > 15); stage 6 the final norm and the head (16 + 4 = 20 > 17.5), stage
        // 7 the cast and the loss. First 3, head's stage 0 layers, most 3, the loss apart.
        let s = split(&w, 8);
        assert_eq!(s.stages, StageSplit { first: 3, last: 0, most: 3 });
        assert!(s.loss_apart);
        // pp 4: thresholds 5, 10, 15, 20. Stage 0 layers 1–6, stage 1 7–11, stage 2 12–16
        // (16 > 15), stage 3 the head (20 = 20, not above) with the loss.
        let s = split(&w, 4);
        assert_eq!(s.stages, StageSplit { first: 6, last: 0, most: 6 });
        assert!(!s.loss_apart);
        // pp 2: thresholds 10, 20: stage 0 layers 1–11, stage 1 layers 12–16 and the head.
        assert_eq!(
            split(&w, 2),
            NanotronSplit { stages: StageSplit { first: 11, last: 5, most: 11 }, loss_apart: false }
        );
        // One stage holds everything.
        assert_eq!(split(&w, 1).stages, StageSplit { first: 16, last: 16, most: 16 });
    }

    #[test]
    fn the_playbook_80b_by_hand() {
        // 80B: 80 layers, hidden 8,192, 64 heads, ffn 28,672, vocab 131,072. A layer costs
        // 4 · 8,192² + 3 · 28,672 · 8,192 = 268,435,456 + 704,643,072 = 973,078,528; the head
        // 1,073,741,824 = 1.1034 layers; the total 81.1034 layers.
        let w = llama(80, 8192, 64, 28_672, 131_072);
        assert_eq!(layer_cost(&w), 973_078_528.0);
        // pp 16: a share of 5.069 layers. Stage 0 takes layers 1–6 (6 > 5.069), stage 1 7–11
        // (11 > 10.138), …: stages of 6 and 5; an even split would give 5 each.
        let s = split(&w, 16);
        assert_eq!((s.stages.first, s.stages.most, s.loss_apart), (6, 6, false));
        // The last stage: thresholds 15 · 5.069 = 76.03 and 81.10; layer 77 crosses the first,
        // so the last stage holds layers 78–80 and the head.
        assert_eq!(s.stages.last, 3);
        // pp 8: a share of 10.138: stage 0 takes 11 layers.
        assert_eq!(split(&w, 8).stages.first, 11);
    }

    #[test]
    fn the_logits_cross_to_the_loss_stage() {
        use crate::SystemParams;
        use crate::extended::hardware::Hardware;
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let w = llama(16, 2048, 32, 8192, 131_072);
        let nano = ExtendedOptions { stack: Stack::Nanotron, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &nano };
        // One sequence of 4,096 tokens, vocabulary 131,072, 2 B, no TP: 1,073,741,824 B = 1.0737 GB
        // each way.
        let v = 4096.0 * 131_072.0 * 2.0 * 1e-9;
        // pp 8 inside one domain of 8: the head's stage and the loss's share it (fast).
        let inside = Layout::placed(1, 1, 8, 1, 1, 8, 8);
        assert_eq!(head_exchange_s(&w, &inside, &p), 2.0 * p.p2p(v, true));
        // dp 8 fills the domain first: every stage in a domain of its own (slow).
        let across = Layout::placed(1, 1, 8, 8, 1, 64, 8);
        assert_eq!(across.placement.pp, 1);
        assert_eq!(head_exchange_s(&w, &across, &p), 2.0 * p.p2p(v, false));
        // TP 2 halves the shard.
        let tp2 = Layout::placed(2, 1, 8, 1, 1, 8, 16);
        assert_eq!(head_exchange_s(&w, &tp2, &p), 2.0 * p.p2p(v / 2.0, tp2.placement.pp > 1));
        // pp 4 keeps the loss with the head; Megatron's split never moves it.
        assert_eq!(head_exchange_s(&w, &Layout::placed(1, 1, 4, 1, 1, 8, 8), &p), 0.0);
        let megatron = ExtendedOptions::realistic();
        assert_eq!(head_exchange_s(&w, &inside, &Pricing { hw: &hw, opts: &megatron }), 0.0);
    }

    #[test]
    fn the_tied_gradient_is_all_reduced_once_a_step() {
        use crate::SystemParams;
        use crate::extended::hardware::Hardware;
        let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), false);
        let untied = llama(16, 2048, 32, 8192, 131_072);
        let w = Workload { tied_embeddings: true, ..untied };
        let nano = ExtendedOptions { stack: Stack::Nanotron, ..ExtendedOptions::realistic() };
        let p = Pricing { hw: &hw, opts: &nano };
        // The 1B's embedding: 131,072 · 2,048 = 268,435,456 FP32 gradients = 1.073741824 GB; TP 2
        // halves it: 0.536870912 GB, all-reduced between the embedding's rank and the head's.
        let tp2 = Layout::placed(2, 1, 8, 1, 1, 8, 8);
        assert_eq!(tp2.placement.pp, 4); // TP 2 · PP 8 over domains of 8: 4 stages a domain
        let half_gb = 268_435_456.0 / 2.0 * 4.0 * 1e-9;
        assert_eq!(tied_sync_s(&w, &tp2, &p), p.collective(CollectiveKind::AllReduce, half_gb, 2, 1));
        // The whole pipeline in one domain: the pair shares it.
        let inside = Layout::placed(1, 1, 8, 1, 1, 8, 8);
        let whole_gb = 268_435_456.0 / 1.0 * 4.0 * 1e-9;
        assert_eq!(tied_sync_s(&w, &inside, &p), p.collective(CollectiveKind::AllReduce, whole_gb, 2, 2));
        assert!(tied_sync_s(&w, &inside, &p) > 0.0);
        // Nothing without a tie, on one stage, or on another stack.
        assert_eq!(tied_sync_s(&untied, &inside, &p), 0.0);
        assert_eq!(tied_sync_s(&w, &Layout::placed(1, 1, 1, 8, 1, 8, 8), &p), 0.0);
        let megatron = ExtendedOptions::realistic();
        assert_eq!(tied_sync_s(&w, &inside, &Pricing { hw: &hw, opts: &megatron }), 0.0);
    }

    #[test]
    fn other_stacks_keep_their_rule() {
        let w = llama(16, 2048, 32, 8192, 131_072);
        let opts = ExtendedOptions::realistic();
        assert_eq!(stage_split(&w, 8, &opts), even_split(16, 8, opts.stage_split));
        let nano = ExtendedOptions { stack: Stack::Nanotron, ..opts };
        assert_eq!(stage_split(&w, 8, &nano), split(&w, 8).stages);
    }
}
