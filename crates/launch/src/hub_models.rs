//! Models a launch names but does not describe (`--model_name_or_path meta-llama/Llama-2-7b-hf`,
//! `model_name_or_path: mistralai/Mistral-7B-v0.1`, a local copy `~/weights/llama-13b`): the shape
//! of well-known Hugging Face models, each from its published `config.json` (the repository named
//! in [`HubModel::source`]), so that a Hugging Face Trainer, Accelerate or DeepSpeed launch reads
//! without the model's `config.json` beside it.
//!
//! A name matches when its last path segment, lower-cased and without the usual suffixes (`-hf`,
//! `-chat`, `-instruct`, `-base`, `-v0.1`…, a release date `-2507`), equals a known one; a name that matches none leaves
//! the shape to the user (the error names the missing key and the `--from config.json` way).
//! A fine-tuned model keeps its base's shape (Vicuna v1.5 is Llama 2's): listed by name too.

use super::settings::{SettingOrigin, Settings, Slot};

/// One model's shape [channels, blocks, heads, tokens] and its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HubModel {
    /// The names it is known by (normalised: lower case, no suffix).
    pub names: &'static [&'static str],
    /// Transformer blocks.
    pub layers: u64,
    /// Model width [channels].
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads.
    pub kv_heads: u64,
    /// Width of one head [channels].
    pub head_dim: u64,
    /// MLP width [channels] (gated: each branch).
    pub ffn_hidden: u64,
    /// Gated MLP (SwiGLU).
    pub gated: bool,
    /// Vocabulary [tokens] (the config's `vocab_size`, padded as released).
    pub vocab: u64,
    /// Embedding and output head share weights.
    pub tied: bool,
    /// The `config.json` the numbers come from.
    pub source: &'static str,
}

const fn m(
    names: &'static [&'static str],
    (layers, hidden, heads, kv_heads, head_dim): (u64, u64, u64, u64, u64),
    (ffn_hidden, gated, vocab, tied): (u64, bool, u64, bool),
    source: &'static str,
) -> HubModel {
    HubModel { names, layers, hidden, heads, kv_heads, head_dim, ffn_hidden, gated, vocab, tied, source }
}

