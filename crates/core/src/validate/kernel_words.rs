//! How a run's kernels were compiled, read from its words by meaning: fused element-wise kernels
//! (the default) or eager PyTorch ([`Fusion`]); which attention kernel its stack calls
//! ([`AttentionKernel`], [`read_attention_kernel`]); its FP8 recipe ([`read_fp8_recipe`]) and
//! whether its loss was compiled ([`read_compiled_loss`]).
//!
//! Fusion:
//! Rules, in order:
//! 1. the words affirm compilation or fusion (`torch.compile`, `compiled`, `inductor`, `fused`,
//!    `Transformer Engine`/`TE`, `Megatron`, `NeMo`, `XLA`, `JAX`, `MaxText`, `Apex`, `Liger`):
//!    fused, even when `eager` also appears (a comparison named in the notes);
//! 2. they say `eager`, or name compilation or fusion only negated (`without torch.compile`,
//!    `no compile`, `compile off`, `unfused`): eager, noted;
//! 3. they name a PyTorch-native training loop ([`PYTORCH_NATIVE_LOOPS`]: torchtitan, torchtune,
//!    litgpt, Hugging Face's Trainer), which compiles only when asked (`compile` is off by
//!    default in each): eager, noted;
//! 4. otherwise fused, the usual setting of the frameworks the measured runs come from
//!    (Megatron-LM, NeMo, MaxText, Composer with fused kernels), unnoted.

use super::loss_words::CHUNKED_LOSS_WORDS;
use super::words::Words;
use crate::extended::{AttentionKernel, Fp8Recipe, Fusion};
use crate::vocab::Note;

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

/// Words stating attention without a fused kernel: Megatron's `--attention-backend unfused` /
/// `local` (its own `DotProductAttention`), Hugging Face's `attn_implementation: eager`.
const UNFUSED_KERNEL_WORDS: [&str; 6] = [
    "attention backend unfused",
    "attention backend local",
    "unfused attention",
    "attn implementation eager",
    "eager attention",
    "unfused dot product attention",
];

/// Names of flash attention that, said only negated (`without flash attention`,
/// `use_flash_attn: false`), state unfused attention.
const FLASH_WORDS: [&str; 5] = ["flash attention", "flashattention", "flash attn", "use flash attn", "flash attn 2"];

