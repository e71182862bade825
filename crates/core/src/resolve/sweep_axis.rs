//! Sweep axes: what one axis varies, its values, and their text form (`gpus=4..16384`,
//! `hbm_bandwidth=x0.5,x1,x2`, `precision=fp32,bf16`).
//!
//! Text grammar of one axis: `KEY=VALUES` where `VALUES` is a comma list of items; an item is a
//! value, or `a..b` (a, 2a, 4a, … up to b: the powers of two between a and b when a is one) for
//! count and number axes. System-parameter axes take absolute values in the parameter's unit
//! (`hbm_capacity=96,141,192` in GB) or factors of the system's own value (`x0.5`, `x2`).

use std::fmt;

use crate::extended::moe::axes::MoeAxis;

use crate::catalog::Precision;
use crate::hint;
use crate::{Error, Strategy};

use super::SystemParam;

/// What an axis varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AxisKey {
    /// Devices in the job [count].
    Gpus,
    /// Scale-up (NVLink) domain size [devices].
    Domain,
    /// A system parameter (absolute or as a factor).
    Param(SystemParam),
    /// Sequence length `l` [tokens or patches per sample].
    SeqLen,
    /// Global batch `G` [samples per iteration].
    GlobalBatch,
    /// Gradient-accumulation steps = micro-batches per iteration `G/(dp·mbs)` (see [`super::sweep_spec::BatchRule`]).
    Accum,
    /// Training precision (selects the catalog's matrix peak and the element size).
    Precision,
    /// Weight sparsity [fraction of zero weights, 0 ≤ s < 1] (not expressible in the reference model).
    Sparsity,
    /// The system (catalog id).
    System,
    /// The model (catalog id).
    Model,
    /// The tensor-parallel strategy searched (one per point).
    Strategy,
    /// Fixed total tensor-parallel degree `tp1·tp2`.
    Tp,
    /// Fixed first tensor-parallel dimension `tp1`.
    Tp1,
    /// Fixed second tensor-parallel dimension `tp2` (SUMMA tokens, or context parallel).
    Tp2,
    /// Fixed pipeline degree.
    Pp,
    /// Fixed data-parallel degree.
    Dp,
    /// Fixed micro-batch size [samples].
    Mbs,
    /// A Mixture-of-Experts switch or model axis (extended mode, MoE models).
    Moe(crate::extended::moe::axes::MoeAxis),
}

/// The kind of values an axis takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Positive integers (ranges allowed).
    Count,
    /// System parameter: positive numbers or `x` factors (ranges allowed).
    Param,
    /// Fractions in [0, 1).
    Fraction,
    /// Catalog ids.
    Name,
    /// Precision names.
    Precision,
    /// Strategy names.
    Strategy,
}

impl AxisKey {
    /// Every axis key with its canonical name.
    pub const ALL: [AxisKey; 28] = [
        AxisKey::Gpus,
        AxisKey::Domain,
        AxisKey::Param(SystemParam::Matrix),
        AxisKey::Param(SystemParam::Vector),
        AxisKey::Param(SystemParam::HbmCapacity),
        AxisKey::Param(SystemParam::HbmBandwidth),
        AxisKey::Param(SystemParam::ScaleUp),
        AxisKey::Param(SystemParam::ScaleOut),
        AxisKey::SeqLen,
        AxisKey::GlobalBatch,
        AxisKey::Accum,
        AxisKey::Precision,
        AxisKey::Sparsity,
        AxisKey::System,
        AxisKey::Model,
        AxisKey::Strategy,
        AxisKey::Tp,
        AxisKey::Tp1,
        AxisKey::Tp2,
        AxisKey::Pp,
        AxisKey::Dp,
        AxisKey::Mbs,
        AxisKey::Moe(MoeAxis::Ep),
        AxisKey::Moe(MoeAxis::Etp),
        AxisKey::Moe(MoeAxis::Load),
        AxisKey::Moe(MoeAxis::Dispatcher),
        AxisKey::Moe(MoeAxis::Experts),
        AxisKey::Moe(MoeAxis::TopK),
    ];

