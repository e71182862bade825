//! Memory rows: a measured peak-memory figure (or an out-of-memory outcome) compared with the
//! prediction of the same kind of figure, and the "will it fit" verdict with its error band.
//!
//! * **Kind** ([`MemoryKind`], read from `measured.memory_kind`, else `kind_detail`, the unit and
//!   scope words): PyTorch's peak *allocated* (`max_memory_allocated`, "peak active" is read as
//!   allocated: active bytes are allocated bytes not yet released to the cache), peak *reserved*
//!   (`max_memory_reserved`, the caching allocator's footprint), or the *device* figure
//!   (`nvidia-smi`, `rocm-smi`, "device memory used": reserved plus the CUDA context and library
//!   workspaces). A figure whose kind is not stated is read as peak allocated (the figure
//!   PyTorch's, Megatron's and Lightning's memory reports print first), noted.
//! * **Prediction of the kind**: [`crate::vocab::predicted_memory_gb`] — the one place that says which
//!   prediction is compared with which kind (switch it when the memory model reports allocated,
//!   reserved and device figures separately).
//! * **Error**: `predicted / measured − 1` for runs that ran (an out-of-memory run's figure is the
//!   peak before the failure, not the run's need, and is not scored). The headline is
//!   **leave-one-source-out** ([`hold_out_fragmentation`]): the one fitted memory constant, the
//!   allocator fragmentation ([`crate::extended::memory::FRAGMENTATION`]), is refitted without
//!   the row's source ([`super::fit::fit_scalar`], grid [`FRAGMENTATION_GRID`]) and the row's
//!   reserved and device figures predicted with it; the in-sample error (the shipped constant)
//!   is beside it.
//! * **Verdict** ([`Fits`]): the device-level need against the capacity `C` with the bands of
//!   the leave-one-source-out errors on the shipped memory rows, two-sided ([`Need`]): `yes` when
//!   the need with the allocator's cache `m` (the device figure, reserved + context + buffers)
//!   fits even under-predicted, `m·(1 + u) ≤ C`, `u` the under-prediction band
//!   ([`shipped_under_band`]: the 95th percentile of the held-out under-predictions of runs that
//!   ran, raised where a shipped out-of-memory run needs it so that none is a `yes`); `no` when
//!   the need without the cache `n` (allocated + context + buffers: PyTorch's allocator frees its
//!   cache and retries before it fails) does not fit even over-predicted, `n·(1 − b) > C`, `b`
//!   the 80th percentile of `|error|` ([`shipped_band`]); else `tight` (may not fit).

use crate::vocab::{Fits, Need};
use crate::vocab::{MemoryKind, PredictedMemory};
use std::sync::OnceLock;

use super::schema::RunMemory;
use super::words::Words;
use crate::vocab::Note;

/// Reads the kind of a memory figure; the note says how when it was not a plain kind name.
pub fn read_memory_kind(mem: &RunMemory) -> (MemoryKind, Option<Note>) {
    let kind = Words::new(mem.kind.as_deref().unwrap_or(""));
    let detail = Words::join(&[mem.kind_detail.as_deref(), mem.unit.as_deref(), mem.scope.as_deref()]);
    let classify = |w: &Words| {
        if w.any(&["nvidia smi", "rocm smi", "smi", "device memory", "device level", "memory used", "gpu memory used"])
        {
            Some(MemoryKind::NvidiaSmi)
        } else if w.has("active") {
            // Peak *active* bytes (`active_bytes.all.peak`, torchtune's "Peak Memory Active"):
            // allocated blocks not yet returned to the cache, read as allocated even when the text
            // goes on to compare it with reserved ("between allocated and reserved").
            Some(MemoryKind::PeakAllocated)
        } else if w.has("reserved") || w.has("max reserved") || w.has("memory reserved") {
            Some(MemoryKind::PeakReserved)
        } else if w.has("allocated") || w.has("active") || w.has("max memory allocated") {
            Some(MemoryKind::PeakAllocated)
        } else {
            None
        }
    };
    if let Some(k) = classify(&kind) {
        return (k, None);
    }
    if let Some(k) = classify(&detail) {
        let said = mem.kind_detail.as_deref().or(mem.unit.as_deref()).unwrap_or("");
        let why = if k == MemoryKind::PeakAllocated && detail.has("active") {
            " (peak active bytes are allocated bytes not yet returned to the cache)"
        } else {
            ""
        };
        let note = Note::reading(format!("memory kind read from `{said}` as {}{why}", k.as_str()));
        return (k, Some(note.about("measured.memory_kind")));
    }
    (
        MemoryKind::PeakAllocated,
        Some(
            Note::assumption("memory kind not stated: read as peak allocated (the figure memory reports print first)")
                .about("measured.memory_kind"),
        ),
    )
}

