//! Where the time and the memory go: stacked bars for every configuration of the shown list
//! (time per step by component; memory per device by component, against the capacity), and the
//! selected configuration in detail: headline numbers, both breakdowns with shares, and the
//! placement of each parallel dimension onto the fast (scale-up) domain.

use fmperf_core::explore::{ConfigReport, ParallelDimension};
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::search::code::format_candidate;
use fmperf_core::vocab::{MemoryPart, TimePart};
use leptos::prelude::*;

use super::results::{MemoryCell, tp_text};
use super::selection::Selected;
use super::state::Explorer;
use super::{fmt, keys};
use crate::chart::{Bar, Limit, StackedBarChart, Standing, ValueFormat};
use crate::mode_panel::ModeBadge;

/// A bar label for a configuration of the list: `#1 2d dp4 tp8×1 pp128 mbs1` (MoE: `… ep8`,
/// and `etp2` when the experts are split too).
pub fn bar_label(rank: usize, r: &ConfigReport) -> String {
    format!("#{rank} {}", layout_words(r))
}

/// A configuration's layout in words a bar label can wrap at: `2d dp4 tp8×1 pp128 mbs1 ep8`.
pub fn layout_words(r: &ConfigReport) -> String {
    let c = &r.candidate;
    let mut label = format!("{} dp{} tp{} pp{} mbs{}", c.strategy, c.dp, tp_text(c), c.pp, c.mbs);
    if let Some(x) = r.experts {
        label.push_str(&format!(" ep{}", x.ep));
        if x.etp > 1 {
            label.push_str(&format!(" etp{}", x.etp));
        }
    }
    label
}

/// The time and memory charts of the shown list.
#[component]
pub fn ListCharts() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let reports = Memo::new(move |_| {
        let list = ex.url.query.with(keys::list_from_query);
        let mainstream = ex.url.get(keys::ONLY).as_deref() == Some("mainstream");
        let mut all = ex.outcome.with(|o| o.as_ref().map(|o| o.reports(list)).unwrap_or_default());
        if mainstream {
            all.retain(|r| !fmperf_app::results::is_research(r.candidate.strategy));
        }
        // One bar per row of the table, numbered as the table numbers it (rows that differ only
        // in placement, or a 2d-seqp with CP 1 beside its 1d twin, are one row there).
        let keys: Vec<_> = all.iter().map(|r| (r.candidate, r.experts)).collect();
        fmperf_app::results::collapse_rows(&keys).into_iter().map(|(lead, _)| all[lead].clone()).collect::<Vec<_>>()
    });
    // The capacity the search judged fits against (extended mode: the driver's total, 85.5 GB for an
    // "80 GB" H100), as the summary line and the breakdown card say.
    let capacity = move || ex.outcome.with(|o| o.as_ref().map(|o| o.spec.capacity_gb()).unwrap_or(0.0));
    // The time parts the list has (a dense model's charts leave out the EP all-to-all).
    let shown_parts = Memo::new(move |_| reports.with(|rs| TimePart::shown(rs.iter().map(|r| &r.totals))));
    let time_bars = Signal::derive(move || {
        reports.with(|rs| {
            rs.iter()
                .enumerate()
                .map(|(i, r)| {
                    Bar::new(bar_label(i + 1, r), shown_parts.with(|ps| ps.iter().map(|p| p.of(&r.totals)).collect()))
                })
                .collect::<Vec<_>>()
        })
    });
    let band = fmperf_core::validate::memory::shipped_band();
    let mem_bars = Signal::derive(move || {
        reports.with(|rs| rs.iter().enumerate().map(|(i, r)| memory_bar(bar_label(i + 1, r), r)).collect::<Vec<_>>())
    });
    let mem_limit = Signal::derive(move || memory_limit(capacity()));
    let time_parts =
        Signal::derive(move || shown_parts.with(|ps| ps.iter().map(|p| p.label().to_string()).collect::<Vec<_>>()));
    // The searched scenario's mode names the parts (extended mode's activations hold the framework
    // margin too).
    let shown_mode = move || ex.outcome.with(|o| o.as_ref().map(|o| o.spec.mode.kind()).unwrap_or_default());
    let mem_parts = Signal::derive(move || {
        let mode = shown_mode();
        MemoryPart::ALL.iter().map(|p| p.label_in(mode).to_string()).collect::<Vec<_>>()
    });
    // Extended mode's figures carry the memory model's band (the rows' `±`).
    let banded = Memo::new(move |_| reports.with(|rs| rs.first().is_some_and(|r| r.memory_verdict().is_some())));
    let mem_title = Signal::derive(move || {
        // No-break spaces keep each figure with its unit when the title wraps (a phone's width).
        let band = if banded.get() {
            format!(", each figure ±\u{a0}{}", fmt::unbroken(&fmt::percent(band)))
        } else {
            String::new()
        };
        format!("Memory per device by component (capacity {}\u{a0}GB){band}", fmt::gb(capacity()))
    });
    move || {
        (!reports.with(Vec::is_empty)).then(|| {
            view! {
                <div class="charts">
                    <div class="chart-box">
                        <StackedBarChart
                            title="Time per step by component"
                            value_label="time per step [s]"
                            components=time_parts
                            bars=time_bars
                            format=ValueFormat::Duration
                        />
                    </div>
                    <div class="chart-box">
                        <StackedBarChart
                            title=mem_title
                            value_label="memory per device [GB]"
                            components=mem_parts
                            bars=mem_bars
                            limit=mem_limit
                            format=fmperf_app::fmt::GB_FORMAT
                        />
                    </div>
                </div>
            }
        })
    }
}

