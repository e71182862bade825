//! The resumable sweep: points grouped into jobs (points that differ only in configuration
//! restrictions share one pass over the candidates), a planning pass that sizes every job's
//! search space (so progress is exact once planned), then the evaluation, a bounded number of
//! candidates per [`Sweep::step`].
//!
//! Speed: every candidate is evaluated with the search's evaluator of the sweep's mode (the
//! mode's model from [`crate::cost::Pricer`]); evaluators are reused
//! between consecutive jobs with the same model, system, strategy and batch (e.g. along a device
//! axis), so blocks already priced are not priced again. Results are bit-identical to
//! [`crate::search::Search`] in the same mode.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use super::result::{PointResult, Status, StrategyOutcome};
use crate::cost::ExtendedSetup;
use crate::resolve::point::{PointInputs, PointLabels, Unresolved, resolve_point};
use crate::resolve::sweep_axis::AxisValue;
use crate::resolve::sweep_spec::{Shard, SweepSpec};
use crate::search::{Engine, Ranked, Space, TopK};
use crate::vocab::{MAX_DEVICES, MAX_GLOBAL_BATCH};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// Work units a planning step (building one search space to count it) is worth, in candidates.
const PLAN_UNITS: usize = 128;
/// Evaluators kept for reuse.
const EVALUATOR_CACHE: usize = 6;

/// One point waiting in a job.
#[derive(Debug, Clone)]
struct Member {
    local: usize,
    values: Vec<AxisValue>,
    labels: PointLabels,
    inputs: PointInputs,
    outcomes: Vec<StrategyOutcome>,
    top: Vec<TopK>,
}

/// Points with the same model shape, system, strategies, device count and batch.
#[derive(Debug, Clone)]
struct Job {
    members: Vec<Member>,
    /// Candidates per strategy, once planned.
    sizes: Option<Vec<u64>>,
    /// Candidates walked so far (every strategy's space).
    walked: u64,
}

impl Job {
    fn inputs(&self) -> &PointInputs {
        &self.members[0].inputs
    }

    /// The space of strategy `s`, by the search's rule (`search::widen::search_space`: partial
    /// domains, never fewer devices).
    fn space(&self, s: usize) -> Space {
        let i = self.inputs();
        let uneven = i.extended.as_ref().map(|e| e.options.uneven_stages);
        let (n, g) = (i.devices, i.global_batch);
        crate::search::widen::search_space(i.strategies[s], &i.shape, i.params.domain_size, n, g, uneven, false).0
    }
}

/// What makes two points share a job.
fn same_job(a: &PointInputs, b: &PointInputs) -> bool {
    a.shape == b.shape
        && a.params == b.params
        && a.strategies == b.strategies
        && a.devices == b.devices
        && a.global_batch == b.global_batch
        && a.extended == b.extended
}

/// The bucket of a point's job: a typed hash of part of what [`same_job`] compares (the axes a
/// sweep varies: shape, strategies, devices, batch, the system's rates by their bits, extended
/// mode's workload and weight sparsity). Two points of one job always share a bucket;
/// [`same_job`] tells the points of a bucket apart, so a field left out costs comparisons, never
/// a wrong merge.
fn job_hash(i: &PointInputs) -> u64 {
    let mut h = DefaultHasher::new();
    (i.shape, &i.strategies, i.devices, i.global_batch, i.params.domain_size).hash(&mut h);
    let p = &i.params;
    for x in
        [p.matrix_flops_fp16, p.vector_flops_fp16, p.hbm_bandwidth, p.hbm_capacity, p.nvlink_bandwidth, p.ib_bandwidth]
    {
        x.to_bits().hash(&mut h);
    }
    i.extended.as_ref().map(|e| (e.workload, e.options.model.weight_sparsity.to_bits())).hash(&mut h);
    h.finish()
}

/// An evaluator with what it was built for.
#[derive(Debug, Clone)]
struct CachedEvaluator {
    shape: ModelShape,
    params: SystemParams,
    strategy: Strategy,
    global_batch: u64,
    extended: Option<ExtendedSetup>,
    engine: Engine,
}

/// Where the evaluation stands.
#[derive(Debug, Clone)]
struct Cursor {
    job: usize,
    strategy: usize,
    space: Option<Space>,
    position: (usize, usize),
}

/// A sweep in progress (see the module documentation).
#[derive(Debug, Clone)]
pub struct Sweep {
    spec: SweepSpec,
    range: Range<usize>,
    jobs: Vec<Job>,
    planned: usize,
    planned_candidates: u64,
    done_candidates: u64,
    cursor: Cursor,
    results: Vec<Option<PointResult>>,
    /// Candidates walked by the job of each searched point (by local index; 0 otherwise).
    walked: Vec<u64>,
    evaluators: Vec<CachedEvaluator>,
}

