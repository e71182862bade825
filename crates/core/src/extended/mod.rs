//! Extended mode: the published model made realistic, feature by feature, beside reference mode
//! (which stays bit-exact and is not changed by anything here).
//!
//! Every feature is a named switch of [`ExtendedOptions`] (defaults: [`ExtendedOptions::realistic`]):
//!
//! | switch | what it models | module |
//! |---|---|---|
//! | `precision` | FP32 / TF32 / FP16 / BF16 / FP8 matmuls at that precision's peak and measured ceiling; 16-bit attention in FP8 runs | [`hardware`] |
//! | `matmul_efficiency`, `measured_ceiling` | achievable rate = `η` × the part's measured matmul ceiling (MAMF), not 0.8 × peak | [`efficiency`] |
//! | `memory_bound_ops` | roofline per matmul; norms, activations, residuals, FP8 casts, optimizer step priced by HBM traffic | [`pricing`], [`block`] |
//! | `recompute` | none / selective / full, in time (an extra forward) and memory (only block inputs kept) | [`block`], [`memory`] |
//! | `sharding`, `shard_group` | ZeRO-0…3 and FSDP (hybrid sharding): memory and the real gather/scatter pattern with its overlap limits | [`data_parallel`], [`memory`] |
//! | `interleave`, `uneven_stages` | interleaved 1F1B (bubble ÷ v), `⌈D/pp⌉` blocks on the busiest stage | [`pipeline`] |
//! | `causal` | causal attention: half the logits/attend FLOPs | [`block`] |
//! | `cp_ring_overlap` | context parallelism as a K/V ring overlapped with attention | [`block`] |
//! | `sequence_parallel` | norms/residuals on `1/tp` of the tokens | [`block`] |
//! | `grouped_query_attention`, `gated_mlp` | K/V of `kv_heads` width; SwiGLU's third matrix | [`workload`], [`block`] |
//! | `embeddings_and_head` | embedding, output head and loss over the vocabulary on the end stages | [`head`] |
//! | `memory_overheads` | runtime context, communication buffers, fragmentation as a margin | [`memory`] |
//! | `weight_sparsity` | unstructured sparse weights: fewer block-matmul FLOPs on wafer-scale parts only | [`sparsity`] |
//!
//! The switches as data (keys, kinds, sources of the defaults, the `key=value,…` text form of the
//! CLI's `--ext` and the page's `ext` key) are in [`switches`].
//!
//! Reference quirks (spec §9) corrected in extended mode: Q3 (slow pipeline links priced), Q4
//! (all-reduce = reduce-scatter + all-gather on every tier), Q5 (no 20 µs per layer, measured
//! ceilings instead of 0.8 × peak), Q6 (no `R_mat/R_vec` inflation inside flash attention), Q8
//! (memory by ZeRO stage with FP32 gradients and recomputation), Q9 (consistent shards), Q10 (no
//! dropped blocks: uneven stages), Q11 (`2k` FLOPs per dot product), Q15 (embeddings, head, loss,
//! causal mask), Q19 (flash attention's backward costs 2.5 forwards, output stored once). Kept:
//! Q7 (the bubble includes stage messages, which are on the critical path). Not modelled: 2D SUMMA
//! (Q1, Q2 belong to it); extended mode covers `1d` and `2d-seqp`.
//!
//! The only constants fitted to measured runs are `η` and `η_att`
//! ([`efficiency::Efficiency::FITTED`]): the fractions of the measured matmul ceiling sustained by
//! the linear layers and by flash attention. Their fit and leave-one-source-out error are in
//! `crate::validate::fit`. Other modelling choices that the measured runs informed, each global
//! and switchable: ZeRO-3/FSDP collectives across domains at one NIC per device
//! (`zero3_per_nic`), the datasheet peak as the ceiling of parts without a measurement.

pub mod block;
pub mod data_parallel;
pub mod efficiency;
pub mod evaluate;
pub mod hardware;
pub mod head;
pub mod layout;
pub mod memory;
pub mod moe;
pub mod options;
pub mod pipeline;
pub mod pricing;
pub mod sparsity;
pub mod switches;
pub mod workload;

pub use evaluate::{Breakdown, ExtendedEvaluation, ExtendedEvaluator, evaluate};
pub use hardware::Hardware;
pub use layout::{Layout, Placement};
pub use options::{ExtendedOptions, Recompute, Sharding};
pub use workload::Workload;
