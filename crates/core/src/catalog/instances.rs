//! Cloud instances and vendor nodes that people name instead of the accelerator ("p5.48xlarge",
//! "A3 Mega", "ND H100 v5", "DGX H100", "trn2.48xlarge"): which catalog part each one holds, and
//! the figures of the instance that differ from the part's catalog defaults — the scale-out
//! bandwidth per device (the provider's NICs divided by the devices of the instance) and, for
//! builds with a larger NVLink / NeuronLink domain than the part's default, the domain size.
//!
//! Every row names its source (the provider's instance page or documentation). The names are
//! written as token phrases (lowercase letters and digits; `p5` also matches the instance type
//! `p5.48xlarge`); a short name that could mean something else (`p5`, `a3`, `a4`) counts only
//! next to a provider word ([`PROVIDER_WORDS`]), an instance size (`48xlarge`) or a machine-type
//! word (`highgpu`, `megagpu`).

use super::fabric::{FabricKind, IbGeneration};

/// One instance type or node design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instance {
    /// Token phrases that name it (`"a3 mega"`, `"a3 megagpu"`), most specific first.
    pub names: &'static [&'static str],
    /// Who sells it (`AWS`, `Google Cloud`, `Azure`, `NVIDIA`).
    pub provider: &'static str,
    /// The scale-out fabric its source names (EFA, RoCE, InfiniBand HDR/NDR, GPUDirect-TCPX);
    /// `None` where the source names only the NICs. DGX H200/B200: their datasheets name
    /// ConnectX-7 at 400 Gb/s for the compute fabric, taken as NDR InfiniBand like the DGX H100's
    /// (assumed: the adapter also runs Ethernet).
    pub fabric: Option<FabricKind>,
    /// The catalog id of its accelerator.
    pub part: &'static str,
    /// Accelerators per instance (or node).
    pub devices: u64,
    /// Scale-out bandwidth per accelerator [Gb/s, one direction]: the instance's GPU network
    /// divided by its accelerators.
    pub nic_gbit_per_device: f64,
    /// Scale-up domain [devices] when the build's differs from the part's default.
    pub domain: Option<u64>,
    /// Whether a bare name needs a provider or machine-type word next to it to count.
    pub needs_context: bool,
    /// Where the figures come from.
    pub source: &'static str,
}

/// Words that say a text speaks of cloud instances or machine types.
pub const PROVIDER_WORDS: [&str; 12] =
    ["aws", "ec2", "amazon", "instance", "instances", "google", "gcp", "gce", "cloud", "vm", "vms", "azure"];

/// One row of [`INSTANCES`]: names, provider, fabric, part, devices, NIC per device [Gb/s], domain,
/// whether a bare name needs context, source.
#[allow(clippy::too_many_arguments)]
const fn row(
    names: &'static [&'static str],
    provider: &'static str,
    fabric: Option<FabricKind>,
    part: &'static str,
    devices: u64,
    nic_gbit_per_device: f64,
    domain: Option<u64>,
    needs_context: bool,
    source: &'static str,
) -> Instance {
    Instance { names, provider, fabric, part, devices, nic_gbit_per_device, domain, needs_context, source }
}