/// The measured figure [GB = 1e9 bytes]: `memory_gb`, else `memory_gib` converted.
pub fn measured_gb(mem: &RunMemory) -> Option<f64> {
    mem.gb.or(mem.gib.map(|g| g * 1.073_741_824))
}

impl PredictedMemory {
    /// Extended mode's three figures of an evaluation (`extended::memory`).
    pub fn of(e: &crate::extended::ExtendedEvaluation) -> PredictedMemory {
        let m = &e.memory_estimate;
        PredictedMemory { allocated_gb: m.allocated_gb, reserved_gb: m.reserved_gb, device_gb: m.device_gb }
    }
}

/// The grid the allocator fragmentation is fitted on (0 to 40 % of the allocated peak, by 1 %).
pub const FRAGMENTATION_GRID: [f64; 41] = {
    let mut g = [0.0; 41];
    let mut i = 0;
    while i < 41 {
        g[i] = i as f64 * 0.01;
        i += 1;
    }
    g
};

/// One scored memory row as the fragmentation fit sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredMemory {
    /// The row's source (the unit held out).
    pub source: String,
    /// The kind of its figure.
    pub kind: MemoryKind,
    /// Extended mode's figures.
    pub predicted: PredictedMemory,
    /// The measured figure [GB].
    pub measured_gb: f64,
}

/// The fragmentation fit over `rows` ([`super::fit::fit_scalar`] on [`FRAGMENTATION_GRID`]).
pub fn fit_fragmentation(rows: &[ScoredMemory]) -> super::fit::ScalarFit {
    let scalar: Vec<super::fit::ScalarRow> = rows
        .iter()
        .map(|r| super::fit::ScalarRow {
            source: r.source.clone(),
            error_at: Box::new(move |f| r.predicted.at_fragmentation(r.kind, f) / r.measured_gb - 1.0),
        })
        .collect();
    super::fit::fit_scalar(&scalar, &FRAGMENTATION_GRID)
}

/// Each row's leave-one-source-out error: predicted with the fragmentation fitted on the other
/// sources' rows (in the order of `rows`).
pub fn held_out_errors(rows: &[ScoredMemory]) -> Vec<f64> {
    held_out(rows).into_iter().map(|(e, _)| e).collect()
}

/// Each row's leave-one-source-out error and the fragmentation it was computed with.
fn held_out(rows: &[ScoredMemory]) -> Vec<(f64, f64)> {
    let fit = fit_fragmentation(rows);
    rows.iter()
        .map(|r| {
            let f = fragmentation_without(&fit, &r.source);
            (r.predicted.at_fragmentation(r.kind, f) / r.measured_gb - 1.0, f)
        })
        .collect()
}

/// The fragmentation of `fit` refitted without `source` (the fit's own value for a source it
/// did not see).
fn fragmentation_without(fit: &super::fit::ScalarFit, source: &str) -> f64 {
    fit.per_source.iter().find(|(s, _, _)| *s == source).map_or(fit.value, |(_, v, _)| *v)
}

/// A run reported out of memory, as the verdict band sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfMemory {
    /// The row's source.
    pub source: String,
    /// Extended mode's figures.
    pub predicted: PredictedMemory,
    /// The capacity it ran out of [GB].
    pub capacity_gb: f64,
}

/// The under-prediction each out-of-memory run proves at least, as a factor on its held-out
/// device-level prediction `m`: it needed more than its capacity `C`, so its need was at least
/// `C/m − 1` above `m` (negative when `m` is already above `C`). `m` is predicted with the
/// fragmentation fitted on `scored` without the run's source.
pub fn out_of_memory_floors(scored: &[ScoredMemory], ooms: &[OutOfMemory]) -> Vec<f64> {
    let fit = fit_fragmentation(scored);
    ooms.iter()
        .map(|o| {
            let f = fragmentation_without(&fit, &o.source);
            o.capacity_gb / o.predicted.at_fragmentation(MemoryKind::NvidiaSmi, f) - 1.0
        })
        .collect()
}

