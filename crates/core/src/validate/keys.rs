//! The names people give the fields of a measured run. A file written by another group names
//! the same figure its own way: Hugging Face `config.json` keys (`num_hidden_layers`,
//! `hidden_size`), Megatron-LM arguments (`tensor_model_parallel_size`, `micro_batch_size`),
//! DeepSpeed (`train_micro_batch_size_per_gpu`, `gradient_accumulation_steps`), torchtitan
//! (`data_parallel_shard_degree`-style `*_degree`), MaxText (`emb_dim`, `mlp_dim`,
//! `max_target_length`) or plain words (`num_gpus`, `tflops_per_gpu`). [`aliases`] lists, for each
//! field of fmperf's schema, the names read as that field, canonical name first; the reader takes
//! the first one present.
//!
//! Only names that mean exactly the field are listed: a name whose unit or scope is ambiguous
//! (`tokens_per_s` without "per device" or "total", `batch_size` without "global" or "micro") is
//! not read, so such a row is skipped naming the figure it lacks instead of being misread.

use serde_json::{Map, Value};

/// The names read as `key` (a field of the schema of measured-training-runs.json or
/// measured-moe-runs.json), canonical first; `None` for a field that has no other names.
pub fn aliases(key: &str) -> Option<&'static [&'static str]> {
    ALIASES.iter().find(|names| names[0] == key).copied()
}

/// The value of field `key` in `obj` under the first of its names ([`aliases`]) given and not
/// null, with the name it was given under.
pub fn find<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<(&'a str, &'a Value)> {
    let one = [key];
    let names: &[&str] = aliases(key).unwrap_or(&one);
    names
        .iter()
        .find_map(|n| obj.get_key_value(*n).filter(|(_, v)| !v.is_null()))
        .or_else(|| {
            // The same names as command-line flags or in another case (`--expert-model-parallel-size`,
            // `Tensor_Parallel_Size`).
            obj.iter().find(|(k, v)| !v.is_null() && names.contains(&normalised(k).as_str()))
        })
        .map(|(k, v)| (k.as_str(), v))
}

/// A field name as the alias table writes names: lower case, `-` and spaces as `_`, without the
/// leading dashes of a command-line flag.
fn normalised(name: &str) -> String {
    name.trim().trim_start_matches('-').to_lowercase().replace(['-', ' '], "_")
}

/// A whole number ≥ 0: a JSON number (`64`, `64.0`); `None` for anything else, a string holding
/// digits included (`"4096"` is text: a reader refuses it naming the field, issue 30).
pub fn whole_number(v: &Value) -> Option<u64> {
    let whole = |x: f64| (x.fract() == 0.0 && (0.0..9e15).contains(&x)).then_some(x as u64);
    v.as_u64().or_else(|| v.as_f64().and_then(whole))
}

/// A finite JSON number; `None` for anything else (a string holding one included).
pub fn decimal(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite())
}

