//! Sharding (ZeRO, FSDP, HSDP), precision, optimizer, pipeline-interleaving and pipeline-split words, read by
//! meaning (see [`super::words`]); every reading that is not plain comes with a note for the row.
//!
//! Sharding, first rule that applies:
//! 1. FSDP/HSDP words that are not negated: `NO_SHARD` → plain data parallel; `SHARD_GRAD_OP`,
//!    `ZeRO-2`, `reshard_after_forward=False` → ZeRO-2; `HYBRID_SHARD`, `HSDP`, "shard within …,
//!    replicate across …" → ZeRO-3 inside a shard group; anything else (`FSDP`, `FSDP2`,
//!    `FULL_SHARD`, `fully_shard`, "parameters sharded") → ZeRO-3. The shard group is the number
//!    the words give after `fsdp`/`shard`/`over`/`across` (torchtitan and MaxText count it over
//!    the data-parallel ranks, so it is multiplied by the context-parallel degree), or the
//!    data-parallel size over the number after `replicate`; a group that does not divide
//!    `dp·cp` is replaced by the whole group, with a note.
//! 2. a stated `zero_stage` (0–3); for ZeRO-1/2 a shard group the words give after
//!    `shard group` (hierarchical ZeRO, [`crate::extended::data_parallel`]);
//! 3. `distributed_optimizer: true` → ZeRO-1;
//! 4. ZeRO words in the optimizer text (`ZeRO-1`, "states sharded") → that stage;
//! 5. nothing stated → ZeRO-1 (Megatron's distributed optimizer), noted.
//!
//! Precision: `fp8`/`float8`/`e4m3`/`mxfp8` → FP8; `bf16`/`bfloat16` → BF16; `fp16`/`float16`/
//! `half` → FP16; "16-bit", `amp`, "mixed precision" → the part's 16-bit format (BF16 where it has
//! it); `tf32` → TF32; `fp32`/`float32`/"full precision" → FP32; nothing understood → BF16 (or
//! FP16 on parts without BF16), noted. FP4 formats are read as FP8 (the nearest the model prices),
//! noted.

use super::kernel_words::PYTORCH_NATIVE_LOOPS;
use super::words::Words;
use crate::catalog::{CatalogSystem, Precision};
use crate::extended::{Sharding, Stack, StageSplitRule};
use crate::vocab::{Note, NoteList};

/// Sharding read from a row.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardingReading {
    /// ZeRO stage / FSDP.
    pub sharding: Sharding,
    /// Shard group [devices] when smaller than the whole data × context parallel group.
    pub shard_group: Option<u64>,
    /// Notes for the row.
    pub notes: Vec<Note>,
}

/// The sharding words of a row, gathered.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShardingInput<'a> {
    /// `parallel.fsdp` (words; `Some("")` never happens: empty is `None`).
    pub fsdp: Option<&'a str>,
    /// `parallel.fsdp` given as a boolean.
    pub fsdp_flag: Option<bool>,
    /// `parallel.zero_stage`.
    pub zero_stage: Option<u64>,
    /// `parallel.distributed_optimizer`.
    pub distributed_optimizer: Option<bool>,
    /// `optimizer` words (and other words about the optimizer's states, e.g.
    /// `--use-distributed-optimizer`).
    pub optimizer: Option<&'a str>,
    /// Data-parallel size.
    pub dp: u64,
    /// Context-parallel size.
    pub cp: u64,
}

/// A pure integer token within `window` tokens after `at`, skipping numbers that follow
/// `zero`/`stage` (a ZeRO stage, not a degree).
fn degree_after(w: &Words, at: usize, window: usize) -> Option<u64> {
    let end = (at + window).min(w.tokens.len());
    // "all" (also a −1 degree, [`minus_one_as_all`]) ends the search: the degree is every rank;
    // so does "replicate" (what follows counts replicas).
    let stop = (at..end).find(|&i| matches!(w.tokens[i].as_str(), "all" | "replicate" | "replicated")).unwrap_or(end);
    (at..stop).find_map(|i| {
        let n = w.tokens[i].parse::<u64>().ok()?;
        let prev = i.checked_sub(1).map(|j| w.tokens[j].as_str());
        let next = w.tokens.get(i + 1).map(String::as_str);
        let replica_count = matches!(next, Some("replicas" | "replica" | "copies" | "nodes" | "groups"));
        (!matches!(prev, Some("zero" | "stage" | "level")) && !replica_count && n > 0).then_some(n)
    })
}

