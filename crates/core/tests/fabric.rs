//! The scale-out fabric as a system property (issue 31 §1): a fabric stated in the system spec
//! moves extended mode's scale-out collectives by hand-computable amounts and leaves the reference
//! parameters alone; a row's words and a named instance give their fabric's kind.

use fmperf_core::catalog::{Fabric, FabricKind, IbGeneration, Precision, parse_system_spec, to_system_params};
use fmperf_core::extended::options::HardwareChoices;
use fmperf_core::extended::pricing::Pricing;
use fmperf_core::extended::{ExtendedOptions, Hardware};
use fmperf_core::format::{self, Document};
use fmperf_core::resolve::builtin_system;
use fmperf_core::validate::fabric_words::fabric_kind;
use fmperf_core::validate::hardware_words::read_hardware_words;
use fmperf_core::vocab::CollectiveKind;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
}

/// A 1 GB all-reduce over 2 nodes of 8 H100 on EFA at 20 µs per network step, 2:1 oversubscribed.
#[test]
fn two_node_all_reduce_on_efa_by_hand() {
    let (id, opts) = parse_system_spec("nvidia_h100_sxm5_80gb,fabric=efa,fabric_latency_us=20,oversub=2").unwrap();
    assert_eq!(
        opts.fabric,
        Some(Fabric {
            kind: Some(FabricKind::Efa),
            latency_s: Some(20e-6),
            oversubscription: Some(2.0),
            ..Fabric::default()
        })
    );
    let sys = builtin_system(&id).unwrap();
    let hw = Hardware::from_catalog(sys, Precision::Bf16, true, &opts).unwrap();
    // 400 Gb/s = 50 GB/s per GPU, 0.7 achievable, 2:1: 17.5 GB/s; NVLink 450 · 0.7 = 315 GB/s.
    assert!(close(hw.net.slow_bandwidth, 17.5), "{}", hw.net.slow_bandwidth);
    assert!(close(hw.net.fast_bandwidth, 315.0), "{}", hw.net.fast_bandwidth);
    assert_eq!(hw.net.slow_latency, 20e-6);
    // The reference parameters do not move.
    let plain = builtin_system("nvidia_h100_sxm5_80gb").unwrap();
    let reference = to_system_params(plain, &Default::default()).unwrap();
    let with_fabric = to_system_params(plain, &opts).unwrap();
    assert_eq!(reference.params, with_fabric.params);

    let x = ExtendedOptions {
        hardware: HardwareChoices { matmul_efficiency: 0.5, gemm_half_dim: 0.0, ..HardwareChoices::realistic() },
        ..ExtendedOptions::realistic()
    };
    let p = Pricing { hw: &hw, opts: &x };
    // Bandwidth: reduce-scatter + all-gather, each 15/16 · 1 GB over 8 rings of 17.5 GB/s (the
    // slower tier: 15/16 / 315 over NVLink is less): 2 · (15/16) / 140 s. Latency, NCCL's Simple
    // ring (least time at this size): 8.4 + (30 − 2)·3.4 + 2·20 µs = 143.6 µs (tree: 2·(7·28 +
    // 20) = 432 µs; LL128 adds 1/15 of the 13.4 ms bandwidth term).
    let ar = p.collective(CollectiveKind::AllReduce, 1.0, 16, 8);
    let by_hand = 2.0 * (15.0 / 16.0) / 140.0 + 143.6e-6;
    assert!(close(ar, by_hand), "{ar} vs {by_hand}");

    // Without the fabric: 35 GB/s and NCCL's 9.6 µs network step: 2 · (15/16)/280 + (8.4 + 28·3.4
    // + 2·9.6) µs = 6.696 ms + 122.8 µs.
    let hw0 = Hardware::from_catalog(sys, Precision::Bf16, true, &Default::default()).unwrap();
    let p0 = Pricing { hw: &hw0, opts: &x };
    let ar0 = p0.collective(CollectiveKind::AllReduce, 1.0, 16, 8);
    assert!(close(ar0, 2.0 * (15.0 / 16.0) / 280.0 + 122.8e-6), "{ar0}");
}

