//! The studies view's URL keys. Every input lives in the query, so a URL is a permalink:
//!
//! | key | what |
//! |---|---|
//! | `preset`, `panel` | a preset panel (its sweep; the sweep keys below are then ignored) |
//! | `s.model`, `s.system`, `s.strategy`, `s.gpus`, `s.domain` (old spelling `s.nvlink` read too), `s.precision`, `s.global-batch`, `s.per-device-batch`, `s.fix` | the sweep, as [`SweepText`] (the `fmperf sweep` flags) |
//! | `ax.<axis>` | one axis, e.g. `ax.gpus=4..16384`, in sweep order (slowest first) |
//! | `c.kind` | `line`, `heatmap` or `table` |
//! | `c.x`, `c.y`, `c.series` | chart axes (`c.series` comma-separated) |
//! | `c.metric`, `c.logx`, `c.logy` | what is drawn, log axes (`1`/`0`) |
//! | `c.at.<axis>` | the value shown of an axis that is neither x, y nor a series |
//! | `c.bd`, `c.bs` | breakdown: `time` or `memory`, and the series it shows |
//! | `c.eff` | `1`: scaling efficiency instead of the throughput (x = devices) |
//! | `mode`, `ext` | the model and extended mode's switches, app-wide ([`crate::mode`]); absent: a preset panel's own mode, else reference for an old permalink naming a sweep and extended for a fresh page ([`crate::mode`]) |
//!
//! Values are kept as typed, valid or not, so nothing entered is lost on reload.

use fmperf_core::presets::{self, Panel, Preset, View};
use fmperf_core::resolve::sweep_axis::AxisKey;
use fmperf_core::resolve::sweep_spec::SweepSpec;
use fmperf_core::sweep::{Metric, SweepText};

use fmperf_core::resolve::UserEntries;
use fmperf_core::resolve::{ModelRef, SystemRef};

use crate::mode;
use crate::number::normalize_count;
use crate::query::Query;

/// Prefix of the sweep keys.
const SWEEP_PREFIX: &str = "s.";
/// The sweep key of the scale-up domain size, and its old spellings (still read).
const DOMAIN_KEYS: [&str; 3] = ["s.domain", "s.nvlink", "s.nvs"];

/// Whether `k` is one of the studies' sweep keys (a permalink naming one names a sweep).
pub fn is_sweep_key(k: &str) -> bool {
    k.starts_with(SWEEP_PREFIX) || k.starts_with(AXIS_PREFIX) || k.starts_with(CHART_PREFIX) || k == "preset"
}
/// Prefix of the axis keys.
pub const AXIS_PREFIX: &str = "ax.";
/// Prefix of the chart keys.
const CHART_PREFIX: &str = "c.";
/// Prefix of the fixed values of the remaining axes.
const AT_PREFIX: &str = "c.at.";

/// The sweep a page shows: a preset panel, or the user's own.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepSource {
    /// A preset panel.
    Preset(&'static Preset, &'static Panel),
    /// The user's sweep.
    Custom(SweepText),
}

impl SweepSource {
    /// The sweep text.
    pub fn text(&self) -> SweepText {
        match self {
            SweepSource::Preset(_, p) => p.text.clone(),
            SweepSource::Custom(t) => t.clone(),
        }
    }
}

/// The default sweep of a fresh page: strong scaling of Llama 3 70B (its own batch, 2,048
/// sequences) on H100, H200 and B200 from 128 to 8,192 devices — a run people make today.
pub fn default_text() -> SweepText {
    SweepText {
        model: "llama3-70b".into(),
        system: "nvidia_h100_sxm5_80gb".into(),
        global_batch: Some("2048".into()),
        axes: vec![
            "system=nvidia_h100_sxm5_80gb,nvidia_h200_sxm_141gb,nvidia_b200_hgx".into(),
            "gpus=128..8192".into(),
        ],
        ..SweepText::default()
    }
}

/// The sweep as core reads it: counts typed as `4k`, `1e3` or `2^12` (in the base fields and in
/// axis values and ranges, `gpus=1k..16k`) turned into digits; everything else as typed.
pub fn for_core(t: &SweepText) -> SweepText {
    let count = |v: &Option<String>| v.as_ref().map(|v| normalize_count(v));
    SweepText {
        gpus: count(&t.gpus),
        nvlink: count(&t.nvlink),
        global_batch: count(&t.global_batch),
        per_device_batch: count(&t.per_device_batch),
        axes: t.axes.iter().map(|a| normalize_axis(a)).collect(),
        ..t.clone()
    }
}

