//! torchtitan's model flavours (`[model] name` and `flavor`) and their shapes, copied as facts
//! from torchtitan's flavour tables:
//!
//! * `llama2`: `torchtitan/models/llama/__init__.py` (`llama2_configs`, 2024; vocabulary from the
//!   Llama 2 tokenizer, 32000, Meta's Llama-2 `config.json`);
//! * `llama3` (and `llama3_ft`, `llama3_simple_fsdp`): `torchtitan/models/llama3/__init__.py`
//!   (`llama3_configs`; vocabulary 128256 from Meta-Llama-3.1 `config.json`, the debug model's
//!   test tokenizer 2000);
//! * `llama4`: `torchtitan/experiments/llama4/__init__.py` (`llama4_configs`) with the defaults of
//!   its `model/args.py` (`interleave_moe_layer_step = 2`, `auto_scale_hidden_dim`, vocabulary
//!   202048) and `torchtitan/models/moe.py` (`MoEArgs`: top-1, one shared expert, sigmoid router);
//! * `qwen3`: `torchtitan/experiments/qwen3/__init__.py` (`qwen3_configs`, later `models/qwen3`);
//! * `deepseek_v3`: `torchtitan/models/deepseek_v3/__init__.py` (`deepseekv3_configs`).
//!
//! The feed-forward rule of the Llama families (`FeedForward` in their `model.py`): `4·dim`, ×2/3
//! (truncated), × `ffn_dim_multiplier` (truncated), rounded up to `multiple_of`. Llama 4's MoE
//! layers divide by `top_k + shared experts` before rounding.

/// One Llama-style flavour: width, depth, heads, K/V heads, the FFN rule's multiplier and
/// rounding, vocabulary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flavour {
    /// `model.flavor` value.
    pub name: &'static str,
    /// `dim` [channels].
    pub dim: u64,
    /// `n_layers`.
    pub layers: u64,
    /// `n_heads`.
    pub heads: u64,
    /// `n_kv_heads`.
    pub kv_heads: u64,
    /// `ffn_dim_multiplier` (1.0 when absent).
    pub ffn_multiplier: f64,
    /// `multiple_of` [channels].
    pub multiple_of: u64,
    /// Vocabulary [tokens].
    pub vocab: u64,
}

#[allow(clippy::too_many_arguments)]
const fn llama(
    name: &'static str,
    dim: u64,
    layers: u64,
    heads: u64,
    kv: u64,
    mult: f64,
    of: u64,
    vocab: u64,
) -> Flavour {
    Flavour { name, dim, layers, heads, kv_heads: kv, ffn_multiplier: mult, multiple_of: of, vocab }
}

/// torchtitan's Llama 3 flavours (`torchtitan/models/llama3/__init__.py`, `llama3_configs`).
pub const FLAVOURS: &[Flavour] = &[
    llama("debugmodel", 256, 6, 16, 16, 1.0, 256, 2000),
    llama("8B", 4096, 32, 32, 8, 1.3, 1024, 128_256),
    llama("70B", 8192, 80, 64, 8, 1.3, 4096, 128_256),
    llama("405B", 16384, 126, 128, 8, 1.2, 4096, 128_256),
];

/// torchtitan's Llama 2 flavours (`torchtitan/models/llama/__init__.py`, `llama2_configs`, 2024:
/// `multiple_of` 256 and no multiplier unless given; K/V heads = heads unless given).
pub const LLAMA2: &[Flavour] = &[
    llama("debugmodel", 256, 2, 16, 16, 1.0, 256, 32_000),
    llama("271M", 1024, 16, 8, 8, 1.0, 256, 32_000),
    llama("1B", 2048, 18, 16, 16, 1.0, 256, 32_000),
    llama("7B", 4096, 32, 32, 32, 1.0, 256, 32_000),
    llama("13B", 5120, 40, 40, 40, 1.0, 256, 32_000),
    llama("26B", 5120, 80, 40, 40, 1.0, 256, 32_000),
    llama("70B", 8192, 80, 64, 8, 1.3, 4096, 32_000),
];

/// torchtitan's Llama 4 flavours (`torchtitan/experiments/llama4/__init__.py`):
/// `(flavour, shape, routed experts, interleave_moe_layer_step)`.
const LLAMA4: &[(Flavour, u64, u64)] = &[
    (llama("debugmodel", 256, 6, 16, 16, 1.0, 256, 2048), 8, 2),
    (llama("17bx16e", 5120, 48, 40, 8, 1.2, 2048, 202_048), 16, 1),
    (llama("17bx128e", 5120, 48, 40, 8, 1.2, 2048, 202_048), 128, 2),
];

impl Flavour {
    /// The SwiGLU hidden width of torchtitan's (and Meta's) `FeedForward`: `4·dim`, times 2/3
    /// (truncated), times the multiplier (truncated), rounded up to `multiple_of` [channels].
    pub fn ffn_hidden(&self) -> u64 {
        self.ffn_scaled(1)
    }

