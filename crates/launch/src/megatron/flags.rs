//! The Megatron flags fmperf reads, by name: which take no value ([`SWITCHES`]) or several
//! ([`MULTI_VALUE`]), and what each sets ([`apply`]: the model's shape, the parallel degrees and
//! context-parallel flavour, the sharding, the optimizer, the batch [samples], recomputation,
//! precision, per-step statistics, the layer spec and attention kernel, the sliding window and the
//! experts). The NeMo / Megatron-Bridge YAML reader shares [`apply`] (its keys are the same names
//! with underscores); what depends on several flags is read afterwards (`combined`).

use super::Pending;
use crate::Launch;
use crate::settings::{SettingOrigin, boolean, is_null, number, positive};
use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::context_parallel::CpComm;
use fmperf_core::extended::muon::Optimizer;
use fmperf_core::extended::{AttentionKernel, Sharding, TransformerImpl};
use fmperf_core::vocab::NoteList;

/// Megatron flags that take several values (argparse `nargs`).
pub(super) const MULTI_VALUE: &[&str] = &[
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
pub(super) const SWITCHES: &[&str] = &[
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
        // RoPE fusion (`apply_rope_fusion`, on unless `--no-rope-fusion`: arguments.py l. 2902 at d98e8a6).
        "no-rope-fusion" => put!(l, rope_fusion, !switch(value, o)?, o),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::megatron::parse;

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
        // RoPE fusion: `--no-rope-fusion` turns it off; not stated, Megatron's default.
        let rope =
            |flags: &str| parse(&format!("python pretrain_gpt.py {flags}")).map(|l| l.settings.rope_fusion.copied());
        assert_eq!(rope("--position-embedding-type rope --no-rope-fusion").unwrap(), Some(false));
        assert_eq!(rope("--num-layers 12").unwrap(), None);
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
}