/// Fills every scored row's leave-one-source-out memory error (extended mode's rows; a row
/// predicted in reference mode has no fitted memory constant and keeps its in-sample error). The
/// fragmentation held out for a source is fitted on the other sources of `rows` and of `pool`
/// (rows fitted on, not reported: the shipped runs behind a user's file).
pub fn hold_out_fragmentation(rows: &mut [super::compare::RowResult], pool: &[super::compare::RowResult]) {
    let scored = scored_rows(rows);
    let list: Vec<ScoredMemory> =
        scored.iter().map(|(_, s)| s.clone()).chain(scored_rows(pool).into_iter().map(|(_, s)| s)).collect();
    for ((i, _), (e, f)) in scored.iter().zip(held_out(&list)) {
        if let Some(m) = rows[*i].memory.as_mut() {
            m.error_loso = Some(e);
            m.fragmentation_held_out = Some(f);
        }
    }
}

/// The rows of `rows` scored in extended mode (a figure, a run that ran, extended mode's
/// figures), with their index.
fn scored_rows(rows: &[super::compare::RowResult]) -> Vec<(usize, ScoredMemory)> {
    rows.iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let m = r.memory.as_ref()?;
            m.error?;
            Some((
                i,
                ScoredMemory {
                    source: r.source.clone(),
                    kind: m.measured_kind,
                    predicted: m.figures?,
                    measured_gb: m.measured_gb?,
                },
            ))
        })
        .collect()
}

/// A row's memory comparison (the JSON contract of `fmperf validate --format json`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemoryResult {
    /// The kind of the measured figure (`peak_allocated`, `peak_reserved`, `nvidia_smi`).
    pub kind: &'static str,
    /// The prediction of that kind [GB]; `null` when the row could not be evaluated.
    pub predicted_gb: Option<f64>,
    /// The measured figure [GB]; `null` when the row states only an outcome.
    pub measured_gb: Option<f64>,
    /// The part's memory [GB = 1e9 B]: in extended mode the device total its driver reports
    /// (`memory_device_gb`, e.g. 85.5 for an "80 GB" H100), in reference mode the label.
    pub capacity_gb: Option<f64>,
    /// The verdict on the predicted device-level need (`yes`, `tight`, `no`; [`verdict`]: `no`
    /// judged without the allocator's cache).
    pub fits: Option<Fits>,
    /// The predicted device-level need [GB].
    pub device_gb: Option<f64>,
    /// Half-width of the band around the need [GB].
    pub band_gb: Option<f64>,
    /// `predicted / measured − 1` (runs that ran only), with the shipped constants (in-sample).
    pub error: Option<f64>,
    /// The same with the allocator fragmentation fitted without the row's source (the headline;
    /// `null` in reference mode, which fits nothing).
    pub error_loso: Option<f64>,
    /// The allocator fragmentation `error_loso` was computed with: fitted without the row's
    /// source, on the file's other sources and the shipped runs behind it.
    #[serde(skip)]
    pub fragmentation_held_out: Option<f64>,
    /// The kind of the measured figure (the typed form of `kind`).
    #[serde(skip)]
    pub measured_kind: MemoryKind,
    /// Extended mode's three figures of the row (for the leave-one-source-out refit).
    #[serde(skip)]
    pub figures: Option<PredictedMemory>,
    /// The reported outcome: `true` out of memory, `false` ran, `null` not stated.
    pub oom: Option<bool>,
    /// Why there is no prediction.
    pub reason: Option<String>,
}

/// The relative band used by the verdicts: the 80th percentile of the leave-one-source-out
/// `|error|` over the shipped memory rows (extended mode; [`held_out_errors`]), or 10 % when
/// there are fewer than five scored rows. Honest by construction: no row's error comes from a
/// constant fitted on its own source. A `no` must not fit even this far below the need; the
/// half-width `memory_band_gb` of the outputs is this times the need.
pub fn shipped_band() -> f64 {
    shipped_bands().0
}

/// How far below the truth a need may be predicted, for the `yes` verdict ([`bands_of`]): the
/// [`UNDER_QUANTILE`] quantile of the leave-one-source-out under-predictions of the shipped runs
/// that ran (as factors on the prediction), at least [`shipped_band`], raised to what each shipped
/// out-of-memory run proves ([`out_of_memory_floors`]) — a `yes` is the costly mistake (the run
/// dies), so none of the runs that died may be one.
///
/// Before (session 13) it was the single worst held-out under-prediction: −28.8 %, a need 40.5 %
/// above the prediction, set by one BLOOM-176B prequel nvidia-smi snapshot (65 GB) that the source
/// itself flags as an anomaly (its larger micro-batch reads 56 GB). The 95th percentile of the
/// runs that ran is far lower (9.4 %); what sets the band now is the BLOOM prequel layout
/// (h 14336, 82 blocks, 128 heads, dp 8 tp 4 pp 12, micro-batch 2) predicted at 66.5 GB of
/// 85.9 GB that ran out of memory (66.0 GB with the fragmentation held out for its source):
/// 30.2 %. (Its near twin per device, h 13312 with 94 blocks, ran at 67 GB, predicted 66.8: the
/// model cannot tell them apart.)
pub fn shipped_under_band() -> f64 {
    shipped_bands().1
}

