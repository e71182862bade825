//! The mode panel shared by the studies and explorer views: which model prices the numbers
//! (reference mode, the published model, or extended mode) and, in extended mode, every switch,
//! editable, with what it models and where its default comes from; and the badge that labels
//! results with the mode that produced them.
//!
//! State lives in the URL, app-wide (so every view shows the same mode; the validation view reads
//! `mode` too):
//!
//! | key | what |
//! |---|---|
//! | `mode` | `reference` or `extended`; absent: the view's default (a preset panel's own mode) |
//! | `ext` | extended mode's switches that differ from the defaults, `key=value,…` as typed (kept while in reference mode, so switching back restores them) |
//!
//! The text forms and their parsing are fmperf-core's ([`Mode::from_text`],
//! [`fmperf_core::extended::switches`]); this module only reads and writes the two keys.

use fmperf_core::Error;
use fmperf_core::extended::ExtendedOptions;
use fmperf_core::extended::switch_text::text_value;
use fmperf_core::extended::switches::{CONSTANTS, SWITCHES, SwitchInfo, SwitchKind};
use fmperf_core::mode::Mode;
use fmperf_core::mode_kind::ModeKind;
use leptos::prelude::*;

use crate::url_state::UrlState;

pub use fmperf_app::mode::{EXT_KEY, MODE_KEY, texts};

/// The badge naming the mode that produced a result (`id` for tests).
#[component]
pub fn ModeBadge(mode: Mode, #[prop(optional)] id: &'static str) -> impl IntoView {
    let title = fmperf_app::mode::badge_title(&mode);
    view! {
        <span class="badge mode-badge" id=(!id.is_empty()).then_some(id) data-mode=mode.as_str() title=title>
            {mode.label()}
        </span>
    }
}

/// The range of a numeric switch, for its help line (`None`: the control shows the values).
fn range_help(kind: SwitchKind) -> Option<String> {
    match kind {
        SwitchKind::Number { min, max, open_min, open_max } => Some(format!(
            "values in {}{min}, {max}{}",
            if open_min { "(" } else { "[" },
            if open_max { ")" } else { "]" }
        )),
        SwitchKind::Count { min, max } => Some(format!("values {min} … {max}")),
        SwitchKind::CountOrAll => Some("all, or a device count".to_string()),
        SwitchKind::Toggle | SwitchKind::Choice(_) => None,
    }
}

/// The mode toggle and, in extended mode, every switch. `defaults` is the view's own mode and
/// switch text (a preset panel's); `problem` the current input problem, shown at its switch when
/// it is one.
#[component]
pub fn ModePanel(
    defaults: Signal<(Option<String>, Option<String>)>,
    problem: Signal<Option<Error>>,
    /// One line under the toggle saying what the mode applies to in this view.
    applies_to: &'static str,
) -> impl IntoView {
    let url = expect_context::<UrlState>();
    let current = Memo::new(move |_| url.query.with(|q| texts(q, &defaults.get())));
    let kind = Memo::new(move |_| current.with(|(m, _)| m.as_deref().and_then(ModeKind::parse).unwrap_or_default()));
    let ext = move || current.with(|(_, e)| e.clone().unwrap_or_default());
    let set_kind = move |k: ModeKind| {
        url.update(true, |q| {
            q.set(MODE_KEY, k.as_str());
            // Switching to extended mode keeps the switches the URL holds (or the view's).
            if k.takes_switches()
                && q.get(EXT_KEY).is_none()
                && let Some(e) = defaults.get_untracked().1
            {
                q.set(EXT_KEY, &e);
            }
        })
    };
    let toggle = move |k: ModeKind| {
        view! {
            <button
                type="button"
                class="mode-button"
                data-mode=k.as_str()
                aria-pressed=move || (kind.get() == k).to_string()
                on:click=move |_| set_kind(k)
            >
                {k.title()}
            </button>
        }
    };
    let general = move || {
        problem.with(|p| match p {
            Some(e) if e.is_at(MODE_KEY) || e.is_at(EXT_KEY) => Some(e.to_string()),
            _ => None,
        })
    };
    // Counts the clicks on "Default switches" (a switch's refused value goes with them, even when
    // `ext` was empty already).
    let resets = RwSignal::new(0u64);
    let reset = move |_| {
        resets.update(|n| *n += 1);
        url.update(true, |q| q.set(EXT_KEY, ""))
    };
    let body = move || {
        let k = kind.get();
        if !k.takes_switches() {
            view! { <p class="muted small" id="mode-summary">{k.panel_summary()}</p> }.into_any()
        } else {
            let rows = SWITCHES.iter().map(|sw| switch_row(sw, ext, url, problem, resets)).collect_view();
            // Folded while every switch is at its default (the results come first); open when
            // the URL changes one or one has a problem.
            let open = current.with_untracked(|(_, e)| e.as_ref().is_some_and(|e| !e.trim().is_empty()))
                || problem.with_untracked(|p| p.as_ref().is_some_and(|e| e.path().is_some_and(|f| f.is_in("ext"))));
            view! {
                <div class="row mode-tools">
                    <p class="muted small" id="mode-summary">{k.panel_summary()}</p>
                    <span class="spacer"></span>
                    <button type="button" id="mode-reset" on:click=reset>
                        {fmperf_app::mode::RESET_LABEL}
                    </button>
                </div>
                <details class="mode-switches-wrap" open=open>
                    <summary>
                        {move || fmperf_app::mode::switches_summary(&ext())}
                    </summary>
                    <div class="mode-switches" id="mode-switches">{rows}</div>
                </details>
                <Sources />
            }
            .into_any()
        }
    };
    view! {
        <section class="card mode-panel" id="mode-panel" data-mode=move || kind.get().as_str()>
            <div class="row mode-toggle" role="group" aria-label="Model">
                <h2>{fmperf_app::mode::PANEL_TITLE}</h2>
                {ModeKind::ALL.into_iter().map(toggle).collect_view()}
                <span class="muted small">{applies_to}</span>
            </div>
            {move || general().map(|e| view! { <p class="notice error" role="alert" id="mode-error">{e}</p> })}
            {body}
        </section>
    }
}

