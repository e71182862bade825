//! Evaluating configurations of Mixture-of-Experts models in extended mode: FLOPs, memory and the
//! expert-parallel dimension, checked by hand on small shapes.

use fmperf_core::extended::moe::{Dispatcher, Load, MoeOptions};
use fmperf_core::extended::{
    ExtendedEvaluator, ExtendedOptions, Hardware, HardwareChoices, Layout, Recompute, Sharding, Workload, evaluate,
};
use fmperf_core::moe_shape::{MoeShape, Router};
use fmperf_core::vocab::Candidate;
use fmperf_core::{Strategy, SystemParams};

/// A small MoE: h = 1024, 8 heads, 4 blocks (first dense), 16 experts of width 512, top-2, one
/// shared expert of width 512, SwiGLU, sequence 1024, no vocabulary.
fn tiny() -> Workload {
    Workload {
        seq_len: 1024,
        hidden: 1024,
        heads: 8,
        kv_heads: 8,
        head_dim: 128,
        layers: 4,
        ffn_hidden: 4096,
        gated_mlp: true,
        vocab: None,
        moe: Some(MoeShape {
            experts: 16,
            expert_ffn: 512,
            top_k: 2,
            shared_experts: 1,
            shared_ffn: 512,
            gated: true,
            first_dense: 1,
            moe_every: 1,
            router: Router::Softmax,
            extras: fmperf_core::moe_shape::ExpertExtras::default(),
        }),
        mla: None,
        mtp_layers: 0,
        tied_embeddings: false,
        sliding_window: None,
    }
}

fn hw() -> Hardware {
    Hardware::from_params(&SystemParams::h200().with_domain_size(8), true)
}

fn opts() -> ExtendedOptions {
    ExtendedOptions {
        hardware: HardwareChoices { memory_overheads: false, ..HardwareChoices::realistic() },
        recompute: Recompute::None,
        moe: MoeOptions {
            load: Load::Forced,
            a2a_overlap: fmperf_core::extended::moe::A2aOverlap::Off,
            ..Default::default()
        },
        ..ExtendedOptions::realistic()
    }
}

#[test]
fn iteration_flops_by_hand() {
    // One device, one sequence: dense block 2·s·(4h² + 3·h·f) + attention 4·s²·h/2; MoE block
    // 2·s·(4h² + h·E + 3·h·f_e·(k + 1)) + the same attention; backward twice (attention 2.5×).
    let w = tiny();
    let e = evaluate(&w, &hw(), &Layout::placed(1, 1, 1, 1, 1, 1, 8), &opts()).unwrap();
    let (s, h, f, fe, ex) = (1024.0, 1024.0, 4096.0, 512.0, 16.0);
    let att = 4.0 * s * s * h / 2.0;
    let dense_fwd = 2.0 * s * (4.0 * h * h + 3.0 * h * f);
    let moe_fwd = 2.0 * s * (4.0 * h * h + h * ex + 3.0 * h * fe * 3.0);
    let want = (3.0 * (dense_fwd + 3.0 * moe_fwd) + 3.5 * 4.0 * att) * 1e-12;
    let got = e.totals.flops_per_gpu;
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
    let m = e.moe.unwrap();
    assert_eq!((m.moe_blocks, m.dense_blocks), (3, 1));
    assert_eq!((m.experts.ep, m.experts.edp), (1, 1));
    // No exchange on one device.
    assert_eq!(m.times.a2a_s, 0.0);
}

