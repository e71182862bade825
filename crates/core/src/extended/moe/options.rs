//! The switches of Mixture-of-Experts training: expert load (dropless with an imbalance, capacity
//! factor, forced balance), the token dispatcher (all-to-all, all-gather, hierarchical/node-limited
//! as DeepEP and HybridEP), FP8 dispatch, all-to-all/compute overlap, and fixed expert-parallel
//! degrees (otherwise searched). Text form for the CLI's `--moe` and the page:
//! `load=dropless:1.2,dispatcher=deepep:4,fp8_dispatch=on,a2a_overlap=off,ep=8,etp=1`.

use std::fmt;

use super::host_flags::{Balancing, GraphScope, MoeHostFlags};
use crate::Error;

/// How tokens are spread over the experts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Every token reaches its `k` experts; the busiest EP rank receives `γ ≥ 1` times the mean
    /// (Megatron's dropless default; γ of 1.1–1.3 in steady training, 2–4 early on).
    Dropless {
        /// `γ`: tokens of the busiest EP rank over the mean [dimensionless, ≥ 1].
        imbalance: f64,
    },
    /// Each expert takes at most `C ×` its mean share, padded to it; the excess is dropped
    /// (GShard, Switch Transformer).
    Capacity {
        /// `C` [dimensionless, > 0].
        factor: f64,
        /// `γ` of the router before capping (sets the dropped fraction).
        imbalance: f64,
    },
    /// The router is forced to a uniform load, as benchmark tables do (γ = 1).
    Forced,
}

impl Load {
    /// Dropless with γ = [`DEFAULT_IMBALANCE`].
    pub const DEFAULT: Load = Load::Dropless { imbalance: DEFAULT_IMBALANCE };

    /// The multiple of the mean token count that the busiest EP rank computes and receives
    /// (dropless: γ; capacity: `C`, the padded capacity; forced: 1).
    pub fn compute_factor(self) -> f64 {
        match self {
            Load::Dropless { imbalance } => imbalance,
            Load::Capacity { factor, .. } => factor,
            Load::Forced => 1.0,
        }
    }

    /// Fraction of token-expert assignments dropped [0–1]. Expert loads are taken as uniform on
    /// `[2 − γ, γ]` × the mean (max/mean = γ); a capacity `C` drops `E[(L − C)⁺] / E[L]`
    /// `= (γ − C)² / (4(γ − 1))` for `2 − γ ≤ C ≤ γ`.
    pub fn dropped_fraction(self) -> f64 {
        match self {
            Load::Capacity { factor: c, imbalance: g } if g > 1.0 => {
                let lo = (2.0 - g).max(0.0);
                if c >= g {
                    0.0
                } else if c <= lo {
                    1.0 - c
                } else {
                    (g - c) * (g - c) / (4.0 * (g - 1.0))
                }
            }
            Load::Capacity { factor: c, .. } => (1.0 - c).max(0.0),
            _ => 0.0,
        }
    }
}

/// Router imbalance `γ` of dropless training when none is given: the busiest EP rank at about
/// 1.1× the mean in steady training with auxiliary-loss or bias balancing. Source: the measured
/// runs of `measured-moe-runs.json` that give both figures — Mixtral 8x22B dropless 4 % below
/// forced balance, Qwen3-235B 8–20 % below at 16K–128K tokens (Megatron MoE model zoo).
pub const DEFAULT_IMBALANCE: f64 = 1.1;

/// How tokens reach the experts of other EP ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dispatcher {
    /// One all-to-all per dispatch and per combine (Megatron `alltoall`).
    AllToAll,
    /// Every rank all-gathers the tokens of its EP group and reduce-scatters the outputs (Megatron
    /// `allgather`): more bytes, no routing-dependent sizes.
    AllGather,
    /// Hierarchical dispatch (DeepEP, HybridEP; Tutel/DeepSpeed-MoE 2-D all-to-all): a token
    /// crosses to each destination domain once, then fans out inside it; `max_domains` (M)
    /// caps the domains one token may reach (node-limited routing, DeepSeek-V3: 4).
    Hierarchical {
        /// M; `None`: as many as the routing needs.
        max_domains: Option<u64>,
    },
}

