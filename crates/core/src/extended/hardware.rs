//! What extended mode reads from a system: the matmul and attention rates at the training
//! precision with their achievable ceilings, HBM bandwidth and capacity, element size and the two
//! network tiers (the reference's [`NetworkTiers`], priced by the reference's ring model).

use super::efficiency::{self, CeilingSource};
use crate::catalog::{CatalogSystem, MappedSystem, MappingOptions, Precision, to_system_params};
use crate::reference::machine::{Machine, NetworkTiers};
use crate::vocab::{Note, NoteKind, NoteList};
use crate::{Error, SystemParams};

/// Whether `sys` skips zero weights of unstructured sparse matmuls (see [`super::sparsity`]).
pub fn exploits_unstructured_sparsity(sys: &CatalogSystem) -> bool {
    sys.architecture == crate::catalog::Architecture::WaferScale
}

/// One accelerator and its network as extended mode prices them.
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    /// Precision of the linear layers' matmuls.
    pub matmul_precision: Precision,
    /// Datasheet peak of the linear layers' matmuls [TFLOP/s].
    pub matmul_peak_tflops: f64,
    /// Achievable matmul rate of the linear layers [TFLOP/s] (before `η`).
    pub matmul_ceiling_tflops: f64,
    /// Where the linear layers' ceiling comes from.
    pub matmul_ceiling_source: CeilingSource,
    /// Precision of attention and element-wise work (16-bit for FP8 runs).
    pub attention_precision: Precision,
    /// Achievable matmul rate inside attention [TFLOP/s] (before `η`).
    pub attention_ceiling_tflops: f64,
    /// Bytes per stored tensor element (activations, communicated tensors) [B]: 2 for 16-bit and
    /// FP8 training, 4 for FP32/TF32.
    pub element_bytes: f64,
    /// Bytes per element of a matmul operand [B]: 1 for FP8, else `element_bytes`.
    pub operand_bytes: f64,
    /// HBM bandwidth [GB/s].
    pub hbm_bandwidth_gbps: f64,
    /// HBM capacity [GB = 1e9 B]: for a catalog part the device total its driver reports
    /// ([`CatalogSystem::device_memory_gb`]: an "80 GB" H100 offers 85.5 GB, NVIDIA and AMD label
    /// HBM in GiB), else the system's `hbm_capacity`.
    pub hbm_capacity_gb: f64,
    /// The two network tiers (fast domain size included).
    pub net: NetworkTiers,
    /// Latency of one network step of an NCCL collective [s] when the system's fabric states one
    /// (it replaces NCCL's network `hwLat`, [`super::latency::collective_on_fabric_s`]); `None`:
    /// NCCL's table.
    pub net_step_latency_s: Option<f64>,
    /// Achievable bandwidth of one device-pair link of a switchless fast domain [GB/s, one
    /// direction, after the scale-up efficiency]: AMD's xGMI and Intel Gaudi's RoCE meshes, quad
    /// GH200 nodes. `None` for a switched domain (NVSwitch, where any group reaches the device's
    /// whole scale-up bandwidth) or when the user gave the scale-up bandwidth. See
    /// [`Hardware::fast_bandwidth`].
    pub mesh_pair_bandwidth: Option<f64>,
    /// Whether the part skips zero weights of unstructured sparse matmuls (wafer-scale engines;
    /// see [`super::sparsity`]).
    pub unstructured_sparsity: bool,
    /// Whether the fast domain is a torus of chips (TPU ICI slices) rather than a switched domain.
    pub torus: bool,
    /// Whether the host launches the part's kernels one by one (GPUs: NVIDIA, AMD, Intel Gaudi;
    /// and the reference's system files), rather than a graph compiler running whole steps on it
    /// (TPU, wafer-scale, dataflow, IPU): see [`super::pricing::host_time_per_operation_s`].
    pub host_launched: bool,
    /// Host time per modelled operation relative to a DGX H100 host's [×]: the catalog's
    /// `host.op_time_factor` (1.53 for a DGX A100's EPYC 7742, 1.25 for Grace), else 1; see
    /// [`super::pricing::host_time_per_operation_s`].
    pub host_op_time_factor: f64,
    /// Host↔device link bandwidth per direction as the datasheet states it [GB/s]: the catalog's
    /// `host.link_gbps_per_direction`; `None` where not stated (activation offloading is then
    /// refused: [`super::activation_offload::check_link`]).
    pub host_link_gbps: Option<f64>,
    /// Whether the part has asynchronous warp-group matrix instructions that FlashAttention-2-class
    /// kernels do not use (NVIDIA Hopper and later), so that such kernels run attention slower than
    /// the part's own-generation kernels ([`super::AttentionKernel`]). Read as: an NVIDIA part with
    /// FP8 tensor cores ([`has_async_mma`]).
    pub async_mma: bool,
    /// Values not read straight from the catalog, in words.
    pub approximations: Vec<Note>,
    /// The part as the reference model's system parameters at the attention (16-bit) precision,
    /// with the domain size in force: what a search over this part carries as its spec's system
    /// ([`crate::cost::ExtendedSetup::spec`]). Vector rates a catalog entry lacks are unread
    /// placeholders here ([`crate::catalog::provenance::Origin::Unread`]).
    pub params: SystemParams,
}