/// The text with a degree of −1 written as `all`: torchtitan's `data_parallel_shard_degree=-1`
/// and MaxText's `ici_fsdp_parallelism=-1` mean "every remaining rank", never a group of one. A
/// `-1` glued to a word (`ZeRO-1`, `stage-1`) is a name, not a degree, and is kept.
fn minus_one_as_all(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let negative_one = chars[i] == '-'
            && chars.get(i + 1) == Some(&'1')
            && !chars.get(i + 2).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.')
            && !i.checked_sub(1).is_some_and(|j| chars[j].is_alphanumeric());
        if negative_one {
            out.push_str(" all ");
            i += 2;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The shard degree the FSDP words give, if any.
fn fsdp_degree(w: &Words, dp: u64) -> Option<u64> {
    for key in ["shard", "sharded", "sharding", "fsdp", "fsdp1", "fsdp2", "fully", "zero3"] {
        if let Some(at) = w.find(key)
            && let Some(n) = degree_after(w, at + 1, 4)
        {
            return Some(n);
        }
    }
    let replicas = w.number_before("replicas", 1).or_else(|| w.number_before("replica", 1)).map(|r| r as u64);
    let after = w.find("replicate").or_else(|| w.find("replicated")).and_then(|at| degree_after(w, at + 1, 3));
    if let Some(r) = replicas.or(after)
        && r > 0
        && dp.is_multiple_of(r)
    {
        return Some(dp / r);
    }
    None
}

/// The shard group of a stated ZeRO-1/2 that the words give (`zero shard group 8`, the layout
/// sweeps' `zero_shard_group`; InternLM's hierarchical `zero1` size): `Some(z)` when `z` is
/// smaller than the replica group `dp·cp` and divides it, noted; the whole group (`None`)
/// otherwise, noted when the words named a group that does not divide it.
fn zero_shard_group(words: Option<&str>, replicas: u64, notes: &mut Vec<Note>) -> Option<u64> {
    let w = Words::new(&minus_one_as_all(words?));
    let at = w.find("shard group")?;
    let z = degree_after(&w, at + 2, 2)?;
    if z >= replicas {
        return None;
    }
    if !replicas.is_multiple_of(z) {
        notes.reading(format!("ZeRO shard group {z} does not divide dp·cp = {replicas}: sharded over all {replicas}"));
        return None;
    }
    notes.reading(format!(
        "hierarchical ZeRO: optimizer states sharded within groups of {z} ranks, replicated across {} groups",
        replicas / z
    ));
    Some(z)
}

/// Reads the sharding of a row (module documentation).
pub fn read_sharding(input: &ShardingInput) -> ShardingReading {
    let mut notes = Vec::new();
    let replicas = input.dp.saturating_mul(input.cp).max(1);
    let fsdp_words = input.fsdp.map(|t| Words::new(&minus_one_as_all(t))).filter(|w| !w.is_empty());
    if fsdp_words.as_ref().is_some_and(|w| w.any(&["no shard", "noshard"])) {
        return ShardingReading { sharding: Sharding::Ddp, shard_group: None, notes };
    }
    let negated = fsdp_words.as_ref().is_some_and(|w| {
        let t = &w.tokens;
        t.len() <= 3
            && t.first().is_some_and(|f| matches!(f.as_str(), "no" | "none" | "false" | "off" | "disabled" | "0"))
    });
    let fsdp_on = match (&fsdp_words, input.fsdp_flag) {
        (Some(_), _) => !negated,
        (None, Some(b)) => b,
        (None, None) => false,
    };
    if fsdp_on {
        let w = fsdp_words.clone().unwrap_or_default();
        let zero2 = w.any(&["shard grad op", "zero2", "zero 2", "stage 2", "grad op"])
            || (w.has("reshard after forward") && (w.has("false") || w.has("no") || w.has("off")));
        let hybrid = w.any(&["hybrid", "hsdp", "replicate", "replicated", "replicas"]);
        let sharding = if zero2 { Sharding::Zero2 } else { Sharding::Zero3 };
        let degree = fsdp_degree(&w, input.dp);
        let group = match degree {
            Some(n) if hybrid => Some(n),
            // torchtitan and MaxText state the FSDP degree over data-parallel ranks; the shard
            // group spans the context-parallel ranks too.
            Some(n) => Some(n.saturating_mul(input.cp)),
            None if hybrid => {
                notes.reading("hybrid sharding without a group size: one group per 8-device node assumed".into());
                Some(8)
            }
            None => None,
        };
        let group = match group {
            Some(g) if g > 0 && replicas.is_multiple_of(g) => (g != replicas).then_some(g),
            Some(g) => {
                notes.reading(format!(
                    "shard group {g} read from `{}` does not divide dp·cp = {replicas}: sharded over all {replicas}",
                    w.text
                ));
                None
            }
            None => None,
        };
        return ShardingReading { sharding, shard_group: group, notes };
    }
    if let Some(z) = input.zero_stage {
        match Sharding::of_zero_stage(z) {
            Some(sharding @ (Sharding::Zero1 | Sharding::Zero2)) => {
                let shard_group = zero_shard_group(input.optimizer, replicas, &mut notes);
                return ShardingReading { sharding, shard_group, notes };
            }
            Some(sharding) => return ShardingReading { sharding, shard_group: None, notes },
            None => notes.reading(format!("zero_stage {z} does not exist: ignored")),
        }
    }
    if input.distributed_optimizer == Some(true) {
        return ShardingReading { sharding: Sharding::Zero1, shard_group: None, notes };
    }
    if let Some(o) = input.optimizer.map(Words::new) {
        let stage = if o.any(&["zero3", "zero 3", "stage 3"]) {
            Some(Sharding::Zero3)
        } else if o.any(&["zero2", "zero 2", "stage 2"]) {
            Some(Sharding::Zero2)
        } else if o.has("distributed fused adam") {
            // Apex's `DistributedFusedAdam` (NeMo 1's `distributed_fused_adam`): "implements the
            // ZeRO-2 algorithm, which distributes the optimizer state and gradients".
            notes.reading("distributed_fused_adam: Apex's ZeRO-2, gradients sharded".into());
            Some(Sharding::Zero2)
        } else if o.any(&["zero1", "zero 1", "stage 1", "distributed optimizer", "distributed optim", "dist optimizer"])
            || (o.has("sharded") || o.has("partitioned")) && o.has("states")
        {
            Some(Sharding::Zero1)
        } else {
            None
        };
        if let Some(s) = stage {
            return ShardingReading { sharding: s, shard_group: None, notes };
        }
    }
    if input.distributed_optimizer == Some(false) && input.zero_stage.is_none() && input.fsdp_flag == Some(false) {
        notes.reading("no ZeRO stage, FSDP or distributed optimizer: plain data parallelism".into());
        return ShardingReading { sharding: Sharding::Ddp, shard_group: None, notes };
    }
    notes.reading("ZeRO stage not stated: distributed optimizer (ZeRO-1)".into());
    ShardingReading { sharding: Sharding::Zero1, shard_group: None, notes }
}

/// Reads the training precision of the linear layers; the note says how when it is not plain.
pub fn read_precision(text: Option<&str>, sys: &CatalogSystem) -> (Precision, Option<Note>) {
    let sixteen = if sys.peak_tflops.bf16.is_some() || sys.peak_tflops.fp16.is_none() {
        Precision::Bf16
    } else {
        Precision::Fp16
    };
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return (sixteen, Some(Note::assumption(format!("precision not stated: {sixteen} (16-bit mixed precision)"))));
    };
    let w = Words::new(t);
    let eight = ["fp8", "float8", "e4m3", "e5m2", "mxfp8", "8 bit float", "fp8 linears"];
    if w.any(&eight) || w.tokens.iter().any(|x| x.starts_with("fp8") || x.starts_with("float8")) {
        return (Precision::Fp8, None);
    }
    if w.any(&["fp4", "nvfp4", "mxfp4", "float4"]) {
        return (
            Precision::Fp8,
            Some(Note::reading(format!("`{t}`: FP4 read as FP8, the narrowest format the model prices"))),
        );
    }
    let bf = w.tokens.iter().any(|x| x.starts_with("bf16") || x.starts_with("bfloat16")) || w.has("brain float");
    let fp16 = w.tokens.iter().any(|x| x == "fp16" || x.starts_with("float16") || x == "half" || x == "f16");
    match (bf, fp16) {
        (true, false) => return (Precision::Bf16, None),
        (false, true) => return (Precision::Fp16, None),
        (true, true) => {
            return (sixteen, Some(Note::reading(format!("`{t}` names both 16-bit formats: {sixteen} (the part's)"))));
        }
        _ => {}
    }
    if w.any(&["16 bit", "16bit", "amp", "mixed precision", "mixed", "autocast"]) {
        return (sixteen, Some(Note::reading(format!("`{t}`: 16-bit mixed precision, {sixteen} on this part"))));
    }
    if w.any(&["tf32", "tensorfloat", "tensorfloat 32"]) {
        return (Precision::Tf32, None);
    }
    if w.any(&["fp32", "float32", "full precision", "single precision", "32 bit", "f32"]) {
        return (Precision::Fp32, None);
    }
    (
        sixteen,
        Some(Note::assumption(format!("precision `{t}` not understood: {sixteen} (the most common training format)"))),
    )
}

/// What the precision and optimizer words say about the model states, for the memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct StateFacts {
    /// 16-bit weights, gradients and optimizer states without an FP32 master copy.
    pub pure_16bit: bool,
    /// The optimizer step runs inside the backward pass, freeing each gradient after its update.
    pub optimizer_in_backward: bool,
    /// Gradients accumulated in FP32 (unsharded) beside 16-bit weights.
    pub fp32_grad_accumulation: bool,
    /// Optimizer states in 8 bits.
    pub eight_bit_optimizer: bool,
    /// 16-bit autocast over FP32 parameters, no mixed-precision policy
    /// ([`crate::extended::ExtendedOptions::fp32_params_autocast`]).
    pub fp32_params_autocast: bool,
}

