//! The rules a parallel configuration ([`Candidate`]) must satisfy to be evaluated by the reference
//! model (spec §7), and the block shape its layers see.

use super::block::BlockShape;
use crate::vocab::{Candidate, MAX_DEVICES, MAX_GLOBAL_BATCH};
use crate::{Error, ModelShape, Strategy, SystemParams};

impl Candidate {
    /// The block-level shape the layers see.
    pub fn block_shape(&self) -> BlockShape {
        BlockShape { b: self.mbs, m1: self.tp1, m2: self.tp2, nb: self.nb, tau1: self.nv_tp1, tau2: self.nv_tp2 }
    }

    /// Checks that the configuration can be evaluated for `model` on `system` with `global_batch`
    /// samples per iteration; the error names the field and the rule it breaks.
    ///
    /// The rules are those the reference's search space satisfies by construction (§7): equal
    /// pipeline stages, the batch split evenly, heads and widths split evenly, every sharded
    /// dimension non-empty, and a placement that either fills whole fast domains or holds the whole
    /// job in one domain (or partial domains, see `search::widen`). `model` and `system` are assumed
    /// validated.
    pub fn check(&self, model: &ModelShape, system: &SystemParams, global_batch: u64) -> Result<(), Error> {
        let c = self;
        let bad =
            |field: &str, value: u64, rule: String| Err(Error::invalid(format!("candidate.{field}"), value, rule));
        for (name, v) in [
            ("dp", c.dp),
            ("tp1", c.tp1),
            ("tp2", c.tp2),
            ("pp", c.pp),
            ("mbs", c.mbs),
            ("nb", c.nb),
            ("nv_tp1", c.nv_tp1),
            ("nv_tp2", c.nv_tp2),
            ("nv_dp", c.nv_dp),
            ("nv_pp", c.nv_pp),
        ] {
            if v == 0 {
                return bad(name, v, "must be a positive integer".into());
            }
        }
        if global_batch == 0 || global_batch > MAX_GLOBAL_BATCH {
            return Err(Error::invalid("global_batch", global_batch, format!("must be from 1 to {MAX_GLOBAL_BATCH}")));
        }
        match c.strategy {
            Strategy::OneD => {
                if c.tp2 != 1 || c.nv_tp2 != 1 {
                    return bad("tp2", c.tp2, "must be 1 (with nv_tp2 = 1) for the 1d strategy".into());
                }
                if c.nb != 1 {
                    return bad("nb", c.nb, "must be 1 unless the strategy is 2d (SUMMA)".into());
                }
            }
            Strategy::ContextParallel2D if c.nb != 1 => {
                return bad("nb", c.nb, "must be 1 unless the strategy is 2d (SUMMA)".into());
            }
            _ => {}
        }
        let n = c.dp.checked_mul(c.tp1).and_then(|x| x.checked_mul(c.tp2)).and_then(|x| x.checked_mul(c.pp));
        let n = match n {
            Some(n) if n <= MAX_DEVICES => n,
            _ => return bad("dp", c.dp, format!("dp·tp1·tp2·pp must be at most {MAX_DEVICES} devices")),
        };
        // Pipeline: equal stages.
        if !model.depth.is_multiple_of(c.pp) {
            return bad("pp", c.pp, format!("must divide the depth D = {} (equal pipeline stages)", model.depth));
        }
        // Batch: split evenly over data parallelism and micro-batches.
        if !global_batch.is_multiple_of(c.dp) {
            return bad("dp", c.dp, format!("must divide the global batch G = {global_batch}"));
        }
        if !(global_batch / c.dp).is_multiple_of(c.mbs) {
            return bad("mbs", c.mbs, format!("must divide the local batch G/dp = {}", global_batch / c.dp));
        }
        // Tensor parallelism: heads and widths split evenly, every local slice non-empty.
        if !model.h.is_multiple_of(c.tp1) || !model.e.is_multiple_of(c.tp1) {
            return bad(
                "tp1",
                c.tp1,
                format!("must divide both the heads h = {} and the width e = {}", model.h, model.e),
            );
        }
        if c.tp1 > model.f {
            return bad("tp1", c.tp1, format!("must not exceed the MLP width f = {}", model.f));
        }
        let (seq_split, what) = match c.strategy {
            Strategy::OneD => (c.tp1, "tp"),
            Strategy::Summa2D => (c.tp2, "tp2"),
            Strategy::ContextParallel2D => (c.tp(), "tp1·tp2"),
        };
        if !c.mbs.saturating_mul(model.l).is_multiple_of(seq_split) {
            return bad("mbs", c.mbs, format!("mbs·l must be a multiple of {what} = {seq_split} (the sequence split)"));
        }
        if seq_split > model.l {
            return bad(
                what_field(c.strategy),
                seq_split,
                format!("{what} must not exceed the sequence length l = {}", model.l),
            );
        }
        if c.strategy == Strategy::Summa2D {
            if !model.e.is_multiple_of(c.tp2) {
                return bad(
                    "tp2",
                    c.tp2,
                    format!("must divide the width e = {} (SUMMA splits the weights' K)", model.e),
                );
            }
            // LayerNorm2D's local width is ⌊l/tp1⌋ (quirk Q1, layers/norm.rs): it must not be empty.
            if c.tp1 > model.l {
                return bad(
                    "tp1",
                    c.tp1,
                    format!("must not exceed the sequence length l = {} (LayerNorm2D width)", model.l),
                );
            }
            if c.nb > model.e {
                return bad("nb", c.nb, format!("must not exceed the width e = {}", model.e));
            }
        }
        // Placement on fast domains.
        let nvs = system.domain_size;
        let dims = [("tp1", c.tp1, c.nv_tp1), ("tp2", c.tp2, c.nv_tp2), ("dp", c.dp, c.nv_dp), ("pp", c.pp, c.nv_pp)];
        if n <= nvs {
            for (name, dim, nv) in dims {
                if nv != dim {
                    return bad(
                        &format!("nv_{name}"),
                        nv,
                        format!(
                            "must equal {name} = {dim}: the whole job ({n} devices) fits in one fast domain of {nvs}"
                        ),
                    );
                }
            }
        } else {
            for (name, dim, nv) in dims {
                if !dim.is_multiple_of(nv) {
                    return bad(&format!("nv_{name}"), nv, format!("must divide {name} = {dim}"));
                }
            }
            // The reference fills whole domains. Groups that cannot fill one (a domain size that
            // does not divide dp·tp1·tp2·pp, e.g. power-of-two groups on 72-device domains) may sit
            // on partial domains, the rest idle (`search::widen`). The evaluation reads only the
            // shares, never `nvs`.
            let product = c.nv_tp1 * c.nv_tp2 * c.nv_dp * c.nv_pp;
            let can_fill = (n as u128).is_multiple_of(nvs as u128);
            if product > nvs || (can_fill && product != nvs) {
                return bad(
                    "nv_tp1",
                    c.nv_tp1,
                    format!(
                        "nv_tp1·nv_tp2·nv_dp·nv_pp = {product} must equal the fast-domain size {nvs} (domains are filled \
                         when dp·tp1·tp2·pp = {n} allows it; at most {nvs} otherwise)"
                    ),
                );
            }
        }
        Ok(())
    }
}

