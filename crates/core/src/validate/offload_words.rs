//! How a row's words state Megatron-LM's fine-grained activation offloading
//! ([`ActivationOffload`], priced by [`crate::extended::activation_offload`]):
//! `--fine-grained-activation-offloading True` with `--offload-modules [m1 m2 …]` (or
//! `offload_modules`), the list up to its `]` (or the next `--`, `;`). Megatron-LM's rules
//! (`megatron/core/transformer/transformer_config.py` l. 2127–2153 at d98e8a6): offloading on needs
//! a non-empty list of `core_attn`, `attn_proj`, `expert_fc1`, `fused_group_mlp`, `moe_act`,
//! `attn_norm`, `mlp_norm`, `qkv_linear`, `gdp_qkv`; `attn_proj` without `core_attn` is refused.
//! A list without offloading on (Megatron then offloads nothing) and a list stated twice are errors:
//! the words contradict or repeat themselves. The experts' modules (`expert_fc1`, `moe_act`,
//! `fused_group_mlp`) and `gdp_qkv` are read but their copies not priced: the note says so; the
//! routed experts' `expert_fc1` and `moe_act` leave the device's memory
//! ([`read_offload_with_experts`], [`crate::extended::moe::expert_offload`]).

use super::words::Words;
use crate::extended::moe::options::ExpertOffload;
use crate::extended::options::ActivationOffload;

/// The fields whose words [`read_offload`] reads, as its errors name them.
const OFFLOAD_WORDS_FIELD: &str = "parallel.other (activation offloading)";

/// Megatron-LM's offload modules fmperf reads but does not price (module docs).
const UNPRICED_MODULES: [&str; 4] = ["expert_fc1", "moe_act", "fused_group_mlp", "gdp_qkv"];

/// The offloaded modules the words `text` (lower case) state, with a note on what is not priced.
/// A module Megatron does not know, offloading on with no module, or `attn_proj` without
/// `core_attn` is an error naming the words.
pub fn read_offload(text: &str) -> Result<(ActivationOffload, Option<String>), crate::Error> {
    read_offload_with_experts(text).map(|(o, _, note)| (o, note))
}

/// [`read_offload`] with the routed experts' modules it names (`expert_fc1`, `moe_act`: their
/// device memory, [`crate::extended::moe::expert_offload`]; the note says their copies are not
/// priced).
pub fn read_offload_with_experts(
    text: &str,
) -> Result<(ActivationOffload, ExpertOffload, Option<String>), crate::Error> {
    let w = Words::new(text);
    let mut experts = ExpertOffload::default();
    let on = super::step_words::stated_flag(
        &w,
        "fine grained activation offloading",
        OFFLOAD_WORDS_FIELD,
        "--fine-grained-activation-offloading",
    )?;
    let mut o = ActivationOffload::default();
    let lists: Vec<&str> = ["--offload-modules", "offload_modules"]
        .iter()
        .flat_map(|k| text.match_indices(k).map(move |(at, _)| at + k.len()))
        .map(|from| {
            let rest = &text[from..];
            let end = ["]", "--", ";"].iter().filter_map(|s| rest.find(s)).min().unwrap_or(rest.len());
            &rest[..end]
        })
        .collect();
    if lists.len() > 1 {
        return Err(crate::Error::invalid(
            OFFLOAD_WORDS_FIELD,
            "--offload-modules",
            "the offloaded modules are stated more than once: state one list",
        ));
    }
    let list = lists.first().copied();
    if on != Some(true) {
        return match list {
            Some(_) => Err(crate::Error::invalid(
                OFFLOAD_WORDS_FIELD,
                "--offload-modules",
                "offloaded modules stated without --fine-grained-activation-offloading on: Megatron-LM offloads \
                 nothing then; state offloading on, or drop the list",
            )),
            None => Ok((o, experts, None)),
        };
    }
    let mut unpriced = Vec::new();
    let names = list.unwrap_or("").split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|n| !n.is_empty());
    for name in names {
        match name {
            "attn_norm" => o.attn_norm = true,
            "qkv_linear" => o.qkv_linear = true,
            "core_attn" => o.core_attn = true,
            "attn_proj" => o.attn_proj = true,
            "mlp_norm" => o.mlp_norm = true,
            n if UNPRICED_MODULES.contains(&n) => {
                experts.expert_fc1 |= n == "expert_fc1";
                experts.moe_act |= n == "moe_act";
                unpriced.push(n);
            }
            n => {
                return Err(crate::Error::invalid(
                    OFFLOAD_WORDS_FIELD,
                    n,
                    "not a Megatron-LM offload module (core_attn, attn_proj, expert_fc1, fused_group_mlp, moe_act, \
                     attn_norm, mlp_norm, qkv_linear, gdp_qkv)",
                ));
            }
        }
    }
    if !o.any() && unpriced.is_empty() {
        return Err(crate::Error::invalid(
            OFFLOAD_WORDS_FIELD,
            "--fine-grained-activation-offloading",
            "offloading stated without --offload-modules: Megatron-LM requires at least one module",
        ));
    }
    if o.attn_proj && !o.core_attn {
        return Err(crate::Error::invalid(
            OFFLOAD_WORDS_FIELD,
            "attn_proj",
            "attn_proj offloaded without core_attn: Megatron-LM refuses it (its input is core_attn's output)",
        ));
    }
    let note = (!unpriced.is_empty()).then(|| {
        let priced = priced_names(&o);
        let head = if priced.is_empty() { String::new() } else { format!("the copies of {priced} priced; ") };
        format!(
            "fine-grained activation offloading: {head}the copies of {} not priced{}",
            unpriced.join(", "),
            if experts == ExpertOffload::default() {
                ""
            } else {
                " (the routed experts' offloaded tensors leave the device's memory)"
            }
        )
    });
    Ok((o, experts, note))
}

