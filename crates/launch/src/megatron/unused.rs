//! Why a Megatron flag fmperf does not read does not matter, or what it would change: the texts
//! of [`crate::Launch::unused`] for the flags of `pretrain_gpt.py`, Megatron-DeepSpeed and the
//! Mixture-of-Experts options, by name.

use crate::why;

/// Why a flag fmperf does not read does not matter (or what it would change), by name.
pub(crate) fn irrelevant(name: &str) -> Option<&'static str> {
    let n = name.replace('_', "-");
    if let Some(why) = more(&n) {
        return Some(why);
    }
    let starts = |ps: &[&str]| ps.iter().any(|p| n.starts_with(p));
    let is = |ps: &[&str]| ps.contains(&n.as_str());
    Some(
        if starts(&["log-", "tensorboard", "wandb", "timing-log", "no-log", "profile", "record-memory", "straggler"])
            || is(&["log-interval", "logging-level", "memory-snapshot-path", "one-logger"])
        {
            why::LOGGING
        } else if starts(&["save", "load", "ckpt", "dist-ckpt", "no-save", "no-load", "async-save", "non-persistent"])
            || is(&[
                "finetune",
                "pretrained-checkpoint",
                "use-checkpoint-args",
                "auto-detect-ckpt-format",
                "use-dist-ckpt",
            ])
        {
            why::CHECKPOINT
        } else if starts(&["data-", "train-data", "valid-data", "test-data", "vocab-file", "merge-file", "mock-data"])
            || is(&["data-path", "split", "num-workers", "dataloader-type", "tokenizer-model", "eod-mask-loss"])
            || starts(&["train-weighted-split", "valid-weighted-split", "test-weighted-split", "tokenizer-name"])
            || is(&["valid-num-workers"])
            || starts(&["reset-position-ids", "reset-attention-mask", "no-mmap", "object-storage", "per-split-data"])
        {
            why::DATA
        } else if starts(&["lr", "min-lr", "weight-decay", "adam-", "sgd-", "loss-scale", "initial-loss-scale"])
            || starts(&["start-weight-decay", "end-weight-decay", "min-loss-scale", "moe-aux-loss", "moe-z-loss"])
            || starts(&["moe-router-score", "moe-router-pre-softmax", "moe-router-bias"])
            || is(&[
                "clip-grad",
                "init-method-std",
                "seed",
                "hysteresis",
                "norm-epsilon",
                "rotary-base",
                "rotary-percent",
            ])
            || is(&["override-opt-param-scheduler", "use-checkpoint-opt-param-scheduler", "rotary-scaling-factor"])
            || is(&["use-rope-scaling", "apply-query-key-layer-scaling", "init-method-xavier-uniform", "fp8-margin"])
            || starts(&["fp8-amax", "fp8-interval"])
        {
            why::HYPERPARAMETER
        } else if starts(&["train-iters", "train-samples", "exit-", "lr-decay-iters", "lr-warmup"])
            || is(&["rampup-batch-size"])
        {
            if n == "rampup-batch-size" {
                "affects early steps only; the final global batch is evaluated"
            } else {
                why::LENGTH
            }
        } else if starts(&["eval-", "test-mode", "skip-train"]) {
            why::EVALUATION
        } else if starts(&["distributed-", "local-rank", "no-initialization", "use-cpu-initialization"])
            || is(&["kill-switch-path", "abort-on-unmet-fused-kernel-constraints"])
        {
            why::JOB
        } else if is(&["deepspeed-config", "deepspeed-configuration"]) {
            "affects performance, not read: fmperf takes the ZeRO stage from --zero-stage and the batch from the \
             flags, not from DeepSpeed's JSON file"
        } else if is(&["deepspeed-activation-checkpointing", "checkpoint-num-layers"]) {
            "already what fmperf assumes (the recomputation --checkpoint-activations asks for, by DeepSpeed's code)"
        } else if is(&["partition-activations"]) {
            "affects memory, not modelled: the saved block inputs split over tensor parallelism"
        } else if is(&["embed-layernorm"]) {
            "affects performance slightly, not modelled (one norm over the embedding's output)"
        } else if starts(&["overlap-grad-reduce", "overlap-param-gather", "use-mcore-models", "disable-bias-linear"])
            || starts(&["use-flash-attn", "position-embedding-type", "use-rotary-position-embeddings"])
            || is(&["normalization", "cp-comm-type"])
        {
            why::ASSUMED
        } else if starts(&["no-", "tp-comm", "manual-gc", "cross-entropy", "moe-router-dtype"])
            || starts(&["use-legacy-models", "defer-embedding", "empty-unused-memory", "ddp-", "grad-reduce-in"])
            || starts(&["fp8-recipe", "use-precision-aware-optimizer", "attention-softmax-in-fp32"])
            || starts(&["accumulate-allreduce-grads-in-fp32", "bias-", "masked-softmax", "apply-rope-fusion"])
        {
            why::KERNEL
        } else if is(&["max-position-embeddings"]) {
            "does not affect performance (the longest position; the training sequence length is --seq-length)"
        } else if starts(&["attention-dropout", "hidden-dropout", "qk-layernorm", "add-qkv-bias", "add-bias-linear"]) {
            "affects performance slightly, not modelled (dropout, biases and norms of a few channels)"
        } else if starts(&["decoder-first-pipeline", "decoder-last-pipeline"]) {
            "affects performance, not modelled: fmperf splits the blocks evenly over the stages (⌈D/pp⌉ on the busiest), \
             counting the ends as blocks where --account-for-embedding/loss-in-pipeline-split say so"
        } else if is(&["pp-partition-method"]) {
            "affects performance, not modelled: fmperf reads the partition methods type:transformer|embedding (the \
             embeddings count as blocks), type:transformer and uniform; balancing by parameters is not modelled"
        } else if let Some(why) = moe_irrelevant(&n) {
            why
        } else if starts(&["distribute-saved-activations", "recompute-modules", "moe-layer-recompute"]) {
            "affects memory, not modelled: fmperf knows none, selective and full recomputation"
        } else if starts(&["patch-tokenizer", "extra-vocab-size"]) {
            "not read: Pai-Megatron-Patch's tokenizer (its vocabulary, plus --extra-vocab-size, comes from the \
             checkpoint's tokenizer files); give --padded-vocab-size or --vocab-size"
        } else if is(&["optimizer"]) {
            "affects memory and time, not modelled: fmperf prices Adam and Muon (--optimizer adam, muon, dist_muon)"
        } else {
            return None;
        },
    )
}

