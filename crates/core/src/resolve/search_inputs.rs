//! A search's inputs made for its mode, in one place: the published model's shapes (the sequence
//! length and the scale-up domain applied) in reference mode, or extended mode's workload and part
//! (at the switches' precision, which the part may replace) with its setup ([`ExtendedSetup`]),
//! split by the mode ([`Mode::per_mode`]; [`super::mode_inputs`] says the execution choices the
//! mode's switches fix). Core reads no file: the caller says where the inputs come from
//! ([`SearchSource`]: the CLI's names and files, `fmperf search --from`'s launch file) and gets back the
//! search's spec and setup, which [`crate::search::Search::in_mode`] runs as the explorer's and the
//! sweep's searches do. The caller only parses flags and formats.

use crate::catalog::Precision;
use crate::cost::ExtendedSetup;
use crate::extended::{ExtendedOptions, Hardware, HardwareChoices, Workload};
use crate::mode::Mode;
use crate::search::SearchSpec;
use crate::{Error, ModelShape, Strategy, SystemParams};

/// Where a search's inputs are read from (the caller's names and files); each mode asks only for
/// its own, so an input the mode does not read is never read (nor its errors raised).
pub trait SearchSource {
    /// The caller's error.
    type Error: From<Error>;
    /// Reference mode's model: its display name and the published model's shape.
    fn shape(&self) -> Result<(String, ModelShape), Self::Error>;
    /// Reference mode's system: its display name and parameters.
    fn system(&self) -> Result<(String, SystemParams), Self::Error>;
    /// Extended mode's workload, at `seq_len` [tokens] when given (else the model's own).
    fn workload(&self, seq_len: Option<u64>) -> Result<Workload, Self::Error>;
    /// Extended mode's part at `precision` (the system's spec may name its own, returned in force),
    /// at its measured ceiling when asked, with `domain` [devices] replacing its scale-up domain.
    fn hardware(
        &self,
        precision: Precision,
        measured_ceiling: bool,
        domain: Option<u64>,
    ) -> Result<(Hardware, Precision), Self::Error>;
}

/// What is searched, however it was asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchAsk<'a> {
    /// The model as the user named it (extended mode's display name).
    pub model: &'a str,
    /// The system as the user named it (extended mode's display name).
    pub system: &'a str,
    /// The strategies searched; the first is the spec's.
    pub strategies: &'a [Strategy],
    /// Devices.
    pub n_gpus: u64,
    /// Global batch [samples].
    pub global_batch: u64,
    /// Configurations listed.
    pub top_k: usize,
    /// Training sequence length [tokens] replacing the model's own.
    pub seq_len: Option<u64>,
    /// Scale-up domain [devices] replacing the system's.
    pub domain: Option<u64>,
}

/// A search's inputs in its mode.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchInputs {
    /// The model's display name.
    pub model_name: String,
    /// The system's display name.
    pub system_name: String,
    /// The search of the first strategy (the others differ only in `strategy`).
    pub spec: SearchSpec,
    /// Extended mode's workload, part and switches (`None` in reference mode).
    pub setup: Option<ExtendedSetup>,
}

/// The inputs of `ask`'s search in `mode`, read from `source`.
pub fn search_inputs<S: SearchSource>(mode: &Mode, ask: &SearchAsk, source: &S) -> Result<SearchInputs, S::Error> {
    mode.per_mode((), |()| published_inputs(ask, source), |(), o| extended_inputs(o, ask, source))
}

/// Reference mode's inputs: the published model's shapes with the sequence length and the
/// scale-up domain applied.
fn published_inputs<S: SearchSource>(ask: &SearchAsk, source: &S) -> Result<SearchInputs, S::Error> {
    let (model_name, mut model) = source.shape()?;
    if let Some(s) = ask.seq_len {
        model.l = s;
    }
    let (system_name, mut system) = source.system()?;
    if let Some(k) = ask.domain {
        system.domain_size = k;
    }
    let spec = SearchSpec {
        model,
        system,
        strategy: first_strategy(ask),
        n_gpus: ask.n_gpus,
        global_batch: ask.global_batch,
        top_k: ask.top_k,
    };
    Ok(SearchInputs { model_name, system_name, spec, setup: None })
}

