//! The text form of a sweep, shared by the CLI's flags and the page's URL, so a sweep written in
//! one runs the same in the other (`fmperf sweep --model gpt3_1T --system B200 --axis gpus=4..16384`
//! and `?view=studies&model=gpt3_1T&system=B200&axis=gpus=4..16384`).
//!
//! Keys (each optional except `model` and `system`):
//! * `model`: catalog id (`gpt3_1T`, `gpt2-xl`, …); `system`: catalog id, optionally with the
//!   mapping choices of the catalog's system-spec syntax: `,domain=K`, `,nics=N`, `,precision=P`,
//!   `,vector=TFLOP/s`, `,scale_up=GB/s`, `,scale_out=GB/s`;
//! * `strategy`: comma list of `1d`, `2d`, `2d-seqp` or `all` (default all);
//! * `gpus` (default 8), `nvlink` (domain size, default the system's), `precision`;
//! * `global-batch` (default 4096) or `per-device-batch` (see [`BatchRule`]);
//! * `fix`: restrictions `tp=8,pp=4,mbs=1,accum=1` for every point;
//! * `mode`: `reference` (default) or `extended`; `ext`: extended mode's switches that differ from
//!   the defaults, `key=value,…` ([`Mode::from_text`]);
//! * `axis`: one per axis, `KEY=VALUES` ([`Axis::parse`]).

use crate::catalog::{MappingOptions, parse_system_spec};
use crate::mode::Mode;
use crate::resolve::sweep_axis::{Axis, AxisKey};
use crate::resolve::sweep_spec::{BatchRule, Constraints, SweepSpec};
use crate::resolve::{ModelRef, Scenario, SystemRef};
use crate::vocab::MAX_DEVICES;
use crate::{Error, Strategy};

/// Default device count when no `gpus` value or axis is given.
pub const DEFAULT_GPUS: u64 = 8;
/// Default global batch [samples] (the reference's studies).
pub const DEFAULT_GLOBAL_BATCH: u64 = 4096;

/// A sweep as key/value text.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepText {
    /// Model catalog id.
    pub model: String,
    /// System catalog id (optionally `id,domain=K,...`).
    pub system: String,
    /// Strategies, comma-separated, or `all`.
    #[serde(default)]
    pub strategy: Option<String>,
    /// Devices [count].
    #[serde(default)]
    pub gpus: Option<String>,
    /// Scale-up domain size [devices].
    #[serde(default)]
    pub nvlink: Option<String>,
    /// Precision name.
    #[serde(default)]
    pub precision: Option<String>,
    /// Global batch [samples].
    #[serde(default, rename = "global-batch")]
    pub global_batch: Option<String>,
    /// Samples per device and micro-step.
    #[serde(default, rename = "per-device-batch")]
    pub per_device_batch: Option<String>,
    /// Restrictions `tp=…,pp=…,dp=…,mbs=…,tp1=…,tp2=…,accum=…`.
    #[serde(default)]
    pub fix: Option<String>,
    /// The mode: `reference` (default) or `extended`.
    #[serde(default)]
    pub mode: Option<String>,
    /// Extended mode's switches that differ from the defaults, `key=value,…`.
    #[serde(default)]
    pub ext: Option<String>,
    /// Axes `KEY=VALUES`, slowest first.
    #[serde(default)]
    pub axes: Vec<String>,
}

/// A positive whole number of at most [`MAX_DEVICES`] (devices, domains, batches and fixed
/// degrees share the bound: 2^32); a longer run of digits is told the bound, not "not a number".
fn positive(field: &str, text: &str) -> Result<u64, Error> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(n) if (1..=MAX_DEVICES).contains(&n) => Ok(n),
        Ok(0) => Err(Error::invalid(field, text, "must be a positive integer")),
        _ if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            Err(Error::invalid(field, text, format!("must be a positive integer of at most {MAX_DEVICES}")))
        }
        _ => Err(Error::invalid(field, text, "must be a positive integer")),
    }
}

