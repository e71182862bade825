//! Memory beside time: per source, the time error (leave-one-source-out, the headline) next to the
//! memory error and the "will it fit" verdicts; then every memory run with its kind, the measured
//! and predicted figures [GB = 1e9 bytes], the capacity and the verdict.

use fmperf_core::validate::holdout::Holdout;
use fmperf_core::validate::holdout_cache::shipped_one_shot;
use fmperf_core::validate::memory::MemorySourceStats;
use fmperf_core::validate::{Report, Stats, short_source};
use leptos::prelude::*;

use super::{Reports, error_cell};

fn abs_pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

fn gb(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{v:.1}"))
}

/// The time side of one source.
struct TimeStats {
    evaluated: usize,
    skipped: usize,
    /// Leave-one-source-out (`None` while it is being computed).
    loso: Option<Stats>,
    in_sample: Stats,
    /// After calibrating on one other run of the source (the shipped check; `None`: none).
    one_shot: Option<Stats>,
}

/// One line of the time-and-memory table.
struct Line {
    source: String,
    time: Option<TimeStats>,
    memory: Option<MemorySourceStats>,
}

fn lines(time: &Report, memory: &Report, held: Option<&Holdout>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let one_shot = shipped_one_shot();
    for p in &time.summary.per_source {
        // `None` while the fits run; a source without evaluated rows has empty statistics.
        let loso = held.map(|h| {
            h.per_source
                .iter()
                .find(|s| s.source == p.source)
                .map(|s| s.leave_one_source_out.clone())
                .unwrap_or_default()
        });
        out.push(Line {
            source: p.source.clone(),
            time: Some(TimeStats {
                evaluated: p.stats.evaluated,
                skipped: p.stats.skipped,
                loso,
                in_sample: p.stats.clone(),
                one_shot: one_shot.iter().find(|o| o.source == p.source).map(|o| o.one_shot.clone()),
            }),
            memory: None,
        });
    }
    for m in &memory.summary.memory.per_source {
        match out.iter_mut().find(|l| l.source == m.source) {
            Some(l) => l.memory = Some(m.clone()),
            None => out.push(Line { source: m.source.clone(), time: None, memory: Some(m.clone()) }),
        }
    }
    out
}

