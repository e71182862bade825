//! Sweeps in both modes: an extended-mode point equals an extended search bit for bit, reference
//! mode stays the default, points say why they cannot run (2D SUMMA, missing catalog values,
//! sparsity in reference mode), weight sparsity moves only wafer-scale parts (by hand-computed
//! FLOPs), and the outputs say which mode and switches priced them.

use fmperf_core::catalog::{self, MappingOptions, Precision};
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::{ExtendedOptions, Hardware, Recompute, Workload};
use fmperf_core::mode::{Mode, SUMMA_UNSUPPORTED};
use fmperf_core::resolve::point::SPARSITY_UNSUPPORTED;
use fmperf_core::search::{ExecutionChoices, Search, SearchSpec};
use fmperf_core::sweep::{PointResult, Status, Sweep, SweepResult, SweepText, export};
use fmperf_core::{Strategy, SystemParams};

fn text(model: &str, system: &str, batch: &str, axes: &[&str]) -> SweepText {
    SweepText {
        model: model.into(),
        system: system.into(),
        global_batch: Some(batch.into()),
        axes: axes.iter().map(|a| a.to_string()).collect(),
        ..SweepText::default()
    }
}

fn run(t: SweepText) -> SweepResult {
    Sweep::new(t.to_spec(None, None).unwrap()).unwrap().finish()
}

fn extended(mut t: SweepText, ext: &str) -> SweepText {
    t.mode = Some("extended".into());
    t.ext = (!ext.is_empty()).then(|| ext.to_string());
    t
}

fn point(r: &SweepResult, i: usize) -> &PointResult {
    &r.points[i]
}

#[test]
fn extended_points_equal_extended_searches() {
    let t = extended(text("llama3-8b", "nvidia_h100_sxm5_80gb", "256", &["gpus=8,32"]), "recompute=full");
    let r = run(t);
    let sys = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let workload = Workload::from_catalog(catalog::find_model("llama3-8b").unwrap()).unwrap();
    let options = ExtendedOptions { recompute: Recompute::Full, ..ExtendedOptions::realistic() };
    let hardware = Hardware::from_catalog(sys, Precision::Bf16, true, &MappingOptions::default()).unwrap();
    let params = catalog::to_system_params(sys, &MappingOptions::default()).unwrap().params;
    for p in &r.points {
        assert_eq!(p.mode, Mode::Extended(options));
        let i = p.inputs.as_ref().unwrap();
        assert_eq!(i.strategies, vec![Strategy::OneD, Strategy::ContextParallel2D], "2d is not searched");
        assert!(i.notes.iter().any(|n| n.contains(SUMMA_UNSUPPORTED)));
        for s in [Strategy::OneD, Strategy::ContextParallel2D] {
            let spec = SearchSpec {
                model: workload.to_shape(),
                system: params.clone(),
                strategy: s,
                n_gpus: i.devices,
                global_batch: 256,
                top_k: 1,
            };
            let setup = ExtendedSetup { workload, hardware: hardware.clone(), options };
            let found =
                Search::in_mode(spec, Some(setup.clone()), ExecutionChoices::fixed(&setup.options)).unwrap().finish();
            let mine = p.strategy(s).unwrap();
            assert_eq!(mine.candidates, found.candidates);
            assert_eq!(mine.feasible, found.feasible);
            assert_eq!(mine.best, found.top.first().copied(), "{s} at {}", i.devices);
        }
        assert!(p.strategy(Strategy::Summa2D).is_none());
        let b = p.best.as_ref().unwrap();
        assert!(b.block_fwd_tflops > 0.0 && b.block_fwd_tflops < 989.4);
    }
    // The same sweep in reference mode is the reference search (and differs).
    let reference = run(text("llama3-8b", "nvidia_h100_sxm5_80gb", "256", &["gpus=8,32"]));
    assert_eq!(reference.points[0].mode, Mode::Reference);
    assert_ne!(reference.points[0].best.as_ref().unwrap().ranked, r.points[0].best.as_ref().unwrap().ranked);
}

