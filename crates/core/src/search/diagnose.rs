//! Why a search found nothing, and what would work: a typed reason ([`EmptyReason`]) and the
//! nearest device counts and batches that give candidates (or fit in memory), each verified by
//! generating (or running) that search ([`Search::diagnose`]).

use super::space::Rules;
use super::widen::{search_space, usable_device_counts};
use super::{ExecutionChoices, Search, SearchSpec};
use crate::vocab::divisors;
use crate::{ModelShape, Strategy};

/// Suggestions of each kind tried before giving up (bounds the work of a diagnosis).
const MAX_TRIES: usize = 24;
/// Full searches run to find a device count where something fits in memory.
const MAX_MEMORY_SEARCHES: usize = 3;

/// Why a search has no result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EmptyReason {
    /// No split of the devices as dp × tp × pp (× the strategy's second dimension) has `dp`
    /// dividing the batch, `tp` dividing the heads and the width and `pp` dividing the depth;
    /// `unplaced` lists the prime powers `(p, exponent)` of the device count that fit none.
    NoFactorisation {
        /// Devices asked for.
        devices: u64,
        /// Global batch [samples].
        global_batch: u64,
        /// Scale-up domain [devices].
        domain: u64,
        /// Attention heads.
        heads: u64,
        /// Transformer blocks.
        depth: u64,
        /// Prime powers of `devices` that no dimension can take.
        unplaced: Vec<(u64, u32)>,
    },
    /// Splits exist, but the strategy's rules exclude each one (sequence or width too short for
    /// the split, micro-batch divisibility).
    StrategyRules {
        /// The strategy.
        strategy: Strategy,
        /// The rules, in words.
        rules: String,
    },
    /// Extended mode rejected every candidate; the first reason.
    Rejected {
        /// The first rejection, in words.
        first: String,
    },
    /// Every candidate needs more memory than the device has.
    OutOfMemory {
        /// The least memory per device of any candidate [GB].
        least_gb: f64,
        /// Memory of one device [GB].
        capacity_gb: f64,
    },
}

impl EmptyReason {
    /// The reason in one sentence.
    pub fn message(&self) -> String {
        match self {
            EmptyReason::NoFactorisation { devices, global_batch, domain, heads, depth, unplaced } => {
                let factors: Vec<String> =
                    unplaced.iter().map(|&(p, a)| if a == 1 { p.to_string() } else { format!("{p}^{a}") }).collect();
                let what = if factors.is_empty() {
                    String::new()
                } else {
                    format!(": the factor {} of {devices} fits none of them", factors.join(" · "))
                };
                format!(
                    "no way to split {devices} devices (fast domains of {domain}) as data × tensor × pipeline \
                     parallel with the data-parallel degree dividing the global batch {global_batch}, the \
                     tensor-parallel degree dividing the {heads} heads and the pipeline degree dividing the depth \
                     {depth}{what}"
                )
            }
            EmptyReason::StrategyRules { strategy, rules } => {
                format!("every split of the devices breaks a rule of strategy {strategy}: {rules}")
            }
            EmptyReason::Rejected { first } => format!("extended mode rejects every candidate: {first}"),
            EmptyReason::OutOfMemory { least_gb, capacity_gb } => format!(
                "every configuration needs more than the {capacity_gb} GB of a device: the leanest needs {least_gb:.1} GB \
                 ({:.1} GB over)",
                least_gb - capacity_gb
            ),
        }
    }
}

/// A change of the scenario that gives results (verified).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Suggestion {
    /// Devices [count].
    pub devices: u64,
    /// Global batch [samples].
    pub global_batch: u64,
    /// What changes, in words (`2048 devices`, `global batch 4608`).
    pub change: String,
}

/// Why a search found nothing and what would work.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Diagnosis {
    /// The cause.
    pub reason: EmptyReason,
    /// The cause in words ([`EmptyReason::message`]).
    pub message: String,
    /// The nearest device counts and batches that give results, nearest first.
    pub suggestions: Vec<Suggestion>,
}

impl Diagnosis {
    /// One diagnosis for several strategies' searches of the same scenario (all empty): memory
    /// when any strategy had candidates (the leanest of them), else the first strategy's reason;
    /// suggestions merged, nearest first, without repeats.
    pub fn combine(parts: &[Diagnosis], devices: u64, global_batch: u64) -> Option<Diagnosis> {
        let reasons: Vec<&EmptyReason> = parts.iter().map(|d| &d.reason).collect();
        let pick = &parts[EmptyReason::pick(&reasons)?];
        let mut suggestions: Vec<Suggestion> = Vec::new();
        for d in parts {
            for s in &d.suggestions {
                if !suggestions.iter().any(|x| x.devices == s.devices && x.global_batch == s.global_batch) {
                    suggestions.push(s.clone());
                }
            }
        }
        crate::sort::sort_by_key(&mut suggestions, |s| distance(s, devices, global_batch));
        Some(Diagnosis { reason: pick.reason.clone(), message: pick.message.clone(), suggestions })
    }

