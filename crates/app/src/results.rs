//! The explorer's result rows as a reader wants them: each parallel dimension in its own named
//! column (DP, TP, CP, PP, micro-batch; EP and ETP for an MoE model), and rows that differ only in the placement of the
//! dimensions on the fast domain collapsed into one (the best placement first, the others
//! expandable under it). The texts of the results card (summary line, column headers, cells)
//! live here too, so that the page and its first view ([`fmperf-first-view`]) write them alike.

use fmperf_core::Strategy;
use fmperf_core::explore::{ConfigReport, ExploreResult, ReportContext};
use fmperf_core::extended::moe::ExpertLayout;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::vocab::{Candidate, Fits};

use crate::fmt;

/// The named columns of a configuration, in order: data-, tensor-, context- and pipeline-parallel
/// degrees and the micro-batch [samples].
pub const DIM_HEADERS: [(&str, &str); 5] = [
    ("DP", "data-parallel degree"),
    ("TP", "tensor-parallel degree (2d: the SUMMA grid, features × tokens)"),
    ("CP", "context-parallel degree: the sequence split across devices (2d-seqp)"),
    ("PP", "pipeline-parallel degree (stages)"),
    ("mbs", "micro-batch size [samples]"),
];

/// The values of [`DIM_HEADERS`] for one configuration. 1d: TP = tp, CP = 1; 2d (SUMMA): TP =
/// `tp1×tp2`, CP = 1; 2d-seqp: TP = tp1, CP = tp2 (the sequence-parallel split).
pub fn dims(c: &Candidate) -> [String; 5] {
    let (tp, cp) = match c.strategy {
        Strategy::OneD => (c.tp1.to_string(), "1".to_string()),
        Strategy::Summa2D => (format!("{}×{}", c.tp1, c.tp2), "1".to_string()),
        Strategy::ContextParallel2D => (c.tp1.to_string(), c.tp2.to_string()),
    };
    [c.dp.to_string(), tp, cp, c.pp.to_string(), c.mbs.to_string()]
}

/// [`dims`] of a reported configuration, the CP cell followed by the context-parallel flavour the
/// search chose for it, in parentheses (`16 (hybrid 8×2)`, `8 (ulysses 8)`, `8 (ring)`: only
/// under `cp_comm=search`; [`fmperf_core::search::execution::CpFlavour::text`]).
pub fn report_dims(r: &ConfigReport) -> [String; 5] {
    let mut d = dims(&r.candidate);
    if let Some(f) = r.execution.and_then(|e| e.cp) {
        d[2] = format!("{} ({})", d[2], cp_flavour_text(r).unwrap_or_else(|| f.cp_comm.to_string()));
    }
    d
}

/// The context-parallel flavour the search chose for a configuration, in words (`ring`,
/// `ulysses 8`, `hybrid 8×2` = Ulysses degree × ring degree); `None` where it chose none (the
/// flavour fixed by `cp_comm`, or no context parallelism).
pub fn cp_flavour_text(r: &ConfigReport) -> Option<String> {
    let f = r.execution?.cp?;
    Some(f.text(r.candidate.dims(r.microbatches * r.candidate.dp * r.candidate.mbs).cp))
}

/// The columns of an MoE model's expert layout, after CP: expert-parallel and expert
/// tensor-parallel degrees (the expert layers re-split the TP·CP·DP devices of a stage).
pub const EXPERT_HEADERS: [(&str, &str); 2] = [
    ("EP", "expert-parallel degree: the routed experts spread over EP devices (folded over TP·CP·DP)"),
    ("ETP", "expert tensor-parallel degree: each expert's width split over ETP devices"),
];

/// The values of [`EXPERT_HEADERS`] for one configuration (`None`: a dense model).
pub fn expert_dims(experts: Option<&ExpertLayout>) -> Option<[String; 2]> {
    experts.map(|x| [x.ep.to_string(), x.etp.to_string()])
}

/// Whether a strategy is a research strategy: one that no mainstream training framework offers.
/// Megatron-LM/NeMo (tensor parallelism with sequence parallelism, context parallelism),
/// torchtitan (tensor and context parallelism) and MaxText (tensor and sequence/context sharding)
/// all run `1d` and `2d-seqp`; SUMMA 2D tensor parallelism (`2d`) exists in research systems
/// (Optimus, Xu et al. 2021; Colossal-AI's 2D mode) but in none of the three.
pub fn is_research(s: Strategy) -> bool {
    s == Strategy::Summa2D
}

