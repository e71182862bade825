//! Which model prices a search or a sweep: reference mode (the published model, bit-exact) or
//! extended mode with its switches ([`ExtendedOptions`]).
//!
//! Text form, shared by the CLI (`--mode`, `--ext`) and the page's URL (`mode`, `ext`): the mode
//! name `reference` or `extended`, and for extended mode the switches that differ from the
//! defaults as `key=value,…` ([`ExtendedOptions::to_text`]). Switches without extended mode are an
//! error rather than silently ignored.

use serde_json::{Map, Value, json};

use crate::catalog::{CatalogModel, Mlp};
use crate::extended::ExtendedOptions;
use crate::extended::efficiency::Efficiency;
use crate::extended::switches::SWITCHES;
use crate::mode_kind::ModeKind;
use crate::vocab::{MemoryPart, Note, NoteKind, TimePart};
use crate::{Error, Strategy};

/// Why extended mode does not search 2D SUMMA (searches and sweeps leave it out and say so).
pub const SUMMA_UNSUPPORTED: &str = "2D SUMMA (strategy 2d) has no extended model: extended mode searches 1d and \
     2d-seqp; use reference mode for 2d";

/// The model that prices candidates.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Mode {
    /// The published model (spec), bit-exact.
    #[default]
    Reference,
    /// Extended mode with these switches.
    Extended(ExtendedOptions),
}

impl Mode {
    /// Extended mode with the default switches.
    pub fn extended() -> Mode {
        Mode::Extended(ExtendedOptions::realistic())
    }

    /// Which of the two models.
    pub fn kind(&self) -> ModeKind {
        match self {
            Mode::Reference => ModeKind::Reference,
            Mode::Extended(_) => ModeKind::Extended,
        }
    }