    /// The same rule with the width divided by `denominator` before rounding (Llama 4's MoE
    /// experts: `top_k + shared experts`).
    fn ffn_scaled(&self, denominator: u64) -> u64 {
        let h = 2 * (4 * self.dim) / 3;
        let h = (self.ffn_multiplier * h as f64) as u64 / denominator.max(1);
        h.div_ceil(self.multiple_of) * self.multiple_of
    }
}

/// Mixture-of-Experts part of a flavour.
#[derive(Debug, Clone, PartialEq)]
pub struct FlavourMoe {
    /// Routed experts.
    pub experts: u64,
    /// Experts per token.
    pub top_k: u64,
    /// One routed expert's hidden width [channels].
    pub expert_ffn: u64,
    /// Shared experts [count] (their hidden width is `expert_ffn` each).
    pub shared: u64,
    /// Dense blocks first [count].
    pub first_dense: u64,
    /// MoE at every n-th block (`(i + 1) % n == 0`), 1: every block.
    pub every: u64,
    /// Router score function.
    pub router: &'static str,
}

/// Multi-head latent attention ranks (DeepSeek-V3), [channels].
#[derive(Debug, Clone, PartialEq)]
pub struct MlaShape {
    /// Query compression rank (0: queries projected directly).
    pub q_lora_rank: u64,
    /// Key/value latent rank.
    pub kv_lora_rank: u64,
    /// Per-head query/key width without RoPE.
    pub qk_nope: u64,
    /// Per-head rotary width.
    pub qk_rope: u64,
    /// Per-head value width.
    pub v_head: u64,
}

/// A flavour's shape, whatever its family.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// `family flavour` (`llama3 8B`).
    pub name: String,
    /// Blocks.
    pub layers: u64,
    /// Width [channels].
    pub dim: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads.
    pub kv_heads: u64,
    /// Head width when it is not `dim / heads` [channels].
    pub head_dim: Option<u64>,
    /// Dense SwiGLU hidden width [channels].
    pub ffn: u64,
    /// Vocabulary [tokens].
    pub vocab: u64,
    /// Embedding and output share weights.
    pub tied: bool,
    /// Experts, when the flavour has them.
    pub moe: Option<FlavourMoe>,
    /// Latent attention, when the flavour has it.
    pub mla: Option<MlaShape>,
}

fn from_llama(family: &str, f: &Flavour) -> Shape {
    Shape {
        name: format!("{family} {}", f.name),
        layers: f.layers,
        dim: f.dim,
        heads: f.heads,
        kv_heads: f.kv_heads,
        head_dim: None,
        ffn: f.ffn_hidden(),
        vocab: f.vocab,
        tied: false,
        moe: None,
        mla: None,
    }
}

/// Qwen3 (`qwen3_configs`): `(flavour, dim, layers, heads, kv heads, hidden, tied, moe: (experts,
/// expert hidden))`; head width 128, vocabulary 151936, top-8 softmax routing, no shared expert.
#[allow(clippy::type_complexity)]
const QWEN3: &[(&str, u64, u64, u64, u64, u64, bool, Option<(u64, u64)>)] = &[
    ("0.6B", 1024, 28, 16, 8, 3072, true, None),
    ("1.7B", 2048, 28, 16, 8, 6144, true, None),
    ("4B", 2560, 36, 32, 8, 9728, true, None),
    ("8B", 4096, 36, 32, 8, 12288, false, None),
    ("14B", 5120, 40, 40, 8, 17408, false, None),
    ("32B", 5120, 64, 64, 8, 25600, false, None),
    ("debugmodel_moe", 1024, 28, 16, 8, 3072, false, Some((64, 768))),
    ("30B-A3B", 2048, 48, 32, 4, 6144, false, Some((128, 768))),
    ("235B-A22B", 4096, 94, 64, 4, 12288, false, Some((128, 1536))),
];

/// DeepSeek-V3 (`deepseekv3_configs`): `(flavour, vocab, dim, dense hidden, expert hidden, layers,
/// dense layers, heads, experts, shared, top-k, router, q_lora_rank)`; MLA ranks kv 512, nope 128,
/// rope 64, v 128 in every flavour.
#[allow(clippy::type_complexity)]
const DEEPSEEK_V3: &[(&str, u64, u64, u64, u64, u64, u64, u64, u64, u64, u64, &str, u64)] = &[
    ("debugmodel", 2048, 256, 1024, 256, 6, 1, 16, 8, 2, 3, "softmax", 0),
    ("debugmodel_flex_attn", 2048, 256, 1024, 256, 6, 1, 16, 8, 2, 3, "softmax", 0),
    ("16B", 102_400, 2048, 10944, 1408, 27, 1, 16, 64, 2, 6, "softmax", 0),
    ("236B", 102_400, 5120, 12288, 1536, 60, 1, 128, 160, 2, 6, "softmax", 1536),
    ("671B", 129_280, 7168, 18432, 2048, 61, 3, 128, 256, 1, 8, "sigmoid", 1536),
];

