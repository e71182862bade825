//! Sliding-window (local, banded) attention as a model property: which blocks attend through a
//! window of how many keys. Read by the model format ([`crate::catalog`]) and priced by extended
//! mode ([`crate::extended::ops`]).

/// Local (banded) attention: the windowed blocks' queries attend to the last `tokens` keys only,
/// and one block in every `full_every` attends to the whole causal prefix, or none when
/// `full_every` is `None` (Megatron-Core's `window_size` and `window_attn_skip_freq`, which unset
/// windows every block: `megatron/core/transformer/utils.py`, `is_layer_window_attention`).
/// gpt-oss: a 128-token window in every other block (`full_every` 2; OpenAI's gpt-oss model card,
/// "alternating banded-window (128) and dense attention"; Megatron-Bridge's `GPTOSSProvider`:
/// `window_size = (128, 0)`, `window_attn_skip_freq = 2`); Gemma 3: 5 local blocks to 1 global
/// (`full_every` 6); Mistral 7B v0.1: a 4,096-token window in every block (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlidingWindow {
    /// Keys each query of a windowed block attends to [tokens].
    pub tokens: u64,
    /// One block in every `full_every` attends to the whole prefix (1: none windowed; `None`:
    /// every block windowed).
    pub full_every: Option<u64>,
}

impl SlidingWindow {
    /// Share of the blocks that attend through the window `1 − 1/full_every` (1 when every block
    /// is windowed) [0–1].
    pub fn windowed_share(&self) -> f64 {
        match self.full_every {
            Some(n) => 1.0 - 1.0 / n.max(1) as f64,
            None => 1.0,
        }
    }

    /// Keys a query of a windowed block attends to on average over a causal sequence of `seq`
    /// tokens: `w − w²/(2s)` for a window `w < s` (the first `w` queries see fewer), `s/2` (the
    /// causal average) when the window covers the sequence.
    pub fn mean_keys(&self, seq: f64) -> f64 {
        let w = self.tokens as f64;
        if w < seq { w - w * w / (2.0 * seq) } else { seq / 2.0 }
    }
}
