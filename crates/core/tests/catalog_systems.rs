//! The system catalog and the mapping `entry + domain + NICs + precision → SystemParams`.

use fmperf_core::catalog::{self, Architecture, MappingOptions, Precision, parse_system_spec, to_system_params};
use fmperf_core::format::{self, Document};
use fmperf_core::{Error, SystemParams};

fn map(id: &str, opts: MappingOptions) -> Result<catalog::MappedSystem, Error> {
    to_system_params(catalog::find_system(id).unwrap(), &opts)
}

#[test]
fn catalog_holds_every_accelerator_and_the_presets() {
    let loaded = catalog::load_systems();
    assert!(loaded.is_ok(), "{:?}", loaded.err());
    let systems = catalog::systems();
    let hardware: serde_json::Value = serde_json::from_str(include_str!("../data/hardware-catalog.json")).unwrap();
    let ids: Vec<&str> =
        hardware["accelerators"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 38);
    for id in &ids {
        let s = catalog::find_system(id).unwrap();
        assert!(!s.sources.is_empty(), "{id} has no source");
        assert!(s.model_fit.is_some(), "{id} has no model_fit statement");
    }
    assert_eq!(systems.len(), ids.len() + 4);
}

#[test]
fn catalog_values_equal_the_hardware_file() {
    let hardware: serde_json::Value = serde_json::from_str(include_str!("../data/hardware-catalog.json")).unwrap();
    for acc in hardware["accelerators"].as_array().unwrap() {
        let s = catalog::find_system(acc["id"].as_str().unwrap()).unwrap();
        for (key, v) in s.peak_tflops.entries() {
            assert_eq!(v, acc["peak_tflops"][key].as_f64(), "{} {key}", s.id);
        }
        assert_eq!(s.memory_gb, acc["memory_gb"].as_f64());
        assert_eq!(s.memory_bw_gbps, acc["memory_bw_gbps"].as_f64());
        assert_eq!(s.scale_up.bw_per_device_unidir_gbps, acc["scale_up"]["bw_per_device_unidir_gbps"].as_f64());
        assert_eq!(Some(s.scale_up.domain_size), acc["scale_up"]["domain_size"].as_u64());
        assert_eq!(s.scale_out.nic_gbps_per_device, acc["scale_out"]["nic_gbps_per_device"].as_f64());
        assert_eq!(
            s.measured_matmul_tflops.as_ref().and_then(|m| m.bf16),
            acc["measured_matmul_tflops"]["bf16"].as_f64()
        );
        assert_eq!(s.notes.len(), acc["notes"].as_array().unwrap().len());
        assert_eq!(s.host.op_time_factor, acc["host"]["op_time_factor"].as_f64(), "{}", s.id);
    }
}

#[test]
fn host_speed_is_read_with_its_default_and_checked() {
    // Measured on Megatron-LM's functional tests: DGX A100 1.53, Grace 1.25 of a DGX H100's
    // host time per operation; a part without the field has a DGX H100-class host.
    assert_eq!(catalog::find_system("nvidia_a100_sxm4_80gb").unwrap().host.op_time_factor(), 1.53);
    assert_eq!(catalog::find_system("nvidia_gb200_nvl72").unwrap().host.op_time_factor(), 1.25);
    assert_eq!(catalog::find_system("nvidia_h100_sxm5_80gb").unwrap().host.op_time_factor(), 1.0);
    let b200 = catalog::find_system("nvidia_b200_hgx").unwrap();
    assert_eq!((b200.host.op_time_factor, b200.host.op_time_factor()), (None, 1.0));
    // A system document with a factor of zero is refused, naming the field.
    let mut doc: serde_json::Value = serde_json::from_str(&format::to_json(&Document::System(
        catalog::find_system("nvidia_a100_sxm4_80gb").unwrap().clone(),
    )))
    .unwrap();
    doc["host"]["op_time_factor"] = serde_json::json!(0.0);
    let err = format::parse(&doc.to_string()).unwrap_err();
    assert!(format!("{err:?}").contains("host.op_time_factor"), "{err:?}");
}