/// The priced modules of `o`, as Megatron names them, comma-joined (empty for none).
fn priced_names(o: &ActivationOffload) -> String {
    let named = [
        (o.attn_norm, "attn_norm"),
        (o.qkv_linear, "qkv_linear"),
        (o.core_attn, "core_attn"),
        (o.attn_proj, "attn_proj"),
        (o.mlp_norm, "mlp_norm"),
    ];
    let on: Vec<&str> = named.iter().filter(|(b, _)| *b).map(|(_, n)| *n).collect();
    on.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_functional_tests_list_is_read() {
        let (o, note) = read_offload(
            "--fine-grained-activation-offloading true --offload-modules [expert_fc1 moe_act attn_norm mlp_norm \
             qkv_linear core_attn attn_proj]",
        )
        .unwrap();
        assert_eq!(
            o,
            ActivationOffload { attn_norm: true, qkv_linear: true, core_attn: true, attn_proj: true, mlp_norm: true }
        );
        let note = note.unwrap();
        assert!(note.contains("attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm priced"), "{note}");
        assert!(note.contains("expert_fc1, moe_act not priced"), "{note}");
        // The experts' modules alone: only what is not priced is named.
        let (o, experts, note) = read_offload_with_experts(
            "--fine-grained-activation-offloading true --offload-modules [expert_fc1 moe_act]",
        )
        .unwrap();
        assert!(!o.any());
        assert_eq!(experts, ExpertOffload { expert_fc1: true, moe_act: true });
        assert_eq!(
            note.unwrap(),
            "fine-grained activation offloading: the copies of expert_fc1, moe_act not priced (the routed experts' \
             offloaded tensors leave the device's memory)"
        );
        // One of them: only that one leaves the device.
        let (_, experts, _) =
            read_offload_with_experts("--fine-grained-activation-offloading true --offload-modules [moe_act]").unwrap();
        assert_eq!(experts, ExpertOffload { expert_fc1: false, moe_act: true });
    }

    #[test]
    fn offloading_absent_offloads_nothing_and_a_list_that_does_not_apply_is_an_error() {
        assert_eq!(read_offload("--use-distributed-optimizer").unwrap(), (ActivationOffload::default(), None));
        assert_eq!(
            read_offload("--fine-grained-activation-offloading false").unwrap(),
            (ActivationOffload::default(), None)
        );
        // A list with offloading off or unstated: Megatron-LM offloads nothing, so the list does not
        // apply; it is named, not dropped.
        let bad = |t: &str| read_offload(t).unwrap_err().to_string();
        assert!(bad("--offload-modules [core_attn]").contains("without --fine-grained-activation-offloading"));
        let off = bad("--fine-grained-activation-offloading false --offload-modules [core_attn]");
        assert!(off.contains("--offload-modules"), "{off}");
        // Two lists: which one ran is not knowable from the words.
        let twice = bad(
            "--fine-grained-activation-offloading true --offload-modules [core_attn] --offload-modules [attn_norm]",
        );
        assert!(twice.contains("more than once"), "{twice}");
    }

    #[test]
    fn megatron_s_rules_are_errors() {
        let bad = |t: &str| read_offload(t).unwrap_err().to_string();
        assert!(bad("--fine-grained-activation-offloading true").contains("at least one module"));
        assert!(bad("--fine-grained-activation-offloading true --offload-modules [mlp]").contains("mlp"));
        assert!(bad("--fine-grained-activation-offloading true --offload-modules [attn_proj]").contains("core_attn"));
        let (o, note) =
            read_offload("--fine-grained-activation-offloading true --offload-modules [core_attn]").unwrap();
        assert!(o.core_attn && !o.attn_proj && note.is_none());
    }
}
