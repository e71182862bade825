//! A compact text form of one configuration, safe in a URL query without escaping, e.g.
//! `1d.dp16.tp4.pp32.mbs1.nv4x1x1` or `2d.dp4.tp8x1.pp128.mbs1.nb16.nv8x1x1x1`.
//!
//! Parts, separated by `.`: the strategy (`1d`, `2d`, `2d-seqp`), then `dp<n>`, `tp<tp1>[x<tp2>]`,
//! `pp<n>`, `mbs<n>`, optionally `nb<n>` (SUMMA panels, default 1) and `nv<…>`, the fast-domain
//! shares: `nv<tp>x<dp>x<pp>` in 1d, `nv<tp1>x<tp2>x<dp>x<pp>` otherwise. The parser checks the
//! syntax only; whether the configuration is valid for a model and system is
//! [`crate::vocab::Candidate::check`]'s job.

use crate::vocab::Candidate;
use crate::{Error, Strategy};

/// The text form of `c` (see the module documentation).
pub fn format_candidate(c: &Candidate) -> String {
    let mut s = format!("{}.dp{}", c.strategy, c.dp);
    if c.strategy == Strategy::OneD {
        s.push_str(&format!(".tp{}.pp{}.mbs{}", c.tp1, c.pp, c.mbs));
    } else {
        s.push_str(&format!(".tp{}x{}.pp{}.mbs{}", c.tp1, c.tp2, c.pp, c.mbs));
    }
    if c.strategy == Strategy::Summa2D {
        s.push_str(&format!(".nb{}", c.nb));
    }
    if c.strategy == Strategy::OneD {
        s.push_str(&format!(".nv{}x{}x{}", c.nv_tp1, c.nv_dp, c.nv_pp));
    } else {
        s.push_str(&format!(".nv{}x{}x{}x{}", c.nv_tp1, c.nv_tp2, c.nv_dp, c.nv_pp));
    }
    s
}

fn syntax(text: &str, rule: impl Into<String>) -> Error {
    Error::invalid("candidate", text.chars().take(80).collect::<String>(), rule)
        .with_hint("write it like 1d.dp16.tp4.pp32.mbs1.nv4x1x1 or 2d.dp4.tp8x1.pp128.mbs1.nb16.nv8x1x1x1")
}

/// `x`-separated positive integers, e.g. `8x1x1`.
fn numbers(text: &str, part: &str) -> Result<Vec<u64>, Error> {
    part.split('x')
        .map(|p| match p.parse::<u64>() {
            Ok(v) if v > 0 => Ok(v),
            _ => Err(syntax(text, format!("`{part}`: expected positive whole numbers separated by x"))),
        })
        .collect()
}

/// Parses the text form (see the module documentation).
pub fn parse_candidate(text: &str) -> Result<Candidate, Error> {
    let text = text.trim();
    let mut parts = text.split('.');
    let strategy: Strategy = parts.next().unwrap_or("").parse().map_err(|_| syntax(text, "unknown strategy"))?;
    let (mut dp, mut tp, mut pp, mut mbs, mut nb, mut nv) = (None, None, None, None, None, None);
    for part in parts {
        let (slot, rest) = if let Some(r) = part.strip_prefix("dp") {
            (&mut dp, r)
        } else if let Some(r) = part.strip_prefix("tp") {
            (&mut tp, r)
        } else if let Some(r) = part.strip_prefix("pp") {
            (&mut pp, r)
        } else if let Some(r) = part.strip_prefix("mbs") {
            (&mut mbs, r)
        } else if let Some(r) = part.strip_prefix("nb") {
            (&mut nb, r)
        } else if let Some(r) = part.strip_prefix("nv") {
            (&mut nv, r)
        } else {
            return Err(syntax(text, format!("unknown part `{part}`")));
        };
        if slot.is_some() {
            return Err(syntax(text, format!("`{part}` given twice")));
        }
        *slot = Some(numbers(text, rest)?);
    }
    let single = |v: Option<Vec<u64>>, name: &str, default: Option<u64>| -> Result<u64, Error> {
        match v.as_deref() {
            Some([x]) => Ok(*x),
            None => default.ok_or_else(|| syntax(text, format!("`{name}` is missing"))),
            Some(_) => Err(syntax(text, format!("`{name}` takes one number"))),
        }
    };
    let (dp, pp, mbs, nb) =
        (single(dp, "dp", None)?, single(pp, "pp", None)?, single(mbs, "mbs", None)?, single(nb, "nb", Some(1))?);
    let (tp1, tp2) = match tp.as_deref() {
        Some([a]) => (*a, 1),
        Some([a, b]) => (*a, *b),
        Some(_) => return Err(syntax(text, "`tp` takes one number or two (tp1xtp2)")),
        None => return Err(syntax(text, "`tp` is missing")),
    };
    let [nv_tp1, nv_tp2, nv_dp, nv_pp] = match nv.as_deref() {
        Some([a, b, c]) if strategy == Strategy::OneD => [*a, 1, *b, *c],
        Some([a, b, c, d]) => [*a, *b, *c, *d],
        Some(_) => return Err(syntax(text, "`nv` takes the fast-domain share of each dimension (tp x dp x pp in 1d)")),
        None => return Err(syntax(text, "`nv` is missing")),
    };
    Ok(Candidate { strategy, dp, tp1, tp2, pp, mbs, nb, nv_tp1, nv_tp2, nv_dp, nv_pp })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let one = Candidate::one_d(16, 4, 32, 1, 4, 1, 1);
        assert_eq!(format_candidate(&one), "1d.dp16.tp4.pp32.mbs1.nv4x1x1");
        assert_eq!(parse_candidate("1d.dp16.tp4.pp32.mbs1.nv4x1x1").unwrap(), one);
        let two = Candidate {
            strategy: Strategy::Summa2D,
            dp: 4,
            tp1: 8,
            tp2: 1,
            pp: 128,
            mbs: 1,
            nb: 16,
            nv_tp1: 8,
            nv_tp2: 1,
            nv_dp: 1,
            nv_pp: 1,
        };
        assert_eq!(parse_candidate(&format_candidate(&two)).unwrap(), two);
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in [
            "",
            "3d.dp1",
            "1d.dp0.tp1.pp1.mbs1.nv1x1x1",
            "1d.dpx.tp1",
            "1d.dp1.dp1",
            "1d.tp1.pp1.mbs1.nv1x1x1",
            "2d.dp1.tp1x1.pp1.mbs1.nv1x1x1",
            "1d.dp1.tp1x2x3.pp1.mbs1.nv1x1x1",
            "1d.dp99999999999999999999.tp1",
        ] {
            let e = parse_candidate(bad).unwrap_err();
            assert_eq!(e.field(), Some("candidate"), "{bad}");
        }
    }
}
