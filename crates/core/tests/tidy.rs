//! Layers enforced: reads the sources of fmperf-core and fails when
//!
//! 1. `reference/` (the published model, bit-exact) uses anything but itself, the shared value
//!    types (`error`, `model`, `strategy`, `system`) and the shared vocabulary (`vocab`): in
//!    particular extended mode, searches, the explorer or sweeps;
//! 2. `catalog` and `format` depend on each other, directly or through other modules (a cycle);
//! 3. core code touches the outside world: `std::fs`, `std::env`, `std::net`, `std::process`,
//!    `std::thread`, the clock (`std::time`, `Instant`, `SystemTime`) or stdout/stderr
//!    (`print!`, `println!`, `eprint!`, `eprintln!`, `dbg!`);
//! 4. `crates/core/Cargo.toml` depends on a web, async or threading crate;
//! 5. a module other than `catalog/` and the resolver (`resolve/`) looks a catalog id up itself
//!    (`catalog::find_system`, `catalog::find_model`) instead of through the resolver, which takes
//!    the catalogs as a value (built-in plus the user's entries), or a module other than those and
//!    `extended/` (which defines extended mode's part) maps a system itself (`to_system_params`,
//!    `map_for_extended`, `Hardware::from_catalog`). Unit tests (`#[cfg(test)]` items) may.
//! 6. any two top-level modules of core depend on each other, directly or through others (a
//!    cycle; `no_module_cycles`): the modules form layers, shared vocabulary (`vocab`) at the
//!    bottom, `ARCHITECTURE.md` draws them. Only the uses of [`KNOWN_MODULE_CYCLES`] (none) are left out.
//! 7. code outside the pricer's files ([`PRICER_FILES`]: the mode types and the cost-model trait)
//!    branches on the mode (`mode_branches_live_in_the_pricer`): a `ModeKind::Reference`,
//!    `ModeKind::Extended`, `Mode::Reference` or `Mode::Extended` (a pattern, a comparison
//!    or a value chosen by mode), an `.is_extended(…)` or `.is_moe(…)` method call, an
//!    `extended: bool`, or a branch on a workload's MoE-ness (`x.moe.is_some()`, `is_none`,
//!    `is_some_and`, `is_none_or`, `match x.moe {`, `if let Some(m) = &x.moe {`; extended mode's
//!    cost model, [`MOE_PRICER_HOMES`], prices experts and may), outside `#[cfg(test)]` items,
//!    beyond what [`MODE_BRANCHES_LEFT`] still allows a file (that list only shrinks). Past core
//!    (`mode_variants_have_one_home_per_crate`), a file of the app, the charts, the CLI, the launch
//!    readers, the first view or the page names a mode's variant (or calls `.is_extended(…)`, or
//!    takes an `extended: bool`; MoE-ness is free there) only in its crate's one home of
//!    [`MODE_HOMES_OUTSIDE_CORE`], within its count: the rest ask the mode for words and predicates.
//!    A branch in disguise counts too (`options_presence_lives_with_the_mode`): a call of
//!    `Mode::options()` (`.options()`), which answers `Option` (the switches, none in reference
//!    mode), so that every use decides by the mode (`.is_some()`, `.is_none()`, `if let Some(o) =
//!    m.options()`, `match m.options()`, `let … else`, `?`, `.map_or(…)`), anywhere in the workspace
//!    outside `#[cfg(test)]` items and [`OPTIONS_HOMES`] (the mode's files and the resolver's
//!    `resolve/mode_inputs.rs`, which answers by name: `check_switches`, `switch_precision`,
//!    `switch_choices`, …; the resolvers' split is the mode's own `Mode::per_mode`), beyond what
//!    [`OPTIONS_TESTS_LEFT`] still allows a file.
//! 8. a list of notes is a list of strings (`notes_are_typed`): a field, parameter or binding
//!    whose name speaks of notes ([`NOTE_WORDS`]: notes, caveats, assumptions, warnings,
//!    approximations, …) typed `Vec<String>`, `&mut Vec<String>` or `&[String]`, or a function so
//!    named returning `Vec<String>`, anywhere in the workspace ([`WORKSPACE_SOURCES`]: core, the
//!    app, the charts, the CLI, the launch readers, the first view or the page, `src/`), outside
//!    `#[cfg(test)]` items: every note is the one
//!    `fmperf_core::vocab::Note`, with its kind and fields.
//! 9. core's `Result<_, String>` (`string_errors_only_shrink`): errors are typed (`Error` with its
//!    field path, or an enum of their own); [`STRING_RESULTS_LEFT`] is how many `Result<…, String>`
//!    core still writes outside `#[cfg(test)]` items, and the count must equal it (more fails;
//!    fewer fails until the allowance is lowered).
//! 10. extended mode's files are not stages (`extended_is_a_pipeline`): a file of `extended/`
//!    imports a file of a later stage of [`EXTENDED_STAGES`] (inputs → pricing → operations →
//!    totals → evaluation), the files form a cycle, or a file is in no stage. Unit tests
//!    (`#[cfg(test)]` items) may import anything; [`KNOWN_EXTENDED_EDGES`] lists the imports still
//!    left out (it only shrinks).
//! 11. an error is placed at a field by comparing its text (`errors_are_placed_by_path`):
//!    `e.field() == Some(…)` (or `!=`), a `match`/`matches!` on `e.field()` or `e.path()` that
//!    compares the text (`Some("x")`, `f == …`, `f.as_str() == …`), a guard on an error pattern's
//!    `field`, anywhere in the workspace's sources and tests; callers use `Error::is_at` or the
//!    error's `FieldPath` (`is_in`, `below`, `group`). None is left (issue 33 ended the allowance).
//! 12. a public type name (`pub struct`, `pub enum`, `pub type`, `pub trait`) is declared in
//!    more than one file of the workspace's crates and the page (`public_type_names_are_unique`):
//!    one concept is one type, reused; two concepts get names that say what each holds. The names
//!    of [`DUPLICATE_TYPE_NAMES_LEFT`] are still declared twice (the list only shrinks: a name no
//!    longer duplicated fails until it is struck off).
//! 13. a module of core re-exports what another top-level module declares (`reexports_stay_home`):
//!    `pub use crate::other::Name;`, a name of a `pub use crate::{…}` group, or `pub use name::…`
//!    through a name a private `use crate::other::…` brought in, outside the crate
//!    root (whose re-exports are its table of contents). A type has one home and its users import
//!    it from there. None is left: issue 33 struck the last 17 old paths (the format's schema and
//!    hint, validation's and extended mode's vocabulary, the experts' shape, the mode's kind, the
//!    configuration code and the priced detail), their importers now naming the home.
//! 14. past core, a file branches on a workload's MoE-ness (`moe_branches_past_core_only_shrink`):
//!    rule 7's MoE forms (`.is_moe(…)`, `x.moe.is_some()`, `match x.moe {`, …) or an expert count
//!    compared with a number (`experts > 1`), in the app, the charts, the CLI, the first view or
//!    the page, outside `#[cfg(test)]` items and the launch readers ([`MOE_READERS`]), beyond what
//!    [`MOE_BRANCHES_PAST_CORE_LEFT`] still allows a file (the list only shrinks). Such code asks
//!    the mode (`ModeKind::prices_experts`) or the model by name.
//!
//! The checker reads Rust as tokens with comments, strings and character literals removed, so
//! prose that names a module is not an import, and `use` groups (`use std::{fs, io}`,
//! `use crate::{format::hint, Error}`) and `super::` paths that leave a top-level module count.
//! The tests at the bottom run it on fixture strings, one per rule, to show each rule can fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Words that make a name a note list's (rule 8), matched inside the lower-cased name.
const NOTE_WORDS: &[&str] = &["note", "caveat", "assumption", "warning", "approximation", "remark"];

/// Rule 9: `Result<…, String>` left in core outside unit tests (only shrinks; 0 is the goal).
const STRING_RESULTS_LEFT: usize = 0;

/// Top-level modules `reference/` may use.
const REFERENCE_MAY_USE: &[&str] = &["reference", "error", "model", "strategy", "strict_json", "system", "vocab"];
/// `std` modules core must not use, with why.
const FORBIDDEN_STD: &[(&str, &str)] = &[
    ("fs", "files"),
    ("env", "the environment"),
    ("net", "the network"),
    ("process", "processes"),
    ("thread", "threads"),
    ("time", "the clock"),
];
/// Names core must not use anywhere (clocks from any crate, printing).
const FORBIDDEN_NAMES: &[(&str, &str)] = &[
    ("Instant", "the clock"),
    ("SystemTime", "the clock"),
    ("print!", "stdout"),
    ("println!", "stdout"),
    ("eprint!", "stderr"),
    ("eprintln!", "stderr"),
    ("dbg!", "stderr"),
];
/// Uses that close a cycle between modules, left out by rules 2 and 6, each with the way out; the
/// list only shrinks, and it is empty: issue 33 broke the last three. `catalog/mod.rs → format`
/// (the catalog parsed its built-ins with format's validators while format reads documents into
/// the catalog's types and looks scenario ids up through the resolver) went when the format's
/// schema (field tables, validator, writer) moved below both, to `crate::schema`, and the model
/// and system documents' readers into `catalog/`; `calibrate/{fit,mod}.rs → validate` (memory and
/// metric kinds) went when `MemoryKind`, `PredictedMemory` and `MetricKind` moved to `crate::vocab`.
const KNOWN_MODULE_CYCLES: &[(&str, &str)] = &[];
/// Rule 2's own list: the file-level uses of a catalog ↔ format cycle still tolerated, each checked
/// to exist and to still close the cycle, so the list only shrinks. Empty since issue 33 (see
/// [`KNOWN_MODULE_CYCLES`]).
const KNOWN_CYCLE: &[(&str, &str)] = &[];
/// Rule 10: extended mode's files as stages, lowest first; a file may import only from its own
/// stage or an earlier one, and no files form a cycle (`extended_is_a_pipeline`). Paths are
/// relative to `extended/` without `.rs`; every file there must be listed (the `mod.rs` files only
/// declare and re-export). `ARCHITECTURE.md` draws them.
const EXTENDED_STAGES: &[(&str, &[&str])] = &[
    (
        "inputs",
        &[
            "choices",
            "efficiency",
            "latency",
            "stack",
            "moe/host_flags",
            "moe/options",
            "moe/exchange_rates",
            "options",
            "workload",
            "layout",
            "moe/experts",
            "layout_rules",
            "moe/counts",
            "moe/axes",
            "hardware",
            "sparsity",
        ],
    ),
    ("pricing", &["pricing", "layer_python"]),
    (
        "operations",
        &[
            "ops",
            "sublayer",
            "activation_offload",
            "context_parallel",
            "unfused_attention",
            "unfused_rope",
            "moe/mla",
            "attention",
            "moe/dispatch",
            "moe/host_calls",
            "moe/mla_host",
            "moe/sync",
            "fsdp_host",
            "moe/grouped_gemm",
            "moe/expert_offload",
            "moe/expert_extras",
            "moe/layer",
            "block",
            "moe/block",
            "block_operations",
            "head",
        ],
    ),
    (
        "totals",
        &[
            "data_parallel",
            "pipeline",
            "stack_nanotron",
            "optimizer_host",
            "step_host",
            "moe/host_step",
            "fp32_accumulation",
            "stack_eager",
            "stack_tensors",
            "model_states",
            "loss_memory",
            "memory",
            "device_memory",
            "muon",
            "iteration",
            "moe/devices",
            "moe/evaluate",
            "timing",
        ],
    ),
    ("evaluation", &["moe_caches", "evaluate", "evaluate/expert_choice", "switches", "switch_text"]),
];
/// The file-level imports inside `extended/` still left out of rule 10, `(file, file it imports)`:
/// each must still exist (a stale entry fails), so the list only shrinks. Empty since session 21:
/// the block's list dispatching to the MoE block, MLA and unfused attention from `ops` went in
/// session 20 (`attention.rs` and `block.rs` hold the lists, `ops` the building blocks), and the
/// last, `layout` ↔ `moe/experts` (`Layout::validate` folded the experts while
/// `ExpertLayout::fold` reads the layout), when the layout's rules moved to `layout_rules.rs`,
/// after the fold. A new entry needs a reason written here.
const KNOWN_EXTENDED_EDGES: &[(&str, &str)] = &[];
/// Public type names still declared in more than one file across the workspace (rule 12), each
/// with why it is left: 21 at the audit of session 22, 2 in session 24 (`Origin`, `Outcome`), none
/// since session 25 (the picker group is `fmperf_app::pickers::PickerGroup`, the Explorer's finished
/// search `state::FinishedSearch`). The list only shrinks: keep it empty.
const DUPLICATE_TYPE_NAMES_LEFT: &[&str] = &[];
/// The pricer's files (rule 7): where a mode becomes its model (`cost.rs`: `CostModel`, `Pricer`)
/// and the mode types with their per-mode behaviour and text (`mode.rs`, `mode_kind.rs`). Only
/// they branch on the mode.
const PRICER_FILES: &[&str] = &["cost.rs", "mode.rs", "mode_kind.rs"];
/// Files outside [`PRICER_FILES`] that still branch on the mode (rule 7), with how many branch
/// tokens each may keep. No branch on the mode is left since issue 33 moved the last 25
/// (validation's pricing of a measured row, its caches per mode, the sweep's point, the
/// explorer's defaults, the catalog's mapping) onto the mode and the pricer; the search's three
/// dense-vs-MoE branches went to the pricer (`ExtendedSetup::chooses_expert_layouts`) in session
/// 24. What is left are model facts on MoE-ness, each justified below: 5 in 4 files at the start
/// of session 33, 2 in 2 since (reference mode's compatibility and caveats of a catalog model are
/// per-mode text and moved to `mode.rs`; which blocks are MoE blocks is the model's answer,
/// `Workload::moe_block`, which the FLOP count asks). The list only shrinks, so a new branch
/// fails. The way out of one: the per-mode behaviour or text becomes a method of
/// `ModeKind`/`Mode` or of the `CostModel` trait (or the extended setup), and the caller asks it.
const MODE_BRANCHES_LEFT: &[(&str, usize)] = &[
    // The FLOP convention of MFU's numerator (a model fact: routed experts count `top_k` times),
    // not a price; the count is validation's (`validate::moe_flops`), which the pricer's files
    // may not import.
    ("explore/priced.rs", 1),
    // The class of a measured run (dense or mixture-of-experts models of a size), which its error
    // band is reported by: a fact about the run, not a price.
    ("validate/error_bands.rs", 1),
];
/// Rule 7 past core (`mode_variants_have_one_home_per_crate`): the one file of each other crate
/// of [`WORKSPACE_SOURCES`] that may still name a mode's variant, `(crate, file under its
/// source folder, how many)`; every other file asks the mode (`ModeKind`, `Mode`) for its words
/// and predicates. At most one home per crate; the counts only shrink; no crate has one left
/// (issue 33 moved the last ones onto the mode: the URL's default mode, the mode panel's and the
/// badge's words, `fmperf search`'s inputs, the validation view's reports per mode).
const MODE_HOMES_OUTSIDE_CORE: &[(&str, &str, usize)] = &[
    // None left: `fmperf search` asks core for its inputs in its mode
    // (`resolve::search_inputs`), and the validation view keeps its reports per mode
    // (`PerMode`, filled over `ModeKind::ALL`).
];
/// Where a mode's switches may be tested for presence (rule 7's `.options()`), `(crate, file)`:
/// the mode's own files and the resolver's one home of what the mode decides about inputs.
const OPTIONS_HOMES: &[(&str, &str)] =
    &[("core", "mode.rs"), ("core", "mode_kind.rs"), ("core", "cost.rs"), ("core", "resolve/mode_inputs.rs")];