/// Reads the state facts from the precision and optimizer words.
pub fn read_state_facts(precision: Option<&str>, optimizer: Option<&str>) -> StateFacts {
    let p = Words::new(precision.unwrap_or(""));
    let o = Words::new(optimizer.unwrap_or(""));
    let both = Words::join(&[precision, optimizer]);
    let master = both.affirms("master") && !both.any(&["no master", "no fp32 master", "without master"]);
    let pure = p.any(&["pure", "bf16 true", "true bf16", "dtype bf16", "no fp32 master", "no master"])
        || both.any(&["no fp32 master", "no master weights", "without master weights", "no master copy"])
        || o.any(&["on bf16 params", "bf16 states", "bf16 optimizer states"]);
    StateFacts {
        pure_16bit: pure && !(master && !both.any(&["no fp32 master", "no master"])),
        optimizer_in_backward: o.any(&[
            "fused into backward",
            "in backward",
            "optimizer in backward",
            "optimizer in bwd",
        ]) || o.has("in bwd"),
        fp32_grad_accumulation: both.any(&["fp32 grad accumulation", "accumulates grads in fp32", "fp32 grad accum"]),
        eight_bit_optimizer: o.any(&["8 bit", "8bit", "adam8bit", "adamw8bit", "bnb"]),
        fp32_params_autocast: reads_fp32_params_autocast(&p),
    }
}

