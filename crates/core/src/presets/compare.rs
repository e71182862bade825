//! Published figures next to the model's prediction: a value at one point, a ratio of two points,
//! a scaling efficiency, or the smallest value of an axis with a feasible configuration.

use serde::Deserialize;

use crate::sweep::{Metric, PointResult, SweepResult};

use crate::resolve::sweep_axis::AxisKey;
use crate::{Error, Strategy};

/// Which points of a sweep a comparison reads: `axis=value` pairs separated by `;`
/// (`system=A100;nvlink=4;gpus=512`), values written as in the axis text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector(pub Vec<(AxisKey, String)>);

impl Selector {
    /// Parses `key=value;key=value` (empty: every point).
    pub fn parse(text: &str) -> Result<Selector, Error> {
        let mut out = Vec::new();
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| Error::invalid("at", part, "must be written axis=value; axis=value"))?;
            out.push((AxisKey::parse(k)?, v.trim().to_string()));
        }
        Ok(Selector(out))
    }

    /// Whether point `p` of a sweep over `axes` has every selected value.
    pub fn matches(&self, axes: &[AxisKey], p: &PointResult) -> bool {
        self.0.iter().all(|(k, v)| {
            axes.iter().position(|a| a == k).is_some_and(|i| p.values.get(i).is_some_and(|x| x.to_string() == *v))
        })
    }

    /// The points of `r` that match, in sweep order.
    pub fn select<'a>(&'a self, r: &'a SweepResult) -> impl Iterator<Item = &'a PointResult> + 'a {
        let axes: Vec<AxisKey> = r.spec.axes.iter().map(|a| a.key).collect();
        r.points.iter().filter(move |p| self.matches(&axes, p))
    }

    /// The first matching point.
    pub fn first<'a>(&self, r: &'a SweepResult) -> Option<&'a PointResult> {
        let axes: Vec<AxisKey> = r.spec.axes.iter().map(|a| a.key).collect();
        r.points.iter().find(|p| self.matches(&axes, p))
    }
}

/// How a comparison turns points into one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareKind {
    /// The metric at `at`.
    Value,
    /// The metric at `at` divided by the metric at `over`.
    Ratio,
    /// Per-device metric at `at` over per-device metric at `over` (scaling efficiency).
    Efficiency,
    /// The smallest value of `axis` among the points matching `at` where the metric exists.
    FirstFeasible,
}

/// A comparison as written in the preset file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComparisonDef {
    /// What is compared, in words.
    pub label: String,
    /// How (default `value`).
    #[serde(default = "default_kind")]
    pub kind: CompareKind,
    /// Selector of the point (or of the points, for `first_feasible`).
    pub at: String,
    /// Selector of the reference point of a ratio or efficiency.
    #[serde(default)]
    pub over: Option<String>,
    /// The axis of `first_feasible`.
    #[serde(default)]
    pub axis: Option<String>,
    /// Metric key (see [`Metric::key`]; default `days`).
    #[serde(default = "default_metric")]
    pub metric: String,
    /// The published value (`null`: the source says there is none, e.g. "never fits").
    pub value: Option<f64>,
    /// Decimals the source prints (the prediction must round to the same value when `reproduce`).
    #[serde(default)]
    pub decimals: u32,
    /// The winning strategy the source gives, if any.
    #[serde(default)]
    pub strategy: Option<String>,
    /// Where the value comes from.
    pub source: String,
    /// `true` when the source is the reference model itself (fmperf must reproduce it); `false`
    /// for measurements of real systems (the difference is shown, not asserted).
    #[serde(default)]
    pub reproduce: bool,
}

fn default_kind() -> CompareKind {
    CompareKind::Value
}

fn default_metric() -> String {
    "days".into()
}

/// A comparison ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The definition.
    pub def: ComparisonDef,
    /// Parsed `at`.
    pub at: Selector,
    /// Parsed `over`.
    pub over: Option<Selector>,
    /// Parsed `axis`.
    pub axis: Option<AxisKey>,
    /// Parsed `metric`.
    pub metric: Metric,
    /// Parsed `strategy`.
    pub strategy: Option<Strategy>,
}

/// The model's side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSide {
    /// The predicted value (`None`: the model has none, e.g. nothing fits or not expressible).
    pub predicted: Option<f64>,
    /// The winning strategy at `at`, for value comparisons.
    pub predicted_strategy: Option<Strategy>,
    /// Why there is no prediction, when there is none.
    pub why_none: Option<String>,
}

impl ModelSide {
    /// `predicted − published` and `predicted / published − 1`, when both exist.
    pub fn difference(&self, published: Option<f64>) -> Option<(f64, f64)> {
        let (p, q) = (self.predicted?, published?);
        Some((p - q, if q != 0.0 { p / q - 1.0 } else { f64::NAN }))
    }
}

