//! What a sweep computes: a base scenario, the axes that vary it, configuration constraints, the
//! batch rule, and the rule that turns gradient-accumulation steps into the reference model's
//! micro-batches.

use super::sweep_axis::{Axis, AxisKey, AxisValue, MAX_POINTS};
use super::{Scenario, UserEntries};
use crate::catalog::MappingOptions;
use crate::mode::Mode;
use crate::vocab::Candidate;
use crate::{Error, Strategy};

/// How the global batch `G` of a point is set.
///
/// Gradient accumulation: in the reference model one iteration (one optimizer step) runs
/// `nmb = G/(dp·mbs)` micro-batches through each pipeline, and nothing else distinguishes
/// accumulation steps from pipeline micro-batches. So `accum = a` (axis [`AxisKey::Accum`]) means
/// "configurations with `G/(dp·mbs) = a`":
/// * with [`BatchRule::Fixed`], `G` stays and `dp·mbs = G/a` (fewer samples per micro-step);
/// * with [`BatchRule::PerDevice`], `G = b·devices·a`: every device contributes `b` samples per
///   micro-step and accumulation multiplies the batch (how the accelerator study varied it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchRule {
    /// `G` = the scenario's global batch (or the value of a `batch` axis).
    Fixed,
    /// `G = b × devices (× accumulation steps)` with `b` samples per device and micro-step.
    PerDevice(u64),
}

/// Restrictions on the configurations searched (`None` = free). A `tp` of 8 keeps candidates with
/// `tp1·tp2 = 8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Constraints {
    /// Total tensor-parallel degree `tp1·tp2`.
    pub tp: Option<u64>,
    /// First tensor-parallel dimension.
    pub tp1: Option<u64>,
    /// Second tensor-parallel dimension.
    pub tp2: Option<u64>,
    /// Pipeline stages.
    pub pp: Option<u64>,
    /// Data-parallel degree.
    pub dp: Option<u64>,
    /// Micro-batch size [samples].
    pub mbs: Option<u64>,
    /// Micro-batches per iteration (gradient-accumulation steps).
    pub microbatches: Option<u64>,
}

impl Constraints {
    /// Whether `c` satisfies every restriction with global batch `g`.
    pub fn matches(&self, c: &Candidate, g: u64) -> bool {
        let ok = |want: Option<u64>, have: u64| want.is_none_or(|w| w == have);
        ok(self.tp, c.tp())
            && ok(self.tp1, c.tp1)
            && ok(self.tp2, c.tp2)
            && ok(self.pp, c.pp)
            && ok(self.dp, c.dp)
            && ok(self.mbs, c.mbs)
            && ok(self.microbatches, c.microbatches(g))
    }

    /// Whether nothing is restricted.
    pub fn is_free(&self) -> bool {
        *self == Constraints::default()
    }

    /// Every restriction with its key (`accum` for the micro-batches per iteration), in a fixed order.
    pub fn entries(&self) -> [(&'static str, Option<u64>); 7] {
        [
            ("tp", self.tp),
            ("tp1", self.tp1),
            ("tp2", self.tp2),
            ("pp", self.pp),
            ("dp", self.dp),
            ("mbs", self.mbs),
            ("accum", self.microbatches),
        ]
    }

    /// The restrictions written `key=value,…` (empty when free), as [`crate::sweep::text`] parses them.
    pub fn to_text(&self) -> String {
        let parts: Vec<String> =
            self.entries().into_iter().filter_map(|(n, v)| v.map(|v| format!("{n}={v}"))).collect();
        parts.join(",")
    }

    /// The restriction of `key` (`accum`: the micro-batches per iteration), if any.
    pub fn get(&self, key: AxisKey) -> Option<u64> {
        match key {
            AxisKey::Tp => self.tp,
            AxisKey::Tp1 => self.tp1,
            AxisKey::Tp2 => self.tp2,
            AxisKey::Pp => self.pp,
            AxisKey::Dp => self.dp,
            AxisKey::Mbs => self.mbs,
            AxisKey::Accum => self.microbatches,
            _ => None,
        }
    }

    /// Sets the restriction of a constraint axis (`tp`, `tp1`, `tp2`, `pp`, `dp`, `mbs`).
    pub fn set(&mut self, key: AxisKey, v: u64) {
        match key {
            AxisKey::Tp => self.tp = Some(v),
            AxisKey::Tp1 => self.tp1 = Some(v),
            AxisKey::Tp2 => self.tp2 = Some(v),
            AxisKey::Pp => self.pp = Some(v),
            AxisKey::Dp => self.dp = Some(v),
            AxisKey::Mbs => self.mbs = Some(v),
            AxisKey::Accum => self.microbatches = Some(v),
            _ => {}
        }
    }
}

/// A sweep: the cartesian product of `axes` (the last axis varies fastest) applied to `base`.
///
/// Each point is the fastest configuration that fits in memory over `base.strategies` (or the
/// strategy of a `strategy` axis), with its breakdown; a point where none exists says why. Every
/// point is searched in `mode`: reference mode (the published model, bit-exact with
/// [`crate::search::Search::new`]) or extended mode (as [`crate::search::Search::in_mode`] with a setup):
/// there the point's precision is the sweep's own (field, system spec or axis) or else the
/// switch's, a `sparsity` axis sets the switch `weight_sparsity`, and 2D SUMMA is not searched
/// (a point asking only for it says so).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// The scenario every point starts from (its `top_k` is not used: a point keeps the best).
    pub base: Scenario,
    /// The axes, slowest first. Each key at most once.
    pub axes: Vec<Axis>,
    /// Restrictions on the configurations of every point (axes may add more).
    pub fixed: Constraints,
    /// How the global batch of a point is set.
    pub batch: BatchRule,
    /// Values the catalog mapping should use instead of the system's own: `vector_tflops`,
    /// `scale_up_gbps`, `scale_out_gbps` (the other fields come from the scenario and the axes and
    /// are ignored here). They apply before the axes, e.g. to give a part whose entry lists no NIC
    /// bandwidth one.
    pub mapping: MappingOptions,
    /// The model that prices every point.
    pub mode: Mode,
    /// A calibration of the user's stack ([`crate::calibrate`]; extended mode): applied to every
    /// point on its system, said in the point's notes; points on other systems are priced
    /// uncalibrated and say so.
    pub calibration: Option<crate::calibrate::Calibration>,
}

