//! DeepSpeed JSON (`ds_config.json`): the batch (`train_batch_size`,
//! `train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`, `"auto"` left to the launch),
//! the ZeRO stage, the precision and activation checkpointing. Read together with the launch that
//! names it (see [`super::parse_files`]).

use super::Launch;
use fmperf_core::Error;

/// Whether `text` looks like a DeepSpeed JSON rather than a Hugging Face config: it names one of
/// DeepSpeed's own top-level keys.
pub fn looks_like(text: &str) -> bool {
    [
        "\"zero_optimization\"",
        "\"train_micro_batch_size_per_gpu\"",
        "\"train_batch_size\"",
        "\"gradient_accumulation_steps\"",
    ]
    .iter()
    .any(|k| text.contains(k))
}

/// Reads a DeepSpeed JSON.
pub fn parse(_text: &str) -> Result<Launch, Error> {
    Err(Error::Parse { message: "DeepSpeed JSON: reader under construction".into() })
}
