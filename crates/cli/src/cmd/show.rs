//! `fmperf show <id|FILE>`: one catalog entry (or document file) with every field, its unit and
//! meaning, its sources and notes, and what the reference model makes of it.

use std::io::Write;

use fmperf_core::catalog::{self, MappingOptions};
use fmperf_core::format::{self, Document};
use fmperf_core::resolve;
use fmperf_core::schema::fields::{FieldSpec, Kind};
use fmperf_core::schema::{fields, model_fields, system_fields};
use serde_json::Value;

use super::catalog::{num, one_positional, reference_status};
use super::check::read_document;
use super::{CmdError, CmdResult};
use crate::args::{Args, OutputFormat};
use crate::table::Table;

/// Help text of `fmperf show`.
pub const HELP: &str = "\
fmperf show — one model or system with every field, its unit, meaning and sources

USAGE: fmperf show <ID|FILE> [--format table|json]

ID is a catalog id (`fmperf catalog models|systems`; the reference's names A100, H200, B200,
B200-next give the exact reference systems) or a JSON file in fmperf's format or the reference's.
`?` = unknown. For a system, the table ends with its mapping onto the reference model's
parameters (default domain size, one NIC per device, BF16 or FP16) and every approximation made.

--format json prints the entry as a document of fmperf's versioned format: edit it and pass the
file to --model/--system, or check it with `fmperf check`.
";

/// Runs `fmperf show`.
pub fn run(raw: Vec<String>, out: &mut dyn Write) -> CmdResult {
    let args = Args::parse(raw, &["format"], &["help"])?.refuse_trailing()?;
    if args.flag("help") {
        write!(out, "{HELP}")?;
        return Ok(());
    }
    let format = OutputFormat::from_args(&args, &[OutputFormat::Table, OutputFormat::Json])?;
    let target = one_positional(&args, "show", "a catalog id or a file")?;
    let doc = lookup(target)?;
    match format {
        OutputFormat::Json => write!(out, "{}", format::to_json(&doc))?,
        _ => write!(out, "{}", describe(&doc))?,
    }
    Ok(())
}

/// A catalog model or system by id, or a document file.
fn lookup(target: &str) -> Result<Document, CmdError> {
    if let Ok(m) = resolve::builtin_model(target) {
        return Ok(Document::Model(m.clone()));
    }
    if let Ok(s) = resolve::builtin_system(target) {
        return Ok(Document::System(s.clone()));
    }
    // Anything at that path (a directory, a pipe: the reader names what it is), or a name that
    // can only be a file.
    if target.ends_with(".json") || std::path::Path::new(target).exists() {
        return read_document("show", target).map(|p| p.document);
    }
    let mut near = fmperf_core::hint::closest(
        target,
        catalog::models().iter().map(|m| m.id.as_str()).chain(catalog::systems().iter().map(|s| s.id.as_str())),
        5,
    );
    near.dedup();
    Err(CmdError::Usage(format!(
        "`{target}` is neither a catalog id nor a file; nearest ids: {} (all: `fmperf catalog models|systems`)",
        near.join(", ")
    )))
}

/// The value at a dotted path of a JSON object.
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |node, key| node.get(key))
}

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "?".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.as_f64().filter(|_| !n.is_u64()).map_or_else(|| n.to_string(), num),
        Some(other) => other.to_string(),
    }
}

/// Longest value shown inside a table cell; longer texts are printed below the table.
const MAX_CELL: usize = 60;

/// Rows `field | value | unit | meaning` of every scalar field of a table; texts longer than
/// [`MAX_CELL`] follow the table as `field: text` lines.
fn field_table(specs: &[FieldSpec], doc: &Value, prefix: &str) -> String {
    let mut t = Table::new(&["field", "value", "unit", "meaning"]);
    let mut long = String::new();
    for s in specs {
        if matches!(s.kind, Kind::Object | Kind::TextList | Kind::ReferenceSystem) {
            continue;
        }
        let value = match (s.kind, at(doc, s.path)) {
            (Kind::ModelRef | Kind::SystemRef, Some(Value::Object(o))) => {
                format!("inline: {}", o.get("id").and_then(Value::as_str).unwrap_or("?"))
            }
            (Kind::ChoiceList(_), Some(Value::Array(a))) => {
                a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
            }
            (_, v) => cell(v),
        };
        let field = format!("{prefix}{}", s.path);
        let value = if value.chars().count() > MAX_CELL {
            long.push_str(&format!("\n{field}:\n  {value}\n"));
            "(below)".to_string()
        } else {
            value
        };
        t.push(vec![field, value, s.unit.to_string(), s.description.to_string()]);
    }
    t.render() + &long
}

