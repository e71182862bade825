//! Every field of the versioned JSON format (and of the reference's own JSON formats) with its unit,
//! description and rule. One table per document kind; the validator, the form labels of the page and
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

const fn f(
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

const TEXT: Kind = Kind::Text { max_len: 4000 };
const SHORT: Kind = Kind::Text { max_len: 200 };
const RATE: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e7 };
const BANDWIDTH: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e9 };
const CAPACITY: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e7 };
const FRACTION: Kind = Kind::Num { min: 0.0, min_open: true, max: 1.0 };
const LATENCY: Kind = Kind::Num { min: 0.0, min_open: false, max: 1.0 };
const BUDGET: Kind = Kind::Num { min: 0.0, min_open: true, max: 1e18 };
const DOMAIN: Kind = Kind::Int { min: 1, max: MAX_DEVICES };

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

/// Fields of a `"kind": "model"` document (also an inline `model` of a scenario).
pub const MODEL_FIELDS: &[FieldSpec] = &[
    f("id", "", Kind::Id, true, false, "identifier, e.g. `llama3-8b` (letters, digits, `.`, `_`, `-`)"),
    f("name", "", SHORT, false, false, "display name (default: the id)"),
    f("family", "", SHORT, false, false, "model family, e.g. `GPT`, `Llama 3` (default: `custom`)"),
    f(
        "seq_len",
        "tokens",
        Kind::Int { min: 1, max: MAX_SEQ_LEN },
        true,
        true,
        "sequence length `l` (tokens or patches per sample); null = unknown",
    ),
    f(
        "hidden",
        "channels",
        Kind::Int { min: 1, max: MAX_HIDDEN },
        true,
        true,
        "embedding (model) width `e`; null = unknown",
    ),
    f(
        "heads",
        "heads",
        Kind::Int { min: 1, max: MAX_HEADS },
        true,
        true,
        "attention (query) heads `h`; null = unknown",
    ),
    f(
        "kv_heads",
        "heads",
        Kind::Int { min: 1, max: MAX_HEADS },
        false,
        true,
        "key/value heads (grouped-query attention); absent = same as heads (multi-head attention); null = unknown",
    ),
    f(
        "head_dim",
        "channels",
        Kind::Int { min: 1, max: MAX_HIDDEN },
        false,
        false,
        "channels per attention head; absent = hidden / heads (which must then divide evenly)",
    ),
    f("layers", "blocks", Kind::Int { min: 1, max: MAX_LAYERS }, true, true, "transformer blocks `D`; null = unknown"),
    f(
        "ffn_hidden",
        "channels",
        Kind::Int { min: 1, max: MAX_FFN },
        false,
        true,
        "MLP hidden width `f` (SwiGLU: width of each of the gate/up branches); absent with mlp gelu = 4 x hidden; required for swiglu; null = unknown",
    ),
    f(
        "mlp",
        "",
        Kind::Choice(MLP_NAMES),
        false,
        false,
        "MLP kind: `gelu` (two matrices, the reference's) or `swiglu` (gated, three matrices); default gelu",
    ),
    f(
        "vocab",
        "tokens",
        Kind::Int { min: 1, max: 16_777_216 },
        false,
        true,
        "vocabulary size (not used by reference mode); null/absent = unknown",
    ),
    f(
        "moe",
        "",
        Kind::Object,
        false,
        true,
        "Mixture-of-Experts blocks (absent/null: a dense model); `ffn_hidden` is then the dense blocks' MLP width",
    ),
    f("moe.experts", "experts", Kind::Int { min: 1, max: 65_536 }, false, false, "routed experts E per MoE block"),
    f(
        "moe.expert_ffn",
        "channels",
        Kind::Int { min: 1, max: MAX_FFN },
        false,
        false,
        "hidden width f_e of one routed expert (gated: of each of gate and up)",
    ),
    f(
        "moe.top_k",
        "experts",
        Kind::Int { min: 1, max: 65_536 },
        false,
        false,
        "routed experts per token k (at most experts)",
    ),
    f("moe.shared_experts", "experts", Kind::Int { min: 0, max: 1024 }, false, false, "shared experts E_s (default 0)"),
    f(
        "moe.shared_ffn",
        "channels",
        Kind::Int { min: 1, max: MAX_FFN },
        false,
        false,
        "hidden width of ONE shared expert (default expert_ffn); total shared width = shared_experts x shared_ffn",
    ),
    f(
        "moe.expert_mlp",
        "",
        Kind::Choice(MLP_NAMES),
        false,
        false,
        "expert MLP kind: `swiglu` (gated, 3 matrices) or `gelu` (2 matrices); default: the model's mlp",
    ),
    f(
        "moe.first_dense",
        "blocks",
        Kind::Int { min: 0, max: MAX_LAYERS },
        false,
        false,
        "leading dense blocks (DeepSeek-V3: 3); default 0",
    ),
    f(
        "moe.moe_every",
        "blocks",
        Kind::Int { min: 1, max: 1024 },
        false,
        false,
        "after the leading dense blocks every n-th block is MoE (1 = all, Llama 4 Maverick: 2); default 1",
    ),
    f("moe.router", "", Kind::Choice(ROUTER_NAMES), false, false, "router scoring: `softmax` (default) or `sigmoid`"),
    f(
        "mla",
        "",
        Kind::Object,
        false,
        true,
        "multi-head latent attention (DeepSeek-V2/V3); absent/null: multi-head or grouped-query attention",
    ),
    f(
        "mla.q_lora_rank",
        "channels",
        Kind::Int { min: 1, max: MAX_FFN },
        false,
        true,
        "rank of the query compression; null/absent: queries projected directly from hidden",
    ),
    f("mla.kv_lora_rank", "channels", Kind::Int { min: 1, max: MAX_FFN }, false, false, "rank of the key/value latent"),
    f(
        "mla.qk_nope_head_dim",
        "channels",
        Kind::Int { min: 1, max: 65_536 },
        false,
        false,
        "per-head query/key width without rotary embedding",
    ),
    f(
        "mla.qk_rope_head_dim",
        "channels",
        Kind::Int { min: 0, max: 65_536 },
        false,
        false,
        "per-head rotary query/key width (the rotary key is shared by all heads)",
    ),
    f("mla.v_head_dim", "channels", Kind::Int { min: 1, max: 65_536 }, false, false, "per-head value width"),
    f(
        "sliding_window",
        "",
        Kind::Object,
        false,
        true,
        "sliding-window (local) attention in some blocks (gpt-oss, Gemma, Mistral); absent/null: every block attends to the whole prefix",
    ),
    f(
        "sliding_window.tokens",
        "tokens",
        Kind::Int { min: 1, max: 16_777_216 },
        false,
        false,
        "keys each query of a windowed block attends to (gpt-oss: 128)",
    ),
    f(
        "sliding_window.full_every",
        "blocks",
        Kind::Int { min: 1, max: 65_536 },
        false,
        false,
        "one block in every `full_every` attends to the whole prefix, the others through the window (gpt-oss: 2, alternating; Gemma 3: 6); absent (the default): every block through the window (Mistral 7B v0.1)",
    ),
    f(
        "mtp_layers",
        "blocks",
        Kind::Int { min: 0, max: 16 },
        false,
        true,
        "multi-token-prediction blocks trained beside the model's (DeepSeek-V3: 1); default 0",
    ),
    f(
        "params_b",
        "B parameters",
        Kind::Num { min: 0.0, min_open: true, max: 1e6 },
        false,
        true,
        "parameter count as stated by the source, in billions",
    ),
    f(
        "training_budget",
        "",
        Kind::Object,
        false,
        false,
        "training length: exactly one of `tokens` or `samples` (default: 1e12 tokens)",
    ),
    f("training_budget.tokens", "tokens", BUDGET, false, false, "tokens to train on"),
    f("training_budget.samples", "samples", BUDGET, false, false, "samples (sequences, images) to train on"),
    f("sources", "", Kind::TextList, false, false, "where the numbers come from"),
    f("notes", "", Kind::TextList, false, false, "remarks, caveats, what is unknown"),
    f(
        "field_sources",
        "",
        Kind::Object,
        false,
        false,
        "where each dimension comes from (one text per field; shown next to the value)",
    ),
    f("field_sources.seq_len", "", TEXT, false, true, "source of `seq_len`"),
    f("field_sources.hidden", "", TEXT, false, true, "source of `hidden`"),
    f("field_sources.heads", "", TEXT, false, true, "source of `heads`"),
    f("field_sources.kv_heads", "", TEXT, false, true, "source of `kv_heads`"),
    f("field_sources.head_dim", "", TEXT, false, true, "source of `head_dim`"),
    f("field_sources.layers", "", TEXT, false, true, "source of `layers`"),
    f("field_sources.ffn_hidden", "", TEXT, false, true, "source of `ffn_hidden`"),
    f("field_sources.mlp", "", TEXT, false, true, "source of `mlp`"),
    f("field_sources.vocab", "", TEXT, false, true, "source of `vocab`"),
    f("field_sources.params_b", "", TEXT, false, true, "source of `params_b`"),
    f("field_sources.training_budget", "", TEXT, false, true, "source of `training_budget`"),
];

