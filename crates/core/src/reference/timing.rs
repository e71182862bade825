//! Time of one layer pass (forward or backward): spec §2.1–2.3 (standard rule), §2.5 (SUMMA
//! pipelined rule) and §2.6 (several collectives without overlap).

use super::collective::{CommSpec, comm_time};
use super::layers::CommList;
use super::machine::Machine;

/// Quirk Q5: every peak rate is derated by a fixed 0.8 average efficiency ...
const COMPUTE_EFFICIENCY: f64 = 0.8;
/// ... and every layer pays a fixed 20 µs kernel overhead in its forward and in its backward pass.
/// Written as the reference computes it, `20 * 1e-6` (= 1.9999999999999998e-05 s, not 2e-05).
const KERNEL_OVERHEAD_S: f64 = 20.0 * 1e-6;

/// The rate a layer can reach given a peak [TFLOP/s]: `R · 0.8` (quirk Q5).
pub fn effective_rate(peak_tflops: f64) -> f64 {
    peak_tflops * COMPUTE_EFFICIENCY
}

/// `T_flops(F) = 20·1e-6 + F / (0.8·R)` [s] for `F` [TFLOP] at an effective rate [TFLOP/s] (§2.1).
pub fn flops_time(tflop: f64, effective_rate: f64) -> f64 {
    KERNEL_OVERHEAD_S + tflop / effective_rate
}

/// `T_mem(M) = M / B_hbm` [s] for `M` [GB] (§2.2).
pub fn mem_time(gb: f64, hbm_bandwidth: f64) -> f64 {
    gb / hbm_bandwidth
}

/// How a layer combines compute, memory traffic and its collectives into a pass time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingRule {
    /// §2.3: `max(t_c, t_m) + T_comm` of at most one collective, no overlap.
    Standard,
    /// §2.5: SUMMA with `nb` panels; each collective is split into `nb` steps that overlap with
    /// compute except the first.
    Summa {
        /// Panel count `nb` [count].
        nb: u64,
    },
    /// §2.6: `max(t_c, t_m) + Σ T_comm` over several collectives, no overlap.
    Sequential,
}

/// The time of one pass of one layer.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PassTime {
    /// Pass time [s].
    pub t: f64,
    /// Exposed communication time [s].
    pub t_comm: f64,
    /// Compute time `T_flops(F)` [s] (includes the 20 µs overhead).
    pub t_comp: f64,
    /// Exposed memory time `max(T_mem(M) − T_flops(F), 0)` [s].
    pub t_mem: f64,
    /// Quirk Q12: "intensity" is the time ratio `T_flops / T_mem` (including the 20 µs overhead),
    /// not FLOP per byte [dimensionless].
    pub intensity: f64,
    /// Time of each collective as priced by the rule [s] (per panel step for SUMMA), in the
    /// order of the layer's collective list.
    pub comm_times: [f64; super::layers::MAX_COMMS],
}

/// Prices one pass: `flops` [TFLOP], `mem` [GB] of HBM traffic, its collectives and rule.
pub fn pass_time(
    machine: &Machine,
    tflop: f64,
    mem_gb: f64,
    tensor_cores: bool,
    comms: &CommList,
    rule: TimingRule,
) -> PassTime {
    let rate = if tensor_cores { machine.matrix_rate } else { machine.vector_rate };
    let t_c = flops_time(tflop, rate);
    let t_m = mem_time(mem_gb, machine.hbm_bandwidth);
    let t_compute = f64::max(t_c, t_m);
    let mut comm_times = [0.0; super::layers::MAX_COMMS];
    let price = |c: &CommSpec, volume: f64| comm_time(&machine.net, c.kind, volume, c.group_size, c.fast_share);
    let t_comm = match rule {
        TimingRule::Standard | TimingRule::Sequential => {
            let mut sum = 0.0;
            for (i, c) in comms.as_slice().iter().enumerate() {
                comm_times[i] = price(c, c.volume_gb);
                sum += comm_times[i];
            }
            sum
        }
        TimingRule::Summa { nb } => {
            let mut step = 0.0;
            for (i, c) in comms.as_slice().iter().enumerate() {
                comm_times[i] = price(c, c.volume_gb / nb as f64);
                step += comm_times[i];
            }
            // First panel step exposed; the other nb−1 hide behind compute as far as it lasts.
            step + f64::max(step * nb as f64 - t_compute, 0.0)
        }
    };
    PassTime {
        t: t_compute + t_comm,
        t_comm,
        t_comp: t_c,
        t_mem: f64::max(t_m - t_c, 0.0),
        intensity: t_c / t_m,
        comm_times,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_is_computed_like_the_reference() {
        assert_eq!(KERNEL_OVERHEAD_S, 1.9999999999999998e-05);
        assert_ne!(KERNEL_OVERHEAD_S, 2e-5);
    }

    #[test]
    fn worked_example_fc1_forward() {
        // §10: F_f = 2048·25600·(25600+25599)·1e-12 TFLOP on H200 tensor cores.
        let f = 2048.0 * 25600.0 * (25600.0 * 1e-12 + 25599.0 * 1e-12);
        let t = flops_time(f, effective_rate(989.4));
        assert!((t - 3.41133e-3).abs() < 1e-8, "{t}");
    }
}
