//! The presets: a picker of every preset panel, the selected panel's description and notes, and
//! its published figures next to fmperf's values.

use fmperf_core::mode::Mode;
use fmperf_core::presets::{self, Panel, Preset};
use fmperf_core::sweep::SweepText;
use fmperf_core::vocab::Note;
use leptos::prelude::*;

use super::keys::{self, SweepSource};
use super::state::Studies;
use crate::mode_panel::ModeBadge;

/// Every preset with its panels as buttons; the current one is marked.
#[component]
pub fn PresetPicker() -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let current = move || match st.source.get() {
        SweepSource::Preset(p, panel) => Some((p.id.clone(), panel.id.clone())),
        SweepSource::Custom(_) => None,
    };
    let custom = move |_| {
        let text = st.text.get_untracked();
        st.url.update(true, |q| {
            keys::clear_chart(q);
            keys::write_custom(q, &text);
        });
    };
    let list = presets::presets()
        .iter()
        .map(|p| {
            let buttons = p
                .panels
                .iter()
                .map(|panel| {
                    let (pid, id) = (p.id.clone(), panel.id.clone());
                    let (pid2, id2) = (pid.clone(), id.clone());
                    let pressed = move || (current() == Some((pid2.clone(), id2.clone()))).to_string();
                    view! {
                        <button
                            type="button"
                            class="preset-panel"
                            data-preset=pid.clone()
                            data-panel=id.clone()
                            aria-pressed=pressed
                            title=panel.description.clone()
                            on:click=move |_| {
                                st.url.update(true, |q| keys::write_preset(q, &pid, &id));
                                // The panel's card (and its progress and charts under it) is below
                                // the picker: bring it up.
                                crate::pages::reveal("study-panel");
                            }
                        >
                            {panel.title.clone()}
                        </button>
                    }
                })
                .collect_view();
            view! {
                <div class="preset" data-preset=p.id.clone()>
                    <h2 class="preset-title">{p.title.clone()}</h2>
                    <div class="preset-panels">{buttons}</div>
                </div>
            }
        })
        .collect_view();
    view! {
        <div class="preset-list">{list}</div>
        <div class="row">
            <button
                id="sweep-custom"
                type="button"
                aria-pressed=move || current().is_none().to_string()
                on:click=custom
                title="Edit the current sweep's inputs yourself"
            >
                "Your own sweep"
            </button>
        </div>
    }
}

/// The selected preset panel: what it computes, its notes, and a button to edit it.
#[component]
pub fn PanelInfo(preset: &'static Preset, panel: &'static Panel) -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let edit = move |_| {
        let text = st.text.get_untracked();
        st.url.update(true, |q| keys::write_custom(q, &text));
    };
    let mode = move || st.spec.with(|s| s.as_ref().map(|s| s.mode).unwrap_or(panel.spec.mode));
    let cli = move || preset_cli(preset, panel, &mode());
    let same = move || {
        let spec = fmperf_core::resolve::sweep_spec::SweepSpec { mode: mode(), ..panel.spec.clone() };
        SweepText::from_spec(&spec).to_cli()
    };
    let own = format!("This panel runs in {}.", panel.spec.mode.described());
    let shown = move || {
        let m = mode();
        (m != panel.spec.mode).then(|| format!(" Shown now in {} (the model panel above).", m.label()))
    };
    let mut notes: Vec<&Note> = Vec::new();
    for n in preset.notes.iter().chain(&panel.notes) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    let notes = notes.into_iter().map(|n| view! { <li>{n.text.clone()}</li> }).collect_view();
    let sources = preset.sources.join("; ");
    view! {
        <h2 id="panel-title">{panel.title.clone()}</h2>
        <p>{panel.description.clone()}</p>
        <p class="small" id="panel-mode">
            <strong>{own}</strong>
            {shown}
        </p>
        <ul class="studies-notes">{notes}</ul>
        <p class="muted small">"Sources: " {sources}</p>
        <p class="small">
            "Command line: " <code class="cli">{cli}</code> " (same as " <code class="cli">{same}</code> ")"
        </p>
        <button id="sweep-edit" type="button" on:click=edit>
            "Edit this sweep"
        </button>
    }
}