/// Parses a strategy list (`1d,2d` or `all`).
pub fn parse_strategies(text: &str) -> Result<Vec<Strategy>, Error> {
    if text.trim().eq_ignore_ascii_case("all") {
        return Ok(Strategy::ALL.to_vec());
    }
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let s: Strategy = item.parse().map_err(|e: Error| match e {
            Error::UnknownName { name, known, .. } => {
                Error::invalid("strategy", name, format!("must be one of {} or all", known.join(", ")))
            }
            other => other,
        })?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(Error::invalid("strategy", text, "needs at least one strategy (1d, 2d, 2d-seqp or all)"));
    }
    Ok(out)
}

/// Parses restrictions `tp=8,pp=4,accum=2`; a key given twice with different values is an error
/// naming both.
pub fn parse_constraints(text: &str) -> Result<Constraints, Error> {
    let mut c = Constraints::default();
    let mut seen: Vec<(AxisKey, &str)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| {
            Error::invalid("fix", item, "must be written key=value").with_hint("e.g. tp=8,pp=4,mbs=1,accum=1")
        })?;
        let key = AxisKey::parse(k).map_err(|_| {
            Error::invalid("fix", k, "is not a restriction").with_hint("restrictions: tp, tp1, tp2, pp, dp, mbs, accum")
        })?;
        if !(key.is_constraint() || key == AxisKey::Accum) {
            return Err(Error::invalid("fix", k, "is not a restriction").with_hint(
                "restrictions: tp, tp1, tp2, pp, dp, mbs, accum; use an axis or another flag for the rest",
            ));
        }
        let value = positive(&format!("fix.{}", key.name()), v)?;
        match seen.iter().find(|(k, _)| *k == key) {
            Some((_, first)) if c.get(key) != Some(value) => {
                return Err(Error::given_twice("fix", key.name(), first, item));
            }
            Some(_) => {}
            None => seen.push((key, item)),
        }
        c.set(key, value);
    }
    Ok(c)
}

impl SweepText {
    /// The spec. `model` and `system` replace the catalog look-up of `self.model` / `self.system`
    /// when given (files read by the CLI). Errors name the key.
    pub fn to_spec(&self, model: Option<ModelRef>, system: Option<SystemRef>) -> Result<SweepSpec, Error> {
        let model = match model {
            Some(m) => m,
            None => ModelRef::Catalog(crate::resolve::builtin_model(&self.model)?.id.clone()),
        };
        // The spec's options apply to a given system too (the page passes the user's own entry
        // for a `my-system,scale_out=50` spec); only the catalog look-up of the id is replaced.
        let (system, opts) = match system {
            Some(s) => (s, parse_system_spec(&self.system).map(|(_, o)| o).unwrap_or_default()),
            None => {
                let (id, o) = parse_system_spec(&self.system)?;
                (SystemRef::Catalog(crate::resolve::builtin_system(&id)?.id.clone()), o)
            }
        };
        let mut domain_size = opts.domain_size;
        let nics = opts.nics_per_device;
        let mut precision = opts.precision;
        let mapping = MappingOptions {
            vector_tflops: opts.vector_tflops,
            scale_up_gbps: opts.scale_up_gbps,
            scale_out_gbps: opts.scale_out_gbps,
            ..MappingOptions::default()
        };
        // `--domain 16` beside `--system ID,domain=8` (or `--precision` beside `precision=`) is a
        // contradiction, not a choice of the later one; equal values are accepted.
        if let Some(n) = &self.nvlink {
            let d = positive("nvlink", n)?;
            if let Some(spec) = domain_size.filter(|s| *s != d) {
                return Err(Error::invalid(
                    "nvlink",
                    n,
                    format!("the system spec `{}` says domain={spec}; give the scale-up domain once", self.system),
                ));
            }
            domain_size = Some(d);
        }
        if let Some(p) = &self.precision {
            let given: crate::catalog::Precision = p.parse()?;
            if let Some(spec) = precision.filter(|s| *s != given) {
                return Err(Error::invalid(
                    "precision",
                    p,
                    format!("the system spec `{}` says precision={spec}; give the precision once", self.system),
                ));
            }
            precision = Some(given);
        }
        let strategies = match &self.strategy {
            Some(s) => parse_strategies(s)?,
            None => Strategy::ALL.to_vec(),
        };
        let devices = match &self.gpus {
            Some(g) => positive("gpus", g)?,
            None => DEFAULT_GPUS,
        };
        let global_batch = match &self.global_batch {
            Some(g) => positive("global-batch", g)?,
            None => DEFAULT_GLOBAL_BATCH,
        };
        let batch = match &self.per_device_batch {
            Some(b) if self.global_batch.is_some() => {
                return Err(Error::invalid("per-device-batch", b, "cannot be combined with global-batch")
                    .with_hint("give one of the two"));
            }
            Some(b) => BatchRule::PerDevice(positive("per-device-batch", b)?),
            None => BatchRule::Fixed,
        };
        let fixed = match &self.fix {
            Some(f) => parse_constraints(f)?,
            None => Constraints::default(),
        };
        let mode = Mode::from_text(self.mode.as_deref(), self.ext.as_deref())?;
        let axes = self.axes.iter().map(|a| Axis::parse(a)).collect::<Result<Vec<_>, _>>()?;
        let base = Scenario {
            name: None,
            model,
            system,
            domain_size,
            nics_per_device: nics,
            precision,
            devices,
            global_batch,
            strategies,
            top_k: 1,
            training_budget: None,
            notes: Vec::new(),
        };
        let spec = SweepSpec { base, axes, fixed, batch, mapping, mode, calibration: None };
        spec.validate()?;
        Ok(spec)
    }

