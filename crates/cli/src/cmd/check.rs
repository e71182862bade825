//! `fmperf check FILE.json`: says what a document is and either that it is valid (with a summary and
//! its warnings) or every problem with field, value, rule and fix. Exit 2 when invalid.

use std::io::Write;

use fmperf_core::Error;
use fmperf_core::catalog::MappingOptions;
use fmperf_core::format::{self, Document, Parsed};
use fmperf_core::schema::{fields, model_fields, system_fields};
use serde_json::{Value, json};

use super::catalog::{one_positional, opt, opt_num, reference_status};
use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};

/// Help text of `fmperf check`.
pub const HELP: &str = "\
fmperf check — validate a model, system or scenario file and explain every problem

USAGE: fmperf check FILE.json [--format table|json]

Accepts fmperf's versioned format (\"schema_version\": 1, \"kind\": \"model\" | \"system\" |
\"scenario\") and the reference's model JSON {\"l\",\"e\",\"h\",\"depth\"[,\"f\"]} and system JSON
(systems/config-<name>.json), recognised by their keys. Prints what the file is, then `valid` and
a summary (plus warnings), or each problem: field (dotted path), value, rule and how to fix it.
Exit status: 0 valid, 2 invalid or unreadable. Field lists: `fmperf show <id> --format json`
prints a complete example of each kind.
";

/// Reads and parses a document file for `command` (`check`, `show`: the name its errors start
/// with); an unreadable or invalid file is one clear usage error.
pub fn read_document(command: &str, path: &str) -> Result<Parsed, CmdError> {
    let text = crate::files::read_text(command, path, crate::files::MAX_INPUT_BYTES)?;
    if let Some(m) = crate::model_files::read("file", path, &text)? {
        return Ok(Parsed {
            document: Document::Model(m),
            origin: format::DocumentFormat::Versioned,
            warnings: Vec::new(),
        });
    }
    format::parse_detailed(&text).map_err(|errs| CmdError::Usage(format!("{path}: {}", first_problem(&errs, path))))
}

/// The first problem of an invalid file in one line, with how many more there are.
pub fn first_problem(errs: &[Error], path: &str) -> String {
    let first = errs.first().map(|e| e.to_string()).unwrap_or_default();
    match errs.len() {
        0 | 1 => first,
        n => format!("{first} (and {} more; run `fmperf check {path}`)", n - 1),
    }
}

fn read_text(path: &str) -> Result<String, CmdError> {
    crate::files::read_text("check", path, crate::files::MAX_INPUT_BYTES)
}

/// Runs `fmperf check`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let args = Args::parse(raw, &["format"], &["help"])?.refuse_trailing()?;
    if args.flag("help") {
        write!(out, "{HELP}")?;
        return Ok(());
    }
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json])?;
    let path = one_positional(&args, "check", "a FILE")?;
    let text = read_text(path)?;
    let framework_model = crate::model_files::read("file", path, &text)?;
    let read_by_launch = framework_model.is_some();
    let result = match framework_model {
        Some(m) => {
            Ok(Parsed { document: Document::Model(m), origin: format::DocumentFormat::Versioned, warnings: Vec::new() })
        }
        None => format::parse_detailed(&text),
    };
    let what = match &result {
        Ok(p) if read_by_launch => {
            format!("{} (a framework's model file, read by fmperf's launch readers)", p.document.kind())
        }
        Ok(p) => format!("{} ({})", p.document.kind(), p.origin.describe()),
        Err(_) => declared_kind(&text),
    };
    if format == OutputFormat::Json {
        let (valid, problems, warnings) = match &result {
            Ok(p) => (true, vec![], p.warnings.iter().map(problem_json).collect::<Vec<_>>()),
            Err(errs) => (false, errs.iter().map(problem_json).collect(), vec![]),
        };
        let v = json!({"file": path, "what": what, "valid": valid, "problems": problems, "warnings": warnings});
        writeln!(out, "{}", serde_json::to_string_pretty(&v).unwrap_or_default())?;
    } else {
        writeln!(out, "{path}: {what}")?;
        match &result {
            Ok(p) => {
                writeln!(out, "valid")?;
                write!(out, "{}", summary(&p.document))?;
                if !p.warnings.is_empty() {
                    writeln!(out, "warnings:")?;
                    for w in &p.warnings {
                        write!(out, "{}", explain(w))?;
                    }
                }
            }
            Err(errs) => {
                let n = errs.len();
                writeln!(out, "invalid: {n} problem{}", if n == 1 { "" } else { "s" })?;
                for e in errs {
                    write!(out, "{}", explain(e))?;
                }
            }
        }
    }
    match result {
        Ok(_) => Ok(()),
        Err(errs) => Err(CmdError::Usage(format!(
            "{path} is invalid ({} problem{})",
            errs.len(),
            if errs.len() == 1 { "" } else { "s" }
        ))),
    }
}

/// What an invalid file says it is (for the header line).
fn declared_kind(text: &str) -> String {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => return "not JSON".to_string(),
    };
    match v.get("kind").and_then(Value::as_str) {
        Some(k) if fields::KIND_NAMES.contains(&k) => format!("{k} (fmperf document)"),
        _ if v.get("schema_version").is_some() => "fmperf document of unknown kind".to_string(),
        _ if v.get("depth").is_some() || v.get("l").is_some() => "reference-format model JSON".to_string(),
        _ if v.get("matrix_flops_fp16").is_some() => "reference-format system JSON".to_string(),
        _ => "unrecognised document".to_string(),
    }
}