/// One axis text (`gpus=1k..16k`, `nvlink=8,72`) with its count values as digits.
fn normalize_axis(axis: &str) -> String {
    let Some((name, values)) = axis.split_once('=') else { return axis.to_string() };
    let values: Vec<String> =
        values.split(',').map(|v| v.split("..").map(normalize_count).collect::<Vec<_>>().join("..")).collect();
    format!("{name}={}", values.join(","))
}

/// The user's own model and system (saved in the Catalog view) for `to_spec`, when the sweep names
/// them (`None`: the catalog's).
pub fn user_refs(t: &SweepText, user: &UserEntries) -> (Option<ModelRef>, Option<SystemRef>) {
    let model = user.models.iter().find(|m| m.id == t.model.trim()).map(|m| ModelRef::Inline(Box::new(m.clone())));
    let id = crate::system_spec::id_of(&t.system);
    let system = user.systems.iter().find(|s| s.id == id).map(|s| SystemRef::Inline(Box::new(s.clone())));
    (model, system)
}

/// What the query asks for.
pub fn source(q: &Query) -> SweepSource {
    if let (Some(p), Some(panel)) = (q.get("preset"), q.get("panel")) {
        if let Ok(preset) = presets::find_preset(p) {
            if let Some(panel) = preset.panel(panel) {
                return SweepSource::Preset(preset, panel);
            }
        }
    }
    SweepSource::Custom(custom_text(q))
}

/// What the page says when the URL names a preset or panel that does not exist (the page then
/// shows the user's sweep): the unknown name and the known ones.
pub fn unknown_preset(q: &Query) -> Option<String> {
    let id = q.get("preset")?;
    let Ok(preset) = presets::find_preset(id) else {
        let known = presets::presets().iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(", ");
        return Some(format!("There is no preset “{id}”, so your own sweep is shown. Presets: {known}."));
    };
    let panel = q.get("panel").unwrap_or("");
    preset.panel(panel).is_none().then(|| {
        let known = preset.panels.iter().map(|p| p.id.as_str()).collect::<Vec<_>>().join(", ");
        format!("The preset “{}” has no panel “{panel}”, so your own sweep is shown. Its panels: {known}.", preset.id)
    })
}

/// The user's sweep from the query (defaults when no sweep key is present).
pub fn custom_text(q: &Query) -> SweepText {
    let has_any = q.0.iter().any(|(k, _)| k.starts_with(SWEEP_PREFIX) || k.starts_with(AXIS_PREFIX));
    if !has_any {
        return default_text();
    }
    let get = |k: &str| q.get(&format!("{SWEEP_PREFIX}{k}")).map(str::to_string);
    let opt = |k: &str| get(k).filter(|v| !v.trim().is_empty());
    SweepText {
        model: get("model").unwrap_or_default(),
        system: get("system").unwrap_or_default(),
        strategy: opt("strategy"),
        gpus: opt("gpus"),
        nvlink: DOMAIN_KEYS.iter().find_map(|k| q.get(k)).map(str::to_string).filter(|v| !v.trim().is_empty()),
        precision: opt("precision"),
        global_batch: opt("global-batch"),
        per_device_batch: opt("per-device-batch"),
        fix: opt("fix"),
        // The mode is page-wide (`mode`, `ext`), applied over the text by the view's state.
        mode: None,
        ext: None,
        axes: q.0.iter().filter_map(|(k, v)| k.strip_prefix(AXIS_PREFIX).map(|name| format!("{name}={v}"))).collect(),
    }
}

/// Writes `t` as the user's sweep (removing any preset and the previous sweep keys); its mode and
/// switches, when it has them, go to the page-wide keys.
pub fn write_custom(q: &mut Query, t: &SweepText) {
    q.remove("preset");
    q.remove("panel");
    q.0.retain(|(k, _)| !k.starts_with(SWEEP_PREFIX) && !k.starts_with(AXIS_PREFIX));
    for (k, v) in t.pairs() {
        if k == "mode" || k == "ext" {
            q.set(if k == "mode" { mode::MODE_KEY } else { mode::EXT_KEY }, &v);
        } else if k == "axis" {
            let (name, values) = v.split_once('=').unwrap_or((v.as_str(), ""));
            q.set(&format!("{AXIS_PREFIX}{name}"), values);
        } else if k == "nvlink" || k == "domain" {
            q.set(DOMAIN_KEYS[0], &v);
        } else {
            q.set(&format!("{SWEEP_PREFIX}{k}"), &v);
        }
    }
}

