//! The browser store of custom models and systems: nothing dropped, versions, migration, id rules,
//! imports of every supported file kind.

use fmperf_core::catalog;
use fmperf_core::format::custom_store::{CustomStore, EntryKind, FORMAT, VERSION};
use fmperf_core::format::{
    Document, DocumentFormat, model_to_reference_json, parse, system_to_reference_json, to_json,
};
use fmperf_core::{ModelShape, SystemParams};
use serde_json::{Value, json};

fn my_model(id: &str) -> Document {
    let mut m = catalog::find_model("gpt3").unwrap().clone();
    m.id = id.to_string();
    Document::Model(m)
}

fn stored(models: Value, systems: Value) -> String {
    json!({"format": FORMAT, "schema_version": VERSION, "models": models, "systems": systems}).to_string()
}

#[test]
fn empty_and_round_trip() {
    assert_eq!(CustomStore::parse(None), CustomStore::default());
    assert_eq!(CustomStore::parse(Some("  ")), CustomStore::default());
    let mut s = CustomStore::default();
    let (kind, i) = s.add(my_model("mine")).unwrap();
    assert_eq!((kind, i), (EntryKind::Model, 0));
    let again = CustomStore::parse(Some(&s.to_text()));
    assert_eq!(again.models.len(), 1);
    assert_eq!(again.models[0].parsed.as_ref().unwrap(), &my_model("mine"));
    assert_eq!(again, s);
}

#[test]
fn broken_entries_are_kept_with_their_problems() {
    let bad = json!({"schema_version": 1, "kind": "model", "id": "broken", "seq_len": 0, "hidden": 8, "heads": 16, "layers": 2});
    let good: Value = serde_json::from_str(&to_json(&my_model("fine"))).unwrap();
    let text = stored(json!([bad, good, 42]), json!([{"nonsense": true}]));
    let s = CustomStore::parse(Some(&text));
    assert_eq!(s.models.len(), 3);
    let problems: Vec<String> = s.models[0].problems().iter().map(|e| e.to_string()).collect();
    assert!(problems.iter().any(|p| p.starts_with("seq_len = 0")), "{problems:?}");
    assert_eq!(s.models[0].id(), "broken");
    assert!(s.models[1].parsed.is_ok());
    assert!(!s.models[2].problems().is_empty());
    assert!(!s.systems[0].problems().is_empty());
    // Written back verbatim.
    let back: Value = serde_json::from_str(&s.to_text()).unwrap();
    assert_eq!(back["models"][0], bad);
    assert_eq!(back["models"][2], json!(42));
    assert_eq!(back["systems"][0], json!({"nonsense": true}));
}

#[test]
fn only_usable_entries_resolve_scenarios() {
    let bad = json!({"schema_version": 1, "kind": "model", "id": "broken", "seq_len": 0, "hidden": 8, "heads": 16, "layers": 2});
    let good: Value = serde_json::from_str(&to_json(&my_model("fine"))).unwrap();
    let s = CustomStore::parse(Some(&stored(json!([bad, good]), json!([{"nonsense": true}]))));
    let entries = s.user_entries();
    assert_eq!(entries.models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["fine"]);
    assert!(entries.systems.is_empty());
    assert_eq!(CustomStore::default().user_entries(), Default::default());
}

#[test]
fn ids_must_stay_unique() {
    let a: Value = serde_json::from_str(&to_json(&my_model("twin"))).unwrap();
    let builtin: Value = serde_json::from_str(&to_json(&my_model("GPT3"))).unwrap();
    let s = CustomStore::parse(Some(&stored(json!([a.clone(), a, builtin]), json!([]))));
    assert!(s.models[0].parsed.is_ok());
    let dup = s.models[1].problems()[0].to_string();
    assert!(dup.contains("already used by another of your models"), "{dup}");
    let b = s.models[2].problems()[0].to_string();
    assert!(b.contains("already used by a built-in model"), "{b}");

    let mut s = CustomStore::default();
    assert!(s.add(my_model("gpt3_1T")).is_err());
    assert_eq!(s.free_id(EntryKind::Model, "gpt3_1T"), "gpt3_1T-2");
    assert_eq!(s.free_id(EntryKind::Model, "my model!"), "my-model-");
    assert_eq!(s.free_id(EntryKind::System, ""), "my-system");
    s.add(my_model("x")).unwrap();
    s.add(my_model("y")).unwrap();
    assert!(s.replace(EntryKind::Model, 1, my_model("x")).is_err(), "id of another entry");
    s.replace(EntryKind::Model, 1, my_model("y2")).unwrap();
    s.replace(EntryKind::Model, 0, my_model("x")).unwrap();
    assert!(s.replace(EntryKind::System, 0, my_model("z")).is_err(), "wrong list");
    s.remove(EntryKind::Model, 0);
    assert_eq!(s.models.iter().map(|e| e.id()).collect::<Vec<_>>(), ["y2"]);
}