/// The frameworks the mainstream filter names.
pub const MAINSTREAM: &str = "Megatron/NeMo, torchtitan and MaxText";

/// The reports of the merged list (`list` = `None`) or of one strategy's list, best first.
pub fn reports(ctx: &ReportContext, result: &ExploreResult, list: Option<Strategy>) -> Vec<ConfigReport> {
    let ranked = match list {
        None => &result.merged,
        Some(s) => match result.outcome(s) {
            Some(o) => &o.top,
            None => return Vec::new(),
        },
    };
    ranked.iter().map(|r| ConfigReport::of_ranked(ctx, r)).collect()
}

/// The explorer's word on its fastest layouts in extended mode (issue 31 §3): "these N layouts are
/// within fmperf's error band between layouts (±6 %) …: try them" when the N fastest rows shown
/// (placements collapsed, as the table shows them) are predicted within the band between
/// layouts of one job ([`fmperf_core::validate::layout_band`]: measured on the shipped layout
/// groups), instead of a ranking of noise; `None` when the fastest stands apart, and in reference
/// mode (the band is extended mode's).
pub fn band_note(spec: &ExploreSpec, reports: &[ConfigReport]) -> Option<String> {
    use fmperf_core::validate::layout_band::{LAYOUT_BAND, band_message};
    spec.extended.as_ref()?;
    let rows: Vec<(Candidate, Option<ExpertLayout>)> = reports.iter().map(|r| (r.candidate, r.experts)).collect();
    let times: Vec<f64> = collapse_rows(&rows).iter().map(|(lead, _)| reports[*lead].time_per_step_s).collect();
    band_message(&times, LAYOUT_BAND)
}

/// The results card's summary: the scenario searched, then how many candidates, in how long
/// [ms] when `elapsed_ms` is given (not for a result drawn ahead, at build time), and how many fit
/// in a device's memory [GB].
pub fn summary_line(spec: &ExploreSpec, result: &ExploreResult, elapsed_ms: Option<f64>) -> String {
    let time = elapsed_ms.map(|ms| format!(" in {ms:.0} ms")).unwrap_or_default();
    format!(
        "{} on {} · scale-up domain {} · {} devices · global batch {} — {} candidates{time}, {} fit in {}",
        spec.model_id,
        spec.system_name,
        spec.system.domain_size,
        fmt::count(spec.n_gpus),
        fmt::count(spec.global_batch),
        fmt::count(result.candidates()),
        fmt::count(result.feasible()),
        capacity_text(spec),
    )
}

/// A device's memory as the results use it, said once with its unit: `85.5 GB (sold as “80 GB”,
/// which counts GiB; GB here are 10⁹ bytes)` where the vendor's label is not the capacity in GB
/// (NVIDIA and AMD label HBM in binary units), else `80.0 GB`.
pub fn capacity_text(spec: &ExploreSpec) -> String {
    let cap = spec.capacity_gb();
    match spec.system_entry.memory_gb {
        Some(label) if (cap - label).abs() >= 0.05 => {
            format!("{} GB (sold as “{} GB”, which counts GiB; GB here are 10⁹ bytes)", fmt::gb(cap), label)
        }
        _ => format!("{} GB", fmt::gb(cap)),
    }
}

/// A column header of the results table after the dimensions: its name, its unit (on a second
/// line), its tooltip, and whether it is optional (hidden on narrow screens, class `opt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricHeader {
    /// The name.
    pub name: &'static str,
    /// The unit or second line (`[samples/s]`).
    pub unit: Option<&'static str>,
    /// The tooltip.
    pub title: Option<&'static str>,
    /// Hidden on narrow screens.
    pub optional: bool,
}

/// The metric columns, in order: throughput, step time, training time, memory, MFU, SUMMA panels,
/// members in the fast domain.
pub const METRIC_HEADERS: [MetricHeader; 7] = [
    MetricHeader { name: "throughput", unit: Some("[samples/s]"), title: None, optional: false },
    MetricHeader { name: "step", unit: Some("[s]"), title: None, optional: false },
    MetricHeader { name: "training", unit: Some("[days]"), title: None, optional: false },
    MetricHeader { name: "memory", unit: Some("[GB]"), title: None, optional: false },
    MetricHeader {
        name: "MFU",
        unit: None,
        title: Some("model FLOPs per sample × throughput / (devices × peak matrix rate)"),
        optional: false,
    },
    MetricHeader { name: "nb", unit: None, title: Some("SUMMA panels (2d only)"), optional: true },
    MetricHeader {
        name: "in fast domain",
        unit: Some("DP · TP · PP"),
        title: Some("members of each parallel dimension inside one fast (scale-up) domain"),
        optional: true,
    },
];

