//! Activation recomputation as people write it, read by meaning and mapped to extended mode's
//! levels ([`Recompute`]: none, selective, op, a partial share, full).
//!
//! | what the words say | examples | read as |
//! |---|---|---|
//! | nothing recomputed | `none`, `no`, `off`, `false`, `disabled`, `no AC`, MaxText `remat_policy=none` / `save_all`, Praxis (PaxML) `SAVE_EVERYTHING` | none |
//! | the attention core only | Megatron `selective`, `--recompute-activations`, `core_attn`, `--recompute-modules core_attn`, a bare `selective` | selective |
//! | PyTorch's operator-level selective checkpointing as torchtitan sets it (matmul and attention outputs saved, every second matmul and all element-wise work recomputed) | `SAC`, `op`, `per-op SAC`, torchtitan `selective` with `selective_ac_option = "op"` | op |
//! | element-wise work only, every matmul output kept | MaxText `minimal`, `minimal_with_context`, `minimal_flash`; Praxis `SAVE_DOT_ONLY`, `SAVE_DOT_WITH_NO_BATCH_DIM` | selective |
//! | every block's forward again | Megatron `full` (`uniform`/`block` with all layers), PyTorch/HF `activation`/`gradient checkpointing`, DeepSpeed `checkpoint_activations`, `AC`, MaxText `full`, Praxis `SAVE_NOTHING`, `SAVE_CONTEXT`, `true`/`on` | full |
//! | part of the forward (some matmuls) | MaxText `save_dot_except_mlp`, `save_dot_except_mlpwi`, `save_dot_with_context_except_mlp`, `save_qkv_proj`, `save_out_proj`, `custom`; Praxis `SAVE_QKV_OUT_PROJ`, `SAVE_CONTEXT_AND_OUT_PROJ`; Megatron `--recompute-modules … mlp …` | partial: the share of the forward matmul work redone |
//! | some of the layers | Megatron `block` method with `k` of `n` layers, torchtitan layer SAC `every 2 layers`, `50 % of layers`, `every other layer` | partial: the share of the layers |
//! | activations offloaded to host | MaxText `minimal_offloaded`, `qkv_proj_offloaded`, DeepSpeed `cpu_checkpointing`, torchtune activation offloading | selective (no extra forward; device memory over-counted) |
//!
//! A value that opens by saying the policy is unknown (`unclear`, `unknown`, `unstated`, `not stated`,
//! `unspecified`) states none and is read like an absent one (none), noted.
//!
//! Anything else that names recomputation without a qualifier (`recompute`, `remat`,
//! `checkpointing`) is full (what PyTorch, DeepSpeed and Hugging Face do when it is switched on);
//! words that say nothing understood are read as full, the classic meaning of the field, and the
//! note says so. Partial policies are the level [`Recompute::Partial`] with their share of the
//! forward (to 0.001), and the note says which share.

use super::words::Words;
use crate::extended::{Recompute, Workload};
use crate::vocab::Note;

/// A recomputation policy read from words.
#[derive(Debug, Clone, PartialEq)]
pub struct RecomputeReading {
    /// The level extended mode evaluates.
    pub level: Recompute,
    /// Fraction of the layers (or of a layer's forward matmul work) recomputed when the words
    /// describe a partial policy.
    pub fraction: Option<f64>,
    /// Whether activations are offloaded to host memory.
    pub offloaded: bool,
    /// How the words were read (empty when they were plain).
    pub note: Option<Note>,
    /// Whether the row states a policy: `false` when the field is absent or says the policy is
    /// not known (read as none, the default of Megatron-LM, PyTorch, DeepSpeed and Hugging Face's
    /// Trainer); a `does not fit` verdict must then hold at the deepest policy too
    /// ([`super::prepared`]).
    pub stated: bool,
}

impl RecomputeReading {
    fn plain(level: Recompute) -> RecomputeReading {
        RecomputeReading { level, fraction: None, offloaded: false, note: None, stated: true }
    }

    fn noted(level: Recompute, note: String) -> RecomputeReading {
        RecomputeReading { level, fraction: None, offloaded: false, note: Some(Note::reading(note)), stated: true }
    }

