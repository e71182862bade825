//! Unstructured weight sparsity ([`crate::extended::ModelFeatures::weight_sparsity`]): which parts
//! gain from it and what it changes.
//!
//! **Which parts.** Only hardware that skips the multiplications by zero weights of an arbitrary
//! (unstructured) sparsity pattern gains from it. Of the catalog's parts these are the wafer-scale
//! engines (architecture `wafer_scale`: `cerebras_cs2`, `cerebras_cs3`): their cores are driven by
//! the data flowing in, and a zero weight triggers no work, which is how Emani et al. (2023) trained
//! GPT-2 XL 1.8–2× faster at 90 % sparsity than dense, GPT-3 6.7B 2.1× and GPT-3 30B 3.79× on one
//! CS-2. GPUs are not among them: their sparse tensor cores (NVIDIA since Ampere, AMD since MI300)
//! accelerate only *2:4 structured* sparsity — exactly two non-zeros in every four consecutive
//! weights, 50 % sparsity in a fixed pattern, at most 2× the dense matmul rate (the "sparse" peaks
//! of vendor sheets, which the catalog leaves out). Unstructured sparse weights at 90 % run on GPUs
//! as dense matmuls (or as slower sparse kernels), so the switch has no effect there. Neither the
//! study nor the catalog says that the dataflow (SambaNova), IPU (Graphcore) or TPU entries skip
//! zero weights: no effect there either.
//!
//! **What changes.** The FLOPs (and so the matrix time) of the transformer blocks' weight
//! matmuls — Q/K/V, the attention output projection and the MLP matrices, forward, input gradient
//! and weight gradient alike (with a fixed sparse mask only the non-zero weights get gradients) —
//! fall to `1 − s` of dense. Unchanged: attention's logits and attend products (activations times
//! activations, no weights), the embedding and the output head (sparse training recipes keep them
//! dense), element-wise work, communication, and memory. Memory stays dense because (1) the study
//! reports speed, not memory, (2) a compressed format stores an index next to every non-zero, so
//! what it saves depends on the format (16-bit values with 32-bit indices save nothing below 2/3
//! sparsity) and (3) a wafer-scale engine streams its weights from external memory (MemoryX)
//! rather than holding them; the matmul's operand traffic is kept dense for the same reasons.

use super::hardware::Hardware;
pub use super::hardware::exploits_unstructured_sparsity;
use super::options::ExtendedOptions;
use crate::vocab::Note;

/// The fraction of the dense weight-matmul FLOPs executed: `1 − s` where the part exploits
/// unstructured sparsity, else 1.
pub fn weight_density(hw: &Hardware, opts: &ExtendedOptions) -> f64 {
    if hw.unstructured_sparsity { 1.0 - opts.model.weight_sparsity } else { 1.0 }
}

/// Why weight sparsity `s > 0` changes nothing on a part (`None`: it does change something, or
/// `s` is 0): a [`NoteKind::NotApplied`] note about `ext.weight_sparsity`.
pub fn no_effect_note(system_id: &str, hw: &Hardware, sparsity: f64) -> Option<Note> {
    (sparsity > 0.0 && !hw.unstructured_sparsity).then(|| {
        Note::not_applied(format!(
            "weight sparsity {sparsity} has no effect on {system_id}: only wafer-scale engines (cerebras_cs2, \
             cerebras_cs3) skip zero weights of unstructured sparsity; GPU sparse tensor cores accelerate only the 2:4 \
             structured pattern (50 %), so it is priced dense"
        ))
        .about("ext.weight_sparsity")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;
    use crate::catalog;
    use crate::extended::options::ModelFeatures;

    #[test]
    fn only_wafer_scale_parts_exploit_it() {
        for s in catalog::systems() {
            let wafer = s.id.starts_with("cerebras_");
            assert_eq!(exploits_unstructured_sparsity(s), wafer, "{}", s.id);
        }
        let mut hw = Hardware::from_params(&SystemParams::h200(), true);
        let opts = ExtendedOptions {
            model: ModelFeatures { weight_sparsity: 0.9, ..ModelFeatures::realistic() },
            ..ExtendedOptions::realistic()
        };
        assert_eq!(weight_density(&hw, &opts), 1.0);
        assert!(no_effect_note("H200", &hw, 0.9).unwrap().contains("2:4"));
        assert_eq!(no_effect_note("H200", &hw, 0.0), None);
        hw.unstructured_sparsity = true;
        assert!((weight_density(&hw, &opts) - 0.1).abs() < 1e-15);
        assert_eq!(no_effect_note("wafer", &hw, 0.9), None);
    }
}