/// The instance table (sources per row; the most specific names first).
pub const INSTANCES: [Instance; 26] = [
    // AWS (EC2 accelerated-computing instance pages).
    row(
        &["p4de"],
        "AWS",
        Some(FabricKind::Efa),
        "nvidia_a100_sxm4_80gb",
        8,
        50.0,
        None,
        false,
        "AWS EC2 P4 instances: p4de.24xlarge, 8 x A100 80 GB, 400 Gbps EFA (50 Gb/s per GPU)",
    ),
    row(
        &["p4d"],
        "AWS",
        Some(FabricKind::Efa),
        "nvidia_a100_sxm4_40gb",
        8,
        50.0,
        None,
        false,
        "AWS EC2 P4 instances: p4d.24xlarge, 8 x A100 40 GB, 400 Gbps EFA (50 Gb/s per GPU)",
    ),
    row(
        &["p5en"],
        "AWS",
        Some(FabricKind::Efa),
        "nvidia_h200_sxm_141gb",
        8,
        400.0,
        None,
        false,
        "AWS EC2 P5 instances: p5en.48xlarge, 8 x H200 141 GB, 3,200 Gbps EFAv3 (400 Gb/s per GPU)",
    ),
    row(
        &["p5e"],
        "AWS",
        Some(FabricKind::Efa),
        "nvidia_h200_sxm_141gb",
        8,
        400.0,
        None,
        false,
        "AWS EC2 P5 instances: p5e.48xlarge, 8 x H200 141 GB, 3,200 Gbps EFA (400 Gb/s per GPU)",
    ),
    row(
        &["p5"],
        "AWS",
        Some(FabricKind::Efa),
        "nvidia_h100_sxm5_80gb",
        8,
        400.0,
        None,
        true,
        "AWS EC2 P5 instances: p5.48xlarge, 8 x H100 80 GB, 3,200 Gbps EFA (400 Gb/s per GPU)",
    ),
    row(
        &["trn1n"],
        "AWS",
        Some(FabricKind::Efa),
        "aws_trainium1",
        16,
        100.0,
        None,
        false,
        "AWS Neuron docs, Trn1/Trn1n architecture: trn1n.32xlarge, 16 Trainium chips, 1,600 Gbps EFA",
    ),
    row(
        &["trn1"],
        "AWS",
        Some(FabricKind::Efa),
        "aws_trainium1",
        16,
        50.0,
        None,
        false,
        "AWS Neuron docs, Trn1/Trn1n architecture: trn1.32xlarge, 16 Trainium chips, 800 Gbps EFA",
    ),
    row(
        &["trn2 ultraserver", "trn2 ultra", "u trn2x64", "trn2u"],
        "AWS",
        Some(FabricKind::Efa),
        "aws_trainium2",
        64,
        200.0,
        Some(64),
        false,
        "AWS Neuron docs, Trn2 architecture: a Trn2 UltraServer joins 4 trn2u.48xlarge (64 Trainium2) by \
                 NeuronLink-v3; 3.2 Tbps EFAv3 per 16 chips",
    ),
    row(
        &["trn2"],
        "AWS",
        Some(FabricKind::Efa),
        "aws_trainium2",
        16,
        200.0,
        None,
        false,
        "AWS EC2 Trn2 instances: trn2.48xlarge, 16 Trainium2 chips, 3.2 Tbps EFAv3 (200 Gb/s per chip)",
    ),
    // Google Cloud (Compute Engine accelerator-optimized machine families).
    row(
        &["a3 ultragpu", "a3 ultra"],
        "Google Cloud",
        Some(FabricKind::Roce),
        "nvidia_h200_sxm_141gb",
        8,
        400.0,
        None,
        false,
        "Google Cloud A3 Ultra (a3-ultragpu-8g): 8 x H200, one 400 Gb/s ConnectX-7 RoCE NIC per GPU \
                 (Cluster Toolkit v1.44.1 release notes)",
    ),
    row(
        &["a3 megagpu", "a3 mega"],
        "Google Cloud",
        Some(FabricKind::GpuDirectTcpx),
        "nvidia_h100_sxm5_80gb",
        8,
        200.0,
        None,
        false,
        "Google Cloud A3 Mega (a3-megagpu-8g): 8 x H100 80 GB, 1,600 Gbps GPU network (8 x 200 Gbps, \
                 GPUDirect-TCPXO)",
    ),
    row(
        &["a3 highgpu", "a3 high", "a3 edgegpu", "a3"],
        "Google Cloud",
        Some(FabricKind::GpuDirectTcpx),
        "nvidia_h100_sxm5_80gb",
        8,
        100.0,
        None,
        true,
        "Google Cloud A3 High (a3-highgpu-8g): 8 x H100 80 GB, 800 Gbps GPU network (4 x 200 Gbps gVNICs \
                 shared by the 8 GPUs, GPUDirect-TCPX; Google Cloud GPU machine-types and GPUDirect-TCPX \
                 docs; the A3 announcement's '200 Gbps' is per NIC)",
    ),
    row(
        &["a4 highgpu", "a4"],
        "Google Cloud",
        Some(FabricKind::Roce),
        "nvidia_b200_hgx",
        8,
        400.0,
        None,
        true,
        "Google Cloud A4 (a4-highgpu-8g): 8 x B200, 8 x 400 Gb/s ConnectX-7 RoCE NICs (3,200 Gbps GPU network)",
    ),
    // Microsoft Azure (ND-series VM sizes).
    row(
        &["ndm a100 v4", "nd96amsr a100 v4", "nd96amsr"],
        "Azure",
        Some(FabricKind::InfiniBand(IbGeneration::Hdr)),
        "nvidia_a100_sxm4_80gb",
        8,
        200.0,
        None,
        false,
        "Azure NDm A100 v4 series: 8 x A100 80 GB, 8 x 200 Gb/s HDR InfiniBand (one per GPU)",
    ),
    row(
        &["nd a100 v4", "nd96asr v4", "nd96asr"],
        "Azure",
        Some(FabricKind::InfiniBand(IbGeneration::Hdr)),
        "nvidia_a100_sxm4_40gb",
        8,
        200.0,
        None,
        false,
        "Azure ND A100 v4 series: 8 x A100 40 GB, 8 x 200 Gb/s HDR InfiniBand (one per GPU)",
    ),
    row(
        &["nd h100 v5", "nd96isr h100 v5"],
        "Azure",
        Some(FabricKind::InfiniBand(IbGeneration::Ndr)),
        "nvidia_h100_sxm5_80gb",
        8,
        400.0,
        None,
        false,
        "Azure ND H100 v5 series: 8 x H100 80 GB, 8 x 400 Gb/s NDR InfiniBand (one per GPU)",
    ),
    row(
        &["nd h200 v5", "nd96isr h200 v5"],
        "Azure",
        Some(FabricKind::InfiniBand(IbGeneration::Ndr)),
        "nvidia_h200_sxm_141gb",
        8,
        400.0,
        None,
        false,
        "Azure ND H200 v5 series: 8 x H200 141 GB, 8 x 400 Gb/s NDR InfiniBand (one per GPU)",
    ),
    row(
        &["nd mi300x v5", "nd96isr mi300x v5"],
        "Azure",
        Some(FabricKind::InfiniBand(IbGeneration::Ndr)),
        "amd_mi300x",
        8,
        400.0,
        None,
        false,
        "Azure ND MI300X v5 series: 8 x MI300X, 8 x 400 Gb/s NDR InfiniBand (one per GPU)",
    ),
    // NVIDIA systems (DGX datasheets; HGX boards leave the NICs to the server builder).
    row(
        &["dgx gh200"],
        "NVIDIA",
        None,
        "nvidia_gh200_96gb",
        256,
        400.0,
        Some(256),
        false,
        "NVIDIA DGX GH200: 256 GH200 (96 GB HBM3) behind an NVLink Switch System, one ConnectX-7 400 Gb/s \
                 per superchip",
    ),
    row(
        &["gh200 nvl32"],
        "NVIDIA",
        None,
        "nvidia_gh200_144gb",
        32,
        400.0,
        Some(32),
        false,
        "NVIDIA GH200 NVL32: 32 GH200 (144 GB HBM3e) joined by NVLink switches in one rack; NIC per superchip \
                 taken as the MGX 1:1 400 Gb/s",
    ),
    row(
        &["dgx a100"],
        "NVIDIA",
        Some(FabricKind::InfiniBand(IbGeneration::Hdr)),
        "nvidia_a100_sxm4_80gb",
        8,
        200.0,
        None,
        false,
        "NVIDIA DGX A100 datasheet: 8 x A100, 8 single-port 200 Gb/s HDR InfiniBand for the compute fabric",
    ),
    row(
        &["dgx h100"],
        "NVIDIA",
        Some(FabricKind::InfiniBand(IbGeneration::Ndr)),
        "nvidia_h100_sxm5_80gb",
        8,
        400.0,
        None,
        false,
        "NVIDIA DGX H100 datasheet: 8 x H100, 8 x 400 Gb/s ConnectX-7 for the compute fabric",
    ),
    row(
        &["dgx h200"],
        "NVIDIA",
        Some(FabricKind::InfiniBand(IbGeneration::Ndr)),
        "nvidia_h200_sxm_141gb",
        8,
        400.0,
        None,
        false,
        "NVIDIA DGX H200 datasheet: 8 x H200, 8 x 400 Gb/s ConnectX-7 for the compute fabric",
    ),
    row(
        &["dgx b200"],
        "NVIDIA",
        Some(FabricKind::InfiniBand(IbGeneration::Ndr)),
        "nvidia_b200_hgx",
        8,
        400.0,
        None,
        false,
        "NVIDIA DGX B200 datasheet: 8 x B200, 8 x 400 Gb/s ConnectX-7 for the compute fabric",
    ),
    row(
        &["hgx h100"],
        "NVIDIA",
        None,
        "nvidia_h100_sxm5_80gb",
        8,
        400.0,
        None,
        false,
        "NVIDIA HGX H100 board (8 x H100 SXM5); NICs are the server builder's, NVIDIA's reference 1:1 400 Gb/s",
    ),
    row(
        &["hgx b200"],
        "NVIDIA",
        None,
        "nvidia_b200_hgx",
        8,
        400.0,
        None,
        false,
        "NVIDIA HGX B200 board (8 x B200); NICs are the server builder's, NVIDIA's reference 1:1 400 Gb/s",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn every_instance_names_a_catalog_part_and_positive_figures() {
        for i in INSTANCES {
            let part = catalog::find_system(i.part).unwrap_or_else(|e| panic!("{}: {e}", i.part));
            assert!(part.preset.is_none(), "{}", i.part);
            assert!(i.nic_gbit_per_device > 0.0 && i.devices > 0 && !i.names.is_empty() && i.source.len() > 20);
            assert!(i.domain.is_none_or(|d| d > part.scale_up.domain_size), "{}: domain only where it differs", i.part);
            for n in i.names {
                assert!(n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == ' '), "{n}");
            }
        }
    }
}
