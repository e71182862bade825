//! The whole run's cost in the explorer: device-hours, energy and money of a configuration on the
//! scenario's budget (core's [`fmperf_core::run_cost`]), at the price per device-hour the user
//! types (URL key [`PRICE_KEY`]) or else the part's example price, labelled as an example, not a
//! quote. Where configurations of different systems or device counts stand side by side (the
//! Compare tab), they are ranked by time or by this cost ([`RankBy`], URL key [`RANK_KEY`]).

use fmperf_core::Error;
use fmperf_core::explore::ConfigReport;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::run_cost::RunCost;
use fmperf_core::run_cost::examples::example_price;

use crate::fmt;

/// The URL key of the user's price per device-hour.
pub const PRICE_KEY: &str = "price";

/// The URL key of the order of compared configurations: `cost` (the whole run's money, then
/// time); absent or `time`: training time.
pub const RANK_KEY: &str = "rank";

/// What compared configurations are ranked by. Within one scenario every layout uses the same
/// devices at the same price, so cost follows time; across systems (another price per
/// device-hour, another power) or device counts it need not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RankBy {
    /// Training time on the budget [days] (ties: the order pinned).
    #[default]
    Time,
    /// The whole run's money (configurations without a price last, by time).
    Cost,
}

impl RankBy {
    /// Both, in the order offered.
    pub const ALL: [RankBy; 2] = [RankBy::Time, RankBy::Cost];

    /// The value in the URL (`time` is written as no key).
    pub fn key(self) -> &'static str {
        match self {
            RankBy::Time => "time",
            RankBy::Cost => "cost",
        }
    }

    /// The choice in words.
    pub fn label(self) -> &'static str {
        match self {
            RankBy::Time => "time (training days)",
            RankBy::Cost => "cost (the whole run)",
        }
    }

    /// The URL's value read (absent or unknown: time).
    pub fn from_query(value: Option<&str>) -> RankBy {
        match value.map(str::trim) {
            Some("cost") => RankBy::Cost,
            _ => RankBy::Time,
        }
    }
}

/// The order to show configurations `(training days, cost)` in, best first, as indices: by days,
/// or by cost with those that have none after the priced ones (each group by days); ties keep the
/// given order.
pub fn rank_order(items: &[(f64, Option<f64>)], by: RankBy) -> Vec<usize> {
    let key = |v: f64| if v.is_finite() { v } else { f64::INFINITY };
    let mut order: Vec<usize> = (0..items.len()).collect();
    fmperf_core::sort::sort_by(&mut order, |&a, &b| {
        let (da, ca) = items[a];
        let (db, cb) = items[b];
        let by_days = key(da).total_cmp(&key(db));
        match by {
            RankBy::Time => by_days,
            RankBy::Cost => match (ca.map(key), cb.map(key)) {
                (Some(x), Some(y)) => x.total_cmp(&y).then(by_days),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => by_days,
            },
        }
    });
    order
}

/// The price of a compared configuration on part `part`: the user's `price` when it is the
/// scenario's part (the price typed is for that part), else `None` (the part's example price).
pub fn column_price(part: &str, scenario_part: &str, price: Option<f64>) -> Option<f64> {
    price.filter(|_| part == scenario_part)
}

/// A compared configuration's cost in one cell: `4,267,361 USD (example)`, `3,000,000 (your
/// price)`, or `–` without a price.
pub fn cost_cell(c: &RunCost) -> String {
    match c.total {
        Some(t) if c.price_is_example => format!("{} USD (example)", money(t)),
        Some(t) => format!("{} (your price)", money(t)),
        None => "– (no price)".to_string(),
    }
}

/// An amount in few characters, for a strip: `842,000`, `4.27 M`, `1.20 bn` (M = 1e6, bn = 1e9);
/// signed when `signed` (`−1.06 M`, `+530,000`).
pub fn money_short(v: f64, signed: bool) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    let body = if a >= 1e9 {
        format!("{} bn", fmt::fixed(a / 1e9, 2))
    } else if a >= 1e6 {
        format!("{} M", fmt::fixed(a / 1e6, 2))
    } else {
        fmt::count(a.round() as u64)
    };
    match (signed, v < 0.0 && body != "0") {
        (true, true) => format!("−{body}"),
        (true, false) if body == "0" => "±0".to_string(),
        (true, false) => format!("+{body}"),
        (false, _) => body,
    }
}