    /// No policy stated: none, noted.
    fn unstated(note: String) -> RecomputeReading {
        RecomputeReading { stated: false, ..RecomputeReading::noted(Recompute::None, note) }
    }

    fn partial(fraction: f64, what: &str) -> RecomputeReading {
        // None of it (`--recompute-num-layers 0`) is no recomputation, all of it full.
        let level = Recompute::of_share(fraction);
        let read_as = match level {
            Recompute::Partial(s) => format!("partial recomputation of {} of the forward", s.fraction()),
            other => other.as_str().to_string(),
        };
        RecomputeReading {
            level,
            fraction: Some(fraction),
            offloaded: false,
            stated: true,
            note: Some(Note::reading(format!(
                "recomputation of {what} ({:.0} %): modelled as {read_as}",
                fraction * 100.0
            ))),
        }
    }
}

/// A block's forward matmul work per token, by the parts JAX remat policies name [units of
/// `h²` multiply-adds per token]: what a policy's share of the forward is counted in
/// ([`read_recompute_of_block`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockMatmuls {
    /// Q, K and V projections: `(q_width + 2·kv_width) / h` [h²].
    pub qkv: f64,
    /// Output projection: `q_width / h` [h²].
    pub out: f64,
    /// MLP input (gate and up of a gated MLP): `f / h`, twice when gated [h²].
    pub mlp_in: f64,
    /// MLP output: `f / h` [h²].
    pub mlp_out: f64,
}

impl BlockMatmuls {
    /// A Llama-like block (`f ≈ 3.5·h`, gated, GQA 4:1): Q+K+V 1.5 h², output 1 h², MLP in 7 h²,
    /// MLP out 3.5 h² — the shape the policies are read at when the row's own is not known.
    pub const LLAMA_LIKE: BlockMatmuls = BlockMatmuls { qkv: 1.5, out: 1.0, mlp_in: 7.0, mlp_out: 3.5 };

    /// The block of `w` as the model has it (its own K/V heads, its MLP width and gating). GPT-3
    /// 175B (MHA, `f = 4h`, GELU): 3 + 1 + 4 + 4 = 12 h²; Llama 2/3 70B (`h` 8192, 8 of 64 K/V
    /// heads, `f` 28,672 gated): 1.25 + 1 + 7 + 3.5 = 12.75 h².
    pub fn of(w: &Workload) -> BlockMatmuls {
        let h = w.hidden.max(1) as f64;
        let q = w.q_width() as f64 / h;
        let kv = (w.kv_heads * w.head_dim) as f64 / h;
        let f = w.ffn_hidden as f64 / h;
        BlockMatmuls { qkv: q + 2.0 * kv, out: q, mlp_in: if w.gated_mlp { 2.0 * f } else { f }, mlp_out: f }
    }

    /// Share of the forward matmul work in the parts `redo` marks (`[qkv, out, mlp_in, mlp_out]`).
    fn share(self, redo: [bool; 4]) -> f64 {
        let parts = [self.qkv, self.out, self.mlp_in, self.mlp_out];
        let total: f64 = parts.iter().sum();
        if total <= 0.0 {
            return 0.0;
        }
        parts.iter().zip(redo).filter(|(_, r)| *r).map(|(p, _)| p).sum::<f64>() / total
    }
}

