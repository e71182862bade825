//! Which of the two models: the plain name, with no switches. A leaf module (it depends on
//! nothing): anything may use it, the catalog's mapping included, without depending on extended
//! mode. [`crate::mode`] re-exports it beside the mode with its switches.

/// Which model predicts: the published one or extended mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The published model, bit-exact (spec).
    #[default]
    Reference,
    /// Extended mode (with its switches: [`crate::mode::ModelMode`]).
    Extended,
}

impl Mode {
    /// `reference` / `extended`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Reference => "reference",
            Mode::Extended => "extended",
        }
    }

    /// The model in words, as the object of a sentence: `the reference model` / `extended mode`.
    pub fn model_name(self) -> &'static str {
        match self {
            Mode::Reference => "the reference model",
            Mode::Extended => "extended mode",
        }
    }

    /// Whether this is the published model, whose results must reproduce the published figures
    /// bit for bit (the reference; extended mode's differences are what it corrects).
    pub fn is_published_model(self) -> bool {
        self == Mode::Reference
    }

    /// Whether the model has constants fitted to measured runs (extended mode's efficiencies and
    /// allocator fragmentation), so validation refits them without each source and a measured run
    /// can anchor them; the published model has none.
    pub fn has_fitted_constants(self) -> bool {
        self == Mode::Extended
    }

    /// Whether the model prices Mixture-of-Experts blocks as such (extended mode); the published
    /// model has no experts and prices an MoE model as dense.
    pub fn models_experts(self) -> bool {
        self == Mode::Extended
    }

    /// Parses `reference` / `extended` (and `ref` / `ext`), in any case.
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reference" | "ref" => Some(Mode::Reference),
            "extended" | "ext" => Some(Mode::Extended),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Mode;

    #[test]
    fn names_round_trip_and_unknown_names_are_none() {
        for m in [Mode::Reference, Mode::Extended] {
            assert_eq!(Mode::parse(m.as_str()), Some(m));
            assert_eq!(Mode::parse(&m.as_str().to_uppercase()), Some(m));
        }
        assert_eq!(Mode::parse(" ext "), Some(Mode::Extended));
        assert_eq!(Mode::parse("calibrated"), None);
        assert_eq!(Mode::default(), Mode::Reference);
    }
}
