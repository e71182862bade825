//! The resumable sensitivity: the baseline and the twelve scaled systems ([`FACTORS`] of every
//! [`Feature`]), each searched over the scenario's strategies one after the other, a bounded
//! number of candidates per [`Sensitivity::step`]; a page runs it in time slices or splits it over
//! workers by points ([`Sensitivity::part`], [`Sensitivity::found`], [`Sensitivity::absorb`]).

use super::feature::{Feature, Unscalable, scaled};
use super::result::{Point, PointStatus, SensitivityResult};
use crate::catalog::TrainingBudget;
use crate::cost::{ExtendedSetup, Pricer};
use crate::resolve::explorer::ExploreSpec;
use crate::search::{ExecutionChoices, Ranked, Search, SearchSpec};
use crate::{Error, ModelShape, Strategy, SystemParams};

/// The factors every feature is scaled by, in the order their points are listed.
pub const FACTORS: [f64; 2] = [0.5, 2.0];

/// Points of a sensitivity: the baseline and every feature at every factor.
pub const POINTS: usize = 1 + Feature::ALL.len() * FACTORS.len();

/// Work units building one strategy's search is worth, in candidates (for progress and budgets).
const BUILD_UNITS: usize = 64;
/// Progress units per point.
const POINT_UNITS: u64 = 1000;

/// The scenario a sensitivity varies: what its search searches, and what turns a throughput into
/// training days and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Base {
    /// The model as the reference sees it (extended mode searches the workload's own shape).
    pub shape: ModelShape,
    /// The system as the reference sees it, with the domain size in force.
    pub system: SystemParams,
    /// Extended mode's workload, part and switches (`None`: reference mode).
    pub extended: Option<ExtendedSetup>,
    /// The execution choices extended mode's searches make or the user fixed.
    pub execution: ExecutionChoices,
    /// Strategies searched, merged best first (ties: the earlier strategy).
    pub strategies: Vec<Strategy>,
    /// Devices [count].
    pub n_gpus: u64,
    /// Global batch [samples].
    pub global_batch: u64,
    /// The training budget the days are for.
    pub budget: TrainingBudget,
    /// Board power of one device [W] with its source (for energy), if known.
    pub power: Option<(f64, String)>,
    /// Price of one device-hour (the user's currency), if given.
    pub price_per_device_hour: Option<f64>,
}

impl Base {
    /// The explorer's scenario (its mode, strategies, execution choices, budget; the part's board
    /// power from its catalog entry; no price).
    pub fn of_explore(spec: &ExploreSpec) -> Base {
        let sys = &spec.system_entry;
        let source = sys.sources.first().map_or(String::new(), |s| format!(": {s}"));
        Base {
            shape: spec.model,
            system: spec.system.clone(),
            extended: spec.extended.clone(),
            execution: spec.execution,
            strategies: spec.strategies.clone(),
            n_gpus: spec.n_gpus,
            global_batch: spec.global_batch,
            budget: spec.budget,
            power: sys.tdp_w.map(|w| (w, format!("tdp_w of {} in fmperf's catalog{source}", sys.id))),
            price_per_device_hour: None,
        }
    }

    /// Tokens (or patches) per sample [count]: the workload's in extended mode.
    pub fn seq_len(&self) -> u64 {
        self.extended.as_ref().map_or(self.shape.l, |e| e.workload.seq_len)
    }

    /// The search spec of one strategy on `system`, keeping the best configuration only.
    fn spec(&self, system: &SystemParams, strategy: Strategy) -> SearchSpec {
        SearchSpec {
            model: self.shape,
            system: system.clone(),
            strategy,
            n_gpus: self.n_gpus,
            global_batch: self.global_batch,
            top_k: 1,
        }
    }
}

/// What the searches of one point found. Serialisable: a page's worker hands it back.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Found {
    /// The fastest configuration that fits over every strategy (`None`: nothing fits).
    pub best: Option<Ranked>,
    /// The least memory per device of any candidate [GB] (`None`: none evaluated).
    pub min_mem_gb: Option<f64>,
    /// Candidates evaluated over every strategy [count].
    pub candidates: u64,
    /// Why a strategy's search could not run, in words (the first such).
    pub error: Option<String>,
}

