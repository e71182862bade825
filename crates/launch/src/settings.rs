//! What a configuration file says, field by field, each value with the flag or key it came from
//! ([`Slot`]), so that a later rule (a degree that does not divide the heads, a batch that does not
//! divide) can name the flag the user wrote.

use fmperf_core::Error;
use fmperf_core::catalog::Precision;
use fmperf_core::extended::muon::Optimizer;
use fmperf_core::extended::{Recompute, Sharding};

/// Where a value was read: the flag or key as written and its line (1-based; 0 when unknown).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SettingOrigin {
    /// The flag or key (`--tensor-model-parallel-size`, `parallelism.tensor_parallel_degree`).
    pub key: String,
    /// Line in the file (1-based), 0 when not known.
    pub line: usize,
    /// The file, when several were read together (`ds_config.json`); `None` for the only or the
    /// first file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl SettingOrigin {
    /// An origin.
    pub fn new(key: impl Into<String>, line: usize) -> SettingOrigin {
        SettingOrigin { key: key.into(), line, file: None }
    }

    /// The same line with another key.
    pub fn with_key(&self, key: impl Into<String>) -> SettingOrigin {
        SettingOrigin { key: key.into(), line: self.line, file: self.file.clone() }
    }

    /// The same key at another line.
    pub fn with_line(&self, line: usize) -> SettingOrigin {
        SettingOrigin { key: self.key.clone(), line, file: self.file.clone() }
    }

    /// An error about this flag or key: `field` is the key, the rule is prefixed by the line.
    pub fn error(&self, value: impl std::fmt::Display, rule: impl Into<String>) -> Error {
        let rule = rule.into();
        let rule = match (&self.file, self.line) {
            (Some(f), 0) => format!("{f}: {rule}"),
            (Some(f), n) => format!("{f} line {n}: {rule}"),
            (None, 0) => rule,
            (None, n) => format!("line {n}: {rule}"),
        };
        Error::invalid(self.key.clone(), value, rule)
    }
}

/// One key of a configuration file as its reader found it: the dotted path (`model.num_layers`,
/// `parallelism.tensor_parallel_degree`), the value as text (quotes removed; lists and inline
/// tables as written) and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Dotted path of the key (sequence items by index: `layers.0.name`).
    pub key: String,
    /// The value as text (`""` for null or an empty value).
    pub value: String,
    /// Line in the file (1-based).
    pub line: usize,
}

/// One value and where it came from. A later value replaces an earlier one (as argparse and YAML
/// overrides do); [`Slot::put`] reports whether it did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Slot<T> {
    /// The value, when the file gives one.
    pub value: Option<T>,
    /// Its flag or key.
    pub origin: Option<SettingOrigin>,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot { value: None, origin: None }
    }
}

impl<T: PartialEq> Slot<T> {
    /// Sets the value; returns the earlier origin when a different value was replaced.
    pub fn put(&mut self, value: T, origin: &SettingOrigin) -> Option<SettingOrigin> {
        let replaced = match (&self.value, &self.origin) {
            (Some(old), Some(o)) if *old != value => Some(o.clone()),
            _ => None,
        };
        self.value = Some(value);
        self.origin = Some(origin.clone());
        replaced
    }

    /// Sets the value of a file whose keys must not disagree (JSON, TOML: two spellings of one
    /// setting, `n_embd` and `hidden_size`, or a key of an old schema beside the new one): a
    /// different value than one set before is an error naming both keys and lines.
    pub fn put_once(&mut self, value: T, origin: &SettingOrigin) -> Result<(), Error>
    where
        T: std::fmt::Display,
    {
        if let (Some(old), Some(first)) = (&self.value, &self.origin) {
            if *old == value {
                // The same value again: the first key stays its origin.
                return Ok(());
            }
            let at = if first.line > 0 { format!(" (line {})", first.line) } else { String::new() };
            return Err(origin.error(
                &value,
                format!(
                    "contradicts {}{at} = {old}: one setting given twice with different values; keep one",
                    first.key
                ),
            ));
        }
        self.put(value, origin);
        Ok(())
    }

    /// The value, if any.
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// The flag or key it came from, or `fallback` (a field name) when unset.
    pub fn key_or<'a>(&'a self, fallback: &'a str) -> &'a str {
        self.origin.as_ref().map_or(fallback, |o| o.key.as_str())
    }

    /// An error about this value (named by its flag, or by `fallback` when unset).
    pub fn error(&self, fallback: &str, value: impl std::fmt::Display, rule: impl Into<String>) -> Error {
        match &self.origin {
            Some(o) => o.error(value, rule),
            None => Error::invalid(fallback, value, rule.into()),
        }
    }
}