/// The precision attention and element-wise work run at for a matmul precision: FP8 recipes keep
/// them in BF16 (FP16 on parts without BF16); others use the matmul precision.
fn attention_precision(sys: Option<&CatalogSystem>, p: Precision) -> Precision {
    if p != Precision::Fp8 {
        return p;
    }
    match sys {
        Some(s) if s.peak_tflops.bf16.is_none() && s.peak_tflops.fp16.is_some() => Precision::Fp16,
        _ => Precision::Bf16,
    }
}

/// [`to_system_params`] as extended mode reads it ([`MappingOptions::mode`] =
/// [`ModeKind::OF_HARDWARE`](crate::mode_kind::ModeKind::OF_HARDWARE)): it never reads the vector
/// (non-matrix) rate, so an entry that lists none (TPUs, Gaudi 2) maps with an unread placeholder
/// and no note about it, and FP8 keeps stored tensors in 16 bits.
pub fn map_for_extended(sys: &CatalogSystem, opts: &MappingOptions) -> Result<MappedSystem, Error> {
    to_system_params(sys, &MappingOptions { mode: crate::mode_kind::ModeKind::OF_HARDWARE, ..*opts })
}

/// Whether `sys` is an NVIDIA GPU of the Hopper generation or later, read from its datasheet: an
/// NVIDIA GPU with an FP8 tensor-core peak (Hopper's H100/H200/H800 and Blackwell's B200/B300/
/// GB200/GB300 list one; Volta and Ampere do not). These parts have the asynchronous warp-group
/// MMA (`wgmma`, and Blackwell's `tcgen05`) and TMA that FlashAttention-3 and cuDNN's fused
/// attention are written for and FlashAttention-2 does not use. Other vendors' parts have their
/// own kernels (no FlashAttention-2 penalty is known): false.
pub fn has_async_mma(sys: &CatalogSystem) -> bool {
    sys.vendor.as_deref().is_some_and(|v| v.trim().eq_ignore_ascii_case("nvidia"))
        && sys.architecture == crate::catalog::Architecture::Gpu
        && sys.peak_tflops.fp8.is_some()
}

