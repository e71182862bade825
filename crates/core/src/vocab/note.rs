//! One note for every list of notes: what reading an input, resolving a scenario, pricing it or
//! writing a launch file had to read into, assume, approximate or leave out, in words for the user
//! ([`Note::text`], shown word for word), with its kind ([`NoteKind`]) and the fields it concerns
//! ([`Note::fields`], dotted paths as [`FieldPath`] reads them).
//!
//! A note reads as its text wherever text is wanted: it shows as its text ([`std::fmt::Display`]),
//! derefs to it (`note.contains("…")`), joins as it (`notes.join("; ")`) and is written to JSON as
//! that one string, so the outputs' note arrays stay arrays of strings. Read back from a document
//! (a catalog entry's notes, a result file), a note's kind is [`NoteKind::Stated`]: the text is
//! all a document keeps.

use crate::error::{FieldPath, FieldPathBuf};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

/// What a note is about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NoteKind {
    /// How an input was read: what a word, a unit, a key's other name or a framework's flag was
    /// taken to mean, or a value derived from the ones given (a measured run's words, a launch
    /// file's settings, a training log's lines).
    Reading,
    /// A value the input does not state, taken as assumed: a framework's default, the usual
    /// setting, a stand-in for a missing figure, or a stated value replaced by another.
    Assumption,
    /// A switch or input the model does not apply to this scenario (it has no effect here, or the
    /// model does not support it), or a choice the search could not honour as asked.
    NotApplied,
    /// Why a measured row (or a point) was not evaluated by a mode.
    Skipped,
    /// What a written launch file leaves out or writes differently from the layout asked for.
    NotWritten,
    /// A remark as a document states it: a catalog entry's or a study's own notes, or any note
    /// read back from a file (a document keeps only the text).
    #[default]
    Stated,
    /// What reference mode approximates or cannot know of a catalog model (its GQA, gated MLP,
    /// unknown fields): `CatalogModel::reference_caveats`.
    ModelCaveat,
    /// An approximation, override or derived value of a system's mapping (`MappedSystem::
    /// approximations`, `Hardware::approximations`); the mapping's provenance says per parameter
    /// where each value came from.
    Mapping,
    /// A value the entry lacks, stood in for by a value the user gave (a sweep's absolute axis
    /// value).
    StandIn {
        /// Where the stand-in value came from, in words.
        what: &'static str,
    },
    /// A placeholder for a figure no result reads (the scale-out bandwidth of a job inside one
    /// scale-up domain).
    Placeholder {
        /// Why no result reads it, in words.
        why: &'static str,
    },
}

/// One note: its kind, the fields it concerns (dotted paths; empty when it concerns the input as
/// a whole), the catalog entry it is about (when it is about one) and its sentence for the user.
/// The default note is an empty [`NoteKind::Stated`] one (an absent note read as text: "").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Note {
    /// What kind of note it is.
    pub kind: NoteKind,
    /// The fields it concerns, as dotted paths (`ext.recompute`, `system`, `--tensor-model-parallel-size`).
    pub fields: Vec<FieldPathBuf>,
    /// The id of the catalog entry it is about, when it is about one.
    pub entry: Option<String>,
    /// The sentence shown to the user, word for word.
    pub text: String,
}

impl Note {
    /// A note of `kind` with `text`, about no field in particular.
    pub fn new(kind: NoteKind, text: impl Into<String>) -> Note {
        Note { kind, fields: Vec::new(), entry: None, text: text.into() }
    }

    /// A [`NoteKind::Reading`].
    pub fn reading(text: impl Into<String>) -> Note {
        Note::new(NoteKind::Reading, text)
    }

    /// A [`NoteKind::Assumption`].
    pub fn assumption(text: impl Into<String>) -> Note {
        Note::new(NoteKind::Assumption, text)
    }

    /// A [`NoteKind::NotApplied`].
    pub fn not_applied(text: impl Into<String>) -> Note {
        Note::new(NoteKind::NotApplied, text)
    }

    /// A [`NoteKind::NotWritten`].
    pub fn not_written(text: impl Into<String>) -> Note {
        Note::new(NoteKind::NotWritten, text)
    }

    /// A [`NoteKind::Stated`].
    pub fn stated(text: impl Into<String>) -> Note {
        Note::new(NoteKind::Stated, text)
    }

    /// The note, also concerning the field `path` (dotted; a field it already names is not
    /// repeated).
    pub fn about(mut self, path: impl Into<String>) -> Note {
        let path = FieldPathBuf::new(path);
        if !self.fields.contains(&path) {
            self.fields.push(path);
        }
        self
    }