/// A searched point of a finished sweep shard: what its search found, without what the point's
/// resolution gives (axis values, labels, inputs), which [`Sweep::absorb`] recomputes where the
/// sweep started. Serialisable: shards run in the page's Web Workers.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FoundPoint {
    /// Position in the whole sweep.
    pub index: usize,
    /// Feasible or why not.
    pub status: Status,
    /// Why the point has no configuration, in words.
    pub reason: Option<String>,
    /// The fastest feasible configuration.
    pub best: Option<super::result::Best>,
    /// The search of every strategy.
    pub per_strategy: Vec<StrategyOutcome>,
    /// Candidates walked by the pass over the point's search spaces (shared by the points that
    /// differ only in configuration restrictions) [count].
    pub walked: u64,
}

impl Sweep {
    /// A sweep of every point of `spec`.
    pub fn new(spec: SweepSpec) -> Result<Sweep, Error> {
        Sweep::shard(spec, Shard::WHOLE)
    }

    /// The part `shard` of the sweep of `spec` (a contiguous range of its points). Resolves every
    /// point (catalog look-ups and mappings, no search); spec-level problems (bad axes) are errors,
    /// point-level ones become results with their reason.
    pub fn shard(spec: SweepSpec, shard: Shard) -> Result<Sweep, Error> {
        spec.validate()?;
        let range = shard.range(spec.point_count());
        let mut results: Vec<Option<PointResult>> = vec![None; range.len()];
        let mut jobs: Vec<Job> = Vec::new();
        let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
        for (local, index) in range.clone().enumerate() {
            let coords = spec.coords(index);
            let values: Vec<AxisValue> = spec.axes.iter().zip(&coords).map(|(a, &i)| a.values[i].clone()).collect();
            let refs: Vec<&AxisValue> = values.iter().collect();
            let (labels, resolved) = resolve_point(&spec, &refs);
            let inputs = match resolved.and_then(check_sizes) {
                Ok(inputs) => inputs,
                Err(u) => {
                    let status = match u {
                        Unresolved::Invalid(_) => Status::Invalid,
                        Unresolved::Unsupported(_) => Status::Unsupported,
                    };
                    let reason = u.reason();
                    results[local] = Some(PointResult {
                        index,
                        values,
                        labels,
                        inputs: None,
                        status,
                        reason: Some(reason),
                        best: None,
                        per_strategy: Vec::new(),
                        mode: spec.mode,
                    });
                    continue;
                }
            };
            let member = Member {
                local,
                values,
                labels,
                outcomes: inputs.strategies.iter().map(|&s| StrategyOutcome::empty(s)).collect(),
                top: inputs.strategies.iter().map(|_| TopK::new(1)).collect(),
                inputs,
            };
            let slot = by_hash.entry(job_hash(&member.inputs)).or_default();
            match slot.iter().copied().find(|&j| same_job(jobs[j].inputs(), &member.inputs)) {
                Some(j) => jobs[j].members.push(member),
                None => {
                    slot.push(jobs.len());
                    jobs.push(Job { members: vec![member], sizes: None, walked: 0 });
                }
            }
        }
        Ok(Sweep {
            spec,
            range,
            jobs,
            planned: 0,
            planned_candidates: 0,
            done_candidates: 0,
            cursor: Cursor { job: 0, strategy: 0, space: None, position: (0, 0) },
            walked: vec![0; results.len()],
            results,
            evaluators: Vec::new(),
        })
    }

    /// Runs to the end and returns what every searched point found (points whose inputs did not
    /// resolve are left out: their result needs no search).
    pub fn found(mut self) -> Vec<FoundPoint> {
        while !self.step(1 << 20) {}
        let walked = self.walked;
        self.results
            .into_iter()
            .zip(walked)
            .filter_map(|(r, walked)| {
                let r = r.filter(|r| r.inputs.is_some())?;
                let PointResult { index, status, reason, best, per_strategy, .. } = r;
                Some(FoundPoint { index, status, reason, best, per_strategy, walked })
            })
            .collect()
    }

