//! Which figures a note speaks of, so that an edited copy of an entry can drop the notes that no
//! longer apply (issue 14: "Duplicate & edit keeps every value the user typed and drops notes that
//! no longer apply").
//!
//! Two kinds of text describe the values of a model or system document:
//!
//! - **texts tied to a group by the format** ([`annotation_fields`]): a per-field source
//!   (`field_sources.peak_tflops`, `field_sources.hidden`, …) speaks of the values of its group;
//!   a group's own note (`scale_out.note`, `measured_matmul_tflops.source`, `on_chip_sram_note`,
//!   `scale_up.topology`) of that group's values;
//! - **free notes** (`notes`, one per line), linked by the words they use ([`note_fields`]): the
//!   names a datasheet or a `config.json` gives a figure (`peak`, `TFLOP/s`, `BF16`, `HBM`,
//!   `NVLink`, `NIC`, `Gb/s`, `TDP`; `hidden_size`, `num_attention_heads`, `vocab`, `experts`, …)
//!   and the format's own field names. A note naming a precision (`BF16`, `FP8`) speaks of that
//!   precision's rate only.
//!
//! A text an edit inherited unchanged from the original is **stale** ([`stale_notes`]) when the
//! user changed one of the values it speaks of (text as typed, numbers compared by value). The
//! user's own texts (new or edited lines) are never stale, nor is a note that names no figure.

use std::collections::BTreeSet;

use super::form::{FormValues, form_fields};
use crate::schema::fields::Kind;

/// Matrix peak rates of a system (`peak_tflops.*` without the vector rates), by precision key.
const MATRIX_PEAKS: [&str; 7] = ["bf16", "fp16", "fp8", "tf32", "fp32_matrix", "fp64", "fp4"];

/// Precision words and the peak keys they name (`fp32` names the FP32 matrix and vector rates).
const PRECISIONS: &[(&str, &[&str])] = &[
    ("bf16", &["bf16"]),
    ("fp16", &["fp16"]),
    ("fp8", &["fp8"]),
    ("mxfp8", &["fp8"]),
    ("tf32", &["tf32"]),
    ("fp32", &["fp32_matrix", "fp32_vector"]),
    ("fp64", &["fp64"]),
    ("fp4", &["fp4"]),
    ("fp6", &["fp4"]),
    ("mxfp4", &["fp4"]),
    ("nvfp4", &["fp4"]),
];

/// Words of a note about the peak rates in general (any precision).
const PEAK_WORDS: &[&str] = &[
    "peak*",
    "tflop*",
    "pflop*",
    "eflop*",
    "flop/s",
    "flops",
    "dense",
    "sparse",
    "sparsity",
    "tensor",
    "matrix",
    "mme",
    "compute",
    "vendor_headline_peak",
];
/// Words of a note about the vector (non-matrix) rates.
const VECTOR_WORDS: &[&str] = &["vector*", "non-tensor", "tpc*", "simd", "cuda cores"];
/// Words of a note about a measured matmul ceiling.
const MEASURED_WORDS: &[&str] = &["measured", "matmul*", "mamf", "ceiling*", "achievable", "gemm*"];

/// One topic of free notes: the words that name it and the value fields it covers.
struct Topic {
    words: &'static [&'static str],
    fields: &'static [&'static str],
}

const SYSTEM_TOPICS: &[Topic] = &[
    Topic {
        words: &[
            "memory",
            "hbm*",
            "gib",
            "capacity",
            "dram",
            "ddr*",
            "#GB",
            "#GiB",
            "#TB/s",
            "memory_gb",
            "memory_bw_gbps",
        ],
        fields: &["memory_gb", "memory_bw_gbps", "memory_type", "preset.hbm_capacity", "preset.hbm_bandwidth"],
    },
    Topic {
        words: &[
            "nvlink*",
            "nvswitch*",
            "nvl*",
            "scale-up",
            "scale up",
            "xgmi",
            "infinity fabric",
            "ici",
            "torus",
            "intra-node",
            "p2p",
            "mesh",
            "domain*",
            "interconnect",
            "links",
        ],
        fields: &[
            "scale_up.tech",
            "scale_up.bw_per_device_unidir_gbps",
            "scale_up.bw_per_device_bidir_gbps",
            "scale_up.p2p_bw_unidir_gbps",
            "scale_up.domain_size",
            "scale_up.links_per_device",
            "scale_up.link_bw_unidir_gbps",
            "scale_up.torus_dimensions",
            "scale_up.torus_shape",
            "preset.nvlink_bandwidth",
            "preset.nvlink_size",
        ],
    },
    Topic {
        words: &[
            "nic*",
            "scale-out",
            "scale out",
            "infiniband",
            "roce",
            "ethernet",
            "hca*",
            "dcn",
            "inter-node",
            "efa",
            "#Gb/s",
            "#Tb/s",
        ],
        fields: &["scale_out.nic_gbit_per_device", "scale_out.nic_gbps_per_device", "preset.ib_bandwidth"],
    },
    Topic { words: &["tdp", "power", "watt*", "#W", "#kW"], fields: &["tdp_w"] },
    Topic { words: &["sram", "l2", "cache", "on-chip"], fields: &["on_chip_sram_mb"] },
    Topic {
        words: &["latency", "latencies"],
        fields: &[
            "network.scale_up_latency_s",
            "network.scale_out_latency_s",
            "preset.nvlink_latency",
            "preset.ib_latency",
        ],
    },
];

