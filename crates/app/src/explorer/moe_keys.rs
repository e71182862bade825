//! The explorer's Mixture-of-Experts controls: their URL keys (`moe.dispatcher`, `moe.load`,
//! `moe.a2a_overlap`, `moe.fp8_dispatch`), the choices and help the form shows, and their values
//! as core's MoE text form (`dispatcher=deepep:4,a2a_overlap=on`), which the mode reads and a
//! worker's job carries. Loads are multiples of the mean expert load, capacities likewise.

use fmperf_core::Error;

use crate::query::Query;

/// The Mixture-of-Experts controls' keys, each one key of core's MoE text form
/// ([`fmperf_core::extended::moe::MoeOptions::with_text`], whose errors name `moe.<key>`: the URL
/// key); absent or empty: the default. Shown (and read) for MoE models in extended mode.
pub const MOE_KEYS: [&str; 4] = [MOE_DISPATCHER, MOE_LOAD, MOE_A2A_OVERLAP, MOE_FP8_DISPATCH];
/// Token dispatcher (`alltoall`, `allgather`, `deepep`, `deepep:4`).
pub const MOE_DISPATCHER: &str = "moe.dispatcher";
/// Expert load (`dropless:1.2`, `forced`, `capacity:1.25`).
pub const MOE_LOAD: &str = "moe.load";
/// All-to-all overlapped with compute (`on`/`off`/`search`; absent: the search's choice).
pub const MOE_A2A_OVERLAP: &str = "moe.a2a_overlap";
/// Dispatch in FP8 (`on`/`off`).
pub const MOE_FP8_DISPATCH: &str = "moe.fp8_dispatch";

/// The token dispatcher's choices in the explorer (value of [`MOE_DISPATCHER`], label); the
/// first is the default (an absent key).
pub const MOE_DISPATCHERS: [(&str, &str); 4] = [
    ("", "all-to-all (default)"),
    ("allgather", "all-gather"),
    ("deepep", "DeepEP / HybridEP"),
    ("deepep:4", "DeepEP, 4 domains per token"),
];

/// The all-to-all overlap's choices in the explorer (value of [`MOE_A2A_OVERLAP`], label); the
/// first is the default (an absent key: each configuration takes the cheaper of the two).
pub const MOE_A2A_OVERLAPS: [(&str, &str); 3] =
    [("", "chosen by the search (default)"), ("on", "overlapped with compute"), ("off", "exposed (no overlap)")];

/// The help under the expert-load field.
pub const MOE_LOAD_HELP: &str = "dropless:γ (busiest EP rank at γ× the mean; default 1.1), forced (uniform), capacity:C (tokens over C× the mean dropped)";

/// The MoE switches `q` sets ([`MOE_KEYS`]) as core's text form (`dispatcher=deepep:4,a2a_overlap=on`;
/// `None`: all default), or the problem of a value holding `,` or `=` (it would set another key),
/// named by its key.
pub fn moe_text(q: &Query) -> Result<Option<String>, Error> {
    let mut pairs = Vec::new();
    for key in MOE_KEYS {
        let Some(v) = q.get(key).map(str::trim).filter(|v| !v.is_empty()) else { continue };
        if v.contains([',', '=']) {
            return Err(Error::invalid(key, v, "must be one value, without a comma or '='")
                .with_hint("e.g. dropless:1.2, deepep:4 or on"));
        }
        pairs.push(format!("{}={v}", key.trim_start_matches("moe.")));
    }
    Ok((!pairs.is_empty()).then(|| pairs.join(",")))
}

/// The MoE switches of `mode` that differ from the defaults, as core's text form (`None`: none
/// or reference mode): what a worker's job carries besides the mode's text.
pub fn moe_text_of(mode: &fmperf_core::mode::Mode) -> Option<String> {
    fmperf_core::resolve::mode_inputs::changed_moe_switches(mode).map(|m| m.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explorer::{is_explorer_key, mode_from_query};

    #[test]
    fn moe_controls_read_into_the_mode_and_name_their_key() {
        use fmperf_core::extended::moe::{Dispatcher, Load};
        let q = Query::parse(
            "?mode=extended&moe.dispatcher=deepep:4&moe.load=dropless:1.3&moe.a2a_overlap=on&moe.fp8_dispatch=on",
        );
        assert_eq!(
            moe_text(&q).unwrap().as_deref(),
            Some("dispatcher=deepep:4,load=dropless:1.3,a2a_overlap=on,fp8_dispatch=on")
        );
        let m = mode_from_query(&q).unwrap();
        let o = m.options().unwrap().moe;
        assert_eq!(o.dispatcher, Dispatcher::Hierarchical { max_domains: Some(4) });
        assert_eq!(o.load, Load::Dropless { imbalance: 1.3 });
        assert!(o.a2a_overlap == fmperf_core::extended::moe::A2aOverlap::On && o.fp8_dispatch);
        // What a worker's job carries reads back into the same switches.
        let text = moe_text_of(&m).unwrap();
        let again = fmperf_core::mode::Mode::extended().with_moe_text(Some(&text)).unwrap();
        assert_eq!(again, m);
        assert_eq!(moe_text_of(&fmperf_core::mode::Mode::extended()), None);
        // Absent or empty keys are the defaults. In reference mode the switches wait in the URL,
        // as `ext`'s do (the mode toggle keeps both for the way back): not read, not an error.
        assert_eq!(moe_text(&Query::parse("?moe.load=")).unwrap(), None);
        let r = mode_from_query(&Query::parse("?mode=reference&moe.dispatcher=allgather")).unwrap();
        assert_eq!(r, fmperf_core::mode::Mode::Reference);
        let back = mode_from_query(&Query::parse("?mode=extended&moe.dispatcher=allgather")).unwrap();
        assert_ne!(back, fmperf_core::mode::Mode::extended());
        // A bad value is an error at its field; a comma cannot smuggle in another key.
        let bad = mode_from_query(&Query::parse("?mode=extended&moe.load=sometimes")).unwrap_err();
        assert_eq!(bad.field(), Some(MOE_LOAD));
        let smuggled = mode_from_query(&Query::parse("?mode=extended&moe.load=forced%2Cep%3D4")).unwrap_err();
        assert_eq!(smuggled.field(), Some(MOE_LOAD));
        assert!(is_explorer_key(MOE_DISPATCHER));
    }
}
