//! The memory model against the shipped measured memory runs (`data/measured-memory-runs.json`),
//! read by `fmperf validate`'s reader (every row, hardware named in words included): each row's
//! predicted figure of the kind it measured, the fit of the allocator fragmentation and its
//! leave-one-source-out check, the errors per source, and the "will it fit" verdicts.

use fmperf_core::extended::memory::FRAGMENTATION;
use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::compare::RowResult;
use fmperf_core::validate::memory::{ScoredMemory, fit_fragmentation};
use fmperf_core::validate::prepared::Prepared;
use fmperf_core::validate::{shipped_memory_runs, validate};
use fmperf_core::vocab::Fits;

fn report_rows() -> Vec<RowResult> {
    validate(&shipped_memory_runs(), ModeKind::Extended).rows
}

fn scored() -> Vec<ScoredMemory> {
    let file = shipped_memory_runs();
    file.rows.iter().filter_map(|r| Prepared::new(r).scored_memory()).collect()
}

#[test]
fn memory_errors_per_source_and_the_fragmentation_fit() {
    let rows = report_rows();
    let scored = scored();
    assert!(scored.len() >= 100, "{} rows scored", scored.len());
    let fit = fit_fragmentation(&scored);
    for r in rows.iter().filter(|r| r.memory.as_ref().is_some_and(|m| m.error.is_some())) {
        let m = r.memory.as_ref().unwrap();
        eprintln!(
            "{:60} {:>14} {:7.2} {:7.2} {:+.3} (held out {:+.3})",
            r.id,
            m.kind,
            m.predicted_gb.unwrap(),
            m.measured_gb.unwrap(),
            m.error.unwrap(),
            m.error_loso.unwrap()
        );
    }
    eprintln!("fragmentation fitted {} (shipped {FRAGMENTATION})", fit.value);
    eprintln!("in-sample MAPE {:?}, leave-one-source-out MAPE {:?}", fit.in_sample.mape, fit.leave_one_source_out.mape);
    for (s, v, st) in &fit.per_source {
        eprintln!(
            "held out {s:42.42} fragmentation {v:.2}: n {} MAPE {:?} mean {:?}",
            st.evaluated, st.mape, st.mean_error
        );
    }
    // The shipped constant is the fit's.
    assert!((fit.value - FRAGMENTATION).abs() < 1e-9, "refit gives {}", fit.value);
    // Issue 18 asks 8 % leave-one-source-out: 5.7 % held out (5.2 % in-sample) today.
    let loso = fit.leave_one_source_out.mape.unwrap();
    assert!(loso <= 0.08, "leave-one-source-out memory MAPE {loso}");
    assert!(fit.in_sample.mape.unwrap() <= 0.08, "in-sample memory MAPE {:?}", fit.in_sample.mape);
    // The report's headline is that same held-out figure.
    let report = validate(&shipped_memory_runs(), ModeKind::Extended);
    let headline = report.summary.memory.stats.mape.unwrap();
    assert!((headline - loso).abs() < 1e-9, "report {headline} vs fit {loso}");
    // Issue 18: no source's held-out mean error beyond ±15 % (torchtune −6.5 %, Megatron-Bridge
    // +6.4 % with FP8 primary weights, torchtitan −2.8 %, lightning-thunder −1.2 %).
    for s in &report.summary.memory.per_source {
        let mean = s.stats.mean_error.unwrap_or(0.0);
        assert!(mean.abs() <= 0.15, "{}: mean held-out memory error {mean}", s.source);
    }
}

