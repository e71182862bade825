//! The search beyond the reference's enumeration (issue 14, 16 §4, 13 §3): NVL72-style domains
//! and device counts that are not powers of two, execution choices with pruning equal to pricing
//! every combination, and shards merged into the single run's result.

use fmperf_core::catalog::{self, MappingOptions, Precision, to_system_params};
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::options::{Recompute, Sharding};
use fmperf_core::extended::{ExtendedEvaluator, ExtendedOptions, Hardware, Workload};
use fmperf_core::search::shard_state::merge_shards;
use fmperf_core::search::{Execution, ExecutionChoices, Ranked, Search, SearchResult, SearchSpec, Widening};
use fmperf_core::{ModelShape, Strategy, SystemParams};

/// B200-class parts in 72-device domains (the reference's B200 preset with NVL72's domain).
fn nvl72() -> SystemParams {
    SystemParams::b200().with_domain_size(72)
}

fn extended(workload: Workload, sys_id: &str, domain: Option<u64>) -> (SystemParams, ExtendedSetup) {
    let sys = catalog::find_system(sys_id).unwrap();
    let opts = MappingOptions { domain_size: domain, scale_out_gbps: Some(50.0), ..MappingOptions::default() };
    let params = to_system_params(sys, &opts).unwrap().params;
    let hardware = Hardware::from_catalog(sys, Precision::Bf16, true, &opts).unwrap();
    (params, ExtendedSetup { workload, hardware, options: ExtendedOptions::realistic() })
}

fn spec(model: ModelShape, system: SystemParams, strategy: Strategy, n: u64, g: u64, k: usize) -> SearchSpec {
    SearchSpec { model, system, strategy, n_gpus: n, global_batch: g, top_k: k }
}

#[test]
fn nvl72_at_2304_devices_gives_candidates_in_both_modes() {
    // Reference mode: 2,304 = 2^8·3^2 cannot be split for gpt3_1T with a 4,096 batch; the search
    // uses 2,048 of them on partial domains (64 of each 72) and says why.
    let s = Search::new(spec(ModelShape::GPT3_1T, nvl72(), Strategy::OneD, 2304, 4096, 5)).unwrap();
    let why = s.diagnose().unwrap();
    assert!(why.message.contains("factor 3^2"), "{}", why.message);
    let r = s.finish();
    assert_eq!(r.widening, Widening::FewerDevices { asked: 2304, used: 2048 });
    assert!(!r.top.is_empty());
    for x in &r.top {
        let c = &x.candidate;
        assert_eq!(c.n_gpus(), 2048);
        assert!(c.nv_tp1 * c.nv_dp * c.nv_pp <= 72);
    }
    // Power-of-two counts on 72-device domains: partial domains, every device used.
    let r = Search::new(spec(ModelShape::GPT3_1T, nvl72(), Strategy::OneD, 2048, 4096, 5)).unwrap().finish();
    assert_eq!(r.widening, Widening::PartialDomains);
    assert!(!r.top.is_empty());

    // Extended mode (GB200 NVL72 from the catalog, domain 72): every device used (uneven
    // pipeline stages take the factor 9), at 2,304, 9,216 and 18,432 devices.
    let w = Workload { seq_len: 8192, ..Workload::LLAMA3_8B };
    let llama70b = Workload::from_catalog(catalog::find_model("llama3-70b").unwrap()).unwrap();
    for (workload, n) in [(llama70b, 2304), (w, 9216), (w, 18432)] {
        let (params, setup) = extended(workload, "nvidia_gb200_nvl72", Some(72));
        let s = spec(workload.to_shape(), params, Strategy::OneD, n, 4096, 3);
        let r = Search::in_mode(s, Some(setup.clone()), ExecutionChoices::fixed(&setup.options)).unwrap().finish();
        assert!(!r.top.is_empty(), "{n}: {r:?}");
        assert_eq!(r.devices_used, n);
        assert!(r.top.iter().all(|x| x.candidate.n_gpus() == n));
    }
}

