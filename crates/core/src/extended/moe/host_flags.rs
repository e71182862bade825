//! The switches of a Megatron-Core MoE layer that change the host's calls
//! ([`super::host_calls`] counts them): permute and router fusion, grouped or sequential experts,
//! the router's load-balancing loss, Transformer Engine's CUDA-graph scopes, and (for multi-latent
//! attention's calls, [`super::mla_host`]) RoPE fusion. Megatron's
//! defaults (`megatron/core/transformer/transformer_config.py` at d98e8a6: `moe_permute_fusion`,
//! `moe_router_fusion` and `moe_grouped_gemm` off, `moe_router_load_balancing_type="aux_loss"`, no
//! CUDA graphs) by default.

/// Which load-balancing loss the router adds (`--moe-router-load-balancing-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Balancing {
    /// `aux_loss` (Megatron's default type; Switch Transformer's loss per micro-batch).
    #[default]
    AuxLoss,
    /// `seq_aux_loss` (per sequence; DeepSeek-V3).
    SeqAuxLoss,
    /// `global_aux_loss` (over the global batch).
    GlobalAuxLoss,
    /// `sinkhorn` routing (no auxiliary loss).
    Sinkhorn,
    /// `none`: no loss (auxiliary-loss-free balance with the expert bias only).
    None,
}

impl Balancing {
    /// The text form.
    pub fn as_str(self) -> &'static str {
        match self {
            Balancing::AuxLoss => "aux_loss",
            Balancing::SeqAuxLoss => "seq_aux_loss",
            Balancing::GlobalAuxLoss => "global_aux_loss",
            Balancing::Sinkhorn => "sinkhorn",
            Balancing::None => "none",
        }
    }

    /// Reads the text form.
    pub fn from_name(s: &str) -> Option<Balancing> {
        [Balancing::AuxLoss, Balancing::SeqAuxLoss, Balancing::GlobalAuxLoss, Balancing::Sinkhorn, Balancing::None]
            .into_iter()
            .find(|b| b.as_str() == s)
    }
}

/// The parts of a block Transformer Engine's scoped CUDA graphs capture (`--cuda-graph-scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphScope {
    /// `attn`: the attention sub-layer.
    pub attn: bool,
    /// `moe_router`: the router with its load-balancing loss.
    pub moe_router: bool,
    /// `moe_preprocess`: the dispatcher's metadata before its device→host sync.
    pub moe_preprocess: bool,
}

impl GraphScope {
    /// The captured modules, `+`-joined (`none` when there are none).
    pub fn names(&self) -> String {
        plus_joined(&[(self.attn, "attn"), (self.moe_router, "moe_router"), (self.moe_preprocess, "moe_preprocess")])
    }

    /// Reads `none` or a `+`-joined list of `attn`, `moe_router`, `moe_preprocess`; `None` for
    /// another word.
    pub fn parse(v: &str) -> Option<GraphScope> {
        let mut g = GraphScope::default();
        for name in v.split('+').map(str::trim).filter(|n| *n != "none") {
            match name {
                "attn" => g.attn = true,
                "moe_router" => g.moe_router = true,
                "moe_preprocess" => g.moe_preprocess = true,
                _ => return None,
            }
        }
        Some(g)
    }
}

/// How a Megatron-Core MoE layer is configured where it changes the host's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoeHostFlags {
    /// `--moe-permute-fusion`: Transformer Engine's fused permute, unpermute and chunk sort.
    pub permute_fusion: bool,
    /// `--moe-router-fusion`: Transformer Engine's fused top-k and aux-loss kernels.
    pub router_fusion: bool,
    /// The local experts run one by one (`SequentialMLP`, Megatron's default without
    /// `--moe-grouped-gemm`); off: `TEGroupedMLP`.
    pub sequential_experts: bool,
    /// The load-balancing loss.
    pub balancing: Balancing,
    /// CUDA-graph scopes.
    pub graphs: GraphScope,
}

/// The names whose flag is on, `+`-joined, or `none` (the text form of a set of modules).
pub(crate) fn plus_joined(flags: &[(bool, &str)]) -> String {
    let on: Vec<&str> = flags.iter().filter(|(b, _)| *b).map(|(_, n)| *n).collect();
    if on.is_empty() { "none".into() } else { on.join("+") }
}