#[test]
fn out_of_memory_runs_are_not_predicted_to_fit() {
    // Issues 18 and 32: no run that ran out of memory is called "yes"; runs that ran are not
    // called "no". BLOOM's 82-layer run with 128 heads (dp8 tp4 pp12 mbs2) ran out of memory but
    // is predicted at 66.5 GB of the A100's 85.9 GB (its 70-layer sibling ran at 59–60 GB,
    // predicted 57.6): a "yes" must hold at the under-prediction band (`shipped_under_band`: the
    // 95th percentile of the held-out under-predictions, raised to what each out-of-memory run
    // proves, 30 % for this one), so it is "tight" (may not fit). lightning-thunder's 20-layer
    // single-GPU run, once called "no", is "tight" since the loop's gradients are freed between
    // steps (none held at the loss).
    let rows = report_rows();
    // Capacities are the device totals the drivers report, in GB (an "80 GB" H100: 81,559 MiB).
    for r in &rows {
        let Some(m) = &r.memory else { continue };
        if r.hardware.as_deref() == Some("nvidia_h100_sxm5_80gb") && m.capacity_gb.is_some() {
            assert!((m.capacity_gb.unwrap() - 81_559.0 * 1_048_576.0 * 1e-9).abs() < 1e-3, "{}: {:?}", r.id, m);
        }
    }
    let (mut ooms, mut oom_yes, mut ran_no) = (0, Vec::new(), Vec::new());
    for r in &rows {
        let Some(m) = &r.memory else { continue };
        if m.oom == Some(true) {
            ooms += 1;
            if m.fits == Some(Fits::Yes) {
                oom_yes.push(r.id.clone());
            }
        } else if m.fits == Some(Fits::No) {
            ran_no.push(r.id.clone());
        }
    }
    assert!(ooms >= 7, "{ooms} out-of-memory rows read");
    assert!(oom_yes.is_empty(), "out-of-memory runs called yes: {oom_yes:?}");
    // The bands the verdicts use: the 80th percentile of |held-out error| for "no", the worst
    // held-out under-prediction for "yes".
    use fmperf_core::validate::memory::{shipped_band, shipped_under_band};
    assert!(shipped_band() < 0.10 && shipped_under_band() > 0.25, "{} {}", shipped_band(), shipped_under_band());
    assert!(ran_no.is_empty(), "runs that ran called no: {ran_no:?}");
}

#[test]
fn operator_level_checkpointing_by_hand() {
    // torchtitan's op-level SAC on one Llama 3 8B block (h 4096, 32 heads, 8 KV heads, f 14336),
    // one 8192-token sequence, BF16, no TP: kept = block input 2h + Q 2h + V 2·h/4 + attention
    // output 2h + its FP32 log-sum-exp 4·32 + MLP gate 2f + MLP down 2h per token.
    use fmperf_core::SystemParams;
    use fmperf_core::extended::block_operations::block_operations;
    use fmperf_core::extended::{ExtendedOptions, Hardware, Layout, Recompute, Workload};
    let w = Workload { vocab: None, ..Workload::LLAMA3_8B };
    let hw = Hardware::from_params(&SystemParams::h200().with_domain_size(8), true);
    let layout = Layout::placed(1, 1, 1, 8, 1, 8, 8);
    let opts = ExtendedOptions { recompute: Recompute::Op, ..ExtendedOptions::realistic() };
    let ops = block_operations(&w, &hw, &layout, &opts).unwrap();
    let kept: f64 = ops.iter().map(|o| o.kept.under(Recompute::Op)).sum();
    let (h, f, t) = (4096.0, 14336.0, 8192.0);
    let by_hand = t * (2.0 * h + 2.0 * h + 2.0 * h / 4.0 + 2.0 * h + 4.0 * 32.0 + 2.0 * f + 2.0 * h);
    assert!((kept - by_hand).abs() < 1e-6 * by_hand, "{kept} vs {by_hand}");
    // Recomputed: K (h·h/4), output (h·h) and MLP up (h·f) projections, 2·t·(…) FLOPs.
    let again: f64 = ops.iter().map(|o| o.fwd.tflop * o.recomputed(Recompute::Op)).sum();
    let mm = 2.0 * t * (h * h / 4.0 + h * h + h * f) * 1e-12;
    assert!((again - mm).abs() < 1e-9 * mm + 1e-12, "{again} vs {mm} TFLOP");
}
