//! Mixture-of-Experts sweep axes (`moe.ep`, `moe.etp`, `moe.load`, `moe.dispatcher`,
//! `moe.experts`, `moe.top_k`): what each changes in a point's switches or model. Used by the
//! sweep engine ([`crate::sweep`]) and the MoE study presets.

use super::options::MoeOptions;
use crate::Error;
use crate::extended::workload::Workload;

/// One MoE axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MoeAxis {
    /// Fixed expert-parallel degree.
    Ep,
    /// Fixed expert-tensor-parallel degree.
    Etp,
    /// Expert load (`forced`, `dropless:1.2`, `capacity:1.25`).
    Load,
    /// Token dispatcher (`alltoall`, `allgather`, `deepep`, `deepep:4`).
    Dispatcher,
    /// Routed experts `E`; top-k and expert width unchanged (total parameters scale with `E`).
    Experts,
    /// Top-k with the expert width scaled by `k₀/k` (equal active parameters and FLOPs per token:
    /// finer experts, GShard → DeepSeekMoE's fine-grained segmentation).
    TopK,
}

impl MoeAxis {
    /// Every MoE axis.
    pub const ALL: [MoeAxis; 6] =
        [MoeAxis::Ep, MoeAxis::Etp, MoeAxis::Load, MoeAxis::Dispatcher, MoeAxis::Experts, MoeAxis::TopK];

    /// Canonical name.
    pub fn name(self) -> &'static str {
        match self {
            MoeAxis::Ep => "moe.ep",
            MoeAxis::Etp => "moe.etp",
            MoeAxis::Load => "moe.load",
            MoeAxis::Dispatcher => "moe.dispatcher",
            MoeAxis::Experts => "moe.experts",
            MoeAxis::TopK => "moe.top_k",
        }
    }

    /// Other accepted names.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            MoeAxis::Ep => &["ep"],
            MoeAxis::Etp => &["etp"],
            MoeAxis::Load => &["load", "routing"],
            MoeAxis::Dispatcher => &["dispatcher"],
            MoeAxis::Experts => &["experts", "num_experts"],
            MoeAxis::TopK => &["top_k", "topk"],
        }
    }

    /// Label with unit.
    pub fn label(self) -> &'static str {
        match self {
            MoeAxis::Ep => "EP degree",
            MoeAxis::Etp => "ETP degree",
            MoeAxis::Load => "expert load",
            MoeAxis::Dispatcher => "token dispatcher",
            MoeAxis::Experts => "routed experts",
            MoeAxis::TopK => "top-k (equal active parameters)",
        }
    }

    /// Whether the values are counts (else names).
    pub fn counts(self) -> bool {
        !matches!(self, MoeAxis::Load | MoeAxis::Dispatcher)
    }

    /// Applies a switch axis to `o` (`value` as written); model axes leave it.
    pub fn apply_options(self, o: MoeOptions, value: &str) -> Result<MoeOptions, Error> {
        match self {
            MoeAxis::Ep => o.with_text(&format!("ep={value}")),
            MoeAxis::Etp => o.with_text(&format!("etp={value}")),
            MoeAxis::Load => o.with_text(&format!("load={value}")),
            MoeAxis::Dispatcher => o.with_text(&format!("dispatcher={value}")),
            MoeAxis::Experts | MoeAxis::TopK => Ok(o),
        }
    }

    /// Applies a model axis to `w` (an MoE model); switch axes leave it. Errors name the axis.
    pub fn apply_model(self, w: &mut Workload, value: u64) -> Result<(), Error> {
        if !matches!(self, MoeAxis::Experts | MoeAxis::TopK) {
            return Ok(());
        }
        let Some(m) = w.moe.as_mut() else {
            return Err(Error::invalid(self.name(), value, "needs a Mixture-of-Experts model"));
        };
        match self {
            MoeAxis::Experts => m.experts = value,
            _ => {
                let active = m.top_k * m.expert_ffn;
                if value == 0 || !active.is_multiple_of(value) {
                    return Err(Error::invalid(
                        self.name(),
                        value,
                        format!("must divide top_k · expert_ffn = {active} (equal active parameters)"),
                    ));
                }
                m.expert_ffn = active / value;
                m.top_k = value;
            }
        }
        w.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moe_shape::tests::dsv3;

    #[test]
    fn top_k_keeps_active_parameters() {
        let (m, _) = dsv3();
        let mut w = Workload { moe: Some(m), layers: 61, ..Workload::LLAMA3_8B };
        let before = m.active_parameters(w.hidden);
        MoeAxis::TopK.apply_model(&mut w, 4).unwrap();
        let after = w.moe.unwrap();
        assert_eq!((after.top_k, after.expert_ffn), (4, 4096));
        assert_eq!(after.active_parameters(w.hidden), before);
        assert_eq!(MoeAxis::TopK.apply_model(&mut w, 3).unwrap_err().field(), Some("moe.top_k"));
        MoeAxis::Experts.apply_model(&mut w, 64).unwrap();
        assert_eq!(w.moe.unwrap().experts, 64);
        let o = MoeAxis::Dispatcher.apply_options(MoeOptions::default(), "deepep:4").unwrap();
        assert_eq!(o.dispatcher, crate::extended::moe::Dispatcher::Hierarchical { max_domains: Some(4) });
    }
}
