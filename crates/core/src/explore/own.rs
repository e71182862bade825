//! "Try your own configuration": a configuration typed by the user (e.g. TP 8, PP 16,
//! micro-batch 1), evaluated whether or not it is in the top list. The data-parallel degree
//! follows from the device count; the fast-domain placement and the SUMMA panel count, when not
//! given, are chosen as the search would (the fastest valid one). An invalid configuration gets
//! the rule it breaks ([`crate::vocab::Candidate::check`]'s error, renamed to the form's
//! fields); one that does not fit in memory gets how far over it is.

use crate::cost::Detail;
use crate::resolve::explorer::ExploreSpec;
use crate::resolve::form::parse_count;
use crate::search::space::{nb_cands, nv_cands_2d};
use crate::vocab::{Candidate, MAX_DEVICES};
use crate::{Error, FieldPath, Strategy};

/// Form field names of the own-configuration form (the `field` of its errors).
pub mod field {
    /// Strategy.
    pub const STRATEGY: &str = "own.strategy";
    /// Tensor-parallel degree (1d, 2d-seqp) or first SUMMA dimension (2d).
    pub const TP: &str = "own.tp";
    /// Context-parallel degree (2d-seqp) or second SUMMA dimension (2d).
    pub const TP2: &str = "own.tp2";
    /// Pipeline stages.
    pub const PP: &str = "own.pp";
    /// Micro-batch size.
    pub const MBS: &str = "own.mbs";
    /// SUMMA panels.
    pub const NB: &str = "own.nb";
    /// Fast-domain placement.
    pub const NV: &str = "own.nv";
    /// Data-parallel degree (derived).
    pub const DP: &str = "own.dp";
}

/// A typed configuration. `None` means "choose as the search would".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnConfig {
    /// Strategy.
    pub strategy: Strategy,
    /// `tp1`: tensor-parallel degree (1d, 2d-seqp) or SUMMA features dimension (2d).
    pub tp1: u64,
    /// `tp2`: context-parallel degree (2d-seqp) or SUMMA tokens dimension (2d); 1 in 1d.
    pub tp2: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Micro-batch size [samples].
    pub mbs: u64,
    /// SUMMA panels (2d only).
    pub nb: Option<u64>,
    /// Fast-domain shares `(nv_tp1, nv_tp2, nv_dp, nv_pp)`.
    pub placement: Option<[u64; 4]>,
}

/// The own-configuration form as typed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnFields {
    /// `1d`, `2d` or `2d-seqp`.
    pub strategy: String,
    /// TP (tp1).
    pub tp: String,
    /// tp2 (empty: 1).
    pub tp2: String,
    /// PP.
    pub pp: String,
    /// Micro-batch size.
    pub mbs: String,
    /// SUMMA panels (empty: best).
    pub nb: String,
    /// Placement `a x b x c[ x d]` (empty: best).
    pub nv: String,
}

impl OwnFields {
    /// Parses the form; every problem at once, each at its field.
    pub fn parse(&self) -> Result<OwnConfig, Vec<Error>> {
        let mut errors = Vec::new();
        let strategy = match self.strategy.trim().parse::<Strategy>() {
            Ok(s) => Some(s),
            Err(_) => {
                errors.push(Error::invalid(field::STRATEGY, self.strategy.trim(), "must be 1d, 2d or 2d-seqp"));
                None
            }
        };
        let mut count = |f: &str, text: &str, default: Option<u64>| -> Option<u64> {
            if text.trim().is_empty() {
                if default.is_none() {
                    errors.push(Error::invalid(f, "(empty)", "is required"));
                }
                return default;
            }
            parse_count(f, text, 1, MAX_DEVICES).map_err(|e| errors.push(e)).ok()
        };
        let tp1 = count(field::TP, &self.tp, None);
        let tp2 = count(field::TP2, &self.tp2, Some(1));
        let pp = count(field::PP, &self.pp, None);
        let mbs = count(field::MBS, &self.mbs, None);
        let nb = if self.nb.trim().is_empty() { Some(None) } else { count(field::NB, &self.nb, None).map(Some) };
        let placement = parse_placement(&self.nv, strategy).map_err(|e| errors.push(e)).ok();
        if strategy == Some(Strategy::OneD) && tp2.is_some_and(|t| t != 1) {
            errors.push(Error::invalid(field::TP2, self.tp2.trim(), "must be 1 (or empty) for the 1d strategy"));
        }
        match (strategy, tp1, tp2, pp, mbs, nb, placement) {
            (Some(strategy), Some(tp1), Some(tp2), Some(pp), Some(mbs), Some(nb), Some(placement))
                if errors.is_empty() =>
            {
                Ok(OwnConfig { strategy, tp1, tp2, pp, mbs, nb, placement })
            }
            _ => Err(errors),
        }
    }
}

/// `8x1x1` (1d: tp × dp × pp) or `8x1x1x1` (tp1 × tp2 × dp × pp); empty: `None`.
fn parse_placement(text: &str, strategy: Option<Strategy>) -> Result<Option<[u64; 4]>, Error> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let bad = || {
        Error::invalid(
            field::NV,
            t.chars().take(40).collect::<String>(),
            "must be fast-domain shares like 4x1x2 (tp×dp×pp) or 4x1x1x2 (tp1×tp2×dp×pp)",
        )
    };
    let v: Vec<u64> = t
        .split(['x', '×', '*', ','])
        .map(|p| p.trim().parse::<u64>().ok().filter(|&x| x > 0))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(bad)?;
    match (v.as_slice(), strategy) {
        ([a, b, c], Some(Strategy::OneD) | None) => Ok(Some([*a, 1, *b, *c])),
        ([a, b, c, d], _) => Ok(Some([*a, *b, *c, *d])),
        _ => Err(bad()),
    }
}

