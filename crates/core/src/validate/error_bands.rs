//! The error bar the explorer shows next to a predicted time: how far off the mode was, out of
//! sample, on the shipped measured runs of the same kind of part and model — or a plain statement
//! that no measured run stands behind that combination.
//!
//! Interface (for the page and the CLI):
//!
//! ```ignore
//! use fmperf_core::validate::error_bands::{ModelClass, error_band_for};
//! let band = error_band_for(Mode::Extended, system /* &CatalogSystem */, ModelClass::of(&workload, false));
//! // band.median_abs_error = Some(0.08), band.p80_abs_error = Some(0.14), band.runs = 22,
//! // band.message = "±8 % typical (80 % of runs within ±14 %), 22 measured runs on NVIDIA Hopper …"
//! ```
//!
//! * Classes: the part's class ([`PartClass`]: a GPU generation — NVIDIA Volta, Ampere, Hopper,
//!   Blackwell; AMD CDNA 2/3/4; Intel Gaudi — or TPU, or other architectures) and the model's
//!   ([`ModelClass`]: dense or mixture of experts, and size: under 15 B, 15–100 B, over 100 B
//!   parameters).
//! * Errors: the **leave-one-source-out** errors of [`super::holdout`] (each run predicted with
//!   constants fitted without its source); statistics of `|predicted/measured − 1|`: the median
//!   and the 80th percentile (nearest rank), plus the median signed error (positive: predicted
//!   faster than measured).
//! * Match ([`Basis`]): runs of the same part class and model class when there are at least
//!   [`MIN_RUNS`]; else of the same part class (any model); else of the same model class (any
//!   part); else of every run. Anything but an exact match says so in `message`, naming what has
//!   no measured run behind it.
//! * Cost: the shipped runs' leave-one-source-out errors are computed once per mode on first use
//!   ([`shipped_holdout`], about a second natively for extended mode); a page that wants progress
//!   runs a [`super::holdout::HoldoutJob`] in slices and calls [`error_band_from`] on its result.

use std::sync::OnceLock;

use super::hardware_words::family_key;
use super::holdout::{HeldRow, Holdout, holdout};
use super::memory::percentile;
use crate::catalog::{Architecture, CatalogSystem};
use crate::extended::Workload;
use crate::extended::efficiency::median;
use crate::mode_kind::ModeKind;
use crate::mode_kind::PerMode;

/// Fewest runs a band is drawn from before a wider class is used.
pub const MIN_RUNS: usize = 3;

/// The kind of part, for error bars.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "class", content = "generation", rename_all = "snake_case")]
pub enum PartClass {
    /// A GPU (or GPU-like) generation, by name (`NVIDIA Hopper`, `AMD CDNA 3`, …).
    Gpu(String),
    /// Google TPUs (any generation).
    Tpu,
    /// Wafer-scale, dataflow and IPU parts.
    Other,
}

impl PartClass {
    /// Display name.
    pub fn name(&self) -> String {
        match self {
            PartClass::Gpu(g) => g.clone(),
            PartClass::Tpu => "TPU".to_string(),
            PartClass::Other => "wafer-scale, dataflow and IPU".to_string(),
        }
    }
}

/// GPU generations by family key (the catalog id's family: see [`super::hardware_words`]);
/// sources: the vendors' architecture names for each product.
const GENERATIONS: [(&str, &str); 19] = [
    ("v100", "NVIDIA Volta"),
    ("a100", "NVIDIA Ampere"),
    ("a800", "NVIDIA Ampere"),
    ("h100", "NVIDIA Hopper"),
    ("h800", "NVIDIA Hopper"),
    ("h20", "NVIDIA Hopper"),
    ("h200", "NVIDIA Hopper"),
    ("gh200", "NVIDIA Hopper"),
    ("b200", "NVIDIA Blackwell"),
    ("gb200", "NVIDIA Blackwell"),
    ("b300", "NVIDIA Blackwell"),
    ("gb300", "NVIDIA Blackwell"),
    ("mi250x", "AMD CDNA 2"),
    ("mi300x", "AMD CDNA 3"),
    ("mi325x", "AMD CDNA 3"),
    ("mi355x", "AMD CDNA 4"),
    ("gaudi", "Intel Gaudi"),
    ("l40s", "NVIDIA Ada Lovelace"),
    ("trainium", "AWS Trainium"),
];

