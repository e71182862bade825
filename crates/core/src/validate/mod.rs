//! Validation against measured runs: a file in the schema of `data/measured-training-runs.json`
//! or `data/measured-memory-runs.json` (given as text; core reads no files) is parsed
//! ([`schema`]); each row's words are read by meaning ([`words`], [`metric`],
//! [`recompute_words`], [`sharding_words`], [`precision_words`], [`stack_words`], [`parallel_words`],
//! [`hardware_words`], [`kernel_words`]); each row is read at its exact
//! configuration ([`row`]), predicted in reference or extended mode and converted to the row's
//! own measurement ([`convention`]); its memory figure or outcome is compared with the prediction
//! of the same kind ([`memory`]); the errors `predicted / measured − 1` are summarised per source
//! and overall ([`compare`]). [`fit`] holds the fit of extended mode's global constants;
//! [`holdout`] predicts every row with constants fitted without its source (the headline), and
//! [`error_bands`] turns those errors into the error bar the explorer shows next to a time.
//!
//! The published files are compiled in ([`MEASURED_RUNS_JSON`], [`MEASURED_MEMORY_RUNS_JSON`],
//! copies of `shared/data/` with every row's source; `build.rs` drops the whitespace between tokens).

pub mod checkpoint_words;
pub mod compare;
pub mod convention;
pub mod cp_words;
pub mod device_count;
pub mod error_bands;
pub mod fabric_words;
pub mod fit;
pub mod fit_cache;
pub mod hardware_words;
pub mod holdout;
pub mod holdout_cache;
pub mod kernel_words;
pub mod keys;
pub mod layout_band;
pub mod layout_sweeps;
pub mod loss_words;
pub mod memory;
pub mod metric;
pub mod moe_fit;
pub mod moe_flops;
pub mod moe_host_words;
pub mod moe_row_fields;
mod moe_row_model;
pub mod moe_runs;
pub mod moe_words;
pub mod offload_words;
pub mod one_shot;
pub mod parallel_words;
pub mod plausible;
pub mod precision_words;
pub mod prepared;
pub mod ranking;
pub mod reason;
pub mod recompute_words;
pub mod row;
pub mod run_hardware;
pub mod schema;
pub mod sharding_words;
pub mod stack_words;
pub mod step_words;
pub mod words;

pub use compare::{
    Report, RowResult, Stats, Summary, csv, short_source, validate, validate_headline, validate_with, with_holdout,
};
pub use fit::{FitJob, FitReport, fit_efficiency, fit_report};
pub use schema::{MeasuredFile, MeasuredRun, parse_measured_runs};

/// The measured training runs fmperf ships (108 rows from eight sources; each row names its source).
pub const MEASURED_RUNS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/measured-training-runs.json"));

/// The measured peak-memory runs fmperf ships (109 rows from six sources, 7 out of memory).
pub const MEASURED_MEMORY_RUNS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/measured-memory-runs.json"));

/// The shipped measured runs, parsed.
pub fn shipped_runs() -> MeasuredFile {
    // The shipped file is checked by the tests; an error here would be a build defect.
    parse_measured_runs(MEASURED_RUNS_JSON).unwrap_or_default()
}

/// The shipped measured memory runs, parsed.
pub fn shipped_memory_runs() -> MeasuredFile {
    parse_measured_runs(MEASURED_MEMORY_RUNS_JSON).unwrap_or_default()
}

#[cfg(test)]
mod compiled_in_copies {
    use serde_json::Value;

    /// The build script's copies (build.rs) are the repository's files without whitespace and
    /// without the top-level members written for people that no code reads: parsed, each copy
    /// equals its source with those members removed, and nothing else is missing.
    #[test]
    fn compiled_in_copies_are_the_sources_less_their_unread_members() {
        let runs = ["fields", "caveats", "generated", "sources"].as_slice();
        for (name, source, copy, unread) in [
            (
                "measured-training-runs.json",
                include_str!("../../data/measured-training-runs.json"),
                crate::validate::MEASURED_RUNS_JSON,
                runs,
            ),
            (
                "measured-memory-runs.json",
                include_str!("../../data/measured-memory-runs.json"),
                crate::validate::MEASURED_MEMORY_RUNS_JSON,
                runs,
            ),
            (
                "measured-moe-runs.json",
                include_str!("../../data/measured-moe-runs.json"),
                crate::validate::moe_runs::MOE_RUNS_JSON,
                runs,
            ),
            (
                "hardware-catalog.json",
                include_str!("../../data/hardware-catalog.json"),
                crate::catalog::HARDWARE_JSON,
                ["generated_by", "units", "conventions", "sources", "systems", "emani_table1"].as_slice(),
            ),
            (
                "measured-layout-sweeps.json",
                include_str!("../../data/measured-layout-sweeps.json"),
                crate::validate::layout_sweeps::LAYOUT_SWEEPS_JSON,
                ["schema", "generated", "caveats"].as_slice(),
            ),
            (
                "system-modelling.json",
                include_str!("../../data/system-modelling.json"),
                crate::catalog::MODELLING_JSON,
                ["about"].as_slice(),
            ),
        ] {
            let mut expected: Value = serde_json::from_str(source).unwrap();
            let (before, after) = {
                let members = expected.as_object_mut().unwrap();
                let before = members.len();
                members.retain(|k, _| !unread.contains(&k.as_str()));
                assert!(["rows", "accelerators", "groups"].iter().any(|k| members.contains_key(*k)), "{name}");
                (before, members.len())
            };
            assert!(after < before, "{name}: a member was dropped");
            assert_eq!(serde_json::from_str::<Value>(copy).unwrap(), expected, "{name}");
            assert!(copy.len() < source.len(), "{name}: the copy is compact");
        }
    }
}
