//! Which of the two models: the plain name, with no switches. A leaf module (it depends on
//! nothing): anything may use it, the catalog's mapping included, without depending on extended
//! mode. [`crate::mode`] re-exports it beside the mode with its switches.

/// Which model predicts: the published one or extended mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModeKind {
    /// The published model, bit-exact (spec).
    #[default]
    Reference,
    /// Extended mode (with its switches: [`crate::mode::Mode`]).
    Extended,
}

impl ModeKind {
    /// Both modes, the published model first (the order of per-mode columns and lists).
    pub const ALL: [ModeKind; 2] = [ModeKind::Reference, ModeKind::Extended];

    /// The mode that predicts a real run (fitted constants, the framework's memory), where fmperf
    /// starts when nothing asks for the published model: the page's default for a new URL,
    /// `fmperf validate`'s default, and the mode the peak-memory runs are checked in (the
    /// published model's memory has no framework margin to check). Old permalinks and
    /// `fmperf search` keep [`ModeKind::default`], the published model.
    pub const REALISTIC: ModeKind = ModeKind::Extended;

    /// `reference` / `extended`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModeKind::Reference => "reference",
            ModeKind::Extended => "extended",
        }
    }

    /// The model in words, as the object of a sentence: `the reference model` / `extended mode`.
    pub fn model_name(self) -> &'static str {
        match self {
            ModeKind::Reference => "the reference model",
            ModeKind::Extended => "extended mode",
        }
    }

    /// The mode in words, inside a sentence or as a column's head: `reference mode` / `extended
    /// mode`.
    pub fn label(self) -> &'static str {
        match self {
            ModeKind::Reference => "reference mode",
            ModeKind::Extended => "extended mode",
        }
    }

    /// [`ModeKind::label`] at the start of a line or on a button: `Reference mode` / `Extended
    /// mode`.
    pub fn title(self) -> &'static str {
        match self {
            ModeKind::Reference => "Reference mode",
            ModeKind::Extended => "Extended mode",
        }
    }

    /// One line on what the mode is, for the tooltip of a badge that names it.
    pub fn tagline(self) -> &'static str {
        match self {
            ModeKind::Reference => "The published model (Subramanian et al., PMBS 2024), bit-exact",
            ModeKind::Extended => "Extended mode: the published model made realistic, switch by switch",
        }
    }

    /// What the mode panel says under its toggle in this mode.
    pub fn panel_summary(self) -> &'static str {
        match self {
            ModeKind::Reference => {
                "Reference mode: the published model, bit-exact (peak rates × 0.8, 20 µs per kernel, no recomputation, ZeRO-1-like memory). Extended mode makes it realistic switch by switch; its switches are kept while you look at reference mode."
            }
            ModeKind::Extended => {
                "Extended mode: every switch below, in the URL; defaults are a current Megatron-style run. 2D SUMMA has no extended model."
            }
        }
    }

    /// Whether the mode has switches (extended mode's `ext`, the CLI's `--ext`, execution flags
    /// such as `--recompute`): the published model has none, so switches beside it are an error.
    pub fn takes_switches(self) -> bool {
        self == ModeKind::Extended
    }

    /// Whether this is the published model, whose results must reproduce the published figures
    /// bit for bit (the reference; extended mode's differences are what it corrects).
    pub fn is_published_model(self) -> bool {
        self == ModeKind::Reference
    }

    /// Whether the model has constants fitted to measured runs (extended mode's efficiencies and
    /// allocator fragmentation), so validation refits them without each source and a measured run
    /// can anchor them; the published model has none.
    pub fn has_fitted_constants(self) -> bool {
        self == ModeKind::Extended
    }

    /// Whether the model prices Mixture-of-Experts blocks as such (extended mode); the published
    /// model has no experts and prices an MoE model as dense.
    pub fn models_experts(self) -> bool {
        self == ModeKind::Extended
    }

    /// Whether this mode prices the experts of a model whose MoE shape is `moe`: `None` for a
    /// dense model (no experts to price), `Some(false)` where the mode has no experts (reference
    /// mode prices every block as a dense MLP). The page's and the first view's one question on a
    /// model's MoE-ness (tidy rule 14 counts the others).
    pub fn prices_experts<M>(self, moe: Option<&M>) -> Option<bool> {
        moe.map(|_| self.models_experts())
    }

    /// Whether the model prices weight sparsity (extended mode's `weight_sparsity` switch); the
    /// published model prices every weight as dense.
    pub fn models_weight_sparsity(self) -> bool {
        self == ModeKind::Extended
    }

    /// Whether the model reads a part's vector (non-matrix) rates: the reference prices
    /// element-wise work at them; extended mode prices it by its HBM traffic and never reads them
    /// (so a part that lists none still maps, and their estimates are not worth a note).
    pub fn reads_vector_rate(self) -> bool {
        self == ModeKind::Reference
    }

    /// Whether, under FP8, the model prices every stored tensor at 1 byte per element (the
    /// reference); extended mode keeps stored tensors in 16 bits, as FP8 recipes keep weights,
    /// optimizer states and some activations.
    pub fn stores_fp8_tensors_in_one_byte(self) -> bool {
        self == ModeKind::Reference
    }

    /// The model that reads a catalog part's mapping for extended mode's part
    /// (`crate::extended::Hardware`: its matrix peaks, memory and network, never the vector rate).
    pub const OF_HARDWARE: ModeKind = ModeKind::Extended;

    /// Parses `reference` / `extended` (and `ref` / `ext`), in any case.
    pub fn parse(s: &str) -> Option<ModeKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "reference" | "ref" => Some(ModeKind::Reference),
            "extended" | "ext" => Some(ModeKind::Extended),
            _ => None,
        }
    }
}