impl Hardware {
    /// A catalog system at a matmul precision, with the mapping choices of `opts` (domain size,
    /// NICs, bandwidth overrides; `opts.precision` is replaced by `precision`).
    ///
    /// Extended mode never reads a vector (non-matrix) rate: element-wise work is priced by its HBM
    /// traffic. A part whose catalog entry lacks one (TPUs) therefore maps here although reference
    /// mode cannot use it.
    pub fn from_catalog(
        sys: &CatalogSystem,
        precision: Precision,
        measured_ceiling: bool,
        opts: &MappingOptions,
    ) -> Result<Hardware, Error> {
        let map = |p: Precision| map_for_extended(sys, &MappingOptions { precision: Some(p), ..*opts });
        let mm = map(precision)?;
        let att_p = attention_precision(Some(sys), precision);
        let att = if att_p == precision { mm.clone() } else { map(att_p)? };
        let (mm_ceiling, mm_src) =
            efficiency::ceiling(Some(sys), precision, mm.params.matrix_flops_fp16, measured_ceiling);
        let (att_ceiling, _) = efficiency::ceiling(Some(sys), att_p, att.params.matrix_flops_fp16, measured_ceiling);
        let mut approximations: Vec<Note> = att.approximations.clone();
        if matches!(mm_src, CeilingSource::ScaledFromOtherPrecision | CeilingSource::SameSilicon(_)) {
            approximations.note(
                NoteKind::Mapping,
                format!(
                    "matmul ceiling at {precision}: {mm_ceiling:.1} TFLOP/s from the {} (no {precision} measurement)",
                    mm_src.describe()
                ),
            );
        }
        if precision == Precision::Fp8 {
            approximations.note(
                NoteKind::Mapping,
                format!(
                    "fp8: linear layers at the FP8 rate; attention, element-wise work and stored tensors in {att_p}"
                ),
            );
        }
        let mut hw = Self::assemble(
            precision,
            mm.params.matrix_flops_fp16,
            (mm_ceiling, mm_src),
            att_p,
            att_ceiling,
            &att.params,
            approximations,
        );
        if let Some(device) = sys.device_memory_gb() {
            hw.hbm_capacity_gb = device;
        }
        hw.unstructured_sparsity = exploits_unstructured_sparsity(sys);
        hw.mesh_pair_bandwidth = mesh_pair_gbps(sys, opts).map(|pair| pair * hw.params.nvlink_eff);
        hw.torus = sys.architecture == crate::catalog::Architecture::Torus;
        hw.host_launched = sys.architecture == crate::catalog::Architecture::Gpu;
        hw.host_op_time_factor = sys.host.op_time_factor();
        hw.host_link_gbps = sys.host.link_gbps_per_direction;
        hw.async_mma = has_async_mma(sys);
        hw.apply_fabric(sys, opts)?;
        Ok(hw)
    }

    /// Prices the scale-out tier with the system's fabric (the entry's `fabric` under the
    /// options' stated figures, see [`crate::catalog::fabric`]): achievable bandwidth per NIC
    /// `B_ib · achievable / oversubscription` [GB/s], the hop latency of the reference-style
    /// collectives (all-to-all, torus parts) and, when the fabric states one, the latency of an
    /// NCCL network step. Without a fabric the tier stays the reference's (`ib_eff`,
    /// `ib_latency`, NCCL's table). `hw.params` keeps the reference parameters either way.
    fn apply_fabric(&mut self, sys: &CatalogSystem, opts: &MappingOptions) -> Result<(), Error> {
        let fabric = match opts.fabric {
            Some(stated) => Some(stated.over(sys.fabric)),
            None => sys.fabric,
        };
        if let Some(fb) = fabric {
            fb.check()?;
            let p = &self.params;
            self.net.slow_bandwidth = fb.effective_gbps(p.ib_bandwidth, p.ib_eff);
            self.net.slow_latency = fb.latency_s(p.ib_latency);
            self.net_step_latency_s = fb.step_latency_s();
        }
        Ok(())
    }

    /// A bare [`SystemParams`] (e.g. the reference's system files): its matrix rate is taken as
    /// the peak of the training precision implied by its element size (2e-9 GB → BF16, 4e-9 → FP32,
    /// 1e-9 → FP8); with no measured ceiling, the ceiling is that peak. Such a system says nothing
    /// about its architecture, so it is taken not to exploit unstructured sparsity.
    pub fn from_params(params: &SystemParams, measured_ceiling: bool) -> Hardware {
        let precision = if params.element_size <= 1e-9 {
            Precision::Fp8
        } else if params.element_size >= 4e-9 {
            Precision::Fp32
        } else {
            Precision::Bf16
        };
        let peak = params.matrix_flops_fp16;
        let ceiling = efficiency::ceiling(None, precision, peak, measured_ceiling);
        let att_p = attention_precision(None, precision);
        let mut p16 = params.clone();
        if precision == Precision::Fp8 {
            p16.element_size = 2e-9;
        }
        Self::assemble(precision, peak, ceiling, att_p, ceiling.0, &p16, Vec::new())
    }

