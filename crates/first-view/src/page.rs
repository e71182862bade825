//! The first view: the page's query resolved as the page resolves it, searched with the core
//! within a time budget, and drawn as the page's shell around its results card (same elements,
//! classes and texts), with the scenario as a list where the page has its form.
//!
//! [`render`] draws nothing (`None`) where the page must speak for itself: another view (or a
//! view the page does not know, for which it shows a notice), a scenario with a problem, an MoE
//! model in reference mode (the page warns), a search that lists nothing (the page explains why),
//! or a search that does not finish within its budget (the page shows progress and a cancel
//! button).

use fmperf_app::explorer;
use fmperf_app::explorer::pins::{Pin, pin_items};
use fmperf_app::query::Query;
use fmperf_app::results::{self as texts, METRIC_HEADERS};
use fmperf_app::style::EXPLORER_CSS;
use fmperf_app::views::{self, AppView, FOOTER, TAGLINE};
use fmperf_app::{error_bands, fmt, system_spec};
use fmperf_core::explore::{ConfigReport, ExploreSearch, ReportContext};
use fmperf_core::format::custom_store::CustomStore;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::resolve::explorer::ExploreSpec;
use fmperf_core::search::code::format_candidate;

use crate::html::{attr, escape};

/// Searches with more candidates than this are left to the page, at once: they take longer than
/// a first view may block the page, and the page shows their progress.
pub const MAX_CANDIDATES: u64 = 250_000;

/// Candidates evaluated between two looks at the clock.
const STEP_CANDIDATES: usize = 2_000;

/// A drawn first view.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstView {
    /// The HTML: a `<style>` element and the app's shell.
    pub html: String,
    /// Result rows in the table.
    pub rows: usize,
    /// The search's wall time [ms] (the summary line says it too).
    pub elapsed_ms: f64,
}

/// The first view of the page whose query string is `search` (`?model=…`, or empty), with the
/// user's stored catalog text `store` (local storage's `fmperf.custom.v1`), searching for at most
/// `budget_ms` by `clock` [ms]; `None` where the page must draw it (module documentation).
pub fn render(search: &str, store: Option<&str>, budget_ms: f64, clock: &mut dyn FnMut() -> f64) -> Option<FirstView> {
    draw(search, store, budget_ms, clock, true)
}

/// The first view of `search` drawn ahead, at build time, for the page to show at once (the boot
/// script shows it for a URL without a query or with only `view=explorer`, a page no stored entry
/// can change: user entries never take a built-in id): [`render`] without the search's time in
/// the summary, which would be the build machine's.
pub fn ahead(search: &str) -> Option<FirstView> {
    draw(search, None, f64::INFINITY, &mut || 0.0, false)
}

