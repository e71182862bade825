//! The entries of the model and system pickers of the Explorer, the Studies and Compare: the
//! user's own entries first (saved in the Catalog view, marked as theirs), then the reference's
//! presets, then the catalogs; each with why it cannot be used in a mode, if it cannot.
//!
//! A system whose entry lacks a figure the user can give as a system option (`scale_out`,
//! `vector`) is **not** disabled: it is marked "needs a figure" and the page says which option to
//! fill in — a part like GB200 NVL72 stays usable from the page and the URL.

use fmperf_core::catalog::{self, MappingOptions, to_system_params};
use fmperf_core::explore::choices::{model_choices, system_choices};
use fmperf_core::extended::Workload;
use fmperf_core::mode_kind::{ModeKind, PerMode};
use fmperf_core::resolve::UserEntries;
use fmperf_core::vocab::Note;

/// Where a picker entry comes from (its group in the select).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerGroup {
    /// Saved by the user in this browser.
    Yours,
    /// One of the reference's presets.
    Reference,
    /// The built-in catalog.
    Catalog,
}

impl PickerGroup {
    /// The group's label.
    pub fn label(self) -> &'static str {
        match self {
            PickerGroup::Yours => "Yours (saved in this browser)",
            PickerGroup::Reference => "Reference presets",
            PickerGroup::Catalog => "Catalog",
        }
    }
}

/// One picker entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// Id (the value in the URL).
    pub id: String,
    /// Display label (`… (yours)` for the user's entries).
    pub label: String,
    /// Where it comes from.
    pub group: PickerGroup,
    /// Why each mode's model cannot use it (`None`: it can).
    pub unusable_in: PerMode<Option<String>>,
    /// The system options the user must give for it to map (e.g. `scale_out`), with why.
    pub needs: Vec<(&'static str, String)>,
    /// What the published model leaves out or approximates for it (the model's reference caveats,
    /// the system's mapping notes).
    pub caveats: Vec<Note>,
}

impl Pick {
    /// Why `mode` cannot use it, if it cannot.
    pub fn unusable(&self, mode: ModeKind) -> Option<&str> {
        self.unusable_in.get(mode).as_deref()
    }

    /// Whether `mode` prices it only approximately, so its picker entry says so: the caveats are
    /// the published model's ([`ModeKind::is_published_model`]).
    pub fn approximate_in(&self, mode: ModeKind) -> bool {
        mode.is_published_model() && !self.caveats.is_empty()
    }
}

/// Every model: the user's, the reference's three, then the catalog.
pub fn model_picks(user: &UserEntries) -> Vec<Pick> {
    let mut out: Vec<Pick> = user
        .models
        .iter()
        .map(|m| Pick {
            id: m.id.clone(),
            label: format!("{} (yours)", if m.name.is_empty() { &m.id } else { &m.name }),
            group: PickerGroup::Yours,
            unusable_in: PerMode::new(
                m.to_shape().err().map(|e| e.to_string()),
                Workload::from_catalog(m).err().map(|e| e.to_string()),
            ),
            needs: Vec::new(),
            caveats: Vec::new(),
        })
        .collect();
    for c in model_choices().into_iter().filter(|c| !user.has_model(&c.id)) {
        let ext = catalog::find_model(&c.id).ok().and_then(|m| Workload::from_catalog(m).err()).map(|e| e.to_string());
        out.push(Pick {
            id: c.id,
            label: c.label,
            group: if c.reference { PickerGroup::Reference } else { PickerGroup::Catalog },
            unusable_in: PerMode::new(c.unusable, ext),
            needs: Vec::new(),
            caveats: c.caveats,
        });
    }
    out
}

