//! The shapes of MaxText's model files (`MaxText/configs/models/<model_name>.yml`), for a command
//! line that names `model_name=…` without giving the file (with `--from`, the file itself is read).
//!
//! Sources: google/maxtext (AI-Hypercomputer/maxtext) `MaxText/configs/models/*.yml` and
//! `src/maxtext/configs/models/*.yml`: `base_num_decoder_layers`, `base_emb_dim`,
//! `base_num_query_heads`, `base_num_kv_heads`, `head_dim` (base.yml's default 128 where the file
//! has none), `base_mlp_dim`, `vocab_size`, `mlp_activations` (two entries: gated),
//! `logits_via_embedding` (tied), `num_experts`, `num_experts_per_tok`, `base_moe_mlp_dim`,
//! `shared_experts`, `first_num_dense_layers` and the MLA ranks (`q_lora_rank`, `kv_lora_rank`,
//! `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim`).

/// One MaxText model file's shape. Widths in channels, counts dimensionless.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Model {
    /// `model_name` as MaxText spells it.
    pub name: &'static str,
    /// `base_num_decoder_layers`.
    pub layers: u64,
    /// `base_emb_dim`.
    pub hidden: u64,
    /// `base_num_query_heads`.
    pub heads: u64,
    /// `base_num_kv_heads`.
    pub kv_heads: u64,
    /// `head_dim`.
    pub head_dim: u64,
    /// `base_mlp_dim` (each branch of a gated MLP).
    pub mlp: u64,
    /// `vocab_size` [tokens].
    pub vocab: u64,
    /// `mlp_activations` has two entries (`["silu","linear"]`, `["gelu","linear"]`).
    pub gated: bool,
    /// `logits_via_embedding: True`.
    pub tied: bool,
    /// Mixture of experts, when the model has routed experts.
    pub moe: Option<Experts>,
}

/// The experts of a MaxText model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Experts {
    /// `num_experts`.
    pub experts: u64,
    /// `num_experts_per_tok`.
    pub top_k: u64,
    /// `base_moe_mlp_dim` [channels].
    pub mlp: u64,
    /// `shared_experts` [count].
    pub shared: u64,
    /// `first_num_dense_layers`.
    pub first_dense: u64,
    /// MLA ranks `(q_lora_rank (0: none), kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
    /// v_head_dim)`, for `attention_type: mla`.
    pub mla: Option<(u64, u64, u64, u64, u64)>,
}

const fn dense(
    name: &'static str,
    layers: u64,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    mlp: u64,
    vocab: u64,
    gated: bool,
    tied: bool,
) -> Model {
    Model { name, layers, hidden, heads, kv_heads, head_dim, mlp, vocab, gated, tied, moe: None }
}

const fn moe(m: Model, experts: u64, top_k: u64, mlp: u64, shared: u64, first_dense: u64) -> Model {
    Model { moe: Some(Experts { experts, top_k, mlp, shared, first_dense, mla: None }), ..m }
}

const fn mla(m: Model, ranks: (u64, u64, u64, u64, u64)) -> Model {
    match m.moe {
        Some(e) => Model { moe: Some(Experts { mla: Some(ranks), ..e }), ..m },
        None => m,
    }
}

