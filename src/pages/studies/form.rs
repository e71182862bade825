//! The sweep form: model, system, strategies, base devices/domain/precision/batch, restrictions,
//! and the axes (any number, slowest first). Each control writes the URL when it is committed
//! (change of a select, Enter or leaving a text field); the sweep then restarts. A problem is shown
//! at its field and starts nothing.

use fmperf_app::pickers::{model_picks, system_picks};
use fmperf_app::system_spec;
use fmperf_core::catalog::Precision;
use fmperf_core::resolve::sweep_axis::{AxisKey, ValueKind};
use fmperf_core::sweep::SweepText;
use fmperf_core::{Error, Strategy};
use leptos::prelude::*;

use super::keys::{self, SweepSource};
use super::state::Studies;

/// Applies `edit` to the current sweep text and writes it to the URL.
fn edit(st: Studies, push: bool, edit: impl FnOnce(&mut SweepText)) {
    let mut text = st.source.get_untracked().text();
    edit(&mut text);
    st.url.update(push, |q| keys::write_custom(q, &text));
}

/// The current sweep text (tracked).
fn text(st: Studies) -> SweepText {
    st.source.with(|s| match s {
        SweepSource::Custom(t) => t.clone(),
        SweepSource::Preset(_, p) => p.text.clone(),
    })
}

/// The problem of the inputs whose field is `field` or inside it (tracked).
fn problem(st: Studies, field: &'static str) -> Option<String> {
    st.spec.with(|s| match s {
        Err(e) if e.path().is_some_and(|f| f.is_in(field)) => Some(fmperf_app::words::field_message(e)),
        _ => None,
    })
}

/// A problem no field shows (unknown ids, …).
fn general_problem(st: Studies) -> Option<String> {
    const SHOWN: [&str; 15] = [
        "nics",
        "scale_up",
        "scale_out",
        "vector",
        "axis",
        "gpus",
        "nvlink",
        "precision",
        "global-batch",
        "per-device-batch",
        "fix",
        "strategy",
        "system",
        "mode",
        "ext",
    ];
    st.spec.with(|s| match s {
        Err(e) if !e.path().is_some_and(|f| SHOWN.iter().any(|k| f.is_in(k))) => Some(e.to_string()),
        _ => None,
    })
}

/// A committed text field of the sweep text.
#[component]
fn TextField(
    id: &'static str,
    label: &'static str,
    help: &'static str,
    #[prop(optional)] placeholder: &'static str,
    field: &'static str,
    read: fn(&SweepText) -> Option<String>,
    write: fn(&mut SweepText, Option<String>),
) -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let error = Signal::derive(move || problem(st, field));
    let err_id = format!("{id}-error");
    view! {
        <div class="field">
            <label for=id>{label}</label>
            <input
                id=id
                type="text"
                autocomplete="off"
                spellcheck="false"
                placeholder=placeholder
                prop:value=move || read(&text(st)).unwrap_or_default()
                aria-invalid=move || error.with(|e| e.is_some()).to_string()
                aria-describedby=err_id.clone()
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    let v = (!v.trim().is_empty()).then(|| v.trim().to_string());
                    edit(st, false, |t| write(t, v));
                }
            />
            <div id=err_id class="field-error" role="alert">
                {move || error.get()}
            </div>
            <div class="field-help">{help}</div>
        </div>
    }
}

