//! What the explorer's error bars cite, for the validation view (issue 29, §5): the measured runs
//! behind every band, grouped by part family (dense, mixture-of-experts), and for each family the
//! band each kind of model gets there, computed by core's own [`error_band_from`] over the same
//! held-out rows ([`shipped_holdout`]) — so the table says exactly what a results card quotes
//! ("±8 % typical … from 32 measured runs in 4 sources").

use fmperf_core::validate::Mode;
use fmperf_core::validate::error_bands::{
    Basis, ErrorBand, ModelClass, PartClass, SizeClass, error_band_from, part_class, shipped_holdout,
};
use fmperf_core::validate::holdout::{HeldRow, Holdout};

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
pub fn shipped_families(mode: Mode) -> Vec<Family> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_run_is_listed_once_under_its_family() {
        for mode in [Mode::Reference, Mode::Extended] {
            let h = shipped_holdout(mode);
            let fams = families(h);
            assert_eq!(fams.iter().map(|f| f.rows.len()).sum::<usize>(), h.rows.len(), "{mode:?}");
            for f in &fams {
                assert!(f.rows.iter().all(|r| row_part(r) == f.part));
                assert_eq!(f.bands.len(), MODEL_CLASSES.len());
            }
        }
        // Extended mode's bands cite MoE runs too (issue 29: "16 Hopper MoE runs" were nowhere).
        let ext = shipped_families(Mode::Extended);
        assert!(ext.iter().any(|f| f.moe_runs() > 0), "MoE runs are listed");
    }

    #[test]
    fn a_cell_quotes_the_band_the_explorer_shows() {
        for f in shipped_families(Mode::Extended) {
            for (m, b) in MODEL_CLASSES.iter().zip(&f.bands) {
                // The explorer's band of this part and model is core's, from the same rows.
                assert_eq!(b, &error_band_from(shipped_holdout(Mode::Extended), &f.part, *m));
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
}
