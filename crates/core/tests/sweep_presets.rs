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
    assert_eq!(ids, ["strong-scaling", "hardware", "design-space", "accelerators", "long-sequence", "moe"]);
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
            reference.mode = fmperf_core::mode::Mode::Reference;
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
        assert!(preset.panels.iter().all(|p| p.spec.mode == fmperf_core::mode::Mode::Reference), "{id}");
        assert!(preset.notes.iter().any(|n| n.starts_with("Reference mode")), "{id}");
    }
}

/// The six systems of the accelerator study.
const SIX: [&str; 6] =
    ["nvidia_a100_sxm4_40gb", "amd_mi250x", "intel_gaudi2", "cerebras_cs2", "sambanova_sn30", "graphcore_bow_ipu"];

#[test]
fn accelerator_study_cells_have_values_or_named_reasons() {
    use fmperf_core::sweep::Status;
    let preset = presets::find_preset("accelerators").unwrap();
    // One sentence per system on what the model does not capture.
    for name in ["A100", "MI250", "Gaudi2", "CS-2", "SN30", "Bow"] {
        assert!(preset.notes.iter().any(|n| n.split(':').next().unwrap_or("").contains(name)), "no note on {name}");
    }
    let mut with_values: Vec<String> = Vec::new();
    for panel in &preset.panels {
        let result = Sweep::new(panel.spec.clone()).unwrap().finish();
        for p in &result.points {
            match p.status {
                Status::Ok => with_values.push(p.labels.system_id.clone()),
                Status::OutOfMemory | Status::NoConfiguration => {
                    assert!(p.reason.as_deref().is_some_and(|r| !r.is_empty()), "{}: {:?}", panel.id, p.labels)
                }
                _ => {
                    // An empty cell names the missing figure and how to supply it on the page.
                    let why = p.reason.as_deref().unwrap_or("");
                    assert!(why.contains(" = null (unknown)"), "{}: {why}", panel.id);
                    assert!(why.contains("on the page") && why.contains("axis"), "{}: {why}", panel.id);
                }
            }
        }
    }
    // Every system of the study has values somewhere (CS-2, SN30 and Bow with labelled stand-ins).
    for id in SIX {
        assert!(with_values.iter().any(|s| s == id), "{id} has no value in any panel");
    }
    // The stand-ins are labelled on the points that use them.
    let sn30 = preset.panel("sn30-genslm").unwrap();
    let r = Sweep::new(sn30.spec.clone()).unwrap().finish();
    assert!(r.points.iter().all(|p| p.status == Status::Ok), "the study: 13B fits one RDU from 1K to 64K");
    let notes = &r.points[0].inputs.as_ref().unwrap().notes;
    assert!(notes.iter().any(|n| n.contains("stands in")), "{notes:?}");
    // Bow Pod64: the study's 100 % scaling efficiency next to the model's.
    let bow = preset.panel("bow-scaling").unwrap();
    let r = Sweep::new(bow.spec.clone()).unwrap().finish();
    let o = bow.comparisons[0].evaluate(&r);
    let eff = o.predicted.unwrap_or_else(|| panic!("{:?}", o.why_none));
    assert!(eff > 0.8 && eff <= 1.05, "{eff}");
}

#[test]
fn long_sequence_preset_runs_in_both_modes() {
    use fmperf_core::mode::Mode;
    use fmperf_core::sweep::Status;
    let preset = presets::find_preset("long-sequence").unwrap();
    let models: Vec<String> = preset
        .panels
        .iter()
        .flat_map(|p| {
            let r = Sweep::new(p.spec.clone()).unwrap().finish();
            r.points.into_iter().map(|x| x.labels.model_id)
        })
        .collect();
    for id in ["genslm-1.5b", "vit_era5", "genslm-25m-10k", "genslm-250m-10k"] {
        assert!(models.iter().any(|m| m == id), "{id} not in the long-sequence preset");
    }
    for panel in &preset.panels {
        for mode in [Mode::Reference, Mode::Extended(Default::default())] {
            let mut spec = panel.spec.clone();
            spec.mode = mode;
            let r = Sweep::new(spec).unwrap().finish();
            assert!(
                r.points.iter().any(|p| p.status == Status::Ok),
                "{} in {}: no point has a value",
                panel.id,
                mode.as_str()
            );
            // GenSLM 1.5B at the study's 10,240 tokens has a value in both modes.
            if panel.id == "genslm-1.5b-10k" {
                assert!(
                    // (the first axis is the sequence length)
                    r.points.iter().any(|p| p.status == Status::Ok
                        && p.values[0] == fmperf_core::resolve::sweep_axis::AxisValue::Count(10240)),
                    "{}: 10,240 tokens",
                    mode.as_str()
                );
            }
        }
    }
}
