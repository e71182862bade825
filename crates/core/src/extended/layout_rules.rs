//! The rules a [`Layout`] must meet against a workload and a fast-domain size
//! ([`Layout::validate`]): degrees and batches in range, tensor parallelism dividing the heads,
//! context parallelism the sequence, pipeline stages the depth, `dp·mbs` the global batch, the
//! experts folding over `tp·cp·dp` ([`ExpertLayout::fold`]: a dense model has none), the
//! fast-domain shares dividing their degrees and fitting one domain. Apart from `layout.rs`
//! because the expert fold reads the layout: the layout, then the fold, then these rules.

use super::layout::Layout;
use super::moe::ExpertLayout;
use super::workload::Workload;
use crate::Error;

/// Largest degree / batch accepted (keeps every product far inside `f64`'s exact range).
const MAX_COUNT: u64 = 1 << 32;

impl Layout {
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
            ExpertLayout::fold(self, m, self.ep, self.etp)?;
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
    use crate::Strategy;
    use crate::vocab::Candidate;

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
