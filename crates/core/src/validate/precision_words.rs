//! Precision and optimizer words read by meaning (see [`super::words`]): the training precision of
//! the linear layers and what the words say about the model states (16-bit or FP32 parameters,
//! gradients and optimizer states, the optimizer step inside the backward pass, the gradient
//! reduction's type); every reading that is not plain comes with a note for the row.
//!
//! Precision: `fp8`/`float8`/`e4m3`/`mxfp8` → FP8; `bf16`/`bfloat16` → BF16; `fp16`/`float16`/
//! `half` → FP16; "16-bit", `amp`, "mixed precision" → the part's 16-bit format (BF16 where it has
//! it); `tf32` → TF32; `fp32`/`float32`/"full precision" → FP32; nothing understood → BF16 (or
//! FP16 on parts without BF16), noted. FP4 formats are read as FP8 (the nearest the model prices),
//! noted.

use super::words::Words;
use crate::catalog::{CatalogSystem, Precision};
use crate::vocab::Note;

/// Reads the training precision of the linear layers; the note says how when it is not plain.
pub fn read_precision(text: Option<&str>, sys: &CatalogSystem) -> (Precision, Option<Note>) {
    let sixteen = if sys.peak_tflops.bf16.is_some() || sys.peak_tflops.fp16.is_none() {
        Precision::Bf16
    } else {
        Precision::Fp16
    };
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return (sixteen, Some(Note::assumption(format!("precision not stated: {sixteen} (16-bit mixed precision)"))));
    };
    let w = Words::new(t);
    let eight = ["fp8", "float8", "e4m3", "e5m2", "mxfp8", "8 bit float", "fp8 linears"];
    if w.any(&eight) || w.tokens.iter().any(|x| x.starts_with("fp8") || x.starts_with("float8")) {
        return (Precision::Fp8, None);
    }
    if w.any(&["fp4", "nvfp4", "mxfp4", "float4"]) {
        return (
            Precision::Fp8,
            Some(Note::reading(format!("`{t}`: FP4 read as FP8, the narrowest format the model prices"))),
        );
    }
    let bf = w.tokens.iter().any(|x| x.starts_with("bf16") || x.starts_with("bfloat16")) || w.has("brain float");
    let fp16 = w.tokens.iter().any(|x| x == "fp16" || x.starts_with("float16") || x == "half" || x == "f16");
    match (bf, fp16) {
        (true, false) => return (Precision::Bf16, None),
        (false, true) => return (Precision::Fp16, None),
        (true, true) => {
            return (sixteen, Some(Note::reading(format!("`{t}` names both 16-bit formats: {sixteen} (the part's)"))));
        }
        _ => {}
    }
    if w.any(&["16 bit", "16bit", "amp", "mixed precision", "mixed", "autocast"]) {
        return (sixteen, Some(Note::reading(format!("`{t}`: 16-bit mixed precision, {sixteen} on this part"))));
    }
    if w.any(&["tf32", "tensorfloat", "tensorfloat 32"]) {
        return (Precision::Tf32, None);
    }
    if w.any(&["fp32", "float32", "full precision", "single precision", "32 bit", "f32"]) {
        return (Precision::Fp32, None);
    }
    (
        sixteen,
        Some(Note::assumption(format!("precision `{t}` not understood: {sixteen} (the most common training format)"))),
    )
}

/// What the precision and optimizer words say about the model states, for the memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct StateFacts {
    /// 16-bit weights, gradients and optimizer states without an FP32 master copy.
    pub pure_16bit: bool,
    /// The optimizer step runs inside the backward pass, freeing each gradient after its update.
    pub optimizer_in_backward: bool,
    /// Gradients accumulated in FP32 (unsharded) beside 16-bit weights.
    pub fp32_grad_accumulation: bool,
    /// Optimizer states in 8 bits.
    pub eight_bit_optimizer: bool,
    /// 16-bit autocast over FP32 parameters, no mixed-precision policy
    /// ([`crate::extended::ExtendedOptions::fp32_params_autocast`]).
    pub fp32_params_autocast: bool,
}

