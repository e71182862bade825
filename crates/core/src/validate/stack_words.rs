//! Words naming a run's training stack (framework, source, tags) read by meaning (see
//! [`super::words`]): the stack that decides how ZeRO prices ([`Stack`]: Megatron, Megatron-FSDP,
//! PyTorch FSDP, DeepSpeed, JAX, nanotron), InternLM's hybrid ZeRO and whether the training loop
//! frees its gradients between steps; every reading that is not plain comes with a note for the
//! row.

use super::kernel_words::PYTORCH_NATIVE_LOOPS;
use super::words::Words;
use crate::extended::Stack;
use crate::vocab::Note;

/// Whether the words naming the stack name InternLM, whose hybrid ZeRO optimizer
/// (`internlm/solver/optimizer/hybrid_zero_optim.py`, derived from Colossal-AI's low-level ZeRO)
/// accumulates the 16-bit model's gradients in 16 bits, all-reduces them in buckets over the
/// data-parallel group, makes an FP32 copy of its own shard only at the optimizer step and then
/// broadcasts each rank's updated shard from its owner over the `zero1` group (as remembered from
/// its source, not re-read here): `grad_reduce=param` and `param_broadcast=on`, with the note.
pub fn reads_hybrid_zero(stack: &Words) -> Option<Note> {
    stack.has("internlm").then(|| {
        Note::reading(
            "InternLM's hybrid ZeRO: gradients kept and all-reduced in the 16-bit parameter type (grad_reduce=param), \
         updated parameters broadcast by each shard owner (param_broadcast=on)",
        )
    })
}

/// The training stack the words naming it give ([`Stack`]): `jax` when a word is one of the JAX
/// stack's names (`"maxtext".parse::<Stack>()`: the stack's own list — jax, MaxText, PaxML/Praxis,
/// AXLearn, XLA), with a note; `deepspeed` when they name DeepSpeed (Megatron-DeepSpeed too) or
/// PaddlePaddle, whose sharding stages 1–3 are ZeRO's and whose stage 2 reduces the gradients
/// behind every micro-batch as DeepSpeed's does ([`Stack::zero2_reduces_every_microbatch`]); else
/// the default (Megatron's, which prices exactly as before the stack was read). The JAX stack's
/// ZeRO-3 collectives and DeepSpeed's ZeRO-2 under accumulation are what the stack changes here
/// ([`Stack::zero3_one_nic_per_device`]); the sharding itself is read by [`read_sharding`].
pub fn read_stack(stack: &Words) -> (Stack, Option<Note>) {
    match stack.tokens.iter().find(|t| t.parse::<Stack>().is_ok_and(|s| s == Stack::Jax)) {
        Some(w) => (
            Stack::Jax,
            Some(Note::reading(format!(
                "stack jax (the words name `{w}`): XLA combines and prefetches FSDP's collectives, priced at every NIC of a node"
            ))),
        ),
        None if stack.has("deepspeed") || stack.has_prefix("paddle") => (Stack::DeepSpeed, None),
        None if stack.has("nanotron") => (
            Stack::Nanotron,
            Some(Note::reading(
                "stack nanotron (the words name it): ZeRO-1's parameter all-gather runs inside the optimizer step, exposed",
            )),
        ),
        None => (Stack::default(), None),
    }
}

/// Words that name Megatron-FSDP (Megatron-Core's `--use-megatron-fsdp`,
/// `ddp.use_megatron_fsdp`; its unit tests' `mfsdp`).
pub(super) const MEGATRON_FSDP_WORDS: [&str; 2] = ["megatron fsdp", "mfsdp"];

/// Words that name PyTorch's FSDP beyond a token starting `fsdp` (FSDP, FSDP1, FSDP2): its
/// sharding strategies (`ShardingStrategy.FULL_SHARD`, `SHARD_GRAD_OP`, `HYBRID_SHARD`), HSDP and
/// FSDP2's `fully_shard`.
const FSDP_WORDS: [&str; 5] = ["full shard", "fully shard", "shard grad op", "hybrid shard", "hsdp"];

