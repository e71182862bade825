//! What a row measured: the figure, what kind of figure it is, and for FLOP-based figures how the
//! source counts FLOPs and against which peak — read from the structured form when the row has
//! one, else from the row's numeric fields and the words of its `flop_convention` (by meaning: see
//! [`super::words`]).
//!
//! The structured form (`measured.metric`), which fmperf writes for every row it reads
//! ([`MetricReading::structured`]) and reads back:
//!
//! ```json
//! {"kind": "mfu", "value": 0.43, "flops": "model", "peak_tflops": 989}
//! ```
//!
//! `kind` ∈ [`MetricKind::ALL`] (`step_time_s`, `tokens_per_s_per_device`, `tokens_per_s_total`,
//! `samples_per_s`, `tflops_per_device`, `mfu`, `hfu`); `flops` ∈ [`FlopCount::ALL`] (`model`,
//! `hardware`, `megatron_eq3`, `six_n`), for the FLOP-based kinds; `peak_tflops` the dense peak an
//! MFU/HFU is a fraction of [TFLOP/s per device] (absent: the part's dense peak at the row's
//! precision).
//!
//! Rules for free text (each one applied is written in the row's notes):
//! * the figure: the kind the words name (`iteration time`, `tokens/s`, `samples/s`, `TFLOP/s`,
//!   `MFU`, `HFU`, …) when that field has a value, else the first field with a value in the order
//!   step time, tokens/s per device, tokens/s in all, samples/s, TFLOP/s, MFU, HFU (the figures
//!   that need no FLOP convention first);
//! * the FLOP count: Megatron's eq. (3) when the words name it (`96·B·s·l·h²`, "Megatron
//!   equation/formula"); `6·N` counting (`6N`, `n_params`, llm-foundry, PaLM) when they name it;
//!   hardware FLOPs (recomputation counted) when they say "hardware", "HFU", "includes
//!   recompute…"; else model FLOPs (the convention of NeMo, MaxText, torchtitan and MFU as PaLM
//!   defined it). An HFU figure is in hardware FLOPs unless the words say otherwise;
//! * the peak: a number the words give as a peak (`vs 197`, `against 989 TFLOP/s`, `peak 312`);
//!   when they give several, the one equal (±2 %) to the part's dense peak at the row's
//!   precision, else that catalog peak.

use crate::vocab::{Note, NoteList};
use serde_json::{Map, Value, json};

use crate::vocab::MetricKind;

use super::reason::RowReason;
use super::schema::MeasuredRun;
use super::words::Words;

/// The value of this kind in a row's numeric fields.
fn field(kind: MetricKind, run: &MeasuredRun) -> Option<f64> {
    let m = &run.measured;
    match kind {
        MetricKind::StepTimeS => m.step_time_s,
        MetricKind::TokensPerSPerDevice => m.tokens_per_s_per_device,
        MetricKind::TokensPerSTotal => m.tokens_per_s_total,
        MetricKind::SamplesPerS => m.samples_per_s,
        MetricKind::TflopsPerDevice => m.tflops_per_device,
        MetricKind::Mfu => m.mfu,
        MetricKind::Hfu => m.hfu,
    }
}

/// How a source counts the FLOPs of an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlopCount {
    /// Model FLOPs: three times the forward matmul FLOPs with full (non-causal) attention and the
    /// output head (NeMo's and MaxText's formulas).
    Model,
    /// Hardware FLOPs: model FLOPs plus the forward work recomputation repeats.
    Hardware,
    /// Megatron-LM's eq. (3) of Narayanan et al. 2021 (includes a full recomputation forward).
    MegatronEq3,
    /// `6·N` per token plus attention `12·L·h·s` (llm-foundry, PaLM appendix B).
    SixN,
}

impl FlopCount {
    /// Every count.
    pub const ALL: [FlopCount; 4] = [FlopCount::Model, FlopCount::Hardware, FlopCount::MegatronEq3, FlopCount::SixN];

    /// The structured form's name.
    pub fn key(self) -> &'static str {
        match self {
            FlopCount::Model => "model",
            FlopCount::Hardware => "hardware",
            FlopCount::MegatronEq3 => "megatron_eq3",
            FlopCount::SixN => "six_n",
        }
    }

    /// Parses a structured name.
    pub fn parse(s: &str) -> Option<FlopCount> {
        let k = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        FlopCount::ALL.into_iter().find(|f| f.key() == k).or(match k.as_str() {
            "model_flops" | "mfu" => Some(FlopCount::Model),
            "hardware_flops" | "hfu" => Some(FlopCount::Hardware),
            "megatron" | "eq3" => Some(FlopCount::MegatronEq3),
            "6n" | "sixn" => Some(FlopCount::SixN),
            _ => None,
        })
    }
}

