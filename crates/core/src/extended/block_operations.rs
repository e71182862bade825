//! The operations of one block as views list them (the explorer's layer table in extended mode,
//! memory breakdowns, tests): a dense model's block ([`super::block::operations`]) or, for a
//! Mixture-of-Experts model, its MoE block ([`super::moe::block::moe_block_operations`]) under
//! the layout's expert degrees, validated like the evaluator.

use super::block::operations;
use super::hardware::Hardware;
use super::layout::Layout;
use super::ops::Operation;
use super::options::ExtendedOptions;
use super::pricing::Pricing;
use super::workload::Workload;
use crate::Error;

/// The operations of one block of `w` on one device of `hw` under `layout` and `opts`, for views
/// (the explorer's layer table in extended mode); for a Mixture-of-Experts model its MoE block. Validates its inputs like the evaluator.
pub fn block_operations(
    w: &Workload,
    hw: &Hardware,
    layout: &Layout,
    opts: &ExtendedOptions,
) -> Result<Vec<Operation>, Error> {
    w.validate()?;
    opts.validate()?;
    layout.validate(w, hw.domain_size(), opts.uneven_stages)?;
    let p = Pricing { hw, opts };
    if let Some(m) = &w.moe {
        // An MoE model's MoE block (router, experts, dispatch/combine) under the layout's expert
        // degrees.
        let el = super::moe::experts::ExpertLayout::fold(layout, m, layout.ep, layout.etp)?;
        return Ok(super::moe::block::moe_block_operations(w, m, layout, &el, &p).0);
    }
    Ok(operations(w, layout, &p))
}