/// Extended mode's inputs with the switches `o`: the workload, the part at the switches'
/// precision (the part's spec may name its own, which then holds in the switches too).
fn extended_inputs<S: SearchSource>(o: ExtendedOptions, ask: &SearchAsk, source: &S) -> Result<SearchInputs, S::Error> {
    let workload = source.workload(ask.seq_len)?;
    let (hardware, precision) = source.hardware(o.hardware.precision, o.hardware.measured_ceiling, ask.domain)?;
    let options = ExtendedOptions { hardware: HardwareChoices { precision, ..o.hardware }, ..o };
    let setup = ExtendedSetup { workload, hardware, options };
    let spec = setup.spec(first_strategy(ask), ask.n_gpus, ask.global_batch, ask.top_k);
    Ok(SearchInputs {
        model_name: ask.model.to_string(),
        system_name: ask.system.to_string(),
        spec,
        setup: Some(setup),
    })
}

/// The strategy of the spec: the first asked for (`1d` when none is).
fn first_strategy(ask: &SearchAsk) -> Strategy {
    ask.strategies.first().copied().unwrap_or(Strategy::OneD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::mode_inputs::{searches_execution, switch_choices};
    use crate::search::ExecutionChoices;

    /// A source of the published GPT-3 175B on A100 that has no extended inputs.
    struct Published;
    impl SearchSource for Published {
        type Error = Error;
        fn shape(&self) -> Result<(String, ModelShape), Error> {
            Ok(("gpt3".into(), ModelShape::reference("gpt3")?))
        }
        fn system(&self) -> Result<(String, SystemParams), Error> {
            Ok(("A100".into(), SystemParams::reference("A100")?))
        }
        fn workload(&self, _: Option<u64>) -> Result<Workload, Error> {
            Err(Error::invalid("model", "gpt3", "no workload here"))
        }
        fn hardware(&self, _: Precision, _: bool, _: Option<u64>) -> Result<(Hardware, Precision), Error> {
            Err(Error::invalid("system", "A100", "no part here"))
        }
    }

    fn ask(strategies: &[Strategy]) -> SearchAsk<'_> {
        SearchAsk {
            model: "m",
            system: "s",
            strategies,
            n_gpus: 64,
            global_batch: 128,
            top_k: 5,
            seq_len: Some(4096),
            domain: Some(16),
        }
    }

    #[test]
    fn reference_mode_reads_the_shapes_and_applies_the_length_and_domain() {
        let s = [Strategy::ContextParallel2D, Strategy::OneD];
        let i = search_inputs(&Mode::Reference, &ask(&s), &Published).unwrap();
        assert_eq!((i.model_name.as_str(), i.system_name.as_str()), ("gpt3", "A100"));
        // l 2048 → 4096 (--seq-len), domain 4 → 16 (--domain); the first strategy is the spec's.
        assert_eq!((i.spec.model.l, i.spec.system.domain_size), (4096, 16));
        assert_eq!((i.spec.strategy, i.spec.n_gpus, i.spec.global_batch, i.spec.top_k), (s[0], 64, 128, 5));
        assert!(i.setup.is_none());
    }

    #[test]
    fn extended_mode_reads_the_workload_not_the_shapes() {
        let e = search_inputs(&Mode::extended(), &ask(&[Strategy::OneD]), &Published).unwrap_err();
        assert!(e.to_string().contains("no workload here"), "{e}");
    }

    #[test]
    fn the_mode_says_what_it_searches_and_fixes() {
        assert_eq!(Mode::Reference.strategies(), Strategy::ALL.to_vec());
        assert_eq!(Mode::extended().strategies(), vec![Strategy::OneD, Strategy::ContextParallel2D]);
        assert_eq!(switch_choices(&Mode::Reference, "recompute=full"), ExecutionChoices::default());
        assert!(!searches_execution(&Mode::Reference, &ExecutionChoices::default()));
        assert!(searches_execution(&Mode::extended(), &ExecutionChoices::default()));
    }
}