    /// The canonical name (CLI, URL, CSV column stem).
    pub fn name(self) -> &'static str {
        match self {
            AxisKey::Gpus => "gpus",
            // One name for the scale-up domain (issue 11 §5); `nvlink` and the others stay aliases.
            AxisKey::Domain => "domain",
            AxisKey::Param(p) => p.key(),
            AxisKey::SeqLen => "seq",
            AxisKey::GlobalBatch => "batch",
            AxisKey::Accum => "accum",
            AxisKey::Precision => "precision",
            AxisKey::Sparsity => "sparsity",
            AxisKey::System => "system",
            AxisKey::Model => "model",
            AxisKey::Strategy => "strategy",
            AxisKey::Tp => "tp",
            AxisKey::Tp1 => "tp1",
            AxisKey::Tp2 => "tp2",
            AxisKey::Pp => "pp",
            AxisKey::Dp => "dp",
            AxisKey::Mbs => "mbs",
            AxisKey::Moe(a) => a.name(),
        }
    }

    /// Other accepted spellings.
    fn aliases(self) -> &'static [&'static str] {
        match self {
            AxisKey::Gpus => &["devices", "n_gpus", "gpu"],
            AxisKey::Domain => &["nvlink", "nvlink_size", "nvs", "domain_size"],
            AxisKey::Param(SystemParam::Matrix) => &["flops", "matrix_flops", "matrix_tflops", "flop_rate"],
            AxisKey::Param(SystemParam::Vector) => &["vector_flops", "vector_tflops"],
            AxisKey::Param(SystemParam::HbmCapacity) => &["capacity", "memory", "hbm_cap"],
            AxisKey::Param(SystemParam::HbmBandwidth) => &["hbm_bw", "memory_bandwidth"],
            AxisKey::Param(SystemParam::ScaleUp) => &["nvlink_bandwidth", "scale_up_bw", "nvlink_bw"],
            AxisKey::Param(SystemParam::ScaleOut) => &["ib_bandwidth", "scale_out_bw", "ib_bw", "network"],
            AxisKey::SeqLen => &["seq_len", "sequence", "l"],
            AxisKey::GlobalBatch => &["global_batch", "global-batch", "g"],
            AxisKey::Accum => &["grad_accum", "accumulation", "microbatches"],
            AxisKey::Sparsity => &["weight_sparsity"],
            AxisKey::Strategy => &["strategies"],
            AxisKey::Moe(a) => a.aliases(),
            _ => &[],
        }
    }

    /// A label with its unit, for table headers and chart axes.
    pub fn label(self) -> String {
        match self {
            AxisKey::Gpus => "devices".into(),
            AxisKey::Domain => "scale-up domain [devices]".into(),
            AxisKey::Param(p) => {
                let what = match p {
                    SystemParam::Matrix => "matrix FLOP rate",
                    SystemParam::Vector => "vector FLOP rate",
                    SystemParam::HbmCapacity => "HBM capacity",
                    SystemParam::HbmBandwidth => "HBM bandwidth",
                    SystemParam::ScaleUp => "scale-up bandwidth",
                    SystemParam::ScaleOut => "scale-out bandwidth",
                };
                format!("{what} [{}]", p.unit())
            }
            AxisKey::SeqLen => "sequence length [tokens]".into(),
            AxisKey::GlobalBatch => "global batch [samples]".into(),
            AxisKey::Accum => "gradient-accumulation steps [micro-batches]".into(),
            AxisKey::Precision => "precision".into(),
            AxisKey::Sparsity => "weight sparsity [fraction]".into(),
            AxisKey::System => "system".into(),
            AxisKey::Model => "model".into(),
            AxisKey::Strategy => "strategy".into(),
            AxisKey::Tp => "TP degree tp1·tp2".into(),
            AxisKey::Tp1 => "tp1".into(),
            AxisKey::Tp2 => "tp2".into(),
            AxisKey::Pp => "PP degree".into(),
            AxisKey::Dp => "DP degree".into(),
            AxisKey::Mbs => "micro-batch [samples]".into(),
            AxisKey::Moe(a) => a.label().into(),
        }
    }

    /// The kind of values.
    pub fn value_kind(self) -> ValueKind {
        match self {
            AxisKey::Param(_) => ValueKind::Param,
            AxisKey::Sparsity => ValueKind::Fraction,
            AxisKey::System | AxisKey::Model => ValueKind::Name,
            AxisKey::Moe(a) if !a.counts() => ValueKind::Name,
            AxisKey::Precision => ValueKind::Precision,
            AxisKey::Strategy => ValueKind::Strategy,
            _ => ValueKind::Count,
        }
    }

    /// Whether the axis restricts the configurations searched rather than the scenario (points
    /// that differ only in such axes share one pass over the candidates).
    pub fn is_constraint(self) -> bool {
        matches!(self, AxisKey::Tp | AxisKey::Tp1 | AxisKey::Tp2 | AxisKey::Pp | AxisKey::Dp | AxisKey::Mbs)
    }

    /// Whether the values are ordered numbers (charts can use a numeric axis).
    pub fn is_numeric(self) -> bool {
        matches!(self.value_kind(), ValueKind::Count | ValueKind::Param | ValueKind::Fraction)
    }

    /// Looks an axis up by name or alias (ASCII case ignored); the error lists the names and the
    /// nearest one.
    pub fn parse(name: &str) -> Result<AxisKey, Error> {
        let n = name.trim().to_ascii_lowercase();
        for k in AxisKey::ALL {
            if k.name() == n || k.aliases().contains(&n.as_str()) {
                return Ok(k);
            }
        }
        let names: Vec<&str> = AxisKey::ALL.iter().map(|k| k.name()).collect();
        let e = Error::invalid("axis", name, format!("is not an axis; axes: {}", names.join(", ")));
        let all = AxisKey::ALL.iter().flat_map(|k| std::iter::once(k.name()).chain(k.aliases().iter().copied()));
        Err(match hint::nearest(&n, all) {
            Some(near) => e.with_hint(format!("did you mean `{near}`?")),
            None => e,
        })
    }
}

