//! Running a sweep on every core: `--threads N` (default: the cores available to the process).
//!
//! The core stays single-threaded (it must also run in a browser); the CLI splits the sweep (or
//! the `--shard i/n` asked for) into contiguous chunks with the core's own sharding, runs the
//! chunks on `N` std threads (each thread takes the next chunk not yet taken), and hands the
//! finished chunks back **in sweep order**. A point's result does not depend on which other points
//! share its run (the sweep's evaluator reuse is bit-identical to a fresh search), and the chunks
//! of shard `i/n` are shards `i·k+j / n·k` (`j < k`) of the whole sweep, which tile `i/n` exactly
//! (the core's shard boundaries are `⌊points·index/count⌋`); so the output is byte-identical to the
//! single-threaded run's, whatever `N` (tested in `crates/cli/tests/cli_sweep.rs`).
//!
//! Chunks also bound the memory of a large sweep: CSV and JSON Lines are written chunk by chunk,
//! and workers run at most a few chunks ahead of the one being written.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

use fmperf_core::Error;
use fmperf_core::resolve::sweep_spec::{Shard, SweepSpec};
use fmperf_core::sweep::{Sweep, SweepResult};

use crate::args::Args;
use crate::cmd::CmdError;

/// Most threads accepted by `--threads`.
pub const MAX_THREADS: usize = 1024;
/// Points per chunk at most (so a million-point sweep streams out in ~4,000-point pieces).
const CHUNK_POINTS: usize = 4096;
/// How many chunks the workers may run ahead of the next chunk to be written, per thread.
const AHEAD_PER_THREAD: usize = 4;
/// Candidates evaluated between two looks at the cancel flag.
const STEP_CANDIDATES: usize = 1 << 16;

/// Help text of `--threads`, for the commands that take it.
pub const HELP: &str = "\
  --threads N     run the points on N threads (default: every core available; 1 = single-threaded);
                  the output is the same, byte for byte, in the same order, for any N
";

/// The cores available to this process (1 when unknown).
pub fn available() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The thread count of `--threads` (default [`available`]); an integer from 1 to [`MAX_THREADS`].
pub fn from_args(args: &Args) -> Result<usize, CmdError> {
    match args.value("threads")? {
        None => Ok(available()),
        Some(text) => text.trim().parse::<usize>().ok().filter(|n| (1..=MAX_THREADS).contains(n)).ok_or_else(|| {
            CmdError::Usage(format!(
                "--threads {text}: must be an integer from 1 to {MAX_THREADS} (default: the cores available, here {})",
                available()
            ))
        }),
    }
}

/// The chunks of `shard` of a sweep of `points` points for `threads` threads: shards of the whole
/// sweep that tile `shard` in order.
pub fn chunks(shard: Shard, points: usize, threads: usize) -> Vec<Shard> {
    let own = shard.range(points).len();
    let mut k = own.div_ceil(CHUNK_POINTS);
    if threads > 1 {
        k = k.max(threads.saturating_mul(fmperf_core::resolve::sweep_spec::CHUNKS_PER_WORKER));
    }
    let k = k.clamp(1, own.max(1)) as u64;
    match shard.count.checked_mul(k) {
        Some(count) => (0..k).map(|j| Shard { index: shard.index * k + j, count }).collect(),
        None => vec![shard],
    }
}

/// Which chunks are taken and written, shared by the workers and the writer.
struct Progress {
    next: usize,
    written: usize,
    stop: bool,
}

