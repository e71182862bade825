//! Where the reference's enumeration finds nothing: the rule by which a search widens its space,
//! and the device counts a model and batch can be split over at all.
//!
//! **The rule** (both modes; reference mode stays the reference wherever the reference has an
//! answer):
//! 1. The reference's enumeration ([`Space::new`]; in extended mode with its own rules: pipeline
//!    degrees that do not divide the depth when `uneven_stages` is on, and partial domains for
//!    groups that cannot fill one). If it has candidates, that is the space — in reference mode
//!    bit-for-bit the reference's.
//! 2. Reference mode only, when step 1 is empty: the same points placed on **partial domains**
//!    ([`super::space::partial_placements`]): e.g. power-of-two groups on GB200 NVL72 use 64 of
//!    each 72-device domain. The reference itself would drop every such point.
//! 3. When still empty (no split of `N` devices over dp × tp × pp (× cp) fits the batch, heads and
//!    depth, e.g. 2,304 = 2⁸·3² devices with a 4,096 batch and a 128-block model): the largest
//!    device count below `N` that the model and batch can use ([`usable_device_counts`]), the
//!    other devices idle; the result says so ([`Widening::FewerDevices`]). Searches only: a
//!    sweep point is about its own device count, so it stops at step 2 and says why nothing runs.

use super::space::{Rules, Space};
use crate::vocab::divisors;
use crate::vocab::{Note, NoteKind};
use crate::{ModelShape, Strategy};

/// How many usable device counts below the asked one step 3 tries.
const MAX_FEWER_TRIES: usize = 48;
/// Largest number of usable device counts collected (bounds the work on huge inputs).
const MAX_COUNTS: usize = 200_000;

/// How a search's space departs from the reference's enumeration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Widening {
    /// The reference's enumeration (in extended mode: with extended mode's rules).
    #[default]
    None,
    /// The reference's points placed on partial fast domains (step 2).
    PartialDomains,
    /// No configuration uses every device; the candidates use `used` of the `asked` devices.
    FewerDevices {
        /// Devices asked for.
        asked: u64,
        /// Devices every candidate uses.
        used: u64,
    },
}

impl Widening {
    /// One note for the result's notes, [`NoteKind::NotApplied`] (`None` for the reference's own
    /// space): about the scale-up domain (`system.nvlink_size`) or the device count (`n_gpus`).
    pub fn note(&self, domain: u64) -> Option<Note> {
        match *self {
            Widening::None => None,
            Widening::PartialDomains => Some(
                Note::new(
                    NoteKind::NotApplied,
                    format!(
                        "no configuration fills whole fast domains of {domain} devices; groups are placed on \
                         partial domains (some devices of each domain idle)"
                    ),
                )
                .about("system.nvlink_size"),
            ),
            Widening::FewerDevices { asked, used } => Some(
                Note::new(
                    NoteKind::NotApplied,
                    format!(
                        "no configuration uses all {asked} devices; the candidates use {used} ({} idle)",
                        asked - used
                    ),
                )
                .about("n_gpus"),
            ),
        }
    }
}

/// The space a search evaluates, by the rule of this module: `extended` carries extended mode's
/// `uneven_stages` (`None`: reference mode); `fewer_devices` allows step 3 (searches do, sweep
/// points do not: a point is about its own device count and says why nothing runs).
pub fn search_space(
    strategy: Strategy,
    model: &ModelShape,
    nvs: u64,
    n: u64,
    global_batch: u64,
    extended: Option<bool>,
    fewer_devices: bool,
) -> (Space, Widening) {
    let wide = Rules { uneven_stages: extended.unwrap_or(false), partial_domains: true };
    let first = match extended {
        None => Space::new(strategy, model, nvs, n, global_batch),
        Some(_) => Space::with_rules(strategy, model, nvs, n, global_batch, wide),
    };
    if !first.is_empty() {
        return (first, Widening::None);
    }
    if extended.is_none() {
        let partial = Space::with_rules(strategy, model, nvs, n, global_batch, wide);
        if !partial.is_empty() {
            return (partial, Widening::PartialDomains);
        }
    }
    if fewer_devices {
        let counts = usable_device_counts(strategy, model, global_batch, wide, n.saturating_sub(1));
        for &used in counts.iter().rev().take(MAX_FEWER_TRIES) {
            let space = Space::with_rules(strategy, model, nvs, used, global_batch, wide);
            if !space.is_empty() {
                return (space, Widening::FewerDevices { asked: n, used });
            }
        }
    }
    (first, Widening::None)
}

