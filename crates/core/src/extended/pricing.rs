//! Pricing primitives of extended mode: a matmul under a roofline at the achievable rate, HBM
//! traffic, and collectives with the reference's two-tier ring model (spec §2.4) with its
//! all-reduce quirk (Q4) corrected.

use super::hardware::Hardware;
use super::latency::Span;
use super::options::ExtendedOptions;
use super::stack::Stack;
use crate::reference::collective::comm_time;
use crate::reference::machine::NetworkTiers;
use crate::vocab::CollectiveKind;

/// Host time to issue one modelled operation's kernels in an eager PyTorch training stack on a
/// GPU [s]: 130 µs.
///
/// An operation here is one module of the block (a norm, the Q/K/V projection, attention, …),
/// which a Megatron-Core / Transformer Engine layer runs through several Python modules and
/// PyTorch operators, each 5–25 µs of CPU before its kernel launches (J. Lin, "From PyTorch op to
/// kernel launch": Python, pybind, autograd, ATen dispatch, backend selection, `cudaLaunchKernel`;
/// NVIDIA's DGX Cloud `microbenchmarks/cpu_overhead` recipe times one tiny PyTorch GEMM launch at
/// 11–18 µs). The value is bracketed by measured runs on two sides:
/// * from below by Megatron-LM's functional tests (`tests/data/megatron-ft-runs.json`: 12-layer,
///   512-wide GPTs on 8 A100s or H100s, 3–5 ms of host time per layer and micro-batch against
///   well under 1 ms of GPU work): with 10 µs they came out 4–7× too fast (median −74 % on
///   A100 hosts, −85 % on H100 hosts); with 130 µs −46 % and −30 % (they also log norms and
///   memory every step: the zero count and the parameter norm are priced since
///   [`super::step_host`], at a per-PyTorch-call figure of their own; the 48 cases that state
///   `--attention-backend unfused` are priced with its three kernels since
///   [`super::unfused_attention`]);
/// * from above by NeMo's production runs among the shipped data (GPT-3 175B in FP8 on TP 4 at
///   one sequence per micro-batch, about 1.3 ms of GPU work per layer forward): at 220 µs they
///   turn host-bound and 5–6 % too slow; at 130 µs no shipped figure moves.
///
/// Chosen on those runs (in-sample for the functional tests), not fitted by the calibration.
/// Eager stacks: Megatron, DeepSpeed, PyTorch FSDP ([`host_time_per_operation_s`]).
pub const EAGER_HOST_S: f64 = 130e-6;

/// CPU time of one PyTorch call from Python on a DGX H100 host [s]: 12.9 µs, the median of the
/// eight launch times of a tiny GEMM (4×4 to 512×512: 11.3–17.7 µs) in NVIDIA's DGX Cloud
/// benchmarking recipe `microbenchmarks/cpu_overhead` (NVIDIA/dgxc-benchmarking, README, "Kernel
/// launch test"); within the 5–25 µs per operator of PyTorch's dispatch path (J. Lin, "From PyTorch
/// op to kernel launch": Python, pybind, autograd, ATen dispatch, `cudaLaunchKernel`). Times the
/// host's speed ([`Hardware::host_op_time_factor`]), as the per-operation time of
/// the blocks does. Not fitted.
pub const TORCH_CALL_HOST_S: f64 = 12.9e-6;

/// Host time of a bare PyTorch operator called from Python that launches no kernel [s]: 0.91 µs
/// (H. He, "Making optimizations to nn.module to reduce python overhead", pytorch/pytorch pull
/// request #50431, comment of 2021-02-21: the bare operator beside an almost empty module's call
/// of 3.08 µs; the figure [`super::layer_python::MODULE_CALL_HOST_S`] is drawn from). Taken as a
/// DGX H100-class host's, as that one is. Not fitted.
pub const BARE_CALL_HOST_S: f64 = 0.91e-6;

/// Host time per modelled operation of a compiled stack [s]: 10 µs. XLA (JAX), a wafer-scale or
/// dataflow compiler, or a TPU runtime issues a whole compiled step without Python between the
/// kernels; what is left per kernel is at most one launch through the driver, which PyTorch's
/// dispatch path prices at 5–25 µs with everything above it (J. Lin, "From PyTorch op to kernel
/// launch"). No measured run constrains it: every compiled-stack run fmperf has is far from it.
pub const COMPILED_HOST_S: f64 = 10e-6;

