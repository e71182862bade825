//! The ranking section of `fmperf validate`'s table: per group the layouts ranked, Kendall's tau-b
//! and the top-1 regret, runs that ran but are called "does not fit"; then per source and overall
//! ([`fmperf_core::validate::ranking`]).

use fmperf_core::validate::ranking::{Ranking, RankingStats};

use crate::table::Table;

fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.digits$}"))
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{:.1}", v * 100.0))
}

/// The ranking as text tables (empty when no group was ranked).
pub fn ranking_table(r: &Ranking) -> String {
    if r.groups.is_empty() {
        return String::new();
    }
    let mut t = Table::new(&[
        "layout group",
        "runs ranked",
        "Kendall tau-b",
        "top-1 regret [%]",
        "fmperf's pick (measured rank)",
        "measured best",
        "within band (best among them)",
        "ran, called does not fit",
    ]);
    for g in &r.groups {
        t.push(vec![
            g.group.clone(),
            g.ranked.to_string(),
            num(g.tau, 2),
            pct(g.regret),
            format!(
                "{} ({})",
                g.predicted_best.as_deref().unwrap_or("-"),
                g.pick_measured_rank.map_or("-".into(), |k| k.to_string())
            ),
            g.measured_best.clone().unwrap_or_else(|| "-".into()),
            format!("{} ({})", g.within_band, if g.best_within_band { "yes" } else { "no" }),
            if g.ran_called_no.is_empty() { "-".into() } else { g.ran_called_no.join(", ") },
        ]);
    }
    let mut s = Table::new(&[
        "source",
        "groups",
        "mean tau-b",
        "median regret [%]",
        "mean regret [%]",
        "max regret [%]",
        "pick = best",
        "best within band",
        "ran, called does not fit",
    ]);
    let line = |name: &str, x: &RankingStats| {
        vec![
            name.to_string(),
            x.groups.to_string(),
            num(x.tau_mean, 2),
            pct(x.regret_median),
            pct(x.regret_mean),
            pct(x.regret_max),
            format!("{}/{}", x.top1_hits, x.groups),
            format!("{}/{}", x.best_within_band, x.groups),
            x.ran_called_no.to_string(),
        ]
    };
    for p in &r.per_source {
        s.push(line(&p.source, &p.stats));
    }
    s.push(line("all sources", &r.overall));
    format!(
        "\nRanking of layouts (groups of runs of one job that differ in layout; regret = measured best / measured \
         of fmperf's pick − 1; within band: runs predicted within ±{:.1} % (the error between layouts of one job) of \
         the pick, which fmperf cannot tell apart)\n{}\n{}",
        fmperf_core::validate::layout_band::LAYOUT_BAND * 100.0,
        t.render(),
        s.render()
    )
}
