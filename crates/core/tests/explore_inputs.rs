//! The explorer's form validation: every field is checked on its own, errors name the form field,
//! and no text makes it panic.

use fmperf_core::Strategy;
use fmperf_core::catalog::TrainingBudget;
use fmperf_core::explore::choices::{model_choices, system_choices};
use fmperf_core::resolve::explorer::ExploreFields;
use fmperf_core::resolve::form::{parse_amount, parse_budget, parse_count, parse_strategies};

fn fields_with(f: impl FnOnce(&mut ExploreFields)) -> ExploreFields {
    let mut x = ExploreFields::default_scenario();
    f(&mut x);
    x
}

fn error_fields(x: &ExploreFields) -> Vec<String> {
    x.resolve().unwrap_err().iter().map(|e| e.field().unwrap_or("?").to_string()).collect()
}

#[test]
fn each_bad_field_is_reported_at_that_field() {
    let cases: Vec<(&str, Box<dyn Fn(&mut ExploreFields)>)> = vec![
        ("gpus", Box::new(|x| x.gpus = "0".into())),
        ("gpus", Box::new(|x| x.gpus = "abc".into())),
        ("gpus", Box::new(|x| x.gpus = "-4".into())),
        ("gpus", Box::new(|x| x.gpus = "".into())),
        ("gpus", Box::new(|x| x.gpus = "99999999999999999999999".into())),
        ("batch", Box::new(|x| x.batch = "12.5".into())),
        ("top", Box::new(|x| x.top = "0".into())),
        ("top", Box::new(|x| x.top = "1000".into())),
        ("domain", Box::new(|x| x.domain = "0".into())),
        ("domain", Box::new(|x| x.domain = "eight".into())),
        ("strategies", Box::new(|x| x.strategies = "".into())),
        ("strategies", Box::new(|x| x.strategies = "1d,3d".into())),
        ("model", Box::new(|x| x.model = "gpt4".into())),
        // (Every catalog model is usable now; a system without a published peak is not.)
        ("system", Box::new(|x| x.system = "cerebras_cs2".into())),
        ("system", Box::new(|x| x.system = "nope".into())),
        ("budget", Box::new(|x| x.budget = "lots".into())),
        ("budget", Box::new(|x| x.budget = "-1".into())),
    ];
    for (field, f) in cases {
        let x = fields_with(f);
        assert_eq!(error_fields(&x), vec![field.to_string()], "{x:?}");
    }
    // Several at once.
    let x = fields_with(|x| {
        x.gpus = "0".into();
        x.batch = "x".into();
        x.model = "?".into();
    });
    let mut got = error_fields(&x);
    got.sort();
    assert_eq!(got, vec!["batch", "gpus", "model"]);
}

#[test]
fn messages_say_the_rule() {
    let e = parse_count("gpus", "0", 1, 100).unwrap_err().to_string();
    assert!(e.contains("must be from 1 to 100"), "{e}");
    let e = parse_count("gpus", "4k", 1, 100).unwrap_err().to_string();
    assert!(e.contains("whole number"), "{e}");
    let x = fields_with(|x| x.system = "cerebras_cs2".into());
    let e = x.resolve().unwrap_err()[0].to_string();
    assert!(e.contains("cerebras_cs2") && e.contains("bf16"), "{e}");
}

#[test]
fn numbers_are_read_leniently_but_exactly() {
    assert_eq!(parse_count("g", " 4,096 ", 1, 1 << 20).unwrap(), 4096);
    assert_eq!(parse_count("g", "16_384", 1, 1 << 20).unwrap(), 16384);
    assert_eq!(parse_amount("b", "1e12").unwrap(), 1e12);
    assert_eq!(parse_amount("b", "350000*80").unwrap(), 28_000_000.0);
    assert_eq!(parse_amount("b", "350,000 × 80").unwrap(), 28_000_000.0);
    assert_eq!(parse_budget("28000000", "samples").unwrap(), TrainingBudget::Samples(28e6));
    assert_eq!(parse_budget("3e11", "").unwrap(), TrainingBudget::Tokens(3e11));
    assert!(parse_budget("1", "years").is_err());
    assert_eq!(parse_strategies(" 2d , 1d,2d ").unwrap(), vec![Strategy::Summa2D, Strategy::OneD]);
}

