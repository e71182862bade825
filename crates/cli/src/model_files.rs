//! Model files of the frameworks (a Hugging Face `config.json`, a MaxText model YAML) accepted
//! wherever a model file is (`--model FILE`, `fmperf show FILE`, `fmperf check FILE`, sweeps'
//! `--model`): read by fmperf-launch's readers and turned into fmperf's model document.

use std::path::Path;

use fmperf_core::catalog::CatalogModel;
use fmperf_launch::model_document;

use crate::cmd::CmdError;

/// The model of `text` (the file `path`) when it is a framework's model file; `None` when it is
/// another kind of file (fmperf's own JSON, the reference's), left to core's reader.
pub fn read(flag: &str, path: &str, text: &str) -> Result<Option<CatalogModel>, CmdError> {
    let name = Path::new(path).file_name().map(|n| n.to_string_lossy().into_owned());
    if !model_document::is_model_file(text, name.as_deref()) {
        return Ok(None);
    }
    let id = id_of(path);
    model_document::model_document(text, name.as_deref(), &id)
        .map(Some)
        .map_err(|e| CmdError::Usage(format!("{flag} {path}: {e}")))
}

/// An id for the model of `path`: its parent folder's name for a file called `config.json`
/// (`Llama-3-8B/config.json` → `Llama-3-8B`), else the file's stem.
fn id_of(path: &str) -> String {
    let p = Path::new(path);
    let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    if stem == "config"
        && let Some(parent) = p.parent().and_then(|d| d.file_name())
    {
        return parent.to_string_lossy().into_owned();
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_model_folder() {
        assert_eq!(id_of("models/Llama-3-8B/config.json"), "Llama-3-8B");
        assert_eq!(id_of("hf-llama3-8b-config.json"), "hf-llama3-8b-config");
        assert_eq!(id_of("llama2-7b.yml"), "llama2-7b");
    }
}