/// Files outside [`OPTIONS_HOMES`] that still call `.options()` (rule 7), `(crate, file, how
/// many)`; the list only shrinks, and it is empty. Issue 33 (session 31) moved 13 (the explorer's,
/// the sweep's and the search's resolvers, the sweep's export, the CLI's checks of `--ext`,
/// `--calibration` and `--mode` with `--from`, the URL's MoE keys) onto `resolve/mode_inputs.rs`
/// and `ModeKind::takes_switches`; session 32 the last two (the MoE switches a worker's job
/// carries: `changed_moe_switches`; the stack the memory figures assume: `switch_stack`).
const OPTIONS_TESTS_LEFT: &[(&str, &str, usize)] = &[];
/// Crates whose branches on MoE-ness rule 14 leaves alone: the launch readers read a file's
/// experts (whether a flag applies is what they parse), they price nothing.
const MOE_READERS: &[&str] = &["launch"];
/// Files past core that still branch on a workload's MoE-ness (rule 14: `.is_moe(…)`,
/// `x.moe.is_some()`, `match x.moe {`, `experts > 1`, …), `(crate, file, how many)`; core's are
/// rule 7's ([`MODE_BRANCHES_LEFT`]). Counted first in session 32 (issue 33): 10 in 8 files; 3 of
/// them (the explorer's long search and MoE-switch check, the first view's refusal of a MoE
/// model in reference mode) moved onto `ModeKind::prices_experts`; session 33 the last 7 in 5
/// files: `--moe` for a dense model (`fmperf search`, `search --from`) is the model's check
/// (`Workload::check_moe_switches`), a layout's ` · ep · etp` its text
/// (`Layout::expert_degrees_text`: `search --from`'s "your layout", the page's launch import),
/// the estimate's MoE table the evaluation's lists (`ExtendedEvaluation::moe_times`,
/// `moe_figures`: none for a dense model), and a class's `MoE`/`dense` its word
/// (`ModelClass::kind`, the validation view's bands). Empty, and it only shrinks.
const MOE_BRANCHES_PAST_CORE_LEFT: &[(&str, &str, usize)] = &[];
/// Where branching on a workload's MoE-ness is pricing (rule 7), besides [`PRICER_FILES`]:
/// extended mode's cost model, the only one that prices experts (its expert layouts, dispatch,
/// memory). The search asks it (`ExtendedSetup::chooses_expert_layouts`) rather than the model.
const MOE_PRICER_HOMES: &[&str] = &["extended/"];
/// Modules that may look catalog ids up directly (rule 5): the catalog itself and the resolver.
const LOOKUP_HOMES: &[&str] = &["catalog", "resolve"];
/// The look-ups rule 5 reserves to [`LOOKUP_HOMES`].
const LOOKUPS: &[&str] = &["find_system", "find_model"];
/// Modules that may map a catalog system themselves (rule 5): the catalog (the mapping), extended
/// mode (its part, built on the mapping) and the resolver.
const MAPPING_HOMES: &[&str] = &["catalog", "extended", "resolve"];
/// The mappings rule 5 reserves to [`MAPPING_HOMES`] (`from_catalog` only after `Hardware ::`).
const MAPPINGS: &[&str] = &["to_system_params", "map_for_extended"];
/// Files outside [`LOOKUP_HOMES`] allowed a direct look-up, each with why. Empty: every caller
/// (CLI inputs, explorer, sweeps, scenario documents, validation's rows, launch estimates) goes
/// through the resolver; listings for pickers use `catalog::models()`/`systems()`, not look-ups.
const LOOKUP_ALLOWED: &[&str] = &[];
/// Crates core must not depend on (it runs in the page's single thread and on the host alike).
const FORBIDDEN_CRATES: &[&str] =
    &["leptos", "web-sys", "js-sys", "wasm-bindgen", "wasm-bindgen-futures", "gloo-timers", "tokio", "rayon"];

/// One source file: where it lives in the module tree and its tokens.
struct Source {
    /// Path relative to `src/`, for messages.
    path: String,
    /// Module path: `catalog/mapping.rs` → `["catalog", "mapping"]`, `catalog/mod.rs` → `["catalog"]`.
    module: Vec<String>,
    tokens: Vec<String>,
}

impl Source {
    fn new(path: &str, text: &str) -> Source {
        let mut module: Vec<String> =
            path.trim_end_matches(".rs").split('/').map(str::to_string).filter(|s| !s.is_empty()).collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        Source { path: path.to_string(), module, tokens: tokens(text) }
    }

    /// The top-level module (`""` for `lib.rs`).
    fn top(&self) -> &str {
        self.module.first().map(String::as_str).unwrap_or("")
    }
}

/// Rust source as tokens: identifiers (with a trailing `!` for macro calls), `::` and single
/// punctuation; comments, string, raw-string and character literals and lifetimes dropped.
fn tokens(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == 'r' && (next == Some('"') || (next == Some('#') && raw_string_start(&c, i + 1))) {
            // Raw string r"…", r#"…"#: skip to the quote followed by as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            j += 1;
            while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#'))) {
                j += 1;
            }
            i = j + 1 + hashes;
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let mut word: String = c[start..i].iter().collect();
            if c.get(i) == Some(&'!') && c.get(i + 1) != Some(&'=') {
                word.push('!');
                i += 1;
            }
            out.push(word);
        } else if ch == ':' && next == Some(':') {
            out.push("::".into());
            i += 2;
        } else if ch.is_whitespace() || ch.is_ascii_digit() {
            i += 1;
        } else {
            out.push(ch.to_string());
            i += 1;
        }
    }
    out
}

fn raw_string_start(c: &[char], mut j: usize) -> bool {
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    c.get(j) == Some(&'"')
}

/// The first segments of the paths of a `use` group starting at `tokens[at] == "{"`
/// (`{format::hint, Error, self}` → `format`, `Error`, `self`).
fn group_heads(tokens: &[String], at: usize) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for t in &tokens[at..] {
        match t.as_str() {
            "{" => {
                depth += 1;
                expect_head = depth == 1;
            }
            "}" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            "," if depth == 1 => expect_head = true,
            _ if expect_head && depth == 1 => {
                heads.push(t.clone());
                expect_head = false;
            }
            _ => {}
        }
    }
    heads
}

/// The names a path beginning at `tokens[i]` (after its `root ::`) reaches first: one name, or
/// the heads of a group.
fn names_after(tokens: &[String], i: usize) -> Vec<String> {
    match tokens.get(i).map(String::as_str) {
        Some("{") => group_heads(tokens, i),
        Some(name) => vec![name.to_string()],
        None => Vec::new(),
    }
}