impl<T: Copy> Slot<T> {
    /// The value, copied.
    pub fn copied(&self) -> Option<T> {
        self.value
    }
}

/// Mixture-of-Experts fields, kept as read (see [`super::experts`], which turns them into the
/// workload's `MoeShape`, `Mla` and MTP blocks and the MoE options), with the multi-head latent
/// attention and multi-token-prediction fields of the DeepSeek-V3 family.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Moe {
    /// Routed experts [count].
    pub experts: Slot<u64>,
    /// Experts each token is routed to.
    pub top_k: Slot<u64>,
    /// Hidden width of one routed expert's MLP [channels].
    pub expert_ffn_hidden: Slot<u64>,
    /// Hidden width of the shared experts' MLP [channels] (all shared experts together).
    pub shared_ffn_hidden: Slot<u64>,
    /// Shared experts [count] (Hugging Face configs count them).
    pub shared_experts: Slot<u64>,
    /// Expert-parallel degree [devices].
    pub ep: Slot<u64>,
    /// Expert tensor-parallel degree [devices].
    pub etp: Slot<u64>,
    /// Which layers are MoE layers, as written (`1`, `[0]*3+[1]*58`, a first-k-dense count).
    pub layer_pattern: Slot<String>,
    /// Dense (non-MoE) layers at the start of the model [count].
    pub first_dense_layers: Slot<u64>,
    /// Capacity factor (token dropping), as written.
    pub capacity_factor: Slot<f64>,
    /// Token dispatcher (`alltoall`, `allgather`, `flex`), as written.
    pub dispatcher: Slot<String>,
    /// Grouped expert GEMMs.
    pub grouped_gemm: Slot<bool>,
    /// Router score function (`softmax`, `sigmoid`), as written.
    pub router: Slot<String>,
    /// Overlap of the expert all-to-all with another micro-batch's compute.
    pub a2a_overlap: Slot<bool>,
    /// Multi-head latent attention switched on (Megatron's `--multi-latent-attention`).
    pub mla: Slot<bool>,
    /// MLA query compression rank [channels] (absent: queries projected directly).
    pub q_lora_rank: Slot<u64>,
    /// MLA key/value latent rank [channels].
    pub kv_lora_rank: Slot<u64>,
    /// MLA per-head query/key width without RoPE [channels].
    pub qk_nope_head_dim: Slot<u64>,
    /// MLA per-head rotary query/key width [channels].
    pub qk_rope_head_dim: Slot<u64>,
    /// MLA per-head value width [channels].
    pub v_head_dim: Slot<u64>,
    /// Multi-token-prediction blocks [count].
    pub mtp_layers: Slot<u64>,
    /// Transformer Engine's fused token permutation (`--moe-permute-fusion`), read into
    /// [`fmperf_core::extended::moe::host_flags::MoeHostFlags`] by [`crate::moe_host`].
    pub permute_fusion: Slot<bool>,
    /// Transformer Engine's fused router top-k and auxiliary loss (`--moe-router-fusion`).
    pub router_fusion: Slot<bool>,
    /// The router's load-balancing loss as written (`--moe-router-load-balancing-type`).
    pub balancing: Slot<String>,
    /// The shared experts overlapped with the dispatch (`--moe-shared-expert-overlap`), read by
    /// [`crate::moe_host::shared_overlap`].
    pub shared_overlap: Slot<bool>,
    /// The CUDA-graph implementation as written (`--cuda-graph-impl`; `--enable-cuda-graph` is
    /// `local`, `--external-cuda-graph` `transformer_engine`).
    pub graph_impl: Slot<String>,
    /// The modules the per-layer CUDA graphs capture, as written (`--cuda-graph-modules`, the
    /// older `--cuda-graph-scope`).
    pub graph_modules: Slot<String>,
    /// The file is Megatron-LM's own arguments as written (a launch's `pretrain_gpt.py` command, a
    /// functional test's `MODEL_ARGS`): an absent `--moe-grouped-gemm` is Megatron-Core's default,
    /// `SequentialMLP`. Not a key of the file (never listed among its values).
    pub megatron_args: Slot<bool>,
}

impl Moe {
    /// Whether the file describes an MoE model (more than one routed expert).
    pub fn is_moe(&self) -> bool {
        self.experts.copied().is_some_and(|e| e > 1)
    }

