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
        // Every id listed exactly (not a prefix) is in the catalog.
        let ids: Vec<&str> = fmperf_core::catalog::models().iter().map(|m| m.id.as_str()).collect();
        for (k, _, _) in OWN_BATCHES {
            assert!(ids.iter().any(|id| if k.ends_with('-') { id.starts_with(k) } else { id == k }), "{k}");
        }
    }
}
