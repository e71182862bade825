//! The explorer's URL query keys and their values. Every input of the page lives in the query, so
//! a URL is a permalink and back/forward restore the view:
//!
//! | key | what | default |
//! |---|---|---|
//! | `model` | model catalog id | `gpt3_1T` |
//! | `system` | system catalog id | `ref-H200` |
//! | `nvs` | scale-up (NVLink) domain size [devices]; empty: the system's | `8` |
//! | `gpus` | device count | `4096` |
//! | `batch` | global batch [samples] | `4096` |
//! | `strategies` | comma-separated (`1d,2d,2d-seqp`) | all three |
//! | `top` | configurations listed | `10` |
//! | `budget`, `unit` | training budget and its unit (`tokens`/`samples`); empty: the model's | |
//! | `list` | shown list: `all` or a strategy | `all` |
//! | `sel` | selected configuration ([`fmperf_core::explore::code`]) | the best |
//! | `tab` | detail panel: `breakdown`, `layers`, `compare`, `own` | `breakdown` |
//! | `cmp` | configurations to compare: `model~system~nvs~batch~config`, comma-separated | |
//! | `own.s`, `own.tp`, `own.tp2`, `own.pp`, `own.mbs`, `own.nb`, `own.nv` | "try your own" form | |
//!
//! Values are kept as typed (even when invalid), so nothing a user entered is lost on reload.

use fmperf_core::explore::inputs::ExploreFields;
use fmperf_core::explore::own::OwnFields;
use fmperf_core::explore::parse_candidate;
use fmperf_core::reference::Candidate;
use fmperf_core::{Error, Strategy};

use crate::url_state::Query;

/// Model id.
pub const MODEL: &str = "model";
/// System id.
pub const SYSTEM: &str = "system";
/// Domain size.
pub const DOMAIN: &str = "nvs";
/// Devices.
pub const GPUS: &str = "gpus";
/// Global batch.
pub const BATCH: &str = "batch";
/// Strategies.
pub const STRATEGIES: &str = "strategies";
/// Top-k.
pub const TOP: &str = "top";
/// Budget amount.
pub const BUDGET: &str = "budget";
/// Budget unit.
pub const UNIT: &str = "unit";
/// Shown list.
pub const LIST: &str = "list";
/// Selected configuration.
pub const SEL: &str = "sel";
/// Detail tab.
pub const TAB: &str = "tab";
/// Compared configurations.
pub const CMP: &str = "cmp";

/// The scenario keys (what a saved scenario holds and what changing the scenario rewrites).
pub const SCENARIO_KEYS: [&str; 9] = [MODEL, SYSTEM, DOMAIN, GPUS, BATCH, STRATEGIES, TOP, BUDGET, UNIT];

/// Keys of the "try your own" form, with the own-form field each fills.
pub const OWN_KEYS: [(&str, &str); 7] = [
    ("own.s", fmperf_core::explore::own::field::STRATEGY),
    ("own.tp", fmperf_core::explore::own::field::TP),
    ("own.tp2", fmperf_core::explore::own::field::TP2),
    ("own.pp", fmperf_core::explore::own::field::PP),
    ("own.mbs", fmperf_core::explore::own::field::MBS),
    ("own.nb", fmperf_core::explore::own::field::NB),
    ("own.nv", fmperf_core::explore::own::field::NV),
];

/// The form field (core name) of a URL key.
pub fn form_field(key: &str) -> &str {
    match key {
        DOMAIN => fmperf_core::explore::inputs::field::DOMAIN,
        UNIT => fmperf_core::explore::inputs::field::BUDGET,
        other => other,
    }
}

/// The scenario fields of a query, with the defaults for absent keys.
pub fn fields_from_query(q: &Query) -> ExploreFields {
    let get = |k: &str, default: String| q.get(k).map(str::to_string).unwrap_or(default);
    let d = ExploreFields::default_scenario();
    ExploreFields {
        model: get(MODEL, d.model),
        system: get(SYSTEM, d.system),
        domain: get(DOMAIN, d.domain),
        gpus: get(GPUS, d.gpus),
        batch: get(BATCH, d.batch),
        strategies: get(STRATEGIES, d.strategies),
        top: get(TOP, d.top),
        budget: get(BUDGET, d.budget),
        budget_unit: get(UNIT, d.budget_unit),
    }
}

/// The text of one scenario key in `f`.
pub fn field_text(f: &ExploreFields, key: &str) -> String {
    match key {
        MODEL => f.model.clone(),
        SYSTEM => f.system.clone(),
        DOMAIN => f.domain.clone(),
        GPUS => f.gpus.clone(),
        BATCH => f.batch.clone(),
        STRATEGIES => f.strategies.clone(),
        TOP => f.top.clone(),
        BUDGET => f.budget.clone(),
        UNIT => f.budget_unit.clone(),
        _ => String::new(),
    }
}