    /// Every MoE value the file sets, as `(flag or key, value)`, in file order (for listing them
    /// as without effect on a dense model).
    pub fn given(&self) -> Vec<(SettingOrigin, String)> {
        fn one<T: std::fmt::Display>(slot: &Slot<T>) -> Option<(SettingOrigin, String)> {
            Some((slot.origin.clone()?, slot.value.as_ref()?.to_string()))
        }
        let mut out: Vec<(SettingOrigin, String)> = [
            one(&self.experts),
            one(&self.top_k),
            one(&self.expert_ffn_hidden),
            one(&self.shared_ffn_hidden),
            one(&self.shared_experts),
            one(&self.ep),
            one(&self.etp),
            one(&self.layer_pattern),
            one(&self.first_dense_layers),
            one(&self.capacity_factor),
            one(&self.dispatcher),
            one(&self.grouped_gemm),
            one(&self.router),
            one(&self.a2a_overlap),
            one(&self.mla),
            one(&self.q_lora_rank),
            one(&self.kv_lora_rank),
            one(&self.qk_nope_head_dim),
            one(&self.qk_rope_head_dim),
            one(&self.v_head_dim),
            one(&self.mtp_layers),
            one(&self.permute_fusion),
            one(&self.router_fusion),
            one(&self.balancing),
            one(&self.shared_overlap),
            one(&self.graph_impl),
            one(&self.graph_modules),
        ]
        .into_iter()
        .flatten()
        .collect();
        fmperf_core::sort::sort_by_key(&mut out, |(o, _)| o.line);
        out
    }
}

