//! What a whole training run costs: device-hours, energy and money for the scenario's token or
//! sample budget at a predicted throughput.
//!
//! * `gpu_hours` = devices × (budget samples / throughput) / 3600 [device-hours];
//! * `energy_mwh` = device-hours × the part's power [W] / 1e6 [MWh]: the catalog's board power
//!   (`tdp_w`, with the entry's sources) at full load, the devices only — hosts, network, storage and
//!   cooling (the data centre's PUE) are not counted, so it is a lower bound of the facility's
//!   energy; `null` when the catalog lists no power for the part;
//! * `energy_system_mwh` = device-hours × the whole server's published power per device
//!   ([`examples::system_power`]: a vendor's datasheet maximum over its accelerators), where one is
//!   published;
//! * `total` = device-hours × the price per device-hour: the user's, or the part's example price
//!   ([`examples::example_price`]: a public on-demand list price at a date, labelled "example, not
//!   a quote" wherever it is shown); `null` without either.
//!
//! [`RunCost::for_part`] gathers the part's figures from the catalog and the examples.

pub mod examples;

use serde_json::{Value, json};

use crate::Error;
use crate::catalog::{CatalogSystem, TrainingBudget};

/// Seconds in an hour [s/h].
pub const SECONDS_PER_HOUR: f64 = 3600.0;

/// The cost of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCost {
    /// Device-hours [h].
    pub gpu_hours: f64,
    /// Energy of the devices at their board power [MWh], when the power is known.
    pub energy_mwh: Option<f64>,
    /// Board power of one device [W] and where it comes from.
    pub power: Option<(f64, String)>,
    /// Price of one device-hour (the user's, in their currency).
    pub price_per_device_hour: Option<f64>,
    /// `gpu_hours × price_per_device_hour`.
    pub total: Option<f64>,
    /// Where the price comes from: `your price`, or the example's label (not a quote).
    pub price_source: Option<String>,
    /// Whether the price is an example of the data, not the user's.
    pub price_is_example: bool,
    /// Energy of the whole servers at their published power [MWh], where published.
    pub energy_system_mwh: Option<f64>,
    /// The whole server's power per device [W] and where it comes from, where published.
    pub system_power: Option<(f64, String)>,
    /// Wall-clock days of the run [days].
    pub days: f64,
}

/// The board power of one device of `sys` [W] with its source (`None` when the catalog lists none).
pub fn device_power(sys: &CatalogSystem) -> Option<(f64, String)> {
    let source = sys.sources.first().map_or(String::new(), |s| format!(": {s}"));
    sys.tdp_w.map(|w| (w, format!("tdp_w of {} in fmperf's catalog{source}", sys.id)))
}

impl RunCost {
    /// The cost of training on `budget` with samples of `seq_len` tokens at `throughput_samples_per_s`
    /// on `devices` devices of `power` (W, with its source) at `price` per device-hour.
    pub fn of(
        budget: TrainingBudget,
        seq_len: u64,
        throughput_samples_per_s: f64,
        devices: u64,
        power: Option<(f64, String)>,
        price: Option<f64>,
    ) -> Result<RunCost, Error> {
        if let Some(p) = price
            && (!p.is_finite() || p < 0.0)
        {
            return Err(Error::invalid("price_per_device_hour", p, "must be a number ≥ 0"));
        }
        let samples = budget.samples(seq_len);
        if !samples.is_finite() || samples <= 0.0 {
            return Err(Error::invalid("budget", samples, "must be a positive number of tokens or samples"));
        }
        if !throughput_samples_per_s.is_finite() || throughput_samples_per_s <= 0.0 {
            return Err(Error::invalid("throughput", throughput_samples_per_s, "must be positive"));
        }
        let seconds = samples / throughput_samples_per_s;
        let gpu_hours = devices as f64 * seconds / SECONDS_PER_HOUR;
        let power = power.filter(|(w, _)| w.is_finite() && *w > 0.0);
        Ok(RunCost {
            gpu_hours,
            energy_mwh: power.as_ref().map(|(w, _)| gpu_hours * w * 1e-6),
            power,
            price_per_device_hour: price,
            total: price.map(|p| p * gpu_hours),
            price_source: price.map(|_| "your price".to_string()),
            price_is_example: false,
            energy_system_mwh: None,
            system_power: None,
            days: seconds / 86_400.0,
        })
    }

    /// The same run at the user's `price` per device-hour (replacing any price or example).
    pub fn at_price(mut self, price: f64) -> RunCost {
        self.price_per_device_hour = Some(price);
        self.total = Some(price * self.gpu_hours);
        self.price_source = Some("your price".to_string());
        self.price_is_example = false;
        self
    }

