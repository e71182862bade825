//! One module per `fmperf` command.

// commands are added here
pub mod bench;
pub mod calibrate;
pub mod catalog;
pub mod check;
pub mod estimate;
pub mod from_flags;
pub mod models;
pub mod search;
pub mod search_from;
pub mod search_sensitivity;
pub mod show;
pub mod sweep;
pub mod validate;
pub mod validate_moe;
pub mod validate_ranking;

/// Why a command failed.
#[derive(Debug)]
pub enum CmdError {
    /// Bad input: printed as one line on stderr, exit code 2.
    Usage(String),
    /// Output could not be written.
    Io(std::io::Error),
}

impl From<std::io::Error> for CmdError {
    fn from(e: std::io::Error) -> Self {
        CmdError::Io(e)
    }
}

impl From<fmperf_core::Error> for CmdError {
    fn from(e: fmperf_core::Error) -> Self {
        CmdError::Usage(e.to_string())
    }
}

/// Result of a command.
pub type CmdResult = Result<(), CmdError>;

/// Parses a command's flags plus `--help`: prints `help` and returns `None` when help was asked
/// for; rejects positional arguments.
pub fn parse_flags(
    raw: Vec<String>,
    value_flags: &[&str],
    help: &str,
    out: &mut dyn std::io::Write,
) -> Result<Option<crate::args::Args>, CmdError> {
    parse_flags_with(raw, value_flags, &[], help, out)
}

/// [`parse_flags`] with flags that take no value (`bool_flags`, besides `--help`).
pub fn parse_flags_with(
    raw: Vec<String>,
    value_flags: &[&str],
    bool_flags: &[&str],
    help: &str,
    out: &mut dyn std::io::Write,
) -> Result<Option<crate::args::Args>, CmdError> {
    let bools: Vec<&str> = std::iter::once("help").chain(bool_flags.iter().copied()).collect();
    let args = crate::args::Args::parse(raw, value_flags, &bools)?;
    if args.flag("help") {
        write!(out, "{help}")?;
        return Ok(None);
    }
    if let Some(p) = args.positional().first() {
        return Err(CmdError::Usage(format!("unexpected argument `{p}`; see --help")));
    }
    if args.has_dashes() && args.values("from").is_empty() {
        return Err(CmdError::Usage(format!(
            "arguments after -- ({}) are a launch script's positional parameters: only `--from SCRIPT` takes them",
            if args.trailing().is_empty() { "none".to_string() } else { args.trailing().join(" ") }
        )));
    }
    Ok(Some(args))
}
