//! What the mode decides about a scenario's inputs, asked by name in one place: whether the mode
//! takes switches and whether they hold, the precision they price at, the execution choices they
//! fix. (The one split of a resolver's work into the published model's inputs and extended mode's
//! is the mode's own: [`Mode::per_mode`].) The explorer's scenario (`explorer.rs`), a sweep's point
//! (`point.rs`) and its spec (`sweep_spec.rs`), a search's inputs (`search_inputs.rs`) and the
//! sweep's export ask here instead of testing [`Mode::options`] for presence themselves; the tidy
//! rule `options_presence_lives_with_the_mode` (crates/core/tests/tidy.rs) counts such tests
//! anywhere else in the workspace.

use crate::catalog::Precision;
use crate::extended::moe::MoeOptions;
use crate::extended::{ExtendedOptions, Stack};
use crate::mode::Mode;
use crate::search::ExecutionChoices;
use crate::vocab::{Note, NoteList};
use crate::{Error, Strategy};

/// Whether the mode's switches hold together ([`ExtendedOptions::validate`]; reference mode has
/// none, so nothing to check). Errors name the switch (`ext.<key>`).
pub fn check_switches(mode: &Mode) -> Result<(), Error> {
    mode.options().map_or(Ok(()), ExtendedOptions::validate)
}

/// The precision the mode's switches price at (`None` in reference mode: the published model
/// reads the system's own rates).
pub fn switch_precision(mode: &Mode) -> Option<Precision> {
    mode.options().map(|o| o.hardware.precision)
}

/// The MoE switches `mode` sets away from their defaults (`None`: all default, or reference mode,
/// which prices no experts): what the explorer's worker jobs carry besides the mode's text.
pub fn changed_moe_switches(mode: &Mode) -> Option<MoeOptions> {
    mode.options().map(|o| o.moe).filter(|m| *m != MoeOptions::default())
}

/// The training stack whose semantics extended mode's memory figures assume (`None` in reference
/// mode, whose memory model names no stack).
pub fn switch_stack(mode: &Mode) -> Option<Stack> {
    mode.options().map(|o| o.stack)
}

/// The execution choices `mode`'s switches fix (`ext`: the switch text that gave them, whose
/// named switches are fixed too); none in reference mode, which has no execution to choose.
pub fn switch_choices(mode: &Mode, ext: &str) -> ExecutionChoices {
    mode.options().map_or_else(ExecutionChoices::default, |o| ExecutionChoices::from_switch_text(o, ext))
}

/// Whether `choices` leave the search something to choose in `mode` (never in reference mode).
pub fn searches_execution(mode: &Mode, choices: &ExecutionChoices) -> bool {
    mode.options().is_some_and(|o| choices.searches_with(o))
}

/// `strategies` less those `mode` cannot price ([`Mode::refuses`]: extended mode's 2D SUMMA),
/// which `notes` says (`not searched: …`). `Err`: none is left, with the first refused strategy
/// and why, for the caller to place at its own field.
pub fn priced_strategies(
    mode: &Mode,
    strategies: &mut Vec<Strategy>,
    notes: &mut Vec<Note>,
) -> Result<(), (Strategy, &'static str)> {
    let Some((first, why)) = strategies.iter().find_map(|s| mode.refuses(*s).map(|why| (*s, why))) else {
        return Ok(());
    };
    strategies.retain(|s| mode.refuses(*s).is_none());
    if strategies.is_empty() {
        return Err((first, why));
    }
    notes.not_applied(format!("not searched: {why}"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Precision;

    #[test]
    fn the_mode_answers_by_name() {
        // Reference mode: no switches to check, no precision of its own, nothing to choose.
        assert!(check_switches(&Mode::Reference).is_ok());
        assert_eq!(switch_precision(&Mode::Reference), None);
        assert_eq!(switch_choices(&Mode::Reference, "recompute=full"), ExecutionChoices::default());
        assert!(!searches_execution(&Mode::Reference, &ExecutionChoices::default()));
        // Extended mode: the switches' precision (fp8 as typed), the named switch fixed.
        let fp8 = Mode::from_text(Some("extended"), Some("precision=fp8,recompute=full")).unwrap();
        assert_eq!(switch_precision(&fp8), Some(Precision::Fp8));
        assert!(switch_choices(&fp8, "recompute=full").recompute.is_some());
        assert!(searches_execution(&Mode::extended(), &ExecutionChoices::default()));
        assert!(check_switches(&fp8).is_ok());
        // MoE switches only when one differs from its default; the stack in extended mode only.
        assert_eq!((changed_moe_switches(&Mode::Reference), changed_moe_switches(&fp8)), (None, None));
        let deepep = Mode::extended().with_moe_text(Some("dispatcher=deepep:4")).unwrap();
        let dispatcher = changed_moe_switches(&deepep).map(|m| m.dispatcher);
        assert_eq!(dispatcher, Some(crate::extended::moe::Dispatcher::Hierarchical { max_domains: Some(4) }));
        assert_eq!((switch_stack(&Mode::Reference), switch_stack(&fp8)), (None, Some(Stack::default())));
    }

    #[test]
    fn the_strategies_the_mode_cannot_price_are_left_out_and_said() {
        use crate::mode::SUMMA_UNSUPPORTED;
        let (mut notes, all) = (Vec::new(), Strategy::ALL.to_vec());
        // Reference mode prices all three: nothing left out, nothing said.
        let mut s = all.clone();
        assert_eq!(priced_strategies(&Mode::Reference, &mut s, &mut notes), Ok(()));
        assert_eq!((s, notes.len()), (all.clone(), 0));
        // Extended mode leaves 2D SUMMA out with one note; 2d alone is the error.
        let mut s = all;
        assert_eq!(priced_strategies(&Mode::extended(), &mut s, &mut notes), Ok(()));
        assert_eq!(s, vec![Strategy::OneD, Strategy::ContextParallel2D]);
        assert_eq!(
            notes.iter().map(|n| n.text.as_str()).collect::<Vec<_>>(),
            [format!("not searched: {SUMMA_UNSUPPORTED}")]
        );
        let mut s = vec![Strategy::Summa2D];
        let e = priced_strategies(&Mode::extended(), &mut s, &mut notes);
        assert_eq!(e, Err((Strategy::Summa2D, SUMMA_UNSUPPORTED)));
    }
}
