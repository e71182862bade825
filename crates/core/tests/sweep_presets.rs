//! The presets load, and the strong-scaling preset reproduces every published cell of
//! paper-results.md §3.1–3.2 (days to the printed precision, the winning strategy, per-strategy
//! days at 4096 GPUs, the smallest feasible device counts). Comparisons against measurements of
//! other studies (`reproduce: false`) are evaluated but not asserted.

use fmperf_core::presets::{self, CompareKind};
use fmperf_core::sweep::Sweep;

#[test]
fn every_preset_loads_with_valid_panels() {
    let loaded = presets::load().expect("studies.json parses");
    let ids: Vec<&str> = loaded.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["strong-scaling", "hardware", "design-space", "accelerators", "moe"]);
    for p in &loaded {
        assert!(!p.panels.is_empty(), "{}", p.id);
        for panel in &p.panels {
            // The text form round-trips to the same spec (the CLI command shown in the page).
            let again = fmperf_core::sweep::SweepText::from_spec(&panel.spec).to_spec(None, None).unwrap();
            assert_eq!(again, panel.spec, "{}/{}", p.id, panel.id);
        }
    }
    assert!(presets::find_preset("nope").is_err());
}

#[test]
fn strong_scaling_reproduces_the_paper_tables() {
    let preset = presets::find_preset("strong-scaling").unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for panel in &preset.panels {
        let result = Sweep::new(panel.spec.clone()).unwrap().finish();
        assert_eq!(result.points.len(), 3 * 3 * 13);
        for c in &panel.comparisons {
            assert!(c.def.reproduce, "{}", c.def.label);
            let o = c.evaluate(&result);
            checked += 1;
            if !c.reproduced(&o) {
                failures.push(format!(
                    "{} {}: published {:?} ({:?}), fmperf {:?} ({:?}) {:?}",
                    panel.id, c.def.label, c.def.value, c.def.strategy, o.predicted, o.predicted_strategy, o.why_none
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 27 + 27 table cells, 9 per-strategy values, 9 1D values of §3.1, 9 + 3 smallest counts, 1D
    // never fitting, two near-minimum cells.
    assert_eq!(checked, 87);
}

#[test]
fn accelerator_comparisons_have_model_values_or_reasons() {
    let preset = presets::find_preset("accelerators").unwrap();
    for id in ["accumulation-a100", "sparsity"] {
        let panel = preset.panel(id).unwrap();
        let result = Sweep::new(panel.spec.clone()).unwrap().finish();
        let mut gains = Vec::new();
        for c in &panel.comparisons {
            let o = c.evaluate(&result);
            assert!(!c.def.reproduce);
            assert_eq!(c.def.kind, CompareKind::Ratio);
            let gain = o.predicted.unwrap_or_else(|| panic!("{}: {:?}", c.def.label, o.why_none));
            assert!(gain > 1.0, "{}: {gain}", c.def.label);
            gains.push(gain);
        }
        if id == "sparsity" {
            // Extended mode on a wafer-scale part: larger models gain more (weight matmuls grow as
            // h², attention as h), and never more than the FLOP bound 1/(1 − 0.9) = 10.
            assert_eq!(panel.spec.mode.as_str(), "extended");
            assert!(gains.windows(2).all(|w| w[0] < w[1]) && gains[3] < 10.0, "{gains:?}");
            // The same panel in reference mode: sparse points are unsupported, with the reason.
            let mut reference = panel.spec.clone();
            reference.mode = fmperf_core::mode::ModelMode::Reference;
            let r = Sweep::new(reference).unwrap().finish();
            let o = panel.comparisons[0].evaluate(&r);
            assert_eq!(o.predicted, None);
            assert!(o.why_none.as_deref().unwrap_or("").contains("sparsity"), "{:?}", o.why_none);
        }
    }
}

#[test]
fn paper_presets_run_in_reference_mode_and_say_so() {
    for id in ["strong-scaling", "hardware", "design-space"] {
        let preset = presets::find_preset(id).unwrap();
        assert!(preset.panels.iter().all(|p| p.spec.mode == fmperf_core::mode::ModelMode::Reference), "{id}");
        assert!(preset.notes.iter().any(|n| n.starts_with("Reference mode")), "{id}");
    }
}