/// The host time per modelled operation [s] for a part and a stack: [`EAGER_HOST_S`] when the
/// host launches the part's kernels one by one from an eager PyTorch stack (a GPU — NVIDIA, AMD,
/// Intel Gaudi — under Megatron, DeepSpeed or PyTorch FSDP), else [`COMPILED_HOST_S`] (the JAX
/// stack, and parts run by their own graph compiler: TPUs, wafer-scale and dataflow parts, IPUs);
/// either times the part's host speed ([`Hardware::host_op_time_factor`]: both figures are a
/// DGX H100 host's, and the same Megatron-LM functional test takes a median 1.53× as long on a
/// DGX A100 and 1.25× on GB200's Grace, where the GPU's share of the step is negligible).
pub fn host_time_per_operation_s(hw: &Hardware, stack: Stack) -> f64 {
    let per_op = if hw.host_launched && stack.is_eager() { EAGER_HOST_S } else { COMPILED_HOST_S };
    per_op * hw.host_op_time_factor
}

/// Work and time of one pass (forward or backward) of some layers on one device for one
/// micro-batch; additive.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Pass {
    /// Hardware FLOPs executed [TFLOP].
    pub tflop: f64,
    /// Time the matrix units are busy [s] (FLOPs / achievable rate).
    pub compute_s: f64,
    /// Exposed memory-bound time [s]: element-wise traffic plus the part of a memory-bound matmul's
    /// traffic time beyond its compute time.
    pub memory_s: f64,
    /// Exposed tensor-parallel communication [s] (not overlapped).
    pub tp_comm_s: f64,
    /// Exposed context-parallel communication [s].
    pub cp_comm_s: f64,
    /// Exposed expert-parallel all-to-all (MoE dispatch and combine) [s].
    pub ep_comm_s: f64,
}

impl Pass {
    /// Total time of the pass [s].
    #[inline(always)]
    pub fn time(&self) -> f64 {
        self.compute_s + self.memory_s + self.tp_comm_s + self.cp_comm_s + self.ep_comm_s
    }

    /// The pass repeated `n` times (e.g. a backward = two matmuls of the forward's shape).
    #[inline]
    pub fn times(&self, n: f64) -> Pass {
        Pass {
            tflop: self.tflop * n,
            compute_s: self.compute_s * n,
            memory_s: self.memory_s * n,
            tp_comm_s: self.tp_comm_s * n,
            cp_comm_s: self.cp_comm_s * n,
            ep_comm_s: self.ep_comm_s * n,
        }
    }
}

// `#[inline(always)]`: the page's module is built for size (opt-level "z"), which calls these
// small functions out of line even with an inline hint; a search adds passes millions of times.
impl std::ops::Add for Pass {
    type Output = Pass;
    #[inline(always)]
    fn add(self, o: Pass) -> Pass {
        Pass {
            tflop: self.tflop + o.tflop,
            compute_s: self.compute_s + o.compute_s,
            memory_s: self.memory_s + o.memory_s,
            tp_comm_s: self.tp_comm_s + o.tp_comm_s,
            cp_comm_s: self.cp_comm_s + o.cp_comm_s,
            ep_comm_s: self.ep_comm_s + o.ep_comm_s,
        }
    }
}

impl std::ops::AddAssign for Pass {
    #[inline(always)]
    fn add_assign(&mut self, o: Pass) {
        *self = *self + o;
    }
}

/// The rates and switches every pricing function needs.
#[derive(Debug, Clone, Copy)]
pub struct Pricing<'a> {
    /// The device and its network.
    pub hw: &'a Hardware,
    /// The switches.
    pub opts: &'a ExtendedOptions,
}

