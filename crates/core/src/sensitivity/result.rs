//! A sensitivity's points, each feature's effect, their order (the largest saving first) and the
//! forms every output writes: JSON ([`SensitivityResult::to_json`]) and a flat table
//! ([`SensitivityResult::header`], [`SensitivityResult::rows`]) for text and CSV.

use serde_json::{Value, json};

use super::feature::Feature;
use super::run::Base;
use crate::explore::metrics::training_days;
use crate::run_cost::RunCost;
use crate::search::Ranked;
use crate::search::code::format_candidate;

/// Where a point stands.
#[derive(Debug, Clone, PartialEq)]
pub enum PointStatus {
    /// A configuration fits: the point has a best layout and training days.
    Fits,
    /// Nothing fits in memory: the leanest candidate's need and the capacity [GB].
    NothingFits {
        /// The least memory per device of any candidate [GB] (`None`: no candidate).
        min_mem_gb: Option<f64>,
        /// The device's memory at this point [GB].
        capacity_gb: f64,
    },
    /// The factor cannot apply to this system, or its search cannot run (why, in words).
    Impossible(String),
    /// Not searched yet.
    Pending,
}

impl PointStatus {
    /// `fits`, `does_not_fit`, `impossible` or `pending`.
    pub fn key(&self) -> &'static str {
        match self {
            PointStatus::Fits => "fits",
            PointStatus::NothingFits { .. } => "does_not_fit",
            PointStatus::Impossible(_) => "impossible",
            PointStatus::Pending => "pending",
        }
    }

    /// Why the point has no layout, in words (`None` when it fits or is pending).
    pub fn reason(&self) -> Option<String> {
        match self {
            PointStatus::NothingFits { min_mem_gb: Some(m), capacity_gb } => {
                Some(format!("nothing fits: the leanest layout needs {m:.1} GB of {capacity_gb:.1} GB"))
            }
            PointStatus::NothingFits { min_mem_gb: None, .. } => Some("no valid layout".to_string()),
            PointStatus::Impossible(why) => Some(why.clone()),
            _ => None,
        }
    }
}

/// One point: the baseline (`feature: None`, factor 1) or a feature at a factor.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The feature scaled (`None`: the baseline).
    pub feature: Option<Feature>,
    /// The factor [×].
    pub factor: f64,
    /// The feature's value at this point, in [`Feature::unit`] (`None` for the baseline).
    pub value: Option<f64>,
    /// Where the point stands.
    pub status: PointStatus,
    /// The fastest configuration that fits.
    pub best: Option<Ranked>,
    /// Days to train on the budget [days] (`None`: nothing fits).
    pub training_days: Option<f64>,
    /// Device-hours, energy and price of the whole run (`None`: nothing fits).
    pub cost: Option<RunCost>,
    /// Training days against the baseline's, `(days / baseline days − 1) × 100` [%]: negative is
    /// faster (`None` when either has no layout).
    pub change_pct: Option<f64>,
}

impl Point {
    /// A point of `base` (its change against the baseline is filled in by the result).
    pub fn new(
        base: &Base,
        feature: Option<Feature>,
        factor: f64,
        value: Option<f64>,
        status: PointStatus,
        best: Option<Ranked>,
    ) -> Point {
        let seq = base.seq_len();
        let days = best.map(|r| training_days(base.budget, seq, r.throughput_samples_per_s)).filter(|d| d.is_finite());
        let cost = best.and_then(|r| {
            let devices = r.candidate.n_gpus();
            RunCost::of(
                base.budget,
                seq,
                r.throughput_samples_per_s,
                devices,
                base.power.clone(),
                base.price_per_device_hour,
            )
            .ok()
        });
        Point { feature, factor, value, status, best, training_days: days, cost, change_pct: None }
    }

    /// The best layout in its text form (`1d.dp64.tp8.pp2.mbs1.nv8x1x1`).
    pub fn layout(&self) -> Option<String> {
        self.best.map(|r| format_candidate(&r.candidate))
    }

