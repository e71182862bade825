//! "Your measured run" in the explorer, without the DOM: the figure a user types (or the figures
//! the page read from pasted log lines, `fmperf-launch`'s `logs`), the fit on a configuration of
//! the scenario (core's [`fmperf_core::explore::calibrated`]), the calibrated and uncalibrated
//! numbers side by side with their error bands, and the entries saved in browser storage
//! ([`Saved`], versioned JSON: the user's text as typed and the calibration document, which is
//! also what the page exports and `fmperf … --calibration FILE` reads).

use fmperf_core::Error;
use fmperf_core::calibrate::{Calibration, Figure, Measured};
use fmperf_core::explore::calibrated::{Coverage, calibration_of, coverage, fit_on_configuration};
use fmperf_core::explore::{ConfigReport, ReportContext};
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::search::Execution;
use fmperf_core::search::code::format_candidate;
use fmperf_core::vocab::{Candidate, MemoryKind, MetricKind};
use serde::{Deserialize, Serialize};

use crate::fmt;

/// The browser-storage key of the saved entries and calibration.
pub const STORAGE_KEY: &str = "fmperf.calibration";

/// The file name of an exported calibration.
pub const EXPORT_FILE: &str = "fmperf-calibration.json";

/// The page's field names (errors name them).
pub mod field {
    /// The pasted log lines.
    pub const LOG: &str = "cal.log";
    /// The typed figure's value.
    pub const VALUE: &str = "cal.value";
    /// An imported document.
    pub const IMPORT: &str = "cal.import";
}

/// A figure the user can type, with its label and unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureChoice {
    /// The figure's key ([`Figure::key`]).
    pub key: &'static str,
    /// Its label with its unit.
    pub label: &'static str,
    /// What it is.
    pub figure: Figure,
    /// Typed as a percentage (MFU).
    pub percent: bool,
}

/// The figures the page offers, in its select's order.
pub const FIGURES: [FigureChoice; 6] = [
    FigureChoice {
        key: "step_time_s",
        label: "Step time [s]",
        figure: Figure::Time(MetricKind::StepTimeS),
        percent: false,
    },
    FigureChoice {
        key: "tokens_per_s_per_device",
        label: "Tokens/s per device",
        figure: Figure::Time(MetricKind::TokensPerSPerDevice),
        percent: false,
    },
    FigureChoice {
        key: "tokens_per_s_total",
        label: "Tokens/s, all devices",
        figure: Figure::Time(MetricKind::TokensPerSTotal),
        percent: false,
    },
    FigureChoice {
        key: "tflops_per_device",
        label: "TFLOP/s per device (model FLOPs)",
        figure: Figure::Time(MetricKind::TflopsPerDevice),
        percent: false,
    },
    FigureChoice { key: "mfu", label: "MFU [%]", figure: Figure::Time(MetricKind::Mfu), percent: true },
    FigureChoice {
        key: "memory_peak_reserved_gb",
        label: "Peak memory per device, reserved [GB]",
        figure: Figure::Memory(MemoryKind::PeakReserved),
        percent: false,
    },
];

/// What the user typed, kept as typed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Entries {
    /// Pasted log lines.
    #[serde(default)]
    pub log: String,
    /// The typed figure's key ([`FIGURES`]).
    #[serde(default)]
    pub figure: String,
    /// The typed figure's value as typed (`4.2`, `5,900`, `38 %`).
    #[serde(default)]
    pub value: String,
}

impl Entries {
    /// The figure chosen (the first of [`FIGURES`] when none or an unknown one).
    pub fn choice(&self) -> FigureChoice {
        FIGURES.iter().copied().find(|f| f.key == self.figure).unwrap_or(FIGURES[0])
    }

    /// The typed figure (`None` when the value is empty); an error names [`field::VALUE`].
    pub fn typed(&self) -> Result<Option<Measured>, Error> {
        let text = self.value.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let c = self.choice();
        let number = text.trim_end_matches('%').trim().replace(',', "");
        let v = crate::number::parse_quantity(&number)
            .ok_or_else(|| Error::invalid(field::VALUE, text, "must be a number (5900, 5.9k, 4.25)"))?;
        let v = if c.percent { v / 100.0 } else { v };
        if c.percent && v > 1.0 {
            return Err(Error::invalid(field::VALUE, text, "is a percentage of the peak: at most 100"));
        }
        Measured::new(c.figure, v, format!("typed: {}", c.label), field::VALUE).map(Some)
    }
}

/// The figures to fit: those read from the log lines (`from_log`), then the typed one, which
/// replaces a log figure of the same kind.
pub fn figures(from_log: Vec<Measured>, typed: Option<Measured>) -> Vec<Measured> {
    let mut out: Vec<Measured> = from_log;
    if let Some(t) = typed {
        out.retain(|m| m.figure != t.figure);
        out.push(t);
    }
    out
}

/// Fits the calibration on configuration `c` (run with `execution`) of the scenario; errors name
/// the page's fields (`cal.value` for a figure the constants cannot reach, `mode` in reference
/// mode).
pub fn fit(
    spec: &ExploreSpec,
    c: &Candidate,
    execution: Option<Execution>,
    measured: &[Measured],
) -> Result<Calibration, Error> {
    if measured.is_empty() {
        return Err(Error::invalid(field::VALUE, "none", "paste log lines of your run or type a figure you measured"));
    }
    let fitted = fit_on_configuration(spec, c, execution, measured)?;
    Ok(calibration_of(spec, &format_candidate(c), &fitted))
}