/// Whether the expert all-to-all runs against another micro-batch's computation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum A2aOverlap {
    /// Fully exposed (Megatron's default, `overlap_moe_expert_parallel_comm=False`).
    Off,
    /// Hidden behind another micro-batch's (DualPipe: another chunk's) computation, as far as that
    /// computation lasts, at the cost of the SMs the exchange's kernels take from it
    /// ([`super::layer::COMM_SM_SHARE`]): Megatron-Core's EP A2A overlap (1F1B of two
    /// micro-batches, `overlap_moe_expert_parallel_comm`), DeepSeek-V3's DualPipe, DeepEP's hooks.
    /// Megatron-Core runs the first micro-batch's forward, the last one's backward and, with
    /// pipeline stages, the warm-up and cool-down chunks alone ([`super::evaluate::unpaired_share`]).
    On,
    /// Whichever of the two costs less for the configuration (the search's choice), where
    /// Megatron-Core can run the overlap: one pipeline stage, or interleaved stages
    /// ([`super::evaluate::unpaired_share`]); pipeline stages without interleaving expose it in full.
    Search,
}

impl A2aOverlap {
    /// `off`, `on`, `search`.
    pub fn as_str(self) -> &'static str {
        match self {
            A2aOverlap::Off => "off",
            A2aOverlap::On => "on",
            A2aOverlap::Search => "search",
        }
    }
}

impl From<bool> for A2aOverlap {
    fn from(on: bool) -> A2aOverlap {
        if on { A2aOverlap::On } else { A2aOverlap::Off }
    }
}

/// Every Mixture-of-Experts switch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeOptions {
    /// Expert load.
    pub load: Load,
    /// Token dispatcher.
    pub dispatcher: Dispatcher,
    /// Dispatch in FP8 with 1×128 scales (≈ 1.03 B per element; DeepEP, Megatron
    /// `moe_router_dtype`/FP8 dispatch); combine stays 16-bit.
    pub fp8_dispatch: bool,
    /// Overlap the expert all-to-all of one micro-batch with another's compute (Megatron's 1F1B
    /// "EP A2A overlap", DeepSeek's DualPipe); off: all-to-all fully exposed; search (default):
    /// whichever costs less.
    pub a2a_overlap: A2aOverlap,
    /// Fixed expert-parallel degree; `None`: searched.
    pub ep: Option<u64>,
    /// Fixed expert-tensor-parallel degree; `None`: searched (1 unless fixed in a search).
    pub etp: Option<u64>,
    /// Fixed time of one MoE layer per micro-batch, forward plus backward [s]: kernel launches of
    /// its many small kernels (router, top-k, permute, grouped GEMMs, unpermute) and the
    /// host-device synchronisation of dropless routing (token counts per expert are needed on the
    /// host before the all-to-all and the grouped GEMM can be sized). Default:
    /// [`FITTED_LAYER_OVERHEAD_S`], fitted on the measured MoE runs.
    pub layer_overhead_s: f64,
    /// Host time to issue one expert GEMM [s]: the routed experts' GEMMs of a layer are issued
    /// expert by expert — Transformer Engine's `GroupedLinear`
    /// (`transformer_engine/pytorch/module/grouped_linear.py`), which Megatron-Core's grouped-GEMM
    /// MLP uses, keeps one weight per local expert (`weight0` … `weight{num_gemms-1}`) and runs
    /// `general_grouped_gemm` over the token splits `m_splits` as one cuBLAS GEMM per expert on
    /// its multi-stream workspaces (in FP8 with per-split casts) — for each of the two matrices in
    /// the forward pass and twice each (data and weight gradients) in the backward pass, so a
    /// layer's experts take at least `2·(E/e)` issues forward and `4·(E/e)` backward however few
    /// tokens they get. Default:
    /// [`FITTED_EXPERT_GEMM_ISSUE_S`], fitted with the layer overhead.
    pub expert_gemm_issue_s: f64,
    /// The local experts' GEMMs run as one grouped kernel (torchtitan's `torch._grouped_mm`,
    /// MaxText's megablox `gmm`, a CUTLASS grouped GEMM): no per-expert issue time.
    pub one_grouped_kernel: bool,
    /// Megatron-Core's selective-recomputation modules of an MoE model's blocks, in effect under
    /// selective recomputation ([`crate::extended::Recompute::Selective`]); none by default.
    pub recompute_modules: RecomputeModules,
    /// DeepSeek-V3's DualPipe schedule as memory sees it (technical report, arXiv 2412.19437,
    /// §3.2.1 and Table 2): micro-batches enter from both ends of the pipeline, so rank `i` holds
    /// stage `i` and stage `pp − 1 − i` (two copies of the parameters: "2×") and at its peak
    /// `pp + 1` micro-batches' activations of one stage ("PP + 1", against 1F1B's `pp`); the first
    /// rank holds the embedding and the output head together. Time keeps 1F1B's slots with
    /// DualPipe's smaller bubble (`super::devices::dual_pipe_bubble_slots`, without
    /// interleaving); off by default. Needs an even `pp` of at least 2 (otherwise 1F1B).
    pub dual_pipe: bool,
    /// The experts' SwiGLU input kept in FP8 and its output recomputed in the backward
    /// (DeepSeek-V3 technical report, arXiv 2412.19437, §3.3.3 "Low-Precision Storage and
    /// Communication": the SwiGLU operator's inputs in the MoE are cached in FP8 and its output is
    /// recomputed): the routed and shared experts keep their first GEMM's output (the gate and up
    /// projections, `gates·f` per token copy) at [`FP8_DISPATCH_BYTES`] per element (1 B and one
    /// FP32 scale per 128) instead of 16-bit, and do not keep the activation's output (the second
    /// GEMM's input); the cast adds its traffic to the forward, the activation runs again before
    /// the backward. Off by default; with it the `moe_act` module has nothing left to drop.
    pub fp8_swiglu_cache: bool,
    /// Megatron-Core's `--moe-shared-expert-overlap`: the shared experts' GEMMs issued by the token
    /// dispatcher on a side stream, after the dispatcher's sync (the first right after the
    /// dispatch's all-to-all, the second after the combine's) instead of before the router on the
    /// compute stream (`megatron/core/transformer/moe/moe_layer.py` l. 661 and 517–530,
    /// `token_dispatcher.py` l. 716 and 871 at d98e8a6; [`super::block`]'s phases). Only the
    /// order of the forward's phases is priced: the exchange is not hidden behind the side stream.
    /// Megatron-Core accepts it with the all-to-all and flex dispatchers only, and not with the EP
    /// all-to-all overlap (`transformer_config.py` l. 1820–1826, 3040–3041); off by default.
    pub shared_overlap: bool,
    /// How a Megatron-Core MoE layer is configured where it changes its host calls (permute and
    /// router fusion, grouped or sequential experts, the load-balancing loss, CUDA-graph scopes;
    /// [`super::host_calls`], [`super::host_flags`]); Megatron's defaults by default.
    pub host: MoeHostFlags,
    /// The routed experts' saved tensors Megatron-LM offloads to the host
    /// (`--offload-modules expert_fc1 moe_act`, [`super::expert_offload`]): memory only; none by
    /// default.
    pub offload: ExpertOffload,
}

