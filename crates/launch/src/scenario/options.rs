//! The extended-mode switches a read file sets ([`ExtendedOptions`]): precision and FP8 weights,
//! compilation and the loss's head, recomputation (Megatron's block method as a share of the
//! blocks), context-parallel flavour, sharding and the training stack, the optimizer (Muon, pure
//! BF16, distributed-optimizer instances), torchtitan's own rules, per-step statistics, gradient
//! accumulation fusion, the layer spec and attention kernel, virtual pipeline stages and the
//! pipeline split's ends. Each rule applied where the file is silent or implies a switch is a
//! note. Degrees are counts of devices, the micro-batch is in samples, lengths in tokens.

use super::Overrides;
use super::layout::interleave;
use crate::Format;
use crate::settings::{Settings, Slot};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::muon::Optimizer;
use fmperf_core::extended::{
    AttentionKernel, ExtendedOptions, Fp8Recipe, Fusion, OptimizerStates, Recompute, Sharding, Stack, StageSplitRule,
    TransformerImpl, Workload,
};
use fmperf_core::validate::loss_words::liger_chunks;
use fmperf_core::vocab::{Note, NoteList};

/// The layout's degrees [devices] and micro-batch [samples] that a file's switches depend on.
#[derive(Debug, Clone, Copy)]
pub(super) struct Degrees {
    /// Tensor-parallel degree.
    pub tp: u64,
    /// Pipeline-parallel degree.
    pub pp: u64,
    /// Context-parallel degree.
    pub cp: u64,
    /// Data-parallel degree (shards × replicas).
    pub dp: u64,
    /// Data-parallel ranks that shard the states (torchtitan's `data_parallel_shard_degree`).
    pub shard: u64,
    /// Replicas of the sharded group (torchtitan's `data_parallel_replicate_degree`; else 1).
    pub replicate: u64,
    /// Micro-batch [samples].
    pub mbs: u64,
}

