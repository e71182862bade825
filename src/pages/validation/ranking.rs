//! Ranking of layouts: on groups of measured runs of one job that differ only in their parallel
//! layout (the shipped layout sweeps, and groups found among the shipped training runs), does
//! fmperf put the layouts in the measured order (Kendall's tau-b), how much slower than the
//! measured best is the layout it ranks first (top-1 regret), and which runs that ran it calls
//! "does not fit" (fmperf-core's `validate::ranking`).

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::layout_sweeps::shipped_sweep_rows_json;
use fmperf_core::validate::ranking::{GroupRanking, Ranking, RankingStats, ranking};
use fmperf_core::validate::{parse_measured_runs, shipped_runs, short_source, validate};
use leptos::prelude::*;

use super::Reports;

fn pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

fn tau(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{v:+.2}"))
}

/// `good` for a tau of 0.6 or more, `warn` from 0.2, `bad` below; for regret within 5 % /
/// 15 % / beyond.
fn tau_class(x: Option<f64>) -> &'static str {
    match x {
        Some(v) if v >= 0.6 => "good",
        Some(v) if v >= 0.2 => "warn",
        Some(_) => "bad",
        None => "none",
    }
}

fn regret_class(x: Option<f64>) -> &'static str {
    match x {
        Some(v) if v <= 0.05 => "good",
        Some(v) if v <= 0.15 => "warn",
        Some(_) => "bad",
        None => "none",
    }
}

/// The ranking of the shipped layout sweeps (extended mode) and of the groups among the shipped
/// training runs (from the extended report the page already holds).
fn rankings(reports: &Reports) -> (Ranking, Ranking) {
    let sweeps = parse_measured_runs(&shipped_sweep_rows_json()).unwrap_or_default();
    let swept = ranking(&sweeps, &validate(&sweeps, ModeKind::REALISTIC));
    let runs = ranking(&shipped_runs(), &reports.realistic());
    (swept, runs)
}

fn stats_row(name: String, title: String, s: &RankingStats) -> impl IntoView + use<> {
    let key = name.clone();
    view! {
        <tr data-source=key>
            <td title=title>{name}</td>
            <td class="num">{s.groups.to_string()}</td>
            <td class=format!("num err {}", tau_class(s.tau_mean)) data-col="tau">{tau(s.tau_mean)}</td>
            <td class=format!("num err {}", regret_class(s.regret_median)) data-col="regret">{pct(s.regret_median)}</td>
            <td class="num">{pct(s.regret_max)}</td>
            <td class="num">{format!("{}/{}", s.top1_hits, s.groups)}</td>
            <td class="num" data-col="best-within-band">{format!("{}/{}", s.best_within_band, s.groups)}</td>
            <td class="num" data-col="ran-called-no">{s.ran_called_no.to_string()}</td>
        </tr>
    }
}

fn summary_table(r: &Ranking, id: &'static str) -> impl IntoView + use<> {
    // Sources whose short names collide (three FlagPerf/FlagScale documents) are named in full.
    let short = |s: &str| short_source(s).to_string();
    let shared = |s: &str| r.per_source.iter().filter(|p| short(&p.source) == short(s)).count() > 1;
    let rows = r
        .per_source
        .iter()
        .map(|p| {
            let name = if shared(&p.source) { p.source.clone() } else { short(&p.source) };
            stats_row(name, p.source.clone(), &p.stats)
        })
        .collect_view();
    view! {
        <div class="table-wrap" tabindex="0">
        <table class="data" id=id>
            <thead>
                <tr>
                    <th>"source"</th>
                    <th>"groups"</th>
                    <th>"mean tau-b"</th>
                    <th>"median top-1 regret"</th>
                    <th>"largest regret"</th>
                    <th>"pick = measured best"</th>
                    <th>"best within the band"</th>
                    <th>"ran, called does not fit"</th>
                </tr>
            </thead>
            <tbody>
                {rows}
                {stats_row("all sources".to_string(), String::new(), &r.overall)}
            </tbody>
        </table>
        </div>
    }
}

fn group_row(g: &GroupRanking) -> impl IntoView + use<> {
    let strip = |id: &Option<String>| {
        id.as_deref().map_or("–".to_string(), |s| s.rsplit_once('/').map_or(s, |(_, r)| r).to_string())
    };
    view! {
        <tr data-group=g.group.clone()>
            <td>{g.group.clone()}</td>
            <td class="num">{g.ranked.to_string()}</td>
            <td class=format!("num err {}", tau_class(g.tau))>{tau(g.tau)}</td>
            <td class=format!("num err {}", regret_class(g.regret))>{pct(g.regret)}</td>
            <td class="mono">
                {format!(
                    "{} (measured #{})",
                    strip(&g.predicted_best),
                    g.pick_measured_rank.map_or("–".into(), |k| k.to_string()),
                )}
            </td>
            <td class="mono">{strip(&g.measured_best)}</td>
            <td class="num">
                {format!("{} ({})", g.within_band, if g.best_within_band { "best among them" } else { "best not among them" })}
            </td>
            <td class="mono">
                {g.ran_called_no.iter().map(|s| strip(&Some(s.clone()))).collect::<Vec<_>>().join(", ")}
            </td>
        </tr>
    }
}

/// The ranking card of the validation view.
#[component]
pub fn RankingCard(reports: Reports) -> impl IntoView {
    let (swept, runs) = rankings(&reports);
    let groups = swept.groups.iter().chain(&runs.groups).map(group_row).collect_view();
    view! {
        <section class="card" id="validation-ranking">
            <h2>"Ranking of layouts"</h2>
            <p class="muted">
                {format!(
                    "Groups of measured runs of one job (model, part, device count and global batch) that differ only in their parallel layout, in extended mode. Kendall's tau-b compares fmperf's order of the layouts with the measured one (1: the same order, 0: unrelated, −1: reversed); the top-1 regret is the measured throughput of the measured-best layout over that of the layout fmperf ranks first (among those it says fit), minus one: how much a user following fmperf's first choice loses. Runs that ran but that fmperf calls \"does not fit\" are counted. Layouts predicted within the error band between layouts of one job (±{:.1} %, the spread of fmperf's error inside the shipped groups) of its pick are ones it cannot tell apart: the explorer should offer them together.",
                    fmperf_core::validate::layout_band::LAYOUT_BAND * 100.0,
                )}
            </p>
            <h3>"Measured layout sweeps"</h3>
            {summary_table(&swept, "ranking-sweeps")}
            <h3>"Groups among the training runs"</h3>
            {summary_table(&runs, "ranking-runs")}
            <details>
                <summary>"Every group"</summary>
                <div class="table-wrap" tabindex="0">
                <table class="data" id="ranking-groups">
                    <thead>
                        <tr>
                            <th>"group"</th>
                            <th>"runs"</th>
                            <th>"tau-b"</th>
                            <th>"regret"</th>
                            <th>"fmperf's pick"</th>
                            <th>"measured best"</th>
                            <th>"within the band"</th>
                            <th>"ran, called does not fit"</th>
                        </tr>
                    </thead>
                    <tbody>{groups}</tbody>
                </table>
                </div>
            </details>
        </section>
    }
}
