//! What the explorer's error bars cite, for the validation view (issue 29, §5): the measured runs
//! behind every band, grouped by part family (dense, mixture-of-experts), and for each family the
//! band each kind of model gets there, computed by core's own [`error_band_from`] over the same
//! held-out rows ([`shipped_holdout`]) — so the table says exactly what a results card quotes
//! ("±8 % typical … from 32 measured runs in 4 sources").

use fmperf_core::extended::efficiency::median;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::compare::Report;
use fmperf_core::validate::error_bands::{
    Basis, ErrorBand, ModelClass, PartClass, SizeClass, error_band_from, part_class, shipped_holdout,
};
use fmperf_core::validate::holdout::{HeldRow, Holdout};
use fmperf_core::validate::prepared::Prepared;
use fmperf_core::validate::{MeasuredFile, MeasuredRun};

/// Every model class a band distinguishes, dense first, small to large.
pub const MODEL_CLASSES: [ModelClass; 6] = [
    ModelClass { moe: false, size: SizeClass::Small },
    ModelClass { moe: false, size: SizeClass::Medium },
    ModelClass { moe: false, size: SizeClass::Large },
    ModelClass { moe: true, size: SizeClass::Small },
    ModelClass { moe: true, size: SizeClass::Medium },
    ModelClass { moe: true, size: SizeClass::Large },
];

/// One part family's runs and bands.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The part class (`NVIDIA Hopper`, `TPU`).
    pub part: PartClass,
    /// Its held-out rows, in file order.
    pub rows: Vec<HeldRow>,
    /// The band of each of [`MODEL_CLASSES`] on this part, as the explorer shows it.
    pub bands: Vec<ErrorBand>,
}

impl Family {
    /// Rows of mixture-of-experts models.
    pub fn moe_runs(&self) -> usize {
        self.rows.iter().filter(|r| r.moe).count()
    }
}

/// The part class of a held-out row (`Other` for a part not in the built-in catalog, as core's
/// bands class it).
pub fn row_part(r: &HeldRow) -> PartClass {
    fmperf_core::resolve::builtin_system(&r.hardware).map(part_class).unwrap_or(PartClass::Other)
}

/// The model class of a held-out row.
pub fn row_model(r: &HeldRow) -> ModelClass {
    ModelClass { moe: r.moe, size: SizeClass::of(r.params_b) }
}

/// The part families of `h`'s rows, in order of first appearance, with their bands.
pub fn families(h: &Holdout) -> Vec<Family> {
    let mut out: Vec<Family> = Vec::new();
    for r in &h.rows {
        let part = row_part(r);
        match out.iter_mut().find(|f| f.part == part) {
            Some(f) => f.rows.push(r.clone()),
            None => out.push(Family { part, rows: vec![r.clone()], bands: Vec::new() }),
        }
    }
    for f in &mut out {
        f.bands = MODEL_CLASSES.iter().map(|m| error_band_from(h, &f.part, *m)).collect();
    }
    out
}

/// The families of the shipped runs in `mode` (what the explorer's bands are drawn from).
pub fn shipped_families(mode: ModeKind) -> Vec<Family> {
    families(shipped_holdout(mode))
}

/// A band in a table cell: `±8 % · 12 runs`, and, when the band is drawn from a wider class than
/// the cell's, which (`whole family`, `other parts`, `every run`); `no runs` when none.
pub fn cell(b: &ErrorBand) -> (String, Option<&'static str>) {
    let typical = match b.median_abs_error {
        Some(e) if b.runs > 0 => format!("±{:.0} % · {} runs", e * 100.0, b.runs),
        _ => return ("no runs".to_string(), None),
    };
    let wider = match b.basis {
        Basis::Exact => None,
        Basis::PartClass => Some("whole family"),
        Basis::ModelClass => Some("other parts"),
        Basis::AllRuns => Some("every run"),
        Basis::None => return ("no runs".to_string(), None),
    };
    (typical, wider)
}

/// One part family's peak-memory runs: how many there are, how many were scored (ran, with a
/// figure), how many ran out of memory, and their median held-out |error|.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFamily {
    /// The part class; `None` for runs whose hardware words name no catalog part (validation
    /// cannot predict them: they are listed, not scored).
    pub part: Option<PartClass>,
    /// Ids of its memory runs, in file order.
    pub ids: Vec<String>,
    /// Runs scored (a prediction and a measured figure of a run that ran).
    pub scored: usize,
    /// Runs reported out of memory.
    pub oom: usize,
    /// Median |predicted / measured − 1| of its scored runs, leave-one-source-out where fitted
    /// (a fraction; `None` when none is scored).
    pub median_abs_error: Option<f64>,
}

/// The part class of a measured run, read as validation reads its hardware (`None` when the run
/// cannot be read).
pub fn run_part(run: &MeasuredRun) -> Option<PartClass> {
    Prepared::new(run).setup.ok().map(|s| part_class(s.system))
}

