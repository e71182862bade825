//! How a sweep's points are arranged for drawing: which axis is x, which are the series (lines)
//! or the heat map's rows, the value shown of every other axis, and the data each chart draws
//! (lines, heat map cells, stacked breakdowns). No drawing here: `src/pages/studies/charts.rs`
//! turns these into SVG charts.

use fmperf_chart::heatmap::HeatCell;
use fmperf_core::resolve::sweep_axis::{AxisKey, AxisValue};
use fmperf_core::sweep::{Metric, PointResult, Status, SweepResult};
use fmperf_core::vocab::{MemoryPart, TimePart};

use crate::studies::{Chart, ChartKind, StudyBreakdown};

/// How the points are arranged for drawing: axis positions of x, y and the series, and the value
/// shown of every other axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrangement {
    /// Axis keys of the sweep, in order.
    pub axes: Vec<AxisKey>,
    /// Position of the x axis.
    pub x: Option<usize>,
    /// Position of the heat map's rows.
    pub y: Option<usize>,
    /// Positions of the axes that group the points: the series of a line chart, the rows of a
    /// heat map.
    pub series: Vec<usize>,
    /// `(position, value)` of every other axis.
    pub fixed: Vec<(usize, String)>,
}

impl Arrangement {
    /// The arrangement of `chart` over the sweep of `r` (an axis with no chosen value shows its
    /// first value).
    pub fn new(r: &SweepResult, chart: &Chart) -> Arrangement {
        let axes: Vec<AxisKey> = r.spec.axes.iter().map(|a| a.key).collect();
        let pos = |k: AxisKey| axes.iter().position(|a| *a == k);
        let x = chart.x.and_then(pos);
        let y = if chart.kind == ChartKind::Heatmap { chart.y.and_then(pos) } else { None };
        // Heat maps group by row (the breakdown shows one row at a time).
        let series: Vec<usize> = match chart.kind {
            ChartKind::Line => chart.series.iter().filter_map(|k| pos(*k)).collect(),
            ChartKind::Heatmap => y.into_iter().collect(),
            ChartKind::Table => Vec::new(),
        };
        let fixed = (0..axes.len())
            .filter(|i| Some(*i) != x && Some(*i) != y && !series.contains(i))
            .map(|i| {
                let values = &r.spec.axes[i].values;
                let chosen = chart
                    .at
                    .iter()
                    .find(|(k, _)| *k == axes[i])
                    .map(|(_, v)| v.clone())
                    .filter(|v| values.iter().any(|x| x.to_string() == *v))
                    .unwrap_or_else(|| values[0].to_string());
                (i, chosen)
            })
            .collect();
        Arrangement { axes, x, y, series, fixed }
    }

    /// Whether `p` has the shown value of every fixed axis.
    pub fn shows(&self, p: &PointResult) -> bool {
        self.fixed.iter().all(|(i, v)| p.values.get(*i).is_some_and(|x| x.to_string() == *v))
    }

    /// The name of `p`'s series (`A100 · nvlink 4`), empty without series axes.
    pub fn series_name(&self, p: &PointResult) -> String {
        self.series
            .iter()
            .map(|&i| {
                let v = &p.values[i];
                match v {
                    AxisValue::Name(_) => value_name(self.axes[i], v),
                    AxisValue::Precision(_) | AxisValue::Strategy(_) => v.to_string(),
                    _ => format!("{} {v}", self.axes[i].name()),
                }
            })
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// The points shown, grouped by series in order of first appearance.
    pub fn groups<'a>(&self, r: &'a SweepResult) -> Vec<(String, Vec<&'a PointResult>)> {
        let mut out: Vec<(String, Vec<&PointResult>)> = Vec::new();
        for p in r.points.iter().filter(|p| self.shows(p)) {
            let name = self.series_name(p);
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, list)) => list.push(p),
                None => out.push((name, vec![p])),
            }
        }
        out
    }
}

/// The name a reader knows an axis value by: a catalog system's or model's name for its id
/// (`NVIDIA H100 SXM5 80GB` for `nvidia_h100_sxm5_80gb`; the user's own entries and unknown ids
/// as written), else the value as text.
pub fn value_name(key: AxisKey, v: &AxisValue) -> String {
    let AxisValue::Name(id) = v else { return v.to_string() };
    let name = match key {
        AxisKey::System => fmperf_core::catalog::find_system(id).ok().map(|s| s.name.clone()),
        AxisKey::Model => fmperf_core::catalog::find_model(id).ok().map(|m| m.name.clone()),
        _ => None,
    };
    name.filter(|n| !n.trim().is_empty()).unwrap_or_else(|| id.clone())
}

/// The title of a custom sweep: its model on its system and the mode (`Llama 3 70B on NVIDIA
/// H100 SXM5 80GB — extended mode`); a model or system axis is said as such (`3 systems`)
/// instead of naming the base scenario's one.
pub fn sweep_title(r: &SweepResult, model: &str, system: &str) -> String {
    let part = |key: AxisKey, base: &str, what: &str| match r.spec.axes.iter().find(|a| a.key == key) {
        Some(a) => format!("{} {what}", a.values.len()),
        None => value_name(key, &AxisValue::Name(system_id_of(base))),
    };
    format!(
        "{} on {} — {}",
        part(AxisKey::Model, model, "models"),
        part(AxisKey::System, system, "systems"),
        r.spec.mode.label()
    )
}