impl Found {
    fn absorb(&mut self, r: crate::search::SearchResult) {
        self.candidates += r.candidates;
        self.min_mem_gb = match (self.min_mem_gb, r.min_mem_gb) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(top) = r.top.first()
            && self.best.is_none_or(|b| top.throughput_samples_per_s > b.throughput_samples_per_s)
        {
            self.best = Some(*top);
        }
    }
}

/// One point: a feature at a factor (`None`: the baseline), the system it gives or why it cannot
/// be, and its searches' state.
#[derive(Debug, Clone)]
struct Variant {
    feature: Option<Feature>,
    factor: f64,
    inputs: Result<(SystemParams, Option<ExtendedSetup>), Unscalable>,
    /// The strategy searched next (index into the base's strategies).
    strategy: usize,
    search: Option<Search>,
    found: Found,
    done: bool,
}

/// The sensitivity of one scenario, resumable (see the module documentation).
#[derive(Debug, Clone)]
pub struct Sensitivity {
    base: Base,
    variants: Vec<Variant>,
    /// `(index, count)`: this run searches the points `i` with `i % count == index`.
    part: (u64, u64),
}

impl Sensitivity {
    /// The baseline and every feature at every factor; cheap (no candidate is generated yet).
    /// Errors: no strategy, or a budget that is not a positive number of samples.
    pub fn new(base: Base) -> Result<Sensitivity, Error> {
        if base.strategies.is_empty() {
            return Err(Error::invalid("strategies", "(none)", "choose at least one strategy"));
        }
        let samples = base.budget.samples(base.seq_len());
        if !samples.is_finite() || samples <= 0.0 {
            return Err(Error::invalid("budget", samples, "must be a positive number of tokens or samples"));
        }
        let hardware = base.extended.as_ref().map(|e| &e.hardware);
        let max_domain = crate::resolve::form::MAX_DOMAIN;
        let mut variants = vec![Variant::new(None, 1.0, Ok((base.system.clone(), base.extended.clone())))];
        for f in Feature::ALL {
            for x in FACTORS {
                let inputs = scaled(f, x, &base.system, hardware, base.n_gpus, max_domain).map(|(p, hw)| {
                    let setup = base.extended.clone().zip(hw).map(|(e, hardware)| ExtendedSetup { hardware, ..e });
                    (p, setup)
                });
                variants.push(Variant::new(Some(f), x, inputs));
            }
        }
        Ok(Sensitivity { base, variants, part: (0, 1) })
    }

    /// This run restricted to part `index` of `count` of the points (every `count`-th, from
    /// `index`), before any step. [`Sensitivity::absorb`] of every part's [`Sensitivity::found`]
    /// equals the whole run.
    pub fn part(mut self, index: u64, count: u64) -> Result<Sensitivity, Error> {
        self.part = crate::search::checked_shard(index, count)?;
        Ok(self)
    }

    /// The scenario varied.
    pub fn base(&self) -> &Base {
        &self.base
    }

    fn mine(&self, i: usize) -> bool {
        i as u64 % self.part.1 == self.part.0
    }

    /// Does up to `max_candidates` more evaluations (building one search counts as a few);
    /// returns `true` when every point of this part is searched.
    pub fn step(&mut self, max_candidates: usize) -> bool {
        let mut budget = max_candidates.max(1);
        let part = self.part;
        for (i, v) in self.variants.iter_mut().enumerate() {
            if v.done || i as u64 % part.1 != part.0 {
                continue;
            }
            if budget == 0 {
                return false;
            }
            budget = v.step(&self.base, budget);
            if !v.done {
                return false;
            }
        }
        true
    }

    /// `(done, total)` progress units over this part's points (each point weighs the same; within
    /// a point, its strategies, and within a search its candidates).
    pub fn progress(&self) -> (u64, u64) {
        let n = self.base.strategies.len().max(1) as f64;
        let mut done = 0.0;
        let mut total = 0u64;
        for (_, v) in self.variants.iter().enumerate().filter(|(i, _)| self.mine(*i)) {
            total += POINT_UNITS;
            done += if v.done {
                1.0
            } else {
                let inner = v.search.as_ref().map_or(0.0, |s| {
                    let (a, b) = s.progress();
                    if b == 0 { 0.0 } else { a as f64 / b as f64 }
                });
                (v.strategy as f64 + inner) / n
            };
        }
        ((done * POINT_UNITS as f64).round() as u64, total)
    }

    /// Whether every point of this part is searched.
    pub fn is_done(&self) -> bool {
        self.variants.iter().enumerate().all(|(i, v)| v.done || !self.mine(i))
    }

