//! The explorer's URL query keys and their values. Every input of the page lives in the query, so
//! a URL is a permalink and back/forward restore the view:
//!
//! | key | what | default |
//! |---|---|---|
//! | `model` | model id (catalog or the user's) | `llama3-70b` |
//! | `system` | system spec: id, optionally with the CLI's options `,domain=…,nics=…,precision=…,vector=…,scale_up=…,scale_out=…` | `nvidia_h100_sxm5_80gb` |
//! | `nics`, `precision`, `vector`, `scale_up`, `scale_out` | one system option each (read into `system`; the page writes them inside `system`) | |
//! | `domain` | scale-up domain size [devices]; empty or absent: the system's (old spellings `nvs`, `nvlink` read too) | |
//! | `gpus` | device count (`1024`, `1k`, `2,304`; a suffix is a power of ten, `2k` = 2,000, said under the field) | `1024` |
//! | `batch` | global batch [samples]; empty: the model's own | the model's own |
//! | `strategies` | comma-separated (`1d,2d,2d-seqp`) | all three |
//! | `top` | configurations listed | `10` |
//! | `budget`, `unit` | training budget (`15T`, `1e12`) and its unit (`tokens`/`samples`); empty: the model's | |
//! | `list` | shown list: `all` or a strategy | `all` |
//! | `only` | `mainstream`: only strategies Megatron/NeMo, torchtitan and MaxText run (no SUMMA 2D) | all |
//! | `sel` | selected configuration ([`fmperf_core::search::code`]) | the best |
//! | `tab` | detail panel: `breakdown`, `layers`, `compare`, `own` | `breakdown` |
//! | `cmp` | configurations to compare: `model~system~domain~batch~config`, comma-separated ([`pins`]) | |
//! | `moe.dispatcher`, `moe.load`, `moe.a2a_overlap`, `moe.fp8_dispatch` | the Mixture-of-Experts controls ([`moe_keys`]) | the defaults |
//! | `price` | your price per device-hour, for the scenario's part ([`crate::run_cost::PRICE_KEY`]); empty: the part's example price | |
//! | `rank` | order of the compared configurations: `cost` (the whole run's money) or `time` ([`crate::run_cost::RANK_KEY`]) | `time` |
//! | `own.s`, `own.tp`, `own.tp2`, `own.pp`, `own.mbs`, `own.nb`, `own.nv` | "try your own" form | |
//!
//! Values are kept as typed (even when invalid), so nothing a user entered is lost on reload.
//!
//! **Defaults and old permalinks.** A fresh page opens in extended mode on [`page_default`];
//! reference mode without a scenario shows the published study's ([`legacy`]). A
//! query naming any explorer key but no `mode` ([`crate::mode::is_legacy`]) was written when
//! reference mode and the published study's scenario were the defaults: it is read in reference
//! mode, and its absent scenario keys take the old defaults ([`legacy`]). A query that names its
//! mode was written by this page (or by hand): its absent scenario keys take that mode's defaults
//! ([`defaults_for`]), never the old ones. Every write in the explorer fills in the scenario
//! keys the query lacks with the scenario shown ([`keep_scenario`]), so a click on a tab, a list
//! or the mode never changes the scenario. An absent `domain` is the system's own domain
//! (GB200 NVL72: 72), except on the reference's preset systems, whose files the published study
//! always overrode with 8 ([`default_domain`]).

pub mod moe_keys;
pub mod pins;

use fmperf_core::explore::own::OwnFields;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::vocab::Candidate;
use fmperf_core::{Error, Strategy};

use crate::mode::{self, MODE_KEY};
use crate::number::{normalize_amount, normalize_count};
use crate::query::Query;
use crate::system_spec;
use moe_keys::{MOE_KEYS, moe_text};