/// The class of a catalog part.
pub fn part_class(sys: &CatalogSystem) -> PartClass {
    match sys.architecture {
        // Google's TPUs; other torus parts (AWS Trainium) are their own generation.
        Architecture::Torus if sys.vendor.as_deref().is_none_or(|v| v.contains("Google")) => return PartClass::Tpu,
        Architecture::Torus => {}
        Architecture::WaferScale | Architecture::Dataflow | Architecture::Ipu => return PartClass::Other,
        Architecture::Gpu => {}
    }
    // The reference's preset files (`ref-H200`, `ref-B200-next`) are of the part they name.
    let family = match sys.id.strip_prefix("ref-") {
        Some(name) => name.split('-').next().unwrap_or_default().to_ascii_lowercase(),
        None => family_key(sys),
    };
    let generation = GENERATIONS
        .iter()
        .find(|(k, _)| family == *k)
        .or_else(|| GENERATIONS.iter().find(|(k, _)| family.starts_with(k)))
        .map(|(_, g)| g.to_string());
    PartClass::Gpu(generation.unwrap_or_else(|| sys.vendor.clone().unwrap_or_else(|| family.to_ascii_uppercase())))
}

/// Model size classes [parameters].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeClass {
    /// Under 15 B parameters.
    Small,
    /// 15–100 B.
    Medium,
    /// Over 100 B.
    Large,
}

impl SizeClass {
    /// The class of `params_b` billion parameters.
    pub fn of(params_b: f64) -> SizeClass {
        if params_b < 15.0 {
            SizeClass::Small
        } else if params_b <= 100.0 {
            SizeClass::Medium
        } else {
            SizeClass::Large
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            SizeClass::Small => "under 15 B parameters",
            SizeClass::Medium => "15–100 B parameters",
            SizeClass::Large => "over 100 B parameters",
        }
    }
}

/// The kind of model, for error bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ModelClass {
    /// Mixture of experts (else dense).
    pub moe: bool,
    /// Size (total parameters).
    pub size: SizeClass,
}

impl ModelClass {
    /// The class of a workload (parameters counted from its shape: blocks plus embedding and head).
    pub fn of(w: &Workload, moe: bool) -> ModelClass {
        let params = w.layers as f64 * w.block_parameters(true, true) + 2.0 * w.vocab_parameters();
        ModelClass { moe, size: SizeClass::of(params * 1e-9) }
    }

    /// The class of a workload as it is: mixture-of-experts when it has routed experts, sized by
    /// its total parameters (every expert counted, [`crate::extended::moe::parameter_counts`];
    /// dense models as [`ModelClass::of`]).
    pub fn of_workload(w: &Workload) -> ModelClass {
        match w.moe {
            None => ModelClass::of(w, false),
            Some(_) => {
                ModelClass { moe: true, size: SizeClass::of(crate::extended::moe::parameter_counts(w).total * 1e-9) }
            }
        }
    }

    /// The kind in a word, for a column's head or a table's cell: `MoE` or `dense` (the page's
    /// table of bands and its runs).
    pub fn kind(self) -> &'static str {
        if self.moe { "MoE" } else { "dense" }
    }

    /// Display name (`dense models over 100 B parameters`).
    pub fn name(self) -> String {
        format!("{} models {}", if self.moe { "mixture-of-experts" } else { "dense" }, self.size.name())
    }
}

/// Which runs a band was drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Same part class and model class.
    Exact,
    /// Same part class, other models.
    PartClass,
    /// Same model class, other parts.
    ModelClass,
    /// Every run of the mode.
    AllRuns,
    /// No run at all (the mode has no evaluated run).
    None,
}

impl Basis {
    /// Every basis, from the narrowest to none.
    pub const ALL: [Basis; 5] = [Basis::Exact, Basis::PartClass, Basis::ModelClass, Basis::AllRuns, Basis::None];

    /// Its stable key (`exact`, `part_class`, `model_class`, `all_runs`, `none`), the name its JSON
    /// writes: for attributes and keys, which must not follow the `Debug` form.
    pub fn key(self) -> &'static str {
        match self {
            Basis::Exact => "exact",
            Basis::PartClass => "part_class",
            Basis::ModelClass => "model_class",
            Basis::AllRuns => "all_runs",
            Basis::None => "none",
        }
    }
}

/// The error bar of a prediction.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ErrorBand {
    /// The mode.
    pub mode: ModeKind,
    /// The part's class.
    pub part: PartClass,
    /// The model's class.
    pub model: ModelClass,
    /// Which runs the statistics come from.
    pub basis: Basis,
    /// How many runs.
    pub runs: usize,
    /// Their sources.
    pub sources: usize,
    /// Median `|predicted/measured − 1|`, leave-one-source-out (0.08 = 8 %).
    pub median_abs_error: Option<f64>,
    /// 80th percentile of the same.
    pub p80_abs_error: Option<f64>,
    /// Median signed error (positive: predicted faster than measured).
    pub median_error: Option<f64>,
    /// Whether the mode fits constants (so the errors are out of sample) — false for reference
    /// mode, whose errors need no holding out.
    pub out_of_sample: bool,
    /// The bar in plain words, saying what has no measured runs behind it.
    pub message: String,
}

