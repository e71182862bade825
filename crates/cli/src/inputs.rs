//! Resolution of `--model` and `--system` arguments: a built-in name, a catalog id (a system with
//! optional mapping choices, `ID,domain=8,nics=1,precision=bf16,vector=…,scale_up=…,scale_out=…`)
//! or a JSON file in the reference's format or fmperf's versioned format. These two functions are
//! the single entry point for model and system inputs of every command. Ids are looked up and
//! systems mapped by core's resolver ([`fmperf_core::resolve`], against the built-in catalogs); this
//! module reads the files and words the errors for its flags. What reference mode approximates (a
//! catalog model's GQA/SwiGLU, a mapped system's missing values) is noted on stderr.

use std::path::Path;

use fmperf_core::catalog::{self, Precision};
use fmperf_core::extended::{Hardware, Workload};
use fmperf_core::format::{self, Document};
use fmperf_core::hint;
use fmperf_core::resolve::{self, SpecError, UserEntries};
use fmperf_core::vocab::Note;
use fmperf_core::{ModelShape, SystemParams};

use crate::cmd::CmdError;
use crate::cmd::check::first_problem;

/// Resolves `--model`: a reference model name (`gpt3`, `gpt3_1T`, `vit_era5`) or a file holding the
/// reference's model object `{"l", "e", "h", "depth"}` (optional `"f"`, default `4·e`). Returns a
/// display name (the built-in name or the file stem) and the shape.
pub fn load_model(arg: &str) -> Result<(String, ModelShape), CmdError> {
    if let Ok(m) = ModelShape::reference(arg) {
        return Ok((arg.to_string(), m));
    }
    if let Some(found) = catalog_model(arg)? {
        return Ok(found);
    }
    let text = read_input("--model", arg, &format!("{}; {}", known_models(), nearest_ids(arg, "models")))?;
    if let Some(found) = versioned_model(arg, &text)? {
        return Ok(found);
    }
    let m = ModelShape::from_reference_json(&text).map_err(|e| CmdError::Usage(format!("--model {arg}: {e}")))?;
    Ok((stem(arg), m))
}

/// Resolves `--system`: a reference system name (`A100`, `H200`, `B200`, `B200-next`) or a file in
/// the reference's system format (`systems/config-<name>.json`). Returns a display name and the
/// parameters.
pub fn load_system(arg: &str) -> Result<(String, SystemParams), CmdError> {
    if let Ok(s) = SystemParams::reference(arg) {
        return Ok((arg.to_string(), s));
    }
    if let Some(found) = catalog_system(arg)? {
        return Ok(found);
    }
    let known = format!("{}; {}", SystemParams::REFERENCE_NAMES.join(", "), nearest_ids(arg, "systems"));
    let text = read_input("--system", arg, &known)?;
    if let Some(found) = versioned_system(arg, &text)? {
        return Ok(found);
    }
    let s = SystemParams::from_reference_json(&text).map_err(|e| CmdError::Usage(format!("--system {arg}: {e}")))?;
    Ok((stem(arg), s))
}

/// Resolves `--model` for extended mode: a catalog id (with its GQA, SwiGLU and vocabulary), a
/// versioned model file, or a reference model file (as the reference sees it).
pub fn load_workload(arg: &str) -> Result<Workload, CmdError> {
    load_workload_at(arg, None)
}

/// [`load_workload`] with the training sequence length `seq_len` [tokens] given on the command line
/// (`--seq-len`): it replaces the model's own, and gives one to a model file that states none (a
/// Hugging Face config.json).
pub fn load_workload_at(arg: &str, seq_len: Option<u64>) -> Result<Workload, CmdError> {
    let usage = |e: fmperf_core::Error| CmdError::Usage(format!("--model {arg}: {e}"));
    let with_len = |m: &catalog::CatalogModel| {
        let mut m = m.clone();
        if seq_len.is_some() {
            m.seq_len = seq_len;
        }
        if m.seq_len.is_none() {
            return Err(CmdError::Usage(format!(
                "--model {arg}: the model states no training sequence length; give --seq-len TOKENS"
            )));
        }
        resolve::workload(&m).map_err(usage)
    };
    if let Ok(m) = resolve::builtin_model(arg) {
        return with_len(m);
    }
    let text = read_input("--model", arg, &format!("{}; {}", known_models(), nearest_ids(arg, "models")))?;
    match versioned(arg, "--model", &text)? {
        Some(Document::Model(m)) => with_len(&m),
        Some(other) => Err(CmdError::Usage(format!("--model {arg}: is a {} document, not a model", other.kind()))),
        None => {
            let mut w = Workload::from_shape(&ModelShape::from_reference_json(&text).map_err(usage)?);
            if let Some(s) = seq_len {
                w.seq_len = s;
            }
            Ok(w)
        }
    }
}

