//! The mode flags shared by `fmperf search` and `fmperf sweep`: `--mode reference|extended` and
//! `--ext key=value,…` (extended mode's switches that differ from the defaults, the text form of
//! [`fmperf_core::extended::switches`]; the page's `ext` URL key holds the same text), and the list
//! of switches for `--help`, generated from the switches themselves.

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
    let parsed = Mode::from_text(Some(mode.unwrap_or("extended")), ext).map_err(|e| {
        let flag = if e.path().is_some_and(|f| f.is_in("ext")) { "--ext" } else { "--mode" };
        CmdError::Usage(format!("{flag}: {e}"))
    })?;
    match (parsed, moe) {
        (m, None) => Ok(Some(m)),
        (Mode::Extended(mut o), Some(text)) => {
            o.moe = o.moe.with_text(text).map_err(|e| CmdError::Usage(format!("--moe: {e}")))?;
            Ok(Some(Mode::Extended(o)))
        }
        (_, Some(_)) => Err(CmdError::Usage("--moe: Mixture-of-Experts switches need --mode extended".into())),
    }
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
    let defaults = fmperf_core::extended::ExtendedOptions::realistic();
    let mut s = String::from(
        "MODE:
  --mode extended    extended mode (default): measured ceilings, fitted efficiencies, recomputation,
                     ZeRO/FSDP, interleaving, causal attention, GQA/SwiGLU, embeddings and head,
                     memory margin, weight sparsity; 2d (SUMMA) has no extended model
  --mode reference   the published model, bit-exact (the paper presets run in it by default)
  --ext KEY=VALUE,…  extended mode's switches that differ from the defaults (not with --mode reference),
                     e.g. --ext recompute=full,sharding=zero3,weight_sparsity=0.9
SWITCHES (key = default [values]: what it models):
",
    );
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
