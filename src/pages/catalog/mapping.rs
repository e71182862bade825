//! The mapping of a system entry onto the reference model's inputs: entry + scale-up domain size +
//! NICs per device + precision → the reference's system parameters, each with the catalog field it
//! comes from (which peak, which bandwidth and in which direction), and every approximation the
//! mapping made. The rules and each value's origin are [`fmperf_core::catalog::to_system_params`]'s
//! ([`fmperf_core::catalog::MappedSystem::provenance`]); this panel only shows them.

use fmperf_core::catalog::{
    CatalogSystem, MappingOptions, Precision, default_precision, parse_system_spec, to_system_params,
};
use fmperf_core::format::form::text_of;
use fmperf_core::format::{system_to_reference_json, validate_scenario_field};
use fmperf_core::schema::fields::REFERENCE_SYSTEM_FIELDS;
use leptos::prelude::*;
use serde_json::Value;

use super::entry::dom_id;
use super::rich;
use super::transfer::download_document_text;

/// One input of the panel: the text and its check.
#[derive(Clone, Copy)]
struct Input {
    text: RwSignal<String>,
    check: Memo<Result<MappingOptions, String>>,
}

/// An input checked by the core's own rule for it: the scenario's `domain_size` /
/// `nics_per_device` fields, or the system-spec keys `vector`, `scale_up`, `scale_out`. Empty =
/// the entry's value. The result is the options this input sets.
fn input(initial: String, key: &'static str) -> Input {
    let text = RwSignal::new(initial);
    let check = Memo::new(move |_| {
        let t = text.get();
        let t = t.trim();
        if t.is_empty() {
            return Ok(MappingOptions::default());
        }
        let field = match key {
            "domain" => Some("domain_size"),
            "nics" => Some("nics_per_device"),
            _ => None,
        };
        if let Some(field) = field {
            validate_scenario_field(field, t).map_err(|e| e.to_string())?;
        }
        // The spec parser reads the value (and checks the override keys).
        parse_system_spec(&format!("entry,{key}={t}")).map(|(_, o)| o).map_err(|e| e.to_string())
    });
    Input { text, check }
}