impl Pricing<'_> {
    /// Host time per modelled operation [s] for this part and stack
    /// ([`host_time_per_operation_s`]).
    pub fn host_time_per_operation_s(&self) -> f64 {
        host_time_per_operation_s(self.hw, self.opts.stack)
    }

    /// Bytes per gradient element as the data-parallel reduction and the main gradient hold it
    /// [B] (see [`ExtendedOptions::grad_reduce`]): FP32 unless reduced in the parameter type, or
    /// 16-bit gradients by default under FP16 (loss-scaled) training or pure-BF16 states.
    pub fn grad_element_bytes(&self) -> f64 {
        use super::options::{GradReduce, OptimizerStates};
        let (hw, opts) = (self.hw, self.opts);
        match opts.grad_reduce {
            GradReduce::Fp32 => 4.0,
            GradReduce::Param => hw.element_bytes,
            GradReduce::Auto => {
                let sixteen_bit_grads = hw.attention_precision == crate::catalog::Precision::Fp16
                    || opts.optimizer_states == OptimizerStates::PureBf16;
                if sixteen_bit_grads { hw.element_bytes } else { 4.0_f64.max(hw.element_bytes) }
            }
        }
    }

    /// Sustained rate of the linear layers' matmuls `η · ceiling` [TFLOP/s].
    pub fn matmul_rate(&self) -> f64 {
        self.opts.hardware.matmul_efficiency * self.hw.matmul_ceiling_tflops
    }

    /// Sustained rate of flash attention on calls whose keys number `seq` [TFLOP/s]: `η_att` times
    /// the attention ceiling (16-bit) times the kernel's measured fraction of the ceiling at that
    /// length ([`super::efficiency::attention_kernel_fraction`]): FlashAttention-2's H100 curve for
    /// an FA2-class kernel on a part with asynchronous warp-group MMA, cuDNN's H100 curve (as a
    /// fraction of the part's ceiling) for every other case (see [`super::AttentionKernel`]).
    pub fn attention_rate(&self, seq: f64) -> f64 {
        use super::efficiency::KernelCurve;
        let curve = match self.opts.attention_kernel {
            super::AttentionKernel::Fa2 if self.hw.async_mma => KernelCurve::Fa2OnAsyncMma,
            _ => KernelCurve::Native,
        };
        let kernel = super::efficiency::attention_kernel_fraction(curve, seq, self.opts.model.causal);
        self.opts.hardware.attention_efficiency * self.hw.attention_ceiling_tflops * kernel
    }

    /// Time to move `bytes` through HBM [s], or 0 when memory-bound work is not modelled.
    pub fn traffic(&self, bytes: f64) -> f64 {
        if self.opts.hardware.memory_bound_ops { bytes * 1e-9 / self.hw.hbm_bandwidth_gbps } else { 0.0 }
    }

    /// One matmul `(m × k) · (k × n)` of the linear layers: `2·m·k·n` FLOPs at the sustained rate
    /// times the GEMM-size factor ([`super::efficiency::gemm_size_factor`]), under a roofline on its
    /// operand traffic (`(m·k + k·n)` operands, `m·n` results).
    pub fn linear(&self, m: f64, k: f64, n: f64) -> Pass {
        self.linear_at(m, k, n, 1.0)
    }

    /// A matmul of the blocks' weights: [`Self::linear`] with its FLOPs scaled by the weight density
    /// (`1 − sparsity` on parts that skip zero weights, see [`super::sparsity`]); operand traffic
    /// stays dense.
    pub fn weight_linear(&self, m: f64, k: f64, n: f64) -> Pass {
        self.linear_at(m, k, n, super::sparsity::weight_density(self.hw, self.opts))
    }

    fn linear_at(&self, m: f64, k: f64, n: f64, density: f64) -> Pass {
        let bytes = (m * k + k * n) * self.hw.operand_bytes + m * n * self.hw.element_bytes;
        self.gemm(2.0 * m * k * n * 1e-12 * density, self.matmul_rate(), (m, k, n), bytes)
    }

    /// `batch` matmuls `(m × k)·(k × n)` of activations by activations, as unfused attention runs
    /// its scores `Q·Kᵀ` and context `P·V` ([`super::unfused_attention`]): `2·batch·m·k·n` FLOPs
    /// at `η` times the 16-bit ceiling (these GEMMs stay in the activations' format under FP8
    /// training) times the GEMM-size factor of one matmul, under a roofline on every operand and
    /// result in the activations' format. On a GPU, a matmul with a dimension off the multiples of
    /// 8 ([`super::efficiency::tensor_core_aligned`]: a head width such as 225) runs at the part's
    /// FP16 non-Tensor-Core peak (`vector_flops_fp16`, datasheet) instead, unscaled.
    pub fn activation_matmul(&self, batch: f64, m: f64, k: f64, n: f64) -> Pass {
        let rate = if self.hw.host_launched && !super::efficiency::tensor_core_aligned(m, k, n) {
            self.hw.params.vector_flops_fp16
        } else {
            self.opts.hardware.matmul_efficiency * self.hw.attention_ceiling_tflops
        };
        let bytes = batch * (m * k + k * n + m * n) * self.hw.element_bytes;
        self.gemm(2.0 * batch * m * k * n * 1e-12, rate, (m, k, n), bytes)
    }

    /// `tflop` of matmuls of shape `(m, k, n)` at `rate` [TFLOP/s] times the GEMM-size factor
    /// ([`super::efficiency::gemm_size_factor`]), under a roofline on `bytes` of traffic.
    fn gemm(&self, tflop: f64, rate: f64, (m, k, n): (f64, f64, f64), bytes: f64) -> Pass {
        let shape = super::efficiency::gemm_size_factor(m, k, n, self.opts.hardware.gemm_half_dim);
        let compute_s = tflop / (rate * shape);
        Pass { tflop, compute_s, memory_s: (self.traffic(bytes) - compute_s).max(0.0), ..Pass::default() }
    }

    /// Attention work of `tflop` moving `bytes` through HBM over `s_q` queries and `s_k` keys per
    /// call, at the attention rate of the call's key length `min(s_q, s_k)` (a context-parallel
    /// ring step's chunk; [`Self::attention_rate`]) times the size factor of its two sequence
    /// dimensions ([`super::efficiency::gemm_size_factor`] with `c_att =`
    /// [`crate::extended::HardwareChoices::attention_half_seq`], the head width left out), same
    /// roofline.
    pub fn attention(&self, tflop: f64, bytes: f64, s_q: f64, s_k: f64) -> Pass {
        self.attention_with_keys(tflop, bytes, s_q, s_k, s_q.min(s_k))
    }

    /// Attention through a sliding window of `window` keys per query ([`Self::attention`] for
    /// windowed blocks): the kernel's rate at a key length of the window (each query tile's loop
    /// reads only the window's key tiles, as a call of `window`-token sequences does; with a
    /// causal mask the diagonal tiles: `w/(w + 128)` of it), the size factor of the call's own
    /// `s_q` and `s_k` (the calls are as large as full attention's), same roofline.
    pub fn window_attention(&self, tflop: f64, bytes: f64, s_q: f64, s_k: f64, window: f64) -> Pass {
        self.attention_with_keys(tflop, bytes, s_q, s_k, window.min(s_q).min(s_k))
    }

    /// Attention over calls of `s_q` × `s_k` tokens whose kernel loops over `keys` keys per query
    /// tile: the rate at `keys`, the size factor of the call, the roofline on `bytes`.
    fn attention_with_keys(&self, tflop: f64, bytes: f64, s_q: f64, s_k: f64, keys: f64) -> Pass {
        let shape = super::efficiency::gemm_size_factor(s_q, s_k, f64::INFINITY, self.opts.hardware.attention_half_seq);
        let compute_s = tflop / (self.attention_rate(keys) * shape);
        Pass { tflop, compute_s, memory_s: (self.traffic(bytes) - compute_s).max(0.0), ..Pass::default() }
    }

    /// Element-wise work moving `bytes` through HBM (memory-bound, no FLOPs counted).
    pub fn elementwise(&self, bytes: f64) -> Pass {
        Pass { memory_s: self.traffic(bytes), ..Pass::default() }
    }

    /// A collective over `group` devices of which `share` sit in one fast domain, moving a full
    /// tensor of `volume_gb` [GB]: the bandwidth term of the reference's `T_comm` (spec §2.4),
    /// except that an all-reduce costs a reduce-scatter plus an all-gather on every tier (quirk Q4
    /// corrected), plus NCCL's latency for the group's ranks and domains, with ring or tree and
    /// the protocol NCCL would pick ([`super::latency`]). All-to-all, reduce and broadcast, and
    /// every collective of a torus part (not run by NCCL), keep the reference's per-hop latencies.
    /// The fast tier runs at the group's share of a switchless mesh ([`Hardware::fast_bandwidth`]).
    pub fn collective(&self, kind: CollectiveKind, volume_gb: f64, group: u64, share: u64) -> f64 {
        let net = &self.hw.net_for(share);
        let nccl = !self.hw.torus
            && matches!(
                kind,
                CollectiveKind::AllReduce
                    | CollectiveKind::ReduceScatter
                    | CollectiveKind::AllGather
                    | CollectiveKind::Broadcast
            );
        let bare = NetworkTiers { slow_latency: 0.0, fast_latency: 0.0, ..*net };
        let on = if nccl { &bare } else { net };
        let t = match kind {
            CollectiveKind::AllReduce => {
                comm_time(on, CollectiveKind::ReduceScatter, volume_gb, group, share)
                    + comm_time(on, CollectiveKind::AllGather, volume_gb, group, share)
            }
            _ => comm_time(on, kind, volume_gb, group, share),
        };
        if nccl && volume_gb > 0.0 {
            super::latency::collective_on_fabric_s(kind, Span::of(group, share), t, self.hw.net_step_latency_s)
        } else {
            t
        }
    }

    /// A personalised exchange (all-to-all) of `bytes` [B] per rank over a group of `group` ranks,
    /// `fast_share` of them in one fast domain [s]: `(e_n−1)/e` of the bytes go over the scale-up
    /// links, `(e−e_n)/e` through the device's own NICs (no help from the domain's other NICs),
    /// both at once; the busiest rank moves `gamma` × the mean; each peer costs one latency:
    /// `γ·max(B·(e_n−1)/e ÷ b_f, B·(e−e_n)/e ÷ (ν·b_s)) + λ_f·(e_n−1) + λ_s·(e−e_n)`. Used by
    /// the MoE token exchange and Ulysses context parallelism.
    pub fn all_to_all(&self, bytes: f64, group: u64, fast_share: u64, gamma: f64) -> f64 {
        let (e, en) = (group, fast_share.max(1));
        if e <= 1 || bytes <= 0.0 {
            return 0.0;
        }
        let net = &self.hw.net_for(en);
        let (e_f, en_f) = (e as f64, en as f64);
        let inside = bytes * 1e-9 * (en_f - 1.0) / e_f / net.fast_bandwidth;
        let across = bytes * 1e-9 * (e_f - en_f) / e_f / (net.nic_factor * net.slow_bandwidth);
        gamma * inside.max(across) + net.fast_latency * (en_f - 1.0) + net.slow_latency * (e_f - en_f)
    }

    /// One point-to-point message of `volume_gb` [GB], inside a fast domain or across domains:
    /// its bandwidth term plus NCCL's latency of one step ([`super::latency`]; a torus part keeps
    /// the reference's hop latency). Inside a switchless mesh it takes the one link of the pair.
    pub fn p2p(&self, volume_gb: f64, fast: bool) -> f64 {
        let share = if fast { 2 } else { 1 };
        let net = self.hw.net_for(share);
        if self.hw.torus || volume_gb <= 0.0 {
            return comm_time(&net, CollectiveKind::P2p, volume_gb, 2, share);
        }
        let bare = NetworkTiers { slow_latency: 0.0, fast_latency: 0.0, ..net };
        let t = comm_time(&bare, CollectiveKind::P2p, volume_gb, 2, share);
        super::latency::collective_on_fabric_s(CollectiveKind::P2p, Span::of(2, share), t, self.hw.net_step_latency_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::extended::options::HardwareChoices;

    #[test]
    fn roofline_and_allreduce() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let opts = ExtendedOptions {
            hardware: HardwareChoices { matmul_efficiency: 0.5, gemm_half_dim: 0.0, ..HardwareChoices::realistic() },
            ..ExtendedOptions::realistic()
        };
        let p = Pricing { hw: &hw, opts: &opts };
        // A large square matmul is compute-bound: 2·4096³ FLOPs at 0.5·989.4 TFLOP/s.
        let big = p.linear(4096.0, 4096.0, 4096.0);
        assert_eq!(big.tflop, 2.0 * 4096f64.powi(3) * 1e-12);
        assert!((big.compute_s - big.tflop / (0.5 * 989.4)).abs() < 1e-15);
        assert_eq!(big.memory_s, 0.0);
        // A matrix-vector product is memory-bound: its traffic time is exposed.
        let thin = p.linear(1.0, 16384.0, 16384.0);
        assert!(thin.memory_s > 10.0 * thin.compute_s);
        // All-reduce inside a domain = reduce-scatter + all-gather in bandwidth (twice the
        // reference's price): 2 · 7/8 · 1 GB / 315 GB/s, plus NCCL's Simple ring latency of
        // 2·7 steps over NVLink, 8.4 + 14·3.4 µs (the reduce-scatter: 8.4 + 7·3.4 µs).
        let bw = 7.0 / 8.0 / 315.0;
        let rs = p.collective(CollectiveKind::ReduceScatter, 1.0, 8, 8);
        assert!((rs - (bw + (8.4 + 7.0 * 3.4) * 1e-6)).abs() < 1e-12, "{rs}");
        let ar = p.collective(CollectiveKind::AllReduce, 1.0, 8, 8);
        assert!((ar - (2.0 * bw + (8.4 + 14.0 * 3.4) * 1e-6)).abs() < 1e-12, "{ar}");
        // A message between domains: 1 GB at 35 GB/s plus one network step, 8.4 + 9.6 µs.
        assert!((p.p2p(1.0, false) - (1.0 / 35.0 + 18e-6)).abs() < 1e-12);
        assert!(p.p2p(1.0, true) < p.p2p(1.0, false));
    }

    #[test]
    fn gemm_and_attention_size_factors_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let opts = ExtendedOptions {
            hardware: HardwareChoices {
                matmul_efficiency: 0.5,
                gemm_half_dim: 512.0,
                attention_half_seq: 1024.0,
                ..HardwareChoices::realistic()
            },
            ..ExtendedOptions::realistic()
        };
        let p = Pricing { hw: &hw, opts: &opts };
        // 4096³ at c = 512: each dimension 4096/4608, so the rate is 0.5·989.4·(8/9)³.
        let big = p.linear(4096.0, 4096.0, 4096.0);
        let rate = 0.5 * 989.4 * (8.0f64 / 9.0).powi(3);
        assert!((big.compute_s - big.tflop / rate).abs() < 1e-12 * big.compute_s);
        // A skinny GEMM (k = 512) runs at half the rate along k: slower per FLOP.
        let skinny = p.linear(4096.0, 512.0, 4096.0);
        assert!(skinny.compute_s / skinny.tflop > 1.5 * big.compute_s / big.tflop);
        // Attention over 1024 queries and 3072 keys at c_att = 1024: (1/2)·(3/4) of η_att times the
        // kernel's rate on calls of 1024 keys (cuDNN, 3.5/(1/574 + 2.5/408) = 444.75 TFLOP/s of
        // the H100's 794.5) on the ceiling, causal (1024/1152).
        let kernel = 3.5 / (1.0 / 574.0 + 2.5 / 408.0) / 794.5 * 1024.0 / 1152.0;
        let a = p.attention(1.0, 0.0, 1024.0, 3072.0);
        let rate = opts.hardware.attention_efficiency * 989.4 * kernel * 0.5 * 0.75;
        assert!((a.compute_s - 1.0 / rate).abs() < 1e-12);
    }

    #[test]
    fn misaligned_activation_matmuls_run_at_the_vector_peak_by_hand() {
        let hw = Hardware::from_params(&SystemParams::h200(), false);
        let opts = ExtendedOptions {
            hardware: HardwareChoices { matmul_efficiency: 0.5, gemm_half_dim: 0.0, ..HardwareChoices::realistic() },
            ..ExtendedOptions::realistic()
        };
        let p = Pricing { hw: &hw, opts: &opts };
        // 32 scores Q·Kᵀ (2048 × 224)·(224 × 2048): 2·32·2048·224·2048 FLOPs at 0.5 · 989.4.
        let aligned = p.activation_matmul(32.0, 2048.0, 224.0, 2048.0);
        assert!((aligned.compute_s - aligned.tflop / (0.5 * 989.4)).abs() < 1e-12 * aligned.compute_s);
        // Head width 225 (not a multiple of 8): the same shape at the FP16 non-Tensor-Core peak.
        let off = p.activation_matmul(32.0, 2048.0, 225.0, 2048.0);
        assert_eq!(off.tflop, 2.0 * 32.0 * 2048.0 * 225.0 * 2048.0 * 1e-12);
        assert!((off.compute_s - off.tflop / hw.params.vector_flops_fp16).abs() < 1e-12 * off.compute_s);
        assert!(hw.params.vector_flops_fp16 < 0.5 * 989.4);
    }
}