impl Comparison {
    /// Parses a definition (errors name the field).
    pub fn new(def: ComparisonDef) -> Result<Comparison, Error> {
        let at = Selector::parse(&def.at)?;
        let over = def.over.as_deref().map(Selector::parse).transpose()?;
        let axis = def.axis.as_deref().map(AxisKey::parse).transpose()?;
        let metric = Metric::parse(&def.metric)?;
        let strategy = def.strategy.as_deref().map(str::parse).transpose()?;
        match def.kind {
            CompareKind::Ratio | CompareKind::Efficiency if over.is_none() => {
                return Err(Error::invalid("over", &def.label, "a ratio or efficiency needs `over`"));
            }
            CompareKind::FirstFeasible if axis.is_none() => {
                return Err(Error::invalid("axis", &def.label, "first_feasible needs `axis`"));
            }
            _ => {}
        }
        Ok(Comparison { def, at, over, axis, metric, strategy })
    }

    /// The model's value for this comparison in `r`.
    pub fn evaluate(&self, r: &SweepResult) -> ModelSide {
        let none = |why: String| ModelSide { predicted: None, predicted_strategy: None, why_none: Some(why) };
        let read = |sel: &Selector| -> Result<(&PointResult, f64), NoValue> {
            let p = sel.first(r).ok_or_else(|| NoValue::NoPoint(describe(sel)))?;
            match self.metric.value(p) {
                Some(v) => Ok((p, v)),
                None => Err(NoValue::AtPoint(p.reason.clone())),
            }
        };
        match self.def.kind {
            CompareKind::Value => match read(&self.at) {
                Ok((p, v)) => ModelSide {
                    predicted: Some(v),
                    predicted_strategy: p.best.as_ref().map(|b| b.strategy),
                    why_none: None,
                },
                Err(why) => none(why.to_string()),
            },
            CompareKind::Ratio | CompareKind::Efficiency => {
                let Some(over) = &self.over else { return none("no reference point".into()) };
                match (read(&self.at), read(over)) {
                    (Ok((pa, a)), Ok((pb, b))) => {
                        let v = if self.def.kind == CompareKind::Ratio {
                            a / b
                        } else {
                            (a / pa.labels.devices as f64) / (b / pb.labels.devices as f64)
                        };
                        ModelSide { predicted: Some(v), predicted_strategy: None, why_none: None }
                    }
                    (Err(why), _) | (_, Err(why)) => none(why.to_string()),
                }
            }
            CompareKind::FirstFeasible => {
                let axes: Vec<AxisKey> = r.spec.axes.iter().map(|a| a.key).collect();
                let Some(pos) = self.axis.and_then(|k| axes.iter().position(|a| *a == k)) else {
                    return none("the axis is not swept".into());
                };
                let first = self
                    .at
                    .select(r)
                    .filter(|p| self.metric.value(p).is_some())
                    .filter_map(|p| p.values.get(pos).and_then(|v| v.number()))
                    .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
                match first {
                    Some(v) => ModelSide { predicted: Some(v), predicted_strategy: None, why_none: None },
                    None => none("no point of the sweep has a feasible configuration".into()),
                }
            }
        }
    }

    /// Whether the prediction of `r` must reproduce the published value: the source is the
    /// reference model itself and `r` ran in reference mode (in extended mode the difference is
    /// what extended mode corrects, not an error).
    pub fn must_reproduce(&self, r: &SweepResult) -> bool {
        self.def.reproduce && r.spec.mode.kind().is_published_model()
    }

    /// Whether a prediction reproduces the published value at its printed precision (and the
    /// winning strategy, when one is published). Both "none" counts as a match.
    pub fn reproduced(&self, o: &ModelSide) -> bool {
        let value_ok = match (o.predicted, self.def.value) {
            (None, None) => true,
            (Some(p), Some(q)) => {
                let half = 0.5 * 10f64.powi(-(self.def.decimals as i32));
                (p - q).abs() <= half * (1.0 + 1e-9)
            }
            _ => false,
        };
        value_ok && self.strategy.is_none_or(|s| o.predicted_strategy == Some(s))
    }
}

/// Why a comparison reads no value at a selector.
#[derive(Debug, Clone, PartialEq)]
enum NoValue {
    /// No point of the sweep matches the selector (described `key=value, …`).
    NoPoint(String),
    /// The point has no value of the metric, with the point's reason when it gives one.
    AtPoint(Option<String>),
}

impl std::fmt::Display for NoValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoValue::NoPoint(sel) => write!(f, "no point matches {sel}"),
            NoValue::AtPoint(reason) => f.write_str(reason.as_deref().unwrap_or("no value")),
        }
    }
}

fn describe(sel: &Selector) -> String {
    sel.0.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}
