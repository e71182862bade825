//! Extended mode's pricing of one candidate with the execution chosen for it: the [`Chooser`]
//! keeps one evaluator per recomputation level and context-parallel flavour (with its block-cost
//! caches) and the combinations of the open choices ([`super::execution`]); [`choose`] prices a
//! candidate's combinations — under `cp_comm=search` each flavour in turn — skipping those whose
//! lower bound on the iteration time [s] cannot enter the top list, and offers the best feasible
//! one (throughput in samples/s, memory per device in GB against the capacity).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::execution::{self, Execution, ExecutionChoices};
use super::ranked;
use super::topk::TopK;
use crate::cost::ExtendedSetup;
use crate::extended::ExtendedEvaluator;
use crate::extended::context_parallel::CpComm;
use crate::extended::moe::ExpertLayout;
use crate::extended::options::{Recompute, Sharding};
use crate::vocab::{Candidate, Outcome};
use crate::{Error, Strategy};

/// What tells a chooser's evaluators apart: the recomputation level and the context-parallel
/// flavour (both change the block costs).
type EvaluatorKey = (Recompute, Option<execution::CpFlavour>);

/// Extended mode's pricing with the execution chosen per candidate: one evaluator (with its
/// block-cost caches) per recomputation level and context-parallel flavour priced so far,
/// switched between shardings, shard groups and interleave degrees
/// ([`ExtendedEvaluator::reschedule`]: block costs do not read them).
#[derive(Debug, Clone)]
pub(super) struct Chooser {
    pub(super) setup: ExtendedSetup,
    pub(super) choices: ExecutionChoices,
    pub(super) strategy: Strategy,
    pub(super) global_batch: u64,
    /// One evaluator per recomputation level and flavour priced so far (a handful: found by a
    /// scan, which costs less than hashing the level for every configuration priced).
    pub(super) evaluators: Vec<(EvaluatorKey, ExtendedEvaluator)>,
    /// [`ExecutionChoices::combinations`] by its arguments `(pp, depth, replicas, replicas_fast)`:
    /// candidates share few of them, and building the list for each candidate (five small
    /// allocations) was a tenth of the page's first search in a profile. The same lists, so the
    /// same results.
    pub(super) combinations: BTreeMap<(u64, u64, u64, u64), Arc<[Execution]>>,
    /// [`execution::cp_flavours`] by `(tp, cp, cp_fast)`, built once each (`cp_comm=search` only).
    pub(super) flavours: BTreeMap<(u64, u64, u64), Flavours>,
}

/// The context-parallel flavours tried for one layout shape ([`execution::cp_flavours`]).
type Flavours = Arc<[Option<execution::CpFlavour>]>;

impl Chooser {
    fn evaluator(&mut self, e: Execution) -> Result<&mut ExtendedEvaluator, Error> {
        let key = (e.recompute, e.cp);
        let i = match self.evaluators.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let ev = self.setup.evaluator(&e.apply(&self.setup.options), self.strategy, self.global_batch)?;
                self.evaluators.push((key, ev));
                self.evaluators.len() - 1
            }
        };
        let ev = &mut self.evaluators[i].1;
        ev.reschedule(e.sharding, e.shard_group, e.interleave)?;
        Ok(ev)
    }

    /// [`ExecutionChoices::combinations`] of this search's choices, built once per argument set.
    fn combinations(&mut self, pp: u64, depth: u64, replicas: u64, replicas_fast: u64) -> Arc<[Execution]> {
        let (choices, stack) = (&self.choices, self.setup.options.stack);
        self.combinations
            .entry((pp, depth, replicas, replicas_fast))
            .or_insert_with(|| choices.combinations(stack, pp, depth, replicas, replicas_fast).into())
            .clone()
    }

    /// The context-parallel flavours to try for a layout of `tp × cp`, `cp_fast` of the CP ranks
    /// in one fast domain ([`execution::cp_flavours`]).
    fn flavours(&mut self, tp: u64, cp: u64, cp_fast: u64) -> Flavours {
        let (w, o) = (&self.setup.workload, &self.setup.options);
        let make = || execution::cp_flavours(w, o, tp, cp, cp_fast).into();
        self.flavours.entry((tp, cp, cp_fast)).or_insert_with(make).clone()
    }

    fn outcome(&mut self, e: Execution, c: &Candidate) -> Result<Outcome, Error> {
        self.evaluator(e)?.evaluate(c)
    }

    /// MoE models: the least iteration time of `c` under execution `e` over every expert layout
    /// [s] ([`ExtendedEvaluator::moe_time_floor`]); `None` for dense models.
    fn moe_floor(&mut self, e: Execution, c: &Candidate) -> Option<f64> {
        self.evaluator(e).ok()?.moe_time_floor(c)
    }

    /// The expert layout the evaluator of execution `e` chose for `c` (MoE models).
    fn experts(&mut self, e: Execution, c: &Candidate) -> Option<ExpertLayout> {
        self.evaluator(e).ok()?.experts_of(c)
    }
}