/// Every combination of every candidate priced, no pruning, the best per candidate kept: the result
/// the pruned search must equal.
fn brute_force(s: &SearchSpec, setup: &ExtendedSetup, choices: ExecutionChoices) -> Vec<Ranked> {
    let probe = Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap();
    let mut all: Vec<(u64, Ranked)> = Vec::new();
    for (i, c) in probe.space().iter().enumerate() {
        let (cp, nv_cp) = if c.strategy == Strategy::ContextParallel2D { (c.tp2, c.nv_tp2) } else { (1, 1) };
        let combos = choices.combinations(setup.options.stack, c.pp, setup.workload.layers, c.dp * cp, c.nv_dp * nv_cp);
        let mut best: Option<Ranked> = None;
        for e in combos {
            let opts = e.apply(&setup.options);
            let mut ev =
                ExtendedEvaluator::new(&setup.workload, &setup.hardware, &opts, c.strategy, s.global_batch).unwrap();
            let Ok(o) = ev.evaluate(&c) else { continue };
            let better = best.is_none_or(|b| {
                o.throughput_samples_per_s > b.throughput_samples_per_s
                    || (o.throughput_samples_per_s == b.throughput_samples_per_s && o.mem_gb < b.mem_gb)
            });
            if o.need_gb <= setup.hardware.hbm_capacity_gb && better {
                best = Some(Ranked {
                    candidate: c,
                    throughput_samples_per_s: o.throughput_samples_per_s,
                    time_per_iteration_s: o.totals.t,
                    mem_gb: o.mem_gb,
                    need_gb: o.need_gb,
                    totals: o.totals,
                    execution: Some(e),
                    experts: None,
                });
            }
        }
        all.extend(best.map(|r| (i as u64, r)));
    }
    all.sort_by(|(ia, a), (ib, b)| b.throughput_samples_per_s.total_cmp(&a.throughput_samples_per_s).then(ia.cmp(ib)));
    all.into_iter().take(s.top_k).map(|(_, r)| r).collect()
}

#[test]
fn pruned_execution_search_equals_pricing_every_combination() {
    let cases = [
        ("llama3-8b", "nvidia_h100_sxm5_80gb", 64, 512, Strategy::OneD),
        ("llama3-8b", "nvidia_h100_sxm5_80gb", 32, 256, Strategy::ContextParallel2D),
        ("llama3-70b", "nvidia_h100_sxm5_80gb", 128, 256, Strategy::OneD),
    ];
    for (model, sys, n, g, strategy) in cases {
        let w = Workload::from_catalog(catalog::find_model(model).unwrap()).unwrap();
        let (params, setup) = extended(w, sys, None);
        let s = spec(w.to_shape(), params, strategy, n, g, 8);
        for choices in [
            ExecutionChoices::SEARCH_ALL,
            ExecutionChoices { sharding: Some(Sharding::Zero1), ..ExecutionChoices::SEARCH_ALL },
            ExecutionChoices { recompute: Some(Recompute::Selective), mbs: Some(1), ..ExecutionChoices::SEARCH_ALL },
        ] {
            let got = Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap().finish();
            let want = brute_force(&s, &setup, choices);
            assert_eq!(got.top, want, "{model} {strategy} {n} {choices:?}");
            assert!(got.evaluations > got.candidates, "execution choices priced");
        }
    }
}

#[test]
fn searched_execution_is_at_least_as_fast_as_the_defaults() {
    let w = Workload::from_catalog(catalog::find_model("llama3-70b").unwrap()).unwrap();
    let (params, setup) = extended(w, "nvidia_h100_sxm5_80gb", None);
    let s = spec(w.to_shape(), params, Strategy::OneD, 256, 512, 1);
    let fixed =
        Search::in_mode(s.clone(), Some(setup.clone()), ExecutionChoices::fixed(&setup.options)).unwrap().finish();
    let chosen = Search::in_mode(s, Some(setup.clone()), ExecutionChoices::SEARCH_ALL).unwrap().finish();
    assert!(chosen.top[0].throughput_samples_per_s >= fixed.top[0].throughput_samples_per_s);
    assert_eq!(fixed.top[0].execution, Some(Execution::of(&setup.options)));
    assert!(chosen.top[0].execution.is_some());
}

