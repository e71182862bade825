//! The vocabulary of the versioned JSON format's field tables — what a field accepts ([`Kind`]),
//! one field with its unit, description and rule ([`FieldSpec`]), the bounds and names the tables
//! share — and the small tables: a scenario's fields, the envelope every document opens with, the
//! reference's own model and system JSON. The model's and the system's tables have their own files
//! (`super::model_fields`, `super::system_fields`). The validator, the form labels of the page and
//! the "did you mean" hints all read these tables, so a rule lives in exactly one place.
//!
//! Paths are dotted and relative to the document (`heads`, `scale_up.domain_size`); inside a scenario
//! the embedded documents get a prefix (`model.heads`, `system.peak_tflops.bf16`).

/// What values a field accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// An integer (written without fraction; `12288.0` is accepted) in `[min, max]`.
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A finite real number in `(min, max]` when `min_open`, else `[min, max]`.
    Num {
        /// Lower bound.
        min: f64,
        /// Whether the lower bound itself is excluded.
        min_open: bool,
        /// Upper bound (inclusive).
        max: f64,
    },
    /// Free text of at most `max_len` characters.
    Text {
        /// Longest accepted length in characters.
        max_len: usize,
    },
    /// An identifier: 1–64 characters from `A–Z a–z 0–9 . _ -`.
    Id,
    /// A list of free-text entries (sources, notes).
    TextList,
    /// One of a fixed set of names.
    Choice(&'static [&'static str]),
    /// A non-empty list of distinct names from a fixed set.
    ChoiceList(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
    /// A nested object whose fields are the entries with this path as prefix.
    Object,
    /// A model catalog id (string) or an inline model object.
    ModelRef,
    /// A system catalog id (string) or an inline system object.
    SystemRef,
    /// An object with the fields of the reference's system JSON ([`REFERENCE_SYSTEM_FIELDS`]).
    ReferenceSystem,
}

/// One field of a document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldSpec {
    /// Dotted path relative to the document.
    pub path: &'static str,
    /// Unit of the value (`""` for text and dimensionless choices).
    pub unit: &'static str,
    /// What the field means, including its default when optional.
    pub description: &'static str,
    /// Accepted values.
    pub kind: Kind,
    /// Whether the key must be present.
    pub required: bool,
    /// Whether `null` is accepted (meaning "unknown").
    pub nullable: bool,
}

pub(super) const fn f(
    path: &'static str,
    unit: &'static str,
    kind: Kind,
    required: bool,
    nullable: bool,
    description: &'static str,
) -> FieldSpec {
    FieldSpec { path, unit, description, kind, required, nullable }
}

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: u64 = 1;

/// Upper bound of a sequence length in tokens (same as [`crate::ModelShape::validate`]).
pub const MAX_SEQ_LEN: u64 = 4_194_304;
/// Upper bound of the embedding width (same as [`crate::ModelShape::validate`]).
pub const MAX_HIDDEN: u64 = 1_048_576;
/// Upper bound of the number of attention heads (same as [`crate::ModelShape::validate`]).
pub const MAX_HEADS: u64 = 65_536;
/// Upper bound of the number of transformer blocks (same as [`crate::ModelShape::validate`]).
pub const MAX_LAYERS: u64 = 100_000;
/// Upper bound of the MLP width (same as [`crate::ModelShape::validate`]).
pub const MAX_FFN: u64 = 4_194_304;
/// Upper bound of a device count or domain size.
pub const MAX_DEVICES: u64 = 1_048_576;

pub(super) const TEXT: Kind = Kind::Text { max_len: 4000 };
pub(super) const SHORT: Kind = Kind::Text { max_len: 200 };
pub(super) const RATE: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e7 };
pub(super) const BANDWIDTH: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e9 };
pub(super) const CAPACITY: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e7 };
pub(super) const FRACTION: Kind = Kind::Num { min: 0.0, min_open: true, max: 1.0 };
pub(super) const LATENCY: Kind = Kind::Num { min: 0.0, min_open: false, max: 1.0 };
pub(super) const BUDGET: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e18 };
pub(super) const DOMAIN: Kind = Kind::Int { min: 1, max: MAX_DEVICES };

