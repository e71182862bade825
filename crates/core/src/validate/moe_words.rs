//! The words of a Mixture-of-Experts row that set its MoE switches ([`super::moe_runs`]): the
//! router's group limit, the dispatcher's overlap and FP8 dispatch, the all-to-all overlap stated
//! as a field, words or DeepSeek's DualPipe schedule, and Megatron-Core's selective-recompute
//! modules (`mla_up_proj`, `moe_act`, `moe`) however they are spelled. Each reading is noted.

use serde_json::Value;

use super::words::Words;
use crate::extended::Recompute;
use crate::extended::moe::RecomputeModules;

/// The integer after `top-` and before `group` in router words ("top-4 groups") [domains].
pub(super) fn group_limit(router: &str) -> Option<u64> {
    let i = router.find(" group")?;
    let before = &router[..i];
    let digits: String = before.rsplit("top-").next()?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// Whether words switch an overlap on ("+ EP A2A overlap") rather than off ("no … overlap",
/// "A2A_OVERLAP=0", "overlap: false").
pub(super) fn overlap_on(w: &str) -> bool {
    let t = Words::new(w);
    w.contains("overlap")
        && !w.contains("no ")
        && !w.contains("overlap=0")
        && !w.contains("no a2a")
        && t.affirms("overlap")
        && !t.any(&["overlap 0", "overlap false"])
}

/// Whether the tokens are dispatched in FP8 (DeepSeek-V3 quantises the activations before the
/// experts' up-projection and dispatches them in FP8; Megatron-Core's FP8 dispatch): the
/// dispatcher's words say "FP8 dispatch", "dispatch in FP8" or "FP8 all-to-all"; noted.
pub(super) fn fp8_dispatch_of(dw: &Words, notes: &mut Vec<String>) -> bool {
    let on = dw.has("fp8")
        && (dw.affirms("fp8 dispatch") || dw.has("dispatch in fp8") || dw.has("fp8 all to all") || dw.has("fp8 a2a"));
    if on {
        notes.push("tokens dispatched in FP8 with 1x128 scales (fp8_dispatch)".into());
    }
    on
}

/// Whether the expert all-to-all is overlapped with computation as the row states it: a field
/// of its own (`a2a_overlap`, Megatron's `overlap_moe_expert_parallel_comm`, … as a boolean or
/// words), the dispatcher's or the parallel group's other words ("EP A2A overlap"), or DeepSeek's
/// DualPipe schedule (each chunk's dispatch and combine hidden behind another's compute); noted.
pub(super) fn a2a_overlap_of(field: Option<&Value>, disp: &str, other: &str, notes: &mut Vec<String>) -> bool {
    let field = field.and_then(|v| match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => Some(n.as_f64() != Some(0.0)),
        Value::String(s) => Some(overlap_on(&format!("overlap {s}")) || s.trim().eq_ignore_ascii_case("true")),
        _ => None,
    });
    let dualpipe = Words::new(&format!("{disp}; {other}")).any(&["dualpipe", "dual pipe"]);
    let on = field.unwrap_or_else(|| overlap_on(disp) || overlap_on(&other) || dualpipe);
    if on {
        notes.push(if dualpipe {
            "DualPipe: the expert all-to-all hidden behind another chunk's computation (a2a_overlap); its memory \
             (two stages per rank, pp + 1 micro-batches in flight: moe dual_pipe=on) is not applied: DeepSeek's \
             documented savings that make room for it (BF16 Adam moments, FP8-cached SwiGLU inputs) are not \
             modelled"
                .into()
        } else {
            "expert all-to-all overlapped with another micro-batch's computation (a2a_overlap)".into()
        });
    }
    on
}

/// Megatron-Core's selective-recompute modules the recompute words name (`mla_up_proj`,
/// `moe_act`, `moe` as a word of its own — `--recompute-modules` / `recompute_modules`), in effect
/// when the level read is selective; noted.
pub(super) fn recompute_modules_of(rec: &str, level: Recompute, notes: &mut Vec<String>) -> RecomputeModules {
    if level != Recompute::Selective {
        return RecomputeModules::default();
    }
    let w = Words::new(rec);
    let t = &w.tokens;
    // `moe` as a module of its own: not the first word of `moe_act` / "MoE activation(s)".
    let moe_alone = t.iter().enumerate().any(|(i, x)| {
        x == "moe" && t.get(i + 1).is_none_or(|n| !matches!(n.as_str(), "act" | "activation" | "activations"))
    });
    // The latent attention's up-projections however they are spelled (`mla_up_proj`, "MLA
    // up-projection", "the MLA up projections").
    let mla_up_proj = w.has("mla") && w.any(&["up proj", "up projection", "up projections", "up"]);
    let moe_act = w.any(&["moe act", "moe activation", "moe activations", "expert activation", "experts activation"]);
    let m = RecomputeModules { mla_up_proj, moe_act, moe: moe_alone };
    if m != RecomputeModules::default() {
        notes.push(format!("selective recompute modules: {}", m.names()));
    }
    m
}