/// Fraction of a block's forward matmul work (of the shape `block`) that a JAX remat policy
/// recomputes, or 0 for the policies that keep every matmul output. MaxText's `remat_policy`
/// names and Praxis's (PaxML) `AutodiffCheckpointType` names (`SAVE_NOTHING`, `SAVE_EVERYTHING`,
/// `SAVE_DOT_ONLY`, `SAVE_DOT_WITH_NO_BATCH_DIM` — JAX's `dots_with_no_batch_dims_saveable`: the
/// projections, whose weights carry no batch dimension, are kept and the attention core's
/// batched products recomputed —, `SAVE_QKV_OUT_PROJ`, `SAVE_OUT_PROJ`, `SAVE_CONTEXT`,
/// `SAVE_CONTEXT_AND_OUT_PROJ`). Longer names first: `save qkv out proj` before `save out proj`.
///
/// Each policy keeps named tensors and redoes the matmuls that are not kept. Praxis's
/// `SAVE_QKV_OUT_PROJ` is `save_only_these_names('combined_qkv_proj', 'out_proj')` (google/praxis
/// @ 5ae5e1b `praxis/layers/checkpoint_policy.py` lines 47–49); under Transformer Engine (PaxML's
/// GPU recipes run `ENABLE_TE=1`, NVIDIA/dgxc-benchmarking v25.01 `paxml/configure.sh`) the block
/// is TE's `TransformerLayer`, which tags exactly those two (NVIDIA/TransformerEngine v1.4,
/// 0fbc76a, `transformer_engine/jax/flax/transformer.py` lines 542 and 803), so the whole MLP is
/// redone: 8 of GPT-3's 12 h², 0.667, not the 10.5 of 13 of a Llama-like block.
fn maxtext_policy(w: &Words, block: BlockMatmuls) -> Option<(f64, &'static str)> {
    // (policy words, matmuls redone: [qkv, out, mlp_in, mlp_out])
    const NONE: [bool; 4] = [false; 4];
    const ALL: [bool; 4] = [true; 4];
    const MLP: [bool; 4] = [false, false, true, true];
    const POLICIES: [(&str, [bool; 4]); 16] = [
        ("save dot with context except mlp", MLP),
        ("save dot except mlpwi", [false, false, true, false]),
        ("save dot except mlp", MLP),
        ("save dot with no batch dim", NONE),
        ("save dot only", NONE),
        ("save qkv out proj", MLP),
        ("save qkv proj", [false, true, true, true]),
        ("save context and out proj", [true, false, true, true]),
        ("save context", ALL),
        ("save out proj", [true, false, true, true]),
        ("save nothing", ALL),
        ("save everything", NONE),
        ("save all", NONE),
        ("minimal with context", NONE),
        ("minimal flash", NONE),
        ("checkpoint dots", NONE),
    ];
    POLICIES.iter().find(|(p, _)| w.has(p)).map(|(p, redo)| match *redo {
        NONE => (0.0, *p),
        ALL => (1.0, *p),
        parts => (block.share(parts), *p),
    })
}

/// The MaxText `remat_policy` whose share of the forward (as [`read_recompute`] reads it) is
/// nearest `share`, with that share: how a partial level is written back as a MaxText policy.
pub fn nearest_maxtext_policy(share: f64) -> (&'static str, f64) {
    const MAXTEXT: [&str; 4] = ["save_dot_except_mlpwi", "save_dot_except_mlp", "save_qkv_proj", "save_out_proj"];
    MAXTEXT
        .iter()
        .filter_map(|name| maxtext_policy(&Words::new(name), BlockMatmuls::LLAMA_LIKE).map(|(f, _)| (*name, f)))
        .min_by(|a, b| (a.1 - share).abs().total_cmp(&(b.1 - share).abs()))
        .unwrap_or(("save_dot_except_mlp", 10.5 / 13.0))
}

/// Parts of a block that recomputation policies name one by one (norms, projections, activation
/// functions, the attention core, routers, permutations, MoE pieces), as whole tokens.
const BLOCK_MODULES: [&str; 27] = [
    "norm",
    "norms",
    "rmsnorm",
    "layernorm",
    "layer norm",
    "rms norm",
    "ln",
    "up proj",
    "up projection",
    "up projections",
    "down proj",
    "mla",
    "core attn",
    "core attention",
    "attention core",
    "act",
    "activation function",
    "activation fn",
    "swiglu",
    "gelu",
    "silu",
    "router",
    "permute",
    "qkv",
    "softmax",
    "moe",
    "shared experts",
];

/// The block modules a text names (`+`-joined as written), when it names at least one.
fn named_modules(w: &Words) -> Option<String> {
    let named: Vec<&str> = BLOCK_MODULES.iter().copied().filter(|m| w.has(m)).collect();
    (!named.is_empty()).then(|| named.join(" + "))
}

/// Reads a recomputation policy. `layers`: the row's layer count (for "k layers" without "of n").
/// JAX remat policies are read at a Llama-like block's shares ([`BlockMatmuls::LLAMA_LIKE`]).
pub fn read_recompute(text: Option<&str>, layers: Option<u64>) -> RecomputeReading {
    read_recompute_of_block(text, layers, BlockMatmuls::LLAMA_LIKE)
}