/// Why a Mixture-of-Experts or multi-token-prediction flag fmperf does not read does not matter
/// (or what it would change), by name (dashes).
fn moe_irrelevant(n: &str) -> Option<&'static str> {
    let starts = |ps: &[&str]| ps.iter().any(|p| n.starts_with(p));
    Some(
        if starts(&["moe-router-topk-scaling", "moe-input-jitter", "mtp-loss", "mscale", "moe-router-enable-expert"]) {
            why::HYPERPARAMETER
        } else if starts(&["moe-per-layer-logging"]) {
            why::LOGGING
        } else if starts(&["moe-router-num-groups", "moe-router-group-topk"]) {
            "affects the dispatch, not modelled here: group-limited routing; give `--moe dispatcher=deepep:M` to cap the domains a token reaches"
        } else if starts(&["moe-enable-deepep"]) {
            "already what fmperf assumes with --moe-token-dispatcher-type flex (hierarchical dispatch)"
        } else if starts(&["moe-pad-expert-input-to-capacity", "moe-token-drop-policy"]) {
            "already what fmperf assumes with a capacity factor (each expert padded to its capacity, the excess dropped)"
        } else if starts(&["moe-use-legacy-grouped-gemm", "moe-use-upcycling"]) {
            why::KERNEL
        } else {
            return None;
        },
    )
}

/// Sliding-window and other attention variants fmperf does not price.
const WINDOW: &str = "affects performance, not modelled: sliding-window or chunked attention (fmperf prices full causal \
                      attention over the sequence)";
/// Vision parts of a multimodal model.
const VISION: &str = "affects performance, not modelled: the vision encoder and projector of a multimodal model \
                      (fmperf prices the language model)";
/// LoRA-style training of a few weights.
const ADAPTERS: &str = "affects performance, not modelled: only some weights (adapters, listed modules) are trained; \
                        fmperf prices full training";

