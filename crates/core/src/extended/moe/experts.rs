//! Expert parallelism (EP) and expert tensor parallelism (ETP) with Megatron's "parallel folding"
//! (Liu et al. 2025, arXiv:2504.14960): the expert layers re-split the `tp·cp·dp` ranks of one
//! pipeline stage as `etp × ep × edp` (expert data parallel), independently of how the attention
//! splits them. Ranks are ordered `etp` innermost, then `ep`, then `edp` (Megatron's expert rank
//! order), so the fast domain is filled by ETP first, then EP.

use crate::Error;
use crate::error::FieldPath;
use crate::extended::layout::Layout;
use crate::moe_shape::MoeShape;

/// The expert split of one layout. Degrees and shares in devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct ExpertLayout {
    /// Expert-parallel degree `e`: experts are spread over `e` ranks, `E/e` each.
    pub ep: u64,
    /// Expert-tensor-parallel degree `t_e`: each expert's width split over `t_e` ranks.
    pub etp: u64,
    /// Expert-data-parallel degree `tp·cp·dp/(e·t_e)`: replicas of each expert shard.
    pub edp: u64,
    /// EP ranks inside one fast domain `e_n` (divides `ep`).
    pub ep_fast: u64,
    /// ETP ranks inside one fast domain (divides `etp`).
    pub etp_fast: u64,
    /// Expert-data-parallel ranks inside one fast domain.
    pub edp_fast: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

impl ExpertLayout {
    /// The field an error about the expert-parallel degree names.
    pub const EP_FIELD: FieldPath<'static> = FieldPath::new("layout.ep");
    /// The field an error about the expert tensor-parallel degree names.
    pub const ETP_FIELD: FieldPath<'static> = FieldPath::new("layout.etp");

    /// The folded expert layout of `layout` with degrees `ep`, `etp` for the experts of `moe`.
    /// Rules (each error names `layout.ep` / `layout.etp`): `ep` divides the routed experts,
    /// `ep·etp` divides `tp·cp·dp`, `etp` divides the expert width.
    pub fn fold(layout: &Layout, moe: &MoeShape, ep: u64, etp: u64) -> Result<ExpertLayout, Error> {
        let group = layout.tp.saturating_mul(layout.cp).saturating_mul(layout.dp);
        check_degrees(moe, Some(ep), Some(etp), Self::EP_FIELD, Self::ETP_FIELD)?;
        let ep_etp = ep.saturating_mul(etp);
        if !group.is_multiple_of(ep_etp) {
            return Err(Error::invalid(
                Self::EP_FIELD.as_str(),
                ep,
                format!(
                    "ep·etp = {ep_etp} must divide the ranks of one pipeline stage tp·cp·dp = {} · {} · {} = {group}",
                    layout.tp, layout.cp, layout.dp
                ),
            )
            .with_hint("MoE parallel folding splits the same ranks as etp × ep × expert-dp"));
        }
        let p = layout.placement;
        let stage_fast = p.tp * p.cp * p.dp;
        let etp_fast = gcd(etp, stage_fast);
        let ep_fast = gcd(ep, stage_fast / etp_fast);
        let edp = group / ep_etp;
        let edp_fast = gcd(edp, stage_fast / (etp_fast * ep_fast));
        Ok(ExpertLayout { ep, etp, edp, ep_fast, etp_fast, edp_fast })
    }

    /// Fast domains the EP group spans `e / e_n`.
    pub fn ep_domains(&self) -> u64 {
        self.ep / self.ep_fast.max(1)
    }
}

/// The model's own rules on the degrees `ep`, `etp` (those given; errors name `ep_field` /
/// `etp_field`): `ep` divides the routed experts (each EP rank holds the same number of them),
/// `etp` divides the expert width. No layout can take a degree that breaks one.
fn check_degrees(
    moe: &MoeShape,
    ep: Option<u64>,
    etp: Option<u64>,
    ep_field: FieldPath<'_>,
    etp_field: FieldPath<'_>,
) -> Result<(), Error> {
    if let Some(ep) = ep.filter(|&e| e == 0 || !moe.experts.is_multiple_of(e)) {
        return Err(Error::invalid(ep_field.as_str(), ep, format!("must divide the routed experts {}", moe.experts))
            .with_hint("each EP rank holds the same number of experts"));
    }
    if let Some(etp) = etp.filter(|&t| t == 0 || !moe.expert_ffn.is_multiple_of(t)) {
        return Err(Error::invalid(
            etp_field.as_str(),
            etp,
            format!("must divide the expert width {}", moe.expert_ffn),
        ));
    }
    Ok(())
}

