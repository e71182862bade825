//! The mode flags shared by `fmperf search` and `fmperf sweep`: `--mode reference|extended` and
//! `--ext key=value,…` (extended mode's switches that differ from the defaults, the text form of
//! [`fmperf_core::extended::switches`]; the page's `ext` URL key holds the same text), and the list
//! of switches for `--help`, generated from the switches themselves. `fmperf estimate --from` and
//! `fmperf search --from` read `--ext` here too ([`ext_text`]), set over the file's switches.

use fmperf_core::extended::switches::{SWITCHES, SwitchKind};
use fmperf_core::mode::Mode;

use crate::args::Args;
use crate::cmd::CmdError;

/// The mode asked for with `--mode` and `--ext` (`None`: neither flag given; `--ext` alone is
/// extended mode, the default). Errors name the flag.
pub fn from_args(args: &Args) -> Result<Option<Mode>, CmdError> {
    let (mode, ext, moe) = (args.value("mode")?, args.value("ext")?, args.value("moe")?);
    if mode.is_none() && ext.is_none() && moe.is_none() {
        return Ok(None);
    }
    // Extended mode is the default (issue 16 §5): `--ext` or `--moe` alone means extended mode.
    let parsed = Mode::from_text(Some(mode.unwrap_or("extended")), ext).map_err(mode_error)?;
    let with_moe = parsed.with_moe_text(moe).map_err(|e| CmdError::Usage(format!("--moe: {e}")))?;
    Ok(Some(with_moe))
}

/// An error of `--mode` or `--ext`, named by its flag (`--ext` for a switch: `ext`, `ext.<key>`).
fn mode_error(e: fmperf_core::Error) -> CmdError {
    let flag = if e.path().is_some_and(|f| f.is_in("ext")) { "--ext" } else { "--mode" };
    CmdError::Usage(format!("{flag}: {e}"))
}

/// `--ext` as given (`None`: not given) for a command that sets it over a launch file's switches
/// (`estimate --from`, `search --from`), checked as `search` checks it — the same reading
/// ([`Mode::from_text`]) and the same messages ([`mode_error`]) — before any file is read.
pub fn ext_text(args: &Args) -> Result<Option<String>, CmdError> {
    let Some(text) = args.value("ext")? else { return Ok(None) };
    Mode::from_text(Some("extended"), Some(text)).map_err(mode_error)?;
    Ok(Some(text.to_string()))
}

/// An error of setting `--ext` over a launch file's switches, named by the flag when it is about
/// a switch (`ext`, `ext.<key>`); `None` for any other error.
pub fn ext_error(e: &fmperf_core::Error) -> Option<CmdError> {
    e.path().is_some_and(|f| f.is_in("ext")).then(|| CmdError::Usage(format!("--ext: {e}")))
}

/// The `--moe` section of a command's help: the Mixture-of-Experts switches.
pub fn moe_help() -> String {
    let mut s = String::from(
        "MIXTURE-OF-EXPERTS (extended mode, MoE models):\n  --moe KEY=VALUE,…  e.g. --moe load=forced,dispatcher=deepep:4,ep=32\n",
    );
    for (k, what) in fmperf_core::extended::moe::options::KEYS {
        s.push_str(&format!("  {k}: {what}\n"));
    }
    s
}

/// The values a switch takes, for `--help`.
fn values(kind: SwitchKind) -> String {
    match kind {
        SwitchKind::Toggle => "on|off".to_string(),
        SwitchKind::Choice(names) => names.join("|"),
        SwitchKind::Number { min, max, open_min, open_max } => {
            format!("{}{min}, {max}{}", if open_min { "(" } else { "[" }, if open_max { ")" } else { "]" })
        }
        SwitchKind::Count { min, max } => format!("{min}..{max}"),
        SwitchKind::CountOrAll => "all|N".to_string(),
    }
}

/// The `--mode`/`--ext` section of a command's help: every switch with its default and values.
pub fn help() -> String {
    let mut s = String::from(
        "MODE:
  --mode extended    extended mode (default): measured ceilings, fitted efficiencies, recomputation,
                     ZeRO/FSDP, interleaving, causal attention, GQA/SwiGLU, embeddings and head,
                     memory margin, weight sparsity; 2d (SUMMA) has no extended model
  --mode reference   the published model, bit-exact (the paper presets run in it by default)
  --ext KEY=VALUE,…  extended mode's switches that differ from the defaults (not with --mode reference),
                     e.g. --ext recompute=full,sharding=zero3,weight_sparsity=0.9
",
    );
    s.push_str(&switches_help());
    s
}

/// The `--ext` section of `fmperf estimate --help`: the flag over a launch file's switches, then
/// the same list of switches as [`help`]'s.
pub fn ext_help() -> String {
    let mut s = String::from(
        "SWITCHES OVER THE FILE'S:
  --ext KEY=VALUE,…  extended mode's switches set over what the file implied (each one noted as from
                     --ext), read as `fmperf search --ext` reads them, e.g. --ext recompute=full
",
    );
    s.push_str(&switches_help());
    s
}

/// Every switch with its default and values (`key = default [values]: what it models`), the one
/// list `--help` of `search`, `sweep` and `estimate` show.
fn switches_help() -> String {
    let defaults = fmperf_core::extended::ExtendedOptions::realistic();
    let mut s = String::from("SWITCHES (key = default [values]: what it models):\n");
    for sw in SWITCHES {
        let default = defaults.value_of(sw.key).unwrap_or_default();
        s.push_str(&format!("  {} = {default} [{}]: {}\n", sw.key, values(sw.kind), sw.what));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_switch() {
        let h = help();
        for sw in SWITCHES {
            assert!(h.contains(&format!("  {} = ", sw.key)), "{}", sw.key);
        }
        assert!(h.contains("weight_sparsity = 0 [[0, 1)]"), "{h}");
    }
}