    fn assemble(
        precision: Precision,
        peak: f64,
        (ceiling, source): (f64, CeilingSource),
        att_p: Precision,
        att_ceiling: f64,
        p16: &SystemParams,
        approximations: Vec<Note>,
    ) -> Hardware {
        let element_bytes = att_p.element_size_gb() * 1e9;
        Hardware {
            matmul_precision: precision,
            matmul_peak_tflops: peak,
            matmul_ceiling_tflops: ceiling,
            matmul_ceiling_source: source,
            attention_precision: att_p,
            attention_ceiling_tflops: att_ceiling,
            element_bytes,
            operand_bytes: if precision == Precision::Fp8 { 1.0 } else { element_bytes },
            hbm_bandwidth_gbps: p16.hbm_bandwidth,
            hbm_capacity_gb: p16.hbm_capacity,
            net: Machine::new(p16).net,
            net_step_latency_s: None,
            mesh_pair_bandwidth: None,
            unstructured_sparsity: false,
            torus: false,
            host_launched: true,
            host_op_time_factor: 1.0,
            host_link_gbps: None,
            async_mma: false,
            approximations,
            params: p16.clone(),
        }
    }

    /// Devices per fast (scale-up) domain.
    pub fn domain_size(&self) -> u64 {
        self.net.domain_size
    }

    /// Achievable scale-up bandwidth per device [GB/s, one direction] for a group with `share`
    /// ranks inside one fast domain. In a switched domain every group reaches the device's whole
    /// scale-up bandwidth. In a switchless full mesh each device has one link (or one bundle of
    /// ports) to each peer, so a group of `share` devices can drive only its `share − 1` links to
    /// the others: `min(b_f, (share − 1) · b_pair)`. A whole 8-device domain reaches the sum
    /// (7 links); two devices of it, one link: for tensor parallelism of 2 on an MI300X 64 of
    /// 448 GB/s, on a Gaudi 2 37.5 of 262.5 GB/s.
    pub fn fast_bandwidth(&self, share: u64) -> f64 {
        match self.mesh_pair_bandwidth {
            Some(pair) if share >= 2 => self.net.fast_bandwidth.min(pair * (share - 1) as f64),
            _ => self.net.fast_bandwidth,
        }
    }

    /// The network tiers as a group with `share` ranks in one fast domain sees them: the fast
    /// tier at [`Hardware::fast_bandwidth`].
    pub fn net_for(&self, share: u64) -> NetworkTiers {
        NetworkTiers { fast_bandwidth: self.fast_bandwidth(share), ..self.net }
    }
}