/// The verdict on a device-level `need` on `capacity_gb` with the shipped bands (module
/// documentation): `yes` judged on the need with the allocator's cache, `no` on the need without
/// it ([`crate::vocab::Need`]). What every output that judges a need says.
pub fn verdict(need: Need, capacity_gb: f64) -> Fits {
    crate::vocab::fits_between(need, capacity_gb, shipped_under_band(), shipped_band())
}

/// The range a device-level `need` may really take with the shipped bands [GB]: the two sides
/// [`verdict`] judges ([`crate::vocab::need_range_gb`]).
pub fn verdict_range_gb(need: Need) -> (f64, f64) {
    crate::vocab::need_range_gb(need, shipped_under_band(), shipped_band())
}

/// ([`shipped_band`], [`shipped_under_band`]), computed once.
fn shipped_bands() -> (f64, f64) {
    static BANDS: OnceLock<(f64, f64)> = OnceLock::new();
    *BANDS.get_or_init(|| {
        let file = super::parse_measured_runs(super::MEASURED_MEMORY_RUNS_JSON).unwrap_or_default();
        let prepared: Vec<super::prepared::Prepared> = file.rows.iter().map(super::prepared::Prepared::new).collect();
        let scored: Vec<ScoredMemory> = prepared.iter().filter_map(|p| p.scored_memory()).collect();
        let ooms: Vec<OutOfMemory> = prepared.iter().filter_map(|p| p.out_of_memory()).collect();
        bands_of(&held_out_errors(&scored), &out_of_memory_floors(&scored, &ooms))
    })
}

/// The quantile of the held-out under-predictions a `yes` must cover (beside the out-of-memory
/// floors): 95 % — one run in twenty that ran may need more than a `yes` allowed for, where the
/// single worst case let one flagged measurement set the band.
pub const UNDER_QUANTILE: f64 = 0.95;

/// How far above an out-of-memory floor the band is set (a relative need of 1e-9), so that the
/// run itself is not a `yes` (`m·(1 + u) ≤ C` would hold at the floor).
const FLOOR_MARGIN: f64 = 1e-9;

/// (80th percentile of `|e|`; the under-prediction band) of held-out errors `e` (`e = predicted /
/// measured − 1`) of runs that ran and the out-of-memory floors `floors`
/// ([`out_of_memory_floors`]); (10 %, 10 %) with fewer than five errors.
///
/// The under-prediction band is a factor on the *predicted* need, as [`crate::vocab::fits_between`]
/// applies it: a row predicted `e < 0` below its measurement needed `predicted · (1 + u)` with
/// `u = 1/(1 + e) − 1 = −e/(1 + e)` (an error of −28.3 % is a need 39.5 % above the prediction,
/// not 28.3 %); an over-prediction needs none (0). The band is the [`UNDER_QUANTILE`] quantile
/// (nearest rank) of these factors over every run that ran, at least the 80th percentile of
/// `|e|`, and just above every floor (no out-of-memory run is a `yes`).
pub fn bands_of(errors: &[f64], floors: &[f64]) -> (f64, f64) {
    let abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
    match percentile(&abs, 0.8).filter(|_| errors.len() >= 5) {
        Some(p80) => {
            let factors: Vec<f64> =
                errors.iter().map(|e| if *e < 0.0 && *e > -1.0 { -e / (1.0 + e) } else { 0.0 }).collect();
            let quantile = percentile(&factors, UNDER_QUANTILE).unwrap_or(0.0).max(p80);
            // Just above each floor: a need predicted exactly at the capacity with the band is a `yes`.
            let above = floors.iter().filter(|f| f.is_finite()).map(|f| f + FLOOR_MARGIN);
            (p80, above.fold(quantile, f64::max))
        }
        None => (0.10, 0.10),
    }
}