    /// The text of a spec whose model and system are catalog ids (presets, the page).
    pub fn from_spec(spec: &SweepSpec) -> SweepText {
        let b = &spec.base;
        let id_model = match &b.model {
            ModelRef::Catalog(id) => id.clone(),
            ModelRef::Inline(m) => m.id.clone(),
        };
        let mut id_system = match &b.system {
            SystemRef::Catalog(id) => id.clone(),
            SystemRef::Inline(s) => s.id.clone(),
        };
        let m = &spec.mapping;
        for (k, v) in [("vector", m.vector_tflops), ("scale_up", m.scale_up_gbps), ("scale_out", m.scale_out_gbps)] {
            if let Some(v) = v {
                id_system.push_str(&format!(",{k}={v}"));
            }
        }
        let strategies = if b.strategies == Strategy::ALL.to_vec() {
            None
        } else {
            Some(b.strategies.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(","))
        };
        let fix = spec.fixed.to_text();
        let (global_batch, per_device_batch) = match spec.batch {
            BatchRule::Fixed => (Some(b.global_batch.to_string()), None),
            BatchRule::PerDevice(x) => (None, Some(x.to_string())),
        };
        SweepText {
            model: id_model,
            system: id_system,
            strategy: strategies,
            gpus: (!spec.has(AxisKey::Gpus)).then(|| b.devices.to_string()),
            nvlink: b.domain_size.map(|d| d.to_string()),
            precision: b.precision.map(|p| p.as_str().to_string()),
            global_batch: global_batch.filter(|_| !spec.has(AxisKey::GlobalBatch)),
            per_device_batch,
            fix: (!fix.is_empty()).then_some(fix),
            mode: spec.mode.mode_text(),
            ext: spec.mode.ext_text(),
            axes: spec.axes.iter().map(Axis::to_text).collect(),
        }
    }

