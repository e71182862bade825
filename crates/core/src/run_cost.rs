//! What a whole training run costs: device-hours, energy and money for the scenario's token or
//! sample budget at a predicted throughput.
//!
//! * `gpu_hours` = devices × (budget samples / throughput) / 3600 [device-hours];
//! * `energy_mwh` = device-hours × the part's power [W] / 1e6 [MWh]: the catalog's board power
//!   (`tdp_w`, with the entry's sources) at full load, the devices only — hosts, network, storage and
//!   cooling (the data centre's PUE) are not counted, so it is a lower bound of the facility's
//!   energy; `null` when the catalog lists no power for the part;
//! * `total` = device-hours × the price per device-hour the user sets (no default: fmperf quotes no
//!   prices); `null` without a price.

use serde_json::{Value, json};

use crate::Error;
use crate::catalog::TrainingBudget;

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
    /// Wall-clock days of the run [days].
    pub days: f64,
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
            days: seconds / 86_400.0,
        })
    }

    /// The JSON object `{gpu_hours, energy_mwh, price_per_device_hour, total, days,
    /// power_w_per_device, power_source, energy_counts}`.
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
}
