//! "Model FLOPs" of a Mixture-of-Experts model per token, counted the way each framework counts
//! them (the `flop_convention` of `data/measured-moe-runs.json`), to turn a predicted token rate
//! into the TFLOP/s a source reports.
//!
//! Both conventions count `3 ×` the forward GEMM FLOPs (forward, input and weight gradients) and
//! leave recomputation out. Per token, forward, `s` the sequence:
//! * attention projections `2·(weights of Q, K, V, O)` (MLA: its down/up projections);
//! * attention core `2·s_k·a·(d_qk + d_v)`, `s_k = s/2` when causal;
//! * dense MLP `2·m·h·f`, MoE MLP `2·m·h·(k·f_e + E_s·f_s)` (+ router `2·h·E` when counted);
//! * logits `2·h·V`; each MTP block one more block, its `2h × h` projection and logits.
//!
//! * **Megatron** (Megatron-LM `num_floating_point_operations`, Megatron-Bridge `flop_utils`):
//!   causal, no router, MTP counted when enabled; the GLU factor only for SiLU-gated MLPs (GPT-OSS's
//!   gated MLP counted as 2 matrices).
//! * **MaxText** (`calculate_tflops_training_per_device`): router counted, causal (current) or full
//!   (older versions) attention, no MTP.

use crate::extended::workload::Workload;
use crate::moe_shape::MoeShape;

/// A source's counting rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FlopRules {
    /// Attention core over half the keys (causal mask).
    pub causal: bool,
    /// The router GEMM is counted.
    pub router: bool,
    /// Multi-token-prediction blocks are counted.
    pub mtp: bool,
    /// Gated MLPs count three matrices (else two).
    pub gated: bool,
}

impl FlopRules {
    /// Reads the rules from a convention's words (`Megatron…`, `MaxText…`, "non-causal", "GLU
    /// factor 1.0", "2 GEMMs"), by meaning rather than exact strings. `None` when no framework
    /// is named.
    pub fn from_words(convention: &str, formula: &str, model_words: &str) -> Option<FlopRules> {
        let t = format!("{} {}", convention, formula).to_ascii_lowercase();
        let maxtext = t.contains("maxtext");
        let megatron = t.contains("megatron");
        if !maxtext && !megatron {
            return None;
        }
        let noncausal = t.contains("noncausal") || t.contains("non-causal") || t.contains("full attention");
        // GPT-OSS in Megatron-Bridge: its clamped GLU counted as two GEMMs.
        let m = model_words.to_ascii_lowercase();
        let two_gemm_glu = megatron && (t.contains("glu factor 1.0") || (m.contains("clamped") && m.contains("glu")));
        Some(FlopRules { causal: !noncausal, router: maxtext, mtp: megatron, gated: !two_gemm_glu })
    }
}

/// Forward FLOPs of one token through one block's attention (projections and core).
fn attention(w: &Workload, rules: &FlopRules) -> f64 {
    let s = w.seq_len as f64;
    let a = w.heads as f64;
    let keys = if rules.causal { s / 2.0 } else { s };
    let (proj, dqk, dv) = match &w.mla {
        Some(m) => (
            m.projections(w.hidden, w.heads).iter().map(|&(r, c)| r as f64 * c as f64).sum::<f64>(),
            m.qk_head_dim() as f64,
            m.v_head_dim as f64,
        ),
        None => {
            let h = w.hidden as f64;
            let (q, kv) = (w.q_width() as f64, w.kv_width(true) as f64);
            (h * (q + 2.0 * kv) + q * h, w.head_dim as f64, w.head_dim as f64)
        }
    };
    2.0 * proj + 2.0 * keys * a * (dqk + dv)
}

/// Forward FLOPs of one token through one block (`moe`: the block's MoE shape, `None` for a dense
/// block: [`Workload::moe_block`]).
fn block(w: &Workload, rules: &FlopRules, moe: Option<&MoeShape>) -> f64 {
    let h = w.hidden as f64;
    let mlp = match moe {
        Some(m) => {
            let mats = if m.gated && rules.gated { 3.0 } else { 2.0 };
            let experts = 2.0 * mats * h * (m.top_k * m.expert_ffn + m.shared_experts * m.shared_ffn) as f64;
            experts + if rules.router { 2.0 * h * m.experts as f64 } else { 0.0 }
        }
        None => {
            let mats = if w.gated_mlp && rules.gated { 3.0 } else { 2.0 };
            2.0 * mats * h * w.ffn_hidden as f64
        }
    };
    attention(w, rules) + mlp
}

/// Model FLOPs per token of one training step (forward and backward) under `rules` [FLOP].
pub fn model_flops_per_token(w: &Workload, rules: &FlopRules) -> f64 {
    let h = w.hidden as f64;
    let logits = 2.0 * h * w.vocab.unwrap_or(0) as f64;
    let blocks: f64 = (0..w.layers).map(|i| block(w, rules, w.moe_block(i))).sum();
    let mtp = if rules.mtp && w.mtp_layers > 0 {
        let last = w.moe_block(w.layers.saturating_sub(1));
        w.mtp_layers as f64 * (block(w, rules, last) + 2.0 * 2.0 * h * h + logits)
    } else {
        0.0
    };
    3.0 * (blocks + logits + mtp)
}