/// The form of the user's own sweep.
#[component]
pub fn SweepForm() -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    // The user's own entries first (marked), then the catalogs.
    let entries = crate::storage::user_entries();
    let models = model_picks(&entries).into_iter().map(|p| (p.id, p.label)).collect();
    let systems = system_picks(&entries).into_iter().map(|p| (p.id, p.label)).collect();
    let strategies = Strategy::ALL
        .iter()
        .map(|&s| {
            let checked = move || {
                let t = text(st);
                fmperf_core::sweep::text::parse_strategies(t.strategy.as_deref().unwrap_or("all"))
                    .map(|list| list.contains(&s))
                    .unwrap_or(false)
            };
            let toggle = move |ev: leptos::ev::Event| {
                let on = event_target_checked(&ev);
                edit(st, true, |t| {
                    let mut list = fmperf_core::sweep::text::parse_strategies(t.strategy.as_deref().unwrap_or("all"))
                        .unwrap_or_default();
                    list.retain(|x| *x != s);
                    if on {
                        list.push(s);
                    }
                    fmperf_core::sort::sort(&mut list);
                    t.strategy = if list.len() == Strategy::ALL.len() {
                        None
                    } else {
                        Some(list.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(","))
                    };
                });
            };
            view! {
                <label title=s.description()>
                    <input type="checkbox" data-strategy=s.as_str() prop:checked=checked on:change=toggle />
                    {s.as_str()}
                </label>
            }
        })
        .collect_view();
    let strategy_error = Signal::derive(move || problem(st, "strategy"));
    let batch_mode = move || if text(st).per_device_batch.is_some() { "per-device" } else { "global" };
    let batch_value =
        move || text(st).per_device_batch.or_else(|| text(st).global_batch).unwrap_or_else(|| "4096".into());
    let batch_error = Signal::derive(move || problem(st, "global-batch").or_else(|| problem(st, "per-device-batch")));
    let set_batch = move |mode: &str, value: String| {
        let per_device = mode == "per-device";
        edit(st, true, |t| {
            if per_device {
                t.per_device_batch = Some(value);
                t.global_batch = None;
            } else {
                t.global_batch = Some(value);
                t.per_device_batch = None;
            }
        });
    };
    let precisions: Vec<(String, String)> =
        std::iter::once((String::new(), "default (system's; extended: switch)".to_string()))
            .chain(Precision::ALL.iter().map(|p| (p.as_str().to_string(), p.as_str().to_string())))
            .collect();
    view! {
        <h2>"Your sweep"</h2>
        {move || general_problem(st).map(|e| view! { <p class="notice error" role="alert" id="sweep-error">{e}</p> })}
        <div class="studies-form">
            <Select id="sweep-model" label="Model" field="model" options=models read=|t| t.model.clone() write=|t, v| t.model = v />
            <Select
                id="sweep-system"
                label="System"
                field="system"
                options=systems
                read=|t| system_spec::id_of(&t.system).to_string()
                write=|t, v| t.system = system_spec::with_id(&t.system, &v)
            />
            <details class="field system-options" open=!system_spec::options_of(&text(st).system).is_empty()>
                <summary>"System options (the CLI's " <code>"--system ID,key=value"</code> ")"</summary>
                <TextField
                    id="sweep-sys-nics"
                    label="NICs per device"
                    help="Each of the part's NIC bandwidth."
                    placeholder="catalog value"
                    field="nics"
                    read=|t| system_spec::option(&t.system, "nics")
                    write=|t, v| t.system = system_spec::set_option(&t.system, "nics", &v.unwrap_or_default())
                />
                <TextField
                    id="sweep-sys-scale_up"
                    label="Scale-up [GB/s per device]"
                    help="One direction."
                    placeholder="catalog value"
                    field="scale_up"
                    read=|t| system_spec::option(&t.system, "scale_up")
                    write=|t, v| t.system = system_spec::set_option(&t.system, "scale_up", &v.unwrap_or_default())
                />
                <TextField
                    id="sweep-sys-scale_out"
                    label="Scale-out [GB/s per NIC]"
                    help="One direction; required for a part whose entry lists none."
                    placeholder="catalog value"
                    field="scale_out"
                    read=|t| system_spec::option(&t.system, "scale_out")
                    write=|t, v| t.system = system_spec::set_option(&t.system, "scale_out", &v.unwrap_or_default())
                />
                <TextField
                    id="sweep-sys-vector"
                    label="Vector rate [TFLOP/s]"
                    help="Non-matrix work (reference mode)."
                    placeholder="catalog value"
                    field="vector"
                    read=|t| system_spec::option(&t.system, "vector")
                    write=|t, v| t.system = system_spec::set_option(&t.system, "vector", &v.unwrap_or_default())
                />
            </details>
            <div class="field">
                <span class="label">"Strategies"</span>
                <div class="checks">{strategies}</div>
                <div class="field-error" role="alert">{move || strategy_error.get()}</div>
                <div class="field-help">"Each point: the fastest of these (add a strategy axis for one line each). Extended mode searches 1d and 2d-seqp: 2d (SUMMA) has no extended model."</div>
            </div>
            <TextField
                id="sweep-gpus"
                label="Devices"
                help="Used when no gpus axis is swept (e.g. 2304, 2k)."
                placeholder="8"
                field="gpus"
                read=|t| t.gpus.clone()
                write=|t, v| t.gpus = v
            />
            <TextField
                id="sweep-nvlink"
                label="Scale-up domain [devices]"
                help="Empty: the system's own."
                placeholder="system's"
                field="nvlink"
                read=|t| t.nvlink.clone()
                write=|t, v| t.nvlink = v
            />
            <Select
                id="sweep-precision"
                label="Precision"
                field="precision"
                options=precisions
                read=|t| t.precision.clone().unwrap_or_default()
                write=|t, v| t.precision = (!v.is_empty()).then_some(v)
            />
            <div class="field">
                <label for="sweep-batch">"Batch [samples]"</label>
                <div class="row nowrap">
                    <select
                        id="sweep-batch-mode"
                        aria-label="batch rule"
                        prop:value=batch_mode
                        on:change=move |ev| set_batch(&event_target_value(&ev), batch_value())
                    >
                        <option value="global" selected=move || batch_mode() == "global">"global batch G"</option>
                        <option value="per-device" selected=move || batch_mode() == "per-device">"per device"</option>
                    </select>
                    <input
                        id="sweep-batch"
                        type="text"
                        inputmode="numeric"
                        prop:value=batch_value
                        aria-invalid=move || batch_error.with(|e| e.is_some()).to_string()
                        on:change=move |ev| set_batch(batch_mode(), event_target_value(&ev).trim().to_string())
                    />
                </div>
                <div class="field-error" role="alert">{move || batch_error.get()}</div>
                <div class="field-help">
                    "Per device: G = samples per device × devices (× accumulation steps)."
                </div>
            </div>
            <TextField
                id="sweep-fix"
                label="Restrict configurations"
                help="e.g. tp=1,mbs=1 or accum=4 (micro-batches per iteration)."
                placeholder="none"
                field="fix"
                read=|t| t.fix.clone()
                write=|t, v| t.fix = v
            />
        </div>
        <AxesEditor />
    }
}