/// The memory bar of configuration `r` labelled `label`: its memory parts, and in extended mode
/// its band (the whisker: the two sides the verdict judges,
/// [`fmperf_core::validate::memory::verdict_range_gb`]), its verdict (the mark) and the row's sentence (tooltip,
/// description), which the chart draws against the capacity ([`memory_limit`]).
pub(super) fn memory_bar(label: String, r: &ConfigReport) -> Bar {
    let bar = Bar::new(label, r.memory_parts().iter().map(|(_, v)| *v).collect());
    let Some(verdict) = r.memory_verdict() else { return bar };
    let used = r.memory.used_gb;
    let standing = match verdict.1 {
        fmperf_core::vocab::Fits::Yes => Standing::Within,
        fmperf_core::vocab::Fits::Tight => Standing::Near,
        fmperf_core::vocab::Fits::No => Standing::Over,
    };
    let sentence = fmperf_app::results::memory_sentence(used, r.memory.capacity_gb, Some(verdict));
    bar.against_limit(Some(fmperf_core::validate::memory::verdict_range_gb(r.memory.need())), Some(standing), sentence)
}

/// The capacity line of a memory chart (`capacity_gb`; none when not positive) and the legend's
/// words for extended mode's marks ([`memory_bar`]).
pub(super) fn memory_limit(capacity_gb: f64) -> Option<Limit> {
    let (band, under) =
        (fmperf_core::validate::memory::shipped_band(), fmperf_core::validate::memory::shipped_under_band());
    (capacity_gb > 0.0).then(|| Limit {
        value: capacity_gb,
        label: format!("capacity {} GB", fmt::gb(capacity_gb)),
        range_words: format!("band −{} to +{}", fmt::percent(band), fmt::percent(under)),
        near_words: "may not fit".to_string(),
        over_words: "does not fit".to_string(),
    })
}

/// Headline numbers of one configuration.
#[component]
pub fn Headline(report: ConfigReport) -> impl IntoView {
    let r = report;
    let fit = r.memory;
    let verdict = r.memory_verdict();
    let mem_note = match verdict {
        // Extended mode: the band and the verdict, in the import's words.
        Some(_) => fmperf_app::results::memory_sentence(fit.used_gb, fit.capacity_gb, verdict),
        None if fit.fits() => format!("{} GB free of {} GB", fmt::gb(fit.headroom_gb()), fmt::gb(fit.capacity_gb)),
        None => format!("{} GB over the {} GB capacity", fmt::gb(fit.over_gb()), fmt::gb(fit.capacity_gb)),
    };
    let bad = verdict.map_or(!fit.fits(), |(_, f)| f == fmperf_core::vocab::Fits::No);
    let warn = verdict.is_some_and(|(_, f)| f == fmperf_core::vocab::Fits::Tight);
    view! {
        <dl class="headline">
            <div>
                <dt>"throughput"</dt>
                <dd>{fmt::throughput(r.throughput_samples_per_s)} <small>" samples/s"</small></dd>
            </div>
            <div>
                <dt>"time per step"</dt>
                <dd>{fmt::seconds(r.time_per_step_s)} <small>" s"</small></dd>
            </div>
            <div>
                <dt>"training time"</dt>
                <dd>{fmt::days(r.training_days)} <small>" days"</small></dd>
            </div>
            <div>
                <dt>"memory per device"</dt>
                <dd class:bad=bad class:warn=warn>
                    <MemoryCell used_gb=fit.used_gb capacity_gb=fit.capacity_gb verdict=verdict unit=true />
                    <small class="block">{mem_note}</small>
                </dd>
            </div>
            <div>
                <dt title="model FLOPs per sample × throughput / (devices × peak matrix rate)">"model-FLOP utilisation"</dt>
                <dd>{fmt::percent(r.mfu)}</dd>
            </div>
        </dl>
    }
}