#[test]
fn defaults_and_overrides() {
    let spec = fields_with(|x| {
        x.model = "vit_era5".into();
        x.system = "B200".into();
        x.domain = "".into();
        x.strategies = "2d-seqp".into();
    })
    .resolve()
    .unwrap();
    assert_eq!(spec.system_id, "ref-B200");
    assert_eq!(spec.system.domain_size, 4, "empty domain: the system's own");
    assert_eq!(spec.budget, TrainingBudget::Samples(28_000_000.0), "ViT-ERA5: 350,000 samples × 80 epochs");
    assert_eq!(spec.strategies, vec![Strategy::ContextParallel2D]);
    let spec = fields_with(|x| {
        x.budget = "2e12".into();
        x.budget_unit = "tokens".into();
    })
    .resolve()
    .unwrap();
    assert_eq!(spec.budget, TrainingBudget::Tokens(2e12));
    assert!(!spec.budget_is_default);
    // A lossy model runs, with its caveats noted.
    let spec = fields_with(|x| x.model = "llama3-8b".into()).resolve().unwrap();
    assert!(spec.notes.iter().any(|n| n.contains("SwiGLU")), "{:?}", spec.notes);
}

#[test]
fn no_text_panics() {
    let samples = [
        "",
        " ",
        "0",
        "1",
        "-1",
        "1e400",
        "NaN",
        "inf",
        "∞",
        "4096",
        "18446744073709551616",
        "4,0,9,6",
        "1.5",
        "🙂",
        "\u{0}",
        "1d,2d,2d-seqp",
        "ref-H200",
        "gpt3_1T",
        "x*y",
        "*",
        "1e12*",
        "9".repeat(400).leak(),
    ];
    let mut n = 0;
    for a in samples {
        for b in samples {
            let x = ExploreFields {
                model: a.into(),
                system: b.into(),
                domain: a.into(),
                gpus: b.into(),
                batch: a.into(),
                strategies: b.into(),
                top: a.into(),
                budget: b.into(),
                budget_unit: a.into(),
            };
            let _ = x.resolve();
            n += 1;
        }
    }
    assert_eq!(n, samples.len() * samples.len());
}

#[test]
fn choices_put_the_reference_presets_first_and_mark_unusable_entries() {
    let models = model_choices();
    let ids: Vec<&str> = models.iter().take(3).map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["gpt3", "gpt3_1T", "vit_era5"]);
    assert!(models[..3].iter().all(|c| c.reference && c.unusable.is_none() && c.caveats.is_empty()));
    // Every model of the catalog has a known shape (the GenSLM entries were filled from their sources).
    assert!(models.iter().all(|c| c.unusable.is_none()), "{:?}", models.iter().find(|c| c.unusable.is_some()));
    let llama = models.iter().find(|c| c.id == "llama3-8b").unwrap();
    assert!(llama.unusable.is_none() && !llama.caveats.is_empty());
    let systems = system_choices();
    let ids: Vec<&str> = systems.iter().take(4).map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["ref-A100", "ref-H200", "ref-B200", "ref-B200-next"]);
    assert!(systems.len() > 20);
    // Every usable choice resolves.
    for m in models.iter().filter(|c| c.unusable.is_none()) {
        fields_with(|x| x.model = m.id.clone()).resolve().unwrap_or_else(|e| panic!("{}: {e:?}", m.id));
    }
    for s in systems.iter().filter(|c| c.unusable.is_none()) {
        fields_with(|x| {
            x.system = s.id.clone();
            x.domain = String::new();
        })
        .resolve()
        .unwrap_or_else(|e| panic!("{}: {e:?}", s.id));
    }
    for s in systems.iter().filter(|c| c.unusable.is_some()) {
        assert_eq!(error_fields(&fields_with(|x| x.system = s.id.clone())), vec!["system"]);
    }
}
