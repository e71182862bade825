//! Megatron-LM launches: the flags of `pretrain_gpt.py` (and NeMo's Megatron scripts) in a command
//! line or a shell script, `--flag value` and `--flag=value`, with the launcher's device count
//! (`torchrun --nproc_per_node N --nnodes M`, `#SBATCH --nodes`/`--gpus-per-node`).
//!
//! The flags fmperf reads are matched by name in [`apply`], which the NeMo / Megatron-Bridge YAML
//! reader shares (its keys are the same names with underscores). Megatron's defaults where a flag
//! is absent (from `megatron/training/arguments.py`): FP32 training without `--bf16`/`--fp16`, no
//! recomputation, no sequence parallelism, a replicated optimizer without
//! `--use-distributed-optimizer`, tied embedding and output weights without
//! `--untie-embeddings-and-output-weights`, `--num-query-groups` used only with
//! `--group-query-attention`, a vocabulary padded to a multiple of `128·tp`, a micro-batch and a
//! global batch that the file must state.

pub(crate) use self::unused::irrelevant;
use super::settings::{SettingOrigin, boolean, is_null, number, positive};
use super::shell::{self, Word};
use super::{Format, Launch, why};
use fmperf_core::vocab::NoteList;

mod launcher;
#[path = "../tokenizer.rs"]
pub mod tokenizer;
mod trainer;
use launcher::{explain_unknown, launcher, unknown_value};
mod unused;
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::context_parallel::CpComm;
use fmperf_core::extended::muon::Optimizer;
use fmperf_core::extended::{AttentionKernel, Recompute, Sharding, TransformerImpl};

/// Puts a value into a slot, noting when it replaces a different earlier one.
macro_rules! put {
    ($l:expr, $slot:ident $(. $more:ident)*, $v:expr, $o:expr) => {{
        let r = $l.settings.$slot$(.$more)*.put($v, $o);
        note_replaced($l, r, $o);
    }};
}

/// Values that are read together at the end (a flag's meaning depends on another).
#[derive(Debug, Clone, Default)]
pub(crate) struct Pending {
    /// `--group-query-attention` seen.
    gqa: Option<bool>,
    /// `--num-query-groups` value and origin.
    query_groups: Option<(u64, SettingOrigin, String)>,
    /// `--recompute-granularity`.
    granularity: Option<(String, SettingOrigin)>,
    /// `--recompute-method`.
    method: Option<(String, SettingOrigin)>,
    /// `--recompute-num-layers`.
    recompute_layers: Option<(u64, SettingOrigin)>,
    /// `--tokenizer-type`.
    tokenizer_type: Option<(String, SettingOrigin)>,
    /// `--tokenizer-model` (a name or a path).
    tokenizer_model: Option<(String, SettingOrigin)>,
    /// 16-bit format (`--bf16`, `--fp16`, NeMo's `precision`).
    half: Option<(Precision, SettingOrigin)>,
    /// FP8 linear layers (`--fp8-format`).
    fp8: Option<(String, SettingOrigin)>,
    /// Megatron-DeepSpeed's `--deepspeed` (DeepSpeed runs the optimizer).
    deepspeed: Option<SettingOrigin>,
    /// A Hugging Face Trainer launch (`--per_device_train_batch_size`, `--model_name_or_path`).
    trainer: bool,
    /// The Trainer's `--deepspeed ds_config.json` is given (its precision is the JSON's).
    ds_json: bool,
    /// The flags of a file that another script sources (no command): no defaults of a run.
    partial: bool,
    /// A flag of this reader was read (else the command is not a Megatron or Trainer run and
    /// none of their defaults apply).
    read_any: bool,
    /// Sequence-to-sequence lengths of a Trainer script (`--max_source_length`,
    /// `--max_target_length`): prompt and answer, concatenated for a decoder-only model.
    source_len: Option<(u64, SettingOrigin)>,
    target_len: Option<(u64, SettingOrigin)>,
    /// `--vocab-file` (its name may say the vocabulary: `gpt2-vocab.json`).
    vocab_file: Option<(String, SettingOrigin)>,
    /// Megatron-DeepSpeed's `--zero-stage`, as the sharding it names.
    zero_stage: Option<(Sharding, SettingOrigin)>,
}

/// Megatron flags that take several values (argparse `nargs`).
const MULTI_VALUE: &[&str] = &[
    "cp-comm-type",
    "hierarchical-context-parallel-sizes",
    "rampup-batch-size",
    "data-path",
    "train-data-path",
    "valid-data-path",
    "test-data-path",
    "recompute-modules",
    "offload-modules",
    "cuda-graph-scope",
    "cuda-graph-modules",
    "moe-router-load-balancing-type",
    "step-batch-size-schedule",
    "metrics",
];