/// Per source: time (leave-one-source-out and in-sample) and memory (error, verdicts).
#[component]
pub fn TimeAndMemoryTable(reports: Reports, holdout: RwSignal<Option<Holdout>>) -> impl IntoView {
    let body = move || {
        let h = holdout.get();
        lines(&reports.realistic(), &reports.memory, h.as_ref())
            .into_iter()
            .map(|l| {
                let name = short_source(&l.source).to_string();
                let (t_eval, t_loso, t_med, t_in, t_one) = match &l.time {
                    Some(t) => {
                        let (med, class) = error_cell(t.loso.as_ref().and_then(|s| s.median_error));
                        (
                            format!("{} of {}", t.evaluated, t.evaluated + t.skipped),
                            t.loso.as_ref().map_or("…".to_string(), |s| abs_pct(s.mape)),
                            (med, class),
                            abs_pct(t.in_sample.mape),
                            abs_pct(t.one_shot.as_ref().and_then(|s| s.mape)),
                        )
                    }
                    None => ("–".into(), "–".into(), ("–".into(), "none"), "–".into(), "–".into()),
                };
                let (m_rows, m_mape, m_med, verdicts) = match &l.memory {
                    Some(m) => (
                        format!("{} of {}", m.stats.evaluated, m.stats.evaluated + m.stats.skipped),
                        abs_pct(m.stats.mape),
                        error_cell(m.stats.median_error),
                        format!(
                            "{} / {} / {}{}",
                            m.verdicts.yes,
                            m.verdicts.tight,
                            m.verdicts.no,
                            if m.verdicts.oom_runs > 0 {
                                format!(" ({} OOM, {} called yes)", m.verdicts.oom_runs, m.verdicts.oom_predicted_yes)
                            } else {
                                String::new()
                            }
                        ),
                    ),
                    None => ("–".into(), "–".into(), ("–".into(), "none"), "–".into()),
                };
                let key = name.clone();
                view! {
                    <tr data-source=key>
                        <td title=l.source.clone()>{name}</td>
                        <td class="num" data-col="time-evaluated">{t_eval}</td>
                        <td class="num" data-col="time-loso">{t_loso}</td>
                        <td class=format!("num err {}", t_med.1) data-col="time-median">{t_med.0}</td>
                        <td class="num" data-col="time-in-sample">{t_in}</td>
                        <td class="num" data-col="time-one-shot">{t_one}</td>
                        <td class="num" data-col="memory-scored">{m_rows}</td>
                        <td class="num" data-col="memory-mape">{m_mape}</td>
                        <td class=format!("num err {}", m_med.1) data-col="memory-median">{m_med.0}</td>
                        <td class="num" data-col="fits">{verdicts}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <div class="table-wrap" tabindex="0">
            <table class="validation-summary" id="validation-time-memory">
                <thead>
                    <tr>
                        <th rowspan="2">"source"</th>
                        <th colspan="5" class="group">"time (training runs)"</th>
                        <th colspan="4" class="group">"memory (peak-memory runs)"</th>
                    </tr>
                    <tr>
                        <th class="num">"evaluated"</th>
                        <th class="num">"mean |error|, held out"</th>
                        <th class="num">"median error, held out"</th>
                        <th class="num">"mean |error|, in-sample"</th>
                        <th class="num" title="each run predicted after calibrating the stack constants on one other run of its source and system (fmperf validate: error_one_shot)">"mean |error|, one-shot"</th>
                        <th class="num">"scored"</th>
                        <th class="num">"mean |error|, held out"</th>
                        <th class="num">"median error, held out"</th>
                        <th class="num">"fits yes / tight / no"</th>
                    </tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}

/// The memory runs: summary line, per-source table above, and every run.
#[component]
pub fn MemoryCard(reports: Reports, holdout: RwSignal<Option<Holdout>>) -> impl IntoView {
    let m = reports.memory.clone();
    let s = &m.summary.memory;
    let v = s.verdicts;
    let line = format!(
        "{} peak-memory runs ({} scored, {} out of memory): mean |error| {} leave-one-source-out (the allocator fragmentation, the one constant fitted on memory runs, refitted without each run's source; in-sample {}), median error {}. Will it fit: yes {}, tight {}, no {} (tight = the need may be up to {:.0} % above its prediction, what the held-out under-predictions and the out-of-memory runs allow, or up to {:.0} % below it, the 80th percentile of the held-out |error|); out-of-memory runs called yes: {}; runs that ran called no: {}.",
        s.rows,
        s.stats.evaluated,
        v.oom_runs,
        abs_pct(s.stats.mape),
        abs_pct(s.in_sample.mape),
        error_cell(s.stats.median_error).0,
        v.yes,
        v.tight,
        v.no,
        fmperf_core::validate::memory::shipped_under_band() * 100.0,
        s.band * 100.0,
        v.oom_predicted_yes,
        v.ran_predicted_no,
    );
    let rows = m
        .rows
        .iter()
        .filter_map(|r| r.memory.clone().map(|mem| (r, mem)))
        .map(|(r, mem)| {
            let (err, class) = error_cell(mem.error_loso.or(mem.error));
            let fits = mem.fits.map_or("–", |f| f.as_str());
            let outcome = match mem.oom {
                Some(true) => "out of memory",
                Some(false) => "ran",
                None => "–",
            };
            view! {
                <tr data-id=r.id.clone() data-fits=fits>
                    <td class="mono">{r.id.clone()}</td>
                    <td>{short_source(&r.source).to_string()}</td>
                    <td class="mono">{r.hardware.clone().unwrap_or_default()}</td>
                    <td>{mem.kind}</td>
                    <td class="num" data-col="measured-gb">{gb(mem.measured_gb)}</td>
                    <td class="num" data-col="predicted-gb">{gb(mem.predicted_gb)}</td>
                    <td class="num">{gb(mem.capacity_gb)}</td>
                    <td>{outcome}</td>
                    <td class=format!("fits fits-{fits}")>{fits}</td>
                    <td class=format!("num err {class}")>{err}</td>
                    <td class="small">{mem.reason.clone().unwrap_or_else(|| r.assumptions.join("; "))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card" id="validation-memory">
            <h2>"Memory next to time, per source"</h2>
            <p id="validation-memory-headline">{line}</p>
            <TimeAndMemoryTable reports=reports.clone() holdout=holdout />
            <p class="muted small">
                "Each memory run is compared with the prediction of the figure it measured: PyTorch's peak allocated, peak reserved, or the device-level figure nvidia-smi shows (a run that does not say is read as peak allocated, noted). The verdict uses the device-level need: yes when it fits even at the top of the error band, no when it does not fit even at the bottom once the allocator has given its cache back (PyTorch frees its cached blocks and retries before it runs out of memory), tight in between. An out-of-memory run's figure is not scored (it is the peak before the failure)."
            </p>
            <details>
                <summary>"Every memory run"</summary>
                <div class="table-wrap" tabindex="0">
                    <table class="validation-rows" id="validation-memory-rows">
                        <thead>
                            <tr>
                                <th>"run"</th>
                                <th>"source"</th>
                                <th>"part"</th>
                                <th>"kind"</th>
                                <th class="num">"measured [GB]"</th>
                                <th class="num">"predicted [GB]"</th>
                                <th class="num">"capacity [GB]"</th>
                                <th>"outcome"</th>
                                <th>"fits"</th>
                                <th class="num">"error"</th>
                                <th>"notes"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            </details>
        </section>
    }
}