    /// The diagnosis in words, with the suggestions (`…; try 2048 devices or global batch 4608`).
    pub fn text(&self) -> String {
        if self.suggestions.is_empty() {
            return self.message.clone();
        }
        let s: Vec<&str> = self.suggestions.iter().map(|s| s.change.as_str()).collect();
        format!("{}; nearest that work: {}", self.message, s.join(", "))
    }
}

impl EmptyReason {
    /// Which of several searches' reasons speaks for them all ([`Diagnosis::combine`]): the
    /// out-of-memory one nearest to fitting (the least memory needed), else the first (`None`
    /// when there is none).
    pub fn pick(reasons: &[&EmptyReason]) -> Option<usize> {
        let memory = (0..reasons.len())
            .filter(|&i| matches!(reasons[i], EmptyReason::OutOfMemory { .. }))
            .min_by(|&a, &b| least(reasons[a]).total_cmp(&least(reasons[b])));
        memory.or((!reasons.is_empty()).then_some(0))
    }
}

fn least(r: &EmptyReason) -> f64 {
    match r {
        EmptyReason::OutOfMemory { least_gb, .. } => *least_gb,
        _ => f64::INFINITY,
    }
}

/// Relative distance of a suggestion from the asked scenario (for ordering; ×1000, integral).
fn distance(s: &Suggestion, devices: u64, global_batch: u64) -> u64 {
    let rel = |a: u64, b: u64| (a.abs_diff(b) as f64 / b.max(1) as f64 * 1000.0) as u64;
    rel(s.devices, devices) + rel(s.global_batch, global_batch)
}

/// `v_p(x)`: the exponent of the prime `p` in `x` (`x > 0`).
fn valuation(mut x: u64, p: u64) -> u32 {
    let mut a = 0;
    while x > 0 && x.is_multiple_of(p) {
        x /= p;
        a += 1;
    }
    a
}

/// Prime factorisation `[(p, exponent)]`, ascending.
fn factorise(mut x: u64) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let mut p = 2u64;
    while p.saturating_mul(p) <= x {
        if x.is_multiple_of(p) {
            let a = valuation(x, p);
            x /= p.pow(a);
            out.push((p, a));
        }
        p += 1;
    }
    if x > 1 {
        out.push((x, 1));
    }
    out
}

/// The prime powers of `n` that neither the batch, the heads and width, the depth (any factor up
/// to the depth with uneven stages) nor the strategy's second dimension can take.
fn unplaced(strategy: Strategy, m: &ModelShape, n: u64, g: u64, uneven: bool) -> Vec<(u64, u32)> {
    factorise(n)
        .into_iter()
        .filter(|&(p, a)| {
            let second = match strategy {
                Strategy::OneD => 0,
                Strategy::Summa2D => valuation(m.e, p),
                Strategy::ContextParallel2D => valuation(m.l, p),
            };
            let pipeline = if uneven && p <= m.depth { a } else { valuation(m.depth, p) };
            let available = valuation(g, p) + valuation(m.h, p).min(valuation(m.e, p)) + pipeline + second;
            a > available
        })
        .collect()
}

impl Search {
    /// Why this (finished) search has no result and the nearest device counts and batches that
    /// give one; `None` when it has results. Runs at most a few more searches (to verify memory
    /// suggestions), so call it once, after the search.
    ///
    /// A search that fell back to fewer devices ([`super::Widening::FewerDevices`]) is diagnosed
    /// too: the reason is why no configuration uses all the devices.
    pub fn diagnose(&self) -> Option<Diagnosis> {
        let reason = self.empty_reason()?;
        let uneven = self.setup.as_ref().map(|s| s.options.uneven_stages);
        let suggestions = match reason {
            EmptyReason::NoFactorisation { .. } | EmptyReason::StrategyRules { .. } => self.shape_suggestions(uneven),
            EmptyReason::OutOfMemory { .. } => self.memory_suggestions(uneven),
            EmptyReason::Rejected { .. } => Vec::new(),
        };
        Some(Diagnosis { message: reason.message(), reason, suggestions })
    }

