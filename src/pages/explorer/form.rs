//! The scenario form: model, system, domain size, devices, global batch, strategies, top-k and
//! training budget. Every field is validated as it is typed (the message sits under the field);
//! text fields write the URL after a pause in typing (the first write of an edit adds a history
//! entry, the next ones replace it), selects and checkboxes at once. Invalid text is kept in the
//! URL too, but starts no search.

use fmperf_app::pickers::{PickerGroup, model_picks};
use fmperf_app::system_spec;
use fmperf_core::Strategy;
use fmperf_core::catalog::TrainingBudget;
use fmperf_core::explore::inputs::BudgetUnit;
use fmperf_core::mode::Mode;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::resolve::form::parse_strategies;
use leptos::prelude::*;

use fmperf_app::batch::own_batch;
use fmperf_app::number::{count_reading, parse_quantity};

use super::state::Explorer;
use super::widgets::{DebouncedInput, FieldError};
use super::{fmt, keys};

/// Writes one scenario key to the URL; `push` adds a history entry.
pub fn write_key(ex: Explorer, key: &'static str, value: String, push: bool) {
    ex.url.update(push, |q| {
        let mut f = keys::fields_from_query(q);
        keys::set_field(&mut f, key, value);
        keys::write_scenario(q, &f);
    });
}

/// A text input for one scenario key, debounced into the URL.
#[component]
fn TextField(
    key: &'static str,
    label: &'static str,
    #[prop(optional, into)] help: Signal<String>,
    #[prop(optional, into)] placeholder: Signal<String>,
    #[prop(optional)] inputmode: Option<&'static str>,
    /// Shown right of the input (e.g. a unit select).
    #[prop(optional)]
    children: Option<ChildrenFn>,
) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    view! {
        <DebouncedInput
            id=format!("ex-{key}")
            label=label
            value=Signal::derive(move || ex.live.with(|f| keys::field_text(f, key)))
            on_text=Callback::new(move |v: String| ex.live.update(|f| keys::set_field(f, key, v)))
            on_commit=Callback::new(move |(v, push): (String, bool)| write_key(ex, key, v, push))
            error=Signal::derive(move || ex.live_error(keys::form_field(key)))
            help=help
            placeholder=placeholder
            inputmode=inputmode.unwrap_or("numeric")
            addon=children
        />
    }
}

/// Which picker a [`ChoiceSelect`] is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Picker {
    Model,
    System,
}

