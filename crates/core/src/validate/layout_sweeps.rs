//! Measured layout sweeps as a first-class input: a file in the schema of
//! `data/measured-layout-sweeps.json` (an object with a `groups` array; each group is measured runs
//! of one model on one system at one device count and one global batch that differ only in their
//! parallel layout) is turned into rows of the measured-runs schema ([`super::schema`]), one row per
//! run, each carrying its group's id in `layout_group`, so the same validation reads them and the
//! ranking ([`super::ranking`]) compares fmperf's order of the layouts with the measured one.
//!
//! Per run (the group's fields are the run's unless the run states its own):
//! * id `group/run_id`; source, model, framework, precision, device count, tags and notes from the
//!   group (the group's `fixed` settings as notes, `fixed key: value`);
//! * hardware: `hardware_id` when the group names a catalog id, else the group's words
//!   (`hardware`: "8 x A800-SXM4-80GB") when fmperf's catalog knows the part they name, else
//!   `hardware_id_assumed` (the closest catalog id, as the file states), noted; the group's
//!   `interconnect` words are added to the hardware words (a named instance's scale-out network);
//! * parallel: tp, pp, dp, cp, ep, `vpp` (as `interleave_vpp`), sequence parallelism, ZeRO stage,
//!   distributed optimizer, recomputation, flash attention, pipeline schedule — the run's, else
//!   `fixed`'s; `zero_shard_group` (InternLM's hierarchical ZeRO-1) as the words `zero shard
//!   group N`, which the sharding reader takes ([`super::sharding_words::read_sharding`]);
//!   `cp_comm_type` (Megatron-Core's `p2p`, `a2a`, `a2a+p2p`) and USP's `ulysses_degree` /
//!   `ring_degree` as the words `ulysses degree U; ring degree R`, which the context-parallel
//!   reader takes ([`super::cp_words`]);
//! * batch: the run's `global_batch_seqs` when it states one, else the group's; micro-batch and
//!   accumulation;
//! * measured: the group's `rank_metric` when fmperf reads it (`step_time_s`, `step_time_s_derived`,
//!   `tokens_per_s_per_device`, `tokens_per_s_total`, `samples_per_s`, `tflops_per_device`), else
//!   the first of those the run states (a source's own MFU is not comparable across sources), and
//!   `oom: false` for a run that ran (so the memory verdict of a run that ran is checked); a run
//!   the source says ran out of memory is a row with `oom: true` and no figure; a run that failed
//!   without a stated cause is left out (nothing was measured and no outcome is known).
//!   `excluded_runs` (other global batches) are left out.

use crate::vocab::{Note, NoteList};
use serde_json::{Map, Value, json};

use crate::Error;

/// The measured layout groups fmperf ships (15 groups, 63 runs; each group names its source).
pub const LAYOUT_SWEEPS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/measured-layout-sweeps.json"));

/// The rank metrics a group may name, with the measured-runs schema's key each is written under.
const RANK_METRICS: [(&str, &str); 6] = [
    ("step_time_s", "step_time_s"),
    ("step_time_s_derived", "step_time_s"),
    ("tokens_per_s_per_device", "tokens_per_s_per_device"),
    ("tokens_per_s_total", "tokens_per_s_total"),
    ("samples_per_s", "samples_per_s"),
    ("tflops_per_device", "tflops_per_device"),
];

/// Parallel settings copied from a run (else from the group's `fixed`) under the same name.
const PARALLEL_KEYS: [&str; 12] = [
    "tp",
    "pp",
    "dp",
    "cp",
    "ep",
    "sequence_parallel",
    "zero_stage",
    "distributed_optimizer",
    "recompute",
    "flash_attention",
    "pp_schedule",
    "fsdp",
];

/// Whether `text` is a layout-sweep file: a JSON object with a `groups` array (and no `rows`).
pub fn is_layout_sweeps(text: &str) -> bool {
    // A cheap look before parsing: a file of rows never names `groups` at its top.
    if !text.contains("\"groups\"") {
        return false;
    }
    matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(o))
        if matches!(o.get("groups"), Some(Value::Array(_))) && !o.contains_key("rows"))
}