/// Selects a preset panel (the chart keys are reset to the panel's view, and the mode to the
/// panel's own, so a paper's preset shows the paper's numbers; the user may switch after).
pub fn write_preset(q: &mut Query, preset: &str, panel: &str) {
    clear_chart(q);
    q.remove(mode::MODE_KEY);
    q.remove(mode::EXT_KEY);
    q.set("preset", preset);
    q.set("panel", panel);
}

/// Removes every chart key.
pub fn clear_chart(q: &mut Query) {
    q.0.retain(|(k, _)| !k.starts_with(CHART_PREFIX));
}

/// How the results are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// Lines against x.
    Line,
    /// A map over x × y.
    Heatmap,
    /// Table only.
    Table,
}

impl ChartKind {
    /// URL value.
    pub fn key(self) -> &'static str {
        match self {
            ChartKind::Line => "line",
            ChartKind::Heatmap => "heatmap",
            ChartKind::Table => "table",
        }
    }
}

/// Breakdown shown under the main chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StudyBreakdown {
    /// Components of the iteration time.
    Time,
    /// Components of the memory per device.
    Memory,
}

/// The chart settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Kind.
    pub kind: ChartKind,
    /// x axis (line, heat map columns).
    pub x: Option<AxisKey>,
    /// Heat-map rows.
    pub y: Option<AxisKey>,
    /// Axes whose combinations make the lines.
    pub series: Vec<AxisKey>,
    /// What is drawn.
    pub metric: Metric,
    /// Log x axis.
    pub log_x: bool,
    /// Log y axis.
    pub log_y: bool,
    /// Values shown of the other axes (text form).
    pub at: Vec<(AxisKey, String)>,
    /// Breakdown kind.
    pub breakdown: StudyBreakdown,
    /// The series whose breakdown is shown (its name; `None`: the one with the best point).
    pub breakdown_series: Option<String>,
    /// Draw scaling efficiency instead of the metric: per-device value over the per-device value
    /// at the smallest device count of the line (x = devices, throughput metrics only).
    pub efficiency: bool,
}

impl Chart {
    /// Whether the efficiency transform applies to these settings.
    pub fn efficiency_applies(&self) -> bool {
        self.kind == ChartKind::Line
            && self.x == Some(AxisKey::Gpus)
            && matches!(self.metric, Metric::Throughput | Metric::TokensPerS | Metric::AchievedTflops)
    }
}

/// The chart a spec suggests when the URL has none: the preset's view, else lines against the
/// device axis (or the last numeric axis) with every other axis as a series.
fn default_chart(spec: &SweepSpec, view: Option<&View>) -> Chart {
    let mut c = Chart {
        kind: ChartKind::Line,
        x: None,
        y: None,
        series: Vec::new(),
        metric: Metric::Days,
        log_x: false,
        log_y: false,
        at: Vec::new(),
        breakdown: StudyBreakdown::Time,
        breakdown_series: None,
        efficiency: false,
    };
    match view {
        Some(View::Line { x, series, metric, log_x, log_y, efficiency }) => {
            c.efficiency = *efficiency;
            c.x = Some(*x);
            c.series = series.clone();
            c.metric = *metric;
            c.log_x = *log_x;
            c.log_y = *log_y;
        }
        Some(View::Heatmap { x, y, metric }) => {
            c.kind = ChartKind::Heatmap;
            c.x = Some(*x);
            c.y = Some(*y);
            c.metric = *metric;
        }
        Some(View::Table) => c.kind = ChartKind::Table,
        None => {
            let keys: Vec<AxisKey> = spec.axes.iter().map(|a| a.key).collect();
            let x = if keys.contains(&AxisKey::Gpus) {
                Some(AxisKey::Gpus)
            } else {
                keys.iter().rev().copied().find(|k| k.is_numeric())
            };
            match x {
                Some(x) => {
                    c.x = Some(x);
                    c.series = keys.iter().copied().filter(|k| *k != x).take(2).collect();
                    c.log_x = matches!(
                        x,
                        AxisKey::Gpus
                            | AxisKey::Domain
                            | AxisKey::GlobalBatch
                            | AxisKey::SeqLen
                            | AxisKey::Accum
                            | AxisKey::Param(_)
                    );
                    c.log_y = c.log_x;
                }
                None => c.kind = ChartKind::Table,
            }
        }
    }
    c
}

