//! How a run's kernels were compiled, read from its words by meaning: fused element-wise kernels
//! (the default) or eager PyTorch ([`Fusion`]); and which attention kernel its stack calls
//! ([`AttentionKernel`], [`read_attention_kernel`]).
//!
//! Fusion:
//! Rules, in order:
//! 1. the words affirm compilation or fusion (`torch.compile`, `compiled`, `inductor`, `fused`,
//!    `Transformer Engine`/`TE`, `Megatron`, `NeMo`, `XLA`, `JAX`, `MaxText`, `Apex`, `Liger`):
//!    fused, even when `eager` also appears (a comparison named in the notes);
//! 2. they say `eager`, or name compilation or fusion only negated (`without torch.compile`,
//!    `no compile`, `compile off`, `unfused`): eager, noted;
//! 3. otherwise fused, the usual setting of the frameworks the measured runs come from
//!    (Megatron-LM, NeMo, MaxText, Composer with fused kernels), unnoted.

use super::words::Words;
use crate::extended::{AttentionKernel, Fusion};

/// Words naming a kernel of the part's own generation (cuDNN fused attention, FlashAttention-3).
const NATIVE_KERNEL_WORDS: [&str; 8] = [
    "cudnn",
    "fused attention",
    "flashattention 3",
    "flash attention 3",
    "flash attn 3",
    "fa3",
    "flashattention3",
    "transformer engine attention",
];

/// Words naming a FlashAttention-2-class kernel.
const FA2_KERNEL_WORDS: [&str; 9] = [
    "sdpa",
    "scaled dot product attention",
    "flashattention 2",
    "flash attention 2",
    "flash attn 2",
    "flash attn2",
    "flashattention2",
    "fa2",
    "triton flash",
];

/// Frameworks that call a FlashAttention-2-class kernel by default: torchtitan and plain PyTorch
/// FSDP call `F.scaled_dot_product_attention`, whose flash backend is FlashAttention-2 (its
/// cuDNN backend has been opt-in on H100 since PyTorch 2.5.1, pytorch/pytorch#138522, until
/// wheels bundling cuDNN ≥ 9.15.1); llm-foundry / Composer (MosaicML) call the `flash-attn`
/// package (v2) or Triton flash attention; Hugging Face models use SDPA or `flash_attention_2`.
/// ("Mosaic" alone is left out: it is also the name of JAX Pallas's TPU/GPU compiler.)
const FA2_FRAMEWORK_WORDS: [&str; 8] =
    ["torchtitan", "llm foundry", "llmfoundry", "composer", "mosaicml", "hugging face", "huggingface", "torchtune"];

/// The attention kernel of a run described by `words` (its framework, tags, notes, parallel words
/// and source), with a note saying which words decided it. In order: a kernel named
/// (cuDNN / fused attention / FlashAttention-3 → native; SDPA / FlashAttention-2 / Triton flash
/// → fa2, native first when both are named); else a framework named (FA2-class frameworks
/// first: a PyTorch stack that mentions Megatron for comparison still runs SDPA); else native,
/// unnoted: the kernel of the frameworks most measured runs come from — Megatron-LM, NeMo and
/// Megatron-Bridge call Transformer Engine's `DotProductAttention`, which prefers cuDNN fused
/// attention on Hopper; MaxText (JAX/XLA) uses Pallas flash/splash kernels on TPUs.
pub fn read_attention_kernel(words: &Words) -> (AttentionKernel, Option<String>) {
    let named = |list: &[&str]| list.iter().find(|w| words.affirms(w)).map(|w| w.to_string());
    let note =
        |k: AttentionKernel, w: String, what: &str| Some(format!("attention kernel {k}: the words name {what} `{w}`"));
    if let Some(w) = named(&NATIVE_KERNEL_WORDS) {
        return (AttentionKernel::Native, note(AttentionKernel::Native, w, "the kernel"));
    }
    if let Some(w) = named(&FA2_KERNEL_WORDS) {
        return (AttentionKernel::Fa2, note(AttentionKernel::Fa2, w, "the kernel"));
    }
    if let Some(w) = named(&FA2_FRAMEWORK_WORDS) {
        return (
            AttentionKernel::Fa2,
            note(
                AttentionKernel::Fa2,
                w,
                "a framework whose attention is FlashAttention-2 class (PyTorch SDPA / flash-attn 2):",
            ),
        );
    }
    (AttentionKernel::Native, None)
}

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

    fn kernel(text: &str) -> AttentionKernel {
        read_attention_kernel(&Words::new(text)).0
    }

    #[test]
    fn attention_kernel_by_meaning() {
        // Frameworks.
        assert_eq!(kernel("PyTorch torchtitan benchmark; FSDP eager"), AttentionKernel::Fa2);
        assert_eq!(kernel("mosaicml/llm-foundry scripts/train/benchmarking"), AttentionKernel::Fa2);
        assert_eq!(kernel("Composer FSDP, flash"), AttentionKernel::Fa2);
        assert_eq!(kernel("Megatron-LM with TE"), AttentionKernel::Native);
        assert_eq!(kernel("NVIDIA NeMo long-sequence performance"), AttentionKernel::Native);
        assert_eq!(kernel("MaxText v5p README"), AttentionKernel::Native);
        // Kernels named win over frameworks.
        assert_eq!(kernel("torchtitan, SDPA cuDNN backend"), AttentionKernel::Native);
        assert_eq!(kernel("Megatron-LM --use-flash-attn (FlashAttention-2)"), AttentionKernel::Fa2);
        assert_eq!(kernel("flash_attn 3 on H100"), AttentionKernel::Native);
        assert_eq!(kernel("F.scaled_dot_product_attention"), AttentionKernel::Fa2);
        // Negated: not that kernel.
        assert_eq!(kernel("without cuDNN attention; torchtitan"), AttentionKernel::Fa2);
        // Nothing said: native.
        assert_eq!(kernel("FSDP (1D), 128 GPUs"), AttentionKernel::Native);
        assert_eq!(kernel(""), AttentionKernel::Native);
        let (_, why) = read_attention_kernel(&Words::new("torchtitan"));
        assert!(why.unwrap().contains("torchtitan"));
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
