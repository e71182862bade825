//! The parallel layout of one run: tensor (`tp`), context (`cp`), pipeline (`pp`) and data (`dp`)
//! parallel degrees, the micro-batch and global batch, and how each group is placed on the fast
//! (scale-up) domains.

use super::workload::Workload;
use crate::vocab::Candidate;
use crate::{Error, Strategy};

/// Members of each parallel group that share one fast domain [devices]. Each divides its degree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    /// Of the tensor-parallel group.
    pub tp: u64,
    /// Of the context-parallel group.
    pub cp: u64,
    /// Of the data-parallel group.
    pub dp: u64,
    /// Pipeline stages in one domain.
    pub pp: u64,
}

impl Placement {
    /// The usual rank order (Megatron's `tp-cp-dp-pp`, also torchtitan's and MaxText's): the fast
    /// domain is filled by tensor parallelism first, then context, data and pipeline parallelism;
    /// each share is the largest divisor of its degree that still fits.
    pub fn innermost_first(tp: u64, cp: u64, dp: u64, pp: u64, domain: u64) -> Placement {
        let mut room = domain.max(1);
        let mut take = |degree: u64| {
            let share = largest_divisor_within(degree, room);
            room /= share;
            share
        };
        let (t, c, d, p) = (take(tp), take(cp), take(dp), take(pp));
        Placement { tp: t, cp: c, dp: d, pp: p }
    }
}

/// The largest divisor of `n` that also divides `room` (both ≥ 1), i.e. `gcd(n, room)`.
fn largest_divisor_within(n: u64, room: u64) -> u64 {
    let (mut a, mut b) = (n.max(1), room.max(1));
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// One run's parallel layout. Degrees and shares in devices, batches in samples (sequences).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Tensor-parallel degree.
    pub tp: u64,
    /// Context-parallel degree (sequence split of attention).
    pub cp: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Data-parallel replicas (including ZeRO-3/FSDP shards).
    pub dp: u64,
    /// Micro-batch size [samples].
    pub mbs: u64,
    /// Global batch per iteration [samples].
    pub global_batch: u64,
    /// Fast-domain shares.
    pub placement: Placement,
    /// Expert-parallel degree of the MoE blocks (1 for dense models); folded over `tp·cp·dp`
    /// (see [`super::moe::ExpertLayout`]).
    pub ep: u64,
    /// Expert-tensor-parallel degree of the MoE blocks (1 for dense models).
    pub etp: u64,
}

/// Largest degree / batch accepted (keeps every product far inside `f64`'s exact range).
const MAX_COUNT: u64 = 1 << 32;

impl Layout {
    /// A layout placed innermost-first ([`Placement::innermost_first`]) on domains of `domain`
    /// devices.
    #[allow(clippy::too_many_arguments)]
    pub fn placed(tp: u64, cp: u64, pp: u64, dp: u64, mbs: u64, global_batch: u64, domain: u64) -> Layout {
        Layout {
            tp,
            cp,
            pp,
            dp,
            mbs,
            global_batch,
            placement: Placement::innermost_first(tp, cp, dp, pp, domain),
            ep: 1,
            etp: 1,
        }
    }

    /// The same layout with expert-parallel degrees `ep` and `etp` for the MoE blocks.
    pub fn with_experts(self, ep: u64, etp: u64) -> Layout {
        Layout { ep, etp, ..self }
    }

    /// A search candidate as a layout: `1d` is `tp = tp1`, `2d-seqp` is `tp = tp1`, `cp = tp2`;
    /// SUMMA (`2d`) has no extended-mode counterpart.
    pub fn from_candidate(c: &Candidate, global_batch: u64) -> Result<Layout, Error> {
        let cp = match c.strategy {
            Strategy::OneD => 1,
            Strategy::ContextParallel2D => c.tp2,
            Strategy::Summa2D => {
                return Err(Error::invalid("strategy", "2d", "has no extended-mode model").with_hint(
                    "extended mode models 1d (Megatron tensor parallel) and 2d-seqp (tensor × context parallel)",
                ));
            }
        };
        let nv_cp = if c.strategy == Strategy::ContextParallel2D { c.nv_tp2 } else { 1 };
        Ok(Layout {
            tp: c.tp1,
            cp,
            pp: c.pp,
            dp: c.dp,
            mbs: c.mbs,
            global_batch,
            placement: Placement { tp: c.nv_tp1, cp: nv_cp, dp: c.nv_dp, pp: c.nv_pp },
            ep: 1,
            etp: 1,
        })
    }

    /// Devices used `tp·cp·pp·dp`.
    pub fn devices(&self) -> u64 {
        self.tp.saturating_mul(self.cp).saturating_mul(self.pp).saturating_mul(self.dp)
    }

    /// Micro-batches per iteration `G / (dp·mbs)`.
    pub fn microbatches(&self) -> u64 {
        self.global_batch / self.dp.saturating_mul(self.mbs).max(1)
    }