/// The chart settings from the query, over the defaults of the spec (and the panel's view).
pub fn chart(q: &Query, spec: &SweepSpec, view: Option<&View>) -> Chart {
    let mut c = default_chart(spec, view);
    let axes: Vec<AxisKey> = spec.axes.iter().map(|a| a.key).collect();
    let axis = |k: &str| q.get(&format!("{CHART_PREFIX}{k}")).and_then(|v| AxisKey::parse(v).ok());
    match q.get("c.kind") {
        Some("line") => c.kind = ChartKind::Line,
        Some("heatmap") => c.kind = ChartKind::Heatmap,
        Some("table") => c.kind = ChartKind::Table,
        _ => {}
    }
    if let Some(x) = axis("x") {
        c.x = Some(x);
    }
    if let Some(y) = axis("y") {
        c.y = Some(y);
    }
    if let Some(s) = q.get("c.series") {
        c.series = s.split(',').filter_map(|k| AxisKey::parse(k).ok()).collect();
    }
    if let Some(m) = q.get("c.metric").and_then(|m| Metric::parse(m).ok()) {
        c.metric = m;
    }
    if let Some(v) = q.get("c.logx") {
        c.log_x = v == "1";
    }
    if let Some(v) = q.get("c.logy") {
        c.log_y = v == "1";
    }
    c.breakdown_series = q.get("c.bs").map(str::to_string);
    if let Some(v) = q.get("c.eff") {
        c.efficiency = v == "1";
    }
    if q.get("c.bd") == Some("memory") {
        c.breakdown = StudyBreakdown::Memory;
    }
    c.at =
        q.0.iter()
            .filter_map(|(k, v)| k.strip_prefix(AT_PREFIX).and_then(|a| AxisKey::parse(a).ok()).map(|a| (a, v.clone())))
            .collect();
    // Keep only axes of this sweep, each in one role.
    c.x = c.x.filter(|x| axes.contains(x));
    c.y = c.y.filter(|y| axes.contains(y) && Some(*y) != c.x);
    c.series.retain(|s| axes.contains(s) && Some(*s) != c.x);
    c.series.dedup();
    if c.kind == ChartKind::Heatmap {
        c.series.clear();
        if c.x.is_none() || c.y.is_none() {
            let (x0, y0) = (c.x, c.y);
            let mut free = axes.iter().copied().filter(|a| Some(*a) != x0 && Some(*a) != y0);
            c.x = x0.or_else(|| free.next());
            c.y = y0.or_else(|| free.next());
        }
        if c.x.is_none() || c.y.is_none() {
            c.kind = ChartKind::Line;
        }
    }
    if c.kind == ChartKind::Line && c.x.is_none() {
        c.x = axes.iter().rev().copied().find(|k| k.is_numeric());
        if c.x.is_none() {
            c.kind = ChartKind::Table;
        }
    }
    c
}

/// Writes one chart setting (`key` without the `c.` prefix).
pub fn set_chart(q: &mut Query, key: &str, value: &str) {
    q.set(&format!("{CHART_PREFIX}{key}"), value);
}