/// Megatron-Core's selective-recomputation modules (`--recompute-modules`, `recompute_modules` of
/// `TransformerConfig`, with `--recompute-granularity selective`) that change what an MoE model's
/// block keeps: each named sub-module's output is freed after the forward and recomputed before
/// its backward (`CheckpointWithoutOutput`, or a checkpoint of the whole MoE layer). `core_attn`
/// (the default) keeps nothing extra with flash attention and `mlp` is not modelled apart (see the
/// fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecomputeModules {
    /// `mla_up_proj`: the latent attention's query and key/value up-projections (with RoPE) run
    /// again; their outputs, the core attention's saved Q, K, V, are not kept.
    pub mla_up_proj: bool,
    /// `moe_act`: the routed experts' activation runs again; its output (the second GEMM's
    /// input) is not kept.
    pub moe_act: bool,
    /// `moe`: the whole MoE MLP (router, dispatch, experts, combine, shared experts) runs again;
    /// only its input is kept.
    pub moe: bool,
    /// `layernorm` (DeepSeek-V3 §3.2.3: "recompute all RMSNorm operations ... in
    /// back-propagation"): the norms run again before their backward and their outputs are not
    /// kept — the first linear layers after the block's norms (the attention's query/key-value
    /// projection or MLA down-projections) and, in latent attention, the up-projections after the
    /// latent norms keep no input; the norms keep their own inputs as before.
    pub layernorm: bool,
}

impl RecomputeModules {
    /// The modules' names, `+`-joined (`none` when there are none).
    pub fn names(&self) -> String {
        super::host_flags::plus_joined(&[
            (self.layernorm, "layernorm"),
            (self.mla_up_proj, "mla_up_proj"),
            (self.moe_act, "moe_act"),
            (self.moe, "moe"),
        ])
    }

    /// Reads `none` or a `+`-joined list of `layernorm`, `mla_up_proj`, `moe_act`, `moe`.
    fn parse(v: &str) -> Result<RecomputeModules, Error> {
        let mut m = RecomputeModules::default();
        for name in v.split('+').map(str::trim).filter(|n| *n != "none") {
            match name {
                "mla_up_proj" => m.mla_up_proj = true,
                "moe_act" => m.moe_act = true,
                "moe" => m.moe = true,
                "layernorm" | "rmsnorm" => m.layernorm = true,
                _ => {
                    return Err(bad(
                        "recompute_modules",
                        v,
                        "must be none or layernorm, mla_up_proj, moe_act, moe joined by +",
                    ));
                }
            }
        }
        Ok(m)
    }
}