/// What a row measured, read.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricReading {
    /// The kind of figure.
    pub kind: MetricKind,
    /// The figure in the kind's unit.
    pub value: f64,
    /// The FLOP count (FLOP-based kinds only).
    pub flops: Option<FlopCount>,
    /// The peak an MFU/HFU is a fraction of [TFLOP/s per device]; `None`: the part's dense peak
    /// at the row's precision.
    pub peak_tflops: Option<f64>,
    /// How the words were read, for the row's notes.
    #[serde(skip)]
    pub notes: Vec<Note>,
}

impl MetricReading {
    /// The structured form (`measured.metric`) of this reading.
    pub fn structured(&self) -> Value {
        let mut o = Map::new();
        o.insert("kind".into(), json!(self.kind.key()));
        o.insert("value".into(), json!(self.value));
        if let Some(f) = self.flops {
            o.insert("flops".into(), json!(f.key()));
        }
        if let Some(p) = self.peak_tflops {
            o.insert("peak_tflops".into(), json!(p));
        }
        Value::Object(o)
    }

    /// A name with unit, for tables.
    pub fn name(&self) -> String {
        let flops = match self.flops {
            Some(FlopCount::Model) => " (model FLOPs)",
            Some(FlopCount::Hardware) => " (hardware FLOPs)",
            Some(FlopCount::MegatronEq3) => " (Megatron eq. 3)",
            Some(FlopCount::SixN) => " (6N + attention)",
            None => "",
        };
        let base = match self.kind {
            MetricKind::StepTimeS => "iteration time [s]",
            MetricKind::TokensPerSPerDevice => "tokens/s per device",
            MetricKind::TokensPerSTotal => "tokens/s (all devices)",
            MetricKind::SamplesPerS => "samples/s (all devices)",
            MetricKind::TflopsPerDevice => "TFLOP/s per device",
            MetricKind::Mfu => "MFU [fraction of peak]",
            MetricKind::Hfu => "HFU [fraction of peak]",
        };
        format!("{base}{flops}")
    }
}

/// The structured form of a row (`measured.metric`), as parsed by the schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructuredMetric {
    /// `kind` as written.
    pub kind: Option<String>,
    /// `value`.
    pub value: Option<f64>,
    /// `flops` as written.
    pub flops: Option<String>,
    /// `peak_tflops`.
    pub peak_tflops: Option<f64>,
}

/// Phrases that name each kind.
const KIND_WORDS: [(MetricKind, &[&str]); 7] = [
    (
        MetricKind::Hfu,
        &["hfu", "hardware flops utilization", "hardware flops utilisation", "hardware flop utilization"],
    ),
    (
        MetricKind::Mfu,
        &["mfu", "model flops utilization", "model flops utilisation", "utilization", "utilisation", "of peak"],
    ),
    (MetricKind::TflopsPerDevice, &["tflop", "tflops", "pflop", "pflops", "flop s", "flops s"]),
    (
        MetricKind::TokensPerSTotal,
        &["total tokens", "tokens s total", "aggregate tokens", "global tokens", "cluster tokens", "tokens s cluster"],
    ),
    (
        MetricKind::TokensPerSPerDevice,
        &["tokens s", "tokens per second", "tok s", "tokens sec", "tokens second", "wps", "tgs", "tokens"],
    ),
    (
        MetricKind::SamplesPerS,
        &["samples s", "samples per second", "sequences s", "sequences per second", "seq s", "samples sec"],
    ),
    (
        MetricKind::StepTimeS,
        &[
            "iteration time",
            "step time",
            "time per iteration",
            "time per step",
            "seconds per iteration",
            "seconds per step",
            "s iter",
            "s step",
            "ms iter",
            "sec iter",
            "elapsed time per iteration",
        ],
    ),
];

/// The kinds the words name, earliest mention first.
fn kinds_named(w: &Words) -> Vec<MetricKind> {
    let mut found: Vec<(usize, MetricKind)> = KIND_WORDS
        .iter()
        .filter_map(|(k, phrases)| phrases.iter().filter_map(|p| w.find(p)).min().map(|at| (at, *k)))
        .collect();
    crate::sort::sort_by_key(&mut found, |(at, _)| *at);
    found.into_iter().map(|(_, k)| k).collect()
}