/// The stack of a row sharded as ZeRO-3/FSDP, from the one [`read_stack`] gave and all of the
/// row's words. Megatron's ZeRO-3 is Megatron-FSDP ([`Stack`]), whose collectives cross domains
/// through every NIC ([`Stack::zero3_one_nic_per_device`]); a row keeps the `megatron` stack
/// only where its words name Megatron-FSDP (noted). "FSDP" without that name is PyTorch's FSDP
/// (Composer, torchtitan, fms-fsdp), read as `fsdp`; ZeRO-3 without any FSDP word is DeepSpeed's
/// (a ZeRO stage is DeepSpeed's word), read as `deepspeed`: one NIC per device across domains
/// (issue 31: only DeepSpeed's per-parameter gathers keep that rate). Other stacks are kept.
pub fn read_zero3_stack(stack: Stack, words: &Words) -> (Stack, Option<Note>) {
    match stack {
        Stack::Megatron if words.any(&MEGATRON_FSDP_WORDS) => (
            Stack::Megatron,
            Some(Note::reading(
                "Megatron-FSDP: each layer's parameters gathered and its gradients reduced as one buffer, \
                 prefetched; across domains through every NIC of a domain",
            )),
        ),
        Stack::Megatron if words.has_prefix("fsdp") || words.any(&FSDP_WORDS) => (Stack::Fsdp, None),
        Stack::Megatron => (Stack::DeepSpeed, None),
        s => (s, None),
    }
}

/// Words naming Hugging Face transformers' `Trainer`.
const HF_TRAINER_WORDS: [&str; 4] =
    ["hugging face trainer", "huggingface trainer", "hf trainer", "transformers trainer"];

/// The first transformers release whose Trainer steps `torch.optim.AdamW` by default
/// (huggingface/transformers#25109, merged 2023-07-26: `adamw_hf` → `adamw_torch`): 4.32.
const TRANSFORMERS_ADAMW_TORCH_MINOR: u32 = 32;

/// Whether a run's framework words say the Hugging Face Trainer runs its own step under native
/// AMP and DDP ([`crate::extended::ExtendedOptions::hf_trainer_step`]): they name the Trainer
/// ([`HF_TRAINER_WORDS`]), affirm neither DeepSpeed nor FSDP (either runs the optimizer itself),
/// and state a transformers release `4.N` before 4.32, whose default optimizer is transformers'
/// own per-tensor `AdamW`; noted. The Trainer named without a release says nothing about its
/// optimizer (torch's multi-tensor AdamW from 4.32 on): off, with a note saying so.
pub fn read_hf_trainer_step(framework: &Words) -> (bool, Option<Note>) {
    if !framework.any(&HF_TRAINER_WORDS) || framework.affirms("deepspeed") || framework.has_prefix("fsdp") {
        return (false, None);
    }
    let release = framework.find("transformers").and_then(|i| framework.tokens.get(i + 1)).and_then(|t| release_of(t));
    match release {
        Some((4, minor)) if minor < TRANSFORMERS_ADAMW_TORCH_MINOR => (
            true,
            Some(Note::reading(format!(
                "Hugging Face Trainer of transformers 4.{minor} without DeepSpeed: transformers' AdamW tensor by tensor, \
                 AMP's unscale and clip over FP32 gradients, zero_grad and DDP's bucket copies (hf_trainer_step=on)"
            ))),
        ),
        Some(_) => (false, None),
        None => (
            false,
            Some(Note::assumption(
                "Hugging Face Trainer without a transformers release: its optimizer (transformers' AdamW before 4.32, \
                 torch's after) is not known; the stack's fused step is priced",
            )),
        ),
    }
}

/// A release's major and minor number as written: `4.12`, `4.12.0`, `v4.12.2` (a patch number
/// and a leading `v` are read past); `None` for anything else.
fn release_of(token: &str) -> Option<(u32, u32)> {
    let mut parts = token.strip_prefix('v').unwrap_or(token).split('.');
    let major = parts.next()?.parse::<u32>().ok()?;
    let minor = parts.next()?.parse::<u32>().ok()?;
    Some((major, minor))
}