/// Everything fmperf reads from a configuration. Counts are dimensionless, widths in channels,
/// lengths in tokens, batches in samples (sequences).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// A model name or flavour (`llama3 8B`, `LlamaForCausalLM`).
    pub model_name: Slot<String>,
    /// Transformer blocks.
    pub layers: Slot<u64>,
    /// Model width [channels].
    pub hidden: Slot<u64>,
    /// MLP hidden width [channels] (gated MLPs: each branch).
    pub ffn_hidden: Slot<u64>,
    /// Query heads.
    pub heads: Slot<u64>,
    /// Key/value heads (query groups).
    pub kv_heads: Slot<u64>,
    /// Width of one head [channels] (default `hidden / heads`).
    pub head_dim: Slot<u64>,
    /// Gated MLP (SwiGLU / GeGLU).
    pub gated_mlp: Slot<bool>,
    /// Vocabulary size [tokens] (before padding).
    pub vocab: Slot<u64>,
    /// Megatron's padding of the vocabulary to a multiple of this times `tp` [tokens].
    pub vocab_divisible_by: Slot<u64>,
    /// Embedding and output head share their weights.
    pub tied_embeddings: Slot<bool>,
    /// Training sequence length [tokens].
    pub seq_len: Slot<u64>,
    /// Sliding-window attention: keys each query of a windowed block attends to [tokens]
    /// (Megatron's `--window-size` left side, Hugging Face's `sliding_window`).
    pub window_tokens: Slot<u64>,
    /// Which blocks attend through the window, as written: an integer `n` (one full block in every
    /// `n`) or a list with one 0/1 per block (1: windowed), Megatron's `--window-attn-skip-freq`
    /// forms; unset with a window: every block (see [`crate::window`]).
    pub window_pattern: Slot<String>,
    /// Mixture-of-Experts fields.
    pub moe: Moe,
    /// Tensor-parallel degree.
    pub tp: Slot<u64>,
    /// Pipeline stages.
    pub pp: Slot<u64>,
    /// Context-parallel degree.
    pub cp: Slot<u64>,
    /// Data-parallel degree (when the file states it; else devices / (tp·pp·cp)).
    pub dp: Slot<u64>,
    /// Data-parallel replicas of hybrid sharding (torchtitan's `data_parallel_replicate_degree`).
    pub dp_replicate: Slot<u64>,
    /// Copies of the distributed optimizer across the data-parallel group (Megatron-Core's
    /// `--num-distributed-optimizer-instances`, default 1): ZeRO-1/2 states sharded within groups
    /// of dp·cp / N ranks and replicated across the N groups (hierarchical ZeRO, `shard_group`).
    pub optimizer_instances: Slot<u64>,
    /// The optimizer's algorithm as named (Megatron's `--optimizer adam|muon|dist_muon`); with
    /// the distributed optimizer Muon is its layer-wise variant ([`fmperf_core::extended::muon`]).
    pub optimizer: Slot<Optimizer>,
    /// Virtual pipeline stages per device (interleaving).
    pub vpp: Slot<u64>,
    /// Blocks per virtual pipeline stage (Megatron's `--num-layers-per-virtual-pipeline-stage`).
    pub layers_per_virtual_stage: Slot<u64>,
    /// Micro-batch size [samples].
    pub mbs: Slot<u64>,
    /// Per-rank batch of torchtitan [samples] (`training.local_batch_size`).
    pub local_batch: Slot<u64>,
    /// Global batch [samples].
    pub global_batch: Slot<u64>,
    /// Gradient-accumulation steps (micro-batches per step per data-parallel rank; DeepSpeed's
    /// `gradient_accumulation_steps`, Hugging Face Trainer's `--gradient_accumulation_steps`,
    /// MaxText's `gradient_accumulation_steps`): the global batch is `mbs · ga · dp`.
    pub grad_accumulation: Slot<u64>,
    /// Activation recomputation.
    pub recompute: Slot<Recompute>,
    /// Blocks recomputed per stage when not all of them are (Megatron's `--recompute-method block`).
    pub recompute_blocks: Slot<u64>,
    /// Sharding of model states.
    pub sharding: Slot<Sharding>,
    /// Sequence parallelism inside tensor parallelism.
    pub sequence_parallel: Slot<bool>,
    /// The context-parallel flavour (Megatron `--cp-comm-type`: `p2p` ring, `a2a` Ulysses,
    /// `a2a+p2p` hybrid).
    pub cp_comm: Slot<fmperf_core::extended::context_parallel::CpComm>,
    /// The hybrid's Ulysses degree (Megatron `--hierarchical-context-parallel-sizes`' first size).
    pub cp_ulysses: Slot<u64>,
    /// The attention kernel (Megatron's `--attention-backend`, Hugging Face's
    /// `attn_implementation`): fused, FlashAttention-2 class, or unfused.
    pub attention_kernel: Slot<fmperf_core::extended::AttentionKernel>,
    /// Precision of the linear layers' matmuls.
    pub precision: Slot<Precision>,
    /// Number formats of the weights, gradients and optimizer states where the file names them
    /// (LLaMA-Factory's `pure_bf16: true`: no FP32 master copy); unset: mixed precision.
    pub optimizer_states: Slot<fmperf_core::extended::OptimizerStates>,
    /// FP8 primary weights (`--fp8-param-gather`, `fp8_param_gather`; Megatron-Bridge's FP8
    /// mixed-precision recipes turn it on): read with FP8 precision as `fp8_recipe=te_fp8_weights`.
    pub fp8_weights: Slot<bool>,
    /// Megatron's `--log-num-zeros-in-grad`: the per-step zero count over the gradients, read as
    /// the switch `log_num_zeros_in_grad` (host time, `fmperf_core::extended::step_host`).
    pub log_num_zeros_in_grad: Slot<bool>,
    /// Megatron's `--log-params-norm`: the per-step parameter norm, read as `log_params_norm`.
    pub log_params_norm: Slot<bool>,
    /// Megatron's gradient-accumulation fusion (`--no-gradient-accumulation-fusion` turns it off;
    /// NeMo's and Megatron-Bridge's `gradient_accumulation_fusion`), read as the switch
    /// `grad_accumulation_fusion` (`fmperf_core::extended::step_host`).
    pub grad_accumulation_fusion: Slot<bool>,
    /// Megatron-Core's RoPE fusion (`--no-rope-fusion` turns it off), read as the switch
    /// `rope_fusion` (`fmperf_core::extended::unfused_rope`).
    pub rope_fusion: Slot<bool>,
    /// Megatron-Core's layer spec (`--transformer-impl`), read as the switch `transformer_impl`
    /// (`fmperf_core::extended::layer_python`).
    pub transformer_impl: Slot<fmperf_core::extended::TransformerImpl>,
    /// FSDP gathers torchao's float8 linear weights in FP8 (torchtitan
    /// `float8.enable_fsdp_float8_all_gather`): read with FP8 precision as
    /// `fp8_recipe=torchao_fp8_gather`.
    pub fp8_all_gather: Slot<bool>,
    /// Gradients accumulated in an FP32 buffer of every parameter, not sharded (DeepSpeed's BF16
    /// optimizer): read as `grad_accumulation_buffer`.
    pub fp32_grad_accumulation: Slot<bool>,
    /// The embedding counts as one block in the pipeline split (Megatron-LM
    /// `--account-for-embedding-in-pipeline-split`; Megatron-DeepSpeed's `--pp-partition-method`
    /// naming the embedding sets both this and [`Self::head_as_block`]).
    pub embedding_as_block: Slot<bool>,
    /// The head with its loss counts as one block in the pipeline split (Megatron-LM
    /// `--account-for-loss-in-pipeline-split`).
    pub head_as_block: Slot<bool>,
    /// The model's blocks run under `torch.compile` (torchtitan `[compile] enable`): fused
    /// element-wise kernels; `false`: PyTorch eager kernels (`fusion=eager`). Unset: the
    /// framework's own kernels (fused).
    pub compiled: Slot<bool>,
    /// The loss is compiled with the model (torchtitan `[compile] components` with `"loss"`, its
    /// default): no FP32 logits held (`compiled_loss`).
    pub compiled_loss: Slot<bool>,
    /// The output head runs inside the loss chunks (Liger's fused linear cross-entropy, which
    /// Hugging Face's `use_liger_kernel` and LLaMA-Factory's `enable_liger_kernel` turn on):
    /// `loss_head_chunked`, in Liger's chunk sizes.
    pub loss_head_chunked: Slot<bool>,
    /// The system the file is meant for (a catalog id or spec).
    pub system: Slot<String>,
    /// Devices of the run.
    pub devices: Slot<u64>,
    /// Devices per node (launcher), used with `nodes`.
    pub devices_per_node: Slot<u64>,
    /// Nodes (launcher).
    pub nodes: Slot<u64>,
}