/// The band for `part` and `model` from held-out rows (see the module documentation).
pub fn error_band_from(h: &Holdout, part: &PartClass, model: ModelClass) -> ErrorBand {
    let class_of = |r: &HeldRow| {
        let p = crate::resolve::builtin_system(&r.hardware).map(part_class).unwrap_or(PartClass::Other);
        (p, ModelClass { moe: r.moe, size: SizeClass::of(r.params_b) })
    };
    let classed: Vec<(PartClass, ModelClass, f64, &str)> = h
        .rows
        .iter()
        .map(|r| {
            let (p, m) = class_of(r);
            (p, m, r.error, r.source.as_str())
        })
        .collect();
    let pick = |f: &dyn Fn(&PartClass, &ModelClass) -> bool| -> Vec<(f64, &str)> {
        classed.iter().filter(|(p, m, _, _)| f(p, m)).map(|(_, _, e, s)| (*e, *s)).collect()
    };
    let exact = pick(&|p, m| p == part && *m == model);
    let same_part = pick(&|p, _| p == part);
    let same_model = pick(&|_, m| *m == model);
    let every = pick(&|_, _| true);
    let (basis, chosen) = if exact.len() >= MIN_RUNS {
        (Basis::Exact, exact)
    } else if same_part.len() >= MIN_RUNS {
        (Basis::PartClass, same_part)
    } else if same_model.len() >= MIN_RUNS {
        (Basis::ModelClass, same_model)
    } else if !every.is_empty() {
        (Basis::AllRuns, every)
    } else {
        (Basis::None, Vec::new())
    };
    let abs: Vec<f64> = chosen.iter().map(|(e, _)| e.abs()).collect();
    let mut sources: Vec<&str> = chosen.iter().map(|(_, s)| *s).collect();
    crate::sort::sort(&mut sources);
    sources.dedup();
    let mut signed: Vec<f64> = chosen.iter().map(|(e, _)| *e).collect();
    let mut abs_sorted = abs.clone();
    let med = median(&mut abs_sorted);
    let p80 = percentile(&abs, 0.8);
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let bar = match (med, p80) {
        (Some(m), Some(p)) => format!(
            "±{} typical (80 % of runs within ±{}), {}, from {} measured runs in {} sources",
            pct(m),
            pct(p),
            if h.fitted { "leave-one-source-out" } else { "nothing fitted" },
            chosen.len(),
            sources.len()
        ),
        _ => String::new(),
    };
    let (pn, mn) = (part.name(), model.name());
    let message = match basis {
        Basis::Exact => format!("{bar} on {pn} parts with {mn}"),
        Basis::PartClass => format!("No measured runs of {mn} on {pn} parts; {bar} on {pn} parts with other models"),
        Basis::ModelClass => format!("No measured runs on {pn} parts; {bar} of {mn} on other parts"),
        Basis::AllRuns => format!("No measured runs on {pn} parts or of {mn}; {bar} over every part and model"),
        Basis::None => format!("No measured runs behind {} mode: its error is unknown", h.mode.as_str()),
    };
    ErrorBand {
        mode: h.mode,
        part: part.clone(),
        model,
        basis,
        runs: chosen.len(),
        sources: sources.len(),
        median_abs_error: med,
        p80_abs_error: p80,
        median_error: median(&mut signed),
        out_of_sample: h.fitted,
        message,
    }
}

/// The held-out errors the error bars stand on in `mode`: the shipped training runs'
/// leave-one-source-out errors (from the tested cache, [`super::holdout_cache`]) and, in extended
/// mode, the shipped Mixture-of-Experts runs' (reference mode prices an MoE model as dense and
/// was never checked on them). Read once; computed (about a second natively) only when the cache
/// does not hold them.
pub fn shipped_holdout(mode: ModeKind) -> &'static Holdout {
    if let Some(h) = cached_shipped_holdout(mode) {
        return h;
    }
    static COMPUTED: PerMode<OnceLock<Holdout>> = PerMode::new(OnceLock::new(), OnceLock::new());
    COMPUTED.get(mode).get_or_init(|| with_moe_rows(holdout(&super::shipped_runs(), mode), mode))
}