#[test]
fn shards_merge_into_the_single_run() {
    let w = Workload::from_catalog(catalog::find_model("llama3-8b").unwrap()).unwrap();
    let (params, setup) = extended(w, "nvidia_h100_sxm5_80gb", None);
    let ext_spec = spec(w.to_shape(), params, Strategy::OneD, 64, 512, 10);
    let ref_spec =
        spec(ModelShape::GPT3_1T, SystemParams::h200().with_domain_size(8), Strategy::Summa2D, 512, 4096, 10);
    let make = |ext: bool| {
        if ext {
            Search::in_mode(ext_spec.clone(), Some(setup.clone()), ExecutionChoices::SEARCH_ALL).unwrap()
        } else {
            Search::new(ref_spec.clone()).unwrap()
        }
    };
    for ext in [false, true] {
        let one = make(ext).finish();
        for n in [1u64, 2, 3, 7] {
            let shards: Vec<Search> = (0..n)
                .map(|i| {
                    let mut s = make(ext).shard(i, n).unwrap();
                    while !s.step(97) {}
                    s
                })
                .collect();
            let merged = merge_shards(&shards).unwrap();
            assert_eq!(merged.top, one.top, "{n} shards, extended {ext}");
            assert_eq!((merged.candidates, merged.feasible), (one.candidates, one.feasible));
        }
    }
    assert!(make(false).shard(2, 2).is_err());
}

/// An extended-mode MoE search splits by block shape (each shape's candidates in one shard, so
/// each shape's blocks are priced once over all shards): any number of shards, stepped in any
/// slices, merged (by `merge_shards` and by `Search::merged` from the serialisable states) equal
/// the single run — rows, order, counts and the least memory.
#[test]
fn moe_shards_by_block_shape_merge_into_the_single_run() {
    let w = Workload::from_catalog(catalog::find_model("mixtral-8x7b").unwrap()).unwrap();
    let (params, setup) = extended(w, "nvidia_h100_sxm5_80gb", None);
    let s = spec(w.to_shape(), params, Strategy::ContextParallel2D, 64, 256, 10);
    let make = || Search::in_mode(s.clone(), Some(setup.clone()), ExecutionChoices::SEARCH_ALL).unwrap();
    let one = make().finish();
    assert!(one.feasible > 0 && one.candidates > 100);
    for n in [2u64, 3, 7] {
        let shards: Vec<Search> = (0..n)
            .map(|i| {
                let mut x = make().shard(i, n).unwrap();
                while !x.step(13) {}
                x
            })
            .collect();
        // Every candidate in one shard; a block shape in one shard only.
        let lens: Vec<u64> = shards.iter().map(|x| x.progress().1).collect();
        assert_eq!(lens.iter().sum::<u64>(), one.candidates, "{n} shards");
        let mut owner = std::collections::BTreeMap::new();
        for (i, x) in shards.iter().enumerate() {
            for r in &x.result().top {
                let c = r.candidate;
                let shape = [c.tp1, c.tp2, c.mbs, c.nv_tp1, c.nv_tp2];
                assert_eq!(*owner.entry(shape).or_insert(i), i, "{n} shards: {shape:?} in two shards");
            }
        }
        // Everything but the configurations priced (each shard's bounds prune against its own list).
        let same = |mut r: SearchResult| {
            r.evaluations = one.evaluations;
            r
        };
        assert_eq!(same(merge_shards(&shards).unwrap()), one, "{n} shards");
        let states: Vec<_> = shards.iter().map(Search::shard_state).collect();
        assert_eq!(same(make().merged(&states).unwrap().result()), one, "{n} shards, merged from states");
    }
}