#[test]
fn expert_memory_is_sharded_by_ep_and_edp() {
    let w = tiny();
    let hw = hw();
    let (h, fe) = (1024.0, 512.0);
    let experts_per_block = 16.0 * 3.0 * h * fe;
    // 8 devices, dp 8: ep 1 holds all experts; ep 8 holds 2 experts per block.
    let l = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let e1 = evaluate(&w, &hw, &l, &opts()).unwrap();
    let e8 = evaluate(&w, &hw, &l.with_experts(8, 1), &opts()).unwrap();
    let m1 = e1.moe.unwrap();
    let m8 = e8.moe.unwrap();
    assert!((m1.expert_weights_gb - 3.0 * experts_per_block * 2.0 * 1e-9).abs() < 1e-12);
    assert!((m8.expert_weights_gb - 3.0 * experts_per_block / 8.0 * 2.0 * 1e-9).abs() < 1e-12);
    // ZeRO-1: optimizer states (12 B) over the expert data-parallel group: edp 8 with ep 1, 1 with ep 8.
    assert!((m1.expert_optimizer_gb - 3.0 * experts_per_block * 12.0 / 8.0 * 1e-9).abs() < 1e-12);
    assert!((m8.expert_optimizer_gb - 3.0 * experts_per_block / 8.0 * 12.0 * 1e-9).abs() < 1e-12);
    // Gradients (FP32, not sharded under ZeRO-1) follow the weights.
    assert!((m8.expert_gradients_gb - 3.0 * experts_per_block / 8.0 * 4.0 * 1e-9).abs() < 1e-12);
    assert!(e8.mem_gb < e1.mem_gb);
    // ep 8 exchanges tokens; the dense part is the same.
    assert!(m8.times.a2a_s > 0.0 && m1.times.a2a_s == 0.0);
    // ZeRO-3 (FSDP2: FP32 master shards, 4 B) shards the expert weights over edp as well, plus the
    // last MoE block's experts gathered at the loss (16-bit, reshard after forward).
    let z3 = ExtendedOptions { sharding: Sharding::Zero3, ..opts() };
    let e1z = evaluate(&w, &hw, &l, &z3).unwrap().moe.unwrap();
    let want = (3.0 * 4.0 / 8.0 + 2.0) * experts_per_block * 1e-9;
    assert!((e1z.expert_weights_gb - want).abs() < 1e-12, "{}", e1z.expert_weights_gb);
}

#[test]
fn rules_have_clear_messages() {
    let w = tiny();
    let hw = hw();
    let l = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let e = evaluate(&w, &hw, &l.with_experts(3, 1), &opts()).unwrap_err();
    assert_eq!(e.field(), Some("layout.ep"));
    assert!(e.to_string().contains("must divide the routed experts 16"), "{e}");
    let e = evaluate(&w, &hw, &l.with_experts(16, 1), &opts()).unwrap_err();
    assert!(e.to_string().contains("must divide the ranks of one pipeline stage"), "{e}");
    let dense = Workload { moe: None, ..w };
    let e = evaluate(&dense, &hw, &l.with_experts(2, 1), &opts()).unwrap_err();
    assert!(e.to_string().contains("dense model has no experts"), "{e}");
}

#[test]
fn the_evaluator_picks_the_best_expert_degrees_or_the_fixed_ones() {
    let w = tiny();
    let hw = hw();
    let c = Candidate::one_d(8, 1, 1, 1, 1, 8, 1);
    let mut ev = ExtendedEvaluator::new(&w, &hw, &opts(), Strategy::OneD, 64).unwrap();
    let best = ev.evaluate_full(&c).unwrap();
    // Every (ep, etp) of the space evaluated: the kept one is at least as fast as each.
    for ep in [1, 2, 4, 8] {
        let l = Layout::from_candidate(&c, 64).unwrap().with_experts(ep, 1);
        let e = evaluate(&w, &hw, &l, &opts()).unwrap();
        assert!(best.throughput_samples_per_s >= e.throughput_samples_per_s);
    }
    let fixed = ExtendedOptions { moe: MoeOptions { ep: Some(4), ..opts().moe }, ..opts() };
    let mut ev = ExtendedEvaluator::new(&w, &hw, &fixed, Strategy::OneD, 64).unwrap();
    assert_eq!(ev.evaluate_full(&c).unwrap().moe.unwrap().experts.ep, 4);
    let bad = ExtendedOptions { moe: MoeOptions { ep: Some(32), ..opts().moe }, ..opts() };
    let mut ev = ExtendedEvaluator::new(&w, &hw, &bad, Strategy::OneD, 64).unwrap();
    assert_eq!(ev.evaluate_full(&c).unwrap_err().field(), Some("layout.ep"));
}