/// The id of a system spec (`nvidia_gb200_nvl72,domain=72` → `nvidia_gb200_nvl72`).
fn system_id_of(spec: &str) -> String {
    crate::system_spec::id_of(spec).to_string()
}

/// Label of an axis with its unit; `× system value` for factor axes.
pub fn axis_label(r: &SweepResult, key: AxisKey) -> String {
    let factors = r
        .spec
        .axes
        .iter()
        .find(|a| a.key == key)
        .is_some_and(|a| a.values.iter().any(|v| matches!(v, AxisValue::Factor(_))));
    if factors { format!("{} [× the system's value]", key.name()) } else { key.label() }
}

/// Scaling efficiency along a line of `(devices, value)`: per-device value over the per-device
/// value at the smallest device count with a value.
pub fn efficiency(pts: Vec<(f64, Option<f64>)>) -> Vec<(f64, Option<f64>)> {
    let base = pts.iter().find_map(|(n, v)| v.map(|v| v / n));
    pts.into_iter().map(|(n, v)| (n, v.zip(base).map(|(v, b)| v / n / b))).collect()
}

/// One line of a line chart: its name and `(x, value)` points (`None`: no value there).
pub type Line = (String, Vec<(f64, Option<f64>)>);

/// The line chart's lines, and the names of the series without any value (not drawn).
pub fn line_series(r: &SweepResult, a: &Arrangement, metric: Metric, eff: bool) -> (Vec<Line>, Vec<String>) {
    let Some(x) = a.x else { return (Vec::new(), Vec::new()) };
    let mut empty = Vec::new();
    let mut drawn = Vec::new();
    for (name, points) in a.groups(r) {
        let pts: Vec<(f64, Option<f64>)> =
            points.iter().filter_map(|p| p.values[x].number().map(|xv| (xv, metric.value(p)))).collect();
        let pts = if eff { efficiency(pts) } else { pts };
        let name = if name.is_empty() { metric.label() } else { name };
        if pts.iter().all(|(_, y)| y.is_none()) {
            empty.push(name);
        } else {
            drawn.push((name, pts));
        }
    }
    (drawn, empty)
}

/// A heat map's labels and cells (rows = y values, columns = x values).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HeatCells {
    /// Column labels (x values).
    pub x_labels: Vec<String>,
    /// Row labels (y values).
    pub y_labels: Vec<String>,
    /// `cells[row][column]`.
    pub cells: Vec<Vec<HeatCell>>,
}

/// The heat map's cells: rows = y values, columns = x values; out-of-memory cells infeasible
/// (hatched); and the best cell `(column, row)`.
pub fn heat_data(r: &SweepResult, a: &Arrangement, metric: Metric) -> (HeatCells, Option<(usize, usize)>) {
    let (Some(x), Some(y)) = (a.x, a.y) else { return (HeatCells::default(), None) };
    let xs: Vec<String> = r.spec.axes[x].values.iter().map(|v| v.to_string()).collect();
    let ys: Vec<String> = r.spec.axes[y].values.iter().map(|v| v.to_string()).collect();
    let (x_labels, y_labels) = (absolute_labels(r, x, &xs), absolute_labels(r, y, &ys));
    let mut cells = vec![vec![HeatCell::Missing; xs.len()]; ys.len()];
    let mut best: Option<(f64, usize, usize)> = None;
    for p in r.points.iter().filter(|p| a.shows(p)) {
        let (Some(cx), Some(ry)) = (
            xs.iter().position(|v| *v == p.values[x].to_string()),
            ys.iter().position(|v| *v == p.values[y].to_string()),
        ) else {
            continue;
        };
        cells[ry][cx] = match (metric.value(p), p.status) {
            (Some(v), _) => {
                let better = |b: f64| if metric.lower_is_better() { v < b } else { v > b };
                if best.is_none_or(|(b, _, _)| better(b)) {
                    best = Some((v, cx, ry));
                }
                HeatCell::Value(v)
            }
            (None, Status::OutOfMemory) => HeatCell::Infeasible,
            _ => HeatCell::Missing,
        };
    }
    (HeatCells { x_labels, y_labels, cells }, best.map(|(_, c, r)| (c, r)))
}

/// The labels of axis `i`'s values (`texts`), with the absolute value next to each factor of a
/// system parameter (`x0.5 · 1,125 GB/s`), read from a point that has it.
fn absolute_labels(r: &SweepResult, i: usize, texts: &[String]) -> Vec<String> {
    let key = r.spec.axes[i].key;
    if matches!(key, AxisKey::System | AxisKey::Model) {
        return texts.iter().map(|t| value_name(key, &AxisValue::Name(t.clone()))).collect();
    }
    let AxisKey::Param(param) = key else { return texts.to_vec() };
    texts
        .iter()
        .map(|t| {
            let abs = r
                .points
                .iter()
                .find(|p| p.values[i].to_string() == *t && matches!(p.values[i], AxisValue::Factor(_)))
                .and_then(|p| p.inputs.as_ref())
                .map(|inp| param.get(&inp.params));
            match abs {
                Some(v) if v.is_finite() => {
                    format!("{t} · {} {}", fmperf_chart::format::format_sig(v, 3), param.unit())
                }
                _ => t.clone(),
            }
        })
        .collect()
}

