//! The flags of the `--from FILE` routes (`fmperf search --from`, `fmperf estimate --from`), one
//! table per route: each flag the command's parser accepts is either applied over the file's
//! value or refused with the rule, never accepted and ignored (the project's "never a silent
//! guess"). [`check`] refuses what a route's table refuses, and a flag its table does not list;
//! the CLI test `cli_from_flags` walks the tables against the parsers and checks that the route
//! reads every flag it says it applies ([`crate::args::Args::unread`]).

use super::CmdError;
use crate::args::Args;

/// What a `--from` route does with a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromUse {
    /// Read by the route: over the file's value, or as the output's, search's or input's setting.
    Applied,
    /// Refused with `--from`: the reason and what to do instead.
    Refused(&'static str),
}

/// The flags of `fmperf search --from FILE` (every flag of `fmperf search`'s parser).
pub const SEARCH_FROM: &[(&str, FromUse)] = &[
    ("from", FromUse::Applied),
    // The model's config.json, read with the launch files.
    ("model", FromUse::Applied),
    // Over the file's values.
    ("system", FromUse::Applied),
    ("gpus", FromUse::Applied),
    ("global-batch", FromUse::Applied),
    ("seq-len", FromUse::Applied),
    ("ext", FromUse::Applied),
    ("moe", FromUse::Applied),
    // `extended` only: `--mode reference` is refused where it is read (the file's switches are
    // extended mode's).
    ("mode", FromUse::Applied),
    // The search's settings: one strategy, the list's length, worker threads, and the execution
    // choices it may make (the file's fixed unless a flag frees or fixes one).
    ("strategy", FromUse::Applied),
    ("top", FromUse::Applied),
    ("threads", FromUse::Applied),
    ("recompute", FromUse::Applied),
    ("sharding", FromUse::Applied),
    ("shard-group", FromUse::Applied),
    ("interleave", FromUse::Applied),
    ("cp", FromUse::Applied),
    ("mbs", FromUse::Applied),
    // Output.
    ("format", FromUse::Applied),
    ("emit", FromUse::Applied),
    ("calibration", FromUse::Applied),
    (
        "domain",
        FromUse::Refused(
            "the scale-up domain is the system's: give it in the system spec, --system ID,domain=K \
             (`fmperf catalog systems`)",
        ),
    ),
    (
        "sensitivity",
        FromUse::Refused(
            "--sensitivity searches a scenario given by flags, not a file: give --model, --system, --gpus and \
             --global-batch",
        ),
    ),
    (
        "tokens",
        FromUse::Refused(
            "search --from does not price the whole run: `fmperf estimate --from FILE --tokens N` prices the \
             file's layout, `fmperf search --model … --tokens N` each configuration",
        ),
    ),
    (
        "samples",
        FromUse::Refused(
            "search --from does not price the whole run: `fmperf estimate --from FILE --samples N` prices the \
             file's layout, `fmperf search --model … --samples N` each configuration",
        ),
    ),
    (
        "price-per-device-hour",
        FromUse::Refused(
            "search --from does not price the whole run: `fmperf estimate --from FILE` takes it with --tokens \
             or --samples",
        ),
    ),
];

/// The flags of `fmperf estimate --from FILE` (every flag of its parser): all applied.
pub const ESTIMATE_FROM: &[(&str, FromUse)] = &[
    ("from", FromUse::Applied),
    ("model", FromUse::Applied),
    ("system", FromUse::Applied),
    ("gpus", FromUse::Applied),
    ("global-batch", FromUse::Applied),
    ("seq-len", FromUse::Applied),
    ("ext", FromUse::Applied),
    ("format", FromUse::Applied),
    ("calibration", FromUse::Applied),
    ("tokens", FromUse::Applied),
    ("samples", FromUse::Applied),
    ("price-per-device-hour", FromUse::Applied),
];

/// Refuses the flags given in `args` that `table` (the route `route`, e.g. `search --from`)
/// refuses, naming the flag and the rule, and any flag `table` does not list (a flag added to the
/// parser and not yet to the route's table is an error, not ignored).
pub fn check(args: &Args, route: &str, table: &[(&str, FromUse)]) -> Result<(), CmdError> {
    for name in args.given() {
        match table.iter().find(|(flag, _)| *flag == name) {
            Some((_, FromUse::Applied)) => {}
            Some((_, FromUse::Refused(why))) => {
                return Err(CmdError::Usage(format!("--{name} with `{route}`: {why}")));
            }
            None => {
                return Err(CmdError::Usage(format!(
                    "--{name}: `{route}` has no rule for this flag (neither applied nor refused): drop it"
                )));
            }
        }
    }
    Ok(())
}