    /// `(key, value)` pairs in a fixed order (`axis` repeated), for URLs.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("model", self.model.clone()), ("system", self.system.clone())];
        let opt = [
            ("strategy", &self.strategy),
            ("gpus", &self.gpus),
            ("nvlink", &self.nvlink),
            ("precision", &self.precision),
            ("global-batch", &self.global_batch),
            ("per-device-batch", &self.per_device_batch),
            ("fix", &self.fix),
            ("mode", &self.mode),
            ("ext", &self.ext),
        ];
        out.extend(opt.into_iter().filter_map(|(k, v)| v.clone().map(|v| (k, v))));
        out.extend(self.axes.iter().map(|a| ("axis", a.clone())));
        out
    }

    /// The equivalent `fmperf sweep` command line (without `--format`). The CLI's default mode is
    /// extended, so reference mode is written out (`--mode reference`); the domain flag is
    /// `--domain` (the URL key `nvlink` is its old name).
    pub fn to_cli(&self) -> String {
        let mut s = String::from("fmperf sweep");
        let mut pairs = self.pairs();
        if self.mode.is_none() {
            let at = pairs.iter().position(|(k, _)| *k == "axis").unwrap_or(pairs.len());
            pairs.insert(at, ("mode", "reference".to_string()));
        }
        for (k, v) in pairs {
            let k = if k == "nvlink" { "domain" } else { k };
            let quoted = if v.chars().all(|c| c.is_ascii_alphanumeric() || "-_.,=:/".contains(c)) {
                v
            } else {
                format!("'{}'", v.replace('\'', "'\\''"))
            };
            s.push_str(&format!(" --{k} {quoted}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restriction_given_twice_or_also_swept_is_an_error_naming_both() {
        let e = parse_constraints("tp=8,pp=2,tp=4").unwrap_err();
        assert_eq!(e.to_string(), "fix.tp = 4: given twice (8, then 4); give it once");
        assert_eq!(parse_constraints("tp=8,tp=08").unwrap().tp, Some(8));
        let t = SweepText {
            model: "gpt3_1T".into(),
            system: "B200".into(),
            fix: Some("tp=4".into()),
            axes: vec!["tp=1,2".into()],
            ..SweepText::default()
        };
        let e = t.to_spec(None, None).unwrap_err();
        assert_eq!(e.field(), Some("fix.tp"));
        assert_eq!(e.to_string(), "fix.tp = 4: tp is also an axis (tp=1,2); fix it or sweep it, not both");
        let e = SweepText { system: "B200,domain=8,domain=16".into(), fix: None, ..t }.to_spec(None, None).unwrap_err();
        assert_eq!(e.to_string(), "system.domain = 16: given twice (8, then 16); give it once");
    }

    #[test]
    fn an_unknown_system_or_model_on_an_axis_is_refused_before_the_sweep_runs() {
        let t = SweepText {
            model: "gpt3_1T".into(),
            system: "B200".into(),
            axes: vec!["system=B200,bogus".into()],
            ..SweepText::default()
        };
        let e = t.to_spec(None, None).unwrap_err();
        assert_eq!(e.field(), Some("axis.system"));
        assert!(e.to_string().starts_with("axis.system = bogus: unknown system `bogus`"), "{e}");
        let e = SweepText { axes: vec!["model=gpt3,nope".into()], ..t.clone() }.to_spec(None, None).unwrap_err();
        assert_eq!(e.field(), Some("axis.model"));
        assert!(e.to_string().contains("unknown model `nope`"), "{e}");
        assert!(SweepText { axes: vec!["system=B200,H200".into()], ..t }.to_spec(None, None).is_ok());
    }

    #[test]
    fn the_command_line_names_reference_mode_and_the_domain() {
        let t = SweepText {
            model: "gpt3_1T".into(),
            system: "B200".into(),
            nvlink: Some("8".into()),
            axes: vec!["gpus=4..64".into()],
            ..SweepText::default()
        };
        assert_eq!(
            t.to_cli(),
            "fmperf sweep --model gpt3_1T --system B200 --domain 8 --mode reference --axis gpus=4..64"
        );
        let ext = SweepText { mode: Some("extended".into()), ..t };
        assert!(!ext.to_cli().contains("reference"));
    }
}