/// The counters one candidate's execution choices update.
pub(super) struct ChooseState<'a> {
    pub(super) top: &'a mut TopK,
    pub(super) evaluations: &'a mut u64,
    pub(super) feasible: &'a mut u64,
    pub(super) min_mem_gb: &'a mut f64,
    pub(super) rejected: &'a mut u64,
    pub(super) first_rejection: &'a mut Option<(u64, Error)>,
}

/// Prices the execution choices of candidate `c` (generation index `gi`) with the bounds of
/// [`execution`], offering its best feasible execution to the top list. Under `cp_comm=search`
/// each context-parallel flavour of the layout ([`execution::cp_flavours`]) is priced in turn
/// ([`choose_flavour`]), a flavour that cannot beat the best found for `c` so far skipped by its
/// bound; the candidate counts once (feasible when a flavour fits, rejected when every flavour
/// is). Otherwise the one flavour of the switches, exactly as before the flavour was a choice.
pub(super) fn choose(ch: &mut Chooser, c: &Candidate, gi: u64, capacity: f64, global_batch: u64, st: &mut ChooseState) {
    let cp = if c.strategy == Strategy::ContextParallel2D { c.tp2 } else { 1 };
    let searched;
    let flavours: &[Option<execution::CpFlavour>] = if cp > 1 && ch.setup.options.cp_comm == CpComm::Search {
        searched = ch.flavours(c.tp1, cp, c.nv_tp2);
        &searched
    } else {
        &NO_FLAVOUR
    };
    let mut best: Option<(Outcome, Execution)> = None;
    let (mut fits, mut too_big, mut rejection) = (false, false, None);
    for (i, &f) in flavours.iter().enumerate() {
        // Memory does not depend on the flavour (the same activations are kept, the all-to-alls'
        // buffers are transient: `extended::context_parallel`), so the first flavour's leanest
        // execution decides for all: past a first that does not fit, none does.
        if i > 0 && !fits && rejection.is_none() {
            break;
        }
        let beat = best.as_ref().map(|(o, _)| o.throughput_samples_per_s);
        match choose_flavour(ch, f, c, capacity, global_batch, st, (beat, fits)) {
            Priced::Rejected(e) => {
                rejection.get_or_insert(e);
            }
            Priced::TooBig => too_big = true,
            Priced::Fits(found) => {
                fits = true;
                // Ties between flavours: the least memory, then the first flavour.
                if let Some((o, e)) = found
                    && best.as_ref().is_none_or(|(b, _)| {
                        o.throughput_samples_per_s > b.throughput_samples_per_s
                            || (o.throughput_samples_per_s == b.throughput_samples_per_s && o.mem_gb < b.mem_gb)
                    })
                {
                    best = Some((o, e));
                }
            }
        }
    }
    if fits {
        *st.feasible += 1;
    } else if !too_big && let Some(e) = rejection {
        *st.rejected += 1;
        st.first_rejection.get_or_insert((gi, e));
    }
    if let Some((o, e)) = best
        && st.top.accepts(o.throughput_samples_per_s)
    {
        let mut r = ranked(*c, &o, Some(e));
        r.experts = ch.experts(e, c);
        st.top.offer_at(gi, r);
    }
}

/// The one "flavour" of a layout whose flavour is not searched: the switches'.
const NO_FLAVOUR: [Option<execution::CpFlavour>; 1] = [None];

/// What pricing one flavour of a candidate found.
enum Priced {
    /// The leanest execution was refused (why).
    Rejected(Error),
    /// Not even the leanest execution fits.
    TooBig,
    /// The leanest fits; the best execution that can enter the list, with its outcome (`None`:
    /// the bounds proved none can, or none beats `beat`).
    Fits(Option<(Outcome, Execution)>),
}