/// A select of models or systems: the user's own entries first (marked), then the reference's
/// presets and the catalog; entries the mode cannot use are disabled with why. The system select
/// edits only the id of the system spec (its options are kept).
#[component]
fn ChoiceSelect(key: &'static str, label: &'static str, picker: Picker) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let id = format!("ex-{key}");
    let err_id = format!("ex-{key}-error");
    let error = Signal::derive(move || ex.live_error(keys::form_field(key)));
    // The mode's model says what it cannot use (a mode that does not parse: the default's).
    let mode = Memo::new(move |_| ex.mode.with(|m| m.as_ref().map_or_else(|_| ModeKind::default(), Mode::kind)));
    let picks = Memo::new(move |_| match picker {
        Picker::Model => ex.entries.with(model_picks),
        Picker::System => ex.system_picks.get(),
    });
    let value = move || {
        ex.live.with(|f| match picker {
            Picker::Model => f.model.clone(),
            Picker::System => system_spec::id_of(&f.system).to_string(),
        })
    };
    let options = move || {
        let mode = mode.get();
        picks.with(|picks| {
            [PickerGroup::Yours, PickerGroup::Reference, PickerGroup::Catalog]
                .into_iter()
                .filter(|o| picks.iter().any(|p| p.group == *o))
                .map(|origin| {
                    let options = picks
                        .iter()
                        .filter(|p| p.group == origin)
                        .map(|p| {
                            let why = p.unusable(mode).map(str::to_string);
                            let label = match (&why, p.needs.is_empty(), p.approximate_in(mode)) {
                                (Some(_), _, _) => format!("{} — not usable in this mode", p.label),
                                (None, false, _) => format!("{} — needs a figure", p.label),
                                (None, true, true) => format!("{} — approximate", p.label),
                                _ => p.label.clone(),
                            };
                            let title = why.clone().unwrap_or_else(|| {
                                p.needs.iter().map(|(_, w)| w.clone()).chain(p.caveats.iter().map(|c| c.text.clone())).collect::<Vec<_>>().join(" ")
                            });
                            let pid = p.id.clone();
                            view! {
                                <option value=p.id.clone() disabled=why.is_some() title=title selected=move || value() == pid>
                                    {label}
                                </option>
                            }
                        })
                        .collect_view();
                    view! { <optgroup label=origin.label()>{options}</optgroup> }
                })
                .collect_view()
        })
    };
    let why_not = move || {
        let kind = mode.get();
        let unusable: Vec<(String, String)> = picks.with(|p| {
            p.iter().filter_map(|c| c.unusable(kind).map(|why| (c.label.clone(), why.to_string()))).collect()
        });
        (!unusable.is_empty()).then(|| {
            let mode = kind.model_name();
            view! {
                <details class="unusable">
                    <summary>{format!("{} not usable by {mode}: why", unusable.len())}</summary>
                    <ul>
                        {unusable.into_iter().map(|(label, why)| view! { <li><strong>{label}</strong>": "{why}</li> }).collect_view()}
                    </ul>
                </details>
            }
        })
    };
    // A value that is not a known id (typed into the URL) stays visible as its own option.
    let unknown = move || {
        let v = value();
        (!picks.with(|p| p.iter().any(|c| c.id == v)) && !v.is_empty())
            .then(|| view! { <option value=v.clone() selected=true>{v.clone()}</option> })
    };
    let change = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        let v = match picker {
            Picker::Model => v,
            Picker::System => ex.live.with_untracked(|f| system_spec::with_id(&f.system, &v)),
        };
        write_key(ex, key, v, true)
    };
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <select
                id=id
                aria-invalid=move || error.with(|e| e.is_some()).to_string()
                aria-describedby=err_id.clone()
                prop:value=value
                on:change=change
            >
                {unknown}
                {options}
            </select>
            <FieldError id=err_id message=error />
            {why_not}
        </div>
    }
}

/// One option of the system spec (`nics`, `vector`, `scale_up`, `scale_out`), debounced into the
/// URL's `system` value; validated by core as typed.
#[component]
fn SystemOption(key: &'static str, label: &'static str, help: &'static str) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let needed = Signal::derive(move || {
        let id = ex.live.with(|f| system_spec::id_of(&f.system).to_string());
        ex.system_picks.with(|picks| {
            picks
                .iter()
                .find(|p| p.id == id)
                .and_then(|p| p.needs.iter().find(|(k, _)| *k == key).map(|(_, why)| why.clone()))
        })
    });
    let set = move |v: String| {
        let mut f = ex.live.get_untracked();
        f.system = system_spec::set_option(&f.system, key, &v);
        f
    };
    view! {
        <DebouncedInput
            id=format!("ex-sys-{key}")
            label=label
            value=Signal::derive(move || ex.live.with(|f| system_spec::option(&f.system, key).unwrap_or_default()))
            on_text=Callback::new(move |v: String| ex.live.set(set(v)))
            on_commit=Callback::new(move |(v, push): (String, bool)| {
                let f = set(v);
                ex.url.update(push, |q| keys::write_scenario(q, &f));
            })
            error=Signal::derive(move || ex.live_error(key))
            help=Signal::derive(move || match needed.get() {
                Some(why) => format!("Needed: {why}."),
                None => help.to_string(),
            })
            placeholder=Signal::derive(move || if needed.get().is_some() { "required".to_string() } else { "catalog value".to_string() })
            inputmode="decimal"
        />
    }
}