/// The field spec for a path, looking through the tables (and into a scenario's model/system).
fn spec_of(path: &str) -> Option<&'static fields::FieldSpec> {
    let (tables, rest): (&[&'static [fields::FieldSpec]], &str) = if let Some(r) = path.strip_prefix("model.") {
        (&[model_fields::MODEL_FIELDS], r)
    } else if let Some(r) = path.strip_prefix("system.preset.") {
        (&[fields::REFERENCE_SYSTEM_FIELDS], r)
    } else if let Some(r) = path.strip_prefix("system.") {
        (&[system_fields::SYSTEM_FIELDS], r)
    } else if let Some(r) = path.strip_prefix("preset.") {
        (&[fields::REFERENCE_SYSTEM_FIELDS], r)
    } else {
        (
            &[
                model_fields::MODEL_FIELDS,
                system_fields::SYSTEM_FIELDS,
                fields::SCENARIO_FIELDS,
                fields::REFERENCE_SYSTEM_FIELDS,
                fields::REFERENCE_MODEL_FIELDS,
                fields::ENVELOPE_FIELDS,
            ],
            path,
        )
    };
    tables.iter().find_map(|t| fields::spec(t, rest))
}

/// One problem (or warning) in words: field, value, rule, fix.
pub fn explain(e: &Error) -> String {
    match e {
        Error::InvalidField { field, value, rule, hint } => {
            let mut s = format!("  - {field}: {value}\n      rule: {rule}\n");
            if let Some(h) = hint {
                s.push_str(&format!("      fix:  {h}\n"));
            }
            s
        }
        Error::UnknownField { field, hint } => {
            format!("  - {field}: unknown field\n      fix:  {}\n", hint.as_deref().unwrap_or("remove it"))
        }
        Error::MissingField { field } => {
            let what = spec_of(field).map(|s| {
                let unit = if s.unit.is_empty() { String::new() } else { format!(", in {}", s.unit) };
                format!(" ({}{unit}; {})", s.description, fmperf_core::schema::check::rule_of(&s.kind))
            });
            format!("  - {field}: missing\n      fix:  add `{field}`{}\n", what.unwrap_or_default())
        }
        Error::Parse { message } => format!("  - {message}\n"),
        other => format!("  - {other}\n"),
    }
}

fn problem_json(e: &Error) -> Value {
    match e {
        Error::InvalidField { field, value, rule, hint } => {
            json!({"problem": "invalid", "field": field, "value": value, "rule": rule, "fix": hint})
        }
        Error::UnknownField { field, hint } => json!({"problem": "unknown_field", "field": field, "fix": hint}),
        Error::MissingField { field } => json!({"problem": "missing", "field": field}),
        Error::Parse { message } => json!({"problem": "parse", "message": message}),
        other => json!({"problem": "other", "message": other.to_string()}),
    }
}

/// A few lines saying what a valid document describes.
fn summary(doc: &Document) -> String {
    match doc {
        Document::Model(m) => {
            let mut s = format!(
                "  model `{}` ({}): seq {} tokens, hidden {}, heads {} ({} key/value), {} layers, ffn {} ({}), vocab {}\n  \
                 reference mode: {}\n",
                m.id,
                m.name,
                opt(m.seq_len),
                opt(m.hidden),
                opt(m.heads),
                opt(m.kv_heads),
                opt(m.layers),
                opt(m.ffn_hidden),
                m.mlp.as_str(),
                opt(m.vocab),
                reference_status(m)
            );
            for c in m.reference_caveats() {
                s.push_str(&format!("    - {c}\n"));
            }
            s
        }
        Document::System(x) => {
            let mut s = format!(
                "  system `{}` ({}): BF16 {} / FP16 {} TFLOP/s, memory {} GB at {} GB/s, scale-up {} GB/s (one direction) \
                 x {} devices, scale-out {} GB/s per device\n",
                x.id,
                x.name,
                opt_num(x.peak_tflops.bf16),
                opt_num(x.peak_tflops.fp16),
                opt_num(x.memory_gb),
                opt_num(x.memory_bw_gbps),
                opt_num(x.scale_up.bw_per_device_unidir_gbps),
                x.scale_up.domain_size,
                opt_num(x.scale_out.nic_gbps_per_device)
            );
            match fmperf_core::resolve::map_system(x, &MappingOptions::default()) {
                Ok(m) => {
                    s.push_str(&format!(
                        "  maps onto the reference model at {} ({} approximation{})\n",
                        m.precision,
                        m.approximations.len(),
                        if m.approximations.len() == 1 { "" } else { "s" }
                    ));
                    for a in &m.approximations {
                        s.push_str(&format!("    - {a}\n"));
                    }
                }
                Err(e) => s.push_str(&format!("  cannot be mapped onto the reference model as it is: {e}\n")),
            }
            s
        }
        Document::Scenario(sc) => match sc.resolve() {
            Ok(r) => format!(
                "  scenario {}: model `{}` on {} x `{}` (domain {}, {}), global batch {}, strategies {}, top {}, budget {}\n",
                sc.name.as_deref().unwrap_or("(unnamed)"),
                r.model.id,
                sc.devices,
                r.system.id,
                r.mapped.params.domain_size,
                r.mapped.precision,
                sc.global_batch,
                sc.strategies.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                sc.top_k,
                r.budget.describe()
            ),
            Err(e) => format!("  scenario cannot be resolved: {e}\n"),
        },
    }
}
