//! A model of the catalog (or a user's model): richer than the reference's [`ModelShape`] — it keeps
//! grouped-query attention, gated MLPs, the vocabulary, the stated parameter count, a training budget
//! and its sources. What reference mode loses when it is reduced to a [`ModelShape`] is reference
//! mode's reading of it, kept with the modes (`crate::mode`: `CatalogModel::reference_caveats`,
//! `CatalogModel::reference_compatible`).

use super::provenance::FieldSources;
use crate::moe_shape::{Mla, MoeShape};
use crate::vocab::Note;
use crate::{Error, ModelShape};

/// The MLP of a transformer block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mlp {
    /// Two matrices `e×f` and `f×e` with a GELU (or other non-gated) activation: the reference's MLP.
    Gelu,
    /// Gated MLP (SwiGLU): gate and up projections `e×f` each, down projection `f×e` (three matrices).
    SwiGlu,
}

impl Mlp {
    /// The name used in JSON: `gelu` or `swiglu`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mlp::Gelu => "gelu",
            Mlp::SwiGlu => "swiglu",
        }
    }

    /// Parses `gelu` / `swiglu`.
    pub fn from_name(s: &str) -> Option<Mlp> {
        match s {
            "gelu" => Some(Mlp::Gelu),
            "swiglu" => Some(Mlp::SwiGlu),
            _ => None,
        }
    }
}

/// How long a model is trained: a token budget (language models) or a sample budget (images,
/// weather fields).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrainingBudget {
    /// Tokens to train on.
    Tokens(f64),
    /// Samples (sequences, images) to train on.
    Samples(f64),
}

impl TrainingBudget {
    /// fmperf's default for language models: 1e12 tokens (the reference's budget for `gpt3_1T`).
    pub const DEFAULT_TOKENS: TrainingBudget = TrainingBudget::Tokens(1e12);

    /// The budget in samples for a sequence length of `seq_len` tokens per sample.
    pub fn samples(self, seq_len: u64) -> f64 {
        match self {
            TrainingBudget::Tokens(t) => t / seq_len.max(1) as f64,
            TrainingBudget::Samples(s) => s,
        }
    }

    /// A short description with unit, e.g. `1e12 tokens`.
    pub fn describe(self) -> String {
        match self {
            TrainingBudget::Tokens(t) => format!("{t:e} tokens"),
            TrainingBudget::Samples(s) => format!("{s:e} samples"),
        }
    }
}

/// A model of the catalog or a user's model. Every count is dimensionless; `None` means unknown
/// (the source does not state it), never "use a default".
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogModel {
    /// Identifier (`gpt3_1T`, `llama3-8b`, …).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Family (`GPT`, `Llama 3`, `GenSLM`, …).
    pub family: String,
    /// Sequence length in tokens (or patches) per sample.
    pub seq_len: Option<u64>,
    /// Embedding (model) width in channels.
    pub hidden: Option<u64>,
    /// Attention (query) heads.
    pub heads: Option<u64>,
    /// Key/value heads; fewer than `heads` means grouped-query (or multi-query) attention.
    pub kv_heads: Option<u64>,
    /// Channels per attention head, when the source gives it (`None`: `hidden / heads`, which must
    /// then divide evenly). Models such as Gemma have `heads · head_dim ≠ hidden`.
    pub head_dim: Option<u64>,
    /// Transformer blocks.
    pub layers: Option<u64>,
    /// MLP hidden width in channels (SwiGLU: width of each branch).
    pub ffn_hidden: Option<u64>,
    /// MLP kind.
    pub mlp: Mlp,
    /// Vocabulary size in tokens.
    pub vocab: Option<u64>,
    /// Parameter count as stated by the source, in billions.
    pub params_b: Option<f64>,
    /// Mixture-of-Experts blocks (`None`: dense).
    pub moe: Option<MoeShape>,
    /// Multi-head latent attention (`None`: multi-head / grouped-query attention).
    pub mla: Option<Mla>,
    /// Multi-token-prediction blocks (`None`: none or unknown).
    pub mtp_layers: Option<u64>,
    /// Sliding-window attention (`None`: every block attends to the whole prefix).
    pub sliding_window: Option<crate::vocab::SlidingWindow>,
    /// How long the model is trained.
    pub training_budget: TrainingBudget,
    /// Where the numbers come from.
    pub sources: Vec<String>,
    /// Remarks, caveats and what is unknown (as the entry states them).
    pub notes: Vec<Note>,
    /// Where each dimension comes from (`seq_len`, `hidden`, …).
    pub field_sources: FieldSources,
}

