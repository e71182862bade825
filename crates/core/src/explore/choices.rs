//! The models and systems a scenario can pick, for the explorer's selects: the reference's presets
//! first (`gpt3`, `gpt3_1T`, `vit_era5`; `A100`, `H200`, `B200`, `B200-next`), then the rest of the
//! catalogs, each marked with why the reference model cannot use it (if it cannot) and what it
//! leaves out (if it can, approximately).

use crate::ModelShape;
use crate::catalog::{self, MappingOptions};
use crate::vocab::Note;

/// One entry of a select.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// Catalog id (the value stored in the URL).
    pub id: String,
    /// Display label.
    pub label: String,
    /// One of the reference's presets.
    pub reference: bool,
    /// Why the reference model cannot use it (`None`: usable).
    pub unusable: Option<String>,
    /// What the reference model leaves out or approximates for it, one sentence each.
    pub caveats: Vec<Note>,
}

/// Every catalog model: the reference's three first, in the reference's order, then the rest in
/// catalog order.
pub fn model_choices() -> Vec<Choice> {
    let mut out: Vec<Choice> = catalog::models()
        .iter()
        .map(|m| {
            let reference = ModelShape::REFERENCE.iter().any(|(n, _)| *n == m.id);
            let (unusable, caveats) = match m.to_shape() {
                Ok(_) => (None, m.reference_caveats()),
                Err(e) => (Some(e.to_string()), Vec::new()),
            };
            let label = if m.name.is_empty() {
                m.id.clone()
            } else if m.name.contains(m.id.as_str()) {
                m.name.clone()
            } else {
                format!("{} ({})", m.name, m.id)
            };
            Choice { id: m.id.clone(), label, reference, unusable, caveats }
        })
        .collect();
    // Stable: reference presets first, catalog order otherwise.
    crate::sort::sort_by_key(&mut out, |c| !c.reference);
    out
}

/// Every catalog system: the reference's four files first, then the hardware catalog.
pub fn system_choices() -> Vec<Choice> {
    let mut out: Vec<Choice> = catalog::systems()
        .iter()
        .map(|s| {
            let reference = s.preset.is_some();
            let (unusable, caveats) = match crate::resolve::map_system(s, &MappingOptions::default()) {
                Ok(m) => (None, m.approximations),
                Err(e) => (Some(e.to_string()), Vec::new()),
            };
            let label = if reference {
                format!("{} (reference system file)", s.id.strip_prefix("ref-").unwrap_or(&s.id))
            } else {
                s.name.clone()
            };
            Choice { id: s.id.clone(), label, reference, unusable, caveats }
        })
        .collect();
    crate::sort::sort_by_key(&mut out, |c| !c.reference);
    out
}