/// The `q`-quantile (0–1) of `v` by the nearest-rank method (`None` when empty).
pub fn percentile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    crate::sort::sort_by(&mut s, f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    Some(s[rank - 1])
}

/// Memory statistics of one source.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemorySourceStats {
    /// Source title.
    pub source: String,
    /// Leave-one-source-out errors of its scored rows (the fragmentation fitted on the others).
    #[serde(flatten)]
    pub stats: super::compare::Stats,
    /// The fragmentation fitted without this source (extended mode; `null` otherwise).
    pub fragmentation_held_out: Option<f64>,
    /// Its verdicts.
    pub verdicts: Verdicts,
}

/// Counts of the verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Verdicts {
    /// `yes`.
    pub yes: usize,
    /// `tight`.
    pub tight: usize,
    /// `no`.
    pub no: usize,
    /// Runs reported out of memory.
    pub oom_runs: usize,
    /// … of which predicted `yes` (a wrong verdict).
    pub oom_predicted_yes: usize,
    /// Runs reported to have run (or with a figure and no outcome) predicted `no` (a wrong verdict).
    pub ran_predicted_no: usize,
}

impl Verdicts {
    fn of(rows: &[&super::compare::RowResult]) -> Verdicts {
        let mut v = Verdicts::default();
        for m in rows.iter().filter_map(|r| r.memory.as_ref()) {
            let oom = m.oom == Some(true);
            v.oom_runs += usize::from(oom);
            match m.fits {
                Some(Fits::Yes) => {
                    v.yes += 1;
                    v.oom_predicted_yes += usize::from(oom);
                }
                Some(Fits::Tight) => v.tight += 1,
                Some(Fits::No) => {
                    v.no += 1;
                    v.ran_predicted_no += usize::from(!oom);
                }
                None => {}
            }
        }
        v
    }
}

/// The memory part of a validation summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemorySummary {
    /// Rows with a memory figure or an outcome.
    pub rows: usize,
    /// Leave-one-source-out errors (the headline; in-sample in reference mode) over the rows that
    /// ran with a figure and were evaluated (`evaluated`, `skipped` = rows with a figure or
    /// outcome that could not be evaluated, `mape`, …).
    #[serde(flatten)]
    pub stats: super::compare::Stats,
    /// The same rows' in-sample errors (the shipped fragmentation).
    pub in_sample: super::compare::Stats,
    /// The relative error band of the verdicts (see [`shipped_band`]).
    pub band: f64,
    /// The verdicts.
    pub verdicts: Verdicts,
    /// Per source (sources with memory rows only).
    pub per_source: Vec<MemorySourceStats>,
}

