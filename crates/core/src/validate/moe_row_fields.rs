//! A Mixture-of-Experts measured row's fields as written: each group of fields (`model`,
//! `parallel`, `batch`, `measured`, `routing`) read under every name people give a field
//! ([`super::keys`]: Hugging Face config.json, Megatron-LM arguments, …), in the group's object or
//! flat at the top of the row, numbers also as strings (a string that is not a number is an error
//! naming the field); which rows are MoE rows ([`is_moe_row`]) and a file split by row kind
//! ([`split_by_kind`]).

use serde_json::{Map, Value};

use super::keys;
use super::reason::RowReason;

/// A group of a row's fields (`model`, `parallel`, `batch`, `measured`, …): each field is read
/// under every name people give it ([`keys::find`]: Hugging Face, Megatron-LM, … names), in the
/// group's object, then at the top of the row (files that write rows flat).
#[derive(Clone, Copy)]
pub(super) struct Group<'a> {
    pub(super) obj: Option<&'a Map<String, Value>>,
    pub(super) flat: Option<&'a Map<String, Value>>,
}

impl<'a> Group<'a> {
    /// The row itself (its top-level fields).
    pub(super) fn top(row: &'a Value) -> Group<'a> {
        Group { obj: row.as_object(), flat: None }
    }

    /// The group `key` of the row (under any of its names), with the row's top level behind it.
    pub(super) fn child(&self, key: &str) -> Group<'a> {
        let obj = self.find(key).and_then(|(_, v)| v.as_object());
        Group { obj, flat: self.obj }
    }

    /// The name field `key` is given under and its value (not null).
    pub(super) fn find(&self, key: &str) -> Option<(&'a str, &'a Value)> {
        self.obj.and_then(|o| keys::find(o, key)).or_else(|| self.flat.and_then(|o| keys::find(o, key)))
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.find(key).map(|(_, v)| v)
    }
}

/// The fields of an MoE row read as numbers, by group (`""`: the top of the row).
const NUMBER_FIELDS: &[(&str, &[&str])] = &[
    ("", &["num_devices"]),
    (
        "model",
        &[
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "head_dim",
            "ffn_hidden",
            "moe_ffn_hidden",
            "ffn_hidden_dense",
            "num_experts",
            "top_k",
            "moe_layers",
            "dense_layers",
            "shared_experts",
            "shared_ffn_hidden",
            "seq_len",
            "vocab",
            "mtp_layers",
        ],
    ),
    ("parallel", &["tp", "pp", "cp", "dp", "ep", "etp", "interleave_vpp"]),
    ("batch", &["global_batch_seqs", "micro_batch", "grad_accum"]),
    (
        "measured",
        &[
            "tflops_per_device",
            "tokens_per_s_per_device",
            "tokens_per_s_per_device_derived",
            "step_time_s",
            "memory_peak_allocated_gib",
        ],
    ),
];

/// Refuses a number written as text (`"8"` for `expert_model_parallel_size`): the readers below
/// read only JSON numbers, and a string there would otherwise read as unstated (issue 30).
pub(super) fn numbers_are_numbers(top: &Group) -> Result<(), RowReason> {
    for (group, fields) in NUMBER_FIELDS {
        let g = if group.is_empty() { *top } else { top.child(group) };
        for f in *fields {
            if let Some((name, v)) = g.find(f)
                && !v.is_number()
            {
                let at = if group.is_empty() { String::new() } else { format!("{group}.") };
                return Err(RowReason::NotANumber { field: format!("{at}{name}"), value: v.to_string() });
            }
            // A degree or a count of the layout or the batch is a whole number of at least one:
            // `interleave_vpp` 0 or `tp` 2.5 would otherwise read as 1 (a silent clamp).
            if let Some((name, v)) = g.find(f)
                && COUNT_GROUPS.contains(group)
                && keys::whole_number(v).is_none_or(|n| n == 0)
            {
                let rule = "must be a whole number of at least 1 (a degree or a count), or left out";
                return Err(RowReason::Configuration(crate::Error::invalid(format!("{group}.{name}"), v, rule)));
            }
        }
    }
    Ok(())
}

/// The groups of [`NUMBER_FIELDS`] whose numbers are degrees or counts, each at least one.
const COUNT_GROUPS: [&str; 2] = ["parallel", "batch"];

/// The reason of a row that leaves `field` (dotted) unstated.
pub(super) fn not_stated(field: &str) -> RowReason {
    RowReason::NotStated { field: field.to_string() }
}

/// A whole number ≥ 0 (a JSON number).
pub(super) fn int(g: &Group, key: &str) -> Option<u64> {
    g.get(key).and_then(keys::whole_number)
}

/// A finite number (a JSON number).
pub(super) fn num(g: &Group, key: &str) -> Option<f64> {
    g.get(key).and_then(keys::decimal)
}

pub(super) fn words(g: &Group, key: &str) -> String {
    match g.get(key) {
        Some(Value::String(s)) => s.to_ascii_lowercase(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string().to_ascii_lowercase(),
    }
}

/// Whether a measured-run row is of a Mixture-of-Experts model: it states more than one routed
/// expert, under any name of `num_experts` ([`keys::aliases`]: `num_local_experts`,
/// `n_routed_experts`, `moe_num_experts`, …), in its model group or at the top of the row. A row
/// with no such field, `null`, or 1 expert is dense.
pub fn is_moe_row(row: &Value) -> bool {
    int(&Group::top(row).child("model"), "num_experts").is_some_and(|n| n > 1)
}

/// A measured-runs text split by row kind: `(dense, moe)`, each the rows of that kind as a file of
/// the same shape (`None` when it has none). A text that is not a file of rows is returned as
/// dense, for the dense reader to name its error.
pub fn split_by_kind(text: &str) -> (Option<String>, Option<String>) {
    let Ok(doc) = crate::strict_json::parse(text) else { return (Some(text.to_string()), None) };
    let rows = match &doc {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("rows") {
            Some(Value::Array(a)) => a,
            _ => return (Some(text.to_string()), None),
        },
        _ => return (Some(text.to_string()), None),
    };
    // A schema this fmperf does not read: the dense reader names it.
    if super::schema::schema_version(doc.get("schema_version")).is_err() {
        return (Some(text.to_string()), None);
    }
    let (moe, dense): (Vec<&Value>, Vec<&Value>) = rows.iter().partition(|r| is_moe_row(r));
    // One kind only: the text as given (the same bytes the reader would have seen).
    match (dense.is_empty(), moe.is_empty()) {
        (_, true) => return (Some(text.to_string()), None),
        (true, false) => return (None, Some(text.to_string())),
        _ => {}
    }
    let file = |rows: Vec<&Value>| {
        let mut o = doc.as_object().cloned().unwrap_or_default();
        o.insert("rows".into(), Value::Array(rows.into_iter().cloned().collect()));
        Value::Object(o).to_string()
    };
    (Some(file(dense)), Some(file(moe)))
}