/// Which of the routed experts' offload modules a run names (`--offload-modules`; what they take
/// off the device: [`super::expert_offload`]); none by default (Megatron offloads nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExpertOffload {
    /// `expert_fc1`: the first grouped GEMM's saved input (the dispatched token copies).
    pub expert_fc1: bool,
    /// `moe_act`: the activation's saved input (the first GEMM's output).
    pub moe_act: bool,
}

impl ExpertOffload {
    /// The modules' names, `+`-joined (`none` when there are none).
    pub fn names(&self) -> String {
        super::host_flags::plus_joined(&[(self.expert_fc1, "expert_fc1"), (self.moe_act, "moe_act")])
    }

    /// Reads `none` or a `+`-joined list of `expert_fc1`, `moe_act`; errors name
    /// `moe.offload_modules`.
    fn parse(v: &str) -> Result<ExpertOffload, Error> {
        let mut o = ExpertOffload::default();
        for name in v.split('+').map(str::trim).filter(|n| *n != "none") {
            match name {
                "expert_fc1" => o.expert_fc1 = true,
                "moe_act" => o.moe_act = true,
                _ => {
                    return Err(bad("offload_modules", v, "must be none or expert_fc1, moe_act joined by +"));
                }
            }
        }
        Ok(o)
    }
}

/// Bytes per element of an FP8 dispatch with one FP32 scale per 128 elements [B].
pub const FP8_DISPATCH_BYTES: f64 = 1.0 + 4.0 / 128.0;

/// Fixed time of one MoE layer per micro-batch, forward plus backward [s], fitted on the measured
/// MoE runs together with [`FITTED_EXPERT_GEMM_ISSUE_S`] (`crate::validate::moe_fit`, least mean
/// absolute error, coordinate search on a 0.1 ms × 2.5 µs grid; test `moe_validate`): 0.8 ms on
/// all 53 rows of `measured-moe-runs.json` under the operation-list block and memory model with
/// the dense constants of the 103-row fit (η 1.0, η_att 0.613 of the attention kernel's benchmark
/// curve, [`crate::extended::efficiency::attention_kernel_fraction`]; torchtitan rows read as
/// FlashAttention-2 class; 0.9 ms with the earlier η 0.999, η_att 0.41 of the ceiling), with the overlapped
/// exchange's SM share ([`super::layer::COMM_SM_SHARE`]) and DeepEP's achieved bandwidths for hierarchical
/// dispatchers (`super::dispatch::hierarchical_bandwidth_gain`). Leave-one-source-out
/// throughput MAPE 17.9 % (in-sample 17.3 %; 17.8 % / 17.3 % with the earlier attention rate; 18.3 % / 18.0 % with 1.2 ms before those two; 17.7 %
/// / 17.5 % before the MoE activations were counted as Megatron-Core keeps them with its recompute
/// modules; with this constant alone and the rows' earlier readings 3.1 ms, 23.9 % / 21.7 %).
/// Session 31: 0.7 ms once the experts' weight gradients pay their main gradient's read and write
/// ([`super::grouped_gemm::main_grad_bytes`]; leave-one-source-out 16.61 %, in-sample 16.56 %;
/// 0.8 ms before, 16.79 %). Session 33: 0.6 ms once GPT-OSS's experts pay their clamped
/// activation and bias loop ([`super::expert_extras`]) and the a2a overlap's unpaired passes show
/// their exchange ([`super::evaluate`]) (leave-one-source-out 15.07 %, in-sample 14.52 %; 0.7 ms
/// with those parts, 14.53 % in-sample). One third is charged to the forward, two thirds to the backward.
pub const FITTED_LAYER_OVERHEAD_S: f64 = 0.0006;

/// Host time to issue one expert GEMM [s] ([`MoeOptions::expert_gemm_issue_s`]),
/// fitted on the measured MoE runs together with [`FITTED_LAYER_OVERHEAD_S`]
/// (`crate::validate::moe_fit`, coordinate search on a 2.5 µs grid): 65 µs since the backward's
/// issues join the block's host time instead of bounding the experts alone
/// (`super::layer::MoeMlpCost::bwd_issue_s`; leave-one-source-out 18.6 % → 17.6 %, in-sample
/// 17.7 % → 17.4 %; 55 µs before, when the backward's issues were a floor of the experts). It binds only where the
/// local experts get few tokens: Megatron runs at micro-batch 1 with 16–64 local experts
/// (SimuMax's B200 rows: 64 local experts per rank are 35 % slower per layer than 32, at the same
/// tokens per expert; Qwen3 with 16 local experts at micro-batch 1 on B200 is 2.5× slower per token
/// than at micro-batch 4–8). 62.5 µs since the MoE layer's host calls besides the experts' GEMMs
/// are counted from Megatron-Core's code and added to the block's host time
/// ([`super::host_calls`]; leave-one-source-out 17.6 % → 17.3 %, in-sample 17.4 % → 17.3 %; the
/// layer overhead stays 0.8 ms).
pub const FITTED_EXPERT_GEMM_ISSUE_S: f64 = 62.5e-6;