    /// This sweep (or shard), not stepped, finished with what its points' searches found
    /// elsewhere (the [`FoundPoint`]s of shards covering its range, in any order): the result of
    /// running it here, point for point, the candidates walked counted once per pass as one run
    /// walks them. An error names the first point no shard found.
    pub fn absorb(self, found: Vec<FoundPoint>) -> Result<SweepResult, Error> {
        if self.planned != 0 || self.done_candidates != 0 {
            return Err(Error::invalid(
                "shard",
                "(a stepped sweep)",
                "only a sweep not yet run can take shards' results",
            ));
        }
        let mut by_index: HashMap<usize, FoundPoint> = found.into_iter().map(|f| (f.index, f)).collect();
        let mut results = self.results;
        let mut candidates = 0u64;
        for job in self.jobs {
            let mut pass = None;
            for m in job.members {
                let index = self.range.start + m.local;
                let f = by_index
                    .remove(&index)
                    .ok_or_else(|| Error::invalid("shard", index, "no shard found this point"))?;
                if *pass.get_or_insert(f.walked) != f.walked {
                    return Err(Error::invalid("shard", index, "shards walked different spaces for one pass"));
                }
                let mode = m.inputs.mode();
                results[m.local] = Some(PointResult {
                    index,
                    values: m.values,
                    labels: m.labels,
                    inputs: Some(m.inputs),
                    status: f.status,
                    reason: f.reason,
                    best: f.best,
                    per_strategy: f.per_strategy,
                    mode,
                });
            }
            candidates += pass.unwrap_or(0);
        }
        let points: Option<Vec<PointResult>> = results.into_iter().collect();
        let points = points.ok_or_else(|| Error::invalid("shard", "(missing point)", "every point needs a result"))?;
        Ok(SweepResult { spec: self.spec, range: self.range, points, candidates })
    }

    /// The spec.
    pub fn spec(&self) -> &SweepSpec {
        &self.spec
    }

    /// The indices of the points of this sweep (or shard) in the whole sweep.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// Does about `budget` units of work (one unit ≈ one candidate evaluated); returns `true`
    /// when every point is done.
    pub fn step(&mut self, budget: usize) -> bool {
        let mut left = budget.max(1);
        while self.planned < self.jobs.len() {
            if left == 0 {
                return false;
            }
            let job = &mut self.jobs[self.planned];
            let sizes: Vec<u64> = (0..job.inputs().strategies.len()).map(|s| job.space(s).len()).collect();
            self.planned_candidates += sizes.iter().sum::<u64>();
            job.sizes = Some(sizes);
            self.planned += 1;
            left = left.saturating_sub(PLAN_UNITS);
        }
        while self.cursor.job < self.jobs.len() {
            if left == 0 {
                return false;
            }
            left = self.advance(left);
        }
        true
    }

    /// Evaluates up to `left` candidates of the current job and strategy; returns what is left of
    /// the budget.
    fn advance(&mut self, mut left: usize) -> usize {
        let (j, s) = (self.cursor.job, self.cursor.strategy);
        let strategies = self.jobs[j].inputs().strategies.len();
        if s >= strategies {
            self.finish_job(j);
            self.cursor = Cursor { job: j + 1, strategy: 0, space: None, position: (0, 0) };
            return left;
        }
        let space = match self.cursor.space.take() {
            Some(space) => space,
            None => self.jobs[j].space(s),
        };
        let Some(e) = self.evaluator(j, s) else {
            // Cannot happen for resolved inputs; the strategy is then left without candidates.
            self.cursor.strategy += 1;
            return left;
        };
        let job = &mut self.jobs[j];
        let g = job.members[0].inputs.global_batch;
        let capacity = job.members[0].inputs.capacity_gb();
        let mut next = None;
        let mut walked = 0u64;
        for (pos, c) in space.walk(self.cursor.position) {
            if left == 0 {
                next = Some(pos);
                break;
            }
            left -= 1;
            walked += 1;
            if !job.members.iter().any(|m| m.inputs.constraints.matches(&c, g)) {
                continue;
            }
            let Ok((o, experts)) = self.evaluators[e].engine.price_with_experts(&c) else { continue };
            for m in job.members.iter_mut().filter(|m| m.inputs.constraints.matches(&c, g)) {
                let out = &mut m.outcomes[s];
                out.candidates += 1;
                out.min_mem_gb = Some(out.min_mem_gb.map_or(o.need_gb, |x| x.min(o.need_gb)));
                // Infeasible iff need > capacity (without the allocator's cache), as in the search.
                if o.need_gb > capacity {
                    continue;
                }
                out.feasible += 1;
                if m.top[s].accepts(o.throughput_samples_per_s) {
                    m.top[s].offer(Ranked {
                        candidate: c,
                        throughput_samples_per_s: o.throughput_samples_per_s,
                        time_per_iteration_s: o.totals.t,
                        mem_gb: o.mem_gb,
                        need_gb: o.need_gb,
                        totals: o.totals,
                        experts,
                        execution: execution_of(&self.evaluators[e].extended),
                    });
                }
            }
        }
        job.walked += walked;
        self.done_candidates += walked;
        match next {
            Some(pos) => {
                self.cursor.position = pos;
                self.cursor.space = Some(space);
            }
            None => {
                self.cursor.strategy += 1;
                self.cursor.position = (0, 0);
            }
        }
        left
    }