/// A list tab's label: the strategy and its best throughput [samples/s], or that none fits.
pub fn list_tab_label(strategy: Strategy, best_samples_per_s: Option<f64>) -> String {
    match best_samples_per_s {
        Some(b) => format!("{strategy} · {}", fmt::throughput(b)),
        None => format!("{strategy} · none fits"),
    }
}

/// The label of the list tab of every strategy.
pub const ALL_LIST_LABEL: &str = "All strategies";

/// The mainstream filter's label.
pub fn mainstream_label() -> String {
    format!(" Only what {MAINSTREAM} can run")
}

/// The last column's header and tooltip: the tick that pins a configuration for comparison.
pub const COMPARE_HEADER: (&str, &str) = ("compare", "tick up to 4 to compare them side by side");

/// The TP text of a configuration: `tp` (1d) or `tp1×tp2`.
pub fn tp_text(c: &Candidate) -> String {
    if c.strategy == Strategy::OneD { c.tp1.to_string() } else { format!("{}×{}", c.tp1, c.tp2) }
}

/// The placement tooltip: each dimension's members inside one fast domain, named.
pub fn placement_text(r: &ConfigReport) -> String {
    r.placement().iter().map(|p| format!("{} {}", p.name, p.in_domain)).collect::<Vec<_>>().join(" · ")
}

/// Members of each dimension inside one fast domain, in the order of the configuration column:
/// `DP · TP · PP` (TP as `tp1×tp2` unless 1d).
pub fn domain_text(c: &Candidate) -> String {
    let tp = if c.strategy == Strategy::OneD { c.nv_tp1.to_string() } else { format!("{}×{}", c.nv_tp1, c.nv_tp2) };
    format!("{} · {tp} · {}", c.nv_dp, c.nv_pp)
}

/// The SUMMA panels cell: `nb` for 2d, `–` otherwise.
pub fn nb_text(c: &Candidate) -> String {
    if c.strategy == Strategy::Summa2D { c.nb.to_string() } else { "–".into() }
}

/// A memory cell's bar: the used fraction of capacity, and the bar's width [%] (0–100; a
/// configuration over capacity has fraction > 1 and a full bar).
pub fn memory_fill(used_gb: f64, capacity_gb: f64) -> (f64, f64) {
    let fraction = if capacity_gb > 0.0 { used_gb / capacity_gb } else { 0.0 };
    (fraction, (fraction.min(1.0) * 100.0).max(0.0))
}

/// A memory figure as a sentence (a cell's title, the breakdown's note, the launch import's
/// headline): with the band and the verdict of extended mode `needs 84.5 ± 6.1 of 85.5 GB: fits`
/// ([`Fits::words`]); a `tight` verdict says why, since the `yes` side of the band is wider than
/// the `±` (a run that dies is the costly mistake: the held-out under-prediction,
/// [`fmperf_core::validate::memory::shipped_under_band`]); without a verdict (reference mode)
/// `84.5 of 85.5 GB`.
pub fn memory_sentence(used_gb: f64, capacity_gb: f64, verdict: Option<(f64, Fits)>) -> String {
    match verdict {
        Some(v) => format!("needs {}{}", fmt::gb(used_gb), memory_tail(used_gb, capacity_gb, v)),
        None => format!("{} of {} GB", fmt::gb(used_gb), fmt::gb(capacity_gb)),
    }
}

/// What [`memory_sentence`] says after the figure: ` ± 6.1 of 85.5 GB: fits` (for a caller that
/// writes the figure itself, with its exact value).
pub fn memory_tail(used_gb: f64, capacity_gb: f64, (band_gb, fits): (f64, Fits)) -> String {
    let head = format!(" ± {} of {} GB: ", fmt::gb(band_gb), fmt::gb(capacity_gb));
    match fits {
        Fits::Tight => {
            let under = fmperf_core::validate::memory::shipped_under_band();
            format!(
                "{head}may not fit (measured runs have needed up to {} more than predicted: {} GB)",
                fmt::percent(under),
                // The `yes` side: the figure with the allocator's cache, `used_gb` itself.
                fmt::gb(fmperf_core::validate::memory::verdict_range_gb(fmperf_core::vocab::Need::single(used_gb)).1)
            )
        }
        _ => format!("{head}{}", fits.words()),
    }
}

