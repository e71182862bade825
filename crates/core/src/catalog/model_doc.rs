//! Reading and writing a model document (`"kind": "model"`), and the model's cross-field rules.

use serde_json::{Map, Value};

use crate::Error;
use crate::catalog::{CatalogModel, FieldSources, Mlp, TrainingBudget};
use crate::moe_shape::{Mla, MoeShape, Router};
use crate::schema::check::{Fields, Problems, failed, walk};
use crate::schema::emit::J;
use crate::schema::fields::{FieldSpec, SCHEMA_VERSION};
use crate::schema::model_fields::MODEL_FIELDS;
use crate::vocab::SlidingWindow;

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

/// Reads a training budget object (`{"tokens": …}` or `{"samples": …}`) that passed [`walk`];
/// reports an error at `path` unless exactly one is given.
pub(crate) fn read_budget(b: Fields<'_>, path: &str, report: &mut Problems) -> Option<TrainingBudget> {
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
    report: &mut Problems,
) -> Option<CatalogModel> {
    let start = report.errors.len();
    walk(MODEL_FIELDS, "", obj, prefix, envelope_keys, report);
    let f = Fields::from_map(obj);
    let p = |name: &str| format!("{prefix}{name}");
    let ok = |report: &Problems, name: &str| !failed(report, start, &p(name));

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
    let layers = f.int("layers");
    let moe = match f.obj("moe") {
        Some(m) if ok(report, "moe") => read_moe(m, mlp, layers, prefix, report),
        _ => None,
    };
    let mla = match f.obj("mla") {
        Some(m) if ok(report, "mla") => read_mla(m, prefix, report),
        _ => None,
    };
    let sliding_window = match f.obj("sliding_window") {
        Some(w) if ok(report, "sliding_window") => read_sliding_window(w, prefix, report),
        _ => None,
    };
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
        layers,
        moe,
        mla,
        mtp_layers: f.int("mtp_layers"),
        sliding_window,
        ffn_hidden: if f.has("ffn_hidden") { f.int("ffn_hidden") } else { hidden.map(|e| 4 * e) },
        mlp,
        vocab: f.int("vocab"),
        params_b: f.num("params_b"),
        training_budget: budget.unwrap_or(TrainingBudget::DEFAULT_TOKENS),
        sources: f.texts("sources"),
        notes: f.notes("notes"),
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
        // The MoE, MLA and MTP keys only when the model has them (dense documents stay as they were).
        .put_some("moe", m.moe.map(write_moe))
        .put_some("mla", m.mla.map(write_mla))
        .put_some("mtp_layers", m.mtp_layers.map(|n| J::Int(n)))
        .put_some("sliding_window", m.sliding_window.map(write_sliding_window))
        .put("params_b", J::num(m.params_b))
        .put("training_budget", write_budget(m.training_budget))
        .put("sources", J::texts(&m.sources))
        .put("notes", J::texts(&m.notes));
    write_field_sources(j, &m.field_sources)
}