    /// [`Search::diagnose`]'s reason alone, without looking for the nearest scenarios that work
    /// (no further search): what a caller that shows only the message needs (the page's first
    /// view, [`crate::explore::ExploreSearch::diagnosis_message`]).
    pub fn empty_reason(&self) -> Option<EmptyReason> {
        let fewer = matches!(self.widening, super::Widening::FewerDevices { .. });
        if !self.top.items().is_empty() && !fewer {
            return None;
        }
        let spec = &self.spec;
        let uneven = self.setup.as_ref().map(|s| s.options.uneven_stages);
        let (n, g, domain) = (spec.n_gpus, spec.global_batch, spec.system.domain_size);
        let capacity = self.capacity_gb();
        let reason = if self.space.is_empty() || fewer {
            let missing = unplaced(spec.strategy, &spec.model, n, g, uneven.unwrap_or(false));
            if !missing.is_empty() {
                EmptyReason::NoFactorisation {
                    devices: n,
                    global_batch: g,
                    domain,
                    heads: spec.model.h,
                    depth: spec.model.depth,
                    unplaced: missing,
                }
            } else {
                EmptyReason::StrategyRules { strategy: spec.strategy, rules: strategy_rules(spec.strategy).into() }
            }
        } else if self.feasible == 0 && self.min_mem_gb.is_finite() && self.min_mem_gb > capacity {
            EmptyReason::OutOfMemory { least_gb: self.min_mem_gb, capacity_gb: capacity }
        } else {
            let first =
                self.first_rejection.as_ref().map_or_else(|| "no reason given".to_string(), |(_, e)| e.to_string());
            EmptyReason::Rejected { first }
        };
        Some(reason)
    }

    /// Nearest device counts (below and above) and batches with a non-empty space.
    fn shape_suggestions(&self, uneven: Option<bool>) -> Vec<Suggestion> {
        let spec = &self.spec;
        let (n, g, nvs) = (spec.n_gpus, spec.global_batch, spec.system.domain_size);
        let works = |n: u64, g: u64| {
            let (space, _) = search_space(spec.strategy, &spec.model, nvs, n, g, uneven, false);
            !space.is_empty() && space.devices() == n
        };
        let rules = Rules { uneven_stages: uneven.unwrap_or(false), partial_domains: true };
        let counts = usable_device_counts(spec.strategy, &spec.model, g, rules, n.saturating_mul(2));
        let mut out = Vec::new();
        if let Some(&below) = counts.iter().rev().filter(|&&c| c < n).take(MAX_TRIES).find(|&&c| works(c, g)) {
            out.push(Suggestion { devices: below, global_batch: g, change: format!("{below} devices") });
        }
        if let Some(&above) = counts.iter().filter(|&&c| c > n).take(MAX_TRIES).find(|&&c| works(c, g)) {
            out.push(Suggestion { devices: above, global_batch: g, change: format!("{above} devices") });
        }
        // Batches: the multiples of each divisor of n nearest to g.
        let mut batches: Vec<u64> = divisors(n)
            .into_iter()
            .flat_map(|d| [g / d * d, g.div_ceil(d).saturating_mul(d)])
            .filter(|&b| b > 0 && b != g && b <= crate::vocab::MAX_GLOBAL_BATCH)
            .collect();
        crate::sort::sort_by_key(&mut batches, |&b| (b.abs_diff(g), b));
        batches.dedup();
        let mut found = 0;
        for &b in batches.iter().take(MAX_TRIES * 4) {
            if works(n, b) {
                out.push(Suggestion { devices: n, global_batch: b, change: format!("global batch {b}") });
                found += 1;
                if found == 2 {
                    break;
                }
            }
        }
        crate::sort::sort_by_key(&mut out, |s| distance(s, n, g));
        out
    }

    /// Device counts above the asked one where something fits in memory (verified by searching),
    /// starting where the model states alone would fit.
    fn memory_suggestions(&self, uneven: Option<bool>) -> Vec<Suggestion> {
        let spec = &self.spec;
        let (n, g) = (spec.n_gpus, spec.global_batch);
        let rules = Rules { uneven_stages: uneven.unwrap_or(false), partial_domains: true };
        let ratio = (self.min_mem_gb / self.capacity_gb()).max(1.0);
        let limit = ((n as f64) * ratio * 8.0).min(crate::vocab::MAX_DEVICES as f64) as u64;
        let counts = usable_device_counts(spec.strategy, &spec.model, g, rules, limit);
        let start = ((n as f64) * ratio).ceil() as u64;
        let mut tried = 0;
        let mut last = 0u64;
        for &c in counts.iter().filter(|&&c| c > n && c >= start) {
            // Try counts at least 1.5× apart so three searches cover a wide range.
            if last > 0 && (c as f64) < last as f64 * 1.5 {
                continue;
            }
            last = c;
            tried += 1;
            if let Some(r) = self.rerun(c, g)
                && !r.top.is_empty()
                && r.devices_used == c
            {
                return vec![Suggestion { devices: c, global_batch: g, change: format!("{c} devices") }];
            }
            if tried == MAX_MEMORY_SEARCHES {
                break;
            }
        }
        Vec::new()
    }