/// A memory figure in a table cell of several configurations (Compare's columns): with extended
/// mode's band and verdict `68.6 ± 4.7 / 85.5: may not fit` ([`Fits::words`]; the cell's row
/// header says GB), without (reference mode) `68.6 / 85.5`.
pub fn memory_cell(used_gb: f64, capacity_gb: f64, verdict: Option<(f64, Fits)>) -> String {
    match verdict {
        Some((band_gb, fits)) => {
            format!("{} ± {} / {}: {}", fmt::gb(used_gb), fmt::gb(band_gb), fmt::gb(capacity_gb), fits.words())
        }
        None => format!("{} / {}", fmt::gb(used_gb), fmt::gb(capacity_gb)),
    }
}

/// What identifies a configuration apart from its placement on the fast domain (an MoE
/// model's expert degrees included).
type ShapeKey = (Strategy, u64, u64, u64, u64, u64, u64, Option<(u64, u64)>);

/// A context-parallel layout with CP 1 (`2d-seqp` with `tp2` = 1) is the `1d` layout of the same
/// degrees (tensor parallelism alone): it gets the same key, so the two rows collapse into one
/// instead of filling the list twice.
fn shape_key(c: &Candidate, experts: Option<&ExpertLayout>) -> ShapeKey {
    let (strategy, tp2) = match c.strategy {
        Strategy::ContextParallel2D if c.tp2 == 1 => (Strategy::OneD, 1),
        s => (s, c.tp2),
    };
    (strategy, c.dp, c.tp1, tp2, c.pp, c.mbs, c.nb, experts.map(|x| (x.ep, x.etp)))
}

/// The label of the button that unfolds a row's alternatives (`others`: the rows folded under
/// `lead`): other placements on the fast domain, or the same layout listed as `2d-seqp` with CP 1
/// (or as `1d` under such a row); `open` says whether they are shown.
pub fn alternatives_label(lead: &Candidate, others: &[&Candidate], open: bool) -> String {
    let n = others.len();
    let same_strategy = others.iter().all(|c| c.strategy == lead.strategy);
    let what = match (same_strategy, n) {
        (true, 1) => "placement",
        (true, _) => "placements",
        (false, 1) => "equivalent",
        (false, _) => "equivalents",
    };
    format!("{}{n} {what}", if open { "−" } else { "+" })
}

/// The line under the results table when rows were folded: `n` configurations of the list shown
/// as `rows` rows (`None` when none was folded).
pub fn folded_note(n: usize, rows: usize) -> Option<String> {
    (rows < n).then(|| {
        format!(
            "The {n} best configurations are {rows} distinct layouts: the others differ only in where each dimension sits on the fast domain, or are 2d-seqp with CP 1 (which is 1d), and are folded under their best (+)."
        )
    })
}

/// The tooltip of [`alternatives_label`]'s button.
pub const ALTERNATIVES_TITLE: &str = "Rows that differ only in where each dimension sits on the fast domain, or the same layout listed as 2d-seqp with CP 1 (context parallelism of 1 is tensor parallelism alone)";

fn collapse_by(keys: &[ShapeKey]) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        match out.iter_mut().find(|(lead, _)| keys[*lead] == *k) {
            Some((_, others)) => others.push(i),
            None => out.push((i, Vec::new())),
        }
    }
    out
}

/// Rows grouped by everything but placement, in rank order: `(leader, others)` with indices into
/// `ranked` (best first, so the leader is the best placement of its group).
pub fn collapse_placements(ranked: &[Candidate]) -> Vec<(usize, Vec<usize>)> {
    collapse_by(&ranked.iter().map(|c| shape_key(c, None)).collect::<Vec<_>>())
}