/// The crate-level names a source uses: every `crate::x`, and `super::…::x` that climbs out of its
/// top-level module.
fn crate_names(src: &Source) -> Vec<String> {
    let t = &src.tokens;
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < t.len() {
        if t[i] == "crate" && t[i + 1] == "::" && (i == 0 || t[i - 1] != "::") {
            out.extend(names_after(t, i + 2));
            i += 2;
        } else if t[i] == "super" && t[i + 1] == "::" && (i == 0 || t[i - 1] != "::") {
            let mut ups = 0;
            let mut j = i;
            while t.get(j).map(String::as_str) == Some("super") && t.get(j + 1).map(String::as_str) == Some("::") {
                ups += 1;
                j += 2;
            }
            if ups >= src.module.len() {
                out.extend(names_after(t, j));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// What the crate root re-exports (`pub use model::ModelShape;` → `ModelShape` → `model`).
fn root_reexports(lib: &Source) -> BTreeMap<String, String> {
    let t = &lib.tokens;
    let mut map = BTreeMap::new();
    for i in 0..t.len().saturating_sub(4) {
        if t[i] == "pub" && t[i + 1] == "use" {
            let module = t[i + 2].clone();
            let mut j = i + 3;
            while t.get(j).map(String::as_str) == Some("::") {
                if let Some(name) = t.get(j + 1) {
                    if name == "{" {
                        for h in group_heads(t, j + 1) {
                            map.insert(h, module.clone());
                        }
                        break;
                    }
                    map.insert(name.clone(), module.clone());
                }
                j += 2;
            }
        }
    }
    map
}

/// How crate-level names map to top-level modules: the modules (declared in `lib.rs` or present
/// as files) map to themselves, the root's re-exports to the module they come from.
fn resolver(sources: &[Source]) -> BTreeMap<String, String> {
    let lib = sources.iter().find(|s| s.module.is_empty());
    let mut map = lib.map(root_reexports).unwrap_or_default();
    let declared = lib.into_iter().flat_map(|l| l.tokens.windows(2).filter(|w| w[0] == "mod").map(|w| w[1].clone()));
    for m in declared.chain(sources.iter().map(|s| s.top().to_string()).filter(|m| !m.is_empty())) {
        map.insert(m.clone(), m);
    }
    map
}

/// The top-level modules a source uses (itself excluded), with the name that reached each.
fn uses(src: &Source, resolve: &BTreeMap<String, String>) -> Vec<(String, String)> {
    crate_names(src)
        .into_iter()
        .filter_map(|name| resolve.get(&name).filter(|m| *m != src.top()).map(|m| (name.clone(), m.clone())))
        .collect()
}

/// The dependency graph of top-level modules: module → modules it uses, leaving out the file-level
/// uses in `skip` (`(file, module)`).
fn module_graph(sources: &[Source], skip: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
    let resolve = resolver(sources);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in sources.iter().filter(|s| !s.top().is_empty()) {
        let used = uses(s, &resolve).into_iter().map(|(_, m)| m);
        let kept: Vec<String> = used.filter(|m| !skip.contains(&(s.path.as_str(), m.as_str()))).collect();
        graph.entry(s.top().to_string()).or_default().extend(kept);
    }
    graph
}

/// The cycle through `a` and `b` in `graph`, written out, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>, a: &str, b: &str) -> Option<String> {
    let there = path(graph, a, b)?;
    let back = path(graph, b, a)?;
    Some(format!("{} and {}", there.join(" → "), back.join(" → ")))
}

/// A shortest path of modules from `from` to `to` in `graph`, if any.
fn path(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> Option<Vec<String>> {
    let mut prev: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from.to_string()]);
    while let Some(m) = queue.pop_front() {
        for n in graph.get(&m).into_iter().flatten() {
            if n == to {
                let mut p = vec![to.to_string(), m.clone()];
                let mut at = m.clone();
                while let Some(b) = prev.get(&at) {
                    p.push(b.clone());
                    at = b.clone();
                }
                p.reverse();
                return Some(p);
            }
            if n != from && !prev.contains_key(n) {
                prev.insert(n.clone(), m.clone());
                queue.push_back(n.clone());
            }
        }
    }
    None
}

/// Whether each token lies outside `#[cfg(test)]` items (the attribute, and the item it marks up to
/// its closing brace or semicolon).
fn outside_tests(t: &[String]) -> Vec<bool> {
    outside_items(t, &["#", "[", "cfg", "(", "test", ")", "]"])
}

/// Whether each token lies outside test code: `#[cfg(test)]` items and `#[test]` functions (an
/// integration test's).
fn outside_test_code(t: &[String]) -> Vec<bool> {
    let unit = outside_tests(t);
    outside_items(t, &["#", "[", "test", "]"]).into_iter().zip(unit).map(|(a, b)| a && b).collect()
}

/// Whether each token lies outside the items marked by the attribute `attr` (its tokens): the
/// attribute, and the item up to its closing brace or semicolon.
fn outside_items(t: &[String], attr: &[&str]) -> Vec<bool> {
    let mut keep = vec![true; t.len()];
    let mut i = 0;
    while i < t.len() {
        if t.len() - i >= attr.len() && t[i..i + attr.len()].iter().zip(attr).all(|(a, b)| a == b) {
            let mut j = i + attr.len();
            let mut depth = 0;
            while j < t.len() {
                match t[j].as_str() {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ";" if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            let end = (j + 1).min(t.len());
            keep[i..end].iter_mut().for_each(|k| *k = false);
            i = end;
        } else {
            i += 1;
        }
    }
    keep
}

/// Rule 5: the direct catalog look-ups and system mappings of `s` (outside its unit tests), one
/// message each.
fn direct_lookups(s: &Source) -> Vec<String> {
    let t = &s.tokens;
    let keep = outside_tests(t);
    let mut problems = Vec::new();
    if !MAPPING_HOMES.contains(&s.top()) {
        for i in (0..t.len()).filter(|&i| keep[i]) {
            let hardware = t[i] == "from_catalog" && i >= 2 && t[i - 1] == "::" && t[i - 2] == "Hardware";
            if MAPPINGS.contains(&t[i].as_str()) || hardware {
                problems.push(format!(
                    "{}: maps a system itself ({}); map it through crate::resolve (map_system, hardware)",
                    s.path, t[i]
                ));
            }
        }
    }
    if LOOKUP_HOMES.contains(&s.top()) || LOOKUP_ALLOWED.contains(&s.path.as_str()) {
        return problems;
    }
    for i in 0..t.len() {
        if keep[i] && t[i] == "catalog" && t.get(i + 1).map(String::as_str) == Some("::") {
            for name in names_after(t, i + 2).into_iter().filter(|n| LOOKUPS.contains(&n.as_str())) {
                problems.push(format!(
                    "{}: calls catalog::{name} directly; look ids up through crate::resolve (the catalogs as a value)",
                    s.path
                ));
            }
        }
    }
    problems
}

/// Every rule broken by `sources`, one message each; `known` lists the file-level uses of the
/// catalog ↔ format cycle still tolerated (see [`KNOWN_CYCLE`]).
fn check(sources: &[Source], known: &[(&str, &str)]) -> Vec<String> {
    let mut problems = Vec::new();
    let resolve = resolver(sources);
    for s in sources {
        // Rule 1: the reference model stands on the value types only.
        if s.top() == "reference" {
            for (name, m) in uses(s, &resolve) {
                if !REFERENCE_MAY_USE.contains(&m.as_str()) {
                    problems.push(format!(
                        "{}: reference/ uses crate::{name} (module `{m}`); the reference model may use only {}",
                        s.path,
                        REFERENCE_MAY_USE.join(", ")
                    ));
                }
            }
        }
        // Rule 5: catalog look-ups go through the resolver.
        problems.extend(direct_lookups(s));
        // Rule 3: no I/O, clock, environment, threads or processes.
        let t = &s.tokens;
        for i in 0..t.len() {
            if t[i] == "std" && t.get(i + 1).map(String::as_str) == Some("::") {
                for name in names_after(t, i + 2) {
                    if let Some((_, why)) = FORBIDDEN_STD.iter().find(|(m, _)| *m == name) {
                        problems.push(format!("{}: uses std::{name} ({why}); fmperf-core does no I/O", s.path));
                    }
                }
            }
            if let Some((_, why)) = FORBIDDEN_NAMES.iter().find(|(n, _)| *n == t[i]) {
                problems.push(format!("{}: uses {} ({why}); fmperf-core does no I/O", s.path, t[i]));
            }
        }
    }
    // Rule 2: catalog and format do not form a cycle (but for the known uses, which must still exist
    // and still close a cycle, so the list only shrinks).
    if let Some(c) = cycle(&module_graph(sources, known), "catalog", "format") {
        problems.push(format!("catalog and format form a cycle: {c}"));
    }
    for &(file, module) in known {
        let still_used = sources.iter().any(|s| s.path == file && uses(s, &resolve).iter().any(|(_, m)| m == module));
        if !still_used {
            problems.push(format!("{file} no longer uses {module}: delete it from KNOWN_CYCLE in tests/tidy.rs"));
        } else if cycle(&module_graph(sources, &[]), "catalog", "format").is_none() {
            problems.push(format!(
                "catalog and format no longer form a cycle: delete ({file}, {module}) from KNOWN_CYCLE in tests/tidy.rs"
            ));
        }
    }
    problems
}

/// Rule 6: every cycle between top-level modules of `sources` (leaving out the file-level uses in
/// `known`), one message each, written out (`search → validate → sweep → search`). Each strongly
/// connected set of modules is one problem, shown by a shortest cycle through its first module.
fn module_cycles(sources: &[Source], known: &[(&str, &str)]) -> Vec<String> {
    let graph = module_graph(sources, known);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut problems = Vec::new();
    for m in graph.keys() {
        if seen.contains(m) {
            continue;
        }
        // The modules on a cycle with `m`: those it reaches that reach it back.
        let with: Vec<&String> =
            graph.keys().filter(|n| *n != m && path(&graph, m, n).is_some() && path(&graph, n, m).is_some()).collect();
        if with.is_empty() {
            continue;
        }
        seen.insert(m.clone());
        seen.extend(with.iter().map(|n| n.to_string()));
        let shortest = graph[m].iter().filter_map(|n| path(&graph, n, m)).min_by_key(Vec::len).unwrap_or_default();
        let names: Vec<&str> = with.iter().map(|n| n.as_str()).collect();
        problems.push(format!(
            "modules {m}, {} form a cycle: {m} → {}; move what both need to a module below them (e.g. crate::vocab)",
            names.join(", "),
            shortest.join(" → ")
        ));
    }
    problems
}

/// Rule 7: the mode branches of `s` outside its unit tests (see [`PRICER_FILES`]), one line of text
/// each (`ModeKind::Extended`, `is_extended(`, `extended: bool`); none for the pricer's own files.
fn mode_branches(s: &Source) -> Vec<String> {
    if PRICER_FILES.contains(&s.path.as_str()) {
        return Vec::new();
    }
    let t = &s.tokens;
    let keep = outside_tests(t);
    let mut found = Vec::new();
    for i in (0..t.len()).filter(|&i| keep[i]) {
        if let Some(v) = mode_variant_at(t, i) {
            found.push(v);
        } else if let Some(m) = moe_branch_at(t, i).filter(|_| !MOE_PRICER_HOMES.iter().any(|h| s.path.starts_with(h)))
        {
            found.push(m);
        }
    }
    found
}

/// A branch on a workload's MoE-ness at token `i` of `t`, as text: an `.is_moe(…)` call,
/// `x.moe.is_some()` (`is_none`, `is_some_and`, `is_none_or`), `x.moe` as the scrutinee of a
/// `match` or an `if let`/`let … else` (`match w.moe {`, `if let Some(m) = &w.moe {`), or an
/// expert count compared with a number (`experts > 1`, `1 == m.num_experts`; shared experts are
/// another question). Rule 7 counts them in core, rule 14 past it.
fn moe_branch_at(t: &[String], i: usize) -> Option<String> {
    let at = |i: usize| t.get(i).map(String::as_str).unwrap_or("");
    // The tokens drop digits, so a number is what an operand is when it is no name, call or path.
    let number =
        |j: usize| !at(j).starts_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '(' | '-' | '*' | '&'));
    let experts = at(i) == "experts" || (at(i).ends_with("_experts") && !at(i).starts_with("shared"));
    // `experts > 1`, `>=`, `==`, `!=` (comparisons are one or two tokens), and the mirror image.
    let after = match (at(i + 1), at(i + 2)) {
        (">" | "<", "=") | ("=" | "!", "=") => Some(i + 3),
        (">" | "<", _) => Some(i + 2),
        _ => None,
    };
    // The mirror image compares the whole path (`1 < m.experts`): step back over `x.` first.
    let mut first = i;
    while first >= 2 && at(first - 1) == "." && at(first - 2).starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        first -= 2;
    }
    let before = match (first.checked_sub(2).map_or("", at), first.checked_sub(1).map_or("", at)) {
        ("=" | "!" | "<" | ">", "=") => first.checked_sub(3),
        (_, "<" | ">") => first.checked_sub(2),
        _ => None,
    };
    // Before the operator, a number leaves what came before it: a keyword or punctuation, no operand.
    let no_operand = |j: usize| {
        let w = at(j);
        let name = w.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        (!name || matches!(w, "if" | "while" | "return" | "match" | "in" | "else")) && !matches!(w, ")" | "]")
    };
    let compared = after.is_some_and(number) || before.is_some_and(no_operand);
    if at(i) == "is_moe" && i >= 1 && at(i - 1) == "." && at(i + 1) == "(" {
        Some("is_moe(".to_string())
    } else if at(i) == "moe" && i >= 1 && at(i - 1) == "." {
        let tested = at(i + 1) == "."
            && matches!(at(i + 2), "is_some" | "is_none" | "is_some_and" | "is_none_or")
            && at(i + 3) == "(";
        let matched = at(i + 1) == "{" && {
            let start = (0..i).rev().find(|&j| matches!(at(j), ";" | "{" | "}")).map_or(0, |j| j + 1);
            (start..i).any(|j| matches!(at(j), "match" | "let"))
        };
        if tested {
            Some(format!(".moe.{}(", at(i + 2)))
        } else if matched {
            Some(".moe {".to_string())
        } else {
            None
        }
    } else if experts && compared {
        Some(format!("{} compared with a number", at(i)))
    } else {
        None
    }
}

/// A branch on the mode itself at token `i` of `t`, as text: a variant (`ModeKind::Extended`,
/// `Mode::Reference`: a pattern, a comparison or a value chosen by mode), an `.is_extended(…)`
/// call or an `extended: bool`. Rule 7's first half, which [`mode_variants`] applies past core.
fn mode_variant_at(t: &[String], i: usize) -> Option<String> {
    let at = |i: usize| t.get(i).map(String::as_str).unwrap_or("");
    if matches!(at(i), "Reference" | "Extended")
        && i >= 2
        && at(i - 1) == "::"
        && matches!(at(i - 2), "ModeKind" | "Mode")
    {
        Some(format!("{}::{}", at(i - 2), at(i)))
    } else if at(i) == "is_extended" && i >= 1 && at(i - 1) == "." && at(i + 1) == "(" {
        Some("is_extended(".to_string())
    } else if at(i) == "extended" && at(i + 1) == ":" && at(i + 2) == "bool" {
        Some("extended: bool".to_string())
    } else {
        None
    }
}

/// Rule 7 past core: the branches on the mode itself ([`mode_variant_at`]) of `s` outside its unit
/// tests. A crate outside core reads MoE-ness freely (the launch readers read experts), so only
/// the mode's variants count.
fn mode_variants(s: &Source) -> Vec<String> {
    let keep = outside_tests(&s.tokens);
    (0..s.tokens.len()).filter(|&i| keep[i]).filter_map(|i| mode_variant_at(&s.tokens, i)).collect()
}

/// Rule 7 past core over `files` (crate, file), against `homes` (crate, file, tokens left): one
/// message per file outside its crate's home that names a mode's variant, per home with more or
/// fewer than its allowance (lower it then), per home that is gone, and per crate with two homes.
fn mode_home_problems(files: &[(&str, Source)], homes: &[(&str, &str, usize)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (krate, s) in files {
        let found = mode_variants(s);
        match homes.iter().find(|(k, f, _)| k == krate && *f == s.path) {
            None if !found.is_empty() => problems.push(format!(
                "{krate} {}: names the mode's variants ({}) outside its crate's home; ask the mode \
                 (`ModeKind`'s and `Mode`'s words and predicates: `label`, `title`, `described`, \
                 `takes_switches`, `ALL`, `REALISTIC`, …) instead",
                s.path,
                found.join(", ")
            )),
            Some((_, _, n)) if found.len() > *n => problems.push(format!(
                "{krate} {}: {} mode variants ({}) where {n} are left; ask the mode instead",
                s.path,
                found.len(),
                found.join(", ")
            )),
            Some((_, _, n)) if found.len() < *n => problems.push(format!(
                "{krate} {}: {} mode variants, fewer than the {n} left: lower its entry in \
                 MODE_HOMES_OUTSIDE_CORE in tests/tidy.rs to {} (delete it at 0)",
                s.path,
                found.len(),
                found.len()
            )),
            _ => {}
        }
    }
    for (i, (krate, file, _)) in homes.iter().enumerate() {
        if !files.iter().any(|(k, s)| k == krate && s.path == *file) {
            problems.push(format!("{krate} {file} is gone: delete it from MODE_HOMES_OUTSIDE_CORE in tests/tidy.rs"));
        }
        if homes[..i].iter().any(|(k, _, _)| k == krate) {
            problems.push(format!("{krate} has two homes of mode variants in MODE_HOMES_OUTSIDE_CORE: one per crate"));
        }
    }
    problems
}

/// Rule 7 over `sources`, against the allowances `left` (file, count): one message per file with
/// more branches than it may keep, or fewer (lower the allowance then).
fn mode_branch_problems(sources: &[Source], left: &[(&str, usize)]) -> Vec<String> {
    let mut problems = Vec::new();
    for s in sources {
        let found = mode_branches(s);
        let allowed = left.iter().find(|(f, _)| *f == s.path).map_or(0, |(_, n)| *n);
        if found.len() > allowed {
            problems.push(format!(
                "{}: {} mode branches ({}) where {allowed} are left; ask the mode (`ModeKind`, `Mode`) or \
                 the cost model (`CostModel`) instead of branching on it",
                s.path,
                found.len(),
                found.join(", ")
            ));
        } else if found.len() < allowed {
            problems.push(format!(
                "{}: {} mode branches, fewer than the {allowed} left: lower its entry in MODE_BRANCHES_LEFT \
                 in tests/tidy.rs to {} (delete it at 0)",
                s.path,
                found.len(),
                found.len()
            ));
        }
    }
    for (file, _) in left.iter().filter(|(f, _)| !sources.iter().any(|s| s.path == *f)) {
        problems.push(format!("{file} is gone: delete it from MODE_BRANCHES_LEFT in tests/tidy.rs"));
    }
    problems
}

/// Rule 7's branch in disguise: the `.options()` calls of `s` outside its unit tests, one entry
/// each (`Mode::options` answers `Option`, so every call decides by the mode).
fn options_tests(s: &Source) -> Vec<String> {
    let t = &s.tokens;
    let keep = outside_tests(t);
    let at = |i: usize| t.get(i).map(String::as_str).unwrap_or("");
    (1..t.len())
        .filter(|&i| keep[i] && at(i - 1) == "." && at(i) == "options" && at(i + 1) == "(" && at(i + 2) == ")")
        .map(|_| ".options()".to_string())
        .collect()
}

/// Rule 7's branches in disguise over `files` (crate, file), outside `homes` (crate, file),
/// against the allowances `left` (crate, file, count): one message per file with more than it
/// may keep, or fewer (lower the allowance then), and per allowance whose file is gone.
fn options_test_problems(
    files: &[(&str, Source)],
    homes: &[(&str, &str)],
    left: &[(&str, &str, usize)],
) -> Vec<String> {
    let counted = Counted {
        what: "presence tests of the mode's switches (`.options()`)",
        way_out: "ask the mode by name instead (`ModeKind::takes_switches`, or `resolve::mode_inputs`: \
                  `check_switches`, `switch_precision`, `switch_choices`; `Mode::per_mode`)",
        list: "OPTIONS_TESTS_LEFT",
        find: options_tests,
    };
    allowance_problems(files, |k, f| homes.contains(&(k, f)), left, &counted)
}

/// A kind of token a rule counts per file against a shrink-only allowance list (rules 7 and 14).
struct Counted {
    /// What is counted, in the messages.
    what: &'static str,
    /// What to do instead, in the message of a file over its allowance.
    way_out: &'static str,
    /// The allowance list's name in this file, in the messages that ask to lower or strike it.
    list: &'static str,
    /// The counted tokens of one file (outside its unit tests), one entry each.
    find: fn(&Source) -> Vec<String>,
}

/// `counted`'s problems over `files` (crate, file) outside `home(crate, file)`, against the
/// allowances `left` (crate, file, count): one message per file with more than it may keep, or
/// fewer (lower the allowance then), and per allowance whose file is gone.
fn allowance_problems(
    files: &[(&str, Source)],
    home: impl Fn(&str, &str) -> bool,
    left: &[(&str, &str, usize)],
    counted: &Counted,
) -> Vec<String> {
    let Counted { what, way_out, list, find } = counted;
    let mut problems = Vec::new();
    for (krate, s) in files.iter().filter(|(k, s)| !home(k, s.path.as_str())) {
        let found = find(s);
        let n = found.len();
        let allowed = left.iter().find(|(k, f, _)| k == krate && *f == s.path).map_or(0, |(_, _, n)| *n);
        if n > allowed {
            problems.push(format!(
                "{krate} {}: {n} {what} ({}) where {allowed} are left; {way_out}",
                s.path,
                found.join(", ")
            ));
        } else if n < allowed {
            problems.push(format!(
                "{krate} {}: {n} {what}, fewer than the {allowed} left: lower its entry in {list} in tests/tidy.rs \
                 to {n} (delete it at 0)",
                s.path
            ));
        }
    }
    for (krate, file, _) in left.iter().filter(|(k, f, _)| !files.iter().any(|(c, s)| c == k && s.path == *f)) {
        problems.push(format!("{krate} {file} is gone: delete it from {list} in tests/tidy.rs"));
    }
    problems
}

/// Rule 14: the branches on a workload's MoE-ness ([`moe_branch_at`]) of `s` outside its unit
/// tests, one entry each.
fn moe_branches(s: &Source) -> Vec<String> {
    let keep = outside_tests(&s.tokens);
    (0..s.tokens.len()).filter(|&i| keep[i]).filter_map(|i| moe_branch_at(&s.tokens, i)).collect()
}

/// Rule 14 over `files` (crate, file) past core, against the allowances `left` (crate, file,
/// count); the launch readers ([`MOE_READERS`]) read experts and are not counted.
fn moe_branch_past_core_problems(files: &[(&str, Source)], left: &[(&str, &str, usize)]) -> Vec<String> {
    let counted = Counted {
        what: "branches on MoE-ness",
        way_out: "ask the mode or the model by name instead (`ModeKind::prices_experts`, the pricer's \
                  `ExtendedSetup::chooses_expert_layouts`, a method of the model entry)",
        list: "MOE_BRANCHES_PAST_CORE_LEFT",
        find: moe_branches,
    };
    allowance_problems(files, |k, _| k == "core" || MOE_READERS.contains(&k), left, &counted)
}

/// Rule 4: `Cargo.toml`'s dependencies (every `[…dependencies]` table but dev-dependencies).
fn check_manifest(toml: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut in_deps = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]") && !line.contains("dev-dependencies");
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
        if in_deps && FORBIDDEN_CRATES.contains(&name) {
            problems
                .push(format!("crates/core/Cargo.toml depends on `{name}`; core has no web, async or thread crates"));
        }
    }
    problems
}