    /// `reference` / `extended`.
    pub fn as_str(&self) -> &'static str {
        self.kind().as_str()
    }

    /// The switches, in extended mode.
    pub fn options(&self) -> Option<&ExtendedOptions> {
        match self {
            Mode::Reference => None,
            Mode::Extended(o) => Some(o),
        }
    }

    /// The one split of a resolver's work by the mode: `published(state)` in reference mode (the
    /// published model reads the shapes and the system as mapped), `extended(state, switches)` in
    /// extended mode. A resolver (`crate::resolve`: the explorer's scenario, a sweep's point, a
    /// search's inputs) names its two ways of composing inputs and passes what both need as
    /// `state` (moved into the one that runs).
    pub fn per_mode<S, T>(
        &self,
        state: S,
        published: impl FnOnce(S) -> T,
        extended: impl FnOnce(S, ExtendedOptions) -> T,
    ) -> T {
        match self {
            Mode::Reference => published(state),
            Mode::Extended(o) => extended(state, *o),
        }
    }

    /// Why the mode cannot price `strategy` (`None`: it can): extended mode has no 2D SUMMA
    /// ([`SUMMA_UNSUPPORTED`]).
    pub fn refuses(&self, strategy: Strategy) -> Option<&'static str> {
        match self {
            Mode::Extended(_) if strategy == Strategy::Summa2D => Some(SUMMA_UNSUPPORTED),
            _ => None,
        }
    }

    /// Every strategy the mode prices, in [`Strategy::ALL`]'s order (a search's default: all
    /// three in reference mode, `1d` and `2d-seqp` in extended mode).
    pub fn strategies(&self) -> Vec<Strategy> {
        Strategy::ALL.into_iter().filter(|s| self.refuses(*s).is_none()).collect()
    }

    /// Parses the mode name (`None`: reference) and the switches of extended mode (`None` or
    /// empty: the defaults). Errors name `mode` or the switch (`ext.<key>`).
    pub fn from_text(mode: Option<&str>, ext: Option<&str>) -> Result<Mode, Error> {
        let kind = match mode.map(str::trim).filter(|m| !m.is_empty()) {
            None => ModeKind::Reference,
            Some(m) => ModeKind::parse(m).ok_or_else(|| Error::invalid("mode", m, "must be reference or extended"))?,
        };
        let ext = ext.map(str::trim).filter(|e| !e.is_empty());
        match (kind, ext) {
            (ModeKind::Reference, None) => Ok(Mode::Reference),
            (ModeKind::Reference, Some(e)) => Err(Error::invalid("ext", e, "switches need extended mode")
                .with_hint("add mode extended (CLI: --mode extended), or drop the switches")),
            (ModeKind::Extended, e) => Ok(Mode::Extended(ExtendedOptions::from_text(e.unwrap_or(""))?)),
        }
    }

    /// `self` with the Mixture-of-Experts switches of `text` applied (core's `key=value,…` form,
    /// [`crate::extended::moe::MoeOptions::with_text`]; `None` or blank: `self` unchanged). The
    /// one reading of the CLI's `--moe` and the page's `moe.*` URL keys. Reference mode has no
    /// experts, so switches there are an error at `moe` (like `ext`'s in [`Mode::from_text`]),
    /// never dropped; the switches' own errors name `moe.<key>`.
    pub fn with_moe_text(self, text: Option<&str>) -> Result<Mode, Error> {
        match (self, text.map(str::trim).filter(|t| !t.is_empty())) {
            (m, None) => Ok(m),
            (Mode::Extended(mut o), Some(t)) => {
                o.moe = o.moe.with_text(t)?;
                Ok(Mode::Extended(o))
            }
            (Mode::Reference, Some(t)) => {
                Err(Error::invalid("moe", t, "Mixture-of-Experts switches need extended mode")
                    .with_hint("add mode extended (CLI: --mode extended), or drop the switches"))
            }
        }
    }

    /// The mode name for the text form (`None`: reference, the default).
    pub fn mode_text(&self) -> Option<String> {
        matches!(self, Mode::Extended(_)).then(|| self.as_str().to_string())
    }

    /// The changed switches for the text form (`None`: reference mode or the default switches).
    pub fn ext_text(&self) -> Option<String> {
        self.options().map(ExtendedOptions::to_text).filter(|t| !t.is_empty())
    }

    /// How the model counts the FLOPs of an MFU, in words (the explorer's JSON export writes it
    /// beside the results).
    pub fn model_flops_definition(&self) -> &'static str {
        match self {
            Mode::Reference => {
                "MFU = reference FLOPs per sample (forward + backward incl. attention recomputation) × throughput / (devices × peak matrix TFLOP/s)"
            }
            Mode::Extended(_) => {
                "MFU = model FLOPs per sample (3 × forward: projections with the model's K/V heads, MLP matrices, attention 4·seq·width per token, output head; no recomputation) × throughput / (devices × peak matrix TFLOP/s at the mode's precision)"
            }
        }
    }

    /// In words, for headers and badges: `reference mode` or `extended mode` with the changed
    /// switches (`extended mode (defaults)` when none).
    pub fn label(&self) -> String {
        match self {
            Mode::Reference => self.kind().label().to_string(),
            Mode::Extended(o) => match o.to_text() {
                t if t.is_empty() => "extended mode (default switches)".to_string(),
                t => format!("extended mode ({})", t.replace(',', ", ")),
            },
        }
    }

    /// The mode in words with what it is: `reference mode (the published model)`, or extended
    /// mode's [`Mode::label`] with its switches (`This panel runs in …`).
    pub fn described(&self) -> String {
        match self {
            Mode::Reference => "reference mode (the published model)".to_string(),
            Mode::Extended(_) => self.label(),
        }
    }

    /// `{"mode": "reference"}` or `{"mode": "extended", "switches": {every switch: value}}`, for
    /// JSON outputs.
    pub fn to_json(&self) -> Value {
        match self {
            Mode::Reference => json!({ "mode": "reference" }),
            Mode::Extended(o) => {
                let switches: Map<String, Value> = crate::sort::json_object(
                    SWITCHES.iter().map(|s| (s.key.to_string(), Value::from(o.value_of(s.key).unwrap_or_default()))),
                );
                json!({ "mode": "extended", "switches": switches, "moe": o.moe.to_string() })
            }
        }
    }
}

