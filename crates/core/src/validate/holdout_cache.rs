//! The leave-one-source-out errors of the **shipped** measured training runs, computed once and
//! shipped beside them (`data/holdout-shipped.json`), so the page's error bars and the validation
//! view's headline appear at once instead of after ~20 s of fits (CPU time, natively) on every
//! visit. The file is a cache, not a source of truth: `tests/holdout_cache.rs` recomputes both
//! modes with [`super::holdout::holdout`] and fails, naming the command that rewrites it, as soon
//! as the model, the constants or the data move. A user's own file is always fitted afresh.

use std::sync::OnceLock;

use super::compare::Stats;
use super::holdout::{HeldRow, HeldSource, Holdout};
use super::one_shot::OneShot;
use crate::extended::efficiency::Efficiency;
use crate::mode_kind::ModeKind;
use crate::mode_kind::PerMode;

/// The cache as shipped (written by [`to_cache_json`]).
const SHIPPED: &str = include_str!(concat!(env!("OUT_DIR"), "/holdout-shipped.json"));

/// One mode's held-out errors in the cache: [`Holdout`] with its rows.
#[derive(serde::Serialize, serde::Deserialize)]
struct Cached {
    mode: ModeKind,
    fitted: bool,
    leave_one_source_out: Stats,
    in_sample: Stats,
    efficiency: Option<Efficiency>,
    per_source: Vec<HeldSource>,
    rows: Vec<HeldRow>,
}

impl Cached {
    fn of(h: &Holdout) -> Cached {
        Cached {
            mode: h.mode,
            fitted: h.fitted,
            leave_one_source_out: h.leave_one_source_out.clone(),
            in_sample: h.in_sample.clone(),
            efficiency: h.efficiency,
            per_source: h.per_source.clone(),
            rows: h.rows.clone(),
        }
    }

    fn into_holdout(self) -> Holdout {
        Holdout {
            mode: self.mode,
            fitted: self.fitted,
            leave_one_source_out: self.leave_one_source_out,
            in_sample: self.in_sample,
            efficiency: self.efficiency,
            per_source: self.per_source,
            rows: self.rows,
        }
    }
}

/// One source's one-shot calibration check ([`super::one_shot`]) as cached for the validation
/// view: the mean |error| of its rows predicted after calibrating on one other run of the source,
/// beside the same rows uncalibrated (constants fitted without the source).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OneShotLine {
    /// Source title.
    pub source: String,
    /// Its rows after calibrating on one other run.
    pub one_shot: Stats,
    /// The same rows uncalibrated (leave-one-source-out).
    pub uncalibrated: Stats,
}

impl OneShotLine {
    /// The lines of a one-shot summary, in its order.
    pub fn of(o: &OneShot) -> Vec<OneShotLine> {
        o.per_source
            .iter()
            .map(|s| OneShotLine {
                source: s.source.clone(),
                one_shot: s.one_shot.clone(),
                uncalibrated: s.uncalibrated.clone(),
            })
            .collect()
    }
}

/// The cache's text for the two modes' held-out errors (one JSON object per mode, keyed by mode),
/// extended mode's held-out errors of the shipped Mixture-of-Experts runs (`extended_moe_rows`)
/// and extended mode's one-shot check per source (`extended_one_shot`).
pub fn to_cache_json(
    reference: &Holdout,
    extended: &Holdout,
    moe_rows: &[HeldRow],
    one_shot: &[OneShotLine],
) -> String {
    let doc = serde_json::json!({
        "about": "Leave-one-source-out errors of the shipped measured training runs (a cache: \
                  tests/holdout_cache.rs recomputes it; FMPERF_BLESS=1 cargo test --profile host -p \
                  fmperf-core --test holdout_cache rewrites it)",
        "reference": serde_json::to_value(Cached::of(reference)).unwrap_or_default(),
        "extended": serde_json::to_value(Cached::of(extended)).unwrap_or_default(),
        "extended_moe_rows": serde_json::to_value(moe_rows).unwrap_or_default(),
        "extended_one_shot": serde_json::to_value(one_shot).unwrap_or_default(),
    });
    let mut doc = doc;
    round_numbers(&mut doc);
    let mut text = serde_json::to_string(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// Significant digits the cache keeps of each fractional number. The figures it holds are shown
/// to three digits at most (an error of 8.68 %, a band of ± 12 %), and seventeen-digit floats are
/// text gzip cannot shrink: at six digits the cache is 3 KB smaller in every module that ships it
/// (the page's and the first view's). A figure read back differs from the one computed by at most
/// half a unit in the sixth digit (5e-6 of its size; test `holdout_cache`).
pub const CACHE_DIGITS: usize = 6;

/// `v` with every number that is not an integer rounded to [`CACHE_DIGITS`] significant digits.
fn round_numbers(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            // A finite float (JSON holds no other) prints and parses back; a failure keeps `n`.
            let rounded = n.as_f64().and_then(|x| format!("{x:.*e}", CACHE_DIGITS - 1).parse::<f64>().ok());
            if let Some(r) = rounded.and_then(serde_json::Number::from_f64) {
                *n = r;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(round_numbers),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(round_numbers),
        _ => {}
    }
}

/// The held-out errors of the shipped runs in `mode`, read from the cache (parsed once).
/// `None` only if the shipped cache does not parse (a test rules that out).
pub fn shipped_holdout(mode: ModeKind) -> Option<Holdout> {
    static PARSED: OnceLock<Option<PerMode<Holdout>>> = OnceLock::new();
    let per_mode = PARSED.get_or_init(|| {
        let doc: serde_json::Value = serde_json::from_str(SHIPPED).ok()?;
        // Each mode's errors under its name (`reference`, `extended`).
        PerMode::try_from_fn(|m| {
            serde_json::from_value::<Cached>(doc.get(m.as_str())?.clone()).ok().map(Cached::into_holdout)
        })
    });
    per_mode.as_ref().map(|p| p.get(mode).clone())
}

/// Extended mode's held-out errors of the shipped Mixture-of-Experts runs, read from the cache
/// (each with the MoE layer overhead fitted without its source; [`super::moe_fit::moe_held_rows`]).
/// Empty only if the cache does not parse (a test rules that out).
pub fn shipped_moe_rows() -> Vec<HeldRow> {
    static PARSED: OnceLock<Vec<HeldRow>> = OnceLock::new();
    PARSED.get_or_init(|| cached_list("extended_moe_rows")).clone()
}

/// Extended mode's one-shot check of the shipped runs per source, read from the cache. Empty only
/// if the cache does not parse (a test rules that out).
pub fn shipped_one_shot() -> Vec<OneShotLine> {
    static PARSED: OnceLock<Vec<OneShotLine>> = OnceLock::new();
    PARSED.get_or_init(|| cached_list("extended_one_shot")).clone()
}

/// The list under `key` of the shipped cache (empty if the cache does not parse; a test rules that
/// out). Callers keep it in their own `OnceLock`.
fn cached_list<T: serde::de::DeserializeOwned>(key: &str) -> Vec<T> {
    serde_json::from_str::<serde_json::Value>(SHIPPED)
        .ok()
        .and_then(|doc| serde_json::from_value(doc.get(key)?.clone()).ok())
        .unwrap_or_default()
}
