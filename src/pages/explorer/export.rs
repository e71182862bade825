//! Downloads of the shown result list as CSV and JSON (written by fmperf-core's
//! [`fmperf_core::explore::export`], with every number in full).

use fmperf_chart::format::slug;
use fmperf_core::Strategy;
use fmperf_core::explore::ConfigReport;
use fmperf_core::explore::export::{results_csv, results_json};
use leptos::prelude::*;

use super::state::Explorer;
use crate::download::download_text;

/// The file name stem of an export: `fmperf-gpt3_1T-ref-H200-nvs8-4096-all`.
fn stem(ex: &Explorer, list: Option<Strategy>) -> String {
    ex.outcome.with_untracked(|o| match o {
        Some(o) => slug(&format!(
            "fmperf {} {} nvs{} {} {}",
            o.spec.model_id,
            o.spec.system_id,
            o.spec.system.domain_size,
            o.spec.n_gpus,
            list.map(|s| s.as_str()).unwrap_or("all")
        )),
        None => "fmperf-results".to_string(),
    })
}

/// CSV and JSON buttons for `reports`.
#[component]
pub fn ExportResults(reports: Vec<ConfigReport>, list: Option<Strategy>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let (error, set_error) = signal(None::<String>);
    let reports = StoredValue::new(reports);
    let csv = move |_| {
        let text = reports.with_value(|r| results_csv(r));
        set_error
            .set(download_text(&format!("{}.csv", stem(&ex, list)), "text/csv", &text).err().map(|e| e.to_string()));
    };
    let json = move |_| {
        let Some(spec) = ex.outcome.with_untracked(|o| o.as_ref().map(|o| o.spec.clone())) else { return };
        let name = list.map(|s| s.as_str()).unwrap_or("all");
        let text = reports.with_value(|r| results_json(&spec, name, r));
        set_error.set(
            download_text(&format!("{}.json", stem(&ex, list)), "application/json", &text).err().map(|e| e.to_string()),
        );
    };
    view! {
        <div class="row exports">
            <span class="muted">"Download this list:"</span>
            <button type="button" class="small" on:click=csv>"CSV"</button>
            <button type="button" class="small" on:click=json>"JSON"</button>
            {move || error.get().map(|e| view! { <span class="field-error" role="alert">{e}</span> })}
        </div>
    }
}
