//! MaxText configurations: `base.yml`-style YAML, model files (`configs/models/*.yml`) and command
//! lines of `key=value` overrides (`python3 -m MaxText.train MaxText/configs/base.yml key=value …`).

use super::Launch;
use fmperf_core::Error;

/// Whether `text` looks like a MaxText configuration or command line.
pub fn looks_like(text: &str) -> bool {
    text.contains("MaxText/train.py")
        || text.contains("MaxText.train")
        || text.contains("maxtext.train")
        || text.lines().any(|l| {
            let t = l.trim_start();
            t.starts_with("ici_fsdp_parallelism")
                || t.starts_with("base_emb_dim")
                || t.starts_with("per_device_batch_size")
        })
}

/// Reads a MaxText configuration with the positional parameters of its script.
pub fn parse(_text: &str, _args: &[String]) -> Result<Launch, Error> {
    Err(Error::Parse { message: "MaxText: reader under construction".into() })
}