fn list<S: AsRef<str>>(title: &str, items: &[S], out: &mut String) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("\n{title}:\n"));
    for (i, s) in items.iter().enumerate() {
        out.push_str(&format!("  [{}] {}\n", i + 1, s.as_ref()));
    }
}

/// The full description of a document: every field with unit and meaning, sources, notes, and
/// the reference model's view of it.
pub fn describe(doc: &Document) -> String {
    let tree: Value = serde_json::from_str(&format::to_json(doc)).unwrap_or(Value::Null);
    let mut s = String::new();
    match doc {
        Document::Model(m) => {
            s.push_str(&format!("model {} — {}\n\n", m.id, m.name));
            s.push_str(&field_table(model_fields::MODEL_FIELDS, &tree, ""));
            list("sources", &m.sources, &mut s);
            list("notes", &m.notes, &mut s);
            s.push_str(&format!("\nreference mode: {}\n", reference_status(m)));
            for c in m.reference_caveats() {
                s.push_str(&format!("  - {c}\n"));
            }
            if let Ok(shape) = m.to_shape() {
                s.push_str(&format!(
                    "  reference shape: l {} e {} h {} depth {} f {}\n",
                    shape.l, shape.e, shape.h, shape.depth, shape.f
                ));
            }
        }
        Document::System(x) => {
            s.push_str(&format!("system {} — {}\n\n", x.id, x.name));
            s.push_str(&field_table(system_fields::SYSTEM_FIELDS, &tree, ""));
            if let Some(preset) = tree.get("preset") {
                s.push_str("\npreset (exact reference parameters):\n");
                s.push_str(&field_table(&param_specs(), preset, "preset."));
            }
            list("sources", &x.sources, &mut s);
            list("notes", &x.notes, &mut s);
            s.push_str(&mapping_text(x));
        }
        Document::Scenario(sc) => {
            s.push_str(&format!("scenario {}\n\n", sc.name.as_deref().unwrap_or("(unnamed)")));
            s.push_str(&field_table(fields::SCENARIO_FIELDS, &tree, ""));
            match sc.resolve() {
                Ok(r) => {
                    let sh = r.shape;
                    s.push_str(&format!(
                        "\nresolved: model {} (l {} e {} h {} depth {} f {}), system {} at {}, budget {}\n",
                        r.model.id,
                        sh.l,
                        sh.e,
                        sh.h,
                        sh.depth,
                        sh.f,
                        r.system.id,
                        r.mapped.precision,
                        r.budget.describe()
                    ));
                    s.push_str(&params_text(&r.mapped));
                }
                Err(e) => s.push_str(&format!("\ncannot resolve: {e}\n")),
            }
        }
    }
    s
}

/// The default mapping of a system onto the reference's parameters, or why it fails.
pub fn mapping_text(x: &catalog::CatalogSystem) -> String {
    match resolve::map_system(x, &MappingOptions::default()) {
        Ok(m) => format!(
            "\nreference-model parameters (default mapping, {}, domain {}, 1 NIC per device):\n{}",
            m.precision,
            m.params.domain_size,
            params_text(&m)
        ),
        Err(e) => format!(
            "\nreference-model parameters: not available with the catalog's data alone:\n  {e}\n  (system spec options: {})\n",
            catalog::system_spec::SPEC_KEYS.join(", ")
        ),
    }
}

/// The reference system fields that [`fmperf_core::SystemParams`] holds (without the two knobs
/// the search never reads).
fn param_specs() -> Vec<FieldSpec> {
    fields::REFERENCE_SYSTEM_FIELDS.iter().filter(|f| !matches!(f.path, "empirical" | "summa_nb")).copied().collect()
}

fn params_text(m: &catalog::MappedSystem) -> String {
    let tree: Value = serde_json::from_str(&format::system_to_reference_json(&m.params)).unwrap_or(Value::Null);
    let mut s = field_table(&param_specs(), &tree, "");
    if m.approximations.is_empty() {
        s.push_str("approximations: none\n");
    } else {
        s.push_str("approximations:\n");
        for a in &m.approximations {
            s.push_str(&format!("  - {a}\n"));
        }
    }
    s
}