/// `--domain` and a system spec's `domain=` (`--system ID,domain=8`) must agree: two values are an
/// error naming both, not the flag silently winning.
pub fn domain_agrees(system: &str, domain: Option<u64>) -> Result<(), CmdError> {
    let Some(d) = domain else { return Ok(()) };
    if !system.contains(',') || Path::new(system).exists() {
        return Ok(());
    }
    match resolve::system_spec(UserEntries::builtin(), system) {
        Ok((_, opts)) => match opts.domain_size {
            Some(s) if s != d => Err(CmdError::Usage(format!(
                "--domain {d} and --system {system} (domain={s}) set the scale-up domain differently; give it once"
            ))),
            _ => Ok(()),
        },
        // The spec's own errors are reported where it is read.
        Err(_) => Ok(()),
    }
}

/// Resolves `--system` for extended mode at `precision` (the system spec's `precision=` wins) with
/// `domain` devices per scale-up domain (`None`: the system's): a catalog id or spec, a versioned
/// system file, or a reference system file (its precision follows from its element size). Returns
/// the part and the precision used.
pub fn load_hardware(
    arg: &str,
    precision: Precision,
    measured_ceiling: bool,
    domain: Option<u64>,
) -> Result<(Hardware, Precision), CmdError> {
    let usage = |e: fmperf_core::Error| CmdError::Usage(format!("--system {arg}: {e}"));
    let from_entry = |sys: &catalog::CatalogSystem, mut opts: catalog::MappingOptions| {
        let p = opts.precision.unwrap_or(precision);
        opts.domain_size = domain.or(opts.domain_size);
        let (hw, notes) = resolve::hardware(sys, p, measured_ceiling, &opts).map_err(usage)?;
        note(&notes);
        Ok((hw, p))
    };
    if !Path::new(arg).exists() {
        match resolve::system_spec(UserEntries::builtin(), arg) {
            Ok((entry, opts)) => return from_entry(entry, opts),
            // With `,key=value` choices the argument can only be a catalog spec: its errors are final.
            Err(SpecError::Spec(e) | SpecError::Unknown(e)) if arg.contains(',') => return Err(usage(e)),
            Err(_) => {}
        }
    }
    let known = format!("{}; {}", SystemParams::REFERENCE_NAMES.join(", "), nearest_ids(arg, "systems"));
    let text = read_input("--system", arg, &known)?;
    match versioned(arg, "--system", &text)? {
        Some(Document::System(s)) => from_entry(&s, catalog::MappingOptions::default()),
        Some(other) => Err(CmdError::Usage(format!("--system {arg}: is a {} document, not a system", other.kind()))),
        None => {
            let mut params = SystemParams::from_reference_json(&text).map_err(usage)?;
            if let Some(k) = domain {
                params.domain_size = k;
            }
            let hw = Hardware::from_params(&params, measured_ceiling);
            Ok((hw.clone(), hw.matmul_precision))
        }
    }
}

fn known_models() -> String {
    ModelShape::REFERENCE.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Reads a file argument; a value that is neither a known name nor an existing file is reported as
/// an unknown name when it does not look like a path.
fn read_input(flag: &str, arg: &str, known: &str) -> Result<String, CmdError> {
    if !Path::new(arg).exists() && !looks_like_file(arg) {
        return Err(CmdError::Usage(format!("{flag} {arg}: unknown name; known: {known} (or a path to a JSON file)")));
    }
    crate::files::read_text(flag, arg, crate::files::MAX_INPUT_BYTES)
}

/// Whether a value is written as a path (a `.json` name or one with a separator) rather than as a
/// catalog name.
fn looks_like_file(arg: &str) -> bool {
    arg.ends_with(".json") || arg.contains('/') || arg.contains('\\')
}

/// Reads and parses `arg` when it names an existing file (or looks like a path); the document
/// must be of `kind`.
pub fn file_document(flag: &str, arg: &str, kind: &str) -> Result<Option<Document>, CmdError> {
    if !Path::new(arg).is_file() && !looks_like_file(arg) {
        return Ok(None);
    }
    let text = crate::files::read_text(flag, arg, crate::files::MAX_INPUT_BYTES)?;
    if kind == "model"
        && let Some(m) = crate::model_files::read(flag, arg, &text)?
    {
        return Ok(Some(Document::Model(m)));
    }
    let doc = format::parse(&text).map_err(|errs| {
        let first = errs.first().map(|e| e.to_string()).unwrap_or_else(|| "not a valid document".into());
        CmdError::Usage(format!("{flag} {arg}: {first}"))
    })?;
    if doc.kind() != kind {
        return Err(CmdError::Usage(format!("{flag} {arg}: is a {} document, not a {kind}", doc.kind())));
    }
    Ok(Some(doc))
}

/// The file name of a path without its extension (the whole value when it has none): what an
/// imported document without an id of its own is called.
pub fn stem(arg: &str) -> String {
    Path::new(arg).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| arg.to_string())
}

