//! Mixture-of-Experts training in extended mode, as operations beside the dense block's:
//!
//! | module | what it holds |
//! |---|---|
//! | [`crate::moe_shape`] (a value type beside the catalog, so the catalog does not depend on extended mode) | the model's experts (routed, shared, top-k, gated, dense-first/frequency, router), multi-head latent attention, multi-token prediction |
//! | [`counts`] | total and active parameters |
//! | [`options`] | the MoE switches: load (dropless γ, capacity C, forced), dispatcher, FP8 dispatch, all-to-all overlap, fixed EP/ETP |
//! | [`expert_offload`] | the routed experts' saved tensors Megatron-LM offloads to the host (`expert_fc1`, `moe_act`): what they no longer keep on the device |
//! | [`experts`] | expert parallelism and expert tensor parallelism folded over `tp·cp·dp` (parallel folding), their rules and search choices |
//! | [`dispatch`] | dispatch/combine exchange on the two network tiers (all-to-all, hierarchical node-limited, all-gather, ETP collectives) |
//! | [`axes`] | the MoE sweep axes (EP, ETP, load, dispatcher, experts, top-k at equal active parameters) |
//! | [`block`] | an MoE block as a list of operations ([`crate::extended::ops`]): the attention sub-layer plus the MoE MLP sub-layer |
//! | [`devices`] | the block parts priced once per block shape and expert layout ([`devices::MoeParts`]) and which of them each device of the pipeline holds, under 1F1B and DualPipe (micro-batches in flight, DualPipe's bubble) |
//! | [`evaluate`] | a configuration of an MoE model: dense and MoE blocks per stage, MTP on the last, expert data parallelism, dense vs expert memory, [`evaluate::MoeBreakdown`] |
//! | [`mla`] | multi-head latent attention as operations (in every block of a model with it): replicated down-projections, latent norms, column-parallel up-projections, core with its own query/key and value widths |
//! | [`mla_host`] | multi-latent attention's host work beyond a plain attention's under Megatron-Core: its further modules and the calls between its projections (RoPE fused or not, the query's and key's assembly), counted from the code |
//! | [`host_calls`] | the host calls of Megatron-Core's MoE layer besides the expert GEMMs (router, load-balancing loss, dispatcher, permutation), counted from the code, and CUDA-graph scopes |
//! | [`host_flags`] | the switches that change those calls: permute/router fusion, sequential experts, balancing loss, CUDA-graph scopes |
//! | [`host_step`] | the logged statistics' per-step host work (zero count, parameter norm) over an MoE rank's parameter tensors: its blocks' and its local experts' |
//! | [`sync`] | the forward pass between the dispatcher's device→host syncs: stretches from an empty GPU queue, host and GPU phases in issue order |
//! | [`grouped_gemm`] | the routed experts' grouped-GEMM efficiency by tokens per expert: the kernel's row tile (GPU 128, checked against DeepGEMM's table; TPU megablox 512); the weight gradients' main-gradient read and write (checked against SimuMax's B200 table) |
//! | [`layer`] | the MoE MLP of one block as operations: router, routed experts at the grouped-GEMM efficiency, shared experts, permutation, exposed vs hidden exchange, fixed layer time |

pub mod axes;
pub mod block;
pub mod counts;
pub mod devices;
pub mod dispatch;
pub mod evaluate;
pub mod exchange_rates;
pub mod expert_extras;
pub mod expert_offload;
pub mod experts;
pub mod grouped_gemm;
pub mod host_calls;
pub mod host_flags;
pub mod host_step;
pub mod layer;
pub mod mla;
pub mod mla_host;
pub mod options;
pub mod sync;

pub use counts::{ParameterCounts, parameter_counts};
pub use evaluate::MoeBreakdown;
pub use experts::ExpertLayout;
pub use layer::{MoeMlpCost, MoeTimePart, MoeTimes, moe_mlp_operations};
pub use options::{A2aOverlap, Dispatcher, ExpertOffload, Load, MoeOptions, RecomputeModules};
