//! The best layout for a file's run: the search over the file's own scenario (its model, system,
//! devices, global batch and switches; the expert degrees searched too), resumable so that the page
//! can run it in time slices and the CLI at once, and its best written back as a launch
//! ([`super::emit`]).

use fmperf_core::Error;
use fmperf_core::Strategy;
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::moe::MoeOptions;
use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Workload};
use fmperf_core::search::{ExecutionChoices, Ranked, Search, SearchResult};

use super::emit::{self, Emitted, Target};
use super::estimate::Estimate;
use super::scenario::LaunchScenario;
use super::{Launch, Source};

/// The search of a file's scenario over every layout of `strategy`, keeping the `keep` best.
/// The file's own expert degrees are not imposed: the search chooses them per candidate; its
/// execution is the file's ([`ExecutionChoices::fixed`]).
pub fn search(
    workload: &Workload,
    hardware: &Hardware,
    options: &ExtendedOptions,
    strategy: Strategy,
    devices: u64,
    global_batch: u64,
    keep: usize,
) -> Result<Search, Error> {
    let searched = searched_options(options);
    let setup = ExtendedSetup { workload: *workload, hardware: hardware.clone(), options: searched };
    let choices = ExecutionChoices::fixed(&setup.options);
    search_with(setup, choices, strategy, devices, global_batch, keep)
}

/// The search of a file's scenario `setup` over every layout of `strategy` on `devices` devices at
/// `global_batch` samples, keeping the `keep` best. Its switches are those [`searched_options`]
/// makes of the file's (the file's own expert degrees are not imposed: the search chooses them
/// per candidate), its execution `choices` the file's ([`ExecutionChoices::fixed`] of them) unless
/// a user's flag frees or fixes one.
pub fn search_with(
    setup: ExtendedSetup,
    choices: ExecutionChoices,
    strategy: Strategy,
    devices: u64,
    global_batch: u64,
    keep: usize,
) -> Result<Search, Error> {
    let spec = setup.spec(strategy, devices, global_batch, keep);
    Search::in_mode(spec, Some(setup), choices)
}

/// The switches a search runs with: the file's, without its expert degrees.
pub fn searched_options(options: &ExtendedOptions) -> ExtendedOptions {
    ExtendedOptions { moe: MoeOptions { ep: None, etp: None, ..options.moe }, ..*options }
}

/// The strategy that searches a file's kind of layout: with context parallelism `2d-seqp`, else
/// Megatron's `1d`.
pub fn strategy_for(scenario: &LaunchScenario) -> Strategy {
    if scenario.layout.cp > 1 { Strategy::ContextParallel2D } else { Strategy::OneD }
}

/// The best layout found for an estimated file's run, and how it compares with the file's own.
#[derive(Debug, Clone)]
pub struct BestForFile {
    /// The file's scenario run with the best layout.
    pub scenario: LaunchScenario,
    /// The best layout (degrees, micro-batch, expert degrees).
    pub layout: Layout,
    /// Its switches (the search's execution choices applied).
    pub options: ExtendedOptions,
    /// Its time per step [s].
    pub time_per_step_s: f64,
    /// Its throughput over the file's own [ratio] (above 1: the best is faster).
    pub speedup: f64,
    /// Layouts that fit, searched.
    pub feasible: u64,
}

/// The best of a finished `result` for the run `estimate` (the file's own, evaluated); `None` when
/// no layout fits.
pub fn best(estimate: &Estimate, result: &SearchResult) -> Result<Option<BestForFile>, Error> {
    let Some(top): Option<&Ranked> = result.top.first() else { return Ok(None) };
    let s = &estimate.scenario;
    let (layout, options) = emit::choice(top, s.layout.global_batch, &searched_options(&s.options))?;
    let own = estimate.evaluation.throughput_samples_per_s;
    Ok(Some(BestForFile {
        scenario: LaunchScenario { layout, options, ..s.clone() },
        layout,
        options,
        time_per_step_s: top.time_per_iteration_s,
        speedup: if own > 0.0 { top.throughput_samples_per_s / own } else { f64::INFINITY },
        feasible: result.feasible,
    }))
}

impl BestForFile {
    /// The best layout as a launch of `target` for the run read from `files` into `launch`: a
    /// single file of the target's family rewritten in place, else a fresh file
    /// ([`emit::emit_for_files`]).
    pub fn emit(&self, target: Target, files: &[Source<'_>], launch: &Launch) -> Result<Emitted, Error> {
        emit::emit_for_files(target, files, launch, &self.scenario, &self.layout, &self.options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Overrides, Source, estimate_files, parse};

    const MEGATRON: &str = include_str!("../../../examples/launch/megatron-llama3-70b.sh");

    #[test]
    fn the_best_layout_is_found_and_written_back() {
        let src = [Source { name: Some("run.sh"), text: MEGATRON }];
        let (launch, e) = estimate_files(&src, &[], &Overrides::default()).unwrap();
        let h = &e.scenario.options.hardware;
        let hw = crate::hardware(&e.system_id, h.precision, h.measured_ceiling).unwrap().1;
        let s = &e.scenario;
        let result = search(&s.workload, &hw, &s.options, strategy_for(s), s.devices, s.layout.global_batch, 1)
            .unwrap()
            .finish();
        let b = best(&e, &result).unwrap().expect("a layout fits");
        assert!(b.speedup >= 1.0 - 1e-12, "the best is at least as fast as the file's own: {}", b.speedup);
        assert_eq!(b.layout.tp * b.layout.pp * b.layout.cp * b.layout.dp, s.devices);
        let out = b.emit(Target::Megatron, &[Source { name: Some("run.sh"), text: MEGATRON }], &launch).unwrap();
        assert!(out.in_place);
        let back = parse(&out.text, Some("run-best.sh")).unwrap();
        let sc = LaunchScenario::from_launch(&back, &Overrides::default()).unwrap();
        assert_eq!(
            (sc.layout.tp, sc.layout.pp, sc.layout.dp, sc.layout.mbs),
            (b.layout.tp, b.layout.pp, b.layout.dp, b.layout.mbs)
        );
    }
}