/// Model id.
pub const MODEL: &str = "model";
/// System spec.
pub const SYSTEM: &str = "system";
/// Domain size.
pub const DOMAIN: &str = "domain";
/// Old spellings of [`DOMAIN`], still read.
pub const DOMAIN_ALIASES: [&str; 2] = ["nvs", "nvlink"];
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
/// Row filter: `mainstream` lists only strategies that Megatron/NeMo, torchtitan and MaxText run.
pub const ONLY: &str = "only";

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
        DOMAIN => fmperf_core::resolve::form::field::DOMAIN,
        UNIT => fmperf_core::resolve::form::field::BUDGET,
        other => other,
    }
}

/// Whether `k` is one of the explorer's keys (a permalink naming one names a scenario).
pub fn is_explorer_key(k: &str) -> bool {
    SCENARIO_KEYS.contains(&k)
        || DOMAIN_ALIASES.contains(&k)
        || system_spec::OPTION_KEYS.contains(&k)
        || matches!(k, LIST | SEL | TAB | CMP | ONLY)
        || MOE_KEYS.contains(&k)
        || k.starts_with("own.")
}

/// The explorer's mode when the query names none: reference for an old permalink
/// ([`mode::is_legacy`]), else extended.
pub fn default_mode(q: &Query) -> ModeKind {
    mode::default_for(q)
}

/// The explorer's heading and the line under it.
pub const TITLE: &str = "Explorer";
/// See [`TITLE`].
pub const INTRO: &str = "Every parallel configuration, searched in your browser.";

/// The mode the explorer searches `q` in: the URL's `mode` and `ext`, else [`default_mode`]
/// (with no switches changed), read by core, or the problem of what the URL holds.
pub fn mode_from_query(q: &Query) -> Result<fmperf_core::mode::Mode, Error> {
    let (m, e) = mode::texts(q, &mode_defaults(q));
    if let Some(problem) = e.as_deref().and_then(mode::comma_problem) {
        return Err(problem);
    }
    let mode = fmperf_core::mode::Mode::from_text(m.as_deref(), e.as_deref())?;
    // The MoE switches count only in extended mode, as `ext` does ([`mode::texts`]): switching
    // to reference mode leaves their keys waiting in the URL for the way back, neither dropped
    // nor an error the toggle would have caused.
    let moe = if mode.kind().takes_switches() { moe_text(q)? } else { None };
    mode.with_moe_text(moe.as_deref())
}

/// The explorer's mode defaults for the mode panel: the mode a URL without `mode` is read in, no
/// switch text of its own.
pub fn mode_defaults(q: &Query) -> (Option<String>, Option<String>) {
    (Some(default_mode(q).as_str().to_string()), None)
}

/// The scenario of a fresh page: Llama 3 70B on 1,024 H100 SXM5 80 GB (their own 8-GPU NVLink
/// domain), the model's own global batch (empty field), all three strategies, top 10 — a run
/// people make today, in extended mode.
pub fn page_default() -> ExploreFields {
    ExploreFields {
        model: "llama3-70b".into(),
        system: "nvidia_h100_sxm5_80gb".into(),
        domain: String::new(),
        gpus: "1024".into(),
        batch: String::new(),
        strategies: "1d,2d,2d-seqp".into(),
        top: "10".into(),
        budget: String::new(),
        budget_unit: String::new(),
    }
}

/// The defaults an old permalink was written against: `gpt3_1T` on the reference's H200 file,
/// NVLink domains of 8, 4,096 GPUs, global batch 4,096, all three strategies, top 10 (the
/// published study's setting, reference mode).
pub fn legacy() -> ExploreFields {
    ExploreFields {
        model: "gpt3_1T".into(),
        system: "ref-H200".into(),
        domain: "8".into(),
        gpus: "4096".into(),
        batch: "4096".into(),
        strategies: "1d,2d,2d-seqp".into(),
        top: "10".into(),
        budget: String::new(),
        budget_unit: String::new(),
    }
}

/// The domain size as the query holds it (`domain`, else an old spelling).
fn domain_text(q: &Query) -> Option<&str> {
    q.get(DOMAIN).or_else(|| DOMAIN_ALIASES.iter().find_map(|k| q.get(k)))
}

/// The defaults of the scenario keys a query leaves out: the published study's ([`legacy`]) for
/// an old permalink (a scenario but no `mode`) and in reference mode, else [`page_default`].
pub fn defaults_for(q: &Query) -> ExploreFields {
    if mode::reads_published_model(q) { legacy() } else { page_default() }
}

