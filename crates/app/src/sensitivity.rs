//! "What would help most": the explorer's strip of the six system features at ×0.5 and ×2
//! ([`fmperf_core::sensitivity`]) as the page shows it — one row per feature in the core's order
//! (the largest saving first), each factor with its training days, its change against the
//! scenario [%], a bar scaled to the largest change, the best layout, and a link to the feature's
//! full sweep in the Studies view; with the user's price per device-hour (URL key `price`), each
//! factor's whole-run cost and its change in money beside the days. The component only draws these
//! texts.

use fmperf_core::mode::Mode;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};
use fmperf_core::sensitivity::{Feature, Point, PointStatus, SensitivityResult};
use fmperf_core::sweep::SweepText;

use crate::fmt;
use crate::query::Query;
use crate::run_cost;
use crate::views::{AppView, VIEW_KEY};

/// The strip's heading.
pub const TITLE: &str = "What would help most";

/// The line under the heading.
pub const INTRO: &str = "Each system feature at half and at twice its value, the search re-run each time (the best \
     layout may change): training days on the scenario's budget, sorted by the largest saving.";

/// One factor of one feature, as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorCell {
    /// `×0.5` or `×2`.
    pub factor: String,
    /// The feature's value at this factor with its unit (`1,979 TFLOP/s`).
    pub value: String,
    /// `94.00 days`, or what stands instead (`does not fit`, `not possible`, `…`).
    pub days: String,
    /// The change against the scenario: `−43.7 %` (empty without one).
    pub change: String,
    /// The whole run's cost at the user's price (`4.27 M`; empty without a price or a layout).
    pub cost: String,
    /// The cost against the scenario's (`−1.06 M`; empty without one).
    pub cost_change: String,
    /// The bar's length [% of the cell's bar track], the change over the strip's largest change.
    pub bar_pct: f64,
    /// `faster`, `slower`, `same` or `none` (no change to draw): the bar's class.
    pub direction: &'static str,
    /// What a pointer or screen reader gets: the best layout, or why there is none.
    pub detail: String,
}

/// One feature, as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The feature's key (`matrix`, …: the sweep axis).
    pub key: &'static str,
    /// The feature in words with its unit (`matrix FLOP rate [TFLOP/s]`).
    pub label: String,
    /// The scenario's own value with its unit (`989 TFLOP/s`).
    pub value: String,
    /// ×0.5 then ×2.
    pub cells: Vec<FactorCell>,
    /// The sweep axis of the Studies link (`matrix=x0.25,x0.5,x1,x2,x4`).
    pub axis: String,
}

/// The whole strip.
#[derive(Debug, Clone, PartialEq)]
pub struct Strip {
    /// The scenario as it is: `166.96 days with 1d.dp32.tp4.pp8.mbs1.nv4x2x1`, or why nothing fits.
    pub baseline: String,
    /// The features, the largest saving first.
    pub rows: Vec<Row>,
    /// What the costs are at (`Cost at your 2.5 per device-hour …`), when a price is set.
    pub cost_note: Option<String>,
}

/// A value in its unit, short: `1,979 TFLOP/s`, `42.8 GB`, `16 devices`.
fn value_text(f: Feature, v: f64) -> String {
    let n = match f {
        Feature::Domain => fmt::count(v.max(0.0) as u64),
        Feature::HbmCapacity => fmt::gb(v),
        _ if v.abs() >= 100.0 => fmt::count(v.round().max(0.0) as u64),
        _ => fmt::fixed(v, 1),
    };
    format!("{n} {}", f.unit())
}

/// A change [%] with its sign: `−43.7 %`, `+8.5 %`, `±0.0 %`.
pub fn change_text(pct: f64) -> String {
    let rounded = (pct * 10.0).round() / 10.0;
    if rounded == 0.0 {
        "±0.0 %".to_string()
    } else if rounded < 0.0 {
        format!("−{} %", fmt::fixed(-rounded, 1))
    } else {
        format!("+{} %", fmt::fixed(rounded, 1))
    }
}

fn factor_text(x: f64) -> String {
    format!("×{x}")
}

/// The whole run's money at `price` (`None` without a price or a layout).
fn money(p: &Point, price: Option<f64>) -> Option<f64> {
    Some(p.cost.clone()?.at_price(price?).total?)
}