impl Default for MoeOptions {
    fn default() -> Self {
        MoeOptions {
            load: Load::DEFAULT,
            dispatcher: Dispatcher::AllToAll,
            fp8_dispatch: false,
            a2a_overlap: A2aOverlap::Search,
            ep: None,
            etp: None,
            layer_overhead_s: FITTED_LAYER_OVERHEAD_S,
            expert_gemm_issue_s: FITTED_EXPERT_GEMM_ISSUE_S,
            one_grouped_kernel: false,
            recompute_modules: RecomputeModules::default(),
            dual_pipe: false,
            fp8_swiglu_cache: false,
            shared_overlap: false,
            host: MoeHostFlags::default(),
            offload: ExpertOffload::default(),
        }
    }
}

fn bad(key: &str, v: &str, rule: &str) -> Error {
    Error::invalid(format!("moe.{key}"), v, rule.to_string())
}

fn on_off(key: &str, v: &str) -> Result<bool, Error> {
    match v {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(bad(key, v, "must be on or off")),
    }
}

fn positive_int(key: &str, v: &str) -> Result<u64, Error> {
    v.parse::<u64>().ok().filter(|n| (1..=65_536).contains(n)).ok_or_else(|| bad(key, v, "must be from 1 to 65536"))
}

fn real(key: &str, v: &str, min: f64, max: f64) -> Result<f64, Error> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= min && *x <= max)
        .ok_or_else(|| bad(key, v, &format!("must be a number from {min} to {max}")))
}

/// The keys of the text form, for help texts.
pub const KEYS: &[(&str, &str)] = &[
    ("load", "dropless[:γ] (default dropless:1.1), forced, capacity:C[:γ]"),
    (
        "dispatcher",
        "alltoall (default), allgather, deepep[:M] / hybridep[:M] (hierarchical, node-limited to M domains)",
    ),
    ("fp8_dispatch", "on/off (default off): dispatch in FP8 with 1x128 scales"),
    (
        "a2a_overlap",
        "on/off/search (default search): hide the expert all-to-all behind another micro-batch's compute (at the cost of the SMs its kernels take)",
    ),
    ("ep", "fixed expert-parallel degree (default: searched)"),
    ("etp", "fixed expert-tensor-parallel degree (default: searched)"),
    ("layer_overhead", "fixed time of one MoE layer per micro-batch, fwd+bwd, in seconds (default: fitted)"),
    ("expert_gemm_issue", "host time to issue one expert GEMM, in seconds (default: fitted)"),
    ("grouped_kernel", "on/off (default off): the experts' GEMMs run as one grouped kernel (no per-expert issue)"),
    (
        "recompute_modules",
        "none (default) or layernorm+mla_up_proj+moe_act+moe: Megatron-Core selective-recompute modules (with recompute selective)",
    ),
    (
        "dual_pipe",
        "on/off (default off): DeepSeek's DualPipe memory: each rank holds two stages (2x parameters), pp+1 micro-batches in flight",
    ),
    (
        "fp8_swiglu_cache",
        "on/off (default off): the experts' SwiGLU input kept in FP8, its output recomputed (DeepSeek-V3)",
    ),
    (
        "shared_overlap",
        "on/off (default off): Megatron's --moe-shared-expert-overlap, the shared experts' GEMMs after the dispatcher's sync",
    ),
    (
        "offload_modules",
        "none (default) or expert_fc1+moe_act: the routed experts' saved tensors Megatron offloads to the host (memory only)",
    ),
    ("permute_fusion", "on/off (default off): Megatron's fused token permutation (fewer host calls)"),
    ("router_fusion", "on/off (default off): Megatron's fused router top-k and aux loss (fewer host calls)"),
    ("sequential_experts", "on/off (default off): Megatron's SequentialMLP, the local experts one by one"),
    (
        "balancing",
        "aux_loss (default), seq_aux_loss, global_aux_loss, sinkhorn, none: the router's load-balancing loss",
    ),
    ("cuda_graphs", "none (default) or attn+moe_router+moe_preprocess: Transformer Engine's CUDA-graph scopes"),
];

