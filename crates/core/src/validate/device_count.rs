//! Devices versus chips: what a measured row counts. A TPU7x (Ironwood) chip holds two
//! TensorCores that JAX shows as two devices, so a MaxText run on 128 chips states a mesh of 256
//! devices (`ici_fsdp_parallelism=256`); other rows count chips (or GPUs) in `num_devices` and
//! in their degrees alike. A row is read in the unit its parallel degrees count: when
//! `tp·pp·cp·dp` is a whole multiple `k` of the stated device count and the part is a TPU (a
//! torus of chips) or the row's words say it counts chips, each of the `tp·pp·cp·dp` devices is
//! `1/k` of a catalog chip ([`share_of_chip`]: rates, HBM and links divided by `k`, `k` times as
//! many devices per scale-up domain), and a figure given per chip is `k` devices' worth
//! ([`per_chip_figure`]).

use super::words::Words;
use crate::extended::Hardware;
use crate::vocab::NoteList;

/// How many devices of the row's degrees one stated device (chip) holds, when the degrees count
/// a whole multiple `k > 1` of the stated `num_devices`: `Some(k)` on a TPU (`torus`) or when the
/// row's `unit_words` (its `device_unit`, the measured figure's convention) name chips; `None`
/// otherwise (the counts disagree for another reason).
pub fn devices_per_chip(num_devices: u64, degrees: u64, torus: bool, unit_words: &str) -> Option<u64> {
    if num_devices == 0 || degrees <= num_devices || !degrees.is_multiple_of(num_devices) {
        return None;
    }
    let w = Words::new(unit_words);
    (torus || w.any(&["chip", "chips", "tensorcore", "tensorcores", "jax device", "jax devices"]))
        .then_some(degrees / num_devices)
}

/// One of the `k` devices a chip is shown as: `1/k` of its matmul rates, HBM bandwidth and
/// capacity and of its links' bandwidth per device; `k` times as many devices in a scale-up
/// domain. `k = 1` returns the part unchanged.
pub fn share_of_chip(hw: &Hardware, k: u64) -> Hardware {
    if k <= 1 {
        return hw.clone();
    }
    let f = k as f64;
    let mut h = hw.clone();
    h.matmul_peak_tflops /= f;
    h.matmul_ceiling_tflops /= f;
    h.attention_ceiling_tflops /= f;
    h.hbm_bandwidth_gbps /= f;
    h.hbm_capacity_gb /= f;
    h.net.fast_bandwidth /= f;
    h.net.slow_bandwidth /= f;
    h.net.domain_size = h.net.domain_size.saturating_mul(k);
    h.approximations.note(
        crate::vocab::NoteKind::Mapping,
        format!("one device = 1/{k} of a chip (the row's degrees count {k} devices per chip)"),
    );
    h
}

/// Whether a row's per-device figure is given per chip: the words say "per chip" and do not
/// say "per JAX device"/"per TensorCore" (MaxText logs per JAX device), or the figure's field is
/// named per chip (`tflops_per_chip`).
pub fn per_chip_figure(field_name: &str, unit_words: &str) -> bool {
    let w = Words::new(unit_words);
    if w.any(&["per jax device", "per tensorcore", "per core"]) {
        return false;
    }
    w.has("per chip") || field_name.contains("chip")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_counting_two_devices_per_chip() {
        assert_eq!(devices_per_chip(128, 256, true, ""), Some(2));
        assert_eq!(devices_per_chip(128, 256, false, "TPU7x chips (2 TensorCores each)"), Some(2));
        // A GPU row whose counts disagree is not read as chips.
        assert_eq!(devices_per_chip(128, 256, false, "GPU"), None);
        assert_eq!(devices_per_chip(128, 128, true, ""), None);
        assert_eq!(devices_per_chip(128, 96, true, ""), None);
        assert_eq!(devices_per_chip(0, 96, true, ""), None);
        assert!(per_chip_figure("tflops_per_device", "model TFLOP/s per chip"));
        assert!(!per_chip_figure("tflops_per_device", "per JAX device; the README column is per chip"));
        assert!(per_chip_figure("tokens_per_s_per_chip", ""));
        assert!(!per_chip_figure("tflops_per_device", "devices"));
    }
}