#[test]
fn versions_migration_and_unreadable_text() {
    let garbage = "{not json";
    let s = CustomStore::parse(Some(garbage));
    assert_eq!(s.unreadable.as_deref(), Some(garbage));

    let other_shape = "{\"hello\": 1}";
    assert_eq!(CustomStore::parse(Some(other_shape)).unreadable.as_deref(), Some(other_shape));

    let newer = json!({"format": FORMAT, "schema_version": 7, "models": [], "systems": [], "future": [1]});
    let s = CustomStore::parse(Some(&newer.to_string()));
    assert_eq!(s.newer_version, Some(7));
    assert!(!s.writable());
    let back: Value = serde_json::from_str(&s.to_text()).unwrap();
    assert_eq!(back["schema_version"], json!(7));
    assert_eq!(back["future"], json!([1]));

    let system: Value = serde_json::from_str(&to_json(&Document::System(
        catalog::find_system("nvidia_h100_sxm5_80gb").unwrap().clone(),
    )))
    .unwrap();
    let mut sys = system.clone();
    sys["id"] = json!("my-h100");
    let legacy = json!([serde_json::from_str::<Value>(&to_json(&my_model("old"))).unwrap(), sys]);
    let s = CustomStore::parse(Some(&legacy.to_string()));
    assert_eq!(s.migrated_from, Some(0));
    assert_eq!((s.models.len(), s.systems.len()), (1, 1));
    assert!(s.systems[0].parsed.is_ok());
    let back: Value = serde_json::from_str(&s.to_text()).unwrap();
    assert_eq!(back["schema_version"], json!(1));
    assert_eq!(back["format"], json!(FORMAT));
}

#[test]
fn imports_of_every_file_kind() {
    let mut s = CustomStore::default();
    // The reference's model JSON: id from the file name.
    let out = s.import("my-shape.json", &model_to_reference_json(&ModelShape::GPT3_1T));
    assert!(out.errors.is_empty(), "{out:?}");
    assert_eq!(out.origin, Some(DocumentFormat::ReferenceModel));
    assert_eq!(out.added, [(EntryKind::Model, "my-shape".to_string())]);
    // The reference's system JSON.
    let out = s.import("dir/config-H200.json", &system_to_reference_json(&SystemParams::h200()));
    assert_eq!(out.added, [(EntryKind::System, "config-H200".to_string())], "{out:?}");
    let Ok(Document::System(sys)) = &s.systems[0].parsed else { panic!() };
    assert_eq!(sys.preset.as_ref(), Some(&SystemParams::h200()));
    // A versioned document with a built-in id is renamed.
    let out = s.import("gpt3.json", &to_json(&my_model("gpt3")));
    assert_eq!(out.renamed, [("gpt3".to_string(), "gpt3-2".to_string())]);
    // A bad file: every problem with its path, nothing added.
    let bad =
        json!({"schema_version": 1, "kind": "model", "id": "b", "seq_len": -1, "hidden": "x", "heads": 4, "layers": 0});
    let out = s.import("bad.json", &bad.to_string());
    assert!(out.added.is_empty());
    let fields: Vec<&str> = out.errors.iter().filter_map(|e| e.field()).collect();
    assert_eq!(fields, ["seq_len", "hidden", "layers"], "{out:?}");
    // Not JSON, a scenario.
    assert!(!s.import("x.json", "nope").errors.is_empty());
    let scenario = json!({"schema_version": 1, "kind": "scenario", "model": "gpt3", "system": "H200", "devices": 8, "global_batch": 8});
    let out = s.import("sc.json", &scenario.to_string());
    assert!(out.errors[0].to_string().contains("open scenarios in the explorer"), "{out:?}");
    // A whole exported store re-imports next to itself (renamed).
    let before = s.models.len() + s.systems.len();
    let export = s.to_text();
    let out = s.import("fmperf-custom.json", &export);
    assert!(out.errors.is_empty(), "{out:?}");
    assert_eq!(out.added.len(), before);
    assert_eq!(s.models.len() + s.systems.len(), 2 * before);
    // Everything in the store parses again.
    let again = CustomStore::parse(Some(&s.to_text()));
    assert!(again.models.iter().chain(&again.systems).all(|e| e.parsed.is_ok()));
    assert!(parse(&again.models[0].raw_text()).is_ok());
}