/// Megatron switches (flags without a value), so that the next word is never taken as theirs.
const SWITCHES: &[&str] = &[
    "bf16",
    "fp16",
    "swiglu",
    "group-query-attention",
    "sequence-parallel",
    "use-distributed-optimizer",
    "untie-embeddings-and-output-weights",
    "recompute-activations",
    "use-flash-attn",
    "disable-bias-linear",
    "overlap-grad-reduce",
    "overlap-param-gather",
    "use-mcore-models",
    "use-legacy-models",
    "moe-grouped-gemm",
    "multi-latent-attention",
    "overlap-moe-expert-parallel-comm",
    "moe-enable-deepep",
    "moe-shared-expert-overlap",
    "moe-router-enable-expert-bias",
    "moe-pad-expert-input-to-capacity",
    "moe-per-layer-logging",
    "moe-use-legacy-grouped-gemm",
    "use-torch-fsdp2",
    "use-megatron-fsdp",
    "mock-data",
    "no-masked-softmax-fusion",
    "no-bias-gelu-fusion",
    "no-bias-swiglu-fusion",
    "no-bias-dropout-fusion",
    "no-gradient-accumulation-fusion",
    "no-async-tensor-model-parallel-allreduce",
    "no-load-optim",
    "no-load-rng",
    "no-save-optim",
    "no-save-rng",
    "use-rotary-position-embeddings",
    "tp-comm-overlap",
    "fp8-param-gather",
    "add-qkv-bias",
    "qk-layernorm",
    "cross-entropy-loss-fusion",
    "log-throughput",
    "log-timers-to-tensorboard",
    "log-memory-to-tensorboard",
    "log-validation-ppl-to-tensorboard",
    "log-params-norm",
    "log-num-zeros-in-grad",
    "manual-gc",
    "use-cpu-initialization",
    "accumulate-allreduce-grads-in-fp32",
    "attention-softmax-in-fp32",
    "apply-query-key-layer-scaling",
    "distribute-saved-activations",
    "calculate-per-token-loss",
    "moe-permute-fusion",
    "moe-router-fusion",
    "enable-cuda-graph",
    "external-cuda-graph",
    "moe-router-pre-softmax",
    "no-create-attention-mask-in-dataloader",
    "no-rope-fusion",
    "use-precision-aware-optimizer",
    "checkpoint-activations",
    "deepspeed",
    "deepspeed-activation-checkpointing",
    "partition-activations",
    "embed-layernorm",
    "abort-on-unmet-fused-kernel-constraints",
    "account-for-embedding-in-pipeline-split",
    "account-for-loss-in-pipeline-split",
    "async-save",
    "no-persist-layer-norm",
    "use-dist-ckpt",
    "exit-signal-handler",
    "profile",
    "skip-train",
    "enable-shared-expert",
    "apply-layernorm-1p",
    "use-rms-norm",
    "enable-gpt-oss",
    "quick-geglu",
    "export-force-local-attention",
    "moe-router-force-load-balancing",
    "enable-experimental",
    "init-model-with-meta-device",
    "use-nccl-ub",
    "sync-tp-duplicated-parameters",
    "create-moe-param-group",
    "use-dynamic-batch-size",
    "optimizer-cpu-offload",
    "overlap-cpu-optimizer-d2h-h2d",
    "use-checkpoint-args",
    "repeated-dataloader",
    "override-lr-scheduler",
];

/// Reads a Megatron-LM launch: a script or a command line (or a pasted list of flags).
pub fn parse(text: &str) -> Result<Launch, Error> {
    parse_args(text, &[])
}

/// Reads a Megatron-LM launch script run with the positional parameters `args` (`$1`, `$2`, …).
pub fn parse_args(text: &str, args: &[String]) -> Result<Launch, Error> {
    let cmd = shell::read(text, args, &carries_training_flags)?;
    if cmd.args.is_empty() {
        return Err(Error::Parse {
            message: "no training command found: expected `pretrain_gpt.py` (or another .py script) followed by \
                      Megatron flags such as --num-layers"
                .into(),
        });
    }
    let mut l = Launch::new(Format::Megatron);
    l.notes.extend(cmd.notes.iter().cloned());
    let mut p = Pending { partial: cmd.from_variables, ..Pending::default() };
    launcher(&mut l, &cmd.launcher, &cmd.sbatch)?;
    let args = &cmd.args;
    p.trainer = args.iter().any(|w| {
        w.text
            .strip_prefix("--")
            .is_some_and(|f| trainer::is_trainer_flag(&f.split('=').next().unwrap_or("").replace('_', "-")))
    });
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        let Some(flag) = w.text.strip_prefix("--") else {
            if let Some((k, v)) = w.text.split_once('=')
                && k.contains('.')
            {
                // A Hydra override of a NeMo script (`model.tensor_model_parallel_size=8`).
                let o = SettingOrigin::new(k, w.line);
                super::nemo::apply_key(&mut l, &mut p, k, v, &o)?;
                continue;
            }
            if w.text.starts_with('-') {
                l.unused(&w.text, "", why::UNKNOWN);
            } else {
                l.unused(&w.text, "", "a word without a flag; not used");
            }
            continue;
        };
        // Flags are matched with dashes (`--tensor_model_parallel_size` is
        // `--tensor-model-parallel-size`, as argparse and HfArgumentParser accept both) and keep
        // the spelling written in messages.
        let (written, value) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => {
                let dashed = flag.replace('_', "-");
                let next = args.get(i).filter(|n| !n.text.starts_with("--"));
                let boolean_next = next.is_some_and(|n| matches!(n.text.as_str(), "True" | "False" | "true" | "false"));
                let path_next = next.is_some_and(|n| {
                    dashed == "deepspeed" && (n.text.ends_with(".json") || n.text.contains('/') || n.text.contains('$'))
                });
                match next {
                    Some(next) if !SWITCHES.contains(&dashed.as_str()) || boolean_next || path_next => {
                        i += 1;
                        let mut v = next.text.clone();
                        // Flags of several values (`--rampup-batch-size 192 16 9_765_625`, data
                        // paths with weights) take every word up to the next flag.
                        while MULTI_VALUE.contains(&dashed.as_str())
                            && args.get(i).is_some_and(|n| !n.text.starts_with('-'))
                        {
                            v = format!("{v} {}", args[i].text);
                            i += 1;
                        }
                        (flag.to_string(), Some(v))
                    }
                    _ => (flag.to_string(), None),
                }
            }
        };
        let name = written.replace('_', "-");
        let o = SettingOrigin::new(format!("--{written}"), w.line);
        if let Some(v) = value.as_deref() {
            unknown_value(v, &o)?;
        }
        let read = if p.trainer && trainer::apply(&mut l, &mut p, &name, value.as_deref(), &o)? {
            true
        } else {
            apply(&mut l, &mut p, &name, value.as_deref(), &o).map_err(|e| explain_unknown(e, value.as_deref(), &o))?
        };
        p.read_any |= read;
        if !read {
            let why = irrelevant(&name).or_else(|| trainer::irrelevant(&name));
            // A parallel degree fmperf does not know would split the devices differently from the
            // run: refused by name, never listed as unused (the data-parallel degree would be wrong).
            if why.is_none() && is_parallel_degree(&name) && value.as_deref().is_some_and(|v| v.trim() != "1") {
                return Err(o.error(
                    value.unwrap_or_default(),
                    "a parallel degree fmperf's reader does not know: the devices would be split differently \
                     from the run's, so the file is not estimated",
                ));
            }
            l.unused(format!("--{written}"), value.unwrap_or_default(), why.unwrap_or(why::UNKNOWN));
        }
    }
    if p.trainer {
        if let (Some((a, ao)), Some((b, _)), None) = (&p.source_len, &p.target_len, l.settings.seq_len.get()) {
            l.settings.seq_len.put(a + b, ao);
            l.notes.reading_of("--max_source_length", format!(
                "sequence length {} = --max_source_length {a} + --max_target_length {b} (prompt and answer in one sequence)",
                a + b
            ));
        }
        for (slot, key) in [(&mut l.settings.tp, "tp"), (&mut l.settings.pp, "pp")] {
            if slot.get().is_none() {
                slot.put(1, &SettingOrigin::new(format!("(Hugging Face Trainer: {key})"), 0));
            }
        }
        l.notes.reading(
            "a Hugging Face Trainer launch: data parallel over every device (tensor and pipeline parallel 1), \
             the model's shape from its config.json (a second --from)"
                .into(),
        );
    }
    finish(&mut l, p)?;
    Ok(l)
}

