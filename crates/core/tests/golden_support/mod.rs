//! Shared helpers of the golden tests: loading `tests/data/reference-golden.json` (the reference
//! implementation's outputs, copied unchanged into the repository; see `tests/data/reference-golden.md`),
//! building inputs from its objects and comparing floats.

#![allow(dead_code)]

use std::sync::OnceLock;

use fmperf_core::vocab::Candidate;
use fmperf_core::{ModelShape, Strategy, SystemParams};
use serde_json::Value;

/// Relative tolerance of every float comparison.
pub const TOLERANCE: f64 = 1e-9;

/// The golden file, parsed once per test binary.
pub fn golden() -> &'static Value {
    static GOLDEN: OnceLock<Value> = OnceLock::new();
    GOLDEN.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference-golden.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).expect("golden file is JSON")
    })
}

/// An array of the golden file by key.
pub fn section(key: &str) -> &'static [Value] {
    golden()[key].as_array().unwrap_or_else(|| panic!("golden file has no array `{key}`")).as_slice()
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("expected an unsigned integer, got {v}"))
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("expected a number, got {v}"))
}

pub fn strategy(v: &Value) -> Strategy {
    v.as_str().expect("strategy is a string").parse().expect("known strategy")
}

/// The model of an entry: its `model` object if present, else its `model_name`.
pub fn model(entry: &Value) -> ModelShape {
    match entry.get("model") {
        Some(m) => ModelShape::from_reference_json(&m.to_string()).expect("golden model parses"),
        None => ModelShape::reference(entry["model_name"].as_str().unwrap()).expect("reference model"),
    }
}

/// The system of an entry: its `system` object if present, else `system_name` with `nvlink_size`.
pub fn system(entry: &Value) -> SystemParams {
    match entry.get("system") {
        Some(s) => SystemParams::from_reference_json(&s.to_string()).expect("golden system parses"),
        None => SystemParams::reference(entry["system_name"].as_str().unwrap())
            .expect("reference system")
            .with_domain_size(u(&entry["nvlink_size"])),
    }
}

/// A candidate from the reference's config dict (`dp, tp | tp1, tp2, pp, mbs, [nb], nv_*`).
pub fn candidate(strategy: Strategy, c: &Value) -> Candidate {
    let g = |k: &str| c.get(k).map(u);
    match strategy {
        Strategy::OneD => Candidate::one_d(
            g("dp").unwrap(),
            g("tp").unwrap(),
            g("pp").unwrap(),
            g("mbs").unwrap(),
            g("nv_tp").unwrap(),
            g("nv_dp").unwrap(),
            g("nv_pp").unwrap(),
        ),
        _ => Candidate {
            strategy,
            dp: g("dp").unwrap(),
            tp1: g("tp1").unwrap(),
            tp2: g("tp2").unwrap(),
            pp: g("pp").unwrap(),
            mbs: g("mbs").unwrap(),
            nb: g("nb").unwrap_or(1),
            nv_tp1: g("nv_tp1").unwrap(),
            nv_tp2: g("nv_tp2").unwrap(),
            nv_dp: g("nv_dp").unwrap(),
            nv_pp: g("nv_pp").unwrap(),
        },
    }
}

/// A candidate from the reference's tuple (golden `meta.tuple_orders`).
pub fn candidate_from_tuple(strategy: Strategy, t: &[u64]) -> Candidate {
    match strategy {
        Strategy::OneD => Candidate::one_d(t[0], t[1], t[2], t[3], t[4], t[5], t[6]),
        _ => {
            // 2d carries nb after mbs; 2d-seqp does not.
            let (nb, nv) = if strategy == Strategy::Summa2D { (t[5], &t[6..]) } else { (1, &t[5..]) };
            Candidate {
                strategy,
                dp: t[0],
                tp1: t[1],
                tp2: t[2],
                pp: t[3],
                mbs: t[4],
                nb,
                nv_tp1: nv[0],
                nv_tp2: nv[1],
                nv_dp: nv[2],
                nv_pp: nv[3],
            }
        }
    }
}

/// Collects float and exact comparisons and reports them together.
#[derive(Default)]
pub struct Checker {
    pub floats: usize,
    pub bit_exact: usize,
    pub exact: usize,
    pub failures: Vec<String>,
    pub max_rel: f64,
}

impl Checker {
    /// A float within [`TOLERANCE`] relative (bit-exact counted separately).
    pub fn float(&mut self, what: impl std::fmt::Display, ours: f64, golden: f64) {
        self.floats += 1;
        if ours.to_bits() == golden.to_bits() || (ours == 0.0 && golden == 0.0) {
            self.bit_exact += 1;
            return;
        }
        if std::env::var("GOLDEN_SHOW_ULPS").is_ok() {
            println!("not bit-exact: {what}: ours {ours:e} golden {golden:e}");
        }
        let rel = (ours - golden).abs() / ours.abs().max(golden.abs());
        self.max_rel = self.max_rel.max(rel);
        if rel.is_nan() || rel > TOLERANCE {
            self.failures.push(format!("{what}: ours {ours:e}, golden {golden:e} (rel {rel:.2e})"));
        }
    }

    /// A float given as a JSON value.
    pub fn num(&mut self, what: impl std::fmt::Display, ours: f64, golden: &Value) {
        self.float(what, ours, f(golden));
    }

    /// A value that must be equal.
    pub fn same<T: PartialEq + std::fmt::Debug>(&mut self, what: impl std::fmt::Display, ours: T, golden: T) {
        self.exact += 1;
        if ours != golden {
            self.failures.push(format!("{what}: ours {ours:?}, golden {golden:?}"));
        }
    }

    /// Prints the tally and fails with the first failures, if any.
    pub fn finish(self, name: &str) {
        println!(
            "{name}: {} floats ({} bit-exact, max rel diff {:.2e}), {} exact values, {} failures",
            self.floats,
            self.bit_exact,
            self.max_rel,
            self.exact,
            self.failures.len()
        );
        if !self.failures.is_empty() {
            let shown: Vec<&String> = self.failures.iter().take(40).collect();
            panic!(
                "{name}: {} mismatches, first ones:\n{}",
                self.failures.len(),
                shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
            );
        }
    }
}