/// The families fmperf knows (`model.name`).
pub const FAMILIES: &[&str] =
    &["llama2", "llama3", "llama3_ft", "llama3_simple_fsdp", "llama4", "qwen3", "deepseek_v3"];

/// The shape of `flavour` of `family`, or the flavours the family has.
pub fn shape(family: &str, flavour: &str) -> Result<Shape, String> {
    let eq = |a: &str| a.eq_ignore_ascii_case(flavour);
    let names: Vec<&str>;
    match family {
        "llama2" => {
            if let Some(f) = LLAMA2.iter().find(|f| eq(f.name)) {
                return Ok(from_llama("llama2", f));
            }
            names = LLAMA2.iter().map(|f| f.name).collect();
        }
        "llama3" | "llama3_ft" | "llama3_simple_fsdp" => {
            if let Some(f) = FLAVOURS.iter().find(|f| eq(f.name)) {
                return Ok(from_llama("llama3", f));
            }
            names = FLAVOURS.iter().map(|f| f.name).collect();
        }
        "llama4" => {
            // The iRoPE variants (`…_irope`) have the same shape.
            let base = flavour.trim_end_matches("_irope");
            if let Some((f, experts, every)) = LLAMA4.iter().find(|(f, ..)| f.name.eq_ignore_ascii_case(base)) {
                let mut s = from_llama("llama4", f);
                s.name = format!("llama4 {flavour}");
                s.moe = Some(FlavourMoe {
                    experts: *experts,
                    top_k: 1,
                    expert_ffn: f.ffn_scaled(2),
                    shared: 1,
                    first_dense: 0,
                    every: *every,
                    router: "sigmoid",
                });
                return Ok(s);
            }
            names = LLAMA4.iter().map(|f| f.0.name).collect();
        }
        "qwen3" => {
            if let Some(&(n, dim, layers, heads, kv, hidden, tied, moe)) = QWEN3.iter().find(|q| eq(q.0)) {
                return Ok(Shape {
                    name: format!("qwen3 {n}"),
                    layers,
                    dim,
                    heads,
                    kv_heads: kv,
                    head_dim: Some(128),
                    ffn: hidden,
                    vocab: 151_936,
                    tied,
                    moe: moe.map(|(experts, expert_ffn)| FlavourMoe {
                        experts,
                        top_k: 8,
                        expert_ffn,
                        shared: 0,
                        first_dense: 0,
                        every: 1,
                        router: "softmax",
                    }),
                    mla: None,
                });
            }
            names = QWEN3.iter().map(|q| q.0).collect();
        }
        "deepseek_v3" => {
            if let Some(&(n, vocab, dim, inter, moe_inter, layers, dense, heads, experts, shared, k, router, q)) =
                DEEPSEEK_V3.iter().find(|d| eq(d.0))
            {
                return Ok(Shape {
                    name: format!("deepseek_v3 {n}"),
                    layers,
                    dim,
                    heads,
                    kv_heads: heads,
                    head_dim: None,
                    ffn: inter,
                    vocab,
                    tied: false,
                    moe: Some(FlavourMoe {
                        experts,
                        top_k: k,
                        expert_ffn: moe_inter,
                        shared,
                        first_dense: dense,
                        every: 1,
                        router,
                    }),
                    mla: Some(MlaShape { q_lora_rank: q, kv_lora_rank: 512, qk_nope: 128, qk_rope: 64, v_head: 128 }),
                });
            }
            names = DEEPSEEK_V3.iter().map(|d| d.0).collect();
        }
        _ => return Err(format!("fmperf knows torchtitan's {}", FAMILIES.join(", "))),
    }
    Err(format!("must be a {family} flavour: {}", names.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_forward_widths_follow_the_rule() {
        // Meta's published intermediate sizes: Llama 3 14336, 28672, 53248; Llama 2 7B 11008,
        // 13B 13824; Llama 4 16384 dense and 8192 per expert (Llama-4-Maverick config.json).
        let w: Vec<u64> = FLAVOURS[1..].iter().map(Flavour::ffn_hidden).collect();
        assert_eq!(w, [14336, 28672, 53248]);
        assert_eq!(shape("llama2", "7B").unwrap().ffn, 11008);
        assert_eq!(shape("llama2", "13B").unwrap().ffn, 13824);
        let l4 = shape("llama4", "17bx128e").unwrap();
        assert_eq!((l4.ffn, l4.moe.as_ref().map(|m| (m.expert_ffn, m.every))), (16384, Some((8192, 2))));
        let d = shape("deepseek_v3", "671B").unwrap();
        assert_eq!(d.moe.map(|m| (m.experts, m.top_k, m.first_dense)), Some((256, 8, 3)));
        assert_eq!(shape("qwen3", "32B").unwrap().head_dim, Some(128));
        assert!(shape("qwen3", "33B").unwrap_err().contains("32B"));
        assert!(shape("gpt5", "1T").is_err());
    }
}
