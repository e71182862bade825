//! The whole run's cost in the explorer: device-hours, energy and money of a configuration on the
//! scenario's budget (core's [`fmperf_core::run_cost`]), at the price per device-hour the user
//! types (URL key [`PRICE_KEY`]) or else the part's example price, labelled as an example, not a
//! quote.

use fmperf_core::Error;
use fmperf_core::explore::{ConfigReport, ExploreSpec};
use fmperf_core::run_cost::RunCost;
use fmperf_core::run_cost::examples::example_price;

use crate::fmt;

/// The URL key of the user's price per device-hour.
pub const PRICE_KEY: &str = "price";

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

/// The cost's lines `(label, value)`, each value with what it rests on.
pub fn lines(c: &RunCost) -> Vec<(&'static str, String)> {
    let mut out = vec![("Device-hours", format!("{} over {} days", money(c.gpu_hours), fmt::days(c.days)))];
    out.push((
        "Energy, devices",
        match (&c.energy_mwh, &c.power) {
            (Some(e), Some((w, s))) => {
                format!(
                    "{} MWh at {w:.0} W per device (board power; {s}); hosts, network and cooling not counted",
                    fmt::fixed(*e, 1)
                )
            }
            _ => "unknown: the catalog lists no power for this part".to_string(),
        },
    ));
    if let (Some(e), Some((w, s))) = (&c.energy_system_mwh, &c.system_power) {
        out.push(("Energy, whole servers", format!("{} MWh at {w:.0} W per device: {s}", fmt::fixed(*e, 1))));
    }
    out.push((
        "Money",
        match (c.total, c.price_per_device_hour) {
            (Some(t), Some(p)) if c.price_is_example => format!(
                "{} USD at {p} USD per device-hour — {}",
                money(t),
                c.price_source.as_deref().unwrap_or("example, not a quote")
            ),
            (Some(t), Some(p)) => format!("{} at your {p} per device-hour", money(t)),
            _ => "type your price per device-hour (no example for this part)".to_string(),
        },
    ));
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
}