#[test]
fn reference_names_resolve_to_exact_presets() {
    for name in SystemParams::REFERENCE_NAMES {
        let by_name = catalog::find_system(name).unwrap();
        assert_eq!(by_name.id, format!("ref-{name}"));
        let exact = SystemParams::reference(name).unwrap();
        assert_eq!(by_name.preset.as_ref(), Some(&exact));
        let mapped = to_system_params(by_name, &MappingOptions::default()).unwrap();
        assert_eq!(mapped.params, exact, "{name}");
        assert!(mapped.approximations.is_empty(), "{name}: {:?}", mapped.approximations);
        let eight = to_system_params(by_name, &MappingOptions { domain_size: Some(8), ..Default::default() }).unwrap();
        assert_eq!(eight.params, exact.clone().with_domain_size(8));
    }
}

#[test]
fn presets_reject_other_precisions() {
    let e = map("ref-H200", MappingOptions { precision: Some(Precision::Fp8), ..Default::default() }).unwrap_err();
    assert_eq!(e.field(), Some("precision"));
}

/// The reference's bandwidths are the catalog's unidirectional figures; the mapping uses those.
#[test]
fn scale_up_bandwidth_is_unidirectional_like_the_reference() {
    for (hw, reference) in
        [("nvidia_a100_sxm4_80gb", "A100"), ("nvidia_h200_sxm_141gb", "H200"), ("nvidia_b200_hgx", "B200")]
    {
        let s = catalog::find_system(hw).unwrap();
        let r = SystemParams::reference(reference).unwrap();
        assert_eq!(s.scale_up.bw_per_device_unidir_gbps, Some(r.nvlink_bandwidth), "{hw}");
        assert_eq!(s.scale_up.bw_per_device_bidir_gbps, Some(2.0 * r.nvlink_bandwidth), "{hw}");
        let m = to_system_params(s, &MappingOptions::default()).unwrap();
        assert_eq!(m.params.nvlink_bandwidth, r.nvlink_bandwidth, "{hw}");
    }
}

#[test]
fn a100_40gb_maps_to_the_reference_a100_up_to_documented_differences() {
    let m = map("nvidia_a100_sxm4_40gb", MappingOptions { domain_size: Some(4), ..Default::default() }).unwrap();
    let mut r = SystemParams::a100();
    r.hbm_capacity = 40.0; // the reference pairs the 40 GB part's bandwidth with the 80 GB part's capacity
    assert_eq!(m.params, r);
    assert_eq!(m.precision, Precision::Bf16);
    assert!(m.approximations.is_empty(), "{:?}", m.approximations);
}

#[test]
fn h200_maps_with_the_h100_silicon_vector_rate() {
    let m = map("nvidia_h200_sxm_141gb", MappingOptions::default()).unwrap();
    assert_eq!(m.params.matrix_flops_fp16, 989.4);
    // H200 is the H100 SXM5's die: its 16-bit vector rate is the H100's (derived, not an estimate).
    assert_eq!(m.params.vector_flops_fp16, 133.8);
    assert_eq!(m.params.hbm_capacity, 141.0);
    assert_eq!(m.params.ib_bandwidth, 50.0);
    assert_eq!(m.params.domain_size, 8);
    assert_eq!(
        (m.params.nvlink_eff, m.params.nvlink_latency, m.params.ib_eff, m.params.ib_latency),
        (0.7, 2.5e-6, 0.7, 5e-6)
    );
    assert!(m.approximations.is_empty(), "{:?}", m.approximations);
    let given =
        map("nvidia_h200_sxm_141gb", MappingOptions { vector_tflops: Some(100.0), ..Default::default() }).unwrap();
    assert_eq!(given.params.vector_flops_fp16, 100.0);
    assert!(given.approximations[0].contains("given by the user"));
}

#[test]
fn a_part_without_a_16_bit_vector_rate_uses_the_labelled_fp32_rate() {
    let m = map("amd_mi300x", MappingOptions::default()).unwrap();
    assert_eq!(m.params.vector_flops_fp16, 163.4);
    assert!(m.approximations.iter().any(|a| a.contains("FP32 vector rate 163.4")), "{:?}", m.approximations);
}

