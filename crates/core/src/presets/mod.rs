//! Presets: the studies of both source papers as data (`studies.json`, compiled in). A preset is a
//! set of panels; a panel is a sweep (in the text form of [`SweepText`]), how to show it
//! ([`View`]), and the published figures to set next to the model's prediction ([`Comparison`]).
//!
//! * `strong-scaling`: Subramanian et al. (PMBS 2024), training days vs device count for `gpt3_1T`
//!   and `vit_era5` on A100/H200/B200 with NVLink domains of 4/8/64; the comparisons are every cell
//!   of the tables of `paper-results.md` §3.2 (and §3.1's 1D column), which fmperf must reproduce.
//! * `hardware`: the same paper's system-design sweeps around `B200-next` (FLOP rate, HBM capacity
//!   and bandwidth, scale-up and scale-out bandwidth), for both models.
//! * `design-space`: TP × PP maps showing where the optimum sits and which cells do not fit.
//! * `accelerators`: the analyses of Emani et al. (2023) — the GPT-2 XL block micro-benchmark,
//!   GPT-2 XL scaling to 64 devices, sequence length, gradient accumulation and weight sparsity —
//!   with the study's reported figures (measurements: differences are shown, not asserted).

pub mod compare;

use std::sync::OnceLock;

use serde::Deserialize;

pub use compare::{CompareKind, Comparison, ComparisonDef, ModelSide, Selector};

use crate::Error;
use crate::resolve::sweep_axis::AxisKey;
use crate::resolve::sweep_spec::SweepSpec;
use crate::sweep::{Metric, SweepText};
use crate::vocab::Note;

const STUDIES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/studies.json"));

/// How a panel is shown.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ViewDef {
    /// Lines of `metric` against `x`, one per combination of the `series` axes.
    Line {
        /// The x axis.
        x: String,
        /// Axes whose combinations make the lines.
        #[serde(default)]
        series: Vec<String>,
        /// Metric key.
        metric: String,
        /// Log x axis.
        #[serde(default)]
        log_x: bool,
        /// Log y axis.
        #[serde(default)]
        log_y: bool,
        /// Draw scaling efficiency (per-device value over the one at the fewest devices).
        #[serde(default)]
        efficiency: bool,
    },
    /// A heat map of `metric` over `x` × `y` (other axes: one map per combination).
    Heatmap {
        /// Columns.
        x: String,
        /// Rows.
        y: String,
        /// Metric key.
        metric: String,
    },
    /// Only the table.
    Table,
}

/// A view ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub enum View {
    /// Line chart.
    Line {
        /// The x axis.
        x: AxisKey,
        /// Axes making the series.
        series: Vec<AxisKey>,
        /// What is drawn.
        metric: Metric,
        /// Log x axis.
        log_x: bool,
        /// Log y axis.
        log_y: bool,
        /// Scaling efficiency instead of the metric.
        efficiency: bool,
    },
    /// Heat map.
    Heatmap {
        /// Columns.
        x: AxisKey,
        /// Rows.
        y: AxisKey,
        /// What is coloured.
        metric: Metric,
    },
    /// Table only.
    Table,
}

impl View {
    fn new(def: &ViewDef) -> Result<View, Error> {
        Ok(match def {
            ViewDef::Line { x, series, metric, log_x, log_y, efficiency } => View::Line {
                x: AxisKey::parse(x)?,
                series: series.iter().map(|s| AxisKey::parse(s)).collect::<Result<_, _>>()?,
                metric: Metric::parse(metric)?,
                log_x: *log_x,
                log_y: *log_y,
                efficiency: *efficiency,
            },
            ViewDef::Heatmap { x, y, metric } => {
                View::Heatmap { x: AxisKey::parse(x)?, y: AxisKey::parse(y)?, metric: Metric::parse(metric)? }
            }
            ViewDef::Table => View::Table,
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PanelDef {
    id: String,
    title: String,
    description: String,
    sweep: SweepText,
    view: ViewDef,
    #[serde(default)]
    compare: Vec<ComparisonDef>,
    #[serde(default)]
    notes: Vec<Note>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetDef {
    id: String,
    title: String,
    summary: String,
    sources: Vec<String>,
    #[serde(default)]
    notes: Vec<Note>,
    panels: Vec<PanelDef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudiesFile {
    presets: Vec<PresetDef>,
}

/// One panel of a preset: a sweep, its view, the published figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Id, unique in its preset.
    pub id: String,
    /// Title.
    pub title: String,
    /// What the panel shows and how it was set up.
    pub description: String,
    /// The sweep in text form (also the CLI command and the URL).
    pub text: SweepText,
    /// The sweep.
    pub spec: SweepSpec,
    /// How to show it.
    pub view: View,
    /// Published figures with the model's value next to them.
    pub comparisons: Vec<Comparison>,
    /// Remarks (what the model does not capture, choices made).
    pub notes: Vec<Note>,
}

/// A preset: several panels that regenerate one study.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Id (`strong-scaling`, `hardware`, `design-space`, `accelerators`).
    pub id: String,
    /// Title.
    pub title: String,
    /// One paragraph.
    pub summary: String,
    /// The papers and data files it draws on.
    pub sources: Vec<String>,
    /// Remarks.
    pub notes: Vec<Note>,
    /// The panels.
    pub panels: Vec<Panel>,
}

impl Preset {
    /// A panel by id.
    pub fn panel(&self, id: &str) -> Option<&Panel> {
        self.panels.iter().find(|p| p.id == id)
    }
}

static PRESETS: OnceLock<Vec<Preset>> = OnceLock::new();

/// Every preset, in file order.
pub fn presets() -> &'static [Preset] {
    PRESETS.get_or_init(|| load().unwrap_or_default())
}

/// A preset by id; the error lists the ids.
pub fn find_preset(id: &str) -> Result<&'static Preset, Error> {
    presets().iter().find(|p| p.id == id.trim()).ok_or_else(|| Error::UnknownName {
        kind: "preset".into(),
        name: id.chars().take(100).collect(),
        known: presets().iter().map(|p| p.id.clone()).collect(),
    })
}

/// Parses the compiled-in presets (tests keep this `Ok`).
pub fn load() -> Result<Vec<Preset>, Error> {
    let file: StudiesFile =
        serde_json::from_str(STUDIES_JSON).map_err(|e| Error::Parse { message: format!("studies.json: {e}") })?;
    file.presets
        .into_iter()
        .map(|p| {
            let panels = p
                .panels
                .into_iter()
                .map(|d| {
                    let context = |e: Error| Error::Parse { message: format!("preset {} panel {}: {e}", p.id, d.id) };
                    let spec = d.sweep.to_spec(None, None).map_err(context)?;
                    let view = View::new(&d.view).map_err(context)?;
                    let comparisons =
                        d.compare.into_iter().map(Comparison::new).collect::<Result<Vec<_>, _>>().map_err(context)?;
                    Ok(Panel {
                        id: d.id,
                        title: d.title,
                        description: d.description,
                        text: d.sweep,
                        spec,
                        view,
                        comparisons,
                        notes: d.notes,
                    })
                })
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(Preset { id: p.id, title: p.title, summary: p.summary, sources: p.sources, notes: p.notes, panels })
        })
        .collect()
}
