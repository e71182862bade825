//! Sweep results as CSV and JSON Lines, written the same way by the page and the CLI (full
//! precision: every float is written in its shortest exact form, so both agree to the bit).
//!
//! Both formats put one point per line in sweep order, so the outputs of the shards of a sweep
//! concatenate to the output of the whole sweep: the CSV header is written once, by the first
//! shard (index 0); JSON Lines has no header.
//!
//! Every line says which mode priced it: the CSV's last columns `mode` and `switches` (extended
//! mode's switches that differ from the defaults, `key=value,…`), the JSON's `mode` and, in
//! extended mode, `switches` (every switch with its value). A value a mode does not read (the
//! vector rate in extended mode) is left empty / `null`.

use serde_json::{Map, Value, json};

use super::metric::Metric;
use super::result::{Best, PointResult};
use crate::Strategy;
use crate::resolve::SystemParam;
use crate::resolve::sweep_axis::{Axis, AxisKey, AxisValue};
use crate::search::ResultRow;
use crate::vocab::{MemoryPart, TimePart};

/// The unit of an axis's values, for column headers (`None`: no unit).
pub fn axis_unit(key: AxisKey) -> Option<&'static str> {
    match key {
        AxisKey::Gpus | AxisKey::Domain | AxisKey::Tp | AxisKey::Tp1 | AxisKey::Tp2 | AxisKey::Pp | AxisKey::Dp => {
            Some("devices")
        }
        AxisKey::Param(p) => Some(p.unit()),
        AxisKey::SeqLen => Some("tokens"),
        AxisKey::GlobalBatch | AxisKey::Mbs => Some("samples"),
        AxisKey::Accum => Some("micro-batches"),
        AxisKey::Sparsity => Some("fraction"),
        _ => None,
    }
}

/// The unit of an axis's values as written: its unit, `× the system's value` when every value is
/// a factor, or both when they are mixed (`None`: no unit).
pub fn axis_values_unit(a: &Axis) -> Option<String> {
    let factors = a.values.iter().filter(|v| matches!(v, AxisValue::Factor(_))).count();
    let unit = axis_unit(a.key)?;
    Some(if factors == 0 {
        unit.to_string()
    } else if factors == a.values.len() {
        "× the system's value".to_string()
    } else {
        format!("{unit}, or xfactor")
    })
}

fn axis_header(a: &Axis) -> String {
    match axis_values_unit(a) {
        Some(u) => format!("axis {} [{u}]", a.key.name()),
        None => format!("axis {}", a.key.name()),
    }
}

/// The CSV columns after the axis columns.
const POINT_COLUMNS: [&str; 13] = [
    "model",
    "system",
    "devices",
    "domain [devices]",
    "precision",
    "seq_len [tokens]",
    "global_batch [samples]",
    "matrix [TFLOP/s]",
    "vector [TFLOP/s]",
    "hbm_capacity [GB]",
    "hbm_bandwidth [GB/s]",
    "scale_up [GB/s]",
    "scale_out [GB/s]",
];

/// The headline metrics written for every point, in column order.
const HEADLINE: [Metric; 8] = Metric::HEADLINE;

