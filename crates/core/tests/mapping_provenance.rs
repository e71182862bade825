//! Where each mapped parameter comes from (`MappedSystem::provenance`): recorded by the mapping as
//! it decides each value, checked here against the catalog entry itself, for every built-in part,
//! both models, and the user's overrides.

use fmperf_core::catalog::mapping::SYSTEM_PARAMS;
use fmperf_core::catalog::provenance::Origin;
use fmperf_core::catalog::{self, CatalogSystem, MappedSystem, MappingOptions, Precision, to_system_params};
use fmperf_core::format::{self, Document};
use fmperf_core::mode_kind::ModeKind;
use serde_json::Value;

/// The value of a catalog field (dotted path) of `sys`, as its JSON form holds it.
fn field_value(sys: &CatalogSystem, field: &str) -> Option<f64> {
    let json: Value = serde_json::from_str(&format::to_json(&Document::System(sys.clone()))).unwrap();
    let mut v = &json;
    for part in field.split('.') {
        v = v.get(part)?;
    }
    v.as_f64()
}

/// The mapped value of parameter `param`.
fn param_value(m: &MappedSystem, param: &str) -> f64 {
    let p = &m.params;
    match param {
        "matrix_flops_fp16" => p.matrix_flops_fp16,
        "vector_flops_fp16" => p.vector_flops_fp16,
        "vector_flops_fp32" => p.vector_flops_fp32,
        "hbm_bandwidth" => p.hbm_bandwidth,
        "hbm_capacity" => p.hbm_capacity,
        "nvlink_bandwidth" => p.nvlink_bandwidth,
        "nvlink_eff" => p.nvlink_eff,
        "nvlink_latency" => p.nvlink_latency,
        "ib_bandwidth" => p.ib_bandwidth,
        "ib_eff" => p.ib_eff,
        "ib_latency" => p.ib_latency,
        "nvlink_size" => p.domain_size as f64,
        "nic_factor" => p.nic_factor,
        "element_size" => p.element_size,
        "mask_element_size" => p.mask_element_size,
        "flops_units" => p.flops_units,
        other => panic!("unknown parameter {other}"),
    }
}

/// The network defaults a catalog entry leaves out of its JSON.
fn network_value(sys: &CatalogSystem, field: &str) -> Option<f64> {
    let n = sys.network;
    match field {
        "network.scale_up_eff" => Some(n.scale_up_eff),
        "network.scale_up_latency_s" => Some(n.scale_up_latency_s),
        "network.scale_out_eff" => Some(n.scale_out_eff),
        "network.scale_out_latency_s" => Some(n.scale_out_latency_s),
        _ => None,
    }
}

/// Checks every parameter of `m` has one origin, in field order, and that an origin naming a
/// catalog field holds exactly that field's value (derived ones: the stated rule).
fn check(sys: &CatalogSystem, m: &MappedSystem, label: &str) {
    let params: Vec<&str> = m.provenance.iter().map(|p| p.param).collect();
    assert_eq!(params, SYSTEM_PARAMS.to_vec(), "{label}: one origin per parameter, in order");
    for p in &m.provenance {
        let value = param_value(m, p.param);
        match &p.origin {
            Origin::Catalog { field, .. } => {
                let want = field_value(sys, field).or_else(|| network_value(sys, field));
                assert_eq!(want, Some(value), "{label}: {} is said to come from {field}", p.param);
            }
            Origin::Derived { field, .. } => {
                let src = field_value(sys, field).unwrap_or_else(|| panic!("{label}: {field} missing"));
                let expected = match *field {
                    "scale_up.bw_per_device_bidir_gbps" => src / 2.0,
                    "scale_out.nic_gbit_per_device" => src / 8.0,
                    _ => src,
                };
                assert_eq!(value, expected, "{label}: {} derived from {field}", p.param);
            }
            Origin::Unread { .. } => {
                assert!(
                    matches!(p.param, "vector_flops_fp16" | "vector_flops_fp32" | "nvlink_bandwidth"),
                    "{label}: {} cannot be unread",
                    p.param
                );
            }
            Origin::ReferenceFile => assert!(sys.preset.is_some(), "{label}: not a reference file"),
            Origin::User { .. } | Origin::Default { .. } => {}
        }
        assert!(!p.to_string().is_empty());
    }
}

