//! Reading and writing a model document (`"kind": "model"`), and the model's cross-field rules.

use serde_json::{Map, Value};

use super::check::{Fields, Report, walk};
use super::emit::J;
use super::fields::{FieldSpec, MODEL_FIELDS, SCHEMA_VERSION};
use crate::Error;
use crate::catalog::{CatalogModel, FieldSources, Mlp, TrainingBudget};

/// Prefix of the per-field source texts in the model and system tables.
const FIELD_SOURCES: &str = "field_sources.";

/// Reads the `field_sources` object (its keys are those `table` lists under `field_sources.`).
pub(crate) fn read_field_sources(f: Fields<'_>, table: &[FieldSpec]) -> FieldSources {
    let Some(o) = f.obj("field_sources") else {
        return FieldSources::default();
    };
    FieldSources::new(
        table
            .iter()
            .filter_map(|s| s.path.strip_prefix(FIELD_SOURCES))
            .filter_map(|k| o.text(k).map(|t| (k.to_string(), t)))
            .collect(),
    )
}

/// Writes `field_sources` onto `j` (left out when no field has a source).
pub(crate) fn write_field_sources(j: J, s: &FieldSources) -> J {
    if s.is_empty() {
        return j;
    }
    let o = s.entries().iter().fold(J::obj(), |o, (k, t)| o.put(k, J::Str(t.clone())));
    j.put("field_sources", o)
}

/// Whether a check since error index `start` failed on `path` (cross-field rules skip such fields).
pub(crate) fn failed(report: &Report, start: usize, path: &str) -> bool {
    report.errors[start..].iter().any(|e| e.field() == Some(path))
}

/// Reads a training budget object (`{"tokens": …}` or `{"samples": …}`) that passed [`walk`];
/// reports an error at `path` unless exactly one is given.
pub(crate) fn read_budget(b: Fields<'_>, path: &str, report: &mut Report) -> Option<TrainingBudget> {
    match (b.num("tokens"), b.num("samples")) {
        (Some(t), None) => Some(TrainingBudget::Tokens(t)),
        (None, Some(s)) => Some(TrainingBudget::Samples(s)),
        (Some(_), Some(_)) => {
            report.error(
                Error::invalid(path, "{tokens, samples}", "must give exactly one of tokens or samples")
                    .with_hint("keep the one the source states"),
            );
            None
        }
        (None, None) => {
            // A failing tokens/samples value was already reported by the walk.
            if !b.has("tokens") && !b.has("samples") {
                report.error(
                    Error::invalid(path, "{}", "must give exactly one of tokens or samples")
                        .with_hint("e.g. {\"tokens\": 1e12}"),
                );
            }
            None
        }
    }
}

/// Writes a training budget object.
pub(crate) fn write_budget(b: TrainingBudget) -> J {
    match b {
        TrainingBudget::Tokens(t) => J::obj().put("tokens", J::Num(t)),
        TrainingBudget::Samples(s) => J::obj().put("samples", J::Num(s)),
    }
}