/// Sets one scenario key in `f`.
pub fn set_field(f: &mut ExploreFields, key: &str, value: String) {
    match key {
        MODEL => f.model = value,
        SYSTEM => f.system = value,
        DOMAIN => f.domain = value,
        GPUS => f.gpus = value,
        BATCH => f.batch = value,
        STRATEGIES => f.strategies = value,
        TOP => f.top = value,
        BUDGET => f.budget = value,
        UNIT => f.budget_unit = value,
        _ => {}
    }
}

/// Writes every scenario key of `f` into `q` (so a permalink does not depend on defaults), and
/// drops the selection, which belongs to the previous scenario.
pub fn write_scenario(q: &mut Query, f: &ExploreFields) {
    for key in SCENARIO_KEYS {
        let v = field_text(f, key);
        if v.is_empty() && matches!(key, BUDGET | UNIT) {
            q.remove(key);
        } else {
            q.set(key, &v);
        }
    }
    q.remove(SEL);
}

/// The query string of a scenario alone (what a saved scenario keeps).
pub fn scenario_query(f: &ExploreFields) -> String {
    let mut q = Query::default();
    write_scenario(&mut q, f);
    q.to_search()
}

/// The "try your own" fields of a query (strategy defaults to `1d`, TP 8, PP 16, micro-batch 1).
pub fn own_from_query(q: &Query) -> OwnFields {
    let get = |k: &str, d: &str| q.get(k).unwrap_or(d).to_string();
    OwnFields {
        strategy: get("own.s", "1d"),
        tp: get("own.tp", "8"),
        tp2: get("own.tp2", ""),
        pp: get("own.pp", "16"),
        mbs: get("own.mbs", "1"),
        nb: get("own.nb", ""),
        nv: get("own.nv", ""),
    }
}

/// The shown list: `None` for the merged list, else one strategy.
pub fn list_from_query(q: &Query) -> Option<Strategy> {
    q.get(LIST).and_then(|s| s.parse().ok())
}

/// One configuration to compare: a scenario (model, system, domain, batch) and a configuration;
/// the device count is the configuration's.
#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    /// Model id.
    pub model: String,
    /// System id.
    pub system: String,
    /// Domain size [devices].
    pub domain: u64,
    /// Global batch [samples].
    pub batch: u64,
    /// The configuration.
    pub candidate: Candidate,
}

/// Largest number of compared configurations.
pub const MAX_PINS: usize = 4;

impl Pin {
    /// The text form `model~system~nvs~batch~config`.
    pub fn to_text(&self) -> String {
        format!(
            "{}~{}~{}~{}~{}",
            self.model,
            self.system,
            self.domain,
            self.batch,
            fmperf_core::explore::format_candidate(&self.candidate)
        )
    }

    /// Parses the text form.
    pub fn parse(text: &str) -> Result<Pin, Error> {
        let parts: Vec<&str> = text.split('~').collect();
        let [model, system, domain, batch, config] = parts.as_slice() else {
            return Err(Error::invalid(CMP, text, "must be model~system~nvs~batch~config"));
        };
        let num = |s: &str| s.parse::<u64>().ok().filter(|&v| v > 0);
        let (Some(domain), Some(batch)) = (num(domain), num(batch)) else {
            return Err(Error::invalid(CMP, text, "domain size and batch must be positive whole numbers"));
        };
        Ok(Pin {
            model: model.to_string(),
            system: system.to_string(),
            domain,
            batch,
            candidate: parse_candidate(config)?,
        })
    }
}

/// The compared configurations of a query (unparseable entries are reported, not dropped).
pub fn pins_from_query(q: &Query) -> Vec<Result<Pin, (String, Error)>> {
    q.get(CMP)
        .unwrap_or("")
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .take(MAX_PINS)
        .map(|s| Pin::parse(s).map_err(|e| (s.to_string(), e)))
        .collect()
}

/// The pin texts of the `cmp` key, in order.
pub fn pin_items(q: &Query) -> Vec<String> {
    q.get(CMP).unwrap_or("").split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Sets the `cmp` key to `items` (removes it when empty).
fn set_pin_items(q: &mut Query, items: &[String]) {
    if items.is_empty() { q.remove(CMP) } else { q.set(CMP, &items.join(",")) }
}

/// Adds a pin unless present; when [`MAX_PINS`] are pinned already, the oldest goes if
/// `drop_oldest`, else nothing is added.
pub fn add_pin(q: &mut Query, text: &str, drop_oldest: bool) {
    let mut items = pin_items(q);
    if items.iter().any(|x| x == text) {
        return;
    }
    if items.len() >= MAX_PINS {
        if !drop_oldest {
            return;
        }
        items.remove(0);
    }
    items.push(text.to_string());
    set_pin_items(q, &items);
}

/// Removes a pin.
pub fn remove_pin(q: &mut Query, text: &str) {
    let mut items = pin_items(q);
    items.retain(|x| x != text);
    set_pin_items(q, &items);
}
