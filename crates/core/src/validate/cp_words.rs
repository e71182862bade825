//! The flavour of context parallelism a measured row states: the K/V ring, Ulysses' all-to-all
//! over heads, or both (USP's hybrid), with the split degrees — read from the row's
//! `parallel.other` words (where `parallel.cp_comm_type` lands, [`super::schema`]) into
//! `ext.cp_comm` and `ext.cp_ulysses` ([`crate::extended::context_parallel`]).
//!
//! Words (by meaning, [`super::words`]):
//! * Megatron-Core's `--cp-comm-type` values, which it hands to Transformer Engine's
//!   `DotProductAttention` (NVIDIA/TransformerEngine, `transformer_engine/pytorch/attention.py`,
//!   the `cp_comm_type` docstring: "p2p" a K/V ring overlapped with attention, "all_gather",
//!   "a2a" like DeepSpeed Ulysses, "a2a+p2p" a2a inside each CP sub-group then the ring between
//!   them): `p2p` → ring, `a2a` → Ulysses, both (`a2a+p2p`) → hybrid, read only as the value of
//!   `cp comm type` (a row's `cp_comm_type` field lands there as `cp_comm_type VALUE`,
//!   [`super::schema`], [`super::layout_sweeps`]; a launch line's `--cp-comm-type VALUE` reads
//!   alike), since other flags say `a2a` and `p2p` too (a MoE dispatcher's "EP A2A overlap",
//!   Megatron's `--overlap-p2p-communication` of the pipeline); the pair `a2a+p2p` is read
//!   anywhere (no other flag says it). The words `ring attention`, `ulysses`, `usp`, `hybrid
//!   context parallel` likewise (not `hybrid` alone: Megatron's `--fp8-format hybrid` says it;
//!   not `all to all`: a MoE token dispatcher's `alltoall` says it, and Ulysses is only one use of
//!   an all-to-all). `all_gather` (stated as `cp comm type all_gather`) has no flavour of its own
//!   here: it is priced as the ring, with a note saying so (its K/V all-gather before attention is
//!   exposed, the ring's exchange overlaps), and it is an error beside another flavour's words or
//!   a split degree;
//! * the split degrees as USP names them (yunchang's `set_seq_parallel_pg(ulysses_degree,
//!   ring_degree, …)`, feifeibear/long-context-attention @ 56118e0 `yunchang/globals.py`
//!   l. 22–29: `sp_degree = sp_ring_degree * sp_ulysses_degree`): `ulysses degree U`, `ring
//!   degree R`, with `U × R = cp`.
//!
//! A row without any of these words keeps the default (the ring), as before. Words that
//! contradict each other or the row's `cp` are an error naming `parallel.other` and the rule, never
//! a silent pick.

use super::words::Words;
use crate::Error;
use crate::extended::choices::CpComm;
use crate::vocab::Note;

/// The field the words are read from (errors and notes name it).
const FIELD: &str = "parallel.other (context-parallel flavour)";

