//! The whole run's cost under the results: device-hours, energy and money of the selected
//! configuration on the scenario's budget, at the price per device-hour the user types (URL key
//! `price`) or the part's example price, labelled as an example, not a quote. The texts are
//! [`fmperf_app::run_cost`]'s.

use fmperf_app::run_cost;
use leptos::prelude::*;

use super::selection::Selected;
use super::state::Explorer;

/// The card's styles.
const CSS: &str = "
.run-cost .cost-wrap { max-width: 100%; }
.run-cost table { border-collapse: collapse; font-size: 0.9rem; width: 100%; table-layout: fixed; }
.run-cost th, .run-cost td { padding: 0.25rem 0.9rem 0.25rem 0; text-align: left; vertical-align: top; }
.run-cost th { font-weight: 600; width: 12.5rem; }
.run-cost td { overflow-wrap: anywhere; white-space: normal; min-width: 0; }
.run-cost .cost-value { font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; }
.run-cost .cost-basis { display: block; font-size: 0.8rem; color: var(--muted); line-height: 1.35; }
@media (max-width: 900px) { .explorer .run-cost { order: 5; } }
@media (max-width: 560px) {
  .run-cost table, .run-cost tbody, .run-cost tr, .run-cost th, .run-cost td { display: block; width: auto; }
  .run-cost tr { padding: 0.3rem 0; border-top: 1px solid var(--border); }
  .run-cost tr:first-child { border-top: 0; }
  .run-cost th, .run-cost td { padding: 0; border: 0; background: none; }
}
.run-cost .price-field input { max-width: 14rem; width: 100%; box-sizing: border-box; }
.run-cost .cal-error { color: var(--bad, #b00020); }
.run-cost p { overflow-wrap: anywhere; }
";

/// The cost card.
#[component]
pub fn CostSummary(selection: Memo<Result<Option<Selected>, String>>) -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let typed = RwSignal::new(ex.url.get(run_cost::PRICE_KEY).unwrap_or_default());
    // The URL's price when it changes from elsewhere (Back, a saved link, "Search this scenario"
    // dropping it): the field and the cost follow it, not the value typed before.
    let from_url = Memo::new(move |_| ex.url.get(run_cost::PRICE_KEY).unwrap_or_default());
    Effect::new(move |_| {
        let u = from_url.get();
        if typed.get_untracked().trim() != u {
            typed.set(u);
        }
    });
    let price = Memo::new(move |_| typed.with(|t| run_cost::parse_price(t)));
    let cost = Memo::new(move |_| {
        let o = ex.outcome.get()?;
        let sel = selection.get().ok().flatten()?;
        let p = price.get().ok().flatten();
        Some(run_cost::of(&o.spec, &sel.report, p).map(|c| (c, sel.report.candidate)).map_err(|e| e.to_string()))
    });
    let placeholder =
        move || ex.outcome.with(|o| o.as_ref().map(|o| run_cost::placeholder(&o.spec))).unwrap_or_default();
    let commit = move |v: String| {
        typed.set(v.clone());
        if run_cost::parse_price(&v).is_ok() {
            ex.url.update(false, |q| {
                if v.trim().is_empty() { q.remove(run_cost::PRICE_KEY) } else { q.set(run_cost::PRICE_KEY, v.trim()) }
            });
        }
    };
    let body = move || match cost.get() {
        Some(Ok((c, cand))) => {
            let total = c.total.map(|t| t.to_string()).unwrap_or_default();
            let rows = run_cost::lines(&c)
                .into_iter()
                .map(|(l, v, basis)| {
                    view! {
                        <tr>
                            <th scope="row">{l}</th>
                            <td><span class="cost-value">{v}</span>" "<span class="cost-basis">{basis}</span></td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <p class="muted">
                    {format!("Configuration {} for the scenario's budget.", fmperf_core::search::code::format_candidate(&cand))}
                </p>
                <div class="cost-wrap" role="region" aria-label="Cost of the whole run">
                    <table class="cost-table" data-gpu-hours=c.gpu_hours.to_string() data-total=total>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            }
            .into_any()
        }
        Some(Err(e)) => view! { <p class="cal-error">{e}</p> }.into_any(),
        None => ().into_any(),
    };
    view! {
        <style>{CSS}</style>
        <section class="card run-cost" aria-labelledby="run-cost-title">
            <h2 id="run-cost-title">"What the whole run costs"</h2>
            <div class="field price-field">
                <label for="ex-price">"Price per device-hour"</label>
                <input
                    id="ex-price"
                    type="text"
                    inputmode="decimal"
                    aria-describedby="ex-price-help"
                    placeholder=placeholder
                    prop:value=move || typed.get()
                    on:input=move |ev| commit(event_target_value(&ev))
                />
                <p id="ex-price-help" class="muted small">
                    {move || match price.get() {
                        Err(e) => fmperf_app::words::field_message(&e),
                        Ok(Some(_)) => "Your price.".to_string(),
                        Ok(None) => "Empty: the part's example price (a public on-demand list price with its date; an example, not a quote).".to_string(),
                    }}
                </p>
            </div>
            {body}
        </section>
    }
}
