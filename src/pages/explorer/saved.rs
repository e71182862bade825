//! Scenarios saved in the browser (`localStorage`, key
//! [`fmperf_core::explore::saved::STORAGE_KEY`], versioned format in fmperf-core): save the
//! current scenario under a name, restore or delete saved ones. Entries of other versions are
//! kept as they are; unreadable content is copied to a backup key before anything is written.

use fmperf_core::explore::saved::{BACKUP_KEY, STORAGE_KEY, SavedStore};
use leptos::prelude::*;

use super::keys;
use super::state::Explorer;
use crate::url_state::Query;

fn storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

fn load() -> SavedStore {
    let text = storage().and_then(|s| s.get_item(STORAGE_KEY).ok().flatten());
    SavedStore::parse(text.as_deref())
}

/// Writes the store (backing up unreadable content first); the error says why it failed.
fn store(s: &SavedStore) -> Result<(), String> {
    let st = storage().ok_or("this browser does not allow local storage here")?;
    if let Some(raw) = &s.unreadable {
        st.set_item(BACKUP_KEY, raw).map_err(|_| "could not back up the unreadable saved scenarios".to_string())?;
    }
    st.set_item(STORAGE_KEY, &s.to_json())
        .map_err(|_| "the browser refused to store the scenario (storage full?)".to_string())
}

fn now_iso() -> String {
    js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default()
}

/// The saved-scenarios box.
#[component]
pub fn SavedScenarios() -> impl IntoView {
    let ex = use_context::<Explorer>().expect("explorer state");
    let saved = RwSignal::new(load().entries);
    let name = RwSignal::new(String::new());
    let (message, set_message) = signal(None::<String>);
    let suggested = move || {
        ex.live.with(|f| {
            let domain =
                if f.domain.trim().is_empty() { "its own domain".to_string() } else { format!("domain {}", f.domain) };
            format!("{} · {} · {domain} · {} devices", f.model, f.system.trim_start_matches("ref-"), f.gpus)
        })
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let mut s = load();
        let n = name.get_untracked();
        let n = if n.trim().is_empty() { suggested() } else { n };
        let query = ex.url.query.with_untracked(|q| keys::scenario_query(&keys::fields_from_query(q)));
        s.save(&n, &query, &now_iso());
        match store(&s) {
            Ok(()) => {
                saved.set(s.entries);
                name.set(String::new());
                set_message.set(Some(format!("Saved “{n}”.")));
            }
            Err(e) => set_message.set(Some(e)),
        }
    };
    let list = move || {
        saved
            .get()
            .into_iter()
            .map(|e| {
                let wanted = keys::fields_from_query(&Query::parse(&e.query));
                // The link opens the saved scenario in the page's mode (a saved query names none,
                // and a query without a mode would open as an old, reference-mode permalink).
                let href = {
                    let wanted = wanted.clone();
                    move || {
                        let mut q = ex.url.query.get();
                        keys::write_scenario(&mut q, &wanted);
                        q.to_search()
                    }
                };
                let restore = move |ev: leptos::ev::MouseEvent| {
                    ev.prevent_default();
                    ex.url.update(true, |q| keys::write_scenario(q, &wanted));
                };
                let n = e.name.clone();
                let remove = move |_| {
                    let mut s = load();
                    s.remove(&n);
                    match store(&s) {
                        Ok(()) => saved.set(s.entries),
                        Err(e) => set_message.set(Some(e)),
                    }
                };
                view! {
                    <li>
                        <a href=href on:click=restore title=e.saved.clone()>{e.name.clone()}</a>
                        <button type="button" class="small link" on:click=remove aria-label=format!("Delete {}", e.name)>
                            "delete"
                        </button>
                    </li>
                }
            })
            .collect_view()
    };
    view! {
        <section class="saved" aria-labelledby="saved-title">
            <h2 id="saved-title" class="saved-title">"Saved scenarios"</h2>
            <form class="row" on:submit=save>
                <label for="ex-save-name" class="sr-only">"Name"</label>
                <input
                    id="ex-save-name"
                    type="text"
                    placeholder=suggested
                    prop:value=move || name.get()
                    on:input=move |ev| name.set(event_target_value(&ev))
                />
                <button type="submit" class="small">"Save"</button>
            </form>
            <p class="muted small" role="status">{move || message.get()}</p>
            {move || if saved.with(Vec::is_empty) {
                view! { <p class="muted small">"None yet: scenarios you save stay in this browser."</p> }.into_any()
            } else {
                view! { <ul class="saved-list">{list}</ul> }.into_any()
            }}
        </section>
    }
}