/// Each row: a field of the schema, then the other names read as it.
const ALIASES: &[&[&str]] = &[
    // Groups of fields.
    &["model", "model_config", "architecture", "model_shape"],
    &["parallel", "parallelism", "parallel_config", "distributed"],
    &["batch", "batch_config", "batching"],
    &["measured", "results", "result", "metrics", "performance", "measurement"],
    &["source", "reference", "citation", "paper"],
    // The run.
    &[
        "num_devices",
        "num_gpus",
        "n_gpus",
        "gpus",
        "num_accelerators",
        "accelerators",
        "devices",
        "num_chips",
        "chips",
        "world_size",
    ],
    &["hardware", "gpu", "accelerator", "gpu_type", "accelerator_type", "device_type"],
    &["hardware_id", "system_id"],
    &["precision", "dtype", "mixed_precision", "training_precision"],
    &["framework", "training_framework", "stack", "software"],
    // The model.
    &["name", "model_name"],
    &["layers", "num_layers", "n_layers", "num_hidden_layers", "n_layer", "base_num_decoder_layers", "depth"],
    &["hidden", "hidden_size", "d_model", "n_embd", "emb_dim", "base_emb_dim", "model_dim", "dim"],
    &["heads", "num_heads", "n_heads", "num_attention_heads", "n_head", "base_num_query_heads"],
    &["kv_heads", "num_kv_heads", "n_kv_heads", "num_key_value_heads", "num_query_groups", "base_num_kv_heads"],
    &["head_dim", "kv_channels", "head_size"],
    &["ffn_hidden", "ffn_hidden_size", "intermediate_size", "d_ff", "mlp_dim", "base_mlp_dim", "ffn_dim"],
    &["ffn_type", "hidden_act", "activation", "mlp_activations", "activation_function"],
    &["seq_len", "seq_length", "sequence_length", "max_seq_len", "max_target_length", "context_length", "seq"],
    &["vocab", "vocab_size", "padded_vocab_size"],
    &["tied_embeddings", "tie_word_embeddings", "tie_embeddings"],
    // Mixture of Experts (measured-moe-runs.json's names first; Hugging Face config.json of
    // Mixtral, DeepSeek-V2/V3, Qwen-MoE, Llama 4; Megatron-LM's `--num-experts` family).
    &[
        "num_experts",
        "num_local_experts",
        "n_routed_experts",
        "moe_num_experts",
        "num_moe_experts",
        "num_routed_experts",
        "n_experts",
    ],
    &["top_k", "num_experts_per_tok", "moe_router_topk", "moe_top_k", "experts_per_token", "router_topk"],
    &[
        "moe_ffn_hidden",
        "moe_intermediate_size",
        "moe_ffn_hidden_size",
        "expert_intermediate_size",
        "expert_ffn_hidden",
    ],
    &["ffn_hidden_dense", "dense_intermediate_size", "dense_ffn_hidden", "dense_ffn_hidden_size"],
    &["shared_experts", "n_shared_experts", "num_shared_experts", "moe_shared_experts"],
    // The shared experts' total width (Qwen-MoE's one shared expert; Megatron's summed width).
    &["shared_ffn_hidden", "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"],
    &["dense_layers", "first_k_dense_replace", "num_dense_layers", "first_dense_layers"],
    &["moe_layers", "num_moe_layers"],
    // Every how many layers one is MoE (an integer step).
    &["moe_layer_step", "moe_layer_freq", "interleave_moe_layer_step", "decoder_sparse_step"],
    &["mtp_layers", "num_nextn_predict_layers", "mtp_num_layers"],
    &["router", "scoring_func", "moe_router_score_function", "router_type"],
    &["dispatcher", "moe_token_dispatcher_type", "token_dispatcher", "moe_dispatcher", "moe_flex_dispatcher_backend"],
    // The expert all-to-all overlapped with computation (Megatron-Core's
    // `overlap_moe_expert_parallel_comm`, "EP A2A overlap").
    &["a2a_overlap", "overlap_moe_expert_parallel_comm", "moe_a2a_overlap", "ep_a2a_overlap", "ep_overlap"],
    // The parallel layout.
    &[
        "tp",
        "tensor_parallel",
        "tensor_model_parallel_size",
        "tensor_parallel_size",
        "tensor_parallel_degree",
        "tp_size",
    ],
    &[
        "pp",
        "pipeline_parallel",
        "pipeline_model_parallel_size",
        "pipeline_parallel_size",
        "pipeline_parallel_degree",
        "pp_size",
    ],
    &["dp", "data_parallel", "data_parallel_size", "data_parallel_degree", "dp_size"],
    &["cp", "context_parallel", "context_parallel_size", "context_parallel_degree", "cp_size"],
    &[
        "ep",
        "expert_parallel",
        "expert_model_parallel_size",
        "expert_parallel_size",
        "expert_parallel_degree",
        "ep_size",
        "expert_parallelism",
        "moe_expert_parallel_size",
        "ep_degree",
        "ici_expert_parallelism",
    ],
    &[
        "etp",
        "expert_tensor_parallel",
        "expert_tensor_parallel_size",
        "expert_tensor_parallel_degree",
        "etp_size",
        "moe_expert_tensor_parallel_size",
        "expert_tensor_parallelism",
    ],
    &["sequence_parallel", "sp", "sequence_parallelism"],
    &["interleave_vpp", "vpp", "virtual_pipeline_model_parallel_size", "virtual_pipeline_stages", "virtual_stages"],
    &["zero_stage", "zero", "zero_optimization_stage"],
    &[
        "recompute",
        "activation_checkpointing",
        "activation_checkpoint",
        "recompute_granularity",
        "remat_policy",
        "gradient_checkpointing",
    ],
    &["distributed_optimizer", "use_distributed_optimizer"],
    &["flash_attention", "use_flash_attn", "use_flash_attention"],
    // The batch.
    &["global_batch_seqs", "global_batch_size", "global_batch", "gbs", "global_batch_sequences"],
    &["micro_batch", "micro_batch_size", "mbs", "train_micro_batch_size_per_gpu", "micro_batch_size_per_gpu"],
    &["grad_accum", "gradient_accumulation_steps", "grad_accumulation_steps", "accumulation_steps"],
    &["global_batch_tokens", "tokens_per_batch", "global_batch_size_tokens", "batch_tokens"],
    // The figure.
    &["tflops_per_device", "tflops_per_gpu", "model_tflops_per_gpu", "tflops_per_chip", "tflops_per_accelerator"],
    &["tokens_per_s_total", "tokens_per_second_total", "total_tokens_per_s", "cluster_tokens_per_s"],
    &[
        "tokens_per_s_per_device",
        "tokens_per_s_per_gpu",
        "tokens_per_second_per_gpu",
        "tokens_per_sec_per_gpu",
        "tokens_per_gpu_per_s",
        "tps_per_gpu",
        "tokens_per_s_per_chip",
    ],
    &[
        "step_time_s",
        "step_time",
        "iteration_time_s",
        "iteration_time",
        "time_per_step_s",
        "seconds_per_step",
        "elapsed_time_per_iteration_s",
    ],
    &["samples_per_s", "samples_per_sec", "samples_per_second", "sequences_per_s", "throughput_samples_per_s"],
    &["memory_gb", "peak_memory_gb", "max_memory_gb", "memory_peak_gb"],
    &["memory_gib", "peak_memory_gib", "max_memory_gib", "memory_peak_gib"],
];