/// Frameworks with a contiguous gradient buffer, allocated once and zeroed in place.
const GRAD_BUFFER_FRAMEWORKS: [&str; 5] = ["megatron", "nemo", "deepspeed", "maxtext", "jax"];

/// PyTorch's own sharding and loops beyond [`PYTORCH_NATIVE_LOOPS`] whose training step calls
/// `optimizer.zero_grad()` (lightning-thunder's benchmark; PyTorch FSDP1/FSDP2 set the sharded
/// `.grad` and free it like any other; ATorch's examples step a torch `AdamW` and call
/// `optimizer.zero_grad()`, intelligent-machine-learning/dlrover 3a442b7
/// `atorch/examples/llama2/fsdp_llama2.py` training loop): gradients freed, but nothing said
/// about compilation.
const GRADS_FREED_WORDS: [&str; 6] =
    ["lightning thunder", "pytorch fsdp", "torch fsdp", "fsdp2", "fully shard", "atorch"];

/// Whether the run's training loop frees its gradients between steps
/// ([`crate::extended::ExtendedOptions::grads_freed`]): the stack words name a PyTorch-native
/// loop ([`PYTORCH_NATIVE_LOOPS`], [`GRADS_FREED_WORDS`]) and no framework with its own gradient
/// buffer, or say `set_to_none` outright (`set_to_none=False` keeps them); noted when on.
pub fn read_grads_freed(stack: &Words) -> (bool, Option<Note>) {
    if stack.any(&["set to none false", "set to none 0"]) {
        return (false, None);
    }
    if stack.has("set to none") {
        return (true, Some(Note::reading("gradients set to None between steps (zero_grad set_to_none)")));
    }
    if stack.any(&GRAD_BUFFER_FRAMEWORKS) {
        return (false, None);
    }
    match PYTORCH_NATIVE_LOOPS.iter().chain(&GRADS_FREED_WORDS).find(|f| stack.has(f)) {
        Some(f) => (
            true,
            Some(Note::reading(format!(
                "`{f}` frees its gradients between steps (zero_grad: none held at the loss with one micro-batch)"
            ))),
        ),
        None => (false, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trainers_own_step_is_read_from_its_release() {
        let read = |t: &str| read_hf_trainer_step(&Words::new(t));
        let ddp = "Hugging Face Trainer run_clm.py (transformers 4.12) without DeepSpeed: PyTorch DDP, fp16 AMP";
        let (on, note) = read(ddp);
        assert!(on && note.is_some_and(|n| n.contains("4.12")));
        assert!(!read("Hugging Face Trainer run_clm.py (transformers 4.12) with DeepSpeed, ZeRO stage 1").0);
        assert!(!read("HF Trainer (transformers 4.31) with FSDP FULL_SHARD").0);
        // 4.32 made torch's AdamW the default; 4.9 is before it (minor versions compare as numbers).
        assert!(!read("HF Trainer, transformers 4.32").0);
        assert!(read("HF Trainer, transformers 4.9").0);
        // A patch number or a leading v is the same release.
        assert!(read("HF Trainer, transformers 4.12.0").0);
        assert!(read("HF Trainer, transformers v4.12.2").0);
        assert!(!read("HF Trainer, transformers 4.36.2").0);
        // No release: nothing priced, said.
        let (on, note) = read("Hugging Face Trainer with DDP");
        assert!(!on && note.is_some());
        assert_eq!(read("Megatron-LM"), (false, None));
    }

    #[test]
    fn internlm_is_read_as_hybrid_zero() {
        assert!(reads_hybrid_zero(&Words::new("InternLM (Hybrid ZeRO, flash-attn)")).is_some());
        assert!(reads_hybrid_zero(&Words::new("Megatron-LM")).is_none());
        let stack = |t: &str| read_stack(&Words::new(t)).0;
        assert_eq!(stack("NVIDIA DGX Cloud benchmarking recipes: MaxText Llama 70B"), Stack::Jax);
        assert_eq!(stack("PaxML container 2024.03.04, Transformer Engine"), Stack::Jax);
        assert_eq!(stack("nanotron (1F1B pipeline engine, TP in REDUCE_SCATTER mode)"), Stack::Nanotron);
        assert_eq!(stack("Megatron-LM; torchtitan"), Stack::Megatron);
        assert_eq!(stack("Megatron-DeepSpeed, ZeRO stage 2"), Stack::DeepSpeed);
        assert_eq!(stack("PaddlePaddle 2.5.1 / PaddleNLP (FlagPerf)"), Stack::DeepSpeed);
        assert!(read_stack(&Words::new("jax")).1.is_some_and(|n| n.contains("every NIC")));
        // ZeRO-3: Megatron's only where Megatron-FSDP is named; otherwise PyTorch FSDP/DeepSpeed.
        let z3 = |s: Stack, t: &str| read_zero3_stack(s, &Words::new(t));
        assert_eq!(z3(Stack::Megatron, "Megatron-FSDP over 64 GPUs").0, Stack::Megatron);
        assert!(z3(Stack::Megatron, "use_megatron_fsdp=True").1.is_some_and(|n| n.contains("every NIC")));
        assert_eq!(z3(Stack::Megatron, "FSDP FULL_SHARD (ZeRO-3-like); megatron"), (Stack::Fsdp, None));
        assert_eq!(z3(Stack::Jax, "megatron fsdp"), (Stack::Jax, None));
        assert_eq!(z3(Stack::DeepSpeed, "ZeRO-3 via DeepSpeed"), (Stack::DeepSpeed, None));
        // A ZeRO stage without FSDP's name is DeepSpeed's (Narayanan et al. 2021's rows); FSDP's
        // strategies and HSDP are PyTorch's.
        assert_eq!(
            z3(Stack::Megatron, "Efficient Large-Scale Language Model Training on GPU Clusters"),
            (Stack::DeepSpeed, None)
        );
        for t in ["HSDP: shard 8 within a node", "FULL_SHARD", "fully_shard (FSDP2)", "FSDP2"] {
            assert_eq!(z3(Stack::Megatron, t), (Stack::Fsdp, None), "{t}");
        }
    }

    #[test]
    fn grads_freed_by_the_loop_the_words_name() {
        let freed = |t: &str| read_grads_freed(&Words::new(t)).0;
        assert!(freed("torchtitan 9dec370; torch.compile"));
        assert!(freed("lightning-thunder benchmark_litgpt.py, compile=inductor"));
        assert!(freed("torchtune full_finetune_single_device"));
        assert!(freed("custom loop, optimizer.zero_grad(set_to_none=True)"));
        assert!(!freed("custom loop, optimizer.zero_grad(set_to_none=False)"));
        assert!(!freed("bigscience Megatron-DeepSpeed (Feb 2022)"));
        // PyTorch's FSDP in a loop of one's own; Megatron's FSDP keeps Megatron's buffer.
        assert!(freed("custom training loop on PyTorch FSDP2 (fully_shard), bf16"));
        assert!(!freed("Megatron-Core with Megatron FSDP"));
        assert!(!freed("Megatron-Bridge (NeMo) on Megatron Core"));
        // A comparison with a PyTorch-native loop does not free Megatron's buffer.
        assert!(!freed("Megatron-LM; same model as the torchtitan run"));
        assert!(!freed(""));
        // ATorch's FSDP examples step a torch AdamW and call zero_grad; its DeepSpeed 3D ones keep
        // DeepSpeed's buffer.
        assert!(freed("ATorch auto_accelerate: FSDP1 (wrap LlamaDecoderLayer), HF transformers Llama"));
        assert!(!freed("ATorch DS 3D (DeepSpeed pipeline)"));
    }
}