impl MemoryFamily {
    /// Display name: the part family, or that the run's part was not read.
    pub fn name(&self) -> String {
        self.part.as_ref().map_or_else(|| "part not read from the run".to_string(), PartClass::name)
    }
}

/// The memory runs of `report` (extended mode on `file`, the memory runs) by part family, in
/// order of first appearance. Rows without a memory figure are left out.
pub fn memory_families(file: &MeasuredFile, report: &Report) -> Vec<MemoryFamily> {
    let mut out: Vec<MemoryFamily> = Vec::new();
    let mut errors: Vec<Vec<f64>> = Vec::new();
    for row in &report.rows {
        let Some(mem) = &row.memory else { continue };
        let part = file.rows.iter().find(|r| r.id == row.id).and_then(run_part);
        let i = match out.iter().position(|f| f.part == part) {
            Some(i) => i,
            None => {
                out.push(MemoryFamily { part, ids: Vec::new(), scored: 0, oom: 0, median_abs_error: None });
                errors.push(Vec::new());
                out.len() - 1
            }
        };
        out[i].ids.push(row.id.clone());
        if mem.oom == Some(true) {
            out[i].oom += 1;
        }
        if let Some(e) = mem.error_loso.or(mem.error) {
            out[i].scored += 1;
            errors[i].push(e.abs());
        }
    }
    for (f, e) in out.iter_mut().zip(errors.iter_mut()) {
        f.median_abs_error = median(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_run_is_listed_once_under_its_family() {
        for mode in [ModeKind::Reference, ModeKind::Extended] {
            let h = shipped_holdout(mode);
            let fams = families(h);
            assert_eq!(fams.iter().map(|f| f.rows.len()).sum::<usize>(), h.rows.len(), "{mode:?}");
            for f in &fams {
                assert!(f.rows.iter().all(|r| row_part(r) == f.part));
                assert_eq!(f.bands.len(), MODEL_CLASSES.len());
            }
        }
        // Extended mode's bands cite MoE runs too (issue 29: "16 Hopper MoE runs" were nowhere).
        let ext = shipped_families(ModeKind::Extended);
        assert!(ext.iter().any(|f| f.moe_runs() > 0), "MoE runs are listed");
    }

    #[test]
    fn a_cell_quotes_the_band_the_explorer_shows() {
        for f in shipped_families(ModeKind::Extended) {
            for (m, b) in MODEL_CLASSES.iter().zip(&f.bands) {
                // The explorer's band of this part and model is core's, from the same rows.
                assert_eq!(b, &error_band_from(shipped_holdout(ModeKind::Extended), &f.part, *m));
                // An exact band counts exactly the family's runs of that model class.
                if b.basis == Basis::Exact {
                    assert_eq!(b.runs, f.rows.iter().filter(|r| row_model(r) == *m).count(), "{}", b.message);
                }
                // A band of the whole family counts every run of the family.
                if b.basis == Basis::PartClass {
                    assert_eq!(b.runs, f.rows.len(), "{}", b.message);
                }
                let (c, wider) = cell(b);
                if let Some(e) = b.median_abs_error {
                    assert_eq!(c, format!("±{:.0} % · {} runs", e * 100.0, b.runs));
                }
                assert_eq!(wider.is_none(), b.basis == Basis::Exact, "{}", b.message);
            }
        }
    }

    #[test]
    fn every_memory_run_is_listed_once_under_its_family_and_the_band_is_the_one_the_import_quotes() {
        use fmperf_core::validate::{shipped_memory_runs, validate};
        let file = shipped_memory_runs();
        let report = validate(&file, ModeKind::Extended);
        let fams = memory_families(&file, &report);
        let with_memory = report.rows.iter().filter(|r| r.memory.is_some()).count();
        assert_eq!(fams.iter().map(|f| f.ids.len()).sum::<usize>(), with_memory);
        assert_eq!(with_memory, report.summary.memory.rows);
        assert_eq!(fams.iter().map(|f| f.oom).sum::<usize>(), report.summary.memory.verdicts.oom_runs);
        assert_eq!(fams.iter().map(|f| f.scored).sum::<usize>(), report.summary.memory.stats.evaluated);
        // The shipped runs are on Ampere, Hopper and CDNA 3 parts (data/measured-memory-runs.json).
        let names: Vec<String> = fams.iter().map(MemoryFamily::name).collect();
        for want in ["NVIDIA Ampere", "NVIDIA Hopper", "AMD CDNA 3"] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        for f in &fams {
            for id in &f.ids {
                let run = file.rows.iter().find(|r| &r.id == id).expect("run");
                assert_eq!(run_part(run), f.part, "{id}");
            }
        }
        // The band every memory figure carries ("needs X ± Y GB") is the summary's, one for all parts.
        assert_eq!(report.summary.memory.band, fmperf_core::validate::memory::shipped_band());
    }
}
