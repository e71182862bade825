//! One MoE block on one device for one micro-batch: the block's attention sub-layer (as for a
//! dense block) with the MoE MLP of [`super::layer`] in place of the dense MLP.

use super::experts::ExpertLayout;
use super::layer::{MoeMlpCost, moe_mlp_cost};
use crate::extended::block::{BlockCost, block_cost};
use crate::extended::layout::Layout;
use crate::extended::options::Recompute;
use crate::extended::pricing::Pricing;
use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;

/// An MoE block's cost: the block without its dense MLP plus the MoE MLP.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MoeBlockCost {
    /// Everything but the routed experts' parameters (those are in `mlp.expert_parameters`,
    /// sharded over the expert data-parallel group).
    pub block: BlockCost,
    /// The MoE MLP with its time parts.
    pub mlp: MoeMlpCost,
}

/// Prices one MoE block of `w` (experts `m`) under `layout` and its expert layout `el`.
pub fn moe_block_cost(w: &Workload, m: &MoeShape, layout: &Layout, el: &ExpertLayout, p: &Pricing) -> MoeBlockCost {
    // The attention sub-layer with its norms, residuals and tensor-parallel collectives: the
    // dense block without an MLP.
    let attention = block_cost(&Workload { ffn_hidden: 0, ..*w }, layout, p);
    let overlap = (attention.fwd.compute_s, attention.bwd.compute_s);
    let mlp = moe_mlp_cost(w, m, layout, el, p, &p.opts.moe, overlap);
    let fwd = attention.fwd + mlp.fwd;
    let bwd = attention.bwd + mlp.bwd;
    let block = BlockCost {
        fwd,
        bwd,
        recompute: if p.opts.recompute == Recompute::Full { fwd } else { Default::default() },
        parameters: attention.parameters + mlp.dense_parameters,
        activation_bytes: attention.activation_bytes + mlp.activation_bytes,
        input_bytes: attention.input_bytes,
    };
    MoeBlockCost { block, mlp }
}
