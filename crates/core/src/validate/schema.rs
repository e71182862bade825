//! The schema of measured runs (`data/measured-training-runs.json` and
//! `data/measured-memory-runs.json`, schema_version 1): parsing a file's text into
//! [`MeasuredRun`]s. Both files share one row shape; a row may carry a time figure, a memory
//! figure, an out-of-memory outcome, or several. Every field may be `null` (the source does not
//! state it) and is then `None`; a field of the wrong type is an error naming the row and field.
//! Synonymous keys of the two files are read alike (`interleave_vpp`/`vpp`,
//! `params_b`/`params_b_reported`; `fsdp` as words or a boolean).

use crate::vocab::Note;
use serde_json::{Map, Value};

use crate::Error;

/// The model of a run, as the source states it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunModel {
    /// Display name.
    pub name: Option<String>,
    /// Transformer blocks.
    pub layers: Option<u64>,
    /// Model width.
    pub hidden: Option<u64>,
    /// Query heads.
    pub heads: Option<u64>,
    /// Key/value heads.
    pub kv_heads: Option<u64>,
    /// Head width (when it is not `hidden / heads`).
    pub head_dim: Option<u64>,
    /// MLP width (gated MLPs: per branch).
    pub ffn_hidden: Option<u64>,
    /// MLP kind in words (`gelu_4h`, `swiglu`, `relu (non-gated)`, …).
    pub ffn_type: Option<String>,
    /// Sequence length [tokens].
    pub seq_len: Option<u64>,
    /// Vocabulary [tokens].
    pub vocab: Option<u64>,
    /// Parameters as stated [billions].
    pub params_b: Option<f64>,
    /// Whether the output head shares the embedding matrix.
    pub tied_embeddings: Option<bool>,
}

/// The parallel configuration of a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunParallel {
    /// Tensor parallel degree.
    pub tp: Option<u64>,
    /// Pipeline stages.
    pub pp: Option<u64>,
    /// Data-parallel replicas (FSDP shards included).
    pub dp: Option<u64>,
    /// Context parallel degree.
    pub cp: Option<u64>,
    /// Expert parallel degree.
    pub ep: Option<u64>,
    /// Sequence parallelism on/off.
    pub sequence_parallel: Option<bool>,
    /// Virtual pipeline stages: a number, or words when the source gives none.
    pub interleave: Option<Interleave>,
    /// ZeRO stage.
    pub zero_stage: Option<u64>,
    /// FSDP description in words (`FSDP 8`, `ICI FSDP = 256 within slice; …`).
    pub fsdp: Option<String>,
    /// `fsdp` given as a boolean (`false`: no FSDP).
    pub fsdp_flag: Option<bool>,
    /// Megatron's distributed optimizer (ZeRO-1-like) on/off.
    pub distributed_optimizer: Option<bool>,
    /// Activation recomputation in words (`full`, `selective (attention core only)`, `none`).
    pub recompute: Option<String>,
    /// Flash (fused) attention on/off.
    pub flash_attention: Option<bool>,
    /// Anything else about the parallel set-up, in words (`pp_schedule`, `other`, …).
    pub other: Vec<String>,
}

/// `interleave_vpp`: a count, or a description without one.
#[derive(Debug, Clone, PartialEq)]
pub enum Interleave {
    /// Virtual stages per device.
    Chunks(u64),
    /// Words only (e.g. "interleaved (chunks per stage not stated)").
    Described(String),
}

/// Batch sizes of a run [sequences].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunBatch {
    /// Global batch [sequences].
    pub global: Option<u64>,
    /// Micro-batch per device and pipeline step [sequences].
    pub micro: Option<u64>,
    /// Gradient-accumulation steps.
    pub grad_accum: Option<u64>,
    /// Global batch [tokens].
    pub global_tokens: Option<u64>,
}

