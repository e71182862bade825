//! "Your measured run" without the DOM: a typed figure fits the calibration on a configuration of
//! the scenario, the side-by-side numbers are the calibrated scenario's, the entries and the
//! calibration survive storage, the export reads back; the run cost's lines by hand.

use fmperf_app::calibration::{self, Entries, Saved, compare, fit, rows};
use fmperf_core::explore::ExploreSearch;
use fmperf_core::explore::calibrated::{ONE_SHOT_MAPE, UNCALIBRATED_MAPE};
use fmperf_core::mode::Mode;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};

fn spec() -> ExploreSpec {
    let f = ExploreFields {
        model: "llama3-8b".into(),
        system: "nvidia_h100_sxm5_80gb".into(),
        gpus: "64".into(),
        batch: "512".into(),
        top: "5".into(),
        ..ExploreFields::default_scenario()
    };
    f.resolve_in(&Mode::extended()).unwrap()
}

#[test]
fn a_typed_step_time_calibrates_and_both_numbers_show() {
    let s = spec();
    let best = ExploreSearch::new(s.clone()).unwrap().finish().merged[0];
    let t = best.time_per_iteration_s;
    let entries = Entries { log: String::new(), figure: "step_time_s".into(), value: format!("{}", 1.15 * t) };
    let typed = entries.typed().unwrap().unwrap();
    let cal = fit(&s, &best.candidate, best.execution, &calibration::figures(Vec::new(), Some(typed))).unwrap();
    assert!(cal.constants.compute_scale < 1.0);
    assert!(calibration::changes_line(&cal).starts_with("Changed: compute_scale 1 → 0.9"));
    let cmp = compare(&s, &cal, &best.candidate, Some(0.10)).unwrap();
    assert_eq!(cmp.uncalibrated.report.time_per_step_s, t);
    let cal_t = cmp.calibrated.report.time_per_step_s;
    assert!(cal_t > t && cal_t < 1.15 * t);
    // The calibrated number is the calibrated scenario's (what `fmperf search --calibration` prices).
    let direct = s.calibrated(&cal).unwrap().evaluate(&best.candidate).unwrap().totals().t;
    assert_eq!(cal_t, direct);
    // The measured configuration is covered: the band narrows from ±10 % by the ratio of the
    // one-shot error to the uncalibrated error (both measured by `fmperf validate`).
    assert!(cmp.coverage.covered);
    let narrowed = (10.0 * ONE_SHOT_MAPE / UNCALIBRATED_MAPE).round();
    assert!(narrowed < 10.0);
    let r = rows(&cmp, 8192);
    assert_eq!(r.len(), 6);
    assert!(r[0][1].ends_with("± 10 %") && r[0][2].ends_with(&format!("± {narrowed} %")), "{:?}", r[0]);
    assert_eq!(r[5], ["Fits".to_string(), "yes".into(), "yes".into()]);
    // Saved and read back: the entries as typed and the calibration.
    let text = Saved::text(&entries, Some(&cal));
    let (e, c, problem) = Saved::read(&text);
    assert_eq!((e, c.as_ref(), problem), (entries.clone(), Some(&cal), None));
    // A calibration this version cannot read keeps the entries.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["calibration"]["version"] = 9.into();
    let bad = doc.to_string();
    let (e, c, problem) = Saved::read(&bad);
    assert_eq!(e, entries);
    assert!(c.is_none() && problem.unwrap().contains("calibration.version"));
    // Exported and imported.
    assert_eq!(calibration::import(&calibration::export(&cal)).unwrap(), cal);
    assert_eq!(calibration::import("{}").unwrap_err().field(), Some(calibration::field::IMPORT));
}

#[test]
fn typed_figures_read_as_the_user_means_them() {
    let typed = |figure: &str, value: &str| {
        Entries { figure: figure.into(), value: value.into(), ..Entries::default() }.typed()
    };
    assert_eq!(typed("mfu", "42 %").unwrap().unwrap().value, 0.42);
    assert_eq!(typed("mfu", "42").unwrap().unwrap().value, 0.42);
    assert!(typed("mfu", "142").is_err());
    assert_eq!(typed("tokens_per_s_per_device", "5,900").unwrap().unwrap().value, 5900.0);
    assert_eq!(typed("tokens_per_s_per_device", "5.9k").unwrap().unwrap().value, 5900.0);
    assert_eq!(typed("step_time_s", "").unwrap(), None);
    assert_eq!(typed("step_time_s", "soon").unwrap_err().field(), Some(calibration::field::VALUE));
    assert_eq!(typed("step_time_s", "-3").unwrap_err().field(), Some(calibration::field::VALUE));
    // An unknown key reads as the first figure (a step time).
    assert_eq!(Entries { figure: "x".into(), ..Entries::default() }.choice().key, "step_time_s");
    let s = spec();
    let best = ExploreSearch::new(s.clone()).unwrap().finish().merged[0];
    assert_eq!(fit(&s, &best.candidate, best.execution, &[]).unwrap_err().field(), Some(calibration::field::VALUE));
}

#[test]
fn run_cost_lines_by_hand() {
    use fmperf_app::run_cost;
    let s = spec();
    let best = ExploreSearch::new(s.clone()).unwrap().finish().merged[0];
    let ctx = fmperf_core::explore::ReportContext::new(&s).unwrap();
    let report = fmperf_core::explore::ConfigReport::of_ranked(&ctx, &best);
    let c = run_cost::of(&s, &report, None).unwrap();
    // The model's budget (llama3-8b: its catalog tokens) over 8192-token samples at the best's rate.
    let samples = s.budget.samples(8192);
    let hours = samples / best.throughput_samples_per_s * 64.0 / 3600.0;
    assert!((c.gpu_hours / hours - 1.0).abs() < 1e-12);
    assert!((c.total.unwrap() / (hours * 12.29) - 1.0).abs() < 1e-12);
    let lines = run_cost::lines(&c);
    assert_eq!(
        lines.iter().map(|l| l.0).collect::<Vec<_>>(),
        ["Device-hours", "Energy, devices", "Energy, whole servers", "Money"]
    );
    assert!(lines[3].2.contains("example, not a quote"), "{}", lines[3].2);
    // The value is a figure and its unit, short enough for a phone; the basis says the rest.
    assert!(lines.iter().all(|l| l.1.chars().count() <= 16), "{lines:?}");
    assert_eq!(lines[3].1, format!("{} USD", fmperf_app::fmt::count(c.total.unwrap().round() as u64)));
    assert_eq!(run_cost::placeholder(&s), "12.29 (example)");
    let mine = run_cost::of(&s, &report, Some(2.0)).unwrap();
    assert!(run_cost::lines(&mine)[3].2.contains("at your 2 per device-hour"));
}