fn what_field(s: Strategy) -> &'static str {
    match s {
        Strategy::Summa2D => "tp2",
        _ => "tp1",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::evaluate;

    fn h200_nvs4() -> SystemParams {
        SystemParams::h200().with_domain_size(4)
    }

    #[test]
    fn worked_example_of_section_10() {
        let c = Candidate::one_d(64, 4, 8, 1, 4, 1, 1);
        let ev = evaluate(&ModelShape::GPT3_1T, &h200_nvs4(), 4096, &c).unwrap();
        assert_eq!(ev.microbatches, 64);
        assert_eq!(ev.totals.t, 41.544276438350856);
        assert_eq!(ev.totals.mem, 219.02283264);
        assert!(!ev.feasible);
        assert!((ev.totals.t_comp - 32.3521).abs() < 1e-4);
        assert!((ev.totals.t_bubble - 3.79596).abs() < 1e-5);
        assert!((ev.throughput_samples_per_s - 98.594).abs() < 1e-3);
        // The best 1D configuration of stats.ipynb.
        let best = Candidate::one_d(16, 4, 32, 1, 4, 1, 1);
        let ev = evaluate(&ModelShape::GPT3_1T, &h200_nvs4(), 4096, &best).unwrap();
        assert_eq!(ev.throughput_samples_per_s, 102.463805377367);
        assert!((ev.mem_gb - 124.64239104).abs() < 1e-9);
    }

    #[test]
    fn errors_name_the_broken_rule() {
        let m = ModelShape::GPT3_1T;
        let s = h200_nvs4();
        let field = |c: Candidate, g: u64| evaluate(&m, &s, g, &c).unwrap_err().field().map(str::to_string);
        let ok = Candidate::one_d(64, 4, 8, 1, 4, 1, 1);
        assert_eq!(field(Candidate { pp: 3, ..ok }, 4096).as_deref(), Some("candidate.pp"));
        assert_eq!(field(Candidate { dp: 3, ..ok }, 4096).as_deref(), Some("candidate.dp"));
        assert_eq!(field(Candidate { mbs: 128, ..ok }, 4096).as_deref(), Some("candidate.mbs"));
        assert_eq!(field(Candidate { tp1: 3, ..ok }, 4096).as_deref(), Some("candidate.tp1"));
        assert_eq!(field(Candidate { nv_tp1: 2, ..ok }, 4096).as_deref(), Some("candidate.nv_tp1"));
        assert_eq!(field(Candidate { nv_dp: 3, nv_tp1: 1, ..ok }, 4096).as_deref(), Some("candidate.nv_dp"));
        assert_eq!(field(Candidate { tp2: 2, ..ok }, 4096).as_deref(), Some("candidate.tp2"));
        assert_eq!(field(Candidate { nb: 2, ..ok }, 4096).as_deref(), Some("candidate.nb"));
        assert_eq!(field(Candidate { mbs: 0, ..ok }, 4096).as_deref(), Some("candidate.mbs"));
        assert_eq!(field(ok, 0).as_deref(), Some("global_batch"));
        let msg = evaluate(&m, &s, 4096, &Candidate { pp: 3, ..ok }).unwrap_err().to_string();
        assert!(msg.contains("depth"), "{msg}");
    }

    #[test]
    fn never_panics_on_arbitrary_integers() {
        let specials = [0u64, 1, 2, 3, 4, 7, 8, 64, 128, 4096, 1 << 20, 1 << 32, u64::MAX / 3, u64::MAX];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let models = [ModelShape::GPT3_1T, ModelShape::VIT_ERA5, ModelShape { l: 8, e: 16, h: 4, depth: 2, f: 2 }];
        for i in 0..20_000 {
            let mut pick = || {
                let r = next();
                if r % 3 == 0 { specials[(r / 3 % specials.len() as u64) as usize] } else { 1 << (r % 9) }
            };
            let strategy = Strategy::ALL[i % 3];
            let c = Candidate {
                strategy,
                dp: pick(),
                tp1: pick(),
                tp2: pick(),
                pp: pick(),
                mbs: pick(),
                nb: pick(),
                nv_tp1: pick(),
                nv_tp2: pick(),
                nv_dp: pick(),
                nv_pp: pick(),
            };
            let g = pick();
            let system = SystemParams::b200().with_domain_size(pick().clamp(1, 1 << 20));
            if let Ok(ev) = evaluate(&models[i % 3], &system, g, &c) {
                assert!(ev.totals.t.is_finite() && ev.totals.t > 0.0, "{c:?} G={g}: t = {}", ev.totals.t);
                assert!(ev.mem_gb.is_finite(), "{c:?}");
            }
        }
    }
}
