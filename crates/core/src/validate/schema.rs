//! The schema of measured training runs (`data/measured-training-runs.json`, schema_version 1):
//! parsing a file's text into [`MeasuredRun`]s. Every field may be `null` (the source does not
//! state it) and is then `None`; a field of the wrong type is an error naming the row and field.

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
    /// Activation recomputation in words (`full`, `selective (attention core only)`, `none`).
    pub recompute: Option<String>,
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
    pub notes: Vec<String>,
}

/// A parsed file of measured runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasuredFile {
    /// `schema_version` when stated.
    pub schema_version: Option<u64>,
    /// The rows, in file order.
    pub rows: Vec<MeasuredRun>,
}

/// Field access with errors that name the row and the field.
struct Row<'a> {
    obj: &'a Map<String, Value>,
    path: String,
}

impl<'a> Row<'a> {
    fn err(&self, key: &str, v: &Value, rule: &str) -> Error {
        let shown: String = v.to_string().chars().take(60).collect();
        Error::invalid(format!("{}.{key}", self.path), shown, rule)
    }

    fn value(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn string(&self, key: &str) -> Result<Option<String>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(key, v, "must be a string or null")),
        }
    }

    fn count(&self, key: &str) -> Result<Option<u64>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => match v
                .as_u64()
                .or_else(|| v.as_f64().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 9e15).map(|x| x as u64))
            {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(self.err(key, v, "must be a positive integer or null")),
            },
        }
    }

    fn number(&self, key: &str) -> Result<Option<f64>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
                _ => Err(self.err(key, v, "must be a positive number or null")),
            },
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, Error> {
        match self.value(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.err(key, v, "must be true, false or null")),
        }
    }

    fn child(&self, key: &str) -> Result<Row<'a>, Error> {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        let path = format!("{}.{key}", self.path);
        match self.value(key) {
            None => Ok(Row { obj: EMPTY.get_or_init(Map::new), path }),
            Some(Value::Object(o)) => Ok(Row { obj: o, path }),
            Some(v) => Err(self.err(key, v, "must be an object or null")),
        }
    }
}

/// Parses the text of a measured-runs file: an object with a `rows` array (the published file), or
/// a bare array of rows. Errors (not JSON, no rows, a row that is not an object or has no `id`, a
/// field of the wrong type) name the place.
pub fn parse_measured_runs(text: &str) -> Result<MeasuredFile, Error> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| Error::Parse { message: format!("not valid JSON: {e}") })?;
    let (rows, version) = match &doc {
        Value::Array(a) => (a, None),
        Value::Object(o) => match o.get("rows") {
            Some(Value::Array(a)) => (a, o.get("schema_version").and_then(Value::as_u64)),
            _ => {
                return Err(Error::Parse {
                    message: "expected an object with a `rows` array (the schema of measured-training-runs.json)"
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
        out.push(parse_row(&Row { obj, path: format!("rows[{i}]") })?);
    }
    Ok(MeasuredFile { schema_version: version, rows: out })
}

fn parse_row(r: &Row) -> Result<MeasuredRun, Error> {
    let id = r
        .string("id")?
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Error::MissingField { field: format!("{}.id", r.path) })?;
    // From here on errors name the row by its id.
    let r = Row { obj: r.obj, path: format!("{} ({id})", r.path) };
    let source = r.child("source")?;
    let model = r.child("model")?;
    let parallel = r.child("parallel")?;
    let batch = r.child("batch")?;
    let measured = r.child("measured")?;
    let interleave = match parallel.value("interleave_vpp") {
        None => None,
        Some(Value::String(s)) => Some(Interleave::Described(s.clone())),
        Some(_) => parallel.count("interleave_vpp")?.map(Interleave::Chunks),
    };
    let notes = match r.value("notes") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(v) => return Err(r.err("notes", v, "must be an array of strings or null")),
    };
    Ok(MeasuredRun {
        id,
        source: source.string("title")?.unwrap_or_else(|| "(source not stated)".to_string()),
        source_where: source.string("where")?,
        source_url: source.string("url")?,
        hardware_id: r.string("hardware_id")?,
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
            params_b: model.number("params_b")?,
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
                _ => parallel.count("zero_stage")?,
            },
            fsdp: parallel.string("fsdp")?,
            recompute: parallel.string("recompute")?,
        },
        batch: RunBatch {
            global: batch.count("global_batch_seqs")?,
            micro: batch.count("micro_batch")?,
            grad_accum: batch.count("grad_accum")?,
        },
        measured: RunMeasured {
            flop_convention: measured.string("flop_convention")?,
            tflops_per_device: measured.number("tflops_per_device")?,
            mfu: measured.number("mfu")?,
            hfu: measured.number("hfu")?,
            tokens_per_s_total: measured.number("tokens_per_s_total")?,
            tokens_per_s_per_device: measured.number("tokens_per_s_per_device")?,
            step_time_s: measured.number("step_time_s")?,
            samples_per_s: measured.number("samples_per_s")?,
        },
        notes,
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