/// Notes on stderr (stdout stays machine-readable).
fn note(notes: &[Note]) {
    for n in notes {
        match &n.entry {
            Some(entry) => eprintln!("fmperf: note: {entry}: {}", n.text),
            None => eprintln!("fmperf: note: {}", n.text),
        }
    }
}

/// "catalog: nearest ids …" for unknown-name messages.
fn nearest_ids(arg: &str, what: &str) -> String {
    let ids: Vec<&str> = if what == "models" {
        catalog::models().iter().map(|m| m.id.as_str()).collect()
    } else {
        catalog::systems().iter().map(|s| s.id.as_str()).collect()
    };
    format!("catalog ids near it: {} (all: `fmperf catalog {what}`)", hint::closest(arg, ids, 4).join(", "))
}

/// A catalog model by id, reduced to its reference shape (its caveats noted).
fn catalog_model(arg: &str) -> Result<Option<(String, ModelShape)>, CmdError> {
    let Ok(m) = resolve::builtin_model(arg) else { return Ok(None) };
    let shape = resolve::model_shape(m).map_err(|e| CmdError::Usage(format!("--model {arg}: {e}")))?;
    if !m.reference_compatible() {
        note(&resolve::model_notes(m));
    }
    Ok(Some((m.id.clone(), shape)))
}

/// A versioned-format model document (files with `schema_version` or `kind`), else `None`.
fn versioned_model(arg: &str, text: &str) -> Result<Option<(String, ModelShape)>, CmdError> {
    match versioned(arg, "--model", text)? {
        None => Ok(None),
        Some(Document::Model(m)) => {
            let shape = resolve::model_shape(&m).map_err(|e| CmdError::Usage(format!("--model {arg}: {e}")))?;
            if !m.reference_compatible() {
                note(&resolve::model_notes(&m));
            }
            Ok(Some((m.id.clone(), shape)))
        }
        Some(other) => Err(CmdError::Usage(format!("--model {arg}: is a {} document, not a model", other.kind()))),
    }
}

/// A catalog system (with optional `,key=value` mapping choices) mapped onto the reference's
/// parameters, its approximations noted.
fn catalog_system(arg: &str) -> Result<Option<(String, SystemParams)>, CmdError> {
    if Path::new(arg).exists() {
        return Ok(None);
    }
    let usage = |e: fmperf_core::Error| CmdError::Usage(format!("--system {arg}: {e}"));
    // With `,key=value` choices the argument can only be a catalog spec: its errors are final.
    let spec = arg.contains(',');
    let (entry, opts) = match resolve::system_spec(UserEntries::builtin(), arg) {
        Ok(x) => x,
        Err(SpecError::Spec(e) | SpecError::Unknown(e)) if spec => return Err(usage(e)),
        Err(_) => return Ok(None),
    };
    let mapped = resolve::map_system(entry, &opts).map_err(usage)?;
    note(&resolve::mapping_notes(entry, &mapped));
    Ok(Some((arg.to_string(), mapped.params)))
}

/// A versioned-format system document, mapped with the default choices, else `None`.
fn versioned_system(arg: &str, text: &str) -> Result<Option<(String, SystemParams)>, CmdError> {
    match versioned(arg, "--system", text)? {
        None => Ok(None),
        Some(Document::System(s)) => {
            let mapped = resolve::map_system(&s, &Default::default())
                .map_err(|e| CmdError::Usage(format!("--system {arg}: {e}")))?;
            note(&resolve::mapping_notes(&s, &mapped));
            Ok(Some((s.id.clone(), mapped.params)))
        }
        Some(other) => Err(CmdError::Usage(format!("--system {arg}: is a {} document, not a system", other.kind()))),
    }
}

/// Parses `text` with fmperf's versioned format when it is one (an object with `schema_version` or
/// `kind`); `None` for other formats.
fn versioned(arg: &str, flag: &str, text: &str) -> Result<Option<Document>, CmdError> {
    let is_versioned = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("schema_version") || o.contains_key("kind")))
        .unwrap_or(false);
    if !is_versioned {
        // A framework's model file (a Hugging Face config.json): fmperf's model document.
        return Ok(crate::model_files::read(flag, arg, text)?.map(Document::Model));
    }
    format::parse(text)
        .map(Some)
        .map_err(|errs| CmdError::Usage(format!("{flag} {arg}: {}", first_problem(&errs, arg))))
}