/// Extended mode with these switches.
impl From<ExtendedOptions> for Mode {
    fn from(o: ExtendedOptions) -> Mode {
        Mode::Extended(o)
    }
}

impl ModeKind {
    /// The mode in words with the fitted constants it predicts with (`eff`, which only extended
    /// mode has): the head line of `fmperf validate`'s table.
    pub fn with_constants(self, eff: &Efficiency) -> String {
        match self {
            ModeKind::Reference => Mode::Reference.described(),
            ModeKind::Extended => format!(
                "extended mode (η = {:.3} of the matmul ceiling, η_att = {:.3} of the attention kernel's benchmark)",
                eff.matmul, eff.attention
            ),
        }
    }
}

/// Reference mode's reading of a catalog model, kept with the modes (per-mode text and judgement;
/// the model's fields live in [`crate::catalog::model`]): whether the published model represents
/// the model as it is, and what it leaves out or gets wrong.
impl CatalogModel {
    /// Whether reference mode represents this model faithfully (up to the vocabulary, which it
    /// never models): all shape fields known, multi-head attention, non-gated MLP.
    pub fn reference_compatible(&self) -> bool {
        self.unknown_fields().is_empty()
            && self.mlp == Mlp::Gelu
            && self.kv_heads.is_none_or(|kv| Some(kv) == self.heads)
            && self.moe.is_none()
            && self.mla.is_none()
    }

    /// What reference mode leaves out or gets wrong for this model, one sentence each (empty when
    /// nothing is lost).
    pub fn reference_caveats(&self) -> Vec<Note> {
        let mut out = Vec::new();
        let caveat = |field: &str, text: String| Note::new(NoteKind::ModelCaveat, text).of_entry(&self.id).about(field);
        let unknown = self.unknown_fields();
        if !unknown.is_empty() {
            out.push(caveat(
                "model",
                format!("unknown: {} (the source does not state it); reference mode cannot run it", unknown.join(", ")),
            ));
        }
        if self.mlp == Mlp::SwiGlu {
            out.push(caveat(
                "model.mlp",
                "gated MLP (SwiGLU, three matrices of width ffn_hidden): reference mode prices a two-matrix MLP of \
                 width ffn_hidden, so MLP weights and FLOPs are one third too low"
                    .to_string(),
            ));
        }
        if let (Some(kv), Some(h)) = (self.kv_heads, self.heads)
            && kv < h
        {
            out.push(caveat("model.kv_heads", format!(
                "grouped-query attention ({kv} key/value heads for {h} query heads): reference mode prices full-width \
                     K and V projections, so attention weights, FLOPs and K/V traffic are too high"
            )));
        }
        if let (Some(e), Some(h)) = (self.hidden, self.heads)
            && h > 0
            && e % h != 0
        {
            out.push(caveat(
                "model.hidden",
                format!("hidden {e} is not a multiple of heads {h}: the head width is rounded down to {}", e / h),
            ));
        }
        if let Some(m) = &self.moe {
            out.push(caveat("model.moe", format!(
                "Mixture-of-Experts ({} routed experts, top-{}): reference mode has no experts and prices every block \
                 as a dense MLP of width ffn_hidden; use extended mode",
                m.experts, m.top_k
            )));
        }
        if self.mla.is_some() {
            out.push(caveat(
                "model.mla",
                "multi-head latent attention: reference mode prices plain multi-head attention of width hidden"
                    .to_string(),
            ));
        }
        if let Some(v) = self.vocab {
            out.push(caveat(
                "model.vocab",
                format!("vocabulary of {v} tokens ignored: reference mode has no embeddings and no output head"),
            ));
        }
        out
    }
}