/// Rule 8: the note lists of `s` typed as strings, one message each.
fn string_note_lists(s: &Source) -> Vec<String> {
    let t = &s.tokens;
    let keep = outside_tests(t);
    let is_note_name = |name: &str| {
        let lower = name.to_lowercase();
        name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && NOTE_WORDS.iter().any(|w| lower.contains(w))
    };
    let at = |i: usize, want: &[&str]| {
        t.len() >= i + want.len() && t[i..i + want.len()].iter().zip(want).all(|(a, b)| a == b)
    };
    let mut out = Vec::new();
    for i in 0..t.len() {
        if !keep[i] || !is_note_name(&t[i]) {
            continue;
        }
        // `name: Vec<String>`, `name: &mut Vec<String>`, `name: &[String]`, and `fn name(…) -> Vec<String>`.
        let typed = (i + 1..t.len()).take(1).any(|j| {
            t[j] == ":"
                && (at(j + 1, &["Vec", "<", "String", ">"])
                    || at(j + 1, &["&", "mut", "Vec", "<", "String", ">"])
                    || at(j + 1, &["&", "Vec", "<", "String", ">"])
                    || at(j + 1, &["&", "[", "String", "]"]))
        });
        let returned = i > 0 && t[i - 1] == "fn" && {
            let mut j = i + 1;
            let mut depth = 0;
            while j < t.len() {
                match t[j].as_str() {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    "{" | ";" if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            (i + 1..j).any(|k| at(k, &["-", ">", "Vec", "<", "String", ">"]))
        };
        if typed || returned {
            out.push(format!(
                "{}: `{}` is a list of notes typed as strings; hold `fmperf_core::vocab::Note`s (kind, fields, text)",
                s.path, t[i]
            ));
        }
    }
    out
}

/// Rule 11: where `s` places or routes an error by comparing its field's text rather than through
/// its path (`Error::is_at`, `FieldPath::is_in`/`below`): `e.field() == Some("…")` (`!=` alike)
/// anywhere; and outside test code (a test may assert where an error is by its text)
/// `match e.field() { Some("…") => … }` (alone or in a tuple), `matches!(e.field(), Some("…"))`,
/// `e.field().is_some_and(|f| …)` (`is_none_or`, `map_or`), and a guard on an error's field,
/// `InvalidField { field, .. } if field == "…"` (`UnknownField`, `MissingField`; `field: f`;
/// `!=`, `starts_with`, `ends_with`, `contains`, `as_str` alike).
fn string_field_comparisons(s: &Source) -> Vec<String> {
    let t = &s.tokens;
    let keep = outside_test_code(t);
    let at = |i: usize, want: &[&str]| {
        t.len() >= i + want.len() && t[i..i + want.len()].iter().zip(want).all(|(a, b)| a == b)
    };
    let tok = |i: usize| t.get(i).map(String::as_str).unwrap_or("");
    let mut found = Vec::new();
    for i in 0..t.len() {
        let call = at(i, &[".", "field", "(", ")"]);
        let path_call = at(i, &[".", "path", "(", ")"]);
        let error_pattern = matches!(tok(i), "InvalidField" | "UnknownField" | "MissingField") && tok(i + 1) == "{";
        if call && (at(i + 4, &["=", "=", "Some"]) || at(i + 4, &["!", "=", "Some"])) {
            found.push("`field() == Some(…)`");
        } else if keep[i] && call && ["is_some_and", "is_none_or", "map_or"].iter().any(|m| at(i + 4, &[".", m, "("])) {
            found.push("`field().is_some_and(…)`");
        } else if keep[i] && (call || path_call) && field_scrutinee(t, i) {
            found.push("`match`/`matches!` on `field()` or `path()`");
        } else if keep[i] && error_pattern && field_guard(t, i + 1) {
            found.push("a guard on the error's `field`");
        }
    }
    found
        .into_iter()
        .map(|how| {
            format!(
                "{}: an error is placed at a field by comparing its text ({how}); use `Error::is_at` or the \
                 error's `FieldPath`",
                s.path
            )
        })
        .collect()
}

/// Whether the `.field()` call at token `i` is what a `match` or a `matches!` compares: `match
/// e.field() {`, `match (&e, e.field()) {`, `matches!(e.field(), …)` (not `e.field().and_then(…)`).
fn field_scrutinee(t: &[String], i: usize) -> bool {
    let tok = |k: usize| t.get(k).map(String::as_str).unwrap_or("");
    // The receiver: a path of names, fields and references (`e`, `&self.err`, `*e`).
    let mut k = i;
    while k > 0
        && (matches!(tok(k - 1), "." | "::" | "&" | "*") || tok(k - 1).chars().all(|c| c.is_alphanumeric() || c == '_'))
    {
        k -= 1;
    }
    let in_matches = k >= 2 && tok(k - 1) == "(" && tok(k - 2) == "matches!" && tok(i + 4) == ",";
    let after = (i + 4..t.len()).find(|&j| tok(j) != ")").unwrap_or(t.len());
    let in_match = tok(after) == "{" && {
        let start = (0..i).rev().find(|&j| matches!(tok(j), ";" | "{" | "}" | "=>" | "match")).unwrap_or(0);
        tok(start) == "match"
    };
    // What it is compared with, up to the `)` of `matches!` or the `}` of the match: a literal arm
    // (`Some("x")`, `Some("x" | "y")`, the literal dropped) or an `==`/`!=` on what it binds; a
    // bare binding (`Some(f) => note.about(f)`) is no comparison.
    let body_start = if in_matches { i + 5 } else { after + 1 };
    let mut depth = 0i32;
    let mut compared = false;
    for j in body_start..t.len() {
        match tok(j) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth == 0 => break,
            ")" | "]" | "}" => depth -= 1,
            _ => {}
        }
        compared |= (tok(j) == "Some" && tok(j + 1) == "(" && matches!(tok(j + 2), ")" | "|"))
            || (matches!(tok(j), "=" | "!") && tok(j + 1) == "=");
    }
    (in_matches || in_match) && compared
}

/// Whether the error pattern whose fields open at token `open` (`{`) binds the field and its
/// guard (`if …` up to `=>` or the closing parenthesis of a `matches!`) compares it as text.
fn field_guard(t: &[String], open: usize) -> bool {
    let tok = |k: usize| t.get(k).map(String::as_str).unwrap_or("");
    let Some(close) = (open..t.len()).find(|&j| tok(j) == "}") else { return false };
    let Some(name) = (open + 1..close)
        .find(|&j| tok(j) == "field")
        .map(|j| if tok(j + 1) == ":" { tok(j + 2).to_string() } else { "field".to_string() })
    else {
        return false;
    };
    if tok(close + 1) != "if" {
        return false;
    }
    let mut depth = 0i32;
    for j in close + 2..t.len() {
        match tok(j) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth == 0 => return false,
            ")" | "]" | "}" => depth -= 1,
            "=" if depth == 0 && tok(j + 1) == ">" => return false,
            _ => {}
        }
        if tok(j) != name {
            continue;
        }
        let compared = matches!((tok(j + 1), tok(j + 2)), ("=", "=") | ("!", "="))
            || (tok(j + 1) == "." && matches!(tok(j + 2), "starts_with" | "ends_with" | "contains" | "as_str" | "eq"))
            || (j >= 2 && tok(j - 1) == "=" && matches!(tok(j - 2), "=" | "!"));
        if compared {
            return true;
        }
    }
    false
}

/// Rule 12: the public type names `s` declares (`pub struct|enum|type|trait Name`; not
/// `pub(crate)` and narrower).
fn public_type_names(s: &Source) -> Vec<String> {
    let t = &s.tokens;
    (1..t.len().saturating_sub(1))
        .filter(|&i| t[i - 1] == "pub" && matches!(t[i].as_str(), "struct" | "enum" | "type" | "trait"))
        .map(|i| t[i + 1].clone())
        .collect()
}

