//! The words of a Mixture-of-Experts row that set its MoE switches ([`super::moe_runs`]): the
//! router's group limit, the dispatcher's overlap and FP8 dispatch, the all-to-all overlap stated
//! as a field, words or DeepSeek's DualPipe schedule, Megatron-Core's selective-recompute
//! modules (`layernorm`, `mla_up_proj`, `moe_act`, `moe`) however they are spelled, and
//! DeepSeek-V3's low-precision storage (BF16 Adam moments, FP8-cached SwiGLU inputs). Each reading
//! is noted.

use crate::vocab::{Note, NoteList};
use serde_json::Value;

use super::words::Words;
use crate::extended::moe::RecomputeModules;
use crate::extended::muon::Optimizer;
use crate::extended::{OptimizerStates, Recompute};

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
pub(super) fn fp8_dispatch_of(dw: &Words, notes: &mut Vec<Note>) -> bool {
    let on = dw.has("fp8")
        && (dw.affirms("fp8 dispatch") || dw.has("dispatch in fp8") || dw.has("fp8 all to all") || dw.has("fp8 a2a"));
    if on {
        notes.reading("tokens dispatched in FP8 with 1x128 scales (fp8_dispatch)".into());
    }
    on
}

/// Megatron-LM's flags that overlap something other than the expert all-to-all, longest first:
/// the data-parallel gradient reduction and parameter all-gather (`--overlap-grad-reduce`,
/// `--overlap-param-gather`, `--overlap-param-gather-with-optimizer-step`), the CPU optimizer's
/// copies (`--overlap-cpu-optimizer-d2h-h2d`), the pipeline's sends (`--no-overlap-p2p-communication`)
/// — `megatron/training/arguments.py` at d98e8a6, l. 2926, 3118–3150 — and the fields of
/// `TransformerConfig` that its flags are made from (`tp_comm_overlap`, the tensor-parallel
/// GEMMs' with their collectives; `moe_shared_expert_overlap`, the shared experts on a side stream:
/// `megatron/core/transformer/transformer_config.py` at d98e8a6, l. 717). The expert exchange's
/// own is `--overlap-moe-expert-parallel-comm` (`overlap_moe_expert_parallel_comm`, l. 3002).
const OTHER_OVERLAP_FLAGS: [&str; 9] = [
    "overlap-param-gather-with-optimizer-step",
    "no-overlap-p2p-communication",
    "overlap-cpu-optimizer-d2h-h2d",
    "moe-shared-expert-overlap",
    "overlap-param-gather",
    "overlap-p2p-communication",
    "overlap-grad-reduce",
    "tp-comm-overlap",
    "overlap-p2p-comm",
];

/// `other` (lower case) without the flags of [`OTHER_OVERLAP_FLAGS`], spelled with dashes or
/// underscores: what is left of it can state the expert all-to-all's overlap.
fn without_other_overlaps(other: &str) -> String {
    let mut s = other.replace('_', "-");
    for flag in OTHER_OVERLAP_FLAGS {
        s = s.replace(flag, " ");
    }
    s
}

/// Whether the expert all-to-all is overlapped with computation as the row states it: a field
/// of its own (`a2a_overlap`, Megatron's `overlap_moe_expert_parallel_comm`, … as a boolean or
/// words), the dispatcher's or the parallel group's other words ("EP A2A overlap",
/// `--overlap-moe-expert-parallel-comm`; not the flags that overlap other work,
/// [`OTHER_OVERLAP_FLAGS`]), or DeepSeek's DualPipe schedule (each chunk's dispatch and combine
/// hidden behind another's compute); noted.
pub(super) fn a2a_overlap_of(field: Option<&Value>, disp: &str, other: &str, notes: &mut Vec<Note>) -> bool {
    let field = field.and_then(|v| match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => Some(n.as_f64() != Some(0.0)),
        Value::String(s) => Some(overlap_on(&format!("overlap {s}")) || s.trim().eq_ignore_ascii_case("true")),
        _ => None,
    });
    let dualpipe = dual_pipe_of(disp, other);
    let on = field.unwrap_or_else(|| overlap_on(disp) || overlap_on(&without_other_overlaps(other)) || dualpipe);
    if on {
        notes.reading(if dualpipe {
            "DualPipe: the expert all-to-all hidden behind another chunk's computation (a2a_overlap), two stages per \
             rank with pp + 1 micro-batches in flight and its smaller bubble (moe dual_pipe=on)"
                .into()
        } else {
            "expert all-to-all overlapped with another micro-batch's computation (a2a_overlap)".into()
        });
    }
    on
}

/// Whether the dispatcher's or the parallel group's other words name DeepSeek's DualPipe schedule
/// (`moe dual_pipe=on`: its memory and its bubble; with the exchange overlapped).
pub(super) fn dual_pipe_of(disp: &str, other: &str) -> bool {
    Words::new(&format!("{disp}; {other}")).any(&["dualpipe", "dual pipe"])
}