/// Mixture-of-Experts models add the expert degrees (ep, etp) under every execution; when no
/// degree fits under a light execution the evaluator returns the leanest one, which is not the
/// fastest: the bounds must still hold over every degree. Mixtral 8x22B on 64 H100 is tight enough
/// that feasibility changes with both the execution and ep.
#[test]
fn pruned_moe_search_equals_pricing_every_combination() {
    let key = |r: &Ranked| (r.candidate, r.throughput_samples_per_s, r.execution);
    for (model, n, g) in [("mixtral-8x22b", 64, 256), ("deepseek-v2-lite", 16, 512)] {
        let w = Workload::from_catalog(catalog::find_model(model).unwrap()).unwrap();
        let (params, setup) = extended(w, "nvidia_h100_sxm5_80gb", None);
        let s = spec(w.to_shape(), params, Strategy::OneD, n, g, 8);
        let choices = ExecutionChoices::SEARCH_ALL;
        let got = Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap().finish();
        let want = brute_force(&s, &setup, choices);
        assert!(!want.is_empty(), "{model}");
        assert_eq!(got.top.iter().map(key).collect::<Vec<_>>(), want.iter().map(key).collect::<Vec<_>>(), "{model}");
        // Two shards merged equal the single run.
        let shards: Vec<Search> = (0..2)
            .map(|i| {
                let mut x = Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap().shard(i, 2).unwrap();
                while !x.step(usize::MAX) {}
                x
            })
            .collect();
        assert_eq!(merge_shards(&shards).unwrap().top, got.top, "{model} shards");
    }
}

/// The search's pruning (candidate-level time bounds, per-level bounds with the pipeline bubble,
/// expert layouts skipped by their floors) leaves the answer as pricing every combination of
/// every candidate: the same rows in the same order with the same numbers, the same candidate
/// and feasible counts, on dense and MoE models, small and large, both strategies, a short and a
/// long list.
#[test]
fn pruned_search_equals_the_exhaustive_one_on_dense_and_moe_scenarios() {
    let cases = [
        ("llama3-8b", "nvidia_h100_sxm5_80gb", 16, 128, Strategy::OneD, 1),
        ("llama3-70b", "nvidia_h100_sxm5_80gb", 256, 512, Strategy::ContextParallel2D, 20),
        ("qwen3-30b-a3b", "nvidia_h100_sxm5_80gb", 32, 256, Strategy::OneD, 5),
        ("mixtral-8x7b", "nvidia_h100_sxm5_80gb", 64, 256, Strategy::ContextParallel2D, 10),
        ("deepseek-v3", "nvidia_h800_sxm5_80gb", 256, 1024, Strategy::OneD, 10),
    ];
    for (model, sys, n, g, strategy, k) in cases {
        let w = Workload::from_catalog(catalog::find_model(model).unwrap()).unwrap();
        let (params, setup) = extended(w, sys, None);
        let s = spec(w.to_shape(), params, strategy, n, g, k);
        let choices = ExecutionChoices::SEARCH_ALL;
        let got = Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap().finish();
        let want = brute_force(&s, &setup, choices);
        assert!(!want.is_empty(), "{model} {n}");
        let key = |r: &Ranked| (r.candidate, r.throughput_samples_per_s.to_bits(), r.mem_gb.to_bits(), r.execution);
        assert_eq!(
            got.top.iter().map(key).collect::<Vec<_>>(),
            want.iter().map(key).collect::<Vec<_>>(),
            "{model} {strategy} {n}"
        );
        assert!(got.top.iter().zip(&want).all(|(a, b)| a.totals == b.totals), "{model} totals");
        // Every candidate is counted as considered, pruned or not; feasible = fits with the
        // leanest execution (full recomputation, ZeRO-3 over the whole group).
        let space = Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap();
        assert_eq!(got.candidates, space.space().len(), "{model} candidates");
        let lean = ExtendedOptions { recompute: Recompute::Full, sharding: Sharding::Zero3, ..setup.options };
        let mut ev = ExtendedEvaluator::new(&setup.workload, &setup.hardware, &lean, strategy, g).unwrap();
        let fits = space
            .space()
            .iter()
            .filter(|c| ev.evaluate(c).is_ok_and(|o| o.need_gb <= setup.hardware.hbm_capacity_gb))
            .count() as u64;
        assert_eq!(got.feasible, fits, "{model} feasible");
    }
}

