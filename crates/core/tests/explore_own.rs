//! "Try your own configuration": typed degrees are evaluated with the best placement, invalid ones
//! name the broken rule at the form's field, and over-memory ones say by how much.

use fmperf_core::Strategy;
use fmperf_core::explore::own::{OwnFields, field};
use fmperf_core::explore::{ExploreSearch, OwnConfig, evaluate_own};
use fmperf_core::resolve::explorer::ExploreFields;

fn spec_with(f: impl FnOnce(&mut ExploreFields)) -> fmperf_core::resolve::explorer::ExploreSpec {
    let mut x = ExploreFields::default_scenario();
    f(&mut x);
    x.resolve().unwrap()
}

fn own(strategy: Strategy, tp1: u64, tp2: u64, pp: u64, mbs: u64) -> OwnConfig {
    OwnConfig { strategy, tp1, tp2, pp, mbs, nb: None, placement: None }
}

#[test]
fn the_best_of_each_strategy_is_found_again_from_its_degrees() {
    let spec = spec_with(|_| {});
    let result = ExploreSearch::new(spec.clone()).unwrap().finish();
    for o in &result.outcomes {
        let best = &o.top[0];
        let c = best.candidate;
        let typed = own(c.strategy, c.tp1, c.tp2, c.pp, c.mbs);
        let got = evaluate_own(&spec, &typed).unwrap();
        assert_eq!(got.evaluation.throughput_samples_per_s(), best.throughput_samples_per_s, "{}", o.strategy);
        assert!(got.placement_chosen);
        assert!(got.options_compared >= 1);
        // Typed in full, the same configuration evaluates to the same numbers.
        let full = OwnConfig { nb: Some(c.nb), placement: Some([c.nv_tp1, c.nv_tp2, c.nv_dp, c.nv_pp]), ..typed };
        let got = evaluate_own(&spec, &full).unwrap();
        assert_eq!(got.candidate, c);
        assert_eq!(got.evaluation.throughput_samples_per_s(), best.throughput_samples_per_s);
        assert_eq!(got.options_compared, 1);
    }
}

#[test]
fn over_memory_is_measured() {
    // The reference notebook's fixed configuration: tp 4, pp 8, dp 64 on 2048 H200 (NVLink 4).
    let spec = spec_with(|x| {
        x.gpus = "2048".into();
        x.domain = "4".into();
    });
    let got = evaluate_own(&spec, &own(Strategy::OneD, 4, 1, 8, 1)).unwrap();
    assert_eq!(got.candidate.dp, 64);
    assert!(got.evaluation.mem_gb() > spec.system.hbm_capacity);
    assert!((got.over_memory_gb(141.0) - 78.02283264).abs() < 1e-6, "{}", got.over_memory_gb(141.0));
    assert_eq!(got.evaluation.totals().t, 41.544276438350856);
}

#[test]
fn invalid_configurations_name_the_rule() {
    let spec = spec_with(|_| {});
    let case = |c: OwnConfig| {
        let e = evaluate_own(&spec, &c).unwrap_err();
        (e.field().unwrap_or("?").to_string(), e.to_string())
    };
    let (f, msg) = case(own(Strategy::OneD, 8, 1, 3, 1));
    assert_eq!(f, field::PP);
    assert!(msg.contains("must divide the 4096 devices"), "{msg}");
    let (f, msg) = case(own(Strategy::OneD, 8, 1, 1, 3));
    assert_eq!(f, field::MBS, "{msg}");
    let (f, msg) = case(own(Strategy::OneD, 256, 1, 16, 1));
    assert_eq!(f, field::TP, "{msg}");
    assert!(msg.contains("heads") || msg.contains("sequence") || msg.contains("width"), "{msg}");
    let (f, _) = case(own(Strategy::OneD, 8192, 1, 1, 1));
    assert_eq!(f, field::TP);
    let (f, msg) = case(OwnConfig { placement: Some([2, 1, 2, 1]), ..own(Strategy::OneD, 8, 1, 16, 1) });
    assert_eq!(f, field::NV, "{msg}");
    // 128 blocks cannot be split into 256 equal stages.
    let (f, msg) = case(own(Strategy::OneD, 1, 1, 256, 1));
    assert_eq!(f, field::PP);
    assert!(msg.contains("depth"), "{msg}");
}

#[test]
fn the_form_parses_and_reports_every_field() {
    let ok = OwnFields {
        strategy: "1d".into(),
        tp: "8".into(),
        tp2: "".into(),
        pp: "16".into(),
        mbs: "1".into(),
        nb: "".into(),
        nv: "".into(),
    };
    assert_eq!(ok.parse().unwrap(), own(Strategy::OneD, 8, 1, 16, 1));
    let nv = OwnFields { nv: "8x1x1".into(), ..ok.clone() }.parse().unwrap();
    assert_eq!(nv.placement, Some([8, 1, 1, 1]));
    let bad = OwnFields { tp: "x".into(), pp: "0".into(), mbs: "".into(), nv: "8x".into(), ..ok.clone() };
    let mut fields: Vec<String> = bad.parse().unwrap_err().iter().map(|e| e.field().unwrap().to_string()).collect();
    fields.sort();
    assert_eq!(fields, vec![field::MBS, field::NV, field::PP, field::TP]);
    let bad = OwnFields { strategy: "3d".into(), ..ok.clone() };
    assert_eq!(bad.parse().unwrap_err()[0].field(), Some(field::STRATEGY));
    let bad = OwnFields { tp2: "2".into(), ..ok };
    assert_eq!(bad.parse().unwrap_err()[0].field(), Some(field::TP2));
}

#[test]
fn summa_panels_are_chosen_when_not_given() {
    let spec = spec_with(|_| {});
    let got = evaluate_own(&spec, &own(Strategy::Summa2D, 8, 1, 128, 1)).unwrap();
    assert!(got.nb_chosen);
    // The 2D best of the default scenario has 16 panels.
    assert_eq!(got.candidate.nb, 16);
}

#[test]
fn arbitrary_numbers_never_panic() {
    let spec = spec_with(|x| x.gpus = "64".into());
    let values = [1u64, 2, 3, 4, 5, 8, 16, 64, 128, 1 << 20, u64::MAX / 2, u64::MAX];
    for s in Strategy::ALL {
        for &a in &values {
            for &b in &values[..6] {
                for &p in &values {
                    for &m in &values[..5] {
                        let _ = evaluate_own(&spec, &own(s, a, b, p, m));
                        let _ = evaluate_own(
                            &spec,
                            &OwnConfig { nb: Some(a), placement: Some([b, 1, m, p]), ..own(s, a, b, p, m) },
                        );
                    }
                }
            }
        }
    }
}
