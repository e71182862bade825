//! Size and work of a model as the reference's notebooks report them (spec §8).

use super::block::{BlockShape, block_counts, numpy_sum};
use super::layers::LayerCounts;
use super::machine::Machine;
use crate::{Error, ModelShape, Strategy, SystemParams};

/// Parameters and training work of one model.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ModelSummary {
    /// Parameters [count]: `Σ weights_mem · D / ES` over one block (= `D·(12e² + 10e)` when `f = 4e`).
    pub parameters: f64,
    /// Training work per sample (forward + backward, including the attention recomputation)
    /// [TFLOP]: `Σ (flops_fwd + flops_bwd) · D` at micro-batch 1 without parallelism.
    pub flops_per_sample_tflop: f64,
}

/// [`model_summary`] on a given system: the FLOP count depends on the system only through flash
/// attention's tensor-core factor `R_mat/R_vec` (quirk Q6).
pub fn model_summary_on(model: &ModelShape, system: &SystemParams) -> Result<ModelSummary, Error> {
    model.validate()?;
    system.validate()?;
    let machine = Machine::new(system);
    let shape = BlockShape { b: 1, m1: 1, m2: 1, nb: 1, tau1: 1, tau2: 1 };
    let c = block_counts(Strategy::OneD, model, &machine.units, &shape);
    let column = |rows: &[LayerCounts], f: fn(&LayerCounts) -> f64| {
        let mut v = [0.0; 8];
        for (i, r) in rows.iter().enumerate() {
            v[i] = f(r);
        }
        numpy_sum(&v[..rows.len()])
    };
    let weights = column(&c.mlp, |r| r.weights_gb) + column(&c.attention, |r| r.weights_gb);
    let flops = column(&c.mlp, |r| r.flops_fwd_tflop)
        + column(&c.mlp, |r| r.flops_bwd_tflop)
        + column(&c.attention, |r| r.flops_fwd_tflop)
        + column(&c.attention, |r| r.flops_bwd_tflop);
    let depth = model.depth as f64;
    Ok(ModelSummary { parameters: weights * depth / system.element_size, flops_per_sample_tflop: flops * depth })
}

/// Parameters and training FLOPs per sample as the reference's `stats.ipynb` prints them: on its
/// H200 system (`R_mat/R_vec = 989.4/133.8`), e.g. 1006.67 B parameters and 12.57 PFLOP per sample
/// for `gpt3_1T`.
pub fn model_summary(model: &ModelShape) -> Result<ModelSummary, Error> {
    model_summary_on(model, &SystemParams::h200())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_models() {
        for (name, model, params_b) in [
            ("gpt3", ModelShape::GPT3, 173.96),
            ("gpt3_1T", ModelShape::GPT3_1T, 1006.67),
            ("vit_era5", ModelShape::VIT_ERA5, 86.98),
        ] {
            let s = model_summary(&model).unwrap();
            assert!((s.parameters / 1e9 - params_b).abs() < 0.005, "{name}: {}", s.parameters);
            // Closed form D·(12e² + 10e) with f = 4e.
            let e = model.e as f64;
            assert!((s.parameters - model.depth as f64 * (12.0 * e * e + 10.0 * e)).abs() < 1.0);
        }
        let s = model_summary(&ModelShape::GPT3_1T).unwrap();
        assert!((s.flops_per_sample_tflop / 1e3 - 12.57).abs() < 0.005, "{}", s.flops_per_sample_tflop);
    }
}
