//! One module per `fmperf` command.

// commands are added here
pub mod models;

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
