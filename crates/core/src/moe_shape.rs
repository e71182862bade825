//! The shape of a Mixture-of-Experts transformer beyond the dense one: routed experts and their
//! width, top-k, shared experts, gated or plain expert MLPs, which blocks are MoE (the first `k`
//! dense, then every `n`-th), the router; multi-head latent attention (MLA, DeepSeek-V2/V3); and
//! multi-token-prediction (MTP) blocks.
//!
//! All fields are counts (dimensionless) or widths [channels]. Parameter counts here are exact
//! for the matrices and norms (no biases; the models of the catalog have none in their GEMMs).

use crate::Error;

/// How the router scores the experts. Both cost `2·h·E` FLOPs per token (one `h × E` GEMM);
/// the name is kept so that a written model says what it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Router {
    /// Softmax over the expert logits, then top-k (Mixtral, Qwen3, GPT-OSS, DBRX, Llama 4 uses a
    /// sigmoid of the top-1 logit but the same GEMM).
    Softmax,
    /// Sigmoid scores with a bias for auxiliary-loss-free balance, group-limited top-k (DeepSeek-V3,
    /// Kimi K2).
    Sigmoid,
}

impl Router {
    /// All routers, in order.
    pub const ALL: [Router; 2] = [Router::Softmax, Router::Sigmoid];

    /// The name used in JSON: `softmax` or `sigmoid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Router::Softmax => "softmax",
            Router::Sigmoid => "sigmoid",
        }
    }

    /// Parses `softmax` / `sigmoid`.
    pub fn from_name(s: &str) -> Option<Router> {
        Router::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// What an expert MLP adds to a plain gated (SwiGLU) expert: GPT-OSS's clamped activation and
/// biases (`openai/gpt-oss-120b` `config.json`: `swiglu_limit` 7.0; Megatron-Bridge v0.3.0
/// `src/megatron/bridge/models/gpt_oss/gpt_oss_provider.py`: `activation_func_clamp_value = 7.0`,
/// `add_bias_linear = True`, `glu_linear_offset = 1.0`). Neither changes a FLOP count (the bias
/// adds and the clamp are element-wise); their traffic is priced in
/// `extended::moe::expert_extras`. Both off for every other model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExpertExtras {
    /// The gated activation's two inputs are clamped before it (GPT-OSS: the gate to at most
    /// `limit`, the linear half to `[−limit, limit]`).
    pub clamped_glu: bool,
    /// The expert matrices carry biases (GPT-OSS: both expert GEMMs).
    pub biases: bool,
}

/// The Mixture-of-Experts part of a model (per MoE block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MoeShape {
    /// Routed experts `E` per MoE block.
    pub experts: u64,
    /// Hidden width of one routed expert `f_e` [channels] (gated: of each of gate and up).
    pub expert_ffn: u64,
    /// Routed experts per token `k` (`1 ≤ k ≤ E`).
    pub top_k: u64,
    /// Shared experts `E_s` (every token passes through them; 0 = none).
    pub shared_experts: u64,
    /// Hidden width of one shared expert `f_s` [channels] (0 when there are none).
    pub shared_ffn: u64,
    /// Gated expert MLPs (SwiGLU: gate, up, down = 3 matrices); plain MLPs have 2.
    pub gated: bool,
    /// Leading blocks that are dense (DeepSeek-V3: 3, Kimi K2: 1); they use the model's
    /// `ffn_hidden`.
    pub first_dense: u64,
    /// After the leading dense blocks, every `moe_every`-th block is MoE (1 = all; Llama 4
    /// Maverick: 2, blocks 2, 4, 6, …); the others are dense.
    pub moe_every: u64,
    /// Router scoring.
    pub router: Router,
    /// What the expert MLPs add to a plain gated expert (GPT-OSS's clamp and biases; none by
    /// default).
    pub extras: ExpertExtras,
}

/// Multi-head latent attention (DeepSeek-V2 §2.1): queries through a low-rank projection (or a
/// direct one), keys and values through a compressed latent, plus a decoupled RoPE key shared by
/// all heads. Widths in channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mla {
    /// Rank of the query compression `d_c'`; `None`: queries are projected directly from `h`
    /// (DeepSeek-V2-Lite).
    pub q_lora_rank: Option<u64>,
    /// Rank of the key/value latent `d_c`.
    pub kv_lora_rank: u64,
    /// Per-head query/key width without rotary embedding.
    pub qk_nope_head_dim: u64,
    /// Per-head (decoupled) rotary query/key width; the rotary key is shared by all heads.
    pub qk_rope_head_dim: u64,
    /// Per-head value width.
    pub v_head_dim: u64,
}

