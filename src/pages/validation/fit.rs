//! The fit of extended mode's constants, redone in the browser on request, with its
//! leave-one-source-out error (each source predicted with constants fitted without it).

use fmperf_core::extended::efficiency::Efficiency;
use fmperf_core::validate::{FitJob, FitReport, shipped_runs, short_source};
use leptos::prelude::*;

use super::error_cell;
use crate::runner::{Sliced, TaskHandle, spawn_sliced};

/// One fit per step (a fit takes some tens of milliseconds).
struct Fits(FitJob);

impl Sliced for Fits {
    type Output = FitReport;
    fn step(&mut self, _units: usize) -> bool {
        self.0.step()
    }
    fn progress(&self) -> (u64, u64) {
        self.0.progress()
    }
    fn finish(self) -> FitReport {
        self.0.finish()
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

fn pair(e: Efficiency) -> String {
    format!("{:.3} / {:.3}", e.matmul, e.attention)
}

fn report_view(f: &FitReport) -> impl IntoView + use<> {
    let rows = f
        .per_source
        .iter()
        .map(|h| {
            let (median, class) = error_cell(h.stats.median_error);
            view! {
                <tr data-source=short_source(&h.source).to_string()>
                    <td title=h.source.clone()>{short_source(&h.source).to_string()}</td>
                    <td class="mono">{pair(h.efficiency)}</td>
                    <td class="num">{h.stats.evaluated.to_string()}</td>
                    <td class="num">{pct(h.stats.mape)}</td>
                    <td class=format!("num err {class}")>{median}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <p id="fit-result">
            {format!(
                "Refitted here: η / η_att = {} (shipped: {}). In-sample mean |error| {}; leave-one-source-out mean |error| {} (median {}).",
                pair(f.efficiency),
                pair(Efficiency::FITTED),
                pct(f.in_sample.mape),
                pct(f.leave_one_source_out.mape),
                pct(f.leave_one_source_out.median_abs_error)
            )}
        </p>
        <div class="table-wrap" tabindex="0">
            <table class="fit-table">
                <thead>
                    <tr>
                        <th>"source held out"</th>
                        <th>"η / η_att fitted without it"</th>
                        <th class="num">"runs"</th>
                        <th class="num">"mean |error|"</th>
                        <th class="num">"median error"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}

/// The constants, how they were fitted, and the leave-one-source-out check on request.
#[component]
pub fn FitCard() -> impl IntoView {
    let result = RwSignal::new(None::<FitReport>);
    let progress = RwSignal::new(None::<(u64, u64)>);
    let handle: StoredValue<Option<TaskHandle>, LocalStorage> = StoredValue::new_local(None);
    let run = move |_| {
        if let Some(h) = handle.get_value() {
            h.cancel();
        }
        result.set(None);
        progress.set(Some((0, 1)));
        let h = spawn_sliced(
            Fits(FitJob::new(&shipped_runs())),
            move |p| progress.set(Some(p)),
            move |r| {
                progress.set(None);
                result.set(Some(r));
            },
        );
        handle.set_value(Some(h));
    };
    on_cleanup(move || {
        if let Some(h) = handle.get_value() {
            h.cancel();
        }
    });
    let eff = Efficiency::FITTED;
    view! {
        <section class="card" id="validation-fit">
            <h2>"Fitted constants and the leave-one-source-out check"</h2>
            <p>
                {format!(
                    "Extended mode has four time constants fitted on this file, all global: η = {:.3}, the fraction of a part's measured matmul ceiling that the linear layers of a training step sustain; η_att = {:.3}, the fraction of the attention kernel's benchmark rate (the FlashAttention-3 paper's cuDNN or FlashAttention-2 curve by sequence length, measured on H100) that a training step sustains in flash attention; and the GEMM size c = {:.0} elements and attention sequence length c_att = {:.0} tokens at which small matmuls and short sequences reach half that rate. They were chosen to minimise the mean |error| over every evaluated run (a 0.05 grid, then coordinate descent to 0.001). The leave-one-source-out check fits them without one source and predicts that source, for each source in turn: how far the model can be trusted on runs it was not fitted to.",
                    eff.matmul, eff.attention, eff.gemm_half_dim, eff.attention_half_seq
                )}
            </p>
            <div class="row">
                <button type="button" class="primary" id="fit-run" on:click=run>
                    "Refit and check (leave one source out)"
                </button>
                {move || {
                    progress
                        .get()
                        .map(|(done, total)| {
                            let share = if total == 0 { 0.0 } else { done as f64 / total as f64 * 100.0 };
                            view! {
                                <span class="muted">{format!("fit {done} of {total}")}</span>
                                <div class="progress fit-progress">
                                    <div style=format!("width: {share:.0}%")></div>
                                </div>
                            }
                        })
                }}
            </div>
            {move || result.get().map(|f| report_view(&f))}
        </section>
    }
}
