//! The compiled-in copies of the data files (crates/core/build.rs) leave out members that no code
//! reads (`UNREAD`); this test keeps it so.

/// No code reads a member the build script drops (build.rs `UNREAD`): a reader added later
/// fails here (its key indexed or looked up in core's sources) instead of finding nothing in
/// the compiled-in copy. (The files are read as JSON values, not by serde derives. `sources`,
/// `systems` and `schema` are names too common to scan for: build.rs names their files' readers.)
#[test]
fn no_code_reads_a_dropped_member() {
    let dropped = ["fields", "caveats", "generated", "generated_by", "units", "conventions", "emani_table1", "about"];
    let mut files = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))];
    let mut offenders = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for key in dropped {
            // `value["key"]` (an index after a name, `]` or `)`; not an array literal) or
            // `.get("key")`.
            let index = format!("[\"{key}\"]");
            let indexed = text.match_indices(&index).any(|(i, _)| {
                text[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ']' | ')'))
            });
            if indexed || text.contains(&format!(".get(\"{key}\")")) {
                offenders.push(format!("{}: {key}", path.display()));
            }
        }
    }
    assert!(offenders.is_empty(), "dropped members read: {offenders:?}");
}