/// Megatron-Core's selective-recompute modules the recompute words name (`mla_up_proj`,
/// `moe_act`, `moe` as a word of its own — `--recompute-modules` / `recompute_modules`), in effect
/// when the level read is selective; noted.
pub(super) fn recompute_modules_of(rec: &str, level: Recompute, notes: &mut Vec<Note>) -> RecomputeModules {
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
    // Every norm recomputed: Megatron's `layernorm` module, DeepSeek's "RMSNorm operations".
    let layernorm = w.any(&["layernorm", "layer norm", "rmsnorm", "rms norm", "norms"]);
    let m = RecomputeModules { mla_up_proj, moe_act, moe: moe_alone, layernorm };
    if m != RecomputeModules::default() {
        notes.reading(format!("selective recompute modules: {}", m.names()));
    }
    m
}

/// Whether the row's `loss` words leave the eager cross-entropy's FP32 upcast on: off where they
/// set `fp32_upcast` false (NeMo AutoModel's `MaskedCrossEntropy`, `nemo_automodel/components/
/// loss/masked_ce.py` @0122d60: the 16-bit logits go to `F.cross_entropy` unconverted), read as
/// any store-true flag ([`super::step_words::stated_flag`]: "no fp32 upcast" too); on where unstated
/// or set; an error on `loss` where the words set it both ways. Off is noted.
pub(super) fn loss_fp32_upcast_of(text: &str, notes: &mut Vec<Note>) -> Result<bool, crate::Error> {
    let stated = super::step_words::stated_flag(&Words::new(text), "fp32 upcast", "loss", "fp32_upcast")?;
    let on = stated.unwrap_or(true);
    if !on {
        notes.reading("loss: cross-entropy on the 16-bit logits, no FP32 copy (loss_fp32_upcast=off)".into());
    }
    Ok(on)
}

/// The optimizer's number formats the row's optimizer words state: the whole model in BF16 with
/// the optimizer's moments in the parameters' dtype ("pure BF16": NeMo AutoModel casts its MoE
/// models to BF16, `nemo_automodel/components/models/qwen3_moe/model.py` @05e09029, and
/// `torch.optim.Adam` keeps `exp_avg`/`exp_avg_sq` as `zeros_like(param)`) are
/// [`OptimizerStates::PureBf16`]; Adam's moments in BF16 beside
/// FP32 master weights ("AdamW moments in BF16, FP32 master weights and gradients": DeepSeek-V3
/// §3.3.3) are [`OptimizerStates::Bf16Moments`]; anything else keeps the mixed-precision default
/// (`None`). Noted.
pub(super) fn optimizer_states_of(text: &str, notes: &mut Vec<Note>) -> Option<OptimizerStates> {
    let w = Words::new(text);
    if w.any(&["pure bf16", "pure bfloat16"]) {
        notes.reading(
            "optimizer: BF16 parameters, gradients and Adam moments, no FP32 master (optimizer_states=pure_bf16)"
                .into(),
        );
        return Some(OptimizerStates::PureBf16);
    }
    let moments = w.any(&["moment", "moments", "exp avg", "exp avg sq", "optimizer states", "optimizer state"]);
    let bf16 = w.any(&["bf16", "bfloat16"]);
    // "BF16 weights, FP32 Adam moments" names both words without BF16 moments.
    let fp32_moments = w.any(&[
        "fp32 moments",
        "moments in fp32",
        "fp32 optimizer states",
        "optimizer states in fp32",
        "fp32 adam",
        "adam moments in fp32",
    ]);
    if !(moments && bf16) || fp32_moments {
        return None;
    }
    notes.reading(
        "optimizer: Adam moments in BF16 beside FP32 master weights and gradients (optimizer_states=bf16_moments)"
            .into(),
    );
    Some(OptimizerStates::Bf16Moments)
}

/// The optimizer's algorithm the row's words name (its `optimizer` field and `--optimizer NAME`
/// among its launch words): Muon where they say `muon`, layer-wise distributed when they also
/// turn Megatron's distributed optimizer on (`--use-distributed-optimizer`, not negated) or say
/// `dist_muon` (Megatron-LM `megatron/training/arguments.py:1724–1736` at d98e8a6: Muon with the
/// distributed optimizer is `use_layer_wise_distributed_optimizer`); Adam otherwise. Noted when
/// Muon.
pub(super) fn optimizer_of(optimizer: &str, launch: &str, notes: &mut Vec<Note>) -> Optimizer {
    let o = Words::new(optimizer);
    let l = Words::new(launch);
    let named = |w: &Words| w.has("muon") || w.has("dist muon");
    if !named(&o) && !(l.has("optimizer muon") || l.has("optimizer dist muon")) {
        return Optimizer::Adam;
    }
    let distributed = o.has("dist muon") || l.has("optimizer dist muon") || l.affirms("use distributed optimizer");
    let optimizer = if distributed { Optimizer::DistMuon } else { Optimizer::Muon };
    notes.reading(format!(
        "optimizer: Muon{} (optimizer={})",
        if distributed { ", layer-wise distributed over the data-parallel ranks" } else { " on every rank" },
        optimizer.as_str()
    ));
    optimizer
}