#[test]
fn estimates_are_reported_with_their_reasoning() {
    // Gaudi 2's vector rate is scaled from Gaudi 3's by TPC count; the mapping says so.
    let g2 = map("intel_gaudi2", MappingOptions::default()).unwrap();
    assert_eq!(g2.params.vector_flops_fp16, 10.8);
    assert!(
        g2.approximations.iter().any(|a| a.contains("vector rate") && a.contains("estimate") && a.contains("TPC")),
        "{:?}",
        g2.approximations
    );
    // A value the user gives replaces the estimate, and the estimate is no longer reported.
    let own = map("intel_gaudi2", MappingOptions { vector_tflops: Some(12.0), ..Default::default() }).unwrap();
    assert!(!own.approximations.iter().any(|a| a.contains("vector rate of")), "{:?}", own.approximations);
    // H100 PCIe: the NIC is the server's, so its bandwidth is an estimate.
    let pcie = map("nvidia_h100_pcie_80gb", MappingOptions::default()).unwrap();
    assert_eq!(pcie.params.ib_bandwidth, 50.0);
    assert!(pcie.approximations.iter().any(|a| a.starts_with("scale-out bandwidth of")), "{:?}", pcie.approximations);
    // Published figures carry no estimate note.
    let h100 = map("nvidia_h100_sxm5_80gb", MappingOptions::default()).unwrap();
    assert!(h100.approximations.is_empty(), "{:?}", h100.approximations);
}

#[test]
fn every_gpu_maps_without_a_user_figure() {
    for s in catalog::systems().iter().filter(|s| s.preset.is_none() && s.architecture == Architecture::Gpu) {
        let m = to_system_params(s, &MappingOptions::default());
        assert!(m.is_ok(), "{}: {:?}", s.id, m.err());
    }
}

#[test]
fn precision_selects_rate_and_element_size() {
    let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
    let cases = [
        (Precision::Bf16, 989.4, 133.8, 2e-9),
        (Precision::Fp16, 989.4, 133.8, 2e-9),
        (Precision::Fp8, 1978.9, 133.8, 1e-9),
        (Precision::Tf32, 494.7, 66.9, 4e-9),
        (Precision::Fp32, 66.9, 66.9, 4e-9),
    ];
    for (p, mat, vec, es) in cases {
        let m = to_system_params(h100, &MappingOptions { precision: Some(p), ..Default::default() }).unwrap();
        assert_eq!(
            (m.params.matrix_flops_fp16, m.params.vector_flops_fp16, m.params.element_size),
            (mat, vec, es),
            "{p}"
        );
        assert_eq!(m.precision, p);
    }
    let v100 = catalog::find_system("nvidia_v100_sxm2").unwrap();
    let e =
        to_system_params(v100, &MappingOptions { precision: Some(Precision::Bf16), ..Default::default() }).unwrap_err();
    assert_eq!(e.field(), Some("peak_tflops.bf16"));
    assert!(e.to_string().contains("fp16"), "{e}");
}

#[test]
fn missing_data_is_an_error_naming_the_field_never_a_default() {
    // (GPUs and TPUs now carry every figure extended mode needs; what remains missing is a
    // vector rate for reference mode on TPUs and the unpublished figures of non-GPU systems.)
    let cases = [
        ("google_tpu_v4", "peak_tflops.fp16_vector"),
        ("google_tpu7x_ironwood", "peak_tflops.fp16_vector"),
        ("cerebras_cs2", "peak_tflops.bf16"),
        ("sambanova_sn30", "peak_tflops.fp16_vector"),
        ("graphcore_bow_ipu", "peak_tflops.fp16_vector"),
    ];
    for (id, field) in cases {
        let e = map(id, MappingOptions::default()).unwrap_err();
        assert_eq!(e.field(), Some(field), "{id}: {e}");
        assert!(e.to_string().contains(id), "{id}: {e}");
    }
}