/// The flavour a row states for its `cp`-way context parallelism: `(flavour, Ulysses degree,
/// note)`; the Ulysses degree is 1 for the ring and `cp` for Ulysses. `Ok((Ring, 1, None))` when
/// the words state nothing (or `cp ≤ 1`).
pub(super) fn read_cp_flavour(other: &Words, cp: u64) -> Result<(CpComm, u64, Option<Note>), Error> {
    if cp <= 1 {
        return Ok((CpComm::Ring, 1, None));
    }
    let degree = |phrase: &str| other.number_after(phrase, 1).filter(|d| d.fract() == 0.0 && *d >= 1.0);
    let (u_stated, r_stated) = (degree("ulysses degree").map(|d| d as u64), degree("ring degree").map(|d| d as u64));
    // The flavour words; `ulysses` in `ulysses degree` names a degree, not the flavour.
    let ulysses_word = other
        .tokens
        .iter()
        .enumerate()
        .any(|(i, t)| t == "ulysses" && other.tokens.get(i + 1).map(String::as_str) != Some("degree"));
    // Megatron's values as the value of `cp comm type`; `a2a+p2p` anywhere.
    let pair = other.has("a2a p2p");
    let a2a = ulysses_word || pair || other.has("cp comm type a2a");
    let p2p = pair || other.any(&["cp comm type p2p", "ring attention"]);
    // "hybrid" alone is not read: other flags use it (`--fp8-format hybrid`).
    let hybrid =
        (a2a && p2p) || other.any(&["usp", "unified sequence parallel", "hybrid context parallel", "hybrid cp"]);
    // Megatron's fourth value, `--cp-comm-type all_gather` (the phrase only: MoE's all-gather
    // dispatcher says "all gather" too).
    let all_gather = other.any(&["cp comm type all gather", "cp comm type allgather"]);
    if all_gather && (a2a || p2p || u_stated.is_some() || r_stated.is_some()) {
        return Err(Error::invalid(
            FIELD,
            other.text.clone(),
            "cp_comm_type all_gather cannot stand beside another flavour's words or a ulysses/ring degree",
        ));
    }
    if all_gather {
        let said = format!(
            "context parallelism of {cp} as all_gather priced as the K/V ring (cp_comm=ring): fmperf has no \
             all-gather flavour; its K/V all-gather before attention is exposed where the ring's exchange overlaps"
        );
        return Ok((CpComm::Ring, 1, Some(Note::reading(said).about(FIELD))));
    }
    if let (Some(u), Some(r)) = (u_stated, r_stated)
        && u * r != cp
    {
        return Err(Error::invalid(
            FIELD,
            format!("ulysses degree {u}, ring degree {r}"),
            format!("U × R must be cp = {cp}"),
        ));
    }
    // The Ulysses degree: stated, else cp over a stated ring degree.
    let u = u_stated.or_else(|| r_stated.filter(|r| cp.is_multiple_of(*r)).map(|r| cp / r));
    let (flavour, u) = match u {
        Some(u) if !cp.is_multiple_of(u) => {
            return Err(Error::invalid(FIELD, format!("ulysses degree {u}"), format!("must divide cp = {cp}")));
        }
        // Degrees decide; the flavour words must agree with them.
        Some(1) if !a2a || p2p => (CpComm::Ring, 1),
        Some(u) if u == cp && (!p2p || a2a) => (CpComm::Ulysses, cp),
        Some(u) if u > 1 && u < cp && (hybrid || (!a2a && !p2p)) => (CpComm::Hybrid, u),
        Some(u) => {
            return Err(Error::invalid(
                FIELD,
                other.text.clone(),
                format!(
                    "the flavour words disagree with ulysses degree {u} of cp = {cp} (ring: 1, ulysses: cp, hybrid: between)"
                ),
            ));
        }
        None if hybrid => {
            return Err(Error::invalid(
                FIELD,
                other.text.clone(),
                "a hybrid (a2a+p2p) needs its ulysses degree or ring degree",
            ));
        }
        None if a2a => (CpComm::Ulysses, cp),
        None if p2p => (CpComm::Ring, 1),
        None => return Ok((CpComm::Ring, 1, None)),
    };
    let said = match flavour {
        CpComm::Ulysses => format!("context parallelism of {cp} as Ulysses' all-to-all over heads (cp_comm=ulysses)"),
        CpComm::Hybrid => format!(
            "context parallelism of {cp} as USP's hybrid: Ulysses over {u} ranks × a K/V ring of {} (cp_comm=hybrid, cp_ulysses={u})",
            cp / u
        ),
        _ => format!("context parallelism of {cp} as a K/V ring (cp_comm=ring)"),
    };
    Ok((flavour, u, Some(Note::reading(said).about(FIELD))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, cp: u64) -> Result<(CpComm, u64), Error> {
        read_cp_flavour(&Words::new(text), cp).map(|(f, u, _)| (f, u))
    }

    #[test]
    fn megatron_words_and_usp_degrees_read() {
        assert_eq!(read("a2a+p2p; ulysses degree 4; ring degree 4", 16).unwrap(), (CpComm::Hybrid, 4));
        // Only the ring degree: U = cp / R = 16 / 8 = 2.
        assert_eq!(read("a2a+p2p; ring degree 8", 16).unwrap(), (CpComm::Hybrid, 2));
        assert_eq!(read("a2a; ulysses degree 8; ring degree 1", 8).unwrap(), (CpComm::Ulysses, 8));
        assert_eq!(read("p2p; ulysses degree 1; ring degree 16", 16).unwrap(), (CpComm::Ring, 1));
        assert_eq!(read("--cp-comm-type a2a", 4).unwrap(), (CpComm::Ulysses, 4));
        assert_eq!(read("cp_comm_type p2p", 4).unwrap(), (CpComm::Ring, 1));
        assert_eq!(read("ring attention", 4).unwrap(), (CpComm::Ring, 1));
        // Nothing stated, or no context parallelism: the default ring, no note.
        assert!(read_cp_flavour(&Words::new("zero shard group 8"), 4).unwrap().2.is_none());
        assert_eq!(read("a2a+p2p; ulysses degree 4", 1).unwrap(), (CpComm::Ring, 1));
        // Megatron's FP8 format `hybrid` is no context-parallel flavour.
        assert!(read_cp_flavour(&Words::new("--fp8-format hybrid --sequence-parallel True"), 2).unwrap().2.is_none());
    }

    #[test]
    fn all_gather_is_priced_as_the_ring_and_said_so() {
        let (f, u, note) = read_cp_flavour(&Words::new("--cp-comm-type all_gather"), 4).unwrap();
        assert_eq!((f, u), (CpComm::Ring, 1));
        assert!(note.unwrap().text.contains("all_gather priced as the K/V ring"));
        // MoE's all-gather dispatcher is no context-parallel flavour.
        assert!(read_cp_flavour(&Words::new("--moe-token-dispatcher-type all_gather"), 4).unwrap().2.is_none());
        // Beside another flavour or a degree: an error naming the field.
        for text in ["--cp-comm-type all_gather; --cp-comm-type a2a", "--cp-comm-type all_gather; ulysses degree 2"] {
            let e = read_cp_flavour(&Words::new(text), 4).unwrap_err();
            assert!(e.to_string().contains("parallel.other"), "{e}");
        }
    }

    #[test]
    fn moe_and_pipeline_words_are_no_context_parallel_flavour() {
        // A MoE row's dispatcher words (measured-moe-runs.json's "alltoall + EP A2A overlap",
        // Megatron's `--moe-token-dispatcher-type alltoall`, an "all-to-all dispatcher") and the
        // pipeline's `--overlap-p2p-communication` with cp = 4: the default ring, no note.
        for text in [
            "--moe-token-dispatcher-type alltoall",
            "dispatcher: alltoall + EP A2A overlap",
            "MoE all-to-all token dispatcher",
            "--overlap-p2p-communication",
        ] {
            let (f, u, note) = read_cp_flavour(&Words::new(text), 4).unwrap();
            assert_eq!((f, u, note), (CpComm::Ring, 1, None), "{text}");
        }
        // Beside the row's own `cp_comm_type a2a` they change nothing: Ulysses over cp = 4.
        let text = "cp_comm_type a2a; dispatcher: alltoall + EP A2A overlap; --overlap-p2p-communication";
        assert_eq!(read(text, 4).unwrap(), (CpComm::Ulysses, 4));
    }

    #[test]
    fn contradictions_are_errors_naming_the_field() {
        for (text, cp) in [
            ("a2a+p2p; ulysses degree 4; ring degree 2", 16), // 4 × 2 = 8 ≠ 16
            ("a2a+p2p", 16),                                  // hybrid without a degree
            ("cp_comm_type p2p; ulysses degree 16", 16),      // ring words, Ulysses degree
            ("a2a; ulysses degree 3", 16),                    // 3 does not divide 16
        ] {
            let e = read(text, cp).unwrap_err().to_string();
            assert!(e.contains("parallel.other"), "{text}: {e}");
        }
    }
}
