//! Total and active parameters of a model with Mixture-of-Experts blocks (and of a dense one): the
//! counts a catalog states (`params_b`) and the ones a framework's MFU uses (active parameters).

use crate::extended::workload::Workload;

/// Parameter counts of a whole model [count]. Embedding and output head are untied (every model
/// of the catalog unties them); multi-token-prediction blocks are counted apart, as model cards
/// leave them out (DeepSeek-V3: 671B main model + 14B MTP module).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct ParameterCounts {
    /// Every parameter of the main model (blocks, embedding, head, final norm).
    pub total: f64,
    /// Parameters one token uses: routed experts counted `top_k` times instead of `E`.
    pub active: f64,
    /// Routed-expert parameters (all experts of all MoE blocks), part of `total`.
    pub routed_experts: f64,
    /// Multi-token-prediction blocks (not in `total`).
    pub mtp: f64,
}

/// Parameters of one dense block of `w` (attention, MLP of width `ffn_hidden`, two norms), with
/// grouped-query attention and gating as the model has them.
pub fn dense_block_parameters(w: &Workload) -> f64 {
    w.block_parameters(true, true)
}

/// Parameters of one MoE block: attention, routed and shared experts, router, two norms.
/// For a dense workload, a dense block.
pub fn moe_block_parameters(w: &Workload) -> f64 {
    match &w.moe {
        Some(m) => {
            let h = w.hidden;
            w.attention_parameters(true)
                + m.routed_parameters(h)
                + m.shared_parameters(h)
                + m.router_parameters(h)
                + 2.0 * h as f64
        }
        None => dense_block_parameters(w),
    }
}

/// Parameters of one multi-token-prediction block: a block of the model's last kind, the `2h × h`
/// projection of the concatenated embedding and hidden state, and its two input norms.
pub fn mtp_block_parameters(w: &Workload) -> f64 {
    let h = w.hidden as f64;
    let last_is_moe = w.moe_block(w.layers.saturating_sub(1)).is_some();
    let block = if last_is_moe { moe_block_parameters(w) } else { dense_block_parameters(w) };
    block + 2.0 * h * h + 2.0 * h
}

/// The counts of `w` (see [`ParameterCounts`]).
pub fn parameter_counts(w: &Workload) -> ParameterCounts {
    let h = w.hidden as f64;
    let ends = 2.0 * w.vocab_parameters() + h;
    let mtp = w.mtp_layers as f64 * mtp_block_parameters(w);
    match &w.moe {
        None => {
            let total = w.layers as f64 * dense_block_parameters(w) + ends;
            ParameterCounts { total, active: total, routed_experts: 0.0, mtp }
        }
        Some(m) => {
            let n_moe = m.moe_blocks(w.layers) as f64;
            let n_dense = w.layers as f64 - n_moe;
            let dense = n_dense * dense_block_parameters(w) + ends;
            let routed = n_moe * m.routed_parameters(w.hidden);
            let total = dense + n_moe * moe_block_parameters(w);
            let unused = n_moe * (m.experts - m.top_k) as f64 * m.matrices() as f64 * h * m.expert_ffn as f64;
            ParameterCounts { total, active: total - unused, routed_experts: routed, mtp }
        }
    }
}