/// [`collapse_placements`] for rows with an MoE model's expert layout: rows whose expert degrees
/// (EP, ETP) differ are different configurations, never placements of one another.
pub fn collapse_rows(ranked: &[(Candidate, Option<ExpertLayout>)]) -> Vec<(usize, Vec<usize>)> {
    collapse_by(&ranked.iter().map(|(c, x)| shape_key(c, x.as_ref())).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_memory_sentence_says_the_band_the_verdict_and_why_tight() {
        assert_eq!(memory_sentence(60.0, 85.5, Some((4.1, Fits::Yes))), "needs 60.0 ± 4.1 of 85.5 GB: fits");
        assert_eq!(memory_cell(68.6, 85.5, Some((4.7, Fits::Tight))), "68.6 ± 4.7 / 85.5: may not fit");
        assert_eq!(memory_cell(68.6, 85.5, None), "68.6 / 85.5");
        assert_eq!(memory_sentence(123.8, 85.5, Some((8.5, Fits::No))), "needs 123.8 ± 8.5 of 85.5 GB: does not fit");
        let under = fmperf_core::validate::memory::shipped_under_band();
        let tight = memory_sentence(70.0, 85.5, Some((4.8, Fits::Tight)));
        assert!(
            tight.starts_with("needs 70.0 ± 4.8 of 85.5 GB: may not fit (measured runs have needed up to "),
            "{tight}"
        );
        assert!(tight.ends_with(&format!("{} GB)", fmt::gb(70.0 * (1.0 + under)))), "{tight}");
        assert_eq!(memory_sentence(70.0, 85.5, None), "70.0 of 85.5 GB");
    }

    use super::*;
    use fmperf_core::search::code::parse_candidate;

    #[test]
    fn the_fastest_layouts_within_the_band_are_offered_together() {
        use fmperf_core::mode::Mode;
        use fmperf_core::resolve::explorer::ExploreFields;
        let f = ExploreFields::default_scenario();
        let extended = f.resolve_in(&Mode::extended()).unwrap();
        let report = |c: Candidate, t: f64| ConfigReport {
            candidate: c,
            microbatches: 1,
            throughput_samples_per_s: 1.0 / t,
            time_per_step_s: t,
            training_days: 1.0,
            mfu: 0.5,
            memory: fmperf_core::explore::MemoryFit { used_gb: 1.0, need_gb: 1.0, capacity_gb: 80.0 },
            totals: Default::default(),
            execution: None,
            experts: None,
        };
        let one = |dp, tp, nv| Candidate::one_d(dp, tp, 1, 1, nv, 1, 1);
        // Band 5.79 %: ratio 1.0579 / 0.9421 = 1.1229; of 10, 10.5, 11.0 and 20 s the first three
        // are within 11.229 s. The second placement of the first layout (10.2 s) is one row.
        let reports = [
            report(one(8, 1, 1), 10.0),
            report(Candidate::one_d(8, 1, 1, 1, 1, 1, 8), 10.2),
            report(one(4, 2, 2), 10.5),
            report(one(2, 4, 4), 11.0),
            report(one(1, 8, 8), 20.0),
        ];
        let note = band_note(&extended, &reports).unwrap();
        assert!(note.starts_with("these 3 layouts are within"), "{note}");
        assert!(note.contains("(±6 %)") && note.contains("try them"), "{note}");
        // The fastest standing apart: no note; reference mode: none either.
        assert_eq!(band_note(&extended, &[report(one(8, 1, 1), 10.0), report(one(1, 8, 8), 20.0)]), None);
        let reference = f.resolve_in(&Mode::Reference).unwrap();
        assert_eq!(band_note(&reference, &reports), None);
    }

    #[test]
    fn the_cp_cell_names_the_flavour_the_search_chose() {
        use fmperf_core::extended::context_parallel::CpComm;
        use fmperf_core::search::execution::CpFlavour;
        let c = Candidate { strategy: Strategy::ContextParallel2D, tp2: 16, ..Candidate::one_d(1, 1, 1, 1, 1, 1, 1) };
        let e = fmperf_core::search::Execution::of(&fmperf_core::extended::ExtendedOptions::realistic());
        let report = |cp| ConfigReport {
            candidate: c,
            microbatches: 1,
            throughput_samples_per_s: 1.0,
            time_per_step_s: 1.0,
            training_days: 1.0,
            mfu: 0.5,
            memory: fmperf_core::explore::MemoryFit { used_gb: 1.0, need_gb: 1.0, capacity_gb: 80.0 },
            totals: Default::default(),
            execution: Some(e.with_cp(cp)),
            experts: None,
        };
        assert_eq!(report_dims(&report(None))[2], "16");
        let hybrid = CpFlavour { cp_comm: CpComm::Hybrid, cp_ulysses: 8 };
        assert_eq!(report_dims(&report(Some(hybrid)))[2], "16 (hybrid 8×2)");
        assert_eq!(cp_flavour_text(&report(Some(CpFlavour::RING))).as_deref(), Some("ring"));
    }

    #[test]
    fn placements_collapse_under_the_best() {
        let codes = [
            "1d.dp16.tp4.pp32.mbs1.nv4x1x1",
            "1d.dp16.tp4.pp32.mbs1.nv2x2x1",
            "1d.dp32.tp4.pp16.mbs1.nv4x1x1",
            "1d.dp16.tp4.pp32.mbs1.nv1x4x1",
        ];
        let ranked: Vec<Candidate> = codes.iter().map(|c| parse_candidate(c).unwrap()).collect();
        assert_eq!(collapse_placements(&ranked), vec![(0, vec![1, 3]), (2, vec![])]);
        assert_eq!(collapse_placements(&[]), vec![]);
    }

    #[test]
    fn context_parallel_of_one_collapses_with_its_1d_twin_and_ranks_do_not_skip() {
        // Issue 29: 2d-seqp rows with CP 1 filled half the top 10 next to their 1d twins.
        let codes = [
            "1d.dp64.tp8.pp2.mbs1.nv8x1x1",
            "2d-seqp.dp64.tp8x1.pp2.mbs1.nv8x1x1x1",
            "2d-seqp.dp32.tp8x2.pp2.mbs1.nv8x1x1x1",
            "1d.dp64.tp8.pp2.mbs1.nv4x2x1",
            "2d-seqp.dp64.tp4x1.pp4.mbs1.nv4x1x2x1",
            "1d.dp64.tp4.pp4.mbs1.nv4x2x1",
        ];
        let ranked: Vec<Candidate> = codes.iter().map(|c| parse_candidate(c).unwrap()).collect();
        let groups = collapse_placements(&ranked);
        assert_eq!(groups, vec![(0, vec![1, 3]), (2, vec![]), (4, vec![5])]);
        let others = |g: &(usize, Vec<usize>)| g.1.iter().map(|&i| &ranked[i]).collect::<Vec<_>>();
        assert_eq!(alternatives_label(&ranked[0], &others(&groups[0]), false), "+2 equivalents");
        assert_eq!(alternatives_label(&ranked[4], &others(&groups[2]), true), "−1 equivalent");
        let placements = collapse_placements(&[ranked[0], ranked[3]]);
        assert_eq!(alternatives_label(&ranked[0], &[&ranked[3]], false), "+1 placement");
        assert_eq!(placements.len(), 1);
        assert!(folded_note(6, 3).unwrap().starts_with("The 6 best configurations are 3 distinct layouts"));
        assert_eq!(folded_note(3, 3), None);
        // CP 2 is a layout of its own.
        assert_eq!(collapse_placements(&[ranked[0], ranked[2]]).len(), 2);
    }

    #[test]
    fn rows_with_other_expert_degrees_do_not_collapse() {
        let codes = ["1d.dp8.tp1.pp4.mbs1.nv1x8x1", "1d.dp8.tp1.pp4.mbs1.nv1x4x2", "1d.dp8.tp1.pp4.mbs1.nv1x2x4"];
        let x = |ep| ExpertLayout { ep, etp: 1, edp: 8 / ep, ep_fast: ep, etp_fast: 1, edp_fast: 1 };
        let rows: Vec<_> =
            codes.iter().zip([x(8), x(8), x(4)]).map(|(c, x)| (parse_candidate(c).unwrap(), Some(x))).collect();
        assert_eq!(collapse_rows(&rows), vec![(0, vec![1]), (2, vec![])]);
        assert_eq!(expert_dims(Some(&x(4))), Some(["4".to_string(), "1".to_string()]));
        assert_eq!(expert_dims(None), None);
        assert_eq!(EXPERT_HEADERS.map(|h| h.0), ["EP", "ETP"]);
    }

    #[test]
    fn every_dimension_has_its_named_column() {
        let c = parse_candidate("1d.dp16.tp4.pp32.mbs2.nv4x1x1").unwrap();
        assert_eq!(dims(&c), ["16", "4", "1", "32", "2"].map(String::from));
        assert_eq!(DIM_HEADERS.map(|h| h.0), ["DP", "TP", "CP", "PP", "mbs"]);
        let c = parse_candidate("2d-seqp.dp4.tp8x2.pp4.mbs1.nv8x1x1x1").unwrap();
        assert_eq!(dims(&c)[1..3], ["8".to_string(), "2".to_string()]);
        assert!(
            is_research(Strategy::Summa2D) && !is_research(Strategy::OneD) && !is_research(Strategy::ContextParallel2D)
        );
    }
}