/// [`read_recompute`] for a row whose block shape is known: a JAX remat policy's share of the
/// forward is counted in that block's matmuls ([`BlockMatmuls::of`]).
pub fn read_recompute_of_block(text: Option<&str>, layers: Option<u64>, block: BlockMatmuls) -> RecomputeReading {
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return RecomputeReading::unstated("recomputation not stated: none".into());
    };
    let w = Words::new(t);
    // A value that opens with a negation states no recomputation; what follows explains it
    // ("none (activation checkpointing mode 'none')", "none (--recompute-num-layers 0)", "off: …").
    const LEADING_NO: [&str; 4] = ["none", "off", "disabled", "false"];
    if w.tokens.first().is_some_and(|t| LEADING_NO.contains(&t.as_str())) {
        return RecomputeReading::plain(Recompute::None);
    }
    // A value that opens by saying the policy is not known states none: read as not stated.
    // Also in two words ("not stated", "not specified", "not given": session 30's NeMo rows).
    const LEADING_UNKNOWN: [&str; 4] = ["unclear", "unknown", "unstated", "unspecified"];
    const NOT_WHAT: [&str; 5] = ["stated", "specified", "given", "known", "reported"];
    let not_stated =
        w.tokens.first().is_some_and(|t| t == "not") && w.tokens.get(1).is_some_and(|t| NOT_WHAT.contains(&t.as_str()));
    if not_stated || w.tokens.first().is_some_and(|t| LEADING_UNKNOWN.contains(&t.as_str())) {
        return RecomputeReading::unstated(format!("recompute `{t}`: no policy stated, read as none"));
    }
    // Offloading (with or without recomputation of the rest).
    if w.has_prefix("offload") || w.any(&["cpu checkpointing", "host offload"]) {
        return RecomputeReading {
            level: Recompute::Selective,
            fraction: None,
            offloaded: true,
            stated: true,
            note: Some(Note::reading(format!(
                "`{t}`: activations offloaded to host memory, priced as no extra forward (selective); device \
                 memory of the offloaded activations is over-counted"
            ))),
        };
    }
    // MaxText policy names.
    if let Some((f, name)) = maxtext_policy(&w, block) {
        return if f == 0.0 {
            let level =
                if matches!(name, "save all" | "save everything") { Recompute::None } else { Recompute::Selective };
            RecomputeReading::noted(
                level,
                format!("JAX remat policy `{}`: every matmul output kept, read as {}", name, level.as_str()),
            )
        } else if f >= 1.0 {
            RecomputeReading::noted(
                Recompute::Full,
                format!("JAX remat policy `{name}`: every matmul of the forward recomputed, read as full"),
            )
        } else {
            RecomputeReading::partial(f, &format!("the forward matmul work under the JAX remat policy `{name}`"))
        };
    }
    if w.has("minimal") || w.has("checkpoint dots") {
        return RecomputeReading::noted(
            Recompute::Selective,
            "element-wise work recomputed, every matmul output kept: read as selective".into(),
        );
    }
    if w.has("custom") && (w.has("remat") || w.has("policy")) {
        return RecomputeReading::partial(0.5, "a custom set of tensors (unknown; half assumed)");
    }
    // Negations: a short text that starts or ends with a "no" word ("no", "none", "off",
    // "w/o AC", "activation checkpointing: off", "remat_policy=none", "gradient_checkpointing=False").
    const NO: [&str; 9] = ["none", "no", "off", "false", "disabled", "0", "nothing", "without", "never"];
    let toks = &w.tokens;
    let short = toks.len() <= 4;
    let starts_no =
        toks.first().is_some_and(|t| NO.contains(&t.as_str())) || toks.starts_with(&["w".into(), "o".into()]);
    let ends_no = toks.last().is_some_and(|t| NO.contains(&t.as_str()));
    if short && (starts_no || ends_no) {
        return RecomputeReading::plain(Recompute::None);
    }
    let recompute_words = [
        "recompute",
        "recomputation",
        "recomputed",
        "recomputing",
        "checkpointing",
        "checkpoint",
        "checkpointed",
        "remat",
        "rematerialization",
        "rematerialisation",
        "ac",
        "sac",
    ];
    let mentions_any = recompute_words.iter().any(|p| w.has(p));
    let affirmed = recompute_words.iter().any(|p| w.affirms(p));
    if mentions_any && !affirmed && !w.any(&["full", "selective", "uniform", "block"]) {
        return RecomputeReading::plain(Recompute::None);
    }
    // Layer-wise partial policies: "every 2 layers", "every other layer", "k of n layers", "50 %".
    let mentions_layers = w.has_prefix("layer") || w.has_prefix("block");
    if mentions_layers || w.has("every other") || w.has("every") {
        if w.has("every other") || w.has("alternate") || w.has("alternating") {
            return RecomputeReading::partial(0.5, "every other layer");
        }
        if let Some(n) = w.number_after("every", 2).filter(|n| *n >= 1.0)
            && !w.has("uniform")
        {
            return RecomputeReading::partial(1.0 / n, &format!("one layer in {n}"));
        }
        if let Some((k, n)) = w.fraction() {
            return RecomputeReading::partial(k / n, &format!("{k} of {n} layers"));
        }
        // Megatron's block method: `--recompute-num-layers k` of the stage's layers.
        if w.has("block")
            && let (Some(k), Some(l)) =
                (w.number_after("num layers", 2).or_else(|| w.number_before("layers", 1)), layers.map(|l| l as f64))
            && k < l
        {
            return RecomputeReading::partial(
                k / l,
                &format!("{k} layers per stage, block method (fraction of the model's {l} layers, pp = 1 assumed)"),
            );
        }
    }
    if let Some((k, n)) = w.fraction().filter(|(k, n)| k < n) {
        return RecomputeReading::partial(k / n, &format!("{k}/{n} of the model"));
    }
    // Megatron's `--recompute-modules`: the attention core alone is selective; MLP modules make
    // it a partial policy.
    if w.has("modules") || w.has("recompute modules") {
        if w.has("mlp") {
            return RecomputeReading::partial(10.5 / 13.0, "the MLP and the listed modules");
        }
        return RecomputeReading::noted(Recompute::Selective, format!("`{t}`: listed modules, read as selective"));
    }
    if w.has("full") || w.has("uniform") {
        return RecomputeReading::plain(Recompute::Full);
    }
    // PyTorch's selective activation checkpointing (SAC: `create_selective_checkpoint_contexts`,
    // a policy per operator) as torchtitan configures it (`selective_ac_option = "op"`); the
    // layer-wise variant was read above.
    if w.any(&["sac", "op", "per op", "op level", "operator level"]) {
        return RecomputeReading::noted(
            Recompute::Op,
            format!(
                "`{t}`: PyTorch's operator-level selective checkpointing as torchtitan sets it (matmul and attention \
                 outputs saved except every second matmul)"
            ),
        );
    }
    // A list of a block's modules recomputed ("rmsnorm + MLA up-projection recomputed in
    // backward", "recompute layernorm and core attention", `recompute_modules: [moe_act]`) is
    // Megatron-Core's selective recomputation of those modules, whatever the list is called; an
    // MLP among them makes it partial, as above.
    if let Some(named) = named_modules(&w).filter(|_| !w.any(&["full", "uniform"])) {
        // (a list under the word "selective" is Megatron-Core's `--recompute-modules` with the
        // selective granularity: its `mlp` is the dense layers' MLP, a refinement, not a level)
        if w.has("mlp") && !w.has("selective") {
            return RecomputeReading::partial(10.5 / 13.0, "the MLP and the listed modules");
        }
        return RecomputeReading::noted(
            Recompute::Selective,
            format!("`{t}`: a list of modules ({named}) recomputed in the backward, read as selective"),
        );
    }
    if w.any(&["selective", "core attn", "core attention", "attention core", "attention only"])
        || w.has("recompute activations")
    {
        return RecomputeReading::plain(Recompute::Selective);
    }
    if mentions_any || w.any(&["true", "yes", "on", "enabled", "rematerialization", "checkpoint activations"]) {
        return RecomputeReading::noted(
            Recompute::Full,
            format!(
                "`{t}`: recomputation without a qualifier, read as full (every block; PyTorch's and DeepSpeed's meaning)"
            ),
        );
    }
    RecomputeReading::noted(
        Recompute::Full,
        format!("recompute `{t}` not understood: read as full (the most likely meaning of a stated policy)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(t: &str) -> Recompute {
        read_recompute(Some(t), Some(32)).level
    }

    #[test]
    fn an_unknown_policy_is_read_as_not_stated() {
        for t in
            ["unclear (see notes)", "unknown", "Unspecified in the paper", "not stated", "Not specified on the page"]
        {
            let r = read_recompute(Some(t), Some(32));
            assert_eq!(r.level, Recompute::None, "{t}");
            assert!(!r.stated, "{t}");
            assert!(r.note.is_some_and(|n| n.contains("no policy stated")), "{t}");
        }
        assert!(!read_recompute(None, Some(32)).stated);
        assert!(read_recompute(Some("none"), Some(32)).stated);
        // A stated word that is not understood is still full.
        assert_eq!(read_recompute(Some("sometimes"), Some(32)).level, Recompute::Full);
    }

    #[test]
    fn plain_words() {
        assert_eq!(read_recompute(None, None).level, Recompute::None);
        for t in
            ["none", "no", "off", "False", "no activation checkpointing", "without recomputation", "remat_policy=none"]
        {
            assert_eq!(level(t), Recompute::None, "{t}");
        }
        for t in ["selective", "selective (attention core only)", "--recompute-activations", "core_attn"] {
            assert_eq!(level(t), Recompute::Selective, "{t}");
        }
        for t in ["SAC (op)", "selective (per-op SAC)", "selective (torchtitan SAC; 'op' policy is the config default)"]
        {
            assert_eq!(level(t), Recompute::Op, "{t}");
        }
        assert_ne!(level("selective (SAC every 2 layers)"), Recompute::Op);
        // A leading negation is the value, the rest explains it; none of the layers is none.
        for t in [
            "none (activation checkpointing mode 'none')",
            "none (--recompute-granularity full --recompute-method block --recompute-num-layers 0)",
            "off: full recomputation was tried and dropped",
            "--recompute-granularity full --recompute-method block --recompute-num-layers 0",
        ] {
            assert_eq!(level(t), Recompute::None, "{t}");
        }
        // 8 of 32 layers: a quarter of the forward again.
        assert_eq!(
            level("--recompute-granularity full --recompute-method block --recompute-num-layers 8"),
            Recompute::of_share(0.25)
        );
        assert_eq!(Recompute::of_share(0.25).block_share(), Some(0.25));
        for t in ["full", "full activation checkpointing", "gradient checkpointing", "AC", "true", "remat"] {
            assert_eq!(level(t), Recompute::Full, "{t}");
        }
    }

    #[test]
    fn jax_policies_count_the_rows_own_block() {
        // GPT-3 175B (PaxML GPT175B): h 12288, 96 heads of 128 (MHA), f 4h = 49152, GELU.
        let gpt3 = Workload {
            hidden: 12288,
            heads: 96,
            kv_heads: 96,
            head_dim: 128,
            ffn_hidden: 49152,
            gated_mlp: false,
            ..Workload::from_shape(&crate::ModelShape::with_default_mlp(2048, 12288, 96, 96))
        };
        let b = BlockMatmuls::of(&gpt3);
        // Q+K+V 3 h², out 1 h², MLP in 4 h², MLP out 4 h².
        assert_eq!(b, BlockMatmuls { qkv: 3.0, out: 1.0, mlp_in: 4.0, mlp_out: 4.0 });
        // SAVE_QKV_OUT_PROJ keeps Q/K/V and the output projection: the MLP's 8 of 12 h² redone.
        let r = read_recompute_of_block(Some("PaxML checkpoint policy SAVE_QKV_OUT_PROJ"), Some(96), b);
        assert_eq!(r.fraction, Some(8.0 / 12.0));
        assert_eq!(r.level.block_share(), Some(0.667));
        // Llama 2/3 70B: h 8192, 64 heads, 8 K/V heads of 128, f 28672 gated:
        // Q+K+V 1 + 2·0.125 = 1.25, out 1, MLP in 2·3.5 = 7, MLP out 3.5: 12.75 h².
        let llama = Workload {
            hidden: 8192,
            heads: 64,
            kv_heads: 8,
            head_dim: 128,
            ffn_hidden: 28672,
            gated_mlp: true,
            ..gpt3
        };
        let b = BlockMatmuls::of(&llama);
        // save_qkv_proj redoes out + MLP: 11.5 / 12.75 = 0.902.
        assert_eq!(read_recompute_of_block(Some("save_qkv_proj"), None, b).fraction, Some(11.5 / 12.75));
        // Policies that keep or redo everything do not depend on the shape.
        assert_eq!(read_recompute_of_block(Some("SAVE_DOT_ONLY"), None, b).level, Recompute::Selective);
        assert_eq!(read_recompute_of_block(Some("SAVE_NOTHING"), None, b).level, Recompute::Full);
        // Without the row's shape: the Llama-like shares as before.
        assert_eq!(read_recompute(Some("save_qkv_proj"), None).fraction, Some(11.5 / 13.0));
    }

    #[test]
    fn praxis_checkpoint_policies_by_what_they_keep() {
        // PaxML's `AutodiffCheckpointType` names, as its configs and launch scripts write them.
        for t in ["PaxML checkpoint policy SAVE_DOT_ONLY", "CHECKPOINT_POLICY = SAVE_DOT_WITH_NO_BATCH_DIM"] {
            assert_eq!(level(t), Recompute::Selective, "{t}");
        }
        assert_eq!(level("SAVE_EVERYTHING"), Recompute::None);
        for t in ["SAVE_NOTHING", "save_context"] {
            assert_eq!(level(t), Recompute::Full, "{t}");
        }
        // 10.5 of 13 units of matmul work redone: 0.8077 → 0.808 of the forward.
        assert_eq!(level("PaxML checkpoint policy SAVE_QKV_OUT_PROJ").block_share(), Some(0.808));
        // Saving the Q/K/V and output projections recomputes the MLP: not a module list of `qkv`.
        let r = read_recompute(Some("SAVE_QKV_OUT_PROJ"), Some(96));
        assert_eq!(r.fraction, Some(10.5 / 13.0));
        assert!(r.note.is_some_and(|n| n.contains("save qkv out proj")));
        // MaxText's `save_qkv_proj` and `save_out_proj` keep their own fractions.
        assert_eq!(read_recompute(Some("save_qkv_proj"), None).fraction, Some(11.5 / 13.0));
        assert_eq!(read_recompute(Some("save_out_proj"), None).fraction, Some(12.0 / 13.0));
        // Written back: the policy nearest a share reads as that share.
        assert_eq!(nearest_maxtext_policy(0.808), ("save_dot_except_mlp", 10.5 / 13.0));
        assert_eq!(nearest_maxtext_policy(0.25).0, "save_dot_except_mlpwi");
        // 11.5 / 13 = 0.8846: the partial level to 0.001, said in the note.
        let r = read_recompute(Some("save_qkv_proj"), None);
        assert_eq!(r.level.block_share(), Some(0.885));
        assert!(r.note.is_some_and(|n| n.contains("partial recomputation of 0.885 of the forward")));
    }

    #[test]
    fn module_lists_are_selective() {
        for t in [
            "rmsnorm + MLA up-projection recomputed in backward",
            "recompute layernorm and core attention",
            "recompute_modules: [moe_act, layernorm]",
            "checkpointing of the norms and the SwiGLU activation only",
            "remat of mla_up_proj",
        ] {
            assert_eq!(level(t), Recompute::Selective, "{t}");
        }
        // An MLP among the modules is most of the block's matmul work.
        assert_eq!(level("recompute mlp and norms").block_share(), Some(0.808));
        assert_eq!(level("selective: mla_up_proj, mlp"), Recompute::Selective);
        // A full policy that names its modules stays full.
        assert_eq!(level("full recomputation of every layer (attention, mlp, norms)"), Recompute::Full);
    }
}