/// The system spec's options, as the CLI's `--system ID,key=value`: NICs, precision, vector rate,
/// scale-up and scale-out bandwidth. Open when one is set or needed.
#[component]
fn SystemOptions() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let set_count = move || ex.live.with(|f| system_spec::options_of(&f.system).len());
    let needs = move || {
        let id = ex.live.with(|f| system_spec::id_of(&f.system).to_string());
        ex.system_picks.with(|picks| picks.iter().find(|p| p.id == id).is_some_and(|p| !p.needs.is_empty()))
    };
    let precision = move || ex.live.with(|f| system_spec::option(&f.system, "precision").unwrap_or_default());
    let set_precision = move |ev: leptos::ev::Event| {
        let mut f = ex.live.get_untracked();
        f.system = system_spec::set_option(&f.system, "precision", &event_target_value(&ev));
        ex.url.update(true, |q| keys::write_scenario(q, &f));
    };
    let precision_error = Signal::derive(move || ex.live_error("precision"));
    view! {
        <details class="system-options" prop:open={move || set_count() > 0 || needs()}>
            <summary>
                "System options "
                <span class="muted small">{move || match set_count() { 0 => "(catalog values)".to_string(), n => format!("({n} set)") }}</span>
            </summary>
            <p class="muted small">"The CLI's system spec (" <code>"--system ID,nics=…,scale_out=…"</code> "); empty fields keep the catalog's value."</p>
            <div class="pair">
                <SystemOption key="nics" label="NICs per device" help="each of the part's NIC bandwidth" />
                <div class="field">
                    <label for="ex-sys-precision">"Precision (reference mode)"</label>
                    <select id="ex-sys-precision" prop:value=precision on:change=set_precision aria-describedby="ex-sys-precision-error">
                        {["", "fp32", "tf32", "fp16", "bf16", "fp8"].into_iter().map(|p| view! {
                            <option value=p selected=move || precision() == p>{if p.is_empty() { "default (bf16 if listed)" } else { p }}</option>
                        }).collect_view()}
                    </select>
                    <FieldError id="ex-sys-precision-error".to_string() message=precision_error />
                    <div class="field-help">"Extended mode uses its precision switch."</div>
                </div>
            </div>
            <div class="pair">
                <SystemOption key="scale_up" label="Scale-up [GB/s per device]" help="one direction" />
                <SystemOption key="scale_out" label="Scale-out [GB/s per NIC]" help="one direction" />
            </div>
            <div class="pair">
                <SystemOption key="vector" label="Vector rate [TFLOP/s]" help="non-matrix work (reference mode)" />
            </div>
        </details>
    }
}