const MODEL_TOPICS: &[Topic] = &[
    Topic {
        words: &["seq_len", "sequence*", "context", "max_position_embeddings", "max_seq_len", "seq"],
        fields: &["seq_len"],
    },
    Topic { words: &["hidden", "hidden_size", "d_model", "n_embd", "model dimension", "width"], fields: &["hidden"] },
    Topic {
        words: &["heads", "num_attention_heads", "n_heads", "n_head", "attention heads"],
        fields: &["heads", "kv_heads", "head_dim"],
    },
    Topic {
        words: &["kv_heads", "key/value", "num_key_value_heads", "kv_n_heads", "grouped-query", "gqa", "mqa"],
        fields: &["kv_heads"],
    },
    Topic { words: &["head_dim", "head width", "head dimension"], fields: &["head_dim"] },
    Topic { words: &["layers", "num_hidden_layers", "n_layers", "n_layer", "blocks", "depth"], fields: &["layers"] },
    Topic {
        words: &["ffn*", "intermediate_size", "intermediate_size_mlp", "d_ff", "feed-forward", "n_inner"],
        fields: &["ffn_hidden"],
    },
    Topic { words: &["mlp", "swiglu", "gelu*", "geglu", "ffn_act_fn", "hidden_act"], fields: &["mlp"] },
    Topic { words: &["vocab*", "vocab_size", "tokenizer", "bpe"], fields: &["vocab"] },
    Topic { words: &["parameters", "params", "params_b"], fields: &["params_b"] },
    Topic {
        words: &["training budget", "training_budget", "tokens", "samples", "epochs", "trained on"],
        fields: &["training_budget.tokens", "training_budget.samples"],
    },
    Topic {
        words: &[
            "expert*",
            "moe*",
            "num_local_experts",
            "n_routed_experts",
            "num_experts",
            "moe_num_experts",
            "moe_intermediate_size",
        ],
        fields: &["moe.experts", "moe.expert_ffn", "moe.top_k", "moe.expert_mlp"],
    },
    Topic {
        words: &[
            "top-k",
            "top_k",
            "topk",
            "top-1",
            "top-2",
            "top-8",
            "num_experts_per_tok",
            "experts_per_token",
            "moe_top_k",
        ],
        fields: &["moe.top_k"],
    },
    Topic {
        words: &["shared expert*", "n_shared_experts", "shared_experts", "shared_ffn"],
        fields: &["moe.shared_experts", "moe.shared_ffn"],
    },
    Topic { words: &["router", "routing", "gate scores"], fields: &["moe.router"] },
    Topic {
        words: &[
            "first_k_dense_replace",
            "dense blocks",
            "first_dense",
            "interleave_moe_layer_step",
            "decoder_sparse_step",
            "moe_every",
            "mlp_only_layers",
        ],
        fields: &["moe.first_dense", "moe.moe_every"],
    },
    Topic {
        words: &[
            "mla",
            "lora",
            "latent",
            "q_lora_rank",
            "kv_lora_rank",
            "qk_nope_head_dim",
            "qk_rope_head_dim",
            "v_head_dim",
        ],
        fields: &[
            "mla.q_lora_rank",
            "mla.kv_lora_rank",
            "mla.qk_nope_head_dim",
            "mla.qk_rope_head_dim",
            "mla.v_head_dim",
        ],
    },
    Topic { words: &["mtp", "mtp_layers", "num_nextn_predict_layers", "multi-token"], fields: &["mtp_layers"] },
];