/// Whether the precision words say 16-bit autocast over FP32 parameters (`"bf16 autocast over
/// fp32 parameters"`, `"amp over fp32 weights"`): autocast (or AMP) and FP32 parameters or
/// weights named together, no mixed-precision policy (`param_dtype`, FSDP's `MixedPrecision`)
/// casting the weights to 16 bits first.
fn reads_fp32_params_autocast(p: &Words) -> bool {
    let autocast = p.any(&["autocast", "amp", "amp native"]);
    let fp32_params =
        p.any(&["fp32 parameters", "fp32 params", "fp32 weights", "float32 parameters", "float32 weights"]);
    let policy = p.any(&["param dtype", "mixed precision policy", "mixedprecision", "mixedprecisionpolicy"]);
    autocast && fp32_params && !policy
}

/// Whether the words turn Megatron's FP32 gradient reduction off: its gradient buffer (and the
/// data-parallel reduction) is FP32 only with `grad_reduce_in_fp32` (Megatron-Core's
/// `DistributedDataParallelConfig`) / `--accumulate-allreduce-grads-in-fp32`; a run that says it
/// is `False`/`0`/`off` allocates the buffer in the parameter type (16-bit gradients).
pub fn says_16bit_grad_reduce(text: &str) -> bool {
    let said = Words::new(text);
    ["grad reduce in fp32", "accumulate allreduce grads in fp32"]
        .iter()
        .any(|f| ["false", "0", "off"].iter().any(|no| said.has(&format!("{f} {no}"))))
}

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
const MEGATRON_FSDP_WORDS: [&str; 2] = ["megatron fsdp", "mfsdp"];

