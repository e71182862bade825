//! How a run's kernels were compiled, read from its words by meaning: fused element-wise kernels
//! (the default) or eager PyTorch ([`Fusion`]).
//!
//! Rules, in order:
//! 1. the words affirm compilation or fusion (`torch.compile`, `compiled`, `inductor`, `fused`,
//!    `Transformer Engine`/`TE`, `Megatron`, `NeMo`, `XLA`, `JAX`, `MaxText`, `Apex`, `Liger`):
//!    fused, even when `eager` also appears (a comparison named in the notes);
//! 2. they say `eager`, or name compilation or fusion only negated (`without torch.compile`,
//!    `no compile`, `compile off`, `unfused`): eager, noted;
//! 3. otherwise fused, the usual setting of the frameworks the measured runs come from
//!    (Megatron-LM, NeMo, MaxText, Composer with fused kernels), unnoted.

use super::words::Words;
use crate::extended::Fusion;

/// Words that state fused kernels when affirmed.
const FUSED_WORDS: [&str; 15] = [
    "compile",
    "compiled",
    "torch compile",
    "inductor",
    "fused",
    "transformer engine",
    "te",
    "megatron",
    "nemo",
    "xla",
    "jax",
    "maxtext",
    "apex",
    "liger",
    "cuda graphs",
];

/// The fusion of a run described by `words` (its notes, framework and other parallel words),
/// with a note when the reading is not the default.
pub fn read_fusion(words: &Words) -> (Fusion, Option<String>) {
    if FUSED_WORDS.iter().any(|w| words.affirms(w)) {
        return (Fusion::Fused, None);
    }
    // Compilation or fusion named but not affirmed: negated (`without torch.compile`, `not fused`).
    // (`compiler` alone, as in "compiler choices", says nothing about eager kernels.)
    let negated = words.any(&["compile", "compiled", "compilation", "fused", "unfused"]);
    if words.affirms("eager") || negated {
        let why = if words.affirms("eager") { "the words say eager" } else { "compilation or fusion is negated" };
        return (Fusion::Eager, Some(format!("{why}: eager PyTorch kernels (unfused element-wise traffic)")));
    }
    (Fusion::Fused, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Fusion {
        read_fusion(&Words::new(text)).0
    }

    #[test]
    fn eager_and_compiled_by_meaning() {
        assert_eq!(read("FSDP eager"), Fusion::Eager);
        assert_eq!(read("FSDP eager, 128 GPUs"), Fusion::Eager);
        assert_eq!(read("FSDP + torch.compile"), Fusion::Fused);
        assert_eq!(read("FSDP + compile + Float8"), Fusion::Fused);
        assert_eq!(read("without torch.compile"), Fusion::Eager);
        assert_eq!(read("no compile"), Fusion::Eager);
        assert_eq!(read("Compiled: off"), Fusion::Eager);
        assert_eq!(read("Megatron-LM with TE"), Fusion::Fused);
        assert_eq!(read("compiled (vs eager baseline)"), Fusion::Fused);
        assert_eq!(read("not fused"), Fusion::Eager);
        assert_eq!(read("unfused kernels"), Fusion::Eager);
        // Nothing said: fused, the frameworks' usual setting.
        assert_eq!(read("FSDP (1D)"), Fusion::Fused);
        assert_eq!(read("2-slice number is 'quirkily higher' (compiler choices)"), Fusion::Fused);
        assert_eq!(read(""), Fusion::Fused);
    }
}
