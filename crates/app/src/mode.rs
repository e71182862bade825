//! The model mode in the URL, app-wide: `mode` (`reference` or `extended`) and `ext` (extended
//! mode's switches that differ from the defaults, `key=value,…` as typed).
//!
//! **Defaults and old permalinks.** Extended mode is the page's default: a URL that names no
//! mode and no scenario opens in extended mode. Before extended mode became the default, reference
//! mode was, and the page wrote no `mode` key for it; so a URL that names a scenario (any
//! explorer key such as `model`, `gpus`, `sel`, or any studies sweep key) but no `mode` is an old
//! permalink and is read in reference mode, showing what it showed. The page now always writes
//! `mode` with a scenario, so its own permalinks are never ambiguous.

use fmperf_core::Error;
use fmperf_core::extended::switch_text::edit_text;
use fmperf_core::extended::switches::switch;
use fmperf_core::mode_kind::ModeKind;

use crate::query::Query;

/// URL key of the mode.
pub const MODE_KEY: &str = "mode";
/// URL key of extended mode's switches.
pub const EXT_KEY: &str = "ext";

/// The mode and switch texts in force: the URL's over the view's `defaults` (mode, switches). The
/// switches count only in extended mode.
pub fn texts(q: &Query, defaults: &(Option<String>, Option<String>)) -> (Option<String>, Option<String>) {
    let mode = q.get(MODE_KEY).map(str::to_string).or_else(|| defaults.0.clone());
    let switches = mode.as_deref().and_then(ModeKind::parse).is_some_and(ModeKind::takes_switches);
    let ext = match q.get(EXT_KEY) {
        _ if !switches => None,
        Some(e) => Some(e.to_string()),
        None => defaults.1.clone(),
    };
    (mode, ext.filter(|e| !e.trim().is_empty()))
}

/// The mode a URL without a `mode` key is read in: reference ([`ModeKind::default`], the page's
/// default before extended mode) for an old permalink (one that names a scenario: `legacy` says
/// whether it does), else [`ModeKind::REALISTIC`], the page's default.
pub fn default_mode(legacy: bool) -> ModeKind {
    if legacy { ModeKind::default() } else { ModeKind::REALISTIC }
}

/// Whether `q` is read in the published model's mode (the explorer's scenario defaults are then
/// the published study's): its `mode` says so, or it names no mode it can read and names a
/// scenario (as an old permalink does).
pub fn reads_published_model(q: &Query) -> bool {
    q.get(MODE_KEY).and_then(ModeKind::parse).unwrap_or_else(|| default_mode(names_scenario(q))).is_published_model()
}

/// Whether `q` names an explorer scenario or a studies sweep (any of their keys).
pub fn names_scenario(q: &Query) -> bool {
    q.0.iter().any(|(k, _)| crate::explorer::is_explorer_key(k) || crate::studies::is_sweep_key(k))
}

/// Whether `q` is an old permalink: it names a scenario or a sweep but no mode.
pub fn is_legacy(q: &Query) -> bool {
    q.get(MODE_KEY).is_none() && names_scenario(q)
}

/// The mode `q` is read in when it names none (see the module documentation).
pub fn default_for(q: &Query) -> ModeKind {
    default_mode(is_legacy(q))
}

/// Called on every write of the URL: when neither the query before nor the one written names a
/// mode, the one written gets the mode `before` was read in, so a view opened with the default
/// (or an old permalink) keeps its mode when the user changes a key. A preset panel without a
/// `mode` keeps reading its own mode, so a query with `preset` is left alone.
pub fn pin_on_write(before: &Query, after: &mut Query) {
    if before.get(MODE_KEY).is_none() && after.get(MODE_KEY).is_none() && after.get("preset").is_none() {
        after.set(MODE_KEY, default_for(before).as_str());
    }
}

/// The rule a switch value with a comma breaks, for its field's message.
fn comma_error(key: &str, value: &str) -> Error {
    let label = switch(key).map_or(key, |s| s.label);
    let example: String = value.chars().filter(|c| *c != ',').collect();
    Error::invalid(
        format!("{EXT_KEY}.{key}"),
        value,
        format!("has a comma: {label} takes one value without separators (commas separate the switches)"),
    )
    .with_hint(format!("write {example}"))
}