    /// [`RunCost::of`] on part `sys`: its board power from the catalog, its whole-system power
    /// where published, and `price` or, without one, the part's example price (labelled).
    pub fn for_part(
        budget: TrainingBudget,
        seq_len: u64,
        throughput_samples_per_s: f64,
        devices: u64,
        sys: &CatalogSystem,
        price: Option<f64>,
    ) -> Result<RunCost, Error> {
        let example = examples::example_price(&sys.id).filter(|_| price.is_none());
        let p = price.or(example.map(|e| e.price_per_device_hour));
        let mut c = RunCost::of(budget, seq_len, throughput_samples_per_s, devices, device_power(sys), p)?;
        if let Some(e) = example {
            c.price_source = Some(e.label());
            c.price_is_example = true;
        }
        if let Some(s) = examples::system_power(&sys.id) {
            c.energy_system_mwh = Some(c.gpu_hours * s.system_power_w_per_device * 1e-6);
            c.system_power = Some((s.system_power_w_per_device, format!("{} ({})", s.system, s.source)));
        }
        Ok(c)
    }

    /// The JSON object `{gpu_hours, energy_mwh, price_per_device_hour, total, days,
    /// power_w_per_device, power_source, energy_counts, price_source, price_is_example,
    /// energy_system_mwh, system_power_w_per_device, system_power_source}`.
    pub fn to_json(&self) -> Value {
        json!({
            "gpu_hours": self.gpu_hours,
            "energy_mwh": self.energy_mwh,
            "price_per_device_hour": self.price_per_device_hour,
            "total": self.total,
            "days": self.days,
            "power_w_per_device": self.power.as_ref().map(|(w, _)| *w),
            "power_source": self.power.as_ref().map(|(_, s)| s.clone()),
            "energy_counts": "the devices at their board power (TDP) for the whole run; hosts, network and cooling (PUE) not counted",
            "price_source": self.price_source,
            "price_is_example": self.price_is_example,
            "energy_system_mwh": self.energy_system_mwh,
            "system_power_w_per_device": self.system_power.as_ref().map(|(w, _)| *w),
            "system_power_source": self.system_power.as_ref().map(|(_, s)| s.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand() {
        // 1e9 tokens of 1000-token samples = 1e6 samples at 100 samples/s = 1e4 s on 36 devices = 100 h.
        let c =
            RunCost::of(TrainingBudget::Tokens(1e9), 1000, 100.0, 36, Some((700.0, "x".into())), Some(2.5)).unwrap();
        assert!((c.gpu_hours - 100.0).abs() < 1e-9);
        assert!((c.energy_mwh.unwrap() - 0.07).abs() < 1e-12);
        assert!((c.total.unwrap() - 250.0).abs() < 1e-9);
        let none = RunCost::of(TrainingBudget::Samples(10.0), 1, 1.0, 1, None, None).unwrap();
        assert_eq!((none.energy_mwh, none.total), (None, None));
        assert!(RunCost::of(TrainingBudget::Tokens(1e9), 1000, 0.0, 8, None, None).is_err());
        assert!(RunCost::of(TrainingBudget::Tokens(1e9), 1000, 1.0, 8, None, Some(-1.0)).is_err());
        assert!(none.to_json()["energy_mwh"].is_null());
    }

    #[test]
    fn a_part_gets_its_power_and_example_price() {
        // 1e12 tokens of 8192-token samples = 122,070,312.5 samples at 100 samples/s on 1,024 H100:
        // 1,220,703.125 s = 347,222.2 device-hours; × 700 W = 243.06 MWh; × 1,275 W (DGX H100
        // over its 8 GPUs) = 442.71 MWh; × 12.29 USD (the example) = 4,267,361.1.
        let h100 = crate::resolve::builtin_system("nvidia_h100_sxm5_80gb").unwrap();
        let c = RunCost::for_part(TrainingBudget::Tokens(1e12), 8192, 100.0, 1024, h100, None).unwrap();
        let hours = 1e12 / 8192.0 / 100.0 * 1024.0 / 3600.0;
        assert!((c.gpu_hours - hours).abs() < 1e-6 && (hours - 347_222.22).abs() < 0.01);
        assert!((c.energy_mwh.unwrap() - 243.055_555).abs() < 1e-3);
        assert!((c.energy_system_mwh.unwrap() - 442.708_333).abs() < 1e-3);
        assert!((c.total.unwrap() - 4_267_361.11).abs() < 0.01);
        assert!(c.price_is_example && c.price_source.as_deref().unwrap().starts_with("example, not a quote"));
        // The user's price replaces the example.
        let mine = RunCost::for_part(TrainingBudget::Tokens(1e12), 8192, 100.0, 1024, h100, Some(2.0)).unwrap();
        assert!(!mine.price_is_example && (mine.total.unwrap() - 2.0 * hours).abs() < 1e-6);
        assert_eq!(mine.to_json()["price_source"], "your price");
        // Re-pricing a run gives what pricing it at first gives.
        let repriced = c.at_price(2.0);
        assert_eq!((repriced.total, repriced.price_is_example), (mine.total, false));
    }
}