/// Per-precision peak-rate fields of a system (`peak_tflops.*`).
pub const PEAK_KEYS: &[&str] =
    &["bf16", "fp16", "fp8", "tf32", "fp32_matrix", "fp32_vector", "fp16_vector", "fp64", "fp4"];

/// Fields of a `"kind": "system"` document. Mirrors the accelerator entries of the hardware catalog
/// (`data/hardware-catalog.json`) plus fmperf's own `architecture`, `model_fit`, `network`, `preset`.
pub const SYSTEM_FIELDS: &[FieldSpec] = &[
    f("id", "", Kind::Id, true, false, "identifier, e.g. `nvidia_h100_sxm5_80gb`"),
    f("name", "", SHORT, false, false, "display name (default: the id)"),
    f("vendor", "", SHORT, false, false, "vendor"),
    f("form_factor", "", SHORT, false, false, "form factor (SXM, OAM, PCIe, wafer, ...)"),
    f("value_kind", "", SHORT, false, false, "what the numbers are: `vendor_claimed_peak`, `as_deployed`, `user`, ..."),
    f(
        "architecture",
        "",
        Kind::Choice(ARCHITECTURE_NAMES),
        false,
        false,
        "what the performance model assumes: `gpu` (HBM + scale-up domain + NICs; what it was made for), `torus`, `wafer_scale`, `dataflow`, `ipu`; default gpu",
    ),
    f("model_fit", "", TEXT, false, true, "what the performance model does and does not capture for this part"),
    f("peak_tflops", "", Kind::Object, true, false, "dense peak rates per precision (no 2:4 sparsity)"),
    f("peak_tflops.bf16", "TFLOP/s", RATE, false, true, "dense BF16 matrix peak"),
    f("peak_tflops.fp16", "TFLOP/s", RATE, false, true, "dense FP16 matrix peak"),
    f("peak_tflops.fp8", "TFLOP/s", RATE, false, true, "dense FP8 matrix peak"),
    f("peak_tflops.tf32", "TFLOP/s", RATE, false, true, "dense TF32 matrix peak"),
    f("peak_tflops.fp32_matrix", "TFLOP/s", RATE, false, true, "FP32 matrix-unit peak"),
    f("peak_tflops.fp32_vector", "TFLOP/s", RATE, false, true, "FP32 vector (non-matrix) peak"),
    f("peak_tflops.fp16_vector", "TFLOP/s", RATE, false, true, "16-bit vector (non-matrix) peak, FP16 or BF16"),
    f("peak_tflops.fp64", "TFLOP/s", RATE, false, true, "best FP64 peak"),
    f("peak_tflops.fp4", "TFLOP/s", RATE, false, true, "dense FP4 peak"),
    f(
        "measured_matmul_tflops",
        "",
        Kind::Object,
        false,
        true,
        "measured maximum achievable matmul (a GEMM ceiling, not a training number)",
    ),
    f("measured_matmul_tflops.bf16", "TFLOP/s", RATE, false, true, "measured BF16 matmul"),
    f("measured_matmul_tflops.fp8", "TFLOP/s", RATE, false, true, "measured FP8 matmul"),
    f("measured_matmul_tflops.source", "", TEXT, false, true, "where the measurement comes from"),
    f("measured_matmul_tflops.note", "", TEXT, false, true, "measurement conditions"),
    f("memory_gb", "GB", CAPACITY, true, true, "device memory capacity (HBM, or the memory tier the entry names)"),
    f(
        "memory_device_gb",
        "GB",
        CAPACITY,
        false,
        true,
        "device memory as the driver reports it (nvidia-smi / rocm-smi total), when the label counts GiB",
    ),
    f("memory_type", "", SHORT, false, true, "memory technology"),
    f("memory_bw_gbps", "GB/s", BANDWIDTH, true, true, "device memory bandwidth"),
    f("on_chip_sram_mb", "MB", CAPACITY, false, true, "on-chip SRAM / last-level cache"),
    f("on_chip_sram_note", "", TEXT, false, true, "what the SRAM figure covers"),
    f("scale_up", "", Kind::Object, true, false, "the fast domain (NVLink, xGMI, ICI, on-chip RoCE)"),
    f("scale_up.tech", "", SHORT, false, true, "scale-up technology"),
    f(
        "scale_up.bw_per_device_unidir_gbps",
        "GB/s",
        BANDWIDTH,
        false,
        true,
        "scale-up bandwidth per device, one direction (what the model uses)",
    ),
    f(
        "scale_up.bw_per_device_bidir_gbps",
        "GB/s",
        BANDWIDTH,
        false,
        true,
        "scale-up bandwidth per device, both directions summed (vendor headline)",
    ),
    f(
        "scale_up.p2p_bw_unidir_gbps",
        "GB/s",
        BANDWIDTH,
        false,
        true,
        "bandwidth of a single device-pair link, one direction (meshes without a switch)",
    ),
    f("scale_up.domain_size", "devices", DOMAIN, true, false, "devices in one scale-up domain"),
    f("scale_up.topology", "", TEXT, false, true, "topology notes"),
    f(
        "scale_up.links_per_device",
        "links",
        Kind::Int { min: 1, max: 1024 },
        false,
        true,
        "scale-up links (ports) per device: NVLink links, ICI ports (4 on a 2D torus, 6 on a 3D torus)",
    ),
    f(
        "scale_up.link_bw_unidir_gbps",
        "GB/s",
        BANDWIDTH,
        false,
        true,
        "bandwidth of one scale-up link (ICI port), one direction",
    ),
    f(
        "scale_up.torus_dimensions",
        "dimensions",
        Kind::Int { min: 1, max: 6 },
        false,
        true,
        "dimensions of the torus the devices form (2 or 3 for TPUs); absent/null = switched or all-to-all domain",
    ),
    f(
        "scale_up.torus_shape",
        "",
        SHORT,
        false,
        true,
        "largest single-slice torus shape in chips per dimension, e.g. `16x16` or `16x16x24`",
    ),
    f("scale_out", "", Kind::Object, true, false, "the scale-out network (NICs)"),
    f(
        "scale_out.nic_gbit_per_device",
        "Gb/s",
        BANDWIDTH,
        false,
        true,
        "NIC bandwidth per device in gigabits per second, one direction",
    ),
    f(
        "scale_out.nic_gbps_per_device",
        "GB/s",
        BANDWIDTH,
        false,
        true,
        "NIC bandwidth per device in gigabytes per second, one direction (what the model uses)",
    ),
    f("scale_out.note", "", TEXT, false, true, "network notes"),
    f(
        "network",
        "",
        Kind::Object,
        false,
        false,
        "achievable fractions and latencies of the two tiers (defaults: the reference's 0.7 / 2.5e-6 s / 0.7 / 5e-6 s)",
    ),
    f(
        "network.scale_up_eff",
        "fraction",
        FRACTION,
        false,
        false,
        "achievable fraction of the scale-up bandwidth (default 0.7)",
    ),
    f("network.scale_up_latency_s", "s", LATENCY, false, false, "latency of one scale-up hop (default 2.5e-6)"),
    f(
        "network.scale_out_eff",
        "fraction",
        FRACTION,
        false,
        false,
        "achievable fraction of the scale-out bandwidth (default 0.7)",
    ),
    f("network.scale_out_latency_s", "s", LATENCY, false, false, "latency of one scale-out hop (default 5e-6)"),
    f(
        "fabric",
        "",
        Kind::Object,
        false,
        true,
        "the scale-out fabric: extended mode's latency, achievable fraction and oversubscription of scale-out collectives (reference mode keeps network.*)",
    ),
    f(
        "fabric.kind",
        "",
        Kind::Choice(FABRIC_KIND_NAMES),
        false,
        true,
        "the kind of network between nodes (infiniband_ndr, roce, efa, tpu_dcn, ...); its defaults fill absent figures",
    ),
    f("fabric.nics_per_node", "NICs", Kind::Int { min: 1, max: 1024 }, false, true, "NICs of the fabric per node"),
    f(
        "fabric.gbit_per_nic",
        "Gb/s",
        BANDWIDTH,
        false,
        true,
        "bandwidth of one NIC in gigabits per second, one direction",
    ),
    f(
        "fabric.latency_s",
        "s",
        LATENCY,
        false,
        true,
        "latency of one network step (default: the kind's, else network.scale_out_latency_s)",
    ),
    f(
        "fabric.achievable",
        "fraction",
        FRACTION,
        false,
        true,
        "fraction of the NIC bandwidth collectives achieve (default: the kind's, else network.scale_out_eff)",
    ),
    f(
        "fabric.rail_optimised",
        "",
        Kind::Bool,
        false,
        true,
        "whether each device's NIC is on its own rail (recorded, not priced)",
    ),
    f(
        "fabric.oversubscription",
        "×",
        Kind::Num { min: 1.0, min_open: false, max: 1000.0 },
        false,
        true,
        "r of an r:1 oversubscribed upper tier (default 1): scale-out traffic gets 1/r of the NIC bandwidth",
    ),
    f(
        "host",
        "",
        Kind::Object,
        false,
        false,
        "the host CPU of the part's usual server, which runs the framework and launches the kernels",
    ),
    f("host.cpu", "", SHORT, false, true, "the host CPU (e.g. `2x AMD EPYC 7742 (DGX A100)`)"),
    f(
        "host.op_time_factor",
        "×",
        Kind::Num { min: 0.0, min_open: true, max: 100.0 },
        false,
        true,
        "host time per modelled operation of an eager stack relative to a DGX H100 host (2x Xeon Platinum 8480C); absent: 1",
    ),
    f("tdp_w", "W", Kind::Num { min: 0.0, min_open: true, max: 1e7 }, false, true, "board power"),
    f("vendor_headline_peak", "", TEXT, false, true, "a vendor headline figure that is not a dense peak"),
    f(
        "preset",
        "",
        Kind::ReferenceSystem,
        false,
        false,
        "exact reference-model parameters (the reference's system JSON fields); when present they are used as they are",
    ),
    f("sources", "", Kind::TextList, false, false, "where the numbers come from"),
    f("notes", "", Kind::TextList, false, false, "remarks and caveats"),
    f(
        "aliases",
        "",
        Kind::TextList,
        false,
        false,
        "other names people use for the part (`H100 SXM`, `GB200`, `Trillium`), used to match hardware named in words",
    ),
    f(
        "field_sources",
        "",
        Kind::Object,
        false,
        false,
        "where each group of values comes from; a text starting with `estimate` marks an estimate (its reasoning follows), which mappings report",
    ),
    f(
        "field_sources.peak_tflops",
        "",
        TEXT,
        false,
        true,
        "source of the matrix peaks (`peak_tflops.*` except vectors)",
    ),
    f("field_sources.vector", "", TEXT, false, true, "source of `peak_tflops.fp16_vector` and `fp32_vector`"),
    f("field_sources.measured_matmul", "", TEXT, false, true, "source of `measured_matmul_tflops`"),
    f("field_sources.memory", "", TEXT, false, true, "source of `memory_gb` and `memory_bw_gbps`"),
    f("field_sources.scale_up", "", TEXT, false, true, "source of the `scale_up` figures (torus included)"),
    f("field_sources.scale_out", "", TEXT, false, true, "source of the `scale_out` (NIC / DCN) figures"),
    f("field_sources.host", "", TEXT, false, true, "source of the `host` figures"),
];

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

/// The table of a document kind (`"model"`, `"system"`, `"scenario"`).
pub fn fields_of(kind: &str) -> Option<&'static [FieldSpec]> {
    match kind {
        "model" => Some(MODEL_FIELDS),
        "system" => Some(SYSTEM_FIELDS),
        "scenario" => Some(SCENARIO_FIELDS),
        _ => None,
    }
}

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