/// Reads a model object; `prefix` is put before every path in messages (`"model."` inside a
/// scenario). `envelope_keys` are accepted at the root without checks (`schema_version`, `kind`).
/// Returns the model when no error was found.
pub(crate) fn read_model(
    obj: &Map<String, Value>,
    prefix: &str,
    envelope_keys: &[&str],
    report: &mut Report,
) -> Option<CatalogModel> {
    let start = report.errors.len();
    walk(MODEL_FIELDS, "", obj, prefix, envelope_keys, report);
    let f = Fields::from_map(obj);
    let p = |name: &str| format!("{prefix}{name}");
    let ok = |report: &Report, name: &str| !failed(report, start, &p(name));

    let mlp = f.text("mlp").and_then(|s| Mlp::from_name(&s)).unwrap_or(Mlp::Gelu);
    let (hidden, heads) = (f.int("hidden"), f.int("heads"));
    if let (Some(e), Some(h)) = (hidden, heads)
        && ok(report, "hidden")
        && ok(report, "heads")
    {
        if h > e {
            report.error(
                Error::invalid(p("heads"), h, format!("must not exceed hidden = {e}"))
                    .with_hint("each head needs at least one channel; check that hidden and heads are not swapped"),
            );
        } else if e % h != 0 && f.int("head_dim").is_none() {
            report.error(
                Error::invalid(p("hidden"), e, format!("is not a multiple of heads = {h}"))
                    .with_hint("give head_dim (channels per head) if the model's heads are not hidden / heads wide"),
            );
        }
    }
    if let (Some(kv), Some(h)) = (f.int("kv_heads"), heads)
        && ok(report, "kv_heads")
        && ok(report, "heads")
    {
        if kv > h {
            report.error(
                Error::invalid(p("kv_heads"), kv, format!("must not exceed heads = {h}"))
                    .with_hint("grouped-query attention has at most as many key/value heads as query heads"),
            );
        } else if h % kv != 0 {
            report.error(
                Error::invalid(p("kv_heads"), kv, format!("must divide heads = {h}"))
                    .with_hint("query heads are split into equal groups, one per key/value head"),
            );
        }
    }
    if mlp == Mlp::SwiGlu && !f.has("ffn_hidden") && ok(report, "mlp") {
        report.error(Error::MissingField { field: p("ffn_hidden") });
    }
    let budget = match f.obj("training_budget") {
        Some(b) if ok(report, "training_budget") => read_budget(b, &p("training_budget"), report),
        _ => None,
    };
    if report.errors.len() > start {
        return None;
    }
    let id = f.text("id").unwrap_or_default();
    Some(CatalogModel {
        name: f.text("name").unwrap_or_else(|| id.clone()),
        family: f.text("family").unwrap_or_else(|| "custom".to_string()),
        seq_len: f.int("seq_len"),
        hidden,
        heads,
        kv_heads: if f.has("kv_heads") { f.int("kv_heads") } else { heads },
        head_dim: f.int("head_dim"),
        layers: f.int("layers"),
        ffn_hidden: if f.has("ffn_hidden") { f.int("ffn_hidden") } else { hidden.map(|e| 4 * e) },
        mlp,
        vocab: f.int("vocab"),
        params_b: f.num("params_b"),
        training_budget: budget.unwrap_or(TrainingBudget::DEFAULT_TOKENS),
        sources: f.texts("sources"),
        notes: f.texts("notes"),
        field_sources: read_field_sources(f, MODEL_FIELDS),
        id,
    })
}

/// Writes a model object; with `envelope`, `schema_version` and `kind` come first.
pub(crate) fn write_model(m: &CatalogModel, envelope: bool) -> J {
    let mut j = J::obj();
    if envelope {
        j = j.put("schema_version", J::Int(SCHEMA_VERSION)).put("kind", J::Str("model".into()));
    }
    let j = j
        .put("id", J::Str(m.id.clone()))
        .put("name", J::Str(m.name.clone()))
        .put("family", J::Str(m.family.clone()))
        .put("seq_len", J::int(m.seq_len))
        .put("hidden", J::int(m.hidden))
        .put("heads", J::int(m.heads))
        .put("kv_heads", J::int(m.kv_heads))
        .put_some("head_dim", m.head_dim.map(|d| J::int(Some(d))))
        .put("layers", J::int(m.layers))
        .put("ffn_hidden", J::int(m.ffn_hidden))
        .put("mlp", J::Str(m.mlp.as_str().into()))
        .put("vocab", J::int(m.vocab))
        .put("params_b", J::num(m.params_b))
        .put("training_budget", write_budget(m.training_budget))
        .put("sources", J::texts(&m.sources))
        .put("notes", J::texts(&m.notes));
    write_field_sources(j, &m.field_sources)
}