impl SweepSpec {
    /// Checks the axes: at least one value each, no key twice, not too many points, and no axis
    /// fighting the batch rule. Errors name the axis.
    pub fn validate(&self) -> Result<(), Error> {
        let mut points: usize = 1;
        for (i, a) in self.axes.iter().enumerate() {
            let field = format!("axis.{}", a.key.name());
            if a.values.is_empty() {
                return Err(Error::invalid(field, "(none)", "needs at least one value"));
            }
            if self.axes[..i].iter().any(|b| b.key == a.key) {
                return Err(Error::invalid(field, a.to_text(), "is given twice").with_hint("merge the values"));
            }
            // A restriction and an axis of the same key: one of the two would be silently dropped.
            if let Some(v) = self.fixed.get(a.key) {
                let name = a.key.name();
                return Err(Error::invalid(
                    format!("fix.{name}"),
                    v,
                    format!("{name} is also an axis ({}); fix it or sweep it, not both", a.to_text()),
                ));
            }
            // A system or model axis names catalog entries: an unknown one is refused here, not
            // left to become an "invalid" point of a sweep that exits as if it ran.
            if matches!(a.key, AxisKey::System | AxisKey::Model) {
                for v in &a.values {
                    if let AxisValue::Name(id) = v {
                        let entries = UserEntries::builtin();
                        let found = match a.key {
                            AxisKey::System => entries.find_system(id).map(|_| ()),
                            _ => entries.find_model(id).map(|_| ()),
                        };
                        if let Err(e) = found {
                            return Err(Error::invalid(field.clone(), id, e.to_string()));
                        }
                    }
                }
            }
            points = points.saturating_mul(a.values.len());
            if points > MAX_POINTS {
                return Err(Error::invalid(field, a.values.len(), format!("makes more than {MAX_POINTS} points"))
                    .with_hint("use fewer values, or split the sweep with shards"));
            }
        }
        if let BatchRule::PerDevice(b) = self.batch {
            if b == 0 {
                return Err(Error::invalid("per_device_batch", b, "must be a positive integer"));
            }
            if self.has(AxisKey::GlobalBatch) {
                return Err(Error::invalid("axis.batch", "", "cannot be swept with a per-device batch")
                    .with_hint("either sweep the global batch or fix the samples per device"));
            }
        }
        super::mode_inputs::check_switches(&self.mode)?;
        if self.base.strategies.is_empty() && !self.has(AxisKey::Strategy) {
            return Err(Error::invalid("strategies", "[]", "needs at least one strategy")
                .with_hint(format!("one of {}", Strategy::ALL.map(|s| s.as_str()).join(", "))));
        }
        Ok(())
    }

    /// Whether an axis of `key` is swept.
    pub fn has(&self, key: AxisKey) -> bool {
        self.axes.iter().any(|a| a.key == key)
    }

    /// Number of points (product of the axis lengths; 1 without axes).
    pub fn point_count(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).fold(1usize, |a, b| a.saturating_mul(b))
    }

    /// The value index of every axis at point `index` (row-major: the last axis fastest).
    pub fn coords(&self, index: usize) -> Vec<usize> {
        let mut rest = index;
        let mut out = vec![0; self.axes.len()];
        for (i, a) in self.axes.iter().enumerate().rev() {
            let n = a.values.len().max(1);
            out[i] = rest % n;
            rest /= n;
        }
        out
    }

    /// The strategies searched at points without a `strategy` axis.
    pub fn strategies(&self) -> &[Strategy] {
        &self.base.strategies
    }
}

/// Chunks of a sweep per worker thread or Web Worker at least: small chunks even out points of
/// very different cost (a device-count axis, where the largest counts have the most candidates).
pub const CHUNKS_PER_WORKER: usize = 4;

/// One part of a sweep split into `count` contiguous parts: `index` from 0 to `count − 1`.
/// Concatenating the parts' outputs in index order gives the whole sweep's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, 0-based.
    pub index: u64,
    /// How many parts.
    pub count: u64,
}

impl Shard {
    /// The whole sweep as one part.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parses `i/n` (0 ≤ i < n).
    pub fn parse(text: &str) -> Result<Shard, Error> {
        let bad = |rule: &str| {
            Error::invalid("shard", text, rule.to_string())
                .with_hint("write i/n with 0 ≤ i < n, e.g. 0/4 … 3/4 (shard 0 carries the CSV header)")
        };
        let (i, n) = text.split_once('/').ok_or_else(|| bad("must be written i/n"))?;
        let i = i.trim().parse::<u64>().map_err(|_| bad("i must be an integer ≥ 0"))?;
        let n = n.trim().parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| bad("n must be a positive integer"))?;
        if i >= n {
            return Err(bad("i must be smaller than n (shards are numbered from 0)"));
        }
        Ok(Shard { index: i, count: n })
    }

    /// The point indices `[start, end)` of this part of a sweep of `points` points.
    pub fn range(&self, points: usize) -> std::ops::Range<usize> {
        let p = points as u128;
        let at = |i: u64| (p * i as u128 / self.count.max(1) as u128) as usize;
        at(self.index)..at(self.index + 1)
    }
}