/// A value typed into switch `key`'s field, checked before it goes into `ext`: a comma would
/// split it into two switches there (`loss_chunks=1,024` reads as `loss_chunks=1` and a
/// nameless `024`), so it is refused at the field with the rule; otherwise the value trimmed.
pub fn switch_value(key: &str, typed: &str) -> Result<String, Error> {
    let v = typed.trim();
    if v.contains(',') { Err(comma_error(key, v)) } else { Ok(v.to_string()) }
}

/// The switch text `ext` with switch `key` set to `value` (checked by [`switch_value`]): core's
/// [`edit_text`], after dropping the nameless pieces a comma split off an earlier value of the
/// same switch (a hand-written `loss_chunks=1,024`), so correcting the value clears its error.
pub fn edit_switch(ext: &str, key: &str, value: &str) -> String {
    let want = switch(key).map(|s| s.key);
    let mut kept: Vec<&str> = Vec::new();
    let mut after_key = false;
    for item in ext.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((k, _)) => {
                after_key = want.is_some() && switch(k).map(|s| s.key) == want;
                kept.push(item);
            }
            None if after_key => {}
            None => kept.push(item),
        }
    }
    edit_text(&kept.join(","), key, value)
}

/// A switch value in `ext` that a comma split (`loss_chunks=1,024`: the piece `024` has no
/// key), as an error at that switch's field; `None` when every piece is `key=value` or a piece
/// without a key follows no switch (core then says it must be written key=value).
pub fn comma_problem(ext: &str) -> Option<Error> {
    let mut last: Option<(&str, &str)> = None;
    for item in ext.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((k, v)) => last = switch(k).map(|s| (s.key, v.trim())),
            None => {
                if let Some((key, v)) = last {
                    return Some(comma_error(key, &format!("{v},{item}")));
                }
            }
        }
    }
    None
}

pub use crate::views::unknown_view;

/// The mode panel's heading (its buttons say [`ModeKind::title`], its line
/// [`ModeKind::panel_summary`]).
pub const PANEL_TITLE: &str = "Model";
/// The mode panel's button that puts every switch back.
pub const RESET_LABEL: &str = "Default switches";
/// The folded list of sources under the switches.
pub const SOURCES_SUMMARY: &str = "Where the defaults and constants come from";
/// What the mode applies to, in the explorer.
pub const EXPLORER_APPLIES_TO: &str = "The search, “try your own” and the comparison run in this mode.";

/// The fold of the switches: how many the switch text `ext` changes.
pub fn switches_summary(ext: &str) -> String {
    match ext.split(',').filter(|x| !x.trim().is_empty()).count() {
        0 => "Switches (all at their defaults)".to_string(),
        n => format!("Switches ({n} changed)"),
    }
}