/// What an own configuration gave.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnOutcome {
    /// The configuration evaluated (with the chosen placement and panel count).
    pub candidate: Candidate,
    /// Its full evaluation in the scenario's mode.
    pub evaluation: Detail,
    /// Whether the placement was chosen here (not typed).
    pub placement_chosen: bool,
    /// Whether the SUMMA panel count was chosen here (not typed).
    pub nb_chosen: bool,
    /// How many (placement, panel count) options were compared.
    pub options_compared: usize,
}

impl OwnOutcome {
    /// How much more memory than the device has it needs [GB] (0 when it fits).
    pub fn over_memory_gb(&self, capacity_gb: f64) -> f64 {
        (self.evaluation.mem_gb() - capacity_gb).max(0.0)
    }
}

/// The own-form field an evaluation error is about.
fn rename(e: Error) -> Error {
    match e {
        Error::InvalidField { field: f, value, rule, hint } => {
            let name = match FieldPath::new(&f).below("candidate") {
                Some("tp1") => field::TP,
                Some("tp2") => field::TP2,
                Some("pp") => field::PP,
                Some("mbs") => field::MBS,
                Some("nb") => field::NB,
                Some("dp") => field::DP,
                Some(s) if s.starts_with("nv_") => field::NV,
                _ => return Error::InvalidField { field: f, value, rule, hint },
            };
            let rule = match FieldPath::new(&f).below("candidate") {
                Some(short) if name == field::NV || name == field::DP => format!("{short}: {rule}"),
                _ => rule,
            };
            Error::InvalidField { field: name.into(), value, rule, hint }
        }
        other => other,
    }
}

/// Evaluates `own` in the scenario `spec` (device count, batch, model, system), in its mode.
pub fn evaluate_own(spec: &ExploreSpec, own: &OwnConfig) -> Result<OwnOutcome, Error> {
    let n = spec.n_gpus;
    let tp = own.tp1.checked_mul(own.tp2).filter(|&t| t <= n);
    let Some(tp) = tp else {
        let (f, v) =
            if own.strategy == Strategy::OneD || own.tp1 > n { (field::TP, own.tp1) } else { (field::TP2, own.tp2) };
        return Err(Error::invalid(f, v, format!("the tensor-parallel group tp1·tp2 must not exceed the {n} devices")));
    };
    if !n.is_multiple_of(tp) {
        return Err(Error::invalid(field::TP, own.tp1, format!("tp1·tp2 = {tp} must divide the {n} devices")));
    }
    let Some(tp_pp) = tp.checked_mul(own.pp).filter(|x| n.is_multiple_of(*x)) else {
        return Err(Error::invalid(
            field::PP,
            own.pp,
            format!("tp·pp = {tp}·{} must divide the {n} devices (dp = devices / (tp·pp) must be whole)", own.pp),
        ));
    };
    let dp = n / tp_pp;
    let base = Candidate {
        strategy: own.strategy,
        dp,
        tp1: own.tp1,
        tp2: own.tp2,
        pp: own.pp,
        mbs: own.mbs,
        nb: own.nb.unwrap_or(1),
        nv_tp1: 1,
        nv_tp2: 1,
        nv_dp: 1,
        nv_pp: 1,
    };
    let nbs: Vec<u64> = match (own.strategy, own.nb) {
        (_, Some(nb)) => vec![nb],
        (Strategy::Summa2D, None) => {
            let c = nb_cands(own.tp1, own.tp2, spec.model.e);
            if c.is_empty() { vec![own.tp1.max(own.tp2)] } else { c }
        }
        _ => vec![1],
    };
    let placements: Vec<[u64; 4]> = match own.placement {
        Some(p) => vec![p],
        None => nv_cands_2d(own.tp1, own.tp2, dp, own.pp, spec.system.domain_size),
    };
    let with = |nb: u64, [a, b, c, d]: [u64; 4]| Candidate { nb, nv_tp1: a, nv_tp2: b, nv_dp: c, nv_pp: d, ..base };
    if placements.is_empty() {
        // Report a rule other than placement first, if one is broken.
        let all_in = with(nbs[0], [own.tp1, own.tp2, dp, own.pp]);
        all_in.check(&spec.model, &spec.system, spec.global_batch).map_err(rename)?;
        return Err(Error::invalid(
            field::NV,
            format!("tp {} · tp2 {} · dp {dp} · pp {}", own.tp1, own.tp2, own.pp),
            format!(
                "no placement fills a fast domain of {} devices: the shares inside one domain must be divisors of the degrees and multiply to {}",
                spec.system.domain_size, spec.system.domain_size
            ),
        )
        .with_hint("change a degree or the domain size"));
    }
    let mut engine = spec.engine(own.strategy)?;
    let mut best: Option<(f64, Candidate)> = None;
    let mut first_error = None;
    let mut compared = 0;
    for &nb in &nbs {
        for &p in &placements {
            let c = with(nb, p);
            let outcome = c.check(&spec.model, &spec.system, spec.global_batch).and_then(|_| engine.price(&c));
            match outcome {
                Ok(o) => {
                    compared += 1;
                    if best.is_none_or(|(t, _)| o.throughput_samples_per_s > t) {
                        best = Some((o.throughput_samples_per_s, c));
                    }
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    let Some((_, chosen)) = best else {
        return Err(rename(first_error.unwrap_or_else(|| Error::invalid(field::NV, "-", "no valid option"))));
    };
    let evaluation = spec.evaluate(&chosen).map_err(rename)?;
    Ok(OwnOutcome {
        candidate: chosen,
        evaluation,
        placement_chosen: own.placement.is_none(),
        nb_chosen: own.nb.is_none() && own.strategy == Strategy::Summa2D,
        options_compared: compared,
    })
}
