//! Model-FLOP utilisation (MFU), in one home: the share of the devices' peak matrix rate that a
//! count of training FLOPs over a time amounts to,
//!
//! `MFU = FLOPs done / (time · devices · R_peak)` [fraction, 0–1],
//!
//! with `R_peak` the dense (not derated) matrix rate of one device [TFLOP/s]. The FLOPs are the
//! model's useful work (MFU) or, counted with recomputation, the hardware's (HFU: the same
//! arithmetic on another count). Work the parallel configuration adds (redundant element-wise work,
//! communication) does not count.
//!
//! Three forms, each in the operation order its callers have always used (their figures are
//! compared bit for bit): the explorer's and the launch estimate's [`model_flops_utilisation`]
//! (per sample and a throughput), validation's [`utilisation_of_step`] (per iteration and a step
//! time) and calibration's inverse, [`step_time_at_utilisation`] (the step time a stated MFU
//! means).

/// Model-FLOP utilisation [fraction, 0–1] from a throughput: the model's training work per sample
/// times the throughput, over the peak matrix rate of all devices,
///
/// `MFU = F_sample · throughput / (devices · R_mat)`,
///
/// with `F_sample` [TFLOP per sample] a count of one sample through the whole, unparallelised
/// model, forward and backward (the explorer uses the reference's, `reference::model_summary_on`,
/// which includes flash attention's recomputation in the backward pass, as the published model
/// counts it; the launch estimate uses the model count of NeMo, MaxText and torchtitan),
/// `throughput` [samples/s] and `R_mat` the peak (not derated) matrix rate of one device
/// [TFLOP/s]. 0 when the devices' capacity is not positive (or NaN).
pub fn model_flops_utilisation(
    flops_per_sample_tflop: f64,
    throughput_samples_per_s: f64,
    devices: u64,
    peak_matrix_tflops: f64,
) -> f64 {
    let capacity = devices as f64 * peak_matrix_tflops;
    if capacity.is_nan() || capacity <= 0.0 {
        return 0.0;
    }
    flops_per_sample_tflop * throughput_samples_per_s / capacity
}

/// Utilisation [fraction, 0–1] of one iteration: `flop_per_step` [FLOP] (the model's count for an
/// MFU, the hardware's for an HFU) done in `step_s` [s] on `devices` devices of dense peak
/// `peak_tflops` [TFLOP/s each]:
///
/// `flop_per_step / (step_s · devices · peak_tflops · 1e12)`.
///
/// No guard: the caller has refused a peak that is not positive.
pub fn utilisation_of_step(flop_per_step: f64, step_s: f64, devices: f64, peak_tflops: f64) -> f64 {
    flop_per_step / (step_s * devices * peak_tflops * 1e12)
}

/// The step time [s] at which `tflop_per_step` [TFLOP] on `devices` devices of dense peak
/// `peak_tflops` [TFLOP/s each] runs at utilisation `utilisation` [fraction]: the inverse of
/// [`utilisation_of_step`],
///
/// `tflop_per_step / (utilisation · peak_tflops · devices)`.
pub fn step_time_at_utilisation(tflop_per_step: f64, utilisation: f64, peak_tflops: f64, devices: f64) -> f64 {
    tflop_per_step / (utilisation * peak_tflops * devices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_computed_utilisation() {
        // 1.2 TFLOP per sample at 100 samples/s on 8 devices of 100 TFLOP/s: 120 / 800 = 0.15.
        assert!((model_flops_utilisation(1.2, 100.0, 8, 100.0) - 0.15).abs() < 1e-15);
        // No capacity: 0, not a division by zero.
        assert_eq!(model_flops_utilisation(1.2, 100.0, 0, 100.0), 0.0);
        assert_eq!(model_flops_utilisation(1.2, 100.0, 8, f64::NAN), 0.0);
    }

    #[test]
    fn the_step_form_and_its_inverse_agree_with_the_rate_form() {
        // 256 samples of 1.2 TFLOP each in 2 s on 8 devices of 100 TFLOP/s: 307.2 / 1600 = 0.192.
        let mfu = utilisation_of_step(256.0 * 1.2e12, 2.0, 8.0, 100.0);
        assert!((mfu - 0.192).abs() < 1e-15);
        assert!((mfu - model_flops_utilisation(1.2, 128.0, 8, 100.0)).abs() < 1e-15);
        assert!((step_time_at_utilisation(256.0 * 1.2, 0.192, 100.0, 8.0) - 2.0).abs() < 1e-12);
    }
}
