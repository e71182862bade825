//! fmperf-cli: argument handling and output formatting for the `fmperf` binary.
//!
//! Every command is a module under [`cmd`]: it parses its flags with [`args::Args`], calls
//! fmperf-core, and writes a table, JSON or CSV to the given writer. Exit codes: 0 success, 2 bad
//! input (one clear line on stderr), 1 internal failure (writing output).

pub mod args;
pub mod cmd;
pub mod files;
pub mod inputs;
pub mod mode;
pub mod model_files;
pub mod run_cost;
pub mod table;
pub mod threads;

use std::io::Write;

/// Exit code for bad input (flags, files, names).
pub const EXIT_USAGE: i32 = 2;

/// The top-level help text.
pub const HELP: &str = "\
fmperf — training performance of foundation models (the model of fmperf's web page, headless)

USAGE: fmperf <COMMAND> [FLAGS]

COMMANDS:
  models                      the reference's models: parameters and training FLOPs per sample
  search                      the fastest parallel configurations that fit in memory
  estimate --from FILE        time and memory of the configuration in your launch script / YAML / TOML
  calibrate --from FILE       your measured run (log lines or numbers) → the constants of your stack (JSON)
  validate --data FILE.json   predicted vs measured for measured training runs (both modes)
  sweep                       vary devices, domain, system parameters, batch, …; the papers' presets
  bench                       time the searches of a fixed suite (candidates per second)
  catalog models|systems      the catalogs: every model and system with units and sources
  show <ID|FILE>              one model or system: every field with unit, meaning and source
  check FILE.json             validate a model, system or scenario file and explain each problem
  help                        this text

Run `fmperf <COMMAND> --help` for a command's flags.
";

/// Runs the CLI with `args` (without the program name), writing to stdout/stderr; returns the exit code.
pub fn run(args: Vec<String>) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    // Rust's standard output swallows writes to a closed descriptor (`fmperf help >&-`) as if they
    // had succeeded; every command writes its result there, so a closed one is a failed write.
    if !stdout_is_open(&stdout) {
        let _ = writeln!(stderr.lock(), "fmperf: cannot write output: standard output is closed");
        return 1;
    }
    run_with(args, &mut stdout.lock(), &mut stderr.lock())
}

/// Whether standard output was open when the program started. Rust's runtime reopens a closed
/// standard descriptor on `/dev/null` before `main` (read-write, which no shell redirection
/// does), so on Linux a standard output that is `/dev/null` opened read-write was closed
/// (`fmperf help >&-`); `> /dev/null` (write-only) is a chosen destination and stays fine.
#[cfg(target_os = "linux")]
fn stdout_is_open(_: &std::io::Stdout) -> bool {
    let null = std::fs::read_link("/proc/self/fd/1").is_ok_and(|p| p == std::path::Path::new("/dev/null"));
    let read_write = std::fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| {
        info.lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            .is_some_and(|flags| flags & 0o3 == 0o2)
    });
    !(null && read_write)
}

#[cfg(not(target_os = "linux"))]
fn stdout_is_open(_: &std::io::Stdout) -> bool {
    true
}

/// Runs the CLI writing to the given streams (used by tests).
pub fn run_with(args: Vec<String>, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let (command, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r.to_vec()),
        None => ("help", Vec::new()),
    };
    // `help COMMAND` is `COMMAND --help`.
    let (command, rest) = match (command, rest.as_slice()) {
        ("help", [topic]) if topic != "help" => (topic.as_str(), vec!["--help".to_string()]),
        _ => (command, rest),
    };
    let result = match command {
        "help" | "--help" | "-h" if rest.is_empty() || rest == ["help"] => {
            write!(out, "{HELP}").map_err(cmd::CmdError::Io)
        }
        "help" | "--help" | "-h" => {
            Err(cmd::CmdError::Usage(format!("help takes one command name, got `{}`", rest.join(" "))))
        }
        "--version" | "-V" => writeln!(out, "fmperf {}", env!("CARGO_PKG_VERSION")).map_err(cmd::CmdError::Io),
        "bench" => cmd::bench::run(rest, out),
        "catalog" => cmd::catalog::run(rest, out),
        "check" => cmd::check::run(rest, out),
        "show" => cmd::show::run(rest, out),
        "models" => cmd::models::run(rest, out),
        "search" => cmd::search::run(rest, out),
        "estimate" => cmd::estimate::run(rest, out),
        "calibrate" => cmd::calibrate::run(rest, out),
        "validate" => cmd::validate::run(rest, out),
        "sweep" => cmd::sweep::run(rest, out),
        other => Err(cmd::CmdError::Usage(format!("unknown command `{other}`; run `fmperf help` for the list"))),
    };
    // What is still buffered is written now, so a full disk or a closed pipe is an error too.
    let result = result.and_then(|()| out.flush().map_err(cmd::CmdError::Io));
    match result {
        Ok(()) => 0,
        Err(cmd::CmdError::Usage(msg)) => {
            let _ = writeln!(err, "fmperf: {msg}");
            EXIT_USAGE
        }
        Err(cmd::CmdError::Io(e)) => {
            let _ = writeln!(err, "fmperf: cannot write output: {e}");
            1
        }
    }
}