/// Largest count accepted for experts, ranks and widths (keeps products exact in `f64`).
const MAX_WIDTH: u64 = 4_194_304;

fn check_range(field: &str, v: u64, min: u64, max: u64) -> Result<(), Error> {
    if v < min || v > max {
        return Err(Error::invalid(field, v, format!("must be from {min} to {max}")));
    }
    Ok(())
}

impl MoeShape {
    /// Matrices per expert MLP `m`: 3 gated, 2 plain.
    pub fn matrices(&self) -> u64 {
        if self.gated { 3 } else { 2 }
    }

    /// Whether block `i` (0-based, of `layers`) is an MoE block.
    pub fn is_moe_block(&self, i: u64) -> bool {
        i >= self.first_dense && (i - self.first_dense + 1).is_multiple_of(self.moe_every.max(1))
    }

    /// Routed experts each of `ep` expert-parallel ranks holds, `E/e` (at least 1).
    pub fn local_experts(&self, ep: u64) -> f64 {
        (self.experts / ep.max(1)).max(1) as f64
    }

    /// MoE blocks among `layers` blocks.
    pub fn moe_blocks(&self, layers: u64) -> u64 {
        layers.saturating_sub(self.first_dense) / self.moe_every.max(1)
    }

    /// Parameters of the routed experts of one MoE block `E·m·h·f_e` [count].
    pub fn routed_parameters(&self, hidden: u64) -> f64 {
        (self.experts * self.matrices()) as f64 * hidden as f64 * self.expert_ffn as f64
    }

    /// Parameters of the shared experts of one MoE block `E_s·m·h·f_s` [count].
    pub fn shared_parameters(&self, hidden: u64) -> f64 {
        (self.shared_experts * self.matrices()) as f64 * hidden as f64 * self.shared_ffn as f64
    }

    /// Router weights of one MoE block `h·E` [count].
    pub fn router_parameters(&self, hidden: u64) -> f64 {
        hidden as f64 * self.experts as f64
    }

    /// Parameters one token activates in one MoE block: `k` routed experts, the shared experts and
    /// the router, `k·m·h·f_e + E_s·m·h·f_s + h·E` [count].
    pub fn active_parameters(&self, hidden: u64) -> f64 {
        (self.top_k * self.matrices()) as f64 * hidden as f64 * self.expert_ffn as f64
            + self.shared_parameters(hidden)
            + self.router_parameters(hidden)
    }

    /// Checks the fields against the model's `layers`; errors name `{prefix}moe.<field>`.
    pub fn validate(&self, layers: u64, prefix: &str) -> Result<(), Error> {
        let p = |f: &str| format!("{prefix}moe.{f}");
        check_range(&p("experts"), self.experts, 1, 65_536)?;
        check_range(&p("expert_ffn"), self.expert_ffn, 1, MAX_WIDTH)?;
        if self.top_k == 0 || self.top_k > self.experts {
            return Err(Error::invalid(
                p("top_k"),
                self.top_k,
                format!("must be from 1 to experts = {}", self.experts),
            )
            .with_hint("each token is routed to at most every expert once"));
        }
        check_range(&p("shared_experts"), self.shared_experts, 0, 1024)?;
        if self.shared_experts > 0 {
            check_range(&p("shared_ffn"), self.shared_ffn, 1, MAX_WIDTH)?;
        }
        check_range(&p("moe_every"), self.moe_every, 1, 1024)?;
        if self.first_dense >= layers.max(1) || self.moe_blocks(layers) == 0 {
            return Err(Error::invalid(
                p("first_dense"),
                self.first_dense,
                format!("leaves no MoE block among the {layers} blocks (with moe_every = {})", self.moe_every),
            )
            .with_hint("a model without MoE blocks is a dense model: remove the moe object"));
        }
        Ok(())
    }
}

impl Mla {
    /// Query/key width per head `d_nope + d_rope` [channels].
    pub fn qk_head_dim(&self) -> u64 {
        self.qk_nope_head_dim + self.qk_rope_head_dim
    }

    /// The projections of one MLA block as `(rows, columns)` weight matrices, `heads` query heads,
    /// width `hidden`: query (down, up — or one direct), key/value down (latent plus the shared
    /// rotary key), key/value up (no-RoPE keys and values of every head), output.
    pub fn projections(&self, hidden: u64, heads: u64) -> Vec<(u64, u64)> {
        let q_out = heads * self.qk_head_dim();
        let mut out = match self.q_lora_rank {
            Some(r) => vec![(hidden, r), (r, q_out)],
            None => vec![(hidden, q_out)],
        };
        out.push((hidden, self.kv_lora_rank + self.qk_rope_head_dim));
        out.push((self.kv_lora_rank, heads * (self.qk_nope_head_dim + self.v_head_dim)));
        out.push((heads * self.v_head_dim, hidden));
        out
    }