/// Per-mode text of the shared vocabulary, kept with the modes (`TimePart`'s key and label live in
/// `crate::vocab`).
impl TimePart {
    /// One sentence on what the part is in `mode`.
    pub fn description(self, mode: ModeKind) -> &'static str {
        match (self, mode) {
            (TimePart::Compute, ModeKind::Reference) => "matrix and vector work at 80 % of peak, plus 20 µs per kernel",
            (TimePart::Compute, ModeKind::Extended) => {
                "matmuls and attention at the fitted fraction of the measured ceiling, recomputation included"
            }
            (TimePart::ExposedMemory, ModeKind::Reference) => "HBM traffic that takes longer than the layer's compute",
            (TimePart::ExposedMemory, ModeKind::Extended) => {
                "element-wise work, memory-bound matmuls and the optimizer step, priced by HBM traffic"
            }
            (TimePart::TpComm, ModeKind::Reference) => {
                "tensor- and context-parallel collectives inside each block (not overlapped)"
            }
            (TimePart::TpComm, ModeKind::Extended) => {
                "tensor- and context-parallel collectives inside each block, not hidden behind compute"
            }
            (TimePart::EpComm, ModeKind::Reference) => "none: the published model has no experts",
            (TimePart::EpComm, ModeKind::Extended) => {
                "the expert-parallel all-to-all of MoE blocks (token dispatch and combine) not hidden behind compute; 0 for dense models"
            }
            (TimePart::DpComm, ModeKind::Reference) => "data-parallel weight all-gather and gradient reduce-scatter",
            (TimePart::DpComm, ModeKind::Extended) => {
                "data-parallel collectives not hidden by compute (ZeRO stage, ZeRO-3 gathers per micro-batch)"
            }
            (TimePart::PpComm, _) => "activations sent between pipeline stages",
            (TimePart::Bubble, ModeKind::Reference) => "pipeline fill and drain: (pp − 1) micro-batch steps",
            (TimePart::Bubble, ModeKind::Extended) => {
                "pipeline fill and drain: (pp − 1)/v slots with v-way interleaving"
            }
        }
    }
}