/// [`choose`] for one context-parallel flavour `f` (`None`: the switches'): the candidate's
/// leanest execution decides whether it fits; then every combination the bounds let through is
/// priced and the best returned. `beat`: the throughput the candidate already reaches with
/// another flavour [samples/s] (a flavour whose bound is below it is skipped); `fitted`: another
/// flavour's leanest execution already fits (memory does not depend on the flavour, so it is
/// not priced again). Updates the
/// evaluation count and the least memory; feasibility, rejections and the top list are the
/// caller's.
fn choose_flavour(
    ch: &mut Chooser,
    f: Option<execution::CpFlavour>,
    c: &Candidate,
    capacity: f64,
    global_batch: u64,
    st: &mut ChooseState,
    (beat, fitted): (Option<f64>, bool),
) -> Priced {
    let (cp, nv_cp) = if c.strategy == Strategy::ContextParallel2D { (c.tp2, c.nv_tp2) } else { (1, 1) };
    let combos = ch.combinations(c.pp, ch.setup.workload.layers, c.dp * cp, c.nv_dp * nv_cp);
    let combos: Arc<[Execution]> = match f {
        None => combos,
        Some(_) => combos.iter().map(|e| e.with_cp(f)).collect(),
    };
    let pick = |r: Recompute, s: Sharding| {
        combos
            .iter()
            .position(|e| {
                e.recompute == r && e.sharding == s && e.shard_group.is_none() && e.interleave == combos[0].interleave
            })
            .or_else(|| combos.iter().position(|e| e.recompute == r && e.sharding == s))
            .unwrap_or(0)
    };
    let leanest = pick(ch.choices.recompute.unwrap_or(Recompute::Full), ch.choices.sharding.unwrap_or(Sharding::Zero3));
    let mut outcomes: Vec<Option<Outcome>> = vec![None; combos.len()];
    let moe = ch.setup.chooses_expert_layouts();
    if !fitted {
        *st.evaluations += 1;
        if let Some(verdict) = fit_leanest(ch, &combos, leanest, c, capacity, st, &mut outcomes) {
            return verdict;
        }
    }
    // Time bound over every combination: the per-micro-batch work without recomputation (matrix
    // work and tensor/context-parallel communication, which sharding and interleaving leave
    // unchanged) in every micro-batch slot and in the smallest bubble, `(pp − 1)/v_max` slots.
    let fastest = pick(ch.choices.recompute.unwrap_or(Recompute::None), combos[0].sharding);
    let v_max = combos.iter().map(|e| e.interleave).max().unwrap_or(1).max(1) as f64;
    let nmb = c.microbatches(global_batch).max(1) as f64;
    // An MoE candidate's outcome is its best expert layout, or the leanest when none fits (then
    // its time bounds nothing): its bound is the least time floor over every layout without
    // recomputation instead, read from the cached block costs without pricing the fastest
    // combination (which the loop below prices if the bound lets the candidate through).
    let work = if moe && ch.choices.recompute.is_none() {
        // The leanest evaluator's cached block costs, without its recomputation: the floor of
        // the fastest level (none) without pricing that level's blocks.
        ch.evaluator(combos[leanest]).ok().and_then(|ev| ev.moe_time_floor_without_recompute(c))
    } else if moe {
        ch.moe_floor(combos[fastest], c)
    } else {
        if outcomes[fastest].is_none() {
            *st.evaluations += 1;
            outcomes[fastest] = ch.outcome(combos[fastest], c).ok();
        }
        outcomes[fastest].map(|f| f.totals.t_comp + f.totals.t_tp_comm)
    };
    if let Some(work) = work {
        let bound = work * (1.0 + c.pp.saturating_sub(1) as f64 / (v_max * nmb));
        let ceiling = global_batch as f64 / bound;
        if bound > 0.0 && (!st.top.accepts(ceiling) || beat.is_some_and(|b| ceiling < b)) {
            return Priced::Fits(None);
        }
    }
    // One row per candidate: its best execution (the fastest that fits; ties: the least memory,
    // then the first in the combinations' order). Recomputation only adds work, so for each
    // (sharding, shard group, interleave) the levels are priced in order none → selective → full:
    // a level is skipped when a lighter one fits and cannot be beaten (full recomputation adds a
    // forward pass, so it is slower than a lighter level that fits), or when the lighter one is
    // already too slow for the list.
    let mut best: Option<(Outcome, usize)> = None;
    let better = |o: &Outcome, j: usize, best: &Option<(Outcome, usize)>| {
        best.is_none_or(|(b, bj)| {
            o.throughput_samples_per_s > b.throughput_samples_per_s
                || (o.throughput_samples_per_s == b.throughput_samples_per_s
                    && (o.mem_gb < b.mem_gb || (o.mem_gb == b.mem_gb && j < bj)))
        })
    };
    let mut done = vec![false; combos.len()];
    for j0 in 0..combos.len() {
        if done[j0] {
            continue;
        }
        let e0 = combos[j0];
        // The recomputation levels of this (sharding, group, interleave), lightest first.
        let group = (j0..combos.len()).filter(|&j| {
            let e = combos[j];
            e.sharding == e0.sharding && e.shard_group == e0.shard_group && e.interleave == e0.interleave
        });
        let mut lighter_fits = false;
        for j in group {
            done[j] = true;
            if moe {
                // MoE: bound each level by its least time floor over the expert layouts (heavier
                // levels only add work); the outcomes' own times bound nothing when no layout fits.
                if let Some(floor) = ch.moe_floor(combos[j], c).filter(|f| *f > 0.0) {
                    let ceiling = global_batch as f64 / with_bubble(floor, c.pp, combos[j].interleave, nmb);
                    if !st.top.accepts(ceiling) {
                        break;
                    }
                    if best.as_ref().is_some_and(|(b, _)| ceiling < b.throughput_samples_per_s)
                        || beat.is_some_and(|b| ceiling < b)
                    {
                        continue;
                    }
                }
            } else if lighter_fits && combos[j].recompute == Recompute::Full {
                continue;
            }
            let o = match outcomes[j] {
                Some(o) => o,
                None => {
                    *st.evaluations += 1;
                    match ch.outcome(combos[j], c) {
                        Ok(o) => o,
                        Err(_) => continue,
                    }
                }
            };
            let slower = beat.is_some_and(|b| o.throughput_samples_per_s < b);
            if !moe && (!st.top.accepts(o.throughput_samples_per_s) || slower) {
                // Heavier levels are no faster (than the list, or than another flavour).
                break;
            }
            if o.need_gb > capacity {
                continue;
            }
            lighter_fits = true;
            if better(&o, j, &best) {
                best = Some((o, j));
            }
        }
    }
    match best {
        Some((o, j)) if st.top.accepts(o.throughput_samples_per_s) => Priced::Fits(Some((o, combos[j]))),
        _ => Priced::Fits(None),
    }
}