/// The model files fmperf knows, by `model_name`.
pub const MODELS: &[Model] = &[
    dense("llama2-7b", 32, 4096, 32, 32, 128, 11008, 32000, true, false),
    dense("llama2-13b", 40, 5120, 40, 40, 128, 13824, 32000, true, false),
    dense("llama2-70b", 80, 8192, 64, 8, 128, 28672, 32000, true, false),
    dense("llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256, true, false),
    dense("llama3-70b", 80, 8192, 64, 8, 128, 28672, 128256, true, false),
    dense("llama3.1-8b", 32, 4096, 32, 8, 128, 14336, 128256, true, false),
    dense("llama3.1-70b", 80, 8192, 64, 8, 128, 28672, 128256, true, false),
    dense("llama3.1-405b", 126, 16384, 128, 8, 128, 53248, 128256, true, false),
    dense("llama3.3-70b", 80, 8192, 64, 8, 128, 28672, 128256, true, false),
    dense("mistral-7b", 32, 4096, 32, 8, 128, 14336, 32000, true, false),
    moe(dense("mixtral-8x7b", 32, 4096, 32, 8, 128, 14336, 32000, true, false), 8, 2, 14336, 0, 0),
    moe(dense("mixtral-8x22b", 56, 6144, 48, 8, 128, 16384, 32768, true, false), 8, 2, 16384, 0, 0),
    dense("gemma-2b", 18, 2048, 8, 1, 256, 16384, 256128, true, true),
    dense("gemma-7b", 28, 3072, 16, 16, 256, 24576, 256128, true, true),
    dense("gemma3-27b", 62, 5376, 32, 16, 128, 21504, 262144, true, true),
    dense("gpt3-175b", 96, 12288, 96, 96, 128, 49152, 50304, false, true),
    dense("gpt3-22b", 48, 6144, 24, 24, 256, 24576, 32768, false, true),
    dense("gpt3-6b", 48, 3072, 12, 12, 256, 12288, 32768, false, true),
    dense("qwen3-8b", 36, 4096, 32, 8, 128, 12288, 151936, true, false),
    // All layers are MoE: base_mlp_dim is not used (the 235B file states it equal to the experts').
    moe(dense("qwen3-30b-a3b", 48, 2048, 32, 4, 128, 768, 151936, true, false), 128, 8, 768, 0, 0),
    moe(dense("qwen3-235b-a22b", 94, 4096, 64, 4, 128, 1536, 151936, true, false), 128, 8, 1536, 0, 0),
    moe(dense("gpt-oss-20b", 24, 2880, 64, 8, 64, 2880, 201088, true, false), 32, 4, 2880, 0, 0),
    moe(dense("gpt-oss-120b", 36, 2880, 64, 8, 64, 2880, 201088, true, false), 128, 4, 2880, 0, 0),
    moe(dense("llama4-17b-16e", 48, 5120, 40, 8, 128, 16384, 202048, true, false), 16, 1, 8192, 1, 0),
    mla(
        moe(dense("deepseek2-16b", 27, 2048, 16, 16, 128, 10944, 102400, true, false), 64, 6, 1408, 2, 1),
        (0, 512, 128, 64, 128),
    ),
    mla(
        moe(dense("deepseek3-671b", 61, 7168, 128, 128, 128, 18432, 129280, true, false), 256, 8, 2048, 1, 3),
        (1536, 512, 128, 64, 128),
    ),
];

/// MaxText model files that repeat another's shape and change only its sharding or schedule
/// (`deepseek3-671b-2dfsdp.yml`: `logical_axis_rules` for FSDP on two axes;
/// `deepseek3-671b-batchsplit.yml`: the batch-split schedule and routing groups), with the file
/// whose shape they keep.
const VARIANTS: &[(&str, &str)] =
    &[("deepseek3-671b-2dfsdp", "deepseek3-671b"), ("deepseek3-671b-batchsplit", "deepseek3-671b")];

/// The model file named `name` (`llama2-7b`), if fmperf knows it.
pub fn find(name: &str) -> Option<&'static Model> {
    let n = name.trim().to_ascii_lowercase();
    let n = VARIANTS.iter().find(|(v, _)| *v == n).map_or(n.as_str(), |(_, base)| base);
    MODELS.iter().find(|m| m.name == n)
}

/// The table's models with local (sliding-window) attention blocks: `(model_name,
/// decoder_block, sliding_window_size [tokens])`, from the same model files (google/maxtext at
/// e591f30: `gemma3-27b.yml` 1024, `gpt-oss-20b.yml` and `gpt-oss-120b.yml` 128).
pub const WINDOWS: [(&str, &str, u64); 3] =
    [("gemma3-27b", "gemma3", 1024), ("gpt-oss-20b", "gpt_oss", 128), ("gpt-oss-120b", "gpt_oss", 128)];

/// The known names, for an error's hint.
pub fn names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}