/// Reads the `moe` object of a model that passed [`walk`]; cross-field rules (top-k ≤ experts, a
/// MoE block left after the dense ones) are reported at their paths.
fn read_moe(m: Fields<'_>, mlp: Mlp, layers: Option<u64>, prefix: &str, report: &mut Problems) -> Option<MoeShape> {
    let need = |report: &mut Problems, key: &str, v: Option<u64>| {
        if v.is_none() && !m.has(key) {
            report.error(Error::MissingField { field: format!("{prefix}moe.{key}") });
        }
        v
    };
    let experts = need(report, "experts", m.int("experts"));
    let expert_ffn = need(report, "expert_ffn", m.int("expert_ffn"));
    let top_k = need(report, "top_k", m.int("top_k"));
    let (experts, expert_ffn, top_k) = (experts?, expert_ffn?, top_k?);
    let gated = m.text("expert_mlp").and_then(|s| Mlp::from_name(&s)).unwrap_or(mlp) == Mlp::SwiGlu;
    let shared_experts = m.int("shared_experts").unwrap_or(0);
    let shape = MoeShape {
        experts,
        expert_ffn,
        top_k,
        shared_experts,
        // Without shared experts their width means nothing: it is the experts' (as export writes
        // it), so a document reads back equal to itself.
        shared_ffn: if shared_experts > 0 { m.int("shared_ffn").unwrap_or(expert_ffn) } else { expert_ffn },
        gated,
        first_dense: m.int("first_dense").unwrap_or(0),
        moe_every: m.int("moe_every").unwrap_or(1),
        router: m.text("router").and_then(|s| Router::from_name(&s)).unwrap_or(Router::Softmax),
        extras: crate::moe_shape::ExpertExtras::default(),
    };
    // Without a known depth only the rules that do not need it are checked.
    match shape.validate(layers.unwrap_or(u64::MAX), prefix) {
        Ok(()) => Some(shape),
        Err(e) => {
            report.error(e);
            None
        }
    }
}

/// Reads the `mla` object of a model that passed [`walk`].
fn read_mla(m: Fields<'_>, prefix: &str, report: &mut Problems) -> Option<Mla> {
    let mut need = |key: &str| {
        let v = m.int(key);
        if v.is_none() && !m.has(key) {
            report.error(Error::MissingField { field: format!("{prefix}mla.{key}") });
        }
        v
    };
    let (kv, nope, rope, v) =
        (need("kv_lora_rank"), need("qk_nope_head_dim"), need("qk_rope_head_dim"), need("v_head_dim"));
    let mla = Mla {
        q_lora_rank: m.int("q_lora_rank"),
        kv_lora_rank: kv?,
        qk_nope_head_dim: nope?,
        qk_rope_head_dim: rope?,
        v_head_dim: v?,
    };
    match mla.validate(prefix) {
        Ok(()) => Some(mla),
        Err(e) => {
            report.error(e);
            None
        }
    }
}

fn write_moe(m: MoeShape) -> J {
    J::obj()
        .put("experts", J::Int(m.experts))
        .put("expert_ffn", J::Int(m.expert_ffn))
        .put("top_k", J::Int(m.top_k))
        .put("shared_experts", J::Int(m.shared_experts))
        .put("shared_ffn", J::Int(if m.shared_experts > 0 { m.shared_ffn } else { m.expert_ffn }))
        .put("expert_mlp", J::Str(if m.gated { "swiglu" } else { "gelu" }.into()))
        .put("first_dense", J::Int(m.first_dense))
        .put("moe_every", J::Int(m.moe_every))
        .put("router", J::Str(m.router.as_str().into()))
}

/// Reads the `sliding_window` object of a model that passed [`walk`]: `tokens` required,
/// `full_every` absent or null when every block attends through the window (Megatron-Core's
/// default when `window_attn_skip_freq` is unset).
fn read_sliding_window(w: Fields<'_>, prefix: &str, report: &mut Problems) -> Option<SlidingWindow> {
    let tokens = w.int("tokens");
    if tokens.is_none() && !w.has("tokens") {
        report.error(Error::MissingField { field: format!("{prefix}sliding_window.tokens") });
    }
    Some(SlidingWindow { tokens: tokens?, full_every: w.int("full_every") })
}

fn write_sliding_window(w: SlidingWindow) -> J {
    J::obj().put("tokens", J::Int(w.tokens)).put_some("full_every", w.full_every.map(J::Int))
}

fn write_mla(m: Mla) -> J {
    J::obj()
        .put("q_lora_rank", J::int(m.q_lora_rank))
        .put("kv_lora_rank", J::Int(m.kv_lora_rank))
        .put("qk_nope_head_dim", J::Int(m.qk_nope_head_dim))
        .put("qk_rope_head_dim", J::Int(m.qk_rope_head_dim))
        .put("v_head_dim", J::Int(m.v_head_dim))
}