/// Both breakdowns of one configuration as small tables with shares (`mode`: which model's
/// components, for their descriptions).
#[component]
pub fn PartsTables(report: ConfigReport, mode: ModeKind) -> impl IntoView {
    let t = report.time_per_step_s;
    let m = report.memory.used_gb;
    let time_rows = TimePart::shown([&report.totals])
        .into_iter()
        .map(|p| {
            let v = p.of(&report.totals);
            view! {
                <tr title=p.description(mode)>
                    <th scope="row">{p.label()}</th>
                    <td class="num">{fmt::seconds(v)}</td>
                    <td class="num">{fmt::percent(if t > 0.0 { v / t } else { 0.0 })}</td>
                </tr>
            }
        })
        .collect_view();
    let mem_rows = report
        .memory_parts()
        .into_iter()
        .map(|(p, v)| {
            view! {
                <tr title=p.description(mode)>
                    <th scope="row">{p.label_in(mode)}</th>
                    <td class="num">{fmt::gb(v)}</td>
                    <td class="num">{fmt::percent(if m > 0.0 { v / m } else { 0.0 })}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="parts">
            <div class="table-wrap" tabindex="0">
            <table class="compact">
                <caption>"Time per step"</caption>
                <thead><tr><th scope="col">"component"</th><th class="num" scope="col">"[s]"</th><th class="num" scope="col">"share"</th></tr></thead>
                <tbody>{time_rows}</tbody>
                <tfoot><tr><th scope="row">"total"</th><td class="num">{fmt::seconds(t)}</td><td class="num">"100 %"</td></tr></tfoot>
            </table>
            </div>
            <div class="table-wrap" tabindex="0">
            <table class="compact">
                <caption>"Memory per device"</caption>
                <thead><tr><th scope="col">"component"</th><th class="num" scope="col">"[GB]"</th><th class="num" scope="col">"share"</th></tr></thead>
                <tbody>{mem_rows}</tbody>
                <tfoot><tr><th scope="row">"total"</th><td class="num">{fmt::gb(m)}</td><td class="num">"100 %"</td></tr></tfoot>
            </table>
            </div>
        </div>
    }
}

/// One dimension's row of the placement table.
fn placement_row(p: ParallelDimension) -> impl IntoView {
    view! {
        <tr data-dim=p.name>
            <th scope="row">{p.name}</th>
            <td>{p.role}</td>
            <td class="num">{p.degree}</td>
            <td class="num">{p.in_domain}</td>
            <td class="num">{p.domains()}</td>
        </tr>
    }
}

/// The placement of each parallel dimension onto the fast domain, as a table and a bar of the
/// domain's slots.
#[component]
pub fn PlacementTable(report: ConfigReport, domain: u64) -> impl IntoView {
    let rows = report.placement().into_iter().map(placement_row).collect_view();
    let used: u64 = report.placement().iter().map(|p| p.in_domain).product();
    let experts = report.expert_placement();
    let expert_rows = (!experts.is_empty()).then(|| {
        let rows = experts.into_iter().map(placement_row).collect_view();
        view! {
            <tbody>
                <tr><th colspan="5" scope="rowgroup" class="subhead">"Expert layers: the same TP·CP·DP devices re-split as ETP × EP × EDP"</th></tr>
                {rows}
            </tbody>
        }
    });
    view! {
        <h4 class="table-title">
                {format!("Placement on fast domains of {domain} devices ({used} used per domain)")}
            </h4>
        <div class="table-wrap" tabindex="0">
        <table class="compact placement-table">
            <thead>
                <tr>
                    <th scope="col">"dimension"</th>
                    <th scope="col">"splits"</th>
                    <th class="num" scope="col">"degree"</th>
                    <th class="num" scope="col">"in one fast domain"</th>
                    <th class="num" scope="col">"fast domains spanned"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
            {expert_rows}
        </table>
        </div>
    }
}

/// Where an MoE model's parts sit in the step's components, in one sentence (the Layers view
/// lists every part).
fn moe_note(d: &fmperf_core::cost::Detail) -> Option<impl IntoView + use<>> {
    use fmperf_core::extended::moe::MoeTimePart;
    let fmperf_core::cost::Detail::Extended(e) = d else { return None };
    let m = e.moe?;
    let t = m.times;
    let text = format!(
        "Mixture of experts: {} includes {} s of routed-expert GEMMs, {} s of shared experts and {} s of router; {} is {} s of exposed dispatch and combine, recomputation included ({} s more hidden behind compute). Every MoE part is in the Layers view.",
        TimePart::Compute.label(),
        fmt::seconds(MoeTimePart::Experts.of(&t)),
        fmt::seconds(MoeTimePart::Shared.of(&t)),
        fmt::seconds(MoeTimePart::Router.of(&t)),
        TimePart::EpComm.label(),
        fmt::seconds(TimePart::EpComm.of(&e.totals)),
        fmt::seconds(MoeTimePart::A2aHidden.of(&t)),
    );
    Some(view! { <p class="muted small moe-note">{text}</p> })
}

/// Which training stack's semantics the memory figures assume (extended mode), and where to
/// change it: the search and the import price one layout alike on one stack.
fn stack_note(mode: &fmperf_core::mode::Mode) -> Option<impl IntoView + use<>> {
    let stack = fmperf_core::resolve::mode_inputs::switch_stack(mode)?;
    let default = (stack == fmperf_core::extended::Stack::default()).then_some(" (the default)");
    Some(view! {
        <p class="muted small stack-note" data-stack=stack.as_str()>
            "Memory on the " <strong>{stack.label()}</strong> " stack" {default} ": " {stack.memory_words()}
            " Change it with the " <a href="#mode-panel" class="to-stack" on:click=show_stack_switch>"“Training stack” switch"</a> "."
        </p>
    })
}

/// Opens the folded switches and brings the stack's picker into view with focus.
fn show_stack_switch(ev: leptos::ev::MouseEvent) {
    ev.prevent_default();
    if let Ok(Some(d)) = document().query_selector("details.mode-switches-wrap") {
        let _ = d.set_attribute("open", "");
    }
    crate::pages::reveal("switch-stack");
}

/// The breakdown panel: the list's charts and the selected configuration in detail.
#[component]
pub fn BreakdownPanel(selection: Memo<Result<Option<Selected>, String>>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let domain = move || ex.outcome.with(|o| o.as_ref().map(|o| o.spec.system.domain_size).unwrap_or(0));
    let detail = move || {
        match selection.get() {
        Err(e) => view! { <div class="notice error" role="alert">{e}</div> }.into_any(),
        Ok(None) => view! { <p class="muted placeholder">"The selected configuration appears here once the search has found one."</p> }.into_any(),
        Ok(Some(s)) => {
            let title = match s.rank {
                Some(r) => format!("#{r}: {}", format_candidate(&s.report.candidate)),
                None => format!("{} (not in the list)", format_candidate(&s.report.candidate)),
            };
            view! {
                <div class="selected" data-config=format_candidate(&s.report.candidate)>
                    <h3>
                        "Selected configuration " <code>{title}</code> " "
                        <ModeBadge mode=s.mode id="selected-mode" />
                    </h3>
                    <Headline report=s.report.clone() />
                    {stack_note(&s.mode)}
                    <div class="detail-grid">
                        <PartsTables report=s.report.clone() mode=s.mode.kind() />
                        <PlacementTable report=s.report.clone() domain=domain() />
                    </div>
                    {moe_note(&s.evaluation)}
                </div>
            }
            .into_any()
        }
    }
    };
    view! {
        <div class="panel-breakdown">
            {detail}
            <ListCharts />
        </div>
    }
}
