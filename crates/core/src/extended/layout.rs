//! The parallel layout of one run: tensor (`tp`), context (`cp`), pipeline (`pp`) and data (`dp`)
//! parallel degrees, the micro-batch and global batch, and how each group is placed on the fast
//! (scale-up) domains. The rules a layout must meet against a workload ([`Layout::validate`]) are
//! in [`super::layout_rules`], after the experts' fold ([`super::moe::ExpertLayout`]), which reads
//! the layout.

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

    /// The expert degrees as a layout's line of text ends with them, ` · ep {ep} · etp {etp}`, for
    /// a model `w` with experts; empty for a dense model, whose degrees are 1 and say nothing. The
    /// one wording of `fmperf search --from`'s "your layout" and the page's launch import.
    pub fn expert_degrees_text(&self, w: &Workload) -> String {
        match w.moe {
            Some(_) => format!(" · ep {} · etp {}", self.ep, self.etp),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_first_fills_tp_then_cp_dp_pp() {
        assert_eq!(Placement::innermost_first(8, 1, 32, 4, 8), Placement { tp: 8, cp: 1, dp: 1, pp: 1 });
        assert_eq!(Placement::innermost_first(2, 2, 8, 1, 8), Placement { tp: 2, cp: 2, dp: 2, pp: 1 });
        assert_eq!(Placement::innermost_first(1, 1, 2048, 1, 256), Placement { tp: 1, cp: 1, dp: 256, pp: 1 });
        assert_eq!(Placement::innermost_first(1, 1, 3, 2, 8), Placement { tp: 1, cp: 1, dp: 1, pp: 2 });
    }
}