/// Device counts up to `limit` that can be written as `dp·tp1·tp2·pp` with `dp | G`,
/// `tp1 | gcd(heads, width)`, `tp2` as the strategy allows (1 in 1d, a divisor of the width in
/// 2d, of the sequence in 2d-seqp) and `pp | D` (any `pp ≤ D` with uneven stages), ascending.
/// A necessary condition for a space to be non-empty (the strategy's other rules may still
/// exclude a count), so the candidates for "nearest device counts that work".
pub fn usable_device_counts(
    strategy: Strategy,
    model: &ModelShape,
    global_batch: u64,
    rules: Rules,
    limit: u64,
) -> Vec<u64> {
    let ModelShape { l, e, h, depth, f } = *model;
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let tp1s: Vec<u64> = divisors(gcd(h, e)).into_iter().filter(|&t| t <= f.max(1)).collect();
    let tp2s: Vec<u64> = match strategy {
        Strategy::OneD => vec![1],
        Strategy::Summa2D => divisors(e),
        Strategy::ContextParallel2D => divisors(l),
    };
    let pps: Vec<u64> = if rules.uneven_stages { (1..=depth.min(4096)).collect() } else { divisors(depth) };
    let dps = divisors(global_batch);
    let mut set = std::collections::BTreeSet::new();
    'outer: for &a in &tp1s {
        for &b in &tp2s {
            let Some(ab) = a.checked_mul(b).filter(|&x| x <= limit) else { break };
            for &c in &pps {
                let Some(abc) = ab.checked_mul(c).filter(|&x| x <= limit) else { break };
                for &d in &dps {
                    let Some(n) = abc.checked_mul(d).filter(|&x| x <= limit) else { break };
                    set.insert(n);
                    if set.len() >= MAX_COUNTS {
                        break 'outer;
                    }
                }
            }
        }
    }
    set.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_space_is_kept_when_it_has_candidates() {
        let m = ModelShape::GPT3_1T;
        let (s, w) = search_space(Strategy::OneD, &m, 8, 512, 4096, None, true);
        assert_eq!(w, Widening::None);
        assert_eq!(s, Space::new(Strategy::OneD, &m, 8, 512, 4096));
    }

    #[test]
    fn nvl72_domains_get_partial_placements() {
        let m = ModelShape::GPT3_1T;
        assert!(Space::new(Strategy::OneD, &m, 72, 2048, 4096).is_empty());
        let (s, w) = search_space(Strategy::OneD, &m, 72, 2048, 4096, None, true);
        assert_eq!(w, Widening::PartialDomains);
        assert!(!s.is_empty());
        for c in s.iter() {
            assert_eq!(c.n_gpus(), 2048);
            assert_eq!(c.nv_tp1 * c.nv_dp * c.nv_pp, 64, "{c:?}");
        }
    }

    #[test]
    fn counts_that_do_not_factorise_use_fewer_devices() {
        // 2,304 = 2^8·3^2: gpt3_1T (h = 160, D = 128) with a 4,096 batch has no split using all.
        let m = ModelShape::GPT3_1T;
        let (s, w) = search_space(Strategy::OneD, &m, 72, 2304, 4096, None, true);
        assert_eq!(w, Widening::FewerDevices { asked: 2304, used: 2048 });
        assert!(s.iter().all(|c| c.n_gpus() == 2048));
        // Extended mode with uneven stages uses all 2,304 (pp = 9, 18, …).
        let (s, w) = search_space(Strategy::OneD, &m, 72, 2304, 4096, Some(true), true);
        assert_eq!(w, Widening::None);
        assert!(!s.is_empty() && s.iter().all(|c| c.n_gpus() == 2304));
    }

    #[test]
    fn usable_counts_are_products_of_the_allowed_degrees() {
        let m = ModelShape { l: 1024, e: 1600, h: 25, depth: 48, f: 6400 };
        let counts = usable_device_counts(Strategy::OneD, &m, 512, Rules::REFERENCE, 16);
        assert!(!counts.contains(&7), "{counts:?}");
        assert!(counts.contains(&8) && counts.contains(&6) && counts.contains(&5));
    }
}