/// One switch: its label, control, error and help.
fn switch_row(
    sw: &'static SwitchInfo,
    ext: impl Fn() -> String + Clone + Send + Sync + 'static,
    url: UrlState,
    problem: Signal<Option<Error>>,
    resets: RwSignal<u64>,
) -> impl IntoView {
    let field = format!("ext.{}", sw.key);
    // A value refused at the field before it reaches the URL (a comma: see
    // `fmperf_app::mode::switch_value`); cleared by the next value written or by a reset.
    // `(text as typed, message)`.
    let refused = RwSignal::new(None::<(String, String)>);
    let error = move || {
        refused.get().map(|(_, m)| m).or_else(|| {
            problem.with(|p| match p {
                Some(e) if e.is_at(field.as_str()) => Some(fmperf_app::words::field_message(e)),
                _ => None,
            })
        })
    };
    let default = ExtendedOptions::realistic().value_of(sw.key).unwrap_or_default();
    let default2 = default.clone();
    let ext2 = ext.clone();
    let value = move || text_value(&ext2(), sw.key).unwrap_or_else(|| default2.clone());
    let changed = {
        let ext = ext.clone();
        move || text_value(&ext(), sw.key).is_some_and(|v| v != default)
    };
    // "Default switches" (or any other change of `ext`) drops a refused value and its message.
    {
        let ext = ext.clone();
        Effect::new(move |prev: Option<(String, u64)>| {
            let now = (ext(), resets.get());
            if prev.is_some_and(|p| p != now) {
                refused.set(None);
            }
            now
        });
    }
    let commit = move |v: String| {
        let v = match fmperf_app::mode::switch_value(sw.key, &v) {
            Ok(v) => v,
            Err(e) => return refused.set(Some((v, fmperf_app::words::field_message(&e)))),
        };
        refused.set(None);
        let current = ext();
        url.update(false, |q| {
            q.set(MODE_KEY, "extended");
            q.set(EXT_KEY, &fmperf_app::mode::edit_switch(&current, sw.key, &v));
        })
    };
    let id = format!("switch-{}", sw.key);
    let err_id = format!("{id}-error");
    let control = match sw.kind {
        SwitchKind::Toggle => {
            let value = value.clone();
            view! {
                <input
                    id=id.clone()
                    type="checkbox"
                    prop:checked=move || value() == "on"
                    on:change=move |ev| commit(if event_target_checked(&ev) { "on" } else { "off" }.to_string())
                />
            }
            .into_any()
        }
        SwitchKind::Choice(names) => {
            let opts = names
                .iter()
                .map(|n| {
                    let value = value.clone();
                    view! { <option value=*n selected=move || value() == *n>{*n}</option> }
                })
                .collect_view();
            let value = value.clone();
            view! {
                <select id=id.clone() prop:value=value on:change=move |ev| commit(event_target_value(&ev))>
                    {opts}
                </select>
            }
            .into_any()
        }
        _ => {
            let value = value.clone();
            let invalid = error.clone();
            view! {
                <input
                    id=id.clone()
                    type="text"
                    inputmode="decimal"
                    autocomplete="off"
                    prop:value=move || refused.get().map(|(t, _)| t).unwrap_or_else(&value)
                    aria-invalid=move || invalid().is_some().to_string()
                    aria-describedby=err_id.clone()
                    on:change=move |ev| commit(event_target_value(&ev).trim().to_string())
                />
            }
            .into_any()
        }
    };
    // Numbers say their range and, for the fitted constants and the sparsity, where the default
    // comes from (every switch's origin is in its tooltip and under "Where the defaults … come from").
    let help = match range_help(sw.kind) {
        Some(r) if matches!(sw.kind, SwitchKind::Number { .. }) => format!("{}; {r}. Default: {}", sw.what, sw.source),
        Some(r) => format!("{}; {r}", sw.what),
        None => sw.what.to_string(),
    };
    view! {
        <div class="mode-switch" data-switch=sw.key class:changed=changed title=sw.source>
            <label for=id>{sw.label}</label>
            {control}
            <div class="field-error" role="alert" id=err_id>{error}</div>
            <div class="field-help">{help}</div>
        </div>
    }
}

/// Where the defaults and constants come from.
#[component]
fn Sources() -> impl IntoView {
    let switches =
        SWITCHES.iter().map(|s| view! { <li><span class="mono">{s.key}</span> ": " {s.source}</li> }).collect_view();
    let constants = CONSTANTS
        .iter()
        .map(|c| {
            let unit = if c.unit.is_empty() { String::new() } else { format!(" {}", c.unit) };
            view! { <li><strong>{c.name}</strong> {format!(" = {}{unit}", c.value)} ": " {c.source}</li> }
        })
        .collect_view();
    view! {
        <details class="mode-sources">
            <summary>{fmperf_app::mode::SOURCES_SUMMARY}</summary>
            <ul id="mode-constants">{constants}</ul>
            <ul>{switches}</ul>
        </details>
    }
}