#[test]
fn node_limited_dispatch_and_overlap_cut_the_exposed_exchange() {
    let w = tiny();
    let hw = hw();
    // 64 devices, ep 64 over 8 domains.
    let l = Layout::placed(1, 1, 1, 64, 1, 64, 8).with_experts(16, 1);
    let flat = evaluate(&w, &hw, &l, &opts()).unwrap().moe.unwrap().times;
    let lim = ExtendedOptions {
        moe: MoeOptions { dispatcher: Dispatcher::Hierarchical { max_domains: Some(1) }, ..opts().moe },
        ..opts()
    };
    let limited = evaluate(&w, &hw, &l, &lim).unwrap().moe.unwrap().times;
    assert!(limited.a2a_s < flat.a2a_s);
    let over = ExtendedOptions {
        moe: MoeOptions { a2a_overlap: fmperf_core::extended::moe::A2aOverlap::On, ..opts().moe },
        ..opts()
    };
    let o = evaluate(&w, &hw, &l, &over).unwrap().moe.unwrap().times;
    assert!(o.a2a_exposed_s < flat.a2a_exposed_s && o.a2a_s == flat.a2a_s);
}

#[test]
fn moe_presets_resolve_every_panel_in_extended_mode() {
    let p = fmperf_core::presets::find_preset("moe").unwrap();
    assert_eq!(p.panels.len(), 6);
    for panel in &p.panels {
        let spec = panel.text.to_spec(None, None).unwrap();
        assert!(spec.mode.options().is_some(), "{}: extended mode", panel.id);
        assert!(
            spec.axes
                .iter()
                .any(|a| a.key.name().starts_with("moe.") || a.key.name() == "domain" || a.key.name() == "model")
        );
    }
}

#[test]
fn random_moe_layouts_never_panic() {
    let w = tiny();
    let hw = hw();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut ok = 0;
    for _ in 0..5000 {
        let mut pick = || 1u64 << (next() % 6);
        let (tp, cp, pp, dp, mbs, ep, etp) = (pick(), pick(), pick(), pick(), pick(), pick(), pick());
        let l = Layout::placed(tp, cp, pp, dp, mbs, dp * mbs * 2, 8).with_experts(ep, etp);
        if let Ok(e) = evaluate(&w, &hw, &l, &opts()) {
            assert!(e.totals.t.is_finite() && e.totals.t > 0.0 && e.mem_gb.is_finite());
            ok += 1;
        }
    }
    assert!(ok > 100, "{ok}");
}

#[test]
fn the_moe_block_is_a_list_of_operations_and_memory_names_the_experts() {
    use fmperf_core::extended::block_operations::block_operations;
    use fmperf_core::extended::ops::OpKind;
    let w = tiny();
    let hw = hw();
    let l = Layout::placed(1, 1, 1, 8, 1, 8, 8).with_experts(8, 1);
    let ops = block_operations(&w, &hw, &l, &opts()).unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o.name).collect();
    for n in ["attn_norm", "qkv_proj", "mlp_norm", "moe_router", "moe_shared_experts", "moe_dispatch_combine"] {
        assert!(names.contains(&n), "{n} missing in {names:?}");
    }
    // The layer table's operations add up to the evaluation: per MoE block, the routed experts'
    // parameters (3·h·f_e per expert, 2 experts per rank) and the exposed exchange of the three MoE
    // blocks (one micro-batch).
    let (h, fe) = (1024.0, 512.0);
    let experts = ops.iter().find(|o| o.name == "moe_experts").unwrap();
    assert_eq!(experts.kind, OpKind::Matmul);
    assert_eq!(experts.parameters, 2.0 * 3.0 * h * fe);
    let e = evaluate(&w, &hw, &l, &opts()).unwrap();
    let m = e.moe.unwrap();
    let a2a: f64 = ops.iter().filter(|o| o.name == "moe_dispatch_combine").map(|o| o.fwd.time() + o.bwd.time()).sum();
    assert!((3.0 * a2a - m.times.a2a_exposed_s).abs() < 1e-12 * m.times.a2a_exposed_s.max(1.0));
    // The memory model lists the routed experts' states as parts of their own.
    assert!(e.memory_estimate.part("expert_weights") > 0.0);
    assert_eq!(e.memory_estimate.part("expert_weights"), m.expert_weights_gb);
    let total = fmperf_core::extended::memory_estimate(&w, &hw, &l, &opts()).unwrap();
    assert_eq!(total, e.memory_estimate);
}

