//! What a measured figure is, shared by validation (which reads measured runs) and calibration
//! (which fits the stack constants to them): the kind of a time or throughput figure
//! ([`MetricKind`]), the kind of a memory figure ([`MemoryKind`]) and the memory predictions a
//! figure of each kind is compared with ([`PredictedMemory`], [`predicted_memory_gb`]).
//!
//! Units: GB (1e9 bytes), seconds, TFLOP/s, unless a name says otherwise.

/// Which memory figure a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// Peak of live tensors (`torch.cuda.max_memory_allocated`).
    PeakAllocated,
    /// Peak held by the caching allocator (`torch.cuda.max_memory_reserved`).
    PeakReserved,
    /// Device-level use (`nvidia-smi`): reserved plus runtime context and library buffers.
    NvidiaSmi,
}

impl MemoryKind {
    /// The JSON name (`peak_allocated`, `peak_reserved`, `nvidia_smi`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::PeakAllocated => "peak_allocated",
            MemoryKind::PeakReserved => "peak_reserved",
            MemoryKind::NvidiaSmi => "nvidia_smi",
        }
    }
}

/// The predicted figures of one configuration [GB], as the memory model reports them.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct PredictedMemory {
    /// Peak of live tensors.
    pub allocated_gb: f64,
    /// Peak held by the allocator.
    pub reserved_gb: f64,
    /// Device-level (what must fit in the capacity).
    pub device_gb: f64,
}

impl PredictedMemory {
    /// Reference mode's one figure per device (`mem_gb`): it stands for all three kinds.
    pub fn single(mem_gb: f64) -> PredictedMemory {
        PredictedMemory { allocated_gb: mem_gb, reserved_gb: mem_gb, device_gb: mem_gb }
    }

    /// The device-level need the memory verdict judges ([`super::Need`]): the device figure with
    /// the allocator's cache, and without it (allocated + the device figure's context and
    /// buffers, `device − reserved`). Reference mode's single figure is both.
    pub fn need(&self) -> super::Need {
        super::Need {
            with_cache_gb: self.device_gb,
            without_cache_gb: self.allocated_gb + (self.device_gb - self.reserved_gb),
        }
    }

    /// The figure of `kind` [GB] had extended mode's allocator fragmentation been `fragmentation`
    /// (a fraction of the allocated peak, [`crate::extended::memory::FRAGMENTATION`]): reserved =
    /// allocated × (1 + fragmentation), the device figure keeps its context and buffers on top.
    pub fn at_fragmentation(&self, kind: MemoryKind, fragmentation: f64) -> f64 {
        let reserved = self.allocated_gb * (1.0 + fragmentation);
        match kind {
            MemoryKind::PeakAllocated => self.allocated_gb,
            MemoryKind::PeakReserved => reserved,
            MemoryKind::NvidiaSmi => reserved + (self.device_gb - self.reserved_gb),
        }
    }
}

/// The prediction compared with a figure of `kind` [GB]: the one place that says which prediction
/// is compared with which kind (switch it when the memory model reports the three separately).
pub fn predicted_memory_gb(p: &PredictedMemory, kind: MemoryKind) -> f64 {
    match kind {
        MemoryKind::PeakAllocated => p.allocated_gb,
        MemoryKind::PeakReserved => p.reserved_gb,
        MemoryKind::NvidiaSmi => p.device_gb,
    }
}

/// What kind of number a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Seconds per iteration (optimizer step).
    StepTimeS,
    /// Training tokens per second per device.
    TokensPerSPerDevice,
    /// Training tokens per second, all devices.
    TokensPerSTotal,
    /// Sequences (samples) per second, all devices.
    SamplesPerS,
    /// TFLOP/s per device in a FLOP count.
    TflopsPerDevice,
    /// Model FLOP utilisation: model FLOPs per second over the peak (0–1).
    Mfu,
    /// Hardware FLOP utilisation: executed FLOPs (recomputation counted) over the peak (0–1).
    Hfu,
}

impl MetricKind {
    /// Every kind, in the order a row's fields are tried.
    pub const ALL: [MetricKind; 7] = [
        MetricKind::StepTimeS,
        MetricKind::TokensPerSPerDevice,
        MetricKind::TokensPerSTotal,
        MetricKind::SamplesPerS,
        MetricKind::TflopsPerDevice,
        MetricKind::Mfu,
        MetricKind::Hfu,
    ];

    /// The structured form's name (also the row field holding the figure).
    pub fn key(self) -> &'static str {
        match self {
            MetricKind::StepTimeS => "step_time_s",
            MetricKind::TokensPerSPerDevice => "tokens_per_s_per_device",
            MetricKind::TokensPerSTotal => "tokens_per_s_total",
            MetricKind::SamplesPerS => "samples_per_s",
            MetricKind::TflopsPerDevice => "tflops_per_device",
            MetricKind::Mfu => "mfu",
            MetricKind::Hfu => "hfu",
        }
    }

    /// Parses a structured name (also a few spellings of it: `step_time`, `tokens_per_s`, …).
    pub fn parse(s: &str) -> Option<MetricKind> {
        let k = s.trim().to_ascii_lowercase().replace(['-', ' ', '/'], "_");
        MetricKind::ALL.into_iter().find(|m| m.key() == k).or(match k.as_str() {
            "step_time" | "iteration_time_s" | "iteration_time" | "seconds_per_step" => Some(MetricKind::StepTimeS),
            "tokens_per_s" | "tokens_per_device" | "tokens_per_s_per_gpu" => Some(MetricKind::TokensPerSPerDevice),
            "tokens_total" | "tokens_per_s_all" => Some(MetricKind::TokensPerSTotal),
            "samples" | "sequences_per_s" => Some(MetricKind::SamplesPerS),
            "tflops" | "tflops_per_gpu" | "tflops_per_chip" => Some(MetricKind::TflopsPerDevice),
            _ => None,
        })
    }

    /// Whether converting a time into this kind needs a FLOP count.
    pub fn needs_flops(self) -> bool {
        matches!(self, MetricKind::TflopsPerDevice | MetricKind::Mfu | MetricKind::Hfu)
    }

    /// Whether a larger value means faster (all but the step time).
    pub fn higher_is_faster(self) -> bool {
        self != MetricKind::StepTimeS
    }
}