/// The options a system needs before it maps: the figures its entry lacks that a system option
/// supplies (`scale_out` when it lists no NIC bandwidth, `vector` when it lists no vector rate).
/// `maps_with_both`: whether `s` maps once both figures are given (the caller has mapped it so
/// already: the mapping is the costly part of the page's first render).
fn needs(s: &catalog::CatalogSystem, maps_with_both: bool) -> Vec<(&'static str, String)> {
    let maps = |scale_out: bool, vector: bool| {
        let o = MappingOptions {
            scale_out_gbps: scale_out.then_some(1.0),
            vector_tflops: vector.then_some(1.0),
            ..MappingOptions::default()
        };
        to_system_params(s, &o).is_ok()
    };
    let mut out = Vec::new();
    if maps_with_both {
        if !maps(false, true) {
            out.push((
                "scale_out",
                format!("{} lists no scale-out (NIC) bandwidth per device: give one in GB/s", s.id),
            ));
        }
        if !maps(true, false) {
            out.push(("vector", format!("{} lists no vector (non-matrix) rate: give one in TFLOP/s", s.id)));
        }
    }
    out
}

/// Every system: the user's, the reference's four files, then the catalog. A system that maps
/// once the options in [`Pick::needs`] are given is usable (the page asks for them).
pub fn system_picks(user: &UserEntries) -> Vec<Pick> {
    let usable_with_figures = |s: &catalog::CatalogSystem| {
        to_system_params(
            s,
            &MappingOptions { scale_out_gbps: Some(1.0), vector_tflops: Some(1.0), ..MappingOptions::default() },
        )
        .err()
        .map(|e| e.to_string())
    };
    let mut out: Vec<Pick> = user
        .systems
        .iter()
        .map(|s| {
            let blocked = usable_with_figures(s);
            Pick {
                id: s.id.clone(),
                label: format!("{} (yours)", if s.name.is_empty() { &s.id } else { &s.name }),
                group: PickerGroup::Yours,
                needs: needs(s, blocked.is_none()),
                unusable_in: PerMode::new(blocked.clone(), blocked),
                caveats: Vec::new(),
            }
        })
        .collect();
    for c in system_choices().into_iter().filter(|c| !user.has_system(&c.id)) {
        let Ok(s) = catalog::find_system(&c.id) else { continue };
        let blocked = usable_with_figures(s);
        out.push(Pick {
            id: c.id,
            label: c.label,
            group: if c.reference { PickerGroup::Reference } else { PickerGroup::Catalog },
            needs: needs(s, blocked.is_none()),
            unusable_in: PerMode::new(blocked.clone(), blocked),
            caveats: c.caveats,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gb200_is_usable_and_says_which_figure_it_needs() {
        let picks = system_picks(&UserEntries::none());
        let gb = picks.iter().find(|p| p.id == "nvidia_gb200_nvl72").expect("GB200 NVL72 in the catalog");
        assert_eq!(gb.unusable(ModeKind::Reference), None, "{gb:?}");
        assert_eq!(gb.unusable(ModeKind::Extended), None);
        // Every need is a real system option.
        for p in &picks {
            for (k, _) in &p.needs {
                assert!(crate::system_spec::OPTION_KEYS.contains(k));
            }
        }
        assert_eq!(picks[0].group, PickerGroup::Reference);
    }

    #[test]
    fn the_users_entries_come_first_and_are_marked() {
        let mut sys = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap().clone();
        sys.id = "my-h100".into();
        sys.name = "My H100 pod".into();
        let mut model = catalog::find_model("llama3-8b").unwrap().clone();
        model.id = "my-llama".into();
        model.name = String::new();
        let user = UserEntries { models: vec![model], systems: vec![sys] };
        let s = system_picks(&user);
        assert_eq!(
            (s[0].id.as_str(), s[0].label.as_str(), s[0].group),
            ("my-h100", "My H100 pod (yours)", PickerGroup::Yours)
        );
        let m = model_picks(&user);
        assert_eq!((m[0].id.as_str(), m[0].label.as_str()), ("my-llama", "my-llama (yours)"));
        assert_eq!(m[0].unusable(ModeKind::Extended), None);
        // Llama 3 is an extended-mode model.
        let l = m.iter().find(|p| p.id == "llama3-70b").unwrap();
        assert_eq!(l.unusable(ModeKind::Extended), None);
    }
}
