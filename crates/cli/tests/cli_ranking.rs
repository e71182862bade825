//! `fmperf validate`'s ranking of layouts, run through the built binary: a layout-sweep file as
//! `--data FILE` and as `builtin-layouts`, the `ranking` object of `--format json` and the table's
//! ranking section. (Reference mode: it fits nothing, so these runs are quick; the figures of
//! extended mode are held by fmperf-core's `tests/validate_ranking.rs`.)

mod support;
use support::{fmperf, json};

use std::path::PathBuf;

fn sweeps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/data/measured-layout-sweeps.json")
}

#[test]
fn a_sweep_file_is_read_as_groups_and_ranked() {
    let path = sweeps();
    let v = json(&["validate", "--data", path.to_str().unwrap(), "--format", "json", "--mode", "reference"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 63);
    assert!(rows.iter().any(|r| r["id"] == "internlm_7b_1024gpu/tp1_zero1_8"));
    let r = &v["ranking"];
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 15);
    for g in groups {
        for key in ["group", "source", "ranked", "tau", "regret", "measured_best", "predicted_best", "ran_called_no"] {
            assert!(g.get(key).is_some(), "group {} lacks {key}", g["group"]);
        }
        let regret = g["regret"].as_f64().unwrap();
        assert!(regret >= 0.0, "regret is measured best over the pick's, minus one: {regret}");
        if let Some(t) = g["tau"].as_f64() {
            assert!((-1.0..=1.0).contains(&t));
        }
    }
    assert_eq!(r["per_source"].as_array().unwrap().len(), 4);
    assert_eq!(r["overall"]["groups"], 15);
    // The builtin name reads the same file.
    let b = json(&["validate", "--data", "builtin-layouts", "--format", "json", "--mode", "reference"]);
    assert_eq!(b["ranking"], v["ranking"]);
}

#[test]
fn the_table_has_a_ranking_section() {
    let out = fmperf(&["validate", "--data", "builtin-layouts", "--mode", "reference"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Ranking of layouts"), "{text}");
    assert!(text.contains("internlm_7b_1024gpu"));
    assert!(text.lines().any(|l| l.starts_with("all sources") && l.contains("/15")));
}