    /// The same search (mode, switches, execution choices) at another device count and batch,
    /// run to the end with a top list of one.
    fn rerun(&self, n: u64, g: u64) -> Option<super::SearchResult> {
        let spec = SearchSpec { n_gpus: n, global_batch: g, top_k: 1, ..self.spec.clone() };
        let choices = match (&self.chooser, &self.setup) {
            (Some(c), _) => c.choices,
            (None, Some(setup)) => ExecutionChoices::fixed(&setup.options),
            (None, None) => ExecutionChoices::SEARCH_ALL,
        };
        Search::in_mode(spec, self.setup.clone(), choices).ok().map(Search::finish)
    }
}

/// The rules of a strategy besides the divisibility of degrees, in words.
fn strategy_rules(s: Strategy) -> &'static str {
    match s {
        Strategy::OneD => "3·width/tp ≥ 128 and tp ≤ sequence length; micro-batch × sequence divisible by tp",
        Strategy::Summa2D => {
            "width/tp1 ≥ 128, sequence/tp2 ≥ 128, tp1 ≤ sequence length, tp2 dividing the width; panel counts"
        }
        Strategy::ContextParallel2D => {
            "width/tp1 ≥ 128, sequence/tp2 ≥ 128, tp1·tp2 ≤ sequence length; micro-batch × sequence divisible by tp1·tp2"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemParams;

    fn spec(model: ModelShape, n: u64, g: u64, nvs: u64) -> SearchSpec {
        SearchSpec {
            model,
            system: SystemParams::a100().with_domain_size(nvs),
            strategy: Strategy::OneD,
            n_gpus: n,
            global_batch: g,
            top_k: 5,
        }
    }

    #[test]
    fn factorisation_names_the_factor_and_suggests_counts_and_batches() {
        // GPT-2 XL-like: 25 heads, 48 blocks, on 7 devices with a batch of 512.
        let m = ModelShape { l: 1024, e: 1600, h: 25, depth: 48, f: 6400 };
        // The search falls back to 6 of the 7 devices and says why.
        let s = Search::new(spec(m, 7, 512, 8)).unwrap().finish();
        assert_eq!(s.widening, super::super::Widening::FewerDevices { asked: 7, used: 6 });
        assert!(!s.top.is_empty());
        let d = Search::new(spec(m, 7, 512, 8)).unwrap().diagnose().unwrap();
        let EmptyReason::NoFactorisation { unplaced, .. } = &d.reason else { panic!("{d:?}") };
        assert_eq!(unplaced, &vec![(7, 1)]);
        assert!(d.message.contains("factor 7"), "{}", d.message);
        let devices: Vec<u64> = d.suggestions.iter().map(|s| s.devices).collect();
        assert!(devices.contains(&6) && devices.contains(&8), "{:?}", d.suggestions);
        assert!(d.suggestions.iter().any(|s| s.global_batch == 518 || s.global_batch == 511), "{:?}", d.suggestions);
    }

    #[test]
    fn memory_is_blamed_only_when_candidates_exist() {
        let mut search = Search::new(spec(ModelShape::GPT3_1T, 8, 4096, 8)).unwrap();
        while !search.step(1000) {}
        let d = search.diagnose().unwrap();
        let EmptyReason::OutOfMemory { least_gb, capacity_gb } = d.reason else { panic!("{d:?}") };
        assert!(least_gb > capacity_gb);
        let s = &d.suggestions[0];
        let r = search.rerun(s.devices, s.global_batch).unwrap();
        assert!(!r.top.is_empty(), "{s:?}");
    }

    #[test]
    fn results_need_no_diagnosis() {
        let search = Search::new(spec(ModelShape::GPT3, 64, 512, 8)).unwrap();
        let mut search = search;
        while !search.step(usize::MAX) {}
        assert!(search.diagnose().is_none());
    }
}