    /// Tokens of one micro-batch on one device's sequence shard, `mbs·seq/cp` [tokens].
    pub fn local_tokens(&self, w: &Workload) -> f64 {
        self.mbs as f64 * (w.seq_len / self.cp) as f64
    }

    /// Checks the layout against the workload and a fast-domain size; `uneven` allows a depth that
    /// `pp` does not divide. Errors name the field (`layout.tp`, …) and the rule.
    pub fn validate(&self, w: &Workload, domain: u64, uneven: bool) -> Result<(), Error> {
        let bad = |f: &str, v: u64, rule: String| Err(Error::invalid(format!("layout.{f}"), v, rule));
        for (name, v) in [("tp", self.tp), ("cp", self.cp), ("pp", self.pp), ("dp", self.dp), ("mbs", self.mbs)] {
            if v == 0 || v > MAX_COUNT {
                return bad(name, v, format!("must be from 1 to {MAX_COUNT}"));
            }
        }
        if self.global_batch == 0 || self.global_batch > MAX_COUNT {
            return bad("global_batch", self.global_batch, format!("must be from 1 to {MAX_COUNT}"));
        }
        if self.devices() > MAX_COUNT {
            return bad("dp", self.dp, format!("tp·cp·pp·dp must be at most {MAX_COUNT} devices"));
        }
        if !w.heads.is_multiple_of(self.tp) {
            return bad("tp", self.tp, format!("must divide the number of heads {}", w.heads));
        }
        if self.tp > w.ffn_hidden || self.tp > w.hidden {
            return bad("tp", self.tp, "must not exceed the model or MLP width".into());
        }
        if !w.seq_len.is_multiple_of(self.cp) {
            return bad("cp", self.cp, format!("must divide the sequence length {}", w.seq_len));
        }
        if self.pp > w.layers {
            return bad("pp", self.pp, format!("must not exceed the depth {}", w.layers));
        }
        if !uneven && !w.layers.is_multiple_of(self.pp) {
            return Err(Error::invalid("layout.pp", self.pp, format!("must divide the depth {}", w.layers))
                .with_hint("or allow uneven pipeline stages"));
        }
        if !self.global_batch.is_multiple_of(self.dp) || !(self.global_batch / self.dp).is_multiple_of(self.mbs) {
            return bad(
                "mbs",
                self.mbs,
                format!("dp·mbs = {} must divide the global batch {}", self.dp * self.mbs, self.global_batch),
            );
        }
        if w.moe.is_none() && (self.ep > 1 || self.etp > 1) {
            let v = if self.ep > 1 { self.ep } else { self.etp };
            let f = if self.ep > 1 { "ep" } else { "etp" };
            return bad(f, v, "must be 1: a dense model has no experts".into());
        }
        if let Some(m) = &w.moe {
            super::moe::ExpertLayout::fold(self, m, self.ep, self.etp)?;
        }
        let p = self.placement;
        let shares = [("tp", self.tp, p.tp), ("cp", self.cp, p.cp), ("dp", self.dp, p.dp), ("pp", self.pp, p.pp)];
        for (name, degree, share) in shares {
            if share == 0 || !degree.is_multiple_of(share) {
                return bad(&format!("placement.{name}"), share, format!("must divide {name} = {degree}"));
            }
        }
        let product = p.tp * p.cp * p.dp * p.pp;
        if product > domain.max(1) {
            return bad(
                "placement.tp",
                p.tp,
                format!("the shares fill {product} devices, more than a domain of {domain}"),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelShape;

    #[test]
    fn innermost_first_fills_tp_then_cp_dp_pp() {
        assert_eq!(Placement::innermost_first(8, 1, 32, 4, 8), Placement { tp: 8, cp: 1, dp: 1, pp: 1 });
        assert_eq!(Placement::innermost_first(2, 2, 8, 1, 8), Placement { tp: 2, cp: 2, dp: 2, pp: 1 });
        assert_eq!(Placement::innermost_first(1, 1, 2048, 1, 256), Placement { tp: 1, cp: 1, dp: 256, pp: 1 });
        assert_eq!(Placement::innermost_first(1, 1, 3, 2, 8), Placement { tp: 1, cp: 1, dp: 1, pp: 2 });
    }

    #[test]
    fn candidates_map_and_rules_hold() {
        let w = Workload::from_shape(&ModelShape::GPT3_1T);
        let c = Candidate::one_d(64, 4, 8, 1, 4, 1, 1);
        let l = Layout::from_candidate(&c, 4096).unwrap();
        assert_eq!((l.tp, l.cp, l.pp, l.dp, l.microbatches()), (4, 1, 8, 64, 64));
        assert!(l.validate(&w, 4, false).is_ok());
        let bad = Layout { pp: 3, ..l };
        assert_eq!(bad.validate(&w, 4, false).unwrap_err().field(), Some("layout.pp"));
        assert!(bad.validate(&w, 4, true).is_ok());
        let summa = Candidate { strategy: Strategy::Summa2D, ..c };
        assert!(Layout::from_candidate(&summa, 4096).is_err());
    }
}
