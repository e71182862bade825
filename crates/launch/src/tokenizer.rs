//! Vocabulary sizes of the tokenizers launch files name (Megatron's `--tokenizer-type`,
//! `--tokenizer-model` with a model name or path, `--vocab-file`), for when the file gives no
//! `--vocab-size`. The number is the one Megatron-LM pads (to a multiple of
//! `--make-vocab-size-divisible-by`·tp, done in `scenario.rs`): the tokenizer's own size
//! (`len(tokenizer)` for `HuggingFaceTokenizer`), where the model's `config.json` may state a
//! larger, already padded `vocab_size`; each entry says which number it is and where it is from.
//! A name matching no entry is `None`: the caller asks for `--vocab-size`, never guesses.

/// What a vocabulary size counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The tokenizer's own tokens (`len(tokenizer)`: regular and special tokens).
    Tokenizer,
    /// The model's `config.json` `vocab_size`, where the tokenizer's count equals it or the
    /// model family only publishes that number.
    Config,
}

/// A known tokenizer: its vocabulary [tokens], what the number counts and its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    /// Vocabulary size [tokens], before Megatron's padding.
    pub vocab: u64,
    /// What the number counts.
    pub counted: Counted,
    /// The tokenizer in words and where the number is from.
    pub source: &'static str,
}

/// Name fragments (lower case, `_` and spaces as `-`) and their tokenizers, most specific first.
const TABLE: &[(&[&str], u64, Counted, &str)] = &[
    // Megatron's own tokenizer types.
    (
        &["gpt2bpetokenizer", "gpt2-vocab", "gpt2"],
        50_257,
        Counted::Tokenizer,
        "GPT-2 BPE (openai-community/gpt2: 50,257 tokens, config.json vocab_size 50257)",
    ),
    (
        &["bertwordpiecelowercase", "bert-large-uncased", "bert-base-uncased"],
        30_522,
        Counted::Tokenizer,
        "BERT WordPiece, lower case (bert-large-uncased vocab.txt: 30,522 tokens)",
    ),
    (
        &["bertwordpiececase", "bert-large-cased", "bert-base-cased"],
        28_996,
        Counted::Tokenizer,
        "BERT WordPiece, cased (bert-large-cased vocab.txt: 28,996 tokens)",
    ),
    // Llama.
    (
        &["llama-3", "llama3"],
        128_256,
        Counted::Tokenizer,
        "Llama 3 tokenizer (meta-llama/Meta-Llama-3-8B: 128,000 BPE + 256 special tokens; config.json vocab_size 128256)",
    ),
    (
        &["llama-4", "llama4"],
        202_048,
        Counted::Config,
        "Llama 4 tokenizer (meta-llama/Llama-4-Scout-17B-16E config.json text_config vocab_size 202048)",
    ),
    (
        &["llama-2", "llama2", "llamatokenizer", "llama-7b", "llama-13b", "llama-30b", "llama-65b", "vicuna"],
        32_000,
        Counted::Tokenizer,
        "Llama / Llama 2 SentencePiece tokenizer (meta-llama/Llama-2-7b-hf: config.json vocab_size 32000)",
    ),
    // Mistral.
    (
        &["mistral-nemo", "nemo-12b", "tekken"],
        131_072,
        Counted::Config,
        "Mistral-NeMo Tekken tokenizer (mistralai/Mistral-Nemo-Base-2407 config.json vocab_size 131072)",
    ),
    (
        &["mistral-7b-v0.3", "mistral-7b-instruct-v0.3"],
        32_768,
        Counted::Tokenizer,
        "Mistral v3 tokenizer (mistralai/Mistral-7B-v0.3 config.json vocab_size 32768)",
    ),
    (
        &["mixtral", "mistral"],
        32_000,
        Counted::Tokenizer,
        "Mistral / Mixtral tokenizer (mistralai/Mixtral-8x7B-v0.1, Mixtral-8x22B-v0.1, Mistral-7B-v0.1 config.json vocab_size 32000)",
    ),
    // Qwen: the tokenizer counts 151,643 BPE tokens plus special tokens; config.json pads.
    (
        &["qwen3"],
        151_669,
        Counted::Tokenizer,
        "Qwen3 tokenizer (Qwen/Qwen3-8B: 151,643 BPE + 26 special tokens = len 151,669; config.json vocab_size 151936)",
    ),
    (
        &["qwen2.5", "qwen2-5", "qwen-2.5"],
        151_665,
        Counted::Tokenizer,
        "Qwen2.5 tokenizer (Qwen/Qwen2.5-7B: 151,643 BPE + 22 special tokens = len 151,665; config.json vocab_size 152064, 151936 for the small models)",
    ),
    (
        &["qwen2", "qwen1.5"],
        151_646,
        Counted::Tokenizer,
        "Qwen2 / Qwen1.5 tokenizer (Qwen/Qwen2-7B: 151,643 BPE + 3 special tokens = len 151,646; config.json vocab_size 152064)",
    ),
    // DeepSeek: config.json's vocab_size (the tokenizer's own count is not published).
    (
        &["deepseek-v3", "deepseek-r1", "deepseekv3", "moonlight", "kimi-k2"],
        129_280,
        Counted::Config,
        "DeepSeek-V3 tokenizer (deepseek-ai/DeepSeek-V3 config.json vocab_size 129280)",
    ),
    (
        &["deepseek-v2", "deepseekv2", "deepseek-coder-v2", "deepseek-moe", "deepseek-llm"],
        102_400,
        Counted::Config,
        "DeepSeek-V2 tokenizer (deepseek-ai/DeepSeek-V2 config.json vocab_size 102400)",
    ),
    // Others.
    (
        &["gpt-neox", "neox", "pythia"],
        50_277,
        Counted::Tokenizer,
        "GPT-NeoX-20B tokenizer (EleutherAI/gpt-neox-20b tokenizer.json: 50,277 tokens; config.json vocab_size 50432 padded)",
    ),
    (&["falcon"], 65_024, Counted::Config, "Falcon tokenizer (tiiuae/falcon-7b config.json vocab_size 65024)"),
    (&["bloom"], 250_880, Counted::Config, "BLOOM tokenizer (bigscience/bloom config.json vocab_size 250880)"),
    (
        &["gemma-3", "gemma3"],
        262_208,
        Counted::Config,
        "Gemma 3 tokenizer (google/gemma-3-27b-pt config.json text_config vocab_size 262208)",
    ),
    (&["gemma"], 256_000, Counted::Config, "Gemma / Gemma 2 tokenizer (google/gemma-7b config.json vocab_size 256000)"),
    (
        &["nemotron"],
        256_000,
        Counted::Config,
        "Nemotron-4 tokenizer (nvidia/Nemotron-4-340B-Base: 256,000 SentencePiece tokens)",
    ),
    (
        &["chatglm2", "chatglm3"],
        65_024,
        Counted::Config,
        "ChatGLM2/3 tokenizer (THUDM/chatglm2-6b config.json padded_vocab_size 65024)",
    ),
    (
        &["chatglm-6b"],
        130_528,
        Counted::Config,
        "ChatGLM-6B (first generation) tokenizer (THUDM/chatglm-6b config.json vocab_size 130528)",
    ),
    (
        &["baichuan2"],
        125_696,
        Counted::Config,
        "Baichuan 2 tokenizer (baichuan-inc/Baichuan2-7B-Base config.json vocab_size 125696)",
    ),
    (
        &["internlm2"],
        92_544,
        Counted::Config,
        "InternLM2 tokenizer (internlm/internlm2-7b config.json vocab_size 92544)",
    ),
    (
        &["phi-3", "phi3"],
        32_064,
        Counted::Config,
        "Phi-3 tokenizer (microsoft/Phi-3-mini-4k-instruct config.json vocab_size 32064)",
    ),
];