/// The evaluator prunes expert degrees by a time floor (`moe_time_floor_s`); its choice must equal
/// pricing every `(ep, etp)` with the rule it documents: the fastest that fits, else the least
/// memory, ties to the first in the choices' order. Checked on a sample of the DeepSeek-V3 search
/// space on 2,048 H800 (both fitting and non-fitting candidates) under two executions.
#[test]
fn pruned_expert_degrees_equal_pricing_every_choice() {
    use fmperf_core::catalog::{MappingOptions, find_model, find_system};
    use fmperf_core::cost::ExtendedSetup;
    use fmperf_core::extended::moe::experts::expert_choices;
    use fmperf_core::search::{ExecutionChoices, Search, SearchSpec};
    let w = Workload::from_catalog(find_model("deepseek-v3").unwrap()).unwrap();
    let sys = find_system("nvidia_h800_sxm5_80gb").unwrap();
    let base = ExtendedOptions::realistic();
    let hw = Hardware::from_catalog(sys, base.hardware.precision, true, &MappingOptions::default()).unwrap();
    let spec = SearchSpec {
        model: w.to_shape(),
        system: SystemParams::h200().with_domain_size(hw.domain_size()),
        strategy: Strategy::OneD,
        n_gpus: 2048,
        global_batch: 15360,
        top_k: 10,
    };
    let setup = ExtendedSetup { workload: w, hardware: hw.clone(), options: base };
    let search = Search::in_mode(spec, Some(setup.clone()), ExecutionChoices::fixed(&setup.options)).unwrap();
    let lean = ExtendedOptions { recompute: Recompute::Full, sharding: Sharding::Zero3, ..base };
    let (mut fits, mut not) = (0, 0);
    for opts in [base, lean] {
        let mut ev = ExtendedEvaluator::new(&w, &hw, &opts, Strategy::OneD, 15360).unwrap();
        for c in search.space().iter().step_by(7) {
            let layout = Layout::from_candidate(&c, 15360).unwrap();
            let mut best: Option<fmperf_core::extended::ExtendedEvaluation> = None;
            for (ep, etp) in expert_choices(&layout, &w.moe.unwrap(), None, None) {
                let e = evaluate(&w, &hw, &layout.with_experts(ep, etp), &opts).unwrap();
                let better = match &best {
                    None => true,
                    Some(b) if e.feasible != b.feasible => e.feasible,
                    Some(b) if e.feasible => e.throughput_samples_per_s > b.throughput_samples_per_s,
                    Some(b) => e.mem_gb < b.mem_gb,
                };
                if better {
                    best = Some(e);
                }
            }
            let want = best.unwrap();
            if want.feasible {
                fits += 1
            } else {
                not += 1
            }
            assert_eq!(ev.evaluate_full(&c).unwrap(), want, "{c:?}");
        }
    }
    assert!(fits > 100 && not > 100, "{fits} fit, {not} do not");
}

/// An evaluator switched between shardings, shard groups and interleave degrees
/// ([`ExtendedEvaluator::reschedule`], what the search does to share block costs per
/// recomputation level) gives what a fresh evaluator of the same switches gives: its cached block
/// costs read none of the three. DeepSeek-V3 (MoE) and Llama 3 70B (dense) on H800, pipelined
/// candidates so interleaving matters.
#[test]
fn rescheduled_evaluators_equal_fresh_ones() {
    use fmperf_core::catalog::{MappingOptions, find_model, find_system};
    use fmperf_core::cost::ExtendedSetup;
    use fmperf_core::search::{ExecutionChoices, Search, SearchSpec};
    let sys = find_system("nvidia_h800_sxm5_80gb").unwrap();
    let base = ExtendedOptions::realistic();
    let hw = Hardware::from_catalog(sys, base.hardware.precision, true, &MappingOptions::default()).unwrap();
    let schedules = [
        (Sharding::Zero1, None, 1),
        (Sharding::Zero3, None, 2),
        (Sharding::Zero3, Some(8), 1),
        (Sharding::Zero1, None, 4),
    ];
    let mut compared = 0;
    for (model, gpus, batch) in [("deepseek-v3", 2048, 15360), ("llama3-70b", 1024, 512)] {
        let w = Workload::from_catalog(find_model(model).unwrap()).unwrap();
        let spec = SearchSpec {
            model: w.to_shape(),
            system: SystemParams::h200().with_domain_size(hw.domain_size()),
            strategy: Strategy::OneD,
            n_gpus: gpus,
            global_batch: batch,
            top_k: 10,
        };
        let search = Search::in_mode(
            spec,
            Some(ExtendedSetup { workload: w, hardware: hw.clone(), options: base }),
            ExecutionChoices::fixed(&base),
        )
        .unwrap();
        let candidates: Vec<Candidate> = search.space().iter().filter(|c| c.pp > 1).step_by(11).take(60).collect();
        let mut shared = ExtendedEvaluator::new(&w, &hw, &base, Strategy::OneD, batch).unwrap();
        for c in &candidates {
            for &(sharding, shard_group, interleave) in &schedules {
                let o = ExtendedOptions { sharding, shard_group, interleave, ..base };
                shared.reschedule(sharding, shard_group, interleave).unwrap();
                let mut fresh = ExtendedEvaluator::new(&w, &hw, &o, Strategy::OneD, batch).unwrap();
                match (shared.evaluate_full(c), fresh.evaluate_full(c)) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a, b, "{model} {c:?} {o:?}");
                        compared += 1;
                    }
                    (a, b) => assert_eq!(a.is_ok(), b.is_ok(), "{model} {c:?}"),
                }
            }
        }
    }
    assert!(compared > 200, "{compared} compared");
    let mut ev = ExtendedEvaluator::new(
        &Workload::from_catalog(fmperf_core::catalog::find_model("llama3-70b").unwrap()).unwrap(),
        &hw,
        &base,
        Strategy::OneD,
        512,
    )
    .unwrap();
    let e = ev.reschedule(Sharding::Zero1, Some(0), 1).unwrap_err().to_string();
    assert!(e.contains("shard_group"), "{e}");
}