/// The strategy checkboxes.
#[component]
fn StrategyChecks() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let error = Signal::derive(move || ex.live_error(keys::STRATEGIES));
    let chosen = move || ex.live.with(|f| parse_strategies(&f.strategies).unwrap_or_default());
    let boxes = Strategy::ALL
        .into_iter()
        .map(|s| {
            let toggle = move |ev: leptos::ev::Event| {
                let on = event_target_checked(&ev);
                let mut list: Vec<Strategy> = chosen();
                if on && !list.contains(&s) {
                    list.push(s);
                }
                list.retain(|x| on || *x != s);
                // Keep the canonical order.
                let list: Vec<Strategy> = Strategy::ALL.into_iter().filter(|x| list.contains(x)).collect();
                write_key(ex, keys::STRATEGIES, fmperf_core::explore::inputs::strategies_text(&list), true);
            };
            view! {
                <label title=s.description()>
                    <input type="checkbox" prop:checked=move || chosen().contains(&s) on:change=toggle />
                    {s.as_str()}
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="field strategies" aria-describedby="ex-strategies-error">
            <legend>"Strategies"</legend>
            <div class="checks">{boxes}</div>
            <FieldError id="ex-strategies-error".to_string() message=error />
            <div class="field-help">"Megatron TP · SUMMA 2D · TP × context parallel"</div>
        </fieldset>
    }
}

/// Writes one Mixture-of-Experts key (empty: the default, the key removed); `push` adds a
/// history entry.
fn write_moe_key(ex: Explorer, key: &'static str, value: &str, push: bool) {
    let v = value.trim().to_string();
    ex.url.update(push, |q| if v.is_empty() { q.remove(key) } else { q.set(key, &v) });
}

/// The Mixture-of-Experts switches of the scenario (core's `--moe` keys): token dispatcher,
/// expert load, all-to-all overlap and FP8 dispatch, each a URL key of its own
/// ([`fmperf_app::explorer::moe_keys::MOE_KEYS`]). Shown for MoE models in extended mode, and whenever the
/// switches are in error; in reference mode (no experts) their keys wait in the URL, as `ext`'s
/// do ([`fmperf_app::explorer::mode_from_query`]).
#[component]
fn MoeControls() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let shown = Memo::new(move |_| {
        // The error is in the MoE switches themselves (any model, any mode), or the mode's model
        // prices experts and the model has them.
        let switches_wrong =
            ex.mode.with(|m| m.as_ref().err().and_then(fmperf_core::Error::path).is_some_and(|p| p.is_in("moe")));
        let Some(kind) = ex.mode.with(|m| m.as_ref().ok().map(Mode::kind)) else { return switches_wrong };
        let model = ex.live.with(|f| f.model.clone());
        switches_wrong
            || ex
                .entries
                .with(|u| u.find_model(&model).is_ok_and(|m| kind.prices_experts(m.moe.as_ref()) == Some(true)))
    });
    let get = move |key: &'static str| ex.url.get(key).unwrap_or_default();
    let dispatcher = move || get(keys::MOE_DISPATCHER);
    let dispatchers = move || {
        let mut list: Vec<(String, String)> =
            keys::MOE_DISPATCHERS.iter().map(|(v, label)| (v.to_string(), label.to_string())).collect();
        // A value typed into the URL (deepep:8) is an option of its own, so it shows as it is.
        let current = dispatcher();
        if !list.iter().any(|(v, _)| *v == current) {
            list.push((current.clone(), current));
        }
        list.into_iter()
            .map(|(v, label)| {
                let selected = v.clone();
                view! { <option value=v selected=move || dispatcher() == selected>{label}</option> }
            })
            .collect_view()
    };
    let overlap = move || get(keys::MOE_A2A_OVERLAP);
    let overlaps = move || {
        let mut list: Vec<(String, String)> =
            keys::MOE_A2A_OVERLAPS.iter().map(|(v, label)| (v.to_string(), label.to_string())).collect();
        let current = overlap();
        if !list.iter().any(|(v, _)| *v == current) {
            list.push((current.clone(), current));
        }
        list.into_iter()
            .map(|(v, label)| {
                let selected = v.clone();
                view! { <option value=v selected=move || overlap() == selected>{label}</option> }
            })
            .collect_view()
    };
    let check = move |key: &'static str, label: &'static str, title: &'static str| {
        let id = format!("ex-{}", key.replace('.', "-"));
        view! {
            <label class="check" title=title>
                <input
                    type="checkbox"
                    id=id
                    prop:checked=move || get(key) == "on"
                    on:change=move |ev| write_moe_key(ex, key, if event_target_checked(&ev) { "on" } else { "" }, true)
                />
                {label}
            </label>
        }
    };
    let error = move |key: &'static str| Signal::derive(move || ex.live_error(key));
    view! {
        <Show when=move || shown.get()>
            <fieldset class="field moe-controls">
                <legend>"Mixture of experts"</legend>
                <div class="field">
                    <label for="ex-moe-dispatcher">"Token dispatcher"</label>
                    <select
                        id="ex-moe-dispatcher"
                        title="how tokens reach the experts of other EP ranks: one all-to-all each way (Megatron alltoall), an all-gather (Megatron allgather), or hierarchical as DeepEP and HybridEP (node-limited: at most 4 domains per token, as DeepSeek-V3)"
                        aria-describedby="ex-moe-dispatcher-error"
                        on:change=move |ev| write_moe_key(ex, keys::MOE_DISPATCHER, &event_target_value(&ev), true)
                    >
                        {dispatchers}
                    </select>
                    <FieldError id="ex-moe-dispatcher-error".to_string() message=error(keys::MOE_DISPATCHER) />
                </div>
                <DebouncedInput
                    id="ex-moe-load".to_string()
                    label="Expert load"
                    value=Signal::derive(move || get(keys::MOE_LOAD))
                    on_text=Callback::new(|_: String| {})
                    on_commit=Callback::new(move |(v, push): (String, bool)| write_moe_key(ex, keys::MOE_LOAD, &v, push))
                    error=error(keys::MOE_LOAD)
                    help=Signal::derive(|| keys::MOE_LOAD_HELP.to_string())
                    placeholder=Signal::derive(|| "dropless:1.1".to_string())
                    inputmode="text"
                />
                <div class="field">
                    <label for="ex-moe-a2a_overlap">"All-to-all overlap"</label>
                    <select
                        id="ex-moe-a2a_overlap"
                        title="hide the expert all-to-all behind another micro-batch's compute (Megatron's EP A2A overlap, DualPipe), at the cost of the SMs its kernels take; by default each configuration takes the cheaper"
                        aria-describedby="ex-moe-a2a_overlap-error"
                        on:change=move |ev| write_moe_key(ex, keys::MOE_A2A_OVERLAP, &event_target_value(&ev), true)
                    >
                        {overlaps}
                    </select>
                    <FieldError id="ex-moe-a2a_overlap-error".to_string() message=error(keys::MOE_A2A_OVERLAP) />
                </div>
                <div class="checks">
                    {check(keys::MOE_FP8_DISPATCH, "FP8 dispatch", "dispatch tokens in FP8 with 1×128 scales; combine stays 16-bit")}
                </div>
                <FieldError id="ex-moe-error".to_string() message=error(keys::MOE_FP8_DISPATCH) />
            </fieldset>
        </Show>
    }
}