/// One value for each mode (a cache per mode, what a file lists per mode): the mode picks its
/// own ([`PerMode::get`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerMode<T> {
    reference: T,
    extended: T,
}

impl<T> PerMode<T> {
    /// The reference model's value and extended mode's.
    pub const fn new(reference: T, extended: T) -> PerMode<T> {
        PerMode { reference, extended }
    }

    /// The value of each mode, made by `f` (called in [`ModeKind::ALL`]'s order).
    pub fn from_fn(mut f: impl FnMut(ModeKind) -> T) -> PerMode<T> {
        PerMode { reference: f(ModeKind::Reference), extended: f(ModeKind::Extended) }
    }

    /// The value of each mode, made by `f` (`None` if it is `None` for either mode).
    pub fn try_from_fn(mut f: impl FnMut(ModeKind) -> Option<T>) -> Option<PerMode<T>> {
        Some(PerMode { reference: f(ModeKind::Reference)?, extended: f(ModeKind::Extended)? })
    }

    /// The value of `mode`.
    pub fn get(&self, mode: ModeKind) -> &T {
        match mode {
            ModeKind::Reference => &self.reference,
            ModeKind::Extended => &self.extended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ModeKind, PerMode};

    #[test]
    fn names_round_trip_and_unknown_names_are_none() {
        for m in [ModeKind::Reference, ModeKind::Extended] {
            assert_eq!(ModeKind::parse(m.as_str()), Some(m));
            assert_eq!(ModeKind::parse(&m.as_str().to_uppercase()), Some(m));
        }
        assert_eq!(ModeKind::parse(" ext "), Some(ModeKind::Extended));
        assert_eq!(ModeKind::parse("calibrated"), None);
        assert_eq!(ModeKind::default(), ModeKind::Reference);
    }

    #[test]
    fn each_mode_has_its_words_and_the_realistic_one_takes_switches() {
        // The order of per-mode columns: the published model first.
        assert_eq!(ModeKind::ALL.map(ModeKind::label), ["reference mode", "extended mode"]);
        assert_eq!(ModeKind::ALL.map(ModeKind::title), ["Reference mode", "Extended mode"]);
        for m in ModeKind::ALL {
            // The title is the label with a capital: `r` → `R`.
            assert_eq!(m.title().to_lowercase(), m.label());
            assert!(m.label().starts_with(m.as_str()), "{m:?}");
            assert!(m.panel_summary().starts_with(m.title()), "{m:?}");
            // Switches, experts and fitted constants come together, with extended mode.
            assert_eq!(m.takes_switches(), m.models_experts());
            assert_eq!(m.takes_switches(), m.has_fitted_constants());
        }
        assert!(ModeKind::REALISTIC.has_fitted_constants() && !ModeKind::REALISTIC.is_published_model());
        assert!(ModeKind::default().is_published_model());
    }

    #[test]
    fn each_mode_gets_its_own_value() {
        let p = PerMode::new("r", "e");
        assert_eq!((*p.get(ModeKind::Reference), *p.get(ModeKind::Extended)), ("r", "e"));
        let q = PerMode::try_from_fn(|m| Some(m.as_str())).unwrap();
        assert_eq!((*q.get(ModeKind::Reference), *q.get(ModeKind::Extended)), ("reference", "extended"));
        assert_eq!(PerMode::try_from_fn(|m| (m == ModeKind::Reference).then_some(1)), None);
    }
}