/// Whether `c` continues a word (letters, digits, `_`).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `text` uses `word`: a whole word (`peak*`: any word starting so), case-insensitive;
/// `#UNIT` is a unit right after a number (`80 GB`, `700W`, `400 Gb/s`), case-sensitive, so
/// that `Gb/s` (network) and `GB/s`, `GB` (memory) stay apart.
fn uses(text: &str, lower: &str, word: &str) -> bool {
    if let Some(unit) = word.strip_prefix('#') {
        return text.match_indices(unit).any(|(i, _)| {
            let before = text[..i].trim_end_matches([' ', '\u{a0}', '-']);
            let after = text[i + unit.len()..].chars().next();
            before.ends_with(|c: char| c.is_ascii_digit()) && !after.is_some_and(|c| word_char(c) || c == '/')
        });
    }
    let (stem, prefix) = match word.strip_suffix('*') {
        Some(s) => (s, true),
        None => (word, false),
    };
    lower.match_indices(stem).any(|(i, _)| {
        let start_ok = !lower[..i].chars().next_back().is_some_and(word_char);
        let end_ok = prefix || !lower[i + stem.len()..].chars().next().is_some_and(word_char);
        start_ok && end_ok
    })
}

fn any_word(text: &str, lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| uses(text, lower, w))
}

fn peak(key: &str) -> String {
    format!("peak_tflops.{key}")
}

/// The value fields of a `kind` document (`"model"` or `"system"`) a free note speaks of, by the
/// words it uses (see the module documentation). Empty: the note names no figure.
pub fn note_fields(kind: &str, note: &str) -> BTreeSet<String> {
    let lower = note.to_lowercase();
    let mut out = BTreeSet::new();
    let topics = match kind {
        "system" => SYSTEM_TOPICS,
        "model" => MODEL_TOPICS,
        _ => return out,
    };
    for t in topics {
        if any_word(note, &lower, t.words) {
            out.extend(t.fields.iter().map(|f| f.to_string()));
        }
    }
    // The format's own field names, as a note may quote them.
    for f in form_fields(kind) {
        let path = f.path();
        let leaf = path.rsplit('.').next().unwrap_or(&path);
        if is_value(&f) && leaf.contains('_') && uses(note, &lower, leaf) {
            out.insert(path);
        }
    }
    if kind == "system" {
        out.extend(rate_fields(note, &lower));
    }
    out
}

/// The peak-rate and measured-ceiling fields a system note speaks of: those of the precisions it
/// names, else every rate its words cover.
fn rate_fields(note: &str, lower: &str) -> Vec<String> {
    // `extend`, not `collect` (see `changed_fields`).
    let mut named: BTreeSet<&str> = BTreeSet::new();
    named.extend(PRECISIONS.iter().filter(|(w, _)| uses(note, lower, w)).flat_map(|(_, keys)| keys.iter().copied()));
    let general = any_word(note, lower, PEAK_WORDS);
    let vector = any_word(note, lower, VECTOR_WORDS);
    let measured = any_word(note, lower, MEASURED_WORDS);
    let mut out = Vec::new();
    let vectors = ["fp16_vector", "fp32_vector"];
    if named.is_empty() {
        if general {
            out.extend(MATRIX_PEAKS.iter().map(|k| peak(k)));
            out.push("preset.matrix_flops_fp16".to_string());
        }
        if vector {
            out.extend(vectors.iter().map(|k| peak(k)));
            out.push("preset.vector_flops_fp16".to_string());
        }
        if measured {
            out.extend(["measured_matmul_tflops.bf16", "measured_matmul_tflops.fp8"].map(String::from));
        }
        return out;
    }
    for key in &named {
        let is_vector = vectors.contains(key);
        // A precision alone ("no BF16 support") speaks of its matrix rate.
        if !is_vector && (general || !vector) {
            out.push(peak(key));
        }
        if vector {
            match *key {
                "fp32_vector" => out.push(peak("fp32_vector")),
                "bf16" | "fp16" => out.push(peak("fp16_vector")),
                _ => {}
            }
        }
        if measured && matches!(*key, "bf16" | "fp8") {
            out.push(format!("measured_matmul_tflops.{key}"));
        }
    }
    out
}