/// Reads the state facts from the precision and optimizer words.
pub fn read_state_facts(precision: Option<&str>, optimizer: Option<&str>) -> StateFacts {
    let p = Words::new(precision.unwrap_or(""));
    let o = Words::new(optimizer.unwrap_or(""));
    let both = Words::join(&[precision, optimizer]);
    let master = both.affirms("master") && !both.any(&["no master", "no fp32 master", "without master"]);
    let pure = p.any(&["pure", "bf16 true", "true bf16", "dtype bf16", "no fp32 master", "no master"])
        || both.any(&["no fp32 master", "no master weights", "without master weights", "no master copy"])
        || o.any(&["on bf16 params", "bf16 states", "bf16 optimizer states"]);
    StateFacts {
        pure_16bit: pure && !(master && !both.any(&["no fp32 master", "no master"])),
        optimizer_in_backward: o.any(&[
            "fused into backward",
            "in backward",
            "optimizer in backward",
            "optimizer in bwd",
        ]) || o.has("in bwd"),
        fp32_grad_accumulation: both.any(&["fp32 grad accumulation", "accumulates grads in fp32", "fp32 grad accum"]),
        eight_bit_optimizer: o.any(&["8 bit", "8bit", "adam8bit", "adamw8bit", "bnb"]),
        fp32_params_autocast: reads_fp32_params_autocast(&p),
    }
}

/// Whether the precision words say 16-bit autocast over FP32 parameters (`"bf16 autocast over
/// fp32 parameters"`, `"amp over fp32 weights"`): autocast (or AMP) and FP32 parameters or
/// weights named together, no mixed-precision policy (`param_dtype`, FSDP's `MixedPrecision`)
/// casting the weights to 16 bits first.
fn reads_fp32_params_autocast(p: &Words) -> bool {
    let autocast = p.any(&["autocast", "amp", "amp native"]);
    let fp32_params =
        p.any(&["fp32 parameters", "fp32 params", "fp32 weights", "float32 parameters", "float32 weights"]);
    let policy = p.any(&["param dtype", "mixed precision policy", "mixedprecision", "mixedprecisionpolicy"]);
    autocast && fp32_params && !policy
}

/// Whether the words turn Megatron's FP32 gradient reduction off: its gradient buffer (and the
/// data-parallel reduction) is FP32 only with `grad_reduce_in_fp32` (Megatron-Core's
/// `DistributedDataParallelConfig`) / `--accumulate-allreduce-grads-in-fp32`; a run that says it
/// is `False`/`0`/`off` allocates the buffer in the parameter type (16-bit gradients).
pub fn says_16bit_grad_reduce(text: &str) -> bool {
    let said = Words::new(text);
    ["grad reduce in fp32", "accumulate allreduce grads in fp32"]
        .iter()
        .any(|f| ["false", "0", "off"].iter().any(|no| said.has(&format!("{f} {no}"))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn precision_words() {
        let h100 = catalog::find_system("nvidia_h100_sxm5_80gb").unwrap();
        let v100 = catalog::find_system("nvidia_v100_sxm2").unwrap();
        assert_eq!(read_precision(Some("fp8 linears (Float8) + bf16"), h100).0, Precision::Fp8);
        assert_eq!(read_precision(Some("fp16/bf16 mixed"), h100).0, Precision::Bf16);
        assert_eq!(read_precision(Some("fp16/bf16 mixed"), v100).0, Precision::Fp16);
        assert_eq!(read_precision(Some("amp_bf16"), h100).0, Precision::Bf16);
        assert_eq!(read_precision(Some("AMP"), v100).0, Precision::Fp16);
        assert_eq!(read_precision(Some("bfloat16"), h100), (Precision::Bf16, None));
        assert_eq!(read_precision(Some("int4"), h100).0, Precision::Bf16);
        assert!(read_precision(Some("int4"), h100).1.unwrap().contains("not understood"));
    }

    #[test]
    fn state_words() {
        let f = read_state_facts(
            Some("bf16 (torchtune dtype=bf16: bf16 weights, grads and optimizer states)"),
            Some("AdamW"),
        );
        assert!(f.pure_16bit);
        let f = read_state_facts(Some("bf16 mixed"), Some("AdamW fused into backward (optimizer_in_bwd=True)"));
        assert!(f.optimizer_in_backward && !f.pure_16bit);
        assert!(!read_state_facts(Some("FP8 with bf16 mixed; fp32 main params"), Some("Adam")).pure_16bit);
    }

    #[test]
    fn autocast_over_fp32_parameters() {
        let amp = |p: &str| read_state_facts(Some(p), None).fp32_params_autocast;
        assert!(amp("bf16 autocast (amp_native) over fp32 parameters"));
        assert!(amp("AMP over FP32 weights"));
        // A mixed-precision policy casts the weights to 16 bits first; plain words say nothing.
        assert!(!amp("bf16 autocast, FSDP MixedPrecision param_dtype bf16 over fp32 parameters"));
        assert!(!amp("bf16 mixed precision (fp32 sharded master weights)"));
        assert!(!amp("fp32 parameters"));
    }
}
