//! `fmperf`: the command-line face of fmperf-core. Only this crate knows about argv, files and stdout.

fn main() {
    std::process::exit(fmperf_cli::run(std::env::args().skip(1).collect()));
}