/// The value fields a text field tied to a group speaks of (`field_sources.*`, a group's note or
/// source); `None` for any other field.
pub fn annotation_fields(kind: &str, path: &str) -> Option<Vec<String>> {
    let values = |prefix: &str| -> Vec<String> {
        form_fields(kind).iter().filter(|f| is_value(f)).map(|f| f.path()).filter(|p| p.starts_with(prefix)).collect()
    };
    let out = match (kind, path) {
        ("system", "field_sources.peak_tflops") => MATRIX_PEAKS.iter().map(|k| peak(k)).collect(),
        ("system", "field_sources.vector") => vec![peak("fp16_vector"), peak("fp32_vector")],
        (
            "system",
            "field_sources.measured_matmul" | "measured_matmul_tflops.source" | "measured_matmul_tflops.note",
        ) => values("measured_matmul_tflops."),
        ("system", "field_sources.memory") => vec!["memory_gb".into(), "memory_bw_gbps".into()],
        ("system", "field_sources.scale_up") => values("scale_up."),
        ("system", "field_sources.scale_out" | "scale_out.note") => values("scale_out."),
        ("system", "field_sources.host") => values("host."),
        ("system", "scale_up.topology") => ["domain_size", "links_per_device", "torus_dimensions", "torus_shape"]
            .iter()
            .map(|k| format!("scale_up.{k}"))
            .collect(),
        ("system", "on_chip_sram_note") => vec!["on_chip_sram_mb".into()],
        ("model", p) => {
            let group = p.strip_prefix("field_sources.")?;
            let mut v = values(&format!("{group}."));
            if form_fields(kind).iter().any(|f| f.path() == group && is_value(f)) {
                v.push(group.to_string());
            }
            v
        }
        _ => return None,
    };
    Some(out)
}

/// Whether a form field holds a figure (a number, a choice, or a short technical text such as
/// `memory_type`), as opposed to identity, free text, lists, sources and notes.
fn is_value(f: &super::form::FormField) -> bool {
    let path = f.path();
    match f.spec.kind {
        Kind::Int { .. } | Kind::Num { .. } | Kind::Choice(_) | Kind::ChoiceList(_) | Kind::Bool => true,
        Kind::Text { .. } => {
            matches!(path.as_str(), "memory_type" | "scale_up.tech" | "scale_up.torus_shape")
        }
        _ => false,
    }
}