/// A select of one sweep-text field.
#[component]
fn Select(
    id: &'static str,
    label: &'static str,
    /// The spec field whose problems show under the select.
    field: &'static str,
    options: Vec<(String, String)>,
    read: fn(&SweepText) -> String,
    write: fn(&mut SweepText, String),
) -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let error = Signal::derive(move || problem(st, field));
    let value = move || read(&text(st));
    let known: Vec<String> = options.iter().map(|(v, _)| v.clone()).collect();
    let opts = options
        .into_iter()
        .map(|(v, l)| {
            let v2 = v.clone();
            view! { <option value=v selected=move || value() == v2>{l}</option> }
        })
        .collect_view();
    // A value typed into the URL that is not a catalog id stays visible.
    let unknown = move || {
        let v = value();
        (!known.contains(&v)).then(|| view! { <option value=v.clone() selected=true>{v.clone()}</option> })
    };
    view! {
        <div class="field">
            <label for=id>{label}</label>
            <select id=id prop:value=value on:change=move |ev| edit(st, true, |t| write(t, event_target_value(&ev)))>
                {unknown}
                {opts}
            </select>
            <div class="field-error" role="alert">{move || error.get()}</div>
        </div>
    }
}

/// Help for an axis kind: units and how to write values.
fn axis_help(key: AxisKey) -> String {
    let how = match key.value_kind() {
        ValueKind::Count => "integers: a,b,c or a..b (a, 2a, 4a, … ≤ b)",
        ValueKind::Param => "absolute values, or factors of the system's own (x0.5,x1,x2; x0.25..x4)",
        ValueKind::Fraction => "fractions 0 ≤ s < 1",
        ValueKind::Name => "catalog ids, comma-separated",
        ValueKind::Precision => "fp32, tf32, fp16, bf16, fp8",
        ValueKind::Strategy => "1d, 2d, 2d-seqp",
    };
    let extra = match key {
        AxisKey::Sparsity => {
            " — reference mode cannot express weight sparsity (points with s > 0 say so); in extended mode it sets \
             the switch weight_sparsity, which changes wafer-scale parts only"
        }
        AxisKey::Accum => " — micro-batches per iteration G/(dp·mbs)",
        AxisKey::Precision => {
            " — the catalog's matrix peak of that precision (reference system files are 16-bit); in extended mode \
             it overrides the switch precision"
        }
        _ => "",
    };
    format!("{}: {how}{extra}", key.label())
}