#[test]
fn points_say_why_they_cannot_run() {
    // 2D SUMMA alone has no extended model.
    let mut t = extended(text("gpt3_1T", "B200", "4096", &["gpus=512"]), "");
    t.strategy = Some("2d".into());
    let r = run(t);
    assert_eq!(point(&r, 0).status, Status::Unsupported);
    assert_eq!(point(&r, 0).reason.as_deref(), Some(SUMMA_UNSUPPORTED));
    // A strategy axis: the 2d point says so, the others run.
    let r = run(extended(text("gpt3_1T", "B200", "4096", &["strategy=1d,2d", "gpus=1024"]), ""));
    assert_eq!(point(&r, 0).status, Status::Ok);
    assert_eq!(point(&r, 1).status, Status::Unsupported);
    // Sparsity is unsupported in reference mode only.
    let r = run(text("gpt2-xl", "nvidia_a100_sxm4_40gb", "64", &["sparsity=0,0.9", "gpus=8"]));
    assert_eq!(point(&r, 1).status, Status::Unsupported);
    assert_eq!(point(&r, 1).reason.as_deref(), Some(SPARSITY_UNSUPPORTED));
    // A part without a published dense peak: the reason names the missing value.
    let r = run(extended(text("gpt2-xl", "cerebras_cs2", "8", &["gpus=1"]), ""));
    assert!(point(&r, 0).inputs.is_none());
    assert_eq!(point(&r, 0).status, Status::Invalid);
    assert!(point(&r, 0).reason.as_ref().unwrap().contains("lists no BF16 matrix rate"), "{:?}", point(&r, 0).reason);
}

#[test]
fn extended_mode_maps_parts_without_a_vector_rate() {
    // TPU v5e lists no vector rate: reference mode cannot map it, extended mode never reads it.
    let t = text("llama3-8b", "google_tpu_v5e", "256", &["gpus=256"]);
    let r = run(t.clone());
    assert_eq!(point(&r, 0).status, Status::Invalid);
    let r = run(extended(t, ""));
    let p = point(&r, 0);
    assert_eq!(p.status, Status::Ok, "{:?}", p.reason);
    let csv = export::to_csv(&r.spec.axes, &r.points, true);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let vector = header.iter().position(|h| *h == "vector [TFLOP/s]").unwrap();
    assert_eq!(row[vector], "", "the placeholder vector rate is not shown");
    assert_eq!(header[header.len() - 2..], ["mode", "switches"]);
    assert_eq!(row[row.len() - 2..], ["extended", ""]);
}

#[test]
fn the_switch_precision_applies_unless_the_sweep_sets_one() {
    let t = extended(text("llama3-8b", "nvidia_h100_sxm5_80gb", "256", &["gpus=64"]), "precision=fp8");
    let r = run(t.clone());
    assert_eq!(point(&r, 0).inputs.as_ref().unwrap().precision, Precision::Fp8);
    let mut bf16 = t.clone();
    bf16.precision = Some("bf16".into());
    let r16 = run(bf16);
    assert_eq!(point(&r16, 0).inputs.as_ref().unwrap().precision, Precision::Bf16);
    assert!(point(&r, 0).best.as_ref().unwrap().tokens_per_s > point(&r16, 0).best.as_ref().unwrap().tokens_per_s);
    let mut axis = t;
    axis.axes.push("precision=bf16,fp8".into());
    let ra = run(axis);
    assert_eq!(point(&ra, 0).best, point(&r16, 0).best);
    assert_eq!(point(&ra, 1).best, point(&r, 0).best);
    assert_eq!(point(&ra, 0).mode.options().unwrap().hardware.precision, Precision::Bf16);
}

/// GPT-2 XL on one device, global batch 8, dense against 90 % sparse, in extended mode.
fn sparsity_sweep(system: &str) -> SweepResult {
    run(extended(text("gpt2-xl", system, "8", &["sparsity=0,0.9"]), "recompute=none"))
}

#[test]
fn sparsity_changes_nothing_on_gpus_and_says_so() {
    let r = sparsity_sweep("nvidia_a100_sxm4_40gb,domain=1");
    let (dense, sparse) = (point(&r, 0), point(&r, 1));
    assert_eq!(dense.status, Status::Ok, "{:?}", dense.reason);
    assert_eq!(dense.best.as_ref().unwrap().ranked, sparse.best.as_ref().unwrap().ranked);
    let notes = &sparse.inputs.as_ref().unwrap().notes;
    assert!(notes.iter().any(|n| n.contains("has no effect on nvidia_a100_sxm4_40gb") && n.contains("2:4")));
    assert!(!dense.inputs.as_ref().unwrap().notes.iter().any(|n| n.contains("no effect")));
}

