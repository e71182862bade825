//! Megatron-LM's per-step statistics a run's words state: `--log-num-zeros-in-grad` and
//! `--log-params-norm` ([`crate::extended::step_host`]). A flag is on where its name appears as a
//! Megatron argument not followed by `false`, `0` or `off` (`--log-params-norm`,
//! `--log-params-norm True`, `log_params_norm: true`); off otherwise, as in Megatron-LM's
//! defaults. A flag stated both on and off is an error naming `parallel.other` and the flag, not a
//! silent pick. Read only from the arguments a row carries (`parallel.other`, where the functional
//! tests' rows hold their `MODEL_ARGS`), not from prose.

use super::words::Words;
use crate::vocab::Note;

/// What the words state of the store-true flag whose tokens are `flag`: `Some(true)` where it is
/// named and never set false, `Some(false)` where it is only set false, `None` where it is not
/// named; an error where one statement sets it and another unsets it.
fn stated_flag(words: &Words, flag: &str, argument: &str) -> Result<Option<bool>, crate::Error> {
    let want = Words::new(flag).tokens;
    let t = &words.tokens;
    if want.is_empty() || want.len() > t.len() {
        return Ok(None);
    }
    let states: Vec<bool> = (0..=t.len() - want.len())
        .filter(|&i| t[i..i + want.len()] == want[..])
        .map(|i| !matches!(t.get(i + want.len()).map(String::as_str), Some("false" | "0" | "off")))
        .collect();
    match (states.contains(&true), states.contains(&false)) {
        (true, true) => Err(crate::Error::invalid(
            "parallel.other",
            argument,
            format!("states {argument} both on and off: say it once"),
        )),
        (true, false) => Ok(Some(true)),
        (false, true) => Ok(Some(false)),
        (false, false) => Ok(None),
    }
}

/// The statistics switches `(log_num_zeros_in_grad, log_params_norm)` the arguments `other`
/// state, with a note naming those on; an error when the arguments contradict themselves.
pub fn read_step_statistics(other: &Words) -> Result<(bool, bool, Option<Note>), crate::Error> {
    let zeros = stated_flag(other, "log num zeros in grad", "--log-num-zeros-in-grad")?.unwrap_or(false);
    let norm = stated_flag(other, "log params norm", "--log-params-norm")?.unwrap_or(false);
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
    Ok((zeros, norm, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_as_megatron_states_them() {
        let read = |t: &str| {
            let (z, n, _) = read_step_statistics(&Words::new(t)).unwrap();
            (z, n)
        };
        assert_eq!(read("--use-distributed-optimizer False --log-params-norm True"), (false, true));
        assert_eq!(read("--log-num-zeros-in-grad --log-params-norm"), (true, true));
        assert_eq!(read("log_num_zeros_in_grad: true, log_params_norm: false"), (true, false));
        assert_eq!(read("--log-params-norm 0"), (false, false));
        // Megatron's defaults: neither.
        assert_eq!(read("--use-distributed-optimizer True --log-interval 1"), (false, false));
        assert!(read_step_statistics(&Words::new("--log-params-norm")).unwrap().2.is_some());
        assert!(read_step_statistics(&Words::new("")).unwrap().2.is_none());
        // Stated twice the same way: read; stated on and off: an error naming the field and flag.
        assert_eq!(read("--log-params-norm --log-params-norm True"), (false, true));
        let e = read_step_statistics(&Words::new("--log-params-norm True --log-params-norm False")).unwrap_err();
        assert!(e.to_string().contains("parallel.other") && e.to_string().contains("--log-params-norm"), "{e}");
    }
}