fn cell(f: Feature, p: &Point, largest: f64, price: Option<f64>, base_money: Option<f64>) -> FactorCell {
    let layout = p.layout().unwrap_or_default();
    let (days, detail) = match &p.status {
        PointStatus::Fits => (format!("{} days", fmt::days(p.training_days.unwrap_or(f64::NAN))), layout),
        PointStatus::Pending => ("…".to_string(), "not searched yet".to_string()),
        PointStatus::NothingFits { .. } => ("does not fit".to_string(), p.status.reason().unwrap_or_default()),
        PointStatus::Impossible(why) => ("not possible".to_string(), why.clone()),
    };
    let (change, bar_pct, direction) = match p.change_pct {
        Some(c) => {
            let direction = if (c * 10.0).round() == 0.0 {
                "same"
            } else if c < 0.0 {
                "faster"
            } else {
                "slower"
            };
            (change_text(c), (c.abs() / largest * 100.0).clamp(0.0, 100.0), direction)
        }
        None => (String::new(), 0.0, "none"),
    };
    let value = p.value.map(|v| value_text(f, v)).unwrap_or_default();
    let m = money(p, price);
    let cost = m.map(|m| run_cost::money_short(m, false)).unwrap_or_default();
    let cost_change = m.zip(base_money).map(|(m, b)| run_cost::money_short(m - b, true)).unwrap_or_default();
    FactorCell { factor: factor_text(p.factor), value, days, change, cost, cost_change, bar_pct, direction, detail }
}

/// The strip of a finished (or running) sensitivity; `price`: the user's per device-hour (adds the
/// costs).
pub fn strip(r: &SensitivityResult, price: Option<f64>) -> Strip {
    let base_money = money(&r.baseline, price);
    let largest = r
        .features
        .iter()
        .flat_map(|f| f.points.iter())
        .filter_map(|p| p.change_pct)
        .map(f64::abs)
        .filter(|c| c.is_finite())
        .fold(1.0, f64::max);
    let baseline = match (&r.baseline.status, r.baseline.training_days) {
        (PointStatus::Fits, Some(d)) => {
            let cost =
                base_money.map(|m| format!(" ({} at your price)", run_cost::money_short(m, false))).unwrap_or_default();
            format!("As it is: {} days{cost} with {}.", fmt::days(d), r.baseline.layout().unwrap_or_default())
        }
        (status, _) => format!(
            "As it is, nothing fits ({}): the rows show which change makes it fit.",
            status.reason().unwrap_or_else(|| "not searched yet".to_string())
        ),
    };
    let domain = r.features.iter().find(|f| f.feature == Feature::Domain).map_or(1, |f| f.base_value as u64);
    let rows = r
        .features
        .iter()
        .map(|e| Row {
            key: e.feature.key(),
            label: format!("{} [{}]", e.feature.label(), e.feature.unit()),
            value: value_text(e.feature, e.base_value),
            cells: e.points.iter().map(|p| cell(e.feature, p, largest, price, base_money)).collect(),
            axis: e.feature.sweep_axis(domain),
        })
        .collect();
    let cost_note = price.map(|p| {
        format!(
            "Cost of the whole run at your {p} per device-hour, the same price at every point (a faster part \
             usually costs more per hour); M = million, bn = billion."
        )
    });
    Strip { baseline, rows, cost_note }
}

