//! A system of the catalog: one accelerator with its per-precision peaks, memory, scale-up domain and
//! scale-out network, as the hardware catalog records it (with `None` where a value is unknown), plus
//! what the performance model assumes about it. The reference's four system files are entries too,
//! carrying their exact [`SystemParams`] as a preset.

use super::fabric::Fabric;
use super::provenance::FieldSources;
use crate::SystemParams;
use crate::vocab::Note;

/// What kind of machine an entry is, i.e. how well the two-tier GPU-style model fits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Architecture {
    /// Devices with HBM, a switched or all-to-all scale-up domain and NICs (NVIDIA, AMD, Intel Gaudi):
    /// what the performance model was made for.
    Gpu,
    /// Chips on a 2D/3D torus (Google TPU): the torus is treated as one flat scale-up domain.
    Torus,
    /// A wafer-scale engine (Cerebras): weights streamed from external memory, no tensor/pipeline split.
    WaferScale,
    /// A reconfigurable dataflow unit (SambaNova): operators are spatially pipelined on chip.
    Dataflow,
    /// An intelligence processing unit (Graphcore): model state in on-chip SRAM, pipelined over IPUs.
    Ipu,
}

impl Architecture {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            Architecture::Gpu => "gpu",
            Architecture::Torus => "torus",
            Architecture::WaferScale => "wafer_scale",
            Architecture::Dataflow => "dataflow",
            Architecture::Ipu => "ipu",
        }
    }

    /// Parses a JSON name.
    pub fn from_name(s: &str) -> Option<Architecture> {
        [Architecture::Gpu, Architecture::Torus, Architecture::WaferScale, Architecture::Dataflow, Architecture::Ipu]
            .into_iter()
            .find(|a| a.as_str() == s)
    }

    /// Whether the model's GPU-style assumptions hold for this architecture.
    pub fn modelled_natively(self) -> bool {
        self == Architecture::Gpu
    }
}

/// Dense peak rates in TFLOP/s per precision (`None` = not published / unknown).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PeakRates {
    /// BF16 matrix.
    pub bf16: Option<f64>,
    /// FP16 matrix.
    pub fp16: Option<f64>,
    /// FP8 matrix.
    pub fp8: Option<f64>,
    /// TF32 matrix.
    pub tf32: Option<f64>,
    /// FP32 on matrix units.
    pub fp32_matrix: Option<f64>,
    /// FP32 on vector units.
    pub fp32_vector: Option<f64>,
    /// 16-bit (FP16 or BF16) on vector units.
    pub fp16_vector: Option<f64>,
    /// Best FP64.
    pub fp64: Option<f64>,
    /// FP4 matrix.
    pub fp4: Option<f64>,
}

impl PeakRates {
    /// The rates with their JSON keys, in the catalog's order.
    pub fn entries(&self) -> [(&'static str, Option<f64>); 9] {
        [
            ("bf16", self.bf16),
            ("fp16", self.fp16),
            ("fp8", self.fp8),
            ("tf32", self.tf32),
            ("fp32_matrix", self.fp32_matrix),
            ("fp32_vector", self.fp32_vector),
            ("fp16_vector", self.fp16_vector),
            ("fp64", self.fp64),
            ("fp4", self.fp4),
        ]
    }
}

/// Measured maximum achievable matmul rates (a GEMM ceiling, not a training number).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeasuredMatmul {
    /// BF16 in TFLOP/s.
    pub bf16: Option<f64>,
    /// FP8 in TFLOP/s.
    pub fp8: Option<f64>,
    /// Where the measurement comes from.
    pub source: Option<String>,
    /// Measurement conditions.
    pub note: Option<String>,
}

/// The fast scale-up domain.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScaleUp {
    /// Technology (NVLink 4, xGMI, ICI, …).
    pub tech: Option<String>,
    /// Bandwidth per device in GB/s, one direction.
    pub bw_per_device_unidir_gbps: Option<f64>,
    /// Bandwidth per device in GB/s, both directions summed.
    pub bw_per_device_bidir_gbps: Option<f64>,
    /// Bandwidth of one device-pair link in GB/s, one direction (switchless meshes).
    pub p2p_bw_unidir_gbps: Option<f64>,
    /// Devices per domain.
    pub domain_size: u64,
    /// Topology notes.
    pub topology: Option<String>,
    /// Scale-up links (NVLink links, ICI ports) per device.
    pub links_per_device: Option<u64>,
    /// Bandwidth of one link in GB/s, one direction.
    pub link_bw_unidir_gbps: Option<f64>,
    /// Dimensions of the torus the devices form (TPUs: 2 or 3); `None` = switched / all-to-all.
    pub torus_dimensions: Option<u64>,
    /// Largest single-slice torus shape, e.g. `16x16x24`.
    pub torus_shape: Option<String>,
}