/// Words naming a FlashAttention-2-class kernel (Megatron's `--attention-backend flash` calls
/// Transformer Engine's `FlashAttention`, the `flash-attn` package).
const FA2_KERNEL_WORDS: [&str; 10] = [
    "attention backend flash",
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
/// attention on Hopper; MaxText (JAX/XLA) uses Pallas flash/splash kernels on TPUs. Before all
/// of these: attention stated unfused ([`UNFUSED_KERNEL_WORDS`]), or flash attention named only
/// negated, is unfused.
pub fn read_attention_kernel(words: &Words) -> (AttentionKernel, Option<Note>) {
    let named = |list: &[&str]| list.iter().find(|w| words.affirms(w)).map(|w| w.to_string());
    let note = |k: AttentionKernel, w: String, what: &str| {
        Some(Note::reading(format!("attention kernel {k}: the words name {what} `{w}`")))
    };
    if let Some(w) = named(&UNFUSED_KERNEL_WORDS) {
        return (AttentionKernel::Unfused, note(AttentionKernel::Unfused, w, "the kernel"));
    }
    if let Some(w) = FLASH_WORDS.iter().find(|w| words.has(w))
        && named(&FLASH_WORDS).is_none()
    {
        return (AttentionKernel::Unfused, note(AttentionKernel::Unfused, w.to_string(), "only negated"));
    }
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

/// The attention kernel of a run whose row may state `flash_attention` (`parallel.flash_attention`
/// and its aliases, [`super::keys`]) besides its words: `false` is unfused attention
/// ([`AttentionKernel::Unfused`]); `true` a flash kernel, the one the words name
/// ([`read_attention_kernel`]); absent, the words alone. The field and the words contradicting
/// each other — `false` with a flash kernel named, `true` with unfused attention stated — is an
/// error naming the field and the words (a framework's default kernel is no statement).
pub fn read_stated_attention_kernel(
    flash_attention: Option<bool>,
    words: &Words,
) -> Result<(AttentionKernel, Option<Note>), crate::Error> {
    let field = "parallel.flash_attention";
    let (kernel, note) = read_attention_kernel(words);
    let named_flash = NATIVE_KERNEL_WORDS.iter().chain(FA2_KERNEL_WORDS.iter()).find(|w| words.affirms(w));
    let contradiction = |value: bool, said: &str| {
        crate::Error::invalid(field, value, format!("contradicts the run's words, which say {said}"))
    };
    match flash_attention {
        None => Ok((kernel, note)),
        Some(false) => match named_flash {
            Some(w) => Err(contradiction(false, &format!("`{w}`"))),
            None => Ok((
                AttentionKernel::Unfused,
                Some(
                    Note::reading(
                        "attention kernel unfused: flash_attention is false (the score matrix computed and kept)",
                    )
                    .about(field),
                ),
            )),
        },
        Some(true) if kernel == AttentionKernel::Unfused => Err(contradiction(true, "unfused attention")),
        Some(true) => Ok((kernel, note)),
    }
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

/// Training loops written in plain PyTorch: eager unless compiled, `.grad` freed by `zero_grad`
/// between steps, no gradient buffer of their own.
pub const PYTORCH_NATIVE_LOOPS: [&str; 6] =
    ["torchtitan", "torchtune", "litgpt", "hugging face", "hf trainer", "transformers trainer"];

/// The fusion of a run whose own framework field says `framework` and whose words all together
/// (framework, other parallel words, notes) are `all`: the framework field decides when it says
/// compiled or eager itself (rules 1 and 2), as a note may name another run's set-up ("the
/// compiled run of the same table: 40 GB"); otherwise all the words are read.
pub fn read_run_fusion(framework: &Words, all: &Words) -> (Fusion, Option<Note>) {
    if FUSED_WORDS.iter().any(|w| framework.affirms(w)) || says_eager(framework) {
        read_fusion(framework)
    } else {
        read_fusion(all)
    }
}

/// Rule 2: the words say `eager`, or name compilation or fusion only negated (`without
/// torch.compile`, `not fused`). (`compiler` alone, as in "compiler choices", says nothing about
/// eager kernels.)
fn says_eager(words: &Words) -> bool {
    words.affirms("eager") || words.any(&["compile", "compiled", "compilation", "fused", "unfused"])
}

/// The fusion of a run described by `words` (its notes, framework and other parallel words),
/// with a note when the reading is not the default.
pub fn read_fusion(words: &Words) -> (Fusion, Option<Note>) {
    if FUSED_WORDS.iter().any(|w| words.affirms(w)) {
        return (Fusion::Fused, None);
    }
    if says_eager(words) {
        let why = if words.affirms("eager") { "the words say eager" } else { "compilation or fusion is negated" };
        return (
            Fusion::Eager,
            Some(Note::reading(format!("{why}: eager PyTorch kernels (unfused element-wise traffic)"))),
        );
    }
    if let Some(f) = PYTORCH_NATIVE_LOOPS.iter().find(|f| words.has(f)) {
        return (
            Fusion::Eager,
            Some(Note::assumption(format!(
                "`{f}` compiles only when asked and no compilation is named: eager kernels"
            ))),
        );
    }
    (Fusion::Fused, None)
}

/// Words stating that FSDP gathers torchao's float8 weights in FP8 (torchtitan's and torchao's
/// `enable_fsdp_float8_all_gather`, lightning-thunder's `--use_torchao_fp8_allgather`, torchao's
/// tables' "float8 tensorwise (f8 all-gather)"). A 16-bit all-gather ("rowwise with bfloat16
/// all-gather") names none of them.
const FP8_ALL_GATHER_WORDS: [&str; 6] =
    ["float8 all gather", "fp8 all gather", "f8 all gather", "float8 allgather", "fp8 allgather", "f8 allgather"];

/// Words stating FP8 primary weights (Megatron Core's `fp8_param_gather` / `--fp8-param-gather`,
/// NeMo's `fp8_params`).
const FP8_WEIGHT_WORDS: [&str; 5] =
    ["fp8 param gather", "fp8 params", "fp8 parameters", "fp8 primary weights", "fp8 weights primary"];

/// The FP8 recipe of a run whose precision words are `precision` and whose framework, notes and
/// other words are `stack`, with a note when the reading is not plain Transformer Engine:
/// 1. torchao's `float8` named, or torchtitan, whose FP8 and MXFP8 converters are torchao's
///    (`torchtitan/components/quantization`: `Float8Linear`, `MXLinear`, torchao's scaled grouped
///    GEMM for experts): torchao (cast on the fly); with FSDP's float8 all-gather affirmed
///    ([`FP8_ALL_GATHER_WORDS`]): its gathered linear weights in FP8, noted;
/// 2. the scales computed online per tile and block, DeepSeek-V3's recipe ("online" affirmed in
///    the precision words: "quantize the activation or weight online", report §3.3.2): weights
///    cast per GEMM and none kept, FP8 inputs saved, noted;
/// 3. FP8 primary weights stated (`fp8_param_gather`, `fp8 params`, … affirmed): Transformer
///    Engine with FP8 weights; stated off: plain Transformer Engine;
/// 4. Megatron-Bridge named: its FP8 mixed-precision recipes (`bf16_with_fp8_delayed_scaling_mixed`,
///    `bf16_with_fp8_current_scaling_mixed`, …) set `fp8_param_gather=True`
///    (`megatron/bridge/training/mixed_precision.py`): FP8 weights, noted;
/// 5. otherwise plain Transformer Engine (Megatron-LM's `--fp8-param-gather` is off by default).
pub fn read_fp8_recipe(precision: &Words, stack: &Words) -> (Fp8Recipe, Option<Note>) {
    let both = Words::new(&format!("{} ; {}", precision.text, stack.text));
    if precision.any(&["float8", "torchao"]) || stack.has("torchtitan") {
        if FP8_ALL_GATHER_WORDS.iter().any(|w| both.affirms(w)) {
            return (
                Fp8Recipe::TorchaoFp8AllGather,
                Some(Note::reading(
                    "FSDP's float8 all-gather stated: gathered linear weights in FP8 (torchao_fp8_gather)",
                )),
            );
        }
        return (Fp8Recipe::Torchao, None);
    }
    if precision.affirms("online") {
        return (
            Fp8Recipe::OnlineBlockwise,
            Some(Note::reading(
                "FP8 scales computed online (DeepSeek-V3's recipe): weights quantized at each GEMM, no FP8 weight \
                 copy kept; FP8 inputs saved (online_blockwise)",
            )),
        );
    }
    if FP8_WEIGHT_WORDS.iter().any(|w| both.affirms(w)) {
        return (
            Fp8Recipe::TransformerEngineFp8Weights,
            Some(Note::reading("FP8 primary weights stated: te_fp8_weights")),
        );
    }
    if FP8_WEIGHT_WORDS.iter().any(|w| both.has(w)) {
        return (Fp8Recipe::TransformerEngine, None);
    }
    if both.any(&["megatron bridge", "megatronbridge", "mbridge"]) {
        return (
            Fp8Recipe::TransformerEngineFp8Weights,
            Some(Note::assumption(
                "FP8 recipe: Megatron-Bridge's FP8 mixed-precision recipes set fp8_param_gather=True (FP8 primary \
                 weights, te_fp8_weights)",
            )),
        );
    }
    (Fp8Recipe::TransformerEngine, None)
}

/// The month torchtitan began compiling its loss with the model (`build_loss_fn` compiles the
/// cross-entropy when compilation is on: pytorch/torchtitan#1033, merged 2025-04-01; today's
/// `compile.components` defaults to `["model", "loss"]`), as `yyyymm`.
const TORCHTITAN_COMPILED_LOSS_SINCE: u32 = 202504;

/// A date the stack words give, as `yyyymm`: the latest `yyyy-mm-dd` or `yyyymmdd` (a nightly's
/// `dev20250811`) between 2015 and 2099, if any.
fn stack_month(words: &Words) -> Option<u32> {
    let mut best = None;
    let t = &words.tokens;
    for i in 0..t.len() {
        let digits = t[i].trim_start_matches("dev");
        let ymd = if digits.len() == 8 && digits.chars().all(|c| c.is_ascii_digit()) {
            digits[..6].parse::<u32>().ok()
        } else if digits.len() == 4 && digits.chars().all(|c| c.is_ascii_digit()) {
            let month = t.get(i + 1).filter(|m| m.len() == 2).and_then(|m| m.parse::<u32>().ok());
            let day = t.get(i + 2).filter(|d| d.len() == 2).and_then(|d| d.parse::<u32>().ok());
            match (digits.parse::<u32>().ok(), month, day) {
                (Some(y), Some(m), Some(_)) => Some(y * 100 + m),
                _ => None,
            }
        } else {
            None
        };
        if let Some(v) = ymd.filter(|v| (201501..=209912).contains(v) && (1..=12).contains(&(v % 100))) {
            best = best.max(Some(v));
        }
    }
    best
}

/// The `(major, minor)` version written right after `name` (`torch 2.9.0.dev…`, `torchtitan v0.1.0`).
fn version_after(words: &Words, name: &str) -> Option<(u32, u32)> {
    let i = words.find(name)?;
    let v = words.tokens.get(i + Words::new(name).tokens.len())?.trim_start_matches('v');
    let mut parts = v.split('.');
    let major = parts.next()?.parse::<u32>().ok()?;
    let minor: String = parts.next()?.chars().take_while(|c| c.is_ascii_digit()).collect();
    Some((major, minor.parse().ok()?))
}

/// Whether a run's cross-entropy was compiled with its model, from its framework, notes and other
/// words (`stack`), with a note saying why:
/// 1. a compiled loss stated (`compiled loss`, `compile loss`, `compile_loss` affirmed): yes;
/// 2. compilation not affirmed: no;
/// 3. torchtune: its recipes compile the loss whenever `compile=True` (`training.compile_loss`),
///    but only the chunked loss ([`CHUNKED_LOSS_WORDS`] affirmed: `CEWithChunkedOutputLoss`)
///    upcasts inside the compiled function; without it torchtune's `TransformerDecoder` returns
///    `self.output(h).float()`, so the FP32 logits exist outside the compiled loss: no;
/// 4. torchtitan: its loss is compiled with the model since April 2025 (see
///    [`TORCHTITAN_COMPILED_LOSS_SINCE`]): yes when the stack is dated from then (a date in the
///    words, torch ≥ 2.8, torchtitan ≥ 0.1) or undated (today's torchtitan), no when dated
///    before (torch ≤ 2.7, torchtitan 0.0.x, an earlier date);
/// 5. otherwise no (other stacks compile the model, not the loss).
pub fn read_compiled_loss(stack: &Words) -> (bool, Option<Note>) {
    if ["compiled loss", "compile loss", "loss compiled"].iter().any(|w| stack.affirms(w)) {
        return (true, Some(Note::reading("the words state a compiled loss")));
    }
    let compiled = ["compile", "compiled", "torch compile", "inductor"].iter().any(|w| stack.affirms(w));
    if !compiled {
        return (false, None);
    }
    if stack.has("torchtune") {
        if !CHUNKED_LOSS_WORDS.iter().any(|w| stack.affirms(w)) {
            return (false, None);
        }
        return (true, Some(Note::reading("torchtune compiles its chunked loss with the model (compile_loss)")));
    }
    if stack.has("torchtitan") {
        let month = stack_month(stack);
        let torch = version_after(stack, "torch");
        let titan = version_after(stack, "torchtitan");
        let after = month
            .map(|m| m >= TORCHTITAN_COMPILED_LOSS_SINCE)
            .or(torch.map(|v| v >= (2, 8)))
            .or(titan.map(|v| v >= (0, 1)));
        return match after {
            Some(false) => (false, None),
            _ => (
                true,
                Some(Note::reading(
                    "torchtitan compiles its loss with the model (compile.components, since April 2025)",
                )),
            ),
        };
    }
    (false, None)
}

/// Whether the run's stack overlaps a column-parallel layer's input-gradient all-reduce with its
/// weight-gradient GEMM ([`crate::extended::ExtendedOptions::tp_grad_overlap`]), read from the
/// words naming the stack (`stack`): BigScience's Megatron-DeepSpeed (the words name
/// `bigscience`, the fork of the BLOOM runs) all-reduces synchronously after the layer's backward
/// (`megatron/mpu/mappings.py` line 89 @ 58d92042): off, noted; every other stack keeps
/// Megatron-LM's asynchronous all-reduce: on, unnoted.
pub fn read_tp_grad_overlap(stack: &Words) -> (bool, Option<Note>) {
    if stack.has("bigscience") {
        let note = "BigScience's Megatron-DeepSpeed: the tensor-parallel all-reduce of a column-parallel layer's \
                    input gradient runs after its backward, exposed (tp_grad_overlap=off)";
        return (false, Some(Note::reading(note)));
    }
    (true, None)
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
    fn bigscience_megatron_deepspeed_exposes_the_tp_input_gradient_all_reduce() {
        let read = |stack: &str| read_tp_grad_overlap(&Words::new(stack));
        let (on, note) = read("bigscience Megatron-DeepSpeed (Feb 2022)");
        assert!(!on);
        assert!(note.is_some_and(|n| n.to_string().contains("tp_grad_overlap=off")));
        assert_eq!(read("Megatron-DeepSpeed"), (true, None));
        assert_eq!(read("Megatron-LM"), (true, None));
    }

    #[test]
    fn fp8_recipe_by_meaning() {
        let read = |precision: &str, stack: &str| read_fp8_recipe(&Words::new(precision), &Words::new(stack)).0;
        assert_eq!(read("bf16 + float8 linears (tensorwise)", "torchtitan"), Fp8Recipe::Torchao);
        // torchtitan's FP8 and MXFP8 converters are torchao's, whatever the precision words say.
        assert_eq!(read("MXFP8", "torchtitan (2025-08)"), Fp8Recipe::Torchao);
        assert_eq!(read("FP8 (TE) with bf16 mixed", "Megatron-LM pretrain_gpt.py"), Fp8Recipe::TransformerEngine);
        assert_eq!(
            read("FP8 current scaling (TE)", "Megatron-Bridge (NeMo) on Megatron Core"),
            Fp8Recipe::TransformerEngineFp8Weights
        );
        assert_eq!(read("fp8 hybrid", "Megatron-LM; --fp8-param-gather"), Fp8Recipe::TransformerEngineFp8Weights);
        assert_eq!(read("fp8", "NeMo; fp8_params: true"), Fp8Recipe::TransformerEngineFp8Weights);
        // Stated off wins over the framework's default.
        assert_eq!(read("fp8", "Megatron-Bridge; fp8_param_gather=False"), Fp8Recipe::TransformerEngine);
        assert_eq!(read("fp8", "Megatron-Bridge; without fp8 param gather"), Fp8Recipe::TransformerEngine);
        // torchao's float8 with FSDP's float8 all-gather, however it is written; a 16-bit or a
        // disabled all-gather is plain torchao.
        for (precision, stack) in [
            ("bf16 mixed + float8 linears (tensorwise with float8 all-gather)", "torchtitan"),
            ("float8 tensorwise (f8 all-gather)", ""),
            ("torchao float8", "torchtitan --float8.enable_fsdp_float8_all_gather"),
            ("torchao float8 linears, fp8 allgather", "benchmark_litgpt.py"),
        ] {
            assert_eq!(read(precision, stack), Fp8Recipe::TorchaoFp8AllGather, "{precision} | {stack}");
        }
        assert_eq!(read("float8 linears (rowwise with bfloat16 all-gather)", "torchtitan"), Fp8Recipe::Torchao);
        assert_eq!(read("torchao float8", "enable_fsdp_float8_all_gather = false"), Fp8Recipe::Torchao);
        // DeepSeek-V3's recipe: scales computed online, weights quantized per GEMM.
        assert_eq!(
            read("FP8, scales computed online per 1x128 activation tile and 128x128 weight block", "HAI-LLM"),
            Fp8Recipe::OnlineBlockwise
        );
        assert_eq!(
            read("FP8 blockwise 128x128 weights / 1x128 activations", "Megatron-Bridge"),
            Fp8Recipe::TransformerEngineFp8Weights
        );
        assert_eq!(read("FP8, not online", "Megatron-LM"), Fp8Recipe::TransformerEngine);
    }

    #[test]
    fn compiled_loss_by_meaning() {
        let read = |stack: &str| read_compiled_loss(&Words::new(stack)).0;
        // Not compiled at all.
        assert!(!read("torchtitan 2c8b594 + torch 2.9.0.dev20250811"));
        assert!(!read("torchtune full_finetune_single_device"));
        assert!(!read("torchtitan; torch.compile off"));
        // torchtune compiles its loss with the model; only the chunked loss upcasts inside it (the
        // plain decoder returns FP32 logits).
        assert!(read("torchtune full_finetune_single_device + torch.compile; chunked cross entropy true"));
        assert!(!read("torchtune full_finetune_single_device + torch.compile; chunked cross entropy false"));
        assert!(!read("torchtune full_finetune_single_device + torch.compile"));
        // torchtitan: from April 2025 (a dated nightly, torch ≥ 2.8, torchtitan ≥ 0.1, or undated).
        assert!(read("torchtitan 2c8b594 + torch 2.9.0.dev20250811+rocm6.4 + torchao 0.13.0; torch.compile"));
        assert!(read("torchtitan v0.1.0; compile"));
        assert!(read("torchtitan, compile=true"));
        assert!(!read("torchtitan 0.0.2 + torch 2.7.0a0 (b98af95) + torchao 0.10.0; torch.compile"));
        assert!(!read("torchtitan 9dec370 (2024-12-26), torch 1963fc8 (2024-12-23); compiled"));
        // Other stacks compile the model only, unless the words say the loss is compiled.
        assert!(!read("lightning-thunder benchmark_litgpt.py, compile=inductor (torch.compile)"));
        assert!(read("custom trainer; torch.compile; compiled loss"));
        assert_eq!(stack_month(&Words::new("torch 2.9.0.dev20250811, 2024-12-26")), Some(202508));
        assert_eq!(version_after(&Words::new("torchtitan v0.1.0"), "torchtitan"), Some((0, 1)));
        assert_eq!(version_after(&Words::new("torch 2.7.0a0"), "torch"), Some((2, 7)));
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
        // Stated unfused, or flash attention only negated.
        assert_eq!(kernel("Megatron-LM --attention-backend unfused"), AttentionKernel::Unfused);
        assert_eq!(kernel("attention_backend: local"), AttentionKernel::Unfused);
        assert_eq!(kernel("Hugging Face Trainer, attn_implementation=eager"), AttentionKernel::Unfused);
        assert_eq!(kernel("Megatron-DeepSpeed without flash attention"), AttentionKernel::Unfused);
        assert_eq!(kernel("use_flash_attn: false"), AttentionKernel::Unfused);
        assert_ne!(kernel("--use-flash-attn"), AttentionKernel::Unfused);
        assert_eq!(kernel("--attention-backend fused"), AttentionKernel::Native);
        assert_eq!(kernel("--attention-backend flash"), AttentionKernel::Fa2);
        // A stated `flash_attention` decides.
        let stated = |f, t: &str| read_stated_attention_kernel(f, &Words::new(t)).map(|k| k.0);
        assert_eq!(stated(Some(false), "torchtitan").unwrap(), AttentionKernel::Unfused);
        assert_eq!(stated(Some(false), "no FlashAttention").unwrap(), AttentionKernel::Unfused);
        assert_eq!(stated(Some(true), "torchtitan").unwrap(), AttentionKernel::Fa2);
        assert_eq!(stated(None, "without flash attention").unwrap(), AttentionKernel::Unfused);
        assert!(read_stated_attention_kernel(Some(false), &Words::new("")).unwrap().1.is_some());
        // The field and the words contradicting each other: an error naming the field.
        for (f, t) in
            [(Some(true), "without flash attention"), (Some(false), "cuDNN fused attention"), (Some(false), "sdpa")]
        {
            let e = stated(f, t).unwrap_err();
            assert!(e.to_string().contains("parallel.flash_attention") && e.to_string().contains("contradicts"), "{e}");
        }
        let (_, why) = read_attention_kernel(&Words::new("torchtitan"));
        assert!(why.unwrap().contains("torchtitan"));
    }

    #[test]
    fn the_framework_field_decides_before_the_notes() {
        let run = |framework: &str, notes: &str| {
            read_run_fusion(&Words::new(framework), &Words::new(&format!("{framework}; {notes}"))).0
        };
        // A note naming another run's compiled set-up does not make an eager run compiled …
        assert_eq!(
            run("benchmark script, eager PyTorch, FSDP2", "torch.compile in the same table: 40 GB"),
            Fusion::Eager
        );
        assert_eq!(run("torch.compile (inductor)", "the eager run of the table: 47 GB"), Fusion::Fused);
        // … and a framework field silent on it leaves the notes to decide.
        assert_eq!(run("litgpt", "compiled with torch.compile"), Fusion::Fused);
        assert_eq!(run("my trainer", "eager kernels"), Fusion::Eager);
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