impl fmt::Display for AxisKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value of an axis.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisValue {
    /// A count (devices, tokens, samples, degrees).
    Count(u64),
    /// An absolute system-parameter value in the parameter's unit.
    Absolute(f64),
    /// A factor applied to the system's own value of the parameter.
    Factor(f64),
    /// A fraction in [0, 1).
    Fraction(f64),
    /// A catalog id.
    Name(String),
    /// A precision.
    Precision(Precision),
    /// A strategy.
    Strategy(Strategy),
}

impl AxisValue {
    /// The value as a number for charts (`None` for names, precisions and strategies).
    pub fn number(&self) -> Option<f64> {
        match *self {
            AxisValue::Count(n) => Some(n as f64),
            AxisValue::Absolute(v) | AxisValue::Factor(v) | AxisValue::Fraction(v) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for AxisValue {
    /// The text form, which parses back to the same value (`x0.5` for factors).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisValue::Count(n) => write!(f, "{n}"),
            AxisValue::Absolute(v) | AxisValue::Fraction(v) => write!(f, "{v}"),
            AxisValue::Factor(v) => write!(f, "x{v}"),
            AxisValue::Name(s) => f.write_str(s),
            AxisValue::Precision(p) => f.write_str(p.as_str()),
            AxisValue::Strategy(s) => f.write_str(s.as_str()),
        }
    }
}

/// One axis: what it varies and the values it takes, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What the axis varies.
    pub key: AxisKey,
    /// Its values (at least one), in sweep order.
    pub values: Vec<AxisValue>,
}

/// Most values one axis may list (ranges included), and most points of a sweep.
pub const MAX_AXIS_VALUES: usize = 4096;
/// Most points a sweep may have.
pub const MAX_POINTS: usize = 1 << 20;

impl Axis {
    /// An axis of counts.
    pub fn counts(key: AxisKey, values: &[u64]) -> Axis {
        Axis { key, values: values.iter().map(|&v| AxisValue::Count(v)).collect() }
    }