/// Figures given in another unit than the schema's: (name, schema field, factor to the field's unit).
pub const SCALED: &[(&str, &str, f64)] = &[
    ("step_time_ms", "step_time_s", 1e-3),
    ("iteration_time_ms", "step_time_s", 1e-3),
    ("elapsed_time_per_iteration_ms", "step_time_s", 1e-3),
    ("memory_mb", "memory_gb", 1e-3),
    ("peak_memory_mb", "memory_gb", 1e-3),
    ("memory_mib", "memory_gib", 1.0 / 1024.0),
    ("peak_memory_mib", "memory_gib", 1.0 / 1024.0),
];

/// Memory figures whose name says which figure it is: (name, schema field, factor to the field's
/// unit, the memory kind in the schema's words). PyTorch's `torch.cuda.max_memory_allocated()` and
/// `max_memory_reserved()` and nvidia-smi's "memory used" (printed in MiB) under the names logs and
/// reports give them.
pub const MEMORY_KIND_KEYS: &[(&str, &str, f64, &str)] = &[
    ("max_memory_allocated_gb", "memory_gb", 1.0, "peak_allocated"),
    ("peak_allocated_gb", "memory_gb", 1.0, "peak_allocated"),
    ("memory_peak_allocated_gb", "memory_gb", 1.0, "peak_allocated"),
    ("max_memory_allocated_gib", "memory_gib", 1.0, "peak_allocated"),
    ("peak_allocated_gib", "memory_gib", 1.0, "peak_allocated"),
    ("memory_peak_allocated_gib", "memory_gib", 1.0, "peak_allocated"),
    ("max_memory_reserved_gb", "memory_gb", 1.0, "peak_reserved"),
    ("peak_reserved_gb", "memory_gb", 1.0, "peak_reserved"),
    ("memory_peak_reserved_gb", "memory_gb", 1.0, "peak_reserved"),
    ("max_memory_reserved_gib", "memory_gib", 1.0, "peak_reserved"),
    ("peak_reserved_gib", "memory_gib", 1.0, "peak_reserved"),
    ("memory_peak_reserved_gib", "memory_gib", 1.0, "peak_reserved"),
    ("nvidia_smi_gb", "memory_gb", 1.0, "nvidia_smi"),
    ("nvidia_smi_gib", "memory_gib", 1.0, "nvidia_smi"),
    ("nvidia_smi_mib", "memory_gib", 1.0 / 1024.0, "nvidia_smi"),
    ("gpu_memory_used_mib", "memory_gib", 1.0 / 1024.0, "nvidia_smi"),
    ("gpu_memory_used_gb", "memory_gb", 1.0, "nvidia_smi"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_means_one_field() {
        let mut seen = std::collections::BTreeMap::new();
        for names in ALIASES {
            for n in *names {
                assert!(seen.insert(*n, names[0]).is_none(), "{n} is listed for two fields");
            }
        }
        let kinds = MEMORY_KIND_KEYS.iter().map(|(n, f, x, _)| (n, f, x));
        for (name, field, factor) in SCALED.iter().map(|(n, f, x)| (n, f, x)).chain(kinds) {
            assert!(!seen.contains_key(name), "{name} is both scaled and plain");
            assert!(seen.contains_key(field), "{field} is a field of the schema");
            assert!(*factor > 0.0);
        }
        assert_eq!(aliases("layers").unwrap()[0], "layers");
        assert!(aliases("tp").unwrap().contains(&"tensor_model_parallel_size"));
        assert_eq!(aliases("oom"), None);
    }
}