/// The FLOP count the words describe (`None`: they do not say).
fn flops_named(w: &Words) -> Option<FlopCount> {
    if w.has("96 b s l h") || w.has("96 b s") || w.any(&["megatron eq", "megatron equation", "megatron formula"]) {
        return Some(FlopCount::MegatronEq3);
    }
    if w.any(&["6n", "6 n", "6nd", "6 n d", "6 n t", "n params", "2 n params", "6 params", "llm foundry", "palm"])
        || w.has("6 x params")
    {
        return Some(FlopCount::SixN);
    }
    let recompute_counted = w.any(&["hardware flops", "hardware flop", "hardware tflop", "hardware tflops", "hfu"])
        || (w.any(&["include", "includes", "including", "incl", "counts", "counting", "with"])
            && (w.has_prefix("recomput") || w.has_prefix("remat") || w.has("checkpointing")));
    let model = w.any(&["model flops", "model flop", "model tflop", "model tflops", "mfu"])
        || w.any(&["excludes", "excluding", "without", "not counted", "not counting"]) && w.has_prefix("recomput");
    match (recompute_counted, model) {
        (true, false) => Some(FlopCount::Hardware),
        (false, true) => Some(FlopCount::Model),
        (true, true) => {
            // Both said: an explicit exclusion wins ("model FLOPs, recompute not counted").
            if w.any(&["excludes", "excluding", "not counted", "not counting"]) {
                Some(FlopCount::Model)
            } else {
                Some(FlopCount::Hardware)
            }
        }
        (false, false) => None,
    }
}

