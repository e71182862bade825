//! The explorer on inputs the reference cannot split (issue 14): NVL72-style domains and device
//! counts that are not powers of two give results in both modes, and a scenario without results
//! says why and what would work (the API the page shows).

use fmperf_core::explore::ExploreSearch;
use fmperf_core::mode::Mode;
use fmperf_core::resolve::explorer::{ExploreFields, ExploreSpec};
use fmperf_core::search::EmptyReason;

fn spec(model: &str, system: &str, domain: &str, gpus: &str, batch: &str, mode: &Mode) -> ExploreSpec {
    let f = ExploreFields {
        model: model.into(),
        system: system.into(),
        domain: domain.into(),
        gpus: gpus.into(),
        batch: batch.into(),
        ..ExploreFields::default_scenario()
    };
    f.resolve_in(mode).unwrap()
}

#[test]
fn nvl72_at_2304_devices_gives_results_in_both_modes() {
    // Reference mode: gpt3_1T cannot use all 2,304 = 2^8·3^2 devices with a 4,096 batch; the
    // results use 2,048 (64 of each 72-device domain) and the explorer says why.
    let s = ExploreSearch::new(spec("gpt3_1T", "ref-B200", "72", "2304", "4096", &Mode::Reference)).unwrap();
    let mut s = s;
    while !s.step(5000) {}
    let r = s.result();
    assert!(!r.merged.is_empty());
    assert!(r.merged.iter().all(|x| x.candidate.n_gpus() == 2048));
    assert!(s.widening_notes().iter().any(|n| n.contains("use 2048 (256 idle)")), "{:?}", s.widening_notes());
    let why = s.diagnose().unwrap();
    assert!(why.message.contains("3^2"), "{}", why.message);
    assert!(why.suggestions.iter().any(|x| x.devices == 2048 || x.global_batch % 9 == 0), "{:?}", why.suggestions);

    // Extended mode: Llama 3 70B uses every device (uneven pipeline stages take the factor 9).
    let s = spec("llama3-70b", "ref-B200", "72", "2304", "4096", &Mode::extended());
    let r = ExploreSearch::new(s).unwrap().finish();
    assert!(!r.merged.is_empty());
    assert!(r.merged.iter().all(|x| x.candidate.n_gpus() == 2304));
    assert!(r.merged.iter().all(|x| x.execution.is_some()), "the search chose the execution");
}

#[test]
fn an_empty_scenario_names_its_cause() {
    let mut s = ExploreSearch::new(spec("gpt3_1T", "ref-A100", "4", "8", "4096", &Mode::Reference)).unwrap();
    while !s.step(1000) {}
    assert!(s.result().merged.is_empty());
    let d = s.diagnose().unwrap();
    assert!(matches!(d.reason, EmptyReason::OutOfMemory { .. }), "{d:?}");
    assert!(d.message.contains("GB over"), "{}", d.message);
    assert!(!d.suggestions.is_empty() && d.suggestions[0].devices > 8, "{:?}", d.suggestions);
    // A scenario with results needs no diagnosis.
    let ok = ExploreSearch::new(spec("gpt3", "ref-H200", "8", "512", "4096", &Mode::Reference)).unwrap().finish();
    assert!(!ok.merged.is_empty());
}

#[test]
fn the_message_alone_is_the_diagnosis_message() {
    // What the first view shows (no search for suggestions) is the page's diagnosis message:
    // for results on fewer devices, for an empty scenario, and none for a scenario with results.
    let scenarios = [
        ("gpt3_1T", "ref-B200", "72", "2304", "4096"),
        ("gpt3_1T", "ref-A100", "4", "8", "4096"),
        ("gpt3", "ref-H200", "8", "512", "4096"),
    ];
    for (model, system, domain, gpus, batch) in scenarios {
        let mut s = ExploreSearch::new(spec(model, system, domain, gpus, batch, &Mode::Reference)).unwrap();
        while !s.step(5000) {}
        assert_eq!(s.diagnosis_message(), s.diagnose().map(|d| d.message), "{model} on {gpus} {system}");
    }
}