/// The Hugging Face Trainer's per-key rules for the Trainer YAML reader ([`crate::trainer_yaml`]):
/// the same [`trainer::apply`] and [`finish`] as the Trainer's flags, keys given with dashes.
#[derive(Debug, Default)]
pub(crate) struct TrainerKeys(Pending);

impl TrainerKeys {
    /// A reading of Trainer arguments.
    pub(crate) fn new() -> TrainerKeys {
        TrainerKeys(Pending { trainer: true, read_any: true, ..Pending::default() })
    }
    /// Reads one argument (`name` with dashes); `Ok(false)`: not one the Trainer rules read.
    pub(crate) fn apply(&mut self, l: &mut Launch, name: &str, value: &str, o: &SettingOrigin) -> Result<bool, Error> {
        trainer::apply(l, &mut self.0, name, Some(value), o)
    }
    /// Why an argument not read does not matter, if the Trainer rules know it.
    pub(crate) fn irrelevant(name: &str) -> Option<&'static str> {
        trainer::irrelevant(name).or_else(|| irrelevant(name))
    }
    /// Whether gradient checkpointing or a 16-bit format was given.
    pub(crate) fn given(&self) -> (bool, bool) {
        (self.0.granularity.is_some(), self.0.half.is_some())
    }
    /// Reads what depends on several arguments (recomputation, precision).
    pub(crate) fn finish(self, l: &mut Launch) -> Result<(), Error> {
        finish(l, self.0)
    }
}

pub(super) fn note_replaced(l: &mut Launch, replaced: Option<SettingOrigin>, now: &SettingOrigin) {
    if let Some(old) = replaced {
        l.notes.reading_of(
            &now.key,
            format!(
                "{} (line {}) replaces the value of {} (line {}): the later one is used",
                now.key, now.line, old.key, old.line
            ),
        );
    }
}

/// A switch's value: `None` (Megatron's bare flag) is true; YAML's `true`/`false` are read.
fn switch(value: Option<&str>, o: &SettingOrigin) -> Result<bool, Error> {
    match value {
        None => Ok(true),
        Some(v) => boolean(v, o),
    }
}

