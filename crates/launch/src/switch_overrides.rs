//! Extended mode's switches a user sets over what a launch file implied: `fmperf estimate --from
//! FILE --ext key=value,…` (and `fmperf search --from FILE --ext …`), the text form of
//! [`fmperf_core::extended::switches`] that `fmperf search --ext` reads, set over the file's
//! switches by [`ExtendedOptions::with_text`] after the file is read, so a user's value wins over
//! the file's. Each switch given is noted with the value it came with and the file's.

use fmperf_core::Error;
use fmperf_core::extended::ExtendedOptions;
use fmperf_core::extended::switch_text::text_value;
use fmperf_core::extended::switches::SWITCHES;
use fmperf_core::vocab::Note;

/// The file's switches `file` with those of `text` (the `--ext` text; `None` or empty: none) set
/// over them, one note per switch given in `notes`: `recompute=full from --ext (the file's:
/// selective)`. Errors name the switch (`ext.<key>`), a setting the switches cannot hold together
/// (a check of [`ExtendedOptions::validate`]) the switch it names too.
pub fn set_over(file: ExtendedOptions, text: Option<&str>, notes: &mut Vec<Note>) -> Result<ExtendedOptions, Error> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else { return Ok(file) };
    let set = file.with_text(text).map_err(|e| match e.path() {
        Some(p) if !p.is_in("ext") => {
            let field = format!("ext.{}", p.as_str());
            e.placed_at(field)
        }
        _ => e,
    })?;
    for sw in SWITCHES.iter().filter(|sw| text_value(text, sw.key).is_some()) {
        let (was, now) = (file.value_of(sw.key).unwrap_or_default(), set.value_of(sw.key).unwrap_or_default());
        let whose = if was == now { "as the file implied".to_string() } else { format!("the file's: {was}") };
        notes.push(Note::assumption(format!("{}={now} from --ext ({whose})", sw.key)).about(format!("ext.{}", sw.key)));
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fmperf_core::extended::{Recompute, Sharding};

    #[test]
    fn the_flag_wins_over_the_file_and_says_so() {
        // The file implied selective recomputation and ZeRO-1; `--ext recompute=full,sharding=zero1`
        // changes the first, repeats the second: both noted, each with the file's value.
        let file = ExtendedOptions {
            recompute: Recompute::Selective,
            sharding: Sharding::Zero1,
            ..ExtendedOptions::realistic()
        };
        let mut notes = Vec::new();
        let o = set_over(file, Some("recompute=full,sharding=zero1"), &mut notes).unwrap();
        assert_eq!((o.recompute, o.sharding), (Recompute::Full, Sharding::Zero1));
        assert_eq!(
            Note::texts(&notes),
            ["recompute=full from --ext (the file's: selective)", "sharding=zero1 from --ext (as the file implied)"]
        );
        // Every other switch is the file's.
        assert_eq!(ExtendedOptions { recompute: Recompute::Selective, ..o }, file);
        // No text: the file's switches, no note.
        assert_eq!(set_over(file, None, &mut notes).unwrap(), file);
        assert_eq!(set_over(file, Some(" "), &mut notes).unwrap(), file);
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn errors_name_the_switch() {
        let file = ExtendedOptions::realistic();
        let e = set_over(file, Some("recompute=most"), &mut Vec::new()).unwrap_err();
        assert!(e.is_at("ext.recompute"), "{e}");
        let e = set_over(file, Some("recompte=full"), &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("did you mean `recompute`"), "{e}");
        // A setting the switches cannot hold together: named under `ext` too.
        let e = set_over(file, Some("stage_split=ends_as_blocks,uneven_stages=off"), &mut Vec::new()).unwrap_err();
        assert!(e.path().is_some_and(|p| p.is_in("ext")), "{e}");
    }
}
