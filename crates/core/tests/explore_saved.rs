//! The saved-scenario store: round trip, replacement by name, migration of the unversioned form,
//! and nothing unknown dropped.

use fmperf_core::explore::saved::{SavedStore, VERSION};
use serde_json::Value;

#[test]
fn round_trip_and_replace_by_name() {
    let mut s = SavedStore::parse(None);
    assert!(s.entries.is_empty() && s.unreadable.is_none());
    s.save("a", "?gpus=1024", "2025-01-01T00:00:00Z");
    s.save("b", "?gpus=2048", "");
    s.save("a", "?gpus=4096", "");
    assert_eq!(s.entries.len(), 2);
    assert_eq!(s.entries[0].name, "a");
    assert_eq!(s.entries[0].query, "?gpus=4096");
    let mut back = SavedStore::parse(Some(&s.to_json()));
    assert_eq!(back, s);
    assert!(back.remove("b"));
    assert!(!back.clone().remove("zzz"));
    let doc: Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(doc["format"], "fmperf.scenarios");
    assert_eq!(doc["version"], VERSION);
}

#[test]
fn unknown_versions_and_keys_are_kept() {
    let text = r#"{"format":"fmperf.scenarios","version":2,"theme":"dark","scenarios":[
        {"version":1,"name":"mine","query":"?model=gpt3"},
        {"version":2,"name":"future","payload":{"x":1}},
        "not even an object"]}"#;
    let s = SavedStore::parse(Some(text));
    assert_eq!(s.entries.len(), 1);
    assert_eq!(s.kept.len(), 2);
    let out: Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(out["version"], 2, "a newer document version is not downgraded");
    assert_eq!(out["theme"], "dark");
    let scenarios = out["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 3);
    assert!(scenarios.iter().any(|v| v["payload"]["x"] == 1));
}

#[test]
fn unversioned_entries_are_migrated() {
    let s = SavedStore::parse(Some(r#"[{"name":"old","query":"?gpus=8"}]"#));
    assert_eq!(s.entries.len(), 1);
    let out: Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(out["scenarios"][0]["version"], 1);
    assert_eq!(out["scenarios"][0]["name"], "old");
}

#[test]
fn unreadable_text_is_handed_back() {
    for text in ["{not json", "42", r#"{"other":"doc"}"#] {
        let s = SavedStore::parse(Some(text));
        assert_eq!(s.unreadable.as_deref(), Some(text));
        assert!(s.entries.is_empty());
    }
}