/// The known models.
pub const MODELS: &[HubModel] = &[
    m(
        &["llama-2-7b", "llama2-7b", "vicuna-7b-v1.5", "vicuna-7b"],
        (32, 4096, 32, 32, 128),
        (11008, true, 32000, false),
        "meta-llama/Llama-2-7b-hf config.json",
    ),
    m(
        &["llama-2-13b", "llama2-13b", "vicuna-13b-v1.5", "vicuna-13b"],
        (40, 5120, 40, 40, 128),
        (13824, true, 32000, false),
        "meta-llama/Llama-2-13b-hf config.json",
    ),
    m(
        &["llama-2-70b", "llama2-70b"],
        (80, 8192, 64, 8, 128),
        (28672, true, 32000, false),
        "meta-llama/Llama-2-70b-hf config.json",
    ),
    m(&["llama-7b"], (32, 4096, 32, 32, 128), (11008, true, 32000, false), "huggyllama/llama-7b config.json (LLaMA 1)"),
    m(
        &["llama-13b"],
        (40, 5120, 40, 40, 128),
        (13824, true, 32000, false),
        "huggyllama/llama-13b config.json (LLaMA 1)",
    ),
    m(
        &["llama-30b", "llama-33b"],
        (60, 6656, 52, 52, 128),
        (17920, true, 32000, false),
        "huggyllama/llama-30b config.json (LLaMA 1)",
    ),
    m(
        &["llama-65b"],
        (80, 8192, 64, 64, 128),
        (22016, true, 32000, false),
        "huggyllama/llama-65b config.json (LLaMA 1)",
    ),
    m(
        &["meta-llama-3-8b", "llama-3-8b", "llama-3.1-8b", "meta-llama-3.1-8b", "llama3-8b", "llama3.1-8b"],
        (32, 4096, 32, 8, 128),
        (14336, true, 128256, false),
        "meta-llama/Meta-Llama-3-8B config.json",
    ),
    m(
        &[
            "meta-llama-3-70b",
            "llama-3-70b",
            "llama-3.1-70b",
            "meta-llama-3.1-70b",
            "llama-3.3-70b",
            "llama3-70b",
            "llama3.1-70b",
        ],
        (80, 8192, 64, 8, 128),
        (28672, true, 128256, false),
        "meta-llama/Meta-Llama-3-70B config.json",
    ),
    m(
        &["llama-3.1-405b", "meta-llama-3.1-405b", "llama3.1-405b"],
        (126, 16384, 128, 8, 128),
        (53248, true, 128256, false),
        "meta-llama/Llama-3.1-405B config.json",
    ),
    m(&["llama-3.2-1b"], (16, 2048, 32, 8, 64), (8192, true, 128256, true), "meta-llama/Llama-3.2-1B config.json"),
    m(&["llama-3.2-3b"], (28, 3072, 24, 8, 128), (8192, true, 128256, true), "meta-llama/Llama-3.2-3B config.json"),
    m(&["mistral-7b"], (32, 4096, 32, 8, 128), (14336, true, 32000, false), "mistralai/Mistral-7B-v0.1 config.json"),
    m(&["qwen2.5-0.5b"], (24, 896, 14, 2, 64), (4864, true, 151936, true), "Qwen/Qwen2.5-0.5B config.json"),
    m(&["qwen2.5-1.5b"], (28, 1536, 12, 2, 128), (8960, true, 151936, true), "Qwen/Qwen2.5-1.5B config.json"),
    m(&["qwen2.5-3b"], (36, 2048, 16, 2, 128), (11008, true, 151936, true), "Qwen/Qwen2.5-3B config.json"),
    m(&["qwen2.5-7b", "qwen2-7b"], (28, 3584, 28, 4, 128), (18944, true, 152064, false), "Qwen/Qwen2.5-7B config.json"),
    m(&["qwen2.5-14b"], (48, 5120, 40, 8, 128), (13824, true, 152064, false), "Qwen/Qwen2.5-14B config.json"),
    m(&["qwen2.5-32b"], (64, 5120, 40, 8, 128), (27648, true, 152064, false), "Qwen/Qwen2.5-32B config.json"),
    m(
        &["qwen2.5-72b", "qwen2-72b"],
        (80, 8192, 64, 8, 128),
        (29568, true, 152064, false),
        "Qwen/Qwen2.5-72B config.json",
    ),
    m(&["qwen3-0.6b"], (28, 1024, 16, 8, 128), (3072, true, 151936, true), "Qwen/Qwen3-0.6B config.json"),
    m(&["qwen3-1.7b"], (28, 2048, 16, 8, 128), (6144, true, 151936, true), "Qwen/Qwen3-1.7B config.json"),
    m(&["qwen3-4b", "qwen3-4b-2507"], (36, 2560, 32, 8, 128), (9728, true, 151936, true), "Qwen/Qwen3-4B config.json"),
    m(&["qwen3-8b"], (36, 4096, 32, 8, 128), (12288, true, 151936, false), "Qwen/Qwen3-8B config.json"),
    m(&["qwen3-14b"], (40, 5120, 40, 8, 128), (17408, true, 151936, false), "Qwen/Qwen3-14B config.json"),
    m(&["qwen3-32b"], (64, 5120, 64, 8, 128), (25600, true, 151936, false), "Qwen/Qwen3-32B config.json"),
    m(
        &["qwen-7b"],
        (32, 4096, 32, 32, 128),
        (11008, true, 151936, false),
        "Qwen/Qwen-7B config.json (intermediate_size 22016 counts both branches)",
    ),
    m(
        &["chatglm2-6b", "chatglm3-6b"],
        (28, 4096, 32, 2, 128),
        (13696, true, 65024, false),
        "THUDM/chatglm2-6b config.json (multi_query_group_num 2, padded_vocab_size)",
    ),
    m(
        &["chatglm-6b"],
        (28, 4096, 32, 32, 128),
        (16384, false, 130528, true),
        "THUDM/chatglm-6b config.json (num_layers 28, hidden_size 4096, num_attention_heads 32, \
         inner_hidden_size 16384 GELU, vocab_size 130528; checked 2026-11-27 against copies of that config \
         quoted in public repositories); no tie_word_embeddings key, so transformers' default ties the \
         head to the embedding, consistent with the published 6.2B parameters",
    ),
    m(&["gemma-2b"], (18, 2048, 8, 1, 256), (16384, true, 256000, true), "google/gemma-2b config.json"),
    m(&["gemma-7b"], (28, 3072, 16, 16, 256), (24576, true, 256000, true), "google/gemma-7b config.json"),
    m(
        &["phi-3-mini-4k", "phi-3-mini-128k", "phi-3-mini"],
        (32, 3072, 32, 32, 96),
        (8192, true, 32064, false),
        "microsoft/Phi-3-mini-4k-instruct config.json",
    ),
];

/// The suffixes dropped from a name before matching (fine-tuned variants keep the base's shape).
const SUFFIXES: [&str; 10] = ["-hf", "-chat", "-instruct", "-it", "-base", "-v0.1", "-v0.3", "-v1", "-v0.2", "-sft"];