/// Whether two texts of a value field say the same: equal once trimmed, or equal numbers
/// (`989` and `989.0`).
fn same_value(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

/// The value fields whose text differs between `original` and `current`.
pub fn changed_fields(kind: &str, original: &FormValues, current: &FormValues) -> BTreeSet<String> {
    let text = |v: &FormValues, p: &str| v.get(p).cloned().unwrap_or_default();
    // `extend`, not `collect`: a collected set sorts with its own copy of the sort code
    // (`crate::sort`); inserting keeps the same set.
    let mut out = BTreeSet::new();
    out.extend(
        form_fields(kind)
            .iter()
            .filter(|f| is_value(f))
            .map(|f| f.path())
            .filter(|p| !same_value(&text(original, p), &text(current, p))),
    );
    out
}

/// A text inherited from the original that speaks of values the user changed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct StaleNote {
    /// The form field holding it: `notes` (one line of it) or a text field such as
    /// `field_sources.peak_tflops`.
    pub field: String,
    /// The text (one line for `notes`).
    pub text: String,
    /// The changed value fields it speaks of.
    pub changed: Vec<String>,
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

/// The texts of `current` inherited unchanged from `original` that speak of a value the user
/// changed, in form order (`notes` lines in their order). The user's own lines and edited texts
/// are never listed.
pub fn stale_notes(kind: &str, original: &FormValues, current: &FormValues) -> Vec<StaleNote> {
    let changed = changed_fields(kind, original, current);
    if changed.is_empty() {
        return Vec::new();
    }
    let hit = |about: &mut dyn Iterator<Item = String>| -> Vec<String> {
        let mut v = BTreeSet::new();
        v.extend(about.filter(|f| changed.contains(f)));
        v.into_iter().collect()
    };
    let mut out = Vec::new();
    for f in form_fields(kind) {
        let path = f.path();
        let (Some(before), Some(now)) = (original.get(&path), current.get(&path)) else { continue };
        if path == "notes" {
            let inherited = lines(before);
            for line in lines(now).into_iter().filter(|l| inherited.contains(l)) {
                let c = hit(&mut note_fields(kind, line).into_iter());
                if !c.is_empty() {
                    out.push(StaleNote { field: path.clone(), text: line.to_string(), changed: c });
                }
            }
        } else if let Some(about) = annotation_fields(kind, &path)
            && !now.trim().is_empty()
            && now.trim() == before.trim()
        {
            let c = hit(&mut about.into_iter());
            if !c.is_empty() {
                out.push(StaleNote { field: path, text: now.trim().to_string(), changed: c });
            }
        }
    }
    out
}

/// `values` without the `stale` texts (lines removed from `notes`, other texts emptied).
pub fn without_notes(values: &FormValues, stale: &[StaleNote]) -> FormValues {
    let mut out = values.clone();
    for s in stale {
        let Some(text) = out.get_mut(&s.field) else { continue };
        if s.field == "notes" {
            *text = text.lines().filter(|l| l.trim() != s.text).collect::<Vec<_>>().join("\n");
        } else if text.trim() == s.text {
            text.clear();
        }
    }
    out
}

/// `values` with a dropped text put back: a `notes` line at its place among the lines it came
/// with in `original`, another text in its field (unless the user typed something there since).
pub fn with_note(original: &FormValues, values: &FormValues, note: &StaleNote) -> FormValues {
    let mut out = values.clone();
    let current = out.get(&note.field).cloned().unwrap_or_default();
    if note.field != "notes" {
        if current.trim().is_empty() {
            out.insert(note.field.clone(), note.text.clone());
        }
        return out;
    }
    let mut now: Vec<&str> = current.lines().collect();
    if now.iter().any(|l| l.trim() == note.text) {
        return out;
    }
    let before = original.get("notes").map(String::as_str).unwrap_or_default();
    let order = lines(before);
    let rank = order.iter().position(|l| *l == note.text).unwrap_or(usize::MAX);
    // Before the first current line that came after it in the original (else at the end).
    let at = now
        .iter()
        .position(|l| order.iter().position(|o| *o == l.trim()).is_some_and(|r| r > rank))
        .unwrap_or(now.len());
    now.insert(at, &note.text);
    out.insert(note.field.clone(), now.join("\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_precision_narrows_a_note_to_its_rate() {
        let f = note_fields("system", "Peak FLOP/s unknown: MFU computed against the SXM peak (989 BF16).");
        assert_eq!(f, set(&["peak_tflops.bf16"]));
        assert_eq!(note_fields("system", "No BF16 support."), set(&["peak_tflops.bf16"]));
        // A general word about peaks, no precision: every matrix peak (and the preset's).
        let f = note_fields("system", "Dense peak rates are half the datasheet's sparse figures.");
        assert!(
            f.contains("peak_tflops.fp8") && f.contains("peak_tflops.bf16") && f.contains("preset.matrix_flops_fp16")
        );
        assert!(!f.contains("peak_tflops.fp16_vector"));
        // Vector words with a precision: that precision's vector rate.
        let f = note_fields("system", "the TPC vector rates are estimates; fp16_vector holds the BF16 vector peak");
        assert!(f.contains("peak_tflops.fp16_vector"), "{f:?}");
        assert!(!f.contains("peak_tflops.fp32_vector"), "{f:?}");
        // A measured ceiling with a precision.
        let f = note_fields("system", "measured BF16 matmul ceiling from the MAMF table");
        assert!(f.contains("measured_matmul_tflops.bf16") && !f.contains("measured_matmul_tflops.fp8"), "{f:?}");
    }

    #[test]
    fn units_after_a_number_keep_memory_and_network_apart() {
        assert_eq!(
            note_fields("system", "Also sold with 16 GB."),
            set(&["memory_gb", "memory_bw_gbps", "memory_type", "preset.hbm_capacity", "preset.hbm_bandwidth"])
        );
        let f = note_fields("system", "one 400 Gb/s port per GPU");
        assert!(f.contains("scale_out.nic_gbit_per_device") && !f.contains("memory_gb"), "{f:?}");
        let f = note_fields("system", "TDP 700W air-cooled");
        assert_eq!(f, set(&["tdp_w"]));
        // "GB/s" after a number is not a capacity; words inside longer words do not count.
        assert!(!note_fields("system", "a 900 GB/s link").contains("memory_gb"));
        assert!(note_fields("system", "Needed to reproduce the torchtitan rows in the validation set.").is_empty());
        assert!(note_fields("system", "Duplicated from the catalog entry `x` and edited.").is_empty());
    }

    #[test]
    fn model_notes_link_config_names_and_words() {
        let f = note_fields(
            "model",
            "config.json: hidden_size 7168, num_hidden_layers 61, n_routed_experts 256, vocab_size 129280",
        );
        for want in ["hidden", "layers", "moe.experts", "vocab"] {
            assert!(f.contains(want), "{want} in {f:?}");
        }
        assert!(!f.contains("seq_len"));
        assert_eq!(note_fields("model", "grouped-query attention: 8 key/value heads").contains("kv_heads"), true);
        assert!(note_fields("model", "weak-scaling model of Megatron-LM's PTD-P paper (Selene, A100 80GB)").is_empty());
        // `hidden` inside `num_hidden_layers` is not the width.
        assert!(!note_fields("model", "num_hidden_layers 61").contains("hidden"));
    }

    fn system(pairs: &[(&str, &str)]) -> FormValues {
        let mut v: FormValues = form_fields("system").iter().map(|f| (f.path(), String::new())).collect();
        for (k, t) in pairs {
            v.insert(k.to_string(), t.to_string());
        }
        v
    }

    #[test]
    fn changing_a_figure_makes_only_its_inherited_notes_stale() {
        let notes = "Peak FLOP/s unknown: between SXM and NVL (989 BF16).\nNeeded for the torchtitan rows.\nFP8 dense peak from the SXM.";
        let original = system(&[
            ("peak_tflops.bf16", "989"),
            ("peak_tflops.fp8", "1979"),
            ("notes", notes),
            ("field_sources.peak_tflops", "estimate: copied from the H100 SXM5"),
            ("field_sources.memory", "datasheet"),
            ("memory_gb", "96"),
        ]);
        // Nothing changed (989.0 is 989): nothing stale.
        let mut same = original.clone();
        same.insert("peak_tflops.bf16".into(), "989.0".into());
        assert!(stale_notes("system", &original, &same).is_empty());
        // The user fills the BF16 peak and adds a note of their own about it.
        let mut edited = original.clone();
        edited.insert("peak_tflops.bf16".into(), "900".into());
        edited.insert("notes".into(), format!("{notes}\nBF16 peak measured by me at 900."));
        let stale = stale_notes("system", &original, &edited);
        assert_eq!(
            stale,
            vec![
                StaleNote {
                    field: "notes".into(),
                    text: "Peak FLOP/s unknown: between SXM and NVL (989 BF16).".into(),
                    changed: vec!["peak_tflops.bf16".into()],
                },
                StaleNote {
                    field: "field_sources.peak_tflops".into(),
                    text: "estimate: copied from the H100 SXM5".into(),
                    changed: vec!["peak_tflops.bf16".into()],
                },
            ]
        );
        let kept = without_notes(&edited, &stale);
        assert_eq!(
            kept["notes"],
            "Needed for the torchtitan rows.\nFP8 dense peak from the SXM.\nBF16 peak measured by me at 900."
        );
        assert_eq!(kept["field_sources.peak_tflops"], "");
        assert_eq!(kept["field_sources.memory"], "datasheet");
        assert_eq!(kept["peak_tflops.bf16"], "900", "typed values are kept");
        // Putting a note back restores it at its place.
        let back = with_note(&original, &kept, &stale[0]);
        assert!(back["notes"].starts_with("Peak FLOP/s unknown"), "{}", back["notes"]);
        let back = with_note(&original, &back, &stale[1]);
        assert_eq!(back["field_sources.peak_tflops"], "estimate: copied from the H100 SXM5");
        // An edited source is the user's: never stale.
        let mut own = edited.clone();
        own.insert("field_sources.peak_tflops".into(), "my own measurement".into());
        assert!(stale_notes("system", &original, &own).iter().all(|s| s.field == "notes"));
    }

    #[test]
    fn model_sources_follow_their_field() {
        let base: FormValues = form_fields("model").iter().map(|f| (f.path(), String::new())).collect();
        let mut original = base.clone();
        original.insert("hidden".into(), "5140".into());
        original.insert("field_sources.hidden".into(), "estimate: GPT-3 13B's width".into());
        original.insert("field_sources.training_budget".into(), "none stated: default".into());
        original.insert("training_budget.tokens".into(), "1e12".into());
        let mut edited = original.clone();
        edited.insert("training_budget.tokens".into(), "2e12".into());
        let stale = stale_notes("model", &original, &edited);
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].field, "field_sources.training_budget");
        assert_eq!(stale[0].changed, vec!["training_budget.tokens".to_string()]);
        assert_eq!(annotation_fields("model", "field_sources.hidden"), Some(vec!["hidden".to_string()]));
        assert_eq!(annotation_fields("model", "notes"), None);
    }
}