    /// Parameters of one MLA block's attention [count]: the projections plus the norms of the
    /// query and key/value latents.
    pub fn parameters(&self, hidden: u64, heads: u64) -> f64 {
        let mats: f64 = self.projections(hidden, heads).iter().map(|&(r, c)| r as f64 * c as f64).sum();
        mats + (self.q_lora_rank.unwrap_or(0) + self.kv_lora_rank) as f64
    }

    /// Checks the fields; errors name `{prefix}mla.<field>`.
    pub fn validate(&self, prefix: &str) -> Result<(), Error> {
        let p = |f: &str| format!("{prefix}mla.{f}");
        if let Some(r) = self.q_lora_rank {
            check_range(&p("q_lora_rank"), r, 1, MAX_WIDTH)?;
        }
        check_range(&p("kv_lora_rank"), self.kv_lora_rank, 1, MAX_WIDTH)?;
        check_range(&p("qk_nope_head_dim"), self.qk_nope_head_dim, 1, 65_536)?;
        check_range(&p("qk_rope_head_dim"), self.qk_rope_head_dim, 0, 65_536)?;
        check_range(&p("v_head_dim"), self.v_head_dim, 1, 65_536)?;
        Ok(())
    }
}

/// Largest number of multi-token-prediction blocks accepted.
pub const MAX_MTP_LAYERS: u64 = 16;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn dsv3() -> (MoeShape, Mla) {
        (
            MoeShape {
                experts: 256,
                expert_ffn: 2048,
                top_k: 8,
                shared_experts: 1,
                shared_ffn: 2048,
                gated: true,
                first_dense: 3,
                moe_every: 1,
                router: Router::Sigmoid,
                extras: ExpertExtras::default(),
            },
            Mla {
                q_lora_rank: Some(1536),
                kv_lora_rank: 512,
                qk_nope_head_dim: 128,
                qk_rope_head_dim: 64,
                v_head_dim: 128,
            },
        )
    }

    #[test]
    fn deepseek_v3_counts_by_hand() {
        let (m, mla) = dsv3();
        let h = 7168u64;
        assert_eq!(m.moe_blocks(61), 58);
        assert!(!m.is_moe_block(2) && m.is_moe_block(3) && m.is_moe_block(60));
        // Routed experts: 256 · 3 · 7168 · 2048 = 11,274,289,152 per block.
        assert_eq!(m.routed_parameters(h), 11_274_289_152.0);
        // Active: (8 + 1) · 3 · 7168 · 2048 + 7168 · 256.
        assert_eq!(m.active_parameters(h), 9.0 * 3.0 * 7168.0 * 2048.0 + 7168.0 * 256.0);
        // MLA: 7168·1536 + 1536·128·192 + 7168·576 + 512·128·256 + 128·128·7168 + 1536 + 512.
        let want = 7168.0 * 1536.0
            + 1536.0 * 128.0 * 192.0
            + 7168.0 * 576.0
            + 512.0 * 128.0 * 256.0
            + 128.0 * 128.0 * 7168.0
            + 2048.0;
        assert_eq!(mla.parameters(h, 128), want);
        assert_eq!(mla.qk_head_dim(), 192);
    }

    #[test]
    fn maverick_interleaves_moe_blocks() {
        let m = MoeShape { experts: 128, top_k: 1, first_dense: 0, moe_every: 2, ..dsv3().0 };
        assert_eq!(m.moe_blocks(48), 24);
        assert!(!m.is_moe_block(0) && m.is_moe_block(1) && !m.is_moe_block(2) && m.is_moe_block(47));
    }

    #[test]
    fn rules_name_their_fields() {
        let (m, mla) = dsv3();
        assert!(m.validate(61, "model.").is_ok());
        let e = MoeShape { top_k: 300, ..m }.validate(61, "model.").unwrap_err();
        assert_eq!(e.field(), Some("model.moe.top_k"));
        let e = MoeShape { first_dense: 61, ..m }.validate(61, "").unwrap_err();
        assert_eq!(e.field(), Some("moe.first_dense"));
        let e = MoeShape { shared_ffn: 0, ..m }.validate(61, "").unwrap_err();
        assert_eq!(e.field(), Some("moe.shared_ffn"));
        assert!(mla.validate("").is_ok());
        assert_eq!(
            Mla { kv_lora_rank: 0, ..mla }.validate("model.").unwrap_err().field(),
            Some("model.mla.kv_lora_rank")
        );
    }
}