/// The torus of a part whose devices form one (TPU slices): what collectives inside a slice run
/// on.
#[derive(Debug, Clone, PartialEq)]
pub struct Torus {
    /// Dimensions (2 or 3).
    pub dimensions: u64,
    /// ICI links per chip.
    pub links_per_chip: Option<u64>,
    /// Bandwidth of one link in GB/s, one direction.
    pub link_bw_unidir_gbps: Option<f64>,
    /// Bandwidth per chip in GB/s, one direction (all links).
    pub chip_bw_unidir_gbps: Option<f64>,
    /// Largest single-slice shape in chips per dimension (e.g. `[16, 16, 24]`), when stated.
    pub max_slice: Option<Vec<u64>>,
}

/// Reads a torus shape written `16x16x24` (also `16 x 16`, `4×4×4`): chips per dimension.
pub fn parse_torus_shape(text: &str) -> Option<Vec<u64>> {
    let dims: Option<Vec<u64>> =
        text.split(['x', 'X', '×']).map(|p| p.trim().parse::<u64>().ok().filter(|n| *n > 0)).collect();
    dims.filter(|d| !d.is_empty())
}

/// The scale-out network.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScaleOut {
    /// NIC bandwidth per device in Gb/s, one direction.
    pub nic_gbit_per_device: Option<f64>,
    /// NIC bandwidth per device in GB/s, one direction.
    pub nic_gbps_per_device: Option<f64>,
    /// Notes.
    pub note: Option<String>,
}

/// The host CPU that runs the training framework's Python and launches the part's kernels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Host {
    /// The CPU as the part's usual server has it (`2x AMD EPYC 7742 (DGX A100)`).
    pub cpu: Option<String>,
    /// Host time per modelled operation under an eager stack, relative to a DGX H100 host
    /// (2× Intel Xeon Platinum 8480C) [×]: 1.53 means each operation's Python, dispatch and launch
    /// take 1.53 times as long. `None`: a DGX H100-class host (1).
    pub op_time_factor: Option<f64>,
    /// Host↔device link bandwidth per direction, as its datasheet states it [GB/s]: PCIe Gen5 x16
    /// 64, Gen4 x16 32, NVLink-C2C 450 (900 both ways). `None`: not stated, and a run that
    /// offloads activations to the host is refused rather than priced at a guess.
    pub link_gbps_per_direction: Option<f64>,
}

impl Host {
    /// [`Host::op_time_factor`] with its default: a DGX H100-class host (1).
    pub fn op_time_factor(&self) -> f64 {
        self.op_time_factor.unwrap_or(1.0)
    }
}

/// Achievable fractions and latencies of the two network tiers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Network {
    /// Fraction of the scale-up bandwidth achieved (0, 1].
    pub scale_up_eff: f64,
    /// Latency of one scale-up hop in seconds.
    pub scale_up_latency_s: f64,
    /// Fraction of the scale-out bandwidth achieved (0, 1].
    pub scale_out_eff: f64,
    /// Latency of one scale-out hop in seconds.
    pub scale_out_latency_s: f64,
}

impl Network {
    /// The reference's values for A100/H200/B200: 0.7, 2.5 µs, 0.7, 5 µs.
    pub const REFERENCE_DEFAULT: Network =
        Network { scale_up_eff: 0.7, scale_up_latency_s: 2.5e-6, scale_out_eff: 0.7, scale_out_latency_s: 5e-6 };
}

impl Default for Network {
    fn default() -> Self {
        Network::REFERENCE_DEFAULT
    }
}

/// One system of the catalog (or a user's system).
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogSystem {
    /// Identifier (`nvidia_h100_sxm5_80gb`, `ref-H200`, …).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Vendor.
    pub vendor: Option<String>,
    /// Form factor.
    pub form_factor: Option<String>,
    /// What the numbers are (`vendor_claimed_peak`, `as_deployed`, `reference_system_file`, …).
    pub value_kind: Option<String>,
    /// How well the GPU-style model fits.
    pub architecture: Architecture,
    /// What the model does and does not capture for this part, in plain words.
    pub model_fit: Option<String>,
    /// Dense peaks per precision, TFLOP/s.
    pub peak_tflops: PeakRates,
    /// Measured matmul ceilings, if known.
    pub measured_matmul_tflops: Option<MeasuredMatmul>,
    /// Device memory capacity in GB, as the vendor labels it.
    pub memory_gb: Option<f64>,
    /// The device memory the driver reports [GB = 1e9 B] (`nvidia-smi`'s / `rocm-smi`'s total),
    /// when it differs from the label: NVIDIA and AMD label HBM parts in binary units (an
    /// "80 GB" H100 has 81,559 MiB = 85.5 GB). `None`: the label is the figure
    /// ([`CatalogSystem::device_memory_gb`]).
    pub memory_device_gb: Option<f64>,
    /// Memory technology.
    pub memory_type: Option<String>,
    /// Device memory bandwidth in GB/s.
    pub memory_bw_gbps: Option<f64>,
    /// On-chip SRAM in MB.
    pub on_chip_sram_mb: Option<f64>,
    /// What the SRAM figure covers.
    pub on_chip_sram_note: Option<String>,
    /// Scale-up domain.
    pub scale_up: ScaleUp,
    /// Scale-out network.
    pub scale_out: ScaleOut,
    /// Efficiencies and latencies of the network tiers (what reference mode reads).
    pub network: Network,
    /// The scale-out fabric, when the entry states one: extended mode's scale-out latency,
    /// achievable fraction and oversubscription (see [`super::fabric`]).
    pub fabric: Option<Fabric>,
    /// The host CPU of the part's usual server.
    pub host: Host,
    /// Board power in W.
    pub tdp_w: Option<f64>,
    /// A vendor headline figure that is not a dense peak.
    pub vendor_headline_peak: Option<String>,
    /// Exact reference-model parameters: when present, mapping uses them as they are.
    pub preset: Option<SystemParams>,
    /// Where the numbers come from.
    pub sources: Vec<String>,
    /// Remarks and caveats.
    pub notes: Vec<Note>,
    /// Other names people use for the part (matched by [`super::names`]).
    pub aliases: Vec<String>,
    /// Where each group of values comes from; estimates are marked (see [`FieldSources`]).
    pub field_sources: FieldSources,
}