/// The model's own training budget (what an empty budget field means), if the model is known.
fn model_budget(ex: Explorer, model: &str) -> Option<TrainingBudget> {
    ex.entries.with(|u| u.find_model(model).ok().map(|m| m.training_budget))
}

/// The training budget: an amount and its unit; empty means the model's budget.
#[component]
fn BudgetField() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let default = move || ex.live.with(|f| model_budget(ex, &f.model));
    let placeholder = Signal::derive(move || match default() {
        Some(TrainingBudget::Tokens(t) | TrainingBudget::Samples(t)) => format!("{t:e} (model default)"),
        None => String::new(),
    });
    let unit = move || {
        ex.live.with(|f| {
            if !f.budget_unit.is_empty() {
                f.budget_unit.clone()
            } else {
                default().map(|b| BudgetUnit::of(b).as_str().to_string()).unwrap_or_else(|| "tokens".into())
            }
        })
    };
    let help = Signal::derive(move || {
        let l = ex.spec.with(|s| s.as_ref().ok().map(|s| s.model.l));
        match (default(), l) {
            (Some(b @ TrainingBudget::Tokens(_)), Some(l)) if ex.live.with(|f| f.budget.trim().is_empty()) => {
                format!(
                    "= {} sequences of {l} tokens (the published study's budget)",
                    fmt::count(b.samples(l).round() as u64)
                )
            }
            (Some(TrainingBudget::Samples(_)), _) if ex.live.with(|f| f.budget.trim().is_empty()) => {
                "the published study's budget (350,000 samples × 80 epochs)".to_string()
            }
            _ => "e.g. 15T, 1e12, or 350000*80 (samples × epochs); empty: the model's".into(),
        }
    });
    view! {
        <TextField key=keys::BUDGET label="Training budget" help=help placeholder=placeholder inputmode="text">
            <label for="ex-unit" class="sr-only">"Budget unit"</label>
            <select
                id="ex-unit"
                class="unit"
                prop:value=unit
                on:change=move |ev| write_key(ex, keys::UNIT, event_target_value(&ev), true)
            >
                <option value="tokens" selected=move || unit() == "tokens">"tokens"</option>
                <option value="samples" selected=move || unit() == "samples">"samples"</option>
            </select>
        </TextField>
    }
}

