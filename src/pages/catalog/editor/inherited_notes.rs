//! The notes an edit inherited that speak of figures the user changed ([`InheritedNotes`]): dropped
//! from a duplicate as the figures change, each with a button to keep it, or listed for the user
//! to check in their own entry.

use fmperf_core::format::custom_store::EntryKind;
use fmperf_core::format::form::FormValues;
use fmperf_core::format::notes::{StaleNote, stale_notes, with_note, without_notes};
use leptos::prelude::*;

use super::super::rich;
use super::start::{NotePolicy, Start};

/// The notes an edit inherited that speak of figures the user changed
/// ([`fmperf_core::format::notes`]). In a duplicate they are dropped as the figure changes and
/// listed with a button to keep each (and come back by themselves once the figures they speak of
/// are as they were); in the user's own entry they are only listed, to check.
#[derive(Clone, Copy)]
pub(super) struct InheritedNotes {
    policy: NotePolicy,
    /// The kind of the entry the edit started from (the original's fields).
    start_kind: EntryKind,
    original: StoredValue<FormValues>,
    values: RwSignal<FormValues>,
    /// Dropped from the duplicate (policy `Drop`).
    dropped: RwSignal<Vec<StaleNote>>,
    /// Put back by the user: never dropped again.
    kept: RwSignal<Vec<StaleNote>>,
    kind_now: RwSignal<EntryKind>,
}

fn same_note(a: &StaleNote, b: &StaleNote) -> bool {
    a.field == b.field && a.text == b.text
}

impl InheritedNotes {
    pub(super) fn new(start: &Start, kind: RwSignal<EntryKind>, values: RwSignal<FormValues>) -> InheritedNotes {
        let me = InheritedNotes {
            policy: start.notes,
            start_kind: start.kind,
            original: StoredValue::new(start.values.clone()),
            values,
            dropped: RwSignal::new(Vec::new()),
            kept: RwSignal::new(Vec::new()),
            kind_now: kind,
        };
        if me.policy == NotePolicy::Drop {
            Effect::new(move |_| me.prune());
        }
        me
    }

    /// The inherited texts stale in the values now (not counting the ones the user kept).
    fn stale(&self) -> Vec<StaleNote> {
        if self.kind_now.get() != self.start_kind {
            return Vec::new();
        }
        let kept = self.kept.get_untracked();
        let original = self.original.get_value();
        self.values
            .with(|v| stale_notes(self.start_kind.as_str(), &original, v))
            .into_iter()
            .filter(|s| !kept.iter().any(|k| same_note(k, s)))
            .collect()
    }

    /// Drops what became stale; puts back what no longer is (its figures are as they were).
    fn prune(&self) {
        let fresh = self.stale();
        let original = self.original.get_value();
        let changed =
            self.values.with(|v| fmperf_core::format::notes::changed_fields(self.start_kind.as_str(), &original, v));
        let (back, still): (Vec<StaleNote>, Vec<StaleNote>) =
            self.dropped.get_untracked().into_iter().partition(|d| d.changed.iter().all(|f| !changed.contains(f)));
        if fresh.is_empty() && back.is_empty() {
            return;
        }
        self.values.update(|v| {
            let mut next = without_notes(v, &fresh);
            for b in &back {
                next = with_note(&original, &next, b);
            }
            *v = next;
        });
        self.dropped.set(still.into_iter().chain(fresh).collect());
    }

    /// Puts a dropped note back and keeps it.
    fn keep(&self, note: &StaleNote) {
        let original = self.original.get_value();
        self.kept.update(|k| k.push(note.clone()));
        self.dropped.update(|d| d.retain(|x| !same_note(x, note)));
        self.values.update(|v| *v = with_note(&original, v, note));
    }

    pub(super) fn view(self) -> Option<AnyView> {
        let (intro, notes) = match self.policy {
            NotePolicy::Keep => return None,
            NotePolicy::Drop => {
                ("Left out of your copy because you changed the figures they speak of:", self.dropped.get())
            }
            NotePolicy::Warn => {
                ("These notes speak of figures you changed; check that they still apply:", self.stale())
            }
        };
        if notes.is_empty() {
            return None;
        }
        let drop = self.policy == NotePolicy::Drop;
        let items = notes
            .into_iter()
            .map(|n| {
                let field = n.field.clone();
                let changed = n.changed.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
                let where_ = if n.field == "notes" { String::new() } else { format!("`{}`: ", n.field) };
                let button = drop.then(|| {
                    let note = n.clone();
                    view! { <button type="button" class="small" on:click=move |_| self.keep(&note)>"Keep it"</button> }
                });
                view! {
                    <li data-field=field>
                        {rich(&where_)} <q>{n.text.clone()}</q> " " <span class="muted">"(you changed " {rich(&changed)} ")"</span> " " {button}
                    </li>
                }
            })
            .collect_view();
        Some(
            view! {
                <div class="notice warn inherited-notes" role="status" data-policy=if drop { "drop" } else { "warn" }>
                    <p>{intro}</p>
                    <ul>{items}</ul>
                </div>
            }
            .into_any(),
        )
    }
}
