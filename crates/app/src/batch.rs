//! The global batch a model was trained with, for the page's "model's own batch" default (an
//! empty batch field). The model catalog has no batch field yet, so the published figures are
//! listed here with their sources; when the catalog gains one, it should move there.

/// `(model id prefix or id, global batch [sequences], source)`.
const OWN_BATCHES: &[(&str, u64, &str)] = &[
    (
        "llama3-",
        2048,
        "Dubey et al. 2024 (The Llama 3 Herd of Models) §3.4.1: final batch 16M tokens at 8,192 context = 2,048 sequences (the schedule is stated for 405B; the paper gives none for 8B/70B)",
    ),
    ("llama2-", 1024, "Touvron et al. 2023 (Llama 2) §2.2: global batch 4M tokens at 4,096 context = 1,024 sequences"),
    ("gpt2-xl", 512, "Radford et al. 2019 (GPT-2) §2.3: batch size 512"),
    ("gpt3_1T", 4096, "Subramanian et al. 2024 (the reference study): global batch 4,096"),
    ("vit_era5", 4096, "Subramanian et al. 2024 (the reference study): global batch 4,096"),
    ("gpt3", 1536, "Brown et al. 2020 (GPT-3) Table 2.1: 175B batch 3.2M tokens at 2,048 context ≈ 1,536 sequences"),
    (
        "deepseek-v3",
        15360,
        "DeepSeek-AI 2024 (DeepSeek-V3 Technical Report) §4.2: batch size raised from 3,072 to 15,360 over the first 469B tokens, then 15,360 (4K context)",
    ),
    (
        "deepseek-v2",
        9216,
        "DeepSeek-AI 2024 (DeepSeek-V2) §3.2.2: batch size raised from 2,304 to 9,216 over the first 225B tokens, then 9,216 (4K context)",
    ),
    (
        "kimi-k2",
        16384,
        "Kimi Team 2025 (Kimi K2: Open Agentic Intelligence) §2.5: global batch held at 67M tokens with a 4,096-token window = 16,384 sequences (2^26 tokens)",
    ),
    ("megatron-gpt-1.7b", 512, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-3.6b", 512, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-7.5b", 512, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-18.4b", 1024, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-39.1b", 1536, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-76.1b", 1792, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-145.6b", 2304, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-310.1b", 2160, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-529.6b", 2520, "Narayanan et al. 2021 Table 1"),
    ("megatron-gpt-1008b", 3072, "Narayanan et al. 2021 Table 1"),
];

/// The model's own global batch [sequences] and where the figure comes from (`None`: unknown; the
/// user must type one).
pub fn own_batch(model_id: &str) -> Option<(u64, &'static str)> {
    let id = model_id.trim();
    OWN_BATCHES
        .iter()
        .find(|(k, _, _)| if k.ends_with('-') { id.starts_with(k) } else { id == *k })
        .map(|(_, b, s)| (*b, *s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_models_have_their_published_batch() {
        assert_eq!(own_batch("llama3-70b").map(|b| b.0), Some(2048));
        assert_eq!(own_batch("llama2-7b").map(|b| b.0), Some(1024));
        assert_eq!(own_batch("gpt3_1T").map(|b| b.0), Some(4096));
        assert_eq!(own_batch("gpt3").map(|b| b.0), Some(1536));
        assert_eq!(own_batch("my-own-model"), None);
        // Mixture-of-Experts models whose papers give the batch; DeepSeek-V2-Lite is not V2.
        assert_eq!(own_batch("deepseek-v3").map(|b| b.0), Some(15360));
        assert_eq!(own_batch("deepseek-v2").map(|b| b.0), Some(9216));
        assert_eq!(own_batch("deepseek-v2-lite"), None);
        assert_eq!(own_batch("mixtral-8x7b"), None);
        // The hint promises the model's own batch only where there is one.
        assert!(batch_help("deepseek-v3").contains("empty: the model's own, 15,360 (DeepSeek-AI 2024"));
        assert!(batch_help("mixtral-8x7b").contains("required"));
        assert!(!batch_help("mixtral-8x7b").contains("model's own"));
        // Every id listed exactly (not a prefix) is in the catalog.
        let ids: Vec<&str> = fmperf_core::catalog::models().iter().map(|m| m.id.as_str()).collect();
        for (k, _, _) in OWN_BATCHES {
            assert!(ids.iter().any(|id| if k.ends_with('-') { id.starts_with(k) } else { id == k }), "{k}");
        }
    }
}

/// The help under the global-batch field (empty or a typed number): the model's own batch and
/// its paper when it has one, else that a batch is needed (no published figure to fall back on).
pub fn batch_help(model_id: &str) -> String {
    match own_batch(model_id) {
        Some((b, source)) => {
            let paper = source.split(':').next().unwrap_or(source);
            format!("empty: the model's own, {} ({paper})", crate::fmt::count(b))
        }
        None => "e.g. 2048 or 4k (= 4,000); required: no published batch for this model".to_string(),
    }
}