/// One configuration priced without and with a calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// Its report (memory without the calibration's overhead).
    pub report: ConfigReport,
    /// Memory per device the stack needs [GB] (the calibration's overhead added).
    pub memory_gb: f64,
    /// Half-width of the time's error band [fraction], when a measured run stands behind it.
    pub band: Option<f64>,
}

/// A configuration side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct SideBySide {
    /// Its text form.
    pub code: String,
    /// With the shipped fit.
    pub uncalibrated: Side,
    /// With the calibration.
    pub calibrated: Side,
    /// Whether the calibration covers it.
    pub coverage: Coverage,
}

/// Configuration `c` of the scenario without and with `cal` (each in its own search's
/// execution); `band` is the scenario's uncalibrated error band [fraction].
pub fn compare(spec: &ExploreSpec, cal: &Calibration, c: &Candidate, band: Option<f64>) -> Result<SideBySide, Error> {
    let cal_spec = spec.calibrated(cal)?;
    let side = |s: &ExploreSpec, overhead: f64, band: Option<f64>| -> Result<Side, Error> {
        let ctx = ReportContext::new(s)?;
        let mut report = ConfigReport::of_detail(&ctx, c, &s.evaluate(c)?);
        // Judged against the device, as the calibrated search judges it (capacity less overhead).
        report.memory.capacity_gb = spec.capacity_gb();
        report.memory.used_gb += overhead;
        Ok(Side { memory_gb: report.memory.used_gb, report, band })
    };
    let coverage = coverage(cal, spec);
    Ok(SideBySide {
        code: format_candidate(c),
        uncalibrated: side(spec, 0.0, band)?,
        calibrated: side(&cal_spec, cal.constants.memory_overhead_gb, band.map(|b| coverage.band(b)))?,
        coverage,
    })
}

/// The comparison's rows for a scenario of `seq_len` tokens per sample: `[label, uncalibrated,
/// calibrated]`, numbers as the explorer writes them.
pub fn rows(c: &SideBySide, seq_len: u64) -> Vec<[String; 3]> {
    let time = |s: &Side| match s.band {
        Some(b) => format!("{} ± {:.0} %", fmt::seconds(s.report.time_per_step_s), b * 100.0),
        None => fmt::seconds(s.report.time_per_step_s),
    };
    let n = c.uncalibrated.report.candidate.n_gpus() as f64;
    let tokens = move |s: &Side| fmt::compact(s.report.throughput_samples_per_s * seq_len as f64 / n);
    let line = |label: &str, f: &dyn Fn(&Side) -> String| [label.to_string(), f(&c.uncalibrated), f(&c.calibrated)];
    vec![
        line("Time per step [s]", &time),
        line("Tokens/s per device", &tokens),
        line("MFU", &|s| fmt::percent(s.report.mfu)),
        line("Training time [days]", &|s| fmt::days(s.report.training_days)),
        line("Memory per device [GB]", &|s| fmt::gb(s.memory_gb)),
        line("Fits", &|s| if s.report.memory.fits() { "yes".into() } else { "no".into() }),
    ]
}

/// What the calibration changed, in words.
pub fn changes_line(cal: &Calibration) -> String {
    let changes: Vec<String> = cal.constants.changes().iter().map(|c| c.text()).collect();
    if changes.is_empty() {
        "Nothing changed: your run agrees with the shipped fit.".to_string()
    } else {
        format!("Changed: {}.", changes.join("; "))
    }
}

/// What is saved in browser storage: the entries as typed and the calibration document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// The format's version (1).
    pub version: u32,
    /// The entries as typed.
    pub entries: Entries,
    /// The calibration document ([`Calibration::to_json`]), once fitted or imported.
    #[serde(default)]
    pub calibration: Option<serde_json::Value>,
}

impl Saved {
    /// The stored text of `entries` and `cal`.
    pub fn text(entries: &Entries, cal: Option<&Calibration>) -> String {
        let s = Saved { version: 1, entries: entries.clone(), calibration: cal.map(Calibration::to_json) };
        serde_json::to_string(&s).unwrap_or_default()
    }

    /// Reads stored text: the entries, the calibration, and a problem with the calibration (kept
    /// apart so that the entries survive a calibration this version cannot read).
    pub fn read(text: &str) -> (Entries, Option<Calibration>, Option<String>) {
        let Ok(s) = serde_json::from_str::<Saved>(text) else {
            return (Entries::default(), None, Some("the saved calibration could not be read".into()));
        };
        match s.calibration.map(|v| Calibration::parse(&v.to_string())) {
            Some(Ok(c)) => (s.entries, Some(c), None),
            Some(Err(e)) => (s.entries, None, Some(e.to_string())),
            None => (s.entries, None, None),
        }
    }
}

/// An imported file: the calibration document `fmperf calibrate` writes (or the page exports).
pub fn import(text: &str) -> Result<Calibration, Error> {
    Calibration::parse(text).map_err(|e| Error::invalid(field::IMPORT, "the file", e.to_string()))
}

/// The exported document, pretty-printed (the same JSON `fmperf calibrate` writes).
pub fn export(cal: &Calibration) -> String {
    serde_json::to_string_pretty(&cal.to_json()).unwrap_or_default()
}