/// Peaks the words state [TFLOP/s]: numbers ≥ 10 after `vs`, `versus`, `against`, `peak`, `of`
/// (within 8 tokens of `peak`), or with a TFLOP unit in a sentence about peaks.
fn stated_peaks(w: &Words) -> Vec<f64> {
    let mut out = Vec::new();
    let toks = &w.tokens;
    for (i, t) in toks.iter().enumerate() {
        let Ok(v) = t.parse::<f64>() else { continue };
        if v < 10.0 {
            continue;
        }
        let prev = |k: usize| i.checked_sub(k).and_then(|j| toks.get(j)).map(String::as_str);
        let peak_word = |t: Option<&str>| t.is_some_and(|t| t.starts_with("peak"));
        let after_peak_word = matches!(prev(1), Some("vs" | "versus" | "against" | "of" | "is" | "="))
            && (1..=8)
                .any(|k| matches!(prev(k), Some("vs" | "versus" | "against" | "theoretical")) || peak_word(prev(k)))
            || (1..=8).any(|k| peak_word(prev(k)));
        let unit_tflop = toks.get(i + 1).is_some_and(|u| u.starts_with("tflop") || u == "tf");
        let about_peak = w.has_prefix("peak") || w.has("theoretical");
        if (after_peak_word || unit_tflop && about_peak) && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Reads what `run` measured (see the module documentation). `catalog_peak`: the part's dense
/// peak at the row's precision [TFLOP/s], used to choose among several stated peaks. `Err` names
/// the missing figure.
pub fn read_metric(run: &MeasuredRun, catalog_peak: Option<f64>) -> Result<MetricReading, RowReason> {
    let words = Words::new(run.measured.flop_convention.as_deref().unwrap_or(""));
    let mut notes = Vec::new();
    if let Some(s) = &run.measured.structured {
        return read_structured(run, s, &words);
    }
    let named = kinds_named(&words);
    // "tokens/s" named while only the total is given (or the reverse) is the same figure.
    let present = |k: MetricKind| match k {
        MetricKind::TokensPerSPerDevice | MetricKind::TokensPerSTotal => {
            [MetricKind::TokensPerSPerDevice, MetricKind::TokensPerSTotal]
                .into_iter()
                .find(|t| field(*t, run).is_some())
        }
        k => field(k, run).is_some().then_some(k),
    };
    let kind = match named.iter().find_map(|k| present(*k)) {
        Some(k) => k,
        None => {
            let k =
                MetricKind::ALL.into_iter().find(|k| field(*k, run).is_some()).ok_or(RowReason::NoMeasuredFigure)?;
            match named.first() {
                Some(n) => notes.reading(format!(
                    "the words mention {}, which the row does not give: compared in {}, the figure it gives",
                    n.key(),
                    k.key()
                )),
                None if !words.is_empty() => notes.reading(format!(
                    "flop_convention `{}` names no figure fmperf knows: compared in {}, the first figure given",
                    words.text,
                    k.key()
                )),
                None => {}
            }
            k
        }
    };
    let value = field(kind, run).unwrap_or(0.0);
    let (flops, peak) = if kind.needs_flops() {
        let flops = match flops_named(&words) {
            Some(f) => f,
            None if kind == MetricKind::Hfu => {
                notes.reading("FLOP count not stated: an HFU counts hardware FLOPs (recomputation included)".into());
                FlopCount::Hardware
            }
            None => {
                notes.reading(
                    "FLOP count not stated: read as model FLOPs (NeMo's, MaxText's, torchtitan's and PaLM's \
                     convention)"
                        .into(),
                );
                FlopCount::Model
            }
        };
        let peak = if matches!(kind, MetricKind::Mfu | MetricKind::Hfu) {
            let stated = stated_peaks(&words);
            match (stated.as_slice(), catalog_peak) {
                ([], _) => None,
                ([one], _) => Some(*one),
                (many, Some(c)) => {
                    let hit = many.iter().copied().find(|p| (p / c - 1.0).abs() <= 0.02);
                    if hit.is_none() {
                        notes.reading(format!(
                            "several peaks stated ({many:?} TFLOP/s), none the part's: its dense peak {c} TFLOP/s used"
                        ));
                    }
                    hit
                }
                (many, None) => {
                    notes.reading(format!("several peaks stated ({many:?} TFLOP/s): the first used"));
                    Some(many[0])
                }
            }
        } else {
            None
        };
        (Some(flops), peak)
    } else {
        (None, None)
    };
    Ok(MetricReading { kind, value, flops, peak_tflops: peak, notes })
}

fn read_structured(run: &MeasuredRun, s: &StructuredMetric, words: &Words) -> Result<MetricReading, RowReason> {
    let kind_text = s.kind.as_deref().unwrap_or("");
    let kind =
        MetricKind::parse(kind_text).ok_or_else(|| RowReason::UnknownMetricKind { kind: kind_text.to_string() })?;
    let value = s.value.or_else(|| field(kind, run)).ok_or(RowReason::NoMetricValue { kind })?;
    let mut notes = Vec::new();
    let flops = if kind.needs_flops() {
        Some(match s.flops.as_deref() {
            Some(f) => FlopCount::parse(f).unwrap_or_else(|| {
                notes.reading(format!("measured.metric.flops `{f}` not understood: read as model FLOPs"));
                FlopCount::Model
            }),
            None => flops_named(words).unwrap_or(if kind == MetricKind::Hfu {
                FlopCount::Hardware
            } else {
                FlopCount::Model
            }),
        })
    } else {
        None
    };
    Ok(MetricReading { kind, value, flops, peak_tflops: s.peak_tflops, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(conv: &str, set: &dyn Fn(&mut MeasuredRun)) -> MeasuredRun {
        let mut r = MeasuredRun::default();
        r.measured.flop_convention = Some(conv.to_string());
        set(&mut r);
        r
    }

    #[test]
    fn kinds_and_counts_from_words() {
        let r = run("Megatron eq.(3): F = 96*B*s*l*h^2*(1 + s/(6h)); hardware-FLOP style", &|r| {
            r.measured.tflops_per_device = Some(140.0)
        });
        let m = read_metric(&r, Some(312.0)).unwrap();
        assert_eq!((m.kind, m.flops), (MetricKind::TflopsPerDevice, Some(FlopCount::MegatronEq3)));
        let r = run("MaxText model TFLOP/s per chip; MFU vs 197", &|r| {
            r.measured.mfu = Some(0.6);
            r.measured.tflops_per_device = Some(120.0);
        });
        let m = read_metric(&r, Some(197.0)).unwrap();
        assert_eq!((m.kind, m.flops, m.value), (MetricKind::TflopsPerDevice, Some(FlopCount::Model), 120.0));
        let r = run("MFU vs 197 peak", &|r| r.measured.mfu = Some(0.6));
        let m = read_metric(&r, None).unwrap();
        assert_eq!((m.kind, m.peak_tflops), (MetricKind::Mfu, Some(197.0)));
        let r = run("peak 312 (A100) / 989 bf16, 1979 fp8 (H100); flops_per_seq = 2*n_params*seq", &|r| {
            r.measured.mfu = Some(0.4)
        });
        let m = read_metric(&r, Some(989.0)).unwrap();
        assert_eq!((m.flops, m.peak_tflops), (Some(FlopCount::SixN), Some(989.0)));
        assert!(read_metric(&run("tokens/s", &|_| ()), None).unwrap_err().to_string().contains("no measured figure"));
    }

    #[test]
    fn structured_form_round_trips() {
        let m = MetricReading {
            kind: MetricKind::Hfu,
            value: 0.5,
            flops: Some(FlopCount::Hardware),
            peak_tflops: Some(989.0),
            notes: vec![],
        };
        let v = m.structured();
        assert_eq!(v, json!({"kind": "hfu", "value": 0.5, "flops": "hardware", "peak_tflops": 989.0}));
        let s = StructuredMetric {
            kind: Some("hfu".into()),
            value: Some(0.5),
            flops: Some("hardware".into()),
            peak_tflops: Some(989.0),
        };
        let r = MeasuredRun::default();
        let back = read_structured(&r, &s, &Words::default()).unwrap();
        assert_eq!(back, m);
        let bad = StructuredMetric { kind: Some("speed".into()), ..s };
        assert!(read_structured(&r, &bad, &Words::default()).unwrap_err().to_string().contains("not one of"));
    }
}