/// Flags of Megatron-LM's newer models, Megatron-DeepSpeed, Pai-Megatron-Patch, Megatron-LLM and
/// slime that fmperf does not read, by name (dashes): `(prefixes, why)`, first match wins.
const MORE: &[(&[&str], &str)] = &[
    (&["export-force-local-attention", "sliding-window"], WINDOW),
    (
        &["softmax-type", "quick-geglu", "glu-linear-offset", "activation-func-clamp-value", "enable-gpt-oss"],
        "affects performance slightly, not modelled (activation and softmax variants of gpt-oss)",
    ),
    (&["apply-layernorm-1p", "use-rms-norm", "layernorm-epsilon", "rope-type", "rope-scaling-factor"], why::ASSUMED),
    (
        &[
            "decoupled-lr",
            "decoupled-min-lr",
            "override-lr-scheduler",
            "calculate-per-token-loss",
            "scalar-loss-mask",
            "moe-loss-coeff",
            "moe-router-force-load-balancing",
            "num-warmup-steps",
        ],
        why::HYPERPARAMETER,
    ),
    (
        &[
            "tiktoken-",
            "max-padding-length",
            "repeated-dataloader",
            "vocab-extra-ids",
            "validation-split-percentage",
            "test-file",
            "prompt-column",
            "response-column",
            "history-column",
            "overwrite-cache",
            "version",
            "image-aspect-ratio",
            "group-by-modality-length",
            "prompt-data",
            "input-key",
            "rollout-shuffle",
            "lazy-preprocess",
        ],
        why::DATA,
    ),
    (
        &[
            "moe-flex-dispatcher-backend",
            "use-nccl-ub",
            "megatron-fsdp-grad-comm-dtype",
            "megatron-fsdp-main-grads-dtype",
            "sync-tp-duplicated-parameters",
            "create-moe-param-group",
            "moe-min-capacity",
            "overlap-cpu-optimizer",
            "disable-bf16-reduced-precision-matmul",
        ],
        why::KERNEL,
    ),
    (
        &[
            "enable-experimental",
            "init-model-with-meta-device",
            "train-mode",
            "debug-train-only",
            "hf-checkpoint",
            "ref-load",
            "rollout-function-path",
            "model-name",
        ],
        why::JOB,
    ),
    (&["train-tokens", "num-epoch"], why::LENGTH),
    (&["moe-eval-capacity-factor", "metrics", "predict-with-generate", "eval-"], why::EVALUATION),
    (&["vision-tower", "mm-", "pretrain-mm-mlp-adapter", "image-folder"], VISION),
    (&["trainable", "modules-to-save"], ADAPTERS),
    (
        &["torch-dtype"],
        "does not affect performance here: the dtype the weights are loaded in; the training precision \
                        is --bf16 / --fp16",
    ),
    (
        &["use-dynamic-batch-size", "max-tokens-per-gpu"],
        "affects performance, not modelled: batches packed to a token \
                                                           budget per device (fmperf prices fixed micro-batches)",
    ),
    (&["moe-apply-probs-on-input", "moe-router-topk-limited-devices"], why::HYPERPARAMETER),
    (&["moe-deepep-num-sms", "moe-hybridep-num-sms", "moe-router-padding-for", "moe-extended-tp"], why::KERNEL),
    (
        &["expert-interval"],
        "affects performance, not read: Megatron-DeepSpeed's MoE layer interval; give \
                            --moe-layer-freq with the same pattern",
    ),
    (&["step-batch-size-schedule"], "affects early steps only; the final global batch is evaluated"),
    (
        // Megatron-LM's fine-grained activation offloading (`docs/user-guide/features/
        // fine_grained_activation_offloading.md` at d98e8a6): each listed module's saved tensors
        // copied to pinned host memory on a side stream in the forward and back before its backward.
        &[
            "fine-grained-activation-offloading",
            "offload-modules",
            "min-offloaded-tensor-size",
            "activation-offload-fraction",
            "delta-offload-bytes-across-pp-ranks",
            "fine-grained-offloading-max-inflight-offloads",
            "delay-offload-until-cuda-graph",
        ],
        "affects memory and time, not modelled: the listed modules' saved activations copied to host memory \
         in the forward and back before the backward, over the host link (PCIe on DGX A100/H100, NVLink-C2C \
         on Grace parts); fmperf keeps them on the device and prices no copy",
    ),
    (
        &["pipeline-model-parallel-layout"],
        "affects performance, not modelled: what each pipeline stage (and virtual stage) holds, written out; \
         fmperf splits the blocks evenly over --pipeline-model-parallel-size × \
         --num-virtual-stages-per-pipeline-rank stages",
    ),
    (&["use-persistent-ckpt-worker"], why::CHECKPOINT),
    (
        &["optimizer-cpu-offload", "optimizer-offload-fraction"],
        "affects memory and time, not modelled: optimizer \
                                                                  states kept in host memory",
    ),
];

fn more(n: &str) -> Option<&'static str> {
    MORE.iter().find(|(ps, _)| ps.iter().any(|p| n.starts_with(p))).map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::irrelevant;

    /// The MoE functional tests' offloading and stage-layout flags (Megatron-LM d98e8a6,
    /// `tests/functional_tests/test_cases/moe/gpt3_moe_mcore_te_tp2_pp2_ep4_etp1_fine_grained_offloading`)
    /// are said to be unmodelled, not unknown; `_` spellings read as `-`.
    #[test]
    fn offloading_and_stage_layout_flags_are_said_not_modelled() {
        for flag in ["fine-grained-activation-offloading", "offload_modules", "activation-offload-fraction"] {
            let why = irrelevant(flag).unwrap_or_default();
            assert!(why.contains("not modelled") && why.contains("host memory"), "{flag}: {why}");
        }
        let layout = irrelevant("pipeline-model-parallel-layout").unwrap_or_default();
        assert!(layout.contains("not modelled") && layout.contains("evenly"), "{layout}");
        assert_eq!(irrelevant("use-persistent-ckpt-worker"), Some(crate::why::CHECKPOINT));
    }
}