/// Starting values of a new axis.
fn default_values(key: AxisKey) -> &'static str {
    match key {
        AxisKey::Gpus => "64..16384",
        AxisKey::Domain => "4,8,64",
        AxisKey::Param(_) => "x0.5,x1,x2",
        AxisKey::SeqLen => "1024..16384",
        AxisKey::GlobalBatch => "512..8192",
        AxisKey::Accum => "1..32",
        AxisKey::Precision => "fp16,bf16,fp8",
        AxisKey::Sparsity => "0,0.5,0.9",
        AxisKey::System => "ref-A100,ref-H200,ref-B200",
        AxisKey::Model => "gpt3,gpt3_1T",
        AxisKey::Strategy => "1d,2d,2d-seqp",
        AxisKey::Mbs => "1,2,4",
        _ => "1..64",
    }
}

/// The axes: one row each (kind, values, remove), and a row to add one.
#[component]
fn AxesEditor() -> impl IntoView {
    let st = use_context::<Studies>().expect("studies state");
    let axes = move || text(st).axes;
    let rows = move || {
        axes()
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let (name, values) =
                    a.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).unwrap_or((a, String::new()));
                let key = AxisKey::parse(&name).ok();
                let field: &'static str = key.map(|k| k.name()).unwrap_or("axis");
                let error = move || {
                    st.spec.with(|s| match s {
                        Err(e) if e.path().is_some_and(|p| p.below("axis") == Some(field)) => {
                            Some(fmperf_app::words::field_message(e))
                        }
                        _ => None,
                    })
                };
                let help = key.map(axis_help).unwrap_or_default();
                let name2 = name.clone();
                view! {
                    <div class="axis-row" data-axis=name.clone()>
                        <span class="axis-name mono">{name.clone()}</span>
                        <input
                            type="text"
                            class="axis-values"
                            aria-label=format!("values of axis {name}")
                            prop:value=values
                            aria-invalid=move || error().is_some().to_string()
                            on:change=move |ev| {
                                let v = event_target_value(&ev);
                                let n = name2.clone();
                                edit(st, false, |t| t.axes[i] = format!("{n}={}", v.trim()));
                            }
                        />
                        <button
                            type="button"
                            class="axis-remove"
                            aria-label=format!("remove axis {name}")
                            on:click=move |_| {
                                edit(st, true, |t| {
                                    if i < t.axes.len() {
                                        t.axes.remove(i);
                                    }
                                })
                            }
                        >
                            "×"
                        </button>
                        <div class="field-error" role="alert">{error}</div>
                        <div class="field-help">{help}</div>
                    </div>
                }
            })
            .collect_view()
    };
    let unused = move || {
        let used: Vec<String> = axes().iter().map(|a| a.split('=').next().unwrap_or("").to_string()).collect();
        AxisKey::ALL
            .into_iter()
            .filter(|k| !used.iter().any(|u| AxisKey::parse(u).ok() == Some(*k)))
            .collect::<Vec<_>>()
    };
    let add = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        if let Ok(k) = AxisKey::parse(&v) {
            edit(st, true, |t| t.axes.push(format!("{}={}", k.name(), default_values(k))));
        }
    };
    let points = move || st.spec.with(|s| s.as_ref().map(|s| s.point_count()).map_err(Error::to_string).ok());
    view! {
        <h3>"Axes " <span class="muted small">"(slowest first; the last varies fastest)"</span></h3>
        <div id="sweep-axes">{rows}</div>
        <div class="row">
            <select id="sweep-add-axis" aria-label="add an axis" on:change=add prop:value="">
                <option value="" selected=true>"+ add an axis…"</option>
                {move || {
                    unused()
                        .into_iter()
                        .map(|k| view! { <option value=k.name()>{format!("{} — {}", k.name(), k.label())}</option> })
                        .collect_view()
                }}
            </select>
            <span class="muted" id="sweep-point-count">
                {move || points().map(|n| format!("{} points", super::count(n as u64)))}
            </span>
        </div>
        <p class="field-help">
            "Weight sparsity is not in the reference model (it prices every weight as dense): in reference mode a "
            "sparsity axis shows which points it cannot evaluate; in extended mode it prices them (on wafer-scale "
            "parts; elsewhere the points say it has no effect). An absolute system-parameter value (matrix=1000) "
            "stands in for one the catalog lacks."
        </p>
    }
}
