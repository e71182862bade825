//! Where each value of a catalog entry comes from: one text per field (models: `seq_len`,
//! `hidden`, …) or per group of fields (systems: `peak_tflops`, `vector`, `memory`, `scale_up`,
//! `scale_out`, `measured_matmul`). A text that starts with the word `estimate` marks a value the
//! sources do not state: the rest of the text gives the reasoning, and the mappings that use the
//! value report it among their approximations, so a part runs out of the box and the user sees
//! what was assumed.

/// The per-field sources of an entry, in the order of its field table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSources {
    entries: Vec<(String, String)>,
}

impl FieldSources {
    /// Sources from `(field, text)` pairs; empty texts are dropped.
    pub fn new(entries: Vec<(String, String)>) -> FieldSources {
        FieldSources { entries: entries.into_iter().filter(|(_, t)| !t.trim().is_empty()).collect() }
    }

    /// Every `(field, text)` pair, in table order.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    /// Whether no field has a source.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The source of one field (or group), if given.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == field).map(|(_, t)| t.as_str())
    }

    /// Whether the field's value is an estimate (its source text starts with `estimate`, any case).
    pub fn is_estimate(&self, field: &str) -> bool {
        self.get(field).is_some_and(is_estimate_text)
    }

    /// The fields whose values are estimates, with their reasoning.
    pub fn estimates(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().filter(|(_, t)| is_estimate_text(t)).map(|(k, t)| (k.as_str(), t.as_str()))
    }
}

/// Whether a source text marks an estimate: it starts with the word `estimate` (`Estimate:`,
/// `estimated from …`).
pub fn is_estimate_text(text: &str) -> bool {
    text.trim_start().get(..8).is_some_and(|w| w.eq_ignore_ascii_case("estimate"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_marked_by_their_first_word() {
        let s = FieldSources::new(vec![
            ("memory".into(), "NVIDIA datasheet".into()),
            ("scale_out".into(), "Estimate: one 400 Gb/s NIC per GPU".into()),
            ("vector".into(), "estimated from 24 of Gaudi 3's 64 TPCs".into()),
            ("peak_tflops".into(), "  ".into()),
        ]);
        assert_eq!(s.entries().len(), 3, "empty texts are dropped");
        assert!(!s.is_estimate("memory"));
        assert!(s.is_estimate("scale_out") && s.is_estimate("vector"));
        assert!(!s.is_estimate("peak_tflops"));
        assert_eq!(s.estimates().map(|(k, _)| k).collect::<Vec<_>>(), ["scale_out", "vector"]);
        assert!(!is_estimate_text("an estimate"), "only the first word counts");
    }
}

/// Where one parameter of a mapping ([`super::MappedSystem`]) came from: recorded by the mapping
/// as it decides each value, so that nobody has to guess it afterwards by comparing numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// A catalog field read as it is (`what` says which figure it is, in words).
    Catalog {
        /// The catalog field, e.g. `peak_tflops.bf16`.
        field: &'static str,
        /// The figure in words, e.g. `dense BF16 matrix peak`.
        what: String,
    },
    /// Computed from a catalog field by a stated rule (e.g. half of a bidirectional bandwidth).
    Derived {
        /// The catalog field it was computed from.
        field: &'static str,
        /// The rule, in words.
        rule: &'static str,
    },
    /// A value the user gave (system-spec key or page field).
    User {
        /// What the user gave, in words.
        what: &'static str,
    },
    /// A documented default of the mapping (no catalog field holds it).
    Default {
        /// The default, in words.
        rule: String,
    },
    /// The reference's system file, as it is (the four exact presets).
    ReferenceFile,
    /// A placeholder for a figure the model that asked for the mapping never reads.
    Unread {
        /// Why it is not read.
        why: &'static str,
    },
}

/// One parameter's origin, and whether the catalog marks the figure it was read from as an
/// estimate (with the entry's reasoning).
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// The reference parameter's name (a [`crate::SystemParams`] field, e.g. `nvlink_bandwidth`).
    pub param: &'static str,
    /// Where its value came from.
    pub origin: Origin,
    /// The catalog's reasoning when the figure is an estimate, not a published one.
    pub estimate: Option<String>,
}

impl Provenance {
    /// A parameter's origin, not an estimate.
    pub fn new(param: &'static str, origin: Origin) -> Provenance {
        Provenance { param, origin, estimate: None }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Catalog { field, what } if what.is_empty() => write!(f, "{field}"),
            Origin::Catalog { field, what } => write!(f, "{field}: {what}"),
            Origin::Derived { field, rule } => write!(f, "{rule} ({field})"),
            Origin::User { what } => write!(f, "{what}"),
            Origin::Default { rule } => write!(f, "{rule}"),
            Origin::ReferenceFile => write!(f, "the reference's system file, as it is"),
            Origin::Unread { why } => write!(f, "unknown: {why}"),
        }
    }
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(why) = &self.estimate {
            write!(f, " — an estimate, not a published figure: {why}")?;
        }
        Ok(())
    }
}
