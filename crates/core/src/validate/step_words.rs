//! Megatron-LM's per-step statistics a run's words state: `--log-num-zeros-in-grad` and
//! `--log-params-norm` ([`crate::extended::step_host`]). A flag is on where its name appears as a
//! Megatron argument not followed by `false`, `0` or `off` (`--log-params-norm`,
//! `--log-params-norm True`, `log_params_norm: true`); off otherwise, as in Megatron-LM's
//! defaults. Read only from the arguments a row carries (`parallel.other`, where the functional
//! tests' rows hold their `MODEL_ARGS`), not from prose.

use super::words::Words;
use crate::vocab::Note;

/// Whether `words` state the store-true flag whose tokens are `flag` and do not set it false.
fn states_flag(words: &Words, flag: &str) -> bool {
    let want = Words::new(flag).tokens;
    let t = &words.tokens;
    if want.is_empty() || want.len() > t.len() {
        return false;
    }
    (0..=t.len() - want.len()).any(|i| {
        t[i..i + want.len()] == want[..]
            && !matches!(t.get(i + want.len()).map(String::as_str), Some("false" | "0" | "off"))
    })
}

/// The statistics switches `(log_num_zeros_in_grad, log_params_norm)` the arguments `other`
/// state, with a note naming those on.
pub fn read_step_statistics(other: &Words) -> (bool, bool, Option<Note>) {
    let zeros = states_flag(other, "log num zeros in grad");
    let norm = states_flag(other, "log params norm");
    let named: Vec<&str> = [(zeros, "--log-num-zeros-in-grad"), (norm, "--log-params-norm")]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| *f)
        .collect();
    let note = (!named.is_empty()).then(|| {
        Note::reading(format!(
            "per-step statistics {}: their host work (PyTorch calls, synced all-reduces) added to each step",
            named.join(", ")
        ))
    });
    (zeros, norm, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_as_megatron_states_them() {
        let read = |t: &str| {
            let (z, n, _) = read_step_statistics(&Words::new(t));
            (z, n)
        };
        assert_eq!(read("--use-distributed-optimizer False --log-params-norm True"), (false, true));
        assert_eq!(read("--log-num-zeros-in-grad --log-params-norm"), (true, true));
        assert_eq!(read("log_num_zeros_in_grad: true, log_params_norm: false"), (true, false));
        assert_eq!(read("--log-params-norm 0"), (false, false));
        // Megatron's defaults: neither.
        assert_eq!(read("--use-distributed-optimizer True --log-interval 1"), (false, false));
        assert!(read_step_statistics(&Words::new("--log-params-norm")).2.is_some());
        assert!(read_step_statistics(&Words::new("")).2.is_none());
    }
}