/// Per-mode text of the memory parts. Extended mode's activations column ([`Totals::acts_mem`])
/// holds the framework margin too (fragmentation, CUDA context, collective buffers: the device
/// figure less the allocated one), so its label says so; the Layers view shows the two apart
/// ([`crate::extended::DeviceMemoryPart`]).
///
/// [`Totals::acts_mem`]: crate::vocab::Totals::acts_mem
impl MemoryPart {
    /// Legend and table label in `mode` (`activations + framework margin` in extended mode).
    pub fn label_in(self, mode: ModeKind) -> &'static str {
        match (self, mode) {
            (MemoryPart::Activations, ModeKind::Extended) => "activations + framework margin",
            _ => self.label(),
        }
    }

    /// One sentence on what the part holds in `mode`.
    pub fn description(self, mode: ModeKind) -> &'static str {
        match (self, mode) {
            (MemoryPart::Weights, ModeKind::Reference) => "16-bit weights of the device's blocks (TP and PP shards)",
            (MemoryPart::Weights, ModeKind::Extended) => {
                "16-bit weights of the device's blocks (sharded under ZeRO-3 / FSDP, plus the gathered blocks in flight and FP8 copies)"
            }
            (MemoryPart::Gradients, ModeKind::Reference) => "16-bit weight gradients, not sharded (spec quirk Q8)",
            (MemoryPart::Gradients, ModeKind::Extended) => {
                "weight gradients as the framework keeps them (sharded under ZeRO-2/3 and FSDP)"
            }
            (MemoryPart::OptimizerStates, ModeKind::Reference) => {
                "master weights and Adam moments: 6× the 16-bit weight bytes, sharded over data parallelism"
            }
            (MemoryPart::OptimizerStates, ModeKind::Extended) => {
                "master weights and optimizer moments, sharded as the ZeRO stage or FSDP says"
            }
            (MemoryPart::Activations, ModeKind::Reference) => {
                "activations of the micro-batches in flight (min(pp, micro-batches) on every stage)"
            }
            (MemoryPart::Activations, ModeKind::Extended) => {
                "activations of the micro-batches in flight, logits and loss, plus the framework margin (fragmentation, CUDA context, collective buffers), which the Layers view shows apart"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_activations_say_they_hold_the_framework_margin() {
        assert_eq!(MemoryPart::Activations.label_in(ModeKind::Reference), "activations");
        assert_eq!(MemoryPart::Activations.label_in(ModeKind::Extended), "activations + framework margin");
        for p in MemoryPart::ALL {
            assert!(p.label_in(ModeKind::Extended).starts_with(p.label()), "{p:?}");
            assert_ne!(p.description(ModeKind::Reference), p.description(ModeKind::Extended), "{p:?}");
        }
    }

    #[test]
    fn described_modes_say_what_they_are() {
        assert_eq!(Mode::Reference.described(), "reference mode (the published model)");
        let m = Mode::from(ExtendedOptions::from_text("recompute=full").unwrap());
        assert_eq!(m.described(), "extended mode (recompute=full)");
        assert_eq!(Mode::from(ExtendedOptions::realistic()), Mode::extended());
        // η = 0.61234 and η_att = 0.5 at three decimals: 0.612 and 0.500.
        let eff = Efficiency { matmul: 0.61234, attention: 0.5, gemm_half_dim: 0.0, attention_half_seq: 0.0 };
        assert_eq!(ModeKind::Reference.with_constants(&eff), "reference mode (the published model)");
        assert_eq!(
            ModeKind::Extended.with_constants(&eff),
            "extended mode (η = 0.612 of the matmul ceiling, η_att = 0.500 of the attention kernel's benchmark)"
        );
    }

    #[test]
    fn text_form_round_trips() {
        assert_eq!(Mode::from_text(None, None).unwrap(), Mode::Reference);
        assert_eq!(Mode::from_text(Some("extended"), None).unwrap(), Mode::extended());
        let m = Mode::from_text(Some("ext"), Some("recompute=full")).unwrap();
        assert_eq!(m.mode_text().as_deref(), Some("extended"));
        assert_eq!(m.ext_text().as_deref(), Some("recompute=full"));
        assert_eq!(m.label(), "extended mode (recompute=full)");
        assert_eq!(Mode::Reference.mode_text(), None);
        assert_eq!(Mode::extended().ext_text(), None);
        assert_eq!(m.to_json()["switches"]["recompute"], "full");
        assert_eq!(Mode::Reference.to_json(), json!({"mode": "reference"}));
    }

    #[test]
    fn the_split_runs_the_modes_way_only() {
        // The state moves into the one way that runs: 7 as it is, or 7 · 10 with the switches.
        let which = |m: &Mode| m.per_mode(7, |s| s, |s, o| if o == ExtendedOptions::realistic() { s * 10 } else { 0 });
        assert_eq!((which(&Mode::Reference), which(&Mode::extended())), (7, 70));
    }

    #[test]
    fn errors_name_the_key() {
        assert_eq!(Mode::from_text(Some("fast"), None).unwrap_err().field(), Some("mode"));
        assert_eq!(Mode::from_text(None, Some("causal=off")).unwrap_err().field(), Some("ext"));
        assert_eq!(Mode::from_text(Some("extended"), Some("causal=x")).unwrap_err().field(), Some("ext.causal"));
    }

    #[test]
    fn moe_text_applies_in_extended_mode_and_is_an_error_in_reference_mode() {
        use crate::extended::moe::Load;
        // Extended mode takes the switches; absent or blank text changes nothing in either mode.
        let m = Mode::extended().with_moe_text(Some("load=forced")).unwrap();
        assert_eq!(m.options().unwrap().moe.load, Load::Forced);
        assert_eq!(Mode::extended().with_moe_text(Some(" ")).unwrap(), Mode::extended());
        assert_eq!(Mode::Reference.with_moe_text(None).unwrap(), Mode::Reference);
        assert_eq!(Mode::Reference.with_moe_text(Some("")).unwrap(), Mode::Reference);
        // Reference mode has no experts: the text is an error at `moe`, not dropped.
        let e = Mode::Reference.with_moe_text(Some("ep=2")).unwrap_err();
        assert!(e.is_at("moe"), "{e}");
        assert!(e.to_string().contains("need extended mode"), "{e}");
        // A switch's own error names it.
        assert!(Mode::extended().with_moe_text(Some("load=sometimes")).unwrap_err().is_at("moe.load"));
    }
}