/// The names of the MLP kinds (`mlp` field).
pub const MLP_NAMES: &[&str] = &["gelu", "swiglu"];
/// Router names of a Mixture-of-Experts model.
pub const ROUTER_NAMES: &[&str] = &["softmax", "sigmoid"];
/// The scale-out fabric kinds a system's `fabric.kind` may name (`crate::catalog::FabricKind`).
pub const FABRIC_KIND_NAMES: &[&str] = &[
    "infiniband",
    "infiniband_edr",
    "infiniband_hdr",
    "infiniband_ndr",
    "infiniband_xdr",
    "roce",
    "efa",
    "tpu_dcn",
    "gpudirect_tcpx",
    "slingshot",
    "other",
];
/// The names of the architectures (`architecture` field of a system).
pub const ARCHITECTURE_NAMES: &[&str] = &["gpu", "torus", "wafer_scale", "dataflow", "ipu"];
/// The names of the training precisions.
pub const PRECISION_NAMES: &[&str] = &["fp32", "tf32", "fp16", "bf16", "fp8"];
/// The names of the strategies.
pub const STRATEGY_NAMES: &[&str] = &["1d", "2d", "2d-seqp"];
/// The document kinds.
pub const KIND_NAMES: &[&str] = &["model", "system", "scenario"];

/// Fields of the reference's system JSON (`systems/config-<name>.json`, spec §1.2); also the fields
/// of a system's `preset` object.
pub const REFERENCE_SYSTEM_FIELDS: &[FieldSpec] = &[
    f(
        "matrix_flops_fp16",
        "TFLOP/s",
        RATE,
        true,
        false,
        "peak matrix (tensor-core) rate at the training precision, R_mat",
    ),
    f("vector_flops_fp16", "TFLOP/s", RATE, true, false, "peak vector rate at the training precision, R_vec"),
    f(
        "vector_flops_fp32",
        "TFLOP/s",
        Kind::Num { min: 0.0, min_open: false, max: 1e7 },
        true,
        false,
        "peak FP32 vector rate (unused by the model)",
    ),
    f("hbm_bandwidth", "GB/s", BANDWIDTH, true, false, "HBM bandwidth B_hbm"),
    f("hbm_capacity", "GB", CAPACITY, true, false, "HBM capacity C (feasibility limit)"),
    f("nvlink_bandwidth", "GB/s", BANDWIDTH, true, false, "scale-up bandwidth per device, one direction, B_nv"),
    f("nvlink_eff", "fraction", FRACTION, true, false, "achievable fraction of nvlink_bandwidth"),
    f("nvlink_latency", "s", LATENCY, true, false, "latency of one scale-up hop"),
    f("ib_bandwidth", "GB/s", BANDWIDTH, true, false, "scale-out bandwidth per NIC, one direction, B_ib"),
    f("ib_eff", "fraction", FRACTION, true, false, "achievable fraction of ib_bandwidth"),
    f("ib_latency", "s", LATENCY, true, false, "latency of one scale-out hop"),
    f("nvlink_size", "devices", DOMAIN, true, false, "scale-up domain size N_vs"),
    f(
        "nic_factor",
        "NICs per device",
        Kind::Num { min: 0.0, min_open: true, max: 1024.0 },
        false,
        false,
        "NICs per device (default 1)",
    ),
    f(
        "element_size",
        "GB per element",
        Kind::Num { min: 0.0, min_open: true, max: 1e-8 },
        false,
        false,
        "bytes per tensor element in GB (default 2e-9: 16-bit)",
    ),
    f(
        "mask_element_size",
        "GB per element",
        Kind::Num { min: 0.0, min_open: true, max: 1e-8 },
        false,
        false,
        "bytes per dropout-mask element in GB (default 1e-9)",
    ),
    f(
        "flops_units",
        "",
        Kind::Num { min: 0.0, min_open: true, max: 1.0 },
        false,
        false,
        "FLOP unit; must be 1e-12 (counts in TFLOP)",
    ),
    f(
        "empirical",
        "",
        Kind::Bool,
        false,
        false,
        "must be false (true needs measurement files the reference does not ship)",
    ),
    f(
        "summa_nb",
        "panels",
        Kind::Int { min: 1, max: 1_000_000 },
        false,
        false,
        "SUMMA panel count; ignored (the search sets it per candidate)",
    ),
];

/// Fields of the reference's model JSON (`{"l","e","h","depth"[,"f"]}`, spec §1.1).
pub const REFERENCE_MODEL_FIELDS: &[FieldSpec] = &[
    f("l", "tokens", Kind::Int { min: 1, max: MAX_SEQ_LEN }, true, false, "sequence length"),
    f("e", "channels", Kind::Int { min: 1, max: MAX_HIDDEN }, true, false, "embedding width"),
    f("h", "heads", Kind::Int { min: 1, max: MAX_HEADS }, true, false, "attention heads"),
    f("depth", "blocks", Kind::Int { min: 1, max: MAX_LAYERS }, true, false, "transformer blocks"),
    f(
        "f",
        "channels",
        Kind::Int { min: 1, max: MAX_FFN },
        false,
        false,
        "MLP width (default 4 x e, as every reference driver sets it)",
    ),
];