/// Whether the row's activation words say the experts' SwiGLU input is cached in FP8 (DeepSeek-V3
/// §3.3.3: "SwiGLU inputs cached in FP8, output recomputed"; `moe fp8_swiglu_cache`). Noted.
pub(super) fn fp8_swiglu_cache_of(text: &str, notes: &mut Vec<Note>) -> bool {
    let w = Words::new(text);
    let on = w.any(&["swiglu", "swi glu", "glu"]) && w.has("fp8") && w.affirms("fp8");
    if on {
        notes.reading("the experts' SwiGLU inputs cached in FP8, their output recomputed (fp8_swiglu_cache)".into());
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deepseek_low_precision_storage_words() {
        let mut notes = Vec::new();
        let o = optimizer_states_of(
            "AdamW; first and second moments in BF16; FP32 master weights and gradients",
            &mut notes,
        );
        assert_eq!(o, Some(OptimizerStates::Bf16Moments));
        assert_eq!(optimizer_states_of("AdamW, FP32 master weights", &mut notes), None);
        // "pure BF16" wins over the moments-in-BF16 words it also contains.
        let pure =
            optimizer_states_of("torch.optim.Adam on the BF16-cast model: pure BF16, moments in BF16", &mut notes);
        assert_eq!(pure, Some(OptimizerStates::PureBf16));
        assert!(!loss_fp32_upcast_of("MaskedCrossEntropy, fp32_upcast: false", &mut notes).unwrap());
        assert!(loss_fp32_upcast_of("MaskedCrossEntropy", &mut notes).unwrap());
        // Set both ways: an error naming the field, no note.
        let both = loss_fp32_upcast_of("fp32_upcast: false; later fp32_upcast: true", &mut notes).unwrap_err();
        assert!(both.to_string().contains("loss"), "{both}");
        assert_eq!(optimizer_of("adam", "--use-distributed-optimizer True", &mut notes), Optimizer::Adam);
        assert_eq!(optimizer_of("muon", "--optimizer muon", &mut notes), Optimizer::Muon);
        assert_eq!(
            optimizer_of("muon", "--use-distributed-optimizer True --optimizer muon", &mut notes),
            Optimizer::DistMuon
        );
        assert_eq!(optimizer_of("", "--use-distributed-optimizer False --optimizer muon", &mut notes), Optimizer::Muon);
        assert_eq!(optimizer_of("dist_muon", "", &mut notes), Optimizer::DistMuon);
        assert_eq!(notes.len(), 7, "{notes:?}");
        notes.truncate(1);
        assert_eq!(optimizer_states_of("bf16 training", &mut notes), None);
        assert_eq!(optimizer_states_of("BF16 weights and activations; Adam moments in FP32", &mut notes), None);
        assert!(fp8_swiglu_cache_of("SwiGLU inputs of the MoE cached in FP8, output recomputed", &mut notes));
        assert!(!fp8_swiglu_cache_of("activations in BF16", &mut notes));
        assert!(!fp8_swiglu_cache_of("SwiGLU, BF16", &mut notes));
        assert_eq!(notes.len(), 2, "{notes:?}");
        let m = recompute_modules_of(
            "rmsnorm + MLA up-projection recomputed in backward",
            Recompute::Selective,
            &mut notes,
        );
        assert!(m.layernorm && m.mla_up_proj && !m.moe && !m.moe_act, "{m:?}");
        let g = recompute_modules_of("selective: layernorm, moe_act", Recompute::Selective, &mut notes);
        assert!(g.layernorm && g.moe_act && !g.moe);
        assert!(!recompute_modules_of("selective: moe", Recompute::Selective, &mut notes).layernorm);
    }

    /// Megatron's data-parallel overlap flags in a row's arguments (the functional tests'
    /// `model_config.yaml` as written) do not overlap the expert all-to-all; its own flag does.
    #[test]
    fn only_the_expert_exchange_overlap_flag_overlaps_the_all_to_all() {
        let mut notes = Vec::new();
        let dp = "--use-distributed-optimizer true --overlap-grad-reduce true --overlap-param-gather true";
        assert!(!a2a_overlap_of(None, "alltoall", dp, &mut notes));
        assert!(!a2a_overlap_of(None, "alltoall", "overlap_grad_reduce: true; tp_comm_overlap: true", &mut notes));
        assert!(!a2a_overlap_of(None, "alltoall", "--moe-shared-expert-overlap true", &mut notes));
        assert!(notes.is_empty(), "{notes:?}");
        assert!(a2a_overlap_of(None, "alltoall", &format!("{dp} --overlap-moe-expert-parallel-comm true"), &mut notes));
        assert!(a2a_overlap_of(None, "alltoall + ep a2a overlap", dp, &mut notes));
        assert!(a2a_overlap_of(None, "alltoall", "overlap_moe_expert_parallel_comm: true", &mut notes));
        assert_eq!(notes.len(), 3, "{notes:?}");
    }
}