    /// `a, 2a, 4a, … ≤ b` as counts (the powers of two from 4 to 16384 for `pow2(4, 16384)`).
    pub fn doubling(a: u64, b: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut x = a;
        while x >= 1 && x <= b && out.len() < MAX_AXIS_VALUES {
            out.push(x);
            x = match x.checked_mul(2) {
                Some(y) => y,
                None => break,
            };
        }
        out
    }

    /// Parses `KEY=VALUES` (see the module documentation). Errors name the axis.
    pub fn parse(text: &str) -> Result<Axis, Error> {
        let Some((k, v)) = text.split_once('=') else {
            return Err(Error::invalid("axis", text, "must be written KEY=VALUES")
                .with_hint("e.g. `gpus=4..16384`, `nvlink=4,8,64` or `hbm_bandwidth=x0.5,x1,x2`"));
        };
        let key = AxisKey::parse(k)?;
        Axis::parse_values(key, v)
    }

    /// Parses the values of an axis of `key` from their text (`4..16384`, `x0.5,x1`, `fp32,bf16`).
    pub fn parse_values(key: AxisKey, text: &str) -> Result<Axis, Error> {
        let field = format!("axis.{}", key.name());
        let bad = |item: &str, rule: String| Error::invalid(field.clone(), item, rule);
        let mut values = Vec::new();
        for item in text.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(bad(text, "has an empty value".into()).with_hint("write values separated by commas"));
            }
            match key.value_kind() {
                ValueKind::Count => {
                    let count = |s: &str| -> Result<u64, Error> {
                        s.trim()
                            .parse::<u64>()
                            .ok()
                            .filter(|n| *n > 0)
                            .ok_or_else(|| bad(s, "must be a positive integer".into()))
                    };
                    if let Some((a, b)) = item.split_once("..") {
                        let (a, b) = (count(a)?, count(b)?);
                        if a > b {
                            return Err(bad(item, format!("range start {a} is larger than its end {b}")));
                        }
                        values.extend(Axis::doubling(a, b).into_iter().map(AxisValue::Count));
                    } else {
                        values.push(AxisValue::Count(count(item)?));
                    }
                }
                ValueKind::Param => {
                    let number = |s: &str| -> Result<AxisValue, Error> {
                        let s = s.trim();
                        let (factor, digits) = match s.strip_prefix(['x', 'X', '×', '*']) {
                            Some(rest) => (true, rest),
                            None => (false, s),
                        };
                        let v = digits.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0).ok_or_else(
                            || {
                                bad(s, "must be a positive number or a factor like x0.5".into()).with_hint(format!(
                                    "absolute values are in {}; factors multiply the system's own value",
                                    match key {
                                        AxisKey::Param(p) => p.unit(),
                                        _ => "",
                                    }
                                ))
                            },
                        )?;
                        Ok(if factor { AxisValue::Factor(v) } else { AxisValue::Absolute(v) })
                    };
                    if let Some((a, b)) = item.split_once("..") {
                        let (a, b) = (number(a)?, number(b)?);
                        let (lo, hi, factor) = match (a, b) {
                            (AxisValue::Factor(a), AxisValue::Factor(b)) => (a, b, true),
                            (AxisValue::Absolute(a), AxisValue::Absolute(b)) => (a, b, false),
                            _ => return Err(bad(item, "a range must be two factors or two absolute values".into())),
                        };
                        if lo > hi {
                            return Err(bad(item, format!("range start {lo} is larger than its end {hi}")));
                        }
                        let mut x = lo;
                        while x <= hi * (1.0 + 1e-12) && values.len() < MAX_AXIS_VALUES {
                            values.push(if factor { AxisValue::Factor(x) } else { AxisValue::Absolute(x) });
                            x *= 2.0;
                        }
                    } else {
                        values.push(number(item)?);
                    }
                }
                ValueKind::Fraction => {
                    let v =
                        item.parse::<f64>().ok().filter(|v| v.is_finite() && (0.0..1.0).contains(v)).ok_or_else(
                            || bad(item, "must be a fraction from 0 to below 1 (0.9 = 90 % zeros)".into()),
                        )?;
                    values.push(AxisValue::Fraction(v));
                }
                ValueKind::Name => values.push(AxisValue::Name(item.to_string())),
                ValueKind::Precision => {
                    values.push(AxisValue::Precision(item.parse().map_err(|e: Error| rename(e, &field))?))
                }
                ValueKind::Strategy => {
                    values.push(AxisValue::Strategy(item.parse().map_err(|e: Error| rename(e, &field))?))
                }
            }
            if values.len() > MAX_AXIS_VALUES {
                return Err(bad(text, format!("has more than {MAX_AXIS_VALUES} values")));
            }
        }
        // A value given twice (`8,8`, or `4..16,8`) would sweep the same point twice.
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(bad(text, format!("gives the value {v} twice"))
                    .with_hint("give each value once; a range `a..b` already holds a, 2a, 4a, … up to b"));
            }
        }
        Ok(Axis { key, values })
    }

    /// The text form `KEY=v1,v2,…` (parses back to the same axis; ranges are written out).
    pub fn to_text(&self) -> String {
        let values: Vec<String> = self.values.iter().map(|v| v.to_string()).collect();
        format!("{}={}", self.key.name(), values.join(","))
    }
}