/// Bytes of a GiB per GB (2^30 / 10^9).
const GIB_PER_GB: f64 = 1.073_741_824;

impl CatalogSystem {
    /// The memory a device offers to a training process [GB = 1e9 B]: the driver's total
    /// (`memory_device_gb`) when the entry gives it and it is a reading of the label — a label of
    /// `L` counts GB or GiB, so the total lies in `[L, L · 1.073741824]` —, else the label
    /// (`memory_gb`; an entry whose label was edited, e.g. a copy of the H100 entry set to 96 GB,
    /// is taken at its new label). Extended mode's "will it fit" compares needs in GB with this;
    /// reference mode keeps the label.
    pub fn device_memory_gb(&self) -> Option<f64> {
        match (self.memory_device_gb, self.memory_gb) {
            (Some(device), Some(label)) if (label..=label * GIB_PER_GB).contains(&device) => Some(device),
            (device, None) => device,
            (_, label) => label,
        }
    }

    /// An entry that carries exact reference parameters, with its descriptive fields derived from
    /// them (the reference's system JSON, or one of its four shipped files).
    pub fn from_params(id: &str, name: &str, params: SystemParams, sources: Vec<String>, notes: Vec<Note>) -> Self {
        CatalogSystem {
            id: id.to_string(),
            name: name.to_string(),
            vendor: None,
            form_factor: None,
            value_kind: Some("reference_system_file".to_string()),
            architecture: Architecture::Gpu,
            model_fit: None,
            peak_tflops: PeakRates {
                fp16: Some(params.matrix_flops_fp16),
                bf16: Some(params.matrix_flops_fp16),
                fp16_vector: Some(params.vector_flops_fp16),
                fp32_vector: (params.vector_flops_fp32 > 0.0).then_some(params.vector_flops_fp32),
                ..PeakRates::default()
            },
            measured_matmul_tflops: None,
            memory_gb: Some(params.hbm_capacity),
            memory_device_gb: None,
            memory_type: None,
            memory_bw_gbps: Some(params.hbm_bandwidth),
            on_chip_sram_mb: None,
            on_chip_sram_note: None,
            scale_up: ScaleUp {
                bw_per_device_unidir_gbps: Some(params.nvlink_bandwidth),
                domain_size: params.domain_size,
                ..ScaleUp::default()
            },
            scale_out: ScaleOut { nic_gbps_per_device: Some(params.ib_bandwidth), ..ScaleOut::default() },
            network: Network {
                scale_up_eff: params.nvlink_eff,
                scale_up_latency_s: params.nvlink_latency,
                scale_out_eff: params.ib_eff,
                scale_out_latency_s: params.ib_latency,
            },
            fabric: None,
            host: Host::default(),
            tdp_w: None,
            vendor_headline_peak: None,
            preset: Some(params),
            sources,
            notes,
            aliases: Vec::new(),
            field_sources: FieldSources::default(),
        }
    }

    /// The torus its devices form, when the entry describes one (`scale_up.torus_dimensions`).
    pub fn torus(&self) -> Option<Torus> {
        let su = &self.scale_up;
        let dimensions = su.torus_dimensions?;
        Some(Torus {
            dimensions,
            links_per_chip: su.links_per_device,
            link_bw_unidir_gbps: su.link_bw_unidir_gbps,
            chip_bw_unidir_gbps: su
                .bw_per_device_unidir_gbps
                .or_else(|| su.link_bw_unidir_gbps.zip(su.links_per_device).map(|(b, n)| b * n as f64)),
            max_slice: su.torus_shape.as_deref().and_then(parse_torus_shape),
        })
    }

    /// The 16-bit matrix peak to show in lists: BF16, else FP16, in TFLOP/s.
    pub fn headline_tflops(&self) -> Option<f64> {
        self.peak_tflops.bf16.or(self.peak_tflops.fp16)
    }
}