fn draw(
    search: &str,
    store: Option<&str>,
    budget_ms: f64,
    clock: &mut dyn FnMut() -> f64,
    timed: bool,
) -> Option<FirstView> {
    let q = Query::parse(search);
    match q.get(views::VIEW_KEY) {
        None => {}
        Some(v) if AppView::named(v) == Some(AppView::Explorer) => {}
        Some(_) => return None,
    }
    let fields = explorer::fields_from_query(&q);
    let mode = explorer::mode_from_query(&q).ok()?;
    let entries = CustomStore::parse(store).user_entries();
    let spec = fmperf_app::jobs::explore_spec(&fields, &mode, &entries).ok()?;
    if mode.kind().prices_experts(spec.model_entry.moe.as_ref()) == Some(false) {
        return None;
    }
    let ctx = ReportContext::new(&spec).ok()?;
    let mut search = ExploreSearch::new(spec.clone()).ok()?;
    let started = clock();
    loop {
        let done = search.step(STEP_CANDIDATES);
        if search.progress().1 > MAX_CANDIDATES {
            return None;
        }
        if done {
            break;
        }
        if clock() - started > budget_ms {
            return None;
        }
    }
    let elapsed_ms = clock() - started;
    let result = search.result();
    let list = explorer::list_from_query(&q);
    let mut reports = texts::reports(&ctx, &result, list);
    if q.get(explorer::ONLY) == Some("mainstream") {
        reports.retain(|r| !texts::is_research(r.candidate.strategy));
    }
    if reports.is_empty() {
        return None;
    }
    let departed: Vec<String> =
        search.diagnosis_message().into_iter().chain(search.widening_notes().into_iter().map(|n| n.text)).collect();
    let table = Table { q: &q, spec: &spec, system_text: &fields.system, bar: error_bands::cached_band(&spec) };
    let (rows_html, rows) = table.rows(&reports);
    let mut card = String::new();
    card.push_str(&results_head(&spec, &texts::summary_line(&spec, &result, timed.then_some(elapsed_ms))));
    card.push_str(r#"<div class="status-slot"></div>"#);
    if let Some(b) = &table.bar {
        card.push_str(&format!(r#"<p class="muted small" id="ex-error-bar">{}</p>"#, escape(&error_bands::line(b))));
    }
    card.push_str(&list_row(&q, &result));
    card.push_str(r#"<div class="results-body">"#);
    if !departed.is_empty() {
        card.push_str(r#"<div class="notice warn small" id="ex-widening" role="status"><ul>"#);
        for n in &departed {
            card.push_str(&format!("<li>{}</li>", escape(n)));
        }
        card.push_str("</ul></div>");
    }
    if let Some(n) = texts::band_note(&spec, &reports) {
        card.push_str(&format!(r#"<p class="muted small" id="ex-band-note">{}</p>"#, escape(&n)));
    }
    card.push_str(&table.html(&reports, &rows_html));
    card.push_str("</div>");
    let html = shell(views::is_embedded(&q), &scenario_card(&spec), &mode_panel(&q, &spec), &card);
    Some(FirstView { html, rows, elapsed_ms })
}

/// The app's shell (header, navigation, footer; `embed` hides header and footer as the page's
/// stylesheet does) around the explorer's two columns.
fn shell(embed: bool, aside: &str, mode: &str, card: &str) -> String {
    let nav: String = AppView::ALL
        .iter()
        .map(|v| {
            let current = if *v == AppView::Explorer { r#" aria-current="page""# } else { "" };
            format!(r#"<a href="?{}={}"{current}>{}</a>"#, views::VIEW_KEY, v.key(), v.title())
        })
        .collect();
    format!(
        concat!(
            "<style>{css}</style>",
            r#"<div class="app{embed}" aria-busy="true">"#,
            r#"<header class="app-header"><a class="brand" href="?">fm<span>perf</span></a>"#,
            r#"<span class="tagline">{tagline}</span><nav class="nav" aria-label="Views">{nav}</nav></header>"#,
            r#"<main><div class="explorer">{aside}<div class="explorer-main">{mode}"#,
            r#"<section class="card results-card" aria-label="Best configurations">{card}</section>"#,
            r#"</div></div></main>"#,
            r#"<footer class="app-footer">{f0}{f1}</footer></div>"#,
        ),
        css = EXPLORER_CSS,
        embed = if embed { " embed" } else { "" },
        tagline = escape(TAGLINE),
        nav = nav,
        aside = aside,
        mode = mode,
        card = card,
        f0 = escape(FOOTER[0]),
        f1 = escape(FOOTER[1]),
    )
}

/// The scenario card: the page's heading and the scenario searched, as a list (the page's form
/// replaces it).
fn scenario_card(spec: &ExploreSpec) -> String {
    let strategies: Vec<&str> = spec.strategies.iter().map(|s| s.as_str()).collect();
    let items = [
        ("Model", spec.model_name.clone()),
        ("System", spec.system_name.clone()),
        ("Devices", fmt::count(spec.n_gpus)),
        ("Scale-up domain", format!("{} devices", spec.system.domain_size)),
        ("Global batch", format!("{} samples", fmt::count(spec.global_batch))),
        ("Strategies", strategies.join(", ")),
    ];
    let mut dl = String::new();
    for (k, v) in items {
        dl.push_str(&format!("<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v)));
    }
    format!(
        concat!(
            r#"<aside class="card scenario-card"><h1>{title}</h1><p class="muted intro">{intro}</p>"#,
            r#"<dl class="first-scenario">{dl}</dl><p class="muted small">Loading the form…</p></aside>"#,
        ),
        title = escape(explorer::TITLE),
        intro = escape(explorer::INTRO),
        dl = dl,
    )
}

/// The mode panel as the page first draws it, folded (its switches come with the page), so that
/// the results card does not move when the page takes over.
fn mode_panel(q: &Query, spec: &ExploreSpec) -> String {
    use fmperf_app::mode::{self as words, PANEL_TITLE};
    let extended = spec.extended.is_some();
    let shown = spec.mode.kind();
    let buttons: String = ModeKind::ALL
        .map(|m| {
            format!(
                r#"<button type="button" class="mode-button" data-mode="{mode}" aria-pressed="{pressed}" inert>{label}</button>"#,
                mode = m.as_str(),
                pressed = m == shown,
                label = m.title(),
            )
        })
        .concat();
    let body = if extended {
        let ext = words::texts(q, &explorer::mode_defaults(q)).1.unwrap_or_default();
        format!(
            concat!(
                r#"<div class="row mode-tools" inert><p class="muted small">{summary}</p><span class="spacer"></span>"#,
                r#"<button type="button">{reset}</button></div>"#,
                r#"<details class="mode-switches-wrap" inert><summary>{switches}</summary></details>"#,
                r#"<details class="mode-sources" inert><summary>{sources}</summary></details>"#,
            ),
            summary = escape(shown.panel_summary()),
            reset = escape(words::RESET_LABEL),
            switches = escape(&words::switches_summary(&ext)),
            sources = escape(words::SOURCES_SUMMARY),
        )
    } else {
        format!(r#"<p class="muted small">{}</p>"#, escape(shown.panel_summary()))
    };
    format!(
        concat!(
            r#"<section class="card mode-panel" data-mode="{mode}"><div class="row mode-toggle" role="group" aria-label="Model">"#,
            "<h2>{title}</h2>{buttons}",
            r#"<span class="muted small">{applies}</span></div>{body}</section>"#,
        ),
        mode = spec.mode.as_str(),
        title = escape(PANEL_TITLE),
        buttons = buttons,
        applies = escape(words::EXPLORER_APPLIES_TO),
        body = body,
    )
}

/// The card's head: the heading with the mode's badge, the summary line.
fn results_head(spec: &ExploreSpec, summary: &str) -> String {
    format!(
        concat!(
            r#"<div class="card-head"><h2>Best configurations "#,
            r#"<span class="badge mode-badge" data-mode="{mode}"{title}>{label}</span></h2>"#,
            r#"<p class="muted summary">{summary}</p></div>"#,
        ),
        mode = spec.mode.as_str(),
        title = attr("title", fmperf_app::mode::badge_title(&spec.mode)),
        label = escape(&spec.mode.label()),
        summary = escape(summary),
    )
}

/// The list tabs (every strategy, then each searched strategy with its best throughput) and the
/// mainstream filter, as the page draws them (every control of the first view is `inert`: none
/// responds until the page takes over; its headings, text and table stay readable).
fn list_row(q: &Query, result: &fmperf_core::explore::ExploreResult) -> String {
    let current = explorer::list_from_query(q);
    let tab = |s: Option<fmperf_core::Strategy>, label: &str| {
        let selected = current == s;
        format!(
            r#"<button type="button" role="tab" class="tab" aria-selected="{selected}" data-list="{}">{}</button>"#,
            s.map_or("all", |s| s.as_str()),
            escape(label),
        )
    };
    let mut tabs = tab(None, texts::ALL_LIST_LABEL);
    for oc in &result.outcomes {
        let best = oc.top.first().map(|r| r.throughput_samples_per_s);
        tabs.push_str(&tab(Some(oc.strategy), &texts::list_tab_label(oc.strategy, best)));
    }
    let checked = if q.get(explorer::ONLY) == Some("mainstream") { " checked" } else { "" };
    format!(
        concat!(
            r#"<div class="row list-row" inert><div class="tabs" role="tablist" aria-label="Which configurations to list">{tabs}</div>"#,
            r#"<span class="spacer"></span><label class="check mainstream-filter"><input type="checkbox"{checked}>{label}</label></div>"#,
        ),
        tabs = tabs,
        checked = checked,
        label = escape(&texts::mainstream_label()),
    )
}

/// What every row of the table needs.
struct Table<'a> {
    q: &'a Query,
    spec: &'a ExploreSpec,
    /// The system spec as typed (its options are kept in a pinned configuration).
    system_text: &'a str,
    bar: Option<fmperf_core::validate::error_bands::ErrorBand>,
}

impl Table<'_> {
    /// The rows, placements collapsed under the best (the others are hidden until the page can
    /// expand them, so only the leaders are drawn), and their count.
    fn rows(&self, reports: &[ConfigReport]) -> (String, usize) {
        let keys: Vec<_> = reports.iter().map(|r| (r.candidate, r.experts)).collect();
        let groups = texts::collapse_rows(&keys);
        let selected = self.q.get(explorer::SEL);
        let pins = pin_items(self.q);
        let mut out = String::new();
        for (g, (lead, others)) in groups.iter().enumerate() {
            let r = &reports[*lead];
            let code = format_candidate(&r.candidate);
            let is_selected = match selected {
                Some(s) => s == code,
                None => g == 0,
            };
            let pin = Pin {
                model: self.spec.model_id.clone(),
                system: system_spec::with_id(self.system_text, &self.spec.system_id),
                domain: self.spec.system.domain_size,
                batch: self.spec.global_batch,
                candidate: r.candidate,
            }
            .to_text();
            let others: Vec<_> = others.iter().map(|&i| &reports[i].candidate).collect();
            out.push_str(&self.row((lead + 1, g + 1), r, &code, is_selected, &others, pins.contains(&pin)));
        }
        (out, groups.len())
    }

    /// One row, cell for cell as the page's: `(rank, shown)` are its place in the ranked list
    /// (`data-rank`) and its group's rank (the number shown); `others` the rows folded under it.
    fn row(
        &self,
        (rank, shown): (usize, usize),
        r: &ConfigReport,
        code: &str,
        selected: bool,
        others: &[&fmperf_core::vocab::Candidate],
        pinned: bool,
    ) -> String {
        let c = &r.candidate;
        let mut s = format!(
            r#"<tr{class} data-rank="{rank}" data-config="{code}" data-throughput="{tp}" data-days="{days}"><td class="num">{shown}</td>"#,
            class = if selected { r#" class="selected""# } else { "" },
            code = escape(code),
            tp = r.throughput_samples_per_s,
            days = r.training_days,
        );
        s.push_str(&format!(
            r#"<td class="strategy-cell"><span class="badge strategy">{}</span>"#,
            c.strategy.as_str()
        ));
        if texts::is_research(c.strategy) {
            s.push_str(&format!(
                r#"<span class="badge research"{}>research</span>"#,
                attr("title", &format!("Research strategy: none of {} offers it", texts::MAINSTREAM))
            ));
        }
        if !others.is_empty() {
            s.push_str(&format!(
                r#"<button type="button" class="small link placements-toggle" aria-expanded="false" inert{}>{}</button>"#,
                attr("title", texts::ALTERNATIVES_TITLE),
                escape(&texts::alternatives_label(c, others, false))
            ));
        }
        s.push_str("</td>");
        for d in texts::report_dims(r) {
            s.push_str(&format!(r#"<td class="num dim">{}</td>"#, escape(&d)));
        }
        if let Some(x) = texts::expert_dims(r.experts.as_ref()) {
            for d in x {
                s.push_str(&format!(r#"<td class="num dim expert-dim">{}</td>"#, escape(&d)));
            }
        }
        s.push_str(&format!(r#"<td class="num throughput">{}</td>"#, fmt::throughput(r.throughput_samples_per_s)));
        s.push_str(&format!(r#"<td class="num">{}"#, fmt::seconds(r.time_per_step_s)));
        if let Some(b) = &self.bar {
            s.push_str(&format!(
                r#"<span class="err-bar"{}>{}</span>"#,
                attr("title", &b.message),
                escape(&error_bands::short(b))
            ));
        }
        s.push_str("</td>");
        s.push_str(&format!(r#"<td class="num days">{}</td>"#, fmt::days(r.training_days)));
        let (used, cap) = (r.memory.used_gb, r.memory.capacity_gb);
        let (fraction, width) = texts::memory_fill(used, cap);
        s.push_str(&format!(
            concat!(
                r#"<td class="num"><span class="mem-cell"{title}><span class="mem-num">{used}</span>"#,
                r#"<span class="mem-bar{over}" aria-hidden="true"><span style="width: {width:.1}%"></span></span></span></td>"#,
            ),
            title = attr("title", &format!("{} of {} GB", fmt::gb(used), fmt::gb(cap))),
            used = fmt::gb(used),
            over = if fraction > 1.0 { " over" } else { "" },
            width = width,
        ));
        s.push_str(&format!(r#"<td class="num">{}</td>"#, escape(&fmt::percent(r.mfu))));
        s.push_str(&format!(r#"<td class="num opt">{}</td>"#, escape(&texts::nb_text(c))));
        s.push_str(&format!(
            r#"<td class="num placement opt"{}>{}</td>"#,
            attr("title", &texts::placement_text(r)),
            escape(&texts::domain_text(c))
        ));
        s.push_str(&format!(
            concat!(
                r#"<td class="actions" inert><div class="row-actions"><button type="button" class="small" aria-pressed="{selected}">View</button></div></td>"#,
                r#"<td class="pin-cell" inert><input type="checkbox" class="pin" aria-label="Compare configuration {shown}"{checked}></td></tr>"#,
            ),
            selected = selected,
            shown = shown,
            checked = if pinned { " checked" } else { "" },
        ));
        s
    }

    /// The table: the page's headers, then `rows`.
    fn html(&self, reports: &[ConfigReport], rows: &str) -> String {
        let mut heads = String::from(r#"<th class="num" scope="col">#</th><th scope="col">strategy</th>"#);
        let th = |class: &str, name: &str, title: &str| {
            format!(r#"<th class="{class}" scope="col"{}>{}</th>"#, attr("title", title), name)
        };
        for (h, title) in texts::DIM_HEADERS {
            heads.push_str(&th("num dim", &escape(h), title));
        }
        if reports.iter().any(|r| r.experts.is_some()) {
            for (h, title) in texts::EXPERT_HEADERS {
                heads.push_str(&th("num dim expert-dim", &escape(h), title));
            }
        }
        for h in METRIC_HEADERS {
            let name = match h.unit {
                Some(u) => format!("{}<br>{}", escape(h.name), escape(u)),
                None => escape(h.name),
            };
            let class = if h.optional { "num opt" } else { "num" };
            match h.title {
                Some(t) => heads.push_str(&th(class, &name, t)),
                None => heads.push_str(&format!(r#"<th class="{class}" scope="col">{name}</th>"#)),
            }
        }
        heads.push_str(r#"<th scope="col"><span class="sr-only">details</span></th>"#);
        let (compare, why) = texts::COMPARE_HEADER;
        heads.push_str(&format!(r#"<th scope="col"{}>{}</th>"#, attr("title", why), escape(compare)));
        format!(
            concat!(
                r#"<div class="table-wrap results-wrap" tabindex="0"><table class="results" aria-label="Best configurations">"#,
                "<thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table></div>",
            ),
            heads = heads,
            rows = rows,
        )
    }
}