/// The mapping panel of one system.
#[component]
pub fn MappingPanel(system: CatalogSystem) -> impl IntoView {
    let base = dom_id(&system.id);
    let domain = input(system.scale_up.domain_size.to_string(), "domain");
    let nics = input("1".to_string(), "nics");
    let vector = input(String::new(), "vector");
    let scale_up = input(String::new(), "scale_up");
    let scale_out = input(String::new(), "scale_out");
    let first = default_precision(&system, None).unwrap_or(Precision::Bf16);
    let precision = RwSignal::new(first.as_str().to_string());
    let sys = system.clone();
    let result = Memo::new(move |_| {
        let mut o = MappingOptions::default();
        for i in [domain, nics, vector, scale_up, scale_out] {
            let Ok(set) = i.check.get() else {
                return Err("fix the inputs above".to_string());
            };
            o.domain_size = o.domain_size.or(set.domain_size);
            o.nics_per_device = o.nics_per_device.or(set.nics_per_device);
            o.vector_tflops = o.vector_tflops.or(set.vector_tflops);
            o.scale_up_gbps = o.scale_up_gbps.or(set.scale_up_gbps);
            o.scale_out_gbps = o.scale_out_gbps.or(set.scale_out_gbps);
        }
        o.precision = Some(precision.get().parse().map_err(|e: fmperf_core::Error| e.to_string())?);
        // The entry's own domain size and one NIC are the defaults, not choices.
        o.domain_size = o.domain_size.filter(|d| *d != sys.scale_up.domain_size);
        o.nics_per_device = o.nics_per_device.filter(|n| *n != 1);
        to_system_params(&sys, &o).map_err(|e| e.to_string())
    });
    let sys = system.clone();
    let table = move || match result.get() {
        Err(e) => view! {
            <p class="notice error mapping-error" role="status">
                "The reference model cannot use this entry with these choices: " {rich(&e)}
                " Give the missing number under “Numbers the entry lacks”, or duplicate the entry and fill it in."
            </p>
        }
        .into_any(),
        Ok(m) => {
            let tree: Value = serde_json::from_str(&system_to_reference_json(&m.params)).unwrap_or(Value::Null);
            let rows = REFERENCE_SYSTEM_FIELDS
                .iter()
                .filter(|f| tree.get(f.path).is_some() && !matches!(f.path, "empirical" | "summa_nb"))
                .map(|f| {
                    view! {
                        <tr data-param=f.path>
                            <th scope="row"><code>{f.path}</code></th>
                            <td class="num mono">{text_of(tree.get(f.path))}</td>
                            <td class="unit">{if f.unit.is_empty() { "dimensionless" } else { f.unit }}</td>
                            <td class="meaning">{m.origin_of(f.path).map(|p| p.to_string()).unwrap_or_else(|| "see the approximations".to_string())}</td>
                        </tr>
                    }
                })
                .collect_view();
            let approx = if m.approximations.is_empty() {
                view! { <p class="muted">"Approximations: none; every value is read from the entry."</p> }.into_any()
            } else {
                let items = m.approximations.iter().map(|a| view! { <li>{a.text.clone()}</li> }).collect_view();
                view! {
                    <p>"Approximations and derived values:"</p>
                    <ul class="approximations">{items}</ul>
                }
                .into_any()
            };
            let file = format!("{}.{}.reference-system.json", sys.id, m.precision);
            let text = system_to_reference_json(&m.params);
            view! {
                <div class="table-wrap" tabindex="0">
                    <table class="mapping">
                        <thead>
                            <tr>
                                <th scope="col">"parameter"</th>
                                <th scope="col" class="num">"value"</th>
                                <th scope="col">"unit"</th>
                                <th scope="col">"taken from"</th>
                            </tr>
                        </thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                {approx}
                <button type="button" on:click=move |_| download_document_text(&file, &text)>
                    "Export these parameters as reference system JSON"
                </button>
            }
            .into_any()
        }
    };
    let field = move |label: &'static str, unit: &'static str, i: Input, key: &'static str, hint: &'static str| {
        let id = format!("map-{key}-{base}");
        let err_id = format!("{id}-error");
        view! {
            <div class="map-field" data-key=key>
                <label for=id.clone()>{label} " [" {unit} "]"</label>
                <input
                    id=id
                    type="text"
                    inputmode="decimal"
                    placeholder=hint
                    prop:value=move || i.text.get()
                    on:input=move |ev| i.text.set(event_target_value(&ev))
                    aria-invalid=move || i.check.with(Result::is_err).to_string()
                    aria-describedby=err_id.clone()
                />
                <div class="field-error" id=err_id>{move || i.check.get().err()}</div>
            </div>
        }
    };
    let prec_id = format!("map-precision-{}", dom_id(&system.id));
    let needs_numbers = to_system_params(&system, &MappingOptions::default()).is_err();
    let options = Precision::ALL
        .iter()
        .map(|p| view! { <option value=p.as_str() selected=*p == first>{p.as_str()}</option> })
        .collect_view();
    view! {
        <section class="mapping-panel" aria-label="Mapping onto the reference model">
            <h3>"As the reference model reads it"</h3>
            <p class="muted">
                "Choose the scale-up domain size, NICs per device and training precision: the table shows the \
                 reference model's system parameters, which catalog value each comes from, and what is approximated. \
                 Bandwidths are per device and one direction."
            </p>
            <div class="row map-inputs">
                {field("scale-up domain size", "devices", domain, "domain", "")}
                {field("NICs per device", "NICs", nics, "nics", "")}
                <div class="map-field">
                    <label for=prec_id.clone()>"training precision"</label>
                    <select id=prec_id on:change=move |ev| precision.set(event_target_value(&ev))>
                        {options}
                    </select>
                </div>
            </div>
            <details class="overrides" open=needs_numbers>
                <summary>"Numbers the entry lacks or you want to replace"</summary>
                <div class="row map-inputs">
                    {field("vector rate", "TFLOP/s", vector, "vector", "from the entry")}
                    {field("scale-up bandwidth per device, one direction", "GB/s", scale_up, "scale_up", "from the entry")}
                    {field("scale-out bandwidth per NIC, one direction", "GB/s", scale_out, "scale_out", "from the entry")}
                </div>
            </details>
            {table}
        </section>
    }
}