impl MoeOptions {
    /// Applies `key=value` pairs separated by commas on top of `self`. Errors name `moe.<key>`; a
    /// key given twice with different values (as read: `load=dropless` is `load=dropless:1.1`) is
    /// an error naming both.
    pub fn with_text(mut self, text: &str) -> Result<MoeOptions, Error> {
        // Each key set so far: the pair as typed and what it alone makes of the defaults.
        let mut seen: Vec<(String, &str, MoeOptions)> = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            self = self.with_pair(pair)?;
            let key = pair.split_once('=').map_or("", |(k, _)| k).trim().to_ascii_lowercase();
            let alone = MoeOptions::default().with_pair(pair)?;
            match seen.iter().find(|(k, _, _)| *k == key) {
                Some((_, first, was)) if *was != alone => {
                    return Err(Error::given_twice("moe", &key, first, pair));
                }
                Some(_) => {}
                None => seen.push((key, pair, alone)),
            }
        }
        Ok(self)
    }

    /// `self` with one `key=value` pair applied.
    fn with_pair(mut self, pair: &str) -> Result<MoeOptions, Error> {
        {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                Error::invalid("moe", pair, "must be key=value").with_hint("e.g. load=forced,dispatcher=deepep:4")
            })?;
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().to_ascii_lowercase());
            let (head, arg) = match value.split_once(':') {
                Some((h, a)) => (h, Some(a)),
                None => (value.as_str(), None),
            };
            match key.as_str() {
                "load" => {
                    self.load = match (head, arg) {
                        ("forced", None) => Load::Forced,
                        ("dropless", None) => Load::DEFAULT,
                        ("dropless", Some(g)) => Load::Dropless { imbalance: real("load", g, 1.0, 64.0)? },
                        ("capacity", Some(a)) => {
                            let (c, g) = match a.split_once(':') {
                                Some((c, g)) => (c, Some(g)),
                                None => (a, None),
                            };
                            Load::Capacity {
                                factor: real("load", c, 0.01, 64.0)?,
                                imbalance: g.map_or(Ok(DEFAULT_IMBALANCE), |g| real("load", g, 1.0, 64.0))?,
                            }
                        }
                        _ => return Err(bad("load", &value, "must be dropless[:γ], forced or capacity:C[:γ]")),
                    }
                }
                "dispatcher" => {
                    let m = arg.map(|a| positive_int("dispatcher", a)).transpose()?;
                    self.dispatcher = match head {
                        "alltoall" | "a2a" if m.is_none() => Dispatcher::AllToAll,
                        "allgather" if m.is_none() => Dispatcher::AllGather,
                        "deepep" | "hybridep" | "hierarchical" | "flex" => Dispatcher::Hierarchical { max_domains: m },
                        _ => {
                            return Err(bad("dispatcher", &value, "must be alltoall, allgather or deepep[:M]"));
                        }
                    }
                }
                "fp8_dispatch" => self.fp8_dispatch = on_off("fp8_dispatch", &value)?,
                "a2a_overlap" => {
                    self.a2a_overlap = match value.as_str() {
                        "search" | "auto" => A2aOverlap::Search,
                        _ => on_off("a2a_overlap", &value)
                            .map_err(|_| bad("a2a_overlap", &value, "must be on, off or search"))?
                            .into(),
                    }
                }
                "ep" => self.ep = Some(positive_int("ep", &value)?),
                "etp" => self.etp = Some(positive_int("etp", &value)?),
                "layer_overhead" => self.layer_overhead_s = real("layer_overhead", &value, 0.0, 1.0)?,
                "expert_gemm_issue" => self.expert_gemm_issue_s = real("expert_gemm_issue", &value, 0.0, 0.01)?,
                "grouped_kernel" => self.one_grouped_kernel = on_off("grouped_kernel", &value)?,
                "recompute_modules" => self.recompute_modules = RecomputeModules::parse(&value)?,
                "dual_pipe" | "dualpipe" => self.dual_pipe = on_off("dual_pipe", &value)?,
                "fp8_swiglu_cache" => self.fp8_swiglu_cache = on_off("fp8_swiglu_cache", &value)?,
                "shared_overlap" => self.shared_overlap = on_off("shared_overlap", &value)?,
                "offload_modules" => self.offload = ExpertOffload::parse(&value)?,
                "permute_fusion" => self.host.permute_fusion = on_off("permute_fusion", &value)?,
                "router_fusion" => self.host.router_fusion = on_off("router_fusion", &value)?,
                "sequential_experts" => self.host.sequential_experts = on_off("sequential_experts", &value)?,
                "balancing" => {
                    self.host.balancing = Balancing::from_name(&value).ok_or_else(|| {
                        bad("balancing", &value, "must be aux_loss, seq_aux_loss, global_aux_loss, sinkhorn or none")
                    })?
                }
                "cuda_graphs" => {
                    self.host.graphs = GraphScope::parse(&value).ok_or_else(|| {
                        bad("cuda_graphs", &value, "must be none or attn, moe_router, moe_preprocess joined by +")
                    })?
                }
                _ => {
                    let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
                    return Err(Error::UnknownField {
                        field: format!("moe.{key}"),
                        hint: Some(format!("known keys: {}", known.join(", "))),
                    });
                }
            }
        }
        Ok(self)
    }
}