#[test]
fn the_expert_all_to_all_is_its_own_time_part() {
    use fmperf_core::vocab::TimePart;
    let w = tiny();
    let hw = hw();
    // TP 1: no tensor-parallel collective at all; the exposed dispatch and combine are the EP part.
    let l = Layout::placed(1, 1, 1, 64, 1, 64, 8).with_experts(16, 1);
    let e = evaluate(&w, &hw, &l, &opts()).unwrap();
    let (t, m) = (e.totals, e.moe.unwrap().times);
    assert_eq!(t.t_tp_comm, 0.0);
    assert!(t.t_ep_comm > 0.0);
    assert!((t.t_ep_comm - m.a2a_exposed_s).abs() < 1e-12 * m.a2a_exposed_s, "{} vs {}", t.t_ep_comm, m.a2a_exposed_s);
    let sum: f64 = TimePart::ALL.iter().map(|p| p.of(&t)).sum();
    assert!((sum - t.t).abs() < 1e-9 * t.t, "{sum} vs {}", t.t);
    assert_eq!(TimePart::shown([&t]), TimePart::ALL.to_vec());
    // Overlap hides part of it; the hidden part is in no time part.
    let over = ExtendedOptions {
        moe: MoeOptions { a2a_overlap: fmperf_core::extended::moe::A2aOverlap::On, ..opts().moe },
        ..opts()
    };
    let o = evaluate(&w, &hw, &l, &over).unwrap().totals;
    assert!(o.t_ep_comm < t.t_ep_comm && o.t_tp_comm == 0.0);
    // A dense model has none, and its views leave the part out.
    let dense = Workload { moe: None, ..w };
    let d = evaluate(&dense, &hw, &Layout::placed(8, 1, 1, 8, 1, 8, 8), &opts()).unwrap().totals;
    assert_eq!(d.t_ep_comm, 0.0);
    assert!(d.t_tp_comm > 0.0);
    assert!(!TimePart::shown([&d]).contains(&TimePart::EpComm));
    // Serialised, a dense model's totals are what they always were; an MoE model's add the key.
    let (dj, mj) = (serde_json::to_value(d).unwrap(), serde_json::to_value(t).unwrap());
    assert!(dj.get("t_ep_comm").is_none() && mj["t_ep_comm"].as_f64() == Some(t.t_ep_comm));
    assert_eq!(serde_json::from_value::<fmperf_core::vocab::Totals>(dj).unwrap(), d);
    assert_eq!(serde_json::from_value::<fmperf_core::vocab::Totals>(mj).unwrap(), t);
    assert_eq!(TimePart::EpComm.key(), "ep_comm");
    assert_eq!(TimePart::EpComm.label(), "EP all-to-all");
}
