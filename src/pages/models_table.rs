//! The reference models with their parameter count and training FLOPs per sample, computed in the
//! browser by fmperf-core (spec §8).

use fmperf_core::ModelShape;
use fmperf_core::reference::model_summary;
use leptos::prelude::*;

/// Table of the published study's three models.
#[component]
pub fn ReferenceModelsTable() -> impl IntoView {
    let rows = ModelShape::REFERENCE
        .iter()
        .map(|(name, m)| {
            // The built-in shapes are valid, but a Result is a Result: show a dash rather than panic.
            let (params, pflop) = match model_summary(m) {
                Ok(s) => (format!("{:.2}", s.parameters / 1e9), format!("{:.2}", s.flops_per_sample_tflop / 1e3)),
                Err(_) => ("-".to_string(), "-".to_string()),
            };
            view! {
                <tr data-model=*name>
                    <td><code>{*name}</code></td>
                    <td class="num">{m.l}</td>
                    <td class="num">{m.e}</td>
                    <td class="num">{m.h}</td>
                    <td class="num">{m.depth}</td>
                    <td class="num">{m.f}</td>
                    <td class="num params">{params}</td>
                    <td class="num">{pflop}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap" tabindex="0">
            <table id="reference-models">
                <thead>
                    <tr>
                        <th>"model"</th>
                        <th class="num">"sequence l [tokens]"</th>
                        <th class="num">"width e"</th>
                        <th class="num">"heads h"</th>
                        <th class="num">"depth [blocks]"</th>
                        <th class="num">"MLP width f"</th>
                        <th class="num">"parameters [B]"</th>
                        <th class="num">"training FLOPs per sample [PFLOP]"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        // Outside the scrolling table, so it wraps to the screen's width instead of the table's.
        <p class="muted table-note">
            "Parameters = Σ weights of one block × depth; FLOPs per sample = forward + backward of one sequence (including flash-attention recomputation), as the reference model counts them."
        </p>
    }
}