impl CatalogModel {
    /// A model from a reference shape (used for the reference's JSON format).
    pub fn from_shape(id: &str, name: &str, shape: ModelShape, source: &str) -> CatalogModel {
        CatalogModel {
            id: id.to_string(),
            name: name.to_string(),
            family: "custom".to_string(),
            seq_len: Some(shape.l),
            hidden: Some(shape.e),
            heads: Some(shape.h),
            kv_heads: Some(shape.h),
            // The reference rounds the head width down when `e` is not a multiple of `h`; say so
            // explicitly, as the versioned format requires.
            head_dim: (shape.h > 0 && !shape.e.is_multiple_of(shape.h)).then(|| shape.e / shape.h),
            layers: Some(shape.depth),
            ffn_hidden: Some(shape.f),
            mlp: Mlp::Gelu,
            vocab: None,
            params_b: None,
            moe: None,
            mla: None,
            mtp_layers: None,
            sliding_window: None,
            training_budget: TrainingBudget::DEFAULT_TOKENS,
            sources: vec![source.to_string()],
            notes: Vec::new(),
            field_sources: FieldSources::default(),
        }
    }

    /// The names of the shape fields that are unknown.
    pub fn unknown_fields(&self) -> Vec<&'static str> {
        [
            ("seq_len", self.seq_len),
            ("hidden", self.hidden),
            ("heads", self.heads),
            ("layers", self.layers),
            ("ffn_hidden", self.ffn_hidden),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| n)
        .collect()
    }

    /// The reference model's view of this model: `l = seq_len`, `e = hidden`, `h = heads`,
    /// `depth = layers`, `f = ffn_hidden`.
    ///
    /// What is lost (see [`Self::reference_caveats`]): the vocabulary (the reference has no
    /// embeddings or output head), grouped-query attention (K/V projections are priced at full width
    /// `e×e`), the gate matrix of a SwiGLU MLP (priced as a two-matrix MLP of width `f`).
    ///
    /// Errors when a needed field is unknown, or when the shape breaks [`ModelShape::validate`].
    pub fn to_shape(&self) -> Result<ModelShape, Error> {
        let need = |name: &str, v: Option<u64>| {
            v.ok_or_else(|| {
                Error::invalid(
                    name,
                    "null (unknown)",
                    format!("is needed by the reference model but {} does not state it", self.id),
                )
                .with_hint(format!(
                    "export the model (`fmperf show {} --format json`), fill in `{name}` and use the file",
                    self.id
                ))
            })
        };
        let shape = ModelShape {
            l: need("seq_len", self.seq_len)?,
            e: need("hidden", self.hidden)?,
            h: need("heads", self.heads)?,
            depth: need("layers", self.layers)?,
            f: need("ffn_hidden", self.ffn_hidden)?,
        };
        shape.validate().map_err(rename_shape_field)?;
        Ok(shape)
    }
}

/// Renames the reference symbols in a [`ModelShape::validate`] error (`model.h`) to the catalog's
/// field names (`heads`).
fn rename_shape_field(e: Error) -> Error {
    match e {
        Error::InvalidField { field, value, rule, hint } => {
            let name = match field.as_str() {
                "model.l" => "seq_len",
                "model.e" => "hidden",
                "model.h" => "heads",
                "model.depth" => "layers",
                "model.f" => "ffn_hidden",
                other => other,
            };
            Error::InvalidField { field: name.to_string(), value, rule, hint }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_round_trip_and_caveats() {
        let m = CatalogModel::from_shape("x", "x", ModelShape::GPT3, "test");
        assert_eq!(m.to_shape().unwrap(), ModelShape::GPT3);
        assert!(m.reference_compatible());
        assert!(m.reference_caveats().is_empty());
        let mut llama = m.clone();
        llama.mlp = Mlp::SwiGlu;
        llama.kv_heads = Some(8);
        assert!(!llama.reference_compatible());
        assert_eq!(llama.reference_caveats().len(), 2);
        let mut unknown = m;
        unknown.ffn_hidden = None;
        let e = unknown.to_shape().unwrap_err();
        assert_eq!(e.field(), Some("ffn_hidden"));
    }

    #[test]
    fn budget_in_samples() {
        assert_eq!(TrainingBudget::Tokens(1e12).samples(2048), 1e12 / 2048.0);
        assert_eq!(TrainingBudget::Samples(2.8e7).samples(64800), 2.8e7);
    }
}
