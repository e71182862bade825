//! Searches and sweeps split into jobs for the page's Web Workers, and their answers merged back.
//!
//! The split and the merge are the core's own: an explorer search runs as shards `i/n` of every
//! strategy's candidates ([`ExploreSearch::shard`], merged by [`ExploreSearch::merged`] into the
//! state of one run over every candidate), a sweep as contiguous chunks of its points
//! ([`Sweep::shard`], merged by [`Sweep::absorb`]). So the merged result equals the single-threaded
//! run's, field for field, whatever the number of workers (tested in `tests/jobs.rs`).
//!
//! A job carries its inputs as the page holds them — the scenario's fields or the sweep's text, the
//! mode's text, the user's own models and systems as documents of the versioned format — and the
//! worker resolves them with the same functions as the page ([`explore_spec`], [`sweep_spec`]).
//! Jobs and answers travel as JSON ([`Job::to_json`], [`run_json`], [`Answer::from_json`]);
//! numbers round-trip exactly (`serde_json` with `float_roundtrip`).

use fmperf_core::Error;
use fmperf_core::explore::{ExploreSearch, ExploreShard};
use fmperf_core::format::{self, Document};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::UserEntries;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};
use fmperf_core::resolve::sweep_spec::{Shard, SweepSpec};
use fmperf_core::sensitivity::{Base, Sensitivity};
use fmperf_core::sweep::{FoundPoint, Sweep, SweepResult, SweepText};
use serde::{Deserialize, Serialize};

use crate::batch::own_batch;

/// Chunks of a sweep per worker, the CLI's threads' rule (one home in core).
pub use fmperf_core::resolve::sweep_spec::CHUNKS_PER_WORKER;

/// Candidates a worker evaluates between two progress reports at most: small, so that progress
/// moves even where one candidate costs a millisecond (Mixture-of-Experts models choosing their
/// execution); the worker script passes on at most one report per 50 ms.
const STEP_UNITS: usize = 256;

/// The scenario as typed, resolved in `mode` against the catalogs and the user's `entries`:
/// numbers typed as `4k` or `1e12` read as such, an empty batch the model's own. The page and its
/// workers resolve with this one function.
pub fn explore_spec(f: &ExploreFields, mode: &Mode, entries: &UserEntries) -> Result<ExploreSpec, Vec<Error>> {
    let own = own_batch(&f.model).map(|b| b.0);
    let spec = crate::explorer::for_core(f, own).resolve_with(mode, entries)?;
    crate::explorer::check_budget(&spec, &f.budget).map_err(|e| vec![e])?;
    Ok(spec)
}

/// The sweep of `text` (as the studies view holds it, mode applied), with the user's own model and
/// system where it names them.
pub fn sweep_spec(text: &SweepText, entries: &UserEntries) -> Result<SweepSpec, Error> {
    let (m, s) = crate::studies::user_refs(text, entries);
    crate::studies::for_core(text).to_spec(m, s)
}

/// One piece of work for a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Shard `shard.0` of `shard.1` of the explorer's search of a scenario.
    Explore {
        /// The scenario as typed.
        fields: ExploreFields,
        /// The mode (`reference`/`extended`) and extended mode's switches, as text.
        mode: (Option<String>, Option<String>),
        /// Extended mode's Mixture-of-Experts switches that differ from the defaults, as text.
        #[serde(default)]
        moe: Option<String>,
        /// The user's models and systems, one versioned-format document each.
        entries: Vec<String>,
        /// `(index, count)`.
        shard: (u64, u64),
    },
    /// Chunk `chunk.0` of `chunk.1` (contiguous points) of a sweep.
    Sweep {
        /// The sweep as text, mode applied.
        text: SweepText,
        /// The user's models and systems, one versioned-format document each.
        entries: Vec<String>,
        /// `(index, count)`.
        chunk: (u64, u64),
    },
    /// Part `part.0` of `part.1` (every `part.1`-th point) of the sensitivity of the explorer's
    /// scenario ([`Sensitivity::part`]).
    Sensitivity {
        /// The scenario as typed.
        fields: ExploreFields,
        /// The mode and extended mode's switches, as text.
        mode: (Option<String>, Option<String>),
        /// Extended mode's Mixture-of-Experts switches that differ from the defaults, as text.
        #[serde(default)]
        moe: Option<String>,
        /// The user's models and systems, one versioned-format document each.
        entries: Vec<String>,
        /// `(index, count)`.
        part: (u64, u64),
    },
}

