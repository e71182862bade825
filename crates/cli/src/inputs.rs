//! Resolution of `--model` and `--system` arguments: a built-in name or a JSON file. These two
//! functions are the single entry point for model and system inputs of every command.

use std::path::Path;

use fmperf_core::{ModelShape, SystemParams};

use crate::cmd::CmdError;

/// Resolves `--model`: a reference model name (`gpt3`, `gpt3_1T`, `vit_era5`) or a file holding the
/// reference's model object `{"l", "e", "h", "depth"}` (optional `"f"`, default `4·e`). Returns a
/// display name (the built-in name or the file stem) and the shape.
pub fn load_model(arg: &str) -> Result<(String, ModelShape), CmdError> {
    if let Ok(m) = ModelShape::reference(arg) {
        return Ok((arg.to_string(), m));
    }
    let text = read_input("--model", arg, &known_models())?;
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
    let text = read_input("--system", arg, &SystemParams::REFERENCE_NAMES.join(", "))?;
    let s = SystemParams::from_reference_json(&text).map_err(|e| CmdError::Usage(format!("--system {arg}: {e}")))?;
    Ok((stem(arg), s))
}

fn known_models() -> String {
    ModelShape::REFERENCE.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Reads a file argument; a value that is neither a known name nor an existing file is reported as
/// an unknown name when it does not look like a path.
fn read_input(flag: &str, arg: &str, known: &str) -> Result<String, CmdError> {
    let path = Path::new(arg);
    let looks_like_file = arg.ends_with(".json") || arg.contains('/') || arg.contains('\\');
    if !path.exists() && !looks_like_file {
        return Err(CmdError::Usage(format!("{flag} {arg}: unknown name; known: {known} (or a path to a JSON file)")));
    }
    std::fs::read_to_string(path).map_err(|e| CmdError::Usage(format!("{flag} {arg}: cannot read the file: {e}")))
}

fn stem(arg: &str) -> String {
    Path::new(arg).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| arg.to_string())
}