/// The switches of file `s` (format `f`, with the command line's `o`) for `workload` on the
/// layout `d`, each rule applied said in `notes`. Errors name the key and the rule: pure BF16
/// with ZeRO-3 or beside another precision, distributed-optimizer instances without the
/// distributed optimizer or not dividing the data-parallel ranks, virtual stages that do not
/// divide a stage's blocks.
pub(super) fn file_options(
    s: &Settings,
    f: Format,
    o: &Overrides,
    workload: &Workload,
    d: Degrees,
    notes: &mut Vec<Note>,
) -> Result<ExtendedOptions, Error> {
    let Degrees { tp, pp, cp, dp, shard, replicate, mbs } = d;
    let layers = workload.layers;
    let mut opts = ExtendedOptions::realistic();
    opts.hardware.precision = s.precision.copied().unwrap_or(Precision::Bf16);
    if s.fp8_weights.copied() == Some(true) {
        if opts.hardware.precision == Precision::Fp8 {
            opts.fp8_recipe = Fp8Recipe::TransformerEngineFp8Weights;
            notes.assumption(
                "FP8 primary weights (fp8_param_gather): the linear weights are FP8 (te_fp8_weights)".into(),
            );
        } else {
            notes.assumption("fp8_param_gather has no effect without FP8 linear layers".into());
        }
    }
    if let Some(compiled) = s.compiled.copied() {
        opts.fusion = if compiled { Fusion::Fused } else { Fusion::Eager };
        notes.assumption(if compiled {
            "torch.compile: fused element-wise kernels (fusion=fused)".to_string()
        } else {
            "no torch.compile: eager PyTorch element-wise kernels (fusion=eager)".to_string()
        });
    }
    if s.compiled_loss.copied() == Some(true) {
        opts.compiled_loss = true;
        notes.assumption("the loss is compiled with the model: no FP32 logits held (compiled_loss)".into());
    }
    if s.loss_head_chunked.copied() == Some(true) {
        let tokens = (mbs * workload.seq_len) as f64 / cp.max(1) as f64;
        let chunks = liger_chunks(tokens, workload.vocab.unwrap_or(0), workload.hidden);
        opts.loss_head_chunked = true;
        opts.loss_chunks = chunks;
        notes.reading_of(
            s.loss_head_chunked.key_or("use_liger_kernel"),
            format!(
                "{}: Liger's fused linear cross-entropy runs the output head and the loss chunk by chunk, {chunks} \
                 chunks of the micro-batch's {tokens} tokens (loss_head_chunked, loss_chunks={chunks}); its other \
                 fused kernels (RMSNorm, RoPE, SwiGLU) are priced as the stack's element-wise kernels",
                s.loss_head_chunked.key_or("use_liger_kernel")
            ),
        );
    }
    opts.recompute = s.recompute.copied().unwrap_or(Recompute::None);
    opts.sequence_parallel = s.sequence_parallel.copied().unwrap_or(false);
    if let Some(comm) = s.cp_comm.copied() {
        opts.cp_comm = comm;
    }
    if let Some(u) = s.cp_ulysses.copied() {
        opts.cp_ulysses = u;
    }
    opts.sharding = s.sharding.copied().unwrap_or(Sharding::Ddp);
    opts.stack = stack_of(f, &s.sharding);
    if let Some(optimizer) = s.optimizer.copied().filter(|o| o.is_muon()) {
        // Megatron-LM `arguments.py:1724–1736` (d98e8a6): Muon with the distributed optimizer
        // (or `dist_muon`) is the layer-wise distributed variant, whose states are sharded as
        // the distributed optimizer's; plain Muon keeps every state on every rank.
        let layer_wise = optimizer == Optimizer::DistMuon || opts.sharding == Sharding::Zero1;
        opts.optimizer = if layer_wise { Optimizer::DistMuon } else { Optimizer::Muon };
        if layer_wise && opts.sharding == Sharding::Ddp {
            opts.sharding = Sharding::Zero1;
        }
        notes.assumption(format!(
            "optimizer: Muon{} (optimizer={})",
            if layer_wise { ", layer-wise distributed over the data-parallel ranks" } else { " on every rank" },
            opts.optimizer.as_str()
        ));
    }
    if let Some(states) = s.optimizer_states.copied() {
        let key = s.optimizer_states.key_or("optimizer_states");
        // LLaMA-Factory refuses it: "`pure_bf16` is incompatible with DeepSpeed ZeRO-3."
        // (`src/llamafactory/hparams/parser.py` l. 502–503 at ff6d4d12).
        if states == OptimizerStates::PureBf16 && opts.stack == Stack::DeepSpeed && opts.sharding == Sharding::Zero3 {
            return Err(s.optimizer_states.error(
                "optimizer_states",
                "true",
                "pure BF16 training cannot run with DeepSpeed ZeRO-3 (LLaMA-Factory refuses the pair)",
            ));
        }
        // Pure BF16 computes in BF16: a file that also states FP16 or FP32 says two things.
        if let Some(p) = s.precision.copied().filter(|p| states == OptimizerStates::PureBf16 && *p != Precision::Bf16) {
            return Err(s.optimizer_states.error(
                "optimizer_states",
                "true",
                format!(
                    "pure BF16 training computes in BF16, but the file also states {} precision ({}); keep one",
                    p,
                    s.precision.key_or("precision")
                ),
            ));
        }
        opts.optimizer_states = states;
        notes.reading_of(
            key,
            format!(
                "{key}: weights, gradients and Adam moments in BF16, no FP32 master copy (optimizer_states={})",
                states.as_str()
            ),
        );
    }
    if let Some(n) = s.optimizer_instances.copied().filter(|n| *n > 1) {
        let ranks = dp * cp;
        if !matches!(opts.sharding, Sharding::Zero1 | Sharding::Zero2) {
            return Err(s.optimizer_instances.error(
                "optimizer_instances",
                n,
                "copies of the distributed optimizer need --use-distributed-optimizer (ZeRO-1)",
            ));
        }
        if !ranks.is_multiple_of(n) {
            return Err(s.optimizer_instances.error(
                "optimizer_instances",
                n,
                format!("must divide the data-parallel ranks dp·cp = {ranks}"),
            ));
        }
        opts.shard_group = Some(ranks / n);
        notes.assumption(format!(
            "{n} distributed-optimizer instances: optimizer states sharded within groups of {} ranks, \
             replicated across the {n} groups (shard_group={})",
            ranks / n,
            ranks / n
        ));
    }
    if f == Format::Torchtitan {
        if shard == 1 {
            opts.sharding = Sharding::Ddp;
            notes.assumption("data_parallel_shard_degree is 1: plain data parallelism (no FSDP)".into());
        } else if replicate > 1 {
            opts.shard_group = Some(shard * cp);
        }
        // torchtitan's loop calls `optimizers.zero_grad()` before each step: no gradient
        // buffer outlives the step (see `ExtendedOptions::grads_freed`).
        opts.grads_freed = true;
        notes.assumption("torchtitan frees the gradients between steps (zero_grad): grads_freed".into());
        // What torchtitan's version decides and the file cannot say (`crate::stack_memory`).
        let system = o.system.as_deref().or(s.system.get().map(String::as_str));
        let plain = shard == 1 && replicate == 1 && tp == 1 && pp == 1;
        crate::stack_memory::torchtitan_notes(system, opts.recompute, plain, notes);
        // torchtitan's Float8 is torchao's: weights and inputs cast on every pass, no
        // persistent FP8 weight copy (see `Fp8Recipe::Torchao`).
        if opts.hardware.precision == Precision::Fp8 {
            if s.fp8_all_gather.copied() == Some(true) {
                opts.fp8_recipe = Fp8Recipe::TorchaoFp8AllGather;
                notes.assumption(
                    "Float8 linear layers: torchao's recipe with FSDP's float8 all-gather, gathered weights in FP8 \
                     (fp8_recipe=torchao_fp8_gather)"
                        .into(),
                );
            } else {
                opts.fp8_recipe = Fp8Recipe::Torchao;
                notes.assumption(
                    "Float8 linear layers: torchao's recipe, cast on every pass (fp8_recipe=torchao)".into(),
                );
            }
        } else if s.fp8_all_gather.copied() == Some(true) {
            notes.assumption("float8.enable_fsdp_float8_all_gather has no effect without Float8 linear layers".into());
        }
        // torchtitan's models call `F.scaled_dot_product_attention` (or FlexAttention, also
        // FlashAttention-2 class): priced as such (see `AttentionKernel`).
        opts.attention_kernel = AttentionKernel::Fa2;
        notes.assumption(
            "attention: PyTorch SDPA (FlashAttention-2 class), torchtitan's kernel (attention_kernel=fa2)".into(),
        );
    }
    // Megatron's per-step statistics a file switches on (off by default, as in Megatron-LM).
    for (slot, on, switch) in [
        (&s.log_num_zeros_in_grad, &mut opts.log_num_zeros_in_grad, "log_num_zeros_in_grad"),
        (&s.log_params_norm, &mut opts.log_params_norm, "log_params_norm"),
    ] {
        if slot.copied() == Some(true) {
            *on = true;
            let key = slot.key_or(switch);
            notes.reading_of(key, format!("{key}: per-step host work of the statistic ({switch}=on)"));
        }
    }
    // Megatron's gradient-accumulation fusion, on unless a file turns it off.
    if s.grad_accumulation_fusion.copied() == Some(false) {
        opts.grad_accumulation_fusion = false;
        let key = s.grad_accumulation_fusion.key_or("grad_accumulation_fusion");
        notes.reading_of(
            key,
            format!(
                "{key}: each weight's 16-bit gradient added into the FP32 main gradient by the backward hook \
                 (grad_accumulation_fusion=off)"
            ),
        );
    }
    // Megatron-Core's RoPE fusion, on unless a file turns it off.
    if s.rope_fusion.copied() == Some(false) {
        opts.rope_fusion = false;
        let key = s.rope_fusion.key_or("rope_fusion");
        notes.reading_of(key, format!("{key}: RoPE as Megatron-Core's unfused element-wise kernels (rope_fusion=off)"));
    }
    // Megatron-Core's layer spec: the local spec's modules and, where no file states the
    // attention kernel, its core attention, Megatron-Core's unfused `DotProductAttention`.
    if let Some(spec) = s.transformer_impl.copied() {
        opts.transformer_impl = spec;
        let key = s.transformer_impl.key_or("transformer_impl");
        if spec == TransformerImpl::Local {
            notes.reading_of(
                key,
                format!(
                    "{key}: Megatron-Core's own modules, no Transformer Engine linear module (transformer_impl=local)"
                ),
            );
            if s.attention_kernel.copied().is_none() {
                opts.attention_kernel = AttentionKernel::Unfused;
                notes.reading_of(
                    key,
                    format!("{key}: Megatron-Core's DotProductAttention, unfused (attention_kernel=unfused)"),
                );
            }
        }
    }
    // The attention kernel a file states (Megatron's --attention-backend, Hugging Face's
    // attn_implementation) over the stack's default.
    if let Some(kernel) = s.attention_kernel.copied() {
        opts.attention_kernel = kernel;
        let key = s.attention_kernel.key_or("attention_kernel");
        let what = match kernel {
            AttentionKernel::Unfused => {
                "unfused attention, the score matrix computed in full and kept for the backward"
            }
            AttentionKernel::Fa2 => "a FlashAttention-2-class kernel",
            AttentionKernel::Native => "the part's own fused attention kernel",
        };
        notes.reading_of(key, format!("{key}: {what} (attention_kernel={kernel})"));
    }
    opts.interleave = interleave(s, layers, pp, notes)?;
    // Megatron's block method: the first `blocks` blocks of each model chunk (a stage, or one
    // of its virtual stages when interleaved) recomputed in full, the rest keeping every
    // activation — the partial level at that share.
    let per_chunk = layers.div_ceil(pp * opts.interleave.max(1));
    if let Some(blocks) = s.recompute_blocks.copied()
        && opts.recompute == Recompute::Full
        && blocks < per_chunk
    {
        opts.recompute = Recompute::of_share(blocks as f64 / per_chunk as f64);
        notes.assumption(format!(
            "{} = {blocks}: recomputation of {blocks} of {per_chunk} blocks per model chunk (recompute={})",
            s.recompute_blocks.key_or("recompute_num_layers"),
            opts.recompute
        ));
    }
    if s.fp32_grad_accumulation.copied() == Some(true) {
        opts.grad_accumulation_buffer = true;
    }
    let rule =
        StageSplitRule::counting(s.embedding_as_block.copied() == Some(true), s.head_as_block.copied() == Some(true));
    if rule != StageSplitRule::Blocks {
        if pp > 1 {
            opts.stage_split = rule;
            notes.assumption(rule.note());
        } else {
            notes.assumption(
                "the ends counted as blocks of the pipeline split have no effect without pipeline parallelism".into(),
            );
        }
    }
    Ok(opts)
}