impl fmt::Display for MoeOptions {
    /// The text form (every key), which [`MoeOptions::with_text`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.load {
            Load::Dropless { imbalance } => write!(f, "load=dropless:{imbalance}")?,
            Load::Capacity { factor, imbalance } => write!(f, "load=capacity:{factor}:{imbalance}")?,
            Load::Forced => write!(f, "load=forced")?,
        }
        match self.dispatcher {
            Dispatcher::AllToAll => write!(f, ",dispatcher=alltoall")?,
            Dispatcher::AllGather => write!(f, ",dispatcher=allgather")?,
            Dispatcher::Hierarchical { max_domains: None } => write!(f, ",dispatcher=deepep")?,
            Dispatcher::Hierarchical { max_domains: Some(m) } => write!(f, ",dispatcher=deepep:{m}")?,
        }
        let onoff = |b: bool| if b { "on" } else { "off" };
        write!(f, ",fp8_dispatch={},a2a_overlap={}", onoff(self.fp8_dispatch), self.a2a_overlap.as_str())?;
        if let Some(ep) = self.ep {
            write!(f, ",ep={ep}")?;
        }
        if let Some(etp) = self.etp {
            write!(f, ",etp={etp}")?;
        }
        write!(f, ",layer_overhead={}", self.layer_overhead_s)?;
        write!(f, ",expert_gemm_issue={}", self.expert_gemm_issue_s)?;
        write!(f, ",grouped_kernel={}", onoff(self.one_grouped_kernel))?;
        // Written when set (the default's text stays as it was).
        if self.recompute_modules != RecomputeModules::default() {
            write!(f, ",recompute_modules={}", self.recompute_modules.names())?;
        }
        if self.dual_pipe {
            write!(f, ",dual_pipe=on")?;
        }
        if self.fp8_swiglu_cache {
            write!(f, ",fp8_swiglu_cache=on")?;
        }
        if self.shared_overlap {
            write!(f, ",shared_overlap=on")?;
        }
        if self.offload != ExpertOffload::default() {
            write!(f, ",offload_modules={}", self.offload.names())?;
        }
        // The host-call switches, each written when not Megatron's default.
        let h = self.host;
        for (on, key) in [
            (h.permute_fusion, "permute_fusion"),
            (h.router_fusion, "router_fusion"),
            (h.sequential_experts, "sequential_experts"),
        ] {
            if on {
                write!(f, ",{key}=on")?;
            }
        }
        if h.balancing != Balancing::default() {
            write!(f, ",balancing={}", h.balancing.as_str())?;
        }
        if h.graphs != GraphScope::default() {
            write!(f, ",cuda_graphs={}", h.graphs.names())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_given_twice_differently_is_an_error_naming_both() {
        let e = MoeOptions::default().with_text("ep=8,ep=16").unwrap_err();
        assert_eq!(e.field(), Some("moe.ep"));
        assert_eq!(e.to_string(), "moe.ep = 16: given twice (8, then 16); give it once");
        assert!(MoeOptions::default().with_text("load=forced,dispatcher=deepep,load=capacity:1.25").is_err());
        // The same value as read is accepted: `dropless` is `dropless:1.1`.
        let o = MoeOptions::default().with_text("ep=8,EP=8,load=dropless,load=dropless:1.1").unwrap();
        assert_eq!(o.ep, Some(8));
    }

    #[test]
    fn text_round_trip_and_errors() {
        let o =
            MoeOptions::default().with_text("load=capacity:1.25:2,dispatcher=deepep:4,fp8_dispatch=on,ep=8").unwrap();
        assert_eq!(o.load, Load::Capacity { factor: 1.25, imbalance: 2.0 });
        assert_eq!(o.dispatcher, Dispatcher::Hierarchical { max_domains: Some(4) });
        assert_eq!((o.fp8_dispatch, o.ep, o.etp), (true, Some(8), None));
        assert_eq!(o.a2a_overlap, A2aOverlap::Search);
        for (v, want) in [("on", A2aOverlap::On), ("off", A2aOverlap::Off), ("search", A2aOverlap::Search)] {
            let x = MoeOptions::default().with_text(&format!("a2a_overlap={v}")).unwrap();
            assert_eq!(x.a2a_overlap, want);
            assert_eq!(MoeOptions::default().with_text(&x.to_string()).unwrap(), x);
        }
        assert_eq!(MoeOptions::default().with_text("a2a_overlap=maybe").unwrap_err().field(), Some("moe.a2a_overlap"));
        assert_eq!(MoeOptions::default().with_text(&o.to_string()).unwrap(), o);
        assert_eq!(MoeOptions::default().with_text("load=dropless:0.5").unwrap_err().field(), Some("moe.load"));
        assert_eq!(MoeOptions::default().with_text("ep=0").unwrap_err().field(), Some("moe.ep"));
        assert_eq!(MoeOptions::default().with_text("expert_gemm_issue=4e-5").unwrap().expert_gemm_issue_s, 4e-5);
        assert!(MoeOptions::default().with_text("grouped_kernel=on").unwrap().one_grouped_kernel);
        assert_eq!(
            MoeOptions::default().with_text("expert_gemm_issue=1").unwrap_err().field(),
            Some("moe.expert_gemm_issue")
        );
        assert_eq!(MoeOptions::default().with_text("epp=2").unwrap_err().field(), Some("moe.epp"));
        let r = MoeOptions::default().with_text("recompute_modules=mla_up_proj+moe_act").unwrap();
        assert_eq!(r.recompute_modules, RecomputeModules { mla_up_proj: true, moe_act: true, ..Default::default() });
        let n = MoeOptions::default().with_text("recompute_modules=rmsnorm+mla_up_proj").unwrap();
        assert_eq!(n.recompute_modules.names(), "layernorm+mla_up_proj");
        assert_eq!(MoeOptions::default().with_text(&n.to_string()).unwrap(), n);
        let c = MoeOptions::default().with_text("fp8_swiglu_cache=on").unwrap();
        assert!(c.fp8_swiglu_cache && !MoeOptions::default().fp8_swiglu_cache);
        assert_eq!(MoeOptions::default().with_text(&c.to_string()).unwrap(), c);
        assert!(!MoeOptions::default().to_string().contains("fp8_swiglu_cache"));
        assert_eq!(MoeOptions::default().with_text(&r.to_string()).unwrap(), r);
        assert_eq!(
            MoeOptions::default().with_text("recompute_modules=attn").unwrap_err().field(),
            Some("moe.recompute_modules")
        );
        let d = MoeOptions::default().with_text("dual_pipe=on").unwrap();
        assert!(d.dual_pipe && !MoeOptions::default().dual_pipe);
        assert_eq!(MoeOptions::default().with_text(&d.to_string()).unwrap(), d);
        assert!(!MoeOptions::default().to_string().contains("dual_pipe"));
        assert_eq!(MoeOptions::default().with_text("dual_pipe=twice").unwrap_err().field(), Some("moe.dual_pipe"));
        let h = MoeOptions::default()
            .with_text("permute_fusion=on,router_fusion=on,sequential_experts=on,balancing=sinkhorn,cuda_graphs=attn+moe_router")
            .unwrap();
        assert!(h.host.permute_fusion && h.host.router_fusion && h.host.sequential_experts);
        assert_eq!(h.host.balancing, Balancing::Sinkhorn);
        assert!(h.host.graphs.attn && h.host.graphs.moe_router && !h.host.graphs.moe_preprocess);
        assert_eq!(MoeOptions::default().with_text(&h.to_string()).unwrap(), h);
        assert!(!MoeOptions::default().to_string().contains("balancing"));
        assert_eq!(MoeOptions::default().with_text("cuda_graphs=mlp").unwrap_err().field(), Some("moe.cuda_graphs"));
        assert_eq!(MoeOptions::default().with_text("balancing=zloss").unwrap_err().field(), Some("moe.balancing"));
    }

    #[test]
    fn dropped_fraction_by_hand() {
        // γ = 2: loads uniform on [0, 2]; C = 1 drops E[(L−1)⁺]/E[L] = (1/4)/1 = 0.25.
        assert_eq!(Load::Capacity { factor: 1.0, imbalance: 2.0 }.dropped_fraction(), 0.25);
        // γ = 1.5, C = 1.25: (0.25)²/(4·0.5) = 0.03125.
        assert!((Load::Capacity { factor: 1.25, imbalance: 1.5 }.dropped_fraction() - 0.03125).abs() < 1e-15);
        assert_eq!(Load::Capacity { factor: 2.0, imbalance: 1.5 }.dropped_fraction(), 0.0);
        assert_eq!(Load::Forced.dropped_fraction(), 0.0);
        assert_eq!(Load::Forced.compute_factor(), 1.0);
        assert_eq!(Load::Capacity { factor: 1.25, imbalance: 3.0 }.compute_factor(), 1.25);
    }
}