/// What the MoE search's candidate bound reads: the floors without recomputation taken from an
/// evaluator at any recomputation level equal, bit for bit, the floors of an evaluator without
/// recomputation (a block's forward and backward do not read the level).
#[test]
fn floors_without_recomputation_from_any_level() {
    for (model, n, g, strategy) in [
        ("deepseek-v3", 256, 1024, Strategy::OneD),
        ("mixtral-8x7b", 64, 256, Strategy::ContextParallel2D),
        ("qwen3-30b-a3b", 32, 256, Strategy::OneD),
    ] {
        let w = Workload::from_catalog(catalog::find_model(model).unwrap()).unwrap();
        let (params, setup) = extended(w, "nvidia_h100_sxm5_80gb", None);
        let s = spec(w.to_shape(), params, strategy, n, g, 1);
        let space = Search::in_mode(s, Some(setup.clone()), ExecutionChoices::SEARCH_ALL).unwrap();
        let at = |r: Recompute| {
            let o = ExtendedOptions { recompute: r, ..setup.options };
            ExtendedEvaluator::new(&setup.workload, &setup.hardware, &o, strategy, g).unwrap()
        };
        let mut none = at(Recompute::None);
        let mut checked = 0;
        for r in [Recompute::Selective, Recompute::Full] {
            let mut ev = at(r);
            for c in space.space().iter() {
                let want = none.moe_time_floor(&c);
                assert_eq!(ev.moe_time_floor_without_recompute(&c).map(f64::to_bits), want.map(f64::to_bits), "{c:?}");
                // With recomputation the floor is no lower.
                assert!(ev.moe_time_floor(&c).zip(want).is_none_or(|(a, b)| a >= b));
                checked += u64::from(want.is_some());
            }
        }
        assert!(checked > 0, "{model}");
    }
}

/// The least memory a search reports ([`SearchResult::min_mem_gb`]) is there only when nothing
/// fits, then the least over every candidate's leanest execution (an MoE search reads every
/// expert layout of each); once a candidate fits it is `None` (an MoE search then reads a
/// candidate's expert layouts only until one fits). The same for one run and merged shards
/// (configurations priced aside).
#[test]
fn the_least_memory_is_reported_when_nothing_fits() {
    for (model, n, g, fits) in [("deepseek-v3", 16, 64, false), ("mixtral-8x7b", 64, 256, true)] {
        let w = Workload::from_catalog(catalog::find_model(model).unwrap()).unwrap();
        let (params, setup) = extended(w, "nvidia_h100_sxm5_80gb", None);
        let s = spec(w.to_shape(), params, Strategy::OneD, n, g, 3);
        let choices = ExecutionChoices::SEARCH_ALL;
        let new = || Search::in_mode(s.clone(), Some(setup.clone()), choices).unwrap();
        let one = new().finish();
        let shards: Vec<Search> = (0..3)
            .map(|i| {
                let mut shard = new().shard(i, 3).unwrap();
                while !shard.step(usize::MAX) {}
                shard
            })
            .collect();
        // Configurations priced depend on the split (the bounds read each shard's list).
        let merged = SearchResult { evaluations: one.evaluations, ..merge_shards(&shards).unwrap() };
        assert_eq!(merged, one, "{model}");
        assert_eq!(one.feasible > 0, fits, "{model}");
        if fits {
            assert_eq!(one.min_mem_gb, None, "{model}");
            continue;
        }
        let lean = ExtendedOptions { recompute: Recompute::Full, sharding: Sharding::Zero3, ..setup.options };
        let mut ev = ExtendedEvaluator::new(&setup.workload, &setup.hardware, &lean, Strategy::OneD, g).unwrap();
        let space = new();
        let least =
            space.space().iter().filter_map(|c| ev.evaluate(&c).ok()).map(|o| o.need_gb).fold(f64::INFINITY, f64::min);
        assert!(least.is_finite() && least > setup.hardware.hbm_capacity_gb, "{model} {least}");
        assert_eq!(one.min_mem_gb, Some(least), "{model}");
    }
}