    /// The note, about the catalog entry `id`.
    pub fn of_entry(mut self, id: impl Into<String>) -> Note {
        self.entry = Some(id.into());
        self
    }

    /// `notes`, each about the catalog entry `entry` that the field `field` names (`model`,
    /// `system`).
    pub fn of_field_entry(field: &str, entry: &str, notes: &[Note]) -> Vec<Note> {
        notes.iter().map(|n| n.clone().of_entry(entry).about(field)).collect()
    }

    /// Notes of `kind`, one per text.
    pub fn each<T: Into<String>>(kind: NoteKind, texts: impl IntoIterator<Item = T>) -> Vec<Note> {
        texts.into_iter().map(|t| Note::new(kind.clone(), t)).collect()
    }

    /// The sentences of `notes`, in order.
    pub fn texts(notes: &[Note]) -> Vec<String> {
        notes.iter().map(|n| n.text.clone()).collect()
    }

    /// The fields it concerns, as paths.
    pub fn paths(&self) -> impl Iterator<Item = FieldPath<'_>> {
        self.fields.iter().map(FieldPathBuf::as_path)
    }

    /// Whether it concerns a field in `group` ([`FieldPath::is_in`]).
    pub fn concerns(&self, group: &str) -> bool {
        self.paths().any(|p| p.is_in(group))
    }
}

/// Adding a note of a kind to a list, by the kind's name (`notes.reading(format!(…))`), and
/// about a field when the caller knows which (`notes.reading_of("remat_policy", …)`).
pub trait NoteList {
    /// Adds `note`.
    fn add(&mut self, note: Note);
    /// Adds a note of `kind` with `text`.
    fn note(&mut self, kind: NoteKind, text: String) {
        self.add(Note::new(kind, text));
    }
    /// Adds a [`NoteKind::Reading`] about the field `field` (a file's key or flag as the file
    /// spells it, or a dotted path).
    fn reading_of(&mut self, field: &str, text: String) {
        self.add(Note::reading(text).about(field));
    }
    /// Adds a [`NoteKind::Assumption`] about the field `field` (as [`NoteList::reading_of`]).
    fn assumption_of(&mut self, field: &str, text: String) {
        self.add(Note::assumption(text).about(field));
    }
    /// Adds a [`NoteKind::Reading`].
    fn reading(&mut self, text: String) {
        self.note(NoteKind::Reading, text);
    }
    /// Adds a [`NoteKind::Assumption`].
    fn assumption(&mut self, text: String) {
        self.note(NoteKind::Assumption, text);
    }
    /// Adds a [`NoteKind::NotApplied`].
    fn not_applied(&mut self, text: String) {
        self.note(NoteKind::NotApplied, text);
    }
    /// Adds a [`NoteKind::NotWritten`].
    fn not_written(&mut self, text: String) {
        self.note(NoteKind::NotWritten, text);
    }
}

impl NoteList for Vec<Note> {
    fn add(&mut self, note: Note) {
        self.push(note);
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Deref for Note {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl Borrow<str> for Note {
    fn borrow(&self) -> &str {
        &self.text
    }
}

impl AsRef<str> for Note {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl PartialEq<str> for Note {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for Note {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl PartialEq<String> for Note {
    fn eq(&self, other: &String) -> bool {
        &self.text == other
    }
}

impl PartialEq<Note> for String {
    fn eq(&self, other: &Note) -> bool {
        *self == other.text
    }
}

impl PartialEq<Note> for &str {
    fn eq(&self, other: &Note) -> bool {
        *self == other.text
    }
}

impl serde::Serialize for Note {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Note {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Note, D::Error> {
        String::deserialize(d).map(Note::stated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_reads_and_writes_as_its_text() {
        let mut notes: Vec<Note> = Vec::new();
        notes.reading("tp read from --tensor-model-parallel-size".into());
        notes.push(Note::assumption("sequence parallel assumed on").about("ext.sequence_parallel"));
        assert_eq!(notes.join("; "), "tp read from --tensor-model-parallel-size; sequence parallel assumed on");
        assert!(notes[1].contains("assumed") && notes[1].concerns("ext") && !notes[0].concerns("ext"));
        assert_eq!((notes[0].kind.clone(), notes[1].to_string()), (NoteKind::Reading, notes[1].text.clone()));
        let json = serde_json::to_string(&notes).unwrap();
        assert_eq!(json, r#"["tp read from --tensor-model-parallel-size","sequence parallel assumed on"]"#);
        let back: Vec<Note> = serde_json::from_str(&json).unwrap();
        assert!(
            back.iter().all(|n| n.kind == NoteKind::Stated)
                && back == ["tp read from --tensor-model-parallel-size", "sequence parallel assumed on"]
        );
    }
}