/// The price typed (`None` when empty: the example applies); an error names [`PRICE_KEY`].
pub fn parse_price(text: &str) -> Result<Option<f64>, Error> {
    let t = text.trim().trim_start_matches('$').trim();
    if t.is_empty() {
        return Ok(None);
    }
    match crate::number::parse_quantity(t) {
        Some(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        _ => Err(Error::invalid(PRICE_KEY, text, "must be a price per device-hour ≥ 0 (2.5)")),
    }
}

/// The cost of `report`'s configuration over the scenario's budget at `price` (else the example).
pub fn of(spec: &ExploreSpec, report: &ConfigReport, price: Option<f64>) -> Result<RunCost, Error> {
    RunCost::for_part(
        spec.budget,
        spec.model.l,
        report.throughput_samples_per_s,
        report.candidate.n_gpus(),
        &spec.system_entry,
        price,
    )
}

/// The price field's placeholder: the example price of the scenario's part, or a plain prompt.
pub fn placeholder(spec: &ExploreSpec) -> String {
    match example_price(&spec.system_entry.id) {
        Some(e) => format!("{} (example)", e.price_per_device_hour),
        None => "your price".to_string(),
    }
}

/// An amount in whole units with grouped digits (`5,487,311`), in powers of ten from 1e15.
fn money(v: f64) -> String {
    if v.is_finite() && v >= 0.0 && v < 1e15 { fmt::count(v.round() as u64) } else { fmt::compact(v) }
}

/// A power [W] in whole watts with grouped digits (`1,275`).
fn watts(w: f64) -> String {
    fmt::count(w.round().max(0.0) as u64)
}

/// The cost's lines `(label, value, basis)`: the value short (a figure and its unit, readable on a
/// phone), the basis what it rests on (power and its source, the price and whose it is).
pub fn lines(c: &RunCost) -> Vec<(&'static str, String, String)> {
    let mut out = vec![("Device-hours", money(c.gpu_hours), format!("over {} days", fmt::days(c.days)))];
    out.push(match (&c.energy_mwh, &c.power) {
        (Some(e), Some((w, s))) => (
            "Energy, devices",
            format!("{} MWh", fmt::fixed(*e, 1)),
            format!("at {} W per device (board power; {s}); hosts, network and cooling not counted", watts(*w)),
        ),
        _ => ("Energy, devices", "unknown".to_string(), "the catalog lists no power for this part".to_string()),
    });
    if let (Some(e), Some((w, s))) = (&c.energy_system_mwh, &c.system_power) {
        out.push((
            "Energy, whole servers",
            format!("{} MWh", fmt::fixed(*e, 1)),
            format!("at {} W per device: {s}", watts(*w)),
        ));
    }
    out.push(match (c.total, c.price_per_device_hour) {
        (Some(t), Some(p)) if c.price_is_example => (
            "Money",
            format!("{} USD", money(t)),
            format!("at {p} USD per device-hour — {}", c.price_source.as_deref().unwrap_or("example, not a quote")),
        ),
        (Some(t), Some(p)) => ("Money", money(t), format!("at your {p} per device-hour")),
        _ => ("Money", "–".to_string(), "type your price per device-hour (no example for this part)".to_string()),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_as_typed() {
        assert_eq!(parse_price("").unwrap(), None);
        assert_eq!(parse_price(" $2.5 ").unwrap(), Some(2.5));
        assert_eq!(parse_price("3").unwrap(), Some(3.0));
        assert_eq!(parse_price("-1").unwrap_err().field(), Some(PRICE_KEY));
        assert!(parse_price("cheap").is_err());
    }

    #[test]
    fn ranked_by_time_or_by_cost() {
        // B is faster but dearer; C has no price; D takes as long as A.
        let items = [(100.0, Some(5e6)), (50.0, Some(8e6)), (40.0, None), (100.0, Some(5e6))];
        assert_eq!(rank_order(&items, RankBy::Time), [2, 1, 0, 3]);
        assert_eq!(rank_order(&items, RankBy::Cost), [0, 3, 1, 2]);
        // Nothing finite sorts last.
        assert_eq!(rank_order(&[(f64::NAN, None), (1.0, None)], RankBy::Time), [1, 0]);
        assert_eq!(RankBy::from_query(Some("cost")), RankBy::Cost);
        assert_eq!(RankBy::from_query(Some("speed")), RankBy::Time);
        assert_eq!(RankBy::from_query(None).key(), "time");
        // The user's price is for the scenario's part only.
        assert_eq!(column_price("nvidia_h100_sxm5_80gb", "nvidia_h100_sxm5_80gb", Some(2.0)), Some(2.0));
        assert_eq!(column_price("nvidia_b200", "nvidia_h100_sxm5_80gb", Some(2.0)), None);
    }

    #[test]
    fn money_in_few_characters() {
        assert_eq!(money_short(842_000.4, false), "842,000");
        assert_eq!(money_short(4_267_361.1, false), "4.27 M");
        assert_eq!(money_short(-1_064_000.0, true), "−1.06 M");
        assert_eq!(money_short(530_000.0, true), "+530,000");
        assert_eq!(money_short(1.2e9, false), "1.20 bn");
        assert_eq!(money_short(-0.2, true), "±0");
    }

    #[test]
    fn a_cell_says_whose_price() {
        let h100 = fmperf_core::resolve::builtin_system("nvidia_h100_sxm5_80gb").unwrap();
        let budget = fmperf_core::catalog::TrainingBudget::Tokens(1e12);
        let c = RunCost::for_part(budget, 8192, 100.0, 1024, h100, None).unwrap();
        assert_eq!(cost_cell(&c), "4,267,361 USD (example)");
        assert_eq!(cost_cell(&c.clone().at_price(2.0)), "694,444 (your price)");
        let none = RunCost::of(budget, 8192, 100.0, 1024, None, None).unwrap();
        assert_eq!(cost_cell(&none), "– (no price)");
    }
}