/// The rows of a layout-sweep file in the measured-runs schema, as JSON text
/// (`{"schema_version": 1, "rows": [...]}`). Errors name the group and field.
pub fn sweep_rows_json(text: &str) -> Result<String, Error> {
    let doc: Value =
        crate::strict_json::parse(text).map_err(|e| Error::Parse { message: format!("not valid JSON: {e}") })?;
    let groups = match doc.get("groups") {
        Some(Value::Array(g)) => g,
        _ => return Err(Error::Parse { message: "expected an object with a `groups` array (a layout sweep)".into() }),
    };
    let mut rows = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let Value::Object(g) = g else {
            return Err(Error::invalid(format!("groups[{i}]"), short(g), "must be an object"));
        };
        rows.extend(group_rows(g, i)?);
    }
    Ok(json!({ "schema_version": 1, "rows": rows }).to_string())
}

/// The shipped layout groups as rows of the measured-runs schema.
pub fn shipped_sweep_rows_json() -> String {
    // The shipped file is checked by the tests; an error here would be a build defect.
    sweep_rows_json(LAYOUT_SWEEPS_JSON).unwrap_or_else(|_| r#"{"rows": []}"#.to_string())
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(60).collect()
}

/// A non-null value of `key` in `run`, else in `fixed`.
fn setting<'a>(run: &'a Map<String, Value>, fixed: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Value> {
    run.get(key).filter(|v| !v.is_null()).or_else(|| fixed.and_then(|f| f.get(key)).filter(|v| !v.is_null()))
}

/// The hardware fields of a group's rows: `(hardware_id, hardware words, notes)`. The group's
/// `interconnect` (and hardware) words give the scale-out bandwidth per device when they state
/// one ([`super::fabric_words`]); it is passed as the CLI's system spec (`id,scale_out=GB/s`).
fn hardware(g: &Map<String, Value>) -> (Value, Value, Vec<Note>) {
    let text = |key: &str| g.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let words = text("hardware").unwrap_or("").to_string();
    let words_value = if words.is_empty() { Value::Null } else { Value::String(words.clone()) };
    let mut notes = Vec::new();
    let id = match text("hardware_id") {
        Some(id) => Some(id.to_string()),
        None => match super::hardware_words::read_hardware_words(&words) {
            // The words name the part (`@id`): the row reads them itself, unless a fabric
            // figure must be attached to the part's id below.
            Ok(r) if !words.is_empty() => Some(format!("@{}", r.system.id)),
            _ => text("hardware_id_assumed").map(|a| {
                notes.assumption(format!(
                    "hardware not in fmperf's catalog as named: the file's closest part `{a}` evaluated"
                ));
                a.to_string()
            }),
        },
    };
    let devices = g.get("num_devices").and_then(Value::as_u64);
    let nodes = g.get("nodes").and_then(Value::as_u64).filter(|n| *n > 0);
    let per_node = devices.zip(nodes).filter(|(d, n)| d.is_multiple_of(*n)).map(|(d, n)| d / n);
    let fabric = [text("interconnect"), text("hardware")].into_iter().flatten().collect::<Vec<_>>().join("; ");
    let scale_out = super::fabric_words::scale_out_per_device_gbs(&fabric, per_node);
    let id_value = match (id, scale_out) {
        (Some(id), Some(gbs)) => {
            let id = id.trim_start_matches('@').to_string();
            notes.reading(format!("scale-out network read from the words `{fabric}`: {gbs} GB/s per device"));
            // The fabric's kind, when the words name one (`EFA`), travels in the spec too.
            let kind = super::fabric_words::fabric_kind(&fabric).map(|k| format!(",fabric={}", k.name()));
            Value::String(format!("{id},scale_out={gbs}{}", kind.unwrap_or_default()))
        }
        (Some(id), None) if id.starts_with('@') => Value::Null,
        // The words name the fabric's kind without its rate (`EFA between nodes, 3,200 Gbps per
        // node`: the rate is a clause of its own): the kind travels in the spec alone, the part's
        // catalog bandwidth stays.
        (Some(id), None) => match super::fabric_words::fabric_kind(&fabric) {
            Some(k) => {
                notes.reading(format!("scale-out fabric read from the words `{fabric}`: {}", k.name()));
                Value::String(format!("{id},fabric={}", k.name()))
            }
            None => Value::String(id),
        },
        (None, _) => Value::Null,
    };
    (id_value, words_value, notes)
}

/// The figure a run is ranked on: the group's `rank_metric` when it is one fmperf reads and the
/// run states it, else the first figure of [`RANK_METRICS`] the run states (all convert to the
/// same throughput: the group's device count and batch are fixed). `(name, schema key, value)`.
fn run_figure<'a>(run: &'a Map<String, Value>, metric: &str) -> Option<(&'static str, &'static str, &'a Value)> {
    let measured = run.get("measured")?.as_object()?;
    let stated = |name: &str| measured.get(name).filter(|v| v.is_number() || v.is_string());
    RANK_METRICS
        .iter()
        .filter(|(name, _)| *name == metric)
        .chain(RANK_METRICS.iter())
        .find_map(|(name, key)| stated(name).map(|v| (*name, *key, v)))
}

