//! Why a search found nothing, in the user's words, with what to try: either no configuration
//! exists at all (no factorisation of the device count and the batch with the domain size: the
//! nearest device counts and batches that have configurations are suggested), or configurations
//! exist but none fits in memory.

use fmperf_chart::format::format_grouped as grouped;
use fmperf_core::explore::ExploreSpec;

/// What the page says when a list is empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Empty {
    /// The heading (`No configuration exists for 7 devices`).
    pub title: String,
    /// The cause, in a sentence.
    pub cause: String,
    /// What to try instead, one item each (nearest device counts and batches that work first).
    pub suggestions: Vec<String>,
}

/// The number of candidate configurations of `spec` with `n_gpus` devices and batch `batch`
/// (over its strategies; 0 when none can be generated).
fn candidates(spec: &ExploreSpec, n_gpus: u64, batch: u64) -> u64 {
    let s = ExploreSpec { n_gpus, global_batch: batch, ..spec.clone() };
    s.strategies.iter().filter_map(|st| s.search(*st).ok()).map(|x| x.progress().1).sum()
}

/// Up to `want` values nearest to `at` (within a factor of 2, at most `tries` tried) for which
/// `ok` holds, nearest first.
fn nearest(at: u64, want: usize, tries: usize, ok: impl Fn(u64) -> bool) -> Vec<u64> {
    let mut out = Vec::new();
    let mut tried = 0;
    let mut d = 1u64;
    while out.len() < want && tried < tries && d <= at {
        for v in [at.saturating_sub(d), at.saturating_add(d)] {
            if v == 0 || v > at.saturating_mul(2) || out.contains(&v) {
                continue;
            }
            tried += 1;
            if ok(v) {
                out.push(v);
            }
        }
        d += 1;
    }
    out.truncate(want);
    out
}

/// Why the search of `spec` found no configuration: `candidates` generated, none of which fits
/// when `candidates > 0`.
pub fn explain(spec: &ExploreSpec, candidates_found: u64) -> Empty {
    let (n, g, d) = (spec.n_gpus, spec.global_batch, spec.system.nvlink_size);
    let (ns, gs) = (grouped(n), grouped(g));
    let strategies = spec.strategies.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
    if candidates_found > 0 {
        return Empty {
            title: "No configuration fits in memory".into(),
            cause: format!(
                "All {} configurations of {strategies} need more than the {:.1} GB a device has.",
                grouped(candidates_found),
                spec.capacity_gb()
            ),
            suggestions: vec![
                "more devices, or a smaller global batch".into(),
                "a larger scale-up domain, or another strategy".into(),
                "a system with more memory per device (or, in extended mode, recomputation or sharded optimizer states)".into(),
            ],
        };
    }
    let mut suggestions = Vec::new();
    let counts = nearest(n, 4, 48, |m| candidates(spec, m, g) > 0);
    if !counts.is_empty() {
        let list = counts.iter().map(|c| grouped(*c)).collect::<Vec<_>>().join(", ");
        suggestions.push(format!("device counts near {ns} that work with batch {gs}: {list}"));
    }
    let batches = nearest(g, 3, 48, |b| candidates(spec, n, b) > 0);
    if !batches.is_empty() {
        let list = batches.iter().map(|c| grouped(*c)).collect::<Vec<_>>().join(", ");
        suggestions.push(format!("global batches near {gs} that work on {ns} devices: {list}"));
    }
    if d > n {
        suggestions.push(format!("a scale-up domain of at most {ns} devices (it is {d})"));
    }
    if suggestions.is_empty() {
        suggestions.push("another device count, batch or domain size: none near these has a configuration".into());
    }
    Empty {
        title: format!("No configuration exists for {ns} devices"),
        cause: format!(
            "No way to split {ns} devices into data × tensor × pipeline groups ({strategies}) that divides the global batch of {gs} and the model's layers and heads, with scale-up domains of {d} — nothing was out of memory: there was nothing to evaluate."
        ),
        suggestions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::explore::ExploreFields;
    use fmperf_core::mode::ModelMode;

    #[test]
    fn seven_gpus_name_the_missing_factorisation_and_nearby_counts() {
        let f = ExploreFields {
            model: "gpt2-xl".into(),
            system: "ref-A100".into(),
            domain: "8".into(),
            gpus: "7".into(),
            batch: "512".into(),
            ..ExploreFields::default_scenario()
        };
        let spec = f.resolve_in(&ModelMode::Reference).unwrap();
        assert_eq!(candidates(&spec, 7, 512), 0);
        let e = explain(&spec, 0);
        assert!(e.title.contains("7 devices"), "{e:?}");
        assert!(!e.cause.contains("memory") || e.cause.contains("nothing was out of memory"));
        assert!(e.suggestions[0].contains('8'), "{e:?}");
        // Every suggested count really has configurations.
        let counts: Vec<u64> = e.suggestions[0]
            .rsplit(": ")
            .next()
            .unwrap()
            .split(", ")
            .map(|x| x.replace(',', "").parse().unwrap())
            .collect();
        assert!(counts.iter().all(|&m| candidates(&spec, m, 512) > 0));
        // With configurations but none fitting, the message is about memory.
        assert!(explain(&spec, 12).title.contains("memory"));
    }

    #[test]
    fn nearest_looks_both_ways_nearest_first() {
        assert_eq!(nearest(10, 3, 100, |v| v % 4 == 0), vec![8, 12, 4]);
        assert_eq!(nearest(1, 2, 10, |_| false), Vec::<u64>::new());
    }
}