/// Whether candidate `c` fits with its leanest execution `combos[leanest]` (`None`: it does, its
/// outcome kept in `outcomes` when priced; else the verdict to return).
fn fit_leanest(
    ch: &mut Chooser,
    combos: &[Execution],
    leanest: usize,
    c: &Candidate,
    capacity: f64,
    st: &mut ChooseState,
    outcomes: &mut [Option<Outcome>],
) -> Option<Priced> {
    let moe = ch.setup.chooses_expert_layouts();
    // MoE: when no expert layout of the leanest execution needs less memory than the least seen,
    // the candidate cannot lower `min_mem_gb` and whether it fits is all the counters need — read
    // from the layouts' memory alone; its time is priced below only if the bounds let it through.
    // Once a candidate of this search fits, the least memory is no longer reported
    // ([`SearchResult::min_mem_gb`]): then whether it fits is all, read until a layout fits.
    let probe = match moe {
        true if *st.feasible > 0 => {
            ch.evaluator(combos[leanest]).ok().and_then(|ev| ev.moe_fits(c)).map(|f| (f64::INFINITY, f))
        }
        true => ch.evaluator(combos[leanest]).ok().and_then(|ev| ev.moe_memory_floor(c)),
        false => None,
    };
    if let Some((least, fits)) = probe
        && least >= *st.min_mem_gb
    {
        if !fits {
            return Some(Priced::TooBig);
        }
    } else {
        let lean = match ch.outcome(combos[leanest], c) {
            Ok(o) => o,
            Err(e) => return Some(Priced::Rejected(e)),
        };
        *st.min_mem_gb = st.min_mem_gb.min(lean.need_gb);
        if lean.need_gb > capacity {
            return Some(Priced::TooBig);
        }
        outcomes[leanest] = Some(lean);
    }
    None
}

/// A lower bound on the iteration time of a combination with `v` virtual stages whose
/// micro-batch slots alone take at least `floor` [s] (`nmb` slots of at least `floor / nmb`
/// each): the pipeline bubble adds `(pp − 1)/v` such slots. The factor `1 − 1e-9` keeps it a
/// lower bound under rounding (the iteration's sum is formed in another order; a handful of
/// roundings of 1.1e-16 each).
fn with_bubble(floor: f64, pp: u64, v: u64, nmb: f64) -> f64 {
    floor * (1.0 + crate::extended::pipeline::bubble_slots(pp, v) / nmb) * (1.0 - 1e-9)
}
