//! The shipped cache of held-out errors (`data/holdout-shipped.json`) equals a fresh computation
//! of both modes on the shipped runs. After a change of the model, the constants or the data, run
//! `FMPERF_BLESS=1 cargo test --profile host -p fmperf-core --test holdout_cache` to rewrite it.

use fmperf_core::mode_kind::ModeKind;
use fmperf_core::validate::compare::validate_headline_from;
use fmperf_core::validate::holdout::holdout;
use fmperf_core::validate::holdout_cache::{
    OneShotLine, shipped_holdout, shipped_moe_rows, shipped_one_shot, to_cache_json,
};
use fmperf_core::validate::moe_fit::shipped_moe_held_rows;
use fmperf_core::validate::shipped_runs;

#[test]
fn the_shipped_cache_equals_a_fresh_computation() {
    let file = shipped_runs();
    let (reference, extended) = (holdout(&file, ModeKind::Reference), holdout(&file, ModeKind::Extended));
    let moe = shipped_moe_held_rows();
    // The one-shot check per source (the validation view shows it beside the held-out error).
    let one_shot = validate_headline_from(&file, ModeKind::Extended, extended.clone()).one_shot.expect("extended mode");
    let one_shot = OneShotLine::of(&one_shot);
    let fresh = to_cache_json(&reference, &extended, &moe, &one_shot);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/holdout-shipped.json");
    if std::env::var_os("FMPERF_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == fresh,
        "data/holdout-shipped.json is stale (the model, its constants or the runs changed): rewrite it with \
         FMPERF_BLESS=1 cargo test --profile host -p fmperf-core --test holdout_cache"
    );
    // What the page reads back is what was computed, to the cache's six significant digits
    // (`CACHE_DIGITS`: half a unit in the sixth digit, 5e-6 of the figure).
    let close = |a: f64, b: f64| (a - b).abs() <= 5e-6 * b.abs();
    for (mode, h) in [(ModeKind::Reference, &reference), (ModeKind::Extended, &extended)] {
        let c = shipped_holdout(mode).expect("the cache parses");
        assert_eq!(c.rows.len(), h.rows.len());
        assert_eq!(c.per_source.len(), h.per_source.len());
        for (a, b) in c.rows.iter().zip(&h.rows) {
            assert_eq!((&a.id, &a.source, &a.hardware, a.moe), (&b.id, &b.source, &b.hardware, b.moe));
            assert!(close(a.error, b.error), "{}: {} vs {}", a.id, a.error, b.error);
        }
        let (x, y) = (c.leave_one_source_out.mape.unwrap(), h.leave_one_source_out.mape.unwrap());
        assert!(close(x, y), "{x} vs {y}");
    }
    let cached_one_shot = shipped_one_shot();
    assert!(cached_one_shot.len() >= 5 && cached_one_shot.len() == one_shot.len());
    for (a, b) in cached_one_shot.iter().zip(&one_shot) {
        assert_eq!((&a.source, a.one_shot.evaluated), (&b.source, b.one_shot.evaluated));
        let (x, y) = (a.one_shot.mape.unwrap_or(0.0), b.one_shot.mape.unwrap_or(0.0));
        assert!(close(x, y), "{}", a.source);
    }
    let cached_moe = shipped_moe_rows();
    assert!(cached_moe.len() >= 50 && cached_moe.len() == moe.len(), "{} MoE rows", cached_moe.len());
    for (a, b) in cached_moe.iter().zip(&moe) {
        assert_eq!((&a.id, &a.hardware, a.moe), (&b.id, &b.hardware, true));
        assert!(close(a.error, b.error), "{}: {} vs {}", a.id, a.error, b.error);
    }
}