/// The rows of group `g` (index `i`).
fn group_rows(g: &Map<String, Value>, i: usize) -> Result<Vec<Value>, Error> {
    let id = g
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Error::MissingField { field: format!("groups[{i}].id") })?;
    let path = format!("groups[{i}] ({id})");
    let metric = g.get("rank_metric").and_then(Value::as_str).unwrap_or("");
    let runs = match g.get("runs") {
        Some(Value::Array(r)) => r,
        _ => return Err(Error::invalid(format!("{path}.runs"), "(absent)", "must be an array of runs")),
    };
    let fixed = g.get("fixed").and_then(Value::as_object);
    let (hardware_id, hardware_words, hw_notes) = hardware(g);
    let mut notes: Vec<Value> = hw_notes.into_iter().map(|n| Value::String(n.text)).collect();
    if let Some(Value::Array(n)) = g.get("notes") {
        notes.extend(n.iter().filter(|v| v.is_string()).cloned());
    }
    if let Some(f) = fixed {
        for (k, v) in f {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            notes.push(Value::String(format!("fixed {k}: {v}")));
        }
    }
    let mut out = Vec::new();
    for (j, run) in runs.iter().enumerate() {
        let Value::Object(run) = run else {
            return Err(Error::invalid(format!("{path}.runs[{j}]"), short(run), "must be an object"));
        };
        let run_id = run
            .get("run_id")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| Error::MissingField { field: format!("{path}.runs[{j}].run_id") })?;
        let status = run.get("status").and_then(Value::as_str).unwrap_or("");
        let oom = run.get("oom").and_then(Value::as_bool);
        let figure = run_figure(run, metric);
        let measured = match (figure, oom, status) {
            (_, Some(true), _) | (None, _, "oom") => json!({ "oom": true }),
            (Some((name, key, v)), _, _) => {
                let mut m = Map::new();
                m.insert(key.to_string(), v.clone());
                if name == "tflops_per_device"
                    && let Some(c) = run.get("measured").and_then(|m| m.get("tflops_convention"))
                {
                    m.insert("flop_convention".into(), c.clone());
                }
                m.insert("oom".into(), Value::Bool(false));
                Value::Object(m)
            }
            // Failed without a stated cause, or not measured: nothing to compare.
            (None, _, _) => continue,
        };
        let mut parallel = Map::new();
        for key in PARALLEL_KEYS {
            if let Some(v) = setting(run, fixed, key) {
                parallel.insert(key.to_string(), v.clone());
            }
        }
        if let Some(v) = setting(run, fixed, "vpp") {
            parallel.insert("interleave_vpp".into(), v.clone());
        }
        // InternLM's hierarchical ZeRO-1: the optimizer's shard group, as words the sharding
        // reader takes (a group of every replica is plain ZeRO-1).
        let mut other = Vec::new();
        if let Some(z) = setting(run, fixed, "zero_shard_group").and_then(Value::as_u64) {
            other.push(format!("zero shard group {z}"));
        }
        // The context-parallel flavour and USP's split degrees, as words the CP reader takes
        // ([`super::cp_words`]).
        if let Some(Value::String(t)) = setting(run, fixed, "cp_comm_type") {
            other.push(format!("cp_comm_type {t}"));
        }
        for key in ["ulysses_degree", "ring_degree"] {
            if let Some(d) = setting(run, fixed, key).and_then(Value::as_u64) {
                other.push(format!("{} {d}", key.replace('_', " ")));
            }
        }
        if !other.is_empty() {
            parallel.insert("other".into(), Value::String(other.join("; ")));
        }
        let mut batch = Map::new();
        batch.insert(
            "global_batch_seqs".into(),
            setting(run, None, "global_batch_seqs").or(g.get("global_batch_seqs")).cloned().unwrap_or(Value::Null),
        );
        if setting(run, None, "global_batch_seqs").is_none() {
            batch.insert("global_batch_tokens".into(), g.get("global_batch_tokens").cloned().unwrap_or(Value::Null));
        }
        for key in ["micro_batch", "grad_accum"] {
            if let Some(v) = setting(run, fixed, key) {
                batch.insert(key.to_string(), v.clone());
            }
        }
        let mut run_notes = notes.clone();
        // A group ranked on a figure fmperf does not read (a source's own MFU) is ranked on the
        // run's first figure it reads: the same order at a fixed device count and batch; said.
        if let Some((name, _, _)) = figure
            && !metric.is_empty()
            && name != metric
        {
            run_notes.push(Value::String(format!(
                "the group ranks on `{metric}`, which fmperf does not read here; ranked on `{name}` instead (the same \
                 order at the group's fixed device count and global batch)"
            )));
        }
        for key in ["zero_note", "note", "notes"] {
            match run.get(key) {
                Some(Value::String(s)) => run_notes.push(Value::String(s.clone())),
                Some(Value::Array(a)) => run_notes.extend(a.iter().filter(|v| v.is_string()).cloned()),
                _ => {}
            }
        }
        out.push(json!({
            "id": format!("{id}/{run_id}"),
            "layout_group": id,
            "source": g.get("source").cloned().unwrap_or(Value::Null),
            "hardware_id": hardware_id,
            "hardware": hardware_words,
            "framework": g.get("framework").cloned().unwrap_or(Value::Null),
            "precision": g.get("precision").cloned().unwrap_or(Value::Null),
            "num_devices": g.get("num_devices").cloned().unwrap_or(Value::Null),
            "model": g.get("model").cloned().unwrap_or(Value::Null),
            "parallel": parallel,
            "batch": batch,
            "measured": measured,
            "notes": run_notes,
            "tags": g.get("tags").cloned().unwrap_or(Value::Null),
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_becomes_rows_of_the_runs_schema() {
        let text = r#"{"groups": [{"id": "g", "source": {"title": "S"}, "hardware_id": "nvidia_a100_sxm4_80gb",
            "model": {"layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "seq_len": 128},
            "num_devices": 8, "global_batch_seqs": 16, "rank_metric": "tokens_per_s_per_device",
            "fixed": {"recompute": "none"},
            "runs": [
              {"run_id": "a", "tp": 1, "pp": 1, "dp": 8, "vpp": 1, "measured": {"tokens_per_s_per_device": 10}, "oom": false, "status": "ok"},
              {"run_id": "b", "tp": 8, "pp": 1, "dp": 1, "measured": null, "oom": true, "status": "oom"},
              {"run_id": "c", "tp": 2, "pp": 1, "dp": 4, "measured": null, "oom": null, "status": "crashed_or_oom"}
            ]}]}"#;
        assert!(is_layout_sweeps(text));
        assert!(!is_layout_sweeps(r#"{"rows": [], "groups": []}"#));
        let rows = crate::validate::schema::parse_measured_runs(&sweep_rows_json(text).unwrap()).unwrap().rows;
        assert_eq!(rows.len(), 2, "the run that failed without a cause is left out");
        assert_eq!((rows[0].id.as_str(), rows[0].layout_group.as_deref()), ("g/a", Some("g")));
        assert_eq!(rows[0].measured.tokens_per_s_per_device, Some(10.0));
        assert_eq!(rows[0].measured.memory.oom, Some(false));
        assert_eq!(rows[0].parallel.recompute.as_deref(), Some("none"));
        assert_eq!(rows[0].batch.global, Some(16));
        assert_eq!((rows[1].parallel.tp, rows[1].measured.memory.oom), (Some(8), Some(true)));
        // A rank metric fmperf does not read (a source's own MFU): the run's other figure is used.
        let other = text.replace("tokens_per_s_per_device\",", "mfu_pct_reported\",");
        let rows = crate::validate::schema::parse_measured_runs(&sweep_rows_json(&other).unwrap()).unwrap().rows;
        assert_eq!(rows[0].measured.tokens_per_s_per_device, Some(10.0));
    }

    #[test]
    fn the_shipped_groups_read() {
        let rows = crate::validate::schema::parse_measured_runs(&shipped_sweep_rows_json()).unwrap().rows;
        assert_eq!(rows.len(), 63);
        // A800 is in fmperf's catalog by its words; the file's assumed A100 is not needed.
        let a800 = rows.iter().find(|r| r.id.starts_with("flagperf_megatron_llama3_8b_a800_8gpu/")).unwrap();
        assert_eq!(a800.hardware_id, None);
        // InternLM's hierarchical ZeRO-1 states its shard group; the row carries it as words.
        let within = rows.iter().find(|r| r.id == "internlm_7b_512gpu/tp1_zero1_8").unwrap();
        assert_eq!(within.parallel.other, vec!["zero shard group 8".to_string()]);
        let all = rows.iter().find(|r| r.id == "internlm_7b_512gpu/tp1_zero1_all").unwrap();
        assert_eq!(all.parallel.other, vec!["zero shard group 512".to_string()]);
    }
}
