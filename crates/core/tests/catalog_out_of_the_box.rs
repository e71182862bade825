//! Every GPU and TPU of the catalog, and every model of the two seed studies, runs in extended
//! mode as it ships: no figure supplied by the user. Each test runs a real search and checks that
//! it returns feasible configurations.

use fmperf_core::catalog::{self, Architecture, CatalogSystem, MappingOptions, default_precision};
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::extended::{ExtendedOptions, Hardware, HardwareChoices, Workload};
use fmperf_core::search::{ExecutionChoices, Search, SearchResult, SearchSpec};
use fmperf_core::{Strategy, SystemParams};

/// An extended-mode search of `model` on `gpus` devices of `sys` at the part's default precision
/// (BF16 where listed, else FP16) with default switches, as `fmperf search --mode extended` runs it.
fn extended_search(model: &str, sys: &CatalogSystem, gpus: u64, global_batch: u64) -> SearchResult {
    let m = catalog::find_model(model).unwrap();
    let workload = Workload::from_catalog(m).unwrap_or_else(|e| panic!("{model}: {e}"));
    let precision = default_precision(sys, None).unwrap();
    let hardware = Hardware::from_catalog(sys, precision, true, &MappingOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", sys.id));
    let options = ExtendedOptions {
        hardware: HardwareChoices { precision, ..HardwareChoices::realistic() },
        ..ExtendedOptions::realistic()
    };
    let system = SystemParams::h200().with_domain_size(hardware.domain_size());
    let spec = SearchSpec {
        model: workload.to_shape(),
        system,
        strategy: Strategy::OneD,
        n_gpus: gpus,
        global_batch,
        top_k: 3,
    };
    let setup = ExtendedSetup { workload, hardware, options };
    Search::in_mode(spec, Some(setup.clone()), ExecutionChoices::fixed(&setup.options))
        .unwrap_or_else(|e| panic!("{model} on {}: {e}", sys.id))
        .finish()
}

fn gpus_and_tpus() -> Vec<&'static CatalogSystem> {
    catalog::systems()
        .iter()
        .filter(|s| s.preset.is_none() && matches!(s.architecture, Architecture::Gpu | Architecture::Torus))
        .collect()
}

#[test]
fn every_gpu_and_tpu_runs_in_extended_mode_out_of_the_box() {
    let parts = gpus_and_tpus();
    assert!(parts.len() >= 31, "{} parts", parts.len());
    for sys in parts {
        // Llama 2 7B, 4096 tokens, 256 sequences per iteration on 64 devices: fits every part
        // from the 16 GB TPU v5e up.
        let r = extended_search("llama2-7b", sys, 64, 256);
        assert!(!r.top.is_empty(), "{}: no feasible configuration", sys.id);
        let best = &r.top[0];
        assert!(best.throughput_samples_per_s.is_finite() && best.throughput_samples_per_s > 0.0, "{}", sys.id);
        // Every figure it used is in the catalog: no NIC or ICI bandwidth left unknown.
        assert!(sys.scale_out.nic_gbps_per_device.is_some(), "{} lacks a NIC figure", sys.id);
    }
}

#[test]
fn every_tpu_states_its_torus() {
    for sys in gpus_and_tpus().into_iter().filter(|s| s.architecture == Architecture::Torus) {
        let t = sys.torus().unwrap_or_else(|| panic!("{} has no torus", sys.id));
        assert!(matches!(t.dimensions, 2 | 3), "{}", sys.id);
        let (links, link) = (t.links_per_chip.unwrap(), t.link_bw_unidir_gbps.unwrap());
        // Per-chip ICI bandwidth = links × per-link bandwidth, one direction.
        assert_eq!(Some(links as f64 * link), t.chip_bw_unidir_gbps, "{}", sys.id);
        assert_eq!(links, 2 * t.dimensions, "{}: a torus has two links per dimension", sys.id);
        if let Some(shape) = &t.max_slice {
            assert_eq!(shape.len() as u64, t.dimensions, "{}", sys.id);
            assert!(shape.iter().product::<u64>() <= sys.scale_up.domain_size, "{}", sys.id);
        }
    }
}

#[test]
fn new_parts_have_sources_and_aliases() {
    for id in [
        "nvidia_h800_sxm5_80gb",
        "nvidia_b300_hgx",
        "nvidia_gb300_nvl72",
        "google_tpu_v6e",
        "google_tpu7x_ironwood",
        "nvidia_h100_nvl_94gb",
        "nvidia_a100_pcie_80gb",
        "nvidia_a100_pcie_40gb",
        "nvidia_a800_sxm4_80gb",
        "nvidia_h20_96gb",
        "nvidia_gh200_96gb",
        "nvidia_gh200_144gb",
        "nvidia_l40s_48gb",
        "aws_trainium1",
        "aws_trainium2",
    ] {
        let s = catalog::find_system(id).unwrap();
        assert!(!s.sources.is_empty() && !s.aliases.is_empty(), "{id}");
        for group in ["peak_tflops", "memory", "scale_up", "scale_out"] {
            assert!(s.field_sources.get(group).is_some(), "{id}: no source for {group}");
        }
        assert_eq!(catalog::find_system_named(&s.aliases[0]).map(|f| f.id.as_str()), Some(id));
    }
}

/// The models of the two seed studies: Subramanian et al. (PMBS 2024) and Emani et al. (2023).
fn seed_study_models() -> Vec<&'static str> {
    let mut ids = vec!["gpt3", "gpt3_1T", "vit_era5", "gpt2-xl", "gpt2-xl-block"];
    ids.extend(catalog::models().iter().filter(|m| m.family == "GenSLM").map(|m| m.id.as_str()));
    ids
}

/// Devices and global batch [samples] for a model of `params_b` billion parameters, and the part.
fn scale_for(id: &str) -> (u64, u64, &'static str) {
    match id {
        "gpt3_1T" | "vit_era5" => (4096, 4096, "nvidia_b200_hgx"),
        "gpt3" => (1024, 1536, "nvidia_a100_sxm4_80gb"),
        _ => {
            let p = catalog::find_model(id).unwrap().params_b.unwrap_or(1.0);
            if p > 20.0 {
                (256, 512, "nvidia_a100_sxm4_80gb")
            } else if p > 5.0 {
                (64, 256, "nvidia_a100_sxm4_80gb")
            } else {
                (8, 64, "nvidia_a100_sxm4_80gb")
            }
        }
    }
}

#[test]
fn every_seed_study_model_runs_in_both_modes() {
    let ids = seed_study_models();
    assert!(ids.len() >= 14, "{ids:?}");
    for id in ids {
        let (gpus, batch, part) = scale_for(id);
        let sys = catalog::find_system(part).unwrap();
        let ext = extended_search(id, sys, gpus, batch);
        assert!(!ext.top.is_empty(), "{id}: extended mode finds no configuration on {gpus} x {part}");
        let shape = catalog::find_model(id).unwrap().to_shape().unwrap();
        let params = catalog::to_system_params(sys, &MappingOptions::default()).unwrap().params;
        // Reference mode: Megatron 1D, or tensor x context parallel for the 64,800-patch ViT.
        let found = [Strategy::OneD, Strategy::ContextParallel2D].into_iter().any(|strategy| {
            let spec = SearchSpec {
                model: shape,
                system: params.clone(),
                strategy,
                n_gpus: gpus,
                global_batch: batch,
                top_k: 1,
            };
            !Search::new(spec).unwrap().finish().top.is_empty()
        });
        assert!(found, "{id}: reference mode finds no configuration on {gpus} x {part}");
    }
}