/// The stack of a row sharded as ZeRO-3/FSDP, from the one [`read_stack`] gave and all of the
/// row's words. Megatron's ZeRO-3 is Megatron-FSDP ([`Stack`]), whose collectives cross domains
/// through every NIC ([`Stack::zero3_one_nic_per_device`]); a row keeps the `megatron` stack
/// only where its words name Megatron-FSDP (noted). "FSDP" or ZeRO-3 without that name is
/// PyTorch's FSDP (Composer, torchtitan) or DeepSpeed's ZeRO-3 (a ZeRO stage is DeepSpeed's
/// word), read as `fsdp`: one NIC per device across domains, as every such row was priced
/// before Megatron-FSDP was told apart. Other stacks are kept.
pub fn read_zero3_stack(stack: Stack, words: &Words) -> (Stack, Option<Note>) {
    match stack {
        Stack::Megatron if words.any(&MEGATRON_FSDP_WORDS) => (
            Stack::Megatron,
            Some(Note::reading(
                "Megatron-FSDP: each layer's parameters gathered and its gradients reduced as one buffer, \
                 prefetched; across domains through every NIC of a domain",
            )),
        ),
        Stack::Megatron => (Stack::Fsdp, None),
        s => (s, None),
    }
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

/// Slices (TPU ICI domains joined by the data-centre network) the words give: the degree after
/// `dcn` (MaxText's `dcn_data_parallelism`, "DCN data parallel = 2"), or a count before
/// `slices`/`pods` ("2 slices", "4 pods"). `None`: the words state no slice count.
pub fn read_slices(text: &str) -> Option<u64> {
    let w = Words::new(text);
    if let Some(at) = w.find("dcn")
        && let Some(n) = degree_after(&w, at + 1, 4)
    {
        return Some(n);
    }
    ["slices", "pods"]
        .iter()
        .find_map(|key| w.number_before(key, 1))
        .filter(|n| *n >= 1.0 && n.fract() == 0.0)
        .map(|n| n as u64)
}

/// Virtual pipeline stages the words give: a count after `vpp`/`virtual`/`chunks`/`interleave`,
/// or 2 when they say "interleaved" without one. `None`: the words do not mention interleaving.
pub fn read_interleave(text: &str) -> Option<(u64, Option<Note>)> {
    let w = Words::new(text);
    let mentions = w.has_prefix("interleav") || w.any(&["vpp", "virtual pipeline", "virtual stages", "virtual stage"]);
    if !mentions {
        return None;
    }
    for key in ["vpp", "virtual", "chunks", "interleaved", "interleave", "interleaving"] {
        if let Some(at) = w.find(key)
            && let Some(n) = degree_after(&w, at + 1, 4).filter(|n| *n >= 1 && *n <= 64)
        {
            return Some((n, None));
        }
    }
    if let Some(n) = w.number_before("virtual", 2).map(|n| n as u64).filter(|n| *n >= 1 && *n <= 64) {
        return Some((n, None));
    }
    Some((2, Some(Note::assumption(format!("`{text}`: interleaving stated without a count: 2 virtual stages")))))
}

/// Whether the run overlaps its data-parallel gradient reduction with the backward pass
/// ([`crate::extended::ExtendedOptions::dp_overlap`]), read from its parallel words (`overlap`)
/// and the words naming its stack (`stack`: framework, source, tags), with a note when it is a
/// stack's default:
/// * the words state it (`overlap-grad-reduce`, `overlap_grad_reduce`, `overlap comm`, "grad
///   reduce overlapped") → on, or off when negated;
/// * Megatron-LM (the words name Megatron but neither NeMo nor Megatron-Bridge, whose recipes
///   turn it on) → off: `--overlap-grad-reduce` is opt-in in Megatron-LM and Megatron-Core's
///   `DistributedDataParallelConfig` (`overlap_grad_reduce = False`), and Megatron-LM before
///   2023 all-reduced its gradient buffer after the backward pass (`allreduce_gradients`);
/// * DeepSpeed ZeRO-1/2 (`zero1_2`: the row's sharding) → off: `overlap_comm` defaults to false
///   below ZeRO-3 (DeepSpeed's configuration docs);
/// * anything else (NeMo, PyTorch DDP/FSDP, XLA, InternLM's `overlap_sync_grad`) → on.
pub fn read_dp_overlap(overlap: &Words, stack: &Words, zero1_2: bool) -> (bool, Option<Note>) {
    for phrase in ["overlap grad reduce", "overlap comm", "grad reduce overlapped", "overlap grad"] {
        if overlap.has(phrase) {
            return (overlap.affirms(phrase), None);
        }
    }
    if stack.has_prefix("megatron") && !stack.has("nemo") && !stack.has("bridge") {
        let note = "Megatron-LM: data-parallel gradient reduction not overlapped with the backward \
                    (--overlap-grad-reduce is opt-in; dp_overlap=off)";
        return (false, Some(Note::assumption(note)));
    }
    if zero1_2 && stack.has("deepspeed") {
        let note = "DeepSpeed ZeRO-1/2: overlap_comm off by default (dp_overlap=off)";
        return (false, Some(Note::assumption(note)));
    }
    (true, None)
}

/// How the words say the blocks were dealt to the pipeline stages, with a note: Megatron-DeepSpeed's
/// `--pp-partition-method` naming the embedding (`type:transformer|embedding`: the embedding
/// layers at both ends count as blocks), Megatron-LM's `--account-for-embedding-in-pipeline-split`
/// and `--account-for-loss-in-pipeline-split` (also Megatron-Bridge's and NeMo's keys of those
/// names), not negated. `None`: the words say neither (the blocks alone are split).
pub fn read_stage_split(w: &Words) -> Option<(StageSplitRule, Note)> {
    let partition_names_embedding = w
        .find("partition method")
        .is_some_and(|at| w.tokens.iter().skip(at + 2).take(6).any(|t| t.starts_with("embed")));
    let rule = if partition_names_embedding {
        StageSplitRule::EndsAsBlocks
    } else {
        StageSplitRule::counting(
            w.affirms("account for embedding in pipeline split"),
            w.affirms("account for loss in pipeline split"),
        )
    };
    (rule != StageSplitRule::Blocks).then(|| (rule, Note::assumption(rule.note())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_zero_stage_with_a_shard_group() {
        let read = |optimizer: &str, dp: u64| {
            read_sharding(&ShardingInput {
                zero_stage: Some(1),
                optimizer: Some(optimizer),
                dp,
                cp: 1,
                ..Default::default()
            })
        };
        // InternLM's zero1 = 8 on 64 ranks: sharded within groups of 8, noted.
        let r = read("zero shard group 8", 64);
        assert_eq!((r.sharding, r.shard_group), (Sharding::Zero1, Some(8)));
        assert!(r.notes[0].contains("within groups of 8") && r.notes[0].contains("across 8 groups"), "{:?}", r.notes);
        // A group of every rank (or more) is plain ZeRO-1; one that does not divide dp is said.
        assert_eq!(read("zero shard group 64", 64).shard_group, None);
        assert_eq!(read("zero shard group -1", 64).shard_group, None);
        let odd = read("zero shard group 6", 64);
        assert_eq!(odd.shard_group, None);
        assert!(odd.notes[0].contains("does not divide"), "{:?}", odd.notes);
        // No group in the words: sharded over all, nothing said.
        let plain = read("AdamW", 64);
        assert_eq!((plain.shard_group, plain.notes.len()), (None, 0));
        // ZeRO-0 and ZeRO-3 stated by stage read no group here.
        let z0 = read_sharding(&ShardingInput {
            zero_stage: Some(0),
            optimizer: Some("zero shard group 8"),
            dp: 64,
            cp: 1,
            ..Default::default()
        });
        assert_eq!((z0.sharding, z0.shard_group), (Sharding::Ddp, None));
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
    }

    #[test]
    fn data_parallel_overlap_by_words_and_stack() {
        let w = Words::new;
        let none = w("");
        // Stated: on, or off when negated.
        assert_eq!(read_dp_overlap(&w("--overlap-grad-reduce"), &w("Megatron-LM"), true), (true, None));
        assert_eq!(read_dp_overlap(&w("no overlap grad reduce"), &none, true).0, false);
        assert_eq!(read_dp_overlap(&w("overlap_comm: false"), &w("DeepSpeed"), true).0, false);
        // Stack defaults: Megatron-LM off (not NeMo, not Megatron-Bridge), DeepSpeed ZeRO-1/2 off.
        let (on, note) = read_dp_overlap(&none, &w("Narayanan et al. 2021, ... Using Megatron-LM"), true);
        assert!(!on && note.is_some_and(|n| n.contains("opt-in")));
        assert!(read_dp_overlap(&none, &w("NVIDIA NeMo performance summary (Megatron-Core)"), true).0);
        assert!(read_dp_overlap(&none, &w("Megatron-Bridge recipes"), true).0);
        assert!(!read_dp_overlap(&none, &w("DeepSpeed"), true).0);
        assert!(read_dp_overlap(&none, &w("DeepSpeed"), false).0);
        assert!(read_dp_overlap(&none, &w("torchtitan"), true).0);
    }
    use crate::catalog;

    #[test]
    fn pipeline_split_words() {
        let rule = |t: &str| read_stage_split(&Words::new(t)).map(|(r, _)| r);
        assert_eq!(
            rule("from 02-28: bf16 optimizer and --pp-partition-method 'type:transformer|embedding'"),
            Some(StageSplitRule::EndsAsBlocks)
        );
        assert_eq!(rule("regex partition_method='type:transformer|embed'"), Some(StageSplitRule::EndsAsBlocks));
        assert_eq!(rule("partition method: parameters"), None);
        assert_eq!(rule("--account-for-embedding-in-pipeline-split"), Some(StageSplitRule::EmbeddingAsBlock));
        assert_eq!(
            rule("account_for_embedding_in_pipeline_split: true, account_for_loss_in_pipeline_split: true"),
            Some(StageSplitRule::EndsAsBlocks)
        );
        assert_eq!(rule("account_for_loss_in_pipeline_split=False"), None);
        assert_eq!(rule("pipeline parallel 8, interleaved"), None);
    }

    fn sharding(fsdp: &str, dp: u64, cp: u64) -> (Sharding, Option<u64>) {
        let r = read_sharding(&ShardingInput { fsdp: Some(fsdp), dp, cp, ..ShardingInput::default() });
        (r.sharding, r.shard_group)
    }

    #[test]
    fn fsdp_words() {
        assert_eq!(sharding("FSDP 8", 32, 1), (Sharding::Zero3, Some(8)));
        // −1: every rank (torchtitan, MaxText), never a group of one.
        assert_eq!(sharding("FSDP over all ranks (data_parallel_shard_degree=-1)", 64, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("fully_shard, dp_shard: -1", 16, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("HSDP, shard degree -1, replicate 2", 16, 1), (Sharding::Zero3, Some(8)));
        assert_eq!(sharding("FSDP (ZeRO-1 style optimizer off), shard 4", 16, 1), (Sharding::Zero3, Some(4)));
        assert_eq!(
            sharding("ICI FSDP = 256 within slice; DCN data parallel = 8", 2048, 1),
            (Sharding::Zero3, Some(256))
        );
        assert_eq!(sharding("FSDP FULL_SHARD (ZeRO-3-like) across all GPUs", 64, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("FSDP (1D)", 8, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("FSDP2 over 8 ranks", 8, 1), (Sharding::Zero3, None));
        assert_eq!(sharding("FSDP 4", 4, 2), (Sharding::Zero3, None));
        assert_eq!(sharding("HSDP: shard 8, replicate 16", 128, 1), (Sharding::Zero3, Some(8)));
        assert_eq!(sharding("hybrid sharding, 4 replicas", 32, 1), (Sharding::Zero3, Some(8)));
        assert_eq!(sharding("SHARD_GRAD_OP", 16, 1), (Sharding::Zero2, None));
        assert_eq!(sharding("NO_SHARD", 16, 1), (Sharding::Ddp, None));
        assert_eq!(sharding("none", 16, 1).0, Sharding::Zero1);
        let apex = ShardingInput {
            optimizer: Some("distributed_fused_adam (NeMo 1)"),
            dp: 16,
            cp: 1,
            ..ShardingInput::default()
        };
        assert_eq!(read_sharding(&apex).sharding, Sharding::Zero2);
        let mcore =
            ShardingInput { optimizer: Some("mcore_distributed_optim"), dp: 16, cp: 1, ..ShardingInput::default() };
        assert_eq!(read_sharding(&mcore).sharding, Sharding::Zero1);
        let r = read_sharding(&ShardingInput { fsdp: Some("FSDP 6"), dp: 16, cp: 1, ..ShardingInput::default() });
        assert_eq!(r.shard_group, None);
        assert!(r.notes[0].contains("does not divide"));
        let r = read_sharding(&ShardingInput {
            optimizer: Some("Adam, fp32 master weights + states sharded by ZeRO-1 over DP"),
            dp: 8,
            cp: 1,
            ..ShardingInput::default()
        });
        assert_eq!(r.sharding, Sharding::Zero1);
    }

    #[test]
    fn precision_words() {
        let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let v100 = catalog::find_system("nvidia_v100_sxm2").unwrap();
        assert_eq!(read_precision(Some("fp8 linears (Float8) + bf16"), h100).0, Precision::Fp8);
        assert_eq!(read_precision(Some("fp16/bf16 mixed"), h100).0, Precision::Bf16);
        assert_eq!(read_precision(Some("fp16/bf16 mixed"), v100).0, Precision::Fp16);
        assert_eq!(read_precision(Some("amp_bf16"), h100).0, Precision::Bf16);
        assert_eq!(read_precision(Some("AMP"), v100).0, Precision::Fp16);
        assert_eq!(read_precision(Some("bfloat16"), h100), (Precision::Bf16, None));
        assert_eq!(read_precision(Some("int4"), h100).0, Precision::Bf16);
        assert!(read_precision(Some("int4"), h100).1.unwrap().contains("not understood"));
    }

    #[test]
    fn state_and_interleave_words() {
        let f = read_state_facts(
            Some("bf16 (torchtune dtype=bf16: bf16 weights, grads and optimizer states)"),
            Some("AdamW"),
        );
        assert!(f.pure_16bit);
        let f = read_state_facts(Some("bf16 mixed"), Some("AdamW fused into backward (optimizer_in_bwd=True)"));
        assert!(f.optimizer_in_backward && !f.pure_16bit);
    }

    #[test]
    fn autocast_over_fp32_parameters() {
        let amp = |p: &str| read_state_facts(Some(p), None).fp32_params_autocast;
        assert!(amp("bf16 autocast (amp_native) over fp32 parameters"));
        assert!(amp("AMP over FP32 weights"));
        // A mixed-precision policy casts the weights to 16 bits first; plain words say nothing.
        assert!(!amp("bf16 autocast, FSDP MixedPrecision param_dtype bf16 over fp32 parameters"));
        assert!(!amp("bf16 mixed precision (fp32 sharded master weights)"));
        assert!(!amp("fp32 parameters"));
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
        assert!(!read_state_facts(Some("FP8 with bf16 mixed; fp32 main params"), Some("Adam")).pure_16bit);
        assert_eq!(read_interleave("AsyncTP; interleaved 1F1B").map(|x| x.0), Some(2));
        assert_eq!(read_interleave("interleaved schedule, 4 virtual stages").map(|x| x.0), Some(4));
        assert_eq!(read_interleave("vpp=5").map(|x| x.0), Some(5));
        assert_eq!(read_interleave("1F1B"), None);
    }

    #[test]
    fn slice_words() {
        assert_eq!(read_slices("ICI FSDP = 192; DCN data parallel = 2"), Some(2));
        assert_eq!(read_slices("ICI FSDP = 256 within slice; DCN data parallel = 32"), Some(32));
        assert_eq!(read_slices("dcn_data_parallelism=4, ici_fsdp_parallelism=-1"), Some(4));
        assert_eq!(read_slices("FSDP across 2 slices"), Some(2));
        assert_eq!(read_slices("FSDP 8"), None);
        assert_eq!(read_slices("ICI FSDP = 64 within slice"), None);
    }
}