/// Writes the value shown of an axis that is not drawn.
pub fn set_at(q: &mut Query, axis: AxisKey, value: &str) {
    q.set(&format!("{AT_PREFIX}{}", axis.name()), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_sweep_is_valid_and_every_sweep_key_round_trips() {
        let t = default_text();
        assert!(t.to_spec(None, None).is_ok(), "{:?}", t.to_spec(None, None));
        let full = SweepText {
            model: "gpt3_1T".into(),
            system: "nvidia_gb200_nvl72,scale_out=50".into(),
            strategy: Some("1d,2d-seqp".into()),
            gpus: Some("2304".into()),
            nvlink: Some("72".into()),
            precision: Some("bf16".into()),
            global_batch: Some("4096".into()),
            per_device_batch: None,
            fix: Some("tp=8".into()),
            mode: None,
            ext: None,
            axes: vec!["gpus=72..9216".into(), "nvlink=8,72".into()],
        };
        let mut q = Query::default();
        write_custom(&mut q, &full);
        let back = Query::parse(&q.to_search());
        assert_eq!(custom_text(&back), full);
        assert_eq!(back.get("s.domain"), Some("72"));
        // The old spelling of the domain key is read.
        let old = Query::parse("?s.model=gpt3&s.system=B200&s.nvlink=64&ax.gpus=8..64");
        assert_eq!(custom_text(&old).nvlink.as_deref(), Some("64"));
        // Mode and switches go to the page-wide keys.
        let mut q = Query::default();
        write_custom(&mut q, &SweepText { mode: Some("extended".into()), ext: Some("recompute=full".into()), ..full });
        assert_eq!((q.get("mode"), q.get("ext")), (Some("extended"), Some("recompute=full")));
    }

    #[test]
    fn typed_counts_and_user_entries_reach_core() {
        let t = SweepText {
            gpus: Some("2k".into()),
            global_batch: Some("4k".into()),
            axes: vec!["gpus=1k..16k".into(), "hbm_capacity=x0.5,x1".into(), "precision=bf16,fp8".into()],
            ..default_text()
        };
        let c = for_core(&t);
        assert_eq!((c.gpus.as_deref(), c.global_batch.as_deref()), (Some("2000"), Some("4000")));
        assert_eq!(c.axes, ["gpus=1000..16000", "hbm_capacity=x0.5,x1", "precision=bf16,fp8"]);
        let mut mine = fmperf_core::catalog::find_system("nvidia_h100_sxm5_80gb").unwrap().clone();
        mine.id = "my-pod".into();
        let user = UserEntries { models: Vec::new(), systems: vec![mine] };
        let t = SweepText { system: "my-pod,scale_out=50".into(), axes: vec!["gpus=64,128".into()], ..default_text() };
        let (m, s) = user_refs(&t, &user);
        assert!(m.is_none() && matches!(s, Some(SystemRef::Inline(_))));
        let spec = t.to_spec(m, s).unwrap();
        assert_eq!(spec.mapping.scale_out_gbps, Some(50.0));
    }

    #[test]
    fn unknown_presets_and_panels_are_named() {
        assert_eq!(unknown_preset(&Query::parse("?preset=strong-scaling&panel=gpt3_1T")), None);
        assert_eq!(unknown_preset(&Query::default()), None);
        let m = unknown_preset(&Query::parse("?preset=nope&panel=x")).unwrap();
        assert!(m.contains("“nope”") && m.contains("strong-scaling"), "{m}");
        let m = unknown_preset(&Query::parse("?preset=strong-scaling&panel=zzz")).unwrap();
        assert!(m.contains("“zzz”") && m.contains("gpt3_1T"), "{m}");
    }

    #[test]
    fn chart_keys_round_trip() {
        let t = SweepText { axes: vec!["gpus=8..64".into(), "nvlink=4,8".into()], ..default_text() };
        let spec = t.to_spec(None, None).unwrap();
        let mut q = Query::default();
        for (k, v) in [
            ("kind", "line"),
            ("x", "gpus"),
            ("series", "nvlink"),
            ("metric", "days"),
            ("logx", "1"),
            ("logy", "0"),
            ("eff", "1"),
            ("bd", "memory"),
            ("bs", "nvlink 8"),
        ] {
            set_chart(&mut q, k, v);
        }
        let c = chart(&Query::parse(&q.to_search()), &spec, None);
        assert_eq!(c.kind, ChartKind::Line);
        assert_eq!(c.x, Some(AxisKey::Gpus));
        assert_eq!(c.series.len(), 1);
        assert!(c.log_x && !c.log_y && c.efficiency);
        assert_eq!(c.breakdown, StudyBreakdown::Memory);
        assert_eq!(c.breakdown_series.as_deref(), Some("nvlink 8"));
        clear_chart(&mut q);
        assert!(q.0.is_empty());
        q.set(mode::MODE_KEY, "extended");
        write_preset(&mut q, "strong-scaling", "gpt3_1T");
        assert!(matches!(source(&q), SweepSource::Preset(..)));
        // The panel's own mode applies (the paper's preset is the published model).
        assert_eq!(q.get(mode::MODE_KEY), None);
    }
}