/// The same error, about `field`.
fn rename(e: Error, field: &str) -> Error {
    match e {
        Error::InvalidField { value, rule, hint, .. } => Error::InvalidField { field: field.into(), value, rule, hint },
        Error::UnknownName { name, known, .. } => {
            Error::invalid(field, name, format!("must be one of {}", known.join(", ")))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_lists_and_factors() {
        let a = Axis::parse("gpus=4..16384").unwrap();
        assert_eq!(a.values.len(), 13);
        assert_eq!(a.values[0], AxisValue::Count(4));
        assert_eq!(a.values[12], AxisValue::Count(16384));
        let a = Axis::parse("nvlink=4,8,64").unwrap();
        assert_eq!(a.key, AxisKey::Domain);
        assert_eq!(a.values, vec![AxisValue::Count(4), AxisValue::Count(8), AxisValue::Count(64)]);
        let a = Axis::parse("hbm_bandwidth=x0.5,x1,2000").unwrap();
        assert_eq!(a.values, vec![AxisValue::Factor(0.5), AxisValue::Factor(1.0), AxisValue::Absolute(2000.0)]);
        let a = Axis::parse("flops=x0.25..x4").unwrap();
        assert_eq!(a.key, AxisKey::Param(SystemParam::Matrix));
        assert_eq!(a.values.len(), 5);
        assert_eq!(Axis::parse(&a.to_text()).unwrap(), a);
        let a = Axis::parse("precision=fp32,BF16").unwrap();
        assert_eq!(a.values[1], AxisValue::Precision(Precision::Bf16));
    }

    #[test]
    fn a_value_given_twice_is_an_error() {
        for text in ["gpus=8,8", "gpus=4..16,8", "precision=bf16,BF16", "system=a,a", "hbm_bandwidth=x1,x1.0"] {
            let e = Axis::parse(text).unwrap_err().to_string();
            assert!(e.contains("twice"), "{text}: {e}");
        }
        assert!(Axis::parse("gpus=4..16,32").is_ok());
    }

    #[test]
    fn errors_name_the_axis() {
        for (text, field) in [
            ("gpus=0", "axis.gpus"),
            ("gpus=8..4", "axis.gpus"),
            ("hbm_capacity=-1", "axis.hbm_capacity"),
            ("sparsity=1.5", "axis.sparsity"),
            ("precision=fp7", "axis.precision"),
            ("strategy=3d", "axis.strategy"),
            ("gpus", "axis"),
            ("gpsu=4", "axis"),
        ] {
            let e = Axis::parse(text).unwrap_err();
            assert_eq!(e.field(), Some(field), "{text}: {e}");
        }
        let e = Axis::parse("gpsu=4").unwrap_err().to_string();
        assert!(e.contains("did you mean `gpus`"), "{e}");
    }
}