/// The domain of a query without a `domain` key: the defaults' (`default`) when the query names
/// no system or one of the reference's preset systems (`ref-…`, whose shipped domain the
/// published study always overrode), else empty: the named system's own scale-up domain.
pub fn default_domain(q: &Query, default: String) -> String {
    match q.get(SYSTEM).map(system_spec::id_of) {
        Some(id) if !id.starts_with("ref-") => String::new(),
        _ => default,
    }
}

/// The scenario fields of a query, with the defaults for absent keys ([`defaults_for`],
/// [`default_domain`]). System options given as their own keys (`nics=2`) are folded into the
/// system spec.
pub fn fields_from_query(q: &Query) -> ExploreFields {
    let d = defaults_for(q);
    let get = |k: &str, default: String| q.get(k).map(str::to_string).unwrap_or(default);
    let mut system = get(SYSTEM, d.system);
    for key in system_spec::OPTION_KEYS {
        if let Some(v) = q.get(key) {
            system = system_spec::set_option(&system, key, v);
        }
    }
    ExploreFields {
        model: get(MODEL, d.model),
        system,
        domain: domain_text(q).map(str::to_string).unwrap_or_else(|| default_domain(q, d.domain)),
        gpus: get(GPUS, d.gpus),
        batch: get(BATCH, d.batch),
        strategies: get(STRATEGIES, d.strategies),
        top: get(TOP, d.top),
        budget: get(BUDGET, d.budget),
        budget_unit: get(UNIT, d.budget_unit),
    }
}

/// The fields as core validates them: counts typed as `4k`, `1e12` or `2^12` turned into digits,
/// budgets as `15T` expanded, and an empty batch replaced by the model's own (`own_batch`, when
/// the model has one; else left empty, and core says it is required).
pub fn for_core(f: &ExploreFields, own_batch: Option<u64>) -> ExploreFields {
    let batch = match (f.batch.trim().is_empty(), own_batch) {
        (true, Some(b)) => b.to_string(),
        _ => normalize_count(&f.batch),
    };
    ExploreFields {
        model: f.model.clone(),
        system: f.system.clone(),
        domain: normalize_count(&f.domain),
        gpus: normalize_count(&f.gpus),
        batch,
        strategies: f.strategies.clone(),
        top: normalize_count(&f.top),
        budget: normalize_amount(&f.budget),
        budget_unit: f.budget_unit.clone(),
    }
}

/// Largest training budget accepted [tokens]: 10¹⁷, over a thousand times the largest published
/// training runs (tens of trillions of tokens); more is a typing slip (`1e300`), not a plan.
pub const MAX_BUDGET_TOKENS: f64 = 1e17;