/// [`shipped_holdout`] from the cache alone (`None` when the cache does not hold `mode`'s errors):
/// what a caller that must not fit (the page's first view, which ships without the fitter) reads.
pub fn cached_shipped_holdout(mode: ModeKind) -> Option<&'static Holdout> {
    static CACHED: PerMode<OnceLock<Option<Holdout>>> = PerMode::new(OnceLock::new(), OnceLock::new());
    CACHED
        .get(mode)
        .get_or_init(|| super::holdout_cache::shipped_holdout(mode).map(|h| with_moe_rows(h, mode)))
        .as_ref()
}

/// `h` with, in extended mode, the shipped Mixture-of-Experts runs' held-out rows.
fn with_moe_rows(mut h: Holdout, mode: ModeKind) -> Holdout {
    if mode.models_experts() {
        h.rows.extend(super::holdout_cache::shipped_moe_rows());
    }
    h
}

/// The error bar of a prediction in `mode` for a catalog part and a model class, from the shipped
/// measured runs (module documentation).
pub fn error_band_for(mode: ModeKind, part: &CatalogSystem, model: ModelClass) -> ErrorBand {
    error_band_from(shipped_holdout(mode), &part_class(part), model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basis_keys_are_the_json_names() {
        // The key an attribute carries is the name the JSON writes (serde's snake_case), one per basis.
        for b in Basis::ALL {
            assert_eq!(serde_json::to_value(b).unwrap(), serde_json::Value::from(b.key()), "{b:?}");
        }
        assert_eq!(Basis::PartClass.key(), "part_class");
    }

    #[test]
    fn classes() {
        let sys = |id: &str| crate::catalog::find_system(id).unwrap();
        assert_eq!(part_class(sys("nvidia_h100_sxm5_80gb")), PartClass::Gpu("NVIDIA Hopper".into()));
        assert_eq!(part_class(sys("nvidia_h200_sxm_141gb")), PartClass::Gpu("NVIDIA Hopper".into()));
        assert_eq!(part_class(sys("nvidia_gb200_nvl72")), PartClass::Gpu("NVIDIA Blackwell".into()));
        assert_eq!(part_class(sys("amd_mi300x")), PartClass::Gpu("AMD CDNA 3".into()));
        assert_eq!(part_class(sys("intel_gaudi3")), PartClass::Gpu("Intel Gaudi".into()));
        assert_eq!(part_class(sys("google_tpu_v5e")), PartClass::Tpu);
        // Parts added with the catalog's second round: their own generations, Trainium not a TPU.
        assert_eq!(part_class(sys("nvidia_h20_96gb")), PartClass::Gpu("NVIDIA Hopper".into()));
        assert_eq!(part_class(sys("nvidia_gh200_96gb")), PartClass::Gpu("NVIDIA Hopper".into()));
        assert_eq!(part_class(sys("nvidia_a800_sxm4_80gb")), PartClass::Gpu("NVIDIA Ampere".into()));
        assert_eq!(part_class(sys("nvidia_l40s_48gb")), PartClass::Gpu("NVIDIA Ada Lovelace".into()));
        assert_eq!(part_class(sys("aws_trainium2")), PartClass::Gpu("AWS Trainium".into()));
        assert_eq!(part_class(sys("cerebras_cs3")), PartClass::Other);
        // The reference's preset files are of the part they name (issue 29: "No measured runs on
        // parts", with an empty name, under a reference-mode permalink).
        assert_eq!(part_class(sys("ref-H200")), PartClass::Gpu("NVIDIA Hopper".into()));
        assert_eq!(part_class(sys("ref-A100")), PartClass::Gpu("NVIDIA Ampere".into()));
        assert_eq!(part_class(sys("ref-B200-next")), PartClass::Gpu("NVIDIA Blackwell".into()));
        assert_eq!(ModelClass::of(&Workload::LLAMA3_8B, false).size, SizeClass::Small);
        assert_eq!(ModelClass::of_workload(&Workload::LLAMA3_8B), ModelClass::of(&Workload::LLAMA3_8B, false));
        // Mixtral 8x7B: 46.7 B parameters with all 8 experts (12.9 B active) → MoE, 15–100 B.
        let mixtral = Workload::from_catalog(crate::catalog::find_model("mixtral-8x7b").unwrap()).unwrap();
        assert_eq!(ModelClass::of_workload(&mixtral), ModelClass { moe: true, size: SizeClass::Medium });
        // The kind in a word, as the page's table heads and cells write it.
        assert_eq!(
            (ModelClass::of_workload(&mixtral).kind(), ModelClass::of_workload(&Workload::LLAMA3_8B).kind()),
            ("MoE", "dense")
        );
        assert_eq!(SizeClass::of(70.0), SizeClass::Medium);
        assert_eq!(SizeClass::of(405.0), SizeClass::Large);
    }

    #[test]
    fn shipped_bands_name_what_has_no_runs() {
        let sys = |id: &str| crate::catalog::find_system(id).unwrap();
        let small = ModelClass { moe: false, size: SizeClass::Small };
        let b = error_band_for(ModeKind::Extended, sys("nvidia_h100_sxm5_80gb"), small);
        assert_eq!(b.basis, Basis::Exact);
        assert!(b.out_of_sample && b.runs >= MIN_RUNS, "{b:?}");
        let (m, p) = (b.median_abs_error.unwrap(), b.p80_abs_error.unwrap());
        assert!(m > 0.0 && m <= p && p < 1.0, "{m} {p}");
        assert!(b.message.contains("leave-one-source-out") && b.message.contains("NVIDIA Hopper"), "{}", b.message);
        // Blackwell has measured runs of MoE models only: the bar says no dense run stands behind
        // it and takes the part's other runs.
        let b = error_band_for(ModeKind::Extended, sys("nvidia_gb200_nvl72"), small);
        assert_eq!(b.basis, Basis::PartClass);
        assert!(
            b.message.starts_with("No measured runs of dense models under 15 B parameters on NVIDIA Blackwell"),
            "{}",
            b.message
        );
        let moe_blackwell = error_band_for(
            ModeKind::Extended,
            sys("nvidia_b200_hgx"),
            ModelClass { moe: true, size: SizeClass::Large },
        );
        assert!(
            moe_blackwell.runs >= MIN_RUNS && moe_blackwell.message.contains("leave-one-source-out"),
            "{}",
            moe_blackwell.message
        );
        let moe = ModelClass { moe: true, size: SizeClass::Large };
        assert!(
            error_band_for(ModeKind::Extended, sys("amd_mi300x"), moe)
                .message
                .contains("No measured runs on AMD CDNA 3")
        );
        let r = error_band_for(ModeKind::Reference, sys("nvidia_a100_sxm4_80gb"), small);
        assert!(!r.out_of_sample && r.message.contains("nothing fitted"), "{}", r.message);
    }

    #[test]
    fn bands_fall_back_and_say_so() {
        let row = |hw: &str, p: f64, e: f64, s: &str| HeldRow {
            id: format!("{hw}{p}{e}"),
            source: s.into(),
            hardware: hw.into(),
            params_b: p,
            moe: false,
            error: e,
            in_sample_error: e,
        };
        let h = Holdout {
            mode: ModeKind::Extended,
            fitted: true,
            leave_one_source_out: Default::default(),
            in_sample: Default::default(),
            efficiency: None,
            per_source: vec![],
            rows: vec![
                row("nvidia_a100_sxm4_80gb", 7.0, 0.1, "A"),
                row("nvidia_a100_sxm4_80gb", 7.0, -0.2, "A"),
                row("nvidia_a100_sxm4_80gb", 7.0, 0.3, "B"),
                row("nvidia_a100_sxm4_80gb", 7.0, 0.4, "B"),
                row("nvidia_a100_sxm4_80gb", 7.0, -0.5, "B"),
                row("nvidia_h100_sxm5_80gb", 175.0, 0.05, "C"),
            ],
        };
        let ampere = PartClass::Gpu("NVIDIA Ampere".into());
        let small = ModelClass { moe: false, size: SizeClass::Small };
        let b = error_band_from(&h, &ampere, small);
        assert_eq!((b.basis, b.runs, b.sources), (Basis::Exact, 5, 2));
        // |errors| 0.1 0.2 0.3 0.4 0.5: median 0.3, 80th percentile (rank 4) 0.4.
        assert_eq!((b.median_abs_error, b.p80_abs_error), (Some(0.3), Some(0.4)));
        let hopper = PartClass::Gpu("NVIDIA Hopper".into());
        let b = error_band_from(&h, &hopper, small);
        assert_eq!(b.basis, Basis::ModelClass);
        assert!(b.message.starts_with("No measured runs on NVIDIA Hopper parts"), "{}", b.message);
        let large = ModelClass { moe: true, size: SizeClass::Large };
        let b = error_band_from(&h, &PartClass::Tpu, large);
        assert_eq!((b.basis, b.runs), (Basis::AllRuns, 6));
        assert!(b.message.contains("No measured runs on TPU parts or of mixture-of-experts models"));
        let empty = Holdout { rows: vec![], ..h };
        assert_eq!(error_band_from(&empty, &PartClass::Tpu, large).basis, Basis::None);
    }
}