/// What was measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunMeasured {
    /// How the source counts FLOPs / what its number is, in words.
    pub flop_convention: Option<String>,
    /// TFLOP/s per device in the source's convention.
    pub tflops_per_device: Option<f64>,
    /// Model FLOP utilisation (0–1).
    pub mfu: Option<f64>,
    /// Hardware FLOP utilisation (0–1).
    pub hfu: Option<f64>,
    /// Tokens per second, all devices.
    pub tokens_per_s_total: Option<f64>,
    /// Tokens per second per device.
    pub tokens_per_s_per_device: Option<f64>,
    /// Seconds per iteration.
    pub step_time_s: Option<f64>,
    /// Samples per second.
    pub samples_per_s: Option<f64>,
    /// The structured form of the figure (`measured.metric`), when the row has one.
    pub structured: Option<super::metric::StructuredMetric>,
    /// The memory figure and outcome.
    pub memory: RunMemory,
}

/// A measured memory figure and/or out-of-memory outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunMemory {
    /// Which figure (`peak_allocated`, `peak_reserved`, `nvidia_smi`, `other`, or words).
    pub kind: Option<String>,
    /// What an `other` figure is, in words.
    pub kind_detail: Option<String>,
    /// The figure [GB = 1e9 bytes].
    pub gb: Option<f64>,
    /// The figure [GiB], when the source states GiB.
    pub gib: Option<f64>,
    /// `true`: the run did not fit; `false`: it ran; `None`: not stated.
    pub oom: Option<bool>,
    /// The unit as the source writes it.
    pub unit: Option<String>,
    /// Which rank(s) the figure is from.
    pub scope: Option<String>,
}

impl RunMemory {
    /// Whether the row states a memory figure or an outcome.
    pub fn is_stated(&self) -> bool {
        self.gb.is_some() || self.gib.is_some() || self.oom.is_some()
    }
}

/// One measured run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasuredRun {
    /// Row id (unique within a file).
    pub id: String,
    /// Title of the source (rows are summarised per source).
    pub source: String,
    /// Where in the source, and its address.
    pub source_where: Option<String>,
    /// Address of the source.
    pub source_url: Option<String>,
    /// Key into the hardware catalog.
    pub hardware_id: Option<String>,
    /// The accelerator in words.
    pub hardware: Option<String>,
    /// The optimizer in words (`AdamW`, `Adam, fp32 states sharded by ZeRO-1`, …).
    pub optimizer: Option<String>,
    /// The training stack in words.
    pub framework: Option<String>,
    /// Devices.
    pub num_devices: Option<u64>,
    /// Training precision in words (`bf16`, `fp8`, `fp16/bf16 mixed`, …).
    pub precision: Option<String>,
    /// The model.
    pub model: RunModel,
    /// The parallel configuration.
    pub parallel: RunParallel,
    /// The batch.
    pub batch: RunBatch,
    /// The measurement.
    pub measured: RunMeasured,
    /// Notes of the curator.
    pub notes: Vec<Note>,
    /// Tags (`"torchtitan"`, `"long_context"`, …): more words about the run.
    pub tags: Vec<String>,
    /// The layout group the run belongs to (`layout_group`: runs of one job that differ only in
    /// layout, ranked together by [`super::ranking`]); `None`: grouped by what the rows share.
    pub layout_group: Option<String>,
}

/// A parsed file of measured runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasuredFile {
    /// `schema_version` when stated.
    pub schema_version: Option<u64>,
    /// The rows, in file order.
    pub rows: Vec<MeasuredRun>,
}

/// Field access with errors that name the row and the field. A field is looked up under each of
/// its names ([`super::keys::aliases`]) in its group (`model`, `parallel`, …), then at the top of
/// the row (files that write rows flat).
struct Row<'a> {
    obj: &'a Map<String, Value>,
    path: String,
    /// The row's top level, for a group's fields written there.
    flat: Option<&'a Map<String, Value>>,
}

impl<'a> Row<'a> {
    fn err(&self, key: &str, v: &Value, rule: &str) -> Error {
        let shown: String = v.to_string().chars().take(60).collect();
        Error::invalid(format!("{}.{key}", self.path), shown, rule)
    }

    /// The name under which `key` is given and its value (not null).
    fn lookup(&self, key: &str) -> Option<(&'a str, &'a Value)> {
        super::keys::find(self.obj, key).or_else(|| self.flat.and_then(|f| super::keys::find(f, key)))
    }