/// Runs `shard` of the sweep `spec` on `threads` threads and calls `emit` with each chunk's result
/// in sweep order (on the calling thread). Stops at the first error: a spec error (the same for
/// every chunk, so nothing is emitted before it) or an error of `emit` (e.g. a closed pipe).
pub fn run_sweep(
    spec: &SweepSpec,
    shard: Shard,
    threads: usize,
    mut emit: impl FnMut(SweepResult) -> Result<(), CmdError>,
) -> Result<(), CmdError> {
    spec.validate()?;
    let parts = chunks(shard, spec.point_count(), threads);
    let threads = threads.clamp(1, parts.len());
    if let Some(line) = estimate(spec, shard, threads)? {
        eprintln!("{line}");
    }
    if threads == 1 {
        for part in parts {
            emit(Sweep::shard(spec.clone(), part)?.finish())?;
        }
        return Ok(());
    }
    let ahead = threads * AHEAD_PER_THREAD;
    let state = Mutex::new(Progress { next: 0, written: 0, stop: false });
    let wake = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, Result<SweepResult, Error>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (state, wake, parts) = (&state, &wake, &parts);
            scope.spawn(move || {
                loop {
                    let j = {
                        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                        while !s.stop && s.next < parts.len() && s.next >= s.written + ahead {
                            s = wake.wait(s).unwrap_or_else(|p| p.into_inner());
                        }
                        if s.stop || s.next >= parts.len() {
                            return;
                        }
                        s.next += 1;
                        s.next - 1
                    };
                    let result = Sweep::shard(spec.clone(), parts[j]).map(|mut sweep| {
                        while !sweep.step(STEP_CANDIDATES) {
                            if state.lock().map(|s| s.stop).unwrap_or(true) {
                                break;
                            }
                        }
                        sweep.finish()
                    });
                    if tx.send((j, result)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let outcome = write_in_order(rx, parts.len(), &state, &wake, &mut emit);
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        s.stop = true;
        wake.notify_all();
        drop(s);
        outcome
    })
}

/// Sweeps of at least this many points (of the shard run) say their size and an estimate first.
pub const LARGE_SWEEP_POINTS: usize = 1000;
/// The estimate times the sweep's first points until this long [s] …
const PROBE_SECONDS: f64 = 0.25;
/// … or this many points (they are run again with the rest: the probe costs at most that).
const PROBE_POINTS: usize = 32;

/// For a large sweep (at least [`LARGE_SWEEP_POINTS`] points in `shard`): one line saying its point
/// count and about how long it will take on `threads` threads, from the time of its first points
/// (run once before the sweep starts, each alone). `None` for a smaller sweep.
pub fn estimate(spec: &SweepSpec, shard: Shard, threads: usize) -> Result<Option<String>, CmdError> {
    let points = spec.point_count();
    let range = shard.range(points);
    if range.len() < LARGE_SWEEP_POINTS {
        return Ok(None);
    }
    let start = std::time::Instant::now();
    let mut timed = 0;
    while timed < PROBE_POINTS.min(range.len()) && start.elapsed().as_secs_f64() < PROBE_SECONDS {
        // The one point at `range.start + timed`: shard `i / points` of the whole is point i.
        let one = Shard { index: (range.start + timed) as u64, count: points as u64 };
        Sweep::shard(spec.clone(), one)?.finish();
        timed += 1;
    }
    let per_point = start.elapsed().as_secs_f64() / timed.max(1) as f64;
    let total = per_point * range.len() as f64 / threads.max(1) as f64;
    let about = if total < 90.0 {
        format!("{total:.0} s")
    } else if total < 5400.0 {
        format!("{:.0} min", total / 60.0)
    } else {
        format!("{:.1} h", total / 3600.0)
    };
    Ok(Some(format!(
        "fmperf: sweep: {} points on {threads} thread{}, about {about} ({:.3} s per point, timed on the first {timed}); \
         --shard i/n splits it across machines",
        thousands(range.len()),
        if threads == 1 { "" } else { "s" },
        per_point
    )))
}

/// `n` with thousands separated by commas (250,000).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Receives finished chunks and emits them in order, telling the workers how far writing got.
fn write_in_order(
    rx: mpsc::Receiver<(usize, Result<SweepResult, Error>)>,
    count: usize,
    state: &Mutex<Progress>,
    wake: &Condvar,
    emit: &mut impl FnMut(SweepResult) -> Result<(), CmdError>,
) -> Result<(), CmdError> {
    let mut waiting: BTreeMap<usize, Result<SweepResult, Error>> = BTreeMap::new();
    let mut written = 0;
    while written < count {
        let Ok((j, r)) = rx.recv() else {
            return Err(CmdError::Usage("a sweep thread stopped before finishing its points".into()));
        };
        waiting.insert(j, r);
        while let Some(r) = waiting.remove(&written) {
            emit(r?)?;
            written += 1;
            state.lock().unwrap_or_else(|p| p.into_inner()).written = written;
            wake.notify_all();
        }
    }
    Ok(())
}

/// The chunks' results as one result of the whole shard (for the table and the comparisons).
pub fn merge(parts: Vec<SweepResult>) -> Option<SweepResult> {
    let mut it = parts.into_iter();
    let mut all = it.next()?;
    for p in it {
        all.range.end = p.range.end;
        all.points.extend(p.points);
        all.candidates += p.candidates;
    }
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_tile_the_shard_in_order() {
        for points in [0, 1, 2, 7, 100, 4097, 10_000] {
            for shard in [Shard::WHOLE, Shard { index: 0, count: 3 }, Shard { index: 2, count: 3 }] {
                for threads in [1, 2, 3, 16] {
                    let parts = chunks(shard, points, threads);
                    let ranges: Vec<_> = parts.iter().map(|p| p.range(points)).collect();
                    assert_eq!(ranges.first().unwrap().start, shard.range(points).start);
                    assert_eq!(ranges.last().unwrap().end, shard.range(points).end);
                    for w in ranges.windows(2) {
                        assert_eq!(w[0].end, w[1].start, "{points} points, {shard:?}, {threads} threads");
                    }
                    assert!(ranges.iter().all(|r| r.len() <= CHUNK_POINTS));
                    if threads > 1
                        && shard.range(points).len() >= threads * fmperf_core::resolve::sweep_spec::CHUNKS_PER_WORKER
                    {
                        assert!(parts.len() >= threads * fmperf_core::resolve::sweep_spec::CHUNKS_PER_WORKER);
                    }
                }
            }
        }
    }

    #[test]
    fn threads_flag_is_checked() {
        let parse = |v: &str| from_args(&Args::parse(vec!["--threads".into(), v.into()], &["threads"], &[]).unwrap());
        assert_eq!(parse("3").ok(), Some(3));
        for bad in ["0", "-1", "two", "100000"] {
            match parse(bad) {
                Err(CmdError::Usage(m)) => assert!(m.contains("--threads") && m.contains(bad), "{m}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert_eq!(from_args(&Args::default()).ok(), Some(available()));
    }
}