    /// The point as JSON: `factor`, `value`, `status`, `reason`, `training_days`, `change_pct`,
    /// `layout`, `throughput_samples_per_s`, `time_per_iteration_s`, `mem_gb`, `devices`,
    /// `device_hours`, `energy_mwh`, `cost_total` (absent figures are `null`).
    pub fn to_json(&self) -> Value {
        json!({
            "factor": self.factor,
            "value": self.value,
            "status": self.status.key(),
            "reason": self.status.reason(),
            "training_days": self.training_days,
            "change_pct": self.change_pct,
            "layout": self.layout(),
            "throughput_samples_per_s": self.best.map(|r| r.throughput_samples_per_s),
            "time_per_iteration_s": self.best.map(|r| r.time_per_iteration_s),
            "mem_gb": self.best.map(|r| r.mem_gb),
            "devices": self.best.map(|r| r.candidate.n_gpus()),
            "device_hours": self.cost.as_ref().map(|c| c.gpu_hours),
            "energy_mwh": self.cost.as_ref().and_then(|c| c.energy_mwh),
            "cost_total": self.cost.as_ref().and_then(|c| c.total),
        })
    }
}

/// One feature's points ([`super::FACTORS`] in order) and its effect.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureEffect {
    /// The feature.
    pub feature: Feature,
    /// Its value in the scenario, in [`Feature::unit`].
    pub base_value: f64,
    /// Its points: ×0.5, then ×2.
    pub points: Vec<Point>,
}

impl FeatureEffect {
    /// The fewest training days among its points [days] (`None`: no point has a layout).
    pub fn best_days(&self) -> Option<f64> {
        self.points.iter().filter_map(|p| p.training_days).reduce(f64::min)
    }

    /// The largest saving of training days against the baseline among its points [%] (positive:
    /// faster; `None` when no change can be computed).
    pub fn saving_pct(&self) -> Option<f64> {
        self.points.iter().filter_map(|p| p.change_pct).map(|c| -c).reduce(f64::max)
    }

    /// The point at `factor`, if listed.
    pub fn at(&self, factor: f64) -> Option<&Point> {
        self.points.iter().find(|p| p.factor == factor)
    }
}

/// The whole sensitivity: the baseline and the features, the largest saving first.
#[derive(Debug, Clone, PartialEq)]
pub struct SensitivityResult {
    /// The scenario as it is.
    pub baseline: Point,
    /// Every feature, sorted by effect: the fewest training days at either factor first (the same
    /// order as the largest saving when the baseline fits); features without any layout last;
    /// ties keep [`Feature::ALL`]'s order.
    pub features: Vec<FeatureEffect>,
}