    /// What this part's searched points found, by point index (final once done).
    pub fn found(&self) -> Vec<(usize, Found)> {
        self.variants
            .iter()
            .enumerate()
            .filter(|(i, v)| v.done && self.mine(*i) && v.inputs.is_ok())
            .map(|(i, v)| (i, v.found.clone()))
            .collect()
    }

    /// The whole run finished with what its parts found (any order): every point a part searched
    /// takes that part's finding; points that cannot be searched need none. An index out of range
    /// or a point left unsearched is an error.
    pub fn absorb(mut self, found: Vec<(usize, Found)>) -> Result<Sensitivity, Error> {
        self.part = (0, 1);
        for (i, f) in found {
            let n = self.variants.len();
            let v = self
                .variants
                .get_mut(i)
                .ok_or_else(|| Error::invalid("sensitivity.point", i, format!("must be below {n}")))?;
            v.found = f;
            v.search = None;
            v.strategy = self.base.strategies.len();
            v.done = true;
        }
        for v in &mut self.variants {
            if v.inputs.is_err() {
                v.done = true;
            }
        }
        if let Some(i) = self.variants.iter().position(|v| !v.done) {
            return Err(Error::invalid("sensitivity.point", i, "was searched by no part"));
        }
        Ok(self)
    }

    /// The points so far (final once [`Sensitivity::is_done`]), features sorted by effect.
    pub fn result(&self) -> SensitivityResult {
        let points: Vec<Point> = self.variants.iter().map(|v| self.point(v)).collect();
        SensitivityResult::new(&self.base, points)
    }

    /// Runs every point to the end.
    pub fn finish(mut self) -> SensitivityResult {
        while !self.step(usize::MAX) {}
        self.result()
    }

    fn point(&self, v: &Variant) -> Point {
        let base_hw = self.base.extended.as_ref().map(|e| &e.hardware);
        let value = |f: Feature| match &v.inputs {
            Ok((p, e)) => f.value(p, e.as_ref().map(|e| &e.hardware)),
            Err(_) => f.value(&self.base.system, base_hw) * v.factor,
        };
        let value = v.feature.map(value);
        let status = match (&v.inputs, v.done, &v.found.best) {
            (Err(why), _, _) => PointStatus::Impossible(why.to_string()),
            (Ok(_), false, _) => PointStatus::Pending,
            (Ok(_), true, Some(_)) => PointStatus::Fits,
            (Ok((p, e)), true, None) => match &v.found.error {
                Some(why) if v.found.candidates == 0 => PointStatus::Impossible(why.clone()),
                _ => PointStatus::NothingFits {
                    min_mem_gb: v.found.min_mem_gb,
                    capacity_gb: Pricer { shape: &self.base.shape, system: p, extended: e.as_ref() }.capacity_gb(),
                },
            },
        };
        Point::new(&self.base, v.feature, v.factor, value, status, v.found.best)
    }
}

impl Variant {
    fn new(
        feature: Option<Feature>,
        factor: f64,
        inputs: Result<(SystemParams, Option<ExtendedSetup>), Unscalable>,
    ) -> Variant {
        let done = inputs.is_err();
        Variant { feature, factor, inputs, strategy: 0, search: None, found: Found::default(), done }
    }

    /// Advances this point by up to `budget` candidates; returns the budget left.
    fn step(&mut self, base: &Base, mut budget: usize) -> usize {
        let Ok((system, setup)) = &self.inputs else {
            self.done = true;
            return budget;
        };
        while budget > 0 && !self.done {
            let Some(&strategy) = base.strategies.get(self.strategy) else {
                self.done = true;
                break;
            };
            let Some(search) = self.search.as_mut() else {
                match Search::in_mode(base.spec(system, strategy), setup.clone(), base.execution) {
                    Ok(s) => self.search = Some(s),
                    Err(e) => {
                        self.found.error.get_or_insert_with(|| format!("{strategy}: {e}"));
                        self.strategy += 1;
                    }
                }
                budget = budget.saturating_sub(BUILD_UNITS);
                continue;
            };
            let (before, _) = search.progress();
            let finished = search.step(budget);
            let (after, _) = search.progress();
            budget = budget.saturating_sub((after - before).max(1) as usize);
            if finished {
                let r = search.result();
                self.found.absorb(r);
                self.search = None;
                self.strategy += 1;
            }
        }
        budget
    }
}
