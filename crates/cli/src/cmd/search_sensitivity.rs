//! `fmperf search --sensitivity`: "what would help most" — the search re-run with each system
//! feature at ×0.5 and ×2 ([`fmperf_core::sensitivity`]), its points split over threads by point
//! (the core's parts, merged by the core), written as a table section, a `sensitivity` JSON key
//! or (CSV) one row per point.

use std::io::Write;

use fmperf_core::catalog::TrainingBudget;
use fmperf_core::cost::ExtendedSetup;
use fmperf_core::search::SearchSpec;
use fmperf_core::sensitivity::{Base, Sensitivity, SensitivityResult};
use serde_json::{Value, json};

use super::search::SearchRequest;
use super::{CmdError, CmdResult};
use crate::table::Table;

/// The flag's help lines.
pub const HELP: &str = "\
  --sensitivity    also answer \"what would help most\": the search re-run with each system feature
                   at x0.5 and x2 of its own value (matrix FLOP rate at every precision, HBM bandwidth,
                   HBM capacity, scale-up and scale-out bandwidth, scale-up domain size), each
                   re-searched (the best layout may change), with the training days on the model's
                   budget (or --tokens/--samples), the change against the scenario [%], the best
                   layout, the device-hours and energy, and with --price-per-device-hour the whole
                   run's cost and its change against the scenario; sorted by effect, the largest saving first. Table: a section after
                   the results; JSON: a \"sensitivity\" key {\"budget\", \"baseline\", \"features\":
                   [{\"feature\", \"unit\", \"value\", \"saving_pct\", \"sweep_axis\", \"points\"}]};
                   CSV: one row per point instead of the result rows. A factor a system cannot take
                   (a domain of 1 halved) is a point with status impossible and why. `fmperf sweep
                   --axis` with the feature's `sweep_axis` draws the whole curve.
";

/// The model's training budget (the catalog's; fmperf's default 1e12 tokens for a model file that
/// the catalog does not know) and whether it is the default.
fn budget_of(model: &str) -> (TrainingBudget, bool) {
    match fmperf_core::resolve::builtin_model(model) {
        Ok(m) => (m.training_budget, false),
        Err(_) => (TrainingBudget::DEFAULT_TOKENS, true),
    }
}

/// What `--sensitivity` found for a request, with the budget its days are for.
pub struct BudgetedSensitivity {
    /// The points, sorted.
    pub result: SensitivityResult,
    /// The budget of the training days.
    pub budget: TrainingBudget,
    /// Whether the budget is fmperf's default (the model states none).
    pub default_budget: bool,
    /// Whether the budget is the one given (`--tokens`/`--samples`), not the model's.
    pub given_budget: bool,
}

/// Runs the sensitivity of the request's search (`spec`: any strategy's spec; `setup`: extended
/// mode's) on `req.threads` threads.
pub fn compute(
    req: &SearchRequest,
    spec: &SearchSpec,
    setup: Option<&ExtendedSetup>,
) -> Result<BudgetedSensitivity, CmdError> {
    // The budget given with the price (`--tokens`/`--samples`), else the model's own.
    let (budget, default_budget) = match req.cost {
        Some((b, _)) => (b, false),
        None => budget_of(&req.model),
    };
    let price = req.cost.and_then(|(_, p)| p);
    let base = Base {
        shape: spec.model,
        system: spec.system.clone(),
        extended: setup.cloned(),
        execution: req.execution,
        strategies: req.strategies.clone(),
        n_gpus: req.gpus,
        global_batch: req.global_batch,
        budget,
        power: crate::run_cost::power_of(&req.system),
        price_per_device_hour: price,
    };
    let threads = req.threads.clamp(1, crate::threads::MAX_THREADS) as u64;
    let whole = Sensitivity::new(base)?;
    let parts: Vec<Sensitivity> =
        (0..threads).map(|i| whole.clone().part(i, threads)).collect::<Result<_, fmperf_core::Error>>()?;
    let found = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|mut p| {
                scope.spawn(move || {
                    while !p.step(usize::MAX) {}
                    p.found()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a sensitivity thread panicked")).collect()
    });
    let result = whole.absorb(found)?.result();
    Ok(BudgetedSensitivity { result, budget, default_budget, given_budget: req.cost.is_some() })
}

impl BudgetedSensitivity {
    /// The JSON value of the `sensitivity` key: the core's object plus the budget.
    pub fn to_json(&self) -> Value {
        let mut v = self.result.to_json();
        v["budget"] = json!({
            "amount": match self.budget { TrainingBudget::Tokens(t) | TrainingBudget::Samples(t) => t },
            "unit": match self.budget { TrainingBudget::Tokens(_) => "tokens", TrainingBudget::Samples(_) => "samples" },
            "default": self.default_budget,
        });
        v
    }

    fn table(&self, exact: bool) -> Table {
        Table { header: self.result.columns(), rows: self.result.rows(exact) }
    }

    /// One row per point, every number at full precision.
    pub fn write_csv(&self, out: &mut dyn Write) -> CmdResult {
        write!(out, "{}", self.table(true).to_csv())?;
        Ok(())
    }

    /// The table section: a heading naming the budget, then the rows.
    pub fn write_table(&self, out: &mut dyn Write) -> CmdResult {
        let budget = if self.given_budget {
            format!("{} (as given)", self.budget.describe())
        } else if self.default_budget {
            format!("{} (fmperf's default: the catalog does not know the model)", self.budget.describe())
        } else {
            format!("{} (the model's own)", self.budget.describe())
        };
        writeln!(
            out,
            "\nwhat would help most: each system feature at x0.5 and x2, re-searched; training days on {budget}; \
             sorted by effect, the largest saving first"
        )?;
        write!(out, "{}", self.table(false).render())?;
        if let Some(p) = self.result.baseline.cost.as_ref().and_then(|c| c.price_per_device_hour) {
            writeln!(
                out,
                "cost at your {p} per device-hour at every point (the same devices: its change follows the days')"
            )?;
        }
        Ok(())
    }
}