/// A typed budget (`typed`, resolved into `spec`) that no training run has: less than one step
/// of the global batch (`1.5` tokens: 0.00 days), or more than [`MAX_BUDGET_TOKENS`]. The
/// model's own budget (an empty field) is never refused.
pub fn check_budget(spec: &fmperf_core::resolve::explorer::ExploreSpec, typed: &str) -> Result<(), Error> {
    if spec.budget_is_default {
        return Ok(());
    }
    let l = spec.model.l.max(1);
    let samples = spec.budget.samples(l);
    let tokens = samples * l as f64;
    let field = fmperf_core::resolve::form::field::BUDGET;
    if samples < spec.global_batch as f64 {
        return Err(Error::invalid(
            field,
            typed.trim(),
            format!(
                "is less than one step: one global batch is {} samples of {} tokens ({} tokens)",
                crate::fmt::count(spec.global_batch),
                crate::fmt::count(l),
                crate::fmt::compact(spec.global_batch as f64 * l as f64)
            ),
        )
        .with_hint("e.g. 15T tokens; empty: the model's own budget"));
    }
    if tokens > MAX_BUDGET_TOKENS {
        return Err(Error::invalid(
            field,
            typed.trim(),
            format!(
                "is {} tokens, more than 10^17 (a thousand times the largest training runs)",
                crate::fmt::compact(tokens)
            ),
        )
        .with_hint("e.g. 15T tokens; empty: the model's own budget"));
    }
    Ok(())
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

/// Writes every scenario key of `f` into `q` (so a permalink does not depend on defaults), with
/// the mode in force when the query names none (so it is not mistaken for an old permalink), and
/// drops the selection, which belongs to the previous scenario, and the old spellings.
pub fn write_scenario(q: &mut Query, f: &ExploreFields) {
    let before = q.clone();
    for key in SCENARIO_KEYS {
        let v = field_text(f, key);
        if v.is_empty() && matches!(key, BUDGET | UNIT) {
            q.remove(key);
        } else {
            q.set(key, &v);
        }
    }
    for key in DOMAIN_ALIASES.iter().chain(system_spec::OPTION_KEYS.iter()) {
        q.remove(key);
    }
    mode::pin_on_write(&before, q);
    q.remove(SEL);
}

/// The scenario keys every explorer URL the page writes holds (the budget and its unit are
/// written only when set: absent, they are the model's).
pub const REQUIRED_KEYS: [&str; 7] = [MODEL, SYSTEM, DOMAIN, GPUS, BATCH, STRATEGIES, TOP];

/// Whether `q` is (or stays) on the explorer view.
fn on_explorer(q: &Query) -> bool {
    matches!(q.get("view"), None | Some("explorer"))
}

/// Called on every write of the URL: a write in the explorer (a results or detail tab, the list
/// filter, a selection, the mode) that leaves out scenario keys gets them from the scenario shown
/// before it (`before`), so the written URL names its whole scenario and reads back as what was
/// on screen, in either mode. Keys the write sets are kept; the budget is never filled in (a
/// write that removes it means the model's).
pub fn keep_scenario(before: &Query, after: &mut Query) {
    if !on_explorer(before) || !on_explorer(after) || before == after {
        return;
    }
    let missing = |q: &Query, k: &str| q.get(k).is_none() && !(k == DOMAIN && domain_text(q).is_some());
    if REQUIRED_KEYS.iter().all(|k| !missing(after, k)) {
        return;
    }
    let shown = fields_from_query(before);
    for key in REQUIRED_KEYS {
        if missing(after, key) {
            after.set(key, &field_text(&shown, key));
        }
    }
}

/// The query string of a scenario alone (what a saved scenario keeps).
pub fn scenario_query(f: &ExploreFields) -> String {
    let mut q = Query::default();
    write_scenario(&mut q, f);
    q.remove(MODE_KEY);
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

/// "Try your own" with the scenario's best configuration (`best`, the first row of the results)
/// for every field the URL does not set (`own.*`), so the form opens on a layout that fits the
/// devices shown instead of a fixed TP 8 · PP 16 that may not divide them; the placement and
/// SUMMA panels stay empty (the fastest). Without results, [`own_from_query`].
pub fn own_or_best(q: &Query, best: Option<&Candidate>) -> OwnFields {
    let Some(c) = best else { return own_from_query(q) };
    let get = |k: &str, d: String| q.get(k).map_or(d, str::to_string);
    OwnFields {
        strategy: get("own.s", c.strategy.as_str().to_string()),
        tp: get("own.tp", c.tp1.to_string()),
        tp2: get("own.tp2", if c.tp2 > 1 { c.tp2.to_string() } else { String::new() }),
        pp: get("own.pp", c.pp.to_string()),
        mbs: get("own.mbs", c.mbs.to_string()),
        nb: get("own.nb", String::new()),
        nv: get("own.nv", String::new()),
    }
}

/// The shown list: `None` for the merged list, else one strategy.
pub fn list_from_query(q: &Query) -> Option<Strategy> {
    q.get(LIST).and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explorer::pins::add_pin;
    use fmperf_core::search::code::parse_candidate;

    fn sample() -> ExploreFields {
        ExploreFields {
            model: "llama3-70b".into(),
            system: "nvidia_gb200_nvl72,nics=2,scale_out=50".into(),
            domain: "72".into(),
            gpus: "2,304".into(),
            batch: "4k".into(),
            strategies: "1d,2d-seqp".into(),
            top: "20".into(),
            budget: "15T".into(),
            budget_unit: "tokens".into(),
        }
    }

    #[test]
    fn every_scenario_key_round_trips_through_the_url() {
        let f = sample();
        let mut q = Query::default();
        write_scenario(&mut q, &f);
        let back = Query::parse(&q.to_search());
        assert_eq!(fields_from_query(&back), f);
        for key in SCENARIO_KEYS {
            let mut g = f.clone();
            set_field(&mut g, key, format!("x{key}"));
            assert_eq!(field_text(&g, key), format!("x{key}"));
            let mut q = Query::default();
            write_scenario(&mut q, &g);
            assert_eq!(field_text(&fields_from_query(&Query::parse(&q.to_search())), key), format!("x{key}"), "{key}");
        }
        // A saved scenario names no mode (the mode is the page's).
        assert!(!scenario_query(&f).contains("mode="));
    }

    #[test]
    fn the_domain_key_is_domain_and_the_old_spellings_are_read() {
        for (url, want) in [("?domain=72", "72"), ("?nvs=64", "64"), ("?nvlink=4", "4"), ("?domain=8&nvs=64", "8")] {
            assert_eq!(fields_from_query(&Query::parse(url)).domain, want, "{url}");
        }
        let mut q = Query::parse("?nvs=64&gpus=512");
        let f = fields_from_query(&q);
        write_scenario(&mut q, &f);
        assert_eq!(q.get(DOMAIN), Some("64"));
        assert_eq!(q.get("nvs"), None);
    }

    #[test]
    fn system_options_as_their_own_keys_fold_into_the_spec() {
        let q = Query::parse("?system=nvidia_gb200_nvl72&scale_out=50&nics=4&precision=fp8&vector=90&scale_up=900");
        let f = fields_from_query(&q);
        assert_eq!(f.system, "nvidia_gb200_nvl72,nics=4,precision=fp8,vector=90,scale_up=900,scale_out=50");
        let mut q2 = q.clone();
        write_scenario(&mut q2, &f);
        assert_eq!(q2.get("scale_out"), None);
        assert_eq!(fields_from_query(&q2).system, f.system);
    }

    #[test]
    fn old_permalinks_keep_the_old_defaults_and_reference_mode() {
        let q = Query::parse("?gpus=512");
        let f = fields_from_query(&q);
        assert_eq!(
            (f.model.as_str(), f.system.as_str(), f.batch.as_str(), f.domain.as_str()),
            ("gpt3_1T", "ref-H200", "4096", "8")
        );
        assert_eq!(default_mode(&q), ModeKind::Reference);
        let fresh = Query::parse("?view=explorer");
        assert_eq!(fields_from_query(&fresh), page_default());
        assert_eq!(fields_from_query(&Query::parse("?mode=extended")), page_default());
        // Reference mode's own default is the published study's scenario.
        assert_eq!(fields_from_query(&Query::parse("?mode=reference")), legacy());
        assert_eq!(default_mode(&fresh), ModeKind::Extended);
        // Editing an old permalink keeps it in reference mode.
        let mut q = Query::parse("?gpus=512");
        write_scenario(&mut q, &f);
        assert_eq!(q.get(MODE_KEY), Some("reference"));
        let mut q = Query::parse("?view=explorer");
        write_scenario(&mut q, &page_default());
        assert_eq!(q.get(MODE_KEY), Some("extended"));
    }

    #[test]
    fn switching_the_mode_keeps_the_scenario_shown() {
        for (from, to) in [("?mode=reference", "extended"), ("", "reference"), ("?view=explorer", "reference")] {
            let before = Query::parse(from);
            let mut after = before.clone();
            after.set(MODE_KEY, to);
            keep_scenario(&before, &mut after);
            assert_eq!(fields_from_query(&after), fields_from_query(&before), "{from} → {to}");
            assert_eq!(after.get(MODE_KEY), Some(to));
        }
        // Keys the write sets are kept; the studies view is left alone.
        let before = Query::parse("?mode=reference&gpus=64");
        let mut after = Query::parse("?mode=extended&gpus=64");
        keep_scenario(&before, &mut after);
        assert_eq!(fields_from_query(&after), fields_from_query(&before));
        assert_eq!(after.get(GPUS), Some("64"));
        let mut after = Query::parse("?view=studies&mode=reference");
        keep_scenario(&Query::parse("?view=studies"), &mut after);
        assert_eq!(after, Query::parse("?view=studies&mode=reference"));
    }

    /// What the page does on a write: the write, then [`keep_scenario`] and the mode's pin.
    fn click(before: &str, edit: impl FnOnce(&mut Query)) -> Query {
        let before = Query::parse(before);
        let mut after = before.clone();
        edit(&mut after);
        keep_scenario(&before, &mut after);
        mode::pin_on_write(&before, &mut after);
        Query::parse(&after.to_search())
    }

    #[test]
    fn every_click_keeps_the_scenario_shown() {
        // Issue 29: on the default page, a results tab wrote `?list=1d&mode=extended`, read back
        // as GPT3-1T on the reference H200 × 4,096.
        let clicks: [(&str, fn(&mut Query)); 7] = [
            ("list", |q| q.set(LIST, "1d")),
            ("detail tab", |q| q.set(TAB, "layers")),
            ("only mainstream", |q| q.set(ONLY, "mainstream")),
            ("selection", |q| q.set(SEL, "1d.dp64.tp8.pp2.mbs1.nv8x1x1")),
            ("pin", |q| add_pin(q, "llama3-70b~nvidia_h100_sxm5_80gb~8~2048~1d.dp64.tp8.pp2.mbs1.nv8x1x1", true)),
            ("own form", |q| q.set("own.tp", "4")),
            ("mode", |q| q.set(MODE_KEY, "reference")),
        ];
        let starts = [
            "",
            "?view=explorer",
            "?mode=extended",
            "?mode=reference",
            "?gpus=512",
            "?mode=extended&system=nvidia_gb200_nvl72&gpus=2304&batch=4k&list=2d",
        ];
        for start in starts {
            let shown = fields_from_query(&Query::parse(start));
            let mut url = start.to_string();
            for (what, edit) in clicks {
                let after = click(&url, edit);
                assert_eq!(fields_from_query(&after), shown, "{what} on {url}");
                for key in REQUIRED_KEYS {
                    assert!(after.get(key).is_some(), "{what} on {url} writes {key}: {}", after.to_search());
                }
                assert!(after.get(MODE_KEY).is_some(), "{what} on {url}");
                url = after.to_search();
            }
        }
        // The URL the old page wrote for that click now reads as the page's defaults.
        assert_eq!(fields_from_query(&Query::parse("?list=1d&mode=extended")), page_default());
        assert_eq!(fields_from_query(&Query::parse("?tab=layers&only=mainstream&mode=extended")), page_default());
    }

    #[test]
    fn a_system_without_a_domain_key_has_its_own_domain() {
        for url in [
            "?system=nvidia_gb200_nvl72",
            "?mode=extended&system=nvidia_gb200_nvl72&gpus=2304",
            "?mode=reference&system=nvidia_gb200_nvl72",
            "?system=nvidia_gb200_nvl72,nics=2&gpus=512",
        ] {
            let f = fields_from_query(&Query::parse(url));
            assert_eq!(f.domain, "", "{url}");
            let spec = for_core(&f, Some(2048)).resolve_in(&fmperf_core::mode::Mode::Extended(Default::default()));
            assert_eq!(spec.expect(url).system.domain_size, 72, "{url}");
        }
        // The published study's presets and the old default system keep its domain of 8.
        assert_eq!(fields_from_query(&Query::parse("?system=ref-H200&gpus=512")).domain, "8");
        assert_eq!(fields_from_query(&Query::parse("?gpus=512")).domain, "8");
        // A saved scenario pins no domain the user did not type.
        let q = scenario_query(&fields_from_query(&Query::parse("?mode=extended&system=nvidia_gb200_nvl72")));
        assert_eq!(fields_from_query(&Query::parse(&format!("{q}&mode=extended"))).domain, "");
        assert!(q.contains("domain=&") || q.ends_with("domain="), "{q}");
    }

    #[test]
    fn typed_numbers_reach_core_as_digits_and_an_empty_batch_is_the_models() {
        let c = for_core(&sample(), None);
        assert_eq!((c.gpus.as_str(), c.batch.as_str(), c.domain.as_str()), ("2304", "4000", "72"));
        if let Err(e) = c.resolve_in(&fmperf_core::mode::Mode::Reference) {
            assert!(e.iter().all(|e| !matches!(e.field(), Some("gpus" | "batch" | "domain" | "budget"))), "{e:?}");
        }
        let mut f = page_default();
        f.gpus = "1k".into();
        let c = for_core(&f, crate::batch::own_batch(&f.model).map(|b| b.0));
        assert_eq!((c.gpus.as_str(), c.batch.as_str()), ("1000", "2048"));
        let spec = c.resolve_in(&fmperf_core::mode::Mode::Extended(Default::default()));
        assert!(spec.is_ok(), "{spec:?}");
    }

    #[test]
    fn budgets_below_one_step_or_beyond_any_run_are_refused_at_the_field() {
        let mode = fmperf_core::mode::Mode::Extended(Default::default());
        let entries = fmperf_core::resolve::UserEntries::default();
        let spec = |budget: &str| {
            let mut f = page_default();
            f.budget = budget.into();
            crate::jobs::explore_spec(&f, &mode, &entries)
        };
        for bad in ["1.5", "1e300", "2e17"] {
            let e = spec(bad).expect_err(bad);
            assert_eq!(e[0].field(), Some("budget"), "{bad}: {e:?}");
            let m = crate::words::field_message(&e[0]);
            assert!(m.len() < 200, "{bad}: no 300-digit number: {m}");
        }
        assert!(crate::words::field_message(&spec("1.5").unwrap_err()[0]).contains("less than one step"));
        for good in ["", "15T", "1e12", "8e16"] {
            assert!(spec(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn own_list_selection_and_tab_keys_round_trip() {
        let mut q = Query::default();
        for (k, _) in OWN_KEYS {
            q.set(k, &format!("v{k}"));
        }
        let o = own_from_query(&Query::parse(&q.to_search()));
        assert_eq!([o.strategy, o.tp, o.tp2, o.pp, o.mbs, o.nb, o.nv], OWN_KEYS.map(|(k, _)| format!("v{k}")));
        for s in Strategy::ALL {
            let mut q = Query::default();
            q.set(LIST, s.as_str());
            assert_eq!(list_from_query(&Query::parse(&q.to_search())), Some(s));
        }
        assert_eq!(list_from_query(&Query::parse("?list=all")), None);
    }

    #[test]
    fn try_your_own_opens_on_the_best_row_and_keeps_what_the_user_typed() {
        let best = parse_candidate("1d.dp4.tp4.pp4.mbs2.nv4x1x1").expect("a candidate");
        let o = own_or_best(&Query::parse("?model=llama3-8b&gpus=64"), Some(&best));
        let want =
            |s: &str, tp: &str, pp: &str, mbs: &str| (s.to_string(), tp.to_string(), pp.to_string(), mbs.to_string());
        assert_eq!((o.strategy, o.tp, o.pp, o.mbs), want("1d", "4", "4", "2"));
        assert!(o.tp2.is_empty() && o.nb.is_empty() && o.nv.is_empty());
        // A field the user set wins; the others stay the best row's.
        let o = own_or_best(&Query::parse("?own.pp=2"), Some(&best));
        assert_eq!((o.strategy, o.tp, o.pp, o.mbs), want("1d", "4", "2", "2"));
        // Without results, the URL's fields (and the old defaults).
        let q = Query::parse("?gpus=64");
        assert_eq!(own_or_best(&q, None), own_from_query(&q));
        assert_eq!(own_from_query(&q).pp, "16");
    }
}