    fn value(&self, key: &str) -> Option<&'a Value> {
        self.lookup(key).map(|(_, v)| v)
    }

    /// The error for the value of `key` under the name it was given.
    fn bad(&self, key: &str, rule: &str) -> Error {
        match self.lookup(key) {
            Some((name, v)) => self.err(name, v, rule),
            None => self.err(key, &Value::Null, rule),
        }
    }

    /// A figure given in another unit ([`super::keys::SCALED`]), converted to `field`'s unit.
    fn scaled(&self, field: &str) -> Result<Option<f64>, Error> {
        for (name, to, factor) in super::keys::SCALED {
            if *to != field {
                continue;
            }
            let sub = Row { obj: self.obj, path: self.path.clone(), flat: self.flat };
            if let Some(x) = sub.number(name)? {
                return Ok(Some(x * factor));
            }
        }
        Ok(None)
    }

    /// Words: a string, or a list of strings (joined with ", ").
    fn string(&self, key: &str) -> Result<Option<String>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
                Ok(Some(a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")))
            }
            Some(_) => Err(self.bad(key, "must be words (a string or a list of strings) or null")),
        }
    }

    /// A positive whole number, written as a JSON number (a string of digits is refused: text
    /// where a number belongs is not guessed at).
    fn count(&self, key: &str) -> Result<Option<u64>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => match super::keys::whole_number(v) {
                Some(n) if n > 0 => Ok(Some(n)),
                _ if v.is_string() => {
                    Err(self.bad(key, "must be a positive integer written as a JSON number, not a string, or null"))
                }
                _ => Err(self.bad(key, "must be a positive integer or null")),
            },
        }
    }

    /// A positive number, written as a JSON number (a string is refused, as by [`Row::count`]).
    fn number(&self, key: &str) -> Result<Option<f64>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
                _ if v.is_string() => {
                    Err(self.bad(key, "must be a positive number written as a JSON number, not a string, or null"))
                }
                _ => Err(self.bad(key, "must be a positive number or null")),
            },
        }
    }

    /// On/off: `true`/`false`, or the words and numbers people write for them (`"yes"`, `"off"`,
    /// `"enabled"`, `1`, `0`).
    fn boolean(&self, key: &str) -> Result<Option<bool>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => match flag_words(v) {
                Some(b) => Ok(Some(b)),
                None => Err(self.bad(key, "must be true, false (or yes/no, on/off, 1/0) or null")),
            },
        }
    }

    /// A field given as words or as a boolean: `(words, flag)`.
    fn words_or_flag(&self, key: &str) -> Result<(Option<String>, Option<bool>), Error> {
        match self.value(key) {
            None => Ok((None, None)),
            Some(Value::String(s)) if s.trim().is_empty() => Ok((None, None)),
            Some(Value::String(s)) => Ok((Some(s.clone()), None)),
            Some(Value::Bool(b)) => Ok((None, Some(*b))),
            Some(Value::Array(_)) => Ok((self.string(key)?, None)),
            Some(_) => Err(self.bad(key, "must be words, true, false or null")),
        }
    }

    /// A group with no fields.
    fn empty(&self) -> Row<'a> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        Row { obj: EMPTY.get_or_init(Map::new), path: self.path.clone(), flat: None }
    }

    /// A group of fields (`model`, `parallel`, …): its object, or an empty one whose fields are
    /// then read from the top of the row.
    fn child(&self, key: &str) -> Result<Row<'a>, Error> {
        let (name, value) = self.lookup(key).unwrap_or((key, &Value::Null));
        let path = format!("{}.{name}", self.path);
        let flat = Some(self.obj);
        match value {
            Value::Null => Ok(Row { flat, ..self.empty() }),
            Value::Object(o) => Ok(Row { obj: o, path, flat }),
            v => Err(self.err(name, v, "must be an object or null")),
        }
    }
}

/// `true`/`false` from the words or numbers people use for on/off; `None` for anything else.
/// The rule a stated `zero_stage` keeps, as its errors say it (dense and MoE rows alike).
pub(super) const ZERO_STAGE_RULE: &str = "must be a ZeRO stage 0-3 (a number or words such as \"ZeRO-1\") or null";