/// What a job found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// An explorer search's shard.
    Explore(ExploreShard),
    /// A sweep chunk's searched points.
    Sweep(Vec<FoundPoint>),
    /// A sensitivity part's searched points, by point index.
    Sensitivity(Vec<(usize, fmperf_core::sensitivity::Found)>),
}

impl Job {
    /// The job as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Runs the job to the end, reporting `(done, total)` candidates after every step.
    pub fn run(&self, mut progress: impl FnMut((u64, u64))) -> Result<Answer, String> {
        let text = |e: Vec<Error>| e.iter().map(Error::to_string).collect::<Vec<_>>().join("; ");
        match self {
            Job::Explore { fields, mode, moe, entries, shard } => {
                let mode = Mode::from_text(mode.0.as_deref(), mode.1.as_deref())
                    .and_then(|m| m.with_moe_text(moe.as_deref()))
                    .map_err(|e| e.to_string())?;
                let entries = entries_from_docs(entries)?;
                let spec = explore_spec(fields, &mode, &entries).map_err(text)?;
                let mut search =
                    ExploreSearch::new(spec).and_then(|s| s.shard(shard.0, shard.1)).map_err(|e| e.to_string())?;
                while !search.step(STEP_UNITS) {
                    progress(search.progress());
                }
                progress(search.progress());
                Ok(Answer::Explore(search.shard_state()))
            }
            Job::Sweep { text, entries, chunk } => {
                let entries = entries_from_docs(entries)?;
                let spec = sweep_spec(text, &entries).map_err(|e| e.to_string())?;
                let shard = Shard { index: chunk.0, count: chunk.1 };
                let mut sweep = Sweep::shard(spec, shard).map_err(|e| e.to_string())?;
                while !sweep.step(STEP_UNITS) {
                    progress(sweep.progress());
                }
                progress(sweep.progress());
                Ok(Answer::Sweep(sweep.found()))
            }
            Job::Sensitivity { fields, mode, moe, entries, part } => {
                let mode = Mode::from_text(mode.0.as_deref(), mode.1.as_deref())
                    .and_then(|m| m.with_moe_text(moe.as_deref()))
                    .map_err(|e| e.to_string())?;
                let entries = entries_from_docs(entries)?;
                let spec = explore_spec(fields, &mode, &entries).map_err(text)?;
                let mut run = Sensitivity::new(Base::of_explore(&spec))
                    .and_then(|s| s.part(part.0, part.1))
                    .map_err(|e| e.to_string())?;
                while !run.step(STEP_UNITS) {
                    progress(run.progress());
                }
                progress(run.progress());
                Ok(Answer::Sensitivity(run.found()))
            }
        }
    }
}

impl Answer {
    /// Reads what [`run_json`] wrote: the answer, or why the job failed.
    pub fn from_json(text: &str) -> Result<Answer, String> {
        serde_json::from_str::<Result<Answer, String>>(text).map_err(|e| format!("unreadable answer: {e}"))?
    }
}

/// Reads the compiled-in model and system catalogs (each once per module instance: what every
/// job resolves its scenario against first). A worker that calls this before its first job does
/// not spend that job's first moments on it (in the page's module, built for size, about a tenth
/// of an MoE search's shard).
pub fn warm() {
    let _ = fmperf_core::catalog::models();
    let _ = fmperf_core::catalog::systems();
}

/// A worker's entry: runs the job written by [`Job::to_json`] and returns its answer (or why it
/// failed) as JSON for [`Answer::from_json`].
pub fn run_json(job: &str, progress: impl FnMut((u64, u64))) -> String {
    let answer =
        serde_json::from_str::<Job>(job).map_err(|e| format!("unreadable job: {e}")).and_then(|j| j.run(progress));
    serde_json::to_string(&answer).unwrap_or_else(|e| format!("{{\"Err\":\"unwritable answer: {e}\"}}"))
}

/// The user's entries as documents of the versioned format.
pub fn entries_to_docs(entries: &UserEntries) -> Vec<String> {
    let models = entries.models.iter().map(|m| format::to_json(&Document::Model(m.clone())));
    let systems = entries.systems.iter().map(|s| format::to_json(&Document::System(s.clone())));
    models.chain(systems).collect()
}