/// The training stack of a file ([`Stack`]): MaxText's is JAX/XLA whatever its keys; otherwise
/// the one whose key set the sharding (Megatron-FSDP's keys → Megatron; other `fsdp…` keys →
/// PyTorch FSDP; ZeRO or DeepSpeed keys →
/// DeepSpeed), else the format's own (torchtitan shards as FSDP does, a Trainer YAML without
/// DeepSpeed uses PyTorch's, Megatron and NeMo files Megatron's).
fn stack_of(f: Format, sharding: &Slot<Sharding>) -> Stack {
    let key = sharding.origin.as_ref().map(|o| o.key.to_ascii_lowercase()).unwrap_or_default();
    let file = sharding.origin.as_ref().and_then(|o| o.file.clone()).unwrap_or_default().to_ascii_lowercase();
    if f == Format::MaxText {
        Stack::Jax
    } else if key.contains("megatron") && key.contains("fsdp") {
        // `--use-megatron-fsdp`, `ddp.use_megatron_fsdp`: Megatron's own ZeRO-3.
        Stack::Megatron
    } else if key.contains("fsdp") {
        Stack::Fsdp
    } else if key.contains("zero") || key.contains("deepspeed") || file.contains("ds_config") {
        Stack::DeepSpeed
    } else {
        match f {
            Format::Torchtitan | Format::TrainerYaml => Stack::Fsdp,
            Format::MaxText => Stack::Jax,
            Format::DeepSpeed => Stack::DeepSpeed,
            Format::Megatron | Format::NemoYaml | Format::HfConfig => Stack::Megatron,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LaunchScenario, Overrides};
    use super::*;
    use crate::parse;

    #[test]
    fn megatron_block_method_is_the_partial_level() {
        // 32 layers on pp = 2: 16 blocks per stage, 4 of them recomputed → a quarter of the forward.
        let script = |k: u64| {
            format!(
                "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \
                 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 \
                 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --vocab-size 32000 \
                 --recompute-granularity full --recompute-method block --recompute-num-layers {k}"
            )
        };
        let of = |k| LaunchScenario::from_launch(&parse(&script(k), None).unwrap(), &Overrides::default()).unwrap();
        let sc = of(4);
        assert_eq!(sc.options.recompute, Recompute::of_share(0.25));
        assert!(
            sc.assumptions.iter().any(|n| n.contains("4 of 16 blocks per model chunk (recompute=0.25)")),
            "{:?}",
            sc.assumptions
        );
        // Every block of the stage is full recomputation.
        assert_eq!(of(16).options.recompute, Recompute::Full);
        // Interleaved, the method counts in each virtual stage's blocks: 2 of 4 is half.
        let vp = LaunchScenario::from_launch(
            &parse(&format!("{} --num-layers-per-virtual-pipeline-stage 4", script(2)), None).unwrap(),
            &Overrides::default(),
        )
        .unwrap();
        assert_eq!(vp.options.recompute, Recompute::of_share(0.5));
    }

    #[test]
    fn megatron_statistics_and_fusion_switch_only_when_stated() {
        let script = "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 12 --hidden-size 512 \
                      --num-attention-heads 8 --seq-length 1024 --micro-batch-size 4 --global-batch-size 32 --bf16 \
                      --vocab-size 50257";
        let of = |extra: &str| {
            LaunchScenario::from_launch(&parse(&format!("{script} {extra}"), None).unwrap(), &Overrides::default())
                .unwrap()
        };
        let plain = of("");
        assert!(!plain.options.log_num_zeros_in_grad && !plain.options.log_params_norm);
        let logged = of("--log-num-zeros-in-grad --log-params-norm");
        assert!(logged.options.log_num_zeros_in_grad && logged.options.log_params_norm);
        assert!(logged.assumptions.iter().any(|n| n.contains("log_params_norm=on")), "{:?}", logged.assumptions);
        // Gradient-accumulation fusion: on (Megatron's default) unless the file turns it off.
        assert!(plain.options.grad_accumulation_fusion);
        let unfused = of("--no-gradient-accumulation-fusion");
        assert!(!unfused.options.grad_accumulation_fusion);
        // RoPE fusion likewise (`--no-rope-fusion`).
        assert!(plain.options.rope_fusion);
        let rope = of("--no-rope-fusion");
        assert!(!rope.options.rope_fusion && rope.assumptions.iter().any(|n| n.contains("rope_fusion=off")));
        assert!(
            unfused.assumptions.iter().any(|n| n.contains("grad_accumulation_fusion=off")),
            "{:?}",
            unfused.assumptions
        );
        // The layer spec: Transformer Engine's (Megatron's default) unless a file says local, whose
        // core attention is unfused where no backend is stated.
        assert_eq!(plain.options.transformer_impl, TransformerImpl::TransformerEngine);
        let local = of("--transformer-impl local");
        assert_eq!(local.options.transformer_impl, TransformerImpl::Local);
        assert_eq!(local.options.attention_kernel, AttentionKernel::Unfused);
        assert!(local.assumptions.iter().any(|n| n.contains("transformer_impl=local")), "{:?}", local.assumptions);
        let flash = of("--transformer-impl local --attention-backend flash");
        assert_eq!(flash.options.attention_kernel, AttentionKernel::Fa2);
    }

    #[test]
    fn megatron_optimizer_instances_are_a_shard_group() {
        // 64 devices, tp 2, pp 1: dp 32; 4 copies of the distributed optimizer shard its states
        // within groups of 8 ranks.
        let script = |extra: &str| {
            format!(
                "torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py --num-layers 8 --hidden-size 2048 \
                 --num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 --global-batch-size 256 --bf16 \
                 --tensor-model-parallel-size 2 {extra}"
            )
        };
        let read =
            |extra: &str| LaunchScenario::from_launch(&parse(&script(extra), None).unwrap(), &Overrides::default());
        let sc = read("--use-distributed-optimizer --num-distributed-optimizer-instances 4").unwrap();
        assert_eq!((sc.options.sharding, sc.options.shard_group), (Sharding::Zero1, Some(8)));
        assert!(sc.assumptions.iter().any(|n| n.contains("4 distributed-optimizer instances")), "{:?}", sc.assumptions);
        assert_eq!(read("--use-distributed-optimizer").unwrap().options.shard_group, None);
        let e = read("--use-distributed-optimizer --num-distributed-optimizer-instances 5").unwrap_err();
        assert!(e.to_string().contains("must divide the data-parallel ranks dp·cp = 32"), "{e}");
        let e = read("--num-distributed-optimizer-instances 4").unwrap_err();
        assert!(e.to_string().contains("--use-distributed-optimizer"), "{e}");
    }

    #[test]
    fn megatron_muon_is_read_with_its_distribution() {
        // `--optimizer muon` alone: every rank; with the distributed optimizer (or `dist_muon`):
        // layer-wise, states sharded as ZeRO-1 (Megatron-LM arguments.py:1724–1736).
        let script = |extra: &str| {
            format!(
                "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 2048 \
                 --num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 {extra}"
            )
        };
        let read =
            |extra: &str| LaunchScenario::from_launch(&parse(&script(extra), None).unwrap(), &Overrides::default());
        let o = |extra: &str| {
            let sc = read(extra).unwrap();
            (sc.options.optimizer, sc.options.sharding)
        };
        assert_eq!(o(""), (Optimizer::Adam, Sharding::Ddp));
        assert_eq!(o("--optimizer adam --use-distributed-optimizer"), (Optimizer::Adam, Sharding::Zero1));
        assert_eq!(o("--optimizer muon"), (Optimizer::Muon, Sharding::Ddp));
        assert_eq!(o("--optimizer muon --use-distributed-optimizer"), (Optimizer::DistMuon, Sharding::Zero1));
        assert_eq!(o("--optimizer dist_muon"), (Optimizer::DistMuon, Sharding::Zero1));
        let sc = read("--optimizer muon").unwrap();
        assert!(sc.assumptions.iter().any(|n| n.contains("Muon on every rank")), "{:?}", sc.assumptions);
        // An optimizer fmperf does not price is listed as not read, Adam priced.
        let sc = read("--optimizer lion").unwrap();
        assert_eq!(sc.options.optimizer, Optimizer::Adam);
    }
}
