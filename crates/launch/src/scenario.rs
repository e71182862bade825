//! A read configuration as a scenario fmperf evaluates: the model as an extended-mode
//! [`Workload`], the system and device count, the global batch, and the fixed configuration
//! (tensor, pipeline, context and data parallel degrees, micro-batch, virtual stages,
//! recomputation, sharding, sequence parallelism, precision) as [`ExtendedOptions`].
//!
//! The framework's defaults where the file is silent are applied here, each with a note:
//! Megatron's `ffn = 4h` (SwiGLU: `⌊8h/3 / 64⌋·64`), vocabulary padding to `128·tp`, a global batch
//! of `mbs·dp`; torchtitan's `local_batch_size` of 8; degrees of 1.

use super::settings::{SettingOrigin, Settings, Slot};
use super::{Format, Launch, experts, hub_models};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::moe::ExpertLayout;
use fmperf_core::extended::muon::Optimizer;
use fmperf_core::extended::{
    AttentionKernel, ExtendedOptions, Fp8Recipe, Fusion, Layout, OptimizerStates, Recompute, Sharding, Stack,
    StageSplitRule, TransformerImpl, Workload,
};
use fmperf_core::validate::loss_words::liger_chunks;
use fmperf_core::vocab::{Note, NoteList};

/// What the command line (or the page) sets beside the file; each wins over the file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Overrides {
    /// The system: a catalog id or spec (`nvidia_h100_sxm5_80gb,domain=8`).
    pub system: Option<String>,
    /// Devices of the run.
    pub gpus: Option<u64>,
    /// Global batch [samples].
    pub global_batch: Option<u64>,
    /// Training sequence length [tokens] (model-only files have none).
    pub seq_len: Option<u64>,
    /// Extended mode's switches set over the file's (`--ext`'s text, `key=value,…`;
    /// [`crate::switch_overrides::set_over`]).
    pub switches: Option<String>,
}

/// A configuration ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchScenario {
    /// The model's name as the file gives it.
    pub model_name: String,
    /// The model (sequence length included).
    pub workload: Workload,
    /// The system (catalog id or spec), when known.
    pub system: Option<String>,
    /// Devices `tp·cp·pp·dp`.
    pub devices: u64,
    /// Degrees, micro-batch and global batch (placed for a domain of one device; the estimate
    /// places it on the system's domain).
    pub layout: Layout,
    /// The extended-mode switches of this configuration.
    pub options: ExtendedOptions,
    /// Rules applied where the file is silent, in words.
    pub assumptions: Vec<Note>,
    /// Where each value of the configuration came from: `(field, place)`, the place being
    /// `file: key (line N)`, a command-line flag (`--gpus`) or `default` / `derived`.
    pub origins: Vec<(String, String)>,
}

/// Where a slot's value came from, for [`LaunchScenario::origins`].
fn place<T>(slot: &Slot<T>, flag_override: Option<&str>) -> String {
    if let Some(flag) = flag_override {
        return format!("{flag} (command line)");
    }
    match &slot.origin {
        Some(o) => {
            let file = o.file.as_deref().map(|f| format!("{f}: ")).unwrap_or_default();
            if o.line > 0 { format!("{file}{} (line {})", o.key, o.line) } else { format!("{file}{}", o.key) }
        }
        None if slot.value.is_some() => "read".into(),
        None => "default or derived".into(),
    }
}

/// The name of a field in the file's own language, for messages about a missing value.
fn key(format: Format, megatron: &str, yaml: &str, toml: &str, hf: &str) -> String {
    match format {
        Format::Megatron => format!("--{megatron}"),
        Format::NemoYaml => yaml.to_string(),
        Format::Torchtitan => toml.to_string(),
        Format::HfConfig => hf.to_string(),
        Format::MaxText => megatron.replace('-', "_"),
        Format::DeepSpeed => hf.to_string(),
        Format::TrainerYaml => megatron.replace('-', "_"),
    }
}

fn required(slot: &Slot<u64>, name: String) -> Result<u64, Error> {
    slot.copied().ok_or(Error::MissingField { field: name })
}

