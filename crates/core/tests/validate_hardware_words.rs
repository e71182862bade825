//! Hardware as people write it in measured-run files — parts the catalog gained (GH200, A800, H20,
//! L40S, A100 PCIe, Trainium), cloud instances and vendor nodes — read to the catalog part, with
//! the instance's scale-out bandwidth per device and domain where they differ from the part's.

use fmperf_core::catalog;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::hardware_words::{read_hardware, read_hardware_words};
use fmperf_core::validate::{parse_measured_runs, validate};

fn part(words: &str) -> String {
    read_hardware(words).map(|(s, _)| s.id.clone()).unwrap_or_else(|e| e.to_string())
}

#[test]
fn new_parts_in_words() {
    let table = [
        ("NVIDIA GH200 Grace Hopper Superchip", "nvidia_gh200_96gb"),
        ("GH200 96GB HBM3 (Alps, 4 per node)", "nvidia_gh200_96gb"),
        ("NVIDIA GH200 144GB HBM3e", "nvidia_gh200_144gb"),
        ("GH200 (141 GB visible)", "nvidia_gh200_144gb"),
        ("NVIDIA A800-SXM4-80GB", "nvidia_a800_sxm4_80gb"),
        ("8x A800 80GB", "nvidia_a800_sxm4_80gb"),
        ("NVIDIA H20 (96 GB HBM3)", "nvidia_h20_96gb"),
        ("HGX H20", "nvidia_h20_96gb"),
        ("NVIDIA L40S 48GB PCIe", "nvidia_l40s_48gb"),
        ("NVIDIA A100 80GB PCIe", "nvidia_a100_pcie_80gb"),
        ("A100-PCIE-40GB", "nvidia_a100_pcie_40gb"),
        ("NVIDIA A100 PCIe (40 GB)", "nvidia_a100_pcie_40gb"),
        ("AWS Trainium2", "aws_trainium2"),
        ("Trainium 2 chips (96GB HBM each)", "aws_trainium2"),
        ("AWS Trainium (Trn1)", "aws_trainium1"),
        ("Trainium1", "aws_trainium1"),
        // Parts read as before: the new ones take nothing from their neighbours.
        ("NVIDIA H200 141GB", "nvidia_h200_sxm_141gb"),
        ("H100 SXM5 80GB", "nvidia_h100_sxm5_80gb"),
        ("NVIDIA A100 80GB (Jean Zay)", "nvidia_a100_sxm4_80gb"),
        ("A100-SXM4-40GB", "nvidia_a100_sxm4_40gb"),
        ("NVIDIA H100 SXM 96GB HBM2e at 500 W", "nvidia_h100_sxm_96gb_hbm2e_500w"),
        ("8x NVIDIA H100 (variant not stated)", "nvidia_h100_sxm5_80gb"),
        ("8x AMD Instinct MI300X (192 GB HBM3)", "amd_mi300x"),
    ];
    for (words, want) in table {
        assert_eq!(part(words), want, "{words}");
    }
}

#[test]
fn a_variant_the_catalog_lacks_is_said() {
    // The catalog has no A800 PCIe: the SXM4 part is read and the note says the PCIe variant is lacking.
    let (s, note) = read_hardware("NVIDIA A800 80GB PCIe").unwrap();
    assert_eq!(s.id, "nvidia_a800_sxm4_80gb");
    assert!(note.as_deref().unwrap_or("").contains("PCIE variant that the catalog lacks"), "{note:?}");
    // An A100 80GB PCIe is the PCIe part now, and nothing is said to be lacking.
    let (s, note) = read_hardware("NVIDIA A100 80GB PCIe").unwrap();
    assert_eq!(s.id, "nvidia_a100_pcie_80gb");
    assert!(!note.unwrap_or_default().contains("lacks"));
    // A form factor the entry's own form factor names is not lacking (B200 HGX is an SXM board).
    let (_, note) = read_hardware("NVIDIA H100 SXM 96GB HBM2e at 500 W").unwrap();
    assert!(!note.unwrap_or_default().contains("lacks"));
}