/// The field an error about a fixed expert-parallel degree of the MoE options names.
pub const MOE_EP_FIELD: FieldPath<'static> = FieldPath::new("moe.ep");
/// The field an error about a fixed expert-tensor-parallel degree of the MoE options names.
pub const MOE_ETP_FIELD: FieldPath<'static> = FieldPath::new("moe.etp");

/// Checks the degrees the MoE options fix (`moe.ep`, `moe.etp`; `None`: searched) against the
/// model's experts and the search's `devices` before a search, so a degree no candidate can take is
/// refused by name instead of leaving every candidate without an expert layout ("extended mode
/// rejects every candidate"). The rules are [`ExpertLayout::fold`]'s that no layout can meet: `ep`
/// divides the routed experts, `etp` the expert width, and `ep·etp` (an `etp` left to the search
/// counts 1) divides the ranks of one pipeline stage, `tp·cp·dp = devices/pp`, so it can be at most
/// the `devices` (one stage, `pp` 1). The error names `moe.ep`, or `moe.etp` when `ep` alone fits.
pub fn check_fixed_degrees(moe: &MoeShape, ep: Option<u64>, etp: Option<u64>, devices: u64) -> Result<(), Error> {
    check_degrees(moe, ep, etp, MOE_EP_FIELD, MOE_ETP_FIELD)?;
    let (e, t) = (ep.unwrap_or(1), etp.unwrap_or(1));
    if e.saturating_mul(t) <= devices {
        return Ok(());
    }
    let (field, value) = if e > devices { (MOE_EP_FIELD, e) } else { (MOE_ETP_FIELD, t) };
    Err(Error::invalid(
        field.as_str(),
        value,
        format!(
            "ep·etp = {e} · {t} = {} must divide the ranks of one pipeline stage tp·cp·dp = devices/pp, at most the {devices} devices",
            e.saturating_mul(t)
        ),
    )
    .with_hint("MoE parallel folding splits one stage's ranks as etp × ep × expert-dp"))
}