/// Reads what [`entries_to_docs`] wrote.
pub fn entries_from_docs(docs: &[String]) -> Result<UserEntries, String> {
    let mut entries = UserEntries::none();
    for doc in docs {
        match format::parse(doc) {
            Ok(Document::Model(m)) => entries.models.push(m),
            Ok(Document::System(s)) => entries.systems.push(s),
            Ok(other) => return Err(format!("a user entry is a {}, not a model or system", other.kind())),
            Err(e) => return Err(e.iter().map(Error::to_string).collect::<Vec<_>>().join("; ")),
        }
    }
    Ok(entries)
}

/// The `count` shards of the explorer's search of `fields` (count ≥ 1).
pub fn explore_jobs(fields: &ExploreFields, mode: &Mode, entries: &UserEntries, count: u64) -> Vec<Job> {
    scenario_jobs(fields, mode, entries, count.max(1), |fields, mode, moe, entries, shard| Job::Explore {
        fields,
        mode,
        moe,
        entries,
        shard,
    })
}

/// `count` jobs on the explorer's scenario as typed, `make(fields, mode texts, MoE switches text,
/// entries, (i, count))`
/// each.
fn scenario_jobs(
    fields: &ExploreFields,
    mode: &Mode,
    entries: &UserEntries,
    count: u64,
    make: fn(ExploreFields, (Option<String>, Option<String>), Option<String>, Vec<String>, (u64, u64)) -> Job,
) -> Vec<Job> {
    let docs = entries_to_docs(entries);
    (0..count)
        .map(|i| {
            make(
                fields.clone(),
                (mode.mode_text(), mode.ext_text()),
                crate::explorer::moe_keys::moe_text_of(mode),
                docs.clone(),
                (i, count),
            )
        })
        .collect()
}

/// The chunks of the sweep of `text` for `workers` workers: [`CHUNKS_PER_WORKER`] per worker, at
/// most one per point.
pub fn sweep_jobs(text: &SweepText, entries: &UserEntries, points: usize, workers: usize) -> Vec<Job> {
    let count = (workers.max(1) * CHUNKS_PER_WORKER).clamp(1, points.max(1)) as u64;
    let docs = entries_to_docs(entries);
    (0..count).map(|i| Job::Sweep { text: text.clone(), entries: docs.clone(), chunk: (i, count) }).collect()
}

/// The explorer's search of `spec` finished with the answers of its shards, in shard order: the
/// state of one run over every candidate.
pub fn merge_explore(spec: ExploreSpec, answers: Vec<Answer>) -> Result<ExploreSearch, String> {
    let parts: Vec<ExploreShard> = answers
        .into_iter()
        .map(|a| match a {
            Answer::Explore(s) => Ok(s),
            _ => Err("another job's answer to a search".to_string()),
        })
        .collect::<Result<_, _>>()?;
    ExploreSearch::merged(spec, &parts).map_err(|e| e.to_string())
}

/// The sweep of `spec` finished with the answers of its chunks (any order).
pub fn merge_sweep(spec: SweepSpec, answers: Vec<Answer>) -> Result<SweepResult, String> {
    let mut found = Vec::new();
    for a in answers {
        match a {
            Answer::Sweep(points) => found.extend(points),
            _ => return Err("another job's answer to a sweep".to_string()),
        }
    }
    Sweep::new(spec).and_then(|s| s.absorb(found)).map_err(|e| e.to_string())
}

/// The sensitivity of the explorer's scenario split into `workers` parts (at most one per point).
pub fn sensitivity_jobs(fields: &ExploreFields, mode: &Mode, entries: &UserEntries, workers: u64) -> Vec<Job> {
    let count = workers.clamp(1, fmperf_core::sensitivity::POINTS as u64);
    scenario_jobs(fields, mode, entries, count, |fields, mode, moe, entries, part| Job::Sensitivity {
        fields,
        mode,
        moe,
        entries,
        part,
    })
}

/// The sensitivity of `spec` finished with its parts' answers (any order): the single run's.
pub fn merge_sensitivity(spec: &ExploreSpec, answers: Vec<Answer>) -> Result<Sensitivity, String> {
    let mut found = Vec::new();
    for a in answers {
        match a {
            Answer::Sensitivity(points) => found.extend(points),
            _ => return Err("another job's answer to a sensitivity".to_string()),
        }
    }
    Sensitivity::new(Base::of_explore(spec)).and_then(|s| s.absorb(found)).map_err(|e| e.to_string())
}