/// Parses a positive integer value of `origin` (underscores and a leading `+` allowed).
pub fn positive(v: &str, origin: &SettingOrigin) -> Result<u64, Error> {
    let t = v.trim().trim_matches(|c| c == '"' || c == '\'').replace('_', "");
    let t = t.strip_prefix('+').unwrap_or(&t);
    match t.parse::<u64>() {
        Ok(n) if n > 0 && n <= 1 << 40 => Ok(n),
        Ok(0) => Err(origin.error(v, "must be a positive integer")),
        _ => Err(origin.error(v, "must be a positive integer")),
    }
}

/// Parses a number value of `origin`.
pub fn number(v: &str, origin: &SettingOrigin) -> Result<f64, Error> {
    let t = v.trim().trim_matches(|c| c == '"' || c == '\'');
    t.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| origin.error(v, "must be a number"))
}

/// Parses a boolean value of `origin` (`true`/`false`, `True`/`False`, `1`/`0`, `yes`/`no`).
pub fn boolean(v: &str, origin: &SettingOrigin) -> Result<bool, Error> {
    match v.trim().trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(origin.error(v, "must be true or false")),
    }
}

/// Whether a value is null in the configuration languages (`null`, `~`, `None`, empty).
pub fn is_null(v: &str) -> bool {
    matches!(v.trim(), "" | "null" | "~" | "None" | "none" | "Null" | "NULL")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_keep_origin_and_report_replacement() {
        let mut s: Slot<u64> = Slot::default();
        let a = SettingOrigin::new("--tp", 3);
        assert!(s.put(8, &a).is_none());
        assert!(s.put(8, &a).is_none());
        let b = SettingOrigin::new("--tensor-model-parallel-size", 9);
        assert_eq!(s.put(4, &b), Some(a));
        assert_eq!(s.copied(), Some(4));
        let e = s.error("tp", 4, "must divide 6");
        assert_eq!(e.field(), Some("--tensor-model-parallel-size"));
        assert!(e.to_string().contains("line 9"), "{e}");
    }

    #[test]
    fn put_once_refuses_two_spellings_that_disagree() {
        let mut s: Slot<u64> = Slot::default();
        s.put_once(4096, &SettingOrigin::new("hidden_size", 3)).unwrap();
        s.put_once(4096, &SettingOrigin::new("n_embd", 7)).unwrap();
        let e = s.put_once(2048, &SettingOrigin::new("d_model", 9)).unwrap_err();
        assert_eq!(e.field(), Some("d_model"));
        assert!(e.to_string().contains("hidden_size (line 3) = 4096"), "{e}");
    }

    #[test]
    fn values_parse_with_rules() {
        let o = SettingOrigin::new("--num-layers", 1);
        assert_eq!(positive("80", &o).unwrap(), 80);
        assert_eq!(positive("1_024", &o).unwrap(), 1024);
        assert!(positive("0", &o).is_err());
        assert!(positive("eighty", &o).is_err());
        assert!(positive("-1", &o).is_err());
        assert!(boolean("True", &o).unwrap());
        assert!(boolean("maybe", &o).is_err());
        assert_eq!(number("1e-5", &o).unwrap(), 1e-5);
        assert!(is_null("~") && is_null("null") && !is_null("0"));
    }
}