/// The ZeRO stage that words in a `zero_stage` string name: "ZeRO-1", "stage 2", "zero3" (the one
/// digit 0–3 they hold), or an off word ("none", "off": stage 0). `None` for anything else, which
/// the caller refuses with [`ZERO_STAGE_RULE`].
pub(super) fn zero_stage_in_words(v: &Value) -> Option<u64> {
    let Value::String(s) = v else { return None };
    if flag_words(v) == Some(false) {
        return Some(0);
    }
    match s.chars().filter(char::is_ascii_digit).collect::<String>().as_str() {
        d @ ("0" | "1" | "2" | "3") => d.parse().ok(),
        _ => None,
    }
}

fn flag_words(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x == 1.0 => Some(true),
            Some(x) if x == 0.0 => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "enabled" | "enable" | "y" | "1" => Some(true),
            "false" | "no" | "off" | "disabled" | "disable" | "n" | "0" | "none" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// The measured-runs schema this fmperf reads (`schema_version` of the shipped files).
pub const SCHEMA_VERSION: u64 = 1;

/// A file's `schema_version`: absent or null (read as this version's shape), or
/// [`SCHEMA_VERSION`]; any other value is an error (a later schema may mean other things by the
/// same fields, so its rows are not read as if they were this version's).
pub(crate) fn schema_version(v: Option<&Value>) -> Result<Option<u64>, Error> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64() == Some(SCHEMA_VERSION) => Ok(Some(SCHEMA_VERSION)),
        Some(other) => Err(Error::invalid(
            "schema_version",
            other,
            format!("this fmperf reads schema_version {SCHEMA_VERSION} (the shape of measured-training-runs.json)"),
        )),
    }
}

/// Parses the text of a measured-runs file: an object with a `rows` array (the published file), or
/// a bare array of rows. Errors (not JSON, no rows, a row that is not an object or has no `id`, a
/// field of the wrong type) name the place.
pub fn parse_measured_runs(text: &str) -> Result<MeasuredFile, Error> {
    let doc: Value =
        crate::strict_json::parse(text).map_err(|e| Error::Parse { message: format!("not valid JSON: {e}") })?;
    let (rows, version) = match &doc {
        Value::Array(a) => (a, None),
        Value::Object(o) => match o.get("rows") {
            Some(Value::Array(a)) => (a, schema_version(o.get("schema_version"))?),
            _ => {
                return Err(Error::Parse {
                    message: "expected an object with a `rows` array (the schema of measured-training-runs.json / measured-memory-runs.json)"
                        .into(),
                });
            }
        },
        _ => return Err(Error::Parse { message: "expected a JSON object with `rows`, or an array of rows".into() }),
    };
    let mut out = Vec::with_capacity(rows.len());
    for (i, v) in rows.iter().enumerate() {
        let Value::Object(obj) = v else {
            return Err(Error::invalid(
                format!("rows[{i}]"),
                v.to_string().chars().take(40).collect::<String>(),
                "must be an object",
            ));
        };
        out.push(parse_row(&Row { obj, path: format!("rows[{i}]"), flat: None })?);
    }
    Ok(MeasuredFile { schema_version: version, rows: out })
}

