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
    let number = |flag: &str| number_flag(args, flag);
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

/// The number after `--flag` (≥ 0; `None` without the flag).
pub fn number_flag(args: &Args, flag: &str) -> Result<Option<f64>, CmdError> {
    match args.value(flag)? {
        None => Ok(None),
        Some(t) => match t.trim().replace('_', "").parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
            _ => Err(CmdError::Usage(format!("--{flag} {t}: must be a number ≥ 0 (1e12, 2.5)"))),
        },
    }
}

/// The cost of the estimated configuration for `budget` at `price`.
pub fn of_estimate(e: &Estimate, budget: TrainingBudget, price: Option<f64>) -> Result<RunCost, CmdError> {
    let s = &e.scenario;
    of_run(&e.system_id, budget, s.workload.seq_len, e.evaluation.throughput_samples_per_s, s.devices, price)
}

/// The cost of a run on `system` (a system spec: a catalog part gets its power and example price;
/// a file or a reference name neither) for `budget` at `price`.
pub fn of_run(
    system: &str,
    budget: TrainingBudget,
    seq_len: u64,
    throughput_samples_per_s: f64,
    devices: u64,
    price: Option<f64>,
) -> Result<RunCost, CmdError> {
    let cost = match resolve::system_spec(UserEntries::builtin(), system) {
        Ok((sys, _)) => RunCost::for_part(budget, seq_len, throughput_samples_per_s, devices, sys, price),
        Err(_) => RunCost::of(budget, seq_len, throughput_samples_per_s, devices, None, price),
    };
    cost.map_err(|err| CmdError::Usage(format!("cost: {err}")))
}

/// The cost columns of a table row: device-hours [h], energy [MWh], money in the price's currency (the
/// example prices are US dollars; `(example price)` marks one).
pub const COLUMNS: [&str; 3] = ["device-hours [h]", "energy [MWh]", "cost [price × device-hours]"];

/// [`COLUMNS`]' cells of `c`.
pub fn cells(c: &RunCost) -> Vec<String> {
    let money = match c.total {
        Some(t) if c.price_is_example => format!("{t:.0} (example price)"),
        Some(t) => format!("{t:.0}"),
        None => "-".into(),
    };
    vec![format!("{:.0}", c.gpu_hours), c.energy_mwh.map_or("-".into(), |m| format!("{m:.1}")), money]
}

/// Adds the cost columns to a table of result rows (`costs` one per row; none: unchanged). `exact`:
/// full precision (CSV: `gpu_hours`, `energy_mwh`, `price_per_device_hour`, `cost_total`).
pub fn add_columns(t: &mut crate::table::Table, costs: &[RunCost], exact: bool) {
    if costs.is_empty() {
        return;
    }
    add_optional_columns(t, &costs.iter().map(Some).collect::<Vec<_>>(), exact);
}

/// [`add_columns`] where a row may have no cost (no configuration): its cells stay empty (`-` in
/// a table).
pub fn add_optional_columns(t: &mut crate::table::Table, costs: &[Option<&RunCost>], exact: bool) {
    if exact {
        t.header.extend(["gpu_hours", "energy_mwh", "price_per_device_hour", "cost_total"].map(String::from));
    } else {
        t.header.extend(COLUMNS.map(String::from));
    }
    let num = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for (row, c) in t.rows.iter_mut().zip(costs) {
        match c {
            Some(c) if exact => {
                row.extend([num(Some(c.gpu_hours)), num(c.energy_mwh), num(c.price_per_device_hour), num(c.total)])
            }
            Some(c) => row.extend(cells(c)),
            None if exact => row.extend(std::iter::repeat_n(String::new(), 4)),
            None => row.extend(std::iter::repeat_n("-".to_string(), COLUMNS.len())),
        }
    }
}

/// What a table's cost columns are based on, in words: budget days aside, the power and the price.
pub fn basis(c: &RunCost) -> String {
    let power = c
        .power
        .as_ref()
        .map_or("no board power in the catalog".to_string(), |(w, s)| format!("{w} W per device ({s})"));
    let price = match (c.price_per_device_hour, &c.price_source) {
        (Some(p), Some(s)) => format!("{p} per device-hour, {s}"),
        _ => "no price (give --price-per-device-hour)".to_string(),
    };
    format!("energy at {power}; hosts, network and cooling not counted; money at {price}")
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
        (Some(t), Some(p)) if c.price_is_example => {
            format!(", {t:.0} at {p} per device-hour ({})", c.price_source.as_deref().unwrap_or("example, not a quote"))
        }
        (Some(t), Some(p)) => format!(", {t:.0} at {p} per device-hour"),
        _ => String::new(),
    };
    format!("{:.0} device-hours over {:.1} days, {energy}{total}", c.gpu_hours, c.days)
}