/// Fields of a `"kind": "scenario"` document.
pub const SCENARIO_FIELDS: &[FieldSpec] = &[
    f("name", "", SHORT, false, false, "name of the scenario"),
    f("model", "", Kind::ModelRef, true, false, "a model catalog id (e.g. `gpt3_1T`) or an inline model object"),
    f(
        "system",
        "",
        Kind::SystemRef,
        true,
        false,
        "a system catalog id (e.g. `ref-H200`, `nvidia_h100_sxm5_80gb`) or an inline system object",
    ),
    f("domain_size", "devices", DOMAIN, false, false, "scale-up domain size to assume (default: the system's)"),
    f(
        "nics_per_device",
        "NICs",
        Kind::Int { min: 1, max: 64 },
        false,
        false,
        "NICs per device, each of the system's scale-out bandwidth (default 1)",
    ),
    f(
        "precision",
        "",
        Kind::Choice(PRECISION_NAMES),
        false,
        false,
        "training precision (default bf16, or fp16 when the system lists no bf16 rate)",
    ),
    f("devices", "devices", Kind::Int { min: 1, max: MAX_DEVICES }, true, false, "total device count n"),
    f(
        "global_batch",
        "samples",
        Kind::Int { min: 1, max: 16_777_216 },
        true,
        false,
        "global batch G in samples (sequences, images)",
    ),
    f(
        "strategies",
        "",
        Kind::ChoiceList(STRATEGY_NAMES),
        false,
        false,
        "tensor-parallel strategies to search (default all three)",
    ),
    f(
        "top_k",
        "configurations",
        Kind::Int { min: 1, max: 1000 },
        false,
        false,
        "how many best configurations to return (default 10)",
    ),
    f("training_budget", "", Kind::Object, false, false, "exactly one of `tokens` or `samples` (default: the model's)"),
    f("training_budget.tokens", "tokens", BUDGET, false, false, "tokens to train on"),
    f("training_budget.samples", "samples", BUDGET, false, false, "samples to train on"),
    f("notes", "", Kind::TextList, false, false, "remarks"),
];

/// The fields every versioned document has at its root.
pub const ENVELOPE_FIELDS: &[FieldSpec] = &[
    f(
        "schema_version",
        "",
        Kind::Int { min: SCHEMA_VERSION, max: SCHEMA_VERSION },
        true,
        false,
        "format version; this build reads 1",
    ),
    f("kind", "", Kind::Choice(KIND_NAMES), true, false, "`model`, `system` or `scenario`"),
];

/// The spec of one field of a table by its path.
pub fn spec(table: &'static [FieldSpec], path: &str) -> Option<&'static FieldSpec> {
    table.iter().find(|s| s.path == path)
}

/// Common names of other tools (Hugging Face configs, Megatron flags) mapped to ours, for hints.
pub const ALIASES: &[(&str, &str)] = &[
    ("num_hidden_layers", "layers"),
    ("num_layers", "layers"),
    ("n_layer", "layers"),
    ("depth", "layers"),
    ("hidden_size", "hidden"),
    ("d_model", "hidden"),
    ("n_embd", "hidden"),
    ("e", "hidden"),
    ("num_attention_heads", "heads"),
    ("n_head", "heads"),
    ("h", "heads"),
    ("num_key_value_heads", "kv_heads"),
    ("n_kv_heads", "kv_heads"),
    ("num_query_groups", "kv_heads"),
    ("intermediate_size", "ffn_hidden"),
    ("ffn_hidden_size", "ffn_hidden"),
    ("n_inner", "ffn_hidden"),
    ("f", "ffn_hidden"),
    ("vocab_size", "vocab"),
    ("padded_vocab_size", "vocab"),
    ("max_position_embeddings", "seq_len"),
    ("seq_length", "seq_len"),
    ("n_positions", "seq_len"),
    ("l", "seq_len"),
    ("version", "schema_version"),
    ("type", "kind"),
    ("gpus", "devices"),
    ("n_gpus", "devices"),
    ("num_gpus", "devices"),
    ("batch_size", "global_batch"),
    ("global_batch_size", "global_batch"),
    ("nvlink_size", "domain_size"),
    ("topk", "top_k"),
    ("nlargest", "top_k"),
    ("strategy", "strategies"),
    ("source", "sources"),
    ("note", "notes"),
];
