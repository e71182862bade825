//! The real torchtitan TOML files of `tests/data/real/` read through `parse_files`: the degrees,
//! batch and sequence length the manifest states, and the shape of the flavour they name.

#[path = "nemo_real.rs"]
mod nemo_real;

#[test]
fn real_torchtitan_files_are_read_as_stated() {
    let (ok, n) = nemo_real::report(&["torchtitan"]);
    if n > 0 {
        assert!(ok >= n, "{ok} of {n}");
    }
}
