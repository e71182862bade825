//! One memory story (issue 29 §2, issue 32 §3): the search (what the explorer and `fmperf search`
//! rank) and the import of a launch file (`fmperf estimate --from`) give one memory figure and
//! one time for one layout on one training stack, and the search never ranks first a layout the
//! stack cannot hold. Llama 3 70B on 512 H100 (DP 64, TP 4, PP 2, micro-batch 1) as a
//! Megatron-LM script: its distributed optimizer keeps an unsharded FP32 gradient buffer
//! (4 B × 70.6 B / 8 = 35.3 GB per device), so the layout does not fit an 80 GB H100 without
//! recomputation, and a search on the Megatron stack must not offer the ZeRO-2 that would
//! shard that buffer away.

use fmperf_core::extended::{Sharding, Stack};
use fmperf_core::search::ResultRow;
use fmperf_core::vocab::Fits;
use fmperf_launch::best::{search, strategy_for};
use fmperf_launch::{LaunchScenario, Overrides, estimate, estimate_text, hardware};

const SCRIPT: &str = include_str!("../../../examples/launch/megatron-llama3-70b-512.sh");

fn overrides() -> Overrides {
    Overrides { system: Some("nvidia_h100_sxm5_80gb".into()), ..Overrides::default() }
}

#[test]
fn the_import_states_megatrons_gradient_buffer_and_its_verdict() {
    let (launch, e) = estimate_text(SCRIPT, Some("run.sh"), &overrides()).unwrap();
    assert_eq!(e.scenario.options.stack, Stack::Megatron);
    assert_eq!(e.scenario.options.sharding, Sharding::Zero1);
    // The unsharded FP32 main-gradient buffer of the device's model part.
    let params_per_device = e.evaluation.breakdown.parameters / 8.0;
    let grads = e.evaluation.memory.gradients_gb;
    assert!((grads / (4.0 * params_per_device * 1e-9) - 1.0).abs() < 0.02, "{grads} GB");
    assert_eq!(e.memory.fits.as_str(), "no");
    let j = e.to_json(&launch);
    assert_eq!(j["config"]["stack"], "megatron");
    assert!(j["memory"]["band_gb"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_search_and_the_import_agree_and_the_first_row_fits_the_stack() {
    let (_, e) = estimate_text(SCRIPT, Some("run.sh"), &overrides()).unwrap();
    let s = &e.scenario;
    let hw = hardware(&e.system_id, s.options.hardware.precision, s.options.hardware.measured_ceiling).unwrap().1;
    // The search with the file's switches (the stack among them) chooses the execution.
    // (the file's `recompute none` set back to the default, so that the search chooses it)
    let options = fmperf_core::extended::ExtendedOptions {
        recompute: fmperf_core::extended::ExtendedOptions::realistic().recompute,
        ..s.options
    };
    let result =
        search(&s.workload, &hw, &options, strategy_for(s), s.devices, s.layout.global_batch, 5).unwrap().finish();
    let first = result.top.first().expect("a layout fits");
    let exec = first.execution.expect("extended mode");
    assert_ne!(exec.sharding, Sharding::Zero2, "Megatron has no ZeRO-2");
    assert!(result.top.iter().all(|r| r.execution.is_some_and(|x| x.sharding != Sharding::Zero2)));
    let row = ResultRow::of(first, s.layout.global_batch).with_capacity(
        hw.hbm_capacity_gb,
        fmperf_core::validate::memory::shipped_band(),
        fmperf_core::validate::memory::shipped_under_band(),
    );
    // The search kept it by its need without the allocator's cache.
    assert!(first.need_gb <= hw.hbm_capacity_gb);
    assert_ne!(row.fits, Some(Fits::No));
    let json = row.to_json();
    assert!(json["memory_band_gb"].as_f64().unwrap() > 0.0 && json["fits"].is_string(), "{json}");
    // The same layout and execution imported: the same memory and time.
    let (layout, chosen) = fmperf_launch::emit::choice(first, s.layout.global_batch, &options).unwrap();
    let same = estimate(&LaunchScenario { layout, options: chosen, ..s.clone() }, &e.system_id, &hw).unwrap();
    assert!((same.evaluation.mem_gb - first.mem_gb).abs() < 1e-9, "{} vs {}", same.evaluation.mem_gb, first.mem_gb);
    assert!((same.evaluation.totals.t - first.time_per_iteration_s).abs() < 1e-9);
    assert!((same.memory.device_gb - first.mem_gb).abs() < 1e-9);
    // On DeepSpeed's stack the same search may shard the gradients (ZeRO-2) and is at least as fast.
    let ds = fmperf_core::extended::ExtendedOptions { stack: Stack::DeepSpeed, ..options };
    let r2 = search(&s.workload, &hw, &ds, strategy_for(s), s.devices, s.layout.global_batch, 5).unwrap().finish();
    assert!(r2.top[0].throughput_samples_per_s >= first.throughput_samples_per_s * (1.0 - 1e-12));
}

/// NeMo 1's `optim.name: distributed_fused_adam` is Apex's `DistributedFusedAdam`, which
/// "implements the ZeRO-2 algorithm, which distributes the optimizer state and gradients"
/// (apex/contrib/optimizers/distributed_fused_adam.py): GPT-3 175B in FP8 on 256 H100 80 GB of
/// Google's A3 Mega recipe (real file 65: TP 4, PP 8, VPP 2, DP 8) ran; read as Megatron-Core's
/// distributed optimizer, its unsharded FP32 gradient buffer (4 B × 5.5 B parameters = 22 GB per
/// device) made it "does not fit".
#[test]
fn nemo1s_distributed_fused_adam_shards_the_gradients() {
    let text = include_str!("data/real/65-gpurecipes_nemo_gpt3-175b-256gpus-fp8.yaml");
    let o = Overrides { gpus: Some(256), ..overrides() };
    let (_, e) = estimate_text(text, Some("gpt3-175b-256gpus-fp8.yaml"), &o).unwrap();
    assert_eq!(e.scenario.options.sharding, Sharding::Zero2);
    let dp = e.scenario.layout.dp as f64;
    let params_per_device = e.evaluation.breakdown.parameters / 32.0;
    let grads = e.evaluation.memory.gradients_gb;
    assert!((grads / (4.0 * params_per_device / dp * 1e-9) - 1.0).abs() < 0.05, "{grads} GB over DP {dp}");
    assert_ne!(e.memory.fits.as_str(), "no", "{:?}", e.memory);
}