/// The Studies view's query for the full sweep of one feature of the explorer's scenario: the
/// scenario as the sweep's base (model, system spec as typed, domain, devices, global batch,
/// strategies, the mode and its switches) and the feature's axis ([`Feature::sweep_axis`]).
pub fn studies_query(spec: &ExploreSpec, fields: &ExploreFields, mode: &Mode, axis: &str) -> Query {
    let strategies: Vec<&str> = spec.strategies.iter().map(|s| s.as_str()).collect();
    let text = SweepText {
        model: fields.model.trim().to_string(),
        system: fields.system.trim().to_string(),
        strategy: Some(strategies.join(",")),
        gpus: Some(spec.n_gpus.to_string()),
        nvlink: Some(spec.system.domain_size.to_string()),
        global_batch: Some(spec.global_batch.to_string()),
        mode: Some(mode.as_str().to_string()),
        ext: mode.ext_text(),
        axes: vec![axis.to_string()],
        ..SweepText::default()
    };
    let mut q = Query::default();
    q.set(VIEW_KEY, AppView::Studies.key());
    crate::studies::write_custom(&mut q, &text);
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::sensitivity::{Base, Sensitivity};

    fn spec(gpus: &str, domain: &str) -> (ExploreSpec, ExploreFields, Mode) {
        let fields = ExploreFields {
            model: "llama3-8b".into(),
            system: "nvidia_h100_sxm5_80gb".into(),
            domain: domain.into(),
            gpus: gpus.into(),
            batch: "512".into(),
            strategies: "1d,2d-seqp".into(),
            top: "10".into(),
            ..ExploreFields::default()
        };
        let mode = Mode::from_text(Some("extended"), Some("recompute=full")).unwrap();
        (fields.resolve_in(&mode).unwrap(), fields, mode)
    }

    #[test]
    fn six_rows_sorted_with_units_signs_and_bars() {
        let (s, ..) = spec("64", "");
        let r = Sensitivity::new(Base::of_explore(&s)).unwrap().finish();
        let strip = strip(&r, None);
        assert_eq!(strip.rows.len(), 6);
        assert!(strip.cost_note.is_none() && strip.rows.iter().all(|r| r.cells.iter().all(|c| c.cost.is_empty())));
        assert!(strip.baseline.starts_with("As it is: ") && strip.baseline.contains(" days with 1d."));
        let matrix = strip.rows.iter().find(|r| r.key == "matrix").unwrap();
        assert_eq!(matrix.label, "matrix FLOP rate [TFLOP/s]");
        assert_eq!(matrix.value, "989 TFLOP/s");
        assert_eq!((matrix.cells[0].factor.as_str(), matrix.cells[1].factor.as_str()), ("×0.5", "×2"));
        assert_eq!(matrix.cells[1].value, "1,979 TFLOP/s");
        assert!(matrix.cells[1].change.starts_with('−') && matrix.cells[1].direction == "faster");
        assert!(matrix.cells[0].change.starts_with('+') && matrix.cells[0].direction == "slower");
        // Bars are scaled to the largest change, which gets the full track.
        let bars: Vec<f64> = strip.rows.iter().flat_map(|r| r.cells.iter().map(|c| c.bar_pct)).collect();
        assert!(bars.iter().all(|b| (0.0..=100.0).contains(b)));
        assert!(bars.iter().any(|b| (*b - 100.0).abs() < 1e-9));
        // The rows keep the core's order.
        let keys: Vec<&str> = strip.rows.iter().map(|r| r.key).collect();
        let core: Vec<&str> = r.features.iter().map(|f| f.feature.key()).collect();
        assert_eq!(keys, core);
        assert!(strip.rows.iter().all(|r| r.cells.iter().all(|c| c.days.ends_with(" days") && !c.detail.is_empty())));
    }

    #[test]
    fn impossible_points_and_signs_read_as_words() {
        let (s, ..) = spec("8", "8");
        let r = Sensitivity::new(Base::of_explore(&s)).unwrap().finish();
        let domain = strip(&r, None).rows.into_iter().find(|r| r.key == "domain").unwrap();
        assert_eq!(domain.cells[1].days, "not possible");
        assert!(domain.cells[1].detail.contains("changes nothing"));
        assert_eq!((domain.cells[1].change.as_str(), domain.cells[1].direction), ("", "none"));
        assert_eq!(change_text(-0.04), "±0.0 %");
        assert_eq!(change_text(12.345), "+12.3 %");
        assert_eq!(change_text(-43.66), "−43.7 %");
    }

    #[test]
    fn with_a_price_each_factor_says_its_cost_and_the_change_in_money() {
        let (s, ..) = spec("64", "");
        let r = Sensitivity::new(Base::of_explore(&s)).unwrap().finish();
        let priced = strip(&r, Some(2.0));
        assert!(priced.cost_note.as_deref().unwrap().contains("your 2 per device-hour"));
        // The baseline's money: 64 devices × its days × 24 h × 2.
        let days = r.baseline.training_days.unwrap();
        let want = run_cost::money_short(64.0 * days * 24.0 * 2.0, false);
        assert!(
            priced.baseline.contains(&format!(" days ({want} at your price) with ")),
            "{} vs {want}",
            priced.baseline
        );
        let matrix = priced.rows.iter().find(|r| r.key == "matrix").unwrap();
        // Twice the rate: fewer days, less money at the same price; half: more.
        assert!(matrix.cells[1].cost_change.starts_with('−'), "{:?}", matrix.cells[1]);
        assert!(matrix.cells[0].cost_change.starts_with('+'), "{:?}", matrix.cells[0]);
        let p = r.features.iter().find(|f| f.feature == Feature::Matrix).unwrap().points[1].clone();
        let m = 64.0 * p.training_days.unwrap() * 24.0 * 2.0;
        assert_eq!(matrix.cells[1].cost, run_cost::money_short(m, false));
    }

    #[test]
    fn the_studies_link_holds_the_scenario_and_the_axis() {
        let (s, f, m) = spec("64", "");
        let q = studies_query(&s, &f, &m, &Feature::HbmCapacity.sweep_axis(8));
        assert_eq!(q.get("view"), Some("studies"));
        assert_eq!(q.get("ax.hbm_capacity"), Some("x0.25,x0.5,x1,x2,x4"));
        assert_eq!((q.get("s.model"), q.get("s.gpus"), q.get("s.domain")), (Some("llama3-8b"), Some("64"), Some("8")));
        assert_eq!((q.get("mode"), q.get("ext")), (Some("extended"), Some("recompute=full")));
        // The Studies view reads it back as this sweep, and core accepts it.
        let text = crate::studies::custom_text(&Query::parse(&q.to_search()));
        assert_eq!(text.axes, ["hbm_capacity=x0.25,x0.5,x1,x2,x4"]);
        assert_eq!(text.global_batch.as_deref(), Some("512"));
        assert!(crate::studies::for_core(&text).to_spec(None, None).is_ok());
    }
}