/// Says when the scenario uses the user's own model or system: it lives in this browser, so the
/// page's link works only here; how to share it (export from the Catalog view; the CLI reads the
/// exported file). For an id this browser does not know, says how to get it.
#[component]
fn UserEntryNotice() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    move || {
        let (model, system) = ex.live.with(|f| (f.model.trim().to_string(), system_spec::id_of(&f.system).to_string()));
        let (m, s) = ex.entries.with(|u| (u.has_model(&model), u.has_system(&system)));
        let mut yours = Vec::new();
        if m {
            yours.push(format!("model “{model}”"));
        }
        if s {
            yours.push(format!("system “{system}”"));
        }
        if yours.is_empty() {
            let unknown = ex.live_error(keys::SYSTEM).is_some_and(|e| e.contains("not in the"))
                || ex.live_error(keys::MODEL).is_some_and(|e| e.contains("not in the"));
            return unknown.then(|| view! {
                <p class="notice small" id="ex-unknown-entry">
                    "If this link was shared with you and names someone's own model or system, ask them for its exported JSON and import it in the Catalog view."
                </p>
            }.into_any());
        }
        Some(view! {
            <p class="notice small" id="ex-yours">
                {format!("Your {} lives in this browser only: this page's link opens the same scenario here, but not elsewhere. ", yours.join(" and "))}
                "To share it, export it from the "
                <a href=if s { "?view=catalog&tab=systems" } else { "?view=catalog&tab=models" }>"Catalog view"</a>
                " (JSON) and send the file with the link; the other person imports it there, and "
                <code>"fmperf search --system FILE.json"</code>
                " reads the same file."
            </p>
        }.into_any())
    }
}

/// The scenario form.
#[component]
pub fn ScenarioForm() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let system_domain = Signal::derive(move || {
        let id = ex.live.with(|f| system_spec::id_of(&f.system).to_string());
        ex.entries.with(|u| u.find_system(&id).ok().map(|s| s.scale_up.domain_size.to_string())).unwrap_or_default()
    });
    // A domain larger than the device count is allowed (a job on part of one domain) but flagged.
    let domain_help = Signal::derive(move || {
        let (domain, gpus) = ex.live.with(|f| {
            let d = if f.domain.trim().is_empty() { system_domain.get() } else { f.domain.clone() };
            (parse_quantity(&d), parse_quantity(&f.gpus))
        });
        if let Some(reading) = ex.live.with(|f| count_reading(&f.domain, "devices")) {
            return reading;
        }
        match (domain, gpus) {
            (Some(d), Some(n)) if d > n => {
                format!("Larger than the {} devices: the job uses part of one domain", fmt::count(n as u64))
            }
            _ => match system_domain.get().as_str() {
                "" => "devices per scale-up domain".to_string(),
                d => format!("devices per scale-up domain; empty: {d}"),
            },
        }
    });
    // A count typed as `2k` says what it reads as (2,000, not 2,048) under its field.
    let gpus_help = Signal::derive(move || {
        ex.live
            .with(|f| count_reading(&f.gpus, "devices"))
            .unwrap_or_else(|| "e.g. 1024, 2,304 or 2k (= 2,000)".to_string())
    });
    let batch_placeholder = Signal::derive(move || {
        ex.live.with(|f| match own_batch(&f.model) {
            Some((b, _)) => format!("{b} (the model's own)"),
            None => "required".to_string(),
        })
    });
    let batch_help = Signal::derive(move || {
        if let Some(reading) = ex.live.with(|f| count_reading(&f.batch, "samples")) {
            return reading;
        }
        ex.live.with(|f| fmperf_app::batch::batch_help(&f.model))
    });
    let notes = move || {
        ex.spec.with(|s| match s {
            Ok(spec) if !spec.notes.is_empty() => Some(view! {
                <details class="notes">
                    <summary>{format!("{} modelling note(s) for this model and system", spec.notes.len())}</summary>
                    <ul>{spec.notes.iter().map(|n| view! { <li>{n.text.clone()}</li> }).collect_view()}</ul>
                </details>
            }),
            _ => None,
        })
    };
    view! {
        <form class="scenario" on:submit=|ev| ev.prevent_default() aria-label="Scenario">
            <ChoiceSelect key=keys::MODEL label="Model" picker=Picker::Model />
            <ChoiceSelect key=keys::SYSTEM label="System" picker=Picker::System />
            <div class="pair">
                <TextField key=keys::GPUS label="Devices" help=gpus_help inputmode="text" />
                <TextField key=keys::DOMAIN label="Scale-up domain" help=domain_help placeholder=system_domain />
            </div>
            <SystemOptions />
            <UserEntryNotice />
            <div class="pair">
                <TextField key=keys::BATCH label="Global batch [samples]" help=batch_help placeholder=batch_placeholder inputmode="text" />
                <TextField key=keys::TOP label="Top configurations" help="1 to 100" />
            </div>
            <StrategyChecks />
            <MoeControls />
            <BudgetField />
            {notes}
        </form>
    }
}