#[test]
fn overrides_complete_exotic_parts_with_labels() {
    let opts = MappingOptions { vector_tflops: Some(50.0), ..Default::default() };
    let tpu = map("google_tpu_v5p", opts).unwrap();
    assert_eq!(tpu.params.nvlink_bandwidth, 600.0);
    assert_eq!(tpu.params.domain_size, 8960);
    assert_eq!(tpu.params.ib_bandwidth, 6.25);
    assert!(tpu.approximations.iter().any(|a| a.contains("torus")), "{:?}", tpu.approximations);
    let sn40l = map(
        "sambanova_sn40l",
        MappingOptions {
            vector_tflops: Some(50.0),
            scale_up_gbps: Some(100.0),
            scale_out_gbps: Some(25.0),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sn40l.params.hbm_capacity, 64.0);
    assert!(sn40l.approximations.iter().any(|a| a.contains("dataflow")));
    assert!(sn40l.approximations.iter().filter(|a| a.contains("given by the user")).count() == 3);
    for s in catalog::systems() {
        if s.architecture != Architecture::Gpu {
            assert!(s.model_fit.as_deref().is_some_and(|t| t.len() > 80), "{} needs a plain statement", s.id);
        }
    }
}

#[test]
fn mesh_bandwidth_and_hypothetical_domains_are_labelled() {
    let mi300 = map("amd_mi300x", MappingOptions::default()).unwrap();
    assert_eq!(mi300.params.nvlink_bandwidth, 448.0);
    assert!(mi300.approximations.iter().any(|a| a.contains("64 GB/s")), "{:?}", mi300.approximations);
    let big = map(
        "nvidia_h100_sxm5_80gb",
        MappingOptions { domain_size: Some(64), nics_per_device: Some(2), ..Default::default() },
    )
    .unwrap();
    assert_eq!((big.params.domain_size, big.params.nic_factor), (64, 2.0));
    assert!(big.approximations.iter().any(|a| a.contains("hypothetical")));
}

#[test]
fn every_mappable_entry_validates() {
    let opts = MappingOptions {
        vector_tflops: Some(100.0),
        scale_up_gbps: Some(100.0),
        scale_out_gbps: Some(25.0),
        ..Default::default()
    };
    let mut mapped = 0;
    for s in catalog::systems() {
        for p in Precision::ALL {
            if let Ok(m) = to_system_params(s, &MappingOptions { precision: Some(p), ..opts }) {
                m.params.validate().unwrap();
                mapped += 1;
            }
        }
    }
    assert!(mapped > 40, "{mapped}");
}

#[test]
fn system_specs_parse_and_reject_bad_keys() {
    let (id, o) =
        parse_system_spec("nvidia_h100_sxm5_80gb,domain=8,nics=2,precision=fp8,vector=10,scale_up=450,scale_out=50")
            .unwrap();
    assert_eq!(id, "nvidia_h100_sxm5_80gb");
    assert_eq!(o.domain_size, Some(8));
    assert_eq!(o.nics_per_device, Some(2));
    assert_eq!(o.precision, Some(Precision::Fp8));
    assert_eq!((o.vector_tflops, o.scale_up_gbps, o.scale_out_gbps), (Some(10.0), Some(450.0), Some(50.0)));
    let e = parse_system_spec("x,domian=8").unwrap_err().to_string();
    assert!(e.contains("did you mean `domain`"), "{e}");
    assert!(parse_system_spec("x,domain=0").is_err());
    assert!(parse_system_spec("x,domain").is_err());
    assert!(parse_system_spec("").is_err());
    assert!(parse_system_spec("x,vector=-1").is_err());
}

#[test]
fn every_system_round_trips_through_the_versioned_format() {
    for s in catalog::systems() {
        let doc = Document::System(s.clone());
        let text = format::to_json(&doc);
        let back = format::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", s.id));
        assert_eq!(back, doc, "{}", s.id);
    }
}

#[test]
fn unknown_system_lists_the_nearest_ids() {
    match catalog::find_system("nvidia_h100").unwrap_err() {
        Error::UnknownName { known, .. } => assert!(known.iter().any(|k| k.starts_with("nvidia_h100")), "{known:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(catalog::find_system("a100").unwrap().id, "ref-A100");
}
