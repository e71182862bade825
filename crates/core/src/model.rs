//! The transformer shape the reference model works on (spec §1.1): `D` identical blocks, no
//! embeddings, no output head.

use crate::Error;

/// Shape of a transformer as the published model sees it.
///
/// Field names follow the spec's symbols: `l` (sequence length in tokens or patches), `e` (embedding
/// width), `h` (attention heads), `depth` (`D`, transformer blocks), `f` (MLP hidden width; the
/// reference always uses `4·e`). All are counts (dimensionless positive integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ModelShape {
    /// `l`: sequence length (tokens or image patches per sample).
    pub l: u64,
    /// `e`: embedding (model) width.
    pub e: u64,
    /// `h`: number of attention heads.
    pub h: u64,
    /// `D`: number of transformer blocks.
    pub depth: u64,
    /// `f`: MLP hidden width (4·e in every published run).
    pub f: u64,
}

impl ModelShape {
    /// A shape with the reference's default MLP width `f = 4·e`.
    pub const fn with_default_mlp(l: u64, e: u64, h: u64, depth: u64) -> Self {
        ModelShape { l, e, h, depth, f: 4 * e }
    }

    /// `q = ⌊e/h⌋`, the width of one attention head.
    pub fn head_width(&self) -> u64 {
        self.e / self.h
    }

    /// The reference's `gpt3` (175B): l 2048, e 12288, h 96, depth 96.
    pub const GPT3: ModelShape = ModelShape::with_default_mlp(2048, 12288, 96, 96);
    /// The reference's `gpt3_1T`: l 2048, e 25600, h 160, depth 128.
    pub const GPT3_1T: ModelShape = ModelShape::with_default_mlp(2048, 25600, 160, 128);
    /// The reference's `vit_era5`: l 64800 patches, e 12288, h 64, depth 48.
    pub const VIT_ERA5: ModelShape = ModelShape::with_default_mlp(64800, 12288, 64, 48);

    /// The reference's built-in models by their reference names.
    pub const REFERENCE: [(&'static str, ModelShape); 3] =
        [("gpt3", Self::GPT3), ("gpt3_1T", Self::GPT3_1T), ("vit_era5", Self::VIT_ERA5)];

    /// Looks up one of the reference's built-in models (`gpt3`, `gpt3_1T`, `vit_era5`).
    pub fn reference(name: &str) -> Result<ModelShape, Error> {
        Self::REFERENCE.iter().find(|(n, _)| *n == name).map(|(_, m)| *m).ok_or_else(|| Error::UnknownName {
            kind: "model".into(),
            name: name.into(),
            known: Self::REFERENCE.iter().map(|(n, _)| n.to_string()).collect(),
        })
    }

    /// Checks what the model's formulas rely on: every field a positive integer, `h ≤ e`.
    ///
    /// Upper bounds keep every integer product of the model inside 64 bits (spec Q17).
    pub fn validate(&self) -> Result<(), Error> {
        let check = |name: &str, v: u64, max: u64| -> Result<(), Error> {
            if v == 0 {
                return Err(Error::invalid(format!("model.{name}"), v, "must be a positive integer"));
            }
            if v > max {
                return Err(Error::invalid(format!("model.{name}"), v, format!("must be at most {max}")));
            }
            Ok(())
        };
        check("l", self.l, 4_194_304)?;
        check("e", self.e, 1_048_576)?;
        check("h", self.h, 65_536)?;
        check("depth", self.depth, 100_000)?;
        check("f", self.f, 4_194_304)?;
        if self.h > self.e {
            return Err(Error::invalid(
                "model.h",
                self.h,
                format!("must not exceed the embedding width e = {}", self.e),
            )
            .with_hint("each head needs at least one embedding channel"));
        }
        Ok(())
    }
}