/// Rule 12 over `files` (`(crate, source)`): each public type name declared in more than one file,
/// beyond `left`, and each name of `left` no longer so declared.
fn duplicate_type_names(files: &[(&str, &Source)], left: &[&str]) -> Vec<String> {
    let mut homes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (krate, s) in files {
        for name in public_type_names(s) {
            homes.entry(name).or_default().insert(format!("{krate}/{}", s.path));
        }
    }
    let mut problems: Vec<String> = homes
        .iter()
        .filter(|(name, files)| files.len() > 1 && !left.contains(&name.as_str()))
        .map(|(name, files)| {
            format!(
                "`{name}` is a public type in {} files ({}): reuse one type for one concept, or name each \
                 for what it holds",
                files.len(),
                files.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    problems.extend(
        left.iter()
            .filter(|name| homes.get(**name).is_none_or(|f| f.len() < 2))
            .map(|name| format!("`{name}` is no longer declared twice: strike it off DUPLICATE_TYPE_NAMES_LEFT")),
    );
    problems
}

/// Rule 13: what `s` re-exports from another top-level module of core, as paths below `crate::`
/// (`resolve::UserEntries`), directly or through a name a private `use crate::…` brought in
/// (`use crate::schema::check;` then `pub use check::Problems;`: `schema::check::Problems`); none
/// for the crate root, whose re-exports are its table of contents.
fn cross_module_reexports(s: &Source) -> Vec<String> {
    let Some(own) = s.module.first() else { return Vec::new() };
    let t: Vec<&str> = s.tokens.iter().map(String::as_str).collect();
    let end_of = |i: usize| (i..t.len()).find(|&j| t[j] == ";").unwrap_or(t.len());
    let elsewhere = |p: &String| p.split("::").next() != Some(own.as_str());
    // The names private imports from other modules give here, with the path each stands for.
    let mut through: BTreeMap<String, String> = BTreeMap::new();
    for i in 0..t.len() {
        if t[i..].starts_with(&["use", "crate", "::"]) && (i == 0 || t[i - 1] != "pub") {
            for p in use_paths(&t[i + 3..end_of(i)]).into_iter().filter(elsewhere) {
                through.insert(p.rsplit("::").next().unwrap_or_default().to_string(), p);
            }
        }
    }
    let mut out = Vec::new();
    for i in 0..t.len() {
        if t[i..].starts_with(&["pub", "use", "crate", "::"]) {
            out.extend(use_paths(&t[i + 4..end_of(i)]).into_iter().filter(elsewhere));
        } else if t[i..].starts_with(&["pub", "use"])
            && let Some(home) = t.get(i + 2).and_then(|name| through.get(*name))
        {
            let rest = use_paths(&t[i + 3..end_of(i)]);
            if rest.is_empty() {
                out.push(home.clone());
            }
            out.extend(rest.into_iter().map(|p| format!("{home}::{p}")));
        }
    }
    out
}

/// The paths a `use` tree names (`a::{b::C, d as e}` → `a::b::C`, `a::d`).
fn use_paths(t: &[&str]) -> Vec<String> {
    let join =
        |prefix: &[&str], rest: String| if prefix.is_empty() { rest } else { format!("{}::{rest}", prefix.join("::")) };
    let mut prefix: Vec<&str> = Vec::new();
    for (k, tok) in t.iter().enumerate() {
        match *tok {
            "::" => {}
            "as" => break,
            "{" => {
                let inner = &t[k + 1..t.len().saturating_sub(1).max(k + 1)];
                let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
                for j in 0..=inner.len() {
                    match inner.get(j).copied() {
                        Some("{") => depth += 1,
                        Some("}") => depth -= 1,
                        Some(",") | None if depth == 0 => {
                            out.extend(use_paths(&inner[start..j]).into_iter().map(|p| join(&prefix, p)));
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return out;
            }
            seg => prefix.push(seg),
        }
    }
    if prefix.is_empty() { Vec::new() } else { vec![prefix.join("::")] }
}

/// Rule 13 over `sources` with `left` allowed: each re-export not in `left`, and each row of
/// `left` no longer found.
fn reexport_problems(sources: &[Source], left: &[(&str, &str)]) -> Vec<String> {
    let found: BTreeSet<(String, String)> =
        sources.iter().flat_map(|s| cross_module_reexports(s).into_iter().map(|p| (s.path.clone(), p))).collect();
    let mut problems: Vec<String> = found
        .iter()
        .filter(|(f, p)| !left.contains(&(f.as_str(), p.as_str())))
        .map(|(f, p)| {
            format!("{f}: re-exports `crate::{p}` from another module; import it from its home where it is used")
        })
        .collect();
    problems.extend(
        left.iter()
            .filter(|(f, p)| !found.contains(&(f.to_string(), p.to_string())))
            .map(|(f, p)| format!("{f}: no longer re-exports `crate::{p}`; strike it from the allowance")),
    );
    problems
}

/// Rule 9: how many `Result<…, String>` `s` writes outside its unit tests.
fn string_results(s: &Source) -> usize {
    let t = &s.tokens;
    let keep = outside_tests(t);
    let mut n = 0;
    for i in 0..t.len().saturating_sub(1) {
        if !keep[i] || t[i] != "Result" || t[i + 1] != "<" {
            continue;
        }
        let mut depth = 0;
        for j in i + 1..t.len() {
            match t[j].as_str() {
                "<" => depth += 1,
                ">" if t[j - 1] != "-" => {
                    depth -= 1;
                    if depth == 0 {
                        n += usize::from(j >= 2 && t[j - 1] == "String" && t[j - 2] == ",");
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    n
}

/// The paths reached from `tokens[i]` (just after a root's `::`), each as its names, groups
/// expanded (`{ops::{A, B}, block}` → `ops A`, `ops B`, `block`); the index after the path.
fn paths_after(t: &[String], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        match t.get(i).map(String::as_str) {
            Some("{") => {
                let mut out = Vec::new();
                i += 1;
                while i < t.len() && t[i] != "}" {
                    let (inner, next) = paths_after(t, i);
                    out.extend(inner.into_iter().map(|p| prefix.iter().cloned().chain(p).collect::<Vec<_>>()));
                    i = next;
                    // Skip `as name` and reach the next item or the group's end.
                    while i < t.len() && t[i] != "," && t[i] != "}" {
                        i += 1;
                    }
                    if t.get(i).map(String::as_str) == Some(",") {
                        i += 1;
                    }
                }
                return (out, i + 1);
            }
            Some(name) if name.chars().all(|c| c.is_alphanumeric() || c == '_') || name == "*" => {
                prefix.push(name.to_string());
                i += 1;
                if t.get(i).map(String::as_str) != Some("::") {
                    return (vec![prefix], i);
                }
                i += 1;
            }
            _ => return (vec![prefix], i),
        }
    }
}

/// Every absolute path a source names through `crate::` or `super::` outside its `#[cfg(test)]`
/// items, as module names from the crate root (`super::ops::X` in `extended/block.rs` →
/// `extended ops X`).
fn absolute_paths(src: &Source) -> Vec<Vec<String>> {
    let t = &src.tokens;
    let keep = outside_tests(t);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < t.len() {
        let root = (t[i] == "crate" || t[i] == "super") && t[i + 1] == "::" && (i == 0 || t[i - 1] != "::");
        if !root || !keep[i] {
            i += 1;
            continue;
        }
        let mut base: Vec<String> = Vec::new();
        let mut j = i;
        if t[i] == "super" {
            base = src.module.clone();
            while t.get(j).map(String::as_str) == Some("super") && t.get(j + 1).map(String::as_str) == Some("::") {
                base.pop();
                j += 2;
            }
        } else {
            j += 2;
        }
        let (paths, next) = paths_after(t, j);
        out.extend(paths.into_iter().map(|p| base.iter().cloned().chain(p).collect()));
        i = next.max(i + 1);
    }
    out
}

/// The files of `extended/` (as `ops`, `moe/layer`) that `src` imports, itself excluded: a path
/// names a file's module, or a name that `extended/mod.rs` or `extended/moe/mod.rs` re-exports
/// from one. Paths leaving `extended/` are not counted.
fn extended_imports(src: &Source, files: &BTreeSet<String>, reexports: &BTreeMap<String, String>) -> BTreeSet<String> {
    let own = src.module[1..].join("/");
    let mut used = BTreeSet::new();
    for p in absolute_paths(src) {
        if p.first().map(String::as_str) != Some("extended") {
            continue;
        }
        // The longest prefix that is a file, else a re-export of the module the path is in.
        let mut target = None;
        for n in (1..p.len()).rev() {
            let module = p[1..=n].join("/");
            if files.contains(&module) {
                target = Some(module);
                break;
            }
            if let Some(m) = reexports.get(&module) {
                target = Some(m.clone());
                break;
            }
        }
        if let Some(m) = target.filter(|m| *m != own) {
            used.insert(m);
        }
    }
    used
}

/// What `extended/mod.rs` and `extended/moe/mod.rs` re-export from their files:
/// `pub use evaluate::{Breakdown, …}` → `Breakdown` → `evaluate` (keys as paths: `moe/MoeBreakdown`).
fn extended_reexports(sources: &[Source], files: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for s in sources.iter().filter(|s| s.path == "extended/mod.rs" || s.path == "extended/moe/mod.rs") {
        let dir = s.module[1..].join("/");
        let t = &s.tokens;
        for i in 0..t.len().saturating_sub(2) {
            if t[i] != "pub" || t[i + 1] != "use" {
                continue;
            }
            for p in paths_after(t, i + 2).0 {
                let (Some(first), Some(last)) = (p.first(), p.last()) else { continue };
                let file = if dir.is_empty() { first.clone() } else { format!("{dir}/{first}") };
                if files.contains(&file) {
                    let name = if dir.is_empty() { last.clone() } else { format!("{dir}/{last}") };
                    map.insert(name, file);
                }
            }
        }
    }
    map
}

/// The file graph inside `extended/`: file → files it imports (outside unit tests).
fn extended_graph(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let in_extended = |s: &&Source| s.top() == "extended" && !s.path.ends_with("mod.rs");
    let files: BTreeSet<String> = sources.iter().filter(in_extended).map(|s| s.module[1..].join("/")).collect();
    let reexports = extended_reexports(sources, &files);
    sources
        .iter()
        .filter(in_extended)
        .map(|s| (s.module[1..].join("/"), extended_imports(s, &files, &reexports)))
        .collect()
}

/// Rule 10: every problem of the file graph inside `extended/` against `stages` (lowest first),
/// leaving out the edges in `known` (which must still exist): a file not in a stage, an import of
/// a later stage, a cycle of files (each strongly connected set once).
fn extended_problems(sources: &[Source], stages: &[(&str, &[&str])], known: &[(&str, &str)]) -> Vec<String> {
    let full = extended_graph(sources);
    let stage_of = |f: &str| stages.iter().position(|(_, files)| files.contains(&f));
    let mut problems = Vec::new();
    for &(from, to) in known {
        if !full.get(from).is_some_and(|used| used.contains(to)) {
            problems.push(format!(
                "extended/{from} no longer imports {to}: delete it from KNOWN_EXTENDED_EDGES in tests/tidy.rs"
            ));
        }
    }
    let graph: BTreeMap<String, BTreeSet<String>> = full
        .into_iter()
        .map(|(f, used)| {
            let kept = used.into_iter().filter(|u| !known.contains(&(f.as_str(), u.as_str()))).collect();
            (f, kept)
        })
        .collect();
    for (file, used) in &graph {
        let Some(s) = stage_of(file) else {
            problems.push(format!("extended/{file}.rs is in no stage: add it to EXTENDED_STAGES in tests/tidy.rs"));
            continue;
        };
        for u in used {
            if let Some(su) = stage_of(u).filter(|&su| su > s) {
                problems.push(format!(
                    "extended/{file} (stage {}) imports {u} (stage {}, later): move what it needs down to its stage or below",
                    stages[s].0, stages[su].0
                ));
            }
        }
    }
    let mut seen: BTreeSet<&String> = BTreeSet::new();
    for f in graph.keys() {
        if seen.contains(f) {
            continue;
        }
        let with: Vec<&String> =
            graph.keys().filter(|n| *n != f && path(&graph, f, n).is_some() && path(&graph, n, f).is_some()).collect();
        if with.is_empty() {
            continue;
        }
        seen.insert(f);
        seen.extend(with.iter().copied());
        let shortest = graph[f].iter().filter_map(|n| path(&graph, n, f)).min_by_key(Vec::len).unwrap_or_default();
        problems.push(format!("extended/ files form a cycle: {f} → {}", shortest.join(" → ")));
    }
    problems
}

fn read_tree(root: &Path) -> Vec<Source> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<Source>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.push(Source::new(&rel, &std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn core_keeps_its_layers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_tree(&dir.join("src"));
    assert!(sources.len() > 50, "read {} files", sources.len());
    assert!(sources.iter().any(|s| s.path == "reference/evaluate.rs"));
    let mut problems = check(&sources, KNOWN_CYCLE);
    problems.extend(check_manifest(&std::fs::read_to_string(dir.join("Cargo.toml")).unwrap()));
    assert!(problems.is_empty(), "fmperf-core breaks its layers:\n{}", problems.join("\n"));
}

#[test]
fn no_module_cycles() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_tree(&dir.join("src"));
    assert!(sources.iter().any(|s| s.path == "vocab/mod.rs"), "read {} files", sources.len());
    let problems = module_cycles(&sources, KNOWN_MODULE_CYCLES);
    assert!(problems.is_empty(), "fmperf-core's modules form cycles:\n{}", problems.join("\n"));
}

#[test]
fn extended_is_a_pipeline() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_tree(&dir.join("src"));
    assert!(sources.iter().any(|s| s.path == "extended/moe/layer.rs"), "read {} files", sources.len());
    let problems = extended_problems(&sources, EXTENDED_STAGES, KNOWN_EXTENDED_EDGES);
    assert!(problems.is_empty(), "extended/ breaks its stages:\n{}", problems.join("\n"));
}

#[test]
fn mode_branches_live_in_the_pricer() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_tree(&dir.join("src"));
    assert!(sources.iter().any(|s| s.path == "cost.rs"), "read {} files", sources.len());
    let problems = mode_branch_problems(&sources, MODE_BRANCHES_LEFT);
    assert!(problems.is_empty(), "fmperf-core branches on the mode outside the pricer:\n{}", problems.join("\n"));
}

/// The workspace's source folders, `(crate, folder relative to core's manifest)`: the rules that
/// look past core read them all.
const WORKSPACE_SOURCES: &[(&str, &str)] = &[
    ("core", "src"),
    ("app", "../app/src"),
    ("chart", "../chart/src"),
    ("cli", "../cli/src"),
    ("launch", "../launch/src"),
    ("first-view", "../first-view/src"),
    ("page", "../../src"),
];
/// The workspace's integration-test folders, as [`WORKSPACE_SOURCES`].
const WORKSPACE_TESTS: &[(&str, &str)] =
    &[("core tests", "tests"), ("cli tests", "../cli/tests"), ("launch tests", "../launch/tests")];

/// Every file of `folders` with its crate's name (a folder that yields none fails).
fn read_folders(folders: &[(&'static str, &str)]) -> Vec<(&'static str, Source)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for &(krate, src) in folders {
        let sources = read_tree(&dir.join(src));
        assert!(!sources.is_empty(), "read no files of {krate}");
        out.extend(sources.into_iter().map(|s| (krate, s)));
    }
    out
}

/// What `rule` finds in each file of `files`, each line led by the file's crate.
fn per_crate(files: &[(&str, Source)], rule: fn(&Source) -> Vec<String>) -> Vec<String> {
    files.iter().flat_map(|(krate, s)| rule(s).into_iter().map(move |p| format!("{krate} {p}"))).collect()
}

#[test]
fn mode_variants_have_one_home_per_crate() {
    let files: Vec<(&str, Source)> =
        read_folders(WORKSPACE_SOURCES).into_iter().filter(|(krate, _)| *krate != "core").collect();
    assert!(files.iter().any(|(k, s)| *k == "page" && s.path == "mode_panel.rs"), "read {} files", files.len());
    let problems = mode_home_problems(&files, MODE_HOMES_OUTSIDE_CORE);
    assert!(problems.is_empty(), "crates name the mode's variants outside their home:\n{}", problems.join("\n"));
}

#[test]
fn options_presence_lives_with_the_mode() {
    let files = read_folders(WORKSPACE_SOURCES);
    assert!(
        files.iter().any(|(k, s)| *k == "core" && s.path == "resolve/mode_inputs.rs"),
        "read {} files",
        files.len()
    );
    let problems = options_test_problems(&files, OPTIONS_HOMES, OPTIONS_TESTS_LEFT);
    assert!(problems.is_empty(), "the workspace tests the mode's switches for presence:\n{}", problems.join("\n"));
}

#[test]
fn moe_branches_past_core_only_shrink() {
    let files = read_folders(WORKSPACE_SOURCES);
    assert!(
        files.iter().any(|(k, s)| *k == "page" && s.path == "pages/explorer/state.rs"),
        "read {} files",
        files.len()
    );
    let problems = moe_branch_past_core_problems(&files, MOE_BRANCHES_PAST_CORE_LEFT);
    assert!(problems.is_empty(), "the workspace branches on MoE-ness past core:\n{}", problems.join("\n"));
}

#[test]
fn notes_are_typed() {
    let problems = per_crate(&read_folders(WORKSPACE_SOURCES), string_note_lists);
    assert!(problems.is_empty(), "note lists typed as strings:\n{}", problems.join("\n"));
}

#[test]
fn errors_are_placed_by_path() {
    let files = read_folders(&[WORKSPACE_SOURCES, WORKSPACE_TESTS].concat());
    let problems = per_crate(&files, string_field_comparisons);
    assert!(problems.is_empty(), "errors placed by comparing field text:\n{}", problems.join("\n"));
}

#[test]
fn public_type_names_are_unique() {
    let read = read_folders(WORKSPACE_SOURCES);
    assert!(read.len() > 100, "read only {} files", read.len());
    let files: Vec<(&str, &Source)> = read.iter().map(|(krate, s)| (*krate, s)).collect();
    let problems = duplicate_type_names(&files, DUPLICATE_TYPE_NAMES_LEFT);
    assert!(problems.is_empty(), "public type names declared twice:\n{}", problems.join("\n"));
}

#[test]
fn reexports_stay_home() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_tree(&dir.join("src"));
    let problems = reexport_problems(&sources, &[]);
    assert!(problems.is_empty(), "fmperf-core re-exports across its modules:\n{}", problems.join("\n"));
}

#[test]
fn string_errors_only_shrink() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = read_tree(&dir.join("src"));
    let per_file: Vec<(String, usize)> =
        sources.iter().map(|s| (s.path.clone(), string_results(s))).filter(|(_, n)| *n > 0).collect();
    let total: usize = per_file.iter().map(|(_, n)| n).sum();
    assert_eq!(
        total, STRING_RESULTS_LEFT,
        "core writes {total} `Result<…, String>` (allowance {STRING_RESULTS_LEFT}): type the new ones, or lower the \
         allowance to {total}; by file: {per_file:?}"
    );
}

#[cfg(test)]
mod checker {
    use super::*;

    const LIB: &str = "pub mod catalog; pub mod error; pub mod explore; pub mod extended; pub mod format;\n\
                       pub mod model; pub mod reference; pub mod search; pub mod sweep;\n\
                       pub use model::ModelShape;\npub use error::Error;";

    fn run(files: &[(&str, &str)]) -> Vec<String> {
        let mut all = vec![Source::new("lib.rs", LIB)];
        all.extend(files.iter().map(|(p, t)| Source::new(p, t)));
        check(&all, &[])
    }

    #[test]
    fn reference_importing_search_fails() {
        let p = run(&[("reference/block.rs", "use crate::search::Space;\nfn f() {}")]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("reference/block.rs") && p[0].contains("crate::search"), "{p:?}");
        // Also inside a group, through an inline path, and climbing out with super::.
        assert_eq!(run(&[("reference/a.rs", "use crate::{ModelShape, explore::Task};")]).len(), 1);
        assert_eq!(run(&[("reference/a.rs", "fn f() { crate::sweep::run(); }")]).len(), 1);
        assert_eq!(run(&[("reference/mod.rs", "use super::extended::X;")]).len(), 1);
        assert_eq!(run(&[("reference/layers/mod.rs", "use super::super::search::X;")]).len(), 1);
        // The value types and itself are fine; so is prose naming other modules.
        let fine = "use crate::{Error, ModelShape};\nuse super::block::Row;\n\
                    /// Ties are broken as in `crate::search`.\nconst S: &str = \"crate::search\";";
        assert_eq!(run(&[("reference/candidate.rs", fine)]), Vec::<String>::new());
    }

    #[test]
    fn a_catalog_format_cycle_fails_also_through_a_third_module() {
        let direct = run(&[
            ("catalog/mod.rs", "use crate::format::hint;"),
            ("format/mod.rs", "use crate::catalog::CatalogModel;"),
        ]);
        assert_eq!(direct.len(), 1, "{direct:?}");
        assert!(direct[0].contains("catalog → format") && direct[0].contains("format → catalog"), "{direct:?}");
        let via = run(&[
            ("catalog/mod.rs", "use crate::search::X;"),
            ("search/mod.rs", "use crate::format::Y;"),
            ("format/mod.rs", "fn f() { let _ = crate::catalog::models(); }"),
        ]);
        assert!(via.len() == 1 && via[0].contains("catalog → search → format"), "{via:?}");
        let one_way =
            run(&[("catalog/mod.rs", "use crate::format::Document;"), ("format/mod.rs", "use crate::Error;")]);
        assert_eq!(one_way, Vec::<String>::new());
    }

    #[test]
    fn a_cycle_between_any_modules_fails() {
        let cycles = |files: &[(&str, &str)], known: &[(&str, &str)]| {
            let mut all = vec![Source::new("lib.rs", LIB)];
            all.extend(files.iter().map(|(p, t)| Source::new(p, t)));
            module_cycles(&all, known)
        };
        // search → reference → sweep → search, through a group, a root re-export and `super::`.
        let three = [
            ("search/mod.rs", "use crate::{reference::Evaluator, ModelShape};"),
            ("reference/block.rs", "fn f() { crate::sweep::run(); }"),
            ("sweep/run.rs", "use super::super::search::Search;"),
            ("model.rs", "pub struct ModelShape;"),
        ];
        let p = cycles(&three, &[]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("reference → sweep → search") && p[0].contains("modules reference, search, sweep"),
            "{p:?}"
        );
        // Two separate cycles are two problems; a use left out by the known list closes none.
        let two = [
            three[0],
            three[1],
            three[2],
            ("explore/a.rs", "use crate::format::X;"),
            ("format/b.rs", "use crate::explore::Y;"),
        ];
        assert_eq!(cycles(&two, &[]).len(), 2);
        assert_eq!(cycles(&two, &[("format/b.rs", "explore")]).len(), 1);
        // Layers (each module uses only those below it) and prose are fine.
        let layers = [
            ("search/mod.rs", "use crate::reference::Evaluator;\n/// Unlike `crate::sweep`, …"),
            ("sweep/run.rs", "use crate::{search::Search, reference::Evaluator};"),
            ("reference/block.rs", "use crate::ModelShape;"),
        ];
        assert_eq!(cycles(&layers, &[]), Vec::<String>::new());
    }

    #[test]
    fn the_known_cycle_only_shrinks() {
        let known = [("catalog/mod.rs", "format")];
        let with = |files: &[(&str, &str)]| {
            let mut all = vec![Source::new("lib.rs", LIB)];
            all.extend(files.iter().map(|(p, t)| Source::new(p, t)));
            check(&all, &known)
        };
        let today =
            [("catalog/mod.rs", "use crate::format::parse_value;"), ("format/mod.rs", "use crate::catalog::X;")];
        assert_eq!(with(&today), Vec::<String>::new());
        // Another catalog file closing the cycle fails.
        let more = [today[0], today[1], ("catalog/mapping.rs", "use crate::format::hint;")];
        let p = with(&more);
        assert!(p.len() == 1 && p[0].contains("cycle"), "{p:?}");
        // The known use gone, or the cycle broken elsewhere: the entry must be deleted.
        let p = with(&[("format/mod.rs", "use crate::catalog::X;")]);
        assert!(p.len() == 1 && p[0].contains("delete it from KNOWN_CYCLE"), "{p:?}");
        let p = with(&[today[0], ("format/mod.rs", "use crate::Error;")]);
        assert!(p.len() == 1 && p[0].contains("no longer form a cycle"), "{p:?}");
    }

    #[test]
    fn a_direct_catalog_lookup_outside_the_resolver_fails() {
        // Looking ids up, or mapping a system, outside the homes of rule 5 fails (one problem each).
        for (file, code) in [
            ("explore/inputs.rs", "fn f() { let _ = crate::catalog::find_system(\"x\"); }"),
            ("explore/inputs.rs", "use crate::catalog::{self, find_model};"),
            ("explore/inputs.rs", "use crate::catalog;\nfn f() { catalog::find_model(\"x\").ok(); }"),
            ("sweep/point.rs", "use crate::catalog::to_system_params;"),
            ("sweep/point.rs", "fn f() { let _ = crate::extended::Hardware::from_catalog(s, p, true, &o); }"),
            ("sweep/point.rs", "fn f() { let _ = map_for_extended(s, &o); }"),
        ] {
            let p = run(&[(file, code)]);
            assert!(p.len() == 1 && p[0].contains(file) && p[0].contains("crate::resolve"), "{code}: {p:?}");
        }
        // The catalog and the resolver may (extended mode may map); so may unit tests, listings and
        // the resolver's own API.
        let fine = [
            ("catalog/mod.rs", "pub fn g() { let _ = find_system(\"x\"); let _ = self::find_model(\"y\"); }"),
            ("resolve/mod.rs", "fn g() { let _ = crate::catalog::find_system(\"x\"); }"),
            ("resolve/entries.rs", "fn f() { let _ = Hardware::from_catalog(s, p, true, &o); }"),
            ("extended/hardware.rs", "fn f() { let _ = to_system_params(s, &o); }"),
            ("sweep/resolve.rs", "fn f() { let _ = crate::resolve::builtin_system(\"x\"); }"),
            ("sweep/point.rs", "fn f() { let _ = crate::resolve::hardware(s, p, true, &o); }"),
            ("explore/inputs.rs", "fn f() { let _ = crate::catalog::systems(); let _ = entries.find_model(\"x\"); }"),
            (
                "extended/efficiency.rs",
                "#[cfg(test)]\nmod tests { fn t() { crate::catalog::find_system(\"x\").unwrap(); } }",
            ),
        ];
        assert_eq!(run(&fine), Vec::<String>::new());
        // A test attribute covers its item only.
        let after = "#[cfg(test)]\nfn t() { }\nfn f() { crate::catalog::find_model(\"x\").ok(); }";
        assert_eq!(run(&[("validate/row.rs", after)]).len(), 1);
    }

    #[test]
    fn io_clock_env_threads_and_printing_fail() {
        for (code, named) in [
            ("use std::fs;", "std::fs"),
            ("fn f() { let _ = ::std::env::args(); }", "std::env"),
            ("use std::{collections::HashMap, env};", "std::env"),
            ("fn f() { let t = std::time::Instant::now(); }", "std::time"),
            ("use web_time::Instant;", "Instant"),
            ("fn f() { std::thread::spawn(|| ()); }", "std::thread"),
            ("fn f() { std::process::exit(1) }", "std::process"),
            ("fn f() { println!(\"{}\", 1); }", "println!"),
        ] {
            let p = run(&[("search/topk.rs", code)]);
            assert!(!p.is_empty() && p.iter().all(|m| m.contains("search/topk.rs")), "{code}: {p:?}");
            assert!(p.iter().any(|m| m.contains(named)), "{code}: {p:?}");
        }
        // Comments, strings, compile-time macros and lifetimes are not uses.
        let fine = "// std::fs is not used\nconst A: &str = \"std::env::var\";\nconst B: &str = r#\"Instant\"#;\n\
                    const V: &str = env!(\"CARGO_PKG_VERSION\");\nfn f<'a>(x: &'a str) -> char { 'a' }";
        assert_eq!(run(&[("search/topk.rs", fine)]), Vec::<String>::new());
    }

    #[test]
    fn web_and_thread_crates_fail_in_the_manifest() {
        let toml = "[dependencies]\nserde.workspace = true\nrayon = \"1\"\n\n[dev-dependencies]\ntokio = \"1\"\n";
        let p = check_manifest(toml);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("rayon"));
        assert_eq!(check_manifest("[target.'cfg(x)'.dependencies]\nweb-sys = \"0.3\"\n").len(), 1);
    }

    #[test]
    fn a_new_mode_branch_outside_the_pricer_fails() {
        let src = |p: &str, t: &str| vec![Source::new(p, t)];
        let branch = "fn f(m: ModeKind) -> u32 { match m { ModeKind::Reference => 1, ModeKind::Extended => 2 } }";
        let p = mode_branch_problems(&src("validate/compare.rs", branch), &[]);
        assert!(p.len() == 1 && p[0].contains("validate/compare.rs: 2 mode branches"), "{p:?}");
        // Every form counts: a comparison, `Mode`, a full path, the helpers and a bool flag.
        for code in [
            "fn f(s: &Spec) -> bool { s.mode == Mode::Reference }",
            "fn f() { let _ = crate::mode_kind::ModeKind::Extended; }",
            "fn f(m: &Mode) { if m.is_extended() {} }",
            "fn f(w: &Workload) { if w.is_moe() {} }",
            "pub fn price(c: &Candidate, extended: bool) {}",
            "fn f(s: &Setup) -> bool { s.workload.moe.is_some() }",
            "fn f(w: &Workload) -> bool { w.moe.is_none_or(|m| m.top_k == 1) }",
            "fn f(w: &Workload) { if let Some(m) = &w.moe { g(m) } }",
            "fn f(w: &Workload) -> u32 { match w.moe { None => 1, Some(_) => 2 } }",
        ] {
            assert_eq!(mode_branches(&Source::new("sweep/point.rs", code)).len(), 1, "{code}");
        }
        // The pricer's files, unit tests, prose and other enums are fine.
        assert_eq!(mode_branch_problems(&src("cost.rs", branch), &[]), Vec::<String>::new());
        let fine = "/// In `ModeKind::Extended` …\nconst S: &str = \"ModeKind::Reference\";\n\
                    fn f(k: Kind) { match k { Kind::Extended => {} } }\n\
                    fn g(w: &W) { let is_moe = |i: u64| w.moe_at(i); is_moe(3); }\n\
                    fn h(c: &Class) -> &str { if c.moe { \"moe\" } else { \"dense\" } }\n\
                    fn k(w: W) -> S { S { moe: w.moe, dense: w.moe.map(|m| m.experts) } }\n\
                    #[cfg(test)]\nmod tests { fn t() { let _ = ModeKind::Extended; } }";
        assert_eq!(mode_branch_problems(&src("explore/export.rs", fine), &[]), Vec::<String>::new());
        // Extended mode's cost model prices experts: its MoE branches are the pricing.
        let priced = "fn f(w: &Workload) -> bool { w.moe.is_some() }";
        assert_eq!(mode_branch_problems(&src("extended/moe/evaluate.rs", priced), &[]), Vec::<String>::new());
        assert_eq!(mode_branch_problems(&src("search/mod.rs", priced), &[]).len(), 1);
        // The allowances only shrink: more fails, fewer fails until lowered, a gone file fails.
        let left = [("validate/compare.rs", 2)];
        assert_eq!(mode_branch_problems(&src("validate/compare.rs", branch), &left), Vec::<String>::new());
        let one = "fn f(m: ModeKind) -> bool { m == ModeKind::Extended }";
        let p = mode_branch_problems(&src("validate/compare.rs", one), &left);
        assert!(p.len() == 1 && p[0].contains("lower its entry"), "{p:?}");
        let p = mode_branch_problems(&src("validate/holdout.rs", one), &left);
        assert!(p.len() == 2 && p.iter().any(|m| m.contains("validate/compare.rs is gone")), "{p:?}");
    }

    #[test]
    fn a_moe_branch_past_core_fails() {
        let files = |list: &[(&'static str, &str, &str)]| -> Vec<(&'static str, Source)> {
            list.iter().map(|(k, p, t)| (*k, Source::new(p, t))).collect()
        };
        // Every form counts: the predicate, a test of the option, a match on it, an expert count
        // compared with a number either way round.
        for code in [
            "fn f(w: &Workload) -> bool { w.is_moe() }",
            "fn f(s: &Spec) -> bool { s.model_entry.moe.is_some() }",
            "fn f(w: &W) -> u32 { match w.moe { None => 1, Some(_) => 2 } }",
            "fn f(w: &W) { if let Some(m) = &w.moe { g(m) } }",
            "fn f(m: &M) -> bool { m.experts > 1 }",
            "fn f(m: &M) -> bool { m.num_experts == 1 }",
            "fn f(m: &M) -> bool { m.routed_experts >= 2 }",
            "fn f(m: &M) -> bool { if 1 < m.experts { true } else { false } }",
        ] {
            assert_eq!(moe_branches(&Source::new("pages/explorer/state.rs", code)).len(), 1, "{code}");
            let p = moe_branch_past_core_problems(&files(&[("page", "pages/explorer/state.rs", code)]), &[]);
            assert!(p.len() == 1 && p[0].contains("1 branches on MoE-ness"), "{code}: {p:?}");
        }
        // Asking by name, counts compared with counts, shared experts, unit tests, core and the
        // launch readers are fine.
        let fine = "fn f(k: ModeKind, e: &E) -> bool { k.prices_experts(e.moe.as_ref()) == Some(true) }\n\
                    fn g(m: &M, n: u64) -> bool { m.experts > n && m.shared_experts > 0 }\n\
                    fn h(m: &M) -> u64 { m.experts * 2 }\n\
                    #[cfg(test)]\nmod tests { fn t(w: &W) -> bool { w.moe.is_some() } }";
        assert_eq!(moe_branches(&Source::new("a.rs", fine)), Vec::<String>::new());
        let branch = "fn f(w: &W) -> bool { w.moe.is_some() }";
        assert_eq!(moe_branch_past_core_problems(&files(&[("core", "explore/priced.rs", branch)]), &[]).len(), 0);
        assert_eq!(moe_branch_past_core_problems(&files(&[("launch", "scenario/experts.rs", branch)]), &[]).len(), 0);
        // The allowance only shrinks: more fails, fewer fails until lowered, a gone file fails.
        let left = [("cli", "cmd/estimate.rs", 1)];
        assert_eq!(moe_branch_past_core_problems(&files(&[("cli", "cmd/estimate.rs", branch)]), &left).len(), 0);
        let two = "fn f(w: &W) -> bool { w.moe.is_some() || w.is_moe() }";
        let p = moe_branch_past_core_problems(&files(&[("cli", "cmd/estimate.rs", two)]), &left);
        assert!(p.len() == 1 && p[0].contains("where 1 are left"), "{p:?}");
        let p = moe_branch_past_core_problems(&files(&[("cli", "cmd/estimate.rs", "")]), &left);
        assert!(p.len() == 1 && p[0].contains("lower its entry in MOE_BRANCHES_PAST_CORE_LEFT"), "{p:?}");
        let p = moe_branch_past_core_problems(&files(&[("cli", "cmd/search.rs", "")]), &left);
        assert!(p.len() == 1 && p[0].contains("cmd/estimate.rs is gone"), "{p:?}");
    }

    #[test]
    fn an_options_presence_test_outside_its_home_fails() {
        let files = |list: &[(&'static str, &str, &str)]| -> Vec<(&'static str, Source)> {
            list.iter().map(|(k, p, t)| (*k, Source::new(p, t))).collect()
        };
        let homes = [("core", "resolve/mode_inputs.rs")];
        let test = "fn f(m: &Mode) -> bool { m.options().is_some() }";
        let p = options_test_problems(&files(&[("core", "resolve/explorer.rs", test)]), &homes, &[]);
        assert!(p.len() == 1 && p[0].starts_with("core resolve/explorer.rs: 1 presence tests"), "{p:?}");
        // Every form counts, once per call.
        for code in [
            "fn f(m: &Mode) -> bool { m.options().is_none() }",
            "fn f(m: &Mode) { if let Some(o) = m.options() { g(o) } }",
            "fn f(m: &Mode) -> u32 { match m.options() { None => 1, Some(_) => 2 } }",
            "fn f(m: &Mode) { let Some(&o) = m.options() else { return }; g(o) }",
            "fn f(m: &Mode, e: Option<&str>) { let (Some(e), Some(o)) = (e, m.options()) else { return }; }",
            "fn f(m: &Mode) -> String { m.options().map(|o| o.to_text()).unwrap_or_default() }",
            "fn f(m: &Mode) -> Option<u8> { let o = m.options()?; Some(o.x) }",
            "fn f(s: &Spec) -> bool { s.mode.options().map_or(false, |o| o.x) }",
        ] {
            assert_eq!(options_tests(&Source::new("cmd/search.rs", code)).len(), 1, "{code}");
        }
        // Homes, unit tests, the method's definition, other calls, prose and literals are fine.
        assert_eq!(options_test_problems(&files(&[("core", "resolve/mode_inputs.rs", test)]), &homes, &[]).len(), 0);
        let fine = "/// `m.options().is_some()` …\nconst S: &str = \"m.options()\";\n\
                    pub fn options(&self) -> Option<&O> { None }\n\
                    fn f(s: &S, m: &M) { s.mapping_options(); experts::options(m, f); m.options(x); m.kind().takes_switches(); }\n\
                    #[cfg(test)]\nmod tests { fn t(m: &Mode) { m.options().unwrap(); } }";
        assert_eq!(options_test_problems(&files(&[("cli", "cmd/search.rs", fine)]), &homes, &[]), Vec::<String>::new());
        // The home is the crate's file: the same path in another crate is not a home.
        assert_eq!(options_test_problems(&files(&[("app", "resolve/mode_inputs.rs", test)]), &homes, &[]).len(), 1);
        // The allowances only shrink: more fails, fewer fails until lowered, a gone file fails.
        let left = [("page", "pages/explorer/breakdown.rs", 1)];
        let two = "fn f(m: &Mode) { m.options()?; m.options()?; }";
        assert_eq!(
            options_test_problems(&files(&[("page", "pages/explorer/breakdown.rs", test)]), &homes, &left).len(),
            0
        );
        let p = options_test_problems(&files(&[("page", "pages/explorer/breakdown.rs", two)]), &homes, &left);
        assert!(p.len() == 1 && p[0].contains("2 presence tests") && p[0].contains("where 1 are left"), "{p:?}");
        let p = options_test_problems(&files(&[("page", "pages/explorer/breakdown.rs", "")]), &homes, &left);
        assert!(p.len() == 1 && p[0].contains("lower its entry"), "{p:?}");
        let p = options_test_problems(&files(&[("page", "app.rs", "")]), &homes, &left);
        assert!(p.len() == 1 && p[0].contains("is gone"), "{p:?}");
    }

    #[test]
    fn a_mode_variant_outside_its_crates_home_fails() {
        let files = |list: &[(&'static str, &str, &str)]| -> Vec<(&'static str, Source)> {
            list.iter().map(|(k, p, t)| (*k, Source::new(p, t))).collect()
        };
        let branch =
            "fn f(m: ModeKind) -> &str { match m { ModeKind::Reference => \"a\", ModeKind::Extended => \"b\" } }";
        // A page file that words the modes itself fails, naming the crate, the file and the variants.
        let p = mode_home_problems(&files(&[("page", "mode_panel.rs", branch)]), &[]);
        assert!(p.len() == 1 && p[0].starts_with("page mode_panel.rs: names the mode's variants"), "{p:?}");
        assert!(p[0].contains("ModeKind::Reference, ModeKind::Extended"), "{p:?}");
        // Every form counts: `Mode`'s variants, a full path, a comparison, the helper, a bool flag.
        for code in [
            "fn f(m: &Mode) -> bool { matches!(m, Mode::Extended(_)) }",
            "fn f() { let _ = fmperf_core::mode_kind::ModeKind::Extended; }",
            "fn f(k: ModeKind) -> bool { k == ModeKind::Reference }",
            "fn f(m: &Mode) { if m.is_extended() {} }",
            "pub fn run(extended: bool) {}",
        ] {
            assert_eq!(mode_variants(&Source::new("cmd/search.rs", code)).len(), 1, "{code}");
        }
        // Asking the mode, MoE-ness, other enums, prose, literals and unit tests are fine.
        let fine = "/// `ModeKind::Extended` …\nconst S: &str = \"Mode::Reference\";\n\
                    fn f(k: ModeKind) -> &'static str { if k.takes_switches() { k.title() } else { k.label() } }\n\
                    fn g(s: &S) -> bool { s.moe.is_some() && s.settings.moe.is_moe() }\n\
                    fn h(k: Kind) { match k { Kind::Extended => {} } }\n\
                    #[cfg(test)]\nmod tests { fn t() { let _ = ModeKind::Extended; } }";
        assert_eq!(mode_home_problems(&files(&[("launch", "lib.rs", fine)]), &[]), Vec::<String>::new());
        // The home may keep its allowance; the same file in another crate may not.
        let home = [("cli", "cmd/search.rs", 2)];
        assert_eq!(mode_home_problems(&files(&[("cli", "cmd/search.rs", branch)]), &home), Vec::<String>::new());
        assert_eq!(mode_home_problems(&files(&[("app", "cmd/search.rs", branch)]), &home).len(), 2);
        // The allowance only shrinks: more fails, fewer fails until lowered, a gone home fails.
        let one = "fn f(k: ModeKind) -> bool { k == ModeKind::Extended }";
        let p = mode_home_problems(&files(&[("cli", "cmd/search.rs", one)]), &home);
        assert!(p.len() == 1 && p[0].contains("lower its entry"), "{p:?}");
        let three = "fn f(k: ModeKind) { g(ModeKind::Reference, ModeKind::Extended, ModeKind::Reference) }";
        let p = mode_home_problems(&files(&[("cli", "cmd/search.rs", three)]), &home);
        assert!(p.len() == 1 && p[0].contains("3 mode variants") && p[0].contains("where 2 are left"), "{p:?}");
        let p = mode_home_problems(&files(&[("cli", "cmd/validate.rs", "")]), &home);
        assert!(p.len() == 1 && p[0].contains("cmd/search.rs is gone"), "{p:?}");
        // One home per crate.
        let two = [("cli", "cmd/search.rs", 0), ("cli", "cmd/validate.rs", 0)];
        let p = mode_home_problems(&files(&[("cli", "cmd/search.rs", ""), ("cli", "cmd/validate.rs", "")]), &two);
        assert!(p.len() == 1 && p[0].contains("two homes"), "{p:?}");
    }

    #[test]
    fn tokens_skip_comments_and_literals() {
        let t = tokens("a /* b /* nested */ c */ d // e\n\"f\\\" g\" 'h' '\\n' r##\"i \"# j\"## k!(x) y != z");
        assert_eq!(t, ["a", "d", "k!", "(", "x", ")", "y", "!", "=", "z"]);
    }

    #[test]
    fn string_note_lists_fail() {
        let bad = [
            "pub struct R { pub notes: Vec<String> }",
            "fn read(text: &str, notes: &mut Vec<String>) {}",
            "struct S<'a> { notes: &'a mut Vec<String> }",
            "fn show(caveats: &[String]) {}",
            "fn widening_notes(&self) -> Vec<String> { Vec::new() }",
            "pub struct E { pub system_notes: Vec<String>, pub assumptions: Vec<String> }",
        ];
        let counts: Vec<usize> = bad.iter().map(|c| string_note_lists(&Source::new("a.rs", c)).len()).collect();
        assert_eq!(counts, [1, 1, 1, 1, 1, 2], "{bad:?}");
        let fine = "pub struct R { pub notes: Vec<Note>, pub sources: Vec<String> }\n\
                    fn read(notes: &mut Vec<Note>) -> Vec<String> { Vec::new() }\n\
                    /// notes: Vec<String> in prose\nconst S: &str = \"notes: Vec<String>\";\n\
                    #[cfg(test)]\nmod tests { fn t(notes: Vec<String>) {} }";
        assert_eq!(string_note_lists(&Source::new("a.rs", fine)), Vec::<String>::new());
    }

    #[test]
    fn string_field_comparisons_fail() {
        let bad = "fn a(e: &Error) -> bool { e.field() == Some(\"layout.etp\") }\n\
                   fn b(e: &Error, f: &str) -> bool { e.field() != Some(f) }\n\
                   fn c(e: &Error) -> bool { e.field() == Some(&format!(\"axis.{}\", 1)) }";
        assert_eq!(string_field_comparisons(&Source::new("a.rs", bad)).len(), 3);
        let fine = "fn a(e: &Error) -> bool { e.is_at(\"layout.etp\") || e.path().is_some_and(|p| p.is_in(\"ext\")) }\n\
                    /// e.field() == Some(\"x\") in prose\nfn b(e: &Error) -> Option<&str> { e.field() }";
        assert_eq!(string_field_comparisons(&Source::new("a.rs", fine)), Vec::<String>::new());
    }

    #[test]
    fn string_routed_errors_fail() {
        // Each routes an error by its field's text: seven problems (`g` has two; `h` compares its path's text).
        let bad = "fn a(e: Error) -> u8 { match e { Error::InvalidField { field, .. } if field == \"ext.x\" => 1, _ => 0 } }\n\
                   fn b(e: &Error) -> bool { matches!(e, Error::MissingField { field: f } if f.starts_with(\"--\")) }\n\
                   fn c(e: &Error) -> &str { match e.field() { Some(\"n_gpus\") => \"--gpus\", _ => \"\" } }\n\
                   fn d(e: &Error) -> bool { match (&e, e.field()) { (_, Some(f)) => f == \"--gpus\", _ => false } }\n\
                   fn g(e: &Error) -> bool { e.field().is_some_and(|f| f == \"top_k\") || matches!(e.field(), Some(\"x\")) }\n\
                   fn h(e: &Error) -> u8 { match e.path() { Some(f) if f.as_str() == \"nvlink\" => 1, _ => 0 } }";
        let found = string_field_comparisons(&Source::new("a.rs", bad));
        assert_eq!(found.len(), 7, "{found:#?}");
        // Not routing by text: a guard on another field, a note's `field`, a field mapped through
        // a table, the path's own tests, and assertions in test code.
        let fine = "fn a(e: Error) -> u8 { match e { Error::InvalidField { field, rule, .. } if !rule.starts_with(\"x\") => 1, _ => 0 } }\n\
                    fn b(n: &Note) -> bool { n.field == \"notes\" }\n\
                    fn c(e: &Error) -> Option<String> { match e.field().and_then(field_for) { Some(p) => Some(p), None => None } }\n\
                    fn d(e: &Error) -> bool { e.path().is_some_and(|p| p.is_in(\"ext\")) }\n\
                    fn e(e: &Error) -> String { match e.path() { Some(f) if f.is_in(\"axis\") => f.group().into(), _ => String::new() } }\n\
                    fn f(e: &Error, n: Note) -> Note { match e.field() { Some(f) => n.about(f), None => n } }\n\
                    #[test]\nfn t() { assert!(matches!(&e, Error::MissingField { field } if field == \"x\")); }\n\
                    #[cfg(test)]\nmod tests { fn u(e: &Error) -> bool { matches!(e.field(), Some(\"x\")) } }";
        assert_eq!(string_field_comparisons(&Source::new("a.rs", fine)), Vec::<String>::new());
    }

    #[test]
    fn duplicated_public_type_names_fail() {
        let a = Source::new(
            "a.rs",
            "pub struct Cell { x: u8 }\npub enum Kind { A }\npub(crate) struct Hidden;\npub type Pair = (u8, u8);",
        );
        let b = Source::new(
            "b.rs",
            "pub enum Cell { Value(f64) }\nstruct Kind;\npub(crate) struct Hidden;\npub trait Pair {}",
        );
        let c = Source::new("c.rs", "/// pub struct Kind in prose\nconst S: &str = \"pub enum Kind\";");
        assert_eq!(public_type_names(&a), ["Cell", "Kind", "Pair"]);
        let files = [("x", &a), ("y", &b), ("y", &c)];
        let problems = duplicate_type_names(&files, &[]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("`Cell`") && problems[0].contains("x/a.rs, y/b.rs"), "{problems:?}");
        assert!(problems[1].contains("`Pair`"), "{problems:?}");
        // An allowed name passes; an allowance no longer needed fails.
        assert_eq!(duplicate_type_names(&files, &["Cell", "Pair"]), Vec::<String>::new());
        let stale = duplicate_type_names(&files, &["Cell", "Pair", "Kind"]);
        assert!(stale.len() == 1 && stale[0].contains("`Kind` is no longer"), "{stale:?}");
    }

    #[test]
    fn cross_module_reexports_fail() {
        // The explorer re-exporting the resolver's catalogs (issue 33 removed it), and a group.
        let entries = Source::new("explore/entries.rs", "pub use crate::resolve::UserEntries;");
        assert_eq!(cross_module_reexports(&entries), ["resolve::UserEntries"]);
        let group = Source::new(
            "validate/mod.rs",
            "pub use crate::{vocab::{MemoryKind, Note as N}, validate::metric::Metric};\npub use compare::Report;",
        );
        assert_eq!(cross_module_reexports(&group), ["vocab::MemoryKind", "vocab::Note"]);
        // Through a private import (the format re-exporting the schema's problems by an old path);
        // a name of the file's own module passes.
        let through = Source::new(
            "format/mod.rs",
            "use crate::schema::check;\nuse crate::format::form;\npub use check::Problems;\npub use form::Form;",
        );
        assert_eq!(cross_module_reexports(&through), ["schema::check::Problems"]);
        // Not across modules: the crate root's table of contents, a module's own files, private uses.
        let fine = [
            Source::new("lib.rs", "pub use resolve::UserEntries;\npub use crate::model::ModelShape;"),
            Source::new("extended/moe/evaluate.rs", "pub use crate::extended::iteration::MoeBreakdown;"),
            Source::new("explore/task.rs", "use crate::resolve::UserEntries;\n/// pub use crate::resolve::X;"),
        ];
        assert!(fine.iter().all(|s| cross_module_reexports(s).is_empty()));
        // An allowed row passes; a new one fails; a stale row fails.
        let sources = [entries, group];
        let left = [("explore/entries.rs", "resolve::UserEntries"), ("validate/mod.rs", "vocab::MemoryKind")];
        let problems = reexport_problems(&sources, &left);
        assert!(problems.len() == 1 && problems[0].contains("`crate::vocab::Note`"), "{problems:?}");
        let stale = reexport_problems(&sources[..1], &left);
        assert!(stale.len() == 1 && stale[0].contains("no longer re-exports `crate::vocab::MemoryKind`"), "{stale:?}");
    }

    #[test]
    fn string_results_are_counted() {
        let code = "fn a() -> Result<u64, String> {}\nfn b() -> Result<(Vec<u8>, Option<String>), String> {}\n\
                    fn c() -> Result<String, Error> {}\nfn d() -> Result<Box<dyn Fn() -> u8>, String> {}\n\
                    /// Result<u8, String>\n#[cfg(test)]\nmod tests { fn t() -> Result<u8, String> {} }";
        assert_eq!(string_results(&Source::new("a.rs", code)), 3);
    }

    const STAGES: &[(&str, &[&str])] =
        &[("inputs", &["options", "moe/options"]), ("operations", &["ops", "moe/layer"]), ("totals", &["evaluate"])];

    fn stages(files: &[(&str, &str)], known: &[(&str, &str)]) -> Vec<String> {
        let mut all = vec![
            Source::new("extended/mod.rs", "pub mod ops; pub mod options; pub use evaluate::{Evaluation, evaluate};"),
            Source::new("extended/moe/mod.rs", "pub mod layer; pub use options::MoeOptions;"),
        ];
        all.extend(files.iter().map(|(p, t)| Source::new(p, t)));
        extended_problems(&all, STAGES, known)
    }

    #[test]
    fn an_import_of_a_later_stage_or_a_cycle_in_extended_fails() {
        let fine = [
            (
                "extended/options.rs",
                "use super::moe::MoeOptions;\n#[cfg(test)]\nmod tests { use crate::extended::evaluate; }",
            ),
            ("extended/moe/options.rs", "pub struct MoeOptions;"),
            ("extended/ops.rs", "use super::options::O;\nuse crate::extended::moe::layer::{self, L};"),
            ("extended/moe/layer.rs", "use super::options::MoeOptions;\nuse crate::extended::options::O;"),
            ("extended/evaluate.rs", "use super::{ops::Op, moe::layer::L};"),
        ];
        assert_eq!(stages(&fine, &[]), Vec::<String>::new());
        // Upward, through a re-export of extended/mod.rs, from a nested file with super::super.
        let up = [("extended/options.rs", "fn f() { let _ = crate::extended::Evaluation::default(); }")];
        let p = stages(&[fine[1], fine[2], fine[3], fine[4], up[0]], &[]);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("extended/options (stage inputs) imports evaluate (stage totals"), "{p:?}");
        assert_eq!(p[1], "extended/ files form a cycle: evaluate → moe/layer → options → evaluate");
        let up = ("extended/moe/options.rs", "use super::super::ops::Op;");
        let p = stages(&[fine[0], up, fine[2], fine[3], fine[4]], &[]);
        assert!(p.len() == 2 && p[0].contains("moe/options (stage inputs) imports ops (stage operations"), "{p:?}");
        assert_eq!(p[1], "extended/ files form a cycle: moe/layer → moe/options → ops → moe/layer");
        // A cycle inside one stage.
        let back = ("extended/moe/layer.rs", "use crate::extended::{ops::{Op, X}, options::O};");
        let p = stages(&[fine[0], fine[1], fine[2], back, fine[4]], &[]);
        assert_eq!(p, ["extended/ files form a cycle: moe/layer → ops → moe/layer"]);
        // Left out while listed; a stale entry and an unlisted file fail.
        assert_eq!(stages(&[fine[0], fine[1], fine[2], back, fine[4]], &[("moe/layer", "ops")]), Vec::<String>::new());
        let p = stages(&fine, &[("moe/layer", "ops")]);
        assert!(p.len() == 1 && p[0].contains("no longer imports ops"), "{p:?}");
        let p = stages(&[fine[0], fine[1], fine[2], fine[3], fine[4], ("extended/new.rs", "")], &[]);
        assert!(p.len() == 1 && p[0].contains("extended/new.rs is in no stage"), "{p:?}");
    }
}