impl MemorySummary {
    /// The summary of `rows` with `sources` in order.
    pub fn of(rows: &[super::compare::RowResult], sources: &[String]) -> MemorySummary {
        let errors_of = |rs: &[&super::compare::RowResult], held_out: bool| {
            let errors: Vec<f64> = rs
                .iter()
                .filter_map(|r| {
                    let m = r.memory.as_ref()?;
                    if held_out { m.error_loso.or(m.error) } else { m.error }
                })
                .collect();
            let skipped = rs.iter().filter(|r| r.memory.as_ref().is_some_and(|m| m.predicted_gb.is_none())).count();
            super::compare::Stats::of(&errors, skipped)
        };
        let stats = |rs: &[&super::compare::RowResult]| errors_of(rs, true);
        let with: Vec<&super::compare::RowResult> = rows.iter().filter(|r| r.memory.is_some()).collect();
        // The fragmentation each source's rows were held out with (the same pool as their errors).
        let held_out =
            |s: &str| with.iter().filter(|r| r.source == s).find_map(|r| r.memory.as_ref()?.fragmentation_held_out);
        MemorySummary {
            rows: with.len(),
            stats: stats(&with),
            in_sample: errors_of(&with, false),
            band: shipped_band(),
            verdicts: Verdicts::of(&with),
            per_source: sources
                .iter()
                .filter_map(|s| {
                    let mine: Vec<&super::compare::RowResult> =
                        with.iter().copied().filter(|r| r.source == *s).collect();
                    (!mine.is_empty()).then(|| MemorySourceStats {
                        source: s.clone(),
                        stats: stats(&mine),
                        fragmentation_held_out: held_out(s),
                        verdicts: Verdicts::of(&mine),
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::fits;

    #[test]
    fn kinds_from_words() {
        let mem = |k: &str, d: Option<&str>| RunMemory {
            kind: Some(k.to_string()),
            kind_detail: d.map(str::to_string),
            ..RunMemory::default()
        };
        assert_eq!(read_memory_kind(&mem("peak_reserved", None)).0, MemoryKind::PeakReserved);
        assert_eq!(read_memory_kind(&mem("nvidia-smi", None)).0, MemoryKind::NvidiaSmi);
        assert_eq!(read_memory_kind(&mem("torch.cuda.max_memory_allocated()", None)).0, MemoryKind::PeakAllocated);
        let (k, note) = read_memory_kind(&mem("other", Some("'Peak Memory Active (GiB)' = peak active bytes")));
        assert_eq!(k, MemoryKind::PeakAllocated);
        assert!(note.unwrap().contains("active"));
        let (k, _) = read_memory_kind(&mem(
            "other",
            Some("'Peak Memory Active (GiB)' = peak active bytes (between allocated and reserved)"),
        ));
        assert_eq!(k, MemoryKind::PeakAllocated);
        let (k, note) = read_memory_kind(&mem("other", None));
        assert_eq!(k, MemoryKind::PeakAllocated);
        assert!(note.unwrap().contains("not stated"));
        assert_eq!(measured_gb(&RunMemory { gib: Some(10.0), ..RunMemory::default() }), Some(10.737_418_24));
    }

    #[test]
    fn asymmetric_bands_by_hand() {
        // Held-out errors: |e| sorted 0.01 … 0.30; the 80th percentile of 10 is the 8th: 0.08. Of
        // ten under-prediction factors −e/(1+e) the 95th percentile by nearest rank is the 10th
        // (⌈9.5⌉), the worst: an error of −0.30, a need 1/0.7 − 1 = 0.4286 above the prediction.
        let e = [0.01, -0.02, 0.03, -0.04, 0.05, -0.06, 0.07, -0.08, 0.09, -0.30];
        let (p80, under) = bands_of(&e, &[]);
        assert_eq!(p80, 0.08);
        assert!((under - 0.3 / 0.7).abs() < 1e-15, "{under}");
        // Twenty runs: the 95th percentile is the 19th factor, so one outlier no longer sets the
        // band: 19 errors of −0.05 and one of −0.30 give 0.05/0.95.
        let mut twenty = vec![-0.05; 19];
        twenty.push(-0.30);
        let (_, under) = bands_of(&twenty, &[]);
        assert!((under - 0.05 / 0.95).abs() < 1e-15, "{under}");
        // An out-of-memory run predicted at 66.5 GB of 85.9 GB raises it to 85.9/66.5 − 1 (it is
        // then `tight`); a floor below the quantile (a run predicted above its capacity) does not.
        let floor = 85.9 / 66.5 - 1.0;
        let (_, under) = bands_of(&twenty, &[floor, -0.2]);
        assert!(under > floor && under - floor < 1e-8, "{under} vs {floor}");
        assert_eq!(crate::vocab::fits_between(Need::single(66.5), 85.9, under, 0.08), Fits::Tight);
        assert!((bands_of(&twenty, &[-0.2]).1 - 0.05 / 0.95).abs() < 1e-15);
        // Only over-predictions: the under band is the percentile itself.
        assert_eq!(bands_of(&[0.1, 0.2, 0.3, 0.4, 0.5], &[]).1, 0.4);
        assert_eq!(bands_of(&[0.1], &[]), (0.10, 0.10));
        // 66.5 GB on 85.9 GB: "yes" with the 8 % band, "tight" once a 30 % under-prediction counts.
        assert_eq!(crate::vocab::fits(66.5, 85.9, 0.08), Fits::Yes);
        assert_eq!(crate::vocab::fits_between(Need::single(66.5), 85.9, 0.30, 0.08), Fits::Tight);
        // "no" keeps the 80th percentile: 94 GB · 0.92 = 86.5 > 85.9.
        assert_eq!(crate::vocab::fits_between(Need::single(94.0), 85.9, 0.30, 0.08), Fits::No);
    }

    #[test]
    fn verdicts_and_percentiles() {
        assert_eq!(fits(70.0, 80.0, 0.1), Fits::Yes);
        assert_eq!(fits(75.0, 80.0, 0.1), Fits::Tight);
        assert_eq!(fits(85.0, 80.0, 0.1), Fits::Tight);
        assert_eq!(fits(90.0, 80.0, 0.1), Fits::No);
        assert_eq!(percentile(&[0.3, 0.1, 0.2, 0.4, 0.5], 0.8), Some(0.4));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[0.1, 0.2], 0.5), Some(0.1));
    }
}