#[test]
fn every_part_says_where_each_mapped_value_came_from() {
    let mut checked = 0;
    for sys in catalog::systems() {
        for mode in [ModeKind::Reference, ModeKind::Extended] {
            for precision in Precision::ALL {
                let opts = MappingOptions { precision: Some(precision), mode, ..MappingOptions::default() };
                if let Ok(m) = to_system_params(sys, &opts) {
                    check(sys, &m, &format!("{} {precision} {}", sys.id, mode.as_str()));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 150, "only {checked} mappings checked");
}

#[test]
fn the_users_values_and_derived_figures_are_named_as_such() {
    let h200 = catalog::find_system("nvidia_h200_sxm_141gb").unwrap();
    let opts = MappingOptions {
        domain_size: Some(4),
        nics_per_device: Some(2),
        vector_tflops: Some(100.0),
        scale_up_gbps: Some(300.0),
        scale_out_gbps: Some(25.0),
        ..MappingOptions::default()
    };
    let m = to_system_params(h200, &opts).unwrap();
    check(h200, &m, "h200 with overrides");
    for (param, words) in [
        ("nvlink_size", "the domain size you chose"),
        ("nic_factor", "the NICs per device you chose"),
        ("vector_flops_fp16", "the vector rate you gave"),
        ("nvlink_bandwidth", "the scale-up bandwidth you gave: per device, one direction"),
        ("ib_bandwidth", "the scale-out bandwidth you gave: per NIC, one direction"),
    ] {
        let p = m.origin_of(param).unwrap();
        assert!(matches!(p.origin, Origin::User { .. }), "{param}: {p:?}");
        assert_eq!(p.to_string(), words);
    }
    // An entry with only the bidirectional NVLink figure and the NIC in Gb/s.
    let mut own = h200.clone();
    own.id = "my_h200".into();
    own.scale_up.bw_per_device_unidir_gbps = None;
    own.scale_out.nic_gbps_per_device = None;
    own.scale_out.nic_gbit_per_device = Some(400.0);
    let m = to_system_params(&own, &MappingOptions::default()).unwrap();
    check(&own, &m, "bidirectional + Gb/s");
    assert_eq!(m.params.nvlink_bandwidth, 450.0);
    assert!(matches!(
        m.origin_of("nvlink_bandwidth").unwrap().origin,
        Origin::Derived { field: "scale_up.bw_per_device_bidir_gbps", .. }
    ));
    assert_eq!(m.params.ib_bandwidth, 50.0);
    assert!(matches!(
        m.origin_of("ib_bandwidth").unwrap().origin,
        Origin::Derived { field: "scale_out.nic_gbit_per_device", .. }
    ));
    // The reference's own file: every value as it is, but the domain the user chose.
    let preset = catalog::find_system("ref-H200").unwrap();
    let m = to_system_params(preset, &MappingOptions { domain_size: Some(4), ..MappingOptions::default() }).unwrap();
    check(preset, &m, "ref-H200");
    assert_eq!(m.origin_of("hbm_bandwidth").unwrap().origin, Origin::ReferenceFile);
    assert!(matches!(m.origin_of("nvlink_size").unwrap().origin, Origin::User { .. }));
}

#[test]
fn estimates_carry_the_entrys_reasoning_on_the_values_read_from_them() {
    // Gaudi 2's vector rate is an estimate (scaled from Gaudi 3 by TPC count).
    let g2 = catalog::find_system("intel_gaudi2").unwrap();
    let m = to_system_params(g2, &MappingOptions::default()).unwrap();
    let why = m.origin_of("vector_flops_fp16").unwrap().estimate.clone().expect("an estimate");
    assert!(why.contains("TPC"), "{why}");
    assert!(m.origin_of("vector_flops_fp16").unwrap().to_string().contains("an estimate"));
    assert!(m.origin_of("matrix_flops_fp16").unwrap().estimate.is_none());
    // The user's value is not an estimate.
    let own = to_system_params(g2, &MappingOptions { vector_tflops: Some(12.0), ..MappingOptions::default() }).unwrap();
    assert!(own.origin_of("vector_flops_fp16").unwrap().estimate.is_none());
}

#[test]
fn extended_mode_maps_parts_without_a_vector_rate_and_says_it_is_unread() {
    let tpu = catalog::find_system("google_tpu_v5p").unwrap();
    let reference = to_system_params(tpu, &MappingOptions::default()).unwrap_err();
    assert!(reference.to_string().contains("peak_tflops.fp16_vector"), "{reference}");
    let opts = MappingOptions { mode: ModeKind::Extended, ..MappingOptions::default() };
    let m = to_system_params(tpu, &opts).unwrap();
    assert!(matches!(m.origin_of("vector_flops_fp16").unwrap().origin, Origin::Unread { .. }));
    // No note about a figure extended mode never reads (the torus statement stays).
    assert!(
        !m.approximations.iter().any(|a| a.starts_with("vector rate") || a.starts_with("FP32 vector rate")),
        "{:?}",
        m.approximations
    );
    assert!(m.approximations.iter().any(|a| a.contains("torus")), "{:?}", m.approximations);
    // FP8: the reference prices every tensor at 1 byte and says so; extended mode does not.
    let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let fp8 = |mode| MappingOptions { precision: Some(Precision::Fp8), mode, ..MappingOptions::default() };
    let r = to_system_params(h100, &fp8(ModeKind::Reference)).unwrap();
    let e = to_system_params(h100, &fp8(ModeKind::Extended)).unwrap();
    assert!(r.approximations.iter().any(|a| a.contains("1 byte per element")), "{:?}", r.approximations);
    assert!(e.approximations.is_empty(), "{:?}", e.approximations);
    assert_eq!(r.params, e.params);
}