/// The catalog's bandwidth of one device pair [GB/s, one direction] when the part's fast domain is
/// a switchless mesh (a pair figure below the per-device sum), unless the user replaced the
/// scale-up bandwidth (then the user's figure is what every group gets, as the mapping's note
/// says).
fn mesh_pair_gbps(sys: &CatalogSystem, opts: &MappingOptions) -> Option<f64> {
    if opts.scale_up_gbps.is_some() {
        return None;
    }
    let su = &sys.scale_up;
    let sum = su.bw_per_device_unidir_gbps.or(su.bw_per_device_bidir_gbps.map(|b| b / 2.0))?;
    su.p2p_bw_unidir_gbps.filter(|pair| *pair > 0.0 && *pair < sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn fp8_on_h100_keeps_attention_in_bf16() {
        let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let hw = Hardware::from_catalog(h100, Precision::Fp8, true, &MappingOptions::default()).unwrap();
        assert_eq!(hw.matmul_peak_tflops, 1978.9);
        assert_eq!(hw.matmul_ceiling_tflops, 1402.6);
        assert_eq!(hw.attention_precision, Precision::Bf16);
        assert_eq!(hw.attention_ceiling_tflops, 794.5);
        assert_eq!((hw.element_bytes, hw.operand_bytes), (2.0, 1.0));
        assert_eq!(hw.domain_size(), 8);
        assert!(!hw.approximations.iter().any(|a| a.starts_with("matmul ceiling")), "{:?}", hw.approximations);
        // MI300X has no FP8 measurement: its ceiling is its BF16 ratio on the FP8 peak, said so.
        let mi300x = catalog::find_system("amd_mi300x").unwrap();
        let mi = Hardware::from_catalog(mi300x, Precision::Fp8, true, &MappingOptions::default()).unwrap();
        assert!((mi.matmul_ceiling_tflops - 668.4 * 2614.9 / 1307.4).abs() < 1e-9, "{}", mi.matmul_ceiling_tflops);
        assert!(mi.approximations.iter().any(|a| a.starts_with("matmul ceiling at fp8")), "{:?}", mi.approximations);
        // bf = 450·0.7, bs = 50·0.7 GB/s.
        assert!((hw.net.fast_bandwidth - 315.0).abs() < 1e-9 && (hw.net.slow_bandwidth - 35.0).abs() < 1e-9);
    }

    #[test]
    fn a_switchless_mesh_gives_a_group_its_links_only() {
        // Gaudi 2: 21 ports of 100 GbE to 7 peers, 3 per pair: 37.5 GB/s a pair, 262.5 the sum;
        // both at the scale-up efficiency 0.7 (26.25 and 183.75 GB/s achievable).
        let g2 = catalog::find_system("intel_gaudi2").unwrap();
        let hw = Hardware::from_catalog(g2, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(hw.mesh_pair_bandwidth.unwrap(), 26.25), "{:?}", hw.mesh_pair_bandwidth);
        assert!(close(hw.fast_bandwidth(2), 26.25) && close(hw.fast_bandwidth(4), 78.75));
        assert!(close(hw.fast_bandwidth(8), 183.75) && close(hw.fast_bandwidth(1), 183.75));
        assert!(
            close(hw.net_for(2).fast_bandwidth, 26.25) && close(hw.net_for(2).slow_bandwidth, hw.net.slow_bandwidth)
        );
        // MI300X: 7 xGMI links of 64 GB/s; two GPUs get 64 · 0.7.
        let mi = catalog::find_system("amd_mi300x").unwrap();
        let mi = Hardware::from_catalog(mi, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        assert!(close(mi.fast_bandwidth(2), 44.8) && close(mi.fast_bandwidth(8), 448.0 * 0.7));
        // A switched domain (NVSwitch): every group gets the whole figure.
        let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let nv = Hardware::from_catalog(h100, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        assert_eq!(nv.mesh_pair_bandwidth, None);
        assert!(close(nv.fast_bandwidth(2), 315.0));
        // The user's scale-up figure is what every group gets.
        let mine = MappingOptions { scale_up_gbps: Some(100.0), ..MappingOptions::default() };
        let hw = Hardware::from_catalog(g2, Precision::Bf16, true, &mine).unwrap();
        assert_eq!(hw.mesh_pair_bandwidth, None);
        assert!(close(hw.fast_bandwidth(2), 70.0));
    }

    #[test]
    fn tensor_parallel_of_two_on_a_mesh_uses_one_link() {
        use crate::extended::options::ExtendedOptions;
        use crate::extended::pricing::Pricing;
        use crate::vocab::CollectiveKind;
        // An all-reduce of 10 GB over 2 Gaudi 2 cards: a reduce-scatter and an all-gather, each
        // (2 − 1)/2 · 10 GB over the pair's 26.25 GB/s: 0.38095 s (NCCL-style latency ≪ 1 ms).
        let g2 = catalog::find_system("intel_gaudi2").unwrap();
        let hw = Hardware::from_catalog(g2, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        let opts = ExtendedOptions::default();
        let p = Pricing { hw: &hw, opts: &opts };
        let t = p.collective(CollectiveKind::AllReduce, 10.0, 2, 2);
        assert!((t - 10.0 / 26.25).abs() < 1e-3, "{t}");
        // Eight cards (the whole domain) reach the sum: 2 · 7/8 · 10 GB / 183.75 GB/s.
        let t8 = p.collective(CollectiveKind::AllReduce, 10.0, 8, 8);
        assert!((t8 - 2.0 * 7.0 / 8.0 * 10.0 / 183.75).abs() < 1e-3, "{t8}");
        // A pipeline send between two cards of a node takes the pair's link: 1 GB / 26.25 GB/s.
        let s = p.p2p(1.0, true);
        assert!((s - 1.0 / 26.25).abs() < 1e-3, "{s}");
    }

    #[test]
    fn capacity_is_the_device_total_the_driver_reports() {
        // NVIDIA labels HBM in GiB: nvidia-smi shows an "80 GB" H100 with 81,559 MiB and an
        // "80 GB" A100 with 81,920 MiB; rocm-smi a "192 GB" MI300X with 205,822,885,888 B.
        let mib = 1_048_576.0;
        let cases = [
            ("nvidia_h100_sxm5_80gb", 81_559.0 * mib),
            ("nvidia_a100_sxm4_80gb", 81_920.0 * mib),
            ("amd_mi300x", 205_822_885_888.0),
            ("nvidia_b300_hgx", 275_040.0 * mib),
        ];
        for (id, bytes) in cases {
            let sys = catalog::find_system(id).unwrap();
            let hw = Hardware::from_catalog(sys, Precision::Bf16, true, &MappingOptions::default()).unwrap();
            assert!((hw.hbm_capacity_gb - bytes * 1e-9).abs() < 1e-3, "{id}: {} GB", hw.hbm_capacity_gb);
            // Reference mode keeps the label.
            let mapped = to_system_params(sys, &MappingOptions::default()).unwrap();
            assert_eq!(Some(mapped.params.hbm_capacity), sys.memory_gb, "{id}");
        }
        // A part without a driver total keeps its label.
        let gaudi = catalog::find_system("intel_gaudi3").unwrap();
        let hw = Hardware::from_catalog(gaudi, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        assert_eq!(Some(hw.hbm_capacity_gb), gaudi.memory_gb);
        // An edited label outside [L, 1.074·L] of the driver's total is taken as given.
        let mut mine = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap().clone();
        mine.memory_gb = Some(96.0);
        assert_eq!(mine.device_memory_gb(), Some(96.0));
        mine.memory_gb = Some(70.0);
        assert_eq!(mine.device_memory_gb(), Some(70.0));
        mine.memory_gb = Some(80.0);
        assert_eq!(mine.device_memory_gb(), Some(85.521));
    }

    #[test]
    fn tpu_maps_without_a_vector_rate_and_a100_has_no_fp8() {
        let v5e = catalog::find_system("google_tpu_v5e").unwrap();
        let hw = Hardware::from_catalog(v5e, Precision::Bf16, true, &MappingOptions::default()).unwrap();
        assert_eq!(hw.matmul_peak_tflops, 197.0);
        assert_eq!(hw.matmul_ceiling_source, CeilingSource::Unmeasured);
        let a100 = catalog::find_system("nvidia_a100_sxm4_80gb").unwrap();
        let e = Hardware::from_catalog(a100, Precision::Fp8, true, &MappingOptions::default()).unwrap_err();
        assert_eq!(e.field(), Some("peak_tflops.fp8"));
    }

    #[test]
    fn reference_system_files() {
        let hw = Hardware::from_params(&SystemParams::h200(), true);
        assert_eq!(hw.matmul_precision, Precision::Bf16);
        assert_eq!(hw.matmul_peak_tflops, 989.4);
        assert_eq!(Hardware::from_params(&SystemParams::h200(), false).matmul_ceiling_tflops, 989.4);
    }
}