/// A kind alone keeps today's figures: defaults equal to the reference's for every kind, but for
/// EFA's measured NCCL network step (68.3 µs, `catalog::fabric::EFA_NCCL_STEP_S`), which moves
/// NCCL's collectives only.
#[test]
fn a_kind_alone_moves_nothing_but_efa_steps() {
    let sys = builtin_system("nvidia_h100_sxm5_80gb").unwrap();
    assert_eq!(sys.fabric.and_then(|f| f.kind), Some(FabricKind::InfiniBand(IbGeneration::Ndr)));
    let base = Hardware::from_catalog(sys, Precision::Bf16, true, &Default::default()).unwrap();
    for kind in ["efa", "roce", "tpu_dcn", "infiniband_xdr", "other"] {
        let (_, opts) = parse_system_spec(&format!("nvidia_h100_sxm5_80gb,fabric={kind}")).unwrap();
        let hw = Hardware::from_catalog(sys, Precision::Bf16, true, &opts).unwrap();
        assert_eq!(hw.net, base.net, "{kind}");
        let step = if kind == "efa" { Some(fmperf_core::catalog::fabric::EFA_NCCL_STEP_S) } else { None };
        assert_eq!(hw.net_step_latency_s, step, "{kind}");
    }
    assert_eq!(fmperf_core::catalog::fabric::EFA_NCCL_STEP_S, 68.3e-6);
}

/// The EFA step reproduces the measurement it comes from: a 32 MiB all-gather over 32 p5 nodes
/// (256 H100) took 2.6995 ms (nccl-tests, 12.43 GB/s algorithm bandwidth). fmperf's ring by hand,
/// bandwidth term 0.033554 GB · 255/256 ÷ 280 GB/s (8 NICs of 50 GB/s at 0.7) = 119.37 µs:
/// * LL: 3.6 + 224 · 0.47 + 31 · 68.3 µs = 2226.2 µs, plus 119.37 / 0.5 = 2.4649 ms;
/// * LL128: 10 + 224 · 1.9 + 31 · 68.3 µs = 2552.9 µs, plus 119.37 / (15/16) = 2.6802 ms;
/// * Simple: 8.4 + 224 · 3.4 + 31 · 68.3 µs = 2887.3 µs, plus 119.37 = 3.0067 ms.
///
/// NCCL's pick, LL, is 9 % under the measured figure; on InfiniBand's table (2.7 µs a network
/// step for LL) the same all-gather would take 0.45 ms.
#[test]
fn efa_all_gather_of_32_nodes_by_hand() {
    let (_, opts) = parse_system_spec("nvidia_h100_sxm5_80gb,fabric=efa").unwrap();
    let sys = builtin_system("nvidia_h100_sxm5_80gb").unwrap();
    let hw = Hardware::from_catalog(sys, Precision::Bf16, true, &opts).unwrap();
    let x = ExtendedOptions::realistic();
    let p = Pricing { hw: &hw, opts: &x };
    let gb = 33.554432e-3;
    let t = p.collective(CollectiveKind::AllGather, gb, 256, 8);
    let by_hand = (3.6 + 224.0 * 0.47 + 31.0 * 68.3) * 1e-6 + gb * 255.0 / 256.0 / 280.0 / 0.5;
    assert!(close(t, by_hand), "{t} against {by_hand}");
    assert!((by_hand - 2.4649e-3).abs() < 1e-7, "{by_hand}");
    assert!((t / 2.6995e-3 - 1.0).abs() < 0.10, "{t}");
}

#[test]
fn spec_errors_name_the_key() {
    for (spec, key) in [
        ("nvidia_h100_sxm5_80gb,fabric=myrinet", "fabric"),
        ("nvidia_h100_sxm5_80gb,oversub=0.5", "oversub"),
        ("nvidia_h100_sxm5_80gb,fabric_eff=1.5", "fabric_eff"),
        ("nvidia_h100_sxm5_80gb,fabric_latency_us=-1", "fabric_latency_us"),
        ("nvidia_h100_sxm5_80gb,rails=maybe", "rails"),
    ] {
        let e = parse_system_spec(spec).unwrap_err().to_string();
        assert!(e.contains(key), "{spec}: {e}");
    }
    let e = parse_system_spec("nvidia_h100_sxm5_80gb,fabric=efa,fabric=roce").unwrap_err().to_string();
    assert!(e.contains("fabric"), "{e}");
}

