//! Example prices of a device-hour and whole-system power per device (`data/run-cost-examples.json`,
//! compiled in, each entry with its offer, source and date).
//!
//! A price here is **an example, not a quote**: one public on-demand list price at a date, per
//! device of the instance. Callers show it labelled so, next to a field where the user sets their
//! own. A whole-system power is a server's maximum power from its vendor's datasheet divided by its
//! accelerators (hosts, NICs and fans included; network switches, storage and cooling not).

use std::sync::OnceLock;

/// The compiled-in data.
const EXAMPLES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/run-cost-examples.json"));

/// One example price of a device-hour.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct ExamplePrice {
    /// Accelerator id of the hardware catalog.
    pub accelerator: String,
    /// US dollars per device-hour.
    pub price_per_device_hour: f64,
    /// The offer the price is of (instance, region, price per instance-hour).
    pub offer: String,
    /// Where it is published.
    pub source: String,
    /// When (`YYYY-MM`).
    pub date: String,
}

impl ExamplePrice {
    /// The label every output gives it: `example, not a quote: AWS … (aws.amazon.com/…, 2024-06)`.
    pub fn label(&self) -> String {
        format!("example, not a quote: {} ({}, {})", self.offer, self.source, self.date)
    }
}

/// One published whole-system power.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct SystemPower {
    /// Accelerator id of the hardware catalog.
    pub accelerator: String,
    /// The server's maximum power divided by its accelerators [W per device].
    pub system_power_w_per_device: f64,
    /// The server and its power, in words.
    pub system: String,
    /// Where it is published.
    pub source: String,
}

#[derive(serde::Deserialize)]
struct Examples {
    prices: Vec<ExamplePrice>,
    system_power: Vec<SystemPower>,
}

fn examples() -> &'static Examples {
    static DATA: OnceLock<Examples> = OnceLock::new();
    DATA.get_or_init(|| {
        // The file is part of the build and checked by the tests below: it parses.
        serde_json::from_str(EXAMPLES_JSON).unwrap_or(Examples { prices: Vec::new(), system_power: Vec::new() })
    })
}

/// The example price of a device-hour of accelerator `id`, if the data has one.
pub fn example_price(id: &str) -> Option<&'static ExamplePrice> {
    examples().prices.iter().find(|p| p.accelerator == id)
}

/// The published whole-system power per device of accelerator `id`, if the data has one.
pub fn system_power(id: &str) -> Option<&'static SystemPower> {
    examples().system_power.iter().find(|p| p.accelerator == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_names_a_catalog_part_and_a_dated_source() {
        let e = examples();
        assert!(e.prices.len() >= 5 && e.system_power.len() >= 3);
        for p in &e.prices {
            assert!(crate::resolve::builtin_system(&p.accelerator).is_ok(), "{}", p.accelerator);
            assert!(p.price_per_device_hour > 0.0 && !p.source.is_empty() && p.date.len() == 7, "{p:?}");
        }
        for s in &e.system_power {
            let part = crate::resolve::builtin_system(&s.accelerator).unwrap();
            // A server draws more than its accelerators' board power.
            assert!(s.system_power_w_per_device > part.tdp_w.unwrap(), "{s:?}");
        }
        // p4de: 40.9657 USD per instance-hour over 8 devices.
        let a100 = example_price("nvidia_a100_sxm4_80gb").unwrap();
        assert!((a100.price_per_device_hour - 40.9657 / 8.0).abs() < 1e-4);
        assert!(a100.label().starts_with("example, not a quote: AWS"));
        assert!(example_price("cerebras_cs2").is_none());
    }
}