/// (words, part read, scale-out GB/s per device from the instance or `None` = the part's, domain)
#[test]
fn cloud_instances_and_nodes_in_words() {
    let table: &[(&str, &str, Option<f64>, Option<u64>)] = &[
        // AWS: EFA per instance / accelerators.
        ("p4d.24xlarge", "nvidia_a100_sxm4_40gb", Some(6.25), None),
        ("AWS p4de (8x A100 80GB)", "nvidia_a100_sxm4_80gb", Some(6.25), None),
        ("p5.48xlarge", "nvidia_h100_sxm5_80gb", None, None),
        ("EC2 P5 instances, 8x H100", "nvidia_h100_sxm5_80gb", None, None),
        ("p5e.48xlarge", "nvidia_h200_sxm_141gb", None, None),
        ("p5en.48xlarge (H200)", "nvidia_h200_sxm_141gb", None, None),
        ("trn1.32xlarge", "aws_trainium1", None, None),
        ("trn1n.32xlarge", "aws_trainium1", Some(12.5), None),
        ("trn2.48xlarge", "aws_trainium2", None, None),
        ("Trn2 UltraServer (64 Trainium2)", "aws_trainium2", None, Some(64)),
        // Google Cloud.
        ("Google Cloud A3 VMs (8x H100)", "nvidia_h100_sxm5_80gb", Some(12.5), None),
        ("a3-highgpu-8g", "nvidia_h100_sxm5_80gb", Some(12.5), None),
        ("A3 Mega", "nvidia_h100_sxm5_80gb", Some(25.0), None),
        ("a3-megagpu-8g", "nvidia_h100_sxm5_80gb", Some(25.0), None),
        ("A3 Ultra", "nvidia_h200_sxm_141gb", None, None),
        ("a3-ultragpu-8g", "nvidia_h200_sxm_141gb", None, None),
        ("a4-highgpu-8g", "nvidia_b200_hgx", None, None),
        ("GCP A4 (B200)", "nvidia_b200_hgx", None, None),
        // Azure.
        ("Azure ND A100 v4", "nvidia_a100_sxm4_40gb", None, None),
        ("Standard_ND96asr_v4", "nvidia_a100_sxm4_40gb", None, None),
        ("NDm A100 v4", "nvidia_a100_sxm4_80gb", None, None),
        ("Standard_ND96amsr_A100_v4", "nvidia_a100_sxm4_80gb", None, None),
        ("ND H100 v5", "nvidia_h100_sxm5_80gb", None, None),
        ("Standard_ND96isr_H100_v5", "nvidia_h100_sxm5_80gb", None, None),
        ("ND H200 v5", "nvidia_h200_sxm_141gb", None, None),
        ("ND MI300X v5", "amd_mi300x", None, None),
        // NVIDIA nodes.
        ("DGX A100", "nvidia_a100_sxm4_80gb", None, None),
        ("DGX A100 320GB (8x A100 40GB)", "nvidia_a100_sxm4_40gb", None, None),
        ("NVIDIA DGX H100", "nvidia_h100_sxm5_80gb", None, None),
        ("DGX H200", "nvidia_h200_sxm_141gb", None, None),
        ("DGX B200", "nvidia_b200_hgx", None, None),
        ("HGX H100 8-GPU", "nvidia_h100_sxm5_80gb", None, None),
        ("DGX GH200", "nvidia_gh200_96gb", Some(50.0), Some(256)),
        ("GH200 NVL32 rack", "nvidia_gh200_144gb", None, Some(32)),
    ];
    for &(words, id, nic, domain) in table {
        let r = read_hardware_words(words).unwrap_or_else(|e| panic!("{words}: {e}"));
        assert_eq!((r.system.id.as_str(), r.scale_out_gbps, r.domain), (id, nic, domain), "{words}: {:?}", r.note);
        // The instance is named in the note, with its source.
        assert!(r.note.as_deref().is_some_and(|n| n.contains(id)), "{words}: {:?}", r.note);
    }
    // Every figure the instance gives differs from the part's own (else it is not returned).
    for &(words, ..) in table {
        let r = read_hardware_words(words).unwrap();
        if let Some(v) = r.scale_out_gbps {
            assert_ne!(r.system.scale_out.nic_gbps_per_device, Some(v), "{words}");
        }
    }
}

#[test]
fn short_names_need_context_and_conflicts_keep_the_named_part() {
    // `p5`, `a3`, `a4` alone are not instance names without a provider or machine-type word.
    assert!(read_hardware_words("a3").is_err());
    assert!(read_hardware_words("p5").is_err());
    assert_eq!(part("AWS p5"), "nvidia_h100_sxm5_80gb");
    // Words that name another part than the instance holds: the named part, without the
    // instance's figures, and the note says so.
    let r = read_hardware_words("p4d with H100 80GB").unwrap();
    assert_eq!((r.system.id.as_str(), r.scale_out_gbps), ("nvidia_h100_sxm5_80gb", None));
    assert!(r.note.unwrap().contains("without the instance's figures"));
}

#[test]
fn an_instance_row_is_evaluated_with_the_instance_network() {
    // The same run on AWS p4de (50 Gb/s EFA per GPU) and on A100 80GB with the catalog's 200 Gb/s
    // NIC: data parallelism across nodes costs more on p4de, so the predicted time is longer.
    let row = |hw: &str| {
        format!(
            r#"[{{"id": "r", "source": {{"title": "mine"}}, "hardware": "{hw}", "num_devices": 64, "precision": "bf16",
            "model": {{"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 11008, "seq_len": 4096, "vocab": 32000}},
            "parallel": {{"tp": 8, "pp": 1, "dp": 8}},
            "batch": {{"global_batch_seqs": 64, "micro_batch": 1}},
            "measured": {{"flop_convention": "tokens per second per GPU", "tokens_per_s_per_device": 1000}}}}]"#
        )
    };
    let run = |hw: &str| {
        let r = validate(&parse_measured_runs(&row(hw)).unwrap(), ModeKind::Extended);
        let x = r.rows.into_iter().next().unwrap();
        assert!(x.error.is_some(), "{hw}: {:?}", x.reason);
        (x.hardware.clone().unwrap(), x.predicted.unwrap(), x.assumptions.join(" | "))
    };
    let (p4de, slow, notes) = run("AWS p4de.24xlarge");
    let (plain, fast, _) = run("NVIDIA A100 80GB");
    assert_eq!((p4de.as_str(), plain.as_str()), ("nvidia_a100_sxm4_80gb", "nvidia_a100_sxm4_80gb"));
    assert!(slow < fast, "p4de {slow} tokens/s vs {fast}");
    assert!(notes.contains("6.25 GB/s"), "{notes}");
    assert!(catalog::find_system("nvidia_a100_sxm4_80gb").unwrap().scale_out.nic_gbps_per_device == Some(25.0));
}