/// Rows: the words' kind, and a named instance's.
#[test]
fn rows_state_their_fabric() {
    assert_eq!(fabric_kind("8 x H100, EFA 3,200 Gbps per node"), Some(FabricKind::Efa));
    let p5 = read_hardware_words("AWS p5.48xlarge").unwrap();
    assert_eq!(p5.fabric, Some(FabricKind::Efa));
    let a3 = read_hardware_words("A3 Mega").unwrap();
    assert_eq!(a3.fabric, Some(FabricKind::GpuDirectTcpx));
    let nd = read_hardware_words("Azure ND H100 v5").unwrap();
    assert_eq!(nd.fabric, Some(FabricKind::InfiniBand(IbGeneration::Ndr)));
}

/// The catalog's parts carry the fabric their sources name; a system file's fabric reads, writes
/// back, and bad figures are errors naming the field.
#[test]
fn system_files_carry_the_fabric() {
    for (id, kind) in [
        ("aws_trainium2", FabricKind::Efa),
        ("google_tpu_v5p", FabricKind::TpuDcn),
        ("nvidia_a100_sxm4_80gb", FabricKind::InfiniBand(IbGeneration::Hdr)),
        ("intel_gaudi2", FabricKind::Roce),
    ] {
        assert_eq!(builtin_system(id).unwrap().fabric.and_then(|f| f.kind), Some(kind), "{id}");
    }
    let mut sys = builtin_system("nvidia_h100_sxm5_80gb").unwrap().clone();
    sys.fabric = Some(Fabric {
        kind: Some(FabricKind::Roce),
        nics_per_node: Some(8),
        gbit_per_nic: Some(400.0),
        latency_s: Some(12e-6),
        achievable: Some(0.6),
        rail_optimised: Some(true),
        oversubscription: Some(3.0),
    });
    let doc = Document::System(sys);
    let text = format::to_json(&doc);
    assert!(text.contains("\"oversubscription\""), "{text}");
    assert_eq!(format::parse(&text).unwrap(), doc);
    for (from, to, field) in [
        ("\"oversubscription\": 3", "\"oversubscription\": 0", "fabric.oversubscription"),
        ("\"achievable\": 0.6", "\"achievable\": 1.2", "fabric.achievable"),
        ("\"kind\": \"roce\"", "\"kind\": \"myrinet\"", "fabric.kind"),
    ] {
        assert!(text.contains(from), "{from} in {text}");
        let errors = format::parse(&text.replace(from, to)).unwrap_err();
        assert!(errors.iter().any(|e| e.to_string().contains(field)), "{field}: {errors:?}");
    }
}

/// A row whose words name two fabrics, or another fabric than its named instance has, is an error
/// naming `hardware` and both kinds (not a silent pick, not a silent drop); words that refine the
/// instance's fabric read.
#[test]
fn contradicting_fabric_words_are_errors() {
    use fmperf_core::validate::MeasuredRun;
    use fmperf_core::validate::row::interpret;
    let row = |words: &str| {
        let mut r = MeasuredRun::default();
        r.hardware = Some(words.to_string());
        let m = &mut r.model;
        (m.layers, m.hidden, m.heads, m.ffn_hidden, m.seq_len) =
            (Some(32), Some(4096), Some(32), Some(14336), Some(8192));
        interpret(&r).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let two = row("8 x H100 SXM5 per node, RoCE (24K-GPU cluster) / InfiniBand");
    assert!(two.contains("hardware") && two.contains("roce") && two.contains("infiniband"), "{two}");
    let other = row("AWS p5.48xlarge, 8 x 400 Gb/s RoCE per node");
    assert!(other.contains("hardware") && other.contains("roce") && other.contains("efa"), "{other}");
    // The same fabric as the instance's, or a generation of a bare InfiniBand: no fabric error.
    assert!(!row("AWS p5.48xlarge, EFA").contains("fabric"), "{}", row("AWS p5.48xlarge, EFA"));
    assert_eq!(
        FabricKind::InfiniBand(IbGeneration::Unstated).join(FabricKind::InfiniBand(IbGeneration::Ndr)),
        Some(FabricKind::InfiniBand(IbGeneration::Ndr))
    );
    assert_eq!(FabricKind::Roce.join(FabricKind::Efa), None);
}