/// The command line of a preset panel in `mode` (the mode flags only when it is not the panel's).
pub fn preset_cli(preset: &Preset, panel: &Panel, mode: &Mode) -> String {
    let mut s = format!("fmperf sweep --preset {} --panel {}", preset.id, panel.id);
    if *mode != panel.spec.mode {
        s.push_str(&format!(" --mode {}", mode.as_str()));
        if let Some(e) = mode.ext_text() {
            s.push_str(&format!(" --ext {e}"));
        }
    }
    s
}

/// The panel's published figures next to fmperf's, with the difference.
#[component]
pub fn Comparisons(panel: &'static Panel, result: std::sync::Arc<fmperf_core::sweep::SweepResult>) -> impl IntoView {
    if panel.comparisons.is_empty() {
        return ().into_any();
    }
    let outcomes: Vec<_> = panel.comparisons.iter().map(|c| c.evaluate(&result)).collect();
    let any_none = outcomes.iter().any(|o| o.predicted.is_none());
    let rows = panel
        .comparisons
        .iter()
        .zip(&outcomes)
        .enumerate()
        .map(|(i, (c, o))| {
            let d = c.def.decimals as usize;
            let with_strategy = |v: f64, s: Option<String>| match s {
                Some(s) => format!("{v:.d$} ({s})"),
                None => format!("{v:.d$}"),
            };
            let published = match c.def.value {
                Some(v) => with_strategy(v, c.def.strategy.clone()),
                None => "none".into(),
            };
            let strategy = o.predicted_strategy.filter(|_| c.strategy.is_some()).map(|s| s.to_string());
            let ours = match o.predicted {
                Some(v) => with_strategy(v, strategy),
                None => "none".into(),
            };
            let e = d + 2;
            let diff = match o.difference(c.def.value) {
                Some((abs, rel)) if rel.is_finite() => format!("{abs:+.e$} ({:+.2} %)", rel * 100.0),
                Some((abs, _)) => format!("{abs:+.e$}"),
                None => "–".into(),
            };
            let (badge, class) = if c.must_reproduce(&result) {
                if c.reproduced(o) { ("reproduced", "badge good") } else { ("differs", "badge bad") }
            } else if c.def.reproduce {
                // Not the published model: the badge names the mode that priced it.
                (result.spec.mode.kind().label(), "badge")
            } else {
                ("measured elsewhere", "badge")
            };
            let why = o.why_none.clone().unwrap_or_default();
            let why_cell = any_none.then(|| view! { <td class="why">{why.clone()}</td> });
            view! {
                <tr data-compare=i.to_string()>
                    <td>{c.def.label.clone()}</td>
                    <td class="num published">{published}</td>
                    <td class="num predicted" title=why.clone()>{ours}</td>
                    <td class="num">{diff}</td>
                    <td><span class=class>{badge}</span></td>
                    {why_cell}
                    <td class="muted small">{c.def.source.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    let reproduced = panel.comparisons.iter().filter(|c| c.must_reproduce(&result)).count();
    let matched =
        panel.comparisons.iter().zip(&outcomes).filter(|(c, o)| c.must_reproduce(&result) && c.reproduced(o)).count();
    let of_reference = panel.comparisons.iter().any(|c| c.def.reproduce);
    let summary = if reproduced > 0 {
        format!(
            "{matched} of {reproduced} published values of the reference model reproduced at their printed precision."
        )
    } else if of_reference {
        "Published values of the reference model next to extended mode's: the differences are what extended mode \
         corrects (switch to reference mode to reproduce them)."
            .into()
    } else {
        "Figures measured on real systems: the model's prediction and the difference are shown, not hidden.".into()
    };
    view! {
        <section class="card">
            <div class="row">
                <h2>"Published figures and fmperf"</h2>
                <span class="spacer"></span>
                <ModeBadge mode=result.spec.mode />
            </div>
            <p id="compare-summary">{summary}</p>
            <div class="table-wrap compare-wrap" tabindex="0">
                <table id="sweep-compare">
                    <thead>
                        <tr>
                            <th>"compared"</th>
                            <th class="num">"published"</th>
                            <th class="num">"fmperf"</th>
                            <th class="num">"difference"</th>
                            <th>"verdict"</th>
                            {any_none.then(|| view! { <th>"why no value"</th> })}
                            <th>"source"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
    .into_any()
}