/// A name as matched: the last path segment, lower case, without the suffixes above.
pub fn normalise(name: &str) -> String {
    let last = name.trim().trim_end_matches('/').rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let mut n = last.as_str();
    loop {
        let before = n;
        for s in SUFFIXES {
            n = n.strip_suffix(s).unwrap_or(n);
        }
        // A release date (`-2507`, `-0724`).
        if let Some((head, tail)) = n.rsplit_once('-')
            && tail.len() == 4
            && tail.bytes().all(|b| b.is_ascii_digit())
        {
            n = head;
        }
        if n == before {
            break;
        }
    }
    n.to_string()
}

/// The known model named `name`, if any.
pub fn lookup(name: &str) -> Option<&'static HubModel> {
    let n = normalise(name);
    if n.is_empty() || n.contains('$') {
        return None;
    }
    MODELS.iter().find(|m| m.names.contains(&n.as_str()))
}

/// `s` with the shape of the model it names filled in where it states none (a launch that names
/// its model only), and the note saying so; `None` when it states a shape or names no known model.
pub fn filled(s: &Settings) -> Option<(Settings, String)> {
    if s.hidden.value.is_some() || s.layers.value.is_some() {
        return None;
    }
    let name = s.model_name.get()?;
    let m = lookup(name)?;
    let origin = s.model_name.origin.clone().unwrap_or(SettingOrigin::new("model", 0));
    let at = origin.with_key(format!("{} = {name}", origin.key));
    let mut out = s.clone();
    fn set<T: PartialEq>(slot: &mut Slot<T>, v: T, o: &SettingOrigin) {
        if slot.value.is_none() {
            slot.put(v, o);
        }
    }
    set(&mut out.layers, m.layers, &at);
    set(&mut out.hidden, m.hidden, &at);
    set(&mut out.heads, m.heads, &at);
    set(&mut out.kv_heads, m.kv_heads, &at);
    set(&mut out.head_dim, m.head_dim, &at);
    set(&mut out.ffn_hidden, m.ffn_hidden, &at);
    set(&mut out.gated_mlp, m.gated, &at);
    set(&mut out.vocab, m.vocab, &at);
    set(&mut out.tied_embeddings, m.tied, &at);
    let note = format!(
        "the model's shape is not in the file: {name} read as {} layers, hidden {}, {} heads ({} key/value), MLP {}, \
         vocabulary {} from {}",
        m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.vocab, m.source
    );
    Some((out, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_after_the_path_and_suffixes() {
        assert_eq!(normalise("meta-llama/Llama-2-7b-chat-hf"), "llama-2-7b");
        assert_eq!(lookup("meta-llama/Llama-2-7b-hf").unwrap().hidden, 4096);
        assert_eq!(lookup("~/model_weights/llama-13b").unwrap().layers, 40);
        assert_eq!(lookup("lmsys/vicuna-13b-v1.5").unwrap().ffn_hidden, 13824);
        assert_eq!(lookup("Qwen/Qwen3-4B-Instruct-2507").unwrap().vocab, 151936);
        assert_eq!(lookup("mistralai/Mistral-7B-v0.1").unwrap().kv_heads, 8);
        assert!(lookup("$MODEL").is_none() && lookup("my-own-model").is_none() && lookup("").is_none());
        // Every entry's head width times heads is its hidden, or its head width is stated apart.
        for m in MODELS {
            assert!(
                m.heads * m.head_dim == m.hidden || m.names[0].starts_with("gemma") || m.names[0].starts_with("qwen3")
            );
            assert!(m.kv_heads <= m.heads && m.heads.is_multiple_of(m.kv_heads), "{:?}", m.names);
        }
    }

    #[test]
    fn a_named_model_fills_only_what_the_file_leaves_out() {
        let mut s = Settings::default();
        s.model_name.put("meta-llama/Llama-2-7b-hf".into(), &SettingOrigin::new("--model_name_or_path", 3));
        s.vocab.put(32001, &SettingOrigin::new("--vocab-size", 4));
        let (f, note) = filled(&s).unwrap();
        assert_eq!((f.layers.copied(), f.hidden.copied(), f.vocab.copied()), (Some(32), Some(4096), Some(32001)));
        assert_eq!(f.layers.origin.unwrap().key, "--model_name_or_path = meta-llama/Llama-2-7b-hf");
        assert!(note.contains("meta-llama/Llama-2-7b-hf config.json"), "{note}");
        // A file that states its shape is left alone.
        let mut t = s.clone();
        t.hidden.put(1024, &SettingOrigin::new("--hidden-size", 5));
        assert!(filled(&t).is_none());
    }
}