impl SensitivityResult {
    /// Groups `points` (the baseline first, then each feature's factors in order) and sorts.
    pub fn new(base: &Base, mut points: Vec<Point>) -> SensitivityResult {
        let hardware = base.extended.as_ref().map(|e| &e.hardware);
        let baseline = if points.first().is_some_and(|p| p.feature.is_none()) {
            points.remove(0)
        } else {
            Point::new(base, None, 1.0, None, PointStatus::Pending, None)
        };
        for p in &mut points {
            p.change_pct = match (p.training_days, baseline.training_days) {
                (Some(d), Some(b)) if b > 0.0 => Some((d / b - 1.0) * 100.0),
                _ => None,
            };
        }
        let mut features: Vec<FeatureEffect> = Feature::ALL
            .iter()
            .map(|&f| FeatureEffect {
                feature: f,
                base_value: f.value(&base.system, hardware),
                points: points.iter().filter(|p| p.feature == Some(f)).cloned().collect(),
            })
            .collect();
        // Stable: ties keep the features' own order.
        crate::sort::sort_by(&mut features, |a, b| match (a.best_days(), b.best_days()) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        SensitivityResult { baseline, features }
    }

    /// The JSON object `{baseline, features: [{feature, label, unit, value, saving_pct,
    /// sweep_axis, points: [point…]}]}` (points as [`Point::to_json`]).
    pub fn to_json(&self) -> Value {
        let domain = self.domain();
        json!({
            "baseline": self.baseline.to_json(),
            "features": self.features.iter().map(|f| json!({
                "feature": f.feature.key(),
                "label": f.feature.label(),
                "unit": f.feature.unit(),
                "value": f.base_value,
                "saving_pct": f.saving_pct(),
                "sweep_axis": f.feature.sweep_axis(domain),
                "points": f.points.iter().map(Point::to_json).collect::<Vec<Value>>(),
            })).collect::<Vec<Value>>(),
        })
    }

    /// The scenario's domain size [devices].
    fn domain(&self) -> u64 {
        self.features.iter().find(|f| f.feature == Feature::Domain).map_or(1, |f| f.base_value as u64)
    }

    /// The flat table's header, units in the names.
    pub fn header() -> Vec<String> {
        [
            "feature",
            "factor",
            "value",
            "unit",
            "status",
            "training days [days]",
            "change vs baseline [%]",
            "best layout",
            "throughput [samples/s]",
            "iteration [s]",
            "memory [GB]",
            "devices",
            "device-hours [h]",
            "energy [MWh]",
            "reason",
        ]
        .map(String::from)
        .to_vec()
    }

    /// Whether the points carry money (the base had a price per device-hour).
    pub fn priced(&self) -> bool {
        self.baseline.cost.as_ref().is_some_and(|c| c.total.is_some())
    }

    /// [`SensitivityResult::header`], and when [`SensitivityResult::priced`] the whole run's cost
    /// and its change against the baseline, in the price's currency (the same devices and price at
    /// every point, so the change follows the days').
    pub fn columns(&self) -> Vec<String> {
        let mut h = Self::header();
        if self.priced() {
            h.extend(
                ["cost [price × device-hours]", "cost change vs baseline [price × device-hours]"].map(String::from),
            );
        }
        h
    }

    /// The flat table's rows: the baseline, then each feature's points in the sorted order;
    /// numbers at full precision (`exact`) or rounded for reading; the cost columns of
    /// [`SensitivityResult::columns`] when priced.
    pub fn rows(&self, exact: bool) -> Vec<Vec<String>> {
        let priced = self.priced();
        let base_total = self.baseline.cost.as_ref().and_then(|c| c.total);
        let num = |v: Option<f64>, digits: usize| match v {
            Some(v) if exact => format!("{v}"),
            Some(v) => format!("{v:.digits$}"),
            None => String::new(),
        };
        let row = |name: &str, unit: &str, p: &Point| -> Vec<String> {
            let change = match p.change_pct {
                Some(c) if !exact => format!("{c:+.1}"),
                c => num(c, 1),
            };
            let mut r = vec![
                name.to_string(),
                if exact { format!("{}", p.factor) } else { format!("×{}", p.factor) },
                num(p.value, 1),
                unit.to_string(),
                p.status.key().to_string(),
                num(p.training_days, 2),
                change,
                p.layout().unwrap_or_default(),
                num(p.best.map(|r| r.throughput_samples_per_s), 3),
                num(p.best.map(|r| r.time_per_iteration_s), 4),
                num(p.best.map(|r| r.mem_gb), 2),
                p.best.map(|r| r.candidate.n_gpus().to_string()).unwrap_or_default(),
                num(p.cost.as_ref().map(|c| c.gpu_hours), 0),
                num(p.cost.as_ref().and_then(|c| c.energy_mwh), 1),
                p.status.reason().unwrap_or_default(),
            ];
            if priced {
                let total = p.cost.as_ref().and_then(|c| c.total);
                let change = total.zip(base_total).map(|(t, b)| t - b);
                r.push(num(total, 0));
                r.push(match change {
                    Some(c) if !exact => format!("{c:+.0}"),
                    c => num(c, 0),
                });
            }
            r
        };
        let mut rows = vec![row("baseline", "", &self.baseline)];
        for f in &self.features {
            for p in &f.points {
                rows.push(row(f.feature.key(), f.feature.unit(), p));
            }
        }
        rows
    }
}