    /// The index in the evaluator cache of an evaluator for strategy `s` of job `j`.
    fn evaluator(&mut self, j: usize, s: usize) -> Option<usize> {
        let i = self.jobs[j].inputs();
        let strategy = i.strategies[s];
        if let Some(k) = self.evaluators.iter().position(|c| {
            c.strategy == strategy
                && c.global_batch == i.global_batch
                && c.shape == i.shape
                && c.params == i.params
                && c.extended == i.extended
        }) {
            return Some(k);
        }
        let engine: Engine = i.pricer().model(strategy, i.global_batch).ok()?;
        let entry = CachedEvaluator {
            shape: i.shape,
            params: i.params.clone(),
            strategy,
            global_batch: i.global_batch,
            extended: i.extended.clone(),
            engine,
        };
        if self.evaluators.len() == EVALUATOR_CACHE {
            self.evaluators.remove(0);
        }
        self.evaluators.push(entry);
        Some(self.evaluators.len() - 1)
    }

    /// Turns the members of a finished job into results.
    fn finish_job(&mut self, j: usize) {
        let walked = self.jobs[j].walked;
        for m in std::mem::take(&mut self.jobs[j].members) {
            self.walked[m.local] = walked;
            let Member { local, values, labels, inputs, mut outcomes, top } = m;
            for (out, top) in outcomes.iter_mut().zip(top) {
                out.best = top.items().first().copied();
            }
            let index = self.range.start + local;
            self.results[local] = Some(PointResult::from_search(index, values, labels, inputs, outcomes));
        }
    }

    /// `(done, total)` work units (candidates). While search spaces are still being sized the
    /// total is estimated from those sized so far.
    pub fn progress(&self) -> (u64, u64) {
        let total = if self.planned == 0 {
            self.jobs.len() as u64
        } else if self.planned < self.jobs.len() {
            self.planned_candidates
                + self.planned_candidates / self.planned as u64 * (self.jobs.len() - self.planned) as u64
        } else {
            self.planned_candidates
        };
        (self.done_candidates.min(total), total.max(self.done_candidates))
    }

    /// `(points done, points)` of this sweep or shard.
    pub fn points_done(&self) -> (usize, usize) {
        (self.results.iter().filter(|r| r.is_some()).count(), self.results.len())
    }

    /// Whether every point is done.
    pub fn is_done(&self) -> bool {
        self.planned == self.jobs.len() && self.cursor.job >= self.jobs.len()
    }

    /// The points finished so far, in sweep order.
    pub fn finished(&self) -> impl Iterator<Item = &PointResult> {
        self.results.iter().flatten()
    }

    /// Runs to the end and returns every point in sweep order.
    pub fn finish(mut self) -> SweepResult {
        while !self.step(1 << 20) {}
        let candidates = self.done_candidates;
        SweepResult {
            spec: self.spec,
            range: self.range,
            points: self.results.into_iter().flatten().collect(),
            candidates,
        }
    }
}

/// Rejects device counts and batches outside what the model accepts.
fn check_sizes(i: PointInputs) -> Result<PointInputs, Unresolved> {
    if i.devices == 0 || i.devices > MAX_DEVICES {
        return Err(Unresolved::Invalid(Error::invalid(
            "devices",
            i.devices,
            format!("must be from 1 to {MAX_DEVICES}"),
        )));
    }
    if i.global_batch == 0 || i.global_batch > MAX_GLOBAL_BATCH {
        return Err(Unresolved::Invalid(Error::invalid(
            "global_batch",
            i.global_batch,
            format!("must be from 1 to {MAX_GLOBAL_BATCH}"),
        )));
    }
    if i.strategies.is_empty() {
        return Err(Unresolved::Invalid(Error::invalid("strategies", "(none)", "no strategy to search")));
    }
    Ok(i)
}

/// A finished sweep (or shard).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepResult {
    /// What was swept.
    pub spec: SweepSpec,
    /// The point indices covered.
    pub range: Range<usize>,
    /// Every point, in sweep order.
    pub points: Vec<PointResult>,
    /// Candidates walked in total.
    pub candidates: u64,
}

impl SweepResult {
    /// The point at whole-sweep `index`, if in this result.
    pub fn point(&self, index: usize) -> Option<&PointResult> {
        index.checked_sub(self.range.start).and_then(|i| self.points.get(i))
    }
}

/// The execution a sweep point's extended setup prices (as a search with the same switches
/// reports it; `None` in reference mode).
fn execution_of(e: &Option<ExtendedSetup>) -> Option<crate::search::Execution> {
    e.as_ref().map(|e| crate::search::Execution::of(&e.options))
}