#[test]
fn sparsity_removes_the_weight_matmul_flops_on_a_wafer_scale_part() {
    // No dense peak is published for CS-2: an absolute matrix axis stands in for it.
    let mut t = text("gpt2-xl", "cerebras_cs2", "8", &["matrix=1000", "hbm_capacity=1500", "sparsity=0,0.9"]);
    t.gpus = Some("1".into());
    let r = run(extended(t, "recompute=none"));
    let (dense, sparse) = (point(&r, 0), point(&r, 1));
    assert_eq!(dense.status, Status::Ok, "{:?}", dense.reason);
    let notes = &dense.inputs.as_ref().unwrap().notes;
    assert!(notes.iter().any(|n| n.contains("lists no BF16 matrix rate") && n.contains("stands in")), "{notes:?}");
    let (d, s) = (&dense.best.as_ref().unwrap().ranked, &sparse.best.as_ref().unwrap().ranked);
    assert_eq!(d.candidate, s.candidate);
    // Per token and block: Q, K, V, O (4h²) and the MLP (2·h·4h) = 12h² weights, 2 FLOPs each
    // forward, twice that backward; 90 % of it disappears. 8 sequences of 1024 tokens, 48 blocks.
    let h = 1600.0;
    let removed = 0.9 * 3.0 * 2.0 * 12.0 * h * h * 48.0 * 8.0 * 1024.0 * 1e-12;
    let diff = d.totals.flops_per_gpu - s.totals.flops_per_gpu;
    assert!((diff - removed).abs() < 1e-9 * removed, "{diff} vs {removed}");
    // Memory is priced dense.
    assert_eq!(d.mem_gb, s.mem_gb);
    let speedup = s.throughput_samples_per_s / d.throughput_samples_per_s;
    eprintln!("CS-2 GPT-2 XL speed-up at 90 %: {speedup}");
    // Emani et al. 2023 measured 1.8–2× on CS-2; with attention's sequence-size factor (issue 16
    // §3) the model gives about 2.7× (before it: above 3×).
    assert!(speedup > 1.5 && speedup < 10.0, "{speedup}");
}

#[test]
fn text_form_and_json_carry_the_mode() {
    let t = extended(text("gpt3_1T", "B200", "4096", &["gpus=1024"]), "sharding=zero3,sparsity=0.5");
    let spec = t.to_spec(None, None).unwrap();
    let back = SweepText::from_spec(&spec);
    assert_eq!(back.mode.as_deref(), Some("extended"));
    assert_eq!(back.ext.as_deref(), Some("sharding=zero3,weight_sparsity=0.5"));
    assert!(back.to_cli().contains("--mode extended --ext sharding=zero3,weight_sparsity=0.5"));
    let r = Sweep::new(spec).unwrap().finish();
    let json = export::point_json(&r.spec.axes, &r.points[0]);
    assert_eq!(json["mode"], "extended");
    assert_eq!(json["switches"]["sharding"], "zero3");
    assert_eq!(json["switches"]["weight_sparsity"], "0.5");
    let reference = run(text("gpt3_1T", "B200", "4096", &["gpus=1024"]));
    let json = export::point_json(&reference.spec.axes, &reference.points[0]);
    assert_eq!(json["mode"], "reference");
    assert!(json["switches"].is_null());
    // Switches without extended mode are an error naming `ext`.
    let mut bad = text("gpt3_1T", "B200", "4096", &[]);
    bad.ext = Some("causal=off".into());
    assert_eq!(bad.to_spec(None, None).unwrap_err().field(), Some("ext"));
    let _ = SystemParams::b200();
}

#[test]
fn unresolved_points_carry_the_field_that_fails() {
    use fmperf_core::resolve::point::{Unresolved, resolve_point};
    use fmperf_core::resolve::sweep_axis::AxisValue;
    // Reference mode cannot price sparsity 0.9: the error is at the sparsity axis, with its value,
    // and the point's reason is the rule alone (as before the error was typed).
    let spec = text("gpt2-xl", "nvidia_a100_sxm4_40gb", "64", &["sparsity=0.9", "gpus=8"]).to_spec(None, None).unwrap();
    let (_, r) = resolve_point(&spec, &[&AxisValue::Fraction(0.9), &AxisValue::Count(8)]);
    let u = r.unwrap_err();
    assert!(matches!(u, Unresolved::Unsupported(_)), "{u:?}");
    assert!(u.error().is_at("axis.sparsity"), "{u:?}");
    assert_eq!(u.reason(), SPARSITY_UNSUPPORTED);
    // 2D SUMMA alone in extended mode: at `strategies`.
    let mut t = extended(text("gpt3_1T", "B200", "4096", &["gpus=512"]), "");
    t.strategy = Some("2d".into());
    let (_, r) = resolve_point(&t.to_spec(None, None).unwrap(), &[&AxisValue::Count(512)]);
    let u = r.unwrap_err();
    assert!(u.error().is_at("strategies") && u.reason() == SUMMA_UNSUPPORTED, "{u:?}");
    // A value of the wrong kind for its axis (a name on the devices axis) is invalid, at the axis:
    // the reason is the whole message, `axis.gpus = x: does not fit the axis`.
    let (_, r) = resolve_point(&spec, &[&AxisValue::Fraction(0.9), &AxisValue::Name("x".into())]);
    let u = r.unwrap_err();
    assert!(matches!(u, Unresolved::Invalid(_)) && u.error().is_at("axis.gpus"), "{u:?}");
    assert_eq!(u.reason(), "axis.gpus = x: does not fit the axis");
}