impl LaunchScenario {
    /// The scenario of `launch` with `o` applied. Errors name the flag or key (or the override)
    /// and the rule: a missing model dimension, devices that the degrees do not divide, a batch
    /// that `dp·mbs` does not divide, expert-parallel degrees that do not fold (`ep` not dividing the
    /// experts, `ep·etp` not dividing `tp·cp·dp`), a model-only file without a layout.
    pub fn from_launch(launch: &Launch, o: &Overrides) -> Result<LaunchScenario, Error> {
        let s = &launch.settings;
        let f = launch.format;
        if f == Format::DeepSpeed {
            return Err(Error::invalid(
                "layout",
                "DeepSpeed JSON",
                "a DeepSpeed JSON holds the batch, ZeRO stage and precision, not the model: read it together with \
                 its launch script (`--from run.sh --from ds_config.json`)",
            ));
        }
        if f == Format::HfConfig {
            return Err(Error::invalid(
                "layout",
                "config.json",
                "a Hugging Face config.json holds the model only, not a parallel layout to estimate; \
                 search for one with `fmperf search --from config.json --system ID --gpus N --global-batch G --seq-len S`",
            ));
        }
        let tp = s.tp.copied().unwrap_or(1);
        let model = ModelOnly::from_launch(launch, o, tp)?;
        let (workload, mut notes) = (model.workload, model.notes);
        let layers = workload.layers;
        let pp = s.pp.copied().unwrap_or(1);
        let cp = s.cp.copied().unwrap_or(1);
        let (devices, devices_origin) = devices(s, o, f, tp * pp * cp)?;
        let replicate = if f == Format::Torchtitan { s.dp_replicate.copied().unwrap_or(1) } else { 1 };
        let model_parallel = tp * pp * cp * replicate;
        if !devices.is_multiple_of(model_parallel) {
            return Err(devices_origin.error(
                devices,
                format!(
                    "must be a multiple of tp·pp·cp{} = {model_parallel}",
                    if replicate > 1 { "·replicas" } else { "" }
                ),
            ));
        }
        let shard = devices / model_parallel;
        if let Some(d) = s.dp.copied()
            && d != shard
        {
            return Err(s.dp.error(
                "dp",
                d,
                format!("the degrees need {} devices, the run has {devices}", d * model_parallel),
            ));
        }
        let dp = shard * replicate;
        let (mbs, global_batch) = batch(s, o, f, dp, pp, &mut notes)?;
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
            if states == OptimizerStates::PureBf16 && opts.stack == Stack::DeepSpeed && opts.sharding == Sharding::Zero3
            {
                return Err(s.optimizer_states.error(
                    "optimizer_states",
                    "true",
                    "pure BF16 training cannot run with DeepSpeed ZeRO-3 (LLaMA-Factory refuses the pair)",
                ));
            }
            // Pure BF16 computes in BF16: a file that also states FP16 or FP32 says two things.
            if let Some(p) =
                s.precision.copied().filter(|p| states == OptimizerStates::PureBf16 && *p != Precision::Bf16)
            {
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
            crate::stack_memory::torchtitan_notes(system, opts.recompute, plain, &mut notes);
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
                notes.assumption(
                    "float8.enable_fsdp_float8_all_gather has no effect without Float8 linear layers".into(),
                );
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
        // Megatron-Core's layer spec: the local spec's modules and, where no file states the
        // attention kernel, its core attention, Megatron-Core's unfused `DotProductAttention`.
        if let Some(spec) = s.transformer_impl.copied() {
            opts.transformer_impl = spec;
            let key = s.transformer_impl.key_or("transformer_impl");
            if spec == TransformerImpl::Local {
                notes.reading_of(
                    key,
                    format!("{key}: Megatron-Core's own modules, no Transformer Engine linear module (transformer_impl=local)"),
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
        opts.interleave = interleave(s, layers, pp, &mut notes)?;
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
        let rule = StageSplitRule::counting(
            s.embedding_as_block.copied() == Some(true),
            s.head_as_block.copied() == Some(true),
        );
        if rule != StageSplitRule::Blocks {
            if pp > 1 {
                opts.stage_split = rule;
                notes.assumption(rule.note());
            } else {
                notes.assumption(
                    "the ends counted as blocks of the pipeline split have no effect without pipeline parallelism"
                        .into(),
                );
            }
        }
        let mut layout = Layout::placed(tp, cp, pp, dp, mbs, global_batch, 1);
        if let Some(m) = &workload.moe {
            opts.moe = experts::options(&s.moe, f, tp, &mut notes)?;
            let (ep, etp) = (opts.moe.ep.unwrap_or(1), opts.moe.etp.unwrap_or(1));
            layout = layout.with_experts(ep, etp);
            ExpertLayout::fold(&layout, m, ep, etp).map_err(|e| {
                let about_etp = e.is_at(ExpertLayout::ETP_FIELD);
                let slot = if about_etp { &s.moe.etp } else { &s.moe.ep };
                let (fallback, v) =
                    if about_etp { ("expert_tensor_parallel_size", etp) } else { ("expert_model_parallel_size", ep) };
                match &e {
                    Error::InvalidField { rule, .. } => slot.error(fallback, v, rule.clone()),
                    _ => e,
                }
            })?;
        }
        let origins = vec![
            (
                "devices".to_string(),
                format!("{} ({})", devices_origin.key, if o.gpus.is_some() { "command line" } else { "file" }),
            ),
            ("system".into(), place(&s.system, o.system.as_ref().map(|_| "--system"))),
            ("tp".into(), place(&s.tp, None)),
            ("pp".into(), place(&s.pp, None)),
            ("cp".into(), place(&s.cp, None)),
            ("dp".into(), place(&s.dp, None)),
            ("ep".into(), place(&s.moe.ep, None)),
            (
                "vpp".into(),
                if s.vpp.value.is_some() { place(&s.vpp, None) } else { place(&s.layers_per_virtual_stage, None) },
            ),
            ("mbs".into(), place(&s.mbs, None)),
            ("global_batch".into(), place(&s.global_batch, o.global_batch.map(|_| "--global-batch"))),
            ("seq_len".into(), place(&s.seq_len, o.seq_len.map(|_| "--seq-len"))),
            ("layers".into(), place(&s.layers, None)),
            ("hidden".into(), place(&s.hidden, None)),
            ("vocab".into(), place(&s.vocab, None)),
        ];
        // The user's switches over the file's, last: they win over whatever the file implied.
        let opts = crate::switch_overrides::set_over(opts, o.switches.as_deref(), &mut notes)?;
        Ok(LaunchScenario {
            model_name: model.name,
            workload,
            system: o.system.clone().or_else(|| s.system.get().cloned()),
            devices,
            layout,
            options: opts,
            assumptions: notes,
            origins,
        })
    }
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

/// The model a file describes, without a layout (what `fmperf search --from` needs).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelOnly {
    /// Its name as the file gives it (or the file's format).
    pub name: String,
    /// The model with its training sequence length.
    pub workload: Workload,
    /// Rules applied where the file is silent.
    pub notes: Vec<Note>,
}

impl ModelOnly {
    /// The model of `launch` (its vocabulary padded for tensor-parallel degree `tp` as Megatron
    /// pads it). Errors name the missing or invalid flag or key.
    pub fn from_launch(launch: &Launch, o: &Overrides, tp: u64) -> Result<ModelOnly, Error> {
        let f = launch.format;
        let mut notes: Vec<Note> = Vec::new();
        // A launch that names a well-known model but not its shape (a Trainer launch).
        let named = hub_models::filled(&launch.settings);
        let s = match &named {
            Some((filled, note)) => {
                notes.assumption(note.clone());
                filled
            }
            None => &launch.settings,
        };
        let hidden = required(&s.hidden, key(f, "hidden-size", "model.hidden_size", "model.flavor", "hidden_size"))?;
        let layers =
            required(&s.layers, key(f, "num-layers", "model.num_layers", "model.flavor", "num_hidden_layers"))?;
        let heads = required(
            &s.heads,
            key(f, "num-attention-heads", "model.num_attention_heads", "model.flavor", "num_attention_heads"),
        )?;
        let gated = s.gated_mlp.copied().unwrap_or(false);
        let ffn = match s.ffn_hidden.copied() {
            Some(v) => v,
            None if f == Format::HfConfig => 4 * hidden,
            None => {
                let v = if gated { (8 * hidden / 3) / 64 * 64 } else { 4 * hidden };
                notes.assumption(format!(
                    "MLP width not given: Megatron's default {v} ({})",
                    if gated { "⌊8h/3 / 64⌋·64 with SwiGLU" } else { "4h" }
                ));
                v
            }
        };
        let seq_len = match (o.seq_len, s.seq_len.copied()) {
            (Some(v), _) | (None, Some(v)) => v,
            (None, None) => {
                return Err(Error::MissingField {
                    field: key(f, "seq-length", "model.encoder_seq_length", "training.seq_len", "--seq-len"),
                });
            }
        };
        let vocab = vocab(s, f, tp, &mut notes)?;
        let moe = if s.moe.is_moe() {
            Some(experts::model(&s.moe, f, layers, ffn, gated, &mut notes).map_err(|e| rename_model_error(e, s))?)
        } else {
            None
        };
        let workload = Workload {
            seq_len,
            hidden,
            heads,
            kv_heads: s.kv_heads.copied().unwrap_or(heads),
            head_dim: s.head_dim.copied().unwrap_or(hidden / heads.max(1)),
            layers,
            ffn_hidden: ffn,
            gated_mlp: gated,
            vocab,
            // Megatron-LM ties unless told `--untie-embeddings-and-output-weights`; the other
            // readers set the key from their file.
            tied_embeddings: s.tied_embeddings.copied().unwrap_or(true),
            sliding_window: crate::window::model(s, layers, &mut notes)?,
            moe: moe.as_ref().map(|m| m.shape),
            mla: moe.as_ref().and_then(|m| m.mla),
            mtp_layers: moe.as_ref().map_or(0, |m| m.mtp_layers),
        };
        workload.validate().map_err(|e| rename_model_error(e, s))?;
        notes.extend(workload.alignment_caveat());
        let name = s.model_name.get().cloned().unwrap_or_else(|| match catalog_model(&workload) {
            Some(id) => format!("{id} (the catalog's shape)"),
            None => "custom model".to_string(),
        });
        Ok(ModelOnly { name, workload, notes })
    }
}

/// The catalog model with the shape of `w` (width, depth, heads, K/V heads, MLP, gating, experts;
/// the dense MLP width only when the model has dense blocks; the vocabulary may differ by
/// Megatron's padding, the sequence length by the run's choice), so that the explorer can search
/// the file's model.
pub fn catalog_model(w: &Workload) -> Option<&'static str> {
    fmperf_core::catalog::models().iter().find_map(|m| {
        let c = Workload::from_catalog(m).ok()?;
        let all_moe = w.moe.is_some_and(|m| m.moe_blocks(w.layers) == w.layers);
        let same = (c.hidden, c.layers, c.heads, c.kv_heads, c.gated_mlp)
            == (w.hidden, w.layers, w.heads, w.kv_heads, w.gated_mlp)
            && (all_moe || c.ffn_hidden == w.ffn_hidden)
            && same_experts(&c, w);
        let vocab_close = match (c.vocab, w.vocab) {
            (Some(a), Some(b)) => b >= a && b - a < 4096,
            _ => false,
        };
        (same && vocab_close).then_some(m.id.as_str())
    })
}

/// Whether two models have the same experts (count, widths, top-k, shared experts' total width,
/// pattern; the router's scoring does not change the shape), the same latent attention and MTP
/// blocks.
fn same_experts(c: &Workload, w: &Workload) -> bool {
    let key = |m: &fmperf_core::moe_shape::MoeShape| {
        (m.experts, m.expert_ffn, m.top_k, m.shared_experts * m.shared_ffn, m.first_dense, m.moe_every)
    };
    c.moe.as_ref().map(key) == w.moe.as_ref().map(key) && c.mla == w.mla && c.mtp_layers == w.mtp_layers
}

/// A workload error named by the file's flag when there is one: the core's field paths (the
/// reference shape's short names too) and the flags that set them.
fn rename_model_error(e: Error, s: &Settings) -> Error {
    let (heads, hidden, seq_len) = (s.heads.origin.as_ref(), s.hidden.origin.as_ref(), s.seq_len.origin.as_ref());
    let flags = [
        ("model.kv_heads", s.kv_heads.origin.as_ref()),
        ("model.head_dim", s.head_dim.origin.as_ref()),
        ("model.vocab", s.vocab.origin.as_ref()),
        ("model.h", heads),
        ("model.heads", heads),
        ("model.e", hidden),
        ("model.hidden", hidden),
        ("model.l", seq_len),
        ("model.seq_len", seq_len),
    ];
    experts::at_flag(e, &flags)
}

/// The vocabulary, padded as Megatron pads it (to a multiple of `make-vocab-size-divisible-by ·
/// tp`, default 128) for Megatron and NeMo files.
///
/// A file that does not say its vocabulary (a tokenizer file whose size is in the file's contents,
/// not its name) is estimated without the embedding and the output head, and a note says so and
/// how to give it: an omission stated, never a guessed number.
fn vocab(s: &Settings, f: Format, tp: u64, notes: &mut Vec<Note>) -> Result<Option<u64>, Error> {
    let Some(v) = s.vocab.copied() else {
        let k =
            key(f, "vocab-size", "model.tokenizer (a tokenizer fmperf knows by name)", "model.flavor", "vocab_size");
        notes.assumption(format!(
            "vocabulary not stated: the embedding and the output head are left out of the estimate (time per \
             step and memory per device somewhat low, more so for small models); give {k}"
        ));
        return Ok(None);
    };
    if !matches!(f, Format::Megatron | Format::NemoYaml) {
        return Ok(Some(v));
    }
    let multiple = s.vocab_divisible_by.copied().unwrap_or(128) * tp;
    let padded = v.div_ceil(multiple) * multiple;
    if padded != v {
        notes.assumption(format!(
            "vocabulary {v} padded to {padded} (a multiple of make-vocab-size-divisible-by·tp = {multiple})"
        ));
    }
    Ok(Some(padded))
}

/// The device count and where it came from.
fn devices(s: &Settings, o: &Overrides, f: Format, model_parallel: u64) -> Result<(u64, SettingOrigin), Error> {
    if let Some(n) = o.gpus {
        return Ok((n, SettingOrigin::new("--gpus", 0)));
    }
    if let (Some(n), Some(origin)) = (s.devices.copied(), &s.devices.origin) {
        return Ok((n, origin.clone()));
    }
    if let Some(per_node) = s.devices_per_node.copied() {
        let nodes = s.nodes.copied().unwrap_or(1);
        let origin = s.devices_per_node.origin.clone().unwrap_or(SettingOrigin::new("devices", 0));
        return Ok((per_node * nodes, origin.with_key(format!("{} × nodes", origin.key))));
    }
    if f == Format::Torchtitan
        && let Some(shard) = s.dp.copied()
    {
        let replicate = s.dp_replicate.copied().unwrap_or(1);
        return Ok((model_parallel * shard * replicate, SettingOrigin::new("parallelism", 0)));
    }
    Err(Error::invalid("--gpus", "missing", "the file does not say how many devices run it")
        .with_hint("give --gpus N, or a `# fmperf: gpus=N` line in the file"))
}

/// Micro-batch and global batch.
fn batch(s: &Settings, o: &Overrides, f: Format, dp: u64, pp: u64, notes: &mut Vec<Note>) -> Result<(u64, u64), Error> {
    let (mbs, default_global) = if f == Format::Torchtitan {
        let local = s.local_batch.copied().unwrap_or_else(|| {
            notes.assumption("training.local_batch_size not given: torchtitan's default 8".into());
            8
        });
        let mbs = if pp > 1 { s.mbs.copied().unwrap_or(1) } else { local };
        if !local.is_multiple_of(mbs) {
            return Err(s.mbs.error(
                "parallelism.pipeline_parallel_microbatch_size",
                mbs,
                format!("must divide training.local_batch_size = {local}"),
            ));
        }
        (mbs, local * dp)
    } else {
        let mbs = required(&s.mbs, key(f, "micro-batch-size", "model.micro_batch_size", "", ""))?;
        match s.grad_accumulation.copied() {
            Some(ga) => (mbs, mbs * ga * dp),
            None => (mbs, mbs * dp),
        }
    };
    if let (Some(ga), Some(g)) = (s.grad_accumulation.copied(), o.global_batch.or(s.global_batch.copied()))
        && g != mbs * ga * dp
        && f != Format::Torchtitan
    {
        let origin = s.grad_accumulation.origin.clone().unwrap_or(SettingOrigin::new("gradient accumulation", 0));
        return Err(origin.error(
            ga,
            format!("the global batch {g} is not micro-batch × accumulation × data-parallel = {mbs} × {ga} × {dp}"),
        ));
    }
    let global = match (o.global_batch, s.global_batch.copied()) {
        (Some(g), _) | (None, Some(g)) => g,
        (None, None) => {
            if s.grad_accumulation.value.is_some() {
                notes.assumption(format!(
                    "global batch: micro-batch × gradient accumulation × data-parallel = {default_global}"
                ));
            } else {
                notes.assumption(format!("global batch not given: micro-batch × data-parallel = {default_global}"));
            }
            default_global
        }
    };
    if !global.is_multiple_of(mbs * dp) {
        let origin = if o.global_batch.is_some() {
            SettingOrigin::new("--global-batch", 0)
        } else {
            s.global_batch.origin.clone().unwrap_or(SettingOrigin::new("global batch", 0))
        };
        return Err(origin.error(global, format!("must be a multiple of micro-batch × data-parallel = {mbs} × {dp}")));
    }
    Ok((mbs, global))
}

/// Virtual pipeline stages per device: `vpp`, or `layers / (pp · layers per virtual stage)`.
fn interleave(s: &Settings, layers: u64, pp: u64, notes: &mut Vec<Note>) -> Result<u64, Error> {
    let v = match (s.vpp.copied(), s.layers_per_virtual_stage.copied()) {
        (Some(v), _) => v,
        (None, Some(per)) => {
            let stage = layers / pp;
            if !layers.is_multiple_of(pp) || !stage.is_multiple_of(per) {
                return Err(s.layers_per_virtual_stage.error(
                    "layers per virtual stage",
                    per,
                    format!("must divide the blocks per pipeline stage {layers}/{pp}"),
                ));
            }
            stage / per
        }
        (None, None) => 1,
    };
    if v > 1 && pp == 1 {
        notes.assumption("virtual pipeline stages without pipeline parallelism: no interleaving".into());
        return Ok(1);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    #[test]
    fn megatron_script_becomes_a_scenario() {
        let l = parse(
            "torchrun --nproc_per_node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \
             --num-attention-heads 32 --group-query-attention --num-query-groups 8 --swiglu --seq-length 8192 \
             --micro-batch-size 1 --global-batch-size 256 --bf16 --tensor-model-parallel-size 4 \
             --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4 --vocab-size 128256 \
             --use-distributed-optimizer --sequence-parallel --recompute-activations",
            None,
        )
        .unwrap();
        let sc = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap();
        let y = sc.layout;
        assert_eq!((sc.devices, y.tp, y.pp, y.dp, y.mbs, y.global_batch), (32, 4, 2, 4, 1, 256));
        assert_eq!(sc.workload.ffn_hidden, 10880); // ⌊8·4096/3 / 64⌋·64
        assert_eq!(sc.workload.vocab, Some(128_512)); // padded to 512
        assert_eq!(sc.options.interleave, 4);
        assert_eq!(sc.options.sharding, Sharding::Zero1);
        assert_eq!(sc.options.recompute, Recompute::Selective);
        let e = LaunchScenario::from_launch(&l, &Overrides { gpus: Some(12), ..Overrides::default() }).unwrap_err();
        assert_eq!(e.field(), Some("--gpus"));
        let e = LaunchScenario::from_launch(&l, &Overrides { global_batch: Some(255), ..Overrides::default() })
            .unwrap_err();
        assert_eq!(e.field(), Some("--global-batch"));
    }

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

    #[test]
    fn catalog_twins_are_found() {
        let w = Workload { vocab: Some(128_512), ..Workload::LLAMA3_8B };
        assert_eq!(catalog_model(&w), Some("llama3-8b"));
        assert_eq!(catalog_model(&Workload { layers: 31, ..w }), None);
    }

    #[test]
    fn torchtitan_hsdp_and_missing_devices() {
        let t = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n\
                 [parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = -1\n";
        let l = parse(t, None).unwrap();
        let e = LaunchScenario::from_launch(&l, &Overrides::default()).unwrap_err();
        assert_eq!(e.field(), Some("--gpus"));
        let sc = LaunchScenario::from_launch(&l, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap();
        assert_eq!((sc.layout.dp, sc.layout.mbs, sc.layout.global_batch), (16, 2, 32));
        assert_eq!(sc.options.sharding, Sharding::Zero3);
        assert_eq!(sc.options.shard_group, Some(8));
    }

    #[test]
    fn model_only_and_moe_files_say_why() {
        let hf = parse(
            "{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100}",
            None,
        )
        .unwrap();
        let e = LaunchScenario::from_launch(&hf, &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains("--seq-len"), "{e}");
        let e =
            LaunchScenario::from_launch(&hf, &Overrides { seq_len: Some(128), ..Overrides::default() }).unwrap_err();
        assert!(e.to_string().contains("fmperf search --from"), "{e}");
        // An MoE launch evaluates (it was rejected before MoE was modelled): its experts, their
        // degrees (etp defaulting to tp as in Megatron) and a catalog twin.
        let base = "python pretrain_gpt.py --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \
                    --num-attention-heads 32 --group-query-attention --num-query-groups 8 --swiglu --seq-length 4096 \
                    --micro-batch-size 1 --global-batch-size 64 --bf16 --vocab-size 32000 --num-experts 8 \
                    --moe-router-topk 2 --tensor-model-parallel-size 2";
        let moe = parse(&format!("{base} --expert-model-parallel-size 4"), None).unwrap();
        let sc = LaunchScenario::from_launch(&moe, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap();
        let m = sc.workload.moe.unwrap();
        assert_eq!((m.experts, m.top_k, m.expert_ffn, m.first_dense, m.moe_every), (8, 2, 14336, 0, 1));
        assert_eq!((sc.layout.ep, sc.layout.etp), (4, 2));
        assert_eq!(catalog_model(&sc.workload), Some("mixtral-8x7b"));
        // ep·etp = 3·2 does not divide tp·dp = 16; ep = 3 does not divide 8 experts.
        let bad = parse(&format!("{base} --expert-model-parallel-size 3"), None).unwrap();
        let e = LaunchScenario::from_launch(&bad, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap_err();
        assert_eq!(e.field(), Some("--expert-model-parallel-size"));
        assert!(e.to_string().contains("must divide the routed experts 8"), "{e}");
        let bad =
            parse(&format!("{base} --expert-model-parallel-size 8 --expert-tensor-parallel-size 4"), None).unwrap();
        let e = LaunchScenario::from_launch(&bad, &Overrides { gpus: Some(16), ..Overrides::default() }).unwrap_err();
        assert_eq!(e.field(), Some("--expert-model-parallel-size"));
        assert!(e.to_string().contains("ep·etp = 32 must divide"), "{e}");
    }
}