/// The tooltip of the badge naming the mode that produced a result.
pub fn badge_title(mode: &fmperf_core::mode::Mode) -> &'static str {
    mode.kind().tagline()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_mode_wins_over_the_default_and_switches_need_extended_mode() {
        let q = Query::parse("?mode=reference&ext=recompute%3Dfull");
        assert_eq!(texts(&q, &(Some("extended".into()), None)), (Some("reference".into()), None));
        let q = Query::parse("?ext=recompute%3Dfull");
        assert_eq!(
            texts(&q, &(Some("extended".into()), None)),
            (Some("extended".into()), Some("recompute=full".into()))
        );
        assert_eq!(texts(&Query::default(), &(None, Some("x=1".into()))), (None, None));
    }

    #[test]
    fn old_permalinks_are_reference_new_pages_extended() {
        for old in
            ["?model=gpt3", "?nvs=64&gpus=512", "?view=explorer&tab=layers", "?view=studies&s.model=gpt3&ax.gpus=8..64"]
        {
            assert_eq!(default_for(&Query::parse(old)), ModeKind::Reference, "{old}");
        }
        for fresh in ["", "?view=explorer", "?view=catalog", "?mode=reference&model=gpt3"] {
            let want = if fresh.contains("reference") { ModeKind::Reference } else { ModeKind::Extended };
            let q = Query::parse(fresh);
            let read = q.get(MODE_KEY).and_then(ModeKind::parse).unwrap_or(default_for(&q));
            assert_eq!(read, want, "{fresh}");
        }
    }

    #[test]
    fn the_published_model_is_read_where_the_url_or_an_old_permalink_says_so() {
        for (url, published) in [
            ("?mode=reference", true),
            ("?mode=extended&model=gpt3", false),
            // An old permalink (a scenario, no mode) and an unreadable mode beside a scenario.
            ("?model=gpt3", true),
            ("?mode=fast&model=gpt3", true),
            ("?mode=fast", false),
            ("", false),
        ] {
            assert_eq!(reads_published_model(&Query::parse(url)), published, "{url}");
        }
        assert_eq!(badge_title(&fmperf_core::mode::Mode::Reference), ModeKind::default().tagline());
        assert!(badge_title(&fmperf_core::mode::Mode::extended()).starts_with("Extended mode:"));
    }

    #[test]
    fn unknown_views_are_named() {
        assert_eq!(unknown_view(&Query::parse("?view=studies")), None);
        assert_eq!(unknown_view(&Query::default()), None);
        assert!(unknown_view(&Query::parse("?view=charts")).unwrap().contains("“charts”"));
    }

    #[test]
    fn a_write_keeps_the_mode_the_page_was_read_in() {
        // A fresh page: the first key the user changes would otherwise turn it into an "old
        // permalink"; the write pins extended mode.
        let before = Query::parse("?view=explorer");
        let mut after = Query::parse("?view=explorer&tab=layers");
        pin_on_write(&before, &mut after);
        assert_eq!(after.get(MODE_KEY), Some("extended"));
        // An old permalink stays in reference mode when edited.
        let before = Query::parse("?model=gpt3");
        let mut after = Query::parse("?model=gpt3&gpus=64");
        pin_on_write(&before, &mut after);
        assert_eq!(after.get(MODE_KEY), Some("reference"));
        // A preset panel reads its own mode.
        let mut after = Query::parse("?view=studies&preset=p&panel=x");
        pin_on_write(&Query::default(), &mut after);
        assert_eq!(after.get(MODE_KEY), None);
        // An explicit mode is never overwritten.
        let mut after = Query::parse("?mode=reference");
        pin_on_write(&Query::default(), &mut after);
        assert_eq!(after.get(MODE_KEY), Some("reference"));
    }

    #[test]
    fn a_comma_in_a_switch_value_is_refused_at_its_field_and_cleared_by_a_correction() {
        let e = switch_value("loss_chunks", "1,024").unwrap_err();
        assert_eq!(e.field(), Some("ext.loss_chunks"));
        let m = crate::words::field_message(&e);
        assert!(m.contains("“1,024”") && m.contains("comma") && m.contains("write 1024"), "{m}");
        assert!(m.to_lowercase().contains("loss"), "the message names the field: {m}");
        assert_eq!(switch_value("loss_chunks", " 1024 ").unwrap(), "1024");
        // A hand-written URL: the error sits at the switch, and correcting it clears it.
        let ext = "recompute=full,loss_chunks=1,024";
        let e = comma_problem(ext).unwrap();
        assert_eq!(e.field(), Some("ext.loss_chunks"));
        let fixed = edit_switch(ext, "loss_chunks", "1024");
        assert_eq!(comma_problem(&fixed), None);
        assert!(fmperf_core::extended::ExtendedOptions::from_text(&fixed).is_ok(), "{fixed}");
        assert!(fixed.contains("recompute=full") && fixed.contains("loss_chunks=1024"), "{fixed}");
        // Pieces that follow no switch are left for core to name.
        assert_eq!(comma_problem("024,recompute=full"), None);
        assert_eq!(comma_problem("recompute=full,zero=1"), None);
    }
}