/// The `(ep, etp)` pairs a search tries for `layout`: every `ep` dividing both the experts and the
/// stage's ranks, `etp` from `{1, tp}` (the settings in use: experts unsplit, or split like the
/// attention), each only when it folds; a fixed degree replaces its list.
pub fn expert_choices(layout: &Layout, moe: &MoeShape, ep: Option<u64>, etp: Option<u64>) -> Vec<(u64, u64)> {
    let group = layout.tp * layout.cp * layout.dp;
    let eps: Vec<u64> = match ep {
        Some(e) => vec![e],
        None => crate::vocab::divisors(gcd(moe.experts, group)),
    };
    let etps: Vec<u64> = match etp {
        Some(t) => vec![t],
        None if layout.tp > 1 => vec![1, layout.tp],
        None => vec![1],
    };
    let mut out = Vec::new();
    for &e in &eps {
        for &t in &etps {
            // `ep·etp` dividing the stage's ranks is one of `fold`'s rules: checked first, so a
            // pair that does not fold costs no error.
            if group.is_multiple_of(e.saturating_mul(t)) && ExpertLayout::fold(layout, moe, e, t).is_ok() {
                out.push((e, t));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dsv3() -> MoeShape {
        crate::moe_shape::tests::dsv3().0
    }

    #[test]
    fn folding_by_hand() {
        // 1024 GPUs: tp 2, pp 8, dp 64 → a stage has 128 ranks; ep 64 → edp 2 (Megatron-Bridge's
        // DeepSeek-V3 H100 row: EP 64 with TP 2 is allowed because experts fold over TP·DP).
        let l = Layout::placed(2, 1, 8, 64, 1, 8192, 8);
        let x = ExpertLayout::fold(&l, &dsv3(), 64, 1).unwrap();
        assert_eq!((x.ep, x.etp, x.edp), (64, 1, 2));
        // The domain of 8 holds tp 2 × dp 4 of one stage → EP fills those 8: e_n = 8, 8 domains.
        assert_eq!((x.ep_fast, x.ep_domains()), (8, 8));
        let e = ExpertLayout::fold(&l, &dsv3(), 256, 1).unwrap_err();
        assert_eq!(e.field(), Some("layout.ep"));
        assert!(e.to_string().contains("128"), "{e}");
        assert_eq!(ExpertLayout::fold(&l, &dsv3(), 3, 1).unwrap_err().field(), Some("layout.ep"));
        assert_eq!(ExpertLayout::fold(&l, &dsv3(), 8, 3).unwrap_err().field(), Some("layout.etp"));
    }

    #[test]
    fn choices_respect_the_rules_and_fixed_degrees() {
        let l = Layout::placed(2, 1, 8, 64, 1, 8192, 8);
        let all = expert_choices(&l, &dsv3(), None, None);
        // ep ∈ divisors(gcd(256, 128)) = 1…128 (8 values) × etp ∈ {1, 2}, minus ep 128 with etp 2.
        assert_eq!(all.len(), 15);
        assert!(all.contains(&(128, 1)) && !all.contains(&(128, 2)));
        assert_eq!(expert_choices(&l, &dsv3(), Some(32), None), vec![(32, 1), (32, 2)]);
        assert_eq!(expert_choices(&l, &dsv3(), Some(32), Some(1)), vec![(32, 1)]);
        assert!(expert_choices(&l, &dsv3(), Some(256), Some(1)).is_empty());
    }

    #[test]
    fn fixed_degrees_the_experts_cannot_take_are_refused_by_their_moe_key() {
        // DeepSeek-V3: 256 routed experts, expert width 2048.
        assert!(check_fixed_degrees(&dsv3(), None, None, 1024).is_ok());
        assert!(check_fixed_degrees(&dsv3(), Some(256), Some(4), 1024).is_ok());
        // 256 % 3 = 1; 512 > 256 experts; 2048 % 3 = 2.
        for (ep, etp, field) in [(Some(3), None, "moe.ep"), (Some(512), Some(1), "moe.ep"), (None, Some(3), "moe.etp")]
        {
            assert_eq!(check_fixed_degrees(&dsv3(), ep, etp, 1024).unwrap_err().field(), Some(field), "{ep:?} {etp:?}");
        }
        let e = check_fixed_degrees(&dsv3(), Some(0), None, 1024).unwrap_err();
        assert_eq!(
            e.to_string(),
            "moe.ep = 0: must divide the routed experts 256 (each EP rank holds the same number of experts)"
        );
    }

    #[test]
    fn fixed_degrees_larger_than_a_stage_are_refused_before_the_search() {
        // 64 devices: a pipeline stage has tp·cp·dp = 64/pp ≤ 64 ranks. ep 128 divides the 256
        // experts but no stage: refused by `moe.ep`; ep 64 alone fits (pp 1), ep 64 · etp 2 = 128
        // does not: refused by `moe.etp`; 32 · 2 = 64 fits; an etp left open counts 1.
        assert!(check_fixed_degrees(&dsv3(), Some(64), None, 64).is_ok());
        assert!(check_fixed_degrees(&dsv3(), Some(32), Some(2), 64).is_ok());
        assert!(check_fixed_degrees(&dsv3(), None, Some(64), 64).is_ok());
        let e = check_fixed_degrees(&dsv3(), Some(128), None, 64).unwrap_err();
        assert_eq!(
            e.to_string(),
            "moe.ep = 128: ep·etp = 128 · 1 = 128 must divide the ranks of one pipeline stage tp·cp·dp = \
             devices/pp, at most the 64 devices (MoE parallel folding splits one stage's ranks as etp × ep × expert-dp)"
        );
        let e = check_fixed_degrees(&dsv3(), Some(64), Some(2), 64).unwrap_err();
        assert_eq!(e.field(), Some("moe.etp"));
        assert!(e.to_string().starts_with("moe.etp = 2: ep·etp = 64 · 2 = 128"), "{e}");
        // The model's own rules come first: ep 512 > 256 experts names the experts, not the devices.
        assert!(check_fixed_degrees(&dsv3(), Some(512), None, 64).unwrap_err().to_string().contains("routed experts"));
    }
}