/// The tokenizer a Megatron `--tokenizer-type`, a model name or path (`--tokenizer-model`,
/// `--model_name_or_path`) or a vocabulary file (`--vocab-file`) names, if fmperf knows it.
pub fn known(name: &str) -> Option<Known> {
    let n = name.to_ascii_lowercase().replace(['_', ' '], "-");
    let n = n.trim_end_matches('/');
    // Megatron's tiktoken tokenizer (`--tokenizer-type TikTokenizer --tiktoken-pattern v2`).
    if n == "tiktokenizer" {
        return Some(Known {
            vocab: 131_072,
            counted: Counted::Tokenizer,
            source: "Megatron's TikTokenizer (--tiktoken-pattern v2, the Mistral-NeMo/Tekken vocabulary: 131,072 tokens)",
        });
    }
    TABLE.iter().find(|(keys, ..)| keys.iter().any(|k| n.contains(k))).map(|(_, vocab, counted, source)| Known {
        vocab: *vocab,
        counted: *counted,
        source,
    })
}

/// Megatron tokenizer types that name no vocabulary by themselves (the model file or
/// `--vocab-size` gives it).
pub fn needs_model(tokenizer_type: &str) -> bool {
    matches!(
        tokenizer_type.to_ascii_lowercase().as_str(),
        "huggingfacetokenizer"
            | "hftokenizer"
            | "sentencepiecetokenizer"
            | "gptsentencepiecetokenizer"
            | "multimodaltokenizer"
            | "nulltokenizer"
            | "nullmultimodaltokenizer"
            | "tiktokenizer"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        let v = |n: &str| known(n).map(|k| k.vocab);
        assert_eq!(v("meta-llama/Meta-Llama-3.1-70B"), Some(128_256));
        assert_eq!(v("/models/Llama-2-7b-hf/tokenizer.model"), Some(32_000));
        assert_eq!(v("GPT2BPETokenizer"), Some(50_257));
        assert_eq!(v("/data/gpt2-vocab.json"), Some(50_257));
        assert_eq!(v("Qwen/Qwen2.5-72B"), Some(151_665));
        assert_eq!(v("deepseek-ai/DeepSeek-V3"), Some(129_280));
        assert_eq!(v("mistralai/Mistral-Nemo-Base-2407"), Some(131_072));
        assert_eq!(v("BertWordPieceLowerCase"), Some(30_522));
        assert_eq!(v("TikTokenizer"), Some(131_072));
        // Families whose generations differ are told apart, not matched by the family's name.
        assert_eq!(v("THUDM/chatglm2-6b"), Some(65_024));
        assert_eq!(v("THUDM/chatglm-6b"), Some(130_528));
        assert_eq!(v("THUDM/glm-4-9b"), None);
        assert_eq!(v("google/gemma-2-9b"), Some(256_000));
        assert_eq!(v("google/gemma-3-27b-pt"), Some(262_208));
        assert_eq!(v("/data/tokenizer.model"), None);
        assert_eq!(v("HuggingFaceTokenizer"), None);
        assert!(needs_model("HuggingFaceTokenizer") && !needs_model("GPT2BPETokenizer"));
    }
}