/// Reads one Megatron flag (name without `--`). Returns `false` when fmperf does not use it.
pub(crate) fn apply(
    l: &mut Launch,
    p: &mut Pending,
    name: &str,
    value: Option<&str>,
    o: &SettingOrigin,
) -> Result<bool, Error> {
    let need = |v: Option<&str>| -> Result<String, Error> {
        v.map(str::to_string).ok_or_else(|| o.error("", "needs a value"))
    };
    let count = |v: Option<&str>| -> Result<u64, Error> { positive(&need(v)?, o) };
    // A value that may be null (`None`, `null`: the framework's default).
    let given = |v: Option<&str>| -> Result<Option<String>, Error> { need(v).map(|v| (!is_null(&v)).then_some(v)) };
    match name {
        // Model shape.
        "num-layers" => put!(l, layers, count(value)?, o),
        "hidden-size" => put!(l, hidden, count(value)?, o),
        "ffn-hidden-size" => put!(l, ffn_hidden, count(value)?, o),
        "num-attention-heads" => put!(l, heads, count(value)?, o),
        "kv-channels" => put!(l, head_dim, count(value)?, o),
        "group-query-attention" => p.gqa = Some(switch(value, o)?),
        "num-query-groups" => p.query_groups = Some((count(value)?, o.clone(), need(value)?)),
        // Megatron-DeepSpeed's grouped-query attention (Microsoft's fork: no `--group-query-attention`
        // switch; fewer key/value heads than heads is GQA).
        "num-key-value-heads" => put!(l, kv_heads, count(value)?, o),
        // BigCode's Megatron-LM (StarCoder, SantaCoder): multi-query attention, one K/V head.
        "attention-head-type" => match need(value)?.to_ascii_lowercase().as_str() {
            "multiquery" => put!(l, kv_heads, 1, o),
            "multihead" => {}
            other => return Err(o.error(other, "must be multihead or multiquery (BigCode's Megatron-LM)")),
        },
        "swiglu" => put!(l, gated_mlp, switch(value, o)?, o),
        "seq-length" | "encoder-seq-length" => put!(l, seq_len, count(value)?, o),
        "untie-embeddings-and-output-weights" => put!(l, tied_embeddings, !switch(value, o)?, o),
        "vocab-size" => put!(l, vocab, count(value)?, o),
        "make-vocab-size-divisible-by" => put!(l, vocab_divisible_by, count(value)?, o),
        "tokenizer-type" => p.tokenizer_type = Some((need(value)?, o.clone())),
        "tokenizer-model" => p.tokenizer_model = Some((need(value)?, o.clone())),
        "vocab-file" => p.vocab_file = Some((need(value)?, o.clone())),
        // Parallelism.
        "tensor-model-parallel-size" => put!(l, tp, count(value)?, o),
        "pipeline-model-parallel-size" => put!(l, pp, count(value)?, o),
        "context-parallel-size" => put!(l, cp, count(value)?, o),
        // DeepSpeed-Ulysses sequence parallelism of Megatron-DeepSpeed: the sequence split over
        // this many ranks, which divides the devices as context parallelism does, priced as the
        // Ulysses flavour (all-to-alls over heads, `cp_comm=ulysses`).
        "ds-sequence-parallel-size" => {
            let n = count(value)?;
            if n > 1 {
                l.notes.reading_of(
                    &o.key,
                    format!(
                        "{} {n}: DeepSpeed-Ulysses sequence parallelism, priced as context parallelism of degree {n} \
                     with all-to-alls over heads (cp_comm=ulysses)",
                        o.key
                    ),
                );
                put!(l, cp_comm, CpComm::Ulysses, o);
            }
            put!(l, cp, n, o)
        }
        // Megatron-Core's context-parallel flavour, one type or one per layer (the first is read:
        // fmperf prices one flavour for every block).
        "cp-comm-type" => {
            let v = need(value)?;
            let first = v.split_whitespace().next().unwrap_or("");
            let comm = match first.trim_matches(|c| c == '\'' || c == '"' || c == '[' || c == ']' || c == ',') {
                "p2p" => CpComm::Ring,
                "a2a" => CpComm::Ulysses,
                "a2a+p2p" => CpComm::Hybrid,
                "all_gather" | "allgather" => {
                    return Err(
                        o.error(first, "all_gather context parallelism is not modelled; use p2p, a2a or a2a+p2p")
                    );
                }
                other => return Err(o.error(other, "must be p2p, a2a or a2a+p2p")),
            };
            if v.split_whitespace().count() > 1 {
                l.notes.reading_of(
                    &o.key,
                    format!("{} {v}: one type per layer; the first, {first}, is priced for every block", o.key),
                );
            }
            put!(l, cp_comm, comm, o)
        }
        // The a2a+p2p sizes, innermost first: the Ulysses (all-to-all) degree, then the ring's.
        "hierarchical-context-parallel-sizes" => {
            let v = need(value)?;
            let sizes: Vec<&str> = v.split(|c: char| c.is_whitespace() || c == ',').filter(|x| !x.is_empty()).collect();
            let [a2a, _p2p] = sizes[..] else {
                return Err(o.error(&v, "must be two sizes, the all-to-all (Ulysses) degree then the ring's"));
            };
            put!(l, cp_ulysses, positive(a2a.trim_matches(|c| c == '[' || c == ']'), o)?, o)
        }
        "num-layers-per-virtual-pipeline-stage" => put!(l, layers_per_virtual_stage, count(value)?, o),
        "virtual-pipeline-model-parallel-size" | "num-virtual-stages-per-pipeline-rank" => {
            put!(l, vpp, count(value)?, o)
        }
        "sequence-parallel" => put!(l, sequence_parallel, switch(value, o)?, o),
        "account-for-embedding-in-pipeline-split" => put!(l, embedding_as_block, switch(value, o)?, o),
        "account-for-loss-in-pipeline-split" => put!(l, head_as_block, switch(value, o)?, o),
        "pp-partition-method" => {
            // Megatron-DeepSpeed: a `type:` regex over the layer classes balances the count of
            // matching layers; naming the embedding makes both embedding layers count as blocks.
            let v = need(value)?;
            let lower = v.trim_matches(|c| c == '\'' || c == '"').to_ascii_lowercase();
            if lower.starts_with("type:") && lower.contains("embed") {
                put!(l, embedding_as_block, true, o);
                put!(l, head_as_block, true, o);
            } else if lower == "uniform" || lower == "type:transformer" {
                put!(l, embedding_as_block, false, o);
                put!(l, head_as_block, false, o);
            } else {
                return Ok(false);
            }
        }
        "use-distributed-optimizer" => {
            let on = switch(value, o)?;
            put!(l, sharding, if on { Sharding::Zero1 } else { Sharding::Ddp }, o)
        }
        "use-torch-fsdp2" | "use-megatron-fsdp" => {
            if switch(value, o)? {
                put!(l, sharding, Sharding::Zero3, o)
            }
        }
        "data-parallel-sharding-strategy" => {
            let v = need(value)?;
            let s = match v.as_str() {
                "no_shard" => Sharding::Ddp,
                "optim" => Sharding::Zero1,
                "optim_grads" => Sharding::Zero2,
                "optim_grads_params" => Sharding::Zero3,
                _ => return Err(o.error(v, "must be no_shard, optim, optim_grads or optim_grads_params")),
            };
            put!(l, sharding, s, o)
        }
        // Batch.
        "num-distributed-optimizer-instances" => put!(l, optimizer_instances, count(value)?, o),
        // Adam and Muon are priced; Megatron's other optimizers (sgd, lion, soap, adaptive_muon) are
        // listed as not read.
        "optimizer" => match need(value)?.trim_matches(|c| c == '\'' || c == '"').parse::<Optimizer>() {
            Ok(optimizer) => put!(l, optimizer, optimizer, o),
            Err(_) => return Ok(false),
        },
        "micro-batch-size" => put!(l, mbs, count(value)?, o),
        "global-batch-size" => put!(l, global_batch, count(value)?, o),
        // Megatron-DeepSpeed.
        "pad-vocab-size-to" => put!(l, vocab, count(value)?, o),
        // Pai-Megatron-Patch: the vocabulary already padded (used as the embedding's rows).
        "padded-vocab-size" => {
            put!(l, vocab, count(value)?, o);
            put!(l, vocab_divisible_by, 1, o);
            l.notes.reading_of(
                &o.key,
                format!("{} (line {}): the embedding's rows as given, not padded again", o.key, o.line),
            );
        }
        "deepspeed" => {
            if switch(value, o)? {
                p.deepspeed = Some(o.clone())
            }
        }
        "zero-stage" => {
            let v = need(value)?;
            match v.trim().parse::<u64>().ok().and_then(Sharding::of_zero_stage) {
                Some(sharding) => p.zero_stage = Some((sharding, o.clone())),
                None => return Err(o.error(v, "must be 0, 1, 2 or 3 (DeepSpeed's ZeRO stage)")),
            }
        }
        // Recomputation (`--checkpoint-activations`: Megatron's flag for full recomputation before
        // `--recompute-granularity`, kept by Megatron-DeepSpeed).
        "checkpoint-activations" => {
            if switch(value, o)? && p.granularity.is_none() {
                p.granularity = Some(("full".into(), o.clone()))
            }
        }
        "recompute-activations" => {
            if switch(value, o)? {
                p.granularity = Some(("selective".into(), o.clone()))
            }
        }
        "recompute-granularity" => {
            let v = need(value)?;
            if !is_null(&v) {
                p.granularity = Some((v, o.clone()))
            }
        }
        "recompute-method" => {
            let v = need(value)?;
            if !is_null(&v) {
                p.method = Some((v, o.clone()))
            }
        }
        "recompute-num-layers" => {
            let v = need(value)?;
            if !is_null(&v) {
                p.recompute_layers = Some((positive(&v, o)?, o.clone()))
            }
        }
        // Precision.
        "bf16" => {
            if switch(value, o)? {
                p.half = Some((Precision::Bf16, o.clone()))
            }
        }
        "fp16" => {
            if switch(value, o)? {
                p.half = Some((Precision::Fp16, o.clone()))
            }
        }
        "fp8-param-gather" => put!(l, fp8_weights, switch(value, o)?, o),
        // Per-step statistics (host work every step, `fmperf_core::extended::step_host`).
        "log-num-zeros-in-grad" => put!(l, log_num_zeros_in_grad, switch(value, o)?, o),
        "log-params-norm" => put!(l, log_params_norm, switch(value, o)?, o),
        // Gradient-accumulation fusion (on in Megatron-LM unless `--no-gradient-accumulation-fusion`;
        // NeMo's YAML key `gradient_accumulation_fusion`): the weight gradients' accumulation.
        "no-gradient-accumulation-fusion" => put!(l, grad_accumulation_fusion, !switch(value, o)?, o),
        "gradient-accumulation-fusion" => put!(l, grad_accumulation_fusion, switch(value, o)?, o),
        // Megatron-Core's layer spec (`transformer_config.py` l. 1314 at d98e8a6).
        "transformer-impl" => {
            if let Some(v) = given(value)? {
                let spec = match v.trim().trim_matches(|c| c == '\'' || c == '"') {
                    "transformer_engine" => TransformerImpl::TransformerEngine,
                    "local" => TransformerImpl::Local,
                    _ => return Err(o.error(&v, "must be transformer_engine or local (the layer specs fmperf counts)")),
                };
                put!(l, transformer_impl, spec, o)
            }
        }
        "fp8-format" | "fp8" => {
            let v = need(value)?;
            match v.to_ascii_lowercase().as_str() {
                "e4m3" | "hybrid" => p.fp8 = Some((v, o.clone())),
                x if is_null(x) || x == "false" => {}
                _ => return Err(o.error(v, "must be e4m3 or hybrid (FP8 formats of Transformer Engine)")),
            }
        }
        // Mixture of Experts.
        "num-experts" => put!(l, moe.experts, count(value)?, o),
        "moe-router-topk" => put!(l, moe.top_k, count(value)?, o),
        "moe-ffn-hidden-size" => put!(l, moe.expert_ffn_hidden, count(value)?, o),
        "moe-shared-expert-intermediate-size" => put!(l, moe.shared_ffn_hidden, count(value)?, o),
        "expert-model-parallel-size" => put!(l, moe.ep, count(value)?, o),
        "expert-tensor-parallel-size" => put!(l, moe.etp, count(value)?, o),
        "moe-layer-freq" => put!(l, moe.layer_pattern, need(value)?, o),
        // The attention kernel (Megatron-Core's `AttnBackend`: flash, fused, unfused, local, auto;
        // NeMo writes the enum, `AttnBackend.unfused`).
        "attention-backend" => {
            if let Some(v) = given(value)? {
                let name = v.trim().trim_matches(|c| c == '\'' || c == '"').to_ascii_lowercase();
                let kernel = match name.strip_prefix("attnbackend.").unwrap_or(&name) {
                    "fused" | "auto" => AttentionKernel::Native,
                    "flash" => AttentionKernel::Fa2,
                    "unfused" | "local" => AttentionKernel::Unfused,
                    _ => return Err(o.error(&v, "must be flash, fused, unfused, local or auto")),
                };
                put!(l, attention_kernel, kernel, o)
            }
        }
        // Sliding-window attention (`crate::window`).
        "window-size" => {
            if let Some(v) = given(value)? {
                match crate::window::megatron_window_size(&v).map_err(|rule| o.error(&v, rule))? {
                    Some(tokens) => put!(l, window_tokens, tokens, o),
                    None => l.notes.reading(format!("{} = {v}: an unbounded window (full attention)", o.key)),
                }
            }
        }
        "window-attn-skip-freq" => {
            if let Some(v) = given(value)? {
                put!(l, window_pattern, v, o)
            }
        }
        "moe-expert-capacity-factor" => {
            if let Some(v) = given(value)? {
                put!(l, moe.capacity_factor, number(&v, o)?, o)
            }
        }
        "moe-token-dispatcher-type" => put!(l, moe.dispatcher, need(value)?, o),
        "moe-grouped-gemm" => put!(l, moe.grouped_gemm, switch(value, o)?, o),
        // The MoE layer's host calls (`crate::moe_host`): fusions, the balancing loss, CUDA graphs.
        "moe-permute-fusion" => put!(l, moe.permute_fusion, switch(value, o)?, o),
        "moe-router-fusion" => put!(l, moe.router_fusion, switch(value, o)?, o),
        "moe-shared-expert-overlap" => put!(l, moe.shared_overlap, switch(value, o)?, o),
        "moe-router-load-balancing-type" => put!(l, moe.balancing, need(value)?, o),
        "cuda-graph-impl" => put!(l, moe.graph_impl, need(value)?, o),
        // Megatron-LM's deprecated switches for the two implementations (`arguments.py` l. 611–631
        // at d98e8a6: `--enable-cuda-graph` is `local`, `--external-cuda-graph` `transformer_engine`).
        "enable-cuda-graph" | "external-cuda-graph" => {
            let on = switch(value, o)?;
            let graph_impl = match (on, name) {
                (false, _) => "none",
                (true, "enable-cuda-graph") => "local",
                (true, _) => "transformer_engine",
            };
            put!(l, moe.graph_impl, graph_impl.to_string(), o)
        }
        "cuda-graph-modules" | "cuda-graph-scope" => put!(l, moe.graph_modules, need(value)?, o),
        "moe-router-score-function" => put!(l, moe.router, need(value)?, o),
        "overlap-moe-expert-parallel-comm" => put!(l, moe.a2a_overlap, switch(value, o)?, o),
        "multi-latent-attention" => put!(l, moe.mla, switch(value, o)?, o),
        "q-lora-rank" => {
            if let Some(v) = given(value)? {
                put!(l, moe.q_lora_rank, positive(&v, o)?, o)
            }
        }
        "kv-lora-rank" => put!(l, moe.kv_lora_rank, count(value)?, o),
        // `--qk-nope-head-dim`, `--qk-rope-head-dim`: Pai-Megatron-Patch's spellings.
        "qk-head-dim" | "qk-nope-head-dim" => put!(l, moe.qk_nope_head_dim, count(value)?, o),
        "qk-pos-emb-head-dim" | "qk-rope-head-dim" => put!(l, moe.qk_rope_head_dim, count(value)?, o),
        // Pai-Megatron-Patch and Megatron-DeepSpeed spellings of the shared experts, the expert
        // parallelism and the capacity factor.
        "num-shared-experts" => put!(l, moe.shared_experts, count(value)?, o),
        "enable-shared-expert" => {
            let on = switch(value, o)?;
            l.unused(
                o.key.clone(),
                value.unwrap_or(if on { "true" } else { "false" }),
                "the shared expert is read from its width (--moe-shared-expert-intermediate-size, --num-shared-experts)",
            );
        }
        "moe-expert-parallel-size" => put!(l, moe.ep, count(value)?, o),
        "moe-train-capacity-factor" => put!(l, moe.capacity_factor, number(&need(value)?, o)?, o),
        // Megatron-LLM's `--glu_activation swiglu|geglu|reglu`.
        "glu-activation" => put!(l, gated_mlp, !is_null(&need(value)?), o),
        // slime's Ray launch: nodes and GPUs of the training actors.
        "actor-num-nodes" => put!(l, nodes, count(value)?, o),
        "actor-num-gpus-per-node" => put!(l, devices_per_node, count(value)?, o),
        "v-head-dim" => put!(l, moe.v_head_dim, count(value)?, o),
        "mtp-num-layers" => {
            if let Some(v) = given(value)? {
                put!(l, moe.mtp_layers, positive(&v, o)?, o)
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Whether a flag's name says it is a parallel degree (`…-parallel-size`, `…-parallel-degree`,
/// `…-parallelism`, `…_parallel_size`).
pub(crate) fn is_parallel_degree(name: &str) -> bool {
    let n = name.replace('_', "-");
    ["-parallel-size", "-parallel-degree", "-parallelism"].iter().any(|s| n.ends_with(s))
}

/// Reads what depends on several flags: GQA groups, recomputation, precision, vocabulary.
pub(crate) fn finish(l: &mut Launch, p: Pending) -> Result<(), Error> {
    // Grouped-query attention: Megatron reads --num-query-groups only with --group-query-attention.
    if let Some((g, o, v)) = p.query_groups.clone() {
        if p.gqa == Some(true) || l.format != Format::Megatron {
            put!(l, kv_heads, g, &o);
        } else {
            l.unused(o.key, v, "ignored by Megatron without --group-query-attention (all heads have their own K/V)");
        }
    }
    // Recomputation.
    if let Some((g, o)) = &p.granularity {
        match g.to_ascii_lowercase().as_str() {
            "selective" => put!(l, recompute, Recompute::Selective, o),
            "full" => {
                put!(l, recompute, Recompute::Full, o);
                let method = p.method.as_ref().map(|(m, mo)| (m.to_ascii_lowercase(), mo.clone()));
                match method.as_ref().map(|(m, mo)| (m.as_str(), mo)) {
                    Some(("uniform", _)) | None => {}
                    Some(("block", mo)) => {
                        let Some((n, no)) = &p.recompute_layers else {
                            return Err(mo.error("block", "needs --recompute-num-layers (blocks recomputed per stage)"));
                        };
                        put!(l, recompute_blocks, *n, no);
                    }
                    Some((m, mo)) => return Err(mo.error(m, "must be uniform or block")),
                }
            }
            _ => return Err(o.error(g, "must be full or selective")),
        }
    } else if let Some((m, mo)) = &p.method {
        l.unused(mo.key.clone(), m.clone(), "ignored by Megatron without --recompute-granularity full");
    }
    if p.granularity.as_ref().is_none_or(|(g, _)| g != "full")
        && let Some((n, o)) = &p.recompute_layers
    {
        l.unused(o.key.clone(), n.to_string(), "ignored by Megatron without --recompute-granularity full");
    }
    // The framework's defaults apply to a run's command, not to a file of flags another script
    // sources, nor to a command with none of the flags this reader knows (a script that takes a
    // YAML of its own).
    let megatron_like = matches!(l.format, Format::Megatron | Format::NemoYaml)
        && !p.partial
        && (l.format != Format::Megatron || p.read_any);
    let (framework, recompute_key) = if p.trainer {
        ("the Hugging Face Trainer", "--gradient_checkpointing")
    } else {
        ("Megatron", "--recompute-granularity")
    };
    if p.granularity.is_none() && megatron_like && l.settings.recompute.get().is_none() {
        l.settings.recompute.put(Recompute::None, &SettingOrigin::new(recompute_key, 0));
        l.notes.reading(format!("no recomputation setting: {framework} keeps every activation (recompute none)"));
    }
    // A Megatron-LM command as written (not Megatron-DeepSpeed's MoE layer, nor the Trainer's):
    // Megatron-Core's defaults hold for what it leaves out, `SequentialMLP` without
    // `--moe-grouped-gemm` among them (`crate::moe_host`).
    if l.format == Format::Megatron && megatron_like && !p.trainer && p.deepspeed.is_none() {
        l.settings.moe.megatron_args.put(true, &SettingOrigin::new("(a Megatron-LM command)", 0));
    }
    // Megatron-DeepSpeed's ZeRO stage. With BF16 and stage 0, DeepSpeed runs its BF16 optimizer
    // (`runtime/bf16_optimizer.py`): optimizer states and FP32 master weights partitioned over the
    // data-parallel ranks, ZeRO-1's layout, and gradients accumulated in an FP32 buffer of every
    // parameter (BLOOM-176B's launch: "bf16 must use z0! it implements its own zero stage 1
    // equivalent").
    if let Some((sharding, o)) = &p.zero_stage {
        let bf16 = matches!(p.half, Some((Precision::Bf16, _))) && p.fp8.is_none();
        if p.deepspeed.is_some() && bf16 && *sharding == Sharding::Ddp {
            put!(l, sharding, Sharding::Zero1, o);
            put!(l, fp32_grad_accumulation, true, o);
            l.notes.reading(
                "DeepSpeed with --bf16 and ZeRO stage 0 runs its BF16 optimizer: optimizer states sharded over data \
                 parallelism (as ZeRO-1), gradients accumulated in FP32 (grad_accumulation_buffer)"
                    .into(),
            );
        } else {
            put!(l, sharding, *sharding, o);
        }
    }
    // Precision: FP8 linear layers, else the 16-bit format, else Megatron's FP32.
    match (&p.fp8, &p.half) {
        (Some((_, o)), _) => put!(l, precision, Precision::Fp8, o),
        (None, Some((h, o))) => put!(l, precision, *h, o),
        (None, None) if megatron_like && p.trainer && p.ds_json => l.notes.reading(
            "no --bf16 or --fp16: the precision is the DeepSpeed JSON's (give it with a second --from)".into(),
        ),
        (None, None) if megatron_like && l.settings.precision.get().is_none() => {
            l.settings.precision.put(Precision::Fp32, &SettingOrigin::new("--bf16", 0));
            l.notes.reading(format!("no bf16, fp16 or fp8 setting: {framework} trains in FP32"));
        }
        (None, None) => {}
    }
    vocabulary(l, p)
}

/// The vocabulary from the tokenizer when `--vocab-size` is not given: `--tokenizer-model` (a
/// model name or path), `--vocab-file` (`gpt2-vocab.json`), `--tokenizer-type` (see
/// [`tokenizer::known`]); a tokenizer fmperf does not know is an error asking for `--vocab-size`.
/// Megatron's `NullTokenizer` counts an end-of-document token after the `--vocab-size` ones
/// (`megatron/training/tokenizer/tokenizer.py`, `_NullTokenizer.vocab_size`).
fn vocabulary(l: &mut Launch, p: Pending) -> Result<(), Error> {
    let mut vocab_from: Option<SettingOrigin> = None;
    let null = p.tokenizer_type.as_ref().is_some_and(|(t, _)| t.eq_ignore_ascii_case("NullTokenizer"));
    if null && let (Some(v), Some(o)) = (l.settings.vocab.copied(), l.settings.vocab.origin.clone()) {
        l.settings.vocab.put(v + 1, &o);
        l.notes.reading_of(
            &o.key,
            format!(
                "vocabulary {} = {} (line {}) + 1: Megatron's NullTokenizer adds an end-of-document token",
                v + 1,
                o.key,
                o.line
            ),
        );
    }
    let sources = [&p.tokenizer_model, &p.vocab_file, &p.tokenizer_type];
    if l.settings.vocab.get().is_none() {
        let named =
            sources.into_iter().flatten().find_map(|(name, o)| tokenizer::known(name).map(|k| (k, name, o.clone())));
        match named {
            Some((k, name, o)) => {
                l.settings.vocab.put(k.vocab, &o);
                vocab_from = Some(o.clone());
                let counted = match k.counted {
                    tokenizer::Counted::Tokenizer => "the tokenizer's own size",
                    tokenizer::Counted::Config => "the model's config.json vocab_size",
                };
                l.notes.reading_of(
                    &o.key,
                    format!(
                        "vocabulary {} read from {} {name} (line {}): {}, {counted}; padded as Megatron pads",
                        k.vocab, o.key, o.line, k.source
                    ),
                );
            }
            None => {
                // Not a guess: the vocabulary stays unknown, and the estimate says what that leaves
                // out (see `scenario::vocab`).
                if let Some((name, o)) = sources.into_iter().flatten().next() {
                    l.notes.reading_of(
                        &o.key,
                        format!(
                            "{} {name} (line {}): fmperf knows the vocabularies of the common tokenizers by name, not \
                         a tokenizer file's contents; add --vocab-size N to the file for the embedding and output \
                         head",
                            o.key, o.line
                        ),
                    );
                }
            }
        }
    }
    for (name, o) in [p.tokenizer_model, p.vocab_file, p.tokenizer_type].into_iter().flatten() {
        if vocab_from.as_ref() != Some(&o) {
            l.unused(o.key, name, why::DATA);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_flags_both_forms_and_lists_the_rest() {
        let l = parse(
            "torchrun --nproc_per_node 8 --nnodes 2 --master_addr host pretrain_gpt.py \
             --num-layers=4 --hidden-size 256 --num-attention-heads 8 --group-query-attention \
             --num-query-groups 2 --swiglu --seq-length 1024 --micro-batch-size 1 --global-batch-size 32 \
             --bf16 --tensor-model-parallel-size 2 --save-interval 100 --lr 3e-4 --vocab-size 32000 --frobnicate 3",
        )
        .unwrap();
        let s = &l.settings;
        assert_eq!((s.layers.copied(), s.hidden.copied(), s.kv_heads.copied()), (Some(4), Some(256), Some(2)));
        assert_eq!((s.devices_per_node.copied(), s.nodes.copied()), (Some(8), Some(2)));
        assert_eq!(s.precision.copied(), Some(Precision::Bf16));
        assert_eq!(s.recompute.copied(), Some(Recompute::None));
        let keys: Vec<&str> = l.unused.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["--master_addr", "--save-interval", "--lr", "--frobnicate"]);
        assert_eq!(l.unused[1].why, why::CHECKPOINT);
        assert_eq!(l.unused[3].why, why::UNKNOWN);
    }

    #[test]
    fn context_parallel_flavours() {
        let base = "python pretrain_gpt.py --context-parallel-size 16";
        let l = parse(&format!("{base} --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 8 2")).unwrap();
        assert_eq!((l.settings.cp_comm.copied(), l.settings.cp_ulysses.copied()), (Some(CpComm::Hybrid), Some(8)));
        let l = parse(&format!("{base} --cp-comm-type a2a")).unwrap();
        assert_eq!(l.settings.cp_comm.copied(), Some(CpComm::Ulysses));
        // One type per layer: the first is read, with a note.
        let l = parse(&format!("{base} --cp-comm-type p2p a2a")).unwrap();
        assert_eq!(l.settings.cp_comm.copied(), Some(CpComm::Ring));
        assert!(l.notes.iter().any(|n| n.contains("one type per layer")), "{:?}", l.notes);
        let e = parse(&format!("{base} --cp-comm-type all_gather")).unwrap_err();
        assert_eq!(e.field(), Some("--cp-comm-type"));
        let e = parse(&format!("{base} --hierarchical-context-parallel-sizes 8")).unwrap_err();
        assert_eq!(e.field(), Some("--hierarchical-context-parallel-sizes"));
        let l = parse("python pretrain_gpt.py --ds-sequence-parallel-size 4").unwrap();
        assert_eq!((l.settings.cp.copied(), l.settings.cp_comm.copied()), (Some(4), Some(CpComm::Ulysses)));
    }

    #[test]
    fn per_step_statistics() {
        let read = |flags: &str| {
            parse(&format!("python pretrain_gpt.py {flags}"))
                .map(|l| (l.settings.log_num_zeros_in_grad.copied(), l.settings.log_params_norm.copied()))
        };
        assert_eq!(read("--log-num-zeros-in-grad --log-params-norm").unwrap(), (Some(true), Some(true)));
        assert_eq!(read("--log-params-norm false").unwrap(), (None, Some(false)));
        // Megatron's defaults: neither stated.
        assert_eq!(read("--num-layers 12").unwrap(), (None, None));
    }

    #[test]
    fn gradient_accumulation_fusion() {
        let read = |flags: &str| {
            parse(&format!("python pretrain_gpt.py {flags}")).map(|l| l.settings.grad_accumulation_fusion.copied())
        };
        assert_eq!(read("--no-gradient-accumulation-fusion").unwrap(), Some(false));
        assert_eq!(read("--no-gradient-accumulation-fusion --num-layers 12").unwrap(), Some(false));
        assert_eq!(read("--num-layers 12").unwrap(), None);
        // The functional tests' YAML form (`--no-gradient-accumulation-fusion: true`) and NeMo's key.
        let yaml = |text: &str| {
            crate::parse_as(crate::Format::NemoYaml, text).map(|l| l.settings.grad_accumulation_fusion.copied())
        };
        assert_eq!(yaml("model:\n  gradient_accumulation_fusion: false\n").unwrap(), Some(false));
        assert_eq!(yaml("model:\n  gradient_accumulation_fusion: true\n").unwrap(), Some(true));
    }

    #[test]
    fn layer_specs() {
        let spec = |v: &str| {
            parse(&format!("python pretrain_gpt.py --transformer-impl {v}"))
                .map(|l| l.settings.transformer_impl.copied())
        };
        assert_eq!(spec("local").unwrap(), Some(TransformerImpl::Local));
        assert_eq!(spec("transformer_engine").unwrap(), Some(TransformerImpl::TransformerEngine));
        let e = spec("inference_optimized").unwrap_err();
        assert_eq!(e.field(), Some("--transformer-impl"), "{e}");
    }

    #[test]
    fn attention_backends() {
        let kernel = |b: &str| {
            parse(&format!("python pretrain_gpt.py --attention-backend {b}"))
                .map(|l| l.settings.attention_kernel.copied())
        };
        assert_eq!(kernel("unfused").unwrap(), Some(AttentionKernel::Unfused));
        assert_eq!(kernel("local").unwrap(), Some(AttentionKernel::Unfused));
        assert_eq!(kernel("flash").unwrap(), Some(AttentionKernel::Fa2));
        assert_eq!(kernel("auto").unwrap(), Some(AttentionKernel::Native));
        assert_eq!(kernel("AttnBackend.fused").unwrap(), Some(AttentionKernel::Native));
        let e = kernel("sparse").unwrap_err();
        assert_eq!(e.field(), Some("--attention-backend"), "{e}");
    }

    #[test]
    fn recompute_and_errors_name_the_flag() {
        let l = parse("python pretrain_gpt.py --recompute-granularity full --recompute-method block --recompute-num-layers 2 --num-layers 8").unwrap();
        assert_eq!(l.settings.recompute.copied(), Some(Recompute::Full));
        assert_eq!(l.settings.recompute_blocks.copied(), Some(2));
        let e = parse("python pretrain_gpt.py --recompute-granularity partial").unwrap_err();
        assert_eq!(e.field(), Some("--recompute-granularity"));
        let e = parse("python pretrain_gpt.py --num-layers eighty").unwrap_err();
        assert_eq!(e.field(), Some("--num-layers"));
        let e = parse("python pretrain_gpt.py --tensor-model-parallel-size $TP").unwrap_err();
        assert!(e.to_string().contains("$TP"), "{e}");
        // A tokenizer file fmperf cannot size: no vocabulary, and a note saying how to give it.
        let l = parse("python pretrain_gpt.py --tokenizer-model /data/tok.model").unwrap();
        assert!(l.settings.vocab.get().is_none());
        assert!(l.notes.iter().any(|n| n.contains("--tokenizer-model /data/tok.model") && n.contains("--vocab-size")));
        let l = parse("python pretrain_gpt.py --num-attention-heads 64 --num-key-value-heads 8").unwrap();
        assert_eq!(l.settings.kv_heads.copied(), Some(8));
        let l = parse("python pretrain_gpt.py --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-70B")
            .unwrap();
        assert_eq!(l.settings.vocab.copied(), Some(128_256));
        assert!(parse("echo hello").is_err());
    }
}

/// Whether a command's words carry a flag this reader uses: the training command among the
/// Python commands of a script (a data preparation or a conversion before it carries none).
fn carries_training_flags(args: &[Word]) -> bool {
    args.iter().any(|w| {
        let Some(flag) = w.text.strip_prefix("--") else { return false };
        let name = flag.split('=').next().unwrap_or("").replace('_', "-");
        let mut scratch = Launch::new(Format::Megatron);
        let mut p = Pending::default();
        matches!(apply(&mut scratch, &mut p, &name, Some("1"), &SettingOrigin::new("", 0)), Ok(true) | Err(_))
    })
}