fn parse_row(r: &Row) -> Result<MeasuredRun, Error> {
    let id = r
        .string("id")?
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Error::MissingField { field: format!("{}.id", r.path) })?;
    // From here on errors name the row by its id.
    let r = Row { obj: r.obj, path: format!("{} ({id})", r.path), flat: None };
    // A source given as words (a title or an address) instead of {title, where, url}.
    let source_words = match r.value("source") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    };
    let source = if source_words.is_some() { r.empty() } else { r.child("source")? };
    let model = r.child("model")?;
    // A dense row (MoE rows, more than one routed expert, have their own reader) may state its
    // expert count: 1 or null. 0 experts is no model at all, not "dense".
    if let Some(v) = model.value("num_experts")
        && super::keys::whole_number(v) != Some(1)
    {
        let rule =
            "must be 1 for a dense model (more than 1: a mixture of experts) or null, a JSON number, not a string";
        return Err(model.bad("num_experts", rule));
    }
    let parallel = r.child("parallel")?;
    let batch = r.child("batch")?;
    let measured = r.child("measured")?;
    let vpp_key = "interleave_vpp";
    let interleave = match parallel.value(vpp_key) {
        None => None,
        Some(Value::String(s)) => Some(Interleave::Described(s.clone())),
        Some(_) => parallel.count(vpp_key)?.map(Interleave::Chunks),
    };
    let notes = match r.value("notes") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(Note::stated).collect(),
        Some(Value::String(s)) => vec![Note::stated(s)],
        Some(v) => return Err(r.err("notes", v, "must be an array of strings or null")),
    };
    let tags = match r.value("tags") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(v) => return Err(r.err("tags", v, "must be an array of strings or null")),
    };
    let (fsdp, fsdp_flag) = parallel.words_or_flag("fsdp")?;
    let mut other = Vec::new();
    for key in ["other", "pp_schedule"] {
        if let Some(s) = parallel.string(key)? {
            other.push(s);
        }
    }
    // Named as the key, so that its values (`a2a`, `p2p`) read as the context-parallel flavour
    // only here ([`super::cp_words`]).
    if let Some(s) = parallel.string("cp_comm_type")? {
        other.push(format!("cp_comm_type {s}"));
    }
    for key in ["async_tp", "chunked_cross_entropy"] {
        if let Some(true) = parallel.boolean(key)? {
            other.push(key.replace('_', " "));
        }
    }
    let structured = match measured.value("metric") {
        None => None,
        Some(Value::Object(_)) => {
            let m = measured.child("metric")?;
            Some(super::metric::StructuredMetric {
                kind: m.string("kind")?,
                value: m.number("value")?,
                flops: m.string("flops")?,
                peak_tflops: m.number("peak_tflops")?,
            })
        }
        Some(v) => {
            return Err(measured.err("metric", v, "must be an object {kind, value, flops, peak_tflops} or null"));
        }
    };
    let oom = match measured.value("oom") {
        Some(Value::String(s)) => {
            let w = super::words::Words::new(s);
            Some(w.any(&["true", "yes", "oom", "out of memory", "did not fit", "failed"]))
        }
        _ => measured.boolean("oom")?,
    };
    // A figure under a name that says its kind (`max_memory_reserved_gib`, `nvidia_smi_mib`, …).
    let mut named = None;
    for (name, field, factor, kind) in super::keys::MEMORY_KIND_KEYS {
        if let Some(x) = measured.number(name)? {
            named = Some((*field, x * factor, *kind));
            break;
        }
    }
    let named_in = |f: &str| named.filter(|(field, _, _)| *field == f).map(|(_, x, _)| x);
    let memory = RunMemory {
        kind: measured.string("memory_kind")?.or_else(|| named.map(|(_, _, kind)| kind.to_string())),
        kind_detail: measured.string("kind_detail")?,
        gb: match measured.number("memory_gb")? {
            Some(gb) => Some(gb),
            None => measured.scaled("memory_gb")?.or(named_in("memory_gb")),
        },
        gib: match measured.number("memory_gib")? {
            Some(gib) => Some(gib),
            None => measured.scaled("memory_gib")?.or(named_in("memory_gib")),
        },
        oom,
        unit: measured.string("unit_as_reported")?,
        scope: measured.string("scope")?,
    };
    Ok(MeasuredRun {
        id,
        source: match &source_words {
            Some(words) => words.clone(),
            None => source.string("title")?.unwrap_or_else(|| "(source not stated)".to_string()),
        },
        source_where: source.string("where")?,
        source_url: match &source_words {
            Some(words) if words.starts_with("http") => Some(words.clone()),
            _ => source.string("url")?,
        },
        hardware_id: r.string("hardware_id")?,
        hardware: r.string("hardware")?,
        optimizer: r.string("optimizer")?,
        framework: r.string("framework")?,
        num_devices: r.count("num_devices")?,
        precision: r.string("precision")?,
        model: RunModel {
            name: model.string("name")?,
            layers: model.count("layers")?,
            hidden: model.count("hidden")?,
            heads: model.count("heads")?,
            kv_heads: model.count("kv_heads")?,
            head_dim: model.count("head_dim")?,
            ffn_hidden: model.count("ffn_hidden")?,
            ffn_type: model.string("ffn_type")?,
            seq_len: model.count("seq_len")?,
            vocab: model.count("vocab")?,
            params_b: match model.value("params_b") {
                Some(_) => model.number("params_b")?,
                None => model.number("params_b_reported")?,
            },
            tied_embeddings: model.boolean("tied_embeddings")?,
        },
        parallel: RunParallel {
            tp: parallel.count("tp")?,
            pp: parallel.count("pp")?,
            dp: parallel.count("dp")?,
            cp: parallel.count("cp")?,
            ep: parallel.count("ep")?,
            sequence_parallel: parallel.boolean("sequence_parallel")?,
            interleave,
            zero_stage: match parallel.value("zero_stage") {
                Some(Value::Number(n)) if n.as_u64() == Some(0) => Some(0),
                Some(v @ Value::String(_)) => match zero_stage_in_words(v) {
                    Some(stage) => Some(stage),
                    None => return Err(parallel.bad("zero_stage", ZERO_STAGE_RULE)),
                },
                _ => parallel.count("zero_stage")?,
            },
            fsdp,
            fsdp_flag,
            distributed_optimizer: parallel.boolean("distributed_optimizer")?,
            recompute: match parallel.value("recompute") {
                // On/off instead of words: on means every layer recomputed (the frameworks' switch:
                // Megatron `--recompute-granularity full`, HF `gradient_checkpointing`).
                Some(v @ (Value::Bool(_) | Value::Number(_))) => match flag_words(v) {
                    Some(true) => Some("full (given as on)".to_string()),
                    Some(false) => Some("none".to_string()),
                    None => return Err(parallel.bad("recompute", "must be words, true, false or null")),
                },
                _ => parallel.string("recompute")?,
            },
            flash_attention: parallel.boolean("flash_attention")?,
            other,
        },
        batch: RunBatch {
            global: batch.count("global_batch_seqs")?,
            micro: batch.count("micro_batch")?,
            grad_accum: batch.count("grad_accum")?,
            global_tokens: batch.count("global_batch_tokens")?,
        },
        measured: RunMeasured {
            flop_convention: measured.string("flop_convention")?,
            tflops_per_device: measured.number("tflops_per_device")?,
            mfu: measured.number("mfu")?,
            hfu: measured.number("hfu")?,
            tokens_per_s_total: measured.number("tokens_per_s_total")?,
            tokens_per_s_per_device: measured.number("tokens_per_s_per_device")?,
            step_time_s: match measured.number("step_time_s")? {
                Some(s) => Some(s),
                None => measured.scaled("step_time_s")?,
            },
            samples_per_s: measured.number("samples_per_s")?,
            structured,
            memory,
        },
        notes,
        tags,
        layout_group: r.string("layout_group")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_none_and_wrong_types_name_the_field() {
        let f = parse_measured_runs(
            r#"{"rows": [{"id": "a", "source": {"title": "S"}, "model": {"layers": 2, "vocab": null},
                "parallel": {"tp": 8, "interleave_vpp": "interleaved"}, "measured": {"mfu": 0.5}}]}"#,
        )
        .unwrap();
        let r = &f.rows[0];
        assert_eq!((r.id.as_str(), r.source.as_str(), r.model.layers, r.model.vocab), ("a", "S", Some(2), None));
        assert_eq!(r.parallel.interleave, Some(Interleave::Described("interleaved".into())));
        assert_eq!(r.measured.mfu, Some(0.5));
        let e = parse_measured_runs(r#"[{"id": "b", "parallel": {"tp": "eight"}}]"#).unwrap_err();
        assert_eq!(e.field(), Some("rows[0] (b).parallel.tp"));
        assert!(parse_measured_runs("nope").is_err());
        assert!(parse_measured_runs(r#"{"runs": []}"#).is_err());
        assert_eq!(parse_measured_runs(r#"[{"x": 1}]"#).unwrap_err().field(), Some("rows[0].id"));
        assert!(parse_measured_runs("[]").unwrap().rows.is_empty());
    }
}
