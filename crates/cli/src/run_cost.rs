//! `--tokens`, `--samples` and `--price-per-device-hour`: the cost of the whole run
//! ([`fmperf_core::run_cost`]) next to an estimate's time per step.

use fmperf_core::catalog::TrainingBudget;
use fmperf_core::resolve::{self, UserEntries};
use fmperf_core::run_cost::RunCost;
use fmperf_launch::Estimate;

use crate::args::Args;
use crate::cmd::CmdError;

/// The flags' help lines.
pub const HELP: &str = "\
  --tokens         the run's token budget (e.g. 1e12): adds the run's cost, JSON \"cost\": {\"gpu_hours\",
                   \"energy_mwh\" (the devices at the catalog's board power, sourced; hosts and cooling
                   not counted), \"price_per_device_hour\", \"total\", \"days\"}
  --samples        the budget in samples instead
  --price-per-device-hour
                   your price of one device-hour (no default: fmperf quotes no prices); gives \"total\"
";

/// The flags' names.
pub const FLAGS: [&str; 3] = ["tokens", "samples", "price-per-device-hour"];

/// The budget and price the flags give (`None` without a budget).
pub fn from_args(args: &Args) -> Result<Option<(TrainingBudget, Option<f64>)>, CmdError> {
    let number = |flag: &str| -> Result<Option<f64>, CmdError> {
        match args.value(flag)? {
            None => Ok(None),
            Some(t) => match t.trim().replace('_', "").parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                _ => Err(CmdError::Usage(format!("--{flag} {t}: must be a number ≥ 0 (1e12, 2.5)"))),
            },
        }
    };
    let price = number("price-per-device-hour")?;
    let budget = match (number("tokens")?, number("samples")?) {
        (Some(_), Some(_)) => return Err(CmdError::Usage("--tokens and --samples: give one budget".into())),
        (Some(t), None) => TrainingBudget::Tokens(t),
        (None, Some(s)) => TrainingBudget::Samples(s),
        (None, None) if price.is_some() => {
            return Err(CmdError::Usage(
                "--price-per-device-hour needs the run's budget: --tokens N or --samples N".into(),
            ));
        }
        (None, None) => return Ok(None),
    };
    Ok(Some((budget, price)))
}

/// The cost of the estimated configuration for `budget` at `price`.
pub fn of_estimate(e: &Estimate, budget: TrainingBudget, price: Option<f64>) -> Result<RunCost, CmdError> {
    let power = power_of(&e.system_id);
    let s = &e.scenario;
    RunCost::of(budget, s.workload.seq_len, e.evaluation.throughput_samples_per_s, s.devices, power, price)
        .map_err(|err| CmdError::Usage(format!("cost: {err}")))
}

/// The board power of one device of a catalog system spec [W], with its source (`None`: not a
/// catalog system, or no power listed).
pub fn power_of(system: &str) -> Option<(f64, String)> {
    resolve::system_spec(UserEntries::builtin(), system).ok().and_then(|(sys, _)| {
        let source = sys.sources.first().map_or(String::new(), |s| format!(": {s}"));
        sys.tdp_w.map(|w| (w, format!("tdp_w of {} in fmperf's catalog{source}", sys.id)))
    })
}

/// The cost in words, one line.
pub fn line(c: &RunCost) -> String {
    let energy = c.energy_mwh.map_or("energy unknown (no power in the catalog)".to_string(), |m| format!("{m:.1} MWh"));
    let total = match (c.total, c.price_per_device_hour) {
        (Some(t), Some(p)) => format!(", {t:.0} at {p} per device-hour"),
        _ => String::new(),
    };
    format!("{:.0} device-hours over {:.1} days, {energy}{total}", c.gpu_hours, c.days)
}