/// One stacked bar: its label and its components.
pub type StackedBar = (String, Vec<f64>);

/// The stacked breakdown along x of one series: the component names, and per x value the time
/// components [s] or memory components [GB].
pub fn breakdown_bars(
    r: &SweepResult,
    a: &Arrangement,
    kind: StudyBreakdown,
    series: &str,
) -> (Vec<String>, Vec<StackedBar>) {
    let Some(x) = a.x else { return (Vec::new(), Vec::new()) };
    // The time parts the sweep has (a dense model's leave out the EP all-to-all).
    let metrics: Vec<Metric> = match kind {
        StudyBreakdown::Time => {
            TimePart::shown(r.points.iter().filter_map(|p| p.best.as_ref()).map(|b| &b.ranked.totals))
                .into_iter()
                .map(Metric::Time)
                .collect()
        }
        StudyBreakdown::Memory => MemoryPart::ALL.iter().map(|p| Metric::Memory(*p)).collect(),
    };
    let names = metrics.iter().map(|m| m.label().split(" [").next().unwrap_or("").to_string()).collect();
    let groups = a.groups(r);
    let Some((_, points)) = groups.iter().find(|(n, _)| n == series).or(groups.first()) else {
        return (names, Vec::new());
    };
    let bars = points
        .iter()
        .filter(|p| p.best.is_some())
        .map(|p| (p.values[x].to_string(), metrics.iter().map(|m| m.value(p).unwrap_or(0.0)).collect()))
        .collect();
    (names, bars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;
    use crate::studies::{chart, default_text};
    use fmperf_core::sweep::{Sweep, SweepText};

    fn run(axes: &[&str]) -> SweepResult {
        let t = SweepText {
            model: "gpt3".into(),
            system: "B200".into(),
            global_batch: Some("1024".into()),
            axes: axes.iter().map(|a| a.to_string()).collect(),
            ..default_text()
        };
        Sweep::new(t.to_spec(None, None).unwrap()).unwrap().finish()
    }

    #[test]
    fn heat_maps_label_factors_with_their_absolute_values() {
        let r = run(&["hbm_bandwidth=x0.5,x1", "gpus=64,128"]);
        let q = Query::parse("?c.kind=heatmap&c.x=gpus&c.y=hbm_bandwidth");
        let c = chart(&q, &r.spec, None);
        let a = Arrangement::new(&r, &c);
        let (cells, _) = heat_data(&r, &a, Metric::Days);
        assert_eq!(cells.x_labels, ["64", "128"]);
        assert_eq!(cells.y_labels.len(), 2);
        for l in &cells.y_labels {
            assert!(l.starts_with('x') && l.contains("GB/s"), "{l}");
        }
        assert_eq!(cells.cells.len(), 2);
    }

    #[test]
    fn system_axes_are_named_in_legends_and_titles() {
        // Issue 29: legends showed raw ids and the title named one system with system an axis.
        let r = run(&["system=nvidia_h100_sxm5_80gb,nvidia_gb200_nvl72", "gpus=64,128"]);
        let q = Query::parse("?c.kind=line&c.x=gpus&c.series=system");
        let c = chart(&q, &r.spec, None);
        let a = Arrangement::new(&r, &c);
        let (lines, empty) = line_series(&r, &a, Metric::Throughput, false);
        let names: Vec<String> = lines.into_iter().map(|l| l.0).chain(empty).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        for n in &names {
            assert!(!n.contains('_') && n.contains("NVIDIA"), "a name, not an id: {n}");
        }
        let title = sweep_title(&r, "gpt3", "B200");
        assert!(title.contains("2 systems") && !title.contains("B200"), "{title}");
        let one = run(&["gpus=64,128"]);
        assert!(!sweep_title(&one, "gpt3", "B200").contains("systems"));
    }

    #[test]
    fn lines_group_by_series_and_efficiency_is_relative_to_the_first_point() {
        let r = run(&["domain=4,8", "gpus=64,128"]);
        let c = chart(&Query::default(), &r.spec, None);
        let a = Arrangement::new(&r, &c);
        let (lines, empty) = line_series(&r, &a, Metric::Throughput, false);
        assert_eq!(lines.len() + empty.len(), 2);
        for (name, pts) in &lines {
            assert!(name.starts_with("domain"), "{name}");
            assert_eq!(pts.iter().map(|p| p.0).collect::<Vec<_>>(), [64.0, 128.0]);
        }
        let e = efficiency(vec![(64.0, Some(64.0)), (128.0, Some(96.0))]);
        assert_eq!(e, vec![(64.0, Some(1.0)), (128.0, Some(0.75))]);
    }
}