/// The CSV header line (with `\n`) of a sweep with `axes`.
pub fn csv_header(axes: &[Axis]) -> String {
    let mut cols: Vec<String> = vec!["index".into()];
    cols.extend(axes.iter().map(axis_header));
    cols.extend(POINT_COLUMNS.iter().map(|s| s.to_string()));
    cols.push("status".into());
    cols.push("strategy".into());
    cols.extend(HEADLINE.iter().map(|m| m.label()));
    cols.extend(ResultRow::DIMS.iter().map(|s| s.to_string()));
    cols.extend(TimePart::ALL.iter().map(|p| Metric::Time(*p).label()));
    cols.extend(MemoryPart::ALL.iter().map(|p| Metric::Memory(*p).label()));
    cols.extend(Strategy::ALL.iter().map(|s| Metric::StrategyDays(*s).label()));
    cols.push("candidates".into());
    cols.push("feasible".into());
    cols.push("reason".into());
    cols.push("mode".into());
    cols.push("switches".into());
    let mut line = cols.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

/// One CSV line (with `\n`) for a point.
pub fn csv_row(p: &PointResult) -> String {
    let num = |v: Option<f64>| v.filter(|x| x.is_finite()).map(|x| x.to_string()).unwrap_or_default();
    let int = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    let mut cells: Vec<String> = vec![p.index.to_string()];
    cells.extend(p.values.iter().map(|v| v.to_string()));
    let i = p.inputs.as_ref();
    cells.push(p.labels.model_id.clone());
    cells.push(p.labels.system_id.clone());
    cells.push(p.labels.devices.to_string());
    cells.push(int(i.map(|i| i.params.domain_size)));
    cells.push(i.map(|i| i.precision.as_str().to_string()).unwrap_or_default());
    cells.push(int(i.map(|i| i.shape.l)));
    cells.push(int(i.map(|i| i.global_batch)));
    for param in SystemParam::ALL {
        cells.push(num(i.and_then(|i| i.system_value(param))));
    }
    cells.push(p.status.as_str().into());
    let best = p.best.as_ref();
    cells.push(best.map(|b| b.strategy.as_str().to_string()).unwrap_or_default());
    for m in HEADLINE {
        cells.push(num(m.value(p)));
    }
    match best {
        Some(b) => cells.extend(row_of(b, p).dim_cells()),
        None => cells.extend(ResultRow::DIMS.iter().map(|_| String::new())),
    }
    for part in TimePart::ALL {
        cells.push(num(Metric::Time(part).value(p)));
    }
    for part in MemoryPart::ALL {
        cells.push(num(Metric::Memory(part).value(p)));
    }
    for s in Strategy::ALL {
        cells.push(num(p.strategy_days(s)));
    }
    cells.push(p.candidates().to_string());
    cells.push(p.feasible().to_string());
    cells.push(p.reason.clone().unwrap_or_default());
    cells.push(p.mode.as_str().to_string());
    cells.push(p.mode.ext_text().unwrap_or_default());
    let mut line = cells.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

/// The result row of a point's best configuration (the one candidate → columns mapping,
/// [`ResultRow`]).
fn row_of(b: &Best, p: &PointResult) -> ResultRow {
    ResultRow::of(&b.ranked, p.inputs.as_ref().map(|i| i.global_batch).unwrap_or(0))
}

/// Quotes a CSV cell when it holds a comma, quote or line break.
pub fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// An axis value as JSON: counts and numbers as numbers, factors as `"x0.5"`, names as strings.
fn axis_json(v: &AxisValue) -> Value {
    match v {
        AxisValue::Count(n) => json!(n),
        AxisValue::Absolute(x) | AxisValue::Fraction(x) => json!(x),
        other => json!(other.to_string()),
    }
}

/// The JSON object of a point (written as one line of JSON Lines by [`json_line`]).
pub fn point_json(axes: &[Axis], p: &PointResult) -> Value {
    let mut axis_values = Map::new();
    for (a, v) in axes.iter().zip(&p.values) {
        axis_values.insert(a.key.name().to_string(), axis_json(v));
    }
    let i = p.inputs.as_ref();
    let params = i.map(|i| {
        let mut m = Map::new();
        for param in SystemParam::ALL {
            m.insert(AxisKey::Param(param).name().to_string(), json!(i.system_value(param)));
        }
        Value::Object(m)
    });
    let best = p.best.as_ref().map(|b| {
        let mut headline = Map::new();
        headline.insert("strategy".into(), json!(b.strategy.as_str()));
        for m in HEADLINE.iter().chain(&Metric::COST) {
            headline.insert(m.key(), json!(m.value(p)));
        }
        let ints = |v: Vec<(&str, u64)>| {
            Value::Object(crate::sort::json_object(v.iter().map(|(k, x)| (k.to_string(), json!(x)))))
        };
        let row = row_of(b, p);
        headline.insert("config".into(), ints(row.config_pairs()));
        headline.insert("placement".into(), ints(row.placement_pairs()));
        let t = &b.ranked.totals;
        headline.insert(
            "time_s".into(),
            Value::Object(crate::sort::json_object(
                TimePart::ALL.iter().map(|x| (x.key().to_string(), json!(x.of(t)))),
            )),
        );
        headline.insert(
            "memory_gb".into(),
            Value::Object(crate::sort::json_object(
                MemoryPart::ALL.iter().map(|x| (x.key().to_string(), json!(x.of(t)))),
            )),
        );
        Value::Object(headline)
    });
    let per_strategy: Map<String, Value> = crate::sort::json_object(p.per_strategy.iter().map(|o| {
        let v = json!({
            "candidates": o.candidates,
            "feasible": o.feasible,
            "days": p.strategy_days(o.strategy),
            "throughput": o.best.as_ref().map(|r| r.throughput_samples_per_s),
            "min_mem_gb": o.min_mem_gb,
        });
        (o.strategy.as_str().to_string(), v)
    }));
    let mode = p.mode.to_json();
    json!({
        "index": p.index,
        "mode": mode["mode"],
        "switches": mode.get("switches"),
        "axes": axis_values,
        "model": p.labels.model_id,
        "system": p.labels.system_id,
        "devices": p.labels.devices,
        "domain_size": i.map(|i| i.params.domain_size),
        "domain": i.map(|i| i.params.domain_size),
        "precision": i.map(|i| i.precision.as_str()),
        "seq_len": i.map(|i| i.shape.l),
        "global_batch": i.map(|i| i.global_batch),
        "system_params": params,
        "status": p.status.as_str(),
        "reason": p.reason,
        "best": best,
        "per_strategy": per_strategy,
        "candidates": p.candidates(),
        "feasible": p.feasible(),
        "notes": i.map(|i| i.notes.clone()).unwrap_or_default(),
    })
}

/// One line of JSON Lines (with `\n`) for a point.
pub fn json_line(axes: &[Axis], p: &PointResult) -> String {
    let mut s = point_json(axes, p).to_string();
    s.push('\n');
    s
}

/// The whole CSV of `points` (header included when `header`).
pub fn to_csv(axes: &[Axis], points: &[PointResult], header: bool) -> String {
    let mut out = if header { csv_header(axes) } else { String::new() };
    for p in points {
        out.push_str(&csv_row(p));
    }
    out
}

/// The whole JSON Lines text of `points`.
pub fn to_json_lines(axes: &[Axis], points: &[PointResult]) -> String {
    points.iter().map(|p| json_line(axes, p)).collect()
}
